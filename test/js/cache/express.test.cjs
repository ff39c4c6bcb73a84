'use strict';
/*
 * examples/express as a user runs it: the app in a child process against a
 * real redis-server, over HTTP. A cold request loads from the slow data
 * source, a warm one does not; after the app process restarts, its first
 * request is served from Redis with the restored classes' methods working.
 * In both formats.
 */
const { test, before, after } = require('node:test');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { assert } = require('../helpers.cjs');
const { startRedis, text } = require('../redis-servers.cjs');

const SERVER = path.join(__dirname, '..', '..', '..', 'examples', 'express', 'server.cjs');
let redis;

before(async () => {
  redis = await startRedis();
});
after(async () => {
  if (redis) await redis.stop();
});

/* Starts the app; resolves to { url, stop() } once it prints its address. */
function startApp(format) {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, REDIS_URL: redis.url, PORT: '0', DARMOK_FORMAT: format, DATA_DELAY_MS: '150' },
    stdio: ['ignore', 'pipe', 'pipe']
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`the app did not start: ${err}`)); }, 10000);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the app exited (${code}): ${err}`)); });
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          stderr: () => err,
          async stop() {
            child.kill('SIGKILL');
            await exited;
          }
        });
      }
    });
  });
}

async function getPost(app, id) {
  const res = await fetch(`${app.url}/posts/${id}`);
  return { status: res.status, loads: Number(res.headers.get('x-data-source-loads')), body: await res.json() };
}

const EXPECTED = {
  id: 1,
  title: 'Notes on the Analytical Engine',
  summary: 'The engine weaves algebraic patterns just as the…',
  byline: 'by Ada Lovelace, writing since 2015',
  tags: ['history', 'computing'],
  comments: 3,
  commenters: ['Grace Hopper', 'Ada Lovelace'],
  lastCommentAt: '2024-01-04T08:15:00.000Z',
  reactions: { '👍': 12, '🚀': 3 },
  isPost: true
};

for (const format of ['json', 'protobuf']) {
  test(`express (${format}): cold, warm, and the first request after a restart served from Redis`, async () => {
    await text(redis.port, 'FLUSHALL');
    let app = await startApp(format);
    try {
      const cold = await getPost(app, 1);
      assert.strictEqual(cold.status, 200);
      assert.strictEqual(cold.loads, 1, 'cold: loaded from the data source');
      assert.deepStrictEqual(cold.body, EXPECTED);
      const warm = await getPost(app, 1);
      assert.strictEqual(warm.loads, 0, 'warm: from the cache');
      assert.deepStrictEqual(warm.body, EXPECTED);
      const missing = await getPost(app, 99);
      assert.strictEqual(missing.status, 404);
      assert.strictEqual(missing.loads, 1);
      assert.strictEqual((await getPost(app, 99)).loads, 0, 'the null is cached too');
      await app.stop();

      app = await startApp(format);
      const first = await getPost(app, 1);
      assert.strictEqual(first.status, 200);
      assert.strictEqual(first.loads, 0, 'after the restart: from Redis, not the data source');
      assert.deepStrictEqual(first.body, EXPECTED, 'methods of the restored classes work');
      const stats = await (await fetch(`${app.url}/stats`)).json();
      assert.strictEqual(stats.hits, 1);
      assert.strictEqual(stats.loads, 0);
      const entry = await text(redis.port, 'GET', 'blog:v1:post:1');
      assert.ok(entry.startsWith(`darmok/1 ${format} `), 'the key is prefix + key');
      assert.strictEqual(app.stderr(), '', 'nothing reported');
    } finally {
      await app.stop();
    }
  });
}

/*
 * The README's "With Redis and Express" example, cut out of README.md
 * (and the same text in docs/CACHE.md) and run as written: a CommonJS
 * file, its requires pointed at this checkout and the dev dependencies,
 * beside a db.cjs whose loadPostRow gives plain rows. It serves Posts,
 * then redis-server is killed (the app must live and answer from its L1
 * or the loader) and restarted on the same port (the app writes to it
 * again).
 */
test('the README\'s Express example runs as written and survives redis-server killed and restarted', async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const { startRedis: start, freePort } = require('../redis-servers.cjs');
  const cut = (file) => {
    const text = fs.readFileSync(path.join(__dirname, '..', '..', '..', file), 'utf8');
    return text.split('## With Redis and Express\n\n```js\n')[1].split('```')[0];
  };
  const code = cut('README.md');
  assert.strictEqual(cut('docs/CACHE.md'), code, 'README and docs/CACHE.md show the same example');
  assert.match(code, /^\/\/ server\.cjs — CommonJS/);
  assert.match(code, /client\.on\('error'/);
  const root = path.join(__dirname, '..', '..', '..');
  const local = code
    .replace("require('darmok/redis')", `require(${JSON.stringify(path.join(root, 'js', 'redis.cjs'))})`)
    .replace("require('darmok')", `require(${JSON.stringify(path.join(root, 'js', 'index.cjs'))})`)
    .replace("require('express')", `require(${JSON.stringify(require.resolve('express'))})`)
    .replace("require('redis')", `require(${JSON.stringify(require.resolve('redis'))})`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-express-'));
  fs.writeFileSync(path.join(dir, 'server.cjs'), local);
  fs.writeFileSync(path.join(dir, 'db.cjs'), `
    const rows = { 1: { id: 1, title: 'Notes on the Analytical Engine', body: 'The engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves.' } };
    exports.loadPostRow = async (id) => { await new Promise((r) => setTimeout(r, 20)); return rows[id] ? { ...rows[id], id: Number(id) } : (id > 100 ? null : { id: Number(id), title: 'Post ' + id, body: 'Body of post ' + id }); };
  `);
  const port = await freePort();
  let server = redis;
  const child = spawn(process.execPath, ['server.cjs'], { cwd: dir, env: { ...process.env, REDIS_URL: server.url, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let exited = null;
  child.once('exit', (code2, signal) => { exited = `${code2} ${signal}`; });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const get = async (id) => {
    const res = await fetch(`http://127.0.0.1:${port}/posts/${id}`);
    return { status: res.status, body: res.status === 200 ? await res.json() : null };
  };
  const eventually = async (what, check, ms = 15000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      try {
        if (await check()) return;
      } catch {
        // not yet
      }
      if (Date.now() > deadline) throw new Error(`never: ${what}; app stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    await text(server.port, 'FLUSHALL');
    await eventually('the app answers', async () => (await get(1)).status === 200);
    const one = await get(1);
    assert.deepStrictEqual(one.body, { title: 'Notes on the Analytical Engine', summary: 'The engine weaves algebraic patterns just as the Jacquard loom weaves flowers an' });
    assert.strictEqual((await get(101)).status, 404);
    await eventually('the entry is in Redis', async () => (await text(server.port, 'EXISTS', 'blog:v1:post:1')) === 1);
    assert.match(await text(server.port, 'GET', 'blog:v1:post:1'), /^darmok\/1 json [0-9]+\n\{"\$":"blog\.Post"/, 'a Post was stored, not the row');

    await server.stop();
    await new Promise((r) => setTimeout(r, 300));
    for (const id of [1, 2, 3]) {
      const r = await get(id);
      assert.strictEqual(r.status, 200, `with Redis killed, post ${id}`);
      assert.strictEqual(r.body.summary, id === 1 ? one.body.summary : `Body of post ${id}`);
    }
    assert.strictEqual(exited, null, 'the app lives on');

    server = await start({ port: redis.port });
    redis = server;
    await eventually('the app writes to the restarted Redis', async () => {
      await get(4);
      return (await text(server.port, 'EXISTS', 'blog:v1:post:4')) === 1;
    });
    assert.strictEqual((await get(1)).body.summary, one.body.summary);
    assert.strictEqual(exited, null, 'the app lives on');
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

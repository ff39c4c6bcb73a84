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
const { assert } = require('./helpers.cjs');
const { startRedis, text } = require('./redis-servers.cjs');

const SERVER = path.join(__dirname, '..', '..', 'examples', 'express', 'server.cjs');
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

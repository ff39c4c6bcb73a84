'use strict';
/*
 * The README's "Use" snippet runs as written: its two files (model.js,
 * app.js) are cut out of README.md, `require('darmok')` pointed at this
 * checkout, and app.js's function called with a node-redis client of a
 * real redis-server.
 */
const { test } = require('node:test');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { assert, haveWasm } = require('../helpers.cjs');
const { startRedis } = require('../redis-servers.cjs');

test('README: the "Use" snippet runs as written', { skip: haveWasm ? false : 'build/darmok.wasm is not built' }, async () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
  const block = readme.split('```js\n// model.js')[1].split('```')[0];
  const [model, app] = block.split('// app.js');
  const darmok = JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'index.cjs'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-readme-'));
  const server = await startRedis();
  try {
    fs.writeFileSync(path.join(dir, 'model.js'), '// model.js' + model.replaceAll("require('darmok')", `require(${darmok})`));
    fs.writeFileSync(path.join(dir, 'app.js'), '// app.js' + app.replaceAll("require('darmok')", `require(${darmok})`) + `
      (async () => {
        const redis = await require(${JSON.stringify(require.resolve('redis'))}).createClient({ url: ${JSON.stringify(server.url)} }).connect();
        const described = await cacheRoundTrip(redis, 'readme:k');
        console.log(JSON.stringify([described, await redis.get('readme:k')]));
        await redis.quit();
      })();
    `);
    const [described, stored] = JSON.parse(execFileSync(process.execPath, ['app.js'], { cwd: dir, encoding: 'utf8' }));
    assert.strictEqual(described, 'Hello by Ada');
    assert.match(stored, /^\{"\$":"app\.Post","title":"Hello","author":\{"\$":"app\.Author","name":"Ada"\}/);
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('README: short, for users, and its links resolve', () => {
  const readme = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
  const words = readme.split(/\s+/).filter(Boolean).length;
  assert.ok(words <= 1500, `README has ${words} words`);
  assert.match(readme, /npm install darmok/);
  assert.ok(readme.indexOf('npm install darmok') < readme.indexOf('make test'), 'installing comes before building from source');
  assert.doesNotMatch(readme, /\b(not met|cannot be met|at target|targets? (is|are)?\s*met)\b/i);
  for (const [, link] of readme.matchAll(/\]\(([^)#]+)\)/g)) {
    assert.ok(fs.existsSync(path.join(__dirname, '../../..', link)), `README links to ${link}, which is missing`);
  }
});

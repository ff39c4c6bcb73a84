'use strict';
/*
 * Misuse has codes of its own, ERR_INTERNAL is left to darmok's own bugs:
 * darmok called from migrate/fromData (ERR_REENTRANT), init() of something
 * else (ERR_INVALID_OPTION), a call before the core is loaded (ERR_NOT_READY);
 * and the .d.ts lists every code errors.cjs has.
 */
const { test } = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const { assert, throwsCode, FORMATS, isolatedCodec } = require('../helpers.cjs');
const { init, DarmokError } = require('../../../js/index.cjs');

const ROOT = path.join(__dirname, '..', '..', '..');

for (const format of FORMATS) {
  test(`${format}: darmok called from migrate or fromData is ERR_REENTRANT`, () => {
    const c1 = isolatedCodec(format);
    class A {}
    c1.serializable(A, { key: 'reenter.A' });
    const old = c1.encodeEntity(Object.assign(new A(), { x: 1 }));
    const c2 = isolatedCodec(format);
    class A2 {}
    c2.serializable(A2, { key: 'reenter.A', version: 2, migrate: { 1: (d) => { c2.encodeEntity(d); return d; } } });
    throwsCode(() => c2.decodeEntity(old), 'ERR_REENTRANT', (e) => assert.match(e.message, /migrate or fromData/));
    const c3 = isolatedCodec(format);
    class A3 {}
    c3.serializable(A3, { key: 'reenter.A', fromData: (d) => c3.decodeEntity(c3.encodeEntity(d)) });
    throwsCode(() => c3.decodeEntity(old), 'ERR_REENTRANT');
    // The core is fine afterwards.
    assert.strictEqual(c2.decodeEntity(c2.encodeEntity({ ok: 1 })).ok, 1);
  });

}

test('init() of something that is not darmok\'s core is ERR_INVALID_OPTION, even when ready', async () => {
  for (const bad of [42, 'darmok.wasm', null, {}]) {
    await assert.rejects(init(bad), (e) => e instanceof DarmokError && e.code === 'ERR_INVALID_OPTION', String(bad));
  }
  await init(); // still fine
});

test('without the core: ERR_NOT_READY; init() of other bytes ERR_INVALID_OPTION; then both formats work', () => {
  // A copy of js/ with no build/ beside it: the synchronous load fails.
  const os = require('node:os');
  const { execFileSync } = require('node:child_process');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-nocore-'));
  try {
    fs.cpSync(path.join(ROOT, 'js'), path.join(dir, 'js'), { recursive: true });
    const wasmFile = path.join(ROOT, 'build', 'darmok.wasm');
    const script = `
      const d = require(${JSON.stringify(path.join(dir, 'js', 'index.cjs'))});
      const pb = require(${JSON.stringify(path.join(dir, 'js', 'protobuf.cjs'))});
      const code = (p) => p.then(() => 'resolved', (e) => e instanceof d.DarmokError ? e.code : String(e));
      (async () => {
        const out = [];
        try { pb.encodeEntity(1); out.push('no throw'); } catch (e) { out.push(e.code); }
        out.push(await code(d.init()));
        out.push(await code(d.init(Buffer.from('not wasm'))));
        out.push(await code(d.init(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0])))); // an empty module
        out.push(await code(d.init(new URL('file:///nonexistent/darmok.wasm'))));
        const http = require('http');
        const server = http.createServer((req, res) => { res.statusCode = 404; res.end(); });
        await new Promise((r) => server.listen(0, '127.0.0.1', r));
        out.push(await code(d.init(new URL('http://127.0.0.1:' + server.address().port + '/darmok.wasm'))));
        server.close();
        out.push(await code(d.init(require('fs').readFileSync(${JSON.stringify(wasmFile)}))));
        out.push(d.decodeEntity(d.encodeEntity({ a: [1n] })).a[0] === 1n, pb.decodeEntity(pb.encodeEntity({ a: [1n] })).a[0] === 1n);
        console.log(JSON.stringify(out));
      })();
    `;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    assert.deepStrictEqual(out, ['ERR_NOT_READY', 'ERR_NOT_READY', 'ERR_INVALID_OPTION', 'ERR_INVALID_OPTION',
      'ERR_NOT_READY', 'ERR_NOT_READY', 'resolved', true, true]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the .d.ts lists every error code errors.cjs has', () => {
  const { CODES } = require('../../../js/internal.cjs').errors;
  const text = fs.readFileSync(path.join(ROOT, 'js', 'index.d.ts'), 'utf8');
  const union = text.match(/export type DarmokErrorCode =([^;]*);/)[1];
  assert.deepStrictEqual([...union.matchAll(/'(ERR_[A-Z_]+)'/g)].map((m) => m[1]).sort(), [...CODES].sort());
  for (const code of ['ERR_UNEXPECTED_CLASS', 'ERR_REENTRANT', 'ERR_NOT_READY']) assert.ok(CODES.includes(code), code);
});

'use strict';
/*
 * 10,000+ mixed good and failing calls: WebAssembly memory stays the same
 * size after warm-up (nothing leaks per call, failing calls included).
 */
const { test } = require('node:test');
const { assert, haveWasm } = require('./helpers.cjs');
const { serializable, encodeEntity, decodeEntity, DarmokError } = require('../../js/index.cjs');
const core = require('../../js/core.cjs');

test('memory is stable across good and failing calls', { skip: haveWasm ? false : 'build/darmok.wasm is not built' }, () => {
  class M { constructor(i) { this.i = i; this.tags = new Set(['a', 'b']); this.at = new Date(i); } }
  serializable(M, [], 'memory.M');
  const good = { list: Array.from({ length: 50 }, (_, i) => new M(i)), s: 'é😀'.repeat(50), b: new Uint8Array(300) };
  const text = encodeEntity(good);
  const bad = ['', '[1,', '{"$Date":"x"}', '{"$":"memory.Nope"}', '['.repeat(5000), text.slice(0, -1), '{"a":' + text + ',}'];
  const round = (n) => {
    let failures = 0;
    for (let i = 0; i < n; i++) {
      switch (i % 4) {
        case 0: encodeEntity(good); break;
        case 1: decodeEntity(text); break;
        case 2: try { decodeEntity(bad[i % bad.length]); } catch (e) { assert.ok(e instanceof DarmokError); failures++; } break;
        default: try { encodeEntity({ a: [() => 1] }, { strict: true }); } catch (e) { assert.ok(e instanceof DarmokError); failures++; }
      }
    }
    return failures;
  };
  round(2000);
  const size = core.wasmMemory().buffer.byteLength;
  const failures = round(12000);
  assert.ok(failures >= 6000);
  assert.strictEqual(core.wasmMemory().buffer.byteLength, size);
});

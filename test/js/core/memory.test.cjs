'use strict';
/*
 * 10,000+ mixed good and failing calls: WebAssembly memory stays the same
 * size after warm-up (nothing leaks per call, failing calls included).
 */
const { test } = require('node:test');
const { assert, haveWasm } = require('../helpers.cjs');
const { serializable, encodeEntity, decodeEntity, DarmokError } = require('../../../js/index.cjs');
const internal = require('../../../js/internal.cjs');

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
  const size = internal.wasmMemory().buffer.byteLength;
  const failures = round(12000);
  assert.ok(failures >= 6000);
  assert.strictEqual(internal.wasmMemory().buffer.byteLength, size);
});

/*
 * Long string values reach the core as UTF-16 (T_STR16) and are made WTF-8
 * in a scratch that one call reuses: 600 copies of a 20,000-unit string (a
 * 24 MB tape, 12 MB of JSON) grow a fresh WebAssembly memory by under 3.5x
 * the tape (64 MB measured), not by a scratch for each (122 MB). In a
 * child: a fresh instance.
 */
test('long strings: one scratch per call, not one per string', { skip: haveWasm ? false : 'build/darmok.wasm is not built' }, () => {
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const script = `
    const darmok = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'index.cjs'))});
    const internal = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'internal.cjs'))});
    const value = Array.from({ length: 600 }, () => 'a'.repeat(20000));
    const before = internal.wasmMemory().buffer.byteLength;
    const text = darmok.encodeEntity(value);
    const grown = internal.wasmMemory().buffer.byteLength - before;
    console.log(JSON.stringify({ grown, tape: 5 + 600 * 40005, ok: text.length === 600 * 20003 + 1 }));
  `;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.strictEqual(run.stderr, '');
  const { grown, tape, ok } = JSON.parse(run.stdout);
  assert.ok(ok);
  // the input area (the tape), the output, growth in large steps: ~2.7x;
  // a scratch per string adds 1.5x
  assert.ok(grown < 3.5 * tape, `WebAssembly memory grew by ${grown} bytes for a ${tape}-byte tape`);
});

/*
 * Walking a Map allocates nothing per entry on the V8 heap: a warm protobuf
 * encode (its output is outside the heap) of two 10,000-entry Maps
 * allocated ~1.3 MB when each entry was destructured from an entry array.
 * In a child: a fresh heap, and gc() exposed. The least of up to 8 encodes:
 * on a busy machine V8's optimized code (which drops the keys iterator's
 * results) may not be in place yet after the warm-up (then ~0.9 MB, in
 * about 1 child of 10 with a fuzzer on the other core); the entry arrays
 * cost every call.
 */
test('a Map is walked without garbage per entry', () => {
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const script = `
    const v8 = require('node:v8');
    const { encodeEntity } = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'protobuf.cjs'))});
    // string keys (written in place) and number keys (through value())
    const m = [new Map(), new Map()];
    for (let i = 0; i < 10000; i++) {
      m[0].set('k' + i, i % 3 ? i : 'v' + i);
      m[1].set(i, i / 3);
    }
    for (let i = 0; i < 30; i++) encodeEntity(m);
    let allocated = Infinity, bytes = 0;
    for (let r = 0; r < 8 && allocated >= 100000; r++) {
      globalThis.gc();
      const prof = new v8.GCProfiler();
      const before = v8.getHeapStatistics().used_heap_size;
      prof.start();
      const out = encodeEntity(m);
      const stats = prof.stop().statistics;
      let got = v8.getHeapStatistics().used_heap_size - before;
      for (const s of stats) got += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
      allocated = Math.min(allocated, got);
      bytes = out.length;
    }
    console.log(JSON.stringify({ allocated, bytes }));
  `;
  const run = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  assert.strictEqual(run.stderr, '');
  const { allocated, bytes } = JSON.parse(run.stdout);
  assert.ok(bytes > 200000);
  assert.ok(allocated < 200000, `${allocated} bytes of V8 heap allocated to walk 20,000 Map entries`);
});

/*
 * The peak WebAssembly memory of a decode, and none kept growing after it
 * (docs/SECURITY.md, "Bounded memory"). In a child: a fresh instance. 1 MiB
 * of the smallest values: JSON grows memory by 5-11x (the input as UTF-16
 * and UTF-8, the tape), protobuf by 29-40x (protobuf-c keeps ~40 bytes of
 * bookkeeping for each 2-byte field). A 1 MiB protobuf document of empty
 * fields made 64 MiB of arena chunks by doubling, and the call after it,
 * however small, grew memory by 64 MiB more, as the arena was then kept
 * as one chunk of its total.
 */
test('hostile documents of tiny fields: bounded peak, and memory stays put after them', { skip: haveWasm ? false : 'build/darmok.wasm is not built' }, () => {
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const script = `
    const darmok = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'index.cjs'))});
    const internal = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'internal.cjs'))});
    const mem = () => internal.wasmMemory().buffer.byteLength;
    const head = Buffer.from([0x08, 1, 0x22, 1, 1]); // format 1, one KIND_NULL
    // the peak allowed, times the input: measured 11 (JSON), 40, 34, 29
    const cases = [
      ['json', '[' + Array(524288).fill('0').join(',') + ']', '[1]', 12],
      ['protobuf', Buffer.concat([head, Buffer.from('1a00'.repeat(524288), 'hex')]), head, 44], // empty shapes
      // unknown fields: protobuf-c's array of them (8 MiB) is one allocation,
      // after which the arena's chunks went on at its size (42x)
      ['protobuf', Buffer.concat([head, Buffer.from('7800'.repeat(524288), 'hex')]), head, 38],
      ['protobuf', Buffer.concat([head, Buffer.from('1200'.repeat(524288), 'hex')]), head, 34]  // empty strings
    ];
    const out = [];
    // one case a child: each starts from a fresh memory
    for (const [format, big, tiny, most] of [cases[+process.argv[1]]]) {
      const m0 = mem();
      darmok.decodeEntity(big, { format });
      const m1 = mem();
      darmok.decodeEntity(tiny, { format });
      darmok.decodeEntity(big, { format });
      darmok.decodeEntity(tiny, { format });
      out.push({ format, most, factor: (m1 - m0) / big.length, after: mem() - m1 });
    }
    console.log(JSON.stringify(out));
  `;
  for (let i = 0; i < 4; i++) {
    const run = spawnSync(process.execPath, ['-e', script, String(i)], { encoding: 'utf8' });
    assert.strictEqual(run.stderr, '');
    for (const { format, most, factor, after } of JSON.parse(run.stdout)) {
      assert.ok(factor < most, `case ${i}, ${format}: memory grew by ${factor.toFixed(1)}x the input`);
      assert.strictEqual(after, 0, `case ${i}, ${format}: memory grew by ${after} bytes after the first call`);
    }
  }
});

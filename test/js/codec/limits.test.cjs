'use strict';
/*
 * Limits (issue 6): every decode limit has a safe default, is enforced by
 * the core before the work it bounds is done, and fails with its own code;
 * after any failure the core is reset (the next call works, WebAssembly
 * memory does not grow).
 */
const { test } = require('node:test');
const { assert, haveWasm, throwsCode } = require('../helpers.cjs');
const darmok = require('../../../js/index.cjs');
const internal = require('../../../js/internal.cjs');

const { encodeEntity, decodeEntity, serializable, DarmokError, MAX_DEPTH, MAX_BYTES, MAX_LENGTH } = darmok;
const skip = haveWasm ? false : 'build/darmok.wasm is not built';

function elapsed(fn) {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

test('defaults: maxDepth 1000, maxBytes 64 MiB, maxLength 16 Mi', () => {
  assert.strictEqual(MAX_DEPTH, 1000);
  assert.strictEqual(MAX_BYTES, 64 * 1024 * 1024);
  assert.strictEqual(MAX_LENGTH, 16 * 1024 * 1024);
});

test('maxDepth: a 1,000,000-deep [[[[ input throws ERR_DEPTH quickly at byte 1000', { skip }, () => {
  const text = '['.repeat(1e6);
  let ms = elapsed(() => throwsCode(() => decodeEntity(text), 'ERR_DEPTH', (e) => {
    assert.strictEqual(e.offset, 1000); // the 1001st '[' is one too many
    assert.ok(e.message.length < 300, 'a short message');
    assert.ok(e.path.startsWith('$[0][0]'));
  }));
  assert.ok(ms < 1000, `took ${ms} ms`);
  ms = elapsed(() => throwsCode(() => decodeEntity(Buffer.from('{"a":'.repeat(1e6))), 'ERR_DEPTH'));
  assert.ok(ms < 1000, `took ${ms} ms`);
  // The process is healthy: the same core decodes at once.
  assert.deepStrictEqual(decodeEntity('[[1]]'), [[1]]);
});

test('maxDepth: every kind of container counts once, tag wrappers included', { skip }, () => {
  const kinds = {
    array: ['[', ']'], object: ['{"a":', '}'], map: ['{"$Map":[["k",', ']]}'], set: ['{"$Set":[', ']}'],
    nullproto: ['{"$NullProto":{"a":', '}}'], instance: ['{"$":"limits.Box","v":', '}'],
    error: ['{"$Error":{"name":"Error","message":"m","cause":', '}}']
  };
  class Box {}
  serializable(Box, [], 'limits.Box');
  for (const [name, [open, close]] of Object.entries(kinds)) {
    const doc = (n) => open.repeat(n) + '0' + close.repeat(n);
    decodeEntity(doc(5), { maxDepth: 5 });
    throwsCode(() => decodeEntity(doc(6), { maxDepth: 5 }), 'ERR_DEPTH', (e) => {
      assert.strictEqual(e.offset, open.length * 5, name);
      assert.match(e.message, /maxDepth 5/);
    });
  }
  // The default holds at 1000 and stops at 1001.
  decodeEntity('['.repeat(1000) + ']'.repeat(1000));
  throwsCode(() => decodeEntity('['.repeat(1001) + ']'.repeat(1001)), 'ERR_DEPTH');
});

test('maxDepth on encode: a self-nested structure without refs throws ERR_DEPTH, never a stack overflow', () => {
  const deep = (n, wrap) => { let v = 0; for (let i = 0; i < n; i++) v = wrap(v); return v; };
  for (const wrap of [(v) => [v], (v) => ({ v }), (v) => new Set([v]), (v) => new Map([['k', v]])]) {
    throwsCode(() => encodeEntity(deep(1e6, wrap)), 'ERR_DEPTH');
    throwsCode(() => encodeEntity(deep(11, wrap), { maxDepth: 10 }), 'ERR_DEPTH');
    encodeEntity(deep(10, wrap), { maxDepth: 10 });
  }
  // A cycle is not depth: it is a reference.
  const a = [];
  a.push(a);
  assert.strictEqual(encodeEntity(a), '[{"$ref":0}]');
});

test('maxBytes: the input size is checked before it is copied into the core', { skip }, () => {
  let calls = 0;
  const real = internal.exportsForTest();
  const counting = { ...real, dk_ctx_input: (...args) => { calls++; return real.dk_ctx_input(...args); } };
  internal.useExportsForTest(counting, { keepContext: true });
  try {
    throwsCode(() => decodeEntity('[1,2,3]', { maxBytes: 6 }), 'ERR_TOO_LARGE');
    throwsCode(() => decodeEntity(Buffer.from('[1,2,3]'), { maxBytes: 6 }), 'ERR_TOO_LARGE');
    // 3 characters, 9 UTF-8 bytes: the byte length is what counts.
    throwsCode(() => decodeEntity('"\u20ac\u20ac\u20ac"', { maxBytes: 10 }), 'ERR_TOO_LARGE');
    assert.strictEqual(calls, 0, 'nothing reached the core');
    assert.deepStrictEqual(decodeEntity('[1,2,3]', { maxBytes: 7 }), [1, 2, 3]);
    assert.strictEqual(decodeEntity('"\u20ac\u20ac\u20ac"', { maxBytes: 11 }), '\u20ac\u20ac\u20ac');
  } finally {
    internal.useExportsForTest(real, { keepContext: true });
  }
});

test('maxLength: strings, arrays, holes, Maps, Sets, keys and binary values', { skip }, () => {
  const o = { maxLength: 4 };
  const ok = ['"abcd"', '[1,2,3,4]', '[{"$hole":4}]', '{"$Map":[[1,1],[2,2],[3,3],[4,4]]}', '{"$Set":[1,2,3,4]}',
    '{"abcd":1}', '{"$Uint8Array":"AAAAAA=="}', '{"$BigInt":"1234"}', '"\\u00e9\\u00e9"'];
  const bad = [['"abcde"', 0], ['[1,2,3,4,5]', 0], ['[{"$hole":5}]', 0], ['[1,{"$hole":4}]', 0],
    ['{"$Map":[[1,1],[2,2],[3,3],[4,4],[5,5]]}', 0], ['{"$Set":[1,2,3,4,5]}', 0], ['{"abcde":1}', 1],
    ['{"$Uint8Array":"AAAAAAA="}', 15], ['{"$BigInt":"12345"}', 11], ['"\\u00e9\\u00e9\\u00e9"', 0]];
  for (const text of ok) decodeEntity(text, o);
  for (const [text, offset] of bad) {
    throwsCode(() => decodeEntity(text, o), 'ERR_TOO_LARGE', (e) => {
      assert.strictEqual(e.offset, offset, text);
      assert.match(e.message, /maxLength 4/);
    });
  }
});

test('maxLength does not apply to a Date or a special number: both formats alike', { skip }, () => {
  // JSON writes these as strings ({"$Date":"<ISO>"}, {"$Number":"NaN"});
  // they are no string values, and protobuf has no string there.
  const value = [new Date(0), new Date(-8.64e15), new Date(NaN), NaN, -0, Infinity, -Infinity];
  for (const format of ['json', 'protobuf']) {
    const blob = encodeEntity(value, { format });
    const back = decodeEntity(blob, { format, maxLength: 8 }); // 7 items; a date's text is 24
    assert.deepStrictEqual(back.map((x) => (x instanceof Date ? x.getTime() : x)),
      [0, -8.64e15, NaN, NaN, -0, Infinity, -Infinity], format);
  }
  // The same text with whitespace takes the general path: the same result.
  assert.strictEqual(decodeEntity('{"$Date": "2020-01-01T00:00:00.000Z"}', { maxLength: 1 }).getTime(), 1577836800000);
  assert.ok(Number.isNaN(decodeEntity('{"$Number": "NaN"}', { maxLength: 1 })));
  // Strings are still counted, and a string too long for any date still fails.
  throwsCode(() => decodeEntity('["ab"]', { maxLength: 1 }), 'ERR_TOO_LARGE');
  throwsCode(() => decodeEntity(`{"$Date":"${'9'.repeat(40)}"}`, { maxLength: 1 }), 'ERR_TOO_LARGE');
  throwsCode(() => decodeEntity(`{"$Date":"${'9'.repeat(40)}"}`), 'ERR_FORMAT');
});

test('maxLength: a hostile length is refused before any allocation', { skip }, () => {
  // A 20-byte input announcing 4 billion holes: refused by count, no array made.
  const before = internal.wasmMemory().buffer.byteLength;
  throwsCode(() => decodeEntity('[{"$hole":4294967295}]'), 'ERR_TOO_LARGE');
  throwsCode(() => decodeEntity('[{"$hole":4294967295},1]', { maxLength: 0xffffffff }), 'ERR_TOO_LARGE');
  assert.strictEqual(internal.wasmMemory().buffer.byteLength, before);
  // Within maxLength a sparse array is cheap: its holes are never touched.
  assert.strictEqual(decodeEntity('[{"$hole":16777216}]').length, 16777216);
});

/*
 * V8 gives `arr.length = n` a store of n slots: a run of 16 Mi holes made
 * 128 MiB, and 40 such arrays in a 1 KB document ran Node out of heap, on
 * the plain path and on the tanagra one (which also wrote every hole). In a
 * child whose heap is capped at 128 MiB, where one such store is too much.
 */
test('runs of holes are never made: 40 arrays of 16 Mi holes in 1 KB, both formats, tanagra too', { skip }, () => {
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const script = `
    const assert = require('node:assert');
    const darmok = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'index.cjs'))});
    class K {}
    darmok.serializable(K, [], 'holes.K');
    let text = '{"k":0';
    // a run of holes at the end: nothing after it for V8 to turn the
    // array into a dictionary on (one in the middle made 128 MiB that
    // then became garbage)
    for (let i = 0; i < 40; i++) text += ',"a' + i + '":[1,{"$hole":16777000}]';
    text += '}';
    const keep = [];
    for (const format of ['json', 'protobuf']) {
      const blob = format === 'json' ? text : darmok.transcode(text, { from: 'json', to: 'protobuf' });
      const all = darmok.decodeEntity(blob, { format });
      assert.strictEqual(all.a39.length, 16777001);
      assert.deepStrictEqual(Object.keys(all.a39), ['0']);
      keep.push(all);
    }
    const tanagra = darmok.decodeEntity(text.replace('"k":0', '"_serializationKey":"holes.K"'));
    assert.ok(tanagra instanceof K);
    assert.deepStrictEqual(Object.keys(tanagra.a0), ['0']);
    keep.push(tanagra);
    console.log(keep.length);
  `;
  const run = spawnSync(process.execPath, ['--max-old-space-size=128', '-e', script], { encoding: 'utf8' });
  assert.strictEqual(run.stderr, '');
  assert.strictEqual(run.status, 0);
  assert.strictEqual(run.stdout.trim(), '3');
});

test('arrays with holes: lengths and elements around runs of every size', { skip }, () => {
  for (const format of ['json', 'protobuf']) {
    const blob = (t) => (format === 'json' ? t : darmok.transcode(t, { from: 'json', to: 'protobuf' }));
    const a = decodeEntity(blob('[1,{"$hole":16777000},2]'), { format });
    assert.strictEqual(a.length, 16777002);
    assert.deepStrictEqual(Object.keys(a), ['0', '16777001']);
    assert.deepStrictEqual([a[0], a[16777001]], [1, 2]);
    // Trailing holes keep the length; short runs between elements too.
    const trailing = decodeEntity(blob('[1,{"$hole":5000}]'), { format });
    assert.strictEqual(trailing.length, 5001);
    assert.deepStrictEqual(Object.keys(trailing), ['0']);
    const short = decodeEntity(blob(`[${'1,{"$hole":3},'.repeat(40)}2]`), { format });
    assert.strictEqual(short.length, 161);
    assert.strictEqual(Object.keys(short).length, 41);
    assert.strictEqual(short[160], 2);
    // Encoded again, the same bytes.
    assert.deepStrictEqual(Buffer.from(encodeEntity(short, { format })), Buffer.from(blob(`[${'1,{"$hole":3},'.repeat(40)}2]`)));
  }
});

test('maxLength above 2^30: arrays up to it in both formats and through transcode', { skip }, () => {
  // Strings are capped by the tape (2^30 - 1 bytes), counts are not: the
  // protobuf reader capped both, so a sparse array JSON decodes failed.
  const a = [];
  a[2 ** 31] = 1;
  const o = { maxLength: 2 ** 32 - 1 };
  const text = encodeEntity(a);
  const bytes = encodeEntity(a, { format: 'protobuf' });
  for (const [format, blob] of [['json', text], ['protobuf', bytes]]) {
    const back = decodeEntity(blob, { format, ...o });
    assert.strictEqual(back.length, 2 ** 31 + 1, format);
    assert.deepStrictEqual(Object.keys(back), [String(2 ** 31)]);
    throwsCode(() => decodeEntity(blob, { format, maxLength: 2 ** 31 }), 'ERR_TOO_LARGE');
  }
  const pbOf = darmok.transcode(text, { from: 'json', to: 'protobuf', ...o });
  assert.deepStrictEqual(Buffer.from(pbOf), Buffer.from(bytes));
  assert.strictEqual(darmok.transcode(pbOf, { from: 'protobuf', to: 'json', ...o }), text);
});

test('options of the wrong type are ERR_INVALID_OPTION, not ignored', () => {
  // encodeEntity(v, 'protobuf') wrote JSON, and strict: 'yes' was not strict.
  throwsCode(() => encodeEntity({ a: 1 }, 'protobuf'), 'ERR_INVALID_OPTION');
  throwsCode(() => encodeEntity({ a: 1 }, 1), 'ERR_INVALID_OPTION');
  throwsCode(() => encodeEntity({ a: 1 }, { strict: 'yes' }), 'ERR_INVALID_OPTION');
  throwsCode(() => encodeEntity({ a: 1 }, { strict: 1 }), 'ERR_INVALID_OPTION');
  throwsCode(() => decodeEntity('1', undefined, 'protobuf'), 'ERR_INVALID_OPTION');
  assert.strictEqual(encodeEntity({ a: 1 }, { strict: false }), '{"a":1}');
  assert.strictEqual(encodeEntity({ a: 1 }, null), '{"a":1}');
  assert.strictEqual(decodeEntity('1', undefined, null), 1);
});

test('bad limit values are ERR_INVALID_OPTION', () => {
  for (const name of ['maxDepth', 'maxBytes', 'maxLength']) {
    for (const v of [0, -1, 1.5, NaN, Infinity, '10', 2 ** 32, null]) {
      throwsCode(() => decodeEntity('1', { [name]: v }), 'ERR_INVALID_OPTION');
    }
  }
});

test('after a failed call the core is reset: 100,000 mixed calls, memory stable after warm-up', { skip }, () => {
  class Item { constructor(i) { this.i = i; this.at = new Date(i); this.tags = new Set(['x']); } }
  serializable(Item, [], 'limits.Item');
  const value = { items: [new Item(1), new Item(2)], m: new Map([['k', 1n]]), s: 'é😀', b: new Uint8Array(8) };
  const text = encodeEntity(value);
  const bytes = Buffer.from(text);
  const bad = [
    '', '[1,', '{"a":tru}', '"\\x"', '{"$Date":"x"}', '{"$":"limits.Nope"}', '[[[[[[[[[[', text.slice(0, -1),
    text + ' x', '{"a":1,}', Buffer.from([0x22, 0xc0, 0xaf, 0x22]), '{"$ref":0}', '"abcdefghijklmnopqrstuvwxyz"'
  ];
  const opts = { maxDepth: 8, maxLength: 20 };
  const round = (n) => {
    let failures = 0;
    for (let i = 0; i < n; i++) {
      switch (i % 5) {
        case 0: assert.strictEqual(encodeEntity(value), text); break;
        case 1: decodeEntity(i & 8 ? bytes : text); break;
        case 2:
        case 3:
          try {
            decodeEntity(bad[i % bad.length], opts);
            assert.fail('should have failed');
          } catch (e) {
            if (!(e instanceof DarmokError)) throw e;
            failures++;
          }
          break;
        default:
          try { encodeEntity({ a: [() => 1] }, { strict: true }); } catch (e) { if (!(e instanceof DarmokError)) throw e; failures++; }
      }
    }
    return failures;
  };
  round(5000);
  const size = internal.wasmMemory().buffer.byteLength;
  const failures = round(100000);
  assert.strictEqual(failures, 60000);
  assert.strictEqual(internal.wasmMemory().buffer.byteLength, size, 'WebAssembly memory grew');
  // And the core still answers correctly.
  assert.strictEqual(encodeEntity(decodeEntity(text)), text);
});

test('a large input then small ones: memory is reused, not grown again', { skip }, () => {
  const big = JSON.stringify(Array.from({ length: 200000 }, (_, i) => `s${i}`));
  decodeEntity(big);
  try { decodeEntity(big.slice(0, -1)); } catch (e) { assert.strictEqual(e.code, 'ERR_SYNTAX'); }
  const size = internal.wasmMemory().buffer.byteLength;
  for (let i = 0; i < 50; i++) {
    decodeEntity(big);
    try { decodeEntity(big.slice(0, -1)); } catch (e) { assert.strictEqual(e.code, 'ERR_SYNTAX'); }
    decodeEntity('[1]');
  }
  assert.strictEqual(internal.wasmMemory().buffer.byteLength, size);
});

test('maxDepth raised past what the JS stack holds: ERR_DEPTH, never a bare RangeError', () => {
  let v = null;
  for (let i = 0; i < 50000; i++) v = new Map([[1, v]]);
  assert.throws(() => darmok.encodeEntity(v, { maxDepth: 100000 }), (e) =>
    e instanceof darmok.DarmokError && e.code === 'ERR_DEPTH' && e.cause instanceof RangeError);
  const text = '['.repeat(60000) + ']'.repeat(60000);
  for (const format of ['json', 'protobuf']) {
    const c = darmok.createCodec({ format });
    const blob = format === 'json' ? text : darmok.transcode(text, { from: 'json', to: 'protobuf', maxDepth: 100000 });
    assert.throws(() => c.decodeEntity(blob, { maxDepth: 100000 }), (e) =>
      e instanceof darmok.DarmokError && e.code === 'ERR_DEPTH' && e.cause instanceof RangeError, format);
  }
});

test("a RangeError thrown by a class's own migrate step passes through as it is", () => {
  const registry = darmok.createRegistry();
  const c = darmok.createCodec({ registry });
  class V1 {}
  registry.serializable(V1, { key: 'limits.Ranged' });
  const old = c.encodeEntity(Object.assign(new V1(), { a: 1 }));
  const registry2 = darmok.createRegistry();
  class V2 {}
  const boom = new RangeError('from migrate');
  registry2.serializable(V2, { key: 'limits.Ranged', version: 2, migrate: { 1: () => { throw boom; } } });
  assert.throws(() => darmok.createCodec({ registry: registry2 }).decodeEntity(old), (e) => e === boom);
});

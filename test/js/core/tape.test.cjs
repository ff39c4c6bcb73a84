'use strict';
/*
 * The JS half alone: walker -> tape -> rebuilder, no WebAssembly. Every
 * fixture round-trips; a few tapes are checked byte for byte.
 */
const { test } = require('node:test');
const { fixtures } = require('../fixtures.cjs');
const { assert, sameGraph, deepFreeze } = require('../helpers.cjs');
const { encodeTape } = require('../../../js/internal.cjs').encode;
const { decodeTape } = require('../../../js/internal.cjs').decode;
const T = require('../../../js/internal.cjs').tape;
const { TapeWriter } = require('../../../js/internal.cjs').tapeWriter;

for (const f of fixtures) {
  test(`tape round trip: ${f.name}`, () => {
    const input = f.make();
    const tape = encodeTape(input);
    const out = decodeTape(tape);
    if (f.expect !== null) sameGraph(out, f.expect ? f.expect() : input);
    if (f.check) f.check(out, assert, input);
    // Idempotent at the tape level, and the input is left as it was.
    assert.deepStrictEqual(encodeTape(out), tape);
    assert.deepStrictEqual(encodeTape(input), tape);
  });
}

test('tape round trip of a deep-frozen fixture graph', () => {
  const all = deepFreeze(fixtures.filter((f) => f.expect === undefined).map((f) => f.make()));
  sameGraph(decodeTape(encodeTape(all)), all);
});

function tapeOf(...parts) {
  const w = new TapeWriter(16);
  for (const p of parts) p(w);
  return w.buf.slice(0, w.pos);
}

test('numbers: int32 as T_INT, everything else as T_F64', () => {
  assert.deepStrictEqual([...encodeTape(7)], [T.T_INT, 7, 0, 0, 0]);
  assert.deepStrictEqual([...encodeTape(-1)], [T.T_INT, 255, 255, 255, 255]);
  for (const v of [-0, 0.5, 2 ** 31, NaN, Infinity, -Infinity]) {
    const t = encodeTape(v);
    assert.strictEqual(t[0], T.T_F64, String(v));
    assert.strictEqual(t.length, 9);
    assert.ok(Object.is(new DataView(t.buffer).getFloat64(1, true), v));
  }
});

test('strings: header flags and bytes', () => {
  const header = (t) => new DataView(t.buffer).getUint32(1, true);
  let t = encodeTape('ab');
  assert.deepStrictEqual([...t], [T.T_STR, (2 << 2) | T.STR_ASCII, 0, 0, 0, 0x61, 0x62]);
  t = encodeTape('é');
  assert.strictEqual(header(t), 2 << 2);
  assert.deepStrictEqual([...t.slice(5)], [0xc3, 0xa9]);
  t = encodeTape('a\ud800');
  assert.strictEqual(header(t), (4 << 2) | T.STR_WTF8);
  assert.deepStrictEqual([...t.slice(5)], [0x61, 0xed, 0xa0, 0x80]);
  t = encodeTape('😀');
  assert.deepStrictEqual([...t.slice(5)], [0xf0, 0x9f, 0x98, 0x80]);
  t = encodeTape('x'.repeat(31));
  assert.strictEqual(header(t), (31 << 2) | T.STR_ASCII);
  // 32 units and more: T_STR16, the units as they are (one ucs2Write)
  t = encodeTape('x'.repeat(32));
  assert.deepStrictEqual([t[0], header(t), t.length], [T.T_STR16, 32, 5 + 64]);
  t = encodeTape('x'.repeat(100));
  assert.deepStrictEqual([t[0], header(t), t.length], [T.T_STR16, 100, 5 + 200]);
  t = encodeTape('é'.repeat(100) + '\udfff');
  assert.deepStrictEqual([t[0], header(t), t.length], [T.T_STR16, 101, 5 + 202]);
  assert.deepStrictEqual([...t.slice(5, 7), ...t.slice(-2)], [0xe9, 0x00, 0xff, 0xdf]);
  // a key is a str whatever its length
  t = encodeTape({ ['k'.repeat(60)]: 1 });
  assert.strictEqual(new DataView(t.buffer).getUint32(5, true), (60 << 2) | T.STR_ASCII);
});

test('every lone surrogate and pair survives', () => {
  const units = [];
  for (let c = 0xd800; c <= 0xdfff; c += 0x3f) units.push(String.fromCharCode(c));
  const s = units.join('') + '\ud83d\ude00' + units.reverse().join('');
  assert.strictEqual(decodeTape(encodeTape(s)), s);
  assert.strictEqual(decodeTape(encodeTape([s])).at(0), s);
});

test('arrays: hole runs and undefined are distinct', () => {
  const arr = [1, , , undefined]; // eslint-disable-line no-sparse-arrays
  const t = encodeTape(arr);
  assert.deepStrictEqual([...t], [
    T.T_ARRAY, 4, 0, 0, 0,
    T.T_INT, 1, 0, 0, 0,
    T.T_HOLE, 2, 0, 0, 0,
    T.T_UNDEF
  ]);
});

test('references: indexes counted in op order, parents before children', () => {
  const inner = { x: 1 };
  const t = encodeTape([new Date(0), { inner }, inner]);
  const refAt = t.length - 5;
  assert.strictEqual(t[refAt], T.T_REF);
  // array 0, Date 1, {inner} 2, inner 3
  assert.strictEqual(new DataView(t.buffer).getUint32(refAt + 1, true), 3);
});

test('a hand-written tape decodes', () => {
  const tape = tapeOf(
    (w) => w.opU32(T.T_OBJECT, 2),
    (w) => w.str('__proto__'), (w) => w.opU32(T.T_ARRAY, 1), (w) => w.opU32(T.T_REF, 0),
    (w) => w.str('n'), (w) => w.opF64(T.T_F64, -0)
  );
  const v = decodeTape(tape);
  assert.strictEqual(Object.getPrototypeOf(v), Object.prototype);
  assert.ok(Object.prototype.hasOwnProperty.call(v, '__proto__'));
  assert.strictEqual(v.__proto__[0], v); // eslint-disable-line no-proto
  assert.ok(Object.is(v.n, -0));
});

'use strict';
/*
 * What a call leaves as it found it: the input not mutated (frozen input
 * encodes), identities kept, re-entrant encodes and the reused tape buffer
 * not leaking into each other, an application's Array.prototype setter
 * seeing decoded arrays as push() would build them. What hostile bytes
 * cannot do is in hostile.test.cjs.
 */
const { test } = require('node:test');
const { assert, haveWasm, deepFreeze, sameGraph } = require('../helpers.cjs');
const { serializable, encodeEntity, decodeEntity } = require('../../../js/index.cjs');
const { encodeTape } = require('../../../js/internal.cjs').encode;
const { decodeTape } = require('../../../js/internal.cjs').decode;

const roundTrip = (v) => haveWasm ? decodeEntity(encodeEntity(v)) : decodeTape(encodeTape(v));

test('the input is never mutated; a deep-frozen input encodes', () => {
  class Frozen { constructor() { this.items = [new Map([['k', new Set([1])]])]; this.when = new Date(0); } }
  const P = serializable(Frozen, [], 'safety.Frozen');
  const v = deepFreeze({ a: [new P(), { b: 1 }], c: new Frozen() });
  const before = JSON.stringify(v);
  const names = Object.getOwnPropertyNames(v.c);
  const out = roundTrip(v);
  assert.strictEqual(JSON.stringify(v), before);
  assert.deepStrictEqual(Object.getOwnPropertyNames(v.c), names);
  sameGraph(out, v);
});

test('shared references and cycles keep identity', () => {
  const shared = { s: 1 };
  const m = new Map();
  const root = { a: shared, b: [shared, m], m };
  m.set(root, shared);
  m.set('self', m);
  const out = roundTrip(root);
  assert.strictEqual(out.a, out.b[0]);
  assert.strictEqual(out.b[1], out.m);
  assert.strictEqual(out.m.get(out), out.a);
  assert.strictEqual(out.m.get('self'), out.m);
});

test('re-entrancy: a getter that encodes during an encode', () => {
  const inner = { deep: [1, 2, 3] };
  const enc = haveWasm ? encodeEntity : (v) => Buffer.from(encodeTape(v)).toString('base64');
  const expectedInner = enc(inner);
  const outer = {
    before: 'x'.repeat(1000),
    get nested() { return enc(inner); },
    after: [4, 5, 6]
  };
  const text = enc(outer);
  const again = enc({ before: 'x'.repeat(1000), nested: expectedInner, after: [4, 5, 6] });
  assert.strictEqual(text, again);
});

test('the tape buffer is reused without leaking across calls', () => {
  const big = encodeTape('y'.repeat(20 * 1024 * 1024));
  assert.strictEqual(big.length, 5 + 20 * 1024 * 1024);
  assert.deepStrictEqual([...encodeTape(1)], [5, 1, 0, 0, 0]);
});

/*
 * An index setter on Array.prototype (the application's own pollution:
 * bytes cannot add one) runs for decoded elements as push() runs it, and a
 * decoded array keeps its length and holes as if built by push(): arrays
 * of 1-64 elements are made at their length, longer ones grow.
 */
test('decoded arrays under an Array.prototype index setter: as push() would build them', () => {
  let seen = ''; // not an array: the setters would run for its own elements
  const at = ['2', '63', '64', '99'];
  for (const k of at) {
    Object.defineProperty(Array.prototype, k, { configurable: true, set(v) { seen += `${k}:${v} `; } });
  }
  try {
    for (const len of [3, 5, 64, 65, 100, 130]) {
      const src = Array.from({ length: len }, (_, i) => i);
      const want = [];
      for (const x of src) want.push(x);
      seen = '';
      const out = roundTrip(src);
      assert.strictEqual(out.length, want.length, `length ${len}`);
      assert.deepStrictEqual(Object.keys(out), Object.keys(want), `elements of ${len}`);
      assert.strictEqual(seen, at.filter((k) => Number(k) < len).map((k) => `${k}:${k} `).join(''), `setters of ${len}`);
    }
  } finally {
    for (const k of at) delete Array.prototype[k];
  }
});

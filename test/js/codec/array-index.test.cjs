'use strict';
/*
 * isIndex (builtins.cjs), what toPlain's JSON writer and the encoder's
 * sparse-array walk take for an array index: ECMAScript's, the canonical
 * numeric string of an integer below 2^32 - 1.
 */
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { isIndex } = require('../../../js/internal.cjs').builtins;

test('isIndex takes array indexes and nothing else', () => {
  for (const k of ['0', '1', '9', '10', '123', '4294967294']) assert.strictEqual(isIndex(k), true, k);
  for (const k of ['4294967295', '4294967296', '99999999999', '01', '00', '-1', '-0', '1.5', '1e3', '0x1', ' 1', '1 ', '', 'a', 'Infinity', 'NaN']) {
    assert.strictEqual(isIndex(k), false, JSON.stringify(k));
  }
  // As the engine sees it: Object.keys lists indexes first, ascending.
  const o = { b: 1, 4294967295: 2, 4294967294: 3, '01': 4, 7: 5 };
  assert.deepStrictEqual(Object.keys(o).filter(isIndex), ['7', '4294967294']);
  assert.deepStrictEqual(Object.keys(o).slice(0, 2), ['7', '4294967294']);
});

test('fromPlain keeps a key that only looks numeric where it was', () => {
  const { createCodec, createRegistry } = require('../../../js/index.cjs');
  const c = createCodec({ registry: createRegistry() });
  for (const v of [{ '1.5': 'a', $x: 1 }, { '01': 'a', $x: 1 }, { 4294967295: 'a', $x: 1 }, { 7: 'a', $x: 1 }]) {
    const doc = c.encodeEntity(v);
    assert.deepStrictEqual(Object.keys(c.fromPlain(JSON.parse(doc))), Object.keys(c.decodeEntity(doc)), doc);
    assert.deepStrictEqual(Object.keys(c.fromPlain(c.toPlain(v))), Object.keys(v), doc);
  }
});

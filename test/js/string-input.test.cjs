'use strict';
/*
 * Which way a JSON string goes into the core, in a process of its own (the
 * input area grows and stays grown, so an earlier big call would hide a
 * wrong choice). A string whose 3 bytes a unit fit maxBytes goes in as
 * UTF-16 (3n bytes reserved, made UTF-8 in place); one over that goes in
 * through utf8Write with its exact UTF-8 length reserved, and then it must
 * not be written as UTF-16 into an area of that size.
 */
const { test } = require('node:test');
const { assert } = require('./helpers.cjs');
const { decodeEntity, DarmokError } = require('../../js/index.cjs');

test('a string over maxBytes / 3 units goes in by its exact UTF-8 length', () => {
  const body = 'a'.repeat(1 << 20) + '\u00e9\u6771';
  const text = JSON.stringify([body, 1]);
  const bytes = Buffer.byteLength(text);
  assert.ok(bytes < 3 * text.length);
  assert.deepStrictEqual(decodeEntity(text, { maxBytes: bytes }), [body, 1]);
  assert.deepStrictEqual(decodeEntity(text, { maxBytes: 2 * bytes }), [body, 1]);
  assert.throws(() => decodeEntity(text, { maxBytes: bytes - 1 }),
    (e) => e instanceof DarmokError && e.code === 'ERR_TOO_LARGE' && e.message.includes(`input of ${bytes} bytes`));
  // and the core is intact after them
  assert.deepStrictEqual(decodeEntity('["\u00e9",' + '"x",'.repeat(100) + '1]').length, 102);
  assert.deepStrictEqual(decodeEntity(text), [body, 1]);
});

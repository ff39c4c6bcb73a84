'use strict';
/*
 * Issue 32, finding 7: a DarmokError's message quotes the input (an
 * excerpt, a key, a RegExp source, a class key) with its control and
 * invisible characters escaped, so an application that logs err.message
 * prints no ESC, CSI, BEL or bidi override; the properties keep the value.
 */
const { test } = require('node:test');
const assert = require('node:assert/strict');
const darmok = require('../../../js/index.cjs');
const { throwsCode } = require('../helpers.cjs');

const RAW = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/u;
const ATTACK = '\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202eevil\u2066';

test('DarmokError.message escapes control characters from the input; the raw value stays on its property (finding 7)', () => {
  const regexp = JSON.stringify({ $RegExp: [`(${ATTACK}`, 'g'] });
  for (const [format, doc] of [['json', regexp], ['protobuf', darmok.transcode(regexp, { from: 'json', to: 'protobuf' })]]) {
    throwsCode(() => darmok.decodeEntity(doc, { format }), 'ERR_FORMAT', (err) => {
      assert.doesNotMatch(err.message, RAW, `${format}: ${JSON.stringify(err.message)}`);
      assert.match(err.message, /\\x1b\[2J/);
    });
  }
  class Wanted {}
  darmok.serializable(Wanted, { key: 'cli-hostile.Wanted' });
  const other = `other${ATTACK}`;
  throwsCode(() => darmok.decodeEntity(JSON.stringify({ $: other }), Wanted, { unknownClass: 'plain' }), 'ERR_UNEXPECTED_CLASS', (err) => {
    assert.doesNotMatch(err.message, RAW, JSON.stringify(err.message));
    assert.strictEqual(err.actual, other, 'the raw key on err.actual');
  });
  throwsCode(() => darmok.decodeEntity(`{"a${ATTACK}":{"b":[1,]}}`), 'ERR_SYNTAX', (err) => {
    assert.doesNotMatch(err.message, RAW, JSON.stringify(err.message));
    assert.doesNotMatch(err.path, RAW, JSON.stringify(err.path));
  });
});

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
});

test('an error under a key holding unsafe characters: the message shows the path escaped, err.path keeps the key (finding 7)', () => {
  // The key, as valid JSON: its C0 characters as JSON escapes, U+009B, U+202E and U+2066 raw.
  const key = JSON.stringify(`a${ATTACK}`);
  const bad = `{${key}:{"b":[1,]}}`;
  const badRegExp = `{${key}:{"b":{"$RegExp":["(","g"]}}}`;
  const cases = [
    ['json', bad, 'ERR_SYNTAX', '.b[1]'],
    ['json', badRegExp, 'ERR_FORMAT', '.b'],
    ['protobuf', darmok.transcode(badRegExp, { from: 'json', to: 'protobuf' }), 'ERR_FORMAT', '.b']
  ];
  for (const [format, doc, code, tail] of cases) {
    throwsCode(() => darmok.decodeEntity(doc, { format }), code, (err) => {
      const where = `${format} ${code}`;
      assert.doesNotMatch(err.message, RAW, `${where}: ${JSON.stringify(err.message)}`);
      assert.ok(err.message.includes('\\x9b31m\\u202eevil\\u2066'), `${where}: the path escaped in ${JSON.stringify(err.message)}`);
      // path is the raw value, by design (API.md): the key as the document holds it.
      assert.ok(err.path.endsWith(tail) && err.path.includes('\u009b31m\u202eevil\u2066'), `${where}: ${JSON.stringify(err.path)}`);
    });
  }
});

'use strict';
// docs/API.md keeps up with the code: every error code and every option
// name of encodeEntity and decodeEntity is documented there.
const { test } = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const assert = require('node:assert/strict');
const { CODES } = require('../../js/errors.cjs');

const api = fs.readFileSync(path.join(__dirname, '../../docs/API.md'), 'utf8');

test('docs/API.md names every DarmokError code', () => {
  for (const code of CODES) assert.ok(api.includes('`' + code + '`'), `${code} is not in docs/API.md`);
});

test('docs/API.md names every option of encodeEntity and decodeEntity', () => {
  const src = fs.readFileSync(path.join(__dirname, '../../js/codec.cjs'), 'utf8');
  for (const list of ['ENCODE_OPTIONS', 'DECODE_OPTIONS']) {
    const m = src.match(new RegExp(`const ${list} = new Set\\(\\[([^\\]]*)\\]`));
    assert.ok(m, `${list} in codec.cjs`);
    for (const [, name] of m[1].matchAll(/'(\w+)'/g)) assert.ok(api.includes('`' + name + '`'), `${name} is not in docs/API.md`);
  }
});

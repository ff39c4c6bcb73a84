'use strict';
// docs/API.md keeps up with the code: every error code and every option
// name of encodeEntity and decodeEntity is documented there.
const { test } = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const assert = require('node:assert/strict');
const { CODES } = require('../../../js/internal.cjs').errors;
const { ENCODE_OPTIONS, DECODE_OPTIONS } = require('../../../js/internal.cjs');

const api = fs.readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'API.md'), 'utf8');

test('docs/API.md names every DarmokError code', () => {
  for (const code of CODES) assert.ok(api.includes('`' + code + '`'), `${code} is not in docs/API.md`);
});

test('docs/API.md names every option of encodeEntity and decodeEntity', () => {
  for (const names of [ENCODE_OPTIONS, DECODE_OPTIONS]) {
    assert.ok(names.size > 0);
    for (const name of names) assert.ok(api.includes('`' + name + '`'), `${name} is not in docs/API.md`);
  }
});

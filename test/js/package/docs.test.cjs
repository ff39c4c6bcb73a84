'use strict';
// The docs keep up with the code: every error code and every option name
// of encodeEntity and decodeEntity is documented in docs/API.md, and every
// file the README and docs/*.md name exists.
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

const root = path.join(__dirname, '..', '..', '..');
// Made by the build (make build), not in git: a checkout without a build has none.
const GENERATED = new Set(['js/core/dk_abi.cjs']);
const docs = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/* Every file of the repository under test/ (relative paths), to find a test named without its folder. */
function filesUnder(dir) {
  const out = [];
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (e.name === 'node_modules') continue;
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...filesUnder(rel));
    else out.push(rel);
  }
  return out;
}

test('every test/, js/ and wasm/ path the README and docs/*.md name exists, and every test file they name by its file name alone', () => {
  const testFiles = new Set(filesUnder('test').map((f) => path.basename(f)));
  const missing = [];
  let named = 0;
  for (const doc of docs) {
    const text = fs.readFileSync(path.join(root, doc), 'utf8');
    // A path: test/, js/ or wasm/ then path characters, up to a file name with an extension or a folder's slash.
    for (const [, p] of text.matchAll(/(?<![\w./-])((?:test|js|wasm)\/[\w./-]*[\w/])/g)) {
      named++;
      if (!fs.existsSync(path.join(root, p)) && !GENERATED.has(p)) missing.push(`${doc}: ${p}`);
    }
    // A test file by its name alone, in backquotes: `hostile-values.test.cjs`, `test_hash.c`.
    for (const [, name] of text.matchAll(/`([\w-]+\.test\.[cm]?js|test_[\w]+\.c|fuzz_[\w]+\.c?js)`/g)) {
      named++;
      if (!testFiles.has(name)) missing.push(`${doc}: ${name}`);
    }
  }
  assert.ok(named > 20, `only ${named} paths found: is the pattern still right?`);
  assert.deepStrictEqual(missing, []);
});

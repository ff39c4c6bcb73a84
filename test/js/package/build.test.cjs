'use strict';
// The Makefile's own promises: the 32-bit x86 run is optional and probed,
// and editing the Makefile does not re-run apt or npm ci.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..', '..', '..');
const make = (...args) => execFileSync('make', ['--no-print-directory', '-s', ...args],
  { cwd: root, encoding: 'utf8', env: { ...process.env, MAKEFLAGS: '' } });

test('test-c32 with the probe forced off skips in one line and succeeds', () => {
  const out = make('test-c32', 'DK_M32=0');
  assert.match(out, /^test-c32: skipped: this kernel does not execute 32-bit x86 binaries/);
  assert.equal(out.trim().split('\n').length, 1);
});

test('test-c32 with the probe forced on runs the 32-bit programs', () => {
  // -n still runs the recursive make, which prints the gcc -m32 builds; in
  // an empty build folder, so that they are printed even where make test
  // already built them (a kernel that runs i386 code).
  const fs = require('node:fs');
  const os = require('node:os');
  const build = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-build-'));
  try {
    assert.match(make('-n', 'test-c32', 'DK_M32=1', `BUILD=${build}`), /gcc -m32 /);
    assert.doesNotMatch(make('-n', 'test-c32', 'DK_M32=0', `BUILD=${build}`), /gcc -m32 /);
  } finally {
    fs.rmSync(build, { recursive: true, force: true });
  }
});

test('the wasm32 C run is part of make test', () => {
  const out = make('-n', 'test');
  assert.match(out, /test-c-wasm: .* checks passed in wasm32/);
});

test('a newer Makefile does not re-run apt or npm ci', () => {
  const out = make('-n', '-W', 'Makefile', 'build/.setup');
  assert.doesNotMatch(out, /npm ci|apt-get/);
});

test('make clean removes every folder and file the build made (but the fetched protobuf-c source and the stamps)', () => {
  const fs = require('node:fs');
  const recipe = make('-n', 'clean');
  const kept = new Set(['protobuf-c', '.setup', '.setup-deb', '.deb-packages']);
  for (const name of fs.readdirSync(path.join(root, 'build'))) {
    if (kept.has(name)) continue;
    const word = new RegExp(`(^|\\s)build/${name.replace(/[.]/g, '\\.')}(\\s|$)`);
    assert.match(recipe, word, `make clean leaves build/${name}`);
  }
});

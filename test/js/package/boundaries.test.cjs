'use strict';
/*
 * Tests use darmok as its users do, through the public entries, and reach
 * its internals through one module, js/internal.cjs: a test file that
 * requires any other js/ module fails here, so that moving a module inside
 * js/ changes internal.cjs and no test.
 */
const { test } = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const { assert } = require('../helpers.cjs');

const ROOT = path.join(__dirname, '..', '..', '..');
const JS = path.join(ROOT, 'js');
const ENTRIES = new Set(['index', 'json', 'protobuf', 'inline', 'serializer', 'redis'].flatMap((n) => [`${n}.cjs`, `${n}.mjs`])
  .concat(['cli.cjs', 'internal.cjs']));

/* Every .cjs and .mjs file under dir. */
function sources(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (/\.(cjs|mjs)$/.test(e.name)) out.push(p);
  }
  return out;
}

/*
 * The js/ modules a source file loads that are neither an entry nor
 * internal.cjs, as paths below js/. A file only named, by require.resolve
 * (to know a module's filename), is not loaded.
 */
function reachedInternals(file, text) {
  const found = [];
  const check = (target) => {
    const rel = path.relative(JS, target);
    if (rel.startsWith('..') || path.isAbsolute(rel)) return;
    if (!ENTRIES.has(rel) && !ENTRIES.has(`${rel}.cjs`)) found.push(rel.split(path.sep).join('/'));
  };
  // A relative path written as one string ('../../js/core/x.cjs'), in a require, an import or a child's script.
  for (const m of text.matchAll(/['"`]((?:\.\.?\/)+js\/[^'"`$]+)['"`]/g)) {
    if (!text.slice(0, m.index).endsWith('require.resolve(')) check(path.resolve(path.dirname(file), m[1]));
  }
  // A path joined from parts inside a require: require(path.join(root, 'js', 'core', 'x.cjs')).
  for (const m of text.matchAll(/require\(\s*path\.join\(\s*\w+\s*((?:,\s*'[^']*')+)\s*\)\s*\)/g)) {
    const parts = [...m[1].matchAll(/'([^']*)'/g)].map((p) => p[1]);
    const at = parts.indexOf('js');
    if (at !== -1) check(path.join(JS, ...parts.slice(at + 1)));
  }
  return found;
}

test('the check finds an internal module however it is required, and lets entries and internal.cjs through', () => {
  const file = path.join(ROOT, 'test', 'js', 'core', 'x.test.cjs');
  assert.deepStrictEqual(reachedInternals(file, "require('../../../js/core/tape.cjs')"), ['core/tape.cjs']);
  assert.deepStrictEqual(reachedInternals(file, 'import { x } from "../../../js/codec/encode.cjs"'), ['codec/encode.cjs']);
  assert.deepStrictEqual(reachedInternals(file, "require(path.join(root, 'js', 'cli', 'tree.cjs'))"), ['cli/tree.cjs']);
  assert.deepStrictEqual(reachedInternals(file, "require('../../../js/index.cjs'); require('../../../js/internal.cjs').tape"), []);
  assert.deepStrictEqual(reachedInternals(file, "['../../../js/json', require.resolve('../../../js/cli/source.cjs')]"), []);
});

test('test files require only the public entries and js/internal.cjs', () => {
  const offenders = [];
  for (const file of [...sources(path.join(ROOT, 'test', 'js')), ...sources(path.join(ROOT, 'test', 'fuzz'))]) {
    if (file === __filename) continue;
    for (const rel of reachedInternals(file, fs.readFileSync(file, 'utf8'))) offenders.push(`${path.relative(ROOT, file)}: js/${rel}`);
  }
  assert.deepStrictEqual(offenders, [], 'reach these through js/internal.cjs');
});

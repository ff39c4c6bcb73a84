'use strict';
/*
 * Every entry point (darmok, darmok/json, darmok/protobuf) exports the same
 * names from CommonJS, from ESM and in its .d.ts: the limit constants
 * MAX_DEPTH, MAX_BYTES, MAX_LENGTH among them.
 */
const { test } = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const { assert } = require('./helpers.cjs');

const ROOT = path.join(__dirname, '..', '..');


/*
 * The value names a .d.ts declares: export function/class/const/let,
 * `export { a, b } from` (not `export type {`), and `default`.
 */
function declaredNames(file) {
  const text = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
  const names = new Set();
  for (const m of text.matchAll(/^export\s+(?:declare\s+)?(?:function|class|const|let|var)\s+([A-Za-z_$][\w$]*)/gm)) names.add(m[1]);
  for (const m of text.matchAll(/^export\s+\{([^}]*)\}/gm)) {
    for (const part of m[1].split(',')) {
      const name = part.trim().split(/\s+as\s+/).pop();
      if (name !== '') names.add(name);
    }
  }
  if (/^export\s+default\s/m.test(text)) names.add('default');
  return names;
}

/* The members of the `declare const darmok: { ... }` object a .d.ts exports as default. */
function declaredDefaultMembers(file) {
  const text = fs.readFileSync(file, 'utf8');
  const body = text.match(/declare const darmok: \{([\s\S]*?)\n\};/)[1];
  return new Set([...body.matchAll(/^\s*([A-Za-z_$][\w$]*):/gm)].map((m) => m[1]));
}

/* Every `types` file package.json's exports give an entry point. */
function typesOf(exported) {
  if (typeof exported === 'string') return [];
  const out = [];
  for (const [k, v] of Object.entries(exported)) {
    if (k === 'types' && typeof v === 'string') out.push(v);
    else if (v !== null && typeof v === 'object') out.push(...typesOf(v));
  }
  return out;
}

test('every entry point exports the same names from CommonJS, ESM and its .d.ts (MAX_DEPTH, MAX_BYTES, MAX_LENGTH)', async () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  for (const entry of ['.', './json', './protobuf']) {
    const conditions = pkg.exports[entry];
    const cjs = require(path.join(ROOT, conditions.require));
    const esm = await import(path.join(ROOT, conditions.import));
    const cjsNames = Object.keys(cjs).sort();
    assert.deepStrictEqual(Object.keys(esm).sort(), cjsNames, `${entry}: ESM and CommonJS`);
    for (const k of cjsNames) if (k !== 'default') assert.strictEqual(esm[k], cjs[k], `${entry}: ${k}`);
    for (const k of ['MAX_DEPTH', 'MAX_BYTES', 'MAX_LENGTH']) assert.strictEqual(typeof cjs[k], 'number', `${entry}: ${k}`);
    const types = typesOf(conditions);
    assert.ok(types.length > 0, `${entry} has types`);
    for (const file of types) {
      assert.deepStrictEqual([...declaredNames(path.join(ROOT, file))].sort(), cjsNames, `${entry}: ${file} and CommonJS`);
      assert.deepStrictEqual([...declaredDefaultMembers(path.join(ROOT, file))].sort(),
        cjsNames.filter((k) => k !== 'default'), `${entry}: ${file}'s default export`);
    }
  }
});

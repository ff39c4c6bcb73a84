'use strict';
/*
 * The public surface is what the .d.ts files declare: every entry point
 * exports the same names from CommonJS, from ESM and in its .d.ts (the
 * limit constants MAX_DEPTH, MAX_BYTES, MAX_LENGTH among them), and the
 * objects its functions return have only their declared members.
 */
const { test } = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const { assert } = require('../helpers.cjs');

const ROOT = path.join(__dirname, '..', '..', '..');


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

/* A .d.ts without its comments. */
function declarations(file) {
  return fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
}

/*
 * The members `export interface name` or `export declare class name` of a
 * .d.ts declares at its top level (`a:`, `a?:`, `readonly a:`, `a(`,
 * `a<T>(`), not those of object types nested in it.
 */
function declaredMembers(file, name) {
  const text = declarations(file);
  const head = new RegExp(`^export\\s+(?:declare\\s+)?(?:interface|class)\\s+${name}\\b[^{]*\\{`, 'm').exec(text);
  assert.ok(head, `${file} declares ${name}`);
  let depth = 1;
  let top = '';
  for (let i = head.index + head[0].length; depth > 0; i++) {
    const c = text[i];
    if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (depth === 1) top += c;
  }
  const names = new Set();
  for (const m of top.matchAll(/^\s*(?:readonly\s+)?([A-Za-z_$][\w$]*)\??\s*[:(<]/gm)) names.add(m[1]);
  assert.ok(names.size > 0, `${file}: ${name} has members`);
  return names;
}

/* An object users get: its own keys are the declared members, and it inherits from Object.prototype alone. */
function onlyDeclared(obj, declared, what) {
  assert.strictEqual(Object.getPrototypeOf(obj), Object.prototype, `${what} inherits nothing but Object.prototype`);
  assert.deepStrictEqual(Reflect.ownKeys(obj).sort(), [...declared].sort(), `${what}: own keys`);
}

/* A function users get: nothing of its own but what every function has. */
function onlyFunction(fn, what, prototypeKeys = ['constructor']) {
  assert.strictEqual(typeof fn, 'function', what);
  for (const k of Reflect.ownKeys(fn)) assert.ok(['length', 'name', 'prototype'].includes(k), `${what} has own ${String(k)}`);
  if (Object.prototype.hasOwnProperty.call(fn, 'prototype') && fn.prototype !== undefined) {
    assert.deepStrictEqual(Reflect.ownKeys(fn.prototype).sort(), prototypeKeys.slice().sort(), `${what}.prototype`);
  }
}

test('every entry point of package.json exports what its .d.ts declares, from CommonJS and ESM', async () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  for (const [entry, conditions] of Object.entries(pkg.exports)) {
    if (typeof conditions === 'string') continue; // ./package.json
    const cjs = require(path.join(ROOT, conditions.require));
    const esm = await import(path.join(ROOT, conditions.import));
    for (const file of typesOf(conditions)) {
      const declared = [...declaredNames(path.join(ROOT, file))].sort();
      assert.deepStrictEqual(Reflect.ownKeys(cjs).sort(), declared, `${entry}: CommonJS and ${file}`);
      assert.deepStrictEqual(Object.keys(esm).sort(), declared, `${entry}: ESM and ${file}`);
      assert.strictEqual(cjs.default, cjs, `${entry}: default is the exports themselves`);
    }
    for (const [k, v] of Object.entries(cjs)) if (typeof v === 'function' && k !== 'DarmokError') onlyFunction(v, `${entry} ${k}`);
  }
});

/*
 * What the public functions hand out - codecs, registries, serializers,
 * caches, errors, decorators - exposes no more than the .d.ts declares:
 * no Registry with its maps and clear(), no plans; test hooks are in
 * js/internal.cjs, which no entry point leads to.
 */
test('the objects the public functions return have only the members their .d.ts declares', async () => {
  const darmok = require(path.join(ROOT, 'js/index.cjs'));
  const protobuf = require(path.join(ROOT, 'js/protobuf.cjs'));
  const codecMembers = declaredMembers('js/index.d.ts', 'Codec');
  const registryMembers = declaredMembers('js/index.d.ts', 'Registry');
  const registries = [darmok.createRegistry(), protobuf.createRegistry()];
  const codecs = [darmok.createCodec(), protobuf.createCodec({ format: 'protobuf' }), darmok.createCodec({ registry: registries[0] })];
  for (const codec of codecs) {
    onlyDeclared(codec, codecMembers, `createCodec({ format: '${codec.format}' })`);
    assert.ok(Object.isFrozen(codec));
    registries.push(codec.registry);
    for (const k of codecMembers) if (typeof codec[k] === 'function') onlyFunction(codec[k], `codec.${k}`);
  }
  assert.strictEqual(codecs[2].registry, registries[0], 'codec.registry is the registry it was made with');
  for (const registry of registries) {
    onlyDeclared(registry, registryMembers, 'a registry');
    assert.ok(Object.isFrozen(registry));
    onlyFunction(registry.serializable, 'registry.serializable');
  }
  onlyFunction(darmok.serializable('exports.test.Decorated'), 'serializable(key)');

  const { DarmokError } = darmok;
  onlyFunction(DarmokError, 'DarmokError', ['constructor', 'name']);
  const errorMembers = new Set([...declaredMembers('js/index.d.ts', 'DarmokError'), 'message', 'stack']);
  class Later { constructor() { this.x = 1; } }
  const r = darmok.createRegistry();
  r.serializable(Later, { key: 'exports.test.Later' });
  const c = darmok.createCodec({ registry: r });
  for (const fn of [() => darmok.decodeEntity('{'), () => c.decodeEntity('{"$":"exports.test.Later","$v":2}'),
    () => c.decodeEntity('{"$":"exports.test.Later"}', class Other {}), () => darmok.encodeEntity(new WeakMap(), { strict: true })]) {
    let err = null;
    try { fn(); } catch (e) { err = e; }
    assert.ok(err instanceof DarmokError, String(err));
    for (const k of Reflect.ownKeys(err)) assert.ok(errorMembers.has(k), `${err.code} has own ${String(k)}`);
  }

  const serializers = require(path.join(ROOT, 'js/serializer.cjs'));
  const serializerMembers = declaredMembers('js/serializer.d.ts', 'Serializer');
  for (const s of [serializers.serializer, serializers.createSerializer(), serializers.createSerializer({ registry: r })]) {
    onlyDeclared(s, serializerMembers, 'a serializer');
  }

  const { createCache } = require(path.join(ROOT, 'js/redis.cjs'));
  const fakeIoredis = { getBuffer() {}, mgetBuffer() {}, isCluster: false, status: 'ready' };
  const cache = createCache({ client: fakeIoredis, registry: r });
  onlyDeclared(cache, declaredMembers('js/redis.d.ts', 'Cache'), 'createCache()');
  onlyDeclared(cache.codec, codecMembers, 'cache.codec');
  onlyDeclared(cache.codec.registry, registryMembers, 'cache.codec.registry');
  assert.strictEqual(cache.codec.registry, r);
  onlyDeclared(cache.stats(), declaredMembers('js/redis.d.ts', 'CacheStats'), 'cache.stats()');
});

test('every ESM entry but darmok/inline imports locate.mjs first, so bundlers emit the .wasm', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const entries = Object.entries(pkg.exports).filter(([, c]) => c !== null && typeof c === 'object' && typeof c.import === 'string');
  assert.ok(entries.length > 1);
  for (const [entry, conditions] of entries) {
    const text = fs.readFileSync(path.join(ROOT, conditions.import), 'utf8');
    const imports = [...text.matchAll(/^import\s+(?:[\w${}\s,*]+\s+from\s+)?'([^']+)';/gm)].map((m) => m[1]);
    // darmok/inline carries the core in its JavaScript (build/darmok-inline.cjs): no .wasm to emit.
    if (entry === './inline') {
      assert.ok(!imports.includes('./core/locate.mjs'), entry);
      continue;
    }
    assert.strictEqual(imports[0], './core/locate.mjs', `${entry} (${conditions.import}) imports ./core/locate.mjs before anything else`);
  }
});

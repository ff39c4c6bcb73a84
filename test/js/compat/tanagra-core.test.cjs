'use strict';
/*
 * tanagra-core's own API: serializable(C, [A, B]) sets C._fieldTypes (a Map
 * nested key -> class, as tanagra-core 0.3 does), previousVersions and the
 * key in fourth place; and tanagra-core's decorate-class-test.js, run
 * against darmok's serializable.
 */
const { test, describe, it } = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const { assert, FORMATS, isolatedCodec } = require('../helpers.cjs');
const { createRegistry } = require('../../../js/index.cjs');

const ROOT = path.join(__dirname, '..', '..', '..');

for (const format of FORMATS) {
  test(`${format}: serializable(C, [A, B]) sets tanagra-core's _fieldTypes, non-enumerable`, () => {
    const c = isolatedCodec(format);
    class Leaf { constructor() { this.l = 1; } }
    class Twig { constructor() { this.t = 2; } }
    const PLeaf = c.serializable(Leaf, [], 'ft.Leaf');
    class Tree { constructor() { this.leaf = new Leaf(); this.twig = new Twig(); } }
    const PTree = c.serializable(Tree, [PLeaf, Twig], 'ft.Tree');
    assert.ok(Tree._fieldTypes instanceof Map);
    assert.strictEqual(PTree._fieldTypes, Tree._fieldTypes, 'read through the Proxy too');
    assert.deepStrictEqual([...Tree._fieldTypes], [['ft.Leaf', PLeaf], ['Twig', Twig]]);
    assert.strictEqual(Object.getOwnPropertyDescriptor(Tree, '_fieldTypes').enumerable, false);
    assert.ok(!Object.keys(Tree).includes('_fieldTypes'));
    assert.deepStrictEqual([...PLeaf._fieldTypes], [], 'no nested classes: an empty Map, as tanagra-core');
    // tanagra-core 0.3's previousVersions (an array of arrays) and key in fourth place.
    class Old1 {}
    class Old2 {}
    class Versioned {}
    c.serializable(Versioned, [Leaf], [[Old1], [Old2, Leaf]], 'ft.Versioned');
    assert.strictEqual(Versioned._serializationKey, 'ft.Versioned');
    assert.deepStrictEqual([...Versioned._fieldTypes.keys()], ['ft.Leaf', 'Old1', 'Old2']);
    const out = c.decodeEntity(c.encodeEntity(new PTree()), PTree);
    assert.ok(out instanceof Tree && out.leaf instanceof Leaf && out.twig instanceof Twig);
  });
}

/*
 * tanagra-core's own test file, run against darmok's serializable (in a
 * registry of its own): its `require('../index')` is darmok.
 */
const TANAGRA_TEST = path.join(ROOT, 'node_modules', 'tanagra-core', 'test', 'decorate-class-test.js');
describe('tanagra-core decorate-class-test.js against darmok', { skip: !fs.existsSync(TANAGRA_TEST) && 'tanagra-core is not installed' }, () => {
  if (!fs.existsSync(TANAGRA_TEST)) return;
  const registry = createRegistry();
  const fake = (id) => {
    if (id === 'assert') return require('node:assert');
    if (id === '../index') return { serializable: registry.serializable };
    if (id === '../decorate-class') return registry.serializable;
    throw new Error(`the tanagra test requires ${id}`);
  };
  const nest = (name, fn) => describe(name, fn);
  new Function('require', 'describe', 'it', fs.readFileSync(TANAGRA_TEST, 'utf8'))(fake, nest, it);
});

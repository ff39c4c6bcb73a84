'use strict';
/*
 * Under transformKeys a class's wire -> field table learns a field when it
 * is first encoded; a decode shape made before must not keep the old
 * mapping (decoding then agrees with a codec that never made one).
 */
const { test } = require('node:test');
const { assert, FORMATS } = require('../helpers.cjs');
const { createCodec, createRegistry } = require('../../../js/index.cjs');
const { registryOf } = require('../../../js/internal.cjs');

for (const format of FORMATS) {
  test(`${format}: a field learned after the decode shape was made decodes to its field`, () => {
    const registry = createRegistry();
    const c = createCodec({ format, registry });
    class Account { constructor() { this.userId = 1; } }
    c.serializable(Account, { key: 'naming-learn.Account', transformKeys: 'snake' });
    // A document written with the wire name, by a writer this process did not see.
    const writer = createCodec({ format, registry: createRegistry() });
    class Written { constructor() { this.user_id = 7; } }
    writer.serializable(Written, { key: 'naming-learn.Account' });
    const doc = writer.encodeEntity(new Written());
    const plan = registryOf(registry).byKey.get('naming-learn.Account');
    for (let i = 0; i < 20; i++) assert.deepStrictEqual(Object.keys(c.decodeEntity(doc)), ['user_id']);
    assert.ok(plan.decodeShape, 'a decode shape was made');
    c.encodeEntity(new Account()); // teaches userId -> user_id
    const fresh = createCodec({ format, registry: createRegistry() });
    fresh.serializable(Account, { key: 'naming-learn.Account', transformKeys: 'snake' });
    fresh.encodeEntity(new Account());
    assert.deepStrictEqual(Object.keys(fresh.decodeEntity(doc)), ['userId']);
    for (let i = 0; i < 20; i++) {
      const v = c.decodeEntity(doc);
      assert.ok(v instanceof Account);
      assert.deepStrictEqual(Object.keys(v), ['userId'], `decode ${i}`);
      assert.strictEqual(v.userId, 7);
    }
  });
}

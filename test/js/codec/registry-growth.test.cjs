'use strict';
/*
 * What a registry costs as it grows: registering a class looks at that
 * class's plan (and its subclasses', when it changes their names), not at
 * every plan again.
 */
const { test } = require('node:test');
const { assert } = require('../helpers.cjs');
const { createCodec, createRegistry } = require('../../../js/index.cjs');

/* ms to register n fresh classes into a fresh registry: the best of 3. */
function registerTime(n) {
  let best = Infinity;
  for (let r = 0; r < 3; r++) {
    const classes = [];
    for (let i = 0; i < n; i++) classes.push(class {});
    const c = createCodec({ registry: createRegistry() });
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) c.serializable(classes[i], { key: `growth.C${i}` });
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return best;
}

test('registering n classes takes time linear in n, not its square', () => {
  registerTime(200); // warm up
  const n = 500;
  const small = registerTime(n);
  const large = registerTime(4 * n);
  assert.ok(large < 8 * small + 50, `${4 * n} classes: ${large.toFixed(1)} ms, ${n}: ${small.toFixed(1)} ms`);
});

test('a superclass registered after its subclass still gives it its names', () => {
  const c = createCodec({ registry: createRegistry() });
  class Base {}
  class Sub extends Base { constructor() { super(); this.userId = 1; } }
  c.serializable(Sub, { key: 'growth.Sub' });
  c.serializable(Base, { key: 'growth.Base', transformKeys: 'snake' });
  assert.match(c.encodeEntity(new Sub()), /"user_id"/);
  c.serializable(Base, { key: 'growth.Base', transformKeys: null });
  assert.match(c.encodeEntity(new Sub()), /"userId"/);
});

'use strict';
/*
 * Versioned types (issue 4), in every format: version, migrate, aliases,
 * exclude, fields, toData/fromData, nested types of previous versions,
 * registries (createRegistry, createCodec, DARMOK_KEY_REPLACED), ERR_VERSION
 * and newerVersion 'accept', errors at registration time.
 *
 * "Yesterday's bytes" are made the way a rolling deploy makes them: an
 * older version of the class, registered under the same key in a registry
 * of its own, encodes them.
 */
const { test } = require('node:test');
const { assert, haveWasm, sameGraph, throwsCode, isolatedCodec } = require('../helpers.cjs');
const { formats } = require('../fixtures.cjs');
const darmok = require('../../../js/index.cjs');
const { registryOf } = require('../../../js/internal.cjs');
const { createCodec, createRegistry, serializable } = darmok;

const skip = haveWasm ? false : 'build/darmok.wasm is not built (DARMOK_JS_ONLY=1)';


/* Whether the document holds the string (as text or as UTF-8 bytes). */
function holds(doc, s) {
  return Buffer.from(doc).includes(Buffer.from(s));
}

/* The three versions of one class, as three deploys define it. */
class UserV1 {
  constructor(name) { this.name = name; }
}
class UserV2 {
  constructor(first, last) { this.first = first; this.last = last; }
}
class UserV3 {
  constructor(first, last, email) { this.first = first; this.last = last; this.email = email; }
  get display() { return `${this.first} ${this.last} <${this.email}>`; }
}
const userSteps = {
  1: (d) => {
    const [first, last] = d.name.split(' ');
    return { first, last };
  },
  2: (d) => ({ ...d, email: null })
};

for (const format of formats) {
  test(`${format}: #private state round-trips through toData/fromData`, { skip }, () => {
    const c = isolatedCodec(format);
    let constructed = 0;
    class Account {
      #balance;
      #history = [];
      constructor(owner, balance) {
        constructed++;
        if (balance < 0) throw new RangeError('negative balance');
        this.owner = owner;
        this.#balance = balance;
      }
      deposit(n) { this.#balance += n; this.#history.push(n); return this; }
      get balance() { return this.#balance; }
      get history() { return [...this.#history]; }
      static restore(d) {
        const a = new Account(d.owner, d.balance);
        a.#history = d.history;
        return a;
      }
    }
    c.serializable(Account, {
      key: 'bank.Account',
      toData: (a) => ({ owner: a.owner, balance: a.balance, history: a.history }),
      fromData: (d) => Account.restore(d)
    });
    const acct = new Account('ann', 10).deposit(5).deposit(7n === 7n ? 7 : 0);
    const doc = c.encodeEntity({ list: [acct, acct], when: new Date(0) });
    constructed = 0;
    const out = c.decodeEntity(doc);
    assert.strictEqual(constructed, 1, 'fromData ran once: the second is a reference');
    assert.ok(out.list[0] instanceof Account);
    assert.strictEqual(out.list[0], out.list[1]);
    assert.strictEqual(out.list[0].balance, 22);
    assert.deepStrictEqual(out.list[0].history, [5, 7]);
    assert.strictEqual(out.list[0].deposit(1).balance, 23, 'private methods and fields work');
    assert.strictEqual(out.when.getTime(), 0);
    assert.ok(!holds(doc, '#'), 'no private names in the bytes');
  });

  test(`${format}: a setter a migrate step adds to Object.prototype never runs for later fields`, { skip }, () => {
    const v1 = isolatedCodec(format);
    v1.serializable(UserV1, { key: 'app.User' });
    const v2 = isolatedCodec(format);
    let calls = 0;
    v2.serializable(UserV2, {
      key: 'app.User',
      version: 2,
      migrate: {
        1: (d) => {
          // User code mid-decode: a key the decoder has already looked up on
          // Object.prototype (and found absent) becomes an accessor there.
          Object.defineProperty(Object.prototype, 'zz', { set() { calls++; }, get() { return 'proto'; }, configurable: true });
          return userSteps[1](d);
        }
      }
    });
    // The migrated instance before a later object, and inside the very
    // object whose next key the hook turns into an accessor.
    const docs = [
      v1.encodeEntity([{ zz: 1 }, new UserV1('Ada Lovelace'), { zz: 2 }]),
      v1.encodeEntity([{ zz: 1 }, { u: new UserV1('Ada Lovelace'), zz: 2 }])
    ];
    const outs = [];
    try {
      for (const doc of docs) {
        outs.push(v2.decodeEntity(doc));
        delete Object.prototype.zz;
      }
    } finally {
      delete Object.prototype.zz;
    }
    assert.strictEqual(calls, 0, 'the setter ran');
    const [later, inside] = outs;
    assert.ok(Object.prototype.hasOwnProperty.call(later[2], 'zz'));
    assert.strictEqual(later[2].zz, 2);
    assert.ok(later[1] instanceof UserV2);
    assert.ok(Object.prototype.hasOwnProperty.call(inside[1], 'zz'));
    assert.strictEqual(inside[1].zz, 2);
    assert.ok(inside[1].u instanceof UserV2);
  });

  test(`${format}: a v1 blob decodes as the v3 class through two migrations`, { skip }, () => {
    const v1 = isolatedCodec(format);
    v1.serializable(UserV1, { key: 'app.User' });
    const v3 = isolatedCodec(format);
    v3.serializable(UserV3, { key: 'app.User', version: 3, migrate: userSteps });
    const doc = v1.encodeEntity(new UserV1('Ada Lovelace'));
    const out = v3.decodeEntity(doc);
    assert.ok(out instanceof UserV3);
    assert.deepStrictEqual({ ...out }, { first: 'Ada', last: 'Lovelace', email: null });
    assert.strictEqual(out.display, 'Ada Lovelace <null>');
    // A v2 blob takes the last step only; a v3 blob none.
    const v2 = isolatedCodec(format);
    v2.serializable(UserV2, { key: 'app.User', version: 2, migrate: { 1: userSteps[1] } });
    assert.deepStrictEqual({ ...v3.decodeEntity(v2.encodeEntity(new UserV2('A', 'B'))) }, { first: 'A', last: 'B', email: null });
    const same = new UserV3('x', 'y', 'z@w');
    sameGraph(v3.decodeEntity(v3.encodeEntity(same)), same);
    // The v2 server reads v1 bytes too.
    assert.deepStrictEqual({ ...v2.decodeEntity(doc) }, { first: 'Ada', last: 'Lovelace' });
    if (format === 'json') {
      assert.strictEqual(doc, '{"$":"app.User","name":"Ada Lovelace"}');
      assert.strictEqual(v3.encodeEntity(same), '{"$":"app.User","$v":3,"first":"x","last":"y","email":"z@w"}');
    }
  });

  test(`${format}: nested and Map-held instances migrate with their own steps, inner first`, { skip }, () => {
    class Line1 { constructor(sku, qty) { this.sku = sku; this.qty = qty; } }
    class Order1 { constructor(lines, byId) { this.lines = lines; this.byId = byId; } }
    const old = isolatedCodec(format);
    old.serializable(Order1, { key: 'shop.Order', nested: [Line1] });
    old.serializable(Line1, { key: 'shop.Line' });

    const calls = [];
    class Line2 { get total() { return this.quantity * this.price; } }
    class Order2 { get count() { return this.items.length; } }
    const now = isolatedCodec(format);
    now.serializable(Line2, {
      key: 'shop.Line',
      version: 2,
      migrate: { 1: (d) => { calls.push(`line ${d.sku}`); return { sku: d.sku, quantity: d.qty, price: 1 }; } }
    });
    now.serializable(Order2, {
      key: 'shop.Order',
      version: 2,
      migrate: {
        1: (d) => {
          // Inner first: the lines are already Line2 instances here.
          calls.push(`order ${d.lines.every((l) => l instanceof Line2)}`);
          return { items: d.lines, byId: d.byId };
        }
      }
    });
    const a = new Line1('a', 2);
    const b = new Line1('b', 3);
    const doc = old.encodeEntity(new Order1([a, b], new Map([['a', a], ['z', new Line1('z', 9)]])));
    const out = now.decodeEntity(doc);
    assert.deepStrictEqual(calls, ['line a', 'line b', 'line z', 'order true']);
    assert.ok(out instanceof Order2);
    assert.strictEqual(out.count, 2);
    assert.strictEqual(out.items[1].total, 3);
    assert.strictEqual(out.byId.get('a'), out.items[0], 'shared references survive migration');
    assert.ok(out.byId.get('z') instanceof Line2);
    assert.strictEqual(out.byId.get('z').quantity, 9);
  });

  test(`${format}: a migrated instance inside a cycle keeps its identity`, { skip }, () => {
    class Node1 { constructor(label) { this.label = label; this.next = null; } }
    class Node2 {}
    const old = isolatedCodec(format);
    old.serializable(Node1, { key: 'g.Node' });
    const now = isolatedCodec(format);
    now.serializable(Node2, { key: 'g.Node', version: 2, migrate: { 1: (d) => ({ name: d.label, next: d.next }) } });
    const x = new Node1('x');
    const y = new Node1('y');
    x.next = y;
    y.next = x;
    const out = now.decodeEntity(old.encodeEntity(x));
    assert.ok(out instanceof Node2 && out.next instanceof Node2);
    assert.strictEqual(out.next.next, out);
    assert.strictEqual(out.next.name, 'y');
  });

  test(`${format}: a cycle through a fromData instance fails loudly`, { skip }, () => {
    const c = isolatedCodec(format);
    class Box { constructor(v) { this.v = v; } }
    c.serializable(Box, { key: 'c.Box', toData: (b) => ({ v: b.v }), fromData: (d) => new Box(d.v) });
    const box = new Box(null);
    box.v = [box];
    throwsCode(() => c.decodeEntity(c.encodeEntity(box)), 'ERR_FORMAT', (e) => assert.strictEqual(e.path, '$.v[0]'));
    const shared = new Box(1);
    const out = c.decodeEntity(c.encodeEntity([shared, { again: shared }]));
    assert.strictEqual(out[0], out[1].again, 'later references reach the built instance');
  });

  test(`${format}: a renamed class reads through its alias`, { skip }, () => {
    class Customer { constructor(n) { this.n = n; } }
    class Client { hello() { return `hi ${this.n}`; } }
    const old = isolatedCodec(format);
    old.serializable(Customer, { key: 'crm.Customer' });
    const now = isolatedCodec(format);
    now.serializable(Client, { key: 'crm.Client', aliases: ['crm.Customer', 'Customer'] });
    const out = now.decodeEntity(old.encodeEntity([new Customer(1), new Customer(2)]));
    assert.ok(out[0] instanceof Client);
    assert.strictEqual(out[1].hello(), 'hi 2');
    const again = now.encodeEntity(out[0]);
    assert.ok(holds(again, 'crm.Client') && !holds(again, 'crm.Customer'), 'written under the new key');
    // A class that owns the key itself wins over an alias.
    class Other {}
    now.serializable(Other, { key: 'Customer' });
    assert.ok(now.decodeEntity(old.encodeEntity(new Customer(3))) instanceof Client);
  });

  test(`${format}: newer-version bytes throw ERR_VERSION, or decode with newerVersion 'accept'`, { skip }, () => {
    class PriceV1 { constructor(amount) { this.amount = amount; } }
    class PriceV2 { constructor(amount, currency) { this.amount = amount; this.currency = currency; } }
    const old = isolatedCodec(format);
    old.serializable(PriceV1, { key: 'money.Price' });
    const next = isolatedCodec(format);
    next.serializable(PriceV2, { key: 'money.Price', version: 2, migrate: { 1: (d) => ({ ...d, currency: 'EUR' }) } });
    const doc = next.encodeEntity({ items: [new PriceV2(5, 'USD')] });
    throwsCode(() => old.decodeEntity(doc), 'ERR_VERSION', (e) => {
      assert.strictEqual(e.classKey, 'money.Price');
      assert.strictEqual(e.version, 2);
      assert.strictEqual(e.currentVersion, 1);
      assert.strictEqual(e.path, '$.items[0]');
      assert.match(e.message, /"money\.Price".*version 2.*version 1/);
    });
    const out = old.decodeEntity(doc, { newerVersion: 'accept' });
    assert.ok(out.items[0] instanceof PriceV1);
    assert.deepStrictEqual({ ...out.items[0] }, { amount: 5, currency: 'USD' }, 'unknown fields kept as own properties');
    throwsCode(() => old.decodeEntity(doc, { newerVersion: 'yes' }), 'ERR_INVALID_OPTION');
  });

  test(`${format}: bytes older than the oldest migration step throw ERR_VERSION`, { skip }, () => {
    class T1 {}
    const old = isolatedCodec(format);
    old.serializable(T1, { key: 't.T' });
    const doc = old.encodeEntity(Object.assign(new T1(), { a: 1 }));
    const noSteps = isolatedCodec(format);
    noSteps.serializable(class T3 {}, { key: 't.T', version: 3 });
    throwsCode(() => noSteps.decodeEntity(doc), 'ERR_VERSION', (e) => assert.strictEqual(e.version, 1));
    const fromTwo = isolatedCodec(format);
    fromTwo.serializable(class T3 {}, { key: 't.T', version: 3, migrate: { 2: (d) => d } });
    throwsCode(() => fromTwo.decodeEntity(doc), 'ERR_VERSION', (e) => assert.strictEqual(e.currentVersion, 3));
    const bad = isolatedCodec(format);
    bad.serializable(class T2 {}, { key: 't.T', version: 2, migrate: { 1: () => 42 } });
    throwsCode(() => bad.decodeEntity(doc), 'ERR_VERSION');
  });

  test(`${format}: excluded fields are absent from the bytes; fields fixes the list and order`, { skip }, () => {
    const c = isolatedCodec(format);
    class Session {
      constructor() {
        this.user = 'ann';
        this.token = 'SECRET-TOKEN';
        this.cache = new Map([['k', 'CACHED-VALUE']]);
        this.started = new Date(0);
      }
    }
    c.serializable(Session, { key: 's.Session', exclude: ['token', 'cache'] });
    const doc = c.encodeEntity(new Session());
    assert.ok(!holds(doc, 'SECRET-TOKEN') && !holds(doc, 'token'));
    assert.ok(!holds(doc, 'CACHED-VALUE') && !holds(doc, 'cache'));
    const out = c.decodeEntity(doc);
    assert.deepStrictEqual(Object.keys(out), ['user', 'started']);
    assert.ok(out instanceof Session);

    class Point3 {
      constructor() { this.z = 3; this.y = 2; this.x = 1; this.scratch = 'SCRATCH'; }
      get norm() { return Math.hypot(this.x, this.y, this.z); }
    }
    c.serializable(Point3, { key: 's.Point3', fields: ['x', 'y', 'z', 'w'] });
    const p = c.decodeEntity(c.encodeEntity(new Point3()));
    assert.deepStrictEqual(Object.keys(p), ['x', 'y', 'z'], 'listed order; a missing name is skipped');
    assert.ok(!holds(c.encodeEntity(new Point3()), 'SCRATCH'));
    assert.strictEqual(p.norm, Math.hypot(1, 2, 3));
    if (format === 'json') assert.strictEqual(c.encodeEntity(new Point3()), '{"$":"s.Point3","x":1,"y":2,"z":3}');
  });

  test(`${format}: replacing a key's class warns once per key (DARMOK_KEY_REPLACED)`, { skip }, async () => {
    const c = isolatedCodec(format);
    const warnings = [];
    const onWarning = (w) => { if (w.code === 'DARMOK_KEY_REPLACED') warnings.push(w); };
    process.on('warning', onWarning);
    try {
      class Widget { constructor() { this.v = 1; } }
      c.serializable(Widget, { key: 'hot.Widget' });
      c.serializable(Widget, { key: 'hot.Widget' }); // the same class again: no warning
      class Widget2 { constructor() { this.v = 2; } }
      c.serializable(Widget2, { key: 'hot.Widget' }); // hot reload: replaces, warns
      class Widget3 {}
      c.serializable(Widget3, { key: 'hot.Widget' }); // same key again: no second warning
      await new Promise((resolve) => setImmediate(resolve));
      assert.strictEqual(warnings.length, 1);
      assert.match(warnings[0].message, /"hot\.Widget"/);
      assert.ok(c.decodeEntity(c.encodeEntity(new Widget())) instanceof Widget3, 'the latest class wins');
    } finally {
      process.off('warning', onWarning);
    }
  });

  test(`${format}: registries are isolated; one key, two classes`, { skip }, () => {
    const a = isolatedCodec(format);
    const b = isolatedCodec(format);
    class TenantA { constructor() { this.a = 1; } }
    class TenantB { constructor() { this.b = 2; } }
    a.serializable(TenantA, { key: 'tenant.Thing' });
    b.serializable(TenantB, { key: 'tenant.Thing' });
    assert.ok(a.decodeEntity(a.encodeEntity(new TenantA())) instanceof TenantA);
    assert.ok(b.decodeEntity(a.encodeEntity(new TenantA())) instanceof TenantB);
    throwsCode(() => createCodec({ format }).decodeEntity(a.encodeEntity(new TenantA())), 'ERR_UNKNOWN_CLASS');
    throwsCode(() => a.encodeEntity(new TenantB(), { strict: true }), 'ERR_UNREGISTERED_CLASS');
    assert.strictEqual(a.registry.serializable, a.serializable);
  });

  test(`${format}: nested types of previous versions decode (tanagra's way)`, { skip }, () => {
    class Engine1 { constructor() { this.hp = 100; } }
    class Car1 { constructor() { this.engine = new Engine1(); } }
    const old = isolatedCodec(format);
    old.serializable(Car1, { key: 'Car', nested: [Engine1] });
    class Motor { get kw() { return Math.round(this.hp * 0.7457); } }
    class Car2 { constructor() { this.motor = new Motor(); } }
    const now = isolatedCodec(format);
    // Engine1 is not used by Car2 any more, but old bytes hold it.
    now.serializable(Car2, { key: 'Car', nested: [Motor, Engine1] });
    const out = now.decodeEntity(old.encodeEntity(new Car1()));
    assert.ok(out instanceof Car2);
    assert.ok(out.engine instanceof Engine1);
    assert.strictEqual(out.engine.hp, 100);
  });

  test(`${format}: the decorator form takes the same options`, { skip }, () => {
    const c = isolatedCodec(format);
    class Temp {}
    c.serializable({ key: 'w.Temp', version: 2, migrate: { 1: (d) => ({ celsius: (d.f - 32) * 5 / 9 }) } })(Temp);
    class TempOld { constructor() { this.f = 212; } }
    const old = isolatedCodec(format);
    old.serializable('w.Temp')(TempOld);
    const out = c.decodeEntity(old.encodeEntity(new TempOld()));
    assert.ok(out instanceof Temp);
    assert.strictEqual(out.celsius, 100);
    class Tc39 {}
    c.serializable({ key: 'w.Tc39', version: 4 })(Tc39, { kind: 'class', name: 'Tc39' });
    if (format === 'json') assert.strictEqual(c.encodeEntity(new Tc39()), '{"$":"w.Tc39","$v":4}');
  });
}

test('registration errors: gapped chains, bad versions, bad options', () => {
  const r = createRegistry();
  const bad = (options) => throwsCode(() => r.serializable(class X {}, { key: 'X', ...options }), 'ERR_INVALID_OPTION');
  bad({ version: 4, migrate: { 1: (d) => d, 3: (d) => d } }); // gap at 2
  bad({ version: 3, migrate: { 1: (d) => d } }); // gap at 2 (no step to 3)
  bad({ version: 0 });
  bad({ version: -1 });
  bad({ version: 1.5 });
  bad({ version: '2' });
  bad({ version: 2, migrate: { 2: (d) => d } }); // not an older version
  bad({ version: 2, migrate: { 0: (d) => d, 1: (d) => d } });
  bad({ version: 2, migrate: { 1: 'nope' } });
  bad({ version: 2, migrate: { '01': (d) => d } });
  bad({ migrations: {} }); // a typo is an error, not ignored
  bad({ exclude: 'token' });
  bad({ fields: ['a', 'a'] });
  bad({ aliases: ['X'] });
  bad({ toData: {} });
  bad({ fromData: 1 });
  assert.throws(() => r.serializable({ versoin: 2 }), (e) => e.code === 'ERR_INVALID_OPTION');
  // The gap is named in the message.
  assert.throws(() => r.serializable(class Y {}, { version: 4, migrate: { 1: (d) => d, 3: (d) => d } }),
    (e) => /from version 2 to 3/.test(e.message));
  // A failed registration registers nothing.
  assert.strictEqual(registryOf(r).planByKey('X'), null);
  throwsCode(() => createCodec({ format: 'xml' }), 'ERR_INVALID_OPTION');
  throwsCode(() => createCodec({ registry: {} }), 'ERR_INVALID_OPTION');
});

test('classes with no options keep the fast paths', () => {
  const r = registryOf(createRegistry());
  class Plain {}
  const plan = r.register(Plain, {});
  assert.strictEqual(plan.simple, true);
  assert.strictEqual(plan.plainVersion, 1);
  const v = r.register(class V {}, { key: 'V', version: 3, migrate: { 2: (d) => d } });
  assert.strictEqual(v.simple, true, 'a version alone changes nothing when encoding');
  assert.strictEqual(v.plainVersion, 3, 'current-version bytes take the fast path');
  assert.strictEqual(r.register(class F {}, { fromData: (d) => d }).plainVersion, -1);
  assert.strictEqual(r.register(class E {}, { exclude: ['x'] }).simple, false);
});

test('the default entry points are a codec over the default registry', { skip }, () => {
  class DefaultOne { constructor() { this.d = 1; } }
  serializable(DefaultOne, { key: 'default.One', version: 2, migrate: { 1: (d) => ({ d: d.d * 10 }) } });
  const viaCodec = createCodec();
  assert.strictEqual(viaCodec.serializable, serializable);
  assert.ok(viaCodec.decodeEntity(darmok.encodeEntity(new DefaultOne())) instanceof DefaultOne);
  assert.strictEqual(darmok.decodeEntity('{"$":"default.One","d":2}').d, 20);
  assert.strictEqual(darmok.encodeEntity(new DefaultOne()), '{"$":"default.One","$v":2,"d":1}');
});

/*
 * Registering a class again under a new key (with a new version and
 * migrate steps) left its old key, and aliases, naming the old plan: bytes
 * under the old key were built at version 1 without migration, then written
 * back as the new version. They now name the new plan.
 */
for (const format of formats) {
  test(`${format}: an old key and old aliases decode through the class's current registration`, { skip }, () => {
    const registry = createRegistry();
    const codec = createCodec({ registry, format });
    class Address {}
    class User {}
    registry.serializable(User, [Address]); // Address under "Address", version 1
    registry.serializable(Address, { key: 'app.Address', aliases: ['Address'], version: 2,
      migrate: { 1: (x) => ({ ...x, migrated: true }) } });
    class A {}
    registry.serializable(A, { key: 'k1', aliases: ['k0'] });
    registry.serializable(A, { key: 'k2', version: 2, migrate: { 1: (x) => ({ ...x, m: 1 }) } });
    const json = createCodec({ registry });
    for (const [text, want] of [
      ['{"$":"Address","street":"x"}', { street: 'x', migrated: true }],
      ['{"$":"k1","a":1}', { a: 1, m: 1 }],
      ['{"$":"k0","a":1}', { a: 1, m: 1 }]
    ]) {
      const blob = format === 'json' ? text : darmok.transcode(text, { from: 'json', to: 'protobuf' });
      const v = codec.decodeEntity(blob);
      assert.deepStrictEqual({ ...v }, want, text);
      assert.ok(v instanceof (want.migrated ? Address : A));
      assert.match(json.encodeEntity(v), /"\$v":2/);
    }
  });
}

test('fields: a listed name only the prototype has is not written', { skip }, () => {
  const registry = createRegistry();
  const codec = createCodec({ registry });
  class Shape { constructor() { this.w = 2; } get area() { return this.w * this.w; } }
  Shape.prototype.kind = 'shape';
  registry.serializable(Shape, { fields: ['w', 'kind', 'area', 'missing'] });
  assert.strictEqual(codec.encodeEntity(new Shape()), '{"$":"Shape","w":2}');
  const back = codec.decodeEntity(codec.encodeEntity(new Shape()));
  back.w = 3;
  assert.strictEqual(back.area, 9, 'the getter is not shadowed');
  assert.deepStrictEqual(Object.keys(back), ['w']);
});

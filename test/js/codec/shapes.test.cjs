'use strict';
/*
 * Shapes (decode.cjs): the per-class builders that decode instances once a
 * class's field names are known. Every test decodes more than once, so the
 * later decodes go through the shape the first one made, and checks the
 * result is what the generic field-by-field rebuild gives: the same
 * prototype, own data properties in the same order, no setter run, the same
 * errors with the same paths, whatever order or number of fields a document
 * holds. In every format.
 */
const { test } = require('node:test');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { assert, haveWasm, sameGraph, throwsCode, inspectedCodec } = require('../helpers.cjs');
const { formats } = require('../fixtures.cjs');
const { SHAPE_AFTER, SHAPE_RETRY, SHAPE_MAX_MISSES } = require('../../../js/internal.cjs').shapes;

const skip = haveWasm ? false : 'build/darmok.wasm is not built (DARMOK_JS_ONLY=1)';


/* fn() run until a class met once per call has its shape; the last result. */
function primed(fn) {
  let out;
  for (let i = 0; i < SHAPE_AFTER; i++) out = fn();
  return out;
}

/* An instance of Class with exactly these own fields, in this order. */
function make(Class, fields) {
  return Object.assign(Object.create(Class.prototype), fields);
}

/* Own property names and descriptors: order and data-ness, not just values. */
function ownDescriptors(obj) {
  return Reflect.ownKeys(obj).map((k) => [k, Object.getOwnPropertyDescriptor(obj, k)]);
}

for (const format of formats) {
  test(`${format}: the second decode of a class builds through its shape, with the same result`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class Point {
      constructor(x, y) { this.x = x; this.y = y; }
      norm() { return Math.hypot(this.x, this.y); }
    }
    c.serializable(Point);
    const value = [new Point(3, 4), new Point(-0, 'y'), { p: new Point(1, [new Point(5, 12)]) }];
    const doc = c.encodeEntity(value);
    const one = c.encodeEntity(new Point(1, 2));
    for (let i = 1; i < SHAPE_AFTER; i++) c.decodeEntity(one);
    assert.strictEqual(registry.planByKey('Point').decodeShape, null, 'no shape before SHAPE_AFTER instances');
    const first = c.decodeEntity(doc);
    const shape = registry.planByKey('Point').decodeShape;
    assert.strictEqual(typeof shape.build, 'function', 'the SHAPE_AFTER-th instance made the shape');
    assert.deepStrictEqual(shape.keys, ['x', 'y']);
    for (let round = 0; round < 3; round++) {
      const again = round === 0 ? first : c.decodeEntity(doc);
      sameGraph(again, value);
      assert.strictEqual(again[0].norm(), 5);
      assert.ok(again[2].p instanceof Point);
      assert.deepStrictEqual(ownDescriptors(again[0]), ownDescriptors(value[0]));
      assert.strictEqual(again[0].constructor, Point);
    }
    assert.strictEqual(registry.planByKey('Point').decodeShape, shape, 'the same shape serves every decode');
  });

  test(`${format}: instances whose fields leave the shape (order, fewer, more, repeated) decode exactly`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Rec {}
    c.serializable(Rec);
    primed(() => c.decodeEntity(c.encodeEntity(make(Rec, { a: 1, b: 2, c: 3 })))); // the shape: a, b, c
    const cases = [
      make(Rec, { a: 1, b: 2, c: 3 }),
      make(Rec, { b: 2, a: 1, c: 3 }), // leaves at field 0
      make(Rec, { a: 1, c: 3, b: 2 }), // leaves at field 1, after a was set
      make(Rec, { a: 1, b: 2 }), // one fewer
      make(Rec, { a: 1, b: 2, c: 3, d: 4 }), // one more
      make(Rec, { a: 1, b: 2, d: 3 }), // same count, last differs
      make(Rec, {}),
      make(Rec, { 10: 'ten', a: 'x', 2: 'two' }), // integer keys first
      make(Rec, { ab: 1, b: 2, c: 3 }), // a key the shape's key starts (its bytes match but its header)
      make(Rec, { a: 1, b: 2, cc: 3 }),
      make(Rec, { '': 1, b: 2, c: 3 }),
      make(Rec, { A: 1, b: 2, c: 3 }),
      make(Rec, { a: 1, b: 2, 'c\u00e9': 3 })
    ];
    for (const value of cases) {
      const got = c.decodeEntity(c.encodeEntity(value));
      sameGraph(got, value);
      assert.deepStrictEqual(ownDescriptors(got), ownDescriptors(value), JSON.stringify(value));
    }
  });

  test(`${format}: a setter added to the prototype after the shape was made is never run`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Item {
      constructor(name, qty) { this.name = name; this.qty = qty; }
    }
    c.serializable(Item);
    const doc = c.encodeEntity([new Item('a', 1), new Item('b', 2)]);
    primed(() => c.decodeEntity(doc)); // the shape: name, qty
    let calls = 0;
    Object.defineProperty(Item.prototype, 'qty', {
      get() { return 'from the prototype'; },
      set() { calls++; },
      configurable: true
    });
    try {
      const got = c.decodeEntity(doc);
      assert.strictEqual(calls, 0, 'the setter ran');
      assert.deepStrictEqual(Object.getOwnPropertyDescriptor(got[1], 'qty'),
        { value: 2, writable: true, enumerable: true, configurable: true });
      assert.deepStrictEqual(Object.keys(got[1]), ['name', 'qty']);
    } finally {
      delete Item.prototype.qty;
    }
    // Once the accessor is gone, the shape builds again.
    const got = c.decodeEntity(doc);
    assert.strictEqual(got[0].qty, 1);
    assert.strictEqual(calls, 0);
  });

  test(`${format}: a setter added after thousands of decodes (the chain check optimized) is never run`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Hot {
      constructor(a, b) { this.a = a; this.zz_late = b; }
    }
    c.serializable(Hot);
    const doc = c.encodeEntity([new Hot(1, 2), new Hot(3, 4)]);
    for (let i = 0; i < 3000; i++) c.decodeEntity(doc);
    for (const target of [Hot.prototype, Object.prototype]) {
      let calls = 0;
      Object.defineProperty(target, 'zz_late', { get() { return 'chain'; }, set() { calls++; }, configurable: true });
      try {
        const got = c.decodeEntity(doc);
        assert.strictEqual(calls, 0, 'the setter ran');
        assert.deepStrictEqual(Object.getOwnPropertyDescriptor(got[1], 'zz_late'),
          { value: 4, writable: true, enumerable: true, configurable: true });
      } finally {
        delete target.zz_late;
      }
      assert.strictEqual(c.decodeEntity(doc)[0].zz_late, 2);
    }
  });

  test(`${format}: a setter on the chain for any one key of a shape is never run`, { skip }, () => {
    const { c } = inspectedCodec(format);
    const keys = ['a', '0', 'a long key, not an identifier: "quoted" \\ \u2028', 'b', '$c', 'z'];
    class Wide {
      constructor(i) { for (const k of keys) this[k] = `${k}${i}`; }
    }
    c.serializable(Wide);
    const doc = c.encodeEntity([new Wide(1), new Wide(2)]);
    for (let i = 0; i < 2000; i++) c.decodeEntity(doc);
    for (const key of Object.keys(new Wide(0))) {
      let calls = 0;
      Object.defineProperty(Wide.prototype, key, { get() { return 'chain'; }, set() { calls++; }, configurable: true });
      try {
        const got = c.decodeEntity(doc);
        assert.strictEqual(calls, 0, `the setter of ${JSON.stringify(key)} ran`);
        assert.deepStrictEqual(Object.getOwnPropertyDescriptor(got[1], key),
          { value: `${key}2`, writable: true, enumerable: true, configurable: true }, key);
      } finally {
        delete Wide.prototype[key];
      }
    }
  });

  test(`${format}: a setter that a class hook adds in the middle of a decode is never run`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Box {
      constructor(v) { this.v = v; }
    }
    c.serializable(Box);
    let calls = 0;
    class Legacy {}
    // Version 2 migrates version 1's bytes; the step is user code that
    // puts an accessor on Box's prototype.
    c.serializable(Legacy, {
      version: 2,
      migrate: {
        1: (d) => {
          Object.defineProperty(Box.prototype, 'v', { get() { return 'proto'; }, set() { calls++; }, configurable: true });
          return d;
        }
      }
    });
    const old = inspectedCodec(format);
    class LegacyV1 {}
    class BoxThen {
      constructor(v) { this.v = v; }
    }
    old.c.serializable(LegacyV1, { key: 'Legacy' });
    old.c.serializable(BoxThen, { key: 'Box' });
    const doc = old.c.encodeEntity([new BoxThen(1), make(LegacyV1, { n: 1 }), new BoxThen(2)]);
    primed(() => c.decodeEntity(c.encodeEntity([new Box(0)]))); // Box's shape exists
    try {
      const got = c.decodeEntity(doc);
      assert.strictEqual(calls, 0, 'the setter ran');
      assert.ok(got[1] instanceof Legacy);
      assert.deepStrictEqual(Object.getOwnPropertyDescriptor(got[2], 'v'),
        { value: 2, writable: true, enumerable: true, configurable: true });
      assert.strictEqual(Object.getOwnPropertyDescriptor(got[0], 'v').value, 1);
    } finally {
      delete Box.prototype.v;
    }
  });

  test(`${format}: an error inside a field built by a shape has the field's path`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Holder {}
    c.serializable(Holder);
    const good = c.encodeEntity(make(Holder, { first: 1, inner: make(Holder, { first: 2, inner: null }) }));
    primed(() => c.decodeEntity(good)); // the shape: first, inner
    // An unknown class key inside the second field, two levels down.
    const { c: other } = inspectedCodec(format);
    class Stranger {}
    other.serializable(Holder);
    other.serializable(Stranger);
    const bad = other.encodeEntity(make(Holder, { first: 1, inner: make(Holder, { first: 2, inner: new Stranger() }) }));
    throwsCode(() => c.decodeEntity(bad), 'ERR_UNKNOWN_CLASS', (err) => assert.strictEqual(err.path, '$.inner.inner'));
    // The same from the generic loop (a document whose fields left the shape).
    const bad2 = other.encodeEntity(make(Holder, { inner: make(Holder, { first: 2, inner: new Stranger() }), first: 1 }));
    throwsCode(() => c.decodeEntity(bad2), 'ERR_UNKNOWN_CLASS', (err) => assert.strictEqual(err.path, '$.inner.inner'));
  });

  test(`${format}: keys that are not identifiers make a working shape`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class Odd {}
    c.serializable(Odd);
    const keys = ['"];globalThis.pwned=1;//', "'", '\\', '\u2028', '\ud800', '${x}', '`', 'a b', '', 'constructor2', '0x'];
    const fields = {};
    keys.forEach((k, i) => { fields[k] = i; });
    const value = make(Odd, fields);
    const doc = c.encodeEntity(value);
    primed(() => c.decodeEntity(doc));
    assert.ok(registry.planByKey('Odd').decodeShape.build, 'a shape was made');
    const got = c.decodeEntity(doc);
    assert.strictEqual(globalThis.pwned, undefined);
    sameGraph(got, value);
    assert.deepStrictEqual(Object.keys(got), Object.keys(value));
  });

  test(`${format}: a key on the prototype chain (__proto__, toString, a method) keeps the instance on the generic path`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class Named {
      label() { return 'method'; }
    }
    c.serializable(Named);
    const value = make(Named, { a: 1, toString: 'own', label: 'own label' });
    Object.defineProperty(value, '__proto__', { value: 'own proto key', enumerable: true, writable: true, configurable: true });
    const doc = c.encodeEntity(value);
    // Past SHAPE_AFTER the class has a shape of these keys, which never
    // fits (they are on the chain): each instance stays generic, and the
    // shape is dropped after SHAPE_MAX_MISSES decodes.
    for (let round = 0; round < SHAPE_AFTER + SHAPE_MAX_MISSES + 2; round++) {
      const got = c.decodeEntity(doc);
      assert.strictEqual(Object.getPrototypeOf(got), Named.prototype);
      assert.deepStrictEqual(ownDescriptors(got), ownDescriptors(value));
      assert.strictEqual(Named.prototype.label(), 'method');
    }
    assert.strictEqual(registry.planByKey('Named').decodeShape, null, 'a shape that never fits is dropped');
  });

  test(`${format}: a class hook that runs inside a field of a shaped instance: the later fields are set as the generic loop sets them`, { skip }, () => {
    for (const how of ['setter', 'read-only', 'Object.prototype setter']) {
      const { c } = inspectedCodec(format);
      class A {}
      class Old {}
      const log = [];
      c.serializable(A);
      c.serializable(Old, {
        version: 2,
        migrate: {
          1: (d) => {
            if (how === 'setter') Object.defineProperty(A.prototype, 'b', { set(v) { log.push(v); }, configurable: true });
            if (how === 'read-only') Object.defineProperty(A.prototype, 'b', { value: 'default', writable: false, configurable: true });
            if (how === 'Object.prototype setter') Object.defineProperty(Object.prototype, 'b', { set(v) { log.push(v); }, configurable: true });
            return d;
          }
        }
      });
      const old = inspectedCodec(format);
      class OldV1 {}
      class AThen {}
      old.c.serializable(OldV1, { key: 'Old' });
      old.c.serializable(AThen, { key: 'A' });
      primed(() => c.decodeEntity(c.encodeEntity(make(A, { a: 1, b: 2 })))); // A's shape: a, b
      const doc = old.c.encodeEntity(make(AThen, { a: make(OldV1, { x: 1 }), b: 42 }));
      try {
        const got = c.decodeEntity(doc);
        assert.deepStrictEqual(log, [], `${how}: a setter ran`);
        assert.ok(got.a instanceof Old);
        assert.deepStrictEqual(Object.getOwnPropertyDescriptor(got, 'b'),
          { value: 42, writable: true, enumerable: true, configurable: true }, how);
      } finally {
        delete A.prototype.b;
        delete Object.prototype.b;
      }
    }
  });

  test(`${format}: after an instance leaves its shape, a later key with a setter on the chain is defined, not assigned`, { skip }, () => {
    const { c } = inspectedCodec(format);
    let calls = 0;
    class Acc {
      set c(v) { calls++; }
      get c() { return 'proto'; }
    }
    c.serializable(Acc);
    primed(() => c.decodeEntity(c.encodeEntity(make(Acc, { a: 1, b: 2 })))); // the shape: a, b
    const value = make(Acc, { b: 2 }); // leaves the shape at field 0
    Object.defineProperty(value, 'c', { value: 3, enumerable: true, writable: true, configurable: true });
    Object.defineProperty(value, '__proto__', { value: 'own', enumerable: true, writable: true, configurable: true });
    const got = c.decodeEntity(c.encodeEntity(value));
    assert.strictEqual(calls, 0);
    assert.strictEqual(Object.getPrototypeOf(got), Acc.prototype);
    assert.deepStrictEqual(ownDescriptors(got), ownDescriptors(value));
  });

  test(`${format}: a class whose SHAPE_AFTER-th instance can have no shape gets one later`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class Empty {}
    c.serializable(Empty);
    const doc = c.encodeEntity(Array.from({ length: SHAPE_AFTER }, () => make(Empty, {})));
    c.decodeEntity(doc);
    assert.strictEqual(registry.planByKey('Empty').decodeShape, null);
    const full = Array.from({ length: SHAPE_RETRY + 1 }, (_, i) => make(Empty, { i }));
    sameGraph(c.decodeEntity(c.encodeEntity(full)), full);
    assert.deepStrictEqual(registry.planByKey('Empty').decodeShape.keys, ['i']);
    assert.deepStrictEqual(registry.planByKey('Empty').encodeShape.keys, ['i']);
  });

  test(`${format}: a decoder kept for the next call forgets which keys Object.prototype had`, { skip }, () => {
    const { c } = inspectedCodec(format);
    const doc = c.encodeEntity({ late: 1, other: { late: 2 } });
    c.decodeEntity(doc); // 'late' is not on Object.prototype now
    const log = [];
    Object.defineProperty(Object.prototype, 'late', { set(v) { log.push(v); }, configurable: true });
    try {
      const got = c.decodeEntity(doc);
      assert.deepStrictEqual(log, []);
      assert.deepStrictEqual(Object.getOwnPropertyDescriptor(got, 'late'),
        { value: 1, writable: true, enumerable: true, configurable: true });
    } finally {
      delete Object.prototype.late;
    }
  });

  test(`${format}: encoding an instance past maxDepth fails before its keys are asked for`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Box { constructor(inner) { this.inner = inner; } }
    c.serializable(Box);
    primed(() => c.encodeEntity(new Box(null)));
    const trap = new Proxy(new Box(null), { ownKeys() { throw new Error('ownKeys ran'); } });
    throwsCode(() => c.encodeEntity(new Box(new Box(trap)), { maxDepth: 2 }), 'ERR_DEPTH',
      (err) => assert.strictEqual(err.path, '$.inner.inner'));
  });

  test(`${format}: a class whose instances keep leaving its shape learns the new one`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class Moving {}
    c.serializable(Moving);
    primed(() => c.decodeEntity(c.encodeEntity(make(Moving, { old: 1, order: 2 }))));
    const first = registry.planByKey('Moving').decodeShape;
    assert.deepStrictEqual(first.keys, ['old', 'order']);
    const many = [];
    // dropped after SHAPE_MAX_MISSES, made again SHAPE_RETRY instances later
    for (let i = 0; i < SHAPE_MAX_MISSES + SHAPE_RETRY + 10; i++) many.push(make(Moving, { next: i, order: -i }));
    const got = c.decodeEntity(c.encodeEntity(many));
    sameGraph(got, many);
    const now = registry.planByKey('Moving').decodeShape;
    assert.notStrictEqual(now, first);
    assert.deepStrictEqual(now.keys, ['next', 'order']);
  });
}

/*
 * Encode shapes. The reference is the generic loop: the same value encoded
 * with every class's encode shape set to false must give the same bytes.
 */
function withoutEncodeShapes(registry, keys, fn) {
  const plans = keys.map((k) => registry.planByKey(k));
  const saved = plans.map((p) => p.encodeShape);
  for (const p of plans) p.encodeShape = false;
  try {
    return fn();
  } finally {
    plans.forEach((p, i) => { p.encodeShape = saved[i]; });
  }
}

function sameBytes(a, b, what) {
  assert.ok(Buffer.from(a).equals(Buffer.from(b)), `${what}: ${Buffer.from(a).toString('hex').slice(0, 200)} vs ${Buffer.from(b).toString('hex').slice(0, 200)}`);
}

for (const format of formats) {
  test(`${format}: the encode shape writes the bytes the generic loop writes`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class Doc {
      constructor(i) {
        this.id = i;
        this.title = `t${i}`;
        this.когда = new Date(1e12 + i); // a key that is not ASCII
        this.a_key_longer_than_twenty_four_bytes = [i, -0, 1.5, null, undefined];
        this.nested = i > 0 ? new Doc(i - 1) : null;
      }
    }
    c.serializable(Doc, { key: 'Doc ключ' });
    const value = [new Doc(3), new Doc(1)];
    const first = primed(() => c.encodeEntity(value));
    const shape = registry.planByKey('Doc ключ').encodeShape;
    assert.strictEqual(typeof shape.write, 'function', 'the shape is made');
    assert.deepStrictEqual(shape.keys, Object.keys(value[0]));
    const shaped = c.encodeEntity(value);
    sameBytes(shaped, first, 'second encode');
    sameBytes(shaped, withoutEncodeShapes(registry, ['Doc ключ'], () => c.encodeEntity(value)), 'generic');
    sameGraph(c.decodeEntity(shaped), value);
  });

  test(`${format}: instances whose keys differ from the encode shape, skipped and accessor fields`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class Rec {}
    c.serializable(Rec);
    primed(() => c.encodeEntity(make(Rec, { a: 1, b: 2, c: 3 }))); // the shape: a, b, c
    const withAccessor = make(Rec, { a: 1, c: 3 });
    let reads = 0;
    Object.defineProperty(withAccessor, 'b', { get() { reads++; return 'got'; }, enumerable: true, configurable: true });
    const sym = Symbol('s');
    const cases = [
      make(Rec, { b: 2, a: 1, c: 3 }),
      make(Rec, { a: 1, b: 2 }),
      make(Rec, { a: 1, b: 2, c: 3, d: 4 }),
      make(Rec, { a: 1, b: () => 0, c: 3 }), // a function field is skipped: 2 fields written
      make(Rec, { a: sym, b: 2, c: () => 0 }),
      make(Rec, { a: undefined, b: null, c: 0 }),
      withAccessor,
      make(Rec, { 1: 'x', a: 1, b: 2 })
    ];
    for (const value of cases) {
      const shaped = c.encodeEntity([value, value, make(Rec, { a: value, b: 0, c: '' })]);
      const generic = withoutEncodeShapes(registry, ['Rec'], () => c.encodeEntity([value, value, make(Rec, { a: value, b: 0, c: '' })]));
      sameBytes(shaped, generic, Object.keys(value).join());
    }
    assert.strictEqual(reads, 2, 'the getter ran once per encode, as the generic loop runs it');
    assert.strictEqual(registry.planByKey('Rec').encodeShape.keys.join(), 'a,b,c');
    // Enumerable keys of the prototype chain are not the instance's: not
    // written by either path, also when one has a shape key's name (c), or
    // is a getter with one (not run).
    let got = 0;
    const inherited = [
      { value: 'inherited', enumerable: true, writable: true, configurable: true },
      { get() { got++; return 1; }, enumerable: true, configurable: true }
    ];
    for (const desc of inherited) {
      Object.defineProperty(Rec.prototype, 'c', desc);
      try {
        const own = desc.get ? [] : [make(Rec, { a: 1, b: 2, c: 'own' })];
        for (const value of [make(Rec, { a: 1, b: 2 }), make(Rec, { b: 2, a: 1 }), ...own]) {
          const doc = [value, make(Rec, { a: 0, b: 0 })];
          const shaped = c.encodeEntity(doc);
          sameBytes(shaped, withoutEncodeShapes(registry, ['Rec'], () => c.encodeEntity(doc)), Object.keys(value).join());
          const back = c.decodeEntity(shaped);
          assert.deepStrictEqual(back.map((x) => Object.keys(x)), [Object.keys(value), ['a', 'b']]);
        }
      } finally {
        delete Rec.prototype.c;
      }
    }
    assert.strictEqual(got, 0, 'the inherited getter never ran');
  });

  test(`${format}: an ES5-style class with enumerable prototype methods keeps its encode shape`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    function Old(a, b) {
      this.a = a;
      this.b = b;
    }
    Old.prototype.sum = function sum() { return this.a + this.b; }; // enumerable
    Old.prototype.label = 'old'; // enumerable data
    c.serializable(Old);
    primed(() => c.encodeEntity(new Old(1, 2)));
    const shape = registry.planByKey('Old').encodeShape;
    assert.strictEqual(shape.keys.join(), 'a,b');
    // The shape's keys, then only inherited ones: written by the shape.
    const many = Array.from({ length: 3 * SHAPE_MAX_MISSES }, (_, i) => new Old(i, -i));
    const shaped = c.encodeEntity(many);
    assert.strictEqual(shape.misses, 0, 'every instance went through the shape');
    assert.strictEqual(registry.planByKey('Old').encodeShape, shape);
    sameBytes(shaped, withoutEncodeShapes(registry, ['Old'], () => c.encodeEntity(many)), 'a,b');
    // One own key more, or an own key named like an inherited one: the
    // generic path, own keys only.
    const extra = Object.assign(new Old(1, 2), { d: 4 });
    const own = Object.assign(new Old(1, 2), { label: 'mine' });
    for (const value of [extra, own]) {
      const doc = [value, new Old(0, 0)];
      const bytes = c.encodeEntity(doc);
      sameBytes(bytes, withoutEncodeShapes(registry, ['Old'], () => c.encodeEntity(doc)), Object.keys(value).join());
      const back = c.decodeEntity(bytes);
      assert.deepStrictEqual(back.map((x) => Object.keys(x)), [Object.keys(value), ['a', 'b']]);
    }
  });

  test(`${format}: Proxies as instances and on the prototype chain: the bytes of the generic loop`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    // A Proxy's ownKeys may list a key it does not have, named like an
    // inherited enumerable one, among its own keys, or an own key after an
    // inherited one.
    class A {}
    A.prototype.z = 'inherited';
    A.prototype.q = 'inherited';
    c.serializable(A);
    primed(() => c.encodeEntity(make(A, { x: 1, z: 'own', y: 2 }))); // shape x, z, y
    const proxies = [
      new Proxy(make(A, { x: 1, y: 2 }), { ownKeys: () => ['x', 'z', 'y'] }),
      new Proxy(make(A, { x: 1, z: 0, y: 2, w: 'own' }), { ownKeys: () => ['x', 'z', 'y', 'q', 'w'] }),
      new Proxy(make(A, { x: 1, z: 0, y: 2 }), {}) // faithful: the shape's keys
    ];
    for (const value of proxies) {
      const doc = [value, make(A, { x: 0, z: 0, y: 0 })];
      const bytes = c.encodeEntity(doc);
      sameBytes(bytes, withoutEncodeShapes(registry, ['A'], () => c.encodeEntity(doc)), Object.keys(value).join());
      assert.deepStrictEqual(Object.keys(c.decodeEntity(bytes)[0]), Object.keys(value));
    }
    // A class whose chain has enumerable keys is matched with Object.keys,
    // which never asks the chain: a Proxy above its prototype sees no trap
    // call per instance, and one whose traps throw does not stop the encode.
    for (const throws of [false, true]) {
      let calls = 0;
      const top = new Proxy({}, {
        ownKeys() {
          calls++;
          if (throws) throw new Error('ownKeys of the prototype chain');
          return [];
        }
      });
      function Old(a) { this.a = a; }
      Old.prototype = Object.create(top);
      Old.prototype.method = function method() { return this.a; }; // enumerable
      const { c: c2 } = inspectedCodec(format);
      c2.serializable(Old, { key: `Old${throws}` });
      primed(() => c2.encodeEntity(new Old(1)));
      const before = calls;
      const many = Array.from({ length: 50 }, (_, i) => new Old(i));
      const back = c2.decodeEntity(c2.encodeEntity(many));
      assert.strictEqual(calls, before, 'no trap ran for the instances');
      assert.deepStrictEqual(back.map((x) => x.a), many.map((x) => x.a));
    }
  });

  test(`${format}: errors inside an encode shape: strict mode, depth, a throwing getter, with their paths`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Node2 {
      constructor(v, next) { this.v = v; this.next = next; }
    }
    c.serializable(Node2);
    primed(() => c.encodeEntity(new Node2(1, null))); // the shape: v, next
    throwsCode(() => c.encodeEntity(new Node2(1, new Node2(() => 0, null)), { strict: true }), 'ERR_UNSUPPORTED_TYPE',
      (err) => assert.strictEqual(err.path, '$.next.v'));
    let chain = null;
    for (let i = 0; i < 10; i++) chain = new Node2(i, chain);
    // Found by the walk (with the path), not only by the core after it.
    throwsCode(() => c.encodeEntity(chain, { maxDepth: 5 }), 'ERR_DEPTH',
      (err) => assert.strictEqual(err.path, '$.next.next.next.next.next'));
    assert.ok(c.encodeEntity(chain, { maxDepth: 10 }));
    const bad = new Node2(1, null);
    Object.defineProperty(bad, 'next', { get() { throw new TypeError('no next'); }, enumerable: true });
    assert.throws(() => c.encodeEntity(new Node2(0, bad)), (err) => err instanceof TypeError && err.message === 'no next');
  });

  test(`${format}: classes written through fields, exclude or toData have no encode shape`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class A { constructor() { this.x = 1; this.y = 2; } }
    class B { constructor() { this.x = 1; this.y = 2; } }
    class C { constructor() { this.x = 1; this.y = 2; } }
    c.serializable(A, { fields: ['y', 'x'] });
    c.serializable(B, { exclude: ['y'] });
    c.serializable(C, { toData: (v) => ({ sum: v.x + v.y }), fromData: (d) => Object.assign(new C(), d) });
    for (let i = 0; i < 3; i++) c.encodeEntity([new A(), new B(), new C()]);
    for (const k of ['A', 'B', 'C']) assert.strictEqual(registry.planByKey(k).encodeShape, null, k);
    const back = c.decodeEntity(c.encodeEntity([new A(), new B()]));
    assert.deepStrictEqual(Object.keys(back[0]), ['y', 'x']);
    assert.deepStrictEqual(Object.keys(back[1]), ['x']);
  });

  test(`${format}: a class whose instances keep leaving its encode shape learns the new one; long keys have none`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class Moving {}
    c.serializable(Moving);
    primed(() => c.encodeEntity(make(Moving, { old: 1 })));
    assert.deepStrictEqual(registry.planByKey('Moving').encodeShape.keys, ['old']);
    const many = [];
    for (let i = 0; i < SHAPE_MAX_MISSES + SHAPE_RETRY + 10; i++) many.push(make(Moving, { next: i }));
    c.encodeEntity(many);
    assert.deepStrictEqual(registry.planByKey('Moving').encodeShape.keys, ['next']);
    sameGraph(c.decodeEntity(c.encodeEntity(many)), many);
    class Long {}
    c.serializable(Long);
    const long = make(Long, { ['k'.repeat(300)]: 1 });
    primed(() => c.encodeEntity(long));
    // no shape for it, and the class tries again SHAPE_RETRY instances later
    assert.strictEqual(registry.planByKey('Long').encodeShape, null);
    assert.strictEqual(registry.planByKey('Long').encodeSeen, SHAPE_AFTER - SHAPE_RETRY);
    sameGraph(c.decodeEntity(c.encodeEntity(long)), long);
  });
}

test('without code generation (--disallow-code-generation-from-strings) classes decode field by field', { skip }, () => {
  const script = `
    const assert = require('node:assert/strict');
    const darmok = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'index.cjs'))});
    const protobuf = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'protobuf.cjs'))});
    assert.throws(() => new Function('return 1'), EvalError);
    class P { constructor(x, y) { this.x = x; this.y = y; } sum() { return this.x + this.y; } }
    darmok.serializable(P, { key: 'P' }); // a key given: no DARMOK_MINIFIED_KEY on stderr
    for (const codec of [darmok, protobuf]) {
      const doc = codec.encodeEntity([new P(1, 2), new P(3, 4)]);
      for (let i = 0; i < 3; i++) {
        const got = codec.decodeEntity(doc);
        assert.ok(got[1] instanceof P);
        assert.strictEqual(got[1].sum(), 7);
        assert.deepStrictEqual(Object.keys(got[0]), ['x', 'y']);
        assert.ok(Buffer.from(codec.encodeEntity([new P(1, 2), new P(3, 4)])).equals(Buffer.from(doc)));
      }
    }
    const { defaultRegistry } = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'internal.cjs'))});
    assert.strictEqual(defaultRegistry.planByKey('P').decodeShape, false);
    assert.strictEqual(defaultRegistry.planByKey('P').encodeShape, false);
    console.log('ok');
  `;
  const run = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '-e', script], { encoding: 'utf8' });
  assert.strictEqual(run.stderr, '');
  assert.strictEqual(run.stdout.trim(), 'ok');
  assert.strictEqual(run.status, 0);
});

/*
 * Hidden classes, seen through V8's own %HaveSameMap in a child process
 * (--allow-natives-syntax): instances made by `new` through the Proxy that
 * serializable() returns share one (each used to get a class of its own);
 * decoded instances share one, and the shape's kept instance has it too,
 * so that a full GC never frees it under the optimized code of the shape.
 */
test('instances made through serializable() and decoded instances share their hidden class', { skip }, () => {
  const script = `
    const assert = require('node:assert/strict');
    const darmok = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'index.cjs'))});
    const protobuf = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'protobuf.cjs'))});
    const { defaultRegistry } = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'internal.cjs'))});
    class Post { constructor(id, title) { this.id = id; this.title = title; } }
    const P = darmok.serializable(Post);
    const made = [new P(1, 'a'), new P(2, 'b'), new P(3, 'c')];
    assert.ok(%HaveSameMap(made[0], made[1]) && %HaveSameMap(made[1], made[2]), 'made through the Proxy');
    assert.ok(made[0] instanceof Post && made[0] instanceof P);
    class Sub extends P { constructor() { super(5, 'e'); this.extra = true; } }
    assert.ok(new Sub() instanceof Sub);
    for (const codec of [darmok, protobuf]) {
      const doc = codec.encodeEntity(made);
      // The class's first instances are decoded before it has a shape.
      for (let i = 0; i < 8; i++) codec.decodeEntity(doc);
      const a = codec.decodeEntity(doc);
      const b = codec.decodeEntity(doc);
      assert.ok(%HaveSameMap(a[1], a[2]) && %HaveSameMap(a[2], b[0]), 'decoded instances');
      const shape = defaultRegistry.planByKey('Post').decodeShape;
      assert.ok(%HaveSameMap(shape.kept, b[1]), 'the kept instance');
      assert.deepStrictEqual(Object.keys(shape.kept), ['id', 'title']);
    }
    console.log('ok');
  `;
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8' });
  assert.strictEqual(run.stderr, '');
  assert.strictEqual(run.stdout.trim(), 'ok');
});

/*
 * The decoder and the tape reader are kept from call to call (so their
 * hidden classes live, see instance.cjs `reader`); they must not keep the
 * last decoded value alive. A child with --expose-gc checks with WeakRefs.
 */
test('the kept decoder and reader hold nothing of the last decoded value', { skip }, () => {
  const script = `
    const assert = require('node:assert/strict');
    const darmok = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'index.cjs'))});
    const protobuf = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'protobuf.cjs'))});
    class Item { constructor(i) { this.i = i; this.tags = ['x' + i]; this.when = new Date(i); } }
    darmok.serializable(Item);
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    // Not in the async function: its suspended frame would keep the value.
    function decodeAndForget(codec, doc) {
      const refs = [];
      for (let round = 0; round < 3; round++) {
        const v = codec.decodeEntity(doc);
        refs.push(new WeakRef(v), new WeakRef(v.items[49]), new WeakRef(v.m));
      }
      return refs;
    }
    (async () => {
      for (const codec of [darmok, protobuf]) {
        const doc = codec.encodeEntity({ items: Array.from({ length: 50 }, (_, i) => new Item(i)), m: new Map([[1, {}]]) });
        const refs = decodeAndForget(codec, doc);
        await tick();
        globalThis.gc();
        await tick();
        globalThis.gc();
        assert.deepStrictEqual(refs.map((r) => r.deref() === undefined), refs.map(() => true));
      }
      console.log('ok');
    })().catch((err) => { console.error(err); process.exit(1); });
  `;
  const run = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  assert.strictEqual(run.stderr, '');
  assert.strictEqual(run.stdout.trim(), 'ok');
});

'use strict';
/*
 * The public API: the three forms of serializable(), subclasses, the
 * tanagra README scenarios, decodeEntity(blob, Class), init().
 * roundTrip() goes through the real core when it is built, else through
 * the tape alone, so most of this runs either way.
 */
const { test } = require('node:test');
const { assert, haveWasm, sameGraph } = require('../helpers.cjs');
const darmok = require('../../../js/index.cjs');
const { serializable, encodeEntity, decodeEntity, DarmokError, init } = darmok;
const { encodeTape } = require('../../../js/internal.cjs').encode;
const { decodeTape } = require('../../../js/internal.cjs').decode;

const wasmOnly = haveWasm ? false : 'build/darmok.wasm is not built';

function roundTrip(v, options) {
  return haveWasm ? decodeEntity(encodeEntity(v), options) : decodeTape(encodeTape(v), options);
}

/* The class key a value is encoded with (read from the tape). */
function keyOf(v) {
  const t = encodeTape(v);
  assert.strictEqual(t[0], 13, 'not an instance');
  const len = new DataView(t.buffer).getUint32(1, true) >>> 2;
  return Buffer.from(t.subarray(5, 5 + len)).toString();
}

// The tanagra README: Foo has a string, a number, an array of Bar, a Map
// of FooBar, Dates; getters, instance and static methods work after decode.
class FooBar {
  constructor(foo, bar) {
    this.foo = foo;
    this.bar = bar;
  }

  describe() {
    return `${this.foo}-${this.bar}`;
  }
}
class Bar {
  constructor(bar, baz) {
    this.bar = bar;
    this.baz = baz;
  }

  get doubled() {
    return this.bar * 2;
  }
}
class Foo {
  constructor(prop1, prop2) {
    this.prop1 = prop1;
    this.prop2 = prop2;
    this.prop3 = [new Bar(1, 'one'), new Bar(2, 'two')];
    this.prop4 = new Map([['a', new FooBar('x', 1)]]);
    this.created = new Date(Date.UTC(2021, 5, 1));
  }

  get label() {
    return `${this.prop1}:${this.prop2}`;
  }

  sum() {
    return this.prop3.reduce((s, b) => s + b.bar, 0);
  }

  static make() {
    return new Foo('made', 0);
  }
}
const ProxiedFoo = serializable(Foo, [Bar, FooBar], 'readme.Foo');

test('tanagra README: fields, nested classes, getters, methods, statics', () => {
  const foo = new ProxiedFoo('hello', 42);
  const out = roundTrip(foo);
  assert.ok(out instanceof Foo);
  assert.strictEqual(out.constructor, Foo);
  assert.strictEqual(out.label, 'hello:42');
  assert.strictEqual(out.sum(), 3);
  assert.ok(out.prop3[1] instanceof Bar);
  assert.strictEqual(out.prop3[1].doubled, 4);
  assert.strictEqual(out.prop4.get('a').describe(), 'x-1');
  assert.ok(out.created instanceof Date);
  assert.strictEqual(out.created.toISOString(), '2021-06-01T00:00:00.000Z');
  assert.strictEqual(out.constructor.make().prop1, 'made');
  assert.deepStrictEqual(out, new Foo('hello', 42));
});

test('nested classes 3 levels deep inside arrays and Maps', () => {
  class Leaf { constructor(v) { this.v = v; } get twice() { return this.v * 2; } }
  class Branch { constructor(leaves) { this.leaves = leaves; } }
  class Tree { constructor(m) { this.byName = m; } count() { return this.byName.size; } }
  serializable(Tree, { key: 'deep.Tree', nested: [Branch, Leaf] });
  const tree = new Tree(new Map([
    ['a', [new Branch([new Leaf(1), new Leaf(2)])]],
    ['b', [new Branch(new Map([[new Leaf(3), [new Leaf(4)]]]))]]
  ]));
  const out = roundTrip(tree);
  assert.strictEqual(out.count(), 2);
  assert.ok(out.byName.get('a')[0] instanceof Branch);
  assert.strictEqual(out.byName.get('a')[0].leaves[1].twice, 4);
  const [[k, v]] = out.byName.get('b')[0].leaves;
  assert.ok(k instanceof Leaf && v[0] instanceof Leaf);
  sameGraph(out, tree);
});

test('proxy form: _serializationKey is own and non-enumerable', () => {
  const foo = new ProxiedFoo('a', 1);
  assert.strictEqual(foo._serializationKey, 'readme.Foo');
  assert.strictEqual(Foo._serializationKey, 'readme.Foo');
  const d = Object.getOwnPropertyDescriptor(foo, '_serializationKey');
  assert.strictEqual(d.enumerable, false);
  assert.ok(!Object.keys(foo).includes('_serializationKey'));
  assert.ok(!JSON.stringify(foo).includes('_serializationKey'));
  assert.deepStrictEqual(foo, new Foo('a', 1));
  assert.ok(foo instanceof Foo && foo instanceof ProxiedFoo);
  assert.strictEqual(keyOf(foo), 'readme.Foo');
});

test('default key is the class name, taken at registration', () => {
  class Named { constructor() { this.x = 1; } }
  const P = serializable(Named);
  assert.strictEqual(Named._serializationKey, 'Named');
  assert.strictEqual(new P()._serializationKey, 'Named');
  Object.defineProperty(Named, 'name', { value: 'Renamed' });
  assert.strictEqual(keyOf(new Named()), 'Named');
});

test('two classes with the same name are told apart by key', () => {
  const make = () => class Same { constructor(v) { this.v = v; } };
  const A = make();
  const B = make();
  serializable(A, [], 'same.A');
  serializable(B, { key: 'same.B' });
  assert.ok(roundTrip(new A(1)) instanceof A);
  assert.ok(roundTrip(new B(1)) instanceof B);
});

test('decorator factory forms', () => {
  class D1 { constructor() { this.a = 1; } }
  assert.strictEqual(serializable()(D1), D1);
  assert.strictEqual(keyOf(new D1()), 'D1');

  class D2 {}
  serializable('deco.D2')(D2);
  assert.strictEqual(keyOf(new D2()), 'deco.D2');

  class D3Child { constructor() { this.c = true; } }
  class D3 { constructor() { this.child = new D3Child(); } }
  serializable({ key: 'deco.D3', nested: [D3Child] })(D3);
  const out = roundTrip(new D3());
  assert.ok(out instanceof D3 && out.child instanceof D3Child);
});

test('TC39 decorator (value, context)', () => {
  class T1 { constructor() { this.t = 1; } }
  const ret = serializable('tc39.T1')(T1, { kind: 'class', name: 'T1', addInitializer() {} });
  assert.strictEqual(ret, undefined);
  assert.ok(roundTrip(new T1()) instanceof T1);
  const Anon = (() => class {})();
  Object.defineProperty(Anon, 'name', { value: '' });
  serializable()(Anon, { kind: 'class', name: 'FromContext' });
  assert.strictEqual(keyOf(new Anon()), 'FromContext');
  assert.throws(() => serializable()(function m() {}, { kind: 'method', name: 'm' }),
    (e) => e instanceof DarmokError && e.code === 'ERR_UNSUPPORTED_TYPE');
});

test('subclasses: nearest registered prototype, separate registration wins, cache invalidated', () => {
  class Base { constructor() { this.b = 1; } hello() { return 'base'; } }
  serializable(Base, [], 'sub.Base');
  class Child extends Base { hello() { return 'child'; } }
  const child = new Child();
  assert.strictEqual(keyOf(child), 'sub.Base');
  assert.strictEqual(roundTrip(child).hello(), 'base');
  serializable(Child, [], 'sub.Child');
  assert.strictEqual(keyOf(child), 'sub.Child');
  const out = roundTrip(child);
  assert.ok(out instanceof Child);
  assert.strictEqual(out.hello(), 'child');
  assert.strictEqual(keyOf(Object.create(Child.prototype)), 'sub.Child');
  class GrandChild extends Child {}
  assert.strictEqual(keyOf(new GrandChild()), 'sub.Child');
});

test('a subclass constructed through a Proxy gets its own key', () => {
  class PBase {}
  const P = serializable(PBase, [], 'px.Base');
  class PChild extends P {}
  serializable(PChild, [], 'px.Child');
  assert.strictEqual(new PChild()._serializationKey, 'px.Child');
  assert.strictEqual(new P()._serializationKey, 'px.Base');
});

test('re-registering is harmless; a Proxy registers its class', () => {
  class R { constructor() { this.r = 1; } }
  const P = serializable(R, [], 'rereg.R');
  serializable(P);
  serializable(R);
  assert.strictEqual(keyOf(new R()), 'rereg.R');
  serializable(R, [], 'rereg.R2');
  assert.strictEqual(keyOf(new P()), 'rereg.R2');
});

test('falsy fields are kept', () => {
  class F { constructor() { this.zero = 0; this.empty = ''; this.no = false; this.nil = null; this.nan = NaN; } }
  serializable(F, [], 'falsy.F');
  const out = roundTrip(new F());
  assert.deepStrictEqual(out, new F());
  assert.deepStrictEqual(Object.keys(out), ['zero', 'empty', 'no', 'nil', 'nan']);
});

test('decodeEntity(blob, Class) registers Class', { skip: wasmOnly }, () => {
  class Fresh { constructor() { this.a = 1; } get twice() { return this.a * 2; } }
  const out = decodeEntity('{"$":"Fresh","a":2}', Fresh);
  assert.ok(out instanceof Fresh);
  assert.strictEqual(out.twice, 4);
  class Keyed {}
  serializable(Keyed, [], 'keyed.v1');
  assert.ok(decodeEntity('{"$":"keyed.v1"}', Keyed) instanceof Keyed);
  assert.strictEqual(encodeEntity(new Keyed()), '{"$":"keyed.v1"}');
  const viaProxy = serializable(class Px {}, [], 'px.decode');
  assert.ok(decodeEntity('{"$":"px.decode"}', viaProxy) instanceof viaProxy);
});

test('decodeEntity accepts options in second place', { skip: wasmOnly }, () => {
  const out = decodeEntity('{"$":"Nope","a":1}', { unknownClass: 'plain' });
  assert.deepStrictEqual(out, { a: 1 });
});

test('init() resolves when ready', { skip: wasmOnly }, async () => {
  await init();
  assert.strictEqual(typeof encodeEntity(1), 'string');
});

test('without the core, calls fail with a DarmokError; init(bytes) then loads it', () => {
  // A copy of js/ with no build/ beside it: the synchronous load fails.
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { execFileSync } = require('node:child_process');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-nocore-'));
  try {
    fs.cpSync(path.join(__dirname, '..', '..', '..', 'js'), path.join(dir, 'js'), { recursive: true });
    const wasmFile = path.join(__dirname, '..', '..', '..', 'build', 'darmok.wasm');
    const script = `
      const d = require(${JSON.stringify(path.join(dir, 'js', 'index.cjs'))});
      const out = [];
      try { d.encodeEntity(1); out.push('no throw'); } catch (e) { out.push(e instanceof d.DarmokError && e.code); }
      d.init().then(() => out.push('resolved'), (e) => out.push(e instanceof d.DarmokError && e.code))
        .then(() => d.init(require('fs').readFileSync(${JSON.stringify(wasmFile)})))
        .then(() => { out.push(d.decodeEntity(d.encodeEntity({ a: [1n] })).a[0] === 1n); console.log(JSON.stringify(out)); });
    `;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    assert.deepStrictEqual(out, ['ERR_NOT_READY', 'ERR_NOT_READY', true]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('json entry point exports the same functions', () => {
  const json = require('../../../js/json.cjs');
  for (const k of ['encodeEntity', 'decodeEntity', 'serializable', 'init', 'DarmokError']) {
    assert.strictEqual(json[k], darmok[k], k);
  }
});

'use strict';
/*
 * Failures: every one a DarmokError with a code (and a path where known);
 * strict mode, unknown classes, the depth guard, bad options.
 */
const { test } = require('node:test');
const { assert, haveWasm } = require('../helpers.cjs');
const { serializable, encodeEntity, decodeEntity, DarmokError } = require('../../../js/index.cjs');
const { encodeTape } = require('../../../js/internal.cjs').encode;
const { decodeTape } = require('../../../js/internal.cjs').decode;
const { registryOf } = require('../../../js/internal.cjs');

const wasmOnly = haveWasm ? false : 'build/darmok.wasm is not built';
/* Encode through the core when built; the walk (where these errors come from) is the same. */
const encode = haveWasm ? encodeEntity : encodeTape;

function throwsCode(fn, code, path) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof DarmokError, `not a DarmokError: ${err}`);
    assert.ok(err instanceof Error);
    assert.strictEqual(err.name, 'DarmokError');
    assert.strictEqual(err.code, code, err.message);
    if (path !== undefined) assert.strictEqual(err.path, path, err.message);
    return true;
  });
}

class Unregistered { constructor() { this.u = 1; } }

test('strict: functions, symbols and unsupported built-ins throw ERR_UNSUPPORTED_TYPE', () => {
  const strict = { strict: true };
  throwsCode(() => encode({ a: { f() {} } }, strict), 'ERR_UNSUPPORTED_TYPE', '$.a.f');
  throwsCode(() => encode({ bars: [0, Symbol('s')] }, strict), 'ERR_UNSUPPORTED_TYPE', '$.bars[1]');
  throwsCode(() => encode(() => 1, strict), 'ERR_UNSUPPORTED_TYPE', '$');
  throwsCode(() => encode(Symbol('top'), strict), 'ERR_UNSUPPORTED_TYPE', '$');
  throwsCode(() => encode({ w: new WeakMap() }, strict), 'ERR_UNSUPPORTED_TYPE', '$.w');
  throwsCode(() => encode([new WeakSet()], strict), 'ERR_UNSUPPORTED_TYPE', '$[0]');
  throwsCode(() => encode(Promise.resolve(1), strict), 'ERR_UNSUPPORTED_TYPE', '$');
  throwsCode(() => encode(Object(1), strict), 'ERR_UNSUPPORTED_TYPE');
  throwsCode(() => encode(Object('s'), strict), 'ERR_UNSUPPORTED_TYPE');
  throwsCode(() => encode(new Map([['k', () => 1]]), strict), 'ERR_UNSUPPORTED_TYPE', '$.$Map[0][1]');
  throwsCode(() => encode(new Set([1, Symbol.iterator]), strict), 'ERR_UNSUPPORTED_TYPE', '$.$Set[1]');
  throwsCode(() => encode({ 'odd key': [new Unregistered()] }, strict), 'ERR_UNREGISTERED_CLASS', '$["odd key"][0]');
});

test('not strict: skipped or written as JSON.stringify would', () => {
  const round = (v) => decodeTape(encodeTape(v));
  assert.deepStrictEqual(round({ a: 1, f() {}, s: Symbol('x') }), { a: 1 });
  assert.deepStrictEqual(round([() => 1, Symbol('x')]), [null, null]);
  assert.strictEqual(round(() => 1), undefined);
  assert.deepStrictEqual(round({ w: new WeakMap(), p: Promise.resolve() }), { w: {}, p: {} });
  assert.deepStrictEqual(round([Object(1), Object('s'), Object(false), Object(2n)]), [1, 's', false, 2n]);
  assert.deepStrictEqual(round(new Map([['k', () => 1], ['j', 2]])), new Map([['j', 2]]));
  const plain = round(new Unregistered());
  assert.strictEqual(Object.getPrototypeOf(plain), Object.prototype);
  assert.deepStrictEqual(plain, { u: 1 });
});

test('unknown class keys: ERR_UNKNOWN_CLASS with a path, or plain objects', () => {
  class Gone { constructor() { this.g = [1]; } }
  serializable(Gone, [], 'errors.Gone');
  const tape = encodeTape({ list: [new Gone()] });
  tape[tape.indexOf(0x47)] = 0x58; // "errors.Gone" -> "errors.Xone"
  throwsCode(() => decodeTape(tape), 'ERR_UNKNOWN_CLASS', '$.list[0]');
  const plain = decodeTape(tape, { unknownClass: 'plain' });
  assert.strictEqual(Object.getPrototypeOf(plain.list[0]), Object.prototype);
  assert.deepStrictEqual(plain.list[0], { g: [1] });
});

test('unknownClass through the core', { skip: wasmOnly }, () => {
  const text = '{"m":{"$Map":[["k",{"$":"errors.Nobody","a":1}]]}}';
  throwsCode(() => decodeEntity(text), 'ERR_UNKNOWN_CLASS', '$.m.$Map[0]');
  assert.deepStrictEqual(decodeEntity(text, null, { unknownClass: 'plain' }), { m: new Map([['k', { a: 1 }]]) });
});

function nest(depth, wrap) {
  let v = 0;
  for (let i = 0; i < depth; i++) v = wrap(v);
  return v;
}

test('depth guard: ERR_DEPTH, never a stack overflow', () => {
  for (const wrap of [(v) => [v], (v) => ({ v }), (v) => new Map([[v, v]]), (v) => new Set([v])]) {
    throwsCode(() => encode(nest(100000, wrap)), 'ERR_DEPTH');
  }
  class Node { constructor(next) { this.next = next; } }
  serializable(Node, [], 'errors.Node');
  throwsCode(() => encode(nest(100000, (v) => new Node(v))), 'ERR_DEPTH');
  const err = new Error('e');
  let e = err;
  for (let i = 0; i < 2000; i++) { e.cause = new Error('c'); e = e.cause; }
  throwsCode(() => encode(err), 'ERR_DEPTH');
});

test('depth guard: maxDepth is the deepest nesting allowed', () => {
  encode(nest(5, (v) => [v]), { maxDepth: 5 });
  throwsCode(() => encode(nest(6, (v) => [v]), { maxDepth: 5 }), 'ERR_DEPTH', '$[0][0][0][0][0]');
  encode(nest(1000, (v) => ({ v })));
  throwsCode(() => encode(nest(1001, (v) => ({ v }))), 'ERR_DEPTH');
  // Wide is not deep.
  encode(Array.from({ length: 10000 }, () => [[1]]), { maxDepth: 3 });
});

test('decode depth through the core', { skip: wasmOnly }, () => {
  decodeEntity('[[[]]]', { maxDepth: 3 });
  throwsCode(() => decodeEntity('[[[]]]', { maxDepth: 2 }), 'ERR_DEPTH');
  decodeEntity(encodeEntity(nest(1000, (v) => [v])));
});

test('bad options: ERR_INVALID_OPTION', () => {
  throwsCode(() => encodeEntity(1, { maxDepth: 0 }), 'ERR_INVALID_OPTION');
  throwsCode(() => encodeEntity(1, { maxDepth: 1.5 }), 'ERR_INVALID_OPTION');
  throwsCode(() => decodeEntity('1', null, { unknownClass: 'ignore' }), 'ERR_INVALID_OPTION');
  throwsCode(() => decodeEntity('1', null, { maxBytes: -1 }), 'ERR_INVALID_OPTION');
  throwsCode(() => decodeEntity('1', 'Foo'), 'ERR_INVALID_OPTION');
});

test('decodeEntity input types', () => {
  throwsCode(() => decodeEntity(42), 'ERR_UNSUPPORTED_TYPE');
  throwsCode(() => decodeEntity({}), haveWasm ? 'ERR_UNSUPPORTED_TYPE' : 'ERR_UNSUPPORTED_TYPE');
});

test('errors from user code pass through untouched', () => {
  const boom = new TypeError('boom');
  const v = { get bad() { throw boom; } };
  assert.throws(() => encode({ x: v }), (e) => e === boom);
});

test('parse errors carry the offset and a short excerpt', { skip: wasmOnly }, () => {
  const text = `{"padding":"${'x'.repeat(100)}", oops}`;
  assert.throws(() => decodeEntity(text), (e) => {
    assert.strictEqual(e.code, 'ERR_SYNTAX');
    assert.strictEqual(e.offset, text.indexOf('oops'));
    const quoted = e.message.match(/near (".*")$/)[1];
    assert.ok(JSON.parse(quoted).length <= 40, e.message);
    assert.ok(JSON.parse(quoted).includes('oops'), e.message);
    return true;
  });
});

test('subclasses of built-ins with internal state: registration refused, strict refuses them unregistered', () => {
  const { createRegistry, createCodec } = require('../../../js/index.cjs');
  const registry = createRegistry();
  const c = createCodec({ registry });
  class M extends Map {}
  class S extends Set {}
  class D extends Date {}
  class E extends Error {}
  class L extends Array {}
  class B extends Uint8Array {}
  for (const C of [M, S, D, E, L, B]) {
    throwsCode(() => registry.serializable(C), 'ERR_UNSUPPORTED_TYPE');
    assert.strictEqual(registryOf(registry).planByKey(C.name), null, `${C.name} is not registered`);
  }
  // Not registered: written as the built-in, its class not kept; strict says so.
  const m = new M([[1, 2]]);
  assert.deepStrictEqual([...c.decodeEntity(c.encodeEntity(m))], [[1, 2]]);
  throwsCode(() => c.encodeEntity({ m }, { strict: true }), 'ERR_UNREGISTERED_CLASS', '$.m');
  throwsCode(() => c.encodeEntity([new D(0)], { strict: true }), 'ERR_UNREGISTERED_CLASS', '$[0]');
  throwsCode(() => c.encodeEntity(new B(2), { strict: true }), 'ERR_UNREGISTERED_CLASS', '$');
  throwsCode(() => c.encodeEntity({ e: new E('x') }, { strict: true }), 'ERR_UNREGISTERED_CLASS', '$.e');
  throwsCode(() => c.encodeEntity([1, L.from([1])], { strict: true }), 'ERR_UNREGISTERED_CLASS', '$[1]');
  // Not strict: an Array subclass comes back as an array, an Error subclass as an Error.
  const back = c.decodeEntity(c.encodeEntity([L.from([1, 2]), new E('x')]));
  assert.strictEqual(Object.getPrototypeOf(back[0]), Array.prototype);
  assert.deepStrictEqual(back[0], [1, 2]);
  assert.strictEqual(Object.getPrototypeOf(back[1]), Error.prototype);
  // The built-ins themselves (and Buffer) are fine in strict mode, and so
  // are the standard Errors, which come back as themselves.
  c.encodeEntity([new Map(), new Set(), new Date(0), /x/, new Uint8Array(1), Buffer.from('a'), new ArrayBuffer(1)], { strict: true });
  const errors = [new Error('a'), new TypeError('b'), new RangeError('c'), new SyntaxError('d'),
    new ReferenceError('e'), new EvalError('f'), new URIError('g'), new AggregateError([], 'h')];
  const decoded = c.decodeEntity(c.encodeEntity(errors, { strict: true }));
  for (let i = 0; i < errors.length; i++) {
    assert.strictEqual(Object.getPrototypeOf(decoded[i]), Object.getPrototypeOf(errors[i]), errors[i].name);
  }
});

test('boxed primitives\' classes and Object itself cannot be registered', () => {
  const { createRegistry, createCodec } = require('../../../js/index.cjs');
  const registry = createRegistry();
  const c = createCodec({ registry });
  class Money extends Number { constructor(v, cur) { super(v); this.cur = cur; } }
  class Name extends String {}
  class Flag extends Boolean {}
  for (const C of [Money, Name, Flag, Number, String, Boolean, Object]) {
    throwsCode(() => registry.serializable(C), 'ERR_UNSUPPORTED_TYPE');
    assert.strictEqual(registryOf(registry).planByKey(C.name), null, `${C.name} is not registered`);
  }
  // Unregistered, a boxed value is written as its primitive, as JSON.stringify does.
  assert.strictEqual(c.decodeEntity(c.encodeEntity(new Money(12.5, 'EUR'))), 12.5);
  throwsCode(() => c.encodeEntity(new Money(1, 'EUR'), { strict: true }), 'ERR_UNSUPPORTED_TYPE', '$');
});

/*
 * A Map subclass is written from its own entries, through the built-ins:
 * an LRU cache's get() re-inserts its key, so a walk of keys() that calls
 * get() would never end (and would reorder the caller's Map).
 */
test('a Map subclass whose get() or keys() misbehave is written from its entries', () => {
  const { createRegistry, createCodec } = require('../../../js/index.cjs');
  const c = createCodec({ registry: createRegistry() });
  let calls = 0;
  class LRU extends Map {
    get(k) {
      if (++calls > 100) throw new Error('get() called over and over');
      const v = super.get(k);
      super.delete(k);
      super.set(k, v);
      return v;
    }
    keys() { throw new Error('keys() called'); }
  }
  const m = new LRU([['a', 1], ['b', { x: 2 }], [3, 'c']]);
  for (const format of ['json', 'protobuf']) {
    const fc = createCodec({ registry: createRegistry(), format });
    assert.deepStrictEqual([...fc.decodeEntity(fc.encodeEntity({ m })).m], [['a', 1], ['b', { x: 2 }], [3, 'c']]);
  }
  assert.strictEqual(c.encodeEntity(m), '{"$Map":[["a",1],["b",{"x":2}],[3,"c"]]}');
  assert.strictEqual(calls, 0, 'the subclass get() is not called');
  assert.deepStrictEqual([...Map.prototype.keys.call(m)], ['a', 'b', 3], 'the Map is not reordered');
});

test('migrate may not call darmok: ERR_REENTRANT that says so', () => {
  const { createRegistry, createCodec } = require('../../../js/index.cjs');
  const r1 = createRegistry();
  class A {}
  r1.serializable(A, { key: 'errors.Reenter' });
  const old = createCodec({ registry: r1 }).encodeEntity(Object.assign(new A(), { x: 1 }));
  const r2 = createRegistry();
  const c2 = createCodec({ registry: r2 });
  class A2 {}
  r2.serializable(A2, { key: 'errors.Reenter', version: 2, migrate: { 1: (d) => { c2.encodeEntity(d); return d; } } });
  assert.throws(() => c2.decodeEntity(old), (e) => e.code === 'ERR_REENTRANT' && /migrate or fromData/.test(e.message));
  // The core is fine afterwards.
  assert.strictEqual(c2.decodeEntity(c2.encodeEntity({ ok: 1 })).ok, 1);
});

/*
 * A Proxy of a Date, Map or Set has its target's prototype but not its
 * internal slots: the built-ins' methods threw a bare TypeError on it, and
 * a Proxy of an ArrayBuffer was written empty. As JSON.stringify writes
 * them (their own enumerable fields), and ERR_UNSUPPORTED_TYPE in strict
 * mode; never a TypeError.
 */
test('a Proxy of a built-in: written as JSON.stringify writes it, refused in strict mode', () => {
  const { encodeEntity, decodeEntity } = require('../../../js/index.cjs');
  class MyMap extends Map {}
  class MySet extends Set {}
  class MyDate extends Date {}
  const proxies = {
    map: new Proxy(new Map([[1, 2]]), {}),
    set: new Proxy(new Set([1]), {}),
    date: new Proxy(new Date(0), {}),
    sub: new Proxy(new MyMap([[1, 2]]), {}),
    subSet: new Proxy(new MySet([1]), {}),
    subDate: new Proxy(new MyDate(0), {}),
    number: new Proxy(new Number(1), {}),
    string: new Proxy(new String('s'), {}),
    boolean: new Proxy(new Boolean(true), {}),
    bigint: new Proxy(Object(1n), {}),
    regexp: new Proxy(/x/g, {}),
    buffer: new Proxy(new ArrayBuffer(2), {})
  };
  for (const [name, p] of Object.entries(proxies)) {
    const want = name === 'string' ? { 0: 's' } : {}; // its own enumerable fields, as JSON.stringify writes them
    for (const format of ['json', 'protobuf']) {
      assert.deepStrictEqual(decodeEntity(encodeEntity({ p }, { format }), { format }), { p: want }, name);
    }
    assert.throws(() => encodeEntity({ p }, { strict: true }),
      (e) => e instanceof DarmokError && /^ERR_(UNSUPPORTED_TYPE|UNREGISTERED_CLASS)$/.test(e.code) && e.path === '$.p', name);
  }
  // A Proxy whose traps hand out the target's valueOf, or one of their
  // own, still has no slot: written as JSON.stringify writes it. A real
  // boxed value's own valueOf runs, and what it throws passes through.
  const bind = { get(t, k) { const v = Reflect.get(t, k); return typeof v === 'function' ? v.bind(t) : v; } };
  const liar = { get: (t, k) => (k === 'valueOf' ? () => 'evil' : Reflect.get(t, k)) };
  assert.strictEqual(encodeEntity({ p: new Proxy(new Number(1), bind), q: new Proxy(new String('s'), liar) }),
    JSON.stringify({ p: new Proxy(new Number(1), bind), q: new Proxy(new String('s'), liar) }));
  const n = new Number(1);
  Object.defineProperty(n, 'valueOf', { value() { throw new Error('boom'); } });
  assert.throws(() => encodeEntity({ n }), /boom/);
  assert.throws(() => JSON.stringify({ n }), /boom/);
  // The real ones are untouched, and a Proxy of an object is read through.
  assert.deepStrictEqual(decodeEntity(encodeEntity([new Map([[1, 2]]), new Proxy({ a: 1 }, {})])), [new Map([[1, 2]]), { a: 1 }]);
});

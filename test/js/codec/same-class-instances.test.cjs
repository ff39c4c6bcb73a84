'use strict';
/*
 * same-class-instances.test.cjs - many instances of one class, and instances of one
 * class with differing keys: the cases any per-class fast path for decoded
 * instances must keep exact (js/codec/shapes.cjs is that fast path; its own
 * tests are in shapes.test.cjs). Every test runs in every format, each
 * with a fresh registry.
 *
 * What must hold: the same keys in
 * the same order, the same values, the prototype, identity (cycles through
 * a shaped instance), error paths, and no user code (constructor, setter,
 * getter) running during a decode, even when a prototype changes after the
 * shape was made.
 */
const { test } = require('node:test');
const { assert, haveWasm, sameGraph } = require('../helpers.cjs');
const { formats } = require('../fixtures.cjs');
const { createCodec, createRegistry } = require('../../../js/index.cjs');

const skip = haveWasm ? false : 'build/darmok.wasm is not built (DARMOK_JS_ONLY=1)';

function codec(format) {
  const registry = createRegistry();
  return { registry, ...createCodec({ format, registry }) };
}

/* Round trip of an array of Class instances, then the same graph, the same own keys in the same order at every instance. */
function roundTrip(c, value, Class) {
  const back = c.decodeEntity(c.encodeEntity(value), Class, { collection: 'array' });
  sameGraph(back, value);
  return back;
}

function keysOf(list) {
  return list.map((o) => Object.keys(o).join(','));
}

for (const format of formats) {
  test(`${format}: many instances of one shape; cycles through them keep identity`, { skip }, () => {
    const c = codec(format);
    let built = 0;
    class Node {
      constructor(id) { built++; this.id = id; this.name = `n${id}`; this.next = null; this.self = null; }
    }
    c.serializable(Node);
    const list = [];
    for (let i = 0; i < 200; i++) list.push(new Node(i));
    for (let i = 0; i < 200; i++) { list[i].next = list[(i + 1) % 200]; list[i].self = list[i]; }
    built = 0;
    for (let round = 0; round < 3; round++) {
      const back = roundTrip(c, list, Node);
      assert.strictEqual(built, 0, 'the constructor never runs');
      for (let i = 0; i < 200; i++) {
        assert.strictEqual(Object.getPrototypeOf(back[i]), Node.prototype);
        assert.strictEqual(back[i].self, back[i]);
        assert.strictEqual(back[i].next, back[(i + 1) % 200]);
        assert.deepStrictEqual(Object.keys(back[i]), ['id', 'name', 'next', 'self']);
      }
    }
  });

  test(`${format}: instances whose keys differ from the shape (order, names, count) decode exactly`, { skip }, () => {
    const c = codec(format);
    class Rec {}
    c.serializable(Rec);
    const make = (fields) => Object.assign(new Rec(), fields);
    const variants = [
      { a: 1, b: 'x', c: true },
      { b: 'x', a: 1, c: true }, // same keys, other order
      { a: 1, b: 'x', d: true }, // last key differs
      { z: 1, b: 'x', c: true }, // first key differs
      { a: 1, b: 'x' }, // fewer
      { a: 1, b: 'x', c: true, d: null }, // more
      {}, // none
      { a: undefined, b: [1, 2], c: { c: 1 } }
    ];
    // Enough of each, interleaved, that shapes are learnt, missed, dropped and learnt again.
    const list = [];
    for (let i = 0; i < 400; i++) list.push(make(variants[(i * 7) % variants.length]));
    for (let round = 0; round < 3; round++) {
      const back = roundTrip(c, list, Rec);
      assert.deepStrictEqual(keysOf(back), keysOf(list));
      for (const o of back) assert.strictEqual(Object.getPrototypeOf(o), Rec.prototype);
    }
    // Runs of one variant after another.
    const runs = [];
    for (const v of variants) for (let i = 0; i < 60; i++) runs.push(make(v));
    const back = roundTrip(c, runs, Rec);
    assert.deepStrictEqual(keysOf(back), keysOf(runs));
  });

  test(`${format}: keys that are not identifiers, and keys the shape leaves to the generic path`, { skip }, () => {
    const c = codec(format);
    class Odd {}
    c.serializable(Odd);
    const fields = {
      'a-b': 1, 'with space': 2, $x: 3, _y: 4, class: 5, 'q"uote': 6, 'back\\slash': 7,
      'new\nline': 8, ['x'.repeat(64)]: 9, ['y'.repeat(65)]: 10, 'caf\u00e9': 11, '1st': 12, 'constructor': 13,
      toString: 14, 'u\u2028v': 15
    };
    const list = [];
    for (let i = 0; i < 50; i++) list.push(Object.assign(new Odd(), fields, { i }));
    const back = roundTrip(c, list, Odd);
    assert.deepStrictEqual(keysOf(back), keysOf(list));
    for (const o of back) {
      assert.ok(Object.prototype.hasOwnProperty.call(o, 'constructor'));
      assert.strictEqual(Object.getPrototypeOf(o), Odd.prototype);
    }
    // An own "__proto__" data property stays an own property; the prototype is untouched.
    class Proto {}
    c.serializable(Proto);
    const withProto = [];
    for (let i = 0; i < 20; i++) {
      const o = new Proto();
      o.a = i;
      Object.defineProperty(o, '__proto__', { value: { evil: true }, enumerable: true, writable: true, configurable: true });
      withProto.push(o);
    }
    const back2 = c.decodeEntity(c.encodeEntity(withProto), Proto, { collection: 'array' });
    for (const o of back2) {
      assert.strictEqual(Object.getPrototypeOf(o), Proto.prototype);
      assert.deepStrictEqual(Object.keys(o), ['a', '__proto__']);
      assert.strictEqual(o.evil, undefined);
    }
  });

  test(`${format}: a setter added to the prototype after the shape was made never runs`, { skip }, () => {
    const c = codec(format);
    class Acc { constructor(v) { this.v = v; this.w = 1; } }
    c.serializable(Acc);
    const list = [];
    for (let i = 0; i < 50; i++) list.push(new Acc(i));
    const doc = c.encodeEntity(list);
    roundTrip(c, list, Acc); // the shape is made
    let calls = 0;
    Object.defineProperty(Acc.prototype, 'w', {
      get() { calls++; return 'getter'; }, set() { calls++; throw new Error('setter ran'); }, configurable: true
    });
    try {
      const back = c.decodeEntity(doc, Acc, { collection: 'array' });
      for (let i = 0; i < 50; i++) {
        const d = Object.getOwnPropertyDescriptor(back[i], 'w');
        assert.deepStrictEqual(d, { value: 1, writable: true, enumerable: true, configurable: true });
        assert.deepStrictEqual(Object.keys(back[i]), ['v', 'w']);
      }
      assert.strictEqual(calls, 0);
    } finally {
      delete Acc.prototype.w;
    }
    // Object.prototype too (prototype pollution between two decodes).
    roundTrip(c, list, Acc);
    Object.defineProperty(Object.prototype, 'v', { set() { calls++; }, get() { calls++; }, configurable: true });
    try {
      const back = c.decodeEntity(doc, Acc, { collection: 'array' });
      for (let i = 0; i < 50; i++) assert.strictEqual(Object.getOwnPropertyDescriptor(back[i], 'v').value, i);
      assert.strictEqual(calls, 0);
    } finally {
      delete Object.prototype.v;
    }
    // After the accessor is gone, decoding is right again (through whatever path).
    roundTrip(c, list, Acc);
  });

  test(`${format}: a migrate step that adds a setter mid-decode does not have it called`, { skip }, () => {
    const c = codec(format);
    const old = codec(format);
    class Item { constructor(k) { this.k = k; this.x = 0; } }
    class Wrap { constructor(item) { this.item = item; } }
    class WrapV1 { constructor(item) { this.item = item; } }
    let calls = 0;
    c.serializable(Item);
    c.serializable(Wrap, {
      version: 2,
      migrate: {
        1: (data) => {
          if (!Object.getOwnPropertyDescriptor(Item.prototype, 'x')) {
            Object.defineProperty(Item.prototype, 'x', { set() { calls++; }, get() { return 'g'; }, configurable: true });
          }
          return data;
        }
      }
    });
    old.serializable(Item);
    old.serializable(WrapV1, { key: 'Wrap' });
    const items = [];
    for (let i = 0; i < 20; i++) items.push(new Item(i));
    // Items before, a v1 Wrap whose migration adds the setter, items after.
    const value = [...items, new WrapV1(new Item(99)), ...items.map((it) => new Item(it.k + 100))];
    try {
      const back = c.decodeEntity(old.encodeEntity(value));
      assert.strictEqual(calls, 0);
      for (const o of back) {
        const it = o instanceof Wrap ? o.item : o;
        assert.strictEqual(Object.getOwnPropertyDescriptor(it, 'x').value, 0);
      }
    } finally {
      delete Item.prototype.x;
    }
  });

  test(`${format}: an error inside a shaped instance carries its path`, { skip }, () => {
    const c = codec(format);
    const other = codec(format);
    class Box { constructor(a, b) { this.a = a; this.b = b; } }
    class Unknown { constructor() { this.u = 1; } }
    c.serializable(Box);
    other.serializable(Box);
    other.serializable(Unknown);
    const list = [];
    for (let i = 0; i < 30; i++) list.push(new Box(i, [i]));
    list.push(new Box(1, [0, new Unknown()]));
    const doc = other.encodeEntity(list);
    c.decodeEntity(other.encodeEntity(list.slice(0, 30))); // the shape is made
    assert.throws(() => c.decodeEntity(doc), (err) => {
      assert.strictEqual(err.code, 'ERR_UNKNOWN_CLASS');
      assert.strictEqual(err.path, '$[30].b[1]');
      return true;
    });
  });

  test(`${format}: shapes are per registry and per plan; re-registering starts over`, { skip }, () => {
    const a = codec(format);
    const b = codec(format);
    class P { constructor() { this.x = 1; this.y = 2; } }
    class Q { constructor() { this.y = 2; this.x = 1; } }
    a.serializable(P, { key: 'K' });
    b.serializable(Q, { key: 'K' });
    const docP = a.encodeEntity([new P(), new P(), new P()]);
    const docQ = b.encodeEntity([new Q(), new Q(), new Q()]);
    for (let i = 0; i < 3; i++) {
      assert.deepStrictEqual(a.decodeEntity(docQ).map((o) => Object.keys(o).join()), ['y,x', 'y,x', 'y,x']);
      assert.deepStrictEqual(b.decodeEntity(docP).map((o) => Object.keys(o).join()), ['x,y', 'x,y', 'x,y']);
      assert.ok(a.decodeEntity(docP)[0] instanceof P);
      assert.ok(b.decodeEntity(docP)[0] instanceof Q);
    }
    a.serializable(P, { key: 'K', version: 2, migrate: { 1: (d) => ({ ...d, z: 3 }) } });
    const back = a.decodeEntity(docP);
    assert.deepStrictEqual(Object.keys(back[0]), ['x', 'y', 'z']);
  });
}

/*
 * Map entries with a string key are written (encode.cjs map()) and read
 * (decode.cjs map(): a string key, an int32 value) by paths of their own,
 * which must write and read what value() would: every kind of number, strings
 * short and long (T_STR16), non-ASCII and with lone surrogates, and skip
 * (or, strict, refuse) functions and symbols exactly as before.
 */
const EDGE_NUMBERS = [0, -0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 0.5, -2.25,
  NaN, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 53];
const EDGE_STRINGS = ['', 'x', 'caf\u00e9', 'd\ud800e', 'k'.repeat(31), 'k'.repeat(32), '\u6771'.repeat(40), 'a\udc00'.repeat(20)];

for (const format of formats) {
  test(`${format}: Maps of string keys: every number and string, other keys and values mixed in`, { skip }, () => {
    const c = codec(format);
    const m = new Map();
    EDGE_NUMBERS.forEach((n, i) => m.set(`n${i}`, n));
    EDGE_STRINGS.forEach((s, i) => { m.set(s, i); m.set(`s${i}`, s); });
    m.set('obj', { a: 1 }).set('nul', null).set('undef', undefined).set('big', 12n).set('t', true);
    m.set('date', new Date(86400000)).set('arr', [1, 'x']).set('self', m);
    m.set(7, 'a number key').set(-0, -0).set(null, 1).set(m, 'the map as a key');
    const back = c.decodeEntity(c.encodeEntity({ m }));
    sameGraph(back, { m });
    assert.ok(Object.is(back.m.get('n1'), -0));
    assert.ok(Object.is(back.m.get(0), -0), 'the -0 key is 0 in a Map; its value stays -0');
  });

  test(`${format}: Maps of string keys skip function and symbol values, or refuse them strict`, { skip }, () => {
    const c = codec(format);
    const m = new Map([['a', 1], ['f', () => 1], ['b', 'two'], ['s', Symbol('s')], ['c', 3.5], [() => 2, 4]]);
    const back = c.decodeEntity(c.encodeEntity(m));
    assert.deepStrictEqual([...back], [['a', 1], ['b', 'two'], ['c', 3.5]]);
    for (const [bad, at] of [[new Map([['a', 1], ['f', () => 1]]), '$.$Map[1][1]'],
      [new Map([['s', Symbol('s')]]), '$.$Map[0][1]'], [new Map([['a', 1], [() => 1, 2]]), '$.$Map[1][0]'],
      [new Map([['a', 1], ['o', { f: () => 1 }]]), '$.$Map[1][1].f']]) {
      assert.throws(() => c.encodeEntity(bad, { strict: true }), (err) => err.code === 'ERR_UNSUPPORTED_TYPE' && err.path === at);
    }
  });
}

/*
 * One-character ASCII strings are taken from a table (tape-reader.cjs
 * shortAscii), not made or looked up by hash: every code, as values, Map
 * keys and member keys, from the encoder's tapes and from JSON text.
 */
for (const format of formats) {
  test(`${format}: every one-character ASCII string, as a value, a Map key and a member key`, { skip }, () => {
    const c = codec(format);
    const chars = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i));
    const obj = {};
    for (const ch of chars) obj[ch] = ch;
    const value = { chars, map: new Map(chars.map((ch, i) => [ch, i])), obj, two: chars.map((ch) => ch + ch) };
    const back = c.decodeEntity(c.encodeEntity(value));
    sameGraph(back, value);
    assert.deepStrictEqual(Object.keys(back.obj), Object.keys(obj));
    if (format === 'json') {
      const text = JSON.stringify({ chars, obj });
      assert.deepStrictEqual(c.decodeEntity(text), { chars, obj });
      assert.deepStrictEqual(c.decodeEntity(Buffer.from(text)), { chars, obj });
    }
  });
}

'use strict';
/*
 * Shaping the output (docs/SHAPING.md): the class options transformKeys and
 * rename and their defaults (createRegistry, createCodec, configure), the per-call sortKeys, only and
 * except, and toPlain / fromPlain. Each in both formats, alone and
 * combined, through shapes (every class is encoded past SHAPE_AFTER
 * instances) and the generic loops.
 */
const { test } = require('node:test');
const { assert, haveWasm, sameGraph, throwsCode, xorshift, inspectedCodec, isolatedCodec } = require('../helpers.cjs');
const { defaultRegistry } = require('../../../js/internal.cjs');
const { formats, fixtures, invalid } = require('../fixtures.cjs');
const darmok = require('../../../js/index.cjs');
const { configure } = darmok;
const { SHAPE_AFTER } = require('../../../js/internal.cjs').shapes;
const { TRANSFORMS } = require('../../../js/internal.cjs').naming;
const { isoString } = require('../../../js/internal.cjs').plain;

const skip = haveWasm ? false : 'build/darmok.wasm is not built (DARMOK_JS_ONLY=1)';


/* Encode value often enough for its classes to have shapes; the last document. */
function primed(c, value, options) {
  let out;
  for (let i = 0; i <= SHAPE_AFTER; i++) out = c.encodeEntity(value, options);
  for (let i = 0; i <= SHAPE_AFTER; i++) c.decodeEntity(out);
  return out;
}

/* The JSON text of a document of either format. */
function jsonOf(c, doc) {
  return c.format === 'json' ? doc : darmok.transcode(doc, { from: 'protobuf', to: 'json' });
}

const same = (a, b) => Buffer.from(a).equals(Buffer.from(b));

test('the named transforms', () => {
  const cases = [
    ['createdAt', 'createdAt', 'created_at', 'created-at', 'CreatedAt'],
    ['created_at', 'createdAt', 'created_at', 'created-at', 'CreatedAt'],
    ['HTMLParser', 'htmlParser', 'html_parser', 'html-parser', 'HtmlParser'],
    ['userID', 'userId', 'user_id', 'user-id', 'UserId'],
    ['_id', '_id', '_id', '_id', '_Id'],
    ['$meta_data', '$metaData', '$meta_data', '$meta-data', '$MetaData'],
    ['version2Name', 'version2Name', 'version2_name', 'version2-name', 'Version2Name'],
    ['x', 'x', 'x', 'x', 'X'],
    ['0', '0', '0', '0', '0']
  ];
  for (const [name, camel, snake, kebab, pascal] of cases) {
    assert.deepStrictEqual([TRANSFORMS.camel(name), TRANSFORMS.snake(name), TRANSFORMS.kebab(name), TRANSFORMS.pascal(name)],
      [camel, snake, kebab, pascal], name);
  }
});

for (const format of formats) {
  test(`${format}: transformKeys and rename write wire names and decode to the class's own fields`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Post {
      constructor(id, createdAt, authorName) { this.postId = id; this.createdAt = createdAt; this.authorName = authorName; }
      age() { return Date.now() - this.createdAt; }
    }
    class Snake {}
    class Kebab {}
    class Pascal {}
    class Camel {}
    c.serializable(Post, { transformKeys: 'snake', rename: { postId: 'id' } });
    c.serializable(Snake, { transformKeys: 'snake' });
    c.serializable(Kebab, { transformKeys: 'kebab' });
    c.serializable(Pascal, { transformKeys: 'pascal' });
    c.serializable(Camel, { transformKeys: 'camel' });
    const post = new Post(7, new Date(0), 'Ada');
    const doc = primed(c, [post, post]);
    assert.strictEqual(jsonOf(c, doc), '[{"$":"Post","id":7,"created_at":{"$Date":"1970-01-01T00:00:00.000Z"},"author_name":"Ada"},{"$ref":1}]');
    const back = c.decodeEntity(doc);
    sameGraph(back, [post, post]);
    assert.deepStrictEqual(Object.keys(back[0]), ['postId', 'createdAt', 'authorName']);
    assert.strictEqual(typeof back[0].age, 'function');
    const each = (C) => Object.assign(Object.create(C.prototype), { userID: 1, last_seen: 2, $x: 3 });
    const value = [each(Snake), each(Kebab), each(Pascal), each(Camel)];
    const many = primed(c, value);
    assert.strictEqual(jsonOf(c, many), '[{"$":"Snake","user_id":1,"last_seen":2,"$$x":3},' +
      '{"$":"Kebab","user-id":1,"last-seen":2,"$$x":3},{"$":"Pascal","UserId":1,"LastSeen":2,"$$X":3},' +
      '{"$":"Camel","userId":1,"lastSeen":2,"$$x":3}]');
    sameGraph(c.decodeEntity(many), value);
  });

  test(`${format}: a transformKeys function is called once per field name per class`, { skip }, () => {
    const { c } = inspectedCodec(format);
    const calls = [];
    class A { constructor(i) { this.one = i; this.two = [i]; } }
    class B { constructor(i) { this.one = i; } }
    const upper = (name, classKey) => { calls.push(`${classKey}.${name}`); return name.toUpperCase(); };
    c.serializable(A, { transformKeys: upper });
    c.serializable(B, { transformKeys: upper });
    const value = Array.from({ length: 3 * SHAPE_AFTER }, (_, i) => (i % 2 ? new A(i) : new B(i)));
    for (let round = 0; round < 5; round++) sameGraph(c.decodeEntity(c.encodeEntity(value)), value);
    assert.deepStrictEqual(calls.sort(), ['A.one', 'A.two', 'B.one']);
    assert.match(jsonOf(c, c.encodeEntity(new A(1))), /^\{"\$":"A","ONE":1,"TWO":\[1\]\}$/);
  });

  test(`${format}: names that collide, or a transform that returns no string, are refused`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class A { constructor() { this.a = 1; this.b = 2; } }
    throwsCode(() => c.serializable(A, { rename: { a: 'x', b: 'x' } }), 'ERR_INVALID_OPTION');
    throwsCode(() => c.serializable(A, { transformKeys: 'shout' }), 'ERR_INVALID_OPTION');
    throwsCode(() => c.serializable(A, { rename: ['a'] }), 'ERR_INVALID_OPTION');
    c.serializable(A, { rename: { a: 'b' } });
    throwsCode(() => c.encodeEntity(new A()), 'ERR_INVALID_OPTION', (err) => assert.match(err.message, /"a" and "b"/));
    class N { constructor() { this.a = 1; } }
    c.serializable(N, { transformKeys: () => 3 });
    throwsCode(() => c.encodeEntity(new N()), 'ERR_INVALID_OPTION');
  });

  test(`${format}: subclasses inherit their superclass's names, override transformKeys and merge rename`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Base { constructor() { this.baseField = 1; this.keptName = 2; } }
    class Inherits extends Base { constructor() { super(); this.ownField = 3; } }
    class Overrides extends Base { constructor() { super(); this.ownField = 4; } }
    class OptsOut extends Base {}
    class Unregistered extends Base {}
    // Subclasses registered before the superclass: they learn its options when it comes.
    c.serializable(Inherits, { rename: { ownField: 'mine' } });
    c.serializable(Overrides, { transformKeys: 'kebab', rename: { keptName: 'keptName' } });
    c.serializable(OptsOut, { transformKeys: null });
    c.serializable(Base, { transformKeys: 'snake', rename: { baseField: 'base' } });
    const value = [new Base(), new Inherits(), new Overrides(), new OptsOut(), new Unregistered()];
    const doc = primed(c, value);
    assert.strictEqual(jsonOf(c, doc), '[{"$":"Base","base":1,"kept_name":2},' +
      '{"$":"Inherits","base":1,"kept_name":2,"mine":3},' +
      '{"$":"Overrides","base":1,"keptName":2,"own-field":4},' +
      '{"$":"OptsOut","base":1,"keptName":2},' +
      '{"$":"Base","base":1,"kept_name":2}]');
    const back = c.decodeEntity(doc);
    assert.ok(back[1] instanceof Inherits && back[2] instanceof Overrides && back[4] instanceof Base);
    assert.deepStrictEqual(back.map((x) => Object.keys(x)), [['baseField', 'keptName'], ['baseField', 'keptName', 'ownField'],
      ['baseField', 'keptName', 'ownField'], ['baseField', 'keptName'], ['baseField', 'keptName']]);
  });

  test(`${format}: createRegistry() and createCodec() set defaults for their classes, which override them`, { skip }, () => {
    const registry = darmok.createRegistry({ transformKeys: 'snake', rename: { createdBy: 'author' } });
    const viaRegistry = darmok.createCodec({ format, registry });
    const viaCodec = darmok.createCodec({ format, transformKeys: 'snake', rename: { createdBy: 'author' } });
    const plain = isolatedCodec(format);
    for (const c of [viaRegistry, viaCodec, plain]) {
      class Row { constructor(i) { this.rowId = i; this.createdBy = 'me'; } }
      class Own { constructor() { this.rowId = 1; } }
      c.serializable(Row);
      c.serializable(Own, { transformKeys: 'pascal', rename: { rowId: 'RID' } });
      const value = [new Row(1), new Own()];
      const doc = primed(c, value);
      assert.strictEqual(jsonOf(c, doc), c === plain
        ? '[{"$":"Row","rowId":1,"createdBy":"me"},{"$":"Own","RID":1}]'
        : '[{"$":"Row","row_id":1,"author":"me"},{"$":"Own","RID":1}]');
      sameGraph(c.decodeEntity(doc), value);
    }
    assert.notStrictEqual(viaCodec.registry, darmok.createCodec().registry, 'the codec has a registry of its own');
    throwsCode(() => darmok.createRegistry({ transformKeys: 'snakes' }), 'ERR_INVALID_OPTION',
      (err) => assert.match(err.message, /createRegistry\(\): transformKeys must be/));
    throwsCode(() => darmok.createRegistry({ tranformKeys: 'snake' }), 'ERR_INVALID_OPTION',
      (err) => assert.match(err.message, /did you mean 'transformKeys'\?/));
    throwsCode(() => darmok.createCodec({ format, rename: { a: 'x', b: 'x' } }), 'ERR_INVALID_OPTION');
    throwsCode(() => darmok.createCodec({ format, registry, transformKeys: 'kebab' }), 'ERR_INVALID_OPTION',
      (err) => assert.match(err.message, /createRegistry/));
  });

  test(`${format}: configure() sets the default registry's defaults alone, and a change reaches classes with shapes`, { skip }, () => {
    const c = darmok.createCodec({ format });
    const isolated = isolatedCodec(format);
    class Row { constructor(i) { this.rowId = i; this.createdBy = 'me'; } }
    class Own { constructor() { this.rowId = 1; } }
    c.serializable(Row, { key: `configure.Row.${format}` });
    c.serializable(Own, { key: `configure.Own.${format}`, transformKeys: 'pascal', rename: { rowId: 'RID' } });
    isolated.serializable(Row, { key: `configure.Row.${format}` });
    const value = [new Row(1), new Own()];
    const before = primed(c, value);
    const isolatedBefore = primed(isolated, [new Row(1)]);
    assert.ok(defaultRegistry.planByKey(`configure.Row.${format}`).encodeShape.write, 'Row has an encode shape');
    const K = `configure.Row.${format}`;
    const O = `configure.Own.${format}`;
    assert.strictEqual(jsonOf(c, before), `[{"$":"${K}","rowId":1,"createdBy":"me"},{"$":"${O}","RID":1}]`);
    try {
      configure({ transformKeys: 'snake', rename: { createdBy: 'author' } });
      const after = primed(c, value);
      assert.strictEqual(jsonOf(c, after), `[{"$":"${K}","row_id":1,"author":"me"},{"$":"${O}","RID":1}]`);
      sameGraph(c.decodeEntity(after), value);
      // The old document's names are kept as they are (not in the table): the default bytes decode too.
      sameGraph(c.decodeEntity(before), value);
      assert.ok(same(primed(isolated, [new Row(1)]), isolatedBefore), 'another registry keeps its own defaults');
      throwsCode(() => configure({ transformKeys: 'snakes' }), 'ERR_INVALID_OPTION');
      throwsCode(() => configure({ tranformKeys: 'snake' }), 'ERR_INVALID_OPTION', (err) => assert.match(err.message, /tranformKeys/));
      assert.strictEqual(jsonOf(c, c.encodeEntity(value)), `[{"$":"${K}","row_id":1,"author":"me"},{"$":"${O}","RID":1}]`,
        'a refused configure() changes nothing');
    } finally {
      configure({ transformKeys: null, rename: null });
    }
    assert.strictEqual(jsonOf(c, primed(c, value)), jsonOf(c, before));
  });

  test(`${format}: named instances nested, in Maps and in Sets round-trip`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Leaf { constructor(v) { this.leafValue = v; } }
    class Tree { constructor() { this.childLeaf = new Leaf(1); this.byName = new Map([['k', new Leaf(2)], [new Leaf(3), 'v']]); this.leafSet = new Set([new Leaf(4)]); } }
    c.serializable(Leaf, { transformKeys: 'kebab', rename: { leafValue: 'v' } });
    c.serializable(Tree, { transformKeys: 'snake' });
    const value = [new Tree(), new Tree()];
    value.push(value[0].childLeaf);
    const doc = primed(c, value);
    assert.ok(jsonOf(c, doc).startsWith('[{"$":"Tree","child_leaf":{"$":"Leaf","v":1},"by_name":{"$Map":[["k",{"$":"Leaf","v":2}],[{"$":"Leaf","v":3},"v"]]},"leaf_set":{"$Set":[{"$":"Leaf","v":4}]}}'));
    sameGraph(c.decodeEntity(doc), value);
  });

  test(`${format}: migrations see the class's own field names`, { skip }, () => {
    const old = inspectedCodec(format);
    const now = inspectedCodec(format);
    class UserV1 { constructor() { this.firstName = 'Ada'; this.lastName = 'Lovelace'; } }
    class User { constructor() { this.firstName = 'Grace'; this.lastName = 'Hopper'; this.displayName = 'Grace Hopper'; } }
    old.c.serializable(UserV1, { key: 'User', transformKeys: 'snake' });
    const seen = [];
    now.c.serializable(User, {
      version: 2,
      transformKeys: 'snake',
      // The class's names are known from its fields list; with a rename an old name maps too.
      fields: ['firstName', 'lastName', 'displayName'],
      rename: { surname: 'last_name_v0' },
      migrate: { 1: (d) => { seen.push(Object.keys(d)); return { ...d, displayName: `${d.firstName} ${d.lastName}` }; } }
    });
    const v1 = old.c.encodeEntity([new UserV1(), new UserV1()]);
    assert.strictEqual(jsonOf(old.c, v1), '[{"$":"User","first_name":"Ada","last_name":"Lovelace"},{"$":"User","first_name":"Ada","last_name":"Lovelace"}]');
    const back = now.c.decodeEntity(v1);
    assert.deepStrictEqual(seen, [['firstName', 'lastName'], ['firstName', 'lastName']]);
    assert.ok(back[0] instanceof User);
    assert.deepStrictEqual({ ...back[1] }, { firstName: 'Ada', lastName: 'Lovelace', displayName: 'Ada Lovelace' });
    const v2 = now.c.encodeEntity(new User());
    assert.strictEqual(jsonOf(now.c, v2), '{"$":"User","$v":2,"first_name":"Grace","last_name":"Hopper","display_name":"Grace Hopper"}');
    sameGraph(now.c.decodeEntity(v2), new User());
    // Through the generic path and the shape alike.
    sameGraph(now.c.decodeEntity(primed(now.c, new User())), new User());
  });

  test(`${format}: sortKeys gives identical bytes for values whose fields were made in other orders`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Item { }
    c.serializable(Item, { transformKeys: 'snake', rename: { zebra: 'a_zebra' } });
    const item = (order) => {
      const o = Object.create(Item.prototype);
      for (const k of order) o[k] = k === 'nested' ? (order[0] === 'nested' ? { y: 1, x: [2, { b: 1, a: 2 }] } : { x: [2, { a: 2, b: 1 }], y: 1 }) : k.length;
      return o;
    };
    const one = { top: 1, list: [item(['nested', 'bTwo', 'aOne', 'zebra'])], $first: true, 10: 'ten', 9: 'nine' };
    const two = { 9: 'nine', $first: true, list: [item(['zebra', 'aOne', 'nested', 'bTwo'])], 10: 'ten', top: 1 };
    primed(c, [one, two]);
    assert.ok(!same(c.encodeEntity(one), c.encodeEntity(two)), 'without sortKeys the orders differ');
    const a = c.encodeEntity(one, { sortKeys: true });
    const b = c.encodeEntity(two, { sortKeys: true });
    assert.ok(same(a, b), 'sorted: identical bytes');
    // Sorted by the written names, in code-unit order; the first key escaped as always.
    assert.strictEqual(jsonOf(c, a), '{"$$first":true,"10":"ten","9":"nine","list":[{"$":"Item","a_one":4,"a_zebra":5,"b_two":4,' +
      '"nested":{"x":[2,{"a":2,"b":1}],"y":1}}],"top":1}');
    // The same data, its keys now in sorted order (deepStrictEqual ignores order, not prototypes).
    assert.deepStrictEqual(c.decodeEntity(a), one);
    assert.deepStrictEqual(Object.keys(c.decodeEntity(a).list[0]), ['aOne', 'zebra', 'bTwo', 'nested']);
    // Maps and Sets keep their insertion order: the order is part of their value.
    const m = c.encodeEntity(new Map([['b', 1], ['a', 2]]), { sortKeys: true });
    assert.strictEqual(jsonOf(c, m), '{"$Map":[["b",1],["a",2]]}');
    assert.strictEqual(jsonOf(c, c.encodeEntity(new Set(['b', 'a']), { sortKeys: true })), '{"$Set":["b","a"]}');
    throwsCode(() => c.encodeEntity(one, { sortKeys: 1 }), 'ERR_INVALID_OPTION');
  });

  test(`${format}: only and except select fields by class key; unselected classes keep their shapes`, { skip }, () => {
    const { c, registry } = inspectedCodec(format);
    class Post { constructor() { this.id = 1; this.title = 't'; this.body = 'b'; this.author = new User(); } }
    class User { constructor() { this.id = 2; this.name = 'n'; this.email = 'e@x'; } }
    c.serializable(Post);
    c.serializable(User, { transformKeys: 'pascal' });
    const value = [new Post(), new User()];
    primed(c, value);
    const userShape = registry.planByKey('User').encodeShape;
    const only = { Post: ['id', 'title', 'author', 'missing'] };
    const except = { User: ['email'] };
    assert.strictEqual(jsonOf(c, c.encodeEntity(value, { only })),
      '[{"$":"Post","id":1,"title":"t","author":{"$":"User","Id":2,"Name":"n","Email":"e@x"}},{"$":"User","Id":2,"Name":"n","Email":"e@x"}]');
    assert.strictEqual(userShape.misses, 0, 'User, not selected, went through its shape');
    assert.strictEqual(jsonOf(c, c.encodeEntity(value, { except })),
      '[{"$":"Post","id":1,"title":"t","body":"b","author":{"$":"User","Id":2,"Name":"n"}},{"$":"User","Id":2,"Name":"n"}]');
    const both = c.encodeEntity(value, { only, except, sortKeys: true });
    assert.strictEqual(jsonOf(c, both),
      '[{"$":"Post","author":{"$":"User","Id":2,"Name":"n"},"id":1,"title":"t"},{"$":"User","Id":2,"Name":"n"}]');
    const back = c.decodeEntity(both);
    assert.deepStrictEqual(Object.keys(back[0]), ['author', 'id', 'title']);
    assert.ok(back[0].author instanceof User && back[1] instanceof User);
    // A selection object is compiled at its first use: changing it later changes nothing.
    only.Post.push('body');
    assert.ok(!jsonOf(c, c.encodeEntity(value, { only })).includes('"body"'));
    throwsCode(() => c.encodeEntity(value, { only: { Post: 'id' } }), 'ERR_INVALID_OPTION');
    throwsCode(() => c.encodeEntity(value, { except: ['User'] }), 'ERR_INVALID_OPTION');
  });

  test(`${format}: every option together round-trips, and the default bytes are untouched`, { skip }, () => {
    const { c } = inspectedCodec(format);
    class Account { constructor(i) { this.accountId = i; this.ownerName = 'Zoë'; this.apiSecret = 's'; this.createdAt = new Date(i); this.tagSet = new Set(['b', 'a']); } }
    class Ledger { constructor() { this.entries = [new Account(1), new Account(2)]; this.byId = new Map([[1, new Account(3)]]); this.label = 'l'; } }
    c.serializable(Account, { transformKeys: 'snake', rename: { accountId: 'id' } });
    c.serializable(Ledger, { transformKeys: 'kebab' });
    const value = new Ledger();
    const options = { sortKeys: true, except: { Account: ['apiSecret'] }, only: { Ledger: ['entries', 'byId'] } };
    const doc = primed(c, value, options);
    assert.strictEqual(jsonOf(c, doc), '{"$":"Ledger","by-id":{"$Map":[[1,{"$":"Account","created_at":{"$Date":"1970-01-01T00:00:00.003Z"},' +
      '"id":3,"owner_name":"Zoë","tag_set":{"$Set":["b","a"]}}]]},"entries":[{"$":"Account","created_at":{"$Date":"1970-01-01T00:00:00.001Z"},' +
      '"id":1,"owner_name":"Zoë","tag_set":{"$Set":["b","a"]}},{"$":"Account","created_at":{"$Date":"1970-01-01T00:00:00.002Z"},' +
      '"id":2,"owner_name":"Zoë","tag_set":{"$Set":["b","a"]}}]}');
    const back = c.decodeEntity(doc);
    assert.ok(back instanceof Ledger && back.entries[1] instanceof Account && back.byId.get(1) instanceof Account);
    assert.deepStrictEqual(Object.keys(back.entries[0]), ['createdAt', 'accountId', 'ownerName', 'tagSet']);
    assert.strictEqual(back.entries[0].createdAt.getTime(), 1);
    // toPlain with the same options is the same tree.
    assert.deepStrictEqual(c.toPlain(value, options), JSON.parse(jsonOf(c, doc)));
    // Classes without options: the bytes of a codec that has none of this.
    const plain = inspectedCodec(format);
    class Bare { constructor() { this.b = 1; this.a = 2; } }
    plain.c.serializable(Bare);
    assert.strictEqual(jsonOf(plain.c, primed(plain.c, new Bare())), '{"$":"Bare","b":1,"a":2}');
  });

  test(`${format}: a decode-only process knows a class's wire names from its fields; unknown wire names stay as they are`, { skip }, () => {
    const writer = inspectedCodec(format);
    const reader = inspectedCodec(format);
    const bare = inspectedCodec(format);
    class Event { constructor() { this.eventName = 'e'; this.occurredAt = 1; } }
    writer.c.serializable(Event, { transformKeys: 'snake' });
    reader.c.serializable(Event, { transformKeys: 'snake', fields: ['eventName', 'occurredAt'] });
    bare.c.serializable(Event, { transformKeys: 'snake' });
    const doc = writer.c.encodeEntity(new Event());
    assert.deepStrictEqual({ ...reader.c.decodeEntity(doc) }, { eventName: 'e', occurredAt: 1 });
    assert.deepStrictEqual({ ...bare.c.decodeEntity(doc) }, { event_name: 'e', occurred_at: 1 });
  });
}

/* ---- toPlain / fromPlain ------------------------------------------------- */

test("toPlain's dates are Date.prototype.toISOString's, over the whole range of a Date", () => {
  const rnd = xorshift(0x150);
  const edges = [0, -1, 1, -62167219200000, -62167219200001, 253402300799999, 253402300800000, 8.64e15, -8.64e15,
    951782400000, 951868799999, 4107542400000, -2208988800000];
  for (let i = 0; i < 100000; i++) {
    const ms = i < edges.length ? edges[i] : (rnd(2) ? 1 : -1) * (rnd(2) ? rnd(2 ** 31) * 4e6 + rnd(4e6) : rnd(2 ** 31) * 1e5 + rnd(1e5));
    assert.strictEqual(isoString(ms), new Date(ms).toISOString(), String(ms));
  }
});

test('toPlain(x) deep-equals JSON.parse(encodeEntity(x)) over the fixture table, and fromPlain brings x back', { skip }, () => {
  for (const f of fixtures) {
    const value = f.make();
    const plain = darmok.toPlain(value);
    assert.deepStrictEqual(plain, JSON.parse(darmok.encodeEntity(value)), f.name);
    for (const options of [{ sortKeys: true }, { strict: false, maxDepth: 50 }]) {
      assert.deepStrictEqual(darmok.toPlain(value, options), JSON.parse(darmok.encodeEntity(value, options)), `${f.name} ${JSON.stringify(options)}`);
    }
    const back = darmok.fromPlain(plain);
    if (f.expect !== null) sameGraph(back, f.expect ? f.expect() : value);
    if (f.check) f.check(back, assert);
    assert.strictEqual(darmok.encodeEntity(back), darmok.encodeEntity(f.expect ? f.expect() : value), f.name);
  }
});

test('toPlain writes dates as the core does, also when Date.prototype.toISOString is replaced', { skip }, () => {
  const value = [new Date(0), new Date(Date.UTC(10000, 0, 1)), new Date(Date.UTC(-1, 0, 1)), new Date(NaN)];
  const want = JSON.parse(darmok.encodeEntity(value));
  const own = Date.prototype.toISOString;
  let calls = 0;
  Date.prototype.toISOString = function () { calls++; return 'patched'; }; // eslint-disable-line no-extend-native
  try {
    assert.deepStrictEqual(darmok.toPlain(value), want);
  } finally {
    Date.prototype.toISOString = own; // eslint-disable-line no-extend-native
  }
  assert.strictEqual(calls, 0);
});

test('fromPlain of a parsed document gives what decodeEntity gives, with the same errors', { skip }, () => {
  for (const f of invalid) {
    if (f.bytes) continue; // bytes that are no text
    let parsed;
    try {
      parsed = JSON.parse(f.text);
    } catch {
      continue; // not JSON: there is no tree
    }
    if (f.code === 'ERR_TOO_LARGE' && f.options && f.options.maxBytes) continue; // the tree's text is not the input
    throwsCode(() => darmok.fromPlain(parsed, f.options), f.code, (err) => {
      if (f.path) assert.strictEqual(err.path, f.path, f.name);
    });
  }
  throwsCode(() => darmok.fromPlain({ a: [1, { b: new Date(0) }] }), 'ERR_UNSUPPORTED_TYPE', (err) => assert.strictEqual(err.path, '$.a[1].b'));
  throwsCode(() => darmok.fromPlain({ a: undefined }), 'ERR_UNSUPPORTED_TYPE');
  throwsCode(() => darmok.fromPlain([NaN]), 'ERR_UNSUPPORTED_TYPE');
  throwsCode(() => darmok.fromPlain([1, , 2]), 'ERR_UNSUPPORTED_TYPE'); // eslint-disable-line no-sparse-arrays
  const loop = {};
  loop.self = loop;
  throwsCode(() => darmok.fromPlain(loop), 'ERR_DEPTH');
  throwsCode(() => darmok.fromPlain([[[1]]], { maxDepth: 2 }), 'ERR_DEPTH');
  throwsCode(() => darmok.fromPlain({}, { format: 'json' }), 'ERR_INVALID_OPTION');
  throwsCode(() => darmok.toPlain({}, { format: 'json' }), 'ERR_INVALID_OPTION');
});

test('fromPlain: classes, migrations, unknown classes and an object whose keys JavaScript reorders', { skip }, () => {
  const { c } = inspectedCodec('json');
  class Thing { constructor() { this.a = 1; } }
  class Old {}
  c.serializable(Thing);
  c.serializable(Old, { version: 3, migrate: { 1: (d) => ({ ...d, two: true }), 2: (d) => ({ ...d, three: true }) } });
  const thing = c.fromPlain({ $: 'Thing', a: 5 }, Thing);
  assert.ok(thing instanceof Thing);
  assert.strictEqual(thing.a, 5);
  const old = c.fromPlain({ $: 'Old', $v: 1, x: 1 });
  assert.ok(old instanceof Old);
  assert.deepStrictEqual({ ...old }, { x: 1, two: true, three: true });
  throwsCode(() => c.fromPlain({ $: 'Old', $v: 9 }), 'ERR_VERSION');
  assert.ok(c.fromPlain({ $: 'Old', $v: 9, y: 1 }, { newerVersion: 'accept' }) instanceof Old);
  throwsCode(() => c.fromPlain({ $: 'Nobody' }), 'ERR_UNKNOWN_CLASS');
  assert.deepStrictEqual(c.fromPlain({ $: 'Nobody', n: 1 }, { unknownClass: 'plain' }), { n: 1 });
  // An instance with an index-like field: the plain tree lists "1" before "$",
  // but "$" was the text's first key, and stays the tag.
  const indexed = Object.assign(new Thing(), { 1: 'one' });
  const tree = c.toPlain(indexed);
  assert.deepStrictEqual(Object.keys(tree), ['1', '$', 'a']);
  sameGraph(c.fromPlain(tree), indexed);
  sameGraph(c.fromPlain(c.toPlain({ 2: 'x', $id: 1 })), { 2: 'x', $id: 1 });
});

test('toPlain and fromPlain of a protobuf codec are those of the JSON format', { skip }, () => {
  const { c } = inspectedCodec('protobuf');
  class P { constructor() { this.xCoord = -0; this.when = new Date(5); } }
  c.serializable(P, { transformKeys: 'snake' });
  const value = [new P(), new Map([[1n, new Uint8Array([1, 2])]])];
  const plain = c.toPlain(value);
  assert.deepStrictEqual(plain, JSON.parse(darmok.transcode(c.encodeEntity(value), { from: 'protobuf', to: 'json' })));
  sameGraph(c.fromPlain(plain), value);
});

test('configure, toPlain and fromPlain are exported from every entry point, CommonJS and ESM', { skip }, async () => {
  const entries = ['../../../js/index', '../../../js/json', '../../../js/protobuf'];
  for (const entry of entries) {
    const cjs = require(`${entry}.cjs`);
    const esm = await import(`${entry}.mjs`);
    for (const name of ['configure', 'toPlain', 'fromPlain']) {
      assert.strictEqual(typeof cjs[name], 'function', `${entry}.cjs ${name}`);
      assert.strictEqual(esm[name], cjs[name], `${entry}.mjs ${name}`);
      assert.strictEqual(cjs.default[name], cjs[name]);
    }
  }
  assert.strictEqual(require('../../../js/protobuf.cjs').configure, darmok.configure, 'one set of defaults');
});

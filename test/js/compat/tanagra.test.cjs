'use strict';
/*
 * Reading tanagra-json's documents (issue 4). The fixtures are written by
 * hand from the rules of tanagra's encoders (js/compat/tanagra.cjs lists them):
 *   1.x  {"_serializationKey":"K", truthy fields..., "f_map":[[k,v]...],
 *        "f_date":"ISO", "f_buffer":{"type":"Buffer","data":[...]},
 *        "f_uint8array":{"0":b,...}}
 *   0.x  the instance's own fields as JSON.stringify writes them, then
 *        "_serializationKey":"K", then "f_map" / "f_date" added beside
 *        the originals ("f":{} for a Map, "f":"ISO" for a Date).
 * The real tanagra-json 1.0.6 (a bench devDependency) cross-checks the 1.x
 * fixture: it must write exactly that document and read it into the same
 * instances darmok builds. The rebuilt instances then round-trip through
 * every darmok format.
 */
const { test } = require('node:test');
const { assert, haveWasm, sameGraph } = require('../helpers.cjs');
const { formats } = require('../fixtures.cjs');
const { createCodec, createRegistry, DarmokError, transcode } = require('../../../js/index.cjs');

const skip = haveWasm ? false : 'build/darmok.wasm is not built (DARMOK_JS_ONLY=1)';

let tanagra = null;
try {
  tanagra = { core: require('tanagra-core'), json: require('tanagra-json') };
} catch {
  // Not installed (a production install): the cross-check is skipped.
}

class Tag {
  constructor(label) { this.label = label; }
  shout() { return this.label.toUpperCase(); }
}
class Item {
  constructor(name, price, tags, added) {
    this.name = name;
    this.price = price;
    this.tags = tags;
    this.added = added;
  }
  get total() { return this.price * this.tags.length; }
}
class Cart {
  constructor(items) {
    this.owner = 'ann';
    this.items = items;
    this.byName = new Map(items.map((i) => [i.name, i]));
    this.created = new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6));
    this.raw = Buffer.from([1, 2, 255]);
    this.thumb = new Uint8Array([4, 5]);
  }
  names() { return this.items.map((i) => i.name); }
}

function registryWithCart() {
  const registry = createRegistry();
  // tanagra's default keys are class names; so are darmok's.
  registry.serializable(Cart, [Item, Tag]);
  return registry;
}

function sampleCart() {
  const pen = new Item('pen', 2.5, [new Tag('blue'), new Tag('office')], new Date(Date.UTC(2019, 5, 1)));
  const cup = new Item('cup', 4, [new Tag('kitchen')], new Date(Date.UTC(2019, 6, 1)));
  return new Cart([pen, cup]);
}

const PEN_1X = '{"_serializationKey":"Item","name":"pen","price":2.5,"tags":[{"_serializationKey":"Tag","label":"blue"},{"_serializationKey":"Tag","label":"office"}],"added_date":"2019-06-01T00:00:00.000Z"}';
const CUP_1X = '{"_serializationKey":"Item","name":"cup","price":4,"tags":[{"_serializationKey":"Tag","label":"kitchen"}],"added_date":"2019-07-01T00:00:00.000Z"}';
const CART_1X = `{"_serializationKey":"Cart","owner":"ann","items":[${PEN_1X},${CUP_1X}],"byName_map":[["pen",${PEN_1X}],["cup",${CUP_1X}]],"created_date":"2020-01-02T03:04:05.006Z","raw_buffer":{"type":"Buffer","data":[1,2,255]},"thumb_uint8array":{"0":4,"1":5}}`;

/*
 * 0.x: fields as written, then the key, then the added _map/_date fields
 * (0.x had no binary convention: a Buffer is JSON.stringify's object). The
 * cart's Map holds only the pen here.
 */
const PEN_0X = '{"name":"pen","price":2.5,"tags":[{"label":"blue","_serializationKey":"Tag"},{"label":"office","_serializationKey":"Tag"}],"added":"2019-06-01T00:00:00.000Z","_serializationKey":"Item","added_date":"2019-06-01T00:00:00.000Z"}';
const CUP_0X = '{"name":"cup","price":4,"tags":[{"label":"kitchen","_serializationKey":"Tag"}],"added":"2019-07-01T00:00:00.000Z","_serializationKey":"Item","added_date":"2019-07-01T00:00:00.000Z"}';
const CART_0X = `{"owner":"ann","items":[${PEN_0X},${CUP_0X}],"byName":{},"created":"2020-01-02T03:04:05.006Z","raw":{"type":"Buffer","data":[1,2,255]},"thumb":{"0":4,"1":5},"_serializationKey":"Cart","byName_map":[["pen",${PEN_0X}]],"created_date":"2020-01-02T03:04:05.006Z"}`;

/* The checks every decoded 1.x cart passes: working instances throughout. */
function checkCart(out) {
  assert.ok(out instanceof Cart);
  assert.deepStrictEqual(out.names(), ['pen', 'cup']);
  assert.ok(out.items[0] instanceof Item && out.items[1] instanceof Item);
  assert.strictEqual(out.items[0].total, 5);
  assert.ok(out.items[0].tags[1] instanceof Tag);
  assert.strictEqual(out.items[0].tags[1].shout(), 'OFFICE');
  assert.ok(out.items[1].added instanceof Date);
  assert.strictEqual(out.items[1].added.toISOString(), '2019-07-01T00:00:00.000Z');
  assert.ok(out.byName instanceof Map);
  assert.ok(out.byName.get('cup') instanceof Item);
  assert.strictEqual(out.byName.get('cup').tags[0].shout(), 'KITCHEN');
  assert.strictEqual(out.created.getTime(), Date.UTC(2020, 0, 2, 3, 4, 5, 6));
  assert.ok(Buffer.isBuffer(out.raw));
  assert.deepStrictEqual([...out.raw], [1, 2, 255]);
  assert.ok(out.thumb instanceof Uint8Array && !Buffer.isBuffer(out.thumb));
  assert.deepStrictEqual([...out.thumb], [4, 5]);
  assert.ok(!Object.keys(out).includes('_serializationKey'));
}

test('tanagra-json 1.x: a hand-written document decodes into working instances', { skip }, () => {
  const json = createCodec({ registry: registryWithCart() });
  const out = json.decodeEntity(CART_1X);
  checkCart(out);
  assert.deepStrictEqual(Object.keys(out), ['owner', 'items', 'byName', 'created', 'raw', 'thumb'],
    'converted fields take the place of their suffixed names');
  assert.deepStrictEqual(out, sampleCart(), 'the same fields as the instance tanagra encoded');
  // Also as UTF-8 bytes, and with the option spelled out.
  checkCart(json.decodeEntity(Buffer.from(CART_1X), { legacy: 'tanagra' }));
});

test('tanagra 1.x: the "$Map"/"$Date"/"$Buffer"/"$Uint8Array" spelling decodes the same', { skip }, () => {
  const json = createCodec({ registry: registryWithCart() });
  const dollar = CART_1X.replace(/_map"/g, '$Map"').replace(/_date"/g, '$Date"')
    .replace(/_buffer"/g, '$Buffer"').replace(/_uint8array"/g, '$Uint8Array"');
  assert.notStrictEqual(dollar, CART_1X);
  const out = json.decodeEntity(dollar);
  checkCart(out);
  assert.deepStrictEqual(out, sampleCart());
});

test('tanagra-json 1.x: the real tanagra-json writes the fixture and reads the same instances',
  { skip: skip || (tanagra === null && 'tanagra-json is not installed') }, () => {
    const registry = registryWithCart();
    for (const C of [Tag, Item, Cart]) tanagra.core.serializable()(C);
    const written = tanagra.json.encodeEntity(sampleCart());
    assert.strictEqual(written, CART_1X, 'the hand-written fixture is what tanagra-json 1.0.6 writes');
    const theirs = tanagra.json.decodeEntity(written);
    const ours = createCodec({ registry }).decodeEntity(written);
    checkCart(ours);
    // tanagra leaves its key as an own field and appends converted fields;
    // otherwise the graphs agree: same classes, same values.
    const strip = (o) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== '_serializationKey'));
    assert.strictEqual(Object.getPrototypeOf(theirs), Object.getPrototypeOf(ours));
    assert.deepStrictEqual(Object.keys(strip(theirs)).sort(), Object.keys(ours).sort());
    assert.deepStrictEqual(strip(theirs.items[0].tags[0]), { ...ours.items[0].tags[0] });
    assert.strictEqual(Object.getPrototypeOf(theirs.byName.get('cup')), Item.prototype);
    assert.strictEqual(theirs.created.getTime(), ours.created.getTime());
    assert.deepStrictEqual([...theirs.raw], [...ours.raw]);
    assert.deepStrictEqual([...theirs.thumb], [...ours.thumb]);
  });

test('tanagra-json 0.x: a hand-written document decodes into working instances', { skip }, () => {
  const json = createCodec({ registry: registryWithCart() });
  const out = json.decodeEntity(CART_0X);
  assert.ok(out instanceof Cart);
  assert.deepStrictEqual(Object.keys(out), ['owner', 'items', 'byName', 'created', 'raw', 'thumb'],
    'converted fields replace the originals in place');
  assert.deepStrictEqual(out.names(), ['pen', 'cup']);
  assert.ok(out.items[0].tags[0] instanceof Tag);
  assert.strictEqual(out.items[0].tags[0].shout(), 'BLUE');
  assert.ok(out.items[1].added instanceof Date);
  assert.strictEqual(out.items[1].added.getTime(), Date.UTC(2019, 6, 1));
  assert.ok(out.byName.get('pen') instanceof Item);
  assert.strictEqual(out.byName.get('pen').total, 5);
  assert.strictEqual(out.created.getTime(), Date.UTC(2020, 0, 2, 3, 4, 5, 6));
  // tanagra 0.x had no binary convention: it read back what JSON.stringify
  // wrote, and so does darmok.
  assert.deepStrictEqual(out.raw, { type: 'Buffer', data: [1, 2, 255] });
  assert.deepStrictEqual(out.thumb, { 0: 4, 1: 5 });
  assert.ok(!Object.keys(out.items[0]).includes('_serializationKey'));
});

test('tanagra: nested classes in arrays of arrays and Maps of arrays; falsy fields', { skip }, () => {
  const registry = createRegistry();
  registry.serializable(Item, [Tag]);
  const json = createCodec({ registry });
  const doc = '{"_serializationKey":"Item","name":"grid","tags":[[{"_serializationKey":"Tag","label":"a"}],[]],' +
    '"index_map":[[1,[{"_serializationKey":"Tag","label":"b"}]],[2,{"_serializationKey":"Tag","label":"c"}]],' +
    '"price_date":null,"note":""}';
  const out = json.decodeEntity(doc);
  assert.ok(out.tags[0][0] instanceof Tag);
  assert.ok(out.index.get(1)[0] instanceof Tag);
  assert.strictEqual(out.index.get(2).shout(), 'C');
  assert.strictEqual(out.price_date, null, 'a falsy suffixed field is kept as it is, as tanagra does');
  assert.strictEqual(out.note, '');
});

test('tanagra: a plain top-level object needs legacy \'tanagra\'; \'none\' turns detection off', { skip }, () => {
  const json = createCodec({ registry: registryWithCart() });
  // tanagra-json's own versioning test encodes a plain object of instances.
  const doc = `{"first":${PEN_1X},"when_date":"2020-01-01T00:00:00.000Z"}`;
  const auto = json.decodeEntity(doc);
  assert.strictEqual(Object.getPrototypeOf(auto.first), Object.prototype, 'auto: not a tanagra document');
  const out = json.decodeEntity(doc, { legacy: 'tanagra' });
  assert.ok(out.first instanceof Item);
  assert.ok(out.when instanceof Date);
  const none = json.decodeEntity(CART_1X, { legacy: 'none' });
  assert.strictEqual(none._serializationKey, 'Cart');
  assert.strictEqual(Object.getPrototypeOf(none), Object.prototype);
  assert.throws(() => json.decodeEntity(CART_1X, { legacy: 'yes' }), (e) => e.code === 'ERR_INVALID_OPTION');
});

test('tanagra: unknown keys throw ERR_UNKNOWN_CLASS with a path, or become plain', { skip }, () => {
  const registry = createRegistry();
  registry.serializable(Cart);
  const json = createCodec({ registry });
  assert.throws(() => json.decodeEntity(CART_1X), (e) => {
    assert.ok(e instanceof DarmokError);
    assert.strictEqual(e.code, 'ERR_UNKNOWN_CLASS');
    assert.strictEqual(e.path, '$.items[0]');
    return true;
  });
  const out = json.decodeEntity(CART_1X, { unknownClass: 'plain' });
  assert.ok(out instanceof Cart);
  assert.strictEqual(Object.getPrototypeOf(out.items[0]), Object.prototype);
  assert.ok(out.items[0].added instanceof Date, 'conventions still apply inside');
});

test('tanagra: documents are version 1, so migrations and aliases apply', { skip }, () => {
  const registry = createRegistry();
  class Label { get text() { return `#${this.value}`; } }
  class Article {}
  registry.serializable(Label, { key: 'Label', aliases: ['Tag'] });
  registry.serializable(Article, {
    key: 'Article',
    aliases: ['Item'],
    version: 2,
    migrate: { 1: (d) => ({ title: d.name, cents: Math.round(d.price * 100), labels: d.tags, added: d.added }) },
    nested: [Label]
  });
  const out = createCodec({ registry }).decodeEntity(PEN_1X);
  assert.ok(out instanceof Article);
  assert.strictEqual(out.cents, 250);
  assert.ok(out.labels[0] instanceof Label);
  assert.strictEqual(out.labels[1].text, '#undefined', 'Label took the Tag fields as they were');
  assert.strictEqual(out.labels[1].label, 'office');
  assert.ok(out.added instanceof Date);
});

test('tanagra: darmok documents are unaffected, even with legacy \'tanagra\'', { skip }, () => {
  const registry = registryWithCart();
  const json = createCodec({ registry });
  const cart = sampleCart();
  const doc = json.encodeEntity(cart);
  sameGraph(json.decodeEntity(doc), cart);
  sameGraph(json.decodeEntity(doc, { legacy: 'tanagra' }), cart);
  // A plain object whose data happens to use tanagra's suffixes stays as it is.
  assert.deepStrictEqual(json.decodeEntity('{"road_map":[["a",1]],"x_date":"2020"}'), { road_map: [['a', 1]], x_date: '2020' });
});

/*
 * A plain object of darmok's with a top-level _serializationKey was read as
 * a tanagra document (a different class, renamed and retyped fields, or
 * ERR_UNKNOWN_CLASS). darmok writes that key escaped, "\u005fserializationKey",
 * which JSON readers take for the same key, and 'auto' asks for the key as
 * JSON.stringify writes it.
 */
test('tanagra: darmok\'s own plain objects with a _serializationKey are never taken for tanagra documents', { skip }, () => {
  const registry = registryWithCart();
  const json = createCodec({ registry });
  const pb = createCodec({ registry, format: 'protobuf' });
  const values = [
    { _serializationKey: 'x', a: 1 },
    { _serializationKey: 'Item', name: 'pen', added_date: '2019-06-01T00:00:00.000Z' },
    [{ _serializationKey: 'Item' }, '_serializationKey', { _serializationKey: '"_serializationKey":' }],
    // a key ending in the characters: written "a\"_serializationKey":
    { _serializationKey: 'Item', 'a"_serializationKey': 1, 'b\\"_serializationKey': 2 },
    Object.assign(Object.create(null), { _serializationKey: 'Item' })
  ];
  for (const v of values) {
    const text = json.encodeEntity(v);
    assert.ok(!/(^|[^\\])(\\\\)*"_serializationKey":/.test(text), text); // not as JSON.stringify writes it
    assert.ok(text.includes('"\\u005fserializationKey":'), text);
    for (const blob of [text, Buffer.from(text), new Uint8Array(Buffer.from(text))]) {
      assert.deepStrictEqual(json.decodeEntity(blob), v, text);
    }
    const bytes = pb.encodeEntity(v);
    assert.deepStrictEqual(pb.decodeEntity(bytes), v);
    assert.strictEqual(transcode(bytes, { from: 'protobuf', to: 'json' }), text);
    assert.deepStrictEqual(Buffer.from(transcode(text, { from: 'json', to: 'protobuf' })), Buffer.from(bytes));
  }
  assert.deepStrictEqual(JSON.parse(json.encodeEntity(values[0])), values[0], 'the same key to JSON.parse');
  // tanagra's own documents are still read by its rules: as a string,
  // bytes, and with whitespace; legacy 'tanagra' reads darmok's too.
  const pretty = JSON.stringify(JSON.parse(PEN_1X), null, 2);
  for (const blob of [PEN_1X, Buffer.from(PEN_1X), new Uint8Array(Buffer.from(PEN_1X)), pretty]) {
    const pen = json.decodeEntity(blob);
    assert.strictEqual(pen.constructor.name, 'Item');
    assert.ok(pen.added instanceof Date);
  }
  const forced = json.decodeEntity(json.encodeEntity({ _serializationKey: 'Item', name: 'pen' }), { legacy: 'tanagra' });
  assert.strictEqual(forced.constructor.name, 'Item');
});

for (const format of formats) {
  test(`${format}: instances rebuilt from tanagra documents round-trip`, { skip }, () => {
    const registry = registryWithCart();
    const fromTanagra = createCodec({ registry }).decodeEntity(CART_1X);
    const codec = createCodec({ format, registry });
    const out = codec.decodeEntity(codec.encodeEntity(fromTanagra));
    checkCart(out);
    sameGraph(out, fromTanagra);
  });
}

/*
 * A tanagra document is read from the decoded value, which may hold runs of
 * holes ({"$hole": n}, never made: docs/SECURITY.md). The tanagra rules
 * walked arrays index by index, writing every hole, and took a sparse
 * array for a Map's entries or a Buffer's data.
 */
test('tanagra: runs of holes stay holes, and hostile ones give a value or a DarmokError', { skip }, () => {
  const registry = createRegistry();
  const codec = createCodec({ registry });
  class K {}
  registry.serializable(K, [], 'K');
  const before = process.memoryUsage().heapUsed;
  const sparse = codec.decodeEntity('{"_serializationKey":"K","a":[1,{"$hole":16777000},{"_serializationKey":"K"}],"l":[{"$hole":16777216}]}');
  assert.ok(sparse instanceof K);
  assert.strictEqual(sparse.a.length, 16777002);
  assert.deepStrictEqual(Object.keys(sparse.a), ['0', '16777001']);
  assert.ok(sparse.a[16777001] instanceof K, 'an instance after the run is still built');
  assert.strictEqual(Object.keys(sparse.l).length, 0);
  assert.ok(process.memoryUsage().heapUsed - before < 32 * 1024 * 1024, 'no slot made per hole');
  // Not dense, so neither a Map nor a Buffer: kept as they are.
  const odd = codec.decodeEntity('{"_serializationKey":"K","m_map":[{"$hole":1}],"n_map":[[1,2],{"$hole":2}],"b_buffer":{"type":"Buffer","data":[{"$hole":16777216}]}}');
  assert.ok(Array.isArray(odd.m_map) && !(0 in odd.m_map));
  assert.ok(Array.isArray(odd.n_map) && odd.n_map.length === 3);
  assert.ok(!Buffer.isBuffer(odd.b_buffer) && odd.b_buffer.data.length === 16777216);
  for (const legacy of ['auto', 'tanagra']) {
    const out = codec.decodeEntity('{"_serializationKey":"Nope","m_map":[{"$hole":1}],"x$Map":[[1,2],{"$hole":1}]}', { unknownClass: 'plain', legacy });
    assert.ok(Array.isArray(out.m_map) && Array.isArray(out.x$Map), legacy);
  }
});

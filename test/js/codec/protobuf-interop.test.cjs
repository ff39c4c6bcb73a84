'use strict';
/*
 * Interop with Google's protoc (Debian's protobuf-compiler): darmok's
 * protobuf bytes are an ordinary darmok.Document any protobuf library reads
 * with proto/darmok.proto, and a document protoc writes from hand-written
 * text decodes through darmok into the expected instances.
 */
const { test } = require('node:test');
const { assert, haveWasm, pbDoc, pbText } = require('../helpers.cjs');
const { createCodec, createRegistry, transcode } = require('../../../js/protobuf.cjs');

const skip = haveWasm ? false : 'build/darmok.wasm is not built (DARMOK_JS_ONLY=1)';

/* The tanagra article's graph (bench/workloads.mjs): Foo { Bar, Bar, Map<Baz> }. */
function fooModel() {
  const registry = createRegistry();
  class Baz {
    constructor(label, counts) { this.label = label; this.counts = counts; }
    total() { let n = 0; for (const v of this.counts.values()) n += v; return n; }
  }
  class Bar {
    constructor(name, when, baz) { this.name = name; this.when = when; this.baz = baz; }
  }
  class Foo {
    constructor(title, count, bars, bazById) { this.title = title; this.count = count; this.bars = bars; this.bazById = bazById; }
  }
  registry.serializable(Foo, [Bar, Baz]);
  const baz = (label, x) => new Baz(label, new Map([['x', x], ['y', x / 8], ['z', -x]]));
  const shared = baz('shared', 5);
  const foo = new Foo('the tanagra article', 42,
    [new Bar('first', new Date(Date.UTC(2020, 0, 1)), shared), new Bar('second', new Date(Date.UTC(2021, 5, 1)), baz('two', 7))],
    new Map([['a', shared], ['b', baz('b', 9)]]));
  return { codec: createCodec({ format: 'protobuf', registry }), foo, Foo, Bar, Baz };
}

test('protoc --decode reads darmok bytes for the Foo graph', { skip }, () => {
  const { codec, foo, Foo, Bar, Baz } = fooModel();
  const bytes = codec.encodeEntity(foo);
  const text = pbText(bytes);
  for (const want of [
    'format: 1',
    // the string table: class keys and field names, once each
    'strings: "Foo"', 'strings: "Bar"', 'strings: "Baz"',
    'strings: "title"', 'strings: "count"', 'strings: "bars"', 'strings: "bazById"',
    'strings: "when"', 'strings: "baz"', 'strings: "label"', 'strings: "counts"',
    // class shapes, and the value stream with its payloads
    'version: 1', 'kinds: KIND_INSTANCE', 'kinds: KIND_MAP', 'kinds: KIND_REF', 'kinds: KIND_STRING_REF',
    'texts: "the tanagra article"', 'ints: 42', 'texts: "first"', 'texts: "shared"',
    `ints: ${Date.UTC(2020, 0, 1)}`, 'numbers: 0.625', 'ints: -5'
  ]) {
    assert.ok(text.includes(want), `protoc's text shows ${want}:\n${text}`);
  }
  // Every class key and field name is written once, however many instances,
  // and so is each repeated string value ("x", "y", "z" of the three Maps).
  assert.strictEqual(text.split('strings: "label"').length - 1, 1);
  assert.strictEqual(text.split('texts: "x"').length - 1, 1);
  // One message per document plus one per shape, not one per value.
  assert.strictEqual(text.split('{').length - 1, 3);
  // protoc's text, encoded again by protoc, is the same document.
  const again = pbDoc(text);
  assert.deepStrictEqual(Buffer.from(again), bytes);
  const back = codec.decodeEntity(again);
  assert.ok(back instanceof Foo && back.bars[0] instanceof Bar && back.bars[0].baz instanceof Baz);
  assert.strictEqual(back.bars[0].baz, back.bazById.get('a'), 'shared reference kept');
  assert.strictEqual(back.bazById.get('b').total(), 9 + 9 / 8 - 9);
});

/* A document written by hand in protobuf text format. */
const HANDWRITTEN = `
# [Point{x: 1, y: -2.5}, "café", <lone surrogate>, 12345678901234567890n,
#  Map{"k" => Set{undefined, null}}, /a+b/gi, Uint16Array [1, 2],
#  TypeError("boom"), <2 holes>, true, the array itself, "café" again]
format: 1
strings: "Point"
strings: "x"
strings: "y"
strings: "name"
strings: "message"
shapes { class_key: 0 version: 2 fields: [1, 2] }
shapes { fields: [3, 4] }
kinds: [
  KIND_ARRAY,                   # value 0, counts 13 (slots)
  KIND_INSTANCE,                # value 1, counts 0 (shape: Point)
    KIND_INT, KIND_NUMBER,      #   x: ints 1, y: numbers -2.5
  KIND_STRING,                  # texts "café"
  KIND_STRING,                  # texts: a lone surrogate, WTF-8
  KIND_BIGINT,                  # texts: digits
  KIND_MAP,                     # value 2, counts 1 (pair)
    KIND_STRING,                #   texts "k"
    KIND_SET,                   #   value 3, counts 2
      KIND_UNDEFINED, KIND_NULL,
  KIND_REGEXP,                  # value 4, texts "a+b", "gi"
  KIND_BINARY,                  # value 5, binary_kinds, binaries
  KIND_ERROR,                   # value 6, counts 1 (shape: name, message)
    KIND_STRING, KIND_STRING,   #   texts "TypeError", "boom"
  KIND_HOLES,                   # counts 2
  KIND_TRUE,
  KIND_REF,                     # counts 0: the array itself
  KIND_STRING_REF               # counts 0: texts[0] again
]
counts: [13, 0, 1, 2, 1, 2, 0, 0]
ints: [1]
numbers: [-2.5]
texts: ["caf\\303\\251", "\\355\\240\\200", "12345678901234567890", "k", "a+b", "gi", "TypeError", "boom"]
binary_kinds: [BINARY_UINT16]
binaries: ["\\001\\000\\002\\000"]
`;

test('protoc --encode of a hand-written document decodes through darmok', { skip }, () => {
  const registry = createRegistry();
  class Point {
    constructor(x, y) { this.x = x; this.y = y; }
    get length() { return Math.hypot(this.x, this.y); }
  }
  registry.serializable(Point, { key: 'Point', version: 2, migrate: { 1: (d) => d } });
  const codec = createCodec({ format: 'protobuf', registry });
  const bytes = pbDoc(HANDWRITTEN);
  const v = codec.decodeEntity(bytes);
  assert.ok(Array.isArray(v));
  assert.strictEqual(v.length, 13);
  assert.ok(v[0] instanceof Point);
  assert.deepStrictEqual({ x: v[0].x, y: v[0].y }, { x: 1, y: -2.5 });
  assert.strictEqual(v[0].length, Math.hypot(1, 2.5));
  assert.strictEqual(v[1], 'café');
  assert.strictEqual(v[2], '\ud800');
  assert.strictEqual(v[3], 12345678901234567890n);
  assert.ok(v[4] instanceof Map);
  assert.deepStrictEqual([...v[4].get('k')], [undefined, null]);
  assert.ok(v[5] instanceof RegExp);
  assert.strictEqual(String(v[5]), '/a+b/gi');
  assert.ok(v[6] instanceof Uint16Array);
  assert.deepStrictEqual([...v[6]], [1, 2]);
  assert.ok(v[7] instanceof TypeError);
  assert.strictEqual(v[7].message, 'boom');
  assert.ok(!(8 in v) && !(9 in v), 'holes');
  assert.strictEqual(v[10], true);
  assert.strictEqual(v[11], v, 'cycle');
  assert.strictEqual(v[12], 'café');
  // darmok writes the same document in its canonical form, which JSON carries too.
  const again = codec.encodeEntity(v);
  assert.strictEqual(transcode(transcode(again, { from: 'protobuf', to: 'json' }), { from: 'json', to: 'protobuf' }).compare(again), 0);
});

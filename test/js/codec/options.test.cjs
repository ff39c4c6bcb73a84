'use strict';
/*
 * Options: every options object of the API (encodeEntity, decodeEntity,
 * createCodec, createRegistry, transcode, serializable) refuses an unknown
 * name with ERR_INVALID_OPTION naming the closest valid one, in both
 * formats, and a bad value with ERR_INVALID_OPTION; an object passed again
 * is read again.
 */
const { test } = require('node:test');
const { assert, throwsCode, FORMATS, isolatedCodec } = require('../helpers.cjs');
const { createCodec, createRegistry, transcode } = require('../../../js/index.cjs');
const { ENCODE_OPTIONS, DECODE_OPTIONS, TO_PLAIN_OPTIONS, FROM_PLAIN_OPTIONS } = require('../../../js/internal.cjs');

for (const format of FORMATS) {
  test(`${format}: unknown option names are ERR_INVALID_OPTION naming the closest one`, () => {
    const c = isolatedCodec(format);
    const did = (fn, re) => throwsCode(fn, 'ERR_INVALID_OPTION', (err) => assert.match(err.message, re));
    did(() => c.encodeEntity({ a: 1 }, { stict: true }), /encodeEntity: unknown option 'stict': did you mean 'strict'\?/);
    did(() => c.encodeEntity({ a: 1 }, { maxdepth: 3 }), /did you mean 'maxDepth'\?/);
    const blob = c.encodeEntity({ a: 1 });
    did(() => c.decodeEntity(blob, { unknwnClass: 'plain' }), /decodeEntity: unknown option 'unknwnClass': did you mean 'unknownClass'\?/);
    did(() => c.decodeEntity(blob, null, { newerVersoin: 'accept' }), /did you mean 'newerVersion'\?/);
    did(() => c.decodeEntity(blob, { formt: format }), /did you mean 'format'\?/);
    did(() => c.decodeEntity(blob, { zzzzzz: 1 }), /unknown option 'zzzzzz': the options are unknownClass, newerVersion/);
    did(() => createCodec({ format, registy: createRegistry() }), /createCodec: unknown option 'registy': did you mean 'registry'\?/);
    const doc = format === 'json' ? '{"a":1}' : c.encodeEntity({ a: 1 });
    did(() => transcode(doc, { from: format, to: format === 'json' ? 'protobuf' : 'json', maxLenght: 9 }),
      /transcode: unknown option 'maxLenght': did you mean 'maxLength'\?/);
    did(() => c.serializable(class Typo {}, { kye: 'x' }), /serializable\(\): unknown option 'kye': did you mean 'key'\?/);
    did(() => c.serializable({ verison: 2 }), /did you mean 'version'\?/);
    // A checked options object passed again is still read; a new one is checked again.
    const ok = { maxDepth: 5 };
    c.encodeEntity([1], ok);
    c.encodeEntity([1], ok);
    throwsCode(() => c.encodeEntity([[[[[[1]]]]]], ok), 'ERR_DEPTH');
    did(() => c.encodeEntity([1], { maxDepth: 5, strcit: true }), /did you mean 'strict'\?/);
    // Every documented name is accepted (undefined: the default).
    for (const name of ENCODE_OPTIONS) c.encodeEntity([1], { [name]: undefined });
    for (const name of DECODE_OPTIONS) c.decodeEntity(blob, { [name]: undefined });
    for (const name of TO_PLAIN_OPTIONS) c.toPlain([1], { [name]: undefined });
    for (const name of FROM_PLAIN_OPTIONS) c.fromPlain(c.toPlain([1]), { [name]: undefined });
  });

}

test('configure() names the closest option too', () => {
  const { configure } = require('../../../js/index.cjs');
  throwsCode(() => configure({ transformKey: 'snake' }), 'ERR_INVALID_OPTION',
    (e) => assert.match(e.message, /unknown option 'transformKey': did you mean 'transformKeys'\?/));
});

// toPlain and fromPlain take encodeEntity's and decodeEntity's options
// but the format and bytes (and fromPlain, legacy): fromPlain's RegExp options too.
test('fromPlain takes decodeEntity\'s options but format and legacy', () => {
  const c = isolatedCodec('json');
  for (const name of DECODE_OPTIONS) assert.strictEqual(FROM_PLAIN_OPTIONS.has(name), name !== 'format' && name !== 'legacy', name);
  for (const name of ENCODE_OPTIONS) assert.strictEqual(TO_PLAIN_OPTIONS.has(name), name !== 'format' && name !== 'bytes', name);
  const plain = c.toPlain([/\p{L}/u]);
  throwsCode(() => c.fromPlain(plain), 'ERR_FORMAT');
  assert.strictEqual(c.fromPlain(plain, { regExpProperties: 'accept' })[0].source, '\\p{L}');
  throwsCode(() => c.fromPlain(plain, { regExpProperties: 'accept', maxRegExpLength: 2 }), 'ERR_TOO_LARGE');
});

test('createRegistry() and createCodec() check their options as the calls do', () => {
  const did = (fn, re) => throwsCode(fn, 'ERR_INVALID_OPTION', (err) => assert.match(err.message, re));
  did(() => createRegistry({ transformkeys: 'snake' }), /createRegistry: unknown option 'transformkeys': did you mean 'transformKeys'\?/);
  did(() => createRegistry({ rename: ['a'] }), /createRegistry\(\): rename must be an object/);
  did(() => createRegistry('snake'), /createRegistry: options must be an object, not string/);
  did(() => createCodec({ renam: {} }), /did you mean 'rename'\?/);
  did(() => createCodec({ transformKeys: 'shout' }), /createCodec\(\): transformKeys must be 'camel', 'pascal', 'snake', 'kebab'/);
  did(() => createCodec({ registry: createRegistry(), rename: { a: 'b' } }), /give them to createRegistry\(\)/);
  did(() => createCodec('json'), /createCodec takes \{ format, registry, transformKeys, rename \}/);
  for (const format of FORMATS) assert.strictEqual(createCodec({ format }).format, format);
});

test('an options object passed again is read again: a changed value counts, a refused one stays refused', () => {
  const c = isolatedCodec('json');
  const deep = [[[[[[1]]]]]];
  const o = { maxDepth: 5 };
  throwsCode(() => c.encodeEntity(deep, o), 'ERR_DEPTH');
  o.maxDepth = 50;
  assert.strictEqual(c.encodeEntity(deep, o), '[[[[[[1]]]]]]');
  o.maxDepth = 0;
  throwsCode(() => c.encodeEntity(deep, o), 'ERR_INVALID_OPTION');
  throwsCode(() => c.encodeEntity(deep, o), 'ERR_INVALID_OPTION');
  delete o.maxDepth;
  o.stict = true;
  throwsCode(() => c.encodeEntity(deep, o), 'ERR_INVALID_OPTION');
  delete o.stict;
  o.strict = true;
  throwsCode(() => c.encodeEntity([() => 1], o), 'ERR_UNSUPPORTED_TYPE');
  const d = { unknownClass: 'plain' };
  const doc = '{"$":"Nobody","a":1}';
  assert.deepStrictEqual(c.decodeEntity(doc, d), { a: 1 });
  d.unknownClass = 'throw';
  throwsCode(() => c.decodeEntity(doc, d), 'ERR_UNKNOWN_CLASS');
});

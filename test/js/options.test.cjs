'use strict';
/*
 * Unknown option names: every options object of the API (encodeEntity,
 * decodeEntity, createCodec, transcode, serializable) refuses them with
 * ERR_INVALID_OPTION naming the closest valid one, in both formats.
 */
const { test } = require('node:test');
const { assert, throwsCode, FORMATS, isolatedCodec } = require('./helpers.cjs');
const { createCodec, createRegistry, transcode } = require('../../js/index.cjs');

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
    for (const name of ['strict', 'maxDepth', 'format']) c.encodeEntity([1], { [name]: undefined });
    for (const name of ['unknownClass', 'newerVersion', 'legacy', 'maxDepth', 'maxBytes', 'maxLength', 'format']) {
      c.decodeEntity(blob, { [name]: undefined });
    }
  });

}

test('configure() names the closest option too', () => {
  const { configure } = require('../../js/index.cjs');
  throwsCode(() => configure({ transformKey: 'snake' }), 'ERR_INVALID_OPTION',
    (e) => assert.match(e.message, /unknown option 'transformKey': did you mean 'transformKeys'\?/));
});

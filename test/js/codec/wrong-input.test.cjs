'use strict';
/*
 * What decodeEntity says about input that is not a document of its format:
 * what it got (null: a cache miss?), or that the bytes are darmok's other
 * format - and no such hint on merely corrupt input. Both formats.
 */
const { test } = require('node:test');
const { assert, throwsCode, FORMATS, isolatedCodec } = require('../helpers.cjs');
const { transcode, DarmokError } = require('../../../js/index.cjs');

for (const format of FORMATS) {
  test(`${format}: decodeEntity of null, undefined, a number, an object names it`, () => {
    const c = isolatedCodec(format);
    const says = (blob, re) => throwsCode(() => c.decodeEntity(blob), 'ERR_UNSUPPORTED_TYPE', (err) => assert.match(err.message, re));
    says(null, /^decodeEntity got null: a cache miss\?/);
    says(undefined, /^decodeEntity got undefined: a cache miss\?/);
    says(42, /^decodeEntity got a number \(42\)\./);
    says({ title: 'x' }, /^decodeEntity got an object \(Object\): a value decoded already/);
    says(new ArrayBuffer(4), /got an object \(ArrayBuffer\): wrap it as new Uint8Array\(buffer\)/);
    says(true, /got a boolean \(true\)/);
  });

  test(`${format}: bytes of the other darmok format are named, corrupt ones are not`, () => {
    const other = format === 'json' ? 'protobuf' : 'json';
    const c = isolatedCodec(format);
    const foreign = isolatedCodec(other);
    const hint = format === 'json'
      ? /this looks like darmok protobuf: decode it with format 'protobuf'/
      : /this looks like darmok JSON: decode it with format 'json'/;
    for (const v of [{ a: [1, 2] }, 'text', 12, null, [new Map([[1n, new Date(0)]])]]) {
      let blob = foreign.encodeEntity(v);
      if (typeof blob === 'string') blob = Buffer.from(blob); // protobuf takes bytes
      assert.throws(() => c.decodeEntity(blob), (err) => err instanceof DarmokError && hint.test(err.message), JSON.stringify(blob));
    }
    // The same doc with a wrong first byte, or a truncated one: no hint.
    const mine = c.encodeEntity({ a: [1, 2] });
    const bytes = Buffer.from(mine);
    const corrupt = [bytes.subarray(0, bytes.length - 1), Buffer.from([0x08, 0x01, 0x00]),
      Buffer.from('{"a":[1,2'), Buffer.from([0x08, 0x02, 0x22, 0x01, 0x04])];
    for (const blob of corrupt) {
      assert.throws(() => c.decodeEntity(blob), (err) => err instanceof DarmokError && !/this looks like/.test(err.message),
        `${format}: ${blob.toString('hex')}`);
    }
    // transcode names a document given in the other format as well.
    const to = format === 'json' ? 'protobuf' : 'json';
    let swapped = foreign.encodeEntity({ a: 1 });
    if (typeof swapped === 'string') swapped = Buffer.from(swapped);
    assert.throws(() => transcode(swapped, { from: format, to }), (err) => hint.test(err.message));
  });

}

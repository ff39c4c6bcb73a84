'use strict';
/*
 * latin-stretch.test.cjs - TapeReader#fromLatin1 (long ASCII strings as
 * substrings of one latin1Slice of a stretch of the tape) under many
 * decodes in a row: random documents mixing long ASCII strings (25-9,000
 * bytes) close together and far apart, member keys, class keys, Map keys,
 * Error messages, non-ASCII strings, in both formats, from a string, a
 * Buffer and a plain Uint8Array, each decoded again after another decode
 * of a different size (sometimes large: memory may grow in between). A
 * stretch kept from an earlier decode (reset()/release() not clearing it)
 * fails it at once.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const { xorshift } = require('../helpers.cjs');
const { createRegistry, createCodec } = require('../../../js/index.cjs');

test('long ASCII strings from bytes: many decodes in a row, other decodes between', () => {
  const rnd = xorshift(0x1a71);
  const registry = createRegistry();
  class K { constructor(a, b) { this['a member key of well over twenty-four bytes'] = a; this.b = b; } }
  registry.serializable(K, { key: 'a class key of over 24 bytes, long enough' });
  const ascii = (n) => {
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(32 + rnd(95));
    return s;
  };
  const al = ['é', '東', '🚀', 'a', 'b', '\u00ff', '\u0100'];
  const other = (n) => {
    let s = '';
    while (s.length < n) s += al[rnd(al.length)];
    return s;
  };
  const longLen = () => {
    const r = rnd(10);
    return r < 5 ? 25 + rnd(100) : r < 8 ? 100 + rnd(1000) : r < 9 ? 3000 + rnd(1200) : 4000 + rnd(5000);
  };
  const doc = (size) => {
    const v = [];
    for (let i = 0; i < size; i++) {
      switch (rnd(11)) {
        case 0: v.push(ascii(longLen())); break;
        case 1: v.push(ascii(longLen()), ascii(longLen()), ascii(rnd(30))); break;
        case 2: v.push(new K(ascii(longLen()), i)); break;
        case 3: v.push({ [ascii(25 + rnd(60))]: ascii(longLen()), s: ascii(rnd(24)) }); break;
        case 4: v.push(new Map([[ascii(25 + rnd(200)), ascii(longLen())], [other(30 + rnd(40)), i]])); break;
        case 5: v.push(other(1 + rnd(300))); break;
        case 6: v.push(Array.from({ length: rnd(40) }, (_, j) => j * 1.5), ascii(longLen())); break;
        case 7: v.push(new Set([ascii(longLen()), other(40)])); break;
        case 8: v.push(new Error(ascii(longLen()))); break;
        case 9: v.push(new Uint8Array(rnd(200)), ascii(longLen())); break;
        default: v.push({ n: i, t: `${ascii(longLen())}\n${ascii(30)}` });
      }
    }
    return v;
  };
  const same = (back, v) => {
    assert.equal(back.length, v.length);
    for (let i = 0; i < v.length; i++) {
      if (v[i] instanceof Error) assert.equal(back[i].message, v[i].message);
      else assert.deepEqual(back[i], v[i], `item ${i}`);
      if (v[i] instanceof K) assert.ok(back[i] instanceof K);
    }
  };
  const codecs = [createCodec({ format: 'protobuf', registry }), createCodec({ format: 'json', registry })];
  // The same layout twice, other bytes: the second decode's strings sit
  // where the first one's stretch was.
  for (const c of codecs) {
    for (let k = 0; k < 4; k++) {
      const v = [ascii(30), ascii(30), ascii(40), { [ascii(26)]: ascii(50) }];
      const blob = c.encodeEntity(v);
      same(c.decodeEntity(typeof blob === 'string' ? Buffer.from(blob) : blob), v);
      same(c.decodeEntity(new Uint8Array(Buffer.from(blob))), v);
    }
  }
  for (let r = 0; r < 6; r++) {
    const v = doc(r === 3 ? 1200 : 1 + rnd(100));
    for (const c of codecs) {
      const blob = c.encodeEntity(v);
      const bytes = typeof blob === 'string' ? Buffer.from(blob) : blob;
      for (const input of [blob, Buffer.from(bytes), new Uint8Array(bytes)]) {
        same(c.decodeEntity(input), v);
        const w = doc(rnd(8) === 0 ? 800 + rnd(1200) : 1 + rnd(20));
        const oc = codecs[rnd(2)];
        same(oc.decodeEntity(oc.encodeEntity(w)), w);
        same(c.decodeEntity(input), v);
      }
    }
  }
});

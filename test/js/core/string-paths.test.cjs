'use strict';
/*
 * string-paths.test.cjs - correctness of the fast paths added for speed (no
 * timing here): the short-ASCII string cache and the Buffer-based string
 * decoding of TapeReader, the 8-bytes-at-a-time string scans of the C
 * writer and reader (every special byte at every offset of a word), and
 * binary values staying copies when the tape sits in a Buffer; the UTF-16
 * side tables of both formats' decoders really used.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const T = require('../../../js/internal.cjs').tape;
const { TapeWriter } = require('../../../js/internal.cjs').tapeWriter;
const { TapeReader } = require('../../../js/internal.cjs').tapeReader;
const { xorshift } = require('../helpers.cjs');
const { encodeEntity, decodeEntity } = require('../../../js/json.cjs');

/* A tape of one string value, read back through a TapeReader over buf. */
function readBack(s, asBuffer) {
  const w = new TapeWriter();
  w.str(s);
  const bytes = w.buf.slice(0, w.pos);
  const u8 = asBuffer ? Buffer.from(bytes) : bytes;
  const r = new TapeReader(u8, new DataView(u8.buffer, u8.byteOffset, u8.byteLength), 0, u8.length);
  return r.str();
}

test('short ASCII cache: colliding and repeated strings come back exact', () => {
  const seen = [];
  for (let i = 0; i < 5000; i++) {
    const s = `k${i.toString(36)}`.slice(0, 1 + (i % 24));
    seen.push(s);
    assert.equal(readBack(s, i % 2 === 0), s);
  }
  // Again, now from the cache (or after eviction by a colliding string).
  for (const s of seen) assert.equal(readBack(s, true), s);
  for (let n = 0; n <= 30; n++) {
    const s = 'abcdefghijklmnopqrstuvwxyz0123456789'.slice(0, n);
    assert.equal(readBack(s, false), s);
    assert.equal(readBack(s, true), s);
  }
});

test('string decoding: ASCII, Latin-1, BMP, astral, lone surrogates, BOM', () => {
  const cases = ['', 'a', 'x'.repeat(25), 'y'.repeat(5000), 'café', 'é'.repeat(30),
    '東京'.repeat(20), '🚀 rocket', '\ufeffBOM kept', 'lone \ud800 high', 'lone \udc00 low',
    `${'a'.repeat(40)}\ud83d`, '\u0000\u0001\u007f\u0080\u00ff\u0100\uffff'];
  for (const s of cases) {
    assert.equal(readBack(s, false), s);
    assert.equal(readBack(s, true), s);
    assert.equal(decodeEntity(encodeEntity(s)), s);
    assert.equal(decodeEntity(encodeEntity({ [s]: s }))[s], s);
  }
});

test('C string scans: every special byte at every offset of an 8-byte word', () => {
  const specials = ['"', '\\', '\n', '\u0000', '\u001f', '\u007f', 'é', '東', '🚀', '\ud800', '\udfff', '$'];
  for (const sp of specials) {
    for (let len = 0; len <= 40; len++) {
      for (let at = 0; at <= len; at++) {
        const s = 'a'.repeat(at) + sp + 'b'.repeat(len - at);
        const out = encodeEntity(s);
        assert.equal(out, JSON.stringify(s));
        assert.equal(decodeEntity(out), s);
        const obj = { [s]: [s, s] };
        assert.deepEqual(decodeEntity(encodeEntity(obj)), obj);
      }
    }
  }
});

test('binary values decoded from WebAssembly memory are copies of their own size', () => {
  const v = { u8: new Uint8Array([1, 2, 3]), f64: new Float64Array([1.5, -2]), buf: Buffer.from('hi'),
    ab: new Uint8Array([9, 8]).buffer };
  const back = decodeEntity(encodeEntity(v));
  assert.deepEqual([...back.u8], [1, 2, 3]);
  assert.equal(back.u8.buffer.byteLength, 3);
  assert.deepEqual([...back.f64], [1.5, -2]);
  assert.equal(back.f64.buffer.byteLength, 16);
  assert.equal(back.buf.toString(), 'hi');
  assert.equal(back.ab.byteLength, 2);
});

/*
 * How many strings run() decodes that really come from TapeReader's
 * method (default: fromUtf16, the core's side table).
 */
function sideTableHits(run, method = 'fromUtf16') {
  const proto = TapeReader.prototype;
  const from = proto[method];
  let hits = 0;
  proto[method] = function (...args) {
    const s = from.apply(this, args);
    if (s !== null) hits++;
    return s;
  };
  try {
    run();
  } finally {
    proto[method] = from;
  }
  return hits;
}

for (const format of ['json', 'protobuf']) test(`UTF-16 side table (${format}): non-ASCII strings in every place a str can sit`, () => {
  const { serializable, encodeEntity, decodeEntity } = require(`../../../js/${format}.cjs`);
  class Ünïcode { constructor() { this.$é = 'ß'; this['$$東'] = '京'; this.plain = 'x'; } }
  const U = serializable(Ünïcode, { key: 'Ünï€ode' });
  const err = new RangeError('méssage ✓');
  err.extra = '🚀';
  const values = [
    { '$é': 1, b: 'ü' }, { '$$é': 'two dollars', '東': '京' }, { a: '$é', '$é': 'later key' },
    Object.assign(Object.create(null), { '$ñ': 'ñ', 'ñ': '$ñ' }),
    new Map([['ключ', 'значение'], [{ 'ä': 'ö' }, ['å', 'æ']]]), new Set(['ø', 'œ']),
    /ünï(c)ödé/giu, err, new U(), [new U(), '\ud800', 'a\udc00b', '𝄞', '\ufeff'],
    { name: 'ñame first' },
  ];
  const backs = [];
  const hits = sideTableHits(() => {
    for (const v of values) backs.push(decodeEntity(encodeEntity(v)));
  });
  assert.ok(hits >= 30, `${hits} strings from the side table`);
  for (const [i, v] of values.entries()) {
    const back = backs[i];
    if (v instanceof Error) {
      assert.equal(back.name, 'RangeError');
      assert.equal(back.message, v.message);
      assert.equal(back.extra, '🚀');
    } else {
      assert.deepEqual(back, v);
    }
  }
  // A string read twice (the Error read-ahead going back) still decodes.
  const odd = decodeEntity(format === 'json' ? '{"$Error":{"name":"Érror","message":"m"}}'
    : encodeEntity(Object.assign(new Error('m'), { name: 'Érror' })));
  assert.equal(odd.name, 'Érror');
});

/*
 * ASCII strings over 24 bytes (the core's DK_U16_SRC_ASCII_MIN) are slices of
 * one string made for many, not one latin1Slice each: from bytes (protobuf,
 * JSON in a Buffer) of one Latin-1 string of a stretch of the tape
 * (fromLatin1), from a JSON string of the text (side-table entries; one
 * with an escape has none: the tape's). 24-byte ones are made from the
 * tape bytes through the short-string cache.
 */
for (const input of ['protobuf', 'json-buffer', 'json-string']) test(`long ASCII strings (${input}): slices of one string, from 25 bytes on`, () => {
  const format = input === 'protobuf' ? 'protobuf' : 'json';
  const { createRegistry, createCodec } = require('../../../js/index.cjs');
  const registry = createRegistry();
  const codec = createCodec({ format, registry });
  const L25 = 'exactly twenty-five bytes';
  const L24 = 'exactly twenty-four byte';
  class Long { constructor() { this[L25] = 'a value of some forty ASCII characters.'; this.short = L24; } }
  registry.serializable(Long, { key: 'a class key over twenty-five' });
  const err = new Error('an error message over twenty-five bytes');
  const value = [
    L25, L24, { [L25]: L24, [L24]: L25 }, new Long(), new Long(),
    new Map([[L25, 'a Map value that is long enough'], ['k', L24]]),
    new Set([L25 + '!']), 12345678901234567890123456789n, /a regexp source over twenty-five/g, err,
  ];
  // L25 as a value, a member key, a member value and a Map key; the
  // instances' long values (x2); the Map and Set values, the BigInt's 29
  // digits, the RegExp source, the Error's message and stack: 12. Then in
  // JSON each instance's class key and L25 key (4); in protobuf the class
  // key once, the instances' L25 key being a key reference to the member
  // key read in full before, and the Map key L25 none: a string reference
  // to the text the member value L25 (the first reference) made.
  const want = format === 'protobuf' ? 12 : 16;
  const blob = codec.encodeEntity(value);
  const decode = () => codec.decodeEntity(input === 'json-buffer' ? Buffer.from(blob) : blob);
  let back;
  let latin = 0;
  const table = sideTableHits(() => { latin = sideTableHits(() => { back = decode(); }, 'fromLatin1'); });
  if (input === 'json-string') {
    // From the tape: the Error's stack, which has escapes (\n), and the
    // first string, whose units the text's UTF-8 overwrote in place.
    assert.equal(table + latin, want, `${table} strings from the side table, ${latin} from the tape`);
    assert.ok(latin <= 2, `${latin} strings from the tape`);
  } else {
    assert.equal(table, 0, `${table} strings from the side table`);
    assert.equal(latin, want, `${latin} strings from the tape`);
  }
  // The long ASCII strings the tape holds from two latin1Slice calls: the
  // first string alone, then a stretch of 4 KiB from the next, which
  // follows it closely, for all the others; in protobuf a third, the first
  // string again for the string references to it (made once, alone: the
  // stretch stays).
  const slice = Buffer.prototype.latin1Slice;
  let calls = 0;
  Buffer.prototype.latin1Slice = function (...args) { calls++; return slice.apply(this, args); };
  try {
    assert.deepEqual(decode().slice(0, 9), value.slice(0, 9));
  } finally {
    Buffer.prototype.latin1Slice = slice;
  }
  assert.ok(calls <= (format === 'protobuf' ? 3 : 2), `${calls} latin1Slice calls`);
  assert.equal(back[9].message, err.message);
  assert.deepEqual(back.slice(0, 9), value.slice(0, 9));
  assert.ok(back[3] instanceof Long && back[4] instanceof Long);
});

/*
 * Long ASCII strings from bytes are substrings of one latin1Slice of up to
 * 4 KiB of the tape (TapeReader#fromLatin1): strings of every length
 * around that, and past it, between other values, so that stretches end
 * before strings of every size; keys and class keys too.
 */
test('long ASCII strings from bytes: across the ends of the Latin-1 stretches, and longer than one', () => {
  const { createRegistry, createCodec } = require('../../../js/index.cjs');
  const registry = createRegistry();
  class K { constructor(a, b) { this['a key of well over twenty-four bytes'] = a; this.b = b; } }
  registry.serializable(K, { key: 'a class key of over 24 bytes' });
  const rnd = xorshift(77);
  const ascii = (n) => {
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(32 + rnd(95));
    return s;
  };
  const value = [];
  for (let i = 0; i < 400; i++) {
    const n = i % 50 === 7 ? 4000 + rnd(5000) : 25 + rnd(300);
    value.push(i % 3 ? ascii(n) : new K(ascii(n), i), i, { [ascii(25 + (i % 7))]: i });
  }
  for (const format of ['protobuf', 'json']) {
    const codec = createCodec({ format, registry });
    const blob = codec.encodeEntity(value);
    for (const input of format === 'json' ? [blob, Buffer.from(blob)] : [blob]) {
      const back = codec.decodeEntity(input);
      assert.deepEqual(back, value);
      assert.ok(back[0] instanceof K);
    }
  }
});

/*
 * The side table is read a chunk at a time (TapeReader#fromUtf16: one
 * ucs2Slice of whole entries, up to 16 KiB, its strings substrings of it).
 * Strings of every length around the chunk's size (8 Ki units) and far
 * past it, many of them, so that chunks end before entries of every size.
 * Every format and input kind that makes such entries; the reader lets go
 * of its chunk after the call.
 */
test('UTF-16 side table read in chunks: strings across chunk ends, and longer than one', () => {
  const rnd = xorshift(0x5eed);
  const alphabet = ['a', 'é', '東', '🚀', ' ', 'ß', 'z'];
  const make = (n) => {
    let s = '';
    while (s.length < n) s += alphabet[rnd(alphabet.length)];
    return s;
  };
  const strings = [];
  for (let i = 0; i < 400; i++) strings.push(make(1 + rnd(700)));
  for (const n of [8187, 8188, 8189, 8192, 8193, 32768, 70000]) strings.push(make(n), make(3 + rnd(40)));
  for (let i = 0; i < 200; i++) strings.push(make(1 + rnd(2000)));
  strings.push(make(100) + '\ud800' + make(100), '\udc00'); // lone surrogates between them
  const proto = TapeReader.prototype;
  const fromUtf16 = proto.fromUtf16;
  const slice = Buffer.prototype.ucs2Slice;
  for (const format of ['json', 'json bytes', 'protobuf']) {
    const codec = require(`../../../js/${format === 'protobuf' ? 'protobuf' : 'json'}.cjs`);
    let blob = codec.encodeEntity(strings);
    if (format === 'json bytes') blob = Buffer.from(blob);
    let hits = 0;
    let slices = 0;
    let reader = null;
    proto.fromUtf16 = function (at) {
      reader = this;
      const s = fromUtf16.call(this, at);
      if (s !== null) hits++;
      return s;
    };
    Buffer.prototype.ucs2Slice = function (a, b) {
      slices++;
      return slice.call(this, a, b);
    };
    let back;
    try {
      back = codec.decodeEntity(blob);
    } finally {
      proto.fromUtf16 = fromUtf16;
      Buffer.prototype.ucs2Slice = slice;
    }
    assert.equal(back.length, strings.length, format);
    for (let i = 0; i < strings.length; i++) assert.ok(back[i] === strings[i], `${format}: string ${i} of length ${strings[i].length}`);
    assert.ok(hits >= strings.length - 2, `${format}: ${hits} strings from the side table`);
    // a chunk is full to 16 KiB less one entry of at most 4 KiB (8 + 2 x 2000),
    // and a string longer than a chunk (8188 units and more) is one call
    // and can end the chunk before it early
    const units = strings.filter((x) => x.length <= 2000).reduce((a, x) => a + 8 + 2 * x.length, 0);
    const long = strings.filter((x) => x.length > 2000).length;
    const most = Math.ceil(units / (12 * 1024)) + 2 * long + 2;
    assert.ok(slices <= most, `${format}: ${slices} ucs2Slice calls for ${hits} strings (at most ${most})`);
    assert.equal(reader.chunk, '', `${format}: the reader let go of its chunk`);
  }
});

/*
 * A side table of 1 MiB and more is read in chunks of 1 MiB (tape-reader.cjs
 * BIG_CHUNK_BYTES) while that much is left, its last stretch in chunks of
 * 16 KiB. The big chunks stay under 0xFBEE9 units, from which Node makes
 * external strings (whose memory pressure made large decodes slower).
 * ~9 MiB of strings of up to 4,000 units, and one of 1.5 Mi units (longer
 * than a big chunk: sliced alone) among them: every string exact, across
 * big chunk ends and the switch back to small ones, and the big chunks
 * really made.
 */
test('UTF-16 side table over 1 MiB: big chunks, then small ones', () => {
  const rnd = xorshift(0xb16);
  const alphabet = ['a', 'é', '東', '🚀', ' ', 'ß', 'z', 'q'];
  const make = (n) => {
    let s = '';
    while (s.length < n) s += alphabet[rnd(alphabet.length)];
    return s;
  };
  const strings = [];
  let units = 0;
  while (units < 4.5 * 1024 * 1024) {
    const x = make(1 + rnd(4000));
    strings.push(x);
    units += x.length;
    if (strings.length === 700) strings.push(make(1.5 * 1024 * 1024));
  }
  const EXTERN = 0xfbee9 * 2; // bytes of Node's smallest external UCS-2 string
  const slice = Buffer.prototype.ucs2Slice;
  for (const format of ['json bytes', 'protobuf']) {
    const codec = require(`../../../js/${format === 'protobuf' ? 'protobuf' : 'json'}.cjs`);
    let blob = codec.encodeEntity(strings);
    if (format === 'json bytes') blob = Buffer.from(blob);
    const calls = [];
    Buffer.prototype.ucs2Slice = function (a, b) {
      calls.push(b - a);
      return slice.call(this, a, b);
    };
    let back;
    try {
      back = codec.decodeEntity(blob);
    } finally {
      Buffer.prototype.ucs2Slice = slice;
    }
    assert.equal(back.length, strings.length, format);
    for (let i = 0; i < strings.length; i++) assert.ok(back[i] === strings[i], `${format}: string ${i} of length ${strings[i].length}`);
    const BIG = 1024 * 1024;
    const LONG = 2 * 1.5 * 1024 * 1024; // the long string's bytes
    const big = calls.filter((n) => n > 16 * 1024 && n !== LONG);
    // ~12 MiB of entries (non-ASCII strings; a few of only 'a', 'z', ' ' and
    // 'q' are not in the table): big chunks, each whole entries up to 1 MiB
    // (entries of at most 8 KiB; the one before the long string ends
    // early), and the long string alone
    assert.ok(big.length >= 8, `${format}: ${big.length} big chunks: ${big}`);
    assert.ok(big.every((n) => n <= BIG && n < EXTERN), `${format}: ${big}`);
    assert.ok(big.filter((n) => n > BIG - 8 * 1024).length >= big.length - 1, `${format}: ${big}`);
    assert.equal(calls.filter((n) => n === LONG).length, 1, `${format}: the long string sliced alone`);
    assert.ok(calls.length < big.length + 1 + BIG / (8 * 1024), `${format}: ${calls.length} ucs2Slice calls`);
  }
});

test('encode output as UTF-16 (non-ASCII) or Latin-1 (ASCII) equals JSON.stringify', () => {
  const words = ['plain', 'café', '東京', '🚀', 'a"b', 'tab\there', 'x'.repeat(100), '\u2028', '\u007f'];
  for (let n = 0; n < 300; n += 7) {
    const arr = [];
    for (let i = 0; i < n; i++) arr.push(words[(i * 7 + n) % words.length] + i);
    assert.equal(encodeEntity(arr), JSON.stringify(arr));
    assert.deepEqual(decodeEntity(encodeEntity(arr)), arr);
  }
  // One non-ASCII character at every byte of the output, in outputs of
  // every length up to 200 bytes: the core's scan for one (dk_wasm.c
  // has_high: 64, 16, 8 bytes at a time, then single bytes) misses none.
  for (let len = 1; len <= 198; len++) {
    for (let at = 0; at < len; at++) {
      const s = `${'a'.repeat(at)}é${'b'.repeat(len - at - 1)}`;
      assert.equal(encodeEntity(s), JSON.stringify(s));
    }
  }
  const big = { list: Array.from({ length: 20000 }, (_, i) => (i % 3 ? `ascii ${i}` : `ünï ${i} 🚀`)) };
  assert.equal(encodeEntity(big), JSON.stringify(big));
  assert.deepEqual(decodeEntity(encodeEntity(big)), big);
});

test('a large tape buffer is kept while large values come, dropped after a small one', () => {
  const { acquire } = require('../../../js/internal.cjs').encode;
  const big = Array.from({ length: 400000 }, (_, i) => `item ${i} ünï`);
  const json = JSON.stringify(big);
  assert.equal(encodeEntity(big), json);
  assert.equal(encodeEntity(big), json);
  const enc = acquire();
  const grown = enc.w.buf.length;
  enc.release();
  assert.ok(grown > 8 * 1024 * 1024, `tape buffer kept (${grown} bytes)`);
  assert.equal(encodeEntity({ a: 1 }), '{"a":1}');
  const enc2 = acquire();
  const after = enc2.w.buf.length;
  enc2.release();
  assert.ok(after < grown, 'dropped after a small value');
  assert.equal(encodeEntity(big), json);
});

test('protobuf key references: repeated member keys everywhere decode to the same keys', () => {
  const pb = require('../../../js/protobuf.cjs');
  const registry = pb.createRegistry();
  const codec = pb.createCodec({ format: 'protobuf', registry });
  class Kéy { constructor(i) { this.k = i; this['é'] = -i; } }
  codec.serializable(Kéy);
  const odd = (name) => Object.assign(new Error('m'), { name, k: 'own' });
  const nullProto = (i) => Object.assign(Object.create(null), { k: i, 'é': 'x' });
  const values = [
    // first, errors whose name is not a string: the read-ahead of the
    // error's class reads the key "name" in full, then goes back
    [Object.assign(new Error('n'), { name: 42 }), Object.assign(new Error('n'), { name: 42 }),
      { k: 1, 'é': 2 }, { 'é': 3, k: 4 }, new Kéy(5), new Kéy(6), nullProto(7), nullProto(8),
      new Map([['k', { k: 'map value' }]]), odd('RangeError'), odd('RangeError'),
      { name: 'plain', message: 'x', k: 0 }],
    Array.from({ length: 50 }, (_, i) => ({ id: i, title: `t${i}`, nested: { id: i, k: [i] } }))
  ];
  // Count the references the core wrote: keys read from the reader's list.
  const { TapeReader } = require('../../../js/internal.cjs').tapeReader;
  const key = TapeReader.prototype.key;
  let refs = 0;
  TapeReader.prototype.key = function () {
    const at = this.pos;
    const header = this.buf[at] | (this.buf[at + 1] << 8);
    if (this.hasKeyRefs() && (header & 3) === T.STR_KEYREF) refs++;
    return key.call(this);
  };
  try {
    for (const v of values) {
      const back = codec.decodeEntity(codec.encodeEntity(v));
      const again = require('../../../js/json.cjs').createCodec({ registry }).decodeEntity(
        require('../../../js/json.cjs').createCodec({ registry }).encodeEntity(v));
      // The JSON decode reads keys in full: the same graph, key for key.
      assert.deepEqual(back, again);
      if (v.length === 50) assert.deepEqual(back, v);
      else {
        assert.ok(back[0].name === 42 && back[1].name === 42 && back[1].message === 'n');
        assert.deepEqual(back.slice(2, 9), v.slice(2, 9));
        assert.ok(back[9] instanceof RangeError && back[9].k === 'own' && back[10].k === 'own');
        assert.deepEqual(back[11], v[11]);
      }
    }
  } finally {
    TapeReader.prototype.key = key;
  }
  assert.ok(refs > 150, `${refs} key references`);
});

test('protobuf decode shapes: member keys written in full are matched on their bytes, then referenced', () => {
  const pb = require('../../../js/protobuf.cjs');
  const registry = pb.createRegistry();
  const codec = pb.createCodec({ format: 'protobuf', registry });
  class Row { constructor(i) { this.id = i; this.label = `r${i}`; this.when = new Date(i); } }
  codec.serializable(Row);
  const rows = Array.from({ length: 20 }, (_, i) => new Row(i));
  const bytes = codec.encodeEntity(rows);
  for (let i = 0; i < 3; i++) codec.decodeEntity(bytes); // the class gets its decode shape
  const { TapeReader } = require('../../../js/internal.cjs').tapeReader;
  const key = TapeReader.prototype.key;
  const full = [];
  let refs = 0;
  TapeReader.prototype.key = function () {
    const header = this.buf[this.pos] | (this.buf[this.pos + 1] << 8);
    if ((header & 3) === T.STR_KEYREF) refs++;
    else full.push(header >>> T.STR_SHIFT);
    return key.call(this);
  };
  let back;
  try {
    back = codec.decodeEntity(bytes);
  } finally {
    TapeReader.prototype.key = key;
  }
  assert.deepEqual(back, rows);
  assert.ok(back.every((r) => r instanceof Row));
  // Only the class key "Row" goes through key(), in full once and as a
  // reference for the 19 rows after the first; "id", "label" and "when"
  // are matched on their tape bytes by the shape, which numbers them, and
  // their references are read by the shape too.
  assert.deepEqual(full, [3]);
  assert.equal(refs, 19);

  // Rows whose keys leave the shape after a reference (another order, a
  // field fewer or more) go field by field from there, keys intact.
  const odd = rows.slice(0, 6).map((r) => new Row(r.id));
  delete odd[2].id;
  odd[2].id = 2; // keys label, when, id
  delete odd[3].when; // id, label
  odd[4].extra = 'x'; // id, label, when, extra
  odd[5].label = undefined;
  const mixed = codec.decodeEntity(codec.encodeEntity([rows[0], ...odd, rows[1]]));
  assert.deepEqual(mixed, [rows[0], ...odd, rows[1]]);
  assert.deepEqual(Object.keys(mixed[3]), ['label', 'when', 'id']);
  assert.deepEqual(Object.keys(mixed[4]), ['id', 'label']);
  assert.deepEqual(Object.keys(mixed[5]), ['id', 'label', 'when', 'extra']);
});

test('identity around the encoder\'s switch from a short array to a Map: every shared object found again', () => {
  for (const format of ['json', 'protobuf']) {
    const { encodeEntity, decodeEntity } = require(`../../../js/${format}.cjs`);
    for (let n = 28; n <= 70; n++) {
      // n objects (the array itself is index 0), each referred to again
      // after all of them, and the last one pointing back at the first.
      const objs = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? [i] : i % 3 === 1 ? { i } : new Map([[i, i]])));
      objs[n - 1] = { back: objs[0] };
      const value = [...objs, ...objs.slice().reverse(), objs];
      value.push(value); // index 0, the root, found again after the switch
      const back = decodeEntity(encodeEntity(value));
      assert.strictEqual(back[back.length - 1], back, `${format} n=${n}: the root refers to itself`);
      for (let i = 0; i < n; i++) {
        assert.strictEqual(back[i], back[2 * n - 1 - i], `${format} n=${n}: object ${i} shared`);
        assert.strictEqual(back[2 * n][i], back[i], `${format} n=${n}: object ${i} in the inner array`);
      }
      assert.strictEqual(back[n - 1].back, back[0]);
      assert.deepEqual(back[1], { i: 1 });
    }
  }
});

/*
 * Long string values go into the tape as UTF-16 (T_STR16) and the core
 * makes them WTF-8 (16 units at a time with WebAssembly SIMD): random
 * strings of every kind of code unit, lone surrogates included, around the
 * 32-unit threshold and the 16-unit blocks, give JSON.stringify's text in
 * the JSON format and come back exact from both formats.
 */
test('long string values through T_STR16: random code units in both formats', () => {
  const protobuf = require('../../../js/protobuf.cjs');
  const rnd = xorshift(0x2545f491);
  for (let t = 0; t < 3000; t++) {
    const len = 24 + rnd(276);
    let s = '';
    while (s.length < len) {
      const r = rnd(12);
      if (r < 7) s += String.fromCharCode(0x20 + rnd(0x5f));
      else if (r < 8) s += String.fromCharCode(0x80 + rnd(0x780));
      else if (r < 10) s += String.fromCharCode(0x800 + rnd(0xf800)); // lone surrogates too
      else if (r < 11) s += '\ud83d\ude00';
      else s += String.fromCharCode(rnd(0x20)); // control characters: escaped in JSON
    }
    const value = [s, { s }];
    assert.equal(encodeEntity(value), JSON.stringify(value), `case ${t}`);
    assert.deepStrictEqual(decodeEntity(encodeEntity(value)), value, `case ${t}`);
    assert.deepStrictEqual(protobuf.decodeEntity(protobuf.encodeEntity(value)), value, `case ${t}`);
  }
});

test('without Node\'s Buffer (as in a browser) encode and decode give the same text and values', () => {
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  // A child process where Buffer is gone before darmok loads: TextEncoder,
  // TextDecoder and plain Uint8Arrays only (and no T_STR16 on the tape, so
  // the core's output is UTF-8 with a UTF-16 copy when not ASCII).
  const script = `
    globalThis.Buffer = undefined;
    const dk = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'index.cjs'))});
    const long = 'long text, café and 東京 and 🚀, "quoted"\\n';
    const values = ['ascii only', 'é', [long], { k: 'ü', v: long + '\\ud800', w: [long, 'x'.repeat(40)] },
      { d: new Date(0), n: 1.5, s: 'x'.repeat(100) }];
    const out = values.map((v) => { const s = dk.encodeEntity(v); return [s, JSON.stringify(dk.decodeEntity(s))]; });
    process.stdout.write(JSON.stringify({ buffer: typeof Buffer, out }));`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { buffer, out } = JSON.parse(run.stdout);
  assert.equal(buffer, 'undefined');
  const long = 'long text, café and 東京 and 🚀, "quoted"\n';
  const values = ['ascii only', 'é', [long], { k: 'ü', v: `${long}\ud800`, w: [long, 'x'.repeat(40)] },
    { d: new Date(0), n: 1.5, s: 'x'.repeat(100) }];
  values.forEach((v, i) => {
    assert.equal(out[i][0], encodeEntity(v), `value ${i}: the same text as with Buffer`);
    assert.equal(out[i][1], JSON.stringify(decodeEntity(encodeEntity(v))), `value ${i}: the same value back`);
  });
});

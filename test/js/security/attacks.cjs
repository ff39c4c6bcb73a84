'use strict';
/*
 * Hostile documents of a chosen size, for hostile-bounds.test.cjs, which
 * runs each in a child process (attack-child.cjs) at two sizes. Each
 * builder takes n, the attack's own size unit, and returns
 * { blob, options, call } for decodeEntity, encodeEntity or transcode.
 */

const M64 = (1n << 64n) - 1n;

function inverseOdd(a) {
  // Newton's iteration for the inverse of an odd a modulo 2^64.
  let x = a;
  for (let i = 0; i < 6; i++) x = (x * (2n - a * x)) & M64;
  return x;
}

function unXorShift(y, s) {
  let x = y;
  for (let k = s; k < 64; k += s) x = y ^ (x >> BigInt(s));
  return x;
}

/* The 64-bit key V8's ComputeLongHash maps to h (that function is a bijection). */
function longHashInverse(h) {
  h = unXorShift(h, 22);
  h = (h * inverseOdd(65n)) & M64;
  h = unXorShift(h, 11);
  h = (h * inverseOdd(21n)) & M64;
  h = unXorShift(h, 31);
  return ((h + 1n) * inverseOdd((1n << 18n) - 1n)) & M64;
}

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

/* n distinct doubles (not int32s) whose V8 hashes share their low 20 bits. */
function collidingDoubles(n) {
  const out = [];
  for (let i = 1n; out.length < n; i++) {
    u64[0] = longHashInverse((i << 20n) | 0x5a5an);
    const d = f64[0];
    if (Number.isFinite(d) && !Number.isInteger(d)) out.push(d);
  }
  return out;
}

/* The inverse of x -> x ^ (x >>> s) on 32 bits. */
function unXorShift32(y, s) {
  let x = y;
  for (let k = s; k < 32; k += s) x = (y ^ (x >>> s)) >>> 0;
  return x;
}

/* The inverse of x -> x * a on 32 bits, a odd. */
function inverseOdd32(a) {
  let x = a;
  for (let i = 0; i < 5; i++) x = Math.imul(x, 2 - Math.imul(a, x)) >>> 0;
  return x;
}

/* The int32 key whose V8 ComputeUnseededHash (before its last mask) is h. */
function intHashInverse(h) {
  h = unXorShift32(h >>> 0, 16);
  h = Math.imul(h, inverseOdd32(2057)) >>> 0;
  h = unXorShift32(h, 4);
  h = Math.imul(h, inverseOdd32(5)) >>> 0;
  h = unXorShift32(h, 12);
  // h = ~h + (h << 15) = h * (2^15 - 1) - 1
  return Math.imul((h + 1) >>> 0, inverseOdd32(32767)) | 0;
}

/* n distinct int32 keys whose V8 hashes share their low 16 bits. */
function collidingInts(n) {
  return Array.from({ length: n }, (_, i) => intHashInverse(((i + 1) << 16) | 0x1234));
}

function varint(out, v) {
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

/* A darmok.Document (proto/darmok.proto) from its kinds, counts and texts. */
function pbDocument(kinds, counts, texts) {
  const out = [0x08, 0x01];
  for (const [field, values] of [[4, kinds], [5, counts]]) {
    const body = [];
    for (const v of values) varint(body, v);
    out.push((field << 3) | 2);
    varint(out, body.length);
    for (const b of body) out.push(b);
  }
  const parts = [Buffer.from(out)];
  for (const t of texts) {
    const head = [0x42];
    varint(head, t.length);
    parts.push(Buffer.from(head), t);
  }
  return Buffer.concat(parts);
}

/*
 * The protobuf document of most decoded size per byte: an array of one
 * string of `len` bytes (text: one character of it) and back-references
 * to it (2 bytes each) filling `bytes` in all, up to the decoded-size
 * bound (64 times the input plus 1 MiB).
 */
function pbStringRefs(bytes, len, ch) {
  const text = Buffer.from(ch.repeat(Math.ceil(len / Buffer.byteLength(ch))).slice(0, len));
  const refs = Math.max(1, Math.floor((bytes - text.length - 16) / 2));
  return pbDocument([9, 6, ...new Array(refs).fill(7)], [refs + 1, ...new Array(refs).fill(0)], [text]);
}

/*
 * An array of n objects { <64 x U+0001>: null } sharing one key-only
 * shape, as darmok's protobuf encoder writes it (3 bytes an object), built
 * here so that the child's memory is the decoder's alone.
 */
function pbKeyRefs(n) {
  const field = (no, body) => {
    const head = [(no << 3) | 2];
    varint(head, body.length);
    return Buffer.concat([Buffer.from(head), body]);
  };
  const packed = (values) => {
    const body = [];
    for (const v of values) varint(body, v);
    return Buffer.from(body);
  };
  const kinds = new Array(2 * n + 1).fill(1); // KIND_NULL
  kinds[0] = 9; // KIND_ARRAY
  for (let i = 0; i < n; i++) kinds[1 + 2 * i] = 11; // KIND_OBJECT
  const counts = new Array(n + 1).fill(0); // shape 0
  counts[0] = n;
  return Buffer.concat([
    Buffer.from([0x08, 0x01]),
    field(2, Buffer.alloc(64, 1)),
    field(3, field(3, Buffer.from([0]))),
    field(4, packed(kinds)),
    field(5, packed(counts))
  ]);
}

const builders = {
  /* Issue 23, 1: n fields each referring to one n-pair "f_map" array. */
  tanagraMapRefs(n) {
    const pairs = Array.from({ length: n }, (_, i) => [i, i]);
    const fields = [];
    fields.push('"f0_map":' + JSON.stringify(pairs));
    for (let i = 1; i < n; i++) fields.push(`"f${i}_map":{"$ref":1}`);
    return { call: 'decode', blob: `{"_serializationKey":"T",${fields.join(',')}}`, register: 'T' };
  },
  tanagraBufferRefs(n) {
    const data = Array.from({ length: n }, (_, i) => i & 255);
    const fields = ['"f0_buffer":{"type":"Buffer","data":' + JSON.stringify(data) + '}'];
    for (let i = 1; i < n; i++) fields.push(`"f${i}_buffer":{"type":"Buffer","data":{"$ref":2}}`);
    return { call: 'decode', blob: `{"_serializationKey":"T",${fields.join(',')}}`, register: 'T' };
  },
  tanagraUint8Refs(n) {
    const obj = {};
    for (let i = 0; i < n; i++) obj[i] = i & 255;
    const fields = ['"f0_uint8array":' + JSON.stringify(obj)];
    for (let i = 1; i < n; i++) fields.push(`"f${i}_uint8array":{"$ref":1}`);
    return { call: 'decode', blob: `{"_serializationKey":"T",${fields.join(',')}}`, register: 'T' };
  },
  /* Issue 23, 5: n nested tanagra instances, maxDepth above them. */
  tanagraDeep(n) {
    return {
      call: 'decode',
      blob: '{"_serializationKey":"T","a":'.repeat(n) + '1' + '}'.repeat(n),
      options: { maxDepth: n + 1 },
      register: 'T'
    };
  },
  /* Issue 23, 2: the longest RegExp of property escapes the defaults let through. */
  regexpProperties(n) {
    return { call: 'decode', blob: JSON.stringify({ $RegExp: ['\\p{RGI_Emoji}'.repeat(n), 'iv'] }) };
  },
  /* Issue 23, 3. */
  setDoubles(n) {
    return { call: 'decode', blob: JSON.stringify({ $Set: collidingDoubles(n) }) };
  },
  mapInts(n) {
    return { call: 'decode', blob: JSON.stringify({ $Map: collidingInts(n).map((k) => [k, 0]) }) };
  },
  setBigInts(n) {
    return { call: 'decode', blob: JSON.stringify({ $Set: Array.from({ length: n }, (_, i) => ({ $BigInt: String((BigInt(i + 1) << 64n) + 5n) })) }) };
  },
  /* Issue 23, 6: n KiB of string references, decoded; transcoded to JSON. */
  pbRefsAscii(n) {
    return { call: 'decode', format: 'protobuf', blob: pbStringRefs(n * 1024, 120, 'a') };
  },
  pbRefsWide(n) {
    return { call: 'decode', format: 'protobuf', blob: pbStringRefs(n * 1024, 120, '\u00e9') };
  },
  /* The longest ASCII text still copied into the tape, not referred to. */
  pbRefsShortAscii(n) {
    return { call: 'decode', format: 'protobuf', blob: pbStringRefs(n * 1024, 24, 'a') };
  },
  pbRefsLong(n) {
    return { call: 'decode', format: 'protobuf', blob: pbStringRefs(n * 1024, 4096, '\u00e9') };
  },
  pbRefsTranscode(n) {
    return { call: 'transcode', blob: pbStringRefs(n * 1024, 120, '\u0001'), options: { from: 'protobuf', to: 'json' } };
  },
  /* Issue 32, 1: n objects sharing one key of 64 x U+0001 (3 bytes of
     protobuf each, a key reference; 387 bytes of JSON), transcoded. */
  pbKeyRefsTranscode(n) {
    return { call: 'transcode', blob: pbKeyRefs(n), options: { from: 'protobuf', to: 'json' } };
  },
  /* The costliest RegExps within the defaults: n distinct sources of 1,000 characters of \\w under iu. */
  regexpWordClass(n) {
    return { call: 'decode', blob: JSON.stringify(Array.from({ length: n }, (_, i) => ({ $RegExp: ['\\w'.repeat(497) + String(1000 + i), 'iu'] }))) };
  },
  tanagraMapDoubles(n) {
    return { call: 'decode', blob: JSON.stringify({ _serializationKey: 'T', m_map: collidingDoubles(n).map((k) => [k, 1]) }), register: 'T' };
  }
};

module.exports = { builders, pbDocument, pbStringRefs, pbKeyRefs, collidingDoubles, collidingInts, longHashInverse };

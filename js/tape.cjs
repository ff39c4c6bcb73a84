'use strict';
/*
 * tape.cjs - the tape: the one contract between darmok's JavaScript layer and
 * its C core. wasm/dk_tape.h specifies it - the ops and their payloads, str
 * headers, referenceable values, key references - and defines its constants;
 * the build generates those into js/dk_abi.cjs, which this file re-exports.
 *
 * Encoding: JS walks the object graph once and writes a tape; one call into
 * the core turns it into output bytes. Decoding: one call parses and validates
 * the bytes and writes a tape of the same layout; JS rebuilds objects from it.
 */

// Ops, str header flags and DK_T_BYTES kinds, payloads as in wasm/dk_tape.h.
const {
  T_UNDEF, T_NULL, T_FALSE, T_TRUE, T_INT, T_F64, T_BIGINT, T_STR, T_ARRAY,
  T_HOLE, T_OBJECT, T_NULLPROTO, T_INSTANCE, T_MAP, T_SET, T_DATE, T_REGEXP,
  T_BYTES, T_ERROR, T_REF, T_STR16, T_STRREF,
  STR_ASCII, STR_WTF8, STR_KEYREF, STR_SHIFT, STR_MAX,
  BYTES_BUFFER, BYTES_ARRAYBUFFER, BYTES_DATAVIEW, BYTES_INT8, BYTES_UINT8,
  BYTES_UINT8C, BYTES_INT16, BYTES_UINT16, BYTES_INT32, BYTES_UINT32,
  BYTES_FLOAT32, BYTES_FLOAT64, BYTES_BIGINT64, BYTES_BIGUINT64, BYTES_KIND_COUNT,
  // UTF-16 side table (wasm/dk_internal.h): the flag of an entry whose units stay in the text, and
  // the shortest ASCII string of a JSON string's decode that gets such an entry
  U16_SRC, U16_SRC_ASCII_MIN
} = require('./dk_abi.cjs');
/*
 * String values of this many units and more go as T_STR: UTF-8 is about
 * half the tape, which matters more than speed for strings this long.
 */
const STR16_LONG = 1 << 16;

/* The typed-array constructor of each BYTES kind, by kind (null: not a typed array). */
const TYPED_ARRAYS = new Array(BYTES_KIND_COUNT).fill(null);
TYPED_ARRAYS[BYTES_INT8] = Int8Array;
TYPED_ARRAYS[BYTES_UINT8] = Uint8Array;
TYPED_ARRAYS[BYTES_UINT8C] = Uint8ClampedArray;
TYPED_ARRAYS[BYTES_INT16] = Int16Array;
TYPED_ARRAYS[BYTES_UINT16] = Uint16Array;
TYPED_ARRAYS[BYTES_INT32] = Int32Array;
TYPED_ARRAYS[BYTES_UINT32] = Uint32Array;
TYPED_ARRAYS[BYTES_FLOAT32] = Float32Array;
TYPED_ARRAYS[BYTES_FLOAT64] = Float64Array;
TYPED_ARRAYS[BYTES_BIGINT64] = BigInt64Array;
TYPED_ARRAYS[BYTES_BIGUINT64] = BigUint64Array;

const { DarmokError } = require('./errors.cjs');

const utf8Encoder = new TextEncoder();
// ignoreBOM: a string that starts with U+FEFF must keep it.
const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });

const isWellFormed = typeof String.prototype.isWellFormed === 'function'
  ? (s) => s.isWellFormed()
  : (s) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?:^|[^\ud800-\udbff])[\udc00-\udfff]/.test(s);

const MIN_CAPACITY = 64 * 1024;
/* A shared writer that grew past this is dropped back after the call. */
const KEEP_CAPACITY = 8 * 1024 * 1024;
/*
 * Strings shorter than this are written by a JS loop (charCodeAt per
 * character); longer ones by one call into Node: string values as UTF-16
 * (ucs2Write, T_STR16), keys by utf8Write. For flat ASCII strings the two
 * cost the same at about 36 characters; a rope (a string built by +) or a
 * non-ASCII string is cheaper through the call well below that.
 */
const SHORT_STRING = 32;

/*
 * TapeWriter: a growable byte buffer that tapes are written into. The bytes
 * are buf[0..pos). Every write method reserves its own room first, so callers
 * never check capacity. Owned by one encode at a time (see encode.cjs).
 */
class TapeWriter {
  constructor(capacity = MIN_CAPACITY) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
    /* buf as a Node Buffer (utf8Write), or null without Node. */
    this.nb = writerBufferOf(this.buf);
    this.pos = 0;
  }

  /* Make room for n more bytes. */
  reserve(n) {
    if (this.pos + n > this.buf.length) this.grow(this.pos + n);
  }

  grow(need) {
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    let buf;
    try {
      buf = new Uint8Array(size);
    } catch {
      throw new DarmokError('ERR_MEMORY', `cannot grow the tape to ${size} bytes`);
    }
    buf.set(this.buf.subarray(0, this.pos));
    this.buf = buf;
    this.view = new DataView(buf.buffer);
    this.nb = writerBufferOf(buf);
  }

  /*
   * After a call. A buffer grown past KEEP_CAPACITY is kept while calls keep
   * filling a quarter of it (regrowing it every call from MIN_CAPACITY
   * copied ~2x the tape per call on large values), and dropped after a
   * call that used less, so one huge value does not pin its memory.
   */
  reset() {
    const used = this.pos;
    this.pos = 0;
    if (this.buf.length > KEEP_CAPACITY && used < this.buf.length / 4) {
      this.buf = new Uint8Array(MIN_CAPACITY);
      this.view = new DataView(this.buf.buffer);
      this.nb = writerBufferOf(this.buf);
    }
  }

  op(op) {
    if (this.pos + 1 > this.buf.length) this.grow(this.pos + 1);
    this.buf[this.pos++] = op;
  }

  /* An op followed by a u32 (array length, counts, REF, HOLE). */
  opU32(op, v) {
    if (this.pos + 5 > this.buf.length) this.grow(this.pos + 5);
    this.buf[this.pos] = op;
    this.view.setUint32(this.pos + 1, v, true);
    this.pos += 5;
  }

  u32(v) {
    if (this.pos + 4 > this.buf.length) this.grow(this.pos + 4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }

  /* Overwrite a u32 written earlier at `at` (counts known only afterwards). */
  patchU32(at, v) {
    this.view.setUint32(at, v, true);
  }

  int(v) {
    if (this.pos + 5 > this.buf.length) this.grow(this.pos + 5);
    this.buf[this.pos] = T_INT;
    this.view.setInt32(this.pos + 1, v, true);
    this.pos += 5;
  }

  /* A number value: T_INT when it is an int32 (not -0), else T_F64. */
  num(v) {
    if ((v | 0) === v && (v !== 0 || 1 / v > 0)) this.int(v);
    else this.opF64(T_F64, v);
  }

  /* An op followed by an f64 (T_F64, T_DATE). */
  opF64(op, v) {
    if (this.pos + 9 > this.buf.length) this.grow(this.pos + 9);
    this.buf[this.pos] = op;
    this.view.setFloat64(this.pos + 1, v, true);
    this.pos += 9;
  }

  /*
   * A str payload (header + bytes). Short strings take a JS loop that stays
   * on the ASCII fast path; others go through encodeInto when well-formed and
   * through the WTF-8 loop when they hold a lone surrogate.
   */
  str(s) {
    const n = s.length;
    if (n >= STR_MAX / 3) return this.longStr(s);
    if (this.pos + 4 + n * 3 > this.buf.length) this.grow(this.pos + 4 + n * 3);
    const buf = this.buf;
    const at = this.pos;
    const start = at + 4;
    if (n < SHORT_STRING) {
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === n) {
        this.view.setUint32(at, (n << STR_SHIFT) | STR_ASCII, true);
        this.pos = start + n;
        return;
      }
    }
    let len;
    let flags = 0;
    if (isWellFormed(s)) {
      // Buffer#utf8Write allocates nothing; encodeInto makes a subarray
      // and a result object per string.
      const nb = this.nb;
      len = nb !== null ? nb.utf8Write(s, start, buf.length - start)
        : utf8Encoder.encodeInto(s, buf.subarray(start)).written;
      if (len === n) flags = STR_ASCII;
    } else {
      len = writeWtf8(s, buf, start) - start;
      flags = STR_WTF8;
    }
    this.view.setUint32(at, (len << STR_SHIFT) | flags, true);
    this.pos = start + len;
  }

  /*
   * A string value (op and payload). Long ones go as T_STR16: one
   * Buffer#ucs2Write, a copy, where String#isWellFormed and utf8Write
   * cost about 3 ns a character on a two-byte string; the core makes them
   * WTF-8.
   */
  strValue(s) {
    const n = s.length;
    if (n < SHORT_STRING || n >= STR16_LONG || this.nb === null) {
      this.op(T_STR);
      this.str(s);
      return;
    }
    const need = 5 + 2 * n;
    if (this.pos + need > this.buf.length) this.grow(this.pos + need);
    const at = this.pos;
    this.buf[at] = T_STR16;
    this.view.setUint32(at + 1, n, true);
    this.nb.ucs2Write(s, at + 5, 2 * n);
    this.pos = at + need;
  }

  /* A string whose worst case (3 bytes per unit) could pass 2^30 bytes. */
  longStr(s) {
    const bytes = isWellFormed(s) ? utf8Encoder.encode(s) : null;
    const len = bytes !== null ? bytes.length : wtf8Length(s);
    if (len >= STR_MAX) {
      throw new DarmokError('ERR_TOO_LARGE', `a string of ${len} bytes is over the limit of ${STR_MAX - 1}`);
    }
    this.reserve(4 + len);
    const flags = bytes === null ? STR_WTF8 : (len === s.length ? STR_ASCII : 0);
    this.view.setUint32(this.pos, (len << STR_SHIFT) | flags, true);
    if (bytes !== null) this.buf.set(bytes, this.pos + 4);
    else writeWtf8(s, this.buf, this.pos + 4);
    this.pos += 4 + len;
  }

  /* Raw bytes (the payload of T_BYTES, after its kind and length). */
  bytes(u8) {
    this.reserve(u8.length);
    this.buf.set(u8, this.pos);
    this.pos += u8.length;
  }
}

/*
 * The little-endian int32 at buf[p..p+4): tape headers and side-table
 * words, read from bytes (cheaper than a DataView call where the reader
 * reads one here and there; V8 inlines it). >>> 0 for the unsigned value.
 */
function i32At(buf, p) {
  return buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24);
}

/*
 * Where the side-table entry at p ends, from its unit count (the int32 at
 * p + 4): u32 offset, u32 count, the units; or, when the count has its
 * high bit (DK_U16_SRC), u32 offset, u32 count, u32 index into the text.
 */
function entryEnd(p, units) {
  return (units & U16_SRC) !== 0 ? p + 12 : p + 8 + 2 * units;
}

/* A Buffer over all of u8 for utf8Write, or null without Node's Buffer. */
function writerBufferOf(u8) {
  if (typeof Buffer !== 'function' || typeof Buffer.prototype.utf8Write !== 'function') return null;
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}

/*
 * Write s as WTF-8 into buf from `at` (room for 3 bytes per code unit must be
 * there); return the position after the last byte. Surrogate pairs become one
 * 4-byte sequence; a lone surrogate becomes ED A0..BF xx.
 */
function writeWtf8(s, buf, at) {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      buf[at++] = c;
    } else if (c < 0x800) {
      buf[at++] = 0xc0 | (c >> 6);
      buf[at++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          buf[at++] = 0xf0 | (c >> 18);
          buf[at++] = 0x80 | ((c >> 12) & 0x3f);
          buf[at++] = 0x80 | ((c >> 6) & 0x3f);
          buf[at++] = 0x80 | (c & 0x3f);
          continue;
        }
      }
      buf[at++] = 0xe0 | (c >> 12);
      buf[at++] = 0x80 | ((c >> 6) & 0x3f);
      buf[at++] = 0x80 | (c & 0x3f);
    }
  }
  return at;
}

function wtf8Length(s) {
  let len = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) len += 1;
    else if (c < 0x800) len += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n &&
             (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { len += 4; i++; }
    else len += 3;
  }
  return len;
}

/*
 * Decode WTF-8 bytes buf[at..end) that the core (or TapeWriter) produced.
 * Trusts its input: sequences are complete and minimal; no validation here.
 */
function readWtf8Unsafe(buf, at, end) {
  let s = '';
  const units = [];
  while (at < end) {
    const b = buf[at];
    let c;
    if (b < 0x80) { c = b; at += 1; }
    else if (b < 0xe0) { c = ((b & 0x1f) << 6) | (buf[at + 1] & 0x3f); at += 2; }
    else if (b < 0xf0) {
      c = ((b & 0x0f) << 12) | ((buf[at + 1] & 0x3f) << 6) | (buf[at + 2] & 0x3f);
      at += 3;
    } else {
      c = ((b & 0x07) << 18) | ((buf[at + 1] & 0x3f) << 12) |
          ((buf[at + 2] & 0x3f) << 6) | (buf[at + 3] & 0x3f);
      at += 4;
      c -= 0x10000;
      units.push(0xd800 + (c >> 10));
      c = 0xdc00 + (c & 0x3ff);
    }
    units.push(c);
    if (units.length >= 4096) {
      s += String.fromCharCode.apply(null, units);
      units.length = 0;
    }
  }
  return s + String.fromCharCode.apply(null, units);
}

/*
 * Node's Buffer makes strings from bytes far faster than TextDecoder does
 * for the many short strings of a tape (no per-call setup, and a one-byte
 * string straight from Latin-1 bytes): about 2.3x on non-ASCII text, 4x on
 * ASCII. Elsewhere TextDecoder does the work.
 */
const NodeBuffer = typeof Buffer === 'function' &&
  typeof Buffer.prototype.utf8Slice === 'function' &&
  typeof Buffer.prototype.latin1Slice === 'function' ? Buffer : null;

/* A Buffer over the bytes of u8 (same indexes), or null without Node. */
function nodeBufferOf(u8) {
  if (NodeBuffer === null) return null;
  if (u8 instanceof NodeBuffer) return u8;
  return NodeBuffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}

/*
 * Short ASCII strings (keys, tags, small values) repeat: the same few keys
 * come back once per object. They are looked up in a small direct-mapped
 * cache keyed by their bytes, so a repeated key costs a hash and a compare
 * and comes back as the very same string (already internalized by its
 * first use as a property key) instead of a new one. Strings are immutable,
 * so sharing them across decodes is safe. The longer ones of a JSON
 * string's decode come from the core's side table instead.
 */
const SHORT_MAX = U16_SRC_ASCII_MIN - 1;
const CACHE_SIZE = 1024; // a power of two
const shortCache = new Array(CACHE_SIZE).fill('');
/*
 * The one-character ASCII strings, by code: no hash, no compare. Map keys
 * and short tags are often one character.
 */
const ONE_CHAR = [];
for (let c = 0; c < 128; c++) ONE_CHAR.push(String.fromCharCode(c));

/*
 * Most bytes of the side table made one string at a time
 * (TapeReader#fromUtf16): 8 Ki units. A decoded string that is a slice of
 * its chunk keeps the chunk alive, so this bounds what one kept string can
 * hold; 16 KiB keeps nearly all the gain of larger chunks, far under V8's
 * large-object size (128 KiB), where ucs2Slice costs much more a unit.
 */
const CHUNK_BYTES = 16 * 1024;

/*
 * A large side table is read in chunks of 1 MiB instead: while at least
 * that much of it is left from the string being read. Such a chunk is a
 * string of V8's large-object space, which a collection of the young
 * generation never copies (16 KiB chunks were copied, with the value made
 * so far, by every scavenge during a large decode), and it stays under
 * 0xFBEE9 units (EXTERN_APEX in Node's src/string_bytes.cc), from which
 * Node makes a UCS-2 slice an external string: the 2.5 MiB external chunks
 * this reader made before were each reported to V8 as external memory, whose
 * pressure brought full collections and a young generation kept small, so
 * that most of a decode was promoted. A table
 * under 1 MiB reads in CHUNK_BYTES. The price: a string kept from such a
 * document keeps up to 1 MiB.
 */
const BIG_CHUNK_BYTES = 1024 * 1024; // 0.5 Mi units < 0xFBEE9

/*
 * The stretch of tape bytes made one Latin-1 string (TapeReader#fromLatin1),
 * and how close after the last long ASCII string the next must start for
 * one to be made.
 */
const LATIN_CHUNK_BYTES = 4 * 1024;
const LATIN_NEAR_BYTES = 64;

/*
 * The string of the ASCII bytes buf[start .. start+len), len <= SHORT_MAX;
 * nb: buf as a Node Buffer, or null. A string not in the cache is made by
 * concatenating its characters when short, by one latin1Slice when longer
 * (about 70 ns flat, where concatenation costs ~9 ns a character).
 */
function shortAscii(buf, nb, start, len) {
  if (len === 1) return ONE_CHAR[buf[start]];
  let h = len;
  for (let i = 0; i < len; i++) h = Math.imul(h ^ buf[start + i], 0x9e3779b1);
  const slot = (h >>> 22) & (CACHE_SIZE - 1);
  const cached = shortCache[slot];
  if (cached.length === len) {
    let i = 0;
    while (i < len && cached.charCodeAt(i) === buf[start + i]) i++;
    if (i === len) return cached;
  }
  let s = '';
  if (len > 8 && nb !== null) s = nb.latin1Slice(start, start + len);
  else for (let i = 0; i < len; i++) s += String.fromCharCode(buf[start + i]);
  shortCache[slot] = s;
  return s;
}

/* A latinLast no string is near: a small integer, as the field's others are. */
const FAR_BACK = -0x3fffffff;

/* TapeReader#refKeep of a tape no core described (decodeTape): every
   referenceable value may be named by a reference. */
const KEEP_ALL = 0xFFFFFFFF;

/*
 * TapeReader: reads a tape from buf[pos..end). buf is a Uint8Array over any
 * ArrayBuffer (a JS buffer, or WebAssembly memory); view a DataView over the
 * same ArrayBuffer. The tape is trusted: the core validated it, or this
 * process wrote it. Reads do not check bounds.
 */
class TapeReader {
  constructor(buf, view, pos, end) {
    this.buf = buf;
    this.view = view;
    this.pos = pos;
    this.end = end;
    /* buf as a Node Buffer (same indexes), or null. */
    this.nb = nodeBufferOf(buf);
    /* The core's UTF-16 side table (see useUtf16), when there is one. */
    this.base = 0;
    this.u16At = 0;
    this.u16End = 0;
    /* The JSON text (a string) that side-table entries may point into. */
    this.text = '';
    /* A stretch of the side table made one string (see fromUtf16), and
       the bytes buf[chunkAt..chunkEnd) it was made of. */
    this.chunk = '';
    this.chunkAt = 0;
    this.chunkEnd = 0;
    /* A stretch of the tape made one Latin-1 string (see fromLatin1), and
       the bytes buf[latinAt..latinEnd) it was made of. */
    this.latin = '';
    this.latinAt = 0;
    this.latinEnd = 0;
    /* Where the last long ASCII string read from the tape ended. */
    this.latinLast = -LATIN_NEAR_BYTES - 1;
    /* The member keys read in full so far, when the tape has key
       references (useRefs); else null. */
    this.keys = null;
    /* The strings T_STRREF named so far, by the tape offset they name
       (see useRefs), or null. tapeAt: where the tape starts in buf. */
    this.named = null;
    this.tapeAt = 0;
    /* How many of the tape's referenceable values its references need
       (the highest index one names, plus one; 0: none), when the core
       that wrote it said so (its result word); KEEP_ALL when not known. */
    this.refKeep = KEEP_ALL;
  }

  /*
   * Read another tape: as a new TapeReader(buf, view, pos, end) would.
   * The core reuses one reader for every decode (core.cjs rebuildOutput).
   */
  reset(buf, view, pos, end) {
    if (buf !== this.buf) {
      this.buf = buf;
      this.nb = nodeBufferOf(buf);
    }
    this.view = view;
    this.pos = pos;
    this.end = end;
    this.base = 0;
    this.u16At = 0;
    this.u16End = 0;
    this.chunkAt = 0;
    this.latinAt = 0;
    this.latinLast = -LATIN_NEAR_BYTES - 1;
    this.refKeep = KEEP_ALL;
    this.release();
  }

  /* Let go of every string the reader holds (after a decode). */
  release() {
    this.keys = null;
    this.named = null;
    this.text = '';
    this.chunk = '';
    this.chunkEnd = 0;
    this.latin = '';
    this.latinEnd = 0;
  }

  /* The tape may hold key and string references (dk_tape.h): see key()
     and strRef(). */
  useRefs() {
    this.keys = [];
    this.tapeAt = this.pos;
  }

  /*
   * A T_STRREF payload (u32 tape offset of an earlier str): that str's
   * string, made once for all the references to it, so a document of
   * many references to one long text costs one string, not one each.
   */
  strRef() {
    const at = this.u32();
    if (this.named === null) this.named = new Map(); // on the first: most tapes have none
    let s = this.named.get(at);
    if (s === undefined) {
      const pos = this.pos;
      const latinLast = this.latinLast;
      this.pos = this.tapeAt + at;
      // Not near the last one (see fromLatin1): an earlier string outside
      // the stretch is sliced alone, and the stretch stays.
      this.latinLast = FAR_BACK;
      s = this.str();
      this.pos = pos;
      this.latinLast = latinLast;
      this.named.set(at, s);
    }
    return s;
  }

  /*
   * A member key or class key str. With key references: a reference
   * (header k << STR_SHIFT | STR_KEYREF, no bytes: the numbering is
   * wasm/dk_tape.h's, "Key references") or a key in full, which is
   * remembered as the next. A caller that reads a key and
   * goes back must put keys.length back too. The decode shapes (shapes.cjs
   * makeDecodeShape) number their keys of up to SHORT_MAX ASCII bytes the
   * same way inline: a change to the numbering goes in both
   * (test/js/shape-keys.test.cjs compares them with the JSON decode).
   */
  key() {
    if (this.keys === null) return this.str();
    const buf = this.buf;
    const at = this.pos;
    const header = i32At(buf, at);
    if ((header & STR_KEYREF) === STR_KEYREF) {
      this.pos = at + 4;
      return this.keys[header >>> STR_SHIFT];
    }
    const s = this.str();
    this.keys.push(s);
    return s;
  }

  /*
   * Read strings from the core's UTF-16 side table buf[at..end)
   * (dk_json_read_ex): entries u32 tape offset (from base, where the tape
   * starts in buf), u32 units, the units (non-ASCII strings); or u32 tape
   * offset, u32 units | U16_SRC, u32 index of the first of them in
   * text, the JSON text the tape was read from (a string; only a decode of
   * a string has such entries, for non-ASCII strings and ASCII ones over
   * SHORT_MAX bytes). In tape order. Needs Node's Buffer (ucs2Slice), else
   * it is ignored.
   *
   * A string of the second kind is text.substring(): V8 makes a string of
   * 13 or more characters a slice of text, no copy, so the decoded value
   * keeps text alive while it keeps such a string (as any JS slice() does;
   * JSON.parse copies).
   *
   * The units of the first kind are read a chunk of the table at a time:
   * one ucs2Slice of whole entries, up to CHUNK_BYTES (their headers
   * included: never read), each string a substring() of it. A Buffer slice
   * call costs 70-130 ns whatever its length, a substring ~13, so a
   * document of many strings pays the call once a chunk instead of once a
   * string. V8 makes the substrings of 13 or more characters slices too:
   * such a string keeps its chunk alive (at most CHUNK_BYTES: it and the
   * strings after it; BIG_CHUNK_BYTES in a large table), as above. A
   * string longer than a chunk is sliced alone.
   */
  useUtf16(base, at, end, text) {
    if (this.nb === null) return;
    this.base = base;
    this.u16At = at;
    this.u16End = end;
    this.text = text === undefined ? '' : text;
  }

  /*
   * The string of the str whose header is at `at`, from its side-table
   * entry; null when it has none (then it is decoded from its bytes).
   * Entries of strings never read (the core may drop a key it read) are
   * skipped; a string read a second time (a read-ahead that went back)
   * finds its entry gone and is decoded from its bytes.
   */
  fromUtf16(at) {
    const buf = this.buf;
    const end = this.u16End;
    const want = at - this.base;
    let p = this.u16At;
    while (p < end) {
      const entryAt = i32At(buf, p) >>> 0;
      if (entryAt > want) break;
      const units = i32At(buf, p + 4);
      const from = p + 8;
      p = entryEnd(p, units);
      this.u16At = p;
      if (entryAt !== want) continue;
      if ((units & U16_SRC) !== 0) {
        const first = i32At(buf, from) >>> 0;
        return this.text.substring(first, first + (units & ~U16_SRC));
      }
      if (p > this.chunkEnd) {
        // Past the chunk: the next one starts at this string's units and
        // takes the whole entries after it that fit (none when this one
        // is already longer than a chunk).
        const limit = from + (end - from >= BIG_CHUNK_BYTES ? BIG_CHUNK_BYTES : CHUNK_BYTES);
        let cut = p;
        while (cut < end) {
          const next = entryEnd(cut, i32At(buf, cut + 4));
          if (next > limit) break;
          cut = next;
        }
        this.chunk = this.nb.ucs2Slice(from, cut);
        this.chunkAt = from;
        this.chunkEnd = cut;
      }
      return this.chunk.substring((from - this.chunkAt) >>> 1, (p - this.chunkAt) >>> 1);
    }
    return null;
  }

  /*
   * The ASCII string of the tape bytes buf[start..end), longer than
   * SHORT_MAX. Where such strings come close together (this one within
   * LATIN_NEAR_BYTES of the last one's end: records of ASCII text), a
   * substring of one latin1Slice of the tape from it on, up to
   * LATIN_CHUNK_BYTES, of which the long ASCII strings after it are
   * substrings too: a Buffer slice call costs 70-130 ns whatever its
   * length, a substring ~13. Else a latin1Slice of its own: a stretch made
   * for a lone string (a Post's title) would copy, and its string keep
   * alive, kilobytes of tape for tens of bytes (10,000 Posts: +8 MiB of
   * heap a decode, 1.2x -> 1.0x native JSON). Either way a one-byte string
   * (the core's UTF-16 would make a two-byte one: twice the memory, slower
   * to stringify, hash or measure). A string of a stretch keeps it alive,
   * as a string of the UTF-16 side table keeps its chunk.
   */
  fromLatin1(start, end) {
    const near = start - this.latinLast <= LATIN_NEAR_BYTES;
    this.latinLast = end;
    if (start < this.latinAt || end > this.latinEnd) {
      if (!near || end - start > LATIN_CHUNK_BYTES) return this.nb.latin1Slice(start, end);
      const stop = start + LATIN_CHUNK_BYTES < this.end ? start + LATIN_CHUNK_BYTES : this.end;
      this.latin = this.nb.latin1Slice(start, stop);
      this.latinAt = start;
      this.latinEnd = stop;
    }
    return this.latin.substring(start - this.latinAt, end - this.latinAt);
  }

  u8() {
    return this.buf[this.pos++];
  }

  u32() {
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  i32() {
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }

  f64() {
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  str() {
    const buf = this.buf;
    const at = this.pos;
    const header = i32At(buf, at);
    const len = header >>> STR_SHIFT;
    const start = at + 4;
    const end = start + len;
    this.pos = end;
    const ascii = (header & STR_ASCII) !== 0;
    if (ascii && len <= SHORT_MAX) return shortAscii(buf, this.nb, start, len);
    // From the side table: non-ASCII strings, and from a JSON string its
    // ASCII ones too (from DK_U16_SRC_ASCII_MIN = SHORT_MAX + 1 bytes on).
    if (this.u16At < this.u16End) {
      const s = this.fromUtf16(at);
      if (s !== null) return s;
    }
    if (ascii) {
      // ASCII is Latin-1: one-byte string, no decoding.
      if (this.nb !== null) return this.fromLatin1(start, end);
      return utf8Decoder.decode(buf.subarray(start, end));
    }
    if ((header & STR_WTF8) !== 0) return readWtf8Unsafe(buf, start, end);
    if (this.nb !== null) return this.nb.utf8Slice(start, end);
    return utf8Decoder.decode(buf.subarray(start, end));
  }

  /*
   * A T_STR16 payload (u32 n, n UTF-16 units), lone surrogates kept. Only
   * in tapes this process's TapeWriter wrote, which writes them only with
   * Node's Buffer (strValue): nb is there.
   */
  str16() {
    const n = this.u32();
    const at = this.pos;
    this.pos = at + 2 * n;
    return this.nb.ucs2Slice(at, at + 2 * n);
  }

  /*
   * n raw bytes, as a plain Uint8Array view into the tape (copy before
   * keeping it). Never a Buffer: Buffer's slice() does not copy.
   */
  bytes(n) {
    const at = this.pos;
    this.pos += n;
    const buf = this.buf;
    return new Uint8Array(buf.buffer, buf.byteOffset + at, n);
  }
}

/*
 * The count of backslashes just before index i of JSON text (a string or
 * its bytes): odd, the character at i is escaped. For the two places that
 * look at raw text outside the core (core.cjs, tanagra.cjs).
 */
function backslashesBefore(text, i) {
  let k = i;
  if (typeof text === 'string') {
    while (k > 0 && text.charCodeAt(k - 1) === 0x5c) k--;
  } else {
    while (k > 0 && text[k - 1] === 0x5c) k--;
  }
  return i - k;
}

module.exports = {
  T_UNDEF, T_NULL, T_FALSE, T_TRUE, T_INT, T_F64, T_BIGINT, T_STR, T_ARRAY,
  T_HOLE, T_OBJECT, T_NULLPROTO, T_INSTANCE, T_MAP, T_SET, T_DATE, T_REGEXP,
  T_BYTES, T_ERROR, T_REF, T_STR16, T_STRREF,
  STR_ASCII, STR_WTF8, STR_KEYREF, STR_SHIFT, STR_MAX, SHORT_MAX,
  BYTES_BUFFER, BYTES_ARRAYBUFFER, BYTES_DATAVIEW, BYTES_INT8, BYTES_UINT8,
  BYTES_UINT8C, BYTES_INT16, BYTES_UINT16, BYTES_INT32, BYTES_UINT32,
  BYTES_FLOAT32, BYTES_FLOAT64, BYTES_BIGINT64, BYTES_BIGUINT64, BYTES_KIND_COUNT,
  TYPED_ARRAYS,
  TapeWriter, TapeReader, KEEP_ALL,
  utf8Encoder, utf8Decoder, isWellFormed, writeWtf8, readWtf8Unsafe, nodeBufferOf, backslashesBefore
};

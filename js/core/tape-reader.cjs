'use strict';
/*
 * tape-reader.cjs - TapeReader, which reads a tape the core wrote (the
 * layout: wasm/dk_tape.h) for decode.cjs: its strings from the core's UTF-16
 * side table, from Latin-1 stretches of the tape or from a small cache, and
 * its key references.
 */

const { STR_ASCII, STR_WTF8, STR_KEYREF, STR_SHIFT } = require('./tape.cjs');
// UTF-16 side table (wasm/darmok.h, at DK_U16_SRC): the flag of an entry whose units stay in the
// text, the sizes of an entry's head and of such an entry, and the shortest ASCII string of a JSON
// string's decode that gets one.
const { U16_SRC, U16_HEAD, U16_SRC_ENTRY, U16_SRC_ASCII_MIN } = require('./dk_abi.cjs');
const { utf8Decoder, readWtf8Unsafe, nodeBufferOf } = require('./text.cjs');

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
  return (units & U16_SRC) !== 0 ? p + U16_SRC_ENTRY : p + U16_HEAD + 2 * units;
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
 * (TapeReader#fromUtf16). A decoded string that is a slice of its chunk
 * keeps the chunk alive, so this bounds what one kept string can hold; it
 * stays under V8's large-object size, where ucs2Slice costs more a unit.
 */
const CHUNK_BYTES = 16 * 1024;

/*
 * A large side table is read in chunks of BIG_CHUNK_BYTES instead, while
 * at least that much of it is left from the string being read. Such a
 * chunk is a string of V8's large-object space, which a collection of the
 * young generation never copies (every scavenge of a large decode would
 * copy smaller chunks, with the value made so far); and it stays under
 * 0xFBEE9 units (EXTERN_APEX in Node's src/string_bytes.cc), from which
 * Node makes a UCS-2 slice an external string, whose memory V8 counts as
 * external pressure: full collections, and a young generation kept small.
 * The price: a string kept from such a document keeps a whole chunk alive.
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
 * concatenating its characters when short, by one latin1Slice when longer:
 * the call costs the same whatever the length, concatenation a character.
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
 *
 * What the decode shapes (shapes.cjs makeDecodeShape) use of it, and
 * nothing else: buf and pos (read, and pos set past a key matched on its
 * bytes), key(), hasKeyRefs(), keyRefAt(p) and keyRead(s).
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
    /* While a kept tape is rebuilt: its strings read before (useMemo), and
       the place in them where the next str is looked for; else null. */
    this.memo = null;
    this.memoNext = 0;
  }

  /*
   * Read another tape: as a new TapeReader(buf, view, pos, end) would.
   * The core reuses one reader for every decode (instance.cjs rebuildOutput).
   */
  reset(buf, view, pos, end, nb) {
    if (buf !== this.buf) {
      this.buf = buf;
      this.nb = nb === undefined ? nodeBufferOf(buf) : nb;
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
    this.memo = null;
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
   * (keyRefAt) or a key in full, which takes the next number (keyRead).
   * A caller that reads a key and goes back puts the numbering back too
   * (keysRead, unreadKeys).
   */
  key() {
    if (this.keys === null) return this.str();
    const named = this.keyRefAt(this.pos);
    if (named !== null) {
      this.pos += 4;
      return named;
    }
    return this.keyRead(this.str());
  }

  /* Whether keys may be key references (useRefs): protobuf tapes. */
  hasKeyRefs() {
    return this.keys !== null;
  }

  /* How many keys have been read in full: a mark for unreadKeys. */
  keysRead() {
    return this.keys === null ? 0 : this.keys.length;
  }

  /* Forgets the keys read in full since keysRead() said n, for a caller that reads ahead and goes back. */
  unreadKeys(n) {
    if (this.keys !== null) this.keys.length = n;
  }

  /*
   * Key references, numbered as wasm/dk_tape.h "Key references" says, here
   * alone for JS (key() and the decode shapes use these two): with
   * hasKeyRefs(), the key the str at p references (header
   * k << STR_SHIFT | STR_KEYREF, no bytes: the k-th key read in full), or
   * null when that str is a key in full.
   */
  keyRefAt(p) {
    const buf = this.buf;
    if ((buf[p] & STR_KEYREF) !== STR_KEYREF) return null;
    return this.keys[i32At(buf, p) >>> STR_SHIFT];
  }

  /* A key s read in full (with hasKeyRefs()): it takes the next number. Returns s. */
  keyRead(s) {
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
   * call costs the same whatever its length, and many times a substring, so
   * a document of many strings pays the call once a chunk instead of once a
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
      const from = p + U16_HEAD;
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
   * SHORT_MAX, as a one-byte string (the core's UTF-16 would make a
   * two-byte one: twice the memory, and slower to stringify, hash or
   * measure). Where such strings come close together (this one within
   * LATIN_NEAR_BYTES of the last one's end: records of ASCII text), it is a
   * substring of one latin1Slice of the tape from it on, up to
   * LATIN_CHUNK_BYTES, of which the long ASCII strings after it are
   * substrings too, so one slice call serves many. Else it is a latin1Slice
   * of its own: a stretch made for a lone string (a Post's title) would
   * copy, and its string keep alive, kilobytes of tape for tens of bytes. A
   * string of a stretch keeps it alive, as a string of the UTF-16 side
   * table keeps its chunk.
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

  /*
   * Strings come from memo (a StringMemo) where it has the str being read,
   * and are added to it while it is open: see StringMemo.
   */
  useMemo(memo) {
    this.memo = memo;
    this.memoNext = 0;
  }

  /*
   * str() with a memo: the string memo holds for the str at pos, or the
   * one read from its bytes (added to memo when it is open and the str
   * lies past the last one it has, so that its offsets stay in order).
   * Reads go forward in tape order but for a read-ahead or a string
   * reference that goes back, and a rebuild may skip strs an earlier one
   * read (a key a decode shape matches on its bytes): the look-up starts
   * at the place the last one was found.
   */
  memoStr() {
    const memo = this.memo;
    const at = this.pos;
    const ats = memo.ats;
    const n = ats.length;
    let i = this.memoNext;
    while (i < n && ats[i] < at) i++;
    if (i < n && ats[i] === at) {
      this.memoNext = i + 1;
      this.pos = at + 4 + (i32At(this.buf, at) >>> STR_SHIFT);
      return memo.strings[i];
    }
    const s = this.strFromBytes();
    if (memo.open && i === n) {
      ats.push(at);
      memo.strings.push(s);
      this.memoNext = n + 1;
    }
    return s;
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
    if (this.memo !== null) return this.memoStr();
    return this.strFromBytes();
  }

  /* The string of the str at pos, made from the tape (and side table). */
  strFromBytes() {
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
 * StringMemo: the strings one rebuild of a kept tape (decode.cjs KeptTape)
 * read, by the tape offsets of their strs, in tape order, for the
 * rebuilds after it: the same bytes give the same string, and strings are
 * immutable values, so handing the same one to every rebuild is
 * indistinguishable from making it again. Open while the first rebuild
 * fills it. A first rebuild that failed leaves the memo part filled; the
 * next rebuild closes it and takes what it holds, whose strings are right,
 * and makes the rest.
 */
class StringMemo {
  constructor() {
    this.ats = [];
    this.strings = [];
    this.open = true;
  }

  /* What it holds in memory, in bytes, at most: a slot in each list per string, and two bytes a character. */
  get bytes() {
    let n = 16 * this.ats.length;
    for (const s of this.strings) n += 2 * s.length;
    return n;
  }
}

module.exports = { TapeReader, StringMemo, KEEP_ALL, SHORT_MAX };

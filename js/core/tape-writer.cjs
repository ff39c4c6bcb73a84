'use strict';
/*
 * tape-writer.cjs - TapeWriter, the growable buffer encode.cjs writes a
 * tape into (the layout: wasm/dk_tape.h), and how it writes strings.
 */

const {
  T_INT, T_F64, T_STR, T_STR16, STR_ASCII, STR_WTF8, STR_SHIFT, STR_MAX
} = require('./tape.cjs');
const { utf8Encoder, isWellFormed, writeWtf8, wtf8Length, nodeBufferOf } = require('./text.cjs');
const { DarmokError } = require('./errors.cjs');

/*
 * String values of this many units and more go as T_STR: UTF-8 is about
 * half the tape, which matters more than speed for strings this long.
 */
const STR16_LONG = 1 << 16;

const MIN_CAPACITY = 64 * 1024;
/* A shared writer that grew past this is dropped back after the call. */
const KEEP_CAPACITY = 8 * 1024 * 1024;
/*
 * Strings shorter than this are written by a JS loop (charCodeAt per
 * character); longer ones by one call into Node: string values as UTF-16
 * (ucs2Write, T_STR16), keys by utf8Write. The bound is a little under
 * the length where the two cost the same on flat ASCII strings: a rope (a
 * string built by +) or a non-ASCII string is cheaper through the call.
 */
const SHORT_STRING = 32;

/*
 * TapeWriter: a growable byte buffer that tapes are written into. The bytes
 * are buf[0..pos). Every write method reserves its own room first, so callers
 * never check capacity. Owned by one encode at a time (see encode.cjs).
 *
 * What the encode shapes (shapes.cjs makeEncodeShape) use of it, and
 * nothing else: buf and pos (bytes stored at buf[pos..], then pos moved
 * past them), grow(need) when buf is shorter than need, and patchU32.
 */
class TapeWriter {
  constructor(capacity = MIN_CAPACITY) {
    this.buf = new Uint8Array(capacity);
    this.view = new DataView(this.buf.buffer);
    /* buf as a Node Buffer (utf8Write, ucs2Write), or null without one. */
    this.nb = nodeBufferOf(this.buf);
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
    this.nb = nodeBufferOf(buf);
  }

  /*
   * After a call. A buffer grown past KEEP_CAPACITY is kept while calls keep
   * filling a quarter of it (regrowing it every call from MIN_CAPACITY
   * would copy the tape again at every doubling), and dropped after a
   * call that used less, so one huge value does not pin its memory.
   */
  reset() {
    const used = this.pos;
    this.pos = 0;
    if (this.buf.length > KEEP_CAPACITY && used < this.buf.length / 4) {
      this.buf = new Uint8Array(MIN_CAPACITY);
      this.view = new DataView(this.buf.buffer);
      this.nb = nodeBufferOf(this.buf);
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
   * work at every character of a two-byte string; the core makes them
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

module.exports = { TapeWriter };

'use strict';
/*
 * text.cjs - strings to and from bytes outside the core: UTF-8 through the
 * platform (TextEncoder/TextDecoder, Node's Buffer), WTF-8 (UTF-8 that keeps
 * lone surrogates, as JS strings may hold them) by hand, and where a
 * character of raw JSON text is escaped (backslashesBefore).
 */

const utf8Encoder = new TextEncoder();
// ignoreBOM: a string that starts with U+FEFF must keep it.
const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });

const isWellFormed = typeof String.prototype.isWellFormed === 'function'
  ? (s) => s.isWellFormed()
  : (s) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?:^|[^\ud800-\udbff])[\udc00-\udfff]/.test(s);

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
 * The count of backslashes just before index i of JSON text (a string or
 * its bytes): odd, the character at i is escaped. For the places that
 * look at escapes in raw text (core.cjs, tanagra.cjs, decode.cjs).
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
  utf8Encoder, utf8Decoder, isWellFormed, writeWtf8, wtf8Length, readWtf8Unsafe, nodeBufferOf, backslashesBefore
};

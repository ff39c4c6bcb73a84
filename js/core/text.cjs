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
 * Node's Buffer, where it has the methods darmok calls on one (Bun and
 * Deno's have them too), else null. It makes strings from bytes with no
 * per-call setup, and a one-byte string straight from Latin-1 bytes, for
 * the many short strings of a tape; it writes strings into bytes with no
 * allocation. Without it TextDecoder and TextEncoder do the work.
 */
const NodeBuffer = typeof Buffer === 'function' &&
  ['utf8Slice', 'latin1Slice', 'utf8Write', 'ucs2Write'].every((m) => typeof Buffer.prototype[m] === 'function') ? Buffer : null;

/* A Buffer over the bytes of u8 (same indexes), or null without NodeBuffer. */
function nodeBufferOf(u8) {
  if (NodeBuffer === null) return null;
  if (u8 instanceof NodeBuffer) return u8;
  return NodeBuffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}

/*
 * Node's buffer.transcode (ICU), where a self-check shows it turns UTF-16
 * into UTF-8 as the Encoding Standard does; else null. Reached through
 * process.getBuiltinModule so that no bundle for the browser asks for
 * node:buffer.
 */
const icuTranscode = (() => {
  try {
    const get = typeof process === 'object' && process !== null ? process.getBuiltinModule : undefined;
    const transcode = typeof get === 'function' ? get('buffer').transcode : undefined;
    if (typeof transcode !== 'function' || NodeBuffer === null) return null;
    const sample = 'a\u00e9\u6771\ud83d\ude80';
    const out = transcode(NodeBuffer.from(sample, 'utf16le'), 'utf16le', 'utf8');
    return NodeBuffer.from(sample, 'utf8').equals(out) ? transcode : null;
  } catch {
    return null;
  }
})();

/*
 * The UTF-8 of the n bytes of UTF-16 (LE) units at heap[at..at + n), as
 * new bytes (a Buffer under Node, else a Uint8Array), without a JS string
 * in between. The units must hold no lone surrogate (the core's JSON
 * writer escapes them), which both ways would make U+FFFD.
 */
function utf16ToUtf8(heap, at, n) {
  if (icuTranscode !== null) return icuTranscode(heap.subarray(at, at + n), 'utf16le', 'utf8');
  return utf16ToUtf8Js(heap, at, n);
}

/* utf16ToUtf8 by hand, where there is no ICU transcode (browsers, workerd). */
function utf16ToUtf8Js(heap, at, n) {
  const end = at + n;
  let len = 0;
  for (let i = at; i < end; i += 2) {
    const c = heap[i] | (heap[i + 1] << 8);
    // a surrogate pair is 4 bytes of UTF-8, 2 for each of its units
    len += c < 0x80 ? 1 : c < 0x800 || (c & 0xf800) === 0xd800 ? 2 : 3;
  }
  const out = NodeBuffer !== null ? NodeBuffer.allocUnsafe(len) : new Uint8Array(len);
  let o = 0;
  for (let i = at; i < end; i += 2) {
    let c = heap[i] | (heap[i + 1] << 8);
    if (c < 0x80) {
      out[o++] = c;
    } else if (c < 0x800) {
      out[o++] = 0xc0 | (c >> 6);
      out[o++] = 0x80 | (c & 0x3f);
    } else if ((c & 0xfc00) === 0xd800) {
      i += 2;
      c = 0x10000 + ((c - 0xd800) << 10) + ((heap[i] | (heap[i + 1] << 8)) - 0xdc00);
      out[o++] = 0xf0 | (c >> 18);
      out[o++] = 0x80 | ((c >> 12) & 0x3f);
      out[o++] = 0x80 | ((c >> 6) & 0x3f);
      out[o++] = 0x80 | (c & 0x3f);
    } else {
      out[o++] = 0xe0 | (c >> 12);
      out[o++] = 0x80 | ((c >> 6) & 0x3f);
      out[o++] = 0x80 | (c & 0x3f);
    }
  }
  return out;
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
  utf8Encoder, utf8Decoder, isWellFormed, writeWtf8, wtf8Length, readWtf8Unsafe, nodeBufferOf, backslashesBefore,
  utf16ToUtf8, utf16ToUtf8Js
};

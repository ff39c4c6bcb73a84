'use strict';
/*
 * json-text.cjs - the document as the darmok JSON text `darmok inspect
 * --json` and `darmok convert --to json` print: checked whole, as UTF-8
 * bytes (no string of the document is made), and safe on a terminal.
 */
const { createCodec, transcode } = require('../api.cjs');
const { isUnsafe } = require('../core/errors.cjs');

const json = createCodec({ format: 'json' });

/*
 * The document bytes (in format) as darmok JSON text, checked. JSON is
 * checked by decodeEntity (classes read as plain data) and kept as it
 * came; protobuf by its one decode, the transcode to JSON, which reads it
 * as decodeEntity does and stops at maxBytes of JSON.
 */
function documentJson(bytes, format) {
  if (format === 'protobuf') return transcode(bytes, { from: 'protobuf', to: 'json', bytes: true });
  json.decodeEntity(bytes, { unknownClass: 'plain', newerVersion: 'accept', legacy: 'none' });
  return bytes;
}

const SPACE = Buffer.from(' ');

/* The JSON escape of code point n: \uXXXX, a surrogate pair past U+FFFF. */
function jsonEscape(n) {
  const unit = (u) => `\\u${u.toString(16).padStart(4, '0')}`;
  if (n <= 0xffff) return Buffer.from(unit(n), 'latin1');
  const m = n - 0x10000;
  return Buffer.from(unit(0xd800 + (m >> 10)) + unit(0xdc00 + (m & 0x3ff)), 'latin1');
}

/*
 * Checked JSON text (UTF-8 bytes) with no character a terminal acts on or
 * hides (errors.cjs UNSAFE) but its newlines: the same JSON value, as
 * bytes. In checked JSON text such a character is either whitespace
 * between tokens (tab, CR: the reader refuses raw C0 controls in
 * strings), which becomes a space, or inside a string, where its \uXXXX
 * escape stands for it. Returns bytes itself when nothing needs changing.
 */
function printable(bytes) {
  const parts = [];
  let from = 0;
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    let n = b;
    let len = 1;
    if (b >= 0xc0) {
      len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      n = b & (0xff >> (len + 1));
      for (let k = 1; k < len; k++) n = (n << 6) | (bytes[i + k] & 0x3f);
    } else if ((b >= 0x20 && b !== 0x7f) || b === 0x0a) {
      i++;
      continue;
    }
    if (isUnsafe(n)) {
      parts.push(bytes.subarray(from, i), n < 0x20 ? SPACE : jsonEscape(n));
      from = i + len;
    }
    i += len;
  }
  if (parts.length === 0) return bytes;
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

module.exports = { documentJson, printable };

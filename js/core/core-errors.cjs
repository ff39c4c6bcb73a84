'use strict';
/*
 * core-errors.cjs - the DarmokError of a failed call into the core, from
 * the result words it left (code, byte offset, message): for JSON text an
 * excerpt and the path to the failing value, for protobuf a hex excerpt.
 * Only on the failure path.
 */

const { DarmokError, coreCode, documentPath, pathForMessage } = require('./errors.cjs');
const { live, word } = require('./instance.cjs');
const { utf8Decoder } = require('./text.cjs');
const { RES_OFFSET, RES_MSG, RES_MSG_LEN, ERR_TOO_LONG } = require('./dk_abi.cjs');

/* Bytes of input shown on each side of an error offset. */
const EXCERPT = 20;


/*
 * bytes, or a copy with each lone surrogate (ED A0..BF xx, which the core
 * keeps in the WTF-8 of a JS string's text) as U+FFFD (EF BF BD, as long):
 * error messages quote the input, and decoders would make three U+FFFD of
 * one such sequence. So a message reads as for the text's UTF-8 bytes.
 */
function withoutSurrogates(bytes) {
  let copy = null;
  for (let i = bytes.indexOf(0xed); i >= 0 && i + 2 < bytes.length; i = bytes.indexOf(0xed, i + 1)) {
    if (bytes[i + 1] < 0xa0) continue;
    if (copy === null) copy = Uint8Array.from(bytes);
    copy[i] = 0xef;
    copy[i + 1] = 0xbf;
    copy[i + 2] = 0xbd;
  }
  return copy === null ? bytes : copy;
}

/*
 * The DarmokError for a failed call. what: 'encode' (at and len unused),
 * 'decode' (JSON text: len bytes at the input area `at`, WTF-8 when wtf8,
 * a JS string's) or 'protobuf' (a protobuf decode, len bytes at `at`);
 * maxDepth and maxLength the decode's limits, named in the message of a
 * failure on one.
 */
function failure(code, at, len, what, wtf8, maxDepth, maxLength) {
  const jsCode = coreCode(code);
  const offset = word(RES_OFFSET);
  const msgAt = word(RES_MSG);
  const msg = msgAt === 0 ? 'failed' : utf8Decoder.decode(live.heap.subarray(msgAt, msgAt + word(RES_MSG_LEN)));
  if (what === 'encode') {
    return new DarmokError(jsCode, jsCode === 'ERR_INTERNAL'
      ? `the core rejected the tape at byte ${offset}: ${msg}`
      : `encoding failed: ${msg}`);
  }
  let limit = '';
  if (jsCode === 'ERR_DEPTH') limit = ` (maxDepth ${maxDepth})`;
  else if (code === ERR_TOO_LONG) limit = ` (maxLength ${maxLength})`;
  const where = offset >= len ? `at byte ${offset} (the end of input)` : `at byte ${offset}`;
  if (what === 'protobuf') {
    const from = offset > 8 ? offset - 8 : 0;
    const to = offset + 8 < len ? offset + 8 : len;
    const hex = Array.from(live.heap.subarray(at + from, at + to), (b) => b.toString(16).padStart(2, '0')).join(' ');
    return new DarmokError(jsCode, `${msg}${limit} ${where} of the protobuf document${len === 0 ? ' (empty input)' : ` near [${hex}]`}`, offset);
  }
  const from = offset > EXCERPT ? offset - EXCERPT : 0;
  const to = offset + EXCERPT < len ? offset + EXCERPT : len;
  const text = wtf8 === true ? withoutSurrogates(live.heap.subarray(at, at + len)) : live.heap.subarray(at, at + len);
  let excerpt = utf8Decoder.decode(text.subarray(from, to));
  if (excerpt.length > 2 * EXCERPT) excerpt = excerpt.slice(0, 2 * EXCERPT);
  // Only now, on the failure path, is the document re-scanned for a path.
  const path = documentPath(text, offset);
  const near = len === 0 ? 'in empty input' : `near ${JSON.stringify(excerpt)}`;
  const err = new DarmokError(jsCode, `${msg}${limit} ${where} in ${pathForMessage(path)} ${near}`, offset);
  err.path = path;
  return err;
}

function tooLarge(n, max) {
  return new DarmokError('ERR_TOO_LARGE', `input of ${n} bytes is over maxBytes (${max})`);
}

module.exports = { failure, tooLarge };

'use strict';
/*
 * sniff.cjs - what a blob that a decoder refused is, for its error
 * message: the type of a value that is not a document at all (null from a
 * cache miss), or darmok's other format. Only called on failure paths.
 *
 * The signatures (docs/FORMAT.md) are exact, so corrupt input of the
 * right format never gets a hint:
 *   protobuf  darmok writes `format` (field 1, varint, value 1) first, then
 *             `strings`, `shapes` or `kinds` (fields 2-4, length-delimited;
 *             `kinds` is never empty): 08 01 then 12, 1a or 22. No JSON text
 *             starts with 08 (a control character).
 *   JSON      the whole input parses as JSON (every JSON text is a darmok
 *             JSON document or fails as one); a protobuf document never
 *             does, as it starts with 08.
 */

const PB_THIRD = [0x12, 0x1a, 0x22];

/* Whether blob (bytes, or a string made of them) starts as darmok protobuf does. */
function looksLikeProtobuf(blob) {
  if (blob.length < 3) return false;
  if (typeof blob === 'string') {
    return blob.charCodeAt(0) === 0x08 && blob.charCodeAt(1) === 0x01 && PB_THIRD.includes(blob.charCodeAt(2));
  }
  return blob[0] === 0x08 && blob[1] === 0x01 && PB_THIRD.includes(blob[2]);
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/* Whether blob (a string, or bytes in UTF-8) is JSON text. */
function looksLikeJson(blob) {
  try {
    JSON.parse(typeof blob === 'string' ? blob : fatalUtf8.decode(blob));
    return true;
  } catch {
    return false;
  }
}

const JSON_HINT = "this looks like darmok JSON: decode it with format 'json' (darmok or darmok/json)";
const PB_HINT = "this looks like darmok protobuf: decode it with format 'protobuf' (darmok/protobuf)";

/*
 * The hint for a document that `format` could not read (ERR_SYNTAX,
 * ERR_FORMAT) when it is in the other format, or null.
 */
function otherFormat(format, blob) {
  if (format === 'json') return looksLikeProtobuf(blob) ? PB_HINT : null;
  return looksLikeJson(blob) ? JSON_HINT : null;
}

/* err, a DarmokError of a decode in `format`, with the other format's hint when it applies. */
function withFormatHint(err, format, blob) {
  if (err !== null && typeof err === 'object' && (err.code === 'ERR_SYNTAX' || err.code === 'ERR_FORMAT')) {
    const hint = otherFormat(format, blob);
    if (hint !== null) err.message = `${err.message}; ${hint}`;
  }
  return err;
}

/* What value is, as a message names it. */
function describe(value) {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'undefined': return 'undefined';
    case 'number': return `a number (${value})`;
    case 'bigint': return `a bigint (${value}n)`;
    case 'boolean': return `a boolean (${value})`;
    case 'symbol': return 'a symbol';
    case 'function': return `a function${value.name ? ` (${value.name})` : ''}`;
    case 'string': return 'a string';
    default: {
      if (Array.isArray(value)) return 'an array';
      const proto = Object.getPrototypeOf(value);
      const name = proto === null ? 'null prototype'
        : typeof proto.constructor === 'function' && proto.constructor.name ? proto.constructor.name : 'Object';
      return `an object (${name})`;
    }
  }
}

/*
 * The message for a blob of the wrong type given to `call`, which takes
 * `takes`: what it got, with a hint where one is likely.
 */
function wrongBlob(call, blob, takes) {
  let hint = '.';
  if (blob === null || blob === undefined) hint = ': a cache miss?';
  else if (blob instanceof ArrayBuffer) hint = ': wrap it as new Uint8Array(buffer).';
  else if (typeof blob === 'string' && looksLikeJson(blob)) hint = `: ${JSON_HINT}.`;
  else if (typeof blob === 'object' && !ArrayBuffer.isView(blob)) hint = ': a value decoded already, or a reply object?';
  return `${call} got ${describe(blob)}${hint} It takes ${takes}.`;
}

module.exports = { withFormatHint, wrongBlob, looksLikeProtobuf };

'use strict';
/*
 * json.cjs - encodeEntity / decodeEntity for darmok's JSON format
 * (docs/FORMAT.md): the walk (encode.cjs) and rebuild (decode.cjs) around
 * one call into the core (core.cjs) each.
 */

const core = require('./core.cjs');
const { acquire } = require('./encode.cjs');
const { Decoder } = require('./decode.cjs');
const { DarmokError } = require('./errors.cjs');
const registry = require('./registry.cjs');

/*
 * Defaults. Decoding reads untrusted bytes, so every limit is on by default:
 *   maxDepth   1000          nesting of arrays/objects/Maps/Sets/instances/
 *                            errors (the top-level value is depth 0)
 *   maxBytes   64 MiB        the input's UTF-8 byte length
 *   maxLength  16 Mi (2^24)  bytes of one string, elements of one array
 *                            (holes included), entries of one Map or Set,
 *                            bytes of one binary value
 */
const MAX_DEPTH = 1000;
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_LENGTH = 16 * 1024 * 1024;
const U32_MAX = 0xffffffff;

function limit(options, name, fallback) {
  const v = options[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > U32_MAX) {
    throw new DarmokError('ERR_INVALID_OPTION', `${name} must be an integer from 1 to ${U32_MAX}`);
  }
  return v;
}

/*
 * encodeEntity(value, { strict?, maxDepth? }) -> JSON string.
 *   strict    throw ERR_UNSUPPORTED_TYPE for functions, symbols and objects
 *             darmok cannot round-trip (WeakMap, Promise, boxed primitives),
 *             and ERR_UNREGISTERED_CLASS for instances of unregistered
 *             classes, instead of skipping them / writing plain objects.
 *   maxDepth  default 1000; deeper nesting throws ERR_DEPTH.
 * The value is only read. Re-entrant: a getter may call encodeEntity.
 */
function encodeEntity(value, options) {
  let strict = false;
  let maxDepth = MAX_DEPTH;
  if (options !== undefined && options !== null) {
    strict = options.strict === true;
    maxDepth = limit(options, 'maxDepth', MAX_DEPTH);
  }
  const enc = acquire();
  try {
    enc.run(value, strict, maxDepth);
    return core.jsonEncode(enc.w.buf, enc.w.pos, maxDepth);
  } finally {
    enc.release();
  }
}

/*
 * decodeEntity(blob, Class?, options?) -> value. blob: a string, or a
 * Buffer/Uint8Array of UTF-8. Class, when given, is registered (with its
 * nested types) if it is not yet, as tanagra does. options:
 *   unknownClass  'throw' (default): ERR_UNKNOWN_CLASS for an unregistered
 *                 class key; 'plain': a plain object of its fields.
 *   maxDepth, maxBytes, maxLength: limits, defaults above.
 * The options may also come second, without Class.
 */
function decodeEntity(blob, Class, options) {
  if (Class !== undefined && Class !== null) {
    if (typeof Class === 'function') registry.ensure(Class);
    else if (options === undefined && typeof Class === 'object') options = Class;
    else throw new DarmokError('ERR_INVALID_OPTION', 'decodeEntity(blob, Class?, options?): Class must be a class');
  }
  let unknownPlain = false;
  let maxDepth = MAX_DEPTH;
  let maxBytes = MAX_BYTES;
  let maxLength = MAX_LENGTH;
  if (options !== undefined && options !== null) {
    const u = options.unknownClass;
    if (u === 'plain') unknownPlain = true;
    else if (u !== undefined && u !== 'throw') {
      throw new DarmokError('ERR_INVALID_OPTION', "unknownClass must be 'throw' or 'plain'");
    }
    maxDepth = limit(options, 'maxDepth', MAX_DEPTH);
    maxBytes = limit(options, 'maxBytes', MAX_BYTES);
    maxLength = limit(options, 'maxLength', MAX_LENGTH);
  }
  if (typeof blob !== 'string' && !(blob instanceof Uint8Array)) {
    throw new DarmokError('ERR_UNSUPPORTED_TYPE', 'decodeEntity takes a string, a Buffer or a Uint8Array');
  }
  return core.jsonDecode(blob, maxDepth, maxLength, maxBytes,
    (reader) => new Decoder(reader, unknownPlain).run());
}

module.exports = {
  encodeEntity,
  decodeEntity,
  serializable: registry.serializable,
  init: core.init,
  DarmokError,
  MAX_DEPTH,
  MAX_BYTES,
  MAX_LENGTH
};

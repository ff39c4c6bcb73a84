'use strict';
/*
 * codec.cjs - createCodec({ format, registry }): encodeEntity and
 * decodeEntity for one byte format over one class registry.
 *
 * A format is one entry of FORMATS: how a tape becomes bytes and bytes
 * become a tape, both in the core (core.cjs). Everything else - the walk
 * (encode.cjs), the rebuild (decode.cjs), options, limits, registries,
 * reading tanagra's documents (tanagra.cjs) - is shared by every format.
 */

const core = require('./core.cjs');
const { acquire } = require('./encode.cjs');
const { Decoder, notExpected, MAX_REGEXP_LENGTH } = require('./decode.cjs');
const { DarmokError } = require('./errors.cjs');
const { registryOf, defaultRegistry, createRegistry, configure } = require('./registry.cjs');
const { isTanagraDocument, fromTanagra } = require('./tanagra.cjs');
const { checkNames, unknownOption } = require('./options.cjs');
const { withFormatHint, wrongBlob } = require('./sniff.cjs');
const { shaping, SHAPING_OPTIONS } = require('./select.cjs');
const { plainOfTape, plainText } = require('./plain.cjs');

/*
 * Throws ERR_UNSUPPORTED_TYPE when bytes (a Uint8Array) is a view of a
 * detached ArrayBuffer (transferred to a worker, structuredClone'd with
 * transfer): its length reads 0, and copying it into the core would throw
 * a bare TypeError. Only an empty view is looked at (a view of a detached
 * buffer cannot be made, so making one tells), so no other call pays.
 */
function notDetached(bytes, who) {
  if (bytes.byteLength !== 0) return;
  try {
    new Uint8Array(bytes.buffer, 0, 0); // eslint-disable-line no-new
  } catch {
    throw new DarmokError('ERR_UNSUPPORTED_TYPE', `${who}: the bytes are a view of a detached ArrayBuffer (transferred away): nothing to read`);
  }
}

/*
 * The byte formats, by name. An entry:
 *   encode(tape, len, maxDepth, bytes) -> the document (string or bytes)
 *       for the tape bytes tape[0..len); with bytes, bytes whatever the
 *       format.
 *   decode(blob, maxDepth, maxLength, maxBytes, rebuild) -> rebuild(reader)
 *       called on the tape of blob while that tape is valid; throws
 *       ERR_UNSUPPORTED_TYPE for a blob of the wrong type.
 *   tanagra: true when tanagra-json documents can arrive in this format
 *       (decodeEntity's `legacy` option).
 */
const FORMATS = {
  json: {
    encode(tape, len, maxDepth, bytes) {
      return core.jsonEncode(tape, len, maxDepth, bytes);
    },
    decode(blob, maxDepth, maxLength, maxBytes, rebuild) {
      if (typeof blob !== 'string' && !(blob instanceof Uint8Array)) {
        throw new DarmokError('ERR_UNSUPPORTED_TYPE', wrongBlob('decodeEntity', blob, 'darmok JSON: a string, a Buffer or a Uint8Array'));
      }
      if (typeof blob !== 'string') notDetached(blob, 'decodeEntity');
      return core.jsonDecode(blob, maxDepth, maxLength, maxBytes, rebuild);
    },
    tanagra: true
  },
  // proto/darmok.proto; docs/FORMAT.md "Protobuf". Bytes in, bytes out.
  protobuf: {
    encode(tape, len, maxDepth) {
      return core.pbEncode(tape, len, maxDepth);
    },
    decode(blob, maxDepth, maxLength, maxBytes, rebuild) {
      if (!(blob instanceof Uint8Array)) {
        throw new DarmokError('ERR_UNSUPPORTED_TYPE', wrongBlob('decodeEntity', blob, 'darmok protobuf: a Buffer or a Uint8Array'));
      }
      notDetached(blob, 'decodeEntity');
      return core.pbDecode(blob, maxDepth, maxLength, maxBytes, rebuild);
    },
    tanagra: false
  }
};

/*
 * Defaults. Decoding reads untrusted bytes, so every limit is on by default:
 *   maxDepth   1000          nesting of arrays/objects/Maps/Sets/instances/
 *                            errors (the top-level value is depth 0)
 *   maxBytes   64 MiB        the input's byte length (UTF-8 for JSON text)
 *   maxLength  16 Mi (2^24)  bytes of one string, elements of one array
 *                            (holes included), entries of one Map or Set,
 *                            bytes of one binary value
 *   maxRegExpLength 16384    characters of RegExp source in one document,
 *                            all its RegExps together (decode.cjs regexp)
 */
const MAX_DEPTH = 1000;
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_LENGTH = 16 * 1024 * 1024;
const U32_MAX = 0xffffffff;

/* The option names of each call. */
const ENCODE_OPTIONS = new Set(['strict', 'maxDepth', 'format', 'bytes', ...SHAPING_OPTIONS]);
const DECODE_OPTIONS = new Set(['unknownClass', 'newerVersion', 'legacy', 'maxDepth', 'maxBytes', 'maxLength',
  'maxRegExpLength', 'regExpProperties', 'format']);
const CODEC_OPTIONS = new Set(['format', 'registry']);
const TRANSCODE_OPTIONS = new Set(['from', 'to', 'maxDepth', 'maxBytes', 'maxLength', 'bytes']);

function limit(options, name, fallback) {
  const v = options[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > U32_MAX) {
    throw new DarmokError('ERR_INVALID_OPTION', `${name} must be an integer from 1 to ${U32_MAX}`);
  }
  return v;
}

/* The format named by options.format, or the codec's own. */
function formatOf(options, fallback) {
  const f = options.format;
  if (f === undefined) return fallback;
  if (typeof f !== 'string' || !Object.prototype.hasOwnProperty.call(FORMATS, f)) {
    throw new DarmokError('ERR_INVALID_OPTION', `unknown format ${JSON.stringify(f)}: one of ${Object.keys(FORMATS).join(', ')}`);
  }
  return f;
}

/* options, when given, must be an object (a format name alone is not options). */
function checkOptions(options, call) {
  if (typeof options !== 'object') {
    throw new DarmokError('ERR_INVALID_OPTION', `${call}: options must be an object, not ${typeof options}`);
  }
}

/* A true-or-false option, default false. */
function flag(options, name) {
  const v = options[name];
  if (v !== undefined && typeof v !== 'boolean') throw new DarmokError('ERR_INVALID_OPTION', `${name} must be true or false`);
  return v === true;
}

function choice(options, name, values) {
  const v = options[name];
  if (v === undefined) return values[0];
  if (!values.includes(v)) {
    throw new DarmokError('ERR_INVALID_OPTION', `${name} must be ${values.map((x) => `'${x}'`).join(' or ')}`);
  }
  return v;
}

/* The option names of toPlain (encodeEntity's but format and bytes) and fromPlain (decodeEntity's but format and legacy). */
const TO_PLAIN_OPTIONS = new Set([...ENCODE_OPTIONS].filter((name) => name !== 'format' && name !== 'bytes'));
const FROM_PLAIN_OPTIONS = new Set([...DECODE_OPTIONS].filter((name) => name !== 'format' && name !== 'legacy'));

/*
 * createCodec({ format = 'json', registry = the default registry }) ->
 * { format, registry, encodeEntity, decodeEntity, toPlain, fromPlain,
 * serializable }. `serializable` registers into the codec's registry.
 */
function createCodec(options) {
  let format = 'json';
  let registry = defaultRegistry;
  if (options !== undefined && options !== null) {
    if (typeof options !== 'object') throw new DarmokError('ERR_INVALID_OPTION', 'createCodec takes { format, registry }');
    checkNames(options, CODEC_OPTIONS, 'createCodec');
    if (options.format !== undefined) format = options.format;
    if (options.registry !== undefined) registry = registryOf(options.registry);
  }
  if (typeof format !== 'string' || !Object.prototype.hasOwnProperty.call(FORMATS, format)) {
    throw new DarmokError('ERR_INVALID_OPTION', `unknown format ${JSON.stringify(format)}: one of ${Object.keys(FORMATS).join(', ')}`);
  }
  if (registry === undefined) {
    throw new DarmokError('ERR_INVALID_OPTION', 'registry must come from createRegistry()');
  }
  const impl = FORMATS[format];
  /*
   * The rebuild callbacks, one per combination of decodeEntity's two flag
   * options, each with its decoder, made once here rather than per call.
   */
  const decoders = [false, true].map((unknownPlain) => [false, true].map((acceptNewer) =>
    new Decoder(unknownPlain, registry, acceptNewer)));
  const rebuilds = decoders.map((row) => row.map((decoder) => (reader) => decoder.decode(reader)));
  /*
   * The last options object of each call whose names were checked: a call
   * that passes the same object again (a constant) skips the check.
   */
  let encodeChecked = null;
  let decodeChecked = null;
  /*
   * decodeEntity's last Class, its plan and registry.scopeOf(plan), good
   * while registry.generation is lastGeneration: a call with the same
   * Class as the last one looks nothing up.
   */
  let lastClass = null;
  let lastPlan = null;
  let lastScope = null;
  let lastGeneration = -1;

  /*
   * encodeEntity(value, { strict?, maxDepth? }) -> the document.
   *   strict    throw ERR_UNSUPPORTED_TYPE for functions, symbols and objects
   *             darmok cannot round-trip (WeakMap, Promise, boxed primitives),
   *             and ERR_UNREGISTERED_CLASS for instances of unregistered
   *             classes, instead of skipping them / writing plain objects.
   *   maxDepth  default 1000; deeper nesting throws ERR_DEPTH.
   *   format    this call's format instead of the codec's ('json', 'protobuf').
   *   bytes     true: the document as bytes in every format (JSON as its
   *             UTF-8, a Buffer under Node), without making a JS string.
   *   sortKeys, only, except: the shaping of select.cjs (docs/SHAPING.md).
   * The value is only read. Re-entrant: a getter may call encodeEntity.
   */
  function encodeEntity(value, options) {
    let strict = false;
    let maxDepth = MAX_DEPTH;
    let how = impl;
    let shape = null;
    let bytes = false;
    if (options !== undefined && options !== null) {
      checkOptions(options, 'encodeEntity');
      if (options !== encodeChecked) {
        for (const k in options) if (!ENCODE_OPTIONS.has(k)) throw unknownOption('encodeEntity', k, ENCODE_OPTIONS);
        encodeChecked = options;
      }
      strict = flag(options, 'strict');
      maxDepth = limit(options, 'maxDepth', MAX_DEPTH);
      if (options.format !== undefined) how = FORMATS[formatOf(options, format)];
      bytes = flag(options, 'bytes');
      shape = shaping(options);
    }
    const enc = acquire();
    try {
      enc.run(value, strict, maxDepth, registry, shape);
      return how.encode(enc.w.buf, enc.w.pos, maxDepth, bytes);
    } finally {
      enc.release();
    }
  }

  /*
   * toPlain(value, { strict?, maxDepth?, sortKeys?, only?, except? }) ->
   * the tree JSON.parse(encodeEntity(value, options)) gives in the JSON
   * format, whatever the codec's format, made from the encoder's tape
   * without JSON text (plain.cjs).
   */
  function toPlain(value, options) {
    let strict = false;
    let maxDepth = MAX_DEPTH;
    let shape = null;
    if (options !== undefined && options !== null) {
      checkOptions(options, 'toPlain');
      checkNames(options, TO_PLAIN_OPTIONS, 'toPlain');
      strict = flag(options, 'strict');
      maxDepth = limit(options, 'maxDepth', MAX_DEPTH);
      shape = shaping(options);
    }
    const enc = acquire();
    try {
      enc.run(value, strict, maxDepth, registry, shape);
      return plainOfTape(enc.w.buf, enc.w.pos);
    } finally {
      enc.release();
    }
  }

  /*
   * fromPlain(plain, Class?, options?) -> the value of a plain tree of the
   * JSON format (toPlain's, or JSON.parse of a document): decoded as
   * decodeEntity decodes its JSON text, with the same options, tags,
   * migrations, limits (maxBytes: of that text) and errors; the tree must
   * be JSON data (plain.cjs plainText).
   */
  function fromPlain(plain, Class, options) {
    let opts = options;
    if (opts === undefined && Class !== null && typeof Class === 'object') opts = Class;
    const call = { format: 'json', legacy: 'none' };
    let maxDepth = MAX_DEPTH;
    let maxBytes = MAX_BYTES;
    if (opts !== undefined && opts !== null) {
      checkOptions(opts, 'fromPlain');
      checkNames(opts, FROM_PLAIN_OPTIONS, 'fromPlain');
      for (const name of FROM_PLAIN_OPTIONS) if (opts[name] !== undefined) call[name] = opts[name];
      maxDepth = limit(opts, 'maxDepth', MAX_DEPTH);
      maxBytes = limit(opts, 'maxBytes', MAX_BYTES);
    }
    const text = plainText(plain, maxDepth, maxBytes);
    return opts === Class ? decodeEntity(text, call) : decodeEntity(text, Class, call);
  }

  /*
   * decodeEntity(blob, Class?, options?) -> value. Class, when given, is
   * registered (with its nested types) if it is not yet, as tanagra does;
   * in this call its key and aliases are read as Class even if another
   * class holds them too; and the top-level value must be a Class (or of
   * a subclass), null, or a collection (Array, Map, Set; not checked
   * further), else ERR_UNEXPECTED_CLASS.
   * options:
   *   unknownClass  'throw' (default): ERR_UNKNOWN_CLASS for an unregistered
   *                 class key; 'plain': a plain object of its fields.
   *   newerVersion  'reject' (default): ERR_VERSION for an instance written
   *                 by a newer version of its class; 'accept': build it
   *                 anyway, unknown fields kept as own properties.
   *   legacy        'auto' (default): a document whose top-level value is
   *                 a plain object with a `_serializationKey` is read as
   *                 tanagra-json wrote it (tanagra.cjs); 'tanagra': every
   *                 document is; 'none': none is.
   *   maxDepth, maxBytes, maxLength, maxRegExpLength: limits, defaults above.
   *   regExpProperties  'reject' (default): ERR_FORMAT for a RegExp with the
   *                 v flag or a Unicode property escape (\p{...}), costly to
   *                 compile; 'accept': compile it (within maxRegExpLength).
   *   format        this call's format instead of the codec's.
   * The options may also come second, without Class.
   */
  function decodeEntity(blob, Class, options) {
    let expected = null;
    let scope = null;
    if (Class !== undefined && Class !== null) {
      if (typeof Class === 'function') {
        if (Class !== lastClass || registry.generation !== lastGeneration) {
          lastPlan = registry.ensure(Class);
          lastScope = registry.scopeOf(lastPlan);
          lastClass = Class;
          lastGeneration = registry.generation;
        }
        expected = lastPlan;
        scope = lastScope;
      } else if (options === undefined && typeof Class === 'object') options = Class;
      else throw new DarmokError('ERR_INVALID_OPTION', 'decodeEntity(blob, Class?, options?): Class must be a class');
    }
    let unknownPlain = false;
    let acceptNewer = false;
    let legacy = 'auto';
    let maxDepth = MAX_DEPTH;
    let maxBytes = MAX_BYTES;
    let maxLength = MAX_LENGTH;
    let maxRegExpLength = MAX_REGEXP_LENGTH;
    let regExpProperties = false;
    let how = impl;
    let name = format;
    if (options !== undefined && options !== null) {
      checkOptions(options, 'decodeEntity');
      if (options !== decodeChecked) {
        for (const k in options) if (!DECODE_OPTIONS.has(k)) throw unknownOption('decodeEntity', k, DECODE_OPTIONS);
        decodeChecked = options;
      }
      if (options.format !== undefined) {
        name = formatOf(options, format);
        how = FORMATS[name];
      }
      unknownPlain = choice(options, 'unknownClass', ['throw', 'plain']) === 'plain';
      acceptNewer = choice(options, 'newerVersion', ['reject', 'accept']) === 'accept';
      legacy = choice(options, 'legacy', ['auto', 'tanagra', 'none']);
      maxDepth = limit(options, 'maxDepth', MAX_DEPTH);
      maxBytes = limit(options, 'maxBytes', MAX_BYTES);
      maxLength = limit(options, 'maxLength', MAX_LENGTH);
      maxRegExpLength = limit(options, 'maxRegExpLength', MAX_REGEXP_LENGTH);
      regExpProperties = choice(options, 'regExpProperties', ['reject', 'accept']) === 'accept';
    }
    if (!how.tanagra) {
      if (legacy === 'tanagra') throw new DarmokError('ERR_INVALID_OPTION', `the ${name} format has no tanagra documents`);
      legacy = 'none';
    }
    const u = unknownPlain ? 1 : 0;
    const a = acceptNewer ? 1 : 0;
    const decoder = decoders[u][a];
    decoder.expected = expected;
    decoder.scope = scope;
    decoder.limitRegExps(maxRegExpLength, regExpProperties);
    let value;
    try {
      value = how.decode(blob, maxDepth, maxLength, maxBytes, rebuilds[u][a]);
    } catch (err) {
      throw withFormatHint(err, name, blob);
    }
    if (legacy === 'none' || (legacy === 'auto' && !isTanagraDocument(value, blob))) {
      if (expected !== null) {
        const err = notExpected(expected, value, decoder.topInstance);
        if (err !== null) throw err;
      }
      return value;
    }
    // a tanagra document's top level is an instance, checked by fromTanagra
    return fromTanagra(value, registry, unknownPlain, acceptNewer, expected, scope);
  }

  return Object.freeze({
    format,
    registry: registry.handle,
    encodeEntity,
    decodeEntity,
    toPlain,
    fromPlain,
    serializable: registry.serializable
  });
}

/*
 * transcode(blob, { from, to, maxDepth?, maxBytes?, maxLength?, bytes? }) ->
 * the same document in the other format, converted inside the core without
 * building JS values (no registry involved): 'json' -> 'protobuf' gives
 * bytes (a Buffer in Node), 'protobuf' -> 'json' a string, or with bytes
 * its UTF-8 bytes. JSON comes as a
 * string or UTF-8 bytes, protobuf as a Uint8Array/Buffer. The input is
 * untrusted and checked as decodeEntity checks it, with the same limits,
 * but for what only the JS rebuild checks (a RegExp's source and flags,
 * which RegExp() parses; class keys, which need a registry); a document
 * darmok wrote comes back byte for byte after a round trip.
 */
function transcode(blob, options) {
  if (options === undefined || options === null || typeof options !== 'object') {
    throw new DarmokError('ERR_INVALID_OPTION', "transcode(blob, { from, to }) needs from and to: 'json' or 'protobuf'");
  }
  checkNames(options, TRANSCODE_OPTIONS, 'transcode');
  const from = choice(options, 'from', ['json', 'protobuf']);
  const to = choice(options, 'to', ['protobuf', 'json']);
  if (options.from === undefined || options.to === undefined || from === to) {
    throw new DarmokError('ERR_INVALID_OPTION', "transcode converts between 'json' and 'protobuf': give from and to, different");
  }
  const maxDepth = limit(options, 'maxDepth', MAX_DEPTH);
  const maxBytes = limit(options, 'maxBytes', MAX_BYTES);
  const maxLength = limit(options, 'maxLength', MAX_LENGTH);
  const bytes = flag(options, 'bytes');
  if (from === 'json' ? typeof blob !== 'string' && !(blob instanceof Uint8Array) : !(blob instanceof Uint8Array)) {
    throw new DarmokError('ERR_UNSUPPORTED_TYPE', wrongBlob(`transcode from ${from}`, blob, from === 'json'
      ? 'a string, a Buffer or a Uint8Array' : 'a Buffer or a Uint8Array'));
  }
  if (typeof blob !== 'string') notDetached(blob, 'transcode');
  try {
    return core.transcode(blob, to === 'protobuf', maxDepth, maxLength, maxBytes, bytes);
  } catch (err) {
    throw withFormatHint(err, from, blob);
  }
}

/*
 * One round trip of a small graph through a private registry, once per
 * format at load, so the first real call does not pay for compiling the
 * walk and the rebuild (the core compiles its own at load, instance.cjs). The
 * default registry is not touched. A failure here is ignored: real calls
 * report their own.
 */
function warmUp(format) {
  try {
    const registry = createRegistry();
    class WarmUp {}
    registry.serializable(WarmUp, { key: 'darmok.warmUp' });
    const w = Object.assign(new WarmUp(), { s: 'caf\u00e9', n: [0, -1.5, 2 ** 40], on: true });
    const value = [w, w, { d: new Date(0), m: new Map([[1n, new Set([null])]]), b: new Uint8Array(2), u: undefined }];
    const codec = createCodec({ format, registry });
    codec.decodeEntity(codec.encodeEntity(value));
  } catch {
    // nothing to do: see above
  }
}

/*
 * The exports of an entry point (darmok/json, darmok/protobuf): the codec
 * of `format` over the default registry, plus the functions every entry
 * point shares. The entry files list the names again, for static readers
 * of CommonJS (json.cjs).
 */
function entryPoint(format) {
  const codec = createCodec({ format });
  warmUp(format);
  return {
    encodeEntity: codec.encodeEntity,
    decodeEntity: codec.decodeEntity,
    toPlain: codec.toPlain,
    fromPlain: codec.fromPlain,
    configure,
    serializable: defaultRegistry.serializable,
    createCodec,
    createRegistry,
    transcode,
    init: core.init,
    DarmokError,
    MAX_DEPTH,
    MAX_BYTES,
    MAX_LENGTH,
    MAX_REGEXP_LENGTH
  };
}

module.exports = {
  createCodec, transcode, entryPoint, FORMATS, MAX_DEPTH, MAX_BYTES, MAX_LENGTH, MAX_REGEXP_LENGTH,
  ENCODE_OPTIONS, DECODE_OPTIONS, TO_PLAIN_OPTIONS, FROM_PLAIN_OPTIONS
};

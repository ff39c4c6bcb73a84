'use strict';
/*
 * api.cjs - createCodec({ format, registry }): encodeEntity and
 * decodeEntity for one byte format over one class registry, and the rest
 * of the API the entries (json.cjs, protobuf.cjs, index.cjs) hand on. It
 * puts the layers together, so it stands above them: codec/ and compat/.
 *
 * A format is one entry of CODERS: how a tape becomes bytes and bytes
 * become a tape, both in the core (core/core.cjs). Everything else - the
 * walk (codec/encode.cjs), the rebuild (codec/decode.cjs), options, limits,
 * registries, toPlain (compat/plain.cjs), reading tanagra's documents
 * (compat/tanagra.cjs) - is shared by every format.
 */

const core = require('./core/core.cjs');
const { acquire } = require('./codec/encode.cjs');
const { Decoder, KeptTape, notExpected, MAX_REGEXP_LENGTH } = require('./codec/decode.cjs');
const { TapeReader } = require('./core/tape-reader.cjs');
const { DarmokError } = require('./core/errors.cjs');
const { unreadable } = require('./codec/builtins.cjs');
const { Registry, registryOf, defaultRegistry, createRegistry, configure, REGISTRY } = require('./codec/registry.cjs');
const { isTanagraDocument, hasKeyAsWritten, fromTanagra, keyOf: tanagraKeyOf } = require('./compat/tanagra.cjs');
const { readOptions, without, option, invalid, flag, limit, oneOf, formatName, FORMAT_NAMES } = require('./codec/options.cjs');
const { withFormatHint, wrongBlob } = require('./codec/sniff.cjs');
const { shaping, selection } = require('./codec/select.cjs');
const { DEFAULT_MAX_DEPTH } = require('./core/dk_abi.cjs');
const { plainOfTape, plainText } = require('./compat/plain.cjs');

/*
 * Throws ERR_UNSUPPORTED_TYPE when bytes (a Uint8Array) can no longer be
 * read: its ArrayBuffer was detached (transferred to a worker,
 * structuredClone'd with transfer) or, resizable, shrunk below the view's
 * end. Its length reads 0 then, and copying it into the core would throw
 * a bare TypeError.
 */
function readable(bytes, who) {
  if (unreadable(bytes)) {
    throw new DarmokError('ERR_UNSUPPORTED_TYPE', `${who}: the bytes are a view of a detached ArrayBuffer (transferred away) or of a resizable one shrunk below the view's end: nothing to read`);
  }
}

/*
 * The byte formats, by name (options.cjs FORMAT_NAMES). An entry:
 *   encode(tape, len, maxDepth, bytes) -> the document (string or bytes)
 *       for the tape bytes tape[0..len); with bytes, bytes whatever the
 *       format.
 *   decode(blob, maxDepth, maxLength, maxBytes, rebuild) -> rebuild(reader)
 *       called on the tape of blob while that tape is valid; throws
 *       ERR_UNSUPPORTED_TYPE for a blob of the wrong type.
 *   tanagra: true when tanagra-json documents can arrive in this format
 *       (decodeEntity's `legacy` option).
 */
const CODERS = {
  json: {
    encode(tape, len, maxDepth, bytes) {
      return core.jsonEncode(tape, len, maxDepth, bytes);
    },
    decode(blob, maxDepth, maxLength, maxBytes, rebuild) {
      if (typeof blob !== 'string' && !(blob instanceof Uint8Array)) {
        throw new DarmokError('ERR_UNSUPPORTED_TYPE', wrongBlob('decodeEntity', blob, 'darmok JSON: a string, a Buffer or a Uint8Array'));
      }
      if (typeof blob !== 'string') readable(blob, 'decodeEntity');
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
      readable(blob, 'decodeEntity');
      return core.pbDecode(blob, maxDepth, maxLength, maxBytes, rebuild);
    },
    tanagra: false
  }
};

/* toPlain's stand-in for a format: the tape made a plain tree (plain.cjs). */
const PLAIN = {
  encode(tape, len) {
    return plainOfTape(tape, len);
  }
};

/*
 * Defaults. Decoding reads untrusted bytes, so every limit is on by default:
 *   maxDepth   DK_DEFAULT_MAX_DEPTH  nesting of arrays/objects/Maps/Sets/
 *                            instances/errors (the top-level value is
 *                            depth 0); the core's own default, from its header
 *   maxBytes   64 MiB        the input's byte length (UTF-8 for JSON text)
 *   maxLength  16 Mi (2^24)  bytes of one string, elements of one array
 *                            (holes included), entries of one Map or Set,
 *                            bytes of one binary value
 *   maxRegExpLength 16384    characters of RegExp source in one document,
 *                            all its RegExps together (decode.cjs regexp)
 */
const MAX_DEPTH = DEFAULT_MAX_DEPTH;
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_LENGTH = 16 * 1024 * 1024;

/* The options of each call of the codec, declared once (options.cjs readOptions). */
const MAX_DEPTH_OPTION = option(limit, MAX_DEPTH, 'deepest nesting; deeper is ERR_DEPTH');
const MAX_BYTES_OPTION = option(limit, MAX_BYTES, "largest input, in bytes (JSON text: its UTF-8's)");
const MAX_LENGTH_OPTION = option(limit, MAX_LENGTH, 'largest string (bytes), array (elements), Map or Set (entries), binary value (bytes)');
const FORMAT_OPTION = option(formatName, undefined, "this call's format instead of the codec's");
const BYTES_OPTION = option(flag, false, 'the document as bytes in every format (JSON as its UTF-8), without making a JS string');

const ENCODE = {
  strict: option(flag, false, 'ERR_UNSUPPORTED_TYPE / ERR_UNREGISTERED_CLASS for what would be skipped or written as a plain object'),
  maxDepth: MAX_DEPTH_OPTION,
  format: FORMAT_OPTION,
  bytes: BYTES_OPTION,
  sortKeys: option(flag, false, "every object's keys in code-unit order (docs/SHAPING.md)"),
  only: option(selection, null, "{ ClassKey: ['field', ...] }: only these fields of these classes"),
  except: option(selection, null, "{ ClassKey: ['field', ...] }: all but these fields of these classes")
};

const DECODE = {
  unknownClass: option(oneOf(['throw', 'plain']), 'throw', "'plain': an unregistered class key reads as a plain object of its fields"),
  newerVersion: option(oneOf(['reject', 'accept']), 'reject', "'accept': an instance of a newer version is built anyway, unknown fields kept"),
  legacy: option(oneOf(['auto', 'tanagra', 'none']), 'auto', 'which documents are read as tanagra-json wrote them'),
  maxDepth: MAX_DEPTH_OPTION,
  maxBytes: MAX_BYTES_OPTION,
  maxLength: MAX_LENGTH_OPTION,
  maxRegExpLength: option(limit, MAX_REGEXP_LENGTH, 'characters of RegExp source in one document, all its RegExps together'),
  regExpProperties: option(oneOf(['reject', 'accept']), 'reject', "'accept': compile RegExps with the v flag or \\p{...} (costly)"),
  collection: option(oneOf(['array', 'map', 'set']), undefined, "with Class: the top-level value is this collection (or null) of Class instances or nulls"),
  format: FORMAT_OPTION
};

/* toPlain takes encodeEntity's options but format and bytes; fromPlain decodeEntity's but format and legacy. */
const TO_PLAIN = without(ENCODE, ['format', 'bytes']);
const FROM_PLAIN = without(DECODE, ['format', 'legacy']);

const TRANSCODE = {
  from: option(oneOf(FORMAT_NAMES), undefined, "the input's format (required)"),
  to: option(oneOf(FORMAT_NAMES), undefined, 'the output\'s format (required, not from)'),
  maxDepth: MAX_DEPTH_OPTION,
  maxBytes: MAX_BYTES_OPTION,
  maxLength: MAX_LENGTH_OPTION,
  bytes: BYTES_OPTION
};

/* The Registry of a handle from createRegistry() (createCodec's registry option). */
function registryHandle(handle) {
  const registry = registryOf(handle);
  if (registry === undefined) throw invalid('registry must come from createRegistry()');
  return registry;
}

const CODEC = {
  format: option(formatName, 'json', 'the format of the codec'),
  registry: option(registryHandle, undefined, 'a registry from createRegistry() (default: the default one)'),
  // With either, the codec has a registry of its own with these defaults.
  ...REGISTRY
};

/* The option names of each call (js/internal.cjs: the tests' list of what to accept). */
const ENCODE_OPTIONS = new Set(Object.keys(ENCODE));
const DECODE_OPTIONS = new Set(Object.keys(DECODE));
const TO_PLAIN_OPTIONS = new Set(Object.keys(TO_PLAIN));
const FROM_PLAIN_OPTIONS = new Set(Object.keys(FROM_PLAIN));

/*
 * createCodec({ format = 'json', registry = the default registry,
 * transformKeys?, rename? }) -> { format, registry, encodeEntity,
 * decodeEntity, toPlain, fromPlain, serializable }. `serializable`
 * registers into the codec's registry. transformKeys and rename give the
 * codec a new registry of its own with these defaults
 * (createRegistry({ transformKeys, rename })), so no other codec's names
 * change; with registry they are refused: a registry's defaults are set
 * where it is made.
 */
function createCodec(options) {
  if (options !== undefined && options !== null && typeof options !== 'object') {
    throw invalid(`createCodec takes { ${Object.keys(CODEC).join(', ')} }`);
  }
  const o = readOptions(CODEC, options, 'createCodec', (name) => `createCodec(): ${name}`);
  const format = o.format;
  let registry = o.registry;
  if (o.transformKeys !== undefined || o.rename !== undefined) {
    if (registry !== undefined) {
      throw invalid('createCodec: transformKeys and rename make a new registry; for a registry of yours, give them to createRegistry()');
    }
    registry = new Registry({ transformKeys: o.transformKeys, rename: o.rename });
  }
  if (registry === undefined) registry = defaultRegistry;
  const impl = CODERS[format];
  /*
   * The rebuild callbacks, one per combination of decodeEntity's two flag
   * options, each with its decoder, made once here rather than per call.
   */
  const decoders = [false, true].map((unknownPlain) => [false, true].map((acceptNewer) =>
    new Decoder(unknownPlain, registry, acceptNewer)));
  const rebuilds = decoders.map((row) => row.map((decoder) => (reader) => decoder.decode(reader)));
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
   * value walked under the checked options o (ENCODE's or TO_PLAIN's) into
   * a tape, and that tape made a document by how (a CODERS entry, or
   * PLAIN) while it is valid.
   */
  function walk(value, o, how) {
    const enc = acquire();
    try {
      enc.run(value, o.strict, o.maxDepth, registry, shaping(o.sortKeys, o.only, o.except));
      return how.encode(enc.w.buf, enc.w.pos, o.maxDepth, o.bytes);
    } finally {
      enc.release();
    }
  }

  /*
   * encodeEntity(value, options?) -> the document; options: ENCODE above,
   * docs/API.md.
   *   strict    throw ERR_UNSUPPORTED_TYPE for functions, symbols and objects
   *             darmok cannot round-trip (WeakMap, Promise, boxed primitives),
   *             and ERR_UNREGISTERED_CLASS for instances of unregistered
   *             classes, instead of skipping them / writing plain objects.
   *   bytes     true: the document as bytes in every format (JSON as its
   *             UTF-8, a Buffer under Node), without making a JS string.
   *   sortKeys, only, except: the shaping of select.cjs (docs/SHAPING.md).
   * The value is only read. Re-entrant: a getter may call encodeEntity.
   */
  function encodeEntity(value, options) {
    const o = readOptions(ENCODE, options, 'encodeEntity');
    return walk(value, o, o.format === undefined ? impl : CODERS[o.format]);
  }

  /*
   * toPlain(value, { strict?, maxDepth?, sortKeys?, only?, except? }) ->
   * the tree JSON.parse(encodeEntity(value, options)) gives in the JSON
   * format, whatever the codec's format, made from the encoder's tape
   * without JSON text (plain.cjs).
   */
  function toPlain(value, options) {
    return walk(value, readOptions(TO_PLAIN, options, 'toPlain'), PLAIN);
  }

  /*
   * fromPlain(plain, Class?, options?) -> the value of a plain tree of the
   * JSON format (toPlain's, or JSON.parse of a document): decoded as
   * decodeEntity decodes its JSON text, with the same options, tags,
   * migrations, limits (maxBytes: of that text) and errors; the tree must
   * be JSON data (plain.cjs plainText).
   */
  function fromPlain(plain, Class, options) {
    if (options === undefined && Class !== null && typeof Class === 'object') {
      options = Class;
      Class = undefined;
    }
    const o = readOptions(FROM_PLAIN, options, 'fromPlain');
    const text = plainText(plain, o.maxDepth, o.maxBytes);
    return decode(text, Class, { ...o, format: 'json', legacy: 'none' });
  }

  /*
   * decodeEntity(blob, Class?, options?) -> value. Class, when given, is
   * registered (with its nested types) if it is not yet, as tanagra does;
   * in this call its key and aliases are read as Class even if another
   * class holds them too; and the top-level value must be a Class (or of
   * a subclass) or null, else ERR_UNEXPECTED_CLASS.
   *   collection    with Class, 'array', 'map' or 'set': the top-level
   *                 value must be that collection or null instead, each of
   *                 its members (Map: values) a Class or null.
   * options: DECODE above, docs/API.md.
   *   unknownClass  'throw' (default): ERR_UNKNOWN_CLASS for an unregistered
   *                 class key; 'plain': a plain object of its fields.
   *   newerVersion  'reject' (default): ERR_VERSION for an instance written
   *                 by a newer version of its class; 'accept': build it
   *                 anyway, unknown fields kept as own properties.
   *   legacy        'auto' (default): a document whose top-level value is
   *                 a plain object with a `_serializationKey` is read as
   *                 tanagra-json wrote it (tanagra.cjs); 'tanagra': every
   *                 document is; 'none': none is.
   *   regExpProperties  'reject' (default): ERR_FORMAT for a RegExp with the
   *                 v flag or a Unicode property escape (\p{...}), costly to
   *                 compile; 'accept': compile it (within maxRegExpLength).
   * The options may also come second, without Class.
   */
  function decodeEntity(blob, Class, options) {
    if (options === undefined && Class !== null && typeof Class === 'object') {
      options = Class;
      Class = undefined;
    }
    return decode(blob, Class, readOptions(DECODE, options, 'decodeEntity'));
  }

  /*
   * The plan of Class (null: no Class) for a decode, looked up again only
   * when Class or the registry changed since the last call; its scope is
   * lastScope then.
   */
  function planOf(Class) {
    if (Class === undefined || Class === null) return null;
    if (typeof Class !== 'function') throw invalid('decodeEntity(blob, Class?, options?): Class must be a class');
    if (Class !== lastClass || registry.generation !== lastGeneration) {
      lastPlan = registry.ensure(Class);
      lastScope = registry.scopeOf(lastPlan);
      lastClass = Class;
      lastGeneration = registry.generation;
    }
    return lastPlan;
  }

  /* decoder set to read Class's keys as Class (planOf) and check it; Class's plan, or null. */
  function expect(decoder, Class) {
    const plan = planOf(Class);
    decoder.expected = plan;
    decoder.scope = plan === null ? null : lastScope;
    return plan;
  }

  /* decodeEntity's work, for the checked options o (DECODE's). */
  function decode(blob, Class, o) {
    const unknownPlain = o.unknownClass === 'plain';
    const acceptNewer = o.newerVersion === 'accept';
    const u = unknownPlain ? 1 : 0;
    const a = acceptNewer ? 1 : 0;
    const decoder = decoders[u][a];
    if (expect(decoder, Class) === null && o.collection !== undefined) {
      throw invalid(`collection: '${o.collection}' names what holds instances of Class: give the Class too`);
    }
    const name = o.format === undefined ? format : o.format;
    const how = CODERS[name];
    let legacy = o.legacy;
    if (!how.tanagra) {
      if (legacy === 'tanagra') throw invalid(`the ${name} format has no tanagra documents`);
      legacy = 'none';
    }
    decoder.limitRegExps(o.maxRegExpLength, o.regExpProperties === 'accept');
    let value;
    try {
      value = how.decode(blob, o.maxDepth, o.maxLength, o.maxBytes, rebuilds[u][a]);
    } catch (err) {
      throw withFormatHint(err, name, blob);
    }
    return settle(value, blob, legacy, decoder, unknownPlain, acceptNewer, o.collection);
  }

  /*
   * decode's last step, once decoder rebuilt value from blob's tape: value
   * read as the tanagra document it is, if it is one, then checked against
   * decoder.expected and collection (decode.cjs notExpected).
   */
  function settle(value, blob, legacy, decoder, unknownPlain, acceptNewer, collection) {
    const expected = decoder.expected;
    let topInstance = decoder.topInstance;
    if (legacy !== 'none' && (legacy === 'tanagra' || isTanagraDocument(value, blob))) {
      // a top-level tanagra instance is checked by fromTanagra
      topInstance = tanagraKeyOf(value) !== null;
      value = fromTanagra(value, registry, unknownPlain, acceptNewer, expected, decoder.scope);
    }
    if (expected !== null) {
      const err = notExpected(expected, value, topInstance, collection, registry);
      if (err !== null) throw err;
    }
    return value;
  }

  /*
   * The kept tapes of darmok/redis's L1 (keptTapes): keep(blob) parses
   * blob as decodeEntity(blob) does and keeps its tape (a KeptTape, with
   * blob only when its text may be a tanagra document's: legacy 'auto'
   * reads no other as one, whatever the value); rebuild(kept, Class)
   * gives what decodeEntity(blob, Class) gives, from that tape, without
   * the core. Not re-entrant, as decodeEntity is not: a class hook that
   * calls it mid-rebuild gets ERR_REENTRANT.
   */
  const keptDecoder = new Decoder(false, registry, false);
  const keptReader = new TapeReader(new Uint8Array(0), new DataView(new ArrayBuffer(0)), 0, 0);
  let keptBusy = false;

  function keep(blob) {
    return impl.decode(blob, MAX_DEPTH, MAX_LENGTH, MAX_BYTES, (reader) => new KeptTape(reader, impl.tanagra && hasKeyAsWritten(blob) ? blob : null));
  }

  function rebuild(kept, Class) {
    if (keptBusy) {
      throw new DarmokError('ERR_REENTRANT', 'darmok/redis was called from migrate or fromData while rebuilding a cached value; call it before or after instead');
    }
    const decoder = keptDecoder;
    expect(decoder, Class);
    keptBusy = true;
    let value;
    try {
      value = decoder.decode(kept.readBy(keptReader));
    } finally {
      keptReader.release();
      keptBusy = false;
    }
    return settle(value, kept.blob, kept.blob === null ? 'none' : 'auto', decoder, false, false, undefined);
  }

  const codec = Object.freeze({
    format,
    registry: registry.handle,
    encodeEntity,
    decodeEntity,
    toPlain,
    fromPlain,
    serializable: registry.serializable
  });
  KEPT_TAPES.set(codec, Object.freeze({ keep, rebuild }));
  return codec;
}

/*
 * A codec createCodec made -> its kept-tape functions ({ keep, rebuild },
 * above), or undefined for any other object: not part of a codec's API.
 */
const KEPT_TAPES = new WeakMap();
function keptTapes(codec) {
  return KEPT_TAPES.get(codec);
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
    throw invalid(`transcode(blob, { from, to }) needs from and to: ${FORMAT_NAMES.map((f) => `'${f}'`).join(' or ')}`);
  }
  const { from, to, maxDepth, maxBytes, maxLength, bytes } = readOptions(TRANSCODE, options, 'transcode');
  if (from === undefined || to === undefined || from === to) {
    throw invalid(`transcode converts between ${FORMAT_NAMES.map((f) => `'${f}'`).join(' and ')}: give from and to, different`);
  }
  if (from === 'json' ? typeof blob !== 'string' && !(blob instanceof Uint8Array) : !(blob instanceof Uint8Array)) {
    throw new DarmokError('ERR_UNSUPPORTED_TYPE', wrongBlob(`transcode from ${from}`, blob, from === 'json'
      ? 'a string, a Buffer or a Uint8Array' : 'a Buffer or a Uint8Array'));
  }
  if (typeof blob !== 'string') readable(blob, 'transcode');
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
  createCodec, transcode, entryPoint, MAX_DEPTH, MAX_BYTES, MAX_LENGTH, MAX_REGEXP_LENGTH,
  ENCODE_OPTIONS, DECODE_OPTIONS, TO_PLAIN_OPTIONS, FROM_PLAIN_OPTIONS, keptTapes
};

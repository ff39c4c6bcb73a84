'use strict';
/*
 * decode.cjs - rebuild a JavaScript value from a tape (tape-reader.cjs).
 *
 * The tape is trusted: the core validated the bytes it came from (or this
 * process wrote it), so counts, lengths, REF indexes and nesting are in
 * range. Rebuilding never runs user code: instances are objects with the
 * class's prototype plus own data properties (constructors are not called),
 * and a key that exists on the prototype chain ("__proto__", an accessor of
 * the class) is defined with defineProperty rather than assigned, so no
 * setter runs and `__proto__` is never assigned.
 *
 * Instances of a class are built by a function made for it once the
 * class's field names are known (shapes.cjs), so they share one hidden
 * class with in-object fields, and each field is one monomorphic store.
 *
 * Identity: each object takes the next referenceable index as its op is
 * read, before its children, as the encoder counted; one array maps the
 * indexes a reference of the tape may name (below the core's
 * reader.refKeep) to their objects.
 */

const T = require('../core/tape.cjs');
const { TapeReader, StringMemo, KEEP_ALL } = require('../core/tape-reader.cjs');
const { backslashesBefore, nodeBufferOf } = require('../core/text.cjs');
const { addSegment, rawSegment, finishPath, pathError, DarmokError, shorten, stackDepthError } = require('../core/errors.cjs');
const { defaultRegistry, upgrade, newerVersionError, build, unexpectedClass, setOwn } = require('./registry.cjs');
const { offerDecodeShape, decodeShapeMissed } = require('./shapes.cjs');
const { KeyGuard, QUIET } = require('./collisions.cjs');

const defineProperty = Object.defineProperty;
const NodeBuffer = typeof Buffer === 'function' ? Buffer : null;

/* Error constructors by name; any other name is an Error with an own name. */
const ERRORS = new Map([
  ['Error', Error], ['TypeError', TypeError], ['RangeError', RangeError],
  ['SyntaxError', SyntaxError], ['ReferenceError', ReferenceError],
  ['EvalError', EvalError], ['URIError', URIError]
]);
if (typeof AggregateError === 'function') ERRORS.set('AggregateError', AggregateError);

/* Own, non-enumerable, like the properties the Error constructor makes. */
function setHidden(obj, key, x) {
  defineProperty(obj, key, { value: x, writable: true, enumerable: false, configurable: true });
}

/* A real error object (with its internal slot), without capturing a stack. */
function makeError(name) {
  const Ctor = ERRORS.get(name);
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  let err;
  try {
    if (Ctor === undefined) err = new Error();
    else if (Ctor === ERRORS.get('AggregateError')) err = new Ctor([]);
    else err = new Ctor();
  } finally {
    Error.stackTraceLimit = limit;
  }
  delete err.stack;
  if (Ctor === AggregateErrorCtor) delete err.errors;
  if (err.name !== name) setHidden(err, 'name', name);
  return err;
}
const AggregateErrorCtor = ERRORS.get('AggregateError');

function copyBytes(kind, src) {
  switch (kind) {
    case T.BYTES_BUFFER: {
      if (NodeBuffer === null) return src.slice();
      // Buffer.alloc never uses the shared pool: the result owns its memory.
      const b = NodeBuffer.alloc(src.length);
      b.set(src);
      return b;
    }
    case T.BYTES_ARRAYBUFFER:
      return src.slice().buffer;
    case T.BYTES_DATAVIEW:
      return new DataView(src.slice().buffer);
    default:
      return new T.TYPED_ARRAYS[kind](src.slice().buffer);
  }
}

/* What a decoder between calls holds instead of the last call's objects. */
const NO_REFS = Object.freeze([]);

/*
 * The largest table of referenced values made at once; past it the table
 * grows as it is filled. This many slots (8 bytes each) stay under V8's
 * large-object size: a larger array is allocated in the old generation,
 * where storing each new object into it goes through the write barrier and
 * the remembered set. It also bounds what a document whose rebuild fails
 * at once (an unknown class) makes for nothing.
 */
const REFS_AT_ONCE = 16000;

/* decodeEntity's default maxRegExpLength (api.cjs). */
const MAX_REGEXP_LENGTH = 16384;

/*
 * Whether a RegExp source has \p{ or \P{ as an escape (after an odd run of
 * backslashes): a Unicode property escape under the u or v flag.
 */
function hasPropertyEscape(source) {
  for (let i = source.indexOf('{'); i >= 0; i = source.indexOf('{', i + 1)) {
    const c = source.charCodeAt(i - 1);
    if ((c === 0x70 || c === 0x50) && i >= 2 && backslashesBefore(source, i - 1) % 2 === 1) return true;
  }
  return false;
}

/* Periods in which no user code ran (see shapeFits); one per decode at least. */
let epochs = 0;

/* new Array(n) up to this length (see array()). */
const SMALL_ARRAY = 64;

/*
 * Make arr's length len (> arr.length) past a run of holes, without
 * making the holes. `arr.length = len` makes V8 allocate a backing store of
 * len slots (8 bytes each) on a fast array, so a small document of a few
 * {"$hole":16777216} would run Node out of heap. Defining the
 * last index instead goes through V8's element-store heuristics, as user
 * code writing a[len - 1] would: a gap of more than 1024 slots turns the
 * array into a dictionary (a few bytes whatever the gap), a short one grows
 * the store as appends do. Deleting the index leaves the length. Defined,
 * not assigned: an index setter on Array.prototype is never called.
 */
const HOLE_SLOT = { value: undefined, writable: true, enumerable: true, configurable: true };
function extendWithHoles(arr, len) {
  defineProperty(arr, len - 1, HOLE_SLOT);
  delete arr[len - 1];
}

/*
 * Decoder: rebuilds the value of a tape, one decode(reader) at a time
 * (api.cjs keeps one per option set; see instance.cjs `reader` for why).
 *
 * What the decode shapes (shapes.cjs makeDecodeShape) use of it, and
 * nothing else: take(o), value(), epoch (read), shapeMissed() and
 * shapeResume() for the hand-over to the generic loop.
 * `unknownPlain` turns unknown class keys into plain objects instead of
 * ERR_UNKNOWN_CLASS; `registry` (default: the default registry) maps class
 * keys to plans; `acceptNewer` rebuilds instances written by a newer
 * version of their class instead of throwing ERR_VERSION.
 */
class Decoder {
  constructor(unknownPlain, registry, acceptNewer) {
    this.unknownPlain = unknownPlain;
    this.registry = registry === undefined ? defaultRegistry : registry;
    this.acceptNewer = acceptNewer === true;
    /* The state of one decode, set by decode(): */
    this.r = null; // the TapeReader
    this.refs = NO_REFS; // referenceable index -> object (see take)
    this.nrefs = 0; // how many there are so far
    this.keep = 0; // how many of them references need (reader.refKeep)
    /* key -> whether it exists on Object.prototype (see plain()); made
       by the first plain object, as most documents of instances have none. */
    this.inherited = null;
    /* The last error a class's migrate/fromData threw (passed on untouched). */
    this.hookError = null;
    /* The period shapes were checked in (see shapeFits). */
    this.epoch = 0;
    /* Set by the caller before each decode (decodeEntity(blob, Class)):
       the plan of Class, whose instance the top-level value must be if it
       is an instance, or null; and the registry's scopeOf() that plan,
       the names read as Class in this call, or null. */
    this.expected = null;
    this.scope = null;
    /* Whether the last decode's top-level value was an instance, whose
       class decode() checked against this.expected (see notExpected). */
    this.topInstance = false;
    /* RegExps: see regexp() and limitRegExps(). */
    this.maxRegExpLength = MAX_REGEXP_LENGTH;
    this.regExpProperties = false;
    this.regExpLeft = 0;
  }

  /*
   * The RegExp limits of the decodes that follow: the characters of source
   * all RegExps of one document may have, and whether property escapes
   * and the v flag are accepted.
   */
  limitRegExps(maxLength, acceptProperties) {
    this.maxRegExpLength = maxLength;
    this.regExpProperties = acceptProperties;
  }

  /*
   * Rebuild the value of reader's tape. Not re-entrant; nothing of the
   * call is held after it.
   */
  decode(reader) {
    this.r = reader;
    const n = reader.refKeep;
    this.refs = n === 0 || n === KEEP_ALL ? [] : new Array(n < REFS_AT_ONCE ? n : REFS_AT_ONCE);
    this.nrefs = 0;
    this.keep = n;
    this.inherited = null;
    this.hookError = null;
    this.epoch = ++epochs;
    this.regExpLeft = this.maxRegExpLength;
    try {
      this.topInstance = reader.buf[reader.pos] === T.T_INSTANCE;
      const top = this.expected !== null && this.topInstance ? reader.pos : -1;
      const value = this.value();
      if (top !== -1 && Object.getPrototypeOf(value) !== this.expected.proto) this.checkTop(top);
      return value;
    } catch (err) {
      // The rebuild recurses once per level; a RangeError that no class hook
      // threw is the JS stack running out (maxDepth raised far too high).
      if (err instanceof RangeError && err !== this.hookError) throw stackDepthError(null, err);
      throw finishPath(err);
    } finally {
      this.r = null;
      this.refs = NO_REFS;
      this.nrefs = 0;
      this.inherited = null;
      this.hookError = null;
    }
  }

  /*
   * After the top-level instance, whose op was at tape byte `top`, was
   * built with another prototype than this.expected's: throw
   * ERR_UNEXPECTED_CLASS unless its class key names this.expected's class
   * or a subclass (which fromData may build as it likes). The key is read
   * again; the first key of a tape is never a key reference.
   */
  checkTop(top) {
    const r = this.r;
    r.pos = top + 1;
    const key = r.key();
    const err = unexpectedClass(this.expected, key, this.registry.planByKey(key, this.scope));
    if (err !== null) throw err;
  }

  /*
   * Give x the next referenceable index, and keep it in the table when a
   * reference of the tape may name it: below the core's reader.refKeep.
   * A document without references keeps nothing: a table of every object
   * would be an old-generation object (past REFS_AT_ONCE) that each new
   * object is written into, through the write barrier and the remembered
   * set, which every scavenge of a large decode then walks. The table is
   * made at that size (up to REFS_AT_ONCE; a tape no core described starts
   * empty), so it does not regrow from nothing. A store past its end
   * appends.
   */
  take(x) {
    const i = this.nrefs++;
    if (i < this.keep) this.refs[i] = x;
  }

  value() {
    const r = this.r;
    const op = r.buf[r.pos++];
    switch (op) {
      case T.T_STR: return r.str();
      case T.T_STR16: return r.str16(); // JS-written tapes only (decodeTape)
      case T.T_STRREF: return r.strRef(); // protobuf decode tapes only
      case T.T_INT: return r.i32();
      case T.T_OBJECT: return this.plain();
      case T.T_ARRAY: return this.array();
      case T.T_TRUE: return true;
      case T.T_FALSE: return false;
      case T.T_NULL: return null;
      case T.T_F64: return r.f64();
      case T.T_UNDEF: return undefined;
      case T.T_REF: return this.refs[r.u32()];
      case T.T_BIGINT: return BigInt(r.str());
      case T.T_INSTANCE: return this.instance();
      case T.T_NULLPROTO: {
        const obj = Object.create(null);
        this.take(obj);
        this.fields(obj);
        return obj;
      }
      case T.T_MAP: return this.map();
      case T.T_SET: return this.set();
      case T.T_DATE: {
        const d = new Date(r.f64());
        this.take(d);
        return d;
      }
      case T.T_REGEXP: return this.regexp();
      case T.T_BYTES: {
        const kind = r.u8();
        const len = r.u32();
        const b = copyBytes(kind, r.bytes(len));
        this.take(b);
        return b;
      }
      case T.T_ERROR: return this.error();
      default:
        throw new DarmokError('ERR_INTERNAL', `bad tape op ${op} at tape byte ${r.pos - 1}`);
    }
  }

  /* u32 n, then n x (key str, value) as own data properties of obj. */
  fields(obj) {
    this.fieldsFrom(obj, 0, this.r.u32(), null, null, null);
  }

  /* An instance of plan built by fields(); its keys may become plan's decode shape. */
  learn(plan) {
    const obj = Object.create(plan.proto);
    this.take(obj);
    const keys = [];
    this.fieldsFrom(obj, 0, this.r.u32(), null, keys, plan.naming);
    // (A nested instance of the same class may have made the shape already.)
    offerDecodeShape(plan, keys);
    return obj;
  }

  /*
   * Whether shape may build in this epoch: none of its keys is on plan's
   * prototype chain, where a store with a constant key would run a setter.
   * Checked once per class per epoch: a decode, or the part of one after a
   * class hook ran (user code may change prototypes).
   */
  shapeFits(plan, shape) {
    if (shape.onChain()) {
      // A miss: a shape made from keys the chain has (`constructor`)
      // would never build, and is dropped in the end.
      decodeShapeMissed(shape);
      return false;
    }
    shape.epoch = this.epoch;
    if (shape.kept === null) shape.kept = shape.keeper(); // runs no setter: none is there
    return true;
  }

  /*
   * The rest of an instance whose fields left its shape at field i (of n),
   * with key k read already (null: not read). Fields before i are set.
   */
  shapeMissed(shape, obj, i, n, k) {
    decodeShapeMissed(shape);
    return this.fieldsFrom(obj, i, n, k, null, shape.plan.naming);
  }

  /*
   * The rest of an instance whose shape stopped after field i's value x
   * was read, because a class hook ran inside it: x and the fields after
   * it are set as fields() sets them, checking the chain for each key.
   */
  shapeResume(shape, obj, i, n, x) {
    setOwn(obj, shape.keys[i], x);
    return this.fieldsFrom(obj, i + 1, n, null, null, shape.plan.naming);
  }

  /*
   * Fields i to n-1 of obj (key str, value) as own data properties, with
   * field i's key k read already (null: not read); each key as read also
   * pushed to keys unless it is null. With names (a class's Naming), a key
   * is the wire name of the field names.field() gives. Returns obj.
   */
  fieldsFrom(obj, i, n, k, keys, names) {
    const r = this.r;
    let key = '';
    try {
      for (; i < n; i++) {
        key = k !== null ? k : r.key();
        k = null;
        if (keys !== null) keys.push(key);
        if (names !== null) key = names.field(key);
        setOwn(obj, key, this.value());
      }
    } catch (err) {
      throw addSegment(err, key);
    }
    return obj;
  }

  /*
   * A plain object. Whether a key exists on Object.prototype is looked up
   * once per key per decode: no user code runs during a rebuild, so the
   * answer cannot change within one.
   */
  plain() {
    const r = this.r;
    const obj = {};
    this.take(obj);
    const n = r.u32();
    let key = '';
    try {
      for (let i = 0; i < n; i++) {
        key = r.key();
        const x = this.value();
        // Taken after the value: a class hook inside it empties the cache.
        let inherited = this.inherited;
        if (inherited === null) inherited = this.inherited = new Map();
        let onChain = inherited.get(key);
        if (onChain === undefined) {
          onChain = key in Object.prototype;
          inherited.set(key, onChain);
        }
        // An own key met twice (duplicate JSON keys) is a writable data
        // property by now, so plain assignment only overwrites it.
        if (onChain) {
          defineProperty(obj, key, { value: x, writable: true, enumerable: true, configurable: true });
        } else {
          obj[key] = x;
        }
      }
    } catch (err) {
      throw addSegment(err, key);
    }
    return obj;
  }

  array() {
    const r = this.r;
    const len = r.u32();
    // Small arrays are made at their length (JSON.parse's are exact too),
    // not grown by appends to a capacity of 16 or more; others grow by
    // push(), which also sets the length past an element that an index
    // setter on Array.prototype swallowed.
    const small = len !== 0 && len <= SMALL_ARRAY;
    const arr = small ? new Array(len) : [];
    this.take(arr);
    let i = 0;
    try {
      while (i < len) {
        if (r.buf[r.pos] === T.T_HOLE) {
          r.pos++;
          i += r.u32();
          if (!small) extendWithHoles(arr, i);
        } else if (small) {
          arr[i] = this.value();
          i++;
        } else {
          arr.push(this.value());
          i++;
        }
      }
    } catch (err) {
      throw addSegment(err, i);
    }
    return arr;
  }

  instance() {
    const r = this.r;
    const key = r.key();
    const version = r.u32();
    const plan = this.registry.planByKey(key, this.scope);
    let obj;
    if (plan !== null) {
      // The fast path: the current version, no hook to run.
      if (version !== plan.plainVersion) return this.upgraded(plan, version);
      const shape = plan.decodeShape;
      if (shape === null) return this.learn(plan);
      if (shape !== false && (shape.epoch === this.epoch || this.shapeFits(plan, shape))) {
        return shape.build(this, r, r.u32());
      }
      obj = Object.create(plan.proto);
    } else if (this.unknownPlain) obj = {};
    else throw pathError('ERR_UNKNOWN_CLASS', `unknown class key ${JSON.stringify(shorten(key, 60))}: register the class with serializable()`);
    this.take(obj);
    this.fieldsFrom(obj, 0, r.u32(), null, null, plan === null ? null : plan.naming);
    return obj;
  }

  /*
   * An instance whose bytes need work before it is built: an older version
   * (migration steps, run after its nested instances were built, so inner
   * classes migrate first), a newer one (ERR_VERSION, or built as it is
   * with acceptNewer), or a class with fromData. Its fields are read into a
   * plain data object, upgraded, then built (registry.cjs upgrade, build).
   *
   * The instance takes its reference index now, before its fields, as the
   * encoder counted. Without fromData that index holds the object that is
   * returned, so references from inside its fields (cycles) reach it. With
   * fromData the object exists only after its fields: until then the index
   * is an accessor that throws ERR_FORMAT, so a cycle through the instance
   * fails loudly instead of pointing at a stand-in. (Both only when a
   * reference of the tape may name the index: below this.keep. The
   * accessor turns `refs` into a slow array for the rest of this decode;
   * only documents with references to fromData instances or to values
   * after them pay for it.)
   */
  upgraded(plan, version) {
    if (version > plan.version && !this.acceptNewer) throw newerVersionError(plan, version);
    const refs = this.refs;
    const index = this.nrefs;
    const target = plan.fromData === null ? Object.create(plan.proto) : null;
    this.take(target);
    const named = index < this.keep; // a reference may name it
    if (target === null && named) {
      defineProperty(refs, index, {
        get() {
          throw pathError('ERR_FORMAT', `an instance of class "${plan.key}" is referred to from inside its own fields, but fromData builds it only after them`);
        },
        enumerable: true,
        configurable: true
      });
    }
    // The data of the class's own field names: what its migrate steps and
    // fromData are written against.
    const data = {};
    this.fieldsFrom(data, 0, this.r.u32(), null, null, plan.naming);
    let obj;
    try {
      obj = build(plan, upgrade(plan, data, version, this.acceptNewer), target);
    } catch (err) {
      this.hookError = err; // the class's own code threw it: pass it on as it is
      throw err;
    }
    // The hooks were user code: what is on Object.prototype may have
    // changed, so plain() looks its keys up again.
    this.inherited = null;
    this.epoch = ++epochs;
    if (target === null && named) defineProperty(refs, index, { value: obj, writable: true, enumerable: true, configurable: true });
    return obj;
  }

  map() {
    const r = this.r;
    const n = r.u32();
    const m = new Map();
    this.take(m);
    // Number and BigInt keys go through a guard (collisions.cjs), which
    // counts nothing before QUIET of them: a smaller Map needs none.
    const guarded = n > QUIET;
    let guard = null;
    let i = 0;
    try {
      for (; i < n; i++) {
        // A string key and an int32 value, the common Map entry, are read
        // here, not through a call to value(), which V8 does not inline here.
        let op = r.buf[r.pos];
        let k;
        let hashed = false;
        if (op === T.T_STR) {
          r.pos++;
          k = r.str();
        } else if (op === T.T_STRREF) { // a key repeated across Maps, in protobuf
          r.pos++;
          k = r.strRef();
        } else {
          k = this.value();
          hashed = guarded && (typeof k === 'number' || typeof k === 'bigint');
        }
        op = r.buf[r.pos];
        let x;
        if (op === T.T_INT) {
          r.pos++;
          x = r.i32();
        } else x = this.value();
        if (!hashed) m.set(k, x);
        else {
          if (guard === null) guard = new KeyGuard();
          guard.set(m, k, x);
        }
      }
    } catch (err) {
      throw addSegment(err, rawSegment(`.$Map[${i}]`));
    }
    return m;
  }

  set() {
    const r = this.r;
    const n = r.u32();
    const s = new Set();
    this.take(s);
    const guarded = n > QUIET; // as in map()
    let guard = null;
    let i = 0;
    try {
      for (; i < n; i++) {
        const x = this.value();
        if (!guarded || (typeof x !== 'number' && typeof x !== 'bigint')) s.add(x);
        else {
          if (guard === null) guard = new KeyGuard();
          guard.add(s, x);
        }
      }
    } catch (err) {
      throw addSegment(err, rawSegment(`.$Set[${i}]`));
    }
    return s;
  }

  /*
   * A RegExp is compiled here, never run, but compiling costs: V8's time
   * grows with the source, steeply for case-insensitive Unicode classes
   * and far more for property escapes (\p{RGI_Emoji} with the v flag).
   * So the sources of one document's RegExps have a total budget
   * (maxRegExpLength), and property escapes and the v flag are refused
   * unless regExpProperties is 'accept'.
   */
  regexp() {
    const r = this.r;
    const source = r.str();
    const flags = r.str();
    this.regExpLeft -= source.length;
    if (this.regExpLeft < 0) {
      throw pathError('ERR_TOO_LARGE', `the RegExps of this document have more than maxRegExpLength (${this.maxRegExpLength}) characters of source in all`);
    }
    if (!this.regExpProperties && (flags.includes('v') || (flags.includes('u') && hasPropertyEscape(source)))) {
      throw pathError('ERR_FORMAT', `RegExp /${shorten(source, 60)}/${shorten(flags, 10)} has the v flag or a Unicode property escape (\\p{...}), refused unless regExpProperties is 'accept'`);
    }
    let re;
    try {
      re = new RegExp(source, flags);
    } catch {
      throw pathError('ERR_FORMAT', `invalid RegExp /${shorten(source, 60)}/${shorten(flags, 10)}`);
    }
    this.take(re);
    return re;
  }

  /*
   * The error is made before its fields are read (its index comes first),
   * so its class is taken from a leading string "name" read ahead.
   */
  error() {
    const r = this.r;
    const n = r.u32();
    let i = 0;
    let name = 'Error';
    const mark = r.pos;
    const keysAt = r.keysRead();
    const op = n > 0 && r.key() === 'name' ? r.buf[r.pos] : 0;
    if (op === T.T_STR || op === T.T_STRREF) {
      r.pos++;
      name = op === T.T_STR ? r.str() : r.strRef();
      i = 1;
    } else {
      r.pos = mark;
      r.unreadKeys(keysAt);
    }
    const err = makeError(name);
    this.take(err);
    let key = 'name';
    try {
      for (; i < n; i++) {
        key = r.key();
        const x = this.value();
        switch (key) {
          case 'name':
            if (err.name !== x) setHidden(err, 'name', x);
            break;
          case 'message':
          case 'stack':
          case 'cause':
          case 'errors':
            setHidden(err, key, x);
            break;
          default:
            setOwn(err, key, x);
        }
      }
    } catch (e) {
      throw addSegment(e, key);
    }
    return err;
  }
}

/* Rebuild the value of the tape bytes u8[0..u8.length) (a JS-side tape). */
function decodeTape(u8, options) {
  const reader = new TapeReader(u8, new DataView(u8.buffer, u8.byteOffset, u8.byteLength), 0, u8.length);
  const unknownPlain = options !== undefined && options.unknownClass === 'plain';
  const registry = options !== undefined ? options.registry : undefined;
  const acceptNewer = options !== undefined && options.newerVersion === 'accept';
  return new Decoder(unknownPlain, registry, acceptNewer).decode(reader);
}

/*
 * KeptTape: a copy of the tape reader is over (a decode's, in the core's
 * memory), with its UTF-16 side table and the JSON text that table's
 * entries point into, so its value can be rebuilt again and again without
 * parsing the document again (darmok/redis's L1); blob, the document, is
 * kept when the caller needs it (to tell a tanagra document), else null.
 * Made before the rebuild reads anything. The side table goes after the
 * tape, at a multiple of 8, so its units stay aligned; its entries hold
 * tape offsets, which stay right because the tape starts at 0. Its first
 * rebuild keeps the strings it reads (a StringMemo), which the rebuilds
 * after it take instead of making them again.
 */
class KeptTape {
  constructor(reader, blob) {
    const tapeLen = reader.end - reader.pos;
    const u16Len = reader.u16End - reader.u16At;
    const at = (tapeLen + 7) & ~7;
    const buf = new Uint8Array(u16Len === 0 ? tapeLen : at + u16Len);
    buf.set(reader.buf.subarray(reader.pos, reader.end));
    if (u16Len !== 0) buf.set(reader.buf.subarray(reader.u16At, reader.u16End), at);
    this.buf = buf;
    this.nb = nodeBufferOf(buf);
    this.view = new DataView(buf.buffer);
    this.end = tapeLen;
    this.u16At = u16Len === 0 ? 0 : at;
    this.u16End = u16Len === 0 ? 0 : at + u16Len;
    this.text = u16Len === 0 ? '' : reader.text;
    this.refKeep = reader.refKeep;
    this.refs = reader.hasKeyRefs();
    this.blob = blob;
    this.memo = null;
  }

  /* What it holds in memory, in bytes (a text counts its length; the text is the blob when both are kept). */
  get bytes() {
    return this.buf.length + (this.blob !== null ? this.blob.length : this.text.length) + (this.memo !== null ? this.memo.bytes : 0);
  }

  /*
   * reader (a TapeReader) set over this tape from its start, as the core's
   * reader was, its strings from the memo; the first rebuild fills the memo.
   */
  readBy(reader) {
    reader.reset(this.buf, this.view, 0, this.end, this.nb);
    reader.refKeep = this.refKeep;
    if (this.u16End !== 0) reader.useUtf16(0, this.u16At, this.u16End, this.text);
    if (this.refs) reader.useRefs();
    if (this.memo === null) this.memo = new StringMemo();
    else this.memo.open = false;
    reader.useMemo(this.memo);
    return reader;
  }
}

/*
 * What a value that is no Class is, for ERR_UNEXPECTED_CLASS: [actual,
 * how a message says it]. actual is the class key of an instance of a
 * class registry knows, else its kind ('plain object', 'Array', 'number',
 * a constructor's name).
 */
function kindOf(v, registry) {
  const kind = (k) => [k, `${/^[aeiou]/i.test(k) ? 'an' : 'a'} ${k}`];
  if (typeof v !== 'object' && typeof v !== 'function') return kind(typeof v);
  if (Array.isArray(v)) return kind('Array');
  const proto = Object.getPrototypeOf(v);
  if (proto === null) return kind('null-prototype object');
  if (proto === Object.prototype) return kind('plain object');
  const plan = registry.planOf(proto);
  if (plan !== null) return [plan.key, `an instance of "${shorten(plan.key, 60)}"`];
  const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor');
  return kind(ctor !== undefined && typeof ctor.value === 'function' && ctor.value.name !== '' ? ctor.value.name : 'object');
}

/* The top-level value each decodeEntity collection option asks for, and its name. */
const COLLECTIONS = {
  array: { is: (v) => Array.isArray(v), name: 'an Array' },
  map: { is: (v) => v instanceof Map, name: 'a Map' },
  set: { is: (v) => v instanceof Set, name: 'a Set' }
};

/* ERR_UNEXPECTED_CLASS for v at path (undefined: the top), where wanted was asked for. */
function unexpectedValue(expected, v, registry, wanted, path) {
  const [actual, said] = kindOf(v, registry);
  const err = new DarmokError('ERR_UNEXPECTED_CLASS',
    `decodeEntity(blob, ${expected.Class.name || 'Class'}): the document holds ${said}${path === undefined ? '' : ' there'}, not ${wanted}`,
    undefined, path);
  err.expected = expected.key;
  err.actual = actual;
  return err;
}

/*
 * The first member of collection value (an Array's elements, a Set's
 * members, a Map's values) that is neither a Class (expected.proto on its
 * chain) nor null, with its path, or null. Each member decoded as an
 * instance under a key read as Class was built as one, so the prototype
 * tells; the path counts members in order, as the document lists them.
 */
function badMember(expected, value) {
  const ok = (x) => x === null || expected.proto.isPrototypeOf(x);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!ok(value[i])) return { member: value[i], path: `$[${i}]` };
    return null;
  }
  let i = 0;
  for (const x of value.values()) {
    if (!ok(x)) return { member: x, path: value instanceof Map ? `$.$Map[${i}][1]` : `$.$Set[${i}]` };
    i++;
  }
  return null;
}

/*
 * What decodeEntity(blob, Class, { collection? }) may return, checked once
 * value is built: the ERR_UNEXPECTED_CLASS to throw, or null. Without
 * collection, a Class (an instance was checked by decode() already:
 * topInstance) or null. With collection ('array', 'map', 'set'), that
 * collection or null, each member a Class or null. expected: Class's
 * plan; registry: where another class's key is found, for `actual`.
 */
function notExpected(expected, value, topInstance, collection, registry) {
  if (value === null) return null;
  const instance = `an instance of "${expected.key}"`;
  if (collection === undefined) {
    return topInstance ? null : unexpectedValue(expected, value, registry, `${instance} or null`);
  }
  const kind = COLLECTIONS[collection];
  if (!kind.is(value)) return unexpectedValue(expected, value, registry, `${kind.name} (collection: '${collection}') or null`);
  const bad = badMember(expected, value);
  return bad === null ? null : unexpectedValue(expected, bad.member, registry, `${instance} or null`, bad.path);
}

module.exports = { Decoder, KeptTape, decodeTape, notExpected, MAX_REGEXP_LENGTH };

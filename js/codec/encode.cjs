'use strict';
/*
 * encode.cjs - walk a JavaScript value once and write its tape (tape-writer.cjs).
 *
 * What is written: own enumerable string-keyed properties, in Object.keys
 * order, as JSON.stringify sees them. Function- and symbol-valued properties
 * are skipped (in arrays they become null, as JSON.stringify does; in Maps
 * and Sets the entry is skipped; at the top level the value is undefined).
 * With `strict` those, and other values darmok cannot round-trip, throw
 * ERR_UNSUPPORTED_TYPE; an instance of an unregistered class throws
 * ERR_UNREGISTERED_CLASS instead of becoming a plain object.
 *
 * Identity: every object with identity gets the next referenceable index;
 * an object met again is written as T_REF to it (identity.cjs). Which
 * built-in an object is, and its state, come from builtins.cjs. The input
 * is only read, never changed.
 *
 * The walk recurses once per container level, bounded by maxDepth, which is
 * checked before each container is entered.
 *
 * Per-call shaping (docs/SHAPING.md): sortKeys writes the keys of plain
 * objects and instances in code-unit order of their written names; only /
 * except (select.cjs) pick the fields of instances by class key. Without
 * them nothing of this runs: an instance is written by its shape.
 */

const T = require('../core/tape.cjs');
const { TapeWriter } = require('../core/tape-writer.cjs');
const { DEFAULT_MAX_DEPTH } = require('../core/dk_abi.cjs');
const { addSegment, rawSegment, finishPath, pathError, stackDepthError } = require('../core/errors.cjs');
const { defaultRegistry } = require('./registry.cjs');
const { offerEncodeShape, encodeShapeMissed } = require('./shapes.cjs');
const { Identities } = require('./identity.cjs');
const {
  isExactBuiltin, writtenAsBuiltin, isStandardError, isMap, isSet, isArrayBuffer, isRegExp, timeOf, mapCopy,
  looksBoxed, isBoxed, isUnsupported, byteKind, isArray, describe, isIndex, unreadable
} = require('./builtins.cjs');

/* Nesting from which a RangeError in the walk is taken for the JS stack. */
const STACK_DEPTH = 64;

const hasOwn = Object.prototype.hasOwnProperty;
const DATE_PROTO = Date.prototype;
const MAP_PROTO = Map.prototype;
const SET_PROTO = Set.prototype;
const mapForEach = Map.prototype.forEach;

/* Error fields written first, in this order; the rest follow as extras. */
const ERROR_FIXED = new Set(['name', 'message', 'stack', 'cause', 'errors']);

/* Slots probed one by one before a run of holes is looked up by key. */
const HOLE_PROBE = 32;

/*
 * The first index >= from that is present in the array v (len if none).
 * Short runs of holes are probed; a long one is found through the array's
 * own keys, so a sparse array such as `a[1e9] = 1` costs its present
 * elements, not its length.
 */
function nextPresent(v, from, len) {
  const stop = from + HOLE_PROBE < len ? from + HOLE_PROBE : len;
  for (let j = from; j < stop; j++) if (j in v) return j;
  if (stop === len) return len;
  const keys = Object.keys(v); // integer keys come first, ascending
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) { // first key whose index is >= stop
    const mid = (lo + hi) >>> 1;
    const k = keys[mid];
    if (isIndex(k) && Number(k) < stop) lo = mid + 1;
    else hi = mid;
  }
  return lo < keys.length && isIndex(keys[lo]) ? Math.min(Number(keys[lo]), len) : len;
}

/*
 * Encoder: the state of one walk, its identity table (identity.cjs)
 * included. A module-level instance is reused by calls that do not
 * overlap; a call made while it is busy (a getter that calls
 * encodeEntity) gets a fresh one, so nothing shared is overwritten.
 *
 * What the encode shapes (shapes.cjs makeEncodeShape) use of it, and
 * nothing else: skipped(x) and value(x) (the writer is passed apart).
 */
/*
 * The bytes of a binary value: v a view of byte kind kind, or an
 * ArrayBuffer (kind -1). A view of a transferred (detached) ArrayBuffer,
 * or of a resizable one shrunk below the view's end, cannot be read (a
 * typed array's length reads 0, a DataView's getters throw): that is the
 * caller's value we cannot encode, an ERR_UNSUPPORTED_TYPE at its path,
 * not a bare TypeError nor an empty value.
 */
function bytesOf(v, kind) {
  try {
    if (kind < 0) return new Uint8Array(v, 0, v.byteLength);
    if (kind === T.BYTES_DATAVIEW || !unreadable(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  } catch {
    // what the getters or the view of a detached buffer threw: below
  }
  throw pathError('ERR_UNSUPPORTED_TYPE', 'cannot encode binary data whose ArrayBuffer was transferred (detached) or shrunk below the view');
}

class Encoder extends Identities {
  constructor() {
    super(new TapeWriter());
    this.depth = 0;
    this.maxDepth = DEFAULT_MAX_DEPTH;
    this.strict = false;
    this.busy = false;
    /* Where instances find their plans (registry.cjs). */
    this.registry = defaultRegistry;
    /* This call's shaping: sortKeys, and the only/except of select.cjs
       (class key -> Set of fields, or null); custom: any of them. */
    this.sortKeys = false;
    this.only = null;
    this.except = null;
    this.custom = false;
    /* plan -> selected(plan.fields, plan), for this call (made on first use). */
    this.selections = null;
    /* The Map being walked (map(), entry()): counts, and entry bound to this. */
    this.mapN = 0;
    this.mapI = 0;
    this.mapPart = 0;
    this.mapEntry = (x, k) => this.entry(x, k);
  }

  /*
   * Write the tape of value into this.w (bytes w.buf[0..w.pos)). Throws a
   * DarmokError with its path; the writer is left for release() to reset.
   */
  run(value, strict, maxDepth, registry, shaping) {
    this.registry = registry === undefined ? defaultRegistry : registry;
    if (shaping !== undefined && shaping !== null) {
      this.sortKeys = shaping.sortKeys;
      this.only = shaping.only;
      this.except = shaping.except;
      this.custom = true;
    }
    this.strict = strict;
    this.maxDepth = maxDepth;
    this.depth = 0;
    this.w.pos = 0;
    try {
      const t = typeof value;
      if (t === 'function' || t === 'symbol') {
        if (strict) throw this.unsupported(value);
        this.w.op(T.T_UNDEF);
      } else {
        this.value(value);
      }
      this.resolve();
    } catch (err) {
      // A RangeError deep inside the walk is the JS stack running out (a
      // getter throwing one 64 levels down is the only other way).
      if (err instanceof RangeError && this.depth >= STACK_DEPTH) throw stackDepthError(this.depth, err);
      throw finishPath(err);
    }
  }

  release() {
    this.forgetAll();
    this.w.reset();
    if (this.custom) {
      this.sortKeys = false;
      this.only = null;
      this.except = null;
      this.custom = false;
      this.selections = null;
    }
    this.busy = false;
  }

  unsupported(v) {
    return pathError('ERR_UNSUPPORTED_TYPE', `cannot encode ${describe(v)}`);
  }

  /* True when v is skipped (or becomes null); throws instead under strict. */
  skipped(v) {
    const t = typeof v;
    if (t !== 'function' && t !== 'symbol') return false;
    if (this.strict) throw this.unsupported(v);
    return true;
  }

  enter() {
    if (++this.depth > this.maxDepth) {
      throw pathError('ERR_DEPTH', `nesting deeper than maxDepth (${this.maxDepth})`);
    }
  }

  value(v) {
    const w = this.w;
    switch (typeof v) {
      case 'string':
        w.strValue(v);
        return;
      case 'number':
        w.num(v);
        return;
      case 'boolean':
        w.op(v ? T.T_TRUE : T.T_FALSE);
        return;
      case 'undefined':
        w.op(T.T_UNDEF);
        return;
      case 'object':
        if (v === null) w.op(T.T_NULL);
        else this.object(v);
        return;
      case 'bigint':
        w.op(T.T_BIGINT);
        w.str(v.toString());
        return;
      default: // function, symbol: null, as JSON.stringify writes them in arrays
        if (this.strict) throw this.unsupported(v);
        w.op(T.T_NULL);
    }
  }

  object(v) {
    if (this.met(v)) return; // else v takes an index below (take) or is forgotten
    if (isArray(v)) {
      // A subclass of Array is written as an array (its class is lost):
      // strict mode refuses that, as builtin() does for the other built-ins.
      if (this.strict) this.exactArray(v);
      this.array(v);
      return;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto === Object.prototype) {
      this.take(v);
      this.w.op(T.T_OBJECT);
      this.fields(v);
      return;
    }
    if (proto === null) {
      this.take(v);
      this.w.op(T.T_NULLPROTO);
      this.fields(v);
      return;
    }
    // Dates, Maps and Sets first: they can have no plan (built-ins that
    // hold state cannot be registered, registry.cjs), and a lookup costs.
    if (proto === DATE_PROTO) {
      // date()'s steps, inline: Dates are common fields, and the call costs.
      const t = timeOf(v);
      if (t === undefined) this.slotless(v);
      else {
        this.take(v);
        this.w.opF64(T.T_DATE, t);
      }
      return;
    }
    if (proto === MAP_PROTO) {
      this.map(v, false);
      return;
    }
    if (proto === SET_PROTO) {
      this.set(v);
      return;
    }
    const plan = this.registry.planOf(proto);
    if (plan !== null) {
      this.take(v);
      if (plan.simple && (!this.custom || this.untouched(plan))) this.instance(v, plan);
      else {
        this.head(plan);
        this.planned(v, plan);
      }
      return;
    }
    this.builtin(v, proto);
  }

  /* Whether this call's shaping leaves plan's instances as they are. */
  untouched(plan) {
    return !this.sortKeys && (this.only === null || !this.only.has(plan.key)) &&
      (this.except === null || !this.except.has(plan.key));
  }

  /* The op, class key and version of an instance of plan. */
  head(plan) {
    const w = this.w;
    w.op(T.T_INSTANCE);
    w.str(plan.key);
    w.u32(plan.version);
  }

  /*
   * An instance written as its own enumerable fields: by its class's
   * encode shape when its keys are the shape's (shapes.cjs), else by the
   * generic loop, which makes the shape once the class is due one.
   */
  instance(v, plan) {
    this.enter(); // before the keys are read: a Proxy's trap runs within maxDepth only
    const shape = plan.encodeShape;
    if (shape !== null && shape !== false) {
      if (shape.write(this, this.w, v)) {
        this.depth--;
        return;
      }
      encodeShapeMissed(shape);
    }
    const keys = Object.keys(v);
    this.head(plan);
    const w = this.w;
    const at = w.pos;
    w.u32(0);
    w.patchU32(at, this.pairs(v, keys, null, false, plan.naming));
    this.depth--;
    offerEncodeShape(plan, keys);
  }

  /* u32 n, then n x (key str, value): the own enumerable fields of v. */
  fields(v) {
    this.enter();
    const w = this.w;
    const at = w.pos;
    w.u32(0);
    w.patchU32(at, this.ownPairs(v, null));
    this.depth--;
  }

  /*
   * Write (key str, value) for each own enumerable key of v, in Object.keys
   * order (sorted under sortKeys), except those in skip (a Set, or null)
   * and function- or symbol-valued ones; return how many were written.
   */
  ownPairs(v, skip) {
    const keys = Object.keys(v);
    if (this.sortKeys) keys.sort();
    return this.pairs(v, keys, skip, false, null);
  }

  /*
   * Write (key str, value) for each of keys in obj, except those in skip
   * (a Set, or null), those obj lacks when onlyPresent, and function- or
   * symbol-valued ones; return how many were written. Keys are written as
   * names.wire() gives them when names (a Naming) is not null.
   */
  pairs(obj, keys, skip, onlyPresent, names) {
    const w = this.w;
    let n = 0;
    let key = '';
    try {
      for (let i = 0; i < keys.length; i++) {
        key = keys[i];
        if (skip !== null && skip.has(key)) continue;
        // own fields only: a name found on the prototype (a method, a
        // getter) would come back as an own data field shadowing it
        if (onlyPresent && !hasOwn.call(obj, key)) continue;
        const x = obj[key];
        if (this.skipped(x)) continue;
        w.str(names === null ? key : names.wire(key));
        this.value(x);
        n++;
      }
    } catch (err) {
      throw addSegment(err, key);
    }
    return n;
  }

  /*
   * u32 n, then n x (key str, value): the fields of an instance whose class
   * has toData, fields or exclude (registry.cjs makePlan), or that this
   * call's shaping touches (untouched). toData(v) gives the object whose
   * fields are written; `fields` fixes which and in what order (a name the
   * object lacks is skipped); `exclude` drops names; so do only / except;
   * sortKeys orders them by their written names.
   */
  planned(v, plan) {
    let data = v;
    const toData = plan.toData;
    if (toData !== null) {
      data = toData(v); // called as a plain function: `this` is undefined
      if (data === null || typeof data !== 'object') {
        throw pathError('ERR_UNSUPPORTED_TYPE', `toData of class "${plan.key}" returned ${data === null ? 'null' : typeof data}, not an object`);
      }
    }
    this.enter();
    const w = this.w;
    const fixed = plan.fields;
    let keys = fixed === null ? Object.keys(data) : fixed;
    if (this.custom) keys = this.selected(keys, plan);
    const at = w.pos;
    w.u32(0);
    w.patchU32(at, this.pairs(data, keys, plan.excluded, fixed !== null, plan.naming));
    this.depth--;
  }

  /*
   * keys (never changed: it may be plan.fields) as this call's only /
   * except of plan's class leave them, sorted under sortKeys by their
   * written names. With plan.fields, the keys are the same for every
   * instance: worked out once per call.
   */
  selected(keys, plan) {
    const fixed = plan.fields !== null;
    if (fixed) {
      if (this.selections === null) this.selections = new Map();
      else {
        const known = this.selections.get(plan);
        if (known !== undefined) return known;
      }
    }
    const only = this.only === null ? undefined : this.only.get(plan.key);
    const except = this.except === null ? undefined : this.except.get(plan.key);
    let out = keys;
    if (only !== undefined || except !== undefined) {
      out = keys.filter((k) => (only === undefined || only.has(k)) && (except === undefined || !except.has(k)));
    }
    if (this.sortKeys) {
      if (out === plan.fields) out = out.slice(); // else a copy already: Object.keys or filter
      const names = plan.naming;
      if (names === null) out.sort();
      else {
        out.sort((a, b) => {
          const x = names.wire(a);
          const y = names.wire(b);
          return x < y ? -1 : x > y ? 1 : 0;
        });
      }
    }
    if (fixed) this.selections.set(plan, out);
    return out;
  }

  array(v) {
    this.take(v);
    this.enter();
    const w = this.w;
    const len = v.length;
    w.opU32(T.T_ARRAY, len);
    let i = 0;
    try {
      while (i < len) {
        const x = v[i];
        if (x === undefined && !(i in v)) {
          const next = nextPresent(v, i + 1, len);
          w.opU32(T.T_HOLE, next - i);
          i = next;
          continue;
        }
        this.value(x);
        i++;
      }
    } catch (err) {
      throw addSegment(err, i);
    }
    this.depth--;
  }

  /*
   * Open a counted container: v takes its reference index, the depth
   * grows, and op is written with a u32 count placeholder, whose position
   * is returned for patchU32 once the count is known.
   */
  openCounted(v, op) {
    this.take(v);
    this.enter();
    const w = this.w;
    w.op(op);
    const at = w.pos;
    w.u32(0);
    return at;
  }

  /* The Date v; without a Date's slots (a Proxy of one), as slotless() writes it. */
  date(v) {
    const t = timeOf(v);
    if (t === undefined) {
      this.slotless(v);
      return;
    }
    this.take(v);
    this.w.opF64(T.T_DATE, t);
  }

  /*
   * The Map v, its entries read from v itself, or with copy (a subclass,
   * builtin()) from a plain Map of its entries, so that no method of the
   * subclass runs here (an LRU cache's get() re-inserts its key: the walk
   * of keys() below would never end). Without a Map's slots (a Proxy of
   * one), as slotless() writes it.
   */
  map(v, copy) {
    if (!isMap(v)) {
      this.slotless(v);
      return;
    }
    const src = copy ? mapCopy(v) : v;
    const at = this.openCounted(v, T.T_MAP);
    const outerN = this.mapN;
    const outerI = this.mapI;
    const outerPart = this.mapPart;
    this.mapN = 0;
    this.mapI = 0;
    try {
      // Map.prototype.forEach, not `for (const k of src.keys())` and get():
      // one builtin call that visits every entry, the same entries in the
      // same order, and no method of src's own runs.
      mapForEach.call(src, this.mapEntry);
    } catch (err) {
      throw addSegment(err, rawSegment(`.$Map[${this.mapI}][${this.mapPart}]`));
    } finally {
      const n = this.mapN;
      this.mapN = outerN;
      this.mapI = outerI;
      this.mapPart = outerPart;
      this.w.patchU32(at, n);
    }
    this.depth--;
  }

  /*
   * One entry of the Map that map() walks: mapN entries written so far,
   * mapI entries seen, mapPart 0 or 1 while the key or the value is
   * written (for the error path).
   */
  entry(x, k) {
    const w = this.w;
    this.mapPart = 0;
    const tx = typeof x;
    if (typeof k === 'string' && tx !== 'function' && tx !== 'symbol') {
      // A string key and a number value, the common Map entry, are
      // written here, not by value() (a call each), and without the two
      // skipped() calls.
      w.strValue(k);
      this.mapPart = 1;
      if (tx !== 'number') this.value(x);
      else w.num(x);
      this.mapN++;
      this.mapI++;
      return;
    }
    if (this.skipped(k)) { this.mapI++; return; }
    this.mapPart = 1;
    if (this.skipped(x)) { this.mapI++; return; }
    this.mapPart = 0;
    this.value(k);
    this.mapPart = 1;
    this.value(x);
    this.mapN++;
    this.mapI++;
  }

  /* The Set v; without a Set's slots (a Proxy of one), as slotless() writes it. */
  set(v) {
    if (!isSet(v)) {
      this.slotless(v);
      return;
    }
    const w = this.w;
    const at = this.openCounted(v, T.T_SET);
    let n = 0;
    let i = 0;
    try {
      for (const x of v) {
        if (!this.skipped(x)) {
          this.value(x);
          n++;
        }
        i++;
      }
    } catch (err) {
      throw addSegment(err, rawSegment(`.$Set[${i}]`));
    }
    w.patchU32(at, n);
    this.depth--;
  }

  /* name, message, then stack, cause, errors when present, then extras. */
  error(v) {
    const w = this.w;
    const at = this.openCounted(v, T.T_ERROR);
    let n = 2;
    let key = 'name';
    try {
      w.str('name');
      this.value(v.name);
      key = 'message';
      w.str('message');
      this.value(v.message);
      key = 'stack';
      const stack = v.stack;
      if (stack !== undefined && !this.skipped(stack)) {
        w.str('stack');
        this.value(stack);
        n++;
      }
      key = 'cause';
      if (hasOwn.call(v, 'cause') && !this.skipped(v.cause)) {
        w.str('cause');
        this.value(v.cause);
        n++;
      }
      key = 'errors';
      if (hasOwn.call(v, 'errors') && !this.skipped(v.errors)) {
        w.str('errors');
        this.value(v.errors);
        n++;
      }
    } catch (err) {
      throw addSegment(err, key);
    }
    n += this.ownPairs(v, ERROR_FIXED);
    w.patchU32(at, n);
    this.depth--;
  }

  bytes(kind, u8) {
    const w = this.w;
    w.reserve(6);
    w.op(T.T_BYTES);
    w.buf[w.pos++] = kind;
    w.u32(u8.length);
    w.bytes(u8);
  }

  /* Everything whose prototype is neither Object.prototype, null nor registered. */
  builtin(v, proto) {
    const w = this.w;
    // A subclass of Date, Map, Set, RegExp or a binary type is written as
    // its built-in (its class is lost): strict mode refuses that, as it
    // refuses other unregistered classes. (Such classes cannot be
    // registered: registry.cjs.)
    if (this.strict && !isExactBuiltin(proto) && writtenAsBuiltin(v)) this.unregistered(proto);
    if (v instanceof Date) {
      this.date(v);
      return;
    }
    if (v instanceof Map) {
      this.map(v, true);
      return;
    }
    if (v instanceof Set) {
      this.set(v);
      return;
    }
    if (ArrayBuffer.isView(v)) {
      const kind = byteKind(v, proto);
      if (kind >= 0) {
        this.take(v);
        this.bytes(kind, bytesOf(v, kind));
        return;
      }
    }
    if (v instanceof ArrayBuffer && isArrayBuffer(v)) {
      this.take(v);
      this.bytes(T.BYTES_ARRAYBUFFER, bytesOf(v, -1));
      return;
    }
    if (v instanceof RegExp && isRegExp(v)) {
      this.take(v);
      w.op(T.T_REGEXP);
      w.str(v.source);
      w.str(v.flags);
      return;
    }
    if (v instanceof Error) {
      // A subclass of Error other than the standard ones comes back as an
      // Error with its name: strict mode refuses it.
      if (this.strict && !isStandardError(proto)) this.unregistered(proto);
      this.error(v);
      return;
    }
    if (looksBoxed(v)) {
      // Boxed primitives: JSON.stringify writes the primitive; so do we.
      // They take no index: forgotten (see object()). A Proxy
      // of one has no primitive slot: JSON.stringify writes it as an
      // object, and so do we (slotless).
      if (!isBoxed(v)) {
        this.slotless(v);
        return;
      }
      if (this.strict) throw this.unsupported(v);
      this.forget(v);
      this.value(v.valueOf());
      return;
    }
    if (isUnsupported(v)) {
      if (this.strict) throw this.unsupported(v);
      this.plain(v);
      return;
    }
    if (this.strict) this.unregistered(proto);
    this.plain(v);
  }

  /* Strict mode: throws ERR_UNREGISTERED_CLASS for an array whose prototype is not Array.prototype. */
  exactArray(v) {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Array.prototype) this.unregistered(proto);
  }

  /*
   * v looks like a Date, Map or Set (its prototype) without the internal
   * slots that hold its state: a Proxy of one, whose state no code can
   * read through the proxy. Written as a plain object, as JSON.stringify
   * writes it; strict mode refuses it.
   */
  slotless(v) {
    if (this.strict) {
      const C = Object.getPrototypeOf(v).constructor;
      throw pathError('ERR_UNSUPPORTED_TYPE', `cannot encode a ${C.name} whose state is out of reach (a Proxy of one?)`);
    }
    this.plain(v);
  }

  /* Throws ERR_UNREGISTERED_CLASS for an instance whose prototype is proto. */
  unregistered(proto) {
    const name = proto !== null && typeof proto.constructor === 'function' ? proto.constructor.name : '';
    throw pathError('ERR_UNREGISTERED_CLASS',
      `cannot encode an instance of an unregistered class${name ? ` (${name})` : ''}: register it with serializable()`);
  }

  /* v written as a plain object of its own enumerable fields. */
  plain(v) {
    this.take(v);
    this.w.op(T.T_OBJECT);
    this.fields(v);
  }
}

const shared = new Encoder();

/* An Encoder for one call; give it back with release(). */
function acquire() {
  const enc = shared.busy ? new Encoder() : shared;
  enc.busy = true;
  return enc;
}

/*
 * Encode value to a fresh tape (a copy of the bytes): for tests and for
 * callers that do not go through the core.
 */
function encodeTape(value, options) {
  const strict = options !== undefined && options.strict === true;
  const maxDepth = options !== undefined && options.maxDepth !== undefined ? options.maxDepth : DEFAULT_MAX_DEPTH;
  const registry = options !== undefined ? options.registry : undefined;
  const shaping = options !== undefined ? options.shaping : undefined;
  const enc = acquire();
  try {
    enc.run(value, strict, maxDepth, registry, shaping);
    return enc.w.buf.slice(0, enc.w.pos);
  } finally {
    enc.release();
  }
}

module.exports = { Encoder, acquire, encodeTape };

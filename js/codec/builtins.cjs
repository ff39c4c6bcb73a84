'use strict';
/*
 * builtins.cjs - which built-in an object is, and its state, found
 * through the built-ins' own brand-checking methods and getters: nothing
 * of the object's own (a method, a getter, a Proxy trap of its class)
 * runs, and an object that only looks like a built-in (a Proxy of a Map,
 * whose prototype is Map.prototype) is told apart from a real one.
 * encode.cjs asks these as it walks.
 */

const T = require('../core/tape.cjs');
const { pathError } = require('../core/errors.cjs');

const dateGetTime = Date.prototype.getTime;
const mapEntries = Map.prototype.entries;
const objectToString = Object.prototype.toString;
const NodeBuffer = typeof Buffer === 'function' ? Buffer : null;
// It validates its receiver: it throws for a typed array whose buffer is
// detached or too short for it, and for nothing else at index 0.
const typedArrayAt = Object.getPrototypeOf(Uint8Array.prototype).at;

/* Byte kinds by exact prototype; subclasses fall back to instanceof. */
const BYTE_KINDS = new Map([
  [Int8Array.prototype, T.BYTES_INT8],
  [Uint8Array.prototype, T.BYTES_UINT8],
  [Uint8ClampedArray.prototype, T.BYTES_UINT8C],
  [Int16Array.prototype, T.BYTES_INT16],
  [Uint16Array.prototype, T.BYTES_UINT16],
  [Int32Array.prototype, T.BYTES_INT32],
  [Uint32Array.prototype, T.BYTES_UINT32],
  [Float32Array.prototype, T.BYTES_FLOAT32],
  [Float64Array.prototype, T.BYTES_FLOAT64],
  [BigInt64Array.prototype, T.BYTES_BIGINT64],
  [BigUint64Array.prototype, T.BYTES_BIGUINT64],
  [DataView.prototype, T.BYTES_DATAVIEW]
]);
if (NodeBuffer !== null) BYTE_KINDS.set(NodeBuffer.prototype, T.BYTES_BUFFER);

/*
 * The prototypes the encoder writes exactly; an instance of a subclass of
 * one of them (writtenAsBuiltin) would come back as the built-in.
 */
const EXACT_BUILTINS = new Set([Date.prototype, Map.prototype, Set.prototype, RegExp.prototype,
  ArrayBuffer.prototype, ...BYTE_KINDS.keys()]);

function isExactBuiltin(proto) {
  return EXACT_BUILTINS.has(proto);
}

function writtenAsBuiltin(v) {
  return v instanceof Date || v instanceof Map || v instanceof Set || v instanceof RegExp ||
    v instanceof ArrayBuffer || ArrayBuffer.isView(v);
}

/* The Error prototypes decoded as themselves (by name): strict mode takes these. */
const STANDARD_ERRORS = new Set([Error, EvalError, RangeError, ReferenceError, SyntaxError,
  TypeError, URIError, typeof AggregateError === 'function' ? AggregateError : Error]
  .map((C) => C.prototype));

function isStandardError(proto) {
  return STANDARD_ERRORS.has(proto);
}

/*
 * Whether v has the internal slots getter (a built-in's brand-checking
 * getter) reads. An object whose prototype is Map.prototype need not be a
 * Map: a Proxy of one is not, and Map's methods throw a TypeError on it.
 */
const mapSize = Object.getOwnPropertyDescriptor(Map.prototype, 'size').get;
const setSize = Object.getOwnPropertyDescriptor(Set.prototype, 'size').get;
const bufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
const regexpSource = Object.getOwnPropertyDescriptor(RegExp.prototype, 'source').get;
function hasSlots(getter, v) {
  try {
    getter.call(v);
    return true;
  } catch (e) {
    return false;
  }
}

function isMap(v) {
  return hasSlots(mapSize, v);
}

function isSet(v) {
  return hasSlots(setSize, v);
}

function isArrayBuffer(v) {
  return hasSlots(bufferByteLength, v);
}

function isRegExp(v) {
  return hasSlots(regexpSource, v);
}

/* A Date's time, or undefined without a Date's slots. */
function timeOf(v) {
  try {
    return dateGetTime.call(v);
  } catch (e) {
    return undefined;
  }
}

/*
 * A plain Map of the entries of the Map (or Map subclass) v, read by
 * Map.prototype.entries: no method of a subclass runs (an LRU cache's
 * get() re-inserts its key, and a walk of its keys() would never end).
 */
function mapCopy(v) {
  return new Map(mapEntries.call(v));
}

/*
 * The brand-checking valueOf of the boxed primitive v claims to be (by its
 * prototype chain): hasSlots() with it tells a real one from a Proxy of
 * one, without running anything of v's own.
 */
const numberValueOf = Number.prototype.valueOf;
const stringValueOf = String.prototype.valueOf;
const booleanValueOf = Boolean.prototype.valueOf;
const bigintValueOf = BigInt.prototype.valueOf;
const symbolValueOf = Symbol.prototype.valueOf;
function boxedValueOf(v) {
  if (v instanceof Number) return numberValueOf;
  if (v instanceof String) return stringValueOf;
  if (v instanceof Boolean) return booleanValueOf;
  if (v instanceof BigInt) return bigintValueOf;
  return symbolValueOf;
}

/* Whether v claims to be a boxed primitive (by its prototype chain). */
function looksBoxed(v) {
  return v instanceof Number || v instanceof String || v instanceof Boolean ||
    v instanceof BigInt || v instanceof Symbol;
}

/* Whether v, which looksBoxed(), has a primitive inside (a Proxy of one has not). */
function isBoxed(v) {
  return hasSlots(boxedValueOf(v), v);
}

/* Built-ins that hold state darmok cannot read or rebuild. */
const UNSUPPORTED = [
  typeof WeakMap === 'function' ? WeakMap : null,
  typeof WeakSet === 'function' ? WeakSet : null,
  typeof WeakRef === 'function' ? WeakRef : null,
  typeof FinalizationRegistry === 'function' ? FinalizationRegistry : null,
  typeof Promise === 'function' ? Promise : null,
  typeof SharedArrayBuffer === 'function' ? SharedArrayBuffer : null
].filter((C) => C !== null);

function isUnsupported(v) {
  for (let i = 0; i < UNSUPPORTED.length; i++) {
    if (v instanceof UNSUPPORTED[i]) return true;
  }
  return false;
}

/* The tape's byte kind (T.BYTES_*) of the ArrayBuffer view v of prototype proto, or -1. */
function byteKind(v, proto) {
  const kind = BYTE_KINDS.get(proto);
  if (kind !== undefined) return kind;
  if (NodeBuffer !== null && NodeBuffer.isBuffer(v)) return T.BYTES_BUFFER;
  if (v instanceof DataView) return T.BYTES_DATAVIEW;
  for (let k = T.BYTES_INT8; k < T.BYTES_KIND_COUNT; k++) {
    if (v instanceof T.TYPED_ARRAYS[k]) return k;
  }
  return -1;
}

/*
 * Whether typed array v can no longer be read: its ArrayBuffer was
 * transferred away (detached), or is resizable and was shrunk below the
 * view's end. Its length reads 0 then, as an empty view's does, and
 * copying from it throws a bare TypeError; so only an empty view is asked,
 * and no other pays.
 */
function unreadable(v) {
  if (v.length !== 0) return false;
  try {
    typedArrayAt.call(v, 0);
    return false;
  } catch {
    return true;
  }
}

/*
 * Array.isArray(v), or ERR_UNSUPPORTED_TYPE for a revoked Proxy: the one
 * object on which it throws, and of which nothing can be read. (It is the
 * first thing the walk asks of an object.)
 */
function isArray(v) {
  try {
    return Array.isArray(v);
  } catch {
    throw pathError('ERR_UNSUPPORTED_TYPE', 'cannot encode a revoked Proxy');
  }
}

/* What v is, for a message: "a function", "a WeakMap", "a class instance". */
function describe(v) {
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'symbol') return 'a symbol';
  const tag = objectToString.call(v).slice(8, -1);
  return `a ${tag === 'Object' ? 'class instance' : tag}`;
}

/*
 * Whether property key k is an array index (ECMAScript: the canonical
 * numeric string of an integer below 2^32 - 1), the keys Object.keys
 * lists first, ascending.
 */
function isIndex(k) {
  const c = k.charCodeAt(0);
  if (c < 48 || c > 57 || k.length > 10) return false;
  const n = Number(k);
  return n >>> 0 === n && n !== 4294967295 && String(n) === k;
}

module.exports = {
  unreadable,
  isIndex,
  isExactBuiltin,
  writtenAsBuiltin,
  isStandardError,
  isMap,
  isSet,
  isArrayBuffer,
  isRegExp,
  timeOf,
  mapCopy,
  looksBoxed,
  isBoxed,
  isUnsupported,
  byteKind,
  isArray,
  describe
};

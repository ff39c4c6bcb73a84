'use strict';
/*
 * tanagra.cjs - read documents that tanagra-json wrote, so a cache full of
 * them keeps working the day an app moves to darmok. Only read: darmok
 * never writes these conventions.
 *
 * A tanagra document is plain JSON, so the core decodes it like any other
 * darmok JSON document (into plain objects, arrays, strings, numbers); this
 * file then rebuilds what tanagra's own decoder would have, from the rules
 * of its encoder:
 *
 *   tanagra-json 1.x (tanagra-core 1.x, the @serializable() decorator)
 *     an instance of a registered class is an object whose first key is
 *     "_serializationKey" (the class key; default the class name), then
 *     its truthy fields (tanagra drops 0, '', false, null); a field `f`
 *     holding a Map is written "f_map": [[key, value], ...] (values
 *     written by the same rules), a Date "f_date": ISO string, a Buffer
 *     "f_buffer": {"type":"Buffer","data":[bytes]}, a Uint8Array
 *     "f_uint8array": {"0":byte,"1":byte,...}. Arrays of instances are
 *     arrays of such objects. The spellings "f$Map", "f$Date",
 *     "f$Buffer" and "f$Uint8Array" are read the same way.
 *   tanagra-json 0.x (tanagra-core 0.x, serializable(Class, nested) Proxy)
 *     instances carry "_serializationKey" as an ordinary field (set by the
 *     Proxy after the constructor, so usually last); the encoder added
 *     "f_map" and "f_date" beside the original field, which JSON.stringify
 *     wrote too ("f": {} for a Map, "f": ISO string for a Date).
 *
 * Like tanagra's decoder, the rules apply to the top-level value, to every
 * object that has a "_serializationKey", to the elements of arrays met
 * along the way, and to Map values; other plain objects are left as they
 * are (tanagra never wrote conventions inside them). Where darmok differs
 * on purpose: a suffix counts only at the end of a key and only on a value
 * of the shape tanagra writes there (tanagra matched "_map" anywhere in a
 * key); an unknown class key throws ERR_UNKNOWN_CLASS (tanagra left a plain
 * object) unless unknownClass is 'plain'; instances are built like darmok's
 * own (Object.create(prototype) plus fields, or fromData), without a
 * `_serializationKey` field, after the class's migration steps from
 * version 1 (tanagra had no versions).
 */

const { addSegment, finishPath, pathError } = require('../core/errors.cjs');
const { upgrade, build, setOwn, unexpectedClass } = require('../codec/registry.cjs');
const { backslashesBefore } = require('../core/text.cjs');
const { KeyGuard } = require('../codec/collisions.cjs');

const hasOwn = Object.prototype.hasOwnProperty;
const getPrototypeOf = Object.getPrototypeOf;
const KEY = '_serializationKey';
const NodeBuffer = typeof Buffer === 'function' ? Buffer : null;

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && getPrototypeOf(v) === Object.prototype;
}

/* The class key of a tanagra instance object, or null. */
function keyOf(v) {
  if (!isPlainObject(v) || !hasOwn.call(v, KEY)) return null;
  const key = v[KEY];
  return typeof key === 'string' && key !== '' ? key : null;
}

/*
 * The key as tanagra wrote it (JSON.stringify), followed by its colon, at a
 * quote that opens a key: one not escaped (after an even run of
 * backslashes), as the end of the key "a\"_serializationKey" is written
 * with an escaped quote before the same characters.
 */
const KEY_AS_WRITTEN = '"' + KEY + '":';
const KEY_BYTES = Array.from(KEY_AS_WRITTEN, (c) => c.charCodeAt(0));

/* Whether the JSON text blob (a string or UTF-8 bytes) has KEY_AS_WRITTEN. */
function hasKeyAsWritten(blob) {
  const n = KEY_BYTES.length;
  if (typeof blob === 'string') {
    for (let i = blob.indexOf(KEY_AS_WRITTEN); i >= 0; i = blob.indexOf(KEY_AS_WRITTEN, i + 1)) {
      if (backslashesBefore(blob, i) % 2 === 0) return true;
    }
    return false;
  }
  for (let i = blob.indexOf(0x22); i >= 0 && i + n <= blob.length; i = blob.indexOf(0x22, i + 1)) {
    let k = 1;
    while (k < n && blob[i + k] === KEY_BYTES[k]) k++;
    if (k === n && backslashesBefore(blob, i) % 2 === 0) return true;
  }
  return false;
}

/*
 * Whether decodeEntity's legacy 'auto' reads a decoded value as a tanagra
 * document: a plain object with an own string "_serializationKey" at the
 * top, in a text that has that key as JSON.stringify writes it. darmok
 * writes instances as {"$": key, ...}, and the key itself, wherever a
 * plain object has it, as "\u005fserializationKey" (dk_json_write.c): the
 * same key to every JSON reader, so its own documents are never taken for
 * tanagra's. (Documents darmok wrote before it did have the key plainly:
 * `legacy: 'none'` reads them.)
 */
function isTanagraDocument(value, blob) {
  return keyOf(value) !== null && hasKeyAsWritten(blob);
}

function isPair(e) {
  return Array.isArray(e) && e.length === 2;
}

function isNumber(b) {
  return typeof b === 'number';
}

/*
 * Whether a has no hole and test(x) holds for every element: what tanagra
 * wrote is dense. A decoded array may have runs of holes ({"$hole": n})
 * that are never materialised (docs/SECURITY.md); Array#every skips them,
 * so a Map or Buffer made of such an array would read holes or make all
 * its n elements. Stops at the first hole.
 */
function denseEvery(a, test) {
  const len = a.length;
  for (let i = 0; i < len; i++) if (!(i in a) || !test(a[i])) return false;
  return true;
}

/*
 * Field-name suffixes per kind: tanagra-json 1.0.x as published writes
 * "_map"; the 1.x spelling "$Map" (and "$Date", "$Buffer", "$Uint8Array")
 * is read too. Either counts only at the end of the name.
 */
const MAP_SUFFIXES = ['_map', '$Map'];
const DATE_SUFFIXES = ['_date', '$Date'];
const BUFFER_SUFFIXES = ['_buffer', '$Buffer'];
const UINT8_SUFFIXES = ['_uint8array', '$Uint8Array'];

/* name without the first of suffixes it ends with (non-empty), or null. */
function strip(name, suffixes) {
  for (let i = 0; i < suffixes.length; i++) {
    const sfx = suffixes[i];
    if (name.length > sfx.length && name.endsWith(sfx)) return name.slice(0, -sfx.length);
  }
  return null;
}

/*
 * {"0":1,"1":2} (JSON.stringify of a Uint8Array) -> Uint8Array, or null.
 * Only dense objects qualify (keys 0..n-1, as JSON.stringify writes them),
 * so the array is never larger than the input that named its bytes: a key
 * such as "4294967295" alone would otherwise ask for 4 GiB.
 */
function indexedBytes(obj) {
  const keys = Object.keys(obj);
  const out = new Uint8Array(keys.length);
  for (let j = 0; j < keys.length; j++) {
    const k = keys[j];
    const b = obj[k];
    const i = Number(k);
    if (!(i >= 0 && i < keys.length) || String(i) !== k || typeof b !== 'number') return null;
    out[i] = b;
  }
  return out;
}

/* How open() takes a value (see the rules at the top of this file). */
const VISIT = 0; //   tanagra's denormalizeJsonObject: arrays, instances, plain objects
const ELEMENT = 1; // an element of an array walked, or a field: only arrays and instances
const MAP = 2; //     the pairs of an "f_map" field, already checked (isPairs)

/* What open() returns for a value whose frame it pushed: the frame gives it. */
const PENDING = Symbol('pending');

/*
 * An array whose present elements are taken by `mode`, in place, ascending
 * (without touching holes: a run of 16 Mi holes costs nothing, as
 * elsewhere in a decode): dense until the first hole, from then on
 * through Object.keys (the integer keys come first, ascending), once.
 */
class ArrayFrame {
  constructor(a, mode) {
    this.a = a;
    this.mode = mode;
    this.len = a.length;
    this.i = -1; //      the index being taken
    this.hole = -1; //   the first hole, once met
    this.keys = null; // Object.keys(a), from the first hole on
    this.k = 0;
  }

  next(reader) {
    const i = this.advance();
    if (i < 0) return false;
    reader.child = this.a[i];
    reader.mode = this.mode;
    return true;
  }

  /* The next present index, or -1. */
  advance() {
    const a = this.a;
    if (this.keys === null) {
      const i = this.i + 1;
      if (i >= this.len) return -1;
      if (i in a) return (this.i = i);
      this.hole = i;
      this.keys = Object.keys(a);
    }
    const keys = this.keys;
    while (this.k < keys.length) {
      const key = keys[this.k++];
      const n = Number(key);
      if (!(n >= 0 && n < this.len && String(n) === key)) break; // past the indexes
      if (n > this.hole) return (this.i = n);
    }
    this.k = keys.length;
    return -1;
  }

  put(x) {
    this.a[this.i] = x;
  }

  finish() {
    return this.a;
  }

  segment(err) {
    addSegment(err, this.i);
  }
}

/*
 * The fields of a tanagra object, in order, converted: a converted field
 * takes the place of a field of its base name that is already there
 * (0.x), else the place of its suffixed name (1.x). An instance
 * (`plan`: its class, or null for unknownClass 'plain') leaves
 * `_serializationKey` out and is built when its fields are done; a plain
 * object is rewritten in place, so references to it still hold.
 */
class FieldsFrame {
  constructor(v, instance, plan) {
    this.v = v;
    this.instance = instance;
    this.plan = plan;
    this.names = Object.keys(v);
    this.j = 0;
    this.name = ''; //   the field being read (for paths)
    this.as = ''; //     the name its value takes
    this.keys = [];
    this.values = [];
    this.at = new Map(); // name -> its index in keys
  }

  next(reader) {
    const names = this.names;
    while (this.j < names.length) {
      const name = names[this.j++];
      if (this.instance && name === KEY) continue;
      this.name = name;
      const x = this.v[name];
      if (!x) {
        this.add(name, x);
        continue;
      }
      let base = strip(name, MAP_SUFFIXES);
      if (base !== null && Array.isArray(x) && reader.isPairs(x)) {
        this.as = base;
        reader.child = x;
        reader.mode = MAP;
        return true;
      }
      base = strip(name, DATE_SUFFIXES);
      if (base !== null && (typeof x === 'string' || typeof x === 'number')) {
        this.add(base, new Date(x));
        continue;
      }
      base = strip(name, BUFFER_SUFFIXES);
      if (base !== null && isPlainObject(x) && Array.isArray(x.data)) {
        const b = reader.buffer(x.data);
        if (b !== null) {
          this.add(base, b);
          continue;
        }
      }
      base = strip(name, UINT8_SUFFIXES);
      if (base !== null && isPlainObject(x)) {
        const b = reader.indexed(x);
        if (b !== null) {
          this.add(base, b);
          continue;
        }
      }
      this.as = name;
      reader.child = x;
      reader.mode = ELEMENT;
      return true;
    }
    return false;
  }

  put(x) {
    this.add(this.as, x);
  }

  add(name, x) {
    const i = this.at.get(name);
    if (i !== undefined) {
      this.keys[i] = name;
      this.values[i] = x;
    } else {
      this.at.set(name, this.keys.length);
      this.keys.push(name);
      this.values.push(x);
    }
  }

  finish(reader) {
    const { v, keys, values, plan } = this;
    if (!this.instance) {
      for (const k of Object.keys(v)) delete v[k];
      for (let i = 0; i < keys.length; i++) setOwn(v, keys[i], values[i]);
      return v;
    }
    const data = {};
    for (let i = 0; i < keys.length; i++) setOwn(data, keys[i], values[i]);
    const obj = plan === null
      ? data
      : build(plan, upgrade(plan, data, 1, reader.acceptNewer), plan.fromData === null ? Object.create(plan.proto) : null);
    reader.done.set(v, obj);
    return obj;
  }

  segment(err) {
    addSegment(err, this.name);
  }
}

/* The Map of an "f_map" field's pairs: each value visited, keys as they are. */
class MapFrame {
  constructor(pairs, m) {
    this.pairs = pairs;
    this.m = m;
    this.i = -1;
    this.guard = new KeyGuard();
  }

  next(reader) {
    if (++this.i >= this.pairs.length) return false;
    reader.child = this.pairs[this.i][1];
    reader.mode = VISIT;
    return true;
  }

  put(x) {
    this.guard.set(this.m, this.pairs[this.i][0], x);
  }

  finish() {
    return this.m;
  }

  segment(err) {
    addSegment(err, this.i);
  }
}

/*
 * The rebuild walks with an explicit stack of frames, not recursion: the
 * input chooses the nesting, and maxDepth may be far above what the
 * JavaScript stack holds (the core's readers walk the same way). A frame
 * is one array, object or Map being rebuilt: next(reader) names its next
 * child (reader.child, taken as reader.mode) or says it has none, put(x)
 * takes what that child became, finish(reader) gives what the frame's
 * value became, segment(err) adds its place to an error's path.
 *
 * Every value is rebuilt once, whatever refers to it: objects and arrays
 * through `done`, the three conversions by what they convert (the pairs of
 * an "f_map", the bytes array of an "f_buffer", the object of an
 * "f_uint8array"), so fields that refer ($ref) to one value share what it
 * became, as darmok's own references do. tanagra never wrote references,
 * so no document it wrote is read differently; without this, many fields
 * naming one large array of pairs would make a Map each.
 */
class TanagraReader {
  constructor(registry, unknownPlain, acceptNewer, scope) {
    this.registry = registry;
    /* Names read as decodeEntity's Class in this call (registry.scopeOf), or null. */
    this.scope = scope;
    this.unknownPlain = unknownPlain;
    this.acceptNewer = acceptNewer;
    /* Objects already visited -> what they became (shared references, cycles). */
    this.done = new Map();
    /* pairs array -> its Map, or false when it is not an array of pairs */
    this.maps = new Map();
    /* bytes array -> its Buffer, or false; object -> its Uint8Array, or false */
    this.buffers = new Map();
    this.bytes = new Map();
    this.stack = [];
    /* Set by a frame's next(): the child to open, and how. */
    this.child = undefined;
    this.mode = VISIT;
  }

  /* What value becomes. Errors get the path of where they happened. */
  run(value) {
    const stack = this.stack;
    try {
      let x = this.open(value, VISIT);
      while (stack.length !== 0) {
        const f = stack[stack.length - 1];
        if (f.next(this)) {
          const y = this.open(this.child, this.mode);
          if (y !== PENDING) f.put(y);
          continue;
        }
        stack.pop();
        x = f.finish(this);
        if (stack.length !== 0) stack[stack.length - 1].put(x);
      }
      return x;
    } catch (err) {
      for (let i = stack.length - 1; i >= 0; i--) stack[i].segment(err);
      throw finishPath(err);
    }
  }

  /* What x becomes, taken as mode: at once, or PENDING with its frame pushed. */
  open(x, mode) {
    if (x === null || typeof x !== 'object') return x;
    if (mode === MAP) {
      let m = this.maps.get(x);
      if (m === undefined) {
        m = new Map();
        this.maps.set(x, m);
        this.stack.push(new MapFrame(x, m));
        return PENDING;
      }
      return m;
    }
    if (mode === ELEMENT && keyOf(x) === null) {
      if (!Array.isArray(x) || this.done.has(x)) return x;
      this.done.set(x, x);
      this.stack.push(new ArrayFrame(x, VISIT));
      return PENDING;
    }
    const seen = this.done.get(x);
    if (seen !== undefined) return seen;
    if (Array.isArray(x)) {
      this.done.set(x, x);
      this.stack.push(new ArrayFrame(x, ELEMENT));
      return PENDING;
    }
    if (!isPlainObject(x)) return x;
    this.done.set(x, x);
    const key = keyOf(x);
    if (key === null) {
      this.stack.push(new FieldsFrame(x, false, null));
      return PENDING;
    }
    const plan = this.registry.planByKey(key, this.scope);
    if (plan === null && !this.unknownPlain) {
      throw pathError('ERR_UNKNOWN_CLASS', `unknown class key ${JSON.stringify(key)} in a tanagra document: register the class with serializable()`);
    }
    this.stack.push(new FieldsFrame(x, true, plan));
    return PENDING;
  }

  /* Whether the array a is what tanagra writes for a Map: dense [key, value] pairs. */
  isPairs(a) {
    const m = this.maps.get(a);
    if (m !== undefined) return m !== false;
    if (denseEvery(a, isPair)) return true;
    this.maps.set(a, false);
    return false;
  }

  /* The Buffer (Uint8Array without Buffer) of a dense array of numbers, else null. */
  buffer(data) {
    let b = this.buffers.get(data);
    if (b === undefined) {
      b = denseEvery(data, isNumber) ? (NodeBuffer !== null ? NodeBuffer.from(data) : Uint8Array.from(data)) : false;
      this.buffers.set(data, b);
    }
    return b === false ? null : b;
  }

  /* indexedBytes(obj), once per object. */
  indexed(obj) {
    let b = this.bytes.get(obj);
    if (b === undefined) {
      b = indexedBytes(obj);
      this.bytes.set(obj, b === null ? false : b);
    }
    return b === false ? null : b;
  }
}

/*
 * Rebuild a decoded tanagra document (plain values, ours to change) into
 * the value tanagra would have made, with classes from `registry`. With
 * expected (decodeEntity's Class: its plan, and scope its registry's
 * scopeOf), a top-level instance must be of that class, as in darmok's own
 * documents (decode.cjs checkTop).
 */
function fromTanagra(value, registry, unknownPlain, acceptNewer, expected, scope) {
  const key = expected === null ? null : keyOf(value);
  if (key !== null) {
    const plan = registry.planByKey(key, scope);
    if (plan !== null || unknownPlain) {
      const err = unexpectedClass(expected, key, plan);
      if (err !== null) throw err;
    }
  }
  return new TanagraReader(registry, unknownPlain, acceptNewer, scope).run(value);
}

module.exports = { isTanagraDocument, hasKeyAsWritten, fromTanagra, keyOf };

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

const { addSegment, finishPath, pathError } = require('./errors.cjs');
const { upgrade, build, setOwn, unexpectedClass } = require('./registry.cjs');
const { backslashesBefore } = require('./tape.cjs');

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

/*
 * One field of a tanagra object: [name, value] as tanagra's decoder would
 * turn it, or null when the field is kept as it is.
 */
function convert(name, v, reader) {
  let base = strip(name, MAP_SUFFIXES);
  if (base !== null && Array.isArray(v) && denseEvery(v, isPair)) {
    const m = new Map();
    for (let i = 0; i < v.length; i++) {
      try {
        m.set(v[i][0], reader.visit(v[i][1]));
      } catch (err) {
        throw addSegment(addSegment(err, i), name);
      }
    }
    return [base, m];
  }
  base = strip(name, DATE_SUFFIXES);
  if (base !== null && (typeof v === 'string' || typeof v === 'number')) {
    return [base, new Date(v)];
  }
  base = strip(name, BUFFER_SUFFIXES);
  if (base !== null && isPlainObject(v) && Array.isArray(v.data) && denseEvery(v.data, isNumber)) {
    return [base, NodeBuffer !== null ? NodeBuffer.from(v.data) : Uint8Array.from(v.data)];
  }
  base = strip(name, UINT8_SUFFIXES);
  if (base !== null && isPlainObject(v)) {
    const bytes = indexedBytes(v);
    if (bytes !== null) return [base, bytes];
  }
  return null;
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
 * f(i) for each index i of a present element of a, ascending, without
 * touching its holes: a run of 16 Mi holes costs nothing, as elsewhere in
 * a decode. At the first hole the rest is read through Object.keys (the
 * integer keys come first, ascending), once.
 */
function eachPresent(a, f) {
  const len = a.length;
  let i = 0;
  for (; i < len; i++) {
    if (!(i in a)) break;
    f(i);
  }
  if (i === len) return;
  const keys = Object.keys(a);
  for (let j = 0; j < keys.length; j++) {
    const k = keys[j];
    const n = Number(k);
    if (!(n >= 0 && n < len && String(n) === k)) break; // past the indexes
    if (n > i) f(n);
  }
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

class TanagraReader {
  constructor(registry, unknownPlain, acceptNewer, scope) {
    this.registry = registry;
    /* Names read as decodeEntity's Class in this call (registry.scopeOf), or null. */
    this.scope = scope;
    this.unknownPlain = unknownPlain;
    this.acceptNewer = acceptNewer;
    /* Objects already visited -> what they became (shared references, cycles). */
    this.done = new Map();
  }

  /* tanagra's denormalizeJsonObject: the value v becomes. */
  visit(v) {
    if (v === null || typeof v !== 'object') return v;
    const seen = this.done.get(v);
    if (seen !== undefined) return seen;
    if (Array.isArray(v)) {
      this.done.set(v, v);
      eachPresent(v, (i) => {
        try {
          v[i] = this.element(v[i]);
        } catch (err) {
          throw addSegment(err, i);
        }
      });
      return v;
    }
    if (!isPlainObject(v)) return v;
    this.done.set(v, v);
    const key = keyOf(v);
    if (key === null) {
      // A plain object: rewritten in place, so references to it still hold.
      const fields = this.fields(v, false);
      for (const k of Object.keys(v)) delete v[k];
      for (const [k, x] of fields) setOwn(v, k, x);
      return v;
    }
    const plan = this.registry.planByKey(key, this.scope);
    if (plan === null && !this.unknownPlain) {
      throw pathError('ERR_UNKNOWN_CLASS', `unknown class key ${JSON.stringify(key)} in a tanagra document: register the class with serializable()`);
    }
    const fields = this.fields(v, true);
    const data = {};
    for (const [k, x] of fields) setOwn(data, k, x);
    const obj = plan === null
      ? data
      : build(plan, upgrade(plan, data, 1, this.acceptNewer), plan.fromData === null ? Object.create(plan.proto) : null);
    this.done.set(v, obj);
    return obj;
  }

  /* An element of an array that tanagra's decoder walks (or a field value). */
  element(x) {
    if (keyOf(x) !== null) return this.visit(x);
    if (Array.isArray(x)) {
      if (this.done.has(x)) return x;
      this.done.set(x, x);
      eachPresent(x, (j) => {
        try {
          x[j] = this.visit(x[j]);
        } catch (err) {
          throw addSegment(err, j);
        }
      });
    }
    return x;
  }

  /*
   * The fields of a tanagra object, in order, converted: a converted field
   * takes the place of a field of its base name that is already there
   * (0.x), else the place of its suffixed name (1.x). `_serializationKey`
   * is left out of an instance's fields.
   */
  fields(v, isInstance) {
    const out = [];
    const at = new Map();
    for (const name of Object.keys(v)) {
      if (isInstance && name === KEY) continue;
      const x = v[name];
      let entry = null;
      try {
        if (x) entry = convert(name, x, this);
        if (entry === null) entry = [name, x ? this.element(x) : x];
      } catch (err) {
        throw addSegment(err, name);
      }
      const i = at.get(entry[0]);
      if (i !== undefined) {
        out[i] = entry;
      } else {
        at.set(entry[0], out.length);
        out.push(entry);
      }
    }
    return out;
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
  try {
    return new TanagraReader(registry, unknownPlain, acceptNewer, scope).visit(value);
  } catch (err) {
    throw finishPath(err);
  }
}

module.exports = { isTanagraDocument, fromTanagra };

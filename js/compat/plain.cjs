'use strict';
/*
 * plain.cjs - the JSON format as a tree of plain values instead of text.
 *
 *   plainOfTape   the tree JSON.parse would make of the JSON document of a
 *                 tape (toPlain: the encoder's tape, read here; no text)
 *   plainText     JSON text of such a tree, for the core to read
 *                 (fromPlain: the tree goes through the same reader,
 *                 checks, limits and errors as a document)
 *
 * The tag names, meta keys and the `$` escape are darmok JSON's, from
 * json-document.cjs (generated from wasm/dk_tags.h), so this file has no
 * copy of them to drift.
 */

const T = require('../core/tape.cjs');
const { TapeReader } = require('../core/tape-reader.cjs');
const { DarmokError, addSegment, finishPath, pathError, stackDepthError, shorten } = require('../core/errors.cjs');
// setOwn sets a key as JSON.parse does: an own data property, also for
// `__proto__` and for names with a setter on Object.prototype.
const { setOwn } = require('../codec/registry.cjs');
const { isIndex } = require('../codec/builtins.cjs');
const { TAG, BYTES_TAG, META, escapeKey, numberTagText, UNDEFINED_VALUE } = require('../core/json-document.cjs');

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/*
 * Standard base64 with padding of u8[at..at+len), as the core writes a
 * binary value: the core writes it only inside a whole document, and
 * toPlain reads the tape without making one.
 */
function base64(r, at, len) {
  if (r.nb !== null && typeof r.nb.base64Slice === 'function') return r.nb.base64Slice(at, at + len);
  const b = r.buf;
  let s = '';
  let i = at;
  const end = at + len;
  for (; i + 2 < end; i += 3) {
    const n = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
    s += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
  }
  if (i < end) {
    const n = (b[i] << 16) | (i + 1 < end ? b[i + 1] << 8 : 0);
    s += B64[n >> 18] + B64[(n >> 12) & 63] + (i + 1 < end ? B64[(n >> 6) & 63] : '=') + '=';
  }
  return s;
}

const fromCharCode = String.fromCharCode;
/* Taken at load: the core formats dates itself, whatever the page does to Date.prototype later. */
const dateToISOString = Date.prototype.toISOString;
/* The times of years 0 and 10000: between them toISOString has four-digit years. */
const YEAR_0 = -62167219200000;
const YEAR_10000 = 253402300800000;

/*
 * Date.prototype.toISOString of the time ms (an integer, as a Date holds),
 * made here, as one flat string from its character codes: V8's own is
 * slower, and Dates are common enough in toPlain's values to matter.
 * Days to a civil date as in H. Hinnant, "chrono-Compatible Low-Level Date
 * Algorithms" (civil_from_days); years outside 0-9999, with their
 * six-digit signed form, go to toISOString.
 */
function isoString(ms) {
  if (ms < YEAR_0 || ms >= YEAR_10000) return dateToISOString.call(new Date(ms));
  const days = Math.floor(ms / 86400000);
  let rem = ms - days * 86400000;
  const hh = Math.floor(rem / 3600000);
  rem -= hh * 3600000;
  const mi = Math.floor(rem / 60000);
  rem -= mi * 60000;
  const ss = Math.floor(rem / 1000);
  const mss = rem - ss * 1000;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return fromCharCode(48 + Math.floor(y / 1000), 48 + Math.floor(y / 100) % 10, 48 + Math.floor(y / 10) % 10, 48 + y % 10, 45,
    48 + Math.floor(m / 10), 48 + m % 10, 45, 48 + Math.floor(d / 10), 48 + d % 10, 84,
    48 + Math.floor(hh / 10), 48 + hh % 10, 58, 48 + Math.floor(mi / 10), 48 + mi % 10, 58,
    48 + Math.floor(ss / 10), 48 + ss % 10, 46, 48 + Math.floor(mss / 100), 48 + Math.floor(mss / 10) % 10, 48 + mss % 10, 90);
}

/* One tagged value: { [tag]: x }. */
function tagged(tag, x) {
  const o = {};
  setOwn(o, tag, x);
  return o;
}

/*
 * The reader of one tape into a plain tree. The tape is this process's
 * (encode.cjs), so it is trusted as the Decoder trusts it; no user code
 * runs while it is read.
 */
class PlainReader {
  constructor(r) {
    this.r = r;
  }

  value() {
    const r = this.r;
    const op = r.buf[r.pos++];
    switch (op) {
      case T.T_STR: return r.str();
      case T.T_STR16: return r.str16();
      case T.T_INT: return r.i32();
      case T.T_F64: {
        const x = r.f64();
        if (x === x && x !== Infinity && x !== -Infinity && (x !== 0 || 1 / x > 0)) return x;
        return tagged(TAG.Number, numberTagText(x));
      }
      case T.T_TRUE: return true;
      case T.T_FALSE: return false;
      case T.T_NULL: return null;
      case T.T_UNDEF: return tagged(TAG.undefined, UNDEFINED_VALUE);
      case T.T_OBJECT: return this.object({}, r.u32(), false);
      case T.T_ARRAY: return this.array();
      case T.T_INSTANCE: {
        const o = {};
        setOwn(o, META.CLASS, r.key());
        const version = r.u32();
        if (version !== 1) setOwn(o, META.VERSION, version);
        return this.object(o, r.u32(), true);
      }
      case T.T_NULLPROTO: return tagged(TAG.NullProto, this.object({}, r.u32(), true));
      case T.T_ERROR: return tagged(TAG.Error, this.object({}, r.u32(), true));
      case T.T_REF: return tagged(TAG.ref, r.u32());
      case T.T_BIGINT: return tagged(TAG.BigInt, r.str());
      case T.T_DATE: {
        const ms = r.f64();
        return tagged(TAG.Date, ms === ms ? isoString(ms) : null);
      }
      case T.T_MAP: {
        const n = r.u32();
        const pairs = new Array(n);
        for (let i = 0; i < n; i++) {
          const k = this.value();
          pairs[i] = [k, this.value()];
        }
        return tagged(TAG.Map, pairs);
      }
      case T.T_SET: {
        const n = r.u32();
        const items = new Array(n);
        for (let i = 0; i < n; i++) items[i] = this.value();
        return tagged(TAG.Set, items);
      }
      case T.T_REGEXP: {
        const source = r.str();
        return tagged(TAG.RegExp, [source, r.str()]);
      }
      case T.T_BYTES: {
        const kind = r.u8();
        const len = r.u32();
        const at = r.pos;
        r.pos = at + len;
        return tagged(BYTES_TAG[kind], base64(r, at, len));
      }
      default:
        throw new DarmokError('ERR_INTERNAL', `bad tape op ${op} at tape byte ${r.pos - 1}`);
    }
  }

  /*
   * n x (key, value) into o. fields: a field object (instance, Error,
   * null-prototype), where every key starting with `$` is escaped; else a
   * plain object, where only its first key is.
   */
  object(o, n, fields) {
    const r = this.r;
    for (let i = 0; i < n; i++) {
      const key = r.key();
      setOwn(o, fields || i === 0 ? escapeKey(key) : key, this.value());
    }
    return o;
  }

  array() {
    const r = this.r;
    const len = r.u32();
    const out = [];
    for (let i = 0; i < len;) {
      if (r.buf[r.pos] === T.T_HOLE) {
        r.pos++;
        const k = r.u32();
        out.push(tagged(TAG.hole, k));
        i += k;
      } else {
        out.push(this.value());
        i++;
      }
    }
    return out;
  }
}

/*
 * The tape reader and the PlainReader every toPlain reuses (their hidden
 * classes stay; see instance.cjs `reader`). One is enough: no user code runs
 * while a tape is read, so no toPlain starts inside another's walk.
 */
let reader = null;
let plainReader = null;

/* The plain tree of the JSON document of the tape u8[0..len). */
function plainOfTape(u8, len) {
  const view = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (reader === null) {
    reader = new TapeReader(u8, view, 0, len);
    plainReader = new PlainReader(reader);
  } else reader.reset(u8, view, 0, len);
  try {
    return plainReader.value();
  } finally {
    reader.release();
  }
}

/*
 * JSON text of plain, a tree of JSON data (what JSON.parse or toPlain
 * makes: plain or null-prototype objects, arrays without holes, strings,
 * finite numbers, booleans, null); anything else throws
 * ERR_UNSUPPORTED_TYPE with its path, and so does a tree that throws when
 * read (a revoked Proxy, a getter), with what it threw as cause. The
 * limits are decodeEntity's on that text, which the core applies when it
 * reads it: here, only what keeps this walk bounded before that. A darmok
 * level is up to three JSON levels ({"$Map":[[k, v]]}), so the walk stops
 * at 3 * maxDepth + 3 JSON levels (ERR_DEPTH, as the core would say), and
 * at maxBytes characters (ERR_TOO_LARGE: the text's UTF-8 is no shorter).
 * An object is written with its first key that is not an array index
 * first: a JavaScript object lists index keys before all others, so that
 * is the key the text had first, its tag slot (docs/FORMAT.md).
 */
function plainText(plain, maxDepth, maxBytes) {
  const w = { maxDepth: 3 * maxDepth + 3, depth: 0, maxBytes, limit: maxDepth };
  try {
    const out = text(plain, w);
    if (out.length > maxBytes) throw tooLong(maxBytes);
    return out;
  } catch (err) {
    if (err instanceof RangeError && w.depth > 64) throw stackDepthError(w.depth, err);
    throw finishPath(readFailure(err));
  }
}

/*
 * An error the input threw while read (not darmok's own): ERR_UNSUPPORTED_TYPE,
 * err as its cause. A RangeError goes on as it is until the top
 * (plainText), which tells the stack running out from a getter's own.
 */
function inner(err) {
  return err instanceof RangeError ? err : readFailure(err);
}

function readFailure(err) {
  if (err instanceof DarmokError) return err;
  let what;
  try {
    what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  } catch {
    what = 'a value that cannot be shown';
  }
  const e = pathError('ERR_UNSUPPORTED_TYPE', `fromPlain could not read its input: it threw ${shorten(what, 200)}`);
  e.cause = err;
  return e;
}

function tooLong(maxBytes) {
  return pathError('ERR_TOO_LARGE', `fromPlain's input is over maxBytes (${maxBytes}) as JSON text`);
}

function notData(what) {
  return pathError('ERR_UNSUPPORTED_TYPE', `fromPlain takes JSON data (as JSON.parse or toPlain makes it), not ${what}`);
}

function text(v, w) {
  switch (typeof v) {
    case 'string': return JSON.stringify(v);
    case 'number':
      if (!Number.isFinite(v)) throw notData(String(v));
      return JSON.stringify(v);
    case 'boolean': return v ? 'true' : 'false';
    case 'object': break;
    default: throw notData(`a ${typeof v}`);
  }
  if (v === null) return 'null';
  if (++w.depth > w.maxDepth) throw pathError('ERR_DEPTH', `nesting deeper than maxDepth (${w.limit})`);
  let out;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) throw notData('an array subclass');
    out = '[';
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) throw addSegment(notData('an array with holes'), i);
      try {
        out += (i === 0 ? '' : ',') + text(v[i], w);
      } catch (err) {
        throw addSegment(inner(err), i);
      }
      if (out.length > w.maxBytes) throw tooLong(w.maxBytes);
    }
    out += ']';
  } else {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) {
      const name = proto !== null && typeof proto.constructor === 'function' ? proto.constructor.name : '';
      throw notData(name ? `a ${name}` : 'an object with a prototype');
    }
    const keys = Object.keys(v);
    if (keys.length > 1 && isIndex(keys[0])) {
      let j = 1;
      while (j < keys.length && isIndex(keys[j])) j++;
      if (j < keys.length) keys.unshift(keys.splice(j, 1)[0]);
    }
    out = '{';
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      try {
        out += (i === 0 ? '' : ',') + JSON.stringify(k) + ':' + text(v[k], w);
      } catch (err) {
        throw addSegment(inner(err), k);
      }
      if (out.length > w.maxBytes) throw tooLong(w.maxBytes);
    }
    out += '}';
  }
  w.depth--;
  return out;
}

module.exports = { plainOfTape, plainText, isoString };

'use strict';
/*
 * errors.cjs - DarmokError, the one error type darmok throws; the table
 * that maps the core's numeric codes (C enum dk_code) to JS string codes
 * (js/dk_abi.cjs);
 * paths (`$.bars[1].baz`): rendered from segments collected while an error
 * unwinds (encode, rebuild), or found by re-scanning JSON text up to a
 * parse error's offset (documentPath). Everything shown from the input is
 * cut short: a message never carries more than a short excerpt of it.
 */

/*
 * The characters a terminal or a log viewer acts on or hides: C0 and C1
 * controls (ESC, CSI U+009B, BEL, ...), DEL, bidirectional overrides and
 * isolates, zero-width and other invisible format characters, line and
 * paragraph separators, lone surrogates.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff0-\ufffb\ud800-\udfff\u{e0000}-\u{e0fff}]/gu;

function escapeUnsafe(c) {
  const n = c.codePointAt(0);
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : n <= 0xffff ? `\\u${n.toString(16).padStart(4, '0')}` : `\\u{${n.toString(16)}}`;
}

/*
 * s with every UNSAFE character written as an escape (\x1b, \u009b,
 * \u202e): text from the input shown to people, in a message or by
 * `darmok inspect`, can neither drive their terminal nor hide itself.
 */
function visible(s) {
  UNSAFE.lastIndex = 0;
  return UNSAFE.test(s) ? s.replace(UNSAFE, escapeUnsafe) : s;
}

/*
 * Every failure of darmok is a DarmokError:
 *   code    one of the ERR_* strings below; stable, meant for `switch`.
 *   offset  byte offset into the decoded input, for errors the parser found.
 *   path    where in the value the problem is, like `$.bars[1].baz`, when known.
 * The message is for people; never classify errors by it. It may quote the
 * input, its control and invisible characters escaped (visible); the
 * properties that hold input (path, expected, actual, ...) keep it raw.
 */
class DarmokError extends Error {
  constructor(code, message, offset, path) {
    super(visible(path === undefined ? message : `${message} (at ${path})`));
    this.code = code;
    if (offset !== undefined) this.offset = offset;
    if (path !== undefined) this.path = path;
  }
}

Object.defineProperty(DarmokError.prototype, 'name', {
  value: 'DarmokError', writable: true, enumerable: false, configurable: true
});

/*
 * Every code a DarmokError may have (index.d.ts DarmokErrorCode lists the
 * same; a test compares them). Those of the core come from CORE_CODES.
 */
const CODES = Object.freeze([
  'ERR_SYNTAX', //             invalid JSON text or protobuf wire format
  'ERR_FORMAT', //             well-formed, but not a valid darmok document
  'ERR_UNSUPPORTED_TYPE', //   a value or a blob of a type darmok does not take
  'ERR_UNREGISTERED_CLASS', // strict encode met an instance of an unregistered class
  'ERR_UNKNOWN_CLASS', //      decode met a class key no class is registered under
  'ERR_DEPTH', //              nesting deeper than maxDepth
  'ERR_TOO_LARGE', //          an input, string, array, Map or Set over its limit
  'ERR_MEMORY', //             the core ran out of memory
  'ERR_INTERNAL', //           a bug in darmok itself, never the caller's doing
  'ERR_INVALID_OPTION', //     a bad argument: an unknown or invalid option, init() of something else
  'ERR_VERSION', //            an instance of a class version decode cannot read
  'ERR_UNEXPECTED_CLASS', //   decodeEntity(blob, Class): the top-level instance is of another class
  'ERR_REENTRANT', //          darmok called from a migrate or fromData that a decode is running
  'ERR_NOT_READY', //          a call before the WebAssembly core is loaded (init())
  'ERR_REDIS', //              darmok/redis: the Redis client failed (redis.cjs)
  'ERR_CACHE_ENTRY', //        darmok/redis: a cache entry that is not darmok's envelope
  'ERR_LOAD_TIMEOUT' //        darmok/redis: a loader ran past its time
]);

/*
 * The JS code of each C dk_code by number (null for DK_OK), generated from
 * wasm/darmok.h, where each code's comment names its JS code.
 */
const { CORE_CODES, TAGS, BYTES_NAMES } = require('./dk_abi.cjs');

function coreCode(n) {
  return (n > 0 && n < CORE_CODES.length) ? CORE_CODES[n] : 'ERR_INTERNAL';
}

/*
 * Render a path from segments collected innermost first while an error
 * unwinds (see encode.cjs / decode.cjs): strings are property names,
 * numbers are indexes, and strings starting with '[' or '.' are written as
 * they are (the Map and Set segments).
 */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/*
 * Keys come from the input: one may be megabytes long, so a path shows at
 * most KEY_SHOWN characters of each, and a message at most PATH_SHOWN
 * characters of a path (its start and its end, which say the most).
 */
const KEY_SHOWN = 40;
const PATH_SHOWN = 160;

/* s cut to at most max characters, with an ellipsis when it was cut. */
function shorten(s, max) {
  return s.length <= max ? s : `${s.slice(0, max - 1)}\u2026`;
}

function segmentText(s) {
  if (typeof s === 'number') return `[${s}]`;
  if (s.charCodeAt(0) === 0) return s.slice(1);
  if (IDENTIFIER.test(s)) return `.${shorten(s, KEY_SHOWN)}`;
  return `[${JSON.stringify(shorten(s, KEY_SHOWN))}]`;
}

function renderPath(segments) {
  let path = '$';
  for (let i = segments.length - 1; i >= 0; i--) path += segmentText(segments[i]);
  return path;
}

/* A path as a message shows it: long ones keep their two ends. */
function pathForMessage(path) {
  if (path.length <= PATH_SHOWN) return path;
  return `${path.slice(0, 40)}\u2026${path.slice(path.length - (PATH_SHOWN - 41))}`;
}

/*
 * Add one path segment to an error that is unwinding through a container.
 * DarmokErrors carry their segments until the top level renders them; other
 * errors (a user getter throwing) pass through untouched.
 */
function addSegment(err, segment) {
  if (err instanceof DarmokError && err.segments !== undefined) err.segments.push(segment);
  return err;
}

/* A raw segment, written into the path as it is (for Map/Set entries). */
function rawSegment(text) {
  return '\0' + text;
}

/* Finish an error that collected segments: render its path into it. */
function finishPath(err) {
  if (err instanceof DarmokError && err.segments !== undefined) {
    const path = renderPath(err.segments);
    delete err.segments;
    err.path = path;
    err.message = `${err.message} (at ${visible(pathForMessage(path))})`;
  }
  return err;
}

/*
 * The DarmokError for the JavaScript stack running out (a RangeError) in
 * darmok's own recursive walk, at nesting `depth`: ERR_DEPTH, with the
 * RangeError as its cause (depth null when unknown). Only a caller who raised maxDepth far above its
 * default, or who calls darmok from an already deep stack, gets here.
 */
function stackDepthError(depth, cause) {
  const what = depth === null ? 'the nesting' : `nesting of ${depth} levels`;
  const err = new DarmokError('ERR_DEPTH', `${what} ran out of JavaScript stack: lower maxDepth (default 1000)`);
  err.cause = cause;
  return err;
}

/* A DarmokError that will collect its path while it unwinds. */
function pathError(code, message) {
  const err = new DarmokError(code, message);
  err.segments = [];
  return err;
}

/*
 * ---- where in a JSON document an error is ------------------------------
 *
 * The core reports a byte offset only: keeping a path on its hot path would
 * cost every call. When a parse fails, documentPath re-scans the text up to
 * that offset (bytes the core had already accepted, or nearly) and names
 * the value there the way the decoded value would be addressed:
 * `$.bars[1].baz`, array indexes counted in slots ({"$hole":k} fills k),
 * Map entries `.$Map[i][0|1]`, Set items `.$Set[i]`, keys of field objects
 * (instances, $NullProto, $Error) without their escaping `$`, and a tag
 * object ({"$Date":...}) named as the value it stands for. The scan never
 * throws and reads only bytes[0..end).
 */

/* Every tag (without its "$"): the core's list (wasm/dk_tags.h, dk_tape.h). */
const ALL_TAGS = new Set([...TAGS, ...BYTES_NAMES]);

const NO_SEGMENT = null;
/* Frame kinds. */
const K_ARRAY = 0; // children: slot index
const K_MAP = 1; //   the array of a $Map: children `.$Map[i]`
const K_PAIR = 2; //  one [key, value] of a $Map: children [0], [1]
const K_SET = 3; //   the array of a $Set: children `.$Set[i]`
const K_OBJECT = 4; // an object; its first key decides its mode
/* Object modes. */
const M_FIRST = 0; // no key read yet (the tag slot)
const M_PLAIN = 1; // a plain object: keys as written
const M_FIELDS = 2; // instance, $NullProto, $Error fields: "$$x" is "$x"
const M_TAG = 3; //   a tag object: its value has no segment of its own

const textDecoder = new TextDecoder();

/* A key token bytes[from..to) (quotes included) as its string. */
function keyText(bytes, from, to) {
  const raw = textDecoder.decode(bytes.subarray(from, to > from + 4096 ? from + 4096 : to));
  if (to - from <= 4096) {
    try {
      return JSON.parse(raw);
    } catch {
      // fall through: the raw text is good enough for a path
    }
  }
  return raw.slice(1, raw.endsWith('"') ? -1 : undefined);
}

function isSpace(c) {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/* The path (a string like `$.a[0]`) of the value at byte offset end. */
function documentPath(bytes, end) {
  if (end > bytes.length) end = bytes.length;
  const stack = []; // { kind, seg, index, slots, mode, childSeg, tag, hole }
  let expect = 'value'; // 'value' | 'key' | 'colon' | 'after'
  let i = 0;

  const childSeg = () => {
    if (stack.length === 0) return NO_SEGMENT;
    const f = stack[stack.length - 1];
    switch (f.kind) {
      case K_ARRAY: return f.index;
      case K_PAIR: return f.index;
      case K_MAP: return rawSegment(`.$Map[${f.index}]`);
      case K_SET: return rawSegment(`.$Set[${f.index}]`);
      default: return f.childSeg;
    }
  };
  const render = (last) => {
    const segs = [];
    for (const f of stack) if (f.seg !== NO_SEGMENT) segs.push(f.seg);
    if (last !== NO_SEGMENT) segs.push(last);
    return renderPath(segs.reverse());
  };
  /* The kind of array opened as the value of the innermost frame. */
  const arrayKind = () => {
    const f = stack[stack.length - 1];
    if (f === undefined) return K_ARRAY;
    if (f.kind === K_MAP) return K_PAIR;
    if (f.kind === K_OBJECT && f.mode === M_TAG) return f.tag === 'Map' ? K_MAP : f.tag === 'Set' ? K_SET : K_ARRAY;
    return K_ARRAY;
  };
  /* A value just ended in the innermost frame (filling `slots` slots). */
  const ended = (slots) => {
    const f = stack[stack.length - 1];
    if (f !== undefined) f.slots = slots;
    expect = 'after';
  };

  while (i < end) {
    const c = bytes[i];
    if (isSpace(c)) { i++; continue; }
    const top = stack[stack.length - 1];
    if (expect === 'after' || (expect === 'value' && (c === 0x5d || c === 0x7d)) || (expect === 'key' && c === 0x7d)) {
      if (c === 0x2c) { // ','
        if (top === undefined) return render(NO_SEGMENT);
        top.index += top.kind === K_OBJECT ? 1 : top.slots;
        top.slots = 1;
        expect = top.kind === K_OBJECT ? 'key' : 'value';
        i++;
        continue;
      }
      if ((c === 0x5d || c === 0x7d) && top !== undefined) { // ']' '}'
        stack.pop();
        // {"$hole":k} fills k slots of its array; anything else one.
        ended(top.kind === K_OBJECT && top.mode === M_TAG && top.tag === 'hole' ? top.hole : 1);
        i++;
        continue;
      }
      return render(top !== undefined && expect === 'value' ? childSeg() : NO_SEGMENT);
    }
    if (expect === 'key') {
      if (c !== 0x22) return render(NO_SEGMENT);
      const from = i;
      i++;
      while (i < end && bytes[i] !== 0x22) i += bytes[i] === 0x5c ? 2 : 1;
      if (i >= end) return render(NO_SEGMENT);
      i++;
      const key = keyText(bytes, from, i);
      if (top.mode === M_FIRST) {
        if (key === '$') {
          top.mode = M_FIELDS;
          top.childSeg = NO_SEGMENT;
        } else if (key.startsWith('$$')) {
          top.mode = M_PLAIN;
          top.childSeg = key.slice(1);
        } else if (key.startsWith('$') && ALL_TAGS.has(key.slice(1))) {
          top.mode = M_TAG;
          top.tag = key.slice(1);
          top.childSeg = NO_SEGMENT;
        } else {
          top.mode = M_PLAIN;
          top.childSeg = key;
        }
      } else if (top.mode === M_FIELDS) {
        top.childSeg = key === '$v' ? NO_SEGMENT : key.startsWith('$$') ? key.slice(1) : key;
      } else {
        top.childSeg = key;
      }
      expect = 'colon';
      continue;
    }
    if (expect === 'colon') {
      if (c !== 0x3a) return render(top.childSeg);
      expect = 'value';
      i++;
      continue;
    }
    // expect === 'value'
    const seg = childSeg();
    if (c === 0x5b) { // '['
      stack.push({ kind: arrayKind(), seg, index: 0, slots: 1, mode: M_FIRST, childSeg: NO_SEGMENT, tag: '', hole: 1 });
      i++;
      continue;
    }
    if (c === 0x7b) { // '{'
      const wrapper = top !== undefined && top.kind === K_OBJECT && top.mode === M_TAG;
      stack.push({ kind: K_OBJECT, seg, index: 0, slots: 1, mode: wrapper ? M_FIELDS : M_FIRST, childSeg: NO_SEGMENT, tag: '', hole: 1 });
      expect = 'key';
      i++;
      continue;
    }
    const from = i;
    if (c === 0x22) {
      i++;
      while (i < end && bytes[i] !== 0x22) i += bytes[i] === 0x5c ? 2 : 1;
      if (i >= end) return render(seg);
      i++;
    } else {
      while (i < end && !isSpace(bytes[i]) && bytes[i] !== 0x2c && bytes[i] !== 0x5d && bytes[i] !== 0x7d) i++;
      if (i >= end) return render(seg);
      if (top !== undefined && top.kind === K_OBJECT && top.mode === M_TAG && top.tag === 'hole') {
        const k = Number(textDecoder.decode(bytes.subarray(from, i)));
        if (Number.isSafeInteger(k) && k > 0) top.hole = k;
      }
    }
    // A scalar tag's value ends the tag's value, not a member.
    ended(1);
  }
  if (expect === 'value') return render(childSeg());
  if (expect === 'colon') return render(stack[stack.length - 1].childSeg);
  return render(NO_SEGMENT);
}

module.exports = {
  stackDepthError,
  DarmokError, CODES, CORE_CODES, coreCode, renderPath, addSegment, rawSegment,
  finishPath, pathError, documentPath, pathForMessage, shorten, visible
};

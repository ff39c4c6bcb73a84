'use strict';
/*
 * errors.cjs - DarmokError, the one error type darmok throws; the table
 * that maps the core's numeric codes (C enum dk_code) to JS string codes
 * (js/core/dk_abi.cjs);
 * paths (`$.bars[1].baz`): rendered from segments collected while an error
 * unwinds (encode, rebuild), or found by reading JSON text up to a parse
 * error's offset (documentPath, through json-document.cjs). Everything shown from the input is
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

const UNSAFE_ONE = new RegExp(UNSAFE.source, 'u');

/* Whether code point n is one of UNSAFE. */
function isUnsafe(n) {
  return UNSAFE_ONE.test(String.fromCodePoint(n));
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
  'ERR_REDIS', //              darmok/redis: the Redis client failed (cache/cache.cjs)
  'ERR_CACHE_ENTRY', //        darmok/redis: a cache entry that is not darmok's envelope
  'ERR_LOAD_TIMEOUT' //        darmok/redis: a loader ran past its time
]);

/*
 * The JS code of each C dk_code by number (null for DK_OK), generated from
 * wasm/darmok.h, where each code's comment names its JS code.
 */
const { CORE_CODES, DEFAULT_MAX_DEPTH } = require('./dk_abi.cjs');
const { pathAt } = require('./json-document.cjs');

function coreCode(n) {
  return (n > 0 && n < CORE_CODES.length) ? CORE_CODES[n] : 'ERR_INTERNAL';
}

/* A key written after a dot in a path; others are quoted in brackets. */
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

/*
 * Render a path from segments collected innermost first while an error
 * unwinds (see encode.cjs / decode.cjs): strings are property names,
 * numbers are indexes, and raw segments (rawSegment) are written as they
 * are (the Map and Set segments).
 */
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
 * RangeError as its cause (depth null when unknown). Only a caller who
 * raised maxDepth far above its default, or who calls darmok from an
 * already deep stack, gets here.
 */
function stackDepthError(depth, cause) {
  const what = depth === null ? 'the nesting' : `nesting of ${depth} levels`;
  const err = new DarmokError('ERR_DEPTH', `${what} ran out of JavaScript stack: lower maxDepth (default ${DEFAULT_MAX_DEPTH})`);
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
 * The path (a string like `$.a[0]`) of the value at byte offset end of the
 * JSON document bytes. The core reports a byte offset only, as keeping a
 * path on its hot path would cost every call; this reads the text up to
 * that offset again (json-document.cjs pathAt), only when a parse failed.
 */
function documentPath(bytes, end) {
  let path = '$';
  for (const s of pathAt(bytes, end)) path += typeof s === 'object' ? s.raw : segmentText(s);
  return path;
}

module.exports = {
  stackDepthError,
  DarmokError, CODES, CORE_CODES, coreCode, addSegment, rawSegment,
  finishPath, pathError, documentPath, pathForMessage, shorten, visible, isUnsafe
};

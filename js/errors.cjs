'use strict';
/*
 * errors.cjs - DarmokError, the one error type darmok throws, and the table
 * that maps the core's numeric codes (C enum dk_code) to JS string codes.
 */

/*
 * Every failure of darmok is a DarmokError:
 *   code    one of the ERR_* strings below; stable, meant for `switch`.
 *   offset  byte offset into the decoded input, for errors the parser found.
 *   path    where in the value the problem is, like `$.bars[1].baz`, when known.
 * The message is for people; never classify errors by it.
 */
class DarmokError extends Error {
  constructor(code, message, offset, path) {
    super(path === undefined ? message : `${message} (at ${path})`);
    this.code = code;
    if (offset !== undefined) this.offset = offset;
    if (path !== undefined) this.path = path;
  }
}

Object.defineProperty(DarmokError.prototype, 'name', {
  value: 'DarmokError', writable: true, enumerable: false, configurable: true
});

/* C enum dk_code by number (numbered from 0, only ever appended). */
const CORE_CODES = [
  null, //             0 DK_OK
  'ERR_SYNTAX', //     1 DK_ERR_SYNTAX     invalid JSON text
  'ERR_FORMAT', //     2 DK_ERR_FORMAT     valid JSON, not a valid darmok document
  'ERR_DEPTH', //      3 DK_ERR_DEPTH      nesting deeper than max_depth
  'ERR_TOO_LARGE', //  4 DK_ERR_TOO_LARGE  a length over max_length, or input too large
  'ERR_MEMORY', //     5 DK_ERR_MEMORY     out of memory
  'ERR_INTERNAL' //    6 DK_ERR_TAPE       malformed tape handed to an encoder (a JS bug)
];

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

function renderPath(segments) {
  let path = '$';
  for (let i = segments.length - 1; i >= 0; i--) {
    const s = segments[i];
    if (typeof s === 'number') path += `[${s}]`;
    else if (s.charCodeAt(0) === 0) path += s.slice(1);
    else if (IDENTIFIER.test(s)) path += `.${s}`;
    else path += `[${JSON.stringify(s)}]`;
  }
  return path;
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
    err.message = `${err.message} (at ${path})`;
  }
  return err;
}

/* A DarmokError that will collect its path while it unwinds. */
function pathError(code, message) {
  const err = new DarmokError(code, message);
  err.segments = [];
  return err;
}

module.exports = {
  DarmokError, CORE_CODES, coreCode, renderPath, addSegment, rawSegment,
  finishPath, pathError
};

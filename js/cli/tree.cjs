'use strict';
/*
 * tree.cjs - a darmok document (docs/FORMAT.md) as the indented tree
 * `darmok inspect` prints: class keys and versions, Maps, Sets, Dates,
 * BigInts, binary sizes, and references as `→ #3`, the number of the value
 * they point at (which carries `#3` where it is written in full).
 *
 * The document is read by the core, as decodeEntity reads it (the one
 * reader of each format, its limits included), and the tape it writes
 * (wasm/dk_tape.h) is walked here with an explicit stack: no recursion
 * whatever the nesting, numbers as decodeEntity reads them, keys and
 * strings as they are. Every text from the document is shown through
 * visible() (errors.cjs), so no control or invisible character of it
 * reaches the terminal; the tree as a whole is held to maxBytes
 * characters (ERR_TOO_LARGE), as the JSON text of a transcode is.
 */

const core = require('../core/core.cjs');
const T = require('../core/tape.cjs');
const { BYTES_NAMES } = require('../core/dk_abi.cjs');
const { DarmokError, visible } = require('../core/errors.cjs');
const { MAX_DEPTH, MAX_BYTES, MAX_LENGTH } = require('../api.cjs');

const IDENT = /^[A-Za-z_$][\w$]*$/;
/* A class key shown without quotes: darmok's usual keys ("app.User", "User@2"). */
const PLAIN_CLASS_KEY = /^[\w$.:@/-]+$/;

/* A string as a quoted literal, every unsafe character escaped. */
const quote = (s) => visible(JSON.stringify(s));
const showKey = (k) => (IDENT.test(k) ? k : quote(k));
const showClassKey = (k) => (PLAIN_CLASS_KEY.test(k) ? k : quote(k));
const numberText = (v) => (Object.is(v, -0) ? '-0' : String(v));

/* The ops of the values that take a number (dk_tape.h "Referenceable values"). */
const NUMBERED = new Set([T.T_ARRAY, T.T_OBJECT, T.T_NULLPROTO, T.T_INSTANCE, T.T_MAP, T.T_SET, T.T_DATE, T.T_REGEXP, T.T_BYTES, T.T_ERROR]);
/* Keyed containers: n x (key, value). */
const KEYED = new Set([T.T_OBJECT, T.T_NULLPROTO, T.T_INSTANCE, T.T_ERROR]);
/* A Map key shown inline as `key =>`. */
const INLINE_KEY = new Set([T.T_STR, T.T_STRREF, T.T_INT, T.T_F64]);
/* The frame of a Map pair whose key is a container: `key:` then `value:`. */
const PAIR = -1;

/* Date's range: ±8.64e15 ms. */
function dateText(ms) {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : 'invalid';
}

/*
 * The tree of one document's tape, read by r (a TapeReader): lines, and
 * for each the number of the value it shows (-1: none).
 */
function walk(r, paint, maxChars) {
  const lines = [];
  const numbers = [];
  const referenced = new Set();
  let chars = 0;
  let next = 0;
  const emit = (text, number) => {
    chars += text.length + 1;
    if (chars > maxChars) throw new DarmokError('ERR_TOO_LARGE', `the tree of this document is over ${maxChars} characters (maxBytes)`);
    lines.push(text);
    numbers.push(number);
  };
  const stack = [];
  let indent = 0;
  let name = null; // how the next value is introduced: null (top), `[3]`, `key`, `"k" =>`, `-`

  // One value at r.pos: a line, and a frame when it has children.
  const value = () => {
    const sep = name !== null && (name === '-' || name.endsWith(' =>')) ? ' ' : ': ';
    const prefix = '  '.repeat(indent) + (name === null ? '' : name + sep);
    const op = r.u8();
    const number = NUMBERED.has(op) ? next++ : -1;
    let n;
    switch (op) {
      case T.T_UNDEF: return emit(prefix + paint('tag', 'undefined'), -1);
      case T.T_NULL: return emit(prefix + paint('number', 'null'), -1);
      case T.T_TRUE: return emit(prefix + paint('number', 'true'), -1);
      case T.T_FALSE: return emit(prefix + paint('number', 'false'), -1);
      case T.T_INT: return emit(prefix + paint('number', String(r.i32())), -1);
      case T.T_F64: return emit(prefix + paint('number', numberText(r.f64())), -1);
      case T.T_BIGINT: return emit(prefix + paint('number', `${visible(r.str())}n`), -1);
      case T.T_STR: return emit(prefix + paint('string', quote(r.str())), -1);
      case T.T_STRREF: return emit(prefix + paint('string', quote(r.strRef())), -1);
      case T.T_REF: {
        const to = r.u32();
        referenced.add(to);
        return emit(prefix + paint('ref', `→ #${to}`), -1);
      }
      case T.T_DATE: return emit(prefix + paint('tag', 'Date ') + dateText(r.f64()), number);
      case T.T_REGEXP: {
        const source = r.str();
        return emit(prefix + paint('tag', 'RegExp ') + `/${visible(source)}/${visible(r.str())}`, number);
      }
      case T.T_BYTES: {
        const kind = r.u8();
        n = r.u32();
        r.pos += n;
        return emit(prefix + paint('tag', BYTES_NAMES[kind] ?? 'bytes') + ` (${n} bytes)`, number);
      }
      case T.T_ARRAY: n = r.u32(); emit(`${prefix}Array(${n})`, number); break;
      case T.T_OBJECT: n = r.u32(); emit(`${prefix}Object`, number); break;
      case T.T_NULLPROTO: n = r.u32(); emit(prefix + paint('tag', 'Object [null prototype]'), number); break;
      case T.T_ERROR: n = r.u32(); emit(prefix + paint('tag', 'Error'), number); break;
      case T.T_MAP: n = r.u32(); emit(`${prefix}${paint('tag', 'Map')}(${n})`, number); break;
      case T.T_SET: n = r.u32(); emit(`${prefix}${paint('tag', 'Set')}(${n})`, number); break;
      case T.T_INSTANCE: {
        const key = r.key();
        const version = r.u32();
        n = r.u32();
        emit(prefix + paint('class', showClassKey(key)) + paint('dim', ` v${version}`), number);
        break;
      }
      default:
        throw new DarmokError('ERR_INTERNAL', `bad tape op ${op} at tape byte ${r.pos - 1}`);
    }
    stack.push({ op, left: n, indent, index: 0 });
    return undefined;
  };

  for (;;) {
    value();
    // What comes next: the innermost open container's next item, or its end.
    for (;;) {
      const f = stack[stack.length - 1];
      if (f === undefined) return { lines, numbers, referenced };
      if (f.left === 0) {
        stack.pop();
        continue;
      }
      indent = f.indent + 1;
      if (f.op === T.T_ARRAY) {
        if (r.buf[r.pos] === T.T_HOLE) {
          r.pos++;
          const k = r.u32();
          emit(`${'  '.repeat(indent)}[${f.index}]: ` + paint('dim', `<${k} empty item${k === 1 ? '' : 's'}>`), -1);
          f.index += k;
          f.left -= k;
          continue;
        }
        name = `[${f.index++}]`;
      } else if (KEYED.has(f.op)) {
        name = showKey(r.key());
      } else if (f.op === T.T_SET) {
        name = '-';
      } else if (f.op === PAIR) {
        name = f.index++ === 0 ? 'key' : 'value';
      } else { // T_MAP
        const keyOp = r.buf[r.pos];
        if (!INLINE_KEY.has(keyOp)) {
          f.left--;
          emit(`${'  '.repeat(indent)}[${f.index++}]:`, -1);
          stack.push({ op: PAIR, left: 2, indent, index: 0 });
          continue;
        }
        r.pos++;
        const key = keyOp === T.T_STR ? quote(r.str()) : keyOp === T.T_STRREF ? quote(r.strRef())
          : keyOp === T.T_INT ? String(r.i32()) : numberText(r.f64());
        name = paint(keyOp === T.T_STR || keyOp === T.T_STRREF ? 'string' : 'number', key) + ' =>';
        f.index++;
      }
      f.left--;
      break;
    }
  }
}

/*
 * render(bytes, format, paint, limits?) -> lines: the tree of the darmok
 * document bytes (a Uint8Array) in format ('json' or 'protobuf'), read
 * with decodeEntity's limits (limits: { maxDepth, maxLength, maxBytes },
 * defaults as decodeEntity's). paint(style, text) colours a part (or
 * returns it as is): styles 'class', 'string', 'number', 'tag', 'ref',
 * 'dim'. Throws a DarmokError for anything that is not a document.
 */
function render(bytes, format, paint, limits = {}) {
  const maxDepth = limits.maxDepth ?? MAX_DEPTH;
  const maxLength = limits.maxLength ?? MAX_LENGTH;
  const maxBytes = limits.maxBytes ?? MAX_BYTES;
  const rebuild = (r) => walk(r, paint, maxBytes);
  const { lines, numbers, referenced } = format === 'protobuf'
    ? core.pbDecode(bytes, maxDepth, maxLength, maxBytes, rebuild)
    : core.jsonDecode(bytes, maxDepth, maxLength, maxBytes, rebuild);
  // A value's number shows where it is written in full when a reference names it.
  for (let i = 0; i < lines.length; i++) {
    if (numbers[i] !== -1 && referenced.has(numbers[i])) lines[i] += ' ' + paint('ref', `#${numbers[i]}`);
  }
  return lines;
}

module.exports = { render };

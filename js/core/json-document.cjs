'use strict';
/*
 * json-document.cjs - darmok JSON (docs/FORMAT.md) as js/ knows it: its
 * tag and meta keys, taken from the generated ABI (wasm/dk_tags.h), and
 * pathAt, the one reader of its text in js/. The core reads and writes
 * documents; JS reads one itself only after the core refused it, to name
 * where in it the core stopped.
 */

// META: the meta keys of an object, { CLASS: "$", VERSION: "$v", ESCAPE: "$$" }.
const { TAGS, META, BYTES_NAMES } = require('./dk_abi.cjs');

/* A tag is written as the class key's "$" and its name ({"$Date": ...}). */
const TAG_START = META.CLASS;
const TAG_START_CODE = TAG_START.charCodeAt(0);

/* The key of each tag by its name: TAG.Date is "$Date". */
const TAG = Object.freeze(Object.fromEntries(TAGS.map((name) => [name, TAG_START + name])));

/* The tag key of each binary kind (DK_BYTES_*), by kind. */
const BYTES_TAG = Object.freeze(BYTES_NAMES.map((name) => TAG_START + name));

/* Every tag key, binary kinds included. */
const TAG_KEYS = new Set([...Object.values(TAG), ...BYTES_TAG]);

/* What a key starting with "$" gains where a reader would take it for a tag or meta key. */
const ESCAPE_ADDS = META.ESCAPE.slice(TAG_START.length);

/* key as written in a field object, or first in a plain object: "$x" as "$$x". */
function escapeKey(key) {
  return key.charCodeAt(0) === TAG_START_CODE ? ESCAPE_ADDS + key : key;
}

/* The key a written key stands for where escapes apply: "$$x" is "$x". */
function unescapeKey(key) {
  return key.startsWith(META.ESCAPE) ? key.slice(ESCAPE_ADDS.length) : key;
}

/*
 * The text of {"$Number": text}, for the numbers JSON has no literal for:
 * NaN, Infinity, -Infinity (as String writes them) and -0.
 */
function numberTagText(x) {
  return Object.is(x, -0) ? '-0' : String(x);
}

/* The value of {"$undefined": 0}. */
const UNDEFINED_VALUE = 0;

/*
 * ---- where in a document an offset is ---------------------------------
 *
 * pathAt names the value at a byte offset the way the decoded value would
 * be addressed: array indexes counted in slots ({"$hole":k} fills k), Map
 * entries `.$Map[i][0|1]`, Set items `.$Set[i]`, keys of field objects
 * (instances, $NullProto, $Error) without their escape, and a tag object
 * ({"$Date":...}) as the value it stands for. It reads bytes[0..end) once,
 * nesting on an explicit stack, each token in time linear in its length;
 * the bytes are what the core had accepted, so they are within its limits.
 * It never throws, whatever the bytes.
 */

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

/* A frame's segment when it has none (the value of a tag object). */
const NONE = null;

/* Keys longer than this are shown as written rather than unescaped. */
const KEY_READ = 4096;
/* A hole count is a u32: a longer digit run is not one. */
const COUNT_DIGITS = 10;

const textDecoder = new TextDecoder();

/* A key token bytes[from..to) (quotes included) as its string. */
function keyText(bytes, from, to) {
  const raw = textDecoder.decode(bytes.subarray(from, to > from + KEY_READ ? from + KEY_READ : to));
  if (to - from <= KEY_READ) {
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

/* The offset after the string token opened by the quote at i, or -1 when end cuts it. */
function stringEnd(bytes, i, end) {
  i++;
  while (i < end && bytes[i] !== 0x22) i += bytes[i] === 0x5c ? 2 : 1;
  return i >= end ? -1 : i + 1;
}

function newFrame(kind, seg, mode) {
  return { kind, seg, index: 0, slots: 1, mode, childSeg: NONE, tag: '', hole: 1 };
}

/*
 * The path to the value at byte offset end of the document bytes, as
 * segments from the top: numbers (array slots), strings (keys, unescaped),
 * and { raw } (a Map or Set entry, written as it is).
 */
function pathAt(bytes, end) {
  if (end > bytes.length) end = bytes.length;
  const stack = [];
  let expect = 'value'; // 'value' | 'key' | 'colon' | 'after'
  let i = 0;

  const childSeg = () => {
    if (stack.length === 0) return NONE;
    const f = stack[stack.length - 1];
    switch (f.kind) {
      case K_ARRAY: return f.index;
      case K_PAIR: return f.index;
      case K_MAP: return { raw: `.${TAG.Map}[${f.index}]` };
      case K_SET: return { raw: `.${TAG.Set}[${f.index}]` };
      default: return f.childSeg;
    }
  };
  const path = (last) => {
    const segs = [];
    for (const f of stack) if (f.seg !== NONE) segs.push(f.seg);
    if (last !== NONE) segs.push(last);
    return segs;
  };
  /* The kind of array opened as the value of the innermost frame. */
  const arrayKind = () => {
    const f = stack[stack.length - 1];
    if (f === undefined) return K_ARRAY;
    if (f.kind === K_MAP) return K_PAIR;
    if (f.kind === K_OBJECT && f.mode === M_TAG) return f.tag === TAG.Map ? K_MAP : f.tag === TAG.Set ? K_SET : K_ARRAY;
    return K_ARRAY;
  };
  /* A value just ended in the innermost frame (filling `slots` slots). */
  const ended = (slots) => {
    const f = stack[stack.length - 1];
    if (f !== undefined) f.slots = slots;
    expect = 'after';
  };
  /* The segment of the value of key in object frame f, and f's mode once it has a key. */
  const keyed = (f, key) => {
    if (f.mode === M_FIRST) {
      if (key === META.CLASS) {
        f.mode = M_FIELDS;
        f.childSeg = NONE;
      } else if (TAG_KEYS.has(key)) {
        f.mode = M_TAG;
        f.tag = key;
        f.childSeg = NONE;
      } else {
        f.mode = M_PLAIN;
        f.childSeg = unescapeKey(key);
      }
    } else if (f.mode === M_FIELDS) {
      f.childSeg = key === META.VERSION ? NONE : unescapeKey(key);
    } else {
      f.childSeg = key;
    }
  };

  while (i < end) {
    const c = bytes[i];
    if (isSpace(c)) { i++; continue; }
    const top = stack[stack.length - 1];
    if (expect === 'after' || (expect === 'value' && (c === 0x5d || c === 0x7d)) || (expect === 'key' && c === 0x7d)) {
      if (c === 0x2c) { // ','
        if (top === undefined) return path(NONE);
        top.index += top.kind === K_OBJECT ? 1 : top.slots;
        top.slots = 1;
        expect = top.kind === K_OBJECT ? 'key' : 'value';
        i++;
        continue;
      }
      if ((c === 0x5d || c === 0x7d) && top !== undefined) { // ']' '}'
        stack.pop();
        // {"$hole":k} fills k slots of its array; anything else one.
        ended(top.kind === K_OBJECT && top.mode === M_TAG && top.tag === TAG.hole ? top.hole : 1);
        i++;
        continue;
      }
      return path(top !== undefined && expect === 'value' ? childSeg() : NONE);
    }
    if (expect === 'key') {
      if (c !== 0x22) return path(NONE);
      const from = i;
      i = stringEnd(bytes, i, end);
      if (i < 0) return path(NONE);
      keyed(top, keyText(bytes, from, i));
      expect = 'colon';
      continue;
    }
    if (expect === 'colon') {
      if (c !== 0x3a) return path(top.childSeg);
      expect = 'value';
      i++;
      continue;
    }
    // expect === 'value'
    const seg = childSeg();
    if (c === 0x5b) { // '['
      stack.push(newFrame(arrayKind(), seg, M_FIRST));
      i++;
      continue;
    }
    if (c === 0x7b) { // '{'
      const wrapper = top !== undefined && top.kind === K_OBJECT && top.mode === M_TAG;
      stack.push(newFrame(K_OBJECT, seg, wrapper ? M_FIELDS : M_FIRST));
      expect = 'key';
      i++;
      continue;
    }
    const from = i;
    if (c === 0x22) {
      i = stringEnd(bytes, i, end);
      if (i < 0) return path(seg);
    } else {
      while (i < end && !isSpace(bytes[i]) && bytes[i] !== 0x2c && bytes[i] !== 0x5d && bytes[i] !== 0x7d) i++;
      if (i >= end) return path(seg);
      if (top !== undefined && top.kind === K_OBJECT && top.mode === M_TAG && top.tag === TAG.hole && i - from <= COUNT_DIGITS) {
        const k = Number(textDecoder.decode(bytes.subarray(from, i)));
        if (Number.isSafeInteger(k) && k > 0) top.hole = k;
      }
    }
    // A scalar tag's value ends the tag's value, not a member.
    ended(1);
  }
  if (expect === 'value') return path(childSeg());
  if (expect === 'colon') return path(stack[stack.length - 1].childSeg);
  return path(NONE);
}

module.exports = { TAG, BYTES_TAG, META, escapeKey, unescapeKey, numberTagText, UNDEFINED_VALUE, pathAt };

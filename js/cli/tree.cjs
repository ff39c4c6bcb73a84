'use strict';
/*
 * tree.cjs - a darmok JSON document (docs/FORMAT.md) as the indented tree
 * `darmok inspect` prints: class keys and versions, Maps, Sets, Dates,
 * BigInts, binary sizes, and references as `→ #3`, the number of the value
 * they point at (which carries `#3` where it is written in full).
 *
 * The text has been through decodeEntity already (valid, nesting within
 * its depth limit), so parse() and render() trust it; parse() keeps the
 * members' order, which JSON.parse does not for integer-like keys, and the
 * order decides what is a tag.
 */

const { TAGS: ABI_TAGS, BYTES_NAMES } = require('../dk_abi.cjs');

/* JSON text -> { t: 'obj', entries: [[key, node]] } | { t: 'arr', items } | { t: 'str', v } | { t: 'raw', v }. */
function parse(text) {
  const stack = [];
  let i = 0;
  let root;
  let key = null;
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i])) i++;
  };
  const stringAt = () => {
    let j = i + 1;
    while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    const s = JSON.parse(text.slice(i, j + 1));
    i = j + 1;
    return s;
  };
  const put = (node) => {
    const top = stack[stack.length - 1];
    if (top === undefined) root = node;
    else if (top.t === 'arr') top.items.push(node);
    else top.entries.push([key, node]);
  };
  for (;;) {
    ws();
    const top = stack[stack.length - 1];
    const c = text[i];
    if (c === ']' || c === '}') {
      i++;
      stack.pop();
    } else if (c === ',') {
      i++;
      continue;
    } else {
      if (top !== undefined && top.t === 'obj') {
        key = stringAt();
        ws();
        i++; // ':'
        ws();
      }
      const v = text[i];
      if (v === '{' || v === '[') {
        i++;
        const node = v === '{' ? { t: 'obj', entries: [] } : { t: 'arr', items: [] };
        put(node);
        stack.push(node);
        continue;
      }
      if (v === '"') put({ t: 'str', v: stringAt() });
      else {
        const m = /^[^,\]}\s]+/.exec(text.slice(i, i + 400));
        i += m[0].length;
        put({ t: 'raw', v: m[0] });
      }
    }
    if (stack.length === 0) return root;
  }
}

/* The darmok JSON tags, from the core's list (wasm/dk_tags.h, dk_tape.h). */
const TAGS = new Set([...ABI_TAGS, ...BYTES_NAMES].map((t) => `$${t}`));
const UNNUMBERED = new Set(['$undefined', '$Number', '$BigInt', '$hole', '$ref']);

/* The tag of an object node ('$' for an instance), or null for a plain object. */
function tagOf(node) {
  if (node.t !== 'obj' || node.entries.length === 0) return null;
  const k = node.entries[0][0];
  if (k === '$') return '$';
  return node.entries.length === 1 && TAGS.has(k) ? k : null;
}

const numbered = (node) => node.t === 'arr' || (node.t === 'obj' && !UNNUMBERED.has(tagOf(node)));

/* The nodes a document references, by number: those get a `#N` where written in full. */
function referenced(root) {
  const out = new Set();
  const todo = [root];
  while (todo.length > 0) {
    const n = todo.pop();
    if (n.t === 'arr') todo.push(...n.items);
    else if (n.t === 'obj') {
      if (tagOf(n) === '$ref') out.add(Number(n.entries[0][1].v));
      for (const [, v] of n.entries) todo.push(v);
    }
  }
  return out;
}

const IDENT = /^[A-Za-z_$][\w$]*$/;
const showKey = (k) => (IDENT.test(k) ? k : JSON.stringify(k));
const unescapeField = (k) => (k.startsWith('$$') ? k.slice(1) : k);

/* Bytes in a base64 text. */
function base64Size(s) {
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return (s.length / 4) * 3 - pad;
}

/*
 * render(text, paint) -> lines. paint(style, text) colours a part (or
 * returns it as is): styles 'class', 'string', 'number', 'tag', 'ref',
 * 'dim'.
 */
function render(text, paint) {
  const root = parse(text);
  const refs = referenced(root);
  const lines = [];
  let next = 0;

  // Numbers are handed out in document order, as the decoder counts: a node
  // takes its number when its line is made, before its children.
  const label = (node) => {
    if (!numbered(node)) return '';
    const n = next++;
    return refs.has(n) ? ' ' + paint('ref', `#${n}`) : '';
  };

  function line(indent, name, node) {
    const tag = tagOf(node);
    // A Map entry's name is "key =>", a Set member's "-": no colon after those.
    const sep = name !== null && (name === '-' || name.endsWith(' =>')) ? ' ' : ': ';
    const prefix = '  '.repeat(indent) + (name === null ? '' : name + sep);
    if (node.t === 'str') return lines.push(prefix + paint('string', JSON.stringify(node.v)));
    if (node.t === 'raw') return lines.push(prefix + paint('number', node.v));
    if (node.t === 'arr') {
      const length = node.items.reduce((n, item) => n + (tagOf(item) === '$hole' ? Number(item.entries[0][1].v) : 1), 0);
      lines.push(`${prefix}Array(${length})${label(node)}`);
      let index = 0;
      for (const item of node.items) {
        if (tagOf(item) === '$hole') {
          const n = Number(item.entries[0][1].v);
          lines.push(`${'  '.repeat(indent + 1)}[${index}]: ` + paint('dim', `<${n} empty item${n === 1 ? '' : 's'}>`));
          index += n;
        } else line(indent + 1, `[${index++}]`, item);
      }
      return undefined;
    }
    const v = tag === null || tag === '$' ? null : node.entries[0][1];
    switch (tag) {
      case '$': {
        const meta = new Map();
        const fields = [];
        for (const [k, f] of node.entries.slice(1)) {
          if (k.length > 1 && k[0] === '$' && k[1] !== '$') meta.set(k, f);
          else fields.push([unescapeField(k), f]);
        }
        const version = meta.has('$v') ? meta.get('$v').v : '1';
        lines.push(prefix + paint('class', node.entries[0][1].v) + paint('dim', ` v${version}`) + label(node));
        for (const [k, f] of fields) line(indent + 1, showKey(k), f);
        return undefined;
      }
      case '$ref': return lines.push(prefix + paint('ref', `→ #${v.v}`));
      case '$undefined': return lines.push(prefix + paint('tag', 'undefined'));
      case '$Number': return lines.push(prefix + paint('number', v.v));
      case '$BigInt': return lines.push(prefix + paint('number', `${v.v}n`));
      case '$Date':
        return lines.push(prefix + paint('tag', 'Date ') + (v.t === 'str' ? v.v : 'invalid') + label(node));
      case '$RegExp':
        return lines.push(prefix + paint('tag', 'RegExp ') + `/${v.items[0].v}/${v.items[1].v}` + label(node));
      case '$Map':
      case '$Set': {
        const kind = tag.slice(1);
        lines.push(`${prefix}${paint('tag', kind)}(${v.items.length})${label(node)}`);
        v.items.forEach((item, i) => {
          if (kind === 'Set') return line(indent + 1, '-', item);
          const [k, val] = item.items;
          if (k.t === 'str' || k.t === 'raw') {
            return line(indent + 1, k.t === 'str' ? paint('string', JSON.stringify(k.v)) + ' =>' : paint('number', k.v) + ' =>', val);
          }
          lines.push(`${'  '.repeat(indent + 1)}[${i}]:`);
          line(indent + 2, 'key', k);
          return line(indent + 2, 'value', val);
        });
        return undefined;
      }
      case '$NullProto':
      case '$Error': {
        const head = tag === '$Error' ? 'Error' : 'Object [null prototype]';
        lines.push(prefix + paint('tag', head) + label(node));
        for (const [k, f] of v.entries) line(indent + 1, showKey(unescapeField(k)), f);
        return undefined;
      }
      case null: {
        lines.push(`${prefix}Object${label(node)}`);
        node.entries.forEach(([k, f], i) => line(indent + 1, showKey(i === 0 && k.startsWith('$$') ? k.slice(1) : k), f));
        return undefined;
      }
      default: // a binary value: $Uint8Array, $Buffer, ...
        return lines.push(prefix + paint('tag', tag.slice(1)) + ` (${base64Size(v.v)} bytes)` + label(node));
    }
  }

  line(0, null, root);
  return lines;
}

module.exports = { render, parse };

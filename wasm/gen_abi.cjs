'use strict';
/*
 * gen_abi.cjs - writes js/core/dk_abi.cjs, the constants of the JS <-> core
 * boundary (wasm/dk_abi.h lists them), from the C headers that define them,
 * so that js/ never holds a copy. Run by make:
 *
 *   node wasm/gen_abi.cjs <headers dir> <output file>
 *
 * The parser knows only what these headers use - enums whose enumerators
 * are NAME, NAME = <integer> with comments, and #define NAME <integer>
 * - and throws on anything else it is asked to read, rather than guess.
 * Each JS name is the C name without "DK_"; dk_code becomes CORE_CODES,
 * the DarmokError code of each value by number (null for DK_OK), taken
 * from the first word of its comment. TAGS is the darmok JSON tags of
 * dk_tags.h (names without the "$"), in enum dk_tag's order, which must be
 * that of their #define DK_TAG_<ID>_S "name" lines; META the meta keys of
 * dk_tags.h's #define DK_META_<ID>_S "key" lines by ID; BYTES_NAMES the tag
 * name of each DK_BYTES_* kind, the first word of its comment. EXPORTS is the list of functions JS
 * calls, from exports.txt (one name a line, # comments), the list the
 * Makefile gives emcc: instance.cjs refuses a core that lacks one of them.
 * The functions dk_wasm.c marks EXPORT must be exactly those: the
 * generator fails otherwise, so the list cannot drift from the code.
 */
const fs = require('node:fs');
const path = require('node:path');

/*
 * What is read from where, in the order of js/core/dk_abi.cjs (and within an
 * entry: enums, defines, pick, prefixes). enums: every enumerator of each;
 * defines: by name; pick: the enumerators named, of the enum named;
 * prefixes: every #define so named.
 */
const SOURCES = [
  { header: 'dk_tape.h', enums: ['dk_tape_op', 'dk_bytes_kind'], prefixes: ['DK_STR_'], kindNames: 'dk_bytes_kind' },
  { header: 'dk_abi.h', enums: ['dk_res_word'] },
  { header: 'darmok.h', codes: 'dk_code', defines: ['DK_DEFAULT_MAX_DEPTH'], pick: { dk_read_flag: ['DK_READ_KEYREFS', 'DK_READ_STRREFS'], dk_code: ['DK_ERR_TOO_LONG'] } },
  { header: 'dk_abi.h', defines: ['DK_U16_SRC', 'DK_U16_HEAD', 'DK_U16_SRC_ENTRY', 'DK_U16_SRC_ASCII_MIN'] },
  { header: 'dk_tags.h', tags: 'dk_tag', meta: true }
];

/* The file whose EXPORT functions must be those of exports.txt. */
const EXPORTS_DEFINED_IN = 'dk_wasm.c';

const INTEGER = /^(0[xX][0-9a-fA-F]+|0|[1-9][0-9]*)[uU]?$/;

function fail(file, line, why) {
  throw new Error(`gen_abi: ${file}${line ? `:${line}` : ''}: ${why}`);
}

function integer(text, file, line) {
  const m = INTEGER.exec(text);
  if (m === null) fail(file, line, `not an integer literal: ${JSON.stringify(text)}`);
  const v = Number(m[1]);
  if (!Number.isSafeInteger(v) || v > 0xffffffff) fail(file, line, `out of range: ${text}`);
  return v;
}

function lineAt(text, i) {
  let n = 1;
  for (let j = text.indexOf('\n'); j !== -1 && j < i; j = text.indexOf('\n', j + 1)) n++;
  return n;
}

/*
 * The enumerators of `enum name { ... }` in text: [{ name, value, comment }],
 * comment being the one that starts on the enumerator's own line, if any.
 */
function parseEnum(text, name, file) {
  const open = new RegExp(`\\benum\\s+${name}\\s*\\{`, 'g');
  const found = [...text.matchAll(open)];
  if (found.length !== 1) fail(file, 0, `enum ${name} found ${found.length} times, not once`);
  const start = found[0].index + found[0][0].length;
  const end = text.indexOf('}', start);
  if (end === -1) fail(file, lineAt(text, start), `enum ${name} is not closed`);
  const tokens = [];
  const TOKEN = /\s+|\/\*[\s\S]*?\*\/|[A-Za-z_][A-Za-z0-9_]*|0[xX][0-9a-fA-F]+[uU]?|[0-9]+[uU]?|=|,/y;
  for (let i = start; i < end;) {
    TOKEN.lastIndex = i;
    const m = TOKEN.exec(text);
    if (m === null || m.index !== i || TOKEN.lastIndex > end) {
      fail(file, lineAt(text, i), `enum ${name}: cannot read ${JSON.stringify(text.slice(i, i + 20))}`);
    }
    if (!/^\s/.test(m[0])) tokens.push({ text: m[0], line: lineAt(text, i) });
    i = TOKEN.lastIndex;
  }
  const items = [];
  let next = 0;
  for (let t = 0; t < tokens.length;) {
    const tok = tokens[t];
    if (tok.text.startsWith('/*')) { t++; continue; }
    if (!/^[A-Za-z_]/.test(tok.text)) fail(file, tok.line, `enum ${name}: expected an enumerator, found ${tok.text}`);
    const item = { name: tok.text, value: next, comment: null };
    t++;
    if (t < tokens.length && tokens[t].text === '=') {
      if (t + 1 >= tokens.length) fail(file, tok.line, `enum ${name}: ${tok.text} = nothing`);
      item.value = integer(tokens[t + 1].text, file, tokens[t + 1].line);
      t += 2;
    }
    while (t < tokens.length && (tokens[t].text === ',' || tokens[t].text.startsWith('/*'))) {
      if (tokens[t].text === ',' && item.sawComma) fail(file, tokens[t].line, `enum ${name}: two commas`);
      if (tokens[t].text === ',') item.sawComma = true;
      else if (tokens[t].line === tok.line && item.comment === null) {
        item.comment = tokens[t].text.slice(2, -2).replace(/\s+/g, ' ').trim();
      } else if (tokens[t].line !== tok.line) break; // a comment about the next enumerator
      t++;
    }
    if (!item.sawComma && t < tokens.length && !tokens[t].text.startsWith('/*')) {
      fail(file, tok.line, `enum ${name}: no comma after ${item.name}`);
    }
    delete item.sawComma;
    if (items.some((o) => o.value === item.value)) fail(file, tok.line, `enum ${name}: ${item.name} repeats the value ${item.value}`);
    items.push(item);
    next = item.value + 1;
  }
  if (items.length === 0) fail(file, lineAt(text, start), `enum ${name} is empty`);
  return items;
}

/* Every `#define NAME ...` of text for which want(NAME): [{ name, value }]; the value must be an integer. */
function parseDefines(text, want, file) {
  const out = [];
  text.split('\n').forEach((line, i) => {
    const m = /^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)(\(?)\s*(.*)$/.exec(line);
    if (m === null || !want(m[1])) return;
    if (m[2] === '(') fail(file, i + 1, `${m[1]} is a function-like macro`);
    const value = m[3].replace(/\/\*.*?\*\/\s*$/, '').replace(/\/\/.*$/, '').trim();
    if (value.includes('/*')) fail(file, i + 1, `${m[1]}: a comment that does not end on its line`);
    if (out.some((o) => o.name === m[1])) fail(file, i + 1, `${m[1]} defined twice`);
    out.push({ name: m[1], value: integer(value, file, i + 1) });
  });
  return out;
}

/*
 * The tags of dk_tags.h: each `#define DK_TAG_<ID>_S "name"` line in order,
 * checked against the enumerators DK_TAG_<ID> of enum name (which end with
 * DK_TAG_BYTES, the binary kinds): [name].
 */
function parseTags(text, name, file) {
  const found = [];
  text.split('\n').forEach((line, i) => {
    if (!/^\s*#\s*define\s+DK_TAG_/.test(line)) return;
    const m = /^\s*#\s*define\s+DK_TAG_([A-Z0-9_]+)_S\s+"([A-Za-z0-9]+)"\s*(\/\*.*\*\/)?\s*$/.exec(line);
    if (m === null) fail(file, i + 1, 'a DK_TAG_ define that is not #define DK_TAG_<ID>_S "name"');
    found.push({ id: `DK_TAG_${m[1]}`, name: m[2], line: i + 1 });
  });
  if (found.length === 0) fail(file, 0, 'no #define DK_TAG_<ID>_S');
  const items = parseEnum(text, name, file);
  const last = items[items.length - 1];
  if (last.name !== 'DK_TAG_BYTES') fail(file, 0, `enum ${name} does not end with DK_TAG_BYTES`);
  if (items.length - 1 !== found.length) fail(file, 0, `enum ${name} has ${items.length - 1} tags, the defines ${found.length}`);
  found.forEach((t, i) => {
    if (items[i].name !== t.id || items[i].value !== i) fail(file, t.line, `${t.id}_S is tag ${i}, but enum ${name} has ${items[i].name} = ${items[i].value} there`);
  });
  return found.map((t) => t.name);
}

/* The meta keys of dk_tags.h: each `#define DK_META_<ID>_S "key"` line: { ID: key }. */
function parseMeta(text, file) {
  const meta = {};
  text.split('\n').forEach((line, i) => {
    if (!/^\s*#\s*define\s+DK_META_/.test(line)) return;
    const m = /^\s*#\s*define\s+DK_META_([A-Z0-9_]+)_S\s+"(\$[A-Za-z0-9$]*)"\s*(\/\*.*\*\/)?\s*$/.exec(line);
    if (m === null) fail(file, i + 1, 'a DK_META_ define that is not #define DK_META_<ID>_S "$key"');
    if (m[1] in meta) fail(file, i + 1, `DK_META_${m[1]}_S defined twice`);
    meta[m[1]] = m[2];
  });
  if (Object.keys(meta).length === 0) fail(file, 0, 'no #define DK_META_<ID>_S');
  return meta;
}

/* The first word of the comment of each enumerator of enum name but the last (the count): [word]. */
function parseKindNames(text, name, file) {
  const items = parseEnum(text, name, file);
  return items.slice(0, -1).map((it, i) => {
    const m = it.comment === null ? null : /^([A-Za-z][A-Za-z0-9]*)\b/.exec(it.comment);
    if (m === null) fail(file, 0, `${name}: the comment of ${it.name} does not start with its tag name`);
    if (it.value !== i) fail(file, 0, `${name}: ${it.name} is ${it.value}, not ${i}`);
    return m[1];
  });
}

/*
 * The names of exports.txt in dir, read as the Makefile reads it (a # to the
 * end of the line is a comment, blank lines are skipped): each must be a C
 * name, and none twice.
 */
function readExports(dir) {
  const file = path.join(dir, 'exports.txt');
  const names = [];
  fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    const name = line.replace(/#.*/, '').trim();
    if (name === '') return;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) fail(file, i + 1, `not a C function name: ${JSON.stringify(name)}`);
    if (names.includes(name)) fail(file, i + 1, `${name} listed twice`);
    names.push(name);
  });
  if (names.length === 0) fail(file, 0, 'no function listed');
  checkDefined(dir, names);
  return names;
}

/*
 * Fails unless the functions EXPORTS_DEFINED_IN in dir marks EXPORT (a line
 * `EXPORT <type> <name>(`) are exactly names.
 */
function checkDefined(dir, names) {
  const file = path.join(dir, EXPORTS_DEFINED_IN);
  const defined = [];
  fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    if (!/^\s*EXPORT\b/.test(line)) return;
    const m = /^\s*EXPORT\s+[A-Za-z_][A-Za-z0-9_ ]*?[\s*]([A-Za-z_][A-Za-z0-9_]*)\s*\(/.exec(line);
    if (m === null) fail(file, i + 1, 'an EXPORT line that is not EXPORT <type> <name>(');
    defined.push({ name: m[1], line: i + 1 });
  });
  for (const d of defined) {
    if (!names.includes(d.name)) fail(file, d.line, `${d.name} is EXPORT but not in exports.txt`);
  }
  for (const name of names) {
    if (!defined.some((d) => d.name === name)) fail(file, 0, `${name} is in exports.txt but not defined EXPORT here`);
  }
}

/*
 * Reads the headers and exports.txt in dir: { constants: [{ c, js, value }]
 * in header order, codes: the CORE_CODES array, codeValues: [{ c, value }]
 * of dk_code, tags and bytesNames: TAGS and BYTES_NAMES, exports: the
 * names of exports.txt }. Throws on anything
 * missing, repeated or not understood.
 */
function read(dir) {
  const constants = [];
  let codes = null;
  let codeValues = null;
  let tags = null;
  let meta = null;
  let bytesNames = null;
  const add = (c, value, file) => {
    if (!c.startsWith('DK_')) fail(file, 0, `${c} does not start with DK_`);
    if (constants.some((k) => k.c === c)) fail(file, 0, `${c} defined twice`);
    constants.push({ c, js: c.slice(3), value });
  };
  for (const src of SOURCES) {
    const file = path.join(dir, src.header);
    const text = fs.readFileSync(file, 'utf8');
    for (const e of src.enums || []) for (const it of parseEnum(text, e, file)) add(it.name, it.value, file);
    for (const name of src.defines || []) {
      const d = parseDefines(text, (n) => n === name, file);
      if (d.length !== 1) fail(file, 0, `#define ${name} not found`);
      add(name, d[0].value, file);
    }
    for (const [e, names] of Object.entries(src.pick || {})) {
      const items = parseEnum(text, e, file);
      for (const name of names) {
        const it = items.find((i) => i.name === name);
        if (it === undefined) fail(file, 0, `${name} not found in enum ${e}`);
        add(name, it.value, file);
      }
    }
    for (const prefix of src.prefixes || []) {
      const d = parseDefines(text, (n) => n.startsWith(prefix), file);
      if (d.length === 0) fail(file, 0, `no #define ${prefix}*`);
      for (const it of d) add(it.name, it.value, file);
    }
    if (src.tags !== undefined) tags = parseTags(text, src.tags, file);
    if (src.meta) meta = parseMeta(text, file);
    if (src.kindNames !== undefined) bytesNames = parseKindNames(text, src.kindNames, file);
    if (src.codes !== undefined) {
      const items = parseEnum(text, src.codes, file);
      codeValues = items.map((it) => ({ c: it.name, value: it.value }));
      codes = [];
      for (const it of items) {
        if (it.value === 0) {
          if (it.name !== 'DK_OK') fail(file, 0, `${src.codes}: 0 is ${it.name}, not DK_OK`);
          codes[0] = null;
          continue;
        }
        const m = it.comment === null ? null : /^(ERR_[A-Z_]+):/.exec(it.comment);
        if (m === null) fail(file, 0, `${src.codes}: the comment of ${it.name} does not start with its JS code (ERR_...:)`);
        codes[it.value] = m[1];
      }
      for (let i = 0; i < codes.length; i++) {
        if (codes[i] === undefined) fail(file, 0, `${src.codes}: no code ${i} (numbered from 0, no gaps)`);
      }
    }
  }
  return { constants, codes, codeValues, tags, meta, bytesNames, exports: readExports(dir) };
}

/* The text of js/core/dk_abi.cjs made from the headers in dir. */
function generate(dir) {
  const { constants, codes, tags, meta, bytesNames, exports } = read(dir);
  const entries = constants.map((k) => [`${k.js}: ${k.value > 0xffff ? `0x${k.value.toString(16)}` : k.value},`, k.c]);
  const width = Math.max(...entries.map(([e]) => e.length));
  const lines = entries.map(([e, c]) => `  ${e.padEnd(width)} // ${c}`);
  return `'use strict';
// Made by wasm/gen_abi.cjs from the headers and exports.txt in wasm/ (see wasm/dk_abi.h): do not edit, change those.
module.exports = Object.freeze({
${lines.join('\n')}
  // dk_code (darmok.h) by number: the DarmokError code of each
  CORE_CODES: Object.freeze(${JSON.stringify(codes).replace(/,/g, ', ')}),
  // the darmok JSON tags without their "$" (dk_tags.h), and the tag of each DK_BYTES_* kind (dk_tape.h)
  TAGS: Object.freeze(${JSON.stringify(tags).replace(/,/g, ', ')}),
  // the meta keys of an object (dk_tags.h): an instance's class, its version, a "$" key's escape
  META: Object.freeze({ ${Object.entries(meta).map(([id, key]) => `${id}: '${key}'`).join(', ')} }),
  BYTES_NAMES: Object.freeze(${JSON.stringify(bytesNames).replace(/,/g, ', ')}),
  // the functions JS calls (exports.txt)
  EXPORTS: Object.freeze(${JSON.stringify(exports).replace(/,/g, ', ')})
});
`;
}

if (require.main === module) {
  const [dir, out] = process.argv.slice(2);
  if (dir === undefined || out === undefined) {
    process.stderr.write('usage: node wasm/gen_abi.cjs <headers dir> <output file>\n');
    process.exit(2);
  }
  try {
    const text = generate(dir);
    fs.writeFileSync(`${out}.tmp`, text);
    fs.renameSync(`${out}.tmp`, out);
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
}

module.exports = { SOURCES, read, generate };

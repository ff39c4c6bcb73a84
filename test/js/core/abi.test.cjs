'use strict';
/*
 * The JS <-> core boundary is defined once: every constant both sides use
 * (wasm/dk_abi.h lists them) is in a C header, and js/ takes it from
 * js/core/dk_abi.cjs, which wasm/gen_abi.cjs generates from the headers.
 * These tests fail when the generated module is stale, when the parser
 * reads a header differently from the C compiler, when js/ holds a copy of
 * a constant, or when a header changes in a way the parser does not
 * understand.
 */
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.join(__dirname, '..', '..', '..');
const wasmDir = path.join(root, 'wasm');
const gen = require('../../../wasm/gen_abi.cjs');
const abi = require('../../../js/internal.cjs').dkAbi;
const tape = require('../../../js/internal.cjs').tape;
const { SHORT_MAX } = require('../../../js/internal.cjs').tapeReader;
const core = require('../../../js/internal.cjs').core;
const errors = require('../../../js/internal.cjs').errors;

const { constants, codes, codeValues, tags, bytesNames } = gen.read(wasmDir);
const value = (c) => constants.find((k) => k.c === c).value;

/* A copy of the headers, exports.txt and dk_wasm.c in a temporary folder, with edit(text) applied to one of them. */
function editedHeaders(header, edit) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-abi-'));
  for (const f of fs.readdirSync(wasmDir)) {
    if (f.endsWith('.h') || f === 'exports.txt' || f === 'dk_wasm.c') fs.copyFileSync(path.join(wasmDir, f), path.join(dir, f));
  }
  const file = path.join(dir, header);
  const before = fs.readFileSync(file, 'utf8');
  const after = edit(before);
  assert.notEqual(after, before, `the edit of ${header} changed nothing`);
  fs.writeFileSync(file, after);
  return dir;
}

/* Every .cjs/.mjs/.js file under dir. */
function sources(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (/\.(c|m)?js$/.test(e.name)) out.push(p);
  }
  return out;
}

/* The places in text that define one of the constants by value, as "NAME: line". */
function copiesIn(text) {
  const found = [];
  const names = [...constants.flatMap((k) => [k.js, k.c]), 'CORE_CODES'];
  for (const name of names) {
    // const NAME =, NAME = <number or [>, or a property NAME: <number or [> (not a ?: branch).
    const def = new RegExp(`\\b(?:const|let|var)\\s+${name}\\s*=(?!=)|\\b${name}\\s*=(?!=)\\s*(?:-?\\d|\\[)|` +
      `(?:^|[{,])\\s*${name}\\s*:\\s*(?:-?\\d|\\[)`, 'gm');
    for (const m of text.matchAll(def)) found.push(`${name}: ${m[0].replace(/^[\s{,]+/, '')}`);
  }
  return found;
}

test('js/core/dk_abi.cjs is what the headers generate now', () => {
  const built = fs.readFileSync(path.join(root, 'js', 'core', 'dk_abi.cjs'), 'utf8');
  assert.equal(built, gen.generate(wasmDir), 'stale: run make build');
  for (const k of constants) assert.equal(abi[k.js], k.value, k.c);
  assert.deepStrictEqual(abi.CORE_CODES, codes);
  assert.deepStrictEqual(abi.TAGS, tags);
  assert.deepStrictEqual(abi.BYTES_NAMES, bytesNames);
});

test('the tag names js/ gets are the ones the core reads and writes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-abi-tags-'));
  try {
    const c = '#include <stdio.h>\n#include "dk_tags.h"\nint main(void)\n{\n' +
      '    for (int i = 0; i < DK_TAG_BYTES; i++) printf("%s\\n", dk_tag_names[i]);\n' +
      '    for (int k = 0; k < DK_BYTES_KIND_COUNT; k++) printf("%s\\n", dk_bytes_name[k]);\n    return 0;\n}\n';
    fs.writeFileSync(path.join(dir, 'tags.c'), c);
    execFileSync('gcc', ['-std=c11', '-Wall', '-Werror', `-I${wasmDir}`, path.join(dir, 'tags.c'),
      path.join(wasmDir, 'dk_text.c'), path.join(wasmDir, 'dk_mem.c'), '-lm', '-o', path.join(dir, 'tags')]);
    const seen = execFileSync(path.join(dir, 'tags'), { encoding: 'utf8' }).trim().split('\n');
    assert.deepStrictEqual(seen, [...abi.TAGS, ...abi.BYTES_NAMES]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // js/ spells no tag list of its own: each binary kind's name appears in the generated module only.
  for (const f of sources(path.join(root, 'js'))) {
    if (f.endsWith('dk_abi.cjs')) continue;
    const text = fs.readFileSync(f, 'utf8');
    for (const name of ['Uint8ClampedArray', 'BigUint64Array']) {
      assert.doesNotMatch(text, new RegExp(`['"]\\$?${name}['"]`), `${path.relative(root, f)} spells '${name}'`);
    }
  }
});

test('the parser reads the values the C compiler sees', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-abi-cc-'));
  try {
    const all = [...constants, ...codeValues];
    const lines = all.map((k) => `    printf("%s %llu\\n", "${k.c}", (unsigned long long)(${k.c}));`);
    const c = `#include <stdio.h>\n#include "dk_abi.h"\n#include "dk_internal.h"\n` +
      `int main(void)\n{\n${lines.join('\n')}\n    return 0;\n}\n`;
    fs.writeFileSync(path.join(dir, 'abi.c'), c);
    execFileSync('gcc', ['-std=c11', '-Wall', '-Werror', `-I${wasmDir}`, path.join(dir, 'abi.c'), '-o', path.join(dir, 'abi')]);
    const seen = execFileSync(path.join(dir, 'abi'), { encoding: 'utf8' }).trim().split('\n');
    assert.deepStrictEqual(seen, all.map((k) => `${k.c} ${k.value}`));
    assert.equal(codeValues.length, codes.length);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the UTF-16 decode area js/ lays out is the one the core reads', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-abi-u16-'));
  const ns = [0, 1, 2, 3, 7, 8, 1000, 1001, 65535, 1 << 20];
  try {
    const c = '#include <stdio.h>\n#include "dk_abi.h"\nint main(void)\n{\n' +
      `    static const unsigned long ns[] = {${ns.join(', ')}};\n` +
      '    for (unsigned i = 0; i < sizeof ns / sizeof ns[0]; i++)\n' +
      '        printf("%lu %lu\\n", (unsigned long)DK_U16_AT(ns[i]), (unsigned long)DK_U16_AREA(ns[i]));\n    return 0;\n}\n';
    fs.writeFileSync(path.join(dir, 'u16.c'), c);
    execFileSync('gcc', ['-std=c11', '-Wall', '-Werror', `-I${wasmDir}`, path.join(dir, 'u16.c'), '-o', path.join(dir, 'u16')]);
    const seen = execFileSync(path.join(dir, 'u16'), { encoding: 'utf8' }).trim().split('\n');
    assert.deepStrictEqual(seen, ns.map((n) => `${core.u16At(n)} ${core.u16Area(n)}`));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('js/ takes every constant from the generated module', () => {
  for (const k of constants) {
    if (k.js in tape) assert.equal(tape[k.js], abi[k.js], `js/core/tape.cjs ${k.js}`);
  }
  for (const name of ['T_UNDEF', 'T_STR16', 'STR_KEYREF', 'STR_SHIFT', 'STR_MAX', 'BYTES_BUFFER', 'BYTES_KIND_COUNT']) {
    assert.ok(name in tape, `js/core/tape.cjs exports ${name}`);
  }
  assert.equal(SHORT_MAX, abi.U16_SRC_ASCII_MIN - 1);
  assert.equal(core.PB_READ, abi.READ_KEYREFS | abi.READ_STRREFS);
  assert.ok(abi.READ_STRREFS > 0 && (abi.READ_STRREFS & abi.READ_KEYREFS) === 0);
  assert.equal(tape.T_STRREF, abi.T_STRREF);
  // The very array of the generated module, not a copy of it.
  assert.equal(errors.CORE_CODES, abi.CORE_CODES);
  codes.forEach((code, n) => assert.equal(errors.coreCode(n), n === 0 ? 'ERR_INTERNAL' : code));
  for (const f of ['tape.cjs', 'tape-reader.cjs', 'instance.cjs', 'core.cjs', 'core-errors.cjs', 'errors.cjs']) {
    assert.match(fs.readFileSync(path.join(root, 'js', 'core', f), 'utf8'), /require\('\.\/dk_abi\.cjs'\)/, f);
  }
});

test('js/ holds no copy of a boundary constant', () => {
  // The scan finds the old hand-made definitions (it would have found these).
  assert.deepStrictEqual(copiesIn('const T_MAP = 14; //      u32 n\n'), ['T_MAP: const T_MAP =']);
  assert.equal(copiesIn('const RES_KEEP = 9;\nconst READ_KEYREFS = 2;\nconst CORE_CODES = [\n').length, 3);
  assert.equal(copiesIn('module.exports = { STR_SHIFT: 2 };\n').length, 1);
  assert.equal(copiesIn('const o = {\n  RES_OUT: 2,\n  T_REF: 20 };\nT_SET = 15;\n').length, 3);
  assert.deepStrictEqual(copiesIn("const { T_MAP } = require('./dk_abi.cjs');\nif (op === T.T_MAP) x = T.T_MAP;\n" +
    'return ascii ? STR_ASCII : 0;\n'), []);
  const found = [];
  const generated = path.join(root, 'js', 'core', 'dk_abi.cjs');
  for (const f of sources(path.join(root, 'js'))) {
    if (f === generated) continue;
    for (const c of copiesIn(fs.readFileSync(f, 'utf8'))) found.push(`${path.relative(root, f)}: ${c}`);
  }
  assert.deepStrictEqual(found, []);
});

test('a constant changed in a header alone changes what js/ gets', () => {
  const current = fs.readFileSync(path.join(root, 'js', 'core', 'dk_abi.cjs'), 'utf8');
  // Each value moved by 100 from what it is now (so the test keeps working when one changes).
  const enumEdit = (header, c) => [header, new RegExp(`\\b${c} = \\d+`), `${c} = ${value(c) + 100}`, c.slice(3), value(c) + 100];
  const defineEdit = (header, c) => [header, new RegExp(`#define ${c} \\d+u?\\b`), `#define ${c} ${value(c) + 100}u`, c.slice(3), value(c) + 100];
  const edits = [
    enumEdit('dk_tape.h', 'DK_T_MAP'),
    defineEdit('dk_tape.h', 'DK_STR_SHIFT'),
    enumEdit('dk_tape.h', 'DK_BYTES_KIND_COUNT'),
    enumEdit('dk_abi.h', 'DK_RES_KEEP'),
    enumEdit('darmok.h', 'DK_READ_KEYREFS'),
    defineEdit('darmok.h', 'DK_DEFAULT_MAX_DEPTH'),
    defineEdit('dk_abi.h', 'DK_U16_SRC_ENTRY'),
    ['darmok.h', /ERR_MEMORY: out of memory/, 'ERR_INTERNAL: out of memory', null, null],
    ['dk_tags.h', /DK_TAG_MAP_S "Map"/, 'DK_TAG_MAP_S "Mapp"', 'TAGS', null],
    ['dk_tape.h', /\/\* Uint8ClampedArray /, '/* Uint8Clamped ', 'BYTES_NAMES', null]
  ];
  for (const [header, from, to, name, moved] of edits) {
    const dir = editedHeaders(header, (t) => t.replace(from, to));
    try {
      const text = gen.generate(dir);
      assert.notEqual(text, current, `${header}: ${to}`);
      const mod = { exports: {} };
      new Function('module', 'exports', text)(mod, mod.exports);
      if (name === 'TAGS') {
        assert.equal(mod.exports.TAGS[abi.TAGS.indexOf('Map')], 'Mapp');
      } else if (name === 'BYTES_NAMES') {
        assert.equal(mod.exports.BYTES_NAMES[abi.BYTES_UINT8C], 'Uint8Clamped');
      } else if (name !== null) {
        assert.equal(mod.exports[name], moved);
        assert.notEqual(abi[name], moved);
      } else {
        assert.equal(mod.exports.CORE_CODES[5], 'ERR_INTERNAL');
        assert.equal(errors.coreCode(5), 'ERR_MEMORY');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('the generator refuses what it does not understand, by file and line', () => {
  const bad = [
    ['dk_tape.h', (t) => t.replace(/DK_T_MAP = \d+,/, 'DK_T_MAP = 1 << 4,'), /dk_tape\.h:\d+: enum dk_tape_op: cannot read/],
    ['dk_tape.h', (t) => t.replace(/#define DK_STR_SHIFT \d+/, '#define DK_STR_SHIFT (1 + 1)'), /dk_tape\.h:\d+: not an integer literal/],
    ['dk_tape.h', (t) => t.replace(/DK_T_MAP = \d+,/, `DK_T_MAP = ${value('DK_T_INSTANCE')},`), /DK_T_MAP repeats the value/],
    ['dk_tape.h', (t) => t.replace('enum dk_bytes_kind {', 'enum dk_kinds {'), /enum dk_bytes_kind found 0 times/],
    ['darmok.h', (t) => t.replace(/ *DK_READ_KEYREFS = .*\n/, ''), /DK_READ_KEYREFS not found in enum dk_read_flag/],
    ['darmok.h', (t) => t.replace(/#define DK_DEFAULT_MAX_DEPTH .*/, ''), /#define DK_DEFAULT_MAX_DEPTH not found/],
    ['dk_abi.h', (t) => t.replace(/#define DK_U16_SRC .*/, '#define DK_U16_SRC(x) x'), /function-like macro/],
    ['darmok.h', (t) => t.replace('/* ERR_MEMORY: out of memory */', '/* out of memory */'), /DK_ERR_MEMORY does not start with its JS code/],
    ['darmok.h', (t) => t.replace(/DK_ERR_TAPE = \d+/, `DK_ERR_TAPE = ${codes.length + 1}`), /no code \d+ \(numbered from 0, no gaps\)/],
    ['dk_abi.h', (t) => t.replace(/(DK_RES_KEEP = \d+),/, '$1'), /no comma after DK_RES_KEEP/],
    ['dk_tags.h', (t) => t.replace(/#define DK_TAG_MAP_S "Map"/, '#define DK_TAG_MAP_S MAP_NAME'), /dk_tags\.h:\d+: a DK_TAG_ define that is not/],
    ['dk_tags.h', (t) => t.replace(/(#define DK_TAG_SET_S .*\n)/, '$1#define DK_TAG_WEAK_S "Weak"\n'), /has 11 tags, the defines 12/],
    ['dk_tags.h', (t) => t.replace(/    DK_TAG_MAP,\n    DK_TAG_SET,/, '    DK_TAG_SET,\n    DK_TAG_MAP,'), /DK_TAG_MAP_S is tag 5, but enum dk_tag has DK_TAG_SET/],
    ['dk_tape.h', (t) => t.replace('/* Int8Array [1] */', '/* [1] */'), /the comment of DK_BYTES_INT8 does not start with its tag name/]
  ];
  for (const [header, edit, error] of bad) {
    const dir = editedHeaders(header, edit);
    try {
      assert.throws(() => gen.generate(dir), error);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('js/core/dk_abi.cjs lists the functions of wasm/exports.txt, as the Makefile reads it, and the core exports them', () => {
  // The Makefile's reading (EXPORTS): a # to the end of the line is a comment, blank lines are skipped.
  const listed = fs.readFileSync(path.join(wasmDir, 'exports.txt'), 'utf8').split('\n')
    .map((line) => line.replace(/#.*/, '').trim()).filter((line) => line !== '');
  assert.deepStrictEqual(abi.EXPORTS, listed);
  assert.ok(abi.EXPORTS.includes('dk_ctx_seed'));
  const wasmFile = path.join(root, 'build', 'darmok.wasm');
  if (fs.existsSync(wasmFile)) {
    const have = WebAssembly.Module.exports(new WebAssembly.Module(fs.readFileSync(wasmFile)))
      .filter((e) => e.kind === 'function').map((e) => e.name);
    for (const name of abi.EXPORTS) assert.ok(have.includes(name), `build/darmok.wasm exports ${name}`);
  }
  // A name added to the list (and defined in dk_wasm.c) is in what js/ gets.
  const dir = editedHeaders('exports.txt', (t) => `${t}# a comment\n\n  dk_new_call  # and another\n`);
  try {
    fs.appendFileSync(path.join(dir, 'dk_wasm.c'), '\nEXPORT uint32_t *dk_new_call(dk_ctx *c)\n{\n    return c->res;\n}\n');
    const mod = { exports: {} };
    new Function('module', 'exports', gen.generate(dir))(mod, mod.exports);
    assert.deepStrictEqual(mod.exports.EXPORTS, [...listed, 'dk_new_call']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the generator refuses an exports.txt it does not understand, by file and line', () => {
  const bad = [
    [(t) => `${t}dk_a dk_b\n`, /exports\.txt:\d+: not a C function name: "dk_a dk_b"/],
    [(t) => `${t}_dk_ctx_new()\n`, /exports\.txt:\d+: not a C function name/],
    [(t) => `${t}dk_ctx_new\n`, /exports\.txt:\d+: dk_ctx_new listed twice/],
    [(t) => t.replace(/^(?!#).+$/gm, ''), /exports\.txt: no function listed/],
    [(t) => `${t}dk_new_call\n`, /dk_wasm\.c: dk_new_call is in exports\.txt but not defined EXPORT here/],
    [(t) => t.replace(/^dk_ctx_seed\n/m, ''), /dk_wasm\.c:\d+: dk_ctx_seed is EXPORT but not in exports\.txt/]
  ];
  for (const [edit, error] of bad) {
    const dir = editedHeaders('exports.txt', edit);
    try {
      assert.throws(() => gen.generate(dir), error);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});

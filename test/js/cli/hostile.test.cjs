'use strict';
/*
 * Issue 32, findings 5-7: `darmok inspect` on hostile documents, in both
 * formats: no hang on long numbers, no crash on a long array or a staleAt
 * past Date's range, and no control or invisible character of the input
 * on stdout or stderr (a terminal acts on ESC, CSI U+009B and BEL; bidi
 * overrides hide text).
 */
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const darmok = require('../../../js/index.cjs');
const { isUnsafe } = require('../../../js/internal.cjs').errors;

const cli = path.join(__dirname, '..', '..', '..', 'js', 'cli.cjs');

/* darmok command with args on input (stdin). */
function run(command, input, args) {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  const res = spawnSync(process.execPath, [cli, command, ...args, '-'], { input: Buffer.from(input), env, timeout: 20000, maxBuffer: 64 * 2 ** 20 });
  assert.strictEqual(res.signal, null, `killed (${res.signal}): a hang`);
  return { status: res.status, stdout: res.stdout.toString(), stderr: res.stderr.toString() };
}

function inspect(input, args = []) {
  return run('inspect', input, args);
}

/* What a terminal would act on or hide: C0 but newline, DEL, C1, bidi and zero-width characters. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/u;

const ATTACK = '\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202eevil\u2066';

/* The JSON text and its protobuf transcode. */
function both(json) {
  return [['json', json], ['protobuf', darmok.transcode(json, { from: 'json', to: 'protobuf' })]];
}

test('inspect: a 500-digit number is one number, read in time (finding 5)', () => {
  const digits = '1'.repeat(500);
  for (const [format, doc] of both(`{"a":${digits},"b":[0.${digits}]}`)) {
    const res = inspect(doc);
    assert.strictEqual(res.status, 0, `${format}: ${res.stderr}`);
    const lines = res.stdout.split('\n');
    assert.ok(lines.includes('  a: Infinity'), `${format}: ${res.stdout}`); // as decodeEntity reads it
    assert.ok(lines.includes('  b: Array(1)') && lines.includes('    [0]: 0.1111111111111111'), `${format}: ${res.stdout}`);
  }
});

test('inspect: 300,000 zeros and 10,000 levels of nesting print without a stack overflow (finding 6)', () => {
  for (const [format, doc] of both(JSON.stringify(new Array(300000).fill(0)))) {
    const res = inspect(doc);
    assert.strictEqual(res.status, 0, `${format}: ${res.stderr}`);
    assert.ok(res.stdout.includes('Array(300000)') && res.stdout.includes('  [299999]: 0'), format);
  }
  const deep = '['.repeat(10000) + ']'.repeat(10000);
  const res = inspect(deep, ['--format', 'json']);
  assert.strictEqual(res.status, 1);
  assert.match(res.stderr, /ERR_DEPTH/);
});

test('inspect: an envelope whose staleAt is past Date\'s range shows the number (finding 6)', () => {
  for (const stale of ['9999999999999999', '8640000000000001']) {
    const res = inspect(`darmok/1 json ${stale}\n{"a":1}`);
    assert.strictEqual(res.status, 0, res.stderr);
    assert.match(res.stdout, new RegExp(`staleAt: ${Number(stale)} ms \\(out of a Date's range\\)`));
    assert.match(res.stdout, /document:\nObject\n {2}a: 1/);
  }
});

test('inspect: no control or invisible character of the document reaches the terminal (finding 7)', () => {
  const doc = JSON.stringify({
    $: `app.${ATTACK}`,
    [`k${ATTACK}`]: `v${ATTACK}`,
    r: { $RegExp: [`a${ATTACK}`, 'g'] },
    m: { $Map: [[`mk${ATTACK}`, 1], [{ $BigInt: '12' }, 2]] },
    e: { $Error: { name: `Type${ATTACK}`, message: ATTACK } },
    d: { $Date: '2020-01-01T00:00:00.000Z' }
  });
  for (const [format, bytes] of both(doc)) {
    const res = inspect(bytes);
    assert.strictEqual(res.status, 0, `${format}: ${res.stderr}`);
    assert.doesNotMatch(res.stdout, RAW, `${format}: ${JSON.stringify(res.stdout)}`);
    assert.match(res.stdout, /\\x1b\[2J\\x1b\]0;pwned\\x07\\x9b31m\\u202eevil\\u2066/, format);
    assert.match(res.stdout, /RegExp \/a\\x1b\[2J/, format);
  }
});

test('inspect: error messages show the input\'s control characters escaped (finding 7)', () => {
  // an invalid RegExp (--json decodes it), an envelope revision, a key in a path
  const cases = [
    [JSON.stringify({ $RegExp: [`(${ATTACK}`, 'g'] }), ['--json'], /ERR_FORMAT/],
    [`darmok/9${ATTACK} json 1\n{}`, [], /ERR_FORMAT/],
    [`{"${ATTACK}":[1,}`, [], /ERR_SYNTAX/]
  ];
  for (const [input, args, code] of cases) {
    const res = inspect(input, args);
    assert.strictEqual(res.status, 1, res.stdout);
    assert.match(res.stderr, code);
    assert.doesNotMatch(res.stderr, RAW, JSON.stringify(res.stderr));
  }
});

/*
 * One of each class of character errors.cjs UNSAFE holds that may stand
 * raw in a JSON string (C0 controls may not): DEL, C1 (CSI among them),
 * soft hyphen, Arabic letter mark, LRM/RLM, bidi embeddings and
 * overrides, isolates, line and paragraph separators, zero-width and BOM,
 * a variation selector, a tag character.
 */
const RAW_IN_STRINGS = ['\u007f', '\u0080', '\u009b', '\u009f', '\u00ad', '\u061c', '\u200b', '\u200e', '\u200f',
  '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u2028', '\u2029',
  '\u2060', '\ufe0f', '\ufeff', '\u{e0001}'];

/* The first character of text, but a newline, that visible() would escape, or null. */
function firstUnsafe(text) {
  for (const c of text) if (c !== '\n' && isUnsafe(c.codePointAt(0))) return c;
  return null;
}

test('inspect --json and convert --to json: every unsafe character of a string escaped, the JSON value the same', () => {
  for (const c of RAW_IN_STRINGS) {
    // raw in the text (JSON.stringify leaves these as they are), in a key and in a value; CR and tab between tokens
    const json = `{"k${c}":"${c}2J${c}",\r\t"b":["x${c}"]}`;
    const value = JSON.parse(json);
    assert.ok(json.includes(c));
    const runs = [
      ...both(json).map(([format, doc]) => [`inspect --json (${format})`, inspect(doc, ['--json'])]),
      ...both(json).map(([format, doc]) => [`convert --to json (${format})`, run('convert', doc, ['--to', 'json'])])
    ];
    for (const [what, res] of runs) {
      const name = `${what}, U+${c.codePointAt(0).toString(16)}`;
      assert.strictEqual(res.status, 0, `${name}: ${res.stderr}`);
      assert.strictEqual(firstUnsafe(res.stdout), null, `${name}: ${JSON.stringify(res.stdout)}`);
      assert.deepStrictEqual(JSON.parse(res.stdout), value, name);
    }
  }
});

test('inspect: a tree past maxBytes characters is ERR_TOO_LARGE, not a printout of gigabytes', () => {
  // 1 MB of input: 500,000 leaves 999 levels deep, each a line of ~2,000 characters of indent.
  const doc = '['.repeat(999) + '0,'.repeat(499999) + '0' + ']'.repeat(999);
  for (const [format, bytes] of both(doc)) {
    const res = inspect(bytes);
    assert.strictEqual(res.status, 1, `${format}: ${res.stdout.slice(0, 200)}`);
    assert.match(res.stderr, /ERR_TOO_LARGE: the tree of this document is over \d+ characters/, format);
    assert.strictEqual(res.stdout, '', format);
  }
});

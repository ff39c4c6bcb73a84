'use strict';
/*
 * core.cjs plumbing against the real core: growth of WebAssembly memory
 * (every view re-taken), the number of boundary crossings per call, and
 * error mapping (code, offset, excerpt).
 */
const { test } = require('node:test');
const { assert, sameGraph, xorshift, throwsCode } = require('../helpers.cjs');
const core = require('../../../js/internal.cjs').core;
const internal = require('../../../js/internal.cjs');
const abi = require('../../../js/internal.cjs').dkAbi;
const { encodeEntity, decodeEntity, transcode, DarmokError } = require('../../../js/index.cjs');
const { fixtures } = require('../fixtures.cjs');

test('memory growth mid-call: large values round-trip and later calls still work', () => {
  const before = internal.wasmMemory().buffer.byteLength;
  const big = { s: 'x'.repeat(8 << 20) + 'é😀', list: Array.from({ length: 200000 }, (_, i) => ({ i, d: i / 7 })) };
  const text = encodeEntity(big);
  assert.ok(internal.wasmMemory().buffer.byteLength > before, 'memory grew');
  const back = decodeEntity(text);
  assert.strictEqual(back.s, big.s);
  assert.strictEqual(back.list.length, 200000);
  assert.deepStrictEqual(back.list[199999], { i: 199999, d: 199999 / 7 });
  // Also as UTF-8 bytes, after growth.
  assert.strictEqual(decodeEntity(Buffer.from(text)).s.length, big.s.length);
  for (const f of fixtures) {
    const input = f.make();
    const text2 = encodeEntity(input);
    if (f.json !== undefined) assert.strictEqual(text2, f.json, f.name);
    const out = decodeEntity(text2);
    if (f.expect !== null) sameGraph(out, f.expect ? f.expect() : input);
    if (f.check) f.check(out, assert, input);
  }
});

test('one work call into the core per encode and per decode', () => {
  // The real exports, each wrapped to count its calls.
  const counts = new Map();
  const real = internal.exportsForTest();
  const counted = {};
  for (const [name, fn] of Object.entries(real)) {
    counted[name] = typeof fn === 'function'
      ? (...args) => { counts.set(name, (counts.get(name) || 0) + 1); return fn(...args); }
      : fn;
  }
  internal.useExportsForTest(counted, { keepContext: true });
  try {
    const text = encodeEntity({ a: [1, 2, new Map([[1, new Date(0)]])], s: 'é' });
    assert.deepStrictEqual(Object.fromEntries(counts), { dk_ctx_input: 1, dk_json_encode_ctx: 1 });
    counts.clear();
    decodeEntity(text);
    assert.deepStrictEqual(Object.fromEntries(counts), { dk_ctx_input: 1, dk_json_decode_ctx: 1 });
  } finally {
    internal.useExportsForTest(real, { keepContext: true });
  }
});

test('the warm-up at load runs every work call of the core, each of them successfully', () => {
  const { execFileSync } = require('node:child_process');
  // In a fresh process, every instance's work calls recorded with what they returned.
  const script = `
    const Instance = WebAssembly.Instance;
    const seen = [];
    WebAssembly.Instance = function (mod, imports) {
      const { exports } = new Instance(mod, imports);
      const wrapped = {};
      for (const [name, fn] of Object.entries(exports)) {
        wrapped[name] = typeof fn === 'function' && /_(en|de)code_ctx$/.test(name)
          ? (...args) => { const code = fn(...args); seen.push([name, code]); return code; }
          : fn;
      }
      return { exports: wrapped };
    };
    require(${JSON.stringify(require.resolve('../../../js/internal.cjs'))}).core;
    console.log(JSON.stringify(seen));
  `;
  const seen = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
  assert.deepStrictEqual(seen, [['dk_json_decode_ctx', 0], ['dk_json_encode_ctx', 0], ['dk_pb_encode_ctx', 0], ['dk_pb_decode_ctx', 0]]);
});

test('a failure on maxLength names it and its value in both formats; a maxBytes failure of a transcode does not', () => {
  const five = [1, 2, 3, 4, 5];
  throwsCode(() => decodeEntity(encodeEntity(five), { maxLength: 4 }), 'ERR_TOO_LARGE',
    (e) => assert.match(e.message, /^too many items \(maxLength 4\) at byte 0 in \$ near/));
  const pb = encodeEntity(five, { format: 'protobuf' });
  throwsCode(() => decodeEntity(pb, { format: 'protobuf', maxLength: 4 }), 'ERR_TOO_LARGE',
    (e) => assert.match(e.message, /^array longer than max_length \(maxLength 4\) at byte 4 of the protobuf document near \[/));
  // Its JSON text is over maxBytes, its protobuf bytes are not.
  const strings = encodeEntity(new Array(50).fill('abcdefghij'), { format: 'protobuf' });
  throwsCode(() => transcode(strings, { from: 'protobuf', to: 'json', maxBytes: 300 }), 'ERR_TOO_LARGE',
    (e) => assert.match(e.message, /^JSON text over its bound \(maxBytes\) at byte 0 of the protobuf document near \[/));
});

test('errors map to DarmokError with code, offset and a short excerpt', () => {
  const long = '{"k":"' + 'a'.repeat(1000) + '",}';
  try {
    decodeEntity(long);
    assert.fail('no error');
  } catch (e) {
    assert.ok(e instanceof DarmokError);
    assert.strictEqual(e.code, 'ERR_SYNTAX');
    assert.strictEqual(e.offset, long.length - 1);
    assert.ok(e.message.length < 200, e.message);
    assert.match(e.message, /at byte 1008/);
  }
});

test('the ABI refuses a length beyond the input area, and the next call works', () => {
  const ex = internal.exportsForTest();
  const c = ex.dk_ctx_new(); // a context of our own: darmok's is private
  const words = () => new Uint32Array(internal.wasmMemory().buffer, ex.dk_ctx_result(c), abi.RES_WORDS);
  const TOO_LARGE = abi.CORE_CODES.indexOf('ERR_TOO_LARGE');
  assert.notStrictEqual(ex.dk_ctx_input(c, 16), 0);
  for (const call of ['dk_json_encode_ctx', 'dk_json_decode_ctx', 'dk_pb_encode_ctx', 'dk_pb_decode_ctx', 'dk_pb_from_json_ctx', 'dk_pb_to_json_ctx']) {
    const code = ex[call](c, 1 << 30, 0, 0);
    assert.strictEqual(code, TOO_LARGE, `${call}: DK_ERR_TOO_LARGE`);
    assert.strictEqual(words()[abi.RES_CODE], TOO_LARGE, `${call}: result word RES_CODE`);
  }
  // JSON text as UTF-16 units (the fifth argument): an area of 3 units + 1
  // bytes that is not there, and unit counts whose area would pass 2^32
  // (0x55555556: 3 * units + 1 wraps to 3, 0x55555555 to 0).
  for (const units of [1 << 30, 0x60000000, 0x55555556, 0x55555555]) {
    assert.strictEqual(ex.dk_json_decode_ctx(c, 0, 0, 0, units), TOO_LARGE, `units ${units}: DK_ERR_TOO_LARGE`);
    assert.strictEqual(words()[abi.RES_CODE], TOO_LARGE, `units ${units}: result word RES_CODE`);
  }
  assert.strictEqual(decodeEntity(encodeEntity({ after: [1] })).after[0], 1);
});

/*
 * JSON text given as a string reads as JSON.parse reads it, and as its
 * UTF-8 bytes when it has no lone surrogate: a raw lone surrogate in a
 * string is kept (it was U+FFFD, as utf8Write and TextEncoder write it,
 * which corrupted the value silently), a raw pair is its code point, and
 * error offsets count UTF-8 bytes (a lone surrogate 3, as U+FFFD), also
 * when the string is over maxBytes / 3 units (its exact UTF-8 length is
 * taken).
 */
test('JSON text from a string reads as JSON.parse reads it, and as its UTF-8 bytes do', () => {
  const cases = [
    ['"a\ud800b"', 'a\ud800b'],
    ['"\udc00"', '\udc00'],
    ['"x\ud83d"', 'x\ud83d'],
    ['"\ud83d\ude00!"', '\ud83d\ude00!'],
    ['"\ude00\ud83d"', '\ude00\ud83d'],
    ['{"k\u00e9\ud800":1}', { 'k\u00e9\ud800': 1 }],
    ['["\ud800\\udc00","\\ud800\udc00","\ud800\\n\udbff"]', ['\ud800\udc00', '\ud800\udc00', '\ud800\n\udbff']],
    ['["' + 'a'.repeat(40) + '\u00ff' + 'b'.repeat(40) + '\u6771' + 'c'.repeat(33) + '"]', ['a'.repeat(40) + '\u00ff' + 'b'.repeat(40) + '\u6771' + 'c'.repeat(33)]]
  ];
  for (const [json, want] of cases) {
    const text = json; // raw characters, lone surrogates included
    assert.deepStrictEqual(decodeEntity(text), want, json);
    assert.deepStrictEqual(decodeEntity(text), JSON.parse(text), json);
    // transcode to protobuf from the string keeps them too, under the
    // same maxBytes (the string's UTF-8: a lone surrogate 3 bytes)
    const pbBytes = transcode(text, { from: 'json', to: 'protobuf', maxBytes: Buffer.byteLength(text) });
    assert.deepStrictEqual(decodeEntity(pbBytes, { format: 'protobuf' }), want, json);
    if (text.isWellFormed()) assert.deepStrictEqual(decodeEntity(Buffer.from(text, 'utf8')), want, json);
    assert.deepStrictEqual(decodeEntity(text, { maxBytes: Buffer.byteLength(text) }), want, json);
    // A string over maxBytes / 3 units is written as UTF-8 unless it has a
    // lone surrogate: kept there too.
    const big = `[${json},"${'x'.repeat(3000)}"]`;
    assert.deepStrictEqual(decodeEntity(big, { maxBytes: Buffer.byteLength(big) })[0], want, json);
  }
  // A lone surrogate after an odd run of backslashes is the escaped
  // character of an invalid escape: an error in transcode too (it hands
  // the core escapes for lone surrogates, which made such a backslash a
  // valid \\ once); after an even run, a surrogate after a backslash.
  for (const bs of [1, 3]) {
    for (const text of ['"' + '\\'.repeat(bs) + '\ud800"', '{"' + '\\'.repeat(bs) + '\udc00":1}']) {
      assert.throws(() => JSON.parse(text), SyntaxError);
      throwsCode(() => decodeEntity(text), 'ERR_SYNTAX');
      throwsCode(() => transcode(text, { from: 'json', to: 'protobuf' }), 'ERR_SYNTAX');
    }
  }
  const even = '"\\\\\ud800"';
  assert.strictEqual(decodeEntity(transcode(even, { from: 'json', to: 'protobuf' }), { format: 'protobuf' }), JSON.parse(even));
  for (const bad of ['["\u00e9",]', '{"\u6771\ud800": tru}', '"\ud83d\ude00', '["' + '\u00e9'.repeat(50) + '\u0001"]']) {
    const text = bad;
    let a = null;
    let b = null;
    try { decodeEntity(text); } catch (e) { a = e; }
    try { decodeEntity(Buffer.from(text, 'utf8')); } catch (e) { b = e; }
    assert.ok(a instanceof DarmokError && b instanceof DarmokError, bad);
    assert.strictEqual(a.code, b.code, bad);
    assert.strictEqual(a.offset, b.offset, bad);
    assert.strictEqual(a.message, b.message, bad);
  }
});

/*
 * The core makes a JSON string's UTF-16 into UTF-8 in place (8 units at a
 * time while they are below U+0800, 16 while ASCII, one by one otherwise):
 * random texts of runs of each kind, pairs and lone surrogates, at random
 * offsets, read as JSON.parse reads them, and as their UTF-8 bytes
 * (Buffer.from) read when they have no lone surrogate.
 */
test('JSON text from a string: random runs of 1- to 4-byte characters', () => {
  const rnd = xorshift(0x9e3779b9);
  const pick = () => {
    switch (rnd(6)) {
      case 0: case 1: return String.fromCharCode(0x20 + rnd(0x5f)).replace(/["\\]/, 'q');
      case 2: return String.fromCharCode(0x80 + rnd(0x780));
      case 3: return String.fromCharCode(0x800 + rnd(0xd000));
      case 4: return String.fromCodePoint(0x10000 + rnd(0x100000));
      default: return rnd(4) === 0 ? String.fromCharCode(0xd800 + rnd(0x800)) : 'x';
    }
  };
  for (let t = 0; t < 3000; t++) {
    const strs = [];
    const k = 1 + rnd(4);
    for (let j = 0; j < k; j++) {
      let s = '';
      const runs = rnd(6);
      for (let r = 0; r < runs; r++) {
        const c = pick();
        s += c.repeat(1 + rnd(20));
      }
      strs.push(s);
    }
    const text = JSON.stringify(strs).replace(/\\u(d[89a-f][0-9a-f]{2})/g, (m, h) => String.fromCharCode(parseInt(h, 16)));
    const bytes = Buffer.from(text, 'utf8');
    const got = decodeEntity(text);
    if (text.isWellFormed()) assert.deepStrictEqual(got, decodeEntity(bytes), text);
    assert.deepStrictEqual(got, JSON.parse(text), text);
    const bad = text.slice(0, -1) + ',]';
    let a = null;
    let b = null;
    try { decodeEntity(bad); } catch (e) { a = e; }
    try { decodeEntity(Buffer.from(bad, 'utf8')); } catch (e) { b = e; }
    assert.ok(a instanceof DarmokError && b instanceof DarmokError, bad);
    assert.deepStrictEqual([a.code, a.offset, a.message], [b.code, b.offset, b.message], bad);
  }
});

/*
 * How many referenceable values a rebuild of the JSON text must keep for
 * its references (wasm/dk_tape.h "Referenceable values"): the highest
 * {"$ref":n} plus one, 0 without one. The pattern cannot match inside a
 * string (its quotes would be escaped) or a user's key ('$' doubled).
 */
function refsNeed(text) {
  let keep = 0;
  for (const m of text.matchAll(/"\$ref":(\d+)/g)) keep = Math.max(keep, Number(m[1]) + 1);
  return keep;
}

test('decode calls tell the rebuild how many values with identity its references need', () => {
  const pb = require('../../../js/protobuf.cjs');
  const count = (r) => r.refKeep;
  const shared = { s: 1 };
  const values = [
    ...fixtures.map((f) => f.make()),
    Array.from({ length: 70 }, (_, i) => (i % 3 ? { i, d: new Date(i) } : shared)),
    new Map([[shared, [shared, new Set([1, shared])]], ['x', /re/g]])
  ];
  let checked = 0;
  let withRefs = 0;
  for (const value of values) {
    let text;
    try {
      text = encodeEntity(value, { strict: true });
    } catch {
      continue; // functions, symbols: not written, not counted here
    }
    const want = refsNeed(text);
    if (want > 0) withRefs++;
    assert.strictEqual(core.jsonDecode(text, 1000, 1 << 30, 1 << 30, count), want, `JSON string ${text.slice(0, 60)}`);
    assert.strictEqual(core.jsonDecode(Buffer.from(text), 1000, 1 << 30, 1 << 30, count), want, 'JSON bytes');
    assert.strictEqual(core.pbDecode(pb.encodeEntity(value), 1000, 1 << 30, 1 << 30, count), want, 'protobuf');
    checked++;
  }
  assert.ok(checked > 40 && withRefs >= 3, `${checked} values checked, ${withRefs} with references`);
});

test('a tape of more referenceable values than the table made at once: the table grows', () => {
  const pb = require('../../../js/protobuf.cjs');
  const n = 16000 + 1000; // js/codec/decode.cjs REFS_AT_ONCE, and more
  const items = Array.from({ length: n }, () => []);
  const value = [items, items[n - 1], items[16000], items[3]];
  for (const [name, back] of [['JSON', decodeEntity(encodeEntity(value))], ['protobuf', pb.decodeEntity(pb.encodeEntity(value))]]) {
    assert.strictEqual(back[0].length, n, name);
    assert.strictEqual(back[1], back[0][n - 1], `${name}: a reference past the first table`);
    assert.strictEqual(back[2], back[0][16000], name);
    assert.strictEqual(back[3], back[0][3], name);
    assert.notStrictEqual(back[0][n - 2], back[0][n - 1], name);
  }
});

/*
 * A string over maxBytes / 3 units with a lone surrogate goes to the core
 * as UTF-16 in an area of 3 units + 1 bytes (its WTF-8 is made in place),
 * not of its UTF-8 length, which ucs2Write would overrun. In a child: a
 * fresh input area, exactly as large as asked for.
 */
test('a long JSON string with a lone surrogate under a tight maxBytes', () => {
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const script = `
    const { decodeEntity } = require(${JSON.stringify(path.join(__dirname, '..', '..', '..', 'js', 'index.cjs'))});
    const text = '["' + 'a'.repeat(300000) + '\\ud800' + 'b'.repeat(1000) + '"]';
    const got = decodeEntity(text, { maxBytes: Buffer.byteLength(text) });
    console.log(JSON.stringify([got[0].length, got[0].charCodeAt(300000), JSON.stringify(got) === JSON.stringify(JSON.parse(text))]));
  `;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.strictEqual(run.stderr, '');
  assert.deepStrictEqual(JSON.parse(run.stdout), [301001, 0xd800, true]);
});

test('large decodes keep the memory they need: no new instance per call; a run of small calls gives it back', () => {
  const MiB = 2 ** 20;
  // Under the default maxBytes, yet its call grows memory past the high-water mark (64 MiB).
  const big = Buffer.from(encodeEntity(Array.from({ length: 2500000 }, (_, i) => i * 1000.5)));
  const small = encodeEntity({ a: [1], s: 'é' });
  decodeEntity(big); // may renew first: the calls before were small
  const start = internal.instantiationsForTest();
  assert.ok(internal.wasmMemory().buffer.byteLength > 64 * MiB, `memory ${internal.wasmMemory().buffer.byteLength}`);
  for (let i = 0; i < 3; i++) assert.strictEqual(decodeEntity(big).length, 2500000);
  for (let i = 0; i < 4; i++) {
    assert.strictEqual(decodeEntity(big)[2499999], 2499999 * 1000.5);
    assert.deepStrictEqual(decodeEntity(small), { a: [1], s: 'é' });
  }
  assert.strictEqual(internal.instantiationsForTest(), start, 'a new instance while large documents keep coming');
  // Once the calls stop needing it, the memory comes back within a bounded run of small ones.
  let calls = 0;
  while (internal.instantiationsForTest() === start && calls < 64) {
    assert.deepStrictEqual(decodeEntity(small), { a: [1], s: 'é' });
    calls++;
  }
  assert.strictEqual(internal.instantiationsForTest(), start + 1, `no new instance after ${calls} small calls`);
  assert.ok(internal.wasmMemory().buffer.byteLength <= 16 * MiB, `memory ${internal.wasmMemory().buffer.byteLength} after renewal`);
  assert.deepStrictEqual(decodeEntity(encodeEntity({ after: [1n] })), { after: [1n] });
});

test('a core lacking a function of wasm/exports.txt is refused by name (ERR_NOT_READY); the core in use stays', () => {
  const real = internal.exportsForTest();
  const mem = internal.wasmMemory();
  assert.ok(abi.EXPORTS.includes('dk_ctx_seed'));
  for (const name of abi.EXPORTS) {
    const partial = { ...real };
    delete partial[name];
    assert.throws(() => internal.useExportsForTest(partial),
      (e) => e instanceof DarmokError && e.code === 'ERR_NOT_READY' && e.message.includes(name), name);
    assert.strictEqual(internal.exportsForTest(), real, name);
  }
  assert.strictEqual(internal.wasmMemory(), mem);
  assert.strictEqual(decodeEntity(encodeEntity({ ok: 1 })).ok, 1);
});

test('every new context is seeded: dk_ctx_seed is called by setup, with two random words', () => {
  const real = internal.exportsForTest();
  const seeds = [];
  const counted = { ...real, dk_ctx_seed: (c, a, b) => { seeds.push([a, b]); return real.dk_ctx_seed(c, a, b); } };
  try {
    internal.useExportsForTest(counted);
    internal.useExportsForTest(counted);
    assert.strictEqual(seeds.length, 2);
    assert.notDeepStrictEqual(seeds[0], seeds[1]);
    assert.strictEqual(decodeEntity(encodeEntity({ ok: 1 })).ok, 1);
  } finally {
    internal.useExportsForTest(real, { keepContext: true });
  }
});

test('a core whose setup fails midway leaves the core in use as it was', () => {
  const real = internal.exportsForTest();
  const mem = internal.wasmMemory();
  const failing = { ...real, memory: new WebAssembly.Memory({ initial: 1 }), dk_ctx_new: () => 0 };
  assert.throws(() => internal.useExportsForTest(failing), (e) => e instanceof DarmokError && e.code === 'ERR_MEMORY');
  assert.strictEqual(internal.wasmMemory(), mem);
  assert.strictEqual(internal.exportsForTest(), real);
  assert.deepStrictEqual(decodeEntity(encodeEntity({ ok: [1, 'é'] })), { ok: [1, 'é'] });
});

/* A WebAssembly module whose function exports are names (each () -> 0), and a memory. */
function moduleExporting(names) {
  const leb = (n) => {
    const out = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n !== 0) b |= 0x80;
      out.push(b);
    } while (n !== 0);
    return out;
  };
  const str = (s) => [...leb(s.length), ...Buffer.from(s)];
  const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
  return Uint8Array.from([
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, [1, 0x60, 0, 1, 0x7f]), // type 0: () -> i32
    ...section(3, [1, 0]), // function 0 of type 0
    ...section(5, [1, 0, 1]), // a memory of one page
    ...section(7, [...leb(names.length + 1), ...names.flatMap((n) => [...str(n), 0, 0]), ...str('memory'), 2, 0]),
    ...section(10, [1, 4, 0, 0x41, 0, 0x0b]) // i32.const 0
  ]);
}

test('a .wasm lacking dk_ctx_seed: not loaded, refused by init() naming it; then the real core is', () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const { execFileSync } = require('node:child_process');
  const root = path.join(__dirname, '..', '..', '..');
  const partial = moduleExporting(abi.EXPORTS.filter((name) => name !== 'dk_ctx_seed'));
  assert.ok(WebAssembly.validate(partial));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-partial-'));
  try {
    // A copy of js/ with the partial core beside it (load.cjs finds js/core/darmok.wasm, beside itself).
    fs.cpSync(path.join(root, 'js'), path.join(dir, 'js'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'js', 'core', 'darmok.wasm'), partial);
    const script = `
      const d = require(${JSON.stringify(path.join(dir, 'js', 'index.cjs'))});
      const fs = require('fs');
      const seen = (e) => e instanceof d.DarmokError ? [e.code, /dk_ctx_seed/.test(e.message)] : String(e);
      (async () => {
        const out = [];
        try { d.encodeEntity(1); out.push('no throw'); } catch (e) { out.push(seen(e)); }
        out.push(await d.init(fs.readFileSync(${JSON.stringify(path.join(dir, 'js', 'core', 'darmok.wasm'))})).then(() => 'resolved', seen));
        out.push(await d.init(fs.readFileSync(${JSON.stringify(path.join(root, 'build', 'darmok.wasm'))})).then(() => 'resolved', seen));
        out.push(d.decodeEntity(d.encodeEntity({ a: [1n] })).a[0] === 1n);
        console.log(JSON.stringify(out));
      })();
    `;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
    assert.deepStrictEqual(out, [['ERR_NOT_READY', true], ['ERR_NOT_READY', true], 'resolved', true]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('init() and compile() share one test of what init() takes, and one message for what it refuses', async () => {
  const fs = require('node:fs');
  const load = require('../../../js/internal.cjs').load;
  for (const bad of [42, 'darmok.wasm', null, {}]) {
    assert.strictEqual(load.isSource(bad), false, String(bad));
    await assert.rejects(core.init(bad), (e) => e.code === 'ERR_INVALID_OPTION' && e.message === load.badSource().message);
    await assert.rejects(load.compile(bad), (e) => e.code === 'ERR_INVALID_OPTION' && e.message === load.badSource().message);
  }
  for (const good of [new Uint8Array(8), new ArrayBuffer(8), new URL('file:///x.wasm'), Promise.resolve(null), { arrayBuffer() {} }]) {
    assert.strictEqual(load.isSource(good), true);
  }
  for (const f of ['core.cjs', 'instance.cjs']) {
    assert.doesNotMatch(fs.readFileSync(require.resolve(`../../../js/core/${f}`), 'utf8'), /init\(\) takes the/);
  }
});

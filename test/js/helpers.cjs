'use strict';
/*
 * helpers.cjs - assertions shared by the tests.
 *
 * sameGraph(actual, expected): a structural comparison stricter than
 * deepStrictEqual where darmok promises more: prototypes, -0 (Object.is),
 * holes (`i in arr`), Map/Set order, binary bytes in fresh buffers, Error
 * fields, and identity: the two graphs must share and cycle in exactly the
 * same places (a bijection between their objects).
 */
const assert = require('node:assert/strict');
const core = require('../../js/internal.cjs').core;
const { DarmokError } = require('../../js/internal.cjs').errors;

const haveWasm = core.isReady();
// The suite runs against the real core. Only a deliberate JS-only run
// (DARMOK_JS_ONLY=1, while the core is being rebuilt) may go without it:
// a missing build must never pass as skipped tests.
if (!haveWasm && process.env.DARMOK_JS_ONLY !== '1') {
  throw new Error('build/darmok.wasm is not built: run `make test` (or set DARMOK_JS_ONLY=1 for a JS-only run)');
}
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

function sameGraph(actual, expected) {
  walk(actual, expected, new Map(), new Map(), '$');
}

function walk(a, e, fwd, back, path) {
  if (typeof e !== 'object' || e === null) {
    assert.ok(Object.is(a, e), `${path}: ${String(a)} is not ${String(e)}`);
    return;
  }
  assert.ok(typeof a === 'object' && a !== null, `${path}: not an object`);
  if (fwd.has(e)) {
    assert.strictEqual(fwd.get(e), a, `${path}: identity differs`);
    return;
  }
  assert.ok(!back.has(a), `${path}: one object stands for two`);
  fwd.set(e, a);
  back.set(a, e);
  assert.strictEqual(Object.getPrototypeOf(a), Object.getPrototypeOf(e), `${path}: prototype differs`);
  if (Array.isArray(e)) {
    assert.strictEqual(a.length, e.length, `${path}: length`);
    for (let i = 0; i < e.length; i++) {
      assert.strictEqual(i in a, i in e, `${path}[${i}]: hole differs`);
      if (i in e) walk(a[i], e[i], fwd, back, `${path}[${i}]`);
    }
    return;
  }
  if (e instanceof Map) {
    assert.strictEqual(a.size, e.size, `${path}: size`);
    const ae = [...a];
    let i = 0;
    for (const [k, v] of e) {
      walk(ae[i][0], k, fwd, back, `${path}.$Map[${i}][0]`);
      walk(ae[i][1], v, fwd, back, `${path}.$Map[${i}][1]`);
      i++;
    }
  } else if (e instanceof Set) {
    assert.strictEqual(a.size, e.size, `${path}: size`);
    const av = [...a];
    let i = 0;
    for (const v of e) walk(av[i], v, fwd, back, `${path}.$Set[${i++}]`);
  } else if (e instanceof Date) {
    assert.ok(Object.is(a.getTime(), e.getTime()), `${path}: time`);
  } else if (e instanceof RegExp) {
    assert.strictEqual(a.source, e.source);
    assert.strictEqual(a.flags, e.flags);
    assert.strictEqual(a.lastIndex, 0);
  } else if (e instanceof ArrayBuffer || ArrayBuffer.isView(e)) {
    const bytes = (x) => x instanceof ArrayBuffer ? new Uint8Array(x) : new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
    assert.deepStrictEqual([...bytes(a)], [...bytes(e)], `${path}: bytes`);
    if (ArrayBuffer.isView(a)) {
      assert.strictEqual(a.byteOffset, 0, `${path}: not a fresh buffer`);
      assert.strictEqual(a.buffer.byteLength, a.byteLength, `${path}: not a fresh buffer`);
    }
  } else if (e instanceof Error) {
    for (const k of ['name', 'message', 'stack']) assert.strictEqual(a[k], e[k], `${path}.${k}`);
    for (const k of ['cause', 'errors']) {
      assert.strictEqual(hasOwn(a, k), hasOwn(e, k), `${path}.${k} presence`);
      if (hasOwn(e, k)) walk(a[k], e[k], fwd, back, `${path}.${k}`);
    }
    assert.ok(Object.prototype.toString.call(a) === '[object Error]', `${path}: not a real Error`);
  }
  assert.deepStrictEqual(Object.keys(a), Object.keys(e), `${path}: keys`);
  for (const k of Object.keys(e)) walk(a[k], e[k], fwd, back, `${path}.${k}`);
}

/* Deep-freeze a graph (cycles allowed). */
function deepFreeze(v, seen = new Set()) {
  if (typeof v !== 'object' || v === null || seen.has(v)) return v;
  seen.add(v);
  if (!ArrayBuffer.isView(v)) Object.freeze(v);
  for (const k of Object.keys(v)) deepFreeze(v[k], seen);
  if (v instanceof Map) for (const [k, x] of v) { deepFreeze(k, seen); deepFreeze(x, seen); }
  if (v instanceof Set) for (const x of v) deepFreeze(x, seen);
  return v;
}

/*
 * throwsCode(fn, code, check?): fn throws a DarmokError with this code;
 * check(err) may assert more about it.
 */
function throwsCode(fn, code, check) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof DarmokError, `not a DarmokError: ${err && err.stack}`);
    assert.strictEqual(err.code, code, err.message);
    if (check) check(err);
    return true;
  });
}

/* A seeded xorshift32 (Marsaglia): rnd(n) is an integer in [0, n), the same sequence every run. */
function xorshift(seed) {
  let s = seed >>> 0;
  return (n) => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s % n;
  };
}

/* The two byte formats, for tests that run in each. */
const FORMATS = ['json', 'protobuf'];

/* A codec of format over a registry of its own (createCodec, createRegistry). */
function isolatedCodec(format) {
  const { createCodec, createRegistry } = require('../../js/index.cjs');
  return createCodec({ format, registry: createRegistry() });
}

/* isolatedCodec(format) as c, with its registry's Registry (plans, shapes: js/internal.cjs). */
function inspectedCodec(format) {
  const { createCodec, createRegistry } = require('../../js/index.cjs');
  const { registryOf } = require('../../js/internal.cjs');
  const registry = createRegistry();
  return { c: createCodec({ format, registry }), registry: registryOf(registry) };
}

/*
 * The process warnings with one of codes that fn (sync) causes, those
 * whose message matches `about`: they are emitted on a later tick (so
 * this waits for them), where earlier tests' warnings may arrive too.
 */
async function warningsOf(codes, about, fn) {
  const seen = [];
  const on = (w) => { if (codes.includes(w.code) && about.test(w.message)) seen.push(w); };
  process.on('warning', on);
  try {
    fn();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', on);
  }
  return seen;
}

/*
 * Protobuf documents through Debian's protoc and darmok's schema: pbDoc
 * encodes protobuf text format (darmok.Document) to bytes, pbText decodes
 * bytes to that text.
 */
const PROTO_DIR = require('node:path').join(__dirname, '..', '..', 'proto');
function protoc(mode, input) {
  return require('node:child_process').execFileSync('protoc',
    [`--${mode}=darmok.Document`, `-I${PROTO_DIR}`, require('node:path').join(PROTO_DIR, 'darmok.proto')],
    { input, maxBuffer: 1 << 24 });
}
const pbDoc = (text) => protoc('encode', text);
const pbText = (bytes) => protoc('decode', bytes).toString('utf8');

module.exports = {
  assert, sameGraph, deepFreeze, haveWasm, hasOwn, throwsCode, warningsOf, FORMATS, isolatedCodec, inspectedCodec, xorshift, pbDoc, pbText
};

'use strict';
/*
 * Issue 32, findings 8 and 9: every failure a DarmokError (fromPlain of a
 * revoked Proxy or a throwing getter; a view of a detached ArrayBuffer in
 * every entry point that takes bytes, both formats, and of a resizable one
 * shrunk below the view), and fromPlain held to
 * decodeEntity's limits for the same document (nested $Map, $Set, $Error,
 * $NullProto count once a level, as decodeEntity counts them).
 */
const { test } = require('node:test');
const assert = require('node:assert/strict');
const darmok = require('../../../js/index.cjs');
const pb = require('../../../js/protobuf.cjs');
const { serializer } = require('../../../js/serializer.cjs');
const { throwsCode } = require('../helpers.cjs');

test('fromPlain: a revoked Proxy or a throwing getter anywhere is a DarmokError with its path (finding 8)', () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const boom = new Error('boom');
  const cases = [
    [{ a: proxy }, '$.a'], [proxy, '$'], [[1, proxy], '$[1]'],
    [{ get a() { throw boom; } }, '$.a'],
    [{ a: [{ b: new Proxy({}, { ownKeys() { throw boom; } }) }] }, '$.a[0].b'],
    [Object.defineProperty({}, 'x', { enumerable: true, get() { throw 5; } }), '$.x'] // eslint-disable-line no-throw-literal
  ];
  for (const [plain, path] of cases) {
    throwsCode(() => darmok.fromPlain(plain), 'ERR_UNSUPPORTED_TYPE', (err) => {
      assert.strictEqual(err.path, path);
      assert.ok(err.cause !== undefined, 'what the input threw is the cause');
    });
  }
});

/* A Uint8Array whose ArrayBuffer was transferred away. */
function detached(bytes) {
  const u = new Uint8Array(bytes);
  structuredClone(u.buffer, { transfer: [u.buffer] });
  assert.strictEqual(u.length, 0);
  return u;
}

/*
 * A view of bytes in a resizable ArrayBuffer then shrunk below the view's
 * end: a view of fixed length (offset 0) and a length-tracking one that
 * starts past the new end. Both read length 0, as a detached view does.
 */
function shrunk(bytes) {
  const ab = new ArrayBuffer(bytes.length + 2, { maxByteLength: 1000 });
  const fixed = new Uint8Array(ab, 0, bytes.length);
  fixed.set(bytes);
  const tracking = new Uint8Array(ab, 2);
  ab.resize(1);
  assert.strictEqual(fixed.length, 0);
  assert.strictEqual(tracking.length, 0);
  return [fixed, tracking];
}

/* Every view of bytes that cannot be read: detached, shrunk. */
function gone(bytes) {
  return [detached(bytes), ...shrunk(bytes)];
}

test('a view of a detached or shrunk ArrayBuffer is ERR_UNSUPPORTED_TYPE in every entry point that takes bytes (finding 8)', () => {
  const json = Buffer.from(darmok.encodeEntity({ a: 1 }));
  const bytes = pb.encodeEntity({ a: 1 });
  const calls = [
    ...gone(json).map((u) => () => darmok.decodeEntity(u)),
    ...gone(bytes).map((u) => () => darmok.decodeEntity(u, { format: 'protobuf' })),
    ...gone(bytes).map((u) => () => pb.decodeEntity(u)),
    ...gone(bytes).map((u) => () => darmok.createCodec({ format: 'protobuf' }).decodeEntity(u)),
    ...gone(bytes).map((u) => () => darmok.transcode(u, { from: 'protobuf', to: 'json' })),
    ...gone(json).map((u) => () => darmok.transcode(u, { from: 'json', to: 'protobuf' })),
    ...gone(json).map((u) => () => serializer.deserialize(u)),
    ...gone(json).map((u) => () => darmok.fromPlain(u))
  ];
  for (const call of calls) throwsCode(call, 'ERR_UNSUPPORTED_TYPE');
  // An empty view that is not detached is still read (and is no document).
  throwsCode(() => darmok.decodeEntity(new Uint8Array(0)), 'ERR_SYNTAX');
  throwsCode(() => pb.decodeEntity(new Uint8Array(0)), 'ERR_FORMAT');
  const ab = new ArrayBuffer(4, { maxByteLength: 8 });
  const empty = new Uint8Array(ab, 1, 0);
  ab.resize(1);
  throwsCode(() => darmok.decodeEntity(empty), 'ERR_SYNTAX');
});

test('a value holding binary data whose ArrayBuffer was transferred or shrunk: ERR_UNSUPPORTED_TYPE at its path, on encode (finding 8)', () => {
  const ab = new ArrayBuffer(8, { maxByteLength: 16 });
  const dataView = new DataView(ab, 0, 8);
  const float64 = new Float64Array(ab, 0, 1);
  ab.resize(4);
  const views = [...gone(Uint8Array.of(1, 2, 3)), dataView, float64];
  for (const format of ['json', 'protobuf']) {
    for (const view of views) {
      throwsCode(() => darmok.encodeEntity({ a: view }, { format }), 'ERR_UNSUPPORTED_TYPE', (err) => assert.strictEqual(err.path, '$.a'));
    }
    const view = detached(Uint8Array.of(1, 2, 3));
    throwsCode(() => darmok.encodeEntity({ a: [view.buffer] }, { format }), 'ERR_UNSUPPORTED_TYPE', (err) => assert.strictEqual(err.path, '$.a[0]'));
  }
  for (const view of views) throwsCode(() => darmok.toPlain({ a: view }), 'ERR_UNSUPPORTED_TYPE');
  // A resizable ArrayBuffer itself, shrunk, is what it holds now; a view that still fits is read.
  const fits = new Uint8Array(ab, 0, 2);
  fits.set([7, 8]);
  const back = darmok.decodeEntity(darmok.encodeEntity({ ab, fits }));
  assert.deepStrictEqual([...new Uint8Array(back.ab)], [7, 8, 0, 0]);
  assert.deepStrictEqual([...back.fits], [7, 8]);
});

/* 'value', or the code of the DarmokError fn threw. */
function outcome(fn) {
  try {
    fn();
    return 'value';
  } catch (err) {
    assert.ok(err instanceof darmok.DarmokError, String(err && err.stack));
    return err.code;
  }
}

/* n levels of `wrap` around 0, as JSON text. */
function nested(n, wrap) {
  let s = '0';
  for (let i = 0; i < n; i++) s = wrap(s);
  return s;
}

test('fromPlain has decodeEntity\'s depth limit for the same document: tags count once a level (finding 9)', () => {
  const wraps = {
    $Map: (s) => `{"$Map":[[1,${s}]]}`,
    $Set: (s) => `{"$Set":[${s}]}`,
    $Error: (s) => `{"$Error":{"name":"E","message":"m","c":${s}}}`,
    $NullProto: (s) => `{"$NullProto":{"a":${s}}}`,
    array: (s) => `[${s}]`,
    instance: (s) => `{"$":"hi.X","a":${s}}`
  };
  for (const [name, wrap] of Object.entries(wraps)) {
    for (const [n, maxDepth] of [[999, undefined], [1000, undefined], [1001, undefined], [40, 40], [41, 40]]) {
      const text = nested(n, wrap);
      const options = { unknownClass: 'plain', ...(maxDepth === undefined ? {} : { maxDepth }) };
      const want = outcome(() => darmok.decodeEntity(text, options));
      const got = outcome(() => darmok.fromPlain(JSON.parse(text), options));
      assert.strictEqual(got, want, `${name} at ${n} levels (maxDepth ${maxDepth ?? 'default'})`);
    }
  }
});

test('fromPlain has decodeEntity\'s size limits for the same document (finding 9)', () => {
  const plain = { a: 'x'.repeat(1000), b: [1, 2, 3] };
  const text = JSON.stringify(plain);
  for (const options of [{ maxBytes: text.length }, { maxBytes: text.length - 1 }, { maxLength: 1000 }, { maxLength: 999 }, { maxLength: 2 }]) {
    const want = outcome(() => darmok.decodeEntity(text, options));
    const got = outcome(() => darmok.fromPlain(plain, options));
    assert.strictEqual(got, want, JSON.stringify(options));
  }
  // A tree far over maxBytes stops as its text passes it, not after.
  const big = { list: new Array(100000).fill('y'.repeat(100)) };
  throwsCode(() => darmok.fromPlain(big, { maxBytes: 1000 }), 'ERR_TOO_LARGE');
});

test('transcode to protobuf: the output grows with the input, at most ~2.25 times it (finding 1, every direction)', () => {
  // 4 bytes of text ("0.5,") are a kind and an 8-byte double: the most
  // protobuf a byte of JSON makes; the output is sized once, then written.
  for (const [text, most] of [
    [`[${new Array(10000).fill('0.5').join(',')}]`, 2.25],
    [JSON.stringify(new Array(10000).fill({ a: 'x' })), 1],
    [JSON.stringify({ $Uint8Array: 'A'.repeat(40000) }), 1]
  ]) {
    const bytes = darmok.transcode(text, { from: 'json', to: 'protobuf', maxBytes: text.length });
    assert.ok(bytes.length <= most * text.length + 16, `${bytes.length} bytes of protobuf for ${text.length} of JSON`);
  }
});

'use strict';
/*
 * The fixtures table through the real core, for every format: exact text,
 * decode, round trip, idempotence, byte identity with JSON.stringify, and
 * the invalid table with exact codes and offsets. Skipped (with a note)
 * while build/darmok.wasm does not exist.
 */
const { test } = require('node:test');
const { formats, fixtures, invalid } = require('../fixtures.cjs');
const { assert, sameGraph, deepFreeze, haveWasm, xorshift } = require('../helpers.cjs');
const darmok = require('../../../js/index.cjs');

const skip = haveWasm ? false : 'build/darmok.wasm is not built (DARMOK_JS_ONLY=1)';
const api = { json: require('../../../js/json.cjs'), protobuf: require('../../../js/protobuf.cjs') };

for (const format of formats) {
  const { encodeEntity, decodeEntity, DarmokError } = api[format];

  for (const f of fixtures) {
    test(`${format}: ${f.name}`, { skip }, () => {
      const input = f.make();
      const text = encodeEntity(input);
      if (format === 'json') {
        if (f.json !== undefined) assert.strictEqual(text, f.json);
        if (f.stringify) assert.strictEqual(text, JSON.stringify(input));
        JSON.parse(text); // every output is JSON
      }
      const out = decodeEntity(text);
      if (f.expect !== null) sameGraph(out, f.expect ? f.expect() : input);
      if (f.check) f.check(out, assert, input);
      if (format === 'protobuf') {
        assert.ok(Buffer.isBuffer(text), 'protobuf bytes are a Buffer in Node');
        assert.deepStrictEqual(encodeEntity(out), text, 'idempotent');
        // The JSON document of the same value transcodes to these very bytes, and back.
        const json = darmok.encodeEntity(input);
        assert.deepStrictEqual(darmok.transcode(json, { from: 'json', to: 'protobuf' }), text);
        assert.strictEqual(darmok.transcode(text, { from: 'protobuf', to: 'json' }), json);
        if (f.json !== undefined) assert.strictEqual(darmok.transcode(text, { from: 'protobuf', to: 'json' }), f.json);
        return;
      }
      assert.strictEqual(encodeEntity(out), text, 'idempotent');
      if (f.json !== undefined) sameGraph(decodeEntity(Buffer.from(f.json)), out);
      if (f.json !== undefined) sameGraph(decodeEntity(new TextEncoder().encode(f.json)), out);
    });
  }

  test(`${format}: deep-frozen input encodes`, { skip }, () => {
    const all = deepFreeze(fixtures.filter((f) => f.expect === undefined).map((f) => f.make()));
    sameGraph(decodeEntity(encodeEntity(all)), all);
  });

  // The invalid table is JSON text; protobuf-errors.test.cjs has protobuf's.
  for (const bad of format === 'json' ? invalid : []) {
    test(`${format} invalid: ${bad.name}`, { skip }, () => {
      const input = bad.bytes ? Uint8Array.from(bad.bytes) : bad.text;
      assert.throws(() => decodeEntity(input, bad.options), (err) => {
        assert.ok(err instanceof DarmokError, String(err));
        assert.strictEqual(err.code, bad.code, err.message);
        if ('offset' in bad && bad.offset !== undefined) assert.strictEqual(err.offset, bad.offset, err.message);
        if (bad.path !== undefined) assert.strictEqual(err.path, bad.path);
        if (['ERR_SYNTAX', 'ERR_FORMAT'].includes(err.code)) {
          assert.strictEqual(typeof err.offset, 'number');
          assert.match(err.message, /at byte \d+/);
        }
        return true;
      });
    });
  }
}

test('plain JSON data is byte-identical to JSON.stringify', { skip }, () => {
  let seed = 7;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const strs = ['', 'a', 'é', '\u2028', '"\\', '\u0000\u001f', '😀', '\ud800', 'key with space', '1', '01'];
  const gen = (d) => {
    switch (rnd(d > 4 ? 4 : 7)) {
      case 0: return rnd(2) === 0 ? rnd(1000) - 500 : (rnd(1e6) - 5e5) / 7 * 10 ** (rnd(40) - 20);
      case 1: return strs[rnd(strs.length)];
      case 2: return rnd(2) === 0;
      case 3: return null;
      case 4: case 5: return Array.from({ length: rnd(5) }, () => gen(d + 1));
      default: {
        const o = {};
        for (let i = rnd(5); i > 0; i--) o[strs[rnd(strs.length)] + (rnd(2) ? 'k' : '')] = gen(d + 1);
        return o;
      }
    }
  };
  for (let i = 0; i < 500; i++) {
    const v = gen(0);
    assert.strictEqual(darmok.encodeEntity(v), JSON.stringify(v));
  }
});

/*
 * The core writes and parses $Date strings itself (dk_fmt_iso,
 * dk_parse_iso): they must be Date#toISOString's for any time of a Date's
 * range, and come back as the same time, in both formats.
 */
test('dates anywhere in their range: toISOString text, the same time back', { skip }, () => {
  const rnd32 = xorshift(11);
  const rnd = () => rnd32(0x100000000) / 0x100000000;
  const max = 8.64e15;
  const times = [0, -1, 1, max, -max, max - 1, -max + 1, -62167219200000, -62167219200001, 253402300799999, 253402300800000, 951868800000, 951868799999];
  for (let i = 0; i < 3000; i++) times.push(Math.round((rnd() * 2 - 1) * max));
  for (let i = 0; i < 3000; i++) times.push(Math.round((rnd() * 2 - 1) * 4e12)); // 1843 to 2096
  const dates = times.map((t) => new Date(t));
  const text = darmok.encodeEntity(dates);
  assert.deepStrictEqual(JSON.parse(text), dates.map((d) => ({ $Date: d.toISOString() })));
  for (const format of formats) {
    const back = api[format].decodeEntity(api[format].encodeEntity(dates));
    assert.deepStrictEqual(back.map((d) => d.getTime()), times, format);
  }
});

test('a very sparse array costs its present elements, not its length', () => {
  const a = [];
  a[5] = 'x';
  a[1e9] = 1;
  const text = darmok.encodeEntity(a); // walking 1e9 slots would not finish
  assert.strictEqual(text, '[{"$hole":5},"x",{"$hole":999999994},1]');
  assert.throws(() => darmok.decodeEntity(text), (e) => e.code === 'ERR_TOO_LARGE');
  const back = darmok.decodeEntity(text, { maxLength: 2e9 });
  assert.strictEqual(back.length, 1e9 + 1);
  assert.deepStrictEqual(Object.keys(back), ['5', '1000000000']);
});

'use strict';
/*
 * json-document.test.cjs - js/core/json-document.cjs, the one reader of darmok
 * JSON text in js/: its keys are the generated ABI's; the paths it names
 * agree with the value the core decodes, in whole and in cut documents;
 * and a hostile document (a long number, a long key, deep nesting) gets
 * its DarmokError and path in time linear in its size, with no RangeError.
 */
const { test } = require('node:test');
const { assert, haveWasm } = require('../helpers.cjs');
const { encodeEntity, decodeEntity, DarmokError } = require('../../../js/index.cjs');
const { fixtures } = require('../fixtures.cjs');
const { documentPath } = require('../../../js/internal.cjs').errors;
const { TAG, BYTES_TAG, META, escapeKey, unescapeKey, pathAt } = require('../../../js/internal.cjs').jsonDocument;
const abi = require('../../../js/internal.cjs').dkAbi;
const fs = require('node:fs');
const path = require('node:path');

const skip = haveWasm ? false : 'build/darmok.wasm is not built';

test("the keys are the ABI's: tags, binary kinds, meta keys and the escape", () => {
  assert.deepStrictEqual(Object.keys(TAG), [...abi.TAGS]);
  for (const name of abi.TAGS) assert.equal(TAG[name], META.CLASS + name);
  assert.deepStrictEqual(BYTES_TAG, abi.BYTES_NAMES.map((name) => META.CLASS + name));
  assert.equal(META, abi.META);
  assert.equal(escapeKey('$x'), abi.META.ESCAPE + 'x');
  assert.equal(escapeKey('x$'), 'x$');
  assert.equal(unescapeKey(abi.META.ESCAPE + 'x'), '$x');
  assert.equal(unescapeKey('$x'), '$x');
});

/* Every valid document of the fixture table, as the core writes it or as the table pins it. */
function documents() {
  const docs = [];
  for (const f of fixtures) {
    let text = f.json;
    if (text === undefined) {
      try {
        text = encodeEntity(f.make());
      } catch {
        continue; // a fixture of values the encoder refuses
      }
    }
    docs.push({ name: f.name, bytes: Buffer.from(text) });
  }
  const file = path.join(__dirname, '..', 'fixtures', 'foo.darmok.json');
  docs.push({ name: 'foo.darmok.json', bytes: fs.readFileSync(file) });
  return docs;
}

/*
 * What segs (pathAt's segments) name in value, the decoded document: each
 * segment must step into something the value has, but the last may name
 * the slot after the last item of an array, Map or Set (where a document
 * cut there would have its next value). An index of a RegExp names its
 * source or flags ({"$RegExp":[source, flags]}); an index of an array may
 * be a hole.
 */
function resolve(value, segs, where) {
  let v = value;
  for (let n = 0; n < segs.length; n++) {
    const s = segs[n];
    const next = n === segs.length - 1 ? 1 : 0;
    if (typeof s === 'object') {
      const map = s.raw.startsWith(`.${TAG.Map}[`);
      assert.ok(map || s.raw.startsWith(`.${TAG.Set}[`), `${where}: raw segment ${s.raw}`);
      assert.ok(map ? v instanceof Map : v instanceof Set, `${where}: ${s.raw} of a ${Object.prototype.toString.call(v)}`);
      const i = Number(s.raw.slice(s.raw.indexOf('[') + 1, -1));
      assert.ok(i < v.size + next, `${where}: ${s.raw} of ${v.size} entries`);
      v = [...v][i];
    } else if (typeof s === 'number') {
      if (v instanceof RegExp) {
        assert.ok(s < 2, `${where}: [${s}] of a RegExp`);
        v = s === 0 ? v.source : v.flags;
        continue;
      }
      assert.ok(Array.isArray(v) || ArrayBuffer.isView(v), `${where}: [${s}] of a ${typeof v}`);
      assert.ok(s < v.length + next, `${where}: [${s}] of ${v.length}`);
      v = v[s];
    } else {
      assert.ok(v !== null && typeof v === 'object' && s in v, `${where}: .${s} not in the value`);
      v = v[s];
    }
  }
  return v;
}

test('every offset of a valid document names a value the core decodes', { skip }, () => {
  let offsets = 0;
  for (const { name, bytes } of documents()) {
    const value = decodeEntity(bytes);
    for (let end = 0; end <= bytes.length; end++) {
      resolve(value, pathAt(bytes, end), `${name} at ${end}`);
      offsets++;
    }
  }
  assert.ok(offsets > 1000, `only ${offsets} offsets read`);
});

test('a cut document fails in the core with the path of the value it was cut in', { skip }, () => {
  let cuts = 0;
  for (const { name, bytes } of documents()) {
    const value = decodeEntity(bytes);
    for (let k = 0; k < bytes.length; k++) {
      const cut = bytes.subarray(0, k);
      let err = null;
      try {
        decodeEntity(cut);
      } catch (e) {
        err = e;
      }
      if (err === null) continue; // a number cut short is still one: "12" of "123"
      const where = `${name} cut at ${k}`;
      assert.ok(err instanceof DarmokError, `${where}: ${err}`);
      assert.ok(err.offset <= k, `${where}: offset ${err.offset}`);
      assert.equal(err.path, documentPath(cut, err.offset), where);
      resolve(value, pathAt(cut, err.offset), where);
      cuts++;
    }
  }
  assert.ok(cuts > 1000, `only ${cuts} cut documents`);
});

/* Milliseconds f takes. */
function timeOf(f) {
  const t = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/* The DarmokError decodeEntity(text, options) throws; never a RangeError or another throw. */
function failure(text, options) {
  try {
    decodeEntity(text, options);
  } catch (err) {
    assert.ok(err instanceof DarmokError, `not a DarmokError: ${err}`);
    assert.equal(typeof err.path, 'string');
    return err;
  }
  assert.fail('decoded');
  return null;
}

/*
 * make(n): a bad document of size about n; check(err, n) its error. The
 * time grows linearly: at each step from n/64 up to n, four times the
 * size takes well under eight times as long, so a scanner gone quadratic
 * fails at a small size instead of running for hours. Each size's
 * shortest of five runs, taken in turns with the size before, so that a
 * collection or a busy machine does not count for one size only.
 */
function linear(make, check, n, options = () => undefined) {
  for (let size = n / 64; size < n; size *= 4) {
    const small = make(size);
    const large = make(4 * size);
    check(failure(small, options(size)), size);
    check(failure(large, options(4 * size)), 4 * size);
    let tSmall = Infinity;
    let tLarge = Infinity;
    for (let r = 0; r < 5; r++) {
      tSmall = Math.min(tSmall, timeOf(() => failure(small, options(size))));
      tLarge = Math.min(tLarge, timeOf(() => failure(large, options(4 * size))));
    }
    assert.ok(tLarge < 8 * tSmall + 50, `${tLarge.toFixed(1)} ms for ${4 * size}, ${tSmall.toFixed(1)} ms for ${size}`);
  }
}

test('a long number in a bad document: its path, in linear time', { skip }, () => {
  linear((n) => `{"a":[1,${'7'.repeat(n)}x]}`, (err) => {
    assert.equal(err.code, 'ERR_SYNTAX');
    assert.equal(err.path, '$.a[1]');
  }, 1048576);
});

test('a long key and a long $hole count in a bad document: their paths, in linear time', { skip }, () => {
  linear((n) => `{"${'k'.repeat(n)}":[1,x]}`, (err) => {
    assert.equal(err.code, 'ERR_SYNTAX');
    assert.match(err.path, /^\$\.k+\u2026\[1\]$/);
  }, 1048576);
  linear((n) => `[{"$hole":${'9'.repeat(n)}},x]`, (err) => {
    assert.equal(err.path, '$[0]');
  }, 1048576);
});

test('100,000 levels of nesting in a bad document: ERR_DEPTH at the limit, or the full path past it', { skip }, () => {
  const deep = failure('['.repeat(100000) + ']'.repeat(100000));
  assert.equal(deep.code, 'ERR_DEPTH');
  assert.equal(deep.path, '$' + '[0]'.repeat(abi.DEFAULT_MAX_DEPTH));
  // With the limit raised past the nesting, the whole depth is read to the bad byte.
  const raised = (n) => ({ maxDepth: n + 1 });
  linear((n) => '['.repeat(n) + 'x', (err, n) => {
    assert.equal(err.code, 'ERR_SYNTAX');
    assert.equal(err.path, '$' + '[0]'.repeat(n));
  }, 102400, raised);
  linear((n) => '{"a":'.repeat(n) + 'x', (err, n) => {
    assert.equal(err.path, '$' + '.a'.repeat(n));
  }, 102400, raised);
  linear((n) => `{"${TAG.Map}":[[1,`.repeat(n) + 'x', (err, n) => {
    assert.equal(err.path, '$' + `.${TAG.Map}[0][1]`.repeat(n));
  }, 102400, raised);
});

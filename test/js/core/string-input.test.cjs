'use strict';
/*
 * Which way a JSON string goes into the core, in a process of its own (the
 * input area grows and stays grown, so an earlier big call would hide a
 * wrong choice). A string whose 3 bytes a unit fit maxBytes goes in as
 * UTF-16 (3n bytes reserved, made UTF-8 in place); one over that goes in
 * through utf8Write with its exact UTF-8 length reserved, and then it must
 * not be written as UTF-16 into an area of that size.
 */
const { test } = require('node:test');
const { assert } = require('../helpers.cjs');
const { decodeEntity, DarmokError } = require('../../../js/index.cjs');

test('a string over maxBytes / 3 units goes in by its exact UTF-8 length', () => {
  const body = 'a'.repeat(1 << 20) + '\u00e9\u6771';
  const text = JSON.stringify([body, 1]);
  const bytes = Buffer.byteLength(text);
  assert.ok(bytes < 3 * text.length);
  assert.deepStrictEqual(decodeEntity(text, { maxBytes: bytes }), [body, 1]);
  assert.deepStrictEqual(decodeEntity(text, { maxBytes: 2 * bytes }), [body, 1]);
  assert.throws(() => decodeEntity(text, { maxBytes: bytes - 1 }),
    (e) => e instanceof DarmokError && e.code === 'ERR_TOO_LARGE' && e.message.includes(`input of ${bytes} bytes`));
  // and the core is intact after them
  assert.deepStrictEqual(decodeEntity('["\u00e9",' + '"x",'.repeat(100) + '1]').length, 102);
  assert.deepStrictEqual(decodeEntity(text), [body, 1]);
});

/*
 * Strings of a JSON text given as a string, non-ASCII ones and ASCII ones
 * over 24 characters, are slices of the text (side-table entries flagged
 * 0x80000000) when they have no escapes and the UTF-8 made in place has not
 * reached their units: they must be the very strings JSON.parse gives,
 * wherever they sit.
 */
test('strings come from the text\'s own units', () => {
  const { TapeReader } = require('../../../js/internal.cjs').tapeReader;
  const fromUtf16 = TapeReader.prototype.fromUtf16;
  let own = 0;
  TapeReader.prototype.fromUtf16 = function (at) {
    const b = this.buf;
    const p = this.u16At;
    if (p < this.u16End && (b[p + 7] & 0x80) !== 0) own++;
    return fromUtf16.call(this, at);
  };
  const parts = ['é', 'Zürich', '東京', '😀 and 😀', 'x\\u00e9y é', 'a "quoted" ü', '$$ñ'];
  try {
    for (let lead = 0; lead < 40; lead += 3) {
      const obj = { pad: 'p'.repeat(lead) };
      for (const [i, s] of parts.entries()) obj[`k${i}`] = JSON.parse(`"${s.replace(/"/g, '\\"')}"`);
      obj['$$ключ'] = 'значение';
      obj.list = parts.map((s) => s.repeat(1 + (lead % 5)));
      const text = JSON.stringify(obj);
      own = 0;
      assert.deepStrictEqual(decodeEntity(text), JSON.parse(text), text);
      if (lead >= 30) assert.ok(own >= 10, `${own} strings from the text's units (lead ${lead})`);
    }
    // 4-byte characters (two units, leads F0 to F4) at every offset of a
    // 16-byte block, before more non-ASCII strings
    own = 0;
    for (const c of ['😀', '\u{40000}', '\u{10FFFF}']) {
      for (let k = 0; k < 34; k++) {
        const v = ['a'.repeat(k) + c + 'b'.repeat(k % 5), 'é', 'ü東' + c];
        assert.deepStrictEqual(decodeEntity(' '.repeat(40) + JSON.stringify(v) + ' '.repeat(40)), v);
      }
    }
    assert.ok(own >= 3 * 34 * 3, `${own} strings from the text's units`);
    // ASCII strings of more than 24 characters too, keys and values, in an
    // all-ASCII text and after non-ASCII ones; a first key "$$..." (the tag
    // slot's escape) loses a '$', also when that makes it 24 long
    own = 0;
    for (const lead of ['', 'é東😀 ']) {
      const long = 'an ASCII string of more than 24 characters';
      const doc = { pad: 'p'.repeat(40), a: lead + 'x', b: long, c: long.slice(0, 24), d: `${long}\n${long}`, [long]: [long, long.slice(1)] };
      const text = JSON.stringify(doc).slice(0, -1) + `,"e":{"$$${long}":1,"${long}":2},"f":{"$$${long.slice(0, 24)}":3}}`;
      const want = { ...doc, e: { ['$' + long]: 1, [long]: 2 }, f: { ['$' + long.slice(0, 24)]: 3 } };
      assert.deepStrictEqual(decodeEntity(text), want, text);
    }
    assert.ok(own >= 2 * 6, `${own} ASCII strings from the text's units`);
    // then a Buffer and a lone surrogate: no entry of the text's kind
    own = 0;
    assert.deepStrictEqual(decodeEntity(Buffer.from('["' + 'a'.repeat(40) + '","é"]')), ['a'.repeat(40), 'é']);
    assert.deepStrictEqual(decodeEntity('["' + 'a'.repeat(40) + '","é","\ud800"]'), ['a'.repeat(40), 'é', '\ud800']);
    assert.equal(own, 0);
  } finally {
    TapeReader.prototype.fromUtf16 = fromUtf16;
  }
});

/*
 * The input area for a string of n units is 3n + 1 bytes (its units start
 * at an even byte). The core's area grows by doubling from 256 bytes
 * (plus 16 of padding), so for n = (2^k - 16) / 3 an area asked for 3n
 * bytes would be exactly full and the call refused: in a fresh process,
 * where nothing grew it before.
 */
test('the first string decode in a process reserves its whole area', () => {
  const { execFileSync } = require('node:child_process');
  const index = require.resolve('../../../js/index.cjs');
  for (const n of [336, 1360, 5456]) {
    const script = `const { decodeEntity } = require(${JSON.stringify(index)});
      const s = 'é'.repeat(${n - 2});
      process.stdout.write(decodeEntity(JSON.stringify(s)) === s ? 'ok' : 'wrong');`;
    assert.equal(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }), 'ok', `${n} units`);
  }
});

/*
 * A string that comes from the text's own units is text.substring(): V8
 * makes it a slice of the text, so a decode of a string allocates nothing
 * for it (the decoded value keeps the text alive instead). A decode of the
 * same document as UTF-8 bytes copies it. Heap plus external memory after
 * a full GC, in a child with --expose-gc.
 */
test('strings from the text\'s units share its memory; from bytes they are copied; nothing keeps the text', () => {
  const { execFileSync } = require('node:child_process');
  const index = require.resolve('../../../js/index.cjs');
  const script = `const { decodeEntity } = require(${JSON.stringify(index)});
    const s = '東' + 'a'.repeat(300000); // a two-byte string of 600 KB
    const text = ' '.repeat(64) + JSON.stringify([s]);
    const bytes = Buffer.from(text);
    const used = () => { gc(); gc(); const m = process.memoryUsage(); return m.heapUsed + m.external; };
    const grown = (input) => {
      decodeEntity(input);
      const before = used();
      const v = decodeEntity(input);
      const after = used();
      if (v.length !== 1 || v[0] !== s) throw new Error('wrong value');
      return after - before;
    };
    const textGrew = grown(text);
    const bytesGrew = grown(bytes);
    // and once the value and the text are dropped, nothing keeps the text
    // (after the calls above, the core's memory has its size)
    const released = (() => {
      const before = used();
      (() => {
        const t = ' '.repeat(64) + JSON.stringify(['東' + 'c'.repeat(300000)]);
        if (decodeEntity(t)[0].length !== 300001) throw new Error('wrong value');
      })();
      return used() - before;
    })();
    process.stdout.write(JSON.stringify({ text: textGrew, bytes: bytesGrew, released }));`;
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  const { text, bytes, released } = JSON.parse(out);
  // The string is 600 KB: a copy would grow the heap by that much; what
  // else a decode allocates (the value, lazily made code) stays well under half.
  assert.ok(text < 300000, `decode of the text grew the heap by ${text} bytes`);
  assert.ok(bytes > 500000, `decode of the bytes grew the heap by ${bytes} bytes`);
  assert.ok(released < 300000, `a dropped text and value left ${released} bytes`);
});

/*
 * A string decoded from bytes may be a slice of a chunk of the core's
 * UTF-16 side table (tape-reader.cjs CHUNK_BYTES, 16 KiB; the table here is
 * under BIG_CHUNK_BYTES): keeping one short string of a large document
 * keeps at most that much, not the document.
 * 13 characters (V8's shortest slice) followed by strings that would fill
 * many chunks; the one kept, for JSON bytes and protobuf.
 */
test('a kept string decoded from bytes keeps at most a 16 KiB chunk', () => {
  const { execFileSync } = require('node:child_process');
  const json = require.resolve('../../../js/json.cjs');
  const pb = require.resolve('../../../js/protobuf.cjs');
  const script = `const json = require(${JSON.stringify(json)});
    const pb = require(${JSON.stringify(pb)});
    const head = '\u00e9'.repeat(13);
    const value = [head];
    for (let i = 0; i < 400; i++) value.push('\u6771' + String(i).repeat(100)); // ~160 KiB of UTF-16
    const used = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
    const kept = (codec, blob) => {
      const keep = [];
      const before = used();
      for (let i = 0; i < 32; i++) keep.push(codec.decodeEntity(blob)[0]);
      const after = used();
      if (keep.some((s) => s !== head)) throw new Error('wrong value');
      return (after - before) / 32;
    };
    const jb = Buffer.from(json.encodeEntity(value));
    const pbb = pb.encodeEntity(value);
    for (let i = 0; i < 20; i++) { json.decodeEntity(jb); pb.decodeEntity(pbb); }
    kept(json, jb); // the first measurement of a process runs low
    process.stdout.write(JSON.stringify({ json: kept(json, jb), pb: kept(pb, pbb) }));`;
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' });
  const r = JSON.parse(out);
  for (const format of ['json', 'pb']) {
    assert.ok(r[format] < 24 * 1024, `${format}: a kept 13-character string holds ${Math.round(r[format])} bytes`);
  }
});


'use strict';
/*
 * Bytes out: encodeEntity(value, { bytes: true }), transcode's `bytes`, the
 * serializer's, and darmok/redis's writes. The bytes are exactly the UTF-8
 * of the text encodeEntity returns (fixtures, golden blobs, every form the
 * core writes JSON in; darmok/redis's entries as they were), they stay
 * valid after later calls, and no JS string of the document is made on the
 * way (spies on every function that makes a string from bytes, which the
 * text path does call).
 */
const { test } = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
const { assert, throwsCode, sameGraph } = require('../helpers.cjs');
const darmok = require('../../../js/index.cjs');
const pb = require('../../../js/protobuf.cjs');
const { formats, fixtures } = require('../fixtures.cjs');
const { makeFoo } = require('../package/browser/graph.cjs');
const { utf16ToUtf8Js } = require('../../../js/internal.cjs').text;
const { createSerializer, serializer } = require('../../../js/serializer.cjs');
const { createCache } = require('../../../js/redis.cjs');

const BYTES = { bytes: true };

/* The document as bytes, whichever the format gives. */
const asBytes = (doc) => (typeof doc === 'string' ? Buffer.from(doc, 'utf8') : doc);

test('the fixtures, both formats: bytes are the UTF-8 of the text (protobuf: the same bytes) and decode back', () => {
  for (const format of formats) {
    for (const f of fixtures) {
      const value = f.make();
      const doc = darmok.encodeEntity(value, { format });
      const bytes = darmok.encodeEntity(value, { format, bytes: true });
      assert.ok(Buffer.isBuffer(bytes), `${f.name} (${format}): a Buffer under Node`);
      assert.ok(bytes.equals(asBytes(doc)), `${f.name} (${format}): other bytes`);
      const again = darmok.encodeEntity(darmok.decodeEntity(bytes, { format }), { format });
      assert.deepStrictEqual(again, darmok.encodeEntity(darmok.decodeEntity(doc, { format }), { format }), `${f.name} (${format})`);
    }
  }
});

test('the golden blobs: bytes: true writes the fixture files byte for byte, from every entry point', () => {
  const json = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'foo.darmok.json'));
  const blob = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'foo.darmok.pb'));
  assert.ok(json.equals(darmok.encodeEntity(makeFoo(), BYTES)));
  assert.ok(json.equals(pb.encodeEntity(makeFoo(), { format: 'json', bytes: true })));
  assert.ok(json.equals(darmok.createCodec().encodeEntity(makeFoo(), BYTES)));
  assert.ok(blob.equals(pb.encodeEntity(makeFoo(), BYTES)));
  assert.ok(blob.equals(darmok.encodeEntity(makeFoo(), { format: 'protobuf', bytes: true })));
});

/*
 * Values for each form the core writes JSON in: ASCII bytes, UTF-8 that
 * is not ASCII (short strings only), and UTF-16 units once a long string
 * is not ASCII (then transcoded). Each over 128 KiB of text, and small.
 */
const long = (unit, n) => Array.from({ length: n }, (_, i) => `${unit} ${i}`).join(' ');
const FORMS = {
  ascii: () => ({ list: Array.from({ length: 3000 }, (_, i) => ({ id: i, title: long('title', 8), at: new Date(i) })) }),
  utf8: () => ({ list: Array.from({ length: 6000 }, (_, i) => ({ id: i, s: 'caf\u00e9 \u6771', e: '\ud83d\ude80' })) }),
  wide: () => ({
    body: long('na\u00efve \u6771\u4eac \ud83d\ude80', 9000),
    lone: `x${'\ud800'.repeat(40)}y\udfff z`.repeat(40),
    tail: Array.from({ length: 2000 }, (_, i) => `caf\u00e9 ${i}`),
    m: new Map([['\u00e9', 1n]])
  }),
  small: () => ({ a: 'caf\u00e9', b: `${'x'.repeat(40)}\u6771\ud83d\ude80`, c: '\ud800' })
};

test('every form of JSON output (ASCII, UTF-8, UTF-16 units transcoded): the same bytes as the text\'s UTF-8', () => {
  for (const [name, make] of Object.entries(FORMS)) {
    const text = darmok.encodeEntity(make());
    const bytes = darmok.encodeEntity(make(), BYTES);
    if (name !== 'small') assert.ok(text.length > 128 * 1024, `${name}: a document over 128 KiB`);
    assert.ok(bytes.equals(Buffer.from(text, 'utf8')), name);
    sameGraph(darmok.decodeEntity(bytes), darmok.decodeEntity(text));
  }
});

test('the transcoding without ICU (browsers, workerd) gives the same bytes', () => {
  for (const s of ['', 'abc', 'caf\u00e9', '\u6771\u4eac', '\ud83d\ude80x\ud83d\ude80', long('na\u00efve \u6771 \ud83d\ude80 \u07ff \u0800 \uffff', 500)]) {
    const units = Buffer.from(`..${s}`, 'utf16le'); // at an offset, as in the core's memory
    const out = utf16ToUtf8Js(units, 4, units.length - 4);
    assert.ok(Buffer.from(out).equals(Buffer.from(s, 'utf8')), JSON.stringify(s.slice(0, 20)));
  }
});

test('the bytes are a copy of their own: valid after later calls, and after the core\'s memory grew', () => {
  for (const format of formats) {
    const first = darmok.encodeEntity(FORMS.wide(), { format, bytes: true });
    const saved = Buffer.from(first);
    darmok.encodeEntity(FORMS.utf8(), { format, bytes: true });
    darmok.decodeEntity(darmok.encodeEntity({ big: 'y'.repeat(8 << 20) }, { format, bytes: true }), { format });
    assert.ok(first.equals(saved), `${format}: the bytes changed under a later call`);
    assert.notStrictEqual(first.buffer, darmok.encodeEntity(1, { format, bytes: true }).buffer);
  }
});

/*
 * Calls of every way Node and the web make a string from bytes, while
 * fn runs: the text path makes its string through one of them.
 */
function stringsMadeDuring(fn) {
  const calls = [];
  const spied = [
    [Buffer.prototype, ['ucs2Slice', 'latin1Slice', 'utf8Slice', 'asciiSlice', 'toString']],
    [TextDecoder.prototype, ['decode']],
    [String, ['fromCharCode']]
  ];
  const originals = [];
  for (const [owner, names] of spied) {
    for (const name of names) {
      const original = owner[name];
      originals.push([owner, name, original]);
      owner[name] = function spy(...args) {
        const s = original.apply(this, args);
        if (typeof s === 'string' && s.length > 1024) calls.push(`${name} (${s.length} units)`);
        return s;
      };
    }
  }
  try {
    return { result: fn(), calls };
  } finally {
    for (const [owner, name, original] of originals) owner[name] = original;
  }
}

test('no JS string of the document is made: the text path makes one, bytes: true none, in each form', () => {
  for (const [name, make] of Object.entries(FORMS)) {
    if (name === 'small') continue;
    const value = make();
    const text = stringsMadeDuring(() => darmok.encodeEntity(value));
    assert.ok(text.calls.length > 0, `${name}: the spies see the text path's string`);
    const bytes = stringsMadeDuring(() => darmok.encodeEntity(value, BYTES));
    assert.deepStrictEqual(bytes.calls, [], `${name}: a string was made`);
    const pbDoc = darmok.encodeEntity(value, { format: 'protobuf' });
    const back = stringsMadeDuring(() => darmok.transcode(pbDoc, { from: 'protobuf', to: 'json', bytes: true }));
    assert.deepStrictEqual(back.calls, [], `${name}: transcode made a string`);
    assert.ok(back.result.equals(bytes.result), `${name}: transcode's bytes differ from encodeEntity's`);
  }
});

test('bytes is checked: true or false; toPlain does not take it', () => {
  for (const bad of [1, 'yes', null]) {
    throwsCode(() => darmok.encodeEntity(1, { bytes: bad }), 'ERR_INVALID_OPTION');
    throwsCode(() => darmok.transcode(Buffer.from([8, 1]), { from: 'protobuf', to: 'json', bytes: bad }), 'ERR_INVALID_OPTION');
  }
  assert.strictEqual(darmok.encodeEntity('a', { bytes: false }), '"a"');
  throwsCode(() => darmok.toPlain(1, BYTES), 'ERR_INVALID_OPTION');
});

test('createSerializer({ bytes: true }): the UTF-8 of the default serializer\'s text, read back by either', () => {
  const bytesSerializer = createSerializer({ bytes: true });
  for (const make of [FORMS.small, FORMS.wide, () => ({ value: makeFoo(), expires: 5 })]) {
    const value = make();
    const out = bytesSerializer.serialize(value);
    assert.ok(Buffer.isBuffer(out));
    assert.ok(out.equals(Buffer.from(serializer.serialize(value))));
    sameGraph(bytesSerializer.deserialize(out), serializer.deserialize(serializer.serialize(value)));
    sameGraph(serializer.deserialize(out.toString()), bytesSerializer.deserialize(out));
  }
  throwsCode(() => createSerializer({ bytes: 'yes' }), 'ERR_INVALID_OPTION');
  throwsCode(() => createSerializer({ byte: true }), 'ERR_INVALID_OPTION');
});

/*
 * An ioredis-shaped client that keeps what SET (or getOrSet's SET by
 * EVAL) was given: darmok/redis
 * speaks to it as to ioredis (redis-clients.cjs recognises the shape).
 */
function recordingClient() {
  const sets = [];
  return {
    sets,
    isCluster: false,
    status: 'ready',
    getBuffer: async () => null,
    mgetBuffer: async (keys) => keys.map(() => null),
    set: async (key, value, ...rest) => {
      sets.push({ key, value, rest });
      return 'OK';
    },
    // getOrSet's store: SET over a string or nothing, by a script (clients.cjs SET_STRING).
    eval: async (script, n, key, value, px) => {
      sets.push({ key, value, rest: ['PX', px] });
      return 1;
    }
  };
}

test('darmok/redis set, mset, getOrSet: the entry as one Buffer, the same bytes as header + the text\'s UTF-8', async () => {
  const tests = [];
  for (const format of formats) {
    const client = recordingClient();
    const cache = createCache({ client, format, prefix: 'b:', ttl: 60, lock: false });
    const codec = darmok.createCodec({ format });
    const values = [FORMS.wide(), makeFoo(), 'caf\u00e9'];
    await cache.set('k0', values[0]);
    await cache.mset([['k1', values[1]]]);
    await cache.getOrSet('k2', null, () => values[2]);
    await cache.set('k3', values[1], { tags: ['user:42', 'caf\u00e9'] });
    values.push(values[1]);
    assert.strictEqual(client.sets.length, 4);
    client.sets.forEach(({ key, value, rest }, i) => {
      assert.strictEqual(key, `b:k${i}`);
      assert.ok(Buffer.isBuffer(value), `${format} ${key}: a Buffer, not a string`);
      assert.strictEqual(rest[0], 'PX');
      const end = value.indexOf(10);
      const header = value.subarray(0, end + 1).toString();
      assert.match(header, new RegExp(`^darmok/1 ${format} \\d+${i === 3 ? ' c=\\d+ t=user:42,caf\u00e9' : ''}\\n$`));
      // What darmok/redis stored before it encoded to bytes: header + the document (JSON text as a string).
      const before = Buffer.concat([Buffer.from(header), asBytes(codec.encodeEntity(values[i]))]);
      assert.ok(value.equals(before), `${format} ${key}: other bytes than before`);
    });
    tests.push(cache.close());
  }
  await Promise.all(tests);
});

test('darmok/redis set of a document over 128 KiB makes no JS string of it', async () => {
  const client = recordingClient();
  const cache = createCache({ client, prefix: 'b:', ttl: 60 });
  for (const make of [FORMS.ascii, FORMS.utf8, FORMS.wide]) {
    const value = make();
    const spied = stringsMadeDuring(() => cache.set('big', value));
    assert.strictEqual(await spied.result, true);
    assert.deepStrictEqual(spied.calls, []);
    assert.ok(client.sets.at(-1).value.length > 128 * 1024, String(client.sets.map((x) => x.value.length)));
  }
  await cache.close();
});

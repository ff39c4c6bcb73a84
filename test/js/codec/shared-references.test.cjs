'use strict';
/*
 * identity.test.cjs - shared references and cycles in graphs of every
 * size. The encoder finds an object met again by a scan while a walk has
 * met few objects, then through a Set whose references get their indexes
 * after the walk (js/codec/encode.cjs, FEW_OBJECTS = 32): these tests put the
 * shared objects on both sides of that line, and objects that take no
 * index (boxed primitives) between them, in every format.
 */
const { test } = require('node:test');
const { assert, haveWasm, sameGraph, xorshift, pbDoc, pbText, isolatedCodec } = require('../helpers.cjs');
const { formats } = require('../fixtures.cjs');
const { createCodec, createRegistry } = require('../../../js/index.cjs');
const { encodeTape } = require('../../../js/internal.cjs').encode;
const T = require('../../../js/internal.cjs').tape;
const { TapeReader } = require('../../../js/internal.cjs').tapeReader;

const skip = haveWasm ? false : 'build/darmok.wasm is not built (DARMOK_JS_ONLY=1)';

class Node {
  constructor(label) {
    this.label = label;
    this.next = null;
  }
}

function codec(format) {
  const c = isolatedCodec(format);
  c.serializable(Node);
  return c;
}

/*
 * A random graph of about n containers: each new slot holds a new object
 * (plain, array, Map, Set, Date, Node) or, one time in four, an object made
 * earlier (often an ancestor still open: a cycle). Returns the root.
 */
function randomGraph(seed, n) {
  const rnd = xorshift(seed);
  const made = [];
  let budget = n;
  const slot = (depth) => {
    if (made.length > 0 && rnd(4) === 0) return made[rnd(made.length)];
    if (budget <= 0 || depth > 12) return rnd(2) === 0 ? rnd(1000) : `s${rnd(50)}`;
    budget--;
    const kind = rnd(6);
    let o;
    if (kind === 0) {
      o = {};
      made.push(o);
      for (let i = rnd(4); i > 0; i--) o[`k${rnd(9)}`] = slot(depth + 1);
    } else if (kind === 1) {
      o = [];
      made.push(o);
      for (let i = rnd(4); i > 0; i--) o.push(slot(depth + 1));
    } else if (kind === 2) {
      o = new Map();
      made.push(o);
      for (let i = rnd(3); i > 0; i--) o.set(slot(depth + 1), slot(depth + 1));
    } else if (kind === 3) {
      o = new Set();
      made.push(o);
      for (let i = rnd(3); i > 0; i--) o.add(slot(depth + 1));
    } else if (kind === 4) {
      o = new Date(rnd(1e9));
      made.push(o);
    } else {
      o = new Node(`n${rnd(100)}`);
      made.push(o);
      o.next = slot(depth + 1);
    }
    return o;
  };
  const root = [];
  made.push(root);
  while (budget > 0) root.push(slot(1));
  return root;
}

for (const format of formats) {
  test(`${format}: random graphs of 1 to 600 objects keep every shared reference and cycle`, { skip }, () => {
    const c = codec(format);
    for (let seed = 1; seed <= 300; seed++) {
      const value = randomGraph(seed, 1 + (seed * 7) % 600);
      sameGraph(c.decodeEntity(c.encodeEntity(value)), value);
    }
  });

  test(`${format}: references to objects before and after the 32nd, in any order`, { skip }, () => {
    const c = codec(format);
    const objs = Array.from({ length: 80 }, (_, i) => new Node(`n${i}`));
    // first every object once, then each again from the last to the first,
    // then a few of them again: early (scanned) and late (resolved) indexes
    const value = [...objs, ...objs.slice().reverse(), objs[40], objs[3], objs[79], objs[40]];
    const back = c.decodeEntity(c.encodeEntity(value));
    sameGraph(back, value);
    for (let i = 0; i < 80; i++) assert.strictEqual(back[80 + i], back[79 - i]);
    // one object shared many times, the case with a single index to find
    const one = { shared: true };
    const many = [...Array.from({ length: 40 }, () => ({})), one, ...Array.from({ length: 50 }, () => one)];
    sameGraph(c.decodeEntity(c.encodeEntity(many)), many);
  });

  test(`${format}: a cycle back to an open container past the 32nd object`, { skip }, () => {
    const c = codec(format);
    const head = new Node('head');
    let at = head;
    for (let i = 0; i < 60; i++) {
      at.next = new Node(`n${i}`);
      at = at.next;
    }
    at.next = head; // 61 instances, the last pointing back to the root
    const mid = new Map([['loop', null]]);
    const value = [Array.from({ length: 40 }, () => []), mid];
    mid.set('loop', mid);
    mid.set('head', head);
    const back = c.decodeEntity(c.encodeEntity(value));
    sameGraph(back, value);
    assert.strictEqual(back[1].get('loop'), back[1]);
  });

  test(`${format}: boxed primitives past the 32nd object take no index`, { skip }, () => {
    const c = codec(format);
    const shared = { s: 1 };
    const boxed = new Number(7); // eslint-disable-line no-new-wrappers
    const fill = Array.from({ length: 40 }, () => ({}));
    // boxed values met twice, between an object and its references
    const value = [...fill, shared, boxed, new String('x'), boxed, shared, fill[35], shared]; // eslint-disable-line no-new-wrappers
    const back = c.decodeEntity(c.encodeEntity(value));
    const expect = [...fill, shared, 7, 'x', 7, shared, fill[35], shared];
    sameGraph(back, expect);
    assert.strictEqual(back[44], back[40]);
    assert.strictEqual(back[45], back[35]);
  });
}

test('tape: a reference gets the index of its object, scanned or resolved after the walk', () => {
  const objs = Array.from({ length: 50 }, () => ({}));
  const tape = encodeTape([...objs, objs[45], objs[2], objs[45], objs[33]]);
  const r = new TapeReader(tape, new DataView(tape.buffer, tape.byteOffset, tape.byteLength), 0, tape.length);
  const refs = [];
  assert.strictEqual(r.u8(), T.T_ARRAY);
  const n = r.u32();
  for (let i = 0; i < n; i++) {
    const op = r.u8();
    if (op === T.T_REF) refs.push(r.u32());
    else {
      assert.strictEqual(op, T.T_OBJECT);
      assert.strictEqual(r.u32(), 0);
    }
  }
  // index 0 is the outer array: objs[i] has index i + 1
  assert.deepStrictEqual(refs, [46, 3, 46, 34]);
});

/*
 * The index a reference holds must be counted by each reader the same way
 * the encoder counts it (wasm/dk_tape.h "Referenceable values"): every
 * kind with identity takes exactly one. After one value of a kind at
 * index 1, a reference to 1 is that very object and one to 2 (not met
 * yet) is refused, from a JSON string, JSON bytes and protobuf (whose
 * reference is made one further in the bytes: the reader checks it, not
 * the transcoding).
 */
const BYTE_KINDS = ['Buffer', 'ArrayBuffer', 'DataView', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array',
  'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array'];

/* protobuf bytes with the last of their `counts` (a reference's index 1)
   made `count`, through protoc's text format */
function withLastCount(bytes, count) {
  const lines = pbText(bytes).split('\n');
  const last = lines.map((l) => l.startsWith('counts: ')).lastIndexOf(true);
  assert.equal(lines[last], 'counts: 1', 'the reference is the last count');
  lines[last] = `counts: ${count}`;
  return pbDoc(lines.join('\n'));
}

test('every kind with identity takes one index: a reference to it is it, one past it is refused', { skip }, () => {
  const { transcode } = require('../../../js/index.cjs');
  const registry = createRegistry();
  class C {}
  registry.serializable(C, { key: 'C' });
  const json = createCodec({ registry });
  const pb = createCodec({ format: 'protobuf', registry });
  const kinds = ['{}', '[]', '{"$":"C"}', '{"$":"C","$v":1,"x":{"$":"C"}}', '{"$Map":[]}', '{"$Set":[]}',
    '{"$Date":null}', '{"$Date":"2020-01-01T00:00:00.000Z"}', '{"$RegExp":["a","g"]}',
    '{"$Error":{"name":"Error","message":"m"}}', '{"$NullProto":{}}',
    ...BYTE_KINDS.map((k) => `{"$${k}":""}`)];
  for (const k of kinds) {
    // C inside C: its inner instance is index 2, the outer one still 1
    const ok = `[${k},{"$ref":1}]`;
    const over = `[${k},{"$ref":2}]`;
    const pbOk = transcode(ok, { from: 'json', to: 'protobuf' });
    for (const [name, v] of [['JSON string', json.decodeEntity(ok)], ['JSON bytes', json.decodeEntity(Buffer.from(ok))], ['protobuf', pb.decodeEntity(pbOk)]]) {
      assert.ok(typeof v[0] === 'object' && v[0] !== null, `${name} ${k}`);
      assert.strictEqual(v[1], v[0], `${name} ${k}: the reference is the value before it`);
    }
    const nested = k.includes('"x"');
    for (const [name, decode] of [['JSON string', () => json.decodeEntity(over)], ['JSON bytes', () => json.decodeEntity(Buffer.from(over))],
      ['protobuf', () => pb.decodeEntity(withLastCount(pbOk, 2))]]) {
      if (nested) {
        const v = decode(); // index 2 is the inner instance
        assert.strictEqual(v[1], v[0].x, `${name} ${k}`);
      } else {
        assert.throws(decode, (e) => e.code === 'ERR_FORMAT', `${name} ${k}: a reference to a value not met yet`);
      }
    }
  }
});

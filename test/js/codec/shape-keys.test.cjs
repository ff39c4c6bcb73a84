'use strict';
/*
 * shape-keys.test.cjs - a protobuf decode reads member keys through key
 * references (wasm/dk_tape.h): each key read in full takes the next
 * number, a reference names one. TapeReader numbers them (keyRefAt,
 * keyRead) for TapeReader#key and for the decode shapes (shapes.cjs
 * makeDecodeShape), which match keys in full on their bytes. Random documents (fixed
 * seeds) of registered classes whose instances mostly keep their class's
 * field order but not always (fields reversed, dropped, added, swapped),
 * with keys that are long, non-ASCII, `$`-prefixed, empty, numeric, on
 * Object.prototype, named like a class, colliding in the short-string
 * cache; inside arrays, Maps, Sets, plain and null-prototype objects and
 * Errors, with shared references. Each is decoded from protobuf cold and
 * then warm (through the shapes the first decodes made) and must equal
 * the JSON decode of the same value (no key references there): structure,
 * identity, own keys in order, prototypes.
 */
const { test } = require('node:test');
const { assert, haveWasm, xorshift } = require('../helpers.cjs');
const { createCodec, createRegistry } = require('../../../js/index.cjs');

const skip = haveWasm ? false : 'build/darmok.wasm is not built (DARMOK_JS_ONLY=1)';

/* Two ASCII keys of one length that land in one slot of tape-reader.cjs's short-string cache. */
function cacheTwins() {
  const slot = (s) => {
    let h = s.length;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x9e3779b1);
    return (h >>> 22) & 1023;
  };
  const seen = new Map();
  for (let i = 0; ; i++) {
    const s = `k${i.toString(36)}`;
    const at = `${slot(s)}:${s.length}`;
    if (seen.has(at)) return [seen.get(at), s];
    seen.set(at, s);
  }
}

const KEYS = ['id', 'label', 'when', 'name', 'message', 'x', '', '$ref', '$', '$$a', 'Row', 'Node',
  'constructor', 'toString', '0', '10', 'é', 'ключ', '\u{1F600}', 'a\ud800b',
  'abcdefghijklmnopqrstuvwx', // 24 bytes: the longest a shape matches on its bytes
  'abcdefghijklmnopqrstuvwxy', 'k'.repeat(40), 'z'.repeat(300), 'stack', 'cause', ...cacheTwins()];

/* A value of 1-5 random parts; instances leave their class's field order in `odd` percent of cases per change. */
function generate(rnd, C, layouts, odd) {
  const pick = (list) => list[rnd(list.length)];
  const chance = (percent) => rnd(100) < percent;
  const shared = [];
  let budget = 250;
  const leaf = () => [
    () => rnd(1000), () => pick(KEYS), () => undefined, () => null, () => rnd(1000) / 7,
    () => new Date(rnd(1e9) * 1000), () => chance(50), () => `v${rnd(50)}`,
    () => (shared.length !== 0 ? pick(shared) : 1),
  ][rnd(9)]();
  function fields(o, keys, depth) {
    const ks = keys.slice();
    if (chance(odd)) ks.reverse();
    if (chance(odd) && ks.length > 1) ks.splice(rnd(ks.length), 1);
    if (chance(odd)) {
      const extra = pick(KEYS);
      if (!ks.includes(extra)) ks.push(extra);
    }
    if (chance(odd / 2) && ks.length > 1) {
      const j = rnd(ks.length - 1);
      [ks[j], ks[j + 1]] = [ks[j + 1], ks[j]];
    }
    for (const k of ks) {
      const v = chance(8) ? undefined : value(depth + 1);
      if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
      else o[k] = v;
    }
  }
  function instance(name, depth) {
    const o = new C[name]();
    shared.push(o);
    fields(o, layouts[name], depth);
    return o;
  }
  function value(depth) {
    if (--budget < 0 || depth > 6) return leaf();
    const r = rnd(100);
    if (r < 35) return leaf();
    if (r < 60) return instance(pick(['Row', 'Row', 'Node', 'Long']), depth);
    if (r < 70) {
      const a = Array.from({ length: rnd(12) }, () => value(depth + 1));
      shared.push(a);
      return a;
    }
    if (r < 75) {
      const m = new Map();
      for (let n = rnd(5); n > 0; n--) m.set(chance(60) ? pick(KEYS) : value(depth + 1), value(depth + 1));
      shared.push(m);
      return m;
    }
    if (r < 80) {
      const o = chance(50) ? {} : Object.create(null);
      shared.push(o);
      fields(o, pick(Object.values(layouts)), depth);
      return o;
    }
    if (r < 85) {
      const e = chance(50) ? new TypeError(`m${rnd(9)}`) : new Error('x');
      delete e.stack;
      if (chance(30)) e.name = pick(['Custom', 'name', 'Row', 42]);
      for (const k of pick(Object.values(layouts))) {
        if (!['stack', 'name', 'message', 'cause'].includes(k)) e[k] = value(depth + 1);
      }
      shared.push(e);
      return e;
    }
    // A run of one class's instances: its decode shape is made and used.
    const name = pick(['Row', 'Node']);
    const run = Array.from({ length: 8 + rnd(30) }, () => instance(name, depth + 3));
    if (chance(30)) return new Set(run);
    if (chance(30)) return new Map(run.map((x, i) => [i, x]));
    return run;
  }
  return Array.from({ length: 1 + rnd(5) }, () => value(0));
}

/* A value as text: structure, identity, own keys in order (enumerable or not), prototypes. */
function canonical(v, names) {
  const ids = new Map();
  const out = [];
  const walk = (x) => {
    if (x === null || typeof x !== 'object') {
      out.push(typeof x === 'string' ? JSON.stringify(x) : Object.is(x, -0) ? '-0' : String(x));
      return;
    }
    if (ids.has(x)) {
      out.push(`@${ids.get(x)}`);
      return;
    }
    ids.set(x, ids.size);
    const proto = Object.getPrototypeOf(x);
    out.push(`<${names.has(proto) ? names.get(proto) : '?'}>`);
    if (x instanceof Date) out.push(`D${x.getTime()}`);
    if (x instanceof Map) for (const [k, y] of x) { walk(k); out.push('=>'); walk(y); out.push(','); }
    if (x instanceof Set) for (const y of x) { walk(y); out.push(','); }
    if (x instanceof Error) out.push(`E ${String(x.name)} ${String(x.message)}`);
    out.push('{');
    for (const k of Reflect.ownKeys(x)) {
      if (x instanceof Error && k === 'stack') continue;
      const d = Object.getOwnPropertyDescriptor(x, k);
      out.push(`${JSON.stringify(String(k))}${d.enumerable ? ':' : '~:'}`);
      walk(d.value);
      out.push(',');
    }
    out.push('}');
  };
  walk(v);
  return out.join('');
}

function classes() {
  const make = (name) => ({ [name]: class {} })[name];
  const C = { Row: make('Row'), Node: make('Node'), Long: make('Long') };
  const names = new Map([[Object.prototype, 'Object'], [null, 'null'], [Array.prototype, 'Array'],
    [Map.prototype, 'Map'], [Set.prototype, 'Set'], [Date.prototype, 'Date'],
    [Error.prototype, 'Error'], [TypeError.prototype, 'TypeError']]);
  for (const [name, Class] of Object.entries(C)) names.set(Class.prototype, name);
  const registry = createRegistry();
  for (const [name, Class] of Object.entries(C)) registry.serializable(Class, { key: name === 'Long' ? 'L'.repeat(30) : name });
  return {
    C, names,
    pb: createCodec({ format: 'protobuf', registry }),
    json: createCodec({ format: 'json', registry }),
  };
}

test('protobuf decode, cold and through decode shapes, equals the JSON decode key for key', { skip }, () => {
  const rnd = xorshift(0x5eed12);
  const layout = () => {
    const keys = [];
    for (let n = 1 + rnd(6); keys.length < n;) {
      const k = KEYS[rnd(KEYS.length)];
      if (!keys.includes(k)) keys.push(k);
    }
    return keys;
  };
  // Codecs kept over all documents as well: shapes made by one document
  // meet the next one's other field orders (misses, drops, remakes).
  const kept = classes();
  for (let doc = 0; doc < 120; doc++) {
    const layouts = { Row: layout(), Node: layout(), Long: layout() };
    for (const side of [classes(), kept]) {
      const value = generate(rnd, side.C, layouts, [0, 0, 1, 10][doc % 4]);
      const bytes = side.pb.encodeEntity(value);
      const want = canonical(side.json.decodeEntity(side.json.encodeEntity(value)), side.names);
      for (let round = 0; round < 4; round++) {
        assert.equal(canonical(side.pb.decodeEntity(bytes), side.names), want, `document ${doc}, round ${round}`);
      }
    }
  }
});

'use strict';
/*
 * Hostile input, one named test per known attack (devalue style). The bytes
 * come from whoever can write the cache; whatever they are, decoding gives
 * a value or a DarmokError, and:
 *  - keys such as "__proto__", "constructor", "prototype" become own data
 *    properties of the object they belong to;
 *  - Object.prototype, the built-in prototypes and registered classes'
 *    prototypes are never touched;
 *  - only registered classes are instantiated, without calling their
 *    constructor, and no getter or setter runs;
 *  - migrate steps receive plain data.
 */
const { test } = require('node:test');
const { assert, haveWasm } = require('../helpers.cjs');
const { serializable, encodeEntity, decodeEntity, DarmokError } = require('../../../js/index.cjs');

const skip = haveWasm ? false : 'build/darmok.wasm is not built';
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

let constructed = 0;
let accessorCalls = 0;
class Victim {
  constructor() { constructed++; this.name = 'made by the constructor'; }
  get secret() { accessorCalls++; return 'getter'; }
  set secret(v) { accessorCalls++; } // eslint-disable-line accessor-pairs
  set admin(v) { accessorCalls++; } // eslint-disable-line accessor-pairs
  isAdmin() { return false; }
}
serializable(Victim, [], 'hostile.Victim');

const PROTOS = { Object: Object.prototype, Array: Array.prototype, Function: Function.prototype, Error: Error.prototype,
  Map: Map.prototype, Set: Set.prototype, Date: Date.prototype, RegExp: RegExp.prototype, Victim: Victim.prototype };

/* Every own property (descriptor) of the prototypes darmok could reach. */
function snapshot() {
  const out = {};
  for (const [name, proto] of Object.entries(PROTOS)) {
    out[name] = Reflect.ownKeys(proto).map((k) => {
      const d = Object.getOwnPropertyDescriptor(proto, k);
      return [String(k), d.value, d.get, d.set, d.writable, d.enumerable, d.configurable];
    });
    out[`${name} proto`] = Object.getPrototypeOf(proto);
  }
  return out;
}

/* Decode text; assert no prototype changed, no constructor or accessor ran. */
function decodeSafely(text, options) {
  const before = snapshot();
  constructed = 0;
  accessorCalls = 0;
  let out;
  let error;
  try {
    out = decodeEntity(text, options);
  } catch (e) {
    error = e;
  }
  assert.deepStrictEqual(snapshot(), before, 'a prototype changed');
  assert.strictEqual(constructed, 0, 'a constructor ran');
  assert.strictEqual(accessorCalls, 0, 'a getter or setter ran');
  assert.strictEqual(({}).polluted, undefined);
  assert.strictEqual([].polluted, undefined);
  if (error !== undefined) throw error;
  return out;
}

function rejects(text, code, options) {
  assert.throws(() => decodeSafely(text, options), (e) => {
    assert.ok(e instanceof DarmokError, String(e));
    assert.strictEqual(e.code, code, e.message);
    return true;
  });
}

test('attack: "__proto__" key in a plain object', { skip }, () => {
  const out = decodeSafely('{"a":1,"__proto__":{"polluted":true}}');
  assert.strictEqual(Object.getPrototypeOf(out), Object.prototype);
  assert.ok(hasOwn(out, '__proto__'));
  assert.deepStrictEqual(Object.keys(out), ['a', '__proto__']);
  assert.strictEqual(out.polluted, undefined);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(out, '__proto__').value, { polluted: true });
});

test('attack: "__proto__" as the first key (the tag slot)', { skip }, () => {
  const out = decodeSafely('{"__proto__":{"polluted":true}}');
  assert.strictEqual(Object.getPrototypeOf(out), Object.prototype);
  assert.deepStrictEqual(Object.keys(out), ['__proto__']);
});

test('attack: "__proto__" with an array or null value', { skip }, () => {
  const a = decodeSafely('{"__proto__":[1,2]}');
  assert.strictEqual(Object.getPrototypeOf(a), Object.prototype);
  assert.ok(Array.isArray(Object.getOwnPropertyDescriptor(a, '__proto__').value));
  const n = decodeSafely('{"__proto__":null}');
  assert.strictEqual(Object.getPrototypeOf(n), Object.prototype);
  assert.strictEqual(Object.getOwnPropertyDescriptor(n, '__proto__').value, null);
});

test('attack: duplicate "__proto__" keys', { skip }, () => {
  const out = decodeSafely('{"__proto__":{"a":1},"__proto__":{"polluted":true}}');
  assert.strictEqual(Object.getPrototypeOf(out), Object.prototype);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(out, '__proto__').value, { polluted: true });
  assert.deepStrictEqual(Object.keys(out), ['__proto__']);
});

test('attack: "constructor" / "prototype" chain', { skip }, () => {
  const out = decodeSafely('{"constructor":{"prototype":{"polluted":true}},"prototype":{"polluted":true}}');
  assert.strictEqual(Object.getPrototypeOf(out), Object.prototype);
  assert.ok(hasOwn(out, 'constructor') && hasOwn(out, 'prototype'));
  assert.strictEqual(Object.prototype.constructor, Object);
});

test('attack: "__proto__" deep inside arrays, Maps and Sets', { skip }, () => {
  const out = decodeSafely('[{"$Map":[["__proto__",{"__proto__":{"polluted":1}}]]},{"$Set":[{"__proto__":{"polluted":1}}]}]');
  assert.strictEqual(out[0].get('__proto__').polluted, undefined);
  assert.ok(hasOwn(out[0].get('__proto__'), '__proto__'));
  assert.ok(hasOwn([...out[1]][0], '__proto__'));
});

test('attack: "__proto__", "constructor" and accessor names as fields of a registered class', { skip }, () => {
  const out = decodeSafely('{"$":"hostile.Victim","__proto__":{"isAdmin":"yes"},"constructor":1,"secret":"s","admin":true,"isAdmin":2}');
  assert.strictEqual(Object.getPrototypeOf(out), Victim.prototype);
  assert.ok(out instanceof Victim);
  for (const k of ['__proto__', 'constructor', 'secret', 'admin', 'isAdmin']) assert.ok(hasOwn(out, k), k);
  assert.strictEqual(Object.getOwnPropertyDescriptor(out, 'secret').value, 's');
  assert.strictEqual(Object.getOwnPropertyDescriptor(out, 'admin').value, true);
  assert.strictEqual(Victim.prototype.isAdmin.call(out), false);
  assert.strictEqual(hasOwn(out, 'name'), false, 'the constructor did not run');
});

test('attack: "__proto__" in $NullProto fields', { skip }, () => {
  const out = decodeSafely('{"$NullProto":{"__proto__":{"polluted":1},"$$":2}}');
  assert.strictEqual(Object.getPrototypeOf(out), null);
  assert.deepStrictEqual(Object.keys(out), ['__proto__', '$']);
});

test('attack: "__proto__" and "constructor" as $Error fields', { skip }, () => {
  const out = decodeSafely('{"$Error":{"name":"TypeError","message":"m","__proto__":{"polluted":1},"constructor":"x"}}');
  assert.ok(out instanceof TypeError);
  assert.strictEqual(Object.getPrototypeOf(out), TypeError.prototype);
  assert.ok(hasOwn(out, '__proto__') && hasOwn(out, 'constructor'));
  assert.strictEqual(TypeError.prototype.constructor, TypeError);
});

test('attack: $Error names that are not error classes ("__proto__", "Function", "constructor")', { skip }, () => {
  for (const name of ['__proto__', 'Function', 'constructor', 'hasOwnProperty', 'Object', 'eval']) {
    const out = decodeSafely(`{"$Error":{"name":${JSON.stringify(name)},"message":"m"}}`);
    assert.strictEqual(Object.getPrototypeOf(out), Error.prototype, name);
    assert.strictEqual(out.name, name);
    assert.ok(hasOwn(out, 'name'));
  }
});

test('attack: class keys that name inherited properties or globals', { skip }, () => {
  for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'Object', 'Function',
    'Array', 'Date', 'Map', 'Error', 'Promise', 'process', 'globalThis', '']) {
    rejects(`{"$":${JSON.stringify(key)},"a":1}`, 'ERR_UNKNOWN_CLASS');
    const plain = decodeSafely(`{"$":${JSON.stringify(key)},"a":1}`, { unknownClass: 'plain' });
    assert.strictEqual(Object.getPrototypeOf(plain), Object.prototype, key);
    assert.deepStrictEqual(plain, { a: 1 });
  }
});

test('attack: a class key that differs from a registered one only in case or spacing', { skip }, () => {
  for (const key of ['hostile.victim', 'hostile.Victim ', ' hostile.Victim', 'hostile.Victim\u0000', 'Victim']) {
    rejects(`{"$":${JSON.stringify(key)}}`, 'ERR_UNKNOWN_CLASS');
  }
});

test('attack: keys that shadow Object.prototype methods stay data and re-encode', { skip }, () => {
  const text = '{"toString":1,"valueOf":2,"toJSON":3,"hasOwnProperty":4,"isPrototypeOf":5,"__defineSetter__":6,"__lookupGetter__":7}';
  const out = decodeSafely(text);
  assert.strictEqual(Object.getPrototypeOf(out), Object.prototype);
  assert.strictEqual(out.toJSON, 3);
  assert.strictEqual(encodeEntity(out), text);
  assert.strictEqual(JSON.stringify(out), text);
});

test('attack: a setter planted on Object.prototype is not called by decoding', { skip }, () => {
  let calls = 0;
  Object.defineProperty(Object.prototype, 'hostileTrap', { // eslint-disable-line no-extend-native
    set() { calls++; }, get() { return 'trap'; }, configurable: true
  });
  try {
    const out = decodeEntity('{"hostileTrap":1,"x":{"hostileTrap":2},"n":{"$NullProto":{"hostileTrap":3}}}');
    assert.strictEqual(calls, 0);
    assert.strictEqual(Object.getOwnPropertyDescriptor(out, 'hostileTrap').value, 1);
    assert.strictEqual(Object.getOwnPropertyDescriptor(out.x, 'hostileTrap').value, 2);
    assert.strictEqual(out.n.hostileTrap, 3);
  } finally {
    delete Object.prototype.hostileTrap;
  }
});

test('attack: constructors of registered classes are never called', { skip }, () => {
  const out = decodeSafely('[{"$":"hostile.Victim"},{"$ref":1},{"$":"hostile.Victim","name":"from bytes"}]');
  assert.ok(out[0] instanceof Victim && out[1] === out[0]);
  assert.deepStrictEqual(Object.keys(out[0]), []);
  assert.strictEqual(out[2].name, 'from bytes');
});

test('attack: $ref forward, to itself before it exists, out of range, huge', { skip }, () => {
  for (const text of ['[{"$ref":1}]', '{"$ref":0}', '[{"$ref":4294967295}]', '[{"$ref":99999999999}]', '[{"$ref":-1}]',
    '[{"$ref":1.5}]', '[{"$ref":"0"}]', '{"$Map":[[{"$ref":1},1]]}']) {
    rejects(text, 'ERR_FORMAT');
  }
});

test('attack: billion laughs through $ref stays linear and shares identity', { skip }, () => {
  // 60 levels, each an array of two references to the level below: 2^60
  // leaves if expanded, 60 arrays decoded.
  const levels = ['[1]'];
  for (let k = 1; k < 60; k++) levels.push(`[{"$ref":${k}},{"$ref":${k}}]`);
  const text = `[${levels.join(',')}]`;
  const t = process.hrtime.bigint();
  const out = decodeSafely(text);
  assert.ok(Number(process.hrtime.bigint() - t) < 1e9);
  assert.strictEqual(out[59][0], out[58]);
  assert.strictEqual(out[59][1], out[59][0]);
  assert.strictEqual(encodeEntity(out), text);
});

test('attack: $hole with a huge count does not allocate', { skip }, () => {
  rejects('[{"$hole":4294967295}]', 'ERR_TOO_LARGE');
  rejects('[{"$hole":0}]', 'ERR_FORMAT');
  rejects('{"$hole":1}', 'ERR_FORMAT');
  const out = decodeSafely('[{"$hole":1000000},1]');
  assert.strictEqual(out.length, 1000001);
  assert.strictEqual(Object.keys(out).length, 1);
});

test('attack: catastrophic RegExp is built, never run; invalid ones are ERR_FORMAT', { skip }, () => {
  const re = decodeSafely('{"$RegExp":["^(a+)+$",""]}');
  assert.strictEqual(re.source, '^(a+)+$');
  assert.strictEqual(re.lastIndex, 0);
  for (const text of ['{"$RegExp":["(",""]}', '{"$RegExp":["a","gg"]}', '{"$RegExp":["a","x"]}']) rejects(text, 'ERR_FORMAT');
  // A long bad source does not end up whole in the message.
  assert.throws(() => decodeEntity(`{"$RegExp":["${'('.repeat(100000)}",""]}`, { maxRegExpLength: 100000 }), (e) => e.code === 'ERR_FORMAT' && e.message.length < 300);
});

test('attack: malformed tagged scalars are ERR_FORMAT, never a JS exception', { skip }, () => {
  for (const text of ['{"$BigInt":"1e5"}', '{"$BigInt":"0x10"}', '{"$BigInt":" 1"}', '{"$BigInt":"-0"}', '{"$BigInt":""}',
    '{"$Date":"2020-13-01T00:00:00.000Z"}', '{"$Date":"+300000-01-01T00:00:00.000Z"}', '{"$Date":1}',
    '{"$Number":"1"}', '{"$Number":"infinity"}', '{"$Float64Array":"AAAA"}', '{"$Uint8Array":"A==="}',
    '{"$Uint8Array":"AB=="}', '{"$undefined":null}', '{"$Map":[[1]]}', '{"$Map":[[1,2,3]]}', '{"$Map":[1]}',
    '{"$Set":{}}', '{"$Error":{"message":"m","name":"E"}}', '{"$Error":{"name":"E"}}', '{"$":"hostile.Victim","$v":0}',
    '{"$":"hostile.Victim","$x":1}', '{"$Map":[],"$Set":[]}']) {
    rejects(text, 'ERR_FORMAT');
  }
});

test('attack: unknown class key longer than a message should be', { skip }, () => {
  const key = 'k'.repeat(1 << 20);
  assert.throws(() => decodeEntity(`{"$":"${key}"}`), (e) => {
    assert.strictEqual(e.code, 'ERR_UNKNOWN_CLASS');
    assert.ok(e.message.length < 300, `message of ${e.message.length} characters`);
    return true;
  });
  assert.throws(() => decodeEntity(`{"${key}":[1,}`), (e) => {
    assert.strictEqual(e.code, 'ERR_SYNTAX');
    assert.ok(e.message.length < 400, `message of ${e.message.length} characters`);
    assert.ok(e.path.length < 100);
    return true;
  });
});

test('attack: migrate steps receive plain data, never an instance', { skip }, (t) => {
  let seen;
  class Versioned { constructor() { constructed++; } }
  try {
    serializable(Versioned, { key: 'hostile.Versioned', version: 2, migrate: { 1: (data) => { seen = data; return data; } } });
  } catch (e) {
    if (e instanceof DarmokError) return t.skip(`migrate is not available here (${e.code})`);
    throw e;
  }
  const out = decodeSafely('{"$":"hostile.Versioned","__proto__":{"polluted":1},"constructor":2,"x":[1]}');
  assert.ok(out instanceof Versioned);
  assert.strictEqual(Object.getPrototypeOf(seen), Object.prototype, 'plain data');
  assert.ok(!(seen instanceof Versioned));
  assert.ok(hasOwn(seen, '__proto__') && hasOwn(seen, 'constructor'));
  assert.strictEqual(seen.polluted, undefined);
  assert.strictEqual(Object.getOwnPropertyDescriptor(out, '__proto__').value.polluted, 1);
});

test('attack: random bytes give a value or a DarmokError, nothing else', { skip }, () => {
  let seed = 12345;
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const pieces = ['{', '}', '[', ']', ',', ':', '"', '"$":"hostile.Victim"', '"$Map":', '"$Set":', '"$ref":', '0',
    '1', '-', 'e', '"__proto__"', 'null', 'true', '\\', '\\u', 'd800', ' ', '"$hole":', '"$Error":', '"name"',
    '"message"', '"$NullProto":', '"$BigInt":', '"$Date":', '"$Uint8Array":', '"AA=="', '\u00e9', '\ud83d\ude00'];
  let values = 0;
  for (let i = 0; i < 3000; i++) {
    let text = '';
    for (let n = rnd(20); n >= 0; n--) text += pieces[rnd(pieces.length)];
    try {
      decodeSafely(text, { unknownClass: rnd(2) ? 'plain' : 'throw' });
      values++;
    } catch (e) {
      assert.ok(e instanceof DarmokError, `${JSON.stringify(text)}: ${e && e.stack}`);
    }
  }
  assert.ok(values > 0);
});

test('tanagra reader: a sparse "f_uint8array" cannot ask for gigabytes', () => {
  const { decodeEntity } = require('../../../js/index.cjs');
  for (const idx of ['4294967295', '9007199254740990', '1e3', '-1', '01']) {
    const out = decodeEntity(`{"_serializationKey":"Nope","f_uint8array":{"${idx}":1}}`, { unknownClass: 'plain' });
    assert.ok(!(out.f instanceof Uint8Array), idx); // not converted: kept as the plain field
    assert.deepStrictEqual(out.f_uint8array, { [idx]: 1 });
  }
  const dense = decodeEntity('{"_serializationKey":"Nope","f_uint8array":{"0":7,"1":8}}', { unknownClass: 'plain' });
  assert.deepStrictEqual([...dense.f], [7, 8]);
});

test('encode: a revoked Proxy is ERR_UNSUPPORTED_TYPE with its path, anywhere in the value', { skip }, () => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  for (const [value, path] of [[proxy, '$'], [[1, proxy], '$[1]'], [{ a: { b: proxy } }, '$.a.b'], [new Map([[1, proxy]]), '$.$Map[0][1]'], [new Set([proxy]), '$.$Set[0]']]) {
    for (const format of ['json', 'protobuf']) {
      assert.throws(() => encodeEntity(value, { format }), (e) => e instanceof DarmokError && e.code === 'ERR_UNSUPPORTED_TYPE' && e.path === path, `${path} ${format}`);
    }
  }
});

/* The same promises through the JS walk alone when the core is not built (DARMOK_JS_ONLY). */
const { encodeTape } = require('../../../js/internal.cjs').encode;
const { decodeTape } = require('../../../js/internal.cjs').decode;
const wasmOnly = skip;
const roundTrip = (v) => haveWasm ? decodeEntity(encodeEntity(v)) : decodeTape(encodeTape(v));

test('__proto__ and constructor keys become own properties; Object.prototype untouched', () => {
  const evil = JSON.parse('{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"isAdmin":true}}}');
  const out = roundTrip(evil);
  assert.strictEqual(Object.getPrototypeOf(out), Object.prototype);
  assert.ok(Object.prototype.hasOwnProperty.call(out, '__proto__'));
  assert.deepStrictEqual(Object.keys(out), ['__proto__', 'constructor']);
  assert.strictEqual(out.isAdmin, undefined);
  assert.strictEqual(({}).isAdmin, undefined);
  assert.strictEqual(Object.prototype.isAdmin, undefined);
});

test('__proto__ in JSON text stays data', { skip: wasmOnly }, () => {
  const out = decodeEntity('{"a":{"__proto__":[1]},"$$__proto__":2}');
  assert.ok(Array.isArray(out.a.__proto__)); // eslint-disable-line no-proto
  assert.strictEqual(Object.getPrototypeOf(out.a), Object.prototype);
  const inst = decodeEntity('{"$NullProto":{"__proto__":{"x":1}}}');
  assert.strictEqual(Object.getPrototypeOf(inst), null);
  assert.deepStrictEqual(Object.keys(inst), ['__proto__']);
});

test('class prototype setters are never called on decode', () => {
  let calls = 0;
  class Guarded {
    constructor() { this.secret = 1; }
    set secret(v) { calls++; } // eslint-disable-line accessor-pairs
    get secret() { return 'from getter'; }
  }
  serializable(Guarded, [], 'safety.Guarded');
  const obj = Object.create(Guarded.prototype);
  Object.defineProperty(obj, 'secret', { value: 7, enumerable: true, writable: true, configurable: true });
  calls = 0;
  const out = roundTrip(obj);
  assert.strictEqual(calls, 0);
  assert.ok(out instanceof Guarded);
  assert.strictEqual(Object.getOwnPropertyDescriptor(out, 'secret').value, 7);
});

test('constructors are not called on decode', () => {
  let made = 0;
  class Counted { constructor() { made++; this.v = 1; } }
  serializable(Counted, [], 'safety.Counted');
  const c = new Counted();
  made = 0;
  roundTrip([c, c]);
  assert.strictEqual(made, 0);
});

'use strict';
/*
 * fixtures.cjs - ONE table driving every direction of every format:
 *   walker -> tape -> rebuilder (JS only), encodeEntity -> exact text,
 *   decodeEntity(text) -> value, encode(decode(text)) === text.
 *
 * A fixture: { name, make() -> a fresh value, json?: exact darmok JSON
 * (docs/FORMAT.md), expect?() -> the value a round trip gives when it is not
 * the input itself (skipped functions...), stringify?: true when the JSON must
 * equal JSON.stringify(value), check?(decoded, input): extra assertions }.
 *
 * `invalid`: { name, text, code, offset?, options? } - bad input and the
 * exact error. Offsets marked `offset: undefined` are not pinned yet.
 */

const { serializable } = require('../../js/index.cjs');

/* The formats every table runs through. */
const formats = ['json', 'protobuf'];

class Foo {
  constructor(name, count) {
    this.name = name;
    this.count = count;
  }
}
class Bar {
  constructor(when) {
    this.when = when;
  }
}
class Baz {
  constructor(n) {
    this.n = n;
  }
}
class Point {
  constructor(x, y) {
    this.x = x;
    this.y = y;
  }

  get length() {
    return Math.hypot(this.x, this.y);
  }
}
serializable(Foo, [Bar, Baz]);
serializable(Point, { key: 'geo.Point' });

function withStack(err, stack) {
  err.stack = stack;
  return err;
}

const fixtures = [
  // primitives
  { name: 'undefined', make: () => undefined, json: '{"$undefined":0}' },
  { name: 'null', make: () => null, json: 'null', stringify: true },
  { name: 'true', make: () => true, json: 'true', stringify: true },
  { name: 'false', make: () => false, json: 'false', stringify: true },
  { name: 'zero', make: () => 0, json: '0', stringify: true },
  { name: 'negative zero', make: () => -0, json: '{"$Number":"-0"}' },
  { name: 'int32 max', make: () => 2147483647, json: '2147483647', stringify: true },
  { name: 'int32 min', make: () => -2147483648, json: '-2147483648', stringify: true },
  { name: 'past int32', make: () => 2147483648, json: '2147483648', stringify: true },
  { name: 'fraction', make: () => 1.5, json: '1.5', stringify: true },
  { name: 'shortest digits', make: () => 0.1 + 0.2, json: '0.30000000000000004', stringify: true },
  { name: 'exponent large', make: () => 1e21, json: '1e+21', stringify: true },
  { name: 'below exponent', make: () => 1e20, json: '100000000000000000000', stringify: true },
  { name: 'exponent small', make: () => 5e-7, json: '5e-7', stringify: true },
  { name: 'above small exponent', make: () => 0.000001, json: '0.000001', stringify: true },
  { name: 'min value', make: () => Number.MIN_VALUE, json: '5e-324', stringify: true },
  { name: 'max value', make: () => Number.MAX_VALUE, json: '1.7976931348623157e+308', stringify: true },
  { name: 'max safe integer', make: () => Number.MAX_SAFE_INTEGER, json: '9007199254740991', stringify: true },
  { name: 'NaN', make: () => NaN, json: '{"$Number":"NaN"}' },
  { name: 'Infinity', make: () => Infinity, json: '{"$Number":"Infinity"}' },
  { name: '-Infinity', make: () => -Infinity, json: '{"$Number":"-Infinity"}' },
  { name: 'bigint zero', make: () => 0n, json: '{"$BigInt":"0"}' },
  { name: 'bigint negative', make: () => -12n, json: '{"$BigInt":"-12"}' },
  { name: 'bigint huge', make: () => 2n ** 100n, json: '{"$BigInt":"1267650600228229401496703205376"}' },

  // strings
  { name: 'empty string', make: () => '', json: '""', stringify: true },
  { name: 'ascii', make: () => 'hello', json: '"hello"', stringify: true },
  { name: 'escapes', make: () => '"\\\b\f\n\r\t\u0000\u0001\u001f', stringify: true,
    json: '"\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u0001\\u001f"' },
  { name: 'raw unicode', make: () => 'héllo € 😀 \u2028\u2029\u007f', stringify: true,
    json: '"héllo € 😀 \u2028\u2029\u007f"' },
  { name: 'leading BOM kept', make: () => '\ufeffx', json: '"\ufeffx"', stringify: true },
  { name: 'long ascii', make: () => 'abcdefghij'.repeat(100), stringify: true },
  { name: 'long unicode', make: () => 'ä€😀'.repeat(100), stringify: true },
  { name: 'lone high surrogate', make: () => '\ud800', json: '"\\ud800"', stringify: true },
  { name: 'lone low surrogate', make: () => 'a\udc00b', json: '"a\\udc00b"', stringify: true },
  { name: 'reversed pair', make: () => '\udc00\ud800', json: '"\\udc00\\ud800"', stringify: true },
  { name: 'long with lone surrogate', make: () => 'é'.repeat(60) + '\udbff', stringify: true },

  // arrays
  { name: 'empty array', make: () => [], json: '[]', stringify: true },
  { name: 'array of scalars', make: () => [1, 'a', null, true, 2.5], json: '[1,"a",null,true,2.5]', stringify: true },
  { name: 'holes', make: () => [1, , 3], json: '[1,{"$hole":1},3]', // eslint-disable-line no-sparse-arrays
    check: (d, assert) => assert.ok(!(1 in d)) },
  { name: 'hole run', make: () => new Array(3), json: '[{"$hole":3}]',
    check: (d, assert) => { assert.strictEqual(d.length, 3); assert.ok(!(0 in d) && !(2 in d)); } },
  { name: 'trailing hole', make: () => [1, , ], json: '[1,{"$hole":1}]' }, // eslint-disable-line no-sparse-arrays
  { name: 'undefined element', make: () => [undefined], json: '[{"$undefined":0}]',
    check: (d, assert) => assert.ok(0 in d) },
  { name: 'function and symbol elements', make: () => [() => 1, Symbol('s'), 2],
    json: '[null,null,2]', expect: () => [null, null, 2] },

  // plain objects
  { name: 'empty object', make: () => ({}), json: '{}', stringify: true },
  { name: 'nested plain data', make: () => ({ a: 1, b: { c: [2, { d: 'x' }] }, e: [] }),
    json: '{"a":1,"b":{"c":[2,{"d":"x"}]},"e":[]}', stringify: true },
  { name: 'integer keys first', make: () => ({ b: 1, 2: 2, a: 3, 1: 4 }), json: '{"1":4,"2":2,"b":1,"a":3}', stringify: true },
  { name: 'first key with $', make: () => ({ $id: 1, b: 2 }), json: '{"$$id":1,"b":2}' },
  { name: 'later key with $', make: () => ({ a: 1, $b: 2 }), json: '{"a":1,"$b":2}', stringify: true },
  { name: 'key $', make: () => ({ $: 'Foo' }), json: '{"$$":"Foo"}' },
  { name: 'key $$x', make: () => ({ $$x: 1 }), json: '{"$$$x":1}' },
  { name: 'tag-like first key', make: () => ({ $Map: [] }), json: '{"$$Map":[]}' },
  { name: 'undefined property kept', make: () => ({ a: undefined }), json: '{"a":{"$undefined":0}}',
    check: (d, assert) => assert.ok(Object.prototype.hasOwnProperty.call(d, 'a')) },
  { name: 'functions and symbols skipped', make: () => ({ a: 1, f() {}, s: Symbol('x'), [Symbol('k')]: 1 }),
    json: '{"a":1}', expect: () => ({ a: 1 }) },
  { name: 'falsy fields kept', make: () => ({ z: 0, e: '', f: false, n: null }),
    json: '{"z":0,"e":"","f":false,"n":null}', stringify: true },
  { name: '__proto__ own key', make: () => JSON.parse('{"__proto__":{"polluted":1},"a":2}'),
    json: '{"__proto__":{"polluted":1},"a":2}', stringify: true,
    check: (d, assert) => {
      assert.strictEqual(Object.getPrototypeOf(d), Object.prototype);
      assert.ok(Object.prototype.hasOwnProperty.call(d, '__proto__'));
      assert.strictEqual(({}).polluted, undefined);
    } },
  { name: 'constructor own key', make: () => ({ constructor: 'x', toString: 1, hasOwnProperty: 2 }),
    json: '{"constructor":"x","toString":1,"hasOwnProperty":2}', stringify: true },
  { name: 'null prototype', make: () => Object.assign(Object.create(null), { a: 1, $x: 2 }),
    json: '{"$NullProto":{"a":1,"$$x":2}}' },
  { name: 'null prototype __proto__ key', make: () => { const o = Object.create(null); o.__proto__ = 1; return o; }, // eslint-disable-line no-proto
    json: '{"$NullProto":{"__proto__":1}}' },

  // Map and Set
  { name: 'empty Map', make: () => new Map(), json: '{"$Map":[]}' },
  { name: 'Map', make: () => new Map([['a', 1], [{ k: 1 }, [2]], [3n, undefined]]),
    json: '{"$Map":[["a",1],[{"k":1},[2]],[{"$BigInt":"3"},{"$undefined":0}]]}' },
  { name: 'Map keyed by shared object', make: () => { const k = { k: 1 }; return [k, new Map([[k, k]])]; },
    json: '[{"k":1},{"$Map":[[{"$ref":1},{"$ref":1}]]}]',
    check: (d, assert) => { const [k, m] = d; assert.strictEqual(m.get(k), k); } },
  { name: 'Set', make: () => new Set([1, 'a', { b: 2 }]), json: '{"$Set":[1,"a",{"b":2}]}' },

  // Date, RegExp
  { name: 'Date', make: () => new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6)), json: '{"$Date":"2020-01-02T03:04:05.006Z"}' },
  { name: 'invalid Date', make: () => new Date(NaN), json: '{"$Date":null}' },
  { name: 'Date past 9999', make: () => new Date(Date.UTC(10000, 0, 1)), json: '{"$Date":"+010000-01-01T00:00:00.000Z"}' },
  { name: 'Date before year 0', make: () => new Date(Date.UTC(-1, 0, 1)), json: '{"$Date":"-000001-01-01T00:00:00.000Z"}' },
  { name: 'RegExp', make: () => /a+b/gi, json: '{"$RegExp":["a+b","gi"]}' },
  { name: 'RegExp with slash and unicode', make: () => /\/é\d/su, json: '{"$RegExp":["\\\\/é\\\\d","su"]}' },
  { name: 'RegExp lastIndex dropped', make: () => { const r = /x/g; r.lastIndex = 3; return r; },
    expect: () => /x/g, json: '{"$RegExp":["x","g"]}' },

  // binary
  { name: 'Uint8Array', make: () => new Uint8Array([0, 1, 2]), json: '{"$Uint8Array":"AAEC"}' },
  { name: 'empty Uint8Array', make: () => new Uint8Array(0), json: '{"$Uint8Array":""}' },
  { name: 'Buffer', make: () => Buffer.from('hi'), json: '{"$Buffer":"aGk="}' },
  { name: 'ArrayBuffer', make: () => new Uint8Array([255, 254, 253]).buffer, json: '{"$ArrayBuffer":"//79"}' },
  { name: 'DataView of a slice', make: () => new DataView(new Uint8Array([9, 1, 2, 9]).buffer, 1, 2),
    json: '{"$DataView":"AQI="}', expect: () => new DataView(new Uint8Array([1, 2]).buffer) },
  { name: 'Int8Array', make: () => new Int8Array([-1, 1]), json: '{"$Int8Array":"/wE="}' },
  { name: 'Uint8ClampedArray', make: () => new Uint8ClampedArray([255]), json: '{"$Uint8ClampedArray":"/w=="}' },
  { name: 'Int16Array', make: () => new Int16Array([1, -1]), json: '{"$Int16Array":"AQD//w=="}' },
  { name: 'Uint16Array', make: () => new Uint16Array([258]), json: '{"$Uint16Array":"AgE="}' },
  { name: 'Int32Array', make: () => new Int32Array([-2]), json: '{"$Int32Array":"/v///w=="}' },
  { name: 'Uint32Array', make: () => new Uint32Array([1]), json: '{"$Uint32Array":"AQAAAA=="}' },
  { name: 'Float32Array', make: () => new Float32Array([1]), json: '{"$Float32Array":"AACAPw=="}' },
  { name: 'Float64Array', make: () => new Float64Array([1.5, NaN]), json: '{"$Float64Array":"AAAAAAAA+D8AAAAAAAD4fw=="}' },
  { name: 'BigInt64Array', make: () => new BigInt64Array([-1n]), json: '{"$BigInt64Array":"//////////8="}' },
  { name: 'BigUint64Array', make: () => new BigUint64Array([1n]), json: '{"$BigUint64Array":"AQAAAAAAAAA="}' },
  { name: 'typed array view of a larger buffer', make: () => new Uint16Array(new Uint16Array([7, 8, 9]).buffer, 2, 1),
    json: '{"$Uint16Array":"CAA="}', expect: () => new Uint16Array([8]) },

  // errors
  { name: 'TypeError', make: () => withStack(new TypeError('m'), 'TypeError: m\n    at x'),
    json: '{"$Error":{"name":"TypeError","message":"m","stack":"TypeError: m\\n    at x"}}' },
  { name: 'Error without stack', make: () => { const e = new RangeError('r'); delete e.stack; return e; },
    json: '{"$Error":{"name":"RangeError","message":"r"}}' },
  { name: 'Error with cause and extras', make: () => {
    const e = withStack(new Error('outer', { cause: withStack(new Error('inner'), 's2') }), 's1');
    e.code = 'E_X';
    e.$meta = 1;
    return e;
  }, json: '{"$Error":{"name":"Error","message":"outer","stack":"s1","cause":{"$Error":{"name":"Error","message":"inner","stack":"s2"}},"code":"E_X","$$meta":1}}' },
  { name: 'AggregateError', make: () => withStack(new AggregateError([withStack(new Error('a'), 'sa')], 'agg'), 'sg'),
    json: '{"$Error":{"name":"AggregateError","message":"agg","stack":"sg","errors":[{"$Error":{"name":"Error","message":"a","stack":"sa"}}]}}' },
  { name: 'custom error name', make: () => { const e = withStack(new Error('c'), 's'); e.name = 'MyError'; return e; },
    json: '{"$Error":{"name":"MyError","message":"c","stack":"s"}}',
    expect: () => { const e = withStack(new Error('c'), 's'); Object.defineProperty(e, 'name', { value: 'MyError', writable: true, configurable: true }); return e; } },
  { name: 'error that causes itself', make: () => { const e = withStack(new Error('loop'), 's'); e.cause = e; return e; },
    json: '{"$Error":{"name":"Error","message":"loop","stack":"s","cause":{"$ref":0}}}',
    expect: null, check: (d, assert) => assert.strictEqual(d.cause, d) },

  // registered classes
  { name: 'instance', make: () => new Foo('x', 0), json: '{"$":"Foo","name":"x","count":0}',
    check: (d, assert) => assert.ok(d instanceof Foo) },
  { name: 'instance with $ fields', make: () => Object.assign(new Baz(1), { $: 2, $x: 3 }), json: '{"$":"Baz","n":1,"$$":2,"$$x":3}' },
  { name: 'instance with custom key', make: () => new Point(3, 4), json: '{"$":"geo.Point","x":3,"y":4}',
    check: (d, assert) => assert.strictEqual(d.length, 5) },
  { name: 'instance made by Object.create', make: () => Object.assign(Object.create(Bar.prototype), { when: null }),
    json: '{"$":"Bar","when":null}' },

  // references
  { name: 'shared object', make: () => { const a = { x: 1 }; return [a, a]; }, json: '[{"x":1},{"$ref":1}]',
    check: (d, assert) => assert.strictEqual(d[0], d[1]) },
  { name: 'cycle', make: () => { const o = { a: 1 }; o.self = o; return o; }, json: '{"a":1,"self":{"$ref":0}}',
    check: (d, assert) => assert.strictEqual(d.self, d) },
  { name: 'array containing itself', make: () => { const a = []; a.push(a, 1); return a; }, json: '[{"$ref":0},1]',
    check: (d, assert) => assert.strictEqual(d[0], d) },
  { name: 'shared Date, Set and bytes', make: () => {
    const d = new Date(0);
    const s = new Set([d]);
    const b = new Uint8Array([1]);
    return { d, s, b, again: [d, s, b] };
  }, json: '{"d":{"$Date":"1970-01-01T00:00:00.000Z"},"s":{"$Set":[{"$ref":1}]},"b":{"$Uint8Array":"AQ=="},"again":[{"$ref":1},{"$ref":2},{"$ref":3}]}',
    check: (d, assert) => { assert.strictEqual(d.again[0], d.d); assert.ok(d.s.has(d.d)); assert.strictEqual(d.again[2], d.b); } },
  { name: 'FORMAT.md example', make: () => {
    const bar = new Bar(new Date(Date.UTC(2020, 0, 1)));
    const foo = new Foo('foo', undefined);
    delete foo.count;
    foo.bars = [bar, bar];
    foo.lookup = new Map([['a', new Baz(0)]]);
    return foo;
  }, json: '{"$":"Foo","name":"foo","bars":[{"$":"Bar","when":{"$Date":"2020-01-01T00:00:00.000Z"}},{"$ref":2}],"lookup":{"$Map":[["a",{"$":"Baz","n":0}]]}}' },
  { name: 'Map value refers to the Map', make: () => { const m = new Map(); m.set('me', m); return m; },
    json: '{"$Map":[["me",{"$ref":0}]]}', check: (d, assert) => assert.strictEqual(d.get('me'), d) }
];

/*
 * Bad input and the exact error. Offsets are byte offsets into the UTF-8
 * input where the core reports the problem.
 */
const invalid = [
  { name: 'empty input', text: '', code: 'ERR_SYNTAX', offset: 0 },
  { name: 'only whitespace', text: '  ', code: 'ERR_SYNTAX', offset: 2 },
  { name: 'unclosed object', text: '{', code: 'ERR_SYNTAX', offset: 1 },
  { name: 'trailing comma', text: '[1,]', code: 'ERR_SYNTAX', offset: 3 },
  { name: 'junk after value', text: '{"a":1}x', code: 'ERR_SYNTAX', offset: 7 },
  { name: 'second value', text: '1 2', code: 'ERR_SYNTAX', offset: 2 },
  { name: 'single quotes', text: "{'a':1}", code: 'ERR_SYNTAX', offset: 1 },
  { name: 'leading zero', text: '01', code: 'ERR_SYNTAX', offset: undefined },
  { name: 'BOM', text: '\ufeff1', code: 'ERR_SYNTAX', offset: 0 },
  { name: 'raw control character in string', text: '"a\nb"', code: 'ERR_SYNTAX', offset: 2 },
  { name: 'bad escape', text: '"\\x"', code: 'ERR_SYNTAX', offset: undefined },
  { name: 'invalid UTF-8 bytes', bytes: [0x22, 0xff, 0x22], code: 'ERR_SYNTAX', offset: 1 },
  { name: 'unknown $undefined value', text: '{"$undefined":1}', code: 'ERR_FORMAT' },
  { name: 'bad $Number', text: '{"$Number":"nan"}', code: 'ERR_FORMAT' },
  { name: 'bad $BigInt leading zero', text: '{"$BigInt":"01"}', code: 'ERR_FORMAT' },
  { name: 'bad $Date', text: '{"$Date":"yesterday"}', code: 'ERR_FORMAT' },
  { name: 'bad base64', text: '{"$Uint8Array":"A"}', code: 'ERR_FORMAT' },
  { name: 'bad element size', text: '{"$Int16Array":"AA=="}', code: 'ERR_FORMAT' },
  { name: '$ref forward', text: '[{"$ref":1}]', code: 'ERR_FORMAT' },
  { name: '$ref at top level', text: '{"$ref":0}', code: 'ERR_FORMAT' },
  { name: '$hole outside an array', text: '{"a":{"$hole":1}}', code: 'ERR_FORMAT' },
  { name: '$hole of zero', text: '[{"$hole":0}]', code: 'ERR_FORMAT' },
  { name: 'tag with a second member', text: '{"$Map":[],"x":1}', code: 'ERR_FORMAT' },
  { name: 'unknown meta key', text: '{"$":"Foo","$zz":1}', code: 'ERR_FORMAT' },
  { name: 'class key not a string', text: '{"$":1}', code: 'ERR_FORMAT' },
  { name: 'depth over the limit', text: '[[[]]]', options: { maxDepth: 2 }, code: 'ERR_DEPTH' },
  { name: 'very deep input', text: '['.repeat(100000) + ']'.repeat(100000), code: 'ERR_DEPTH' },
  { name: 'string over maxLength', text: '"abcdef"', options: { maxLength: 4 }, code: 'ERR_TOO_LARGE' },
  { name: 'array over maxLength', text: '[1,2,3,4,5]', options: { maxLength: 4 }, code: 'ERR_TOO_LARGE' },
  { name: 'holes over maxLength', text: '[{"$hole":5}]', options: { maxLength: 4 }, code: 'ERR_TOO_LARGE' },
  { name: 'input over maxBytes', text: '[1,2,3]', options: { maxBytes: 4 }, code: 'ERR_TOO_LARGE' },
  { name: 'unknown class', text: '{"a":[{"$":"Nobody","x":1}]}', code: 'ERR_UNKNOWN_CLASS', path: '$.a[0]' }
];

module.exports = { formats, fixtures, invalid, Foo, Bar, Baz, Point };

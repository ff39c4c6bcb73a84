'use strict';
// darmok demo: the tanagra article's Foo/Bar/Baz graph, written to JSON
// bytes (what you would keep in Redis) and read back as real instances.
const util = require('node:util');
const { encodeEntity, decodeEntity } = require('..');
const Foo = require('./model/foo.cjs');
const Bar = require('./model/bar.cjs');
const Baz = require('./model/baz.cjs');

const shared = new Baz('shared', new Map([['x', 1], ['y', 2]]));
const foo = new Foo(
  'article',
  0, // falsy fields survive, unlike tanagra-json
  [
    new Bar('first', new Date('2019-03-01T10:00:00Z'), shared),
    new Bar('second', new Date('2021-07-15T18:30:00Z'), new Baz('own', new Map([['z', 3]]))),
  ],
  new Map([
    ['a', shared],
    ['b', new Baz('b', new Map([['p', 10], ['q', 20]]))],
    ['c', new Baz('c', new Map())],
  ]),
);

const blob = encodeEntity(foo);
console.log(`encoded: ${Buffer.byteLength(blob)} bytes of JSON`);
console.log(blob);

const back = decodeEntity(blob, Foo);
console.log('\ndecoded:');
console.log(util.inspect(back, { depth: null, colors: false }));

const checks = [
  ['back instanceof Foo', back instanceof Foo],
  ['back.describe()', back.describe()],
  ['back.bars[0] instanceof Bar', back.bars[0] instanceof Bar],
  ['back.bars[1].year (getter)', back.bars[1].year],
  ["back.bazById.get('b').total() (method)", back.bazById.get('b').total()],
  ["shared Baz kept its identity", back.bars[0].baz === back.bazById.get('a')],
  ['back.count (falsy 0 kept)', back.count],
  ['Foo.fromNothing() (static method)', Foo.fromNothing().describe()],
  ['encodeEntity(back) === blob', encodeEntity(back) === blob],
];
console.log('');
for (const [what, value] of checks) console.log(`${what}: ${util.inspect(value)}`);

const ok = back instanceof Foo && back.bars[0] instanceof Bar && back.bars[1].year === 2021 &&
  back.bazById.get('b').total() === 30 && back.bars[0].baz === back.bazById.get('a') &&
  back.count === 0 && encodeEntity(back) === blob;
if (!ok) {
  console.error('demo: round trip FAILED');
  process.exit(1);
}
console.log('\ndemo: round trip OK');

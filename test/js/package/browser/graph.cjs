'use strict';
/*
 * The Foo graph of examples/model (as examples/demo.cjs builds it), and
 * what a decoded copy must show; shared by browser.test.cjs and the page
 * it bundles, so Node and the browser build and check the same thing.
 */
const Foo = require('../../../../examples/model/foo.cjs');
const Bar = require('../../../../examples/model/bar.cjs');
const Baz = require('../../../../examples/model/baz.cjs');

function makeFoo() {
  const shared = new Baz('shared', new Map([['x', 1], ['y', 2]]));
  return new Foo('article', 0, [
    new Bar('first', new Date('2019-03-01T10:00:00Z'), shared),
    new Bar('second', new Date('2021-07-15T18:30:00Z'), new Baz('own', new Map([['z', 3]])))
  ], new Map([['a', shared], ['b', new Baz('b', new Map([['p', 10], ['q', 20]]))], ['c', new Baz('c', new Map())]]));
}

/* What a decoded Foo shows: classes, a method, a getter, the shared Baz. */
function checkFoo(back) {
  return {
    foo: back instanceof Foo,
    describe: back.describe(),
    bar: back.bars[0] instanceof Bar,
    year: back.bars[1].year,
    total: back.bazById.get('b').total(),
    shared: back.bars[0].baz === back.bazById.get('a')
  };
}

const EXPECTED_CHECK = {
  foo: true, describe: 'article: 2 bars, 3 bazzes, count 0', bar: true, year: 2021, total: 30, shared: true
};

module.exports = { Foo, makeFoo, checkFoo, EXPECTED_CHECK };

'use strict';
// The tanagra.js article's model: export the class through serializable(),
// naming the classes nested inside it.
const { serializable } = require('../..');
const Bar = require('./bar.cjs');
const Baz = require('./baz.cjs');

class Foo {
  constructor(title, count, bars, bazById) {
    this.title = title;
    this.count = count;
    this.bars = bars;       // Bar[]
    this.bazById = bazById; // Map<string, Baz>
  }

  describe() {
    return `${this.title}: ${this.bars.length} bars, ${this.bazById.size} bazzes, count ${this.count}`;
  }

  static fromNothing() {
    return new this('empty', 0, [], new Map());
  }
}

module.exports = serializable(Foo, [Bar, Baz]);

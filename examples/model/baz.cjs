'use strict';
const { serializable } = require('../..');

class Baz {
  constructor(label, counts) {
    this.label = label;
    this.counts = counts; // Map<string, number>
  }

  total() {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }
}

module.exports = serializable(Baz);

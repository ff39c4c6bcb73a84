'use strict';
const { serializable } = require('../..');
const Baz = require('./baz.cjs');

class Bar {
  constructor(name, when, baz) {
    this.name = name;
    this.when = when; // Date
    this.baz = baz;   // Baz
  }

  get year() {
    return this.when.getUTCFullYear();
  }
}

module.exports = serializable(Bar, [Baz]);

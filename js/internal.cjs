'use strict';
/*
 * internal.cjs - what darmok's own tests and benchmarks may reach and its
 * users may not: the Registry behind a registry handle (its plans, their
 * shapes), the default one, the option names each call takes, and the
 * hooks into the core's instance (its memory, its exports, a wrapper
 * around them, how many instances were made). Not in
 * package.json "exports" (no entry point leads here) nor in the tarball
 * ("files"); nothing in js/ requires it.
 */

const { registryOf, defaultRegistry } = require('./registry.cjs');
const { wasmMemory, exportsForTest, useExportsForTest, instantiationsForTest } = require('./instance.cjs');
const { ENCODE_OPTIONS, DECODE_OPTIONS, TO_PLAIN_OPTIONS, FROM_PLAIN_OPTIONS } = require('./codec.cjs');

module.exports = {
  registryOf, defaultRegistry,
  ENCODE_OPTIONS, DECODE_OPTIONS, TO_PLAIN_OPTIONS, FROM_PLAIN_OPTIONS,
  wasmMemory, exportsForTest, useExportsForTest, instantiationsForTest
};

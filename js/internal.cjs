'use strict';
/*
 * internal.cjs - what darmok's own tests and benchmarks may reach and its
 * users may not: the Registry behind a registry handle (its plans, their
 * shapes) and the default one. Not in package.json "exports" (no entry
 * point leads here) nor in the tarball ("files"); nothing in js/ requires it.
 */

const { registryOf, defaultRegistry } = require('./registry.cjs');

module.exports = { registryOf, defaultRegistry };

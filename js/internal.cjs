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

const { registryOf, defaultRegistry } = require('./codec/registry.cjs');
const { wasmMemory, exportsForTest, useExportsForTest, instantiationsForTest } = require('./core/instance.cjs');
const { ENCODE_OPTIONS, DECODE_OPTIONS, TO_PLAIN_OPTIONS, FROM_PLAIN_OPTIONS } = require('./api.cjs');

module.exports = {
  registryOf, defaultRegistry,
  ENCODE_OPTIONS, DECODE_OPTIONS, TO_PLAIN_OPTIONS, FROM_PLAIN_OPTIONS,
  wasmMemory, exportsForTest, useExportsForTest, instantiationsForTest
};

/*
 * The internal modules tests reach, each loaded when first asked for:
 * require('darmok/js/internal.cjs').tapeReader is js/core/tape-reader.cjs.
 */
const MODULES = {
  breaker: () => require('./cache/breaker.cjs'),
  builtins: () => require('./codec/builtins.cjs'),
  clients: () => require('./cache/clients.cjs'),
  core: () => require('./core/core.cjs'),
  decode: () => require('./codec/decode.cjs'),
  dkAbi: () => require('./core/dk_abi.cjs'),
  encode: () => require('./codec/encode.cjs'),
  entry: () => require('./cache/entry.cjs'),
  envelope: () => require('./cli/envelope.cjs'),
  errors: () => require('./core/errors.cjs'),
  jsonDocument: () => require('./core/json-document.cjs'),
  jsonText: () => require('./cli/json-text.cjs'),
  load: () => require('./core/load.cjs'),
  naming: () => require('./codec/naming.cjs'),
  plain: () => require('./compat/plain.cjs'),
  report: () => require('./cli/report.cjs'),
  shapes: () => require('./codec/shapes.cjs'),
  sniff: () => require('./codec/sniff.cjs'),
  tape: () => require('./core/tape.cjs'),
  tapeReader: () => require('./core/tape-reader.cjs'),
  tapeWriter: () => require('./core/tape-writer.cjs'),
  text: () => require('./core/text.cjs'),
  tree: () => require('./cli/tree.cjs')
};
for (const [name, load] of Object.entries(MODULES)) {
  Object.defineProperty(module.exports, name, { enumerable: true, get: load });
}

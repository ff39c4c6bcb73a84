'use strict';
/*
 * darmok/serializer - darmok JSON as the serializer of the cache libraries
 * people already run, which all store strings:
 *   Keyv:          new Keyv({ store, ...keyvSerializer })  (serialize/deserialize)
 *   cache-manager: createCache({ stores: [new Keyv({ store, ...keyvSerializer })] })  (6 and 7)
 *   BentoCache:    new BentoCache({ serializer: bentoSerializer, ... })
 * Keyv hands serialize its whole entry ({ value, expires }) and BentoCache
 * its item: darmok writes whatever it is given, so one object fits both
 * contracts (serialize(value) -> string, deserialize(text) -> value).
 * createSerializer({ registry, decode, bytes }) makes one over a registry of
 * your own (createRegistry()), with decodeEntity options, or (bytes: true)
 * whose serialize gives the text's UTF-8 bytes, for the stores that take
 * bytes (docs/ECOSYSTEM.md says which): no JS string of the document is
 * made. deserialize takes text or bytes either way.
 */

const { createCodec } = require('./api.cjs');
const { DarmokError } = require('./core/errors.cjs');
const { checkNames } = require('./codec/options.cjs');

const SERIALIZER_OPTIONS = new Set(['registry', 'decode', 'bytes']);

function createSerializer(options = {}) {
  if (options === null || typeof options !== 'object') throw new DarmokError('ERR_INVALID_OPTION', 'createSerializer takes { registry, decode, bytes }');
  checkNames(options, SERIALIZER_OPTIONS, 'createSerializer');
  const { registry, decode, bytes = false } = options;
  if (typeof bytes !== 'boolean') throw new DarmokError('ERR_INVALID_OPTION', 'createSerializer: bytes must be true or false');
  const codec = createCodec(registry === undefined ? { format: 'json' } : { format: 'json', registry });
  const encodeOptions = bytes ? Object.freeze({ bytes: true }) : undefined;
  return Object.freeze({
    serialize: (value) => codec.encodeEntity(value, encodeOptions),
    deserialize: (text) => (decode === undefined ? codec.decodeEntity(text) : codec.decodeEntity(text, decode))
  });
}

const serializer = createSerializer();

// As the other entry points (json.cjs): names a static reader of CommonJS
// sees, and default for TypeScript's CommonJS output without esModuleInterop.
module.exports = { createSerializer, serializer, keyvSerializer: serializer, bentoSerializer: serializer };
module.exports.default = module.exports;

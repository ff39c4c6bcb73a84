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
 * createSerializer({ registry, decode }) makes one over a registry of your
 * own (createRegistry()) or with decodeEntity options.
 */

const { createCodec } = require('./codec.cjs');

function createSerializer(options = {}) {
  const { registry, decode } = options;
  const codec = createCodec(registry === undefined ? { format: 'json' } : { format: 'json', registry });
  return Object.freeze({
    serialize: (value) => codec.encodeEntity(value),
    deserialize: (text) => (decode === undefined ? codec.decodeEntity(text) : codec.decodeEntity(text, decode))
  });
}

const serializer = createSerializer();

// As the other entry points (json.cjs): names a static reader of CommonJS
// sees, and default for TypeScript's CommonJS output without esModuleInterop.
module.exports = { createSerializer, serializer, keyvSerializer: serializer, bentoSerializer: serializer };
module.exports.default = module.exports;

'use strict';
/*
 * json.cjs - darmok's JSON format (docs/FORMAT.md) over the default
 * registry: the codec createCodec({ format: 'json' }) (codec.cjs), plus
 * serializable, createCodec, createRegistry, transcode (JSON <-> protobuf),
 * init and DarmokError.
 */

const core = require('./core.cjs');
const { DarmokError } = require('./errors.cjs');
const { createCodec, transcode, MAX_DEPTH, MAX_BYTES, MAX_LENGTH } = require('./codec.cjs');
const { createRegistry, defaultRegistry } = require('./registry.cjs');

const codec = createCodec({ format: 'json', registry: defaultRegistry });

module.exports = {
  encodeEntity: codec.encodeEntity,
  decodeEntity: codec.decodeEntity,
  serializable: defaultRegistry.serializable,
  createCodec,
  createRegistry,
  transcode,
  init: core.init,
  DarmokError,
  MAX_DEPTH,
  MAX_BYTES,
  MAX_LENGTH
};

'use strict';
/*
 * protobuf.cjs - darmok's protobuf format (proto/darmok.proto, docs/FORMAT.md
 * "Protobuf") over the default registry: the codec
 * createCodec({ format: 'protobuf' }) (codec.cjs), plus serializable,
 * createCodec, createRegistry, transcode, init and DarmokError - the same
 * functions, options, errors and decoded values as darmok/json, with bytes
 * (a Buffer in Node) in place of JSON text.
 */

const core = require('./core.cjs');
const { DarmokError } = require('./errors.cjs');
const { createCodec, transcode, MAX_DEPTH, MAX_BYTES, MAX_LENGTH } = require('./codec.cjs');
const { createRegistry, defaultRegistry } = require('./registry.cjs');

const codec = createCodec({ format: 'protobuf', registry: defaultRegistry });

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

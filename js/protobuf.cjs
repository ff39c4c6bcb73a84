'use strict';
/*
 * protobuf.cjs - darmok's protobuf format (proto/darmok.proto, docs/FORMAT.md
 * "Protobuf") over the default registry: the codec
 * createCodec({ format: 'protobuf' }) (codec.cjs), plus serializable,
 * createCodec, createRegistry, transcode, init and DarmokError - the same
 * functions, options, errors and decoded values as darmok/json, with bytes
 * (a Buffer in Node) in place of JSON text.
 */

module.exports = require('./codec.cjs').entryPoint('protobuf');

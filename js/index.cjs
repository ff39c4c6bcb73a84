'use strict';
/*
 * darmok - round-trip JavaScript object graphs (registered classes, Maps,
 * Sets, Dates, BigInts, binary data, Errors, shared references, cycles)
 * through bytes. JSON is the default format: this entry point is
 * darmok/json. Protobuf: `{ format: 'protobuf' }` in the options of
 * encodeEntity/decodeEntity/createCodec, or the darmok/protobuf entry
 * point; transcode() converts between the two. CommonJS is the
 * implementation; index.mjs re-exports it, so `require` and `import` share
 * one class registry.
 */
module.exports = require('./json.cjs');

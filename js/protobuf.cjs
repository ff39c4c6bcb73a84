'use strict';
/*
 * protobuf.cjs - darmok's protobuf format (proto/darmok.proto, docs/FORMAT.md
 * "Protobuf") over the default registry: the codec
 * createCodec({ format: 'protobuf' }) (api.cjs), plus serializable,
 * createCodec, createRegistry, transcode, init and DarmokError - the same
 * functions, options, errors and decoded values as darmok/json, with bytes
 * (a Buffer in Node) in place of JSON text.
 */

const {
  encodeEntity, decodeEntity, toPlain, fromPlain, configure, serializable, createCodec, createRegistry, transcode, init, DarmokError,
  MAX_DEPTH, MAX_BYTES, MAX_LENGTH, MAX_REGEXP_LENGTH
} = require('./api.cjs').entryPoint('protobuf');

// Each name written out in an object literal, so that a static reader of
// CommonJS sees it (Node's cjs-module-lexer; Deno's, which gives
// `import('darmok')` after `require('darmok')` only the names it reads).
// default: TypeScript's CommonJS output without esModuleInterop reads
// require('darmok').default.
module.exports = {
  encodeEntity, decodeEntity, toPlain, fromPlain, configure, serializable, createCodec, createRegistry, transcode, init, DarmokError,
  MAX_DEPTH, MAX_BYTES, MAX_LENGTH, MAX_REGEXP_LENGTH
};
module.exports.default = module.exports;

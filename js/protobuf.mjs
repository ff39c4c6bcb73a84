// ESM entry for darmok/protobuf: re-exports the CommonJS implementation, so
// `require` and `import` share one class registry.
import './core/locate.mjs';
import darmok from './protobuf.cjs';

export const {
  encodeEntity, decodeEntity, toPlain, fromPlain, configure, serializable, createCodec, createRegistry, transcode, init, DarmokError,
  MAX_DEPTH, MAX_BYTES, MAX_LENGTH, MAX_REGEXP_LENGTH
} = darmok;
export default darmok;

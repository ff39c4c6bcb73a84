// ESM entry for darmok/inline: re-exports the CommonJS implementation.
import darmok from './inline.cjs';

export const {
  encodeEntity, decodeEntity, toPlain, fromPlain, configure, serializable, createCodec, createRegistry, transcode, init, DarmokError,
  MAX_DEPTH, MAX_BYTES, MAX_LENGTH, MAX_REGEXP_LENGTH
} = darmok;
export default darmok;

// ESM entry for darmok/inline: re-exports the CommonJS implementation.
import darmok from './inline.cjs';

export const {
  encodeEntity, decodeEntity, toPlain, fromPlain, configure, serializable, createCodec, createRegistry, transcode, init, DarmokError
} = darmok;
export default darmok;

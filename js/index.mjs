// ESM entry: re-exports the CommonJS implementation, so one registry serves both.
import darmok from './index.cjs';

export const {
  encodeEntity, decodeEntity, serializable, createCodec, createRegistry, transcode, init, DarmokError,
  MAX_DEPTH, MAX_BYTES, MAX_LENGTH
} = darmok;
export default darmok;

// ESM entry: re-exports the CommonJS implementation, so one registry serves both.
import './core/locate.mjs';
import darmok from './index.cjs';

export const {
  encodeEntity, decodeEntity, toPlain, fromPlain, configure, serializable, createCodec, createRegistry, transcode, init, DarmokError,
  MAX_DEPTH, MAX_BYTES, MAX_LENGTH, MAX_REGEXP_LENGTH
} = darmok;
export default darmok;

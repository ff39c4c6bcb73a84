// ESM entry: re-exports the CommonJS implementation, so one registry serves both.
import './locate.mjs';
import darmok from './index.cjs';

export const {
  encodeEntity, decodeEntity, toPlain, fromPlain, configure, serializable, createCodec, createRegistry, transcode, init, DarmokError
} = darmok;
export default darmok;

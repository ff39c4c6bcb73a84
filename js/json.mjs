// ESM entry for darmok/json: re-exports the CommonJS implementation, each name
// listed: `export *` of a CommonJS module would also hand on the name
// "module.exports" that Node 23 and later give its namespace.
import './core/locate.mjs';
import darmok from './json.cjs';

export const {
  encodeEntity, decodeEntity, toPlain, fromPlain, configure, serializable, createCodec, createRegistry, transcode, init, DarmokError,
  MAX_DEPTH, MAX_BYTES, MAX_LENGTH, MAX_REGEXP_LENGTH
} = darmok;
export default darmok;

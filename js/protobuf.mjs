// ESM entry for darmok/protobuf: re-exports the CommonJS implementation, as json.mjs does.
import './core/locate.mjs';
export * from './protobuf.cjs';
export { default } from './protobuf.cjs';

// ESM entry for darmok/serializer: re-exports the CommonJS implementation, as json.mjs does.
import './core/locate.mjs';
export * from './serializer.cjs';
export { default } from './serializer.cjs';

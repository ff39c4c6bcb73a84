// ESM entry for darmok/redis: re-exports the CommonJS implementation, as json.mjs does.
import './core/locate.mjs';
export * from './redis.cjs';
export { default } from './redis.cjs';

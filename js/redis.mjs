// ESM entry for darmok/redis: re-exports the CommonJS implementation, so
// `require` and `import` share one class registry.
import './core/locate.mjs';
import redis from './redis.cjs';

export const { createCache, LOCK_SUFFIX, DEFAULTS } = redis;
export default redis;

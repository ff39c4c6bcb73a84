'use strict';
// darmok/redis: createCache, a cache of class instances on Redis
// (js/cache/cache.cjs; docs/CACHE.md). Each name written out in an object
// literal, so that static readers of CommonJS (Node's, Deno's) see it.
const { createCache, LOCK_SUFFIX, DEFAULTS } = require('./cache/cache.cjs');

module.exports = { createCache, LOCK_SUFFIX, DEFAULTS };
module.exports.default = module.exports;

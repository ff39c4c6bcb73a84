'use strict';
/*
 * darmok/redis against one real redis-server (started on a free loopback
 * port, no persistence): every check of redis-checks.cjs, for node-redis
 * 4, 5 and 6 and ioredis 5 and 6, in both formats.
 */
require('./checks.cjs').defineChecks('standalone');

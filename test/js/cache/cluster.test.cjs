'use strict';
/*
 * darmok/redis against a real 3-master Redis Cluster (redis-server
 * --cluster-enabled yes, three times, joined by redis-cli --cluster
 * create): every check of redis-checks.cjs, for the cluster clients of
 * node-redis 4, 5 and 6 (createCluster) and ioredis 5 and 6 (Cluster), in
 * both formats; mget is one MGET per hash slot, counted in each node's
 * INFO commandstats.
 */
require('./checks.cjs').defineChecks('cluster');

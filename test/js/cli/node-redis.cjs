'use strict';
/*
 * cli-node-redis.cjs - preloaded (node --require) by cli.test.cjs so that
 * `darmok inspect --redis` finds the node-redis package named in
 * DARMOK_TEST_NODE_REDIS (redis4, redis, redis6) when it requires
 * '@redis/client' or 'redis': the CLI runs as it is, with that client.
 */
const Module = require('node:module');

const target = process.env.DARMOK_TEST_NODE_REDIS;
const resolve = Module._resolveFilename;
const cliSource = require.resolve('../../../js/cli/source.cjs');
Module._resolveFilename = function (request, parent, ...rest) {
  // Only the CLI's own require: the packages themselves require @redis/client too.
  const mapped = parent && parent.filename === cliSource && (request === '@redis/client' || request === 'redis');
  return resolve.call(this, mapped ? target : request, parent, ...rest);
};

'use strict';
/*
 * source.cjs - the CLI's input bytes: a file, standard input ("-" or no
 * argument), or a key in Redis, read with node-redis (@redis/client, an
 * optional peer dependency: only --redis needs it).
 */
const fs = require('node:fs');
const { adapt } = require('../cache/clients.cjs');

function readInput(file) {
  if (file === undefined || file === '-') return fs.readFileSync(0);
  return fs.readFileSync(file);
}

class SourceError extends Error {}

function redisClientModule() {
  for (const name of ['@redis/client', 'redis']) {
    try {
      return require(name);
    } catch (err) {
      if (err.code !== 'MODULE_NOT_FOUND') throw err;
    }
  }
  throw new SourceError('--redis needs node-redis: npm install @redis/client');
}

/*
 * GET key from the Redis at url, as bytes (never decoded as UTF-8 text),
 * through darmok/redis's client adapter, so every node-redis the cache
 * takes (4, 5, 6) works. lib: the node-redis module (found when absent).
 */
async function readRedis(url, key, lib = redisClientModule()) {
  const client = lib.createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 5000 } });
  client.on('error', () => {}); // the failed command reports it
  try {
    await client.connect();
  } catch (err) {
    throw new SourceError(`cannot connect to ${url}: ${err.message}`);
  }
  try {
    const value = await adapt(client).get(key, true);
    if (value === null) throw new SourceError(`no key ${JSON.stringify(key)} in ${url}`);
    return value;
  } finally {
    // node-redis 5+ close(); 4 has only quit().
    await (typeof client.close === 'function' ? client.close() : client.quit());
  }
}

module.exports = { readInput, readRedis, SourceError };

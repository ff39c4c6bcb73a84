'use strict';
/*
 * source.cjs - the CLI's input bytes: a file, standard input ("-" or no
 * argument), or a key in Redis, read with node-redis (@redis/client, an
 * optional peer dependency: only --redis needs it).
 */
const fs = require('node:fs');

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

/* GET key from the Redis at url, as bytes (never decoded as UTF-8 text). */
async function readRedis(url, key) {
  const { createClient, RESP_TYPES } = redisClientModule();
  const client = createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 5000 } });
  client.on('error', () => {}); // the failed command reports it
  try {
    await client.connect();
  } catch (err) {
    throw new SourceError(`cannot connect to ${url}: ${err.message}`);
  }
  try {
    const value = await client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }).get(key);
    if (value === null) throw new SourceError(`no key ${JSON.stringify(key)} in ${url}`);
    return value;
  } finally {
    await client.close();
  }
}

module.exports = { readInput, readRedis, SourceError };

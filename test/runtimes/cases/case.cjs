'use strict';
/*
 * case.cjs FEATURE - one CommonJS case of the runtime matrix (matrix.mjs),
 * run by the runtime under test from the matrix's app folder, where
 * node_modules/darmok is the package as installed and
 * node_modules/darmok-bare the same without build/darmok.wasm (so the core
 * comes from darmok/inline's bytes or from init()). Prints "ok: <what was
 * checked>" and exits 0, or throws.
 * Environment: DARMOK_WASM the .wasm file (init), REDIS_URL, MATRIX_RUNTIME.
 */
const fs = require('node:fs');
const { roundTrips, throwsCode, missingNames } = require('./common.cjs');

const RUNTIME = process.env.MATRIX_RUNTIME;

const cases = {
  'cjs-json'() {
    const darmok = require('darmok');
    return `${roundTrips(darmok, darmok, require('./fixtures.cjs').fixtures, RUNTIME)} values`;
  },
  'cjs-protobuf'() {
    const pb = require('darmok/protobuf');
    const n = roundTrips(pb, require('darmok'), require('./fixtures.cjs').fixtures, RUNTIME);
    if (!(pb.encodeEntity({ a: 1 }) instanceof Uint8Array)) throw new Error('protobuf bytes are no Uint8Array');
    return `${n} values`;
  },
  // darmok-bare/inline first: its bytes are handed over before the core loads.
  'inline'() {
    const inline = require('darmok-bare/inline');
    const n = roundTrips(inline, inline, require('./fixtures-bare.cjs').fixtures, RUNTIME);
    return `${n} values, core from the embedded bytes`;
  },
  async 'init-bytes'() {
    const darmok = require('darmok-bare');
    await throwsCode(() => darmok.encodeEntity(1), 'ERR_NOT_READY');
    await darmok.init(fs.readFileSync(process.env.DARMOK_WASM));
    const { fixtures } = require('./fixtures-bare.cjs');
    const n = roundTrips(darmok, darmok, fixtures, RUNTIME) +
      roundTrips(darmok.createCodec({ format: 'protobuf' }), darmok, fixtures, RUNTIME);
    return `ERR_NOT_READY before, then ${n} round trips`;
  },
  async 'require-then-import'() {
    const entries = ['darmok', 'darmok/json', 'darmok/protobuf', 'darmok/inline', 'darmok/serializer', 'darmok/redis'];
    for (const entry of entries) {
      const cjs = require(entry);
      const ns = await import(entry);
      const missing = missingNames(cjs, ns);
      if (missing.length) throw new Error(`import('${entry}') after require lacks ${missing.join(', ')}`);
    }
    const { serializable } = await import('darmok');
    if (serializable !== require('darmok').serializable) throw new Error('import and require have two registries');
    return `${entries.length} entries, one registry`;
  },
  'redis-node-redis'() {
    return redisCase('node-redis', async (url) => {
      const { createClient } = require('redis');
      const client = createClient({ url });
      await client.connect();
      return { client, raw: (k) => client.get(k), close: () => client.quit() };
    });
  },
  'redis-ioredis'() {
    return redisCase('ioredis', async (url) => {
      const Redis = require('ioredis');
      const client = new Redis(url, { lazyConnect: true });
      await client.connect(); // the cache's commands time out (250 ms): not while the client still connects
      return { client, raw: (k) => client.get(k), close: () => client.quit() };
    });
  }
};

/* getOrSet twice on a real redis-server: one load, then a real Post read back from Redis. */
async function redisCase(name, connect) {
  const { serializable } = require('darmok');
  const { createCache } = require('darmok/redis');
  class Post {
    constructor(title) {
      this.title = title;
      this.at = new Date(0);
      this.tags = new Set(['a']);
    }

    summary() {
      return `${this.title} (${this.tags.size})`;
    }
  }
  serializable(Post, { key: 'matrix.Post' });
  const { client, raw, close } = await connect(process.env.REDIS_URL);
  try {
    const prefix = `matrix:${process.env.MATRIX_RUNTIME}:${name}:${process.pid}:`;
    const cache = createCache({ client, prefix, ttl: 60 });
    let loads = 0;
    const load = async () => {
      loads++;
      return new Post('hello');
    };
    const first = await cache.getOrSet('p', Post, load);
    if (!(first instanceof Post)) throw new Error('the loaded value is no Post');
    let stored = null;
    for (let i = 0; i < 100 && stored === null; i++) {
      stored = await raw(`${prefix}p`);
      if (stored === null) await new Promise((r) => setTimeout(r, 20));
    }
    if (stored === null) throw new Error('nothing was written to Redis');
    const second = await cache.getOrSet('p', Post, load);
    if (loads !== 1) throw new Error(`the loader ran ${loads} times`);
    if (!(second instanceof Post) || second.summary() !== 'hello (1)' || !(second.at instanceof Date)) {
      throw new Error('the cached value is not the Post written');
    }
    const stats = cache.stats();
    return `getOrSet: a load, then a hit (${JSON.stringify({ hits: stats.hits, misses: stats.misses })})`;
  } finally {
    await close();
  }
}

const feature = process.argv[2];
if (!Object.hasOwn(cases, feature)) throw new Error(`case.cjs: no feature ${feature}`);
Promise.resolve().then(cases[feature]).then((detail) => {
  console.log(`ok: ${detail}`);
}, (err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exitCode = 1;
});

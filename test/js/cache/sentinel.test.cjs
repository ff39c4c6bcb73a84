'use strict';
/*
 * darmok/redis through Redis Sentinel: a real primary, its replica and a
 * redis-server --sentinel (redis-servers.cjs startSentinel), reached by
 * node-redis 5 and 6 createSentinel() and ioredis 5 and 6 with
 * `sentinels: [...]`. get/set/mget/getOrSet round trip, then SENTINEL
 * FAILOVER: once the clients follow the new primary, the cache keeps
 * working. A Sentinel connection the cache cannot write through (ioredis
 * role: 'slave') is refused at createCache.
 */
const { test, before, after } = require('node:test');
const { assert } = require('../helpers.cjs');
const { createCache } = require('darmok/redis');
const { adapt } = require('../../../js/internal.cjs').clients;
const { DarmokError } = require('../../../js/index.cjs');
const { startSentinel, send, waitFor, HOST } = require('../redis-servers.cjs');
const { makeFoo, Foo, close } = require('./matrix.cjs');

const quiet = () => {};
let servers;
let combos;

async function connectSentinel(pkg, name, port) {
  const lib = require(pkg);
  if (typeof lib.createSentinel === 'function') {
    const c = lib.createSentinel({
      name, sentinelRootNodes: [{ host: HOST, port }],
      nodeClientOptions: { socket: { reconnectStrategy: 50 } },
      sentinelClientOptions: { socket: { reconnectStrategy: 50 } }
    });
    c.on('error', quiet);
    await c.connect();
    return c;
  }
  const Redis = lib.default || lib;
  const c = new Redis({
    sentinels: [{ host: HOST, port }], name, lazyConnect: true, maxRetriesPerRequest: 1,
    retryStrategy: () => 50, sentinelRetryStrategy: () => 50,
    // Without it ioredis kept writing to the demoted primary (READONLY) for about 10 s.
    failoverDetector: true
  });
  c.on('error', quiet);
  await c.connect();
  return c;
}

before(async () => {
  servers = await startSentinel();
  combos = [];
  for (const pkg of ['redis', 'redis6', 'ioredis', 'ioredis6']) {
    const client = await connectSentinel(pkg, servers.name, servers.sentinel.port);
    const errors = [];
    const cache = createCache({ client, prefix: `s:${pkg}:`, timeout: 2000, onError: (err) => errors.push(err) });
    combos.push({ name: pkg, client, cache, errors, prefix: `s:${pkg}:` });
  }
});

after(async () => {
  for (const c of combos || []) close(c.client);
  if (servers) await servers.stop();
});

async function roundTrip(c, tag) {
  assert.strictEqual(await c.cache.set(`foo:${tag}`, makeFoo(tag)), true, `${c.name}: set`);
  const back = await c.cache.get(`foo:${tag}`, Foo);
  assert.ok(back instanceof Foo && back.name === tag && back.total() === makeFoo().total(), `${c.name}: get`);
  let loads = 0;
  const loader = () => { loads++; return makeFoo(`loaded ${tag}`); };
  assert.strictEqual((await c.cache.getOrSet(`gos:${tag}`, Foo, loader)).name, `loaded ${tag}`);
  assert.strictEqual((await c.cache.getOrSet(`gos:${tag}`, Foo, loader)).name, `loaded ${tag}`, `${c.name}: a hit`);
  assert.strictEqual(loads, 1, `${c.name}: one load`);
  const many = await c.cache.mget([`foo:${tag}`, `gos:${tag}`, 'absent'], Foo);
  assert.deepStrictEqual(many.map((v) => v && v.name), [tag, `loaded ${tag}`, null], c.name);
}

test('through Sentinel: get, set, getOrSet, mget round trip on the primary', async () => {
  await Promise.all(combos.map(async (c) => {
    await roundTrip(c, 'first');
    const stored = await send(servers.primary.port, 'GET', `${c.prefix}foo:first`);
    assert.ok(Buffer.isBuffer(stored) && stored.subarray(0, 9).toString() === 'darmok/1 ', `${c.name}: on the primary`);
    assert.strictEqual(await adapt(c.client).evictionPolicy(), 'noeviction', `${c.name}: the eviction probe`);
    assert.deepStrictEqual(c.errors, [], c.name);
  }));
});

test('through Sentinel: the L1 bus, tags and clear work between two caches', async () => {
  await Promise.all(combos.map(async (c) => {
    const prefix = `${c.prefix}l1:`;
    const a = createCache({ client: c.client, prefix, l1: true, timeout: 2000, onError: (err) => c.errors.push(err) });
    const b = createCache({ client: c.client, prefix, l1: true, timeout: 2000, onError: (err) => c.errors.push(err) });
    try {
      await waitFor(`${c.name}: both buses up`, async () => a.stats().bus === 'up' && b.stats().bus === 'up', 10000);
      await a.set('x', makeFoo('one'), { tags: ['t'] });
      assert.strictEqual((await b.get('x', Foo)).name, 'one', c.name);
      // (a's own invalidation of x may still be on its way, and drop b's copy once.)
      await waitFor(`${c.name}: an L1 hit`, async () => (await b.get('x', Foo)).name === 'one' && b.stats().l1Hits > 0, 5000);
      await a.set('x', makeFoo('two'), { tags: ['t'] });
      await waitFor(`${c.name}: b sees the set`, async () => (await b.get('x', Foo)).name === 'two', 5000);
      await a.deleteByTag('t');
      await waitFor(`${c.name}: b sees deleteByTag`, async () => (await b.get('x', Foo)) === null, 5000);
      await a.set('y', makeFoo('y'));
      assert.ok(await b.get('y', Foo), c.name);
      await b.clear();
      await waitFor(`${c.name}: a sees clear`, async () => (await a.get('y', Foo)) === null, 5000);
      assert.strictEqual(await send(servers.primary.port, 'EXISTS', `${prefix}y`), 0, `${c.name}: cleared in Redis`);
      assert.deepStrictEqual(c.errors, [], c.name);
    } finally {
      await a.close();
      await b.close();
    }
  }));
});

test('after SENTINEL FAILOVER the cache keeps working on the new primary', async () => {
  const next = await servers.failover();
  assert.strictEqual(next, servers.replica.port);
  const figures = {};
  await Promise.all(combos.map(async (c) => {
    // The clients learn of the switch (node-redis: Sentinel's +switch-master;
    // ioredis: failoverDetector, or the old primary's READONLY replies):
    // until then a write may fail, reported, never thrown.
    const t0 = Date.now();
    await waitFor(`${c.name} to write to the new primary`, async () => {
      await c.cache.set('probe', 1);
      return (await send(next, 'EXISTS', `${c.prefix}probe`)) === 1;
    }, 20000);
    figures[c.name] = Date.now() - t0;
    const before = await c.cache.get('foo:first', Foo);
    assert.ok(before instanceof Foo && before.name === 'first', `${c.name}: an entry written before the failover, replicated`);
    c.errors.length = 0;
    await roundTrip(c, 'second');
    assert.deepStrictEqual(c.errors.map((e) => e.message), [], c.name);
    const stored = await send(next, 'GET', `${c.prefix}foo:second`);
    assert.ok(Buffer.isBuffer(stored), `${c.name}: written to the new primary`);
  }));
  console.log('ms from the failover to the first write on the new primary:', JSON.stringify(figures));
});

test('a Sentinel connection to a replica (ioredis role: slave) is refused at createCache', async () => {
  const Redis = require('ioredis');
  const client = new Redis({ sentinels: [{ host: HOST, port: servers.sentinel.port }], name: servers.name, role: 'slave', lazyConnect: true });
  try {
    assert.throws(() => createCache({ client }), (err) => err instanceof DarmokError && err.code === 'ERR_INVALID_OPTION' && /replica/.test(err.message));
  } finally {
    client.disconnect();
  }
});

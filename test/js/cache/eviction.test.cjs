'use strict';
/*
 * The lock and Redis eviction: at its first lock a cache asks CONFIG GET
 * maxmemory-policy once, and warns (process warning DARMOK_LOCK_EVICTABLE)
 * when the policy can evict the lock key: allkeys-* and volatile-* (the
 * lock has a TTL); noeviction keeps it. Where CONFIG is refused
 * (rename-command, as managed Redis does) nothing is said and the lock
 * works. Real redis-server processes, every client package.
 */
const { test, before, after } = require('node:test');
const { assert } = require('../helpers.cjs');
const { createCache } = require('darmok/redis');
const { adapt, evictsLock } = require('../../../js/internal.cjs').clients;
const { startRedis, send } = require('../redis-servers.cjs');
const { CLIENTS, connect, close, makeFoo, Foo } = require('./matrix.cjs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let open; // CONFIG allowed
let closed; // CONFIG renamed away
const clients = [];
const warnings = [];
const onWarning = (w) => { if (w.code === 'DARMOK_LOCK_EVICTABLE') warnings.push(w.message); };

before(async () => {
  open = await startRedis();
  closed = await startRedis({ extra: ['--rename-command', 'CONFIG', ''] });
  for (const spec of CLIENTS) {
    clients.push({ spec, open: await connect(spec, 'standalone', [open.port]), closed: await connect(spec, 'standalone', [closed.port]) });
  }
  process.on('warning', onWarning);
});

after(async () => {
  process.off('warning', onWarning);
  for (const c of clients) {
    close(c.open);
    close(c.closed);
  }
  if (open) await open.stop();
  if (closed) await closed.stop();
});

test('evictsLock: allkeys-* and volatile-* can evict the lock; noeviction and unknown cannot', () => {
  for (const p of ['allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl']) assert.strictEqual(evictsLock(p), true, p);
  for (const p of ['noeviction', null, undefined, '']) assert.strictEqual(evictsLock(p), false, String(p));
});

/* getOrSet with the lock on a fresh cache of each client, then the warnings that came. */
async function lockOnce(which, tag) {
  warnings.length = 0;
  for (const c of clients) {
    const cache = createCache({ client: c[which], prefix: `ev:${tag}:${c.spec.id}:`, lock: true });
    for (let i = 0; i < 3; i++) assert.strictEqual((await cache.getOrSet(`k${i}`, Foo, () => makeFoo('x'))).name, 'x');
  }
  await sleep(50); // the probe is not awaited by getOrSet; warnings are emitted on the next tick
  return warnings.slice();
}

test('the policy is read through every client', async () => {
  await send(open.port, 'CONFIG', 'SET', 'maxmemory-policy', 'volatile-ttl');
  for (const c of clients) {
    assert.strictEqual(await adapt(c.open).evictionPolicy(), 'volatile-ttl', c.spec.id);
    assert.strictEqual(await adapt(c.closed).evictionPolicy(), null, `${c.spec.id}: CONFIG refused`);
  }
});

test('allkeys-lru and volatile-lru: one warning per cache, at its first lock', async () => {
  for (const policy of ['allkeys-lru', 'volatile-lru']) {
    await send(open.port, 'CONFIG', 'SET', 'maxmemory-policy', policy);
    const got = await lockOnce('open', policy);
    assert.strictEqual(got.length, clients.length, `${policy}: ${got.length} warnings`);
    assert.ok(got.every((m) => m.includes(policy) && m.includes(':darmok-lock')), got[0]);
  }
});

test('noeviction, or CONFIG refused: no warning, the lock works', async () => {
  await send(open.port, 'CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
  assert.deepStrictEqual(await lockOnce('open', 'noeviction'), []);
  assert.deepStrictEqual(await lockOnce('closed', 'refused'), []);
});

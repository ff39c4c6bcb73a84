'use strict';
/*
 * redis-checks.cjs - the checks of issue 25 for darmok/redis, defined once
 * and run by redis-standalone.test.cjs (one real redis-server) and
 * redis-cluster.test.cjs (a real 3-master Redis Cluster): every check for
 * every client package (node-redis 4, 5, 6; ioredis 5, 6) in both formats,
 * each combination under its own key prefix, concurrently where the check
 * does not read the servers' command counters.
 */
const { test, before, after } = require('node:test');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { assert, sameGraph } = require('../helpers.cjs');
const { createCache, LOCK_SUFFIX } = require('darmok/redis');
const { createCodec, createRegistry, DarmokError } = require('../../../js/index.cjs');
const { pack } = require('../../../js/internal.cjs').entry;
const calculateSlot = require('cluster-key-slot');
const { startTopology, send, commandStats, pause } = require('../redis-servers.cjs');
const { connectAll, closeAll, makeFoo, Foo, Bar } = require('./matrix.cjs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Commands get a generous timeout (the machine is shared and may stall a
// process for a while); the fault check uses a short one and measures it.
const TIMEOUT = 2000;
const FAULT_TIMEOUT = 200;

/* Resolves once check() is true, polling; rejects after ms. */
async function eventually(what, check, ms = 3000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await sleep(10);
  }
}

/* A cache for one combination, recording what it reports. */
function cacheFor(combo, options = {}) {
  const errors = [];
  const cache = createCache({
    client: combo.client, format: combo.format, prefix: combo.prefix, timeout: TIMEOUT,
    onError: (err, key) => errors.push({ err, key }), ...options
  });
  const events = [];
  for (const name of ['hit', 'miss', 'stale', 'load', 'lockWait']) cache.on(name, (key) => events.push(`${name} ${key}`));
  cache.on('error', (err, key) => events.push(`error ${key} ${err.code || err.message}`));
  return { cache, errors, events };
}

/*
 * client, seen through a proxy that calls hook() before each SET NX (the
 * lock) and counts the releases, EVALs of a script that DELs, in
 * counted.releases (getOrSet's store is an EVAL too).
 */
function beforeLockTaken(client, counted, hook) {
  return new Proxy(client, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      if (prop !== 'set' && prop !== 'sendCommand' && prop !== 'eval') return v.bind(target);
      return async (...args) => {
        const words = args.flat().map((a) => (typeof a === 'string' ? a.toUpperCase() : a));
        const release = args.flat().some((a) => typeof a === 'string' && a.includes("redis.call('DEL'"));
        if ((prop === 'eval' || words.includes('EVAL')) && release) counted.releases++;
        if (words.includes('NX')) await hook();
        return v.apply(target, args);
      };
    }
  });
}

function defineChecks(topology) {
  let servers;
  let combos;
  let ports;
  /* raw(cmd, key, ...args): one command to the node that serves key. */
  let raw; // (cmd, key, ...args) -> reply, sent to the node that serves key

  before(async () => {
    ({ servers, ports, raw } = await startTopology(topology));
    combos = await connectAll(topology, ports);
  });

  after(async () => {
    if (combos) closeAll(combos);
    if (servers) await servers.stop();
  });

  /* Runs check(combo) for every combination as concurrent subtests. */
  const each = (name, check, concurrency = true) => test(name, { concurrency }, async (t) => {
    await Promise.all(combos.map((combo) => t.test(combo.name, () => check(combo))));
  });

  each('set/get of the Foo graph: prototypes, Maps, Dates, BigInt, Set, shared references', async (combo) => {
    const { cache, errors, events } = cacheFor(combo);
    const foo = makeFoo();
    assert.strictEqual(await cache.set('foo', foo), true);
    const back = await cache.get('foo', Foo);
    sameGraph(back, foo);
    assert.ok(back instanceof Foo);
    assert.strictEqual(back.total(), foo.total());
    assert.strictEqual(back.bars[0].year(), 2020);
    assert.strictEqual(back.bars[0].baz, back.bars[1].baz);
    // The entry is one key, exactly prefix + key, holding envelope + document.
    const stored = await raw('GET', `${combo.prefix}foo`);
    assert.ok(stored.subarray(0, 9).equals(Buffer.from('darmok/1 ')), 'the envelope opens the entry');
    assert.strictEqual(cache.redisKey('foo'), `${combo.prefix}foo`);
    assert.deepStrictEqual(errors, []);
    assert.strictEqual(await cache.get('absent', Foo), null);
    assert.deepStrictEqual(cache.stats(), {
      hits: 1, l1Hits: 0, redisHits: 1, staleHits: 0, misses: 1, loads: 0, loadErrors: 0, lockWaits: 0, errors: 0,
      busMessages: 0, breakerRefusals: 0, hitRate: 0.5, bus: 'off', breaker: 'closed', l1Entries: 0
    });
    assert.deepStrictEqual(events, ['hit foo', 'miss absent']);
  });

  each('JSON entries are text, protobuf entries raw bytes; all 256 byte values survive', async (combo) => {
    const { cache, errors } = cacheFor(combo);
    const all = new Uint8Array(256).map((_, i) => i);
    const value = { bytes: all, buf: Buffer.from(all), text: 'caf\u00e9 \u{1f680}' };
    await cache.set('bin', value);
    const back = await cache.get('bin');
    sameGraph(back, value);
    const stored = await raw('GET', `${combo.prefix}bin`);
    if (combo.format === 'protobuf') {
      assert.ok(stored.toString('latin1').startsWith('darmok/1 protobuf '));
      assert.ok(stored.indexOf(Buffer.from(all)) > 0, 'the 256 bytes are stored as they are');
    } else {
      const textForm = stored.toString('utf8');
      assert.ok(Buffer.from(textForm, 'utf8').equals(stored), 'valid UTF-8 text');
      assert.match(textForm, /^darmok\/1 json [0-9]+\n\{"bytes":\{"\$Uint8Array":"AAECAw/);
      assert.ok(textForm.includes('caf\u00e9 \u{1f680}'), 'readable as text in redis-cli');
    }
    assert.deepStrictEqual(errors, []);
  });

  each('TTL: an entry expires (get misses, and Redis drops the key)', async (combo) => {
    const { cache } = cacheFor(combo, { ttl: 0.4 });
    await cache.set('short', makeFoo());
    await cache.set('long', makeFoo(), { ttl: 30 });
    const pttl = await raw('PTTL', `${combo.prefix}short`);
    assert.ok(pttl > 0 && pttl <= 400, `PX set atomically with the value (PTTL ${pttl})`);
    assert.ok(await cache.get('short', Foo) instanceof Foo);
    await sleep(550);
    assert.strictEqual(await cache.get('short', Foo), null);
    assert.strictEqual(await raw('EXISTS', `${combo.prefix}short`), 0);
    assert.ok(await cache.get('long', Foo) instanceof Foo, 'a per-call ttl');
  });

  each('mget: hits and misses mixed across slots, in order; mset; del', async (combo) => {
    const { cache, errors } = cacheFor(combo);
    // Four hash tags, three keys each: four slots, so one MGET per key
    // (12) and one per slot (4) differ.
    const keys = ['a', 'b', 'c', 'd'].flatMap((tag) => [0, 1, 2].map((i) => `{${combo.prefix}${tag}}m${i}`));
    const written = await cache.mset(keys.filter((_, i) => i % 3 !== 0).map((k) => [k, makeFoo(k)]));
    assert.strictEqual(written, 8);
    const ports0 = topology === 'cluster' ? servers.ports : [servers.port];
    await Promise.all(ports0.map((p) => send(p, 'CONFIG', 'RESETSTAT')));
    const got = await cache.mget(keys, Foo);
    const stats = await Promise.all(ports0.map((p) => commandStats(p)));
    assert.deepStrictEqual(got.map((v) => (v === null ? null : v.name)), keys.map((k, i) => (i % 3 === 0 ? null : k)));
    for (const v of got) if (v !== null) assert.ok(v instanceof Foo && v.total() === 102);
    const mgets = stats.map((s) => (s.mget ? s.mget.calls : 0));
    const slots = new Set(keys.map((k) => calculateSlot(combo.prefix + k)));
    if (topology === 'cluster') {
      assert.ok(slots.size > 1 && slots.size < keys.length, 'the keys span slots, some share one');
      assert.strictEqual(mgets.reduce((a, b) => a + b, 0), slots.size, `one MGET per slot (${mgets.join('+')} for ${slots.size} slots)`);
      assert.ok(mgets.filter((n) => n > 0).length > 1, 'more than one node answered');
    } else {
      assert.deepStrictEqual(mgets, [1], 'one MGET, one round trip');
    }
    for (const s of stats) {
      for (const [name, c] of Object.entries(s)) {
        assert.strictEqual(c.failed + c.rejected, 0, `${name}: no failed or rejected calls (CROSSSLOT)`);
      }
    }
    assert.deepStrictEqual(await cache.mget([]), []);
    assert.strictEqual(await cache.del(keys), 8);
    assert.deepStrictEqual(await cache.mget(keys, Foo), keys.map(() => null));
    assert.deepStrictEqual(errors, []);
  }, false);

  each('getOrSet: 50 concurrent callers, one loader call; then a hit', async (combo) => {
    const { cache, errors, events } = cacheFor(combo);
    let calls = 0;
    const loader = async () => {
      calls++;
      await sleep(30);
      return makeFoo('loaded');
    };
    const results = await Promise.all(Array.from({ length: 50 }, () => cache.getOrSet('herd', Foo, loader)));
    assert.strictEqual(calls, 1);
    for (const r of results) assert.ok(r instanceof Foo && r.name === 'loaded');
    const again = await cache.getOrSet('herd', Foo, loader);
    assert.strictEqual(calls, 1, 'served from Redis');
    assert.ok(again instanceof Foo && again.total() === 102);
    assert.notStrictEqual(again, results[0], 'decoded from Redis, not the loader\'s object');
    const s = cache.stats();
    assert.strictEqual(s.loads, 1);
    assert.strictEqual(s.misses, 1);
    assert.strictEqual(s.hits, 1);
    assert.deepStrictEqual(events, ['miss herd', 'load herd', 'hit herd']);
    assert.deepStrictEqual(errors, []);
  });

  each('getOrSet: null is cached with nullTtl, undefined is not cached', async (combo) => {
    const { cache } = cacheFor(combo, { nullTtl: 1 });
    let calls = 0;
    assert.strictEqual(await cache.getOrSet('none', Foo, () => { calls++; return null; }), null);
    assert.strictEqual(await cache.getOrSet('none', Foo, () => { calls++; return null; }), null);
    assert.strictEqual(calls, 1, 'the null was cached');
    const pttl = await raw('PTTL', `${combo.prefix}none`);
    assert.ok(pttl > 0 && pttl <= 1000, `nullTtl applies (PTTL ${pttl})`);
    assert.strictEqual(await cache.getOrSet('undef', Foo, () => { calls++; return undefined; }), undefined);
    assert.strictEqual(await raw('EXISTS', `${combo.prefix}undef`), 0);
    assert.strictEqual(await cache.set('undef', undefined), false);
  });

  each('getOrSet: a failing loader rejects every waiter; nothing is cached', async (combo) => {
    const { cache } = cacheFor(combo);
    let calls = 0;
    const boom = new Error('the data source is down');
    const loader = async () => {
      calls++;
      await sleep(20);
      throw boom;
    };
    const settled = await Promise.allSettled(Array.from({ length: 20 }, () => cache.getOrSet('fails', Foo, loader)));
    assert.strictEqual(calls, 1);
    for (const s of settled) {
      assert.strictEqual(s.status, 'rejected');
      assert.strictEqual(s.reason, boom);
    }
    assert.strictEqual(await raw('EXISTS', `${combo.prefix}fails`), 0);
    assert.strictEqual(cache.stats().loadErrors, 1);
    // The next call tries again.
    assert.strictEqual((await cache.getOrSet('fails', Foo, () => makeFoo('ok'))).name, 'ok');
  });

  each('grace: the stale value is served while one refresh runs, then the fresh one', async (combo) => {
    const { cache, errors, events } = cacheFor(combo, { ttl: 0.1, grace: 30 });
    await cache.getOrSet('g', Foo, () => makeFoo('v1'));
    await sleep(150);
    let refreshes = 0;
    let refreshed = false;
    const slow = async () => {
      refreshes++;
      await sleep(400);
      refreshed = true;
      return makeFoo('v2');
    };
    const stale = await Promise.all([cache.getOrSet('g', Foo, slow, { ttl: 30 }), cache.getOrSet('g', Foo, slow, { ttl: 30 })]);
    assert.strictEqual(refreshed, false, 'answered before the refresh ended');
    for (const v of stale) assert.ok(v instanceof Foo && v.name === 'v1');
    await sleep(20);
    assert.strictEqual((await cache.getOrSet('g', Foo, slow, { ttl: 30 })).name, 'v1', 'still stale while the refresh runs');
    await eventually('the refresh landed', () => refreshed);
    await sleep(50);
    assert.strictEqual(refreshes, 1, 'one refresh');
    assert.strictEqual((await cache.getOrSet('g', Foo, slow)).name, 'v2');
    assert.strictEqual(await cache.get('g', Foo).then((v) => v.name), 'v2');
    assert.strictEqual(cache.stats().staleHits, 2, 'the two concurrent callers shared one read');
    assert.deepStrictEqual(events.filter((e) => e.startsWith('stale')), ['stale g', 'stale g']);
    assert.deepStrictEqual(errors, []);
  });

  each('grace: the stale value is served when the loader throws or is slower than softTimeout; the error reported', async (combo) => {
    const { cache, errors } = cacheFor(combo, { ttl: 0.1, grace: 30, softTimeout: 300 });
    await Promise.all(['s1', 's2', 's3'].map((k) => cache.getOrSet(k, Foo, () => makeFoo('v1'))));
    await sleep(150);
    const boom = new Error('refresh failed');
    let landed = false;
    const [thrown, late, quick] = await Promise.all([
      cache.getOrSet('s1', Foo, async () => { await sleep(5); throw boom; }),
      // Slower than softTimeout: stale now, the fresh value once it lands.
      cache.getOrSet('s2', Foo, async () => { await sleep(700); landed = true; return makeFoo('v2'); }, { ttl: 30 }),
      // Within softTimeout: the fresh value at once.
      cache.getOrSet('s3', Foo, async () => { await sleep(5); return makeFoo('v3'); })
    ]);
    assert.strictEqual(thrown.name, 'v1');
    assert.deepStrictEqual(errors.map((e) => [e.err, e.key]), [[boom, 's1']]);
    assert.strictEqual(late.name, 'v1');
    assert.strictEqual(landed, false);
    assert.strictEqual(quick.name, 'v3');
    await eventually('the slow refresh landed', () => landed);
    await eventually('the slow refresh is stored', async () => (await cache.get('s2', Foo))?.name === 'v2');
  });

  each('hardTimeout: a miss whose loader is too slow rejects with ERR_LOAD_TIMEOUT; its value is cached later', async (combo) => {
    const { cache } = cacheFor(combo, { hardTimeout: 50 });
    await assert.rejects(cache.getOrSet('hard', Foo, async () => { await sleep(120); return makeFoo('late'); }),
      (err) => err instanceof DarmokError && err.code === 'ERR_LOAD_TIMEOUT');
    await eventually('the late value is stored', async () => (await cache.get('hard', Foo))?.name === 'late');
  });

  each('bad entries (corrupt, unknown class, newer version, wrong format, foreign): a miss, reloaded, reported; only the corrupt one overwritten', async (combo) => {
    const { cache, errors, events } = cacheFor(combo);
    const other = combo.format === 'json' ? 'protobuf' : 'json';
    const future = Date.now() + 60000;
    // A process that knows classes this one does not, and a newer Foo.
    const registry = createRegistry();
    const newer = createCodec({ format: combo.format, registry });
    class Unknown {}
    newer.serializable(Unknown, { key: 'nobody.knows' });
    class FooV2 {}
    newer.serializable(FooV2, { key: 'cache.Foo', version: 2, migrate: { 1: (d) => d } });
    const doc = (v) => newer.encodeEntity(v);
    const corruptDoc = combo.format === 'json' ? '{"$":"cache.Foo","name":' : Buffer.from([0x08, 0x01, 0x12, 0xff, 0xff, 0xff, 0xff]);
    const bad = {
      corrupt: [pack(combo.format, future, corruptDoc), null],
      unknownClass: [pack(combo.format, future, doc(Object.assign(new Unknown(), { a: 1 }))), 'ERR_UNKNOWN_CLASS'],
      newerVersion: [pack(combo.format, future, doc(Object.assign(new FooV2(), { name: 'from the future' }))), 'ERR_VERSION'],
      wrongFormat: [pack(other, future, createCodec({ format: other }).encodeEntity(makeFoo())), null],
      foreign: ['{"name":"written by someone else"}', null],
      newerEnvelope: ['darmok/2 json 1\n{}', null]
    };
    for (const [name, [bytes]] of Object.entries(bad)) await raw('SET', `${combo.prefix}${name}`, bytes);
    let loads = 0;
    for (const [name, [, code]] of Object.entries(bad)) {
      const before = errors.length;
      const v = await cache.getOrSet(name, Foo, () => { loads++; return makeFoo(name); });
      assert.ok(v instanceof Foo && v.name === name, `${name}: reloaded`);
      assert.strictEqual(errors.length, before + 1, `${name}: reported once`);
      const { err, key } = errors[before];
      assert.strictEqual(key, name);
      assert.ok(err instanceof DarmokError && err.code === 'ERR_CACHE_ENTRY', `${name}: ${err.code}`);
      if (code !== null) assert.strictEqual(err.cause.code, code, `${name}: cause`);
      if (name === 'corrupt') {
        // Overwritten with a good entry.
        const back = await cache.get(name, Foo);
        assert.ok(back instanceof Foo && back.name === name, `${name}: overwritten`);
      } else {
        // Another application's value, or one a newer process wrote: not
        // deleted, not overwritten (a get is a miss, reported again).
        assert.strictEqual(await cache.get(name, Foo), null, `${name}: still a miss`);
        await sleep(50);
        const stored = await raw('GET', `${combo.prefix}${name}`);
        assert.ok(stored !== null && stored.equals(Buffer.from(bad[name][0])), `${name}: left as it was`);
      }
    }
    assert.strictEqual(loads, Object.keys(bad).length);
    // get() of a bad entry: a miss, reported, the entry deleted.
    await raw('SET', `${combo.prefix}badget`, bad.corrupt[0]);
    const n = errors.length;
    assert.strictEqual(await cache.get('badget', Foo), null);
    assert.strictEqual(errors.length, n + 1);
    for (let i = 0; i < 20 && await raw('EXISTS', `${combo.prefix}badget`) === 1; i++) await sleep(10);
    assert.strictEqual(await raw('EXISTS', `${combo.prefix}badget`), 0, 'deleted');
    // mget of a bad entry beside a good one.
    await raw('SET', `${combo.prefix}badm`, bad.unknownClass[0]);
    const both = await cache.mget(['badm', 'corrupt'], Foo);
    assert.strictEqual(both[0], null);
    assert.strictEqual(both[1].name, 'corrupt');
    assert.strictEqual(events.filter((e) => e.startsWith('error ')).length, errors.length, 'each report is an error event');
    assert.ok(events.includes('error newerVersion ERR_CACHE_ENTRY'));
  });

  each('hardTimeout: a load past it is detached: the next call starts a new load, and its lock is released', async (combo) => {
    const { cache, errors } = cacheFor(combo, { hardTimeout: 50 });
    const timedOut = (err) => err instanceof DarmokError && err.code === 'ERR_LOAD_TIMEOUT';
    let calls = 0;
    // A loader that never settles: it must not block the calls after it.
    const never = () => { calls++; return new Promise(() => {}); };
    await Promise.all([0, 1, 2].map(() => assert.rejects(cache.getOrSet('ht', Foo, never), timedOut)));
    assert.strictEqual(calls, 1, 'concurrent callers share one load');
    // No hardTimeout of its own: a busy machine must not fail a quick load; were it joined to the
    // detached one it would never settle.
    const v = await cache.getOrSet('ht', Foo, () => { calls++; return makeFoo('next'); }, { hardTimeout: 0 });
    assert.strictEqual(v.name, 'next', 'the next call started a new load');
    assert.strictEqual(calls, 2);
    // Without a hardTimeout of its own, a call after the detached load is not stuck either.
    await assert.rejects(cache.getOrSet('ht2', Foo, never), timedOut);
    assert.strictEqual((await cache.getOrSet('ht2', Foo, () => makeFoo('free'), { hardTimeout: 0 })).name, 'free');
    // With the lock: released once its caller gave up, so another process loads at once.
    const lockKey = `${combo.prefix}htl${LOCK_SUFFIX}`;
    const locked = cacheFor(combo, { hardTimeout: 50, lock: { ttl: 5000, wait: 3000, poll: 10 } });
    const other = cacheFor(combo, { lock: { ttl: 5000, wait: 3000, poll: 10 } });
    await assert.rejects(locked.cache.getOrSet('htl', Foo, never), timedOut);
    await eventually('the lock is released', async () => (await raw('EXISTS', lockKey)) === 0);
    let otherCalls = 0;
    assert.strictEqual((await other.cache.getOrSet('htl', Foo, () => { otherCalls++; return makeFoo('other'); })).name, 'other');
    assert.strictEqual(otherCalls, 1, 'the other process loaded, not waited for lock.wait');
    assert.strictEqual(other.cache.stats().lockWaits, 0);
    assert.deepStrictEqual([...errors, ...locked.errors, ...other.errors], []);
  });

  each('getOrSet: concurrent callers of one key with different Classes do not share a result', async (combo) => {
    const { cache } = cacheFor(combo);
    const [a, b] = await Promise.all([
      cache.getOrSet('two-classes', Foo, async () => { await sleep(30); return makeFoo('a'); }),
      cache.getOrSet('two-classes', Bar, async () => { await sleep(30); return new Bar(new Date(0), null); })
    ]);
    assert.ok(a instanceof Foo);
    assert.ok(b instanceof Bar);
  });

  each('a wrong Class: get and mget reject with ERR_UNEXPECTED_CLASS; getOrSet replaces the entry (compare-and-set)', async (combo) => {
    const { cache, errors } = cacheFor(combo);
    const unexpected = (err) => err instanceof DarmokError && err.code === 'ERR_UNEXPECTED_CLASS';
    await cache.set('wrong-class', makeFoo('kept'));
    await assert.rejects(cache.get('wrong-class', Bar), unexpected);
    await assert.rejects(cache.mget(['wrong-class'], Bar), unexpected);
    assert.strictEqual((await cache.get('wrong-class', Foo)).name, 'kept', 'get and mget leave it');
    // A plain value where a Foo is asked for: the same, whatever decodeEntity itself checks.
    await cache.set('plain', { name: 'plain' });
    await assert.rejects(cache.get('plain', Foo), unexpected);
    // An Array where a Foo is asked for, refused as decodeEntity(blob, Class) refuses it, names both sides as the codec does.
    await cache.set('list', [makeFoo('in a list')]);
    for (const read of [() => cache.get('list', Foo), () => cache.mget(['list'], Foo)]) {
      await assert.rejects(read(), (err) => unexpected(err) && err.expected === 'cache.Foo' && err.actual === 'Array');
    }
    assert.deepStrictEqual(errors, []);
    // getOrSet: an entry of another class is unusable: reported, loaded, replaced.
    let calls = 0;
    const v = await cache.getOrSet('wrong-class', Bar, () => { calls++; return new Bar(new Date(0), null); });
    assert.ok(v instanceof Bar);
    assert.strictEqual(calls, 1);
    assert.strictEqual(errors.length, 1);
    assert.strictEqual(errors[0].err.code, 'ERR_CACHE_ENTRY');
    assert.strictEqual(errors[0].err.cause.code, 'ERR_UNEXPECTED_CLASS');
    assert.ok((await cache.get('wrong-class', Bar)) instanceof Bar, 'replaced');
    assert.ok((await cache.getOrSet('plain', Foo, () => makeFoo('p'))) instanceof Foo);
    assert.strictEqual((await cache.get('plain', Foo)).name, 'p');
    // A good entry written while the loader ran stays: the replacement compares first.
    await cache.set('race', makeFoo('wrong'));
    const w = await cache.getOrSet('race', Bar, async () => {
      await cacheFor(combo).cache.set('race', new Bar(new Date(1), 'written meanwhile'));
      return new Bar(new Date(2), 'loaded');
    });
    assert.strictEqual(w.baz, 'loaded');
    assert.strictEqual((await cache.get('race', Bar)).baz, 'written meanwhile');
  });

  each('getOrSet: a loader value of the wrong class rejects with ERR_UNEXPECTED_CLASS and stores nothing', async (combo) => {
    const { cache, errors } = cacheFor(combo);
    const wrong = [
      ['row', { name: 'a database row' }, 'plain object'], ['num', 3, 'number'], ['date', new Date(0), 'Date'],
      ['bar', new Bar(new Date(0), null), 'cache.Bar'], ['nullproto', Object.create(null), 'null-prototype object']
    ];
    for (const [name, value, actual] of wrong) {
      await assert.rejects(cache.getOrSet(name, Foo, () => value), (err) => err instanceof DarmokError && err.code === 'ERR_UNEXPECTED_CLASS' &&
        err.expected === 'cache.Foo' && err.actual === actual, name);
      assert.strictEqual(await raw('EXISTS', `${combo.prefix}${name}`), 0, `${name}: nothing stored`);
    }
    assert.strictEqual(await cache.getOrSet('null', Foo, () => null), null);
    assert.deepStrictEqual(errors, []);
  });

  each('errors that are not Redis failures are thrown: a value that does not encode, a missing core', async (combo) => {
    // A codec that encodes strictly: a WeakMap is ERR_UNSUPPORTED_TYPE.
    const real = createCodec({ format: combo.format });
    const strict = { format: real.format, registry: real.registry, encodeEntity: (v) => real.encodeEntity(v, { strict: true }), decodeEntity: real.decodeEntity };
    const { cache, errors } = cacheFor(combo, { codec: strict });
    const unsupported = (err) => err instanceof DarmokError && err.code === 'ERR_UNSUPPORTED_TYPE';
    await assert.rejects(cache.set('bad', { w: new WeakMap() }), unsupported);
    await assert.rejects(cache.getOrSet('bad', null, () => ({ w: new WeakMap() })), unsupported);
    assert.strictEqual(await raw('EXISTS', `${combo.prefix}bad`), 0);
    await cache.set('ok', makeFoo());
    const notReady = () => { throw new DarmokError('ERR_NOT_READY', 'the WebAssembly core is not loaded'); };
    const broken = cacheFor(combo, { codec: { format: real.format, registry: real.registry, encodeEntity: notReady, decodeEntity: notReady } });
    for (const call of [() => broken.cache.get('ok', Foo), () => broken.cache.getOrSet('ok', Foo, () => makeFoo()), () => broken.cache.set('x', 1)]) {
      await assert.rejects(call(), (err) => err.code === 'ERR_NOT_READY');
    }
    assert.deepStrictEqual([...errors, ...broken.errors], []);
  });

  each('another application\'s hash or list (WRONGTYPE): a miss, reported, never written over by get, mget, getOrSet', async (combo) => {
    for (const lock of [false, true]) {
      const { cache, errors } = cacheFor(combo, { lock });
      const key = `hash-${lock}`;
      await raw('HSET', `${combo.prefix}${key}`, 'field', 'theirs');
      assert.strictEqual(await cache.get(key, Foo), null);
      assert.deepStrictEqual(await cache.mget([key], Foo), [null]);
      let calls = 0;
      const v = await cache.getOrSet(key, Foo, () => { calls++; return makeFoo('ours'); });
      assert.strictEqual(v.name, 'ours');
      assert.strictEqual(calls, 1);
      assert.strictEqual((await raw('HGET', `${combo.prefix}${key}`, 'field')).toString(), 'theirs', 'left as it was');
      assert.ok(errors.length >= 2 && errors.every((e) => e.err.code === 'ERR_CACHE_ENTRY'), errors.map((e) => e.err.message).join('; '));
      assert.strictEqual(await raw('EXISTS', `${combo.prefix}${key}${LOCK_SUFFIX}`), 0);
    }
  });

  each('another application\'s hash written while the loader runs: reported, never written over by getOrSet\'s store', async (combo) => {
    for (const lock of [false, true]) {
      const { cache, errors } = cacheFor(combo, { lock });
      const key = `hash-meanwhile-${lock}`;
      const full = `${combo.prefix}${key}`;
      const v = await cache.getOrSet(key, Foo, async () => {
        await raw('HSET', full, 'f', 'theirs');
        return makeFoo('ours');
      });
      assert.strictEqual(v.name, 'ours', "the loader's value is returned");
      assert.strictEqual(String(await raw('TYPE', full)), 'hash');
      assert.strictEqual(String(await raw('HGET', full, 'f')), 'theirs', 'left as it was');
      assert.strictEqual(errors.length, 1, errors.map((e) => e.err.message).join('; '));
      assert.strictEqual(errors[0].err.code, 'ERR_CACHE_ENTRY');
      assert.match(errors[0].err.message, /another application's value/);
      assert.strictEqual(await raw('EXISTS', `${full}${LOCK_SUFFIX}`), 0);
      // An ordinary miss is still stored.
      await raw('DEL', full);
      assert.strictEqual((await cache.getOrSet(key, Foo, () => makeFoo('stored'))).name, 'stored');
      assert.strictEqual((await cache.get(key, Foo)).name, 'stored');
      // set() is the caller's own write: it writes over whatever the key holds.
      await raw('DEL', full);
      await raw('HSET', full, 'f', 'theirs');
      await cache.set(key, makeFoo('set'));
      assert.strictEqual((await cache.get(key, Foo)).name, 'set');
    }
  });

  each('the loader\'s ctx: stale, setTtl, setTags, skip; refreshAhead; jitter; logger', async (combo) => {
    const logged = [];
    const logger = { debug() {}, warn: (o, m) => logged.push(m === undefined ? o : m), error: (o, m) => logged.push(m === undefined ? o : m) };
    const { cache, errors } = cacheFor(combo, { ttl: 0.1, grace: 30, logger });
    await cache.getOrSet('ctx-c', Foo, () => makeFoo('v1'));
    await sleep(150);
    let seen;
    await cache.getOrSet('ctx-c', Foo, (ctx) => { seen = ctx.stale; return makeFoo('v2'); }, { softTimeout: 2000 });
    assert.ok(seen instanceof Foo && seen.name === 'v1', 'ctx.stale is the stale value');
    // setTtl: the value's own ttl.
    await cache.getOrSet('ctx-t', Foo, (ctx) => { ctx.setTtl(30); assert.strictEqual(ctx.stale, undefined); return makeFoo('ctx-t'); });
    const pttl = await raw('PTTL', `${combo.prefix}ctx-t`);
    assert.ok(pttl > 50000, `setTtl(30) + grace 30 (PTTL ${pttl})`);
    // skip: returned, not cached.
    let calls = 0;
    const skipped = (ctx) => { calls++; ctx.skip(); return makeFoo('skip'); };
    assert.strictEqual((await cache.getOrSet('ctx-s', Foo, skipped)).name, 'skip');
    assert.strictEqual(await raw('EXISTS', `${combo.prefix}ctx-s`), 0);
    await cache.getOrSet('ctx-s', Foo, skipped);
    assert.strictEqual(calls, 2);
    // setTags: deleteByTag reaches it.
    await cache.getOrSet('ctx-g', Foo, (ctx) => { ctx.setTags(['tg']); return makeFoo('ctx-g'); }, { ttl: 30 });
    assert.strictEqual((await cache.get('ctx-g', Foo)).name, 'ctx-g');
    await cache.deleteByTag('tg');
    assert.strictEqual(await cache.get('ctx-g', Foo), null);
    // refreshAhead: a hit past half the ttl starts one background load; the hit answers at once.
    const ahead = cacheFor(combo, { ttl: 0.4, refreshAhead: 0.5 });
    let loads = 0;
    const load = async () => { loads++; await sleep(20); return makeFoo(`r${loads}`); };
    await ahead.cache.getOrSet('ctx-ra', Foo, load);
    assert.strictEqual((await ahead.cache.getOrSet('ctx-ra', Foo, load)).name, 'r1');
    assert.strictEqual(loads, 1, 'a young hit does not refresh');
    await sleep(250);
    assert.strictEqual((await ahead.cache.getOrSet('ctx-ra', Foo, load)).name, 'r1', 'the hit answers with what it has');
    await eventually('refreshed ahead', async () => (await ahead.cache.get('ctx-ra', Foo))?.name === 'r2');
    assert.strictEqual(loads, 2);
    // jitter: ttls spread below the ttl.
    const jittered = cacheFor(combo, { ttl: 100, jitter: 0.5 });
    const ttls = [];
    for (let i = 0; i < 8; i++) {
      await jittered.cache.set(`ctx-j${i}`, i);
      ttls.push(await raw('PTTL', `${combo.prefix}ctx-j${i}`));
    }
    assert.ok(ttls.every((t) => t > 49000 && t <= 100000), ttls.join(' '));
    assert.ok(new Set(ttls.map((t) => Math.round(t / 1000))).size > 1, `spread: ${ttls.join(' ')}`);
    // The logger gets every report.
    await raw('SET', `${combo.prefix}ctx-foreign`, 'not an entry');
    assert.strictEqual(await cache.get('ctx-foreign', Foo), null);
    assert.strictEqual(logged.length, errors.length);
    assert.ok(logged.some((m) => /ERR_CACHE_ENTRY/.test(m)), logged.join('\n'));
  });

  each('unknown options are refused, naming the closest', async (combo) => {
    const refused = (near) => (err) => err instanceof DarmokError && err.code === 'ERR_INVALID_OPTION' && err.message.includes(`'${near}'`);
    assert.throws(() => createCache({ client: combo.client, grce: 10 }), refused('grace'));
    assert.throws(() => createCache({ client: combo.client, l1: { maxEntrys: 10 } }), refused('maxEntries'));
    assert.throws(() => createCache({ client: combo.client, lock: { tll: 10 } }), refused('ttl'));
    assert.throws(() => createCache({ client: combo.client, earlyExpiration: 0.8 }), (err) => err.code === 'ERR_INVALID_OPTION' && /refreshAhead/.test(err.message));
    const { cache } = cacheFor(combo);
    await assert.rejects(cache.set('k', 1, { tll: 1 }), refused('ttl'));
    await assert.rejects(cache.getOrSet('k', null, () => 1, { hardTimout: 1 }), refused('hardTimeout'));
  });

  each('a stale entry is not decoded by get, mget, or getOrSet past grace', async (combo) => {
    const { cache, errors } = cacheFor(combo);
    const corruptDoc = combo.format === 'json' ? '{"$":"cache.Foo","name":' : Buffer.from([0x08, 0x01, 0x12, 0xff, 0xff]);
    await raw('SET', `${combo.prefix}old`, pack(combo.format, Date.now() - 1000, corruptDoc), 'PX', '60000');
    assert.strictEqual(await cache.get('old', Foo), null);
    assert.deepStrictEqual(await cache.mget(['old'], Foo), [null]);
    await sleep(50);
    assert.strictEqual(await raw('EXISTS', `${combo.prefix}old`), 1, 'stale: a miss, not a bad entry');
    assert.strictEqual((await cache.getOrSet('old', Foo, () => makeFoo('new'))).name, 'new');
    assert.deepStrictEqual(errors, []);
  });

  each('lock: a refresh looks at the entry again once it holds the lock; a lock never taken is never released', async (combo) => {
    const { cache: plain } = cacheFor(combo);
    await plain.set('rl', makeFoo('old'), { ttl: 0.05, grace: 30 });
    await sleep(100);
    // Another process stores a fresh value between our read and our lock.
    let hook = () => plain.set('rl', makeFoo('fresh'), { ttl: 30 });
    const counted = { releases: 0 };
    const client = beforeLockTaken(combo.client, counted, () => {
      const h = hook;
      hook = null;
      return h === null ? undefined : h();
    });
    const { cache, errors } = cacheFor({ ...combo, client }, { grace: 30, softTimeout: 2000, lock: true });
    let calls = 0;
    const v = await cache.getOrSet('rl', Foo, () => { calls++; return makeFoo('loaded'); });
    assert.strictEqual(hook, null);
    assert.strictEqual(v.name, 'fresh');
    assert.strictEqual(calls, 0, 'the fresh value was there: no load');
    assert.deepStrictEqual(errors, []);
    // SET NX fails: the refresh runs without the lock, and sends no release.
    await plain.set('rl2', makeFoo('old'), { ttl: 0.05, grace: 30 });
    await sleep(100);
    hook = () => { throw new Error('injected SET NX failure'); };
    counted.releases = 0;
    const v2 = await cache.getOrSet('rl2', Foo, () => { calls++; return makeFoo('refreshed'); });
    assert.strictEqual(v2.name, 'refreshed');
    assert.strictEqual(calls, 1);
    assert.strictEqual(counted.releases, 0, 'no release of a lock never taken');
    assert.deepStrictEqual(errors.map((e) => e.err.code), ['ERR_REDIS']);
  });

  test('two Node processes missing one key with the lock on: one loader call', async () => {
    const script = path.join(__dirname, 'lock-child.cjs');
    const children = [0, 1].map(() => {
      const child = spawn(process.execPath, [script, topology, ports.join(',')], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d) => { out += d; });
      const ready = new Promise((resolve) => child.stdout.on('data', () => { if (out.includes('ready\n')) resolve(); }));
      const done = new Promise((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.split('ready\n')[1])) : reject(new Error(`child exited ${code}`)))));
      return { child, ready, done };
    });
    try {
      await Promise.all(children.map((c) => c.ready));
      for (const c of children) c.child.stdin.end('go\n');
      const [a, b] = await Promise.all(children.map((c) => c.done));
      assert.deepStrictEqual(Object.keys(a).sort(), combos.map((c) => c.name).sort());
      for (const name of Object.keys(a)) {
        assert.strictEqual(a[name].loads + b[name].loads, 1, `${name}: one loader call in two processes`);
        assert.strictEqual(a[name].value, 'locked');
        assert.strictEqual(b[name].value, 'locked');
        assert.strictEqual(a[name].errors + b[name].errors, 0);
        assert.strictEqual(a[name].lockWaits + b[name].lockWaits, 1);
      }
    } finally {
      for (const c of children) c.child.kill('SIGKILL');
    }
  });

  test('the lock is released (compare-and-delete) and a dead holder\'s lock only delays', async () => {
    await Promise.all(combos.map(async (combo) => {
      const { cache, errors, events } = cacheFor(combo, { lock: { ttl: 150, wait: 1000, poll: 10 } });
      await cache.getOrSet('rel', Foo, () => makeFoo('x'));
      assert.strictEqual(await raw('EXISTS', `${combo.prefix}rel${LOCK_SUFFIX}`), 0, `${combo.name}: released`);
      // A lock left by a process that died: taken over once it expires.
      await raw('SET', `${combo.prefix}dead${LOCK_SUFFIX}`, 'someone-else', 'PX', '100');
      const v = await cache.getOrSet('dead', Foo, () => makeFoo('took over'));
      assert.strictEqual(v.name, 'took over', combo.name);
      assert.strictEqual(cache.stats().lockWaits, 1);
      assert.ok(events.includes('lockWait dead'));
      assert.deepStrictEqual(errors, []);
    }));
  });

  test('Redis slow, then stopped mid-test: getOrSet answers from the loader within the timeout, failOpen: false rejects with ERR_REDIS, nothing hangs', async () => {
    for (const c of combos) await cacheFor(c).cache.set('before', makeFoo('before'));
    const phase = async (label) => {
      await Promise.all(combos.map(async (combo) => {
        const open = cacheFor(combo, { timeout: FAULT_TIMEOUT });
        const strict = cacheFor(combo, { failOpen: false, timeout: FAULT_TIMEOUT });
        const t0 = Date.now();
        const v = await open.cache.getOrSet('down', Foo, () => makeFoo('from the loader'));
        assert.ok(v instanceof Foo && v.name === 'from the loader', `${label} ${combo.name}`);
        assert.strictEqual(await open.cache.get('before', Foo), null);
        assert.deepStrictEqual(await open.cache.mget(['before', 'x'], Foo), [null, null]);
        assert.strictEqual(await open.cache.set('x', 1), false);
        assert.ok(open.errors.length >= 4 && open.errors.every((e) => e.err.code === 'ERR_REDIS' && e.err.cause instanceof Error),
          `${label} ${combo.name}: reported`);
        let loads = 0;
        for (const call of [
          () => strict.cache.getOrSet('down', Foo, () => { loads++; return makeFoo(); }),
          () => strict.cache.get('before', Foo),
          () => strict.cache.mget(['before'], Foo),
          () => strict.cache.set('x', 1),
          () => strict.cache.del('x')
        ]) {
          await assert.rejects(call(), (err) => err instanceof DarmokError && err.code === 'ERR_REDIS' && err.cause instanceof Error,
            `${label} ${combo.name}`);
        }
        assert.strictEqual(loads, 0, 'failOpen: false does not load');
        // Each call waited at most about one timeout; a generous bound, to see a hang.
        assert.ok(Date.now() - t0 < 12 * FAULT_TIMEOUT + 2000, `${label} ${combo.name}: no hang (${Date.now() - t0} ms)`);
      }));
    };
    const nodes = topology === 'cluster' ? servers.nodes : [servers];
    for (const n of nodes) await pause(n.pid);
    try {
      await phase('stopped (SIGSTOP: connected, no answer)');
    } finally {
      for (const n of nodes) process.kill(n.pid, 'SIGCONT');
    }
    for (const n of nodes) await n.stop();
    await sleep(50);
    await phase('killed');
  });
}

module.exports = { defineChecks };

'use strict';
/*
 * The cache's circuit breaker (js/cache/breaker.cjs): its state machine on
 * an injected clock, its options, and a real redis-server stopped with
 * SIGSTOP (connected, never answering) under node-redis and ioredis: the
 * breaker opens, a get then answers in well under 5 ms instead of paying
 * the timeout, a getOrSet goes straight to its loader, and after SIGCONT
 * the half-open probe closes the breaker again.
 */
const { test, before, after } = require('node:test');
const { performance } = require('node:perf_hooks');
const { assert } = require('../helpers.cjs');
const { createBreaker, BREAKER_DEFAULTS } = require('../../../js/internal.cjs').breaker;
const { createCache } = require('darmok/redis');
const { DarmokError } = require('../../../js/index.cjs');
const { startRedis, commandStats, send, pause } = require('../redis-servers.cjs');
const { CLIENTS, connect, close, makeFoo, Foo } = require('./matrix.cjs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function clocked(options) {
  const clock = { t: 1000 };
  const changes = [];
  const breaker = createBreaker(options, { now: () => clock.t, onChange: (s) => changes.push(s) });
  return { breaker, clock, changes };
}

test('closed: opens after threshold failures in a row within the window', () => {
  const { breaker, clock, changes } = clocked({ threshold: 3, window: 1000, cooldown: 500 });
  assert.strictEqual(breaker.state, 'closed');
  breaker.failure();
  breaker.failure();
  breaker.success(); // an answer in between: not in a row
  breaker.failure();
  breaker.failure();
  assert.strictEqual(breaker.state, 'closed');
  clock.t += 1001; // the first two are older than the window now
  breaker.failure();
  breaker.failure();
  assert.strictEqual(breaker.state, 'closed');
  assert.strictEqual(breaker.allow(), true);
  breaker.failure();
  assert.strictEqual(breaker.state, 'open');
  assert.deepStrictEqual(changes, ['open']);
  assert.strictEqual(breaker.allow(), false);
});

test('open: refuses until the cooldown, then one probe; its answer closes, its failure reopens', () => {
  const { breaker, clock, changes } = clocked({ threshold: 1, window: 1000, cooldown: 500 });
  breaker.failure();
  assert.strictEqual(breaker.state, 'open');
  clock.t += 499;
  assert.strictEqual(breaker.allow(), false);
  breaker.success(); // a late answer to a command sent before it opened
  assert.strictEqual(breaker.state, 'open');
  clock.t += 1;
  assert.strictEqual(breaker.allow(), true, 'the probe');
  assert.strictEqual(breaker.state, 'half-open');
  assert.strictEqual(breaker.allow(), false, 'one probe at a time');
  breaker.failure();
  assert.strictEqual(breaker.state, 'open');
  assert.strictEqual(breaker.allow(), false, 'a new cooldown');
  clock.t += 500;
  assert.strictEqual(breaker.allow(), true);
  breaker.success();
  assert.strictEqual(breaker.state, 'closed');
  assert.strictEqual(breaker.allow(), true);
  assert.deepStrictEqual(changes, ['open', 'half-open', 'open', 'half-open', 'closed']);
});

test('half-open: a probe whose answer never came is replaced after a cooldown', () => {
  const { breaker, clock } = clocked({ threshold: 1, cooldown: 100 });
  breaker.failure();
  clock.t += 100;
  assert.strictEqual(breaker.allow(), true);
  clock.t += 99;
  assert.strictEqual(breaker.allow(), false);
  clock.t += 1;
  assert.strictEqual(breaker.allow(), true);
});

test('breaker: false never opens; undefined and true take the defaults', () => {
  const off = createBreaker(false);
  for (let i = 0; i < 100; i++) off.failure();
  assert.strictEqual(off.allow(), true);
  assert.strictEqual(off.state, 'closed');
  for (const options of [undefined, true, {}]) {
    const { breaker } = clocked(options);
    for (let i = 1; i < BREAKER_DEFAULTS.threshold; i++) breaker.failure();
    assert.strictEqual(breaker.state, 'closed');
    breaker.failure();
    assert.strictEqual(breaker.state, 'open');
  }
});

test('bad breaker options are ERR_INVALID_OPTION, unknown names named with the closest', () => {
  const bad = (options, pattern) => assert.throws(() => createBreaker(options),
    (err) => err instanceof DarmokError && err.code === 'ERR_INVALID_OPTION' && pattern.test(err.message), String(pattern));
  bad({ treshold: 3 }, /unknown option 'treshold': did you mean 'threshold'/);
  bad({ cooldownMs: 3 }, /unknown option 'cooldownMs': did you mean 'cooldown'/);
  bad({ threshold: 0 }, /threshold must be a finite integer >= 1/);
  bad({ threshold: 2.5 }, /threshold/);
  bad({ window: -1 }, /window must be a finite number >= 1 \(ms\)/);
  bad({ cooldown: Infinity }, /cooldown/);
  bad({ cooldown: '5s' }, /cooldown/);
  bad(null, /must be true, false or/);
  bad('on', /must be true, false or/);
  bad([], /must be true, false or/);
  // createCache refuses them too, before any command is sent.
  const client = { sendCommand: () => Promise.resolve(null), isOpen: true, isReady: true, withTypeMapping() {} };
  assert.throws(() => createCache({ client, breaker: { cooldwn: 10 } }), (err) => err.code === 'ERR_INVALID_OPTION' && /did you mean 'cooldown'/.test(err.message));
});

/* ---- a real redis-server, SIGSTOPped ------------------------------------- */

let server;
let clients;

before(async () => {
  server = await startRedis();
  clients = [];
  for (const spec of CLIENTS) clients.push({ spec, client: await connect(spec, 'standalone', [server.port]) });
});

after(async () => {
  for (const { client } of clients || []) close(client);
  if (server) await server.stop();
});

test('Redis stopped (SIGSTOP): the breaker opens, get answers a miss without sending its GET, getOrSet loads at once; after SIGCONT the probe closes it', async () => {
  const TIMEOUT = 150;
  const COOLDOWN = 2000; // longer than the measuring, so no probe goes out during it
  const caches = clients.map(({ spec, client }) => {
    const errors = [];
    const states = [];
    const warnings = [];
    const logger = { debug() {}, warn: (msg) => warnings.push(String(msg)), error() {} };
    const cache = createCache({
      client, prefix: `breaker:${spec.id}:`, timeout: TIMEOUT, breaker: { threshold: 3, cooldown: COOLDOWN },
      onError: (err) => errors.push(err), logger
    });
    cache.on('breaker', (state) => states.push(state));
    return { name: spec.id, cache, errors, states, warnings };
  });
  for (const c of caches) assert.strictEqual(await c.cache.set('k', makeFoo('before')), true, c.name);
  const getsBefore = (await commandStats(server.port)).get?.calls || 0;

  await pause(server.pid);
  const figures = {};
  try {
    await Promise.all(caches.map(async (c) => {
      // Three timeouts in a row open it.
      for (let i = 0; i < 3; i++) assert.strictEqual(await c.cache.get('k', Foo), null, c.name);
      assert.deepStrictEqual(c.states, ['open'], c.name);
    }));
    // Measured one client at a time, so one's gets do not wait on another's.
    for (const c of caches) {
      const times = [];
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now();
        assert.strictEqual(await c.cache.get('k', Foo), null);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      figures[c.name] = { p50: times[99], p99: times[197], max: times[199] };
      const t0 = performance.now();
      const v = await c.cache.getOrSet('k', Foo, () => makeFoo('from the loader'));
      const loaded = performance.now() - t0;
      assert.strictEqual(v.name, 'from the loader', c.name);
      figures[c.name].getOrSet = loaded;
      // onError heard the three timeouts and the opening, once; the refused calls are counted instead.
      const opened = c.errors.filter((err) => /circuit breaker opened/.test(err.message));
      assert.strictEqual(opened.length, 1, c.name);
      assert.ok(opened[0] instanceof DarmokError && opened[0].code === 'ERR_REDIS' && opened[0].cause.name === 'TimeoutError', c.name);
      assert.strictEqual(c.errors.length, 4, `${c.name}: ${c.errors.length} reports`);
      assert.ok(c.cache.stats().breakerRefusals >= 201, `${c.name}: ${c.cache.stats().breakerRefusals} refusals counted`);
      // A command that was sent would pay the timeout; the GETs that reached
      // the server are counted below, once it runs again. p99, not the
      // slowest: a loaded machine may stall the process for one get.
      assert.ok(figures[c.name].p99 < TIMEOUT / 2, `${c.name}: gets took ${figures[c.name].p99.toFixed(1)} ms at p99: they waited for Redis`);
      assert.ok(loaded < TIMEOUT / 2, `${c.name}: getOrSet took ${loaded.toFixed(1)} ms: it sent its GET or SET`);
    }
  } finally {
    process.kill(server.pid, 'SIGCONT');
  }
  console.log('breaker open, get ms:', JSON.stringify(figures, (k, v) => (typeof v === 'number' ? Number(v.toFixed(3)) : v)));

  await sleep(COOLDOWN + 50);
  await Promise.all(caches.map(async (c) => {
    // The probe: the first command after the cooldown, answered.
    const back = await c.cache.get('k', Foo);
    assert.ok(back instanceof Foo && back.name === 'before', `${c.name}: the probe read the entry`);
    assert.deepStrictEqual(c.states, ['open', 'half-open', 'closed'], c.name);
    assert.strictEqual(c.errors.length, 4, `${c.name}: nothing more reported`);
    assert.ok(c.warnings.some((w) => /circuit breaker closed/.test(w)), `${c.name}: the closing is logged`);
    assert.strictEqual(await c.cache.set('k2', 1), true, c.name);
  }));
  // Per client: the probe's GET, and at most the three that timed out; none of the 200 refused.
  const gets = (await commandStats(server.port)).get.calls - getsBefore;
  assert.ok(gets >= caches.length && gets <= 4 * caches.length, `GETs the server ran while the breaker was open or probing: ${gets}`);
});

test('breaker: false: every command pays its timeout, as before', async () => {
  const { spec, client } = clients[1];
  const cache = createCache({ client, prefix: `nobreaker:${spec.id}:`, timeout: 100, breaker: false, onError() {} });
  await pause(server.pid);
  try {
    const t0 = performance.now();
    for (let i = 0; i < 8; i++) assert.strictEqual(await cache.get('k'), null);
    assert.ok(performance.now() - t0 >= 8 * 90, 'each get waited for its timeout');
  } finally {
    process.kill(server.pid, 'SIGCONT');
  }
});

test('the bus failing (PUBLISH refused by an ACL) while the data commands answer: the breaker stays closed', async () => {
  // An ACL user that may do everything but PUBLISH: every heartbeat of the bus fails, every GET and SET answers.
  const auth = { username: 'nopublish', password: 'nopublish-pw' };
  await send(server.port, 'ACL', 'SETUSER', auth.username, 'on', `>${auth.password}`, '~*', '&*', '+@all', '-publish');
  const combos = [];
  try {
    for (const spec of CLIENTS) {
      const client = await connect(spec, 'standalone', [server.port], auth);
      const states = [];
      // Heartbeats every 100 ms; two failures in a row would open the breaker.
      const cache = createCache({ client, prefix: `busfail:${spec.id}:`, l1: { ttl: 0.3 }, breaker: { threshold: 2 }, onError() {} });
      cache.on('breaker', (state) => states.push(state));
      combos.push({ name: spec.id, client, cache, states });
    }
    await sleep(800);
    for (const c of combos) {
      assert.strictEqual(c.cache.stats().bus, 'down', `${c.name}: the bus never heard a heartbeat`);
      assert.deepStrictEqual(c.states, [], `${c.name}: the breaker never changed state`);
      assert.strictEqual(await c.cache.set('k', makeFoo('sent')), true, c.name);
      assert.strictEqual((await c.cache.get('k', Foo)).name, 'sent', c.name);
    }
  } finally {
    for (const c of combos) {
      await c.cache.close();
      close(c.client);
    }
    await send(server.port, 'ACL', 'DELUSER', auth.username);
  }
});

'use strict';
/*
 * The cluster adapter's mget (js/cache/clients.cjs) against a scripted
 * stand-in for a node-redis cluster, so each case is exact and fast: a
 * failing slot gives an Error to its own keys only, every slot failing
 * rejects, a slot that never answers is cut off at withinMs, and
 * TRYAGAIN / MOVED / ASK are retried within it while other errors are
 * not. The real-cluster counterparts are in redis-cluster-failures.
 */
const { test, before, after } = require('node:test');
const { assert } = require('../helpers.cjs');
const calculateSlot = require('cluster-key-slot');
const { adapt } = require('../../../js/internal.cjs').clients;

/* A node-redis-5-shaped cluster whose MGET of a slot answers reply(slot, tries) (a value, an Error to reject with, or 'hang'). */
function fakeCluster(reply) {
  const tries = new Map();
  return {
    isOpen: true,
    isReady: true,
    masters: [],
    withTypeMapping() {},
    tries,
    sendCommand(key, readonly, args) {
      const slot = calculateSlot(key);
      const n = (tries.get(slot) || 0) + 1;
      tries.set(slot, n);
      const r = reply(slot, n);
      if (r === 'hang') return new Promise(() => {});
      if (r instanceof Error) return Promise.reject(r);
      return Promise.resolve(args.slice(1).map((k) => `v:${k}`));
    }
  };
}

// The adapter's timers are unref'd (a real client's socket keeps the
// process alive): here a timer of the test's own does.
let alive;
before(() => { alive = setInterval(() => {}, 1000); });
after(() => clearInterval(alive));

const keys = ['{a}1', '{b}1', '{a}2', '{c}1', '{b}2'];
const A = calculateSlot('{a}');
const B = calculateSlot('{b}');

test('one failing slot: its keys hold one shared Error, the others their values', { timeout: 5000 }, async () => {
  const down = new Error('connect ECONNREFUSED');
  const out = await adapt(fakeCluster((slot) => (slot === B ? down : 'ok'))).mget(keys, true, 200);
  assert.deepStrictEqual(out, ['v:{a}1', down, 'v:{a}2', 'v:{c}1', down]);
});

test('two failing slots: one AggregateError for all their keys', { timeout: 5000 }, async () => {
  const out = await adapt(fakeCluster((slot) => (slot === A || slot === B ? new Error(`down ${slot}`) : 'ok'))).mget(keys, true, 200);
  assert.ok(out[0] instanceof AggregateError && out[0].errors.length === 2 && /2 of 3 hash slots failed/.test(out[0].message));
  assert.deepStrictEqual(out.map((v) => (v instanceof Error ? 'E' : v)), ['E', 'E', 'E', 'v:{c}1', 'E']);
  assert.strictEqual(out[1], out[0]);
});

test('every slot failing rejects; one slot failing rejects as before', { timeout: 5000 }, async () => {
  await assert.rejects(adapt(fakeCluster(() => new Error('all down'))).mget(keys, true, 200), /all down|3 of 3/);
  await assert.rejects(adapt(fakeCluster(() => new Error('down'))).mget(['{a}1', '{a}2'], true, 200), /down/);
});

test('a slot that never answers is cut off at withinMs; the others are kept', { timeout: 5000 }, async () => {
  const t0 = Date.now();
  const out = await adapt(fakeCluster((slot) => (slot === A ? 'hang' : 'ok'))).mget(keys, true, 100);
  assert.ok(Date.now() - t0 < 1000);
  assert.ok(out[0] instanceof Error && out[0].name === 'TimeoutError' && out[2] === out[0]);
  assert.deepStrictEqual([out[1], out[3], out[4]], ['v:{b}1', 'v:{c}1', 'v:{b}2']);
});

test('TRYAGAIN, MOVED and ASK are retried within withinMs; other errors are not', { timeout: 5000 }, async () => {
  for (const code of ['TRYAGAIN Multiple keys request during rehashing of slot', 'MOVED 3999 127.0.0.1:6381', 'ASK 3999 127.0.0.1:6381']) {
    const c = fakeCluster((slot, n) => (slot === A && n < 4 ? new Error(code) : 'ok'));
    const out = await adapt(c).mget(keys, true, 1000);
    assert.deepStrictEqual(out, keys.map((k) => `v:${k}`), code);
    assert.strictEqual(c.tries.get(A), 4, code);
  }
  const c = fakeCluster((slot) => (slot === A ? new Error('CLUSTERDOWN The cluster is down') : 'ok'));
  const out = await adapt(c).mget(keys, true, 1000);
  assert.ok(out[0] instanceof Error);
  assert.strictEqual(c.tries.get(A), 1, 'not a moving slot: not retried');
  // A slot that keeps moving past the time gives up with its last reply.
  const t0 = Date.now();
  const stuck = await adapt(fakeCluster((slot) => (slot === A ? new Error('TRYAGAIN still') : 'ok'))).mget(keys, true, 150);
  assert.ok(stuck[0] instanceof Error && Date.now() - t0 < 1500);
});

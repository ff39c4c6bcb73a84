'use strict';
/*
 * darmok/redis's in-process tier and what keeps it right, against a real
 * redis-server and a real 3-master cluster, for every client (node-redis
 * 4, 5, 6; ioredis 5, 6): L1 hits touch no Redis and give new instances
 * (or one shared instance); the LRU bounds; two OS processes with `l1`
 * see each other's set, del, deleteByTag and clear after one bus delivery
 * (measured); clear and deleteByTag reach every node of a cluster; a bus
 * that goes down bounds L1 entries by l1.ttl, and the L1 is dropped when
 * it comes back; namespaces.
 */
const { test, before, after } = require('node:test');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { assert, sameGraph } = require('../helpers.cjs');
const { createCache } = require('darmok/redis');
const { DarmokError, createCodec, createRegistry } = require('../../../js/index.cjs');
const calculateSlot = require('cluster-key-slot');
const { startTopology, send } = require('../redis-servers.cjs');
const { TapeReader } = require('../../../js/internal.cjs').tapeReader;
const { connectAll, closeAll, makeFoo, Foo } = require('./matrix.cjs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function eventually(what, check, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await sleep(20);
  }
}

/* A child process of redis-l1-child.cjs: request(op) -> its result. */
function startChild(topology, ports) {
  const child = spawn(process.execPath, [path.join(__dirname, 'l1-child.cjs'), topology, ports.join(',')],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  const pending = new Map();
  let next = 0;
  let readyResolve;
  const ready = new Promise((resolve, reject) => {
    readyResolve = resolve;
    child.once('exit', (code) => reject(new Error(`the child exited (${code}) before it was ready`)));
  });
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'ready') return readyResolve();
    const reply = JSON.parse(line);
    const p = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error !== undefined) p.reject(new Error(reply.error));
    else p.resolve(reply.result);
  });
  return {
    ready,
    request(req) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.stdin.write(`${JSON.stringify({ ...req, id })}\n`);
      });
    },
    kill: () => child.kill('SIGKILL')
  };
}

function defineL1Checks(topology) {
  let servers;
  let ports;
  let combos;
  let raw; // (cmd, key, ...args) -> reply from the node serving key

  before(async () => {
    ({ servers, ports, raw } = await startTopology(topology));
    combos = (await connectAll(topology, ports)).filter((c) => c.format === 'json');
  });

  after(async () => {
    if (combos) closeAll(combos);
    if (servers) await servers.stop();
  });

  const each = (name, check) => test(`${topology}: ${name}`, async (t) => {
    await Promise.all(combos.map((combo) => t.test(combo.spec.id, () => check(combo, t))));
  });

  /*
   * A cache with l1 whose bus is up. Its l1.ttl is long unless given: a
   * stall of the shared machine longer than l1.ttl would take the bus for
   * down, and drop the L1 a check expects to answer.
   */
  async function l1Cache(combo, given = {}, more = {}) {
    const l1 = { ttl: 30, ...given };
    const errors = [];
    const logged = [];
    const log = (m) => logged.push(typeof m === 'string' ? m : JSON.stringify(m));
    const cache = createCache({
      client: combo.client, prefix: `l1:${combo.spec.id}:`, timeout: 2000, l1, onError: (err) => errors.push(err),
      logger: { debug: log, warn: log, error: log }, ...more
    });
    await eventually('the bus is up', () => cache.stats().bus === 'up');
    return { cache, errors, logged };
  }

  each('a cache closed while its bus still connects reports nothing and leaves no subscriber', async (combo) => {
    const logged = [];
    const log = (m) => logged.push(typeof m === 'string' ? m : JSON.stringify(m));
    const errors = [];
    const cache = createCache({
      client: combo.client, prefix: `l1-closed:${combo.spec.id}:`, l1: true, onError: (err) => errors.push(err),
      logger: { debug() {}, warn: log, error: log }
    });
    await cache.close();
    await sleep(300);
    assert.deepStrictEqual(logged, []);
    assert.deepStrictEqual(errors, []);
    const counts = await Promise.all(ports.map((p) => send(p, 'PUBSUB', 'NUMSUB', `darmok:bus:l1-closed:${combo.spec.id}:`)));
    assert.ok(counts.every((reply) => Number(reply[1]) === 0), JSON.stringify(counts));
  });

  each('an L1 hit touches no Redis; by default a new instance per hit, with shared one instance', async (combo) => {
    const { cache, errors } = await l1Cache(combo);
    const full = cache.redisKey('a');
    try {
      await cache.set('a', makeFoo('in l1'));
      // Changed behind the cache's back (no invalidation): the L1 still answers.
      await raw('SET', full, 'not read');
      const one = await cache.get('a', Foo);
      const two = await cache.get('a', Foo);
      assert.ok(one instanceof Foo && one.name === 'in l1' && one.total() === 102);
      assert.notStrictEqual(one, two, 'a new instance per hit');
      one.name = 'mutated';
      assert.strictEqual((await cache.get('a', Foo)).name, 'in l1', 'a caller\'s change is not seen by the next');
      assert.strictEqual((await cache.getOrSet('a', Foo, () => { throw new Error('not called'); })).name, 'in l1');
      assert.deepStrictEqual((await cache.mget(['a'], Foo)).map((v) => v.name), ['in l1']);
      const s = cache.stats();
      assert.strictEqual(s.l1Hits, 5);
      assert.strictEqual(s.redisHits, 0);
      assert.deepStrictEqual(errors, []);
    } finally {
      await cache.close();
    }
    const shared = await l1Cache(combo, { shared: true });
    try {
      await shared.cache.set('s', makeFoo('shared'));
      const a = await shared.cache.get('s', Foo);
      assert.strictEqual(await shared.cache.get('s', Foo), a, 'one shared instance');
      await assert.rejects(shared.cache.get('s', class Other {}), (err) => err instanceof DarmokError && err.code === 'ERR_UNEXPECTED_CLASS');
    } finally {
      await shared.cache.close();
    }
  });

  /*
   * A graph of every kind a hit rebuilds from its kept tape, as an older
   * deploy wrote it: Shelf at version 1, read by a codec whose Shelf is at
   * version 2 (its migrate runs on every hit). Returns { write, read, Shelf,
   * graph }: write's codec (version 1) and read's (version 2), each with
   * a registry of its own.
   */
  function versionedGraph(format) {
    class Part {
      constructor(name, weight) {
        this.name = name;
        this.weight = weight; // a BigInt
        this.owner = null; // the Shelf: the cycle
      }
    }
    class ShelfV1 {
      constructor(name) {
        this.name = name;
      }
    }
    class Shelf {
      get title() {
        return `${this.label}: ${this.parts.size} parts`;
      }
    }
    const write = createCodec({ format, registry: createRegistry() });
    const read = createCodec({ format, registry: createRegistry() });
    for (const c of [write, read]) c.serializable(Part, { key: 'l1.Part' });
    write.serializable(ShelfV1, { key: 'l1.Shelf', nested: [Part] });
    read.serializable(Shelf, { key: 'l1.Shelf', version: 2, nested: [Part], migrate: { 1: (d) => ({ ...d, label: d.name.toUpperCase() }) } });
    const shelf = new ShelfV1('north');
    const shared = new Part('shared', 2n ** 70n);
    shared.owner = shelf;
    shelf.parts = new Map([['a', shared], ['b', new Part('b', -3n)]]);
    shelf.first = shared;
    shelf.colors = new Set(['red', 'grün']);
    shelf.when = new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6));
    shelf.blob = Buffer.from([1, 2, 3, 250]);
    shelf.note = 'Grüße aus Köln. '.repeat(20);
    shelf.ascii = 'plain ASCII text, long enough to be sliced from the document. '.repeat(3);
    return { write, read, Shelf, graph: shelf };
  }

  each('an L1 hit rebuilds exactly what decodeEntity gives, a new graph each time, in both formats', async (combo) => {
    for (const format of ['json', 'protobuf']) {
      const { write, read, Shelf, graph } = versionedGraph(format);
      const prefix = `l1-graph:${combo.spec.id}:${format}:`;
      const old = createCache({ client: combo.client, prefix, codec: write });
      const { cache, errors } = await l1Cache(combo, {}, { prefix, codec: read });
      try {
        await old.set('g', graph);
        const expected = read.decodeEntity(write.encodeEntity(graph), Shelf);
        assert.ok(expected instanceof Shelf && expected.label === 'NORTH' && expected.first === expected.parts.get('a'));
        assert.strictEqual(expected.first.owner, expected);
        sameGraph(await cache.get('g', Shelf), expected); // read from Redis, then kept in the L1
        await raw('SET', cache.redisKey('g'), 'not read'); // behind the cache's back: only the L1 can answer
        const one = await cache.get('g', Shelf);
        const two = await cache.get('g', Shelf);
        sameGraph(one, expected);
        sameGraph(two, expected);
        assert.strictEqual(one.title, 'NORTH: 2 parts');
        for (const pick of [(v) => v, (v) => v.parts, (v) => v.first, (v) => v.colors, (v) => v.when, (v) => v.blob]) {
          assert.notStrictEqual(pick(one), pick(two), 'nothing shared between two hits');
        }
        one.label = 'changed';
        one.first.weight = 0n;
        one.first.owner = null;
        one.parts.delete('b');
        one.colors.add('blue');
        one.when.setTime(0);
        one.blob[0] = 99;
        sameGraph(await cache.get('g', Shelf), expected); // a caller's changes are not seen by the next hit
        assert.deepStrictEqual((await cache.mget(['g'], Shelf)).map((v) => v.label), ['NORTH']);
        const s = cache.stats();
        assert.deepStrictEqual([s.l1Hits, s.redisHits], [4, 1]);
        assert.deepStrictEqual(errors, []);
      } finally {
        await cache.close();
      }
    }
  });

  /*
   * The first hit of an entry keeps the strings its rebuild reads; the hits
   * after it take them (fewer strings made from the tape's bytes: counted
   * in the reader, during the hit, which runs synchronously) and still give
   * what decodeEntity gives, where the reader goes back (an Error's name
   * read ahead, a protobuf string reference).
   */
  each('hits after the first take the strings it made, and give what decodeEntity gives, in both formats', async (combo) => {
    class Note {
      constructor(text) {
        this.text = text;
      }
    }
    const made = { n: 0 };
    const strFromBytes = TapeReader.prototype.strFromBytes;
    const counted = function counted() {
      made.n++;
      return strFromBytes.call(this);
    };
    const countedHit = (cache, Class) => {
      TapeReader.prototype.strFromBytes = counted;
      made.n = 0;
      try {
        const p = cache.get('g', Class);
        return { p, n: made.n };
      } finally {
        TapeReader.prototype.strFromBytes = strFromBytes;
      }
    };
    for (const format of ['json', 'protobuf']) {
      const codec = createCodec({ format, registry: createRegistry() });
      codec.serializable(Note, { key: 'memo.Note' });
      const err = new RangeError('out of range: ünïcode');
      err.code = 'E_RANGE';
      const repeated = 'a string repeated across the graph, long enough';
      const graph = {
        err, re: /ab+c/giu, big: -(2n ** 80n), when: new Date(0),
        m: new Map([['k1', repeated], ['k2', repeated], [7, 'seven']]), s: new Set([repeated, 'ß']),
        notes: [new Note(repeated), new Note('日本語'), new Note(repeated)], bytes: Buffer.from('bytes')
      };
      const expected = codec.decodeEntity(codec.encodeEntity(graph));
      const { cache, errors } = await l1Cache(combo, {}, { prefix: `l1-memo:${combo.spec.id}:${format}:`, codec });
      try {
        await cache.set('g', graph);
        const first = countedHit(cache);
        sameGraph(await first.p, expected);
        assert.ok(first.n > 0, `${format}: the first hit makes its strings`);
        for (let i = 0; i < 3; i++) {
          const again = countedHit(cache);
          sameGraph(await again.p, expected);
          assert.ok(again.n < first.n, `${format}: ${again.n} strings made again of ${first.n}`);
        }
        await cache.set('g', new Note(repeated));
        for (let i = 0; i < 2; i++) assert.strictEqual((await cache.get('g', Note)).text, repeated);
        await assert.rejects(cache.get('g', class Other {}), (e) => e instanceof DarmokError && e.code === 'ERR_UNEXPECTED_CLASS');
        const s = cache.stats();
        assert.deepStrictEqual([s.l1Hits, s.redisHits], [6, 0]);
        assert.deepStrictEqual(errors, []);
      } finally {
        await cache.close();
      }
    }
  });

  each('the strings a first hit keeps count toward maxBytes', async (combo) => {
    // The tape and the text fit, not with the long string kept too.
    const value = { s: 'x'.repeat(4000) };
    const { cache, errors } = await l1Cache(combo, { maxBytes: 12000 });
    try {
      await cache.set('big', value);
      assert.strictEqual(cache.stats().l1Entries, 1);
      assert.deepStrictEqual(await cache.get('big'), value);
      assert.strictEqual(cache.stats().l1Entries, 0, 'dropped once its strings are counted');
      assert.deepStrictEqual(await cache.get('big'), value);
      assert.deepStrictEqual([cache.stats().l1Hits, cache.stats().redisHits], [1, 1]);
      assert.deepStrictEqual(errors, []);
    } finally {
      await cache.close();
    }
  });

  each('the LRU evicts the least recently used entry after repeated hits of one key', async (combo) => {
    const { cache, logged } = await l1Cache(combo, { maxEntries: 2 });
    try {
      const inL1 = async (keys) => {
        for (const k of ['a', 'b', 'c', 'd']) await raw('SET', cache.redisKey(k), 'changed behind the cache');
        const before = cache.stats().l1Hits;
        const names = [];
        for (const k of keys) names.push((await cache.get(k, Foo))?.name ?? null);
        return { names, hits: cache.stats().l1Hits - before };
      };
      await cache.set('a', makeFoo('a'));
      await cache.get('a', Foo);
      await cache.set('b', makeFoo('b'));
      await cache.get('a', Foo);
      await cache.get('a', Foo);
      await cache.set('c', makeFoo('c')); // b is the least recently used
      assert.deepStrictEqual(await inL1(['a', 'c']), { names: ['a', 'c'], hits: 2 }, logged.join('; '));
      // c was hit last (inL1): a hit of a, then a put, evicts c.
      await cache.get('a', Foo);
      await cache.set('d', makeFoo('d'));
      assert.deepStrictEqual(await inL1(['a', 'd', 'c']), { names: ['a', 'd', null], hits: 2 });
    } finally {
      await cache.close();
    }
  });

  each('the strings a hit keeps serve only its own entry: two keys alike but for their strings, and a key set again', async (combo) => {
    // Strings of one length at the same places: one tape offset each in both documents.
    const doc = (tag, long) => ({ tag, long: long.repeat(8), list: [tag, `${tag}-${tag}`], m: new Map([[tag, long]]) });
    const a = doc('alpha', 'Köln is in Germany. ');
    const b = doc('bravo', 'Lyon is in Southern. ');
    const c = doc('delta', 'plain ASCII, the same length!');
    const { cache, errors } = await l1Cache(combo);
    try {
      await cache.set('a', a);
      await cache.set('b', b);
      for (let i = 0; i < 3; i++) {
        assert.deepStrictEqual(await cache.get('a'), a);
        assert.deepStrictEqual(await cache.get('b'), b);
      }
      await cache.set('a', c);
      for (let i = 0; i < 3; i++) assert.deepStrictEqual(await cache.get('a'), c, 'the value set again');
      assert.deepStrictEqual(await cache.get('b'), b);
      const s = cache.stats();
      assert.deepStrictEqual([s.l1Hits, s.redisHits], [10, 0]);
      assert.deepStrictEqual(errors, []);
    } finally {
      await cache.close();
    }
  });

  each('the L1 counts the tape a hit keeps in place of the document, and stays within maxBytes', async (combo) => {
    // Small integers: a byte or two each in a document, five on a tape.
    const value = (k) => ({ k, n: Array.from({ length: 200 }, (_, i) => i % 10) });
    const docBytes = (k) => createCodec({ format: 'json' }).encodeEntity(value(k), { bytes: true }).length;
    const keys = ['n1', 'n2', 'n3', 'n4'];
    const probe = await l1Cache(combo);
    const fits = keys.reduce((sum, k) => sum + docBytes(k) + probe.cache.redisKey(k).length, 0);
    await probe.cache.close();
    const { cache, errors } = await l1Cache(combo, { maxBytes: fits });
    try {
      for (const k of keys) await cache.set(k, value(k));
      assert.strictEqual(cache.stats().l1Entries, 4, 'the four documents fit');
      for (const k of keys) assert.deepStrictEqual(await cache.get(k), value(k));
      assert.ok(cache.stats().l1Entries < 4, `${cache.stats().l1Entries} entries: their tapes do not all fit`);
      for (const k of keys) assert.deepStrictEqual(await cache.get(k), value(k), 'evicted entries read from Redis');
      assert.deepStrictEqual(errors, []);
    } finally {
      await cache.close();
    }
  });

  each('a GET answered after an invalidation of its key does not put the old value in the L1', async (combo) => {
    // The client, seen through a proxy that holds the reply of a GET of `race` for 300 ms.
    const held = new Proxy(combo.client, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (typeof v !== 'function') return v;
        if (prop !== 'getBuffer' && prop !== 'sendCommand') return v.bind(target);
        return (...args) => {
          const words = args.flat().map(String);
          const reply = v.apply(target, args);
          if (!(words.includes('GET') || prop === 'getBuffer') || !words.some((w) => w.endsWith(':race'))) return reply;
          return reply.then((r) => sleep(300).then(() => r));
        };
      }
    });
    const { cache } = await l1Cache({ ...combo, client: held });
    const other = await l1Cache(combo);
    try {
      await other.cache.set('race', makeFoo('v1'));
      await sleep(100);
      const slow = cache.get('race', Foo); // GET sent now: it reads v1
      await sleep(50);
      await other.cache.set('race', makeFoo('v2')); // its invalidation arrives before the held reply
      assert.strictEqual((await slow).name, 'v1', 'the concurrent get answers what it read');
      assert.strictEqual((await cache.get('race', Foo)).name, 'v2', 'the L1 did not keep v1');
    } finally {
      await cache.close();
      await other.cache.close();
    }
  });

  each('the LRU is bounded by entries and by bytes', async (combo) => {
    const { cache, logged } = await l1Cache(combo, { maxEntries: 3 });
    try {
      for (const k of ['k1', 'k2', 'k3']) await cache.set(k, makeFoo(k));
      await cache.get('k1', Foo); // k1 is now the most recently used: k2 goes first
      await cache.set('k4', makeFoo('k4'));
      assert.strictEqual(cache.stats().l1Entries, 3);
      for (const k of ['k1', 'k2', 'k3', 'k4']) await raw('SET', cache.redisKey(k), 'changed behind the cache');
      const before = cache.stats().l1Hits;
      assert.strictEqual((await cache.get('k1', Foo))?.name, 'k1', logged.join('; '));
      assert.strictEqual(await cache.get('k2', Foo), null, 'k2 was evicted: read from Redis');
      assert.strictEqual(cache.stats().l1Hits, before + 1);
    } finally {
      await cache.close();
    }
    const small = await l1Cache(combo, { maxBytes: 1500 });
    try {
      for (const k of ['b1', 'b2', 'b3', 'b4']) await small.cache.set(k, makeFoo(k)); // about 500 bytes each
      assert.ok(small.cache.stats().l1Entries < 4 && small.cache.stats().l1Entries >= 1, `${small.cache.stats().l1Entries} entries; ${small.logged.join('; ')}`);
    } finally {
      await small.cache.close();
    }
  });

  each('the bus goes down: L1 entries are served for l1.ttl at most, and the L1 is dropped when it is back', async (combo) => {
    const { cache } = await l1Cache(combo, { ttl: 0.2 });
    const other = await l1Cache(combo, { ttl: 0.2 });
    const bump = async (from, to) => raw('SET', cache.redisKey('b'), (await raw('GET', cache.redisKey('b'))).toString().replace(`"${from}"`, `"${to}"`));
    try {
      await cache.set('b', makeFoo('v1'));
      await bump('v1', 'v2'); // behind the cache's back: no invalidation
      assert.strictEqual((await cache.get('b', Foo)).name, 'v1', 'from the L1');
      // The subscribers' connections are killed: messages sent meanwhile are lost.
      for (const p of ports) await send(p, 'CLIENT', 'KILL', 'TYPE', 'pubsub');
      if (topology === 'standalone') {
        // The client says it reconnects: the bus is down, the entry older than l1.ttl.
        await eventually('the L1 stops serving the old value', async () => (await cache.get('b', Foo)).name === 'v2');
      }
      // Another process's change while this one's subscriber may be away:
      // delivered, or lost and seen as a gap in that process's messages.
      await other.cache.set('b', makeFoo('v3'));
      await eventually('the change is seen', async () => (await cache.get('b', Foo)).name === 'v3');
      await eventually('the bus is back up', () => cache.stats().bus === 'up', 10000);
    } finally {
      await cache.close();
      await other.cache.close();
    }
  });

  each('namespaces: a cache over prefix + name + ":", sharing the client and the bus; clear() of one leaves the others', async (combo) => {
    const { cache } = await l1Cache(combo);
    try {
      const users = cache.namespace('users');
      const posts = cache.namespace('posts');
      assert.strictEqual(cache.namespace('users'), users);
      assert.strictEqual(users.redisKey('1'), `${cache.prefix}users:1`);
      await users.set('1', makeFoo('u1'));
      await posts.set('1', makeFoo('p1'));
      await cache.set('top', makeFoo('top'));
      assert.strictEqual((await users.get('1', Foo)).name, 'u1');
      assert.ok(await users.clear() >= 1);
      assert.strictEqual(await users.get('1', Foo), null);
      assert.strictEqual(await raw('EXISTS', users.redisKey('1')), 0);
      assert.strictEqual((await posts.get('1', Foo)).name, 'p1');
      assert.strictEqual((await cache.get('top', Foo)).name, 'top');
      assert.throws(() => cache.namespace(''), (err) => err.code === 'ERR_INVALID_OPTION');
      const bare = createCache({ client: combo.client });
      await assert.rejects(bare.clear(), (err) => err.code === 'ERR_INVALID_OPTION', 'no clear() of a whole database');
    } finally {
      await cache.close();
    }
  });

  each('tags: deleteByTag makes every entry with the tag a miss (getOrSet reloads), others stay', async (combo) => {
    const { cache, errors } = await l1Cache(combo);
    const plain = createCache({ client: combo.client, prefix: `l1:${combo.spec.id}:` });
    try {
      await cache.set('t1', makeFoo('t1'), { tags: ['team:1', 'all'] });
      await cache.set('t2', makeFoo('t2'), { tags: 'team:2' });
      await cache.getOrSet('t3', Foo, (ctx) => { ctx.setTags(['team:1']); return makeFoo('t3'); });
      assert.strictEqual((await plain.get('t1', Foo)).name, 't1', 'a tagged entry reads without the L1 too');
      assert.strictEqual(await cache.deleteByTag('team:1'), true);
      assert.strictEqual(await cache.get('t1', Foo), null);
      assert.strictEqual(await plain.get('t1', Foo), null, 'a process without L1 sees it from Redis');
      assert.strictEqual(await plain.get('t3', Foo), null);
      assert.strictEqual((await cache.get('t2', Foo)).name, 't2');
      assert.strictEqual((await cache.getOrSet('t1', Foo, () => makeFoo('reloaded'), { tags: ['team:1'] })).name, 'reloaded');
      assert.strictEqual((await plain.get('t1', Foo)).name, 'reloaded', 'written after the deletion: fresh');
      assert.deepStrictEqual(errors, []);
    } finally {
      await cache.close();
    }
  });

  test(`${topology}: two OS processes with l1: set, del, deleteByTag and clear in one are seen by the other's next get after one bus delivery`, async (t) => {
    const a = startChild(topology, ports);
    const b = startChild(topology, ports);
    try {
      await Promise.all([a.ready, b.ready]);
      const delays = [];
      for (const combo of combos) {
        const client = combo.spec.id;
        const get = (p, key) => p.request({ op: 'get', client, key });
        /* Runs change in a, then waits for b's next bus delivery: resolves to b's get of key after it. */
        const across = async (change, key) => {
          const delivered = b.request({ op: 'nextInvalidation', client });
          const t0 = Date.now();
          await change();
          const at = await delivered;
          delays.push(at - t0);
          return get(b, key);
        };
        await a.request({ op: 'set', client, key: 'x', value: 'v1', tags: ['g'] });
        await a.request({ op: 'set', client, key: 'y', value: 'y1' });
        assert.strictEqual(await get(b, 'x'), 'v1');
        await sleep(100); // a's own invalidations of x and y reach b
        assert.strictEqual(await get(b, 'x'), 'v1');
        const before = (await b.request({ op: 'stats', client })).l1Hits;
        assert.strictEqual(await get(b, 'x'), 'v1');
        assert.strictEqual(await get(b, 'y'), 'y1');
        const hits = (await b.request({ op: 'stats', client })).l1Hits - before;
        assert.ok(hits >= 1, `b served x from its L1 (${hits} L1 hits)`);
        assert.strictEqual(await across(() => a.request({ op: 'set', client, key: 'x', value: 'v2', tags: ['g'] }), 'x'), 'v2', `${client}: set`);
        assert.strictEqual(await across(() => a.request({ op: 'deleteByTag', client, tags: ['g'] }), 'x'), null, `${client}: deleteByTag`);
        assert.strictEqual(await get(b, 'y'), 'y1');
        assert.strictEqual(await across(() => a.request({ op: 'del', client, key: 'y' }), 'y'), null, `${client}: del`);
        await a.request({ op: 'set', client, key: 'z', value: 'z1' });
        assert.strictEqual(await get(b, 'z'), 'z1');
        assert.strictEqual(await across(() => a.request({ op: 'clear', client }), 'z'), null, `${client}: clear`);
        const sb = await b.request({ op: 'stats', client });
        assert.deepStrictEqual(sb.errors, []);
        assert.ok(sb.busMessages >= 4);
      }
      delays.sort((x, y) => x - y);
      t.diagnostic(`bus delivery, from the change's call to the other process's L1 invalidated: median ${delays[delays.length >> 1]} ms, max ${delays[delays.length - 1]} ms over ${delays.length}`);
      assert.ok(delays[delays.length - 1] < 5000, 'a generous bound');
    } finally {
      a.kill();
      b.kill();
    }
  });

  each('clear() and deleteByTag reach every key of the cache, on every node', async (combo) => {
    const { cache } = await l1Cache(combo);
    try {
      const keys = Array.from({ length: 60 }, (_, i) => `c${i}`);
      await cache.mset(keys.map((k) => [k, makeFoo(k)]), { tags: ['every'] });
      const nodes = new Set(keys.map((k) => calculateSlot(cache.redisKey(k))));
      if (topology === 'cluster') assert.ok(nodes.size > 3);
      const other = createCache({ client: combo.client, prefix: `l1other:${combo.spec.id}:` });
      await other.set('c0', makeFoo('other'));
      await cache.deleteByTag('every');
      assert.deepStrictEqual(await cache.mget(keys, Foo), keys.map(() => null), 'deleteByTag: every key a miss');
      await cache.mset(keys.map((k) => [k, makeFoo(k)]));
      assert.ok(await cache.clear() >= keys.length);
      for (const k of keys) assert.strictEqual(await raw('EXISTS', cache.redisKey(k)), 0, k);
      assert.strictEqual((await other.get('c0', Foo)).name, 'other', 'another prefix is left');
    } finally {
      await cache.close();
    }
  });
}

defineL1Checks('standalone');
defineL1Checks('cluster');

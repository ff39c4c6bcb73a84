/*
 * cache.mjs - darmok/redis against a real redis-server, beside the floor
 * (the same client's GET/MGET with JSON.stringify/JSON.parse, which loses
 * every class) and two caches Node users pick: BentoCache (Redis L2 only,
 * ioredis) and cache-manager + Keyv + @keyv/redis (node-redis 5), each
 * with its default serializer.
 *
 *   node bench/cache.mjs [--quick] [--out=bench/CACHE-RESULTS.md]
 *                        [--workloads=get1,get100,getOrSetHit,mget100,set100,l1Get]
 *                        [--base=DIR]
 *
 * Workloads: get of one Post; get of a 100-Post page (one key); getOrSet
 * hits of one Post; mget of 100 keys (one Post each); set of the 100-Post
 * page. With --base=DIR, darmok/redis of the checkout in DIR (its js/ and
 * build/) runs beside this tree's, JSON on both clients, on the same
 * classes: a change's before and after in one run. Every call is awaited
 * before the next (one request in flight, as one Express request does), so
 * the latency is a round trip on loopback plus the client's and the
 * serializer's work. Peers run in interleaved batches (every peer once per
 * repeat, in a rotating order), so a busy machine moves all of them; ops/s
 * is the median over repeats, p50/p99 over every call of every repeat, and
 * darmok's overhead is the median over repeats of its time per call over
 * the floor's with the same client in the same repeat.
 *
 * Then the in-process tiers, one Post hit from memory: darmok/redis's
 * `l1` (by default a new instance per hit, rebuilt from the tape kept at
 * the first hit; `shared: true` one instance), the base's too with
 * --base, beside BentoCache's L1 (its memory driver, by default
 * serialized with JSON, and with `serialize: false`), in one run.
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKLOADS, definePostModel } from './workloads.mjs';
import { compareGraphs } from './check.mjs';

const require = createRequire(import.meta.url);
const HERE = path.dirname(fileURLToPath(import.meta.url));
const { startRedis } = require('../test/js/redis-servers.cjs');
const darmok = require('../js/index.cjs');
const { createCache } = require('../js/redis.cjs');

const args = process.argv.slice(2);
const QUICK = args.includes('--quick');
const OUT = (args.find((a) => a.startsWith('--out=')) || '').slice(6) || path.join(HERE, 'CACHE-RESULTS.md');
const REPEATS = QUICK ? 3 : 7;
const BATCH_MS = QUICK ? 250 : 600;
const ALL_WORKLOADS = ['get1', 'get100', 'getOrSetHit', 'mget100', 'set100', 'l1Get'];
const WANTED = new Set((args.find((a) => a.startsWith('--workloads=')) || '').slice(12).split(',').filter(Boolean));
const wanted = (w) => WANTED.size === 0 || WANTED.has(w);
for (const w of WANTED) if (!ALL_WORKLOADS.includes(w)) throw new Error(`unknown workload ${w}: one of ${ALL_WORKLOADS.join(', ')}`);
const BASE = (args.find((a) => a.startsWith('--base=')) || '').slice(7);
const base = BASE === '' ? null : {
  dir: path.resolve(BASE), darmok: require(path.resolve(BASE, 'js', 'index.cjs')), redis: require(path.resolve(BASE, 'js', 'redis.cjs'))
};

// With --base, each class is registered in both checkouts' default
// registries under one key (instances are made through the base's Proxy).
const model = definePostModel((C, nested) => {
  const own = darmok.serializable(C, { key: `bench.${C.name}`, nested });
  return base === null ? own : base.darmok.serializable(C, { key: `bench.${C.name}`, nested });
});
const onePost = WORKLOADS.post.build(model);
const page = WORKLOADS.posts100.build(model);
const manyPosts = page; // mget: 100 keys, one Post each

async function main() {
  const server = await startRedis();
  const { createClient } = require('redis');
  const IORedis = require('ioredis');
  const nodeRedis = createClient({ url: server.url });
  nodeRedis.on('error', () => {});
  await nodeRedis.connect();
  const io = new IORedis({ host: server.host, port: server.port });
  await new Promise((r) => io.once('ready', r));
  const { BentoCache, bentostore } = await import('bentocache');
  const { redisDriver } = await import('bentocache/drivers/redis');
  const bento = new BentoCache({
    default: 'redis',
    stores: { redis: bentostore().useL2Layer(redisDriver({ connection: new IORedis({ host: server.host, port: server.port }) })) }
  });
  const { createCache: createCacheManager } = await import('cache-manager');
  const { Keyv } = await import('keyv');
  const { default: KeyvRedis } = await import('@keyv/redis');
  const keyv = new Keyv({ store: new KeyvRedis(server.url), namespace: '' });
  const cm = createCacheManager({ stores: [keyv] });
  const { memoryDriver } = await import('bentocache/drivers/memory');
  const bentoL1 = new BentoCache({
    default: 'serialized',
    stores: {
      serialized: bentostore().useL1Layer(memoryDriver({ maxItems: 1000 })),
      raw: bentostore().useL1Layer(memoryDriver({ maxItems: 1000, serialize: false }))
    }
  });

  const mgetKeys = (p) => manyPosts.map((_, i) => `${p}many:${i}`);
  const floor = (label, client, kind) => {
    const p = `floor-${kind}:`;
    const get = (k) => client.get(k);
    const mget = kind === 'io' ? (ks) => client.mget(ks) : (ks) => client.mGet(ks);
    const set = (k, v) => client.set(k, JSON.stringify(v), kind === 'io' ? 'EX' : { EX: 3600 }, ...(kind === 'io' ? [3600] : []));
    return {
      label, floorOf: kind, lossy: 'plain data only: prototypes and Dates lost',
      async setup() {
        await set(`${p}post`, onePost);
        await set(`${p}page`, page);
        await Promise.all(manyPosts.map((v, i) => set(`${p}many:${i}`, v)));
      },
      set100: () => set(`${p}page`, page),
      get1: async () => JSON.parse(await get(`${p}post`)),
      get100: async () => JSON.parse(await get(`${p}page`)),
      // The floor of a getOrSet hit: a GET that finds the value.
      getOrSetHit: async () => JSON.parse(await get(`${p}post`)),
      mget100: async () => (await mget(mgetKeys(p))).map((s) => JSON.parse(s))
    };
  };
  const dk = (label, client, kind, format, create = createCache, tag = '') => {
    const cache = create({ client, format, prefix: `dk${tag}-${kind}-${format}:`, ttl: 3600 });
    const { Post } = model.classes;
    const never = () => { throw new Error('a hit was expected'); };
    return {
      label, client: kind, lossy: null,
      async setup() {
        await cache.set('post', onePost);
        await cache.set('page', page);
        await cache.mset(manyPosts.map((v, i) => [`many:${i}`, v]));
      },
      set100: () => cache.set('page', page),
      get1: () => cache.get('post', Post),
      get100: () => cache.get('page'),
      getOrSetHit: () => cache.getOrSet('post', Post, never),
      mget100: () => cache.mget(manyPosts.map((_, i) => `many:${i}`), Post)
    };
  };
  const bentoPeer = {
    label: 'BentoCache 1.6.1 (Redis L2, ioredis, JSON)', lossy: 'JSON serializer: prototypes and Dates lost; no getMany (#78): mget is 100 gets',
    async setup() {
      await bento.set({ key: 'post', value: onePost, ttl: '1h' });
      await bento.set({ key: 'page', value: page, ttl: '1h' });
      await Promise.all(manyPosts.map((v, i) => bento.set({ key: `many:${i}`, value: v, ttl: '1h' })));
    },
    set100: () => bento.set({ key: 'page', value: page, ttl: '1h' }),
    get1: () => bento.get({ key: 'post' }),
    get100: () => bento.get({ key: 'page' }),
    getOrSetHit: () => bento.getOrSet({ key: 'post', factory: () => { throw new Error('a hit was expected'); }, ttl: '1h' }),
    mget100: () => Promise.all(manyPosts.map((_, i) => bento.get({ key: `many:${i}` })))
  };
  const cmPeer = {
    label: 'cache-manager 7.2.9 + @keyv/redis 5.1.6 (node-redis 5)', lossy: 'Keyv serializer: prototypes and Dates lost',
    async setup() {
      await cm.set('cm:post', onePost, 3600000);
      await cm.set('cm:page', page, 3600000);
      await cm.mset(manyPosts.map((v, i) => ({ key: `cm:many:${i}`, value: v, ttl: 3600000 })));
    },
    set100: () => cm.set('cm:page', page, 3600000),
    get1: () => cm.get('cm:post'),
    get100: () => cm.get('cm:page'),
    getOrSetHit: () => cm.wrap('cm:post', () => { throw new Error('a hit was expected'); }, 3600000),
    mget100: () => cm.mget(manyPosts.map((_, i) => `cm:many:${i}`))
  };

  const peers = [
    floor('node-redis 5 GET + JSON.parse (floor)', nodeRedis, 'nr'),
    dk('darmok/redis JSON, node-redis 5', nodeRedis, 'nr', 'json'),
    dk('darmok/redis protobuf, node-redis 5', nodeRedis, 'nr', 'protobuf'),
    floor('ioredis 5 GET + JSON.parse (floor)', io, 'io'),
    dk('darmok/redis JSON, ioredis 5', io, 'io', 'json'),
    dk('darmok/redis protobuf, ioredis 5', io, 'io', 'protobuf'),
    bentoPeer,
    cmPeer
  ];
  if (base !== null) {
    const before = (label, client, kind) => dk(`${label} (base)`, client, kind, 'json', base.redis.createCache, '-base');
    peers.splice(2, 0, before('darmok/redis JSON, node-redis 5', nodeRedis, 'nr'));
    peers.splice(6, 0, before('darmok/redis JSON, ioredis 5', io, 'io'));
  }
  for (const p of peers) await p.setup();

  const workloads = [
    ['get1', 'get of one Post', onePost],
    ['get100', 'get of a 100-Post page (one key)', page],
    ['getOrSetHit', 'getOrSet hit of one Post', onePost],
    ['mget100', 'mget of 100 keys (one Post each)', manyPosts],
    ['set100', 'set of a 100-Post page (one key)', page]
  ].filter(([w]) => wanted(w));
  const results = {};
  for (const [w, title, original] of workloads) {
    // Correct? One call's value against the original graph (a set: what a get then reads).
    for (const p of peers) {
      let got = await p[w]();
      if (w === 'set100') got = await p.get100();
      const cmp = compareGraphs(original, got, 2);
      p.correct = p.correct || {};
      p.correct[w] = cmp.ok ? 'yes' : `no: ${cmp.problems.join('; ')}`;
    }
    const rows = peers.map(() => ({ lat: [], repeats: [] }));
    // Warm-up, then repeats of round-robin rounds: each round calls every
    // peer once, in an order that rotates, so a stall of the machine lands
    // on all peers alike.
    await rounds(peers, w, 200, rows, false);
    for (let r = 0; r < REPEATS; r++) await rounds(peers, w, BATCH_MS * peers.length, rows, true);
    results[w] = { title, rows: rows.map((row, i) => summarize(peers[i], row, rows, peers, w)) };
    process.stderr.write(`${title}: done\n`);
  }

  // The in-process tiers: every peer answers from memory.
  const l1Caches = [];
  if (wanted('l1Get')) {
    const dkL1 = (label, l1, create = createCache, tag = '') => {
      const cache = create({ client: io, prefix: `dk${tag}-l1-${l1.shared ? 'shared' : 'new'}:`, ttl: 3600, l1 });
      l1Caches.push(cache);
      const { Post } = model.classes;
      return {
        label, lossy: null,
        async setup() {
          while (cache.stats().bus !== 'up') await new Promise((r) => setTimeout(r, 20));
          await cache.set('post', onePost);
        },
        l1Get: () => cache.get('post', Post),
        check: () => cache.stats().l1Hits > 0 && cache.stats().redisHits === 0
      };
    };
    const bentoL1Peer = (label, store, lossy) => ({
      label, lossy,
      async setup() {
        await bentoL1.use(store).set({ key: 'post', value: onePost, ttl: '1h' });
      },
      l1Get: () => bentoL1.use(store).get({ key: 'post' })
    });
    const l1Peers = [
      dkL1('darmok/redis l1 (a new Post per hit)', { maxEntries: 1000 }),
      dkL1('darmok/redis l1 { shared: true } (one Post)', { maxEntries: 1000, shared: true }),
      ...(base === null ? [] : [
        dkL1('darmok/redis l1 (a new Post per hit) (base)', { maxEntries: 1000 }, base.redis.createCache, '-base'),
        dkL1('darmok/redis l1 { shared: true } (one Post) (base)', { maxEntries: 1000, shared: true }, base.redis.createCache, '-base')
      ]),
      bentoL1Peer('BentoCache 1.6.1 L1 (memory driver, default: JSON)', 'serialized', 'JSON serializer: prototypes and Dates lost'),
      bentoL1Peer('BentoCache 1.6.1 L1 (memory driver, serialize: false)', 'raw', 'the object stored, shared by every caller')
    ];
    for (const p of l1Peers) await p.setup();
    for (const p of l1Peers) {
      const cmp = compareGraphs(onePost, await p.l1Get(), 2);
      p.correct = { l1Get: cmp.ok ? 'yes' : `no: ${cmp.problems.join('; ')}` };
      if (p.check && !p.check()) throw new Error(`${p.label}: not served from its L1`);
    }
    {
      const rows = l1Peers.map(() => ({ lat: [], repeats: [] }));
      await rounds(l1Peers, 'l1Get', 200, rows, false);
      for (let r = 0; r < REPEATS; r++) await rounds(l1Peers, 'l1Get', BATCH_MS * l1Peers.length, rows, true);
      results.l1Get = { title: 'L1 hit of one Post (in-process tier, no Redis)', rows: rows.map((row, i) => summarize(l1Peers[i], row, rows, l1Peers, 'l1Get')) };
      process.stderr.write('L1 hit: done\n');
    }
  }

  const md = report(results, peers);
  for (const c of l1Caches) await c.close();
  await bentoL1.disconnectAll();
  writeFileSync(OUT, md);
  process.stdout.write(md);
  await nodeRedis.close();
  io.disconnect();
  await bento.disconnectAll();
  await keyv.disconnect();
  await server.stop();
}

/*
 * Rounds of one call per peer (awaited one after another) for about ms
 * milliseconds; when keep, each call's latency (µs) goes to its peer's row
 * and each peer's mean over this repeat to row.repeats.
 */
async function rounds(peers, w, ms, rows, keep) {
  const end = process.hrtime.bigint() + BigInt(ms) * 1000000n;
  const sums = peers.map(() => [0, 0]);
  for (let round = 0; process.hrtime.bigint() < end; round++) {
    for (let j = 0; j < peers.length; j++) {
      const i = (j + round) % peers.length;
      const a = process.hrtime.bigint();
      await peers[i][w]();
      const us = Number(process.hrtime.bigint() - a) / 1000;
      if (keep) {
        rows[i].lat.push(us);
        sums[i][0] += us;
        sums[i][1]++;
      }
    }
  }
  if (keep) for (let i = 0; i < peers.length; i++) rows[i].repeats.push(sums[i][0] / sums[i][1]);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pctl = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/*
 * ops/s: calls per second of call time, one call in flight (1 / the mean
 * latency), median over repeats. vs floor: darmok's median latency over
 * the floor's (same client), and the range of the repeats' mean ratios.
 */
function summarize(peer, row, rows, peers, w) {
  const out = {
    label: peer.label, ops: median(row.repeats.map((m) => 1e6 / m)), p50: pctl(row.lat, 0.5), p99: pctl(row.lat, 0.99),
    correct: peer.correct[w], lossy: peer.lossy
  };
  if (peer.client) {
    const f = rows[peers.findIndex((p) => p.floorOf === peer.client)];
    out.overhead = out.p50 / pctl(f.lat, 0.5) - 1;
    const means = row.repeats.map((m, r) => m / f.repeats[r] - 1);
    out.overheadRange = [Math.min(...means), Math.max(...means)];
  }
  return out;
}

/* ' (commit abc1234)' of the base checkout when it is a git work tree, else ''. */
function baseCommit() {
  try {
    const sha = require('node:child_process').execFileSync('git', ['-C', base.dir, 'rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] });
    return ` (commit ${sha.toString().trim()})`;
  } catch {
    return '';
  }
}

function report(results, peers) {
  const fmt = (x) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1));
  const us = (x) => (x >= 1000 ? `${(x / 1000).toFixed(2)} ms` : `${x.toFixed(0)} µs`);
  const pct = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
  const lines = [
    '# darmok/redis cache benchmark',
    '',
    `- date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    `- machine: ${os.cpus()[0].model}, ${os.cpus().length} cores, linux ${os.release()}; Node ${process.version}; ${require('node:child_process').execFileSync('redis-server', ['--version']).toString().trim().split(' ').slice(0, 3).join(' ')} on loopback`,
    ...(base === null ? [] : [`- base: the darmok/redis of ${base.dir}${baseCommit()}, beside this tree's in the rows marked (base)`]),
    `- load average at the end: ${os.loadavg().map((x) => x.toFixed(1)).join(', ')} (the machine is shared)`,
    `- command: \`node bench/cache.mjs${process.argv.slice(2).map((a) => ` ${a}`).join('')}\` (${REPEATS} repeats of ${BATCH_MS} ms per peer; peers called in rotating round-robin, one call in flight)`,
    '',
    'The floor is the raw client with JSON.stringify/JSON.parse: it returns plain data (no',
    'prototypes, Dates as strings). ops/s is one caller awaiting each call (1 / mean latency), median',
    'over repeats; p50/p99 over every call. "vs floor" is darmok\'s p50 over the floor\'s p50 with the',
    'same client; in brackets the range over repeats of the ratio of mean latencies. Calls of all',
    'peers alternate, so a stall of the (shared) machine, or another peer\'s garbage collection,',
    'lands on every peer alike.',
    ''
  ];
  for (const [w, { title, rows }] of Object.entries(results)) {
    lines.push(`## ${title}`, '', '| peer | ops/s | p50 | p99 | vs floor | correct? |', '|---|--:|--:|--:|--:|---|');
    for (const r of rows) {
      // The floor of a set is the client's SET of JSON.stringify.
      const label = w === 'set100' ? r.label.replace('GET + JSON.parse', 'SET + JSON.stringify') : r.label;
      const vs = r.overhead === undefined ? '—' : `${pct(r.overhead)} [${pct(r.overheadRange[0])}, ${pct(r.overheadRange[1])}]`;
      const ok = r.correct === 'yes' ? 'yes' : `**no** (${r.lossy})`;
      lines.push(`| ${label} | ${fmt(r.ops)} | ${us(r.p50)} | ${us(r.p99)} | ${vs} | ${ok} |`);
    }
    lines.push('');
  }
  // The issue's targets.
  const g = results.get1 === undefined ? [] : results.get1.rows;
  const targets = [];
  for (const r of g) if (r.overhead !== undefined && /JSON/.test(r.label)) targets.push(`- one-Post get, ${r.label}: ${pct(r.overhead)} over the floor (target ≤ +10%): ${r.overhead <= 0.10 ? 'met' : 'NOT met'}`);
  for (const [w, { title, rows }] of Object.entries(results)) {
    if (w === 'l1Get') continue;
    const ops = (re) => rows.filter((r) => re.test(r.label) && !r.label.endsWith('(base)')).map((r) => r.ops);
    const dkSlowest = Math.min(...ops(/^darmok/));
    const bentoOps = Math.max(...ops(/^BentoCache/));
    const cmOps = Math.max(...ops(/^cache-manager/));
    targets.push(`- ${title}: the slowest darmok/redis row ${fmt(dkSlowest)} ops/s vs BentoCache ${fmt(bentoOps)}, cache-manager ${fmt(cmOps)}: ${dkSlowest > bentoOps && dkSlowest > cmOps ? 'ahead' : 'NOT ahead'}`);
  }
  if (targets.length > 0) lines.push('## Targets (issue 25)', '', ...targets, '');
  if (results.set100 !== undefined && base !== null) {
    const rows = results.set100.rows;
    const speedups = [];
    for (const client of ['node-redis', 'ioredis']) {
      const ops = (b) => rows.find((r) => r.label.startsWith(`darmok/redis JSON, ${client}`) && r.label.endsWith('(base)') === b).ops;
      speedups.push(`- set of the 100-Post page, darmok/redis JSON on ${client}: ${(ops(false) / ops(true)).toFixed(2)}x the base's ops/s (target ≥ 2x on Node 24): ${ops(false) / ops(true) >= 2 ? 'met' : 'NOT met'}`);
    }
    lines.push('## Targets (issue 36)', '', ...speedups, '');
  }
  if (results.l1Get !== undefined) {
    const l1 = results.l1Get.rows;
    const ops = (re, ofBase = false) => l1.find((r) => re.test(r.label) && r.label.endsWith('(base)') === ofBase).ops;
    const fresh = ops(/new Post per hit/) / ops(/BentoCache.*default/);
    const shared = ops(/shared: true/) / ops(/BentoCache.*serialize: false/);
    lines.push('## Targets (issue 33)', '',
      `- L1 hit, darmok/redis default (a new Post per hit) vs BentoCache's default L1: ${fresh.toFixed(2)}x (target ≥ 1.5x): ${fresh >= 1.5 ? 'met' : 'NOT met'}`,
      ...(base === null ? [] : [`- L1 hit, darmok/redis default: ${(ops(/new Post per hit/) / ops(/new Post per hit/, true)).toFixed(2)}x the base's ops/s`]),
      `- L1 hit, darmok/redis shared vs BentoCache's L1 with serialize: false: ${shared.toFixed(2)}x (target ≥ 1x): ${shared >= 1 ? 'met' : 'NOT met'}`,
      '- a Redis hit\'s overhead over GET + JSON.parse: the one-Post get lines of issue 25 above (target ≤ +10%)', '');
  }

  return lines.join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});


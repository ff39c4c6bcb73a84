'use strict';
/*
 * redis-matrix.cjs - every Redis client darmok/redis supports, connected
 * to a real server or cluster (redis-servers.cjs), times both formats: the
 * combinations the darmok/redis checks run over. Also the classes the
 * checks cache: the tanagra article's Foo graph and a Post.
 */
const { serializable } = require('../../../js/index.cjs');

/* The client packages the devDependencies pin, one per supported major. */
const CLIENTS = [
  { id: 'redis4', pkg: 'redis4', kind: 'node-redis' },
  { id: 'redis5', pkg: 'redis', kind: 'node-redis' },
  { id: 'redis6', pkg: 'redis6', kind: 'node-redis' },
  { id: 'ioredis5', pkg: 'ioredis', kind: 'ioredis' },
  { id: 'ioredis6', pkg: 'ioredis6', kind: 'ioredis' }
];
const FORMATS = ['json', 'protobuf'];
const HOST = '127.0.0.1';

const quiet = () => {};

/*
 * A connected client of one package: standalone on port, or a cluster
 * through ports; as the ACL user auth ({ username, password }) when given.
 */
async function connect(spec, topology, ports, auth) {
  const lib = require(spec.pkg);
  if (spec.kind === 'node-redis') {
    const user = auth === undefined ? '' : `${auth.username}:${auth.password}@`;
    const c = topology === 'cluster'
      ? lib.createCluster({ rootNodes: ports.map((p) => ({ url: `redis://${user}${HOST}:${p}` })), defaults: { socket: { reconnectStrategy: 50 } } })
      : lib.createClient({ url: `redis://${user}${HOST}:${ports[0]}`, socket: { reconnectStrategy: 50 } });
    c.on('error', quiet);
    await c.connect();
    return c;
  }
  const Redis = lib.default || lib;
  const c = topology === 'cluster'
    ? new Redis.Cluster(ports.map((port) => ({ host: HOST, port })), { lazyConnect: true, redisOptions: { maxRetriesPerRequest: 1, ...auth } })
    : new Redis({ host: HOST, port: ports[0], lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 50, ...auth });
  c.on('error', quiet);
  await c.connect();
  return c;
}

function close(c) {
  try {
    if (typeof c.getBuffer === 'function') c.disconnect();
    else if (typeof c.destroy === 'function') c.destroy();
    else c.disconnect();
  } catch {
    // closed already
  }
}

/* Every (client, format) combination: { name, spec, client, format, prefix }. */
async function connectAll(topology, ports) {
  const combos = [];
  for (const spec of CLIENTS) {
    const client = await connect(spec, topology, ports);
    for (const format of FORMATS) {
      combos.push({ name: `${spec.id} ${format}`, spec, client, format, prefix: `t:${spec.id}:${format}:` });
    }
  }
  return combos;
}

function closeAll(combos) {
  for (const c of new Set(combos.map((x) => x.client))) close(c);
}

/* ---- the classes ----------------------------------------------------------- */

class Foo {
  constructor(name, count) {
    this.name = name;
    this.count = count;
    this.bars = [];
    this.lookup = new Map();
  }

  total() {
    let t = 0;
    for (const baz of this.lookup.values()) t += baz.sum();
    return t;
  }
}
class Bar {
  constructor(when, baz) {
    this.when = when;
    this.baz = baz;
  }

  year() {
    return this.when.getUTCFullYear();
  }
}
class Baz {
  constructor(n) {
    this.n = n;
    this.values = new Map([['a', n], ['b', n + 1], ['c', n + 2]]);
  }

  sum() {
    let s = 0;
    for (const v of this.values.values()) s += v;
    return s;
  }
}
serializable(Bar, { key: 'cache.Bar' });
serializable(Baz, { key: 'cache.Baz' });
serializable(Foo, { key: 'cache.Foo', nested: [Bar, Baz] });

/* The tanagra article's graph: a Foo with Bars (Dates, a shared Baz) and a Map of Bazes. */
function makeFoo(name = 'foo') {
  const foo = new Foo(name, 3);
  const shared = new Baz(1);
  foo.bars.push(new Bar(new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6)), shared), new Bar(new Date(Date.UTC(2021, 5, 6)), shared));
  foo.lookup.set('x', shared).set('y', new Baz(10)).set('z', new Baz(20));
  foo.bigCount = 2n ** 70n;
  foo.tags = new Set(['a', 'b']);
  return foo;
}

module.exports = { CLIENTS, FORMATS, connect, close, connectAll, closeAll, Foo, Bar, Baz, makeFoo };

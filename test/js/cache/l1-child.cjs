'use strict';
/*
 * redis-l1-child.cjs - one process of the L1 checks (redis-l1.test.cjs):
 * `node redis-l1-child.cjs <topology> <ports>` connects every client, makes
 * one cache with `l1` per client (JSON format, the same prefix in every
 * process), prints "ready" once every cache's bus is up, then answers one
 * JSON request per stdin line with one JSON line on stdout:
 *   { id, op: 'set' | 'get' | 'del' | 'deleteByTag' | 'clear' | 'stats' | 'nextInvalidation', client, key, value, tags }
 * nextInvalidation resolves, with Date.now(), when the next bus message
 * of that client's cache has been applied.
 */
const readline = require('node:readline');
const { createCache } = require('darmok/redis');
const { connectAll, closeAll, Foo } = require('./matrix.cjs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const [topology, portList] = process.argv.slice(2);
  const combos = (await connectAll(topology, portList.split(',').map(Number))).filter((c) => c.format === 'json');
  const caches = new Map();
  for (const combo of combos) {
    const errors = [];
    const cache = createCache({
      client: combo.client, prefix: `l1x:${combo.spec.id}:`, timeout: 2000, l1: { ttl: 5 },
      onError: (err) => errors.push(err.message)
    });
    const waiting = [];
    cache.on('invalidate', () => { for (const w of waiting.splice(0)) w(Date.now()); });
    caches.set(combo.spec.id, { cache, errors, waiting });
  }
  for (const { cache } of caches.values()) while (cache.stats().bus !== 'up') await sleep(20);
  process.stdout.write('ready\n');
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', async (line) => {
    const req = JSON.parse(line);
    const c = caches.get(req.client);
    let result;
    try {
      switch (req.op) {
        case 'set': {
          const foo = new Foo(req.value, 1);
          result = await c.cache.set(req.key, foo, req.tags ? { tags: req.tags } : undefined);
          break;
        }
        case 'get': {
          const v = await c.cache.get(req.key, Foo);
          result = v === null ? null : v.name;
          break;
        }
        case 'del': result = await c.cache.del(req.key); break;
        case 'deleteByTag': result = await c.cache.deleteByTag(req.tags); break;
        case 'clear': result = await c.cache.clear(); break;
        case 'stats': result = { ...c.cache.stats(), errors: c.errors }; break;
        case 'nextInvalidation': result = await new Promise((r) => c.waiting.push(r)); break;
        case 'exit':
          for (const { cache } of caches.values()) await cache.close();
          closeAll(combos);
          process.exit(0);
          break;
        default: throw new Error(`unknown op ${req.op}`);
      }
      process.stdout.write(`${JSON.stringify({ id: req.id, result })}\n`);
    } catch (err) {
      process.stdout.write(`${JSON.stringify({ id: req.id, error: err.message })}\n`);
    }
  });
}

if (require.main === module && process.argv.length === 4) {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
}

'use strict';
/*
 * redis-lock-child.cjs - one of the two processes of the cross-process lock
 * check (redis-checks.cjs): `node redis-lock-child.cjs <topology> <ports>`
 * connects every client, prints "ready", waits for "go" on stdin, then
 * misses one key per (client, format) with the lock on, and prints what it
 * saw: { [combination]: { loads, value, errors, lockWaits } }.
 */
const { createCache } = require('darmok/redis');
const { connectAll, closeAll } = require('./matrix.cjs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const [topology, portList] = process.argv.slice(2);
  const combos = await connectAll(topology, portList.split(',').map(Number));
  const runs = combos.map((combo) => {
    let errors = 0;
    const cache = createCache({
      client: combo.client, format: combo.format, prefix: combo.prefix, timeout: 2000,
      lock: { ttl: 5000, wait: 5000, poll: 10 }, onError: () => { errors++; }
    });
    return { combo, cache, errors: () => errors, loads: 0 };
  });
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const out = {};
  await Promise.all(runs.map(async (run) => {
    const value = await run.cache.getOrSet('two-processes', null, async () => {
      run.loads++;
      await sleep(300);
      return 'locked';
    });
    out[run.combo.name] = { loads: run.loads, value, errors: run.errors(), lockWaits: run.cache.stats().lockWaits };
  }));
  closeAll(combos);
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

if (require.main === module && process.argv.length === 4) {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
}

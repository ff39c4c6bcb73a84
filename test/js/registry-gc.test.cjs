'use strict';
/*
 * configure() reaches every registry through a list of weak refs: the
 * refs of registries that were collected are dropped as the list grows,
 * so a process that makes registries all along does not keep one per
 * registry it ever made.
 */
const { test } = require('node:test');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { assert } = require('./helpers.cjs');

test('registries that were collected are dropped from the list configure() walks', () => {
  const internal = path.join(__dirname, '../../js/internal.cjs');
  const index = path.join(__dirname, '../../js/index.cjs');
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', `
    const { createRegistry } = require(${JSON.stringify(index)});
    const { registryRefCount } = require(${JSON.stringify(internal)});
    const kept = [];
    (async () => {
      let most = 0;
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 1000; i++) createRegistry();
        kept.push(createRegistry());
        most = Math.max(most, registryRefCount());
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      process.stdout.write(JSON.stringify({ most, now: registryRefCount() }));
    })();
  `], { encoding: 'utf8' });
  const { most } = JSON.parse(out);
  // 21,000 registries made; at most one round's 1,000 dead ones (and
  // their doubling) are held at a time.
  assert.ok(most < 4200, `${most} registry refs held`);
});

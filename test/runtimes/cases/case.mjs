/*
 * case.mjs FEATURE - one ES module case of the runtime matrix: as case.cjs
 * (the same folders and environment), through import.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import common from './common.cjs';

const { roundTrips, throwsCode, missingNames } = common;
const require = createRequire(import.meta.url);
const RUNTIME = process.env.MATRIX_RUNTIME;

const cases = {
  async 'esm-json'() {
    const darmok = await import('darmok');
    const { fixtures } = (await import('./fixtures.cjs')).default;
    return `${roundTrips(darmok, darmok, fixtures, RUNTIME)} values`;
  },
  async 'esm-protobuf'() {
    const pb = await import('darmok/protobuf');
    const json = await import('darmok/json');
    const { fixtures } = (await import('./fixtures.cjs')).default;
    return `${roundTrips(pb, json, fixtures, RUNTIME)} values`;
  },
  async 'inline'() {
    const inline = await import('darmok-bare/inline');
    const { fixtures } = (await import('./fixtures-bare.cjs')).default;
    return `${roundTrips(inline, inline, fixtures, RUNTIME)} values, core from the embedded bytes`;
  },
  async 'init-module'() {
    const darmok = await import('darmok-bare');
    await throwsCode(() => darmok.encodeEntity(1), 'ERR_NOT_READY');
    await darmok.init(await WebAssembly.compile(readFileSync(process.env.DARMOK_WASM)));
    const { fixtures } = (await import('./fixtures-bare.cjs')).default;
    const n = roundTrips(darmok, darmok, fixtures, RUNTIME) +
      roundTrips(darmok.createCodec({ format: 'protobuf' }), darmok, fixtures, RUNTIME);
    return `ERR_NOT_READY before, then ${n} round trips`;
  },
  async 'require-then-import'() {
    const entries = ['darmok', 'darmok/json', 'darmok/protobuf', 'darmok/inline', 'darmok/serializer', 'darmok/redis'];
    for (const entry of entries) {
      const cjs = require(entry);
      const ns = await import(entry);
      const missing = missingNames(cjs, ns);
      if (missing.length) throw new Error(`import('${entry}') after require lacks ${missing.join(', ')}`);
    }
    return `${entries.length} entries`;
  }
};

const feature = process.argv[2];
if (!Object.hasOwn(cases, feature)) throw new Error(`case.mjs: no feature ${feature}`);
try {
  console.log(`ok: ${await cases[feature]()}`);
} catch (err) {
  console.error(err && err.stack ? err.stack : String(err));
  process.exitCode = 1;
}

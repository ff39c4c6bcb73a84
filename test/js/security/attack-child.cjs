'use strict';
/*
 * Runs one attack of attacks.cjs in this process and prints one JSON line:
 * { ms, outcome, rssMB, peakRssMB, wasmMB }. outcome is 'value', or 'DarmokError
 * <code>', or 'other <name>: <message>' (a failure of the invariant).
 * Usage: node attack-child.cjs <attack> <n>
 */
const { builders } = require('./attacks.cjs');
const darmok = require('../../../js/index.cjs');
const internal = require('../../../js/internal.cjs');

const [name, nText] = process.argv.slice(2);
const attack = builders[name](Number(nText));
const api = attack.format === 'protobuf' ? require('../../../js/protobuf.cjs') : darmok;
if (attack.register !== undefined) {
  const C = { [attack.register]: class {} }[attack.register];
  api.serializable(C, { key: attack.register });
}
const call = {
  decode: () => api.decodeEntity(attack.blob, attack.options),
  encode: () => api.encodeEntity(attack.value(), attack.options),
  reencode: () => api.encodeEntity(api.decodeEntity(attack.blob, attack.options), attack.options),
  transcode: () => darmok.transcode(attack.blob, attack.options)
}[attack.call];

let outcome = 'value';
const t0 = process.hrtime.bigint();
try {
  call();
} catch (err) {
  outcome = err instanceof darmok.DarmokError ? `DarmokError ${err.code}` : `other ${err && err.name}: ${err && err.message}`;
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
const mem = internal.wasmMemory();
process.stdout.write(JSON.stringify({ ms, outcome, rssMB: process.memoryUsage().rss / 2 ** 20, peakRssMB: process.resourceUsage().maxRSS / 1024, wasmMB: mem === null ? 0 : mem.buffer.byteLength / 2 ** 20 }) + '\n');

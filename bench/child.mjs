/*
 * child.mjs - one (peer, workload) measurement in a fresh process.
 *
 *   node --expose-gc bench/child.mjs PEER WORKLOAD [quick|full]
 *
 * Prints one JSON line (prefixed "RESULT ") with everything run.mjs tabulates.
 * The process is fresh so that the import time and the first call are truly
 * cold, and so that no JIT state or class registry leaks between peers.
 *
 * Method:
 *  1. import + instantiate the peer (timed: for darmok this includes
 *     compiling and instantiating the WebAssembly module);
 *  2. define the workload's classes through the peer, build the value;
 *  3. first encode and first decode, each timed once (cold first call);
 *  4. check the decoded value against the original (check.mjs); a peer that
 *     gets it wrong is still timed, and marked;
 *  5. warm up the peer and native JSON, estimate their per-op times, size
 *     the batches;
 *  6. R repeats; each repeat times an encode batch and a decode batch of the
 *     peer and of native JSON, interleaved, alternating which goes first.
 *     Before every batch a full GC (untimed) so that no batch pays for the
 *     previous one's garbage. Round-trip time per op = encode + decode per
 *     op in the same repeat; the ratio to JSON is taken per repeat, then the
 *     median over repeats.
 *
 * GC time and allocation come from v8.GCProfiler around each batch: GC time
 * is the sum of the collections' cost (it is inside the wall time, reported
 * apart); bytes allocated = used_heap_size(after) - used_heap_size(before)
 * + what each collection freed (usedHeapSize before - after). This is the
 * V8 heap only: Buffer/ArrayBuffer backing stores and WebAssembly memory are
 * outside it (externalMemory is reported separately).
 */
import v8 from 'node:v8';
import { performance } from 'node:perf_hooks';
import { peerById } from './peers.mjs';
import { WORKLOADS } from './workloads.mjs';
import { compareGraphs } from './check.mjs';

const [peerId, workloadId, mode = 'full'] = process.argv.slice(2);
// cold: steps 1-3 only (another sample of the first call; run.mjs).
const SETTINGS = {
  full: { batchMs: 50, repeats: 7, minRepeats: 3, warmupMs: 250, warmMin: 3, budgetMs: 4000 },
  quick: { batchMs: 20, repeats: 3, minRepeats: 3, warmupMs: 60, warmMin: 1, budgetMs: 1500 },
  cold: {},
}[mode];
if (!SETTINGS) throw new Error(`mode must be quick, full or cold, not ${mode}`);
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');

const now = () => performance.now();
const sizeOf = (out) => (typeof out === 'string' ? Buffer.byteLength(out, 'utf8') : out.byteLength);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const errText = (e) => `${e && e.name ? e.name : 'Error'}: ${String(e && e.message ? e.message : e).split('\n')[0].slice(0, 160)}`;

/* Keeps the last output of every batch alive so no call is dead code. */
let sink = null;

/* Times n calls of fn; GC cost and allocation from a GCProfiler around it. */
function batch(fn, n) {
  globalThis.gc();
  const profiler = new v8.GCProfiler();
  const before = v8.getHeapStatistics();
  profiler.start();
  const t0 = now();
  let out;
  for (let i = 0; i < n; i++) out = fn();
  const t1 = now();
  const prof = profiler.stop();
  const after = v8.getHeapStatistics();
  sink = out;
  let gcUs = 0;
  let freed = 0;
  for (const s of prof.statistics) {
    gcUs += s.cost;
    freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize;
  }
  return {
    msPerOp: (t1 - t0) / n,
    gcMsPerOp: gcUs / 1000 / n,
    allocPerOp: Math.max(0, after.used_heap_size - before.used_heap_size + freed) / n,
    gcs: prof.statistics.length,
  };
}

/* Runs fn for about ms (at least `min` calls); returns ms per call of the later half. */
function warm(fn, ms, min) {
  const t0 = now();
  const times = [];
  while (times.length < min || now() - t0 < ms) {
    const a = now();
    sink = fn();
    times.push(now() - a);
    if (times.length >= 10000) break;
  }
  return median(times.slice(times.length >> 1));
}

async function main() {
  const workload = WORKLOADS[workloadId];
  if (!workload) throw new Error(`unknown workload ${workloadId}`);
  const peer = peerById(peerId);
  const result = {
    peer: peer.id, label: peer.label, version: peer.version, workload: workloadId, mode,
    node: process.version, pid: process.pid,
  };
  if (!peer.available()) {
    result.skipped = 'not installed';
    return result;
  }

  let t = now();
  const adapter = await peer.load();
  result.importMs = now() - t;

  const model = workload.model(adapter.register || ((Class) => Class));
  if (adapter.prepare) adapter.prepare(model, workload);
  const value = workload.build(model);
  // Native JSON runs beside the peer on the same value, or on the
  // cycle-free twin where the value has a cycle.
  const controlValue = workload.control ? workload.control(model) : value;
  result.controlOnTwin = Boolean(workload.control);

  const encode = () => adapter.encode(value);
  let blob;
  t = now();
  try {
    blob = encode();
  } catch (e) {
    result.error = `encode threw ${errText(e)}`;
  }
  if (blob !== undefined) {
    result.coldEncodeMs = now() - t;
    result.bytes = sizeOf(blob);
  }
  let decoded;
  if (blob !== undefined) {
    t = now();
    try {
      decoded = adapter.decode(blob, model, workload);
      result.coldDecodeMs = now() - t;
    } catch (e) {
      result.error = `decode threw ${errText(e)}`;
    }
  }
  if (mode === 'cold') return result;
  if (result.error) {
    result.correct = false;
    result.problems = [result.error];
  } else {
    const check = compareGraphs(value, decoded);
    result.correct = check.ok;
    result.problems = check.problems;
    result.problemCount = check.count;
  }

  const jsonBlob = JSON.stringify(controlValue);
  result.jsonBytes = sizeOf(jsonBlob);
  const jsonEnc = () => JSON.stringify(controlValue);
  const jsonDec = () => JSON.parse(jsonBlob);
  const canEncode = blob !== undefined;
  const canDecode = canEncode && !result.error;
  const peerDec = () => adapter.decode(blob, model, workload);

  // Warm-up and batch sizing.
  const w = SETTINGS.warmupMs;
  const est = {
    jsonEnc: warm(jsonEnc, w / 2, SETTINGS.warmMin),
    jsonDec: warm(jsonDec, w / 2, SETTINGS.warmMin),
    enc: canEncode ? warm(encode, w, SETTINGS.warmMin) : 0,
    dec: canDecode ? warm(peerDec, w, SETTINGS.warmMin) : 0,
  };
  const count = (ms) => Math.max(1, Math.round(SETTINGS.batchMs / Math.max(ms, 1e-6)));
  const n = {
    jsonEnc: count(est.jsonEnc), jsonDec: count(est.jsonDec),
    enc: canEncode ? count(est.enc) : 0, dec: canDecode ? count(est.dec) : 0,
  };
  const perRepeat = n.jsonEnc * est.jsonEnc + n.jsonDec * est.jsonDec +
    (canEncode ? n.enc * est.enc : 0) + (canDecode ? n.dec * est.dec : 0);
  const repeats = Math.max(SETTINGS.minRepeats,
    Math.min(SETTINGS.repeats, Math.floor(SETTINGS.budgetMs / Math.max(perRepeat, 1e-6))));
  result.repeats = repeats;
  result.batch = n;

  const runs = { peerEnc: [], peerDec: [], jsonEnc: [], jsonDec: [] };
  const peerSide = () => {
    if (canEncode) runs.peerEnc.push(batch(encode, n.enc));
    if (canDecode) runs.peerDec.push(batch(peerDec, n.dec));
  };
  const jsonSide = () => {
    runs.jsonEnc.push(batch(jsonEnc, n.jsonEnc));
    runs.jsonDec.push(batch(jsonDec, n.jsonDec));
  };
  for (let r = 0; r < repeats; r++) {
    if (r % 2 === 0) { peerSide(); jsonSide(); } else { jsonSide(); peerSide(); }
  }

  const summarize = (enc, dec) => {
    const out = {};
    if (enc.length) {
      out.encodeOps = 1000 / median(enc.map((b) => b.msPerOp));
      out.encodeAlloc = median(enc.map((b) => b.allocPerOp));
    }
    if (dec.length) {
      out.decodeOps = 1000 / median(dec.map((b) => b.msPerOp));
      out.decodeAlloc = median(dec.map((b) => b.allocPerOp));
    }
    if (enc.length && dec.length) {
      const rt = enc.map((b, i) => b.msPerOp + dec[i].msPerOp);
      const gc = enc.map((b, i) => b.gcMsPerOp + dec[i].gcMsPerOp);
      out.roundTripOps = 1000 / median(rt);
      out.roundTripMsSamples = rt;
      out.gcShare = median(gc.map((g, i) => g / rt[i]));
      out.gcMsPerOp = median(gc);
      out.allocPerOp = median(enc.map((b, i) => b.allocPerOp + dec[i].allocPerOp));
    }
    return out;
  };
  Object.assign(result, summarize(runs.peerEnc, runs.peerDec));
  result.json = summarize(runs.jsonEnc, runs.jsonDec);
  if (result.roundTripMsSamples) {
    // Per-repeat ratio: both sides of one repeat ran back to back.
    const ratios = result.roundTripMsSamples.map((ms, i) => result.json.roundTripMsSamples[i] / ms);
    result.ratioToJson = median(ratios);
    result.ratioRange = [Math.min(...ratios), Math.max(...ratios)];
  }
  result.externalMemory = v8.getHeapStatistics().external_memory;
  return result;
}

main().then(
  (r) => { process.stdout.write(`RESULT ${JSON.stringify(r)}\n`); },
  (e) => {
    process.stdout.write(`RESULT ${JSON.stringify({ peer: peerId, workload: workloadId, fatal: errText(e), stack: String(e && e.stack) })}\n`);
    process.exitCode = 1;
  },
);

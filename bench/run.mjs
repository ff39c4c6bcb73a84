/*
 * run.mjs - run every (peer, workload) pair, each in a fresh child process,
 * one at a time, and write bench/RESULTS.md (and bench/results.json).
 *
 *   node bench/run.mjs                  full run (a few minutes on 2 cores)
 *   node bench/run.mjs --quick          about a minute: shorter batches, 3 repeats, no 10,000 Posts
 *   node bench/run.mjs --peers=darmok,superjson --workloads=foo,posts100
 *   node bench/run.mjs --out=/tmp/R.md --note="machine busy"
 *   node bench/run.mjs --no-core        skip the core micro-benchmark (core.mjs)
 *
 * Numbers are ratios against native JSON measured in the same child process,
 * interleaved with the peer (see child.mjs for the method), so a busy
 * machine moves both sides; the absolute ops/s are this machine's only.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PEERS, peerById } from './peers.mjs';
import { WORKLOADS, WORKLOAD_ORDER } from './workloads.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const args = { quick: false, peers: null, workloads: null, out: path.join(HERE, 'RESULTS.md'), json: null, note: '', core: true };
  for (const a of argv) {
    const [k, v] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, ''];
    if (k === '--quick') args.quick = true;
    else if (k === '--peers') args.peers = v.split(',').filter(Boolean);
    else if (k === '--workloads') args.workloads = v.split(',').filter(Boolean);
    else if (k === '--out') args.out = path.resolve(v);
    else if (k === '--json') args.json = path.resolve(v);
    else if (k === '--note') args.note = v;
    else if (k === '--no-core') args.core = false;
    else if (k === '--help' || k === '-h') {
      process.stdout.write('usage: node bench/run.mjs [--quick] [--peers=a,b] [--workloads=x,y] [--out=FILE.md] [--json=FILE.json] [--note=TEXT] [--no-core]\n');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!args.json) args.json = args.out.replace(/\.md$/, '') + '.json';
  return args;
}

/*
 * The first call is one sample per process, and one process can be
 * unlucky (a collection or a compile landing in it, the other core busy:
 * darmok's first Foo decode took 3-7 ms in about one process of four,
 * 0.3-0.5 ms in the others): in a full run, more fresh processes time it
 * again (child.mjs cold), and r reports the median of each part over all
 * of them: 5 samples, 3 for a large workload.
 */
function coldSamples(r, peer, workload) {
  const enc = [r.coldEncodeMs];
  const dec = [r.coldDecodeMs];
  const more = WORKLOADS[workload].large ? 2 : 4;
  for (let i = 0; i < more; i++) {
    const c = runChild(peer, workload, 'cold');
    if (c.fatal || !Number.isFinite(c.coldDecodeMs)) continue;
    enc.push(c.coldEncodeMs);
    dec.push(c.coldDecodeMs);
  }
  r.coldSamples = enc.length;
  r.coldEncodeMs = median(enc);
  r.coldDecodeMs = median(dec);
}

/*
 * darmok's own rows are timed in this many fresh processes in a full run
 * (the others in one): a process's speed differs from the next one's by
 * 5-10% on this machine (the JIT's choices, where memory lands), which is
 * as much as some of the targets' margins (100 Posts, protobuf: 1.40 and
 * 1.48 in two processes of the same code). Each process gives the median
 * of its repeats; the row is the median process of each figure, and the
 * ratio column names the processes' range.
 */
const OWN_PROCESSES = 3;

/* The results of more processes of one (peer, workload) as one: the
   median of each timing figure, the rest from the first (but every
   process's import time, for startupSection). */
function mergeProcesses(rs) {
  const r = { ...rs[0] };
  r.importSamples = rs.map((x) => x.importMs).filter((x) => x !== undefined);
  const ok = rs.filter((x) => !x.fatal && Number.isFinite(x.ratioToJson));
  if (ok.length < 2) return r;
  const mid = (get) => median(ok.map(get));
  for (const k of ['roundTripOps', 'encodeOps', 'decodeOps', 'allocPerOp', 'encodeAlloc', 'decodeAlloc', 'gcShare', 'gcMsPerOp', 'ratioToJson']) {
    if (ok.every((x) => Number.isFinite(x[k]))) r[k] = mid((x) => x[k]);
  }
  r.json = { ...r.json };
  for (const k of ['roundTripOps', 'encodeOps', 'decodeOps', 'allocPerOp', 'gcShare']) {
    if (ok.every((x) => x.json && Number.isFinite(x.json[k]))) r.json[k] = mid((x) => x.json[k]);
  }
  r.processRatios = ok.map((x) => x.ratioToJson);
  r.ratioRange = [Math.min(...ok.map((x) => x.ratioRange[0])), Math.max(...ok.map((x) => x.ratioRange[1]))];
  r.wallMs = rs.reduce((s, x) => s + (x.wallMs || 0), 0);
  return r;
}

/* Runs one child; returns its parsed RESULT line (or a failure record). */
function runChild(peer, workload, mode) {
  const child = path.join(HERE, 'child.mjs');
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--expose-gc', child, peer, workload, mode], {
    encoding: 'utf8',
    timeout: mode === 'quick' ? 60_000 : 180_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const wallMs = Date.now() - t0;
  const line = (r.stdout || '').split('\n').reverse().find((l) => l.startsWith('RESULT '));
  if (!line) {
    const why = r.error ? r.error.message : `exit ${r.status}${r.signal ? ` (${r.signal})` : ''}`;
    const tail = (r.stderr || '').trim().split('\n').slice(-3).join(' | ');
    return { peer, workload, fatal: `child failed: ${why}${tail ? `: ${tail}` : ''}`, wallMs };
  }
  return { ...JSON.parse(line.slice(7)), wallMs };
}

/* ---- formatting ----------------------------------------------------------- */

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function ops(x) {
  if (x === undefined || !Number.isFinite(x)) return '—';
  if (x >= 100) return Math.round(x).toLocaleString('en-US');
  if (x >= 10) return x.toFixed(1);
  return x.toFixed(2);
}

function bytes(n) {
  if (n === undefined || !Number.isFinite(n)) return '—';
  if (n < 1024) return `${Math.round(n)} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}

function ratio(r) {
  if (r === undefined || !Number.isFinite(r)) return '—';
  if (r >= 1) return `${r.toFixed(r >= 10 ? 0 : 2)}x faster`;
  const s = 1 / r;
  return `${s.toFixed(s >= 10 ? 0 : 1)}x slower`;
}

const ms = (x) => (x === undefined || !Number.isFinite(x) ? '—' : x < 10 ? x.toFixed(2) : x.toFixed(0));
const pct = (x) => (x === undefined || !Number.isFinite(x) ? '—' : `${(x * 100).toFixed(0)}%`);
const cell = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

function correctness(r) {
  if (r.fatal) return `**failed**: ${r.fatal}`;
  if (r.correct) return 'yes';
  const first = (r.problems && r.problems[0]) || r.error || 'differs';
  const more = r.problemCount > 1 ? ` (+${r.problemCount - 1} more)` : '';
  return `**no**: ${first}${more}`;
}

/* The first encode + decode over one warm round trip: ", 3.1x". */
function coldRatio(r) {
  if (!Number.isFinite(r.coldDecodeMs) || !(r.roundTripOps > 0)) return '';
  const x = (r.coldEncodeMs + r.coldDecodeMs) / (1000 / r.roundTripOps);
  return `, ${x >= 10 ? x.toFixed(0) : x.toFixed(1)}x`;
}

function workloadSection(id, results) {
  const w = WORKLOADS[id];
  const lines = [];
  lines.push(`## ${w.title}`, '');
  lines.push(w.description + '.', '');
  const baselines = results.filter((r) => r.json && Number.isFinite(r.json.roundTripOps));
  const jsonRt = baselines.map((r) => r.json.roundTripOps);
  const jsonBytes = baselines.length ? baselines[0].jsonBytes : undefined;
  lines.push('| peer | version | round trip ops/s | vs native JSON round trip | encode ops/s | decode ops/s | bytes | heap alloc/op | GC share | first call ms (enc + dec), × a warm round trip | correct? |');
  lines.push('|---|---|--:|---|--:|--:|--:|--:|--:|--:|---|');
  if (baselines.length) {
    const enc = median(baselines.map((r) => r.json.encodeOps));
    const dec = median(baselines.map((r) => r.json.decodeOps));
    const alloc = median(baselines.map((r) => r.json.allocPerOp));
    const gc = median(baselines.map((r) => r.json.gcShare));
    const spread = `${ops(Math.min(...jsonRt))}–${ops(Math.max(...jsonRt))}`;
    lines.push(`| native JSON (baseline${w.control ? ', on the cycle-free twin' : ''}) | ${process.versions.node} | ${ops(median(jsonRt))} | 1 (range over the ${baselines.length} runs: ${spread}) | ${ops(enc)} | ${ops(dec)} | ${bytes(jsonBytes)} | ${bytes(alloc)} | ${pct(gc)} | — | no: plain data only (prototypes, Maps, Dates${w.cyclic ? ', sharing' : ''} lost) |`);
  }
  for (const r of results) {
    const label = r.label || r.peer;
    if (r.skipped) { lines.push(`| ${cell(label)} | — | skipped: ${cell(r.skipped)} | | | | | | | | |`); continue; }
    const first = r.coldEncodeMs !== undefined ? `${ms(r.coldEncodeMs)} + ${ms(r.coldDecodeMs)}${coldRatio(r)}` : '—';
    let cmp = r.ratioToJson !== undefined ? `${ratio(r.ratioToJson)}` : '—';
    if (r.processRatios) {
      const lo = Math.min(...r.processRatios);
      const hi = Math.max(...r.processRatios);
      cmp += ` (${r.processRatios.length} processes, ratio ${lo.toFixed(2)}–${hi.toFixed(2)})`;
    }
    lines.push(`| ${cell(label)} | ${r.version || '—'} | ${ops(r.roundTripOps)} | ${cmp} | ${ops(r.encodeOps)} | ${ops(r.decodeOps)} | ${bytes(r.bytes)} | ${bytes(r.allocPerOp)} | ${pct(r.gcShare)} | ${first} | ${cell(correctness(r))} |`);
  }
  lines.push('');
  return lines.join('\n');
}

function startupSection(all) {
  const byPeer = new Map();
  for (const r of all) {
    if (r.importMs === undefined) continue;
    if (!byPeer.has(r.peer)) byPeer.set(r.peer, { label: r.label, version: r.version, xs: [] });
    byPeer.get(r.peer).xs.push(...(r.importSamples || [r.importMs]));
  }
  const lines = ['## Import + instantiation', '',
    'Time for the first `import`/`require` of the library in a fresh process (for darmok: loading the JS, compiling and instantiating the WebAssembly module, and `init()` if exported), median over the child processes of this run.', '',
    '| peer | version | import ms (median) | min–max | processes |', '|---|---|--:|---|--:|'];
  for (const [, p] of byPeer) {
    lines.push(`| ${cell(p.label)} | ${p.version} | ${ms(median(p.xs))} | ${ms(Math.min(...p.xs))}–${ms(Math.max(...p.xs))} | ${p.xs.length} |`);
  }
  lines.push('');
  return lines.join('\n');
}

/*
 * Time per Post of a round trip at 1, 100 and 10,000 Posts, and how it grows
 * from 100 to 10,000 (1.00 = linear). Native JSON's from the baselines
 * timed beside the peers.
 */
const POSTS = [['post', 1], ['posts100', 100], ['posts10k', 10000]];
function scalingSection(all) {
  const rows = new Map();
  const row = (key, label, version) => {
    if (!rows.has(key)) rows.set(key, { label, version, us: {}, ratio: {} });
    return rows.get(key);
  };
  for (const [id, n] of POSTS) {
    const rs = all.filter((r) => r.workload === id);
    const base = rs.filter((r) => r.json && Number.isFinite(r.json.roundTripOps)).map((r) => r.json.roundTripOps);
    if (base.length) row('json', 'native JSON (baseline)', process.versions.node).us[id] = 1e6 / median(base) / n;
    for (const r of rs) {
      if (!(Number.isFinite(r.roundTripOps) && r.roundTripOps > 0)) continue;
      const x = row(r.peer, r.label || r.peer, r.version);
      x.us[id] = 1e6 / r.roundTripOps / n;
      if (Number.isFinite(r.ratioToJson)) x.ratio[id] = r.ratioToJson;
    }
  }
  if (!rows.size) return '';
  const us = (x) => (x === undefined ? '—' : x.toFixed(x < 10 ? 2 : 1));
  const lines = ['## Scaling: round-trip time per Post', '',
    'µs per Post of one round trip (1 / round-trip ops/s / Posts) on the three Post workloads; "100 → 10,000" is the',
    'time per Post at 10,000 over that at 100 (1.00: linear; more: each Post costs more in a larger value). These',
    'come from separate processes, whose speed differs by 10-20% on this machine (native JSON\'s own figures too);',
    '"relative to native" is the same growth taken against native JSON in the same processes (the ratio to it at',
    '100 over the ratio at 10,000; 1.00: grows as native JSON does).', '',
    '| peer | version | 1 Post | 100 Posts | 10,000 Posts | 100 → 10,000 | relative to native |', '|---|---|--:|--:|--:|--:|--:|'];
  for (const [, r] of rows) {
    const g = r.us.posts100 !== undefined && r.us.posts10k !== undefined ? (r.us.posts10k / r.us.posts100).toFixed(2) : '—';
    const rel = r.ratio.posts100 !== undefined && r.ratio.posts10k !== undefined ? (r.ratio.posts100 / r.ratio.posts10k).toFixed(2) : '—';
    lines.push(`| ${cell(r.label)} | ${r.version || '—'} | ${us(r.us.post)} | ${us(r.us.posts100)} | ${us(r.us.posts10k)} | ${g} | ${rel} |`);
  }
  lines.push('');
  return lines.join('\n');
}

/* core.mjs in its own process: its Markdown, or a line saying why not. */
function runCore(args, workloads) {
  const r = spawnSync(process.execPath, ['--expose-gc', path.join(HERE, 'core.mjs'),
    ...(args.quick ? ['--quick'] : []), `--workloads=${workloads.join(',')}`], {
    encoding: 'utf8', timeout: 300_000, maxBuffer: 16 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status === 0 && r.stdout.trim()) return r.stdout;
  return `## The core alone\n\nNot measured: core.mjs ${r.error ? r.error.message : `exited ${r.status}`}.\n`;
}

function report(args, all, totalMs, coreMd) {
  const cpus = os.cpus();
  const date = new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
  const cmd = ['node bench/run.mjs', ...process.argv.slice(2)].join(' ');
  const out = [];
  out.push('# darmok benchmarks against its peers', '');
  out.push(`- date: ${date}`);
  out.push(`- machine: ${cpus[0] ? cpus[0].model.trim() : 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}`);
  out.push(`- Node ${process.version} (V8 ${process.versions.v8})`);
  out.push(`- command: \`${cmd}\` (${args.quick ? 'quick' : 'full'} mode, ${(totalMs / 1000).toFixed(0)} s)`);
  if (args.note) out.push(`- note: ${args.note}`);
  out.push('');
  out.push('How to read it: every (peer, workload) ran in its own fresh Node process, with native JSON',
    '(`JSON.parse(JSON.stringify(x))`) timed in the same process on the same value, in interleaved batches',
    '(peer, JSON, JSON, peer, ...). "vs native JSON round trip" is the median over repeats of',
    '(JSON round-trip time / peer round-trip time) within one repeat; the native JSON row shows the median',
    'and range of those in-process baselines.',
    ...(args.quick ? ['darmok\'s own rows ran in one process each (quick mode).']
      : [`darmok's own rows ran in ${OWN_PROCESSES} fresh processes each: each of their figures is the median over those processes`,
        'of the process\'s own medians, and the ratio column names the range of the processes\' ratios.']),
    'Round trip = encode + decode of one value. Ops/s are medians',
    'over the repeats and include GC; "GC share" is the part of the round-trip wall time spent in V8',
    'garbage collection (v8.GCProfiler, summed collection cost). "heap alloc/op" is V8 heap bytes allocated',
    'per round trip: used-heap growth over a batch plus what each GC in the batch freed, divided by the',
    'batch size (a full GC runs, untimed, before every batch); Buffer/ArrayBuffer/WebAssembly memory is',
    'outside the V8 heap and not counted, nor are external strings: Node makes a string it decodes from',
    'over ~1 M UTF-16 units or bytes one (darmok\'s JSON text of 10,000 Posts, 13.0 M two-byte characters, 24.8 MiB;',
    'native JSON\'s is on the heap and counted). "first call" is the first encode and first decode in a fresh',
    'process after import (cold JIT; for darmok, whose import runs one small round trip per format to',
    'compile its code, the first calls with the application\'s classes), medians over 5 processes',
    '(3 for 10,000 Posts, 1 in quick mode), and their sum over one warm round trip (ops/s); workload strings are flat, as read',
    'from a socket (bench/workloads.mjs). "correct?" compares the',
    'decoded value with the original: prototypes at every level, Map/Set/Date, values, missing/extra',
    'properties, and identity of shared references and cycles. Incorrect peers are still timed.',
    'Machine caveat: the absolute numbers are one shared 2-core machine\'s; compare ratios.', '');
  for (const id of WORKLOAD_ORDER) {
    const rs = all.filter((r) => r.workload === id);
    if (rs.length) out.push(workloadSection(id, rs));
  }
  const scaling = scalingSection(all);
  if (scaling) out.push(scaling);
  out.push(startupSection(all));
  if (coreMd) out.push(coreMd);
  return out.join('\n');
}

/* ---- main ------------------------------------------------------------------- */

const args = parseArgs(process.argv.slice(2));
const mode = args.quick ? 'quick' : 'full';
// --quick leaves out the large workload (10,000 Posts) unless it is named.
const workloads = args.workloads || WORKLOAD_ORDER.filter((w) => !(args.quick && WORKLOADS[w].large));
for (const w of workloads) if (!WORKLOADS[w]) throw new Error(`unknown workload ${w} (known: ${WORKLOAD_ORDER.join(', ')})`);
// Native JSON is the baseline inside every child; it needs no child of its own.
const peerIds = (args.peers || PEERS.map((p) => p.id)).filter((id) => id !== 'json');
const peers = peerIds.map(peerById);
const t0 = Date.now();
const all = [];
for (const w of workloads) {
  for (const p of peers) {
    if (!p.available()) {
      all.push({ peer: p.id, label: p.label, workload: w, skipped: 'not present' });
      continue;
    }
    process.stderr.write(`${w.padEnd(9)} ${p.id.padEnd(18)} `);
    let r = runChild(p.id, w, mode);
    if (!args.quick && !r.fatal && p.id.startsWith('darmok')) {
      const more = [r];
      for (let i = 1; i < OWN_PROCESSES; i++) more.push(runChild(p.id, w, mode));
      r = mergeProcesses(more);
    }
    if (!args.quick && !r.fatal && Number.isFinite(r.coldDecodeMs)) coldSamples(r, p.id, w);
    all.push(r);
    const summary = r.fatal ? `FAILED ${r.fatal}`
      : `${ops(r.roundTripOps)} rt ops/s, ${ratio(r.ratioToJson)} than JSON, ${r.correct ? 'correct' : 'INCORRECT'}`;
    process.stderr.write(`${summary} (${(r.wallMs / 1000).toFixed(1)} s)\n`);
  }
}
let coreMd = null;
if (args.core) {
  process.stderr.write('core micro-benchmark (core.mjs)\n');
  coreMd = runCore(args, workloads);
}
const totalMs = Date.now() - t0;
// Samples are for the JSON file only.
writeFileSync(args.json, JSON.stringify({ date: new Date().toISOString(), mode, node: process.version, results: all }, null, 1) + '\n');
writeFileSync(args.out, report(args, all, totalMs, coreMd) + '\n');
process.stderr.write(`wrote ${path.relative(process.cwd(), args.out)} and ${path.relative(process.cwd(), args.json)} in ${(totalMs / 1000).toFixed(0)} s\n`);

/*
 * shaping.mjs - what the shaping options cost (docs/SHAPING.md), on the
 * Post workloads, in one process:
 *
 *   encode     plain classes, beside the same classes with transformKeys,
 *              with a rename, and the plain classes encoded with sortKeys
 *              and with a field selection; JSON and protobuf
 *   toPlain    beside JSON.parse(encodeEntity(x)) and class-transformer's
 *              instanceToPlain(x) (the plain object it makes, no JSON)
 *   --base=DIR the plain encode and decode of the darmok in DIR (a checkout
 *              with build/darmok.wasm, e.g. main) beside this one's: the
 *              plain path before and after a change; --base-only: only that
 *              (this tree may then be one without the shaping options)
 *
 *   node --expose-gc bench/shaping.mjs [--quick] [--workloads=post,posts100] [--base=DIR [--base-only]]
 *
 * Method: every case of a table is timed in batches of about BATCH_MS,
 * each split into ROUNDS short batches interleaved with the other cases'
 * (in a rotated order), a full GC (untimed) before each, as child.mjs
 * does: no batch pays for another's garbage, and code that a full GC
 * throws away (optimized code holding an object that died) shows; a case's ratio is its time over the first case's in
 * the same repeat, and the table gives the median over repeats (and their
 * range). Times are the process's CPU time (process.cpuUsage), not wall
 * time: on a shared machine the wall clock also counts the time other
 * processes had the core, which swamped differences of a few percent.
 * Markdown on stdout. Timing never goes into a test.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKLOADS } from './workloads.mjs';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const args = { quick: false, workloads: ['post', 'posts100'], base: null, baseOnly: false };
for (const a of process.argv.slice(2)) {
  const [k, v] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, ''];
  if (k === '--quick') args.quick = true;
  else if (k === '--workloads') args.workloads = v.split(',').filter(Boolean);
  else if (k === '--base') args.base = path.resolve(v);
  else if (k === '--base-only') args.baseOnly = true;
  else throw new Error(`unknown argument ${a} (see the header of bench/shaping.mjs)`);
}
const BATCH_MS = args.quick ? 20 : 60;
const REPEATS = args.quick ? 5 : 15;
const ROUNDS = 4;
const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {};

const darmok = require(path.join(ROOT, 'js', 'index.cjs'));
const ct = require('class-transformer');

/* Keeps each batch's last result alive. */
let sink = null;

/* ms of this process's CPU time (user + system) per call of fn, over n calls. */
function perOp(fn, n) {
  gc();
  const t0 = process.cpuUsage();
  let out;
  for (let i = 0; i < n; i++) out = fn();
  const t = process.cpuUsage(t0);
  sink = out;
  return (t.user + t.system) / 1000 / n;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/*
 * cases: [[label, fn]]; the first is the baseline. Returns rows
 * { label, us, ratio, lo, hi } (ratio: time over the baseline's).
 */
function compare(cases) {
  const sizes = cases.map(([, fn]) => {
    for (let i = 0; i < 20; i++) fn(); // warm
    let n = 1;
    while (perOp(fn, n) * n < BATCH_MS / 4) n *= 2;
    return Math.max(1, Math.round(BATCH_MS / Math.max(perOp(fn, n), 1e-6)));
  });
  // A repeat is ROUNDS short batches of each case, in turn: a burst of
  // load from another process lands on every case of the repeat alike.
  const times = cases.map(() => []);
  for (let r = 0; r < REPEATS; r++) {
    const sum = cases.map(() => 0);
    for (let round = 0; round < ROUNDS; round++) {
      for (let j = 0; j < cases.length; j++) {
        const i = (j + r + round) % cases.length;
        sum[i] += perOp(cases[i][1], Math.max(1, Math.round(sizes[i] / ROUNDS)));
      }
    }
    for (let i = 0; i < cases.length; i++) times[i].push(sum[i] / ROUNDS);
  }
  return cases.map(([label], i) => {
    const ratios = times[i].map((t, r) => t / times[0][r]);
    return { label, us: median(times[i]) * 1000, ratio: median(ratios), lo: Math.min(...ratios), hi: Math.max(...ratios) };
  });
}

function table(title, rows, unit) {
  const out = [`### ${title}`, '', `| case | µs CPU/op | ${unit} | range over ${REPEATS} repeats |`, '|---|--:|--:|---|'];
  for (const r of rows) out.push(`| ${r.label} | ${r.us.toFixed(r.us < 10 ? 2 : 1)} | ${r.ratio.toFixed(3)} | ${r.lo.toFixed(3)}–${r.hi.toFixed(3)} |`);
  return out.join('\n') + '\n';
}

/* The workload's value built through its own registry, its classes registered with options(name). */
function build(lib, workload, options) {
  const registry = lib.createRegistry();
  const json = lib.createCodec({ registry });
  const pb = lib.createCodec({ registry, format: 'protobuf' });
  const model = workload.model((C, nested) => json.serializable(C, { nested, ...options(C.name) }));
  return { json, pb, value: workload.build(model) };
}

const RENAME = {
  Post: { createdAt: 'created', published: 'isPublished' },
  User: { createdAt: 'joined', email: 'mail' },
  Comment: { createdAt: 'at' }
};
const ONLY = { Post: ['id', 'title', 'published', 'createdAt', 'author', 'comments'] };
const EXCEPT = { User: ['email'] };

const out = [`## Shaping options (node ${process.version}, ${args.quick ? 'quick' : 'full'}: batches of ${BATCH_MS} ms, ${REPEATS} repeats)`, ''];
for (const id of args.workloads) {
  const workload = WORKLOADS[id];
  if (!workload) throw new Error(`unknown workload ${id}`);
  const plain = build(darmok, workload, () => ({}));
  out.push(`## ${workload.title}`, '');
  if (!args.baseOnly) shapingTables(workload, plain);
  if (args.base) baseTables(id, workload, plain);
}
process.stdout.write(out.join('\n') + '\n');

function shapingTables(workload, plain) {
  const snake = build(darmok, workload, () => ({ transformKeys: 'snake' }));
  const renamed = build(darmok, workload, (name) => ({ rename: RENAME[name] }));
  const sorted = { sortKeys: true };
  const selected = { only: ONLY, except: EXCEPT };
  for (const f of ['json', 'pb']) {
    out.push(table(`encodeEntity, ${f === 'pb' ? 'protobuf' : 'JSON'}`, compare([
      ['plain classes', () => plain[f].encodeEntity(plain.value)],
      ["transformKeys: 'snake'", () => snake[f].encodeEntity(snake.value)],
      ['rename (2 fields of Post and User, 1 of Comment)', () => renamed[f].encodeEntity(renamed.value)],
      ['sortKeys: true', () => plain[f].encodeEntity(plain.value, sorted)],
      ['only Post 6 of 8 fields, except User.email', () => plain[f].encodeEntity(plain.value, selected)]
    ]), 'time / plain'));
  }
  // class-transformer on the raw classes (no decorators: instanceToPlain needs none).
  const raw = workload.build(workload.model((C) => C));
  out.push(table('toPlain', compare([
    ['JSON.parse(encodeEntity(x))', () => JSON.parse(plain.json.encodeEntity(plain.value))],
    ['toPlain(x)', () => plain.json.toPlain(plain.value)],
    ["toPlain(x) with transformKeys: 'snake'", () => snake.json.toPlain(snake.value)],
    ['class-transformer instanceToPlain(x)', () => ct.instanceToPlain(raw)]
  ]), 'time / JSON.parse(encodeEntity)'));
}

function baseTables(id, workload, plain) {
  const base = require(path.join(args.base, 'js', 'index.cjs'));
  const before = build(base, workload, () => ({}));
  for (const f of ['json', 'pb']) {
    const docBefore = before[f].encodeEntity(before.value);
    const docAfter = plain[f].encodeEntity(plain.value);
    if (!Buffer.from(docBefore).equals(Buffer.from(docAfter))) throw new Error(`${id} ${f}: the base writes other bytes`);
    const name = f === 'pb' ? 'protobuf' : 'JSON';
    out.push(table(`plain encode, ${name}: ${args.base} (base) and this tree`, compare([
      ['base encodeEntity', () => before[f].encodeEntity(before.value)],
      ['this encodeEntity', () => plain[f].encodeEntity(plain.value)]
    ]), 'time / base'));
    out.push(table(`plain decode, ${name}: ${args.base} (base) and this tree`, compare([
      ['base decodeEntity', () => before[f].decodeEntity(docBefore)],
      ['this decodeEntity', () => plain[f].decodeEntity(docAfter)]
    ]), 'time / base'));
  }
}

/*
 * table.mjs - the runtimes and features of the matrix (matrix.mjs), and the
 * runtime x feature table of docs/ECOSYSTEM.md made from its results.
 *
 *   node test/runtimes/table.mjs   rewrites the table in docs/ECOSYSTEM.md
 *                                  from build/matrix/results.json (make runtime-table)
 *
 * The table sits between the START and END markers; a full passing run of
 * the matrix fails when the table there is not the one its results make, or
 * when README.md does not name each version run, so the docs cannot claim
 * what the last run did not show.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const BIN = path.join(HERE, 'node_modules');

/* Each binary, from its npm package (test/runtimes/package.json). */
export const RUNTIMES = [
  { name: 'node22', kind: 'node', bin: path.join(BIN, 'node22/bin/node') },
  { name: 'node24', kind: 'node', bin: path.join(BIN, 'node24/bin/node') },
  { name: 'node26', kind: 'node', bin: path.join(BIN, 'node26/bin/node') },
  { name: 'bun', kind: 'bun', bin: path.join(BIN, '@oven/bun-linux-x64/bin/bun') },
  { name: 'deno', kind: 'deno', bin: path.join(BIN, '@deno/linux-x64-glibc/deno') },
  { name: 'workerd', kind: 'workerd', bin: path.join(BIN, '@cloudflare/workerd-linux-64/bin/workerd') }
];

const SCRIPTED = ['node', 'bun', 'deno'];

/*
 * The features: id (a line of the matrix), column (of the table), on (the
 * runtime kinds), file and arg (the case: cases/case.cjs or case.mjs and
 * its feature; workerd's are served by matrix.mjs's workers), core (it
 * loads the core, so a broken core must fail it: --expect-broken), cell
 * (what the table shows when it passes, when not a check mark).
 */
export const FEATURES = [
  { id: 'json-cjs', column: 'require', on: SCRIPTED, file: 'case.cjs', arg: 'cjs-json', core: true },
  { id: 'protobuf-cjs', column: 'require', on: SCRIPTED, file: 'case.cjs', arg: 'cjs-protobuf', core: true },
  { id: 'json-esm', column: 'import', on: [...SCRIPTED, 'workerd'], file: 'case.mjs', arg: 'esm-json', core: true },
  { id: 'protobuf-esm', column: 'import', on: [...SCRIPTED, 'workerd'], file: 'case.mjs', arg: 'esm-protobuf', core: true },
  { id: 'import-after-require', column: 'after', on: SCRIPTED, file: 'case.cjs', arg: 'require-then-import', core: false },
  { id: 'import-after-require-esm', column: 'after', on: SCRIPTED, file: 'case.mjs', arg: 'require-then-import', core: false },
  { id: 'inline-cjs', column: 'inline', on: SCRIPTED, file: 'case.cjs', arg: 'inline', core: true },
  { id: 'inline-esm', column: 'inline', on: SCRIPTED, file: 'case.mjs', arg: 'inline', core: true },
  { id: 'inline-refused', column: 'inline', on: ['workerd'], core: false, cell: 'ERR_NOT_READY¹' },
  { id: 'init-bytes', column: 'bytes', on: SCRIPTED, file: 'case.cjs', arg: 'init-bytes', core: true },
  { id: 'init-bytes-refused', column: 'bytes', on: ['workerd'], core: false, cell: 'ERR_NOT_READY¹' },
  { id: 'init-module', column: 'module', on: [...SCRIPTED, 'workerd'], file: 'case.mjs', arg: 'init-module', core: true },
  { id: 'redis-node-redis', column: 'node-redis', on: SCRIPTED, file: 'case.cjs', arg: 'redis-node-redis', core: true },
  { id: 'redis-ioredis', column: 'ioredis', on: SCRIPTED, file: 'case.cjs', arg: 'redis-ioredis', core: true },
  { id: 'worker-example', column: 'worker', on: ['workerd'], core: true }
];

const COLUMNS = [
  ['require', 'JSON + protobuf, `require`'],
  ['import', 'JSON + protobuf, `import`'],
  ['after', '`import` after `require`'],
  ['inline', '`darmok/inline`'],
  ['bytes', '`init(bytes)`'],
  ['module', '`init(Module)`'],
  ['node-redis', '`darmok/redis`, node-redis'],
  ['ioredis', '`darmok/redis`, ioredis'],
  ['worker', 'module Worker over HTTP']
];

const START = '<!-- runtime-table: made by `make runtime-table` from the matrix (test/runtimes/matrix.mjs); do not edit -->';
const END = '<!-- /runtime-table -->';

/* "v24.22.3" -> "Node 24.22.3", "deno 2.9.6 (...)" -> "Deno 2.9.6", ... */
function label(name, version) {
  const v = (version || '').replace(/^v/, '').replace(/^(deno|workerd) /, '').split(' ')[0];
  const title = { bun: 'Bun', deno: 'Deno', workerd: 'workerd' }[name] || 'Node';
  return `${title} ${v}`;
}

/* The markdown table (without markers) of a run's { versions, results }. */
export function renderTable({ versions, results }) {
  const lines = [`| runtime | ${COLUMNS.map(([, t]) => t).join(' | ')} |`, `|---${'|---'.repeat(COLUMNS.length)}|`];
  for (const rt of RUNTIMES) {
    const skip = results.find((r) => r.runtime === rt.name && r.status === 'skip');
    const cells = COLUMNS.map(([col]) => {
      if (skip) return 'skipped';
      const features = FEATURES.filter((f) => f.column === col && f.on.includes(rt.kind));
      if (features.length === 0) return '—';
      const got = features.map((f) => results.find((r) => r.runtime === rt.name && r.feature === f.id));
      if (got.some((r) => !r)) return 'not run';
      if (got.some((r) => r.status !== 'ok')) return '✘';
      return features.find((f) => f.cell)?.cell || '✔';
    });
    if (!skip && !versions[rt.name]) continue; // not in this run (--only)
    lines.push(`| ${skip ? rt.name : label(rt.name, versions[rt.name])} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/* The versions of a run, as README.md names them ("24.22.3", "1.4.5", "2026-12-01"). */
export function versionNumbers(versions) {
  return Object.entries(versions).map(([name, v]) => label(name, v).split(' ')[1]);
}

/* "20.20.2" -> [20, 20, 2], or null when it is not dotted numbers. */
function numbers(version) {
  return /^\d+(\.\d+)*$/.test(version) ? version.split('.').map(Number) : null;
}

/* a < b (-1), a = b (0) or a > b (1), on their first n parts. */
function compareParts(a, b, n) {
  for (let i = 0; i < n; i++) if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) < (b[i] || 0) ? -1 : 1;
  return 0;
}

/*
 * What is wrong with package.json's engines for a run's versions, with
 * machineNode (the Node that runs the matrix and the whole JS suite) as a
 * Node tested too: every runtime engines names must be one the matrix
 * runs, and its lower bound no older than the oldest version of it tested,
 * compared on the parts the bound writes (">=20" promises Node 20, which
 * the machine's 20.x is).
 */
export function enginesProblems(engines, versions, machineNode) {
  const tested = { node: [numbers(machineNode)] };
  for (const [name, v] of Object.entries(versions)) {
    const rt = RUNTIMES.find((r) => r.name === name);
    (tested[rt.kind] ||= []).push(numbers(label(name, v).split(' ')[1]));
  }
  const problems = [];
  for (const [kind, range] of Object.entries(engines || {})) {
    if (!RUNTIMES.some((r) => r.kind === kind)) {
      problems.push(`engines names ${kind}, which the matrix does not run`);
      continue;
    }
    const bound = /^>=\s*(\S+)$/.exec(range);
    const parts = bound && numbers(bound[1]);
    if (!parts) {
      problems.push(`engines.${kind} is "${range}": the matrix reads only ">=version"`);
      continue;
    }
    const got = tested[kind] || [];
    if (got.length === 0 || got.includes(null)) {
      problems.push(`engines.${kind}: this run has no version of ${kind} to hold it to`);
      continue;
    }
    const oldest = got.reduce((a, b) => (compareParts(a, b, Math.max(a.length, b.length)) <= 0 ? a : b));
    if (compareParts(parts, oldest, parts.length) < 0) {
      problems.push(`engines.${kind} is "${range}", below the oldest ${kind} tested, ${oldest.join('.')}`);
    }
  }
  return problems;
}

/* The table docs/ECOSYSTEM.md holds now, or null. */
export function tableInDoc(doc) {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) return null;
  return doc.slice(a + START.length, b).trim();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const run = JSON.parse(fs.readFileSync(path.join(ROOT, 'build/matrix/results.json'), 'utf8'));
  const file = path.join(ROOT, 'docs/ECOSYSTEM.md');
  const doc = fs.readFileSync(file, 'utf8');
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/ECOSYSTEM.md has no ${START} ... ${END}`);
  fs.writeFileSync(file, `${doc.slice(0, a + START.length)}\n${renderTable(run)}\n${doc.slice(b)}`);
  console.log('docs/ECOSYSTEM.md: runtime table written from build/matrix/results.json');
}

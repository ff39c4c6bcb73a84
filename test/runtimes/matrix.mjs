#!/usr/bin/env node
/*
 * matrix.mjs - darmok on every runtime its users deploy on (issue 34):
 * Node 22, 24 and 26, Bun, Deno and Cloudflare's workerd, each pinned by
 * exact version in test/runtimes/package-lock.json (make setup installs
 * them). Run by the machine's Node:
 *
 *   node test/runtimes/matrix.mjs               every runtime x feature
 *   node test/runtimes/matrix.mjs --only deno   some runtimes (comma-separated)
 *   node test/runtimes/matrix.mjs --wasm FILE   hand every runtime FILE as the core
 *   node test/runtimes/matrix.mjs --expect-broken --wasm FILE
 *                                               pass only if every feature that loads the core fails
 *                                               at loading it (CORE_LOAD_FAILURE)
 *
 * Prints one line per runtime x feature and a closing count; exits 1 on a
 * failure. A runtime whose binary does not execute here (the probe:
 * `--version`) is skipped with the reason, never failed. The package is
 * laid out as installed in build/matrix/app/node_modules/darmok (and
 * darmok-bare: the same without build/darmok.wasm, for darmok/inline and
 * init()); the cases (cases/, workerd/) run from build/matrix/app. The
 * results go to build/matrix/results.json; a full run that passes also
 * checks that docs/ECOSYSTEM.md's table is the one they make (table.mjs),
 * that package.json's engines promise no runtime or version it did not
 * run (enginesProblems), and that README.md names each version.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { RUNTIMES, FEATURES, renderTable, tableInDoc, versionNumbers, enginesProblems } from './table.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const OUT = path.join(ROOT, 'build/matrix');
const APP = path.join(OUT, 'app');
const require = createRequire(import.meta.url);
const { startRedis, freePort } = require('../js/redis-servers.cjs');

const CASE_TIMEOUT_MS = 60_000;
const WORKERD_START_MS = 30_000;
const FETCH_TIMEOUT_MS = 15_000;

const { values: opts } = parseArgs({
  options: {
    only: { type: 'string' },
    wasm: { type: 'string' },
    'expect-broken': { type: 'boolean', default: false }
  }
});
const WASM = path.resolve(opts.wasm || path.join(ROOT, 'build/darmok.wasm'));
const only = opts.only ? new Set(opts.only.split(',')) : null;
if (only) for (const name of only) if (!RUNTIMES.some((r) => r.name === name)) throw new Error(`--only: no runtime ${name}`);

/* --- the package as installed ------------------------------------------- */

function inlineModule(wasmFile) {
  return '// Made by test/runtimes/matrix.mjs from ' + path.basename(wasmFile) + '\n' +
    `module.exports = '${fs.readFileSync(wasmFile).toString('base64')}';\n`;
}

/* node_modules/<name>: package.json, js/, the inline core, and build/darmok.wasm when withWasm. */
function copyPackage(name, withWasm) {
  const dir = path.join(APP, 'node_modules', name);
  fs.mkdirSync(path.join(dir, 'build'), { recursive: true });
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  pkg.name = name;
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  fs.cpSync(path.join(ROOT, 'js'), path.join(dir, 'js'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'build/darmok-inline.cjs'), opts.wasm
    ? inlineModule(WASM) : fs.readFileSync(path.join(ROOT, 'build/darmok-inline.cjs')));
  if (withWasm) fs.copyFileSync(WASM, path.join(dir, 'build/darmok.wasm'));
}

/* The fixture table, requiring the installed package instead of the work tree's js/. */
function copyFixtures(pkgName, file) {
  const from = "require('../../js/index.cjs')";
  const text = fs.readFileSync(path.join(ROOT, 'test/js/fixtures.cjs'), 'utf8');
  if (!text.includes(from)) throw new Error(`test/js/fixtures.cjs no longer has ${from}`);
  fs.writeFileSync(path.join(APP, file), text.replace(from, `require('${pkgName}')`));
}

function makeApp() {
  fs.rmSync(APP, { recursive: true, force: true });
  fs.mkdirSync(APP, { recursive: true });
  // Its own package.json: Deno and Bun resolve npm packages from its
  // node_modules (redis and ioredis from the work tree's, one folder up the walk).
  fs.writeFileSync(path.join(APP, 'package.json'), JSON.stringify({ name: 'darmok-matrix-app', private: true, type: 'commonjs' }, null, 2));
  copyPackage('darmok', true);
  copyPackage('darmok-bare', false);
  for (const dir of ['cases', 'workerd']) {
    for (const f of fs.readdirSync(path.join(HERE, dir))) fs.copyFileSync(path.join(HERE, dir, f), path.join(APP, f));
  }
  fs.copyFileSync(path.join(ROOT, 'examples/cloudflare-worker/src/worker.mjs'), path.join(APP, 'example-worker.mjs'));
  copyFixtures('darmok', 'fixtures.cjs');
  copyFixtures('darmok-bare', 'fixtures-bare.cjs');
}

/* --- running ----------------------------------------------------------- */

/*
 * The runtime's version line, or { skip: reason } when its binary does not
 * run here, or { missing } when it is not installed. DARMOK_MATRIX_<NAME>
 * (e.g. DARMOK_MATRIX_BUN) points a runtime at another binary.
 */
function probe(rt) {
  if (!fs.existsSync(rt.bin)) return { missing: `${path.relative(ROOT, rt.bin)} is not installed: run make setup` };
  const r = spawnSync(rt.bin, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  const binary = `its binary ${rt.bin.startsWith(ROOT + path.sep) ? path.relative(ROOT, rt.bin) : rt.bin} does not run on this machine`;
  if (r.error) return { skip: `${binary} (${r.error.code || r.error.message})` };
  if (r.status !== 0) return { skip: `${binary} (--version exited ${r.status ?? r.signal}: ${(r.stderr || '').trim().split('\n')[0]})` };
  return { version: r.stdout.trim().split('\n')[0] };
}

/* Runs argv in APP; resolves to { ok, detail }. */
function run(argv, env) {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: APP, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), CASE_TIMEOUT_MS);
    child.on('error', (err) => resolve({ ok: false, detail: `cannot run: ${err.message}` }));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop() || '';
      if (code === 0 && line.startsWith('ok: ')) resolve({ ok: true, detail: line.slice(4) });
      else if (signal) resolve({ ok: false, detail: `killed by ${signal} after ${CASE_TIMEOUT_MS / 1000} s? ${lastLines(stderr)}` });
      else resolve({ ok: false, detail: `exit ${code}: ${lastLines(stderr || stdout)}` });
    });
  });
}

/* The first line of an error that says what failed (a stack's first line). */
function lastLines(text) {
  const lines = text.trim().split('\n').filter((l) => l.trim() && !/^\s+at /.test(l));
  return lines.slice(-3).join(' | ').slice(0, 400) || '(no output)';
}

function command(rt, file, feature) {
  // Deno with what docs/ECOSYSTEM.md says darmok needs (env: the cases' own).
  if (rt.kind === 'deno') return [rt.bin, 'run', '--allow-read', '--allow-env', '--allow-net=127.0.0.1', '--quiet', file, feature];
  return [rt.bin, file, feature];
}

async function runCases(rt, redisUrl, report) {
  for (const f of FEATURES) {
    if (!f.on.includes(rt.kind) || !f.file) continue;
    const started = Date.now();
    const r = await run(command(rt, f.file, f.arg), { DARMOK_WASM: WASM, REDIS_URL: redisUrl, MATRIX_RUNTIME: rt.name });
    report(rt, f, r, Date.now() - started);
  }
}

/* --- workerd ----------------------------------------------------------- */

/*
 * Bundles a worker: 'darmok/darmok.wasm' must resolve through the package's
 * exports to a file (as wrangler resolves it), and stays an import, which
 * the workerd config makes a module (a compiled core); .bin imports stay
 * too (data modules).
 */
async function bundle(entry, outfile) {
  const esbuild = require('esbuild');
  const wasmModule = {
    name: 'wasm-modules',
    setup(build) {
      build.onResolve({ filter: /^darmok\/darmok\.wasm$/ }, async (args) => {
        if (args.pluginData === 'inner') return undefined;
        const r = await build.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: 'inner' });
        if (r.errors.length) return { errors: r.errors };
        if (!fs.existsSync(r.path)) return { errors: [{ text: `${args.path} resolves to ${r.path}, which does not exist` }] };
        return { path: args.path, external: true };
      });
      build.onResolve({ filter: /\.bin$/ }, (args) => ({ path: args.path, external: true }));
    }
  };
  await esbuild.build({
    entryPoints: [path.join(APP, entry)], outfile, bundle: true, format: 'esm', platform: 'browser',
    conditions: ['workerd', 'worker'], logLevel: 'error', plugins: [wasmModule]
  });
}

async function waitForPort(port, child, log) {
  const until = Date.now() + WORKERD_START_MS;
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`workerd exited: ${lastLines(log())}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`workerd did not listen within ${WORKERD_START_MS / 1000} s: ${lastLines(log())}`);
}

/* workerd serve config, the sockets named in ports: calls use(ports) while it runs. */
async function serve(rt, dir, config, names, use) {
  const ports = {};
  const argv = ['serve', path.join(dir, config)];
  for (const name of names) {
    ports[name] = await freePort();
    argv.push('--socket-addr', `${name}=127.0.0.1:${ports[name]}`);
  }
  const child = spawn(rt.bin, argv, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  try {
    await waitForPort(ports[names[0]], child, () => log);
    return await use(ports);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('close', r)));
  }
}

async function getJson(port, route) {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${res.status}: ${text.slice(0, 300)}`);
  }
}

/* A refused-bytes answer passes when both the call and init() say ERR_NOT_READY and name the way out. */
function refusedOk(answer) {
  for (const what of ['call', 'init']) {
    const { code, message } = answer[what];
    if (code !== 'ERR_NOT_READY' || !message.includes('init(wasm)') || !message.includes('from bytes')) {
      return { ok: false, detail: `${what}: ${code} ${message}` };
    }
  }
  return { ok: true, detail: `ERR_NOT_READY at once, naming init(wasm): "${answer.call.message.slice(0, 90)}…"` };
}

async function runWorkerd(rt, report) {
  const feature = (id) => FEATURES.find((f) => f.id === id);
  /* Bundles workers into a fresh dir with config and the core, serves them, and reports ids from what use returns. */
  const attempt = async (dirName, workers, config, sockets, ids, use) => {
    const started = Date.now();
    let results;
    try {
      const dir = path.join(OUT, dirName);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      for (const [from, to] of workers) await bundle(from, path.join(dir, to));
      fs.copyFileSync(config, path.join(dir, path.basename(config)));
      fs.copyFileSync(WASM, path.join(dir, 'darmok.wasm'));
      results = await serve(rt, dir, path.basename(config), sockets, use);
    } catch (err) {
      results = Object.fromEntries(ids.map((id) => [id, { ok: false, detail: String(err && err.message) }]));
    }
    for (const id of ids) report(rt, feature(id), results[id], Date.now() - started);
  };
  // The refused-bytes workers first: their first request must answer, not hang.
  await attempt('workerd-refused', [['inline-worker.mjs', 'inline-worker.mjs'], ['bytes-worker.mjs', 'bytes-worker.mjs']],
    path.join(APP, 'refused.capnp'), ['inline', 'bytes'], ['inline-refused', 'init-bytes-refused'], async (ports) => ({
      'inline-refused': refusedOk(await getJson(ports.inline, '/')),
      'init-bytes-refused': refusedOk(await getJson(ports.bytes, '/'))
    }));
  await attempt('workerd-module', [['module-worker.mjs', 'module-worker.mjs']], path.join(APP, 'module.capnp'), ['module'],
    ['init-module', 'json-esm', 'protobuf-esm'], async (ports) => ({
      'init-module': await getJson(ports.module, '/init'),
      'json-esm': await getJson(ports.module, '/json'),
      'protobuf-esm': await getJson(ports.module, '/protobuf')
    }));
  await attempt('workerd-example', [['example-worker.mjs', 'worker.mjs']], path.join(ROOT, 'examples/cloudflare-worker/config.capnp'),
    ['http'], ['worker-example'], async (ports) => {
      const got = await getJson(ports.http, '/?title=Edge');
      const want = 'Edge, 2026, edge';
      return { 'worker-example': got.summary === want
        ? { ok: true, detail: `GET /?title=Edge -> "${got.summary}" (examples/cloudflare-worker)` }
        : { ok: false, detail: `got ${JSON.stringify(got).slice(0, 300)}` } };
    });
}

/* --- main -------------------------------------------------------------- */

const started = Date.now();
makeApp();
const results = [];
let failed = 0;
let passed = 0;
const skipped = []; // the runtimes whose binary does not run here
const broken = opts['expect-broken'];

/*
 * How a feature handed a cut core fails when loading the core is what
 * failed: darmok's loader in Node, Bun and Deno ("cannot compile <file>:",
 * "cannot compile the embedded core synchronously:"), init(bytes) ("the
 * bytes are not a WebAssembly module"), and the engine's own CompileError
 * (init(Module)'s compile in a case, workerd compiling the config's module).
 * Any other failure (Redis down, a broken case) proves nothing about the core.
 */
const CORE_LOAD_FAILURE = /CompileError|cannot compile |the bytes are not a WebAssembly module/;

function report(rt, f, r, ms) {
  let status = r.ok ? 'ok' : 'FAIL';
  let detail = r.detail;
  if (broken && f.core) {
    // Handed a broken core, a feature that loads it must fail, at loading it.
    const atLoad = !r.ok && CORE_LOAD_FAILURE.test(r.detail);
    status = atLoad ? 'ok' : 'FAIL';
    if (r.ok) detail = `passed with a broken core: ${r.detail}`;
    else detail = `${atLoad ? 'failed as it must' : 'failed, but not at loading the core'}: ${r.detail}`;
  }
  if (status === 'ok') passed++;
  else failed++;
  results.push({ runtime: rt.name, feature: f.id, status: r.ok ? 'ok' : 'fail', detail: r.detail });
  console.log(`matrix: ${rt.name.padEnd(7)} ${f.id.padEnd(24)} ${status.padEnd(4)} ${detail} (${(ms / 1000).toFixed(1)} s)`);
}

const versions = {};
let redis = null;
try {
  for (const rt of RUNTIMES) {
    if (only && !only.has(rt.name)) continue;
    const override = process.env[`DARMOK_MATRIX_${rt.name.toUpperCase()}`];
    if (override) rt.bin = path.resolve(override);
    const p = probe(rt);
    if (p.missing) {
      failed++;
      console.log(`matrix: ${rt.name.padEnd(7)} FAIL ${p.missing}`);
      continue;
    }
    if (p.skip) {
      skipped.push(rt.name);
      console.log(`matrix: ${rt.name.padEnd(7)} SKIPPED, ${rt.name} untested here: ${p.skip}`);
      results.push({ runtime: rt.name, feature: '*', status: 'skip', detail: p.skip });
      continue;
    }
    versions[rt.name] = p.version;
    console.log(`matrix: ${rt.name.padEnd(7)} ${p.version}`);
    if (rt.kind === 'workerd') {
      await runWorkerd(rt, report);
    } else {
      if (redis === null) redis = await startRedis();
      await runCases(rt, redis.url, report);
    }
  }
} finally {
  if (redis !== null) await redis.stop();
}

fs.writeFileSync(path.join(OUT, 'results.json'), JSON.stringify({ versions, results }, null, 2) + '\n');
const seconds = ((Date.now() - started) / 1000).toFixed(0);

// A full, passing run with the real core checks the table in docs/ECOSYSTEM.md,
// package.json's engines and README.md against the versions it ran.
if (!broken && !opts.wasm && !only && failed === 0 && skipped.length === 0) {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/ECOSYSTEM.md'), 'utf8');
  if (tableInDoc(doc) !== renderTable({ versions, results })) {
    failed++;
    console.log('matrix: docs/ECOSYSTEM.md\'s runtime table is not what this run gives: run `make runtime-table` and commit it');
  }
  const { engines } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  for (const problem of enginesProblems(engines, versions, process.versions.node)) {
    failed++;
    console.log(`matrix: package.json: ${problem}`);
  }
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
  const unnamed = versionNumbers(versions).filter((v) => !readme.includes(` ${v}`));
  if (unnamed.length) {
    failed++;
    console.log(`matrix: README.md does not name the versions tested: ${unnamed.join(', ')}`);
  }
}
console.log(`matrix: ${Object.keys(versions).length} runtimes in ${seconds} s${broken ? `, handed a broken core (${WASM})` : ''}`);
console.log(`matrix: ${passed} passed, ${failed} failed, ${skipped.length} skipped${skipped.length ? ` (runtimes not run here: ${skipped.join(', ')})` : ''}`);
process.exitCode = failed > 0 ? 1 : 0;

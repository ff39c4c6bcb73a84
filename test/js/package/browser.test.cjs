'use strict';
/*
 * darmok in a browser: a page built with Vite (the .wasm found through
 * new URL(..., import.meta.url), emitted as an asset) and with esbuild (the
 * default entry, init() given a URL, a Response, bytes or a Module; and
 * darmok/inline, no .wasm file at all), served from a loopback HTTP server
 * to Debian's headless Chromium. Each page encodes the Foo graph, decodes
 * it and calls its methods; bytes encoded by Node decode in the page and
 * the page's decode in Node, in both formats, byte for byte the same.
 */
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const esbuild = require('esbuild');
const { chromium } = require('playwright-core');
const darmok = require('../../../js/index.cjs');
const pb = require('../../../js/protobuf.cjs');
const { Foo, makeFoo, checkFoo, EXPECTED_CHECK } = require('./browser/graph.cjs');

const root = path.join(__dirname, '..', '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };

let dir;
let server;
let base;
let browser;
const requested = [];

/* A page source folder: index.html, app.mjs importing `entry`, node_modules/darmok -> this repo. */
function pageSource(name, entry) {
  const src = path.join(dir, `${name}-src`);
  fs.mkdirSync(path.join(src, 'node_modules'), { recursive: true });
  fs.symlinkSync(root, path.join(src, 'node_modules', 'darmok'), 'dir');
  const app = fs.readFileSync(path.join(__dirname, 'browser', 'app.mjs.in'), 'utf8')
    .replace('DARMOK_ENTRY', entry).replace('GRAPH', path.join(__dirname, 'browser', 'graph.cjs'));
  fs.writeFileSync(path.join(src, 'app.mjs'), app);
  fs.writeFileSync(path.join(src, 'index.html'),
    '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>darmok</title><script type="module" src="./app.mjs"></script>\n');
  return src;
}

async function buildWithEsbuild(name, entry, withWasm) {
  const src = pageSource(name, entry);
  const out = path.join(dir, 'www', name);
  await esbuild.build({
    entryPoints: [path.join(src, 'app.mjs')], bundle: true, platform: 'browser', format: 'esm',
    target: 'chrome110', outfile: path.join(out, 'app.mjs'), logLevel: 'silent',
    // The model's classes are registered under their names, which a bundle renames on a clash (Foo -> Foo2).
    keepNames: true
  });
  fs.copyFileSync(path.join(src, 'index.html'), path.join(out, 'index.html'));
  if (withWasm) fs.copyFileSync(path.join(root, 'build', 'darmok.wasm'), path.join(out, 'darmok.wasm'));
}

async function buildWithVite() {
  const { build } = await import('vite');
  const src = pageSource('vite', 'darmok');
  // minify off: the model's classes use their names as keys, which a minifier renames.
  await build({
    root: src, configFile: false, logLevel: 'silent', base: './',
    build: { outDir: path.join(dir, 'www', 'vite'), emptyOutDir: true, minify: false }
  });
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-browser-'));
  await Promise.all([
    buildWithVite(),
    buildWithEsbuild('esbuild', 'darmok', true),
    buildWithEsbuild('inline', 'darmok/inline', false)
  ]);
  const www = path.join(dir, 'www');
  server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    requested.push(url.pathname);
    const file = path.join(www, path.normalize(url.pathname));
    if (!file.startsWith(www + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

after(async () => {
  if (browser) await browser.close();
  if (server) await new Promise((resolve) => server.close(resolve));
  fs.rmSync(dir, { recursive: true, force: true });
});

const nodeFoo = makeFoo();
const nodeJson = darmok.encodeEntity(nodeFoo);
const nodePb = pb.encodeEntity(nodeFoo);

/* Load the page, wait for init(), run it with Node's bytes; fail on any page error. */
async function runPage(pagePath) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(msg.text()); });
  try {
    await page.goto(base + pagePath);
    await page.waitForFunction(() => window.darmokPage !== undefined);
    await page.evaluate(() => window.darmokPage.ready);
    const out = await page.evaluate(([j, p]) => window.darmokPage.run(j, p), [nodeJson, nodePb.toString('base64')]);
    assert.deepStrictEqual(errors, []);
    return out;
  } finally {
    await page.close();
  }
}

function checkRun(out) {
  assert.equal(out.hasBuffer, false, 'no Buffer on the page');
  assert.equal(out.plainUint8Array, true, 'protobuf bytes are a plain Uint8Array there');
  for (const c of [...out.own, ...out.fromNode]) assert.deepStrictEqual(c, EXPECTED_CHECK);
  // The page's bytes are Node's, and decode in Node to a working graph.
  assert.equal(out.json, nodeJson);
  assert.equal(out.pb, nodePb.toString('base64'));
  assert.deepStrictEqual(checkFoo(darmok.decodeEntity(out.json, Foo)), EXPECTED_CHECK);
  assert.deepStrictEqual(checkFoo(pb.decodeEntity(Buffer.from(out.pb, 'base64'), Foo)), EXPECTED_CHECK);
}

test('Vite build: init() finds the .wasm Vite emitted from new URL(..., import.meta.url)', async () => {
  const assets = fs.readdirSync(path.join(dir, 'www', 'vite', 'assets'));
  const wasm = assets.find((f) => f.endsWith('.wasm'));
  assert.ok(wasm, `Vite emitted the core as an asset (${assets.join(', ')})`);
  requested.length = 0;
  checkRun(await runPage('/vite/index.html'));
  assert.ok(requested.includes(`/vite/assets/${wasm}`), requested.join(' '));
});

for (const how of ['url', 'response', 'bytes', 'module']) {
  test(`esbuild build, default entry: init() with a ${how}`, async () => {
    checkRun(await runPage(`/esbuild/index.html?source=${how}`));
  });
}

test('esbuild build, darmok/inline: no .wasm file fetched', async () => {
  requested.length = 0;
  checkRun(await runPage('/inline/index.html'));
  assert.ok(!requested.some((p) => p.endsWith('.wasm')), requested.join(' '));
  assert.ok(!fs.readdirSync(path.join(dir, 'www', 'inline')).some((f) => f.endsWith('.wasm')));
});

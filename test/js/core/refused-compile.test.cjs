'use strict';
/*
 * A runtime that compiles no WebAssembly from bytes (Cloudflare's workerd:
 * "Wasm code generation disallowed by embedder"), played in a child Node
 * whose WebAssembly.Module and WebAssembly.compile refuse every bytes:
 * darmok/inline's first call and init() each give one ERR_NOT_READY that
 * says to pass init() the imported .wasm, at once; init(Module) works.
 * The real workerd runs in the runtime matrix (test/runtimes/matrix.mjs).
 */
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..', '..');

const CHILD = `
const fs = require('node:fs');
const module = new WebAssembly.Module(fs.readFileSync(${JSON.stringify(path.join(ROOT, 'build/darmok.wasm'))}));
const refuse = () => new WebAssembly.CompileError('WebAssembly.Module(): Wasm code generation disallowed by embedder');
WebAssembly.Module = new Proxy(WebAssembly.Module, { construct() { throw refuse(); } });
WebAssembly.compile = async () => { throw refuse(); };
WebAssembly.compileStreaming = async () => { throw refuse(); };
const out = {};
const settle = async (fn) => { try { await fn(); return { code: null }; } catch (e) { return { code: e.code, message: e.message }; } };
(async () => {
  const darmok = require(${JSON.stringify(path.join(ROOT, 'js/inline.cjs'))});
  out.call = await settle(() => darmok.encodeEntity(1));
  out.init = await settle(() => darmok.init());
  out.bytes = await settle(() => darmok.init(new Uint8Array(8)));
  out.module = await settle(() => darmok.init(module));
  out.after = darmok.decodeEntity(darmok.encodeEntity(new Map([[1, 2]]))).get(1);
  console.log(JSON.stringify(out));
})();
`;

test('where bytes cannot be compiled: one clear ERR_NOT_READY from darmok/inline and init(bytes); init(Module) works', () => {
  const out = JSON.parse(execFileSync(process.execPath, ['-e', CHILD], { cwd: ROOT, encoding: 'utf8', timeout: 30000 }));
  for (const what of ['call', 'init', 'bytes']) {
    assert.equal(out[what].code, 'ERR_NOT_READY', `${what}: ${out[what].message}`);
    assert.match(out[what].message, /does not compile WebAssembly from bytes \(.*disallowed by embedder\)/, what);
    assert.match(out[what].message, /import wasm from 'darmok\/darmok\.wasm'.*init\(wasm\)/, what);
  }
  assert.deepEqual(out.module, { code: null });
  assert.equal(out.after, 2);
});

/*
 * A runtime that lets compiles through while the module loads and refuses
 * them later (workerd does so per request), unless it says who it is: the
 * package is a copy of js/ with no build/, so the load at require finds
 * no core. Refusing starts while init(URL) reads the file, after its own
 * check and before its compile; then a call, init(bytes) and init() are
 * asked. Each must say that bytes are refused, not that the bytes are bad
 * or that no file was found.
 */
const LATER_CHILD = (dir) => `
const fs = require('node:fs');
const wasmFile = ${JSON.stringify(path.join(ROOT, 'build/darmok.wasm'))};
const bytes = fs.readFileSync(wasmFile);
const module = new WebAssembly.Module(bytes);
const darmok = require(${JSON.stringify(path.join(dir, 'js/index.cjs'))});
let refusing = false;
const refuse = () => new WebAssembly.CompileError('WebAssembly.Module(): Wasm code generation disallowed by embedder');
const { Module, compile } = WebAssembly;
WebAssembly.Module = new Proxy(Module, { construct(target, args) { if (refusing) throw refuse(); return new target(...args); } });
WebAssembly.compile = async (b) => { if (refusing) throw refuse(); return compile(b); };
WebAssembly.compileStreaming = async () => { throw refuse(); };
const readFile = fs.promises.readFile;
fs.promises.readFile = async (...args) => { const got = await readFile(...args); refusing = true; return got; };
const settle = async (fn) => { try { await fn(); return { code: null }; } catch (e) { return { code: e.code, message: e.message }; } };
(async () => {
  const out = {};
  out.url = await settle(() => darmok.init(require('node:url').pathToFileURL(wasmFile)));
  out.call = await settle(() => darmok.encodeEntity(1));
  out.bytes = await settle(() => darmok.init(bytes));
  out.init = await settle(() => darmok.init());
  out.module = await settle(() => darmok.init(module));
  out.after = darmok.decodeEntity(darmok.encodeEntity(new Set([3]))).has(3);
  console.log(JSON.stringify(out));
})();
`;

test('bytes refused only after the module loaded: the same one ERR_NOT_READY, never "not a WebAssembly module"', () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'darmok-refused-later-'));
  try {
    fs.cpSync(path.join(ROOT, 'js'), path.join(dir, 'js'), { recursive: true });
    const out = JSON.parse(execFileSync(process.execPath, ['-e', LATER_CHILD(dir)], { encoding: 'utf8', timeout: 30000 }));
    for (const what of ['url', 'call', 'bytes', 'init']) {
      assert.equal(out[what].code, 'ERR_NOT_READY', `${what}: ${out[what].code} ${out[what].message}`);
      assert.match(out[what].message, /does not compile WebAssembly from bytes \(.*disallowed by embedder\)/, what);
      assert.match(out[what].message, /import wasm from 'darmok\/darmok\.wasm'.*init\(wasm\)/, what);
    }
    assert.deepEqual(out.module, { code: null });
    assert.equal(out.after, true);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

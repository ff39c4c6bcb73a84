'use strict';
/*
 * load.cjs - where the core's .wasm comes from, and compiling it into a
 * WebAssembly.Module. instance.cjs instantiates what this returns.
 *
 * moduleSync() looks, in this order:
 *   1. the bytes embedded by the darmok/inline entry (embed(), before the
 *      core loads: build/darmok-inline.cjs, base64);
 *   2. in Node only, files: build/darmok.wasm beside this js/ folder (the
 *      installed package), darmok.wasm beside this file (a bundle whose
 *      .wasm was copied next to it), then the same two places relative to
 *      the URL the ESM entries located (locate(), below: an ESM bundle).
 * compile(source) is init()'s: the bytes, a Response (or a Promise of
 * one), a URL, or a WebAssembly.Module; with no source, what moduleSync()
 * could not read synchronously (the embedded bytes, or the located URL,
 * fetched).
 *
 * Some runtimes compile no WebAssembly from bytes at all (Cloudflare's
 * workerd: "Wasm code generation disallowed by embedder"): there the only
 * way in is a WebAssembly.Module the runtime compiled from an imported
 * .wasm, passed to init(). compileRefused() tells, and every path that
 * would compile bytes says so (refusedError) instead of failing later or
 * calling good bytes bad.
 *
 * The ESM entries locate the file with new URL('../../build/darmok.wasm',
 * import.meta.url) (locate.mjs), the form webpack 5, Vite and Parcel
 * rewrite to the asset they emit. Nothing here calls a Node-only API
 * unless process.versions.node says this is Node: Node's fs comes from
 * process.getBuiltinModule, or node-builtins.cjs, which bundlers for the
 * browser drop (package.json "browser").
 */

const { DarmokError } = require('./errors.cjs');

let embedded = null; //  base64 text of the .wasm (darmok/inline)
let located = null; //   URL of the .wasm, from an ESM entry
let besideUrl = null; // the URL of darmok.wasm beside that ESM module

/* darmok/inline: the .wasm as base64, handed over before the core loads. */
function embed(base64) {
  if (typeof base64 !== 'string') throw new DarmokError('ERR_INTERNAL', 'the embedded core is not a base64 string');
  embedded = base64;
}

/* The ESM entries: url of the .wasm (null where import.meta.url is no URL), base that module's own URL. */
function locate(url, base) {
  if (located !== null) return;
  located = url;
  try {
    besideUrl = new URL('darmok.wasm', base);
  } catch {
    besideUrl = null;
  }
}

/*
 * Why this runtime compiles no WebAssembly from bytes now, or null when it
 * does. workerd says who it is (navigator.userAgent, as Cloudflare
 * documents). Elsewhere the smallest module with a function is compiled,
 * which can fail for no other reason, each time this is asked and never
 * remembered as allowed: a runtime may let a compile through while a
 * module's global scope is evaluated and refuse it later (workerd does, per
 * request), so only the answer at the call that needs a compile is true.
 */
const PROBE_MODULE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00, //                                              one type: () -> ()
  0x03, 0x02, 0x01, 0x00, //                                                          one function of it
  0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b]); //                                            its body: end

function compileRefused() {
  if (typeof navigator === 'object' && navigator !== null && navigator.userAgent === 'Cloudflare-Workers') {
    return 'Cloudflare Workers (workerd) compile no WebAssembly from bytes';
  }
  try {
    new WebAssembly.Module(PROBE_MODULE); // eslint-disable-line no-new
    return null;
  } catch (err) {
    return `this runtime does not compile WebAssembly from bytes (${err && err.message})`;
  }
}

/* What to do where bytes are refused: the one way in (docs/ECOSYSTEM.md, "Cloudflare Workers"). */
const MODULE_HINT = "import the .wasm as a module (import wasm from 'darmok/darmok.wasm') and pass it to init(wasm)";

/* The one error where bytes are refused; why: compileRefused()'s answer. */
function refusedError(why) {
  return new DarmokError('ERR_NOT_READY', `the WebAssembly core cannot be loaded: ${why}; ${MODULE_HINT} before the first call`);
}

function fromBase64(text) {
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
  if (typeof Buffer === 'function') return Buffer.from(text, 'base64');
  const bin = atob(text);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

/* Node's fs and path, or null when this is not Node (or they cannot be had). */
function nodeBuiltins() {
  if (typeof process !== 'object' || process === null || !process.versions || !process.versions.node) return null;
  try {
    if (typeof process.getBuiltinModule === 'function') {
      return { fs: process.getBuiltinModule('fs'), path: process.getBuiltinModule('path') };
    }
    return require('./node-builtins.cjs');
  } catch {
    // An ESM bundle on a Node before 20.16: no require to get fs with.
    return null;
  }
}

/* The files Node may read, as [path or file: URL, shown as]. */
function nodeCandidates(path) {
  const out = [];
  if (typeof __dirname === 'string') {
    out.push(path.join(__dirname, '..', '..', 'build', 'darmok.wasm'), path.join(__dirname, 'darmok.wasm'));
  }
  for (const url of [located, besideUrl]) {
    if (url !== null && url !== undefined && url.protocol === 'file:') out.push(url);
  }
  return out;
}

/*
 * The core as a WebAssembly.Module, compiled synchronously, or an Error
 * that says where it looked. Throws nothing.
 */
function moduleSync() {
  const refused = compileRefused();
  if (refused !== null) return new Error(refused);
  if (embedded !== null) {
    try {
      return new WebAssembly.Module(fromBase64(embedded));
    } catch (err) {
      // A browser's main thread may refuse a synchronous compile this big: init() compiles it.
      return new Error(`cannot compile the embedded core synchronously: ${err && err.message}; call init()`);
    }
  }
  const node = nodeBuiltins();
  if (node === null) return new Error('no file system here: call init()');
  const tried = [];
  for (const file of nodeCandidates(node.path)) {
    let bytes;
    try {
      bytes = node.fs.readFileSync(file);
    } catch (err) {
      tried.push(`${file instanceof URL ? file.href : file}: ${err && err.code ? err.code : err && err.message}`);
      continue;
    }
    try {
      return new WebAssembly.Module(bytes);
    } catch (err) {
      return new Error(`cannot compile ${file}: ${err && err.message}`);
    }
  }
  return new Error(`cannot find darmok.wasm (${tried.join('; ') || 'no place to look'}); ` +
    'copy build/darmok.wasm beside your bundle, or use darmok/inline');
}

/* What init() with no source compiles: the embedded bytes, or the located URL. */
function defaultSource() {
  if (embedded !== null) return fromBase64(embedded);
  return located || null;
}

function isUrl(v) {
  return (typeof URL === 'function' && v instanceof URL) ||
    (v !== null && typeof v === 'object' && typeof v.href === 'string' && typeof v.protocol === 'string' &&
      typeof v.arrayBuffer !== 'function');
}

/*
 * A URL's bytes: fetch(), or in Node a file: URL read from disk (Node's
 * fetch takes no file: URLs). A URL that gives no bytes is ERR_NOT_READY
 * (the core stays unloaded), with the reason as cause.
 */
async function fetchUrl(url) {
  url = new URL(url.href);
  let why;
  try {
    if (url.protocol === 'file:') {
      const node = nodeBuiltins();
      if (node !== null) return await node.fs.promises.readFile(url);
    }
    if (typeof fetch !== 'function') {
      why = 'no fetch() here: pass init() the bytes';
    } else {
      const res = await fetch(url);
      if (res.ok) return res;
      why = `HTTP ${res.status}`;
    }
  } catch (e) {
    const err = new DarmokError('ERR_NOT_READY', `cannot load the core from ${url.href}: ${e.message}`);
    err.cause = e;
    throw err;
  }
  throw new DarmokError('ERR_NOT_READY', `cannot load the core from ${url.href}: ${why}`);
}

/*
 * source -> Promise<WebAssembly.Module>: bytes (ArrayBuffer or a view), a
 * WebAssembly.Module, a Response or a Promise of one (compiled while it
 * streams when the runtime can), or a URL (fetched; file: read in Node).
 * Anything but a Module is ERR_NOT_READY where bytes are refused, before
 * it is fetched.
 */
async function compile(source) {
  source = await source;
  if (source instanceof WebAssembly.Module) return source;
  const refused = compileRefused();
  if (refused !== null) throw refusedError(refused);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
  if (isUrl(source)) source = await fetchUrl(source);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source);
  if (source !== null && typeof source === 'object' && typeof source.arrayBuffer === 'function') {
    if (typeof WebAssembly.compileStreaming === 'function') {
      try {
        return await WebAssembly.compileStreaming(source.clone ? source.clone() : source);
      } catch {
        // Wrong MIME type, or not a real Response: fall back to the bytes.
      }
    }
    return WebAssembly.compile(await source.arrayBuffer());
  }
  throw badSource();
}

/*
 * Whether compile() takes source: bytes, a Module, a Response, a URL or a
 * Promise (of one). init() asks before anything else, so that a wrong
 * argument is refused even when the core is ready.
 */
function isSource(source) {
  return source instanceof WebAssembly.Module || source instanceof ArrayBuffer || ArrayBuffer.isView(source) ||
    isUrl(source) ||
    (source !== null && typeof source === 'object' && (typeof source.then === 'function' || typeof source.arrayBuffer === 'function'));
}

function badSource() {
  return new DarmokError('ERR_INVALID_OPTION', 'init() takes the .wasm bytes, a Response, a URL or a WebAssembly.Module');
}

module.exports = { embed, locate, moduleSync, defaultSource, compile, isSource, badSource, compileRefused, refusedError };

'use strict';
/*
 * instance.cjs - the WebAssembly instance of the core in use: making it
 * (setup, at load or by init()), replacing it when its memory has grown too
 * far (renew), warming it up, and the views of its memory. The calls into
 * it are core.cjs's; where its .wasm comes from is load.cjs's.
 *
 * The ABI - the calls of wasm/exports.txt, their arguments, the result
 * words, the error codes - is described once, in wasm/dk_abi.h; its
 * constants come from js/core/dk_abi.cjs, which the build generates from the
 * C headers.
 *
 * Growing WebAssembly memory detaches every view, so views are re-taken
 * (cheaply: only when memory.buffer changed) after every call (called()).
 * No raw pointer ever leaves js/: only core.cjs and core-errors.cjs read live.
 *
 * Node (and darmok/inline) instantiate the core synchronously at require
 * time; elsewhere init(source) compiles asynchronously.
 */

const { DarmokError } = require('./errors.cjs');
const load = require('./load.cjs');
const { TapeReader } = require('./tape-reader.cjs');
const { nodeBufferOf } = require('./text.cjs');

/*
 * Result words (u32 index into the words at dk_ctx_result) and the
 * dk_pb_decode_ctx flag: their meaning is in wasm/dk_abi.h.
 */
const { RES_OUT, RES_OUT_LEN, RES_U16, RES_U16_LEN, RES_KEEP, READ_KEYREFS, READ_STRREFS, EXPORTS } = require('./dk_abi.cjs');

/* What a protobuf decode for JS asks for: key and string references. */
const PB_READ = READ_KEYREFS | READ_STRREFS;

/*
 * What the calls of core.cjs use, replaced whenever the instance is (setup):
 * wasm the instance's exports (null until the core is ready), ctx its
 * context, heap a Uint8Array over all of its memory (a Buffer under Node),
 * current after input() and called().
 */
const live = { wasm: null, ctx: 0, heap: null };

let memory = null;
let resAddr = 0;
let heapBuffer = null; //  the ArrayBuffer the views were taken on
let heapView = null; //    DataView over all of memory
let loadError = null; //   why the synchronous load failed, for the message
let rebuilding = false; // a decode's tape in memory is being read by JS
/*
 * The one TapeReader of decodes (rebuilding: never two at once). One
 * long-lived object rather than one per call: besides the allocation, a
 * full GC that finds no object of a hidden class left frees that class,
 * and V8 then throws away all optimized code that checks for it (every
 * function of the rebuild), to be optimized again.
 */
let reader = null;
let pending = null; //     the Promise of an init() in progress
let compiled = null; //    the WebAssembly.Module, for a fresh instance (renew)
let inputBytes = 0; //     the input area the current call reserved
let quietCalls = 0; //     calls in a row whose input and output were under LARGE
let instances = 0; //      instances made (instantiationsForTest)

/*
 * WebAssembly memory never shrinks: one hostile document (or one huge
 * one) would leave the process holding what its call grew memory to.
 * Before a call, an instance whose memory is past this is dropped for a
 * fresh one of the same module (renew), and the old memory goes with it,
 * once the calls since have shown they do not need it (QUIET_CALLS).
 */
const HIGH_WATER = 64 * 1024 * 1024;

/*
 * A call whose input or output reaches LARGE needs memory of the order of
 * HIGH_WATER: a call's memory is a few times its input and output (the
 * input area, the tape or output, the core's arena), so calls under a
 * quarter of the mark would not grow a fresh instance back past it.
 */
const LARGE = HIGH_WATER / 4;

/*
 * Memory past HIGH_WATER is given back only after this many calls in a
 * row under LARGE: a workload of large documents, or of large ones among
 * small ones, keeps the memory it keeps needing instead of paying for a
 * fresh instance (and for growing its memory again) on every large call.
 */
const QUIET_CALLS = 16;

/*
 * Re-take the views when memory grew. Growing detaches the old buffer, so
 * a detached view (length 0; memory is never empty) is the cheap sign of
 * it: reading memory.buffer costs a call into the runtime every time.
 */
function views() {
  if (live.heap === null || live.heap.length === 0) retakeViews();
}

function retakeViews() {
  if (memory.buffer !== heapBuffer) {
    heapBuffer = memory.buffer;
    const heap = new Uint8Array(heapBuffer);
    live.heap = nodeBufferOf(heap) || heap;
    heapView = new DataView(heapBuffer);
  }
}

function word(i) {
  return heapView.getUint32(resAddr + i * 4, true);
}

/*
 * Functions for whatever the module imports. The core should import
 * nothing, or only Emscripten's growth notice and WASI stubs; it never
 * prints. Anything else fails loudly if it is ever called.
 */
function makeImports(mod) {
  const imports = {};
  for (const { module, name, kind } of WebAssembly.Module.imports(mod)) {
    if (kind !== 'function') {
      throw new DarmokError('ERR_INTERNAL', `the core imports a ${kind} (${module}.${name}); only functions are provided`);
    }
    let fn;
    if (name === 'emscripten_notify_memory_growth') fn = () => {};
    else if (name === 'fd_write' || name === 'fd_close' || name === 'fd_seek') fn = () => 52; // WASI ENOSYS
    else {
      fn = () => {
        throw new DarmokError('ERR_INTERNAL', `the core called ${module}.${name}, which darmok does not provide`);
      };
    }
    (imports[module] || (imports[module] = {}))[name] = fn;
  }
  return imports;
}

/*
 * The first function of EXPORTS (wasm/exports.txt) that names lacks, or
 * undefined: a core built from other sources, which darmok must not run
 * (without dk_ctx_seed its hash seed would be predictable).
 */
function missingExport(names) {
  return EXPORTS.find((name) => !names.has(name));
}

function missingError(name) {
  return new DarmokError('ERR_NOT_READY', `this WebAssembly core lacks the export ${name} (wasm/exports.txt): rebuild it from the same darmok version`);
}

/*
 * Make instance's exports the core in use: a seeded context of its own.
 * Everything is made before any of this file's state is set, so a failure
 * (a missing export, no memory for the context) leaves the instance in use
 * as it was.
 */
function setup(instance) {
  const ex = instance.exports;
  const missing = missingExport(new Set(Object.keys(ex).filter((name) => typeof ex[name] === 'function')));
  if (missing !== undefined) throw missingError(missing);
  if (!(ex.memory instanceof WebAssembly.Memory)) throw missingError('memory');
  if (typeof ex._initialize === 'function') ex._initialize();
  const c = ex.dk_ctx_new() >>> 0;
  if (c === 0) throw new DarmokError('ERR_MEMORY', 'out of memory creating the core context');
  const seed = randomWords();
  ex.dk_ctx_seed(c, seed[0], seed[1]);
  const r = ex.dk_ctx_result(c) >>> 0;
  memory = ex.memory;
  live.ctx = c;
  resAddr = r;
  heapBuffer = null;
  live.heap = null;
  reader = null; // it holds views of the old memory
  live.wasm = ex;
  quietCalls = 0;
  views();
}

/* A new instance of mod, for setup: counted for instantiationsForTest. */
function instantiate(mod) {
  const instance = new WebAssembly.Instance(mod, makeImports(mod));
  instances++;
  return instance;
}

/*
 * Two random 32-bit words for dk_ctx_seed: the seed of the core's hash
 * tables, which a document must not be able to predict (Node 20 and
 * browsers have crypto.getRandomValues as a global).
 */
function randomWords() {
  const words = new Uint32Array(2);
  globalThis.crypto.getRandomValues(words);
  return words;
}

/*
 * The warm-up of a new core, core.cjs's (warmUpWith): run after each
 * instance made from a module, not after renew(), whose module has its
 * code compiled already.
 */
let warmUp = null;

function warmUpWith(fn) {
  warmUp = fn;
  if (live.wasm !== null) fn();
}

function warm() {
  if (warmUp !== null) warmUp();
}

/* Instantiate the core synchronously, now, when load.cjs can (Node, or darmok/inline). */
function loadSync() {
  const mod = load.moduleSync();
  if (!(mod instanceof WebAssembly.Module)) {
    loadError = mod.message;
    return;
  }
  try {
    setup(instantiate(mod));
    compiled = mod;
    warm();
  } catch (err) {
    loadError = `cannot instantiate the core: ${err && err.message}`;
  }
}

/*
 * init(source?) -> Promise<void>. A no-op when the core is ready. source:
 * the .wasm bytes (ArrayBuffer or a view), a WebAssembly.Module, a URL, a
 * Response or a Promise of one (load.cjs compile). Without one: the
 * synchronous load again, else the embedded bytes or the URL the ESM entry
 * located. A module without dk_ctx_new is not darmok's core
 * (ERR_INVALID_OPTION); one lacking another function of wasm/exports.txt
 * is a core of another build (ERR_NOT_READY, naming it).
 */
function init(source) {
  // A wrong argument is refused even when the core is ready: it would be
  // refused on the machine where it is not.
  if (source !== undefined && !load.isSource(source)) return Promise.reject(load.badSource());
  if (live.wasm !== null) return Promise.resolve();
  if (source === undefined) {
    loadSync();
    if (live.wasm !== null) return Promise.resolve();
    source = load.defaultSource();
    if (source === null) return Promise.reject(notReady());
  }
  if (source instanceof WebAssembly.Module && pending === null) {
    // Set up now, so that the core is ready when init() returns: a
    // Cloudflare Worker calls init(wasm) in one request, and a Promise
    // settled in one request's context may never settle in another's.
    try {
      checkCore(source);
      setup(instantiate(source));
      compiled = source;
      warm();
      return Promise.resolve();
    } catch (err) {
      if (err instanceof DarmokError) return Promise.reject(err);
      // A synchronous instantiation refused (a browser's main thread): the asynchronous one below.
    }
  }
  if (pending === null) {
    pending = load.compile(source).catch(notWasm).then(async (mod) => {
      checkCore(mod);
      if (live.wasm === null) {
        const instance = await WebAssembly.instantiate(mod, makeImports(mod));
        instances++;
        setup(instance);
        compiled = mod;
        warm();
      }
    }).finally(() => { pending = null; });
  }
  return pending;
}

/* Throws unless mod is darmok's core of this build (init() above). */
function checkCore(mod) {
  const names = new Set(WebAssembly.Module.exports(mod).filter((e) => e.kind === 'function').map((e) => e.name));
  if (!names.has('dk_ctx_new')) {
    throw new DarmokError('ERR_INVALID_OPTION', "init(): this WebAssembly module is not darmok's core (build/darmok.wasm): it has no dk_ctx_new");
  }
  const missing = missingExport(names);
  if (missing !== undefined) throw missingError(missing);
}

/*
 * Bytes that are not WebAssembly are ERR_INVALID_OPTION, with the
 * CompileError as cause; a compile the runtime refused, asked at once
 * (it may have refused only since compile() began), is ERR_NOT_READY.
 */
function notWasm(cause) {
  if (!(cause instanceof WebAssembly.CompileError)) throw cause;
  const refused = load.compileRefused();
  if (refused !== null) throw load.refusedError(refused);
  const err = new DarmokError('ERR_INVALID_OPTION', `init(): the bytes are not a WebAssembly module (${cause.message})`);
  err.cause = cause;
  throw err;
}

/* Calling darmok before its core is loaded: where there is no file to load it from, init() comes first. */
function notReady() {
  const refused = load.compileRefused();
  if (refused !== null) return load.refusedError(refused);
  return new DarmokError('ERR_NOT_READY',
    `the WebAssembly core is not loaded (${loadError || 'init() not called'}): await init() before the first call`);
}

function ready() {
  if (live.wasm === null) throw notReady();
  if (rebuilding) {
    // A class's migrate or fromData (they run mid-rebuild) called darmok:
    // the tape being read lives in the core's memory, which the call would reuse.
    throw new DarmokError('ERR_REENTRANT', 'darmok was called from migrate or fromData while rebuilding a decoded value; call it before or after decodeEntity instead');
  }
  // heapBuffer is current: views() ran after the last call.
  if (heapBuffer.byteLength > HIGH_WATER && quietCalls >= QUIET_CALLS && compiled !== null) renew();
}

/*
 * Replace the instance by a fresh one of the same module, synchronously
 * (between calls: nothing of the old memory is in use). No warm-up: the
 * compiled code belongs to the Module, not the instance. Where a
 * synchronous instantiation is refused (a browser's main thread may
 * refuse one of a large module), or the new instance cannot be set up,
 * the old instance stays.
 */
function renew() {
  try {
    setup(instantiate(compiled));
  } catch {
    quietCalls = 0; // not again before the next run of quiet calls
  }
}

/* Reserve the input area for n bytes; returns its address. */
function input(n) {
  const p = live.wasm.dk_ctx_input(live.ctx, n) >>> 0;
  if (p === 0) throw new DarmokError('ERR_MEMORY', `out of memory reserving ${n} input bytes`);
  inputBytes = n;
  views();
  return p;
}

/*
 * After a work call that returned code: re-take the views, and count the
 * call as quiet (for renew) when its input area and output were under LARGE.
 */
function called(code) {
  views();
  const out = code === 0 ? word(RES_OUT_LEN) : 0;
  if (inputBytes >= LARGE || out >= LARGE) quietCalls = 0;
  else if (quietCalls < QUIET_CALLS) quietCalls++;
}

/*
 * reader (a TapeReader, or null for a new one) set over the tape a decode
 * call left in memory heap (view: a DataView over it; word(i): result word
 * i of that call): with the call's UTF-16 side table when it made one
 * (text: the JSON string decoded, for entries that point into it) and
 * reading key and string references when refs. Returns the reader. Also for
 * bench/core.mjs, which times the rebuild alone on an instance of its own.
 */
function readerOverOutput(reader, heap, view, word, text, refs) {
  const out = word(RES_OUT);
  const end = out + word(RES_OUT_LEN);
  if (reader === null) reader = new TapeReader(heap, view, out, end);
  else reader.reset(heap, view, out, end);
  reader.refKeep = word(RES_KEEP);
  const u16 = word(RES_U16);
  if (u16 !== 0) reader.useUtf16(out, u16, u16 + word(RES_U16_LEN), text);
  if (refs === true) reader.useRefs();
  return reader;
}

/*
 * After a decode call: rebuild(reader) over the tape in the output, with the
 * core's UTF-16 side table of its strings when there is one (text: the
 * JSON string decoded, for entries that point into it),
 * and reading key and string references when the call wrote them (refs). No
 * call into the core may happen meanwhile (it would reuse the memory).
 */
function rebuildOutput(rebuild, refs, text) {
  rebuilding = true;
  try {
    reader = readerOverOutput(reader, live.heap, heapView, word, text, refs);
    return rebuild(reader);
  } finally {
    reader.release(); // the text and strings are not kept alive by the reader
    rebuilding = false;
  }
}

/* Internal hook for tests: the core's memory (never part of the public API). */
function wasmMemory() {
  return memory;
}

function isReady() {
  return live.wasm !== null;
}

/* Internal hook for tests: how many instances of the core this process made (at load, by init() and by renew). */
function instantiationsForTest() {
  return instances;
}

/*
 * Internal hooks for tests (never part of the public API): the exports in
 * use, and a way to put a wrapper around them (e.g. to count calls). With
 * keepContext the existing context is kept instead of making a new one.
 */
function exportsForTest() {
  return live.wasm;
}

function useExportsForTest(exports, { keepContext = false } = {}) {
  if (keepContext) live.wasm = exports;
  else setup({ exports });
}

loadSync();

module.exports = {
  live, PB_READ, init, isReady, ready, input, called, word, rebuildOutput, readerOverOutput, warmUpWith,
  wasmMemory, exportsForTest, useExportsForTest, instantiationsForTest
};

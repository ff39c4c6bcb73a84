'use strict';
/*
 * core.cjs - load the WebAssembly core and make the calls into it.
 *
 * The ABI - the calls of wasm/exports.txt, their arguments, the result
 * words, the error codes - is described once, in wasm/dk_abi.h; its
 * constants come from js/dk_abi.cjs, which the build generates from the
 * C headers.
 *
 * One encode or decode crosses the boundary twice: dk_ctx_input to reserve
 * the input area, then the work call. Growing WebAssembly memory detaches
 * every view, so views are re-taken (cheaply: only when memory.buffer
 * changed) after every call. No raw pointer ever leaves this file.
 *
 * Where the .wasm comes from is load.cjs's concern. Node (and darmok/inline)
 * instantiate it synchronously at require time; elsewhere init(source)
 * compiles asynchronously.
 */

const { DarmokError, coreCode, documentPath, pathForMessage } = require('./errors.cjs');
const load = require('./load.cjs');
const { TapeReader } = require('./tape-reader.cjs');
const { utf8Encoder, utf8Decoder, nodeBufferOf, isWellFormed, backslashesBefore } = require('./text.cjs');

/* JSON text as UTF-16 units, where there is no Buffer#ucs2Slice (outputText). */
const utf16Decoder = new TextDecoder('utf-16le');

/*
 * Result words (u32 index into the words at dk_ctx_result) and the
 * dk_pb_decode_ctx flag: their meaning is in wasm/dk_abi.h.
 */
const {
  RES_OFFSET, RES_OUT, RES_OUT_LEN, RES_MSG, RES_MSG_LEN, RES_U16, RES_U16_LEN, RES_IN_LEN, RES_KEEP,
  READ_KEYREFS, READ_STRREFS, EXPORTS
} = require('./dk_abi.cjs');

/* What a protobuf decode for JS asks for: key and string references. */
const PB_READ = READ_KEYREFS | READ_STRREFS;

/* Bytes of input shown on each side of an error offset. */
const EXCERPT = 20;

let wasm = null; //        instance.exports once ready
let memory = null;
let ctx = 0;
let resAddr = 0;
let heapBuffer = null; //  the ArrayBuffer the views below were taken on
let heap = null; //        Uint8Array over all of memory (a Buffer under Node)
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
  if (heap === null || heap.length === 0) retakeViews();
}

function retakeViews() {
  if (memory.buffer !== heapBuffer) {
    heapBuffer = memory.buffer;
    heap = new Uint8Array(heapBuffer);
    heap = nodeBufferOf(heap) || heap;
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
  ctx = c;
  resAddr = r;
  heapBuffer = null;
  heap = null;
  reader = null; // it holds views of the old memory
  wasm = ex;
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
 * One small document through every work call, once, at load. WebAssembly
 * functions are compiled lazily on their first call: without this the
 * first encodeEntity/decodeEntity after import would pay for compiling
 * them. A failure here is ignored: the real call will report it.
 */
const WARM_UP = '{"$":"W","s":"caf\u00e9 \u6771","n":[0,-1.5,1e300,12345678901],"d":{"$Date":"2020-01-02T03:04:05.006Z"},' +
  '"m":{"$Map":[[{"$BigInt":"-12"},{"$Set":[true,null,{"$undefined":0}]}]]},"b":{"$Uint8Array":"AAEC"},"r":{"$ref":1}}';

function warmUp() {
  try {
    const text = utf8Encoder.encode(WARM_UP);
    let p = input(text.length);
    heap.set(text, p);
    if (wasm.dk_json_decode_ctx(ctx, text.length, 0, 0) !== 0) return;
    views();
    const tape = heap.slice(word(RES_OUT), word(RES_OUT) + word(RES_OUT_LEN));
    p = input(tape.length);
    heap.set(tape, p);
    wasm.dk_json_encode_ctx(ctx, tape.length, 0);
    if (typeof wasm.dk_pb_encode_ctx !== 'function') return;
    p = input(tape.length);
    heap.set(tape, p);
    if (wasm.dk_pb_encode_ctx(ctx, tape.length, 0) !== 0) return;
    views();
    const pb = heap.slice(word(RES_OUT), word(RES_OUT) + word(RES_OUT_LEN));
    p = input(pb.length);
    heap.set(pb, p);
    wasm.dk_pb_decode_ctx(ctx, pb.length, 0, 0, PB_READ);
  } catch {
    // The core reports its own failures on real calls.
  }
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
    warmUp();
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
  if (wasm !== null) return Promise.resolve();
  if (source === undefined) {
    loadSync();
    if (wasm !== null) return Promise.resolve();
    source = load.defaultSource();
    if (source === null) return Promise.reject(notReady());
  }
  if (pending === null) {
    pending = load.compile(source).catch(notWasm).then(async (mod) => {
      const names = new Set(WebAssembly.Module.exports(mod).filter((e) => e.kind === 'function').map((e) => e.name));
      if (!names.has('dk_ctx_new')) {
        throw new DarmokError('ERR_INVALID_OPTION', "init(): this WebAssembly module is not darmok's core (build/darmok.wasm): it has no dk_ctx_new");
      }
      const missing = missingExport(names);
      if (missing !== undefined) throw missingError(missing);
      if (wasm === null) {
        const instance = await WebAssembly.instantiate(mod, makeImports(mod));
        instances++;
        setup(instance);
        compiled = mod;
        warmUp();
      }
    }).finally(() => { pending = null; });
  }
  return pending;
}

/* Bytes that are not WebAssembly are ERR_INVALID_OPTION, with the CompileError as cause. */
function notWasm(cause) {
  if (!(cause instanceof WebAssembly.CompileError)) throw cause;
  const err = new DarmokError('ERR_INVALID_OPTION', `init(): the bytes are not a WebAssembly module (${cause.message})`);
  err.cause = cause;
  throw err;
}

/* Calling darmok before its core is loaded: where there is no file to load it from, init() comes first. */
function notReady() {
  return new DarmokError('ERR_NOT_READY',
    `the WebAssembly core is not loaded (${loadError || 'init() not called'}): await init() before the first call`);
}

function ready() {
  if (wasm === null) throw notReady();
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
  const p = wasm.dk_ctx_input(ctx, n) >>> 0;
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
 * bytes, or a copy with each lone surrogate (ED A0..BF xx, which the core
 * keeps in the WTF-8 of a JS string's text) as U+FFFD (EF BF BD, as long):
 * error messages quote the input, and decoders would make three U+FFFD of
 * one such sequence. So a message reads as for the text's UTF-8 bytes.
 */
function withoutSurrogates(bytes) {
  let copy = null;
  for (let i = bytes.indexOf(0xed); i >= 0 && i + 2 < bytes.length; i = bytes.indexOf(0xed, i + 1)) {
    if (bytes[i + 1] < 0xa0) continue;
    if (copy === null) copy = Uint8Array.from(bytes);
    copy[i] = 0xef;
    copy[i + 1] = 0xbf;
    copy[i + 2] = 0xbd;
  }
  return copy === null ? bytes : copy;
}

/*
 * The DarmokError for a failed call; `at` is the input area (decode only),
 * len bytes of it the text (WTF-8 when wtf8: a JS string's); maxDepth and
 * maxLength the decode's limits, named in the message of a failure on one.
 */
function failure(code, at, len, what, wtf8, maxDepth, maxLength) {
  const jsCode = coreCode(code);
  const offset = word(RES_OFFSET);
  const msgAt = word(RES_MSG);
  const msg = msgAt === 0 ? 'failed' : utf8Decoder.decode(heap.subarray(msgAt, msgAt + word(RES_MSG_LEN)));
  if (what === 'encode') {
    return new DarmokError(jsCode, jsCode === 'ERR_INTERNAL'
      ? `the core rejected the tape at byte ${offset}: ${msg}`
      : `encoding failed: ${msg}`);
  }
  const from = offset > EXCERPT ? offset - EXCERPT : 0;
  const to = offset + EXCERPT < len ? offset + EXCERPT : len;
  const text = wtf8 === true ? withoutSurrogates(heap.subarray(at, at + len)) : heap.subarray(at, at + len);
  let excerpt = utf8Decoder.decode(text.subarray(from, to));
  if (excerpt.length > 2 * EXCERPT) excerpt = excerpt.slice(0, 2 * EXCERPT);
  // Only now, on the failure path, is the document re-scanned for a path.
  const path = documentPath(text, offset);
  const where = offset >= len ? `at byte ${offset} (the end of input)` : `at byte ${offset}`;
  let limit = '';
  if (jsCode === 'ERR_DEPTH') limit = ` (maxDepth ${maxDepth})`;
  else if (jsCode === 'ERR_TOO_LARGE') limit = ` (maxLength ${maxLength})`;
  const near = len === 0 ? 'in empty input' : `near ${JSON.stringify(excerpt)}`;
  const err = new DarmokError(jsCode, `${msg}${limit} ${where} in ${pathForMessage(path)} ${near}`, offset);
  err.path = path;
  return err;
}

/*
 * Turn the tape tape[0..len) into JSON text. The tape is copied with one
 * set() into the input area; the output is decoded to a string before any
 * other call can overwrite it.
 */
function jsonEncode(tape, len, maxDepth) {
  ready();
  const p = input(len);
  heap.set(tape.subarray(0, len), p);
  const code = wasm.dk_json_encode_ctx(ctx, len, maxDepth);
  called(code);
  if (code !== 0) throw failure(code, p, len, 'encode');
  return outputText(heap, word);
}

/*
 * The JSON text an encode call left in memory heap (word(i): result word
 * i of that call), as a string: from UTF-16 units when the text is not
 * ASCII (result words 6-7: the output itself, or a copy of it; see
 * dk_wasm.c dk_json_encode_ctx), else from the output's bytes. Under Node
 * with one copy: ucs2Slice (several times faster than decoding non-ASCII
 * UTF-8), or latin1Slice (Latin-1 is the same bytes as ASCII, a one-byte
 * string). Elsewhere through TextDecoder: the units hold no lone surrogate
 * (the writer escapes them), which UTF-16LE decoding would replace. Also
 * for bench/core.mjs.
 */
function outputText(heap, word) {
  const u16 = word(RES_U16);
  if (typeof heap.ucs2Slice === 'function') {
    if (u16 !== 0) return heap.ucs2Slice(u16, u16 + word(RES_U16_LEN));
    const out = word(RES_OUT);
    return heap.latin1Slice(out, out + word(RES_OUT_LEN));
  }
  if (u16 !== 0) return utf16Decoder.decode(heap.subarray(u16, u16 + word(RES_U16_LEN)));
  const out = word(RES_OUT);
  return utf8Decoder.decode(heap.subarray(out, out + word(RES_OUT_LEN)));
}

/*
 * Parse JSON text (a string, or UTF-8 bytes in a Uint8Array/Buffer) into a
 * tape and call rebuild(reader) on it while it is valid. The string is
 * written straight into the input area with encodeInto.
 */
function jsonDecode(text, maxDepth, maxLength, maxBytes, rebuild) {
  ready();
  let p;
  let len = 0;
  let units = 0;
  if (typeof text === 'string') {
    let room = text.length * 3;
    if (text.length > maxBytes) throw tooLarge(text.length, maxBytes);
    if (room > maxBytes) {
      room = typeof Buffer === 'function' ? Buffer.byteLength(text, 'utf8') : utf8Encoder.encode(text).length;
      if (room > maxBytes) throw tooLarge(room, maxBytes);
    }
    if (typeof heap.ucs2Write === 'function' && text.length !== 0 &&
        (room === text.length * 3 || !isWellFormed(text))) {
      // The string's UTF-16 with one copy (Buffer#ucs2Write), made UTF-8
      // in the core: utf8Write costs ~0.9 ns a character on a two-byte
      // string, ucs2Write ~0.05. The core keeps a lone surrogate (as
      // JSON.parse does), which utf8Write would make U+FFFD: a string over
      // maxBytes / 3 units comes this way too when it has one.
      // At an even offset: Node copies unaligned UTF-16 once more, here
      // and in every ucs2Slice of a string taken from these units.
      units = text.length;
      p = input(3 * units + 1);
      heap.ucs2Write(text, p + units + (units & 1), 2 * units);
    } else {
      p = input(room);
      // Buffer#utf8Write allocates nothing (encodeInto makes a subarray and a
      // result object); both replace a lone surrogate with U+FFFD.
      len = typeof heap.utf8Write === 'function' ? heap.utf8Write(text, p, room)
        : utf8Encoder.encodeInto(text, heap.subarray(p, p + room)).written;
    }
  } else {
    len = text.length;
    if (len > maxBytes) throw tooLarge(len, maxBytes);
    p = input(len);
    heap.set(text, p);
  }
  const code = wasm.dk_json_decode_ctx(ctx, len, maxDepth, maxLength, units);
  called(code);
  if (code !== 0) {
    throw failure(code, p, units !== 0 ? word(RES_IN_LEN) : len, 'decode', units !== 0, maxDepth, maxLength);
  }
  return rebuildOutput(rebuild, false, units !== 0 ? text : undefined);
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
    reader = readerOverOutput(reader, heap, heapView, word, text, refs);
    return rebuild(reader);
  } finally {
    reader.release(); // the text and strings are not kept alive by the reader
    rebuilding = false;
  }
}

/* --- protobuf (proto/darmok.proto) and transcoding --------------------------- */

/*
 * A copy of the output bytes a call left in memory heap (word as for
 * outputText): a Buffer under Node. Also for bench/core.mjs.
 */
function outputBytes(heap, word) {
  const out = word(RES_OUT);
  const n = word(RES_OUT_LEN);
  const bytes = typeof Buffer === 'function' ? Buffer.allocUnsafe(n) : new Uint8Array(n);
  bytes.set(heap.subarray(out, out + n));
  return bytes;
}

/* The DarmokError of a failed protobuf decode: offset and a hex excerpt. */
function pbFailure(code, at, len, maxDepth, maxLength) {
  const jsCode = coreCode(code);
  const offset = word(RES_OFFSET);
  const msgAt = word(RES_MSG);
  const msg = msgAt === 0 ? 'failed' : utf8Decoder.decode(heap.subarray(msgAt, msgAt + word(RES_MSG_LEN)));
  let limit = '';
  if (jsCode === 'ERR_DEPTH') limit = ` (maxDepth ${maxDepth})`;
  else if (jsCode === 'ERR_TOO_LARGE' && msg.includes('max_length')) limit = ` (maxLength ${maxLength})`;
  const from = offset > 8 ? offset - 8 : 0;
  const to = offset + 8 < len ? offset + 8 : len;
  const hex = Array.from(heap.subarray(at + from, at + to), (b) => b.toString(16).padStart(2, '0')).join(' ');
  const where = offset >= len ? `at byte ${offset} (the end of input)` : `at byte ${offset}`;
  return new DarmokError(jsCode, `${msg}${limit} ${where} of the protobuf document${len === 0 ? ' (empty input)' : ` near [${hex}]`}`, offset);
}

/* Copy bytes (a Uint8Array) into the input area; returns its address. */
function putBytes(bytes, maxBytes) {
  if (bytes.length > maxBytes) throw tooLarge(bytes.length, maxBytes);
  const p = input(bytes.length);
  heap.set(bytes, p);
  return p;
}

/* Write JSON text (a string, or UTF-8 bytes) into the input area: [p, len]. */
const LONE_SURROGATE = /[\ud800-\udfff]/gu; // with u, only a surrogate not in a pair

/*
 * A lone surrogate of JSON text as the escape that keeps it (\udxxx), but
 * after an odd run of backslashes: there it is itself the escaped
 * character (an invalid escape, which must fail as in JSON.parse, not
 * become a valid \\ and text), so it becomes U+FFFD, which fails there
 * the same way.
 */
function escapeLone(c, at, text) {
  return backslashesBefore(text, at) % 2 === 1 ? '\ufffd' : `\\u${c.charCodeAt(0).toString(16)}`;
}

function putText(text, maxBytes) {
  if (typeof text !== 'string') return [putBytes(text, maxBytes), text.length];
  if (text.length > maxBytes) throw tooLarge(text.length, maxBytes);
  let room = text.length * 3;
  if (room > maxBytes) {
    room = typeof Buffer === 'function' ? Buffer.byteLength(text, 'utf8') : utf8Encoder.encode(text).length;
    if (room > maxBytes) throw tooLarge(room, maxBytes);
  }
  // A raw lone surrogate, which encodeInto would make U+FFFD, as the JSON
  // escape that keeps it (\udxxx, as the reader reads it): the document
  // then transcodes to what decodeEntity of the string gives. A surrogate
  // is only valid inside a JSON string; outside one the escape fails as it
  // would. maxBytes counts the string's UTF-8 (a surrogate 3 bytes, as
  // decodeEntity does); error offsets past one count the escape's 6.
  if (!isWellFormed(text)) {
    text = text.replace(LONE_SURROGATE, escapeLone);
    room = text.length * 3;
  }
  const p = input(room);
  return [p, utf8Encoder.encodeInto(text, heap.subarray(p, p + room)).written];
}

/* Turn the tape tape[0..len) into a darmok.Document: a copy of the bytes. */
function pbEncode(tape, len, maxDepth) {
  ready();
  const p = input(len);
  heap.set(tape.subarray(0, len), p);
  const code = wasm.dk_pb_encode_ctx(ctx, len, maxDepth);
  called(code);
  if (code !== 0) throw failure(code, p, len, 'encode');
  return outputBytes(heap, word);
}

/*
 * Parse a darmok.Document (a Uint8Array/Buffer) into a tape and call
 * rebuild(reader) on it while it is valid.
 */
function pbDecode(bytes, maxDepth, maxLength, maxBytes, rebuild) {
  ready();
  const p = putBytes(bytes, maxBytes);
  const len = bytes.length;
  const code = wasm.dk_pb_decode_ctx(ctx, len, maxDepth, maxLength, PB_READ);
  called(code);
  if (code !== 0) {
    throw pbFailure(code, p, len, maxDepth, maxLength);
  }
  return rebuildOutput(rebuild, true);
}

/*
 * JSON text -> protobuf bytes (toProtobuf) or protobuf bytes -> JSON text,
 * inside the core: no JS value is built. Errors point into the input.
 * maxBytes bounds the input, and the JSON text too: what decodeEntity
 * would read back (string references can make it many times the input).
 */
function transcode(blob, toProtobuf, maxDepth, maxLength, maxBytes) {
  ready();
  let p;
  let len;
  if (toProtobuf) [p, len] = putText(blob, maxBytes);
  else {
    p = putBytes(blob, maxBytes);
    len = blob.length;
  }
  const code = toProtobuf
    ? wasm.dk_pb_from_json_ctx(ctx, len, maxDepth, maxLength)
    : wasm.dk_pb_to_json_ctx(ctx, len, maxDepth, maxLength, maxBytes);
  called(code);
  if (code !== 0) {
    throw toProtobuf ? failure(code, p, len, 'decode', false, maxDepth, maxLength) : pbFailure(code, p, len, maxDepth, maxLength);
  }
  if (toProtobuf) return outputBytes(heap, word);
  const out = word(RES_OUT);
  return utf8Decoder.decode(heap.subarray(out, out + word(RES_OUT_LEN)));
}

function tooLarge(n, max) {
  return new DarmokError('ERR_TOO_LARGE', `input of ${n} bytes is over maxBytes (${max})`);
}

/* Internal hook for tests: the core's memory (never part of the public API). */
function wasmMemory() {
  return memory;
}

function isReady() {
  return wasm !== null;
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
  return wasm;
}

function useExportsForTest(exports, { keepContext = false } = {}) {
  if (keepContext) wasm = exports;
  else setup({ exports });
}

loadSync();

module.exports = {
  init, isReady, jsonEncode, jsonDecode, pbEncode, pbDecode, transcode, wasmMemory, exportsForTest, useExportsForTest,
  instantiationsForTest, readerOverOutput, outputText, outputBytes, PB_READ
};

/*
 * core.mjs - where the time of one darmok call goes: the JS walk, the
 * WebAssembly boundary, and the C core (in WebAssembly and natively).
 *
 *   node --expose-gc bench/core.mjs [--quick] [--workloads=foo,posts100]
 *
 * Prints a Markdown section on stdout (run.mjs appends it to RESULTS.md).
 * Needs build/darmok.wasm (make build) and a C compiler for the native
 * column (clang, else gcc; skipped when neither works).
 *
 * For each workload, with the value's tape and JSON text prepared once:
 *   encode  encodeEntity (all of it) = JS walk (value -> tape)
 *           + copy the tape into WebAssembly memory + C write (tape -> JSON:
 *           UTF-8 while ASCII, then UTF-16 units from the first long string
 *           that is not, or a UTF-16 copy of other UTF-8 that is not ASCII)
 *           + the JS string made from it (ucs2Slice, or latin1Slice when
 *           ASCII), as js/core/core.cjs does
 *   decode  decodeEntity (all of it) = the string's UTF-16 into the input
 *           area (ucs2Write) + C read (made UTF-8 in place, JSON -> tape)
 *           + JS rebuild (tape -> objects, strings through the side table
 *           as js/core/tape-reader.cjs reads them)
 * and the same for the protobuf format (darmok/protobuf):
 *   encode  encodeEntity = the same JS walk + copy tape in + C write
 *           (tape -> darmok.Document through protobuf-c) + the output
 *           copied into a new Buffer
 *   decode  decodeEntity = copy the bytes in + C read (protobuf-c unpack,
 *           checks, Document -> tape with key references and the UTF-16
 *           side table) + JS rebuild
 * Each part is timed on its own, on a separate instance of build/darmok.wasm
 * driven through the ABI (wasm/dk_wasm.c: dk_ctx_input, dk_json_*_ctx,
 * dk_pb_*_ctx), and the
 * same C functions are timed natively (bench/core_native.c) on the same
 * tapes and texts. The parts do not add up exactly to the whole (the whole
 * shares caches and skips nothing), but show which one dominates.
 */
import { createRequire } from 'node:module';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT } from './peers.mjs';
import { WORKLOADS, WORKLOAD_ORDER, rootOptions } from './workloads.mjs';

const require = createRequire(import.meta.url);
const WASM = path.join(ROOT, 'build', 'darmok.wasm');
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const wlArg = argv.find((a) => a.startsWith('--workloads='));
const workloads = wlArg ? wlArg.slice(12).split(',') : WORKLOAD_ORDER;
const BATCH_MS = quick ? 20 : 50;
const BATCHES = quick ? 3 : 5;

const now = () => performance.now();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const gc = typeof globalThis.gc === 'function' ? globalThis.gc : () => {};

/*
 * Median µs per call of each part. parts: name -> { run, setup? } where
 * setup (untimed) puts the core in the state run needs. Every part is
 * calibrated to batches of about BATCH_MS, then the batches are
 * interleaved (round b runs one batch of every part), so a burst of load
 * on the machine hits all parts alike instead of one.
 */
let sink = null;
function measure(parts) {
  const names = Object.keys(parts);
  const iters = {};
  for (const name of names) {
    const { run, setup } = parts[name];
    if (setup) setup();
    const t0 = now();
    let n = 0;
    do { sink = run(); n++; } while (now() - t0 < BATCH_MS || n < 2);
    iters[name] = Math.max(1, Math.round(BATCH_MS / ((now() - t0) / n)));
  }
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let b = 0; b < BATCHES; b++) {
    for (const name of names) {
      const { run, setup } = parts[name];
      if (setup) setup();
      sink = null; // the previous output must not survive into this batch
      gc();
      const k = iters[name];
      const s = now();
      for (let i = 0; i < k; i++) sink = run();
      samples[name].push(((now() - s) / k) * 1000);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(samples[n])]));
}

/* ---- a private instance of the core, driven through the ABI ------------- */

function stubImports(mod) {
  const imports = {};
  for (const { module, name } of WebAssembly.Module.imports(mod)) {
    const fn = name === 'fd_write' || name === 'fd_close' || name === 'fd_seek' ? () => 52 : () => {};
    (imports[module] || (imports[module] = {}))[name] = fn;
  }
  return imports;
}

function loadCore(bytes) {
  const mod = new WebAssembly.Module(bytes);
  const inst = new WebAssembly.Instance(mod, stubImports(mod));
  const ex = inst.exports;
  if (typeof ex._initialize === 'function') ex._initialize();
  const ctx = ex.dk_ctx_new() >>> 0;
  const res = ex.dk_ctx_result(ctx) >>> 0;
  // Views over the memory, taken again only when growth replaced its
  // buffer (as js/core/core.cjs does): no allocation per timed call.
  let buf = null;
  let heap = null;
  let view = null;
  const u8 = () => {
    if (ex.memory.buffer !== buf) {
      buf = ex.memory.buffer;
      heap = Buffer.from(buf);
      view = new DataView(buf);
    }
    return heap;
  };
  const word = (i) => { u8(); return view.getUint32(res + 4 * i, true); };
  const dataView = () => { u8(); return view; };
  return { ex, ctx, u8, dataView, word };
}

/* ---- native build ----------------------------------------------------------- */

function buildNative(dir) {
  const sources = readdirSync(path.join(ROOT, 'wasm')).filter((f) => f.endsWith('.c')).map((f) => path.join(ROOT, 'wasm', f));
  const exe = path.join(dir, 'dk_core_bench');
  for (const cc of ['clang', 'gcc']) {
    // The protobuf core needs protobuf-c's runtime and the generated code
    // (`make build` puts both in build/): compiled along, without -Werror.
    const build = path.join(ROOT, 'build');
    const r = spawnSync(cc, ['-O3', '-std=c11', '-DNDEBUG', `-I${path.join(ROOT, 'wasm')}`, `-I${build}`, `-I${path.join(build, 'gen')}`,
      path.join(ROOT, 'bench', 'core_native.c'), ...sources, path.join(build, 'protobuf-c', 'protobuf-c.c'),
      path.join(build, 'gen', 'darmok.pb-c.c'), '-lm', '-o', exe], { encoding: 'utf8' });
    if (r.status === 0) {
      const version = execFileSync(cc, ['--version'], { encoding: 'utf8' }).split('\n')[0];
      return { exe, cc: version };
    }
    if (r.error === undefined) process.stderr.write(`core.mjs: ${cc} failed:\n${r.stderr.slice(0, 2000)}\n`);
  }
  return null;
}

function runNative(native, mode, file) {
  if (!native) return null;
  const r = spawnSync(native.exe, [mode, file, String(BATCH_MS)], { encoding: 'utf8' });
  const line = (r.stdout || '').trim().split('\n').pop();
  try {
    const j = JSON.parse(line);
    return j.error !== undefined ? null : j.ns_per_op / 1000;
  } catch {
    return null;
  }
}

/* ---- main --------------------------------------------------------------------- */

const us = (x) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const ratio = (wasm, native) => (native ? `${(wasm / native).toFixed(2)}x` : '—');
const mbps = (bytes, usPerOp) => (usPerOp ? `${((bytes / usPerOp) * 1e6 / 1e6).toFixed(0)}` : '—');

function main() {
  if (!existsSync(WASM)) {
    process.stdout.write('## The core alone\n\nNot measured: build/darmok.wasm is missing (run `make build`).\n');
    return 0;
  }
  const dk = require(path.join(ROOT, 'js', 'index.cjs'));
  const { acquire } = require(path.join(ROOT, 'js', 'codec', 'encode.cjs'));
  const { Decoder } = require(path.join(ROOT, 'js', 'codec', 'decode.cjs'));
  const { registryOf } = require(path.join(ROOT, 'js', 'internal.cjs'));
  const { readerOverOutput, outputText, outputBytes, PB_READ } = require(path.join(ROOT, 'js', 'core', 'core.cjs'));
  const wasmBytes = readFileSync(WASM);

  // Compile and instantiate cost, each on its own, fresh every time.
  // The first compile in the process is the real cost; V8 may serve later
  // compiles of the same bytes from its module cache.
  const compileUs = [];
  const instUs = [];
  for (let i = 0; i < (quick ? 4 : 8); i++) {
    let t = now();
    const mod = new WebAssembly.Module(wasmBytes);
    compileUs.push((now() - t) * 1000);
    t = now();
    const inst = new WebAssembly.Instance(mod, stubImports(mod));
    if (typeof inst.exports._initialize === 'function') inst.exports._initialize();
    inst.exports.dk_ctx_new();
    instUs.push((now() - t) * 1000);
  }

  const core = loadCore(wasmBytes);
  const { ex, ctx, word } = core;
  /*
   * The JS rebuild alone, as js/core/instance.cjs runs it after a decode call: a
   * reader over the tape the last call left in the private instance, with
   * its UTF-16 side table (whose entries may point into text, the JSON
   * string decoded) and key references (protobuf). The decode call is the
   * part's untimed setup; the rebuild only reads that memory.
   */
  let decoder = null; // the current workload's (below)
  let reader = null;
  const rebuildLast = (text, keyrefs) => {
    reader = readerOverOutput(reader, core.u8(), core.dataView(), word, text, keyrefs);
    try {
      return decoder.decode(reader);
    } finally {
      reader.release();
    }
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'darmok-core-'));
  const native = buildNative(dir);
  const rows = [];
  try {
    for (const id of workloads) {
      const w = WORKLOADS[id];
      if (!w) throw new Error(`unknown workload ${id}`);
      // Each workload's classes in a registry of their own: the Post
      // workloads define classes of the same names.
      const handle = dk.createRegistry();
      const registry = registryOf(handle);
      const jc = dk.createCodec({ format: 'json', registry: handle });
      const pc = dk.createCodec({ format: 'protobuf', registry: handle });
      decoder = new Decoder(false, registry, false);
      const model = w.model(handle.serializable);
      const value = w.build(model);
      const controlValue = w.control ? w.control(model) : value;
      const controlJson = JSON.stringify(controlValue);

      const walk = () => {
        const enc = acquire();
        try { enc.run(value, false, 1000, registry); return enc.w.pos; } finally { enc.release(); }
      };
      const enc0 = acquire();
      enc0.run(value, false, 1000, registry);
      const tape = enc0.w.buf.slice(0, enc0.w.pos);
      enc0.release();
      const json = jc.encodeEntity(value);
      const jsonBuf = Buffer.from(json, 'utf8');
      const pbBuf = pc.encodeEntity(value);
      const tapeFile = path.join(dir, `${id}.tape`);
      const jsonFile = path.join(dir, `${id}.json`);
      const pbFile = path.join(dir, `${id}.pb`);
      writeFileSync(tapeFile, tape);
      writeFileSync(jsonFile, jsonBuf);
      writeFileSync(pbFile, pbBuf);

      // Encode side, through the private instance.
      // The calls each part makes, with their arguments in one place.
      const tapeIn = () => { const q = ex.dk_ctx_input(ctx, tape.length) >>> 0; core.u8().set(tape, q); };
      const jsonWriteCall = () => ex.dk_json_encode_ctx(ctx, tape.length, 1000);
      const pbWriteCall = () => ex.dk_pb_encode_ctx(ctx, tape.length, 1000);
      const pbReadCall = () => ex.dk_pb_decode_ctx(ctx, pbBuf.length, 1000, 0x3fffffff, PB_READ);
      tapeIn();
      if (jsonWriteCall() !== 0) throw new Error(`${id}: core encode failed (code ${word(0)})`);
      // The core's output is UTF-8 while ASCII, else UTF-16 units (its
      // result words 6-7): compared as the string JS makes of it.
      if (outputText(core.u8(), word) !== json) throw new Error(`${id}: the core's output is not encodeEntity's string`);
      const pbIn = () => { const q = ex.dk_ctx_input(ctx, pbBuf.length) >>> 0; core.u8().set(pbBuf, q); };
      pbIn();
      if (pbReadCall() !== 0) throw new Error(`${id}: core protobuf decode failed (code ${word(0)} at ${word(1)})`);
      tapeIn();
      if (pbWriteCall() !== 0 || word(3) !== pbBuf.length) throw new Error(`${id}: core protobuf encode failed (code ${word(0)}) or its length differs`);
      const row = { id, title: w.title, tapeBytes: tape.length, jsonBytes: jsonBuf.length, pbBytes: pbBuf.length };
      // Warm the whole path first, so the first part timed is not the one
      // that pays for the JIT.
      const warmUntil = now() + (quick ? 100 : 300);
      let warmed = 0;
      while (now() < warmUntil || warmed < 2) { jc.decodeEntity(jc.encodeEntity(value), model.root, rootOptions(w)); pc.decodeEntity(pc.encodeEntity(value), model.root, rootOptions(w)); warmed++; }
      const room = jsonBuf.length;
      const jsonIn = () => { const q = ex.dk_ctx_input(ctx, room) >>> 0; core.u8().set(jsonBuf, q); };
      // As jsonDecode does with a string: its UTF-16 at byte n of 3n bytes.
      const n16 = json.length;
      const json16In = () => {
        const q = ex.dk_ctx_input(ctx, 3 * n16 + 1) >>> 0;
        core.u8().ucs2Write(json, q + n16 + (n16 & 1), 2 * n16);
      };
      const jsonReadCall = () => ex.dk_json_decode_ctx(ctx, 0, 1000, 0x3fffffff, n16);
      jsonIn();
      if (ex.dk_json_decode_ctx(ctx, room, 1000, 0x3fffffff) !== 0) throw new Error(`${id}: core decode failed (code ${word(0)} at ${word(1)})`);
      const tapeOut = Uint8Array.prototype.slice.call(core.u8(), word(2), word(2) + word(3)); // a copy (Buffer#slice is a view)
      // The timed route (the text as UTF-16) must read to the same tape.
      json16In();
      if (jsonReadCall() !== 0 || word(3) !== tapeOut.length) {
        throw new Error(`${id}: core decode of the UTF-16 text failed (code ${word(0)} at ${word(1)})`);
      }
      Object.assign(row, measure({
        jsonStringify: { run: () => JSON.stringify(controlValue) },
        jsonParse: { run: () => JSON.parse(controlJson) },
        encodeAll: { run: () => jc.encodeEntity(value) },
        walk: { run: walk },
        copyIn: { run: () => { tapeIn(); return 0; } },
        cWrite: { setup: tapeIn, run: jsonWriteCall },
        copyOut: {
          setup: () => { tapeIn(); jsonWriteCall(); },
          run: () => outputText(core.u8(), word),
        },
        decodeAll: { run: () => jc.decodeEntity(json, model.root, rootOptions(w)) },
        copyInJson: { run: () => { json16In(); return 0; } },
        // The read makes its input UTF-8 in place, so each run writes the
        // UTF-16 again; copyInJson's median is taken off below.
        cRead: { run: () => { json16In(); return jsonReadCall(); } },
        rebuild: {
          setup: () => { json16In(); jsonReadCall(); },
          run: () => rebuildLast(json, false),
        },
        pbEncodeAll: { run: () => pc.encodeEntity(value) },
        pbWrite: { setup: tapeIn, run: pbWriteCall },
        pbCopyOut: {
          setup: () => { tapeIn(); pbWriteCall(); },
          run: () => outputBytes(core.u8(), word),
        },
        pbDecodeAll: { run: () => pc.decodeEntity(pbBuf, model.root, rootOptions(w)) },
        pbIn: { run: () => { pbIn(); return 0; } },
        pbRead: { run: () => { pbIn(); return pbReadCall(); } },
        pbRebuild: {
          setup: () => { pbIn(); pbReadCall(); },
          run: () => rebuildLast(undefined, true),
        },
      }));
      row.pbRead = Math.max(0, row.pbRead - row.pbIn);
      row.cRead = Math.max(0, row.cRead - row.copyInJson);
      row.cWriteNative = runNative(native, 'write', tapeFile);
      row.cReadNative = runNative(native, 'read', jsonFile);
      row.pbWriteNative = runNative(native, 'pbwrite', tapeFile);
      row.pbReadNative = runNative(native, 'pbread', pbFile);
      rows.push(row);
      process.stderr.write(`core ${id}: done\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const L = [];
  L.push('## The core alone: JS walk vs boundary vs C', '');
  L.push(`WebAssembly module: ${(wasmBytes.length / 1024).toFixed(1)} KiB. In this process (darmok itself already loaded it once): \`new WebAssembly.Module\` ${us(compileUs[0] / 1000)} ms the first time here, ${us(median(compileUs.slice(1)) / 1000)} ms median after (V8 may reuse the compiled module); \`new WebAssembly.Instance\` + \`dk_ctx_new\` ${us(median(instUs) / 1000)} ms median. The cold cost in a fresh process is the darmok row of "Import + instantiation" above.`);
  L.push(`Native C: ${native ? native.cc : 'not built (no working C compiler)'}, \`-O3\`, same sources as the .wasm (emcc -O3).`, '');
  L.push(`Times in µs per call: medians of ${BATCHES} batches of about ${BATCH_MS} ms, the parts' batches interleaved; native JSON on the same value (the cycle-free twin for the deep graph) as the in-process baseline. MB/s = JSON bytes per second of C time. The parts do not add up exactly to the whole.`, '');
  L.push('**Encode** (value → JSON string): encodeEntity = JS walk + copy tape in + C write (UTF-16 when not ASCII; natively: UTF-8 only) + output → string (ucs2Slice, or latin1Slice when ASCII)', '');
  L.push('| workload | tape bytes | JSON bytes | JSON.stringify (baseline) | encodeEntity | JS walk | copy tape in | C write (wasm) | C write (native) | wasm/native | output → string | C write MB/s (wasm) |');
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    L.push(`| ${r.title} | ${r.tapeBytes} | ${r.jsonBytes} | ${us(r.jsonStringify)} | ${us(r.encodeAll)} | ${us(r.walk)} | ${us(r.copyIn)} | ${us(r.cWrite)} | ${us(r.cWriteNative)} | ${r.cWriteNative ? (r.cWrite / r.cWriteNative).toFixed(2) + 'x' : '—'} | ${us(r.copyOut)} | ${mbps(r.jsonBytes, r.cWrite)} |`);
  }
  L.push('', '**Decode** (JSON string → value): decodeEntity = string → UTF-16 in wasm memory (ucs2Write) + C read (made UTF-8 in place, then read; natively: the UTF-8 read alone) + JS rebuild', '');
  L.push('| workload | JSON.parse (baseline) | decodeEntity | string → UTF-16 in | C read (wasm) | C read (native) | wasm/native | JS rebuild | C read MB/s (wasm) |');
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    L.push(`| ${r.title} | ${us(r.jsonParse)} | ${us(r.decodeAll)} | ${us(r.copyInJson)} | ${us(r.cRead)} | ${us(r.cReadNative)} | ${r.cReadNative ? (r.cRead / r.cReadNative).toFixed(2) + 'x' : '—'} | ${us(r.rebuild)} | ${mbps(r.jsonBytes, r.cRead)} |`);
  }
  L.push('', '**Protobuf encode** (value → darmok.Document bytes): encodeEntity = the same JS walk + copy tape in + C write (tape → Document structs → protobuf-c pack) + output → Buffer (a copy). MB/s = Document bytes per second of C time.', '');
  L.push('| workload | protobuf bytes | JSON.stringify (baseline) | encodeEntity | JS walk | copy tape in | C write (wasm) | C write (native) | wasm/native | output → Buffer | C write MB/s (wasm) |');
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    L.push(`| ${r.title} | ${r.pbBytes} | ${us(r.jsonStringify)} | ${us(r.pbEncodeAll)} | ${us(r.walk)} | ${us(r.copyIn)} | ${us(r.pbWrite)} | ${us(r.pbWriteNative)} | ${ratio(r.pbWrite, r.pbWriteNative)} | ${us(r.pbCopyOut)} | ${mbps(r.pbBytes, r.pbWrite)} |`);
  }
  L.push('', '**Protobuf decode** (bytes → value): decodeEntity = copy bytes in + C read (protobuf-c unpack into the core\'s arena, checks, Document → tape and UTF-16 side table) + JS rebuild', '');
  L.push('| workload | JSON.parse (baseline) | decodeEntity | copy bytes in | C read (wasm) | C read (native) | wasm/native | JS rebuild | C read MB/s (wasm) |');
  L.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    L.push(`| ${r.title} | ${us(r.jsonParse)} | ${us(r.pbDecodeAll)} | ${us(r.pbIn)} | ${us(r.pbRead)} | ${us(r.pbReadNative)} | ${ratio(r.pbRead, r.pbReadNative)} | ${us(r.pbRebuild)} | ${mbps(r.pbBytes, r.pbRead)} |`);
  }
  L.push('');
  process.stdout.write(L.join('\n') + '\n');
  return 0;
}

process.exitCode = main();

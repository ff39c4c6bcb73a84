'use strict';
/*
 * core.cjs - the calls into the core, one per format and direction: a tape
 * to JSON text or protobuf bytes (jsonEncode, pbEncode), JSON text or
 * protobuf bytes to a tape that rebuild() reads (jsonDecode, pbDecode), and
 * transcode between the two formats.
 *
 * One call crosses the boundary twice: dk_ctx_input to reserve the input
 * area (instance.cjs input), then the work call, after which called()
 * re-takes the views of memory. The instance is instance.cjs's, the
 * DarmokError of a failed call core-errors.cjs's.
 */

const { live, PB_READ, init, isReady, ready, input, called, word, rebuildOutput, readerOverOutput, warmUpWith } = require('./instance.cjs');
const { failure, tooLarge } = require('./core-errors.cjs');
const { utf8Encoder, utf8Decoder, isWellFormed, backslashesBefore, utf16ToUtf8 } = require('./text.cjs');
const { RES_OUT, RES_OUT_LEN, RES_U16, RES_U16_LEN, RES_IN_LEN } = require('./dk_abi.cjs');

/* JSON text as UTF-16 units, where there is no Buffer#ucs2Slice (outputText). */
const utf16Decoder = new TextDecoder('utf-16le');

/*
 * Turn the tape tape[0..len) into JSON text: a string, or with bytes its
 * UTF-8 (outputUtf8), copied out before any other call can overwrite it.
 */
function jsonEncode(tape, len, maxDepth, bytes) {
  encodeTape(tape, len, maxDepth, false);
  return bytes ? outputUtf8(live.heap, word) : outputText(live.heap, word);
}

/*
 * The one encode call: the tape tape[0..len) copied with one set() into the
 * input area, then written as protobuf or JSON; the output stays in memory
 * (result words) until the next call.
 */
function encodeTape(tape, len, maxDepth, protobuf) {
  ready();
  const p = input(len);
  live.heap.set(tape.subarray(0, len), p);
  const code = protobuf ? live.wasm.dk_pb_encode_ctx(live.ctx, len, maxDepth) : live.wasm.dk_json_encode_ctx(live.ctx, len, maxDepth);
  called(code);
  if (code !== 0) throw failure(code, p, len, 'encode');
}

/*
 * The JSON text an encode call left in memory heap (word(i): result word
 * i of that call), as a string: from UTF-16 units when the text is not
 * ASCII (result words 6-7: the output itself, or a copy of it; see
 * dk_wasm.c dk_json_encode_ctx), else from the output's bytes. Under Node
 * with one copy and no decoding: ucs2Slice, or latin1Slice (Latin-1 is the
 * same bytes as ASCII, a one-byte string). Elsewhere through TextDecoder:
 * the units hold no lone surrogate (the writer escapes them), which UTF-16LE
 * decoding would replace. Also for bench/core.mjs.
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
 * The JSON text an encode call left in memory heap (word as for
 * outputText) as UTF-8 bytes of its own (a Buffer under Node), with no JS
 * string made on the way: V8 puts a long string in memory of its own (its
 * large-object space), which costs more than the bytes Redis or a file
 * wants anyway. The
 * output's bytes are UTF-8 unless the writer went wide (result word 6 is
 * then the output's address itself); wide units are transcoded.
 */
function outputUtf8(heap, word) {
  const u16 = word(RES_U16);
  if (u16 !== 0 && u16 === word(RES_OUT)) return utf16ToUtf8(heap, u16, word(RES_U16_LEN));
  return outputBytes(heap, word);
}

/*
 * Parse JSON text (a string, or UTF-8 bytes in a Uint8Array/Buffer) into a
 * tape and call rebuild(reader) on it while it is valid.
 */
function jsonDecode(text, maxDepth, maxLength, maxBytes, rebuild) {
  ready();
  const { at: p, len, units } = putText(text, maxBytes, true);
  const code = live.wasm.dk_json_decode_ctx(live.ctx, len, maxDepth, maxLength, units);
  called(code);
  if (code !== 0) {
    throw failure(code, p, units !== 0 ? word(RES_IN_LEN) : len, 'decode', units !== 0, maxDepth, maxLength);
  }
  return rebuildOutput(rebuild, false, units !== 0 ? text : undefined);
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


/* Copy bytes (a Uint8Array) into the input area; returns its address. */
function putBytes(bytes, maxBytes) {
  if (bytes.length > maxBytes) throw tooLarge(bytes.length, maxBytes);
  const p = input(bytes.length);
  live.heap.set(bytes, p);
  return p;
}

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

/*
 * The decode area of a JS string of n units, and the byte of it where the
 * units go: DK_U16_AREA(n) and DK_U16_AT(n) of wasm/dk_abi.h, which the
 * core computes from n too (test/js/core/abi.test.cjs compares the two).
 */
function u16Area(n) {
  return 3 * n + 1;
}
function u16At(n) {
  return n + (n & 1);
}

/* What putText wrote: reused, so a call allocates nothing for it. */
const put = { at: 0, len: 0, units: 0 };

/*
 * The one way JSON text goes into the input area: bytes (a Uint8Array) as
 * they are, a string as UTF-8 (put.len bytes at put.at) or, when utf16 (the
 * call reads UTF-16 units: dk_json_decode_ctx) and Node's Buffer is there,
 * as its UTF-16 (put.units units, len 0). A lone surrogate is kept either
 * way, as JSON.parse keeps it: the core reads it from the units, or it goes
 * as the JSON escape that keeps it (\udxxx, which encodeInto would make
 * U+FFFD). maxBytes counts the string's UTF-8 (a surrogate 3 bytes); error
 * offsets past an escaped one count the escape's 6.
 */
function putText(text, maxBytes, utf16) {
  put.units = 0;
  if (typeof text !== 'string') {
    put.at = putBytes(text, maxBytes);
    put.len = text.length;
    return put;
  }
  if (text.length > maxBytes) throw tooLarge(text.length, maxBytes);
  let room = text.length * 3;
  if (room > maxBytes) {
    room = typeof Buffer === 'function' ? Buffer.byteLength(text, 'utf8') : utf8Encoder.encode(text).length;
    if (room > maxBytes) throw tooLarge(room, maxBytes);
  }
  let wellFormed = null; // not scanned yet
  if (utf16 && typeof live.heap.ucs2Write === 'function' && text.length !== 0 &&
      (room === text.length * 3 || !(wellFormed = isWellFormed(text)))) {
    // The string's UTF-16 with one copy (Buffer#ucs2Write), made UTF-8
    // in the core: utf8Write costs far more a character on a two-byte
    // string. A string over maxBytes / 3 units comes this way too when it
    // has a lone surrogate, which utf8Write would make U+FFFD.
    // At an even offset: Node copies unaligned UTF-16 once more, here
    // and in every ucs2Slice of a string taken from these units.
    const units = text.length;
    put.at = input(u16Area(units));
    put.units = units;
    put.len = 0;
    live.heap.ucs2Write(text, put.at + u16At(units), 2 * units);
    return put;
  }
  if (wellFormed === null && !isWellFormed(text)) {
    text = text.replace(LONE_SURROGATE, escapeLone);
    room = text.length * 3;
  }
  const p = input(room);
  // Buffer#utf8Write allocates nothing (encodeInto makes a subarray and a
  // result object).
  put.at = p;
  put.len = typeof live.heap.utf8Write === 'function' ? live.heap.utf8Write(text, p, room)
    : utf8Encoder.encodeInto(text, live.heap.subarray(p, p + room)).written;
  return put;
}

/* Turn the tape tape[0..len) into a darmok.Document: a copy of the bytes. */
function pbEncode(tape, len, maxDepth) {
  encodeTape(tape, len, maxDepth, true);
  return outputBytes(live.heap, word);
}

/*
 * Parse a darmok.Document (a Uint8Array/Buffer) into a tape and call
 * rebuild(reader) on it while it is valid.
 */
function pbDecode(bytes, maxDepth, maxLength, maxBytes, rebuild) {
  ready();
  const p = putBytes(bytes, maxBytes);
  const len = bytes.length;
  const code = live.wasm.dk_pb_decode_ctx(live.ctx, len, maxDepth, maxLength, PB_READ);
  called(code);
  if (code !== 0) throw failure(code, p, len, 'protobuf', false, maxDepth, maxLength);
  return rebuildOutput(rebuild, true);
}

/*
 * JSON text -> protobuf bytes (toProtobuf) or protobuf bytes -> JSON text
 * (its UTF-8 bytes with bytes: the writer writes UTF-8 here), inside the
 * core: no JS value is built. Errors point into the input.
 * maxBytes bounds the input, and the JSON text too: what decodeEntity
 * would read back (string references can make it many times the input).
 */
function transcode(blob, toProtobuf, maxDepth, maxLength, maxBytes, bytes) {
  ready();
  let p;
  let len;
  if (toProtobuf) ({ at: p, len } = putText(blob, maxBytes, false));
  else {
    p = putBytes(blob, maxBytes);
    len = blob.length;
  }
  const code = toProtobuf
    ? live.wasm.dk_pb_from_json_ctx(live.ctx, len, maxDepth, maxLength)
    : live.wasm.dk_pb_to_json_ctx(live.ctx, len, maxDepth, maxLength, maxBytes);
  called(code);
  if (code !== 0) {
    throw failure(code, p, len, toProtobuf ? 'decode' : 'protobuf', false, maxDepth, maxLength);
  }
  if (toProtobuf || bytes) return outputBytes(live.heap, word);
  const out = word(RES_OUT);
  return utf8Decoder.decode(live.heap.subarray(out, out + word(RES_OUT_LEN)));
}

/*
 * One small document through every work call, by the functions the calls
 * of darmok use, once for each new core: WebAssembly functions are compiled
 * lazily on their first call, which the first encodeEntity/decodeEntity
 * would otherwise pay for. A failure here is ignored: the real call will
 * report it.
 */
const WARM_UP = '{"$":"W","s":"caf\u00e9 \u6771","n":[0,-1.5,1e300,12345678901],"d":{"$Date":"2020-01-02T03:04:05.006Z"},' +
  '"m":{"$Map":[[{"$BigInt":"-12"},{"$Set":[true,null,{"$undefined":0}]}]]},"b":{"$Uint8Array":"AAEC"},"r":{"$ref":1}}';

function warmUp() {
  try {
    const tape = jsonDecode(WARM_UP, 0, 0, Infinity, copyOfTape);
    jsonEncode(tape, tape.length, 0, false);
    pbDecode(pbEncode(tape, tape.length, 0), 0, 0, Infinity, copyOfTape);
  } catch {
    // The core reports its own failures on real calls.
  }
}

/* A copy of the tape a decode call left in memory, for warmUp. */
function copyOfTape() {
  const out = word(RES_OUT);
  return new Uint8Array(live.heap.subarray(out, out + word(RES_OUT_LEN)));
}

warmUpWith(warmUp);


module.exports = {
  init, isReady, jsonEncode, jsonDecode, pbEncode, pbDecode, transcode, readerOverOutput, outputText, outputBytes, PB_READ,
  u16Area, u16At
};

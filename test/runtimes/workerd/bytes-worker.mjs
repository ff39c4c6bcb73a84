/*
 * bytes-worker.mjs - darmok's init() handed the .wasm's bytes (a data
 * module) in workerd, which compiles no WebAssembly from bytes: as
 * inline-worker.mjs, one clear ERR_NOT_READY, not "not a WebAssembly module".
 */
import { encodeEntity, init } from 'darmok';
import bytes from './darmok-bytes.bin';
import { settle } from './settle.mjs';

export default {
  async fetch() {
    return Response.json({ call: await settle(() => encodeEntity({ a: 1 })), init: await settle(() => init(bytes)) });
  }
};

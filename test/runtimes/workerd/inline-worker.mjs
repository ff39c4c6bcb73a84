/*
 * inline-worker.mjs - darmok/inline in workerd, which compiles no
 * WebAssembly from bytes: the first call and init() must each give, at
 * once (never a hang), one ERR_NOT_READY that says to pass init() the
 * imported .wasm. GET / reports both.
 */
import { encodeEntity, init } from 'darmok/inline';
import { settle } from './settle.mjs';

export default {
  async fetch() {
    return Response.json({ call: await settle(() => encodeEntity({ a: 1 })), init: await settle(() => init()) });
  }
};

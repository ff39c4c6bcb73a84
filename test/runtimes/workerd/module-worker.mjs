/*
 * module-worker.mjs - the matrix's workerd worker that loads darmok the way
 * a Worker must: the .wasm imported as a module (the bundle keeps the
 * import; module.capnp makes 'darmok/darmok.wasm' the compiled core),
 * passed to init(). GET /init: init() and one round trip; /json and /protobuf
 * round-trip the fixture table.
 */
import * as darmok from 'darmok';
import * as pb from 'darmok/protobuf';
import wasm from 'darmok/darmok.wasm';
import common from './common.cjs';
import fx from './fixtures.cjs';

export default {
  async fetch(request) {
    const format = new URL(request.url).pathname.slice(1);
    try {
      if (!(wasm instanceof WebAssembly.Module)) throw new Error('darmok/darmok.wasm is no WebAssembly.Module here');
      await darmok.init(wasm);
      if (format === 'init') {
        const back = darmok.decodeEntity(darmok.encodeEntity(new Map([[1n, new Date(0)]])));
        if (!(back.get(1n) instanceof Date)) throw new Error('a Map of a Date did not come back');
        return Response.json({ ok: true, detail: 'init(the imported Module), then a round trip' });
      }
      const codec = format === 'protobuf' ? pb : darmok;
      return Response.json({ ok: true, detail: `${common.roundTrips(codec, darmok, fx.fixtures)} values` });
    } catch (err) {
      return Response.json({ ok: false, detail: String((err && err.stack) || err) });
    }
  }
};

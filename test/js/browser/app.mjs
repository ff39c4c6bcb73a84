// The test page: readies the core the way ?source= says, then encodes and
// decodes the Foo graph in both formats, with Node's bytes and its own.
import { init, encodeEntity, decodeEntity, createCodec } from 'DARMOK_ENTRY';
import { Foo, makeFoo, checkFoo } from 'GRAPH';

const pb = createCodec({ format: 'protobuf' });
const wasmUrl = () => new URL('darmok.wasm', document.baseURI);

async function source(how) {
  if (how === 'url') return wasmUrl();
  if (how === 'response') return fetch(wasmUrl());
  if (how === 'bytes') return new Uint8Array(await (await fetch(wasmUrl())).arrayBuffer());
  if (how === 'module') return WebAssembly.compile(await (await fetch(wasmUrl())).arrayBuffer());
  return undefined;
}

const toBase64 = (bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''));
const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

window.darmokPage = {
  ready: (async () => {
    await init(await source(new URLSearchParams(location.search).get('source')));
  })(),
  run(nodeJson, nodePb) {
    const foo = makeFoo();
    const json = encodeEntity(foo);
    const bytes = pb.encodeEntity(foo);
    return {
      json,
      pb: toBase64(bytes),
      plainUint8Array: Object.getPrototypeOf(bytes) === Uint8Array.prototype,
      hasBuffer: typeof Buffer !== 'undefined',
      own: [checkFoo(decodeEntity(json, Foo)), checkFoo(pb.decodeEntity(bytes, Foo))],
      fromNode: [checkFoo(decodeEntity(nodeJson, Foo)), checkFoo(pb.decodeEntity(fromBase64(nodePb), Foo))]
    };
  }
};

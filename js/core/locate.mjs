// The ESM entries' way to the core: webpack 5, Vite and Parcel see this URL,
// emit the .wasm as an asset and rewrite it. Imported before the CommonJS
// implementation, so the core's synchronous load in Node can use it too (an
// ESM bundle with darmok.wasm copied beside it).
import load from './load.cjs';

let url = null;
try {
  url = new URL('../../build/darmok.wasm', import.meta.url);
} catch {
  // import.meta.url is no URL here (a bundler's IIFE output): init(source) is the way.
}
load.locate(url, import.meta.url);

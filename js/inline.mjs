// ESM entry for darmok/inline: darmok/json's exports once inline.cjs has
// handed the embedded core to load.cjs. Not through json.mjs: locate.mjs
// would make a bundler emit the .wasm file that inline is there to avoid.
import './inline.cjs';
export * from './json.cjs';
export { default } from './json.cjs';

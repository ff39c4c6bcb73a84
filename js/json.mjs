// ESM entry for darmok/json: the CommonJS implementation's exports, so that
// `require` and `import` share one class registry. The names are those of
// json.cjs's module.exports literal, which static readers of CommonJS
// (Node's, Deno's, bundlers') see.
import './core/locate.mjs';
export * from './json.cjs';
export { default } from './json.cjs';

// ESM entry for darmok: darmok/json's (index.cjs is json.cjs too), so one
// registry serves require and import. An ESM module's `export *` hands on
// only its own names.
import './core/locate.mjs';
export * from './json.mjs';
export { default } from './json.mjs';

// ESM entry for darmok: darmok/json (index.cjs is json.cjs too).
import './core/locate.mjs';
export * from './json.mjs';
export { default } from './json.mjs';

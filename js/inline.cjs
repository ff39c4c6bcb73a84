'use strict';
/*
 * darmok/inline - darmok (darmok/json's functions) with the WebAssembly
 * core embedded: build/darmok-inline.cjs, the .wasm as base64, made by the
 * build. For bundles and runtimes that cannot ship a separate file. The
 * bytes are handed to load.cjs before the core loads; in Node the core is
 * ready at require time, elsewhere after `await init()`.
 */
require('./load.cjs').embed(require('../build/darmok-inline.cjs'));
const core = require('./core.cjs');
// When the core was already required without the bytes (and failed to load), retry now.
if (!core.isReady()) core.init().catch(() => {});

module.exports = require('./json.cjs');

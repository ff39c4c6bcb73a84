'use strict';
/*
 * darmok/inline - darmok (darmok/json's functions) with the WebAssembly
 * core embedded: build/darmok-inline.cjs, the .wasm as base64, made by the
 * build. For bundles and runtimes that cannot ship a separate file. The
 * bytes are handed to load.cjs before the core loads; in Node the core is
 * ready at require time, elsewhere after `await init()`. A runtime that
 * compiles no WebAssembly from bytes (workerd) cannot use it: every call,
 * and init(), is an ERR_NOT_READY that says to pass init() the imported .wasm.
 */
const load = require('./core/load.cjs');
load.embed(require('../build/darmok-inline.cjs'));
const core = require('./core/core.cjs');
// When the core was already required without the bytes (and failed to load),
// retry now; not where bytes cannot be compiled (workerd), where the first
// call says what to do instead of a load that cannot succeed.
if (!core.isReady() && load.compileRefused() === null) core.init().catch(() => {});

module.exports = require('./json.cjs');

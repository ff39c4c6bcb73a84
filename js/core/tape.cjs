'use strict';
/*
 * tape.cjs - the tape's constants: the one contract between darmok's
 * JavaScript layer and its C core. wasm/dk_tape.h specifies it - the ops and
 * their payloads, str headers, referenceable values, key references - and
 * defines its constants; the build generates those into js/core/dk_abi.cjs, which
 * this file re-exports with what JS derives from them.
 *
 * Encoding: JS walks the object graph once and writes a tape
 * (tape-writer.cjs); one call into the core turns it into output bytes.
 * Decoding: one call parses and validates the bytes and writes a tape of the
 * same layout; JS rebuilds objects from it (tape-reader.cjs, decode.cjs).
 */

const abi = require('./dk_abi.cjs');

/* Ops (T_), str header flags (STR_) and DK_T_BYTES kinds (BYTES_), payloads as in wasm/dk_tape.h. */
const TAPE_CONSTANT = /^(?:T|STR|BYTES)_[A-Z0-9_]+$/;

/* The typed-array constructor of each BYTES kind, by kind (null: not a typed array). */
const TYPED_ARRAYS = new Array(abi.BYTES_KIND_COUNT).fill(null);
TYPED_ARRAYS[abi.BYTES_INT8] = Int8Array;
TYPED_ARRAYS[abi.BYTES_UINT8] = Uint8Array;
TYPED_ARRAYS[abi.BYTES_UINT8C] = Uint8ClampedArray;
TYPED_ARRAYS[abi.BYTES_INT16] = Int16Array;
TYPED_ARRAYS[abi.BYTES_UINT16] = Uint16Array;
TYPED_ARRAYS[abi.BYTES_INT32] = Int32Array;
TYPED_ARRAYS[abi.BYTES_UINT32] = Uint32Array;
TYPED_ARRAYS[abi.BYTES_FLOAT32] = Float32Array;
TYPED_ARRAYS[abi.BYTES_FLOAT64] = Float64Array;
TYPED_ARRAYS[abi.BYTES_BIGINT64] = BigInt64Array;
TYPED_ARRAYS[abi.BYTES_BIGUINT64] = BigUint64Array;

// Object.fromEntries makes an object of fast properties, whose constants
// the optimizing compiler folds into the hot loops that read them.
module.exports = Object.fromEntries([
  ...Object.entries(abi).filter(([name, value]) => TAPE_CONSTANT.test(name) && typeof value === 'number'),
  ['TYPED_ARRAYS', TYPED_ARRAYS]
]);

'use strict';
/*
 * tape.cjs - the tape's constants: the one contract between darmok's
 * JavaScript layer and its C core. wasm/dk_tape.h specifies it - the ops and
 * their payloads, str headers, referenceable values, key references - and
 * defines its constants; the build generates those into js/dk_abi.cjs, which
 * this file re-exports with what JS derives from them.
 *
 * Encoding: JS walks the object graph once and writes a tape
 * (tape-writer.cjs); one call into the core turns it into output bytes.
 * Decoding: one call parses and validates the bytes and writes a tape of the
 * same layout; JS rebuilds objects from it (tape-reader.cjs, decode.cjs).
 */

// Ops, str header flags and DK_T_BYTES kinds, payloads as in wasm/dk_tape.h.
const {
  T_UNDEF, T_NULL, T_FALSE, T_TRUE, T_INT, T_F64, T_BIGINT, T_STR, T_ARRAY,
  T_HOLE, T_OBJECT, T_NULLPROTO, T_INSTANCE, T_MAP, T_SET, T_DATE, T_REGEXP,
  T_BYTES, T_ERROR, T_REF, T_STR16, T_STRREF,
  STR_ASCII, STR_WTF8, STR_KEYREF, STR_SHIFT, STR_MAX,
  BYTES_BUFFER, BYTES_ARRAYBUFFER, BYTES_DATAVIEW, BYTES_INT8, BYTES_UINT8,
  BYTES_UINT8C, BYTES_INT16, BYTES_UINT16, BYTES_INT32, BYTES_UINT32,
  BYTES_FLOAT32, BYTES_FLOAT64, BYTES_BIGINT64, BYTES_BIGUINT64, BYTES_KIND_COUNT
} = require('./dk_abi.cjs');

/* The typed-array constructor of each BYTES kind, by kind (null: not a typed array). */
const TYPED_ARRAYS = new Array(BYTES_KIND_COUNT).fill(null);
TYPED_ARRAYS[BYTES_INT8] = Int8Array;
TYPED_ARRAYS[BYTES_UINT8] = Uint8Array;
TYPED_ARRAYS[BYTES_UINT8C] = Uint8ClampedArray;
TYPED_ARRAYS[BYTES_INT16] = Int16Array;
TYPED_ARRAYS[BYTES_UINT16] = Uint16Array;
TYPED_ARRAYS[BYTES_INT32] = Int32Array;
TYPED_ARRAYS[BYTES_UINT32] = Uint32Array;
TYPED_ARRAYS[BYTES_FLOAT32] = Float32Array;
TYPED_ARRAYS[BYTES_FLOAT64] = Float64Array;
TYPED_ARRAYS[BYTES_BIGINT64] = BigInt64Array;
TYPED_ARRAYS[BYTES_BIGUINT64] = BigUint64Array;

module.exports = {
  T_UNDEF, T_NULL, T_FALSE, T_TRUE, T_INT, T_F64, T_BIGINT, T_STR, T_ARRAY,
  T_HOLE, T_OBJECT, T_NULLPROTO, T_INSTANCE, T_MAP, T_SET, T_DATE, T_REGEXP,
  T_BYTES, T_ERROR, T_REF, T_STR16, T_STRREF,
  STR_ASCII, STR_WTF8, STR_KEYREF, STR_SHIFT, STR_MAX,
  BYTES_BUFFER, BYTES_ARRAYBUFFER, BYTES_DATAVIEW, BYTES_INT8, BYTES_UINT8,
  BYTES_UINT8C, BYTES_INT16, BYTES_UINT16, BYTES_INT32, BYTES_UINT32,
  BYTES_FLOAT32, BYTES_FLOAT64, BYTES_BIGINT64, BYTES_BIGUINT64, BYTES_KIND_COUNT,
  TYPED_ARRAYS
};

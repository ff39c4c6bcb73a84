/*
 * dk_tape.h - the tape: the one contract between darmok's JavaScript layer
 * and its C core. The build generates every constant here into
 * js/core/dk_abi.cjs for js/ (wasm/dk_abi.h): this header is their one
 * definition.
 *
 * Encoding: JS walks the object graph once and writes a tape; one call into
 * the core turns it into output bytes (JSON or protobuf).
 * Decoding: one call parses and validates the bytes and writes a tape of the
 * same layout; JS rebuilds objects from it.
 *
 * Layout. A tape is exactly one value. A value is one op byte followed by
 * its payload. All integers are little-endian and unaligned.
 *
 *   str     u32 header = (byte_length << 2) | flags, then byte_length bytes.
 *           flags: DK_STR_ASCII  every byte < 0x80;
 *                  DK_STR_WTF8   the bytes contain an encoded lone surrogate
 *                                (ED A0..BF xx): generalized UTF-8 (WTF-8),
 *                                so JS strings with lone surrogates survive.
 *           Otherwise the bytes are well-formed UTF-8. A writer may leave
 *           DK_STR_ASCII clear on ASCII bytes; it must set DK_STR_WTF8 when
 *           a lone surrogate is present. byte_length < 2^30.
 *
 *   op              payload
 *   DK_T_UNDEF      -
 *   DK_T_NULL       -
 *   DK_T_FALSE      -
 *   DK_T_TRUE       -
 *   DK_T_INT        i32                      (any int32 except -0)
 *   DK_T_F64        f64                      (any double: -0, NaN, +-Inf)
 *   DK_T_BIGINT     str                      (decimal, "-"? digits, no
 *                                             leading zeros, "0" for zero)
 *   DK_T_STR        str
 *   DK_T_ARRAY      u32 length, then items covering exactly `length` slots:
 *                   each item is a value (one slot) or a DK_T_HOLE (k slots)
 *   DK_T_HOLE       u32 k (k >= 1 consecutive holes; only inside an array)
 *   DK_T_OBJECT     u32 n, then n x (key str, value)   plain object
 *   DK_T_NULLPROTO  u32 n, then n x (key str, value)   Object.create(null)
 *   DK_T_INSTANCE   class-key str, u32 version (>= 1), u32 n,
 *                   then n x (key str, value)          registered class
 *   DK_T_MAP        u32 n, then n x (key value, value)
 *   DK_T_SET        u32 n, then n values
 *   DK_T_DATE       f64 epoch milliseconds (NaN: invalid date)
 *   DK_T_REGEXP     source str, flags str
 *   DK_T_BYTES      u8 kind (DK_BYTES_*), u32 byte length, bytes
 *                   (element data little-endian; length is a multiple of
 *                   the kind's element size)
 *   DK_T_ERROR      u32 n, then n x (key str, value): "name" and "message"
 *                   first, then "stack", "cause", "errors" if present, then
 *                   the error's other own enumerable properties
 *   DK_T_REF        u32 index: the index-th referenceable value of this
 *                   tape, counted from 0 in the order their ops appear
 *   DK_T_STR16      u32 n (< 2^30 / 3), then n UTF-16 code units, 2 bytes
 *                   each, little-endian, any units (lone surrogates too):
 *                   the same string value as DK_T_STR with its WTF-8.
 *                   Only in tapes JS writes for the core to encode (the
 *                   copy of a string out of V8 that costs least); never
 *                   in the tapes the core writes.
 *   DK_T_STRREF     u32 at: the same string value as the str whose header
 *                   is at tape offset at (from the tape's first byte),
 *                   earlier in this tape: the str of a STR, BIGINT or
 *                   REGEXP op. Only in tapes the protobuf decoder writes
 *                   when asked (DK_READ_STRREFS), for a STRING_REF Kind
 *                   naming a text that is not ASCII or has at least
 *                   DK_U16_SRC_ASCII_MIN bytes (dk_abi.h; shorter
 *                   ASCII ones are copied):
 *                   the tape then holds each distinct text once, so it
 *                   grows with the input, not with the references, and
 *                   JS makes each such string once. Never in the tapes
 *                   JS writes.
 *
 * Referenceable values - objects with identity - are those whose op is
 * ARRAY, OBJECT, NULLPROTO, INSTANCE, MAP, SET, DATE, REGEXP, BYTES or
 * ERROR. Each takes the next index when its op is written, before its
 * children. A REF always points to an earlier value (shared reference) or
 * to one still open (cycle); both sides count the same way.
 *
 * Keys are written as the user's property names; escaping them for a byte
 * format (JSON's "$" rule) is the core's business, not the tape's.
 *
 * Key references. A tape the core writes for JS to rebuild from (a
 * protobuf decode asked for them: DK_READ_KEYREFS, where they cost nothing:
 * keys are indexes into the document's string table) may write a member
 * key - the key str of
 * an OBJECT, NULLPROTO, INSTANCE or ERROR field - or an INSTANCE's class
 * key that already appeared as such a key in full as a bare header
 * (k << 2) | DK_STR_KEYREF, no bytes: the k-th member or class key written
 * in full in this tape, counted from 0 in tape order. JS then makes each
 * distinct key once; a protobuf -> JSON transcode asks for them too, so
 * that its tape grows with the input. Only those keys; never in the tapes
 * JS writes. This is the one statement of the numbering: dk_pb_read.c
 * (dec_key) writes it; js/core/tape-reader.cjs (TapeReader#keyRefAt, keyRead),
 * the decode shapes js/codec/shapes.cjs generates and dk_json_write.c
 * (read_key) read it, and point here.
 */
#ifndef DK_TAPE_H
#define DK_TAPE_H

enum dk_tape_op {
    DK_T_UNDEF = 1,
    DK_T_NULL = 2,
    DK_T_FALSE = 3,
    DK_T_TRUE = 4,
    DK_T_INT = 5,
    DK_T_F64 = 6,
    DK_T_BIGINT = 7,
    DK_T_STR = 8,
    DK_T_ARRAY = 9,
    DK_T_HOLE = 10,
    DK_T_OBJECT = 11,
    DK_T_NULLPROTO = 12,
    DK_T_INSTANCE = 13,
    DK_T_MAP = 14,
    DK_T_SET = 15,
    DK_T_DATE = 16,
    DK_T_REGEXP = 17,
    DK_T_BYTES = 18,
    DK_T_ERROR = 19,
    DK_T_REF = 20,
    DK_T_STR16 = 21, /* encode tapes only: u32 n, then n UTF-16 units (LE) */
    DK_T_STRREF = 22 /* protobuf decode tapes only: u32 tape offset of a str */
};

/* str header flags (low two bits of the u32 header). */
#define DK_STR_ASCII 1u
#define DK_STR_WTF8 2u
#define DK_STR_KEYREF 3u /* both: a key reference (see above), no bytes */
#define DK_STR_SHIFT 2
#define DK_STR_MAX 0x40000000u /* byte_length < DK_STR_MAX (2^30) */

/* DK_T_BYTES kinds; each comment starts with the kind's tag name (js/ takes
   the names from it, wasm/gen_abi.cjs), element size in brackets. */
enum dk_bytes_kind {
    DK_BYTES_BUFFER = 0,      /* Buffer (Node) [1] */
    DK_BYTES_ARRAYBUFFER = 1, /* ArrayBuffer [1] */
    DK_BYTES_DATAVIEW = 2,    /* DataView [1] */
    DK_BYTES_INT8 = 3,        /* Int8Array [1] */
    DK_BYTES_UINT8 = 4,       /* Uint8Array [1] */
    DK_BYTES_UINT8C = 5,      /* Uint8ClampedArray [1] */
    DK_BYTES_INT16 = 6,       /* Int16Array [2] */
    DK_BYTES_UINT16 = 7,      /* Uint16Array [2] */
    DK_BYTES_INT32 = 8,       /* Int32Array [4] */
    DK_BYTES_UINT32 = 9,      /* Uint32Array [4] */
    DK_BYTES_FLOAT32 = 10,    /* Float32Array [4] */
    DK_BYTES_FLOAT64 = 11,    /* Float64Array [8] */
    DK_BYTES_BIGINT64 = 12,   /* BigInt64Array [8] */
    DK_BYTES_BIGUINT64 = 13,  /* BigUint64Array [8] */
    DK_BYTES_KIND_COUNT = 14
};

#endif

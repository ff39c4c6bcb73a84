/*
 * dk_abi.h - the WebAssembly ABI between js/ and the core: the one place
 * it is described. The constants both sides use are defined in C headers
 * only, and the build generates them into one JS module, js/core/dk_abi.cjs
 * (wasm/gen_abi.cjs; its SOURCES list says which headers and names):
 *
 *   tape ops, str header flags and shift, DK_T_BYTES kinds   dk_tape.h
 *   result words (below)                                      dk_abi.h
 *   error codes, and the JS code each maps to                 darmok.h dk_code
 *   dk_pb_decode_ctx flags, the UTF-16 side table's flag      darmok.h
 *
 * js/ takes every one of them from js/core/dk_abi.cjs; test/js/core/abi.test.cjs
 * fails when a copy appears in js/ or the generated module drifts.
 *
 * The .wasm is built by the Makefile (WASM_FLAGS) as a standalone module
 * exporting the functions wasm/exports.txt lists, the one list of them.
 * No Emscripten JS glue is used:
 * js/core/load.cjs and js/core/instance.cjs instantiate the module themselves and provide
 * whatever it imports (at most `emscripten_notify_memory_growth` and WASI
 * stubs; the core never prints). Exports are called directly as
 * `instance.exports.dk_xxx(...)`; memory is `instance.exports.memory`.
 * Payloads cross as (pointer, length) in the input area, never as
 * Emscripten strings.
 *
 *   dk_ctx  *dk_ctx_new(void);          one context per JS module
 *                                       instance; NULL on OOM
 *   void dk_ctx_seed(dk_ctx *c, uint32_t lo, uint32_t hi);
 *                                       keys its hash tables (random
 *                                       from JS, once per instance)
 *   uint8_t *dk_ctx_input(dk_ctx *c, uint32_t n);
 *                                       input area of >= n bytes (plus
 *                                       DK_JSON_PADDING the core zeroes
 *                                       itself); reused and grown across
 *                                       calls; NULL on OOM. Valid until
 *                                       the next dk_ctx_input.
 *   uint32_t *dk_ctx_result(dk_ctx *c); address of DK_RES_WORDS u32 result
 *                                       words, stable for the ctx lifetime
 *   int dk_json_encode_ctx(dk_ctx *c, uint32_t tape_len,
 *                          uint32_t max_depth);
 *                                       the input area holds a tape
 *                                       (dk_tape.h) of tape_len bytes;
 *                                       writes JSON (UTF-8) as the output.
 *                                       Returns the error code.
 *   int dk_json_decode_ctx(dk_ctx *c, uint32_t json_len,
 *                          uint32_t max_depth, uint32_t max_length,
 *                          uint32_t units);
 *                                       the input area holds JSON text
 *                                       (UTF-8) of json_len bytes; writes
 *                                       a tape as the output. Returns the
 *                                       error code. With units != 0 the
 *                                       text is instead `units` UTF-16
 *                                       units (LE) from byte DK_U16_AT(units)
 *                                       (2-byte aligned) of an area of
 *                                       DK_U16_AREA(units) bytes
 *                                       (below), made UTF-8 in
 *                                       place first.
 *   int dk_pb_encode_ctx(dk_ctx *c, uint32_t tape_len,
 *                        uint32_t max_depth);
 *   int dk_pb_decode_ctx(dk_ctx *c, uint32_t pb_len, uint32_t max_depth,
 *                        uint32_t max_length, uint32_t flags);
 *                                       the same for the protobuf format
 *                                       (proto/darmok.proto): a
 *                                       darmok.Document instead of JSON.
 *                                       flags: DK_READ_KEYREFS for key
 *                                       references, DK_READ_STRREFS for
 *                                       string references (dk_tape.h)
 *                                       in the tape, or 0.
 *   int dk_pb_from_json_ctx(dk_ctx *c, uint32_t json_len,
 *                           uint32_t max_depth, uint32_t max_length);
 *   int dk_pb_to_json_ctx(dk_ctx *c, uint32_t pb_len,
 *                         uint32_t max_depth, uint32_t max_length,
 *                         uint32_t max_json);
 *                                       transcoding inside the core: JSON
 *                                       text -> Document bytes, and back
 *                                       (JSON text of at most max_json
 *                                       bytes, else DK_ERR_TOO_LARGE;
 *                                       0: no bound).
 *
 * Every call fills the result words (below; zero except as stated) and
 * returns the code of dk_code (darmok.h: 0 is success). The output stays
 * valid until the next call on the same ctx. Memory: arenas and buffers are
 * reused per ctx and reset at the start of each call (also after a failed
 * one); no malloc per value; WebAssembly memory does not keep growing
 * across calls of similar size.
 *
 * Nesting depth: the top-level value is at depth 0; each array, object,
 * Map, Set, instance, error or nullproto entered adds 1 (a tag wrapper
 * object such as {"$Map":[...]} counts once, as the Map). max_depth = 0
 * means DK_DEFAULT_MAX_DEPTH, max_length = 0 DK_DEFAULT_MAX_LENGTH.
 */
#ifndef DK_ABI_H
#define DK_ABI_H

/* The result words: u32 index into the words at dk_ctx_result. */
enum dk_res_word {
    DK_RES_CODE = 0,    /* error code (DK_OK = 0) */
    DK_RES_OFFSET = 1,  /* byte offset into the input where the error was found */
    DK_RES_OUT = 2,     /* address of the output bytes (JSON text, protobuf, or tape) */
    DK_RES_OUT_LEN = 3, /* length of the output */
    DK_RES_MSG = 4,     /* address of the static ASCII error message (0 when ok) */
    DK_RES_MSG_LEN = 5, /* its length */
    /*
     * Decode (JSON and protobuf): address of the UTF-16 side table of the
     * tape's strs (its layout: darmok.h DK_U16_SRC).
     * Encode: the output's address again when the output is UTF-16 (LE)
     * units, as it is once a character is not ASCII (DK_WRITE_MAY_WIDE),
     * or 0 when it is all-ASCII UTF-8 (then it reads as Latin-1 too).
     */
    DK_RES_U16 = 6,
    DK_RES_U16_LEN = 7, /* its length in bytes */
    /* JSON decode from UTF-16: the text's length as UTF-8 (the input that
       offsets count), also on failure */
    DK_RES_IN_LEN = 8,
    /* decode: how many of the tape's referenceable values (dk_tape.h) its
       DK_T_REFs need: the highest index one names, plus one; 0 without */
    DK_RES_KEEP = 9,
    DK_RES_WORDS = 10 /* how many result words there are */
};

/*
 * Where the n UTF-16 units of a JS string's JSON text sit in its decode
 * area (dk_json_read_utf16): at byte n, rounded up to even so that they
 * are 2-byte aligned when the area is (Node's ucs2Write and ucs2Slice copy
 * unaligned units once more). The area is DK_U16_AREA(n) bytes.
 */
#define DK_U16_AT(n) ((n) + ((n)&1))
#define DK_U16_AREA(n) (3 * (n) + 1)

#endif

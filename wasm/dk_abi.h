/*
 * dk_abi.h - the WebAssembly boundary between js/ and the core: what the
 * entry points of dk_wasm.c share with JS (the result words, the UTF-16
 * side table, the decode area of a JS string) and the forms of the C API
 * only they call. darmok.h is the C API; this header adds to it.
 *
 * The constants both sides use are defined in C headers only, and the
 * build generates them into one JS module, js/core/dk_abi.cjs (wasm/gen_abi.cjs;
 * its SOURCES list says which headers and names):
 *
 *   tape ops, str header flags and shift, DK_T_BYTES kinds   dk_tape.h
 *   error codes and the JS code each maps to, read flags,     darmok.h
 *   the default depth
 *   result words, the UTF-16 side table's layout              dk_abi.h
 *   darmok JSON's tags and meta keys                          dk_tags.h
 *
 * js/ takes every one of them from js/core/dk_abi.cjs; test/js/core/abi.test.cjs
 * fails when a copy appears in js/ or the generated module drifts.
 *
 * The functions JS calls are listed once, in wasm/exports.txt: the
 * Makefile gives that list to emcc, gen_abi.cjs checks that dk_wasm.c
 * defines exactly those (as EXPORT) and gives it to js/ as EXPORTS. Each
 * is described where it is defined, in dk_wasm.c. The .wasm is a
 * standalone module without Emscripten's JS glue: js/core/load.cjs and
 * js/core/instance.cjs instantiate it themselves, provide what it imports (at
 * most `emscripten_notify_memory_growth` and WASI stubs; the core never
 * prints) and call `instance.exports.dk_xxx(...)` directly. Payloads
 * cross as (pointer, length) in the context's input area, never as
 * Emscripten strings.
 *
 * Every call fills the result words (below; zero except as stated) and
 * returns its dk_code (0 is success). The output stays valid until the
 * next call on the same context. Arenas and buffers are reused per
 * context and reset at the start of each call (also after a failed one):
 * no malloc per value, and WebAssembly memory does not keep growing across
 * calls of similar size. A limit passed as 0 means its default
 * (dk_limits).
 */
#ifndef DK_ABI_H
#define DK_ABI_H

#include "darmok.h"

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
     * tape's strs (its layout: DK_U16_SRC below).
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

/*
 * The UTF-16 side table (dk_json_read_ex, dk_json_read_utf16,
 * dk_pb_read_ex; result words DK_RES_U16/_LEN): entries one after the
 * other, in tape order (a later entry never has a smaller offset), each
 *   u32 tape offset of a str's header, u32 count of UTF-16 units,
 *   then the units (LE, 2 bytes each)                     8 + 2 x count bytes
 * or, when the count has DK_U16_SRC set (dk_json_read_utf16 only),
 *   u32 tape offset, u32 count | DK_U16_SRC, u32 index of the first of
 *   the units in the decoded text's own units             12 bytes
 * all little-endian. The one description of the layout; its writers are
 * dk_u16.h and dk_u16.c. JS makes the strings of many entries as slices of
 * one Buffer#ucs2Slice, a copy, where decoding their UTF-8 costs V8 more.
 */
#define DK_U16_SRC 0x80000000u /* on the count: the units are in the source */
#define DK_U16_HEAD 8u         /* bytes of an entry before its units */
#define DK_U16_SRC_ENTRY 12u   /* bytes of a DK_U16_SRC entry */

/*
 * dk_json_read_utf16 also gives an ASCII string of at least this many
 * bytes a DK_U16_SRC entry (JS then slices it out of its text); shorter
 * ones JS makes from the tape bytes, through its cache (js/core/tape-reader.cjs
 * SHORT_MAX + 1). Without a JS string, an ASCII string gets no entry: JS
 * makes the long ones from the tape bytes with latin1Slice, or where they
 * come close together as slices of one Latin-1 string of a stretch of the
 * tape (TapeReader#fromLatin1), so they stay one-byte strings, where units
 * would make them two-byte ones (twice the memory, slower to use).
 */
#define DK_U16_SRC_ASCII_MIN 25

/*
 * The flags of the writers' _ex forms, one bit space: a flags argument is
 * an OR of them.
 */
typedef enum dk_write_flag {
    DK_WRITE_TRUSTED_TEXT = 1, /* dk_pb_write_ex: the tape's strings are JS's WTF-8 */
    DK_WRITE_MAY_WIDE = 2      /* dk_json_write_ex: the output may be UTF-16 units */
} dk_write_flag;

/* What dk_json_write_ex wrote: ASCII (UTF-8 that is also Latin-1), other
 * UTF-8, or UTF-16 units (only with DK_WRITE_MAY_WIDE). */
typedef enum dk_form { DK_FORM_ASCII = 0, DK_FORM_UTF8 = 1, DK_FORM_UTF16 = 2 } dk_form;

/*
 * dk_json_write_opts with flags (DK_WRITE_MAY_WIDE, or 0); *form (may be
 * NULL) says which output it wrote, on success.
 * DK_WRITE_MAY_WIDE: the writer starts in UTF-8 and, at the first long
 * string JS put on the tape as UTF-16 (DK_T_STR16) that is not ASCII,
 * makes what it wrote so far units and goes on in units: such strings are
 * then copied, not narrowed to UTF-8 and widened again for JavaScript's
 * string. Short strings (DK_T_STR, WTF-8) do not switch it: in a document
 * of many small values and a few names that are not ASCII, writing units
 * costs more than one widening of the whole output at the end.
 */
int dk_json_write_ex(const uint8_t *tape, size_t len, const dk_limits *lim, uint32_t flags,
                     dk_arena *scratch, dk_buf *out, int *form, dk_err *err);

/*
 * dk_json_read_opts with every dk_read_flag, plus the UTF-16 side table:
 * unless u16_out is NULL it is emptied and gets, for every non-ASCII str
 * of the tape, an entry with its units (the layout at DK_U16_SRC).
 * Emptied on failure.
 * Unless keep_out is NULL, *keep_out is set to how many of the tape's
 * referenceable values (in tape order) a rebuild must keep for its T_REFs:
 * the highest index a T_REF names, plus one; 0 when the tape has no T_REF
 * (and on failure). JS keeps only those in its table, sized at once.
 * DK_READ_VALID_UTF8 (the core made the text with dk_utf16_to_utf8 of a
 * JS string): the non-ASCII bytes of strings are copied without a check.
 * DK_READ_RAW_WTF8 (the text is the WTF-8 of a JS string with a lone
 * surrogate, dk_utf16_to_wtf8_lone): such a 3-byte form (ED A0..BF xx) is
 * read as such in strings and the str is flagged DK_STR_WTF8, as for a
 * \uD800 escape. Neither is for text from outside, which must be UTF-8.
 */
int dk_json_read_ex(const uint8_t *json, size_t len, uint32_t flags, const dk_limits *lim,
                    dk_arena *scratch, dk_buf *tape_out, dk_buf *u16_out, uint32_t *keep_out,
                    dk_err *err);

/*
 * Reads the JSON text of a JS string: its n UTF-16 units (LE) at byte
 * DK_U16_AT(n) of the area of DK_U16_AREA(n) + DK_JSON_PADDING bytes at
 * area are made WTF-8 in place (UTF-8 unless the string has a lone
 * surrogate; *json_len is set to its length, which error offsets count)
 * and read as dk_json_read_ex reads padded text, with DK_READ_VALID_UTF8,
 * or DK_READ_RAW_WTF8 when there is a lone surrogate, which its string
 * keeps (as JSON.parse keeps it).
 * A string without escapes whose units the UTF-8 has not overwritten
 * gets, unless the text had a lone surrogate, a DK_U16_SRC entry: JS
 * takes it from the text, and the core converts nothing back. Such
 * entries are made for ASCII strings too, from DK_U16_SRC_ASCII_MIN bytes
 * on (an ASCII string never gets an entry with its units). keep_out as
 * for dk_json_read_ex. The WebAssembly entry dk_json_decode_ctx with units.
 */
int dk_json_read_utf16(uint8_t *area, size_t n, const dk_limits *lim, dk_arena *scratch,
                       dk_buf *tape_out, dk_buf *u16_out, size_t *json_len, uint32_t *keep_out,
                       dk_err *err);

/*
 * Writes the WTF-8 bytes s[0..n) (trusted: complete, minimal sequences, as
 * the core validated or wrote them) as UTF-16 code units, little-endian, to
 * d (room for 2n bytes: a byte gives at most one unit); returns the count
 * of units. Encoded lone surrogates become lone surrogate units. JS makes a
 * string of them with one copy (Buffer#ucs2Slice), which costs V8 less than
 * decoding UTF-8 that is not ASCII.
 */
size_t dk_wtf8_to_utf16(const uint8_t *s, size_t n, uint8_t *d);

/*
 * dk_pb_write_opts with flags (DK_WRITE_TRUSTED_TEXT, or 0).
 * DK_WRITE_TRUSTED_TEXT: the tape's strings are WTF-8 as darmok's JS tape
 * writer makes it (a surrogate pair always one 4-byte sequence), so they
 * are not checked again. Only for tapes JS wrote (dk_pb_encode_ctx): a
 * tape that breaks the promise gives a Document whose decoding fails.
 */
int dk_pb_write_ex(const uint8_t *tape, size_t len, const dk_limits *lim, uint32_t flags,
                   dk_arena *scratch, dk_buf *out, dk_err *err);

/*
 * dk_pb_read_opts plus the UTF-16 side table of dk_json_read_ex for the
 * non-ASCII strs of the tape (u16_out NULL: none). The table does not
 * count against max_out, so the outcome of a document never depends on it
 * (but for memory); it has a bound of its own, half of max_out: a str
 * whose entry would pass it has none (JS makes it from its bytes).
 * flags: DK_READ_KEYREFS and DK_READ_STRREFS for a tape JS rebuilds from
 * or dk_json_write_refs writes (the protobuf writer reads neither), or 0:
 * with DK_READ_KEYREFS a repeated member key is a key reference
 * (dk_tape.h); with DK_READ_STRREFS a STRING_REF Kind naming a text that
 * is not ASCII or has DK_U16_SRC_ASCII_MIN bytes or more is a DK_T_STRREF
 * (dk_tape.h), not a copy of it. keep_out as for dk_json_read_ex.
 */
int dk_pb_read_ex(const uint8_t *pb, size_t len, const dk_limits *lim, size_t max_out,
                  uint32_t flags, dk_arena *scratch, dk_buf *tape_out, dk_buf *u16_out,
                  uint32_t *keep_out, dk_err *err);

/* dk_pb_to_json_opts with a bound on the JSON text: over max_json bytes
 * (SIZE_MAX: none) it fails with DK_ERR_TOO_LARGE. dk_pb_to_json_ctx
 * passes the caller's maxBytes: what decodeEntity would read back. */
int dk_pb_to_json_ex(const uint8_t *pb, size_t len, const dk_limits *lim, size_t max_json,
                     dk_arena *scratch, dk_buf *tape, dk_buf *out, dk_err *err);

#endif

/*
 * darmok.h - the public interface of darmok's C core.
 *
 * The core turns a tape (wasm/dk_tape.h) into a byte format and back:
 *
 *   dk_json_write_opts   tape -> JSON text   (docs/FORMAT.md)
 *   dk_json_read_opts    JSON text -> tape   (strict RFC 8259, then darmok tags)
 *   dk_pb_write_opts     tape -> protobuf darmok.Document (proto/darmok.proto)
 *   dk_pb_read_opts      protobuf darmok.Document -> tape
 *   dk_pb_from_json_opts, dk_pb_to_json_opts   JSON <-> protobuf, through a tape
 *
 * and each has a thin wrapper without _opts (defaults, a private arena)
 * where it has one. The WebAssembly entry points (dk_wasm.c) call the
 * _ex forms, the _opts ones with the knobs only JS uses: the UTF-16 side
 * table (DK_U16_SRC), key and string references, the output's form.
 *
 *   dk_json_write_ex     dk_json_write_opts with flags and the output's form
 *   dk_json_read_ex      dk_json_read_opts plus the side table and T_REF count
 *   dk_json_read_utf16   dk_json_read_ex of a JS string's UTF-16 units
 *   dk_pb_write_ex       dk_pb_write_opts with flags
 *   dk_pb_read_ex        dk_pb_read_opts plus flags, side table, T_REF count
 *   dk_pb_to_json_ex     dk_pb_to_json_opts with a bound on the JSON text
 *   dk_wtf8_to_utf16     WTF-8 -> UTF-16 units (a JSON output for JS)
 *
 * Everything public starts with dk_. Calls share no global state: all
 * memory comes from the caller's dk_arena (scratch, reset per call) and
 * dk_buf (the output, reused across calls). Errors come back in a dk_err.
 */
#ifndef DARMOK_H
#define DARMOK_H

#include <stddef.h>
#include <stdint.h>

#include "dk_tape.h"

/* DK_MUST: a fallible function returns a dk_code that must be checked. */
#if defined(__GNUC__) || defined(__clang__)
#define DK_MUST __attribute__((warn_unused_result))
#else
#define DK_MUST
#endif

/*
 * Error codes. Numbered from 0; only ever appended. Each comment but
 * DK_OK's starts with the DarmokError code JS throws for it (the build
 * generates that table for js/ from here: wasm/gen_abi.cjs).
 */
typedef enum dk_code {
    DK_OK = 0,            /* success */
    DK_ERR_SYNTAX = 1,    /* ERR_SYNTAX: invalid JSON text (RFC 8259, UTF-8,
                             BOM, junk) or protobuf wire format */
    DK_ERR_FORMAT = 2,    /* ERR_FORMAT: well-formed, but not a valid darmok
                             document */
    DK_ERR_DEPTH = 3,     /* ERR_DEPTH: nesting deeper than max_depth */
    DK_ERR_TOO_LARGE = 4, /* ERR_TOO_LARGE: a length over max_length, or
                             input too large */
    DK_ERR_MEMORY = 5,    /* ERR_MEMORY: out of memory */
    DK_ERR_TAPE = 6       /* ERR_INTERNAL: malformed tape handed to an
                             encoder (a bug in js/) */
} dk_code;

/*
 * The outcome of a call. Filled by the first failure only (later ones do
 * not overwrite it); all zero on success. msg is a static ASCII string
 * literal: nothing to free, valid forever. pos is the byte offset into the
 * call's input (JSON text or tape) where the failure was found.
 */
typedef struct dk_err {
    dk_code code;
    const char *msg;
    size_t pos;
} dk_err;

/* Limits of one call. A zero field means its default. */
typedef struct dk_limits {
    uint32_t max_depth;  /* open containers allowed at once */
    uint32_t max_length; /* string bytes, array slots (holes included),
                            member/entry counts, binary bytes */
    uint64_t hash_seed;  /* keys the protobuf writer's hash tables: random per
                            instance from JS, so no input can be crafted to
                            collide in them; 0 is a valid seed */
} dk_limits;

#define DK_DEFAULT_MAX_DEPTH 1000u
#define DK_DEFAULT_MAX_LENGTH (DK_STR_MAX - 1u) /* the tape's string limit */

/* Zero bytes the reader may look at past the end of a padded input. */
#define DK_JSON_PADDING 16u

/* dk_json_read_opts flags. */
#define DK_READ_PADDED 1u /* json[len .. len+DK_JSON_PADDING) exist and are 0 */

/*
 * A bump arena: memory for one call's scratch data (explicit stacks, a
 * padded copy of the input). Allocation bumps a pointer inside a chunk and
 * chains a new chunk when full; nothing is freed one by one. Fields are
 * private. Zero-initialised (or dk_arena_init) is an empty arena.
 */
typedef struct dk_chunk dk_chunk;
typedef struct dk_arena {
    dk_chunk *head; /* newest chunk, allocations come from here */
} dk_arena;

/* Makes *a an empty arena. Owns nothing yet. */
void dk_arena_init(dk_arena *a);

/*
 * Forgets every allocation but keeps the memory: when several chunks were
 * chained, they are replaced by one chunk of their total size, so the next
 * call of a similar size allocates nothing. Pointers from before are dead.
 */
void dk_arena_reset(dk_arena *a);

/* Frees all chunks; *a is empty again and may be reused. */
void dk_arena_free(dk_arena *a);

/*
 * A growable byte buffer; data[0..len) is the content, cap the capacity.
 * Owned by the caller, grown with realloc by the core, freed with
 * dk_buf_free. Zero-initialised (or dk_buf_init) is an empty buffer.
 */
typedef struct dk_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} dk_buf;

/* Makes *b an empty buffer. */
void dk_buf_init(dk_buf *b);

/* Frees the buffer's memory; *b is empty again. */
void dk_buf_free(dk_buf *b);

/*
 * Makes room for n more bytes after b->len (b->data may move). Fails with
 * DK_ERR_TOO_LARGE when the size overflows, DK_ERR_MEMORY when realloc
 * fails; pos is the input offset reported then.
 */
DK_MUST int dk_buf_reserve(dk_buf *b, size_t n, dk_err *err, size_t pos);

/*
 * Writes the tape tape[0..len) as darmok JSON into out (replacing its
 * content; its memory is reused). The tape is untrusted: every read is
 * bounds-checked and a malformed tape fails with DK_ERR_TAPE (err->pos is a
 * tape offset); nesting deeper than lim->max_depth fails with DK_ERR_DEPTH.
 * lim may be NULL (defaults). scratch holds the explicit stack; the caller
 * may reset it after the call. Returns err->code; on failure out->len is 0.
 */
int dk_json_write_opts(const uint8_t *tape, size_t len, const dk_limits *lim, dk_arena *scratch,
                       dk_buf *out, dk_err *err);

/* dk_json_write_opts with a private scratch arena, freed before return. */
int dk_json_write(const uint8_t *tape, size_t len, const dk_limits *lim, dk_buf *out, dk_err *err);

/*
 * dk_json_write_ex flag: the output may be UTF-16 (LE) units instead of
 * UTF-8. The writer starts in UTF-8 and, at the first long string JS put
 * on the tape as UTF-16 (DK_T_STR16) that is not ASCII, makes what it
 * wrote so far units and goes on in units: such strings are then copied,
 * not narrowed to UTF-8 and widened again for JavaScript's string. Short
 * strings (DK_T_STR, WTF-8) do not switch it: in a document of many
 * small values and a few names that are not ASCII, writing units cost
 * more than one widening of the whole output at the end.
 */
#define DK_WRITE_MAY_WIDE 2u

/* What dk_json_write_ex wrote: ASCII (UTF-8 that is also Latin-1), other
 * UTF-8, or UTF-16 units (only with DK_WRITE_MAY_WIDE). */
#define DK_FORM_ASCII 0
#define DK_FORM_UTF8 1
#define DK_FORM_UTF16 2

/* dk_json_write_opts with flags (DK_WRITE_MAY_WIDE, or 0); *form (may be
 * NULL) says which output it wrote, on success. */
int dk_json_write_ex(const uint8_t *tape, size_t len, const dk_limits *lim, uint32_t flags,
                     dk_arena *scratch, dk_buf *out, int *form, dk_err *err);

/*
 * Parses the JSON text json[0..len) and writes its tape into tape_out
 * (replacing its content). With DK_READ_PADDED in flags the caller promises
 * DK_JSON_PADDING zero bytes after the text; otherwise the text is copied
 * into scratch with that padding. The text is untrusted: failures are
 * DK_ERR_SYNTAX, _FORMAT, _DEPTH, _TOO_LARGE or _MEMORY with err->pos the
 * offending byte offset in json. lim may be NULL. Returns err->code; on
 * failure tape_out->len is 0.
 */
int dk_json_read_opts(const uint8_t *json, size_t len, uint32_t flags, const dk_limits *lim,
                      dk_arena *scratch, dk_buf *tape_out, dk_err *err);

/* dk_json_read_opts without flags and with a private scratch arena. */
int dk_json_read(const uint8_t *json, size_t len, const dk_limits *lim, dk_buf *tape_out,
                 dk_err *err);

/*
 * dk_json_read_opts plus a UTF-16 side table for JS: unless u16_out is
 * NULL it is emptied and gets, for every non-ASCII str of the tape, an
 * entry with its units (layout at DK_U16_SRC below). JS makes such strings as slices of one
 * Buffer#ucs2Slice of many entries, instead of decoding UTF-8, which V8
 * does slowly. Emptied on failure.
 * Unless keep_out is NULL, *keep_out is set to how many of the tape's
 * referenceable values (in tape order) a rebuild must keep for its T_REFs:
 * the highest index a T_REF names, plus one; 0 when the tape has no T_REF
 * (and on failure). JS keeps only those in its table, sized at once.
 */
int dk_json_read_ex(const uint8_t *json, size_t len, uint32_t flags, const dk_limits *lim,
                    dk_arena *scratch, dk_buf *tape_out, dk_buf *u16_out, uint32_t *keep_out,
                    dk_err *err);

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
 * dk_u16.h and dk_u16.c.
 */
#define DK_U16_SRC 0x80000000u /* on the count: the units are in the source */
#define DK_U16_HEAD 8u         /* bytes of an entry before its units */
#define DK_U16_SRC_ENTRY 12u   /* bytes of a DK_U16_SRC entry */

/*
 * dk_json_read_utf16 also gives an ASCII string of at least this many
 * bytes a DK_U16_SRC entry (JS then slices it out of its text); shorter
 * ones JS makes from the tape bytes, through its cache (js/tape-reader.cjs
 * SHORT_MAX + 1). Without a JS string, an ASCII string gets no entry: JS
 * makes the long ones from the tape bytes with latin1Slice, or where they
 * come close together as slices of one Latin-1 string of a stretch of the
 * tape (TapeReader#fromLatin1), so they stay one-byte strings, where units
 * would make them two-byte ones (twice the memory, slower to use).
 */
#define DK_U16_SRC_ASCII_MIN 25

/*
 * Reads the JSON text of a JS string: its n UTF-16 units (LE) at byte
 * DK_U16_AT(n) of the area of DK_U16_AREA(n) + DK_JSON_PADDING bytes at
 * area (the layout macros are in dk_abi.h) are made WTF-8 in place (UTF-8
 * unless the string has a lone surrogate; *json_len is set to its length,
 * which error offsets count) and read as dk_json_read_ex reads padded
 * text, with the core's internal flags saying that the text is valid
 * UTF-8, or WTF-8 whose lone surrogate its string keeps (as JSON.parse
 * keeps it).
 * A string without escapes whose units the UTF-8 has
 * not overwritten gets, unless the text had a lone surrogate, the side-
 * table entry u32 tape offset, u32 count | DK_U16_SRC, u32 index of its
 * first unit: JS takes it from the text, and the core converts nothing
 * back. Such entries are made for ASCII strings too, from
 * DK_U16_SRC_ASCII_MIN bytes on (an ASCII string never gets an entry
 * with its units). keep_out as for dk_json_read_ex. The WebAssembly entry
 * dk_json_decode_ctx with units.
 */
int dk_json_read_utf16(uint8_t *area, size_t n, const dk_limits *lim, dk_arena *scratch,
                       dk_buf *tape_out, dk_buf *u16_out, size_t *json_len, uint32_t *keep_out,
                       dk_err *err);

/*
 * Writes the WTF-8 bytes s[0..n) (trusted: complete, minimal sequences, as
 * the core validated or wrote them) as UTF-16 code units, little-endian, to
 * d (room for 2n bytes: a byte gives at most one unit); returns the count
 * of units. Encoded lone surrogates become lone surrogate units. JS makes a
 * string of them with one copy (Buffer#ucs2Slice), which is several times
 * faster than its UTF-8 decoding of non-ASCII text.
 */
size_t dk_wtf8_to_utf16(const uint8_t *s, size_t n, uint8_t *d);

/* --- protobuf (proto/darmok.proto, docs/FORMAT.md "Protobuf") ----------- */

/*
 * The decode amplification bound of dk_pb_read_opts. The string table and
 * string back-references let a few bytes of protobuf name a long string
 * many times, so the tape a decode writes is bounded by max_out;
 * max_out = 0 means DK_PB_EXPANSION * len + DK_PB_EXPANSION_FLOOR bytes,
 * well above what documents darmok writes expand to.
 */
#define DK_PB_EXPANSION 64u
#define DK_PB_EXPANSION_FLOOR (1u << 20)

/*
 * Writes the tape tape[0..len) as a darmok.Document into out (replacing
 * its content). The tape is untrusted: a malformed one fails with
 * DK_ERR_TAPE (err->pos a tape offset); more than lim->max_depth open
 * containers fail with DK_ERR_DEPTH. String flags in the tape are hints:
 * the bytes are checked as WTF-8 here. Strings and binary data are
 * packed straight from the tape, which must stay put for the call.
 * scratch holds protobuf-c's structs and the explicit stack; the caller
 * may reset it after the call. Returns err->code; on failure
 * out->len is 0.
 */
int dk_pb_write_opts(const uint8_t *tape, size_t len, const dk_limits *lim, dk_arena *scratch,
                     dk_buf *out, dk_err *err);

/*
 * dk_pb_write_ex flag: the tape's strings are WTF-8 as darmok's JS tape
 * writer makes it (a surrogate pair always one 4-byte sequence), so they
 * are not checked again. Only for tapes JS wrote (dk_pb_encode_ctx): a
 * tape that breaks the promise gives a Document whose decoding fails.
 */
#define DK_WRITE_TRUSTED_TEXT 1u

/* dk_pb_write_opts with flags (DK_WRITE_TRUSTED_TEXT, or 0). */
int dk_pb_write_ex(const uint8_t *tape, size_t len, const dk_limits *lim, uint32_t flags,
                   dk_arena *scratch, dk_buf *out, dk_err *err);

/*
 * Parses the darmok.Document pb[0..len) and writes its tape into tape_out
 * (replacing its content). The bytes are untrusted: wire errors are
 * DK_ERR_SYNTAX at their exact offset; a valid protobuf message that is not
 * a valid document is DK_ERR_FORMAT at the offending stream entry, shape or
 * string-table entry (0 for document-level faults); lengths over
 * lim->max_length, and a tape over max_out bytes (0: the default bound
 * above), are DK_ERR_TOO_LARGE; nesting (through node indexes) over
 * lim->max_depth is DK_ERR_DEPTH. No padding is needed. protobuf-c's
 * unpacked structs live in scratch; nothing points into pb after the call.
 * Returns err->code; on failure tape_out->len is 0.
 */
int dk_pb_read_opts(const uint8_t *pb, size_t len, const dk_limits *lim, size_t max_out,
                    dk_arena *scratch, dk_buf *tape_out, dk_err *err);

/* dk_pb_read_ex flag: repeated member keys as key references (dk_tape.h). */
#define DK_READ_KEYREFS 2u

/* dk_pb_read_ex flag: a STRING_REF Kind naming a text that is not ASCII or
 * has DK_U16_SRC_ASCII_MIN bytes or more as DK_T_STRREF (dk_tape.h),
 * not a copy of it. */
#define DK_READ_STRREFS 16u

/*
 * dk_pb_read_opts plus the UTF-16 side table of dk_json_read_ex for the
 * non-ASCII strs of the tape (u16_out NULL: none). The
 * table does not count against max_out, so the outcome of a document
 * never depends on it (but for memory); it has a bound of its own, half
 * of max_out: a str whose entry would pass it has none (JS makes it from
 * its bytes).
 * flags: DK_READ_KEYREFS and DK_READ_STRREFS for a tape JS rebuilds from
 * or dk_json_write_refs writes (the protobuf writer reads neither), or 0. keep_out as for dk_json_read_ex.
 */
int dk_pb_read_ex(const uint8_t *pb, size_t len, const dk_limits *lim, size_t max_out,
                  uint32_t flags, dk_arena *scratch, dk_buf *tape_out, dk_buf *u16_out,
                  uint32_t *keep_out, dk_err *err);

/*
 * JSON text -> darmok.Document: dk_json_read_opts into tape (a caller-owned
 * buffer, reused), then dk_pb_write_opts into out. flags as for
 * dk_json_read_opts. Errors of the first step carry JSON offsets; the
 * second can only fail for memory, size or depth (offset 0).
 */
int dk_pb_from_json_opts(const uint8_t *json, size_t len, uint32_t flags, const dk_limits *lim,
                         dk_arena *scratch, dk_buf *tape, dk_buf *out, dk_err *err);

/* darmok.Document -> JSON text through tape, likewise. The tape keeps each
 * text once (string references, dk_tape.h); the JSON text holds every
 * copy, and those of texts over 64 bytes (which darmok's encoder never
 * shares) may not take more than the default max_out bound
 * (DK_ERR_TOO_LARGE). The whole text has no bound here: a document of
 * short texts named many times writes many bytes of JSON per byte;
 * dk_pb_to_json_ex (below) takes one. */
int dk_pb_to_json_opts(const uint8_t *pb, size_t len, const dk_limits *lim, dk_arena *scratch,
                       dk_buf *tape, dk_buf *out, dk_err *err);

/* dk_pb_to_json_opts with a bound on the JSON text: over max_json bytes
 * (SIZE_MAX: none) it fails with DK_ERR_TOO_LARGE. dk_pb_to_json_ctx
 * passes the caller's maxBytes: what decodeEntity would read back. */
int dk_pb_to_json_ex(const uint8_t *pb, size_t len, const dk_limits *lim, size_t max_json,
                     dk_arena *scratch, dk_buf *tape, dk_buf *out, dk_err *err);

#endif

/*
 * darmok.h - the C API of darmok's core.
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
 * where it has one. The entry points JavaScript calls, and the knobs only
 * it uses, are in dk_abi.h.
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
    DK_ERR_TOO_LARGE = 4, /* ERR_TOO_LARGE: a size over another bound: the
                             input, the output, a table, the amplification
                             bound */
    DK_ERR_MEMORY = 5,    /* ERR_MEMORY: out of memory */
    DK_ERR_TAPE = 6,      /* ERR_INTERNAL: malformed tape handed to an
                             encoder (a bug in js/) */
    DK_ERR_TOO_LONG = 7   /* ERR_TOO_LARGE: a string, binary value, array,
                             Map, Set or member list over max_length (a
                             string also over the tape's cap on one, which
                             no max_length raises: dk_max_str) */
} dk_code;

/*
 * The outcome of a call. Cleared when the call starts (dk_err_clear),
 * then filled by the first failure only (later ones do not overwrite it):
 * all zero on success. msg is a static ASCII string literal: nothing to
 * free, valid forever. pos is the byte offset into the call's input (JSON
 * text or tape) where the failure was found. Every function that takes a
 * dk_err * accepts NULL: a failure is then only its returned code.
 */
typedef struct dk_err {
    dk_code code;
    const char *msg;
    size_t pos;
} dk_err;

/* Makes *err the outcome of a success: DK_OK, no message, offset 0. NULL
 * is allowed (and nothing happens). */
void dk_err_clear(dk_err *err);

/*
 * Limits of one call. A zero field means its default. Nesting depth: the
 * top-level value is at depth 0; each array, object, Map, Set, instance,
 * error or nullproto entered adds 1 (a tag wrapper object such as
 * {"$Map":[...]} counts once, as the Map).
 */
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

/*
 * The flags of the readers, one bit space: a flags argument is an OR of
 * them. The public readers take DK_READ_PADDED and ignore the others,
 * which the JavaScript boundary (dk_abi.h) and the core itself set.
 */
typedef enum dk_read_flag {
    DK_READ_PADDED = 1,     /* json[len .. len+DK_JSON_PADDING) exist and are 0 */
    DK_READ_KEYREFS = 2,    /* dk_pb_read_ex: repeated member keys as key references */
    DK_READ_VALID_UTF8 = 4, /* the core made the text valid UTF-8: not checked again */
    DK_READ_RAW_WTF8 = 8,   /* the text is a JS string's WTF-8: lone surrogates kept */
    DK_READ_STRREFS = 16    /* dk_pb_read_ex: repeated texts as string references */
} dk_read_flag;

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
 * fails; pos is the input offset reported then. Unlike the codec's calls
 * it does not clear err first: the core calls it within a call, whose
 * first failure err keeps.
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
 * Parses the JSON text json[0..len) and writes its tape into tape_out
 * (replacing its content). flags: DK_READ_PADDED or 0. With it the caller promises
 * DK_JSON_PADDING zero bytes after the text; otherwise the text is copied
 * into scratch with that padding. The text is untrusted: failures are
 * DK_ERR_SYNTAX, _FORMAT, _DEPTH, _TOO_LONG (over lim->max_length),
 * _TOO_LARGE or _MEMORY with err->pos the offending byte offset in json.
 * lim may be NULL. Returns err->code; on failure tape_out->len is 0.
 */
int dk_json_read_opts(const uint8_t *json, size_t len, uint32_t flags, const dk_limits *lim,
                      dk_arena *scratch, dk_buf *tape_out, dk_err *err);

/* dk_json_read_opts without flags and with a private scratch arena. */
int dk_json_read(const uint8_t *json, size_t len, const dk_limits *lim, dk_buf *tape_out,
                 dk_err *err);

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
 * Parses the darmok.Document pb[0..len) and writes its tape into tape_out
 * (replacing its content). The bytes are untrusted: wire errors are
 * DK_ERR_SYNTAX at their exact offset; a valid protobuf message that is not
 * a valid document is DK_ERR_FORMAT at the offending stream entry, shape or
 * string-table entry (0 for document-level faults); lengths over
 * lim->max_length are DK_ERR_TOO_LONG, and a tape over max_out bytes (0:
 * the default bound above) is DK_ERR_TOO_LARGE; nesting (through node
 * indexes) over lim->max_depth is DK_ERR_DEPTH. No padding is needed. protobuf-c's
 * unpacked structs live in scratch; nothing points into pb after the call.
 * Returns err->code; on failure tape_out->len is 0.
 */
int dk_pb_read_opts(const uint8_t *pb, size_t len, const dk_limits *lim, size_t max_out,
                    dk_arena *scratch, dk_buf *tape_out, dk_err *err);

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
 * dk_pb_to_json_ex (dk_abi.h) takes one. */
int dk_pb_to_json_opts(const uint8_t *pb, size_t len, const dk_limits *lim, dk_arena *scratch,
                       dk_buf *tape, dk_buf *out, dk_err *err);

#endif

/*
 * dk_pb.h - what darmok's protobuf files share (dk_pb_write.c, dk_pb_read.c,
 * dk_pb_common.c, dk_pb_transcode.c); never exported.
 *
 * The public contracts are in darmok.h; the format is proto/darmok.proto.
 * A Document is a string table, a shape table and a few packed streams (a
 * Kind per value, then counts, ints, numbers, texts, binaries), so
 * protobuf-c handles about ten fields per document, not a message per
 * value. protobuf-c recursion is bounded by the schema (Document > Shape),
 * never by the input: see darmok.proto, "Why flat".
 */
#ifndef DK_PB_H
#define DK_PB_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "dk_internal.h"
#include "darmok.pb-c.h"

#define DK_PB_FORMAT 1u /* Document.format we write and read */
/* Largest output we produce: wasm32 cannot address more, and the tape's
 * offsets and protobuf's lengths are 32-bit. */
#define DK_PB_MAX_OUT ((size_t)INT32_MAX)
/* The default bound of a protobuf decode's tape, and of the JSON text a
 * transcode writes from one: DK_PB_EXPANSION * len + DK_PB_EXPANSION_FLOOR
 * (darmok.h), at most DK_PB_MAX_OUT. len < 2^31: no overflow in 64 bits. */
static inline size_t dk_pb_max_out(size_t len)
{
    uint64_t n = (uint64_t)len * DK_PB_EXPANSION;
    return n < DK_PB_MAX_OUT - DK_PB_EXPANSION_FLOOR ? (size_t)(n + DK_PB_EXPANSION_FLOOR)
                                                     : DK_PB_MAX_OUT;
}

/* Most entries in the string table, the shape table or the texts stream. */
#define PB_TABLE_MAX 0x3FFFFFFFu

/* Document field numbers (darmok.proto). */
enum {
    PB_F_FORMAT = 1,
    PB_F_STRINGS = 2,
    PB_F_SHAPES = 3,
    PB_F_KINDS = 4,
    PB_F_COUNTS = 5,
    PB_F_INTS = 6,
    PB_F_NUMBERS = 7,
    PB_F_TEXTS = 8,
    PB_F_BINARY_KINDS = 9,
    PB_F_BINARIES = 10
};

/* Room for element n (0-based) of an arena array of *cap elements of elem
 * bytes: returns the array (a copy when it had to grow) or NULL when out
 * of memory. */
static inline void *pb_more(dk_arena *a, void *arr, size_t n, size_t *cap, size_t elem)
{
    size_t ncap;
    void *p;
    if (n < *cap) return arr;
    ncap = *cap == 0 ? 16 : *cap * 2;
    p = dk_arena_grow(a, arr, *cap, ncap, elem);
    if (p != NULL) *cap = ncap;
    return p;
}

/* protobuf-c's allocator over the call's arena. free is a no-op, so
 * protobuf-c's own cleanup after a failed unpack costs a walk and nothing
 * else, and nobody calls free_unpacked. `failed` tells a failed unpack from
 * a lack of memory. */
typedef struct pb_alloc_ctx {
    dk_arena *a;
    int failed;
    uint8_t *next; /* the rest of the block cut last: left bytes at next */
    size_t left;
} pb_alloc_ctx;

/* protobuf-c's alloc and free over the call's arena (dk_pb_common.c). */
void *pb_pc_alloc(void *data, size_t size);
void pb_pc_free(void *data, void *ptr);

/* Classification bits. ASCII and WTF8 are the tape's str flags. */
#define PB_TX_ASCII DK_STR_ASCII /* every byte < 0x80 */
#define PB_TX_WTF8 DK_STR_WTF8   /* contains an encoded lone surrogate */
#define PB_TX_BAD 4u             /* not WTF-8 */

/*
 * Classify n bytes as WTF-8: UTF-8 whose code points may also be lone
 * surrogates (ED A0..BF xx). Overlong forms, code points over U+10FFFF and a
 * high surrogate directly followed by a low one (a pair must be a single
 * 4-byte sequence) are BAD. Reads exactly p[0..n).
 *
 * With d not NULL, a text that is not ASCII is also written as UTF-16
 * units at d (room for 2n bytes), their count at *units: the side table's
 * conversion done in the same pass as the check (an ASCII text writes
 * nothing). What it wrote is garbage when the result is BAD.
 */
unsigned pb_text_scan(const uint8_t *p, size_t n, uint8_t *d, size_t *units);

/*
 * Every NaN as the one the JSON reader makes of "NaN" ((double)NAN:
 * 0x7FF8000000000000, proto/darmok.proto "numbers"): JS cannot tell NaNs
 * apart and JSON says "NaN" for all, so the bytes stay a function of the
 * value and protobuf -> JSON -> protobuf gives them back.
 */
static inline void pb_nan_canon(double *x)
{
    if (isnan(*x)) *x = (double)NAN;
}

/*
 * A Date's time value in canonical form: NaN (an invalid date) becomes the
 * one NaN the JSON reader writes, -0 becomes 0. 0 when it is no time value
 * at all (not an integer, or beyond +-DK_DATE_MAX_MS), as the JSON writer
 * refuses it. By address: see dec_f64_unsafe.
 */
int pb_date_canon(double *ms);

/*
 * Checks the darmok.Document bytes in[0..len) (untrusted) against the
 * descriptors as protobuf-c will read them: DK_ERR_SYNTAX at the offending
 * byte for a wire fault, DK_ERR_TOO_LONG for a bytes field over max_str,
 * DK_ERR_FORMAT or DK_ERR_DEPTH for what darmok never writes. After it
 * passes, protobuf-c's unpack can fail only for memory (dk_pb_wire.c).
 */
DK_MUST int pb_wire_check(const uint8_t *in, size_t len, uint32_t max_str, dk_err *err);

/*
 * The byte offset in in[0..len) of element i of the Document's repeated
 * field `field`, as protobuf-c counted it; len when there is none. Only
 * after pb_wire_check passed (hence _unsafe), for error reports.
 */
size_t pb_elem_at_unsafe(const uint8_t *in, size_t len, unsigned field, size_t i);

#endif

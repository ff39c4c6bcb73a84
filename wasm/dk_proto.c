/*
 * dk_proto.c - darmok's protobuf format: tape -> darmok.Document and back.
 *
 * The public contracts are in darmok.h; the format is proto/darmok.proto.
 * A Document is a string table, a shape table and a few packed streams (a
 * Kind per value, then counts, ints, numbers, texts, binaries), so
 * protobuf-c handles about ten fields per document, not a message per
 * value.
 *
 * Encode: walk the tape once, iteratively, appending to arena arrays (keys
 * and shapes interned, repeated string values turned into back-references
 * when that is shorter), then let protobuf-c pack them. Decode: check the
 * wire bytes ourselves first (so errors carry byte offsets and protobuf-c
 * never sees malformed data), unpack with protobuf-c into the arena, then
 * walk the kinds stream iteratively, validating as we go, and write the
 * tape. Byte offsets of stream entries are found again in the input only
 * when an error is reported (pb_elem_at).
 *
 * protobuf-c recursion is bounded by the schema (Document > Shape), never
 * by the input: see darmok.proto, "Why flat".
 *
 * Sections:
 *   1. memory: the core's arena and buffer, protobuf-c's allocator
 *   2. text: WTF-8 classification, hashing
 *   3. encoder
 *   4. decoder: wire check, unpack, walk
 *   5. transcoding JSON <-> protobuf through a tape
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dk_internal.h"
#include "darmok.pb-c.h"

#define DK_PB_FORMAT 1u /* Document.format we write and read */
/* Largest output we produce: wasm32 cannot address more, and the tape's
 * offsets and protobuf's lengths are 32-bit. */
#define DK_PB_MAX_OUT ((size_t)INT32_MAX)
/* Largest output reservation made from pb_bound instead of the exact size. */
#define PB_BOUND_MAX ((uint64_t)1 << 20)
/* Most entries in the string table, the shape table or the texts stream. */
#define PB_TABLE_MAX 0x3FFFFFFFu

/*
 * The longest string value the encoder shares (KIND_STRING_REF): repeated
 * values are short (names, tags, enum-like words); every string value it
 * looks up costs a hash of its bytes and a probe of a table that grows with
 * the document, which on 10,000 Posts (bodies of ~500 bytes, none repeated)
 * cost up to a third of the C write.
 */
#define PB_REF_MAX_BYTES 64
/* A string reference is at least 2 bytes of protobuf (its kind, its index)
 * for a tape str of 5 + n bytes: every document the encoder writes stays
 * within the decode's amplification bound (darmok.h). */
_Static_assert((5 + PB_REF_MAX_BYTES) / 2 < DK_PB_EXPANSION,
               "shared strings must not expand past DK_PB_EXPANSION");

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

/* ===================================================================== */
/* 1. Memory: the core's arena and buffer (dk_internal.h)                 */
/* ===================================================================== */

/* Room for element n (0-based) of an arena array of *cap elements of elem
 * bytes: returns the array (a copy when it had to grow) or NULL when out
 * of memory. */
static void *pb_more(dk_arena *a, void *arr, size_t n, size_t *cap, size_t elem)
{
    size_t ncap;
    void *p;
    if (n < *cap)
        return arr;
    ncap = *cap == 0 ? 16 : *cap * 2;
    p = dk_arena_grow(a, arr, *cap, ncap, elem);
    if (p != NULL)
        *cap = ncap;
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

/* Blocks protobuf-c's allocations are cut from. Decoding the Foo graph
 * makes about 40 (the message, its arrays, a copy of every strings and
 * texts entry, the shapes); each a call to dk_arena_alloc was 5% of it. */
#define PB_ALLOC_BLOCK 2048u

static DK_COLD void *pb_pc_alloc_slow(pb_alloc_ctx *ac, size_t size)
{
    uint8_t *p;
    if (size >= PB_ALLOC_BLOCK / 4) { /* its own allocation; the block stays */
        p = dk_arena_alloc(ac->a, size);
    } else {
        p = dk_arena_alloc(ac->a, PB_ALLOC_BLOCK);
        if (p != NULL) {
            ac->next = p + size;
            ac->left = PB_ALLOC_BLOCK - size;
        }
    }
    if (p == NULL)
        ac->failed = 1;
    return p;
}

/* size bytes, 8-byte aligned, in the arena. Memory past an allocation is
 * readable for DK_ARENA_SLACK bytes (dec_str_unsafe relies on it): the
 * block's next bytes, or its own slack for the last one. Test builds
 * (DK_ARENA_EXACT) take each allocation from the arena, so
 * AddressSanitizer still sees every one on its own; with DK_PB_ALLOC_BLOCKS
 * as well (the Makefile's test-c-simd) they cut blocks as the .wasm does,
 * each block then a malloc of its own, so a read past a block and its
 * slack is seen. */
static void *pb_pc_alloc(void *data, size_t size)
{
    pb_alloc_ctx *ac = data;
    void *p;
#if !defined(DK_ARENA_EXACT) || defined(DK_PB_ALLOC_BLOCKS)
    size_t n = (size + 7u) & ~(size_t)7u;
    if (n >= size && n <= ac->left) {
        p = ac->next;
        ac->next += n;
        ac->left -= n;
        return p;
    }
    if (n >= size)
        return pb_pc_alloc_slow(ac, n);
#endif
    p = dk_arena_alloc(ac->a, size);
    if (p == NULL)
        ac->failed = 1;
    return p;
}

static void pb_pc_free(void *data, void *ptr)
{
    (void)data;
    (void)ptr;
}

/* ===================================================================== */
/* 2. Text                                                                */
/* ===================================================================== */

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
static unsigned pb_text_scan(const uint8_t *p, size_t n, uint8_t *d, size_t *units)
{
    unsigned f = PB_TX_ASCII;
    size_t i = 0;
    size_t high_end = SIZE_MAX; /* where the last high surrogate ended */
    uint8_t *d0 = d;
    while (i < n) {
        unsigned b = p[i];
        uint32_t c;
        if (b < 0x80) {
            /* ASCII runs DK_PLAIN_RUN bytes at a time; once the text is
             * known not to be ASCII, widened to UTF-16 in the same pass */
            if (d != NULL && !(f & PB_TX_ASCII)) {
                i = dk_widen_ascii(p, i, n, &d);
                continue;
            }
            i++;
            while (n - i >= DK_PLAIN_RUN) {
                dk_runmask m = dk_ascii_mask(p + i);
                if (m == 0) {
                    i += DK_PLAIN_RUN;
                    continue;
                }
                i += dk_mask_first(m);
                break;
            }
            while (i < n && p[i] < 0x80)
                i++;
            continue;
        }
        if (f & PB_TX_ASCII) {
            f &= ~PB_TX_ASCII;
            if (d != NULL) /* the ASCII before the first other byte */
                d += 2 * dk_wtf8_to_utf16(p, i, d);
        }
        if (b < 0xC2)
            return PB_TX_BAD;
        if (b < 0xE0) {
            if (n - i < 2 || (p[i + 1] & 0xC0) != 0x80)
                return PB_TX_BAD;
            c = (b & 0x1Fu) << 6 | (p[i + 1] & 0x3Fu);
            i += 2;
        } else if (b < 0xF0) {
            unsigned b1;
            if (n - i < 3 || (p[i + 1] & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80)
                return PB_TX_BAD;
            b1 = p[i + 1];
            if (b == 0xE0 && b1 < 0xA0)
                return PB_TX_BAD;
            if (b == 0xED && b1 >= 0xA0) {
                if (b1 >= 0xB0 && high_end == i)
                    return PB_TX_BAD;
                if (b1 < 0xB0)
                    high_end = i + 3;
                f |= PB_TX_WTF8;
            }
            c = (b & 0x0Fu) << 12 | (b1 & 0x3Fu) << 6 | (p[i + 2] & 0x3Fu);
            i += 3;
        } else {
            unsigned b1;
            if (b > 0xF4 || n - i < 4 || (p[i + 1] & 0xC0) != 0x80 ||
                (p[i + 2] & 0xC0) != 0x80 || (p[i + 3] & 0xC0) != 0x80)
                return PB_TX_BAD;
            b1 = p[i + 1];
            if ((b == 0xF0 && b1 < 0x90) || (b == 0xF4 && b1 > 0x8F))
                return PB_TX_BAD;
            c = ((b & 0x07u) << 18 | (b1 & 0x3Fu) << 12 | (p[i + 2] & 0x3Fu) << 6 |
                 (p[i + 3] & 0x3Fu)) - 0x10000u;
            i += 4;
            if (d != NULL) {
                dk_put_u16(d, 0xD800u + (c >> 10));
                d += 2;
            }
            c = 0xDC00u + (c & 0x3FFu);
        }
        if (d != NULL) {
            dk_put_u16(d, c);
            d += 2;
        }
    }
    if (d != NULL)
        *units = (size_t)(d - d0) / 2;
    return f;
}

/*
 * pb_text_scan of an entry protobuf-c copied into the arena (readable
 * DK_ARENA_SLACK >= DK_PLAIN_RUN bytes past its end, see pb_pc_alloc),
 * without its call when the entry is short and ASCII, as most keys and
 * many values are: one mask of the bytes in place of the call, its set-up
 * and a byte loop (pb_text_scan was 4% of decoding the Foo graph, whose
 * 23 texts and strings average 4 bytes). Same results and, with d, same
 * writes (none for ASCII).
 */
static DK_INLINE unsigned pb_text_class(const ProtobufCBinaryData *b, uint8_t *d, size_t *units)
{
    size_t n = b->len;
    if (n - 1 < DK_PLAIN_RUN) {
        dk_runmask m = dk_ascii_mask(b->data);
        if (n < DK_PLAIN_RUN)
            m = dk_mask_before(m, (unsigned)n);
        if (m == 0)
            return PB_TX_ASCII;
    }
    return pb_text_scan(b->data, n, d, units);
}

/*
 * Every NaN as the one the JSON reader makes of "NaN" ((double)NAN:
 * 0x7FF8000000000000, proto/darmok.proto "numbers"): JS cannot tell NaNs
 * apart and JSON says "NaN" for all, so the bytes stay a function of the
 * value and protobuf -> JSON -> protobuf gives them back.
 */
static void pb_nan_canon(double *x)
{
    if (isnan(*x))
        *x = (double)NAN;
}

/*
 * A Date's time value in canonical form: NaN (an invalid date) becomes the
 * one NaN the JSON reader writes, -0 becomes 0. 0 when it is no time value
 * at all (not an integer, or beyond +-8.64e15 ms), as the JSON writer
 * refuses it. By address: see dec_f64_unsafe.
 */
static int pb_date_canon(double *ms)
{
    if (isnan(*ms)) {
        pb_nan_canon(ms);
        return 1;
    }
    if (!(*ms >= -DK_DATE_MAX_MS && *ms <= DK_DATE_MAX_MS) || *ms != (double)(int64_t)*ms)
        return 0;
    if (*ms == 0)
        *ms = 0;
    return 1;
}

/*
 * The n < 8 bytes at p as one word, every byte in it, by fixed-size loads
 * that may overlap: a memcpy of n bytes is a call (memory.copy) in
 * WebAssembly, and most keys and hashed strings are this short. Two
 * strings of the same length n are equal exactly when their words are.
 */
static inline uint64_t pb_tail(const uint8_t *p, size_t n)
{
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
        return (uint64_t)hi << 32 | lo;
    }
    if (n == 0)
        return 0;
    return (uint64_t)p[0] | (uint64_t)p[n >> 1] << 8 | (uint64_t)p[n - 1] << 16;
}

/*
 * A hash of n bytes keyed by seed, 8 at a time (strings can be long: every
 * string value is hashed). Only compared within one call, so byte order
 * does not matter. Each word is multiplied twice: after one multiply, a
 * difference in a word's top bit is still just that bit, which the next
 * word can cancel whatever the seed (collisions written without knowing
 * it); the second multiply spreads it through carries that depend on the
 * seed. The end is murmur3's fmix64, which mixes every bit into the low
 * ones a table size keeps.
 */
static uint32_t pb_hash(uint64_t seed, const uint8_t *p, size_t n)
{
    uint64_t h = seed ^ 0x9E3779B97F4A7C15u ^ (uint64_t)n;
    uint64_t w;
    while (n >= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDu;
        h ^= h >> 29;
        h *= 0xC4CEB9FE1A85EC53u;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    w = pb_tail(p, n); /* n is in the hash already */
    h ^= w;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDu;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53u;
    h ^= h >> 33;
    return (uint32_t)h;
}

/*
 * Whether a[0..n) and b[0..n) are the same bytes: keys and class keys are
 * compared on every record, and memcmp is a call (a byte loop in
 * WebAssembly's libc) where these are a few words.
 */
static inline int pb_same(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint64_t x, y;
    if (n >= 8) {
        for (; n > 8; a += 8, b += 8, n -= 8) {
            memcpy(&x, a, 8);
            memcpy(&y, b, 8);
            if (x != y)
                return 0;
        }
        /* the last 8 bytes, overlapping what was compared */
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    /* Most keys are 3 to 7 bytes: their words, not a loop of byte
     * compares (the loop was the hottest spot of enc_run on the Foo
     * graph; this is 4% of its native write). */
    return pb_tail(a, n) == pb_tail(b, n);
}

/* Bytes of v as a protobuf varint. */
static size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* ===================================================================== */
/* 3. Encoder: tape -> Document structs -> bytes                          */
/* ===================================================================== */

/* An interning table of byte strings: open addressing, power-of-two size,
 * at most half full. Entries point into the tape. */
typedef struct pb_str_slot {
    uint32_t hash;
    uint32_t ref; /* index + 1; 0: empty */
    const uint8_t *p;
    size_t n;
} pb_str_slot;

typedef struct pb_strtab {
    pb_str_slot *slots;
    size_t cap, count;
    uint64_t seed;     /* of its hashes (pb_hash) */
    unsigned reseeds;  /* times a long probe made it pick a new seed */
} pb_strtab;

/*
 * Probes of a string table lookup past which the table picks a new seed
 * and rehashes (at most PB_RESEEDS times a call): with a random seed no
 * input should get there (linear probing at half load probes ~1.5 slots,
 * and rarely 40 in a million), so one that does is treated as a collision
 * found by chance or by a flaw of pb_hash, and a new seed breaks it. Past
 * PB_RESEEDS the probes are left unbounded: no more can be done cheaply.
 */
#define PB_PROBE_MAX 128u
#define PB_RESEEDS 4u

typedef struct pb_shape_slot {
    uint32_t hash;
    uint32_t ref; /* shape index + 1; 0: empty */
} pb_shape_slot;

/* Class keys enc_class_key compares before a lookup. */
#define PB_RECENT_CLASSES 4

/* An open container of the tape. */
typedef struct pb_enc_frame {
    uint8_t op;          /* DK_T_ARRAY, _OBJECT, _NULLPROTO, _INSTANCE, ... */
    uint64_t left;       /* array: slots; records: pairs; map: 2 x pairs; set: values */
    uint64_t total;      /* the same, at the start */
    size_t kbase;        /* records: its first key on the key stack */
    size_t shape_slot;   /* records: its counts entry, the shape index, set on close */
    uint32_t class_key;  /* instances: string index */
    uint32_t version;    /* instances */
    uint32_t guess;      /* instances: 1 + the shape its keys are expected
                            to make (its class's last), 0 once one differs */
} pb_enc_frame;

typedef struct pb_enc {
    dk_arena *a;
    dk_err *err;
    const uint8_t *tape;
    size_t len;
    size_t pos;
    uint32_t max_depth;
    uint64_t seed; /* dk_limits hash_seed: keys the shape table's hashes */
    uint32_t n_refs; /* values with identity so far: the next REF index */
    int trusted_text; /* DK_WRITE_TRUSTED_TEXT: strings not checked */
    dk_scratch str16; /* DK_T_STR16 values made WTF-8, one at a time */

    /* The Document's arrays, grown in the arena. */
    ProtobufCBinaryData *strs;
    size_t n_strs, cap_strs;
    Darmok__Shape **shapes;
    size_t n_shapes, cap_shapes;
    Darmok__Kind *kinds;
    size_t n_kinds, cap_kinds;
    uint32_t *counts;
    size_t n_counts, cap_counts;
    int64_t *ints;
    size_t n_ints, cap_ints;
    double *nums;
    size_t n_nums, cap_nums;
    ProtobufCBinaryData *texts;
    size_t n_texts, cap_texts;
    Darmok__BinaryKind *bkinds;
    size_t n_bkinds, cap_bkinds;
    ProtobufCBinaryData *bins;
    size_t n_bins, cap_bins;

    pb_strtab key_tab;  /* keys and class keys -> strs index */
    pb_strtab text_tab; /* string values -> texts index of the first one */
    /* one-byte ASCII string values -> 1 + their texts index, when that is
     * below 255 (0: not met, or look in text_tab): the map keys and labels
     * of small documents ("x", "a": 21 of the Foo graph's values) without
     * a hash and a probe, 5% of its native write. Zeroed with the rest of
     * pb_enc. */
    uint8_t one_char[128];
    pb_shape_slot *shape_tab;
    size_t shape_tab_cap;

    /* strs index of a class key -> 1 + the shape its last instance had
     * (0: none yet): an instance's keys are compared with that shape's
     * instead of being looked up, the shape reused when all match */
    uint32_t *class_shape;
    size_t cap_class_shape;
    uint32_t recent_class[PB_RECENT_CLASSES]; /* 1 + strs index, 0: none */
    unsigned recent_next;

    pb_enc_frame *frames;
    size_t n_frames, cap_frames;
    uint32_t *keys; /* keys of open records, string indexes */
    size_t n_keys, cap_keys;
} pb_enc;

static int enc_oom(pb_enc *e)
{
    return dk_fail(e->err, DK_ERR_MEMORY, "out of memory", e->pos);
}

static int enc_bad(pb_enc *e, const char *msg, size_t at)
{
    return dk_fail(e->err, DK_ERR_TAPE, msg, at);
}

/* pb_more for a stream array that is full (n == *cap); NULL with the
 * failure recorded when out of memory. */
static DK_COLD void *enc_grow(pb_enc *e, void *arr, size_t n, size_t *cap, size_t elem)
{
    void *p = pb_more(e->a, arr, n, cap, elem);
    if (p == NULL)
        (void)enc_oom(e);
    return p;
}

/* Room for one more element of the stream array arr (n used of cap). */
#define ENC_ROOM(e, arr, n, cap)                                               \
    do {                                                                       \
        if (DK_UNLIKELY((n) == (cap))) {                                       \
            void *enc_room_p_ = enc_grow((e), (arr), (n), &(cap), sizeof *(arr)); \
            if (enc_room_p_ == NULL)                                           \
                return (int)(e)->err->code;                                    \
            (arr) = enc_room_p_;                                               \
        }                                                                      \
    } while (0)

/* Appending to the streams. */
static DK_MUST DK_INLINE int enc_kind(pb_enc *e, Darmok__Kind k)
{
    ENC_ROOM(e, e->kinds, e->n_kinds, e->cap_kinds);
    e->kinds[e->n_kinds++] = k;
    return 0;
}

static DK_MUST DK_INLINE int enc_count(pb_enc *e, uint32_t v)
{
    ENC_ROOM(e, e->counts, e->n_counts, e->cap_counts);
    e->counts[e->n_counts++] = v;
    return 0;
}

static DK_MUST DK_INLINE int enc_int(pb_enc *e, int64_t v)
{
    ENC_ROOM(e, e->ints, e->n_ints, e->cap_ints);
    e->ints[e->n_ints++] = v;
    return 0;
}

static DK_MUST DK_INLINE int enc_blob(pb_enc *e, ProtobufCBinaryData **arr, size_t *n,
                                      size_t *cap, const uint8_t *p, size_t len)
{
    ENC_ROOM(e, *arr, *n, *cap);
    /* Points into the tape: packed before the call returns. */
    (*arr)[*n].data = (uint8_t *)(uintptr_t)p;
    (*arr)[*n].len = len;
    (*n)++;
    return 0;
}

static DK_MUST DK_INLINE int enc_u8(pb_enc *e, uint8_t *v)
{
    if (e->len - e->pos < 1)
        return enc_bad(e, "tape ends inside a value", e->pos);
    *v = e->tape[e->pos++];
    return 0;
}

static DK_MUST DK_INLINE int enc_u32(pb_enc *e, uint32_t *v)
{
    if (e->len - e->pos < 4)
        return enc_bad(e, "tape ends inside a value", e->pos);
    *v = dk_rd32(e->tape + e->pos);
    e->pos += 4;
    return 0;
}

/* By address: see dec_f64_unsafe. */
static DK_MUST int enc_f64(pb_enc *e, double *v)
{
    uint64_t u;
    if (e->len - e->pos < 8)
        return enc_bad(e, "tape ends inside a value", e->pos);
    u = dk_rd64(e->tape + e->pos); /* one load, where a byte loop was 8 */
    memcpy(v, &u, sizeof *v);
    e->pos += 8;
    return 0;
}

/* A tape str at e->pos: its bytes (pointing into the tape), checked as
 * WTF-8. The header's flags are hints and not used: the bytes decide, as
 * in the JSON writer. */
static DK_MUST DK_INLINE int enc_str(pb_enc *e, const uint8_t **p, size_t *n)
{
    size_t at = e->pos;
    uint32_t h = 0;
    size_t len;
    DK_TRY(enc_u32(e, &h));
    len = h >> DK_STR_SHIFT;
    if (len > e->len - e->pos)
        return enc_bad(e, "tape string runs past the end of the tape", at);
    *p = e->tape + e->pos;
    *n = len;
    if (!e->trusted_text && (pb_text_scan(*p, len, NULL, NULL) & PB_TX_BAD))
        return enc_bad(e, "tape string is not WTF-8", at);
    e->pos += len;
    return 0;
}

/*
 * t's entries in a new table of ncap slots (a power of two), rehashed with
 * t->seed when rehash, else from their stored hashes; 0, or -1 when out of
 * memory.
 */
static DK_COLD int enc_tab_rebuild(pb_enc *e, pb_strtab *t, size_t ncap, int rehash)
{
    size_t i;
    pb_str_slot *s = dk_arena_alloc(e->a, ncap * sizeof *s);
    if (s == NULL)
        return -1;
    memset(s, 0, ncap * sizeof *s);
    for (i = 0; i < t->cap; i++) {
        size_t j;
        pb_str_slot sl = t->slots[i];
        if (sl.ref == 0)
            continue;
        if (rehash)
            sl.hash = pb_hash(t->seed, sl.p, sl.n);
        for (j = sl.hash & (ncap - 1); s[j].ref != 0; j = (j + 1) & (ncap - 1))
            ;
        s[j] = sl;
    }
    t->slots = s;
    t->cap = ncap;
    return 0;
}

/*
 * Look p[0..n) up in t, setting *h to its hash. Returns 1 and sets *idx
 * when present; otherwise returns 0 with *slot the empty slot where it
 * belongs (after growing the table if needed), or -1 when out of memory.
 * A probe longer than PB_PROBE_MAX reseeds the table and looks again.
 */
static DK_INLINE int enc_lookup(pb_enc *e, pb_strtab *t, const uint8_t *p, size_t n,
                                uint32_t *h, uint32_t *idx, pb_str_slot **slot)
{
    size_t mask, i, probes;
    if (DK_UNLIKELY((t->count + 1) * 2 > t->cap) &&
        enc_tab_rebuild(e, t, t->cap == 0 ? 64 : t->cap * 2, 0) != 0)
        return -1;
again:
    *h = pb_hash(t->seed, p, n);
    mask = t->cap - 1;
    probes = 0;
    for (i = *h & mask; t->slots[i].ref != 0; i = (i + 1) & mask) {
        pb_str_slot *s = &t->slots[i];
        if (s->hash == *h && s->n == n && pb_same(s->p, p, n)) {
            *idx = s->ref - 1;
            return 1;
        }
        if (DK_UNLIKELY(++probes > PB_PROBE_MAX) && t->reseeds < PB_RESEEDS) {
            t->reseeds++;
            t->seed = (t->seed + 0x9E3779B97F4A7C15u) * 0xBF58476D1CE4E5B9u;
            t->seed ^= t->seed >> 31;
            if (enc_tab_rebuild(e, t, t->cap, 1) != 0)
                return -1;
            goto again;
        }
    }
    *slot = &t->slots[i];
    return 0;
}

/* Intern a key or class key in the string table; *idx is its index. */
static DK_MUST int enc_intern(pb_enc *e, const uint8_t *p, size_t n, uint32_t *idx)
{
    uint32_t h = 0;
    pb_str_slot *slot = NULL;
    int found = enc_lookup(e, &e->key_tab, p, n, &h, idx, &slot);
    if (found < 0)
        return enc_oom(e);
    if (found)
        return 0;
    if (e->n_strs >= PB_TABLE_MAX)
        return dk_fail(e->err, DK_ERR_TOO_LARGE, "too many distinct keys", e->pos);
    DK_TRY(enc_blob(e, &e->strs, &e->n_strs, &e->cap_strs, p, n));
    slot->hash = h;
    slot->ref = (uint32_t)e->n_strs;
    slot->p = p;
    slot->n = n;
    e->key_tab.count++;
    *idx = (uint32_t)e->n_strs - 1;
    return 0;
}

/*
 * Intern a class key: compared first with the few class keys met last
 * (instances of a handful of classes alternate), looked up otherwise.
 */
static DK_MUST int enc_class_key(pb_enc *e, const uint8_t *p, size_t n, uint32_t *idx)
{
    for (unsigned j = 0; j < PB_RECENT_CLASSES; j++) {
        uint32_t r = e->recent_class[j];
        if (r != 0 && e->strs[r - 1].len == n && pb_same(e->strs[r - 1].data, p, n)) {
            *idx = r - 1;
            return 0;
        }
    }
    DK_TRY(enc_intern(e, p, n, idx));
    e->recent_class[e->recent_next++ % PB_RECENT_CLASSES] = *idx + 1;
    return 0;
}

/* Every ASCII byte, for one_char's texts entries. */
static const uint8_t pb_ascii[128] = {
    0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,  15,
    16,  17,  18,  19,  20,  21,  22,  23,  24,  25,  26,  27,  28,  29,  30,  31,
    32,  33,  34,  35,  36,  37,  38,  39,  40,  41,  42,  43,  44,  45,  46,  47,
    48,  49,  50,  51,  52,  53,  54,  55,  56,  57,  58,  59,  60,  61,  62,  63,
    64,  65,  66,  67,  68,  69,  70,  71,  72,  73,  74,  75,  76,  77,  78,  79,
    80,  81,  82,  83,  84,  85,  86,  87,  88,  89,  90,  91,  92,  93,  94,  95,
    96,  97,  98,  99,  100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111,
    112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127};

/*
 * A string value: KIND_STRING with a new texts entry, or, when it has at
 * most PB_REF_MAX_BYTES bytes, KIND_STRING_REF naming the first texts entry
 * with the same bytes when its index takes fewer bytes than the string
 * would (tag + length + bytes). Which one is a function of the tape, so the
 * output stays canonical.
 */
static DK_MUST int enc_string(pb_enc *e, const uint8_t *p, size_t n, int scratch)
{
    uint32_t h = 0, idx = 0;
    pb_str_slot *slot = NULL;
    int found = 0;
    if (n == 1 && p[0] < 0x80 && e->one_char[p[0]] != 0) {
        /* idx < 255: a reference is 1 byte, the string 3 */
        DK_TRY(enc_kind(e, DARMOK__KIND__KIND_STRING_REF));
        return enc_count(e, e->one_char[p[0]] - 1u);
    }
    if (n == 1 && p[0] < 0x80 && e->n_texts < 255) {
        /* Its first time: one met before is in one_char, or in text_tab
         * at an index of 255 or more, past n_texts. The entry points at a
         * static copy of the byte (p may be a STR16's scratch). */
        unsigned c = p[0];
        e->one_char[c] = (uint8_t)(e->n_texts + 1);
        DK_TRY(enc_kind(e, DARMOK__KIND__KIND_STRING));
        return enc_blob(e, &e->texts, &e->n_texts, &e->cap_texts, pb_ascii + c, 1);
    }
    if (n <= PB_REF_MAX_BYTES)
        found = enc_lookup(e, &e->text_tab, p, n, &h, &idx, &slot);
    if (found < 0)
        return enc_oom(e);
    if (found && pb_varint_size(idx) < 1 + pb_varint_size(n) + n) {
        DK_TRY(enc_kind(e, DARMOK__KIND__KIND_STRING_REF));
        return enc_count(e, idx);
    }
    if (e->n_texts >= PB_TABLE_MAX)
        return dk_fail(e->err, DK_ERR_TOO_LARGE, "too many strings", e->pos);
    if (scratch) {
        /* p is the scratch a DK_T_STR16 was made WTF-8 in: the entry points
         * at the earlier copy of these bytes, or at a copy made now */
        if (found) {
            p = e->texts[idx].data;
        } else {
            uint8_t *q = dk_arena_alloc(e->a, n + 1);
            if (q == NULL)
                return enc_oom(e);
            memcpy(q, p, n);
            p = q;
        }
    }
    if (slot != NULL) { /* new, and short enough to be referred to again */
        slot->hash = h;
        slot->ref = (uint32_t)e->n_texts + 1;
        slot->p = p;
        slot->n = n;
        e->text_tab.count++;
    }
    DK_TRY(enc_kind(e, DARMOK__KIND__KIND_STRING));
    return enc_blob(e, &e->texts, &e->n_texts, &e->cap_texts, p, n);
}

/* Intern a shape; *out is its index. keys may be moved by later pushes, so
 * a new shape copies them. */
static DK_MUST int enc_shape(pb_enc *e, uint32_t class_key, uint32_t version,
                             const uint32_t *keys, size_t n, uint32_t *out)
{
    uint32_t h = pb_hash(e->seed, (const uint8_t *)keys, n * sizeof *keys) ^ (class_key * 0x9E3779B1u) ^
                 (version * 0x85EBCA77u);
    size_t mask, i;
    Darmok__Shape *s;

    if ((e->n_shapes + 1) * 2 > e->shape_tab_cap) {
        size_t ncap = e->shape_tab_cap == 0 ? 32 : e->shape_tab_cap * 2;
        pb_shape_slot *t = dk_arena_alloc(e->a, ncap * sizeof *t);
        if (t == NULL)
            return enc_oom(e);
        memset(t, 0, ncap * sizeof *t);
        for (i = 0; i < e->shape_tab_cap; i++) {
            pb_shape_slot sl = e->shape_tab[i];
            size_t j;
            if (sl.ref == 0)
                continue;
            for (j = sl.hash & (ncap - 1); t[j].ref != 0; j = (j + 1) & (ncap - 1))
                ;
            t[j] = sl;
        }
        e->shape_tab = t;
        e->shape_tab_cap = ncap;
    }
    mask = e->shape_tab_cap - 1;
    for (i = h & mask; e->shape_tab[i].ref != 0; i = (i + 1) & mask) {
        const Darmok__Shape *c = e->shapes[e->shape_tab[i].ref - 1];
        if (e->shape_tab[i].hash == h && c->class_key == class_key &&
            c->version == version && c->n_fields == n &&
            (n == 0 || memcmp(c->fields, keys, n * sizeof *keys) == 0)) {
            *out = e->shape_tab[i].ref - 1;
            return 0;
        }
    }
    if (e->n_shapes >= PB_TABLE_MAX)
        return dk_fail(e->err, DK_ERR_TOO_LARGE, "too many distinct shapes", e->pos);
    s = dk_arena_alloc(e->a, sizeof *s);
    {
        void *arr = pb_more(e->a, e->shapes, e->n_shapes, &e->cap_shapes, sizeof *e->shapes);
        if (s == NULL || arr == NULL)
            return enc_oom(e);
        e->shapes = arr;
    }
    darmok__shape__init(s);
    s->class_key = class_key;
    s->version = version;
    s->n_fields = n;
    if (n != 0) {
        s->fields = dk_arena_alloc(e->a, n * sizeof *keys);
        if (s->fields == NULL)
            return enc_oom(e);
        memcpy(s->fields, keys, n * sizeof *keys);
    }
    e->shapes[e->n_shapes] = s;
    e->shape_tab[i].hash = h;
    e->shape_tab[i].ref = (uint32_t)e->n_shapes + 1;
    *out = (uint32_t)e->n_shapes++;
    return 0;
}

/* Open a container: its frame, and for records a counts entry for the
 * shape index, filled in when the record closes. */
static DK_MUST int enc_push(pb_enc *e, uint8_t op, uint64_t n, size_t at, uint32_t class_key,
                            uint32_t version)
{
    pb_enc_frame *f;
    int rec = op == DK_T_OBJECT || op == DK_T_NULLPROTO || op == DK_T_INSTANCE || op == DK_T_ERROR;
    if (e->n_frames >= e->max_depth)
        return dk_fail(e->err, DK_ERR_DEPTH, "nesting deeper than max_depth", at);
    if (e->n_frames == e->cap_frames) {
        void *arr = pb_more(e->a, e->frames, e->n_frames, &e->cap_frames, sizeof *e->frames);
        if (arr == NULL)
            return enc_oom(e);
        e->frames = arr;
    }
    f = &e->frames[e->n_frames++];
    f->op = op;
    f->left = n;
    f->total = n;
    f->kbase = e->n_keys;
    f->shape_slot = e->n_counts;
    f->class_key = class_key;
    f->version = version;
    f->guess = 0;
    if (op == DK_T_INSTANCE && class_key < e->cap_class_shape) {
        uint32_t g = e->class_shape[class_key];
        if (g != 0 && e->shapes[g - 1]->version == version)
            f->guess = g;
    }
    if (rec)
        return enc_count(e, 0);
    return enc_count(e, op == DK_T_MAP ? (uint32_t)(n / 2) : (uint32_t)n);
}

/* A value with identity: it takes the next REF index. */
static DK_MUST DK_INLINE int enc_ident(pb_enc *e, Darmok__Kind k)
{
    if (e->n_refs == UINT32_MAX)
        return dk_fail(e->err, DK_ERR_TOO_LARGE, "too many objects", e->pos);
    e->n_refs++;
    return enc_kind(e, k);
}

/*
 * Read the value at e->pos and append it to the streams. Containers are
 * opened (a frame is pushed) and their children left to enc_run.
 */
static DK_MUST int enc_value(pb_enc *e)
{
    size_t at = e->pos;
    uint8_t op = 0;
    uint32_t u = 0, n = 0;

    DK_TRY(enc_u8(e, &op));
    switch (op) {
    case DK_T_UNDEF:
        return enc_kind(e, DARMOK__KIND__KIND_UNDEFINED);
    case DK_T_NULL:
        return enc_kind(e, DARMOK__KIND__KIND_NULL);
    case DK_T_FALSE:
        return enc_kind(e, DARMOK__KIND__KIND_FALSE);
    case DK_T_TRUE:
        return enc_kind(e, DARMOK__KIND__KIND_TRUE);
    case DK_T_INT:
        DK_TRY(enc_u32(e, &u));
        DK_TRY(enc_kind(e, DARMOK__KIND__KIND_INT));
        return enc_int(e, (int32_t)u);
    case DK_T_F64: {
        double x;
        DK_TRY(enc_f64(e, &x));
        pb_nan_canon(&x);
        DK_TRY(enc_kind(e, DARMOK__KIND__KIND_NUMBER));
        ENC_ROOM(e, e->nums, e->n_nums, e->cap_nums);
        memcpy(&e->nums[e->n_nums++], &x, sizeof x);
        return 0;
    }
    case DK_T_BIGINT:
    case DK_T_STR: {
        const uint8_t *p = NULL;
        size_t len = 0;
        DK_TRY(enc_str(e, &p, &len));
        if (op == DK_T_STR)
            return enc_string(e, p, len, 0);
        if (!dk_bigint_ok(p, len))
            return enc_bad(e, "tape BigInt is not a decimal integer", at);
        DK_TRY(enc_kind(e, DARMOK__KIND__KIND_BIGINT));
        return enc_blob(e, &e->texts, &e->n_texts, &e->cap_texts, p, len);
    }
    case DK_T_STR16: {
        const uint8_t *p = NULL;
        size_t len = 0;
        DK_TRY(enc_u32(e, &u));
        DK_TRY(dk_str16_wtf8(e->tape + e->pos, e->len - e->pos, u, at, e->a, &e->str16, &p,
                             &len, e->err));
        e->pos += (size_t)u * 2;
        return enc_string(e, p, len, 1); /* p: valid until the next STR16 */
    }
    case DK_T_ARRAY:
        DK_TRY(enc_u32(e, &n));
        DK_TRY(enc_ident(e, DARMOK__KIND__KIND_ARRAY));
        return enc_push(e, op, n, at, 0, 0);
    case DK_T_OBJECT:
    case DK_T_NULLPROTO:
    case DK_T_ERROR:
        DK_TRY(enc_u32(e, &n));
        if (op == DK_T_ERROR && n < 2)
            return enc_bad(e, "tape Error must start with name and message", at);
        DK_TRY(enc_ident(e, op == DK_T_OBJECT      ? DARMOK__KIND__KIND_OBJECT
                            : op == DK_T_NULLPROTO ? DARMOK__KIND__KIND_NULL_PROTO
                                                   : DARMOK__KIND__KIND_ERROR));
        return enc_push(e, op, n, at, 0, 0);
    case DK_T_MAP:
        DK_TRY(enc_u32(e, &n));
        DK_TRY(enc_ident(e, DARMOK__KIND__KIND_MAP));
        return enc_push(e, op, (uint64_t)n * 2, at, 0, 0);
    case DK_T_SET:
        DK_TRY(enc_u32(e, &n));
        DK_TRY(enc_ident(e, DARMOK__KIND__KIND_SET));
        return enc_push(e, op, n, at, 0, 0);
    case DK_T_INSTANCE: {
        const uint8_t *p = NULL;
        size_t len = 0;
        uint32_t key = 0, version = 0;
        DK_TRY(enc_str(e, &p, &len));
        DK_TRY(enc_class_key(e, p, len, &key));
        DK_TRY(enc_u32(e, &version));
        if (version == 0)
            return enc_bad(e, "tape instance version is 0", at);
        DK_TRY(enc_u32(e, &n));
        DK_TRY(enc_ident(e, DARMOK__KIND__KIND_INSTANCE));
        return enc_push(e, op, n, at, key, version);
    }
    case DK_T_DATE: {
        double ms;
        DK_TRY(enc_f64(e, &ms));
        /* As the JSON writer: a time value or NaN; 0 for -0, so that both
         * formats carry the same dates bit for bit. */
        if (!pb_date_canon(&ms))
            return enc_bad(e, "date out of range or not an integer", at);
        if (isnan(ms))
            return enc_ident(e, DARMOK__KIND__KIND_INVALID_DATE);
        DK_TRY(enc_ident(e, DARMOK__KIND__KIND_DATE));
        return enc_int(e, (int64_t)ms);
    }
    case DK_T_REGEXP: {
        const uint8_t *p = NULL, *fp = NULL;
        size_t len = 0, flen = 0;
        DK_TRY(enc_str(e, &p, &len));
        DK_TRY(enc_str(e, &fp, &flen));
        DK_TRY(enc_ident(e, DARMOK__KIND__KIND_REGEXP));
        DK_TRY(enc_blob(e, &e->texts, &e->n_texts, &e->cap_texts, p, len));
        return enc_blob(e, &e->texts, &e->n_texts, &e->cap_texts, fp, flen);
    }
    case DK_T_BYTES: {
        uint8_t kind = 0;
        const uint8_t *data;
        DK_TRY(enc_u8(e, &kind));
        DK_TRY(enc_u32(e, &n));
        if (kind >= DK_BYTES_KIND_COUNT)
            return enc_bad(e, "tape binary kind unknown", at);
        if (n % dk_bytes_size[kind] != 0)
            return enc_bad(e, "tape binary length not a multiple of its element size", at);
        if (n > e->len - e->pos)
            return enc_bad(e, "tape binary runs past the end of the tape", at);
        data = e->tape + e->pos;
        e->pos += n;
        DK_TRY(enc_ident(e, DARMOK__KIND__KIND_BINARY));
        if (e->n_bkinds == e->cap_bkinds) {
            void *p = pb_more(e->a, e->bkinds, e->n_bkinds, &e->cap_bkinds, sizeof *e->bkinds);
            if (p == NULL)
                return enc_oom(e);
            e->bkinds = p;
        }
        e->bkinds[e->n_bkinds++] = (Darmok__BinaryKind)kind;
        return enc_blob(e, &e->bins, &e->n_bins, &e->cap_bins, data, n);
    }
    case DK_T_REF:
        DK_TRY(enc_u32(e, &u));
        if (u >= e->n_refs)
            return enc_bad(e, "tape REF points forward", at);
        DK_TRY(enc_kind(e, DARMOK__KIND__KIND_REF));
        return enc_count(e, u);
    case DK_T_HOLE:
        return enc_bad(e, "tape HOLE outside an array", at);
    default:
        return enc_bad(e, "unknown tape op", at);
    }
}

static int enc_is(const uint8_t *p, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    return n == k && memcmp(p, lit, k) == 0;
}

static int enc_is_record(uint8_t op)
{
    return op == DK_T_OBJECT || op == DK_T_NULLPROTO || op == DK_T_INSTANCE || op == DK_T_ERROR;
}

/* Remember shape as the last one of class key `key` (see class_shape). */
static DK_MUST int enc_class_shape(pb_enc *e, uint32_t key, uint32_t shape)
{
    while (key >= e->cap_class_shape) {
        size_t old = e->cap_class_shape;
        uint32_t *t = pb_more(e->a, e->class_shape, old, &e->cap_class_shape, sizeof *t);
        if (t == NULL)
            return enc_oom(e);
        memset(t + old, 0, (e->cap_class_shape - old) * sizeof *t); /* 0: no shape yet */
        e->class_shape = t;
    }
    e->class_shape[key] = shape + 1;
    return 0;
}

/* Close the top frame; a record gets its shape. */
static DK_MUST int enc_close(pb_enc *e)
{
    pb_enc_frame *f = &e->frames[e->n_frames - 1];
    if (enc_is_record(f->op)) {
        uint32_t shape = 0;
        size_t nk = e->n_keys - f->kbase;
        if (f->guess != 0 && e->shapes[f->guess - 1]->n_fields == nk) {
            shape = f->guess - 1; /* the same class, version and keys */
        } else {
            DK_TRY(enc_shape(e, f->class_key, f->version, nk ? e->keys + f->kbase : NULL, nk, &shape));
            if (f->op == DK_T_INSTANCE)
                DK_TRY(enc_class_shape(e, f->class_key, shape));
        }
        e->counts[f->shape_slot] = shape;
        e->n_keys = f->kbase;
    }
    e->n_frames--;
    return 0;
}

/*
 * First capacities of the main streams, in one arena block: each from what
 * the tape's length allows (a value takes at least 1 tape byte, a count 5,
 * an int 5, a number 9, a text or key 4), at most PB_PREALLOC entries. A
 * small document then never grows an array; starting each at 16 and
 * doubling was ~10 arena calls and copies for the Foo graph: 10% of its
 * native write, 15% of the deep graph's. The block is 15 KiB at most (11
 * on wasm32), cut from the call's arena and untouched beyond what is used.
 * Streams a document may well not use (binaries, shapes) stay lazy.
 * Failing here is not an error: the streams then grow as before.
 */
#define PB_PREALLOC 256u

static void enc_prealloc(pb_enc *e)
{
    size_t l = e->len, nk, nc, ni, nn, nt, ns, nkeys, bytes;
    uint8_t *m;
#define PB_CAP(x) ((x) < PB_PREALLOC ? (x) : PB_PREALLOC)
    nk = PB_CAP(l);
    nc = PB_CAP(l / 5);
    ni = PB_CAP(l / 5);
    nn = PB_CAP(l / 9);
    nt = PB_CAP(l / 4);
    ns = PB_CAP(l / 4);
    nkeys = PB_CAP(l / 4);
#undef PB_CAP
    /* largest elements first: every array stays aligned */
    bytes = (nt + ns) * sizeof(ProtobufCBinaryData) + ni * sizeof(int64_t) + nn * sizeof(double) +
            nk * sizeof(Darmok__Kind) + nc * sizeof(uint32_t) + nkeys * sizeof(uint32_t);
    m = dk_arena_alloc(e->a, bytes);
    if (m == NULL)
        return;
    /* each array its n entries of the block, in the order summed above */
#define PB_CARVE(arr, cap, n) ((arr) = (void *)m, (cap) = (n), m += (n) * sizeof *(arr))
    PB_CARVE(e->texts, e->cap_texts, nt);
    PB_CARVE(e->strs, e->cap_strs, ns);
    PB_CARVE(e->ints, e->cap_ints, ni);
    PB_CARVE(e->nums, e->cap_nums, nn);
    PB_CARVE(e->kinds, e->cap_kinds, nk);
    PB_CARVE(e->counts, e->cap_counts, nc);
    PB_CARVE(e->keys, e->cap_keys, nkeys);
#undef PB_CARVE
}

/* Walk the children of the open containers until all are closed. */
static DK_MUST int enc_run(pb_enc *e)
{
    while (e->n_frames > 0) {
        pb_enc_frame *f = &e->frames[e->n_frames - 1];

        if (f->left == 0) {
            DK_TRY(enc_close(e));
            continue;
        }
        if (f->op == DK_T_ARRAY && e->pos < e->len && e->tape[e->pos] == DK_T_HOLE) {
            size_t at = e->pos++;
            uint32_t k = 0;
            DK_TRY(enc_u32(e, &k));
            if (k == 0 || k > f->left)
                return enc_bad(e, "tape HOLE count is 0 or past the array's length", at);
            f->left -= k;
            DK_TRY(enc_kind(e, DARMOK__KIND__KIND_HOLES));
            DK_TRY(enc_count(e, k));
            continue;
        }
        if (enc_is_record(f->op)) {
            const uint8_t *p = NULL;
            size_t len = 0, at = e->pos;
            uint32_t key;
            uint64_t i = f->total - f->left;
            DK_TRY(enc_str(e, &p, &len));
            if (f->op == DK_T_ERROR && ((i == 0 && !enc_is(p, len, "name")) ||
                                        (i == 1 && !enc_is(p, len, "message"))))
                return enc_bad(e, "tape Error must start with name and message", at);
            if (f->guess != 0) {
                /* the key the class's last shape has here: the same bytes
                 * are the same strs entry, no lookup needed */
                const Darmok__Shape *g = e->shapes[f->guess - 1];
                const ProtobufCBinaryData *k = i < g->n_fields ? &e->strs[g->fields[i]] : NULL;
                if (k != NULL && k->len == len && pb_same(k->data, p, len)) {
                    key = g->fields[i];
                } else {
                    f->guess = 0;
                    DK_TRY(enc_intern(e, p, len, &key));
                }
            } else {
                DK_TRY(enc_intern(e, p, len, &key));
            }
            ENC_ROOM(e, e->keys, e->n_keys, e->cap_keys);
            e->keys[e->n_keys++] = key;
        }
        f->left--;
        /* enc_value may push frames (moving e->frames): f is dead now. */
        DK_TRY(enc_value(e));
    }
    return 0;
}

/*
 * An upper bound on doc's packed size, from its counts and its byte
 * fields' lengths: what the output needs reserved for protobuf-c to pack
 * into. protobuf_c_message_get_packed_size would give the exact size, but
 * by a pass of its own over every field and stream element: a tenth of
 * the write of one Post, a quarter of a small document's (native, clang
 * -O3). Each item is taken at its longest: a tag 1 byte (field numbers
 * are below 16), a length or uint32 5, a sint64 10, a double 8; Kind and
 * BinaryKind values are the encoder's own, 0..127, 1 byte. In 64 bits:
 * it cannot wrap for any document wasm32 (or a native build) can hold.
 * Test and fuzz builds (DK_CHECK_PB_BOUND) compare it with the exact size
 * before every pack, and abort when it is lower. The bound holds only
 * while protoc-c packs every repeated scalar and enum field (proto3's
 * default; darmok.proto relies on it for size anyway).
 *
 * It is up to 5.5 times the exact size (small ints), and the output
 * buffer keeps its largest size from call to call: past PB_BOUND_MAX the
 * exact size is asked for instead, where that pass costs little against
 * the rest of the write (100 Posts: no difference measured).
 */
static uint64_t pb_bound(const Darmok__Document *doc)
{
    uint64_t n = 6 + 5 * 11; /* format; each packed stream's tag and length */
    size_t i;

    n += (uint64_t)doc->n_kinds + doc->n_binary_kinds + 5 * (uint64_t)doc->n_counts +
         10 * (uint64_t)doc->n_ints + 8 * (uint64_t)doc->n_numbers;
    for (i = 0; i < doc->n_strings; i++) n += 6 + (uint64_t)doc->strings[i].len;
    for (i = 0; i < doc->n_texts; i++) n += 6 + (uint64_t)doc->texts[i].len;
    for (i = 0; i < doc->n_binaries; i++) n += 6 + (uint64_t)doc->binaries[i].len;
    /* a shape: its tag and length, class_key, version, fields' tag and
     * length, 5 a field */
    for (i = 0; i < doc->n_shapes; i++) n += 24 + 5 * (uint64_t)doc->shapes[i]->n_fields;
    return n;
}

/* Tape -> Document bytes; see darmok.h. */
int dk_pb_write_opts(const uint8_t *tape, size_t len, const dk_limits *lim,
                     dk_arena *scratch, dk_buf *out, dk_err *err)
{
    return dk_pb_write_ex(tape, len, lim, 0, scratch, out, err);
}

/* See dk_internal.h. */
int dk_pb_write_ex(const uint8_t *tape, size_t len, const dk_limits *lim, uint32_t flags,
                   dk_arena *scratch, dk_buf *out, dk_err *err)
{
    pb_enc e;
    Darmok__Document doc = DARMOK__DOCUMENT__INIT;
    uint64_t bound;
    size_t size, packed;

    err->code = DK_OK; /* zeroed now; the first failure fills it */
    err->msg = NULL;
    err->pos = 0;

    out->len = 0;
    memset(&e, 0, sizeof e);
    e.a = scratch;
    e.err = err;
    e.tape = tape;
    e.len = len;
    e.max_depth = dk_max_depth(lim);
    e.seed = lim != NULL ? lim->hash_seed : 0;
    e.key_tab.seed = e.seed;
    e.text_tab.seed = e.seed ^ 0x2545F4914F6CDD1Du;
    e.trusted_text = (flags & DK_WRITE_TRUSTED_TEXT) != 0;
    enc_prealloc(&e);

    if (enc_value(&e) != DK_OK || enc_run(&e) != DK_OK)
        return (int)err->code;
    if (e.pos != e.len)
        return enc_bad(&e, "bytes after the tape's value", e.pos);
    doc.format = DK_PB_FORMAT;
    doc.n_strings = e.n_strs;
    doc.strings = e.strs;
    doc.n_shapes = e.n_shapes;
    doc.shapes = e.shapes;
    doc.n_kinds = e.n_kinds;
    doc.kinds = e.kinds;
    doc.n_counts = e.n_counts;
    doc.counts = e.counts;
    doc.n_ints = e.n_ints;
    doc.ints = e.ints;
    doc.n_numbers = e.n_nums;
    doc.numbers = e.nums;
    doc.n_texts = e.n_texts;
    doc.texts = e.texts;
    doc.n_binary_kinds = e.n_bkinds;
    doc.binary_kinds = e.bkinds;
    doc.n_binaries = e.n_bins;
    doc.binaries = e.bins;

    /* protobuf-c sizes and packs by recursion over the schema's two
     * levels, never over the graph. Room for the bound (pb_bound) while
     * it is small; the exact size past that. */
    bound = pb_bound(&doc);
    if (bound <= PB_BOUND_MAX) {
        size = (size_t)bound;
#ifdef DK_CHECK_PB_BOUND
        /* a test or fuzz build's assertion, which no caller can take for
         * an ordinary failure */
        if (darmok__document__get_packed_size(&doc) > size)
            abort();
#endif
    } else {
        size = darmok__document__get_packed_size(&doc);
        if (size > DK_PB_MAX_OUT)
            return dk_fail(err, DK_ERR_TOO_LARGE, "protobuf output too large", 0);
    }
    DK_TRY(dk_buf_reserve(out, size, err, 0));
    packed = darmok__document__pack(&doc, out->data);
    if (packed > size)
        return dk_fail(err, DK_ERR_MEMORY, "protobuf-c packed an unexpected size", 0);
    out->len = packed;
    return DK_OK;
}

/* ===================================================================== */
/* 4. Decoder                                                             */
/* ===================================================================== */

/* Deepest message nesting the schema allows is 2 (Document > Shape); a
 * margin for future revisions. */
#define PB_SCAN_NEST 4

typedef struct pb_dec_frame {
    Darmok__Kind kind;          /* the container's Kind */
    const Darmok__Shape *shape; /* records */
    uint64_t left;              /* array: slots; records, set: values; map: 2 x pairs */
    size_t field;               /* records: the next field */
    size_t ki;                  /* its kinds index, for errors */
} pb_dec_frame;

typedef struct pb_dec {
    dk_arena *a;
    dk_err *err;
    dk_buf *out;
    const uint8_t *in;
    size_t len;
    uint32_t max_depth;
    uint32_t max_length; /* counts: array slots, Map/Set sizes, members */
    uint32_t max_str;    /* bytes entries: max_length, capped by the tape */
    size_t max_out; /* tape bytes allowed: the amplification bound */
    size_t room_end; /* the tape length both the budget and out's capacity
                      * allow: min(out->cap, max_out); out->len never
                      * passes it (dec_room_set) */
    dk_buf *u16;    /* UTF-16 side table (dk_pb_read_ex), or NULL; not
                     * charged to max_out (dec_entry_room) */
    uint32_t *key_js; /* DK_READ_KEYREFS: per strings entry, its member key
                       * index once written in full (UINT32_MAX before) */
    uint32_t n_keys;  /* member keys written in full */

    const Darmok__Document *doc;
    uint8_t *str_f;  /* tape str flags of each strings entry */
    uint8_t *text_f; /* and of each texts entry, once dec_text read it */

    /* Stream cursors: the next entry of each. */
    size_t ki, ci, ii, ni, ti, bki, bi;
    uint32_t n_refs; /* values with identity met so far */
    uint32_t keep;   /* the highest REF index so far + 1; 0: none */
    pb_dec_frame *frames;
    size_t n_frames, cap_frames;
} pb_dec;

static int dec_fail(pb_dec *d, dk_code code, const char *msg, size_t at)
{
    return dk_fail(d->err, code, msg, at);
}

/* Parse a varint of at most max bytes at in[*pos..end). 0: ok, *pos past it. */
static int pb_varint(const uint8_t *in, size_t *pos, size_t end, unsigned max, uint64_t *v)
{
    uint64_t r = 0;
    unsigned i;
    /* one byte: nearly every tag and length of a document */
    if (*pos < end && in[*pos] < 0x80) {
        *v = in[(*pos)++];
        return 0;
    }
    for (i = 0; i < max && *pos + i < end; i++) {
        uint8_t b = in[*pos + i];
        r |= (uint64_t)(b & 0x7F) << (7 * i);
        if ((b & 0x80) == 0) {
            *pos += i + 1;
            *v = r;
            return 0;
        }
    }
    return -1;
}

static int pb_is_varint_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_INT32 || t == PROTOBUF_C_TYPE_SINT32 ||
           t == PROTOBUF_C_TYPE_UINT32 || t == PROTOBUF_C_TYPE_INT64 ||
           t == PROTOBUF_C_TYPE_SINT64 || t == PROTOBUF_C_TYPE_UINT64 ||
           t == PROTOBUF_C_TYPE_BOOL || t == PROTOBUF_C_TYPE_ENUM;
}

static int pb_is_fixed32_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_FIXED32 || t == PROTOBUF_C_TYPE_SFIXED32 ||
           t == PROTOBUF_C_TYPE_FLOAT;
}

static int pb_is_fixed64_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_FIXED64 || t == PROTOBUF_C_TYPE_SFIXED64 ||
           t == PROTOBUF_C_TYPE_DOUBLE;
}

/*
 * A varint v for a 32-bit field. protobuf-c keeps the low 32 bits of a
 * longer one without a word; we refuse it instead, except the sign-extended
 * 10-byte form protobuf writes for a negative int32 or enum.
 */
static int pb_fits_32(ProtobufCType t, uint64_t v)
{
    if (t == PROTOBUF_C_TYPE_UINT32 || t == PROTOBUF_C_TYPE_SINT32 || t == PROTOBUF_C_TYPE_BOOL)
        return v <= UINT32_MAX;
    if (t == PROTOBUF_C_TYPE_INT32 || t == PROTOBUF_C_TYPE_ENUM)
        return v <= UINT32_MAX || v >= 0xFFFFFFFF80000000u;
    return 1;
}

/*
 * The descriptor of field `id` of desc, or NULL. Generated descriptors list
 * fields by number, so for a schema numbered 1, 2, 3... (ours) field id is
 * at index id - 1, checked; protobuf-c's lookup (a binary search over
 * ranges, and a call) otherwise. That lookup was 5% of decoding the Foo
 * graph natively, once per tag.
 */
static const ProtobufCFieldDescriptor *pb_field(const ProtobufCMessageDescriptor *desc,
                                                uint64_t id)
{
    if (id - 1 < desc->n_fields && desc->fields[id - 1].id == id)
        return &desc->fields[id - 1];
    return protobuf_c_message_descriptor_get_field(desc, (unsigned)id);
}

/*
 * Check the wire bytes against the descriptors, as protobuf-c will read
 * them, before protobuf-c does: every tag, varint and length in bounds, wire
 * types matching known fields, varints of 32-bit fields in range, packed
 * runs well-formed and not empty, no groups, bytes fields at most
 * max_length bytes. (The schema has no `string` fields: protobuf-c would
 * neither check their UTF-8 nor keep a U+0000 in them.) Iterative;
 * sub-messages nest at most PB_SCAN_NEST deep.
 *
 * After this passes, protobuf-c's unpack can only fail for lack of memory.
 */
static DK_MUST int dec_scan(pb_dec *d)
{
    struct {
        const ProtobufCMessageDescriptor *desc;
        size_t end;
        uint64_t seen; /* singular message fields met, by field index */
    } st[PB_SCAN_NEST];
    size_t depth = 1, pos = 0;
    const uint8_t *in = d->in;

    st[0].desc = &darmok__document__descriptor;
    st[0].end = d->len;
    st[0].seen = 0;
    while (depth > 0) {
        const ProtobufCMessageDescriptor *desc = st[depth - 1].desc;
        size_t end = st[depth - 1].end, at = pos;
        const ProtobufCFieldDescriptor *fd;
        uint64_t tag, v;
        unsigned wt;

        if (pos == end) {
            depth--;
            continue;
        }
        if (pb_varint(in, &pos, end, 5, &tag) != 0 || tag > UINT32_MAX)
            return dec_fail(d, DK_ERR_SYNTAX, "bad protobuf tag", at);
        wt = (unsigned)(tag & 7);
        if ((tag >> 3) == 0)
            return dec_fail(d, DK_ERR_SYNTAX, "protobuf field number 0", at);
        fd = pb_field(desc, tag >> 3);

        switch (wt) {
        case 0: /* varint */
            if (pb_varint(in, &pos, end, 10, &v) != 0)
                return dec_fail(d, DK_ERR_SYNTAX, "bad protobuf varint", pos);
            if (fd != NULL && !pb_is_varint_type(fd->type))
                return dec_fail(d, DK_ERR_SYNTAX, "protobuf wire type does not match the field", at);
            if (fd != NULL && !pb_fits_32(fd->type, v))
                return dec_fail(d, DK_ERR_SYNTAX, "varint out of range for a 32-bit field", at);
            break;
        case 1: /* 64-bit */
            if (end - pos < 8)
                return dec_fail(d, DK_ERR_SYNTAX, "protobuf input ends inside a field", pos);
            if (fd != NULL && !pb_is_fixed64_type(fd->type))
                return dec_fail(d, DK_ERR_SYNTAX, "protobuf wire type does not match the field", at);
            pos += 8;
            break;
        case 5: /* 32-bit */
            if (end - pos < 4)
                return dec_fail(d, DK_ERR_SYNTAX, "protobuf input ends inside a field", pos);
            if (fd != NULL && !pb_is_fixed32_type(fd->type))
                return dec_fail(d, DK_ERR_SYNTAX, "protobuf wire type does not match the field", at);
            pos += 4;
            break;
        case 2: { /* length-delimited */
            size_t start, n;
            if (pb_varint(in, &pos, end, 5, &v) != 0)
                return dec_fail(d, DK_ERR_SYNTAX, "bad protobuf length", pos);
            if (v > (uint64_t)(end - pos))
                return dec_fail(d, DK_ERR_SYNTAX, "protobuf length runs past the end of its message", at);
            start = pos;
            n = (size_t)v;
            pos += n;
            if (fd == NULL)
                break;
            if (fd->type == PROTOBUF_C_TYPE_STRING) {
                return dec_fail(d, DK_ERR_SYNTAX, "protobuf string fields are not supported", at);
            } else if (fd->type == PROTOBUF_C_TYPE_BYTES) {
                if (n > d->max_str)
                    return dec_fail(d, DK_ERR_TOO_LARGE, "string or binary longer than max_length", at);
            } else if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
                /* A singular message field given twice is merged by
                 * protobuf-c, and 1.4.1's merge can fail. darmok never
                 * writes a field twice: refuse. */
                size_t fi = (size_t)(fd - desc->fields);
                if (fd->label != PROTOBUF_C_LABEL_REPEATED &&
                    !(fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && fi < 64) {
                    if (st[depth - 1].seen & ((uint64_t)1 << fi))
                        return dec_fail(d, DK_ERR_FORMAT, "message field given twice", at);
                    st[depth - 1].seen |= (uint64_t)1 << fi;
                }
                if (depth == PB_SCAN_NEST)
                    return dec_fail(d, DK_ERR_DEPTH, "protobuf messages nested too deeply", at);
                st[depth].desc = fd->descriptor;
                st[depth].end = pos;
                st[depth].seen = 0;
                depth++;
                pos = start;
            } else if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
                /* A packed run of scalars. Encoders never write an empty
                 * one, and protobuf-c 1.4.1 then does arithmetic on a NULL
                 * array (undefined behaviour): refuse. */
                size_t p = start, e0;
                if (n == 0)
                    return dec_fail(d, DK_ERR_FORMAT, "empty packed field", at);
                if (pb_is_varint_type(fd->type)) {
                    while (p < pos) {
                        /* A byte < 0x80 is a one-byte varint, in range
                         * for every type: most Kinds, counts and ints.
                         * Skipped a run at a time while all are. */
                        if (pos - p >= DK_PLAIN_RUN && dk_ascii_mask(in + p) == 0) {
                            p += DK_PLAIN_RUN;
                            continue;
                        }
                        e0 = p;
                        if (pb_varint(in, &p, pos, 10, &v) != 0)
                            return dec_fail(d, DK_ERR_SYNTAX, "bad varint in a packed field", e0);
                        if (!pb_fits_32(fd->type, v))
                            return dec_fail(d, DK_ERR_SYNTAX, "varint out of range for a 32-bit field", e0);
                    }
                } else if ((pb_is_fixed32_type(fd->type) && n % 4 != 0) ||
                           (pb_is_fixed64_type(fd->type) && n % 8 != 0)) {
                    return dec_fail(d, DK_ERR_SYNTAX, "packed field length is not a multiple of its element", at);
                }
            } else {
                return dec_fail(d, DK_ERR_SYNTAX, "protobuf wire type does not match the field", at);
            }
            break;
        }
        default:
            return dec_fail(d, DK_ERR_SYNTAX, "protobuf groups and wire types 6, 7 are not supported", at);
        }
    }
    return 0;
}

/*
 * The byte offset of element i of the Document's repeated field `field`, as
 * protobuf-c counted it: packed runs element by element, other occurrences
 * one each, in wire order. Only for error reports, after dec_scan has
 * passed (hence _unsafe: it trusts the wire structure, though every read is
 * still bounded). d->len when there is no such element.
 */
static size_t pb_elem_at_unsafe(const pb_dec *d, unsigned field, size_t i)
{
    const uint8_t *in = d->in;
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(&darmok__document__descriptor, field);
    size_t pos = 0, k = 0;
    while (pos < d->len) {
        size_t at = pos, end;
        uint64_t tag, v;
        if (pb_varint(in, &pos, d->len, 5, &tag) != 0)
            break;
        switch (tag & 7) {
        case 0:
            if (pb_varint(in, &pos, d->len, 10, &v) != 0)
                return d->len;
            break;
        case 1:
            pos += 8;
            break;
        case 5:
            pos += 4;
            break;
        case 2:
            if (pb_varint(in, &pos, d->len, 5, &v) != 0 || v > d->len - pos)
                return d->len;
            end = pos + (size_t)v;
            if ((tag >> 3) == field && fd != NULL && fd->label == PROTOBUF_C_LABEL_REPEATED &&
                fd->type != PROTOBUF_C_TYPE_BYTES && fd->type != PROTOBUF_C_TYPE_MESSAGE) {
                size_t step = pb_is_fixed64_type(fd->type) ? 8 : pb_is_fixed32_type(fd->type) ? 4 : 0;
                while (pos < end) {
                    if (k++ == i)
                        return pos;
                    if (step != 0)
                        pos += step;
                    else if (pb_varint(in, &pos, end, 10, &v) != 0)
                        return d->len;
                }
                continue;
            }
            pos = end;
            if ((tag >> 3) == field && k++ == i)
                return at;
            continue;
        default:
            return d->len;
        }
        if ((tag >> 3) == field && k++ == i)
            return at;
    }
    return d->len;
}

/* A document-level failure at element i of a Document field. */
static int dec_bad(pb_dec *d, dk_code code, const char *msg, unsigned field, size_t i)
{
    return dk_fail(d->err, code, msg, pb_elem_at_unsafe(d, field, i));
}

/* The same, at the Kind being decoded (d->ki has moved past it). */
static int dec_bad_here(pb_dec *d, dk_code code, const char *msg)
{
    return dec_bad(d, code, msg, PB_F_KINDS, d->ki - 1);
}

/* --- tape output ------------------------------------------------------- */

/* n more tape bytes within max_out (<= DK_PB_MAX_OUT): a document whose
 * string table or back-references make it expand past that fails here. */
static DK_MUST int dec_budget(pb_dec *d, size_t n)
{
    size_t used = d->out->len;
    if (used > d->max_out || n > d->max_out - used)
        return dec_bad_here(d, DK_ERR_TOO_LARGE,
                            "decoded document too large for its size (string table amplification)");
    return DK_OK;
}

/* d->room_end again, after out's capacity changed. out->len <= room_end
 * holds after: out->len <= out->cap, and out->len <= max_out (dec_budget
 * was checked for every byte written). */
static void dec_room_set(pb_dec *d)
{
    d->room_end = d->out->cap < d->max_out ? d->out->cap : d->max_out;
}

/* dec_room's step when the budget or the capacity may be short: the
 * checks again, in their order, and the failure or the growth. */
static DK_COLD DK_MUST int dec_room_slow(pb_dec *d, size_t n)
{
    DK_TRY(dec_budget(d, n));
    if (d->out->cap - d->out->len < n)
        DK_TRY(dk_buf_reserve(d->out, n, d->err, 0));
    dec_room_set(d);
    return DK_OK;
}

/* Room for n more tape bytes, within the budget. Every value asks, so the
 * common case (within both: one comparison against room_end, where the two
 * checks were six loads and three branches) is inline and the rest a
 * call. */
static DK_MUST DK_INLINE int dec_room(pb_dec *d, size_t n)
{
    if (n <= d->room_end - d->out->len)
        return DK_OK;
    return dec_room_slow(d, n);
}

/* Writers below assume dec_room was called for their bytes. */
static DK_INLINE void dec_u8_unsafe(pb_dec *d, unsigned v)
{
    d->out->data[d->out->len++] = (uint8_t)v;
}

static DK_INLINE void dec_u32_unsafe(pb_dec *d, uint32_t v)
{
    dk_wr32(d->out->data + d->out->len, v);
    d->out->len += 4;
}

/* Doubles travel by address, never by value: on i386 a double passed by
 * value may go through the x87 stack, which changes bits, and the tape
 * promises every bit pattern survives (NaN's aside: the number Kind makes
 * every NaN the canonical one before it gets here; dates have their own
 * canonical form). */
static DK_INLINE void dec_f64_unsafe(pb_dec *d, const double *x)
{
    uint64_t u;
    uint8_t *p = d->out->data + d->out->len; /* once: a byte store may alias d->out */
    memcpy(&u, x, sizeof u);
    dk_wr64(p, u);
    d->out->len += 8;
}

static DK_MUST DK_INLINE int dec_op(pb_dec *d, unsigned op)
{
    DK_TRY(dec_room(d, 1));
    dec_u8_unsafe(d, op);
    return 0;
}

static DK_MUST DK_INLINE int dec_op_u32(pb_dec *d, unsigned op, uint32_t v)
{
    DK_TRY(dec_room(d, 5));
    dec_u8_unsafe(d, op);
    dec_u32_unsafe(d, v);
    return 0;
}

static DK_MUST DK_INLINE int dec_op_f64(pb_dec *d, unsigned op, const double *x)
{
    DK_TRY(dec_room(d, 9));
    dec_u8_unsafe(d, op);
    dec_f64_unsafe(d, x);
    return 0;
}

/* The tape str (header + bytes) of b, flags f, in room dec_room made.
 * protobuf-c's copy of the bytes is in the arena (pb_pc_alloc): readable
 * DK_ARENA_SLACK bytes past its end, so a short one goes as 16 bytes. */
static DK_INLINE void dec_str_unsafe(pb_dec *d, const ProtobufCBinaryData *b, unsigned f)
{
    dec_u32_unsafe(d, (uint32_t)b->len << DK_STR_SHIFT | f);
    if (b->len != 0)
        dk_put_short(d->out, b->data, b->len, b->len + DK_ARENA_SLACK);
}

/*
 * Side-table entries (dk_pb_read_ex) are made in two steps: memory for the
 * largest entry a str of len bytes can need (8 + 2 len) past the table's
 * end, where its units are written; then the entry is committed at its
 * real size.
 *
 * Entries are not charged to max_out: they only save JS work (it makes
 * every string from the tape bytes without them), so they must not fail
 * a document that decodes without them. Charged, they failed documents
 * darmok itself writes: a string reference is ~2 bytes of protobuf and
 * the encoder shares strings of up to 64 bytes, so one 60-byte string
 * 20,000 times (40 KB) asked for 3.9 MB of tape and table where the
 * default bound allows 3.6 MB (its tape: 1.3 MB). The table has a bound
 * of its own instead, half of max_out (PB_U16_SHARE): a str whose entry
 * could pass it gets none (*units_at NULL), and JS makes it from its
 * bytes. Without it, hostile input (a text and 100,000 references to
 * it) took up to three times the bound in WebAssembly memory: 1.2 MB of
 * input 522 MB, where 138 MB when the table was charged.
 */
#define PB_U16_SHARE 2
static DK_MUST int dec_entry_room(pb_dec *d, size_t len, uint8_t **units_at)
{
    dk_buf *u = d->u16;
    size_t cap = d->max_out / PB_U16_SHARE;
    *units_at = NULL;
    if (cap < 8 || len > (cap - 8) / 2 || u->len > cap - 8 - 2 * len)
        return 0;
    if (u->cap - u->len < 8 + 2 * len)
        DK_TRY(dk_buf_reserve(u, 8 + 2 * len, d->err, 0));
    *units_at = u->data + u->len + 8;
    return 0;
}

/* Commit the entry of the str at tape offset at, whose units are written. */
static void dec_entry_commit(pb_dec *d, size_t at, size_t units)
{
    dk_buf *u = d->u16;
    dk_wr32(u->data + u->len, (uint32_t)at);
    dk_wr32(u->data + u->len + 4, (uint32_t)units);
    u->len += 8 + 2 * units;
}

/* A tape str (header + bytes), and its side-table entry when it is not
 * ASCII and a table is made; f: its tape flags. b->len is at most
 * max_str (checked by dec_scan): max_length capped at the tape's 2^30 - 1. */
static DK_MUST DK_INLINE int dec_str(pb_dec *d, const ProtobufCBinaryData *b, unsigned f)
{
    size_t at = d->out->len;
    uint8_t *units_at;
    DK_TRY(dec_room(d, 4 + b->len));
    dec_str_unsafe(d, b, f);
    if (d->u16 == NULL || (f & DK_STR_ASCII))
        return 0;
    DK_TRY(dec_entry_room(d, b->len, &units_at));
    if (units_at != NULL)
        dec_entry_commit(d, at, dk_wtf8_to_utf16(b->data, b->len, units_at));
    return 0;
}

/* --- the streams ----------------------------------------------------------- */

static DK_MUST DK_INLINE int dec_count(pb_dec *d, uint32_t *v)
{
    if (d->ci == d->doc->n_counts)
        return dec_bad_here(d, DK_ERR_FORMAT, "counts stream ends early");
    *v = d->doc->counts[d->ci++];
    return 0;
}

static DK_MUST DK_INLINE int dec_int(pb_dec *d, int64_t *v)
{
    if (d->ii == d->doc->n_ints)
        return dec_bad_here(d, DK_ERR_FORMAT, "ints stream ends early");
    *v = d->doc->ints[d->ii++];
    return 0;
}

/*
 * The next texts entry as a tape str. Texts are read in order, each once
 * (a STRING_REF names one already read, and unused entries fail the
 * document), so each is checked as WTF-8 here, on first use: with a side
 * table, in the same pass that writes its UTF-16 units.
 */
static DK_MUST int dec_text(pb_dec *d)
{
    const ProtobufCBinaryData *b;
    size_t i = d->ti, at = d->out->len, units = 0;
    uint8_t *units_at = NULL;
    unsigned f;
    if (i == d->doc->n_texts)
        return dec_bad_here(d, DK_ERR_FORMAT, "texts stream ends early");
    b = &d->doc->texts[i];
    /* the same steps, in the same order, with a table or without: the
     * outcome of a document never depends on whether JS asked for one */
    DK_TRY(dec_room(d, 4 + b->len));
    if (d->u16 != NULL)
        DK_TRY(dec_entry_room(d, b->len, &units_at));
    f = pb_text_class(b, units_at, &units);
    if (f & PB_TX_BAD)
        return dec_bad(d, DK_ERR_FORMAT, "string is not WTF-8", PB_F_TEXTS, i);
    d->text_f[i] = (uint8_t)f;
    d->ti++;
    dec_str_unsafe(d, b, f);
    if (units_at != NULL && !(f & PB_TX_ASCII))
        dec_entry_commit(d, at, units);
    return 0;
}

/* --- validation of the tables -------------------------------------------- */

/* Classify a table of WTF-8 byte strings into tape flags; FORMAT at the
 * first entry that is not WTF-8. */
static DK_MUST int dec_wtf8(pb_dec *d, const ProtobufCBinaryData *s, size_t n, unsigned field,
                            uint8_t **flags)
{
    size_t i;
    if (n == 0)
        return 0;
    *flags = dk_arena_alloc(d->a, n);
    if (*flags == NULL)
        return dec_fail(d, DK_ERR_MEMORY, "out of memory", 0);
    for (i = 0; i < n; i++) {
        unsigned f = pb_text_class(&s[i], NULL, NULL);
        if (f & PB_TX_BAD)
            return dec_bad(d, DK_ERR_FORMAT, "string is not WTF-8", field, i);
        (*flags)[i] = (uint8_t)f;
    }
    return 0;
}

/* Room for the flags of the texts entries, set by dec_text as each is read. */
static DK_MUST int dec_text_flags(pb_dec *d)
{
    if (d->doc->n_texts == 0)
        return 0;
    d->text_f = dk_arena_alloc(d->a, d->doc->n_texts);
    if (d->text_f == NULL)
        return dec_fail(d, DK_ERR_MEMORY, "out of memory", 0);
    return 0;
}

static DK_MUST int dec_shapes(pb_dec *d)
{
    const Darmok__Document *doc = d->doc;
    size_t i, j;
    for (i = 0; i < doc->n_shapes; i++) {
        const Darmok__Shape *s = doc->shapes[i];
        if (s->version == 0 && s->class_key != 0)
            return dec_bad(d, DK_ERR_FORMAT, "key-only shape with a class key", PB_F_SHAPES, i);
        if (s->version != 0 && s->class_key >= doc->n_strings)
            return dec_bad(d, DK_ERR_FORMAT, "shape class key out of range", PB_F_SHAPES, i);
        for (j = 0; j < s->n_fields; j++)
            if (s->fields[j] >= doc->n_strings)
                return dec_bad(d, DK_ERR_FORMAT, "shape field name out of range", PB_F_SHAPES, i);
    }
    return 0;
}

static int dec_key_is(const pb_dec *d, uint32_t i, const char *lit)
{
    size_t k = strlen(lit);
    return d->doc->strings[i].len == k && memcmp(d->doc->strings[i].data, lit, k) == 0;
}

/* --- the walk ------------------------------------------------------------ */

/* Open a container of n children (slots for an array): its frame. */
static DK_MUST int dec_push(pb_dec *d, Darmok__Kind k, uint64_t n, const Darmok__Shape *shape)
{
    pb_dec_frame *f;
    if (d->n_frames >= d->max_depth)
        return dec_bad_here(d, DK_ERR_DEPTH, "nesting deeper than max_depth");
    if (d->n_frames == d->cap_frames) {
        void *arr = pb_more(d->a, d->frames, d->n_frames, &d->cap_frames, sizeof *d->frames);
        if (arr == NULL)
            return dec_fail(d, DK_ERR_MEMORY, "out of memory", 0);
        d->frames = arr;
    }
    f = &d->frames[d->n_frames++];
    f->kind = k;
    f->shape = shape;
    f->left = n;
    f->field = 0;
    f->ki = d->ki - 1;
    return 0;
}

/* The member key or class key strings[key]: in full, or as a key reference
 * (dk_tape.h) when they are asked for and it was written in full before. */
static DK_MUST DK_INLINE int dec_key(pb_dec *d, uint32_t key)
{
    if (d->key_js != NULL) {
        uint32_t k = d->key_js[key];
        if (k != UINT32_MAX) {
            DK_TRY(dec_room(d, 4));
            dec_u32_unsafe(d, k << DK_STR_SHIFT | DK_STR_KEYREF);
            return 0;
        }
        d->key_js[key] = d->n_keys++;
    }
    return dec_str(d, &d->doc->strings[key], d->str_f[key]);
}

/* A record Kind: its shape, checked against the Kind, its op and header. */
static DK_MUST int dec_record(pb_dec *d, Darmok__Kind k)
{
    const Darmok__Shape *shape;
    uint32_t s = 0;
    int is_class = k == DARMOK__KIND__KIND_INSTANCE;
    DK_TRY(dec_count(d, &s));
    if (s >= d->doc->n_shapes)
        return dec_bad(d, DK_ERR_FORMAT, "record shape out of range", PB_F_COUNTS, d->ci - 1);
    shape = d->doc->shapes[s];
    if (is_class != (shape->version != 0))
        return dec_bad_here(d, DK_ERR_FORMAT,
                            is_class ? "instance with a key-only shape"
                                     : "object or Error with a class shape");
    if (k == DARMOK__KIND__KIND_ERROR &&
        (shape->n_fields < 2 || !dec_key_is(d, shape->fields[0], "name") ||
         !dec_key_is(d, shape->fields[1], "message")))
        return dec_bad_here(d, DK_ERR_FORMAT, "Error must start with name and message");
    if (shape->n_fields > d->max_length)
        return dec_bad_here(d, DK_ERR_TOO_LARGE, "more members than max_length");
    if (is_class) {
        DK_TRY(dec_op(d, DK_T_INSTANCE));
        DK_TRY(dec_key(d, shape->class_key));
        DK_TRY(dec_room(d, 8));
        dec_u32_unsafe(d, shape->version);
        dec_u32_unsafe(d, (uint32_t)shape->n_fields);
    } else {
        unsigned op = k == DARMOK__KIND__KIND_OBJECT ? DK_T_OBJECT
                      : k == DARMOK__KIND__KIND_NULL_PROTO ? DK_T_NULLPROTO
                                                           : DK_T_ERROR;
        DK_TRY(dec_op_u32(d, op, (uint32_t)shape->n_fields));
    }
    return dec_push(d, k, shape->n_fields, shape);
}

/* A value with identity: it takes the next REF index. */
static DK_MUST DK_INLINE int dec_ident(pb_dec *d)
{
    if (d->n_refs == UINT32_MAX)
        return dec_bad_here(d, DK_ERR_TOO_LARGE, "too many objects");
    d->n_refs++;
    return 0;
}

/* Write the value of Kind k (just taken from the stream) to the tape;
 * containers push a frame for their children. */
static DK_MUST int dec_value(pb_dec *d, Darmok__Kind k)
{
    const Darmok__Document *doc = d->doc;
    uint32_t c = 0;
    int64_t v = 0;

    switch (k) {
    case DARMOK__KIND__KIND_UNDEFINED:
        return dec_op(d, DK_T_UNDEF);
    case DARMOK__KIND__KIND_NULL:
        return dec_op(d, DK_T_NULL);
    case DARMOK__KIND__KIND_FALSE:
        return dec_op(d, DK_T_FALSE);
    case DARMOK__KIND__KIND_TRUE:
        return dec_op(d, DK_T_TRUE);
    case DARMOK__KIND__KIND_INT:
        DK_TRY(dec_int(d, &v));
        if (v < INT32_MIN || v > INT32_MAX)
            return dec_bad(d, DK_ERR_FORMAT, "KIND_INT out of int32 range", PB_F_INTS, d->ii - 1);
        return dec_op_u32(d, DK_T_INT, (uint32_t)(int32_t)v);
    case DARMOK__KIND__KIND_NUMBER: {
        double x;
        if (d->ni == doc->n_numbers)
            return dec_bad_here(d, DK_ERR_FORMAT, "numbers stream ends early");
        memcpy(&x, &doc->numbers[d->ni++], sizeof x); /* bits, not a value: see dec_f64_unsafe */
        pb_nan_canon(&x); /* the tape is canonical, as the encoder writes */
        return dec_op_f64(d, DK_T_F64, &x);
    }
    case DARMOK__KIND__KIND_STRING:
        DK_TRY(dec_op(d, DK_T_STR));
        return dec_text(d);
    case DARMOK__KIND__KIND_STRING_REF:
        DK_TRY(dec_count(d, &c));
        if (c >= d->ti)
            return dec_bad(d, DK_ERR_FORMAT, "string reference to a texts entry not yet read",
                           PB_F_COUNTS, d->ci - 1);
        DK_TRY(dec_op(d, DK_T_STR));
        return dec_str(d, &doc->texts[c], d->text_f[c]);
    case DARMOK__KIND__KIND_BIGINT:
        if (d->ti == doc->n_texts)
            return dec_bad_here(d, DK_ERR_FORMAT, "texts stream ends early");
        if (!dk_bigint_ok(doc->texts[d->ti].data, doc->texts[d->ti].len))
            return dec_bad(d, DK_ERR_FORMAT, "BigInt is not a decimal integer", PB_F_TEXTS, d->ti);
        DK_TRY(dec_op(d, DK_T_BIGINT));
        return dec_text(d);
    case DARMOK__KIND__KIND_ARRAY:
        DK_TRY(dec_ident(d));
        DK_TRY(dec_count(d, &c));
        if (c > d->max_length)
            return dec_bad_here(d, DK_ERR_TOO_LARGE, "array longer than max_length");
        DK_TRY(dec_op_u32(d, DK_T_ARRAY, c));
        return dec_push(d, k, c, NULL);
    case DARMOK__KIND__KIND_OBJECT:
    case DARMOK__KIND__KIND_NULL_PROTO:
    case DARMOK__KIND__KIND_INSTANCE:
    case DARMOK__KIND__KIND_ERROR:
        DK_TRY(dec_ident(d));
        return dec_record(d, k);
    case DARMOK__KIND__KIND_MAP:
    case DARMOK__KIND__KIND_SET:
        DK_TRY(dec_ident(d));
        DK_TRY(dec_count(d, &c));
        if (c > d->max_length)
            return dec_bad_here(d, DK_ERR_TOO_LARGE, "Map or Set larger than max_length");
        DK_TRY(dec_op_u32(d, k == DARMOK__KIND__KIND_MAP ? DK_T_MAP : DK_T_SET, c));
        return dec_push(d, k, k == DARMOK__KIND__KIND_MAP ? 2 * (uint64_t)c : c, NULL);
    case DARMOK__KIND__KIND_DATE:
    case DARMOK__KIND__KIND_INVALID_DATE: {
        double ms = (double)NAN;
        DK_TRY(dec_ident(d));
        if (k == DARMOK__KIND__KIND_DATE) {
            DK_TRY(dec_int(d, &v));
            if (v < -(int64_t)DK_DATE_MAX_MS || v > (int64_t)DK_DATE_MAX_MS)
                return dec_bad(d, DK_ERR_FORMAT, "date out of range", PB_F_INTS, d->ii - 1);
            ms = (double)v;
        }
        return dec_op_f64(d, DK_T_DATE, &ms);
    }
    case DARMOK__KIND__KIND_REGEXP:
        DK_TRY(dec_ident(d));
        DK_TRY(dec_op(d, DK_T_REGEXP));
        DK_TRY(dec_text(d));
        return dec_text(d);
    case DARMOK__KIND__KIND_BINARY: {
        const ProtobufCBinaryData *b;
        unsigned kind;
        DK_TRY(dec_ident(d));
        if (d->bki == doc->n_binary_kinds || d->bi == doc->n_binaries)
            return dec_bad_here(d, DK_ERR_FORMAT, "binary streams end early");
        kind = (unsigned)doc->binary_kinds[d->bki++];
        b = &doc->binaries[d->bi++];
        if (kind >= DK_BYTES_KIND_COUNT)
            return dec_bad(d, DK_ERR_FORMAT, "unknown binary kind", PB_F_BINARY_KINDS, d->bki - 1);
        if (b->len % dk_bytes_size[kind] != 0)
            return dec_bad(d, DK_ERR_FORMAT, "binary length not a multiple of its element size",
                           PB_F_BINARIES, d->bi - 1);
        DK_TRY(dec_room(d, 6 + b->len));
        dec_u8_unsafe(d, DK_T_BYTES);
        dec_u8_unsafe(d, kind);
        dec_u32_unsafe(d, (uint32_t)b->len);
        if (b->len != 0)
            memcpy(d->out->data + d->out->len, b->data, b->len);
        d->out->len += b->len;
        return 0;
    }
    case DARMOK__KIND__KIND_REF:
        DK_TRY(dec_count(d, &c));
        if (c >= d->n_refs)
            return dec_bad(d, DK_ERR_FORMAT, "reference to a value not yet met", PB_F_COUNTS,
                           d->ci - 1);
        if (c >= d->keep)
            d->keep = c + 1; /* c < n_refs <= UINT32_MAX */
        return dec_op_u32(d, DK_T_REF, c);
    case DARMOK__KIND__KIND_HOLES:
        return dec_bad_here(d, DK_ERR_FORMAT, "holes outside an array");
    default:
        return dec_bad_here(d, DK_ERR_FORMAT, "unknown Kind");
    }
}

/* Walk the kinds stream from the root until every container is closed,
 * then check that every stream is used up. */
static DK_MUST int dec_walk(pb_dec *d)
{
    const Darmok__Document *doc = d->doc;
    if (doc->n_kinds == 0)
        return dec_fail(d, DK_ERR_FORMAT, "document without a value (empty kinds stream)", 0);
    for (;;) {
        pb_dec_frame *f = NULL;
        Darmok__Kind k;
        if (d->n_frames > 0) {
            f = &d->frames[d->n_frames - 1];
            if (f->left == 0) {
                d->n_frames--;
                continue;
            }
        } else if (d->ki > 0) {
            break; /* the root is complete */
        }
        if (d->ki == doc->n_kinds)
            return dec_bad(d, DK_ERR_FORMAT, "kinds stream ends inside a container", PB_F_KINDS,
                           f != NULL ? f->ki : 0);
        k = doc->kinds[d->ki++];
        if (k == DARMOK__KIND__KIND_HOLES && f != NULL && f->kind == DARMOK__KIND__KIND_ARRAY) {
            uint32_t c = 0;
            DK_TRY(dec_count(d, &c));
            if (c == 0 || c > f->left)
                return dec_bad(d, DK_ERR_FORMAT, "hole run empty or past the array's length",
                               PB_F_COUNTS, d->ci - 1);
            f->left -= c;
            DK_TRY(dec_op_u32(d, DK_T_HOLE, c));
            continue;
        }
        if (f != NULL) {
            f->left--;
            if (f->kind != DARMOK__KIND__KIND_ARRAY && f->kind != DARMOK__KIND__KIND_MAP &&
                f->kind != DARMOK__KIND__KIND_SET) {
                DK_TRY(dec_key(d, f->shape->fields[f->field++]));
            }
        }
        /* dec_value may push frames and move d->frames: f is dead now. */
        DK_TRY(dec_value(d, k));
    }
    if (d->ki != doc->n_kinds)
        return dec_bad(d, DK_ERR_FORMAT, "values after the root", PB_F_KINDS, d->ki);
    if (d->ci != doc->n_counts)
        return dec_bad(d, DK_ERR_FORMAT, "unused counts entries", PB_F_COUNTS, d->ci);
    if (d->ii != doc->n_ints)
        return dec_bad(d, DK_ERR_FORMAT, "unused ints entries", PB_F_INTS, d->ii);
    if (d->ni != doc->n_numbers)
        return dec_bad(d, DK_ERR_FORMAT, "unused numbers entries", PB_F_NUMBERS, d->ni);
    if (d->ti != doc->n_texts)
        return dec_bad(d, DK_ERR_FORMAT, "unused texts entries", PB_F_TEXTS, d->ti);
    if (d->bki != doc->n_binary_kinds)
        return dec_bad(d, DK_ERR_FORMAT, "unused binary_kinds entries", PB_F_BINARY_KINDS, d->bki);
    if (d->bi != doc->n_binaries)
        return dec_bad(d, DK_ERR_FORMAT, "unused binaries entries", PB_F_BINARIES, d->bi);
    return 0;
}

/* Document bytes -> tape; see darmok.h. */
int dk_pb_read_opts(const uint8_t *pb, size_t len, const dk_limits *lim,
                    size_t max_out, dk_arena *scratch, dk_buf *tape_out,
                    dk_err *err)
{
    return dk_pb_read_ex(pb, len, lim, max_out, 0, scratch, tape_out, NULL, NULL, err);
}

/* The same, with the UTF-16 side table; see dk_internal.h. */
int dk_pb_read_ex(const uint8_t *pb, size_t len, const dk_limits *lim,
                  size_t max_out, uint32_t flags, dk_arena *scratch,
                  dk_buf *tape_out, dk_buf *u16_out, uint32_t *keep_out, dk_err *err)
{
    pb_dec d;
    pb_alloc_ctx ac;
    ProtobufCAllocator alloc;
    Darmok__Document *doc;

    err->code = DK_OK; /* zeroed now; the first failure fills it */
    err->msg = NULL;
    err->pos = 0;

    tape_out->len = 0;
    if (u16_out)
        u16_out->len = 0;
    if (keep_out)
        *keep_out = 0;
    memset(&d, 0, sizeof d);
    d.u16 = u16_out;
    d.a = scratch;
    d.err = err;
    d.out = tape_out;
    d.in = pb;
    d.len = len;
    d.max_depth = dk_max_depth(lim);
    d.max_length = dk_max_length(lim);
    d.max_str = d.max_length < DK_DEFAULT_MAX_LENGTH ? d.max_length : DK_DEFAULT_MAX_LENGTH;
    if (len > DK_PB_MAX_OUT)
        return dec_fail(&d, DK_ERR_TOO_LARGE, "input too large", 0);
    if (max_out == 0) /* len < 2^31: no overflow in 64 bits */
        max_out = (size_t)((uint64_t)len * DK_PB_EXPANSION < DK_PB_MAX_OUT - DK_PB_EXPANSION_FLOOR
                               ? (uint64_t)len * DK_PB_EXPANSION + DK_PB_EXPANSION_FLOOR
                               : DK_PB_MAX_OUT);
    d.max_out = max_out < DK_PB_MAX_OUT ? max_out : DK_PB_MAX_OUT;
    DK_TRY(dec_scan(&d));
    dec_room_set(&d);

    ac.a = scratch;
    ac.failed = 0;
    ac.next = NULL;
    ac.left = 0;
    alloc.alloc = pb_pc_alloc;
    alloc.free = pb_pc_free;
    alloc.allocator_data = &ac;
    doc = darmok__document__unpack(&alloc, len, pb);
    if (doc == NULL)
        return dec_fail(&d, ac.failed ? DK_ERR_MEMORY : DK_ERR_SYNTAX,
                        ac.failed ? "out of memory" : "protobuf-c rejected the input", 0);
    d.doc = doc;
    if (doc->format != DK_PB_FORMAT)
        return dec_fail(&d, DK_ERR_FORMAT, "unsupported darmok protobuf format revision", 0);
    if (doc->n_strings > PB_TABLE_MAX || doc->n_shapes > PB_TABLE_MAX || doc->n_texts > PB_TABLE_MAX)
        return dec_fail(&d, DK_ERR_TOO_LARGE, "too many strings or shapes", 0);
    if ((flags & DK_READ_KEYREFS) && doc->n_strings != 0) {
        d.key_js = dk_arena_alloc(scratch, doc->n_strings * sizeof *d.key_js);
        if (d.key_js == NULL)
            return dec_fail(&d, DK_ERR_MEMORY, "out of memory", 0);
        memset(d.key_js, 0xFF, doc->n_strings * sizeof *d.key_js);
    }
    if (dec_wtf8(&d, doc->strings, doc->n_strings, PB_F_STRINGS, &d.str_f) != DK_OK ||
        dec_text_flags(&d) != DK_OK ||
        dec_shapes(&d) != DK_OK || dec_walk(&d) != DK_OK) {
        tape_out->len = 0; /* a failure leaves no partial tape */
        if (u16_out)
            u16_out->len = 0;
        return (int)err->code;
    }
    if (keep_out)
        *keep_out = d.keep;
    return DK_OK;
}

/* ===================================================================== */
/* 5. Transcoding, through a tape                                         */
/* ===================================================================== */

/*
 * A failure of the second step concerns a tape the first step wrote, not
 * the caller's input: only MEMORY, TOO_LARGE and DEPTH can happen there,
 * and they are reported at input offset 0.
 */
static int pb_second_step(int rc, dk_err *err)
{
    if (rc != DK_OK)
        err->pos = 0;
    return rc;
}

int dk_pb_from_json_opts(const uint8_t *json, size_t len, uint32_t flags,
                         const dk_limits *lim, dk_arena *scratch, dk_buf *tape,
                         dk_buf *out, dk_err *err)
{
    out->len = 0;
    err->code = DK_OK;
    err->msg = NULL;
    err->pos = 0;
    DK_TRY(dk_json_read_opts(json, len, flags, lim, scratch, tape, err));
    return pb_second_step(dk_pb_write_opts(tape->data, tape->len, lim, scratch, out, err), err);
}

int dk_pb_to_json_opts(const uint8_t *pb, size_t len, const dk_limits *lim,
                       dk_arena *scratch, dk_buf *tape, dk_buf *out, dk_err *err)
{
    out->len = 0;
    err->code = DK_OK;
    err->msg = NULL;
    err->pos = 0;
    DK_TRY(dk_pb_read_opts(pb, len, lim, 0, scratch, tape, err));
    return pb_second_step(dk_json_write_opts(tape->data, tape->len, lim, scratch, out, err), err);
}

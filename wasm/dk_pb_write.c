/*
 * dk_pb_write.c - darmok's protobuf writer: tape -> darmok.Document bytes
 * (dk_pb_write_opts, dk_pb_write_ex).
 *
 * Walk the tape once, iteratively, appending to arena arrays (keys and
 * shapes interned, repeated string values turned into back-references when
 * that is shorter), then let protobuf-c pack them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dk_pb.h"

/* Largest output reservation made from pb_bound instead of the exact size. */
#define PB_BOUND_MAX ((uint64_t)1 << 20)

/* A string reference is at least 2 bytes of protobuf (its kind, its index)
 * for a tape str of 5 + n bytes: every document the encoder writes stays
 * within the decode's amplification bound (darmok.h). */
_Static_assert((5 + DK_PB_REF_MAX_BYTES) / 2 < DK_PB_EXPANSION,
               "shared strings must not expand past DK_PB_EXPANSION");

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
    if (n == 0) return 0;
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
            if (x != y) return 0;
        }
        /* the last 8 bytes, overlapping what was compared */
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    /* Most keys are 3 to 7 bytes: their words, not a loop of byte
     * compares, in a lookup enc_run makes for every key. */
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

/* An interning table of byte strings (keys, texts and shapes, all through
 * enc_lookup): open addressing, power-of-two size, at most half full.
 * Entries point into the tape, or for shapes into the arena. */
typedef struct pb_str_slot {
    uint32_t hash;
    uint32_t ref; /* index + 1; 0: empty */
    const uint8_t *p;
    size_t n;
} pb_str_slot;

typedef struct pb_strtab {
    pb_str_slot *slots;
    size_t cap, count;
    uint64_t seed;    /* of its hashes (pb_hash) */
    unsigned reseeds; /* times a long probe made it pick a new seed */
} pb_strtab;

/*
 * Probes of a string table lookup past which the table picks a new seed
 * and rehashes (at most PB_RESEEDS times a call): with a random seed no
 * input should get there (linear probing at half load probes few slots,
 * and a long run is vanishingly rare), so one that does is treated as a collision
 * found by chance or by a flaw of pb_hash, and a new seed breaks it. Past
 * PB_RESEEDS the probes are left unbounded: no more can be done cheaply.
 */
#define PB_PROBE_MAX 128u
#define PB_RESEEDS 4u

#ifdef DK_CHECK_PB_BOUND
unsigned long dk_pb_reseeds_seen; /* see dk_internal.h */
#endif

/* Class keys enc_class_key compares before a lookup. */
#define PB_RECENT_CLASSES 4

/* An open container of the tape. */
typedef struct pb_enc_frame {
    uint8_t op;     /* DK_T_ARRAY, _OBJECT, _NULLPROTO, _INSTANCE, ... */
    uint8_t rec;    /* OBJECT, NULLPROTO, INSTANCE or ERROR: keyed children */
    uint64_t left;  /* array: slots; records: pairs; map: 2 x pairs; set: values */
    uint64_t total; /* the same, at the start */
    size_t kbase;   /* records: its first key on the key stack, after its class key and version */
    size_t shape_slot;  /* records: its counts entry, the shape index, set on close */
    uint32_t class_key; /* instances: string index */
    uint32_t version;   /* instances */
    uint32_t guess;     /* instances: 1 + the shape its keys are expected
                            to make (its class's last), 0 once one differs */
} pb_enc_frame;

typedef struct pb_enc {
    dk_arena *a;
    dk_err *err;
    const uint8_t *tape;
    size_t len;
    size_t pos;
    uint32_t max_depth;
    uint32_t n_refs;  /* values with identity so far: the next REF index */
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
    /* pb_bound's share of the strs, texts and bins entries and of the
     * shapes, summed as they are appended, not in a pass of its own */
    uint64_t bound_items;

    pb_strtab key_tab;  /* keys and class keys -> strs index */
    pb_strtab text_tab; /* string values -> texts index of the first one */
    /* one-byte ASCII string values -> 1 + their texts index, when that is
     * below 255 (0: not met, or look in text_tab): the map keys and labels
     * of small documents ("x", "a") without a hash and a probe. Zeroed
     * with the rest of pb_enc. */
    uint8_t one_char[128];
    /* shapes -> shapes index, keyed by a shape's identity as bytes: u32
     * class key, version, field keys, as a record leaves them on the key
     * stack (enc_push); the string table's lookup, and so its bound on a
     * probe. */
    pb_strtab shape_tab;

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
    if (p == NULL) (void)enc_oom(e);
    return p;
}

/* Room for one more element of the stream array arr (n used of cap). */
#define ENC_ROOM(e, arr, n, cap)                                                  \
    do {                                                                          \
        if (DK_UNLIKELY((n) == (cap))) {                                          \
            void *enc_room_p_ = enc_grow((e), (arr), (n), &(cap), sizeof *(arr)); \
            if (enc_room_p_ == NULL) return (int)(e)->err->code;                  \
            (arr) = enc_room_p_;                                                  \
        }                                                                         \
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

static DK_MUST DK_INLINE int enc_blob(pb_enc *e, ProtobufCBinaryData **arr, size_t *n, size_t *cap,
                                      const uint8_t *p, size_t len)
{
    ENC_ROOM(e, *arr, *n, *cap);
    /* Points into the tape: packed before the call returns. */
    (*arr)[*n].data = (uint8_t *)(uintptr_t)p;
    (*arr)[*n].len = len;
    (*n)++;
    e->bound_items += 6 + (uint64_t)len;
    return 0;
}

static DK_MUST DK_INLINE int enc_u8(pb_enc *e, uint8_t *v)
{
    if (e->len - e->pos < 1) return enc_bad(e, "tape ends inside a value", e->pos);
    *v = e->tape[e->pos++];
    return 0;
}

static DK_MUST DK_INLINE int enc_u32(pb_enc *e, uint32_t *v)
{
    if (e->len - e->pos < 4) return enc_bad(e, "tape ends inside a value", e->pos);
    *v = dk_rd32(e->tape + e->pos);
    e->pos += 4;
    return 0;
}

/* By address: see dec_f64_unsafe. */
static DK_MUST int enc_f64(pb_enc *e, double *v)
{
    uint64_t u;
    if (e->len - e->pos < 8) return enc_bad(e, "tape ends inside a value", e->pos);
    u = dk_rd64(e->tape + e->pos); /* one load, not 8 */
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
    if (len > e->len - e->pos) return enc_bad(e, "tape string runs past the end of the tape", at);
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
    if (s == NULL) return -1;
    memset(s, 0, ncap * sizeof *s);
    for (i = 0; i < t->cap; i++) {
        size_t j;
        pb_str_slot sl = t->slots[i];
        if (sl.ref == 0) continue;
        if (rehash) sl.hash = pb_hash(t->seed, sl.p, sl.n);
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
static DK_INLINE int enc_lookup(pb_enc *e, pb_strtab *t, const uint8_t *p, size_t n, uint32_t *h,
                                uint32_t *idx, pb_str_slot **slot)
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
#ifdef DK_CHECK_PB_BOUND
            dk_pb_reseeds_seen++;
#endif
            t->seed = (t->seed + 0x9E3779B97F4A7C15u) * 0xBF58476D1CE4E5B9u;
            t->seed ^= t->seed >> 31;
            if (enc_tab_rebuild(e, t, t->cap, 1) != 0) return -1;
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
    if (found < 0) return enc_oom(e);
    if (found) return 0;
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
    0,   1,   2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,  15,  16,  17,  18,
    19,  20,  21,  22,  23,  24,  25,  26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,
    38,  39,  40,  41,  42,  43,  44,  45,  46,  47,  48,  49,  50,  51,  52,  53,  54,  55,  56,
    57,  58,  59,  60,  61,  62,  63,  64,  65,  66,  67,  68,  69,  70,  71,  72,  73,  74,  75,
    76,  77,  78,  79,  80,  81,  82,  83,  84,  85,  86,  87,  88,  89,  90,  91,  92,  93,  94,
    95,  96,  97,  98,  99,  100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113,
    114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127};

/*
 * A string value: KIND_STRING with a new texts entry, or, when it has at
 * most DK_PB_REF_MAX_BYTES bytes, KIND_STRING_REF naming the first texts entry
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
    if (n <= DK_PB_REF_MAX_BYTES) found = enc_lookup(e, &e->text_tab, p, n, &h, &idx, &slot);
    if (found < 0) return enc_oom(e);
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
            if (q == NULL) return enc_oom(e);
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

/* Intern the shape of identity id (n field keys after class key and
 * version, on the key stack, which later pushes may move); *out is its
 * index. A new shape copies its identity, of which its fields are the tail. */
static DK_MUST int enc_shape(pb_enc *e, const uint32_t *id, size_t n, uint32_t *out)
{
    size_t bytes = (n + 2) * sizeof *id;
    uint32_t h = 0, idx = 0, *copy;
    pb_str_slot *slot = NULL;
    Darmok__Shape *s;
    int found;

    found = enc_lookup(e, &e->shape_tab, (const uint8_t *)id, bytes, &h, &idx, &slot);
    if (found < 0) return enc_oom(e);
    if (found) {
        *out = idx;
        return 0;
    }
    if (e->n_shapes >= PB_TABLE_MAX)
        return dk_fail(e->err, DK_ERR_TOO_LARGE, "too many distinct shapes", e->pos);
    s = dk_arena_alloc(e->a, sizeof *s);
    copy = dk_arena_alloc(e->a, bytes);
    {
        void *arr = pb_more(e->a, e->shapes, e->n_shapes, &e->cap_shapes, sizeof *e->shapes);
        if (s == NULL || copy == NULL || arr == NULL) return enc_oom(e);
        e->shapes = arr;
    }
    memcpy(copy, id, bytes);
    darmok__shape__init(s);
    s->class_key = copy[0];
    s->version = copy[1];
    s->n_fields = n;
    s->fields = n != 0 ? copy + 2 : NULL;
    e->shapes[e->n_shapes] = s;
    e->bound_items += 24 + 5 * (uint64_t)n;
    slot->hash = h;
    slot->ref = (uint32_t)e->n_shapes + 1;
    slot->p = (const uint8_t *)copy;
    slot->n = bytes;
    e->shape_tab.count++;
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
        if (arr == NULL) return enc_oom(e);
        e->frames = arr;
    }
    if (rec) { /* the shape's identity begins: class key, version, then the keys */
        ENC_ROOM(e, e->keys, e->n_keys, e->cap_keys);
        e->keys[e->n_keys++] = class_key;
        ENC_ROOM(e, e->keys, e->n_keys, e->cap_keys);
        e->keys[e->n_keys++] = version;
    }
    f = &e->frames[e->n_frames++];
    f->op = op;
    f->rec = (uint8_t)rec;
    f->left = n;
    f->total = n;
    f->kbase = e->n_keys;
    f->shape_slot = e->n_counts;
    f->class_key = class_key;
    f->version = version;
    f->guess = 0;
    if (op == DK_T_INSTANCE && class_key < e->cap_class_shape) {
        uint32_t g = e->class_shape[class_key];
        if (g != 0 && e->shapes[g - 1]->version == version) f->guess = g;
    }
    if (rec) return enc_count(e, 0);
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
    case DK_T_UNDEF: return enc_kind(e, DARMOK__KIND__KIND_UNDEFINED);
    case DK_T_NULL: return enc_kind(e, DARMOK__KIND__KIND_NULL);
    case DK_T_FALSE: return enc_kind(e, DARMOK__KIND__KIND_FALSE);
    case DK_T_TRUE: return enc_kind(e, DARMOK__KIND__KIND_TRUE);
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
        if (op == DK_T_STR) return enc_string(e, p, len, 0);
        if (!dk_bigint_ok(p, len)) return enc_bad(e, "tape BigInt is not a decimal integer", at);
        DK_TRY(enc_kind(e, DARMOK__KIND__KIND_BIGINT));
        return enc_blob(e, &e->texts, &e->n_texts, &e->cap_texts, p, len);
    }
    case DK_T_STR16: {
        const uint8_t *p = NULL;
        size_t len = 0;
        DK_TRY(enc_u32(e, &u));
        DK_TRY(dk_str16_wtf8(e->tape + e->pos, e->len - e->pos, u, at, e->a, &e->str16, &p, &len,
                             e->err));
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
        if (version == 0) return enc_bad(e, "tape instance version is 0", at);
        DK_TRY(enc_u32(e, &n));
        DK_TRY(enc_ident(e, DARMOK__KIND__KIND_INSTANCE));
        return enc_push(e, op, n, at, key, version);
    }
    case DK_T_DATE: {
        double ms;
        DK_TRY(enc_f64(e, &ms));
        /* As the JSON writer: a time value or NaN; 0 for -0, so that both
         * formats carry the same dates bit for bit. */
        if (!pb_date_canon(&ms)) return enc_bad(e, "date out of range or not an integer", at);
        if (isnan(ms)) return enc_ident(e, DARMOK__KIND__KIND_INVALID_DATE);
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
        if (kind >= DK_BYTES_KIND_COUNT) return enc_bad(e, "tape binary kind unknown", at);
        if (n % dk_bytes_size[kind] != 0)
            return enc_bad(e, "tape binary length not a multiple of its element size", at);
        if (n > e->len - e->pos) return enc_bad(e, "tape binary runs past the end of the tape", at);
        data = e->tape + e->pos;
        e->pos += n;
        DK_TRY(enc_ident(e, DARMOK__KIND__KIND_BINARY));
        if (e->n_bkinds == e->cap_bkinds) {
            void *p = pb_more(e->a, e->bkinds, e->n_bkinds, &e->cap_bkinds, sizeof *e->bkinds);
            if (p == NULL) return enc_oom(e);
            e->bkinds = p;
        }
        e->bkinds[e->n_bkinds++] = (Darmok__BinaryKind)kind;
        return enc_blob(e, &e->bins, &e->n_bins, &e->cap_bins, data, n);
    }
    case DK_T_REF:
        DK_TRY(enc_u32(e, &u));
        if (u >= e->n_refs) return enc_bad(e, "tape REF points forward", at);
        DK_TRY(enc_kind(e, DARMOK__KIND__KIND_REF));
        return enc_count(e, u);
    case DK_T_HOLE: return enc_bad(e, "tape HOLE outside an array", at);
    default: return enc_bad(e, "unknown tape op", at);
    }
}

static int enc_is(const uint8_t *p, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    return n == k && memcmp(p, lit, k) == 0;
}

/* Remember shape as the last one of class key `key` (see class_shape). */
static DK_MUST int enc_class_shape(pb_enc *e, uint32_t key, uint32_t shape)
{
    while (key >= e->cap_class_shape) {
        size_t old = e->cap_class_shape;
        uint32_t *t = pb_more(e->a, e->class_shape, old, &e->cap_class_shape, sizeof *t);
        if (t == NULL) return enc_oom(e);
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
    if (f->rec) {
        uint32_t shape = 0;
        size_t nk = e->n_keys - f->kbase;
        if (f->guess != 0 && e->shapes[f->guess - 1]->n_fields == nk) {
            shape = f->guess - 1; /* the same class, version and keys */
        } else {
            DK_TRY(enc_shape(e, e->keys + f->kbase - 2, nk, &shape));
            if (f->op == DK_T_INSTANCE) DK_TRY(enc_class_shape(e, f->class_key, shape));
        }
        e->counts[f->shape_slot] = shape;
        e->n_keys = f->kbase - 2;
    }
    e->n_frames--;
    return 0;
}

/*
 * First capacities of the main streams, in one arena block: each from what
 * the tape's length allows (a value takes at least 1 tape byte, a count 5,
 * an int 5, a number 9, a text or key 4), at most PB_PREALLOC entries. A
 * small document then never grows an array, where starting each at 16 and
 * doubling costs arena calls and copies. The block is small (PB_PREALLOC
 * entries a stream), cut from the call's arena and untouched beyond what
 * is used. Streams a document may well not use (binaries, shapes) stay
 * lazy. Failing here is not an error: the streams then grow on demand.
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
    if (m == NULL) return;
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
        if (f->rec) {
            const uint8_t *p = NULL;
            size_t len = 0, at = e->pos;
            uint32_t key;
            uint64_t i = f->total - f->left;
            DK_TRY(enc_str(e, &p, &len));
            if (f->op == DK_T_ERROR &&
                ((i == 0 && !enc_is(p, len, "name")) || (i == 1 && !enc_is(p, len, "message"))))
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
 * by a pass of its own over every field and stream element, a cost the
 * write of a small document notices. Each item is taken at its longest:
 * a tag 1 byte (field numbers
 * are below 16), a length or uint32 5, a sint64 10, a double 8; Kind and
 * BinaryKind values are the encoder's own, 0..127, 1 byte. In 64 bits:
 * it cannot wrap for any document wasm32 (or a native build) can hold.
 * Test and fuzz builds (DK_CHECK_PB_BOUND) compare it with the exact size
 * before every pack, and abort when it is lower. The bound holds only
 * while protoc-c packs every repeated scalar and enum field (proto3's
 * default; darmok.proto relies on it for size anyway).
 *
 * It can be several times the exact size (small ints), and the output
 * buffer keeps its largest size from call to call: past PB_BOUND_MAX the
 * exact size is asked for instead, where that pass costs little against
 * the rest of the write.
 */
static uint64_t pb_bound(const Darmok__Document *doc, uint64_t items)
{
    uint64_t n = 6 + 5 * 11; /* format; each packed stream's tag and length */

    n += (uint64_t)doc->n_kinds + doc->n_binary_kinds + 5 * (uint64_t)doc->n_counts +
         10 * (uint64_t)doc->n_ints + 8 * (uint64_t)doc->n_numbers;
    /* items (pb_enc.bound_items): 6 + len a strings, texts or binaries
     * entry; a shape its tag and length, class_key, version, fields' tag
     * and length, 5 a field: 24 + 5 n_fields */
    return n + items;
}

/* Tape -> Document bytes; see darmok.h. */
int dk_pb_write_opts(const uint8_t *tape, size_t len, const dk_limits *lim, dk_arena *scratch,
                     dk_buf *out, dk_err *err)
{
    return dk_pb_write_ex(tape, len, lim, 0, scratch, out, err);
}

/* See dk_abi.h. */
int dk_pb_write_ex(const uint8_t *tape, size_t len, const dk_limits *lim, uint32_t flags,
                   dk_arena *scratch, dk_buf *out, dk_err *err)
{
    pb_enc e;
    Darmok__Document doc = DARMOK__DOCUMENT__INIT;
    uint64_t bound;
    size_t size, packed;
    dk_err own;

    err = dk_err_start(err, &own);
    out->len = 0;
    memset(&e, 0, sizeof e);
    e.a = scratch;
    e.err = err;
    e.tape = tape;
    e.len = len;
    e.max_depth = dk_max_depth(lim);
    e.key_tab.seed = lim != NULL ? lim->hash_seed : 0;
    e.text_tab.seed = e.key_tab.seed ^ 0x2545F4914F6CDD1Du;
    e.shape_tab.seed = e.key_tab.seed ^ 0x9FB21C651E98DF25u;
    e.trusted_text = (flags & DK_WRITE_TRUSTED_TEXT) != 0;
    enc_prealloc(&e);

    if (enc_value(&e) != DK_OK || enc_run(&e) != DK_OK) return (int)err->code;
    if (e.pos != e.len) return enc_bad(&e, "bytes after the tape's value", e.pos);
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
    bound = pb_bound(&doc, e.bound_items);
    if (bound <= PB_BOUND_MAX) {
        size = (size_t)bound;
#ifdef DK_CHECK_PB_BOUND
        /* a test or fuzz build's assertion, which no caller can take for
         * an ordinary failure */
        if (darmok__document__get_packed_size(&doc) > size) abort();
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

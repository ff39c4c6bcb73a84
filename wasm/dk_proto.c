/*
 * dk_proto.c - darmok's protobuf format: tape -> darmok.Document and back.
 *
 * The public contracts are in darmok.h. Encode: walk the tape once, iteratively, building protobuf-c structs in an
 * arena (string table and shapes interned on the way), then let protobuf-c
 * pack them. Decode: check the wire bytes ourselves first (so errors carry
 * byte offsets and protobuf-c never sees malformed data), unpack with
 * protobuf-c into the arena, then walk the node table iteratively from the
 * root, validating as we go, and write the tape.
 *
 * protobuf-c recursion is bounded by the schema (Document > Node > Record >
 * Value), never by the input: see darmok.proto, "Why flat".
 *
 * Sections:
 *   1. memory: the core's arena and buffer, protobuf-c's allocator
 *   2. text: WTF-8 / UTF-8 classification
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
} pb_alloc_ctx;

static void *pb_pc_alloc(void *data, size_t size)
{
    pb_alloc_ctx *ac = data;
    void *p = dk_arena_alloc(ac->a, size);
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
#define PB_TX_NUL 4u             /* contains a 0 byte (U+0000) */
#define PB_TX_BAD 8u             /* not WTF-8 */

/*
 * Classify n bytes as WTF-8: UTF-8 whose code points may also be lone
 * surrogates (ED A0..BF xx). Overlong forms, code points over U+10FFFF and a
 * high surrogate directly followed by a low one (a pair must be a single
 * 4-byte sequence) are BAD. Reads exactly p[0..n).
 */
static unsigned pb_text_scan(const uint8_t *p, size_t n)
{
    unsigned f = PB_TX_ASCII;
    size_t i = 0;
    size_t high_end = SIZE_MAX; /* where the last high surrogate ended */
    while (i < n) {
        unsigned b = p[i];
        if (b < 0x80) {
            if (b == 0)
                f |= PB_TX_NUL;
            i++;
            continue;
        }
        f &= ~PB_TX_ASCII;
        if (b < 0xC2)
            return PB_TX_BAD;
        if (b < 0xE0) {
            if (n - i < 2 || (p[i + 1] & 0xC0) != 0x80)
                return PB_TX_BAD;
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
            i += 3;
        } else {
            unsigned b1;
            if (b > 0xF4 || n - i < 4 || (p[i + 1] & 0xC0) != 0x80 ||
                (p[i + 2] & 0xC0) != 0x80 || (p[i + 3] & 0xC0) != 0x80)
                return PB_TX_BAD;
            b1 = p[i + 1];
            if ((b == 0xF0 && b1 < 0x90) || (b == 0xF4 && b1 > 0x8F))
                return PB_TX_BAD;
            i += 4;
        }
    }
    return f;
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
        *ms = (double)NAN;
        return 1;
    }
    if (!(*ms >= -DK_DATE_MAX_MS && *ms <= DK_DATE_MAX_MS) || *ms != (double)(int64_t)*ms)
        return 0;
    if (*ms == 0)
        *ms = 0;
    return 1;
}

static uint32_t pb_hash(const uint8_t *p, size_t n, uint32_t h)
{
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u; /* FNV-1a */
    return h;
}

static uint32_t pb_hash_u32(uint32_t h, uint32_t v)
{
    uint8_t b[4];
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
    return pb_hash(b, 4, h);
}

#define PB_HASH_SEED 2166136261u

/* ===================================================================== */
/* 3. Encoder: tape -> Document structs -> bytes                          */
/* ===================================================================== */

/* String table indexes are handed out per table while walking; raw ones
 * carry this bit until the end, when they become n_strings + j (the
 * combined index space of darmok.proto). */
#define PB_RAW_BIT 0x80000000u
#define PB_TABLE_MAX 0x3FFFFFFFu /* entries per table, nodes, shapes */

typedef struct pb_str_slot {
    uint32_t hash;
    uint32_t ref; /* tagged index + 1; 0: empty */
    const uint8_t *p;
    size_t n;
} pb_str_slot;

typedef struct pb_shape_slot {
    uint32_t hash;
    uint32_t ref; /* shape index + 1; 0: empty */
} pb_shape_slot;

/* An open container of the tape. */
typedef struct pb_enc_frame {
    uint8_t op;         /* DK_T_ARRAY, _OBJECT, _NULLPROTO, _INSTANCE, ... */
    uint32_t node;      /* its node index */
    uint64_t left;      /* array: slots; records: pairs; map: 2 x pairs; set: values */
    uint64_t total;     /* the same, at the start */
    size_t vbase;       /* its first child on the value stack */
    size_t kbase;       /* its first key on the key stack */
    uint32_t class_key; /* instances: tagged string index */
    uint32_t version;   /* instances */
    size_t at;          /* tape offset of its op */
} pb_enc_frame;

typedef struct pb_enc {
    dk_arena *a;
    dk_err *err;
    const uint8_t *tape;
    size_t len;
    size_t pos;
    uint32_t max_depth;

    Darmok__Node **nodes;
    size_t n_nodes, cap_nodes;
    char **strs;
    size_t n_strs, cap_strs;
    ProtobufCBinaryData *raws;
    size_t n_raws, cap_raws;
    pb_str_slot *str_tab;
    size_t str_tab_cap; /* power of two */
    Darmok__Shape **shapes;
    size_t n_shapes, cap_shapes;
    pb_shape_slot *shape_tab;
    size_t shape_tab_cap;

    pb_enc_frame *frames;
    size_t n_frames, cap_frames;
    Darmok__Value *vals; /* children of open containers */
    size_t n_vals, cap_vals;
    uint32_t *keys; /* keys of open records, tagged string indexes */
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

static DK_MUST int enc_u8(pb_enc *e, uint8_t *v)
{
    if (e->len - e->pos < 1)
        return enc_bad(e, "tape ends inside a value", e->pos);
    *v = e->tape[e->pos++];
    return 0;
}

static DK_MUST int enc_u32(pb_enc *e, uint32_t *v)
{
    const uint8_t *p = e->tape + e->pos;
    if (e->len - e->pos < 4)
        return enc_bad(e, "tape ends inside a value", e->pos);
    *v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    e->pos += 4;
    return 0;
}

static DK_MUST int enc_f64(pb_enc *e, double *v)
{
    uint64_t u = 0;
    int i;
    if (e->len - e->pos < 8)
        return enc_bad(e, "tape ends inside a value", e->pos);
    for (i = 7; i >= 0; i--)
        u = u << 8 | e->tape[e->pos + (size_t)i];
    memcpy(v, &u, sizeof *v);
    e->pos += 8;
    return 0;
}

/* A tape str at e->pos: its bytes (pointing into the tape) and their
 * classification (PB_TX_*). The header's flags are hints and not used: the
 * bytes decide, as in the JSON writer. */
static DK_MUST int enc_str(pb_enc *e, const uint8_t **p, size_t *n, unsigned *f)
{
    size_t at = e->pos;
    uint32_t h;
    size_t len;
    DK_TRY(enc_u32(e, &h));
    len = h >> DK_STR_SHIFT;
    if (len > e->len - e->pos)
        return enc_bad(e, "tape string runs past the end of the tape", at);
    *p = e->tape + e->pos;
    *n = len;
    *f = pb_text_scan(*p, len);
    if (*f & PB_TX_BAD)
        return enc_bad(e, "tape string is not WTF-8", at);
    e->pos += len;
    return 0;
}

/* A NUL-terminated arena copy, for protobuf-c `string` fields. Never
 * protobuf_c_empty_string: protobuf-c does not pack a oneof string that
 * points to its default, and the oneof would be lost. */
static char *enc_cstr(pb_enc *e, const uint8_t *p, size_t n)
{
    char *s = dk_arena_alloc(e->a, n + 1);
    if (s == NULL)
        return NULL;
    if (n != 0)
        memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* Intern a key or class key; *tagged is its string index (PB_RAW_BIT for
 * the raw table). */
static DK_MUST int enc_intern(pb_enc *e, const uint8_t *p, size_t n, unsigned f,
                                  uint32_t *tagged)
{
    uint32_t h = pb_hash(p, n, PB_HASH_SEED);
    size_t mask, i;
    int raw = (f & (PB_TX_WTF8 | PB_TX_NUL)) != 0;
    uint32_t idx;

    if ((e->n_strs + e->n_raws + 1) * 2 > e->str_tab_cap) {
        size_t ncap = e->str_tab_cap == 0 ? 64 : e->str_tab_cap * 2;
        pb_str_slot *t = dk_arena_alloc(e->a, ncap * sizeof *t);
        if (t == NULL)
            return enc_oom(e);
        memset(t, 0, ncap * sizeof *t);
        for (i = 0; i < e->str_tab_cap; i++) {
            pb_str_slot s = e->str_tab[i];
            size_t j;
            if (s.ref == 0)
                continue;
            for (j = s.hash & (ncap - 1); t[j].ref != 0; j = (j + 1) & (ncap - 1))
                ;
            t[j] = s;
        }
        e->str_tab = t;
        e->str_tab_cap = ncap;
    }
    mask = e->str_tab_cap - 1;
    for (i = h & mask; e->str_tab[i].ref != 0; i = (i + 1) & mask) {
        pb_str_slot *s = &e->str_tab[i];
        if (s->hash == h && s->n == n && memcmp(s->p, p, n) == 0) {
            *tagged = s->ref - 1;
            return 0;
        }
    }
    if (e->n_strs + e->n_raws >= PB_TABLE_MAX)
        return dk_fail(e->err, DK_ERR_TOO_LARGE, "too many distinct keys", e->pos);
    if (raw) {
        void *arr = pb_more(e->a, e->raws, e->n_raws, &e->cap_raws, sizeof *e->raws);
        if (arr == NULL)
            return enc_oom(e);
        e->raws = arr;
        /* Points into the tape: packed before the call returns. */
        e->raws[e->n_raws].len = n;
        e->raws[e->n_raws].data = (uint8_t *)(uintptr_t)p;
        idx = (uint32_t)e->n_raws++ | PB_RAW_BIT;
    } else {
        char *s = enc_cstr(e, p, n);
        void *arr = pb_more(e->a, e->strs, e->n_strs, &e->cap_strs, sizeof *e->strs);
        if (s == NULL || arr == NULL)
            return enc_oom(e);
        e->strs = arr;
        e->strs[e->n_strs] = s;
        idx = (uint32_t)e->n_strs++;
    }
    e->str_tab[i].hash = h;
    e->str_tab[i].ref = idx + 1;
    e->str_tab[i].p = p;
    e->str_tab[i].n = n;
    *tagged = idx;
    return 0;
}

/* Intern a shape; *out is its index. keys may be moved by later pushes, so
 * a new shape copies them. */
static DK_MUST int enc_shape(pb_enc *e, uint32_t class_key, uint32_t version,
                                 const uint32_t *keys, size_t n, uint32_t *out)
{
    uint32_t h = PB_HASH_SEED;
    size_t mask, i;
    Darmok__Shape *s;

    h = pb_hash_u32(h, class_key);
    h = pb_hash_u32(h, version);
    h = pb_hash((const uint8_t *)keys, n * sizeof *keys, h);
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

/* Give the value *v a new node (the next referenceable index). */
static DK_MUST int enc_node(pb_enc *e, Darmok__Value *v, Darmok__Node **out)
{
    Darmok__Node *nd;
    void *arr;
    if (e->n_nodes >= PB_TABLE_MAX)
        return dk_fail(e->err, DK_ERR_TOO_LARGE, "too many objects", e->pos);
    nd = dk_arena_alloc(e->a, sizeof *nd);
    arr = pb_more(e->a, e->nodes, e->n_nodes, &e->cap_nodes, sizeof *e->nodes);
    if (nd == NULL || arr == NULL)
        return enc_oom(e);
    e->nodes = arr;
    darmok__node__init(nd);
    e->nodes[e->n_nodes] = nd;
    v->kind_case = DARMOK__VALUE__KIND_NODE;
    v->node = (uint32_t)e->n_nodes++;
    *out = nd;
    return 0;
}

static DK_MUST int enc_push(pb_enc *e, uint8_t op, uint32_t node, uint64_t n,
                                size_t at, uint32_t class_key, uint32_t version)
{
    pb_enc_frame *f;
    void *arr;
    if (e->n_frames >= e->max_depth)
        return dk_fail(e->err, DK_ERR_DEPTH, "nesting deeper than max_depth", at);
    arr = pb_more(e->a, e->frames, e->n_frames, &e->cap_frames, sizeof *e->frames);
    if (arr == NULL)
        return enc_oom(e);
    e->frames = arr;
    f = &e->frames[e->n_frames++];
    f->op = op;
    f->node = node;
    f->left = n;
    f->total = n;
    f->vbase = e->n_vals;
    f->kbase = e->n_keys;
    f->class_key = class_key;
    f->version = version;
    f->at = at;
    return 0;
}

/*
 * Read the value at e->pos into *v. Scalars are stored inline; anything
 * referenceable gets the next node index. Containers are opened (a frame is
 * pushed) and their children left to enc_run; Date, RegExp and binary values
 * are complete here.
 */
static DK_MUST int enc_value(pb_enc *e, Darmok__Value *v)
{
    size_t at = e->pos;
    uint8_t op = 0;
    uint32_t u = 0, n = 0;
    Darmok__Node *nd;

    DK_TRY(enc_u8(e, &op));
    switch (op) {
    case DK_T_UNDEF:
    case DK_T_NULL:
        v->kind_case = DARMOK__VALUE__KIND_SPECIAL;
        v->special = op == DK_T_UNDEF ? DARMOK__SPECIAL__SPECIAL_UNDEFINED
                                      : DARMOK__SPECIAL__SPECIAL_NULL;
        return 0;
    case DK_T_FALSE:
    case DK_T_TRUE:
        v->kind_case = DARMOK__VALUE__KIND_BOOLEAN;
        v->boolean = op == DK_T_TRUE;
        return 0;
    case DK_T_INT:
        DK_TRY(enc_u32(e, &u));
        v->kind_case = DARMOK__VALUE__KIND_INTEGER;
        v->integer = (int32_t)u;
        return 0;
    case DK_T_F64:
        v->kind_case = DARMOK__VALUE__KIND_NUMBER;
        return enc_f64(e, &v->number);
    case DK_T_BIGINT:
    case DK_T_STR: {
        const uint8_t *p;
        size_t len;
        unsigned f;
        DK_TRY(enc_str(e, &p, &len, &f));
        if (op == DK_T_BIGINT) {
            if (!dk_bigint_ok(p, len))
                return enc_bad(e, "tape BigInt is not a decimal integer", at);
            v->kind_case = DARMOK__VALUE__KIND_BIGINT;
            v->bigint = enc_cstr(e, p, len);
            return v->bigint == NULL ? enc_oom(e) : 0;
        }
        if (f & (PB_TX_WTF8 | PB_TX_NUL)) {
            v->kind_case = DARMOK__VALUE__KIND_STR_RAW;
            v->str_raw.len = len;
            v->str_raw.data = (uint8_t *)(uintptr_t)p; /* into the tape */
            return 0;
        }
        v->kind_case = DARMOK__VALUE__KIND_STR;
        v->str = enc_cstr(e, p, len);
        return v->str == NULL ? enc_oom(e) : 0;
    }
    case DK_T_ARRAY:
    case DK_T_OBJECT:
    case DK_T_NULLPROTO:
    case DK_T_ERROR:
    case DK_T_MAP:
    case DK_T_SET: {
        DK_TRY(enc_node(e, v, &nd));
        DK_TRY(enc_u32(e, &n));
        if (op == DK_T_ERROR && n < 2)
            return enc_bad(e, "tape Error must start with name and message", at);
        return enc_push(e, op, v->node, op == DK_T_MAP ? (uint64_t)n * 2 : n, at, 0, 0);
    }
    case DK_T_INSTANCE: {
        const uint8_t *p;
        size_t len;
        unsigned f;
        uint32_t key, version;
        DK_TRY(enc_node(e, v, &nd));
        DK_TRY(enc_str(e, &p, &len, &f));
        DK_TRY(enc_intern(e, p, len, f, &key));
        DK_TRY(enc_u32(e, &version));
        if (version == 0)
            return enc_bad(e, "tape instance version is 0", at);
        DK_TRY(enc_u32(e, &n));
        return enc_push(e, op, v->node, n, at, key, version);
    }
    case DK_T_DATE:
        DK_TRY(enc_node(e, v, &nd));
        nd->kind_case = DARMOK__NODE__KIND_DATE;
        DK_TRY(enc_f64(e, &nd->date));
        /* As the JSON writer: a time value or NaN; one NaN, and 0 for -0,
         * so that both formats carry the same dates bit for bit. */
        if (!pb_date_canon(&nd->date))
            return enc_bad(e, "date out of range or not an integer", at);
        return 0;
    case DK_T_REGEXP: {
        const uint8_t *p, *fp;
        size_t len, flen;
        unsigned f, ff;
        Darmok__RegExp *re;
        DK_TRY(enc_node(e, v, &nd));
        DK_TRY(enc_str(e, &p, &len, &f));
        DK_TRY(enc_str(e, &fp, &flen, &ff));
        if (ff & (PB_TX_WTF8 | PB_TX_NUL))
            return enc_bad(e, "tape RegExp flags contain U+0000 or a lone surrogate", at);
        re = dk_arena_alloc(e->a, sizeof *re);
        if (re == NULL)
            return enc_oom(e);
        darmok__reg_exp__init(re);
        if (f & (PB_TX_WTF8 | PB_TX_NUL)) {
            re->source_kind_case = DARMOK__REG_EXP__SOURCE_KIND_SOURCE_RAW;
            re->source_raw.len = len;
            re->source_raw.data = (uint8_t *)(uintptr_t)p;
        } else {
            re->source_kind_case = DARMOK__REG_EXP__SOURCE_KIND_SOURCE;
            re->source = enc_cstr(e, p, len);
        }
        re->flags = enc_cstr(e, fp, flen);
        if (re->flags == NULL ||
            (re->source_kind_case == DARMOK__REG_EXP__SOURCE_KIND_SOURCE && re->source == NULL))
            return enc_oom(e);
        nd->kind_case = DARMOK__NODE__KIND_REGEXP;
        nd->regexp = re;
        return 0;
    }
    case DK_T_BYTES: {
        uint8_t kind = 0;
        Darmok__Binary *bin;
        DK_TRY(enc_node(e, v, &nd));
        DK_TRY(enc_u8(e, &kind));
        DK_TRY(enc_u32(e, &n));
        if (kind >= DK_BYTES_KIND_COUNT)
            return enc_bad(e, "tape binary kind unknown", at);
        if (n % dk_bytes_size[kind] != 0)
            return enc_bad(e, "tape binary length not a multiple of its element size", at);
        if (n > e->len - e->pos)
            return enc_bad(e, "tape binary runs past the end of the tape", at);
        bin = dk_arena_alloc(e->a, sizeof *bin);
        if (bin == NULL)
            return enc_oom(e);
        darmok__binary__init(bin);
        bin->kind = (Darmok__BinaryKind)kind;
        bin->data.len = n;
        bin->data.data = (uint8_t *)(uintptr_t)(e->tape + e->pos);
        e->pos += n;
        nd->kind_case = DARMOK__NODE__KIND_BINARY;
        nd->binary = bin;
        return 0;
    }
    case DK_T_REF:
        DK_TRY(enc_u32(e, &u));
        if (u >= e->n_nodes)
            return enc_bad(e, "tape REF points forward", at);
        v->kind_case = DARMOK__VALUE__KIND_NODE;
        v->node = u;
        return 0;
    case DK_T_HOLE:
        return enc_bad(e, "tape HOLE outside an array", at);
    default:
        return enc_bad(e, "unknown tape op", at);
    }
}

/* The values vals[base..base+n) copied out of the value stack: an arena
 * array of n structs and the array of n pointers protobuf-c wants. */
static Darmok__Value **enc_commit(pb_enc *e, size_t base, size_t n)
{
    Darmok__Value **pp;
    Darmok__Value *vs;
    size_t i;
    if (n == 0)
        return NULL;
    pp = dk_arena_alloc(e->a, n * sizeof *pp);
    vs = dk_arena_alloc(e->a, n * sizeof *vs);
    if (pp == NULL || vs == NULL)
        return NULL;
    memcpy(vs, e->vals + base, n * sizeof *vs);
    for (i = 0; i < n; i++)
        pp[i] = &vs[i];
    return pp;
}

/* Close the top frame: move its children into its node. */
static DK_MUST int enc_close(pb_enc *e)
{
    pb_enc_frame *f = &e->frames[e->n_frames - 1];
    Darmok__Node *nd = e->nodes[f->node];
    size_t n = e->n_vals - f->vbase;
    Darmok__Value **pp = enc_commit(e, f->vbase, n);

    if (n != 0 && pp == NULL)
        return enc_oom(e);
    switch (f->op) {
    case DK_T_ARRAY: {
        Darmok__Array *arr = dk_arena_alloc(e->a, sizeof *arr);
        if (arr == NULL)
            return enc_oom(e);
        darmok__array__init(arr);
        arr->n_items = n;
        arr->items = pp;
        nd->kind_case = DARMOK__NODE__KIND_ARRAY;
        nd->array = arr;
        break;
    }
    case DK_T_SET: {
        Darmok__Set *set = dk_arena_alloc(e->a, sizeof *set);
        if (set == NULL)
            return enc_oom(e);
        darmok__set__init(set);
        set->n_values = n;
        set->values = pp;
        nd->kind_case = DARMOK__NODE__KIND_SET;
        nd->set = set;
        break;
    }
    case DK_T_MAP: {
        Darmok__Map *map = dk_arena_alloc(e->a, sizeof *map);
        size_t i;
        if (map == NULL)
            return enc_oom(e);
        darmok__map__init(map);
        map->n_keys = map->n_values = n / 2;
        if (n != 0) {
            /* pp holds key, value, key, value: split it in place. */
            Darmok__Value **vals = dk_arena_alloc(e->a, n / 2 * sizeof *vals);
            if (vals == NULL)
                return enc_oom(e);
            for (i = 0; i < n / 2; i++) {
                vals[i] = pp[2 * i + 1];
                pp[i] = pp[2 * i];
            }
            map->keys = pp;
            map->values = vals;
        }
        nd->kind_case = DARMOK__NODE__KIND_MAP;
        nd->map = map;
        break;
    }
    default: { /* records */
        Darmok__Record *rec = dk_arena_alloc(e->a, sizeof *rec);
        uint32_t shape = 0;
        if (rec == NULL)
            return enc_oom(e);
        size_t nk = e->n_keys - f->kbase;
        DK_TRY(enc_shape(e, f->class_key, f->version, nk ? e->keys + f->kbase : NULL, nk,
                         &shape));
        darmok__record__init(rec);
        rec->shape = shape;
        rec->n_values = n;
        rec->values = pp;
        nd->kind_case = f->op == DK_T_OBJECT      ? DARMOK__NODE__KIND_OBJECT
                        : f->op == DK_T_NULLPROTO ? DARMOK__NODE__KIND_NULL_PROTO
                        : f->op == DK_T_INSTANCE  ? DARMOK__NODE__KIND_INSTANCE
                                                  : DARMOK__NODE__KIND_ERROR;
        nd->object = rec; /* one union member for all four record kinds */
        e->n_keys = f->kbase;
        break;
    }
    }
    e->n_vals = f->vbase;
    e->n_frames--;
    return 0;
}

static int enc_is(const uint8_t *p, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    return n == k && memcmp(p, lit, k) == 0;
}

/* Walk the children of the open containers until all are closed. */
static DK_MUST int enc_run(pb_enc *e)
{
    while (e->n_frames > 0) {
        pb_enc_frame *f = &e->frames[e->n_frames - 1];
        Darmok__Value *v;
        void *arr;

        if (f->left == 0) {
            DK_TRY(enc_close(e));
            continue;
        }
        arr = pb_more(e->a, e->vals, e->n_vals, &e->cap_vals, sizeof *e->vals);
        if (arr == NULL)
            return enc_oom(e);
        e->vals = arr;
        v = &e->vals[e->n_vals];
        darmok__value__init(v);

        if (f->op == DK_T_ARRAY && e->pos < e->len && e->tape[e->pos] == DK_T_HOLE) {
            size_t at = e->pos++;
            uint32_t k;
            DK_TRY(enc_u32(e, &k));
            if (k == 0 || k > f->left)
                return enc_bad(e, "tape HOLE count is 0 or past the array's length", at);
            v->kind_case = DARMOK__VALUE__KIND_HOLE;
            v->hole = k;
            f->left -= k;
            e->n_vals++;
            continue;
        }
        if (f->op == DK_T_OBJECT || f->op == DK_T_NULLPROTO || f->op == DK_T_INSTANCE ||
            f->op == DK_T_ERROR) {
            const uint8_t *p;
            size_t len, at = e->pos;
            unsigned fl;
            uint32_t key;
            uint64_t i = f->total - f->left;
            DK_TRY(enc_str(e, &p, &len, &fl));
            if (f->op == DK_T_ERROR && ((i == 0 && !enc_is(p, len, "name")) ||
                                        (i == 1 && !enc_is(p, len, "message"))))
                return enc_bad(e, "tape Error must start with name and message", at);
            DK_TRY(enc_intern(e, p, len, fl, &key));
            arr = pb_more(e->a, e->keys, e->n_keys, &e->cap_keys, sizeof *e->keys);
            if (arr == NULL)
                return enc_oom(e);
            e->keys = arr;
            e->keys[e->n_keys++] = key;
        }
        f->left--;
        e->n_vals++;
        /* enc_value may push frames (moving e->frames) but never values:
         * v stays valid, f does not. */
        DK_TRY(enc_value(e, v));
    }
    return 0;
}

/* String indexes in their final form: raw entries follow the UTF-8 ones. */
static void enc_fix_indexes(pb_enc *e)
{
    size_t i, j;
    uint32_t base = (uint32_t)e->n_strs;
    for (i = 0; i < e->n_shapes; i++) {
        Darmok__Shape *s = e->shapes[i];
        if (s->class_key & PB_RAW_BIT)
            s->class_key = base + (s->class_key & ~PB_RAW_BIT);
        for (j = 0; j < s->n_fields; j++)
            if (s->fields[j] & PB_RAW_BIT)
                s->fields[j] = base + (s->fields[j] & ~PB_RAW_BIT);
    }
}

/* Tape -> Document bytes; see darmok.h. */
int dk_pb_write_opts(const uint8_t *tape, size_t len, const dk_limits *lim,
                     dk_arena *scratch, dk_buf *out, dk_err *err)
{
    pb_enc e;
    Darmok__Value root = DARMOK__VALUE__INIT;
    Darmok__Document doc = DARMOK__DOCUMENT__INIT;
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
    e.max_depth = lim && lim->max_depth ? lim->max_depth : DK_DEFAULT_MAX_DEPTH;

    if (enc_value(&e, &root) != DK_OK || enc_run(&e) != DK_OK)
        return (int)err->code;
    if (e.pos != e.len)
        return enc_bad(&e, "bytes after the tape's value", e.pos);
    enc_fix_indexes(&e);
    doc.format = DK_PB_FORMAT;
    doc.n_strings = e.n_strs;
    doc.strings = e.strs;
    doc.n_raw_strings = e.n_raws;
    doc.raw_strings = e.raws;
    doc.n_shapes = e.n_shapes;
    doc.shapes = e.shapes;
    doc.n_nodes = e.n_nodes;
    doc.nodes = e.nodes;
    doc.root = &root;

    /* protobuf-c sizes and packs by recursion over the schema's four
     * levels, never over the graph. */
    size = darmok__document__get_packed_size(&doc);
    if (size > DK_PB_MAX_OUT)
        return dk_fail(err, DK_ERR_TOO_LARGE, "protobuf output too large", 0);
    DK_TRY(dk_buf_reserve(out, size, err, 0));
    packed = darmok__document__pack(&doc, out->data);
    if (packed != size)
        return dk_fail(err, DK_ERR_MEMORY, "protobuf-c packed an unexpected size", 0);
    out->len = packed;
    return DK_OK;
}

/* ===================================================================== */
/* 4. Decoder                                                             */
/* ===================================================================== */

/* Document field numbers whose elements we locate for error offsets. */
enum {
    PB_DOC_STRINGS = 2,
    PB_DOC_RAW_STRINGS = 3,
    PB_DOC_SHAPES = 4,
    PB_DOC_NODES = 5,
    PB_DOC_ROOT = 6
};

/* Deepest message nesting the schema allows is 4 (Document > Node > Record
 * > Value); a margin for future revisions. */
#define PB_SCAN_NEST 8

typedef struct pb_dec_frame {
    const Darmok__Node *node;
    Darmok__Node__KindCase kind;
    const Darmok__Shape *shape; /* records */
    uint32_t idx;               /* node index */
    size_t pos;                 /* next child */
    size_t n;                   /* children: items, values, or 2 x map pairs */
} pb_dec_frame;

typedef struct pb_dec {
    dk_arena *a;
    dk_err *err;
    dk_buf *out;
    const uint8_t *in;
    size_t len;
    uint32_t max_depth;
    uint32_t max_length;
    size_t max_out; /* tape bytes allowed: the amplification bound */

    /* Offsets of Document elements, in wire order (= protobuf-c's order). */
    size_t *off[PB_DOC_ROOT + 1];
    size_t n_off[PB_DOC_ROOT + 1];
    size_t cap_off[PB_DOC_ROOT + 1];
    size_t root_at;
    int have_root_at;

    const Darmok__Document *doc;
    /* The combined string table: bytes, length, tape flags. */
    const uint8_t **tx_p;
    uint32_t *tx_n;
    uint8_t *tx_f;
    size_t n_tx;

    size_t next; /* nodes opened so far: the next first appearance */
    pb_dec_frame *frames;
    size_t n_frames, cap_frames;
} pb_dec;

static int dec_fail(pb_dec *d, dk_code code, const char *msg, size_t at)
{
    return dk_fail(d->err, code, msg, at);
}

static size_t dec_at(const pb_dec *d, int field, size_t i)
{
    return i < d->n_off[field] ? d->off[field][i] : 0;
}

/* Parse a varint of at most max bytes at in[*pos..end). 0: ok, *pos past it. */
static int pb_varint(const uint8_t *in, size_t *pos, size_t end, unsigned max, uint64_t *v)
{
    uint64_t r = 0;
    unsigned i;
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

/* Remember where element i of a Document field starts. */
static DK_MUST int dec_note(pb_dec *d, int field, size_t at)
{
    void *arr = pb_more(d->a, d->off[field], d->n_off[field], &d->cap_off[field], sizeof(size_t));
    if (arr == NULL)
        return dec_fail(d, DK_ERR_MEMORY, "out of memory", at);
    d->off[field] = arr;
    d->off[field][d->n_off[field]++] = at;
    return 0;
}

/*
 * Check the wire bytes against the descriptors, as protobuf-c will read
 * them, before protobuf-c does: every tag, varint and length in bounds, wire
 * types matching known fields, packed runs well-formed, no groups; string
 * fields UTF-8 without U+0000 (protobuf-c would cut them at the NUL); string
 * and bytes fields at most max_length bytes. Records where Document's
 * strings, shapes, nodes and root start. Iterative; sub-messages nest at
 * most PB_SCAN_NEST deep (the schema's own depth).
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
        fd = protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3));

        switch (wt) {
        case 0: /* varint */
            if (pb_varint(in, &pos, end, 10, &v) != 0)
                return dec_fail(d, DK_ERR_SYNTAX, "bad protobuf varint", pos);
            if (fd != NULL && !pb_is_varint_type(fd->type))
                return dec_fail(d, DK_ERR_SYNTAX, "protobuf wire type does not match the field", at);
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
            if (depth == 1 && fd->id >= PB_DOC_STRINGS && fd->id <= PB_DOC_NODES)
                DK_TRY(dec_note(d, (int)fd->id, at));
            if (depth == 1 && fd->id == PB_DOC_ROOT && !d->have_root_at) {
                d->root_at = at;
                d->have_root_at = 1;
            }
            if (fd->type == PROTOBUF_C_TYPE_STRING || fd->type == PROTOBUF_C_TYPE_BYTES) {
                if (n > d->max_length)
                    return dec_fail(d, DK_ERR_TOO_LARGE, "string or binary longer than max_length", at);
                if (fd->type == PROTOBUF_C_TYPE_STRING) {
                    unsigned f = pb_text_scan(in + start, n);
                    if (f & (PB_TX_BAD | PB_TX_WTF8))
                        return dec_fail(d, DK_ERR_SYNTAX, "protobuf string is not UTF-8", at);
                    if (f & PB_TX_NUL)
                        return dec_fail(d, DK_ERR_FORMAT,
                                        "U+0000 in a string field (darmok writes such strings as bytes)", at);
                }
            } else if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
                /* A singular message field given twice is merged by
                 * protobuf-c, and 1.4.1's merge fails on two Values with no
                 * member set. darmok never writes a field twice: refuse. */
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
                size_t p = start;
                if (n == 0)
                    return dec_fail(d, DK_ERR_FORMAT, "empty packed field", at);
                if (pb_is_varint_type(fd->type)) {
                    while (p < pos)
                        if (pb_varint(in, &p, pos, 10, &v) != 0)
                            return dec_fail(d, DK_ERR_SYNTAX, "bad varint in a packed field", p);
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

/* --- tape output ------------------------------------------------------- */

/* Room for n more tape bytes, within max_out (<= DK_PB_MAX_OUT): a
 * document whose string table makes it expand past that fails here. */
static DK_MUST int dec_room(pb_dec *d, size_t n, size_t at)
{
    if (n > d->max_out - d->out->len)
        return dec_fail(d, DK_ERR_TOO_LARGE,
                        "decoded document too large for its size (string table amplification)", at);
    if (d->out->cap - d->out->len >= n)
        return DK_OK;
    return dk_buf_reserve(d->out, n, d->err, at);
}

/* Writers below assume dec_room was called for their bytes. */
static void dec_u8_unsafe(pb_dec *d, unsigned v)
{
    d->out->data[d->out->len++] = (uint8_t)v;
}

static void dec_u32_unsafe(pb_dec *d, uint32_t v)
{
    uint8_t *p = d->out->data + d->out->len;
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    d->out->len += 4;
}

/* Doubles travel by address, never by value: on i386 a double passed by
 * value may go through the x87 stack, which quiets signalling NaNs, and the
 * tape promises every bit pattern survives. */
static void dec_f64_unsafe(pb_dec *d, const double *x)
{
    uint64_t u;
    int i;
    memcpy(&u, x, sizeof u);
    for (i = 0; i < 8; i++)
        d->out->data[d->out->len++] = (uint8_t)(u >> (8 * i));
}

static DK_MUST int dec_op(pb_dec *d, unsigned op, size_t at)
{
    DK_TRY(dec_room(d, 1, at));
    dec_u8_unsafe(d, op);
    return 0;
}

static DK_MUST int dec_op_u32(pb_dec *d, unsigned op, uint32_t v, size_t at)
{
    DK_TRY(dec_room(d, 5, at));
    dec_u8_unsafe(d, op);
    dec_u32_unsafe(d, v);
    return 0;
}

static DK_MUST int dec_op_f64(pb_dec *d, unsigned op, const double *x, size_t at)
{
    DK_TRY(dec_room(d, 9, at));
    dec_u8_unsafe(d, op);
    dec_f64_unsafe(d, x);
    return 0;
}

/* A tape str (header + bytes); f: its PB_TX_* classification. n is at most
 * max_length (checked by dec_scan), itself at most the tape's 2^30 - 1. */
static DK_MUST int dec_str(pb_dec *d, const uint8_t *p, size_t n, unsigned f, size_t at)
{
    DK_TRY(dec_room(d, 4 + n, at));
    dec_u32_unsafe(d, (uint32_t)n << DK_STR_SHIFT | (f & (DK_STR_ASCII | DK_STR_WTF8)));
    if (n != 0)
        memcpy(d->out->data + d->out->len, p, n);
    d->out->len += n;
    return 0;
}

/* A string stored as `string` (already UTF-8 and NUL-free, dec_scan) or as
 * WTF-8 `bytes` (checked here). */
static DK_MUST int dec_text(pb_dec *d, const char *s, const ProtobufCBinaryData *raw, size_t at)
{
    if (s != NULL) {
        size_t n = strlen(s);
        return dec_str(d, (const uint8_t *)s, n, pb_text_scan((const uint8_t *)s, n), at);
    } else {
        unsigned f = pb_text_scan(raw->data, raw->len);
        if (f & PB_TX_BAD)
            return dec_fail(d, DK_ERR_FORMAT, "raw string is not WTF-8", at);
        return dec_str(d, raw->data, raw->len, f, at);
    }
}

/* The string table entry i as a tape str. */
static DK_MUST int dec_key(pb_dec *d, uint32_t i, size_t at)
{
    return dec_str(d, d->tx_p[i], d->tx_n[i], d->tx_f[i], at);
}

/* --- validation of the tables -------------------------------------------- */

/* The combined string table, raw entries checked as WTF-8. */
static DK_MUST int dec_strings(pb_dec *d)
{
    const Darmok__Document *doc = d->doc;
    size_t i, n = doc->n_strings + doc->n_raw_strings;
    if (n > PB_TABLE_MAX)
        return dec_fail(d, DK_ERR_TOO_LARGE, "string table too large", 0);
    d->n_tx = n;
    if (n == 0)
        return 0;
    d->tx_p = dk_arena_alloc(d->a, n * sizeof *d->tx_p);
    d->tx_n = dk_arena_alloc(d->a, n * sizeof *d->tx_n);
    d->tx_f = dk_arena_alloc(d->a, n);
    if (d->tx_p == NULL || d->tx_n == NULL || d->tx_f == NULL)
        return dec_fail(d, DK_ERR_MEMORY, "out of memory", 0);
    for (i = 0; i < doc->n_strings; i++) {
        const uint8_t *p = (const uint8_t *)doc->strings[i];
        size_t len = strlen(doc->strings[i]);
        d->tx_p[i] = p;
        d->tx_n[i] = (uint32_t)len;
        d->tx_f[i] = (uint8_t)pb_text_scan(p, len);
    }
    for (i = 0; i < doc->n_raw_strings; i++) {
        const ProtobufCBinaryData *r = &doc->raw_strings[i];
        unsigned f = pb_text_scan(r->data, r->len);
        size_t k = doc->n_strings + i;
        if (f & PB_TX_BAD)
            return dec_fail(d, DK_ERR_FORMAT, "raw string is not WTF-8",
                            dec_at(d, PB_DOC_RAW_STRINGS, i));
        d->tx_p[k] = r->data;
        d->tx_n[k] = (uint32_t)r->len;
        d->tx_f[k] = (uint8_t)f;
    }
    return 0;
}

static DK_MUST int dec_shapes(pb_dec *d)
{
    const Darmok__Document *doc = d->doc;
    size_t i, j;
    for (i = 0; i < doc->n_shapes; i++) {
        const Darmok__Shape *s = doc->shapes[i];
        size_t at = dec_at(d, PB_DOC_SHAPES, i);
        if (s->version == 0 && s->class_key != 0)
            return dec_fail(d, DK_ERR_FORMAT, "key-only shape with a class key", at);
        if (s->version != 0 && s->class_key >= d->n_tx)
            return dec_fail(d, DK_ERR_FORMAT, "shape class key out of range", at);
        for (j = 0; j < s->n_fields; j++)
            if (s->fields[j] >= d->n_tx)
                return dec_fail(d, DK_ERR_FORMAT, "shape field name out of range", at);
    }
    return 0;
}

static int dec_key_is(const pb_dec *d, uint32_t i, const char *lit)
{
    size_t k = strlen(lit);
    return d->tx_n[i] == k && memcmp(d->tx_p[i], lit, k) == 0;
}

/* --- the walk ------------------------------------------------------------ */

/* Open node idx (its first appearance): check it, write its op and header,
 * and push a frame for its children (containers) or write it whole. */
static DK_MUST int dec_open(pb_dec *d, uint32_t idx)
{
    const Darmok__Node *nd = d->doc->nodes[idx];
    size_t at = dec_at(d, PB_DOC_NODES, idx);
    const Darmok__Shape *shape = NULL;
    size_t n = 0;
    void *arr;
    pb_dec_frame *f;

    d->next++;
    switch (nd->kind_case) {
    case DARMOK__NODE__KIND_DATE: {
        double ms = nd->date;
        if (!pb_date_canon(&ms))
            return dec_fail(d, DK_ERR_FORMAT, "date out of range or not an integer", at);
        return dec_op_f64(d, DK_T_DATE, &ms, at);
    }
    case DARMOK__NODE__KIND_REGEXP: {
        const Darmok__RegExp *re = nd->regexp;
        DK_TRY(dec_op(d, DK_T_REGEXP, at));
        if (re->source_kind_case == DARMOK__REG_EXP__SOURCE_KIND_SOURCE)
            DK_TRY(dec_text(d, re->source, NULL, at));
        else if (re->source_kind_case == DARMOK__REG_EXP__SOURCE_KIND_SOURCE_RAW)
            DK_TRY(dec_text(d, NULL, &re->source_raw, at));
        else
            return dec_fail(d, DK_ERR_FORMAT, "RegExp without a source", at);
        return dec_text(d, re->flags, NULL, at);
    }
    case DARMOK__NODE__KIND_BINARY: {
        const Darmok__Binary *b = nd->binary;
        unsigned kind = (unsigned)b->kind;
        if (kind >= DK_BYTES_KIND_COUNT)
            return dec_fail(d, DK_ERR_FORMAT, "unknown binary kind", at);
        if (b->data.len % dk_bytes_size[kind] != 0)
            return dec_fail(d, DK_ERR_FORMAT, "binary length not a multiple of its element size", at);
        DK_TRY(dec_room(d, 6 + b->data.len, at));
        dec_u8_unsafe(d, DK_T_BYTES);
        dec_u8_unsafe(d, kind);
        dec_u32_unsafe(d, (uint32_t)b->data.len);
        if (b->data.len != 0)
            memcpy(d->out->data + d->out->len, b->data.data, b->data.len);
        d->out->len += b->data.len;
        return 0;
    }
    case DARMOK__NODE__KIND_ARRAY: {
        const Darmok__Array *a = nd->array;
        uint64_t slots = 0;
        size_t i;
        for (i = 0; i < a->n_items; i++) {
            const Darmok__Value *v = a->items[i];
            if (v->kind_case == DARMOK__VALUE__KIND_HOLE) {
                if (v->hole == 0)
                    return dec_fail(d, DK_ERR_FORMAT, "hole count 0", at);
                slots += v->hole;
            } else {
                slots++;
            }
            if (slots > d->max_length)
                return dec_fail(d, DK_ERR_TOO_LARGE, "array longer than max_length", at);
        }
        n = a->n_items;
        DK_TRY(dec_op_u32(d, DK_T_ARRAY, (uint32_t)slots, at));
        break;
    }
    case DARMOK__NODE__KIND_OBJECT:
    case DARMOK__NODE__KIND_NULL_PROTO:
    case DARMOK__NODE__KIND_INSTANCE:
    case DARMOK__NODE__KIND_ERROR: {
        const Darmok__Record *r = nd->object; /* same member for all four */
        int is_class = nd->kind_case == DARMOK__NODE__KIND_INSTANCE;
        if (r->shape >= d->doc->n_shapes)
            return dec_fail(d, DK_ERR_FORMAT, "record shape out of range", at);
        shape = d->doc->shapes[r->shape];
        if (is_class != (shape->version != 0))
            return dec_fail(d, DK_ERR_FORMAT,
                            is_class ? "instance with a key-only shape"
                                     : "object or Error with a class shape", at);
        if (shape->n_fields != r->n_values)
            return dec_fail(d, DK_ERR_FORMAT, "record value count differs from its shape", at);
        if (nd->kind_case == DARMOK__NODE__KIND_ERROR &&
            (shape->n_fields < 2 || !dec_key_is(d, shape->fields[0], "name") ||
             !dec_key_is(d, shape->fields[1], "message")))
            return dec_fail(d, DK_ERR_FORMAT, "Error must start with name and message", at);
        if (r->n_values > d->max_length)
            return dec_fail(d, DK_ERR_TOO_LARGE, "more members than max_length", at);
        n = r->n_values;
        if (is_class) {
            DK_TRY(dec_op(d, DK_T_INSTANCE, at));
            DK_TRY(dec_key(d, shape->class_key, at));
            DK_TRY(dec_room(d, 8, at));
            dec_u32_unsafe(d, shape->version);
            dec_u32_unsafe(d, (uint32_t)n);
        } else {
            unsigned op = nd->kind_case == DARMOK__NODE__KIND_OBJECT      ? DK_T_OBJECT
                          : nd->kind_case == DARMOK__NODE__KIND_NULL_PROTO ? DK_T_NULLPROTO
                                                                            : DK_T_ERROR;
            DK_TRY(dec_op_u32(d, op, (uint32_t)n, at));
        }
        break;
    }
    case DARMOK__NODE__KIND_MAP:
        if (nd->map->n_keys != nd->map->n_values)
            return dec_fail(d, DK_ERR_FORMAT, "Map key and value counts differ", at);
        if (nd->map->n_keys > d->max_length)
            return dec_fail(d, DK_ERR_TOO_LARGE, "Map larger than max_length", at);
        n = nd->map->n_keys * 2;
        DK_TRY(dec_op_u32(d, DK_T_MAP, (uint32_t)nd->map->n_keys, at));
        break;
    case DARMOK__NODE__KIND_SET:
        if (nd->set->n_values > d->max_length)
            return dec_fail(d, DK_ERR_TOO_LARGE, "Set larger than max_length", at);
        n = nd->set->n_values;
        DK_TRY(dec_op_u32(d, DK_T_SET, (uint32_t)n, at));
        break;
    default:
        return dec_fail(d, DK_ERR_FORMAT, "node without a kind", at);
    }

    /* A container: entering it adds one level. */
    if (d->n_frames >= d->max_depth)
        return dec_fail(d, DK_ERR_DEPTH, "nesting deeper than max_depth", at);
    arr = pb_more(d->a, d->frames, d->n_frames, &d->cap_frames, sizeof *d->frames);
    if (arr == NULL)
        return dec_fail(d, DK_ERR_MEMORY, "out of memory", at);
    d->frames = arr;
    f = &d->frames[d->n_frames++];
    f->node = nd;
    f->kind = nd->kind_case;
    f->shape = shape;
    f->idx = idx;
    f->pos = 0;
    f->n = n;
    return 0;
}

/* Write one value. in_array: holes allowed. at: offset for errors (the
 * enclosing node, or the root). */
static DK_MUST int dec_value(pb_dec *d, const Darmok__Value *v, int in_array, size_t at)
{
    switch (v->kind_case) {
    case DARMOK__VALUE__KIND_SPECIAL:
        if (v->special == DARMOK__SPECIAL__SPECIAL_UNDEFINED)
            return dec_op(d, DK_T_UNDEF, at);
        if (v->special == DARMOK__SPECIAL__SPECIAL_NULL)
            return dec_op(d, DK_T_NULL, at);
        return dec_fail(d, DK_ERR_FORMAT, "unknown Special value", at);
    case DARMOK__VALUE__KIND_BOOLEAN:
        return dec_op(d, v->boolean ? DK_T_TRUE : DK_T_FALSE, at);
    case DARMOK__VALUE__KIND_INTEGER:
        return dec_op_u32(d, DK_T_INT, (uint32_t)v->integer, at);
    case DARMOK__VALUE__KIND_NUMBER:
        return dec_op_f64(d, DK_T_F64, &v->number, at);
    case DARMOK__VALUE__KIND_STR:
        DK_TRY(dec_op(d, DK_T_STR, at));
        return dec_text(d, v->str, NULL, at);
    case DARMOK__VALUE__KIND_STR_RAW:
        DK_TRY(dec_op(d, DK_T_STR, at));
        return dec_text(d, NULL, &v->str_raw, at);
    case DARMOK__VALUE__KIND_BIGINT: {
        size_t n = strlen(v->bigint);
        if (!dk_bigint_ok((const uint8_t *)v->bigint, n))
            return dec_fail(d, DK_ERR_FORMAT, "BigInt is not a decimal integer", at);
        DK_TRY(dec_op(d, DK_T_BIGINT, at));
        return dec_str(d, (const uint8_t *)v->bigint, n, DK_STR_ASCII, at);
    }
    case DARMOK__VALUE__KIND_NODE:
        if (v->node < d->next)
            return dec_op_u32(d, DK_T_REF, v->node, at);
        if (v->node >= d->doc->n_nodes)
            return dec_fail(d, DK_ERR_FORMAT, "node index out of range", at);
        if (v->node > d->next)
            return dec_fail(d, DK_ERR_FORMAT, "node index skips ahead of document order", at);
        return dec_open(d, v->node);
    case DARMOK__VALUE__KIND_HOLE:
        if (!in_array)
            return dec_fail(d, DK_ERR_FORMAT, "hole outside an array", at);
        return dec_op_u32(d, DK_T_HOLE, v->hole, at);
    default:
        return dec_fail(d, DK_ERR_FORMAT, "value without a kind", at);
    }
}

/* Walk from the root until every open container is closed. */
static DK_MUST int dec_walk(pb_dec *d)
{
    DK_TRY(dec_value(d, d->doc->root, 0, d->root_at));
    while (d->n_frames > 0) {
        pb_dec_frame *f = &d->frames[d->n_frames - 1];
        const Darmok__Value *v;
        size_t at = dec_at(d, PB_DOC_NODES, f->idx);
        size_t i;
        if (f->pos == f->n) {
            d->n_frames--;
            continue;
        }
        i = f->pos++;
        switch (f->kind) {
        case DARMOK__NODE__KIND_ARRAY:
            v = f->node->array->items[i];
            break;
        case DARMOK__NODE__KIND_MAP:
            v = (i & 1) ? f->node->map->values[i / 2] : f->node->map->keys[i / 2];
            break;
        case DARMOK__NODE__KIND_SET:
            v = f->node->set->values[i];
            break;
        default: /* records: key, then value */
            DK_TRY(dec_key(d, f->shape->fields[i], at));
            v = f->node->object->values[i];
            break;
        }
        /* dec_value may push frames and move d->frames: f is dead now. */
        DK_TRY(dec_value(d, v, f->kind == DARMOK__NODE__KIND_ARRAY, at));
    }
    if (d->next != d->doc->n_nodes)
        return dec_fail(d, DK_ERR_FORMAT, "node not reachable from the root",
                        dec_at(d, PB_DOC_NODES, d->next));
    return 0;
}

/* Document bytes -> tape; see darmok.h. */
int dk_pb_read_opts(const uint8_t *pb, size_t len, const dk_limits *lim,
                    size_t max_out, dk_arena *scratch, dk_buf *tape_out,
                    dk_err *err)
{
    pb_dec d;
    pb_alloc_ctx ac;
    ProtobufCAllocator alloc;
    Darmok__Document *doc;

    err->code = DK_OK; /* zeroed now; the first failure fills it */
    err->msg = NULL;
    err->pos = 0;

    tape_out->len = 0;
    memset(&d, 0, sizeof d);
    d.a = scratch;
    d.err = err;
    d.out = tape_out;
    d.in = pb;
    d.len = len;
    d.max_depth = lim && lim->max_depth ? lim->max_depth : DK_DEFAULT_MAX_DEPTH;
    d.max_length = lim && lim->max_length && lim->max_length < DK_DEFAULT_MAX_LENGTH
                       ? lim->max_length
                       : DK_DEFAULT_MAX_LENGTH;
    if (len > DK_PB_MAX_OUT)
        return dec_fail(&d, DK_ERR_TOO_LARGE, "input too large", 0);
    if (max_out == 0) /* len < 2^31: no overflow in 64 bits */
        max_out = (size_t)((uint64_t)len * DK_PB_EXPANSION < DK_PB_MAX_OUT - DK_PB_EXPANSION_FLOOR
                               ? (uint64_t)len * DK_PB_EXPANSION + DK_PB_EXPANSION_FLOOR
                               : DK_PB_MAX_OUT);
    d.max_out = max_out < DK_PB_MAX_OUT ? max_out : DK_PB_MAX_OUT;
    DK_TRY(dec_scan(&d));

    ac.a = scratch;
    ac.failed = 0;
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
    if (doc->root == NULL)
        return dec_fail(&d, DK_ERR_FORMAT, "document without a root value", 0);
    if (doc->n_nodes > PB_TABLE_MAX || doc->n_shapes > PB_TABLE_MAX)
        return dec_fail(&d, DK_ERR_TOO_LARGE, "too many nodes or shapes", 0);
    if (dec_strings(&d) != DK_OK || dec_shapes(&d) != DK_OK || dec_walk(&d) != DK_OK) {
        tape_out->len = 0; /* a failure leaves no partial tape */
        return (int)err->code;
    }
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

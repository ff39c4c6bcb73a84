/*
 * dk_pb_read.c - darmok's protobuf reader: darmok.Document bytes -> tape
 * (dk_pb_read_opts, dk_pb_read_ex).
 *
 * Check the wire bytes ourselves first (so errors carry byte offsets and
 * protobuf-c never sees malformed data), unpack with protobuf-c into the
 * arena, then walk the kinds stream iteratively, validating as we go, and
 * write the tape. Byte offsets of stream entries are found again in the
 * input only when an error is reported (pb_elem_at_unsafe). The wire
 * check and that search are dk_pb_wire.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dk_pb.h"
#include "dk_u16.h"

/*
 * Whether b, an entry protobuf-c copied into the arena (readable
 * DK_ARENA_SLACK >= DK_PLAIN_RUN bytes past its end, see pb_pc_alloc), is
 * short and ASCII, as most keys and many values are: one mask of the bytes
 * in place of pb_text_scan's call, its set-up and a byte loop.
 */
static DK_INLINE int pb_short_ascii(const ProtobufCBinaryData *b)
{
    size_t n = b->len;
    dk_runmask m;
    if (n - 1 >= DK_PLAIN_RUN) return 0;
    m = dk_ascii_mask(b->data);
    if (n < DK_PLAIN_RUN) m = dk_mask_before(m, (unsigned)n);
    return m == 0;
}

/* pb_text_scan of such an entry, without its call when pb_short_ascii:
 * same results and, with d, same writes (none for ASCII). */
static DK_INLINE unsigned pb_text_class(const ProtobufCBinaryData *b, uint8_t *d, size_t *units)
{
    if (pb_short_ascii(b)) return PB_TX_ASCII;
    return pb_text_scan(b->data, b->len, d, units);
}

typedef struct pb_dec_frame {
    Darmok__Kind kind;          /* the container's Kind */
    const Darmok__Shape *shape; /* records; NULL for the others */
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
    size_t max_out;      /* tape bytes allowed: the amplification bound */
    /* The walk writes the tape through w, the next byte, and sets out->len
     * only where it is read (dec_sync): a write then loads and stores one
     * pointer, not d->out and its len. */
    uint8_t *w;
    uint8_t *w_room;  /* where both the budget and out's capacity end:
                       * out->data + min(out->cap, max_out); w never
                       * passes it (dec_room_set) */
    uint8_t *w_cap;   /* out->data + out->cap */
    dk_buf *u16;      /* UTF-16 side table (dk_pb_read_ex), or NULL; not
                       * charged to max_out (dec_entry_room) */
    uint32_t *key_js; /* DK_READ_KEYREFS: per strings entry, its member key
                       * index once written in full (UINT32_MAX before) */
    uint32_t n_keys;  /* member keys written in full */

    const Darmok__Document *doc;
    uint8_t *str_f;    /* tape str flags of each strings entry */
    uint8_t *text_f;   /* and of each texts entry, once dec_text read it */
    uint32_t *text_at; /* DK_READ_STRREFS: the tape offset of each texts
                        * entry's str, once dec_text wrote it; else NULL */

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

/* A document-level failure at element i of a Document field. */
static int dec_bad(pb_dec *d, dk_code code, const char *msg, unsigned field, size_t i)
{
    return dk_fail(d->err, code, msg, pb_elem_at_unsafe(d->in, d->len, field, i));
}

/* The same, at the Kind being decoded (d->ki has moved past it). */
static int dec_bad_here(pb_dec *d, dk_code code, const char *msg)
{
    return dec_bad(d, code, msg, PB_F_KINDS, d->ki - 1);
}

/* --- tape output ------------------------------------------------------- */

/* The tape's length so far. */
static DK_INLINE size_t dec_at(const pb_dec *d)
{
    return (size_t)(d->w - d->out->data);
}

/* out->len made true again, before out itself is looked at or grown
 * (without a buffer yet, it is 0 and w NULL). */
static void dec_sync(pb_dec *d)
{
    if (d->w != NULL) d->out->len = dec_at(d);
}

/* n more tape bytes within max_out (<= DK_PB_MAX_OUT): a document whose
 * string table or back-references make it expand past that fails here.
 * It syncs out->len itself, so no caller can hand it a stale length. */
static DK_MUST int dec_budget(pb_dec *d, size_t n)
{
    size_t used;
    dec_sync(d);
    used = d->out->len;
    if (used > d->max_out || n > d->max_out - used)
        return dec_bad_here(d, DK_ERR_TOO_LARGE,
                            "decoded document too large for its size (string table amplification)");
    return DK_OK;
}

/* The cursors from out (synced): w at out->len, and w <= w_room holds,
 * as out->len <= out->cap and out->len <= max_out (dec_budget was checked
 * for every byte written). */
static void dec_room_set(pb_dec *d)
{
    dk_buf *o = d->out;
    if (o->data == NULL) { /* no buffer yet: no room, and no arithmetic on NULL */
        d->w = d->w_cap = d->w_room = NULL;
        return;
    }
    d->w = o->data + o->len;
    d->w_cap = o->data + o->cap;
    d->w_room = o->data + (o->cap < d->max_out ? o->cap : d->max_out);
}

/* dec_room's step when the budget or the capacity may be short: the
 * checks again, in their order, and the failure or the growth. */
static DK_COLD DK_MUST int dec_room_slow(pb_dec *d, size_t n)
{
    dec_sync(d);
    DK_TRY(dec_budget(d, n));
    if (d->out->cap - d->out->len < n) DK_TRY(dk_buf_reserve(d->out, n, d->err, 0));
    dec_room_set(d);
    return DK_OK;
}

/* Room for n more tape bytes, within the budget. Every value asks, so the
 * common case (within both: one comparison against w_room) is inline and
 * the rest a call. */
static DK_MUST DK_INLINE int dec_room(pb_dec *d, size_t n)
{
    if (n <= (uintptr_t)d->w_room - (uintptr_t)d->w) return DK_OK; /* both NULL before a buffer */
    return dec_room_slow(d, n);
}

/* Writers below assume dec_room was called for their bytes. Each reads w
 * once, before its stores, which may alias it. */
static DK_INLINE void dec_u8_unsafe(pb_dec *d, unsigned v)
{
    uint8_t *p = d->w;
    *p = (uint8_t)v;
    d->w = p + 1;
}

/* v at p, one 4-byte store where the host is little-endian, as the tape
 * is. */
static DK_INLINE void dec_put32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 4);
#else
    dk_wr32(p, v);
#endif
}

static DK_INLINE void dec_u32_unsafe(pb_dec *d, uint32_t v)
{
    uint8_t *p = d->w;
    dec_put32(p, v);
    d->w = p + 4;
}

/* Doubles travel by address, never by value: on i386 a double passed by
 * value may go through the x87 stack, which changes bits, and the tape
 * promises every bit pattern survives (NaN's aside: the number Kind makes
 * every NaN the canonical one before it gets here; dates have their own
 * canonical form). */
static DK_INLINE void dec_f64_unsafe(pb_dec *d, const double *x)
{
    uint64_t u;
    uint8_t *p = d->w;
    memcpy(&u, x, sizeof u);
    dk_wr64(p, u);
    d->w = p + 8;
}

static DK_MUST DK_INLINE int dec_op(pb_dec *d, unsigned op)
{
    DK_TRY(dec_room(d, 1));
    dec_u8_unsafe(d, op);
    return 0;
}

static DK_MUST DK_INLINE int dec_op_u32(pb_dec *d, unsigned op, uint32_t v)
{
    uint8_t *p;
    DK_TRY(dec_room(d, 5));
    p = d->w;
    p[0] = (uint8_t)op;
    dec_put32(p + 1, v);
    d->w = p + 5;
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
    uint8_t *p = d->w;
    size_t n = b->len;
    dec_put32(p, (uint32_t)n << DK_STR_SHIFT | f);
    p += 4;
    if (n != 0) { /* an empty entry's data may be NULL */
        if (n <= 16 && d->w_cap - p >= 16)
            memcpy(p, b->data, 16); /* see dk_put_short */
        else
            memcpy(p, b->data, n);
    }
    d->w = p + n;
}

/*
 * Side-table entries (dk_pb_read_ex) are made in two steps (dk_u16.h):
 * room for the largest entry a str of len bytes can need, where its units
 * are written; then the entry is committed at its real size.
 *
 * Entries are not charged to max_out: they only save JS work (it makes
 * every string from the tape bytes without them), so they must not fail
 * a document that decodes without them; charged, they failed documents
 * darmok itself writes (a short string repeated, each copy with its
 * units). The table has a bound of its own instead, half of max_out
 * (PB_U16_SHARE): a str whose entry could pass it gets none (*units_at
 * NULL), and JS makes it from its bytes.
 */
#define PB_U16_SHARE 2
static DK_MUST DK_INLINE int dec_entry_room(pb_dec *d, size_t len, uint8_t **units_at)
{
    return dk_u16_room(d->u16, len, d->max_out / PB_U16_SHARE, units_at, d->err, 0);
}

/* A tape str (header + bytes), and its side-table entry when it is not
 * ASCII and a table is made; f: its tape flags. b->len is at most
 * max_str (checked by pb_wire_check): max_length capped at the tape's 2^30 - 1. */
static DK_MUST DK_INLINE int dec_str(pb_dec *d, const ProtobufCBinaryData *b, unsigned f)
{
    size_t at = dec_at(d);
    uint8_t *units_at;
    DK_TRY(dec_room(d, 4 + b->len));
    dec_str_unsafe(d, b, f);
    if (d->u16 == NULL || (f & DK_STR_ASCII)) return 0;
    DK_TRY(dec_entry_room(d, b->len, &units_at));
    if (units_at != NULL) dk_u16_commit(d->u16, at, dk_wtf8_to_utf16(b->data, b->len, units_at));
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
    if (d->ii == d->doc->n_ints) return dec_bad_here(d, DK_ERR_FORMAT, "ints stream ends early");
    *v = d->doc->ints[d->ii++];
    return 0;
}

/*
 * The op byte op (0: none) and the next texts entry as a tape str. Texts
 * are read in order, each once (a STRING_REF names one already read, and
 * unused entries fail the document), so each is checked as WTF-8 here, on
 * first use: with a side table, in the same pass that writes its UTF-16
 * units. A short ASCII text, most of them, needs neither the pass nor room
 * in the table.
 */
static DK_MUST int dec_text(pb_dec *d, unsigned op)
{
    const ProtobufCBinaryData *b;
    size_t i = d->ti, at, units = 0, opn = op != 0;
    uint8_t *units_at = NULL;
    unsigned f;
    if (i == d->doc->n_texts) {
        if (opn) DK_TRY(dec_room(d, 1)); /* the failures in the order they always came */
        return dec_bad_here(d, DK_ERR_FORMAT, "texts stream ends early");
    }
    b = &d->doc->texts[i];
    /* the same steps, in the same order, with a table or without: the
     * outcome of a document never depends on whether JS asked for one */
    DK_TRY(dec_room(d, opn + 4 + b->len));
    if (opn) dec_u8_unsafe(d, op);
    at = dec_at(d);
    if (pb_short_ascii(b)) {
        f = PB_TX_ASCII;
    } else {
        if (d->u16 != NULL) DK_TRY(dec_entry_room(d, b->len, &units_at));
        f = pb_text_scan(b->data, b->len, units_at, &units);
        if (f & PB_TX_BAD) return dec_bad(d, DK_ERR_FORMAT, "string is not WTF-8", PB_F_TEXTS, i);
    }
    d->text_f[i] = (uint8_t)f;
    if (d->text_at != NULL) d->text_at[i] = (uint32_t)at; /* at < max_out <= INT32_MAX */
    d->ti++;
    dec_str_unsafe(d, b, f);
    if (units_at != NULL && !(f & PB_TX_ASCII)) dk_u16_commit(d->u16, at, units);
    return 0;
}

/* --- validation of the tables -------------------------------------------- */

/* Classify a table of WTF-8 byte strings into tape flags; FORMAT at the
 * first entry that is not WTF-8. */
static DK_MUST int dec_wtf8(pb_dec *d, const ProtobufCBinaryData *s, size_t n, unsigned field,
                            uint8_t **flags)
{
    size_t i;
    if (n == 0) return 0;
    *flags = dk_arena_alloc(d->a, n);
    if (*flags == NULL) return dec_fail(d, DK_ERR_MEMORY, "out of memory", 0);
    for (i = 0; i < n; i++) {
        unsigned f = pb_text_class(&s[i], NULL, NULL);
        if (f & PB_TX_BAD) return dec_bad(d, DK_ERR_FORMAT, "string is not WTF-8", field, i);
        (*flags)[i] = (uint8_t)f;
    }
    return 0;
}

/* Room for the flags of the texts entries, and with DK_READ_STRREFS their
 * tape offsets, set by dec_text as each is read. */
static DK_MUST int dec_text_flags(pb_dec *d, uint32_t flags)
{
    size_t n = d->doc->n_texts;
    if (n == 0) return 0;
    d->text_f = dk_arena_alloc(d->a, n);
    if (d->text_f == NULL) return dec_fail(d, DK_ERR_MEMORY, "out of memory", 0);
    if (flags & DK_READ_STRREFS) {
        d->text_at = dk_arena_alloc(d->a, n * sizeof *d->text_at); /* n <= PB_TABLE_MAX */
        if (d->text_at == NULL) return dec_fail(d, DK_ERR_MEMORY, "out of memory", 0);
    }
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
        if (arr == NULL) return dec_fail(d, DK_ERR_MEMORY, "out of memory", 0);
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
        return dec_bad_here(d, DK_ERR_TOO_LONG, "more members than max_length");
    if (is_class) {
        DK_TRY(dec_op(d, DK_T_INSTANCE));
        DK_TRY(dec_key(d, shape->class_key));
        DK_TRY(dec_room(d, 8));
        dec_u32_unsafe(d, shape->version);
        dec_u32_unsafe(d, (uint32_t)shape->n_fields);
    } else {
        unsigned op = k == DARMOK__KIND__KIND_OBJECT       ? DK_T_OBJECT
                      : k == DARMOK__KIND__KIND_NULL_PROTO ? DK_T_NULLPROTO
                                                           : DK_T_ERROR;
        DK_TRY(dec_op_u32(d, op, (uint32_t)shape->n_fields));
    }
    return dec_push(d, k, shape->n_fields, shape);
}

/*
 * The shortest ASCII text a STRING_REF names by DK_T_STRREF; shorter ones
 * are copied: JS takes a short ASCII string from its bytes through a
 * cache (one string for all the copies) faster than from a reference's
 * Map, and a copy costs the tape at most (5 + PB_STRREF_MIN - 1) / 2
 * bytes per input byte (a reference is 2), well within the bound. Other texts always go as references.
 */
#define PB_STRREF_MIN DK_U16_SRC_ASCII_MIN

/* A value with identity: it takes the next REF index. */
static DK_MUST DK_INLINE int dec_ident(pb_dec *d)
{
    if (d->n_refs == UINT32_MAX) return dec_bad_here(d, DK_ERR_TOO_LARGE, "too many objects");
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
    case DARMOK__KIND__KIND_UNDEFINED: return dec_op(d, DK_T_UNDEF);
    case DARMOK__KIND__KIND_NULL: return dec_op(d, DK_T_NULL);
    case DARMOK__KIND__KIND_FALSE: return dec_op(d, DK_T_FALSE);
    case DARMOK__KIND__KIND_TRUE: return dec_op(d, DK_T_TRUE);
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
    case DARMOK__KIND__KIND_STRING: return dec_text(d, DK_T_STR);
    case DARMOK__KIND__KIND_STRING_REF:
        DK_TRY(dec_count(d, &c));
        if (c >= d->ti)
            return dec_bad(d, DK_ERR_FORMAT, "string reference to a texts entry not yet read",
                           PB_F_COUNTS, d->ci - 1);
        if (d->text_at != NULL &&
            (doc->texts[c].len >= PB_STRREF_MIN || !(d->text_f[c] & DK_STR_ASCII)))
            return dec_op_u32(d, DK_T_STRREF, d->text_at[c]);
        DK_TRY(dec_op(d, DK_T_STR));
        return dec_str(d, &doc->texts[c], d->text_f[c]);
    case DARMOK__KIND__KIND_BIGINT:
        if (d->ti == doc->n_texts) return dec_bad_here(d, DK_ERR_FORMAT, "texts stream ends early");
        if (!dk_bigint_ok(doc->texts[d->ti].data, doc->texts[d->ti].len))
            return dec_bad(d, DK_ERR_FORMAT, "BigInt is not a decimal integer", PB_F_TEXTS, d->ti);
        return dec_text(d, DK_T_BIGINT);
    case DARMOK__KIND__KIND_ARRAY:
        DK_TRY(dec_ident(d));
        DK_TRY(dec_count(d, &c));
        if (c > d->max_length)
            return dec_bad_here(d, DK_ERR_TOO_LONG, "array longer than max_length");
        DK_TRY(dec_op_u32(d, DK_T_ARRAY, c));
        return dec_push(d, k, c, NULL);
    case DARMOK__KIND__KIND_OBJECT:
    case DARMOK__KIND__KIND_NULL_PROTO:
    case DARMOK__KIND__KIND_INSTANCE:
    case DARMOK__KIND__KIND_ERROR: DK_TRY(dec_ident(d)); return dec_record(d, k);
    case DARMOK__KIND__KIND_MAP:
    case DARMOK__KIND__KIND_SET:
        DK_TRY(dec_ident(d));
        DK_TRY(dec_count(d, &c));
        if (c > d->max_length)
            return dec_bad_here(d, DK_ERR_TOO_LONG, "Map or Set larger than max_length");
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
        DK_TRY(dec_text(d, DK_T_REGEXP));
        return dec_text(d, 0);
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
        if (b->len != 0) memcpy(d->w, b->data, b->len);
        d->w += b->len;
        return 0;
    }
    case DARMOK__KIND__KIND_REF:
        DK_TRY(dec_count(d, &c));
        if (c >= d->n_refs)
            return dec_bad(d, DK_ERR_FORMAT, "reference to a value not yet met", PB_F_COUNTS,
                           d->ci - 1);
        if (c >= d->keep) d->keep = c + 1; /* c < n_refs <= UINT32_MAX */
        return dec_op_u32(d, DK_T_REF, c);
    case DARMOK__KIND__KIND_HOLES: return dec_bad_here(d, DK_ERR_FORMAT, "holes outside an array");
    default: return dec_bad_here(d, DK_ERR_FORMAT, "unknown Kind");
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
            if (f->shape != NULL) DK_TRY(dec_key(d, f->shape->fields[f->field++])); /* a record */
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
int dk_pb_read_opts(const uint8_t *pb, size_t len, const dk_limits *lim, size_t max_out,
                    dk_arena *scratch, dk_buf *tape_out, dk_err *err)
{
    return dk_pb_read_ex(pb, len, lim, max_out, 0, scratch, tape_out, NULL, NULL, err);
}

/* The same, with the UTF-16 side table; see dk_abi.h. */
int dk_pb_read_ex(const uint8_t *pb, size_t len, const dk_limits *lim, size_t max_out,
                  uint32_t flags, dk_arena *scratch, dk_buf *tape_out, dk_buf *u16_out,
                  uint32_t *keep_out, dk_err *err)
{
    pb_dec d;
    pb_alloc_ctx ac;
    ProtobufCAllocator alloc;
    Darmok__Document *doc;
    dk_err own;

    err = dk_err_start(err, &own);
    tape_out->len = 0;
    if (u16_out) u16_out->len = 0;
    if (keep_out) *keep_out = 0;
    memset(&d, 0, sizeof d);
    d.u16 = u16_out;
    d.a = scratch;
    d.err = err;
    d.out = tape_out;
    d.in = pb;
    d.len = len;
    d.max_depth = dk_max_depth(lim);
    d.max_length = dk_max_length(lim);
    d.max_str = dk_max_str(lim);
    if (len > DK_PB_MAX_OUT) return dec_fail(&d, DK_ERR_TOO_LARGE, "input too large", 0);
    if (max_out == 0) max_out = dk_pb_max_out(len);
    d.max_out = max_out < DK_PB_MAX_OUT ? max_out : DK_PB_MAX_OUT;
    DK_TRY(pb_wire_check(d.in, d.len, d.max_str, d.err));
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
    if (doc->n_strings > PB_TABLE_MAX || doc->n_shapes > PB_TABLE_MAX ||
        doc->n_texts > PB_TABLE_MAX)
        return dec_fail(&d, DK_ERR_TOO_LARGE, "too many strings or shapes", 0);
    if ((flags & DK_READ_KEYREFS) && doc->n_strings != 0) {
        d.key_js = dk_arena_alloc(scratch, doc->n_strings * sizeof *d.key_js);
        if (d.key_js == NULL) return dec_fail(&d, DK_ERR_MEMORY, "out of memory", 0);
        memset(d.key_js, 0xFF, doc->n_strings * sizeof *d.key_js);
    }
    if (dec_wtf8(&d, doc->strings, doc->n_strings, PB_F_STRINGS, &d.str_f) != DK_OK ||
        dec_text_flags(&d, flags) != DK_OK || dec_shapes(&d) != DK_OK || dec_walk(&d) != DK_OK) {
        tape_out->len = 0; /* a failure leaves no partial tape */
        if (u16_out) u16_out->len = 0;
        return (int)err->code;
    }
    dec_sync(&d);
    if (keep_out) *keep_out = d.keep;
    return DK_OK;
}

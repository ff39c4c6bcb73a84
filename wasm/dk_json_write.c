/*
 * dk_json_write.c - tape -> darmok JSON text (docs/FORMAT.md).
 *
 * The tape comes from JavaScript and is not trusted: every read is checked
 * against the tape's end, every op, count, key order, string encoding, date
 * and binary length is validated, and nesting is walked with an explicit
 * stack (never C recursion) limited to max_depth open containers. A bad
 * tape fails with DK_ERR_TAPE at the offending tape offset.
 *
 * String flags (DK_STR_ASCII, DK_STR_WTF8) are hints for the JS decoder
 * and are not relied on here: the bytes themselves are checked as WTF-8
 * and every encoded surrogate is written as a \udxxx escape.
 *
 * Output is UTF-8, or with DK_WRITE_MAY_WIDE (dk_abi.h) UTF-16 units
 * from the first DK_T_STR16 that is not ASCII on: go_wide() makes what
 * was written units, and every output function has a units form.
 */
#include <math.h>

#include "dk_internal.h"
#include "dk_tags.h"

/* One open container of the tape. */
typedef struct wframe {
    uint8_t op;    /* DK_T_ARRAY, _OBJECT, _NULLPROTO, _INSTANCE, _MAP, ... */
    uint8_t comma; /* an item was written: the next one needs a ',' */
    uint8_t half;  /* DK_T_MAP: 1 after a pair's '[', 2 after its key */
    uint32_t left; /* ARRAY: slots; MAP: pairs; others: members still due */
    uint32_t seen; /* keys written so far (first-key rule, Error order) */
} wframe;

typedef struct writer {
    const uint8_t *tape;
    size_t len;
    size_t pos; /* next tape byte to read */
    dk_buf *out;
    dk_err *err;
    dk_arena *arena;
    wframe *stack;
    uint32_t sp, cap; /* open containers; stack capacity */
    uint32_t max_depth;
    uint64_t refs;   /* referenceable values met so far */
    size_t max_out;  /* JSON bytes copies of long texts may take (dk_json_write_refs) */
    size_t copied;   /* JSON bytes they took so far */
    size_t max_json; /* the JSON text's bound (dk_json_write_refs); else SIZE_MAX */
    size_t *keys;    /* dk_json_write_refs: tape offset of each key written in full */
    size_t n_keys, cap_keys;
    uint8_t strrefs;  /* the tape may hold DK_T_STRREF and key references */
    uint8_t may_wide; /* DK_WRITE_MAY_WIDE */
    uint8_t wide;     /* the output is UTF-16 (LE) units from here on */
    uint8_t high;     /* UTF-8 output: a byte >= 0x80 was written */
    char num[48];     /* a number or date, formatted here when wide */
} writer;

_Static_assert(DK_NUM_MAX <= 48 && 10 + DK_ISO_MAX + 2 <= 48,
               "writer.num holds a number and a date");

/* Fails with DK_ERR_TAPE at tape offset pos. */
static int bad_tape(writer *w, const char *msg, size_t pos)
{
    return dk_fail(w->err, DK_ERR_TAPE, msg, pos);
}

/* The JSON text passed max_json: checked by grow and at the end. */
DK_MUST static int json_bound(writer *w, size_t at)
{
    if (w->out->len > w->max_json)
        return dk_fail(w->err, DK_ERR_TOO_LARGE, "JSON text over its bound (maxBytes)", at);
    return DK_OK;
}

/* How far past max_json a bounded output's buffer may grow (see grow). */
#define DK_JSON_GROW_SLACK ((size_t)1 << 20)

/*
 * Makes room for n more output bytes (a writer's worst case, so only the
 * text already written is held against max_json): the one place the output
 * grows, so that no reference, string or key, takes the text far past its
 * bound, while the writes that fit pay nothing for the check.
 */
DK_MUST static DK_NOINLINE int grow(writer *w, size_t n, size_t at)
{
    size_t slack = n > DK_JSON_GROW_SLACK ? n : DK_JSON_GROW_SLACK;

    DK_TRY(json_bound(w, at));
    /* room past the bound for one write at least, so that the writes that
     * take the text past it do not realloc one by one */
    return dk_buf_reserve_upto(
        w->out, n, w->max_json > SIZE_MAX - slack ? SIZE_MAX : w->max_json + slack, w->err, at);
}

/* The copies of long texts of a dk_json_write_refs tape passed max_out. */
static int ref_too_large(writer *w, size_t at)
{
    return dk_fail(w->err, DK_ERR_TOO_LARGE,
                   "JSON text too large for the document's size (string references)", at);
}

/* Checks that n more tape bytes exist. */
DK_MUST static int need(writer *w, size_t n)
{
    if (w->len - w->pos < n) return bad_tape(w, "truncated tape", w->pos);
    return DK_OK;
}

/* Reads a u32 from the tape. */
DK_MUST static int read_u32(writer *w, uint32_t *v)
{
    DK_TRY(need(w, 4));
    *v = dk_rd32(w->tape + w->pos);
    w->pos += 4;
    return DK_OK;
}

/*
 * Reads a str (u32 header, bytes); *s points into the tape, *at is the
 * tape offset of the bytes. Encoding is checked when the string is written.
 */
DK_MUST static int read_str(writer *w, const uint8_t **s, size_t *n, size_t *at)
{
    uint32_t h;

    DK_TRY(read_u32(w, &h));
    *n = h >> DK_STR_SHIFT;
    DK_TRY(need(w, *n));
    *s = w->tape + w->pos;
    *at = w->pos;
    w->pos += *n;
    return DK_OK;
}

/*
 * Reads a member or class key: a str, or, in a tape dk_pb_read_ex wrote
 * with DK_READ_KEYREFS, a key reference (dk_tape.h) to the k-th key
 * written in full, numbered here as there (every member and class key
 * read in full counts). *s then points at that earlier key's bytes.
 */
DK_MUST static int read_key(writer *w, const uint8_t **s, size_t *n, size_t *at)
{
    uint32_t h;
    size_t back;

    /* Only a transcode's tape has key references: elsewhere both flags set
     * is read as any str is, as the protobuf writer reads it. */
    if (!w->strrefs) return read_str(w, s, n, at);
    DK_TRY(need(w, 4));
    h = dk_rd32(w->tape + w->pos);
    if ((h & 3u) != DK_STR_KEYREF) {
        if (w->n_keys == w->cap_keys) {
            size_t cap = w->cap_keys ? w->cap_keys * 2 : 64;
            size_t *k = dk_arena_grow(w->arena, w->keys, w->n_keys, cap, sizeof *k);

            if (k == NULL) return dk_fail(w->err, DK_ERR_MEMORY, "out of memory", w->pos);
            w->keys = k;
            w->cap_keys = cap;
        }
        w->keys[w->n_keys++] = w->pos;
        return read_str(w, s, n, at);
    }
    if ((h >> DK_STR_SHIFT) >= w->n_keys)
        return bad_tape(w, "key reference to no earlier key", w->pos);
    back = w->pos + 4;
    w->pos = w->keys[h >> DK_STR_SHIFT];
    DK_TRY(read_str(w, s, n, at));
    w->pos = back;
    /* a long key named again counts as a long text does: its copies are
     * not in the tape, so the input does not bound them */
    if (*n > DK_PB_REF_MAX_BYTES) {
        if (*n > w->max_out - w->copied) return ref_too_large(w, back - 4);
        w->copied += *n;
    }
    return DK_OK;
}

/* Appends the n ASCII bytes s as n UTF-16 units. */
DK_MUST static DK_NOINLINE int put_units(writer *w, const uint8_t *s, size_t n)
{
    dk_buf *o = w->out;
    size_t k = 0;

    if (n <= 8 && o->cap - o->len >= 16) { /* punctuation, short numbers */
        for (; k < n; k++) dk_put_u16(o->data + o->len + 2 * k, s[k]);
        o->len += 2 * n;
        return DK_OK;
    }

    if (n > SIZE_MAX / 2) return dk_fail(w->err, DK_ERR_TOO_LARGE, "output too large", w->pos);
    if (o->cap - o->len < 2 * n) DK_TRY(grow(w, 2 * n, w->pos));
    for (; n - k >= DK_PLAIN_RUN; k += DK_PLAIN_RUN) dk_widen_run(s + k, o->data + o->len + 2 * k);
    for (; k < n; k++) dk_put_u16(o->data + o->len + 2 * k, s[k]);
    o->len += 2 * n;
    return DK_OK;
}

/*
 * The output so far made UTF-16 units, and the writer writes units from
 * now on. ASCII output is widened in place, from the end so that no byte
 * is overwritten before it is read; other UTF-8 (valid: the writer checked
 * every string) is converted from a copy.
 */
DK_MUST static int go_wide(writer *w, size_t at)
{
    dk_buf *o = w->out;
    size_t n = o->len;

    if (n > SIZE_MAX / 2) return dk_fail(w->err, DK_ERR_TOO_LARGE, "output too large", at);
    if (o->cap - o->len < n) DK_TRY(grow(w, n, at));
    w->wide = 1;
    if (w->high) {
        uint8_t *t = dk_arena_alloc(w->arena, n);

        if (t == NULL) return dk_fail(w->err, DK_ERR_MEMORY, "out of memory", at);
        memcpy(t, o->data, n);
        o->len = 2 * dk_wtf8_to_utf16(t, n, o->data);
        return DK_OK;
    }
    for (size_t i = n; i-- > 0;) {
        uint8_t c = o->data[i];
        o->data[2 * i + 1] = 0;
        o->data[2 * i] = c;
    }
    o->len = 2 * n;
    return DK_OK;
}

/* Appends n ASCII bytes to the output (as units when wide). */
DK_MUST static int put(writer *w, const void *s, size_t n)
{
    if (DK_UNLIKELY(w->wide)) return put_units(w, s, n);
    if (w->out->cap - w->out->len < n) DK_TRY(grow(w, n, w->pos));
    dk_put_unsafe(w->out, s, n);
    return DK_OK;
}

/* Appends one ASCII character (as a unit when wide). */
DK_MUST static DK_INLINE int put_char(writer *w, uint8_t c)
{
    dk_buf *o = w->out;

    if (o->cap - o->len < 2) DK_TRY(grow(w, 2, w->pos));
    if (w->wide) {
        dk_put_u16(o->data + o->len, c);
        o->len += 2;
    } else {
        o->data[o->len++] = c;
    }
    return DK_OK;
}

/* Appends a string literal (punctuation, one character, without a call). */
#define PUT_LIT(w, lit) \
    (sizeof(lit) == 2 ? put_char((w), (uint8_t)(lit)[0]) : put((w), (lit), sizeof(lit) - 1))

/*
 * The output's free bytes after reserving n, for a formatter to write into
 * directly: going through a local buffer would make a memcpy of variable
 * length, a call (memory.copy) in WebAssembly, per number and date.
 */
DK_MUST static int out_room(writer *w, size_t n, char **at)
{
    if (w->wide) { /* formatted in w->num, then widened by out_done */
        *at = w->num;
        return DK_OK;
    }
    if (w->out->cap - w->out->len < n) DK_TRY(grow(w, n, w->pos));
    *at = (char *)w->out->data + w->out->len;
    return DK_OK;
}

/* The k ASCII bytes a formatter wrote at out_room's *at are output. */
DK_MUST static int out_done(writer *w, const char *at, size_t k)
{
    if (w->wide) return put_units(w, (const uint8_t *)at, k);
    w->out->len += k;
    return DK_OK;
}

static const char hex_digits[] = "0123456789abcdef";

/*
 * The escape JSON.stringify writes for u (a control character, '"', '\\'
 * or a lone surrogate) at d: 2 bytes (\n and the like) or 6 (\uXXXX,
 * lowercase hex); returns which.
 */
static size_t put_escape(uint8_t *d, uint32_t u)
{
    uint8_t e = u == '"'    ? '"'
                : u == '\\' ? '\\'
                : u == '\b' ? 'b'
                : u == '\f' ? 'f'
                : u == '\n' ? 'n'
                : u == '\r' ? 'r'
                : u == '\t' ? 't'
                            : 0;

    d[0] = '\\';
    if (e != 0) {
        d[1] = e;
        return 2;
    }
    d[1] = 'u';
    d[2] = (uint8_t)hex_digits[u >> 12];
    d[3] = (uint8_t)hex_digits[u >> 8 & 15];
    d[4] = (uint8_t)hex_digits[u >> 4 & 15];
    d[5] = (uint8_t)hex_digits[u & 15];
    return 6;
}

/* put_escape's escape of u as UTF-16 units at d; returns the unit count. */
static size_t put_escape_units(uint8_t *d, uint32_t u)
{
    uint8_t e[6];
    size_t k = put_escape(e, u);

    for (size_t j = 0; j < k; j++) dk_put_u16(d + 2 * j, e[j]);
    return k;
}

/*
 * Checks the WTF-8 sequence at s[i] (lead byte >= 0x80; tape offset of s:
 * at): its length, *sur when it is an encoded surrogate. A surrogate pair
 * must be one 4-byte sequence, never two 3-byte ones (JSON would read
 * them back as the pair).
 */
DK_MUST static int wtf8_at(writer *w, const uint8_t *s, size_t n, size_t i, size_t at, size_t *len,
                           int *sur)
{
    size_t bad;

    *len = dk_wtf8_seq(s + i, n - i, 1, &bad, sur);
    if (*len == 0) return bad_tape(w, "invalid WTF-8 in string", at + i);
    if (*sur && s[i + 1] <= 0xAF && n - i >= 6 && s[i + 3] == 0xED && s[i + 4] >= 0xB0 &&
        s[i + 4] <= 0xBF)
        return bad_tape(w, "surrogate pair split in WTF-8", at + i);
    return DK_OK;
}

/*
 * Room for k more UTF-16 units and a closing quote (the units forms of the
 * string writers keep 2 bytes a unit still to come reserved).
 */
DK_MUST static int units_room(writer *w, size_t k, size_t at)
{
    if (k > (SIZE_MAX - 2) / 2) return dk_fail(w->err, DK_ERR_TOO_LARGE, "output too large", at);
    return grow(w, 2 * k + 2, at);
}

/* The closing quote of a string, as a unit (room kept by units_room). */
static void close_units(dk_buf *o)
{
    dk_put_u16(o->data + o->len, '"');
    o->len += 2;
}

/*
 * The rest of a JSON string, after its opening quote: the WTF-8 s[0..n)
 * (tape offset of s: at) escaped exactly as JSON.stringify does, then the
 * closing quote, as UTF-8 or, with wide, as UTF-16 units. Plain bytes go
 * DK_PLAIN_RUN at a time: skipped and copied with the next escape as
 * UTF-8, widened as they are scanned as units. Lone surrogates become
 * \udxxx; other bytes >= 0x80 are copied (as their units when wide) after
 * WTF-8 validation. Inline, and called with a constant wide, so each
 * form is a loop of its own.
 *
 * Room, UTF-8: n + 1 bytes stay reserved for the unflushed rest plus the
 * closing quote, reserved by the caller; each escape re-reserves its 6
 * bytes on top of that. Units: 2 bytes a byte still to come and the
 * closing quote stay reserved (a sequence of 2-4 bytes is 1 or 2 units; a
 * block stores 2 bytes for each of its DK_PLAIN_RUN bytes); an escape
 * re-reserves its 12 on top.
 */
DK_MUST static DK_INLINE int put_str_rest(writer *w, const uint8_t *s, size_t n, size_t at,
                                          const int wide)
{
    dk_buf *o = w->out;
    size_t i = 0, run = 0;

    if (wide) DK_TRY(units_room(w, n, at));
    while (i < n) {
        uint8_t c;
        size_t len = 1;
        int sur = 0;

        if (n - i >= DK_PLAIN_RUN) {
            dk_runmask m = dk_plain_mask(s + i);

            /* whole; the units past the plain ones are rewritten */
            if (wide) dk_widen_run(s + i, o->data + o->len);
            if (m == 0) {
                i += DK_PLAIN_RUN;
                if (wide) o->len += 2 * DK_PLAIN_RUN;
                continue;
            }
            i += dk_mask_first(m);
            if (wide) o->len += 2 * (size_t)dk_mask_first(m);
        }
        c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            if (wide) {
                dk_put_u16(o->data + o->len, c);
                o->len += 2;
            }
            i++;
            continue;
        }
        if (c >= 0x80) {
            DK_TRY(wtf8_at(w, s, n, i, at, &len, &sur));
            if (!sur) { /* its 1 or 2 units, or its bytes later */
                if (wide)
                    o->len += 2 * dk_wtf8_to_utf16(s + i, len, o->data + o->len);
                else
                    w->high = 1;
                i += len;
                continue;
            }
        }
        /* a control character, '"', '\\', or a lone surrogate's unit */
        uint32_t u = sur ? (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 |
                               (uint32_t)(s[i + 2] & 0x3F)
                         : c;
        if (wide) {
            DK_TRY(units_room(w, 6 + (n - i), at + i));
            o->len += 2 * put_escape_units(o->data + o->len, u);
        } else {
            dk_put_short(o, s + run, i - run, w->len - at - run);
            DK_TRY(grow(w, 6 + (n - i) + 1, at + i));
            o->len += put_escape(o->data + o->len, u);
        }
        i += len;
        run = i;
    }
    if (wide) {
        close_units(o);
    } else {
        dk_put_short(o, s + run, n - run, w->len - at - run);
        o->data[o->len++] = '"';
    }
    return DK_OK;
}

/*
 * Writes s[0..n) (tape offset at) as a JSON string (put_str_rest), as
 * units when the writer is wide; with dollar, one extra '$' goes first
 * (the key escaping rule: a key "$x" is written DK_META_ESCAPE_S "x", so
 * the '$' written is DK_META_ESCAPE_S[0]).
 */
DK_MUST static int put_str(writer *w, const uint8_t *s, size_t n, int dollar, size_t at)
{
    dk_buf *o = w->out;

    /* Keys, class keys and most short values: when 16 bytes can be read
     * at s and none of the n < 16 needs work, one fixed-size copy, where
     * put_str_rest would test them a byte at a time. */
    if (n < 16 && w->len - at >= 16) {
        size_t k = 0;

        while (k < n) {
            dk_runmask m = dk_plain_mask(s + k);

            if (m != 0 && dk_mask_first(m) < n - k) break;
            k += DK_PLAIN_RUN;
        }
        if (k >= n && w->wide) { /* the same, as 16 units */
            uint8_t *d;

            if (o->cap - o->len < 38) DK_TRY(grow(w, 38, at));
            d = o->data + o->len;
            dk_put_u16(d, '"');
            d += 2;
            if (dollar) {
                dk_put_u16(d, (uint8_t)DK_META_ESCAPE_S[0]);
                d += 2;
            }
            for (k = 0; k < 16; k += DK_PLAIN_RUN) dk_widen_run(s + k, d + 2 * k);
            dk_put_u16(d + 2 * n, '"');
            o->len = (size_t)(d - o->data) + 2 * n + 2;
            return DK_OK;
        }
        if (k >= n) {
            if (o->cap - o->len < 19) DK_TRY(grow(w, 19, at));
            o->data[o->len++] = '"';
            if (dollar) o->data[o->len++] = (uint8_t)DK_META_ESCAPE_S[0];
            /* a fixed copy: dk_put_short's checks are all true here, and
             * short keys are written on every record */
            memcpy(o->data + o->len, s, 16);
            o->len += n;
            o->data[o->len++] = '"';
            return DK_OK;
        }
    }
    if (w->wide) {
        DK_TRY(put(w, dollar ? "\"" DK_META_ESCAPE_S : "\"", dollar ? 2 : 1));
        return put_str_rest(w, s, n, at, 1);
    }
    if (n > SIZE_MAX - 3) return dk_fail(w->err, DK_ERR_TOO_LARGE, "output too large", at);
    DK_TRY(grow(w, n + 3, at));
    o->data[o->len++] = '"';
    if (dollar) o->data[o->len++] = (uint8_t)DK_META_ESCAPE_S[0];
    return put_str_rest(w, s, n, at, 0);
}

/*
 * The rest of put_str16's string as UTF-16 units: u[i..n) copied, but for
 * the escapes, then the closing quote. With SIMD, 8 units at a time while
 * none is a control character, '"', '\\' or a surrogate.
 *
 * Room: 2 bytes a unit still to come and the closing quote stay reserved;
 * an escape (2 or 6 units) re-reserves its 12 on top.
 */
DK_MUST static int put_str16_units(writer *w, const uint8_t *u, size_t n, size_t i, size_t at)
{
    dk_buf *o = w->out;

    DK_TRY(units_room(w, n - i, at));
    while (i < n) {
        uint32_t c;
#ifdef __wasm_simd128__
        if (n - i >= 8) { /* room: 2(n - i) >= 16 */
            v128_t v = wasm_v128_load(u + 2 * i);
            v128_t bad = wasm_v128_or(
                wasm_v128_or(wasm_i16x8_eq(wasm_v128_and(v, wasm_i16x8_splat((int16_t)0xFFE0)),
                                           wasm_i16x8_splat(0)),
                             wasm_i16x8_eq(v, wasm_i16x8_splat('"'))),
                wasm_v128_or(wasm_i16x8_eq(v, wasm_i16x8_splat('\\')),
                             wasm_i16x8_eq(wasm_v128_and(v, wasm_i16x8_splat((int16_t)0xF800)),
                                           wasm_i16x8_splat((int16_t)0xD800))));

            if (!wasm_v128_any_true(bad)) {
                wasm_v128_store(o->data + o->len, v);
                o->len += 16;
                i += 8;
                continue;
            }
        }
#endif
        c = (uint32_t)u[2 * i] | (uint32_t)u[2 * i + 1] << 8;
        i++;
        if (c >= 0xD800 && c <= 0xDBFF && i < n) {
            uint32_t lo = (uint32_t)u[2 * i] | (uint32_t)u[2 * i + 1] << 8;
            if (lo >= 0xDC00 && lo <= 0xDFFF) { /* a pair: copied */
                dk_put_u16(o->data + o->len, c);
                dk_put_u16(o->data + o->len + 2, lo);
                o->len += 4;
                i++;
                continue;
            }
        }
        if (c < 0x20 || c == '"' || c == '\\' || (c >= 0xD800 && c <= 0xDFFF)) {
            DK_TRY(units_room(w, 6 + (n - i), at));
            o->len += 2 * put_escape_units(o->data + o->len, c);
        } else {
            dk_put_u16(o->data + o->len, c);
            o->len += 2;
        }
    }
    close_units(o);
    return DK_OK;
}

/*
 * Writes the n UTF-16 units at u (a DK_T_STR16's, little-endian; tape
 * offset at) as the JSON string put_str writes for their WTF-8, in one
 * pass: a pair as its 4-byte sequence, a lone surrogate as \udxxx. With
 * SIMD, 16 units at a time while none needs more than its low byte.
 *
 * Room: 3 bytes a unit still to come and the closing quote stay reserved
 * (a block stores 16 bytes where 16 units have reserved 48); an escape
 * (2 or 6 bytes) re-reserves on top of that.
 */
DK_MUST static int put_str16(writer *w, const uint8_t *u, size_t n, size_t at)
{
    dk_buf *o = w->out;
    size_t i = 0;

    if (w->wide) {
        DK_TRY(PUT_LIT(w, "\""));
        return put_str16_units(w, u, n, 0, at);
    }
    if (n > (SIZE_MAX - 2) / 3) return dk_fail(w->err, DK_ERR_TOO_LARGE, "output too large", at);
    DK_TRY(grow(w, 3 * n + 2, at));
    o->data[o->len++] = '"';
    while (i < n) {
        uint32_t c;
#ifdef __wasm_simd128__
        if (n - i >= 16) { /* room: 3(n - i) >= 48 */
            /* narrowed with unsigned saturation: units 0x100..0x7FFF
             * become 0xFF and units >= 0x8000 become 0, so every unit
             * that is not a plain ASCII byte fails the JSON mask */
            v128_t x =
                wasm_u8x16_narrow_i16x8(wasm_v128_load(u + 2 * i), wasm_v128_load(u + 2 * i + 16));
            dk_runmask m = dk_quote_bits(x) | (dk_runmask)wasm_i8x16_bitmask(x);

            wasm_v128_store(o->data + o->len, x);
            if (m == 0) {
                o->len += 16;
                i += 16;
                continue;
            }
            o->len += dk_mask_first(m);
            i += dk_mask_first(m);
        }
#endif
        c = (uint32_t)u[2 * i] | (uint32_t)u[2 * i + 1] << 8;
        if (c >= 0x80) {
            if (w->may_wide) { /* the first such string that is not ASCII */
                DK_TRY(go_wide(w, at));
                return put_str16_units(w, u, n, i, at);
            }
            w->high = 1;
        }
        i++;
        if (c >= 0xD800 && c <= 0xDBFF && i < n) {
            uint32_t lo = (uint32_t)u[2 * i] | (uint32_t)u[2 * i + 1] << 8;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                i++;
                o->len +=
                    dk_put_utf8(o->data + o->len, 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00));
                continue;
            }
        }
        if (c < 0x20 || c == '"' || c == '\\' || (c >= 0xD800 && c <= 0xDFFF)) {
            DK_TRY(grow(w, 6 + 3 * (n - i) + 1, at));
            o->len += put_escape(o->data + o->len, c);
        } else {
            o->len += dk_put_utf8(o->data + o->len, c);
        }
    }
    o->data[o->len++] = '"';
    return DK_OK;
}

/* Writes a number: plain when finite and not -0, else a $Number tag. */
DK_MUST static int put_number(writer *w, double d)
{
    char *num;

    if (isnan(d)) return PUT_LIT(w, "{\"$" DK_TAG_NUMBER_S "\":\"NaN\"}");
    if (isinf(d))
        return d > 0 ? PUT_LIT(w, "{\"$" DK_TAG_NUMBER_S "\":\"Infinity\"}")
                     : PUT_LIT(w, "{\"$" DK_TAG_NUMBER_S "\":\"-Infinity\"}");
    if (d == 0 && signbit(d)) return PUT_LIT(w, "{\"$" DK_TAG_NUMBER_S "\":\"-0\"}");
    DK_TRY(out_room(w, DK_NUM_MAX, &num));
    return out_done(w, num, dk_fmt_double(d, num));
}

/* Writes an integer in decimal. */
DK_MUST static int put_int(writer *w, int64_t v)
{
    char *num;

    DK_TRY(out_room(w, DK_NUM_MAX, &num));
    return out_done(w, num, dk_fmt_int(v, num));
}

/*
 * Opens a container whose op sits at tape offset at: checks the depth,
 * pushes a frame for `left` items. The opening text is the caller's.
 */
DK_MUST static int push(writer *w, uint8_t op, uint32_t left, size_t at)
{
    wframe *f;

    if (w->sp >= w->max_depth) return dk_fail(w->err, DK_ERR_DEPTH, "nesting too deep", at);
    if (w->sp == w->cap) {
        uint32_t cap = w->cap ? w->cap * 2 : 32;

        if (cap < w->cap) cap = UINT32_MAX; /* max_depth bounds sp */
        w->stack = dk_arena_grow(w->arena, w->stack, w->cap, cap, sizeof *f);
        if (!w->stack) return dk_fail(w->err, DK_ERR_MEMORY, "out of memory", at);
        w->cap = cap;
    }
    f = &w->stack[w->sp++];
    f->op = op;
    f->comma = 0;
    f->half = 0;
    f->left = left;
    f->seen = 0;
    return DK_OK;
}

/* Writes a binary value (op already read at at): {"$Kind":"base64"}. */
DK_MUST static int write_bytes(writer *w, size_t at)
{
    uint8_t kind;
    uint32_t n;
    const char *name;
    size_t b64;

    DK_TRY(need(w, 1));
    kind = w->tape[w->pos++];
    if (kind >= DK_BYTES_KIND_COUNT) return bad_tape(w, "unknown bytes kind", at);
    DK_TRY(read_u32(w, &n));
    if (n % dk_bytes_size[kind] != 0)
        return bad_tape(w, "byte length not a multiple of the element size", at);
    DK_TRY(need(w, n));
    name = dk_bytes_name[kind];
    if ((uint64_t)n / 3 * 4 + 32 > SIZE_MAX)
        return dk_fail(w->err, DK_ERR_TOO_LARGE, "output too large", at);
    b64 = DK_B64_LEN((size_t)n);
    if (w->wide) { /* the text made in scratch memory, then widened */
        size_t k = strlen(name);
        uint8_t *t = dk_arena_alloc(w->arena, b64 + k + 8);

        if (t == NULL) return dk_fail(w->err, DK_ERR_MEMORY, "out of memory", at);
        memcpy(t, "{\"$", 3);
        memcpy(t + 3, name, k);
        memcpy(t + 3 + k, "\":\"", 3);
        dk_b64_encode(w->tape + w->pos, n, t + 6 + k);
        memcpy(t + 6 + k + b64, "\"}", 2);
        w->pos += n;
        return put_units(w, t, b64 + k + 8);
    }
    DK_TRY(grow(w, b64 + strlen(name) + 8, at));
    dk_put_unsafe(w->out, "{\"$", 3);
    dk_put_unsafe(w->out, name, strlen(name));
    dk_put_unsafe(w->out, "\":\"", 3);
    w->out->len += dk_b64_encode(w->tape + w->pos, n, w->out->data + w->out->len);
    dk_put_unsafe(w->out, "\"}", 2);
    w->pos += n;
    return DK_OK;
}

/* Writes a Date (op already read at at): ISO text, or null when invalid. */
DK_MUST static int write_date(writer *w, size_t at)
{
    char *iso;
    double ms;
    size_t n;

    DK_TRY(need(w, 8));
    ms = dk_rdf64(w->tape + w->pos);
    w->pos += 8;
    if (isnan(ms)) return PUT_LIT(w, "{\"$" DK_TAG_DATE_S "\":null}");
    if (!(ms >= -DK_DATE_MAX_MS && ms <= DK_DATE_MAX_MS) || ms != (double)(int64_t)ms)
        return bad_tape(w, "date out of range or not an integer", at);
    /* one reservation for {"$Date":"…"} */
    DK_TRY(out_room(w, 10 + DK_ISO_MAX + 2, &iso));
    memcpy(iso, "{\"$" DK_TAG_DATE_S "\":\"", 10);
    n = dk_fmt_iso(ms, iso + 10);
    memcpy(iso + 10 + n, "\"}", 2);
    return out_done(w, iso, 10 + n + 2);
}

/*
 * A DK_T_STRREF at tape offset at (op read): the string of the earlier str
 * it names. Out of write_value, whose every call it would otherwise slow:
 * only protobuf transcodes have such tapes.
 */
DK_MUST static DK_NOINLINE int write_strref(writer *w, size_t at)
{
    const uint8_t *s;
    size_t n, sat, back;
    uint32_t u;

    if (!w->strrefs) return bad_tape(w, "string reference in a tape without them", at);
    DK_TRY(read_u32(w, &u));
    if (u >= at) return bad_tape(w, "string reference does not point back", at);
    back = w->pos;
    w->pos = u;
    DK_TRY(read_str(w, &s, &n, &sat));
    w->pos = back;
    if (sat > at || n > at - sat) return bad_tape(w, "string reference to no earlier str", at);
    DK_TRY(json_bound(w, at));
    if (n <= DK_PB_REF_MAX_BYTES) return put_str(w, s, n, 0, sat);
    /* a long text named again: only a document from elsewhere does it
     * (copied <= max_out holds: passing it failed the call) */
    back = w->out->len;
    if (n > w->max_out - w->copied) return ref_too_large(w, at);
    DK_TRY(put_str(w, s, n, 0, sat));
    w->copied += w->out->len - back;
    return w->copied > w->max_out ? ref_too_large(w, at) : DK_OK;
}

/*
 * Writes the value at w->pos. Scalars are written whole; a container gets
 * its opening text and a frame, its items follow from write_all's loop.
 */
DK_MUST static int write_value(writer *w)
{
    size_t at = w->pos, n, fn, sat, fat;
    const uint8_t *s, *fl;
    uint32_t u, ver;
    uint8_t op;

    DK_TRY(need(w, 1));
    op = w->tape[w->pos++];
    switch (op) {
    case DK_T_UNDEF: return PUT_LIT(w, "{\"$" DK_TAG_UNDEFINED_S "\":0}");
    case DK_T_NULL: return PUT_LIT(w, "null");
    case DK_T_FALSE: return PUT_LIT(w, "false");
    case DK_T_TRUE: return PUT_LIT(w, "true");
    case DK_T_INT: DK_TRY(read_u32(w, &u)); return put_int(w, (int32_t)u);
    case DK_T_F64:
        DK_TRY(need(w, 8));
        w->pos += 8;
        return put_number(w, dk_rdf64(w->tape + at + 1));
    case DK_T_BIGINT:
        DK_TRY(read_str(w, &s, &n, &sat));
        if (!dk_bigint_ok(s, n)) return bad_tape(w, "bad bigint digits", sat);
        DK_TRY(PUT_LIT(w, "{\"$" DK_TAG_BIGINT_S "\":\""));
        DK_TRY(put(w, s, n));
        return PUT_LIT(w, "\"}");
    case DK_T_STR: DK_TRY(read_str(w, &s, &n, &sat)); return put_str(w, s, n, 0, sat);
    case DK_T_STR16: {
        const uint8_t *t;
        DK_TRY(read_u32(w, &u));
        DK_TRY(dk_str16_check(w->len - w->pos, u, at, w->err));
        t = w->tape + w->pos;
        w->pos += (size_t)u * 2;
        return put_str16(w, t, u, at + 5);
    }
    case DK_T_STRREF: return write_strref(w, at);
    case DK_T_HOLE: return bad_tape(w, "hole outside an array", at);
    case DK_T_REF:
        DK_TRY(read_u32(w, &u));
        if (u >= w->refs) return bad_tape(w, "ref does not point back", at);
        DK_TRY(PUT_LIT(w, "{\"$" DK_TAG_REF_S "\":"));
        DK_TRY(put_int(w, u));
        return PUT_LIT(w, "}");
    default: break;
    }

    /* Everything below is referenceable: it takes the next index now. */
    w->refs++;
    switch (op) {
    case DK_T_DATE: return write_date(w, at);
    case DK_T_BYTES: return write_bytes(w, at);
    case DK_T_REGEXP:
        DK_TRY(read_str(w, &s, &n, &sat));
        DK_TRY(read_str(w, &fl, &fn, &fat));
        DK_TRY(PUT_LIT(w, "{\"$" DK_TAG_REGEXP_S "\":["));
        DK_TRY(put_str(w, s, n, 0, sat));
        DK_TRY(PUT_LIT(w, ","));
        DK_TRY(put_str(w, fl, fn, 0, fat));
        return PUT_LIT(w, "]}");
    case DK_T_ARRAY:
        DK_TRY(read_u32(w, &u));
        DK_TRY(push(w, op, u, at));
        return PUT_LIT(w, "[");
    case DK_T_OBJECT:
        DK_TRY(read_u32(w, &u));
        DK_TRY(push(w, op, u, at));
        return PUT_LIT(w, "{");
    case DK_T_NULLPROTO:
        DK_TRY(read_u32(w, &u));
        DK_TRY(push(w, op, u, at));
        return PUT_LIT(w, "{\"$" DK_TAG_NULLPROTO_S "\":{");
    case DK_T_ERROR:
        DK_TRY(read_u32(w, &u));
        if (u < 2) return bad_tape(w, "error without name and message", at);
        DK_TRY(push(w, op, u, at));
        return PUT_LIT(w, "{\"$" DK_TAG_ERROR_S "\":{");
    case DK_T_MAP:
        DK_TRY(read_u32(w, &u));
        DK_TRY(push(w, op, u, at));
        return PUT_LIT(w, "{\"$" DK_TAG_MAP_S "\":[");
    case DK_T_SET:
        DK_TRY(read_u32(w, &u));
        DK_TRY(push(w, op, u, at));
        return PUT_LIT(w, "{\"$" DK_TAG_SET_S "\":[");
    case DK_T_INSTANCE:
        DK_TRY(read_key(w, &s, &n, &sat));
        DK_TRY(read_u32(w, &ver));
        if (ver == 0) return bad_tape(w, "instance version 0", at);
        DK_TRY(read_u32(w, &u));
        DK_TRY(push(w, op, u, at));
        w->stack[w->sp - 1].comma = 1;
        DK_TRY(PUT_LIT(w, "{\"" DK_META_CLASS_S "\":"));
        DK_TRY(put_str(w, s, n, 0, sat));
        if (ver == 1) return DK_OK;
        DK_TRY(PUT_LIT(w, ",\"" DK_META_VERSION_S "\":"));
        return put_int(w, ver);
    default: return bad_tape(w, "unknown op", at);
    }
}

/*
 * Writes the next member key of keyed frame f. Plain objects escape a
 * leading '$' of their first key only; field objects (instance, Error,
 * NullProto) of every key. Error fields start with "name", "message".
 */
DK_MUST static int write_key(writer *w, wframe *f)
{
    const uint8_t *s;
    size_t n, sat;
    int dollar;

    DK_TRY(read_key(w, &s, &n, &sat));
    if (f->op == DK_T_ERROR && f->seen < 2) {
        const char *want = f->seen == 0 ? "name" : "message";
        if (n != strlen(want) || memcmp(s, want, n) != 0)
            return bad_tape(w, "error fields must start with name, message", sat);
    }
    /* a key that starts as the meta keys do, with DK_META_CLASS_S's '$' */
    dollar = n > 0 && s[0] == DK_META_CLASS_S[0] && (f->op != DK_T_OBJECT || f->seen == 0);
    f->seen++;
    /* The key tanagra's documents are known by (docs/VERSIONING.md), with
     * its first character escaped: the same key to any JSON reader, but
     * not what JSON.stringify writes, so that darmok's own plain object
     * with such a key is not read as a tanagra document. */
    if (n == 17 && memcmp(s, "_serializationKey", 17) == 0)
        return PUT_LIT(w, "\"\\u005fserializationKey\":");
    DK_TRY(put_str(w, s, n, dollar, sat));
    return PUT_LIT(w, ":");
}

/* Writes the closing text of frame f. */
DK_MUST static int close_frame(writer *w, const wframe *f)
{
    switch (f->op) {
    case DK_T_ARRAY: return PUT_LIT(w, "]");
    case DK_T_OBJECT:
    case DK_T_INSTANCE: return PUT_LIT(w, "}");
    case DK_T_MAP:
    case DK_T_SET: return PUT_LIT(w, "]}");
    default: return PUT_LIT(w, "}}"); /* NULLPROTO, ERROR */
    }
}

/*
 * The main loop: write a value, then let the innermost open container say
 * what comes next (a separator, a hole run, a key, a pair bracket, or its
 * own closing) until a value is due again or the stack is empty. Each
 * iteration consumes tape bytes, so a lying count cannot loop forever.
 */
DK_MUST static int write_all(writer *w)
{
    for (;;) {
        DK_TRY(write_value(w));
        for (;;) {
            wframe *f;

            if (w->sp == 0) {
                if (w->pos != w->len) return bad_tape(w, "bytes after the value", w->pos);
                return DK_OK;
            }
            f = &w->stack[w->sp - 1];
            if (f->half == 1) { /* the pair's key is out: its value next */
                DK_TRY(PUT_LIT(w, ","));
                f->half = 2;
                break;
            }
            if (f->half == 2) {
                DK_TRY(PUT_LIT(w, "]"));
                f->half = 0;
            }
            if (f->left == 0) {
                DK_TRY(close_frame(w, f));
                w->sp--;
                continue;
            }
            if (f->comma) DK_TRY(PUT_LIT(w, ","));
            f->comma = 1;
            if (f->op == DK_T_ARRAY) {
                uint32_t k;
                size_t at = w->pos;

                DK_TRY(need(w, 1));
                if (w->tape[w->pos] != DK_T_HOLE) {
                    f->left--;
                    break;
                }
                w->pos++;
                DK_TRY(read_u32(w, &k));
                if (k == 0 || k > f->left)
                    return bad_tape(w, "hole run outside the array length", at);
                f->left -= k;
                DK_TRY(PUT_LIT(w, "{\"$" DK_TAG_HOLE_S "\":"));
                DK_TRY(put_int(w, k));
                DK_TRY(PUT_LIT(w, "}"));
                continue;
            }
            f->left--;
            if (f->op == DK_T_MAP) {
                DK_TRY(PUT_LIT(w, "["));
                f->half = 1;
            } else if (f->op != DK_T_SET) {
                DK_TRY(write_key(w, f));
            }
            break;
        }
    }
}

/*
 * The one run of the writer over tape[0..len) into out, for both entry
 * points: with write_all called from one place only, the compiler keeps
 * the writer's walk inlined here.
 * strrefs, max_out, max_json: as for dk_json_write_refs (0, SIZE_MAX,
 * SIZE_MAX for an ordinary tape).
 */
static int json_write(const uint8_t *tape, size_t len, const dk_limits *lim, uint32_t flags,
                      int strrefs, size_t max_out, size_t max_json, dk_arena *scratch, dk_buf *out,
                      int *form, dk_err *err)
{
    writer w;
    dk_err own;
    int rc;

    err = dk_err_start(err, &own);
    memset(&w, 0, sizeof w);
    w.tape = tape;
    w.len = len;
    w.out = out;
    w.err = err;
    w.arena = scratch;
    w.max_depth = dk_max_depth(lim);
    w.may_wide = (flags & DK_WRITE_MAY_WIDE) != 0;
    w.strrefs = (uint8_t)(strrefs != 0);
    w.max_out = max_out;
    w.max_json = max_json;
    out->len = 0;
    rc = write_all(&w);
    if (rc == DK_OK && strrefs) rc = json_bound(&w, len);
    if (rc != DK_OK) out->len = 0;
    if (form != NULL) *form = w.wide ? DK_FORM_UTF16 : w.high ? DK_FORM_UTF8 : DK_FORM_ASCII;
    return rc;
}

/* See dk_abi.h. */
int dk_json_write_ex(const uint8_t *tape, size_t len, const dk_limits *lim, uint32_t flags,
                     dk_arena *scratch, dk_buf *out, int *form, dk_err *err)
{
    return json_write(tape, len, lim, flags, 0, SIZE_MAX, SIZE_MAX, scratch, out, form, err);
}

/* See dk_internal.h. */
int dk_json_write_refs(const uint8_t *tape, size_t len, const dk_limits *lim, size_t max_out,
                       size_t max_json, dk_arena *scratch, dk_buf *out, dk_err *err)
{
    return json_write(tape, len, lim, 0, 1, max_out, max_json, scratch, out, NULL, err);
}

/* See darmok.h. */
int dk_json_write_opts(const uint8_t *tape, size_t len, const dk_limits *lim, dk_arena *scratch,
                       dk_buf *out, dk_err *err)
{
    return dk_json_write_ex(tape, len, lim, 0, scratch, out, NULL, err);
}

/* See darmok.h. */
int dk_json_write(const uint8_t *tape, size_t len, const dk_limits *lim, dk_buf *out, dk_err *err)
{
    dk_arena a;
    int rc;

    dk_arena_init(&a);
    rc = dk_json_write_opts(tape, len, lim, &a, out, err);
    dk_arena_free(&a);
    return rc;
}

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
 */
#include <math.h>

#include "dk_internal.h"

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
    uint64_t refs; /* referenceable values met so far */
} writer;

/* Fails with DK_ERR_TAPE at tape offset pos. */
static int bad_tape(writer *w, const char *msg, size_t pos)
{
    return dk_fail(w->err, DK_ERR_TAPE, msg, pos);
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

/* Appends n bytes to the output. */
DK_MUST static int put(writer *w, const void *s, size_t n)
{
    if (w->out->cap - w->out->len < n)
        DK_TRY(dk_buf_reserve(w->out, n, w->err, w->pos));
    dk_put_unsafe(w->out, s, n);
    return DK_OK;
}

/* Appends a string literal. */
#define PUT_LIT(w, lit) put((w), (lit), sizeof(lit) - 1)

/*
 * The output's free bytes after reserving n, for a formatter to write into
 * directly: going through a local buffer would make a memcpy of variable
 * length, a call (memory.copy) in WebAssembly, per number and date.
 */
DK_MUST static int out_room(writer *w, size_t n, char **at)
{
    if (w->out->cap - w->out->len < n)
        DK_TRY(dk_buf_reserve(w->out, n, w->err, w->pos));
    *at = (char *)w->out->data + w->out->len;
    return DK_OK;
}

/*
 * Length of the WTF-8 sequence at s[0..n) whose lead byte is >= 0x80: a
 * well-formed UTF-8 sequence, or an encoded surrogate ED A0..BF xx (then
 * *surrogate is set). 0 when malformed or truncated.
 */
static size_t wtf8_len(const uint8_t *s, size_t n, int *surrogate)
{
    uint8_t c = s[0];

    *surrogate = 0;
    if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        uint8_t lo = c == 0xE0 ? 0xA0 : 0x80;
        if (n < 3 || s[1] < lo || s[1] > 0xBF || (s[2] & 0xC0) != 0x80)
            return 0;
        *surrogate = c == 0xED && s[1] >= 0xA0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        if (n < 4 || s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

static const char hex_digits[] = "0123456789abcdef";

/*
 * The escape JSON.stringify writes for u (a control character, '"', '\\'
 * or a lone surrogate) at d: 2 bytes (\n and the like) or 6 (\uXXXX,
 * lowercase hex); returns which.
 */
static size_t put_escape(uint8_t *d, uint32_t u)
{
    uint8_t e = u == '"' ? '"' : u == '\\' ? '\\' : u == '\b' ? 'b' : u == '\f' ? 'f'
              : u == '\n' ? 'n' : u == '\r' ? 'r' : u == '\t' ? 't' : 0;

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

/*
 * Writes s[0..n) (tape offset at) as a JSON string escaped exactly as
 * JSON.stringify does; with dollar, one extra '$' goes first (the key
 * escaping rule). Lone surrogates become \udxxx; other bytes >= 0x80 are
 * copied after WTF-8 validation.
 *
 * Room: n + 1 bytes stay reserved for the unflushed rest plus the closing
 * quote; each escape re-reserves its 6 bytes on top of that.
 */
DK_MUST static int put_str(writer *w, const uint8_t *s, size_t n, int dollar,
                           size_t at)
{
    dk_buf *o = w->out;
    size_t i = 0, run = 0;

    /* Keys, class keys and most short values: when 16 bytes can be read
     * at s and none of the n < 16 needs work, one fixed-size copy, where
     * the loop below would test them a byte at a time. */
    if (n < 16 && w->len - at >= 16) {
        size_t k = 0;

        while (k < n) {
            dk_runmask m = dk_plain_mask(s + k);

            if (m != 0 && dk_mask_first(m) < n - k) break;
            k += DK_PLAIN_RUN;
        }
        if (k >= n) {
            if (o->cap - o->len < 19) DK_TRY(dk_buf_reserve(o, 19, w->err, at));
            o->data[o->len++] = '"';
            if (dollar) o->data[o->len++] = '$';
            /* a fixed copy; dk_put_short's checks, all true here, made
             * Foo's write 12% slower (native) */
            memcpy(o->data + o->len, s, 16);
            o->len += n;
            o->data[o->len++] = '"';
            return DK_OK;
        }
    }
    if (n > SIZE_MAX - 3)
        return dk_fail(w->err, DK_ERR_TOO_LARGE, "output too large", at);
    DK_TRY(dk_buf_reserve(o, n + 3, w->err, at));
    o->data[o->len++] = '"';
    if (dollar) o->data[o->len++] = '$';
    while (i < n) {
        uint8_t c;
        size_t len = 1;
        int sur = 0;

        if (n - i >= DK_PLAIN_RUN) { /* skip plain bytes a run at a time */
            dk_runmask m = dk_plain_mask(s + i);

            if (m == 0) {
                i += DK_PLAIN_RUN;
                continue;
            }
            i += dk_mask_first(m);
        }
        c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        if (c >= 0x80) {
            len = wtf8_len(s + i, n - i, &sur);
            if (len == 0) return bad_tape(w, "invalid WTF-8 in string", at + i);
            /* WTF-8 encodes a surrogate pair as one 4-byte sequence, never
             * as two 3-byte ones (JSON would read them back as the pair). */
            if (sur && s[i + 1] <= 0xAF && n - i >= 6 && s[i + 3] == 0xED &&
                s[i + 4] >= 0xB0 && s[i + 4] <= 0xBF)
                return bad_tape(w, "surrogate pair split in WTF-8", at + i);
            if (!sur) {
                i += len;
                continue;
            }
        }
        dk_put_short(o, s + run, i - run, w->len - at - run);
        DK_TRY(dk_buf_reserve(o, 6 + (n - i) + 1, w->err, at + i));
        o->len += put_escape(o->data + o->len,
                             sur ? (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 |
                                       (uint32_t)(s[i + 2] & 0x3F)
                                 : c);
        i += len;
        run = i;
    }
    dk_put_short(o, s + run, n - run, w->len - at - run);
    o->data[o->len++] = '"';
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

    if (n > (SIZE_MAX - 2) / 3)
        return dk_fail(w->err, DK_ERR_TOO_LARGE, "output too large", at);
    DK_TRY(dk_buf_reserve(o, 3 * n + 2, w->err, at));
    o->data[o->len++] = '"';
    while (i < n) {
        uint32_t c;
#ifdef __wasm_simd128__
        if (n - i >= 16) { /* room: 3(n - i) >= 48 */
            /* narrowed with unsigned saturation: units 0x100..0x7FFF
             * become 0xFF and units >= 0x8000 become 0, so every unit
             * that is not a plain ASCII byte fails the JSON mask */
            v128_t x = wasm_u8x16_narrow_i16x8(wasm_v128_load(u + 2 * i), wasm_v128_load(u + 2 * i + 16));
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
        i++;
        if (c >= 0xD800 && c <= 0xDBFF && i < n) {
            uint32_t lo = (uint32_t)u[2 * i] | (uint32_t)u[2 * i + 1] << 8;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                i++;
                o->len += dk_put_utf8(o->data + o->len, 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00));
                continue;
            }
        }
        if (c < 0x20 || c == '"' || c == '\\' || (c >= 0xD800 && c <= 0xDFFF)) {
            DK_TRY(dk_buf_reserve(o, 6 + 3 * (n - i) + 1, w->err, at));
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

    if (isnan(d)) return PUT_LIT(w, "{\"$Number\":\"NaN\"}");
    if (isinf(d))
        return d > 0 ? PUT_LIT(w, "{\"$Number\":\"Infinity\"}")
                     : PUT_LIT(w, "{\"$Number\":\"-Infinity\"}");
    if (d == 0 && signbit(d)) return PUT_LIT(w, "{\"$Number\":\"-0\"}");
    DK_TRY(out_room(w, DK_NUM_MAX, &num));
    w->out->len += dk_fmt_double(d, num);
    return DK_OK;
}

/* Writes an integer in decimal. */
DK_MUST static int put_int(writer *w, int64_t v)
{
    char *num;

    DK_TRY(out_room(w, DK_NUM_MAX, &num));
    w->out->len += dk_fmt_int(v, num);
    return DK_OK;
}

/*
 * Opens a container whose op sits at tape offset at: checks the depth,
 * pushes a frame for `left` items. The opening text is the caller's.
 */
DK_MUST static int push(writer *w, uint8_t op, uint32_t left, size_t at)
{
    wframe *f;

    if (w->sp >= w->max_depth)
        return dk_fail(w->err, DK_ERR_DEPTH, "nesting too deep", at);
    if (w->sp == w->cap) {
        uint32_t cap = w->cap ? w->cap * 2 : 32;

        if (cap < w->cap) cap = UINT32_MAX; /* max_depth bounds sp */
        w->stack = dk_arena_grow(w->arena, w->stack, w->cap, cap, sizeof *f);
        if (!w->stack)
            return dk_fail(w->err, DK_ERR_MEMORY, "out of memory", at);
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
    if (kind >= DK_BYTES_KIND_COUNT)
        return bad_tape(w, "unknown bytes kind", at);
    DK_TRY(read_u32(w, &n));
    if (n % dk_bytes_size[kind] != 0)
        return bad_tape(w, "byte length not a multiple of the element size",
                        at);
    DK_TRY(need(w, n));
    name = dk_bytes_name[kind];
    if ((uint64_t)n / 3 * 4 + 32 > SIZE_MAX)
        return dk_fail(w->err, DK_ERR_TOO_LARGE, "output too large", at);
    b64 = DK_B64_LEN((size_t)n);
    DK_TRY(dk_buf_reserve(w->out, b64 + strlen(name) + 8, w->err, at));
    dk_put_unsafe(w->out, "{\"$", 3);
    dk_put_unsafe(w->out, name, strlen(name));
    dk_put_unsafe(w->out, "\":\"", 3);
    w->out->len +=
        dk_b64_encode(w->tape + w->pos, n, w->out->data + w->out->len);
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
    if (isnan(ms)) return PUT_LIT(w, "{\"$Date\":null}");
    if (!(ms >= -DK_DATE_MAX_MS && ms <= DK_DATE_MAX_MS) ||
        ms != (double)(int64_t)ms)
        return bad_tape(w, "date out of range or not an integer", at);
    /* one reservation for {"$Date":"…"} */
    DK_TRY(out_room(w, 10 + DK_ISO_MAX + 2, &iso));
    memcpy(iso, "{\"$Date\":\"", 10);
    n = dk_fmt_iso(ms, iso + 10);
    memcpy(iso + 10 + n, "\"}", 2);
    w->out->len += 10 + n + 2;
    return DK_OK;
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
    case DK_T_UNDEF: return PUT_LIT(w, "{\"$undefined\":0}");
    case DK_T_NULL: return PUT_LIT(w, "null");
    case DK_T_FALSE: return PUT_LIT(w, "false");
    case DK_T_TRUE: return PUT_LIT(w, "true");
    case DK_T_INT:
        DK_TRY(read_u32(w, &u));
        return put_int(w, (int32_t)u);
    case DK_T_F64:
        DK_TRY(need(w, 8));
        w->pos += 8;
        return put_number(w, dk_rdf64(w->tape + at + 1));
    case DK_T_BIGINT:
        DK_TRY(read_str(w, &s, &n, &sat));
        if (!dk_bigint_ok(s, n)) return bad_tape(w, "bad bigint digits", sat);
        DK_TRY(PUT_LIT(w, "{\"$BigInt\":\""));
        DK_TRY(put(w, s, n));
        return PUT_LIT(w, "\"}");
    case DK_T_STR:
        DK_TRY(read_str(w, &s, &n, &sat));
        return put_str(w, s, n, 0, sat);
    case DK_T_STR16: {
        const uint8_t *t;
        DK_TRY(read_u32(w, &u));
        DK_TRY(dk_str16_check(w->len - w->pos, u, at, w->err));
        t = w->tape + w->pos;
        w->pos += (size_t)u * 2;
        return put_str16(w, t, u, at + 5);
    }
    case DK_T_HOLE: return bad_tape(w, "hole outside an array", at);
    case DK_T_REF:
        DK_TRY(read_u32(w, &u));
        if (u >= w->refs) return bad_tape(w, "ref does not point back", at);
        DK_TRY(PUT_LIT(w, "{\"$ref\":"));
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
        DK_TRY(PUT_LIT(w, "{\"$RegExp\":["));
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
        return PUT_LIT(w, "{\"$NullProto\":{");
    case DK_T_ERROR:
        DK_TRY(read_u32(w, &u));
        if (u < 2) return bad_tape(w, "error without name and message", at);
        DK_TRY(push(w, op, u, at));
        return PUT_LIT(w, "{\"$Error\":{");
    case DK_T_MAP:
        DK_TRY(read_u32(w, &u));
        DK_TRY(push(w, op, u, at));
        return PUT_LIT(w, "{\"$Map\":[");
    case DK_T_SET:
        DK_TRY(read_u32(w, &u));
        DK_TRY(push(w, op, u, at));
        return PUT_LIT(w, "{\"$Set\":[");
    case DK_T_INSTANCE:
        DK_TRY(read_str(w, &s, &n, &sat));
        DK_TRY(read_u32(w, &ver));
        if (ver == 0) return bad_tape(w, "instance version 0", at);
        DK_TRY(read_u32(w, &u));
        DK_TRY(push(w, op, u, at));
        w->stack[w->sp - 1].comma = 1;
        DK_TRY(PUT_LIT(w, "{\"$\":"));
        DK_TRY(put_str(w, s, n, 0, sat));
        if (ver == 1) return DK_OK;
        DK_TRY(PUT_LIT(w, ",\"$v\":"));
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

    DK_TRY(read_str(w, &s, &n, &sat));
    if (f->op == DK_T_ERROR && f->seen < 2) {
        const char *want = f->seen == 0 ? "name" : "message";
        if (n != strlen(want) || memcmp(s, want, n) != 0)
            return bad_tape(w, "error fields must start with name, message",
                            sat);
    }
    dollar = n > 0 && s[0] == '$' && (f->op != DK_T_OBJECT || f->seen == 0);
    f->seen++;
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
                if (w->pos != w->len)
                    return bad_tape(w, "bytes after the value", w->pos);
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
                DK_TRY(PUT_LIT(w, "{\"$hole\":"));
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

/* See darmok.h. */
int dk_json_write_opts(const uint8_t *tape, size_t len, const dk_limits *lim,
                       dk_arena *scratch, dk_buf *out, dk_err *err)
{
    writer w;
    int rc;

    memset(err, 0, sizeof *err);
    memset(&w, 0, sizeof w);
    w.tape = tape;
    w.len = len;
    w.out = out;
    w.err = err;
    w.arena = scratch;
    w.max_depth = dk_max_depth(lim);
    out->len = 0;
    rc = write_all(&w);
    if (rc != DK_OK) out->len = 0;
    return rc;
}

/* See darmok.h. */
int dk_json_write(const uint8_t *tape, size_t len, const dk_limits *lim,
                  dk_buf *out, dk_err *err)
{
    dk_arena a;
    int rc;

    dk_arena_init(&a);
    rc = dk_json_write_opts(tape, len, lim, &a, out, err);
    dk_arena_free(&a);
    return rc;
}

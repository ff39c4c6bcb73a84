/*
 * dk_json_read.c - darmok JSON text -> tape.
 *
 * One pass over untrusted text: strict RFC 8259 syntax (UTF-8 validated,
 * no BOM, no trailing commas, no leading zeros, ...), then the darmok
 * layer on top (docs/FORMAT.md): the tag slot, tags, field objects, meta
 * keys, references. Output is the semantic tape of wasm/dk_tape.h.
 *
 * Invariants, whatever the bytes:
 *  - the input carries DK_JSON_PADDING zero bytes after its end; every
 *    scan stops at a zero byte (no token contains an unescaped 0), so hot
 *    loops test for the end once per token, and a zero at p < end is just
 *    an unexpected character;
 *  - nesting is walked with an explicit stack (rframe), never C recursion,
 *    and max_depth bounds the open containers;
 *  - counts are written as placeholders when a container opens and patched
 *    when it closes; lengths are checked against max_length before the
 *    bytes they announce are stored;
 *  - the first failure is reported with the byte offset where it was found.
 *
 * The reader's state, its helpers and its strings are static functions of
 * this one file, so that the calls made per value stay inlinable.
 */
#include <math.h>
#include <stdlib.h>

#include "dk_internal.h"
#include "dk_tags.h"
#include "dk_u16.h"

/*
 * The reader's state: its explicit stack of open containers and its cursor
 * over the padded text; then the helpers every part of it uses to fail and
 * to append ops.
 */

/* Open containers. F_PAIR is a Map entry [k, v]: not a value of its own. */
enum { F_ARRAY, F_SET, F_MAP, F_PAIR, F_OBJECT, F_FIELDS };

/* What the main loop does next. */
enum { S_VALUE, S_AFTER };

typedef struct rframe {
    uint8_t kind;     /* F_* */
    uint8_t wrap;     /* a tag wrapper: '}' must follow the closing bracket */
    uint8_t is_error; /* $Error fields: "name", "message" come first */
    uint8_t meta;     /* instance: 1 while "$v" may come, else 0 */
    size_t open;      /* input offset of the '[' or '{' */
    size_t count_at;  /* tape offset of the u32 count to patch */
    size_t ver_at;    /* instance: tape offset of the u32 version */
    uint64_t count;   /* array slots, entries or members so far */
} rframe;

typedef struct reader {
    const uint8_t *in; /* the text, zero-padded */
    size_t len;
    const uint8_t *p; /* cursor */
    dk_buf *tape;
    dk_err *err;
    dk_arena *arena;
    rframe *stack;
    uint32_t sp, cap; /* frames in use; capacity */
    uint32_t depth;   /* open frames that are values (all but F_PAIR) */
    uint32_t max_depth;
    uint32_t max_len; /* counts and binary lengths */
    uint32_t max_str; /* string bytes: max_len, capped by the tape */
    uint64_t refs;    /* referenceable values opened so far */
    uint64_t keep;    /* the highest $ref index so far + 1; 0: none */
    char *num;        /* scratch copy of a long number token */
    size_t num_cap;
    dk_buf *u16;     /* UTF-16 side table (dk_json_read_ex), or NULL */
    size_t u16_last; /* offset of its last entry */
    int valid_utf8;  /* DK_READ_VALID_UTF8 */
    int raw_wtf8;    /* DK_READ_RAW_WTF8 */
    /* The UTF-16 source (dk_json_read_utf16), or NULL. Input offsets before
     * src_at hold src_delta more bytes than units: the non-ASCII strings
     * before it were counted (nothing else in a JSON text is non-ASCII). */
    const dk_src16 *src;
    size_t src_at, src_delta;
} reader;

/* The cursor's input offset. */
#define POS(r) ((size_t)((r)->p - (r)->in))

/* Fails with code at input offset pos. */
static int fail(reader *r, dk_code code, const char *msg, size_t pos)
{
    return dk_fail(r->err, code, msg, pos);
}

/*
 * Fails with DK_ERR_SYNTAX at the cursor, or at the input length when the
 * cursor is past the text (the padding): msg says what was expected there,
 * and an offset equal to the input length means the input ended.
 */
static int unexpected(reader *r, const char *msg)
{
    if (POS(r) >= r->len) return fail(r, DK_ERR_SYNTAX, msg, r->len);
    return fail(r, DK_ERR_SYNTAX, msg, POS(r));
}

/* 1 when c can start a JSON value. */
static int value_start(uint8_t c)
{
    return c == '{' || c == '[' || c == '"' || c == '-' || c == 't' || c == 'f' || c == 'n' ||
           (c >= '0' && c <= '9');
}

/*
 * A tag got a value of the wrong kind: DK_ERR_FORMAT when a JSON value
 * starts at the cursor (the text may be fine, the document is not), else
 * the syntax error it really is.
 */
static int bad_value(reader *r, const char *msg)
{
    if (value_start(*r->p)) return fail(r, DK_ERR_FORMAT, msg, POS(r));
    return unexpected(r, "expected a value");
}

/*
 * Skips JSON whitespace; the padding's zero stops it. Compact text has
 * none between most tokens: one compare rules out every whitespace byte.
 */
static inline void skip_ws(reader *r)
{
    const uint8_t *p = r->p;

    if (*p > ' ') return;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    r->p = p;
}

/* Makes room for n more tape bytes. */
DK_MUST static int room(reader *r, size_t n)
{
    if (r->tape->cap - r->tape->len >= n) return DK_OK;
    return dk_buf_reserve(r->tape, n, r->err, POS(r));
}

/* Appends an op byte and a u32 (reserved by the caller). */
static void put_op_u32_unsafe(dk_buf *t, uint8_t op, uint32_t v)
{
    t->data[t->len] = op;
    dk_wr32(t->data + t->len + 1, v);
    t->len += 5;
}

/* Appends an op and a u32. */
DK_MUST static int emit_op_u32(reader *r, uint8_t op, uint32_t v)
{
    DK_TRY(room(r, 5));
    put_op_u32_unsafe(r->tape, op, v);
    return DK_OK;
}

/* Appends an op and an f64. */
DK_MUST static int emit_op_f64(reader *r, uint8_t op, double d)
{
    DK_TRY(room(r, 9));
    r->tape->data[r->tape->len] = op;
    dk_wrf64(r->tape->data + r->tape->len + 1, d);
    r->tape->len += 9;
    return DK_OK;
}

/* Appends a bare op. */
DK_MUST static int emit_op(reader *r, uint8_t op)
{
    DK_TRY(room(r, 1));
    r->tape->data[r->tape->len++] = op;
    return DK_OK;
}

/*
 * Strings: scanning and validating a string's bytes, unescaping, the
 * entries of the UTF-16 side table, the "$" of escaped keys. read_str is
 * called for every string value and key, hence static here, where it
 * inlines.
 */

/* Reads 4 hex digits at p into *v; returns how many were hex (4 = ok). */
static int hex4(const uint8_t *p, uint32_t *v)
{
    uint32_t x = 0;

    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        uint32_t d;

        if (c >= '0' && c <= '9')
            d = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (uint32_t)(c - 'A' + 10);
        else
            return i;
        x = x << 4 | d;
    }
    *v = x;
    return 4;
}

/*
 * Decodes the escape at *pp (a backslash) onto the tape. A \uD800-\uDBFF
 * followed by a \uDC00-\uDFFF escape makes one 4-byte UTF-8 sequence; any
 * other surrogate escape is stored as WTF-8 (ED A0..BF xx) and flagged.
 * base is the tape offset where the string's bytes begin, qat the input
 * offset of its opening quote (for DK_ERR_TOO_LONG).
 */
DK_MUST static int unescape(reader *r, const uint8_t **pp, uint32_t *flags, uint64_t limit,
                            size_t base, size_t qat)
{
    const uint8_t *p = *pp;
    dk_buf *t = r->tape;
    uint8_t b[4];
    uint32_t cp, lo;
    size_t n = 1;
    int k;

    switch (p[1]) {
    case '"': b[0] = '"'; break;
    case '\\': b[0] = '\\'; break;
    case '/': b[0] = '/'; break;
    case 'b': b[0] = '\b'; break;
    case 'f': b[0] = '\f'; break;
    case 'n': b[0] = '\n'; break;
    case 'r': b[0] = '\r'; break;
    case 't': b[0] = '\t'; break;
    case 'u':
        k = hex4(p + 2, &cp);
        if (k < 4) {
            r->p = p + 2 + k;
            return unexpected(r, "expected 4 hex digits after \\u");
        }
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && p[2] == '\\' && p[3] == 'u' && hex4(p + 4, &lo) == 4 &&
            lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            *flags |= DK_STR_WTF8;
        }
        n = dk_put_utf8(b, cp);
        if (cp >= 0x80) *flags &= ~DK_STR_ASCII;
        break;
    default: r->p = p + 1; return unexpected(r, "expected an escape: \\\" \\\\ / b f n r t u");
    }
    if (t->len - base + n > limit) return fail(r, DK_ERR_TOO_LONG, "string too long", qat);
    DK_TRY(room(r, n));
    dk_put_unsafe(t, b, n);
    *pp = p + 2;
    return DK_OK;
}

/*
 * Reads the JSON string at the cursor (its opening quote) and appends its
 * unescaped bytes, without a header, to the tape; at most limit bytes,
 * else DK_ERR_TOO_LONG at the quote (checked before each append). Sets
 * *flags to the tape's str flags. The hot loop runs over bytes that need
 * no work and stops at '"', '\\', a control byte (the padding's zero
 * included) or a non-ASCII lead byte, whose sequence it validates.
 */
DK_MUST static int read_str_bytes(reader *r, uint64_t limit, uint32_t *flags)
{
    const uint8_t *p = r->p + 1;
    size_t qat = POS(r), base = r->tape->len;

    *flags = DK_STR_ASCII;
    for (;;) {
        const uint8_t *run = p;
        size_t n;

        if (r->valid_utf8) {
            /* bytes >= 0x80 are plain too: only whether there was one */
            dk_runmask high = 0, h, m;

            for (;;) {
                m = dk_quote_mask(p, &h);
                if (m == 0) {
                    high |= h;
                    p += DK_PLAIN_RUN;
                    continue;
                }
                break;
            }
            high |= dk_mask_before(h, dk_mask_first(m));
            p += dk_mask_first(m);
            if (high != 0) *flags &= ~DK_STR_ASCII;
        } else
            for (;;) {
                uint8_t c;
                size_t len, bad;
                int sur;
                /* plain bytes a run at a time; the load stays in the padding */
                dk_runmask m = dk_plain_mask(p);

                if (m == 0) {
                    p += DK_PLAIN_RUN;
                    continue;
                }
                p += dk_mask_first(m);
                /* the mask stops only at a byte that needs work: '"',
             * '\\', a control byte (all handled below), or >= 0x80 */
                c = *p;
                if (c < 0x80) break;
                /* 4 bytes at most, and the padding's zero ends the check;
                 * an encoded surrogate passes only with DK_READ_RAW_WTF8 */
                len = dk_wtf8_seq(p, 4, r->raw_wtf8, &bad, &sur);
                if (sur) {
                    /* a JS string's lone surrogate, kept (DK_READ_RAW_WTF8).
                     * Beside an escape of the other half it makes two 3-byte
                     * forms in the str (not WTF-8, which joins a pair), that
                     * the JS rebuild joins, as JSON.parse does: a tape only
                     * the rebuild reads (both writers refuse it) */
                    *flags |= DK_STR_WTF8;
                }
                if (len == 0) {
                    r->p = p + bad;
                    return unexpected(r, "expected well-formed UTF-8");
                }
                *flags &= ~DK_STR_ASCII;
                p += len;
            }
        n = (size_t)(p - run);
        if (n) {
            if (r->tape->len - base + n > limit)
                return fail(r, DK_ERR_TOO_LONG, "string too long", qat);
            DK_TRY(room(r, n));
            /* the input is padded: a short run may be read as 16 bytes */
            dk_put_short(r->tape, run, n, DK_JSON_PADDING);
        }
        if (*p == '"') {
            r->p = p + 1;
            return DK_OK;
        }
        if (*p == '\\') {
            DK_TRY(unescape(r, &p, flags, limit, base, qat));
            continue;
        }
        r->p = p;
        return unexpected(r, "expected a control character to be escaped");
    }
}

/*
 * Appends to the side table r->u16 the entry of the str at tape offset at,
 * whose bytes are WTF-8 that read_str_bytes validated or wrote itself
 * (hence no checks), read from the JSON string whose opening quote is at
 * input offset qat and whose closing quote was the last byte read: its
 * source units when it has no escapes (escapes only ever shorten a string)
 * and they are intact (dk_json_read_utf16), a DK_U16_SRC entry; else an
 * entry with its units (the layout: dk_abi.h DK_U16_SRC). An ASCII str (ascii set: one byte, one unit) only ever
 * gets the first kind, from DK_U16_SRC_ASCII_MIN bytes on; JS makes it from
 * its bytes otherwise (units would make it a two-byte string).
 */
DK_MUST static int put_utf16(reader *r, size_t at, size_t qat, int ascii)
{
    size_t n = dk_rd32(r->tape->data + at) >> DK_STR_SHIFT;
    dk_buf *u = r->u16;

    r->u16_last = u->len;
    if (r->src != NULL && qat >= r->src_at) {
        size_t from = qat + 1, span = POS(r) - 1 - from;
        size_t units = ascii ? span : dk_utf8_units(r->in + from, span);
        size_t first = from - r->src_delta;

        r->src_delta += span - units;
        r->src_at = from + span;
        if (n == span && first >= r->src->intact && units <= r->src->n - first &&
            at <= UINT32_MAX) {
            return dk_u16_put_src(u, at, units, first, r->err, POS(r));
        }
    }
    if (ascii) return DK_OK;
    return dk_utf16_entry(u, at, r->tape->data + at + 4, n, r->err, POS(r));
}

/* Strings shorter than this may take the fast path of read_str_op. */
#define DK_SHORT_STR 16u
_Static_assert(DK_SHORT_STR <= DK_JSON_PADDING && DK_SHORT_STR <= DK_U16_SRC_ASCII_MIN,
               "a short string's copy stays in the padding and needs no ASCII entry");

/*
 * The length of the JSON string at p (its opening quote) when its closing
 * quote comes within its first DK_SHORT_STR bytes with nothing before it
 * to unescape or (unless valid_utf8) validate; else DK_SHORT_STR. Clears
 * DK_STR_ASCII in *flags when a byte before the quote is >= 0x80 (only
 * with valid_utf8). Reads p[1 .. 1 + DK_SHORT_STR): each run is read only
 * when the one before it had no zero byte, so it stays in the padding.
 */
static inline size_t short_str_len(const uint8_t *p, int valid_utf8, uint32_t *flags)
{
    const uint8_t *s = p + 1;
    dk_runmask seen = 0;

    for (size_t i = 0; i < DK_SHORT_STR; i += DK_PLAIN_RUN) {
        dk_runmask h, m = dk_quote_mask(s + i, &h);
        unsigned k;

        if (!valid_utf8) m |= h; /* a byte >= 0x80 needs checking */
        if (m == 0) {
            seen |= h;
            continue;
        }
        k = dk_mask_first(m);
        if (s[i + k] != '"') break;
        if (valid_utf8 && (seen | dk_mask_before(h, k)) != 0) *flags &= ~DK_STR_ASCII;
        return i + k;
    }
    return DK_SHORT_STR;
}

/*
 * read_str_op's general path: the str whose header goes at tape offset at
 * (reserved), its bytes after it.
 */
DK_MUST static int read_str_long(reader *r, uint64_t limit, size_t at)
{
    size_t qat = POS(r);
    uint32_t flags;

    r->tape->len = at + 4;
    DK_TRY(read_str_bytes(r, limit, &flags));
    dk_wr32(r->tape->data + at, (uint32_t)(r->tape->len - at - 4) << DK_STR_SHIFT | flags);
    /* a long ASCII str only has an entry pointing at a JS string's units */
    if (r->u16 != NULL && (!(flags & DK_STR_ASCII) ||
                           (r->src != NULL && r->tape->len - at - 4 >= DK_U16_SRC_ASCII_MIN)))
        DK_TRY(put_utf16(r, at, qat, (flags & DK_STR_ASCII) != 0));
    return DK_OK;
}

/*
 * Reads the string at the cursor onto the tape as a str (header, bytes) of
 * at most limit bytes, after the op byte op unless op is 0. Most strings
 * of a document (keys, class names, short values) are short and plain:
 * one reservation, one fixed-size copy and no scan loop for those.
 */
DK_MUST static DK_INLINE int read_str_op(reader *r, uint64_t limit, uint8_t op)
{
    size_t at, qat = POS(r), n;
    uint32_t flags = DK_STR_ASCII;

    DK_TRY(room(r, 1 + 4 + DK_SHORT_STR));
    if (op != 0) r->tape->data[r->tape->len++] = op;
    at = r->tape->len;
    n = short_str_len(r->p, r->valid_utf8, &flags);
    if (n >= DK_SHORT_STR || n > limit) return read_str_long(r, limit, at);
    /* the text is padded: the copy's bytes past the quote exist (a fixed
     * copy: dk_put_short's checks are all true here) */
    memcpy(r->tape->data + at + 4, r->p + 1, DK_SHORT_STR);
    dk_wr32(r->tape->data + at, (uint32_t)n << DK_STR_SHIFT | flags);
    r->tape->len = at + 4 + n;
    r->p += n + 2;
    /* shorter than DK_U16_SRC_ASCII_MIN: an entry only when not ASCII */
    if (r->u16 != NULL && !(flags & DK_STR_ASCII)) return put_utf16(r, at, qat, 0);
    return DK_OK;
}

/* read_str_op without an op. */
DK_MUST static int read_str_max(reader *r, uint64_t limit)
{
    return read_str_op(r, limit, 0);
}

/* Reads a str of at most max_length bytes. */
DK_MUST static int read_str(reader *r)
{
    return read_str_max(r, r->max_str);
}

/* Drops the first byte (a '$') of the str at tape offset at. */
static void strip_dollar(dk_buf *t, size_t at)
{
    uint32_t h = dk_rd32(t->data + at);
    size_t n = h >> DK_STR_SHIFT;

    memmove(t->data + at + 4, t->data + at + 5, n - 1);
    dk_wr32(t->data + at, h - (1u << DK_STR_SHIFT));
    t->len--;
}

/*
 * strip_dollar for the key just read at tape offset at, and the same for
 * its side-table entry (the last one) when it has one; an ASCII key that
 * falls under DK_U16_SRC_ASCII_MIN bytes loses its entry.
 */
static void strip_key_dollar(reader *r, size_t at)
{
    dk_buf *u = r->u16;

    strip_dollar(r->tape, at);
    if (u && u->len >= r->u16_last + 8) {
        size_t e = r->u16_last;
        uint32_t units = dk_rd32(u->data + e + 4);

        if (dk_rd32(u->data + e) != (uint32_t)at) return;
        if ((dk_rd32(r->tape->data + at) & DK_STR_ASCII) &&
            dk_rd32(r->tape->data + at) >> DK_STR_SHIFT < DK_U16_SRC_ASCII_MIN) {
            u->len = e; /* now short: JS makes it from its bytes */
            return;
        }
        if (units & DK_U16_SRC) {
            /* the '$' is the first unit of the source's */
            dk_wr32(u->data + e + 4, units - 1);
            dk_wr32(u->data + e + 8, dk_rd32(u->data + e + 8) + 1);
        } else if (units >= 1) {
            memmove(u->data + e + 8, u->data + e + 10, 2 * (size_t)(units - 1));
            dk_wr32(u->data + e + 4, units - 1);
            u->len -= 2;
        }
    }
}

/*
 * The key s[0..n) is the meta key lit (dk_tags.h), or starts with it: a
 * compare of a constant length, which the compiler makes a load or two.
 */
#define KEY_IS(s, n, lit) ((n) == sizeof(lit) - 1 && memcmp((s), (lit), sizeof(lit) - 1) == 0)
#define KEY_STARTS(s, n, lit) ((n) >= sizeof(lit) - 1 && memcmp((s), (lit), sizeof(lit) - 1) == 0)

/* A scanned number token. */
typedef struct numtok {
    const uint8_t *start, *end;
    int int_lit; /* no fraction, no exponent */
    int neg;
    int small;    /* at most 10 integer digits: mag is exact */
    uint64_t mag; /* |integer part| when small */
} numtok;

/* Scans a number per RFC 8259 grammar at the cursor; no conversion. */
DK_MUST static int scan_number(reader *r, numtok *t)
{
    const uint8_t *p = r->p, *digits;

    t->start = p;
    t->neg = *p == '-';
    t->int_lit = 1;
    t->mag = 0;
    if (t->neg) p++;
    digits = p;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (*p >= '0' && *p <= '9') p++;
    } else {
        r->p = p;
        return unexpected(r, "expected a digit");
    }
    t->small = p - digits <= 10;
    if (t->small)
        for (const uint8_t *d = digits; d < p; d++) t->mag = t->mag * 10 + (uint64_t)(*d - '0');
    if (*p == '.') {
        p++;
        t->int_lit = 0;
        if (*p < '0' || *p > '9') {
            r->p = p;
            return unexpected(r, "expected a digit after '.'");
        }
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        t->int_lit = 0;
        if (*p == '+' || *p == '-') p++;
        if (*p < '0' || *p > '9') {
            r->p = p;
            return unexpected(r, "expected a digit in the exponent");
        }
        while (*p >= '0' && *p <= '9') p++;
    }
    t->end = p;
    r->p = p;
    return DK_OK;
}

/*
 * Clinger's fast path for the validated token t: when its decimal digits
 * (leading zeros aside) number at most 15 and its scaled exponent e
 * satisfies |e| <= 22, both w (the digits as an integer) and 10^|e| are
 * exact doubles and one correctly rounded IEEE multiply or divide gives
 * the correctly rounded value. Returns 0 when the fast path does not apply.
 */
static int exact_decimal(const numtok *t, double *d)
{
    const uint8_t *p = t->start + t->neg;
    uint64_t w = 0;
    int nd = 0, e = 0, esign = 1, ed = 0;

    for (; p < t->end && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.') {
            ed = 1;
            continue;
        }
        e -= ed;
        if (e < -1000) return 0;
        if (w == 0 && *p == '0') continue;
        if (++nd > 15) return 0;
        w = w * 10 + (uint64_t)(*p - '0');
    }
    if (p < t->end) {
        int x = 0;

        p++;
        if (*p == '+' || *p == '-') esign = *p++ == '-' ? -1 : 1;
        for (; p < t->end; p++) {
            x = x * 10 + (*p - '0');
            if (x > 1000) return 0;
        }
        e += esign * x;
    }
    if (w == 0)
        *d = 0.0;
    else if (e < -22 || e > 22)
        return 0;
    else
        *d = e < 0 ? (double)w / dk_pow10[-e] : (double)w * dk_pow10[e];
    if (t->neg) *d = -*d;
    return 1;
}

/*
 * Reads a number: an integer literal that fits int32 and is not -0 becomes
 * DK_T_INT, anything else DK_T_F64 correctly rounded (the JSON.parse
 * value; huge exponents give +-Infinity): by exact_decimal when it can,
 * else by strtod on a NUL-terminated copy of exactly the validated token.
 */
DK_MUST static int read_number(reader *r)
{
    numtok t;
    char small[64], *s = small;
    size_t n;
    double d;
    const uint8_t *p = r->p + (*r->p == '-');

    /* Most numbers are short integers: up to 9 digits cannot overflow an
     * int32, and what follows them decides alone that the token is an
     * integer literal. A leading 0 ("0", "-0", "01") takes the general
     * path, which knows what it means. */
    if (*p >= '1' && *p <= '9') {
        uint32_t v = (uint32_t)(*p++ - '0');
        const uint8_t *stop = p + 8;

        while (p < stop && *p >= '0' && *p <= '9') v = v * 10 + (uint32_t)(*p++ - '0');
        if (!(*p >= '0' && *p <= '9') && *p != '.' && *p != 'e' && *p != 'E') {
            DK_TRY(room(r, 5));
            put_op_u32_unsafe(r->tape, DK_T_INT, *r->p == '-' ? 0u - v : v);
            r->p = p;
            return DK_OK;
        }
    }
    DK_TRY(scan_number(r, &t));
    if (t.int_lit && t.small && !(t.neg && t.mag == 0) &&
        t.mag <= (t.neg ? 0x80000000u : 0x7FFFFFFFu)) {
        int64_t v = t.neg ? -(int64_t)t.mag : (int64_t)t.mag;
        return emit_op_u32(r, DK_T_INT, (uint32_t)(int32_t)v);
    }
    if (exact_decimal(&t, &d)) return emit_op_f64(r, DK_T_F64, d);
    n = (size_t)(t.end - t.start);
    if (n >= sizeof small) { /* rare: one growing scratch copy per call */
        if (n >= r->num_cap) {
            size_t cap = n < SIZE_MAX / 2 ? 2 * n : n + 1;

            r->num = dk_arena_alloc(r->arena, cap);
            if (!r->num) return fail(r, DK_ERR_MEMORY, "out of memory", POS(r));
            r->num_cap = cap;
        }
        s = r->num;
    }
    memcpy(s, t.start, n);
    s[n] = 0;
    d = strtod(s, NULL);
    return emit_op_f64(r, DK_T_F64, d);
}

/*
 * Reads a non-negative integer literal in [lo, hi] (tag and meta values);
 * anything else that is a JSON value fails with DK_ERR_FORMAT at its start.
 */
DK_MUST static int read_uint(reader *r, uint32_t lo, uint32_t hi, uint32_t *v, const char *msg)
{
    size_t at = POS(r);
    numtok t;

    if (*r->p != '-' && (*r->p < '0' || *r->p > '9')) return bad_value(r, msg);
    DK_TRY(scan_number(r, &t));
    if (!t.int_lit || t.neg || !t.small || t.mag < lo || t.mag > hi)
        return fail(r, DK_ERR_FORMAT, msg, at);
    *v = (uint32_t)t.mag;
    return DK_OK;
}

/* Consumes the literal lit (true/false/null) at the cursor. */
DK_MUST static int match_literal(reader *r, const char *lit)
{
    size_t i = 0;

    for (; lit[i]; i++) {
        if (r->p[i] != (uint8_t)lit[i]) {
            r->p += i;
            return unexpected(r, "expected true, false or null");
        }
    }
    r->p += i;
    return DK_OK;
}

/*
 * Pushes a frame for the container opened at input offset open. Every kind
 * but F_PAIR is a nesting level and must fit max_depth. The returned
 * pointer is valid until the next push.
 */
DK_MUST static int push(reader *r, uint8_t kind, size_t open, rframe **out)
{
    rframe *f;

    if (kind != F_PAIR) {
        if (r->depth >= r->max_depth) return fail(r, DK_ERR_DEPTH, "nesting too deep", open);
        r->depth++;
    }
    if (r->sp == r->cap) {
        uint32_t cap = r->cap ? r->cap * 2 : 32;

        if (cap < r->cap) return fail(r, DK_ERR_MEMORY, "out of memory", open);
        r->stack = dk_arena_grow(r->arena, r->stack, r->cap, cap, sizeof *f);
        if (!r->stack) return fail(r, DK_ERR_MEMORY, "out of memory", open);
        r->cap = cap;
    }
    f = &r->stack[r->sp++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->open = open;
    *out = f;
    return DK_OK;
}

/*
 * Pushes a container frame and appends its op with a zero count to patch.
 * Containers are referenceable: each takes the next index here.
 */
DK_MUST static int open_counted(reader *r, uint8_t kind, uint8_t op, size_t open, rframe **out)
{
    DK_TRY(push(r, kind, open, out));
    r->refs++;
    DK_TRY(emit_op_u32(r, op, 0));
    (*out)->count_at = r->tape->len - 4;
    return DK_OK;
}

/* After a tag's value: the tag object must end here ("}"). */
DK_MUST static int close_tag(reader *r)
{
    skip_ws(r);
    if (*r->p == '}') {
        r->p++;
        return DK_OK;
    }
    if (*r->p == ',') return fail(r, DK_ERR_FORMAT, "tag object has extra members", POS(r));
    return unexpected(r, "expected '}'");
}

/*
 * Closes the innermost frame at its closing bracket (already consumed):
 * patches its count, pops it, and for a tag wrapper consumes the '}'.
 */
DK_MUST static int close_top(reader *r)
{
    rframe *f = &r->stack[r->sp - 1];

    if (f->kind != F_PAIR) {
        dk_wr32(r->tape->data + f->count_at, (uint32_t)f->count);
        r->depth--;
    }
    if (f->is_error && f->count < 2)
        return fail(r, DK_ERR_FORMAT, "$Error needs name and message", f->open);
    r->sp--;
    return f->wrap ? close_tag(r) : DK_OK;
}

/*
 * At a Map entry: it must be a [key, value] array. Pushes F_PAIR; the
 * next state reads the key.
 */
DK_MUST static int map_entry(reader *r, int *state)
{
    rframe *f;

    if (*r->p != '[') return bad_value(r, "Map entry is not a [key, value]");
    DK_TRY(push(r, F_PAIR, POS(r), &f));
    r->p++;
    skip_ws(r);
    if (*r->p == ']') return fail(r, DK_ERR_FORMAT, "Map entry is not a [key, value]", POS(r));
    *state = S_VALUE;
    return DK_OK;
}

/*
 * Reads a member key (cursor at its quote) of keyed frame f and its ':'.
 * Plain objects take keys as written. In field objects "$$x" means "$x"
 * and a single-"$" key is meta: "$v" (version) is allowed right after an
 * instance's class key, anything else is DK_ERR_FORMAT. $Error fields
 * start with "name", "message". Sets *state (and *slots = 0 after a meta
 * member, which is not counted).
 */
DK_MUST static int member_key(reader *r, rframe *f, int *state, uint64_t *slots)
{
    size_t kat = POS(r), mark = r->tape->len, n;
    const uint8_t *key;

    DK_TRY(read_str(r));
    n = dk_rd32(r->tape->data + mark) >> DK_STR_SHIFT;
    key = r->tape->data + mark + 4;
    skip_ws(r);
    if (*r->p != ':') return unexpected(r, "expected ':'");
    r->p++;
    skip_ws(r);
    if (f->kind == F_FIELDS && KEY_STARTS(key, n, DK_META_CLASS_S)) {
        if (KEY_STARTS(key, n, DK_META_ESCAPE_S)) {
            strip_key_dollar(r, mark);
            n--;
            key = r->tape->data + mark + 4;
        } else if (f->meta && KEY_IS(key, n, DK_META_VERSION_S)) {
            uint32_t v;

            r->tape->len = mark;
            f->meta = 0;
            DK_TRY(read_uint(r, 1, UINT32_MAX, &v, "$v must be a positive integer"));
            dk_wr32(r->tape->data + f->ver_at, v);
            *state = S_AFTER;
            *slots = 0;
            return DK_OK;
        } else {
            return fail(r, DK_ERR_FORMAT, "unknown or misplaced meta key", kat);
        }
    }
    f->meta = 0;
    if (f->is_error && f->count < 2) {
        const char *want = f->count == 0 ? "name" : "message";
        if (n != strlen(want) || memcmp(key, want, n) != 0)
            return fail(r, DK_ERR_FORMAT, "$Error fields must start with name, message", kat);
    }
    *state = S_VALUE;
    return DK_OK;
}

/* The TAG_* for name s[0..n) (without "$"), or -1. */
static int find_tag(const uint8_t *s, size_t n)
{
    /* the tags documents are full of, before the table walk: most tags
     * are one of these two, and the walk costs more than two compares */
    if (n == 3 && memcmp(s, "Map", 3) == 0) return DK_TAG_MAP;
    if (n == 4 && memcmp(s, "Date", 4) == 0) return DK_TAG_DATE;
    for (int i = 0; i < DK_TAG_BYTES + DK_BYTES_KIND_COUNT; i++) {
        const char *t = i < DK_TAG_BYTES ? dk_tag_names[i] : dk_bytes_name[i - DK_TAG_BYTES];
        size_t k = 0;

        /* no strlen: t's NUL ends the compare, s may hold any byte */
        while (k < n && t[k] != 0 && (uint8_t)t[k] == s[k]) k++;
        if (k == n && t[k] == 0) return i;
    }
    return -1;
}

/*
 * The strings of $Number and $Date are not string values: max_length
 * (whose JS name says "the largest string, array, Map, Set or binary")
 * does not apply to them, as the protobuf format has no string there. They
 * are read with room for any valid one (an ISO date has at most 27
 * characters) whatever max_length; a longer one fails as any bad value.
 */
#define DK_TAG_TEXT_ROOM 32u
#define TAG_TEXT_MAX(r) ((r)->max_str > DK_TAG_TEXT_ROOM ? (r)->max_str : DK_TAG_TEXT_ROOM)

/* {"$Number":"NaN" | "Infinity" | "-Infinity" | "-0"} -> DK_T_F64. */
DK_MUST static int read_tag_number(reader *r)
{
    static const char *const names[4] = {"NaN", "Infinity", "-Infinity", "-0"};
    const double values[4] = {(double)NAN, (double)INFINITY, -(double)INFINITY, -0.0};
    size_t at = POS(r), mark = r->tape->len, n;
    uint32_t flags;

    if (*r->p != '"') return bad_value(r, "$Number needs a string");
    DK_TRY(read_str_bytes(r, TAG_TEXT_MAX(r), &flags));
    n = r->tape->len - mark;
    for (int i = 0; i < 4; i++) {
        if (strlen(names[i]) == n && memcmp(names[i], r->tape->data + mark, n) == 0) {
            r->tape->len = mark;
            return emit_op_f64(r, DK_T_F64, values[i]);
        }
    }
    return fail(r, DK_ERR_FORMAT, "bad $Number", at);
}

/* {"$Date":"<ISO>" | null} -> DK_T_DATE. */
DK_MUST static int read_tag_date(reader *r)
{
    size_t at = POS(r), mark = r->tape->len;
    uint32_t flags;
    double ms;

    r->refs++;
    if (*r->p == 'n') {
        DK_TRY(match_literal(r, "null"));
        return emit_op_f64(r, DK_T_DATE, (double)NAN);
    }
    if (*r->p != '"') return bad_value(r, "$Date needs a string or null");
    /* the op's room, now: the tag may be the document's first token (read
     * where it stands, nothing on the tape yet), and an empty string adds
     * no bytes, so the tape would have no memory for the sum below */
    DK_TRY(room(r, 9));
    DK_TRY(read_str_bytes(r, TAG_TEXT_MAX(r), &flags));
    if (!dk_parse_iso(r->tape->data + mark, r->tape->len - mark, &ms))
        return fail(r, DK_ERR_FORMAT, "bad $Date", at);
    r->tape->len = mark;
    return emit_op_f64(r, DK_T_DATE, ms);
}

/*
 * {"$Date":"<ISO>"} exactly as the writer writes it (no whitespace before
 * the string), cursor at its first key: the date is parsed where it stands
 * instead of through the tag slot's key and a copy of the string, and
 * *done is set with the cursor after the string. Anything else (null,
 * whitespace, a bad or over-long string) is left to the general path,
 * which makes the same tape or the error.
 */
DK_MUST static int read_date_inline(reader *r, int *done)
{
    const uint8_t *s = r->p + 9;
    size_t left = r->len - POS(r), n;
    double ms;

    /* the padding covers the 9 bytes compared; the text has the rest */
    if (memcmp(r->p, "\"$" DK_TAG_DATE_S "\":\"", 9) != 0) return DK_OK;
    if (left >= 9 + 25 && s[24] == '"')
        n = 24;
    else if (left >= 9 + 28 && s[27] == '"')
        n = 27;
    else
        return DK_OK;
    if (!dk_parse_iso(s, n, &ms)) return DK_OK;
    r->refs++;
    DK_TRY(emit_op_f64(r, DK_T_DATE, ms));
    r->p = s + n + 1;
    *done = 1;
    return DK_OK;
}

/* {"$RegExp":["source","flags"]} -> DK_T_REGEXP. */
DK_MUST static int read_tag_regexp(reader *r)
{
    const char *msg = "$RegExp needs [source, flags]";

    r->refs++;
    if (*r->p != '[') return bad_value(r, msg);
    r->p++;
    skip_ws(r);
    if (*r->p != '"') return bad_value(r, msg);
    DK_TRY(emit_op(r, DK_T_REGEXP));
    DK_TRY(read_str(r));
    skip_ws(r);
    if (*r->p == ']') return fail(r, DK_ERR_FORMAT, msg, POS(r));
    if (*r->p != ',') return unexpected(r, "expected ','");
    r->p++;
    skip_ws(r);
    if (*r->p != '"') return bad_value(r, msg);
    DK_TRY(read_str(r));
    skip_ws(r);
    if (*r->p == ',') return fail(r, DK_ERR_FORMAT, msg, POS(r));
    if (*r->p != ']') return unexpected(r, "expected ']'");
    r->p++;
    return DK_OK;
}

/* {"$BigInt":"digits"} -> DK_T_BIGINT. */
DK_MUST static int read_tag_bigint(reader *r)
{
    size_t at = POS(r), mark;

    if (*r->p != '"') return bad_value(r, "$BigInt needs a string");
    DK_TRY(emit_op(r, DK_T_BIGINT));
    mark = r->tape->len;
    DK_TRY(read_str(r));
    if (!dk_bigint_ok(r->tape->data + mark + 4, r->tape->len - mark - 4))
        return fail(r, DK_ERR_FORMAT, "bad $BigInt", at);
    return DK_OK;
}

/*
 * {"$<Kind>":"base64"} -> DK_T_BYTES. The text is unescaped onto the tape
 * (at most the base64 length of max_length bytes) and decoded in place.
 */
DK_MUST static int read_tag_bytes(reader *r, uint8_t kind)
{
    size_t at = POS(r), data, n;
    uint32_t flags;

    r->refs++;
    if (*r->p != '"') return bad_value(r, "binary value needs a base64 string");
    DK_TRY(room(r, 6));
    r->tape->data[r->tape->len++] = DK_T_BYTES;
    r->tape->data[r->tape->len++] = kind;
    r->tape->len += 4;
    data = r->tape->len;
    DK_TRY(read_str_bytes(r, DK_B64_LEN((uint64_t)r->max_len), &flags));
    if (!dk_b64_decode(r->tape->data + data, r->tape->len - data, r->tape->data + data, &n))
        return fail(r, DK_ERR_FORMAT, "bad base64", at);
    if (n > r->max_len) return fail(r, DK_ERR_TOO_LONG, "binary value too long", at);
    if (n % dk_bytes_size[kind] != 0)
        return fail(r, DK_ERR_FORMAT, "byte length not a multiple of the element size", at);
    dk_wr32(r->tape->data + data - 4, (uint32_t)n);
    r->tape->len = data + n;
    return DK_OK;
}

/*
 * Reads the value of tag `tag` (cursor after the ':' and whitespace) of the
 * tag object opened at input offset open. Scalar tags are read whole with
 * their closing '}'; Map, Set, NullProto and Error push a frame.
 */
DK_MUST static int read_tag(reader *r, int tag, size_t open, int *state, uint64_t *slots)
{
    rframe *f;
    uint32_t v;
    size_t at = POS(r);

    switch (tag) {
    case DK_TAG_UNDEFINED:
        DK_TRY(read_uint(r, 0, 0, &v, "$undefined must be 0"));
        DK_TRY(emit_op(r, DK_T_UNDEF));
        break;
    case DK_TAG_NUMBER: DK_TRY(read_tag_number(r)); break;
    case DK_TAG_BIGINT: DK_TRY(read_tag_bigint(r)); break;
    case DK_TAG_DATE: DK_TRY(read_tag_date(r)); break;
    case DK_TAG_REGEXP: DK_TRY(read_tag_regexp(r)); break;
    case DK_TAG_HOLE:
        if (r->sp == 0 || r->stack[r->sp - 1].kind != F_ARRAY)
            return fail(r, DK_ERR_FORMAT, "$hole outside an array", open);
        DK_TRY(read_uint(r, 1, UINT32_MAX, &v, "$hole must be a positive integer"));
        DK_TRY(emit_op_u32(r, DK_T_HOLE, v));
        *slots = v;
        break;
    case DK_TAG_REF:
        DK_TRY(read_uint(r, 0, UINT32_MAX, &v, "$ref must be a non-negative integer"));
        if (v >= r->refs) return fail(r, DK_ERR_FORMAT, "$ref does not point back", at);
        if (v >= r->keep) r->keep = (uint64_t)v + 1;
        DK_TRY(emit_op_u32(r, DK_T_REF, v));
        break;
    case DK_TAG_MAP:
    case DK_TAG_SET:
        if (*r->p != '[') return bad_value(r, "$Map/$Set need an array");
        DK_TRY(open_counted(r, tag == DK_TAG_MAP ? F_MAP : F_SET,
                            tag == DK_TAG_MAP ? DK_T_MAP : DK_T_SET, open, &f));
        f->wrap = 1;
        r->p++;
        skip_ws(r);
        if (*r->p == ']') {
            r->p++;
            *state = S_AFTER;
            return close_top(r);
        }
        if (tag == DK_TAG_MAP) return map_entry(r, state);
        *state = S_VALUE;
        return DK_OK;
    case DK_TAG_NULLPROTO:
    case DK_TAG_ERROR:
        if (*r->p != '{') return bad_value(r, "$NullProto/$Error need an object");
        DK_TRY(
            open_counted(r, F_FIELDS, tag == DK_TAG_ERROR ? DK_T_ERROR : DK_T_NULLPROTO, open, &f));
        f->wrap = 1;
        f->is_error = tag == DK_TAG_ERROR;
        r->p++;
        skip_ws(r);
        if (*r->p == '}') {
            r->p++;
            *state = S_AFTER;
            return close_top(r);
        }
        if (*r->p != '"') return unexpected(r, "expected a key or '}'");
        return member_key(r, f, state, slots);
    default: DK_TRY(read_tag_bytes(r, (uint8_t)(tag - DK_TAG_BYTES))); break;
    }
    *state = S_AFTER;
    return close_tag(r);
}

/*
 * Reads {"$":"ClassKey" ...}: cursor at the class key's value. Appends
 * INSTANCE, the class key, version 1 and count 0 (both patched later) and
 * pushes the field frame; the main loop continues after this "member".
 */
DK_MUST static int read_instance(reader *r, size_t open, int *state, uint64_t *slots)
{
    rframe *f;

    if (*r->p != '"') return bad_value(r, "class key must be a string");
    DK_TRY(push(r, F_FIELDS, open, &f));
    r->refs++;
    DK_TRY(emit_op(r, DK_T_INSTANCE));
    DK_TRY(read_str(r));
    DK_TRY(room(r, 8));
    f->ver_at = r->tape->len;
    f->count_at = r->tape->len + 4;
    dk_wr32(r->tape->data + f->ver_at, 1);
    dk_wr32(r->tape->data + f->count_at, 0);
    r->tape->len += 8;
    f->meta = 1;
    *state = S_AFTER;
    *slots = 0;
    return DK_OK;
}

/* The tag slot is read with room for any tag name, whatever max_length. */
#define DK_TAG_ROOM 32u

/*
 * Reads a '{' at the cursor up to its first member's value. The first key
 * (the tag slot) decides what the object is: "$" an instance, a tag name a
 * tag, "$$..." a plain object whose key loses one '$', anything else a
 * plain object with the key as written. OBJECT and its count are appended
 * before the key is read, so the plain case needs no moving; the other
 * cases drop those bytes again.
 */
DK_MUST static int read_object(reader *r, int *state, uint64_t *slots)
{
    size_t open = POS(r), mark = r->tape->len, kat, n;
    const uint8_t *key;
    rframe *f;
    int tag;

    r->p++;
    skip_ws(r);
    if (*r->p == '}') {
        r->p++;
        DK_TRY(open_counted(r, F_OBJECT, DK_T_OBJECT, open, &f));
        *state = S_AFTER;
        return close_top(r);
    }
    if (*r->p != '"') return unexpected(r, "expected a key or '}'");
    /* the '$' the class key, an escaped key and every tag start with */
    if (r->p[1] == DK_META_CLASS_S[0]) {
        int done = 0;

        /* an instance, {"$":..., as the writer writes it: the key "$"
         * needs no reading onto the tape and dropping again (the 4 bytes
         * are in the text or its padding, as p[1] is not its zero) */
        if (memcmp(r->p, "\"" DK_META_CLASS_S "\":", sizeof DK_META_CLASS_S + 2) == 0) {
            r->p += sizeof DK_META_CLASS_S + 2;
            skip_ws(r);
            return read_instance(r, open, state, slots);
        }
        const uint8_t *q = r->p + 2;

        DK_TRY(read_date_inline(r, &done));
        if (done) {
            *state = S_AFTER;
            return close_tag(r);
        }
        /* a tag name as the writer writes it (letters and digits, no
         * escapes) is looked up where it stands: the general path below
         * would read it onto the tape and drop it again. DK_TAG_ROOM bounds
         * the scan, whose bytes are in the text or the padding's first
         * zero. Anything else, or no tag, goes that way. */
        while ((size_t)(q - r->p) < DK_TAG_ROOM &&
               (((*q | 0x20) >= 'a' && (*q | 0x20) <= 'z') || (*q >= '0' && *q <= '9')))
            q++;
        if (*q == '"' && q > r->p + 2 && (tag = find_tag(r->p + 2, (size_t)(q - r->p - 2))) >= 0) {
            r->p = q + 1;
            skip_ws(r);
            if (*r->p != ':') return unexpected(r, "expected ':'");
            r->p++;
            skip_ws(r);
            return read_tag(r, tag, open, state, slots);
        }
    }
    DK_TRY(emit_op_u32(r, DK_T_OBJECT, 0));
    kat = POS(r);
    DK_TRY(read_str_max(r, r->max_str > DK_TAG_ROOM ? r->max_str : DK_TAG_ROOM));
    skip_ws(r);
    if (*r->p != ':') return unexpected(r, "expected ':'");
    r->p++;
    skip_ws(r);
    n = dk_rd32(r->tape->data + mark + 5) >> DK_STR_SHIFT;
    key = r->tape->data + mark + 9;
    if (KEY_STARTS(key, n, DK_META_CLASS_S)) {
        if (KEY_IS(key, n, DK_META_CLASS_S)) {
            r->tape->len = mark;
            return read_instance(r, open, state, slots);
        }
        if (KEY_STARTS(key, n, DK_META_ESCAPE_S)) {
            strip_key_dollar(r, mark + 5);
            n--;
        } else if ((tag = find_tag(key + 1, n - 1)) >= 0) { /* "$" and the tag's name */
            r->tape->len = mark;
            return read_tag(r, tag, open, state, slots);
        }
    }
    if (n > r->max_str) return fail(r, DK_ERR_TOO_LONG, "string too long", kat);
    DK_TRY(push(r, F_OBJECT, open, &f));
    r->refs++;
    f->count_at = mark + 1;
    *state = S_VALUE;
    return DK_OK;
}

/* Reads a '[' at the cursor; the array may close at once. */
DK_MUST static int read_array(reader *r, int *state)
{
    rframe *f;

    DK_TRY(open_counted(r, F_ARRAY, DK_T_ARRAY, POS(r), &f));
    r->p++;
    skip_ws(r);
    if (*r->p == ']') {
        r->p++;
        *state = S_AFTER;
        return close_top(r);
    }
    *state = S_VALUE;
    return DK_OK;
}

/*
 * A value filling `slots` array slots (0 for a meta member) just ended
 * inside the innermost frame: count it and read the separator or the
 * closing bracket. Sets *state, and *slots for what follows.
 */
DK_MUST static int after_value(reader *r, int *state, uint64_t *slots)
{
    rframe *f = &r->stack[r->sp - 1];
    int keyed = f->kind == F_OBJECT || f->kind == F_FIELDS;

    skip_ws(r);
    if (f->kind == F_PAIR) {
        f->count++;
        if (f->count == 1 && *r->p == ',') {
            r->p++;
            *state = S_VALUE;
            return DK_OK;
        }
        if (f->count == 2 && *r->p == ']') {
            r->p++;
            *slots = 1;
            *state = S_AFTER;
            return close_top(r);
        }
        if (*r->p == ',' || *r->p == ']')
            return fail(r, DK_ERR_FORMAT, "Map entry is not a [key, value]", POS(r));
        return unexpected(r, f->count == 1 ? "expected ','" : "expected ']'");
    }
    f->count += *slots;
    if (f->count > r->max_len) return fail(r, DK_ERR_TOO_LONG, "too many items", f->open);
    if (*r->p == ',') {
        r->p++;
        skip_ws(r);
        if (f->kind == F_MAP) return map_entry(r, state);
        if (!keyed) {
            *state = S_VALUE;
            return DK_OK;
        }
        if (*r->p != '"') return unexpected(r, "expected a key");
        return member_key(r, f, state, slots);
    }
    if (*r->p == (keyed ? '}' : ']')) {
        r->p++;
        *slots = 1;
        *state = S_AFTER;
        return close_top(r);
    }
    return unexpected(r, keyed ? "expected ',' or '}'" : "expected ',' or ']'");
}

/*
 * The main loop. S_VALUE reads one value at the cursor (scalars whole,
 * containers just their opening); S_AFTER hands the value just finished
 * to its container, or, with no container open, checks that only
 * whitespace follows.
 */
DK_MUST static int parse(reader *r)
{
    int state = S_VALUE;
    uint64_t slots = 1;

    for (;;) {
        if (state == S_AFTER) {
            if (r->sp == 0) {
                skip_ws(r);
                if (POS(r) < r->len)
                    return fail(r, DK_ERR_SYNTAX, "expected the end of input after the value",
                                POS(r));
                return DK_OK;
            }
            DK_TRY(after_value(r, &state, &slots));
            continue;
        }
        skip_ws(r);
        slots = 1;
        state = S_AFTER;
        switch (*r->p) {
        case '[': DK_TRY(read_array(r, &state)); break;
        case '{': DK_TRY(read_object(r, &state, &slots)); break;
        case '"': DK_TRY(read_str_op(r, r->max_str, DK_T_STR)); break;
        case 't':
            DK_TRY(match_literal(r, "true"));
            DK_TRY(emit_op(r, DK_T_TRUE));
            break;
        case 'f':
            DK_TRY(match_literal(r, "false"));
            DK_TRY(emit_op(r, DK_T_FALSE));
            break;
        case 'n':
            DK_TRY(match_literal(r, "null"));
            DK_TRY(emit_op(r, DK_T_NULL));
            break;
        case '-':
        case '0':
        case '1':
        case '2':
        case '3':
        case '4':
        case '5':
        case '6':
        case '7':
        case '8':
        case '9': DK_TRY(read_number(r)); break;
        default: return unexpected(r, "expected a value");
        }
    }
}

/*
 * dk_json_read_ex, with src: strings from the UTF-16 source where they can
 * (dk_json_read_utf16; only with DK_READ_VALID_UTF8 and a side table).
 */
static int json_read(const uint8_t *json, size_t len, uint32_t flags, const dk_limits *lim,
                     dk_arena *scratch, dk_buf *tape_out, dk_buf *u16_out, const dk_src16 *src,
                     uint32_t *keep_out, dk_err *err)
{
    reader r;
    dk_err own;
    int rc;

    err = dk_err_start(err, &own);
    memset(&r, 0, sizeof r);
    tape_out->len = 0;
    if (u16_out) u16_out->len = 0;
    if (keep_out) *keep_out = 0;
    r.u16 = u16_out;
    r.valid_utf8 = (flags & DK_READ_VALID_UTF8) != 0;
    r.raw_wtf8 = (flags & DK_READ_RAW_WTF8) != 0;
    r.src = r.valid_utf8 && u16_out != NULL ? src : NULL;
    if (!(flags & DK_READ_PADDED)) {
        uint8_t *copy;

        if (len > SIZE_MAX - DK_JSON_PADDING)
            return dk_fail(err, DK_ERR_TOO_LARGE, "input too large", 0);
        copy = dk_arena_alloc(scratch, len + DK_JSON_PADDING);
        if (!copy) return dk_fail(err, DK_ERR_MEMORY, "out of memory", 0);
        if (len) memcpy(copy, json, len);
        memset(copy + len, 0, DK_JSON_PADDING);
        json = copy;
    }
    r.in = json;
    r.len = len;
    r.p = json;
    r.tape = tape_out;
    r.err = err;
    r.arena = scratch;
    r.max_depth = dk_max_depth(lim);
    r.max_len = dk_max_length(lim);
    r.max_str = dk_max_str(lim);
    rc = parse(&r);
    if (rc != DK_OK) {
        tape_out->len = 0;
        if (u16_out) u16_out->len = 0;
    }
    /* over UINT32_MAX only after 2^32 values: not in a tape wasm32 holds */
    if (keep_out && rc == DK_OK) *keep_out = r.keep > UINT32_MAX ? UINT32_MAX : (uint32_t)r.keep;
    return rc;
}

/* See dk_abi.h. */
int dk_json_read_ex(const uint8_t *json, size_t len, uint32_t flags, const dk_limits *lim,
                    dk_arena *scratch, dk_buf *tape_out, dk_buf *u16_out, uint32_t *keep_out,
                    dk_err *err)
{
    return json_read(json, len, flags, lim, scratch, tape_out, u16_out, NULL, keep_out, err);
}

/* See dk_abi.h. */
int dk_json_read_utf16(uint8_t *area, size_t n, const dk_limits *lim, dk_arena *scratch,
                       dk_buf *tape_out, dk_buf *u16_out, size_t *json_len, uint32_t *keep_out,
                       dk_err *err)
{
    size_t at = DK_U16_AT(n), lone = 0, len = dk_utf16_to_wtf8_lone(area + at, n, area, &lone);
    /* unit i (bytes at + 2i) is intact past the UTF-8 and its padding
     * (len >= n: every unit gives a byte at least) */
    dk_src16 src = {area + at, n, (len + DK_JSON_PADDING - at + 1) / 2};

    *json_len = len;
    memset(area + len, 0, DK_JSON_PADDING);
    /* with a lone surrogate the text is WTF-8, checked as it is read, and
     * strings come from the tape, not from the units */
    return json_read(area, len,
                     DK_READ_PADDED | (lone == 0 ? DK_READ_VALID_UTF8 : DK_READ_RAW_WTF8), lim,
                     scratch, tape_out, u16_out, lone == 0 ? &src : NULL, keep_out, err);
}

/* See darmok.h. */
int dk_json_read_opts(const uint8_t *json, size_t len, uint32_t flags, const dk_limits *lim,
                      dk_arena *scratch, dk_buf *tape_out, dk_err *err)
{
    /* DK_READ_PADDED only: the core's own flags (DK_READ_VALID_UTF8) are
     * not for text from outside */
    return dk_json_read_ex(json, len, flags & DK_READ_PADDED, lim, scratch, tape_out, NULL, NULL,
                           err);
}

/* See darmok.h. */
int dk_json_read(const uint8_t *json, size_t len, const dk_limits *lim, dk_buf *tape_out,
                 dk_err *err)
{
    dk_arena a;
    int rc;

    dk_arena_init(&a);
    rc = dk_json_read_opts(json, len, 0, lim, &a, tape_out, err);
    dk_arena_free(&a);
    return rc;
}

/*
 * dk_json_str.h - the JSON reader's strings: scanning and validating a
 * string's bytes, unescaping, the entries of the UTF-16 side table, the
 * "$" of escaped keys. Included by dk_json_read.c only: static so that
 * read_str, called for every string value and key, stays in the reader's
 * translation unit and inlines there.
 */
#ifndef DK_JSON_STR_H
#define DK_JSON_STR_H

#include "dk_json_reader.h"
#include "dk_u16.h"

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
 * offset of its opening quote (for DK_ERR_TOO_LARGE).
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
    if (t->len - base + n > limit) return fail(r, DK_ERR_TOO_LARGE, "string too long", qat);
    DK_TRY(room(r, n));
    dk_put_unsafe(t, b, n);
    *pp = p + 2;
    return DK_OK;
}

/*
 * Reads the JSON string at the cursor (its opening quote) and appends its
 * unescaped bytes, without a header, to the tape; at most limit bytes,
 * else DK_ERR_TOO_LARGE at the quote (checked before each append). Sets
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
                return fail(r, DK_ERR_TOO_LARGE, "string too long", qat);
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

#endif

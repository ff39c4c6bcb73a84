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
 * The reader's state is in dk_json_reader.h, its strings in dk_json_str.h:
 * headers of static functions this file alone includes, so that the calls
 * made per value stay inlinable.
 */
#include <math.h>
#include <stdlib.h>

#include "dk_json_str.h"
#include "dk_tags.h"

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
    if (f->kind == F_FIELDS && n > 0 && key[0] == '$') {
        if (n >= 2 && key[1] == '$') {
            strip_key_dollar(r, mark);
            n--;
            key = r->tape->data + mark + 4;
        } else if (f->meta && n == 2 && key[1] == 'v') {
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
    if (n > r->max_len) return fail(r, DK_ERR_TOO_LARGE, "binary value too long", at);
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
    if (r->p[1] == '$') {
        int done = 0;

        /* an instance, {"$":..., as the writer writes it: the key "$"
         * needs no reading onto the tape and dropping again */
        if (r->p[2] == '"' && r->p[3] == ':') {
            r->p += 4;
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
    if (n >= 1 && key[0] == '$') {
        if (n == 1) {
            r->tape->len = mark;
            return read_instance(r, open, state, slots);
        }
        if (key[1] == '$') {
            strip_key_dollar(r, mark + 5);
            n--;
        } else if ((tag = find_tag(key + 1, n - 1)) >= 0) {
            r->tape->len = mark;
            return read_tag(r, tag, open, state, slots);
        }
    }
    if (n > r->max_str) return fail(r, DK_ERR_TOO_LARGE, "string too long", kat);
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
    if (f->count > r->max_len) return fail(r, DK_ERR_TOO_LARGE, "too many items", f->open);
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
    int rc;

    memset(err, 0, sizeof *err);
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

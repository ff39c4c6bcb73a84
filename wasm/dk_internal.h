/*
 * dk_internal.h - shared by the core's .c files; never installed, never
 * included by callers. Everything here trusts its arguments unless its
 * comment says otherwise.
 */
#ifndef DK_INTERNAL_H
#define DK_INTERNAL_H

#include <string.h>

#include "darmok.h"
#include "dk_abi.h"

/*
 * DK_MUST (darmok.h): fallible internal functions return a dk_code too.
 * DK_INLINE: a per-value helper of a hot loop (a few loads and a store, or
 * a fast path): clang keeps such a function with several callers out of
 * line, and in WebAssembly the call costs about as much as the work.
 * DK_COLD: its rare step (growth, failure), kept a call so that the inlined
 * part stays small; DK_UNLIKELY marks the branch to it.
 * DK_NOINLINE: a step that is not rare but belongs to another mode than
 * its caller's usual one, kept a call for the same reason.
 */
#if defined(__GNUC__) || defined(__clang__)
#define DK_INLINE inline __attribute__((always_inline))
#define DK_COLD __attribute__((noinline, cold))
#define DK_NOINLINE __attribute__((noinline))
#define DK_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DK_INLINE inline
#define DK_COLD
#define DK_NOINLINE
#define DK_UNLIKELY(x) (x)
#endif

/* Propagates a failure: evaluates expr, returns its code unless DK_OK. */
#define DK_TRY(expr)                                \
    do {                                            \
        int dk_try_rc_ = (expr);                    \
        if (dk_try_rc_ != DK_OK) return dk_try_rc_; \
    } while (0)

/*
 * Records a failure unless one is recorded already (first failure wins) and
 * returns the error now held in err, so callers can `return dk_fail(...)`.
 * err NULL: returns code.
 */
int dk_fail(dk_err *err, dk_code code, const char *msg, size_t pos);

/*
 * The start of every public call that takes a dk_err: returns the error
 * the call fills, err or, when the caller passed NULL, own, cleared
 * (dk_err_clear). The core below it then always has one to read.
 */
dk_err *dk_err_start(dk_err *err, dk_err *own);

/*
 * Returns n bytes, 8-byte aligned, from the arena; NULL when out of memory.
 * The memory lives until dk_arena_reset/dk_arena_free.
 */
void *dk_arena_alloc(dk_arena *a, size_t n);

/*
 * Returns a copy of the array old[0..old_n) (elements of `size` bytes) in
 * a new block of new_n >= old_n elements from the arena; the old block is
 * simply abandoned. NULL on OOM or size overflow. Used to double explicit
 * stacks: the waste is bounded by the final size.
 */
void *dk_arena_grow(dk_arena *a, const void *old, size_t old_n, size_t new_n, size_t size);

/*
 * dk_buf_reserve, but the capacity doubles only up to most bytes (at least
 * the room asked for): an output with a bound does not take twice it.
 */
DK_MUST int dk_buf_reserve_upto(dk_buf *b, size_t n, size_t most, dk_err *err, size_t pos);

/*
 * Every arena allocation may be read (not written) up to DK_ARENA_SLACK
 * bytes past its end: each chunk has that many spare bytes after it. The
 * bytes read there are unspecified. Lets short copies move a fixed 16 bytes.
 */
#define DK_ARENA_SLACK 16u

/* Appends n bytes; the caller has reserved room (hence _unsafe). */
static inline void dk_put_unsafe(dk_buf *b, const void *s, size_t n)
{
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

/*
 * dk_put_unsafe for runs that are mostly short (keys, small values): when
 * s[0..16) may be read (readable >= 16: the caller's input padding, more
 * tape, DK_ARENA_SLACK) and b has 16 bytes of room, n <= 16 bytes go as one
 * fixed 16-byte copy. A memcpy of variable length is a call (memory.copy)
 * in WebAssembly; the bytes past n are overwritten later or unused.
 */
static inline void dk_put_short(dk_buf *b, const uint8_t *s, size_t n, size_t readable)
{
    if (n <= 16 && readable >= 16 && b->cap - b->len >= 16) {
        memcpy(b->data + b->len, s, 16);
        b->len += n;
    } else {
        dk_put_unsafe(b, s, n);
    }
}

/* Little-endian, unaligned loads and stores; callers check bounds. */
static inline uint32_t dk_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void dk_wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint64_t dk_rd64(const uint8_t *p)
{
    return (uint64_t)dk_rd32(p) | (uint64_t)dk_rd32(p + 4) << 32;
}

static inline void dk_wr64(uint8_t *p, uint64_t v)
{
    dk_wr32(p, (uint32_t)v);
    dk_wr32(p + 4, (uint32_t)(v >> 32));
}

static inline double dk_rdf64(const uint8_t *p)
{
    uint64_t u = dk_rd64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* The limits of lim (NULL or 0 fields: the defaults). */
static inline uint32_t dk_max_depth(const dk_limits *lim)
{
    return lim && lim->max_depth ? lim->max_depth : DK_DEFAULT_MAX_DEPTH;
}

static inline uint32_t dk_max_length(const dk_limits *lim)
{
    return lim && lim->max_length ? lim->max_length : DK_DEFAULT_MAX_LENGTH;
}

/* Bytes of one string or binary value the readers take: max_length, but
 * never past the default, whatever lim says. */
static inline uint32_t dk_max_str(const dk_limits *lim)
{
    uint32_t n = dk_max_length(lim);
    return n < DK_DEFAULT_MAX_LENGTH ? n : DK_DEFAULT_MAX_LENGTH;
}

/*
 * The index (0..7) of the lowest byte lane of m whose top bit is set, 8 when
 * none is: the answer of the 8-bytes-at-a-time (SWAR) scans below.
 */
static inline unsigned dk_first_lane(uint64_t m)
{
    unsigned i = 0;

    if (m == 0) return 8;
#if defined(__GNUC__) || defined(__clang__)
    i = (unsigned)__builtin_ctzll(m) >> 3;
#else
    while (!(m & 0x80u)) {
        m >>= 8;
        i++;
    }
#endif
    return i;
}

/* The count of set bits of x. */
static inline unsigned dk_popcount64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_popcountll(x);
#else
    unsigned n = 0;

    for (; x != 0; x &= x - 1) n++;
    return n;
#endif
}

/*
 * Scans DK_PLAIN_RUN bytes at a time: 16 with WebAssembly SIMD (emcc
 * -msimd128), else 8 (SWAR: each test sets the top bit of a byte's lane; a
 * lane above a hit may be set falsely by a borrow, the lowest set lane
 * never is). The caller makes sure the bytes exist (DK_JSON_PADDING,
 * DK_ARENA_SLACK, or a length check).
 *   dk_plain_mask(p)  0 when none of the bytes at p needs work in a JSON
 *                     string: a control byte (< 0x20), '"', '\\', or a
 *                     byte >= 0x80
 *   dk_ascii_mask(p)  0 when all of them are < 0x80
 *   dk_quote_mask(p, &high)  dk_plain_mask without the bytes >= 0x80
 *                     (text known to be valid UTF-8), which go to
 *                     *high as dk_ascii_mask(p)
 *   dk_mask_first(m)  for m != 0, the index of the first byte that failed
 *   dk_mask_before(m, k)  the lanes of an exact mask m (dk_ascii_mask's)
 *                     below byte k (k < DK_PLAIN_RUN)
 * A loop advances by the constant DK_PLAIN_RUN when the mask is 0 and takes
 * the index only when it is not: an advance computed from the mask makes
 * every block wait for the previous one's.
 */
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#define DK_PLAIN_RUN 16u
typedef uint32_t dk_runmask;
/* The lanes of x that need work in a JSON string besides bytes >= 0x80: a
 * control byte, '"' or '\\' (also for a block narrowed from UTF-16). */
static inline dk_runmask dk_quote_bits(v128_t x)
{
    return (dk_runmask)wasm_i8x16_bitmask(
        wasm_v128_or(wasm_u8x16_lt(x, wasm_i8x16_splat(0x20)),
                     wasm_v128_or(wasm_i8x16_eq(x, wasm_i8x16_splat('"')),
                                  wasm_i8x16_eq(x, wasm_i8x16_splat('\\')))));
}
static inline dk_runmask dk_quote_mask(const uint8_t *p, dk_runmask *high)
{
    v128_t x = wasm_v128_load(p);

    *high = (dk_runmask)wasm_i8x16_bitmask(x);
    return dk_quote_bits(x);
}
static inline dk_runmask dk_ascii_mask(const uint8_t *p)
{
    return (dk_runmask)wasm_i8x16_bitmask(wasm_v128_load(p));
}
static inline unsigned dk_mask_first(dk_runmask m)
{
    return (unsigned)__builtin_ctz(m);
}
static inline dk_runmask dk_mask_before(dk_runmask m, unsigned k)
{
    return m & ((1u << k) - 1u);
}
#else
#define DK_PLAIN_RUN 8u
typedef uint64_t dk_runmask;
static inline dk_runmask dk_quote_mask(const uint8_t *p, dk_runmask *high)
{
    const uint64_t ones = 0x0101010101010101u, hb = 0x8080808080808080u;
    uint64_t x = dk_rd64(p);
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');

    *high = x & hb;
    return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) & hb;
}
static inline dk_runmask dk_ascii_mask(const uint8_t *p)
{
    return dk_rd64(p) & 0x8080808080808080u;
}
static inline unsigned dk_mask_first(dk_runmask m)
{
    return dk_first_lane(m);
}
static inline dk_runmask dk_mask_before(dk_runmask m, unsigned k)
{
    return k == 0 ? 0 : m & (~(uint64_t)0 >> (64 - 8 * k));
}
#endif
static inline dk_runmask dk_plain_mask(const uint8_t *p)
{
    dk_runmask high, m = dk_quote_mask(p, &high);

    return m | high;
}

/*
 * Length of the sequence at p[0..n) whose lead byte p[0] is >= 0x80: a
 * well-formed UTF-8 sequence (RFC 3629: no overlongs, nothing above
 * U+10FFFF), or with lone_ok an encoded surrogate ED A0..BF xx as well
 * (WTF-8), which sets *surrogate. 0 when malformed or truncated, with *bad
 * the index of the first byte that cannot belong to a valid sequence. Each
 * byte is read only after the previous one was accepted, so a zero byte (the
 * JSON reader's padding) ends a check as n does. The core's one decoder of
 * sequences: callers keep their own rules on surrogate pairs; inline, as
 * the JSON reader's string scan calls it for every non-ASCII character.
 */
static inline size_t dk_wtf8_seq(const uint8_t *p, size_t n, int lone_ok, size_t *bad,
                                 int *surrogate)
{
    uint8_t c = p[0], lo = 0x80, hi = 0xBF;
    size_t len;

    *surrogate = 0;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED && !lone_ok) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        *bad = 0;
        return 0;
    }
    if (n < 2 || p[1] < lo || p[1] > hi) {
        *bad = 1;
        return 0;
    }
    for (size_t i = 2; i < len; i++) {
        if (i >= n || (p[i] & 0xC0) != 0x80) {
            *bad = i;
            return 0;
        }
    }
    *surrogate = c == 0xED && p[1] >= 0xA0;
    return len;
}

/*
 * Writes code point c (<= U+10FFFF; a surrogate gives its own 3 bytes, as
 * WTF-8) as UTF-8 at d; returns the byte count, 1 to 4.
 */
static inline size_t dk_put_utf8(uint8_t *d, uint32_t c)
{
    if (c < 0x80) {
        d[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x800) {
        d[0] = (uint8_t)(0xC0 | c >> 6);
        d[1] = (uint8_t)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        d[0] = (uint8_t)(0xE0 | c >> 12);
        d[1] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
        d[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    d[0] = (uint8_t)(0xF0 | c >> 18);
    d[1] = (uint8_t)(0x80 | (c >> 12 & 0x3F));
    d[2] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
    d[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

/*
 * Stores the UTF-16 unit v at d (unaligned), little-endian: on little-endian
 * hosts (wasm) a plain 2-byte store, which byte stores would not become.
 */
static inline void dk_put_u16(uint8_t *d, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint16_t u = (uint16_t)v;
    memcpy(d, &u, 2);
#else
    d[0] = (uint8_t)v;
    d[1] = (uint8_t)(v >> 8);
#endif
}

#ifndef __wasm_simd128__
/* The 4 ASCII bytes of a (LE) widened to 4 UTF-16 units, as 8 LE bytes. */
static inline uint64_t dk_widen4(uint32_t a)
{
    return (uint64_t)(a & 0xFFu) | (uint64_t)(a & 0xFF00u) << 8 | (uint64_t)(a & 0xFF0000u) << 16 |
           (uint64_t)(a & 0xFF000000u) << 24;
}
#endif

/* The DK_PLAIN_RUN bytes at s as as many UTF-16 units (LE) at d. */
static inline void dk_widen_run(const uint8_t *s, uint8_t *d)
{
#ifdef __wasm_simd128__
    v128_t x = wasm_v128_load(s);

    wasm_v128_store(d, wasm_u16x8_extend_low_u8x16(x));
    wasm_v128_store(d + 16, wasm_u16x8_extend_high_u8x16(x));
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t wa = dk_widen4(dk_rd32(s)), wb = dk_widen4(dk_rd32(s + 4));

    memcpy(d, &wa, 8);
    memcpy(d + 8, &wb, 8);
#else
    for (int k = 0; k < 8; k++) dk_put_u16(d + 2 * k, s[k]);
#endif
}

/*
 * Widens the ASCII run of s[i..n) that starts at i to UTF-16 units at *d
 * (room for 2(n - i) bytes), DK_PLAIN_RUN bytes at a time; returns the
 * index of the first byte after the run (a byte >= 0x80, or n) and moves *d
 * past the units.
 */
static inline size_t dk_widen_ascii(const uint8_t *s, size_t i, size_t n, uint8_t **d)
{
    uint8_t *o = *d;

    while (n - i >= DK_PLAIN_RUN) {
        dk_runmask m = dk_ascii_mask(s + i);
        unsigned k;

        dk_widen_run(s + i, o); /* whole; the units past the run are rewritten */
        if (m == 0) {
            i += DK_PLAIN_RUN;
            o += 2 * DK_PLAIN_RUN;
            continue;
        }
        k = dk_mask_first(m);
        i += k;
        o += 2 * k;
        break;
    }
    while (i < n && s[i] < 0x80) {
        dk_put_u16(o, s[i++]);
        o += 2;
    }
    *d = o;
    return i;
}

static inline void dk_wrf64(uint8_t *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    dk_wr64(p, u);
}

/*
 * The UTF-16 text a JSON text was made from (dk_json_read_utf16): its n
 * units (LE) and the first of them the UTF-8 and its padding have not
 * overwritten.
 */
typedef struct dk_src16 {
    const uint8_t *units;
    size_t n;
    size_t intact;
} dk_src16;

/* ---- text helpers (dk_text.c) ------------------------------------------ */

/* Longest output of dk_fmt_double, sign and exponent included. */
#define DK_NUM_MAX 32

/*
 * Writes the finite, non-(-0) double x as Number.prototype.toString does
 * (shortest round-trip digits, ECMAScript layout) into out; returns the
 * length. No terminating zero.
 */
size_t dk_fmt_double(double x, char out[DK_NUM_MAX]);

/*
 * The count of UTF-16 code units of the WTF-8 bytes s[0..n) (trusted, as
 * for dk_wtf8_to_utf16): one a sequence, two a 4-byte one. Reads up to
 * s[n + 15] (DK_JSON_PADDING).
 */
size_t dk_utf8_units(const uint8_t *s, size_t n);

/*
 * Writes the n UTF-16 code units at s (little-endian, any alignment) as
 * WTF-8 to d (room for 3n bytes; no overlap); returns the byte count. A
 * surrogate pair becomes one 4-byte sequence, a lone surrogate its 3-byte
 * form (ED A0..BF xx): the bytes JS's TapeWriter writes for the same
 * string. For DK_T_STR16 values, which JS copies out of a string with one
 * Buffer#ucs2Write, the copy of a two-byte string that costs V8 least.
 */
size_t dk_utf16_to_wtf8(const uint8_t *s, size_t n, uint8_t *d);

/*
 * dk_utf16_to_wtf8, except that a lone surrogate becomes U+FFFD (EF BF BD)
 * as Buffer#utf8Write and TextEncoder write it: UTF-8. Also in place: the
 * units may sit at the end of an area of 3n bytes or more whose start is d
 * (s >= d + n), as every unit is read before a byte lands on it. Unless
 * lone is NULL, *lone is set to the count of lone surrogates replaced.
 */
size_t dk_utf16_to_utf8(const uint8_t *s, size_t n, uint8_t *d, size_t *lone);

/* dk_utf16_to_wtf8 (in place too, as above), and *lone set to the count of
 * lone surrogates written in their own 3-byte form. */
size_t dk_utf16_to_wtf8_lone(const uint8_t *s, size_t n, uint8_t *d, size_t *lone);

/* DK_T_STR16 unit counts must be below this: their WTF-8 stays < 2^30. */
#define DK_STR16_MAX_UNITS (DK_STR_MAX / 3)

/* A buffer reused by one call for what it converts one value at a time. */
typedef struct dk_scratch {
    uint8_t *p;
    size_t cap;
} dk_scratch;

/*
 * Checks the payload of a DK_T_STR16 whose op is at tape offset at: u units
 * of which avail bytes are in the tape. DK_ERR_TAPE at `at` when u is
 * DK_STR16_MAX_UNITS or more or the units run past the tape. Both writers'
 * one check of the op.
 */
DK_MUST static inline int dk_str16_check(size_t avail, uint32_t u, size_t at, dk_err *err)
{
    if (u >= DK_STR16_MAX_UNITS)
        return dk_fail(err, DK_ERR_TAPE, "tape UTF-16 string too long", at);
    if ((size_t)u * 2 > avail)
        return dk_fail(err, DK_ERR_TAPE, "tape string runs past the end of the tape", at);
    return DK_OK;
}

/*
 * The payload of a DK_T_STR16 whose op is at tape offset at: u units at p,
 * of which avail bytes are in the tape. Made WTF-8 (dk_utf16_to_wtf8) in s,
 * grown in arena a as needed: *out, *n bytes, valid until the next use of
 * s. Fails as dk_str16_check does, or with DK_ERR_MEMORY. The protobuf
 * encoder's reading of the op (the JSON writer escapes the units directly,
 * put_str16).
 */
DK_MUST int dk_str16_wtf8(const uint8_t *p, size_t avail, uint32_t u, size_t at, dk_arena *a,
                          dk_scratch *s, const uint8_t **out, size_t *n, dk_err *err);

#ifdef DK_CHECK_PB_BOUND
/* Test and fuzz builds: how many times a protobuf string table picked a
 * new seed after a long probe, so that test/c/test_hash.c can see that its
 * crafted keys really collide under pb_hash. */
extern unsigned long dk_pb_reseeds_seen;
#endif

/*
 * The longest string value the protobuf encoder shares (KIND_STRING_REF):
 * repeated values are short (names, tags, enum-like words); every string
 * value it looks up costs a hash of its bytes and a probe of a table that
 * grows with the document, a cost long unrepeated values (bodies of text)
 * would pay for nothing.
 */
#define DK_PB_REF_MAX_BYTES 64

/*
 * dk_json_write_opts of a tape dk_pb_read_ex wrote with DK_READ_STRREFS
 * (and DK_READ_KEYREFS): each DK_T_STRREF and key reference is written as
 * the string it names. The JSON text may not pass max_json, checked
 * whenever the output grows (DK_ERR_TOO_LARGE). The copies of texts
 * longer than DK_PB_REF_MAX_BYTES, which only a document darmok did not
 * write names, may not take more than max_out bytes of JSON
 * (DK_ERR_TOO_LARGE): a small document can name one long text many times.
 * Copies of shorter ones (at most 6 * 64 + 2 bytes of JSON for 2 bytes of
 * protobuf) and of keys of at most that length (bounded by max_json
 * alone) are not counted, so every document darmok writes with such keys
 * transcodes; the bytes of longer keys named again are.
 */
int dk_json_write_refs(const uint8_t *tape, size_t len, const dk_limits *lim, size_t max_out,
                       size_t max_json, dk_arena *scratch, dk_buf *out, dk_err *err);

/* Writes the int64 v in decimal into out; returns the length. */
size_t dk_fmt_int(int64_t v, char out[DK_NUM_MAX]);

/* The largest |time value| of a JavaScript Date, in milliseconds. */
#define DK_DATE_MAX_MS 8.64e15

/* Length of the longest Date.prototype.toISOString result. */
#define DK_ISO_MAX 27

/*
 * Writes the time value ms (an integer, |ms| <= DK_DATE_MAX_MS: checked by
 * the caller) as toISOString does; returns the length (24 or 27).
 */
size_t dk_fmt_iso(double ms, char out[DK_ISO_MAX]);

/*
 * Parses s[0..n) in the exact form toISOString writes (4-digit years for
 * 0..9999, else +YYYYYY/-YYYYYY). Returns 1 and sets *ms, or 0 when s is
 * not such a string or the time is out of a Date's range.
 */
int dk_parse_iso(const uint8_t *s, size_t n, double *ms);

/* Bytes dk_b64_encode writes for n input bytes. */
#define DK_B64_LEN(n) (((n) + 2) / 3 * 4)

/* Writes standard padded base64 of src[0..n) to out; returns its length. */
size_t dk_b64_encode(const uint8_t *src, size_t n, uint8_t *out);

/*
 * Decodes canonical padded base64 s[0..n) into out (out may equal s: the
 * decoder never writes ahead of what it has read). Returns 1 and sets *len,
 * or 0 for bad characters, bad length, misplaced padding or non-zero
 * trailing bits.
 */
int dk_b64_decode(const uint8_t *s, size_t n, uint8_t *out, size_t *len);

/* 1 when s[0..n) is a BigInt decimal: "-"? digits, no leading zero, no -0. */
int dk_bigint_ok(const uint8_t *s, size_t n);

/* 1e0 .. 1e22: the powers of ten that are exact doubles. */
extern const double dk_pow10[23];

/* The element size in bytes of a DK_BYTES_* kind. */
extern const uint8_t dk_bytes_size[DK_BYTES_KIND_COUNT];

#endif

/*
 * dk_text.c - the textual forms JSON borrows from JavaScript: numbers as
 * Number.prototype.toString writes them, dates as toISOString, base64 for
 * binary data, BigInt decimals, and the names of the binary kinds.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dk_internal.h"
#include "dk_tags.h"

/* Indexed by DK_BYTES_*; these are the JSON tag names minus the "$". */
const char *const dk_tag_names[DK_TAG_BYTES] = {
    [DK_TAG_UNDEFINED] = DK_TAG_UNDEFINED_S,
    [DK_TAG_NUMBER] = DK_TAG_NUMBER_S,
    [DK_TAG_BIGINT] = DK_TAG_BIGINT_S,
    [DK_TAG_DATE] = DK_TAG_DATE_S,
    [DK_TAG_REGEXP] = DK_TAG_REGEXP_S,
    [DK_TAG_MAP] = DK_TAG_MAP_S,
    [DK_TAG_SET] = DK_TAG_SET_S,
    [DK_TAG_NULLPROTO] = DK_TAG_NULLPROTO_S,
    [DK_TAG_ERROR] = DK_TAG_ERROR_S,
    [DK_TAG_HOLE] = DK_TAG_HOLE_S,
    [DK_TAG_REF] = DK_TAG_REF_S,
};

const char *const dk_bytes_name[DK_BYTES_KIND_COUNT] = {
    "Buffer",        "ArrayBuffer",       "DataView",     "Int8Array",
    "Uint8Array",    "Uint8ClampedArray", "Int16Array",   "Uint16Array",
    "Int32Array",    "Uint32Array",       "Float32Array", "Float64Array",
    "BigInt64Array", "BigUint64Array",
};

const uint8_t dk_bytes_size[DK_BYTES_KIND_COUNT] = {
    1, 1, 1, 1, 1, 1, 2, 2, 4, 4, 4, 8, 8, 8,
};

/* "00" to "99": two digits by one load, not a division and a remainder. */
static const char digit_pairs[201] = "000102030405060708091011121314151617181920212223242526272829"
                                     "303132333435363738394041424344454647484950515253545556575859"
                                     "606162636465666768697071727374757677787980818283848586878889"
                                     "90919293949596979899";

/* v (0..99) as two digits. */
static void put2(char *out, uint32_t v)
{
    memcpy(out, digit_pairs + 2 * v, 2);
}

/*
 * Writes v in decimal; returns the length. The digits go in from the last,
 * two at a time from digit_pairs, in 32-bit arithmetic once the rest fits:
 * in WebAssembly a 64-bit division by a constant stays a division.
 */
size_t dk_fmt_int(int64_t v, char out[DK_NUM_MAX])
{
    /* -(v + 1) + 1: no overflow even for INT64_MIN */
    uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1u : (uint64_t)v, x;
    size_t o = v < 0, n = 1;
    uint32_t w;
    char *p;

    if (u <= UINT32_MAX)
        for (w = (uint32_t)u; w >= 10; w /= 10) n++;
    else
        for (x = u; x >= 10; x /= 10) n++; /* at most 20 */
    if (v < 0) out[0] = '-';
    p = out + o + n;
    while (u > UINT32_MAX) {
        /* eight digits at a time */
        uint64_t q = u / 100000000u;

        w = (uint32_t)(u - q * 100000000u);
        u = q;
        for (int i = 0; i < 4; i++, w /= 100) {
            p -= 2;
            put2(p, w % 100);
        }
    }
    for (w = (uint32_t)u; w >= 100; w /= 100) {
        p -= 2;
        put2(p, w % 100);
    }
    if (w >= 10)
        put2(p - 2, w);
    else
        p[-1] = (char)('0' + w);
    return o + n;
}

/* Splits "%.*e" output "d[.ddd]e[+-]xx" into digits; returns their count. */
static size_t split_e(const char *tmp, char digits[DK_NUM_MAX], int *e10)
{
    size_t i = 0, k = 0;
    int e = 0, neg;

    for (; tmp[i] != 'e'; i++)
        if (tmp[i] != '.') digits[k++] = tmp[i];
    neg = tmp[++i] == '-';
    for (i++; tmp[i]; i++) e = e * 10 + (tmp[i] - '0');
    *e10 = neg ? -e : e;
    return k;
}

/* 1 when the decimal d1.d2..dk * 10^e10 reads back (strtod) as x. */
static int reads_back(const char *digits, size_t k, int e10, double x)
{
    char tmp[40];
    size_t o = 0;

    tmp[o++] = digits[0];
    tmp[o++] = '.';
    memcpy(tmp + o, digits + 1, k - 1);
    o += k - 1;
    (void)snprintf(tmp + o, sizeof tmp - o, "e%d", e10);
    return strtod(tmp, NULL) == x;
}

/*
 * Finds the shortest decimal digits d1..dk and exponent e10 (x = d1.d2..dk
 * * 10^e10) that read back as x > 0, finite; among those of that length
 * the closest to x (ECMA-262 Number::toString). C's %.*e and strtod are
 * correctly rounded. For normal doubles, 15-digit decimals lie further
 * apart than x's rounding interval is wide, so 15 digits either read back
 * (then trailing zeros give the shortest form) or nothing shorter does;
 * then 16, then 17 digits (which always read back). One exception: at a
 * power of two the interval below x is half as wide, so the nearest
 * 16-digit decimal may miss while the next one up reads back. Subnormals
 * have wide intervals (5e-324): try every length from 1. prec (digits - 1)
 * is where to start: 14 for normal x, 0 for subnormals, 15 when x is known
 * to need more than 15 digits.
 */
static size_t shortest_digits(double x, int prec, char digits[DK_NUM_MAX], int *e10)
{
    char tmp[40];

    size_t k;

    for (;; prec++) {
        (void)snprintf(tmp, sizeof tmp, "%.*e", prec, x);
        k = split_e(tmp, digits, e10);
        if (prec >= 16 || reads_back(digits, k, *e10, x)) break;
        if (prec == 15) {
            uint64_t u;
            char up[DK_NUM_MAX];
            int upe = *e10;
            size_t i = k;

            memcpy(&u, &x, sizeof u);
            if ((u & 0xFFFFFFFFFFFFFu) != 0) continue;
            memcpy(up, digits, k);
            while (i > 0 && up[i - 1] == '9') up[--i] = '0';
            if (i == 0) {
                up[0] = '1';
                upe++;
            } else {
                up[i - 1]++;
            }
            if (reads_back(up, k, upe, x)) {
                memcpy(digits, up, k);
                *e10 = upe;
                break;
            }
        }
    }
    while (k > 1 && digits[k - 1] == '0') k--;
    return k;
}

/* Powers of ten that are exact doubles. */
const double dk_pow10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/*
 * Fast path of shortest_digits for numbers with few decimals (0.1, 12.5,
 * 0.000123): the smallest k for which m = round(x * 10^k) < 10^15 gives
 * m / 10^k == x. Both m and 10^k are exact doubles and IEEE division is
 * correctly rounded, so the test is exactly "the decimal m * 10^-k reads
 * back as x", and a decimal of at most 15 digits that reads back is the
 * only one of its length (see shortest_digits). Returns 0 when no such k.
 */
static size_t few_digits(double x, char digits[DK_NUM_MAX], int *e10)
{
    for (int k = 1; k <= 22; k++) {
        double s = x * dk_pow10[k], m;
        size_t n;

        if (s >= 1e15) return 0;
        m = (double)(int64_t)(s + 0.5);
        if (m / dk_pow10[k] != x) continue;
        n = dk_fmt_int((int64_t)m, digits);
        *e10 = (int)n - 1 - k;
        while (n > 1 && digits[n - 1] == '0') n--;
        return n;
    }
    return 0;
}

/*
 * Number::toString(x) for finite x other than -0 (ECMA-262 6.1.6.1.20):
 * with k shortest digits and x = 0.digits * 10^n, plain notation for
 * -6 < n <= 21, exponent notation otherwise.
 */
size_t dk_fmt_double(double x, char out[DK_NUM_MAX])
{
    char digits[DK_NUM_MAX];
    size_t o = 0, k = 0;
    int e10 = 0, n;

    if (x < 0) {
        out[o++] = '-';
        x = -x;
    }
    if (x < 9007199254740992.0 && (double)(int64_t)x == x)
        return o + dk_fmt_int((int64_t)x, out + o);
    if (x >= 1e-7 && x < 1e15) {
        /* few_digits finds every form of up to 15 digits in this range */
        k = few_digits(x, digits, &e10);
        if (k == 0) k = shortest_digits(x, 15, digits, &e10);
    } else {
        k = shortest_digits(x, x < DBL_MIN ? 0 : 14, digits, &e10);
    }
    n = e10 + 1;
    if ((int)k <= n && n <= 21) {
        memcpy(out + o, digits, k);
        o += k;
        for (int z = n - (int)k; z > 0; z--) out[o++] = '0';
    } else if (0 < n && n <= 21) {
        memcpy(out + o, digits, (size_t)n);
        o += (size_t)n;
        out[o++] = '.';
        memcpy(out + o, digits + n, k - (size_t)n);
        o += k - (size_t)n;
    } else if (-6 < n && n <= 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int z = -n; z > 0; z--) out[o++] = '0';
        memcpy(out + o, digits, k);
        o += k;
    } else {
        out[o++] = digits[0];
        if (k > 1) {
            out[o++] = '.';
            memcpy(out + o, digits + 1, k - 1);
            o += k - 1;
        }
        out[o++] = 'e';
        out[o++] = n - 1 < 0 ? '-' : '+';
        o += dk_fmt_int(n - 1 < 0 ? 1 - n : n - 1, out + o);
    }
    return o;
}

/* See dk_internal.h. */
size_t dk_utf8_units(const uint8_t *s, size_t n)
{
    size_t units = 0, i = 0;
#ifdef __wasm_simd128__
    /* a block's units: its bytes less continuation bytes (10xxxxxx) plus
     * 4-byte lead bytes (>= 0xF0), that is 32 less the lanes that are
     * continuation bytes or below 0xF0 */
    for (; i < n; i += 16) {
        v128_t x = wasm_v128_load(s + i);
        uint32_t cont = (uint32_t)wasm_i8x16_bitmask(wasm_i8x16_eq(
            wasm_v128_and(x, wasm_i8x16_splat((int8_t)0xC0)), wasm_i8x16_splat((int8_t)0x80)));
        uint32_t low =
            (uint32_t)wasm_i8x16_bitmask(wasm_u8x16_lt(x, wasm_i8x16_splat((int8_t)0xF0)));

        if (n - i < 16) { /* lanes past n count neither way */
            uint32_t keep = (1u << (n - i)) - 1u;

            return units + (n - i) - (size_t)__builtin_popcount(cont & keep) +
                   (size_t)__builtin_popcount(~low & keep);
        }
        units += 32 - (size_t)__builtin_popcount(cont | low << 16);
    }
#else
    const uint64_t top = 0x8080808080808080u;

    units = n;
    for (; n - i >= 8; i += 8) {
        uint64_t x = dk_rd64(s + i);

        /* bit 7 of each byte: set with 6 clear; set with 6, 5 and 4 */
        units -= (size_t)dk_popcount64(x & ~(x << 1) & top);
        units += (size_t)dk_popcount64(x & x << 1 & x << 2 & x << 3 & top);
    }
    for (; i < n; i++) {
        units -= (s[i] & 0xC0) == 0x80;
        units += s[i] >= 0xF0;
    }
#endif
    return units;
}

/* See dk_abi.h. */
size_t dk_wtf8_to_utf16(const uint8_t *s, size_t n, uint8_t *d)
{
    uint8_t *d0 = d;
    size_t i = 0;

    while (i < n) {
        uint32_t c = s[i];

        if (c < 0x80) {
            i = dk_widen_ascii(s, i, n, &d);
            continue;
        }
        if (c < 0xE0) {
            c = (c & 0x1F) << 6 | (s[i + 1] & 0x3Fu);
            i += 2;
        } else if (c < 0xF0) {
            c = (c & 0x0F) << 12 | (s[i + 1] & 0x3Fu) << 6 | (s[i + 2] & 0x3Fu);
            i += 3;
        } else {
            c = ((c & 0x07) << 18 | (s[i + 1] & 0x3Fu) << 12 | (s[i + 2] & 0x3Fu) << 6 |
                 (s[i + 3] & 0x3Fu)) -
                0x10000;
            i += 4;
            dk_put_u16(d, 0xD800 + (c >> 10));
            d += 2;
            c = 0xDC00 + (c & 0x3FF);
        }
        dk_put_u16(d, c);
        d += 2;
    }
    return (size_t)(d - d0) / 2;
}

/*
 * The DK_PLAIN_RUN units at s (2 * DK_PLAIN_RUN bytes) as ASCII bytes at
 * d: DK_PLAIN_RUN when all are ASCII, else (*partial) how many are before
 * the first other one, their bytes written (up to DK_PLAIN_RUN bytes may
 * be written at d either way). The caller advances by a constant on the
 * first outcome: when the count itself feeds the next load's address,
 * every block waits for the previous one's mask.
 * With SIMD, no 16-bit compare (LLVM makes a mask test i16x8.lt_u, which
 * V8 runs slowly, as it does i16x8.bitmask): units narrowed with unsigned saturation
 * (0x80..0x7FFF get their high bit) and with signed saturation (units >=
 * 0x8000 do).
 */
static inline int narrow_run(const uint8_t *s, uint8_t *d, unsigned *partial)
{
#ifdef __wasm_simd128__
    v128_t a = wasm_v128_load(s), b = wasm_v128_load(s + 16);
    v128_t u = wasm_u8x16_narrow_i16x8(a, b);
    uint32_t other = (uint32_t)wasm_i8x16_bitmask(wasm_v128_or(u, wasm_i8x16_narrow_i16x8(a, b)));

    wasm_v128_store(d, u);
    if (other == 0) return 1;
    *partial = (unsigned)__builtin_ctz(other);
    return 0;
#else
    if ((dk_rd64(s) | dk_rd64(s + 8)) & 0xFF80FF80FF80FF80u) {
        *partial = 0; /* the caller's unit-by-unit loop takes the ASCII ones */
        return 0;
    }
    for (int k = 0; k < 8; k++) d[k] = s[2 * k]; /* little-endian low bytes */
    return 1;
#endif
}

#ifdef __wasm_simd128__
/*
 * Which bytes of 4 units' 8 to keep, by which of them are not ASCII (bit
 * j: unit j takes 2 bytes): unit j's low byte always, its high byte when
 * bit j is set. Indexes past the kept ones are 0x80 (a swizzle makes 0).
 */
static const uint8_t keep4[16][16] = {
    {0, 2, 4, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 4, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 2, 3, 4, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 3, 4, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 2, 4, 5, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 4, 5, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 2, 3, 4, 5, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 3, 4, 5, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 2, 4, 6, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 4, 6, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 2, 3, 4, 6, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 3, 4, 6, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 2, 4, 5, 6, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 4, 5, 6, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 2, 3, 4, 5, 6, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
    {0, 1, 2, 3, 4, 5, 6, 7, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
};

/*
 * The 8 units at s as UTF-8 at d when every one is below U+0800 (1 or 2
 * bytes each): returns the byte count, having written up to 24 bytes at d.
 * 0, writing nothing, when one is U+0800 or above. Each unit is made its 2
 * bytes (or kept, when ASCII) in its 16-bit lane; one swizzle a half keeps
 * the bytes that belong.
 */
static inline size_t narrow_low8(const uint8_t *s, uint8_t *d)
{
    v128_t v = wasm_v128_load(s);
    v128_t two, enc, t;
    unsigned m, lo, hi;

    if (wasm_v128_any_true(wasm_v128_and(v, wasm_i16x8_splat((int16_t)0xF800)))) return 0;
    two = wasm_i16x8_gt(v, wasm_i16x8_splat(0x7F)); /* signed: all are < 0x800 */
    enc = wasm_v128_or(
        wasm_v128_or(wasm_u16x8_shr(v, 6), wasm_i16x8_splat(0xC0)),
        wasm_i16x8_shl(
            wasm_v128_or(wasm_v128_and(v, wasm_i16x8_splat(0x3F)), wasm_i16x8_splat(0x80)), 8));
    t = wasm_v128_bitselect(enc, v, two);
    m = (unsigned)wasm_i8x16_bitmask(wasm_i8x16_narrow_i16x8(two, two)) & 0xFFu;
    lo = m & 15u;
    hi = m >> 4;
    wasm_v128_store(d, wasm_i8x16_swizzle(t, wasm_v128_load(keep4[lo])));
    d += 4 + (unsigned)__builtin_popcount(lo);
    wasm_v128_store(
        d, wasm_i8x16_swizzle(t, wasm_i8x16_add(wasm_v128_load(keep4[hi]), wasm_i8x16_splat(8))));
    return 8 + (size_t)__builtin_popcount(m);
}
#endif

/*
 * dk_utf16_to_wtf8 and dk_utf16_to_utf8: a lone surrogate becomes its own
 * 3-byte form, or U+FFFD's when replace is set. Every unit is read before
 * a byte lands on it when the units sit at the end of an area of 3n bytes
 * or more that starts at d (s >= d + n): output after i units is at most
 * 3i bytes, and a block's stores end at most 16 (ASCII) or 24 bytes past
 * that, with 16 or 8 units still to read.
 */
static inline size_t utf16_narrow(const uint8_t *s, size_t n, uint8_t *d, int replace, size_t *lone)
{
    uint8_t *d0 = d;
    size_t i = 0;

    while (i < n) {
        uint32_t c = (uint32_t)s[2 * i] | (uint32_t)s[2 * i + 1] << 8;

        if (c < 0x80) {
            /* an ASCII run: DK_PLAIN_RUN units at a time, then one by one
             * (blocks are tried only at an ASCII unit: one that fails
             * costs as much as a few units of CJK text) */
            while (n - i >= DK_PLAIN_RUN) {
                unsigned k = 0;

                if (narrow_run(s + 2 * i, d, &k)) { /* room: 3(n - i) >= 16 */
                    i += DK_PLAIN_RUN;
                    d += DK_PLAIN_RUN;
                    continue;
                }
                i += k;
                d += k;
                break;
            }
            while (i < n && s[2 * i + 1] == 0 && s[2 * i] < 0x80) {
                *d++ = s[2 * i];
                i++;
            }
            continue;
        }
        if (c < 0x800) {
#ifdef __wasm_simd128__
            /* 8 units a block while they are below U+0800 and not all
             * ASCII (those go back to the wider ASCII blocks) */
            size_t k = 0, i0 = i;

            while (n - i >= 8 && (k = narrow_low8(s + 2 * i, d)) > 8) { /* room: 3(n - i) >= 24 */
                i += 8;
                d += k;
            }
            if (k == 8) {
                i += 8;
                d += 8;
                continue;
            }
            if (i != i0) continue;
#endif
            i++;
            d[0] = (uint8_t)(0xC0 | c >> 6);
            d[1] = (uint8_t)(0x80 | (c & 0x3F));
            d += 2;
        } else if (c < 0xD800 || c >= 0xE000) {
            /* a run of 3-byte units (CJK text) in a loop of its own */
            do {
                d[0] = (uint8_t)(0xE0 | c >> 12);
                d[1] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
                d[2] = (uint8_t)(0x80 | (c & 0x3F));
                d += 3;
                if (++i == n) break;
                c = (uint32_t)s[2 * i] | (uint32_t)s[2 * i + 1] << 8;
            } while (c >= 0x800 && (c < 0xD800 || c >= 0xE000));
        } else {
            i++;
            if (c <= 0xDBFF && i < n) {
                uint32_t lo = (uint32_t)s[2 * i] | (uint32_t)s[2 * i + 1] << 8;

                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    i++;
                    d += dk_put_utf8(d, 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00));
                    continue;
                }
            }
            /* a lone surrogate: its own 3 bytes (WTF-8), or U+FFFD's */
            d += dk_put_utf8(d, replace ? 0xFFFD : c);
            if (lone != NULL) ++*lone;
        }
    }
    return (size_t)(d - d0);
}

/* See dk_internal.h. */
size_t dk_utf16_to_wtf8(const uint8_t *s, size_t n, uint8_t *d)
{
    return utf16_narrow(s, n, d, 0, NULL);
}

/* See dk_internal.h. */
size_t dk_utf16_to_wtf8_lone(const uint8_t *s, size_t n, uint8_t *d, size_t *lone)
{
    *lone = 0;
    return utf16_narrow(s, n, d, 0, lone);
}

/* See dk_internal.h. */
size_t dk_utf16_to_utf8(const uint8_t *s, size_t n, uint8_t *d, size_t *lone)
{
    if (lone != NULL) *lone = 0;
    return utf16_narrow(s, n, d, 1, lone);
}

/* See dk_internal.h. */
int dk_str16_wtf8(const uint8_t *p, size_t avail, uint32_t u, size_t at, dk_arena *a, dk_scratch *s,
                  const uint8_t **out, size_t *n, dk_err *err)
{
    size_t need = (size_t)u * 3 + 1;

    DK_TRY(dk_str16_check(avail, u, at, err));
    if (s->cap < need) {
        size_t cap = s->cap * 2 > need ? s->cap * 2 : need;

        s->p = dk_arena_alloc(a, cap);
        if (s->p == NULL) return dk_fail(err, DK_ERR_MEMORY, "out of memory", at);
        s->cap = cap;
    }
    *out = s->p;
    *n = dk_utf16_to_wtf8(p, u, s->p);
    return DK_OK;
}

/*
 * Calendar arithmetic on days from 1970-01-01 in the proleptic Gregorian
 * calendar, in 32-bit integers: a Date's days (|d| <= 1e8) and the years of
 * six-digit ISO strings fit. WebAssembly has no 64-bit multiply-high, so a
 * 64-bit division by a constant stays a division there (tens of cycles),
 * where a 32-bit one becomes a multiply and a shift. Years are counted from
 * March 1st, so that the leap day ends a year and every 400-year era has
 * the same 146097 days (the method of H. Hinnant's "chrono-Compatible
 * Low-Level Date Algorithms"); month mp counts from March.
 */

/* 1 for a leap year. */
static int is_leap(int32_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days in month m (1..12) of year y. */
static int32_t month_days(int32_t y, int32_t m)
{
    if (m == 2) return 28 + is_leap(y);
    return 30 + ((m + (m >> 3)) & 1); /* 31: 1 3 5 7 8 10 12 */
}

/* Days from 1970-01-01 to y-m-d (m 1..12, d 1..31, |y| <= 999999). */
static int32_t days_from_civil(int32_t y, int32_t m, int32_t d)
{
    int32_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;                                   /* [0, 399] */
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* [0, 365] */
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           /* [0, 146096] */
    return era * 146097 + doe - 719468;                    /* 719468: 0000-03-01 */
}

/* The year, month (1..12) and day (1..31) of day z from 1970-01-01. */
static void civil_from_days(int32_t z, int32_t *y, int32_t *m, int32_t *d)
{
    int32_t era, doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;                                      /* [0, 146096] */
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
    mp = (5 * doy + 2) / 153;                                    /* [0, 11] */
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* toISOString of the time value ms (integral, within a Date's range). */
size_t dk_fmt_iso(double ms, char out[DK_ISO_MAX])
{
    /* The day by a double division, and it is exact: ms / 86400000 is
     * below 2^27 in magnitude, where doubles are at most 2^-26 apart, and
     * when it is not an integer it is at least 1 / 86400000 > 2^-27 from
     * one, so rounding never carries it to the next integer (checked at
     * every day boundary of the range's years in test_format.c). */
    int32_t day = (int32_t)floor(ms / 86400000.0), y, m, d;
    uint32_t in_day = (uint32_t)((int64_t)ms - (int64_t)day * 86400000), a;
    size_t o;

    civil_from_days(day, &y, &m, &d);
    if (y >= 0 && y <= 9999) {
        put2(out, (uint32_t)y / 100);
        put2(out + 2, (uint32_t)y % 100);
        o = 4;
    } else {
        a = y < 0 ? (uint32_t)-y : (uint32_t)y; /* <= 275760 */
        out[0] = y < 0 ? '-' : '+';
        put2(out + 1, a / 10000);
        put2(out + 3, a / 100 % 100);
        put2(out + 5, a % 100);
        o = 7;
    }
    memcpy(out + o, "-MM-DDTHH:MM:SS.mmmZ", 20);
    put2(out + o + 1, (uint32_t)m);
    put2(out + o + 4, (uint32_t)d);
    put2(out + o + 7, in_day / 3600000);
    put2(out + o + 10, in_day / 60000 % 60);
    put2(out + o + 13, in_day / 1000 % 60);
    a = in_day % 1000;
    out[o + 16] = (char)('0' + a / 100);
    put2(out + o + 17, a % 100);
    return o + 20;
}

/* Reads n decimal digits; returns -1 if one is not a digit. */
static int64_t get_digits(const uint8_t *s, int n)
{
    int64_t v = 0;

    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Parses exactly the strings dk_fmt_iso writes (see dk_internal.h). */
int dk_parse_iso(const uint8_t *s, size_t n, double *ms)
{
    int64_t y, mo, d, h, mi, se, f, t;

    if (n == 24) {
        y = get_digits(s, 4);
        if (y < 0) return 0;
        s += 4;
    } else if (n == 27 && (s[0] == '+' || s[0] == '-')) {
        y = get_digits(s + 1, 6);
        /* canonical only: 6 digits are for years outside 0..9999 */
        if (y < 0 || (s[0] == '+' && y <= 9999) || (s[0] == '-' && y == 0)) return 0;
        if (s[0] == '-') y = -y;
        s += 7;
    } else {
        return 0;
    }
    if (s[0] != '-' || s[3] != '-' || s[6] != 'T' || s[9] != ':' || s[12] != ':' || s[15] != '.' ||
        s[19] != 'Z')
        return 0;
    mo = get_digits(s + 1, 2);
    d = get_digits(s + 4, 2);
    h = get_digits(s + 7, 2);
    mi = get_digits(s + 10, 2);
    se = get_digits(s + 13, 2);
    f = get_digits(s + 16, 3);
    if (mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59 ||
        f < 0)
        return 0;
    if (d > month_days((int32_t)y, (int32_t)mo)) return 0;
    t = (int64_t)days_from_civil((int32_t)y, (int32_t)mo, (int32_t)d) * 86400000 + h * 3600000 +
        mi * 60000 + se * 1000 + f;
    if (t > (int64_t)DK_DATE_MAX_MS || t < -(int64_t)DK_DATE_MAX_MS) return 0;
    *ms = (double)t;
    return 1;
}

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard padded base64 of src[0..n) into out. */
size_t dk_b64_encode(const uint8_t *src, size_t n, uint8_t *out)
{
    size_t i = 0, o = 0;

    for (; n - i >= 3; i += 3) {
        uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
        out[o++] = (uint8_t)b64_chars[v >> 18];
        out[o++] = (uint8_t)b64_chars[v >> 12 & 63];
        out[o++] = (uint8_t)b64_chars[v >> 6 & 63];
        out[o++] = (uint8_t)b64_chars[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)src[i] << 16;
        out[o++] = (uint8_t)b64_chars[v >> 18];
        out[o++] = (uint8_t)b64_chars[v >> 12 & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8;
        out[o++] = (uint8_t)b64_chars[v >> 18];
        out[o++] = (uint8_t)b64_chars[v >> 12 & 63];
        out[o++] = (uint8_t)b64_chars[v >> 6 & 63];
        out[o++] = '=';
    }
    return o;
}

/* The 6-bit value of a base64 character, or -1. */
static int b64_val(uint8_t c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/*
 * Canonical base64 only, so that decoding and re-encoding give the same
 * text: padding exactly where needed, unused low bits zero.
 */
int dk_b64_decode(const uint8_t *s, size_t n, uint8_t *out, size_t *len)
{
    size_t o = 0;

    if (n % 4 != 0) return 0;
    for (size_t i = 0; i < n; i += 4) {
        int last = i + 4 == n;
        int pad = last && s[i + 3] == '=' ? (s[i + 2] == '=' ? 2 : 1) : 0;
        int a = b64_val(s[i]), b = b64_val(s[i + 1]);
        int c = pad == 2 ? 0 : b64_val(s[i + 2]);
        int d = pad ? 0 : b64_val(s[i + 3]);
        uint32_t v;

        if ((a | b | c | d) < 0) return 0;
        if ((pad == 2 && (b & 15)) || (pad == 1 && (c & 3))) return 0;
        v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        /* o <= i: all four characters are read before these writes */
        out[o++] = (uint8_t)(v >> 16);
        if (pad < 2) out[o++] = (uint8_t)(v >> 8);
        if (pad < 1) out[o++] = (uint8_t)v;
    }
    *len = o;
    return 1;
}

/* "-"? ("0" | [1-9][0-9]*), and not "-0". */
int dk_bigint_ok(const uint8_t *s, size_t n)
{
    size_t i = n > 0 && s[0] == '-';

    if (i == n) return 0;
    if (s[i] == '0') return n == 1;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

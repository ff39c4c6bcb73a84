/*
 * wasm_simd128.h - a scalar stand-in for the WebAssembly SIMD intrinsics
 * the core uses, for its native tests only.
 *
 * The core's 16-byte paths are compiled only under __wasm_simd128__ (emcc
 * -msimd128); natively the tests would exercise its 8-byte SWAR paths
 * instead and leave the code that ships untested under AddressSanitizer.
 * `make test-c-simd` builds the C tests with -D__wasm_simd128__ and this
 * folder first on the include path, so the same paths run natively: each
 * function below does, lane by lane, what the WebAssembly SIMD
 * specification says the instruction of the same name does. Loads and
 * stores go through memcpy, so ASan sees every byte a 16-byte access
 * touches. Little-endian hosts only (as WebAssembly is).
 *
 * Only the intrinsics the core calls are here; a new one fails to compile
 * until it is added.
 */
#ifndef DK_TEST_WASM_SIMD128_H
#define DK_TEST_WASM_SIMD128_H

#include <stdint.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the SIMD stand-in assumes a little-endian host"
#endif

typedef struct {
    uint8_t b[16];
} v128_t;

/* Lane views: copies in and out of the 16 bytes, little-endian. */
static inline void sim_get16(v128_t v, uint16_t out[8])
{
    memcpy(out, v.b, 16);
}
static inline v128_t sim_put16(const uint16_t in[8])
{
    v128_t v;
    memcpy(v.b, in, 16);
    return v;
}

static inline v128_t wasm_v128_load(const void *p)
{
    v128_t v;
    memcpy(v.b, p, 16);
    return v;
}

static inline void wasm_v128_store(void *p, v128_t v)
{
    memcpy(p, v.b, 16);
}

static inline v128_t wasm_i8x16_splat(int8_t x)
{
    v128_t v;
    memset(v.b, (uint8_t)x, 16);
    return v;
}

static inline v128_t wasm_i16x8_splat(int16_t x)
{
    uint16_t l[8];
    for (int i = 0; i < 8; i++) l[i] = (uint16_t)x;
    return sim_put16(l);
}

static inline v128_t wasm_v128_and(v128_t a, v128_t b)
{
    for (int i = 0; i < 16; i++) a.b[i] &= b.b[i];
    return a;
}

static inline v128_t wasm_v128_or(v128_t a, v128_t b)
{
    for (int i = 0; i < 16; i++) a.b[i] |= b.b[i];
    return a;
}

/* Bits of a where mask is 1, of b where it is 0. */
static inline v128_t wasm_v128_bitselect(v128_t a, v128_t b, v128_t mask)
{
    v128_t r;
    for (int i = 0; i < 16; i++) r.b[i] = (uint8_t)((a.b[i] & mask.b[i]) | (b.b[i] & ~mask.b[i]));
    return r;
}

static inline int wasm_v128_any_true(v128_t a)
{
    for (int i = 0; i < 16; i++)
        if (a.b[i] != 0) return 1;
    return 0;
}

static inline v128_t wasm_i8x16_eq(v128_t a, v128_t b)
{
    for (int i = 0; i < 16; i++) a.b[i] = a.b[i] == b.b[i] ? 0xFF : 0;
    return a;
}

static inline v128_t wasm_u8x16_lt(v128_t a, v128_t b)
{
    for (int i = 0; i < 16; i++) a.b[i] = a.b[i] < b.b[i] ? 0xFF : 0;
    return a;
}

static inline v128_t wasm_i8x16_add(v128_t a, v128_t b)
{
    for (int i = 0; i < 16; i++) a.b[i] = (uint8_t)(a.b[i] + b.b[i]);
    return a;
}

/* Bit i: the top bit of byte lane i. */
static inline int wasm_i8x16_bitmask(v128_t a)
{
    int m = 0;
    for (int i = 0; i < 16; i++) m |= (a.b[i] >> 7) << i;
    return m;
}

/* Lane i of the result: a's byte lane idx[i], or 0 when idx[i] >= 16. */
static inline v128_t wasm_i8x16_swizzle(v128_t a, v128_t idx)
{
    v128_t r;
    for (int i = 0; i < 16; i++) r.b[i] = idx.b[i] < 16 ? a.b[idx.b[i]] : 0;
    return r;
}

/* Signed 16-bit lanes of a and then b, each clamped to [lo, hi]. */
static inline v128_t sim_narrow(v128_t a, v128_t b, int lo, int hi)
{
    uint16_t l[16];
    v128_t r;
    sim_get16(a, l);
    sim_get16(b, l + 8);
    for (int i = 0; i < 16; i++) {
        int x = (int16_t)l[i];
        r.b[i] = (uint8_t)(x < lo ? lo : x > hi ? hi : x);
    }
    return r;
}

/* ... saturated to int8 */
static inline v128_t wasm_i8x16_narrow_i16x8(v128_t a, v128_t b)
{
    return sim_narrow(a, b, -128, 127);
}

/* ... saturated to uint8 */
static inline v128_t wasm_u8x16_narrow_i16x8(v128_t a, v128_t b)
{
    return sim_narrow(a, b, 0, 255);
}

static inline v128_t wasm_u16x8_extend_low_u8x16(v128_t a)
{
    uint16_t l[8];
    for (int i = 0; i < 8; i++) l[i] = a.b[i];
    return sim_put16(l);
}

static inline v128_t wasm_u16x8_extend_high_u8x16(v128_t a)
{
    uint16_t l[8];
    for (int i = 0; i < 8; i++) l[i] = a.b[8 + i];
    return sim_put16(l);
}

static inline v128_t wasm_i16x8_eq(v128_t a, v128_t b)
{
    uint16_t x[8], y[8];
    sim_get16(a, x);
    sim_get16(b, y);
    for (int i = 0; i < 8; i++) x[i] = x[i] == y[i] ? 0xFFFF : 0;
    return sim_put16(x);
}

static inline v128_t wasm_i16x8_gt(v128_t a, v128_t b)
{
    uint16_t x[8], y[8];
    sim_get16(a, x);
    sim_get16(b, y);
    for (int i = 0; i < 8; i++) x[i] = (int16_t)x[i] > (int16_t)y[i] ? 0xFFFF : 0;
    return sim_put16(x);
}

/* Shift counts are taken modulo the lane width, as the instructions do. */
static inline v128_t wasm_i16x8_shl(v128_t a, uint32_t n)
{
    uint16_t x[8];
    sim_get16(a, x);
    for (int i = 0; i < 8; i++) x[i] = (uint16_t)(x[i] << (n & 15));
    return sim_put16(x);
}

static inline v128_t wasm_u16x8_shr(v128_t a, uint32_t n)
{
    uint16_t x[8];
    sim_get16(a, x);
    for (int i = 0; i < 8; i++) x[i] = (uint16_t)(x[i] >> (n & 15));
    return sim_put16(x);
}

#endif

/*
 * test_rng.h - the C tests' one random source: Marsaglia's xorshift32 on a
 * state of the caller's, so each test's sequence stays fixed.
 */
#ifndef DK_TEST_RNG_H
#define DK_TEST_RNG_H

#include <stdint.h>

static inline uint32_t xorshift32(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

#endif

/*
 * dk_pb_common.c - what darmok's protobuf writer and reader both use:
 * protobuf-c's allocator over the call's arena, the WTF-8 check of texts
 * and the canonical Date time value.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dk_pb.h"

/* Blocks protobuf-c's allocations are cut from: it allocates the message,
 * its arrays, a copy of every strings and texts entry and the shapes, and a
 * call to dk_arena_alloc for each costs more than cutting from a block. */
#define PB_ALLOC_BLOCK 2048u

static DK_COLD void *pb_pc_alloc_slow(pb_alloc_ctx *ac, size_t size)
{
    uint8_t *p;
    if (size >= PB_ALLOC_BLOCK / 4) { /* its own allocation; the block stays */
        p = dk_arena_alloc(ac->a, size);
    } else {
        p = dk_arena_alloc(ac->a, PB_ALLOC_BLOCK);
        if (p != NULL) {
            ac->next = p + size;
            ac->left = PB_ALLOC_BLOCK - size;
        }
    }
    if (p == NULL) ac->failed = 1;
    return p;
}

/* size bytes, 8-byte aligned, in the arena. Memory past an allocation is
 * readable for DK_ARENA_SLACK bytes (dec_str_unsafe relies on it): the
 * block's next bytes, or its own slack for the last one. Test builds
 * (DK_ARENA_EXACT) take each allocation from the arena, so
 * AddressSanitizer still sees every one on its own; with DK_PB_ALLOC_BLOCKS
 * as well (the Makefile's test-c-simd) they cut blocks as the .wasm does,
 * each block then a malloc of its own, so a read past a block and its
 * slack is seen. */
void *pb_pc_alloc(void *data, size_t size)
{
    pb_alloc_ctx *ac = data;
    void *p;
#if !defined(DK_ARENA_EXACT) || defined(DK_PB_ALLOC_BLOCKS)
    size_t n = (size + 7u) & ~(size_t)7u;
    if (n >= size && n <= ac->left) {
        p = ac->next;
        ac->next += n;
        ac->left -= n;
        return p;
    }
    if (n >= size) return pb_pc_alloc_slow(ac, n);
#endif
    p = dk_arena_alloc(ac->a, size);
    if (p == NULL) ac->failed = 1;
    return p;
}

void pb_pc_free(void *data, void *ptr)
{
    (void)data;
    (void)ptr;
}

/* See dk_pb.h. */
unsigned pb_text_scan(const uint8_t *p, size_t n, uint8_t *d, size_t *units)
{
    unsigned f = PB_TX_ASCII;
    size_t i = 0;
    size_t high_end = SIZE_MAX; /* where the last high surrogate ended */
    uint8_t *d0 = d;
    while (i < n) {
        unsigned b = p[i];
        uint32_t c;
        size_t len, bad;
        int sur;
        if (b < 0x80) {
            /* ASCII runs DK_PLAIN_RUN bytes at a time; once the text is
             * known not to be ASCII, widened to UTF-16 in the same pass */
            if (d != NULL && !(f & PB_TX_ASCII)) {
                i = dk_widen_ascii(p, i, n, &d);
                continue;
            }
            i++;
            while (n - i >= DK_PLAIN_RUN) {
                dk_runmask m = dk_ascii_mask(p + i);
                if (m == 0) {
                    i += DK_PLAIN_RUN;
                    continue;
                }
                i += dk_mask_first(m);
                break;
            }
            while (i < n && p[i] < 0x80) i++;
            continue;
        }
        if (f & PB_TX_ASCII) {
            f &= ~PB_TX_ASCII;
            if (d != NULL) /* the ASCII before the first other byte */
                d += 2 * dk_wtf8_to_utf16(p, i, d);
        }
        len = dk_wtf8_seq(p + i, n - i, 1, &bad, &sur);
        if (len == 0) return PB_TX_BAD;
        if (sur) {
            if (p[i + 1] >= 0xB0 && high_end == i) return PB_TX_BAD;
            if (p[i + 1] < 0xB0) high_end = i + 3;
            f |= PB_TX_WTF8;
        }
        if (len == 2) {
            c = (b & 0x1Fu) << 6 | (p[i + 1] & 0x3Fu);
        } else if (len == 3) {
            c = (b & 0x0Fu) << 12 | (p[i + 1] & 0x3Fu) << 6 | (p[i + 2] & 0x3Fu);
        } else {
            c = ((b & 0x07u) << 18 | (p[i + 1] & 0x3Fu) << 12 | (p[i + 2] & 0x3Fu) << 6 |
                 (p[i + 3] & 0x3Fu)) -
                0x10000u;
            if (d != NULL) {
                dk_put_u16(d, 0xD800u + (c >> 10));
                d += 2;
            }
            c = 0xDC00u + (c & 0x3FFu);
        }
        i += len;
        if (d != NULL) {
            dk_put_u16(d, c);
            d += 2;
        }
    }
    if (d != NULL) *units = (size_t)(d - d0) / 2;
    return f;
}

/* See dk_pb.h. */
int pb_date_canon(double *ms)
{
    if (isnan(*ms)) {
        pb_nan_canon(ms);
        return 1;
    }
    if (!(*ms >= -DK_DATE_MAX_MS && *ms <= DK_DATE_MAX_MS) || *ms != (double)(int64_t)*ms) return 0;
    if (*ms == 0) *ms = 0;
    return 1;
}

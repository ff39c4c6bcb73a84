/*
 * test_util.h - what every C test program shares: the CHECK macro with its
 * pass/fail counters and closing line, and the tape builder.
 *
 * Header-only, static: each test program is one translation unit linked with
 * the core, so there is nothing to link twice.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dk_internal.h"

static long test_passed, test_failed;

/* Failures printed in full; past that only counted, so one broken loop
 * over millions of inputs does not bury the first message. */
#define TEST_SHOW_MAX 50

/* Counts one check; on failure prints where and why. */
#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (cond) {                                              \
            test_passed++;                                       \
        } else if (test_failed++ < TEST_SHOW_MAX) {              \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

/* Prints the closing line the Makefile reads ("name: N passed, M failed");
 * returns the exit status, 1 when a check failed. */
static int test_report(const char *name)
{
    printf("%s: %ld passed, %ld failed\n", name, test_passed, test_failed);
    return test_failed != 0;
}

/* Room for n more bytes of a tape under construction (aborts on OOM). */
static void tb_room(dk_buf *t, size_t n)
{
    if (dk_buf_reserve(t, n, NULL, 0) != DK_OK) abort();
}

/* Appends n bytes. */
static void tb_raw(dk_buf *t, const void *p, size_t n)
{
    tb_room(t, n);
    if (n) dk_put_unsafe(t, p, n);
}

/* Appends one byte: an op, a kind byte or a raw byte. */
static void tb_op(dk_buf *t, int op)
{
    uint8_t b = (uint8_t)op;
    tb_raw(t, &b, 1);
}

/* Appends a little-endian u32, 8 little-endian bytes, an f64. */
static void tb_u32(dk_buf *t, uint32_t v)
{
    tb_room(t, 4);
    dk_wr32(t->data + t->len, v);
    t->len += 4;
}

static void tb_bits(dk_buf *t, uint64_t u)
{
    tb_room(t, 8);
    dk_wr64(t->data + t->len, u);
    t->len += 8;
}

static void tb_f64(dk_buf *t, double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    tb_bits(t, u);
}

/* A tape str with canonical flags: ASCII when all bytes < 0x80, WTF8 when an
 * ED A0..BF sequence is present. */
static void tb_strn(dk_buf *t, const void *s, size_t n)
{
    const uint8_t *p = s;
    uint32_t flags = DK_STR_ASCII;
    size_t i;
    for (i = 0; i < n; i++) {
        if (p[i] >= 0x80) flags &= ~DK_STR_ASCII;
        if (p[i] == 0xED && i + 1 < n && p[i + 1] >= 0xA0) flags |= DK_STR_WTF8;
    }
    tb_u32(t, (uint32_t)n << DK_STR_SHIFT | flags);
    tb_raw(t, p, n);
}

#endif

/*
 * fuzz_common.h - what every libFuzzer target of darmok's core shares.
 *
 * A target is one file test/fuzz/fuzz_<name>.c defining
 * LLVMFuzzerTestOneInput; the Makefile finds it by that name, links it with
 * the core (and FUZZ_EXTRA_SRC), and seeds it from test/fuzz/corpus/<name>/.
 * Targets check invariants with FUZZ_ASSERT, which aborts: libFuzzer then
 * saves the input as a crash artifact, to become a regression fixture in
 * test/c/.
 */
#ifndef DK_FUZZ_COMMON_H
#define DK_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "darmok.h"
#include "dk_internal.h"

/* Aborts with a message when an invariant does not hold. */
#define FUZZ_ASSERT(cond, what)                                                         \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, what); \
            abort();                                                                    \
        }                                                                               \
    } while (0)

/* The codes a call may fail with, as a mask of 1 << code: a reader of
 * untrusted bytes (never DK_ERR_TAPE), and a writer of a tape (never
 * DK_ERR_TOO_LONG: max_length bounds what is read). */
#define FUZZ_BIT(c) (1u << (c))
#define FUZZ_READ_CODES                                                           \
    (FUZZ_BIT(DK_ERR_SYNTAX) | FUZZ_BIT(DK_ERR_FORMAT) | FUZZ_BIT(DK_ERR_DEPTH) | \
     FUZZ_BIT(DK_ERR_TOO_LARGE) | FUZZ_BIT(DK_ERR_MEMORY) | FUZZ_BIT(DK_ERR_TOO_LONG))
#define FUZZ_WRITE_CODES                                                          \
    (FUZZ_BIT(DK_ERR_SYNTAX) | FUZZ_BIT(DK_ERR_FORMAT) | FUZZ_BIT(DK_ERR_DEPTH) | \
     FUZZ_BIT(DK_ERR_TOO_LARGE) | FUZZ_BIT(DK_ERR_MEMORY) | FUZZ_BIT(DK_ERR_TAPE))

/*
 * The contract of every dk_* call on untrusted bytes: rc is err->code; a
 * success has no message and position; a failure has one of codes (a
 * FUZZ_*_CODES mask), a static message, a position within the input
 * (<= len) and no output.
 */
static inline void fuzz_check_outcome(int rc, const dk_err *err, size_t len, const dk_buf *out,
                                      unsigned codes)
{
    FUZZ_ASSERT(rc == (int)err->code, "return value is err->code");
    FUZZ_ASSERT(rc == DK_OK || (rc > DK_OK && rc < 32 && (codes & FUZZ_BIT(rc)) != 0),
                "error code in range");
    if (rc == DK_OK) {
        FUZZ_ASSERT(err->msg == NULL && err->pos == 0, "clean error on success");
        FUZZ_ASSERT(out->len > 0, "a success has output");
    } else {
        FUZZ_ASSERT(err->msg != NULL && err->msg[0] != 0, "a failure has a message");
        FUZZ_ASSERT(err->pos <= len, "error position within the input");
        FUZZ_ASSERT(out->len == 0, "a failure has no output");
    }
}

/* 1 when a[0..alen) and b[0..blen) are the same bytes. */
static inline int fuzz_same(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

#endif

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

/*
 * The contract of every dk_* call on untrusted bytes: rc is err->code; a
 * success has no message and position; a failure has a known code, a
 * static message, a position within the input (<= len) and no output.
 */
static inline void fuzz_check_outcome(int rc, const dk_err *err, size_t len, const dk_buf *out,
                                      int max_code)
{
    FUZZ_ASSERT(rc == (int)err->code, "return value is err->code");
    FUZZ_ASSERT(rc >= DK_OK && rc <= max_code, "error code in range");
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

/*
 * fuzz_json_read.c - libFuzzer target: JSON text -> tape (dk_json_read).
 *
 * The input is untrusted JSON text. Invariants checked on every input:
 *  - the outcome contract (fuzz_common.h): a tape, or a clean error at an
 *    offset inside the input;
 *  - the padded and unpadded entry points agree exactly (code, position,
 *    tape bytes), with one arena reused across inputs as the WebAssembly
 *    context reuses its own (exercises dk_arena_reset's chunk merging),
 *    and so does a read into a fresh tape (no memory yet);
 *  - every tape the reader makes is one the writer accepts, and the round
 *    trip is a fixed point: write(read(write(t))) == write(t);
 *  - tight limits (derived from the input) only ever turn a success into
 *    DK_ERR_DEPTH / DK_ERR_TOO_LONG / DK_ERR_TOO_LARGE, never into another
 *    outcome.
 */
#include "fuzz_common.h"

static dk_arena arena; /* reused across inputs, reset per call */
static dk_buf tape, tape2, json, json2, padded;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dk_err err, err2;
    dk_limits tight;
    int rc, rc2;

    /* Unpadded: the reader copies the text into the arena with padding. */
    dk_arena_reset(&arena);
    rc = dk_json_read_opts(data, size, 0, NULL, &arena, &tape, &err);
    fuzz_check_outcome(rc, &err, size, &tape, FUZZ_READ_CODES);

    /* Padded in place: the same answer. */
    if (padded.cap < size + DK_JSON_PADDING) {
        padded.cap = size + DK_JSON_PADDING;
        padded.data = realloc(padded.data, padded.cap);
        FUZZ_ASSERT(padded.data != NULL, "test allocation");
    }
    if (size) memcpy(padded.data, data, size);
    memset(padded.data + size, 0, DK_JSON_PADDING);
    dk_arena_reset(&arena);
    rc2 = dk_json_read_opts(padded.data, size, DK_READ_PADDED, NULL, &arena, &tape2, &err2);
    FUZZ_ASSERT(rc2 == rc && err2.pos == err.pos, "padded read agrees");
    FUZZ_ASSERT(fuzz_same(tape.data, tape.len, tape2.data, tape2.len),
                "padded read makes the same tape");

    /* Into a fresh tape, which has no memory yet: the same answer. A
     * first token that writes nothing before it reads on (a tag looked up
     * where it stands) must not do arithmetic on the tape's NULL data. */
    {
        dk_buf fresh = {0};

        dk_arena_reset(&arena);
        rc2 = dk_json_read_opts(data, size, 0, NULL, &arena, &fresh, &err2);
        FUZZ_ASSERT(rc2 == rc && err2.pos == err.pos, "fresh-tape read agrees");
        FUZZ_ASSERT(fuzz_same(tape.data, tape.len, fresh.data, fresh.len),
                    "fresh-tape read makes the same tape");
        dk_buf_free(&fresh);
    }

    /* Tight limits from the first byte: depth 1..8, length 1..32. */
    tight.max_depth = size ? 1u + (data[0] & 7u) : 1u;
    tight.max_length = size ? 1u + (data[0] >> 3) : 1u;
    dk_arena_reset(&arena);
    rc2 = dk_json_read_opts(data, size, 0, &tight, &arena, &tape2, &err2);
    fuzz_check_outcome(rc2, &err2, size, &tape2, FUZZ_READ_CODES);
    if (rc != DK_OK) {
        /* An error before a limit bites is the same error. */
        FUZZ_ASSERT(rc2 != DK_OK, "limits never make bad text good");
    } else {
        FUZZ_ASSERT(rc2 == DK_OK || rc2 == DK_ERR_DEPTH || rc2 == DK_ERR_TOO_LONG ||
                        rc2 == DK_ERR_TOO_LARGE,
                    "limits only add DEPTH / TOO_LONG / TOO_LARGE");
        if (rc2 == DK_OK)
            FUZZ_ASSERT(fuzz_same(tape.data, tape.len, tape2.data, tape2.len),
                        "limits do not change a tape that fits");
    }
    if (rc != DK_OK) return 0;

    /* The writer accepts what the reader made; the round trip settles. */
    dk_arena_reset(&arena);
    rc = dk_json_write_opts(tape.data, tape.len, NULL, &arena, &json, &err);
    FUZZ_ASSERT(rc == DK_OK, "the writer accepts every tape the reader makes");
    dk_arena_reset(&arena);
    rc = dk_json_read_opts(json.data, json.len, 0, NULL, &arena, &tape2, &err);
    FUZZ_ASSERT(rc == DK_OK, "the reader accepts what the writer wrote");
    dk_arena_reset(&arena);
    rc = dk_json_write_opts(tape2.data, tape2.len, NULL, &arena, &json2, &err);
    FUZZ_ASSERT(rc == DK_OK, "second write");
    FUZZ_ASSERT(fuzz_same(json.data, json.len, json2.data, json2.len),
                "write(read(write(t))) == write(t)");
    return 0;
}

/*
 * fuzz_json_write.c - libFuzzer target: tape -> JSON text (the tape reader
 * and JSON writer, dk_json_write).
 *
 * The input is an untrusted tape (wasm/dk_tape.h). Invariants:
 *  - the outcome contract (fuzz_common.h): JSON text, or DK_ERR_TAPE /
 *    _DEPTH / _TOO_LARGE / _MEMORY at an offset inside the tape;
 *  - every JSON text the writer makes is a darmok document the reader
 *    accepts (with max_length wide open: only the reader has that limit),
 *    and writing the reader's tape again gives the same text;
 *  - the writer's UTF-16 output (DK_WRITE_MAY_WIDE) has the same outcome,
 *    and is the UTF-8 output, widened, or the UTF-8 output itself.
 */
#include "fuzz_common.h"

static dk_arena arena; /* reused across inputs, reset per call */
static dk_buf json, tape, json2, units, widened;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The writer has no length limit (JS arrays reach 2^32-1 slots), so the
     * reader checks its output with the widest one. */
    const dk_limits wide = {0, UINT32_MAX, 0};
    dk_err err;
    int rc;

    /* fresh buffers each input (with DK_BUF_EXACT, exactly the room the
       writer reserves: a store past it is seen) */
    dk_buf_free(&json);
    dk_buf_free(&units);
    dk_buf_free(&widened);
    dk_arena_reset(&arena);
    rc = dk_json_write_opts(data, size, NULL, &arena, &json, &err);
    fuzz_check_outcome(rc, &err, size, &json, FUZZ_WRITE_CODES);
    FUZZ_ASSERT(rc != DK_ERR_SYNTAX && rc != DK_ERR_FORMAT,
                "the writer reports tape errors, not text errors");
    {
        dk_err err2;
        int form = -1, rc2;

        dk_arena_reset(&arena);
        rc2 = dk_json_write_ex(data, size, NULL, DK_WRITE_MAY_WIDE, &arena, &units, &form, &err2);
        FUZZ_ASSERT(rc2 == rc && (rc != DK_ERR_TAPE || err2.pos == err.pos),
                    "the UTF-16 output fails as the UTF-8 one does");
        if (rc == DK_OK && form == DK_FORM_UTF16) {
            FUZZ_ASSERT(dk_buf_reserve(&widened, 2 * json.len + 32, &err2, 0) == DK_OK, "memory");
            widened.len = 2 * dk_wtf8_to_utf16(json.data, json.len, widened.data);
            FUZZ_ASSERT(fuzz_same(units.data, units.len, widened.data, widened.len),
                        "the UTF-16 output is the UTF-8 output widened");
        } else if (rc == DK_OK) {
            FUZZ_ASSERT(fuzz_same(units.data, units.len, json.data, json.len),
                        "an output that stays UTF-8 is the same");
        }
    }
    if (rc != DK_OK) return 0;

    dk_arena_reset(&arena);
    rc = dk_json_read_opts(json.data, json.len, 0, &wide, &arena, &tape, &err);
    if (rc != DK_OK) {
        fprintf(stderr, "reader: %s at %zu in %.*s\n", err.msg, err.pos,
                (int)(json.len < 300 ? json.len : 300), (const char *)json.data);
    }
    FUZZ_ASSERT(rc == DK_OK, "the reader accepts every text the writer makes");
    dk_arena_reset(&arena);
    rc = dk_json_write_opts(tape.data, tape.len, NULL, &arena, &json2, &err);
    FUZZ_ASSERT(rc == DK_OK, "the writer accepts the reader's tape");
    FUZZ_ASSERT(fuzz_same(json.data, json.len, json2.data, json2.len),
                "write(read(write(t))) == write(t)");
    return 0;
}

/*
 * fuzz_pb_read.c - libFuzzer target: protobuf darmok.Document -> tape
 * (dk_pb_read_opts: our wire scan, protobuf-c's unpack, the document walk).
 *
 * The input is untrusted protobuf. Invariants:
 *  - the outcome contract (fuzz_common.h): a tape, or a clean error at an
 *    offset inside the input, never "protobuf-c rejected the input" (the
 *    scan must refuse everything protobuf-c would, with an offset);
 *  - tight limits (from the first byte) only turn a success into
 *    DK_ERR_DEPTH / DK_ERR_TOO_LARGE;
 *  - every tape the decoder makes encodes (dk_pb_write_opts), and decoding
 *    that gives the same tape again: read(write(t)) == t;
 *  - with the UTF-16 side table (dk_pb_read_ex, what JS decodes through):
 *    the same outcome (or TOO_LARGE, the table counting in the budget), the
 *    same tape, entries whose units are their str's bytes converted apart,
 *    the same table the JSON reader makes for the same tape (so one entry
 *    per non-ASCII str), and a budget that counts tape + table exactly.
 */
#include "fuzz_common.h"
#include "dk_internal.h"

static dk_arena arena; /* reused across inputs, reset per call */
static dk_buf tape, tape2, pb, u16, units, json, mid, tape3, u3;

/* The side table u16 against the tape t: see the invariants above. */
static void check_side_table(const dk_buf *t)
{
    size_t p = 0, last = 0;
    int first = 1;
    while (p < u16.len) {
        uint32_t at, n, h, len;
        FUZZ_ASSERT(u16.len - p >= 8, "side table entry header complete");
        at = dk_rd32(u16.data + p);
        n = dk_rd32(u16.data + p + 4);
        FUZZ_ASSERT(first || at > last, "entries in tape order");
        FUZZ_ASSERT((size_t)at + 4 <= t->len, "entry inside the tape");
        h = dk_rd32(t->data + at);
        len = h >> DK_STR_SHIFT;
        FUZZ_ASSERT(!(h & DK_STR_ASCII) && (size_t)at + 4 + len <= t->len, "entry of a non-ASCII str");
        FUZZ_ASSERT(u16.len - p - 8 >= 2 * (size_t)n, "entry units complete");
        units.len = 0;
        FUZZ_ASSERT(dk_buf_reserve(&units, 2 * (size_t)len + 1, &(dk_err){DK_OK, NULL, 0}, 0) == DK_OK,
                    "memory");
        FUZZ_ASSERT(dk_wtf8_to_utf16(t->data + at + 4, len, units.data) == n &&
                        (n == 0 || memcmp(units.data, u16.data + p + 8, 2 * (size_t)n) == 0),
                    "entry units are the str converted");
        p += 8 + 2 * (size_t)n;
        last = at;
        first = 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dk_limits tight;
    dk_err err, err2;
    int rc, rc2;

    dk_arena_reset(&arena);
    rc = dk_pb_read_opts(data, size, NULL, 0, &arena, &tape, &err);
    fuzz_check_outcome(rc, &err, size, &tape, DK_ERR_MEMORY);
    FUZZ_ASSERT(rc == DK_OK || strstr(err.msg, "protobuf-c") == NULL,
                "the scan refuses what protobuf-c would");

    tight.max_depth = size ? 1u + (data[0] & 7u) : 1u;
    tight.max_length = size ? 1u + (data[0] >> 3) : 1u;
    dk_arena_reset(&arena);
    rc2 = dk_pb_read_opts(data, size, &tight, 0, &arena, &tape2, &err2);
    fuzz_check_outcome(rc2, &err2, size, &tape2, DK_ERR_MEMORY);
    if (rc != DK_OK)
        FUZZ_ASSERT(rc2 != DK_OK, "limits never make a bad document good");
    else
        FUZZ_ASSERT(rc2 == DK_OK || rc2 == DK_ERR_DEPTH || rc2 == DK_ERR_TOO_LARGE,
                    "limits only add DEPTH / TOO_LARGE");
    dk_arena_reset(&arena);
    rc2 = dk_pb_read_ex(data, size, NULL, 0, &arena, &tape2, &u16, &err2);
    FUZZ_ASSERT(rc2 == rc || rc2 == DK_ERR_TOO_LARGE,
                "the side table changes no outcome but the budget's");
    if (rc2 == DK_OK) {
        size_t need = tape2.len + u16.len;
        FUZZ_ASSERT(fuzz_same(tape.data, tape.len, tape2.data, tape2.len),
                    "the same tape with the side table");
        check_side_table(&tape2);
        /* the budget counts tape and table exactly */
        dk_arena_reset(&arena);
        FUZZ_ASSERT(dk_pb_read_ex(data, size, NULL, need, &arena, &tape2, &u16, &err2) == DK_OK,
                    "max_out = tape + table is enough");
        if (need > 1) {
            dk_arena_reset(&arena);
            FUZZ_ASSERT(dk_pb_read_ex(data, size, NULL, need - 1, &arena, &tape2, &u16, &err2) ==
                                DK_ERR_TOO_LARGE &&
                            tape2.len == 0 && u16.len == 0,
                        "max_out one byte short fails and leaves nothing");
            dk_arena_reset(&arena);
            rc2 = dk_pb_read_ex(data, size, NULL, need, &arena, &tape2, &u16, &err2);
        }
        /* every non-ASCII str has its entry: the JSON reader, which makes
         * its table apart, gives the same one for the same tape */
        dk_arena_reset(&arena);
        if (dk_pb_to_json_opts(data, size, NULL, &arena, &mid, &json, &err2) == DK_OK) {
            dk_arena_reset(&arena);
            if (dk_json_read_ex(json.data, json.len, 0, NULL, &arena, &tape3, &u3, &err2) == DK_OK &&
                fuzz_same(tape3.data, tape3.len, tape2.data, tape2.len))
                FUZZ_ASSERT(fuzz_same(u3.data, u3.len, u16.data, u16.len),
                            "the JSON reader's side table is the same");
        }
    } else {
        FUZZ_ASSERT(tape2.len == 0 && u16.len == 0, "a failure leaves no table");
    }
    if (rc != DK_OK) return 0;

    dk_arena_reset(&arena);
    rc = dk_pb_write_opts(tape.data, tape.len, NULL, &arena, &pb, &err);
    FUZZ_ASSERT(rc == DK_OK, "the encoder accepts every tape the decoder makes");
    dk_arena_reset(&arena);
    rc = dk_pb_read_opts(pb.data, pb.len, NULL, 0, &arena, &tape2, &err);
    FUZZ_ASSERT(rc == DK_OK, "the decoder accepts what the encoder wrote");
    FUZZ_ASSERT(fuzz_same(tape.data, tape.len, tape2.data, tape2.len),
                "read(write(t)) == t");
    return 0;
}

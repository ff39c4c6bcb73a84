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
 *    that gives the same tape again: read(write(t)) == t.
 */
#include "fuzz_common.h"

static dk_arena arena; /* reused across inputs, reset per call */
static dk_buf tape, tape2, pb;

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

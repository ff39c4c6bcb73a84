/*
 * fuzz_pb_write.c - libFuzzer target: tape -> protobuf darmok.Document
 * (dk_pb_write_opts).
 *
 * The input is an untrusted tape (wasm/dk_tape.h). Invariants:
 *  - the outcome contract (fuzz_common.h): bytes, or DK_ERR_TAPE / _DEPTH /
 *    _TOO_LARGE / _MEMORY at an offset inside the tape;
 *  - every document the encoder makes decodes (with the widest max_length:
 *    the encoder has none, as the JSON writer; arrays over 2^30 - 1 slots
 *    are the exception), and encoding that tape gives
 *    the same bytes: write(read(write(t))) == write(t);
 *  - the JSON writer accepts every tape the protobuf encoder accepts;
 *  - skipping the string check (DK_WRITE_TRUSTED_TEXT) changes no byte of
 *    a tape that passes it.
 */
#include "fuzz_common.h"

static dk_arena arena; /* reused across inputs, reset per call */
static dk_buf pb, tape, pb2, json;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const dk_limits wide = {0, UINT32_MAX, 0};
    dk_err err;
    int rc, rcj;

    dk_arena_reset(&arena);
    rc = dk_pb_write_opts(data, size, NULL, &arena, &pb, &err);
    fuzz_check_outcome(rc, &err, size, &pb, FUZZ_WRITE_CODES);
    FUZZ_ASSERT(rc != DK_ERR_SYNTAX && rc != DK_ERR_FORMAT,
                "the encoder reports tape errors, not document errors");
    dk_arena_reset(&arena);
    rcj = dk_json_write_opts(data, size, NULL, &arena, &json, &err);
    /* protobuf is stricter in one place only: a split surrogate pair (two
     * 3-byte surrogates) is not canonical WTF-8, which JS never writes */
    FUZZ_ASSERT(rc != DK_OK || rcj == DK_OK,
                "the JSON writer accepts what the protobuf encoder does");
    if (rc != DK_OK) return 0;

    /* A tape the check accepts encodes the same with the check skipped
     * (DK_WRITE_TRUSTED_TEXT, as for tapes from JS). */
    dk_arena_reset(&arena);
    rc = dk_pb_write_ex(data, size, NULL, DK_WRITE_TRUSTED_TEXT, &arena, &pb2, &err);
    FUZZ_ASSERT(rc == DK_OK && fuzz_same(pb.data, pb.len, pb2.data, pb2.len),
                "trusted-text write == checked write");

    dk_arena_reset(&arena);
    rc = dk_pb_read_opts(pb.data, pb.len, &wide, (size_t)INT32_MAX, &arena, &tape, &err);
    /* The one exception: an array longer than DK_DEFAULT_MAX_LENGTH slots
     * (holes) encodes, as in the JSON writer, but no decoder limit goes
     * above the tape's 2^30 - 1 (fixture "tape-sparse-array-over-2^30"). */
    if (rc == DK_ERR_TOO_LONG && strstr(err.msg, "array longer") != NULL) return 0;
    FUZZ_ASSERT(rc == DK_OK, "the decoder accepts every document the encoder makes");
    dk_arena_reset(&arena);
    rc = dk_pb_write_opts(tape.data, tape.len, NULL, &arena, &pb2, &err);
    FUZZ_ASSERT(rc == DK_OK, "second write");
    FUZZ_ASSERT(fuzz_same(pb.data, pb.len, pb2.data, pb2.len), "write(read(write(t))) == write(t)");
    return 0;
}

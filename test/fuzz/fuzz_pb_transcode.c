/*
 * fuzz_pb_transcode.c - libFuzzer target: JSON text <-> protobuf inside the
 * core (dk_pb_from_json_opts, dk_pb_to_json_opts), as `transcode` uses it.
 *
 * The input is untrusted JSON text. Invariants:
 *  - JSON -> protobuf succeeds exactly when the JSON reader accepts the
 *    text (the encoder takes every tape the reader makes), with the same
 *    error code and offset otherwise;
 *  - protobuf -> JSON of the result succeeds and equals the JSON writer's
 *    text for the reader's tape (the canonical form of the input);
 *  - from that canonical text on, JSON -> protobuf -> JSON is identical.
 */
#include "fuzz_common.h"

static dk_arena arena; /* reused across inputs, reset per call */
static dk_buf tape, pb, json, canon, pb2, tape2;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dk_err err, err2;
    int rc, rc2;

    dk_arena_reset(&arena);
    rc = dk_pb_from_json_opts(data, size, 0, NULL, &arena, &tape, &pb, &err);
    fuzz_check_outcome(rc, &err, size, &pb, FUZZ_READ_CODES);
    dk_arena_reset(&arena);
    rc2 = dk_json_read_opts(data, size, 0, NULL, &arena, &tape2, &err2);
    FUZZ_ASSERT(rc == rc2 && err.pos == err2.pos, "transcoding fails as the JSON reader does");
    if (rc != DK_OK) return 0;

    dk_arena_reset(&arena);
    rc = dk_json_write_opts(tape2.data, tape2.len, NULL, &arena, &canon, &err);
    FUZZ_ASSERT(rc == DK_OK, "the JSON writer accepts the reader's tape");
    dk_arena_reset(&arena);
    rc = dk_pb_to_json_opts(pb.data, pb.len, NULL, &arena, &tape, &json, &err);
    FUZZ_ASSERT(rc == DK_OK, "protobuf -> JSON accepts what JSON -> protobuf wrote");
    FUZZ_ASSERT(fuzz_same(json.data, json.len, canon.data, canon.len),
                "protobuf -> JSON gives the canonical JSON");
    /* From the canonical text on, the round trip is a fixed point: the
     * input itself may be non-canonical ("0.1e1" reads as a double, is
     * written "1" and reads back as an integer). */
    dk_arena_reset(&arena);
    rc = dk_pb_from_json_opts(json.data, json.len, 0, NULL, &arena, &tape, &pb2, &err);
    FUZZ_ASSERT(rc == DK_OK, "the canonical text transcodes");
    dk_arena_reset(&arena);
    rc = dk_pb_to_json_opts(pb2.data, pb2.len, NULL, &arena, &tape, &canon, &err);
    FUZZ_ASSERT(rc == DK_OK && fuzz_same(json.data, json.len, canon.data, canon.len),
                "canonical JSON -> protobuf -> JSON is identical");
    return 0;
}

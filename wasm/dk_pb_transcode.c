/*
 * dk_pb_transcode.c - JSON <-> darmok protobuf through a tape
 * (dk_pb_from_json_opts, dk_pb_to_json_opts, dk_pb_to_json_ex).
 */
#include "dk_pb.h"

/*
 * A failure of the second step concerns a tape the first step wrote, not
 * the caller's input: only MEMORY, TOO_LARGE and DEPTH can happen there,
 * and they are reported at input offset 0.
 */
static int pb_second_step(int rc, dk_err *err)
{
    if (rc != DK_OK) err->pos = 0;
    return rc;
}

int dk_pb_from_json_opts(const uint8_t *json, size_t len, uint32_t flags, const dk_limits *lim,
                         dk_arena *scratch, dk_buf *tape, dk_buf *out, dk_err *err)
{
    dk_err own;

    err = dk_err_start(err, &own);
    out->len = 0;
    DK_TRY(dk_json_read_opts(json, len, flags, lim, scratch, tape, err));
    return pb_second_step(dk_pb_write_opts(tape->data, tape->len, lim, scratch, out, err), err);
}

int dk_pb_to_json_ex(const uint8_t *pb, size_t len, const dk_limits *lim, size_t max_json,
                     dk_arena *scratch, dk_buf *tape, dk_buf *out, dk_err *err)
{
    dk_err own;

    err = dk_err_start(err, &own);
    out->len = 0;
    /* key references too: a key named again is 4 bytes of tape, so the tape
     * grows with the input and only the JSON text with the keys */
    DK_TRY(dk_pb_read_ex(pb, len, lim, 0, DK_READ_STRREFS | DK_READ_KEYREFS, scratch, tape, NULL,
                         NULL, err));
    return pb_second_step(dk_json_write_refs(tape->data, tape->len, lim, dk_pb_max_out(len),
                                             max_json, scratch, out, err),
                          err);
}

int dk_pb_to_json_opts(const uint8_t *pb, size_t len, const dk_limits *lim, dk_arena *scratch,
                       dk_buf *tape, dk_buf *out, dk_err *err)
{
    return dk_pb_to_json_ex(pb, len, lim, SIZE_MAX, scratch, tape, out, err);
}

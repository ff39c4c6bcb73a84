/*
 * fuzz_pb_read.c - libFuzzer target: protobuf darmok.Document -> tape
 * (dk_pb_read_opts: our wire scan, protobuf-c's unpack, the document walk).
 *
 * The input is untrusted protobuf. Invariants:
 *  - the outcome contract (fuzz_common.h): a tape, or a clean error at an
 *    offset inside the input, never "protobuf-c rejected the input" (the
 *    scan must refuse everything protobuf-c would, with an offset);
 *  - tight limits (from the first byte) only turn a success into
 *    DK_ERR_DEPTH / DK_ERR_TOO_LONG / DK_ERR_TOO_LARGE;
 *  - every tape the decoder makes encodes (dk_pb_write_opts), and decoding
 *    that gives the same tape again: read(write(t)) == t;
 *  - with the UTF-16 side table (dk_pb_read_ex, what JS decodes through):
 *    the same outcome, the same tape, entries whose units are their str's
 *    bytes converted apart, the same table the JSON reader makes for the
 *    same tape (so one entry per non-ASCII str), and a budget that counts
 *    the tape exactly and the table not at all;
 *  - with key and string references too (DK_READ_KEYREFS | _STRREFS,
 *    what JS decodes through): a tape that expands to the plain one, and
 *    an entry for every non-ASCII str written in full.
 */
#include "fuzz_common.h"
#include "dk_internal.h"
#include "../c/tape_walk.h"

static dk_arena arena; /* reused across inputs, reset per call */
static dk_buf tape, tape2, pb, u16, json, mid, tape3, u3, expanded;

/* dk_pb_read_ex's max_out when given 0 (darmok.h, DK_PB_EXPANSION), for
 * inputs far under its 2 GiB cap, as a fuzzer's are. */
static size_t default_max_out(size_t len)
{
    return len * DK_PB_EXPANSION + DK_PB_EXPANSION_FLOOR;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dk_limits tight;
    dk_err err, err2;
    uint32_t ids;
    int rc, rc2;

    dk_arena_reset(&arena);
    rc = dk_pb_read_opts(data, size, NULL, 0, &arena, &tape, &err);
    fuzz_check_outcome(rc, &err, size, &tape, FUZZ_READ_CODES);
    FUZZ_ASSERT(rc == DK_OK || strstr(err.msg, "protobuf-c") == NULL,
                "the scan refuses what protobuf-c would");

    tight.max_depth = size ? 1u + (data[0] & 7u) : 1u;
    tight.max_length = size ? 1u + (data[0] >> 3) : 1u;
    dk_arena_reset(&arena);
    rc2 = dk_pb_read_opts(data, size, &tight, 0, &arena, &tape2, &err2);
    fuzz_check_outcome(rc2, &err2, size, &tape2, FUZZ_READ_CODES);
    if (rc != DK_OK)
        FUZZ_ASSERT(rc2 != DK_OK, "limits never make a bad document good");
    else
        FUZZ_ASSERT(rc2 == DK_OK || rc2 == DK_ERR_DEPTH || rc2 == DK_ERR_TOO_LONG ||
                        rc2 == DK_ERR_TOO_LARGE,
                    "limits only add DEPTH / TOO_LONG / TOO_LARGE");
    dk_arena_reset(&arena);
    rc2 = dk_pb_read_ex(data, size, NULL, 0, 0, &arena, &tape2, &u16, NULL, &err2);
    FUZZ_ASSERT(rc2 == rc, "the side table changes no outcome");
    if (rc2 == DK_OK) {
        size_t need = tape2.len;
        size_t non_ascii = 0;
        long entries;
        FUZZ_ASSERT(fuzz_same(tape.data, tape.len, tape2.data, tape2.len),
                    "the same tape with the side table");
        FUZZ_ASSERT(tw_expand_refs(tape2.data, tape2.len, &expanded, &non_ascii) == 0,
                    "a well-formed tape without key references");
        /* the table is not charged to max_out but stops at half of it: an
         * entry with the str's units for every non-ASCII str, or for the
         * first ones; for all when the whole table (at most twice the tape:
         * an entry, 8 + 2 units, is at most twice its str's 4 + n bytes)
         * fits */
        entries = tw_check_side_table(tape2.data, tape2.len, u16.data, u16.len, NULL, 0, NULL);
        FUZZ_ASSERT(entries >= 0 && (size_t)entries <= non_ascii && u16.len <= 2 * tape2.len &&
                        u16.len <= default_max_out(size) / 2,
                    "entries with the str's units, within half the bound");
        FUZZ_ASSERT((size_t)entries == non_ascii || 2 * tape2.len > default_max_out(size) / 2,
                    "an entry for every non-ASCII str when the table fits");
        /* the budget counts the tape exactly, the table not at all */
        dk_arena_reset(&arena);
        FUZZ_ASSERT(dk_pb_read_ex(data, size, NULL, need, 0, &arena, &tape2, &u16, NULL, &err2) ==
                        DK_OK,
                    "max_out = the tape is enough, with the table");
        if (need > 1) {
            dk_arena_reset(&arena);
            FUZZ_ASSERT(dk_pb_read_ex(data, size, NULL, need - 1, 0, &arena, &tape2, &u16, NULL,
                                      &err2) == DK_ERR_TOO_LARGE &&
                            tape2.len == 0 && u16.len == 0,
                        "max_out one byte short fails and leaves nothing");
            dk_arena_reset(&arena);
            rc2 = dk_pb_read_ex(data, size, NULL, need, 0, &arena, &tape2, &u16, NULL, &err2);
        }
        /* when every non-ASCII str has its entry, the JSON reader, which
         * makes its table apart, gives the same one for the same tape */
        dk_arena_reset(&arena);
        rc2 = dk_pb_read_ex(data, size, NULL, 0, 0, &arena, &tape2, &u16, NULL, &err2);
        if ((size_t)entries == non_ascii &&
            dk_pb_to_json_opts(data, size, NULL, &arena, &mid, &json, &err2) == DK_OK) {
            dk_arena_reset(&arena);
            if (dk_json_read_ex(json.data, json.len, 0, NULL, &arena, &tape3, &u3, NULL, &err2) ==
                    DK_OK &&
                fuzz_same(tape3.data, tape3.len, tape2.data, tape2.len))
                FUZZ_ASSERT(fuzz_same(u3.data, u3.len, u16.data, u16.len),
                            "the JSON reader's side table is the same");
        }
    } else {
        FUZZ_ASSERT(tape2.len == 0 && u16.len == 0, "a failure leaves no table");
    }
    /* with key and string references (what JS decodes through): the same outcome,
     * and expanded, the same tape; every full non-ASCII str has its entry */
    dk_arena_reset(&arena);
    ids = UINT32_MAX;
    rc2 = dk_pb_read_ex(data, size, NULL, 0, DK_READ_KEYREFS | DK_READ_STRREFS, &arena, &tape3, &u3,
                        &ids, &err2);
    FUZZ_ASSERT(rc2 == rc || rc2 == DK_ERR_TOO_LARGE || rc == DK_ERR_TOO_LARGE,
                "key references change no outcome but the budget's");
    FUZZ_ASSERT(rc2 == DK_OK || ids == 0, "a failed read keeps no referenceable value");
    if (rc2 == DK_OK && rc == DK_OK) {
        size_t non_ascii = 0;
        FUZZ_ASSERT((long)ids == tw_ref_keep(tape.data, tape.len),
                    "the referenceable values to keep are what the tape's references need");
        FUZZ_ASSERT(tw_expand_refs(tape3.data, tape3.len, &expanded, &non_ascii) >= 0 &&
                        fuzz_same(expanded.data, expanded.len, tape.data, tape.len),
                    "key and string references expand to the plain tape");
        long entries = tw_check_side_table(tape3.data, tape3.len, u3.data, u3.len, NULL, 0, NULL);
        FUZZ_ASSERT(
            entries >= 0 && (size_t)entries <= non_ascii &&
                ((size_t)entries == non_ascii || 2 * tape3.len > default_max_out(size) / 2),
            "with key references, an entry for every full non-ASCII str when the table fits");
    }
    if (rc != DK_OK) return 0;

    dk_arena_reset(&arena);
    rc = dk_pb_write_opts(tape.data, tape.len, NULL, &arena, &pb, &err);
    FUZZ_ASSERT(rc == DK_OK, "the encoder accepts every tape the decoder makes");
    dk_arena_reset(&arena);
    rc = dk_pb_read_opts(pb.data, pb.len, NULL, 0, &arena, &tape2, &err);
    FUZZ_ASSERT(rc == DK_OK, "the decoder accepts what the encoder wrote");
    FUZZ_ASSERT(fuzz_same(tape.data, tape.len, tape2.data, tape2.len), "read(write(t)) == t");
    return 0;
}

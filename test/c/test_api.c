/*
 * test_api.c - the error contract of the C API (darmok.h dk_err) at every
 * entry point, dk_abi.h's included: each accepts err == NULL and then
 * reports a failure by its returned code alone, the code it returns with
 * an error struct, leaving its output empty; with one, the struct is
 * cleared when a call starts, so a success after a failure leaves it all
 * zero (DK_OK, no message, offset 0).
 */
#include "test_util.h"

static const uint8_t bad_json[] = "[1,]";
static const uint8_t good_json[] = "[1]";
static const uint8_t bad_tape[] = {99};
static const uint8_t bad_pb[] = {0xFF};

/*
 * Writes the m bytes of ASCII text as the UTF-16 units of a JS string in
 * its decode area (dk_json_read_utf16 rewrites the area: each call needs
 * them again); returns the area.
 */
static uint8_t *units(uint8_t *area, const uint8_t *text, size_t m)
{
    for (size_t i = 0; i < m; i++) dk_put_u16(area + DK_U16_AT(m) + 2 * i, text[i]);
    return area;
}

/*
 * Runs bad (an expression that calls an entry with E as its dk_err *)
 * with an error struct, then with E NULL: the same failing code both
 * times, *out emptied. Then good, with the struct the failure filled:
 * DK_OK and the struct all zero.
 */
#define ENTRY(name, out, bad, good)                                                             \
    do {                                                                                        \
        dk_err err_ = {DK_OK, NULL, 0}, *E = &err_;                                             \
        int with_ = (bad), without_;                                                            \
        CHECK(with_ != DK_OK && (int)err_.code == with_ && err_.msg != NULL,                    \
              "%s: bad input fails with an error struct (code %d)", name, with_);               \
        E = NULL;                                                                               \
        (out)->len = 1;                                                                         \
        without_ = (bad);                                                                       \
        CHECK(without_ == with_, "%s with err NULL: code %d, not %d", name, without_, with_);   \
        CHECK((out)->len == 0, "%s with err NULL: output left of %zu bytes", name, (out)->len); \
        E = &err_;                                                                              \
        CHECK((good) == DK_OK && err_.code == DK_OK && err_.msg == NULL && err_.pos == 0,       \
              "%s: a success after a failure clears the struct (code %d, pos %zu)", name,       \
              (int)err_.code, err_.pos);                                                        \
    } while (0)

int main(void)
{
    dk_arena a;
    dk_buf tape, pb, out, aux, u16;
    dk_err err;
    uint32_t keep;
    int form;
    size_t n = sizeof bad_json - 1, json_len;
    uint8_t *area = malloc(DK_U16_AREA(n) + DK_JSON_PADDING);

    if (area == NULL) return 1;
    dk_arena_init(&a);
    dk_buf_init(&tape);
    dk_buf_init(&pb);
    dk_buf_init(&out);
    dk_buf_init(&aux);
    dk_buf_init(&u16);
    /* a good tape and document for the successes */
    if (dk_json_read(good_json, sizeof good_json - 1, NULL, &tape, NULL) != DK_OK ||
        dk_pb_write_opts(tape.data, tape.len, NULL, &a, &pb, NULL) != DK_OK)
        return 1;

    dk_err_clear(NULL);
    err = (dk_err){DK_ERR_SYNTAX, "x", 3};
    dk_err_clear(&err);
    CHECK(err.code == DK_OK && err.msg == NULL && err.pos == 0, "dk_err_clear zeroes the struct");

    ENTRY("dk_json_read", &out, dk_json_read(bad_json, n, NULL, &out, E),
          dk_json_read(good_json, sizeof good_json - 1, NULL, &out, E));
    ENTRY("dk_json_read_opts", &out, dk_json_read_opts(bad_json, n, 0, NULL, &a, &out, E),
          dk_json_read_opts(good_json, sizeof good_json - 1, 0, NULL, &a, &out, E));
    ENTRY("dk_json_read_ex", &out, dk_json_read_ex(bad_json, n, 0, NULL, &a, &out, &u16, &keep, E),
          dk_json_read_ex(good_json, sizeof good_json - 1, 0, NULL, &a, &out, &u16, &keep, E));
    ENTRY("dk_json_write", &out, dk_json_write(bad_tape, sizeof bad_tape, NULL, &out, E),
          dk_json_write(tape.data, tape.len, NULL, &out, E));
    ENTRY("dk_json_write_opts", &out,
          dk_json_write_opts(bad_tape, sizeof bad_tape, NULL, &a, &out, E),
          dk_json_write_opts(tape.data, tape.len, NULL, &a, &out, E));
    ENTRY("dk_json_write_ex", &out,
          dk_json_write_ex(bad_tape, sizeof bad_tape, NULL, DK_WRITE_MAY_WIDE, &a, &out, &form, E),
          dk_json_write_ex(tape.data, tape.len, NULL, DK_WRITE_MAY_WIDE, &a, &out, &form, E));
    ENTRY("dk_pb_write_opts", &out, dk_pb_write_opts(bad_tape, sizeof bad_tape, NULL, &a, &out, E),
          dk_pb_write_opts(tape.data, tape.len, NULL, &a, &out, E));
    ENTRY("dk_pb_write_ex", &out,
          dk_pb_write_ex(bad_tape, sizeof bad_tape, NULL, DK_WRITE_TRUSTED_TEXT, &a, &out, E),
          dk_pb_write_ex(tape.data, tape.len, NULL, DK_WRITE_TRUSTED_TEXT, &a, &out, E));
    ENTRY("dk_pb_read_opts", &out, dk_pb_read_opts(bad_pb, sizeof bad_pb, NULL, 0, &a, &out, E),
          dk_pb_read_opts(pb.data, pb.len, NULL, 0, &a, &out, E));
    ENTRY("dk_pb_read_ex", &out,
          dk_pb_read_ex(bad_pb, sizeof bad_pb, NULL, 0, DK_READ_KEYREFS | DK_READ_STRREFS, &a, &out,
                        &u16, &keep, E),
          dk_pb_read_ex(pb.data, pb.len, NULL, 0, DK_READ_KEYREFS | DK_READ_STRREFS, &a, &out, &u16,
                        &keep, E));
    ENTRY("dk_pb_from_json_opts", &out,
          dk_pb_from_json_opts(bad_json, n, 0, NULL, &a, &aux, &out, E),
          dk_pb_from_json_opts(good_json, sizeof good_json - 1, 0, NULL, &a, &aux, &out, E));
    ENTRY("dk_pb_to_json_opts", &out,
          dk_pb_to_json_opts(bad_pb, sizeof bad_pb, NULL, &a, &aux, &out, E),
          dk_pb_to_json_opts(pb.data, pb.len, NULL, &a, &aux, &out, E));
    ENTRY("dk_pb_to_json_ex", &out,
          dk_pb_to_json_ex(bad_pb, sizeof bad_pb, NULL, SIZE_MAX, &a, &aux, &out, E),
          dk_pb_to_json_ex(pb.data, pb.len, NULL, SIZE_MAX, &a, &aux, &out, E));

    ENTRY(
        "dk_json_read_utf16", &out,
        dk_json_read_utf16(units(area, bad_json, n), n, NULL, &a, &out, &u16, &json_len, &keep, E),
        dk_json_read_utf16(units(area, good_json, sizeof good_json - 1), sizeof good_json - 1, NULL,
                           &a, &out, &u16, &json_len, &keep, E));

    /* dk_buf_reserve keeps a failure already in err (the core's calls
     * reserve within a call), so only NULL and the code are checked */
    out.len = 1;
    err = (dk_err){DK_OK, NULL, 0};
    CHECK(dk_buf_reserve(&out, SIZE_MAX, &err, 5) == DK_ERR_TOO_LARGE && err.pos == 5,
          "dk_buf_reserve past SIZE_MAX fails with an error struct");
    CHECK(dk_buf_reserve(&out, SIZE_MAX, NULL, 5) == DK_ERR_TOO_LARGE,
          "dk_buf_reserve past SIZE_MAX fails with err NULL");
    CHECK(dk_buf_reserve(&out, 1, NULL, 0) == DK_OK && out.len == 1,
          "dk_buf_reserve with err NULL succeeds");

    dk_arena_free(&a);
    dk_buf_free(&tape);
    dk_buf_free(&pb);
    dk_buf_free(&out);
    dk_buf_free(&aux);
    dk_buf_free(&u16);
    free(area);
    return test_report("c-api");
}

/*
 * fuzz_json_utf16.c - libFuzzer target: a JS string's JSON text through
 * the WebAssembly entry (dk_json_decode_ctx with units: UTF-16 made WTF-8
 * in place, then read with DK_READ_VALID_UTF8, or with DK_READ_RAW_WTF8
 * when the string has a lone surrogate, which its JSON string keeps).
 *
 * The input bytes become UTF-16 units: a byte below 0x80 is that unit;
 * 0xFF and the two bytes after it are one raw unit (any, lone surrogates
 * included); 0x80-0xBF, 0xC0-0xEF and 0xF0-0xFE pick units of 2-byte
 * (U+0080-U+07FF), 3-byte (U+4E00...) and surrogate (U+D83F...) ranges, so
 * seeds of JSON text stay JSON text with other characters in it.
 * Invariants checked on every input:
 *  - the in-place narrowing gives exactly the bytes of a plain reference
 *    (a lone surrogate in its own 3-byte form: WTF-8), and result word 8
 *    is their length;
 *  - the entry's outcome (code, position, message length, tape and side
 *    table lengths) is that of dk_json_read_ex on the reference bytes
 *    without DK_READ_VALID_UTF8 (with DK_READ_RAW_WTF8 when they hold a
 *    lone surrogate), so error offsets are the text's;
 *  - without a lone surrogate, reading the reference bytes with and
 *    without DK_READ_VALID_UTF8 gives the same code, position, tape and
 *    side table, byte for byte;
 *  - dk_json_read_utf16 (what the entry runs) on an area of exactly
 *    DK_U16_AREA(n) + DK_JSON_PADDING bytes gives the reference's outcome
 *    and tape, byte for byte, and a side table with an entry for the same
 *    non-ASCII strs (and long ASCII ones), each with the right units,
 *    inline or in the area's intact units.
 */
#include "fuzz_common.h"
#include "../c/tape_walk.h"

/* The ABI of wasm/dk_wasm.c (compiled in natively too). */
typedef struct dk_ctx dk_ctx;
dk_ctx *dk_ctx_new(void);
uint8_t *dk_ctx_input(dk_ctx *c, uint32_t n);
uint32_t *dk_ctx_result(dk_ctx *c);
int dk_json_decode_ctx(dk_ctx *c, uint32_t json_len, uint32_t max_depth, uint32_t max_length,
                       uint32_t units);

enum {
    RES_CODE,
    RES_OFFSET,
    RES_OUT,
    RES_OUT_LEN,
    RES_MSG,
    RES_MSG_LEN,
    RES_U16,
    RES_U16_LEN,
    RES_IN_LEN
};

static dk_ctx *ctx;
static dk_arena arena;
static dk_buf units, ref, tape, table, tape2, table2;
static size_t table3_len;

static void put_unit(dk_buf *b, uint32_t c)
{
    b->data[b->len++] = (uint8_t)c;
    b->data[b->len++] = (uint8_t)(c >> 8);
}

/* UTF-16 units u[0..n) as WTF-8 at d, written one code point at a time;
 * *lone set when one is a lone surrogate. */
static size_t reference(const uint8_t *u, size_t n, uint8_t *d, int *lone)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)u[2 * i] | (uint32_t)u[2 * i + 1] << 8;
        if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n) {
            uint32_t lo = (uint32_t)u[2 * i + 2] | (uint32_t)u[2 * i + 3] << 8;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                i++;
            }
        }
        if (c >= 0xD800 && c <= 0xDFFF) *lone = 1;
        if (c < 0x80) {
            d[o++] = (uint8_t)c;
        } else if (c < 0x800) {
            d[o++] = (uint8_t)(0xC0 | c >> 6);
            d[o++] = (uint8_t)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            d[o++] = (uint8_t)(0xE0 | c >> 12);
            d[o++] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
            d[o++] = (uint8_t)(0x80 | (c & 0x3F));
        } else {
            d[o++] = (uint8_t)(0xF0 | c >> 18);
            d[o++] = (uint8_t)(0x80 | (c >> 12 & 0x3F));
            d[o++] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
            d[o++] = (uint8_t)(0x80 | (c & 0x3F));
        }
    }
    return o;
}

static void reserve(dk_buf *b, size_t n)
{
    if (b->cap < n) {
        b->data = realloc(b->data, n);
        FUZZ_ASSERT(b->data != NULL, "test allocation");
        b->cap = n;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dk_err err, err2;
    size_t n, len;
    int rc, rc2, lone = 0;
    uint32_t flags;

    reserve(&units, 2 * size + 2);
    units.len = 0;
    for (size_t i = 0; i < size; i++) {
        uint8_t b = data[i];
        if (b == 0xFF && size - i > 2) {
            put_unit(&units, (uint32_t)data[i + 1] | (uint32_t)data[i + 2] << 8);
            i += 2;
        } else if (b < 0x80) {
            put_unit(&units, b);
        } else if (b < 0xC0) {
            put_unit(&units, 0x80 + (uint32_t)(b - 0x80) * 30);
        } else if (b < 0xF0) {
            put_unit(&units, 0x4E00 + (uint32_t)(b - 0xC0));
        } else {
            put_unit(&units, 0xD83F + (uint32_t)(b - 0xF0) * 0x100);
        }
    }
    n = units.len / 2;
    reserve(&ref, 3 * n + DK_JSON_PADDING);
    len = reference(units.data, n, ref.data, &lone);
    memset(ref.data + len, 0, DK_JSON_PADDING);
    flags = DK_READ_PADDED | (lone ? DK_READ_RAW_WTF8 : 0u);

    dk_arena_reset(&arena);
    rc = dk_json_read_ex(ref.data, len, flags, NULL, &arena, &tape, &table, NULL, &err);
    fuzz_check_outcome(rc, &err, len, &tape, FUZZ_READ_CODES);

    /* The same bytes, trusted: the same answer (valid UTF-8 only). */
    if (!lone) {
        dk_arena_reset(&arena);
        rc2 = dk_json_read_ex(ref.data, len, DK_READ_PADDED | DK_READ_VALID_UTF8, NULL, &arena,
                              &tape2, &table2, NULL, &err2);
        FUZZ_ASSERT(rc2 == rc && err2.pos == err.pos, "DK_READ_VALID_UTF8: the same outcome");
        FUZZ_ASSERT(tape2.len == tape.len &&
                        (tape.len == 0 || memcmp(tape2.data, tape.data, tape.len) == 0),
                    "DK_READ_VALID_UTF8: the same tape");
        FUZZ_ASSERT(table2.len == table.len &&
                        (table.len == 0 || memcmp(table2.data, table.data, table.len) == 0),
                    "DK_READ_VALID_UTF8: the same side table");
    }

    if (n != 0) {
        uint8_t *area = malloc(DK_U16_AREA(n) + DK_JSON_PADDING);
        size_t len3 = 0;
        long entries, srcs = 0;
        uint32_t ids;
        FUZZ_ASSERT(area != NULL, "test allocation");
        memcpy(area + DK_U16_AT(n), units.data, 2 * n);
        dk_arena_reset(&arena);
        ids = UINT32_MAX;
        rc2 = dk_json_read_utf16(area, n, NULL, &arena, &tape2, &table2, &len3, &ids, &err2);
        FUZZ_ASSERT(len3 == len && memcmp(area, ref.data, len) == 0,
                    "dk_json_read_utf16: the WTF-8");
        FUZZ_ASSERT(rc2 == rc && err2.pos == err.pos, "dk_json_read_utf16: the same outcome");
        FUZZ_ASSERT(rc2 == DK_OK ? (long)ids == tw_ref_keep(tape2.data, tape2.len) : ids == 0,
                    "dk_json_read_utf16: the referenceable values to keep are what the tape's "
                    "references need");
        FUZZ_ASSERT(tape2.len == tape.len &&
                        (tape.len == 0 || memcmp(tape2.data, tape.data, tape.len) == 0),
                    "dk_json_read_utf16: the same tape");
        if (rc == DK_OK) {
            entries =
                tw_check_side_table(tape.data, tape.len, table.data, table.len, NULL, 0, NULL);
            FUZZ_ASSERT(
                entries >= 0 && tw_check_side_table(tape2.data, tape2.len, table2.data, table2.len,
                                                    area + DK_U16_AT(n), n, &srcs) == entries,
                "dk_json_read_utf16: a side table entry for each non-ASCII str, right units");
        }
        table3_len = table2.len;
        free(area);
    }

    if (n != 0) {
        uint8_t *in;
        uint32_t *res;
        if (ctx == NULL) ctx = dk_ctx_new();
        FUZZ_ASSERT(ctx != NULL, "context");
        in = dk_ctx_input(ctx, (uint32_t)DK_U16_AREA(n));
        FUZZ_ASSERT(in != NULL, "input area");
        memcpy(in + DK_U16_AT(n), units.data, 2 * n);
        rc2 = dk_json_decode_ctx(ctx, 0, 0, 0, (uint32_t)n);
        res = dk_ctx_result(ctx);
        FUZZ_ASSERT(res[RES_IN_LEN] == len && memcmp(in, ref.data, len) == 0,
                    "narrowed in place to the reference bytes");
        FUZZ_ASSERT(rc2 == rc && res[RES_CODE] == (uint32_t)rc, "the entry's code");
        if (rc != DK_OK) {
            FUZZ_ASSERT(res[RES_OFFSET] == err.pos && res[RES_MSG_LEN] == strlen(err.msg),
                        "the entry's error offset and message");
        } else {
            FUZZ_ASSERT(res[RES_OUT_LEN] == tape.len && res[RES_U16_LEN] == table3_len,
                        "the entry's tape and side table");
        }
    }
    return 0;
}

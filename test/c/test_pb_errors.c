/*
 * test_pb_errors.c - native tests of what the protobuf reader and writer
 * refuse, and where they say it is: malformed tapes (DK_ERR_TAPE at a tape
 * offset), valid protobuf that is not a valid document (DK_ERR_FORMAT),
 * and bytes that are not protobuf at all (DK_ERR_SYNTAX at the exact
 * wire offset: pb_wire_check). Run by `make test` as test_proto is.
 */
#include "test_pb_util.h"

/* ---- tests -------------------------------------------------------------- */

static void test_bad_tapes(void)
{
    dk_buf t = {0};
    size_t i;
    const uint8_t *out;
    size_t out_len;
    dk_err err;
    int all_clean = 1;

    /* every proper prefix of a valid tape is an error (TAPE) */
    sample(&t, 3, NULL);
    for (i = 0; i < t.len; i++) {
        uint8_t *copy = dup(t.data, i);
        dk_code rc = t_encode(copy, i, 0, &out, &out_len, &err);
        if (rc != DK_ERR_TAPE || err.msg == NULL || err.pos > i) {
            all_clean = 0;
            printf("  prefix %zu: code %d\n", i, rc);
        }
        free(copy);
    }
    CHECK(all_clean, "every tape prefix gives DK_ERR_TAPE");

#define BAD_TAPE(name, pos, ...)                      \
    do {                                              \
        t.len = 0;                                    \
        __VA_ARGS__;                                  \
        expect_encode(name, &t, 0, DK_ERR_TAPE, pos); \
    } while (0)
    BAD_TAPE("unknown op", 0, tb_op(&t, 99));
    BAD_TAPE("op 0", 0, tb_op(&t, 0));
    BAD_TAPE("trailing bytes", 1, tb_op(&t, DK_T_NULL); tb_op(&t, DK_T_NULL));
    BAD_TAPE("forward REF", 5, v_hdr(&t, DK_T_ARRAY, 1); tb_op(&t, DK_T_REF); tb_u32(&t, 1));
    BAD_TAPE("REF at root", 0, tb_op(&t, DK_T_REF); tb_u32(&t, 0));
    BAD_TAPE("hole at root", 0, v_hdr(&t, DK_T_HOLE, 1));
    BAD_TAPE("hole in object", 10, v_hdr(&t, DK_T_OBJECT, 1); tb_str(&t, S("a"));
             v_hdr(&t, DK_T_HOLE, 1));
    BAD_TAPE("hole past length", 5, v_hdr(&t, DK_T_ARRAY, 2); v_hdr(&t, DK_T_HOLE, 3));
    BAD_TAPE("hole 0", 5, v_hdr(&t, DK_T_ARRAY, 2); v_hdr(&t, DK_T_HOLE, 0));
    /* str flags are hints (as for the JSON writer): wrong ones are fine */
    t.len = 0;
    tb_op(&t, DK_T_STR);
    tb_u32(&t, 2u << 2 | DK_STR_ASCII);
    tb_raw(&t, "\xc3\xa9", 2);
    expect_encode("ascii flag wrong", &t, 0, DK_OK, -1);
    t.len = 0;
    tb_op(&t, DK_T_STR);
    tb_u32(&t, 3u << 2);
    tb_raw(&t, "\xed\xa0\x80", 3);
    expect_encode("wtf8 flag missing", &t, 0, DK_OK, -1);
    BAD_TAPE("invalid utf8", 1, tb_op(&t, DK_T_STR); tb_u32(&t, 1u << 2); tb_raw(&t, "\xff", 1));
    {
        /* DK_WRITE_TRUSTED_TEXT takes the caller's word (the JS writer's):
         * the same tape goes through unchecked, and only the decoder
         * refuses the string it became. */
        const uint8_t *back;
        size_t back_len;
        dk_arena_reset(&enc_side.arena);
        memset(&err, 0, sizeof err);
        dk_code rc = (dk_code)dk_pb_write_ex(t.data, t.len, NULL, DK_WRITE_TRUSTED_TEXT,
                                             &enc_side.arena, &enc_side.out, &err);
        CHECK(rc == DK_OK, "trusted text is not checked: code %d", rc);
        if (rc == DK_OK) {
            uint8_t *pbc = dup(enc_side.out.data, enc_side.out.len);
            rc = t_decode(pbc, enc_side.out.len, 0, 0, &back, &back_len, &err);
            CHECK(rc == DK_ERR_FORMAT, "the decoder refuses it: code %d", rc);
            free(pbc);
        }
    }
    BAD_TAPE("split surrogate pair", 1, tb_op(&t, DK_T_STR); tb_u32(&t, 6u << 2 | DK_STR_WTF8);
             tb_raw(&t, "\xed\xa0\xbd\xed\xb8\x80", 6));
    BAD_TAPE("string past end", 1, tb_op(&t, DK_T_STR); tb_u32(&t, 100u << 2));
    BAD_TAPE("bigint leading zero", 0, tb_op(&t, DK_T_BIGINT); tb_str(&t, S("01")));
    BAD_TAPE("bigint -0", 0, tb_op(&t, DK_T_BIGINT); tb_str(&t, S("-0")));
    BAD_TAPE("bigint empty", 0, tb_op(&t, DK_T_BIGINT); tb_str(&t, S("")));
    BAD_TAPE("bytes kind", 0, tb_op(&t, DK_T_BYTES); tb_op(&t, 14); tb_u32(&t, 0));
    BAD_TAPE("bytes length", 0, tb_op(&t, DK_T_BYTES); tb_op(&t, DK_BYTES_FLOAT64); tb_u32(&t, 4);
             tb_u32(&t, 0));
    BAD_TAPE("instance v0", 0, v_inst(&t, S("A"), 0, 0));
    BAD_TAPE("error order", 5, v_hdr(&t, DK_T_ERROR, 2); tb_str(&t, S("message"));
             v_str(&t, S("m")); tb_str(&t, S("name")); v_str(&t, S("E")));
    BAD_TAPE("error without fields", 5, v_hdr(&t, DK_T_ARRAY, 1); v_hdr(&t, DK_T_ERROR, 0));
    BAD_TAPE("huge object count", 5, v_hdr(&t, DK_T_OBJECT, 0xFFFFFFFFu));
    dk_buf_free(&t);
}

static void test_bad_documents(void)
{
    Darmok__Document doc;
    Darmok__Shape shape = DARMOK__SHAPE__INIT;
    Darmok__Shape *shapes[1] = {&shape};
    uint32_t fields[2] = {0, 1};

    /* the document */
    doc_reset(&doc);
    ARR(kinds, Darmok__Kind, K(ARRAY));
    ARR(counts, uint32_t, 0);
    decode_doc("baseline valid", &doc, 0, 0, DK_OK);
    doc.format = 2;
    want_msg = "revision";
    decode_doc_at("format 2", &doc, 0, 0, DK_ERR_FORMAT, 0);
    doc.format = 0;
    decode_doc("format missing", &doc, 0, 0, DK_ERR_FORMAT);
    doc_reset(&doc);
    want_msg = "empty kinds";
    decode_doc_at("no value", &doc, 0, 0, DK_ERR_FORMAT, 0);

    /* references: [ref 1] before value 1 exists; [[], ref 1]; [ref 0] */
    ARR(kinds, Darmok__Kind, K(ARRAY), K(REF));
    ARR(counts, uint32_t, 1, 1);
    want_msg = "not yet met";
    /* 08 01 | 22 02 09 15 | 2a 02 01 01: the second counts entry */
    decode_doc_at("forward reference", &doc, 0, 0, DK_ERR_FORMAT, 9);
    ARR(kinds, Darmok__Kind, K(ARRAY), K(REF));
    ARR(counts, uint32_t, 1, 7);
    want_msg = "not yet met";
    decode_doc("bad index", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(kinds, Darmok__Kind, K(ARRAY), K(ARRAY), K(REF));
    ARR(counts, uint32_t, 2, 0, 1);
    decode_doc("back-reference in order", &doc, 0, 0, DK_OK);
    ARR(kinds, Darmok__Kind, K(ARRAY), K(REF));
    ARR(counts, uint32_t, 1, 0);
    decode_doc("cycle to root", &doc, 0, 0, DK_OK);
    ARR(kinds, Darmok__Kind, K(REF));
    ARR(counts, uint32_t, 0);
    decode_doc("reference at root", &doc, 0, 0, DK_ERR_FORMAT);

    /* the stream's shape */
    ARR(kinds, Darmok__Kind, K(ARRAY), K(NULL));
    ARR(counts, uint32_t, 3);
    want_msg = "ends inside a container";
    decode_doc_at("kinds end inside a container", &doc, 0, 0, DK_ERR_FORMAT, 4);
    ARR(kinds, Darmok__Kind, K(NULL), K(TRUE));
    NONE(counts);
    want_msg = "after the root";
    decode_doc_at("values after the root", &doc, 0, 0, DK_ERR_FORMAT, 5);
    ARR(kinds, Darmok__Kind, K(ARRAY));
    NONE(counts);
    want_msg = "counts stream ends";
    decode_doc_at("counts end early", &doc, 0, 0, DK_ERR_FORMAT, 4);
    ARR(kinds, Darmok__Kind, K(NULL));
    ARR(counts, uint32_t, 5);
    want_msg = "unused counts";
    decode_doc("unused counts", &doc, 0, 0, DK_ERR_FORMAT);
    NONE(counts);
    ARR(ints, int64_t, 5);
    want_msg = "unused ints";
    decode_doc("unused ints", &doc, 0, 0, DK_ERR_FORMAT);
    NONE(ints);
    ARR(numbers, double, 0.5);
    want_msg = "unused numbers";
    decode_doc("unused numbers", &doc, 0, 0, DK_ERR_FORMAT);
    NONE(numbers);
    ARR(texts, ProtobufCBinaryData, B("a"));
    want_msg = "unused texts";
    decode_doc("unused texts", &doc, 0, 0, DK_ERR_FORMAT);
    NONE(texts);
    ARR(binaries, ProtobufCBinaryData, B("a"));
    want_msg = "unused binaries";
    decode_doc("unused binaries", &doc, 0, 0, DK_ERR_FORMAT);
    NONE(binaries);
    ARR(kinds, Darmok__Kind, (Darmok__Kind)22);
    want_msg = "unknown Kind";
    decode_doc_at("unknown Kind", &doc, 0, 0, DK_ERR_FORMAT, 4);
    ARR(kinds, Darmok__Kind, K(INT));
    want_msg = "ints stream ends";
    decode_doc("ints end early", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(kinds, Darmok__Kind, K(NUMBER));
    want_msg = "numbers stream ends";
    decode_doc("numbers end early", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(kinds, Darmok__Kind, K(STRING));
    want_msg = "texts stream ends";
    decode_doc("texts end early", &doc, 0, 0, DK_ERR_FORMAT);

    /* scalars */
    ARR(kinds, Darmok__Kind, K(INT));
    ARR(ints, int64_t, (int64_t)INT32_MAX + 1);
    want_msg = "int32";
    decode_doc("int beyond int32", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(ints, int64_t, INT32_MIN);
    decode_doc("int32 minimum", &doc, 0, 0, DK_OK);
    NONE(ints);
    ARR(kinds, Darmok__Kind, K(BIGINT));
    ARR(texts, ProtobufCBinaryData, B("007"));
    want_msg = "BigInt";
    decode_doc("bad bigint", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(kinds, Darmok__Kind, K(STRING));
    ARR(texts, ProtobufCBinaryData, B("\xed\xa0\xbd\xed\xb8\x80"));
    want_msg = "WTF-8";
    decode_doc("text: split pair", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(texts, ProtobufCBinaryData, B("\xc0\x80"));
    want_msg = "WTF-8";
    /* 08 01 | 22 01 06 | 42 02 c0 80: the texts entry */
    decode_doc_at("text: overlong NUL", &doc, 0, 0, DK_ERR_FORMAT, 5);
    ARR(texts, ProtobufCBinaryData, B("a\0\xed\xa0\x80"));
    decode_doc("text: U+0000 and a lone surrogate", &doc, 0, 0, DK_OK);
    ARR(texts, ProtobufCBinaryData, B("abcdef"));
    decode_doc("string over max_length", &doc, 0, 5, DK_ERR_TOO_LONG);
    decode_doc("string at max_length", &doc, 0, 6, DK_OK);
    /* entries after the first of a run of texts are checked by the wire
     * check's inner loop: 08 01 | 22 01 06 | 42 01 61 | 42 06 ... */
    ARR(texts, ProtobufCBinaryData, B("a"), B("abcdef"));
    decode_doc_at("string over max_length second in a run", &doc, 0, 5, DK_ERR_TOO_LONG, 8);
    ARR(texts, ProtobufCBinaryData, B("a"), B("b"), B("abcdef"));
    decode_doc_at("string over max_length third in a run", &doc, 0, 5, DK_ERR_TOO_LONG, 11);
    ARR(texts, ProtobufCBinaryData, B("abcdef"));
    ARR(kinds, Darmok__Kind, K(ARRAY), K(STRING), K(STRING_REF));
    ARR(counts, uint32_t, 2, 0);
    decode_doc("string reference", &doc, 0, 0, DK_OK);
    ARR(kinds, Darmok__Kind, K(ARRAY), K(STRING_REF), K(STRING));
    want_msg = "not yet read";
    decode_doc("string reference forward", &doc, 0, 0, DK_ERR_FORMAT);
    NONE(texts);

    /* arrays and holes */
    ARR(kinds, Darmok__Kind, K(ARRAY), K(HOLES));
    ARR(counts, uint32_t, 5, 0);
    want_msg = "hole run";
    decode_doc("holes 0", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(counts, uint32_t, 5, 5);
    decode_doc("holes 5", &doc, 0, 0, DK_OK);
    decode_doc("array over max_length", &doc, 0, 4, DK_ERR_TOO_LONG);
    ARR(counts, uint32_t, 5, 6);
    want_msg = "hole run";
    decode_doc("holes past the length", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(kinds, Darmok__Kind, K(HOLES));
    ARR(counts, uint32_t, 1);
    want_msg = "holes outside";
    decode_doc("holes at root", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(kinds, Darmok__Kind, K(SET), K(HOLES));
    ARR(counts, uint32_t, 1, 1);
    want_msg = "holes outside";
    decode_doc("holes in a Set", &doc, 0, 0, DK_ERR_FORMAT);

    /* Map, Set */
    ARR(kinds, Darmok__Kind, K(MAP), K(NULL), K(TRUE), K(FALSE), K(UNDEFINED));
    ARR(counts, uint32_t, 2);
    decode_doc("map ok", &doc, 0, 0, DK_OK);
    decode_doc("map over max_length", &doc, 0, 1, DK_ERR_TOO_LONG);
    ARR(counts, uint32_t, 3);
    decode_doc("map missing a value", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(kinds, Darmok__Kind, K(SET), K(NULL), K(TRUE));
    ARR(counts, uint32_t, 2);
    decode_doc("set ok", &doc, 0, 0, DK_OK);
    decode_doc("set over max_length", &doc, 0, 1, DK_ERR_TOO_LONG);

    /* binary values, dates */
    ARR(kinds, Darmok__Kind, K(BINARY));
    NONE(counts);
    ARR(binary_kinds, Darmok__BinaryKind, (Darmok__BinaryKind)14);
    ARR(binaries, ProtobufCBinaryData, B("abcd"));
    want_msg = "binary kind";
    decode_doc("unknown binary kind", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(binary_kinds, Darmok__BinaryKind, DARMOK__BINARY_KIND__BINARY_INT32);
    ARR(binaries, ProtobufCBinaryData, B("abcdef"));
    want_msg = "multiple";
    decode_doc("binary length", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(binaries, ProtobufCBinaryData, B("abcd"));
    decode_doc("binary ok", &doc, 0, 0, DK_OK);
    decode_doc("binary over max_length", &doc, 0, 3, DK_ERR_TOO_LONG);
    NONE(binaries);
    want_msg = "binary streams end";
    decode_doc("binary without data", &doc, 0, 0, DK_ERR_FORMAT);
    NONE(binary_kinds);
    ARR(kinds, Darmok__Kind, K(DATE));
    ARR(ints, int64_t, 8640000000000001);
    want_msg = "date out of range";
    decode_doc("date out of range", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(ints, int64_t, -8640000000000000);
    decode_doc("date at the minimum", &doc, 0, 0, DK_OK);
    ARR(ints, int64_t, INT64_MIN);
    decode_doc("date INT64_MIN", &doc, 0, 0, DK_ERR_FORMAT);
    NONE(ints);
    ARR(kinds, Darmok__Kind, K(INVALID_DATE));
    decode_doc("invalid date", &doc, 0, 0, DK_OK);
    ARR(kinds, Darmok__Kind, K(REGEXP));
    ARR(texts, ProtobufCBinaryData, B("a+"));
    decode_doc("regexp without flags", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(texts, ProtobufCBinaryData, B("a+"), B("g"));
    decode_doc("regexp ok", &doc, 0, 0, DK_OK);
    NONE(texts);

    /* records and shapes */
    {
        static ProtobufCBinaryData strs[2] = {B("name"), B("message")};
        doc.strings = strs;
        doc.n_strings = 2;
    }
    doc.shapes = shapes;
    doc.n_shapes = 1;
    shape.fields = fields;
    shape.n_fields = 2;
    ARR(kinds, Darmok__Kind, K(ERROR), K(STRING), K(STRING));
    ARR(counts, uint32_t, 0);
    ARR(texts, ProtobufCBinaryData, B("E"), B("m"));
    decode_doc("error ok", &doc, 0, 0, DK_OK);
    fields[0] = 1;
    fields[1] = 0;
    want_msg = "name and message";
    decode_doc("error field order", &doc, 0, 0, DK_ERR_FORMAT);
    fields[0] = 0;
    fields[1] = 1;
    ARR(kinds, Darmok__Kind, K(ERROR), K(STRING));
    ARR(texts, ProtobufCBinaryData, B("E"));
    want_msg = "ends inside";
    decode_doc("record shorter than its shape", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(kinds, Darmok__Kind, K(ERROR), K(STRING), K(STRING));
    ARR(texts, ProtobufCBinaryData, B("E"), B("m"));
    ARR(counts, uint32_t, 1);
    want_msg = "shape out of range";
    decode_doc("shape out of range", &doc, 0, 0, DK_ERR_FORMAT);
    ARR(counts, uint32_t, 0);
    fields[1] = 2;
    want_msg = "field name out of range";
    /* 08 01 | 12 04 "name" | 12 07 "message" | 1a ..: the shape */
    decode_doc_at("field name out of range", &doc, 0, 0, DK_ERR_FORMAT, 17);
    fields[1] = 1;
    ARR(kinds, Darmok__Kind, K(INSTANCE), K(STRING), K(STRING));
    want_msg = "key-only";
    decode_doc("instance with key-only shape", &doc, 0, 0, DK_ERR_FORMAT);
    shape.version = 2;
    shape.class_key = 5;
    want_msg = "class key";
    decode_doc("class key out of range", &doc, 0, 0, DK_ERR_FORMAT);
    shape.class_key = 1;
    decode_doc("instance ok", &doc, 0, 0, DK_OK);
    ARR(kinds, Darmok__Kind, K(OBJECT), K(STRING), K(STRING));
    want_msg = "class shape";
    decode_doc("object with class shape", &doc, 0, 0, DK_ERR_FORMAT);
    shape.version = 0;
    want_msg = "class key";
    decode_doc("key-only shape with class key", &doc, 0, 0, DK_ERR_FORMAT);
    shape.class_key = 0;
    decode_doc("object ok", &doc, 0, 0, DK_OK);
    ARR(kinds, Darmok__Kind, K(NULL_PROTO), K(STRING), K(HOLES));
    ARR(counts, uint32_t, 0, 1);
    ARR(texts, ProtobufCBinaryData, B("E"));
    want_msg = "holes outside";
    decode_doc("holes in a record", &doc, 0, 0, DK_ERR_FORMAT);
    {
        /* five members named "name" (a shape may repeat a name; see NOTES) */
        uint32_t five[5] = {0, 0, 0, 0, 0};
        shape.fields = five;
        shape.n_fields = 5;
        ARR(kinds, Darmok__Kind, K(OBJECT), K(NULL), K(NULL), K(NULL), K(NULL), K(NULL));
        ARR(counts, uint32_t, 0);
        NONE(texts);
        doc.n_strings = 1; /* "message" would exceed max_length itself */
        decode_doc("members at max_length", &doc, 0, 5, DK_OK);
        want_msg = "members";
        decode_doc("members over max_length", &doc, 0, 4, DK_ERR_TOO_LONG);
        shape.fields = fields;
        shape.n_fields = 2;
        doc.n_strings = 2;
    }
    doc.n_shapes = 0;

    /* nesting: [[[]]] */
    ARR(kinds, Darmok__Kind, K(ARRAY), K(ARRAY), K(ARRAY));
    ARR(counts, uint32_t, 1, 1, 0);
    decode_doc("depth ok", &doc, 3, 0, DK_OK);
    want_msg = "max_depth";
    decode_doc_at("depth over", &doc, 2, 0, DK_ERR_DEPTH, 21); /* past the strings */
}

/* Raw wire bytes. */
static void test_wire(void)
{
    dk_buf t = {0};
    const uint8_t *pb;
    size_t pb_len, i;
    dk_err err;
    uint8_t *good;
    int all_clean = 1;
    unsigned long mutations = 0;

    /* 1 GB length prefix in a 20-byte input: field 8 (texts), length 2^30 */
    {
        uint8_t in[20] = {0x08, 0x01, 0x42, 0x80, 0x80, 0x80, 0x80, 0x04};
        expect_decode("1 GB length prefix", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 2);
    }
    {
        uint8_t in[] = {0x08, 0x01, 0x42, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
        expect_decode("6-byte length varint", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 3);
    }
    {
        uint8_t in[] = {0x08, 0x01, 0x22, 0x02, 0x01};
        expect_decode("truncated kinds", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 2);
    }
    {
        uint8_t in[] = {0x08, 0x01, 0x0b, 0x0c};
        expect_decode("group wire type", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 2);
    }
    {
        uint8_t in[] = {0x08, 0x01, 0x18, 0x01};
        expect_decode("shapes as varint", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 2);
    }
    {
        uint8_t in[] = {0x08, 0x01, 0x21, 1, 2, 3, 4, 5, 6, 7, 8};
        expect_decode("kinds as fixed64", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 2);
    }
    {
        uint8_t in[] = {0x00, 0x01};
        expect_decode("field 0", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 0);
    }
    {
        /* protobuf-c would keep the low 32 bits of these */
        uint8_t in[] = {0x08, 0x80, 0x80, 0x80, 0x80, 0x10};
        want_msg = "32-bit";
        expect_decode("format over 32 bits", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 0);
        want_msg = NULL;
    }
    {
        /* kinds [ARRAY], counts packed [2^32] */
        uint8_t in[] = {0x08, 0x01, 0x22, 0x01, 0x09, 0x2a, 0x05, 0x80, 0x80, 0x80, 0x80, 0x10};
        want_msg = "32-bit";
        expect_decode("packed count over 32 bits", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 7);
        want_msg = NULL;
    }
    {
        /* kinds, unpacked: -1 as protobuf writes a negative enum (10 bytes) */
        uint8_t in[] = {0x08, 0x01, 0x20, 0xff, 0xff, 0xff, 0xff,
                        0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
        want_msg = "unknown Kind";
        expect_decode("negative Kind", in, sizeof in, 0, 0, DK_ERR_FORMAT, 2);
        want_msg = NULL;
    }
    {
        /* unpacked repeated scalars are accepted, and located for errors:
         * kinds ARRAY, counts 2, kinds NULL, kinds NULL */
        uint8_t in[] = {0x08, 0x01, 0x20, 0x09, 0x28, 0x02, 0x20, 0x01, 0x20, 0x01};
        expect_decode("unpacked streams", in, sizeof in, 0, 0, DK_OK, -1);
        want_msg = "ends inside";
        expect_decode("unpacked streams, one value short", in, 8, 0, 0, DK_ERR_FORMAT, 2);
        want_msg = NULL;
    }
    {
        /* kinds [STRING], texts ["\xff"] */
        uint8_t in[] = {0x08, 0x01, 0x22, 0x01, 0x06, 0x42, 0x01, 0xff};
        want_msg = "WTF-8";
        expect_decode("invalid UTF-8 in texts", in, sizeof in, 0, 0, DK_ERR_FORMAT, 5);
        want_msg = NULL;
    }
    {
        uint8_t in[] = {0x08, 0x01, 0x22, 0x01, 0x06, 0x42, 0x02, 'a', 0x00};
        expect_decode("U+0000 in texts", in, sizeof in, 0, 0, DK_OK, -1);
    }
    {
        /* Short entries are classified by one mask (pb_text_class): a
         * bad last byte at every length up to and past the mask's width,
         * in texts (kinds [STRING], texts ["a..a\xff"]) and in strings
         * (strings ["a..a\xff"], kinds [NULL]); and the same lengths,
         * ASCII, decoding. */
        size_t n;
        for (n = 1; n <= 18; n++) {
            uint8_t in[32] = {0x08, 0x01, 0x22, 0x01, 0x06, 0x42};
            uint8_t in2[32] = {0x08, 0x01, 0x12};
            in[6] = (uint8_t)n;
            memset(in + 7, 'a', n);
            in[6 + n] = 0xff;
            in2[3] = (uint8_t)n;
            memset(in2 + 4, 'a', n);
            in2[3 + n] = 0xff;
            memcpy(in2 + 4 + n, "\x22\x01\x01", 3);
            want_msg = "WTF-8";
            expect_decode("short text, bad last byte", in, 7 + n, 0, 0, DK_ERR_FORMAT, 5);
            expect_decode("short string, bad last byte", in2, 7 + n, 0, 0, DK_ERR_FORMAT, 2);
            want_msg = NULL;
            in[6 + n] = 'z';
            in2[3 + n] = 'z';
            expect_decode("short text, ASCII", in, 7 + n, 0, 0, DK_OK, -1);
            expect_decode("short string, ASCII", in2, 7 + n, 0, 0, DK_OK, -1);
        }
    }
    {
        /* pb_wire_check skips one-byte varints of a packed run 8 at a time:
         * a bad varint after 8 of them, and one inside the first 8 bytes.
         * kinds [ARRAY], counts packed [1 x 8, 2^32] */
        uint8_t in[] = {0x08, 0x01, 0x22, 0x01, 0x09, 0x2a, 0x0d, 1,    1,    1,
                        1,    1,    1,    1,    1,    0x80, 0x80, 0x80, 0x80, 0x10};
        /* counts packed [1 x 8, <unterminated>] */
        uint8_t in2[] = {0x08, 0x01, 0x22, 0x01, 0x09, 0x2a, 0x09, 1, 1, 1, 1, 1, 1, 1, 1, 0x80};
        /* counts packed [1, 1, 2^32, 1, 1, 1] */
        uint8_t in3[] = {0x08, 0x01, 0x22, 0x01, 0x09, 0x2a, 0x0a, 1, 1,
                         0x80, 0x80, 0x80, 0x80, 0x10, 1,    1,    1};
        want_msg = "32-bit";
        expect_decode("packed count over 32 bits after 8", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 15);
        expect_decode("packed count over 32 bits in the first 8", in3, sizeof in3, 0, 0,
                      DK_ERR_SYNTAX, 9);
        want_msg = "bad varint";
        expect_decode("unterminated packed varint after 8", in2, sizeof in2, 0, 0, DK_ERR_SYNTAX,
                      15);
        want_msg = NULL;
    }
    {
        /* kinds [NULL] plus unknown field 11, the first past the last
         * Document field (pb_wire_check looks field n up at index n - 1) */
        uint8_t in[] = {0x08, 0x01, 0x58, 0x05, 0x22, 0x01, 0x01};
        expect_decode("unknown field 11 skipped", in, sizeof in, 0, 0, DK_OK, -1);
    }
    {
        /* kinds [NULL] plus unknown field 99 (varint) */
        uint8_t in[] = {0x08, 0x01, 0x98, 0x06, 0x05, 0x22, 0x01, 0x01};
        expect_decode("unknown field skipped", in, sizeof in, 0, 0, DK_OK, -1);
    }
    {
        /* shapes { fields: packed [1, <unterminated>] } */
        uint8_t in[] = {0x08, 0x01, 0x1a, 0x04, 0x1a, 0x02, 0x01, 0x80};
        expect_decode("bad packed varint", in, sizeof in, 0, 0, DK_ERR_SYNTAX, 7);
    }
    {
        /* fuzzer find (protobuf-c 1.4.1: NULL + 0): shapes { fields: <empty
         * packed run> } */
        uint8_t in[] = {0x08, 0x01, 0x1a, 0x02, 0x1a, 0x00, 0x22, 0x01, 0x01};
        want_msg = "empty packed";
        expect_decode("empty packed field", in, sizeof in, 0, 0, DK_ERR_FORMAT, 4);
        want_msg = NULL;
    }
    expect_decode("empty input", (const uint8_t *)"", 0, 0, 0, DK_ERR_FORMAT, 0);

    /* every proper prefix of a valid document fails cleanly */
    sample(&t, 3, NULL);
    if (t_encode(t.data, t.len, 0, &pb, &pb_len, &err) != DK_OK) {
        CHECK(0, "encode sample");
        return;
    }
    good = dup(pb, pb_len);
    for (i = 0; i < pb_len; i++) {
        const uint8_t *out;
        size_t out_len;
        uint8_t *copy = dup(good, i);
        dk_code rc = t_decode(copy, i, 0, 0, &out, &out_len, &err);
        if ((rc != DK_ERR_SYNTAX && rc != DK_ERR_FORMAT) || err.msg == NULL || err.pos > i) {
            all_clean = 0;
            printf("  prefix %zu: code %d at %zu\n", i, rc, err.pos);
        }
        free(copy);
    }
    CHECK(all_clean, "every protobuf prefix fails with SYNTAX or FORMAT");

    /* every byte replaced by several values: never a crash, a clean result */
    all_clean = 1;
    for (i = 0; i < pb_len; i++) {
        static const uint8_t repl[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12};
        size_t r;
        for (r = 0; r < sizeof repl + 2; r++) {
            const uint8_t *out;
            size_t out_len;
            uint8_t *copy = dup(good, pb_len);
            dk_code rc;
            copy[i] = r < sizeof repl    ? repl[r]
                      : r == sizeof repl ? (uint8_t)(good[i] ^ 1)
                                         : (uint8_t)(good[i] + 1);
            rc = t_decode(copy, pb_len, 0, 0, &out, &out_len, &err);
            /* protobuf-c never rejects what pb_wire_check passed */
            if ((rc > DK_ERR_MEMORY && rc != DK_ERR_TOO_LONG) ||
                (rc != DK_OK &&
                 (err.msg == NULL || err.pos > pb_len || strstr(err.msg, "protobuf-c") != NULL)))
                all_clean = 0;
            mutations++;
            free(copy);
        }
    }
    CHECK(all_clean, "%lu single-byte mutations decode cleanly", mutations);
    free(good);
    dk_buf_free(&t);
}

int main(void)
{
    test_bad_tapes();
    test_bad_documents();
    test_wire();
    test_report("c-pb-errors");
    sides_free();
    return test_failed != 0;
}

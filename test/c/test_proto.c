/*
 * test_proto.c - native tests of the protobuf format (wasm/dk_pb_*.c), run
 * by `make test` under ASan/UBSan and as -m32.
 *
 *   test_proto                      run the tests; last line "c-proto: N passed, M failed"
 *   test_proto --sample FILE [N]    write the Foo/Bar/Baz sample (N Foos; default 1)
 *                                   as protobuf to FILE and as JSON to FILE.json
 *   test_proto --decode FILE        decode FILE (darmok.Document) and print its tape
 */
#include "test_pb_util.h"

/* ---- tests -------------------------------------------------------------- */

static void test_scalars(void)
{
    static const int32_t ints[] = {0, 1, -1, 127, 128, -64, -65, 2147483647, -2147483647 - 1};
    static const double nums[] = {0.5, -0.0, 1e308, 5e-324, -1.25, 1e21};
    static const int ops[] = {DK_T_UNDEF, DK_T_NULL, DK_T_FALSE, DK_T_TRUE};
    static const char *bigints[] = {"0", "-1", "123456789012345678901234567890",
                                    "-98765432109876543210"};
    struct {
        const char *s;
        size_t n;
        const char *what;
    } strs[] = {
        {S(""), "empty"},
        {S("abc"), "ascii"},
        {S("h\xc3\xa9llo"), "latin"},
        {S("\xf0\x9f\x98\x80"), "emoji"},
        {S("\xed\xa0\x80"), "lone high"},
        {S("a\xed\xb0\x80z"), "lone low"},
        {S("\xed\xb0\x80\xed\xa0\x80"), "low then high"},
        {S("a\0b"), "nul"},
        {S("\0\xed\xa0\x80"), "nul+surrogate"},
        {S("\x7f\xef\xbf\xbf"), "del+U+FFFF"},
    };
    size_t i;
    dk_buf t = {0};
    for (i = 0; i < sizeof ops / sizeof *ops; i++) {
        t.len = 0;
        tb_op(&t, ops[i]);
        roundtrip("special", &t);
    }
    for (i = 0; i < sizeof ints / sizeof *ints; i++) {
        t.len = 0;
        v_int(&t, ints[i]);
        roundtrip("int", &t);
    }
    for (i = 0; i < sizeof nums / sizeof *nums; i++) {
        t.len = 0;
        v_f64(&t, nums[i]);
        roundtrip("f64", &t);
    }
    {
        /* +-Infinity and the canonical NaN: bits preserved, and through JSON */
        uint64_t bits[] = {0x7ff8000000000000u, 0x7ff0000000000000u, 0xfff0000000000000u};
        /* any other NaN (0/0 in JS is fff8...): written as the canonical
         * one, as JSON can only say "NaN" and JS cannot tell them apart */
        uint64_t nans[] = {0xfff8000000000000u, 0x7ff0000000000001u, 0xfff8000000000123u,
                           0x7fffffffffffffffu};
        const uint8_t *pb;
        size_t pb_len, want_len;
        uint8_t *want;
        dk_err err;
        for (i = 0; i < 3; i++) {
            t.len = 0;
            tb_op(&t, DK_T_F64);
            tb_bits(&t, bits[i]);
            roundtrip("f64 special bits", &t);
        }
        t.len = 0;
        tb_op(&t, DK_T_F64);
        tb_bits(&t, bits[0]);
        CHECK(t_encode(t.data, t.len, 0, &pb, &want_len, &err) == DK_OK, "canonical NaN encodes");
        want = dup(pb, want_len);
        for (i = 0; i < 4; i++) {
            t.len = 0;
            tb_op(&t, DK_T_F64);
            tb_bits(&t, nans[i]);
            CHECK(t_encode(t.data, t.len, 0, &pb, &pb_len, &err) == DK_OK && pb_len == want_len &&
                      memcmp(pb, want, want_len) == 0,
                  "NaN %016llx: written as the canonical NaN", (unsigned long long)nans[i]);
        }
        free(want);
    }
    for (i = 0; i < sizeof bigints / sizeof *bigints; i++) {
        t.len = 0;
        tb_op(&t, DK_T_BIGINT);
        tb_strn(&t, bigints[i], strlen(bigints[i]));
        roundtrip("bigint", &t);
    }
    for (i = 0; i < sizeof strs / sizeof *strs; i++) {
        t.len = 0;
        v_str(&t, strs[i].s, strs[i].n);
        roundtrip(strs[i].what, &t);
    }
    dk_buf_free(&t);
}

static void test_containers(void)
{
    dk_buf t = {0};
    int k;

    /* arrays, holes */
    v_hdr(&t, DK_T_ARRAY, 0);
    roundtrip("empty array", &t);
    t.len = 0;
    v_hdr(&t, DK_T_ARRAY, 5);
    v_int(&t, 1);
    v_hdr(&t, DK_T_HOLE, 2);
    tb_op(&t, DK_T_UNDEF);
    v_hdr(&t, DK_T_HOLE, 1);
    roundtrip("array with holes", &t);
    t.len = 0;
    v_hdr(&t, DK_T_ARRAY, 1000000);
    v_hdr(&t, DK_T_HOLE, 1000000);
    roundtrip("sparse array", &t);

    /* instances whose keys leave their class's last shape (the encoder
       compares an instance's keys with that shape's before any lookup):
       the same keys, reordered, fewer, more, another version, a key of the
       same length, none, another class with the same keys, the same class
       nested inside one, and more classes than the recent class keys */
    {
        static const struct {
            const char *cls;
            uint32_t version;
            const char *keys;
        } v[] = {
            {"C", 1, "ab"},  {"C", 1, "ab"}, {"C", 1, "ba"}, {"C", 1, "a"},   {"C", 1, "abc"},
            {"C", 1, "ab"},  {"C", 2, "ab"}, {"C", 1, "ax"}, {"C", 1, ""},    {"D", 1, "ab"},
            {"C", 1, "ab"},  {"C1", 1, "a"}, {"C2", 1, "a"}, {"C3", 1, "b"},  {"C4", 1, "a"},
            {"C5", 1, "ab"}, {"C1", 1, "a"}, {"C", 1, "ab"}, {"C2", 1, "ba"}, {"C", 2, "ab"},
        };
        const size_t nv = sizeof v / sizeof v[0];
        t.len = 0;
        v_hdr(&t, DK_T_ARRAY, (uint32_t)nv + 1);
        for (size_t j = 0; j < nv; j++) {
            size_t nk = strlen(v[j].keys);
            v_inst(&t, v[j].cls, strlen(v[j].cls), v[j].version, (uint32_t)nk);
            for (size_t q = 0; q < nk; q++) {
                tb_str(&t, &v[j].keys[q], 1);
                v_int(&t, (int32_t)(j * 10 + q));
            }
        }
        /* C {a: C {a, b}, b}: the inner one closes while the outer is open */
        v_inst(&t, S("C"), 1, 2);
        tb_str(&t, S("a"));
        v_inst(&t, S("C"), 1, 2);
        tb_str(&t, S("a"));
        v_int(&t, 1);
        tb_str(&t, S("b"));
        v_int(&t, 2);
        tb_str(&t, S("b"));
        v_int(&t, 3);
        roundtrip("instances leaving their class's last shape", &t);

        /* a class key interned after 40 other keys: the table of class
           keys' last shapes grows past its first 16 entries, twice */
        t.len = 0;
        v_hdr(&t, DK_T_ARRAY, 4);
        v_hdr(&t, DK_T_OBJECT, 40);
        for (int q = 0; q < 40; q++) {
            char key[8];
            int kl = snprintf(key, sizeof key, "k%d", q);
            tb_str(&t, key, (size_t)kl);
            v_int(&t, q);
        }
        for (int q = 0; q < 2; q++) {
            v_inst(&t, S("Z"), 1, 1);
            tb_str(&t, S("k39"));
            v_int(&t, q);
        }
        v_inst(&t, S("Y"), 1, 1);
        tb_str(&t, S("k1"));
        v_int(&t, 7);
        roundtrip("class keys late in the strings table", &t);
    }

    /* objects: empty, keys needing raw strings, nested */
    t.len = 0;
    v_hdr(&t, DK_T_OBJECT, 0);
    roundtrip("empty object", &t);
    t.len = 0;
    v_hdr(&t, DK_T_OBJECT, 5);
    tb_str(&t, S("a"));
    v_int(&t, 1);
    tb_str(&t, S(""));
    v_str(&t, S("empty key"));
    tb_str(&t, S("k\xed\xa0\x80"));
    tb_op(&t, DK_T_TRUE);
    tb_str(&t, S("n\0l"));
    tb_op(&t, DK_T_NULL);
    tb_str(&t, S("nested"));
    v_hdr(&t, DK_T_OBJECT, 1);
    tb_str(&t, S("a"));
    v_hdr(&t, DK_T_ARRAY, 1);
    v_hdr(&t, DK_T_OBJECT, 1);
    tb_str(&t, S("k\xed\xa0\x80"));
    tb_op(&t, DK_T_FALSE);
    roundtrip("objects", &t);

    /* null-proto, instances, shape reuse across classes and objects */
    t.len = 0;
    v_hdr(&t, DK_T_ARRAY, 6);
    v_hdr(&t, DK_T_NULLPROTO, 1);
    tb_str(&t, S("x"));
    v_int(&t, 1);
    v_inst(&t, S("Foo"), 3, 1);
    tb_str(&t, S("x"));
    v_int(&t, 2);
    v_inst(&t, S("Foo"), 3, 1);
    tb_str(&t, S("x"));
    v_int(&t, 3);
    v_inst(&t, S("Foo"), 1, 0);
    v_inst(&t, S("Cl\xed\xa0\x80ss"), 7, 1);
    tb_str(&t, S("x"));
    v_hdr(&t, DK_T_OBJECT, 1);
    tb_str(&t, S("x"));
    v_int(&t, 4);
    v_hdr(&t, DK_T_OBJECT, 1);
    tb_str(&t, S("x"));
    v_int(&t, 5);
    roundtrip("instances", &t);

    /* Map with object keys, Set */
    t.len = 0;
    v_hdr(&t, DK_T_MAP, 3);
    v_str(&t, S("a"));
    v_int(&t, 1);
    v_hdr(&t, DK_T_OBJECT, 0);
    v_hdr(&t, DK_T_SET, 2);
    v_int(&t, 1);
    tb_op(&t, DK_T_REF);
    tb_u32(&t, 1);
    tb_op(&t, DK_T_REF);
    tb_u32(&t, 0);
    tb_op(&t, DK_T_UNDEF);
    roundtrip("map and set", &t);
    t.len = 0;
    v_hdr(&t, DK_T_MAP, 0);
    roundtrip("empty map", &t);

    /* Date, RegExp */
    t.len = 0;
    v_hdr(&t, DK_T_ARRAY, 5);
    tb_op(&t, DK_T_DATE);
    tb_f64(&t, 1577836800000.0);
    tb_op(&t, DK_T_DATE);
    tb_f64(&t, NAN);
    tb_op(&t, DK_T_REGEXP);
    tb_str(&t, S("a+b"));
    tb_str(&t, S("gi"));
    tb_op(&t, DK_T_REGEXP);
    tb_str(&t, S("\xed\xa0\x80|\0"));
    tb_str(&t, S(""));
    tb_op(&t, DK_T_DATE);
    tb_f64(&t, 0.0);
    roundtrip("date and regexp", &t);

    /* every binary kind */
    for (k = 0; k < DK_BYTES_KIND_COUNT; k++) {
        static const uint8_t data[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255};
        t.len = 0;
        v_hdr(&t, DK_T_ARRAY, 2);
        tb_op(&t, DK_T_BYTES);
        tb_op(&t, k);
        tb_u32(&t, 16);
        tb_raw(&t, data, 16);
        tb_op(&t, DK_T_BYTES);
        tb_op(&t, k);
        tb_u32(&t, 0);
        roundtrip("binary", &t);
    }

    /* Error with cause, errors and an extra property */
    t.len = 0;
    v_hdr(&t, DK_T_ERROR, 6);
    tb_str(&t, S("name"));
    v_str(&t, S("TypeError"));
    tb_str(&t, S("message"));
    v_str(&t, S("bad \xed\xa0\x80"));
    tb_str(&t, S("stack"));
    v_str(&t, S("TypeError: bad\n    at x"));
    tb_str(&t, S("cause"));
    tb_op(&t, DK_T_REF);
    tb_u32(&t, 0);
    tb_str(&t, S("errors"));
    v_hdr(&t, DK_T_ARRAY, 0);
    tb_str(&t, S("code"));
    v_str(&t, S("E_X"));
    roundtrip("error", &t);

    /* cycles and shared references */
    t.len = 0;
    v_hdr(&t, DK_T_ARRAY, 2);
    tb_op(&t, DK_T_REF);
    tb_u32(&t, 0);
    v_hdr(&t, DK_T_OBJECT, 2);
    tb_str(&t, S("self"));
    tb_op(&t, DK_T_REF);
    tb_u32(&t, 1);
    tb_str(&t, S("root"));
    tb_op(&t, DK_T_REF);
    tb_u32(&t, 0);
    roundtrip("cycles", &t);

    t.len = 0;
    sample(&t, 1, NULL);
    roundtrip("Foo/Bar/Baz", &t);
    t.len = 0;
    sample(&t, 50, NULL);
    roundtrip("50 Foos", &t);
    dk_buf_free(&t);
}

static void test_depth(void)
{
    dk_buf t = {0};
    int i;
    const uint8_t *pb;
    size_t pb_len;
    dk_err err;
    uint8_t *copy;

    for (i = 0; i < 999; i++) v_hdr(&t, DK_T_ARRAY, 1);
    v_int(&t, 7);
    roundtrip("999 nested arrays", &t);
    expect_encode("depth limit on encode", &t, 10, DK_ERR_DEPTH, 50);
    expect_encode("depth exactly max", &t, 999, DK_OK, -1);

    if (t_encode(t.data, t.len, 0, &pb, &pb_len, &err) == DK_OK) {
        copy = dup(pb, pb_len);
        expect_decode("depth limit on decode", copy, pb_len, 10, 0, DK_ERR_DEPTH, -1);
        expect_decode("depth at max on decode", copy, pb_len, 999, 0, DK_OK, -1);
        expect_decode("depth one below", copy, pb_len, 998, 0, DK_ERR_DEPTH, -1);
        free(copy);
    }
    t.len = 0;
    for (i = 0; i < 1001; i++) v_hdr(&t, DK_T_ARRAY, 1);
    v_int(&t, 7);
    expect_encode("default depth 1000", &t, 0, DK_ERR_DEPTH, 5000);
    dk_buf_free(&t);
}

#undef ARR
#undef K
#undef NONE
#undef B

/* JSON -> protobuf -> JSON gives the same bytes (canonical darmok JSON). */
static void test_json_transcode(void)
{
    static const char *docs[] = {
        "null",
        "true",
        "0",
        "-1.5",
        "\"x\"",
        "[]",
        "{}",
        "{\"$undefined\":0}",
        "[{\"$Number\":\"NaN\"},{\"$Number\":\"-0\"},{\"$Number\":\"Infinity\"},{\"$Number\":\"-"
        "Infinity\"},1e+21,5e-324]",
        "{\"$BigInt\":\"-12345678901234567890\"}",
        "[{\"$Date\":\"2020-01-02T03:04:05.006Z\"},{\"$Date\":null},{\"$Date\":\"+275760-09-13T00:"
        "00:00.000Z\"}]",
        "{\"$RegExp\":[\"a+b\\\\/\",\"gi\"]}",
        "{\"$Map\":[[1,2],[\"a\",{\"$ref\":0}],[{\"k\":1},{\"$Set\":[]}]]}",
        "{\"$Set\":[1,\"x\",{\"$ref\":0}]}",
        "{\"$NullProto\":{\"a\":1,\"$$b\":2}}",
        "{\"$Error\":{\"name\":\"TypeError\",\"message\":\"m\",\"stack\":\"s\",\"cause\":{\"$ref\":"
        "0},\"code\":7}}",
        "[1,{\"$hole\":2},3,{\"$hole\":1}]",
        "[{\"$Uint8Array\":\"AAEC\"},{\"$Buffer\":\"\"},{\"$Float64Array\":\"AAAAAAAA8D8=\"},{\"$"
        "BigInt64Array\":\"AQAAAAAAAAA=\"}]",
        "{\"$$id\":1,\"$x\":2,\"y\":{\"$$set\":1}}",
        "{\"$\":\"Foo\",\"$v\":2,\"$$x\":1,\"y\":[{\"$\":\"Foo\",\"$v\":2,\"$$x\":2,\"y\":null}]}",
        "[\"\\u0000\",\"\\ud800\",\"a\\udc00b\",\"\xf0\x9f\x98\x80\",\"caf\xc3\xa9\","
        "\"\\\"\\\\\\n\"]",
        "{\"\\ud800\":1,\"\\u0000\":2,\"\":3}",
        "{\"$\":\"Foo\",\"name\":\"foo\",\"bars\":[{\"$\":\"Bar\",\"when\":{\"$Date\":\"2020-01-"
        "01T00:00:00.000Z\"}},{\"$ref\":2}],\"lookup\":{\"$Map\":[[\"a\",{\"$\":\"Baz\",\"n\":0}]]}"
        "}",
    };
    size_t i;
    for (i = 0; i < sizeof docs / sizeof *docs; i++) {
        const uint8_t *pb, *json;
        size_t pb_len, json_len, n = strlen(docs[i]);
        dk_err err;
        uint8_t *pbc;
        dk_code rc = t_transcode(1, (const uint8_t *)docs[i], n, &pb, &pb_len, &err);
        CHECK(rc == DK_OK, "JSON -> pb %s: code %d %s at %zu", docs[i], rc, err.msg, err.pos);
        if (rc != DK_OK) continue;
        pbc = dup(pb, pb_len);
        rc = t_transcode(0, pbc, pb_len, &json, &json_len, &err);
        CHECK(rc == DK_OK && json_len == n && memcmp(json, docs[i], n) == 0,
              "JSON -> pb -> JSON differs for %s: got %.*s", docs[i], (int)json_len,
              (const char *)json);
        json_identity(docs[i], pbc, pb_len);
        free(pbc);
    }
    {
        /* errors keep the first step's offsets */
        const uint8_t *out;
        size_t out_len;
        dk_err err;
        dk_code rc = t_transcode(1, (const uint8_t *)"[1,]", 4, &out, &out_len, &err);
        CHECK(rc == DK_ERR_SYNTAX && err.pos == 3 && out_len == 0,
              "JSON syntax error offset: %d at %zu", rc, err.pos);
        rc = t_transcode(0, (const uint8_t *)"\x08\x01\x2a\x80", 4, &out, &out_len, &err);
        CHECK(rc == DK_ERR_SYNTAX && err.pos == 3, "pb syntax error offset: %d at %zu", rc,
              err.pos);
    }
}

/* The context is reused: a failed call leaves nothing behind, and similar
 * calls do not keep allocating. */
static void test_reuse(void)
{
    dk_buf t = {0};
    int i, ok = 1;
    const uint8_t *pb, *out;
    size_t pb_len, out_len;
    dk_err err;
    uint8_t *good;
    sample(&t, 20, NULL);
    if (t_encode(t.data, t.len, 0, &pb, &pb_len, &err) != DK_OK) return;
    good = dup(pb, pb_len);
    for (i = 0; i < 2000; i++) {
        dk_code rc = t_decode(good, i % 2 ? pb_len : pb_len / 2, 0, 0, &out, &out_len, &err);
        if ((i % 2) != (rc == DK_OK)) ok = 0;
        if (i % 2 && (out_len != t.len || memcmp(out, t.data, t.len) != 0)) ok = 0;
    }
    CHECK(ok, "2000 alternating good/bad decodes on one context");
    free(good);
    dk_buf_free(&t);
}

/* Dates are time values, as in the JSON format: the fuzzer found the
 * protobuf encoder taking a date the JSON writer refuses (pb_write). */
static void test_dates(void)
{
    static const double bad[] = {1e304, 8.64e15 + 1, -8.64e15 - 1, 0.5, (double)INFINITY};
    const uint8_t *out;
    size_t out_len, i;
    dk_err err;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dk_buf t = {0};
        tb_op(&t, DK_T_DATE);
        tb_f64(&t, bad[i]);
        CHECK(t_encode(t.data, t.len, 0, &out, &out_len, &err) == DK_ERR_TAPE && err.pos == 0,
              "date %g: encoder refuses it", bad[i]);
        dk_buf_free(&t);
    }
    /* the decoder's side: test_bad_documents ("date out of range") */

    {
        /* -0 and any NaN payload come out canonical: 0 and the JSON reader's NaN */
        dk_buf t = {0}, want = {0};
        const uint8_t *pb;
        size_t pb_len;
        double nan = (double)NAN;
        uint64_t bits;
        memcpy(&bits, &nan, 8);
        v_hdr(&t, DK_T_ARRAY, 2);
        tb_op(&t, DK_T_DATE);
        tb_f64(&t, -0.0);
        tb_op(&t, DK_T_DATE);
        tb_bits(&t, bits ^ 1);
        v_hdr(&want, DK_T_ARRAY, 2);
        tb_op(&want, DK_T_DATE);
        tb_f64(&want, 0.0);
        tb_op(&want, DK_T_DATE);
        tb_bits(&want, bits);
        uint8_t *copy;
        CHECK(t_encode(t.data, t.len, 0, &pb, &pb_len, &err) == DK_OK, "canonical dates encode");
        copy = dup(pb, pb_len);
        CHECK(t_decode(copy, pb_len, 0, 0, &out, &out_len, &err) == DK_OK && out_len == want.len &&
                  memcmp(out, want.data, want.len) == 0,
              "-0 and NaN dates decode canonical");
        free(copy);
        dk_buf_free(&t);
        dk_buf_free(&want);
    }
}

/*
 * The encoder compares each member key with the one its class's last shape
 * has in that place, and each class key with the last few it met (pb_same,
 * 8 bytes at a time): keys of one length that differ in their first 8
 * bytes, in their last ones, or in the middle must stay apart.
 */
static void test_key_compare(void)
{
    static const char *const keys[][2] = {
        {"abcdefgh_1", "zbcdefgh_1"}, /* differ in the first word */
        {"abcdefgh_1", "abcdefgh_2"}, /* in the tail */
        {"abcdefghijklmnop", "abcdefghijklmnoq"},
        {"abcdefghijklmnop", "abcdefgzijklmnop"},
        {"k", "j"},
        /* 2 to 7 bytes, compared by overlapping loads (pb_same): a
         * difference in the middle, at either end */
        {"ab", "aX"},
        {"abc", "aXc"},
        {"name", "nXme"},
        {"label", "laXel"},
        {"counts", "couXts"},
        {"abcdefg", "abcdefX"},
        {"abcdefg", "Xbcdefg"},
        {"abcdefgh", "abcdXfgh"},
    };
    size_t i;
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        dk_buf t = {0};
        size_t n = strlen(keys[i][0]);
        v_hdr(&t, DK_T_ARRAY, 4);
        /* two instances of one class, the key differing */
        v_inst(&t, S("Klass"), 1, 1);
        tb_str(&t, keys[i][0], n);
        v_int(&t, 1);
        v_inst(&t, S("Klass"), 1, 1);
        tb_str(&t, keys[i][1], n);
        v_int(&t, 2);
        /* and two classes whose keys differ the same way */
        v_inst(&t, keys[i][0], n, 1, 0);
        v_inst(&t, keys[i][1], n, 1, 0);
        roundtrip(keys[i][1], &t);
        dk_buf_free(&t);
    }
}

/* ---- regression fixtures: inputs the fuzzer crashed on (test/fuzz/fuzz_pb_read.c) */

/* The fuzz target's invariants on one input: 1 when they hold. */
static int fuzz_invariants(const uint8_t *data, size_t size)
{
    const uint8_t *out, *out2;
    size_t out_len, out2_len;
    dk_err err;
    uint8_t *copy;
    int ok = 1;

    if (size > 0 && (data[0] & 1)) { /* as a tape */
        if (t_encode(data + 1, size - 1, 64, &out, &out_len, &err) == DK_OK) {
            dk_code rc;
            copy = dup(out, out_len);
            rc = t_decode(copy, out_len, 64, 0, &out2, &out2_len, &err);
            if (rc != DK_OK && rc != DK_ERR_TOO_LONG && rc != DK_ERR_TOO_LARGE) ok = 0;
            if (rc == DK_OK) {
                uint8_t *tape = dup(out2, out2_len);
                if (t_encode(tape, out2_len, 64, &out, &out2_len, &err) != DK_OK ||
                    out2_len != out_len || memcmp(out, copy, out_len) != 0)
                    ok = 0;
                free(tape);
            }
            free(copy);
        } else if (err.msg == NULL || err.pos > size - 1) {
            ok = 0;
        }
    }
    if (t_decode(data, size, 64, 1u << 20, &out, &out_len, &err) != DK_OK)
        return ok && err.msg != NULL && err.pos <= size && out_len == 0 &&
               strstr(err.msg, "protobuf-c") == NULL;
    copy = dup(out, out_len);
    if (t_encode(copy, out_len, 64, &out2, &out2_len, &err) != DK_OK) ok = 0;
    free(copy);
    return ok;
}

/* Each was a crash or a broken invariant; each now gives a clean outcome. */
static void test_fuzz_fixtures(void)
{
    static const struct {
        const char *name;
        const char *hex;
        int code; /* expected outcome of the protobuf decode, -1: any clean one */
    } fx[] = {
        /* Documents of the first draft of the schema (a Node message per
         * value), found by the fuzzer; arbitrary bytes for this one, still
         * worth a clean outcome. Their causes have tests of their own:
         * "empty packed field" (protobuf-c's NULL + 0), "empty object".
         * "root-twice" was protobuf-c failing to merge a singular message
         * given twice; the schema has no singular message field now. */
        {"empty-object-keys-null",
         "08011203461a03410090806ee6f576422a0bd5f60a032a01611202403c2208220608011202181232024000",
         -1},
        {"empty-packed",
         "080112051a22082a06080112003202400008011203466f6f120107220710011a80001a001a80808080001a808"
         "080002a0b32090a032a016112024006",
         -1},
        {"root-twice", "08013202080132023200080132003200", -1},
        /* a sparse array over the default max_length encodes, does not decode */
        {"tape-array-over-default-max-length", "0109030000800a010000800a010000001400000000", -1},
        /* our bug: an ERROR op with fewer than 2 pairs was encoded */
        {"tape-error-without-fields", "0109030000000501000000050100f9ff1300000000", -1},
        {"tape-huge-sparse-array", "0109fd0201010afd020101", -1},
        /* fuzz_pb_write: an array of 2^30 + 3 slots encodes but cannot
         * decode (no max_length above 2^30 - 1); the target allows it */
        {"tape-sparse-array-over-2^30", "0109030000400a010000400a01000000053f000040", -1},
    };
    size_t i;
    for (i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        uint8_t buf[128];
        size_t n = strlen(fx[i].hex) / 2, k;
        const uint8_t *out;
        size_t out_len;
        dk_err err;
        for (k = 0; k < n; k++) {
            unsigned v;
            sscanf(fx[i].hex + 2 * k, "%2x", &v);
            buf[k] = (uint8_t)v;
        }
        CHECK(fuzz_invariants(buf, n), "fixture %s: fuzz invariants", fx[i].name);
        if (fx[i].code >= 0) {
            dk_code rc = t_decode(buf, n, 0, 0, &out, &out_len, &err);
            CHECK((int)rc == fx[i].code, "fixture %s: code %d (%s), want %d", fx[i].name, rc,
                  err.msg ? err.msg : "", fx[i].code);
        }
    }
}

/*
 * The text check and UTF-16 widening of the decoder (pb_text_scan, 16
 * bytes at a time where a block is ASCII and 2-byte sequences) against a
 * plain reference of the rules: WTF-8 (UTF-8, also lone surrogates as ED
 * A0..BF xx; no overlongs, nothing past U+10FFFF, no high surrogate right
 * before a low one), and each code point as its UTF-16 units.
 * Returns 1 when valid, with the units at u (*nu of them).
 */
static int ref_wtf8(const uint8_t *p, size_t n, uint16_t *u, size_t *nu)
{
    size_t i = 0, k = 0, high_end = (size_t)-1;
    while (i < n) {
        uint32_t b = p[i], c, len, min;
        if (b < 0x80) {
            u[k++] = (uint16_t)b;
            i++;
            continue;
        }
        if (b >= 0xC2 && b <= 0xDF) {
            len = 2;
            c = b & 0x1F;
            min = 0x80;
        } else if (b >= 0xE0 && b <= 0xEF) {
            len = 3;
            c = b & 0x0F;
            min = 0x800;
        } else if (b >= 0xF0 && b <= 0xF4) {
            len = 4;
            c = b & 0x07;
            min = 0x10000;
        } else
            return 0;
        if (n - i < len) return 0;
        for (uint32_t j = 1; j < len; j++) {
            if ((p[i + j] & 0xC0) != 0x80) return 0;
            c = c << 6 | (p[i + j] & 0x3Fu);
        }
        if (c < min || c > 0x10FFFF) return 0;
        if (c >= 0xDC00 && c <= 0xDFFF && high_end == i) return 0;
        if (c >= 0xD800 && c <= 0xDBFF) high_end = i + 3;
        if (c >= 0x10000) {
            u[k++] = (uint16_t)(0xD800 + ((c - 0x10000) >> 10));
            u[k++] = (uint16_t)(0xDC00 + ((c - 0x10000) & 0x3FF));
        } else {
            u[k++] = (uint16_t)c;
        }
        i += len;
    }
    *nu = k;
    return 1;
}

/* One text as a document's only value: the decode's outcome and side table
 * against ref_wtf8. */
static void check_text(const uint8_t *t, size_t n, const char *what)
{
    Darmok__Document doc;
    Darmok__Kind kind = DARMOK__KIND__KIND_STRING;
    ProtobufCBinaryData text = {n, (uint8_t *)(uintptr_t)t};
    uint16_t want[128];
    size_t nu = 0, len;
    int valid = ref_wtf8(t, n, want, &nu), ascii = 1, rc;
    uint8_t *p;
    dk_buf tape, u16;
    dk_err err;

    for (size_t i = 0; i < n; i++) ascii &= t[i] < 0x80;
    darmok__document__init(&doc);
    doc.format = 1;
    doc.n_kinds = 1;
    doc.kinds = &kind;
    doc.n_texts = 1;
    doc.texts = &text;
    p = pack_doc(&doc, &len);
    dk_buf_init(&tape);
    dk_buf_init(&u16);
    dk_arena_reset(&dec_side.arena);
    rc = dk_pb_read_ex(p, len, NULL, 0, 0, &dec_side.arena, &tape, &u16, NULL, &err);
    CHECK(rc == (valid ? DK_OK : DK_ERR_FORMAT), "%s: code %d, reference says %s", what, rc,
          valid ? "valid" : "not WTF-8");
    if (rc == DK_OK && valid) {
        if (ascii) {
            CHECK(u16.len == 0, "%s: ASCII text with a side-table entry", what);
        } else {
            CHECK(u16.len == 8 + 2 * nu && dk_rd32(u16.data + 4) == nu &&
                      memcmp(u16.data + 8, want, 2 * nu) == 0, /* LE host */
                  "%s: side table %zu bytes, want %zu units", what, u16.len, nu);
        }
    }
    dk_buf_free(&tape);
    dk_buf_free(&u16);
    free(p);
}

static uint32_t text_rng = 0x2468ace1u;
static uint32_t text_rnd(void)
{
    return xorshift32(&text_rng);
}

static void test_texts(void)
{
    static const uint8_t specials[] = {0x00, 0x41, 0x7F, 0x80, 0xA9, 0xBF, 0xC0, 0xC1, 0xC2,
                                       0xC3, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
    static const char *toks[] = {"a",
                                 "b ",
                                 "\xc3\xa9",
                                 "\xc3\xbc",
                                 "\xdf\xbf",
                                 "\xc2\x80",
                                 "\xe6\x9d\xb1",
                                 "\xed\xa0\x80",
                                 "\xed\xb0\x80",
                                 "\xf0\x9f\x98\x80",
                                 "\x80",
                                 "\xc3",
                                 "\xc0\x80",
                                 "\xc1\xbf",
                                 "\xe0\x80\x80",
                                 "\xf5\x80\x80\x80",
                                 "\xbf"};
    uint8_t t[96];
    /* a Latin text of 2-byte sequences at every phase, one byte changed
       at every offset to each special byte */
    for (size_t phase = 0; phase < 4; phase++) {
        size_t n = 0;
        while (n < 44) {
            if ((n + phase) % 4 == 0) {
                t[n] = 0xC3;
                t[n + 1] = 0xA9;
                n += 2;
            } else {
                t[n] = (uint8_t)('a' + n % 26);
                n++;
            }
        }
        check_text(t, n, "Latin text");
        for (size_t at = 0; at < n; at++) {
            for (size_t k = 0; k < sizeof specials; k++) {
                uint8_t keep = t[at];
                t[at] = specials[k];
                check_text(t, n, "Latin text, one byte changed");
                t[at] = keep;
            }
        }
    }
    /* ASCII, of every length around DK_U16_SRC_ASCII_MIN: no entry (JS makes
       long ones from the tape bytes, one-byte strings) */
    for (size_t n = 0; n <= 70; n++) {
        for (size_t i = 0; i < n; i++) t[i] = (uint8_t)(' ' + (i * 7 + n) % 95);
        check_text(t, n, "ASCII text");
    }
    /* random runs of valid and invalid pieces */
    for (int r = 0; r < 40000; r++) {
        size_t n = 0, want = text_rnd() % 64;
        while (n < want) {
            uint32_t x = text_rnd() % 40;
            const char *tok = x < 16 ? toks[x % 2] : x < 30 ? toks[2 + x % 4] : toks[6 + x % 11];
            size_t tl = strlen(tok);
            if (n + tl > sizeof t) break;
            memcpy(t + n, tok, tl);
            n += tl;
        }
        check_text(t, n, "random pieces");
    }
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--sample") == 0) {
        dk_buf t = {0};
        char jpath[4096];
        FILE *j, *f;
        const uint8_t *pb;
        size_t pb_len;
        dk_err err;
        int count = argc >= 4 ? atoi(argv[3]) : 1;
        snprintf(jpath, sizeof jpath, "%s.json", argv[2]);
        j = fopen(jpath, "wb");
        sample(&t, count, j);
        fclose(j);
        if (t_encode(t.data, t.len, 0, &pb, &pb_len, &err) != DK_OK) return 1;
        f = fopen(argv[2], "wb");
        fwrite(pb, 1, pb_len, f);
        fclose(f);
        printf("tape %zu bytes, protobuf %zu bytes\n", t.len, pb_len);
        dk_buf_free(&t);
    } else if (argc >= 3 && strcmp(argv[1], "--decode") == 0) {
        uint8_t *p;
        size_t n, out_len;
        const uint8_t *out;
        dk_err err;
        dk_code rc;
        if (read_file(argv[2], &p, &n) != 0) return 2;
        rc = t_decode(p, n, 0, 0, &out, &out_len, &err);
        if (rc != DK_OK)
            printf("error %d: %s at byte %zu\n", rc, err.msg, err.pos);
        else
            print_tape(out, out_len);
        free(p);
        test_failed = rc != DK_OK;
    } else {
        test_scalars();
        test_containers();
        test_depth();
        test_reuse();
        test_json_transcode();
        test_fuzz_fixtures();
        test_dates();
        test_texts();
        test_key_compare();
        test_report("c-proto");
    }
    sides_free();
    return test_failed != 0;
}

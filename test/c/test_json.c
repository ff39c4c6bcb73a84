/*
 * test_json.c - native tests of the JSON writer and reader, built and run
 * by `make test-c` (also with SIMD, as wasm32 and as -m32: Makefile).
 *
 * One file for both directions: their case tables are the format's
 * spelling of each value, and the tests past them (limits, reuse,
 * mutations, copies) check a reader and a writer on the same text.
 * Tapes are written in a small notation (see tape()) so the tables read
 * like the format. Prints "c-json: N passed, M failed"; exits 1 on failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "darmok.h"
#include "test_rng.h"
#include "test_util.h"

/* Reads a double: "nan", "inf", "-inf" or a strtod number. */
static double num(const char **s)
{
    char *end;
    double d;

    if (!strncmp(*s, "nan", 3)) return *s += 3, (double)NAN;
    if (!strncmp(*s, "inf", 3)) return *s += 3, (double)INFINITY;
    if (!strncmp(*s, "-inf", 4)) return *s += 4, -(double)INFINITY;
    d = strtod(*s, &end);
    *s = end;
    return d;
}

/* Reads a decimal integer (negative ones wrap, as i-1 needs). */
static uint32_t u32(const char **s)
{
    char *end;
    long long v = strtoll(*s, &end, 10);
    *s = end;
    return (uint32_t)v;
}

/* Reads 'text' (escapes \xHH \\ \') and appends it as a str. */
static void str(dk_buf *b, const char **s)
{
    uint8_t bytes[4096];
    size_t n = 0;
    const char *p = *s + 1;

    while (*p != '\'') {
        if (*p == '\\' && p[1] == 'x') {
            bytes[n++] = (uint8_t)strtoul((char[]){p[2], p[3], 0}, NULL, 16);
            p += 4;
        } else {
            if (*p == '\\') p++;
            bytes[n++] = (uint8_t)*p++;
        }
    }
    tb_strn(b, bytes, n);
    *s = p + 1;
}

/*
 * Builds a tape from space-separated tokens:
 *   u n f t        UNDEF NULL FALSE TRUE
 *   i5 d0.5 dnan   INT, F64 ("d-0", "dinf", "d-inf" too)
 *   s'x' B'12'     STR, BIGINT; a bare 'x' is a str (key, class key)
 *   A3 H2 O1 P1 M1 S1 E2 @0   op + u32 (ARRAY HOLE OBJECT NULLPROTO MAP
 *                  SET ERROR REF)
 *   D0 Dnan        DATE + f64
 *   I R            INSTANCE, REGEXP (payload follows as tokens)
 *   Y4             BYTES + kind byte (then #len and xHEX)
 *   #7 x0a0b %9    raw u32, raw bytes, raw byte
 */
static dk_buf tape(const char *s)
{
    dk_buf b = {0};

    for (;;) {
        while (*s == ' ') s++;
        if (!*s) break;
        switch (*s++) {
        case 'u': tb_op(&b, DK_T_UNDEF); break;
        case 'n': tb_op(&b, DK_T_NULL); break;
        case 'f': tb_op(&b, DK_T_FALSE); break;
        case 't': tb_op(&b, DK_T_TRUE); break;
        case 'i':
            tb_op(&b, DK_T_INT);
            tb_u32(&b, u32(&s));
            break;
        case 'd':
            tb_op(&b, DK_T_F64);
            tb_f64(&b, num(&s));
            break;
        case 's':
            tb_op(&b, DK_T_STR);
            str(&b, &s);
            break;
        case 'B':
            tb_op(&b, DK_T_BIGINT);
            str(&b, &s);
            break;
        case '\'':
            s--;
            str(&b, &s);
            break;
        case 'A':
            tb_op(&b, DK_T_ARRAY);
            tb_u32(&b, u32(&s));
            break;
        case 'H':
            tb_op(&b, DK_T_HOLE);
            tb_u32(&b, u32(&s));
            break;
        case 'O':
            tb_op(&b, DK_T_OBJECT);
            tb_u32(&b, u32(&s));
            break;
        case 'P':
            tb_op(&b, DK_T_NULLPROTO);
            tb_u32(&b, u32(&s));
            break;
        case 'M':
            tb_op(&b, DK_T_MAP);
            tb_u32(&b, u32(&s));
            break;
        case 'S':
            tb_op(&b, DK_T_SET);
            tb_u32(&b, u32(&s));
            break;
        case 'E':
            tb_op(&b, DK_T_ERROR);
            tb_u32(&b, u32(&s));
            break;
        case '@':
            tb_op(&b, DK_T_REF);
            tb_u32(&b, u32(&s));
            break;
        case 'D':
            tb_op(&b, DK_T_DATE);
            tb_f64(&b, num(&s));
            break;
        case 'I': tb_op(&b, DK_T_INSTANCE); break;
        case 'R': tb_op(&b, DK_T_REGEXP); break;
        case 'Y':
            tb_op(&b, DK_T_BYTES);
            tb_op(&b, (int)(u32(&s) & 0xFF));
            break;
        case '#': tb_u32(&b, u32(&s)); break;
        case '%': tb_op(&b, (int)(u32(&s) & 0xFF)); break;
        case 'x':
            while (*s && *s != ' ') {
                tb_op(&b, (int)strtoul((char[]){s[0], s[1], 0}, NULL, 16));
                s += 2;
            }
            break;
        default: fprintf(stderr, "bad tape token at %s\n", s - 1); abort();
        }
    }
    return b;
}

/* Prints bytes as hex for failure messages (static buffer). */
static const char *hex(const uint8_t *p, size_t n)
{
    static char out[2][4096];
    static int which;
    char *o = out[which ^= 1];
    size_t k = 0;

    for (size_t i = 0; i < n && k + 4 < sizeof out[0]; i++)
        k += (size_t)snprintf(o + k, sizeof out[0] - k, "%02x", p[i]);
    o[k] = 0;
    return o;
}

/* ---- the calls under test ---------------------------------------------- */

/* Writes JSON from a tape; out is NUL-terminated for comparison. */
static int write_json(const dk_buf *t, const dk_limits *lim, dk_buf *out, dk_err *err)
{
    int rc = dk_json_write(t->data, t->len, lim, out, err);
    tb_raw(out, "", 1);
    out->len--;
    return rc;
}

/* Reads JSON text into a tape. */
static int read_json(const char *json, size_t len, const dk_limits *lim, dk_buf *out, dk_err *err)
{
    return dk_json_read((const uint8_t *)json, len, lim, out, err);
}

/* ---- writer ------------------------------------------------------------ */

typedef struct wcase {
    const char *tape;
    const char *json;
    int canonical; /* reading json gives this very tape back */
} wcase;

static const wcase writer_cases[] = {
    {"n", "null", 1},
    {"t", "true", 1},
    {"f", "false", 1},
    {"u", "{\"$undefined\":0}", 1},
    {"i0", "0", 1},
    {"i-1", "-1", 1},
    {"i2147483647", "2147483647", 1},
    {"i-2147483648", "-2147483648", 1},
    /* numbers: Number.prototype.toString */
    {"d0", "0", 0},
    {"d1", "1", 0},
    {"d-1", "-1", 0},
    {"d100", "100", 0},
    {"d0.1", "0.1", 1},
    {"d-1.5", "-1.5", 1},
    {"d1e21", "1e+21", 1},
    {"d1e-7", "1e-7", 1},
    {"d1.5e-7", "1.5e-7", 1},
    {"d0.000001", "0.000001", 1},
    {"d123456789012345680000", "123456789012345680000", 1},
    {"d5e-324", "5e-324", 1},
    {"d1.7976931348623157e308", "1.7976931348623157e+308", 1},
    {"d9007199254740992", "9007199254740992", 1},
    {"d1e300", "1e+300", 1},
    {"d2147483648", "2147483648", 1},
    {"d-2147483649", "-2147483649", 1},
    {"d0.3", "0.3", 1},
    {"d0.30000000000000004", "0.30000000000000004", 1},
    {"d1e20", "100000000000000000000", 1},
    {"d1.2345e-5", "0.000012345", 1},
    {"d-1e-7", "-1e-7", 1},
    {"d2.2250738585072014e-308", "2.2250738585072014e-308", 1},
    {"d7.120236347223045e-307", "7.120236347223045e-307", 1},
    {"d3.14159", "3.14159", 1},
    {"d-0", "{\"$Number\":\"-0\"}", 1},
    {"dnan", "{\"$Number\":\"NaN\"}", 1},
    {"dinf", "{\"$Number\":\"Infinity\"}", 1},
    {"d-inf", "{\"$Number\":\"-Infinity\"}", 1},
    /* strings: JSON.stringify escaping */
    {"s''", "\"\"", 1},
    {"s'abc'", "\"abc\"", 1},
    {"s'a\"b\\\\c/'", "\"a\\\"b\\\\c/\"", 1},
    {"s'\\x08\\x0c\\x0a\\x0d\\x09'", "\"\\b\\f\\n\\r\\t\"", 1},
    {"s'\\x00\\x01\\x1f\\x7f'", "\"\\u0000\\u0001\\u001f\x7f\"", 1},
    {"s'\\xc3\\xa9\\xe2\\x80\\xa8\\xe2\\x80\\xa9\\xf0\\x9f\\x98\\x80'",
     "\"\xc3\xa9\xe2\x80\xa8\xe2\x80\xa9\xf0\x9f\x98\x80\"", 1},
    {"s'a\\xed\\xa0\\x80b'", "\"a\\ud800b\"", 1},
    {"s'\\xed\\xbf\\xbf'", "\"\\udfff\"", 1},
    {"s'\\xed\\x9f\\xbf'", "\"\xed\x9f\xbf\"", 1},
    {"B'0'", "{\"$BigInt\":\"0\"}", 1},
    {"B'-123456789012345678901234567890'", "{\"$BigInt\":\"-123456789012345678901234567890\"}", 1},
    /* containers */
    {"A0", "[]", 1},
    {"O0", "{}", 1},
    {"A3 i1 s'x' n", "[1,\"x\",null]", 1},
    {"O2 'a' i1 'b' A1 O0", "{\"a\":1,\"b\":[{}]}", 1},
    {"A5 i1 H3 i2", "[1,{\"$hole\":3},2]", 1},
    {"A2 H1 H1", "[{\"$hole\":1},{\"$hole\":1}]", 1},
    {"A4 H4", "[{\"$hole\":4}]", 1},
    {"O2 '$id' i1 '$x' i2", "{\"$$id\":1,\"$x\":2}", 1},
    {"O1 '$' i1", "{\"$$\":1}", 1},
    {"O1 '' i1", "{\"\":1}", 1},
    /* tanagra's key, escaped wherever an object has it (dk_json_write.c) */
    {"O2 '_serializationKey' s'x' 'o' O1 '_serializationKey' s'_serializationKey'",
     "{\"\\u005fserializationKey\":\"x\",\"o\":{\"\\u005fserializationKey\":\"_serializationKey\"}"
     "}",
     1},
    {"O1 '_serializationKeys' i1", "{\"_serializationKeys\":1}", 1},
    {"P2 'a' i1 '$b' i2", "{\"$NullProto\":{\"a\":1,\"$$b\":2}}", 1},
    {"P0", "{\"$NullProto\":{}}", 1},
    {"I 'Foo' #1 #2 'name' s'x' 'count' i0", "{\"$\":\"Foo\",\"name\":\"x\",\"count\":0}", 1},
    {"I 'Foo' #3 #1 '$v' i1", "{\"$\":\"Foo\",\"$v\":3,\"$$v\":1}", 1},
    {"I 'Foo' #1 #0", "{\"$\":\"Foo\"}", 1},
    {"M2 s'a' i1 O0 A0", "{\"$Map\":[[\"a\",1],[{},[]]]}", 1},
    {"M0", "{\"$Map\":[]}", 1},
    {"S3 i1 s'a' u", "{\"$Set\":[1,\"a\",{\"$undefined\":0}]}", 1},
    {"S0", "{\"$Set\":[]}", 1},
    {"D0", "{\"$Date\":\"1970-01-01T00:00:00.000Z\"}", 1},
    {"D1577934245006", "{\"$Date\":\"2020-01-02T03:04:05.006Z\"}", 1},
    {"D-1", "{\"$Date\":\"1969-12-31T23:59:59.999Z\"}", 1},
    {"D8.64e15", "{\"$Date\":\"+275760-09-13T00:00:00.000Z\"}", 1},
    {"D-8.64e15", "{\"$Date\":\"-271821-04-20T00:00:00.000Z\"}", 1},
    {"D-62198755200000", "{\"$Date\":\"-000001-01-01T00:00:00.000Z\"}", 1},
    {"D253402300800000", "{\"$Date\":\"+010000-01-01T00:00:00.000Z\"}", 1},
    {"D-62167219200000", "{\"$Date\":\"0000-01-01T00:00:00.000Z\"}", 1},
    {"Dnan", "{\"$Date\":null}", 1},
    {"R 'a+b' 'gi'", "{\"$RegExp\":[\"a+b\",\"gi\"]}", 1},
    {"R '\\x5c/' ''", "{\"$RegExp\":[\"\\\\/\",\"\"]}", 1},
    {"Y4 #3 x000102", "{\"$Uint8Array\":\"AAEC\"}", 1},
    {"Y0 #0", "{\"$Buffer\":\"\"}", 1},
    {"Y1 #1 xff", "{\"$ArrayBuffer\":\"/w==\"}", 1},
    {"Y7 #2 xfbff", "{\"$Uint16Array\":\"+/8=\"}", 1},
    {"Y11 #8 x000000000000f03f", "{\"$Float64Array\":\"AAAAAAAA8D8=\"}", 1},
    {"Y13 #0", "{\"$BigUint64Array\":\"\"}", 1},
    {"E3 'name' s'TypeError' 'message' s'm' '$x' i1",
     "{\"$Error\":{\"name\":\"TypeError\",\"message\":\"m\",\"$$x\":1}}", 1},
    {"A2 O0 @1", "[{},{\"$ref\":1}]", 1},
    {"A1 @0", "[{\"$ref\":0}]", 1},
    {"O1 'self' @0", "{\"self\":{\"$ref\":0}}", 1},
    {"A3 D0 R '' '' @1",
     "[{\"$Date\":\"1970-01-01T00:00:00.000Z\"},{\"$RegExp\":[\"\",\"\"]},"
     "{\"$ref\":1}]",
     1},
    {"M1 O0 @1", "{\"$Map\":[[{},{\"$ref\":1}]]}", 1},
    /* the example of docs/FORMAT.md */
    {"I 'Foo' #1 #3 'name' s'foo' 'bars' A2 I 'Bar' #1 #1 'when' "
     "D1577836800000 @2 'lookup' M1 s'a' I 'Baz' #1 #1 'n' i0",
     "{\"$\":\"Foo\",\"name\":\"foo\",\"bars\":[{\"$\":\"Bar\",\"when\":"
     "{\"$Date\":\"2020-01-01T00:00:00.000Z\"}},{\"$ref\":2}],\"lookup\":"
     "{\"$Map\":[[\"a\",{\"$\":\"Baz\",\"n\":0}]]}}",
     1},
};

typedef struct wbad {
    const char *tape;
    int code;
    size_t pos;
} wbad;

static const wbad writer_bad[] = {
    {"", DK_ERR_TAPE, 0},
    {"%0", DK_ERR_TAPE, 0},
    {"%22", DK_ERR_TAPE, 0}, /* the first op past DK_T_STR16 */
    {"%5 x0000", DK_ERR_TAPE, 1},
    {"n n", DK_ERR_TAPE, 1},
    {"H1", DK_ERR_TAPE, 0},
    {"A1", DK_ERR_TAPE, 5},
    {"A2 i1", DK_ERR_TAPE, 10},
    {"A2 H3", DK_ERR_TAPE, 5},
    {"A2 H0 i1", DK_ERR_TAPE, 5},
    {"A1 i1 i2", DK_ERR_TAPE, 10},
    {"O1 'a'", DK_ERR_TAPE, 10},
    {"O1 #5", DK_ERR_TAPE, 9},
    {"A4294967295 n", DK_ERR_TAPE, 6},
    {"s'\\x80'", DK_ERR_TAPE, 5},
    {"s'\\xc3'", DK_ERR_TAPE, 5},
    {"s'\\xc0\\x80'", DK_ERR_TAPE, 5},
    {"s'\\xf4\\x90\\x80\\x80'", DK_ERR_TAPE, 5},
    /* fuzz (json_write): a pair as two 3-byte sequences is not WTF-8 */
    {"s'\\xed\\xa0\\x80\\xed\\xb0\\x80'", DK_ERR_TAPE, 5},
    {"s'ab\\xed\\xaf\\xbf\\xed\\xbf\\xbf'", DK_ERR_TAPE, 7},
    {"B'-0'", DK_ERR_TAPE, 5},
    {"B'01'", DK_ERR_TAPE, 5},
    {"B''", DK_ERR_TAPE, 5},
    {"@0", DK_ERR_TAPE, 0},
    {"A1 @1", DK_ERR_TAPE, 5},
    {"I 'Foo' #0 #0", DK_ERR_TAPE, 0},
    {"E1 'name' s'x'", DK_ERR_TAPE, 0},
    {"E2 'message' s'x' 'name' s'y'", DK_ERR_TAPE, 9},
    {"D0.5", DK_ERR_TAPE, 0},
    {"D9e15", DK_ERR_TAPE, 0},
    {"Dinf", DK_ERR_TAPE, 0},
    {"Y14 #0", DK_ERR_TAPE, 0},
    {"Y6 #3 x000000", DK_ERR_TAPE, 0},
    {"Y4 #4 x000000", DK_ERR_TAPE, 6},
    {"M1 i1", DK_ERR_TAPE, 10},
    {"A1 A1 A1 A0", DK_ERR_DEPTH, 15},
};

/* Writer tables: exact JSON, round trip to the same tape, exact errors. */
static void test_writer(void)
{
    dk_buf out = {0}, back = {0};
    dk_err err;
    dk_limits depth3 = {3, 0, 0};

    for (size_t i = 0; i < sizeof writer_cases / sizeof *writer_cases; i++) {
        const wcase *c = &writer_cases[i];
        dk_buf t = tape(c->tape);
        int rc = write_json(&t, NULL, &out, &err);

        CHECK(rc == DK_OK && !strcmp((char *)out.data, c->json),
              "write %s: rc %d (%s at %zu) got %s want %s", c->tape, rc, err.msg, err.pos,
              (char *)out.data, c->json);
        CHECK(err.code == DK_OK && err.msg == NULL && err.pos == 0, "write %s: err not zeroed",
              c->tape);
        if (c->canonical && rc == DK_OK) {
            rc = read_json((char *)out.data, out.len, NULL, &back, &err);
            CHECK(rc == DK_OK && back.len == t.len && !memcmp(back.data, t.data, t.len),
                  "round trip %s: rc %d (%s at %zu) got %s want %s", c->tape, rc, err.msg, err.pos,
                  hex(back.data, back.len), hex(t.data, t.len));
        }
        free(t.data);
    }
    for (size_t i = 0; i < sizeof writer_bad / sizeof *writer_bad; i++) {
        const wbad *c = &writer_bad[i];
        dk_buf t = tape(c->tape);
        int rc = write_json(&t, &depth3, &out, &err);

        CHECK(rc == c->code && (int)err.code == c->code && err.pos == c->pos && err.msg != NULL &&
                  out.len == 0,
              "write bad %s: rc %d at %zu (%s), want %d at %zu", c->tape, rc, err.pos, err.msg,
              c->code, c->pos);
        free(t.data);
    }
    dk_buf_free(&out);
    dk_buf_free(&back);
}

/* Every truncation of every writer case's tape fails as DK_ERR_TAPE. */
static void test_writer_prefixes(void)
{
    dk_buf out = {0};
    dk_err err;

    for (size_t i = 0; i < sizeof writer_cases / sizeof *writer_cases; i++) {
        dk_buf t = tape(writer_cases[i].tape);
        int bad = 0;

        for (size_t n = 0; n < t.len; n++) {
            uint8_t *copy = malloc(n + 1); /* exact size: ASan sees overreads */
            memcpy(copy, t.data, n);
            if (dk_json_write(copy, n, NULL, &out, &err) != DK_ERR_TAPE) bad++;
            free(copy);
        }
        CHECK(!bad, "writer prefixes of %s: %d did not fail cleanly", writer_cases[i].tape, bad);
        free(t.data);
    }
    dk_buf_free(&out);
}

/* ---- reader ------------------------------------------------------------ */

typedef struct rcase {
    const char *json;
    const char *tape;
    int canonical; /* writing the tape gives this very text back */
} rcase;

static const rcase reader_cases[] = {
    {"null", "n", 1},
    {" \t\r\n true \n", "t", 0},
    {"false", "f", 1},
    {"0", "i0", 1},
    {"-0", "d-0", 0},
    {"-1", "i-1", 1},
    {"2147483647", "i2147483647", 1},
    {"2147483648", "d2147483648", 1},
    {"-2147483648", "i-2147483648", 1},
    {"-2147483649", "d-2147483649", 1},
    {"12345678901", "d12345678901", 1},
    {"1.0", "d1", 0},
    {"1e2", "d100", 0},
    {"1E+2", "d100", 0},
    {"0.1", "d0.1", 1},
    {"-0.0", "d-0", 0},
    {"1e400", "dinf", 0},
    {"-1e400", "d-inf", 0},
    {"1e-400", "d0", 0},
    {"[0.10000000000000000000000000000000000000000000000000000000000000001,"
     "1000000000000000000000000000000000000000000000000000000000000000000000"
     "000000000000000000000000000000]",
     "A2 d0.1 d1e99", 0},
    {"0.30000000000000004", "d0.30000000000000004", 1},
    {"9007199254740993", "d9007199254740992", 0},
    {"2.2250738585072011e-308", "d2.225073858507201e-308", 0},
    {"\"\"", "s''", 1},
    {"\"abc\"", "s'abc'", 1},
    {"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "s'\"\\\\/\\x08\\x0c\\x0a\\x0d\\x09'", 0},
    {"\"\\u0041\\u00e9\\u20AC\"", "s'A\\xc3\\xa9\\xe2\\x82\\xac'", 0},
    {"\"\\u0000\"", "s'\\x00'", 1},
    {"\"\\ud83d\\ude00\"", "s'\\xf0\\x9f\\x98\\x80'", 0},
    {"\"\\ud800\"", "s'\\xed\\xa0\\x80'", 1},
    {"\"\\udc00\\ud800\"", "s'\\xed\\xb0\\x80\\xed\\xa0\\x80'", 0},
    {"\"\\ud800\\u0041\"", "s'\\xed\\xa0\\x80A'", 0},
    {"\"\\ud800\\ud800\\udc00\"", "s'\\xed\\xa0\\x80\\xf0\\x90\\x80\\x80'", 0},
    {"\"\xc3\xa9\xe2\x80\xa8\xf4\x8f\xbf\xbf\"", "s'\\xc3\\xa9\\xe2\\x80\\xa8\\xf4\\x8f\\xbf\\xbf'",
     1},
    {"[]", "A0", 1},
    {"[ ]", "A0", 0},
    {"[1,[2,[]],\"x\"]", "A3 i1 A2 i2 A0 s'x'", 1},
    {"{}", "O0", 1},
    {"{ \"a\" : 1 , \"b\" : {} }", "O2 'a' i1 'b' O0", 0},
    {"{\"a\":1,\"a\":2}", "O2 'a' i1 'a' i2", 1},
    {"{\"$$id\":1,\"$x\":2,\"$$y\":3}", "O3 '$id' i1 '$x' i2 '$$y' i3", 1},
    {"{\"$set\":1}", "O1 '$set' i1", 0},
    {"{\"$v\":1}", "O1 '$v' i1", 0},
    {"{\"\\u0024\\u0024a\":1}", "O1 '$a' i1", 0},
    {"{\"$undefined\":0}", "u", 1},
    {"{\"$Number\":\"NaN\"}", "dnan", 1},
    {"{\"$Number\":\"-Infinity\"}", "d-inf", 1},
    {"{\"$Number\":\"-0\"}", "d-0", 1},
    {"{\"$BigInt\":\"-12\"}", "B'-12'", 1},
    {"{\"$Date\":\"2020-01-02T03:04:05.006Z\"}", "D1577934245006", 1},
    {"{\"$Date\":\"+275760-09-13T00:00:00.000Z\"}", "D8.64e15", 1},
    {"{\"$Date\":\"-000001-01-01T00:00:00.000Z\"}", "D-62198755200000", 1},
    {"{\"$Date\":\"2000-02-29T23:59:59.999Z\"}", "D951868799999", 1},
    {"{\"$Date\":null}", "Dnan", 1},
    /* read in place when written as above (read_date_inline), else
       through the tag slot: the same tape */
    {"{ \"$Date\":\"2020-01-02T03:04:05.006Z\" }", "D1577934245006", 0},
    {"{\"$Date\" :\"2020-01-02T03:04:05.006Z\"}", "D1577934245006", 0},
    {"{\"$Date\": \"+275760-09-13T00:00:00.000Z\"}", "D8.64e15", 0},
    {"{\"\\u0024Date\":\"2020-01-02T03:04:05.006Z\"}", "D1577934245006", 0},
    {"[{\"$Date\":\"2020-01-02T03:04:05.006Z\"},{\"$ref\":1},{\"$Date\":null},{\"$ref\":2}]",
     "A4 D1577934245006 @1 Dnan @2", 1},
    {"{\"$RegExp\":[\"a+b\",\"gi\"]}", "R 'a+b' 'gi'", 1},
    {"{\"$Map\":[[\"a\",1],[[],{}]]}", "M2 s'a' i1 A0 O0", 1},
    {"{\"$Map\":[ ]}", "M0", 0},
    {"{\"$Set\":[1,{\"$Set\":[]}]}", "S2 i1 S0", 1},
    {"{\"$NullProto\":{\"a\":1,\"$$b\":2}}", "P2 'a' i1 '$b' i2", 1},
    {"{\"$NullProto\":{}}", "P0", 1},
    {"{\"$Error\":{\"name\":\"E\",\"message\":\"m\",\"cause\":{\"$ref\":0}}}",
     "E3 'name' s'E' 'message' s'm' 'cause' @0", 1},
    {"{\"$\":\"Foo\"}", "I 'Foo' #1 #0", 1},
    {"{\"$\":\"Foo\",\"$v\":2,\"a\":1,\"$$v\":3}", "I 'Foo' #2 #2 'a' i1 '$v' i3", 1},
    {"{\"$\":\"Foo\",\"$v\":1}", "I 'Foo' #1 #0", 0},
    /* the key "$" written otherwise: through the tag slot, same tape */
    {"{ \"$\" : \"Foo\", \"a\" : 1 }", "I 'Foo' #1 #1 'a' i1", 0},
    {"{\"$\":  \"Foo\"}", "I 'Foo' #1 #0", 0},
    {"{\"\\u0024\":\"Foo\"}", "I 'Foo' #1 #0", 0},
    {"[1,{\"$hole\":2},3]", "A4 i1 H2 i3", 1},
    {"[{\"$hole\":1}]", "A1 H1", 1},
    {"[[],{\"$ref\":1},{\"$ref\":0}]", "A3 A0 @1 @0", 1},
    {"{\"$Uint8Array\":\"AAEC\"}", "Y4 #3 x000102", 1},
    {"{\"$Int32Array\":\"AQAAAA==\"}", "Y8 #4 x01000000", 1},
    {"{\"$DataView\":\"\"}", "Y2 #0", 1},
    {"{\"$Uint8ClampedArray\":\"\\u0041A==\"}", "Y5 #1 x00", 0},
    {"[{\"$Date\":null},{\"$ref\":1},{\"$Buffer\":\"\"},{\"$ref\":2}]", "A4 Dnan @1 Y0 #0 @2",
     1}, /* read_number's short integers: up to 9 digits, then what follows
       decides; longer ones, fractions and exponents go the general way */
    {"999999999", "i999999999", 1},
    {"-999999999", "i-999999999", 1},
    {"1000000000", "i1000000000", 1},
    {"-2147483647", "i-2147483647", 1},
    {"4294967297", "d4294967297", 1},
    {"[12,3.5,7e1,8E0,-9,10,123456789.5,5e-1]", "A8 i12 d3.5 d70 d8 i-9 i10 d123456789.5 d0.5", 0},
    /* read_str_op's short strings: a closing quote within 16 bytes, with
       nothing before it to unescape or check; else the general path */
    {"[\"abcdefghijklmno\",\"abcdefghijklmnop\",\"abcdefghijklmnopq\"]",
     "A3 s'abcdefghijklmno' s'abcdefghijklmnop' s'abcdefghijklmnopq'", 1},
    {"[\"a\xc3\xa9\",\"abcdefgh\xc3\xa9\",\"ab\\nc\",\"abcdefghij\\n\",\"abcdefgh\\u0041\"]",
     "A5 s'a\\xc3\\xa9' s'abcdefgh\\xc3\\xa9' s'ab\\x0ac' s'abcdefghij\\x0a' s'abcdefghA'", 0},
    {"{\"k\":\"v\",\"abcdefghij\":\"\"}", "O2 'k' s'v' 'abcdefghij' s''", 1},
    /* tag names looked up where they stand (read_object), and the keys
       that only look like one */
    {"{\"$Int8Array\":\"AQ==\"}", "Y3 #1 x01", 1},
    {"{\"$Uint8ClampedArray\":\"AQ==\"}", "Y5 #1 x01", 1},
    {"{\"$Map\" : [ ]}", "M0", 0},
    {"{\"$Set\"\n:\n[ ]}", "S0", 0},
    {"{\"$Mapx\":1}", "O1 '$Mapx' i1", 0},
    {"{\"$map\":1}", "O1 '$map' i1", 0},
    {"{\"$Map1\":1}", "O1 '$Map1' i1", 0},
    {"{\"$M\\u0061p\":[]}", "M0", 0},
    {"{\"$Dat\":1}", "O1 '$Dat' i1", 0},
    {"{\"$Datex\":1}", "O1 '$Datex' i1", 0},
    {"{\"$UndefinedXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\":1}",
     "O1 '$UndefinedXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' i1", 0},
};

typedef struct rbad {
    const char *json;
    int code;
    size_t pos;
} rbad;

static const rbad reader_bad[] = {
    /* syntax */
    {"", DK_ERR_SYNTAX, 0},
    {" ", DK_ERR_SYNTAX, 1},
    {"nul", DK_ERR_SYNTAX, 3},
    {"nulx", DK_ERR_SYNTAX, 3},
    {"True", DK_ERR_SYNTAX, 0},
    {"NaN", DK_ERR_SYNTAX, 0},
    {"Infinity", DK_ERR_SYNTAX, 0},
    {"-Infinity", DK_ERR_SYNTAX, 1},
    {"'a'", DK_ERR_SYNTAX, 0},
    {"01", DK_ERR_SYNTAX, 1},
    {"123a", DK_ERR_SYNTAX, 3},
    {"[123456789-]", DK_ERR_SYNTAX, 10},
    {"[-123.]", DK_ERR_SYNTAX, 6},
    {"[-12e]", DK_ERR_SYNTAX, 5},
    {"\"ab\xff\"", DK_ERR_SYNTAX, 3},
    {"\"ab\x01\"", DK_ERR_SYNTAX, 3},
    {"\"abcdefghij\x01\"", DK_ERR_SYNTAX, 11},
    {"\"ab\\x\"", DK_ERR_SYNTAX, 4},
    {"\"abc", DK_ERR_SYNTAX, 4},
    {"{\"$Map\" x", DK_ERR_SYNTAX, 8},
    {"{\"$Map\"", DK_ERR_SYNTAX, 7},
    {"{\"$Map\":{}}", DK_ERR_FORMAT, 8},
    {"{\"$Int8Array\":\"AQ\"}", DK_ERR_FORMAT, 14},
    {"{\"$Date\":1}", DK_ERR_FORMAT, 9},
    {"-01", DK_ERR_SYNTAX, 2},
    {"00000000001", DK_ERR_SYNTAX, 1},
    {"1.", DK_ERR_SYNTAX, 2},
    {".5", DK_ERR_SYNTAX, 0},
    {"1.e5", DK_ERR_SYNTAX, 2},
    {"1e", DK_ERR_SYNTAX, 2},
    {"1e+", DK_ERR_SYNTAX, 3},
    {"+1", DK_ERR_SYNTAX, 0},
    {"-", DK_ERR_SYNTAX, 1},
    {"0x10", DK_ERR_SYNTAX, 1},
    {"1 2", DK_ERR_SYNTAX, 2},
    {"[1,]", DK_ERR_SYNTAX, 3},
    {"[,1]", DK_ERR_SYNTAX, 1},
    {"[1 2]", DK_ERR_SYNTAX, 3},
    {"[1", DK_ERR_SYNTAX, 2},
    {"{\"a\":1,}", DK_ERR_SYNTAX, 7},
    {"{\"a\" 1}", DK_ERR_SYNTAX, 5},
    {"{a:1}", DK_ERR_SYNTAX, 1},
    {"{'a':1}", DK_ERR_SYNTAX, 1},
    {"{\"a\":1", DK_ERR_SYNTAX, 6},
    {"[1]]", DK_ERR_SYNTAX, 3},
    {"/* c */ 1", DK_ERR_SYNTAX, 0},
    {"1 // c", DK_ERR_SYNTAX, 2},
    {"\xef\xbb\xbf"
     "1",
     DK_ERR_SYNTAX, 0},
    {"\"abc", DK_ERR_SYNTAX, 4},
    {"\"a\tb\"", DK_ERR_SYNTAX, 2},
    {"\"a\nb\"", DK_ERR_SYNTAX, 2},
    {"\"\\x41\"", DK_ERR_SYNTAX, 2},
    {"\"\\u00g1\"", DK_ERR_SYNTAX, 5},
    {"\"\\u12\"", DK_ERR_SYNTAX, 5},
    {"\"\\", DK_ERR_SYNTAX, 2},
    {"\"\x80\"", DK_ERR_SYNTAX, 1},
    {"\"\xc3\"", DK_ERR_SYNTAX, 2},
    {"\"\xc3(\"", DK_ERR_SYNTAX, 2},
    {"\"\xc0\x80\"", DK_ERR_SYNTAX, 1},
    {"\"\xc1\xbf\"", DK_ERR_SYNTAX, 1},
    {"\"\xe0\x80\x80\"", DK_ERR_SYNTAX, 2},
    {"\"\xed\xa0\x80\"", DK_ERR_SYNTAX, 2},
    {"\"\xf0\x80\x80\x80\"", DK_ERR_SYNTAX, 2},
    {"\"\xf4\x90\x80\x80\"", DK_ERR_SYNTAX, 2},
    {"\"\xf5\x80\x80\x80\"", DK_ERR_SYNTAX, 1},
    {"\"\xe2\x82\"", DK_ERR_SYNTAX, 3},
    {"\"\xff\"", DK_ERR_SYNTAX, 1},
    {"[\"a\"\x01]", DK_ERR_SYNTAX, 4},
    /* darmok format */
    {"{\"$undefined\":1}", DK_ERR_FORMAT, 14},
    {"{\"$undefined\":null}", DK_ERR_FORMAT, 14},
    {"{\"$undefined\":0,\"a\":1}", DK_ERR_FORMAT, 15},
    {"{\"$Number\":\"nan\"}", DK_ERR_FORMAT, 11},
    {"{\"$Number\":1}", DK_ERR_FORMAT, 11},
    {"{\"$BigInt\":\"01\"}", DK_ERR_FORMAT, 11},
    {"{\"$BigInt\":\"-0\"}", DK_ERR_FORMAT, 11},
    {"{\"$BigInt\":\"1.5\"}", DK_ERR_FORMAT, 11},
    {"{\"$BigInt\":12}", DK_ERR_FORMAT, 11},
    {"{\"$Date\":\"2020-01-02\"}", DK_ERR_FORMAT, 9},
    {"{\"$Date\":\"2020-02-30T00:00:00.000Z\"}", DK_ERR_FORMAT, 9},
    {"{\"$Date\":\"2020-01-01T24:00:00.000Z\"}", DK_ERR_FORMAT, 9},
    {"{\"$Date\":\"+002020-01-01T00:00:00.000Z\"}", DK_ERR_FORMAT, 9},
    {"{\"$Date\":\"-000000-01-01T00:00:00.000Z\"}", DK_ERR_FORMAT, 9},
    {"{\"$Date\":\"+275760-09-13T00:00:00.001Z\"}", DK_ERR_FORMAT, 9},
    {"{\"$Date\":0}", DK_ERR_FORMAT, 9},
    {"{\"$Date\":\"2020-01-02T03:04:05.006Z\",\"a\":1}", DK_ERR_FORMAT, 35},
    {"{\"$Date\":\"2020-01-02T03:04:05.006Z\"", DK_ERR_SYNTAX, 35},
    {"{\"$Date\":\"2020-01-02T03:04:05.006Z", DK_ERR_SYNTAX, 34},
    {"{\"$Date\":\"2020-01-02T03:04:05.006Z\"]", DK_ERR_SYNTAX, 35},
    {"{\"$Date\":\"2020-01-02T03:04:05.006\"}", DK_ERR_FORMAT, 9},
    {"{\"$Date\":\"2020-01-02T03:04:05.006Z \"}", DK_ERR_FORMAT, 9},
    {"{\"$RegExp\":[\"a\"]}", DK_ERR_FORMAT, 15},
    {"{\"$RegExp\":[\"a\",\"g\",\"x\"]}", DK_ERR_FORMAT, 19},
    {"{\"$RegExp\":\"a\"}", DK_ERR_FORMAT, 11},
    {"{\"$RegExp\":[1,\"g\"]}", DK_ERR_FORMAT, 12},
    {"{\"$Map\":{}}", DK_ERR_FORMAT, 8},
    {"{\"$Map\":[1]}", DK_ERR_FORMAT, 9},
    {"{\"$Map\":[[1]]}", DK_ERR_FORMAT, 11},
    {"{\"$Map\":[[]]}", DK_ERR_FORMAT, 10},
    {"{\"$Map\":[[1,2,3]]}", DK_ERR_FORMAT, 13},
    {"{\"$Map\":[],\"x\":1}", DK_ERR_FORMAT, 10},
    {"{\"$Set\":[],\"x\":1}", DK_ERR_FORMAT, 10},
    {"{\"$Set\":[{\"$hole\":1}]}", DK_ERR_FORMAT, 9},
    {"{\"$hole\":1}", DK_ERR_FORMAT, 0},
    {"{\"a\":{\"$hole\":1}}", DK_ERR_FORMAT, 5},
    {"[{\"$hole\":0}]", DK_ERR_FORMAT, 10},
    {"[{\"$hole\":1.0}]", DK_ERR_FORMAT, 10},
    {"[{\"$hole\":-1}]", DK_ERR_FORMAT, 10},
    {"[{\"$hole\":4294967296}]", DK_ERR_FORMAT, 10},
    {"{\"$ref\":0}", DK_ERR_FORMAT, 8},
    {"[{\"$ref\":1}]", DK_ERR_FORMAT, 9},
    {"[{\"$ref\":\"0\"}]", DK_ERR_FORMAT, 9},
    {"[{\"$Date\":null},{\"$ref\":2}]", DK_ERR_FORMAT, 24},
    {"{\"$Uint8Array\":\"AAE\"}", DK_ERR_FORMAT, 15},
    {"{\"$Uint8Array\":\"AA=A\"}", DK_ERR_FORMAT, 15},
    {"{\"$Uint8Array\":\"AB==\"}", DK_ERR_FORMAT, 15},
    {"{\"$Uint8Array\":\"A===\"}", DK_ERR_FORMAT, 15},
    {"{\"$Uint8Array\":\"AA-_\"}", DK_ERR_FORMAT, 15},
    {"{\"$Uint16Array\":\"AA==\"}", DK_ERR_FORMAT, 16},
    {"{\"$Float64Array\":\"AAAA\"}", DK_ERR_FORMAT, 17},
    {"{\"$Uint8Array\":[1]}", DK_ERR_FORMAT, 15},
    {"{\"$NullProto\":{\"$a\":1}}", DK_ERR_FORMAT, 15},
    {"{\"$NullProto\":[]}", DK_ERR_FORMAT, 14},
    {"{\"$Error\":{}}", DK_ERR_FORMAT, 0},
    {"{\"$Error\":{\"name\":\"E\"}}", DK_ERR_FORMAT, 0},
    {"{\"$Error\":{\"message\":\"m\",\"name\":\"E\"}}", DK_ERR_FORMAT, 11},
    {"{\"$\":1}", DK_ERR_FORMAT, 5},
    {"{\"$\" :1}", DK_ERR_FORMAT, 6},
    {"{\"$\":", DK_ERR_SYNTAX, 5},
    {"{\"$\"", DK_ERR_SYNTAX, 4},
    {"{\"$\":\"Foo\",\"$w\":1}", DK_ERR_FORMAT, 11},
    {"{\"$\":\"Foo\",\"$v\":0}", DK_ERR_FORMAT, 16},
    {"{\"$\":\"Foo\",\"$v\":\"2\"}", DK_ERR_FORMAT, 16},
    {"{\"$\":\"Foo\",\"$v\":2,\"$v\":2}", DK_ERR_FORMAT, 18},
    {"{\"$\":\"Foo\",\"a\":1,\"$v\":2}", DK_ERR_FORMAT, 17},
    /* a FORMAT check does not hide a syntax error before it */
    {"{\"$Date\":\"x", DK_ERR_SYNTAX, 11},
    {"{\"$Map\":[[1,]]}", DK_ERR_SYNTAX, 12},
};

/* Reader tables: exact tapes, round trip to the same text, exact errors. */
static void test_reader(void)
{
    dk_buf out = {0}, back = {0};
    dk_err err;

    for (size_t i = 0; i < sizeof reader_cases / sizeof *reader_cases; i++) {
        const rcase *c = &reader_cases[i];
        dk_buf t;
        int rc;

        if (!c->tape) continue;
        t = tape(c->tape);
        rc = read_json(c->json, strlen(c->json), NULL, &out, &err);
        CHECK(rc == DK_OK && out.len == t.len && !memcmp(out.data, t.data, t.len),
              "read %s: rc %d (%s at %zu) got %s want %s", c->json, rc, err.msg, err.pos,
              hex(out.data, out.len), hex(t.data, t.len));
        if (c->canonical && rc == DK_OK) {
            rc = write_json(&out, NULL, &back, &err);
            CHECK(rc == DK_OK && !strcmp((char *)back.data, c->json), "round trip %s: rc %d got %s",
                  c->json, rc, (char *)back.data);
        }
        free(t.data);
    }
    for (size_t i = 0; i < sizeof reader_bad / sizeof *reader_bad; i++) {
        const rbad *c = &reader_bad[i];
        int rc = read_json(c->json, strlen(c->json), NULL, &out, &err);

        CHECK(rc == c->code && (int)err.code == c->code && err.pos == c->pos && err.msg != NULL &&
                  out.len == 0,
              "read bad %s: rc %d at %zu (%s), want %d at %zu", c->json, rc, err.pos, err.msg,
              c->code, c->pos);
    }
    dk_buf_free(&out);
    dk_buf_free(&back);
}

/*
 * nanopb-style: every proper prefix of a valid document fails with
 * DK_ERR_SYNTAX exactly at its end (or is itself valid, like "1" of "12");
 * and overwriting byte i with 0x01 fails at i (a FORMAT failure at or
 * before i is fine: a cut token can make a bad tag value).
 */
static void test_reader_prefixes(void)
{
    dk_buf out = {0};
    dk_err err;

    for (size_t i = 0; i < sizeof reader_cases / sizeof *reader_cases; i++) {
        const char *json = reader_cases[i].json;
        size_t len = strlen(json);
        int bad = 0;

        if (!reader_cases[i].tape) continue;
        for (size_t n = 0; n < len; n++) {
            char *copy = malloc(n + 1);
            int rc;

            memcpy(copy, json, n);
            rc = read_json(copy, n, NULL, &out, &err);
            if (rc != DK_OK && !(rc == DK_ERR_SYNTAX && err.pos == n)) {
                fprintf(stderr, "prefix %zu of %s: rc %d at %zu\n", n, json, rc, err.pos);
                bad++;
            }
            {
                /* read in place (DK_READ_PADDED), as the WebAssembly
                   context reads its input area: exactly the padding the
                   reader may look into, so AddressSanitizer sees a read
                   past it */
                uint8_t *padded = calloc(n + DK_JSON_PADDING, 1);
                dk_arena scratch = {0};
                int prc;

                memcpy(padded, json, n);
                prc = dk_json_read_opts(padded, n, DK_READ_PADDED, NULL, &scratch, &out, &err);
                if (prc != rc) {
                    fprintf(stderr, "prefix %zu of %s in place: rc %d, copied %d\n", n, json, prc,
                            rc);
                    bad++;
                }
                dk_arena_free(&scratch);
                free(padded);
            }
            memcpy(copy, json, n);
            copy[n] = 1;
            rc = read_json(copy, n + 1, NULL, &out, &err);
            if (!(rc == DK_ERR_SYNTAX && err.pos == n) && !(rc == DK_ERR_FORMAT && err.pos <= n)) {
                fprintf(stderr, "0x01 at %zu of %s: rc %d at %zu\n", n, json, rc, err.pos);
                bad++;
            }
            free(copy);
        }
        CHECK(!bad, "prefixes of %s", json);
    }
    dk_buf_free(&out);
}

/* Depth limits, on both sides, and the depth bomb. */
static void test_depth(void)
{
    dk_buf out = {0};
    dk_err err;
    dk_limits two = {2, 0, 0};
    size_t n = 1000000;
    char *bomb = malloc(n);
    int rc;

    rc = read_json("[[1]]", 5, &two, &out, &err);
    CHECK(rc == DK_OK, "[[1]] at depth 2: %d", rc);
    rc = read_json("[[[1]]]", 7, &two, &out, &err);
    CHECK(rc == DK_ERR_DEPTH && err.pos == 2, "[[[1]]]: %d at %zu", rc, err.pos);
    rc = read_json("[{}]", 4, &two, &out, &err);
    CHECK(rc == DK_OK, "[{}] at depth 2: %d", rc);
    rc = read_json("[[{}]]", 6, &two, &out, &err);
    CHECK(rc == DK_ERR_DEPTH && err.pos == 2, "[[{}]]: %d at %zu", rc, err.pos);
    rc = read_json("[[{\"$ref\":0}]]", 14, &two, &out, &err);
    CHECK(rc == DK_OK, "tags that are not containers do not nest: %d", rc);
    /* {"$Map":[[k,v]]}: the wrapper and its array count once, pairs not */
    rc = read_json("[{\"$Map\":[[1,2]]}]", 18, &two, &out, &err);
    CHECK(rc == DK_OK, "Map at depth 2: %d", rc);
    rc = read_json("[{\"$Map\":[[[],2]]}]", 19, &two, &out, &err);
    CHECK(rc == DK_ERR_DEPTH && err.pos == 11, "Map key: %d at %zu", rc, err.pos);
    rc = read_json("[{\"$\":\"A\",\"x\":{\"a\":1}}]", 23, &two, &out, &err);
    CHECK(rc == DK_ERR_DEPTH && err.pos == 14, "instance: %d at %zu", rc, err.pos);

    memset(bomb, '[', n);
    rc = read_json(bomb, n, NULL, &out, &err);
    CHECK(rc == DK_ERR_DEPTH && err.pos == DK_DEFAULT_MAX_DEPTH, "depth bomb: %d at %zu", rc,
          err.pos);
    {
        dk_limits deep = {200000, 0, 0};
        size_t k = 200000;
        char *ok = malloc(2 * k);
        memset(ok, '[', k);
        memset(ok + k, ']', k);
        rc = read_json(ok, 2 * k, &deep, &out, &err);
        CHECK(rc == DK_OK, "200000 nested arrays with max_depth 200000: %d", rc);
        if (rc == DK_OK) {
            dk_buf json = {0};
            rc = write_json(&out, &deep, &json, &err);
            CHECK(rc == DK_OK && json.len == 2 * k && !memcmp(json.data, ok, 2 * k),
                  "200000 nested arrays written back: %d", rc);
            dk_buf_free(&json);
        }
        free(ok);
    }
    free(bomb);
    dk_buf_free(&out);
}

/* max_length on strings, arrays (holes too), members, entries, binary. */
static void test_max_length(void)
{
    static const struct {
        const char *json;
        int code;
        size_t pos;
    } cases[] = {
        {"\"abc\"", DK_OK, 0},
        {"\"abcd\"", DK_ERR_TOO_LONG, 0},
        {"[\"\\u00e9\\u00e9\"]", DK_ERR_TOO_LONG, 1},
        {"{\"abcd\":1}", DK_ERR_TOO_LONG, 1},
        {"[1,2,3]", DK_OK, 0},
        {"[1,2,3,4]", DK_ERR_TOO_LONG, 0},
        {"[1,{\"$hole\":2}]", DK_OK, 0},
        {"[1,{\"$hole\":3}]", DK_ERR_TOO_LONG, 0},
        {"[{\"$hole\":4294967295}]", DK_ERR_TOO_LONG, 0},
        {"{\"a\":1,\"b\":2,\"c\":3,\"d\":4}", DK_ERR_TOO_LONG, 0},
        {"{\"$Set\":[1,2,3,4]}", DK_ERR_TOO_LONG, 0},
        {"{\"$Map\":[[1,1],[2,2],[3,3],[4,4]]}", DK_ERR_TOO_LONG, 0},
        {"{\"$Uint8Array\":\"AAEC\"}", DK_OK, 0},
        {"{\"$Date\":null}", DK_OK, 0},
        /* a date's and a special number's strings are no string values:
         * max_length does not count them (as protobuf has none there) */
        {"{\"$Date\":\"2020-01-02T03:04:05.006Z\"}", DK_OK, 0},
        {"{\"$Date\": \"2020-01-02T03:04:05.006Z\"}", DK_OK, 0},
        {"{\"$Number\":\"-Infinity\"}", DK_OK, 0},
        {"{\"$Date\":\"2020-01-02T03:04:05.006Z000000000000000\"}", DK_ERR_TOO_LONG, 9},
        {"{\"$Uint8Array\":\"AAECAw==\"}", DK_ERR_TOO_LONG, 15},
        {"{\"$Uint8Array\":\"AAECAwQF\"}", DK_ERR_TOO_LONG, 15},
    };
    dk_limits three = {0, 3, 0};
    dk_buf out = {0};
    dk_err err;

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = read_json(cases[i].json, strlen(cases[i].json), &three, &out, &err);
        CHECK(rc == cases[i].code && err.pos == cases[i].pos,
              "max_length 3 %s: %d at %zu, want %d at %zu", cases[i].json, rc, err.pos,
              cases[i].code, cases[i].pos);
    }
    /* a date's string is not counted against max_length, on the inline
     * path (no whitespace) and the general one alike */
    {
        static const struct {
            const char *json;
            uint32_t max;
            int code;
        } dates[] = {
            {"{\"$Date\":\"2020-01-02T03:04:05.006Z\"}", 1, DK_OK},
            {"{\"$Date\":\"2020-01-02T03:04:05.006Z\"}", 23, DK_OK},
            {"{\"$Date\": \"2020-01-02T03:04:05.006Z\"}", 23, DK_OK},
            {"{\"$Date\":\"+275760-09-13T00:00:00.000Z\"}", 1, DK_OK},
            {"{\"$Date\":\"+275760-09-13T00:00:00.000Z\"}", 26, DK_OK},
            {"{\"$Date\": \"+275760-09-13T00:00:00.000Z\"}", 26, DK_OK},
            {"{\"$Date\":\"+275760-09-13T00:00:00.000Z\"}", 27, DK_OK},
            {"{\"$Date\":\"x2020-01-02T03:04:05.006Z0000000000\"}", 26, DK_ERR_TOO_LONG},
            {"{\"$Date\":\"x2020-01-02T03:04:05.006Z0000000000\"}", 40, DK_ERR_FORMAT},
        };

        for (size_t i = 0; i < sizeof dates / sizeof *dates; i++) {
            dk_limits lim = {0, dates[i].max, 0};
            int rc = read_json(dates[i].json, strlen(dates[i].json), &lim, &out, &err);

            CHECK(rc == dates[i].code && (rc == DK_OK || err.pos == 9),
                  "max_length %u %s: %d at %zu, want %d", dates[i].max, dates[i].json, rc, err.pos,
                  dates[i].code);
        }
    }
    dk_buf_free(&out);
}

/* The _opts calls reuse one arena and buffers across many calls. */
static void test_reuse(void)
{
    dk_arena a;
    dk_buf t = {0}, j = {0};
    dk_err err;
    const char *doc = "{\"$\":\"Foo\",\"a\":[1,2,{\"$Map\":[[\"k\",{\"$ref\":0}]]}]}";
    size_t len = strlen(doc);
    uint8_t *padded = calloc(len + DK_JSON_PADDING, 1);
    int ok = 1;

    memcpy(padded, doc, len);
    dk_arena_init(&a);
    for (int i = 0; i < 1000; i++) {
        dk_arena_reset(&a);
        ok &= dk_json_read_opts(padded, len, DK_READ_PADDED, NULL, &a, &t, &err) == DK_OK;
        dk_arena_reset(&a);
        ok &= dk_json_write_opts(t.data, t.len, NULL, &a, &j, &err) == DK_OK;
        ok &= j.len == len && !memcmp(j.data, doc, len);
        dk_arena_reset(&a);
        ok &= dk_json_read_opts(padded, len - 1, 0, NULL, &a, &t, &err) == DK_ERR_SYNTAX;
    }
    CHECK(ok, "1000 reuse rounds");
    dk_arena_free(&a);
    dk_buf_free(&t);
    dk_buf_free(&j);
    free(padded);
}

/* A deterministic xorshift generator for the mutation tests. */
static uint32_t rnd(void)
{
    static uint32_t x = 2463534242u;
    return xorshift32(&x);
}

/*
 * Mutation robustness (under ASan/UBSan): random byte edits of valid
 * documents and tapes must fail cleanly or succeed; and whatever tape the
 * reader produces, the writer must accept, and one more round trip must
 * reproduce it (reader output is always a valid, stable tape).
 */
static void test_mutations(void)
{
    dk_buf t = {0}, j = {0}, t2 = {0}, t3 = {0};
    dk_err err;
    int bad = 0, ok = 0;

    for (size_t i = 0; i < sizeof reader_cases / sizeof *reader_cases; i++) {
        const char *json = reader_cases[i].json;
        size_t len = strlen(json);
        char *copy = malloc(len + 1);

        for (int round = 0; round < 300; round++) {
            int rc;

            memcpy(copy, json, len);
            for (int e = 0; e < 1 + round % 3; e++) {
                static const char pool[] = "{}[],:\"0-1e.$\\u\x80\xff ";
                copy[rnd() % len] = pool[rnd() % (sizeof pool - 1)];
            }
            rc = read_json(copy, len, NULL, &t, &err);
            if (rc < DK_OK || (rc > DK_ERR_TOO_LARGE && rc != DK_ERR_TOO_LONG) ||
                (rc && !err.msg) || err.pos > len) {
                bad++;
                continue;
            }
            if (rc != DK_OK) continue;
            ok++;
            if (write_json(&t, NULL, &j, &err) != DK_OK ||
                read_json((char *)j.data, j.len, NULL, &t2, &err) != DK_OK ||
                write_json(&t2, NULL, &j, &err) != DK_OK ||
                read_json((char *)j.data, j.len, NULL, &t3, &err) != DK_OK || t2.len != t3.len ||
                memcmp(t2.data, t3.data, t2.len)) {
                fprintf(stderr, "mutant %.*s: unstable round trip\n", (int)len, copy);
                bad++;
            }
        }
        free(copy);
    }
    for (size_t i = 0; i < sizeof writer_cases / sizeof *writer_cases; i++) {
        dk_buf w = tape(writer_cases[i].tape);

        for (int round = 0; round < 300; round++) {
            dk_buf m = tape(writer_cases[i].tape);
            int rc;

            m.data[rnd() % m.len] = (uint8_t)rnd();
            rc = dk_json_write(m.data, m.len, NULL, &j, &err);
            if (rc != DK_OK && rc != DK_ERR_TAPE && rc != DK_ERR_DEPTH) bad++;
            free(m.data);
        }
        free(w.data);
    }
    CHECK(!bad && ok > 100, "mutations: %d bad, %d mutants accepted", bad, ok);
    dk_buf_free(&t);
    dk_buf_free(&j);
    dk_buf_free(&t2);
    dk_buf_free(&t3);
}

/* Runs every test; the last line is the summary the build looks for. */
/*
 * Short strings are copied 16 bytes at a time when that much tape (writer)
 * or padded input (reader) follows them: strings of every length up to 40,
 * with and without an escape, last in a tape and in a JSON text held in
 * buffers of their exact size (AddressSanitizer sees any read past them),
 * and again with another value after them; and read in place with exactly
 * DK_JSON_PADDING bytes after the text, cut before the closing quote (a run
 * after an escape then ends at the padding: a copy of 18 bytes is caught;
 * a run always stops one byte short of the padding's end).
 */
static void test_short_copies(void)
{
    for (size_t n = 0; n <= 40; n++) {
        for (int variant = 0; variant < 4; variant++) {
            int escaped = variant & 1, followed = variant & 2;
            char str[64], want[160];
            size_t wl = 0, len = 0;
            dk_buf tape = {0}, out = {0}, back = {0};
            dk_err err;
            uint8_t *exact, *text;

            for (size_t i = 0; i < n; i++) str[i] = (char)('a' + i % 26);
            if (escaped && n > 0) str[n / 2] = '"';
            if (followed) {
                tb_op(&tape, DK_T_ARRAY);
                tb_u32(&tape, 2);
                want[wl++] = '[';
            }
            tb_op(&tape, DK_T_STR);
            tb_u32(&tape, (uint32_t)n << DK_STR_SHIFT | DK_STR_ASCII);
            tb_raw(&tape, str, n);
            want[wl++] = '"';
            for (size_t i = 0; i < n; i++) {
                if (str[i] == '"') want[wl++] = '\\';
                want[wl++] = str[i];
            }
            want[wl++] = '"';
            if (followed) {
                tb_op(&tape, DK_T_TRUE);
                memcpy(want + wl, ",true]", 6);
                wl += 6;
            }
            exact = malloc(tape.len);
            if (!exact) abort();
            memcpy(exact, tape.data, tape.len);
            len = tape.len;
            CHECK(dk_json_write(exact, len, NULL, &out, &err) == DK_OK && out.len == wl &&
                      memcmp(out.data, want, wl) == 0,
                  "short string of %zu (variant %d) written", n, variant);
            text = malloc(out.len ? out.len : 1);
            if (!text) abort();
            memcpy(text, out.data, out.len);
            CHECK(dk_json_read(text, out.len, NULL, &back, &err) == DK_OK && back.len == len &&
                      memcmp(back.data, exact, len) == 0,
                  "short string of %zu (variant %d) read back", n, variant);
            /* and read in place, padded exactly (DK_READ_PADDED): the
               16-byte copies stay inside the padding */
            {
                uint8_t *padded = calloc(out.len + DK_JSON_PADDING, 1);
                dk_arena a;

                if (!padded) abort();
                memcpy(padded, out.data, out.len);
                dk_arena_init(&a);
                CHECK(dk_json_read_opts(padded, out.len, DK_READ_PADDED, NULL, &a, &back, &err) ==
                              DK_OK &&
                          back.len == len && memcmp(back.data, exact, len) == 0,
                      "short string of %zu (variant %d) read in place", n, variant);
                /* cut before the closing quote, padded exactly: the reader runs
                   into the padding (a run after an escape ends right there) */
                {
                    size_t cut = out.len - (followed ? 7 : 1);
                    uint8_t *tight = calloc(cut + DK_JSON_PADDING, 1);
                    int rc;

                    if (!tight) abort();
                    memcpy(tight, out.data, cut);
                    rc = dk_json_read_opts(tight, cut, DK_READ_PADDED, NULL, &a, &back, &err);
                    free(tight);

                    CHECK(rc == DK_ERR_SYNTAX, "unterminated string of %zu (variant %d): %d", n,
                          variant, rc);
                }
                dk_arena_free(&a);
                free(padded);
            }
            free(exact);
            free(text);
            dk_buf_free(&tape);
            dk_buf_free(&out);
            dk_buf_free(&back);
        }
    }
}

/*
 * Numbers and dates are formatted straight into the output after reserving
 * the formatter's maximum: the longest of each written at every offset
 * around the output's first growth (256 bytes; the buffer is realloc'd to
 * exactly its capacity, so AddressSanitizer sees a write past a reservation
 * that was too small).
 */
static void test_format_room(void)
{
    static const double widest = -3.4383767646628397e-06; /* 25 characters as JS writes it */
    static const double latest = 8.64e15;                 /* +275760-09-13T00:00:00.000Z */

    for (size_t k = 190; k <= 260; k++) {
        for (int date = 0; date < 2; date++) {
            dk_buf tape = {0}, out = {0};
            dk_err err;
            char want[400];
            size_t wl = 0;

            tb_op(&tape, DK_T_ARRAY);
            tb_u32(&tape, 2);
            tb_op(&tape, DK_T_STR);
            tb_u32(&tape, (uint32_t)k << DK_STR_SHIFT | DK_STR_ASCII);
            want[wl++] = '[';
            want[wl++] = '"';
            for (size_t i = 0; i < k; i++) {
                tb_op(&tape, 'a');
                want[wl++] = 'a';
            }
            memcpy(want + wl, "\",", 2);
            wl += 2;
            tb_op(&tape, date ? DK_T_DATE : DK_T_F64);
            tb_raw(&tape, date ? &latest : &widest, 8);
            {
                const char *tail = date ? "{\"$Date\":\"+275760-09-13T00:00:00.000Z\"}]"
                                        : "-0.0000034383767646628397]";
                memcpy(want + wl, tail, strlen(tail));
                wl += strlen(tail);
            }
            CHECK(dk_json_write(tape.data, tape.len, NULL, &out, &err) == DK_OK && out.len == wl &&
                      memcmp(out.data, want, wl) == 0,
                  "%s after %zu bytes: %.*s", date ? "date" : "number", k, (int)out.len,
                  (const char *)out.data);
            dk_buf_free(&tape);
            dk_buf_free(&out);
        }
    }
}

/*
 * Strings under 16 bytes with 16 tape bytes readable from their start go
 * through put_str as one fixed-size copy when none of their bytes needs
 * work. Each of them here holds one byte that does ('"', '\\', control
 * bytes, a 2-byte sequence, a lone surrogate, an invalid byte) at every
 * position, or none, as a value and as a key (also with a leading '$',
 * which a first key gets doubled), with a value after it so that the 16
 * bytes are there; the output must be JSON.stringify's escaping.
 */
static void test_short_strings(void)
{
    static const struct {
        const char *bytes, *json; /* json NULL: the tape is rejected */
    } odd[] = {
        {"", ""},
        {"\"", "\\\""},
        {"\\", "\\\\"},
        {"\x01", "\\u0001"},
        {"\x1f", "\\u001f"},
        {"\x7f", "\x7f"},
        {"\xc3\xa9", "\xc3\xa9"},
        {"\xed\xa0\x80", "\\ud800"},
        {"\xff", NULL},
    };
    static const char tail[] = "zzzzzzzzzzzzzzzzzzzz"; /* 20 bytes after the string */

    for (size_t n = 0; n < 18; n++) {
        for (size_t j = 0; j <= n; j++) {
            for (size_t o = 0; o < sizeof odd / sizeof odd[0]; o++) {
                for (int as = 0; as < 3; as++) { /* value, key, '$' key */
                    char s[32], want[96];
                    size_t sl = 0, wl = 0, ol = strlen(odd[o].bytes);
                    dk_buf t = {0}, out = {0};
                    dk_err err;
                    int rc;

                    if (as == 2) s[sl++] = '$';
                    for (size_t i = 0; i < j; i++) s[sl++] = (char)('a' + i);
                    memcpy(s + sl, odd[o].bytes, ol);
                    sl += ol;
                    for (size_t i = j; i < n; i++) s[sl++] = (char)('A' + i);
                    tb_op(&t, as == 0 ? DK_T_ARRAY : DK_T_OBJECT);
                    tb_u32(&t, as == 0 ? 2 : 1);
                    if (as == 0) tb_op(&t, DK_T_STR);
                    tb_u32(&t, (uint32_t)sl << DK_STR_SHIFT);
                    tb_raw(&t, s, sl);
                    tb_op(&t, DK_T_STR);
                    tb_u32(&t, (uint32_t)(sizeof tail - 1) << DK_STR_SHIFT | DK_STR_ASCII);
                    tb_raw(&t, tail, sizeof tail - 1);
                    want[wl++] = as == 0 ? '[' : '{';
                    want[wl++] = '"';
                    if (as == 2) {
                        memcpy(want + wl, "$$", 2);
                        wl += 2;
                    }
                    for (size_t i = 0; i < j; i++) want[wl++] = (char)('a' + i);
                    if (odd[o].json) {
                        memcpy(want + wl, odd[o].json, strlen(odd[o].json));
                        wl += strlen(odd[o].json);
                    }
                    for (size_t i = j; i < n; i++) want[wl++] = (char)('A' + i);
                    want[wl++] = '"';
                    want[wl++] = as == 0 ? ',' : ':';
                    wl += (size_t)sprintf(want + wl, "\"%s\"%c", tail, as == 0 ? ']' : '}');
                    rc = dk_json_write(t.data, t.len, NULL, &out, &err);
                    if (odd[o].json == NULL)
                        CHECK(rc == DK_ERR_TAPE, "bad byte at %zu of %zu (as %d) rejected: %d", j,
                              n, as, rc);
                    else
                        CHECK(rc == DK_OK && out.len == wl && memcmp(out.data, want, wl) == 0,
                              "string of %zu with odd %zu at %zu (as %d): got %.*s", n, o, j, as,
                              (int)out.len, (const char *)out.data);
                    dk_buf_free(&t);
                    dk_buf_free(&out);
                }
            }
        }
    }
}

/*
 * A tag as the document's first token is looked up where it stands, so
 * nothing is on the tape when its value is read: each tag with an empty
 * or bad value, into a fresh tape (data NULL), must fail cleanly (clang's
 * UndefinedBehaviorSanitizer, as the fuzzers use it, also sees pointer
 * arithmetic on the NULL data; gcc's does not).
 */
static void test_tag_first(void)
{
    static const struct {
        const char *json;
        dk_code code;
    } cases[] = {
        {"{\"$Date\":\"\"}", DK_ERR_FORMAT},   {"{ \"$Date\" : \"\"}", DK_ERR_FORMAT},
        {"{\"$Date\":\"x\"}", DK_ERR_FORMAT},  {"{\"$BigInt\":\"\"}", DK_ERR_FORMAT},
        {"{\"$Number\":\"\"}", DK_ERR_FORMAT}, {"{\"$RegExp\":[\"\",\"\"]}", DK_OK},
        {"{\"$Uint8Array\":\"\"}", DK_OK},     {"{\"$Map\":[]}", DK_OK},
        {"{\"$Date\":null}", DK_OK},           {"{\"$Set\":[]}", DK_OK},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dk_buf t = {0};
        dk_err err;
        int rc =
            dk_json_read((const uint8_t *)cases[i].json, strlen(cases[i].json), NULL, &t, &err);

        CHECK(rc == (int)cases[i].code, "%s first: %d (%s)", cases[i].json, rc,
              err.msg ? err.msg : "");
        dk_buf_free(&t);
    }
}

/*
 * fuzz (pb_write): a tape str whose flags claim both ASCII and WTF-8 (the
 * bits a transcode's key reference uses) is read as a str by the JSON
 * writer, as by the protobuf writer, outside a transcode's tape.
 */
static void test_both_flags_outside_transcode(void)
{
    static const uint8_t tape[] = {0x0b, 0x02, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x61,
                                   0x05, 0x01, 0x00, 0x00, 0x00, 0x13, 0x00, 0x00, 0x00, 0x73,
                                   0x65, 0x6c, 0x66, 0x14, 0x00, 0x00, 0x00, 0x00};
    dk_arena a;
    dk_buf pb = {0}, j = {0};
    dk_err err;
    int rc, rcj;

    dk_arena_init(&a);
    rc = dk_pb_write_opts(tape, sizeof tape, NULL, &a, &pb, &err);
    dk_arena_reset(&a);
    rcj = dk_json_write_opts(tape, sizeof tape, NULL, &a, &j, &err);
    CHECK(rc != DK_OK || rcj == DK_OK,
          "the JSON writer accepts what the protobuf writer does: %d, %d (%s)", rc, rcj,
          err.msg ? err.msg : "");
    dk_arena_free(&a);
    dk_buf_free(&pb);
    dk_buf_free(&j);
}

int main(void)
{
    test_writer();
    test_writer_prefixes();
    test_reader();
    test_reader_prefixes();
    test_depth();
    test_max_length();
    test_reuse();
    test_mutations();
    test_short_copies();
    test_short_strings();
    test_tag_first();
    test_both_flags_outside_transcode();
    test_format_room();
    return test_report("c-json");
}

/*
 * test_pb_util.h - what the protobuf tests share (test_proto.c, test_pb_errors.c,
 * test_pb_bounds.c):
 * tape builders, one arena and output per direction, the encode, decode
 * and transcode calls with their expectations, hand-made Documents, and
 * the tape printer. Static: each test file that includes it has its own copy.
 */
#ifndef TEST_PB_UTIL_H
#define TEST_PB_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "darmok.h"
#include "dk_internal.h"
#include "test_rng.h"
#include "test_util.h"
#include "darmok.pb-c.h"

#define S(lit) lit, sizeof(lit) - 1
static void tb_str(dk_buf *t, const char *s, size_t n)
{
    tb_strn(t, s, n);
}
static void v_str(dk_buf *t, const char *s, size_t n)
{
    tb_op(t, DK_T_STR);
    tb_strn(t, s, n);
}
static void v_int(dk_buf *t, int32_t i)
{
    tb_op(t, DK_T_INT);
    tb_u32(t, (uint32_t)i);
}
static void v_f64(dk_buf *t, double x)
{
    tb_op(t, DK_T_F64);
    tb_f64(t, x);
}
static void v_hdr(dk_buf *t, int op, uint32_t n)
{
    tb_op(t, op);
    tb_u32(t, n);
}
static void v_inst(dk_buf *t, const char *key, size_t kn, uint32_t version, uint32_t n)
{
    tb_op(t, DK_T_INSTANCE);
    tb_strn(t, key, kn);
    tb_u32(t, version);
    tb_u32(t, n);
}

/* ---- helpers ----------------------------------------------------------- */

/* One arena and output buffer per direction, reused by every call, as a
 * dk_ctx does. */
typedef struct side {
    dk_arena arena;
    dk_buf out;
    dk_buf tape; /* transcoding's intermediate tape */
} side;
static side enc_side, dec_side, json_side;

static dk_code t_encode(const uint8_t *tape, size_t n, uint32_t depth, const uint8_t **out,
                        size_t *out_len, dk_err *err)
{
    dk_limits lim = {depth, 0, 0};
    int rc;
    dk_arena_reset(&enc_side.arena);
    memset(err, 0, sizeof *err);
    rc = dk_pb_write_opts(tape, n, &lim, &enc_side.arena, &enc_side.out, err);
    *out = enc_side.out.data;
    *out_len = enc_side.out.len;
    return (dk_code)rc;
}

static dk_code t_decode(const uint8_t *pb, size_t n, uint32_t depth, uint32_t maxlen,
                        const uint8_t **out, size_t *out_len, dk_err *err)
{
    dk_limits lim = {depth, maxlen, 0};
    int rc;
    dk_arena_reset(&dec_side.arena);
    memset(err, 0, sizeof *err);
    rc = dk_pb_read_opts(pb, n, &lim, 0, &dec_side.arena, &dec_side.out, err);
    *out = dec_side.out.data;
    *out_len = dec_side.out.len;
    return (dk_code)rc;
}

/* JSON -> protobuf (to_pb) or protobuf -> JSON, through a tape. */
static dk_code t_transcode(int to_pb, const uint8_t *in, size_t n, const uint8_t **out,
                           size_t *out_len, dk_err *err)
{
    int rc;
    dk_arena_reset(&json_side.arena);
    memset(err, 0, sizeof *err);
    rc = to_pb ? dk_pb_from_json_opts(in, n, 0, NULL, &json_side.arena, &json_side.tape,
                                      &json_side.out, err)
               : dk_pb_to_json_opts(in, n, NULL, &json_side.arena, &json_side.tape, &json_side.out,
                                    err);
    *out = json_side.out.data;
    *out_len = json_side.out.len;
    return (dk_code)rc;
}

static uint8_t *dup(const uint8_t *p, size_t n)
{
    uint8_t *q = malloc(n ? n : 1);
    if (q == NULL) abort();
    if (n) memcpy(q, p, n);
    return q;
}

/* pb -> JSON -> pb gives the same bytes. */
static void json_identity(const char *name, const uint8_t *pb, size_t pb_len)
{
    const uint8_t *json, *pb2;
    size_t json_len, pb2_len;
    dk_err err;
    uint8_t *jc;
    dk_code rc = t_transcode(0, pb, pb_len, &json, &json_len, &err);
    CHECK(rc == DK_OK, "%s: pb -> JSON: code %d %s at %zu", name, rc, err.msg, err.pos);
    if (rc != DK_OK) return;
    jc = dup(json, json_len);
    rc = t_transcode(1, jc, json_len, &pb2, &pb2_len, &err);
    CHECK(rc == DK_OK && pb2_len == pb_len && memcmp(pb2, pb, pb_len) == 0,
          "%s: pb -> JSON -> pb differs (code %d %s)", name, rc, err.msg ? err.msg : "");
    free(jc);
}

/* tape -> pb -> tape (identical) -> pb (identical); and, unless via_json
 * is 0, pb -> JSON -> pb identical. */
static void roundtrip_x(const char *name, const dk_buf *t, int via_json);
static void roundtrip(const char *name, const dk_buf *t)
{
    roundtrip_x(name, t, 1);
}

static void roundtrip_x(const char *name, const dk_buf *t, int via_json)
{
    const uint8_t *pb, *tape2, *pb2;
    size_t pb_len, tape2_len, pb2_len;
    dk_err err;
    uint8_t *pbc;
    dk_code rc = t_encode(t->data, t->len, 0, &pb, &pb_len, &err);
    CHECK(rc == DK_OK, "%s: encode: code %d %s at %zu", name, rc, err.msg, err.pos);
    if (rc != DK_OK) return;
    pbc = dup(pb, pb_len);
    {
        /* with its strings trusted (as from JS), the same bytes */
        uint8_t *tc = dup(t->data, t->len);
        dk_arena_reset(&enc_side.arena);
        rc = (dk_code)dk_pb_write_ex(tc, t->len, NULL, DK_WRITE_TRUSTED_TEXT, &enc_side.arena,
                                     &enc_side.out, &err);
        CHECK(rc == DK_OK && enc_side.out.len == pb_len &&
                  memcmp(enc_side.out.data, pbc, pb_len) == 0,
              "%s: trusted-text encode differs (code %d)", name, rc);
        free(tc);
    }
    rc = t_decode(pbc, pb_len, 0, 0, &tape2, &tape2_len, &err);
    CHECK(rc == DK_OK, "%s: decode: code %d %s at %zu", name, rc, err.msg, err.pos);
    if (rc == DK_OK) {
        CHECK(tape2_len == t->len && memcmp(tape2, t->data, t->len) == 0,
              "%s: tape differs after round trip (%zu vs %zu bytes)", name, tape2_len, t->len);
        rc = t_encode(tape2, tape2_len, 0, &pb2, &pb2_len, &err);
        CHECK(rc == DK_OK && pb2_len == pb_len && memcmp(pb2, pbc, pb_len) == 0,
              "%s: protobuf differs on re-encode", name);
    }
    if (via_json) json_identity(name, pbc, pb_len);
    free(pbc);
}

/* Set for one check: the error message must contain it. */
static const char *want_msg;

static void expect_decode(const char *name, const uint8_t *p, size_t n, uint32_t depth,
                          uint32_t maxlen, dk_code want, long want_pos)
{
    const uint8_t *out;
    size_t out_len;
    dk_err err;
    uint8_t *copy = dup(p, n); /* exact-size heap copy: ASan sees overreads */
    dk_code rc = t_decode(copy, n, depth, maxlen, &out, &out_len, &err);
    CHECK(rc == want && err.code == want && (want == DK_OK || err.msg != NULL) &&
              (want_pos < 0 || err.pos == (size_t)want_pos) &&
              (want_msg == NULL || (err.msg != NULL && strstr(err.msg, want_msg) != NULL)),
          "%s: decode gave code %d (%s) at %zu, want %d at %ld", name, rc, err.msg ? err.msg : "-",
          err.pos, want, want_pos);
    free(copy);
}

static void expect_encode(const char *name, const dk_buf *t, uint32_t depth, dk_code want,
                          long want_pos)
{
    const uint8_t *out;
    size_t out_len;
    dk_err err;
    uint8_t *copy = dup(t->data, t->len);
    dk_code rc = t_encode(copy, t->len, depth, &out, &out_len, &err);
    CHECK(rc == want && (want_pos < 0 || err.pos == (size_t)want_pos),
          "%s: encode gave code %d (%s) at %zu, want %d at %ld", name, rc, err.msg ? err.msg : "-",
          err.pos, want, want_pos);
    free(copy);
}

/* Pack a hand-built Document (for invalid-document tests). */
static uint8_t *pack_doc(const Darmok__Document *doc, size_t *n)
{
    uint8_t *p;
    *n = darmok__document__get_packed_size(doc);
    p = malloc(*n ? *n : 1);
    if (p == NULL) abort();
    darmok__document__pack(doc, p);
    return p;
}

/* ---- the Foo/Bar/Baz sample ---------------------------------------------- */

/* One Foo, as in docs/FORMAT.md's example; node indexes start at base. */
static void sample_foo(dk_buf *t, uint32_t base, int i, FILE *json)
{
    char name[32];
    int n = snprintf(name, sizeof name, "foo%d", i);
    v_inst(t, S("Foo"), 1, 3);
    tb_str(t, S("name"));
    v_str(t, name, (size_t)n);
    tb_str(t, S("bars"));
    v_hdr(t, DK_T_ARRAY, 2);
    v_inst(t, S("Bar"), 1, 1);
    tb_str(t, S("when"));
    tb_op(t, DK_T_DATE);
    tb_f64(t, 1577836800000.0 + i);
    tb_op(t, DK_T_REF);
    tb_u32(t, base + 2);
    tb_str(t, S("lookup"));
    v_hdr(t, DK_T_MAP, 1);
    v_str(t, S("a"));
    v_inst(t, S("Baz"), 1, 1);
    tb_str(t, S("n"));
    v_int(t, i);
    if (json)
        fprintf(json,
                "{\"$\":\"Foo\",\"name\":\"%s\",\"bars\":[{\"$\":\"Bar\",\"when\":{\"$Date\":"
                "\"2020-01-01T00:00:00.%03dZ\"}},{\"$ref\":%u}],\"lookup\":{\"$Map\":[[\"a\","
                "{\"$\":\"Baz\",\"n\":%d}]]}}",
                name, i % 1000, base + 2, i);
}

/* count == 1: a single Foo at the root; else an array of count Foos. */
static void sample(dk_buf *t, int count, FILE *json)
{
    int i;
    if (count == 1) {
        sample_foo(t, 0, 0, json);
        return;
    }
    v_hdr(t, DK_T_ARRAY, (uint32_t)count);
    if (json) fputc('[', json);
    for (i = 0; i < count; i++) {
        if (json && i) fputc(',', json);
        sample_foo(t, 1 + 6 * (uint32_t)i, i, json);
    }
    if (json) fputc(']', json);
}

/* ---- tape printer (for --decode) ----------------------------------------- */

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t print_str(const uint8_t *p)
{
    uint32_t h = rd32(p), n = h >> DK_STR_SHIFT, i;
    putchar('"');
    for (i = 0; i < n; i++) {
        uint8_t c = p[4 + i];
        if (c < 0x20 || c == '"' || c == '\\')
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    printf("\"%s", (h & DK_STR_WTF8) ? "(wtf8)" : "");
    return 4 + n;
}

/* Linear dump; indentation from a stack of remaining child counts. */
static void print_tape(const uint8_t *p, size_t n)
{
    static const char *names[] = {"?",         "undefined", "null", "false", "true", "int",
                                  "f64",       "bigint",    "str",  "array", "hole", "object",
                                  "nullproto", "instance",  "map",  "set",   "date", "regexp",
                                  "bytes",     "error",     "ref"};
    uint64_t left[4096];
    int rec[4096];
    int depth = 0, key_next = 0;
    size_t i = 0;
    while (i < n) {
        uint8_t op = p[i++];
        uint64_t kids = 0;
        int is_rec = 0;
        double x;
        printf("%*s", depth * 2, "");
        if (key_next) {
            i--;
            i += print_str(p + i);
            printf(": ");
            op = p[i++];
        }
        printf("%s", op <= 20 ? names[op] : "??");
        switch (op) {
        case DK_T_INT:
            printf(" %d", (int32_t)rd32(p + i));
            i += 4;
            break;
        case DK_T_F64:
        case DK_T_DATE:
            memcpy(&x, p + i, 8);
            printf(" %.17g", x);
            i += 8;
            break;
        case DK_T_BIGINT:
        case DK_T_STR:
            putchar(' ');
            i += print_str(p + i);
            break;
        case DK_T_REF:
        case DK_T_HOLE:
            printf(" %u", rd32(p + i));
            i += 4;
            break;
        case DK_T_ARRAY:
        case DK_T_SET:
            kids = rd32(p + i);
            printf(" %u", rd32(p + i));
            i += 4;
            break;
        case DK_T_MAP:
            kids = 2 * (uint64_t)rd32(p + i);
            printf(" %u", rd32(p + i));
            i += 4;
            break;
        case DK_T_OBJECT:
        case DK_T_NULLPROTO:
        case DK_T_ERROR:
            kids = rd32(p + i);
            is_rec = 1;
            printf(" %u", rd32(p + i));
            i += 4;
            break;
        case DK_T_INSTANCE:
            putchar(' ');
            i += print_str(p + i);
            printf(" v%u", rd32(p + i));
            kids = rd32(p + i + 4);
            is_rec = 1;
            printf(" %u", rd32(p + i + 4));
            i += 8;
            break;
        case DK_T_REGEXP:
            putchar(' ');
            i += print_str(p + i);
            putchar(' ');
            i += print_str(p + i);
            break;
        case DK_T_BYTES:
            printf(" kind=%u len=%u", p[i], rd32(p + i + 1));
            i += 5 + rd32(p + i + 1);
            break;
        default: break;
        }
        putchar('\n');
        /* this value fills one slot of its parent (a hole fills k) */
        if (depth > 0) {
            uint64_t used = op == DK_T_HOLE ? rd32(p + i - 4) : 1;
            left[depth - 1] -= used;
        }
        if (op == DK_T_ARRAY || op == DK_T_SET || op == DK_T_MAP || is_rec) {
            if (depth < 4096) {
                left[depth] = kids;
                rec[depth] = is_rec;
                depth++;
            }
        }
        while (depth > 0 && left[depth - 1] == 0) depth--;
        key_next = depth > 0 && rec[depth - 1];
    }
}

static int read_file(const char *path, uint8_t **p, size_t *n)
{
    FILE *f = fopen(path, "rb");
    long len;
    if (f == NULL) return -1;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    *p = malloc((size_t)len + 1);
    *n = fread(*p, 1, (size_t)len, f);
    fclose(f);
    return 0;
}
/* Hand-made documents: a Document with its streams set from arrays. */
#define ARR(field, type, ...)                                   \
    do {                                                        \
        static type field##_v[] = {__VA_ARGS__};                \
        doc.field = field##_v;                                  \
        doc.n_##field = sizeof field##_v / sizeof field##_v[0]; \
    } while (0)
#define K(x) DARMOK__KIND__KIND_##x
#define NONE(field) (doc.n_##field = 0)

/* A bytes value from a string literal, as a static initializer. */
#define B(lit)                            \
    {                                     \
        sizeof(lit) - 1, (uint8_t *)(lit) \
    }

/* Decode doc; want is the code, want_pos the offset (-1: any). */
static void decode_doc_at(const char *name, Darmok__Document *doc, uint32_t depth, uint32_t maxlen,
                          dk_code want, long want_pos)
{
    size_t n;
    uint8_t *p = pack_doc(doc, &n);
    expect_decode(name, p, n, depth, maxlen, want, want_pos);
    want_msg = NULL;
    free(p);
}

static void decode_doc(const char *name, Darmok__Document *doc, uint32_t depth, uint32_t maxlen,
                       dk_code want)
{
    decode_doc_at(name, doc, depth, maxlen, want, -1);
}

/* A fresh document: format 1, every stream empty. */
static void doc_reset(Darmok__Document *doc)
{
    darmok__document__init(doc);
    doc->format = 1;
}

/* Frees the arenas and buffers of the three sides. */
static void sides_free(void)
{
    dk_arena_free(&enc_side.arena);
    dk_arena_free(&dec_side.arena);
    dk_arena_free(&json_side.arena);
    dk_buf_free(&enc_side.out);
    dk_buf_free(&dec_side.out);
    dk_buf_free(&json_side.out);
    dk_buf_free(&json_side.tape);
}

#endif

/*
 * test_utf16.c - the WTF-8 -> UTF-16 transcoder (dk_wtf8_to_utf16) and the
 * UTF-16 side tables of dk_json_read_ex and dk_pb_read_ex, against a plain
 * reference decoder: every code point class at every offset around the
 * 8- and 16-byte fast paths, and many pseudo-random strings; the protobuf
 * reader's table equal to the JSON reader's for the same document, and
 * counted exactly against its amplification bound, with outcomes that do not
 * depend on whether a table is made. Deterministic; no timing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dk_internal.h"
#include "test_rng.h"
#include "tape_walk.h"
#include "test_util.h"

/* The longest string check_str16 and check_utf8 take, in units. */
#define STR16_TEST_MAX 1100

/*
 * Appends code point cp (a lone surrogate allowed) as WTF-8; returns length.
 * The tests' own encoder, not dk_put_utf8: the conversions that use that
 * one are checked against this.
 */
static size_t put_wtf8(uint8_t *d, uint32_t cp)
{
    if (cp < 0x80) {
        d[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (uint8_t)(0xC0 | cp >> 6);
        d[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (uint8_t)(0xE0 | cp >> 12);
        d[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        d[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (uint8_t)(0xF0 | cp >> 18);
    d[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
    d[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
    d[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Appends cp as UTF-16 units; returns how many. */
static size_t put_units(uint16_t *u, uint32_t cp)
{
    if (cp < 0x10000) {
        u[0] = (uint16_t)cp;
        return 1;
    }
    u[0] = (uint16_t)(0xD800 + ((cp - 0x10000) >> 10));
    u[1] = (uint16_t)(0xDC00 + ((cp - 0x10000) & 0x3FF));
    return 2;
}

/* Transcodes cps[0..k) both ways and compares. */
static void check_cps(const uint32_t *cps, size_t k, const char *what)
{
    uint8_t s[4 * 64] = {0}, d[2 * 4 * 64];
    uint16_t want[2 * 64];
    size_t n = 0, w = 0, got;

    for (size_t i = 0; i < k; i++) {
        n += put_wtf8(s + n, cps[i]);
        w += put_units(want + w, cps[i]);
    }
    got = dk_wtf8_to_utf16(s, n, d);
    CHECK(got == w, "%s: %zu units, want %zu", what, got, w);
    for (size_t i = 0; i < w && i < got; i++) {
        uint16_t v = (uint16_t)(d[2 * i] | d[2 * i + 1] << 8);
        CHECK(v == want[i], "%s: unit %zu is %04x, want %04x", what, i, v, want[i]);
    }
}

/* Appends p[0..n) to b; 1 on success. */
static int app(dk_buf *b, const void *p, size_t n)
{
    dk_err err;
    if (dk_buf_reserve(b, n, &err, 0) != DK_OK) return 0;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 1;
}

/*
 * The reference for the UTF-16 -> UTF-8 conversions: units u[0..n) one
 * code point at a time into want, a pair as its code point, a lone
 * surrogate as itself (WTF-8, and *lone set), as U+FFFD (REF_FFFD) or as
 * the JSON escape \udxxx (REF_ESCAPE: JSON text that keeps it, outside a
 * JS string; up to 6 bytes a unit). Returns the byte count.
 */
enum { REF_WTF8, REF_FFFD, REF_ESCAPE };
static size_t ref_units(const uint16_t *u, size_t n, uint8_t *want, int lone_as, int *lone)
{
    size_t w = 0;

    for (size_t i = 0; i < n; i++) {
        uint32_t c = u[i];
        if (c >= 0xD800 && c <= 0xDBFF && i + 1 < n && u[i + 1] >= 0xDC00 && u[i + 1] <= 0xDFFF) {
            c = 0x10000 + ((c - 0xD800) << 10) + (u[i + 1] - 0xDC00u);
            i++;
        } else if (c >= 0xD800 && c <= 0xDFFF) {
            if (lone_as == REF_ESCAPE) {
                w += (size_t)sprintf((char *)want + w, "\\u%04x", (unsigned)c);
                continue;
            }
            if (lone_as == REF_FFFD)
                c = 0xFFFD;
            else
                *lone = 1;
        }
        w += put_wtf8(want + w, c);
    }
    return w;
}

/*
 * dk_utf16_to_utf8 of units u[0..n) (a lone surrogate as U+FFFD) against a
 * plain reference: into a separate buffer, and in place as JSON decode
 * makes its input UTF-8 (the units at the end of an area of exactly 3n
 * bytes, its own malloc, so ASan sees a write past it).
 */
static void check_utf8(const uint16_t *u, size_t n, const char *what)
{
    uint8_t want[3 * STR16_TEST_MAX + 4] = {0}, got[3 * STR16_TEST_MAX + 16] = {0};
    size_t w = 0, len, lone = 99, lone_want = 0;
    uint8_t *area;

    w = ref_units(u, n, want, REF_FFFD, NULL);
    for (size_t i = 0; i < n; i++) {
        if (u[i] >= 0xD800 && u[i] <= 0xDBFF && i + 1 < n && u[i + 1] >= 0xDC00 &&
            u[i + 1] <= 0xDFFF)
            i++;
        else if (u[i] >= 0xD800 && u[i] <= 0xDFFF)
            lone_want++;
    }
    len = dk_utf16_to_utf8((const uint8_t *)u, n, got, &lone);
    CHECK(len == w && memcmp(got, want, w) == 0, "%s: UTF-8 %zu bytes, want %zu", what, len, w);
    CHECK(lone == lone_want, "%s: %zu lone surrogates counted, want %zu", what, lone, lone_want);
    if (n == 0) return;
    area = malloc(3 * n);
    CHECK(area != NULL, "malloc");
    if (area == NULL) return;
    memcpy(area + n, u, 2 * n);
    len = dk_utf16_to_utf8(area + n, n, area, NULL);
    CHECK(len == w && memcmp(area, want, w) == 0, "%s: UTF-8 in place, %zu bytes, want %zu", what,
          len, w);
    free(area);
}

/*
 * dk_utf8_units of each kind of sequence (1 to 4 bytes, the 4-byte leads
 * F0 to F4, an encoded lone surrogate) at every offset of two 16-byte
 * blocks and in every partial block after them, against a count one byte
 * at a time; then random mixes. The bytes after the text are padding the
 * count may read but must not count.
 */
static void check_utf8_units(void)
{
    static const char *seqs[] = {"a",
                                 "\xc3\xa9",
                                 "\xe6\x9d\xb1",
                                 "\xed\xa0\x80",
                                 "\xf0\x9f\x98\x80",
                                 "\xf1\x80\x80\x80",
                                 "\xf4\x8f\xbf\xbf"};
    static const size_t ns = sizeof seqs / sizeof seqs[0];
    uint8_t buf[96 + DK_JSON_PADDING];
    uint32_t state = 0x2545F491u;

    for (int trial = 0; trial < 20000; trial++) {
        size_t n = 0, want = 0, got, limit = 1 + xorshift32(&state) % 80;
        if (trial < (int)(ns * 40)) {
            /* one sequence at offset trial / ns in ASCII, then ASCII up to a length */
            size_t k = (size_t)trial / ns, s = (size_t)trial % ns;
            memset(buf, 'a', k);
            n = k;
            memcpy(buf + n, seqs[s], strlen(seqs[s]));
            n += strlen(seqs[s]);
            n += xorshift32(&state) % 20;
            memset(buf + k + strlen(seqs[s]), 'b', n - k - strlen(seqs[s]));
        } else {
            while (n < limit) {
                const char *q = seqs[xorshift32(&state) % ns];
                memcpy(buf + n, q, strlen(q));
                n += strlen(q);
            }
        }
        /* padding that would count wrong: continuation and lead bytes */
        for (size_t i = 0; i < DK_JSON_PADDING; i++) buf[n + i] = (uint8_t)(i & 1 ? 0x80 : 0xF0);
        for (size_t i = 0; i < n; i++)
            want += (buf[i] & 0xC0) != 0x80 ? (buf[i] >= 0xF0 ? 2u : 1u) : 0u;
        got = dk_utf8_units(buf, n);
        CHECK(got == want && got == dk_wtf8_to_utf16(buf, n, (uint8_t[192]){0}),
              "dk_utf8_units: %zu units in %zu bytes, want %zu (trial %d)", got, n, want, trial);
    }
}

/*
 * dk_json_read_utf16 on the JSON text whose WTF-8 is text (a JS string's
 * units, lone surrogates included), in an area of exactly DK_U16_AREA(n) +
 * DK_JSON_PADDING bytes: the text made WTF-8 in place; the outcome and
 * tape of dk_json_read_ex on the text's UTF-8 with each lone surrogate
 * written as an escape (so a string keeps it, as JSON.parse keeps it from
 * a JS string); and a side table with an entry for each non-ASCII str and
 * each long ASCII one that can have one, whose units are right where JS
 * reads them: in the entry, or (want_src of them) in the area's units.
 */
static void check_read_utf16(const char *text, long want_src, const char *what)
{
    size_t tn = strlen(text), n, len = 0, w;
    uint16_t *u = malloc(2 * tn + 2);
    uint8_t *ref = malloc(6 * tn + DK_JSON_PADDING), *wtf = malloc(3 * tn + 1), *area;
    dk_buf t0, t1, u0, u1;
    dk_arena a;
    dk_err e0, e1;
    long entries, srcs = -1;
    uint32_t ids0 = 0, ids1 = 0;
    int r0, r1, lone = 0;
    size_t ww;

    CHECK(u != NULL && ref != NULL && wtf != NULL, "malloc");
    if (u == NULL || ref == NULL || wtf == NULL) return;
    n = dk_wtf8_to_utf16((const uint8_t *)text, tn, (uint8_t *)u);
    w = ref_units(u, n, ref, REF_ESCAPE, NULL);
    ww = ref_units(u, n, wtf, REF_WTF8, &lone);
    area = malloc(DK_U16_AREA(n) + DK_JSON_PADDING);
    CHECK(area != NULL, "malloc");
    if (area == NULL) return;
    memcpy(area + DK_U16_AT(n), u, 2 * n);
    dk_buf_init(&t0);
    dk_buf_init(&t1);
    dk_buf_init(&u0);
    dk_buf_init(&u1);
    dk_arena_init(&a);
    r0 = dk_json_read_ex(ref, w, 0, NULL, &a, &t0, &u0, &ids0, &e0);
    r1 = dk_json_read_utf16(area, n, NULL, &a, &t1, &u1, &len, &ids1, &e1);
    CHECK(len == ww && memcmp(area, wtf, ww) == 0, "%s: the WTF-8 in place", what);
    CHECK(r0 == DK_OK && r1 == DK_OK && t0.len == t1.len && memcmp(t0.data, t1.data, t0.len) == 0,
          "%s: read %d/%d, the same tape", what, r0, r1);
    CHECK((long)ids0 == tw_ref_keep(t0.data, t0.len) && ids1 == ids0,
          "%s: %u and %u referenceable values to keep, the tape's references need %ld", what, ids0,
          ids1, tw_ref_keep(t0.data, t0.len));
    entries = tw_check_side_table(t0.data, t0.len, u0.data, u0.len, NULL, 0, NULL);
    CHECK(entries >= 0 &&
              tw_check_side_table(t1.data, t1.len, u1.data, u1.len, area + DK_U16_AT(n), n,
                                  &srcs) == entries &&
              (want_src < 0 || srcs == want_src),
          "%s: side table: %ld entries, %ld from the units (want %ld)", what, entries, srcs,
          want_src);
    dk_buf_free(&t0);
    dk_buf_free(&t1);
    dk_buf_free(&u0);
    dk_buf_free(&u1);
    dk_arena_free(&a);
    free(area);
    free(ref);
    free(wtf);
    free(u);
}

/*
 * JSON text that is valid UTF-8 reads with DK_READ_VALID_UTF8 (strings'
 * non-ASCII bytes not checked, only noted) to the same tape and UTF-16
 * side table as without it.
 */
static void check_valid_utf8_read(const uint8_t *json, size_t n, int must_parse, const char *what)
{
    dk_buf t0, t1, u0, u1;
    dk_arena a;
    dk_err e0, e1;
    int r0, r1;

    dk_buf_init(&t0);
    dk_buf_init(&t1);
    dk_buf_init(&u0);
    dk_buf_init(&u1);
    dk_arena_init(&a);
    r0 = dk_json_read_ex(json, n, 0, NULL, &a, &t0, &u0, NULL, &e0);
    dk_arena_reset(&a);
    r1 = dk_json_read_ex(json, n, DK_READ_VALID_UTF8, NULL, &a, &t1, &u1, NULL, &e1);
    CHECK(r0 == r1 && (r0 == DK_OK || (!must_parse && e0.pos == e1.pos)) && t0.len == t1.len &&
              (t0.len == 0 || memcmp(t0.data, t1.data, t0.len) == 0) && u0.len == u1.len &&
              (u0.len == 0 || memcmp(u0.data, u1.data, u0.len) == 0),
          "%s: read with DK_READ_VALID_UTF8 differs (codes %d %d, tape %zu/%zu, table %zu/%zu)",
          what, r0, r1, t0.len, t1.len, u0.len, u1.len);
    dk_buf_free(&t0);
    dk_buf_free(&t1);
    dk_buf_free(&u0);
    dk_buf_free(&u1);
    dk_arena_free(&a);
}

/*
 * DK_T_STR16: dk_utf16_to_wtf8 of units u[0..n) against a plain reference
 * (pairs as one code point, lone surrogates as their WTF-8), and the tape
 * of a STR16 value written by both writers exactly as the tape of the same
 * string as a STR, alone and between other values.
 */
static void check_str16(const uint16_t *u, size_t n, const char *what)
{
    uint8_t want[3 * STR16_TEST_MAX + 4] = {0}, got[3 * STR16_TEST_MAX + 16] = {0};
    size_t w = 0, len;
    int lone = 0;
    dk_buf t16, t8, o16, o8;
    dk_arena a;
    dk_err err;

    w = ref_units(u, n, want, REF_WTF8, &lone);
    len = dk_utf16_to_wtf8((const uint8_t *)u, n, got); /* LE host */
    CHECK(len == w && memcmp(got, want, w) == 0, "%s: %zu bytes, want %zu", what, len, w);
    check_utf8(u, n, what);

    dk_buf_init(&t16);
    dk_buf_init(&t8);
    dk_buf_init(&o16);
    dk_buf_init(&o8);
    dk_arena_init(&a);
    for (int wrap = 0; wrap < 2; wrap++) {
        uint8_t hdr[9];
        t16.len = t8.len = 0;
        if (wrap) { /* [1, s, s] */
            hdr[0] = DK_T_ARRAY;
            dk_wr32(hdr + 1, 3);
            hdr[5] = DK_T_INT;
            CHECK(app(&t16, hdr, 6) && app(&t16, (const uint8_t *)"\x01\0\0\0", 4), "tape");
            CHECK(app(&t8, hdr, 6) && app(&t8, (const uint8_t *)"\x01\0\0\0", 4), "tape");
        }
        for (int k = 0; k < (wrap ? 2 : 1); k++) {
            hdr[0] = DK_T_STR16;
            dk_wr32(hdr + 1, (uint32_t)n);
            CHECK(app(&t16, hdr, 5) && app(&t16, (const uint8_t *)u, 2 * n), "tape");
            hdr[0] = DK_T_STR;
            dk_wr32(hdr + 1, (uint32_t)w << DK_STR_SHIFT | (lone ? DK_STR_WTF8 : 0));
            CHECK(app(&t8, hdr, 5) && app(&t8, want, w), "tape");
        }
        for (int pb = 0; pb < 2; pb++) {
            int r16, r8;
            dk_arena_reset(&a);
            r16 = pb ? dk_pb_write_opts(t16.data, t16.len, NULL, &a, &o16, &err)
                     : dk_json_write_opts(t16.data, t16.len, NULL, &a, &o16, &err);
            dk_arena_reset(&a);
            r8 = pb ? dk_pb_write_opts(t8.data, t8.len, NULL, &a, &o8, &err)
                    : dk_json_write_opts(t8.data, t8.len, NULL, &a, &o8, &err);
            CHECK(r16 == DK_OK && r8 == DK_OK && o16.len == o8.len &&
                      memcmp(o16.data, o8.data, o8.len) == 0,
                  "%s: STR16 written as STR (%s, wrap %d): codes %d %d", what,
                  pb ? "protobuf" : "JSON", wrap, r16, r8);
            if (!pb && r8 == DK_OK) check_valid_utf8_read(o8.data, o8.len, 1, what);
        }
    }
    dk_buf_free(&t16);
    dk_buf_free(&t8);
    dk_buf_free(&o16);
    dk_buf_free(&o8);
    dk_arena_free(&a);
}

static uint32_t rng_state = 0x12345678u;

static uint32_t rnd(void)
{
    return xorshift32(&rng_state);
}

/*
 * keep_out of dk_json_read_ex, dk_json_read_utf16 and (the document
 * transcoded) dk_pb_read_ex: want, how many referenceable values the
 * document's $refs need (the highest index one names, plus one).
 */
static void check_keep(const char *json, uint32_t want)
{
    dk_buf tape, u16, pb, mid;
    dk_arena a;
    dk_err err;
    size_t n = strlen(json), len = 0;
    uint32_t k_json = UINT32_MAX, k_units = UINT32_MAX, k_pb = UINT32_MAX;
    uint16_t units[256];
    uint8_t *area;
    size_t un;

    CHECK(n < 256, "%s: short", json);
    if (n >= 256) return;
    un = dk_wtf8_to_utf16((const uint8_t *)json, n, (uint8_t *)units);
    dk_buf_init(&tape);
    dk_buf_init(&u16);
    dk_buf_init(&pb);
    dk_buf_init(&mid);
    dk_arena_init(&a);
    CHECK(dk_json_read_ex((const uint8_t *)json, n, 0, NULL, &a, &tape, &u16, &k_json, &err) ==
              DK_OK,
          "%s: JSON read", json);
    area = malloc(DK_U16_AREA(un) + DK_JSON_PADDING);
    CHECK(area != NULL, "malloc");
    if (area != NULL) {
        memcpy(area + DK_U16_AT(un), units, 2 * un);
        dk_arena_reset(&a);
        CHECK(dk_json_read_utf16(area, un, NULL, &a, &tape, &u16, &len, &k_units, &err) == DK_OK,
              "%s: UTF-16 read", json);
        free(area);
    }
    dk_arena_reset(&a);
    CHECK(dk_pb_from_json_opts((const uint8_t *)json, n, 0, NULL, &a, &mid, &pb, &err) == DK_OK,
          "%s: to protobuf", json);
    dk_arena_reset(&a);
    CHECK(dk_pb_read_ex(pb.data, pb.len, NULL, 0, DK_READ_KEYREFS, &a, &tape, &u16, &k_pb, &err) ==
              DK_OK,
          "%s: protobuf read", json);
    CHECK(k_json == want && k_units == want && k_pb == want, "%s: keep %u, %u, %u; want %u", json,
          k_json, k_units, k_pb, want);
    dk_buf_free(&tape);
    dk_buf_free(&u16);
    dk_buf_free(&pb);
    dk_buf_free(&mid);
    dk_arena_free(&a);
}

/*
 * The same JSON document read by dk_json_read_ex, and transcoded to
 * protobuf then read by dk_pb_read_ex: the same tape and the same side
 * table, byte for byte. Then the protobuf read again under a max_out that
 * fits the tape alone: refused when the table is asked for (its bytes count
 * too), nothing left in either buffer; admitted with room for the table.
 */
static void check_pb_side_table(const char *json, long want_refs)
{
    dk_buf t1, u1, t2, u2, pb, mid;
    dk_arena a;
    dk_err err;
    size_t n = strlen(json);
    uint32_t ids1 = 0, ids = 0;
    int rc;

    dk_buf_init(&t1);
    dk_buf_init(&u1);
    dk_buf_init(&t2);
    dk_buf_init(&u2);
    dk_buf_init(&pb);
    dk_buf_init(&mid);
    dk_arena_init(&a);
    rc = dk_json_read_ex((const uint8_t *)json, n, 0, NULL, &a, &t1, &u1, &ids1, &err);
    CHECK(rc == DK_OK, "%s: JSON read %d", json, rc);
    dk_arena_reset(&a);
    rc = dk_pb_from_json_opts((const uint8_t *)json, n, 0, NULL, &a, &mid, &pb, &err);
    CHECK(rc == DK_OK, "%s: to protobuf %d", json, rc);
    dk_arena_reset(&a);
    rc = dk_pb_read_ex(pb.data, pb.len, NULL, 0, 0, &a, &t2, &u2, NULL, &err);
    CHECK(rc == DK_OK, "%s: protobuf read %d", json, rc);
    CHECK(t1.len == t2.len && memcmp(t1.data, t2.data, t1.len) == 0,
          "%s: tapes differ (%zu, %zu bytes)", json, t1.len, t2.len);
    CHECK(u1.len == u2.len && (u1.len == 0 || memcmp(u1.data, u2.data, u1.len) == 0),
          "%s: side tables differ (%zu, %zu bytes)", json, u1.len, u2.len);
    /* With key references (what JS decodes through): expanded, the same
     * tape; a side-table entry, with the right units, for every non-ASCII
     * str written in full; a reference for every repeated member key. */
    {
        dk_buf t3, u3, ex;
        size_t non_ascii = 0;
        long refs, entries;

        dk_buf_init(&t3);
        dk_buf_init(&u3);
        dk_buf_init(&ex);
        dk_arena_reset(&a);
        rc = dk_pb_read_ex(pb.data, pb.len, NULL, 0, DK_READ_KEYREFS | DK_READ_STRREFS, &a, &t3,
                           &u3, &ids, &err);
        CHECK(rc == DK_OK, "%s: protobuf read with key and string references %d", json, rc);
        CHECK((long)ids == tw_ref_keep(t2.data, t2.len) && ids == ids1,
              "%s: %u referenceable values to keep, the tape's references need %ld", json, ids,
              tw_ref_keep(t2.data, t2.len));
        refs = tw_expand_refs(t3.data, t3.len, &ex, &non_ascii);
        CHECK(refs >= 0 && ex.len == t2.len && memcmp(ex.data, t2.data, ex.len) == 0,
              "%s: key and string references expand to the plain tape (%ld)", json, refs);
        entries = tw_check_side_table(t3.data, t3.len, u3.data, u3.len, NULL, 0, NULL);
        CHECK(entries >= 0 && (size_t)entries == non_ascii,
              "%s: %ld side-table entries for %zu non-ASCII strs", json, entries, non_ascii);
        CHECK(refs == want_refs || want_refs < 0, "%s: %ld key references, want %ld", json, refs,
              want_refs);
        dk_buf_free(&t3);
        dk_buf_free(&u3);
        dk_buf_free(&ex);
    }
    /* The budget is the tape's, exactly, with the table or without (the
     * table is never charged): max_out = the tape's size admits it, one
     * byte less fails and leaves nothing. */
    {
        size_t tape_len = t2.len, all_len = u2.len;

        dk_arena_reset(&a);
        rc = dk_pb_read_ex(pb.data, pb.len, NULL, tape_len, 0, &a, &t2, NULL, NULL, &err);
        CHECK(rc == DK_OK && t2.len == tape_len, "%s: max_out = tape, no table: %d", json, rc);
        dk_arena_reset(&a);
        rc = dk_pb_read_ex(pb.data, pb.len, NULL, tape_len - 1, 0, &a, &t2, NULL, NULL, &err);
        CHECK(rc == DK_ERR_TOO_LARGE && t2.len == 0, "%s: max_out = tape - 1, no table: %d", json,
              rc);
        dk_arena_reset(&a);
        rc = dk_pb_read_ex(pb.data, pb.len, NULL, tape_len, 0, &a, &t2, &u2, NULL, &err);
        /* the table stops at half of max_out: some entries, or all */
        CHECK(rc == DK_OK && t2.len == tape_len && u2.len <= all_len && u2.len <= tape_len / 2 &&
                  (all_len <= tape_len / 2 ? u2.len == all_len : 1),
              "%s: max_out = tape, with the table: %d, table %zu of %zu", json, rc, u2.len,
              all_len);
        dk_arena_reset(&a);
        rc = dk_pb_read_ex(pb.data, pb.len, NULL, tape_len - 1, 0, &a, &t2, &u2, NULL, &err);
        CHECK(rc == DK_ERR_TOO_LARGE && t2.len == 0 && u2.len == 0,
              "%s: max_out = tape - 1, with the table: %d, %zu, %zu", json, rc, t2.len, u2.len);
    }
    dk_buf_free(&t1);
    dk_buf_free(&u1);
    dk_buf_free(&t2);
    dk_buf_free(&u2);
    dk_buf_free(&pb);
    dk_buf_free(&mid);
    dk_arena_free(&a);
}

/*
 * The JSON writer's UTF-16 output (DK_WRITE_MAY_WIDE, dk_json_encode_ctx's):
 * the same outcome as the UTF-8 writer, and when it is units, exactly the
 * UTF-8 output's widening; ASCII and other UTF-8 reported as such.
 */
static void check_wide_write(const uint8_t *tape, size_t len, const char *what)
{
    /* fresh buffers each call: with DK_BUF_EXACT (the sanitizer builds) a
       store past the room a writer reserved is past the allocation */
    dk_buf narrow, wide, back;
    dk_arena a;
    dk_err err1, err2;
    int form = -1, rc1, rc2;

    dk_buf_init(&narrow);
    dk_buf_init(&wide);
    dk_buf_init(&back);
    dk_arena_init(&a);
    rc1 = dk_json_write_opts(tape, len, NULL, &a, &narrow, &err1);
    dk_arena_reset(&a);
    rc2 = dk_json_write_ex(tape, len, NULL, DK_WRITE_MAY_WIDE, &a, &wide, &form, &err2);
    CHECK(rc1 == rc2 && (rc1 == DK_OK || err1.pos == err2.pos), "%s: outcomes %d at %zu, %d at %zu",
          what, rc1, err1.pos, rc2, err2.pos);
    if (rc1 == DK_OK && rc2 == DK_OK) {
        int ascii = 1;

        for (size_t i = 0; i < narrow.len; i++) ascii &= narrow.data[i] < 0x80;
        if (form == DK_FORM_UTF16) {
            dk_err e;
            if (dk_buf_reserve(&back, 2 * narrow.len + 32, &e, 0) != DK_OK) abort();
            back.len = 2 * dk_wtf8_to_utf16(narrow.data, narrow.len, back.data);
            /* (the output may be ASCII when the string that made it
               units had only lone surrogates, written as escapes) */
            CHECK(back.len == wide.len && memcmp(back.data, wide.data, back.len) == 0,
                  "%s: units differ from the widened UTF-8 (%zu, %zu bytes)", what, back.len,
                  wide.len);

        } else {
            CHECK(form == (ascii ? DK_FORM_ASCII : DK_FORM_UTF8) && narrow.len == wide.len &&
                      memcmp(narrow.data, wide.data, wide.len) == 0,
                  "%s: form %d, ascii %d, %zu and %zu bytes", what, form, ascii, narrow.len,
                  wide.len);
        }
    }
    dk_buf_free(&narrow);
    dk_buf_free(&wide);
    dk_buf_free(&back);
    dk_arena_free(&a);
}

/* A DK_T_STR's length word and bytes of the code points cps[0..k) (lone
 * surrogates as WTF-8). */
static void tb_cps(dk_buf *t, const uint32_t *cps, size_t k)
{
    size_t at = t->len, n = 0;
    int ascii = 1, lone = 0;

    tb_u32(t, 0);
    for (size_t i = 0; i < k; i++) {
        uint8_t b[4];
        size_t m = put_wtf8(b, cps[i]);
        tb_raw(t, b, m);
        n += m;
        ascii &= cps[i] < 0x80;
        lone |= cps[i] >= 0xD800 && cps[i] <= 0xDFFF;
    }
    dk_wr32(t->data + at,
            (uint32_t)n << DK_STR_SHIFT | (ascii ? DK_STR_ASCII : 0) | (lone ? DK_STR_WTF8 : 0));
}
/* A DK_T_STR16 of the code points cps[0..k) (a lone surrogate as one unit). */
static void tb_str16(dk_buf *t, const uint32_t *cps, size_t k)
{
    uint16_t u[2 * 64];
    size_t n = 0;

    for (size_t i = 0; i < k; i++) n += put_units(u + n, cps[i]);
    tb_op(t, DK_T_STR16);
    tb_u32(t, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        tb_op(t, u[i] & 0xFF);
        tb_op(t, u[i] >> 8);
    }
}

/* Random documents of strings (both kinds), keys, numbers, dates and bytes. */
static void check_wide_writes(void)
{
    static const uint32_t palette[] = {
        'a',  'b',   ' ',   'z',    '0',    '"',     '\\',     '\n',   0x01,   0x1F,   0x7F,  0xE9,
        0xFC, 0x7FF, 0x800, 0x6771, 0xFFFF, 0x1F680, 0x10FFFF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF};
    uint32_t rng = 0x5eed16;

    for (int doc = 0; doc < 4000; doc++) {
        dk_buf t = {0};
        uint32_t items = 1 + xorshift32(&rng) % 12;
        /* mostly ASCII, or mostly not */
        uint32_t odd = xorshift32(&rng) % 3 == 0 ? 50 : 4;

        tb_op(&t, DK_T_ARRAY);
        tb_u32(&t, items);
        for (uint32_t it = 0; it < items; it++) {
            uint32_t cps[64];
            size_t k = xorshift32(&rng) % 64;

            for (size_t i = 0; i < k; i++) {
                uint32_t r = xorshift32(&rng) % 100;
                cps[i] = r < odd ? palette[xorshift32(&rng) % (sizeof palette / sizeof palette[0])]
                                 : 'a' + r % 26;
            }
            /* no pair split across two lone halves (one 4-byte sequence in WTF-8) */
            for (size_t i = 0; i + 1 < k; i++)
                if (cps[i] >= 0xD800 && cps[i] <= 0xDBFF && cps[i + 1] >= 0xDC00 &&
                    cps[i + 1] <= 0xDFFF)
                    cps[i + 1] = 'x';
            switch (xorshift32(&rng) % 7) {
            case 0: tb_str16(&t, cps, k); break;
            case 1:
                tb_op(&t, DK_T_STR);
                tb_cps(&t, cps, k);
                break;
            case 2: /* an object: a key of these code points (its first
                       '$' escaped as "$$" half the time), a STR16 value */
                if (k > 0 && xorshift32(&rng) % 2) cps[0] = '$';
                tb_op(&t, DK_T_OBJECT);
                tb_u32(&t, 1);
                tb_cps(&t, cps, k < 20 ? k : 20);
                tb_str16(&t, cps, k);
                break;
            case 3:
                tb_op(&t, DK_T_INT);
                tb_u32(&t, xorshift32(&rng));
                break;
            case 4:
                tb_op(&t, DK_T_F64);
                tb_f64(&t, (double)xorshift32(&rng) / 7.0);
                break;
            case 5:
                tb_op(&t, DK_T_DATE);
                tb_f64(&t, (double)(xorshift32(&rng) % 100000) * 1e7);
                break;
            default:
                tb_op(&t, DK_T_BYTES);
                tb_op(&t, DK_BYTES_BUFFER);
                tb_u32(&t, (uint32_t)k);
                for (size_t i = 0; i < k; i++) tb_op(&t, (int)(cps[i] & 0xFF));
            }
        }
        check_wide_write(t.data, t.len, "random document");
        /* and cut short: the same tape errors at the same offsets */
        if (t.len > 1) check_wide_write(t.data, xorshift32(&rng) % t.len, "cut document");
        dk_buf_free(&t);
    }
}

/*
 * The sequence at b[0..4) by first principles: its length from the lead
 * byte, continuation bytes, and valid exactly when dk_put_utf8 writes the
 * same bytes back for its code point (no overlong form) and that code point
 * is at most U+10FFFF and, unless lone_ok, not a surrogate. *bad is the
 * first byte no valid sequence can have there. Returns the length, 0 when
 * invalid.
 */
static size_t ref_seq(const uint8_t *b, int lone_ok, size_t *bad)
{
    size_t len = b[0] >= 0xC0 && b[0] <= 0xDF   ? 2
                 : b[0] >= 0xE0 && b[0] <= 0xEF ? 3
                 : b[0] >= 0xF0 && b[0] <= 0xF7 ? 4
                                                : 0;
    uint32_t cp;
    uint8_t back[4];

    if (len == 0 || (len == 2 && b[0] < 0xC2) || (len == 4 && b[0] > 0xF4)) {
        *bad = 0;
        return 0;
    }
    if ((b[1] & 0xC0) != 0x80) {
        *bad = 1;
        return 0;
    }
    /* overlong forms, the range and surrogates depend on b[0..2) alone */
    cp = len == 2   ? (b[0] & 0x1Fu) << 6 | (b[1] & 0x3Fu)
         : len == 3 ? (b[0] & 0x0Fu) << 12 | (b[1] & 0x3Fu) << 6
                    : (b[0] & 0x07u) << 18 | (b[1] & 0x3Fu) << 12;
    if (cp > 0x10FFFF || dk_put_utf8(back, cp) != len ||
        (!lone_ok && cp >= 0xD800 && cp <= 0xDFFF)) {
        *bad = 1;
        return 0;
    }
    for (size_t i = 2; i < len; i++) {
        if ((b[i] & 0xC0) != 0x80) {
            *bad = i;
            return 0;
        }
    }
    return len;
}

/* dk_wtf8_seq against ref_seq for every lead and second byte, with
 * continuation and other bytes after, both modes, and cut at every n. */
static void check_wtf8_seq(void)
{
    static const uint8_t tails[] = {0x80, 0xBF, 0x9F, 0x00, 0x7F, 0xC0, 0xFF};
    for (unsigned b0 = 0x80; b0 <= 0xFF; b0++) {
        for (unsigned b1 = 0; b1 <= 0xFF; b1++) {
            for (size_t t2 = 0; t2 < sizeof tails; t2++) {
                for (size_t t3 = 0; t3 < sizeof tails; t3++) {
                    uint8_t b[4] = {(uint8_t)b0, (uint8_t)b1, tails[t2], tails[t3]};
                    for (int lone_ok = 0; lone_ok <= 1; lone_ok++) {
                        size_t bad = 99, want_bad = 99, n;
                        int sur = -1;
                        size_t want = ref_seq(b, lone_ok, &want_bad);
                        size_t got = dk_wtf8_seq(b, 4, lone_ok, &bad, &sur);
                        CHECK(got == want && (got != 0 || bad == want_bad) &&
                                  sur == (got == 3 && b0 == 0xED && b1 >= 0xA0),
                              "%02x %02x %02x %02x lone_ok %d: %zu (bad %zu, sur %d), want %zu "
                              "(bad %zu)",
                              b0, b1, b[2], b[3], lone_ok, got, bad, sur, want, want_bad);
                        for (n = 1; want != 0 && n < want; n++)
                            CHECK(dk_wtf8_seq(b, n, lone_ok, &bad, &sur) == 0 && bad == n &&
                                      sur == 0,
                                  "%02x %02x cut at %zu: accepted", b0, b1, n);
                    }
                }
            }
        }
    }
}

int main(void)
{
    static const uint32_t specials[] = {0x00,   0x7F,   0x80,   0x7FF,   0x800,    0xD800, 0xDBFF,
                                        0xDC00, 0xDFFF, 0xFFFF, 0x10000, 0x10FFFF, 0xE9,   0x6771};
    uint32_t cps[64];

    CHECK(dk_wtf8_to_utf16((const uint8_t *)"", 0, (uint8_t *)cps) == 0, "empty");
    check_wide_writes();
    check_wtf8_seq();
    /* DK_READ_VALID_UTF8: a string that ends in a block with non-ASCII
       bytes after its closing quote is still ASCII (as without the flag);
       and the public entry points never pass the flag on */
    {
        static const char *after[] = {"\"\xc3\xa9\"", "\"\xe6\x9d\xb1\"", "1,\"\xf0\x9f\x98\x80\"",
                                      "{\"\xc3\xa9\":1}", "\"a\\u00e9\xc3\xa9\""};
        char text[128];
        for (size_t k = 0; k < 40; k++) {
            for (size_t j = 0; j < sizeof after / sizeof after[0]; j++) {
                int len =
                    snprintf(text, sizeof text, "[\"%.*s\",%s]", (int)k,
                             "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz", after[j]);
                check_valid_utf8_read((const uint8_t *)text, (size_t)len, 1,
                                      "ASCII string, then non-ASCII");
                len = snprintf(text, sizeof text, "{\"%.*s\":%s}", (int)k,
                               "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz", after[j]);
                check_valid_utf8_read((const uint8_t *)text, (size_t)len, j != 2,
                                      "ASCII key, then non-ASCII");
            }
        }
    }
    /* short strings and keys (the reader's fast path, up to 16 bytes) with
       a non-ASCII character or an escape at every place: the same tape and
       side table with DK_READ_VALID_UTF8, where non-ASCII bytes are only
       noted, and from UTF-16 */
    {
        static const char *ins[] = {"\xc3\xa9", "\xe6\x9d\xb1", "\xf0\x9f\x98\x80",
                                    "\\n",      "\\u00e9",      ""};
        static const char abc[] = "abcdefghijklmnopqrstuvwxyz";
        char text[160];

        for (int k = 0; k <= 20; k++) {
            for (int j = 0; j <= k; j++) {
                for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++) {
                    int len = snprintf(text, sizeof text, "[\"%.*s%s%.*s\",{\"%.*s%s%.*s\":1}]", j,
                                       abc, ins[i], k - j, abc + j, j, abc, ins[i], k - j, abc + j);

                    check_valid_utf8_read((const uint8_t *)text, (size_t)len, 1, "short string");
                    check_read_utf16(text, -1, "short string");
                }
            }
        }
    }
    {
        static const char bad[] = "[\"\xff\xfe\",\"\xed\xa0\x80\",\"\xf4\"]";
        dk_buf t, o;
        dk_arena a;
        dk_err err;
        dk_buf_init(&t);
        dk_buf_init(&o);
        dk_arena_init(&a);
        CHECK(dk_json_read_opts((const uint8_t *)bad, sizeof bad - 1, DK_READ_VALID_UTF8, NULL, &a,
                                &t, &err) == DK_ERR_SYNTAX &&
                  err.pos == 2,
              "dk_json_read_opts passed DK_READ_VALID_UTF8 on (code %d at %zu)", (int)err.code,
              err.pos);
        dk_arena_reset(&a);
        CHECK(dk_json_read_opts((const uint8_t *)bad, sizeof bad - 1, ~(uint32_t)DK_READ_PADDED,
                                NULL, &a, &t, &err) == DK_ERR_SYNTAX &&
                  err.pos == 2,
              "dk_json_read_opts with every other bit: code %d at %zu", (int)err.code, err.pos);
        dk_arena_reset(&a);
        CHECK(dk_pb_from_json_opts((const uint8_t *)bad, sizeof bad - 1, DK_READ_VALID_UTF8, NULL,
                                   &a, &t, &o, &err) == DK_ERR_SYNTAX &&
                  err.pos == 2,
              "dk_pb_from_json_opts passed DK_READ_VALID_UTF8 on (code %d at %zu)", (int)err.code,
              err.pos);
        dk_buf_free(&t);
        dk_buf_free(&o);
        dk_arena_free(&a);
    }
    /* one special code point at every offset of an ASCII run */
    for (size_t s = 0; s < sizeof specials / sizeof specials[0]; s++) {
        for (size_t len = 0; len <= 40; len++) {
            for (size_t at = 0; at <= len; at++) {
                for (size_t i = 0; i <= len; i++)
                    cps[i] = i == at ? specials[s] : 'a' + (uint32_t)(i % 26);
                check_cps(cps, len + 1, "special in a run");
            }
        }
    }
    /* random mixes, weighted towards ASCII runs */
    for (int t = 0; t < 20000; t++) {
        size_t k = rnd() % 64;

        for (size_t i = 0; i < k; i++) {
            uint32_t r = rnd() % 10, cp;

            if (r < 6)
                cp = rnd() % 0x80;
            else if (r < 7)
                cp = 0x80 + rnd() % 0x780;
            else if (r < 9)
                cp = 0x800 + rnd() % 0xF800;
            else
                cp = 0x10000 + rnd() % 0x100000;
            cps[i] = cp;
        }
        check_cps(cps, k, "random");
    }
    /* DK_T_STR16: every special unit at every offset of an ASCII run (the
       8- and 16-unit fast paths), pairs, random mixes; then bad payloads */
    {
        static const uint16_t units[] = {0x00,   0x08,   0x09,   0x0A,   0x0C,   0x0D,   0x1F,
                                         0x20,   0x22,   0x5C,   0x7F,   0x80,   0xFF,   0x100,
                                         0x7FF,  0x800,  0x6771, 0xD7FF, 0xD800, 0xDBFF, 0xDC00,
                                         0xDFFF, 0xE000, 0xFFFD, 0xFFFF};
        uint16_t u[128] = {0};

        check_str16(u, 0, "empty");
        for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) {
            for (size_t len = 1; len <= 40; len++) {
                for (size_t at = 0; at < len; at++) {
                    for (size_t i = 0; i < len; i++)
                        u[i] = i == at ? units[k] : (uint16_t)('a' + i % 26);
                    check_str16(u, len, "special unit in a run");
                    if (at + 1 < len) {
                        u[at] = 0xD83D;
                        u[at + 1] = 0xDE00;
                        check_str16(u, len, "pair in a run");
                    }
                }
            }
        }
        /* long runs of one kind, where each unit takes the most room
           (escapes, lone surrogates, 3-byte units), and mixes of them; 400
           units: a buffer grown for 2 bytes a unit (1,024) would be short
           of the 1,202 that 3-byte units take */
        {
            static const uint16_t kinds[] = {0x01,   0x0A,   0x22,  0x5C, 0xDC00,
                                             0xD800, 0x4E00, 0x7FF, 'a'};
            static const size_t lens[] = {300, 400, 700, STR16_TEST_MAX};
            static uint16_t lu[STR16_TEST_MAX];
            const size_t nk = sizeof kinds / sizeof kinds[0];
            for (size_t k = 0; k < nk; k++) {
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                    size_t len = lens[li];
                    for (size_t i = 0; i < len; i++) lu[i] = kinds[k];
                    check_str16(lu, len, "a long run of one unit");
                    for (size_t i = 0; i < len; i++) lu[i] = kinds[(k + i) % nk];
                    check_str16(lu, len, "a long mix");
                }
            }
        }
        for (int t = 0; t < 5000; t++) {
            size_t k = rnd() % 128;
            for (size_t i = 0; i < k; i++) {
                uint32_t r = rnd() % 12;
                if (r < 7)
                    u[i] = (uint16_t)(0x20 + rnd() % 0x60);
                else if (r < 8)
                    u[i] = (uint16_t)(0x80 + rnd() % 0x780);
                else if (r < 10)
                    u[i] = (uint16_t)(0x800 + rnd() % 0xF800);
                else if (r < 11 && i + 1 < k) {
                    u[i++] = (uint16_t)(0xD800 + rnd() % 0x400);
                    u[i] = (uint16_t)(0xDC00 + rnd() % 0x400);
                } else
                    u[i] = (uint16_t)(0xDC00 + rnd() % 0x400);
            }
            check_str16(u, k, "random units");
        }
        {
            /* truncated units, and a count past DK_STR16_MAX_UNITS */
            static const uint8_t cut[] = {DK_T_STR16, 3, 0, 0, 0, 'a', 0, 'b', 0, 'c'};
            static const uint8_t huge[] = {DK_T_STR16, 0x55, 0x55, 0x55, 0x15};
            dk_buf o;
            dk_arena a;
            dk_err err;
            dk_buf_init(&o);
            dk_arena_init(&a);
            CHECK(dk_json_write_opts(cut, sizeof cut, NULL, &a, &o, &err) == DK_ERR_TAPE &&
                      err.pos == 0,
                  "JSON: cut STR16 (at %zu)", err.pos);
            CHECK(dk_pb_write_opts(cut, sizeof cut, NULL, &a, &o, &err) == DK_ERR_TAPE &&
                      err.pos == 0,
                  "pb: cut STR16 (at %zu)", err.pos);
            CHECK(dk_json_write_opts(huge, sizeof huge, NULL, &a, &o, &err) == DK_ERR_TAPE &&
                      err.pos == 0 && strcmp(err.msg, "tape UTF-16 string too long") == 0,
                  "JSON: STR16 too long (%s)", err.msg);
            CHECK(dk_pb_write_opts(huge, sizeof huge, NULL, &a, &o, &err) == DK_ERR_TAPE &&
                      err.pos == 0 && strcmp(err.msg, "tape UTF-16 string too long") == 0,
                  "pb: STR16 too long (%s)", err.msg);
            {
                /* one unit under the bound: the count is accepted, the
                   units are missing */
                static const uint8_t under[] = {DK_T_STR16, 0x54, 0x55, 0x55, 0x15};
                CHECK(dk_json_write_opts(under, sizeof under, NULL, &a, &o, &err) == DK_ERR_TAPE &&
                          strcmp(err.msg, "tape string runs past the end of the tape") == 0,
                      "JSON: STR16 one under the bound (%s)", err.msg);
            }
            dk_buf_free(&o);
            dk_arena_free(&a);
        }
    }
    /* STR16 texts in the protobuf encoder live in a scratch that the next
       STR16 overwrites: a new text is kept as a copy, and a repeat that is
       written in full (its reference would be as long: index >= 2^14, one
       unit) points at that copy. The same tape with STRs is the reference. */
    {
        dk_buf t16, t8, o16, o8;
        dk_arena a;
        dk_err err;
        uint8_t h[5];
        char num[16];
        const uint32_t distinct = 16400;
        static const uint16_t x[] = {'x'}, yy[] = {0x00E9, 'y'}, z[] = {'z'};
        const uint16_t *strs[] = {x, yy, x, z, yy};
        const size_t lens[] = {1, 2, 1, 1, 2};
        int ok = 1;

        dk_buf_init(&t16);
        dk_buf_init(&t8);
        dk_buf_init(&o16);
        dk_buf_init(&o8);
        dk_arena_init(&a);
        h[0] = DK_T_ARRAY;
        dk_wr32(h + 1, distinct + 5);
        ok &= app(&t16, h, 5) && app(&t8, h, 5);
        for (uint32_t i = 0; i < distinct; i++) { /* texts 0 .. distinct-1 */
            size_t k = (size_t)snprintf(num, sizeof num, "%u", i);
            h[0] = DK_T_STR;
            dk_wr32(h + 1, (uint32_t)k << DK_STR_SHIFT | DK_STR_ASCII);
            ok &= app(&t16, h, 5) && app(&t16, num, k) && app(&t8, h, 5) && app(&t8, num, k);
        }
        for (size_t j = 0; j < 5; j++) {
            uint8_t w8[8];
            size_t wn = 0;
            for (size_t q = 0; q < lens[j]; q++) wn += put_wtf8(w8 + wn, strs[j][q]);
            h[0] = DK_T_STR16;
            dk_wr32(h + 1, (uint32_t)lens[j]);
            ok &= app(&t16, h, 5) && app(&t16, strs[j], 2 * lens[j]);
            h[0] = DK_T_STR;
            dk_wr32(h + 1, (uint32_t)wn << DK_STR_SHIFT | (wn == lens[j] ? DK_STR_ASCII : 0));
            ok &= app(&t8, h, 5) && app(&t8, w8, wn);
        }
        CHECK(ok, "repeat tapes");
        dk_arena_reset(&a);
        CHECK(dk_pb_write_opts(t16.data, t16.len, NULL, &a, &o16, &err) == DK_OK,
              "repeat: STR16 tape");
        dk_arena_reset(&a);
        CHECK(dk_pb_write_opts(t8.data, t8.len, NULL, &a, &o8, &err) == DK_OK, "repeat: STR tape");
        CHECK(o16.len == o8.len && memcmp(o16.data, o8.data, o8.len) == 0,
              "repeated STR16 texts written as their STR twins");
        dk_buf_free(&t16);
        dk_buf_free(&t8);
        dk_buf_free(&o16);
        dk_buf_free(&o8);
        dk_arena_free(&a);
    }
    check_utf8_units();
    /* JSON text from a JS string: strings without escapes come from its
       own units once the UTF-8 (and padding) has not reached them */
    {
#define PAST "[\"an ASCII string long enough to keep the UTF-8 behind\","
        check_read_utf16(PAST "\"caf\xc3\xa9\",\"\xe6\x9d\xb1\xe4\xba\xac\",\"x\\u00e9 \xc3\xa9\","
                              "{\"$$\xc3\xa9\":\"\xc3\xbc\"}]",
                         4, "escapes inline, $$ keys from the units");
        /* 4-byte sequences are two units each: the strings after them too */
        check_read_utf16(
            PAST "\"\xf0\x9f\x98\x80\xf0\x9f\x98\x80"
                 "a\",\"b\xf0\x9f\x98\x80\",\"\xc3\xa9\","
                 "\"a longer one, over a block: \xe6\x9d\xb1 \xf0\x9f\x98\x80 \xc3\xa9 end\","
                 "\"\xf4\x8f\xbf\xbf\xf1\x80\x80\x80 U+10FFFF, U+40000\",\"\xc3\xbc\"]",
            6, "surrogate pairs");
        /* near the start the UTF-8 has overwritten the units */
        check_read_utf16("[\"\xc3\xa9\"]", 0, "a short text");
        check_read_utf16("[\"\xe6\x9d\xb1\xe6\x9d\xb1\xe6\x9d\xb1\xe6\x9d\xb1\xe6\x9d\xb1\xe6\x9d"
                         "\xb1\",\"\xe6\x9d\xb1\","
                         "\"\xe6\x9d\xb1\xe6\x9d\xb1\xe6\x9d\xb1\xe6\x9d\xb1\xe6\x9d\xb1\xe6\x9d"
                         "\xb1\xe6\x9d\xb1\xe6\x9d\xb1\"]",
                         0, "CJK text: three bytes a unit");
        /* long ASCII strings and keys too (a first key's $$ loses a '$'),
           from DK_U16_SRC_ASCII_MIN bytes on; not with an escape, nor a first
           key its stripped '$' makes shorter (the checker refuses short
           ASCII entries) */
        check_read_utf16(PAST "\"exactly twenty-five bytes\",\"exactly twenty-four byte\","
                              "\"\xc3\xa9\",{\"$$an ASCII key longer than 24 bytes\":1,"
                              "\"$$a key of twenty-five by\":2,\"$$a key of twenty-four b\":3},"
                              "{\"$$a first key of 25 bytes\":4},"
                              "\"an escape\\n in an ASCII string over 24\"]",
                         4, "long ASCII strings and keys");
        /* a lone surrogate is U+FFFD in the UTF-8: none from the units */
        check_read_utf16(PAST "\"\xc3\xa9\",\"\xed\xa0\x80\"]", 0, "a lone surrogate");
        check_read_utf16("[\"a\xed\xa0\x80"
                         "b\",{\"\xed\xb3\xbf\":\"\xed\xa0\x80\\n\xf0\x9f\x98\x80\"},"
                         "\"\xed\xb0\x80\xed\xa0\x80\",\"an ASCII string long enough to keep the "
                         "UTF-8 behind\"]",
                         0, "lone surrogates in values and keys, with escapes, in reverse order");
        check_read_utf16(PAST "\"\xc3\xa9\",\"\xef\xbf\xbd\"]", 2, "U+FFFD itself");
#undef PAST
        /* every start around where the units stay intact */
        for (int k = 0; k < 64; k++) {
            char text[160];
            snprintf(
                text, sizeof text, "[\"%.*s\",\"\xc3\xa9\xc3\xa9 \xe6\x9d\xb1\",\"\xc3\xbc\"]", k,
                "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
            check_read_utf16(text, k < 20 ? -1 : 2, "strings near the first intact unit");
        }
    }
    /* the side table of dk_json_read_ex: one entry per non-ASCII str, in
       tape order, with "$$" keys stripped like their tape strings */
    {
        static const char json[] = "{\"$$\xc3\xa9\":[\"ascii\",\"\xe6\x9d\xb1\",\"\\ud800\"],"
                                   "\"k\":{\"$Map\":[[\"\xc3\xbc\",1]]}}";
        dk_buf tape, u16;
        dk_arena a;
        dk_err err;
        size_t p = 0, entries = 0;
        /* "$$é" is the key "$é": 2 units; then one unit each */
        static const uint16_t first[] = {0x24, 0x6771, 0xD800, 0xFC};
        static const uint32_t count[] = {2, 1, 1, 1};
        int rc;

        dk_buf_init(&tape);
        dk_buf_init(&u16);
        dk_arena_init(&a);
        rc = dk_json_read_ex((const uint8_t *)json, sizeof json - 1, 0, NULL, &a, &tape, &u16, NULL,
                             &err);
        CHECK(rc == DK_OK, "side table read: %d", rc);
        while (rc == DK_OK && p + 8 <= u16.len) {
            uint32_t at = dk_rd32(u16.data + p), units = dk_rd32(u16.data + p + 4);
            uint32_t h = dk_rd32(tape.data + at);

            CHECK(entries >= 4 || units == count[entries], "entry %zu: %u units", entries, units);
            CHECK(!(h & DK_STR_ASCII), "entry %zu: an ASCII str", entries);
            if (entries < 4) {
                uint16_t v = (uint16_t)(u16.data[p + 8] | u16.data[p + 9] << 8);
                CHECK(v == first[entries], "entry %zu: %04x", entries, v);
            }
            p += 8 + 2 * (size_t)units;
            entries++;
        }
        CHECK(entries == 4 && p == u16.len, "side table: %zu entries", entries);
        dk_buf_free(&tape);
        dk_buf_free(&u16);
        dk_arena_free(&a);
    }
    {
        static const char *docs[] = {
            "\"ascii only\"",
            "\"caf\xc3\xa9 \xe6\x9d\xb1\xe4\xba\xac \xf0\x9f\x9a\x80 and a longer ASCII tail after "
            "it\"",
            "[\"\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\",\"\xc3\xbc\xc3\xbc\xc3\xbc\xc3\xbc\","
            "\"\\ud800\",\"x\\udfff\"]",
            "{\"$$\xc3\xa9\":[\"ascii\",\"\xe6\x9d\xb1\"],\"k\":{\"$Map\":[[\"\xc3\xbc\",1]]}}",
            "{\"$\":\"Cl\xc3\xa4ss\",\"n\xc3\xa4me\":\"Z\xc3\xbcrich\",\"r\":{\"$RegExp\":["
            "\"\xc3\xa9+\",\"u\"]},"
            "\"s\":{\"$Set\":[\"\xe6\x97\xa5\xe6\x9c\xac\",\"\xe6\x97\xa5\xe6\x9c\xac\"]}}",
            /* long ASCII strs (no entry from bytes): values, keys (one
               repeated: a reference the second time), a first key whose
               stripped '$' leaves 24 bytes, a class key */
            "[\"exactly twenty-five bytes\",\"exactly twenty-four byte\","
            "{\"an ASCII key of 25 bytes.\":\"an ASCII value well over twenty-five bytes\"},"
            "{\"an ASCII key of 25 bytes.\":1},{\"$$a first key of 25 bytes\":2},"
            "{\"$\":\"a class key of twenty-five\",\"k\":3}]",
        };
        for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) check_pb_side_table(docs[i], -1);
        /* repeated member keys (plain, instance, null-prototype, error,
           non-ASCII) and class keys become references (one list: the class
           key "k" names the member key "k"); Map keys and values never do */
        check_pb_side_table("[{\"k\":1,\"\xc3\xa9\":2},{\"k\":3,\"\xc3\xa9\":4},"
                            "{\"$\":\"k\",\"k\":5},{\"$\":\"k\",\"k\":6},"
                            "{\"$NullProto\":{\"k\":7}},{\"$Map\":[[\"k\",\"k\"]]},"
                            "{\"$Error\":{\"name\":\"k\",\"message\":\"k\",\"k\":8}},"
                            "{\"$Error\":{\"name\":\"E\",\"message\":\"m\"}}]",
                            10);
        check_pb_side_table("{\"a\":1,\"b\":{\"c\":2}}", 0);
        /* what a rebuild keeps for the $refs: the root is index 0, then
           every object, array, Map, Set, Date, ... in document order */
        check_keep("{\"a\":[1,2],\"d\":{\"$Date\":\"2020-01-01T00:00:00.000Z\"}}", 0);
        check_keep("[{\"a\":1},{\"$ref\":1},{\"b\":{\"$ref\":0}}]", 2);
        check_keep("[[],[],[],{\"$ref\":3},{\"$ref\":1}]", 4);
        check_keep("[{\"x\":1},{\"y\":{\"$Map\":[[{\"$ref\":1},{\"$Set\":[]}]]}},[]]", 2);
        check_keep("{\"$\":\"C\",\"self\":{\"$ref\":0}}", 1);
        check_pb_side_table("[{\"a\":1},{\"$ref\":1},{\"b\":{\"$ref\":0}},[[],{\"$ref\":4}]]", -1);
    }
    /* random arrays of random strings (lone surrogates as \u escapes),
       ASCII runs of every length between the others */
    for (int t = 0; t < 400; t++) {
        static char json[8192];
        size_t j = 0, k = 1 + rnd() % 8;

        json[j++] = '[';
        for (size_t w = 0; w < k; w++) {
            size_t m = rnd() % 48;

            if (w) json[j++] = ',';
            json[j++] = '"';
            for (size_t i = 0; i < m; i++) {
                uint32_t r = rnd() % 12, cp;

                if (r < 7)
                    cp = 0x20 + rnd() % 0x5F;
                else if (r < 8)
                    cp = 0x80 + rnd() % 0x780;
                else if (r < 10)
                    cp = 0x800 + rnd() % 0xF800;
                else
                    cp = 0x10000 + rnd() % 0x100000;
                if (cp == '"' || cp == '\\') cp = 'q';
                if (cp >= 0xD800 && cp <= 0xDFFF)
                    j += (size_t)sprintf(json + j, "\\u%04x", (unsigned)cp);
                else
                    j += put_wtf8((uint8_t *)json + j, cp);
            }
            json[j++] = '"';
        }
        json[j++] = ']';
        json[j] = 0;
        check_pb_side_table(json, -1);
    }
    /* A text that is not WTF-8 fails alike with a table and without, under
       every max_out: the outcome never depends on the table */
    {
        static const char json[] = "[\"ascii first\",\"caf\xc3\xa9 then \xe6\x9d\xb1\"]";
        dk_buf pb, mid, t, u;
        dk_arena a;
        dk_err e1, e2;
        int rc1, rc2;

        dk_buf_init(&pb);
        dk_buf_init(&mid);
        dk_buf_init(&t);
        dk_buf_init(&u);
        dk_arena_init(&a);
        rc1 = dk_pb_from_json_opts((const uint8_t *)json, sizeof json - 1, 0, NULL, &a, &mid, &pb,
                                   &e1);
        CHECK(rc1 == DK_OK, "bad text: to protobuf %d", rc1);
        for (size_t i = 0; i + 1 < pb.len; i++)
            if (pb.data[i] == 0xC3 && pb.data[i + 1] == 0xA9) pb.data[i + 1] = '(';
        for (size_t max_out = 1; max_out < 200; max_out++) {
            dk_arena_reset(&a);
            rc1 = dk_pb_read_ex(pb.data, pb.len, NULL, max_out, 0, &a, &t, NULL, NULL, &e1);
            dk_arena_reset(&a);
            rc2 = dk_pb_read_ex(pb.data, pb.len, NULL, max_out, 0, &a, &t, &u, NULL, &e2);
            CHECK(rc1 == rc2 && rc1 != DK_OK && e1.pos == e2.pos && t.len == 0 && u.len == 0,
                  "bad text, max_out %zu: %d at %zu without a table, %d at %zu with", max_out, rc1,
                  e1.pos, rc2, e2.pos);
        }
        dk_buf_free(&pb);
        dk_buf_free(&mid);
        dk_buf_free(&t);
        dk_buf_free(&u);
        dk_arena_free(&a);
    }
    /* every arena allocation may be read DK_ARENA_SLACK bytes past its end
       (AddressSanitizer fails the run otherwise): one that fills a chunk
       exactly, and one larger than the minimum chunk */
    {
        dk_arena a;
        size_t sizes[2] = {16 * 1024, 100000};

        dk_arena_init(&a);
        for (int k = 0; k < 2; k++) {
            volatile uint8_t *p = dk_arena_alloc(&a, sizes[k]);
            unsigned sum = 0;

            CHECK(p != NULL, "arena allocation of %zu", sizes[k]);
            if (p == NULL) continue;
            for (size_t i = 0; i < DK_ARENA_SLACK; i++) sum += p[sizes[k] + i];
            (void)sum;
        }
        dk_arena_free(&a);
    }
    return test_report("c-utf16");
}

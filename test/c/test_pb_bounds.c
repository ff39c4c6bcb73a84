/*
 * test_pb_bounds.c - native tests of the protobuf reader's and writer's
 * bounds on what a document may cost: string and key references, the
 * tape a decode may write (DK_PB_EXPANSION), the transcode's JSON, the
 * writer's interning tables and streams. Run by `make test` as test_proto is.
 */
#include "test_pb_util.h"

/* ---- tests -------------------------------------------------------------- */

/*
 * Which repeated string values become KIND_STRING_REF (docs/FORMAT.md,
 * canonical form): one of at most PB_REF_MAX_BYTES (64) bytes when its index
 * takes fewer bytes than the string would; a longer one is written again.
 * Through both tape kinds of a string value (T_STR and T_STR16), and the
 * decoded tape gives every string back.
 */
static void test_string_refs(void)
{
    static const size_t lens[] = {1, 2, 63, 64, 65, 66, 300};
    size_t li;
    for (li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t n = lens[li], i, j;
        char s[400];
        dk_buf t = {0};
        const uint8_t *pb, *out;
        size_t pb_len, out_len;
        dk_err err;
        Darmok__Document *doc;
        int want_ref = n <= 64;
        for (i = 0; i < n; i++) s[i] = (char)('a' + (i * 7 + n) % 26);
        /* [s, s, s as UTF-16, "x", s] */
        v_hdr(&t, DK_T_ARRAY, 5);
        v_str(&t, s, n);
        v_str(&t, s, n);
        tb_op(&t, DK_T_STR16);
        tb_u32(&t, (uint32_t)n);
        for (i = 0; i < n; i++) {
            uint8_t u[2] = {(uint8_t)s[i], 0};
            tb_raw(&t, u, 2);
        }
        v_str(&t, S("x"));
        v_str(&t, s, n);
        CHECK(t_encode(t.data, t.len, 0, &pb, &pb_len, &err) == DK_OK, "string refs %zu: encodes",
              n);
        doc = darmok__document__unpack(NULL, pb_len, pb);
        CHECK(doc != NULL && doc->n_kinds == 6, "string refs %zu: unpacks", n);
        if (doc != NULL && doc->n_kinds == 6) {
            static const size_t again[] = {2, 3, 5};
            CHECK(doc->kinds[1] == DARMOK__KIND__KIND_STRING &&
                      doc->kinds[4] == DARMOK__KIND__KIND_STRING,
                  "string refs %zu: first ones written", n);
            for (j = 0; j < 3; j++)
                CHECK(doc->kinds[again[j]] ==
                          (want_ref ? DARMOK__KIND__KIND_STRING_REF : DARMOK__KIND__KIND_STRING),
                      "string refs %zu: repeat %zu %s", n, j,
                      want_ref ? "referred to" : "written again");
            CHECK(doc->n_texts == (want_ref ? 2u : 5u), "string refs %zu: %zu texts", n,
                  doc->n_texts);
        }
        darmok__document__free_unpacked(doc, NULL);
        CHECK(t_decode(pb, pb_len, 0, 0, &out, &out_len, &err) == DK_OK, "string refs %zu: decodes",
              n);
        {
            dk_buf want = {0};
            v_hdr(&want, DK_T_ARRAY, 5);
            v_str(&want, s, n);
            v_str(&want, s, n);
            v_str(&want, s, n);
            v_str(&want, S("x"));
            v_str(&want, s, n);
            CHECK(out_len == want.len && memcmp(out, want.data, want.len) == 0,
                  "string refs %zu: same strings back", n);
            dk_buf_free(&want);
        }
        /* With DK_READ_STRREFS, each STRING_REF to an ASCII text of 25
         * bytes or more a DK_T_STRREF to its str (texts[0] at tape offset 6: after
         * the array's 5 bytes and the STR op), not a copy. */
        {
            dk_buf want = {0}, u16 = {0};
            uint8_t *copy = dup(pb, pb_len);
            int as_ref = want_ref && n >= DK_U16_SRC_ASCII_MIN;
            int rc;
            v_hdr(&want, DK_T_ARRAY, 5);
            v_str(&want, s, n);
            for (j = 0; j < 3; j++) {
                if (j == 2) v_str(&want, S("x"));
                if (as_ref) {
                    tb_op(&want, DK_T_STRREF);
                    tb_u32(&want, 6);
                } else {
                    v_str(&want, s, n);
                }
            }
            dk_arena_reset(&dec_side.arena);
            rc = dk_pb_read_ex(copy, pb_len, NULL, 0, DK_READ_STRREFS, &dec_side.arena,
                               &dec_side.out, &u16, NULL, &err);
            CHECK(rc == DK_OK && dec_side.out.len == want.len &&
                      memcmp(dec_side.out.data, want.data, want.len) == 0,
                  "string refs %zu: DK_T_STRREF with DK_READ_STRREFS (code %d)", n, rc);
            /* the JSON writer takes them only where it was told to */
            if (as_ref) {
                const uint8_t *json;
                size_t json_len;
                rc = dk_json_write_opts(dec_side.out.data, dec_side.out.len, NULL, &json_side.arena,
                                        &json_side.out, &err);
                CHECK(rc == DK_ERR_TAPE, "string refs %zu: dk_json_write_opts refuses STRREF", n);
                rc = dk_json_write_refs(dec_side.out.data, dec_side.out.len, NULL, SIZE_MAX,
                                        SIZE_MAX, &json_side.arena, &json_side.out, &err);
                CHECK(rc == DK_OK, "string refs %zu: dk_json_write_refs writes them", n);
                {
                    uint8_t *refs_json = dup(json_side.out.data, json_side.out.len);
                    size_t refs_len = json_side.out.len;
                    rc = (int)t_transcode(0, pb, pb_len, &json, &json_len, &err);
                    CHECK(rc == DK_OK && json_len == refs_len &&
                              memcmp(json, refs_json, refs_len) == 0,
                          "string refs %zu: transcode writes the same JSON", n);
                    /* a reference forward, or to itself, is a bad tape */
                    dk_wr32(dec_side.out.data + 5 + 5 + n + 1, (uint32_t)(5 + 5 + n));
                    rc = dk_json_write_refs(dec_side.out.data, dec_side.out.len, NULL, SIZE_MAX,
                                            SIZE_MAX, &json_side.arena, &json_side.out, &err);
                    CHECK(rc == DK_ERR_TAPE, "string refs %zu: a reference to itself: code %d", n,
                          rc);
                    rc = (int)t_decode(pb, pb_len, 0, 0, &out, &out_len, &err);
                    rc = rc != DK_OK ? rc
                                     : dk_json_write_opts(out, out_len, NULL, &json_side.arena,
                                                          &json_side.out, &err);
                    CHECK(rc == DK_OK && json_side.out.len == refs_len &&
                              memcmp(json_side.out.data, refs_json, refs_len) == 0,
                          "string refs %zu: as the tape of copies does", n);
                    free(refs_json);
                }
            }
            free(copy);
            dk_buf_free(&want);
            dk_buf_free(&u16);
        }
        dk_buf_free(&t);
    }
}

/*
 * Short string values are hashed with fixed-size loads that may overlap
 * (pb_hash): equal strings of every length up to 17 must be found again
 * whatever bytes follow them in the tape (the last one ends the tape, an
 * exact-size copy: ASan sees a load past it), and strings differing in any
 * one byte must stay apart.
 */
static void test_short_string_refs(void)
{
    size_t n, k;
    for (n = 0; n <= 17; n++) {
        for (k = 0; k < (n ? n : 1); k++) {
            char s[32], s2[32];
            dk_buf t = {0};
            const uint8_t *pb;
            size_t pb_len, i;
            dk_err err;
            uint8_t *copy;
            Darmok__Document *doc;
            for (i = 0; i < n; i++) s[i] = (char)('a' + (i * 5 + n) % 26);
            memcpy(s2, s, n);
            if (n) s2[k] = (char)(s[k] ^ 0x20);
            /* [s, s2, s, s2, s]: the strings followed by different bytes */
            v_hdr(&t, DK_T_ARRAY, 5);
            v_str(&t, s, n);
            v_str(&t, s2, n);
            v_str(&t, s, n);
            v_str(&t, s2, n);
            v_str(&t, s, n);
            copy = dup(t.data, t.len);
            CHECK(t_encode(copy, t.len, 0, &pb, &pb_len, &err) == DK_OK,
                  "short refs %zu/%zu: encodes", n, k);
            doc = darmok__document__unpack(NULL, pb_len, pb);
            CHECK(doc != NULL && doc->n_kinds == 6, "short refs %zu/%zu: unpacks", n, k);
            if (doc != NULL && doc->n_kinds == 6) {
                int ok = n == 0 ? doc->n_texts == 1 && doc->kinds[1] == DARMOK__KIND__KIND_STRING &&
                                      doc->kinds[2] == DARMOK__KIND__KIND_STRING_REF &&
                                      doc->kinds[5] == DARMOK__KIND__KIND_STRING_REF
                                : doc->n_texts == 2 && doc->kinds[1] == DARMOK__KIND__KIND_STRING &&
                                      doc->kinds[2] == DARMOK__KIND__KIND_STRING &&
                                      doc->kinds[3] == DARMOK__KIND__KIND_STRING_REF &&
                                      doc->kinds[4] == DARMOK__KIND__KIND_STRING_REF &&
                                      doc->kinds[5] == DARMOK__KIND__KIND_STRING_REF &&
                                      doc->n_counts == 4 && doc->counts[1] == 0 &&
                                      doc->counts[2] == 1 && doc->counts[3] == 0;
                CHECK(ok, "short refs %zu/%zu: equal strings referred to, different ones apart", n,
                      k);
            }
            darmok__document__free_unpacked(doc, NULL);
            free(copy);
            roundtrip("short refs", &t);
            dk_buf_free(&t);
        }
    }
}

/*
 * The streams start with capacities taken from the tape's length, at most
 * 256 entries (enc_prealloc), and grow past them: one object of 300 keys
 * (the key stack, the last array of the block, past its first capacity:
 * AddressSanitizer sees a write past it), each value an int and a number.
 */
static void test_stream_caps(void)
{
    dk_buf t = {0};
    size_t i;
    v_hdr(&t, DK_T_OBJECT, 300);
    for (i = 0; i < 300; i++) {
        char k[8];
        int n = snprintf(k, sizeof k, "k%zu", i);
        tb_str(&t, k, (size_t)n);
        if (i % 2)
            v_int(&t, (int32_t)i);
        else
            v_str(&t, k, (size_t)n);
    }
    roundtrip("stream caps", &t);
    dk_buf_free(&t);
}

/*
 * One-byte ASCII string values are found again through a table of their
 * own while their first texts index is below 255 (enc_string's one_char),
 * through text_tab past that: a repeat refers to the first one on both
 * sides of the boundary, whichever tape kind (T_STR, T_STR16) came first.
 */
static void test_one_char_refs(void)
{
    static const size_t before[] = {0, 253, 254, 255, 300};
    size_t bi;
    for (bi = 0; bi < sizeof before / sizeof before[0]; bi++) {
        size_t nb = before[bi], i;
        dk_buf t = {0};
        const uint8_t *pb;
        size_t pb_len;
        dk_err err;
        Darmok__Document *doc;
        static const uint8_t x16[2] = {'x', 0};
        /* [nb distinct 2-byte strings, "x" as UTF-16, "y", "x", "y", "x" as UTF-16] */
        v_hdr(&t, DK_T_ARRAY, (uint32_t)nb + 5);
        for (i = 0; i < nb; i++) {
            char s2[2] = {(char)('a' + i % 26), (char)('a' + i / 26)};
            v_str(&t, s2, 2);
        }
        tb_op(&t, DK_T_STR16);
        tb_u32(&t, 1);
        tb_raw(&t, x16, 2);
        v_str(&t, S("y"));
        v_str(&t, S("x"));
        v_str(&t, S("y"));
        tb_op(&t, DK_T_STR16);
        tb_u32(&t, 1);
        tb_raw(&t, x16, 2);
        CHECK(t_encode(t.data, t.len, 0, &pb, &pb_len, &err) == DK_OK, "one-char refs %zu: encodes",
              nb);
        doc = darmok__document__unpack(NULL, pb_len, pb);
        CHECK(doc != NULL && doc->n_kinds == nb + 6 && doc->n_texts == nb + 2 && doc->n_counts == 4,
              "one-char refs %zu: unpacks, two new texts", nb);
        if (doc != NULL && doc->n_kinds == nb + 6 && doc->n_counts == 4) {
            int ok = doc->kinds[nb + 1] == DARMOK__KIND__KIND_STRING &&
                     doc->kinds[nb + 2] == DARMOK__KIND__KIND_STRING;
            for (i = 3; i <= 5; i++) ok = ok && doc->kinds[nb + i] == DARMOK__KIND__KIND_STRING_REF;
            ok = ok && doc->counts[1] == nb && doc->counts[2] == nb + 1 && doc->counts[3] == nb;
            ok = ok && doc->texts[nb].len == 1 && doc->texts[nb].data[0] == 'x' &&
                 doc->texts[nb + 1].len == 1 && doc->texts[nb + 1].data[0] == 'y';
            CHECK(ok, "one-char refs %zu: repeats refer to the first ones", nb);
        }
        darmok__document__free_unpacked(doc, NULL);
        {
            const uint8_t *out;
            size_t out_len;
            dk_buf want = {0};
            static const char xyxyx[] = "xyxyx";
            CHECK(t_decode(pb, pb_len, 0, 0, &out, &out_len, &err) == DK_OK,
                  "one-char refs %zu: decodes", nb);
            v_hdr(&want, DK_T_ARRAY, (uint32_t)nb + 5);
            for (i = 0; i < nb; i++) {
                char s2[2] = {(char)('a' + i % 26), (char)('a' + i / 26)};
                v_str(&want, s2, 2);
            }
            for (i = 0; i < 5; i++) v_str(&want, xyxyx + i, 1);
            CHECK(out_len == want.len && memcmp(out, want.data, want.len) == 0,
                  "one-char refs %zu: same strings back", nb);
            dk_buf_free(&want);
        }
        dk_buf_free(&t);
    }
}

/*
 * max_out bounds the tape alone (dk_pb_read.c, dec_entry_room: the side
 * table is not charged): a document ending in a tape write after a
 * side-table entry decodes at exactly its tape's size and fails one byte
 * under it, at every bound in between too, with the same outcome with a
 * table and without one.
 */
static void test_budget_with_table(void)
{
    unsigned c;
    for (c = 0; c < 3; c++) {
        dk_buf t = {0};
        const uint8_t *pb;
        size_t pb_len, total = 0, m;
        dk_err err;
        dk_buf u16;
        uint8_t *copy;
        switch (c) {
        case 0: /* ["é", 1] */
            v_hdr(&t, DK_T_ARRAY, 2);
            v_str(&t, S("\xC3\xA9"));
            v_int(&t, 1);
            break;
        case 1: /* {"ключ": "значение", "n": 2} */
            v_hdr(&t, DK_T_OBJECT, 2);
            tb_str(&t, S("\xD0\xBA\xD0\xBB\xD1\x8E\xD1\x87"));
            v_str(&t, S("\xD0\xB7\xD0\xBD\xD0\xB0\xD1\x87\xD0\xB5\xD0\xBD\xD0\xB8\xD0\xB5"));
            tb_str(&t, S("n"));
            v_int(&t, 2);
            break;
        default: /* ["日本", "an ASCII string over 24 bytes", null] */
            v_hdr(&t, DK_T_ARRAY, 3);
            v_str(&t, S("\xE6\x97\xA5\xE6\x9C\xAC"));
            v_str(&t, S("an ASCII string over 24 bytes"));
            tb_op(&t, DK_T_NULL);
            break;
        }
        CHECK(t_encode(t.data, t.len, 0, &pb, &pb_len, &err) == DK_OK, "budget %u: encodes", c);
        copy = dup(pb, pb_len);
        dk_buf_init(&u16);
        for (m = 0; m <= 64; m++) {
            /* m == 0: no bound given (the default); then total + 1 - m */
            size_t max_out = m == 0 ? 0 : total + 1 >= m ? total + 1 - m : 0;
            dk_code rc, bare;
            if (m > 0 && max_out == 0) break;
            dk_arena_reset(&dec_side.arena);
            memset(&err, 0, sizeof err);
            bare = (dk_code)dk_pb_read_ex(copy, pb_len, NULL, max_out, DK_READ_KEYREFS,
                                          &dec_side.arena, &dec_side.out, NULL, NULL, &err);
            dk_arena_reset(&dec_side.arena);
            rc = (dk_code)dk_pb_read_ex(copy, pb_len, NULL, max_out, DK_READ_KEYREFS,
                                        &dec_side.arena, &dec_side.out, &u16, NULL, &err);
            CHECK(rc == bare, "budget %u: max_out %zu: %d with a table, %d without", c, max_out, rc,
                  bare);
            if (m == 0) {
                CHECK(rc == DK_OK && u16.len > 0, "budget %u: decodes with a table (code %d)", c,
                      rc);
                total = dec_side.out.len;
            } else if (max_out >= total) {
                CHECK(rc == DK_OK, "budget %u: max_out %zu of %zu admits it (code %d)", c, max_out,
                      total, rc);
            } else {
                CHECK(rc == DK_ERR_TOO_LARGE && dec_side.out.len == 0 && u16.len == 0,
                      "budget %u: max_out %zu of %zu refuses it (code %d)", c, max_out, total, rc);
            }
        }
        dk_buf_free(&u16);
        free(copy);
        dk_buf_free(&t);
    }
}

/*
 * The side table never fails a document darmok writes: one 60-byte string
 * with one non-ASCII character, 20,000 times, a string reference each
 * after the first (~40 KB of protobuf), decodes with a table under the
 * default bound: 1.3 MB of tape, where the bound is 3.6 MB, and a table
 * that stops at half the bound (the first ~14,300 strs' entries; all of
 * them would be 2.5 MB). Charged to the budget, the table failed it
 * (ERR_TOO_LARGE). max_out is the tape's alone: its length is enough, one
 * byte less is not.
 */
static void test_table_bound(void)
{
    enum { N = 20000, L = 60, UNITS = L - 1 };
    dk_buf t = {0};
    char s[L];
    const uint8_t *pb;
    size_t pb_len, i, p, entries = 0, bound, tape_len = 0;
    dk_err err;
    dk_buf u16;
    uint8_t *copy;
    dk_code rc;
    unsigned k;
    s[0] = '\xC3'; /* "é", then ASCII: 59 units */
    s[1] = '\xA9';
    for (i = 2; i < L; i++) s[i] = (char)('a' + i % 26);
    v_hdr(&t, DK_T_ARRAY, N);
    for (i = 0; i < N; i++) v_str(&t, s, L);
    CHECK(t_encode(t.data, t.len, 0, &pb, &pb_len, &err) == DK_OK, "entries: encodes");
    copy = dup(pb, pb_len);
    bound = pb_len * DK_PB_EXPANSION + DK_PB_EXPANSION_FLOOR;
    CHECK(pb_len < 50000 && t.len < bound && t.len + (size_t)N * (8 + 2 * UNITS) > bound,
          "entries: %zu bytes of protobuf, a charged table would pass the bound", pb_len);
    dk_buf_init(&u16);
    for (k = 0; k < 3; k++) {
        /* the default bound, then max_out the tape's length, then one less */
        size_t max_out = k == 0 ? 0 : k == 1 ? tape_len : tape_len - 1;
        dk_arena_reset(&dec_side.arena);
        memset(&err, 0, sizeof err);
        rc = (dk_code)dk_pb_read_ex(copy, pb_len, NULL, max_out, DK_READ_KEYREFS, &dec_side.arena,
                                    &dec_side.out, &u16, NULL, &err);
        if (k == 2) {
            CHECK(rc == DK_ERR_TOO_LARGE && dec_side.out.len == 0 && u16.len == 0,
                  "entries: max_out one byte under the tape refuses it (code %d)", rc);
            break;
        }
        CHECK(rc == DK_OK, "entries: max_out %zu: decodes with a table (code %d: %s)", max_out, rc,
              err.msg ? err.msg : "");
        if (rc != DK_OK) break;
        tape_len = dec_side.out.len;
        CHECK(dec_side.out.len == t.len && memcmp(dec_side.out.data, t.data, t.len) == 0,
              "entries: the same tape");
        /* the k-th str's header: after the array's 5 bytes, 1 + 4 + L a str */
        for (p = 0, entries = 0; u16.len - p >= 8; entries++) {
            if (dk_rd32(u16.data + p) != 6 + (5 + L) * entries ||
                dk_rd32(u16.data + p + 4) != UNITS || u16.len - p - 8 < 2 * (size_t)UNITS ||
                memcmp(u16.data + p + 8, "\xE9\0c\0d\0", 6) != 0)
                break;
            p += 8 + 2 * (size_t)UNITS;
        }
        {
            /* the table stops at half of max_out: the first strs' entries */
            size_t want = (k == 0 ? bound : max_out) / 2 / (8 + 2 * (size_t)UNITS);
            CHECK(p == u16.len && entries == (want < N ? want : (size_t)N),
                  "entries: %zu entries of %d, want %zu (table %zu bytes)", entries, N, want,
                  u16.len);
        }
    }
    dk_buf_free(&u16);
    free(copy);
    dk_buf_free(&t);
}

/*
 * The encoder reserves an upper bound on the packed size (pb_bound in
 * dk_pb_write.c) and lets protobuf-c pack into it; these test builds define
 * DK_CHECK_PB_BOUND, which aborts the write when the bound is below
 * protobuf-c's exact size. Each document here is dominated by one part of
 * the Document, at its widest items (2-byte field indexes, 8-byte
 * zigzags, 5-byte counts), so a bound that left out or undercounted that
 * part could not be covered by the others' slack.
 */
static void test_pb_bound(void)
{
    static const char *what[] = {"keys", "binary", "numbers", "dates", "counts", "kinds", "shapes"};
    unsigned c;
    for (c = 0; c < sizeof what / sizeof what[0]; c++) {
        dk_buf t = {0};
        const uint8_t *pb;
        size_t pb_len;
        dk_err err;
        uint32_t i, j;
        char key[200];
        switch (c) {
        case 0: /* 300 distinct 200-byte keys */
            v_hdr(&t, DK_T_OBJECT, 300);
            for (i = 0; i < 300; i++) {
                memset(key, 'k', sizeof key);
                key[0] = (char)('a' + (int)(i % 26));
                key[1] = (char)('a' + (int)(i / 26));
                tb_str(&t, key, sizeof key);
                v_int(&t, 0);
            }
            break;
        case 1: /* 100,000 bytes of a Uint8Array */
            tb_op(&t, DK_T_BYTES);
            tb_op(&t, DK_BYTES_UINT8);
            tb_u32(&t, 100000);
            for (i = 0; i < 100000; i++) tb_op(&t, (int)(i & 0xFF));
            break;
        case 2: /* 5,000 fractions */
            v_hdr(&t, DK_T_ARRAY, 5000);
            for (i = 0; i < 5000; i++) v_f64(&t, 0.5 + i);
            break;
        case 3: /* 5,000 dates at the ends of the range */
            v_hdr(&t, DK_T_ARRAY, 5000);
            for (i = 0; i < 5000; i++) {
                tb_op(&t, DK_T_DATE);
                tb_f64(&t, i % 2 ? DK_DATE_MAX_MS : -DK_DATE_MAX_MS);
            }
            break;
        case 4: /* 2,000 arrays of 2^31 - 1 holes: two 5-byte counts each */
            v_hdr(&t, DK_T_ARRAY, 2000);
            for (i = 0; i < 2000; i++) {
                v_hdr(&t, DK_T_ARRAY, 0x7FFFFFFFu);
                v_hdr(&t, DK_T_HOLE, 0x7FFFFFFFu);
            }
            break;
        case 5: /* 20,000 nulls */
            v_hdr(&t, DK_T_ARRAY, 20000);
            for (i = 0; i < 20000; i++) tb_op(&t, DK_T_NULL);
            break;
        default: /* 200 objects of 60 keys out of 300 (string indexes
                  * 128 and up, after a first object's 128 keys): 200
                  * shapes of 2-byte field indexes */
            v_hdr(&t, DK_T_ARRAY, 201);
            v_hdr(&t, DK_T_OBJECT, 128);
            for (i = 0; i < 128; i++) {
                char name[3] = {'z', (char)('a' + i / 16), (char)('a' + i % 16)};
                tb_str(&t, name, 3);
                tb_op(&t, DK_T_NULL);
            }
            for (i = 0; i < 200; i++) {
                v_hdr(&t, DK_T_OBJECT, 60);
                for (j = 0; j < 60; j++) {
                    unsigned k = (i + 7 * j) % 300;
                    char name[4] = {(char)('a' + k / 100), (char)('a' + k / 10 % 10),
                                    (char)('a' + k % 10), 0};
                    tb_str(&t, name, 3);
                    tb_op(&t, DK_T_NULL);
                }
            }
            break;
        }
        CHECK(t_encode(t.data, t.len, 0, &pb, &pb_len, &err) == DK_OK,
              "bound, %s: packs within it (%s)", what[c], err.msg ? err.msg : "ok");
        dk_buf_free(&t);
    }
}

/* ---- decode amplification ------------------------------------------------ */

/* [text, then `refs` STRING_REFs to it]: 2 bytes of protobuf a reference. */
static uint8_t *refs_doc(const char *text, size_t len, size_t refs, size_t *n)
{
    Darmok__Document doc = DARMOK__DOCUMENT__INIT;
    Darmok__Kind *kinds = malloc((refs + 2) * sizeof *kinds);
    uint32_t *counts = calloc(refs + 1, sizeof *counts);
    ProtobufCBinaryData str;
    uint8_t *p;
    size_t i;
    if (!kinds || !counts) abort();
    str.data = (uint8_t *)(uintptr_t)text;
    str.len = len;
    kinds[0] = DARMOK__KIND__KIND_ARRAY;
    kinds[1] = DARMOK__KIND__KIND_STRING;
    counts[0] = (uint32_t)(refs + 1);
    for (i = 0; i < refs; i++) kinds[2 + i] = DARMOK__KIND__KIND_STRING_REF; /* counts: 0 */
    doc.format = 1;
    doc.n_kinds = refs + 2;
    doc.kinds = kinds;
    doc.n_counts = refs + 1;
    doc.counts = counts;
    doc.n_texts = 1;
    doc.texts = &str;
    p = pack_doc(&doc, n);
    free(kinds);
    free(counts);
    return p;
}

/*
 * References to one long text: with DK_READ_STRREFS the tape holds it
 * once (5 bytes a reference), so it decodes where a tape of copies passes
 * the bound; its JSON holds every copy and is bounded like the tape.
 */
static void test_strref_bound(void)
{
    static char text[4096];
    size_t n, refs = 100000, out_len;
    const uint8_t *out, *json;
    size_t json_len;
    dk_buf u16 = {0};
    dk_err err;
    dk_code rc;
    uint8_t *pb;
    memset(text, 'a', sizeof text);
    pb = refs_doc(text, sizeof text, refs, &n);
    CHECK(n < 3 * refs, "refs document: %zu bytes", n);
    rc = t_decode(pb, n, 0, 0, &out, &out_len, &err);
    CHECK(rc == DK_ERR_TOO_LARGE, "copies pass the tape bound: code %d", rc);
    dk_arena_reset(&dec_side.arena);
    rc = (dk_code)dk_pb_read_ex(pb, n, NULL, 0, DK_READ_STRREFS, &dec_side.arena, &dec_side.out,
                                &u16, NULL, &err);
    CHECK(rc == DK_OK && dec_side.out.len == 5 + 5 + sizeof text + 5 * refs,
          "references fit: code %d, tape %zu", rc, dec_side.out.len);
    rc = t_transcode(0, pb, n, &json, &json_len, &err);
    CHECK(rc == DK_ERR_TOO_LARGE && json_len == 0 && err.msg != NULL &&
              strstr(err.msg, "string references") != NULL,
          "its JSON passes the bound: code %d", rc);
    free(pb);
    /* copies of texts of up to 64 bytes are not counted: 64 control
     * characters, 6 bytes of JSON each, 20,000 times write more than the
     * bound, and transcode */
    {
        static char ctl[64];
        memset(ctl, 1, sizeof ctl);
        pb = refs_doc(ctl, sizeof ctl, 20000, &n);
        rc = t_transcode(0, pb, n, &json, &json_len, &err);
        CHECK(rc == DK_OK && json_len > (size_t)DK_PB_EXPANSION * n + DK_PB_EXPANSION_FLOOR,
              "short texts past the bound: code %d, %zu bytes of JSON for %zu", rc, json_len, n);
        free(pb);
    }
    /* 64 bytes, 10,000 times (JSON 660 KB, under the 1 MiB floor) */
    pb = refs_doc(text, 64, 10000, &n);
    rc = t_transcode(0, pb, n, &json, &json_len, &err);
    CHECK(rc == DK_OK && json_len == 2 + 66 * 10001 + 10000, "64 x 10,000: code %d, %zu bytes", rc,
          json_len);
    /* and the whole JSON text has the caller's bound (maxBytes) */
    {
        size_t want = json_len;
        dk_arena_reset(&json_side.arena);
        rc = (dk_code)dk_pb_to_json_ex(pb, n, NULL, want - 1, &json_side.arena, &json_side.tape,
                                       &json_side.out, &err);
        CHECK(rc == DK_ERR_TOO_LARGE && json_side.out.len == 0, "max_json one under: code %d", rc);
        dk_arena_reset(&json_side.arena);
        rc = (dk_code)dk_pb_to_json_ex(pb, n, NULL, want, &json_side.arena, &json_side.tape,
                                       &json_side.out, &err);
        CHECK(rc == DK_OK && json_side.out.len == want, "max_json exactly the text: code %d", rc);
    }
    free(pb);
    dk_buf_free(&u16);
}

/* A document of `count` plain objects sharing one shape whose only key is
 * `keylen` bytes long: tiny protobuf, a tape of count x keylen bytes. */
static uint8_t *amplifier_of(uint8_t c, size_t keylen, size_t count, size_t *n)
{
    Darmok__Document doc = DARMOK__DOCUMENT__INIT;
    Darmok__Shape shape = DARMOK__SHAPE__INIT, *shapes[1] = {&shape};
    Darmok__Kind *kinds = malloc((2 * count + 1) * sizeof *kinds);
    uint32_t *counts = calloc(count + 1, sizeof *counts);
    int64_t *ints = malloc(count * sizeof *ints);
    uint32_t field = 0;
    uint8_t *key = malloc(keylen);
    ProtobufCBinaryData str;
    uint8_t *p;
    size_t i;
    if (!kinds || !counts || !ints || !key) abort();
    memset(key, c, keylen);
    str.data = key;
    str.len = keylen;
    shape.n_fields = 1;
    shape.fields = &field;
    kinds[0] = DARMOK__KIND__KIND_ARRAY;
    counts[0] = (uint32_t)count;
    for (i = 0; i < count; i++) {
        kinds[1 + 2 * i] = DARMOK__KIND__KIND_OBJECT; /* counts: shape 0 */
        kinds[2 + 2 * i] = DARMOK__KIND__KIND_INT;
        ints[i] = 1;
    }
    doc.format = 1;
    doc.n_strings = 1;
    doc.strings = &str;
    doc.n_shapes = 1;
    doc.shapes = shapes;
    doc.n_kinds = 2 * count + 1;
    doc.kinds = kinds;
    doc.n_counts = count + 1;
    doc.counts = counts;
    doc.n_ints = count;
    doc.ints = ints;
    p = pack_doc(&doc, n);
    free(kinds);
    free(counts);
    free(ints);
    free(key);
    return p;
}

/* count objects sharing one member key of keylen bytes of 'k'. */
static uint8_t *amplifier(size_t keylen, size_t count, size_t *n)
{
    return amplifier_of('k', keylen, count, n);
}

/*
 * Objects sharing one key of 64 x U+0001 (3 bytes of protobuf each, 387
 * of JSON): the tape holds the key once (key references), the JSON text
 * stops at max_json with its buffer near it, and a small document's keys
 * named again come out in full.
 */
static void test_key_ref_bound(void)
{
    size_t n, json_len;
    const uint8_t *json;
    dk_err err;
    dk_limits lim = {0, 0, 0};
    dk_code rc;
    uint8_t *pb = amplifier_of(1, 64, 100000, &n);

    dk_buf tape, out;
    dk_buf_init(&tape);
    dk_buf_init(&out);
    dk_arena_reset(&json_side.arena);
    memset(&err, 0, sizeof err);
    rc = (dk_code)dk_pb_to_json_ex(pb, n, &lim, (size_t)1 << 20, &json_side.arena, &tape, &out,
                                   &err);
    CHECK(rc == DK_ERR_TOO_LARGE && out.len == 0, "key references past max_json: code %d", rc);
    CHECK(tape.len < 8 * n, "the tape grows with the input: %zu for %zu bytes", tape.len, n);
    CHECK(out.cap <= ((size_t)2 << 20), "the JSON buffer stays near max_json: %zu", out.cap);
    dk_buf_free(&tape);
    dk_buf_free(&out);
    free(pb);
    pb = amplifier_of('k', 3, 3, &n);
    rc = t_transcode(0, pb, n, &json, &json_len, &err);
    CHECK(rc == DK_OK && json_len == 31 &&
              memcmp(json, "[{\"kkk\":1},{\"kkk\":1},{\"kkk\":1}]", 31) == 0,
          "keys named again are written in full: code %d, %.*s", rc, (int)json_len, json);
    free(pb);
}

/* The string table lets a small document name a long key many times: the
 * tape a decode writes is bounded by DK_PB_EXPANSION x input + a floor
 * (darmok.h), or by an explicit max_out. */
static void test_amplification(void)
{
    size_t n, out_len;
    const uint8_t *out;
    dk_err err;
    dk_limits lim = {0, 0, 0};
    dk_code rc;
    /* 64 KiB key x 1000 records: ~70 KB of protobuf asking for 65 MB */
    uint8_t *big = amplifier(65536, 1000, &n);
    CHECK(n < 80000, "amplifier is small (%zu bytes)", n);
    rc = t_decode(big, n, 0, 0, &out, &out_len, &err);
    CHECK(rc == DK_ERR_TOO_LARGE && out_len == 0 && strstr(err.msg, "amplification") != NULL,
          "amplified document: code %d (%s), tape %zu", rc, err.msg ? err.msg : "", out_len);
    CHECK(err.pos > 0 && err.pos < n, "amplification error points into the input (%zu)", err.pos);
    /* an explicit bound above its size lets it through */
    dk_arena_reset(&dec_side.arena);
    memset(&err, 0, sizeof err);
    rc = (dk_code)dk_pb_read_opts(big, n, &lim, (size_t)80 << 20, &dec_side.arena, &dec_side.out,
                                  &err);
    CHECK(rc == DK_OK && dec_side.out.len > (size_t)65536 * 1000,
          "explicit max_out admits it: code %d, tape %zu", rc, dec_side.out.len);
    /* and one below a small document's tape refuses it */
    free(big);
    big = amplifier(8, 10, &n);
    rc = t_decode(big, n, 0, 0, &out, &out_len, &err);
    CHECK(rc == DK_OK, "a small document decodes under the default bound: code %d", rc);
    dk_arena_reset(&dec_side.arena);
    memset(&err, 0, sizeof err);
    rc = (dk_code)dk_pb_read_opts(big, n, &lim, out_len - 1, &dec_side.arena, &dec_side.out, &err);
    CHECK(rc == DK_ERR_TOO_LARGE && dec_side.out.len == 0,
          "max_out one byte under the tape: code %d", rc);
    dk_arena_reset(&dec_side.arena);
    memset(&err, 0, sizeof err);
    rc = (dk_code)dk_pb_read_opts(big, n, &lim, out_len, &dec_side.arena, &dec_side.out, &err);
    CHECK(rc == DK_OK, "max_out exactly the tape: code %d", rc);
    free(big);
    /* the transcoder is bounded the same way */
    big = amplifier(65536, 1000, &n);
    {
        const uint8_t *json;
        size_t json_len;
        rc = t_transcode(0, big, n, &json, &json_len, &err);
        CHECK(rc == DK_ERR_TOO_LARGE, "pb -> JSON of the amplifier: code %d", rc);
    }
    free(big);
}

int main(void)
{
    test_amplification();
    test_key_ref_bound();
    test_string_refs();
    test_strref_bound();
    test_short_string_refs();
    test_one_char_refs();
    test_stream_caps();
    test_budget_with_table();
    test_table_bound();
    test_pb_bound();
    test_report("c-pb-bounds");
    sides_free();
    return test_failed != 0;
}

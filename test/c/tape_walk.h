/*
 * tape_walk.h - test helpers that walk a decode tape (wasm/dk_tape.h) the
 * way the JS rebuild reads it: key and string references expanded, the UTF-16 side
 * table checked entry by entry. Included by the C tests and the fuzz
 * targets; static, no state (a file may use only some of the helpers).
 */
#ifndef TAPE_WALK_H
#define TAPE_WALK_H

#include <stdlib.h>
#include <string.h>

#include "dk_internal.h"

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

typedef struct tw_frame {
    uint64_t left; /* slots (or key/value fields) still to come */
    int rec;       /* fields: each value follows a key str */
} tw_frame;

/* Appends t[0..n) to out; 0, or -1 out of memory. */
static int tw_put(dk_buf *out, const uint8_t *t, size_t n)
{
    if (dk_buf_reserve(out, n, NULL, 0) != DK_OK) return -1;
    if (n) memcpy(out->data + out->len, t, n);
    out->len += n;
    return 0;
}

/* The str at t[*i..n) (a full one, never a reference): copied to out
 * (unless out is NULL); counts it in *non_ascii when it is not ASCII. */
static int tw_str(const uint8_t *t, size_t n, size_t *i, dk_buf *out, size_t *non_ascii)
{
    uint32_t h;
    size_t len;
    if (n - *i < 4) return -1;
    h = dk_rd32(t + *i);
    len = h >> DK_STR_SHIFT;
    if ((h & DK_STR_KEYREF) == DK_STR_KEYREF || n - *i - 4 < len) return -1;
    if (!(h & DK_STR_ASCII)) ++*non_ascii;
    if (out && tw_put(out, t + *i, 4 + len) != 0) return -1;
    *i += 4 + len;
    return 0;
}

/* A member or class key at t[*i..n): a reference, copied out as the key it
 * names, or a key in full, copied and remembered (keys[] holds offsets). */
static int tw_key(const uint8_t *t, size_t n, size_t *i, dk_buf *out, size_t *non_ascii,
                  size_t **keys, size_t *nkeys, size_t *kcap, long *refs)
{
    uint32_t h;
    if (n - *i < 4) return -1;
    h = dk_rd32(t + *i);
    if ((h & DK_STR_KEYREF) == DK_STR_KEYREF) {
        size_t k = h >> DK_STR_SHIFT, at;
        if (k >= *nkeys) return -1;
        at = (*keys)[k];
        if (tw_put(out, t + at, 4 + (dk_rd32(t + at) >> DK_STR_SHIFT)) != 0) return -1;
        *i += 4;
        ++*refs;
        return 0;
    }
    if (*nkeys == *kcap) {
        size_t *nk = realloc(*keys, (*kcap = *kcap ? 2 * *kcap : 64) * sizeof *nk);
        if (!nk) return -1;
        *keys = nk;
    }
    (*keys)[(*nkeys)++] = *i;
    return tw_str(t, n, i, out, non_ascii);
}

/*
 * Copies the tape t[0..n) into out (emptied first) with every key reference
 * replaced by the full key str it names, counts the full non-ASCII strs
 * of t (references not counted) in *non_ascii and, unless keep is NULL,
 * puts in *keep how many of its referenceable values (dk_tape.h) its T_REFs
 * need: the highest index one names, plus one (0 without T_REF). Returns
 * the number of key references met, or -1 when t is not one well-formed
 * tape whose key references all name member or class keys written in full
 * before them, and whose T_REFs all name referenceable values (dk_tape.h)
 * opened before them.
 */
static long tw_walk(const uint8_t *t, size_t n, dk_buf *out, size_t *non_ascii, size_t *keep)
{
    tw_frame *st = NULL;
    size_t sp = 0, cap = 0, *keys = NULL, nkeys = 0, kcap = 0, i = 0;
    uint64_t ids = 0; /* referenceable values opened so far */
    long refs = 0, rc = -1;
    int key_next = 0;
    const uint8_t str_op = DK_T_STR;

    out->len = 0;
    *non_ascii = 0;
    while (i < n) {
        uint8_t op;
        uint64_t kids = 0, used = 1;
        int container = 0, rec = 0;
        if (key_next && tw_key(t, n, &i, out, non_ascii, &keys, &nkeys, &kcap, &refs) != 0)
            goto done;
        if (i >= n) goto done;
        op = t[i++];
        /* a string reference expands to a STR of the str it names */
        if (tw_put(out, op == DK_T_STRREF ? &str_op : &op, 1) != 0) goto done;
        if (op >= DK_T_ARRAY && op <= DK_T_ERROR && op != DK_T_HOLE) ids++;
        switch (op) {
        case DK_T_UNDEF:
        case DK_T_NULL:
        case DK_T_FALSE:
        case DK_T_TRUE: break;
        case DK_T_INT:
        case DK_T_REF:
            if (n - i < 4 || tw_put(out, t + i, 4) != 0) goto done;
            if (op == DK_T_REF && dk_rd32(t + i) >= ids) goto done; /* not opened before it */
            if (op == DK_T_REF && keep && dk_rd32(t + i) >= *keep)
                *keep = (size_t)dk_rd32(t + i) + 1;
            i += 4;
            break;
        case DK_T_HOLE:
            if (n - i < 4 || tw_put(out, t + i, 4) != 0) goto done;
            used = dk_rd32(t + i);
            i += 4;
            break;
        case DK_T_F64:
        case DK_T_DATE:
            if (n - i < 8 || tw_put(out, t + i, 8) != 0) goto done;
            i += 8;
            break;
        case DK_T_BIGINT:
        case DK_T_STR:
            if (tw_str(t, n, &i, out, non_ascii) != 0) goto done;
            break;
        case DK_T_STRREF: { /* to an earlier str (not counted: no entry) */
            size_t at, none = 0;
            if (n - i < 4) goto done;
            at = dk_rd32(t + i);
            if (at >= i - 1 || tw_str(t, n, &at, out, &none) != 0) goto done;
            i += 4;
            break;
        }
        case DK_T_REGEXP:
            if (tw_str(t, n, &i, out, non_ascii) != 0 || tw_str(t, n, &i, out, non_ascii) != 0)
                goto done;
            break;
        case DK_T_BYTES: {
            size_t len;
            if (n - i < 5) goto done;
            len = dk_rd32(t + i + 1);
            if (n - i - 5 < len || tw_put(out, t + i, 5 + len) != 0) goto done;
            i += 5 + len;
            break;
        }
        case DK_T_ARRAY:
        case DK_T_SET:
        case DK_T_MAP:
            if (n - i < 4 || tw_put(out, t + i, 4) != 0) goto done;
            kids = (op == DK_T_MAP ? 2u : 1u) * (uint64_t)dk_rd32(t + i);
            i += 4;
            container = 1;
            break;
        case DK_T_OBJECT:
        case DK_T_NULLPROTO:
        case DK_T_ERROR:
            if (n - i < 4 || tw_put(out, t + i, 4) != 0) goto done;
            kids = dk_rd32(t + i);
            i += 4;
            container = rec = 1;
            break;
        case DK_T_INSTANCE:
            if (tw_key(t, n, &i, out, non_ascii, &keys, &nkeys, &kcap, &refs) != 0 || n - i < 8 ||
                tw_put(out, t + i, 8) != 0)
                goto done;
            kids = dk_rd32(t + i + 4);
            i += 8;
            container = rec = 1;
            break;
        default: goto done;
        }
        if (sp > 0) {
            if (used > st[sp - 1].left) goto done;
            st[sp - 1].left -= used;
        }
        if (container && kids > 0) {
            if (sp == cap) {
                tw_frame *ns = realloc(st, (cap = cap ? 2 * cap : 64) * sizeof *ns);
                if (!ns) goto done;
                st = ns;
            }
            st[sp].left = kids;
            st[sp].rec = rec;
            sp++;
        }
        while (sp > 0 && st[sp - 1].left == 0) sp--;
        if (sp == 0) break; /* the root is complete */
        key_next = st[sp - 1].rec;
    }
    rc = sp == 0 && i == n ? refs : -1;
done:
    free(st);
    free(keys);
    return rc;
}

/* tw_walk without looking at T_REFs: key and string references expanded. */
static long tw_expand_refs(const uint8_t *t, size_t n, dk_buf *out, size_t *non_ascii)
{
    return tw_walk(t, n, out, non_ascii, NULL);
}

/* How many referenceable values the T_REFs of the tape t[0..n) need (as
 * tw_walk's *keep), or -1 when it is not one well-formed tape. */
static long tw_ref_keep(const uint8_t *t, size_t n)
{
    dk_buf out = {NULL, 0, 0};
    size_t non_ascii, keep = 0;
    long rc = tw_walk(t, n, &out, &non_ascii, &keep);
    free(out.data);
    return rc < 0 ? -1 : (long)keep;
}

/*
 * The side table u (dk_json_read_ex's format) against the tape t: entries
 * in tape order, each at a str of t with the units of its bytes, inline or
 * (DK_U16_SRC) in src[0..src_n) units; an ASCII str only the latter, from
 * DK_U16_SRC_ASCII_MIN bytes on. *from_src (unless NULL) gets the count of the
 * latter. Returns the number of entries of non-ASCII strs (what a read
 * without src has), or -1.
 */
static long tw_check_side_table(const uint8_t *t, size_t tn, const uint8_t *u, size_t un,
                                const uint8_t *src, size_t src_n, long *from_src)
{
    size_t p = 0;
    long entries = 0, seen = 0, rc = -1, srcs = 0;
    uint32_t last = 0;
    uint8_t *units = NULL;
    while (p < un) {
        uint32_t at, cnt, h, first = 0;
        size_t len, size;
        const uint8_t *have;
        uint8_t *nu;
        if (un - p < 8) goto done;
        at = dk_rd32(u + p);
        cnt = dk_rd32(u + p + 4);
        if ((seen > 0 && at <= last) || (size_t)at + 4 > tn) goto done;
        h = dk_rd32(t + at);
        len = h >> DK_STR_SHIFT;
        if (((h & DK_STR_ASCII) && (!(cnt & DK_U16_SRC) || len < DK_U16_SRC_ASCII_MIN)) ||
            (size_t)at + 4 + len > tn)
            goto done;
        if (cnt & DK_U16_SRC) {
            cnt &= ~DK_U16_SRC;
            if (src == NULL || un - p < 12) goto done;
            first = dk_rd32(u + p + 8);
            if (first > src_n || cnt > src_n - first) goto done;
            have = src + 2 * (size_t)first;
            size = 12;
            srcs++;
        } else {
            if ((un - p - 8) / 2 < cnt) goto done;
            have = u + p + 8;
            size = 8 + 2 * (size_t)cnt;
        }
        nu = realloc(units, 2 * len + 2);
        if (!nu) goto done;
        units = nu;
        if (dk_wtf8_to_utf16(t + at + 4, len, units) != cnt ||
            (cnt && memcmp(units, have, 2 * (size_t)cnt) != 0))
            goto done;
        p += size;
        last = at;
        seen++;
        if (!(h & DK_STR_ASCII)) entries++;
    }
    rc = entries;
    if (from_src) *from_src = srcs;
done:
    free(units);
    return rc;
}

#endif

/*
 * dk_json_reader.h - the JSON reader's state (its explicit stack of open
 * containers, its cursor over the padded text) and the helpers every part
 * of the reader uses to fail and to append ops. Included by dk_json_read.c
 * only, through dk_json_str.h: the helpers are static so that the reader's
 * per-value calls stay in its one translation unit, where they inline.
 */
#ifndef DK_JSON_READER_H
#define DK_JSON_READER_H

#include "dk_internal.h"

/* Open containers. F_PAIR is a Map entry [k, v]: not a value of its own. */
enum { F_ARRAY, F_SET, F_MAP, F_PAIR, F_OBJECT, F_FIELDS };

/* What the main loop does next. */
enum { S_VALUE, S_AFTER };

typedef struct rframe {
    uint8_t kind;     /* F_* */
    uint8_t wrap;     /* a tag wrapper: '}' must follow the closing bracket */
    uint8_t is_error; /* $Error fields: "name", "message" come first */
    uint8_t meta;     /* instance: 1 while "$v" may come, else 0 */
    size_t open;      /* input offset of the '[' or '{' */
    size_t count_at;  /* tape offset of the u32 count to patch */
    size_t ver_at;    /* instance: tape offset of the u32 version */
    uint64_t count;   /* array slots, entries or members so far */
} rframe;

typedef struct reader {
    const uint8_t *in; /* the text, zero-padded */
    size_t len;
    const uint8_t *p; /* cursor */
    dk_buf *tape;
    dk_err *err;
    dk_arena *arena;
    rframe *stack;
    uint32_t sp, cap; /* frames in use; capacity */
    uint32_t depth;   /* open frames that are values (all but F_PAIR) */
    uint32_t max_depth;
    uint32_t max_len; /* counts and binary lengths */
    uint32_t max_str; /* string bytes: max_len, capped by the tape */
    uint64_t refs;    /* referenceable values opened so far */
    uint64_t keep;    /* the highest $ref index so far + 1; 0: none */
    char *num;        /* scratch copy of a long number token */
    size_t num_cap;
    dk_buf *u16;     /* UTF-16 side table (dk_json_read_ex), or NULL */
    size_t u16_last; /* offset of its last entry */
    int valid_utf8;  /* DK_READ_VALID_UTF8 */
    int raw_wtf8;    /* DK_READ_RAW_WTF8 */
    /* The UTF-16 source (dk_json_read_utf16), or NULL. Input offsets before
     * src_at hold src_delta more bytes than units: the non-ASCII strings
     * before it were counted (nothing else in a JSON text is non-ASCII). */
    const dk_src16 *src;
    size_t src_at, src_delta;
} reader;

/* The cursor's input offset. */
#define POS(r) ((size_t)((r)->p - (r)->in))

/* Fails with code at input offset pos. */
static int fail(reader *r, dk_code code, const char *msg, size_t pos)
{
    return dk_fail(r->err, code, msg, pos);
}

/*
 * Fails with DK_ERR_SYNTAX at the cursor, or at the input length when the
 * cursor is past the text (the padding): msg says what was expected there,
 * and an offset equal to the input length means the input ended.
 */
static int unexpected(reader *r, const char *msg)
{
    if (POS(r) >= r->len) return fail(r, DK_ERR_SYNTAX, msg, r->len);
    return fail(r, DK_ERR_SYNTAX, msg, POS(r));
}

/* 1 when c can start a JSON value. */
static int value_start(uint8_t c)
{
    return c == '{' || c == '[' || c == '"' || c == '-' || c == 't' || c == 'f' || c == 'n' ||
           (c >= '0' && c <= '9');
}

/*
 * A tag got a value of the wrong kind: DK_ERR_FORMAT when a JSON value
 * starts at the cursor (the text may be fine, the document is not), else
 * the syntax error it really is.
 */
static int bad_value(reader *r, const char *msg)
{
    if (value_start(*r->p)) return fail(r, DK_ERR_FORMAT, msg, POS(r));
    return unexpected(r, "expected a value");
}

/*
 * Skips JSON whitespace; the padding's zero stops it. Compact text has
 * none between most tokens: one compare rules out every whitespace byte.
 */
static inline void skip_ws(reader *r)
{
    const uint8_t *p = r->p;

    if (*p > ' ') return;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    r->p = p;
}

/* Makes room for n more tape bytes. */
DK_MUST static int room(reader *r, size_t n)
{
    if (r->tape->cap - r->tape->len >= n) return DK_OK;
    return dk_buf_reserve(r->tape, n, r->err, POS(r));
}

/* Appends an op byte and a u32 (reserved by the caller). */
static void put_op_u32_unsafe(dk_buf *t, uint8_t op, uint32_t v)
{
    t->data[t->len] = op;
    dk_wr32(t->data + t->len + 1, v);
    t->len += 5;
}

/* Appends an op and a u32. */
DK_MUST static int emit_op_u32(reader *r, uint8_t op, uint32_t v)
{
    DK_TRY(room(r, 5));
    put_op_u32_unsafe(r->tape, op, v);
    return DK_OK;
}

/* Appends an op and an f64. */
DK_MUST static int emit_op_f64(reader *r, uint8_t op, double d)
{
    DK_TRY(room(r, 9));
    r->tape->data[r->tape->len] = op;
    dk_wrf64(r->tape->data + r->tape->len + 1, d);
    r->tape->len += 9;
    return DK_OK;
}

/* Appends a bare op. */
DK_MUST static int emit_op(reader *r, uint8_t op)
{
    DK_TRY(room(r, 1));
    r->tape->data[r->tape->len++] = op;
    return DK_OK;
}

#endif

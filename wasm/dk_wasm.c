/*
 * dk_wasm.c - the WebAssembly entry points js/ calls, on top of darmok.h
 * and dk_abi.h (the result words, the side table, what every call
 * shares). Plain C: the native tests compile it too. The functions marked
 * EXPORT are the ones wasm/exports.txt lists, which emcc exports
 * (gen_abi.cjs fails the build when the two differ); each one's contract
 * is its comment here.
 *
 * The input area always has DK_JSON_PADDING bytes beyond what
 * dk_ctx_input was asked for; the decoder zeroes them itself, so JS writes
 * only the text. A context is never freed (one per module instance lives
 * as long as the instance).
 */
#include <stdlib.h>
#include <string.h>

#include "darmok.h"
#include "dk_abi.h"

#define EXPORT __attribute__((used, visibility("default")))

typedef struct dk_ctx {
    dk_arena arena;             /* scratch, reset per call */
    dk_buf in;                  /* input area: in.cap - DK_JSON_PADDING usable */
    dk_buf out;                 /* output of the last call */
    dk_buf tape;                /* transcoding's intermediate tape, reused */
    dk_buf u16;                 /* decode (JSON and protobuf): UTF-16 side table of
                       the tape's strings; JSON encode: the output as
                       UTF-16 when not ASCII */
    uint32_t res[DK_RES_WORDS]; /* result words */
    uint64_t seed;              /* dk_limits hash_seed of its calls (dk_ctx_seed) */
} dk_ctx;

/* A zeroed context, one per JS module instance; NULL on OOM. Owned by JS
 * for the instance's lifetime. */
EXPORT dk_ctx *dk_ctx_new(void)
{
    return calloc(1, sizeof(dk_ctx));
}

/*
 * Keys the context's hash tables with the 64 bits hi:lo: JS gives random
 * ones from crypto.getRandomValues once per instance, so no document can
 * be written to collide in them (the seed of a new context is 0).
 */
EXPORT void dk_ctx_seed(dk_ctx *c, uint32_t lo, uint32_t hi)
{
    c->seed = (uint64_t)hi << 32 | lo;
}

/*
 * The input area of at least n bytes (plus DK_JSON_PADDING the core zeroes
 * itself), grown if needed: contents are not preserved across growth.
 * Valid until the next dk_ctx_input. NULL on OOM or overflow.
 */
EXPORT uint8_t *dk_ctx_input(dk_ctx *c, uint32_t n)
{
    if ((size_t)n + DK_JSON_PADDING < (size_t)n) return NULL; /* wasm32 */
    c->in.len = 0;
    if (dk_buf_reserve(&c->in, (size_t)n + DK_JSON_PADDING, NULL, 0) != DK_OK) return NULL;
    return c->in.data;
}

/* The DK_RES_WORDS u32 result words; the address never changes. */
EXPORT uint32_t *dk_ctx_result(dk_ctx *c)
{
    return c->res;
}

/* Starts a call: scratch and output are forgotten, result words and err
 * cleared. */
static void begin(dk_ctx *c, dk_err *err)
{
    dk_err_clear(err);
    dk_arena_reset(&c->arena);
    c->out.len = 0;
    memset(c->res, 0, sizeof c->res);
}

/* Fills the result words from a finished call; returns its code. */
static int finish(dk_ctx *c, const dk_err *err)
{
    c->res[DK_RES_CODE] = (uint32_t)err->code;
    if (err->code != DK_OK) {
        c->res[DK_RES_OFFSET] = (uint32_t)err->pos;
        c->res[DK_RES_MSG] = (uint32_t)(uintptr_t)err->msg;
        c->res[DK_RES_MSG_LEN] = (uint32_t)strlen(err->msg);
        return (int)err->code;
    }
    c->res[DK_RES_OUT] = (uint32_t)(uintptr_t)c->out.data;
    c->res[DK_RES_OUT_LEN] = (uint32_t)c->out.len;
    return DK_OK;
}

/* Fails a call before the core runs (bad length from JS). */
static int reject(dk_ctx *c, dk_err *err)
{
    *err = (dk_err){DK_ERR_TOO_LARGE, "length exceeds the input area", 0};
    return finish(c, err);
}

/*
 * Starts a call whose input is the first len bytes of the input area:
 * 0 when they are there, else the call fails with DK_ERR_TOO_LARGE and
 * that code is returned.
 */
static int start(dk_ctx *c, uint32_t len, dk_err *err)
{
    begin(c, err);
    if (!c->in.data || len > c->in.cap - DK_JSON_PADDING) return reject(c, err);
    return 0;
}

/* finish() for a decode: on success, result words 6-7 give the UTF-16
 * side table the reader filled in c->u16. */
static int finish_decode(dk_ctx *c, const dk_err *err)
{
    if (finish(c, err) != DK_OK) return (int)err->code;
    c->res[DK_RES_U16] = (uint32_t)(uintptr_t)c->u16.data;
    c->res[DK_RES_U16_LEN] = (uint32_t)c->u16.len;
    return DK_OK;
}

/*
 * Encodes the tape (dk_tape.h) of tape_len bytes in the input area as JSON
 * into the output; nesting over max_depth fails. JS makes its
 * string from UTF-16 units (one copy; UTF-8 that is not ASCII would need
 * a conversion) or, for ASCII, from the bytes as Latin-1: the writer
 * writes units once a long string is not ASCII (DK_WRITE_MAY_WIDE), and
 * other UTF-8 that is not ASCII is widened here into c->u16. Result words
 * 6-7 give the units.
 */
EXPORT int dk_json_encode_ctx(dk_ctx *c, uint32_t tape_len, uint32_t max_depth)
{
    dk_limits lim = {max_depth, 0, c->seed};
    dk_err err;
    int form = DK_FORM_ASCII;

    if (start(c, tape_len, &err) != 0) return (int)err.code;
    (void)dk_json_write_ex(c->in.data, tape_len, &lim, DK_WRITE_MAY_WIDE, &c->arena, &c->out, &form,
                           &err);
    if (finish(c, &err) != DK_OK) return (int)err.code;
    c->u16.len = 0;
    if (form == DK_FORM_UTF16) {
        c->res[DK_RES_U16] = (uint32_t)(uintptr_t)c->out.data;
        c->res[DK_RES_U16_LEN] = (uint32_t)c->out.len;
    } else if (form == DK_FORM_UTF8) {
        size_t n = c->out.len;

        if (n > SIZE_MAX / 2) err = (dk_err){DK_ERR_MEMORY, "out of memory", 0};
        if (err.code != DK_OK || dk_buf_reserve(&c->u16, 2 * n, &err, 0) != DK_OK) {
            c->res[DK_RES_OUT] = 0;
            c->res[DK_RES_OUT_LEN] = 0;
            return finish(c, &err);
        }
        c->u16.len = 2 * dk_wtf8_to_utf16(c->out.data, n, c->u16.data);
        c->res[DK_RES_U16] = (uint32_t)(uintptr_t)c->u16.data;
        c->res[DK_RES_U16_LEN] = (uint32_t)c->u16.len;
    }
    return DK_OK;
}

/*
 * Decodes the JSON text in the input area into a tape in the output,
 * within max_depth and max_length (dk_limits): its json_len bytes of
 * UTF-8, or with units != 0 (json_len then unused) the
 * units UTF-16 code units JS wrote from byte DK_U16_AT(units) on (an input
 * area of DK_U16_AREA(units) bytes), made WTF-8 in place first (a lone
 * surrogate keeps its own 3-byte form, and a JSON string keeps it:
 * dk_json_read_utf16); that length is result word DK_RES_IN_LEN, for
 * error excerpts.
 */
EXPORT int dk_json_decode_ctx(dk_ctx *c, uint32_t json_len, uint32_t max_depth, uint32_t max_length,
                              uint32_t units)
{
    dk_limits lim = {max_depth, max_length, c->seed};
    dk_err err;

    if (units != 0) {
        size_t n = 0;

        if (units > (UINT32_MAX - 1) / 3) {
            begin(c, &err);
            return reject(c, &err);
        }
        if (start(c, DK_U16_AREA(units), &err) != 0) return (int)err.code;
        (void)dk_json_read_utf16(c->in.data, units, &lim, &c->arena, &c->out, &c->u16, &n,
                                 &c->res[DK_RES_KEEP], &err);
        c->res[DK_RES_IN_LEN] = (uint32_t)n;
        return finish_decode(c, &err);
    }
    if (start(c, json_len, &err) != 0) return (int)err.code;
    memset(c->in.data + json_len, 0, DK_JSON_PADDING);
    (void)dk_json_read_ex(c->in.data, json_len, DK_READ_PADDED, &lim, &c->arena, &c->out, &c->u16,
                          &c->res[DK_RES_KEEP], &err);
    return finish_decode(c, &err);
}

/* Encodes the tape of tape_len bytes in the input area as a
 * darmok.Document (proto/darmok.proto) into the output. */
EXPORT int dk_pb_encode_ctx(dk_ctx *c, uint32_t tape_len, uint32_t max_depth)
{
    dk_limits lim = {max_depth, 0, c->seed};
    dk_err err;

    if (start(c, tape_len, &err) != 0) return (int)err.code;
    /* The tape comes from the JS layer's TapeWriter: its strings are
     * WTF-8 by construction (DK_WRITE_TRUSTED_TEXT). */
    (void)dk_pb_write_ex(c->in.data, tape_len, &lim, DK_WRITE_TRUSTED_TEXT, &c->arena, &c->out,
                         &err);
    return finish(c, &err);
}

/*
 * Decodes the darmok.Document of pb_len bytes in the input area into a
 * tape in the output, within the default amplification bound (darmok.h,
 * DK_PB_EXPANSION). flags: DK_READ_KEYREFS, DK_READ_STRREFS (dk_pb_read_ex)
 * or 0; others are ignored.
 */
EXPORT int dk_pb_decode_ctx(dk_ctx *c, uint32_t pb_len, uint32_t max_depth, uint32_t max_length,
                            uint32_t flags)
{
    dk_limits lim = {max_depth, max_length, c->seed};
    dk_err err;

    if (start(c, pb_len, &err) != 0) return (int)err.code;
    (void)dk_pb_read_ex(c->in.data, pb_len, &lim, 0, flags & (DK_READ_KEYREFS | DK_READ_STRREFS),
                        &c->arena, &c->out, &c->u16, &c->res[DK_RES_KEEP], &err);
    return finish_decode(c, &err);
}

/* Transcodes the JSON text of json_len bytes in the input area to a
 * darmok.Document in the output. */
EXPORT int dk_pb_from_json_ctx(dk_ctx *c, uint32_t json_len, uint32_t max_depth,
                               uint32_t max_length)
{
    dk_limits lim = {max_depth, max_length, c->seed};
    dk_err err;

    if (start(c, json_len, &err) != 0) return (int)err.code;
    memset(c->in.data + json_len, 0, DK_JSON_PADDING);
    (void)dk_pb_from_json_opts(c->in.data, json_len, DK_READ_PADDED, &lim, &c->arena, &c->tape,
                               &c->out, &err);
    return finish(c, &err);
}

/* Transcodes the darmok.Document of pb_len bytes in the input area to JSON
 * text of at most max_json bytes in the output (0: no bound, as 0 is the
 * default for every limit here; over it DK_ERR_TOO_LARGE). */
EXPORT int dk_pb_to_json_ctx(dk_ctx *c, uint32_t pb_len, uint32_t max_depth, uint32_t max_length,
                             uint32_t max_json)
{
    dk_limits lim = {max_depth, max_length, c->seed};
    dk_err err;

    if (start(c, pb_len, &err) != 0) return (int)err.code;
    (void)dk_pb_to_json_ex(c->in.data, pb_len, &lim, max_json != 0 ? max_json : SIZE_MAX, &c->arena,
                           &c->tape, &c->out, &err);
    return finish(c, &err);
}

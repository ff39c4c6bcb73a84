/*
 * core_native.c - time darmok's C core alone, natively, on prepared inputs.
 *
 *   dk_core_bench write TAPE_FILE [batch_ms]   tape -> JSON (dk_json_write_opts)
 *   dk_core_bench read  JSON_FILE [batch_ms]   JSON -> tape (dk_json_read_opts)
 *   dk_core_bench write16 TAPE_FILE [batch_ms] tape -> JSON as dk_json_encode_ctx
 *                                              calls it (dk_json_write_ex, UTF-16
 *                                              units allowed)
 *   dk_core_bench read16 U16_FILE [batch_ms]   UTF-16LE JSON -> tape and side
 *                                              table (dk_json_read_utf16, as
 *                                              dk_json_decode_ctx calls it for
 *                                              a JS string); the copy of the
 *                                              units into the area that each
 *                                              call needs is outside call(),
 *                                              but inside the timed batches
 *   dk_core_bench pbwrite TAPE_FILE [batch_ms] tape -> protobuf (dk_pb_write_ex,
 *                                              as dk_pb_encode_ctx calls it)
 *   dk_core_bench pbread  PB_FILE [batch_ms]   protobuf -> tape and UTF-16
 *                                              side table (dk_pb_read_ex, as
 *                                              dk_pb_decode_ctx calls it)
 *
 * With count=N in place of batch_ms it makes exactly N calls, untimed, and
 * prints nothing: for instruction counts, which a busy machine does not
 * move (valgrind --tool=callgrind --toggle-collect=call counts call() alone:
 * instructions per call = its inclusive count / N).
 *
 * bench/core.mjs builds this with the same sources as the .wasm, writes the
 * tapes and JSON texts its JS layer produced, runs this on them and puts the
 * numbers beside the same calls made in WebAssembly, so the cost of the JS
 * walk, of the boundary and of the C work can be told apart.
 *
 * Method: the arena and the output buffer are reused across calls, as the
 * WebAssembly context reuses them; a read gets its input padded once
 * (DK_READ_PADDED), as the context's input area is. Seven batches of about
 * batch_ms each; prints one JSON line with the median ns per call.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "darmok.h"
#include "dk_abi.h"
#include "dk_internal.h"

#define BATCHES 7

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The whole file, followed by DK_JSON_PADDING zero bytes. Exits on failure. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        exit(2);
    }
    if (fseek(f, 0, SEEK_END) != 0) {
        perror(path);
        exit(2);
    }
    long n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        perror(path);
        exit(2);
    }
    uint8_t *buf = calloc((size_t)n + DK_JSON_PADDING, 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: read failed\n", path);
        exit(2);
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { MODE_WRITE, MODE_READ, MODE_WRITE16, MODE_READ16, MODE_PBWRITE, MODE_PBREAD, N_MODES };
static const char *const MODES[] = {"write", "read", "write16", "read16", "pbwrite", "pbread"};

/* read16's input area: the units at DK_U16_AT(n) of DK_U16_AREA(n) +
 * DK_JSON_PADDING bytes, made UTF-8 in place by each call, so put there
 * again before the next (prepare). */
static uint8_t *area;

static void prepare(int mode, const uint8_t *in, size_t len)
{
    if (mode != MODE_READ16) return;
    memset(area, 0, DK_U16_AREA(len / 2) + DK_JSON_PADDING);
    memcpy(area + DK_U16_AT(len / 2), in, len);
}

/* One call of the core, as the WebAssembly context makes it; not inlined,
 * so that callgrind can count it alone (--toggle-collect=call). */
static __attribute__((noinline)) int call(int mode, const uint8_t *in, size_t len,
                                          dk_arena *scratch, dk_buf *out, dk_buf *u16, dk_err *err)
{
    int form = DK_FORM_ASCII;
    size_t json_len = 0;
    dk_arena_reset(scratch);
    memset(err, 0, sizeof *err);
    switch (mode) {
    case MODE_WRITE: return dk_json_write_opts(in, len, NULL, scratch, out, err);
    case MODE_READ: return dk_json_read_opts(in, len, DK_READ_PADDED, NULL, scratch, out, err);
    case MODE_WRITE16:
        return dk_json_write_ex(in, len, NULL, DK_WRITE_MAY_WIDE, scratch, out, &form, err);
    case MODE_READ16:
        return dk_json_read_utf16(area, len / 2, NULL, scratch, out, u16, &json_len, NULL, err);
    case MODE_PBWRITE:
        return dk_pb_write_ex(in, len, NULL, DK_WRITE_TRUSTED_TEXT, scratch, out, err);
    default:
        return dk_pb_read_ex(in, len, NULL, 0, DK_READ_KEYREFS | DK_READ_STRREFS, scratch, out, u16,
                             NULL, err);
    }
}

int main(int argc, char **argv)
{
    int mode = -1;
    long count = -1;
    for (int m = 0; argc >= 3 && m < N_MODES; m++)
        if (strcmp(argv[1], MODES[m]) == 0) mode = m;
    if (mode < 0) {
        fprintf(stderr,
                "usage: %s write|read|write16|read16|pbwrite|pbread FILE [batch_ms|count=N]\n",
                argv[0]);
        return 2;
    }
    if (argc > 3 && strncmp(argv[3], "count=", 6) == 0) count = atol(argv[3] + 6);
    double batch_ns = (argc > 3 && count < 0 ? atof(argv[3]) : 50.0) * 1e6;
    size_t len;
    uint8_t *in = slurp(argv[2], &len);
    area = malloc(DK_U16_AREA(len / 2) + DK_JSON_PADDING);
    if (area == NULL) return 2;

    dk_arena scratch;
    dk_buf out, u16;
    dk_err err;
    dk_arena_init(&scratch);
    dk_buf_init(&out);
    dk_buf_init(&u16);

    /* Warm up, size the batch, and check the call succeeds at all. */
    long n = 0;
    double t0 = now_ns();
    do {
        prepare(mode, in, len);
        if (call(mode, in, len, &scratch, &out, &u16, &err) != DK_OK) {
            printf("{\"error\":%d,\"pos\":%lu,\"msg\":\"%s\"}\n", (int)err.code,
                   (unsigned long)err.pos, err.msg ? err.msg : "");
            return 1;
        }
        n++;
    } while (count < 0 && now_ns() - t0 < batch_ns);
    if (count >= 0) {
        for (long i = 0; i < count; i++) {
            prepare(mode, in, len);
            if (call(mode, in, len, &scratch, &out, &u16, &err) != DK_OK) return 1;
        }
        return 0;
    }
    double per = (now_ns() - t0) / (double)n;
    long iters = (long)(batch_ns / per);
    if (iters < 1) iters = 1;

    double samples[BATCHES];
    size_t out_len = 0;
    for (int b = 0; b < BATCHES; b++) {
        double s = now_ns();
        for (long i = 0; i < iters; i++) {
            prepare(mode, in, len);
            if (call(mode, in, len, &scratch, &out, &u16, &err) != DK_OK) return 1;
        }
        samples[b] = (now_ns() - s) / (double)iters;
        out_len = out.len;
    }
    qsort(samples, BATCHES, sizeof samples[0], cmp_double);
    printf("{\"ns_per_op\":%.1f,\"min_ns\":%.1f,\"max_ns\":%.1f,\"iters\":%ld,\"in_len\":%lu,\"out_"
           "len\":%lu}\n",
           samples[BATCHES / 2], samples[0], samples[BATCHES - 1], iters, (unsigned long)len,
           (unsigned long)out_len);
    dk_buf_free(&out);
    dk_buf_free(&u16);
    dk_arena_free(&scratch);
    free(in);
    free(area);
    return 0;
}

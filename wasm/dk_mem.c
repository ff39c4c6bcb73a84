/*
 * dk_mem.c - errors, the bump arena and the growable byte buffer.
 */
#include <stdlib.h>

#include "dk_internal.h"

/*
 * A chunk of arena memory: this header, then `size` usable bytes. The
 * header is rounded up to DK_CHUNK_HDR so the data stays 16-byte aligned
 * on 32- and 64-bit targets alike.
 */
struct dk_chunk {
    dk_chunk *next; /* older chunk */
    size_t size;    /* usable bytes */
    size_t used;    /* bytes handed out */
};

#define DK_CHUNK_HDR ((sizeof(dk_chunk) + 15u) & ~(size_t)15u)
#define DK_CHUNK_MIN ((size_t)16 * 1024)
/*
 * Chunks double from DK_CHUNK_MIN up to this size, then stay at it (an
 * allocation larger than a chunk gets one of its own size): an arena
 * wastes at most one chunk, where doubling to the end would leave up to
 * half of a large arena unused.
 */
#define DK_CHUNK_MAX ((size_t)1 << 20)

/* See darmok.h. */
void dk_err_clear(dk_err *err)
{
    if (err != NULL) *err = (dk_err){DK_OK, NULL, 0};
}

/* See dk_internal.h. */
dk_err *dk_err_start(dk_err *err, dk_err *own)
{
    if (err == NULL) err = own;
    dk_err_clear(err);
    return err;
}

/* Records the first failure in err; returns the code held in err. */
int dk_fail(dk_err *err, dk_code code, const char *msg, size_t pos)
{
    if (err == NULL) return (int)code;
    if (err->code == DK_OK) {
        err->code = code;
        err->msg = msg;
        err->pos = pos;
    }
    return (int)err->code;
}

/* Makes *a an empty arena. */
void dk_arena_init(dk_arena *a)
{
    a->head = NULL;
}

/* Mallocs a chunk of `size` usable bytes and makes it the head; NULL on OOM. */
static dk_chunk *chunk_push(dk_arena *a, size_t size)
{
    dk_chunk *c;

    if (size > SIZE_MAX - DK_CHUNK_HDR - DK_ARENA_SLACK) return NULL;
    c = malloc(DK_CHUNK_HDR + size + DK_ARENA_SLACK);
    if (!c) return NULL;
    c->next = a->head;
    c->size = size;
    c->used = 0;
    a->head = c;
    return c;
}

/*
 * Returns n bytes, 8-byte aligned, valid until reset/free; NULL on OOM.
 * A new chunk is at least twice the previous one, so a call needs
 * O(log total) mallocs however many allocations it makes.
 */
void *dk_arena_alloc(dk_arena *a, size_t n)
{
    dk_chunk *c = a->head;
    uint8_t *p;

#ifdef DK_ARENA_EXACT
    /* Test builds (the native unit tests): every allocation is a chunk of
     * its own, exactly n + DK_ARENA_SLACK bytes, so AddressSanitizer sees a
     * read past the slack of any one allocation. */
    c = chunk_push(a, n);
    if (!c) return NULL;
    c->used = n;
    return (uint8_t *)c + DK_CHUNK_HDR;
#endif
    if (n > SIZE_MAX - 7u) return NULL;
    n = (n + 7u) & ~(size_t)7u;
    if (!c || c->size - c->used < n) {
        size_t size = c ? c->size : DK_CHUNK_MIN;

        /* from the last chunk's size, which an allocation of its own may
         * have made larger than DK_CHUNK_MAX: capped again */
        if (c && size < DK_CHUNK_MAX) size *= 2;
        if (size > DK_CHUNK_MAX) size = DK_CHUNK_MAX;
        if (size < n) size = n;
        c = chunk_push(a, size);
        if (!c) return NULL;
    }
    p = (uint8_t *)c + DK_CHUNK_HDR + c->used;
    c->used += n;
    return p;
}

/* Copies old[0..old_n) into a fresh array of new_n elements. */
void *dk_arena_grow(dk_arena *a, const void *old, size_t old_n, size_t new_n, size_t size)
{
    void *p;

    if (new_n < old_n || new_n > SIZE_MAX / size) return NULL;
    p = dk_arena_alloc(a, new_n * size);
    if (p && old_n) memcpy(p, old, old_n * size);
    return p;
}

/*
 * Arenas up to this size are kept for the next call; larger ones are freed.
 * An ordinary call then finds one chunk of its size, a larger one makes
 * its chunks again from memory malloc has free (a few mallocs, no copy).
 * A large arena is not kept as one chunk of its total: that chunk seldom
 * fits where the chunks it replaces were, so the next call, however small,
 * would grow WebAssembly memory by as much again.
 */
#define DK_ARENA_KEEP ((size_t)4 << 20)

/*
 * Forgets all allocations. Several chunks of at most DK_ARENA_KEEP bytes
 * in all are merged into one of their total size (best effort: if that
 * malloc fails the arena is just empty); more are freed.
 */
void dk_arena_reset(dk_arena *a)
{
    size_t total = 0;

#ifdef DK_ARENA_EXACT
    dk_arena_free(a);
    return;
#endif
    if (!a->head) return;
    for (dk_chunk *c = a->head; c; c = c->next) total += c->size;
    if (total > DK_ARENA_KEEP) {
        dk_arena_free(a);
        return;
    }
    if (!a->head->next) {
        a->head->used = 0;
        return;
    }
    dk_arena_free(a);
    (void)chunk_push(a, total);
}

/* Frees every chunk. */
void dk_arena_free(dk_arena *a)
{
    dk_chunk *c = a->head;

    while (c) {
        dk_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}

/* Makes *b an empty buffer. */
void dk_buf_init(dk_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

/* Frees b's memory. */
void dk_buf_free(dk_buf *b)
{
    free(b->data);
    dk_buf_init(b);
}

/* Grows b so that n more bytes fit; capacity at least doubles. */
int dk_buf_reserve(dk_buf *b, size_t n, dk_err *err, size_t pos)
{
    return dk_buf_reserve_upto(b, n, SIZE_MAX, err, pos);
}

/* See dk_internal.h. */
int dk_buf_reserve_upto(dk_buf *b, size_t n, size_t most, dk_err *err, size_t pos)
{
    size_t need, cap;
    uint8_t *p;

    if (b->cap - b->len >= n) return DK_OK;
    if (n > SIZE_MAX - b->len) return dk_fail(err, DK_ERR_TOO_LARGE, "output too large", pos);
    need = b->len + n;
    cap = b->cap < 256 ? 256 : b->cap;
    while (cap < need) cap = cap <= SIZE_MAX / 2 ? cap * 2 : need;
    if (cap > most) cap = most > need ? most : need;
#ifdef DK_BUF_EXACT
    /* Test builds: exactly the room asked for, so that AddressSanitizer
     * sees any store past a writer's reservation; up to 64 KiB (beyond,
     * a realloc per reservation would make the sanitizer tests of large
     * documents spend their time in the kernel). */
    if (need < 65536) cap = need;
#endif
    p = realloc(b->data, cap);
    if (!p) return dk_fail(err, DK_ERR_MEMORY, "out of memory", pos);
    b->data = p;
    b->cap = cap;
    return DK_OK;
}

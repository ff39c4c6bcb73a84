/*
 * dk_u16.h - the writers of the UTF-16 side table, whose layout dk_abi.h
 * describes at DK_U16_SRC: the core's one home for its entries. The
 * per-string steps are static inline, as both readers call them for every
 * string that gets an entry; dk_u16.c holds the one that converts.
 */
#ifndef DK_U16_H
#define DK_U16_H

#include "dk_internal.h"

/*
 * Room past the end of u for the largest entry of a str of n bytes
 * (DK_U16_HEAD + 2n: a byte gives at most one unit) when the table stays
 * within cap bytes: *units_at is then where its units go (commit it with
 * dk_u16_commit), else NULL and the str gets no entry. Fails only with
 * dk_buf_reserve's codes, at pos.
 */
DK_MUST static inline int dk_u16_room(dk_buf *u, size_t n, size_t cap, uint8_t **units_at,
                                      dk_err *err, size_t pos)
{
    *units_at = NULL;
    if (cap < DK_U16_HEAD || n > (cap - DK_U16_HEAD) / 2 || u->len > cap - DK_U16_HEAD - 2 * n)
        return DK_OK;
    if (u->cap - u->len < DK_U16_HEAD + 2 * n)
        DK_TRY(dk_buf_reserve(u, DK_U16_HEAD + 2 * n, err, pos));
    *units_at = u->data + u->len + DK_U16_HEAD;
    return DK_OK;
}

/* Commits the entry dk_u16_room made room for: the str at tape offset at
 * (<= UINT32_MAX), whose `units` units are written. */
static inline void dk_u16_commit(dk_buf *u, size_t at, size_t units)
{
    dk_wr32(u->data + u->len, (uint32_t)at);
    dk_wr32(u->data + u->len + 4, (uint32_t)units);
    u->len += DK_U16_HEAD + 2 * units;
}

/* Appends the DK_U16_SRC entry of the str at tape offset at (<= UINT32_MAX):
 * its `units` units start at unit `first` of the source text. */
DK_MUST static inline int dk_u16_put_src(dk_buf *u, size_t at, size_t units, size_t first,
                                         dk_err *err, size_t pos)
{
    if (u->cap - u->len < DK_U16_SRC_ENTRY) DK_TRY(dk_buf_reserve(u, DK_U16_SRC_ENTRY, err, pos));
    dk_wr32(u->data + u->len, (uint32_t)at);
    dk_wr32(u->data + u->len + 4, (uint32_t)units | DK_U16_SRC);
    dk_wr32(u->data + u->len + 8, (uint32_t)first);
    u->len += DK_U16_SRC_ENTRY;
    return DK_OK;
}

/*
 * Appends the entry of the tape str whose header is at tape offset at and
 * whose bytes are s[0..n), trusted WTF-8, with its units: never more than
 * DK_U16_HEAD + 2n bytes. Fails with DK_ERR_TOO_LARGE or DK_ERR_MEMORY at
 * pos.
 */
DK_MUST int dk_utf16_entry(dk_buf *u, size_t at, const uint8_t *s, size_t n, dk_err *err,
                           size_t pos);

#endif

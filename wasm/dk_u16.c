/*
 * dk_u16.c - the UTF-16 side table's entry with converted units (the
 * layout: dk_abi.h DK_U16_SRC; the inline steps: dk_u16.h).
 */
#include "dk_u16.h"

/* See dk_u16.h. */
int dk_utf16_entry(dk_buf *u, size_t at, const uint8_t *s, size_t n, dk_err *err, size_t pos)
{
    uint8_t *units_at;

    if (n > (SIZE_MAX - DK_U16_HEAD) / 2 || at > UINT32_MAX)
        return dk_fail(err, DK_ERR_TOO_LARGE, "string too long", pos);
    DK_TRY(dk_u16_room(u, n, SIZE_MAX, &units_at, err, pos));
    /* no cap here, but a table already near SIZE_MAX has no room left */
    if (units_at == NULL) return dk_fail(err, DK_ERR_TOO_LARGE, "output too large", pos);
    dk_u16_commit(u, at, dk_wtf8_to_utf16(s, n, units_at));
    return DK_OK;
}

/*
 * test_format.c - the core's own formatters against references.
 *
 * dk_fmt_int against snprintf: every integer near 0, around every power of
 * ten and of two, the ends of int64, and pseudo-random ones of every size.
 *
 * dk_fmt_iso and dk_parse_iso (the $Date strings) against a
 * reference written from ECMA-262's own definitions (DayFromYear, a search
 * for the year and the month, 64-bit arithmetic throughout): every day
 * boundary of 2,000 years around 1970, the first millisecond of every year
 * of a Date's range and the one before it, the range's ends, and many
 * pseudo-random times; every string parses back to its time. Then what the
 * parser must refuse: days past the end of their month, leap days of
 * years that have none. Deterministic; no timing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dk_internal.h"
#include "test_rng.h"
#include "test_util.h"

/* ---- the reference: ECMA-262 21.4.1, literally ---------------------------- */

static int64_t ref_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t ref_day_from_year(int64_t y)
{
    return 365 * (y - 1970) + ref_floor_div(y - 1969, 4) - ref_floor_div(y - 1901, 100) +
           ref_floor_div(y - 1601, 400);
}

static int ref_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static const int ref_month_start[2][13] = {
    {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365},
    {0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366},
};

/* toISOString of ms, by YearFromTime's search and the month table. */
static size_t ref_iso(int64_t t, char *out)
{
    int64_t day = ref_floor_div(t, 86400000), in_day = t - day * 86400000;
    int64_t y = 1970 + ref_floor_div(day * 10000, 3652425), doy;
    int leap, m = 0;
    int n;

    while (ref_day_from_year(y) > day) y--;
    while (ref_day_from_year(y + 1) <= day) y++;
    doy = day - ref_day_from_year(y);
    leap = ref_leap(y);
    while (ref_month_start[leap][m + 1] <= doy) m++;
    if (y >= 0 && y <= 9999)
        n = snprintf(out, 40, "%04lld", (long long)y);
    else
        n = snprintf(out, 40, "%c%06lld", y < 0 ? '-' : '+', (long long)(y < 0 ? -y : y));
    n += snprintf(out + n, 40, "-%02d-%02lldT%02lld:%02lld:%02lld.%03lldZ", m + 1,
                  (long long)(doy - ref_month_start[leap][m] + 1), (long long)(in_day / 3600000),
                  (long long)(in_day / 60000 % 60), (long long)(in_day / 1000 % 60),
                  (long long)(in_day % 1000));
    return (size_t)n;
}

/* ---- the checks ------------------------------------------------------------ */

/* dk_fmt_iso(t) is the reference's string, and parses back to t. */
static void check_time(int64_t t)
{
    char got[DK_ISO_MAX + 1], want[64];
    size_t n = dk_fmt_iso((double)t, got), wn = ref_iso(t, want);
    double back = -1;

    CHECK(n == wn && memcmp(got, want, wn) == 0, "%lld: %.*s, want %s", (long long)t, (int)n, got,
          want);
    CHECK(dk_parse_iso((const uint8_t *)got, n, &back) == 1 && back == (double)t,
          "%.*s parses to %.17g, want %lld", (int)n, got, back, (long long)t);
}

/* dk_fmt_int(v) is snprintf's %lld. */
static void check_int(int64_t v)
{
    char got[DK_NUM_MAX + 1], want[32];
    size_t n = dk_fmt_int(v, got);
    int wn = snprintf(want, sizeof want, "%lld", (long long)v);

    CHECK(n == (size_t)wn && memcmp(got, want, n) == 0, "%s: %.*s", want, (int)n, got);
}

/* dk_parse_iso takes s (accept) or refuses it. */
static void check_parse(const char *s, int accept)
{
    double ms;

    CHECK(dk_parse_iso((const uint8_t *)s, strlen(s), &ms) == accept, "%s: want %s", s,
          accept ? "accepted" : "refused");
}

/*
 * Every one-byte change of the dates base (either form) is refused, or
 * accepted only as a date dk_fmt_iso writes back the same: a separator
 * takes only itself, a digit only digits, each field only its range.
 */
static void check_parse_mutations(const char *base)
{
    size_t n = strlen(base);
    char s[32], back[DK_ISO_MAX];
    double ms;

    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < 256; c++) {
            int ok;

            memcpy(s, base, n);
            s[i] = (char)c;
            ok = dk_parse_iso((const uint8_t *)s, n, &ms);
            CHECK(!ok || (dk_fmt_iso(ms, back) == n && memcmp(back, s, n) == 0),
                  "%s with byte %zu = %d: accepted as another date", base, i, c);
            if (base[i] < '0' || base[i] > '9')
                CHECK(ok == (c == (unsigned char)base[i]), "%s with byte %zu = %d", base, i, c);
            else if (c < '0' || c > '9')
                CHECK(!ok, "%s with byte %zu = %d: a non-digit accepted", base, i, c);
        }
    }
}

int main(void)
{
    const int64_t max = 8640000000000000;
    uint32_t rng = 0x9e3779b9u;
    char s[64];

#ifdef __wasm32__
    /* The point of the wasm32 run (make test-c-wasm): the .wasm's size_t. */
    CHECK(sizeof(size_t) == 4 && sizeof(void *) == 4, "wasm32: size_t is %zu bytes",
          sizeof(size_t));
    printf("c-format: running as wasm32\n");
#endif
    for (int64_t v = -100000; v <= 100000; v++) check_int(v);
    for (int k = 0; k < 63; k++) {
        int64_t p2 = (int64_t)1 << k, p10 = 1;

        for (int j = 0; j < k && j < 18; j++) p10 *= 10;
        for (int64_t d = -2; d <= 2; d++) {
            check_int(p2 + d);
            check_int(-p2 - d);
            check_int(p10 + d);
            check_int(-p10 - d);
        }
    }
    check_int(INT64_MAX);
    check_int(INT64_MAX - 1);
    check_int(INT64_MIN);
    check_int(INT64_MIN + 1);
    for (int i = 0; i < 200000; i++) {
        uint64_t r = (uint64_t)xorshift32(&rng) << 32 | xorshift32(&rng);

        check_int((int64_t)r);
        check_int((int64_t)r >> (r & 63)); /* every size */
    }
    /* every day boundary (and the millisecond before) of +-1,000 years */
    for (int64_t day = -366000; day <= 366000; day++) {
        check_time(day * 86400000);
        check_time(day * 86400000 - 1);
    }
    /* the first millisecond of every year of the range, and the last of
       the year before */
    for (int64_t y = -271820; y <= 275760; y++) {
        int64_t t = ref_day_from_year(y) * 86400000;

        check_time(t);
        check_time(t - 1);
    }
    /* the first day of every 400-year era (from 0000-03-01) in the range,
       and the days around it */
    for (int64_t k = -680; k <= 690; k++) {
        for (int64_t d = -1; d <= 1; d++) {
            int64_t t = (k * 146097 - 719468 + d) * 86400000;

            if (t >= -max && t <= max) {
                check_time(t);
                check_time(t - 1);
            }
        }
    }
    check_time(max);
    check_time(-max);
    check_time(max - 1);
    check_time(-max + 1);
    /* times anywhere in the range, and within a few days of 1970 */
    for (int i = 0; i < 200000; i++) {
        uint64_t r = (uint64_t)xorshift32(&rng) << 32 | xorshift32(&rng);

        check_time((int64_t)(r % (uint64_t)(2 * max + 1)) - max);
        check_time((int64_t)(r % 1000000000) - 500000000);
    }
    /* the end of each month, and the day after it */
    for (int y = 1896; y <= 2104; y++) {
        for (int m = 1; m <= 12; m++) {
            int leap = ref_leap(y);
            int days = ref_month_start[leap][m] - ref_month_start[leap][m - 1];

            snprintf(s, sizeof s, "%04d-%02d-%02dT00:00:00.000Z", y, m, days);
            check_parse(s, 1);
            snprintf(s, sizeof s, "%04d-%02d-%02dT00:00:00.000Z", y, m, days + 1);
            check_parse(s, 0);
        }
    }
    check_parse("-000004-02-29T00:00:00.000Z", 1); /* year -4 is a leap year */
    check_parse("-000100-02-29T00:00:00.000Z", 0);
    check_parse("-000400-02-29T00:00:00.000Z", 1);
    check_parse("0000-02-29T00:00:00.000Z", 1);
    check_parse("-271821-04-20T00:00:00.000Z", 1);
    check_parse("-271821-04-19T23:59:59.999Z", 0);
    check_parse("+275760-09-13T00:00:00.000Z", 1);
    check_parse("+275760-09-13T00:00:00.001Z", 0);
    check_parse("+999999-12-31T23:59:59.999Z", 0);
    check_parse("-999999-01-01T00:00:00.000Z", 0);
    check_parse_mutations("2021-01-25T02:26:19.100Z");
    check_parse_mutations("1999-12-31T23:59:59.999Z");
    check_parse_mutations("-000400-02-29T00:00:00.000Z");
    check_parse("2021-01-25T24:00:00.000Z", 0);
    check_parse("2021-01-25T23:60:00.000Z", 0);
    check_parse("2021-01-25T23:59:60.000Z", 0);
    check_parse("2021-13-25T23:59:59.000Z", 0);
    check_parse("2021-00-25T23:59:59.000Z", 0);
    check_parse("2021-01-00T23:59:59.000Z", 0);
    return test_report("c-format");
}

/* timestamp.c — ISO-8601 parsing and formatting for int64 microseconds (UTC).
 *
 * How: a hand-written scanner over the text with fixed-width digit fields
 * (see shape/timestamp.h for the grammar), then Howard Hinnant's
 * days-from-civil arithmetic to get a day number; formatting runs the inverse
 * (civil-from-days). No libc time functions: no locale, no TZ, no allocation.
 */
#include "shape/timestamp.h"

#include <stdio.h>

/* n digits at p into *out; 0 on success. */
static int digits(const char *p, const char *end, int n, int64_t *out)
{
    if (end - p < n) return -1;
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        unsigned d = (unsigned char)p[i] - '0';
        if (d > 9) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static unsigned days_in_month(int64_t y, int64_t m)
{
    static const unsigned char days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29u : days[m - 1];
}

int64_t shape_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                  /* [0, 399] */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1; /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

/* HH[:MM[:SS[(.|,)F{1,9}]]] at *pp; advances *pp. The fraction is returned
 * in microseconds (truncated). allow_fraction: zones allow only 6 digits. */
static int parse_clock(const char **pp, const char *end, int64_t *seconds, int64_t *micros,
                       int max_fraction)
{
    const char *p = *pp;
    int64_t h, mi = 0, s = 0, us = 0;
    if (digits(p, end, 2, &h) || h > 23) return -1;
    p += 2;
    if (p < end && *p == ':') {
        if (digits(p + 1, end, 2, &mi) || mi > 59) return -1;
        p += 3;
        if (p < end && *p == ':') {
            if (digits(p + 1, end, 2, &s) || s > 59) return -1;
            p += 3;
            if (p < end && (*p == '.' || *p == ',')) {
                p++;
                int n = 0;
                while (p < end && (unsigned)((unsigned char)*p - '0') <= 9) {
                    if (n < 6) us = us * 10 + (*p - '0');
                    n++;
                    p++;
                }
                if (n == 0 || n > max_fraction) return -1;
                for (int i = n; i < 6; i++) us *= 10;
            }
        }
    }
    *seconds = h * 3600 + mi * 60 + s;
    *micros = us;
    *pp = p;
    return 0;
}

int shape_parse_iso8601(const char *text, size_t len, int64_t *out)
{
    const char *p = text, *end = text + len;
    int64_t y, m, d;
    if (digits(p, end, 4, &y) || y < 1 || end - p < 10 || p[4] != '-' || p[7] != '-' ||
        digits(p + 5, end, 2, &m) || digits(p + 8, end, 2, &d))
        return -1;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) return -1;
    p += 10;
    int64_t secs = 0, micros = 0, zone = 0;
    if (p < end) {
        if (*p != 'T' && *p != 't' && *p != ' ') return -1;
        p++;
        if (parse_clock(&p, end, &secs, &micros, 9)) return -1;
        if (p < end) {
            if (*p == 'Z' || *p == 'z') {
                p++;
            } else if (*p == '+' || *p == '-') {
                int sign = *p == '-' ? -1 : 1;
                p++;
                int64_t zs, zus;
                /* +HHMM (basic) is accepted besides +HH:MM[:SS[.ffffff]]. */
                int64_t hh, mm;
                if (end - p == 4 && !digits(p, end, 2, &hh) && !digits(p + 2, end, 2, &mm) &&
                    hh <= 23 && mm <= 59) {
                    zs = hh * 3600 + mm * 60;
                    zus = 0;
                    p += 4;
                } else if (parse_clock(&p, end, &zs, &zus, 6)) {
                    return -1;
                }
                zone = sign * (zs * 1000000 + zus);
            } else {
                return -1;
            }
        }
        if (p != end) return -1;
    }
    int64_t days = shape_days_from_civil(y, (unsigned)m, (unsigned)d);
    *out = (days * 86400 + secs) * 1000000 + micros - zone;
    return 0;
}

void shape_civil_from_days(int64_t days, int64_t *year, unsigned *month, unsigned *day)
{
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    *year = yoe + era * 400 + (m <= 2);
    *month = (unsigned)m;
    *day = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
}

int shape_format_iso8601_us(int64_t us, char *buf, size_t size)
{
    int64_t secs = us / 1000000, frac = us % 1000000;
    if (frac < 0) {
        frac += 1000000;
        secs -= 1;
    }
    int64_t days = secs / 86400, sod = secs % 86400;
    if (sod < 0) {
        sod += 86400;
        days -= 1;
    }
    int64_t y;
    unsigned m, d;
    shape_civil_from_days(days, &y, &m, &d);
    return snprintf(buf, size, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%06lldZ", (long long)y,
                    (long long)m, (long long)d, (long long)(sod / 3600), (long long)(sod / 60 % 60),
                    (long long)(sod % 60), (long long)frac);
}

/* json_write.c — the cold half of the JSON value writers (shape/json_write.h):
 * the shortest-round-trip float formatter, base64, dates, times of day,
 * decimals and uuids.
 *
 * Why here: every JSON text the product writes (events, stream-read lines,
 * registry payloads, the profile document, librdkafka property text) takes
 * its values from one set of writers in core, so none of them depends on
 * the emit or generate rooms to escape a string or print a float. The hot
 * writers are inline in the header; this file holds what is too big or too
 * rare to inline.
 * How: the float formatter finds the fewest significant digits that read
 * back (the shortest "%.*e" that strtod returns to x: correct by
 * construction, and only taken by values the header's fast path leaves),
 * then lays out those digits and the decimal exponent in the style asked
 * for (Python repr or C's %g); dates run the civil-from-days arithmetic of
 * shape/timestamp.h and times floor division, so values before midnight or
 * 1970 read like Python's datetime; base64 takes three bytes to four
 * characters; a decimal is printed from its 128-bit magnitude split into
 * 19-digit chunks.
 */
#include "shape/json_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/timestamp.h"

/* The shortest significant digits of finite, non-zero x (no trailing zeros,
 * at most 17) into mant; returns their count, *exp10 the decimal exponent
 * of the first digit. */
static size_t shortest_digits(double x, char mant[24], int *exp10)
{
    /* Reading back is monotone in the precision (a p-digit text that reads
     * back is a p+1-digit one too, and the p+1-digit rounding of x is at
     * least as close), so the least precision is found by bisection once the
     * short ones (tried in turn, the usual case) fail: 4-5 tries instead of
     * up to 17 for the long values (outliers, ratios) that reach here. */
    char tmp[40];
    int lo = 1, hi = 17; /* 17 significant digits always read back */
    for (; lo <= 3; lo++) {
        snprintf(tmp, sizeof tmp, "%.*e", lo - 1, x);
        if (strtod(tmp, NULL) == x) break;
    }
    if (lo > 3) {
        int ok = 0; /* tmp holds the text of `hi` */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            snprintf(tmp, sizeof tmp, "%.*e", mid - 1, x);
            if (strtod(tmp, NULL) == x) {
                hi = mid;
                ok = 1;
            } else {
                lo = mid + 1;
                ok = 0;
            }
        }
        if (!ok) snprintf(tmp, sizeof tmp, "%.*e", hi - 1, x);
    }
    char *e = strchr(tmp, 'e');
    *exp10 = atoi(e + 1);
    *e = 0;
    size_t m = 0;
    for (char *q = tmp; *q; q++)
        if (*q >= '0' && *q <= '9') mant[m++] = *q;
    while (m > 1 && mant[m - 1] == '0') m--;
    return m;
}

/* d[.ddd]e[+-]XX (at least two exponent digits). */
static char *exponent_form(char *p, const char *mant, size_t m, int exp10)
{
    *p++ = mant[0];
    if (m > 1) {
        *p++ = '.';
        memcpy(p, mant + 1, m - 1);
        p += m - 1;
    }
    *p++ = 'e';
    *p++ = exp10 < 0 ? '-' : '+';
    int ax = exp10 < 0 ? -exp10 : exp10;
    if (ax >= 100) *p++ = (char)('0' + ax / 100);
    *p++ = (char)('0' + ax / 10 % 10);
    *p++ = (char)('0' + ax % 10);
    return p;
}

/* Fixed notation of m digits with exponent exp10 (-4 <= exp10): for
 * exp10 >= 0 the integer part pads with zeros past the digits; the
 * fraction is the digits left over, or ".0" (repr) / nothing (%g). */
static char *fixed_form(char *p, const char *mant, size_t m, int exp10, int repr)
{
    if (exp10 < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int z = 0; z < -exp10 - 1; z++) *p++ = '0';
        memcpy(p, mant, m);
        return p + m;
    }
    for (int i = 0; i <= exp10; i++) *p++ = (size_t)i < m ? mant[i] : '0';
    if ((size_t)exp10 + 1 < m) {
        *p++ = '.';
        memcpy(p, mant + exp10 + 1, m - (size_t)exp10 - 1);
        return p + (m - (size_t)exp10 - 1);
    }
    if (repr) {
        *p++ = '.';
        *p++ = '0';
    }
    return p;
}

char *shape_format_f64(char *p, double x, int style)
{
    if (x != x || x - x != 0) {
        memcpy(p, "null", 4);
        return p + 4;
    }
    int repr = style != SHAPE_F64_PRINTF_G;
    if (x == 0) { /* 0.0 and -0.0 */
        if (1 / x < 0) *p++ = '-';
        memcpy(p, repr ? "0.0" : "0", repr ? 3 : 1);
        return p + (repr ? 3 : 1);
    }
    char mant[24];
    int exp10;
    size_t m = shortest_digits(x, mant, &exp10);
    if (x < 0) *p++ = '-';
    /* repr switches to exponents at 1e16; %g when the exponent reaches the
     * precision, which for the shortest digits is their count. */
    int high = repr ? 16 : (int)m;
    if (exp10 < -4 || exp10 >= high) return exponent_form(p, mant, m, exp10);
    return fixed_form(p, mant, m, exp10, repr);
}

char *shape_json_base64(char *p, const void *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = data;
    *p++ = '"';
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        *p++ = tab[v >> 18];
        *p++ = tab[v >> 12 & 63];
        *p++ = tab[v >> 6 & 63];
        *p++ = tab[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        *p++ = tab[v >> 18];
        *p++ = tab[v >> 12 & 63];
        *p++ = '=';
        *p++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        *p++ = tab[v >> 18];
        *p++ = tab[v >> 12 & 63];
        *p++ = tab[v >> 6 & 63];
        *p++ = '=';
    }
    *p++ = '"';
    return p;
}

char *shape_json_civil_date_uncached(char *p, int64_t days)
{
    int64_t y;
    unsigned m, d;
    shape_civil_from_days(days, &y, &m, &d);
    if (y >= 0 && y <= 9999) {
        p = shape_json_put2_(p, (unsigned)(y / 100));
        p = shape_json_put2_(p, (unsigned)(y % 100));
    } else {
        p += sprintf(p, "%lld", (long long)y);
    }
    *p++ = '-';
    p = shape_json_put2_(p, m);
    *p++ = '-';
    return shape_json_put2_(p, d);
}

char *shape_json_date(char *p, int64_t days)
{
    *p++ = '"';
    p = shape_json_civil_date(p, days);
    *p++ = '"';
    return p;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

char *shape_json_time(char *p, int64_t value, int digits)
{
    static const int64_t pow10_i64[] = {1,       10,       100,       1000,      10000,
                                        100000,  1000000,  10000000,  100000000, 1000000000};
    if (digits < 0) digits = 0;
    if (digits > 9) digits = 9;
    int64_t per_sec = pow10_i64[digits];
    int64_t secs = floor_div(value, per_sec);
    int64_t frac = value - secs * per_sec;
    int64_t sod = secs - floor_div(secs, 86400) * 86400; /* wrapped into one day */
    *p++ = '"';
    p = shape_json_put2_(p, (unsigned)(sod / 3600));
    *p++ = ':';
    p = shape_json_put2_(p, (unsigned)(sod / 60 % 60));
    *p++ = ':';
    p = shape_json_put2_(p, (unsigned)(sod % 60));
    if (digits > 0) {
        *p++ = '.';
        for (int i = digits - 1; i >= 0; i--) {
            p[i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        p += digits;
    }
    *p++ = '"';
    return p;
}

/* Decimal digits of a 128-bit magnitude, most significant first; returns the count. */
static int u128_digits(unsigned __int128 v, char out[40])
{
    const uint64_t chunk = 10000000000000000000ull; /* 1e19 */
    uint64_t parts[3];
    int nparts = 0;
    while (v >= chunk) {
        parts[nparts++] = (uint64_t)(v % chunk);
        v /= chunk;
    }
    char tmp[24];
    int n = 0, k = 0;
    uint64_t top = (uint64_t)v;
    do {
        tmp[k++] = (char)('0' + top % 10);
        top /= 10;
    } while (top);
    while (k) out[n++] = tmp[--k];
    while (nparts) {
        uint64_t part = parts[--nparts];
        for (int i = 18; i >= 0; i--) {
            out[n + i] = (char)('0' + part % 10);
            part /= 10;
        }
        n += 19;
    }
    return n;
}

char *shape_decimal_text(char *p, int64_t hi, uint64_t lo, int32_t scale)
{
    unsigned __int128 v = ((unsigned __int128)(uint64_t)hi << 64) | lo;
    int negative = hi < 0;
    if (negative) v = ~v + 1;
    char digits[40];
    int n = u128_digits(v, digits);
    if (negative) *p++ = '-';
    if (scale < 0 && v == 0) scale = 0; /* zero is "0", whatever the scale */
    if (scale <= 0) {
        memcpy(p, digits, (size_t)n);
        p += n;
        memset(p, '0', (size_t)-scale);
        return p - scale;
    }
    return shape_json_point_(p, digits, n, scale);
}

char *shape_json_decimal(char *p, int64_t hi, uint64_t lo, int32_t scale)
{
    *p++ = '"';
    p = shape_decimal_text(p, hi, lo, scale);
    *p++ = '"';
    return p;
}

char *shape_uuid_text(char *p, const uint8_t b[16])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
        *p++ = hex[b[i] >> 4];
        *p++ = hex[b[i] & 15];
    }
    return p;
}

char *shape_json_uuid(char *p, const uint8_t bytes[16])
{
    *p++ = '"';
    p = shape_uuid_text(p, bytes);
    *p++ = '"';
    return p;
}

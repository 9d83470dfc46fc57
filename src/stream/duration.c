/* duration.c — the duration grammar of the window options
 * (shape/duration.h).
 *
 * Why: a window's size, slide and gap are part of a checkpoint's identity
 * and of every window's bounds, so "1.5s" must mean exactly 1500000 µs on
 * every machine: the number is read as decimal digits and scaled by
 * integer arithmetic, never through a double.
 * How: one pass over the text — spaces, digits, optional ".digits", spaces,
 * unit, spaces, end — then integer part × unit + the fraction's digits ×
 * unit / 10^digits, rounded half to even; every step checks for overflow.
 */
#include "shape/duration.h"

#include <stddef.h>
#include <string.h>

#define EXAMPLES "examples: 500ms, 30s, 2m, 1h, 1d, 1.5s, 250us; a bare number is seconds"

static int refuse(const char *text, const char *what, shape_err *err)
{
    if (what)
        return shape_err_set(err, SHAPE_EINVAL, "%s: '%.60s' is not a duration (" EXAMPLES ")", what, text);
    return shape_err_set(err, SHAPE_EINVAL, "'%.60s' is not a duration (" EXAMPLES ")", text);
}

static int is_space(char c) { return c == ' ' || c == '\t'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The unit at *p (advanced past it): µs per unit, 0 if none matches. */
static int64_t unit_at(const char **p)
{
    static const struct {
        const char *name;
        int64_t us;
    } units[] = {{"us", 1},           {"ms", 1000},           {"s", 1000000},
                 {"m", 60 * 1000000LL}, {"h", 3600 * 1000000LL}, {"d", 86400 * 1000000LL}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t n = strlen(units[i].name);
        if (strncmp(*p, units[i].name, n) == 0 && !((*p)[n] >= 'a' && (*p)[n] <= 'z')) {
            *p += n;
            return units[i].us;
        }
    }
    return 0;
}

int shape_duration_parse(const char *text, const char *what, int64_t *us, shape_err *err)
{
    if (!text) return refuse("", what, err);
    const char *p = text;
    while (is_space(*p)) p++;
    const char *int_start = p;
    while (is_digit(*p)) p++;
    const char *int_end = p, *frac_start = p, *frac_end = p;
    if (int_end == int_start) return refuse(text, what, err);
    if (*p == '.') {
        frac_start = ++p;
        while (is_digit(*p)) p++;
        frac_end = p;
        if (frac_end == frac_start) return refuse(text, what, err);
    }
    while (is_space(*p)) p++;
    int64_t unit = 1000000;
    if (*p) {
        unit = unit_at(&p);
        if (!unit) return refuse(text, what, err);
        while (is_space(*p)) p++;
        if (*p) return refuse(text, what, err);
    }
    /* whole part × unit */
    int64_t whole = 0;
    for (const char *q = int_start; q < int_end; q++) {
        int d = *q - '0';
        if (whole > (INT64_MAX - d) / 10) return refuse(text, what, err);
        whole = whole * 10 + d;
    }
    if (whole > INT64_MAX / unit) return refuse(text, what, err);
    int64_t total = whole * unit;
    /* fraction × unit: twelve digits are more than any unit needs (a day
     * is 8.64e10 µs); later digits only matter to break a tie. */
    int64_t num = 0, den = 1; /* fraction = num / den, den a power of ten <= 1e12 */
    int sticky = 0;           /* a non-zero digit was cut off */
    for (const char *q = frac_start; q < frac_end; q++) {
        if (den < 1000000000000LL) {
            num = num * 10 + (*q - '0');
            den *= 10;
        } else if (*q != '0') {
            sticky = 1;
        }
    }
    /* num < 1e12 and unit <= 8.64e10: the product needs 128 bits. */
    __int128 scaled = (__int128)num * unit;
    __int128 q = scaled / den, r = scaled % den;
    int round_up = 0;
    if (2 * r > den || (2 * r == den && (sticky || ((total + q) & 1)))) round_up = 1;
    q += round_up;
    if (q > INT64_MAX - total) return refuse(text, what, err);
    *us = total + (int64_t)q;
    return SHAPE_OK;
}

/* temporal.c — UTC calendar parts and the hour/weekday/month/year histograms
 * of a temporal column.
 *
 * Why: a temporal column's profile counts its values by hour of day, day of
 * week (Monday = 0), month and year, in UTC, exactly (reference/spec-core.md
 * §1.10); values are µs since the epoch (ns floor-divided, dates at midnight).
 *
 * How: days = floor(µs / 86 400 000 000); the proleptic Gregorian date of a
 * day number comes from the era/day-of-era arithmetic popularised by Howard
 * Hinnant ("chrono-compatible low-level date algorithms": shift the epoch to
 * 0000-03-01 so leap days fall at the end of a year, then split into
 * 400-year eras), exact for every int64 day count a µs value can reach;
 * 1970-01-01 was a Thursday, so dow = (days + 3) mod 7. Consecutive values
 * usually share a day, so the histogram remembers the last day's weekday,
 * month and year slot and skips the conversion. Years are a sorted array of
 * (year, count).
 */
#include "shape/profile.h"
#include "shape/timestamp.h"

#include <stdlib.h>
#include <string.h>

#define US_PER_DAY INT64_C(86400000000)
#define US_PER_HOUR INT64_C(3600000000)

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int dow_from_days(int64_t days)
{
    int64_t r = (days + 3) % 7; /* 1970-01-01 was a Thursday (3 with Monday = 0) */
    return (int)(r < 0 ? r + 7 : r);
}

/* µs within the day, in [0, US_PER_DAY) (no overflow at the int64 ends). */
static int64_t floor_mod(int64_t a, int64_t b)
{
    int64_t r = a % b;
    return r < 0 ? r + b : r;
}

void shape_civil_from_us(int64_t us, shape_civil *out)
{
    int64_t days = floor_div(us, US_PER_DAY);
    int64_t rem = floor_mod(us, US_PER_DAY);
    out->hour = (int)(rem / US_PER_HOUR);
    out->dow = dow_from_days(days);
    unsigned month, day;
    shape_civil_from_days(days, &out->year, &month, &day);
    out->month = (int)month;
    out->day = (int)day;
}

void shape_timehist_init(shape_timehist *t) { memset(t, 0, sizeof *t); }

void shape_timehist_free(shape_timehist *t)
{
    free(t->years);
    shape_timehist_init(t);
}

/* Index of `year` in the sorted years, inserting it (count 0) if absent. */
static int year_slot(shape_timehist *t, int64_t year, size_t *slot, shape_err *err)
{
    size_t lo = 0, hi = t->n_years;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->years[mid].year < year)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->n_years && t->years[lo].year == year) {
        *slot = lo;
        return SHAPE_OK;
    }
    if (t->n_years == t->cap_years) {
        size_t cap = t->cap_years ? t->cap_years * 2 : 8;
        shape_year_bin *p = realloc(t->years, cap * sizeof *p);
        if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a year histogram");
        t->years = p;
        t->cap_years = cap;
    }
    memmove(t->years + lo + 1, t->years + lo, (t->n_years - lo) * sizeof *t->years);
    t->years[lo].year = year;
    t->years[lo].count = 0;
    t->n_years++;
    if (t->have_last && t->last_year_index >= lo) t->last_year_index++;
    *slot = lo;
    return SHAPE_OK;
}

int shape_timehist_add(shape_timehist *t, int64_t us, shape_err *err)
{
    int64_t days = floor_div(us, US_PER_DAY);
    int64_t rem = floor_mod(us, US_PER_DAY);
    if (!t->have_last || days != t->last_day) {
        int64_t year;
        unsigned month, day;
        shape_civil_from_days(days, &year, &month, &day);
        size_t slot;
        SHAPE_RETURN_NOT_OK(year_slot(t, year, &slot, err));
        t->last_day = days;
        t->last_dow = dow_from_days(days);
        t->last_month = (int)month - 1;
        t->last_year_index = slot;
        t->have_last = 1;
    }
    t->hour[rem / US_PER_HOUR]++;
    t->dow[t->last_dow]++;
    t->month[t->last_month]++;
    t->years[t->last_year_index].count++;
    return SHAPE_OK;
}

int shape_timehist_add_year(shape_timehist *t, int64_t year, int64_t times, shape_err *err)
{
    size_t slot;
    SHAPE_RETURN_NOT_OK(year_slot(t, year, &slot, err));
    t->years[slot].count += times;
    return SHAPE_OK;
}

int shape_timehist_merge(shape_timehist *dst, const shape_timehist *src, shape_err *err)
{
    /* Make room for every year first so a failure leaves dst unchanged. */
    size_t need = dst->n_years + src->n_years;
    if (need > dst->cap_years) {
        shape_year_bin *p = realloc(dst->years, need * sizeof *p);
        if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a year histogram");
        dst->years = p;
        dst->cap_years = need;
    }
    for (int i = 0; i < 24; i++) dst->hour[i] += src->hour[i];
    for (int i = 0; i < 7; i++) dst->dow[i] += src->dow[i];
    for (int i = 0; i < 12; i++) dst->month[i] += src->month[i];
    for (size_t i = 0; i < src->n_years; i++)
        (void)shape_timehist_add_year(dst, src->years[i].year, src->years[i].count, NULL); /* room reserved */
    return SHAPE_OK;
}

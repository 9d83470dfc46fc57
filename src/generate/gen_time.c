/* gen_time.c — calendar arithmetic, uniform instants and the seasonal date model.
 *
 * Why: timestamps are int64 nanoseconds since the epoch (UTC); generators
 * need days, months and weekdays of them without the C library's time zone
 * machinery (which is locale- and TZ-dependent and not thread-friendly), and
 * retail's order dates follow a seasonal model (month x weekday weights, two
 * daily peaks) that must be drawn from one row's draws alone.
 * How: the core's days_from_civil / civil_from_days (shape/timestamp.h: exact, any year);
 * the seasonal model precomputes the cumulative probability of each day of
 * the range once (1,461 doubles for 2022-2025) plus a guide table of where
 * each 1/2048 of probability starts, and draws a day by a short walk from
 * the guide entry, optionally restricted to days from a lower bound on (so an order
 * is never before its customer signed up) by rescaling the uniform into the
 * tail of the distribution; the hour comes from an alias table over 24
 * weights, the second is uniform.
 */
#include "shape/generate.h"
#include "shape/timestamp.h"

#include <stdlib.h>

unsigned shape_gen_weekday(int64_t days)
{
    /* 1970-01-01 was a Thursday (3 with Monday = 0). */
    int64_t w = (days + 3) % 7;
    return (unsigned)(w < 0 ? w + 7 : w);
}

int64_t shape_gen_instant_us(shape_gen_stream s, uint64_t row, uint32_t i, int64_t start_ns,
                             int64_t end_ns)
{
    if (end_ns <= start_ns) return start_ns;
    uint64_t span_us = (uint64_t)(end_ns - start_ns) / 1000;
    if (span_us == 0) return start_ns;
    return start_ns + (int64_t)shape_gen_below(s, row, i, span_us) * 1000;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int shape_gen_seasonal_init(shape_gen_seasonal *m, int64_t first_day, uint32_t ndays,
                            const double month_w[12], const double weekday_w[7],
                            const double *peak_hours, size_t npeaks, double sigma_hours,
                            shape_err *err)
{
    m->cdf = NULL;
    m->guide = NULL;
    if (ndays == 0) return shape_err_set(err, SHAPE_EINVAL, "seasonal model: empty date range");
    if (npeaks == 0 || !(sigma_hours > 0.0))
        return shape_err_set(err, SHAPE_EINVAL, "seasonal model: needs daily peaks and sigma > 0");
    unsigned bucket_days[12][7] = {{0}};
    for (uint32_t i = 0; i < ndays; i++) {
        int64_t y;
        unsigned mo, d;
        shape_civil_from_days(first_day + i, &y, &mo, &d);
        bucket_days[mo - 1][shape_gen_weekday(first_day + i)]++;
    }
    double *cdf = malloc(sizeof *cdf * ndays + sizeof(uint32_t) * SHAPE_GEN_SEASONAL_GUIDE);
    if (!cdf) return shape_err_set(err, SHAPE_ENOMEM, "seasonal model: out of memory");
    double total = 0.0;
    for (uint32_t i = 0; i < ndays; i++) {
        int64_t y;
        unsigned mo, d;
        shape_civil_from_days(first_day + i, &y, &mo, &d);
        unsigned wd = shape_gen_weekday(first_day + i);
        total += month_w[mo - 1] * weekday_w[wd] / bucket_days[mo - 1][wd];
        cdf[i] = total;
    }
    if (!(total > 0.0)) {
        free(cdf);
        return shape_err_set(err, SHAPE_EINVAL, "seasonal model: weights sum to 0");
    }
    for (uint32_t i = 0; i < ndays; i++) cdf[i] /= total;
    cdf[ndays - 1] = 1.0;
    /* Guide table (Chen and Asau): where to start looking for a uniform t,
     * so a draw walks ~1-2 entries instead of a binary search. */
    uint32_t *guide = (uint32_t *)(cdf + ndays);
    uint32_t d = 0;
    for (uint32_t b = 0; b < SHAPE_GEN_SEASONAL_GUIDE; b++) {
        double t = (double)b / SHAPE_GEN_SEASONAL_GUIDE;
        while (d < ndays - 1 && !(cdf[d] > t)) d++;
        guide[b] = d;
    }

    double hw[24];
    for (int h = 0; h < 24; h++) {
        hw[h] = 0.0;
        for (size_t p = 0; p < npeaks; p++)
            for (int wrap = -1; wrap <= 1; wrap++) {
                double dist = (double)h - peak_hours[p] + 24.0 * wrap;
                hw[h] += shape_gen_exp(-dist * dist / (2.0 * sigma_hours * sigma_hours));
            }
    }
    double hsum = 0.0;
    for (int h = 0; h < 24; h++) hsum += hw[h];
    double run = 0.0;
    for (int h = 0; h < 24; h++) {
        run += hw[h];
        m->hour_cdf[h] = run / hsum;
    }
    m->hour_cdf[23] = 1.0;
    int rc = shape_gen_alias_init(&m->hours, hw, 24, err);
    if (rc != SHAPE_OK) {
        free(cdf);
        return rc;
    }
    m->first_day = first_day;
    m->ndays = ndays;
    m->cdf = cdf;
    m->guide = guide;
    return SHAPE_OK;
}

void shape_gen_seasonal_free(shape_gen_seasonal *m)
{
    if (!m) return;
    free(m->cdf);
    m->cdf = NULL;
    m->guide = NULL;
}

int64_t shape_gen_seasonal_draw(const shape_gen_seasonal *m, shape_gen_stream s, uint64_t row,
                                uint32_t i, int64_t not_before_ns)
{
    uint32_t lo = 0;
    if (not_before_ns != INT64_MIN) {
        int64_t d = floor_div(not_before_ns, SHAPE_GEN_NS_PER_DAY) - m->first_day;
        if (d >= (int64_t)m->ndays) d = (int64_t)m->ndays - 1;
        if (d > 0) lo = (uint32_t)d;
    }
    double base = lo > 0 ? m->cdf[lo - 1] : 0.0;
    double t = base + shape_gen_unit(s, row, i) * (1.0 - base);
    /* first day a >= lo with cdf[a] > t: start at the guide entry of t
     * (cdf is non-decreasing, so no earlier day can qualify) */
    size_t g = (size_t)(t * SHAPE_GEN_SEASONAL_GUIDE);
    if (g >= SHAPE_GEN_SEASONAL_GUIDE) g = SHAPE_GEN_SEASONAL_GUIDE - 1;
    uint32_t a = m->guide[g];
    if (a < lo) a = lo;
    while (a < m->ndays - 1 && !(m->cdf[a] > t)) a++;
    int64_t hour = shape_gen_alias_draw(&m->hours, s, row, i + 1);
    int64_t sec = (int64_t)shape_gen_below(s, row, i + 2, 3600);
    int64_t ns = ((m->first_day + a) * 86400 + hour * 3600 + sec) * SHAPE_GEN_NS_PER_SEC;
    if (not_before_ns != INT64_MIN && ns < not_before_ns) {
        int64_t whole = floor_div(not_before_ns, SHAPE_GEN_NS_PER_SEC) * SHAPE_GEN_NS_PER_SEC;
        ns = whole < not_before_ns ? whole + SHAPE_GEN_NS_PER_SEC : whole;
    }
    return ns;
}

int64_t shape_gen_seasonal_quantile(const shape_gen_seasonal *m, double t)
{
    if (!(t > 0.0)) t = 0.0;
    if (t >= 1.0) t = 0x1.fffffffffffffp-1;
    size_t g = (size_t)(t * SHAPE_GEN_SEASONAL_GUIDE);
    if (g >= SHAPE_GEN_SEASONAL_GUIDE) g = SHAPE_GEN_SEASONAL_GUIDE - 1;
    uint32_t a = m->guide[g];
    while (a < m->ndays - 1 && !(m->cdf[a] > t)) a++;
    /* Each step maps the rest of t into [0, 1) of the next cell with a
     * subtraction and a division by a positive constant: both monotone under
     * rounding, so the result never decreases as t grows. */
    double prev = a ? m->cdf[a - 1] : 0.0, width = m->cdf[a] - prev;
    double v = width > 0 ? (t - prev) / width : 0.0;
    if (v < 0) v = 0;
    int h = 0;
    while (h < 23 && !(m->hour_cdf[h] > v)) h++;
    double hprev = h ? m->hour_cdf[h - 1] : 0.0, hw = m->hour_cdf[h] - hprev;
    double w = hw > 0 ? (v - hprev) / hw : 0.0;
    int64_t sec = w <= 0 ? 0 : (int64_t)(w * 3600.0);
    if (sec > 3599) sec = 3599;
    return ((m->first_day + a) * 86400 + h * 3600 + sec) * SHAPE_GEN_NS_PER_SEC;
}

double shape_gen_seasonal_cdf(const shape_gen_seasonal *m, int64_t t_ns)
{
    int64_t sec = floor_div(t_ns, SHAPE_GEN_NS_PER_SEC);
    int64_t day = floor_div(sec, 86400) - m->first_day;
    if (day < 0) return 0.0;
    if (day >= (int64_t)m->ndays) return 1.0;
    int64_t in_day = sec - (m->first_day + day) * 86400;
    int h = (int)(in_day / 3600);
    double hprev = h ? m->hour_cdf[h - 1] : 0.0;
    double v = hprev + (m->hour_cdf[h] - hprev) * ((double)(in_day - h * 3600) / 3600.0);
    double prev = day ? m->cdf[day - 1] : 0.0;
    return prev + (m->cdf[day] - prev) * v;
}

int64_t shape_gen_add_lognormal_days(shape_gen_stream s, uint64_t row, uint32_t i, int64_t source_ns,
                                     double mu, double sigma, int64_t min_days, int64_t max_days)
{
    double x = shape_gen_exp(mu + sigma * shape_gen_normal(s, row, i));
    int64_t days = x >= 1e15 ? max_days : (int64_t)(x + 0.5);
    if (days < min_days) days = min_days;
    if (days > max_days) days = max_days;
    return source_ns + days * SHAPE_GEN_NS_PER_DAY;
}

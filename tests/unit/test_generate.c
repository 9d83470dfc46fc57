/* test_generate.c — the generator core (shape/generate.h): the counter-based
 * random source, portable math, distributions, permutations, allocations
 * and the seasonal date model.
 *
 * Statistical checks use fixed seeds and sample sizes, so they are
 * deterministic; each tolerance is stated next to it and is at least 4
 * standard errors of the estimate, so a correct implementation passes
 * with any seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/generate.h"
#include "shape/timestamp.h"

static double absd(double x) { return x < 0 ? -x : x; }

#define assert_near(a, b, tol)                                                            \
    do {                                                                                  \
        double a_ = (a), b_ = (b), t_ = (tol);                                            \
        if (!(absd(a_ - b_) <= t_)) fail_msg("%s = %.9g, expected %.9g +- %.3g", #a, a_, b_, t_); \
    } while (0)

/* ---- random source ------------------------------------------------------ */

static void test_draws_are_pure_functions(void **state)
{
    (void)state;
    shape_gen_stream a = shape_gen_stream_make(42, "order", "status", "enum");
    shape_gen_stream b = shape_gen_stream_make(42, "order", "status", "enum");
    shape_gen_stream c = shape_gen_stream_make(43, "order", "status", "enum");
    shape_gen_stream d = shape_gen_stream_make(42, "order", "store_id", "enum");
    shape_gen_stream e = shape_gen_stream_make(42, "order", "status", "null");
    assert_true(a.key == b.key);
    assert_true(a.key != c.key && a.key != d.key && a.key != e.key);
    /* Same (stream, row, i) → same value, in any order of asking. */
    for (uint64_t r = 0; r < 1000; r++) assert_true(shape_gen_u64(a, r, 0) == shape_gen_u64(b, r, 0));
    assert_true(shape_gen_u64(a, 5, 1) != shape_gen_u64(a, 5, 0));
    assert_true(shape_gen_u64(a, 5, 0) != shape_gen_u64(a, 6, 0));
    /* Neighbouring rows and draw indices are unrelated: about half of the
     * bits differ (mean 32 over 10,000 pairs, sd 0.04). */
    double flips = 0;
    for (uint64_t r = 0; r < 10000; r++)
        flips += __builtin_popcountll(shape_gen_u64(a, r, 0) ^ shape_gen_u64(a, r + 1, 0));
    assert_near(flips / 10000, 32.0, 0.3);
    flips = 0;
    for (uint64_t r = 0; r < 10000; r++)
        flips += __builtin_popcountll(shape_gen_u64(a, r, 0) ^ shape_gen_u64(c, r, 0));
    assert_near(flips / 10000, 32.0, 0.3);
}

static void test_unit_and_below(void **state)
{
    (void)state;
    shape_gen_stream s = shape_gen_stream_make(1, "t", "c", "l");
    double sum = 0;
    for (uint64_t r = 0; r < 100000; r++) {
        double u = shape_gen_unit(s, r, 0);
        assert_true(u >= 0.0 && u < 1.0);
        sum += u;
    }
    assert_near(sum / 100000, 0.5, 0.004); /* sd 0.0009 */
    /* below(n): in range, every value hit, chi-square of 7 buckets. */
    uint64_t counts[7] = {0};
    for (uint64_t r = 0; r < 70000; r++) {
        uint64_t v = shape_gen_below(s, r, 3, 7);
        assert_true(v < 7);
        counts[v]++;
    }
    double chi = 0;
    for (int i = 0; i < 7; i++) chi += (counts[i] - 10000.0) * (counts[i] - 10000.0) / 10000.0;
    assert_true(chi < 22.5); /* p = 0.001 for 6 degrees of freedom */
    assert_int_equal(shape_gen_below(s, 9, 0, 1), 0);
    /* n close to 2^64 exercises the rejection path and stays in range. */
    uint64_t big = UINT64_MAX - 5;
    for (uint64_t r = 0; r < 1000; r++) assert_true(shape_gen_below(s, r, 0, big) < big);
    assert_true(shape_gen_below_slow(s, 1, 0, 3) < 3);
    /* chance */
    int hits = 0;
    for (uint64_t r = 0; r < 100000; r++) hits += shape_gen_chance(s, r, 0, 0.05);
    assert_near(hits / 100000.0, 0.05, 0.003); /* sd 0.0007 */
    assert_false(shape_gen_chance(s, 1, 0, 0.0));
    assert_true(shape_gen_chance(s, 1, 0, 1.0));
}

/* ---- math --------------------------------------------------------------- */

static void test_portable_math(void **state)
{
    (void)state;
    assert_true(shape_gen_log(1.0) == 0.0);
    assert_true(shape_gen_exp(0.0) == 1.0);
    assert_near(shape_gen_log(2.0), 0.6931471805599453, 4e-16);
    assert_near(shape_gen_log(10.0), 2.302585092994046, 8e-16);
    assert_near(shape_gen_exp(1.0), 2.718281828459045, 8e-16);
    assert_near(shape_gen_exp(-20.0), 2.061153622438558e-09, 1e-23);
    assert_near(shape_gen_sqrt(2.0), 1.4142135623730951, 3e-16);
    assert_true(shape_gen_sqrt(16.0) == 4.0);
    assert_true(shape_gen_sqrt(0.0) == 0.0);
    assert_near(shape_gen_log1p(1e-10), 9.9999999995e-11, 1e-25);
    assert_near(shape_gen_expm1(1e-10), 1.00000000005e-10, 1e-25);
    assert_near(shape_gen_pow(2.0, 10.0), 1024.0, 1e-12);
    assert_near(shape_gen_log(1e-310), -713.8013788281542, 1e-12); /* subnormal */
    assert_true(shape_gen_exp(1000.0) > 1e308);
    assert_true(shape_gen_exp(-1000.0) == 0.0);
    /* exp and log are inverse to ~1 ulp over the whole range used. */
    for (double x = -700; x < 700; x += 0.37) {
        double y = shape_gen_log(shape_gen_exp(x));
        assert_true(absd(y - x) <= 4e-16 * (absd(x) > 1 ? absd(x) : 1));
    }
    for (double x = 1e-300; x < 1e300; x *= 7.7) {
        double s = shape_gen_sqrt(x);
        assert_true(absd(s * s - x) <= 4.5e-16 * x);
    }
    /* Rounding to a scale, half away from zero. */
    assert_true(shape_gen_round_scale(20.085, 2) == 20.09 || shape_gen_round_scale(20.085, 2) == 20.08);
    assert_true(shape_gen_round_scale(1.005 * 1000, 0) == 1005.0);
    assert_true(shape_gen_round_scale(-2.5, 0) == -3.0);
    assert_true(shape_gen_round_scale(12.345678, 2) == 12.35);
    assert_int_equal(shape_gen_cents(19.999), 2000);
    assert_int_equal(shape_gen_cents(-0.014), -1);
}

/* ---- distributions ------------------------------------------------------ */

static void test_alias(void **state)
{
    (void)state;
    shape_gen_alias a;
    shape_err err;
    const double w[] = {0.77, 0.08, 0.02, 0.04, 0.09};
    assert_int_equal(shape_gen_alias_init(&a, w, 5, &err), SHAPE_OK);
    shape_gen_stream s = shape_gen_stream_make(42, "order", "status", "enum");
    uint64_t n = 200000, c[5] = {0};
    for (uint64_t r = 0; r < n; r++) c[shape_gen_alias_draw(&a, s, r, 0)]++;
    for (int i = 0; i < 5; i++) assert_near((double)c[i] / n, w[i], 0.004); /* sd <= 0.0009 */
    /* A zero weight is never drawn; unnormalised weights work. */
    const double w2[] = {0.0, 3.0, 1.0};
    assert_int_equal(shape_gen_alias_init(&a, w2, 3, &err), SHAPE_OK);
    uint64_t c2[3] = {0};
    for (uint64_t r = 0; r < 40000; r++) c2[shape_gen_alias_draw(&a, s, r, 0)]++;
    assert_int_equal(c2[0], 0);
    assert_near(c2[1] / 40000.0, 0.75, 0.01);
    const double bad[] = {0.0, 0.0};
    assert_int_equal(shape_gen_alias_init(&a, bad, 2, &err), SHAPE_EINVAL);
    assert_int_equal(shape_gen_alias_init(&a, w, 0, &err), SHAPE_EINVAL);
}

static void test_normal_lognormal(void **state)
{
    (void)state;
    shape_gen_stream s = shape_gen_stream_make(7, "product", "unit_price", "lognormal");
    uint64_t n = 200000;
    double sum = 0, sq = 0;
    uint64_t below1 = 0, below_med = 0;
    for (uint64_t r = 0; r < n; r++) {
        double z = shape_gen_normal(s, r, 0);
        sum += z;
        sq += z * z;
        below1 += z < 1.0;
        double p = shape_gen_lognormal(s, r, 1, 3.0, 1.0, 0.99, 999.99);
        assert_true(p >= 0.99 && p <= 999.99);
        below_med += p < 20.085536923187668; /* e^3, the median */
    }
    assert_near(sum / n, 0.0, 0.01);                /* sd 0.0022 */
    assert_near(sq / n - (sum / n) * (sum / n), 1.0, 0.013); /* sd 0.0032 */
    assert_near((double)below1 / n, 0.8413447, 0.004); /* sd 0.0008 */
    assert_near((double)below_med / n, 0.5, 0.005);    /* sd 0.0011 */
}

static void test_geometric_poisson_pareto(void **state)
{
    (void)state;
    shape_gen_stream s = shape_gen_stream_make(3, "order_line", "quantity", "geometric");
    uint64_t n = 100000, g[21] = {0}, p[20] = {0};
    double pmean = 0;
    for (uint64_t r = 0; r < n; r++) {
        int64_t k = shape_gen_geometric(s, r, 0, 0.6, 1, 20);
        assert_true(k >= 1 && k <= 20);
        g[k]++;
        int64_t m = shape_gen_poisson(s, r, 1, 2.5, 0, 19);
        p[m]++;
        pmean += (double)m;
    }
    assert_near((double)g[1] / n, 0.6, 0.007);  /* sd 0.0015 */
    assert_near((double)g[2] / n, 0.24, 0.006);
    assert_near((double)g[3] / n, 0.096, 0.004);
    assert_near(pmean / n, 2.5, 0.025);          /* sd 0.005 */
    assert_near((double)p[0] / n, 0.0820850, 0.004);
    /* large lambda takes the normal approximation */
    double big = 0;
    for (uint64_t r = 0; r < 20000; r++) big += (double)shape_gen_poisson(s, r, 2, 400.0, 0, 100000);
    assert_near(big / 20000, 400.0, 1.0); /* sd 0.14 */
    /* Pareto ranks: heavy head. For Lomax(1.16) cut at 0.995 the top 1 % of
     * ranks gets P(x < 0.01 xmax) / 0.995 = 0.5427 of the draws. */
    uint64_t top = 0;
    for (uint64_t r = 0; r < n; r++) {
        uint64_t k = shape_gen_pareto_rank(s, r, 3, 1.16, 0.995, 10000);
        assert_true(k < 10000);
        top += k < 100;
    }
    assert_near((double)top / n, 0.5427, 0.008); /* sd 0.0016 */
}

static void test_zipf(void **state)
{
    (void)state;
    shape_gen_zipf z;
    shape_err err;
    assert_int_equal(shape_gen_zipf_init(&z, 150, 1.3, &err), SHAPE_OK);
    double h = 0;
    for (int k = 1; k <= 150; k++) h += shape_gen_pow(k, -1.3);
    shape_gen_stream s = shape_gen_stream_make(42, "order", "store_id", "zipf");
    uint64_t n = 200000, c[151] = {0};
    for (uint64_t r = 0; r < n; r++) {
        uint64_t k = shape_gen_zipf_draw(&z, s, r, 0);
        assert_true(k >= 1 && k <= 150);
        c[k]++;
    }
    for (int k = 1; k <= 4; k++) assert_near((double)c[k] / n, shape_gen_pow(k, -1.3) / h, 0.005);
    /* Past the 255-rank head table the tail sampler takes over: compare the
     * mass of rank bands of Zipf(1.5) over 100,000 ranks with exact sums
     * (n = 400,000 draws; sd of each share <= 0.0008). */
    assert_int_equal(shape_gen_zipf_init(&z, 100000, 1.5, &err), SHAPE_OK);
    double zn = 0, band[4] = {0};
    static const uint64_t edges[5] = {1, 256, 1000, 10000, 100001};
    for (uint64_t k = 1; k <= 100000; k++) {
        double w = shape_gen_pow((double)k, -1.5);
        zn += w;
        for (int b = 0; b < 4; b++)
            if (k >= edges[b] && k < edges[b + 1]) band[b] += w;
    }
    uint64_t got[4] = {0}, draws = 400000;
    for (uint64_t r = 0; r < draws; r++) {
        uint64_t k = shape_gen_zipf_draw(&z, s, r, 0);
        assert_true(k >= 1 && k <= 100000);
        for (int b = 0; b < 4; b++)
            if (k >= edges[b] && k < edges[b + 1]) got[b]++;
    }
    for (int b = 0; b < 4; b++) assert_near((double)got[b] / draws, band[b] / zn, 0.003);
    /* one rank, and a huge n */
    assert_int_equal(shape_gen_zipf_init(&z, 1, 1.5, &err), SHAPE_OK);
    assert_int_equal(shape_gen_zipf_draw(&z, s, 3, 0), 1);
    assert_int_equal(shape_gen_zipf_init(&z, 10000000000ULL, 1.5, &err), SHAPE_OK);
    for (uint64_t r = 0; r < 1000; r++) {
        uint64_t k = shape_gen_zipf_draw(&z, s, r, 0);
        assert_true(k >= 1 && k <= 10000000000ULL);
    }
    assert_int_equal(shape_gen_zipf_init(&z, 0, 1.5, &err), SHAPE_EINVAL);
}

/* ---- permutations ------------------------------------------------------- */

static void test_permutation(void **state)
{
    (void)state;
    static const uint64_t sizes[] = {1, 2, 3, 7, 150, 1000, 4096, 5001};
    shape_gen_stream s = shape_gen_stream_make(42, "x", "y", "perm");
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        uint64_t n = sizes[t];
        shape_gen_perm p;
        shape_gen_perm_init(&p, n, s);
        unsigned char *seen = calloc(n, 1);
        uint64_t fixed = 0;
        for (uint64_t x = 0; x < n; x++) {
            uint64_t y = shape_gen_perm_apply(&p, x);
            assert_true(y < n);
            assert_false(seen[y]);
            seen[y] = 1;
            assert_true(shape_gen_perm_invert(&p, y) == x);
            fixed += y == x;
        }
        if (n >= 1000) assert_true(fixed < 10); /* ~1 expected */
        free(seen);
    }
    /* Large n: inverse of apply. */
    shape_gen_perm p;
    shape_gen_perm_init(&p, 10000000000ULL, s);
    for (uint64_t x = 0; x < 10000; x += 7) {
        uint64_t y = shape_gen_perm_apply(&p, x * 999983);
        assert_true(y < 10000000000ULL);
        assert_true(shape_gen_perm_invert(&p, y) == x * 999983);
    }
}

/* ---- allocations -------------------------------------------------------- */

static void check_alloc(uint64_t parents, uint64_t children, const double *q, uint32_t kmax)
{
    shape_gen_alloc a;
    shape_err err;
    assert_int_equal(shape_gen_alloc_init(&a, parents, children, q, kmax, &err), SHAPE_OK);
    uint64_t next = 0;
    for (uint64_t r = 0; r < parents; r++) {
        shape_gen_alloc_run run;
        shape_gen_alloc_parent(&a, r, &run);
        assert_true(r >= run.rank && r < run.rank + run.len);
        assert_true(run.k <= kmax);
        uint64_t first = run.child + (r - run.rank) * run.k;
        assert_true(first == next); /* children of consecutive ranks are consecutive */
        for (uint32_t i = 0; i < run.k; i++) {
            shape_gen_alloc_run cr;
            shape_gen_alloc_child(&a, first + i, &cr);
            assert_true(cr.rank + (first + i - cr.child) / cr.k == r);
            assert_true((first + i - cr.child) % cr.k == i);
        }
        next = first + run.k;
    }
    assert_true(next == children); /* the exact total */
}

static void test_allocation(void **state)
{
    (void)state;
    double q[SHAPE_GEN_ALLOC_MAX_K + 1];
    shape_gen_poisson_counts(q, 16, 2.5);
    check_alloc(5000, 12500, q, 16);
    check_alloc(20000, 50000, q, 16); /* several blocks and a tail */
    check_alloc(7, 17, q, 16);
    check_alloc(1, 2, q, 16);
    shape_gen_poisson_counts(q, 12, 1.5);
    check_alloc(50000, 75000, q, 12);
    shape_gen_pareto_counts(q, 50, 10.0, 1.16, 0.995, NULL, 0);
    check_alloc(9000, 90000, q, 50);
    shape_gen_pareto_counts(q, 50, 50.0, 1.16, 0.995, NULL, 0); /* mean at the cap */
    check_alloc(300, 15000, q, 50);
    shape_gen_alloc a;
    shape_err err;
    assert_int_equal(shape_gen_alloc_init(&a, 10, 501, q, 50, &err), SHAPE_EINVAL); /* > 50 each */
    assert_int_equal(shape_gen_alloc_init(&a, 0, 1, q, 50, &err), SHAPE_EINVAL);

    /* The distribution of children per parent follows q: Poisson(2.5)
     * over 500,000 parents gives P(0) = e^-2.5 to rounding. */
    shape_gen_poisson_counts(q, 16, 2.5);
    assert_int_equal(shape_gen_alloc_init(&a, 500000, 1250000, q, 16, &err), SHAPE_OK);
    uint64_t zero = 0, r = 0;
    while (r < a.parents) {
        shape_gen_alloc_run run;
        shape_gen_alloc_parent(&a, r, &run);
        if (run.k == 0) zero += run.rank + run.len - r;
        r = run.rank + run.len;
    }
    assert_near((double)zero / 500000, 0.0820850, 0.0005);
}

static void test_pareto_counts(void **state)
{
    (void)state;
    double q[SHAPE_GEN_ALLOC_MAX_K + 1];
    shape_gen_pareto_counts(q, 50, 10.0, 1.16, 0.995, NULL, 0);
    double sum = 0, mean = 0;
    for (int k = 0; k <= 50; k++) {
        sum += q[k];
        mean += k * q[k];
    }
    assert_near(sum, 1.0, 1e-9);
    assert_near(mean, 10.0, 1e-6);
    /* The cap binds: a few percent of customers sit at exactly 50. */
    assert_true(q[50] > 0.01 && q[50] < 0.1);
    shape_gen_pareto_counts(q, 100, 100.0, 1.16, 0.995, NULL, 0);
    assert_true(q[100] == 1.0);
    /* With tenure: same mean; each row of the posterior is a CDF ending at
     * 1; mixing the rows by q gives back the uniform prior; more orders
     * mean longer tenure. */
    static double post[51 * 32];
    shape_gen_pareto_counts(q, 50, 10.0, 1.16, 0.995, post, 32);
    mean = 0;
    for (int k = 0; k <= 50; k++) mean += k * q[k];
    assert_near(mean, 10.0, 1e-6);
    assert_true(q[50] > 0.01);
    for (int j = 0; j < 32; j++) {
        double mix = 0;
        for (int k = 0; k <= 50; k++) {
            assert_true(post[k * 32 + j] >= (j ? post[k * 32 + j - 1] : 0.0));
            mix += q[k] * post[k * 32 + j];
        }
        assert_near(mix, (j + 1) / 32.0, 1e-9);
    }
    for (int k = 0; k <= 50; k++) assert_true(post[k * 32 + 31] == 1.0);
    /* median tenure: below 1/2 with no orders, above it at the cap */
    assert_true(post[0 * 32 + 15] > 0.5 && post[50 * 32 + 15] < 0.5);
}

/* ---- time --------------------------------------------------------------- */

static void test_civil(void **state)
{
    (void)state;
    assert_int_equal(shape_days_from_civil(1970, 1, 1), 0);
    assert_int_equal(shape_days_from_civil(2022, 1, 1), 18993);
    assert_int_equal(shape_days_from_civil(2026, 1, 1) - shape_days_from_civil(2022, 1, 1), 1461);
    assert_int_equal(shape_gen_weekday(shape_days_from_civil(2022, 1, 1)), 5); /* Saturday */
    assert_int_equal(shape_gen_weekday(shape_days_from_civil(1969, 12, 29)), 0); /* Monday */
    for (int64_t d = -800000; d < 800000; d += 97) {
        int64_t y;
        unsigned m, dd;
        shape_civil_from_days(d, &y, &m, &dd);
        assert_true(shape_days_from_civil(y, m, dd) == d);
    }
    shape_gen_stream s = shape_gen_stream_make(1, "customer", "signup_date", "instant");
    int64_t a = 18993 * SHAPE_GEN_NS_PER_DAY, b = a + 1461 * SHAPE_GEN_NS_PER_DAY;
    for (uint64_t r = 0; r < 10000; r++) {
        int64_t t = shape_gen_instant_us(s, r, 0, a, b);
        assert_true(t >= a && t < b);
        assert_true(t % 1000 == 0); /* whole microseconds */
    }
    /* Derived days: whole days in [1, 90]; median round(e^2) = 7 days, as
     * P(X < 7.5) = 0.5074 (sd 0.005 at 10,000). */
    uint64_t within7 = 0;
    for (uint64_t r = 0; r < 10000; r++) {
        int64_t t = shape_gen_add_lognormal_days(s, r, 1, a + 123, 2.0, 0.8, 1, 90);
        int64_t days = (t - a - 123) / SHAPE_GEN_NS_PER_DAY;
        assert_true((t - a - 123) % SHAPE_GEN_NS_PER_DAY == 0 && days >= 1 && days <= 90);
        within7 += days <= 7;
    }
    assert_near(within7 / 10000.0, 0.5074, 0.02);
}

static void test_seasonal_model(void **state)
{
    (void)state;
    static const double month_w[12] = {.071, .068, .079, .079, .083, .083,
                                       .085, .088, .079, .083, .096, .106};
    static const double weekday_w[7] = {.155, .152, .148, .153, .147, .115, .130};
    static const double peaks[2] = {12.0, 20.0};
    shape_gen_seasonal m;
    shape_err err;
    int64_t first = shape_days_from_civil(2022, 1, 1);
    assert_int_equal(shape_gen_seasonal_init(&m, first, 1461, month_w, weekday_w, peaks, 2, 2.0, &err),
                     SHAPE_OK);
    shape_gen_stream s = shape_gen_stream_make(42, "order", "order_date", "seasonal");
    uint64_t n = 300000, months[12] = {0}, wd[7] = {0}, hours[24] = {0};
    for (uint64_t r = 0; r < n; r++) {
        int64_t t = shape_gen_seasonal_draw(&m, s, r, 0, INT64_MIN);
        assert_true(t % SHAPE_GEN_NS_PER_SEC == 0);
        int64_t day = t / SHAPE_GEN_NS_PER_DAY;
        assert_true(day >= first && day < first + 1461);
        int64_t y;
        unsigned mo, d;
        shape_civil_from_days(day, &y, &mo, &d);
        months[mo - 1]++;
        wd[shape_gen_weekday(day)]++;
        hours[(t / SHAPE_GEN_NS_PER_SEC % 86400) / 3600]++;
    }
    /* Month and weekday weights (sum 1.000): sd <= 0.0007 at n = 300,000. */
    for (int i = 0; i < 12; i++) assert_near((double)months[i] / n, month_w[i], 0.003);
    for (int i = 0; i < 7; i++) assert_near((double)wd[i] / n, weekday_w[i], 0.003);
    /* Hour of day: the two peaks, and a quiet small hours. */
    int peak_day = 0, peak_eve = 16;
    for (int h = 0; h < 16; h++)
        if (hours[h] > hours[peak_day]) peak_day = h;
    for (int h = 16; h < 24; h++)
        if (hours[h] > hours[peak_eve]) peak_eve = h;
    assert_int_equal(peak_day, 12);
    assert_int_equal(peak_eve, 20);
    assert_true(hours[4] * 10 < hours[12]);
    /* A lower bound is honoured and the tail keeps its shape. */
    int64_t bound = (first + 1000) * SHAPE_GEN_NS_PER_DAY + 13 * 3600 * SHAPE_GEN_NS_PER_SEC + 123456;
    for (uint64_t r = 0; r < 20000; r++) assert_true(shape_gen_seasonal_draw(&m, s, r, 0, bound) >= bound);
    int64_t last = (first + 1460) * SHAPE_GEN_NS_PER_DAY + 86399 * SHAPE_GEN_NS_PER_SEC + 5;
    assert_true(shape_gen_seasonal_draw(&m, s, 1, 0, last) >= last);
    shape_gen_seasonal_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_draws_are_pure_functions),
        cmocka_unit_test(test_unit_and_below),
        cmocka_unit_test(test_portable_math),
        cmocka_unit_test(test_alias),
        cmocka_unit_test(test_normal_lognormal),
        cmocka_unit_test(test_geometric_poisson_pareto),
        cmocka_unit_test(test_zipf),
        cmocka_unit_test(test_permutation),
        cmocka_unit_test(test_allocation),
        cmocka_unit_test(test_pareto_counts),
        cmocka_unit_test(test_civil),
        cmocka_unit_test(test_seasonal_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* tests/support/stat_checks.h — the goodness-of-fit checks the generator
 * tests share (test_schema, test_schema_strat): a chi-square of counts
 * against weights and the error function behind normal CDFs.
 *
 * Why: each distribution test compares seeded draws with what the strategy
 * states; one copy of the bound keeps every test judging at the same
 * p = 0.001. How: Wilson-Hilferty's approximation of the chi-square
 * quantile; Abramowitz-Stegun 7.1.26 for erf (|error| < 1.5e-7). Header
 * only (static functions), included after <cmocka.h>. */
#ifndef SHAPE_TESTS_STAT_CHECKS_H
#define SHAPE_TESTS_STAT_CHECKS_H

#include <stdio.h>

#include "shape/generate.h"

static inline double erf_approx(double x)
{
    double sg = x < 0 ? -1 : 1;
    x = x < 0 ? -x : x;
    double t = 1 / (1 + 0.3275911 * x);
    double y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t *
                       shape_gen_exp(-x * x);
    return sg * y;
}

/* chi-square of observed counts obs[0..k) against weights w (df = k - 1)
 * over n draws, failing the test above the p = 0.001 bound */
static inline void chi_square(const double *obs, const double *w, int k, double n)
{
    double sw = 0, chi = 0;
    for (int i = 0; i < k; i++) sw += w[i];
    for (int i = 0; i < k; i++) {
        double e = n * w[i] / sw;
        chi += (obs[i] - e) * (obs[i] - e) / e;
    }
    double df = k - 1, z = 3.09, t = 1 - 2 / (9 * df) + z * shape_gen_sqrt(2 / (9 * df));
    double crit = df * t * t * t;
    if (chi > crit) fprintf(stderr, "chi-square %.1f > %.1f\n", chi, crit);
    assert_true(chi < crit);
}

#endif

/* test_sketch_moments.c — streaming moments (shape/profile.h): Welford within
 * a batch and Chan's formula across batches against a two-pass computation in
 * long double, merges in any grouping within 1e-12, exact copy into an empty
 * side, and overflow leaving a non-finite moment (written as null). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/profile.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

static double rel(double got, long double want)
{
    long double d = ((long double)got - want) / (want != 0 ? want : 1);
    return (double)(d < 0 ? -d : d);
}

static void check(const double *x, size_t n, int batches, double tol)
{
    long double sum = 0;
    for (size_t i = 0; i < n; i++) sum += x[i];
    long double mean = sum / n, m2 = 0;
    for (size_t i = 0; i < n; i++) m2 += ((long double)x[i] - mean) * ((long double)x[i] - mean);
    shape_moments total = {0, 0, 0}, left = {0, 0, 0}, right = {0, 0, 0};
    size_t per = n / (size_t)batches + 1;
    for (size_t start = 0; start < n; start += per) {
        shape_moments b = {0, 0, 0};
        shape_moments_add_values(&b, x + start, (start + per < n ? per : n - start));
        shape_moments_merge(&total, &b);
        shape_moments_merge(start < n / 2 ? &left : &right, &b);
    }
    assert_int_equal(total.n, (int64_t)n);
    assert_true(rel(total.mean, mean) < 1e-12);
    if (!(rel(total.m2, m2) < tol)) fail_msg("m2 %.17g vs %.17Lg rel %g (batches %d)", total.m2, m2, rel(total.m2, m2), batches);
    shape_moments_merge(&right, &left); /* another grouping and order */
    assert_true(rel(right.mean, mean) < 1e-12);
    assert_true(rel(right.m2, m2) < tol);
    assert_true(rel(right.m2, total.m2) < tol);
}

static void test_against_two_pass(void **state)
{
    (void)state;
    enum { N = 300000 };
    double *x = malloc(N * sizeof *x);
    assert_non_null(x);
    uint64_t seed = 17;
    for (int dist = 0; dist < 4; dist++) {
        for (int i = 0; i < N; i++) {
            double u = uniform01(&seed);
            x[i] = dist == 0 ? u : dist == 1 ? 1e9 + u /* large mean, small spread */
                 : dist == 2 ? (u - 0.5) * 1e12 : (double)(int)(u * u * u * 100);
        }
        /* Well-conditioned data: 1e-12. 1e9 + U(0,1) (mean / sd ≈ 3.5e9): one
         * batch stays at 1e-12, but across batches Chan's formula works with
         * means that are only representable to 1 ulp (1.2e-7 here), which
         * puts ~1e-9 relative into m2 — as in the reference. */
        double multi = dist == 1 ? 1e-8 : 1e-12;
        check(x, N, 1, 1e-12);
        check(x, N, 7, multi);
        check(x, N, 64, multi);
    }
    free(x);
}

static void test_edges(void **state)
{
    (void)state;
    shape_moments a = {0, 0, 0}, e = {0, 0, 0};
    shape_moments_add_values(&a, (const double[]){3.0, 5.0}, 2);
    shape_moments_add_values(&a, (const double[]){10.0}, 1);
    assert_true(a.mean == 6.0);
    assert_true(a.m2 == 26.0);
    shape_moments_merge(&e, &a); /* into empty: exact copy */
    assert_memory_equal(&e, &a, sizeof a);
    shape_moments_merge(&a, &(shape_moments){0, 0, 0}); /* empty src: no change */
    assert_memory_equal(&e, &a, sizeof a);
    /* overflow: m2 of ±1e300 values is not finite */
    shape_moments o = {0, 0, 0};
    shape_moments_add_values(&o, (const double[]){1e300, -1e300, 1e300, 1e300}, 4);
    assert_true(!(o.m2 < 1e308));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_two_pass),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

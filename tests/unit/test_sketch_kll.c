/* test_sketch_kll.c — the KLL quantile sketch (shape/profile.h): level
 * capacities, exact answers while nothing is compacted, total weight kept
 * exactly, reproducible compaction, rank error <= 1 % on 1M values (uniform,
 * skewed with ties, sorted, reverse sorted) whole and merged from 4 parts,
 * the fast paths (sorting by runs, batched adds) against the plain ones bit
 * for bit, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "../../src/profile/profile_internal.h" /* level access for the weight invariant */
#include "shape/profile.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

static shape_kll *new_kll(int k)
{
    shape_kll *s = NULL;
    shape_err err;
    assert_int_equal(shape_kll_new(k, &s, &err), SHAPE_OK);
    return s;
}

static void add(shape_kll *s, double x)
{
    shape_err err;
    assert_int_equal(shape_kll_add(s, x, &err), SHAPE_OK);
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

static uint64_t weight(const shape_kll *s)
{
    uint64_t w = 0;
    for (size_t l = 0; l < shape_kll_num_levels(s); l++) {
        size_t len;
        (void)shape_kll_level_items_(s, l, &len);
        w += (uint64_t)len << l;
    }
    return w;
}

static void test_capacities(void **state)
{
    (void)state;
    assert_int_equal(shape_kll_level_capacity(200, 0, 1), 200);
    assert_int_equal(shape_kll_level_capacity(200, 0, 2), 133);
    assert_int_equal(shape_kll_level_capacity(200, 1, 2), 200);
    assert_int_equal(shape_kll_level_capacity(200, 0, 3), 88);
    for (size_t levels = 1; levels < 60; levels++)
        for (size_t l = 0; l < levels; l++) {
            size_t d = levels - 1 - l;
            int64_t want = 2;
            if (d <= 40) {
                /* k·2^d / 3^d in exact integers */
                unsigned __int128 num = (unsigned __int128)200 << d, den = 1;
                for (size_t i = 0; i < d; i++) den *= 3;
                want = (int64_t)(num / den);
                if (want < 2) want = 2;
            }
            assert_int_equal(shape_kll_level_capacity(200, l, levels), want);
        }
    assert_int_equal(shape_kll_level_capacity(200, 5, 3), 0);
}

static void test_exact_while_small(void **state)
{
    (void)state;
    shape_kll *s = new_kll(200);
    double vals[150];
    uint64_t seed = 3;
    for (int i = 0; i < 150; i++) {
        vals[i] = (double)(int)(uniform01(&seed) * 1000) - 500;
        add(s, vals[i]);
    }
    assert_int_equal(shape_kll_retained(s), 150);
    qsort(vals, 150, sizeof *vals, cmp_double);
    double qs[] = {0.0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0, 0.333};
    double out[10];
    shape_err err;
    assert_int_equal(shape_kll_quantiles(s, qs, 10, out, &err), SHAPE_OK);
    for (int i = 0; i < 10; i++) {
        size_t j = (size_t)(qs[i] * 149.0); /* first index whose cumulative weight exceeds q(n-1) */
        assert_true(out[i] == vals[j]);
    }
    shape_kll_free(s);

    /* empty: NaN; bad q and bad k refused */
    s = new_kll(200);
    assert_int_equal(shape_kll_quantiles(s, qs, 2, out, &err), SHAPE_OK);
    assert_true(out[0] != out[0]);
    double bad = 1.5;
    assert_int_equal(shape_kll_quantiles(s, &bad, 1, out, &err), SHAPE_EINVAL);
    shape_kll_free(s);
    assert_int_equal(shape_kll_new(1, &s, &err), SHAPE_EINVAL);
    assert_null(s);
}

/* Largest normalized rank error over q = 0, 0.01, ..., 1 against the sorted truth. */
static double max_rank_error(const shape_kll *s, const double *sorted, size_t n)
{
    double qs[101], out[101];
    for (int i = 0; i <= 100; i++) qs[i] = i / 100.0;
    shape_err err;
    assert_int_equal(shape_kll_quantiles(s, qs, 101, out, &err), SHAPE_OK);
    double worst = 0;
    for (int i = 0; i <= 100; i++) {
        /* rank interval of out[i] in the truth: [lo, hi] = [#<, #<=] */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (sorted[mid] < out[i]) lo = mid + 1;
            else hi = mid;
        }
        size_t first = lo;
        hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (sorted[mid] <= out[i]) lo = mid + 1;
            else hi = mid;
        }
        size_t last = lo;
        assert_true(last > first); /* a retained sample is a real value */
        double target = qs[i] * (double)n, e = 0;
        if (target < (double)first) e = ((double)first - target) / (double)n;
        if (target > (double)last) e = (target - (double)last) / (double)n;
        if (e > worst) worst = e;
    }
    return worst;
}

#define N 1000000

static void run_distribution(int dist, const char *name)
{
    double *vals = malloc(N * sizeof *vals);
    assert_non_null(vals);
    uint64_t seed = 1234 + (uint64_t)dist;
    for (size_t i = 0; i < N; i++) {
        double u = uniform01(&seed);
        switch (dist) {
        case 0: vals[i] = u * 1000.0; break;                          /* uniform */
        case 1: vals[i] = (double)(int64_t)(u * u * u * u * 5000.0); break; /* skewed, many ties */
        case 2: vals[i] = (double)i; break;                           /* sorted */
        default: vals[i] = (double)(N - i); break;                    /* reverse sorted */
        }
    }
    shape_kll *whole = new_kll(SHAPE_KLL_K), *again = new_kll(SHAPE_KLL_K);
    shape_kll *parts[4];
    for (int p = 0; p < 4; p++) parts[p] = new_kll(SHAPE_KLL_K);
    for (size_t i = 0; i < N; i++) {
        add(whole, vals[i]);
        add(parts[i * 4 / N], vals[i]);
        if (dist == 0) add(again, vals[i]);
    }
    assert_int_equal(shape_kll_n(whole), N);
    assert_int_equal(weight(whole), N);
    assert_true(shape_kll_retained(whole) < 1000);
    if (dist == 0) { /* reproducible: same input, same levels */
        assert_int_equal(shape_kll_num_levels(again), shape_kll_num_levels(whole));
        for (size_t l = 0; l < shape_kll_num_levels(whole); l++) {
            size_t a, b;
            const double *x = shape_kll_level_items_(whole, l, &a), *y = shape_kll_level_items_(again, l, &b);
            assert_int_equal(a, b);
            if (a) assert_memory_equal(x, y, a * sizeof(double));
        }
    }
    shape_err err;
    for (int p = 1; p < 4; p++) assert_int_equal(shape_kll_merge(parts[0], parts[p], &err), SHAPE_OK);
    assert_int_equal(shape_kll_n(parts[0]), N);
    assert_int_equal(weight(parts[0]), N);
    qsort(vals, N, sizeof *vals, cmp_double);
    double e1 = max_rank_error(whole, vals, N), e2 = max_rank_error(parts[0], vals, N);
    printf("  KLL k=200 %-16s max rank error %.4f%% (whole, %zu retained), %.4f%% (4 parts merged)\n", name,
           100 * e1, shape_kll_retained(whole), 100 * e2);
    assert_true(e1 <= 0.01);
    assert_true(e2 <= 0.01);
    for (int p = 0; p < 4; p++) shape_kll_free(parts[p]);
    shape_kll_free(whole);
    shape_kll_free(again);
    free(vals);
}

static void test_rank_error_uniform(void **state)
{
    (void)state;
    run_distribution(0, "uniform");
}

static void test_rank_error_skewed(void **state)
{
    (void)state;
    run_distribution(1, "skewed+ties");
}

static void test_rank_error_sorted(void **state)
{
    (void)state;
    run_distribution(2, "sorted");
    run_distribution(3, "reverse sorted");
}

/* Compactions sort short levels with a network and longer ones by merging
 * their sorted runs; the array must be the one the introsort alone gave,
 * bit for bit (which of 0.0 / -0.0 comes first included): levels of 1..20
 * runs of random lengths, values drawn from a small set (many ties) or
 * wide, with and without zeros of both signs; short levels with ties and
 * infinities; random, sorted, reversed and tied arrays of every length
 * 0..400. */
static void test_sort_by_runs_matches(void **state)
{
    (void)state;
    static const double few[] = {-3.5, -1.0, -0.0, 0.0, 0.0, 2.0, 7.25, 1e300};
    uint64_t seed = 42;
    double a[400], b[400];
    for (int round = 0; round < 4000; round++) {
        size_t runs = 1 + splitmix(&seed) % 20, n = 0;
        int kind = (int)(splitmix(&seed) % 4); /* 0: wide, 1: few values, 2: few without -0, 3: wide + zeros */
        for (size_t r = 0; r < runs && n < 380; r++) {
            size_t len = splitmix(&seed) % 24;
            if (n + len > 400) len = 400 - n;
            for (size_t i = 0; i < len; i++) {
                double x = uniform01(&seed) * 200.0 - 100.0;
                if (kind == 1) x = few[splitmix(&seed) % 8];
                if (kind == 2) x = few[3 + splitmix(&seed) % 5];
                if (kind == 3 && splitmix(&seed) % 4 == 0) x = splitmix(&seed) % 2 ? 0.0 : -0.0;
                a[n + i] = x;
            }
            qsort(a + n, len, sizeof *a, cmp_double); /* one sorted run */
            n += len;
        }
        memcpy(b, a, n * sizeof *a);
        shape_kll_sort_(a, n, 1);
        shape_kll_sort_(b, n, 0);
        assert_memory_equal(a, b, n * sizeof *a);
    }
    /* short levels (the sorting network): ties, ±inf (the network pads
     * with +inf), with and without zeros of either sign */
    static const double tied[] = {-3.5, -1.0, 2.0, 7.25, 1e300, INFINITY, -INFINITY, 0.0, -0.0};
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)round % 17;
        int kind = (round / 17) % 4; /* 0: tied, no zero; 1: tied with zeros; 2: wide; 3: tied with 0.0, no -0.0 */
        for (size_t i = 0; i < n; i++)
            a[i] = kind == 2 ? uniform01(&seed) - 0.5 : tied[splitmix(&seed) % (kind == 0 ? 7 : kind == 1 ? 9 : 8)];
        memcpy(b, a, n * sizeof *a);
        shape_kll_sort_(a, n, 1);
        shape_kll_sort_(b, n, 0);
        assert_memory_equal(a, b, n ? n * sizeof *a : 1);
    }
    /* every length up to 400: random (many runs: blocks of 16 sorted by
     * the network, then merged, up to 256 items), sorted, reversed, few
     * values with 0.0, with 0.0 and -0.0 */
    for (size_t n = 0; n <= 400; n++)
        for (int kind = 0; kind < 5; kind++) {
            for (size_t i = 0; i < n; i++)
                a[i] = kind == 0   ? uniform01(&seed)
                       : kind == 1 ? (double)i
                       : kind == 2 ? (double)(n - i)
                       : kind == 3 ? tied[splitmix(&seed) % 8]
                                   : tied[splitmix(&seed) % 9];
            memcpy(b, a, n * sizeof *a);
            shape_kll_sort_(a, n, 1);
            shape_kll_sort_(b, n, 0);
            assert_memory_equal(a, b, n ? n * sizeof *a : 1);
        }
}

/* shape_kll_add_values appends the items that need no compaction at once;
 * the sketch (every level's items, bit for bit, and the compaction count)
 * must be the one adding them one by one gives, for batches of every size
 * from 1 up, over sorted, random, tied and signed-zero values. */
static void assert_same_sketch(const shape_kll *a, const shape_kll *b)
{
    assert_int_equal(shape_kll_n(a), shape_kll_n(b));
    assert_int_equal(shape_kll_num_levels(a), shape_kll_num_levels(b));
    assert_int_equal(shape_kll_compactions_(a), shape_kll_compactions_(b));
    for (size_t l = 0; l < shape_kll_num_levels(a); l++) {
        size_t la, lb;
        const double *va = shape_kll_level_items_(a, l, &la), *vb = shape_kll_level_items_(b, l, &lb);
        assert_int_equal(la, lb);
        if (la) assert_memory_equal(va, vb, la * sizeof *va);
    }
}

static void test_add_values_matches_add(void **state)
{
    (void)state;
    enum { M = 30000 };
    double *x = malloc(M * sizeof *x);
    assert_non_null(x);
    uint64_t seed = 9;
    for (int kind = 0; kind < 4; kind++) {
        for (int i = 0; i < M; i++) {
            switch (kind) {
            case 0: x[i] = (double)i; break;
            case 1: x[i] = uniform01(&seed) * 1e6 - 5e5; break;
            case 2: x[i] = (double)(splitmix(&seed) % 7); break;
            default: x[i] = splitmix(&seed) % 3 ? 0.0 : (splitmix(&seed) % 2 ? -0.0 : (double)(i % 11) - 5); break;
            }
        }
        shape_kll *one = new_kll(200), *batched = new_kll(kind == 3 ? 8 : 200);
        if (kind == 3) {
            shape_kll_free(one);
            one = new_kll(8);
        }
        shape_err err;
        size_t at = 0, batch = 1;
        while (at < M) {
            size_t n = M - at < batch ? M - at : batch;
            assert_int_equal(shape_kll_add_values(batched, x + at, n, &err), SHAPE_OK);
            for (size_t i = 0; i < n; i++) add(one, x[at + i]);
            at += n;
            batch = batch * 3 + 1; /* 1, 4, 13, 40, ... 9841 */
            if (batch > 10000) batch = 1;
            assert_same_sketch(one, batched);
        }
        shape_kll_free(one);
        shape_kll_free(batched);
    }
    free(x);
}

static void test_merge_refusals(void **state)
{
    (void)state;
    shape_kll *a = new_kll(200), *b = new_kll(100);
    shape_err err;
    assert_int_equal(shape_kll_merge(a, b, &err), SHAPE_EINVAL);
    assert_int_equal(shape_kll_merge(a, a, &err), SHAPE_EINVAL);
    /* merging an empty sketch changes nothing; merging into an empty one copies */
    shape_kll *c = new_kll(200);
    for (int i = 0; i < 1000; i++) add(a, i);
    assert_int_equal(shape_kll_merge(a, c, &err), SHAPE_OK);
    assert_int_equal(shape_kll_n(a), 1000);
    assert_int_equal(shape_kll_merge(c, a, &err), SHAPE_OK);
    assert_int_equal(shape_kll_n(c), 1000);
    assert_int_equal(weight(c), 1000);
    shape_kll_free(a);
    shape_kll_free(b);
    shape_kll_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacities),
        cmocka_unit_test(test_exact_while_small),
        cmocka_unit_test(test_rank_error_uniform),
        cmocka_unit_test(test_rank_error_skewed),
        cmocka_unit_test(test_rank_error_sorted),
        cmocka_unit_test(test_merge_refusals),
        cmocka_unit_test(test_sort_by_runs_matches),
        cmocka_unit_test(test_add_values_matches_add),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

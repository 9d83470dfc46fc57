/* test_sketch_time.c — UTC calendar parts and temporal histograms
 * (shape/profile.h), checked against the C library's gmtime_r over a wide
 * range of instants (negative ones with sub-second parts included, so floor
 * division is exercised), ns → µs flooring, and histogram merges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shape/profile.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* gmtime_r on the floor of us / 1e6 seconds */
static void oracle(int64_t us, int64_t *year, int *month, int *day, int *hour, int *dow)
{
    int64_t secs = us / 1000000;
    if (us % 1000000 < 0) secs--;
    time_t t = (time_t)secs;
    struct tm tm;
    assert_non_null(gmtime_r(&t, &tm));
    *year = (int64_t)tm.tm_year + 1900;
    *month = tm.tm_mon + 1;
    *day = tm.tm_mday;
    *hour = tm.tm_hour;
    *dow = (tm.tm_wday + 6) % 7; /* Monday = 0 */
}

static void test_civil_against_gmtime(void **state)
{
    (void)state;
    const int64_t fixed[] = {0, -1, 1, 86399999999LL, 86400000000LL, -86400000000LL, -86400000001LL,
                             951782400000000LL /* 2000-02-29 */, 1732881821000000LL, 4102444800000000LL,
                             -62135596800000000LL /* 0001-01-01 */, 253402300799999999LL /* 9999-12-31 */,
                             -2208988800000001LL};
    uint64_t seed = 1;
    for (int i = 0; i < 200000; i++) {
        int64_t us;
        if (i < (int)(sizeof fixed / sizeof fixed[0]))
            us = fixed[i];
        else /* years ~ -9000 .. 11000 */
            us = (int64_t)(splitmix(&seed) % 630000000000000000ULL) - 346000000000000000LL;
        shape_civil c;
        shape_civil_from_us(us, &c);
        int64_t y;
        int mo, d, h, w;
        oracle(us, &y, &mo, &d, &h, &w);
        if (c.year != y || c.month != mo || c.day != d || c.hour != h || c.dow != w)
            fail_msg("us=%lld: got %lld-%d-%d h%d dow%d, want %lld-%d-%d h%d dow%d", (long long)us,
                     (long long)c.year, c.month, c.day, c.hour, c.dow, (long long)y, mo, d, h, w);
    }
    shape_civil c;
    shape_civil_from_us(0, &c);
    assert_int_equal(c.dow, 3); /* 1970-01-01 was a Thursday */
    shape_civil_from_us(INT64_MIN, &c); /* extremes must not overflow */
    shape_civil_from_us(INT64_MAX, &c);
    assert_true(c.year > 294000);
}

static void test_ns_floor(void **state)
{
    (void)state;
    assert_int_equal(shape_us_from_ns(0), 0);
    assert_int_equal(shape_us_from_ns(999), 0);
    assert_int_equal(shape_us_from_ns(1000), 1);
    assert_int_equal(shape_us_from_ns(-1), -1);
    assert_int_equal(shape_us_from_ns(-1000), -1);
    assert_int_equal(shape_us_from_ns(-1001), -2);
    assert_int_equal(shape_us_from_ns(INT64_MIN), INT64_MIN / 1000 - 1);
}

static void test_histograms(void **state)
{
    (void)state;
    shape_timehist t, a, b;
    shape_timehist_init(&t);
    shape_timehist_init(&a);
    shape_timehist_init(&b);
    int64_t hour[24] = {0}, dow[7] = {0}, month[12] = {0};
    int64_t years[40] = {0}; /* 1995 .. 2034 */
    shape_err err;
    uint64_t seed = 9;
    int64_t us = 788918400000000LL; /* 1995-01-01 */
    for (int i = 0; i < 100000; i++) {
        /* mostly small steps (same day), sometimes jumps back and forth */
        uint64_t r = splitmix(&seed);
        if (r % 100 == 0)
            us = 788918400000000LL + (int64_t)(r % 1200000000000000ULL);
        else
            us += (int64_t)(r % 60000000);
        assert_int_equal(shape_timehist_add(&t, us, &err), SHAPE_OK);
        assert_int_equal(shape_timehist_add(i % 3 ? &a : &b, us, &err), SHAPE_OK);
        int64_t y;
        int mo, d, h, w;
        oracle(us, &y, &mo, &d, &h, &w);
        hour[h]++;
        dow[w]++;
        month[mo - 1]++;
        assert_true(y >= 1995 && y < 2035);
        years[y - 1995]++;
    }
    assert_memory_equal(t.hour, hour, sizeof hour);
    assert_memory_equal(t.dow, dow, sizeof dow);
    assert_memory_equal(t.month, month, sizeof month);
    size_t k = 0;
    for (int y = 0; y < 40; y++) {
        if (!years[y]) continue;
        assert_true(k < t.n_years);
        assert_int_equal(t.years[k].year, 1995 + y);
        assert_int_equal(t.years[k].count, years[y]);
        k++;
    }
    assert_int_equal(k, t.n_years);
    assert_int_equal(shape_timehist_merge(&a, &b, &err), SHAPE_OK);
    assert_memory_equal(a.hour, t.hour, sizeof hour);
    assert_memory_equal(a.dow, t.dow, sizeof dow);
    assert_memory_equal(a.month, t.month, sizeof month);
    assert_int_equal(a.n_years, t.n_years);
    assert_memory_equal(a.years, t.years, t.n_years * sizeof *t.years);
    shape_timehist_free(&t);
    shape_timehist_free(&a);
    shape_timehist_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_civil_against_gmtime),
        cmocka_unit_test(test_ns_floor),
        cmocka_unit_test(test_histograms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

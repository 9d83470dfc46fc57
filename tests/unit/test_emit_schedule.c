/* test_emit_schedule.c — the rate schedule (shape/emit_schedule.h) as a pure
 * function: the integrated count and the deadlines of bursts, ramps, daily
 * curves and their products, the inverse (due) against the count, the
 * cursor against a fresh walk, Poisson gaps (mean, dispersion, keyed by
 * position), and every refusal of the options and the rate-curve file.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "shape/emit_schedule.h"

static shape_emit_schedule base(double rate)
{
    shape_emit_schedule s;
    memset(&s, 0, sizeof s);
    s.rate = rate;
    return s;
}

static void near(double got, double want, double tol)
{
    if (fabs(got - want) > tol) fail_msg("got %.9g, want %.9g (± %g)", got, want, tol);
}

static void test_constant(void **state)
{
    (void)state;
    shape_emit_schedule s = base(5000);
    assert_int_equal(shape_emit_schedule_check(&s, NULL), SHAPE_OK);
    assert_true(shape_emit_schedule_is_constant(&s));
    assert_true(shape_emit_schedule_due(&s, NULL, 7000) == 7000.0 / 5000); /* exactly today's n / rate */
    near(shape_emit_schedule_count(&s, 3), 15000, 1e-9);
}

static void test_burst(void **state)
{
    (void)state;
    shape_err err;
    shape_emit_schedule s = base(1000);
    assert_int_equal(shape_emit_burst_parse("10:5:3", &s.bursts[s.nbursts++], &err), SHAPE_OK);
    assert_int_equal(shape_emit_schedule_check(&s, &err), SHAPE_OK);
    near(shape_emit_schedule_rate_at(&s, 9.9), 1000, 1e-9);
    near(shape_emit_schedule_rate_at(&s, 12), 3000, 1e-9);
    near(shape_emit_schedule_rate_at(&s, 15), 1000, 1e-9);
    /* per-second counts: 1000 outside, 3000 inside the burst */
    for (int sec = 0; sec < 20; sec++) {
        double c = shape_emit_schedule_count(&s, sec + 1) - shape_emit_schedule_count(&s, sec);
        near(c, sec >= 10 && sec < 15 ? 3000 : 1000, 1e-6);
    }
    near(shape_emit_schedule_due(&s, NULL, 10000), 10, 1e-9);
    near(shape_emit_schedule_due(&s, NULL, 10000 + 15000), 15, 1e-9);
    near(shape_emit_schedule_due(&s, NULL, 26500), 16.5, 1e-9);
}

static void test_ramp(void **state)
{
    (void)state;
    shape_err err;
    shape_emit_schedule s = base(100);
    assert_int_equal(shape_emit_ramp_parse("0:10:1:3", &s.ramps[s.nramps++], &err), SHAPE_OK);
    assert_int_equal(shape_emit_schedule_check(&s, &err), SHAPE_OK);
    /* rate 100·(1 + 0.2 t): the count is 100 t + 10 t² inside, 300/s after */
    for (double t = 0; t <= 10; t += 0.5) near(shape_emit_schedule_count(&s, t), 100 * t + 10 * t * t, 1e-6);
    near(shape_emit_schedule_count(&s, 12), 2000 + 600, 1e-6);
    for (double n = 1; n < 2600; n += 37) near(shape_emit_schedule_count(&s, shape_emit_schedule_due(&s, NULL, n)), n, 1e-6);
    /* the per-second count grows linearly: 110, 130, ..., 290 */
    for (int sec = 0; sec < 10; sec++)
        near(shape_emit_schedule_count(&s, sec + 1) - shape_emit_schedule_count(&s, sec), 110 + 20 * sec, 1e-6);
}

static void test_burst_times_ramp_and_cursor(void **state)
{
    (void)state;
    shape_err err;
    shape_emit_schedule s = base(50);
    assert_int_equal(shape_emit_burst_parse("3:2:4", &s.bursts[s.nbursts++], &err), SHAPE_OK);
    assert_int_equal(shape_emit_ramp_parse("2:4:2:0.5", &s.ramps[s.nramps++], &err), SHAPE_OK);
    assert_int_equal(shape_emit_ramp_parse("8:1:0:1", &s.ramps[s.nramps++], &err), SHAPE_OK);
    assert_int_equal(shape_emit_schedule_check(&s, &err), SHAPE_OK);
    /* inside both: 50 × 4 × (2 − 0.375 (t − 2)) */
    near(shape_emit_schedule_rate_at(&s, 4), 50 * 4 * (2 - 0.375 * 2), 1e-9);
    /* between the ramps the last one's TO holds; before the second one starts, 0.5 */
    near(shape_emit_schedule_rate_at(&s, 7), 25, 1e-9);
    shape_schedule_cursor c = {0, 0};
    double last = 0;
    for (double n = 0; n < 2000; n += 3.5) {
        double d = shape_emit_schedule_due(&s, &c, n);
        near(d, shape_emit_schedule_due(&s, NULL, n), 1e-9);
        assert_true(d >= last);
        last = d;
    }
}

static void test_daily_curve(void **state)
{
    (void)state;
    shape_err err;
    const char *doc = "{\"format\":\"shape-rate-curve\",\"version\":1,\"name\":\"steps\","
                      "\"points\":[[\"00:00:10\",3],[\"00:00\",1],[\"23:59:50\",1]]}";
    static shape_rate_curve c;
    assert_int_equal(shape_rate_curve_parse(doc, strlen(doc), "t.json", &c, &err), SHAPE_OK);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.name, "steps");
    near(shape_rate_curve_at(&c, 5), 2, 1e-12);
    near(shape_rate_curve_at(&c, 86395), 1, 1e-12);
    near(shape_rate_curve_at(&c, 86400 + 10), 3, 1e-12); /* wraps */
    near(shape_rate_curve_at(&c, 3600), 3 - 2.0 * (3600 - 10) / (86390 - 10), 1e-9);
    shape_emit_schedule s = base(100);
    s.curve = &c;
    s.curve_start = 86390; /* the run starts 10 s before midnight */
    assert_int_equal(shape_emit_schedule_check(&s, &err), SHAPE_OK);
    near(shape_emit_schedule_rate_at(&s, 0), 100, 1e-9);
    near(shape_emit_schedule_rate_at(&s, 15), 200, 1e-9);
    /* 10 s at 100/s, then 10 s rising 100 → 300: 1000 + 2000 */
    near(shape_emit_schedule_count(&s, 20), 3000, 1e-6);
    near(shape_emit_schedule_due(&s, NULL, 3000), 20, 1e-6);
    /* a whole day integrates to the curve's mean × rate × 86400, every day */
    double day = shape_emit_schedule_count(&s, 86400);
    near(shape_emit_schedule_count(&s, 3 * 86400), 3 * day, 1e-3);
    /* a long run: days are skipped whole, and land where a walk would */
    double far = shape_emit_schedule_due(&s, NULL, 400 * day + 1500);
    near(shape_emit_schedule_count(&s, far), 400 * day + 1500, 1e-3);
    static shape_rate_curve tiny;
    const char *slow = "{\"format\":\"shape-rate-curve\",\"version\":1,\"points\":[[\"00:00\",1e-6],[\"12:00\",2e-6]]}";
    assert_int_equal(shape_rate_curve_parse(slow, strlen(slow), "slow.json", &tiny, &err), SHAPE_OK);
    shape_emit_schedule t = base(1);
    t.curve = &tiny;
    double d = shape_emit_schedule_due(&t, NULL, 1e4); /* ~6.7e9 s: not walked day by day */
    assert_true(isfinite(d) && d > 6e9);
    near(shape_emit_schedule_count(&t, d), 1e4, 1e-6);
    static shape_rate_curve bh;
    assert_int_equal(shape_rate_curve_builtin("business-hours", &bh, &err), SHAPE_OK);
    assert_true(shape_rate_curve_at(&bh, 12 * 3600) > 3 * shape_rate_curve_at(&bh, 3 * 3600));
    assert_int_equal(shape_rate_curve_builtin("flat", &bh, &err), SHAPE_OK);
    near(shape_rate_curve_at(&bh, 1234), 1, 0);
    assert_int_equal(shape_rate_curve_builtin("weekly", &bh, &err), SHAPE_ENOTFOUND);
}

static void test_curve_refusals(void **state)
{
    (void)state;
    static shape_rate_curve c;
    const char *bad[][2] = {
        {"{\"format\":\"shape-rate-curve\",\"version\":1,\"points\":[[\"01:00\",1],[\"01:00\",2]]}", "two points at 01:00"},
        {"{\"format\":\"shape-rate-curve\",\"version\":1,\"points\":[[\"01:00\",0],[\"02:00\",0]]}", "every multiplier is 0"},
        {"{\"format\":\"shape-rate-curve\",\"version\":2,\"points\":[[\"01:00\",1]]}", "newer"},
        {"{\"format\":\"shape-rate-curve\",\"version\":1,\"points\":[[\"01:00\",1]],\"tz\":\"x\"}", "unknown key 'tz'"},
        {"{\"format\":\"shape-rate-curve\",\"version\":1,\"points\":[[\"24:00\",1]]}", "point 1"},
        {"{\"format\":\"shape-rate-curve\",\"version\":1,\"points\":[[\"01:00\",-1]]}", "point 1"},
        /* a multiplier above 0 but below 1e-6 would put the next event beyond any clock (fuzz_rate_curve) */
        {"{\"format\":\"shape-rate-curve\",\"version\":1,\"points\":[[\"00:02\",0],[\"00:00\",2e-53]]}", "point 2"},
        {"{\"format\":\"shape-rate-curve\",\"version\":1,\"points\":[]}", "non-empty"},
        {"{\"format\":\"other\",\"version\":1,\"points\":[[\"01:00\",1]]}", "is not a rate curve"},
        {"[1]", "not a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        shape_err err;
        shape_err_clear(&err);
        assert_int_equal(shape_rate_curve_parse(bad[i][0], strlen(bad[i][0]), "c.json", &c, &err), SHAPE_EINVAL);
        if (!strstr(err.message, bad[i][1])) fail_msg("case %zu: '%s' lacks '%s'", i, err.message, bad[i][1]);
    }
}

static void test_option_refusals(void **state)
{
    (void)state;
    shape_err err;
    shape_emit_burst b;
    shape_emit_ramp r;
    assert_int_equal(shape_emit_burst_parse("1:2", &b, &err), SHAPE_EINVAL);
    assert_int_equal(shape_emit_burst_parse("1:2:x", &b, &err), SHAPE_EINVAL);
    assert_int_equal(shape_emit_burst_parse("1:0:2", &b, &err), SHAPE_EINVAL);
    assert_int_equal(shape_emit_burst_parse("-1:1:2", &b, &err), SHAPE_EINVAL);
    assert_int_equal(shape_emit_burst_parse("1:1:0", &b, &err), SHAPE_EINVAL);
    assert_int_equal(shape_emit_burst_parse("1:1:inf", &b, &err), SHAPE_EINVAL);
    assert_int_equal(shape_emit_burst_parse("1:1:1e-7", &b, &err), SHAPE_EINVAL);
    assert_int_equal(shape_emit_burst_parse("1:1:1e-6", &b, &err), SHAPE_OK);
    assert_int_equal(shape_emit_ramp_parse("1:1:1:1e-9", &r, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "0 or in [1e-6, 1e6]"));
    assert_int_equal(shape_emit_ramp_parse("1:1:2", &r, &err), SHAPE_EINVAL);
    assert_int_equal(shape_emit_ramp_parse("1:1:-2:1", &r, &err), SHAPE_EINVAL);
    shape_emit_schedule s = base(10);
    shape_emit_burst_parse("0:10:2", &s.bursts[s.nbursts++], &err);
    shape_emit_burst_parse("5:10:2", &s.bursts[s.nbursts++], &err);
    assert_int_equal(shape_emit_schedule_check(&s, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "overlaps"));
    s = base(10);
    shape_emit_ramp_parse("0:10:1:2", &s.ramps[s.nramps++], &err);
    shape_emit_ramp_parse("20:10:2:0", &s.ramps[s.nramps++], &err);
    assert_int_equal(shape_emit_schedule_check(&s, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "ends at 0"));
    s = base(10);
    shape_emit_ramp_parse("20:10:2:0", &s.ramps[s.nramps++], &err);
    shape_emit_ramp_parse("0:30:1:2", &s.ramps[s.nramps++], &err);
    assert_int_equal(shape_emit_schedule_check(&s, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "overlaps"));
    s = base(10);
    shape_emit_ramp_parse("0:10:1:0", &s.ramps[s.nramps++], &err); /* a pause, then back */
    shape_emit_ramp_parse("20:10:0:1", &s.ramps[s.nramps++], &err);
    assert_int_equal(shape_emit_schedule_check(&s, &err), SHAPE_OK);
    near(shape_emit_schedule_due(&s, NULL, 50 + 1), 20 + sqrt(2.0 * 10 * 1 / 10.0 * 1), 1e-6); /* 10·t²/20 = 1 */
}

static void test_poisson_gaps(void **state)
{
    (void)state;
    /* mean 1, variance 1; per-window counts of a unit-rate process have index of dispersion ≈ 1 */
    double sum = 0, sq = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double g = shape_emit_arrival_gap(42, (uint64_t)i);
        assert_true(g >= 0 && isfinite(g));
        sum += g;
        sq += g * g;
    }
    near(sum / n, 1, 0.01);
    near(sq / n - (sum / n) * (sum / n), 1, 0.03);
    double t = 0;
    int bins[2000] = {0};
    for (uint64_t p = 0;; p++) {
        t += shape_emit_arrival_gap(7, p);
        if (t >= 2000 * 20.0) break;
        bins[(int)(t / 20.0)]++;
    }
    double m = 0, v = 0;
    for (int i = 0; i < 2000; i++) m += bins[i];
    m /= 2000;
    for (int i = 0; i < 2000; i++) v += (bins[i] - m) * (bins[i] - m);
    v /= 1999;
    near(m, 20, 0.5);
    near(v / m, 1, 0.1);
    /* keyed by position and seed */
    assert_true(shape_emit_arrival_gap(42, 1000) == shape_emit_arrival_gap(42, 1000));
    assert_true(shape_emit_arrival_gap(42, 1000) != shape_emit_arrival_gap(43, 1000));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant),         cmocka_unit_test(test_burst),
        cmocka_unit_test(test_ramp),             cmocka_unit_test(test_burst_times_ramp_and_cursor),
        cmocka_unit_test(test_daily_curve),      cmocka_unit_test(test_curve_refusals),
        cmocka_unit_test(test_option_refusals),  cmocka_unit_test(test_poisson_gaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

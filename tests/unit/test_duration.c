/* test_duration.c — the duration grammar of the window options
 * (shape/duration.h): every example of reference/spec-core.md §1.2,
 * accepted and refused, rounding and overflow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shape/duration.h"

static int64_t ok(const char *text)
{
    shape_err err = {0};
    int64_t us = -7;
    int rc = shape_duration_parse(text, "--size", &us, &err);
    if (rc != SHAPE_OK) fail_msg("'%s' refused: %s", text, err.message);
    return us;
}

static void refused(const char *text)
{
    shape_err err = {0};
    int64_t us = -7;
    int rc = shape_duration_parse(text, "--size", &us, &err);
    if (rc != SHAPE_EINVAL) fail_msg("'%s' accepted as %lld", text ? text : "(null)", (long long)us);
    assert_int_equal(us, -7);
    assert_non_null(strstr(err.message, "is not a duration"));
    assert_non_null(strstr(err.message, "examples: 500ms, 30s"));
    assert_non_null(strstr(err.message, "--size"));
}

static void test_reference_examples(void **state)
{
    (void)state;
    assert_int_equal(ok("500ms"), 500000);
    assert_int_equal(ok("30s"), 30000000);
    assert_int_equal(ok("2m"), 120000000);
    assert_int_equal(ok("1h"), 3600000000LL);
    assert_int_equal(ok("1d"), 86400000000LL);
    assert_int_equal(ok("5"), 5000000);
    assert_int_equal(ok("1.5s"), 1500000);
    assert_int_equal(ok("250us"), 250);
    assert_int_equal(ok(" 3 s "), 3000000);
    assert_int_equal(ok("0s"), 0);
    assert_int_equal(ok("0"), 0);
}

static void test_reference_refusals(void **state)
{
    (void)state;
    const char *bad[] = {"", "s", "1x", "-1s", "1 2", "1e3s", "abc", "   ", "+1s", "1.", ".5s", "1.5.2s",
                         "1ss", "1 s s", "1sec", "1M", "1S", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) refused(bad[i]);
    refused(NULL);
}

static void test_fractions_round_to_whole_microseconds(void **state)
{
    (void)state;
    assert_int_equal(ok("0.5us"), 0);    /* half to even */
    assert_int_equal(ok("1.5us"), 2);
    assert_int_equal(ok("2.5us"), 2);
    assert_int_equal(ok("2.51us"), 3);
    assert_int_equal(ok("0.0000015"), 2); /* 1.5 µs of a bare number (seconds) */
    assert_int_equal(ok("0.50000000000000000001us"), 1); /* past the twelfth digit, only breaks the tie */
    assert_int_equal(ok("1.25m"), 75000000);
    assert_int_equal(ok("0.001ms"), 1);
    assert_int_equal(ok("1.999999999h"), 7199999996LL);
    assert_int_equal(ok("\t10 ms\t"), 10000);
    assert_int_equal(ok("007s"), 7000000);
}

static void test_too_large_is_refused(void **state)
{
    (void)state;
    assert_int_equal(ok("106751991d"), 106751991LL * 86400000000LL);
    refused("106751992d");
    refused("99999999999999999999");
    refused("9223372036854775807s");
    assert_int_equal(ok("9223372036854775807us"), INT64_MAX);
    refused("9223372036854775808us");
    refused("9223372036854775807.5us");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_examples),
        cmocka_unit_test(test_reference_refusals),
        cmocka_unit_test(test_fractions_round_to_whole_microseconds),
        cmocka_unit_test(test_too_large_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_timestamp.c — ISO-8601 parsing and formatting (shape/timestamp.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shape/timestamp.h"

#define T_2024_03_01_12 1709294400000000LL /* 2024-03-01T12:00:00Z */

static void parses(const char *text, int64_t want)
{
    int64_t got = 0;
    if (shape_parse_iso8601(text, strlen(text), &got) != 0) fail_msg("'%s' refused", text);
    if (got != want) fail_msg("'%s': got %lld, want %lld", text, (long long)got, (long long)want);
}

static void refuses(const char *text)
{
    int64_t got = 12345;
    if (shape_parse_iso8601(text, strlen(text), &got) == 0) fail_msg("'%s' accepted", text);
    assert_int_equal(got, 12345);
}

static void test_forms(void **state)
{
    (void)state;
    parses("2024-03-01T12:00:00Z", T_2024_03_01_12);
    parses("2024-03-01T12:00:00z", T_2024_03_01_12);
    parses("2024-03-01t12:00:00", T_2024_03_01_12);
    parses("2024-03-01 12:00:00", T_2024_03_01_12);
    parses("2024-03-01T12:00:01", T_2024_03_01_12 + 1000000);
    parses("2024-03-01T12", T_2024_03_01_12);
    parses("2024-03-01T12:00", T_2024_03_01_12);
    parses("2024-03-01", T_2024_03_01_12 - 12 * 3600 * 1000000LL);
    parses("1970-01-01T00:00:00Z", 0);
    parses("1969-12-31T23:59:59.999999Z", -1);
    parses("0001-01-01T00:00:00Z", -62135596800000000LL);
    parses("9999-12-31T23:59:59.999999Z", 253402300799999999LL);
}

static void test_fractions_and_zones(void **state)
{
    (void)state;
    parses("2024-03-01T12:00:00.5Z", T_2024_03_01_12 + 500000);
    parses("2024-03-01T12:00:00,25Z", T_2024_03_01_12 + 250000);
    parses("2024-03-01T12:00:00.123456Z", T_2024_03_01_12 + 123456);
    parses("2024-03-01T12:00:00.123456789Z", T_2024_03_01_12 + 123456); /* truncated */
    parses("2024-03-01T12:00:00.999999999", T_2024_03_01_12 + 999999);
    parses("2024-03-01T13:30:00+01:30", T_2024_03_01_12);
    parses("2024-03-01T13:30:00+0130", T_2024_03_01_12);
    parses("2024-03-01T10:00:00-02", T_2024_03_01_12);
    parses("2024-03-01T10:00:00-02:00", T_2024_03_01_12);
    parses("2024-03-01T12:00:10+00:00:10", T_2024_03_01_12);
    parses("2024-03-01T12:00:00.000001+00:00:00.000001", T_2024_03_01_12);
    parses("2024-02-29T00:00:00Z", T_2024_03_01_12 - 36 * 3600 * 1000000LL);
}

static void test_refusals(void **state)
{
    (void)state;
    const char *bad[] = {"",
                         "not a time",
                         "2024",
                         "2024-03",
                         "2024-3-01",
                         "2024-03-1",
                         "2024-13-01",
                         "2024-00-01",
                         "2023-02-29",
                         "2024-04-31",
                         "0000-01-01",
                         "2024-03-01T",
                         "2024-03-01T24:00:00",
                         "2024-03-01T12:60:00",
                         "2024-03-01T12:00:60",
                         "2024-03-01T1:00:00",
                         "2024-03-01T12:00:00.",
                         "2024-03-01T12:00:00.1234567890",
                         "2024-03-01T12:00:00Zjunk",
                         "2024-03-01T12:00:00+",
                         "2024-03-01T12:00:00+1",
                         "2024-03-01T12:00:00+24:00",
                         "2024-03-01X12:00:00",
                         "2024-03-01 ",
                         " 2024-03-01",
                         "+2024-03-01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) refuses(bad[i]);
    /* The length bounds the text: a valid prefix is not enough, trailing bytes count. */
    int64_t us;
    assert_int_equal(shape_parse_iso8601("2024-03-01Z", 10, &us), 0);
    assert_int_not_equal(shape_parse_iso8601("2024-03-01Z", 11, &us), 0);
}

static void test_format_round_trip(void **state)
{
    (void)state;
    char buf[40];
    assert_int_equal(shape_format_iso8601_us(T_2024_03_01_12 + 5, buf, sizeof buf), 27);
    assert_string_equal(buf, "2024-03-01T12:00:00.000005Z");
    shape_format_iso8601_us(-1, buf, sizeof buf);
    assert_string_equal(buf, "1969-12-31T23:59:59.999999Z");
    shape_format_iso8601_us(0, buf, sizeof buf);
    assert_string_equal(buf, "1970-01-01T00:00:00.000000Z");
    /* Every 7919th hour over four centuries survives format -> parse. */
    for (int64_t us = -62135596800000000LL; us < 253402300799999999LL;
         us += 7919LL * 3600 * 1000000 + 123457) {
        int n = shape_format_iso8601_us(us, buf, sizeof buf);
        int64_t back;
        assert_int_equal(shape_parse_iso8601(buf, (size_t)n, &back), 0);
        assert_int_equal(back, us);
    }
    assert_int_equal(shape_days_from_civil(2000, 3, 1), 11017);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_fractions_and_zones),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_format_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

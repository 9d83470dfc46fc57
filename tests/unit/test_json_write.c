/* test_json_write.c — the one shortest-round-trip float formatter
 * (shape/json_write.h) gives, byte for byte, what each of the three
 * formatters it replaced gave in its place.
 *
 * Why: issue 18 merged three float formatters (the event encoder's, the
 * profile document's and the options code's) and promised no output byte
 * changes. The oracles below are those three functions as they were at
 * 7b4b3b1 (copied here verbatim, renamed), run beside the new formatter on
 * edge cases (±0, subnormals, the extremes, every power of ten and its
 * neighbours, integers, 0.1 + 0.2) and on tens of thousands of
 * random bit patterns and random short decimals (a million more of each
 * were run once when the formatters were merged; under valgrind the first
 * twentieth of the random cases and every 20th integer, support/memcheck.h).
 * How: each case formats with the old function and the new one and
 * compares the NUL-terminated texts; the first mismatch fails with both
 * texts and the bits of the double. The scalar writers of the Arrow
 * printer (dates, times, decimals, uuids) are checked against fixed texts
 * at the end.
 */
#include <math.h> /* isfinite, signbit, NAN, INFINITY: macros, no libm */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/json_write.h"
#include "support/memcheck.h"

/* ---- oracle 1: src/emit/event_json.c json_f64 (and f64_general) at 7b4b3b1 */

static char *old_u64(char *p, uint64_t v)
{
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    memcpy(p, tmp, (size_t)n);
    return p + n;
}

static char *old_f64_general(char *p, double x)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
        if (strtod(tmp, NULL) == x) break;
    }
    char *e = strchr(tmp, 'e');
    int exp10 = atoi(e + 1);
    *e = 0;
    char mant[24];
    size_t m = 0;
    for (char *q = tmp; *q; q++)
        if (*q >= '0' && *q <= '9') mant[m++] = *q;
    while (m > 1 && mant[m - 1] == '0') m--;
    if (x < 0) *p++ = '-';
    if (exp10 < -4 || exp10 >= 16) {
        *p++ = mant[0];
        if (m > 1) {
            *p++ = '.';
            memcpy(p, mant + 1, m - 1);
            p += m - 1;
        }
        *p++ = 'e';
        *p++ = exp10 < 0 ? '-' : '+';
        int ax = exp10 < 0 ? -exp10 : exp10;
        if (ax >= 100) *p++ = (char)('0' + ax / 100);
        *p++ = (char)('0' + ax / 10 % 10);
        *p++ = (char)('0' + ax % 10);
        return p;
    }
    if (exp10 < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int z = 0; z < -exp10 - 1; z++) *p++ = '0';
        memcpy(p, mant, m);
        return p + m;
    }
    for (int i = 0; i <= exp10; i++) *p++ = (size_t)i < m ? mant[i] : '0';
    *p++ = '.';
    if ((size_t)exp10 + 1 < m) {
        memcpy(p, mant + exp10 + 1, m - (size_t)exp10 - 1);
        return p + (m - (size_t)exp10 - 1);
    }
    *p++ = '0';
    return p;
}

static char *old_json_f64(char *p, double x)
{
    static const double p10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    if (x != x || x - x != 0) {
        memcpy(p, "null", 4);
        return p + 4;
    }
    if (x == 0) {
        if (1 / x < 0) *p++ = '-';
        memcpy(p, "0.0", 3);
        return p + 3;
    }
    double ax = x < 0 ? -x : x;
    if (ax >= 1e-4 && ax < 1e15) {
        if (ax < 1e13 && x != (double)(int64_t)x) {
            double v = x * 100.0;
            int64_t n = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
            if ((double)n / 100.0 == x) {
                if (n < 0) {
                    *p++ = '-';
                    n = -n;
                }
                p = old_u64(p, (uint64_t)n / 100);
                *p++ = '.';
                *p++ = (char)('0' + n / 10 % 10);
                if (n % 10) *p++ = (char)('0' + n % 10);
                return p;
            }
        }
        for (int k = 0; k <= 9; k++) {
            double v = x * p10[k];
            if (v > 9007199254740992.0 || v < -9007199254740992.0) break;
            int64_t n = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
            if ((double)n / p10[k] != x) continue;
            if (n < 0) {
                *p++ = '-';
                n = -n;
            }
            char digits[24];
            int nd = (int)(old_u64(digits, (uint64_t)n) - digits);
            if (k == 0) {
                memcpy(p, digits, (size_t)nd);
                p += nd;
                memcpy(p, ".0", 2);
                return p + 2;
            }
            if (nd <= k) {
                *p++ = '0';
                *p++ = '.';
                for (int z = 0; z < k - nd; z++) *p++ = '0';
                memcpy(p, digits, (size_t)nd);
                return p + nd;
            }
            memcpy(p, digits, (size_t)(nd - k));
            p += nd - k;
            *p++ = '.';
            memcpy(p, digits + nd - k, (size_t)k);
            return p + k;
        }
    }
    return old_f64_general(p, x);
}

/* ---- oracle 2: src/profile/document.c format_double at 7b4b3b1 (finite x) */

static void old_document_double(double x, char *buf, size_t cap)
{
    if (x == 0.0) {
        snprintf(buf, cap, "%s", signbit(x) ? "-0.0" : "0.0");
        return;
    }
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
        if (strtod(tmp, NULL) == x) break;
    }
    const char *s = tmp;
    int neg = 0;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    char digits[24];
    size_t nd = 0;
    while (*s && *s != 'e') {
        if (*s >= '0' && *s <= '9' && nd < sizeof digits - 1) digits[nd++] = *s;
        s++;
    }
    int exp10 = *s == 'e' ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';
    int decpt = exp10 + 1;
    char *w = buf;
    size_t left = cap;
#define PUT(...)                                          \
    do {                                                  \
        int k_ = snprintf(w, left, __VA_ARGS__);          \
        if (k_ < 0 || (size_t)k_ >= left) return;         \
        w += k_;                                          \
        left -= (size_t)k_;                               \
    } while (0)
    if (neg) PUT("-");
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            PUT("0.");
            for (int i = 0; i < -decpt; i++) PUT("0");
            PUT("%s", digits);
        } else if ((size_t)decpt >= nd) {
            PUT("%s", digits);
            for (size_t i = nd; i < (size_t)decpt; i++) PUT("0");
            PUT(".0");
        } else {
            PUT("%.*s.%s", decpt, digits, digits + decpt);
        }
    } else {
        PUT("%c", digits[0]);
        if (nd > 1) PUT(".%s", digits + 1);
        int e = decpt - 1;
        PUT("e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
#undef PUT
}

/* ---- oracle 3: src/core/options.c format_real at 7b4b3b1 (finite x) ---- */

static void old_options_real(double d, char *buf, size_t size)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) return;
    }
}

/* ---- the comparison -------------------------------------------------------- */

static unsigned long long bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (unsigned long long)b;
}

/* One double through all three places: the encoder's writer against
 * oracle 1, the repr style against oracle 2 (what the document now calls),
 * the %g style against oracle 3. */
static void check(double x)
{
    char got[64], want[64];
    *shape_json_f64(got, x) = '\0';
    *old_json_f64(want, x) = '\0';
    if (strcmp(got, want) != 0) fail_msg("json_f64(%016llx): '%s', was '%s'", bits_of(x), got, want);
    if (!isfinite(x)) return;
    *shape_format_f64(got, x, SHAPE_F64_REPR) = '\0';
    old_document_double(x, want, sizeof want);
    if (strcmp(got, want) != 0) fail_msg("repr(%016llx): '%s', was '%s'", bits_of(x), got, want);
    *shape_format_f64(got, x, SHAPE_F64_PRINTF_G) = '\0';
    old_options_real(x, want, sizeof want);
    if (strcmp(got, want) != 0) fail_msg("%%g(%016llx): '%s', was '%s'", bits_of(x), got, want);
}

/* 10^e exactly as the text "1e<e>" reads (no libm here). */
static double ten_to(int e)
{
    char text[16];
    snprintf(text, sizeof text, "1e%d", e);
    return strtod(text, NULL);
}

/* The neighbour of finite x one unit in the last place away from or
 * towards zero. */
static double step(double x, int away)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    b = away ? b + 1 : b - 1;
    memcpy(&x, &b, sizeof x);
    return x;
}

static void check_both_signs(double x)
{
    check(x);
    check(-x);
}

static void test_edge_cases(void **state)
{
    (void)state;
    static const double cases[] = {
        0.0, 1.0, 2.0, 10.0, 20.0, 100.0, 1000.0, 12345.0, 0.5, 0.25, 0.1, 0.2, 0.3, 0.1 + 0.2,
        1.0 / 3.0, 2.0 / 3.0, 9.79, 133.8, 123.45, 1e-4, 1e-5, 1e-7, 9.999e-5, 0.00011, 1e15,
        1e16, 1e17, 9007199254740992.0, 9007199254740993.0, 9999999999999998.0, 1e15 + 0.3,
        123456789012345678.0, 1e13, 1e13 - 0.01, 99999999999.99, 1e22, 1e23, 1e100, 1e300,
        1e308, 1.7976931348623157e308, 2.2250738585072014e-308, 2.2250738585072009e-308,
        4.9406564584124654e-324, 1e-320, 1e-310, 5e-324 * 3, 3.141592653589793, 2.718281828459045, 3.14, 2.5e-10,
        0.000123456789, 42.42, 1.5, 255.0 / 256.0, 4294967296.0, 18446744073709551616.0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_both_signs(cases[i]);
    check(NAN);
    check(INFINITY);
    check(-INFINITY);
    /* every power of ten and its neighbours, across the whole range */
    for (int e = -324; e <= 308; e++) {
        double x = ten_to(e);
        check_both_signs(x);
        if (x != 0) check_both_signs(step(x, 0));
        check_both_signs(step(x, 1));
        check_both_signs(x * 1.5);
        check_both_signs(x * 9.5);
    }
    /* integers, small and around 2^53 (under memcheck every 20th: see
     * support/memcheck.h) */
    int64_t stride = 5000 / shape_test_cases(5000);
    for (int64_t n = 1; n < 5000; n += stride) check_both_signs((double)n);
    for (int64_t n = -3000; n < 3000; n += stride) check_both_signs((double)((1LL << 53) + n));
}

/* xorshift64*: deterministic, so a failure repeats. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static void test_random_bit_patterns(void **state)
{
    (void)state;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int i = 0, cases = shape_test_cases(40000); i < cases; i++) {
        uint64_t b = next_random(&s);
        double x;
        memcpy(&x, &b, sizeof x);
        check(x);
    }
    /* subnormals: random mantissas under the smallest normal exponent */
    for (int i = 0, cases = shape_test_cases(4000); i < cases; i++) {
        uint64_t b = next_random(&s) & 0x800FFFFFFFFFFFFFull;
        double x;
        memcpy(&x, &b, sizeof x);
        check(x);
    }
}

static void test_random_decimals(void **state)
{
    (void)state;
    /* what generators and decoders mostly meet: short decimals (the fast
     * paths), at every magnitude the fast path covers and past it */
    uint64_t s = 12345;
    for (int i = 0, cases = shape_test_cases(40000); i < cases; i++) {
        int digits = (int)(next_random(&s) % 7);
        int64_t n = (int64_t)(next_random(&s) % 100000000000000ull);
        double x = (double)n / ten_to(digits);
        if (i % 3 == 0) x = (double)(n % 100000) / 100.0;
        if (i % 5 == 0) x *= ten_to((int)(next_random(&s) % 40) - 20);
        check_both_signs(x);
    }
}

/* ---- the scalar writers (moved with them from test_flat_json.c) ------------ */

static char *scalar(char *buf, char *end)
{
    *end = '\0';
    return buf;
}

static void test_dates(void **state)
{
    (void)state;
    char b[SHAPE_JSON_SCALAR_MAX];
    assert_string_equal(scalar(b, shape_json_date(b, 0)), "\"1970-01-01\"");
    assert_string_equal(scalar(b, shape_json_date(b, 19675)), "\"2023-11-14\"");
    assert_string_equal(scalar(b, shape_json_date(b, -1)), "\"1969-12-31\"");
    assert_string_equal(scalar(b, shape_json_date(b, 11016)), "\"2000-02-29\"");
}

static void test_times(void **state)
{
    (void)state;
    char b[SHAPE_JSON_SCALAR_MAX];
    assert_string_equal(scalar(b, shape_json_time(b, 0, 0)), "\"00:00:00\"");
    assert_string_equal(scalar(b, shape_json_time(b, 45296, 0)), "\"12:34:56\"");
    assert_string_equal(scalar(b, shape_json_time(b, 45296789, 3)), "\"12:34:56.789\"");
    assert_string_equal(scalar(b, shape_json_time(b, 45296000001LL, 6)), "\"12:34:56.000001\"");
    assert_string_equal(scalar(b, shape_json_time(b, 86399999999999LL, 9)),
                        "\"23:59:59.999999999\"");
}

static void test_decimals(void **state)
{
    (void)state;
    char b[SHAPE_JSON_SCALAR_MAX];
    assert_string_equal(scalar(b, shape_json_decimal(b, -1, (uint64_t)-100025, 2)), "\"-1000.25\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, 0, 5, 2)), "\"0.05\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, -1, (uint64_t)-5, 2)), "\"-0.05\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, 0, 0, 2)), "\"0.00\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, 0, 1234, 2)), "\"12.34\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, 0, 1234, 0)), "\"1234\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, 0, 12, -2)), "\"1200\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, 0, 0, -2)), "\"0\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, 0, 1, 8)), "\"0.00000001\"");
    /* the full decimal128 range */
    assert_string_equal(scalar(b, shape_json_decimal(b, INT64_MAX, UINT64_MAX, 0)),
                        "\"170141183460469231731687303715884105727\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, INT64_MIN, 0, 0)),
                        "\"-170141183460469231731687303715884105728\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, INT64_MIN, 0, 38)),
                        "\"-1.70141183460469231731687303715884105728\"");
    /* crossing the 1e19 chunk boundary keeps the inner zeros */
    assert_string_equal(scalar(b, shape_json_decimal(b, 0, 10000000000000000000ull, 0)),
                        "\"10000000000000000000\"");
    assert_string_equal(scalar(b, shape_json_decimal(b, 5, 0, 3)), "\"92233720368547758.080\"");
}

static void test_uuid_text(void **state)
{
    (void)state;
    char b[SHAPE_JSON_SCALAR_MAX];
    const uint8_t u[16] = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                           0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
    assert_string_equal(scalar(b, shape_json_uuid(b, u)), "\"123e4567-e89b-12d3-a456-426614174000\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_random_bit_patterns),
        cmocka_unit_test(test_random_decimals),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_decimals),
        cmocka_unit_test(test_uuid_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

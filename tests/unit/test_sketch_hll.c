/* test_sketch_hll.c — canonical hashing and HyperLogLog (shape/profile.h):
 * the tagged byte form hashed with XXH3 directly, the estimate within 3
 * standard errors from 1 to 1M distinct values (small-range regime included),
 * an independent implementation of Ertl's estimator, and merges that equal
 * the sketch of the union exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "shape/profile.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t xxh_tagged(uint8_t tag, const void *payload, size_t n)
{
    uint8_t buf[512];
    buf[0] = tag;
    memcpy(buf + 1, payload, n);
    return XXH3_64bits_withSeed(buf, n + 1, 0);
}

static uint64_t xxh_le64(uint8_t tag, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    return xxh_tagged(tag, b, 8);
}

/* The short-text hash reads the value in place (no copy behind the tag):
 * every length 0..200 (all of XXH3's length classes and the streaming
 * path), random bytes, both tags, from a buffer malloc'd at the exact
 * length (a read past the value shows under ASan), against XXH3 over the
 * assembled bytes. */
static void test_text_hash_every_length(void **state)
{
    (void)state;
    uint64_t seed = 7;
    for (size_t n = 0; n <= 200; n++)
        for (int rep = 0; rep < 8; rep++) {
            uint8_t *p = malloc(n ? n : 1);
            assert_non_null(p);
            for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(splitmix(&seed) >> 24);
            if (rep == 0) memset(p, 'a', n);
            if (rep == 1) memset(p, 0xFF, n);
            assert_true(shape_hash_text(p, n) == xxh_tagged(4, p, n));
            assert_true(shape_hash_binary(p, n) == xxh_tagged(5, p, n));
            free(p);
        }
}

static void test_canonical_hash(void **state)
{
    (void)state;
    assert_true(shape_hash_int(1) == xxh_le64(1, 1));
    assert_true(shape_hash_int(-1) == xxh_le64(1, UINT64_MAX));
    assert_true(shape_hash_int(INT64_MIN) == xxh_le64(1, (uint64_t)INT64_MIN));
    /* integral floats hash as the integer; -0.0 as 0 */
    assert_true(shape_hash_double(1.0) == shape_hash_int(1));
    assert_true(shape_hash_double(-0.0) == shape_hash_int(0));
    assert_true(shape_hash_double(0.0) == shape_hash_int(0));
    assert_true(shape_hash_double(-12345.0) == shape_hash_int(-12345));
    assert_true(shape_hash_double(4503599627370496.0) == shape_hash_int(4503599627370496LL));
    assert_true(shape_hash_double(-9223372036854775808.0) == shape_hash_int(INT64_MIN));
    /* [2^63, 2^64) as the uint tag */
    assert_true(shape_hash_double(9223372036854775808.0) == xxh_le64(2, UINT64_C(9223372036854775808)));
    /* non-integral and non-finite values as the float tag over their bits */
    double vals[] = {1.5, -0.1, 1e300 * 10.0, -(1e300 * 10.0), 18446744073709551616.0, 5e-324};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        uint64_t bits;
        memcpy(&bits, &vals[i], 8);
        assert_true(shape_hash_double(vals[i]) == xxh_le64(3, bits));
    }
    /* text / binary: tag + bytes, short and long (streaming path) */
    assert_true(shape_hash_text("abc", 3) == xxh_tagged(4, "abc", 3));
    assert_true(shape_hash_text("", 0) == xxh_tagged(4, "", 0));
    assert_true(shape_hash_binary("abc", 3) == xxh_tagged(5, "abc", 3));
    assert_true(shape_hash_text("abc", 3) != shape_hash_binary("abc", 3));
    char longs[400];
    for (size_t i = 0; i < sizeof longs; i++) longs[i] = (char)('a' + i % 26);
    for (size_t n = 120; n <= sizeof longs; n += 7) assert_true(shape_hash_text(longs, n) == xxh_tagged(4, longs, n));
    const char *utf8 = "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80";
    assert_true(shape_hash_text(utf8, strlen(utf8)) == xxh_tagged(4, utf8, strlen(utf8)));
    /* bool and timestamp */
    uint8_t one = 1, zero = 0;
    assert_true(shape_hash_bool(1) == xxh_tagged(6, &one, 1));
    assert_true(shape_hash_bool(0) == xxh_tagged(6, &zero, 1));
    assert_true(shape_hash_timestamp(1732881821000000LL) == xxh_le64(7, 1732881821000000ULL));
    assert_true(shape_hash_timestamp(5) != shape_hash_int(5));
}

static void test_register_update(void **state)
{
    (void)state;
    shape_hll h;
    shape_hll_init(&h);
    assert_true(shape_hll_estimate(&h) == 0.0);
    /* index = top 14 bits; rank = 1 + leading zeros of the remaining 50 */
    shape_hll_add_hash(&h, (UINT64_C(5) << 50) | (UINT64_C(1) << 49));
    assert_int_equal(h.registers[5], 1);
    shape_hll_add_hash(&h, (UINT64_C(5) << 50) | 1);
    assert_int_equal(h.registers[5], 50);
    shape_hll_add_hash(&h, UINT64_C(5) << 50);
    assert_int_equal(h.registers[5], 51);
    shape_hll_add_hash(&h, (UINT64_C(5) << 50) | (UINT64_C(1) << 49));
    assert_int_equal(h.registers[5], 51); /* max is kept */
    shape_hll_add_hash(&h, UINT64_MAX);
    assert_int_equal(h.registers[16383], 1);
}

/* ---- an independent Ertl estimator (long double Newton sqrt, no libm) ---- */

static double ref_sqrt(double x)
{
    long double y = x > 1 ? x : 1, prev = 0;
    for (int i = 0; i < 200 && y != prev; i++) {
        prev = y;
        y = 0.5L * (y + (long double)x / y);
    }
    return (double)y;
}

static double ref_estimate(const uint8_t *reg)
{
    const int q = 50;
    double m = 16384.0;
    double c[52] = {0};
    for (int i = 0; i < 16384; i++) c[reg[i]] += 1;
    /* tau */
    double x = 1.0 - c[q + 1] / m, t = 0.0;
    if (x != 0.0 && x != 1.0) {
        double y = 1.0, z = 1.0 - x, old;
        do {
            x = ref_sqrt(x);
            old = z;
            y *= 0.5;
            z -= (1.0 - x) * (1.0 - x) * y;
        } while (z != old);
        t = z / 3.0;
    }
    double z = m * t;
    for (int k = q; k >= 1; k--) z = 0.5 * (z + c[k]);
    /* sigma */
    double s = c[0] / m, sg;
    if (s == 1.0) return 0.0;
    {
        double y = 1.0, zz = s, old;
        do {
            s *= s;
            old = zz;
            zz += s * y;
            y += y;
        } while (zz != old);
        sg = zz;
    }
    z += m * sg;
    return 0.72134752044448170368 * m * m / z;
}

static void test_estimator_matches_reference(void **state)
{
    (void)state;
    uint64_t seed = 42;
    shape_hll h;
    shape_hll_init(&h);
    int64_t n = 0;
    const int64_t checkpoints[] = {1, 2, 5, 50, 500, 5000, 20000, 100000, 400000};
    for (size_t k = 0; k < sizeof checkpoints / sizeof checkpoints[0]; k++) {
        for (; n < checkpoints[k]; n++) shape_hll_add_hash(&h, splitmix(&seed));
        double got = shape_hll_estimate(&h), want = ref_estimate(h.registers);
        double rel = (got - want) / want;
        if (rel < 0) rel = -rel;
        assert_true(rel < 1e-12);
    }
    /* saturated registers (all at rank 51) stay finite */
    memset(h.registers, 51, sizeof h.registers);
    double sat = shape_hll_estimate(&h);
    assert_true(!(sat < 1e18)); /* all 16384 registers saturated: infinite (Ertl: tau(0) = 0) */
}

/* ---- accuracy ----------------------------------------------------------- */

static void test_accuracy(void **state)
{
    (void)state;
    const int64_t card[] = {1, 2, 10, 100, 1000, 10000, 30000, 100000, 1000000};
    const double se = 1.04 / 128.0;
    uint64_t seed = 7;
    printf("  HLL distinct (3 SE bound 2.44%%):\n");
    for (size_t k = 0; k < sizeof card / sizeof card[0]; k++) {
        int64_t n = card[k];
        shape_hll h;
        shape_hll_init(&h);
        uint64_t base = splitmix(&seed);
        /* each value twice: duplicates must not count */
        for (int rep = 0; rep < (n <= 100000 ? 2 : 1); rep++)
            for (int64_t i = 0; i < n; i++) shape_hll_add_hash(&h, shape_hash_int((int64_t)(base + (uint64_t)i * 7919)));
        double est = shape_hll_estimate(&h);
        double rel = (est - (double)n) / (double)n;
        printf("    n=%-8lld estimate=%.2f relative error=%+.4f%%\n", (long long)n, est, 100 * rel);
        assert_true(rel <= 3 * se && rel >= -3 * se);
    }
    /* text values, and floats that equal ints count once */
    shape_hll h;
    shape_hll_init(&h);
    char buf[32];
    for (int i = 0; i < 50000; i++) {
        int len = snprintf(buf, sizeof buf, "user-%d", i);
        shape_hll_add_hash(&h, shape_hash_text(buf, (size_t)len));
    }
    double est = shape_hll_estimate(&h);
    assert_true(est > 50000 * (1 - 3 * se) && est < 50000 * (1 + 3 * se));
    shape_hll_init(&h);
    for (int i = 0; i < 1000; i++) {
        shape_hll_add_hash(&h, shape_hash_int(i));
        shape_hll_add_hash(&h, shape_hash_double((double)i));
    }
    est = shape_hll_estimate(&h);
    assert_true(est > 1000 * (1 - 3 * se) && est < 1000 * (1 + 3 * se));
}

static void test_merge(void **state)
{
    (void)state;
    shape_hll *whole = malloc(sizeof *whole), *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(whole);
    assert_non_null(a);
    assert_non_null(b);
    shape_hll_init(whole);
    shape_hll_init(a);
    shape_hll_init(b);
    for (int64_t i = 0; i < 200000; i++) {
        uint64_t h = shape_hash_int(i);
        shape_hll_add_hash(whole, h);
        shape_hll_add_hash(i < 100000 ? a : b, h);
    }
    shape_hll ab = *a;
    shape_hll_merge(&ab, b);
    assert_memory_equal(ab.registers, whole->registers, SHAPE_HLL_REGISTERS);
    assert_true(shape_hll_estimate(&ab) == shape_hll_estimate(whole));
    shape_hll ba = *b;
    shape_hll_merge(&ba, a);
    assert_memory_equal(ba.registers, whole->registers, SHAPE_HLL_REGISTERS);
    shape_hll_merge(&ba, a); /* idempotent */
    assert_memory_equal(ba.registers, whole->registers, SHAPE_HLL_REGISTERS);
    free(whole);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_hash),
        cmocka_unit_test(test_text_hash_every_length),
        cmocka_unit_test(test_register_update),
        cmocka_unit_test(test_estimator_matches_reference),
        cmocka_unit_test(test_accuracy),
        cmocka_unit_test(test_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

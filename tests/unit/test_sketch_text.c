/* test_sketch_text.c — text statistics (shape/profile.h): the 12 patterns
 * with positive and negative examples each (edges of every rule), the 200-
 * byte limit, code-point length, and the exact length histogram with its
 * numpy-"linear" p95. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/profile.h"

typedef struct example {
    const char *text;
    int yes; /* 1: must match the pattern, 0: must not */
} example;

static const example email[] = {
    {"a@b.cd", 1}, {"john.doe+tag@example.co.uk", 1}, {"x_y%z-1@sub-d.example.ORG", 1}, {"a.@b..cd", 1},
    {"@b.cd", 0},  {"a@b.c", 0}, {"a@.cd", 0}, {"a@b", 0},
    {"a b@c.de", 0}, {"a@b.c1", 0}, {"a@@b.cd", 0}, {"a@b.cd ", 0}, {"\xc3\xa9@b.cd", 0}, {"a@b_c.de", 0},
    {NULL, 0}};

static const example uuid[] = {
    {"123e4567-e89b-12d3-a456-426614174000", 1}, {"ABCDEFAB-CDEF-ABCD-EFAB-CDEFABCDEFAB", 1},
    {"123e4567e89b12d3a456426614174000", 0},     {"123e4567-e89b-12d3-a456-42661417400", 0},
    {"123e4567-e89b-12d3-a456-4266141740000", 0}, {"123e4567-e89b-12d3-a456_426614174000", 0},
    {"g23e4567-e89b-12d3-a456-426614174000", 0}, {NULL, 0}};

static const example ssn[] = {{"123-45-6789", 1}, {"000-00-0000", 1}, {"123456789", 0}, {"123-456-789", 0},
                              {"12a-45-6789", 0}, {"123-45-67890", 0}, {NULL, 0}};

static const example mac[] = {{"00:1A:2b:3C:4d:5E", 1}, {"00-1a-2b-3c-4d-5e", 1}, {"00:1a-2b:3c:4d:5e", 0},
                              {"001a2b3c4d5e", 0},      {"00:1a:2b:3c:4d", 0},    {"00:1a:2b:3c:4d:5g", 0},
                              {"0:1a:2b:3c:4d:5e:", 0}, {NULL, 0}};

static const example ipv4[] = {{"192.168.0.1", 1}, {"0.0.0.0", 1},     {"255.255.255.255", 1}, {"01.002.199.9", 1},
                               {"256.1.1.1", 0},   {"1.2.3", 0},       {"1.2.3.4.5", 0},       {"1.2.3.1000", 0},
                               {"1..2.3", 0},      {"a.b.c.d", 0},     {" 1.2.3.4", 0},        {NULL, 0}};

static const example ipv6[] = {
    {"2001:0db8:85a3:0000:0000:8a2e:0370:7334", 1}, {"2001:db8:85a3:0:0:8a2e:370:7334", 1}, {"fe80::", 1},
    {"fe80::1", 1}, {"::1", 1}, {"::", 1}, {"::ffff:c000:280", 1}, {"1:2:3:4:5:6:7::", 1}, {"1:2:3:4:5:6::8", 1},
    {"1::2:3", 0} /* not one of the listed compressed forms */, {"1:2:3:4:5:6:7:8:9", 0}, {"1:2:3:4:5:6:7", 0},
    {"12345::1", 0}, {":::1", 0}, {"1::2::3", 0}, {"g::1", 0}, {"1:2:3:4:5:6:7::8", 0}, {NULL, 0}};

static const example iban[] = {{"DE89370400440532013000", 1}, {"GB29NWBK60161331926819", 1}, {"AB12C", 1},
                               {"de89370400440532013000", 0}, {"DE89370400440532013000X0000000000000", 0} /* 31 after the check digits */,
                               {"D189370400", 0},              {"DE8", 0}, {"DE89", 0}, {"DE89 3704", 0}, {NULL, 0}};

static const example postal[] = {{"12345", 1}, {"12345-6789", 1}, {"1234", 0},      {"123456", 0},
                                 {"12345-678", 0}, {"12345 6789", 0}, {"1234a", 0}, {NULL, 0}};

static const example date[] = {{"2024-11-29", 1}, {"2024/1/5", 1}, {"2024-1/05", 1}, {"2024-11-29T12:03:41", 0},
                               {"24-11-29", 0},   {"2024-111-29", 0}, {"2024.11.29", 0}, {"2024-11-", 0}, {NULL, 0}};

static const example phone[] = {{"+1 (555) 123-4567", 1}, {"555.123.4567", 1}, {"1234567", 1},
                                {"+12345678901234567890", 1}, {"123456", 0}, {"+123456", 0},
                                {"123456789012345678901", 0}, {"555-CALL-NOW", 0}, {"++1234567", 0},
                                {"12\t34\n567", 1}, {NULL, 0}};

static const example currency[] = {{"USD", 1}, {"EUR", 1}, {"usd", 0}, {"US", 0}, {"USDT", 0}, {"U$D", 0}, {NULL, 0}};

static const example language[] = {{"en", 1}, {"en-US", 1}, {"EN", 0}, {"en-us", 0}, {"eng", 0},
                                   {"en_US", 0}, {"e", 0}, {"en-USA", 0}, {NULL, 0}};

static const example *const table[SHAPE_PATTERN_COUNT] = {email, uuid, ssn,    mac,   ipv4,     ipv6,
                                                          iban,  postal, date, phone, currency, language};

static void test_pattern_examples(void **state)
{
    (void)state;
    for (int p = 0; p < SHAPE_PATTERN_COUNT; p++) {
        int pos = 0, neg = 0;
        for (const example *e = table[p]; e->text; e++) {
            unsigned m = shape_text_patterns((const uint8_t *)e->text, strlen(e->text));
            int got = (m >> p) & 1;
            if (got != e->yes) fail_msg("pattern %s on \"%s\": got %d, want %d", shape_pattern_name(p), e->text, got, e->yes);
            pos += e->yes;
            neg += !e->yes;
        }
        assert_true(pos >= 2 && neg >= 3);
    }
    assert_string_equal(shape_pattern_name(0), "email");
    assert_string_equal(shape_pattern_name(11), "language");
    assert_null(shape_pattern_name(12));
}

static void test_pattern_overlaps_and_limits(void **state)
{
    (void)state;
    /* a date also matches phone (digits and dashes, 10 chars) */
    unsigned m = shape_text_patterns((const uint8_t *)"2024-11-29", 10);
    assert_int_equal(m, (1u << SHAPE_PATTERN_DATE) | (1u << SHAPE_PATTERN_PHONE));
    /* ssn also matches phone; a ZIP+4 too */
    m = shape_text_patterns((const uint8_t *)"123-45-6789", 11);
    assert_int_equal(m, (1u << SHAPE_PATTERN_SSN) | (1u << SHAPE_PATTERN_PHONE));
    m = shape_text_patterns((const uint8_t *)"12345-6789", 10);
    assert_int_equal(m, (1u << SHAPE_PATTERN_POSTAL) | (1u << SHAPE_PATTERN_PHONE));
    /* an IPv4 address with 7+ chars is also a phone (digits and dots) */
    m = shape_text_patterns((const uint8_t *)"10.0.0.1", 8);
    assert_int_equal(m, (1u << SHAPE_PATTERN_IPV4) | (1u << SHAPE_PATTERN_PHONE));
    assert_int_equal(shape_text_patterns((const uint8_t *)"", 0), 0);
    assert_int_equal(shape_text_patterns((const uint8_t *)"hello world", 11), 0);
    /* only values of at most 200 bytes are tested */
    char buf[256];
    memset(buf, 'a', sizeof buf);
    memcpy(buf + 188, "@example.com", 12); /* 200 bytes: tested */
    assert_int_equal(shape_text_patterns((const uint8_t *)buf, 200), 1u << SHAPE_PATTERN_EMAIL);
    memset(buf, 'a', sizeof buf);
    memcpy(buf + 189, "@example.com", 12); /* 201 bytes: an email, but too long to test */
    assert_int_equal(shape_text_patterns((const uint8_t *)buf, 201), 0);
}

static void test_utf8_length(void **state)
{
    (void)state;
    assert_int_equal(shape_utf8_length((const uint8_t *)"", 0), 0);
    assert_int_equal(shape_utf8_length((const uint8_t *)"abc", 3), 3);
    const char *s = "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80!"; /* été € 😀! */
    assert_int_equal(shape_utf8_length((const uint8_t *)s, strlen(s)), 8);
    char long_s[1000];
    size_t n = 0, cps = 0;
    while (n + 4 <= sizeof long_s) {
        const char *piece = (cps % 3 == 0) ? "\xe4\xb8\xad" : (cps % 3 == 1) ? "x" : "\xc3\xbc";
        memcpy(long_s + n, piece, strlen(piece));
        n += strlen(piece);
        cps++;
    }
    assert_int_equal(shape_utf8_length((const uint8_t *)long_s, n), cps);
}

/* white-box hook (src/profile/profile_internal.h): every matcher, no filter */
unsigned shape_text_patterns_unfiltered_(const uint8_t *s, size_t n);

/* The byte pre-filter must never drop a match: the filtered result equals
 * the unfiltered one (a) on every example above with each position replaced
 * by each of the 256 byte values (so every byte the table wrongly refused in
 * a matching value would show), and (b) on random strings over the bytes the
 * patterns use, of every length 0..45 (plus a few long ones). */
static void test_pattern_filter_exact(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t positives = 0;
    for (size_t l = 0; l < SHAPE_PATTERN_COUNT; l++)
        for (const example *e = table[l]; e->text; e++) {
            size_t n = strlen(e->text);
            memcpy(buf, e->text, n);
            for (size_t at = 0; at < n; at++)
                for (int b = 0; b < 256; b++) {
                    buf[at] = (uint8_t)b;
                    unsigned want = shape_text_patterns_unfiltered_(buf, n);
                    positives += want != 0;
                    assert_int_equal(shape_text_patterns(buf, n), want);
                }
        }
    assert_true(positives > 1000);
    static const char alphabet[] = "0123456789abcdefgzABCDEFGZ-.:/@_%+() \t\r\x85\xc3";
    uint32_t seed = 99;
    for (int round = 0; round < 200000; round++) {
        seed = seed * 1103515245u + 12345u;
        size_t n = round < 199000 ? (seed >> 8) % 46 : 150 + (seed >> 8) % 60;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (uint8_t)alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        assert_int_equal(shape_text_patterns(buf, n), shape_text_patterns_unfiltered_(buf, n));
    }
}

static size_t naive_utf8_length(const uint8_t *s, size_t n)
{
    size_t cps = 0;
    for (size_t i = 0; i < n; i++) cps += (s[i] & 0xC0) != 0x80;
    return cps;
}

/* The word-at-a-time count (all-ASCII words skipped, the others summed by a
 * multiply) against a byte-by-byte count: every length 0..40 at every start
 * offset 0..7 (so runs straddle the 8-byte steps), over pure ASCII, pure
 * continuation bytes, all 0xFF/0xC0/0x80 edges and random bytes; the buffer
 * is malloc'd at the exact length so a read past it shows under ASan. */
static void test_utf8_length_words(void **state)
{
    (void)state;
    uint32_t seed = 12345;
    for (int kind = 0; kind < 6; kind++)
        for (size_t n = 0; n <= 40; n++)
            for (size_t off = 0; off < 8; off++)
                for (int rep = 0; rep < (kind == 5 ? 20 : 1); rep++) {
                    uint8_t *buf = malloc(off + n + 1);
                    assert_non_null(buf);
                    for (size_t i = 0; i < off + n; i++) {
                        seed = seed * 1103515245u + 12345u;
                        uint8_t r = (uint8_t)(seed >> 16);
                        buf[i] = kind == 0 ? (uint8_t)('a' + r % 26)
                                 : kind == 1 ? (uint8_t)(0x80 | (r & 0x3F))
                                 : kind == 2 ? 0xFF
                                 : kind == 3 ? (i % 2 ? 0xC0 : 0x80)
                                 : kind == 4 ? (r % 3 == 0 ? (uint8_t)(0x80 | (r & 0x3F)) : (uint8_t)(r & 0x7F))
                                             : r;
                    }
                    uint8_t *exact = malloc(n ? n : 1);
                    assert_non_null(exact);
                    memcpy(exact, buf + off, n);
                    assert_int_equal(shape_utf8_length(exact, n), naive_utf8_length(exact, n));
                    assert_int_equal(shape_utf8_length(buf + off, n), naive_utf8_length(buf + off, n));
                    free(exact);
                    free(buf);
                }
}

/* numpy.quantile(sorted, q, method="linear") computed from the expanded list */
static double numpy_linear(const int64_t *sorted, int64_t n, double q)
{
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)pos, hi = lo + 1 < n ? lo + 1 : lo;
    double t = pos - (double)lo, a = (double)sorted[lo], b = (double)sorted[hi];
    return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

static void test_length_histogram(void **state)
{
    (void)state;
    shape_lenhist h, a, b;
    shape_lenhist_init(&h);
    shape_lenhist_init(&a);
    shape_lenhist_init(&b);
    shape_err err;
    assert_true(shape_lenhist_quantile(&h, 0.95) != shape_lenhist_quantile(&h, 0.95)); /* NaN when empty */
    enum { N = 5000 };
    static int64_t lens[N];
    uint64_t x = 5;
    int64_t total = 0;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int64_t len = (int64_t)((x >> 33) % 40);
        if (i % 97 == 0) len = 250 + (int64_t)((x >> 20) % 400); /* some above the dense range */
        lens[i] = len;
        total += len;
        assert_int_equal(shape_lenhist_add(&h, len, 1, &err), SHAPE_OK);
        assert_int_equal(shape_lenhist_add(i % 2 ? &a : &b, len, 1, &err), SHAPE_OK);
    }
    assert_int_equal(h.count, N);
    assert_int_equal(h.total, total);
    qsort(lens, N, sizeof *lens, cmp_i64);
    for (int k = 0; k <= 20; k++) {
        double q = k / 20.0;
        assert_true(shape_lenhist_quantile(&h, q) == numpy_linear(lens, N, q));
    }
    assert_true(shape_lenhist_quantile(&h, 0.0) == (double)lens[0]);
    assert_true(shape_lenhist_quantile(&h, 1.0) == (double)lens[N - 1]);
    /* bins: ascending, counts sum to N */
    shape_lenhist_bin *bins = NULL;
    size_t nb = shape_lenhist_bins(&h, &bins);
    int64_t sum = 0;
    for (size_t i = 0; i < nb; i++) {
        if (i) assert_true(bins[i].length > bins[i - 1].length);
        sum += bins[i].count;
    }
    assert_int_equal(sum, N);
    /* merge of the two halves equals the whole */
    assert_int_equal(shape_lenhist_merge(&a, &b, &err), SHAPE_OK);
    shape_lenhist_bin *mb = NULL;
    size_t nm = shape_lenhist_bins(&a, &mb);
    assert_int_equal(nm, nb);
    assert_memory_equal(mb, bins, nb * sizeof *bins);
    assert_int_equal(a.count, h.count);
    assert_int_equal(a.total, h.total);
    free(bins);
    free(mb);
    /* p95 of 1..20 (numpy: 19.05) */
    shape_lenhist_free(&h);
    for (int i = 1; i <= 20; i++) shape_lenhist_add(&h, i, 1, &err);
    assert_true(shape_lenhist_quantile(&h, 0.95) > 19.0499999 && shape_lenhist_quantile(&h, 0.95) < 19.0500001);
    assert_int_equal(shape_lenhist_add(&h, -1, 1, &err), SHAPE_EINVAL);
    shape_lenhist_free(&h);
    shape_lenhist_free(&a);
    shape_lenhist_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern_examples),
        cmocka_unit_test(test_pattern_overlaps_and_limits),
        cmocka_unit_test(test_utf8_length),
        cmocka_unit_test(test_utf8_length_words),
        cmocka_unit_test(test_pattern_filter_exact),
        cmocka_unit_test(test_length_histogram),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

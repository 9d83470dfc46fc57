/* test_kafka_record_headers.c — a Kafka record's headers read from its bytes
 * (src/plugins/kafka/record_headers.h): the views, appended after the ones
 * already there; only the first of one name (only_header); and the refusals
 * of bytes that are not headers (the client then takes librdkafka's own
 * parse), which leave the views as they were. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "record_headers.h"

typedef struct {
    uint8_t b[20000];
    size_t n;
} rec;

static void varint(rec *r, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    do {
        uint8_t byte = u & 0x7f;
        u >>= 7;
        r->b[r->n++] = (uint8_t)(byte | (u ? 0x80 : 0));
    } while (u);
}

static void bytes(rec *r, const void *p, size_t n)
{
    memcpy(r->b + r->n, p, n);
    r->n += n;
}

/* name, then a value of vlen bytes (vlen -1: no value) */
static void header(rec *r, const char *name, const void *value, int64_t vlen)
{
    varint(r, (int64_t)strlen(name));
    bytes(r, name, strlen(name));
    varint(r, vlen);
    if (vlen > 0) bytes(r, value, (size_t)vlen);
}

static void test_reads_every_header_in_order(void **state)
{
    (void)state;
    static rec r; /* 20 KB: off the stack */
    r.n = 0;
    static char big[9000];
    memset(big, 'x', sizeof big);
    const uint8_t bin[] = {0, 0xff, 0x80, 0x0a};
    varint(&r, 7);
    header(&r, "shape-table", "customer", 8);
    header(&r, "nul", NULL, -1);
    header(&r, "empty", "", 0);
    header(&r, "dup", "1", 1);
    header(&r, "dup", "2", 1);
    header(&r, "", bin, sizeof bin);          /* an empty name, binary value */
    header(&r, "big", big, sizeof big);       /* a three-byte varint length */
    shape_kafka_header_views views = {0};
    size_t n;
    assert_int_equal(shape_kafka_record_headers(r.b, r.n, NULL, 0, &views, &n), SHAPE_OK);
    assert_int_equal(n, 7);
    assert_int_equal(views.n, 7);
    const shape_header *h = views.v;
    assert_int_equal(h[0].name_len, 11);
    assert_memory_equal(h[0].name, "shape-table", 11);
    assert_int_equal(h[0].value_len, 8);
    assert_memory_equal(h[0].value, "customer", 8);
    assert_null(h[1].value);
    assert_int_equal(h[1].value_len, 0);
    assert_non_null(h[2].value); /* empty, not absent */
    assert_int_equal(h[2].value_len, 0);
    assert_memory_equal(h[3].value, "1", 1);
    assert_memory_equal(h[4].value, "2", 1);
    assert_int_equal(h[5].name_len, 0);
    assert_memory_equal(h[5].value, bin, sizeof bin);
    assert_int_equal(h[6].value_len, sizeof big);
    assert_ptr_equal(h[6].value, r.b + r.n - sizeof big); /* views into the bytes */
    /* a second record's views go after the first's (one fetch's views in one array) */
    assert_int_equal(shape_kafka_record_headers(r.b, r.n, NULL, 0, &views, &n), SHAPE_OK);
    assert_int_equal(n, 7);
    assert_int_equal(views.n, 14);
    assert_memory_equal(views.v[7].name, "shape-table", 11);
    assert_ptr_equal(views.v[13].value, r.b + r.n - sizeof big);
    free(views.v);
}

/* only: the first header of that name, or none; the rest still checked */
static void test_only_one_name(void **state)
{
    (void)state;
    static rec r;
    r.n = 0;
    varint(&r, 5);
    header(&r, "trace", "t", 1);
    header(&r, "dup", "1", 1);
    header(&r, "dup", "2", 1);
    header(&r, "du", "x", 1);  /* a prefix of the name */
    header(&r, "nul", NULL, -1);
    shape_kafka_header_views views = {0};
    size_t n = 9;
    assert_int_equal(shape_kafka_record_headers(r.b, r.n, "dup", 3, &views, &n), SHAPE_OK);
    assert_int_equal(n, 1);
    assert_int_equal(views.n, 1);
    assert_int_equal(views.v[0].name_len, 3);
    assert_memory_equal(views.v[0].value, "1", 1); /* the first of two */
    assert_int_equal(shape_kafka_record_headers(r.b, r.n, "nul", 3, &views, &n), SHAPE_OK);
    assert_int_equal(n, 1);
    assert_null(views.v[1].value); /* a header without a value is still that header */
    assert_int_equal(shape_kafka_record_headers(r.b, r.n, "missing", 7, &views, &n), SHAPE_OK);
    assert_int_equal(n, 0);
    assert_int_equal(shape_kafka_record_headers(r.b, r.n, "d", 1, &views, &n), SHAPE_OK);
    assert_int_equal(n, 0);
    assert_int_equal(views.n, 2);
    /* a header past the wanted one cut short: refused all the same */
    r.n--;
    assert_int_equal(shape_kafka_record_headers(r.b, r.n, "trace", 5, &views, &n), SHAPE_EINVAL);
    assert_int_equal(n, 0);
    assert_int_equal(views.n, 2);
    free(views.v);
}

/* the cache: equal bytes elsewhere give views into those bytes, as a parse
 * would; other bytes are parsed; refusals stay refusals */
static void test_cache_takes_equal_bytes_again(void **state)
{
    (void)state;
    static rec a, b, c;
    a.n = 0;
    varint(&a, 3);
    header(&a, "shape-table", "customer", 8);
    header(&a, "nul", NULL, -1);
    header(&a, "shape-synthetic", "true", 4);
    b = a; /* the same bytes at another address */
    c = a;
    c.b[c.n - 1] = 'X'; /* one byte differs */
    static shape_kafka_header_cache cache; /* zeroed */
    for (int only = 0; only < 2; only++) {
        memset(&cache, 0, sizeof cache);
        const char *name = only ? "shape-table" : NULL;
        size_t name_len = only ? 11 : 0;
        const rec *recs[] = {&a, &b, &c, &a};
        for (size_t r = 0; r < 4; r++) {
            shape_kafka_header_views cached = {0}, parsed = {0};
            size_t n1, n2;
            assert_int_equal(shape_kafka_record_headers_cached(&cache, recs[r]->b, recs[r]->n, name, name_len, &cached, &n1),
                             SHAPE_OK);
            assert_int_equal(shape_kafka_record_headers(recs[r]->b, recs[r]->n, name, name_len, &parsed, &n2), SHAPE_OK);
            assert_int_equal(n1, only ? 1 : 3);
            assert_int_equal(n1, n2);
            for (size_t i = 0; i < n1; i++) {
                assert_ptr_equal(cached.v[i].name, parsed.v[i].name); /* into this record's bytes */
                assert_int_equal(cached.v[i].name_len, parsed.v[i].name_len);
                assert_ptr_equal(cached.v[i].value, parsed.v[i].value);
                assert_int_equal(cached.v[i].value_len, parsed.v[i].value_len);
            }
            free(cached.v);
            free(parsed.v);
        }
    }
    /* a refused record after a cached one: refused, and the cache forgets */
    static rec bad;
    bad = a;
    bad.n--;
    shape_kafka_header_views views = {0};
    size_t n;
    memset(&cache, 0, sizeof cache); /* a cache is asked with one only */
    assert_int_equal(shape_kafka_record_headers_cached(&cache, a.b, a.n, NULL, 0, &views, &n), SHAPE_OK);
    assert_int_equal(shape_kafka_record_headers_cached(&cache, bad.b, bad.n, NULL, 0, &views, &n), SHAPE_EINVAL);
    assert_int_equal(n, 0);
    assert_int_equal(views.n, 3);
    assert_int_equal(cache.len, 0);
    free(views.v);
}

static void test_no_headers(void **state)
{
    (void)state;
    shape_kafka_header_views views = {0};
    size_t n = 9;
    assert_int_equal(shape_kafka_record_headers(NULL, 0, NULL, 0, &views, &n), SHAPE_OK);
    assert_int_equal(n, 0);
    assert_int_equal(views.n, 0);
    const uint8_t zero[] = {0};
    assert_int_equal(shape_kafka_record_headers(zero, 1, NULL, 0, &views, &n), SHAPE_OK);
    assert_int_equal(n, 0);
    assert_int_equal(views.n, 0);
    free(views.v);
}

static void refused(const rec *r)
{
    shape_kafka_header_views views = {malloc(sizeof(shape_header)), 1, 1}; /* one view already: kept */
    assert_non_null(views.v);
    views.v[0] = (shape_header){"x", 1, NULL, 0};
    size_t n = 9;
    assert_int_equal(shape_kafka_record_headers(r->b, r->n, NULL, 0, &views, &n), SHAPE_EINVAL);
    assert_int_equal(n, 0);
    assert_int_equal(views.n, 1);
    n = 9;
    assert_int_equal(shape_kafka_record_headers(r->b, r->n, "a", 1, &views, &n), SHAPE_EINVAL);
    assert_int_equal(n, 0);
    assert_int_equal(views.n, 1);
    assert_memory_equal(views.v[0].name, "x", 1);
    free(views.v);
}

static void test_refuses_what_is_not_headers(void **state)
{
    (void)state;
    static rec r;
    r.n = 0; varint(&r, 1); header(&r, "a", "bc", 2); r.n--; refused(&r);      /* value cut short */
    r.n = 0; varint(&r, 2); header(&r, "a", "b", 1); refused(&r);              /* a header missing */
    r.n = 0; varint(&r, -1); refused(&r);                                      /* a negative count */
    r.n = 0; varint(&r, 1); varint(&r, -1); varint(&r, 0); refused(&r);       /* a null name */
    r.n = 0; varint(&r, 1); header(&r, "a", "b", 1); varint(&r, 0); refused(&r); /* bytes left over */
    r.n = 0; varint(&r, 1); varint(&r, 1); bytes(&r, "a", 1); varint(&r, -2); refused(&r); /* length -2 */
    r.n = 0; varint(&r, 1000000); bytes(&r, "abcd", 4); refused(&r);          /* more headers than bytes */
    r.n = 0; varint(&r, 0); varint(&r, 0); refused(&r);                        /* zero headers, then bytes */
    r.n = 0; for (int i = 0; i < 11; i++) r.b[r.n++] = 0x80; refused(&r);      /* a varint past 10 bytes */
    r.n = 0; r.b[r.n++] = 0x82; refused(&r);                                   /* a varint cut short */
    r.n = 0; varint(&r, 1); varint(&r, INT64_MAX / 4); bytes(&r, "ab", 2); refused(&r); /* a huge key length */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_every_header_in_order),
        cmocka_unit_test(test_only_one_name),
        cmocka_unit_test(test_cache_takes_equal_bytes_again),
        cmocka_unit_test(test_no_headers),
        cmocka_unit_test(test_refuses_what_is_not_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_event.c — events as bytes (shape/event.h): the JSON value rules of
 * spec-core §3.3 with concrete expected text (the texts are what Python's
 * json.dumps / repr print for the same values), whole flat and CloudEvents
 * events of retail small seed 42, and the event plan's offsets.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shape/domain.h"
#include "shape/event.h"
#include "shape/generate_retail.h"

static char buf[8192];

#define F64(x, text)                                               \
    do {                                                           \
        char *e_ = shape_json_f64(buf, (x));                       \
        *e_ = 0;                                                   \
        assert_string_equal(buf, text);                            \
    } while (0)

static void test_floats(void **state)
{
    (void)state;
    F64(20.0, "20.0");
    F64(-0.0, "-0.0");
    F64(0.0, "0.0");
    F64(0.1, "0.1");
    F64(9.79, "9.79");
    F64(133.8, "133.8");
    F64(-123.45, "-123.45");
    F64(0.30000000000000004, "0.30000000000000004");
    F64(1e-05, "1e-05");
    F64(2.5e-05, "2.5e-05");
    F64(0.0001, "0.0001");
    F64(1e16, "1e+16");
    F64(1.5e300, "1.5e+300");
    F64(1e22, "1e+22");
    F64(5e-324, "5e-324");
    F64(1234567890123456.0, "1234567890123456.0");
    F64(1e15, "1000000000000000.0");
    F64(123456789.123, "123456789.123");
    F64(-40.7128, "-40.7128");
    F64(1.0 / 3.0, "0.3333333333333333");
    F64(NAN, "null");
    F64(INFINITY, "null");
    F64(-INFINITY, "null");
}

static void test_timestamps(void **state)
{
    (void)state;
    char *e = shape_json_timestamp(buf, 0, 9, 0);
    *e = 0;
    assert_string_equal(buf, "\"1970-01-01T00:00:00.000000000\"");
    e = shape_json_timestamp(buf, 1680698096123456000LL, 9, 0);
    *e = 0;
    assert_string_equal(buf, "\"2023-04-05T12:34:56.123456000\"");
    e = shape_json_timestamp(buf, 1700000000123LL, 3, 1);
    *e = 0;
    assert_string_equal(buf, "\"2023-11-14T22:13:20.123Z\"");
    e = shape_json_timestamp(buf, 1700000000LL, 0, 1);
    *e = 0;
    assert_string_equal(buf, "\"2023-11-14T22:13:20Z\"");
    e = shape_json_timestamp(buf, 1700000000123456LL, 6, 0);
    *e = 0;
    assert_string_equal(buf, "\"2023-11-14T22:13:20.123456\"");
    e = shape_json_timestamp(buf, -1, 9, 1); /* one ns before the epoch */
    *e = 0;
    assert_string_equal(buf, "\"1969-12-31T23:59:59.999999999Z\"");
}

/* The fast renderers (two digits per step, 8-byte runs of plain text, the
 * per-thread date cache) against plain reference implementations, over
 * every boundary and many pseudo-random values. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void check_u64(uint64_t v)
{
    char want[32];
    snprintf(want, sizeof want, "%llu", (unsigned long long)v);
    char *e = shape_json_u64(buf, v);
    *e = 0;
    assert_string_equal(buf, want);
    snprintf(want, sizeof want, "%lld", (long long)(int64_t)v);
    e = shape_json_i64(buf, (int64_t)v);
    *e = 0;
    assert_string_equal(buf, want);
}

static void test_integers_differential(void **state)
{
    (void)state;
    uint64_t p = 1;
    for (int d = 0; d < 20; d++, p *= 10) { /* around every power of ten */
        check_u64(p - 1);
        check_u64(p);
        check_u64(p + 1);
    }
    check_u64(UINT64_MAX);
    check_u64((uint64_t)INT64_MAX);
    check_u64((uint64_t)INT64_MIN);
    uint64_t s = 88172645463325252u;
    for (int i = 0; i < 200000; i++) {
        uint64_t v = next_random(&s);
        check_u64(v >> (v & 63)); /* every magnitude */
    }
}

/* The escaping rules, one byte at a time. */
static char *reference_string(char *p, const unsigned char *s, size_t n)
{
    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') p += sprintf(p, "\\%c", c);
        else if (c == '\n') p += sprintf(p, "\\n");
        else if (c == '\r') p += sprintf(p, "\\r");
        else if (c == '\t') p += sprintf(p, "\\t");
        else if (c == '\b') p += sprintf(p, "\\b");
        else if (c == '\f') p += sprintf(p, "\\f");
        else if (c < 0x20) p += sprintf(p, "\\u%04x", c);
        else *p++ = (char)c;
    }
    *p++ = '"';
    return p;
}

static void test_strings_differential(void **state)
{
    (void)state;
    static char want[8192];
    unsigned char in[600];
    uint64_t s = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < 50000; i++) {
        size_t n = (size_t)(next_random(&s) % 40);
        if (i % 100 == 0) n = sizeof in;
        /* mostly plain ASCII and UTF-8 bytes, sometimes a byte to escape,
         * placed anywhere in or across an 8-byte run */
        for (size_t k = 0; k < n; k++) {
            uint64_t r = next_random(&s);
            in[k] = (r % 16 == 0) ? (unsigned char)(r >> 8) : (unsigned char)(0x20 + (r >> 8) % 0x5f);
        }
        char *e = shape_json_string(buf, (const char *)in, n);
        char *w = reference_string(want, in, n);
        assert_int_equal(e - buf, w - want);
        assert_memory_equal(buf, want, (size_t)(w - want));
    }
    for (int c = 0; c < 256; c++) { /* each byte value alone and after 8 plain ones */
        unsigned char one[9] = "abcdefgh";
        one[8] = (unsigned char)c;
        for (size_t off = 0; off <= 8; off += 8) {
            char *e = shape_json_string(buf, (const char *)one + (8 - off), off + 1);
            char *w = reference_string(want, one + (8 - off), off + 1);
            assert_int_equal(e - buf, w - want);
            assert_memory_equal(buf, want, (size_t)(w - want));
        }
    }
}

/* Timestamps against gmtime_r: days that change at every call, days that
 * repeat (the cache), and back again; every unit. */
static void test_timestamps_differential(void **state)
{
    (void)state;
    static const int64_t scale[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                    100000000, 1000000000};
    uint64_t s = 0x2545F4914F6CDD1Du;
    for (int i = 0; i < 100000; i++) {
        int digits = (int)(next_random(&s) % 10);
        /* seconds between 1900 and 2200, runs of the same day */
        int64_t secs = (int64_t)(next_random(&s) % (300LL * 365 * 86400)) - 70LL * 365 * 86400;
        if (i % 3) secs = (secs / 86400) * 86400 + (int64_t)(next_random(&s) % 86400);
        int64_t frac = (int64_t)(next_random(&s) % (uint64_t)scale[digits]);
        int64_t value = secs * scale[digits] + frac;
        time_t t = (time_t)secs;
        struct tm tm;
        gmtime_r(&t, &tm);
        char want[64];
        int k = snprintf(want, sizeof want, "\"%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        if (digits) k += snprintf(want + k, sizeof want - (size_t)k, ".%0*lld", digits, (long long)frac);
        snprintf(want + k, sizeof want - (size_t)k, "%s\"", i % 2 ? "Z" : "");
        char *e = shape_json_timestamp(buf, value, digits, i % 2);
        *e = 0;
        assert_string_equal(buf, want);
    }
}

static void test_strings_and_base64(void **state)
{
    (void)state;
    const char s[] = "a\"b\\c\n\t\x01 caf\xc3\xa9";
    char *e = shape_json_string(buf, s, sizeof s - 1);
    *e = 0;
    assert_string_equal(buf, "\"a\\\"b\\\\c\\n\\t\\u0001 caf\xc3\xa9\"");
    const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    const char *out[] = {"\"\"", "\"Zg==\"", "\"Zm8=\"", "\"Zm9v\"", "\"Zm9vYg==\"", "\"Zm9vYmE=\"",
                         "\"Zm9vYmFy\""};
    for (size_t i = 0; i < 7; i++) {
        e = shape_json_base64(buf, in[i], strlen(in[i]));
        *e = 0;
        assert_string_equal(buf, out[i]);
    }
    shape_gen_value v = {.kind = SHAPE_GEN_BOOL, .v.b = 1};
    e = shape_json_gen_value(buf, &v);
    *e = 0;
    assert_string_equal(buf, "true");
    v.kind = SHAPE_GEN_NULL;
    e = shape_json_gen_value(buf, &v);
    *e = 0;
    assert_string_equal(buf, "null");
    v.kind = SHAPE_GEN_INT64;
    v.v.i = INT64_MIN;
    e = shape_json_gen_value(buf, &v);
    *e = 0;
    assert_string_equal(buf, "-9223372036854775808");
}

/* Row r of a table of retail small seed 42, encoded. */
static const char *encode_row(shape_retail *d, size_t table, uint64_t r, shape_envelope env)
{
    shape_err err;
    shape_retail_table *t;
    static shape_gen_row row;
    assert_int_equal(shape_retail_table_open_id(d, table, &t, &err), SHAPE_OK);
    assert_int_equal(shape_retail_table_row(t, r, &row, &err), SHAPE_OK);
    const shape_gen_column *cols;
    size_t ncols = shape_retail_columns(table, &cols);
    shape_event_table et;
    assert_int_equal(shape_event_table_init(&et, shape_retail_table_name(table), cols, ncols,
                                            shape_retail_event_time_column(table), &err),
                     SHAPE_OK);
    assert_true(shape_event_bound(&et, &row) < sizeof buf);
    char *e = shape_event_encode(&et, env, r, &row, buf);
    *e = 0;
    shape_retail_table_free(t);
    return buf;
}

static void test_events(void **state)
{
    (void)state;
    shape_err err;
    shape_retail *d;
    assert_int_equal(shape_retail_open("small", 42, &d, &err), SHAPE_OK);
    assert_string_equal(
        encode_row(d, SHAPE_RETAIL_CUSTOMER, 0, SHAPE_ENVELOPE_FLAT),
        "{\"customer_id\":1,\"first_name\":\"Steven\",\"last_name\":\"Ellis\","
        "\"email\":\"steven.ellis774@example.com\",\"gender\":\"M\",\"loyalty_tier\":\"Basic\","
        "\"signup_date\":\"2022-12-26T20:26:58.020781000\",\"is_active\":\"true\","
        "\"_shape_table\":\"customer\",\"_shape_seq\":0,"
        "\"_shape_event_time\":\"2022-12-26T20:26:58.020781000\"}");
    /* no timestamp column: no _shape_event_time */
    assert_string_equal(encode_row(d, SHAPE_RETAIL_ORDER_LINE, 1, SHAPE_ENVELOPE_FLAT),
                        "{\"order_line_id\":2,\"order_id\":3351,\"product_id\":89,\"quantity\":1.0,"
                        "\"promotion_id\":null,\"unit_price\":133.8,\"discount_percent\":0.0,"
                        "\"line_total\":133.8,\"_shape_table\":\"order_line\",\"_shape_seq\":1}");
    assert_string_equal(
        encode_row(d, SHAPE_RETAIL_ORDER_LINE, 1, SHAPE_ENVELOPE_CLOUDEVENTS),
        "{\"specversion\":\"1.0\",\"id\":\"order_line/1\",\"source\":\"shape://shape\","
        "\"type\":\"shape.order_line.row\",\"datacontenttype\":\"application/json\","
        "\"shapetable\":\"order_line\",\"shapeseq\":1,\"data\":"
        "{\"order_line_id\":2,\"order_id\":3351,\"product_id\":89,\"quantity\":1.0,"
        "\"promotion_id\":null,\"unit_price\":133.8,\"discount_percent\":0.0,"
        "\"line_total\":133.8,\"_shape_table\":\"order_line\",\"_shape_seq\":1}}");
    const char *ce = encode_row(d, SHAPE_RETAIL_CUSTOMER, 0, SHAPE_ENVELOPE_CLOUDEVENTS);
    assert_non_null(strstr(ce, "\"type\":\"shape.customer.row\",\"time\":\"2022-12-26T20:26:58.020781000\","
                               "\"datacontenttype\""));
    char key[64];
    *shape_event_key(key, "order_line", 12499) = 0;
    assert_string_equal(key, "order_line/12499");
    shape_retail_free(d);
}

/* `_shape_event_time` repeats its column's text whatever the column's place
 * and value (the encoder copies the column's rendered text): a timestamp in
 * the middle of the row, and a null one. */
static void test_event_time_copy(void **state)
{
    (void)state;
    static const shape_gen_column cols[] = {
        {"id", SHAPE_GEN_INT64, 0}, {"at", SHAPE_GEN_TIMESTAMP_NS, 1}, {"name", SHAPE_GEN_STRING, 0}};
    shape_event_table t;
    shape_err err;
    assert_int_equal(shape_event_table_init(&t, "t", cols, 3, 1, &err), SHAPE_OK);
    static shape_gen_row row;
    row.ncols = 3;
    row.values[0] = (shape_gen_value){.kind = SHAPE_GEN_INT64, .v.i = 7};
    row.values[1] = (shape_gen_value){.kind = SHAPE_GEN_TIMESTAMP_NS, .v.i = 1700000000123456789};
    row.values[2] = (shape_gen_value){.kind = SHAPE_GEN_STRING, .len = 3, .v.s = "a\"b"};
    char *e = shape_event_encode(&t, SHAPE_ENVELOPE_FLAT, 5, &row, buf);
    *e = 0;
    assert_string_equal(buf, "{\"id\":7,\"at\":\"2023-11-14T22:13:20.123456789\",\"name\":\"a\\\"b\","
                             "\"_shape_table\":\"t\",\"_shape_seq\":5,"
                             "\"_shape_event_time\":\"2023-11-14T22:13:20.123456789\"}");
    row.values[1] = (shape_gen_value){.kind = SHAPE_GEN_NULL};
    e = shape_event_encode(&t, SHAPE_ENVELOPE_FLAT, 6, &row, buf);
    *e = 0;
    assert_string_equal(buf, "{\"id\":7,\"at\":null,\"name\":\"a\\\"b\",\"_shape_table\":\"t\",\"_shape_seq\":6,"
                             "\"_shape_event_time\":null}");
}

static void test_reserved(void **state)
{
    (void)state;
    static const shape_gen_column cols[] = {{"id", SHAPE_GEN_INT64, 0}, {"_shape_seq", SHAPE_GEN_INT64, 0}};
    shape_event_table t;
    shape_err err;
    assert_int_equal(shape_event_table_init(&t, "t", cols, 2, -1, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "table 't' has a column named '_shape_seq', which is reserved");
    shape_envelope env;
    assert_int_equal(shape_envelope_parse("xml", &env, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "unknown envelope 'xml'; choose from flat, cloudevents");
}

/* The retail small stream's plan of every table (*d to free). */
static void retail_plan(shape_domain **d, shape_event_plan *plan)
{
    shape_err err;
    assert_int_equal(shape_domain_open(shape_retail_domain_type(), "small", 42, d, &err), SHAPE_OK);
    assert_int_equal(shape_event_plan_init(plan, *d, NULL, 0, &err), SHAPE_OK);
}

static void test_plan(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d;
    shape_event_plan plan;
    retail_plan(&d, &plan);
    assert_int_equal(plan.total, 21750);
    assert_int_equal(plan.ntables, 9);
    assert_int_equal(plan.start[6], 3400); /* order */
    assert_int_equal(plan.start[7], 8400); /* order_line */
    size_t k;
    uint64_t r;
    assert_int_equal(shape_event_plan_locate(&plan, 20899, &k, &r, &err), SHAPE_OK);
    assert_int_equal(k, 7);
    assert_int_equal(r, 12499);
    assert_int_equal(shape_event_plan_locate(&plan, 20900, &k, &r, &err), SHAPE_OK);
    assert_int_equal(k, 8);
    assert_int_equal(r, 0);
    assert_int_equal(shape_event_plan_locate(&plan, 21750, &k, &r, &err), SHAPE_EINVAL);
    /* --table keeps dependency order whatever order it is given in */
    const char *names[] = {"return", "customer", "return"};
    shape_event_plan_reset(&plan);
    assert_int_equal(shape_event_plan_init(&plan, d, names, 3, &err), SHAPE_OK);
    assert_int_equal(plan.ntables, 2);
    assert_int_equal(plan.table_ids[0], SHAPE_RETAIL_CUSTOMER);
    assert_int_equal(plan.table_ids[1], SHAPE_RETAIL_RETURN);
    assert_int_equal(plan.total, 1850);
    assert_int_equal(plan.start[1], 1000);
    const char *bad[] = {"orders"};
    shape_event_plan_reset(&plan);
    assert_int_equal(shape_event_plan_init(&plan, d, bad, 1, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "unknown table 'orders'; the schema has customer, address"));
    shape_domain_free(d);
}

/* The exact mean length of the events at [from, to), every one rendered. */
static double exact_mean(const shape_event_plan *plan, shape_envelope env, uint64_t from, uint64_t to)
{
    shape_err err;
    double bytes = 0;
    static char text[1 << 16];
    shape_gen_row *row = malloc(sizeof *row);
    assert_non_null(row);
    for (size_t k = 0; k < plan->ntables; k++) {
        const shape_domain_table *tab = shape_domain_table_at(plan->domain, plan->table_ids[k]);
        shape_event_table et;
        assert_int_equal(shape_event_table_init(&et, tab->name, tab->cols, tab->ncols, tab->event_time_col, &err), 0);
        shape_domain_cursor *cur;
        assert_int_equal(shape_domain_cursor_open(plan->domain, plan->table_ids[k], &cur, &err), SHAPE_OK);
        for (uint64_t r = 0; r < plan->rows[k]; r++) {
            uint64_t off = plan->start[k] + r;
            if (off < from || off >= to) continue;
            assert_int_equal(shape_domain_cursor_row(cur, r, row, &err), SHAPE_OK);
            assert_true(shape_event_bound(&et, row) <= sizeof text);
            bytes += (double)(shape_event_encode(&et, env, r, row, text) - text);
        }
        shape_domain_cursor_free(cur);
    }
    free(row);
    return bytes / (double)(to - from);
}

/* The sampled mean (what emit's warning before sending into shape broker
 * plans with) is within 5 % of the exact one, for the whole stream, a
 * range inside one table and a range across tables, in both envelopes. */
static void test_plan_mean_bytes(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d;
    shape_event_plan plan;
    retail_plan(&d, &plan);
    const uint64_t ranges[][2] = {{0, 21750}, {9000, 12000}, {2000, 9000}, {100, 110}};
    for (int env = 0; env < 2; env++)
        for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
            double mean = 0, exact = exact_mean(&plan, (shape_envelope)env, ranges[i][0], ranges[i][1]);
            assert_int_equal(
                shape_event_plan_mean_bytes(&plan, (shape_envelope)env, ranges[i][0], ranges[i][1], &mean, &err),
                SHAPE_OK);
            assert_true(mean > exact * 0.95 && mean < exact * 1.05);
        }
    double none = -1;
    assert_int_equal(shape_event_plan_mean_bytes(&plan, SHAPE_ENVELOPE_FLAT, 500, 500, &none, &err), SHAPE_OK);
    assert_true(none == 0);
    shape_event_plan_reset(&plan);
    shape_domain_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floats),   cmocka_unit_test(test_timestamps),
        cmocka_unit_test(test_strings_and_base64), cmocka_unit_test(test_events),
        cmocka_unit_test(test_reserved), cmocka_unit_test(test_event_time_copy), cmocka_unit_test(test_plan),
        cmocka_unit_test(test_integers_differential), cmocka_unit_test(test_strings_differential),
        cmocka_unit_test(test_timestamps_differential), cmocka_unit_test(test_plan_mean_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

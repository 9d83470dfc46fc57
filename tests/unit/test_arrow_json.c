/* test_arrow_json.c — Arrow rows as JSON text (shape/arrow_json.h): string
 * escaping a word at a time against a byte-by-byte reference, int64 text
 * against printf, a batch printed as JSON lines against its rows printed
 * one by one, and timestamps against the text stream-read printed before
 * its printer became the one shared with the registry formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "regfmt_arrays.h"
#include "shape/arrow_json.h"
#include "shape/timestamp.h"

/* The escaping rules, a byte at a time: quote and backslash escaped, the
 * named control characters by name, the others as \u00XX, the rest as is. */
static size_t naive_escape(char *w, const unsigned char *p, size_t len)
{
    size_t n = 0;
    w[n++] = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = p[i];
        const char *named = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                          : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
        if (named) {
            memcpy(w + n, named, 2);
            n += 2;
        } else if (c < 0x20) {
            n += (size_t)sprintf(w + n, "\\u%04x", c);
        } else {
            w[n++] = (char)c;
        }
    }
    w[n++] = '"';
    return n;
}

static void check_string(const unsigned char *bytes, size_t len)
{
    /* the input at its exact length, so a read past it shows under ASan */
    unsigned char *in = malloc(len ? len : 1);
    assert_non_null(in);
    memcpy(in, bytes, len);
    char want[6 * 256 + 2];
    size_t want_len = naive_escape(want, in, len);
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    assert_int_equal(shape_json_append_raw(&out, "x", 1), SHAPE_OK); /* appends after what is there */
    assert_int_equal(shape_json_append_string(&out, in, len), SHAPE_OK);
    assert_int_equal(out.len, want_len + 1);
    assert_memory_equal(out.data + 1, want, want_len);
    assert_int_equal(out.data[out.len], '\0');
    shape_json_buf_reset(&out);
    free(in);
}

/* Every byte value at every position of strings of 1..24 bytes (so it falls
 * in every place of a word, and in the tail), then random strings over the
 * bytes that matter, of every length 0..200. */
static void test_string_escapes(void **state)
{
    (void)state;
    unsigned char buf[256];
    for (size_t len = 1; len <= 24; len++)
        for (size_t at = 0; at < len; at++)
            for (int b = 0; b < 256; b++) {
                memset(buf, 'x', len);
                buf[at] = (unsigned char)b;
                check_string(buf, len);
            }
    static const unsigned char alphabet[] = {'a', '"', '\\', '\n', '\t', 0, 1, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xff, '/'};
    uint32_t seed = 42;
    for (int round = 0; round < 20000; round++) {
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 8) % 201;
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = alphabet[(seed >> 16) % sizeof alphabet];
        }
        check_string(buf, len);
    }
    check_string((const unsigned char *)"", 0);
}

/* One batch: an int64 column of edge values (and a null), a text column
 * needing escapes, a float column; its rows as JSON lines equal the rows
 * one by one, whole and from the middle; the ints read as printf's. */
static void test_rows_jsonl(void **state)
{
    (void)state;
    static const int64_t ints[] = {0, -1, 1, 9, 10, 99, 100, -100, 12345678901234567LL, INT64_MAX, INT64_MIN,
                                   -9223372036854775807LL, 1000000000000000000LL};
    enum { N = sizeof ints / sizeof ints[0] };
    shape_err err;
    shape_batch *b = NULL;
    shape_column *ci = NULL, *cs = NULL, *cf = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, "i", 1, SHAPE_TYPE_INT64, &ci, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, "s\"q", 3, SHAPE_TYPE_UTF8, &cs, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, "f", 1, SHAPE_TYPE_FLOAT64, &cf, &err), SHAPE_OK);
    for (int r = 0; r <= N; r++) { /* row N: all null */
        char text[32];
        int n = snprintf(text, sizeof text, "a\"b\\%d\n\x01", r);
        assert_int_equal(r < N ? shape_column_append_int64(ci, ints[r], &err) : shape_column_append_null(ci, &err),
                         SHAPE_OK);
        assert_int_equal(r < N ? shape_column_append_bytes(cs, text, (size_t)n, &err)
                               : shape_column_append_null(cs, &err),
                         SHAPE_OK);
        assert_int_equal(r < N ? shape_column_append_double(cf, r * 0.5, &err) : shape_column_append_null(cf, &err),
                         SHAPE_OK);
        assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    }
    struct ArrowSchema schema;
    struct ArrowArray array;
    assert_int_equal(shape_batch_finish(b, &schema, &array, &err), SHAPE_OK);
    shape_batch_free(b);
    for (int64_t first = 0; first <= N; first += 4) {
        int64_t count = N + 1 - first;
        shape_json_buf lines = SHAPE_JSON_BUF_INIT, one = SHAPE_JSON_BUF_INIT;
        assert_int_equal(shape_arrow_rows_jsonl(&schema, &array, first, count, &lines, &err), SHAPE_OK);
        for (int64_t r = first; r < first + count; r++) {
            assert_int_equal(shape_arrow_row_json(&schema, &array, r, &one, &err), SHAPE_OK);
            assert_int_equal(shape_json_append_raw(&one, "\n", 1), SHAPE_OK);
        }
        assert_int_equal(lines.len, one.len);
        assert_memory_equal(lines.data, one.data, one.len);
        shape_json_buf_reset(&lines);
        shape_json_buf_reset(&one);
    }
    for (int r = 0; r <= N; r++) {
        shape_json_buf row = SHAPE_JSON_BUF_INIT;
        assert_int_equal(shape_arrow_row_json(&schema, &array, r, &row, &err), SHAPE_OK);
        char want[160], f[16];
        snprintf(f, sizeof f, r % 2 ? "%d.5" : "%d.0", r / 2); /* r * 0.5 as Python's repr */
        if (r < N)
            snprintf(want, sizeof want, "{\"i\":%lld,\"s\\\"q\":\"a\\\"b\\\\%d\\n\\u0001\",\"f\":%s}",
                     (long long)ints[r], r, f);
        else
            snprintf(want, sizeof want, "{\"i\":null,\"s\\\"q\":null,\"f\":null}");
        assert_string_equal(row.data, want);
        shape_json_buf_reset(&row);
    }
    array.release(&array);
    schema.release(&schema);
}

/* stream-read's timestamp text as it was printed before the printers were
 * merged (core/arrow_json.c at 7b4b3b1): shape_format_iso8601_us of the
 * microseconds, and for ns columns the three more digits. */
static size_t old_timestamp_text(char *text, size_t size, int64_t v, int ns)
{
    int64_t us = !ns ? v : (v >= 0 ? v / 1000 : -((-v + 999) / 1000));
    int n = shape_format_iso8601_us(us, text + 1, size - 2);
    text[0] = '"';
    if (ns) {
        int64_t rest = ((v % 1000) + 1000) % 1000;
        n += snprintf(text + n, size - (size_t)n, "%03lldZ", (long long)rest) - 1;
    }
    text[n + 1] = '"';
    text[n + 2] = '\0';
    return (size_t)n + 2;
}

/* The one printer keeps stream-read's timestamp bytes: µs and ns columns
 * (zone UTC) across the whole range, before year 0 (SHAPE_ARROW_JSON_PAD_YEARS:
 * "-001-...") and after 9999 included. */
static void test_timestamps_as_stream_read_printed_them(void **state)
{
    (void)state;
    static const int64_t fixed[] = {0, 1, -1, 999, -999, 1000, -1000, 1700000000123456LL,
                                    -62135596800000000LL,      /* 0001-01-01 */
                                    -62167219200000000LL,      /* 0000-01-01 */
                                    -62167219200000001LL,      /* the last µs of year -1 */
                                    -62198755200000000LL,      /* -001-01-01 */
                                    -93692592000000000LL,      /* -999 */
                                    -93724128000000000LL,      /* -1000 */
                                    253402300800000000LL,      /* 10000-01-01 */
                                    INT64_MAX, INT64_MIN + 1000000};
    uint64_t x = 88172645463325252ull;
    for (int ns = 0; ns <= 1; ns++) {
        shape_err err;
        shape_batch *b = NULL;
        shape_column *c = NULL;
        assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
        assert_int_equal(shape_batch_add_column(b, "t", 1, ns ? SHAPE_TYPE_TIMESTAMP_NS : SHAPE_TYPE_TIMESTAMP_US,
                                                &c, &err),
                         SHAPE_OK);
        enum { N = 2000 };
        int64_t values[N];
        for (int r = 0; r < N; r++) {
            size_t nf = sizeof fixed / sizeof fixed[0];
            if ((size_t)r < nf) values[r] = fixed[r];
            else { /* xorshift: any int64, and values within a few thousand years of 0 */
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                values[r] = r % 2 ? (int64_t)x : (int64_t)(x % 200000000000000000ull) - 100000000000000000LL;
            }
            if (ns && values[r] < INT64_MIN + 1000) values[r] = INT64_MIN + 1000; /* (old code: -v) */
            assert_int_equal(shape_column_append_timestamp(c, values[r], &err), SHAPE_OK);
            assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
        }
        struct ArrowSchema schema;
        struct ArrowArray array;
        assert_int_equal(shape_batch_finish(b, &schema, &array, &err), SHAPE_OK);
        shape_batch_free(b);
        for (int r = 0; r < N; r++) {
            shape_json_buf row = SHAPE_JSON_BUF_INIT;
            assert_int_equal(shape_arrow_row_json(&schema, &array, r, &row, &err), SHAPE_OK);
            char want[96], text[80];
            old_timestamp_text(text, sizeof text, values[r], ns);
            snprintf(want, sizeof want, "{\"t\":%s}", text);
            if (strcmp(row.data, want) != 0)
                fail_msg("%s %lld: %s, was %s", ns ? "ns" : "us", (long long)values[r], row.data, want);
            shape_json_buf_reset(&row);
        }
        array.release(&array);
        schema.release(&schema);
    }
}

/* stream-read prints only the types of shape's own batches and refuses a
 * value of another (SHAPE_ARROW_JSON_CORE_TYPES), as it always has; the
 * printer without the flag prints them by the registry's rules. */
static void test_stream_read_types(void **state)
{
    (void)state;
    static const int32_t i32[] = {7, 0};
    static const int64_t ts[] = {1500, 0};
    static const uint8_t valid_first[] = {0x1};
    rt_column cols[] = {{.name = "n", .format = "i", .values = i32, .validity = valid_first},
                        {.name = "t", .format = "tsm:", .values = ts, .validity = valid_first}};
    struct ArrowSchema s;
    struct ArrowArray a;
    rt_batch_make(cols, 2, 2, 0, &s, &a);
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    shape_err err;
    assert_int_equal(shape_arrow_row_json(&s, &a, 0, &out, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "cannot print a column of this type as JSON");
    out.len = 0;
    assert_int_equal(shape_arrow_row_json(&s, &a, 1, &out, &err), SHAPE_OK); /* nulls are printed */
    assert_string_equal(out.data, "{\"n\":null,\"t\":null}");
    out.len = 0;
    assert_int_equal(shape_arrow_rows_json(&s, &a, 0, 1, '\0', 0, &out, &err), SHAPE_OK);
    assert_string_equal(out.data, "{\"n\":7,\"t\":\"1970-01-01T00:00:01.500\"}");
    shape_json_buf_reset(&out);
    rt_batch_release(&s, &a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_rows_jsonl),
        cmocka_unit_test(test_timestamps_as_stream_read_printed_them),
        cmocka_unit_test(test_stream_read_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_decode.c — message bodies to Arrow batches (shape/decode.h): the
 * reference's decoding catalogue, rule by rule, with concrete values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/decode.h"

#define T0_US 1700000000000000LL

/* Messages from bodies: partition 0, offsets 0.., broker time T0 + i ms. */
static shape_message *messages(size_t n, const char *const *bodies)
{
    shape_message *m = calloc(n, sizeof *m);
    for (size_t i = 0; i < n; i++) {
        m[i].partition = 0;
        m[i].offset = (int64_t)i;
        m[i].value = bodies[i];
        m[i].value_len = bodies[i] ? strlen(bodies[i]) : 0;
        m[i].has_timestamp = 1;
        m[i].timestamp_us = T0_US + (int64_t)i * 1000;
    }
    return m;
}

typedef struct batch {
    struct ArrowSchema schema;
    struct ArrowArray array;
} batch;

static int decode(shape_decoder *dec, const char *const *bodies, size_t n, batch *out, shape_err *err)
{
    shape_message *m = messages(n, bodies);
    memset(out, 0, sizeof *out);
    int rc = shape_decoder_decode(dec, m, n, &out->schema, &out->array, err);
    free(m);
    return rc;
}

static void release(batch *b)
{
    if (b->array.release) b->array.release(&b->array);
    if (b->schema.release) b->schema.release(&b->schema);
}

static shape_decoder *decoder(const shape_decode_options *o)
{
    shape_decoder *dec;
    shape_err err;
    if (shape_decoder_new(o, NULL, &dec, &err) != SHAPE_OK) fail_msg("decoder: %s", err.message);
    return dec;
}

static int64_t col_index(const batch *b, const char *name)
{
    for (int64_t i = 0; i < b->schema.n_children; i++)
        if (strcmp(b->schema.children[i]->name, name) == 0) return i;
    fail_msg("no column %s", name);
    return -1;
}

static const struct ArrowArray *col(const batch *b, const char *name)
{
    return b->array.children[col_index(b, name)];
}

static const char *format_of(const batch *b, const char *name)
{
    return b->schema.children[col_index(b, name)]->format;
}

static void expect_columns(const batch *b, const char *expected)
{
    char got[512] = "";
    for (int64_t i = 0; i < b->schema.n_children; i++) {
        if (i) strcat(got, ",");
        strcat(got, b->schema.children[i]->name);
    }
    assert_string_equal(got, expected);
}

static void expect_text(const struct ArrowArray *a, int64_t i, const char *want)
{
    if (!want) {
        assert_false(shape_arrow_is_valid(a, i));
        return;
    }
    assert_true(shape_arrow_is_valid(a, i));
    size_t len;
    const uint8_t *p = shape_arrow_bytes_at(a, i, &len);
    if (len != strlen(want) || memcmp(p, want, len) != 0)
        fail_msg("row %lld: got '%.*s', want '%s'", (long long)i, (int)len, (const char *)p, want);
}

static void test_columns_types_and_event_time(void **state)
{
    (void)state;
    shape_decoder *dec = decoder(NULL);
    const char *bodies[] = {
        "{\"id\":1,\"amount\":1.5,\"kind\":\"a\",\"_shape_event_time\":\"2024-03-01T12:00:00Z\"}",
        "{\"id\":2,\"amount\":3,\"kind\":\"b\",\"_shape_event_time\":\"2024-03-01T12:00:01\"}",
        "{\"id\":3,\"amount\":4.5,\"kind\":\"c\",\"_shape_event_time\":\"not a time\"}",
        "{\"id\":4,\"kind\":\"a\",\"ok\":true}",
    };
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, bodies, 4, &b, &err), SHAPE_OK);
    assert_int_equal(b.array.length, 4);
    expect_columns(&b, "id,amount,kind,ok,_shape_event_time");
    assert_string_equal(format_of(&b, "id"), "l");
    assert_string_equal(format_of(&b, "amount"), "g");
    assert_string_equal(format_of(&b, "kind"), "u");
    assert_string_equal(format_of(&b, "ok"), "b");
    assert_string_equal(format_of(&b, "_shape_event_time"), "tsu:UTC");
    assert_int_equal(shape_arrow_int64_at(col(&b, "id"), 3), 4);
    assert_true(shape_arrow_double_at(col(&b, "amount"), 1) == 3.0);
    assert_false(shape_arrow_is_valid(col(&b, "amount"), 3));
    assert_false(shape_arrow_is_valid(col(&b, "ok"), 0));
    assert_true(shape_arrow_bool_at(col(&b, "ok"), 3));
    const struct ArrowArray *et = col(&b, "_shape_event_time");
    assert_int_equal(shape_arrow_int64_at(et, 0), 1709294400000000LL);
    assert_int_equal(shape_arrow_int64_at(et, 1), 1709294401000000LL);
    assert_int_equal(shape_arrow_int64_at(et, 2), T0_US + 2000); /* invalid: broker time */
    assert_int_equal(shape_arrow_int64_at(et, 3), T0_US + 3000); /* absent: broker time */
    const char *p;
    int32_t len;
    assert_int_equal(shape_arrow_metadata_find(b.schema.metadata, "shape.partition", &p, &len), 1);
    assert_int_equal(len, 1);
    assert_memory_equal(p, "0", 1);
    const shape_decode_stats *st = shape_decoder_stats(dec);
    assert_int_equal(st->messages, 4);
    assert_int_equal(st->rows, 4);
    release(&b);
    shape_decoder_free(dec);
}

static void test_no_broker_time_gives_null(void **state)
{
    (void)state;
    shape_decoder *dec = decoder(NULL);
    shape_message m = {.value = "{\"a\":1}", .value_len = 7};
    struct ArrowArray a;
    shape_err err;
    assert_int_equal(shape_decoder_decode(dec, &m, 1, NULL, &a, &err), SHAPE_OK);
    assert_false(shape_arrow_is_valid(a.children[1], 0));
    a.release(&a);
    shape_decoder_free(dec);
}

static void test_event_time_field_and_units(void **state)
{
    (void)state;
    shape_decode_options o;
    shape_decode_options_init(&o);
    o.event_time_field = "ts";
    o.event_time_unit = SHAPE_TIME_S;
    shape_decoder *dec = decoder(&o);
    const char *bodies[] = {"{\"id\":1,\"ts\":1700000000,\"_shape_event_time\":\"2024-01-01\"}",
                            "{\"id\":2,\"ts\":1700000002.5}", "{\"id\":3,\"ts\":true}",
                            "{\"id\":4,\"ts\":1e300}", "{\"id\":5,\"ts\":{\"x\":1}}"};
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, bodies, 5, &b, &err), SHAPE_OK);
    expect_columns(&b, "id,_shape_event_time");
    const struct ArrowArray *et = col(&b, "_shape_event_time");
    assert_int_equal(shape_arrow_int64_at(et, 0), 1700000000000000LL);
    assert_int_equal(shape_arrow_int64_at(et, 1), 1700000002500000LL);
    assert_int_equal(shape_arrow_int64_at(et, 2), T0_US + 2000); /* a bool is not a time */
    assert_int_equal(shape_arrow_int64_at(et, 3), T0_US + 3000); /* out of int64 range */
    assert_int_equal(shape_arrow_int64_at(et, 4), T0_US + 4000); /* an object is not a time */
    release(&b);
    shape_decoder_free(dec);

    o.event_time_unit = SHAPE_TIME_MS;
    dec = decoder(&o);
    const char *ms[] = {"{\"ts\":1700000000123}", "{\"ts\":-1.9}"};
    assert_int_equal(decode(dec, ms, 2, &b, &err), SHAPE_OK);
    et = col(&b, "_shape_event_time");
    assert_int_equal(shape_arrow_int64_at(et, 0), 1700000000123000LL);
    assert_int_equal(shape_arrow_int64_at(et, 1), -1900); /* truncated toward zero */
    release(&b);
    shape_decoder_free(dec);
}

static void test_undecodable_messages(void **state)
{
    (void)state;
    const char *bodies[] = {"{\"id\":1}", "not json", "[1, 2]", NULL, "{\"id\":2}", "{\"id\":3",
                            "{\"id\":\"\xff\"}"};
    shape_decoder *dec = decoder(NULL);
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, bodies, 7, &b, &err), SHAPE_OK);
    assert_int_equal(b.array.length, 2);
    assert_int_equal(shape_arrow_int64_at(col(&b, "id"), 0), 1);
    assert_int_equal(shape_arrow_int64_at(col(&b, "id"), 1), 2);
    const shape_decode_stats *st = shape_decoder_stats(dec);
    assert_int_equal(st->messages, 7);
    assert_int_equal(st->undecodable, 5);
    assert_int_equal(st->rows, 2);
    release(&b);
    shape_decoder_free(dec);

    shape_decode_options o;
    shape_decode_options_init(&o);
    o.on_error = SHAPE_ON_ERROR_RAISE;
    dec = decoder(&o);
    assert_int_equal(decode(dec, bodies, 7, &b, &err), SHAPE_EINVAL);
    assert_null(b.array.release);
    assert_non_null(strstr(err.message, "partition 0 offset 1: "));
    release(&b);
    shape_decoder_free(dec);
}

static void test_first_batch_freezes_schema(void **state)
{
    (void)state;
    shape_decoder *dec = decoder(NULL);
    const char *first[] = {"{\"id\":1,\"v\":1.5}", "{\"id\":2,\"v\":2.5}"};
    const char *second[] = {"{\"id\":\"x\",\"v\":3.5}", "{\"id\":4,\"v\":null,\"new\":1}",
                            "{\"id\":2.0,\"v\":7}", "{\"id\":2.5}", "{\"id\":true}"};
    batch b1, b2;
    shape_err err;
    assert_int_equal(decode(dec, first, 2, &b1, &err), SHAPE_OK);
    assert_int_equal(decode(dec, second, 5, &b2, &err), SHAPE_OK);
    expect_columns(&b2, "id,v,_shape_event_time"); /* "new" is ignored */
    assert_string_equal(format_of(&b2, "id"), "l");
    assert_int_equal(b2.array.length, 2);
    assert_int_equal(shape_arrow_int64_at(col(&b2, "id"), 0), 4);
    assert_int_equal(shape_arrow_int64_at(col(&b2, "id"), 1), 2); /* 2.0 fits int64 */
    assert_true(shape_arrow_double_at(col(&b2, "v"), 1) == 7.0);  /* an int fits float64 */
    assert_int_equal(shape_decoder_stats(dec)->rejected, 3);      /* "x", 2.5, true */
    release(&b1);
    release(&b2);
    shape_decoder_free(dec);
}

static void test_rejected_with_raise_names_offset(void **state)
{
    (void)state;
    shape_decode_options o;
    shape_decode_options_init(&o);
    o.on_error = SHAPE_ON_ERROR_RAISE;
    shape_decoder *dec = decoder(&o);
    const char *first[] = {"{\"n\":1}"};
    const char *second[] = {"{\"n\":2}", "{\"n\":false}"};
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, first, 1, &b, &err), SHAPE_OK);
    release(&b);
    assert_int_equal(decode(dec, second, 2, &b, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "partition 0 offset 1: a value does not fit the schema");
    shape_decoder_free(dec);
}

static void test_mixed_and_nested_become_text(void **state)
{
    (void)state;
    shape_decoder *dec = decoder(NULL);
    const char *bodies[] = {
        "{\"b\":1,\"n\":{\"y\":[1, 2],\"x\":1},\"l\":[1, 2],\"z\":null,\"big\":12345678901234567890}",
        "{\"b\":\"two\",\"n\":{},\"l\":\"s\",\"big\":1}",
        "{\"b\":true,\"n\":null,\"l\":[],\"big\":-0}",
        "{\"b\":1.50,\"n\":{\"\\u00e9\":\"\xc3\xa9\"}}",
    };
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, bodies, 4, &b, &err), SHAPE_OK);
    assert_string_equal(format_of(&b, "b"), "u");
    expect_text(col(&b, "b"), 0, "1");
    expect_text(col(&b, "b"), 1, "two");
    expect_text(col(&b, "b"), 2, "true");
    expect_text(col(&b, "b"), 3, "1.50"); /* numbers exactly as written */
    expect_text(col(&b, "n"), 0, "{\"x\":1,\"y\":[1,2]}");
    expect_text(col(&b, "n"), 1, "{}");
    expect_text(col(&b, "n"), 2, NULL);
    expect_text(col(&b, "n"), 3, "{\"\xc3\xa9\":\"\xc3\xa9\"}");
    expect_text(col(&b, "l"), 0, "[1,2]");
    expect_text(col(&b, "l"), 1, "s");
    assert_string_equal(format_of(&b, "z"), "u"); /* all-null frozen as utf8 */
    expect_text(col(&b, "z"), 0, NULL);
    assert_string_equal(format_of(&b, "big"), "u"); /* beyond int64 */
    expect_text(col(&b, "big"), 0, "12345678901234567890");
    expect_text(col(&b, "big"), 2, "-0");
    release(&b);
    /* Frozen: later non-strings no longer fit a text column. */
    const char *later[] = {"{\"b\":5}", "{\"b\":\"ok\",\"n\":[3]}"};
    assert_int_equal(decode(dec, later, 2, &b, &err), SHAPE_OK);
    assert_int_equal(b.array.length, 1);
    expect_text(col(&b, "n"), 0, "[3]");
    assert_int_equal(shape_decoder_stats(dec)->rejected, 1);
    release(&b);
    shape_decoder_free(dec);
}

static void test_int_limits_in_float_and_int_columns(void **state)
{
    (void)state;
    shape_decoder *dec = decoder(NULL);
    const char *first[] = {"{\"f\":0.5,\"i\":1}"};
    const char *second[] = {"{\"f\":9007199254740993}", "{\"f\":9007199254740992,\"i\":9223372036854775807}",
                            "{\"i\":9223372036854775808}", "{\"i\":-9223372036854775808}",
                            "{\"i\":1e3}", "{\"f\":1e400}"};
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, first, 1, &b, &err), SHAPE_OK);
    release(&b);
    assert_int_equal(decode(dec, second, 6, &b, &err), SHAPE_OK);
    /* 2^53+1 has no exact double; 2^63 is beyond int64: both rejected. */
    assert_int_equal(shape_decoder_stats(dec)->rejected, 2);
    assert_int_equal(b.array.length, 4);
    assert_true(shape_arrow_double_at(col(&b, "f"), 0) == 9007199254740992.0);
    assert_int_equal(shape_arrow_int64_at(col(&b, "i"), 0), INT64_MAX);
    assert_int_equal(shape_arrow_int64_at(col(&b, "i"), 1), INT64_MIN);
    assert_int_equal(shape_arrow_int64_at(col(&b, "i"), 2), 1000);
    assert_true(shape_arrow_double_at(col(&b, "f"), 3) > 1e308); /* infinity, as Python reads it */
    release(&b);
    shape_decoder_free(dec);
}

static void test_duplicate_keys_last_wins(void **state)
{
    (void)state;
    shape_decoder *dec = decoder(NULL);
    const char *bodies[] = {"{\"a\":\"x\",\"a\":\"y\"}", "{\"a\":\"z\"}"};
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, bodies, 2, &b, &err), SHAPE_OK);
    expect_text(col(&b, "a"), 0, "y");
    expect_text(col(&b, "a"), 1, "z");
    release(&b);
    shape_decoder_free(dec);
}

/* One batch of n bodies that must all decode. */
static void decode_ok(shape_decoder *dec, const char *const *bodies, size_t n, batch *b)
{
    shape_err err;
    if (decode(dec, bodies, n, b, &err) != SHAPE_OK) fail_msg("decode: %s", err.message);
    assert_int_equal(b->array.length, (int64_t)n);
}

static void expect_int(const struct ArrowArray *a, int64_t i, int valid, int64_t want)
{
    if (!valid) {
        if (shape_arrow_is_valid(a, i)) fail_msg("row %lld: valid, want null", (long long)i);
        return;
    }
    if (!shape_arrow_is_valid(a, i)) fail_msg("row %lld: null, want %lld", (long long)i, (long long)want);
    assert_int_equal(shape_arrow_int64_at(a, i), want);
}

static void test_predicted_keys_follow_the_body(void **state)
{
    (void)state;
    /* The decoder predicts each key from the one before and matches it in
     * the body; whatever the body does instead — an optional field that
     * comes and goes, another order, an escaped spelling of the predicted
     * key, a key the prediction is a prefix of, an unknown key, a repeated
     * key — the values must land in their own columns, nulls elsewhere. */
    shape_decoder *dec = decoder(NULL);
    const char *first[] = {"{\"id\":0,\"opt\":0,\"name\":\"n0\",\"idx\":0,\"tail\":[0]}"};
    batch b;
    decode_ok(dec, first, 1, &b);
    expect_columns(&b, "id,opt,name,idx,tail,_shape_event_time");
    release(&b);
    enum { N = 60 };
    char text[N][160];
    const char *bodies[N];
    for (int i = 0; i < N; i++) {
        switch (i % 10) {
        case 3: /* another order */
            snprintf(text[i], sizeof text[i], "{\"name\":\"n%d\",\"idx\":%d,\"id\":%d,\"tail\":[%d]}", i, i, i, i);
            break;
        case 5: /* the predicted key escaped, then a key the prediction is a prefix of */
            snprintf(text[i], sizeof text[i], "{\"\\u0069d\":%d,\"opt\":%d,\"name\":\"n%d\",\"idx\":%d,\"tail\":[%d]}", i,
                     i, i, i, i);
            break;
        case 7: /* unknown keys, and a repeated one (the last wins) */
            snprintf(text[i], sizeof text[i],
                     "{\"id\":%d,\"idq\":1,\"name\":\"x\",\"i\":2,\"name\":\"n%d\",\"idx\":%d,\"tail\":[%d]}", i, i, i, i);
            break;
        default: /* opt present one row in three */
            if (i % 3 == 0)
                snprintf(text[i], sizeof text[i], "{\"id\":%d,\"opt\":%d,\"name\":\"n%d\",\"idx\":%d,\"tail\":[%d]}", i, i,
                         i, i, i);
            else
                snprintf(text[i], sizeof text[i], "{\"id\":%d,\"name\":\"n%d\",\"idx\":%d,\"tail\":[%d]}", i, i, i, i);
        }
        bodies[i] = text[i];
    }
    for (int round = 0; round < 2; round++) {
        decode_ok(dec, bodies, N, &b);
        for (int i = 0; i < N; i++) {
            char want[16];
            expect_int(col(&b, "id"), i, 1, i);
            expect_int(col(&b, "idx"), i, 1, i);
            int has_opt = (i % 10 == 5) || (i % 10 != 3 && i % 10 != 7 && i % 3 == 0);
            expect_int(col(&b, "opt"), i, has_opt, i);
            snprintf(want, sizeof want, "n%d", i);
            expect_text(col(&b, "name"), i, want);
            snprintf(want, sizeof want, "[%d]", i);
            expect_text(col(&b, "tail"), i, want);
        }
        release(&b);
    }
    shape_decoder_free(dec);
    /* The same bodies as a first batch: inference predicts keys too. */
    dec = decoder(NULL);
    decode_ok(dec, bodies, N, &b);
    expect_columns(&b, "id,opt,name,idx,tail,idq,i,_shape_event_time");
    for (int i = 0; i < N; i++) {
        char want[16];
        expect_int(col(&b, "id"), i, 1, i);
        expect_int(col(&b, "idx"), i, 1, i);
        expect_int(col(&b, "opt"), i, (i % 10 == 5) || (i % 10 != 3 && i % 10 != 7 && i % 3 == 0), i);
        expect_int(col(&b, "idq"), i, i % 10 == 7, 1);
        snprintf(want, sizeof want, "n%d", i);
        expect_text(col(&b, "name"), i, want);
    }
    release(&b);
    shape_decoder_free(dec);
}

static void test_column_names_that_need_escapes(void **state)
{
    (void)state;
    /* Names with a quote, a backslash or a control byte are never matched
     * in the body as plain text: found by look-up, row after row. */
    shape_decoder *dec = decoder(NULL);
    const char *bodies[] = {
        "{\"a\\\"b\":1,\"c\\\\d\":2,\"e\\nf\":3,\"g\":4}",
        "{\"a\\\"b\":5,\"c\\\\d\":6,\"e\\nf\":7,\"g\":8}",
        "{\"a\\u0022b\":9,\"c\\u005cd\":10,\"e\\u000af\":11,\"g\":12}",
        "{\"g\":16,\"e\\nf\":15,\"c\\\\d\":14,\"a\\\"b\":13}",
    };
    batch b;
    decode_ok(dec, bodies, 4, &b);
    expect_columns(&b, "a\"b,c\\d,e\nf,g,_shape_event_time");
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 4; c++) expect_int(b.array.children[c], i, 1, 4 * i + c + 1);
    release(&b);
    shape_decoder_free(dec);
    /* A name that, as plain bytes, is the start of another member's text:
     * x":" against the body "x":"" must not be taken for a match. */
    dec = decoder(NULL);
    const char *tricky[] = {"{\"x\\\":\\\"\":1,\"x\":\"a\"}", "{\"x\\\":\\\"\":2,\"x\":\"b\"}",
                            "{\"x\":\"\",\"x\\\":\\\"\":3}"};
    decode_ok(dec, tricky, 3, &b);
    expect_columns(&b, "x\":\",x,_shape_event_time");
    expect_int(col(&b, "x\":\""), 2, 1, 3);
    expect_text(col(&b, "x"), 2, "");
    release(&b);
    shape_decoder_free(dec);
}

static void test_more_than_64_columns(void **state)
{
    (void)state;
    /* Beyond 64 payload columns rows end through the checking path: every
     * column a row did not fill is still padded with a null. */
    shape_decoder *dec = decoder(NULL);
    enum { COLS = 70, ROWS = 6 };
    static char text[ROWS][COLS * 16];
    const char *bodies[ROWS];
    for (int r = 0; r < ROWS; r++) {
        size_t w = 0;
        text[r][w++] = '{';
        int first = 1;
        for (int c = 0; c < COLS; c++) {
            if (r > 0 && (c + r) % 5 == 0) continue; /* row 0 has them all */
            w += (size_t)snprintf(text[r] + w, sizeof text[r] - w, "%s\"c%d\":%d", first ? "" : ",", c, r * 100 + c);
            first = 0;
        }
        text[r][w++] = '}';
        text[r][w] = '\0';
        bodies[r] = text[r];
    }
    for (int round = 0; round < 2; round++) {
        batch b;
        decode_ok(dec, bodies, ROWS, &b);
        assert_int_equal(b.schema.n_children, COLS + 1);
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++) expect_int(b.array.children[c], r, !(r > 0 && (c + r) % 5 == 0), r * 100 + c);
        release(&b);
    }
    shape_decoder_free(dec);
}

static void test_event_field_named_like_a_schema_column(void **state)
{
    (void)state;
    /* A given schema may hold a column named like the event-time field:
     * the body's field is the event time, never that column's value, even
     * once the decoder predicts keys. */
    struct ArrowSchema schema;
    shape_err err;
    shape_batch *proto;
    assert_int_equal(shape_batch_new(&proto, &err), SHAPE_OK);
    shape_batch_add_column(proto, "id", 2, SHAPE_TYPE_INT64, NULL, &err);
    shape_batch_add_column(proto, "ts", 2, SHAPE_TYPE_INT64, NULL, &err);
    assert_int_equal(shape_batch_schema(proto, &schema, &err), SHAPE_OK);
    shape_batch_free(proto);
    shape_decode_options o;
    shape_decode_options_init(&o);
    o.event_time_field = "ts";
    shape_decoder *dec;
    assert_int_equal(shape_decoder_new(&o, &schema, &dec, &err), SHAPE_OK);
    schema.release(&schema);
    const char *bodies[] = {"{\"id\":1,\"ts\":1000}", "{\"id\":2,\"ts\":2000}", "{\"id\":3,\"ts\":3000}"};
    for (int round = 0; round < 2; round++) {
        batch b;
        decode_ok(dec, bodies, 3, &b);
        for (int i = 0; i < 3; i++) {
            expect_int(col(&b, "id"), i, 1, i + 1);
            expect_int(col(&b, "ts"), i, 0, 0);
            expect_int(col(&b, "_shape_event_time"), i, 1, (i + 1) * 1000000LL);
        }
        release(&b);
    }
    shape_decoder_free(dec);
}

static void test_metadata_columns(void **state)
{
    (void)state;
    shape_decode_options o;
    shape_decode_options_init(&o);
    o.with_key = o.with_headers = o.with_timestamp = o.with_offsets = 1;
    shape_decoder *dec = decoder(&o);
    shape_header h[] = {{"h", 1, "\xff", 1}, {"n", 1, NULL, 0}};
    shape_message m[2] = {
        {.partition = 3, .offset = 12, .value = "{\"x\":1,\"_shape_key\":\"body\"}", .value_len = 27,
         .has_timestamp = 1, .timestamp_us = 12000, .key = "a", .key_len = 1, .headers = h, .n_headers = 2},
        {.partition = 3, .offset = 13, .value = "{\"x\":2}", .value_len = 7},
    };
    batch b;
    shape_err err;
    assert_int_equal(shape_decoder_decode(dec, m, 2, &b.schema, &b.array, &err), SHAPE_OK);
    expect_columns(&b, "x,_shape_key,_shape_timestamp,_shape_headers,_shape_event_time,_shape_partition,_shape_offset");
    assert_string_equal(format_of(&b, "_shape_key"), "z");
    assert_string_equal(format_of(&b, "_shape_headers"), "+m");
    expect_text(col(&b, "_shape_key"), 0, "a"); /* the real key, not the body's */
    expect_text(col(&b, "_shape_key"), 1, NULL);
    assert_int_equal(shape_arrow_int64_at(col(&b, "_shape_timestamp"), 0), 12000);
    assert_false(shape_arrow_is_valid(col(&b, "_shape_timestamp"), 1));
    const struct ArrowArray *keys, *values;
    int64_t first;
    assert_int_equal(shape_arrow_map_row(col(&b, "_shape_headers"), 0, &keys, &values, &first), 2);
    expect_text(keys, first, "h");
    expect_text(values, first, "\xff");
    expect_text(values, first + 1, NULL);
    assert_int_equal(shape_arrow_map_row(col(&b, "_shape_headers"), 1, &keys, &values, &first), 0);
    expect_text(col(&b, "_shape_partition"), 1, "3");
    assert_int_equal(shape_arrow_int64_at(col(&b, "_shape_offset"), 1), 13);
    release(&b);
    shape_decoder_free(dec);

    /* nested = 0: headers as JSON text, sorted, hex values, the last of a name kept. */
    o.nested = 0;
    o.with_key = o.with_timestamp = o.with_offsets = 0;
    dec = decoder(&o);
    shape_header h2[] = {{"z", 1, "\x01", 1}, {"a\"", 2, NULL, 0}, {"z", 1, "\xff\x10", 2}};
    shape_message m2 = {.value = "{}", .value_len = 2, .headers = h2, .n_headers = 3};
    assert_int_equal(shape_decoder_decode(dec, &m2, 1, &b.schema, &b.array, &err), SHAPE_OK);
    assert_string_equal(format_of(&b, "_shape_headers"), "u");
    expect_text(col(&b, "_shape_headers"), 0, "{\"a\\\"\": null, \"z\": \"ff10\"}");
    release(&b);
    shape_decoder_free(dec);
}

static void test_partition_metadata_only_for_one_partition(void **state)
{
    (void)state;
    shape_decoder *dec = decoder(NULL);
    shape_message m[2] = {{.partition = 1, .value = "{}", .value_len = 2},
                          {.partition = 2, .value = "{}", .value_len = 2}};
    batch b;
    shape_err err;
    assert_int_equal(shape_decoder_decode(dec, m, 2, &b.schema, &b.array, &err), SHAPE_OK);
    const char *p;
    int32_t len;
    assert_int_not_equal(shape_arrow_metadata_find(b.schema.metadata, "shape.partition", &p, &len), 1);
    release(&b);
    assert_int_equal(shape_decoder_decode(dec, m + 1, 1, &b.schema, &b.array, &err), SHAPE_OK);
    assert_int_equal(shape_arrow_metadata_find(b.schema.metadata, "shape.partition", &p, &len), 1);
    assert_memory_equal(p, "2", 1);
    release(&b);
    /* Nothing survives: no batch at all. */
    shape_message bad = {.value = "x", .value_len = 1};
    assert_int_equal(shape_decoder_decode(dec, &bad, 1, &b.schema, &b.array, &err), SHAPE_OK);
    assert_null(b.array.release);
    shape_decoder_free(dec);
}

static void test_given_schema_is_used(void **state)
{
    (void)state;
    struct ArrowSchema schema;
    shape_err err;
    shape_batch *proto;
    assert_int_equal(shape_batch_new(&proto, &err), SHAPE_OK);
    shape_batch_add_column(proto, "id", 2, SHAPE_TYPE_INT64, NULL, &err);
    shape_batch_add_column(proto, "v", 1, SHAPE_TYPE_FLOAT64, NULL, &err);
    shape_batch_add_column(proto, "_shape_event_time", 17, SHAPE_TYPE_UTF8, NULL, &err);
    assert_int_equal(shape_batch_schema(proto, &schema, &err), SHAPE_OK);
    shape_batch_free(proto);
    shape_decoder *dec;
    assert_int_equal(shape_decoder_new(NULL, &schema, &dec, &err), SHAPE_OK);
    schema.release(&schema);
    const char *bodies[] = {"{\"v\":1,\"id\":7,\"extra\":\"x\"}"};
    batch b;
    assert_int_equal(decode(dec, bodies, 1, &b, &err), SHAPE_OK);
    expect_columns(&b, "id,v,_shape_event_time");
    assert_string_equal(format_of(&b, "_shape_event_time"), "tsu:UTC"); /* canonical type kept */
    assert_int_equal(shape_arrow_int64_at(col(&b, "id"), 0), 7);
    release(&b);
    shape_decoder_free(dec);
}

/* Issue 24 item 12: nothing disappears without a counter. A field new since
 * the first batch is dropped and counted per member; a number beyond the
 * double range is kept as infinity and counted when its row is kept. */
static void test_silent_effects_are_counted(void **state)
{
    (void)state;
    shape_decoder *dec = decoder(NULL);
    const char *first[] = {"{\"f\":0.5,\"i\":1}"};
    const char *second[] = {"{\"f\":1.5,\"new\":1,\"other\":2}", "{\"f\":1e400,\"new\":3}",
                            "{\"f\":-1e400,\"i\":true,\"new\":4}", "{\"f\":2.5}"};
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, first, 1, &b, &err), SHAPE_OK);
    release(&b);
    assert_int_equal(shape_decoder_stats(dec)->dropped_fields, 0);
    assert_int_equal(decode(dec, second, 4, &b, &err), SHAPE_OK);
    assert_int_equal(b.array.length, 3); /* the bool in the int column rejects its row */
    const shape_decode_stats *st = shape_decoder_stats(dec);
    assert_int_equal(st->rejected, 1);
    assert_int_equal(st->dropped_fields, 4);    /* new, other; new; new (of the rejected row too) */
    assert_int_equal(st->values_overflowed, 1); /* -1e400 was in the rejected row: not in the batch */
    assert_int_equal(st->columns_over_limit, 0);
    release(&b);
    shape_decoder_free(dec);
}

/* Issue 24 item 9: the first batch creates at most max_columns payload
 * columns (first appearance order); the rest are dropped and counted, or,
 * with on_error = raise, the batch fails naming the limit. */
static void test_max_columns(void **state)
{
    (void)state;
    shape_decode_options o;
    shape_decode_options_init(&o);
    assert_int_equal(o.max_columns, SHAPE_DECODE_MAX_COLUMNS_DEFAULT);
    o.max_columns = 2;
    shape_decoder *dec = decoder(&o);
    const char *bodies[] = {"{\"a\":1,\"b\":2,\"c\":3,\"d\":4}", "{\"d\":5,\"a\":6,\"e\":7}"};
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, bodies, 2, &b, &err), SHAPE_OK);
    expect_columns(&b, "a,b,_shape_event_time");
    assert_int_equal(b.array.length, 2);
    assert_int_equal(shape_decoder_stats(dec)->columns_over_limit, 3); /* c, d, e */
    assert_int_equal(shape_decoder_stats(dec)->dropped_fields, 4);     /* c, d; d, e */
    release(&b);
    shape_decoder_free(dec);

    o.on_error = SHAPE_ON_ERROR_RAISE;
    dec = decoder(&o);
    assert_int_equal(decode(dec, bodies, 2, &b, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "more than the limit of 2 columns"));
    assert_non_null(strstr(err.message, "--max-columns"));
    shape_decoder_free(dec);

    o.on_error = SHAPE_ON_ERROR_SKIP;
    o.max_columns = 0; /* no limit */
    dec = decoder(&o);
    assert_int_equal(decode(dec, bodies, 2, &b, &err), SHAPE_OK);
    expect_columns(&b, "a,b,c,d,e,_shape_event_time");
    assert_int_equal(shape_decoder_stats(dec)->dropped_fields, 0);
    release(&b);
    shape_decoder_free(dec);
}

/* Issue 23 item 1: with grow, a later batch's new fields become columns
 * (after the payload, before the metadata; typed by that batch, mixed kinds
 * stringified there), the batch is decoded again with them, and nothing is
 * dropped; a field only null so far gets no column until it has a value. */
static void test_grow_adds_later_fields(void **state)
{
    (void)state;
    shape_decode_options o;
    shape_decode_options_init(&o);
    o.grow = 1;
    o.with_key = 1;
    shape_decoder *dec = decoder(&o);
    const char *first[] = {"{\"a\":1}"};
    const char *second[] = {"{\"a\":2,\"b\":\"x\",\"n\":null}", "{\"b\":\"y\",\"m\":1,\"a\":3}",
                            "{\"m\":true,\"a\":4}"};
    const char *third[] = {"{\"n\":5,\"a\":5}", "{\"a\":6,\"m\":7}"};
    batch b;
    shape_err err;
    assert_int_equal(decode(dec, first, 1, &b, &err), SHAPE_OK);
    expect_columns(&b, "a,_shape_key,_shape_event_time");
    release(&b);
    assert_int_equal(decode(dec, second, 3, &b, &err), SHAPE_OK);
    expect_columns(&b, "a,b,m,_shape_key,_shape_event_time");
    assert_int_equal(b.array.length, 3);
    assert_string_equal(format_of(&b, "b"), "u");
    assert_int_equal(shape_arrow_int64_at(col(&b, "a"), 2), 4);
    assert_false(shape_arrow_is_valid(col(&b, "b"), 2));
    release(&b);
    assert_int_equal(decode(dec, third, 2, &b, &err), SHAPE_OK);
    expect_columns(&b, "a,b,m,n,_shape_key,_shape_event_time");
    assert_string_equal(format_of(&b, "n"), "l");
    assert_int_equal(shape_arrow_int64_at(col(&b, "n"), 0), 5);
    assert_int_equal(b.array.length, 1); /* m is text now (mixed in the batch that made it): 7 is rejected */
    release(&b);
    const shape_decode_stats *st = shape_decoder_stats(dec);
    assert_int_equal(st->dropped_fields, 0);
    assert_int_equal(st->rejected, 1);
    assert_int_equal(st->rows, 5);
    shape_decoder_free(dec);

    o.grow = 0; /* the default: frozen, the new fields dropped and counted */
    dec = decoder(&o);
    assert_int_equal(decode(dec, first, 1, &b, &err), SHAPE_OK);
    release(&b);
    assert_int_equal(decode(dec, second, 3, &b, &err), SHAPE_OK);
    expect_columns(&b, "a,_shape_key,_shape_event_time");
    release(&b);
    assert_int_equal(shape_decoder_stats(dec)->dropped_fields, 5);
    shape_decoder_free(dec);
}

static void test_option_parsers(void **state)
{
    (void)state;
    int v;
    shape_err err;
    assert_int_equal(shape_time_unit_parse("us", &v, &err), SHAPE_OK);
    assert_int_equal(v, SHAPE_TIME_US);
    assert_int_equal(shape_time_unit_parse("h", &v, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "event_time_unit must be one of ['ms', 's', 'us']");
    assert_int_equal(shape_on_error_parse("raise", &v, &err), SHAPE_OK);
    assert_int_equal(v, SHAPE_ON_ERROR_RAISE);
    assert_int_equal(shape_on_error_parse("ignore", &v, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "on_error must be 'skip' or 'raise'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_types_and_event_time),
        cmocka_unit_test(test_no_broker_time_gives_null),
        cmocka_unit_test(test_event_time_field_and_units),
        cmocka_unit_test(test_undecodable_messages),
        cmocka_unit_test(test_first_batch_freezes_schema),
        cmocka_unit_test(test_rejected_with_raise_names_offset),
        cmocka_unit_test(test_mixed_and_nested_become_text),
        cmocka_unit_test(test_int_limits_in_float_and_int_columns),
        cmocka_unit_test(test_duplicate_keys_last_wins),
        cmocka_unit_test(test_metadata_columns),
        cmocka_unit_test(test_partition_metadata_only_for_one_partition),
        cmocka_unit_test(test_given_schema_is_used),
        cmocka_unit_test(test_option_parsers),
        cmocka_unit_test(test_silent_effects_are_counted),
        cmocka_unit_test(test_max_columns),
        cmocka_unit_test(test_grow_adds_later_fields),
        cmocka_unit_test(test_predicted_keys_follow_the_body),
        cmocka_unit_test(test_column_names_that_need_escapes),
        cmocka_unit_test(test_more_than_64_columns),
        cmocka_unit_test(test_event_field_named_like_a_schema_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

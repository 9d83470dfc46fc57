/* test_profile_document.c — the profile document (shape/profile.h): strict
 * JSON that jansson parses back with duplicates rejected, every documented
 * key per column kind in order, the error models, nulls where a statistic
 * has no value (empty columns, overflowed moments), infinite top values as
 * "inf"/"-inf", invalid UTF-8 repaired, and the number/string spelling of
 * the serializer (Python's repr and json.dumps escapes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_profile_util.h"

static const char *const keys_int[] = {"name", "kind", "count", "null_count", "nan_count", "pos_inf_count",
                                       "neg_inf_count", "finite_count", "min", "max", "mean", "m2", "distinct",
                                       "distinct_exact", "top", "quantiles", "arrow_type", "variance_population",
                                       "variance_sample", "error_models", NULL};
static const char *const keys_bool[] = {"name", "kind", "count", "null_count", "true_count", "false_count",
                                        "arrow_type", "error_models", NULL};
static const char *const keys_text[] = {"name", "kind", "count", "null_count", "distinct", "distinct_exact", "top",
                                        "min", "max", "length", "patterns", "arrow_type", "error_models", NULL};
static const char *const keys_temporal[] = {"name", "kind", "count", "null_count", "distinct", "distinct_exact",
                                            "top", "min", "max", "hour_hist", "dow_hist", "month_hist", "year_hist",
                                            "arrow_type", "error_models", NULL};
static const char *const keys_other[] = {"name", "kind", "count", "null_count", "arrow_type", "error_models", NULL};

/* The object's keys are exactly `want`, in that order. */
static void assert_keys(json_t *obj, const char *const *want)
{
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        if (!want[i]) fail_msg("unexpected key %s", k);
        if (strcmp(k, want[i]) != 0) fail_msg("key %zu is %s, want %s", i, k, want[i]);
        i++;
    }
    if (want[i]) fail_msg("missing key %s", want[i]);
}

static void assert_model(json_t *models, const char *family, const char *algorithm)
{
    static const char *const mkeys[] = {"algorithm", "exact", "confidence", "relative_error", "parameters", NULL};
    json_t *m = json_object_get(models, family);
    if (!m) fail_msg("no error model %s", family);
    assert_keys(m, mkeys);
    assert_string_equal(json_string_value(json_object_get(m, "algorithm")), algorithm);
}

/* Parse text strictly; also scan for the tokens no strict JSON may hold. */
static json_t *parse_strict(const char *text, size_t len)
{
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) fail_msg("not strict JSON: %s at line %d", jerr.text, jerr.line);
    assert_null(strstr(text, "NaN"));
    assert_null(strstr(text, "Infinity"));
    return doc;
}

static void test_full_document(void **state)
{
    (void)state;
    shape_profile *p = tp_new_profile("orders"), *q = tp_new_profile("second");
    tp_profile_rows(p, 0, 3000, 1000);
    tp_profile_rows(q, 0, 10, 10);
    const shape_profile *tables[2] = {p, q};
    char *text = NULL;
    size_t len = 0;
    shape_err err;
    assert_int_equal(shape_profile_document(tables, 2, &text, &len, &err), SHAPE_OK);
    assert_int_equal(strlen(text), len);
    assert_true(text[len - 1] == '\n' && text[len - 2] == '}');
    assert_true(strncmp(text, "{\n  \"schema_version\": 1,\n", 25) == 0);
    for (size_t i = 0; i < len; i++) assert_true((unsigned char)text[i] < 0x80); /* ASCII */
    json_t *doc = parse_strict(text, len);
    static const char *const root[] = {"schema_version", "engine", "shape_version", "mode", "tables", NULL};
    assert_keys(doc, root);
    assert_int_equal(json_integer_value(json_object_get(doc, "schema_version")), 1);
    assert_string_equal(json_string_value(json_object_get(doc, "engine")), "shape-profile-engine");
    assert_string_equal(json_string_value(json_object_get(doc, "mode")), "bounded");
    json_t *tabs = json_object_get(doc, "tables");
    assert_int_equal(json_object_size(tabs), 2);
    json_t *t = json_object_get(tabs, "orders");
    static const char *const tkeys[] = {"name", "rows", "columns", NULL};
    assert_keys(t, tkeys);
    assert_int_equal(json_integer_value(json_object_get(t, "rows")), 3000);
    json_t *cols = json_object_get(t, "columns");
    assert_int_equal(json_array_size(cols), 9);
    for (size_t i = 0; i < json_array_size(cols); i++) {
        json_t *c = json_array_get(cols, i);
        const char *kind = json_string_value(json_object_get(c, "kind"));
        json_t *models = json_object_get(c, "error_models");
        assert_model(models, "counts", "exact");
        if (!strcmp(kind, "int") || !strcmp(kind, "float")) {
            assert_keys(c, keys_int);
            assert_model(models, "cardinality", "hyperloglog");
            assert_model(models, "top", "space-saving");
            assert_model(models, "quantiles", "kll-v2");
            assert_int_equal(json_object_size(models), 4);
            static const char *const qk[] = {"0.0", "0.01", "0.05", "0.25", "0.5", "0.75", "0.95", "0.99", "1.0", NULL};
            assert_keys(json_object_get(c, "quantiles"), qk);
        } else if (!strcmp(kind, "bool")) {
            assert_keys(c, keys_bool);
            assert_int_equal(json_object_size(models), 1);
        } else if (!strcmp(kind, "text")) {
            assert_keys(c, keys_text);
            assert_int_equal(json_object_size(models), 3);
            static const char *const lk[] = {"count", "min", "max", "mean", "p95", "hist", NULL};
            assert_keys(json_object_get(c, "length"), lk);
            static const char *const pk[] = {"email", "uuid", "ssn", "mac", "ipv4", "ipv6", "iban", "postal",
                                             "date", "phone", "currency", "language", NULL};
            assert_keys(json_object_get(c, "patterns"), pk);
        } else if (!strcmp(kind, "temporal")) {
            assert_keys(c, keys_temporal);
            assert_int_equal(json_object_size(models), 3);
        } else {
            assert_string_equal(kind, "other");
            assert_keys(c, keys_other);
        }
    }
    json_t *hll = json_object_get(json_object_get(json_array_get(cols, 0), "error_models"), "cardinality");
    assert_true(json_real_value(json_object_get(hll, "relative_error")) == 1.04 / 128.0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(hll, "parameters"), "registers")), 16384);
    assert_non_null(strstr(text, "\"relative_error\": 0.008125,"));
    json_decref(doc);
    free(text);
    /* two tables with one name are refused */
    tables[1] = p;
    assert_int_equal(shape_profile_document(tables, 2, &text, &len, &err), SHAPE_EINVAL);
    assert_null(text);
    shape_profile_free(p);
    shape_profile_free(q);
}

/* A batch of two columns of doubles. */
static void profile_doubles(shape_profile *p, const double *v, const int *valid, int n)
{
    shape_err err;
    shape_batch *b = NULL;
    shape_column *c = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, "x", 1, SHAPE_TYPE_FLOAT64, &c, &err), SHAPE_OK);
    for (int i = 0; i < n; i++) {
        if (valid[i]) assert_int_equal(shape_column_append_double(c, v[i], &err), SHAPE_OK);
        else assert_int_equal(shape_column_append_null(c, &err), SHAPE_OK);
        assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    }
    tp_update_from(p, b);
}

static void test_nulls_and_non_finite(void **state)
{
    (void)state;
    /* only nulls, NaN and infinities: no finite value */
    shape_profile *p = tp_new_profile("t");
    double v[] = {NAN, INFINITY, INFINITY, -INFINITY, 0, NAN};
    int valid[] = {1, 1, 1, 1, 0, 1};
    profile_doubles(p, v, valid, 6);
    json_t *t = tp_table_json(p);
    json_t *c = tp_column(t, "x");
    assert_int_equal(tp_int(c, "finite_count"), 0);
    assert_int_equal(tp_int(c, "nan_count"), 2);
    const char *nulls[] = {"min", "max", "mean", "m2", "variance_population", "variance_sample"};
    for (int i = 0; i < 6; i++) assert_true(json_is_null(json_object_get(c, nulls[i])));
    assert_int_equal(json_object_size(json_object_get(c, "quantiles")), 0);
    json_t *top = json_object_get(c, "top");
    assert_int_equal(json_array_size(top), 2);
    assert_string_equal(json_string_value(json_array_get(json_array_get(top, 0), 0)), "inf");
    assert_int_equal(json_integer_value(json_array_get(json_array_get(top, 0), 1)), 2);
    assert_string_equal(json_string_value(json_array_get(json_array_get(top, 1), 0)), "-inf");
    double d = tp_num(c, "distinct");
    assert_true(d > 1.99 && d < 2.01); /* ±inf counted, NaN not */
    json_decref(t);
    shape_profile_free(p);

    /* overflowed moments are null; one value: sample variance null */
    p = tp_new_profile("t");
    double big[] = {1e308, -1e308, 1e308, 1e308};
    int ok[] = {1, 1, 1, 1};
    profile_doubles(p, big, ok, 4);
    t = tp_table_json(p);
    c = tp_column(t, "x");
    assert_true(json_is_null(json_object_get(c, "m2")));
    assert_true(json_is_null(json_object_get(c, "variance_population")));
    assert_true(tp_num(c, "max") == 1e308);
    json_decref(t);
    shape_profile_free(p);
    p = tp_new_profile("t");
    profile_doubles(p, (double[]){2.5}, ok, 1);
    t = tp_table_json(p);
    c = tp_column(t, "x");
    assert_true(tp_num(c, "variance_population") == 0.0);
    assert_true(json_is_null(json_object_get(c, "variance_sample")));
    json_decref(t);
    shape_profile_free(p);

    /* all-null columns of every kind */
    p = tp_new_profile("t");
    shape_err err;
    shape_batch *b = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    const shape_type types[] = {SHAPE_TYPE_INT64, SHAPE_TYPE_BOOL, SHAPE_TYPE_UTF8, SHAPE_TYPE_TIMESTAMP_US, SHAPE_TYPE_NULL,
                                SHAPE_TYPE_MAP};
    const char *names[] = {"i", "b", "s", "t", "n", "m"};
    for (int i = 0; i < 6; i++) assert_int_equal(shape_batch_add_column(b, names[i], 1, types[i], NULL, &err), SHAPE_OK);
    for (int r = 0; r < 3; r++) assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    tp_update_from(p, b);
    t = tp_table_json(p);
    for (int i = 0; i < 6; i++) assert_int_equal(tp_int(tp_column(t, names[i]), "null_count"), 3);
    c = tp_column(t, "s");
    assert_true(json_is_null(json_object_get(c, "min")));
    assert_true(tp_num(c, "distinct") == 0.0);
    assert_int_equal(json_array_size(json_object_get(c, "top")), 0);
    static const char *const count_only[] = {"count", NULL};
    assert_keys(json_object_get(c, "length"), count_only);
    assert_int_equal(tp_int(json_object_get(c, "length"), "count"), 0);
    c = tp_column(t, "t");
    assert_true(json_is_null(json_object_get(c, "min")));
    assert_int_equal(json_object_size(json_object_get(c, "year_hist")), 0);
    assert_string_equal(json_string_value(json_object_get(tp_column(t, "n"), "arrow_type")), "null");
    assert_string_equal(json_string_value(json_object_get(tp_column(t, "m"), "arrow_type")), "map<string, binary>");
    assert_string_equal(json_string_value(json_object_get(tp_column(t, "m"), "kind")), "other");
    json_decref(t);
    /* the document of columns with a value (a split's): these all left
     * out, a column with one value kept, and the rest as the full one's */
    shape_profile *u = tp_new_profile("u");
    profile_doubles(u, (double[]){1.5, 0}, (int[]){1, 0}, 2);
    const shape_profile *both[] = {p, u};
    json_t *full = NULL, *valued = NULL;
    assert_int_equal(shape_profile_document_json(both, 2, &full, &err), SHAPE_OK);
    assert_int_equal(shape_profile_document_json_valued(both, 2, &valued, &err), SHAPE_OK);
    json_t *ft = json_object_get(full, "tables"), *vt = json_object_get(valued, "tables");
    assert_int_equal(json_array_size(json_object_get(json_object_get(ft, "t"), "columns")), 6);
    assert_int_equal(json_array_size(json_object_get(json_object_get(vt, "t"), "columns")), 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(vt, "t"), "rows")), 3);
    assert_true(json_equal(json_object_get(ft, "u"), json_object_get(vt, "u")));
    json_decref(full);
    json_decref(valued);
    shape_profile_free(u);
    shape_profile_free(p);
}

static void test_invalid_utf8_and_names(void **state)
{
    (void)state;
    shape_profile *p = tp_new_profile("t\xc3\xa9");
    shape_err err;
    shape_batch *b = NULL;
    shape_column *c = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, "s\"q\n", 4, SHAPE_TYPE_UTF8, &c, &err), SHAPE_OK);
    const char *vals[] = {"ok", "bad\xff", "\xc3", "\xed\xa0\x80" /* surrogate */, "\xf0\x9f\x98\x80"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(shape_column_append_bytes(c, vals[i], strlen(vals[i]), &err), SHAPE_OK);
        assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    }
    tp_update_from(p, b);
    const shape_profile *tables[1] = {p};
    char *text = NULL;
    size_t len;
    assert_int_equal(shape_profile_document(tables, 1, &text, &len, &err), SHAPE_OK);
    json_t *doc = parse_strict(text, len);
    assert_non_null(strstr(text, "\"t\\u00e9\""));
    assert_non_null(strstr(text, "\"s\\\"q\\n\""));
    assert_non_null(strstr(text, "\\ud83d\\ude00")); /* surrogate pair for U+1F600 */
    assert_non_null(strstr(text, "\"bad\\ufffd\""));
    json_t *t = json_object_get(json_object_get(doc, "tables"), "t\xc3\xa9");
    json_t *col = json_array_get(json_object_get(t, "columns"), 0);
    assert_string_equal(json_string_value(json_object_get(col, "max")), "\xf0\x9f\x98\x80");
    json_decref(doc);
    free(text);
    shape_profile_free(p);
}

static void test_number_and_string_spelling(void **state)
{
    (void)state;
    /* Python's repr for floats, json.dumps for the rest */
    const struct {
        double v;
        const char *text;
    } reals[] = {
        {1.0, "1.0"},       {2500.5, "2500.5"},   {0.1, "0.1"},         {1e16, "1e+16"},
        {1e15, "1000000000000000.0"}, {1e-05, "1e-05"}, {0.0001, "0.0001"}, {-0.0, "-0.0"},
        {0.0, "0.0"},       {123456789012345678e3, "1.2345678901234568e+20"}, {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e+308"}, {-1.5e-7, "-1.5e-07"}, {0.008125, "0.008125"},
        {10416666250.0, "10416666250.0"}, {1.0 / 3.0, "0.3333333333333333"},
    };
    shape_err err;
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        json_t *v = json_real(reals[i].v);
        char *out = NULL;
        size_t len;
        assert_int_equal(shape_profile_json_dumps(v, -1, &out, &len, &err), SHAPE_OK);
        if (strcmp(out, reals[i].text)) fail_msg("%.17g printed as %s, want %s", reals[i].v, out, reals[i].text);
        free(out);
        json_decref(v);
    }
    json_t *o = json_pack("{s:[i,i,{}], s:{}, s:[], s:s, s:b, s:n}", "a", 1, -2, "b", "c", "d", "x\\y\t\x01/", "e", 1, "f");
    char *out = NULL;
    size_t len;
    assert_int_equal(shape_profile_json_dumps(o, -1, &out, &len, &err), SHAPE_OK);
    assert_string_equal(out, "{\"a\": [1, -2, {}], \"b\": {}, \"c\": [], \"d\": \"x\\\\y\\t\\u0001/\", \"e\": true, \"f\": null}");
    free(out);
    assert_int_equal(shape_profile_json_dumps(o, 2, &out, &len, &err), SHAPE_OK);
    assert_string_equal(out, "{\n  \"a\": [\n    1,\n    -2,\n    {}\n  ],\n  \"b\": {},\n  \"c\": [],\n"
                             "  \"d\": \"x\\\\y\\t\\u0001/\",\n  \"e\": true,\n  \"f\": null\n}");
    free(out);
    json_decref(o);
}

/* json.dumps's ASCII spelling of a UTF-8 string, one byte at a time (the
 * serializer reads 8 bytes at a time up to the first byte to escape). */
static size_t ref_string(const unsigned char *s, size_t n, char *out)
{
    size_t o = 0;
    out[o++] = '"';
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
            i++;
        } else if (c == '\n' || c == '\t') {
            out[o++] = '\\';
            out[o++] = c == '\n' ? 'n' : 't';
            i++;
        } else if (c < 0x20) {
            o += (size_t)sprintf(out + o, "\\u%04x", c);
            i++;
        } else if (c < 0x80) {
            out[o++] = (char)c;
            i++;
        } else { /* two-byte sequences only, below */
            o += (size_t)sprintf(out + o, "\\u%04x", ((c & 0x1F) << 6) | (s[i + 1] & 0x3F));
            i += 2;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
    return o;
}

static void test_integer_and_long_string_spelling(void **state)
{
    (void)state;
    shape_err err;
    const json_int_t ints[] = {0, 1, -1, 9, 10, 99, 100, -100, 12345678901234LL, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        json_t *v = json_integer(ints[i]);
        char *out = NULL, want[32];
        size_t len;
        assert_int_equal(shape_profile_json_dumps(v, -1, &out, &len, &err), SHAPE_OK);
        snprintf(want, sizeof want, "%lld", (long long)ints[i]);
        assert_string_equal(out, want);
        assert_int_equal(len, strlen(want));
        free(out);
        json_decref(v);
    }
    /* every length up to 40, with each kind of byte to escape at every place */
    static const char *const specials[] = {"\"", "\\", "\n", "\t", "\x01", "\x1f", "\xc3\xa9", "\x7f", "~"};
    for (size_t n = 0; n <= 40; n++)
        for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
            for (size_t at = 0; at <= n; at++) {
                unsigned char text[64];
                size_t len = 0;
                for (size_t i = 0; i < n; i++) {
                    if (i == at) {
                        memcpy(text + len, specials[k], strlen(specials[k]));
                        len += strlen(specials[k]);
                    }
                    text[len++] = (unsigned char)('a' + i % 26);
                }
                if (at == n) {
                    memcpy(text + len, specials[k], strlen(specials[k]));
                    len += strlen(specials[k]);
                }
                json_t *v = json_stringn((const char *)text, len);
                assert_non_null(v);
                char *out = NULL, want[512];
                size_t out_len;
                assert_int_equal(shape_profile_json_dumps(v, -1, &out, &out_len, &err), SHAPE_OK);
                ref_string(text, len, want);
                assert_string_equal(out, want);
                free(out);
                json_decref(v);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_document),
        cmocka_unit_test(test_nulls_and_non_finite),
        cmocka_unit_test(test_invalid_utf8_and_names),
        cmocka_unit_test(test_number_and_string_spelling),
        cmocka_unit_test(test_integer_and_long_string_spelling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

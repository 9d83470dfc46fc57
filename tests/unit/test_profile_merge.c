/* test_profile_merge.c — merging profiles (shape/profile.h): a stream split
 * into 4 parts (cut mid-batch, profiled with different batch sizes, merged in
 * sequence, as a tree, and through saved states) gives the whole stream's
 * exact fields identically, HyperLogLog identically, moments to 1e-12,
 * top values and quantiles within their guarantees; columns one side lacks;
 * refusals leave the destination unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_profile_util.h"

#define ROWS 120000

static const int64_t cuts[5] = {0, 17001, 50000, 50001, ROWS}; /* one part of a single row */
static const int64_t batch_sizes[4] = {4096, 1000, 1, 65536};

static shape_profile *profile_part(int k)
{
    shape_profile *p = tp_new_profile("stream");
    tp_profile_rows(p, cuts[k], cuts[k + 1], batch_sizes[k]);
    return p;
}

static void merge(shape_profile *dst, const shape_profile *src)
{
    shape_err err;
    shape_err_clear(&err);
    if (shape_profile_merge(dst, src, &err) != SHAPE_OK) fail_msg("merge: %s", err.message);
}

static shape_profile *round_trip(shape_profile *p)
{
    uint8_t *data;
    size_t len;
    shape_err err;
    assert_int_equal(shape_profile_state_save(p, &data, &len, &err), SHAPE_OK);
    shape_profile *q = NULL;
    assert_int_equal(shape_profile_state_load(data, len, NULL, &q, &err), SHAPE_OK);
    free(data);
    shape_profile_free(p);
    return q;
}

static int is_moment(const char *k)
{
    return !strcmp(k, "mean") || !strcmp(k, "m2") || !strcmp(k, "variance_population") ||
           !strcmp(k, "variance_sample");
}

/* Exact fields identical; moments to 1e-12; sketches checked elsewhere. */
static void compare_exact(json_t *whole, json_t *merged)
{
    assert_int_equal(tp_int(whole, "rows"), tp_int(merged, "rows"));
    json_t *wc = json_object_get(whole, "columns"), *mc = json_object_get(merged, "columns");
    assert_int_equal(json_array_size(wc), json_array_size(mc));
    for (size_t i = 0; i < json_array_size(wc); i++) {
        json_t *a = json_array_get(wc, i), *b = json_array_get(mc, i);
        assert_int_equal(json_object_size(a), json_object_size(b));
        const char *k;
        json_t *v;
        json_object_foreach(a, k, v)
        {
            json_t *w = json_object_get(b, k);
            assert_non_null(w);
            if (is_moment(k)) {
                if (json_is_null(v)) assert_true(json_is_null(w));
                else if (tp_rel(json_number_value(w), json_number_value(v)) >= 1e-12)
                    fail_msg("%s.%s: %.17g vs %.17g", json_string_value(json_object_get(a, "name")), k,
                             json_number_value(w), json_number_value(v));
            } else if (!strcmp(k, "top") || !strcmp(k, "quantiles")) {
                continue;
            } else if (!json_equal(v, w)) {
                fail_msg("%s.%s differs", json_string_value(json_object_get(a, "name")), k);
            }
        }
    }
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* promo: top within the SpaceSaving bounds; quantiles within 1 % rank */
static void check_sketches(json_t *table)
{
    int64_t counts[64] = {0}, n = 0;
    double *vals = malloc(ROWS * sizeof *vals);
    assert_non_null(vals);
    for (int64_t r = 0; r < ROWS; r++) {
        tp_row o;
        tp_make_row(r, &o);
        if (o.promo_valid) {
            counts[o.promo]++;
            vals[n++] = (double)o.promo;
        }
    }
    json_t *c = tp_column(table, "promo");
    json_t *top = json_object_get(c, "top");
    for (size_t i = 0; i < json_array_size(top); i++) {
        json_t *e = json_array_get(top, i);
        int64_t v = json_integer_value(json_array_get(e, 0)), cnt = json_integer_value(json_array_get(e, 1)),
                err = json_integer_value(json_array_get(e, 2));
        assert_true(cnt >= counts[v] && cnt - err <= counts[v]);
    }
    for (int v = 0; v < 64; v++) {
        if (counts[v] * 64 <= n) continue;
        int found = 0;
        for (size_t i = 0; i < json_array_size(top); i++)
            found |= json_integer_value(json_array_get(json_array_get(top, i), 0)) == v;
        assert_true(found);
    }
    qsort(vals, (size_t)n, sizeof *vals, cmp_double);
    static const char *keys[] = {"0.0", "0.01", "0.05", "0.25", "0.5", "0.75", "0.95", "0.99", "1.0"};
    static const double qs[] = {0.0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0};
    json_t *q = json_object_get(c, "quantiles");
    for (int i = 0; i < 9; i++) {
        double x = tp_num(q, keys[i]);
        int64_t below = 0, upto = 0;
        for (int64_t j = 0; j < n; j++) {
            below += vals[j] < x;
            upto += vals[j] <= x;
        }
        double t = qs[i] * (double)n;
        double e = t < (double)below ? (double)below - t : t > (double)upto ? t - (double)upto : 0;
        assert_true(e / (double)n <= 0.01);
    }
    free(vals);
}

static void test_four_parts(void **state)
{
    (void)state;
    shape_profile *whole = tp_new_profile("stream");
    tp_profile_rows(whole, 0, ROWS, 4096);
    json_t *jw = tp_table_json(whole);

    /* in sequence */
    shape_profile *parts[4];
    for (int k = 0; k < 4; k++) parts[k] = profile_part(k);
    for (int k = 1; k < 4; k++) merge(parts[0], parts[k]);
    json_t *js = tp_table_json(parts[0]);
    compare_exact(jw, js);
    check_sketches(js);
    /* HLL: identical */
    for (size_t i = 0; i < 9; i++) {
        json_t *a = json_array_get(json_object_get(jw, "columns"), i), *b = json_array_get(json_object_get(js, "columns"), i);
        json_t *da = json_object_get(a, "distinct"), *db = json_object_get(b, "distinct");
        if (da || db) assert_true(da && db && json_real_value(da) == json_real_value(db));
    }
    json_decref(js);
    for (int k = 0; k < 4; k++) shape_profile_free(parts[k]);

    /* as a tree, through saved states: (3 + 2) + (1 + 0) */
    for (int k = 0; k < 4; k++) parts[k] = round_trip(profile_part(k));
    merge(parts[3], parts[2]);
    merge(parts[1], parts[0]);
    merge(parts[3], parts[1]);
    parts[3] = round_trip(parts[3]);
    json_t *jt = tp_table_json(parts[3]);
    compare_exact(jw, jt);
    check_sketches(jt);
    json_decref(jt);
    /* the merged state keeps accepting batches like the whole one */
    tp_profile_rows(parts[3], ROWS, ROWS + 5000, 1000);
    tp_profile_rows(whole, ROWS, ROWS + 5000, 1000);
    json_t *a = tp_table_json(whole), *b = tp_table_json(parts[3]);
    compare_exact(a, b);
    json_decref(a);
    json_decref(b);
    for (int k = 0; k < 4; k++) shape_profile_free(parts[k]);
    json_decref(jw);
    shape_profile_free(whole);
}

static void add_int_column_batch(shape_profile *p, const char *name, int64_t rows, int64_t nulls)
{
    shape_err err;
    shape_batch *b = NULL;
    shape_column *c = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, name, strlen(name), SHAPE_TYPE_INT64, &c, &err), SHAPE_OK);
    for (int64_t i = 0; i < rows; i++) {
        if (i < nulls) assert_int_equal(shape_column_append_null(c, &err), SHAPE_OK);
        else assert_int_equal(shape_column_append_int64(c, i, &err), SHAPE_OK);
        assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    }
    tp_update_from(p, b);
}

static void test_columns_one_side_lacks(void **state)
{
    (void)state;
    shape_profile *a = tp_new_profile("s"), *b = tp_new_profile("s");
    add_int_column_batch(a, "x", 10, 2);
    add_int_column_batch(b, "y", 7, 1);
    merge(a, b);
    json_t *t = tp_table_json(a);
    assert_int_equal(tp_int(t, "rows"), 17);
    json_t *x = tp_column(t, "x"), *y = tp_column(t, "y");
    assert_int_equal(tp_int(x, "count"), 17);
    assert_int_equal(tp_int(x, "null_count"), 2 + 7);
    assert_int_equal(tp_int(y, "count"), 17);
    assert_int_equal(tp_int(y, "null_count"), 10 + 1);
    assert_int_equal(tp_int(y, "min"), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(t, "columns"), 1), "name")), "y");
    json_decref(t);
    shape_profile_free(a);
    shape_profile_free(b);
}

static void test_refusals_leave_dst_unchanged(void **state)
{
    (void)state;
    shape_profile *a = tp_new_profile("s"), *b = tp_new_profile("s");
    tp_profile_rows(a, 0, 1000, 500);
    shape_err err;
    shape_batch *bb = NULL;
    shape_column *c = NULL;
    assert_int_equal(shape_batch_new(&bb, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(bb, "new", 3, SHAPE_TYPE_INT64, &c, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(bb, "status", 6, SHAPE_TYPE_INT64, NULL, &err), SHAPE_OK);
    assert_int_equal(shape_batch_end_row(bb, &err), SHAPE_OK);
    struct ArrowSchema s;
    struct ArrowArray arr;
    assert_int_equal(shape_batch_finish(bb, &s, &arr, &err), SHAPE_OK);
    assert_int_equal(shape_profile_update(b, &s, &arr, &err), SHAPE_OK);
    tp_release(&s, &arr);
    shape_batch_free(bb);
    uint8_t *before, *after;
    size_t blen, alen;
    assert_int_equal(shape_profile_state_save(a, &before, &blen, &err), SHAPE_OK);
    shape_err_clear(&err);
    assert_int_equal(shape_profile_merge(a, b, &err), SHAPE_EINVAL); /* status: string vs int64 */
    assert_non_null(strstr(err.message, "'status'"));
    assert_int_equal(shape_profile_merge(a, a, &err), SHAPE_EINVAL);
    assert_int_equal(shape_profile_state_save(a, &after, &alen, &err), SHAPE_OK);
    assert_int_equal(alen, blen);
    assert_memory_equal(after, before, blen);
    free(before);
    free(after);
    shape_profile_free(a);
    shape_profile_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_parts),
        cmocka_unit_test(test_columns_one_side_lacks),
        cmocka_unit_test(test_refusals_leave_dst_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

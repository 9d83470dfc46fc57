/* test_stream_split.c — the library's split over an ArrowArrayStream
 * (shape/stream_split.h): a stream of mixed tables built by hand, split by
 * a field and by a header, gives per table the row count and the exact
 * statistics of profiling that table's rows alone; --max-tables overflow
 * into _other with one warning; refusals. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "shape/stream_split.h"

#define N_ROWS 300

typedef struct row {
    const char *table; /* NULL: no value (null field, no header) */
    int64_t id;
    int has_price;
    double price;
    const char *name; /* NULL: null */
} row;

static row rows[N_ROWS];
static const char *const names[] = {"alice", "bob", "carol", "dave", "eve"};

/* orders carry price, users carry name, events both; runs of 1..12 rows. */
static void make_rows(void)
{
    static const char *const tables[] = {"orders", "users", "events", NULL};
    uint64_t x = 42;
    int i = 0;
    while (i < N_ROWS) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const char *t = tables[(x >> 33) % 4];
        int run = 1 + (int)((x >> 20) % 12);
        for (int k = 0; k < run && i < N_ROWS; k++, i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            row r = {.table = t, .id = (int64_t)((x >> 40) % 1000) - 100};
            int is_o = t && !strcmp(t, "orders"), is_u = t && !strcmp(t, "users"), is_e = t && !strcmp(t, "events");
            if (is_o || is_e || !t) r.has_price = ((x >> 8) & 7) != 0, r.price = (double)((x >> 12) % 10000) / 4.0;
            if (is_u || is_e) r.name = ((x >> 5) & 7) ? names[(x >> 16) % 5] : NULL;
            rows[i] = r;
        }
    }
}

typedef struct producer {
    shape_batch *b;
    shape_column *table, *id, *price, *name, *headers;
    const char *only;  /* rows of this table only ("" : the rows without one); NULL: all */
    int per_batch;     /* rows per batch */
    int next;
} producer;

static int wanted(const producer *p, const row *r)
{
    if (!p->only) return 1;
    if (!p->only[0]) return r->table == NULL;
    return r->table && !strcmp(r->table, p->only);
}

static int produce(void *ctx, struct ArrowArray *out, shape_err *err)
{
    producer *p = ctx;
    int taken = 0;
    while (p->next < N_ROWS && taken < p->per_batch) {
        const row *r = &rows[p->next++];
        if (!wanted(p, r)) continue;
        taken++;
        if (r->table) SHAPE_RETURN_NOT_OK(shape_column_append_bytes(p->table, r->table, strlen(r->table), err));
        else SHAPE_RETURN_NOT_OK(shape_column_append_null(p->table, err));
        SHAPE_RETURN_NOT_OK(shape_column_append_int64(p->id, r->id, err));
        if (r->has_price) SHAPE_RETURN_NOT_OK(shape_column_append_double(p->price, r->price, err));
        else SHAPE_RETURN_NOT_OK(shape_column_append_null(p->price, err));
        if (r->name) SHAPE_RETURN_NOT_OK(shape_column_append_bytes(p->name, r->name, strlen(r->name), err));
        else SHAPE_RETURN_NOT_OK(shape_column_append_null(p->name, err));
        SHAPE_RETURN_NOT_OK(shape_column_map_begin_row(p->headers, err));
        SHAPE_RETURN_NOT_OK(shape_column_map_append(p->headers, "trace", 5, "t1", 2, err));
        if (r->table)
            SHAPE_RETURN_NOT_OK(shape_column_map_append(p->headers, "shape-table", 11, r->table, strlen(r->table), err));
        SHAPE_RETURN_NOT_OK(shape_column_map_end_row(p->headers, err));
        SHAPE_RETURN_NOT_OK(shape_batch_end_row(p->b, err));
    }
    if (!taken) return SHAPE_OK; /* the end */
    return shape_batch_finish(p->b, NULL, out, err);
}

/* A stream of the rows (of `only`, if given) in batches of per_batch. */
static void open_stream(producer *p, const char *only, int per_batch, struct ArrowArrayStream *s)
{
    memset(p, 0, sizeof *p);
    shape_err err;
    assert_int_equal(shape_batch_new(&p->b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(p->b, "_shape_table", 12, SHAPE_TYPE_UTF8, &p->table, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(p->b, "id", 2, SHAPE_TYPE_INT64, &p->id, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(p->b, "price", 5, SHAPE_TYPE_FLOAT64, &p->price, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(p->b, "name", 4, SHAPE_TYPE_UTF8, &p->name, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(p->b, "_shape_headers", 14, SHAPE_TYPE_MAP, &p->headers, &err), SHAPE_OK);
    p->only = only;
    p->per_batch = per_batch;
    struct ArrowSchema schema;
    assert_int_equal(shape_batch_schema(p->b, &schema, &err), SHAPE_OK);
    assert_int_equal(shape_arrow_stream_init(s, &schema, produce, NULL, p, &err), SHAPE_OK);
    schema.release(&schema);
}

static void close_stream(producer *p, struct ArrowArrayStream *s)
{
    s->release(s);
    shape_batch_free(p->b);
}

static json_t *document(const shape_profile *const *tables, size_t n)
{
    char *text;
    size_t len;
    shape_err err;
    assert_int_equal(shape_stream_split_document(tables, n, &text, &len, &err), SHAPE_OK);
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    free(text);
    assert_non_null(doc);
    return doc;
}

static int64_t expected_rows(const char *table)
{
    int64_t n = 0;
    for (int i = 0; i < N_ROWS; i++)
        if (table[0] ? rows[i].table && !strcmp(rows[i].table, table) : !rows[i].table) n++;
    return n;
}

/* Table `table` of the split document equals the profile of its rows alone
 * (one stream of only them, in other batches): rows, the columns it
 * carries, and each column's exact statistics. */
static void check_alone(const json_t *split_doc, const char *table, const char *only, int keep_headers)
{
    producer p;
    struct ArrowArrayStream s;
    open_stream(&p, only, 1000, &s);
    shape_profile *alone;
    shape_err err;
    assert_int_equal(shape_profile_new(table, NULL, &alone, &err), SHAPE_OK);
    struct ArrowSchema schema;
    assert_int_equal(s.get_schema(&s, &schema), 0);
    for (;;) {
        struct ArrowArray a;
        assert_int_equal(s.get_next(&s, &a), 0);
        if (!a.release) break;
        if (keep_headers) {
            assert_int_equal(shape_profile_update(alone, &schema, &a, &err), SHAPE_OK);
        } else { /* without the header map, as the header split's tables see it */
            schema.n_children--;
            a.n_children--;
            assert_int_equal(shape_profile_update(alone, &schema, &a, &err), SHAPE_OK);
            schema.n_children++;
            a.n_children++;
        }
        a.release(&a);
    }
    schema.release(&schema);
    close_stream(&p, &s);
    json_t *want = document((const shape_profile *const *)&alone, 1);
    shape_profile_free(alone);

    const json_t *got_t = json_object_get(json_object_get(split_doc, "tables"), table);
    const json_t *want_t = json_object_get(json_object_get(want, "tables"), table);
    assert_non_null(got_t);
    assert_non_null(want_t);
    assert_int_equal(json_integer_value(json_object_get(got_t, "rows")), expected_rows(only));
    assert_int_equal(json_integer_value(json_object_get(got_t, "rows")),
                     json_integer_value(json_object_get(want_t, "rows")));
    const json_t *gc = json_object_get(got_t, "columns"), *wc = json_object_get(want_t, "columns");
    assert_int_equal(json_array_size(gc), json_array_size(wc));
    static const char *const exact[] = {"name", "kind", "count", "null_count", "nan_count", "finite_count",
                                        "min", "max", "distinct", "distinct_exact", "top", "length", "arrow_type"};
    for (size_t c = 0; c < json_array_size(gc); c++) {
        const json_t *g = json_array_get(gc, c), *w = json_array_get(wc, c);
        for (size_t k = 0; k < sizeof exact / sizeof *exact; k++) {
            const json_t *gv = json_object_get(g, exact[k]), *wv = json_object_get(w, exact[k]);
            if ((gv || wv) && !json_equal(gv, wv)) {
                char *a = json_dumps(gv, JSON_ENCODE_ANY), *b = json_dumps(wv, JSON_ENCODE_ANY);
                fail_msg("table %s column %s: %s is %s split, %s alone", table,
                         json_string_value(json_object_get(g, "name")), exact[k], a ? a : "absent", b ? b : "absent");
            }
        }
        const json_t *gm = json_object_get(g, "mean"), *wm = json_object_get(w, "mean");
        if (gm || wm) assert_true(fabs(json_real_value(gm) - json_real_value(wm)) <= 1e-9 * (1 + fabs(json_real_value(wm))));
    }
    json_decref(want);
}

static void split_and_check(const char *spec, int keep_headers)
{
    producer p;
    struct ArrowArrayStream s;
    open_stream(&p, NULL, 37, &s); /* batches cut through runs */
    shape_split_config cfg = {.split_by = spec, .name = "rest", .max_tables = 100, .keep_headers = keep_headers};
    shape_split_profiles *sp;
    shape_err err;
    assert_int_equal(shape_split_profile_stream(&s, &cfg, NULL, &sp, &err), SHAPE_OK);
    close_stream(&p, &s);
    const shape_profile *const *tables;
    size_t n = shape_split_profiles_tables(sp, &tables);
    assert_int_equal(n, 4);
    /* in order of first row */
    const char *first[4];
    size_t seen = 0;
    for (int i = 0; i < N_ROWS && seen < 4; i++) {
        const char *t = rows[i].table ? rows[i].table : "rest";
        int dup = 0;
        for (size_t j = 0; j < seen; j++) dup |= !strcmp(first[j], t);
        if (!dup) first[seen++] = t;
    }
    for (size_t t = 0; t < n; t++) assert_string_equal(shape_profile_name(tables[t]), first[t]);
    int64_t total = 0;
    for (size_t t = 0; t < n; t++) total += shape_profile_rows(tables[t]);
    assert_int_equal(total, N_ROWS);
    assert_int_equal(shape_split_values(shape_split_profiles_router(sp)), 3);
    assert_false(shape_split_overflowed(shape_split_profiles_router(sp)));
    json_t *doc = document(tables, n);
    check_alone(doc, "orders", "orders", keep_headers);
    check_alone(doc, "users", "users", keep_headers);
    check_alone(doc, "events", "events", keep_headers);
    check_alone(doc, "rest", "", keep_headers);
    /* a table's columns are its own: users carry no price, orders no name */
    const json_t *users = json_object_get(json_object_get(doc, "tables"), "users");
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(users, "columns"), i, c) assert_string_not_equal(json_string_value(json_object_get(c, "name")), "price");
    json_decref(doc);
    shape_split_profiles_free(sp);
}

static void test_field_split(void **state)
{
    (void)state;
    split_and_check("field:_shape_table", 1);
}

static void test_header_split(void **state)
{
    (void)state;
    split_and_check("header:shape-table", 0);
}

static void test_max_tables(void **state)
{
    (void)state;
    producer p;
    struct ArrowArrayStream s;
    open_stream(&p, NULL, 64, &s);
    shape_split_config cfg = {.split_by = "field:_shape_table", .name = "rest", .max_tables = 2};
    shape_split_profiles *sp;
    shape_err err;
    assert_int_equal(shape_split_profile_stream(&s, &cfg, NULL, &sp, &err), SHAPE_OK);
    close_stream(&p, &s);
    shape_split *router = shape_split_profiles_router(sp);
    assert_true(shape_split_overflowed(router));
    assert_int_equal(shape_split_values(router), 2);
    char line[300];
    assert_true(shape_split_warning(router, line, sizeof line));
    assert_non_null(strstr(line, "more than 2 distinct values"));
    assert_false(shape_split_warning(router, line, sizeof line)); /* once */
    const shape_profile *const *tables;
    size_t n = shape_split_profiles_tables(sp, &tables);
    int64_t other = -1, total = 0;
    for (size_t t = 0; t < n; t++) {
        total += shape_profile_rows(tables[t]);
        if (!strcmp(shape_profile_name(tables[t]), "_other")) other = shape_profile_rows(tables[t]);
    }
    assert_int_equal(total, N_ROWS);
    /* the two values seen first have tables, the third value's rows are _other */
    const char *vals[3];
    size_t seen = 0;
    for (int i = 0; i < N_ROWS && seen < 3; i++) {
        if (!rows[i].table) continue;
        int dup = 0;
        for (size_t j = 0; j < seen; j++) dup |= !strcmp(vals[j], rows[i].table);
        if (!dup) vals[seen++] = rows[i].table;
    }
    assert_int_equal(other, expected_rows(vals[2]));
    shape_split_profiles_free(sp);
}

static void test_refusals(void **state)
{
    (void)state;
    shape_split_profiles *sp;
    shape_err err;
    shape_split_config cfg = {.split_by = "column:x", .name = "rest", .max_tables = 100};
    assert_int_equal(shape_split_profiles_new(&cfg, NULL, &sp, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "header:NAME or field:NAME"));
    cfg.split_by = "field:x";
    cfg.max_tables = 0;
    assert_int_equal(shape_split_profiles_new(&cfg, NULL, &sp, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "--max-tables"));
    /* a double column names no table */
    cfg.split_by = "field:price";
    cfg.max_tables = 100;
    producer p;
    struct ArrowArrayStream s;
    open_stream(&p, NULL, 64, &s);
    assert_int_equal(shape_split_profile_stream(&s, &cfg, NULL, &sp, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "field:price"));
    close_stream(&p, &s);
}

int main(void)
{
    make_rows();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_split),
        cmocka_unit_test(test_header_split),
        cmocka_unit_test(test_max_tables),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

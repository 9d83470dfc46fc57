/* test_event_rows.c — flat events as Arrow record batches (src/emit/event_rows.c):
 * the schema (names, formats, nullability) and the values, row for row, of
 * the retail customer and order_line tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shape/event.h"
#include "shape/generate_retail.h"

typedef struct fixture {
    shape_retail *domain;
    shape_retail_table *table;
    shape_event_table et;
    shape_event_rows rows;
} fixture;

static void open_table(fixture *f, size_t table)
{
    shape_err err;
    assert_int_equal(shape_retail_open("small", 42, &f->domain, &err), SHAPE_OK);
    assert_int_equal(shape_retail_table_open_id(f->domain, table, &f->table, &err), SHAPE_OK);
    const shape_gen_column *cols;
    size_t ncols = shape_retail_columns(table, &cols);
    assert_int_equal(shape_event_table_init(&f->et, shape_retail_table_name(table), cols, ncols,
                                            shape_retail_event_time_column(table), &err),
                     SHAPE_OK);
    assert_int_equal(shape_event_rows_init(&f->rows, &f->et, &err), SHAPE_OK);
}

static void close_table(fixture *f)
{
    shape_event_rows_reset(&f->rows);
    shape_retail_table_free(f->table);
    shape_retail_free(f->domain);
}

static void check_field(const struct ArrowSchema *s, const char *name, const char *format, int nullable)
{
    assert_string_equal(s->name, name);
    assert_string_equal(s->format, format);
    assert_int_equal((s->flags & ARROW_FLAG_NULLABLE) != 0, nullable);
}

static void test_schema(void **state)
{
    (void)state;
    fixture f;
    open_table(&f, SHAPE_RETAIL_CUSTOMER);
    const struct ArrowSchema *s = &f.rows.schema;
    assert_string_equal(s->format, "+s");
    assert_int_equal(s->n_children, (int64_t)f.et.ncols + 3);
    for (size_t i = 0; i < f.et.ncols; i++)
        check_field(s->children[i], f.et.cols[i].name,
                    f.et.cols[i].type == SHAPE_GEN_TIMESTAMP_NS ? "tsn:"
                    : f.et.cols[i].type == SHAPE_GEN_STRING    ? "u"
                    : f.et.cols[i].type == SHAPE_GEN_FLOAT64   ? "g"
                    : f.et.cols[i].type == SHAPE_GEN_BOOL      ? "b"
                                                               : "l",
                    f.et.cols[i].nullable);
    check_field(s->children[f.et.ncols], "_shape_table", "u", 0);
    check_field(s->children[f.et.ncols + 1], "_shape_seq", "l", 0);
    check_field(s->children[f.et.ncols + 2], "_shape_event_time", "tsn:",
                f.et.cols[f.et.event_time_col].nullable);
    close_table(&f);
    /* a table without a timestamp column has no _shape_event_time */
    open_table(&f, SHAPE_RETAIL_ORDER_LINE);
    assert_int_equal(f.rows.schema.n_children, (int64_t)f.et.ncols + 2);
    close_table(&f);
}

/* Two batches of rows: every value equals the generator's row. */
static void test_values(void **state)
{
    (void)state;
    fixture f;
    shape_err err;
    static shape_gen_row row;
    open_table(&f, SHAPE_RETAIL_CUSTOMER);
    for (uint64_t start = 0; start < 20; start += 10) {
        for (uint64_t r = start; r < start + 10; r++) {
            assert_int_equal(shape_retail_table_row(f.table, r, &row, &err), SHAPE_OK);
            assert_int_equal(shape_event_rows_append(&f.rows, r, &row, &err), SHAPE_OK);
        }
        struct ArrowArray a;
        assert_int_equal(shape_event_rows_finish(&f.rows, &a, &err), SHAPE_OK);
        assert_int_equal(a.length, 10);
        assert_int_equal(a.n_children, (int64_t)f.et.ncols + 3);
        for (int64_t i = 0; i < 10; i++) {
            uint64_t r = start + (uint64_t)i;
            assert_int_equal(shape_retail_table_row(f.table, r, &row, &err), SHAPE_OK);
            for (size_t c = 0; c < f.et.ncols; c++) {
                const struct ArrowArray *col = a.children[c];
                const shape_gen_value *v = &row.values[c];
                assert_int_equal(shape_arrow_is_valid(col, i), v->kind != SHAPE_GEN_NULL);
                if (v->kind == SHAPE_GEN_STRING) {
                    size_t n;
                    const uint8_t *p = shape_arrow_bytes_at(col, i, &n);
                    assert_int_equal(n, v->len);
                    assert_memory_equal(p, v->v.s, n);
                } else if (v->kind == SHAPE_GEN_INT64 || v->kind == SHAPE_GEN_TIMESTAMP_NS) {
                    assert_int_equal(shape_arrow_int64_at(col, i), v->v.i);
                } else if (v->kind == SHAPE_GEN_FLOAT64) {
                    assert_true(shape_arrow_double_at(col, i) == v->v.f);
                } else if (v->kind == SHAPE_GEN_BOOL) {
                    assert_int_equal(shape_arrow_bool_at(col, i), v->v.b);
                }
            }
            size_t n;
            const uint8_t *t = shape_arrow_bytes_at(a.children[f.et.ncols], i, &n);
            assert_int_equal(n, strlen("customer"));
            assert_memory_equal(t, "customer", n);
            assert_int_equal(shape_arrow_int64_at(a.children[f.et.ncols + 1], i), (int64_t)r);
            assert_int_equal(shape_arrow_int64_at(a.children[f.et.ncols + 2], i),
                             row.values[f.et.event_time_col].v.i);
        }
        a.release(&a);
    }
    close_table(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_schema), cmocka_unit_test(test_values)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

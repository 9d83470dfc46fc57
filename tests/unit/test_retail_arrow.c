/* test_retail_arrow.c — retail rows as Arrow batches (shape_retail_table_batch):
 * same values as the row API, from any start row, with the right types. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shape/arrow.h"
#include "shape/generate_retail.h"

static void check_batch_equals_rows(shape_retail *r, const char *table, uint64_t start, int64_t n)
{
    shape_err err;
    shape_retail_table *t;
    assert_int_equal(shape_retail_table_open(r, table, &t, &err), SHAPE_OK);
    struct ArrowSchema schema;
    struct ArrowArray array;
    assert_int_equal(shape_retail_table_batch(t, start, n, &schema, &array, &err), SHAPE_OK);
    const shape_gen_column *cols;
    size_t ncols = shape_retail_columns(shape_retail_table_id(t), &cols);
    assert_int_equal(schema.n_children, (int64_t)ncols);
    uint64_t rows = shape_retail_table_rows(t);
    int64_t want = rows - start < (uint64_t)n ? (int64_t)(rows - start) : n;
    assert_int_equal(array.length, want);
    shape_gen_row row;
    for (int64_t i = 0; i < array.length; i++) {
        assert_int_equal(shape_retail_table_row(t, start + (uint64_t)i, &row, &err), SHAPE_OK);
        for (size_t c = 0; c < ncols; c++) {
            const struct ArrowArray *a = array.children[c];
            const shape_gen_value *v = &row.values[c];
            assert_string_equal(schema.children[c]->name, cols[c].name);
            if (v->kind == SHAPE_GEN_NULL) {
                assert_false(shape_arrow_is_valid(a, i));
                continue;
            }
            assert_true(shape_arrow_is_valid(a, i));
            switch (v->kind) {
            case SHAPE_GEN_INT64:
                assert_string_equal(schema.children[c]->format, "l");
                assert_int_equal(shape_arrow_int64_at(a, i), v->v.i);
                break;
            case SHAPE_GEN_TIMESTAMP_NS:
                assert_string_equal(schema.children[c]->format, "tsn:UTC");
                assert_int_equal(shape_arrow_int64_at(a, i), v->v.i);
                break;
            case SHAPE_GEN_FLOAT64:
                assert_string_equal(schema.children[c]->format, "g");
                assert_true(shape_arrow_double_at(a, i) == v->v.f);
                break;
            case SHAPE_GEN_STRING: {
                size_t len;
                const uint8_t *p = shape_arrow_bytes_at(a, i, &len);
                assert_int_equal(len, v->len);
                assert_memory_equal(p, v->v.s, len);
                break;
            }
            default:
                assert_int_equal(shape_arrow_bool_at(a, i), v->v.b);
            }
        }
    }
    array.release(&array);
    schema.release(&schema);
    shape_retail_table_free(t);
}

static void test_batches_equal_rows_from_any_start(void **state)
{
    (void)state;
    shape_retail *r;
    shape_err err;
    assert_int_equal(shape_retail_open("small", 42, &r, &err), SHAPE_OK);
    for (size_t t = 0; shape_retail_table_name(t); t++) {
        check_batch_equals_rows(r, shape_retail_table_name(t), 0, 300);
        check_batch_equals_rows(r, shape_retail_table_name(t), shape_retail_rows(r, t) - 7, 300); /* the end */
    }
    check_batch_equals_rows(r, "order_line", 9999, 1000);
    shape_retail_free(r);
}

static void test_bounds(void **state)
{
    (void)state;
    shape_retail *r;
    shape_err err;
    assert_int_equal(shape_retail_open("small", 42, &r, &err), SHAPE_OK);
    shape_retail_table *t;
    assert_int_equal(shape_retail_table_open(r, "store", &t, &err), SHAPE_OK);
    struct ArrowSchema schema;
    struct ArrowArray array;
    assert_int_equal(shape_retail_table_batch(t, 150, 10, &schema, &array, &err), SHAPE_OK);
    assert_int_equal(array.length, 0);
    array.release(&array);
    schema.release(&schema);
    assert_int_equal(shape_retail_table_batch(t, 151, 10, &schema, &array, &err), SHAPE_EINVAL);
    assert_null(array.release);
    shape_retail_table_free(t);
    shape_retail_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_equal_rows_from_any_start),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

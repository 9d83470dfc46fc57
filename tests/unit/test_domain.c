/* test_domain.c — the domain interface (shape/domain.h) and its registry,
 * with retail behind it: the handle must describe exactly what retail's own
 * API says and give exactly its rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shape/domain.h"
#include "shape/generate_retail.h"

static void test_registry(void **state)
{
    (void)state;
    shape_err err;
    const shape_domain_type *t = NULL;
    assert_int_equal(shape_domain_lookup("retail", &t, &err), SHAPE_OK);
    assert_ptr_equal(t, shape_retail_domain_type());
    assert_ptr_equal(shape_domain_builtin(0), t);
    assert_null(shape_domain_builtin(1));
    assert_int_equal(shape_domain_lookup("payments", &t, &err), SHAPE_EINVAL);
    assert_null(t);
    assert_string_equal(err.message, "unknown domain 'payments'; available: retail");
    t = shape_retail_domain_type();
    assert_string_equal(t->default_preset, "small");
    assert_int_equal(t->default_seed, 42);
    assert_true(shape_domain_has_preset(t, "fabric_demo"));
    assert_true(shape_domain_has_preset(t, "xxxl"));
    assert_false(shape_domain_has_preset(t, "huge"));
    assert_false(shape_domain_has_preset(t, NULL));
    for (size_t i = 0; shape_retail_preset_name(i); i++)
        assert_string_equal(t->preset_name(t, i), shape_retail_preset_name(i));
}

static void test_retail_through_the_interface(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d;
    shape_retail *r;
    assert_int_equal(shape_domain_open(shape_retail_domain_type(), NULL, 7, &d, &err), SHAPE_OK);
    assert_int_equal(shape_retail_open("small", 7, &r, &err), SHAPE_OK);
    assert_string_equal(shape_domain_name(d), "retail");
    assert_string_equal(shape_domain_preset(d), "small");
    assert_int_equal(shape_domain_seed(d), 7);
    assert_int_equal(shape_domain_table_count(d), SHAPE_RETAIL_TABLES);
    assert_null(shape_domain_table_at(d, SHAPE_RETAIL_TABLES));
    for (size_t t = 0; t < SHAPE_RETAIL_TABLES; t++) {
        const shape_domain_table *tab = shape_domain_table_at(d, t);
        const shape_gen_column *cols;
        assert_string_equal(tab->name, shape_retail_table_name(t));
        assert_int_equal(tab->ncols, shape_retail_columns(t, &cols));
        assert_ptr_equal(tab->cols, cols);
        assert_int_equal(tab->event_time_col, shape_retail_event_time_column(t));
        assert_int_equal(tab->rows, shape_retail_rows(r, t));
        assert_int_equal(shape_domain_table_find(d, tab->name), (int)t);
        /* the same rows, first and last */
        shape_domain_cursor *c;
        shape_retail_table *rt;
        assert_int_equal(shape_domain_cursor_open(d, t, &c, &err), SHAPE_OK);
        assert_int_equal(shape_retail_table_open_id(r, t, &rt, &err), SHAPE_OK);
        uint64_t probe[] = {0, tab->rows / 2, tab->rows - 1};
        for (size_t i = 0; i < 3; i++) {
            shape_gen_row a, b;
            assert_int_equal(shape_domain_cursor_row(c, probe[i], &a, &err), SHAPE_OK);
            assert_int_equal(shape_retail_table_row(rt, probe[i], &b, &err), SHAPE_OK);
            assert_int_equal(a.ncols, b.ncols);
            for (size_t k = 0; k < a.ncols; k++) {
                assert_int_equal(a.values[k].kind, b.values[k].kind);
                if (a.values[k].kind == SHAPE_GEN_STRING)
                    assert_memory_equal(a.values[k].v.s, b.values[k].v.s, a.values[k].len);
                else if (a.values[k].kind == SHAPE_GEN_FLOAT64)
                    assert_memory_equal(&a.values[k].v.f, &b.values[k].v.f, sizeof(double));
                else if (a.values[k].kind == SHAPE_GEN_BOOL)
                    assert_int_equal(a.values[k].v.b, b.values[k].v.b);
                else if (a.values[k].kind != SHAPE_GEN_NULL)
                    assert_int_equal(a.values[k].v.i, b.values[k].v.i);
            }
        }
        shape_gen_row past;
        assert_int_equal(shape_domain_cursor_row(c, tab->rows, &past, &err), SHAPE_EINVAL);
        shape_domain_cursor_free(c);
        shape_retail_table_free(rt);
    }
    assert_int_equal(shape_domain_table_find(d, "orders"), -1);
    assert_int_equal(shape_domain_column_find(d, SHAPE_RETAIL_ORDER, "customer_id"), 1);
    assert_int_equal(shape_domain_column_find(d, SHAPE_RETAIL_ORDER, "nope"), -1);
    shape_domain_cursor *none;
    assert_int_equal(shape_domain_cursor_open(d, SHAPE_RETAIL_TABLES, &none, &err), SHAPE_ENOTFOUND);
    /* the identity the emit fingerprint has always hashed for retail */
    shape_domain_field f[SHAPE_DOMAIN_MAX_FIELDS];
    assert_int_equal(shape_domain_identity(d, f, SHAPE_DOMAIN_MAX_FIELDS), 4);
    assert_string_equal(f[0].key, "domain");
    assert_string_equal(f[0].text, "retail");
    assert_string_equal(f[1].key, "mode");
    assert_string_equal(f[1].text, "3nf");
    assert_string_equal(f[2].key, "scale");
    assert_string_equal(f[2].text, "small");
    assert_string_equal(f[3].key, "seed");
    assert_null(f[3].text);
    assert_int_equal(f[3].integer, 7);
    assert_int_equal(shape_domain_identity(d, f, 2), 2);
    shape_retail_free(r);
    shape_domain_free(d);
    shape_domain_free(NULL);
}

static void test_unknown_preset(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d = (shape_domain *)&err;
    assert_int_equal(shape_domain_open(shape_retail_domain_type(), "huge", 1, &d, &err), SHAPE_ENOTFOUND);
    assert_null(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_retail_through_the_interface),
        cmocka_unit_test(test_unknown_preset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

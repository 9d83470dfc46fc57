/* test_schema_option.c — the `schema` source option (shape/source.h,
 * src/core/schema_option.c): a frozen column list decodes later batches
 * with the first read's types (a stretch of nulls keeps its int type, an
 * int in a float column becomes a double, a non-integral float in an int
 * column is rejected), and malformed lists are refused naming the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "shape/source.h"

static shape_options *opts(const char *kv)
{
    shape_options *o = shape_options_new();
    shape_err err;
    assert_non_null(o);
    if (kv) assert_int_equal(shape_options_set_kv(o, kv, &err), SHAPE_OK);
    return o;
}

static void test_absent(void **state)
{
    (void)state;
    shape_options *o = opts(NULL);
    struct ArrowSchema s;
    int present = 1;
    shape_err err;
    assert_int_equal(shape_decode_schema_from(o, &s, &present, &err), SHAPE_OK);
    assert_int_equal(present, 0);
    shape_options_free(o);
}

static void test_schema_fixes_types(void **state)
{
    (void)state;
    shape_options *o = opts("schema=[[\"a\",\"l\"],[\"b\",\"g\"],[\"_shape_event_time\",\"tsu:UTC\"]]");
    shape_decoder *dec = NULL;
    shape_err err;
    assert_int_equal(shape_decoder_from_options(o, &dec, &err), SHAPE_OK);
    /* a is all null here (inference alone would make it utf8), b is an int,
     * then a row whose a is 2.5 cannot be an int64 and is rejected. */
    const char *bodies[] = {"{\"a\":null,\"b\":1}", "{\"b\":2,\"c\":\"ignored\"}", "{\"a\":2.5,\"b\":3}"};
    shape_message m[3];
    memset(m, 0, sizeof m);
    for (int i = 0; i < 3; i++) {
        m[i].offset = i;
        m[i].value = bodies[i];
        m[i].value_len = strlen(bodies[i]);
    }
    struct ArrowSchema schema;
    struct ArrowArray array;
    assert_int_equal(shape_decoder_decode(dec, m, 3, &schema, &array, &err), SHAPE_OK);
    assert_int_equal(array.length, 2);
    assert_int_equal(schema.n_children, 3);
    assert_string_equal(schema.children[0]->name, "a");
    assert_string_equal(schema.children[0]->format, "l");
    assert_string_equal(schema.children[1]->format, "g");
    assert_string_equal(schema.children[2]->name, "_shape_event_time");
    assert_int_equal(shape_decoder_stats(dec)->rejected, 1);
    array.release(&array);
    schema.release(&schema);
    shape_decoder_free(dec);
    shape_options_free(o);
}

static void test_refusals(void **state)
{
    (void)state;
    const char *bad[] = {"schema=5", "schema=[[\"a\"]]", "schema=[[\"a\",1]]", "schema=[\"a\"]",
                         "schema=[[\"a\",\"l\"],[\"a\",\"g\"]]", "schema=[[\"a\",\"zz\"]]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        shape_options *o = opts(bad[i]);
        shape_decoder *dec = NULL;
        shape_err err;
        shape_err_clear(&err);
        assert_int_equal(shape_decoder_from_options(o, &dec, &err), SHAPE_EINVAL);
        assert_null(dec);
        assert_non_null(strstr(err.message, "schema"));
        shape_options_free(o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absent),
        cmocka_unit_test(test_schema_fixes_types),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_flat_json.c — the flat JSON event of an Arrow row (registry/flat_json.h,
 * spec-kafka.md §3.4 value rules) for every type the registry formats map.
 * (The scalar writers it uses, dates, times, decimals and uuids, are core's
 * now: their cases moved with them to test_json_write.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "regfmt_arrays.h"
#include "registry/flat_json.h"

/* Render row `row` of a batch and compare with the expected text. */
static void expect_row(const rt_column *cols, int n, int64_t length, int64_t offset, int64_t row,
                       const char *expected)
{
    struct ArrowSchema s;
    struct ArrowArray a;
    rt_batch_make(cols, n, length, offset, &s, &a);
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_kafka_flat_json_row(&s, &a, row, &out, &err);
    if (rc != SHAPE_OK) fail_msg("refused: %s", err.message);
    assert_string_equal(out.data, expected);
    assert_int_equal(out.len, strlen(expected));
    shape_json_buf_reset(&out);
    rt_batch_release(&s, &a);
}

static void test_integers_and_bools(void **state)
{
    (void)state;
    static const int8_t i8[] = {-128, 127};
    static const int16_t i16[] = {-32768, 32767};
    static const int32_t i32[] = {INT32_MIN, INT32_MAX};
    static const int64_t i64[] = {INT64_MIN, INT64_MAX};
    static const uint8_t u8[] = {0, 255};
    static const uint16_t u16[] = {0, 65535};
    static const uint32_t u32[] = {0, 4000000000u};
    static const uint64_t u64[] = {0, UINT64_MAX};
    static const uint8_t flags[] = {0x02}, valid_first[] = {0x01};
    rt_column cols[] = {
        {.name = "a", .format = "c", .values = i8},   {.name = "b", .format = "s", .values = i16},
        {.name = "c", .format = "i", .values = i32},  {.name = "d", .format = "l", .values = i64},
        {.name = "e", .format = "C", .values = u8},   {.name = "f", .format = "S", .values = u16},
        {.name = "g", .format = "I", .values = u32},  {.name = "h", .format = "L", .values = u64},
        {.name = "t", .format = "b", .values = flags},
        {.name = "n", .format = "b", .nullable = 1, .validity = valid_first, .values = flags},
    };
    expect_row(cols, 10, 2, 0, 0,
               "{\"a\":-128,\"b\":-32768,\"c\":-2147483648,\"d\":-9223372036854775808,\"e\":0,"
               "\"f\":0,\"g\":0,\"h\":0,\"t\":false,\"n\":false}");
    expect_row(cols, 10, 2, 0, 1,
               "{\"a\":127,\"b\":32767,\"c\":2147483647,\"d\":9223372036854775807,\"e\":255,"
               "\"f\":65535,\"g\":4000000000,\"h\":18446744073709551615,\"t\":true,\"n\":null}");
}

static void test_floats(void **state)
{
    (void)state;
    static const double f64[] = {2.0, -0.0, 1.5e300, 0.1};
    static const float f32[] = {0.1f, 1.5f, 0.0f, -2.0f};
    static const uint16_t f16[] = {0x3c00, 0xc000, 0x7c00, 0x3555}; /* 1, -2, inf, 0.333251953125 */
    static const double nonfinite[] = {__builtin_nan(""), __builtin_inf(), -__builtin_inf(), 3.14159};
    rt_column cols[] = {
        {.name = "d", .format = "g", .values = f64},
        {.name = "f", .format = "f", .values = f32},
        {.name = "h", .format = "e", .values = f16},
        {.name = "x", .format = "g", .values = nonfinite},
    };
    expect_row(cols, 4, 4, 0, 0, "{\"d\":2.0,\"f\":0.10000000149011612,\"h\":1.0,\"x\":null}");
    expect_row(cols, 4, 4, 0, 1, "{\"d\":-0.0,\"f\":1.5,\"h\":-2.0,\"x\":null}");
    expect_row(cols, 4, 4, 0, 2, "{\"d\":1.5e+300,\"f\":0.0,\"h\":null,\"x\":null}");
    expect_row(cols, 4, 4, 0, 3, "{\"d\":0.1,\"f\":-2.0,\"h\":0.333251953125,\"x\":3.14159}");
}

static void test_strings_and_binary(void **state)
{
    (void)state;
    static const int32_t off[] = {0, 2, 5, 5};
    static const char text[] = "\xc3\xa9" "a\"\n";
    static const int64_t loff[] = {0, 1, 3, 3};
    static const char ltext[] = "xyz";
    static const int32_t boff[] = {0, 1, 3, 3};
    static const uint8_t bin[] = {0xff, 0x00, 0x01};
    static const uint8_t fixed[] = {'a', 'b', 'c', 'd', 'e', 'f'};
    static const uint8_t valid[] = {0x03};
    rt_column cols[] = {
        {.name = "s", .format = "u", .nullable = 1, .validity = valid, .values = off, .data = text},
        {.name = "L", .format = "U", .values = loff, .data = ltext},
        {.name = "b", .format = "z", .values = boff, .data = bin},
        {.name = "B", .format = "Z", .values = loff, .data = bin},
        {.name = "w", .format = "w:2", .values = fixed},
    };
    expect_row(cols, 5, 3, 0, 0, "{\"s\":\"\xc3\xa9\",\"L\":\"x\",\"b\":\"/w==\",\"B\":\"/w==\",\"w\":\"YWI=\"}");
    expect_row(cols, 5, 3, 0, 1,
               "{\"s\":\"a\\\"\\n\",\"L\":\"yz\",\"b\":\"AAE=\",\"B\":\"AAE=\",\"w\":\"Y2Q=\"}");
    expect_row(cols, 5, 3, 0, 2, "{\"s\":null,\"L\":\"\",\"b\":\"\",\"B\":\"\",\"w\":\"ZWY=\"}");
}

static void test_temporal_columns(void **state)
{
    (void)state;
    static const int32_t d32[] = {19675, -1};
    static const int64_t d64[] = {1700000000123LL, -1};
    static const int32_t t_s[] = {45296, 0};
    static const int32_t t_ms[] = {45296789, 1};
    static const int64_t t_us[] = {45296000001LL, 0};
    static const int64_t t_ns[] = {45296123456789LL, 0};
    static const int64_t ts_ns[] = {1700000000123456789LL, -1};
    static const int64_t ts_s[] = {1700000000LL, -1};
    rt_column cols[] = {
        {.name = "d", .format = "tdD", .values = d32}, {.name = "D", .format = "tdm", .values = d64},
        {.name = "a", .format = "tts", .values = t_s}, {.name = "b", .format = "ttm", .values = t_ms},
        {.name = "c", .format = "ttu", .values = t_us}, {.name = "e", .format = "ttn", .values = t_ns},
        {.name = "n", .format = "tsn:", .values = ts_ns},
        {.name = "z", .format = "tss:Europe/Paris", .values = ts_s},
        {.name = "u", .format = "tsn:UTC", .values = ts_ns},
    };
    expect_row(cols, 9, 2, 0, 0,
               "{\"d\":\"2023-11-14\",\"D\":\"2023-11-14\",\"a\":\"12:34:56\",\"b\":\"12:34:56.789\","
               "\"c\":\"12:34:56.000001\",\"e\":\"12:34:56.123456789\","
               "\"n\":\"2023-11-14T22:13:20.123456789\",\"z\":\"2023-11-14T22:13:20Z\","
               "\"u\":\"2023-11-14T22:13:20.123456789Z\"}");
    expect_row(cols, 9, 2, 0, 1,
               "{\"d\":\"1969-12-31\",\"D\":\"1969-12-31\",\"a\":\"00:00:00\",\"b\":\"00:00:00.001\","
               "\"c\":\"00:00:00.000000\",\"e\":\"00:00:00.000000000\","
               "\"n\":\"1969-12-31T23:59:59.999999999\",\"z\":\"1969-12-31T23:59:59Z\","
               "\"u\":\"1969-12-31T23:59:59.999999999Z\"}");
}

static void test_decimal_and_uuid_columns(void **state)
{
    (void)state;
    /* decimal128 little-endian: 1234 and -100025 */
    static const uint64_t d128[] = {1234, 0, (uint64_t)-100025, UINT64_MAX};
    static const int32_t d32[] = {5, -7};
    static const int64_t d64[] = {123456789012LL, 0};
    static uint8_t uuids[32];
    for (int i = 0; i < 32; i++) uuids[i] = (uint8_t)(i * 17);
    rt_column cols[] = {
        {.name = "amount", .format = "d:12,2", .values = d128},
        {.name = "wide", .format = "d:12,2,128", .values = d128},
        {.name = "small", .format = "d:5,1,32", .values = d32},
        {.name = "mid", .format = "d:18,8,64", .values = d64},
        {.name = "id", .format = "w:16", .metadata = rt_uuid_metadata(), .values = uuids},
        {.name = "raw", .format = "w:16", .values = uuids},
    };
    expect_row(cols, 6, 2, 0, 0,
               "{\"amount\":\"12.34\",\"wide\":\"12.34\",\"small\":\"0.5\",\"mid\":\"1234.56789012\","
               "\"id\":\"00112233-4455-6677-8899-aabbccddeeff\",\"raw\":\"ABEiM0RVZneImaq7zN3u/w==\"}");
    expect_row(cols, 6, 2, 0, 1,
               "{\"amount\":\"-1000.25\",\"wide\":\"-1000.25\",\"small\":\"-0.7\",\"mid\":\"0.00000000\","
               "\"id\":\"10213243-5465-7687-98a9-bacbdcedfe0f\",\"raw\":\"ECEyQ1RldoeYqbrL3O3+Dw==\"}");
}

static void test_dictionary_columns(void **state)
{
    (void)state;
    static const int32_t voff[] = {0, 3, 6, 6};
    static const char vtext[] = "redblu";
    static const uint8_t vvalid[] = {0x03}; /* value 2 is null */
    static const int8_t ix8[] = {1, 0, 2, 1};
    static const uint16_t ix16[] = {0, 0, 1, 1};
    static const int64_t ix64[] = {1, 1, 0, 0};
    static const uint8_t ixvalid[] = {0x07}; /* row 3 null */
    static const rt_column values = {.format = "u", .nullable = 1, .validity = vvalid, .values = voff, .data = vtext};
    static const int64_t nums[] = {10, 20};
    static const rt_column numvalues = {.format = "l", .values = nums};
    rt_column cols[] = {
        {.name = "c", .format = "c", .nullable = 1, .validity = ixvalid, .values = ix8,
         .dictionary = &values, .dictionary_length = 3},
        {.name = "s", .format = "S", .values = ix16, .dictionary = &values, .dictionary_length = 3},
        {.name = "n", .format = "l", .values = ix64, .dictionary = &numvalues, .dictionary_length = 2},
    };
    expect_row(cols, 3, 4, 0, 0, "{\"c\":\"blu\",\"s\":\"red\",\"n\":20}");
    expect_row(cols, 3, 4, 0, 1, "{\"c\":\"red\",\"s\":\"red\",\"n\":20}");
    expect_row(cols, 3, 4, 0, 2, "{\"c\":null,\"s\":\"blu\",\"n\":10}");
    expect_row(cols, 3, 4, 0, 3, "{\"c\":null,\"s\":\"blu\",\"n\":10}");
}

static void test_offsets_and_null_type(void **state)
{
    (void)state;
    static const int64_t ids[] = {1, 2, 3, 4};
    static const uint8_t valid[] = {0x0b}; /* row 2 null */
    static const int32_t off[] = {0, 1, 2, 3, 4};
    static const char text[] = "abcd";
    rt_column cols[] = {
        {.name = "id", .format = "l", .nullable = 1, .validity = valid, .values = ids},
        {.name = "nothing", .format = "n", .nullable = 1},
        {.name = "s", .format = "u", .values = off, .data = text, .offset = 1},
    };
    /* struct offset 1: row 0 is physical row 1 of id, 2 of s (its own offset 1) */
    expect_row(cols, 3, 3, 1, 0, "{\"id\":2,\"nothing\":null,\"s\":\"c\"}");
    expect_row(cols, 3, 3, 1, 1, "{\"id\":null,\"nothing\":null,\"s\":\"d\"}");
}

static void test_names_are_escaped(void **state)
{
    (void)state;
    static const int64_t ids[] = {7};
    rt_column cols[] = {{.name = "order \"id\"", .format = "l", .values = ids}};
    expect_row(cols, 1, 1, 0, 0, "{\"order \\\"id\\\"\":7}");
    expect_row(cols, 0, 1, 0, 0, "{}");
}

static void refused(struct ArrowSchema *s, struct ArrowArray *a, const char *message)
{
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    assert_int_equal(shape_json_buf_reserve(&out, 8), 0);
    memcpy(out.data, "keep", 5);
    out.len = 4;
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_kafka_flat_json_row(s, a, 0, &out, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, message);
    assert_int_equal(out.len, 4);
    assert_string_equal(out.data, "keep");
    shape_json_buf_reset(&out);
}

static void test_refuses_unmapped_types(void **state)
{
    (void)state;
    static const int64_t ids[] = {1};
    static const int32_t loff[] = {0, 0};
    rt_column cols[] = {{.name = "id", .format = "l", .values = ids},
                        {.name = "tags", .format = "+l", .values = loff}};
    struct ArrowSchema s;
    struct ArrowArray a;
    rt_batch_make(cols, 2, 1, 0, &s, &a);
    /* give the list its item child (schema only: the renderer refuses first) */
    struct ArrowSchema item = {.format = "u", .name = "item", .flags = ARROW_FLAG_NULLABLE};
    struct ArrowSchema *items[] = {&item};
    s.children[1]->n_children = 1;
    s.children[1]->children = items;
    refused(&s, &a,
            "cannot map column 'tags' of type list<item: string> to a registry format (lists, "
            "structs and maps are not supported); use --event-format json");
    s.children[1]->format = "+s";
    item.name = "x";
    refused(&s, &a,
            "cannot map column 'tags' of type struct<x: string> to a registry format (lists, "
            "structs and maps are not supported); use --event-format json");
    s.children[1]->n_children = 0;
    s.children[1]->children = NULL;
    s.children[1]->format = "tDs";
    refused(&s, &a,
            "cannot map column 'tags' of type duration[s] to a registry format (lists, structs "
            "and maps are not supported); use --event-format json");
    s.children[1]->format = "d:40,2,256";
    refused(&s, &a,
            "cannot map column 'tags' of type decimal256(40, 2) to a registry format (lists, "
            "structs and maps are not supported); use --event-format json");
    rt_batch_release(&s, &a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers_and_bools),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_strings_and_binary),
        cmocka_unit_test(test_temporal_columns),
        cmocka_unit_test(test_decimal_and_uuid_columns),
        cmocka_unit_test(test_dictionary_columns),
        cmocka_unit_test(test_offsets_and_null_type),
        cmocka_unit_test(test_names_are_escaped),
        cmocka_unit_test(test_refuses_unmapped_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

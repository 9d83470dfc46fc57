/* test_regfmt_encode.c — the Avro and Protobuf payload encoders and the
 * JSON Schema payload (registry/formats.h shape_kafka_regfmt_encode), byte for
 * byte against payloads worked out by hand from the Avro and Protobuf
 * encoding rules (spec-kafka.md §4.5–§4.6), and every encode error text.
 * The batch cursor (shape_kafka_regfmt_cursor_encode, the emitter's fast path)
 * must give the same bytes and errors as shape_kafka_regfmt_encode, its
 * reference: every expectation below checks both, and randomized batches
 * of the types the cursor has own steps for compare the two row by row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "regfmt_arrays.h"
#include "registry/formats.h"

/* "01 d8 04" → bytes; returns the count. */
static size_t hex_bytes(const char *hex, uint8_t *out)
{
    size_t n = 0;
    unsigned v;
    int used;
    while (sscanf(hex, " %2x%n", &v, &used) == 1) {
        out[n++] = (uint8_t)v;
        hex += used;
    }
    return n;
}

typedef struct fixture {
    struct ArrowSchema schema;
    struct ArrowArray array;
    shape_kafka_regfmt_codec *codec;
} fixture;

static void fixture_make(fixture *fx, shape_kafka_regfmt f, const rt_column *cols, int n, int64_t length,
                         int64_t offset)
{
    rt_batch_make(cols, n, length, offset, &fx->schema, &fx->array);
    shape_err err;
    shape_err_clear(&err);
    fx->codec = NULL;
    if (shape_kafka_regfmt_codec_new(f, "t", &fx->schema, &fx->codec, &err) != SHAPE_OK)
        fail_msg("codec refused: %s", err.message);
}

static void fixture_free(fixture *fx)
{
    shape_kafka_regfmt_codec_free(fx->codec);
    rt_batch_release(&fx->schema, &fx->array);
}

/* Row `row` through a cursor set to the fixture's batch: must append what
 * shape_kafka_regfmt_encode appends (after the same prefix) with the same outcome. */
static void expect_cursor_agrees(fixture *fx, int64_t row)
{
    shape_json_buf ref = SHAPE_JSON_BUF_INIT, got = SHAPE_JSON_BUF_INIT;
    assert_int_equal(shape_json_buf_reserve(&ref, 3), 0);
    assert_int_equal(shape_json_buf_reserve(&got, 3), 0);
    memcpy(ref.data, "pre", 4);
    memcpy(got.data, "pre", 4);
    ref.len = got.len = 3;
    shape_err ref_err, got_err;
    shape_err_clear(&ref_err);
    shape_err_clear(&got_err);
    shape_kafka_regfmt_cursor *cu = NULL;
    assert_int_equal(shape_kafka_regfmt_cursor_new(fx->codec, &cu, &got_err), SHAPE_OK);
    shape_kafka_regfmt_cursor_set(cu, &fx->array);
    int ref_rc = shape_kafka_regfmt_encode(fx->codec, &fx->array, row, &ref, &ref_err);
    int got_rc = shape_kafka_regfmt_cursor_encode(cu, row, &got, &got_err);
    assert_int_equal(got_rc, ref_rc);
    assert_string_equal(got_err.message, ref_err.message);
    assert_int_equal(got.len, ref.len);
    assert_memory_equal(got.data, ref.data, ref.len);
    shape_kafka_regfmt_cursor_free(cu);
    shape_json_buf_reset(&ref);
    shape_json_buf_reset(&got);
}

/* Encode row `row` after a 3-byte prefix already in the buffer and compare
 * what was appended with the expected bytes (and the cursor with it). */
static void expect_payload(fixture *fx, int64_t row, const char *hex)
{
    uint8_t expected[512];
    size_t n = hex_bytes(hex, expected);
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    assert_int_equal(shape_json_buf_reserve(&out, 3), 0);
    memcpy(out.data, "pre", 4);
    out.len = 3;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_kafka_regfmt_encode(fx->codec, &fx->array, row, &out, &err);
    if (rc != SHAPE_OK) fail_msg("row %lld refused: %s", (long long)row, err.message);
    assert_memory_equal(out.data, "pre", 3);
    if (out.len - 3 != n || memcmp(out.data + 3, expected, n) != 0) {
        char got[1600] = "";
        for (size_t i = 3; i < out.len && strlen(got) < sizeof got - 4; i++)
            sprintf(got + strlen(got), "%02x ", (uint8_t)out.data[i]);
        fail_msg("row %lld: expected %s, got %s", (long long)row, hex, got);
    }
    shape_json_buf_reset(&out);
    expect_cursor_agrees(fx, row);
}

static void expect_text_payload(fixture *fx, int64_t row, const char *text)
{
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_kafka_regfmt_encode(fx->codec, &fx->array, row, &out, &err);
    if (rc != SHAPE_OK) fail_msg("row %lld refused: %s", (long long)row, err.message);
    assert_string_equal(out.data, text);
    shape_json_buf_reset(&out);
}

/* The row is refused with the message and the buffer is left as it was. */
static void expect_encode_error(fixture *fx, int64_t row, const char *message)
{
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    assert_int_equal(shape_json_buf_reserve(&out, 3), 0);
    memcpy(out.data, "pre", 4);
    out.len = 3;
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_kafka_regfmt_encode(fx->codec, &fx->array, row, &out, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, message);
    assert_int_equal(out.len, 3);
    assert_string_equal(out.data, "pre");
    shape_json_buf_reset(&out);
    expect_cursor_agrees(fx, row);
}

/* ---- Avro ------------------------------------------------------------------------- */

static void test_avro_scalars_and_unions(void **state)
{
    (void)state;
    static const int64_t a[] = {-1, 300};
    static const int64_t nv[] = {1, 0};
    static const uint8_t nvalid[] = {0x01};
    static const double f[] = {__builtin_nan(""), 1.5};
    static const int32_t soff[] = {0, 2, 2};
    static const char stext[] = "hi";
    static const uint8_t b[] = {0x01};
    rt_column cols[] = {
        {.name = "a", .format = "l"},
        {.name = "n", .format = "l", .nullable = 1, .validity = nvalid, .values = nv},
        {.name = "f", .format = "g", .values = f},
        {.name = "s", .format = "u", .values = soff, .data = stext},
        {.name = "b", .format = "b", .values = b},
    };
    cols[0].values = a;
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, cols, 5, 2, 0);
    /* a zig-zag(-1) = 01; n branch 1 (02) then zig-zag(1) = 02; f NaN → null
     * branch 00; s length 2 (04) "hi"; b true 01 */
    expect_payload(&fx, 0, "01 02 02 00 04 68 69 01");
    /* a 300 → d8 04; n null → 00; f branch 02 then 1.5 little-endian; s "" → 00; b false 00 */
    expect_payload(&fx, 1, "d8 04 00 02 00 00 00 00 00 00 f8 3f 00 00");
    fixture_free(&fx);
}

static void test_avro_integer_widths(void **state)
{
    (void)state;
    static const int8_t i8[] = {-128};
    static const int16_t i16[] = {-2};
    static const int32_t i32[] = {64};
    static const uint8_t u8[] = {255};
    static const uint16_t u16[] = {1};
    static const uint32_t u32[] = {4000000000u};
    static const uint64_t u64[] = {9223372036854775807ull};
    static const float f32[] = {1.5f};
    static const uint16_t f16[] = {0x3c00};
    rt_column cols[] = {
        {.name = "i8", .format = "c", .values = i8},   {.name = "i16", .format = "s", .values = i16},
        {.name = "i32", .format = "i", .values = i32}, {.name = "u8", .format = "C", .values = u8},
        {.name = "u16", .format = "S", .values = u16}, {.name = "u32", .format = "I", .values = u32},
        {.name = "u64", .format = "L", .values = u64}, {.name = "f32", .format = "f", .values = f32},
        {.name = "f16", .format = "e", .values = f16},
    };
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, cols, 9, 1, 0);
    expect_payload(&fx, 0,
                   "ff 01 "                         /* -128 */
                   "03 "                            /* -2 */
                   "80 01 "                         /* 64 */
                   "fe 03 "                         /* 255 */
                   "02 "                            /* 1 */
                   "80 a0 d9 e6 1d "                /* 4000000000 */
                   "fe ff ff ff ff ff ff ff ff 01 " /* 2^63-1 */
                   "02 00 00 c0 3f "                /* float 1.5, branch 1 */
                   "02 00 00 00 00 00 00 f0 3f");   /* halffloat 1.0 as a double */
    fixture_free(&fx);
}

static void test_avro_uint64_overflow(void **state)
{
    (void)state;
    static const uint64_t n[] = {(1ull << 63) + 5, 7};
    rt_column cols[] = {{.name = "n", .format = "L", .nullable = 1, .values = n}};
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, cols, 1, 2, 0);
    expect_encode_error(&fx, 0, "column 'n' does not fit a long");
    expect_payload(&fx, 1, "02 0e");
    fixture_free(&fx);
    /* Protobuf has a real uint64: the same value encodes (field 1, varint) */
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_PROTOBUF, cols, 1, 2, 0);
    expect_payload(&fx, 0, "08 85 80 80 80 80 80 80 80 80 01");
    fixture_free(&fx);
}

static void test_avro_decimals(void **state)
{
    (void)state;
    /* decimal128 little-endian words: 1234, -100025, 0, -128, 127, 128, -129, -1,
     * 10^37 */
    static const uint64_t d[] = {1234, 0, (uint64_t)-100025, UINT64_MAX, 0, 0,
                                 (uint64_t)-128, UINT64_MAX, 127, 0, 128, 0,
                                 (uint64_t)-129, UINT64_MAX, UINT64_MAX, UINT64_MAX,
                                 0x00f436a000000000ull, 0x0785ee10d5da46d9ull};
    rt_column cols[] = {{.name = "amount", .format = "d:38,2", .values = d}};
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, cols, 1, 9, 0);
    expect_payload(&fx, 0, "04 04 d2");    /* 12.34 → unscaled 1234 → 04 d2 */
    expect_payload(&fx, 1, "06 fe 79 47"); /* -1000.25 → -100025 in 3 bytes */
    expect_payload(&fx, 2, "02 00");       /* 0.00 → one byte */
    expect_payload(&fx, 3, "02 80");       /* -128 fits one byte */
    expect_payload(&fx, 4, "02 7f");
    expect_payload(&fx, 5, "04 00 80");    /* 128 needs a sign byte */
    expect_payload(&fx, 6, "04 ff 7f");    /* -129 */
    expect_payload(&fx, 7, "02 ff");       /* -1 */
    /* 10^37 = 0x0785ee10d5da46d9_00f436a000000000: all 16 bytes (length 20) */
    expect_payload(&fx, 8, "20 07 85 ee 10 d5 da 46 d9 00 f4 36 a0 00 00 00 00");
    fixture_free(&fx);

    static const int64_t narrow[] = {12345, 9999, -9999, -10000};
    rt_column small[] = {{.name = "amount", .format = "d:4,2,64", .nullable = 1, .values = narrow}};
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, small, 1, 4, 0);
    expect_encode_error(&fx, 0, "column 'amount' exceeds precision 4");
    expect_payload(&fx, 1, "02 04 27 0f");
    expect_payload(&fx, 2, "02 04 d8 f1");
    expect_encode_error(&fx, 3, "column 'amount' exceeds precision 4");
    fixture_free(&fx);
}

static void test_avro_temporal_values(void **state)
{
    (void)state;
    static const int32_t date32[] = {19675};
    static const int64_t date64[] = {-1};
    static const int32_t t_s[] = {45296};
    static const int64_t t_ns[] = {45296123456789LL};
    static const int64_t ts_ns[] = {1700000000123456789LL};
    static const int64_t ts_s[] = {1700000000LL};
    static const int64_t ts_before[] = {-1};
    rt_column cols[] = {
        {.name = "d", .format = "tdD", .values = date32},
        {.name = "D", .format = "tdm", .values = date64},
        {.name = "a", .format = "tts", .values = t_s},
        {.name = "b", .format = "ttn", .values = t_ns},
        {.name = "n", .format = "tsn:", .values = ts_ns},
        {.name = "z", .format = "tss:UTC", .values = ts_s},
        {.name = "p", .format = "tsn:UTC", .values = ts_before},
    };
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, cols, 7, 1, 0);
    expect_payload(&fx, 0,
                   "b6 b3 02 "                /* date 19675 */
                   "01 "                      /* date64 -1 ms → day -1 */
                   "80 a6 99 2b "             /* time-millis 45296000 */
                   "80 f9 df bd d1 02 "       /* time-micros 45296123456 (ns cut) */
                   "80 89 81 82 83 89 85 06 " /* local-timestamp-micros 1700000000123456 */
                   "80 a0 ab fe f9 62 "       /* timestamp-millis 1700000000000 */
                   "01");                     /* -1 ns floors to -1 µs */
    fixture_free(&fx);
}

static void test_avro_null_required_and_null_type(void **state)
{
    (void)state;
    static const int64_t v[] = {5, 0};
    static const uint8_t valid[] = {0x01};
    rt_column cols[] = {
        {.name = "nothing", .format = "n", .nullable = 1},
        {.name = "_shape_seq", .format = "l", .nullable = 1, .validity = valid, .values = v},
    };
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, cols, 2, 2, 0);
    expect_payload(&fx, 0, "0a"); /* the null column writes nothing; _shape_seq is no union */
    expect_encode_error(&fx, 1, "column '_shape_seq' is null but required");
    fixture_free(&fx);
}

static void test_avro_strings_binary_uuid_dictionary(void **state)
{
    (void)state;
    static const int64_t loff[] = {0, 3};
    static const char text[] = "abc";
    static const int32_t boff[] = {0, 2};
    static const uint8_t bin[] = {0x00, 0xff};
    static const uint8_t fixed[] = {1, 2, 3};
    static uint8_t uuid[16];
    for (int i = 0; i < 16; i++) uuid[i] = (uint8_t)(i * 17);
    static const int32_t voff[] = {0, 3, 6};
    static const char vtext[] = "redblu";
    static const rt_column values = {.format = "u", .values = voff, .data = vtext};
    static const int16_t ix[] = {1};
    rt_column cols[] = {
        {.name = "L", .format = "U", .values = loff, .data = text},
        {.name = "b", .format = "z", .values = boff, .data = bin},
        {.name = "w", .format = "w:3", .values = fixed},
        {.name = "id", .format = "w:16", .metadata = rt_uuid_metadata(), .values = uuid},
        {.name = "colour", .format = "s", .nullable = 1, .values = ix, .dictionary = &values,
         .dictionary_length = 2},
    };
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, cols, 5, 1, 0);
    expect_payload(&fx, 0,
                   "06 61 62 63 "  /* "abc" */
                   "04 00 ff "     /* 2 bytes */
                   "06 01 02 03 "  /* fixed as bytes */
                   "48 30 30 31 31 32 32 33 33 2d 34 34 35 35 2d 36 36 37 37 2d 38 38 39 39 2d "
                   "61 61 62 62 63 63 64 64 65 65 66 66 " /* 36 chars of uuid text */
                   "02 06 62 6c 75"); /* dictionary value "blu", branch 1 */
    fixture_free(&fx);
}

static void test_avro_struct_offset(void **state)
{
    (void)state;
    static const int64_t v[] = {1, 2, 3};
    rt_column cols[] = {{.name = "v", .format = "l", .values = v}};
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, cols, 1, 2, 1);
    expect_payload(&fx, 0, "04");
    expect_payload(&fx, 1, "06");
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_kafka_regfmt_encode(fx.codec, &fx.array, 2, &out, &err), SHAPE_EINVAL);
    assert_int_equal(out.len, 0);
    shape_json_buf_reset(&out);
    expect_cursor_agrees(&fx, 2);
    expect_cursor_agrees(&fx, -1);
    fixture_free(&fx);
}

/* ---- the cursor against shape_kafka_regfmt_encode ------------------------------------------ */

#define RAND_ROWS 400
#define RAND_OFFSET 3 /* the struct's offset; the children have their own too */

static uint64_t rand_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rand_next(void)
{
    rand_state ^= rand_state << 13;
    rand_state ^= rand_state >> 7;
    rand_state ^= rand_state << 17;
    return rand_state;
}

/* Buffers of one random batch: every type the cursor has a step for, each
 * nullable and not, children at offsets 0 and 2, plus a decimal and a
 * dictionary column (the per-column path) in between. */
typedef struct rand_batch {
    int64_t longs[RAND_OFFSET + RAND_ROWS + 2], times[RAND_OFFSET + RAND_ROWS + 2];
    double doubles[RAND_OFFSET + RAND_ROWS + 2];
    int32_t offsets[RAND_OFFSET + RAND_ROWS + 3];
    char text[(RAND_OFFSET + RAND_ROWS + 2) * 40];
    uint8_t bools[64], valid[64], all_valid[64];
    int32_t decimals[RAND_OFFSET + RAND_ROWS + 2];
    int8_t indexes[RAND_OFFSET + RAND_ROWS + 2];
} rand_batch;

static void rand_fill(rand_batch *b)
{
    const int n = RAND_OFFSET + RAND_ROWS + 2;
    int32_t at = 0;
    b->offsets[0] = 0;
    for (int i = 0; i < n; i++) {
        uint64_t r = rand_next();
        switch (r % 5) { /* small, negative, large, extremes */
        case 0: b->longs[i] = (int64_t)(r >> 58); break;
        case 1: b->longs[i] = -(int64_t)(r >> 40); break;
        case 2: b->longs[i] = (int64_t)(r >> 1); break;
        case 3: b->longs[i] = (r & 32) ? INT64_MIN : INT64_MAX; break;
        default: b->longs[i] = (int64_t)r; break;
        }
        b->times[i] = (int64_t)(rand_next() >> 2) * ((r & 64) ? -1 : 1); /* ns both sides of 1970 */
        if ((r & 7) == 0) b->times[i] = -(int64_t)(r % 2001); /* near 0: floor vs truncation */
        uint64_t bits = rand_next();
        memcpy(&b->doubles[i], &bits, 8); /* any bits: NaN and infinities included */
        if (r & 128) b->doubles[i] = (double)(int64_t)(r >> 20) / 7.0;
        int len = (int)(rand_next() % 40); /* short copies and the memcpy path */
        for (int k = 0; k < len; k++) b->text[at + k] = (char)('a' + rand_next() % 26);
        at += len;
        b->offsets[i + 1] = at;
        b->decimals[i] = (int32_t)(rand_next() % 2000001) - 1000000;
        b->indexes[i] = (int8_t)(rand_next() % 3);
    }
    for (int i = 0; i < 64; i++) {
        b->bools[i] = (uint8_t)rand_next();
        b->valid[i] = (uint8_t)(rand_next() | rand_next()); /* about 1 in 4 null */
        b->all_valid[i] = 0xff;
    }
}

static void test_cursor_matches_encode_on_random_batches(void **state)
{
    (void)state;
    static rand_batch b;
    static const int32_t dict_off[] = {0, 3, 3, 8};
    static const rt_column dict = {.format = "u", .values = dict_off, .data = "redgreen"};
    for (int round = 0; round < 8; round++) {
        rand_fill(&b);
        rt_column cols[] = {
            {.name = "l", .format = "l", .values = b.longs},
            {.name = "ln", .format = "l", .nullable = 1, .validity = b.valid, .values = b.longs, .offset = 2},
            {.name = "tn", .format = "tsn:", .values = b.times},
            {.name = "tnz", .format = "tsn:UTC", .nullable = 1, .validity = b.valid, .values = b.times,
             .offset = 1},
            {.name = "tu", .format = "tsu:", .nullable = 1, .validity = b.valid, .values = b.longs},
            {.name = "t64", .format = "ttn", .values = b.times, .offset = 2},
            {.name = "t64u", .format = "ttu", .nullable = 1, .validity = b.valid, .values = b.longs},
            {.name = "s", .format = "u", .values = b.offsets, .data = b.text},
            {.name = "sn", .format = "u", .nullable = 1, .validity = b.valid, .values = b.offsets,
             .data = b.text, .offset = 1},
            {.name = "bin", .format = "z", .nullable = 1, .validity = b.valid, .values = b.offsets,
             .data = b.text, .offset = 2},
            {.name = "dec", .format = "d:7,2,32", .nullable = 1, .validity = b.valid, .values = b.decimals},
            {.name = "d", .format = "g", .values = b.doubles},
            {.name = "dn", .format = "g", .nullable = 1, .validity = b.valid, .values = b.doubles, .offset = 2},
            {.name = "colour", .format = "c", .nullable = 1, .validity = b.valid, .values = b.indexes,
             .dictionary = &dict, .dictionary_length = 3},
            {.name = "b", .format = "b", .values = b.bools},
            {.name = "bn", .format = "b", .nullable = 1, .validity = b.valid, .values = b.bools, .offset = 1},
            {.name = "_shape_seq", .format = "l", .validity = round & 1 ? b.valid : b.all_valid,
             .values = b.longs},
        };
        int ncols = (int)(sizeof cols / sizeof cols[0]);
        fixture fx;
        fixture_make(&fx, SHAPE_KAFKA_REGFMT_AVRO, cols, ncols, RAND_ROWS, RAND_OFFSET);
        /* every row into one growing buffer, as the emitter's arena */
        shape_json_buf ref = SHAPE_JSON_BUF_INIT, got = SHAPE_JSON_BUF_INIT;
        shape_kafka_regfmt_cursor *cu = NULL;
        shape_err ref_err, got_err;
        shape_err_clear(&ref_err);
        shape_err_clear(&got_err);
        assert_int_equal(shape_kafka_regfmt_cursor_new(fx.codec, &cu, &got_err), SHAPE_OK);
        shape_kafka_regfmt_cursor_set(cu, &fx.array);
        int refused = 0;
        for (int64_t row = 0; row < RAND_ROWS; row++) {
            int ref_rc = shape_kafka_regfmt_encode(fx.codec, &fx.array, row, &ref, &ref_err);
            int got_rc = shape_kafka_regfmt_cursor_encode(cu, row, &got, &got_err);
            assert_int_equal(got_rc, ref_rc);
            if (ref_rc != SHAPE_OK) {
                refused++;
                assert_string_equal(got_err.message, ref_err.message);
            }
            assert_int_equal(got.len, ref.len);
            assert_memory_equal(got.data, ref.data, ref.len);
        }
        /* odd rounds make _shape_seq null now and then: refused rows */
        if (round & 1) assert_true(refused > 0);
        else assert_int_equal(refused, 0);
        shape_kafka_regfmt_cursor_free(cu);
        shape_json_buf_reset(&ref);
        shape_json_buf_reset(&got);
        fixture_free(&fx);
    }
}

/* The emitter reuses one ArrowArray struct for the next batch: a cursor set
 * again follows the new buffers; for Protobuf it is shape_kafka_regfmt_encode. */
static void test_cursor_set_again_and_other_formats(void **state)
{
    (void)state;
    static const int64_t first[] = {1, 2}, second[] = {-3, 400};
    static const int32_t off1[] = {0, 1, 3}, off2[] = {0, 4, 4};
    rt_column cols[] = {
        {.name = "v", .format = "l", .values = first},
        {.name = "s", .format = "u", .values = off1, .data = "abc"},
    };
    const shape_kafka_regfmt formats[] = {SHAPE_KAFKA_REGFMT_AVRO, SHAPE_KAFKA_REGFMT_PROTOBUF, SHAPE_KAFKA_REGFMT_JSON_SCHEMA};
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        fixture fx;
        fixture_make(&fx, formats[f], cols, 2, 2, 0);
        shape_kafka_regfmt_cursor *cu = NULL;
        shape_err err;
        shape_err_clear(&err);
        assert_int_equal(shape_kafka_regfmt_cursor_new(fx.codec, &cu, &err), SHAPE_OK);
        shape_kafka_regfmt_cursor_set(cu, &fx.array);
        for (int pass = 0; pass < 2; pass++) {
            for (int64_t row = 0; row < 2; row++) {
                shape_json_buf ref = SHAPE_JSON_BUF_INIT, got = SHAPE_JSON_BUF_INIT;
                assert_int_equal(shape_kafka_regfmt_encode(fx.codec, &fx.array, row, &ref, &err), SHAPE_OK);
                assert_int_equal(shape_kafka_regfmt_cursor_encode(cu, row, &got, &err), SHAPE_OK);
                assert_int_equal(got.len, ref.len);
                assert_memory_equal(got.data, ref.data, ref.len);
                shape_json_buf_reset(&ref);
                shape_json_buf_reset(&got);
            }
            /* the next batch in the same struct */
            fx.array.children[0]->buffers[1] = second;
            fx.array.children[1]->buffers[1] = off2;
            fx.array.children[1]->buffers[2] = "wxyz";
            shape_kafka_regfmt_cursor_set(cu, &fx.array);
        }
        shape_kafka_regfmt_cursor_free(cu);
        fixture_free(&fx);
    }
}

/* ---- Protobuf ------------------------------------------------------------------------ */

static void test_protobuf_presence_rules(void **state)
{
    (void)state;
    static const int64_t a[] = {0, 7};
    static const int64_t n[] = {0, 0};
    static const uint8_t nvalid[] = {0x01};
    static const uint8_t flags[] = {0x02};
    static const int32_t soff[] = {0, 0, 2};
    static const char stext[] = "hi";
    static const int32_t i32[] = {0, -1};
    rt_column cols[] = {
        {.name = "a", .format = "l", .values = a},                                    /* 1 */
        {.name = "n", .format = "l", .nullable = 1, .validity = nvalid, .values = n}, /* 2 */
        {.name = "b", .format = "b", .values = flags},                                /* 3 */
        {.name = "s", .format = "u", .values = soff, .data = stext},                  /* 4 */
        {.name = "i", .format = "i", .values = i32},                                  /* 5 */
    };
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_PROTOBUF, cols, 5, 2, 0);
    /* row 0: a = 0, b = false, s = "", i = 0 are defaults of unlabelled
     * fields (not written); optional n = 0 is written (field 2 varint) */
    expect_payload(&fx, 0, "10 00");
    /* row 1: a 7; n null (absent); b true; s "hi"; i -1 sign-extended */
    expect_payload(&fx, 1, "08 07 18 01 22 02 68 69 28 ff ff ff ff ff ff ff ff ff 01");
    fixture_free(&fx);
}

static void test_protobuf_null_in_required(void **state)
{
    (void)state;
    static const int64_t a[] = {1};
    static const uint8_t none[] = {0x00};
    rt_column cols[] = {{.name = "opt", .format = "l", .nullable = 1, .validity = none, .values = a},
                        {.name = "a", .format = "l", .validity = none, .values = a}};
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_PROTOBUF, cols, 2, 1, 0);
    expect_encode_error(&fx, 0, "column 'a' is null but required");
    fixture_free(&fx);
}

static void test_protobuf_floats_and_wire_types(void **state)
{
    (void)state;
    static const float f[] = {1.5f, __builtin_inff(), 0.0f};
    static const double d[] = {1.5, __builtin_nan(""), -0.0};
    static const int32_t boff[] = {0, 2, 2, 2};
    static const uint8_t bin[] = {0x00, 0xff};
    static const uint64_t dec[] = {1234, 0, 0, 0, (uint64_t)-5, UINT64_MAX};
    static const uint8_t valid[] = {0x05};
    rt_column cols[] = {
        {.name = "f", .format = "f", .values = f},
        {.name = "d", .format = "g", .values = d},
        {.name = "b", .format = "z", .nullable = 1, .validity = valid, .values = boff, .data = bin},
        {.name = "amount", .format = "d:12,2", .values = dec},
    };
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_PROTOBUF, cols, 4, 3, 0);
    /* f field 1 wire 5 (0d); d field 2 wire 1 (11); b field 3 wire 2 (1a);
     * amount field 4 wire 2 (22) as text */
    expect_payload(&fx, 0, "0d 00 00 c0 3f 11 00 00 00 00 00 00 f8 3f 1a 02 00 ff 22 05 31 32 2e 33 34");
    /* non-finite floats are left out; b null is absent; amount "0.00" */
    expect_payload(&fx, 1, "22 04 30 2e 30 30");
    /* optional zeros are written; b present and empty; amount "-0.05" */
    expect_payload(&fx, 2, "0d 00 00 00 00 11 00 00 00 00 00 00 00 80 1a 00 22 05 2d 30 2e 30 35");
    fixture_free(&fx);
}

static void test_protobuf_temporal_uuid_dictionary(void **state)
{
    (void)state;
    static const int32_t date32[] = {-1};
    static const int32_t t_s[] = {45296};
    static const int64_t ts_ns[] = {1700000000123456789LL};
    static const int64_t ts_s[] = {1700000000LL};
    static uint8_t uuid[16];
    for (int i = 0; i < 16; i++) uuid[i] = (uint8_t)(i * 17);
    static const int64_t nums[] = {10, 20};
    static const rt_column values = {.format = "l", .values = nums};
    static const uint8_t ix[] = {1};
    rt_column cols[] = {
        {.name = "d", .format = "tdD", .values = date32},
        {.name = "a", .format = "tts", .values = t_s},
        {.name = "n", .format = "tsn:", .values = ts_ns},
        {.name = "z", .format = "tss:UTC", .values = ts_s},
        {.name = "id", .format = "w:16", .metadata = rt_uuid_metadata(), .values = uuid},
        {.name = "k", .format = "C", .values = ix, .dictionary = &values, .dictionary_length = 2},
    };
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_PROTOBUF, cols, 6, 1, 0);
    expect_payload(&fx, 0,
                   "08 ff ff ff ff ff ff ff ff ff 01 " /* date -1 as int32 */
                   "10 80 b8 e8 de a8 01 "             /* 45296 s → 45296000000 µs */
                   "18 c0 c4 80 c1 c1 c4 82 03 "       /* ns cut to 1700000000123456 µs */
                   "20 80 80 f9 c0 c1 c4 82 03 "       /* 1700000000 s in µs */
                   "2a 24 30 30 31 31 32 32 33 33 2d 34 34 35 35 2d 36 36 37 37 2d 38 38 39 39 2d "
                   "61 61 62 62 63 63 64 64 65 65 66 66 " /* uuid text */
                   "30 14");                              /* dictionary value 20 */
    fixture_free(&fx);
}

static void test_protobuf_two_byte_tags(void **state)
{
    (void)state;
    static const int64_t one[] = {1};
    rt_column cols[17];
    char names[17][8];
    for (int i = 0; i < 17; i++) {
        snprintf(names[i], sizeof names[i], "c%d", i + 1);
        cols[i] = (rt_column){.name = names[i], .format = "l", .values = one};
    }
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_PROTOBUF, cols, 17, 1, 0);
    /* fields 1..15 take one key byte (n << 3), 16 and 17 two: 80 01, 88 01 */
    expect_payload(&fx, 0,
                   "08 01 10 01 18 01 20 01 28 01 30 01 38 01 40 01 48 01 50 01 58 01 60 01 68 01 "
                   "70 01 78 01 80 01 01 88 01 01");
    fixture_free(&fx);
}

static void test_protobuf_skips_poison_in_numbering(void **state)
{
    (void)state;
    static const int64_t v[] = {3};
    static const uint8_t yes[] = {0x01};
    rt_column cols[] = {{.name = "_shape_poison", .format = "b", .values = yes},
                        {.name = "v", .format = "l", .values = v}};
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_PROTOBUF, cols, 2, 1, 0);
    expect_payload(&fx, 0, "08 03");
    fixture_free(&fx);
}

/* ---- JSON Schema ---------------------------------------------------------------------- */

static void test_json_schema_payload_is_the_flat_event(void **state)
{
    (void)state;
    static const int64_t id[] = {1, 2};
    static const uint8_t poison[] = {0x02};
    static const double f[] = {__builtin_inf(), 2.0};
    static const uint64_t dec[] = {(uint64_t)-100025, UINT64_MAX, 5, 0};
    static const int32_t toff[] = {0, 1, 2};
    static const char table[] = "tt";
    rt_column cols[] = {
        {.name = "order id", .format = "l", .values = id},
        {.name = "_shape_poison", .format = "b", .values = poison},
        {.name = "f", .format = "g", .values = f},
        {.name = "amount", .format = "d:12,2", .values = dec},
        {.name = "_shape_table", .format = "u", .values = toff, .data = table},
    };
    fixture fx;
    fixture_make(&fx, SHAPE_KAFKA_REGFMT_JSON_SCHEMA, cols, 5, 2, 0);
    expect_text_payload(&fx, 0, "{\"order id\":1,\"f\":null,\"amount\":\"-1000.25\",\"_shape_table\":\"t\"}");
    expect_text_payload(&fx, 1, "{\"order id\":2,\"f\":2.0,\"amount\":\"0.05\",\"_shape_table\":\"t\"}");
    fixture_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avro_scalars_and_unions),
        cmocka_unit_test(test_avro_integer_widths),
        cmocka_unit_test(test_avro_uint64_overflow),
        cmocka_unit_test(test_avro_decimals),
        cmocka_unit_test(test_avro_temporal_values),
        cmocka_unit_test(test_avro_null_required_and_null_type),
        cmocka_unit_test(test_avro_strings_binary_uuid_dictionary),
        cmocka_unit_test(test_avro_struct_offset),
        cmocka_unit_test(test_cursor_matches_encode_on_random_batches),
        cmocka_unit_test(test_cursor_set_again_and_other_formats),
        cmocka_unit_test(test_protobuf_presence_rules),
        cmocka_unit_test(test_protobuf_null_in_required),
        cmocka_unit_test(test_protobuf_floats_and_wire_types),
        cmocka_unit_test(test_protobuf_temporal_uuid_dictionary),
        cmocka_unit_test(test_protobuf_two_byte_tags),
        cmocka_unit_test(test_protobuf_skips_poison_in_numbering),
        cmocka_unit_test(test_json_schema_payload_is_the_flat_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

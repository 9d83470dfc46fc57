/* test_regfmt_schema.c — registry format names, subjects, the wire header
 * and the schema documents of spec-kafka.md §4.3–§4.6: every row of the
 * §4.5 mapping table in all three documents, exact document texts, the
 * §6.8 explicit-schema example and every refusal text. */
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

/* ---- helpers ------------------------------------------------------------------- */

/* The document of format f for the columns (schema only: arrays unused). */
static char *document(shape_kafka_regfmt f, const char *table, const rt_column *cols, int n)
{
    struct ArrowSchema s;
    struct ArrowArray a;
    rt_batch_make(cols, n, 0, 0, &s, &a);
    shape_kafka_regfmt_codec *c = NULL;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_kafka_regfmt_codec_new(f, table, &s, &c, &err);
    if (rc != SHAPE_OK) fail_msg("%s refused: %s", shape_kafka_regfmt_name(f), err.message);
    assert_int_equal(shape_kafka_regfmt_codec_format(c), f);
    char *text = strdup(shape_kafka_regfmt_codec_schema(c));
    shape_kafka_regfmt_codec_free(c);
    rt_batch_release(&s, &a);
    return text;
}

static void expect_document(shape_kafka_regfmt f, const char *table, const rt_column *cols, int n,
                            const char *expected)
{
    char *text = document(f, table, cols, n);
    assert_string_equal(text, expected);
    free(text);
}

static void expect_refusal(shape_kafka_regfmt f, const char *table, const rt_column *cols, int n,
                           const char *message)
{
    struct ArrowSchema s;
    struct ArrowArray a;
    rt_batch_make(cols, n, 0, 0, &s, &a);
    shape_kafka_regfmt_codec *c = (shape_kafka_regfmt_codec *)&s; /* must be reset */
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_kafka_regfmt_codec_new(f, table, &s, &c, &err), SHAPE_EINVAL);
    assert_null(c);
    assert_string_equal(err.message, message);
    rt_batch_release(&s, &a);
}

/* ---- names, subjects, header ------------------------------------------------------- */

static void test_format_names(void **state)
{
    (void)state;
    const char *names[] = {"json", "avro", "protobuf", "json-schema"};
    for (int i = 0; i < 4; i++) {
        shape_kafka_regfmt f = (shape_kafka_regfmt)99;
        assert_int_equal(shape_kafka_regfmt_parse(names[i], &f, NULL), SHAPE_OK);
        assert_int_equal(f, i);
        assert_string_equal(shape_kafka_regfmt_name(f), names[i]);
    }
    assert_null(shape_kafka_regfmt_schema_type(SHAPE_KAFKA_REGFMT_JSON));
    assert_string_equal(shape_kafka_regfmt_schema_type(SHAPE_KAFKA_REGFMT_AVRO), "AVRO");
    assert_string_equal(shape_kafka_regfmt_schema_type(SHAPE_KAFKA_REGFMT_PROTOBUF), "PROTOBUF");
    assert_string_equal(shape_kafka_regfmt_schema_type(SHAPE_KAFKA_REGFMT_JSON_SCHEMA), "JSON");
    shape_kafka_regfmt f;
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_kafka_regfmt_parse("xml", &f, &err), SHAPE_EINVAL);
    assert_string_equal(err.message,
                        "unknown event format 'xml'; choose from json, avro, protobuf, json-schema");
    assert_int_equal(shape_kafka_regfmt_parse("AVRO", &f, &err), SHAPE_EINVAL);
    assert_int_equal(shape_kafka_regfmt_parse("", &f, &err), SHAPE_EINVAL);
}

static void expect_subject(shape_kafka_subject_strategy s, const char *expected)
{
    char *subject = shape_kafka_subject_name(s, "orders", "order_line");
    assert_non_null(subject);
    assert_string_equal(subject, expected);
    free(subject);
}

static void test_subjects(void **state)
{
    (void)state;
    const char *names[] = {"topic", "record", "topic_record"};
    const char *expected[] = {"orders-value", "shape.events.order_line", "orders-shape.events.order_line"};
    for (int i = 0; i < 3; i++) {
        shape_kafka_subject_strategy s = (shape_kafka_subject_strategy)99;
        assert_int_equal(shape_kafka_subject_strategy_parse(names[i], &s, NULL), SHAPE_OK);
        assert_int_equal(s, i);
        expect_subject(s, expected[i]);
    }
    shape_kafka_subject_strategy s;
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_kafka_subject_strategy_parse("nope", &s, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "unknown subject strategy 'nope'; choose from topic, record, topic_record");
}

static void test_wire_header(void **state)
{
    (void)state;
    uint8_t h[SHAPE_KAFKA_WIRE_HEADER_MAX + 1];
    memset(h, 0xee, sizeof h);
    assert_int_equal(shape_kafka_wire_header(SHAPE_KAFKA_REGFMT_AVRO, 100, h), 5);
    const uint8_t avro[] = {0, 0, 0, 0, 100, 0xee};
    assert_memory_equal(h, avro, 6);
    memset(h, 0xee, sizeof h);
    assert_int_equal(shape_kafka_wire_header(SHAPE_KAFKA_REGFMT_PROTOBUF, 0x01020304u, h), 6);
    const uint8_t proto[] = {0, 1, 2, 3, 4, 0, 0xee};
    assert_memory_equal(h, proto, 7);
    assert_int_equal(shape_kafka_wire_header(SHAPE_KAFKA_REGFMT_JSON_SCHEMA, 0xfffffffeu, h), 5);
    const uint8_t json[] = {0, 0xff, 0xff, 0xff, 0xfe};
    assert_memory_equal(h, json, 5);
}

/* ---- exact documents ---------------------------------------------------------------- */

/* id int64 nullable, name string not null, amount decimal(12,2), at tsu:UTC,
 * f double declared not null, the poison marker, a null-typed column, and
 * _shape_table / _shape_seq declared nullable. */
static const rt_column small[] = {
    {.name = "id", .format = "l", .nullable = 1},
    {.name = "name", .format = "u"},
    {.name = "amount", .format = "d:12,2", .nullable = 1},
    {.name = "at", .format = "tsu:UTC", .nullable = 1},
    {.name = "f", .format = "g"},
    {.name = "_shape_poison", .format = "b"},
    {.name = "nothing", .format = "n", .nullable = 1},
    {.name = "_shape_table", .format = "u", .nullable = 1},
    {.name = "_shape_seq", .format = "l", .nullable = 1},
};

static void test_avro_document(void **state)
{
    (void)state;
    expect_document(
        SHAPE_KAFKA_REGFMT_AVRO, "t", small, 9,
        "{\"type\":\"record\",\"name\":\"t\",\"namespace\":\"shape.events\",\"fields\":["
        "{\"name\":\"id\",\"type\":[\"null\",\"long\"],\"default\":null},"
        "{\"name\":\"name\",\"type\":\"string\"},"
        "{\"name\":\"amount\",\"type\":[\"null\",{\"type\":\"bytes\",\"logicalType\":\"decimal\","
        "\"precision\":12,\"scale\":2}],\"default\":null},"
        "{\"name\":\"at\",\"type\":[\"null\",{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}],"
        "\"default\":null},"
        "{\"name\":\"f\",\"type\":[\"null\",\"double\"],\"default\":null},"
        "{\"name\":\"nothing\",\"type\":\"null\"},"
        "{\"name\":\"_shape_table\",\"type\":\"string\"},"
        "{\"name\":\"_shape_seq\",\"type\":\"long\"}]}");
}

static void test_protobuf_document(void **state)
{
    (void)state;
    expect_document(SHAPE_KAFKA_REGFMT_PROTOBUF, "t", small, 9,
                    "syntax = \"proto3\";\n"
                    "\n"
                    "package shape.events;\n"
                    "\n"
                    "message t {\n"
                    "  optional int64 id = 1;\n"
                    "  string name = 2;\n"
                    "  optional string amount = 3;  // decimal(12, 2), canonical text\n"
                    "  optional int64 at = 4;  // timestamp with time zone, microseconds since the epoch (UTC)\n"
                    "  optional double f = 5;\n"
                    "  optional string nothing = 6;\n"
                    "  string _shape_table = 7;\n"
                    "  int64 _shape_seq = 8;\n"
                    "}\n");
}

static void test_json_schema_document(void **state)
{
    (void)state;
    expect_document(
        SHAPE_KAFKA_REGFMT_JSON_SCHEMA, "t", small, 9,
        "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"title\":\"t\",\"type\":\"object\","
        "\"properties\":{"
        "\"id\":{\"type\":[\"integer\",\"null\"]},"
        "\"name\":{\"type\":\"string\"},"
        "\"amount\":{\"type\":[\"string\",\"null\"],\"pattern\":\"^-?[0-9]+(\\\\.[0-9]+)?$\","
        "\"description\":\"decimal(12, 2), canonical text\"},"
        "\"at\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"},"
        "\"f\":{\"type\":[\"number\",\"null\"]},"
        "\"nothing\":{\"type\":\"null\"},"
        "\"_shape_table\":{\"type\":\"string\"},"
        "\"_shape_seq\":{\"type\":\"integer\"}},"
        "\"required\":[\"name\",\"_shape_table\",\"_shape_seq\"],\"additionalProperties\":false}");
}

/* §6.8: `a` int64 not null, `f` float64 not null, _shape_table, _shape_seq. */
static void test_explicit_schema_example(void **state)
{
    (void)state;
    const rt_column cols[] = {
        {.name = "a", .format = "l"},
        {.name = "f", .format = "g"},
        {.name = "_shape_table", .format = "u"},
        {.name = "_shape_seq", .format = "l"},
    };
    char *avro = document(SHAPE_KAFKA_REGFMT_AVRO, "explicit", cols, 4);
    assert_non_null(strstr(avro, "{\"name\":\"a\",\"type\":\"long\"}"));
    assert_non_null(strstr(avro, "{\"name\":\"f\",\"type\":[\"null\",\"double\"],\"default\":null}"));
    free(avro);
    char *json = document(SHAPE_KAFKA_REGFMT_JSON_SCHEMA, "explicit", cols, 4);
    assert_non_null(strstr(json, "\"required\":[\"a\",\"_shape_table\",\"_shape_seq\"]"));
    free(json);
    char *proto = document(SHAPE_KAFKA_REGFMT_PROTOBUF, "explicit", cols, 4);
    assert_non_null(strstr(proto, "\n  int64 a = 1;\n"));
    assert_non_null(strstr(proto, "\n  optional double f = 2;\n"));
    free(proto);
}

/* ---- every mapping row ------------------------------------------------------------------ */

typedef struct mapping {
    const char *format;
    int uuid;               /* carries the arrow.uuid extension name */
    int dictionary;         /* a dictionary column with these values (int32 indices) */
    int always_nullable;    /* floats and null */
    const char *avro;       /* the Avro type of a value */
    const char *proto;      /* the Protobuf type word */
    const char *comment;    /* the Protobuf comment, or NULL */
    const char *json;       /* the JSON Schema type word */
    const char *json_extra; /* the keys after "type" */
} mapping;

#define DECIMAL_PATTERN ",\"pattern\":\"^-?[0-9]+(\\\\.[0-9]+)?$\""
#define TS_NAIVE_COMMENT "timestamp without time zone, wall-clock microseconds since the epoch"
#define TS_ZONED_COMMENT "timestamp with time zone, microseconds since the epoch (UTC)"

static const mapping mappings[] = {
    {"b", 0, 0, 0, "\"boolean\"", "bool", NULL, "boolean", ""},
    {"c", 0, 0, 0, "\"int\"", "int32", NULL, "integer", ""},
    {"s", 0, 0, 0, "\"int\"", "int32", NULL, "integer", ""},
    {"i", 0, 0, 0, "\"int\"", "int32", NULL, "integer", ""},
    {"C", 0, 0, 0, "\"int\"", "uint32", NULL, "integer", ""},
    {"S", 0, 0, 0, "\"int\"", "uint32", NULL, "integer", ""},
    {"l", 0, 0, 0, "\"long\"", "int64", NULL, "integer", ""},
    {"I", 0, 0, 0, "\"long\"", "uint32", NULL, "integer", ""},
    {"L", 0, 0, 0, "\"long\"", "uint64", NULL, "integer", ""},
    {"f", 0, 0, 1, "\"float\"", "float", NULL, "number", ""},
    {"g", 0, 0, 1, "\"double\"", "double", NULL, "number", ""},
    {"e", 0, 0, 1, "\"double\"", "double", NULL, "number", ""},
    {"u", 0, 0, 0, "\"string\"", "string", NULL, "string", ""},
    {"U", 0, 0, 0, "\"string\"", "string", NULL, "string", ""},
    {"u", 0, 1, 0, "\"string\"", "string", NULL, "string", ""},
    {"w:16", 1, 0, 0, "{\"type\":\"string\",\"logicalType\":\"uuid\"}", "string", "uuid", "string",
     ",\"format\":\"uuid\""},
    {"z", 0, 0, 0, "\"bytes\"", "bytes", NULL, "string", ",\"contentEncoding\":\"base64\""},
    {"Z", 0, 0, 0, "\"bytes\"", "bytes", NULL, "string", ",\"contentEncoding\":\"base64\""},
    {"w:16", 0, 0, 0, "\"bytes\"", "bytes", NULL, "string", ",\"contentEncoding\":\"base64\""},
    {"w:3", 0, 0, 0, "\"bytes\"", "bytes", NULL, "string", ",\"contentEncoding\":\"base64\""},
    {"d:12,2", 0, 0, 0,
     "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":12,\"scale\":2}", "string",
     "decimal(12, 2), canonical text", "string",
     DECIMAL_PATTERN ",\"description\":\"decimal(12, 2), canonical text\""},
    {"d:18,8,64", 0, 0, 0,
     "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":18,\"scale\":8}", "string",
     "decimal(18, 8), canonical text", "string",
     DECIMAL_PATTERN ",\"description\":\"decimal(18, 8), canonical text\""},
    {"tdD", 0, 0, 0, "{\"type\":\"int\",\"logicalType\":\"date\"}", "int32",
     "date, days since 1970-01-01", "string", ",\"format\":\"date\""},
    {"tdm", 0, 0, 0, "{\"type\":\"int\",\"logicalType\":\"date\"}", "int32",
     "date, days since 1970-01-01", "string", ",\"format\":\"date\""},
    {"tts", 0, 0, 0, "{\"type\":\"int\",\"logicalType\":\"time-millis\"}", "int64",
     "time of day, microseconds", "string", ",\"description\":\"time of day\""},
    {"ttm", 0, 0, 0, "{\"type\":\"int\",\"logicalType\":\"time-millis\"}", "int64",
     "time of day, microseconds", "string", ",\"description\":\"time of day\""},
    {"ttu", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"time-micros\"}", "int64",
     "time of day, microseconds", "string", ",\"description\":\"time of day\""},
    {"ttn", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"time-micros\"}", "int64",
     "time of day, microseconds", "string", ",\"description\":\"time of day\""},
    {"tss:", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"local-timestamp-millis\"}", "int64",
     TS_NAIVE_COMMENT, "string", ",\"description\":\"timestamp without time zone\""},
    {"tsm:", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"local-timestamp-millis\"}", "int64",
     TS_NAIVE_COMMENT, "string", ",\"description\":\"timestamp without time zone\""},
    {"tsu:", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"local-timestamp-micros\"}", "int64",
     TS_NAIVE_COMMENT, "string", ",\"description\":\"timestamp without time zone\""},
    {"tsn:", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"local-timestamp-micros\"}", "int64",
     TS_NAIVE_COMMENT, "string", ",\"description\":\"timestamp without time zone\""},
    {"tss:UTC", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}", "int64",
     TS_ZONED_COMMENT, "string", ",\"format\":\"date-time\""},
    {"tsm:Europe/Paris", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}",
     "int64", TS_ZONED_COMMENT, "string", ",\"format\":\"date-time\""},
    {"tsu:UTC", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}", "int64",
     TS_ZONED_COMMENT, "string", ",\"format\":\"date-time\""},
    {"tsn:+01:00", 0, 0, 0, "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}", "int64",
     TS_ZONED_COMMENT, "string", ",\"format\":\"date-time\""},
};

/* The three documents of a table `m` with one column `x`, compared whole. */
static void check_mapping(const mapping *m, int declared_nullable)
{
    static const rt_column dictionary_values = {.format = "u"};
    rt_column col = {.name = "x", .format = m->format, .nullable = declared_nullable};
    if (m->uuid) col.metadata = rt_uuid_metadata();
    if (m->dictionary) {
        col.format = "i";
        col.dictionary = &dictionary_values;
    }
    int nullable = declared_nullable || m->always_nullable;
    char expected[1024], comment[128] = "";
    if (m->comment) snprintf(comment, sizeof comment, "  // %s", m->comment);

    if (nullable)
        snprintf(expected, sizeof expected,
                 "{\"type\":\"record\",\"name\":\"m\",\"namespace\":\"shape.events\",\"fields\":["
                 "{\"name\":\"x\",\"type\":[\"null\",%s],\"default\":null}]}",
                 m->avro);
    else
        snprintf(expected, sizeof expected,
                 "{\"type\":\"record\",\"name\":\"m\",\"namespace\":\"shape.events\",\"fields\":["
                 "{\"name\":\"x\",\"type\":%s}]}",
                 m->avro);
    expect_document(SHAPE_KAFKA_REGFMT_AVRO, "m", &col, 1, expected);

    snprintf(expected, sizeof expected,
             "syntax = \"proto3\";\n\npackage shape.events;\n\nmessage m {\n  %s%s x = 1;%s\n}\n",
             nullable ? "optional " : "", m->proto, comment);
    expect_document(SHAPE_KAFKA_REGFMT_PROTOBUF, "m", &col, 1, expected);

    char type[64];
    if (nullable) snprintf(type, sizeof type, "[\"%s\",\"null\"]", m->json);
    else snprintf(type, sizeof type, "\"%s\"", m->json);
    snprintf(expected, sizeof expected,
             "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"title\":\"m\",\"type\":"
             "\"object\",\"properties\":{\"x\":{\"type\":%s%s}},\"required\":[%s],"
             "\"additionalProperties\":false}",
             type, m->json_extra, nullable ? "" : "\"x\"");
    expect_document(SHAPE_KAFKA_REGFMT_JSON_SCHEMA, "m", &col, 1, expected);
}

static void test_every_mapping_row(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof mappings / sizeof mappings[0]; i++) {
        check_mapping(&mappings[i], 0);
        check_mapping(&mappings[i], 1);
    }
}

static void test_null_column_in_all_documents(void **state)
{
    (void)state;
    const rt_column col = {.name = "x", .format = "n"};
    expect_document(SHAPE_KAFKA_REGFMT_AVRO, "m", &col, 1,
                    "{\"type\":\"record\",\"name\":\"m\",\"namespace\":\"shape.events\",\"fields\":["
                    "{\"name\":\"x\",\"type\":\"null\"}]}");
    expect_document(SHAPE_KAFKA_REGFMT_PROTOBUF, "m", &col, 1,
                    "syntax = \"proto3\";\n\npackage shape.events;\n\nmessage m {\n"
                    "  optional string x = 1;\n}\n");
    expect_document(SHAPE_KAFKA_REGFMT_JSON_SCHEMA, "m", &col, 1,
                    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"title\":\"m\","
                    "\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"null\"}},\"required\":[],"
                    "\"additionalProperties\":false}");
}

static void test_field_numbers_follow_columns_without_poison(void **state)
{
    (void)state;
    rt_column cols[20];
    char names[20][8];
    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof names[i], "c%d", i);
        cols[i] = (rt_column){.name = names[i], .format = "l"};
    }
    cols[3].name = "_shape_poison";
    char *proto = document(SHAPE_KAFKA_REGFMT_PROTOBUF, "wide", cols, 20);
    assert_non_null(strstr(proto, "  int64 c2 = 3;\n  int64 c4 = 4;\n"));
    assert_non_null(strstr(proto, "  int64 c19 = 19;\n}\n"));
    assert_null(strstr(proto, "_shape_poison"));
    free(proto);
}

static void test_json_schema_escapes_any_names(void **state)
{
    (void)state;
    const rt_column cols[] = {{.name = "order id", .format = "l"}, {.name = "q\"t", .format = "u", .nullable = 1}};
    expect_document(SHAPE_KAFKA_REGFMT_JSON_SCHEMA, "my-table", cols, 2,
                    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"title\":\"my-table\","
                    "\"type\":\"object\",\"properties\":{\"order id\":{\"type\":\"integer\"},"
                    "\"q\\\"t\":{\"type\":[\"string\",\"null\"]}},\"required\":[\"order id\"],"
                    "\"additionalProperties\":false}");
}

/* ---- refusals --------------------------------------------------------------------------- */

static void test_invalid_table_names(void **state)
{
    (void)state;
    const rt_column cols[] = {{.name = "order id", .format = "+l"}};
    const char *table_message =
        "table name 'my-table' is not a valid record name (letters, digits and underscore); use "
        "--event-format json or json-schema";
    /* the table is checked first, before the bad column name and type */
    expect_refusal(SHAPE_KAFKA_REGFMT_AVRO, "my-table", cols, 1, table_message);
    expect_refusal(SHAPE_KAFKA_REGFMT_PROTOBUF, "my-table", cols, 1, table_message);
    const rt_column ok[] = {{.name = "a", .format = "l"}};
    expect_refusal(SHAPE_KAFKA_REGFMT_AVRO, "1table", ok, 1,
                   "table name '1table' is not a valid record name (letters, digits and "
                   "underscore); use --event-format json or json-schema");
    expect_refusal(SHAPE_KAFKA_REGFMT_PROTOBUF, "", ok, 1,
                   "table name '' is not a valid record name (letters, digits and underscore); use "
                   "--event-format json or json-schema");
    char *json = document(SHAPE_KAFKA_REGFMT_JSON_SCHEMA, "my-table", ok, 1);
    assert_non_null(strstr(json, "\"title\":\"my-table\""));
    free(json);
    char *avro = document(SHAPE_KAFKA_REGFMT_AVRO, "_T9", ok, 1);
    assert_non_null(strstr(avro, "\"name\":\"_T9\""));
    free(avro);
}

static void test_invalid_column_names(void **state)
{
    (void)state;
    const rt_column cols[] = {{.name = "id", .format = "l"}, {.name = "order id", .format = "l"}};
    const char *message = "column 'order id' of table 'orders' is not a valid field name in Avro and "
                          "Protobuf (letters, digits and underscore); use --event-format json or "
                          "json-schema";
    expect_refusal(SHAPE_KAFKA_REGFMT_AVRO, "orders", cols, 2, message);
    expect_refusal(SHAPE_KAFKA_REGFMT_PROTOBUF, "orders", cols, 2, message);
    const rt_column digit[] = {{.name = "9lives", .format = "l"}};
    expect_refusal(SHAPE_KAFKA_REGFMT_AVRO, "orders", digit, 1,
                   "column '9lives' of table 'orders' is not a valid field name in Avro and "
                   "Protobuf (letters, digits and underscore); use --event-format json or "
                   "json-schema");
    free(document(SHAPE_KAFKA_REGFMT_JSON_SCHEMA, "orders", cols, 2));
}

static void test_unmappable_column_types(void **state)
{
    (void)state;
    struct ArrowSchema item = {.format = "u", .name = "item", .flags = ARROW_FLAG_NULLABLE};
    struct ArrowSchema *items[] = {&item};
    const rt_column cols[] = {{.name = "id", .format = "l"}, {.name = "tags", .format = "+l"}};
    for (int f = SHAPE_KAFKA_REGFMT_AVRO; f <= SHAPE_KAFKA_REGFMT_JSON_SCHEMA; f++) {
        struct ArrowSchema s;
        struct ArrowArray a;
        rt_batch_make(cols, 2, 0, 0, &s, &a);
        s.children[1]->n_children = 1;
        s.children[1]->children = items;
        shape_kafka_regfmt_codec *c = NULL;
        shape_err err;
        shape_err_clear(&err);
        assert_int_equal(shape_kafka_regfmt_codec_new((shape_kafka_regfmt)f, "t", &s, &c, &err), SHAPE_EINVAL);
        assert_null(c);
        assert_string_equal(err.message,
                            "cannot map column 'tags' of type list<item: string> to a registry "
                            "format (lists, structs and maps are not supported); use --event-format json");
        s.children[1]->n_children = 0;
        s.children[1]->children = NULL;
        rt_batch_release(&s, &a);
    }
    const char *other[] = {"+m", "tDs", "tiM", "+ud:0,1", "vu", "d:40,2,256"};
    const char *text[] = {"map<>", "duration[s]", "month_interval", "dense_union<>", "string_view",
                          "decimal256(40, 2)"};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
        const rt_column bad[] = {{.name = "x", .format = other[i]}};
        char message[256];
        snprintf(message, sizeof message,
                 "cannot map column 'x' of type %s to a registry format (lists, structs and maps "
                 "are not supported); use --event-format json",
                 text[i]);
        expect_refusal(SHAPE_KAFKA_REGFMT_PROTOBUF, "t", bad, 1, message);
    }
}

/* Avro's decimal logical type needs 0 <= scale <= precision; the others take any. */
static void test_avro_decimal_scale_range(void **state)
{
    (void)state;
    const rt_column negative[] = {{.name = "d", .format = "d:5,-2"}};
    const rt_column beyond[] = {{.name = "d", .format = "d:3,5"}};
    expect_refusal(SHAPE_KAFKA_REGFMT_AVRO, "t", negative, 1,
                   "cannot map column 'd' of type decimal(5, -2) to Avro (the scale must be from 0 to the "
                   "precision); use --event-format json, protobuf or json-schema");
    expect_refusal(SHAPE_KAFKA_REGFMT_AVRO, "t", beyond, 1,
                   "cannot map column 'd' of type decimal(3, 5) to Avro (the scale must be from 0 to the "
                   "precision); use --event-format json, protobuf or json-schema");
    char *text = document(SHAPE_KAFKA_REGFMT_PROTOBUF, "t", negative, 1);
    assert_non_null(strstr(text, "decimal(5, -2), canonical text"));
    free(text);
}

static void test_json_format_has_no_codec(void **state)
{
    (void)state;
    const rt_column cols[] = {{.name = "id", .format = "l"}};
    struct ArrowSchema s;
    struct ArrowArray a;
    rt_batch_make(cols, 1, 0, 0, &s, &a);
    shape_kafka_regfmt_codec *c = NULL;
    assert_int_equal(shape_kafka_regfmt_codec_new(SHAPE_KAFKA_REGFMT_JSON, "t", &s, &c, NULL), SHAPE_EINVAL);
    assert_null(c);
    rt_batch_release(&s, &a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_names),
        cmocka_unit_test(test_subjects),
        cmocka_unit_test(test_wire_header),
        cmocka_unit_test(test_avro_document),
        cmocka_unit_test(test_protobuf_document),
        cmocka_unit_test(test_json_schema_document),
        cmocka_unit_test(test_explicit_schema_example),
        cmocka_unit_test(test_every_mapping_row),
        cmocka_unit_test(test_null_column_in_all_documents),
        cmocka_unit_test(test_field_numbers_follow_columns_without_poison),
        cmocka_unit_test(test_json_schema_escapes_any_names),
        cmocka_unit_test(test_invalid_table_names),
        cmocka_unit_test(test_invalid_column_names),
        cmocka_unit_test(test_unmappable_column_types),
        cmocka_unit_test(test_avro_decimal_scale_range),
        cmocka_unit_test(test_json_format_has_no_codec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_wire_decode.c — the Confluent wire-format decoder (wire_decode.h):
 * messages built BY HAND byte by byte (Avro binary, Protobuf binary, JSON
 * text) under schema texts written by hand as our encoder writes them
 * (spec-kafka.md §4.6), registered in the fake registry, decoded into flat
 * JSON events and compared byte for byte; every refusal with its message;
 * then the round trip through the real encoders (registry/formats.h) for
 * every format: a typed batch of every mapped Arrow type encodes, registers
 * and decodes back to exactly its flat JSON events (shape_kafka_flat_json_row),
 * and a message cut to its first 2/3 never decodes.
 *
 * The hand-built bytes follow the specifications: Avro zig-zag varints
 * ((n << 1) ^ (n >> 63), 7 bits per byte, low first), union branch index
 * first, float/double little-endian, bytes/string = length + bytes, decimal
 * = big-endian two's complement; Protobuf tag = field << 3 | wire type
 * (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32), negative int32 and
 * int64 as 10-byte varints.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "regfmt_arrays.h"
#include "registry/client.h"
#include "registry/fake.h"
#include "registry/flat_json.h"
#include "registry/formats.h"
#include "registry/wire_decode.h"

/* ---- original schemas: plain structs, borrowed by the decoder --------------- */

#define MAX_COLUMNS 48

typedef struct original {
    struct ArrowSchema root;
    struct ArrowSchema fields[MAX_COLUMNS];
    struct ArrowSchema values[MAX_COLUMNS]; /* dictionary value types */
    struct ArrowSchema *children[MAX_COLUMNS];
    char *uuid_metadata;
} original;

static void original_init(original *o)
{
    memset(o, 0, sizeof *o);
    o->root.format = "+s";
    o->root.name = "";
    o->root.children = o->children;
    const char *keys[] = {"ARROW:extension:name", "ARROW:extension:metadata"};
    const char *values[] = {"arrow.uuid", ""};
    size_t len;
    shape_err err;
    assert_int_equal(shape_arrow_metadata_encode(keys, values, 2, &o->uuid_metadata, &len, &err), SHAPE_OK);
}

static struct ArrowSchema *column(original *o, const char *format, const char *name)
{
    assert_true(o->root.n_children < MAX_COLUMNS);
    struct ArrowSchema *f = &o->fields[o->root.n_children];
    f->format = format;
    f->name = name;
    f->flags = ARROW_FLAG_NULLABLE;
    o->children[o->root.n_children++] = f;
    return f;
}

static void dictionary_column(original *o, const char *value_format, const char *name)
{
    struct ArrowSchema *f = column(o, "i", name);
    struct ArrowSchema *v = &o->values[o->root.n_children - 1];
    v->format = value_format;
    v->name = "";
    f->dictionary = v;
}

static void uuid_column(original *o, const char *name)
{
    column(o, "w:16", name)->metadata = o->uuid_metadata;
}

static void original_free(original *o) { free(o->uuid_metadata); }

/* ---- the registry and the decoder ------------------------------------------- */

typedef struct fixture {
    shape_kafka_fake_registry *fake;
    shape_kafka_schema_registry_client *client;
    shape_kafka_wire_decoder *decoder;
    original cols;
    shape_json_buf out;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    assert_int_equal(shape_kafka_fake_registry_new(&fx->fake, NULL), SHAPE_OK);
    shape_kafka_schema_registry_settings s;
    memset(&s, 0, sizeof s);
    s.url = "http://registry.test:8081";
    s.ssl_verify = 1;
    s.transport = shape_kafka_fake_registry_transport;
    s.transport_ctx = fx->fake;
    shape_err err;
    if (shape_kafka_schema_registry_client_new(&s, &fx->client, &err) != SHAPE_OK) fail_msg("client: %s", err.message);
    original_init(&fx->cols);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    shape_kafka_wire_decoder_free(fx->decoder);
    shape_kafka_schema_registry_client_free(fx->client);
    shape_kafka_fake_registry_free(fx->fake);
    original_free(&fx->cols);
    shape_json_buf_reset(&fx->out);
    free(fx);
    return 0;
}

static uint32_t register_schema(fixture *fx, const char *subject, const char *type, const char *text)
{
    uint32_t id = 0;
    shape_err err;
    if (shape_kafka_schema_registry_register(fx->client, subject, type, text, &id, &err) != SHAPE_OK)
        fail_msg("register %s: %s", subject, err.message);
    return id;
}

static void make_decoder(fixture *fx)
{
    shape_err err;
    if (shape_kafka_wire_decoder_new(fx->client, &fx->cols.root, &fx->decoder, &err) != SHAPE_OK)
        fail_msg("decoder: %s", err.message);
}

/* header (magic 0, big-endian id, for Protobuf the message index 0) + payload */
static size_t wire(uint32_t id, int protobuf, const uint8_t *payload, size_t n, uint8_t *msg)
{
    msg[0] = 0;
    msg[1] = (uint8_t)(id >> 24);
    msg[2] = (uint8_t)(id >> 16);
    msg[3] = (uint8_t)(id >> 8);
    msg[4] = (uint8_t)id;
    size_t at = 5;
    if (protobuf) msg[at++] = 0;
    memcpy(msg + at, payload, n);
    return at + n;
}

static void decodes_to(fixture *fx, const uint8_t *msg, size_t len, uint32_t id, const char *expected)
{
    shape_err err;
    uint32_t got = 0;
    fx->out.len = 0;
    if (shape_kafka_wire_decode(fx->decoder, msg, len, &fx->out, &got, &err) != SHAPE_OK)
        fail_msg("decode: %s", err.message);
    assert_int_equal(got, id);
    assert_string_equal(fx->out.data, expected);
}

/* Refused with SHAPE_EINVAL, the message containing `text`, out unchanged. */
static void refuses(fixture *fx, const uint8_t *msg, size_t len, const char *text)
{
    shape_err err;
    shape_err_clear(&err);
    fx->out.len = 0;
    assert_int_equal(shape_json_buf_reserve(&fx->out, 8), 0);
    memcpy(fx->out.data, "kept", 5);
    fx->out.len = 4;
    int rc = shape_kafka_wire_decode(fx->decoder, msg, len, &fx->out, NULL, &err);
    if (rc != SHAPE_EINVAL) fail_msg("expected a refusal with '%s', got %d (%s)", text, rc, err.message);
    if (!strstr(err.message, text)) fail_msg("expected '%s' in '%s'", text, err.message);
    assert_int_equal(fx->out.len, 4);
    assert_string_equal(fx->out.data, "kept");
}

/* ---- Avro ---------------------------------------------------------------------- */

#define UUID_TEXT "0f8fad5b-d9cb-469f-a165-70867728950e"
#define UUID_BYTES                                                                                          \
    '0', 'f', '8', 'f', 'a', 'd', '5', 'b', '-', 'd', '9', 'c', 'b', '-', '4', '6', '9', 'f', '-', 'a', '1', \
        '6', '5', '-', '7', '0', '8', '6', '7', '7', '2', '8', '9', '5', '0', 'e'
#define TYPED_BYTES 't', 'y', 'p', 'e', 'd'

static const char AVRO_TYPED[] =
    "{\"type\":\"record\",\"name\":\"typed\",\"namespace\":\"shape.events\",\"fields\":["
    "{\"name\":\"id\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"born\",\"type\":[\"null\",{\"type\":\"int\",\"logicalType\":\"date\"}],\"default\":null},"
    "{\"name\":\"ts_n\",\"type\":{\"type\":\"long\",\"logicalType\":\"local-timestamp-micros\"}},"
    "{\"name\":\"ts_u\",\"type\":{\"type\":\"long\",\"logicalType\":\"local-timestamp-micros\"}},"
    "{\"name\":\"ts_zone\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
    "{\"name\":\"amount\",\"type\":[\"null\",{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":12,"
    "\"scale\":2}],\"default\":null},"
    "{\"name\":\"uid\",\"type\":{\"type\":\"string\",\"logicalType\":\"uuid\"}},"
    "{\"name\":\"f64\",\"type\":[\"null\",\"double\"],\"default\":null},"
    "{\"name\":\"f32\",\"type\":[\"null\",\"float\"],\"default\":null},"
    "{\"name\":\"name\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"blob\",\"type\":[\"null\",\"bytes\"],\"default\":null},"
    "{\"name\":\"flag\",\"type\":[\"null\",\"boolean\"],\"default\":null},"
    "{\"name\":\"at\",\"type\":{\"type\":\"long\",\"logicalType\":\"time-micros\"}},"
    "{\"name\":\"nothing\",\"type\":\"null\"},"
    "{\"name\":\"_shape_table\",\"type\":\"string\"},"
    "{\"name\":\"_shape_seq\",\"type\":\"long\"}]}";

static void avro_typed_columns(original *o)
{
    column(o, "l", "id");
    column(o, "tdD", "born");
    column(o, "tsn:", "ts_n");
    column(o, "tsu:", "ts_u");
    column(o, "tsm:Europe/Paris", "ts_zone");
    column(o, "d:12,2", "amount");
    uuid_column(o, "uid");
    column(o, "g", "f64");
    column(o, "f", "f32");
    dictionary_column(o, "u", "name");
    column(o, "z", "blob");
    column(o, "b", "flag");
    column(o, "ttu", "at");
    column(o, "n", "nothing");
    column(o, "u", "_shape_table");
    column(o, "l", "_shape_seq");
}

static const uint8_t AVRO_ROW1[] = {
    0x02, 0x54,                                     /* id: branch 1, 42 */
    0x02, 0xb6, 0xb3, 0x02,                         /* born: branch 1, 19675 days */
    0x80, 0x89, 0x81, 0x82, 0x83, 0x89, 0x85, 0x06, /* ts_n: 1700000000123456 µs */
    0x80, 0x89, 0x81, 0x82, 0x83, 0x89, 0x85, 0x06, /* ts_u: the same */
    0xf6, 0xa1, 0xab, 0xfe, 0xf9, 0x62,             /* ts_zone: 1700000000123 ms */
    0x02, 0x06, 0xfe, 0x79, 0x47,                   /* amount: branch 1, 3 bytes: -100025 */
    0x48, UUID_BYTES,                               /* uid: 36 characters */
    0x02, 0x6e, 0x86, 0x1b, 0xf0, 0xf9, 0x21, 0x09, 0x40, /* f64: 3.14159 */
    0x02, 0x00, 0x00, 0xc0, 0x3f,                   /* f32: 1.5 */
    0x02, 0x08, 0xc3, 0xa9, 0x22, 0x0a,             /* name: 4 bytes "é\"\n" */
    0x02, 0x06, 0x00, 0xff, 0x10,                   /* blob: 3 bytes */
    0x02, 0x01,                                     /* flag: true */
    0xa8, 0x98, 0xb1, 0xbe, 0xd1, 0x02,             /* at: 45296789012 µs of day */
                                                    /* nothing: no bytes */
    0x0a, TYPED_BYTES,                              /* _shape_table: "typed" */
    0xd0, 0x0f,                                     /* _shape_seq: 1000 */
};

static const char AVRO_ROW1_JSON[] =
    "{\"id\":42,\"born\":\"2023-11-14\",\"ts_n\":\"2023-11-14T22:13:20.123456000\","
    "\"ts_u\":\"2023-11-14T22:13:20.123456\",\"ts_zone\":\"2023-11-14T22:13:20.123Z\",\"amount\":\"-1000.25\","
    "\"uid\":\"" UUID_TEXT "\",\"f64\":3.14159,\"f32\":1.5,\"name\":\"\xc3\xa9\\\"\\n\",\"blob\":\"AP8Q\","
    "\"flag\":true,\"at\":\"12:34:56.789012\",\"nothing\":null,\"_shape_table\":\"typed\",\"_shape_seq\":1000}";

static const uint8_t AVRO_ROW2[] = {
    0x00,                                           /* id: null */
    0x00,                                           /* born: null */
    0x01,                                           /* ts_n: -1 µs */
    0x01,                                           /* ts_u: -1 µs */
    0x00,                                           /* ts_zone: 0 */
    0x02, 0x02, 0x05,                               /* amount: 1 byte, 5 → 0.05 */
    0x48, UUID_BYTES,                               /* uid */
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x7f, /* f64: NaN */
    0x00,                                           /* f32: null */
    0x00,                                           /* name: null */
    0x02, 0x00,                                     /* blob: empty */
    0x02, 0x00,                                     /* flag: false */
    0x00,                                           /* at: midnight */
    0x0a, TYPED_BYTES,                              /* _shape_table */
    0xd2, 0x0f,                                     /* _shape_seq: 1001 */
};

static const char AVRO_ROW2_JSON[] =
    "{\"id\":null,\"born\":null,\"ts_n\":\"1969-12-31T23:59:59.999999000\",\"ts_u\":\"1969-12-31T23:59:59.999999\","
    "\"ts_zone\":\"1970-01-01T00:00:00.000Z\",\"amount\":\"0.05\",\"uid\":\"" UUID_TEXT "\",\"f64\":null,"
    "\"f32\":null,\"name\":null,\"blob\":\"\",\"flag\":false,\"at\":\"00:00:00.000000\",\"nothing\":null,"
    "\"_shape_table\":\"typed\",\"_shape_seq\":1001}";

static void test_avro_rows_decode_to_flat_events(void **state)
{
    fixture *fx = *state;
    avro_typed_columns(&fx->cols);
    uint32_t id = register_schema(fx, "orders-value", "AVRO", AVRO_TYPED);
    assert_int_equal(id, 100);
    make_decoder(fx);
    uint8_t msg[512];
    decodes_to(fx, msg, wire(id, 0, AVRO_ROW1, sizeof AVRO_ROW1, msg), id, AVRO_ROW1_JSON);
    decodes_to(fx, msg, wire(id, 0, AVRO_ROW2, sizeof AVRO_ROW2, msg), id, AVRO_ROW2_JSON);
}

static void test_avro_cut_or_padded_payloads_are_refused(void **state)
{
    fixture *fx = *state;
    avro_typed_columns(&fx->cols);
    uint32_t id = register_schema(fx, "orders-value", "AVRO", AVRO_TYPED);
    make_decoder(fx);
    uint8_t msg[512];
    size_t len = wire(id, 0, AVRO_ROW1, sizeof AVRO_ROW1, msg);
    for (size_t cut = 5; cut < len; cut++) refuses(fx, msg, cut, "payload of schema id 100 ends early");
    msg[len] = 0x00;
    refuses(fx, msg, len + 1, "payload of schema id 100 has 1 bytes left over after the record");
    /* a union branch beyond the union, a boolean byte that is not 0 or 1 */
    len = wire(id, 0, AVRO_ROW1, sizeof AVRO_ROW1, msg);
    msg[5] = 0x04;
    refuses(fx, msg, len, "union branch 2 in field 'id'");
    len = wire(id, 0, AVRO_ROW2, sizeof AVRO_ROW2, msg);
    msg[5 + sizeof AVRO_ROW2 - 10] = 0x02; /* flag's value byte */
    refuses(fx, msg, len, "boolean byte 0x02 in field 'flag'");
}

/* ---- Protobuf ---------------------------------------------------------------------- */

static const char PROTO_TYPED[] =
    "syntax = \"proto3\";\n"
    "\n"
    "package shape.events;\n"
    "\n"
    "message typed {\n"
    "  optional int64 id = 1;\n"
    "  optional int32 born = 2;  // date, days since 1970-01-01\n"
    "  optional int64 ts_s = 3;  // timestamp without time zone, wall-clock microseconds since the epoch\n"
    "  optional int64 ts_ns = 4;  // timestamp with time zone, microseconds since the epoch (UTC)\n"
    "  optional string amount = 5;  // decimal(12, 2), canonical text\n"
    "  optional uint64 big = 6;\n"
    "  optional uint32 small = 7;\n"
    "  optional int32 neg = 8;\n"
    "  optional bool flag = 9;\n"
    "  optional float f32 = 10;\n"
    "  optional double f64 = 11;\n"
    "  optional bytes blob = 12;\n"
    "  optional int64 at = 13;  // time of day, microseconds\n"
    "  optional string uid = 14;  // uuid\n"
    "  optional string nothing = 15;\n"
    "  string _shape_table = 16;\n"
    "  int64 _shape_seq = 17;\n"
    "}\n";

static void proto_typed_columns(original *o)
{
    column(o, "l", "id");
    column(o, "tdD", "born");
    column(o, "tss:", "ts_s");
    column(o, "tsn:UTC", "ts_ns");
    column(o, "d:12,2", "amount");
    column(o, "L", "big");
    column(o, "S", "small");
    column(o, "i", "neg");
    column(o, "b", "flag");
    column(o, "f", "f32");
    column(o, "g", "f64");
    column(o, "z", "blob");
    column(o, "ttn", "at");
    uuid_column(o, "uid");
    column(o, "n", "nothing");
    column(o, "u", "_shape_table");
    column(o, "l", "_shape_seq");
}

/* Fields in an order of our choosing: the decoder must not care. */
static const uint8_t PROTO_FULL[] = {
    0x82, 0x01, 0x05, TYPED_BYTES,                  /* 16 _shape_table: "typed" */
    0x88, 0x01, 0xe9, 0x07,                         /* 17 _shape_seq: 1001 */
    0x08, 0xf9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 1 id: -7 */
    0x10, 0xdb, 0x99, 0x01,                         /* 2 born: 19675 */
    0x18, 0x80, 0x80, 0xf9, 0xc0, 0xc1, 0xc4, 0x82, 0x03, /* 3 ts_s: 1700000000000000 µs */
    0x20, 0xc0, 0xc4, 0x80, 0xc1, 0xc1, 0xc4, 0x82, 0x03, /* 4 ts_ns: 1700000000123456 µs */
    0x2a, 0x08, '-', '1', '0', '0', '0', '.', '2', '5', /* 5 amount: "-1000.25" */
    0x30, 0x85, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, /* 6 big: 2^63 + 5 */
    0x38, 0xac, 0x02,                               /* 7 small: 300 */
    0x40, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, /* 8 neg: -5 */
    0x48, 0x00,                                     /* 9 flag: false, set */
    0x55, 0x00, 0x00, 0x80, 0xbe,                   /* 10 f32: -0.25 */
    0x59, 0x35, 0x58, 0x00, 0x66, 0x2d, 0xeb, 0x41, 0x7e, /* 11 f64: 1.5e300 */
    0x62, 0x02, 0xde, 0xad,                         /* 12 blob: 2 bytes */
    0x68, 0x94, 0xcc, 0x98, 0xdf, 0xa8, 0x01,       /* 13 at: 45296789012 µs of day */
    0x72, 0x24, UUID_BYTES,                         /* 14 uid */
};

static const char PROTO_FULL_JSON[] =
    "{\"id\":-7,\"born\":\"2023-11-14\",\"ts_s\":\"2023-11-14T22:13:20\","
    "\"ts_ns\":\"2023-11-14T22:13:20.123456000Z\",\"amount\":\"-1000.25\",\"big\":9223372036854775813,"
    "\"small\":300,\"neg\":-5,\"flag\":false,\"f32\":-0.25,\"f64\":1.5e+300,\"blob\":\"3q0=\","
    "\"at\":\"12:34:56.789012000\",\"uid\":\"" UUID_TEXT "\",\"nothing\":null,\"_shape_table\":\"typed\","
    "\"_shape_seq\":1001}";

/* Only the table: optional fields are null, _shape_seq its default 0. */
static const uint8_t PROTO_SPARSE[] = {0x82, 0x01, 0x05, TYPED_BYTES};

static const char PROTO_SPARSE_JSON[] =
    "{\"id\":null,\"born\":null,\"ts_s\":null,\"ts_ns\":null,\"amount\":null,\"big\":null,\"small\":null,"
    "\"neg\":null,\"flag\":null,\"f32\":null,\"f64\":null,\"blob\":null,\"at\":null,\"uid\":null,"
    "\"nothing\":null,\"_shape_table\":\"typed\",\"_shape_seq\":0}";

static void test_protobuf_messages_decode_to_flat_events(void **state)
{
    fixture *fx = *state;
    proto_typed_columns(&fx->cols);
    uint32_t id = register_schema(fx, "shape.events.typed", "PROTOBUF", PROTO_TYPED);
    make_decoder(fx);
    uint8_t msg[512];
    decodes_to(fx, msg, wire(id, 1, PROTO_FULL, sizeof PROTO_FULL, msg), id, PROTO_FULL_JSON);
    decodes_to(fx, msg, wire(id, 1, PROTO_SPARSE, sizeof PROTO_SPARSE, msg), id, PROTO_SPARSE_JSON);
}

static void test_protobuf_bad_messages_are_refused(void **state)
{
    fixture *fx = *state;
    proto_typed_columns(&fx->cols);
    uint32_t id = register_schema(fx, "shape.events.typed", "PROTOBUF", PROTO_TYPED);
    make_decoder(fx);
    uint8_t msg[512];
    size_t len = wire(id, 1, PROTO_FULL, sizeof PROTO_FULL, msg);
    msg[5] = 1;
    refuses(fx, msg, len, "protobuf message index byte 0x01 of schema id 100 is not 0");
    refuses(fx, msg, 5, "shorter than its header (6 bytes)");
    /* cut inside a varint value, inside a length prefix */
    len = wire(id, 1, PROTO_FULL, sizeof PROTO_FULL, msg);
    refuses(fx, msg, 6 + 8 + 2, "payload of schema id 100 ends early");
    refuses(fx, msg, 6 + 2, "payload of schema id 100 ends early");
    /* cut at a field boundary, before the table: still an error */
    static const uint8_t seq_only[] = {0x88, 0x01, 0xe9, 0x07};
    refuses(fx, msg, wire(id, 1, seq_only, sizeof seq_only, msg), "ends early: it has no _shape_table");
    static const uint8_t unknown_number[] = {0x82, 0x01, 0x05, TYPED_BYTES, 0x90, 0x01, 0x01};
    refuses(fx, msg, wire(id, 1, unknown_number, sizeof unknown_number, msg),
            "field number 18, which the message does not declare");
    static const uint8_t wrong_wire_type[] = {0x82, 0x01, 0x05, TYPED_BYTES, 0x0a, 0x01, 0x00};
    refuses(fx, msg, wire(id, 1, wrong_wire_type, sizeof wrong_wire_type, msg),
            "wire type 2 for field 'id' (expected 0)");
    static const uint8_t twice[] = {0x82, 0x01, 0x05, TYPED_BYTES, 0x08, 0x01, 0x08, 0x02};
    refuses(fx, msg, wire(id, 1, twice, sizeof twice, msg), "has field 'id' twice");
    static const uint8_t long_varint[] = {0x82, 0x01, 0x05, TYPED_BYTES, 0x08, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    refuses(fx, msg, wire(id, 1, long_varint, sizeof long_varint, msg), "varint beyond 64 bits");
}

/* ---- JSON Schema ---------------------------------------------------------------------- */

static const char JSON_TYPED[] =
    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"title\":\"typed\",\"type\":\"object\","
    "\"properties\":{\"id\":{\"type\":[\"integer\",\"null\"]},\"f64\":{\"type\":[\"number\",\"null\"]},"
    "\"name\":{\"type\":[\"string\",\"null\"]},\"big\":{\"type\":[\"integer\",\"null\"]},"
    "\"flag\":{\"type\":[\"boolean\",\"null\"]},\"_shape_table\":{\"type\":\"string\"},"
    "\"_shape_seq\":{\"type\":\"integer\"}},\"required\":[\"_shape_table\",\"_shape_seq\"],"
    "\"additionalProperties\":false}";

static void json_typed_columns(original *o)
{
    column(o, "l", "id");
    column(o, "g", "f64");
    column(o, "u", "name");
    column(o, "L", "big");
    column(o, "b", "flag");
    column(o, "u", "_shape_table");
    column(o, "l", "_shape_seq");
}

static size_t json_message(uint32_t id, const char *text, uint8_t *msg)
{
    return wire(id, 0, (const uint8_t *)text, strlen(text), msg);
}

static void test_json_schema_payloads_are_rerendered_in_column_order(void **state)
{
    fixture *fx = *state;
    json_typed_columns(&fx->cols);
    uint32_t id = register_schema(fx, "orders-value", "JSON", JSON_TYPED);
    make_decoder(fx);
    uint8_t msg[512];
    decodes_to(fx, msg,
               json_message(id,
                            "{ \"_shape_seq\": 7, \"name\": \"caf\\u00e9 \\/ \\\"x\\\"\", \"f64\": 2.50,"
                            " \"id\": -3, \"big\": 18446744073709551615, \"flag\": true, \"_shape_table\": \"typed\" }",
                            msg),
               id,
               "{\"id\":-3,\"f64\":2.5,\"name\":\"caf\xc3\xa9 / \\\"x\\\"\",\"big\":18446744073709551615,"
               "\"flag\":true,\"_shape_table\":\"typed\",\"_shape_seq\":7}");
    decodes_to(fx, msg,
               json_message(id,
                            "{\"id\":null,\"f64\":null,\"name\":null,\"big\":null,\"flag\":null,"
                            "\"_shape_table\":\"typed\",\"_shape_seq\":8}",
                            msg),
               id,
               "{\"id\":null,\"f64\":null,\"name\":null,\"big\":null,\"flag\":null,\"_shape_table\":\"typed\","
               "\"_shape_seq\":8}");
    const char *full = "{\"id\":1,\"f64\":1.0,\"name\":\"a\",\"big\":2,\"flag\":false,\"_shape_table\":\"typed\","
                       "\"_shape_seq\":9}";
    size_t len = json_message(id, full, msg);
    refuses(fx, msg, len * 2 / 3, "payload of schema id 100 is not a JSON object");
    refuses(fx, msg, json_message(id, "[1,2]", msg), "is not a JSON object");
    refuses(fx, msg, json_message(id, "{\"id\":1}", msg), "has no member 'f64'");
    refuses(fx, msg,
            json_message(id, "{\"id\":1,\"id\":2,\"f64\":1.0,\"name\":\"a\",\"big\":2,\"flag\":false}", msg),
            "member 'id' twice");
    refuses(fx, msg, json_message(id, "{\"idx\":1}", msg), "member 'idx', which is not a column");
    refuses(fx, msg, json_message(id, "{\"id\":1.5}", msg), "a number for column 'id' of type l");
    refuses(fx, msg, json_message(id, "{\"name\":[1]}", msg), "an array for column 'name'");
    refuses(fx, msg, json_message(id, "{\"flag\":\"yes\"}", msg), "a string for column 'flag'");
}

/* ---- headers, ids, schemas ------------------------------------------------------------ */

static void test_messages_that_are_not_wire_format_are_refused(void **state)
{
    fixture *fx = *state;
    avro_typed_columns(&fx->cols);
    uint32_t id = register_schema(fx, "orders-value", "AVRO", AVRO_TYPED);
    make_decoder(fx);
    const char *flat = "{\"id\":1}";
    refuses(fx, (const uint8_t *)flat, strlen(flat), "not a Confluent wire-format message (magic byte 0x7b)");
    static const uint8_t three[] = {0x00, 0x00, 0x00};
    refuses(fx, three, sizeof three, "wire-format message of 3 bytes is shorter than its header (5 bytes)");
    refuses(fx, three, 0, "wire-format message of 0 bytes is shorter");
    uint8_t msg[512];
    size_t len = wire(999, 0, AVRO_ROW1, sizeof AVRO_ROW1, msg);
    refuses(fx, msg, len, "unknown schema id 999");
    /* the known id still decodes after the failures */
    decodes_to(fx, msg, wire(id, 0, AVRO_ROW1, sizeof AVRO_ROW1, msg), id, AVRO_ROW1_JSON);
}

static void test_schemas_are_fetched_once_per_id(void **state)
{
    fixture *fx = *state;
    avro_typed_columns(&fx->cols);
    uint32_t id = register_schema(fx, "orders-value", "AVRO", AVRO_TYPED);
    make_decoder(fx);
    uint64_t before = shape_kafka_schema_registry_requests(fx->client);
    uint8_t msg[512];
    for (int i = 0; i < 3; i++) decodes_to(fx, msg, wire(id, 0, AVRO_ROW1, sizeof AVRO_ROW1, msg), id, AVRO_ROW1_JSON);
    assert_int_equal(shape_kafka_schema_registry_requests(fx->client) - before, 1);
    size_t n = shape_kafka_fake_registry_request_count(fx->fake);
    const char *method, *path, *body;
    shape_kafka_fake_registry_request(fx->fake, n - 1, &method, &path, &body);
    assert_string_equal(method, "GET");
    assert_string_equal(path, "/schemas/ids/100");
}

/* A schema registered under its own subject, then a message decoded under it. */
static void schema_refused(fixture *fx, const char *subject, const char *type, const char *text, const char *why)
{
    uint32_t id = register_schema(fx, subject, type, text);
    uint8_t msg[64];
    static const uint8_t payload[] = {0x00};
    refuses(fx, msg, wire(id, strcmp(type, "PROTOBUF") == 0, payload, sizeof payload, msg), why);
}

static void test_schemas_the_decoder_cannot_use_are_refused(void **state)
{
    fixture *fx = *state;
    column(&fx->cols, "l", "a");
    column(&fx->cols, "u", "_shape_table");
    make_decoder(fx);
    schema_refused(fx, "s1", "AVRO",
                   "{\"type\":\"record\",\"name\":\"t\",\"fields\":[{\"name\":\"a\",\"type\":{\"type\":\"array\","
                   "\"items\":\"long\"}},{\"name\":\"_shape_table\",\"type\":\"string\"}]}",
                   "field 'a' of schema id 100 has an unknown type {\"type\":\"array\",\"items\":\"long\"}");
    schema_refused(fx, "s2", "AVRO",
                   "{\"type\":\"record\",\"name\":\"t\",\"fields\":[{\"name\":\"a\",\"type\":[\"int\",\"long\"]},"
                   "{\"name\":\"_shape_table\",\"type\":\"string\"}]}",
                   "field 'a' of schema id 101 has an unknown type [\"int\",\"long\"]");
    schema_refused(fx, "s3", "AVRO",
                   "{\"type\":\"record\",\"name\":\"t\",\"fields\":[{\"name\":\"_shape_table\",\"type\":\"string\"}]}",
                   "field 'a' is not in schema id 102");
    schema_refused(fx, "s4", "AVRO",
                   "{\"type\":\"record\",\"name\":\"t\",\"fields\":[{\"name\":\"a\",\"type\":[\"null\",\"int\"]},"
                   "{\"name\":\"_shape_table\",\"type\":\"string\"}]}",
                   "field 'a' of schema id 103 is [null, int], which does not carry column type l");
    schema_refused(fx, "s5", "AVRO",
                   "{\"type\":\"record\",\"name\":\"t\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"},"
                   "{\"name\":\"b\",\"type\":\"long\"},{\"name\":\"_shape_table\",\"type\":\"string\"}]}",
                   "field 'b' of schema id 104 is not a column of the events");
    schema_refused(fx, "s6", "AVRO", "{\"type\":\"enum\"}", "schema id 105 is not an Avro record with fields");
    schema_refused(fx, "s7", "AVRO",
                   "{\"type\":\"record\",\"name\":\"t\",\"fields\":[{\"name\":\"a\",\"type\":{\"type\":\"long\","
                   "\"logicalType\":\"duration\"}},{\"name\":\"_shape_table\",\"type\":\"string\"}]}",
                   "field 'a' of schema id 106 has an unknown type");
    schema_refused(fx, "s8", "PROTOBUF",
                   "syntax = \"proto3\";\nmessage t {\n  sint64 a = 1;\n  string _shape_table = 2;\n}\n",
                   "field 'a' of schema id 107 has an unknown type 'sint64'");
    schema_refused(fx, "s9", "PROTOBUF",
                   "syntax = \"proto3\";\nmessage t {\n  repeated int64 a = 1;\n  string _shape_table = 2;\n}\n",
                   "field 'a' of schema id 108 has an unknown type 'repeated int64'");
    schema_refused(fx, "s10", "PROTOBUF", "syntax = \"proto2\";\nmessage t {\n}\n",
                   "schema id 109: line 1 of the proto text does not declare syntax = \"proto3\";");
    schema_refused(fx, "s11", "PROTOBUF", "syntax = \"proto3\";\nmessage t {\n  int64 a = 1;\n",
                   "schema id 110 has no complete message");
    schema_refused(fx, "s12", "PROTOBUF",
                   "syntax = \"proto3\";\nmessage t {\n  int64 a = 1;\n  string _shape_table = 1;\n}\n",
                   "line 4 of the proto text repeats a field name or number");
    schema_refused(fx, "s13", "PROTOBUF",
                   "syntax = \"proto3\";\nmessage t {\n  int32 a = 1;\n  string _shape_table = 2;\n}\n",
                   "field 'a' of schema id 112 is int32, which does not carry column type l");
    schema_refused(fx, "s14", "JSON", "{\"properties\":{\"_shape_table\":{}}}", "field 'a' is not in schema id 113");
}

static void test_original_schema_is_checked(void **state)
{
    fixture *fx = *state;
    column(&fx->cols, "+l", "tags");
    shape_err err;
    assert_int_equal(shape_kafka_wire_decoder_new(fx->client, &fx->cols.root, &fx->decoder, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "column 'tags' has type +l, which the registry formats do not map");
    assert_null(fx->decoder);
}

/* ---- round trip through the encoders ---------------------------------------------- */

#define ROWS 8
#define D128(v) (int64_t)(v), ((int64_t)(v) < 0 ? -1 : 0) /* decimal128: low word, then sign */

static const uint8_t NULL_AT_1_3[] = {0xf5};
static const uint8_t NULL_AT_3[] = {0xf7};
static const uint8_t NULL_AT_6[] = {0xbf};

static const int32_t BORN[ROWS] = {19675, 0, -1, 18000, 20000, -719162, 2932896, 3};
static const int64_t BORN64[ROWS] = {1700000000000 / 86400000 * 86400000, 0, -86400000, 86400000, 0, 0, 0, 0};
static const int64_t ID[ROWS] = {1, -1, INT64_MAX, INT64_MIN, 0, 42, -42, 1000000};
static const int8_t TINY[ROWS] = {-128, 127, 0, -1, 1, 2, 3, 4};
static const int16_t SHORT[ROWS] = {-32768, 32767, 0, -1, 1, 2, 3, 4};
static const int32_t MID[ROWS] = {INT32_MIN, INT32_MAX, 0, -1, 1, 2, 3, 4};
static const uint8_t U8[ROWS] = {255, 0, 1, 2, 3, 4, 5, 6};
static const uint16_t U16[ROWS] = {65535, 0, 1, 2, 3, 4, 5, 6};
static const uint32_t U32[ROWS] = {4000000000u, 0, UINT32_MAX, 2, 3, 4, 5, 6};
static const uint64_t U64[ROWS] = {4611686018427387904u, 0, INT64_MAX, 2, 3, 4, 5, 6};
static const uint8_t FLAG[] = {0xa5};
static const float F32[ROWS] = {1.5f, -0.25f, 1.1f, 0.0f, 3.4e38f, __builtin_nanf(""), __builtin_inff(), 0.1f};
static const double F64[ROWS] = {__builtin_nan(""), __builtin_inf(), -__builtin_inf(), 0.0,
                                 1.5e300, -0.0, 3.14159, 2.0};
static const int32_t NAME_OFFSETS[ROWS + 1] = {0, 2, 10, 20, 20, 20, 25, 29, 31};
static const char NAME_TEXT[] = "\xc3\xa9say \"hi\"\"line\nbreak\"plaintab\t\xc3\xbc";
static const int32_t UID_OFFSETS[ROWS + 1] = {0, 2, 4, 6, 8, 10, 12, 14, 16};
static const char UID_TEXT[] = "u0u1u2u3u4u5u6u7";
static const int32_t BLOB_OFFSETS[ROWS + 1] = {0, 3, 3, 4, 4, 6, 6, 7, 8};
static const uint8_t BLOB_DATA[] = {0x00, 0xff, 0x10, 0x7f, 0xde, 0xad, 0x01, 0x02};
static const int64_t AMOUNT[2 * ROWS] = {D128(-100025), D128(0), D128(999999999999), D128(-999999999999),
                                         D128(5), D128(100), D128(0), D128(-1)};
static const int64_t TINY_DEC[2 * ROWS] = {D128(123456789012345678), D128(-1), D128(0), D128(100000000),
                                           D128(-999999999999999999), D128(7), D128(8), D128(9)};
static const int64_t AT_US[ROWS] = {0, 86399999999, 45296789012, 1, 2, 3, 4, 5};
static const int32_t AT_MS[ROWS] = {0, 86399999, 45296789, 1, 2, 3, 4, 5};
static const int32_t AT_S[ROWS] = {0, 86399, 45296, 1, 2, 3, 4, 5};
static const int64_t AT_NS[ROWS] = {0, 86399999999000, 45296789012000, 1000, 2000, 3000, 4000, 5000};
static const int64_t TS_US[ROWS] = {1700000000123456, 0, -1, 253402300799999999, -62135596800000000, 1, 2, 3};
static const int64_t TS_MS[ROWS] = {1700000000123, 0, -1, 253402300799999, -62135596800000, 1, 2, 3};
static const int64_t TS_S[ROWS] = {1700000000, 0, -1, 253402300799, -62135596800, 1, 2, 3};
static const int64_t TS_NS[ROWS] = {1700000000123456000, 0, -1000, 1000, 2000, 3000, 4000, 5000};
static const uint8_t UUIDS[16 * ROWS] = {
    0x0f, 0x8f, 0xad, 0x5b, 0xd9, 0xcb, 0x46, 0x9f, 0xa1, 0x65, 0x70, 0x86, 0x77, 0x28, 0x95, 0x0e, [16] = 0xff,
    [31] = 0x01, [32] = 0xab, [47] = 0xcd};
static const int32_t DICT_INDICES[ROWS] = {2, 0, 1, 0, 2, 2, 1, 0};
static const int32_t DICT_OFFSETS[4] = {0, 5, 10, 17};
static const char DICT_TEXT[] = "northsouth\xc3\xa9\"ast\n";
static const int32_t TABLE_OFFSETS[ROWS + 1] = {0, 5, 10, 15, 20, 25, 30, 35, 40};
static const char TABLE_TEXT[] = "typedtypedtypedtypedtypedtypedtypedtyped";
static const int64_t SEQ[ROWS] = {1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007};

static const rt_column DICT_VALUES = {.format = "u", .values = DICT_OFFSETS, .data = DICT_TEXT};

static size_t typed_columns(rt_column *c)
{
    size_t n = 0;
    c[n++] = (rt_column){.name = "born", .format = "tdD", .nullable = 1, .validity = NULL_AT_1_3, .values = BORN};
    c[n++] = (rt_column){.name = "born64", .format = "tdm", .nullable = 1, .values = BORN64};
    c[n++] = (rt_column){.name = "id", .format = "l", .nullable = 1, .values = ID};
    c[n++] = (rt_column){.name = "tiny", .format = "c", .nullable = 1, .values = TINY};
    c[n++] = (rt_column){.name = "short", .format = "s", .nullable = 1, .values = SHORT};
    c[n++] = (rt_column){.name = "mid", .format = "i", .nullable = 1, .values = MID};
    c[n++] = (rt_column){.name = "u8", .format = "C", .nullable = 1, .values = U8};
    c[n++] = (rt_column){.name = "u16", .format = "S", .nullable = 1, .values = U16};
    c[n++] = (rt_column){.name = "u32", .format = "I", .nullable = 1, .values = U32};
    c[n++] = (rt_column){.name = "u64", .format = "L", .nullable = 1, .values = U64};
    c[n++] = (rt_column){.name = "flag", .format = "b", .nullable = 1, .validity = NULL_AT_1_3, .values = FLAG};
    c[n++] = (rt_column){.name = "f32", .format = "f", .nullable = 1, .validity = NULL_AT_1_3, .values = F32};
    c[n++] = (rt_column){.name = "f64", .format = "g", .nullable = 1, .validity = NULL_AT_3, .values = F64};
    c[n++] = (rt_column){.name = "name", .format = "u", .nullable = 1, .validity = NULL_AT_3,
                         .values = NAME_OFFSETS, .data = NAME_TEXT};
    c[n++] = (rt_column){.name = "uid", .format = "u", .values = UID_OFFSETS, .data = UID_TEXT};
    c[n++] = (rt_column){.name = "blob", .format = "z", .nullable = 1, .validity = NULL_AT_1_3,
                         .values = BLOB_OFFSETS, .data = BLOB_DATA};
    c[n++] = (rt_column){.name = "amount", .format = "d:12,2", .nullable = 1, .validity = NULL_AT_6, .values = AMOUNT};
    c[n++] = (rt_column){.name = "tiny_dec", .format = "d:18,8", .values = TINY_DEC};
    c[n++] = (rt_column){.name = "at", .format = "ttu", .nullable = 1, .values = AT_US};
    c[n++] = (rt_column){.name = "at_ms", .format = "ttm", .nullable = 1, .values = AT_MS};
    c[n++] = (rt_column){.name = "at_s", .format = "tts", .nullable = 1, .values = AT_S};
    c[n++] = (rt_column){.name = "at_ns", .format = "ttn", .nullable = 1, .values = AT_NS};
    c[n++] = (rt_column){.name = "ts_naive", .format = "tsu:", .nullable = 1, .values = TS_US};
    c[n++] = (rt_column){.name = "ts_ms", .format = "tsm:", .nullable = 1, .values = TS_MS};
    c[n++] = (rt_column){.name = "ts_s", .format = "tss:", .nullable = 1, .validity = NULL_AT_6, .values = TS_S};
    c[n++] = (rt_column){.name = "ts_utc", .format = "tsu:UTC", .nullable = 1, .values = TS_US};
    c[n++] = (rt_column){.name = "ts_zone", .format = "tsm:Europe/Paris", .nullable = 1, .values = TS_MS};
    c[n++] = (rt_column){.name = "ts_nano", .format = "tsn:", .values = TS_NS};
    c[n++] = (rt_column){.name = "uuid", .format = "w:16", .nullable = 1, .validity = NULL_AT_3, .values = UUIDS,
                         .metadata = rt_uuid_metadata()};
    c[n++] = (rt_column){.name = "region", .format = "i", .nullable = 1, .validity = NULL_AT_1_3,
                         .values = DICT_INDICES, .dictionary = &DICT_VALUES, .dictionary_length = 3};
    c[n++] = (rt_column){.name = "nothing", .format = "n", .nullable = 1};
    c[n++] = (rt_column){.name = "_shape_table", .format = "u", .values = TABLE_OFFSETS, .data = TABLE_TEXT};
    c[n++] = (rt_column){.name = "_shape_seq", .format = "l", .values = SEQ};
    return n;
}

/* Encode a row with the real codec, in the wire format. */
static size_t encode_message(const shape_kafka_regfmt_codec *codec, uint32_t id, const struct ArrowArray *array,
                             int64_t row, shape_json_buf *buf)
{
    shape_err err;
    buf->len = 0;
    assert_int_equal(shape_json_buf_reserve(buf, SHAPE_KAFKA_WIRE_HEADER_MAX), 0);
    buf->len = shape_kafka_wire_header(shape_kafka_regfmt_codec_format(codec), id, (uint8_t *)buf->data);
    if (shape_kafka_regfmt_encode(codec, array, row, buf, &err) != SHAPE_OK)
        fail_msg("encode row %lld: %s", (long long)row, err.message);
    return buf->len;
}

static void round_trip(fixture *fx, shape_kafka_regfmt format, const char *subject)
{
    rt_column cols[MAX_COLUMNS];
    size_t n = typed_columns(cols);
    struct ArrowSchema schema;
    struct ArrowArray array;
    rt_batch_make(cols, (int)n, ROWS, 0, &schema, &array);
    shape_kafka_regfmt_codec *codec = NULL;
    shape_err err;
    if (shape_kafka_regfmt_codec_new(format, "typed", &schema, &codec, &err) != SHAPE_OK)
        fail_msg("codec %s: %s", shape_kafka_regfmt_name(format), err.message);
    uint32_t id = register_schema(fx, subject, shape_kafka_regfmt_schema_type(format), shape_kafka_regfmt_codec_schema(codec));
    if (shape_kafka_wire_decoder_new(fx->client, &schema, &fx->decoder, &err) != SHAPE_OK)
        fail_msg("decoder: %s", err.message);
    shape_json_buf msg = SHAPE_JSON_BUF_INIT, flat = SHAPE_JSON_BUF_INIT;
    for (int64_t row = 0; row < ROWS; row++) {
        size_t len = encode_message(codec, id, &array, row, &msg);
        flat.len = 0;
        if (shape_kafka_flat_json_row(&schema, &array, row, &flat, &err) != SHAPE_OK) fail_msg("flat: %s", err.message);
        decodes_to(fx, (const uint8_t *)msg.data, len, id, flat.data);
        size_t cut = 2 * len / 3 ? 2 * len / 3 : 1;
        shape_err_clear(&err);
        fx->out.len = 0;
        if (shape_kafka_wire_decode(fx->decoder, msg.data, cut, &fx->out, NULL, &err) != SHAPE_EINVAL)
            fail_msg("%s row %lld cut to %zu of %zu bytes decoded: %s", shape_kafka_regfmt_name(format), (long long)row,
                     cut, len, fx->out.data);
        assert_int_equal(fx->out.len, 0);
    }
    shape_json_buf_reset(&msg);
    shape_json_buf_reset(&flat);
    shape_kafka_regfmt_codec_free(codec);
    rt_batch_release(&schema, &array);
}

static void test_avro_round_trip_equals_flat_events(void **state)
{
    round_trip(*state, SHAPE_KAFKA_REGFMT_AVRO, "orders-value");
}

static void test_protobuf_round_trip_equals_flat_events(void **state)
{
    round_trip(*state, SHAPE_KAFKA_REGFMT_PROTOBUF, "orders-value");
}

static void test_json_schema_round_trip_equals_flat_events(void **state)
{
    round_trip(*state, SHAPE_KAFKA_REGFMT_JSON_SCHEMA, "orders-value");
}

/* Avro and Protobuf carry microseconds: nanoseconds are cut, JSON keeps them. */
static void test_nanoseconds_are_truncated_to_microseconds(void **state)
{
    fixture *fx = *state;
    static const int64_t ns[] = {1700000000123456789};
    static const int64_t seq[] = {1};
    static const int32_t table_offsets[] = {0, 1};
    rt_column cols[] = {{.name = "ts", .format = "tsn:", .values = ns},
                        {.name = "_shape_table", .format = "u", .values = table_offsets, .data = "t"},
                        {.name = "_shape_seq", .format = "l", .values = seq}};
    struct ArrowSchema schema;
    struct ArrowArray array;
    rt_batch_make(cols, 3, 1, 0, &schema, &array);
    static const struct {
        shape_kafka_regfmt format;
        const char *subject, *ts;
    } cases[] = {{SHAPE_KAFKA_REGFMT_AVRO, "a", "2023-11-14T22:13:20.123456000"},
                 {SHAPE_KAFKA_REGFMT_PROTOBUF, "p", "2023-11-14T22:13:20.123456000"},
                 {SHAPE_KAFKA_REGFMT_JSON_SCHEMA, "j", "2023-11-14T22:13:20.123456789"}};
    shape_json_buf msg = SHAPE_JSON_BUF_INIT;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shape_kafka_regfmt_codec *codec = NULL;
        shape_err err;
        assert_int_equal(shape_kafka_regfmt_codec_new(cases[i].format, "t", &schema, &codec, &err), SHAPE_OK);
        uint32_t id = register_schema(fx, cases[i].subject, shape_kafka_regfmt_schema_type(cases[i].format),
                                      shape_kafka_regfmt_codec_schema(codec));
        shape_kafka_wire_decoder_free(fx->decoder);
        fx->decoder = NULL;
        assert_int_equal(shape_kafka_wire_decoder_new(fx->client, &schema, &fx->decoder, &err), SHAPE_OK);
        size_t len = encode_message(codec, id, &array, 0, &msg);
        char expected[128];
        snprintf(expected, sizeof expected, "{\"ts\":\"%s\",\"_shape_table\":\"t\",\"_shape_seq\":1}", cases[i].ts);
        decodes_to(fx, (const uint8_t *)msg.data, len, id, expected);
        shape_kafka_regfmt_codec_free(codec);
    }
    shape_json_buf_reset(&msg);
    rt_batch_release(&schema, &array);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_avro_rows_decode_to_flat_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_avro_cut_or_padded_payloads_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protobuf_messages_decode_to_flat_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protobuf_bad_messages_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_schema_payloads_are_rerendered_in_column_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_messages_that_are_not_wire_format_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schemas_are_fetched_once_per_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schemas_the_decoder_cannot_use_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_original_schema_is_checked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_avro_round_trip_equals_flat_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protobuf_round_trip_equals_flat_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_schema_round_trip_equals_flat_events, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nanoseconds_are_truncated_to_microseconds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* fuzz_wire_decode.c — libFuzzer target for the Confluent wire-format
 * decoder (registry/wire_decode.h) and the schema parsers behind it (Avro
 * JSON, proto3 text, JSON Schema).
 *
 * Why: the decoder reads two things it does not control, the registry's
 * schema text and the message bytes; neither may crash it, leak or make it
 * read out of bounds, whatever they hold. Refusals are fine.
 * How: byte 0 picks the format (avro, protobuf, json-schema: byte % 3) and
 * the original Arrow schema of the events ((byte / 3) % 2: a typed table of
 * most mapped types, or a small one), both built once. The rest is split at
 * the first 0xFF 0xFF pair into a schema text and the message; without the
 * pair it is all message. Per input, a fresh in-process fake registry
 * (registry/fake.h) gets the codec's own valid schema for that format and
 * table under "valid-value" (id 100), then the fuzzed text, with the
 * format's schema type, under "fuzzed-value" (id 101, or 100 when it is the
 * same text); the message's id bytes may name either, or nothing. A fresh
 * decoder then decodes the message twice (the second time from its schema
 * cache). Invariants (abort when broken): both decodes agree; a success
 * appends one `{...}` object and reports the header's id; a failure leaves
 * the output as it was and says why.
 *
 * Seeds: run with SHAPE_FUZZ_WRITE_SEEDS=DIR, the target writes valid inputs
 * (rows encoded with shape_kafka_regfmt_encode after shape_kafka_wire_header, for every
 * format and table, naming id 100 or a re-registered copy with id 101) into
 * DIR and exits; tests/fuzz/CMakeLists.txt does that after each build, so
 * the seeds always match the current encoders.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_seed.h"
#include "../unit/regfmt_arrays.h"
#include "registry/client.h"
#include "registry/fake.h"
#include "registry/formats.h"
#include "registry/wire_decode.h"

#define ROWS 2
#define NTABLES 2

static const shape_kafka_regfmt FORMATS[3] = {SHAPE_KAFKA_REGFMT_AVRO, SHAPE_KAFKA_REGFMT_PROTOBUF, SHAPE_KAFKA_REGFMT_JSON_SCHEMA};

/* ---- the original tables (two rows of data, for the seeds) ----------------- */

static const uint8_t NULL_AT_1[] = {0x01};
static const int32_t BORN[ROWS] = {19675, -1};
static const int64_t ID[ROWS] = {INT64_MIN, 42};
static const int8_t TINY[ROWS] = {-128, 127};
static const uint32_t U32[ROWS] = {4000000000u, 0};
static const uint64_t U64[ROWS] = {UINT64_MAX / 4, 1};
static const uint8_t FLAG[] = {0x01};
static const float F32[ROWS] = {1.5f, -0.25f};
static const double F64[ROWS] = {3.14159, -1e300};
static const int32_t NAME_OFFSETS[ROWS + 1] = {0, 6, 6};
static const char NAME_TEXT[] = "\xc3\xa9t\"\n\\";
static const int32_t BLOB_OFFSETS[ROWS + 1] = {0, 3, 4};
static const uint8_t BLOB_DATA[] = {0x00, 0xff, 0x10, 0x7f};
static const int64_t AMOUNT[2 * ROWS] = {-100025, -1, 999999999999, 0};
static const int64_t AT_US[ROWS] = {86399999999, 1};
static const int32_t AT_MS[ROWS] = {45296789, 0};
static const int64_t TS_US[ROWS] = {1700000000123456, -1};
static const int64_t TS_MS[ROWS] = {253402300799999, -62135596800000};
static const int64_t TS_NS[ROWS] = {1700000000123456789, -1000};
static const uint8_t UUIDS[16 * ROWS] = {0x0f, 0x8f, 0xad, 0x5b, 0xd9, 0xcb, 0x46, 0x9f,
                                         0xa1, 0x65, 0x70, 0x86, 0x77, 0x28, 0x95, 0x0e};
static const int32_t DICT_INDICES[ROWS] = {1, 0};
static const int32_t DICT_OFFSETS[3] = {0, 5, 10};
static const char DICT_TEXT[] = "northsouth";
static const int32_t TABLE_OFFSETS[ROWS + 1] = {0, 1, 2};
static const char TABLE_TEXT[] = "tt";
static const int64_t SEQ[ROWS] = {1000, 1001};

static const rt_column DICT_VALUES = {.format = "u", .values = DICT_OFFSETS, .data = DICT_TEXT};

static int typed_columns(rt_column *c)
{
    int n = 0;
    c[n++] = (rt_column){.name = "born", .format = "tdD", .nullable = 1, .validity = NULL_AT_1, .values = BORN};
    c[n++] = (rt_column){.name = "id", .format = "l", .values = ID};
    c[n++] = (rt_column){.name = "tiny", .format = "c", .nullable = 1, .values = TINY};
    c[n++] = (rt_column){.name = "u32", .format = "I", .nullable = 1, .values = U32};
    c[n++] = (rt_column){.name = "u64", .format = "L", .nullable = 1, .values = U64};
    c[n++] = (rt_column){.name = "flag", .format = "b", .nullable = 1, .values = FLAG};
    c[n++] = (rt_column){.name = "f32", .format = "f", .nullable = 1, .values = F32};
    c[n++] = (rt_column){.name = "f64", .format = "g", .values = F64};
    c[n++] = (rt_column){.name = "name", .format = "u", .nullable = 1, .values = NAME_OFFSETS, .data = NAME_TEXT};
    c[n++] = (rt_column){.name = "blob", .format = "z", .nullable = 1, .validity = NULL_AT_1,
                         .values = BLOB_OFFSETS, .data = BLOB_DATA};
    c[n++] = (rt_column){.name = "amount", .format = "d:12,2", .nullable = 1, .values = AMOUNT};
    c[n++] = (rt_column){.name = "at", .format = "ttu", .nullable = 1, .values = AT_US};
    c[n++] = (rt_column){.name = "at_ms", .format = "ttm", .values = AT_MS};
    c[n++] = (rt_column){.name = "ts_naive", .format = "tsu:", .nullable = 1, .values = TS_US};
    c[n++] = (rt_column){.name = "ts_zone", .format = "tsm:Europe/Paris", .nullable = 1, .values = TS_MS};
    c[n++] = (rt_column){.name = "ts_nano", .format = "tsn:UTC", .values = TS_NS};
    c[n++] = (rt_column){.name = "uuid", .format = "w:16", .nullable = 1, .validity = NULL_AT_1, .values = UUIDS,
                         .metadata = rt_uuid_metadata()};
    c[n++] = (rt_column){.name = "region", .format = "i", .nullable = 1, .values = DICT_INDICES,
                         .dictionary = &DICT_VALUES, .dictionary_length = 2};
    c[n++] = (rt_column){.name = "nothing", .format = "n", .nullable = 1};
    c[n++] = (rt_column){.name = "_shape_table", .format = "u", .values = TABLE_OFFSETS, .data = TABLE_TEXT};
    c[n++] = (rt_column){.name = "_shape_seq", .format = "l", .values = SEQ};
    return n;
}

static int small_columns(rt_column *c)
{
    int n = 0;
    c[n++] = (rt_column){.name = "id", .format = "l", .values = ID};
    c[n++] = (rt_column){.name = "name", .format = "u", .nullable = 1, .validity = NULL_AT_1,
                         .values = NAME_OFFSETS, .data = NAME_TEXT};
    c[n++] = (rt_column){.name = "_shape_table", .format = "u", .values = TABLE_OFFSETS, .data = TABLE_TEXT};
    c[n++] = (rt_column){.name = "_shape_seq", .format = "l", .values = SEQ};
    return n;
}

/* Built once, kept for the process. */
typedef struct table {
    struct ArrowSchema schema;
    struct ArrowArray array;
    shape_kafka_regfmt_codec *codecs[3]; /* per FORMATS entry */
} table;

static table TABLES[NTABLES];

static void tables_init(void)
{
    static int done;
    if (done) return;
    done = 1;
    for (int t = 0; t < NTABLES; t++) {
        rt_column cols[32];
        int n = t == 0 ? typed_columns(cols) : small_columns(cols);
        rt_batch_make(cols, n, ROWS, 0, &TABLES[t].schema, &TABLES[t].array);
        for (int f = 0; f < 3; f++) {
            shape_err err;
            if (shape_kafka_regfmt_codec_new(FORMATS[f], "t", &TABLES[t].schema, &TABLES[t].codecs[f], &err) != SHAPE_OK) {
                fprintf(stderr, "fuzz_wire_decode: codec %d/%d: %s\n", t, f, err.message);
                abort();
            }
        }
    }
}

/* ---- one input ------------------------------------------------------------- */

static shape_kafka_schema_registry_client *client_new(shape_kafka_fake_registry *fake)
{
    shape_kafka_schema_registry_settings s;
    memset(&s, 0, sizeof s);
    s.url = "http://registry.test:8081";
    s.ssl_verify = 1;
    s.transport = shape_kafka_fake_registry_transport;
    s.transport_ctx = fake;
    shape_kafka_schema_registry_client *client = NULL;
    shape_err err;
    if (shape_kafka_schema_registry_client_new(&s, &client, &err) != SHAPE_OK) abort();
    return client;
}

/* Decode into out (which holds "kept"); check the invariants; 1 = decoded. */
static int decode_checked(shape_kafka_wire_decoder *dec, const uint8_t *msg, size_t len, shape_json_buf *out)
{
    out->len = 0;
    if (shape_json_buf_reserve(out, 8) != 0) abort();
    memcpy(out->data, "kept", 5);
    out->len = 4;
    shape_err err;
    shape_err_clear(&err);
    uint32_t id = 0;
    int rc = shape_kafka_wire_decode(dec, msg, len, out, &id, &err);
    if (rc == SHAPE_OK) {
        if (out->len < 4 + 2 || out->data[4] != '{' || out->data[out->len - 1] != '}') abort();
        if (memcmp(out->data, "kept", 4) != 0 || len < 5) abort();
        if (id != ((uint32_t)msg[1] << 24 | (uint32_t)msg[2] << 16 | (uint32_t)msg[3] << 8 | msg[4])) abort();
        return 1;
    }
    if (rc != SHAPE_EINVAL && rc != SHAPE_ENOTFOUND && rc != SHAPE_ENOMEM) abort();
    if (err.code != rc || !err.message[0]) abort();
    if (out->len != 4 || memcmp(out->data, "kept", 4) != 0) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    tables_init();
    int f = data[0] % 3;
    const table *t = &TABLES[(data[0] / 3) % NTABLES];
    const uint8_t *rest = data + 1, *msg = rest;
    size_t rest_len = size - 1, msg_len = rest_len;
    char *fuzzed = NULL;
    for (size_t i = 0; i + 1 < rest_len; i++)
        if (rest[i] == 0xff && rest[i + 1] == 0xff) {
            fuzzed = malloc(i + 1); /* read as a C string: cut at a NUL */
            if (!fuzzed) return 0;
            memcpy(fuzzed, rest, i);
            fuzzed[i] = '\0';
            msg = rest + i + 2;
            msg_len = rest_len - i - 2;
            break;
        }

    shape_kafka_fake_registry *fake = NULL;
    shape_err err;
    if (shape_kafka_fake_registry_new(&fake, &err) != SHAPE_OK) abort();
    shape_kafka_schema_registry_client *client = client_new(fake);
    const char *type = shape_kafka_regfmt_schema_type(FORMATS[f]);
    uint32_t id = 0;
    if (shape_kafka_schema_registry_register(client, "valid-value", type, shape_kafka_regfmt_codec_schema(t->codecs[f]), &id, &err) !=
            SHAPE_OK ||
        id != 100)
        abort();
    /* may be refused (text that is not UTF-8); the message then names an id nobody has */
    if (fuzzed) (void)shape_kafka_schema_registry_register(client, "fuzzed-value", type, fuzzed, &id, &err);

    shape_kafka_wire_decoder *dec = NULL;
    if (shape_kafka_wire_decoder_new(client, &t->schema, &dec, &err) != SHAPE_OK) abort();
    /* an exact copy, so ASan sees any read past the message */
    uint8_t *copy = malloc(msg_len ? msg_len : 1);
    if (!copy) abort();
    if (msg_len) memcpy(copy, msg, msg_len);
    shape_json_buf first = SHAPE_JSON_BUF_INIT, second = SHAPE_JSON_BUF_INIT;
    int ok1 = decode_checked(dec, copy, msg_len, &first);
    int ok2 = decode_checked(dec, copy, msg_len, &second);
    if (ok1 != ok2 || first.len != second.len || memcmp(first.data, second.data, first.len) != 0) abort();

    shape_json_buf_reset(&first);
    shape_json_buf_reset(&second);
    free(copy);
    shape_kafka_wire_decoder_free(dec);
    shape_kafka_schema_registry_client_free(client);
    shape_kafka_fake_registry_free(fake);
    free(fuzzed);
    return 0;
}

/* ---- seeds ------------------------------------------------------------------ */

/* byte 0, [schema text + newline], 0xFF 0xFF, wire header for id, payload of row */
static void seed(const char *dir, int f, int t, int64_t row, int with_schema, uint32_t id)
{
    const shape_kafka_regfmt_codec *codec = TABLES[t].codecs[f];
    shape_json_buf b = SHAPE_JSON_BUF_INIT;
    const char *text = shape_kafka_regfmt_codec_schema(codec);
    size_t text_len = strlen(text);
    if (shape_json_buf_reserve(&b, 1 + text_len + 3 + SHAPE_KAFKA_WIRE_HEADER_MAX) != 0) abort();
    b.data[b.len++] = (char)(t * 3 + f);
    if (with_schema) {
        memcpy(b.data + b.len, text, text_len); /* plus a newline: another text, so another id */
        b.len += text_len;
        b.data[b.len++] = '\n';
    }
    /* always the separator: the payload may hold 0xFF 0xFF itself */
    memcpy(b.data + b.len, "\xff\xff", 2);
    b.len += 2;
    b.len += shape_kafka_wire_header(FORMATS[f], id, (uint8_t *)b.data + b.len);
    shape_err err;
    if (shape_kafka_regfmt_encode(codec, &TABLES[t].array, row, &b, &err) != SHAPE_OK) {
        fprintf(stderr, "fuzz_wire_decode: encode: %s\n", err.message);
        exit(1);
    }
    char name[64];
    snprintf(name, sizeof name, "%s_%s_row%d_id%u", shape_kafka_regfmt_name(FORMATS[f]), t == 0 ? "typed" : "small",
             (int)row, (unsigned)id);
    fuzz_write_seed("fuzz_wire_decode", dir, name, (const uint8_t *)b.data, b.len);
    shape_json_buf_reset(&b);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    tables_init();
    const char *dir = getenv("SHAPE_FUZZ_WRITE_SEEDS");
    if (!dir || !dir[0]) return 0;
    for (int t = 0; t < NTABLES; t++)
        for (int f = 0; f < 3; f++) {
            seed(dir, f, t, 0, 1, 101);
            seed(dir, f, t, 1, 0, 100);
        }
    exit(0);
}

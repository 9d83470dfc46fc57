/* avro_oracle.c — decode captured Avro messages with avro-c and compare them
 * with the flat JSON events they should carry.
 *
 * Why: shape's Avro encoder is otherwise checked only by shape's own wire
 * decoder, so one misreading of the Avro spec could hide in both. avro-c is
 * the Apache project's own C implementation; if it reads back every field
 * of every captured message as the expected event, the bytes are Avro.
 * How: `avro_oracle DIR` reads DIR/schema.avsc (the registered text),
 * DIR/messages.bin (message values, each behind a 4-byte big-endian length)
 * and DIR/expected.jsonl (one flat JSON event per message, same order; see
 * README.md). avro-c parses the schema and decodes each payload (after the
 * 5-byte Confluent header) into a generic record value, which must use every
 * byte. avro-c knows no logical types, so the oracle reads logicalType,
 * scale and precision of each field from the schema JSON itself (jansson)
 * and renders the decoded value in the flat-JSON text forms with its own
 * converters (oracle_text.c). Times and timestamps compare at the precision
 * the Avro type carries (the expected fraction cut or zero-padded to 3 or 6
 * digits). Prints "avro_oracle: N messages decoded and equal" and exits 0,
 * or names the first message and field that differ and exits 1.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avro.h>
#include <jansson.h>

#include "oracle_text.h"

#define TEXT_CAP 512

typedef enum logical_kind {
    LOGICAL_NONE,
    LOGICAL_DATE,
    LOGICAL_TIME_MILLIS,
    LOGICAL_TIME_MICROS,
    LOGICAL_TIMESTAMP_MILLIS,
    LOGICAL_TIMESTAMP_MICROS,
    LOGICAL_LOCAL_TIMESTAMP_MILLIS,
    LOGICAL_LOCAL_TIMESTAMP_MICROS,
    LOGICAL_DECIMAL,
    LOGICAL_UUID
} logical_kind;

typedef struct field_plan {
    const char *name; /* borrowed from the schema JSON */
    logical_kind logical;
    int scale;
    int precision; /* 0: not given */
} field_plan;

typedef struct message_frame {
    const uint8_t *bytes; /* into the messages.bin buffer */
    size_t len;
} message_frame;

typedef struct oracle {
    char *schema_text;
    size_t schema_len;
    json_t *schema_json;
    avro_schema_t schema;
    avro_value_iface_t *iface;
    avro_value_t record;
    int record_made;
    avro_reader_t reader;
    field_plan *fields;
    size_t field_count;
    char *messages_data;
    message_frame *messages;
    size_t message_count;
    json_t **expected;
    size_t expected_count;
} oracle;

static void complain(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("avro_oracle: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

/* ---- input files ---------------------------------------------------------- */

static char *read_whole_file(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        complain("cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, used = 0;
    char *data = malloc(cap + 1);
    while (data) {
        used += fread(data + used, 1, cap - used, f);
        if (used < cap) break;
        char *grown = realloc(data, cap * 2 + 1);
        if (!grown) free(data);
        data = grown;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (!data || failed) {
        complain("cannot read %s", path);
        free(data);
        return NULL;
    }
    data[used] = '\0';
    *len = used;
    return data;
}

static uint32_t big_endian_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int split_messages(oracle *o, size_t len)
{
    const uint8_t *p = (const uint8_t *)o->messages_data, *end = p + len;
    size_t cap = 16;
    o->messages = malloc(cap * sizeof *o->messages);
    while (o->messages && p < end) {
        if (end - p < 4) {
            complain("messages.bin: message %zu has a truncated length prefix", o->message_count + 1);
            return -1;
        }
        uint32_t size = big_endian_u32(p);
        p += 4;
        if ((size_t)(end - p) < size) {
            complain("messages.bin: message %zu claims %u bytes, %zu remain", o->message_count + 1, size,
                     (size_t)(end - p));
            return -1;
        }
        if (o->message_count == cap) {
            message_frame *grown = realloc(o->messages, cap * 2 * sizeof *grown);
            if (!grown) break;
            o->messages = grown;
            cap *= 2;
        }
        o->messages[o->message_count++] = (message_frame){p, size};
        p += size;
    }
    if (!o->messages || p < end) {
        complain("out of memory");
        return -1;
    }
    return 0;
}

static int parse_expected(oracle *o, char *text, size_t len)
{
    size_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    o->expected = calloc(lines + 1, sizeof *o->expected);
    if (!o->expected) return -1;
    char *line = text, *end = text + len;
    while (line < end) {
        char *newline = memchr(line, '\n', (size_t)(end - line));
        size_t line_len = newline ? (size_t)(newline - line) : (size_t)(end - line);
        json_error_t jerr;
        json_t *event = json_loadb(line, line_len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &jerr);
        if (!event || !json_is_object(event)) {
            complain("expected.jsonl line %zu is not a JSON object: %s", o->expected_count + 1,
                     event ? "another JSON value" : jerr.text);
            json_decref(event);
            return -1;
        }
        o->expected[o->expected_count++] = event;
        line += line_len + 1;
    }
    return 0;
}

/* ---- the schema: avro-c's parse, plus logical types from the JSON ----------- */

static logical_kind logical_of_name(const char *name)
{
    static const struct {
        const char *name;
        logical_kind kind;
    } names[] = {
        {"date", LOGICAL_DATE},
        {"time-millis", LOGICAL_TIME_MILLIS},
        {"time-micros", LOGICAL_TIME_MICROS},
        {"timestamp-millis", LOGICAL_TIMESTAMP_MILLIS},
        {"timestamp-micros", LOGICAL_TIMESTAMP_MICROS},
        {"local-timestamp-millis", LOGICAL_LOCAL_TIMESTAMP_MILLIS},
        {"local-timestamp-micros", LOGICAL_LOCAL_TIMESTAMP_MICROS},
        {"decimal", LOGICAL_DECIMAL},
        {"uuid", LOGICAL_UUID},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0) return names[i].kind;
    return LOGICAL_NONE;
}

/* The logical type of a field's type: the type itself, or the non-null
 * branch of a union. */
static void plan_field_type(const json_t *type, field_plan *plan)
{
    if (json_is_array(type)) {
        size_t i;
        json_t *branch;
        json_array_foreach(type, i, branch) {
            if (!(json_is_string(branch) && strcmp(json_string_value(branch), "null") == 0)) {
                plan_field_type(branch, plan);
                return;
            }
        }
        return;
    }
    if (!json_is_object(type)) return;
    const char *logical = json_string_value(json_object_get(type, "logicalType"));
    if (!logical) return;
    plan->logical = logical_of_name(logical);
    plan->scale = (int)json_integer_value(json_object_get(type, "scale"));
    plan->precision = (int)json_integer_value(json_object_get(type, "precision"));
}

static int plan_schema(oracle *o)
{
    if (avro_schema_from_json_length(o->schema_text, o->schema_len, &o->schema) != 0) {
        complain("avro-c refuses schema.avsc: %s", avro_strerror());
        return -1;
    }
    if (!is_avro_record(o->schema)) {
        complain("schema.avsc is not a record schema");
        return -1;
    }
    json_error_t jerr;
    o->schema_json = json_loadb(o->schema_text, o->schema_len, 0, &jerr);
    json_t *fields = json_object_get(o->schema_json, "fields");
    if (!json_is_array(fields) || json_array_size(fields) != avro_schema_record_size(o->schema)) {
        complain("schema.avsc: cannot read the fields' logical types");
        return -1;
    }
    o->field_count = json_array_size(fields);
    o->fields = calloc(o->field_count ? o->field_count : 1, sizeof *o->fields);
    if (!o->fields) return -1;
    for (size_t i = 0; i < o->field_count; i++) {
        json_t *field = json_array_get(fields, i);
        o->fields[i].name = json_string_value(json_object_get(field, "name"));
        if (!o->fields[i].name) {
            complain("schema.avsc: field %zu has no name", i + 1);
            return -1;
        }
        plan_field_type(json_object_get(field, "type"), &o->fields[i]);
    }
    o->iface = avro_generic_class_from_schema(o->schema);
    if (!o->iface || avro_generic_value_new(o->iface, &o->record) != 0) {
        complain("avro-c cannot make a value of the schema: %s", avro_strerror());
        return -1;
    }
    o->record_made = 1;
    return 0;
}

/* ---- comparing one decoded field with the expected JSON value ---------------- */

static int expected_text_is(const json_t *expected, const char *text)
{
    return json_is_string(expected) && strcmp(json_string_value(expected), text) == 0 &&
           strlen(text) == json_string_length(expected);
}

/* A time or timestamp: the expected text at the precision carried. */
static int expected_clock_is(const json_t *expected, const char *text, int fraction_digits)
{
    char fitted[TEXT_CAP];
    if (!json_is_string(expected) || strlen(json_string_value(expected)) != json_string_length(expected))
        return 0;
    if (oracle_fit_fraction(json_string_value(expected), fraction_digits, fitted, sizeof fitted) != 0) return 0;
    return strcmp(fitted, text) == 0;
}

static int compare_int(int32_t v, const field_plan *plan, const json_t *expected, char *got)
{
    switch (plan->logical) {
    case LOGICAL_DATE:
        oracle_date_text(v, got, TEXT_CAP);
        return expected_text_is(expected, got);
    case LOGICAL_TIME_MILLIS:
        oracle_time_text(v, 3, got, TEXT_CAP);
        return expected_clock_is(expected, got, 3);
    default:
        snprintf(got, TEXT_CAP, "%d", v);
        return json_is_integer(expected) && json_integer_value(expected) == v;
    }
}

static int compare_long(int64_t v, const field_plan *plan, const json_t *expected, char *got)
{
    int digits = 6, utc = 0;
    switch (plan->logical) {
    case LOGICAL_TIME_MICROS:
        oracle_time_text(v, 6, got, TEXT_CAP);
        return expected_clock_is(expected, got, 6);
    case LOGICAL_TIMESTAMP_MILLIS: digits = 3; utc = 1; break;
    case LOGICAL_TIMESTAMP_MICROS: utc = 1; break;
    case LOGICAL_LOCAL_TIMESTAMP_MILLIS: digits = 3; break;
    case LOGICAL_LOCAL_TIMESTAMP_MICROS: break;
    default:
        snprintf(got, TEXT_CAP, "%lld", (long long)v);
        return json_is_integer(expected) && json_integer_value(expected) == v;
    }
    oracle_timestamp_text(v, digits, utc, got, TEXT_CAP);
    return expected_clock_is(expected, got, digits);
}

/* Floats: non-finite values travel as the null branch, so a decoded float
 * must equal the expected number at its own precision, sign of zero too. */
static int compare_real(double v, int single, const json_t *expected, char *got)
{
    snprintf(got, TEXT_CAP, single ? "%.9g" : "%.17g", v);
    if (!json_is_number(expected)) return 0;
    double want = json_number_value(expected);
    if (single) want = (float)want;
    return want == v && signbit(want) == signbit(v);
}

static int compare_string(const char *s, size_t size, const json_t *expected, char *got)
{
    size_t len = size ? size - 1 : 0; /* avro-c counts the terminating NUL */
    json_t *shown = json_stringn(s, len);
    char *dump = shown ? json_dumps(shown, JSON_ENCODE_ANY) : NULL;
    snprintf(got, TEXT_CAP, "%s", dump ? dump : "<string that is not UTF-8>");
    free(dump);
    json_decref(shown);
    return json_is_string(expected) && json_string_length(expected) == len &&
           memcmp(json_string_value(expected), s, len) == 0;
}

static int compare_bytes(const uint8_t *b, size_t size, const field_plan *plan, const json_t *expected, char *got)
{
    if (plan->logical != LOGICAL_DECIMAL) {
        if (oracle_base64_text(b, size, got, TEXT_CAP) != 0) snprintf(got, TEXT_CAP, "<%zu bytes>", size);
        return expected_text_is(expected, got);
    }
    int digit_count = 0;
    if (oracle_decimal_text(b, size, plan->scale, got, TEXT_CAP, &digit_count) != 0) {
        snprintf(got, TEXT_CAP, "<decimal of %zu bytes>", size);
        return 0;
    }
    if (plan->precision > 0 && digit_count > plan->precision) {
        size_t used = strlen(got);
        snprintf(got + used, TEXT_CAP - used, " (%d digits, precision %d)", digit_count, plan->precision);
        return 0;
    }
    return expected_text_is(expected, got);
}

/* 1 when the decoded field equals the expected value; `got` always receives
 * the decoded value's text. */
static int compare_field(avro_value_t *field, const field_plan *plan, const json_t *expected, char *got)
{
    avro_value_t value = *field;
    if (avro_value_get_type(field) == AVRO_UNION && avro_value_get_current_branch(field, &value) != 0) {
        snprintf(got, TEXT_CAP, "<union without a branch>");
        return 0;
    }
    switch (avro_value_get_type(&value)) {
    case AVRO_NULL:
        snprintf(got, TEXT_CAP, "null");
        return json_is_null(expected);
    case AVRO_BOOLEAN: {
        int b = 0;
        avro_value_get_boolean(&value, &b);
        snprintf(got, TEXT_CAP, "%s", b ? "true" : "false");
        return json_is_boolean(expected) && json_is_true(expected) == (b != 0);
    }
    case AVRO_INT32: {
        int32_t v = 0;
        avro_value_get_int(&value, &v);
        return compare_int(v, plan, expected, got);
    }
    case AVRO_INT64: {
        int64_t v = 0;
        avro_value_get_long(&value, &v);
        return compare_long(v, plan, expected, got);
    }
    case AVRO_FLOAT: {
        float v = 0;
        avro_value_get_float(&value, &v);
        return compare_real(v, 1, expected, got);
    }
    case AVRO_DOUBLE: {
        double v = 0;
        avro_value_get_double(&value, &v);
        return compare_real(v, 0, expected, got);
    }
    case AVRO_STRING: {
        const char *s = NULL;
        size_t size = 0;
        avro_value_get_string(&value, &s, &size);
        return compare_string(s, size, expected, got);
    }
    case AVRO_BYTES: {
        const void *b = NULL;
        size_t size = 0;
        avro_value_get_bytes(&value, &b, &size);
        return compare_bytes(b, size, plan, expected, got);
    }
    default:
        snprintf(got, TEXT_CAP, "<an Avro type the registry formats never use>");
        return 0;
    }
}

/* ---- one message ------------------------------------------------------------ */

static int report_mismatch(size_t k, const char *field, const char *got, const json_t *expected)
{
    char *want = expected ? json_dumps(expected, JSON_ENCODE_ANY) : NULL;
    complain("message %zu field %s: avro-c read %s, expected %s", k, field, got,
             want ? want : "no such field in expected.jsonl");
    free(want);
    return -1;
}

static int check_no_extra_fields(const oracle *o, size_t k, const json_t *event)
{
    const char *key;
    json_t *unused;
    json_object_foreach((json_t *)event, key, unused) {
        size_t i = 0;
        while (i < o->field_count && strcmp(o->fields[i].name, key) != 0) i++;
        if (i == o->field_count) {
            complain("message %zu field %s: in expected.jsonl, not in the schema", k, key);
            return -1;
        }
    }
    return 0;
}

static int decode_payload(oracle *o, size_t k, const uint8_t *payload, size_t len)
{
    avro_value_reset(&o->record);
    if (!o->reader) o->reader = avro_reader_memory((const char *)payload, (int64_t)len);
    else avro_reader_memory_set_source(o->reader, (const char *)payload, (int64_t)len);
    if (!o->reader) return -1;
    if (avro_value_read(o->reader, &o->record) != 0) {
        complain("message %zu: avro-c cannot decode the payload: %s", k, avro_strerror());
        return -1;
    }
    char extra;
    if (avro_read(o->reader, &extra, 1) == 0) {
        complain("message %zu: the payload goes on after the record", k);
        return -1;
    }
    return 0;
}

static int check_message(oracle *o, size_t k, const message_frame *m, const json_t *event, uint32_t *schema_id)
{
    if (m->len < 5 || m->bytes[0] != 0) {
        complain("message %zu: no Confluent header (%zu bytes, first byte 0x%02x)", k, m->len,
                 m->len ? m->bytes[0] : 0);
        return -1;
    }
    uint32_t id = big_endian_u32(m->bytes + 1);
    if (k == 1) *schema_id = id;
    if (id != *schema_id) {
        complain("message %zu: schema id %u, message 1 has %u", k, id, *schema_id);
        return -1;
    }
    if (decode_payload(o, k, m->bytes + 5, m->len - 5) != 0) return -1;
    for (size_t i = 0; i < o->field_count; i++) {
        avro_value_t field;
        char got[TEXT_CAP];
        if (avro_value_get_by_index(&o->record, i, &field, NULL) != 0) return -1;
        const json_t *want = json_object_get(event, o->fields[i].name);
        if (!want || !compare_field(&field, &o->fields[i], want, got))
            return report_mismatch(k, o->fields[i].name, got, want);
    }
    return check_no_extra_fields(o, k, event);
}

/* ---- the run ------------------------------------------------------------------ */

static int load(oracle *o, const char *dir)
{
    size_t messages_len = 0, expected_len = 0;
    o->schema_text = read_whole_file(dir, "schema.avsc", &o->schema_len);
    if (!o->schema_text || plan_schema(o) != 0) return -1;
    o->messages_data = read_whole_file(dir, "messages.bin", &messages_len);
    if (!o->messages_data || split_messages(o, messages_len) != 0) return -1;
    char *expected_text = read_whole_file(dir, "expected.jsonl", &expected_len);
    int rc = expected_text ? parse_expected(o, expected_text, expected_len) : -1;
    free(expected_text);
    return rc;
}

static int run(oracle *o, const char *dir)
{
    if (load(o, dir) != 0) return -1;
    if (o->message_count != o->expected_count) {
        complain("messages.bin holds %zu messages, expected.jsonl %zu events", o->message_count,
                 o->expected_count);
        return -1;
    }
    if (o->message_count == 0) {
        complain("messages.bin holds no message: nothing to check");
        return -1;
    }
    uint32_t schema_id = 0;
    for (size_t k = 1; k <= o->message_count; k++)
        if (check_message(o, k, &o->messages[k - 1], o->expected[k - 1], &schema_id) != 0) return -1;
    printf("avro_oracle: %zu messages decoded and equal\n", o->message_count);
    return 0;
}

static void release(oracle *o)
{
    if (o->reader) avro_reader_free(o->reader);
    if (o->record_made) avro_value_decref(&o->record);
    if (o->iface) avro_value_iface_decref(o->iface);
    if (o->schema) avro_schema_decref(o->schema);
    json_decref(o->schema_json);
    for (size_t i = 0; i < o->expected_count; i++) json_decref(o->expected[i]);
    free(o->expected);
    free(o->fields);
    free(o->messages);
    free(o->messages_data);
    free(o->schema_text);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: avro_oracle DIR   (DIR holds schema.avsc, messages.bin, expected.jsonl)\n");
        return 2;
    }
    oracle o = {0};
    int rc = run(&o, argv[1]);
    release(&o);
    return rc == 0 ? 0 : 1;
}

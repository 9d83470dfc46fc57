/* wire_decode.c — decode Confluent wire-format messages into flat JSON
 * events, with the registry's copy of the schema only (spec-kafka.md §5).
 *
 * Why: the registry-format tests compare what a consumer would read back
 * with the flat JSON events the rows stand for. The decoder therefore takes
 * nothing from the encoder: the schema comes from the registry by the id in
 * the message, is parsed here (wire_avro.c, wire_proto.c, or jansson for
 * JSON Schema) and drives the decoding; the original Arrow schema only says
 * how each value is WRITTEN (units, zones, scales the formats do not carry).
 * How: the decoder keeps a plan of the original columns (dictionary columns
 * by their value type; `_shape_poison` skipped, as the codecs skip it) and a
 * cache of parsed schemas per id. For each schema every column is matched to
 * the field of the same name and the field's type must be the one §4.5 maps
 * the column's type to, so a schema that would lose information is reported
 * even when the values happen to survive. A message is checked (magic byte,
 * id, Protobuf message index), its payload decoded into raw values, and each
 * column rendered with the flat JSON renderers in the original column order:
 * Avro and Protobuf times and timestamps are rescaled from the wire unit
 * (ms or µs) to the column's unit, Avro decimals are read as big-endian two's
 * complement, JSON Schema payloads are checked member by member against the
 * columns and re-rendered canonically. A Protobuf message without
 * `_shape_table` is refused as cut short: proto3 has no end marker, and every
 * event names its table. Errors leave `out` as it was.
 */
#include "wire_decode.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flat_json.h"
#include "formats.h"
#include "shape/json_write.h"
#include "wire_private.h"

#define POISON_COLUMN "_shape_poison"
#define TABLE_COLUMN "_shape_table"
#define UUID_EXTENSION "arrow.uuid"

typedef struct wire_schema {
    uint32_t id;
    shape_kafka_regfmt format;
    shape_kafka_wire_field *fields; /* JSON Schema: the property names only */
    size_t nfields;
    size_t *field_of_column;
    struct wire_schema *next;
} wire_schema;

struct shape_kafka_wire_decoder {
    shape_kafka_schema_registry_client *reg; /* borrowed */
    shape_kafka_wire_column *columns;
    size_t ncolumns;
    wire_schema *schemas;       /* parsed schemas, by id */
    shape_kafka_wire_value *values;         /* one per field of the schema being decoded */
    size_t values_cap;
    shape_json_scanner *scanner;
    shape_json_buf scratch;     /* JSON Schema: the rendered members */
};

/* ---- original columns ----------------------------------------------------- */

static int has_uuid_extension(const struct ArrowSchema *s)
{
    const char *value;
    int32_t len;
    return s->metadata && shape_arrow_metadata_find(s->metadata, "ARROW:extension:name", &value, &len) &&
           (size_t)len == strlen(UUID_EXTENSION) && memcmp(value, UUID_EXTENSION, (size_t)len) == 0;
}

static int plain_kind(const char *f, shape_kafka_wire_column *c)
{
    static const struct {
        const char *format;
        shape_kafka_wire_column_kind kind;
        int bits, is_unsigned;
    } table[] = {{"n", SHAPE_KAFKA_WIRE_COL_NULL, 0, 0},    {"b", SHAPE_KAFKA_WIRE_COL_BOOL, 0, 0},    {"c", SHAPE_KAFKA_WIRE_COL_INT, 8, 0},
                 {"C", SHAPE_KAFKA_WIRE_COL_INT, 8, 1},     {"s", SHAPE_KAFKA_WIRE_COL_INT, 16, 0},    {"S", SHAPE_KAFKA_WIRE_COL_INT, 16, 1},
                 {"i", SHAPE_KAFKA_WIRE_COL_INT, 32, 0},    {"I", SHAPE_KAFKA_WIRE_COL_INT, 32, 1},    {"l", SHAPE_KAFKA_WIRE_COL_INT, 64, 0},
                 {"L", SHAPE_KAFKA_WIRE_COL_UINT64, 64, 1}, {"e", SHAPE_KAFKA_WIRE_COL_FLOAT, 16, 0},  {"f", SHAPE_KAFKA_WIRE_COL_FLOAT, 32, 0},
                 {"g", SHAPE_KAFKA_WIRE_COL_FLOAT, 64, 0},  {"u", SHAPE_KAFKA_WIRE_COL_STRING, 0, 0},  {"U", SHAPE_KAFKA_WIRE_COL_STRING, 0, 0},
                 {"vu", SHAPE_KAFKA_WIRE_COL_STRING, 0, 0}, {"z", SHAPE_KAFKA_WIRE_COL_BINARY, 0, 0},  {"Z", SHAPE_KAFKA_WIRE_COL_BINARY, 0, 0},
                 {"vz", SHAPE_KAFKA_WIRE_COL_BINARY, 0, 0}, {"tdD", SHAPE_KAFKA_WIRE_COL_DATE, 0, 0}, {"tdm", SHAPE_KAFKA_WIRE_COL_DATE, 0, 0}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(f, table[i].format) == 0) {
            c->kind = table[i].kind;
            c->bits = table[i].bits;
            c->is_unsigned = table[i].is_unsigned;
            return 1;
        }
    }
    return 0;
}

static int unit_digits(char unit)
{
    switch (unit) {
    case 's': return 0;
    case 'm': return 3;
    case 'u': return 6;
    case 'n': return 9;
    default: return -1;
    }
}

/* Parametrised types: fixed-size binary, decimal, time, timestamp. */
static int parametrised_kind(const char *f, int uuid, shape_kafka_wire_column *c)
{
    if (strncmp(f, "w:", 2) == 0) {
        c->kind = uuid && strcmp(f + 2, "16") == 0 ? SHAPE_KAFKA_WIRE_COL_UUID : SHAPE_KAFKA_WIRE_COL_BINARY;
        return 1;
    }
    if (strncmp(f, "d:", 2) == 0) {
        c->kind = SHAPE_KAFKA_WIRE_COL_DECIMAL;
        return sscanf(f + 2, "%d,%d", &c->precision, &c->scale) == 2 && c->precision > 0;
    }
    if (strncmp(f, "tt", 2) == 0 && f[2] && !f[3]) {
        c->kind = SHAPE_KAFKA_WIRE_COL_TIME;
        c->digits = unit_digits(f[2]);
        return c->digits >= 0;
    }
    if (strncmp(f, "ts", 2) == 0 && f[2] && f[3] == ':') {
        c->kind = SHAPE_KAFKA_WIRE_COL_TIMESTAMP;
        c->digits = unit_digits(f[2]);
        c->zoned = f[4] != '\0';
        return c->digits >= 0;
    }
    return 0;
}

static int column_from_arrow(const struct ArrowSchema *field, shape_kafka_wire_column *c, shape_err *err)
{
    const struct ArrowSchema *value = field->dictionary ? field->dictionary : field;
    int uuid = has_uuid_extension(field) || has_uuid_extension(value);
    c->name = strdup(field->name ? field->name : "");
    c->format = strdup(value->format ? value->format : "");
    if (!c->name || !c->format) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (!plain_kind(c->format, c) && !parametrised_kind(c->format, uuid, c))
        return shape_err_set(err, SHAPE_EINVAL, "column '%s' has type %s, which the registry formats do not map",
                             c->name, c->format);
    return SHAPE_OK;
}

static void columns_free(shape_kafka_wire_column *columns, size_t n)
{
    if (!columns) return;
    for (size_t i = 0; i < n; i++) {
        free(columns[i].name);
        free(columns[i].format);
    }
    free(columns);
}

static int columns_from_arrow(shape_kafka_wire_decoder *d, const struct ArrowSchema *original, shape_err *err)
{
    if (!original || !original->format || strcmp(original->format, "+s") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "the original schema of the events must be a struct");
    d->columns = calloc(original->n_children ? (size_t)original->n_children : 1, sizeof *d->columns);
    if (!d->columns) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (int64_t i = 0; i < original->n_children; i++) {
        const struct ArrowSchema *field = original->children[i];
        if (field->name && strcmp(field->name, POISON_COLUMN) == 0) continue;
        SHAPE_RETURN_NOT_OK(column_from_arrow(field, &d->columns[d->ncolumns++], err));
    }
    return SHAPE_OK;
}

/* ---- field types against column types (spec-kafka.md §4.5) ----------------- */

static int avro_carries(const shape_kafka_wire_field *f, const shape_kafka_wire_column *c)
{
    shape_kafka_wire_type t = f->type;
    shape_kafka_wire_logical l = f->logical;
    int coarse = c->digits <= 3; /* s and ms travel as millis, us and ns as micros */
    switch (c->kind) {
    case SHAPE_KAFKA_WIRE_COL_NULL: return t == SHAPE_KAFKA_WIRE_T_NULL;
    case SHAPE_KAFKA_WIRE_COL_BOOL: return t == SHAPE_KAFKA_WIRE_T_BOOL;
    case SHAPE_KAFKA_WIRE_COL_INT:
        /* up to int32 and uint16 fit an int; int64 and uint32 need a long */
        if (l != SHAPE_KAFKA_WIRE_L_NONE) return 0;
        return t == ((c->bits < 32 || (c->bits == 32 && !c->is_unsigned)) ? SHAPE_KAFKA_WIRE_T_INT32 : SHAPE_KAFKA_WIRE_T_INT64);
    case SHAPE_KAFKA_WIRE_COL_UINT64: return l == SHAPE_KAFKA_WIRE_L_NONE && t == SHAPE_KAFKA_WIRE_T_INT64;
    case SHAPE_KAFKA_WIRE_COL_FLOAT: return t == (c->bits == 32 ? SHAPE_KAFKA_WIRE_T_FLOAT : SHAPE_KAFKA_WIRE_T_DOUBLE);
    case SHAPE_KAFKA_WIRE_COL_STRING: return t == SHAPE_KAFKA_WIRE_T_STRING && l == SHAPE_KAFKA_WIRE_L_NONE;
    case SHAPE_KAFKA_WIRE_COL_UUID: return l == SHAPE_KAFKA_WIRE_L_UUID;
    case SHAPE_KAFKA_WIRE_COL_BINARY: return t == SHAPE_KAFKA_WIRE_T_BYTES && l == SHAPE_KAFKA_WIRE_L_NONE;
    case SHAPE_KAFKA_WIRE_COL_DECIMAL: return l == SHAPE_KAFKA_WIRE_L_DECIMAL && f->precision == c->precision && f->scale == c->scale;
    case SHAPE_KAFKA_WIRE_COL_DATE: return l == SHAPE_KAFKA_WIRE_L_DATE;
    case SHAPE_KAFKA_WIRE_COL_TIME: return l == (coarse ? SHAPE_KAFKA_WIRE_L_TIME_MILLIS : SHAPE_KAFKA_WIRE_L_TIME_MICROS);
    case SHAPE_KAFKA_WIRE_COL_TIMESTAMP:
        if (c->zoned) return l == (coarse ? SHAPE_KAFKA_WIRE_L_TIMESTAMP_MILLIS : SHAPE_KAFKA_WIRE_L_TIMESTAMP_MICROS);
        return l == (coarse ? SHAPE_KAFKA_WIRE_L_LOCAL_TIMESTAMP_MILLIS : SHAPE_KAFKA_WIRE_L_LOCAL_TIMESTAMP_MICROS);
    }
    return 0;
}

static int proto_carries(const shape_kafka_wire_field *f, const shape_kafka_wire_column *c)
{
    shape_kafka_wire_type t = f->type;
    switch (c->kind) {
    case SHAPE_KAFKA_WIRE_COL_NULL: return t == SHAPE_KAFKA_WIRE_T_STRING && f->nullable;
    case SHAPE_KAFKA_WIRE_COL_BOOL: return t == SHAPE_KAFKA_WIRE_T_BOOL;
    case SHAPE_KAFKA_WIRE_COL_INT:
        if (c->is_unsigned) return t == SHAPE_KAFKA_WIRE_T_UINT32;
        return t == (c->bits == 64 ? SHAPE_KAFKA_WIRE_T_INT64 : SHAPE_KAFKA_WIRE_T_INT32);
    case SHAPE_KAFKA_WIRE_COL_UINT64: return t == SHAPE_KAFKA_WIRE_T_UINT64;
    case SHAPE_KAFKA_WIRE_COL_FLOAT: return t == (c->bits == 32 ? SHAPE_KAFKA_WIRE_T_FLOAT : SHAPE_KAFKA_WIRE_T_DOUBLE);
    case SHAPE_KAFKA_WIRE_COL_STRING:
    case SHAPE_KAFKA_WIRE_COL_UUID:
    case SHAPE_KAFKA_WIRE_COL_DECIMAL: return t == SHAPE_KAFKA_WIRE_T_STRING;
    case SHAPE_KAFKA_WIRE_COL_BINARY: return t == SHAPE_KAFKA_WIRE_T_BYTES;
    case SHAPE_KAFKA_WIRE_COL_DATE: return t == SHAPE_KAFKA_WIRE_T_INT32;
    case SHAPE_KAFKA_WIRE_COL_TIME:
    case SHAPE_KAFKA_WIRE_COL_TIMESTAMP: return t == SHAPE_KAFKA_WIRE_T_INT64;
    }
    return 0;
}

/* "long/timestamp-millis", "[null, int/date]", "optional int64" ... */
static void field_type_text(shape_kafka_regfmt format, const shape_kafka_wire_field *f, char *buf, size_t size)
{
    static const char *avro[] = {"null", "boolean", "int", "long", "uint32?", "uint64?",
                                 "float", "double", "string", "bytes"};
    static const char *proto[] = {"null?", "bool",  "int32",  "int64",  "uint32",
                                  "uint64", "float", "double", "string", "bytes"};
    static const char *logical[] = {"",
                                    "/date",
                                    "/time-millis",
                                    "/time-micros",
                                    "/timestamp-millis",
                                    "/timestamp-micros",
                                    "/local-timestamp-millis",
                                    "/local-timestamp-micros",
                                    "/decimal",
                                    "/uuid"};
    if (format == SHAPE_KAFKA_REGFMT_PROTOBUF) {
        snprintf(buf, size, "%s%s", f->nullable ? "optional " : "", proto[f->type]);
    } else if (f->logical == SHAPE_KAFKA_WIRE_L_DECIMAL) {
        snprintf(buf, size, "%sbytes/decimal(%d, %d)%s", f->nullable ? "[null, " : "", f->precision, f->scale,
                 f->nullable ? "]" : "");
    } else {
        snprintf(buf, size, "%s%s%s%s", f->nullable ? "[null, " : "", avro[f->type], logical[f->logical],
                 f->nullable ? "]" : "");
    }
}

/* ---- schemas by id ---------------------------------------------------------- */

static void schema_free(wire_schema *s)
{
    shape_kafka_wire_fields_free(s->fields, s->nfields);
    free(s->field_of_column);
    free(s);
}

/* The JSON Schema document: an object whose "properties" name the fields. */
static int json_schema_parse(const char *text, uint32_t id, shape_kafka_wire_field **fields, size_t *n, shape_err *err)
{
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    json_t *properties = json_object_get(doc, "properties");
    if (!json_is_object(properties)) {
        json_decref(doc);
        return shape_err_set(err, SHAPE_EINVAL, "schema id %u is not a JSON Schema object with properties",
                             (unsigned)id);
    }
    size_t count = json_object_size(properties), i = 0;
    *fields = calloc(count ? count : 1, sizeof **fields);
    int rc = *fields ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    const char *key;
    json_t *value;
    json_object_foreach(properties, key, value) {
        if (rc != SHAPE_OK) break;
        (*fields)[i].name = strdup(key);
        if (!(*fields)[i++].name) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    *n = i;
    json_decref(doc);
    return rc;
}

static int field_index(const wire_schema *s, const char *name, size_t *index)
{
    for (size_t i = 0; i < s->nfields; i++) {
        if (strcmp(s->fields[i].name, name) == 0) {
            *index = i;
            return 1;
        }
    }
    return 0;
}

static int check_field_carries(const wire_schema *s, const shape_kafka_wire_field *f, const shape_kafka_wire_column *c, shape_err *err)
{
    int fits = s->format == SHAPE_KAFKA_REGFMT_AVRO ? avro_carries(f, c) : proto_carries(f, c);
    if (fits) return SHAPE_OK;
    char text[64];
    field_type_text(s->format, f, text, sizeof text);
    return shape_err_set(err, SHAPE_EINVAL, "field '%s' of schema id %u is %s, which does not carry column type %s",
                         f->name, (unsigned)s->id, text, c->format);
}

/* Match every column to its field by name; every field must be a column. */
static int map_fields(const shape_kafka_wire_decoder *d, wire_schema *s, shape_err *err)
{
    s->field_of_column = calloc(d->ncolumns ? d->ncolumns : 1, sizeof *s->field_of_column);
    if (!s->field_of_column) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t c = 0; c < d->ncolumns; c++) {
        const shape_kafka_wire_column *col = &d->columns[c];
        size_t i;
        if (!field_index(s, col->name, &i))
            return shape_err_set(err, SHAPE_EINVAL, "field '%s' is not in schema id %u", col->name, (unsigned)s->id);
        s->field_of_column[c] = i;
        if (s->format != SHAPE_KAFKA_REGFMT_JSON_SCHEMA) SHAPE_RETURN_NOT_OK(check_field_carries(s, &s->fields[i], col, err));
    }
    for (size_t i = 0; i < s->nfields; i++) {
        size_t c = 0;
        while (c < d->ncolumns && s->field_of_column[c] != i) c++;
        if (c == d->ncolumns)
            return shape_err_set(err, SHAPE_EINVAL, "field '%s' of schema id %u is not a column of the events",
                                 s->fields[i].name, (unsigned)s->id);
    }
    return SHAPE_OK;
}

static int parse_schema(wire_schema *s, const char *text, const char *type, shape_err *err)
{
    if (strcmp(type, "AVRO") == 0) {
        s->format = SHAPE_KAFKA_REGFMT_AVRO;
        return shape_kafka_wire_avro_parse(text, s->id, &s->fields, &s->nfields, err);
    }
    if (strcmp(type, "PROTOBUF") == 0) {
        s->format = SHAPE_KAFKA_REGFMT_PROTOBUF;
        return shape_kafka_wire_proto_parse(text, s->id, &s->fields, &s->nfields, err);
    }
    if (strcmp(type, "JSON") == 0) {
        s->format = SHAPE_KAFKA_REGFMT_JSON_SCHEMA;
        return json_schema_parse(text, s->id, &s->fields, &s->nfields, err);
    }
    return shape_err_set(err, SHAPE_EINVAL, "schema id %u has schema type '%s', which the decoder does not read",
                         (unsigned)s->id, type);
}

static int fetch_schema(shape_kafka_wire_decoder *d, uint32_t id, wire_schema **out, shape_err *err)
{
    char *text = NULL, *type = NULL;
    int rc = shape_kafka_schema_registry_fetch(d->reg, id, &text, &type, err);
    if (rc == SHAPE_ENOTFOUND) {
        char why[SHAPE_ERR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", err->message);
        return shape_err_set(err, SHAPE_EINVAL, "unknown schema id %u: %s", (unsigned)id, why);
    }
    if (rc != SHAPE_OK) return rc;
    wire_schema *s = calloc(1, sizeof *s);
    if (!s) {
        rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    } else {
        s->id = id;
        rc = parse_schema(s, text, type ? type : "AVRO", err);
        if (rc == SHAPE_OK) rc = map_fields(d, s, err);
    }
    free(text);
    free(type);
    if (rc != SHAPE_OK) {
        if (s) schema_free(s);
        return rc;
    }
    *out = s;
    return SHAPE_OK;
}

static int schema_for_id(shape_kafka_wire_decoder *d, uint32_t id, const wire_schema **out, shape_err *err)
{
    for (wire_schema *s = d->schemas; s; s = s->next) {
        if (s->id == id) {
            *out = s;
            return SHAPE_OK;
        }
    }
    wire_schema *s = NULL;
    SHAPE_RETURN_NOT_OK(fetch_schema(d, id, &s, err));
    if (s->nfields > d->values_cap) {
        shape_kafka_wire_value *grown = realloc(d->values, s->nfields * sizeof *grown);
        if (!grown) {
            schema_free(s);
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        }
        d->values = grown;
        d->values_cap = s->nfields;
    }
    s->next = d->schemas;
    d->schemas = s;
    *out = s;
    return SHAPE_OK;
}

/* ---- rendering ---------------------------------------------------------------- */

static char *room(shape_json_buf *out, size_t n, shape_err *err)
{
    if (shape_json_buf_reserve(out, n) != 0) {
        shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        return NULL;
    }
    return out->data + out->len;
}

static char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

static void commit(shape_json_buf *out, char *end)
{
    out->len = (size_t)(end - out->data);
    out->data[out->len] = '\0';
}

static int append_text(shape_json_buf *out, const char *s, size_t n, shape_err *err)
{
    char *p = room(out, n, err);
    if (!p) return SHAPE_ENOMEM;
    memcpy(p, s, n);
    commit(out, p + n);
    return SHAPE_OK;
}

/* `"name":`, after a ',' unless first. */
static int append_key(shape_json_buf *out, const char *name, int first, shape_err *err)
{
    size_t n = strlen(name);
    char *p = room(out, 6 * n + 4, err);
    if (!p) return SHAPE_ENOMEM;
    if (!first) *p++ = ',';
    p = shape_json_string(p, name, n);
    *p++ = ':';
    commit(out, p);
    return SHAPE_OK;
}

/* value in 10^-from units → 10^-to units (floor when coarser). */
static int rescale(int64_t value, int from, int to, int64_t *out)
{
    int64_t factor = 1;
    for (int i = 0; i < (to > from ? to - from : from - to); i++) factor *= 10;
    if (to >= from) return !__builtin_mul_overflow(value, factor, out);
    int64_t q = value / factor;
    if (value % factor < 0) q--;
    *out = q;
    return 1;
}

/* Avro decimal: big-endian two's complement, at most 16 bytes. */
static int decimal_from_bytes(const shape_kafka_wire_value *v, int64_t *hi, uint64_t *lo)
{
    if (v->n > 16) return 0;
    uint8_t full[16];
    memset(full, v->n && (v->p[0] & 0x80) ? 0xff : 0x00, sizeof full);
    if (v->n) memcpy(full + 16 - v->n, v->p, v->n);
    uint64_t h = 0, l = 0;
    for (int i = 0; i < 8; i++) {
        h = h << 8 | full[i];
        l = l << 8 | full[8 + i];
    }
    *hi = (int64_t)h;
    *lo = l;
    return 1;
}

static int value_error(const shape_kafka_wire_field *f, uint32_t id, const char *what, shape_err *err)
{
    return shape_err_set(err, SHAPE_EINVAL, "field '%s' of schema id %u %s", f->name, (unsigned)id, what);
}

/* Scalars that fit SHAPE_JSON_SCALAR_MAX; returns the end or NULL (err set). */
static char *render_scalar(char *p, const shape_kafka_wire_column *c, const shape_kafka_wire_field *f, const shape_kafka_wire_value *v, uint32_t id,
                           shape_err *err)
{
    int64_t scaled, hi;
    uint64_t lo;
    int wire_digits = (f->logical == SHAPE_KAFKA_WIRE_L_TIME_MILLIS || f->logical == SHAPE_KAFKA_WIRE_L_TIMESTAMP_MILLIS ||
                       f->logical == SHAPE_KAFKA_WIRE_L_LOCAL_TIMESTAMP_MILLIS)
                          ? 3
                          : 6;
    switch (c->kind) {
    case SHAPE_KAFKA_WIRE_COL_BOOL: return v->i ? put(p, "true", 4) : put(p, "false", 5);
    case SHAPE_KAFKA_WIRE_COL_INT: return shape_json_i64(p, v->i);
    case SHAPE_KAFKA_WIRE_COL_UINT64:
        if (f->type == SHAPE_KAFKA_WIRE_T_UINT64) return shape_json_u64(p, v->u);
        if (v->i < 0) return value_error(f, id, "has a negative value for an unsigned column", err), NULL;
        return shape_json_u64(p, (uint64_t)v->i);
    case SHAPE_KAFKA_WIRE_COL_FLOAT: return shape_json_f64(p, v->d);
    case SHAPE_KAFKA_WIRE_COL_DECIMAL:
        if (!decimal_from_bytes(v, &hi, &lo))
            return value_error(f, id, "has a decimal longer than 16 bytes", err), NULL;
        return shape_json_decimal(p, hi, lo, c->scale);
    case SHAPE_KAFKA_WIRE_COL_DATE: return shape_json_date(p, v->i);
    case SHAPE_KAFKA_WIRE_COL_TIME:
        if (!rescale(v->i, wire_digits, c->digits, &scaled)) break;
        return shape_json_time(p, scaled, c->digits);
    case SHAPE_KAFKA_WIRE_COL_TIMESTAMP:
        if (!rescale(v->i, wire_digits, c->digits, &scaled)) break;
        return shape_json_timestamp(p, scaled, c->digits, c->zoned);
    default: return value_error(f, id, "has no scalar rendering", err), NULL;
    }
    return value_error(f, id, "has a value out of range for its column", err), NULL;
}

static int render_value(shape_json_buf *out, const shape_kafka_wire_column *c, const shape_kafka_wire_field *f, const shape_kafka_wire_value *v,
                        uint32_t id, shape_err *err)
{
    if (!v->set) return append_text(out, "null", 4, err);
    if (c->kind == SHAPE_KAFKA_WIRE_COL_NULL) return value_error(f, id, "has a value, but its column is of the null type", err);
    int text = c->kind == SHAPE_KAFKA_WIRE_COL_STRING || c->kind == SHAPE_KAFKA_WIRE_COL_UUID ||
               (c->kind == SHAPE_KAFKA_WIRE_COL_DECIMAL && f->logical != SHAPE_KAFKA_WIRE_L_DECIMAL);
    int binary = c->kind == SHAPE_KAFKA_WIRE_COL_BINARY;
    char *p = room(out, text ? 6 * v->n + 2 : binary ? 4 * (v->n + 2) / 3 + 2 : SHAPE_JSON_SCALAR_MAX, err);
    if (!p) return SHAPE_ENOMEM;
    if (text)
        p = shape_json_string(p, (const char *)v->p, v->n);
    else if (binary)
        p = shape_json_base64(p, v->p, v->n);
    else if (!(p = render_scalar(p, c, f, v, id, err)))
        return SHAPE_EINVAL;
    commit(out, p);
    return SHAPE_OK;
}

static int render_event(shape_kafka_wire_decoder *d, const wire_schema *s, shape_json_buf *out, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(append_text(out, "{", 1, err));
    for (size_t c = 0; c < d->ncolumns; c++) {
        size_t i = s->field_of_column[c];
        SHAPE_RETURN_NOT_OK(append_key(out, d->columns[c].name, c == 0, err));
        SHAPE_RETURN_NOT_OK(render_value(out, &d->columns[c], &s->fields[i], &d->values[i], s->id, err));
    }
    return append_text(out, "}", 1, err);
}

/* ---- JSON Schema payloads --------------------------------------------------- */

static int json_kind_fits(const shape_kafka_wire_column *c, const shape_json_member *m)
{
    switch (m->kind) {
    case SHAPE_JSON_NULL: return 1;
    case SHAPE_JSON_TRUE:
    case SHAPE_JSON_FALSE: return c->kind == SHAPE_KAFKA_WIRE_COL_BOOL;
    case SHAPE_JSON_NUMBER:
        if (c->kind == SHAPE_KAFKA_WIRE_COL_FLOAT) return 1;
        if (c->kind == SHAPE_KAFKA_WIRE_COL_INT) return m->num.cls == SHAPE_JSON_INT;
        return c->kind == SHAPE_KAFKA_WIRE_COL_UINT64 && (m->num.cls == SHAPE_JSON_INT || m->num.cls == SHAPE_JSON_BIGINT) &&
               !(m->num.flags & SHAPE_JSON_NUM_NEGATIVE);
    case SHAPE_JSON_STRING:
        return c->kind != SHAPE_KAFKA_WIRE_COL_NULL && c->kind != SHAPE_KAFKA_WIRE_COL_BOOL && c->kind != SHAPE_KAFKA_WIRE_COL_INT &&
               c->kind != SHAPE_KAFKA_WIRE_COL_UINT64 && c->kind != SHAPE_KAFKA_WIRE_COL_FLOAT;
    default: return 0;
    }
}

/* One member, re-rendered by the flat JSON rules, appended to out. */
static int render_json_member(const shape_kafka_wire_column *c, const shape_json_member *m, uint32_t id, shape_json_buf *out,
                              shape_err *err)
{
    if (!json_kind_fits(c, m))
        return shape_err_set(err, SHAPE_EINVAL, "payload of schema id %u has %s %s for column '%s' of type %s",
                             (unsigned)id, m->kind == SHAPE_JSON_ARRAY ? "an" : "a", shape_json_kind_name(m->kind),
                             c->name, c->format);
    size_t need = m->kind == SHAPE_JSON_STRING   ? 6 * m->str.len + 2
                  : m->kind == SHAPE_JSON_NUMBER ? m->num.text.len + SHAPE_JSON_F64_MAX
                                                 : 5;
    char *p = room(out, need, err);
    if (!p) return SHAPE_ENOMEM;
    switch (m->kind) {
    case SHAPE_JSON_NULL: p = put(p, "null", 4); break;
    case SHAPE_JSON_TRUE: p = put(p, "true", 4); break;
    case SHAPE_JSON_FALSE: p = put(p, "false", 5); break;
    case SHAPE_JSON_STRING: p = shape_json_string(p, m->str.ptr, m->str.len); break;
    default:
        if (c->kind == SHAPE_KAFKA_WIRE_COL_FLOAT)
            p = shape_json_f64(p, m->num.d);
        else if (m->num.cls == SHAPE_JSON_INT)
            p = shape_json_i64(p, m->num.i);
        else
            p = put(p, m->num.text.ptr, m->num.text.len); /* a big unsigned integer, as written */
    }
    commit(out, p);
    return SHAPE_OK;
}

static int json_column_of(const shape_kafka_wire_decoder *d, const shape_json_slice *key, size_t *index)
{
    for (size_t c = 0; c < d->ncolumns; c++) {
        if (strlen(d->columns[c].name) == key->len && memcmp(d->columns[c].name, key->ptr, key->len) == 0) {
            *index = c;
            return 1;
        }
    }
    return 0;
}

/* Walk the payload object: each member must be a column, once; its rendering
 * goes to scratch, its slice to values[column] (offset in i, length in n). */
static int read_json_members(shape_kafka_wire_decoder *d, uint32_t id, const uint8_t *p, size_t len, shape_err *err)
{
    memset(d->values, 0, d->ncolumns * sizeof *d->values);
    d->scratch.len = 0;
    shape_json_begin(d->scanner, p, len);
    shape_json_member m;
    int rc;
    while ((rc = shape_json_next(d->scanner, &m)) == SHAPE_JSON_MEMBER) {
        size_t c;
        if (!json_column_of(d, &m.key, &c))
            return shape_err_set(err, SHAPE_EINVAL, "payload of schema id %u has member '%.*s', which is not a column",
                                 (unsigned)id, (int)m.key.len, m.key.ptr);
        if (d->values[c].set)
            return shape_err_set(err, SHAPE_EINVAL, "payload of schema id %u has member '%s' twice", (unsigned)id,
                                 d->columns[c].name);
        size_t start = d->scratch.len;
        SHAPE_RETURN_NOT_OK(render_json_member(&d->columns[c], &m, id, &d->scratch, err));
        d->values[c].set = 1;
        d->values[c].i = (int64_t)start;
        d->values[c].n = d->scratch.len - start;
    }
    if (rc != SHAPE_JSON_DONE) {
        char why[256];
        shape_json_error_format(shape_json_last_error(d->scanner), why, sizeof why);
        return shape_err_set(err, SHAPE_EINVAL, "payload of schema id %u is not a JSON object: %s", (unsigned)id, why);
    }
    return SHAPE_OK;
}

static int decode_json_payload(shape_kafka_wire_decoder *d, uint32_t id, const uint8_t *p, size_t len,
                               shape_json_buf *out, shape_err *err)
{
    if (d->ncolumns > d->values_cap) {
        shape_kafka_wire_value *grown = realloc(d->values, d->ncolumns * sizeof *grown);
        if (!grown) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        d->values = grown;
        d->values_cap = d->ncolumns;
    }
    SHAPE_RETURN_NOT_OK(read_json_members(d, id, p, len, err));
    SHAPE_RETURN_NOT_OK(append_text(out, "{", 1, err));
    for (size_t c = 0; c < d->ncolumns; c++) {
        if (!d->values[c].set)
            return shape_err_set(err, SHAPE_EINVAL, "payload of schema id %u has no member '%s'", (unsigned)id,
                                 d->columns[c].name);
        SHAPE_RETURN_NOT_OK(append_key(out, d->columns[c].name, c == 0, err));
        SHAPE_RETURN_NOT_OK(append_text(out, d->scratch.data + d->values[c].i, d->values[c].n, err));
    }
    return append_text(out, "}", 1, err);
}

/* ---- the decoder ---------------------------------------------------------------- */

int shape_kafka_wire_decoder_new(shape_kafka_schema_registry_client *reg, const struct ArrowSchema *original,
                           shape_kafka_wire_decoder **out, shape_err *err)
{
    *out = NULL;
    shape_kafka_wire_decoder *d = calloc(1, sizeof *d);
    if (!d) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    d->reg = reg;
    d->scanner = shape_json_scanner_new();
    int rc = d->scanner ? columns_from_arrow(d, original, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc != SHAPE_OK) {
        shape_kafka_wire_decoder_free(d);
        return rc;
    }
    *out = d;
    return SHAPE_OK;
}

void shape_kafka_wire_decoder_free(shape_kafka_wire_decoder *d)
{
    if (!d) return;
    while (d->schemas) {
        wire_schema *next = d->schemas->next;
        schema_free(d->schemas);
        d->schemas = next;
    }
    columns_free(d->columns, d->ncolumns);
    free(d->values);
    shape_json_scanner_free(d->scanner);
    shape_json_buf_reset(&d->scratch);
    free(d);
}

static int short_message(size_t len, size_t header, shape_err *err)
{
    return shape_err_set(err, SHAPE_EINVAL, "wire-format message of %zu bytes is shorter than its header (%zu bytes)",
                         len, header);
}

/* A Protobuf message cut at a field boundary still parses; but every event
 * names its table, and proto3 leaves an empty string out, so a message
 * without `_shape_table` is one that was cut short (or never an event). */
static int check_table_named(const shape_kafka_wire_decoder *d, const wire_schema *s, shape_err *err)
{
    for (size_t c = 0; c < d->ncolumns; c++) {
        if (strcmp(d->columns[c].name, TABLE_COLUMN) != 0) continue;
        if (d->values[s->field_of_column[c]].n == 0)
            return shape_err_set(err, SHAPE_EINVAL, "payload of schema id %u ends early: it has no %s",
                                 (unsigned)s->id, TABLE_COLUMN);
    }
    return SHAPE_OK;
}

static int decode_payload(shape_kafka_wire_decoder *d, const wire_schema *s, const uint8_t *b, size_t len,
                          shape_json_buf *out, shape_err *err)
{
    size_t header = s->format == SHAPE_KAFKA_REGFMT_PROTOBUF ? 6 : 5;
    if (len < header) return short_message(len, header, err);
    if (s->format == SHAPE_KAFKA_REGFMT_PROTOBUF && b[5] != 0)
        return shape_err_set(err, SHAPE_EINVAL,
                             "protobuf message index byte 0x%02x of schema id %u is not 0 (the schema's first message)",
                             b[5], (unsigned)s->id);
    b += header;
    len -= header;
    switch (s->format) {
    case SHAPE_KAFKA_REGFMT_AVRO:
        SHAPE_RETURN_NOT_OK(shape_kafka_wire_avro_decode(s->fields, s->nfields, s->id, b, len, d->values, err));
        break;
    case SHAPE_KAFKA_REGFMT_PROTOBUF:
        SHAPE_RETURN_NOT_OK(shape_kafka_wire_proto_decode(s->fields, s->nfields, s->id, b, len, d->values, err));
        SHAPE_RETURN_NOT_OK(check_table_named(d, s, err));
        break;
    default: return decode_json_payload(d, s->id, b, len, out, err);
    }
    return render_event(d, s, out, err);
}

int shape_kafka_wire_decode(shape_kafka_wire_decoder *d, const void *msg, size_t len, shape_json_buf *out,
                      uint32_t *schema_id_out, shape_err *err)
{
    const uint8_t *b = msg;
    if (len >= 1 && b[0] != 0)
        return shape_err_set(err, SHAPE_EINVAL, "not a Confluent wire-format message (magic byte 0x%02x)", b[0]);
    if (len < 5) return short_message(len, 5, err);
    uint32_t id = (uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 | b[4];
    if (schema_id_out) *schema_id_out = id;
    const wire_schema *s = NULL;
    SHAPE_RETURN_NOT_OK(schema_for_id(d, id, &s, err));
    size_t before = out->len;
    int rc = decode_payload(d, s, b, len, out, err);
    if (rc != SHAPE_OK) {
        out->len = before;
        if (out->data) out->data[before] = '\0';
    }
    return rc;
}

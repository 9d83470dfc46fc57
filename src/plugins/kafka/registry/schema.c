/* schema.c — registry formats by name, subjects, and the codec of a table:
 * its schema document (Avro, Protobuf or JSON Schema) and its column plan.
 *
 * Why: a registry format is only useful if the schema registered and the
 * bytes sent agree; deriving both from one walk of the Arrow schema, and
 * refusing what the formats cannot hold before anything is registered
 * (names that are not identifiers, nested types), keeps them in agreement
 * and gives the user the reference's error texts (spec-kafka.md §4.4–§4.6).
 * How: shape_kafka_regfmt_codec_new checks the table name, then each column (name,
 * then type through shape_kafka_regfmt_type_resolve), building a shape_kafka_regfmt_column per kept
 * column with everything the encoders need precomputed: the resolved type,
 * the child index, the §4.6 nullability, the JSON key `"name":` and the
 * Protobuf field key bytes. The document is then written from the plan:
 * compact JSON in the §4.6 key orders for Avro and JSON Schema, proto3 text
 * with two-space indent, `optional` for nullable fields and trailing
 * comments for Protobuf. This is the cold path: clarity over speed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/codec_internal.h"
#include "registry/flat_json.h"
#include "registry/formats.h"
#include "shape/json_write.h"

/* ---- names ----------------------------------------------------------------- */

static const char *const format_names[] = {"json", "avro", "protobuf", "json-schema"};

int shape_kafka_regfmt_parse(const char *name, shape_kafka_regfmt *out, shape_err *err)
{
    for (int i = 0; i < 4; i++) {
        if (name && !strcmp(name, format_names[i])) {
            *out = (shape_kafka_regfmt)i;
            return SHAPE_OK;
        }
    }
    return shape_err_set(err, SHAPE_EINVAL,
                         "unknown event format '%s'; choose from json, avro, protobuf, json-schema",
                         name ? name : "");
}

const char *shape_kafka_regfmt_name(shape_kafka_regfmt f)
{
    return (f >= SHAPE_KAFKA_REGFMT_JSON && f <= SHAPE_KAFKA_REGFMT_JSON_SCHEMA) ? format_names[f] : "?";
}

const char *shape_kafka_regfmt_schema_type(shape_kafka_regfmt f)
{
    switch (f) {
    case SHAPE_KAFKA_REGFMT_AVRO: return "AVRO";
    case SHAPE_KAFKA_REGFMT_PROTOBUF: return "PROTOBUF";
    case SHAPE_KAFKA_REGFMT_JSON_SCHEMA: return "JSON";
    default: return NULL;
    }
}

int shape_kafka_subject_strategy_parse(const char *name, shape_kafka_subject_strategy *out, shape_err *err)
{
    static const char *const names[] = {"topic", "record", "topic_record"};
    for (int i = 0; i < 3; i++) {
        if (name && !strcmp(name, names[i])) {
            *out = (shape_kafka_subject_strategy)i;
            return SHAPE_OK;
        }
    }
    return shape_err_set(err, SHAPE_EINVAL,
                         "unknown subject strategy '%s'; choose from topic, record, topic_record",
                         name ? name : "");
}

static char *concat3(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *s = malloc(la + lb + lc + 1);
    if (!s) return NULL;
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    memcpy(s + la + lb, c, lc + 1);
    return s;
}

char *shape_kafka_subject_name(shape_kafka_subject_strategy s, const char *topic, const char *table)
{
    switch (s) {
    case SHAPE_KAFKA_SUBJECT_RECORD: return concat3("shape.events.", table, "");
    case SHAPE_KAFKA_SUBJECT_TOPIC_RECORD: return concat3(topic, "-shape.events.", table);
    default: return concat3(topic, "-value", "");
    }
}

size_t shape_kafka_wire_header(shape_kafka_regfmt f, uint32_t schema_id, uint8_t *p)
{
    p[0] = 0;
    p[1] = (uint8_t)(schema_id >> 24);
    p[2] = (uint8_t)(schema_id >> 16);
    p[3] = (uint8_t)(schema_id >> 8);
    p[4] = (uint8_t)schema_id;
    if (f != SHAPE_KAFKA_REGFMT_PROTOBUF) return 5;
    p[5] = 0; /* message indexes [0]: the first message of the schema */
    return 6;
}

/* ^[A-Za-z_][A-Za-z0-9_]*$ */
static int is_identifier(const char *s)
{
    if (!s || !*s) return 0;
    for (const char *c = s; *c; c++) {
        int alpha = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || *c == '_';
        if (!alpha && !(c != s && *c >= '0' && *c <= '9')) return 0;
    }
    return 1;
}

/* ---- documents ---------------------------------------------------------------- */

typedef struct doc {
    shape_json_buf buf;
    int failed; /* out of memory somewhere */
} doc;

static void doc_add(doc *d, const char *s, size_t n)
{
    if (d->failed || shape_json_buf_reserve(&d->buf, n) != 0) {
        d->failed = 1;
        return;
    }
    memcpy(d->buf.data + d->buf.len, s, n);
    d->buf.len += n;
    d->buf.data[d->buf.len] = '\0';
}

static void doc_str(doc *d, const char *s) { doc_add(d, s, strlen(s)); }

static void doc_printf(doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void doc_printf(doc *d, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        d->failed = 1;
        return;
    }
    doc_add(d, tmp, (size_t)n);
}

/* A JSON string of s. */
static void doc_json_string(doc *d, const char *s, size_t n)
{
    if (d->failed || shape_json_buf_reserve(&d->buf, 6 * n + 2) != 0) {
        d->failed = 1;
        return;
    }
    char *end = shape_json_string(d->buf.data + d->buf.len, s, n);
    d->buf.len = (size_t)(end - d->buf.data);
    d->buf.data[d->buf.len] = '\0';
}

/* Avro: the type of a non-null value, as JSON text. */
static void avro_type(doc *d, const shape_arrow_type *t)
{
    switch (t->kind) {
    case SHAPE_ARROW_BOOL: doc_str(d, "\"boolean\""); break;
    case SHAPE_ARROW_INT8:
    case SHAPE_ARROW_INT16:
    case SHAPE_ARROW_INT32:
    case SHAPE_ARROW_UINT8:
    case SHAPE_ARROW_UINT16: doc_str(d, "\"int\""); break;
    case SHAPE_ARROW_INT64:
    case SHAPE_ARROW_UINT32:
    case SHAPE_ARROW_UINT64: doc_str(d, "\"long\""); break;
    case SHAPE_ARROW_FLOAT32: doc_str(d, "\"float\""); break;
    case SHAPE_ARROW_FLOAT16:
    case SHAPE_ARROW_FLOAT64: doc_str(d, "\"double\""); break;
    case SHAPE_ARROW_STRING:
    case SHAPE_ARROW_LARGE_STRING: doc_str(d, "\"string\""); break;
    case SHAPE_ARROW_UUID: doc_str(d, "{\"type\":\"string\",\"logicalType\":\"uuid\"}"); break;
    case SHAPE_ARROW_BINARY:
    case SHAPE_ARROW_LARGE_BINARY:
    case SHAPE_ARROW_FIXED_BINARY: doc_str(d, "\"bytes\""); break;
    case SHAPE_ARROW_DECIMAL:
        doc_printf(d, "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":%d,\"scale\":%d}",
                   (int)t->precision, (int)t->scale);
        break;
    case SHAPE_ARROW_DATE32:
    case SHAPE_ARROW_DATE64: doc_str(d, "{\"type\":\"int\",\"logicalType\":\"date\"}"); break;
    case SHAPE_ARROW_TIME32: doc_str(d, "{\"type\":\"int\",\"logicalType\":\"time-millis\"}"); break;
    case SHAPE_ARROW_TIME64: doc_str(d, "{\"type\":\"long\",\"logicalType\":\"time-micros\"}"); break;
    case SHAPE_ARROW_TIMESTAMP:
        doc_printf(d, "{\"type\":\"long\",\"logicalType\":\"%stimestamp-%s\"}", t->zoned ? "" : "local-",
                   t->unit_digits <= 3 ? "millis" : "micros");
        break;
    default: doc_str(d, "\"null\""); break;
    }
}

static void avro_document(doc *d, const char *table, const shape_kafka_regfmt_codec *c)
{
    doc_str(d, "{\"type\":\"record\",\"name\":");
    doc_json_string(d, table, strlen(table));
    doc_str(d, ",\"namespace\":\"shape.events\",\"fields\":[");
    for (size_t k = 0; k < c->ncolumns; k++) {
        const shape_kafka_regfmt_column *col = &c->columns[k];
        doc_str(d, k ? ",{\"name\":" : "{\"name\":");
        doc_json_string(d, col->name, col->name_len);
        if (col->type.kind == SHAPE_ARROW_NULL) {
            doc_str(d, ",\"type\":\"null\"}");
        } else if (col->nullable) {
            doc_str(d, ",\"type\":[\"null\",");
            avro_type(d, &col->type);
            doc_str(d, "],\"default\":null}");
        } else {
            doc_str(d, ",\"type\":");
            avro_type(d, &col->type);
            doc_str(d, "}");
        }
    }
    doc_str(d, "]}");
}

/* Protobuf: the field type word and the trailing comment (or NULL). */
static const char *proto_type(const shape_arrow_type *t, const char **comment, char *scratch, size_t size)
{
    *comment = NULL;
    switch (t->kind) {
    case SHAPE_ARROW_BOOL: return "bool";
    case SHAPE_ARROW_INT8:
    case SHAPE_ARROW_INT16:
    case SHAPE_ARROW_INT32: return "int32";
    case SHAPE_ARROW_UINT8:
    case SHAPE_ARROW_UINT16:
    case SHAPE_ARROW_UINT32: return "uint32";
    case SHAPE_ARROW_INT64: return "int64";
    case SHAPE_ARROW_UINT64: return "uint64";
    case SHAPE_ARROW_FLOAT32: return "float";
    case SHAPE_ARROW_FLOAT16:
    case SHAPE_ARROW_FLOAT64: return "double";
    case SHAPE_ARROW_UUID: *comment = "uuid"; return "string";
    case SHAPE_ARROW_BINARY:
    case SHAPE_ARROW_LARGE_BINARY:
    case SHAPE_ARROW_FIXED_BINARY: return "bytes";
    case SHAPE_ARROW_DECIMAL:
        snprintf(scratch, size, "decimal(%d, %d), canonical text", (int)t->precision, (int)t->scale);
        *comment = scratch;
        return "string";
    case SHAPE_ARROW_DATE32:
    case SHAPE_ARROW_DATE64: *comment = "date, days since 1970-01-01"; return "int32";
    case SHAPE_ARROW_TIME32:
    case SHAPE_ARROW_TIME64: *comment = "time of day, microseconds"; return "int64";
    case SHAPE_ARROW_TIMESTAMP:
        *comment = t->zoned ? "timestamp with time zone, microseconds since the epoch (UTC)"
                            : "timestamp without time zone, wall-clock microseconds since the epoch";
        return "int64";
    default: return "string"; /* strings, and null-typed columns (never set) */
    }
}

static void protobuf_document(doc *d, const char *table, const shape_kafka_regfmt_codec *c)
{
    doc_str(d, "syntax = \"proto3\";\n\npackage shape.events;\n\nmessage ");
    doc_str(d, table);
    doc_str(d, " {\n");
    for (size_t k = 0; k < c->ncolumns; k++) {
        const shape_kafka_regfmt_column *col = &c->columns[k];
        char scratch[64];
        const char *comment;
        const char *type = proto_type(&col->type, &comment, scratch, sizeof scratch);
        doc_printf(d, "  %s%s ", col->nullable ? "optional " : "", type);
        doc_add(d, col->name, col->name_len);
        doc_printf(d, " = %u;", (unsigned)col->field_number);
        if (comment) doc_printf(d, "  // %s", comment);
        doc_str(d, "\n");
    }
    doc_str(d, "}\n");
}

/* JSON Schema: the "type" word and the extra keys after it. */
static const char *json_schema_type(const shape_arrow_type *t, char *extra, size_t size)
{
    extra[0] = '\0';
    switch (t->kind) {
    case SHAPE_ARROW_NULL: return "null";
    case SHAPE_ARROW_BOOL: return "boolean";
    case SHAPE_ARROW_FLOAT16:
    case SHAPE_ARROW_FLOAT32:
    case SHAPE_ARROW_FLOAT64: return "number";
    case SHAPE_ARROW_STRING:
    case SHAPE_ARROW_LARGE_STRING: return "string";
    case SHAPE_ARROW_UUID: snprintf(extra, size, ",\"format\":\"uuid\""); return "string";
    case SHAPE_ARROW_BINARY:
    case SHAPE_ARROW_LARGE_BINARY:
    case SHAPE_ARROW_FIXED_BINARY: snprintf(extra, size, ",\"contentEncoding\":\"base64\""); return "string";
    case SHAPE_ARROW_DECIMAL:
        snprintf(extra, size,
                 ",\"pattern\":\"^-?[0-9]+(\\\\.[0-9]+)?$\",\"description\":\"decimal(%d, %d), "
                 "canonical text\"",
                 (int)t->precision, (int)t->scale);
        return "string";
    case SHAPE_ARROW_DATE32:
    case SHAPE_ARROW_DATE64: snprintf(extra, size, ",\"format\":\"date\""); return "string";
    case SHAPE_ARROW_TIME32:
    case SHAPE_ARROW_TIME64: snprintf(extra, size, ",\"description\":\"time of day\""); return "string";
    case SHAPE_ARROW_TIMESTAMP:
        if (t->zoned) snprintf(extra, size, ",\"format\":\"date-time\"");
        else snprintf(extra, size, ",\"description\":\"timestamp without time zone\"");
        return "string";
    default: return "integer";
    }
}

static void json_schema_document(doc *d, const char *table, const shape_kafka_regfmt_codec *c)
{
    doc_str(d, "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"title\":");
    doc_json_string(d, table, strlen(table));
    doc_str(d, ",\"type\":\"object\",\"properties\":{");
    for (size_t k = 0; k < c->ncolumns; k++) {
        const shape_kafka_regfmt_column *col = &c->columns[k];
        char extra[160];
        const char *type = json_schema_type(&col->type, extra, sizeof extra);
        if (k) doc_str(d, ",");
        doc_json_string(d, col->name, col->name_len);
        if (col->nullable && col->type.kind != SHAPE_ARROW_NULL)
            doc_printf(d, ":{\"type\":[\"%s\",\"null\"]%s}", type, extra);
        else
            doc_printf(d, ":{\"type\":\"%s\"%s}", type, extra);
    }
    doc_str(d, "},\"required\":[");
    int first = 1;
    for (size_t k = 0; k < c->ncolumns; k++) {
        const shape_kafka_regfmt_column *col = &c->columns[k];
        if (col->nullable) continue;
        if (!first) doc_str(d, ",");
        doc_json_string(d, col->name, col->name_len);
        first = 0;
    }
    doc_str(d, "],\"additionalProperties\":false}");
}

/* ---- the codec ----------------------------------------------------------------- */

/* Protobuf wire type of a column's values. */
static unsigned proto_wire_type(const shape_arrow_type *t)
{
    switch (t->kind) {
    case SHAPE_ARROW_FLOAT32: return 5;
    case SHAPE_ARROW_FLOAT16:
    case SHAPE_ARROW_FLOAT64: return 1;
    case SHAPE_ARROW_NULL:
    case SHAPE_ARROW_STRING:
    case SHAPE_ARROW_LARGE_STRING:
    case SHAPE_ARROW_UUID:
    case SHAPE_ARROW_BINARY:
    case SHAPE_ARROW_LARGE_BINARY:
    case SHAPE_ARROW_FIXED_BINARY:
    case SHAPE_ARROW_DECIMAL: return 2;
    default: return 0;
    }
}

static int plan_column(shape_kafka_regfmt_codec *c, const struct ArrowSchema *field, int64_t child,
                       shape_err *err)
{
    shape_kafka_regfmt_column *col = &c->columns[c->ncolumns];
    memset(col, 0, sizeof *col);
    SHAPE_RETURN_NOT_OK(shape_kafka_regfmt_type_resolve(field, &col->type, err));
    const char *name = field->name ? field->name : "";
    /* Avro's decimal wants 0 <= scale <= precision; readers ignore another one */
    if (c->format == SHAPE_KAFKA_REGFMT_AVRO && col->type.kind == SHAPE_ARROW_DECIMAL &&
        (col->type.scale < 0 || col->type.scale > col->type.precision))
        return shape_err_set(err, SHAPE_EINVAL,
                             "cannot map column '%s' of type decimal(%d, %d) to Avro (the scale must be from 0 to "
                             "the precision); use --event-format json, protobuf or json-schema",
                             name, (int)col->type.precision, (int)col->type.scale);
    col->child = child;
    col->nullable = shape_kafka_regfmt_field_nullable(name, &col->type, field->flags);
    col->name_len = strlen(name);
    col->name = malloc(col->name_len + 1);
    col->json_key = malloc(6 * col->name_len + 3);
    if (!col->name || !col->json_key) {
        free(col->name);
        free(col->json_key);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory building a schema");
    }
    memcpy(col->name, name, col->name_len + 1);
    char *end = shape_json_string(col->json_key, name, col->name_len);
    *end++ = ':';
    col->json_key_len = (size_t)(end - col->json_key);
    col->field_number = (uint32_t)c->ncolumns + 1;
    col->decimal_limit = 1;
    for (int32_t d = 0; col->type.kind == SHAPE_ARROW_DECIMAL && d < col->type.precision; d++)
        col->decimal_limit *= 10;
    uint64_t key = (uint64_t)col->field_number << 3 | proto_wire_type(&col->type);
    do {
        col->tag[col->tag_len++] = (uint8_t)((key & 0x7f) | (key > 0x7f ? 0x80 : 0));
        key >>= 7;
    } while (key);
    c->ncolumns++;
    return SHAPE_OK;
}

/* What the binary encoders reserve per row: a fixed part, plus the bytes of
 * the variable-length columns listed in var_columns (calloc'ed with the
 * columns, so this cannot fail). */
static void plan_bounds(shape_kafka_regfmt_codec *c)
{
    c->fixed_bound = 0;
    for (size_t k = 0; k < c->ncolumns; k++) {
        const shape_kafka_regfmt_column *col = &c->columns[k];
        if (col->child >= c->min_children) c->min_children = col->child + 1;
        c->fixed_bound += SHAPE_KAFKA_REGFMT_BINARY_COLUMN_BOUND;
        switch (col->type.kind) {
        case SHAPE_ARROW_FIXED_BINARY: c->fixed_bound += (size_t)col->type.byte_width; break;
        case SHAPE_ARROW_STRING:
        case SHAPE_ARROW_LARGE_STRING:
        case SHAPE_ARROW_BINARY:
        case SHAPE_ARROW_LARGE_BINARY: c->var_columns[c->nvar++] = k; break;
        default: break;
        }
    }
}

static int check_table_name(shape_kafka_regfmt f, const char *table, shape_err *err)
{
    if (f != SHAPE_KAFKA_REGFMT_JSON_SCHEMA && !is_identifier(table))
        return shape_err_set(err, SHAPE_EINVAL,
                             "table name '%s' is not a valid record name (letters, digits and "
                             "underscore); use --event-format json or json-schema",
                             table);
    return SHAPE_OK;
}

static int plan_columns(shape_kafka_regfmt_codec *c, const char *table, const struct ArrowSchema *schema,
                        shape_err *err)
{
    for (int64_t k = 0; k < schema->n_children; k++) {
        const struct ArrowSchema *field = schema->children[k];
        const char *name = field->name ? field->name : "";
        if (!strcmp(name, "_shape_poison")) continue;
        if (c->format != SHAPE_KAFKA_REGFMT_JSON_SCHEMA && !is_identifier(name))
            return shape_err_set(err, SHAPE_EINVAL,
                                 "column '%s' of table '%s' is not a valid field name in Avro and "
                                 "Protobuf (letters, digits and underscore); use --event-format "
                                 "json or json-schema",
                                 name, table);
        SHAPE_RETURN_NOT_OK(plan_column(c, field, k, err));
    }
    return SHAPE_OK;
}

int shape_kafka_regfmt_codec_new(shape_kafka_regfmt f, const char *table, const struct ArrowSchema *schema,
                           shape_kafka_regfmt_codec **out, shape_err *err)
{
    *out = NULL;
    if (f != SHAPE_KAFKA_REGFMT_AVRO && f != SHAPE_KAFKA_REGFMT_PROTOBUF && f != SHAPE_KAFKA_REGFMT_JSON_SCHEMA)
        return shape_err_set(err, SHAPE_EINVAL, "event format %s has no registry schema",
                             shape_kafka_regfmt_name(f));
    if (!table) table = "";
    if (!schema || !schema->format || strcmp(schema->format, "+s") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "a registry schema needs a struct schema of columns");
    SHAPE_RETURN_NOT_OK(check_table_name(f, table, err));
    shape_kafka_regfmt_codec *c = calloc(1, sizeof *c);
    if (c) {
        c->columns = calloc((size_t)schema->n_children + 1, sizeof *c->columns);
        c->var_columns = calloc((size_t)schema->n_children + 1, sizeof *c->var_columns);
    }
    if (!c || !c->columns || !c->var_columns) {
        shape_kafka_regfmt_codec_free(c);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory building a schema");
    }
    c->format = f;
    int rc = plan_columns(c, table, schema, err);
    if (rc != SHAPE_OK) {
        shape_kafka_regfmt_codec_free(c);
        return rc;
    }
    doc d = {SHAPE_JSON_BUF_INIT, 0};
    if (f == SHAPE_KAFKA_REGFMT_AVRO) avro_document(&d, table, c);
    else if (f == SHAPE_KAFKA_REGFMT_PROTOBUF) protobuf_document(&d, table, c);
    else json_schema_document(&d, table, c);
    if (d.failed) {
        shape_json_buf_reset(&d.buf);
        shape_kafka_regfmt_codec_free(c);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory building a schema");
    }
    c->document = d.buf.data;
    plan_bounds(c);
    *out = c;
    return SHAPE_OK;
}

void shape_kafka_regfmt_codec_free(shape_kafka_regfmt_codec *c)
{
    if (!c) return;
    for (size_t k = 0; k < c->ncolumns; k++) {
        free(c->columns[k].name);
        free(c->columns[k].json_key);
    }
    free(c->columns);
    free(c->var_columns);
    free(c->document);
    free(c);
}

shape_kafka_regfmt shape_kafka_regfmt_codec_format(const shape_kafka_regfmt_codec *c) { return c->format; }

const char *shape_kafka_regfmt_codec_schema(const shape_kafka_regfmt_codec *c) { return c->document; }

int shape_kafka_regfmt_encode(const shape_kafka_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                        shape_json_buf *out, shape_err *err)
{
    if (SHAPE_UNLIKELY(array->n_children < c->min_children || row < 0 || row >= array->length))
        return shape_err_set(err, SHAPE_EINVAL, "row %lld is not in a batch of the codec's schema",
                             (long long)row);
    switch (c->format) {
    case SHAPE_KAFKA_REGFMT_AVRO: return shape_kafka_regfmt_avro_encode(c, array, row, out, err);
    case SHAPE_KAFKA_REGFMT_PROTOBUF: return shape_kafka_regfmt_protobuf_encode(c, array, row, out, err);
    default: return shape_kafka_regfmt_json_encode(c, array, row, out, err);
    }
}

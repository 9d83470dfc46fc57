/* wire_avro.c — the wire decoder's Avro half: read the registry's Avro record
 * schema (JSON) and decode one Avro binary record with it.
 *
 * Why: tests decode what the emitter sent with nothing but the registry's
 * copy of the schema, so this reading of the Avro specification is written
 * apart from the encoder: a mistake in one shows up against the other.
 * How: the schema is parsed with jansson into a flat list of fields — a
 * primitive, an object {"type": primitive, "logicalType": ...} or a union of
 * "null" and one of those — anything else (named types, arrays, maps, other
 * unions, unknown logical types) is refused. Decoding walks the fields in
 * order: unions by their zig-zag branch index, int and long as zig-zag
 * varints (at most 5 and 10 bytes), float and double as little-endian IEEE,
 * bytes and string as a long length then the bytes. Every read checks the
 * bytes left, so a cut message fails with "ends early" instead of reading on.
 */
#include "wire_private.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void shape_kafka_wire_fields_free(shape_kafka_wire_field *fields, size_t n)
{
    if (!fields) return;
    for (size_t i = 0; i < n; i++) free(fields[i].name);
    free(fields);
}

/* ---- schema --------------------------------------------------------------- */

static int primitive_type(const char *name, shape_kafka_wire_type *out)
{
    static const struct {
        const char *name;
        shape_kafka_wire_type type;
    } table[] = {{"null", SHAPE_KAFKA_WIRE_T_NULL},   {"boolean", SHAPE_KAFKA_WIRE_T_BOOL}, {"int", SHAPE_KAFKA_WIRE_T_INT32},
                 {"long", SHAPE_KAFKA_WIRE_T_INT64},  {"float", SHAPE_KAFKA_WIRE_T_FLOAT},  {"double", SHAPE_KAFKA_WIRE_T_DOUBLE},
                 {"string", SHAPE_KAFKA_WIRE_T_STRING}, {"bytes", SHAPE_KAFKA_WIRE_T_BYTES}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(name, table[i].name) == 0) {
            *out = table[i].type;
            return 1;
        }
    }
    return 0;
}

/* A logical type and the primitive it must annotate. */
static int logical_type(const char *name, shape_kafka_wire_logical *out, shape_kafka_wire_type *base)
{
    static const struct {
        const char *name;
        shape_kafka_wire_logical logical;
        shape_kafka_wire_type base;
    } table[] = {{"date", SHAPE_KAFKA_WIRE_L_DATE, SHAPE_KAFKA_WIRE_T_INT32},
                 {"time-millis", SHAPE_KAFKA_WIRE_L_TIME_MILLIS, SHAPE_KAFKA_WIRE_T_INT32},
                 {"time-micros", SHAPE_KAFKA_WIRE_L_TIME_MICROS, SHAPE_KAFKA_WIRE_T_INT64},
                 {"timestamp-millis", SHAPE_KAFKA_WIRE_L_TIMESTAMP_MILLIS, SHAPE_KAFKA_WIRE_T_INT64},
                 {"timestamp-micros", SHAPE_KAFKA_WIRE_L_TIMESTAMP_MICROS, SHAPE_KAFKA_WIRE_T_INT64},
                 {"local-timestamp-millis", SHAPE_KAFKA_WIRE_L_LOCAL_TIMESTAMP_MILLIS, SHAPE_KAFKA_WIRE_T_INT64},
                 {"local-timestamp-micros", SHAPE_KAFKA_WIRE_L_LOCAL_TIMESTAMP_MICROS, SHAPE_KAFKA_WIRE_T_INT64},
                 {"decimal", SHAPE_KAFKA_WIRE_L_DECIMAL, SHAPE_KAFKA_WIRE_T_BYTES},
                 {"uuid", SHAPE_KAFKA_WIRE_L_UUID, SHAPE_KAFKA_WIRE_T_STRING}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(name, table[i].name) == 0) {
            *out = table[i].logical;
            *base = table[i].base;
            return 1;
        }
    }
    return 0;
}

static int unknown_type(shape_kafka_wire_field *f, uint32_t id, const json_t *type, shape_err *err)
{
    char *text = json_dumps(type, JSON_COMPACT | JSON_ENCODE_ANY);
    int rc = shape_err_set(err, SHAPE_EINVAL, "field '%s' of schema id %u has an unknown type %s", f->name,
                           (unsigned)id, text ? text : "?");
    free(text);
    return rc;
}

/* The decimal attributes: precision required (> 0), scale optional (0..precision). */
static int decimal_attributes(shape_kafka_wire_field *f, uint32_t id, const json_t *type, shape_err *err)
{
    json_t *precision = json_object_get(type, "precision");
    json_t *scale = json_object_get(type, "scale");
    if (!json_is_integer(precision) || (scale && !json_is_integer(scale)))
        return unknown_type(f, id, type, err);
    json_int_t p = json_integer_value(precision), s = scale ? json_integer_value(scale) : 0;
    if (p <= 0 || p > 76 || s < 0 || s > p) return unknown_type(f, id, type, err);
    f->precision = (int)p;
    f->scale = (int)s;
    return SHAPE_OK;
}

/* A non-union type: "name" or {"type": "name"[, "logicalType": ...]}. */
static int plain_type(shape_kafka_wire_field *f, uint32_t id, const json_t *type, shape_err *err)
{
    const char *name = json_is_string(type) ? json_string_value(type)
                       : json_is_object(type) && json_is_string(json_object_get(type, "type"))
                           ? json_string_value(json_object_get(type, "type"))
                           : NULL;
    if (!name || !primitive_type(name, &f->type)) return unknown_type(f, id, type, err);
    f->logical = SHAPE_KAFKA_WIRE_L_NONE;
    json_t *logical = json_is_object(type) ? json_object_get(type, "logicalType") : NULL;
    if (!logical) return SHAPE_OK;
    shape_kafka_wire_type base;
    if (!json_is_string(logical) || !logical_type(json_string_value(logical), &f->logical, &base) ||
        base != f->type)
        return unknown_type(f, id, type, err);
    if (f->logical == SHAPE_KAFKA_WIRE_L_DECIMAL) return decimal_attributes(f, id, type, err);
    return SHAPE_OK;
}

/* A field's type: plain, or a union of "null" and one plain non-null type. */
static int field_type(shape_kafka_wire_field *f, uint32_t id, const json_t *type, shape_err *err)
{
    if (!json_is_array(type)) return plain_type(f, id, type, err);
    if (json_array_size(type) != 2) return unknown_type(f, id, type, err);
    int null_at = -1;
    for (int i = 0; i < 2; i++) {
        const json_t *branch = json_array_get(type, (size_t)i);
        if (json_is_string(branch) && strcmp(json_string_value(branch), "null") == 0) null_at = i;
    }
    if (null_at < 0) return unknown_type(f, id, type, err);
    SHAPE_RETURN_NOT_OK(plain_type(f, id, json_array_get(type, (size_t)(1 - null_at)), err));
    if (f->type == SHAPE_KAFKA_WIRE_T_NULL) return unknown_type(f, id, type, err);
    f->nullable = 1;
    f->null_branch = null_at;
    return SHAPE_OK;
}

static int parse_fields(const json_t *list, uint32_t id, shape_kafka_wire_field *fields, size_t *done, shape_err *err)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *item = json_array_get(list, i);
        const json_t *name = json_object_get(item, "name");
        if (!json_is_object(item) || !json_is_string(name) || !json_object_get(item, "type"))
            return shape_err_set(err, SHAPE_EINVAL, "field %zu of schema id %u has no name or type", i + 1,
                                 (unsigned)id);
        for (size_t k = 0; k < i; k++) {
            if (strcmp(fields[k].name, json_string_value(name)) == 0)
                return shape_err_set(err, SHAPE_EINVAL, "field '%s' appears twice in schema id %u",
                                     fields[k].name, (unsigned)id);
        }
        fields[i].name = strdup(json_string_value(name));
        if (!fields[i].name) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        *done = i + 1;
        SHAPE_RETURN_NOT_OK(field_type(&fields[i], id, json_object_get(item, "type"), err));
    }
    return SHAPE_OK;
}

int shape_kafka_wire_avro_parse(const char *text, uint32_t id, shape_kafka_wire_field **fields, size_t *n, shape_err *err)
{
    *fields = NULL;
    *n = 0;
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    if (!doc)
        return shape_err_set(err, SHAPE_EINVAL, "schema id %u is not Avro schema JSON: %s", (unsigned)id,
                             jerr.text);
    const json_t *type = json_object_get(doc, "type");
    const json_t *list = json_object_get(doc, "fields");
    int rc = SHAPE_OK;
    if (!json_is_string(type) || strcmp(json_string_value(type), "record") != 0 || !json_is_array(list)) {
        rc = shape_err_set(err, SHAPE_EINVAL, "schema id %u is not an Avro record with fields", (unsigned)id);
    } else {
        size_t count = json_array_size(list), done = 0;
        shape_kafka_wire_field *out = calloc(count ? count : 1, sizeof *out);
        if (!out) {
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        } else if ((rc = parse_fields(list, id, out, &done, err)) != SHAPE_OK) {
            shape_kafka_wire_fields_free(out, done);
        } else {
            *fields = out;
            *n = count;
        }
    }
    json_decref(doc);
    return rc;
}

/* ---- binary ---------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p, *end;
    uint32_t id;
    const char *field; /* for messages */
    shape_err *err;
} reader;

static int ends_early(reader *r)
{
    return shape_err_set(r->err, SHAPE_EINVAL, "payload of schema id %u ends early (in field '%s')",
                         (unsigned)r->id, r->field);
}

/* A zig-zag varint of at most max_bytes bytes. */
static int read_zigzag(reader *r, int max_bytes, int64_t *out)
{
    uint64_t v = 0;
    for (int i = 0;; i++) {
        if (r->p >= r->end) return ends_early(r);
        if (i == max_bytes)
            return shape_err_set(r->err, SHAPE_EINVAL,
                                 "payload of schema id %u has a varint longer than %d bytes in field '%s'",
                                 (unsigned)r->id, max_bytes, r->field);
        uint8_t b = *r->p++;
        if (i == 9 && (b & 0x7e))
            return shape_err_set(r->err, SHAPE_EINVAL,
                                 "payload of schema id %u has a varint beyond 64 bits in field '%s'",
                                 (unsigned)r->id, r->field);
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) break;
    }
    *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    return SHAPE_OK;
}

static int read_int(reader *r, int64_t *out)
{
    SHAPE_RETURN_NOT_OK(read_zigzag(r, 5, out));
    if (*out < INT32_MIN || *out > INT32_MAX)
        return shape_err_set(r->err, SHAPE_EINVAL, "payload of schema id %u has an int out of range in field '%s'",
                             (unsigned)r->id, r->field);
    return SHAPE_OK;
}

static uint64_t little_endian(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int read_fixed(reader *r, size_t n, const uint8_t **out)
{
    if ((size_t)(r->end - r->p) < n) return ends_early(r);
    *out = r->p;
    r->p += n;
    return SHAPE_OK;
}

static int read_length_prefixed(reader *r, shape_kafka_wire_value *v)
{
    int64_t n;
    SHAPE_RETURN_NOT_OK(read_zigzag(r, 10, &n));
    if (n < 0)
        return shape_err_set(r->err, SHAPE_EINVAL, "payload of schema id %u has a negative length in field '%s'",
                             (unsigned)r->id, r->field);
    v->n = (size_t)n;
    return read_fixed(r, (size_t)n, &v->p);
}

static int read_value(reader *r, shape_kafka_wire_type type, shape_kafka_wire_value *v)
{
    const uint8_t *bytes = NULL;
    v->set = 1;
    switch (type) {
    case SHAPE_KAFKA_WIRE_T_NULL: v->set = 0; return SHAPE_OK;
    case SHAPE_KAFKA_WIRE_T_BOOL:
        SHAPE_RETURN_NOT_OK(read_fixed(r, 1, &bytes));
        if (bytes[0] > 1)
            return shape_err_set(r->err, SHAPE_EINVAL, "payload of schema id %u has boolean byte 0x%02x in field '%s'",
                                 (unsigned)r->id, bytes[0], r->field);
        v->i = bytes[0];
        return SHAPE_OK;
    case SHAPE_KAFKA_WIRE_T_INT32: return read_int(r, &v->i);
    case SHAPE_KAFKA_WIRE_T_INT64: return read_zigzag(r, 10, &v->i);
    case SHAPE_KAFKA_WIRE_T_FLOAT: {
        SHAPE_RETURN_NOT_OK(read_fixed(r, 4, &bytes));
        uint32_t bits = (uint32_t)little_endian(bytes, 4);
        float f;
        memcpy(&f, &bits, sizeof f);
        v->d = f;
        return SHAPE_OK;
    }
    case SHAPE_KAFKA_WIRE_T_DOUBLE: {
        SHAPE_RETURN_NOT_OK(read_fixed(r, 8, &bytes));
        uint64_t bits = little_endian(bytes, 8);
        memcpy(&v->d, &bits, sizeof v->d);
        return SHAPE_OK;
    }
    case SHAPE_KAFKA_WIRE_T_STRING:
    case SHAPE_KAFKA_WIRE_T_BYTES: return read_length_prefixed(r, v);
    default:
        return shape_err_set(r->err, SHAPE_EINTERNAL, "field '%s' has no Avro reading", r->field);
    }
}

static int read_field(reader *r, const shape_kafka_wire_field *f, shape_kafka_wire_value *v)
{
    memset(v, 0, sizeof *v);
    r->field = f->name;
    if (f->nullable) {
        int64_t branch;
        SHAPE_RETURN_NOT_OK(read_zigzag(r, 10, &branch));
        if (branch != 0 && branch != 1)
            return shape_err_set(r->err, SHAPE_EINVAL,
                                 "payload of schema id %u has union branch %lld in field '%s' (a union of 2)",
                                 (unsigned)r->id, (long long)branch, f->name);
        if (branch == f->null_branch) return SHAPE_OK;
    }
    return read_value(r, f->type, v);
}

int shape_kafka_wire_avro_decode(const shape_kafka_wire_field *fields, size_t n, uint32_t id, const uint8_t *p, size_t len,
                     shape_kafka_wire_value *values, shape_err *err)
{
    reader r = {p, p + len, id, "", err};
    for (size_t i = 0; i < n; i++) SHAPE_RETURN_NOT_OK(read_field(&r, &fields[i], &values[i]));
    if (r.p != r.end)
        return shape_err_set(err, SHAPE_EINVAL, "payload of schema id %u has %zu bytes left over after the record",
                             (unsigned)id, (size_t)(r.end - r.p));
    return SHAPE_OK;
}

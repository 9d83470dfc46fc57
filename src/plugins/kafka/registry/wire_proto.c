/* wire_proto.c — the wire decoder's Protobuf half: read the registry's proto3
 * text and decode one Protobuf message with it.
 *
 * Why: like the Avro half, this is an independent reading of the formats, so
 * a test that decodes the emitter's messages checks the encoder, the .proto
 * text it registered and the registration together.
 * How: a tolerant line parser — `//` comments dropped, `syntax` must say
 * proto3, `package`, `import` and `option` lines are skipped, then exactly
 * one `message NAME {` whose lines are `[optional ]TYPE NAME = N;` with TYPE
 * one of int32, int64, uint32, uint64, bool, float, double, string, bytes.
 * Decoding reads tags (field number << 3 | wire type) until the end: varints
 * (at most 10 bytes; int32 and uint32 keep the low 32 bits, as the spec
 * says), fixed32 floats, fixed64 doubles, length-delimited strings and bytes.
 * A field number the message does not declare, a wire type that does not
 * match the declared type or a field sent twice is an error (our encoder
 * never does that). Absent fields: `optional` ones are null, others take the
 * proto3 default (0, false, "").
 */
#include "wire_private.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 8
#define MAX_FIELD_NUMBER 536870911u /* 2^29 - 1 */

typedef enum parse_state { BEFORE_MESSAGE, BEFORE_BRACE, IN_MESSAGE, AFTER_MESSAGE } parse_state;

typedef struct proto_parser {
    uint32_t id;
    int line;
    parse_state state;
    shape_kafka_wire_field *fields;
    size_t n, cap;
    shape_err *err;
} proto_parser;

/* Split a line (comment already cut) into words; '=', ';', '{' and '}' are
 * words of their own. Returns the count, or -1 when there are too many. */
static int tokenize(char *s, char *tokens[MAX_TOKENS])
{
    static char punct[4][2] = {"=", ";", "{", "}"};
    int n = 0;
    while (*s) {
        if (isspace((unsigned char)*s)) {
            *s++ = '\0';
            continue;
        }
        if (n == MAX_TOKENS) return -1;
        const char *mark = strchr("=;{}", *s);
        if (mark) {
            tokens[n++] = punct[mark - "=;{}"];
            *s++ = '\0';
            continue;
        }
        tokens[n++] = s;
        while (*s && !isspace((unsigned char)*s) && !strchr("=;{}", *s)) s++;
    }
    return n;
}

static int line_error(proto_parser *ps, const char *what)
{
    return shape_err_set(ps->err, SHAPE_EINVAL, "schema id %u: line %d of the proto text %s", (unsigned)ps->id,
                         ps->line, what);
}

static int proto_type(const char *name, shape_kafka_wire_type *out)
{
    static const struct {
        const char *name;
        shape_kafka_wire_type type;
    } table[] = {{"int32", SHAPE_KAFKA_WIRE_T_INT32},   {"int64", SHAPE_KAFKA_WIRE_T_INT64}, {"uint32", SHAPE_KAFKA_WIRE_T_UINT32},
                 {"uint64", SHAPE_KAFKA_WIRE_T_UINT64}, {"bool", SHAPE_KAFKA_WIRE_T_BOOL},   {"float", SHAPE_KAFKA_WIRE_T_FLOAT},
                 {"double", SHAPE_KAFKA_WIRE_T_DOUBLE}, {"string", SHAPE_KAFKA_WIRE_T_STRING}, {"bytes", SHAPE_KAFKA_WIRE_T_BYTES}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(name, table[i].name) == 0) {
            *out = table[i].type;
            return 1;
        }
    }
    return 0;
}

static int parse_number(const char *s, uint32_t *out)
{
    if (!*s || strlen(s) > 10) return 0;
    uint64_t v = 0;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s)) return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v < 1 || v > MAX_FIELD_NUMBER || (v >= 19000 && v <= 19999)) return 0;
    *out = (uint32_t)v;
    return 1;
}

static int add_field(proto_parser *ps, const shape_kafka_wire_field *f)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (strcmp(ps->fields[i].name, f->name) == 0 || ps->fields[i].number == f->number)
            return line_error(ps, "repeats a field name or number");
    }
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 16;
        shape_kafka_wire_field *grown = realloc(ps->fields, cap * sizeof *grown);
        if (!grown) return shape_err_set(ps->err, SHAPE_ENOMEM, "out of memory");
        ps->fields = grown;
        ps->cap = cap;
    }
    shape_kafka_wire_field *slot = &ps->fields[ps->n];
    *slot = *f;
    slot->name = strdup(f->name);
    if (!slot->name) return shape_err_set(ps->err, SHAPE_ENOMEM, "out of memory");
    ps->n++;
    return SHAPE_OK;
}

/* `[optional ]TYPE NAME = N ;` */
static int field_line(proto_parser *ps, char **t, int n)
{
    shape_kafka_wire_field f;
    memset(&f, 0, sizeof f);
    int at = 0;
    if (strcmp(t[0], "repeated") == 0 || strcmp(t[0], "required") == 0)
        return shape_err_set(ps->err, SHAPE_EINVAL, "field '%s' of schema id %u has an unknown type '%s %s'",
                             n > 2 ? t[2] : "?", (unsigned)ps->id, t[0], n > 1 ? t[1] : "");
    if (strcmp(t[0], "optional") == 0) {
        f.nullable = 1;
        at = 1;
    }
    if (n - at != 5 || strcmp(t[at + 2], "=") != 0 || strcmp(t[at + 4], ";") != 0)
        return line_error(ps, "is not a field ([optional ]TYPE NAME = N;)");
    f.name = t[at + 1];
    if (!proto_type(t[at], &f.type)) {
        return shape_err_set(ps->err, SHAPE_EINVAL, "field '%s' of schema id %u has an unknown type '%s'",
                             f.name, (unsigned)ps->id, t[at]);
    }
    if (!parse_number(t[at + 3], &f.number)) return line_error(ps, "has an invalid field number");
    return add_field(ps, &f);
}

static int message_line(proto_parser *ps, char **t, int n)
{
    if (ps->state == AFTER_MESSAGE)
        return line_error(ps, "starts a second message; the decoder reads one message per schema");
    if (ps->state != BEFORE_MESSAGE || (n != 2 && n != 3) || (n == 3 && strcmp(t[2], "{") != 0))
        return line_error(ps, "is not a message start (message NAME {)");
    ps->state = n == 3 ? IN_MESSAGE : BEFORE_BRACE;
    return SHAPE_OK;
}

static int parse_line(proto_parser *ps, char *line)
{
    char *comment = strstr(line, "//");
    if (comment) *comment = '\0';
    char *t[MAX_TOKENS];
    int n = tokenize(line, t);
    if (n < 0) return line_error(ps, "has too many words");
    if (n == 0) return SHAPE_OK;
    if (ps->state == BEFORE_BRACE) {
        if (n != 1 || strcmp(t[0], "{") != 0) return line_error(ps, "should open the message with '{'");
        ps->state = IN_MESSAGE;
        return SHAPE_OK;
    }
    if (ps->state == IN_MESSAGE) {
        if (n == 1 && strcmp(t[0], "}") == 0) {
            ps->state = AFTER_MESSAGE;
            return SHAPE_OK;
        }
        return field_line(ps, t, n);
    }
    if (strcmp(t[0], "syntax") == 0) {
        if (n != 4 || strcmp(t[1], "=") != 0 || strcmp(t[3], ";") != 0 ||
            (strcmp(t[2], "\"proto3\"") != 0 && strcmp(t[2], "'proto3'") != 0))
            return line_error(ps, "does not declare syntax = \"proto3\";");
        return SHAPE_OK;
    }
    if (strcmp(t[0], "package") == 0 || strcmp(t[0], "import") == 0 || strcmp(t[0], "option") == 0) {
        if (strcmp(t[n - 1], ";") != 0) return line_error(ps, "does not end with ';'");
        return SHAPE_OK;
    }
    if (strcmp(t[0], "message") == 0) return message_line(ps, t, n);
    return line_error(ps, "is not syntax, package, import, option or message");
}

int shape_kafka_wire_proto_parse(const char *text, uint32_t id, shape_kafka_wire_field **fields, size_t *n, shape_err *err)
{
    *fields = NULL;
    *n = 0;
    char *copy = strdup(text);
    if (!copy) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    proto_parser ps = {id, 0, BEFORE_MESSAGE, NULL, 0, 0, err};
    int rc = SHAPE_OK;
    char *save = NULL;
    for (char *line = copy; line && rc == SHAPE_OK; line = save) {
        save = strchr(line, '\n');
        if (save) *save++ = '\0';
        ps.line++;
        rc = parse_line(&ps, line);
    }
    free(copy);
    if (rc == SHAPE_OK && ps.state != AFTER_MESSAGE)
        rc = shape_err_set(err, SHAPE_EINVAL, "schema id %u has no complete message in its proto text", (unsigned)id);
    if (rc != SHAPE_OK) {
        shape_kafka_wire_fields_free(ps.fields, ps.n);
        return rc;
    }
    *fields = ps.fields;
    *n = ps.n;
    return SHAPE_OK;
}

/* ---- binary ---------------------------------------------------------------- */

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };

typedef struct reader {
    const uint8_t *p, *end;
    uint32_t id;
    shape_err *err;
} reader;

static int ends_early(reader *r)
{
    return shape_err_set(r->err, SHAPE_EINVAL, "payload of schema id %u ends early", (unsigned)r->id);
}

static int read_varint(reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0;; i++) {
        if (r->p >= r->end) return ends_early(r);
        uint8_t b = *r->p++;
        if (i == 9 && (b & 0xfe))
            return shape_err_set(r->err, SHAPE_EINVAL, "payload of schema id %u has a varint beyond 64 bits",
                                 (unsigned)r->id);
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) break;
    }
    *out = v;
    return SHAPE_OK;
}

static int read_fixed(reader *r, size_t n, const uint8_t **out)
{
    if ((size_t)(r->end - r->p) < n) return ends_early(r);
    *out = r->p;
    r->p += n;
    return SHAPE_OK;
}

static uint64_t little_endian(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int wire_type_of(shape_kafka_wire_type t)
{
    switch (t) {
    case SHAPE_KAFKA_WIRE_T_DOUBLE: return WT_FIXED64;
    case SHAPE_KAFKA_WIRE_T_FLOAT: return WT_FIXED32;
    case SHAPE_KAFKA_WIRE_T_STRING:
    case SHAPE_KAFKA_WIRE_T_BYTES: return WT_LEN;
    default: return WT_VARINT;
    }
}

static int read_varint_value(reader *r, shape_kafka_wire_type t, shape_kafka_wire_value *v)
{
    uint64_t raw = 0;
    SHAPE_RETURN_NOT_OK(read_varint(r, &raw));
    switch (t) {
    case SHAPE_KAFKA_WIRE_T_BOOL: v->i = raw != 0; break;
    case SHAPE_KAFKA_WIRE_T_INT32: v->i = (int32_t)(uint32_t)raw; break;
    case SHAPE_KAFKA_WIRE_T_UINT32: v->i = (uint32_t)raw; break;
    case SHAPE_KAFKA_WIRE_T_INT64: v->i = (int64_t)raw; break;
    default: v->u = raw; break;
    }
    return SHAPE_OK;
}

static int read_value(reader *r, const shape_kafka_wire_field *f, shape_kafka_wire_value *v)
{
    const uint8_t *bytes = NULL;
    switch (wire_type_of(f->type)) {
    case WT_FIXED64:
        SHAPE_RETURN_NOT_OK(read_fixed(r, 8, &bytes));
        {
            uint64_t bits = little_endian(bytes, 8);
            memcpy(&v->d, &bits, sizeof v->d);
        }
        return SHAPE_OK;
    case WT_FIXED32:
        SHAPE_RETURN_NOT_OK(read_fixed(r, 4, &bytes));
        {
            uint32_t bits = (uint32_t)little_endian(bytes, 4);
            float x;
            memcpy(&x, &bits, sizeof x);
            v->d = x;
        }
        return SHAPE_OK;
    case WT_LEN: {
        uint64_t n = 0;
        SHAPE_RETURN_NOT_OK(read_varint(r, &n));
        if (n > (uint64_t)(r->end - r->p)) return ends_early(r);
        v->n = (size_t)n;
        return read_fixed(r, (size_t)n, &v->p);
    }
    default: return read_varint_value(r, f->type, v);
    }
}

static const shape_kafka_wire_field *field_of_number(const shape_kafka_wire_field *fields, size_t n, uint64_t number, size_t *index)
{
    for (size_t i = 0; i < n; i++) {
        if (fields[i].number == number) {
            *index = i;
            return &fields[i];
        }
    }
    return NULL;
}

static int read_member(reader *r, const shape_kafka_wire_field *fields, size_t n, shape_kafka_wire_value *values)
{
    uint64_t tag = 0;
    SHAPE_RETURN_NOT_OK(read_varint(r, &tag));
    size_t i;
    const shape_kafka_wire_field *f = field_of_number(fields, n, tag >> 3, &i);
    if (!f)
        return shape_err_set(r->err, SHAPE_EINVAL,
                             "payload of schema id %u has field number %llu, which the message does not declare",
                             (unsigned)r->id, (unsigned long long)(tag >> 3));
    if ((int)(tag & 7) != wire_type_of(f->type))
        return shape_err_set(r->err, SHAPE_EINVAL,
                             "payload of schema id %u has wire type %d for field '%s' (expected %d)", (unsigned)r->id,
                             (int)(tag & 7), f->name, wire_type_of(f->type));
    if (values[i].set)
        return shape_err_set(r->err, SHAPE_EINVAL, "payload of schema id %u has field '%s' twice", (unsigned)r->id,
                             f->name);
    values[i].set = 1;
    return read_value(r, f, &values[i]);
}

int shape_kafka_wire_proto_decode(const shape_kafka_wire_field *fields, size_t n, uint32_t id, const uint8_t *p, size_t len,
                      shape_kafka_wire_value *values, shape_err *err)
{
    memset(values, 0, n * sizeof *values);
    reader r = {p, p + len, id, err};
    while (r.p < r.end) SHAPE_RETURN_NOT_OK(read_member(&r, fields, n, values));
    for (size_t i = 0; i < n; i++) {
        if (values[i].set || fields[i].nullable) continue;
        values[i].set = 1; /* the proto3 default: zeros, false, "" */
        values[i].p = (const uint8_t *)"";
    }
    return SHAPE_OK;
}

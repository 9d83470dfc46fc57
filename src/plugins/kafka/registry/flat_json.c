/* flat_json.c — the registry formats' view of an Arrow column, and the flat
 * JSON event of an Arrow row.
 *
 * Why: the JSON Schema payload, the wire decoder's output and the plain
 * `--event-format json` body must be the same text for the same row, so
 * tests can compare them byte for byte; and the schema documents and the
 * binary encoders must agree with that text on every type. So the column's
 * type is core's (shape_arrow_type_resolve, shape/arrow_value.h) and the
 * text is core's one Arrow printer (shape/arrow_json.h, without
 * SHAPE_ARROW_JSON_PAD_YEARS: the §3.4 rules); this file adds what only
 * the registry formats need: the refusal of types they cannot carry, in
 * their words, pyarrow-style type names for messages, the §4.6
 * nullability rule, and the payload of a codec's columns.
 * How: shape_kafka_regfmt_type_resolve gates shape_arrow_type_resolve; the row
 * renderers write `{"name":value,...}` through the printer and on any
 * refusal put the buffer's length back.
 */
#include "registry/flat_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/codec_internal.h"
#include "shape/arrow_json.h"
#include "shape/json_write.h"

/* ---- type resolution ------------------------------------------------------- */

static int refuse_type(const struct ArrowSchema *field, shape_err *err)
{
    char text[160];
    shape_kafka_regfmt_type_text(field, text, sizeof text);
    return shape_err_set(err, SHAPE_EINVAL,
                         "cannot map column '%s' of type %s to a registry format (lists, structs "
                         "and maps are not supported); use --event-format json",
                         field->name ? field->name : "", text);
}

int shape_kafka_regfmt_type_resolve(const struct ArrowSchema *field, shape_arrow_type *out, shape_err *err)
{
    shape_arrow_type t;
    if (shape_arrow_type_resolve(field, &t) != 0 || t.kind == SHAPE_ARROW_MAP) return refuse_type(field, err);
    *out = t;
    return SHAPE_OK;
}

int shape_kafka_regfmt_field_nullable(const char *name, const shape_arrow_type *t, int64_t arrow_flags)
{
    if (name && (!strcmp(name, "_shape_table") || !strcmp(name, "_shape_seq"))) return 0;
    if (t->kind == SHAPE_ARROW_NULL || t->kind == SHAPE_ARROW_FLOAT16 || t->kind == SHAPE_ARROW_FLOAT32 ||
        t->kind == SHAPE_ARROW_FLOAT64)
        return 1;
    return (arrow_flags & ARROW_FLAG_NULLABLE) != 0;
}

/* ---- readable type names ---------------------------------------------------- */

typedef struct text_out {
    char *buf;
    size_t size, len;
} text_out;

static void put(text_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text_out *o, const char *fmt, ...)
{
    if (o->len >= o->size) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n > 0) o->len = (size_t)n >= o->size - o->len ? o->size - 1 : o->len + (size_t)n;
}

static const char *unit_name(char u)
{
    switch (u) {
    case 's': return "s";
    case 'm': return "ms";
    case 'u': return "us";
    case 'n': return "ns";
    default: return "?";
    }
}

static void type_text(text_out *o, const struct ArrowSchema *field, int depth);

static void child_list_text(text_out *o, const struct ArrowSchema *field, int depth, int named)
{
    for (int64_t i = 0; i < field->n_children; i++) {
        const struct ArrowSchema *c = field->children[i];
        if (i) put(o, ", ");
        if (named) put(o, "%s: ", c->name ? c->name : "");
        type_text(o, c, depth + 1);
    }
}

static void nested_text(text_out *o, const struct ArrowSchema *field, int depth)
{
    const char *f = field->format;
    if (!strcmp(f, "+l") || !strcmp(f, "+L") || !strcmp(f, "+vl") || !strcmp(f, "+vL")) {
        const char *names[] = {"list", "large_list", "list_view", "large_list_view"};
        int k = !strcmp(f, "+l") ? 0 : !strcmp(f, "+L") ? 1 : !strcmp(f, "+vl") ? 2 : 3;
        put(o, "%s<", names[k]);
        child_list_text(o, field, depth, 1);
        put(o, ">");
    } else if (!strncmp(f, "+w:", 3)) {
        put(o, "fixed_size_list<");
        child_list_text(o, field, depth, 1);
        put(o, ">[%s]", f + 3);
    } else if (!strcmp(f, "+s")) {
        put(o, "struct<");
        child_list_text(o, field, depth, 1);
        put(o, ">");
    } else if (!strcmp(f, "+m")) {
        put(o, "map<");
        if (field->n_children == 1) child_list_text(o, field->children[0], depth + 1, 0);
        put(o, ">");
    } else if (!strncmp(f, "+ud", 3) || !strncmp(f, "+us", 3)) {
        put(o, "%s<", f[2] == 'd' ? "dense_union" : "sparse_union");
        child_list_text(o, field, depth, 1);
        put(o, ">");
    } else if (!strcmp(f, "+r")) {
        put(o, "run_end_encoded<");
        child_list_text(o, field, depth, 1);
        put(o, ">");
    } else {
        put(o, "%s", f);
    }
}

static void temporal_text(text_out *o, const char *f)
{
    if (!strcmp(f, "tdD")) put(o, "date32[day]");
    else if (!strcmp(f, "tdm")) put(o, "date64[ms]");
    else if (f[1] == 't' && f[2]) put(o, "%s[%s]", f[2] != 'u' && f[2] != 'n' ? "time32" : "time64", unit_name(f[2]));
    else if (f[1] == 's' && f[2] && f[3] == ':') {
        if (f[4]) put(o, "timestamp[%s, tz=%s]", unit_name(f[2]), f + 4);
        else put(o, "timestamp[%s]", unit_name(f[2]));
    } else if (f[1] == 'D' && f[2]) put(o, "duration[%s]", unit_name(f[2]));
    else if (!strcmp(f, "tiM")) put(o, "month_interval");
    else if (!strcmp(f, "tiD")) put(o, "day_time_interval");
    else if (!strcmp(f, "tin")) put(o, "month_day_nano_interval");
    else put(o, "%s", f);
}

static void type_text(text_out *o, const struct ArrowSchema *field, int depth)
{
    const char *f = field->format ? field->format : "?";
    if (depth > 16) {
        put(o, "...");
        return;
    }
    if (field->dictionary) {
        put(o, "dictionary<values=");
        type_text(o, field->dictionary, depth + 1);
        put(o, ", indices=");
        struct ArrowSchema ix = *field;
        ix.dictionary = NULL;
        type_text(o, &ix, depth + 1);
        put(o, ", ordered=%d>", (field->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? 1 : 0);
        return;
    }
    if (f[0] && !f[1]) {
        static const char singles[] = "nbcsilCSILefguUzZ";
        static const char *names[] = {"null",   "bool",   "int8",   "int16",  "int32",  "int64",
                                      "uint8",  "uint16", "uint32", "uint64", "halffloat", "float",
                                      "double", "string", "large_string", "binary", "large_binary"};
        const char *hit = strchr(singles, f[0]);
        put(o, "%s", hit ? names[hit - singles] : f);
    } else if (f[0] == 'w' && f[1] == ':') {
        if (shape_arrow_is_uuid(field)) put(o, "extension<arrow.uuid>");
        else put(o, "fixed_size_binary[%s]", f + 2);
    } else if (f[0] == 'd' && f[1] == ':') {
        long p, s, bits;
        if (shape_arrow_parse_decimal(f, &p, &s, &bits)) put(o, "decimal%ld(%ld, %ld)", bits, p, s);
        else put(o, "%s", f);
    } else if (!strcmp(f, "vu")) put(o, "string_view");
    else if (!strcmp(f, "vz")) put(o, "binary_view");
    else if (f[0] == 't') temporal_text(o, f);
    else if (f[0] == '+') nested_text(o, field, depth);
    else put(o, "%s", f);
}

char *shape_kafka_regfmt_type_text(const struct ArrowSchema *field, char *buf, size_t size)
{
    if (size == 0) return buf;
    buf[0] = '\0';
    text_out o = {buf, size, 0};
    type_text(&o, field, 0);
    return buf;
}

/* ---- one row ------------------------------------------------------------------ */

/* A refusal leaves the buffer as it was (start: its length before the row). */
static int drop_row(shape_json_buf *out, size_t start, shape_err *err)
{
    out->len = start;
    if (out->data) out->data[start] = '\0';
    return shape_err_set(err, SHAPE_ENOMEM, "out of memory rendering a flat JSON event");
}

/* '}' after the members (`{}` when there were none). */
static int close_row(shape_json_buf *out, size_t start, size_t members, shape_err *err)
{
    if (shape_json_buf_room(out, 2) != 0) return drop_row(out, start, err);
    if (members == 0) out->data[out->len++] = '{';
    out->data[out->len++] = '}';
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

int shape_kafka_flat_json_row(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row,
                        shape_json_buf *out, shape_err *err)
{
    size_t start = out->len;
    int64_t logical = array->offset + row;
    for (int64_t k = 0; k < schema->n_children; k++) {
        const struct ArrowSchema *field = schema->children[k];
        shape_arrow_type t;
        int rc = shape_kafka_regfmt_type_resolve(field, &t, err);
        if (rc != SHAPE_OK) {
            out->len = start;
            if (out->data) out->data[start] = '\0';
            return rc;
        }
        const char *name = field->name ? field->name : "";
        size_t name_len = strlen(name);
        if (shape_json_buf_room(out, 6 * name_len + 4) != 0) return drop_row(out, start, err);
        char *p = out->data + out->len;
        *p++ = k ? ',' : '{';
        p = shape_json_string(p, name, name_len);
        *p++ = ':';
        out->len = (size_t)(p - out->data);
        if (shape_arrow_json_value(out, &t, array->children[k], logical, 0) != SHAPE_OK)
            return drop_row(out, start, err);
    }
    return close_row(out, start, (size_t)schema->n_children, err);
}

/* The JSON Schema payload: the flat event of the codec's columns (the poison
 * marker is not among them), keys rendered once when the codec was made. */
int shape_kafka_regfmt_json_encode(const shape_kafka_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                       shape_json_buf *out, shape_err *err)
{
    size_t start = out->len;
    int64_t logical = array->offset + row;
    for (size_t k = 0; k < c->ncolumns; k++) {
        const shape_kafka_regfmt_column *col = &c->columns[k];
        if (shape_json_buf_room(out, 1 + col->json_key_len) != 0) return drop_row(out, start, err);
        out->data[out->len++] = k ? ',' : '{';
        memcpy(out->data + out->len, col->json_key, col->json_key_len);
        out->len += col->json_key_len;
        if (shape_arrow_json_value(out, &col->type, array->children[col->child], logical, 0) != SHAPE_OK)
            return drop_row(out, start, err);
    }
    return close_row(out, start, c->ncolumns, err);
}

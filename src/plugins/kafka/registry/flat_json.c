/* flat_json.c — the flat JSON event of an Arrow row, and the one place that
 * says what an Arrow column is for the registry formats.
 *
 * Why: the JSON Schema payload, the wire decoder's output and the plain
 * `--event-format json` body must be the same text for the same row, so
 * tests can compare them byte for byte; and the schema documents and the
 * binary encoders must agree with that text on every type. Both needs are
 * served here: regfmt_type_resolve reads an Arrow field once into a
 * regfmt_type (codec_internal.h), and the renderers below turn values of
 * every mapped type into the §3.4 JSON text.
 * How: scalar renderers write into caller memory with a known bound
 * (SHAPE_FLAT_SCALAR_MAX, or the string/base64 bounds of shape/json_write.h);
 * the row renderer reserves room per column, writes `"name":value`, and on
 * any refusal puts the buffer's length back. Decimals are printed from a
 * 128-bit magnitude split into 19-digit chunks; times and dates use floor
 * division so values before midnight/1970 render like Python's datetime.
 * float16 values are converted exactly to double and rendered as floats.
 */
#include "registry/flat_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/codec_internal.h"
#include "shape/json_write.h"

/* ---- type resolution ------------------------------------------------------- */

static int refuse_type(const struct ArrowSchema *field, shape_err *err)
{
    char text[160];
    regfmt_type_text(field, text, sizeof text);
    return shape_err_set(err, SHAPE_EINVAL,
                         "cannot map column '%s' of type %s to a registry format (lists, structs "
                         "and maps are not supported); use --event-format json",
                         field->name ? field->name : "", text);
}

static int is_uuid_extension(const struct ArrowSchema *field)
{
    const char *value;
    int32_t len;
    if (!field->metadata ||
        !shape_arrow_metadata_find(field->metadata, "ARROW:extension:name", &value, &len))
        return 0;
    return len == 10 && memcmp(value, "arrow.uuid", 10) == 0;
}

/* "w:N" → N (> 0), else -1. */
static int32_t fixed_width(const char *f)
{
    if (f[0] != 'w' || f[1] != ':') return -1;
    char *end;
    long n = strtol(f + 2, &end, 10);
    return (*end == '\0' && n > 0 && n <= INT32_MAX) ? (int32_t)n : -1;
}

/* "d:P,S[,W]" → precision, scale, bit width; 0 on a malformed string. */
static int parse_decimal(const char *f, long *precision, long *scale, long *bits)
{
    if (f[0] != 'd' || f[1] != ':') return 0;
    char *end;
    *precision = strtol(f + 2, &end, 10);
    if (*end != ',') return 0;
    *scale = strtol(end + 1, &end, 10);
    *bits = 128;
    if (*end == ',') *bits = strtol(end + 1, &end, 10);
    return *end == '\0';
}

/* Time units of "s" / "m" / "u" / "n" as fraction digits, -1 otherwise. */
static int unit_digits(char u)
{
    switch (u) {
    case 's': return 0;
    case 'm': return 3;
    case 'u': return 6;
    case 'n': return 9;
    default: return -1;
    }
}

static int resolve_value_format(const struct ArrowSchema *field, regfmt_type *t)
{
    const char *f = field->format;
    if (!f) return -1;
    if (f[0] && !f[1]) {
        static const char singles[] = "nbcsilCSILefguUzZ";
        static const regfmt_kind kinds[] = {
            REGFMT_K_NULL,   REGFMT_K_BOOL,    REGFMT_K_INT8,    REGFMT_K_INT16,   REGFMT_K_INT32,
            REGFMT_K_INT64,  REGFMT_K_UINT8,   REGFMT_K_UINT16,  REGFMT_K_UINT32,  REGFMT_K_UINT64,
            REGFMT_K_FLOAT16, REGFMT_K_FLOAT32, REGFMT_K_FLOAT64, REGFMT_K_STRING, REGFMT_K_LARGE_STRING,
            REGFMT_K_BINARY, REGFMT_K_LARGE_BINARY};
        const char *hit = strchr(singles, f[0]);
        if (!hit) return -1;
        t->kind = kinds[hit - singles];
        return 0;
    }
    if (f[0] == 'w') {
        t->byte_width = fixed_width(f);
        if (t->byte_width < 0) return -1;
        t->kind = (t->byte_width == 16 && is_uuid_extension(field)) ? REGFMT_K_UUID
                                                                    : REGFMT_K_FIXED_BINARY;
        return 0;
    }
    if (f[0] == 'd') {
        long p, s, bits;
        if (!parse_decimal(f, &p, &s, &bits)) return -1;
        if ((bits != 32 && bits != 64 && bits != 128) || p < 1 || p > 38 || s < -20 || s > 38)
            return -1;
        t->kind = REGFMT_K_DECIMAL;
        t->byte_width = (int32_t)(bits / 8);
        t->precision = (int32_t)p;
        t->scale = (int32_t)s;
        return 0;
    }
    if (f[0] != 't') return -1;
    if (!strcmp(f, "tdD")) { t->kind = REGFMT_K_DATE32; return 0; }
    if (!strcmp(f, "tdm")) { t->kind = REGFMT_K_DATE64; return 0; }
    if (f[1] == 't' && f[2] && !f[3]) {
        int d = unit_digits(f[2]);
        if (d < 0) return -1;
        t->kind = d <= 3 ? REGFMT_K_TIME32 : REGFMT_K_TIME64;
        t->unit_digits = (int8_t)d;
        return 0;
    }
    if (f[1] == 's' && f[2] && f[3] == ':') {
        int d = unit_digits(f[2]);
        if (d < 0) return -1;
        t->kind = REGFMT_K_TIMESTAMP;
        t->unit_digits = (int8_t)d;
        t->zoned = f[4] != '\0';
        return 0;
    }
    return -1;
}

/* Index formats of a dictionary column: width in bytes, signedness. */
static int resolve_index(const char *f, regfmt_type *t)
{
    static const char signed_ix[] = "csil", unsigned_ix[] = "CSIL";
    if (!f || !f[0] || f[1]) return -1;
    const char *s = strchr(signed_ix, f[0]), *u = strchr(unsigned_ix, f[0]);
    if (s) t->index_width = (int8_t)(1 << (s - signed_ix));
    else if (u) {
        t->index_width = (int8_t)(1 << (u - unsigned_ix));
        t->index_unsigned = 1;
    } else
        return -1;
    return 0;
}

int regfmt_type_resolve(const struct ArrowSchema *field, regfmt_type *out, shape_err *err)
{
    regfmt_type t;
    memset(&t, 0, sizeof t);
    const struct ArrowSchema *values = field;
    if (field->dictionary) {
        if (resolve_index(field->format, &t) != 0 || field->dictionary->dictionary)
            return refuse_type(field, err);
        values = field->dictionary;
    }
    if (resolve_value_format(values, &t) != 0) return refuse_type(field, err);
    *out = t;
    return SHAPE_OK;
}

int regfmt_field_nullable(const char *name, const regfmt_type *t, int64_t arrow_flags)
{
    if (name && (!strcmp(name, "_shape_table") || !strcmp(name, "_shape_seq"))) return 0;
    if (t->kind == REGFMT_K_NULL || t->kind == REGFMT_K_FLOAT16 || t->kind == REGFMT_K_FLOAT32 ||
        t->kind == REGFMT_K_FLOAT64)
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
    else if (f[1] == 't' && f[2]) put(o, "%s[%s]", unit_digits(f[2]) <= 3 ? "time32" : "time64", unit_name(f[2]));
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
        if (is_uuid_extension(field)) put(o, "extension<arrow.uuid>");
        else put(o, "fixed_size_binary[%s]", f + 2);
    } else if (f[0] == 'd' && f[1] == ':') {
        long p, s, bits;
        if (parse_decimal(f, &p, &s, &bits)) put(o, "decimal%ld(%ld, %ld)", bits, p, s);
        else put(o, "%s", f);
    } else if (!strcmp(f, "vu")) put(o, "string_view");
    else if (!strcmp(f, "vz")) put(o, "binary_view");
    else if (f[0] == 't') temporal_text(o, f);
    else if (f[0] == '+') nested_text(o, field, depth);
    else put(o, "%s", f);
}

char *regfmt_type_text(const struct ArrowSchema *field, char *buf, size_t size)
{
    if (size == 0) return buf;
    buf[0] = '\0';
    text_out o = {buf, size, 0};
    type_text(&o, field, 0);
    return buf;
}

/* ---- scalar renderers -------------------------------------------------------- */

static char *put2(char *p, unsigned v)
{
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
    return p + 2;
}

char *shape_flat_json_date(char *p, int64_t days)
{
    *p++ = '"';
    p = shape_json_civil_date(p, days);
    *p++ = '"';
    return p;
}

static const int64_t pow10_i64[] = {1,        10,        100,        1000,      10000,
                                    100000,   1000000,   10000000,   100000000, 1000000000};

char *shape_flat_json_time(char *p, int64_t value, int digits)
{
    if (digits < 0) digits = 0;
    if (digits > 9) digits = 9;
    int64_t per_sec = pow10_i64[digits];
    int64_t secs = regfmt_floor_div(value, per_sec);
    int64_t frac = value - secs * per_sec;
    int64_t sod = secs - regfmt_floor_div(secs, 86400) * 86400; /* wrapped into one day */
    *p++ = '"';
    p = put2(p, (unsigned)(sod / 3600));
    *p++ = ':';
    p = put2(p, (unsigned)(sod / 60 % 60));
    *p++ = ':';
    p = put2(p, (unsigned)(sod % 60));
    if (digits > 0) {
        *p++ = '.';
        for (int i = digits - 1; i >= 0; i--) {
            p[i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        p += digits;
    }
    *p++ = '"';
    return p;
}

/* Decimal digits of a 128-bit magnitude, most significant first; returns the count. */
static int u128_digits(unsigned __int128 v, char out[40])
{
    const uint64_t chunk = 10000000000000000000ull; /* 1e19 */
    uint64_t parts[3];
    int nparts = 0;
    while (v >= chunk) {
        parts[nparts++] = (uint64_t)(v % chunk);
        v /= chunk;
    }
    char tmp[24];
    int n = 0, k = 0;
    uint64_t top = (uint64_t)v;
    do {
        tmp[k++] = (char)('0' + top % 10);
        top /= 10;
    } while (top);
    while (k) out[n++] = tmp[--k];
    while (nparts) {
        uint64_t part = parts[--nparts];
        for (int i = 18; i >= 0; i--) {
            out[n + i] = (char)('0' + part % 10);
            part /= 10;
        }
        n += 19;
    }
    return n;
}

char *regfmt_decimal_text(char *p, int64_t hi, uint64_t lo, int32_t scale)
{
    unsigned __int128 v = ((unsigned __int128)(uint64_t)hi << 64) | lo;
    int negative = hi < 0;
    if (negative) v = ~v + 1;
    char digits[40];
    int n = u128_digits(v, digits);
    if (negative) *p++ = '-';
    if (scale < 0 && v == 0) scale = 0; /* zero is "0", whatever the scale */
    if (scale <= 0) {
        memcpy(p, digits, (size_t)n);
        p += n;
        memset(p, '0', (size_t)-scale);
        return p - scale;
    }
    if (n <= scale) {
        *p++ = '0';
        *p++ = '.';
        memset(p, '0', (size_t)(scale - n));
        p += scale - n;
        memcpy(p, digits, (size_t)n);
        return p + n;
    }
    memcpy(p, digits, (size_t)(n - scale));
    p += n - scale;
    *p++ = '.';
    memcpy(p, digits + n - scale, (size_t)scale);
    return p + scale;
}

char *shape_flat_json_decimal(char *p, int64_t hi, uint64_t lo, int32_t scale)
{
    *p++ = '"';
    p = regfmt_decimal_text(p, hi, lo, scale);
    *p++ = '"';
    return p;
}

char *shape_flat_json_uuid(char *p, const uint8_t bytes[16])
{
    *p++ = '"';
    p = regfmt_uuid_text(p, bytes);
    *p++ = '"';
    return p;
}

/* ---- one value --------------------------------------------------------------- */

size_t regfmt_json_value_bound(const regfmt_type *t, const struct ArrowArray *a, int64_t i)
{
    size_t n;
    switch (t->kind) {
    case REGFMT_K_STRING:
    case REGFMT_K_LARGE_STRING:
        regfmt_read_bytes(t, a, i, &n);
        return 6 * n + 2;
    case REGFMT_K_BINARY:
    case REGFMT_K_LARGE_BINARY:
    case REGFMT_K_FIXED_BINARY:
        regfmt_read_bytes(t, a, i, &n);
        return 4 * ((n + 2) / 3) + 2;
    default: return SHAPE_FLAT_SCALAR_MAX;
    }
}

char *regfmt_json_value(char *p, const regfmt_type *t, const struct ArrowArray *a, int64_t i)
{
    size_t n;
    const uint8_t *bytes;
    int64_t hi;
    uint64_t lo;
    switch (t->kind) {
    case REGFMT_K_NULL: memcpy(p, "null", 4); return p + 4;
    case REGFMT_K_BOOL:
        if (shape_bit_get((const uint8_t *)a->buffers[1], i)) {
            memcpy(p, "true", 4);
            return p + 4;
        }
        memcpy(p, "false", 5);
        return p + 5;
    case REGFMT_K_UINT64: return shape_json_u64(p, (uint64_t)regfmt_read_int(t, a, i));
    case REGFMT_K_FLOAT16:
    case REGFMT_K_FLOAT32:
    case REGFMT_K_FLOAT64: return shape_json_f64(p, regfmt_read_float(t, a, i));
    case REGFMT_K_STRING:
    case REGFMT_K_LARGE_STRING:
        bytes = regfmt_read_bytes(t, a, i, &n);
        return shape_json_string(p, (const char *)bytes, n);
    case REGFMT_K_BINARY:
    case REGFMT_K_LARGE_BINARY:
    case REGFMT_K_FIXED_BINARY:
        bytes = regfmt_read_bytes(t, a, i, &n);
        return shape_json_base64(p, bytes, n);
    case REGFMT_K_UUID: return shape_flat_json_uuid(p, regfmt_read_bytes(t, a, i, &n));
    case REGFMT_K_DECIMAL:
        regfmt_read_decimal(t, a, i, &hi, &lo);
        return shape_flat_json_decimal(p, hi, lo, t->scale);
    case REGFMT_K_DATE32:
    case REGFMT_K_DATE64: return shape_flat_json_date(p, regfmt_days(t, regfmt_read_int(t, a, i)));
    case REGFMT_K_TIME32:
    case REGFMT_K_TIME64: return shape_flat_json_time(p, regfmt_read_int(t, a, i), t->unit_digits);
    case REGFMT_K_TIMESTAMP:
        return shape_json_timestamp(p, regfmt_read_int(t, a, i), t->unit_digits, t->zoned);
    default: return shape_json_i64(p, regfmt_read_int(t, a, i)); /* signed and small unsigned ints */
    }
}

/* ---- one row ------------------------------------------------------------------ */

/* Append sep (',' or '{') and `"name":value` for column `col`. */
static int append_member(shape_json_buf *out, char sep, const char *name, size_t name_len,
                         const regfmt_type *t, const struct ArrowArray *col, int64_t row)
{
    int64_t i = 0;
    const struct ArrowArray *a = regfmt_value_at(t, col, row, &i);
    size_t need = 1 + 6 * name_len + 3 + (a ? regfmt_json_value_bound(t, a, i) : 4);
    if (shape_json_buf_reserve(out, need) != 0) return SHAPE_ENOMEM;
    char *p = out->data + out->len;
    *p++ = sep;
    p = shape_json_string(p, name, name_len);
    *p++ = ':';
    if (a) p = regfmt_json_value(p, t, a, i);
    else {
        memcpy(p, "null", 4);
        p += 4;
    }
    out->len = (size_t)(p - out->data);
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

int shape_flat_json_row(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row,
                        shape_json_buf *out, shape_err *err)
{
    size_t start = out->len;
    int64_t logical = array->offset + row;
    int rc = SHAPE_OK;
    for (int64_t k = 0; k < schema->n_children && rc == SHAPE_OK; k++) {
        const struct ArrowSchema *field = schema->children[k];
        regfmt_type t;
        rc = regfmt_type_resolve(field, &t, err);
        if (rc != SHAPE_OK) break;
        const char *name = field->name ? field->name : "";
        rc = append_member(out, k ? ',' : '{', name, strlen(name), &t, array->children[k], logical);
        if (rc == SHAPE_ENOMEM) shape_err_set(err, rc, "out of memory rendering a flat JSON event");
    }
    if (rc == SHAPE_OK && shape_json_buf_reserve(out, 2) != 0)
        rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory rendering a flat JSON event");
    if (rc != SHAPE_OK) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return rc;
    }
    if (schema->n_children == 0) out->data[out->len++] = '{';
    out->data[out->len++] = '}';
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

/* The JSON Schema payload: the flat event of the codec's columns (the poison
 * marker is not among them), keys rendered once when the codec was made. */
int regfmt_json_encode(const shape_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                       shape_json_buf *out, shape_err *err)
{
    size_t start = out->len;
    int64_t logical = array->offset + row;
    for (size_t k = 0; k < c->ncolumns; k++) {
        const regfmt_column *col = &c->columns[k];
        const struct ArrowArray *child = array->children[col->child];
        int64_t i = 0;
        const struct ArrowArray *a = regfmt_value_at(&col->type, child, logical, &i);
        size_t need = 1 + col->json_key_len + (a ? regfmt_json_value_bound(&col->type, a, i) : 4) + 2;
        if (shape_json_buf_reserve(out, need) != 0) {
            out->len = start;
            if (out->data) out->data[start] = '\0';
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory rendering a flat JSON event");
        }
        char *p = out->data + out->len;
        *p++ = k ? ',' : '{';
        memcpy(p, col->json_key, col->json_key_len);
        p += col->json_key_len;
        if (a) p = regfmt_json_value(p, &col->type, a, i);
        else {
            memcpy(p, "null", 4);
            p += 4;
        }
        out->len = (size_t)(p - out->data);
    }
    if (shape_json_buf_reserve(out, 2) != 0) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory rendering a flat JSON event");
    }
    if (c->ncolumns == 0) out->data[out->len++] = '{';
    out->data[out->len++] = '}';
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

/* arrow_json.c — Arrow values and rows to JSON text (rules in
 * shape/arrow_json.h): the one printer behind `shape stream-read` and the
 * registry formats' flat event.
 *
 * Why this shape: stream-read prints every row by default, so this printer
 * is on the hot path of every read that is piped somewhere (it used to cost
 * twice the decoding). How:
 *   - a batch of rows is printed into one growable shape_json_buf (the
 *     caller writes it out in large pieces); each column's type is resolved
 *     once per call (shape_arrow_type_resolve) and its key ("name":,
 *     escaped) rendered once per call, not per row;
 *   - each value is located through shape_arrow_value_at (validity,
 *     dictionary) and written by the inline writers of shape/json_write.h
 *     straight into the buffer: strings and binary reserve their own bound,
 *     every other kind SHAPE_JSON_SCALAR_MAX; appends check the room inline
 *     and only call shape_json_buf_reserve when it must grow;
 *   - the per-value printer is file-local so the row loop inlines it; the
 *     exported shape_arrow_json_value is a wrapper for other modules.
 */
#include "shape/arrow_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/json_write.h"
#include "shape/timestamp.h"

/* Room for n more bytes and the trailing NUL, growing only when needed. */
static inline int room(shape_json_buf *out, size_t n)
{
    return shape_json_buf_room(out, n) != 0 ? SHAPE_ENOMEM : SHAPE_OK;
}

static inline int put(shape_json_buf *out, const char *text, size_t len)
{
    if (room(out, len) != SHAPE_OK) return SHAPE_ENOMEM;
    memcpy(out->data + out->len, text, len);
    out->len += len;
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

/* Close an append that wrote at out->data + out->len up to end. */
static inline int done(shape_json_buf *out, char *end)
{
    out->len = (size_t)(end - out->data);
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

int shape_json_append_raw(shape_json_buf *out, const char *text, size_t len) { return put(out, text, len); }

static inline int append_string(shape_json_buf *out, const void *bytes, size_t len)
{
    if (len > (SIZE_MAX - 3) / 6 || room(out, len * 6 + 2) != SHAPE_OK) return SHAPE_ENOMEM;
    return done(out, shape_json_string(out->data + out->len, bytes, len));
}

int shape_json_append_string(shape_json_buf *out, const void *bytes, size_t len)
{
    return append_string(out, bytes, len);
}

static inline int append_base64(shape_json_buf *out, const void *bytes, size_t len)
{
    if (len > SIZE_MAX / 2 || room(out, (len + 2) / 3 * 4 + 2) != SHAPE_OK) return SHAPE_ENOMEM;
    return done(out, shape_json_base64(out->data + out->len, bytes, len));
}

int shape_json_append_base64(shape_json_buf *out, const void *bytes, size_t len)
{
    return append_base64(out, bytes, len);
}

int shape_json_append_double(shape_json_buf *out, double d)
{
    if (room(out, SHAPE_JSON_F64_MAX) != SHAPE_OK) return SHAPE_ENOMEM;
    return done(out, shape_json_f64(out->data + out->len, d));
}

/* The first instant of year 0 in units of 10^-digits s; before it a year
 * is negative. (No ns value is that early: INT64_MIN ns is in 1677.) */
static const int64_t year0_start[] = {-62167219200LL,
                                      -62167219200LL * 10,
                                      -62167219200LL * 100,
                                      -62167219200LL * 1000,
                                      -62167219200LL * 10000,
                                      -62167219200LL * 100000,
                                      -62167219200LL * 1000000,
                                      -62167219200LL * 10000000,
                                      -62167219200LL * 100000000,
                                      INT64_MIN};

/* A timestamp before year 0 with its year as "%04lld" would write it: the
 * text of shape_json_timestamp ("-1-...", "-99-...") with the year's
 * digits padded to three after the sign. */
static char *timestamp_padded_year(char *p, int64_t v, int digits, int zoned)
{
    char *end = shape_json_timestamp(p, v, digits, zoned);
    const char *dash = memchr(p + 2, '-', (size_t)(end - p - 2)); /* after the year's digits */
    size_t year_digits = (size_t)(dash - (p + 2));
    if (year_digits >= 3) return end;
    size_t pad = 3 - year_digits;
    memmove(p + 2 + pad, p + 2, (size_t)(end - p - 2));
    memset(p + 2, '0', pad);
    return end + pad;
}

/* A value of a fixed-size kind (room: SHAPE_JSON_SCALAR_MAX). */
static inline char *scalar(char *p, const shape_arrow_type *t, const struct ArrowArray *a, int64_t i,
                           unsigned flags)
{
    int64_t hi, v;
    uint64_t lo;
    size_t n;
    switch (t->kind) {
    case SHAPE_ARROW_BOOL:
        if (shape_bit_get((const uint8_t *)a->buffers[1], i)) {
            memcpy(p, "true", 4);
            return p + 4;
        }
        memcpy(p, "false", 5);
        return p + 5;
    case SHAPE_ARROW_UINT64: return shape_json_u64(p, (uint64_t)shape_arrow_read_int(t, a, i));
    case SHAPE_ARROW_FLOAT16:
    case SHAPE_ARROW_FLOAT32:
    case SHAPE_ARROW_FLOAT64: return shape_json_f64(p, shape_arrow_read_float(t, a, i));
    case SHAPE_ARROW_UUID: return shape_json_uuid(p, shape_arrow_read_bytes(t, a, i, &n));
    case SHAPE_ARROW_DECIMAL:
        shape_arrow_read_decimal(t, a, i, &hi, &lo);
        return shape_json_decimal(p, hi, lo, t->scale);
    case SHAPE_ARROW_DATE32:
    case SHAPE_ARROW_DATE64: return shape_json_date(p, shape_arrow_days(t, shape_arrow_read_int(t, a, i)));
    case SHAPE_ARROW_TIME32:
    case SHAPE_ARROW_TIME64: return shape_json_time(p, shape_arrow_read_int(t, a, i), t->unit_digits);
    case SHAPE_ARROW_TIMESTAMP:
        v = ((const int64_t *)a->buffers[1])[i];
        if ((flags & SHAPE_ARROW_JSON_PAD_YEARS) && v < year0_start[t->unit_digits])
            return timestamp_padded_year(p, v, t->unit_digits, t->zoned);
        return shape_json_timestamp(p, v, t->unit_digits, t->zoned);
    default: return shape_json_i64(p, shape_arrow_read_int(t, a, i)); /* signed and small unsigned ints */
    }
}

/* A map value at physical index i: {"key":base64,...}. */
static int map_value(shape_json_buf *out, const struct ArrowArray *a, int64_t i)
{
    const int32_t *offsets = (const int32_t *)a->buffers[1];
    const struct ArrowArray *entries = a->children[0];
    const struct ArrowArray *keys = entries->children[0], *values = entries->children[1];
    int64_t first = entries->offset + offsets[i], count = offsets[i + 1] - offsets[i];
    SHAPE_RETURN_NOT_OK(put(out, "{", 1));
    for (int64_t k = 0; k < count; k++) {
        size_t len;
        const uint8_t *bytes = shape_arrow_bytes_at(keys, first + k, &len);
        if (k) SHAPE_RETURN_NOT_OK(put(out, ",", 1));
        SHAPE_RETURN_NOT_OK(append_string(out, bytes, len));
        SHAPE_RETURN_NOT_OK(put(out, ":", 1));
        if (!shape_arrow_is_valid(values, first + k)) {
            SHAPE_RETURN_NOT_OK(put(out, "null", 4));
            continue;
        }
        bytes = shape_arrow_bytes_at(values, first + k, &len);
        SHAPE_RETURN_NOT_OK(append_base64(out, bytes, len));
    }
    return put(out, "}", 1);
}

static inline int append_value(shape_json_buf *out, const shape_arrow_type *t, const struct ArrowArray *col,
                               int64_t row, unsigned flags)
{
    int64_t i = 0;
    const struct ArrowArray *a = t->kind == SHAPE_ARROW_NULL ? NULL : shape_arrow_value_at(t, col, row, &i);
    if (!a) return put(out, "null", 4);
    const uint8_t *bytes;
    size_t len;
    switch (t->kind) {
    case SHAPE_ARROW_STRING:
    case SHAPE_ARROW_LARGE_STRING:
        bytes = shape_arrow_read_bytes(t, a, i, &len);
        return append_string(out, bytes, len);
    case SHAPE_ARROW_BINARY:
    case SHAPE_ARROW_LARGE_BINARY:
    case SHAPE_ARROW_FIXED_BINARY:
        bytes = shape_arrow_read_bytes(t, a, i, &len);
        return append_base64(out, bytes, len);
    case SHAPE_ARROW_MAP: return map_value(out, a, i);
    default:
        if (room(out, SHAPE_JSON_SCALAR_MAX) != SHAPE_OK) return SHAPE_ENOMEM;
        return done(out, scalar(out->data + out->len, t, a, i, flags));
    }
}

int shape_arrow_json_value(shape_json_buf *out, const shape_arrow_type *t, const struct ArrowArray *col,
                           int64_t row, unsigned flags)
{
    return append_value(out, t, col, row, flags);
}

/* The column of a type the printer does not know: null values are printed,
 * any other is refused. */
static int unknown_value(shape_json_buf *out, const struct ArrowArray *col, int64_t row, shape_err *err)
{
    if (!shape_arrow_is_valid(col, row)) return put(out, "null", 4);
    return shape_err_set(err, SHAPE_EINVAL, "cannot print a column of this type as JSON");
}

int shape_arrow_rows_json(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t first,
                          int64_t count, char end, unsigned flags, shape_json_buf *out, shape_err *err)
{
    int64_t nc = schema->n_children;
    shape_arrow_type *types = nc ? malloc((size_t)nc * sizeof *types) : NULL;
    unsigned char *known = nc ? malloc((size_t)nc) : NULL;
    size_t *key_end = nc ? malloc((size_t)nc * sizeof *key_end) : NULL;
    shape_json_buf keys = SHAPE_JSON_BUF_INIT; /* '{' or ',' then "name": for each column, back to back */
    int rc = nc && (!types || !known || !key_end) ? SHAPE_ENOMEM : SHAPE_OK;
    for (int64_t c = 0; c < nc && rc == SHAPE_OK; c++) {
        const struct ArrowSchema *field = schema->children[c];
        known[c] = shape_arrow_type_resolve(field, &types[c]) == 0 &&
                   (!(flags & SHAPE_ARROW_JSON_CORE_TYPES) || shape_type_from_format(field->format) >= 0);
        const char *name = field->name ? field->name : "";
        rc = put(&keys, c ? "," : "{", 1);
        if (rc == SHAPE_OK) rc = append_string(&keys, name, strlen(name));
        if (rc == SHAPE_OK) rc = put(&keys, ":", 1);
        key_end[c] = keys.len;
    }
    for (int64_t r = first; r < first + count && rc == SHAPE_OK; r++) {
        size_t key_start = 0;
        int64_t row = array->offset + r;
        for (int64_t c = 0; c < nc && rc == SHAPE_OK; c++) {
            rc = put(out, keys.data + key_start, key_end[c] - key_start);
            key_start = key_end[c];
            if (rc != SHAPE_OK) break;
            if (known[c]) rc = append_value(out, &types[c], array->children[c], row, flags);
            else rc = unknown_value(out, array->children[c], row, err);
        }
        if (rc == SHAPE_OK) rc = nc ? put(out, "}", 1) : put(out, "{}", 2);
        if (rc == SHAPE_OK && end) rc = put(out, &end, 1);
    }
    free(types);
    free(known);
    free(key_end);
    shape_json_buf_reset(&keys);
    if (rc == SHAPE_ENOMEM) return shape_err_set(err, SHAPE_ENOMEM, "out of memory printing a row");
    return rc;
}

#define STREAM_READ (SHAPE_ARROW_JSON_PAD_YEARS | SHAPE_ARROW_JSON_CORE_TYPES)

int shape_arrow_row_json(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row,
                         shape_json_buf *out, shape_err *err)
{
    return shape_arrow_rows_json(schema, array, row, 1, '\0', STREAM_READ, out, err);
}

int shape_arrow_rows_jsonl(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t first,
                           int64_t count, shape_json_buf *out, shape_err *err)
{
    return shape_arrow_rows_json(schema, array, first, count, '\n', STREAM_READ, out, err);
}

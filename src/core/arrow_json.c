/* arrow_json.c — Arrow rows to JSON text (rules in shape/arrow_json.h).
 *
 * Why this shape: `shape stream-read` prints every row by default, so this
 * printer is on the hot path of every read that is piped somewhere; it
 * used to cost twice the decoding. How:
 *   - a batch of rows is printed into one growable shape_json_buf (the
 *     caller writes it out in large pieces); each column's type comes from
 *     its format string and its key ("name":, escaped) is rendered once per
 *     call, not per row;
 *   - appends check the buffer's room inline and only call
 *     shape_json_buf_reserve when it must grow;
 *   - strings are escaped by shape_json_string (shape/json_write.h, the emitted
 *     events' escaper: a word at a time);
 *   - int64 and doubles are written by shape_json_i64 and shape_json_f64
 *     (as in emitted events; doubles as Python's repr), not snprintf;
 *     timestamps by shape_format_iso8601_us.
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
    if (out->data && out->cap - out->len > n) return SHAPE_OK;
    return shape_json_buf_reserve(out, n) != 0 ? SHAPE_ENOMEM : SHAPE_OK;
}

static inline int put(shape_json_buf *out, const char *text, size_t len)
{
    if (room(out, len) != SHAPE_OK) return SHAPE_ENOMEM;
    memcpy(out->data + out->len, text, len);
    out->len += len;
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

int shape_json_append_raw(shape_json_buf *out, const char *text, size_t len) { return put(out, text, len); }

int shape_json_append_string(shape_json_buf *out, const void *bytes, size_t len)
{
    if (len > (SIZE_MAX - 3) / 6 || room(out, len * 6 + 2) != SHAPE_OK) return SHAPE_ENOMEM;
    char *end = shape_json_string(out->data + out->len, bytes, len);
    out->len = (size_t)(end - out->data);
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

int shape_json_append_base64(shape_json_buf *out, const void *bytes, size_t len)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = bytes;
    if (shape_json_buf_reserve(out, (len + 2) / 3 * 4 + 2) != 0) return SHAPE_ENOMEM;
    char *w = out->data + out->len;
    *w++ = '"';
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *w++ = alphabet[v >> 18];
        *w++ = alphabet[(v >> 12) & 63];
        *w++ = alphabet[(v >> 6) & 63];
        *w++ = alphabet[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);
        *w++ = alphabet[v >> 18];
        *w++ = alphabet[(v >> 12) & 63];
        *w++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
        *w++ = '=';
    }
    *w++ = '"';
    out->len = (size_t)(w - out->data);
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

int shape_json_append_double(shape_json_buf *out, double d)
{
    /* The same text as emitted events: Python's repr, "null" when not finite. */
    if (shape_json_buf_reserve(out, SHAPE_JSON_F64_MAX) != 0) return SHAPE_ENOMEM;
    char *end = shape_json_f64(out->data + out->len, d);
    out->len = (size_t)(end - out->data);
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

static int append_value(shape_json_buf *out, int type, const struct ArrowArray *a, int64_t i, shape_err *err)
{
    if (type != SHAPE_TYPE_NULL && !shape_arrow_is_valid(a, i)) return shape_json_append_raw(out, "null", 4);
    char text[48];
    size_t len;
    const uint8_t *bytes;
    switch (type) {
    case SHAPE_TYPE_NULL: return shape_json_append_raw(out, "null", 4);
    case SHAPE_TYPE_BOOL:
        return shape_arrow_bool_at(a, i) ? shape_json_append_raw(out, "true", 4) : shape_json_append_raw(out, "false", 5);
    case SHAPE_TYPE_INT64: {
        if (room(out, 20) != SHAPE_OK) return SHAPE_ENOMEM;
        out->len = (size_t)(shape_json_i64(out->data + out->len, shape_arrow_int64_at(a, i)) - out->data);
        out->data[out->len] = '\0';
        return SHAPE_OK;
    }
    case SHAPE_TYPE_FLOAT64: return shape_json_append_double(out, shape_arrow_double_at(a, i));
    case SHAPE_TYPE_UTF8:
        bytes = shape_arrow_bytes_at(a, i, &len);
        return shape_json_append_string(out, bytes, len);
    case SHAPE_TYPE_BINARY:
        bytes = shape_arrow_bytes_at(a, i, &len);
        return shape_json_append_base64(out, bytes, len);
    case SHAPE_TYPE_TIMESTAMP_US:
    case SHAPE_TYPE_TIMESTAMP_NS: {
        int64_t v = shape_arrow_int64_at(a, i);
        int64_t us = type == SHAPE_TYPE_TIMESTAMP_US ? v : (v >= 0 ? v / 1000 : -((-v + 999) / 1000));
        /* text = '"' + "YYYY-MM-DDTHH:MM:SS.ffffffZ" (27 bytes, 'Z' at index 27) + '"' */
        int n = shape_format_iso8601_us(us, text + 1, sizeof text - 2);
        text[0] = '"';
        if (type == SHAPE_TYPE_TIMESTAMP_NS) { /* ...ffffffZ -> ...fffffffffZ */
            int64_t ns = ((v % 1000) + 1000) % 1000;
            n += snprintf(text + n, sizeof text - (size_t)n, "%03lldZ", (long long)ns) - 1;
        }
        text[n + 1] = '"';
        return shape_json_append_raw(out, text, (size_t)n + 2);
    }
    case SHAPE_TYPE_MAP: {
        const struct ArrowArray *keys, *values;
        int64_t first;
        int64_t count = shape_arrow_map_row(a, i, &keys, &values, &first);
        SHAPE_RETURN_NOT_OK(shape_json_append_raw(out, "{", 1));
        for (int64_t k = 0; k < count; k++) {
            if (k) SHAPE_RETURN_NOT_OK(shape_json_append_raw(out, ",", 1));
            bytes = shape_arrow_bytes_at(keys, first + k, &len);
            SHAPE_RETURN_NOT_OK(shape_json_append_string(out, bytes, len));
            SHAPE_RETURN_NOT_OK(shape_json_append_raw(out, ":", 1));
            SHAPE_RETURN_NOT_OK(append_value(out, SHAPE_TYPE_BINARY, values, first + k, err));
        }
        return shape_json_append_raw(out, "}", 1);
    }
    default: return shape_err_set(err, SHAPE_EINVAL, "cannot print a column of this type as JSON");
    }
}

/* The rows [first, first + count) of (schema, array) into out, each
 * followed by `end` when it is not NUL. Column types and keys are worked
 * out once for the call. */
static int rows_json(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t first, int64_t count,
                     char end, shape_json_buf *out, shape_err *err)
{
    int64_t nc = schema->n_children;
    int *types = nc ? malloc((size_t)nc * sizeof *types) : NULL;
    size_t *key_end = nc ? malloc((size_t)nc * sizeof *key_end) : NULL;
    shape_json_buf keys = {0}; /* '{' or ',' then "name": for each column, back to back */
    int rc = nc && (!types || !key_end) ? SHAPE_ENOMEM : SHAPE_OK;
    for (int64_t c = 0; c < nc && rc == SHAPE_OK; c++) {
        const struct ArrowSchema *field = schema->children[c];
        types[c] = shape_type_from_format(field->format);
        rc = put(&keys, c ? "," : "{", 1);
        if (rc == SHAPE_OK) rc = shape_json_append_string(&keys, field->name, strlen(field->name));
        if (rc == SHAPE_OK) rc = put(&keys, ":", 1);
        key_end[c] = keys.len;
    }
    for (int64_t r = first; r < first + count && rc == SHAPE_OK; r++) {
        size_t key_start = 0;
        for (int64_t c = 0; c < nc && rc == SHAPE_OK; c++) {
            rc = put(out, keys.data + key_start, key_end[c] - key_start);
            key_start = key_end[c];
            if (rc == SHAPE_OK) rc = append_value(out, types[c], array->children[c], array->offset + r, err);
        }
        if (rc == SHAPE_OK) rc = nc ? put(out, "}", 1) : put(out, "{}", 2);
        if (rc == SHAPE_OK && end) rc = put(out, &end, 1);
    }
    free(types);
    free(key_end);
    shape_json_buf_release(&keys);
    if (rc == SHAPE_ENOMEM) return shape_err_set(err, SHAPE_ENOMEM, "out of memory printing a row");
    return rc;
}

int shape_arrow_row_json(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row,
                         shape_json_buf *out, shape_err *err)
{
    return rows_json(schema, array, row, 1, '\0', out, err);
}

int shape_arrow_rows_jsonl(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t first,
                           int64_t count, shape_json_buf *out, shape_err *err)
{
    return rows_json(schema, array, first, count, '\n', out, err);
}

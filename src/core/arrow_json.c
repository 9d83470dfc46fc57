/* arrow_json.c — Arrow rows to JSON text (rules in shape/arrow_json.h).
 *
 * How: per column, dispatch on the type from the child's format string and
 * read the value with the inline helpers of shape/arrow.h; text goes into a
 * growable shape_json_buf. Cold enough (a printer) to favour clarity.
 */
#include "shape/arrow_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/event.h"
#include "shape/timestamp.h"

int shape_json_append_raw(shape_json_buf *out, const char *text, size_t len)
{
    if (shape_json_buf_reserve(out, len) != 0) return SHAPE_ENOMEM;
    memcpy(out->data + out->len, text, len);
    out->len += len;
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

int shape_json_append_string(shape_json_buf *out, const void *bytes, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = bytes;
    if (shape_json_buf_reserve(out, len * 6 + 2) != 0) return SHAPE_ENOMEM;
    char *w = out->data + out->len;
    *w++ = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            *w++ = '\\';
            *w++ = (char)c;
        } else if (c < 0x20) {
            const char *named = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
            if (named) {
                memcpy(w, named, 2);
                w += 2;
            } else {
                memcpy(w, "\\u00", 4);
                w[4] = hex[c >> 4];
                w[5] = hex[c & 15];
                w += 6;
            }
        } else {
            *w++ = (char)c;
        }
    }
    *w++ = '"';
    out->len = (size_t)(w - out->data);
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
        int n = snprintf(text, sizeof text, "%lld", (long long)shape_arrow_int64_at(a, i));
        return shape_json_append_raw(out, text, (size_t)n);
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

int shape_arrow_row_json(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row,
                         shape_json_buf *out, shape_err *err)
{
    if (shape_json_append_raw(out, "{", 1) != SHAPE_OK) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (int64_t c = 0; c < schema->n_children; c++) {
        const struct ArrowSchema *field = schema->children[c];
        int rc = c ? shape_json_append_raw(out, ",", 1) : SHAPE_OK;
        if (rc == SHAPE_OK) rc = shape_json_append_string(out, field->name, strlen(field->name));
        if (rc == SHAPE_OK) rc = shape_json_append_raw(out, ":", 1);
        if (rc == SHAPE_OK)
            rc = append_value(out, shape_type_from_format(field->format), array->children[c],
                              array->offset + row, err);
        if (rc == SHAPE_ENOMEM) return shape_err_set(err, SHAPE_ENOMEM, "out of memory printing a row");
        if (rc != SHAPE_OK) return rc;
    }
    if (shape_json_append_raw(out, "}", 1) != SHAPE_OK) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    return SHAPE_OK;
}

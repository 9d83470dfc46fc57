/* json_text.c — the small, cold helpers of the JSON scanner (shape/json.h):
 * the growable buffer (the library's one: see shape/json.h), and turning a
 * verdict plus offset into words.
 *
 * Why a separate file: json_parse.c holds the hot loops and reads best
 * without these. How: the buffer grows geometrically with realloc and always
 * keeps one spare byte for a trailing NUL; errors are formatted only when a
 * caller asks, never while parsing, so a failing parse costs no formatting.
 */
#include "shape/json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int shape_json_buf_reserve(shape_json_buf *buf, size_t extra)
{
    if (buf->len > SIZE_MAX - 1 - extra) return SHAPE_JSON_ENOMEM;
    size_t need = buf->len + extra + 1;
    if (buf->data && need <= buf->cap) return 0;
    size_t cap = buf->cap > 32 ? buf->cap : 32;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(buf->data, cap);
    if (!p) return SHAPE_JSON_ENOMEM;
    buf->data = p;
    buf->cap = cap;
    return 0;
}

int shape_json_buf_append(shape_json_buf *buf, const void *bytes, size_t n)
{
    if (shape_json_buf_reserve(buf, n) != 0) return SHAPE_JSON_ENOMEM;
    if (n) memcpy(buf->data + buf->len, bytes, n);
    buf->len += n;
    buf->data[buf->len] = '\0';
    return 0;
}

void shape_json_buf_reset(shape_json_buf *buf)
{
    if (!buf) return;
    free(buf->data);
    buf->data = NULL;
    buf->len = 0;
    buf->cap = 0;
}

int shape_json_error_format(const shape_json_error *e, char *buf, size_t size)
{
    if (!e || e->verdict == 0 || !e->reason) return snprintf(buf, size, "no error");
    return snprintf(buf, size, "%s at byte %zu", e->reason, e->offset);
}

int shape_json_error_to_err(const shape_json_error *e, shape_err *err)
{
    int code = SHAPE_EINVAL;
    if (e && e->verdict == SHAPE_JSON_ENOMEM) code = SHAPE_ENOMEM;
    if (e && e->verdict == SHAPE_JSON_EUSAGE) code = SHAPE_EINTERNAL;
    if (!e || e->verdict >= 0) code = SHAPE_EINTERNAL;
    char text[160];
    shape_json_error_format(e, text, sizeof text);
    return shape_err_set(err, code, "%s", text);
}

const char *shape_json_verdict_name(int verdict)
{
    switch (verdict) {
    case SHAPE_JSON_MEMBER: return "member";
    case SHAPE_JSON_DONE: return "done";
    case SHAPE_JSON_ESYNTAX: return "syntax";
    case SHAPE_JSON_EUTF8: return "utf8";
    case SHAPE_JSON_EDEPTH: return "depth";
    case SHAPE_JSON_ENOTOBJECT: return "not an object";
    case SHAPE_JSON_ENOMEM: return "out of memory";
    case SHAPE_JSON_EUSAGE: return "usage";
    default: return "unknown";
    }
}

const char *shape_json_kind_name(int kind)
{
    switch (kind) {
    case SHAPE_JSON_NULL: return "null";
    case SHAPE_JSON_FALSE: return "false";
    case SHAPE_JSON_TRUE: return "true";
    case SHAPE_JSON_NUMBER: return "number";
    case SHAPE_JSON_STRING: return "string";
    case SHAPE_JSON_OBJECT: return "object";
    case SHAPE_JSON_ARRAY: return "array";
    default: return "unknown";
    }
}

/* shape/arrow_json.h — rows of an Arrow batch as JSON objects (or lines).
 *
 * Why: `shape stream-read` prints decoded rows as JSON lines that people
 * pipe into jq, so the printing rules are fixed here: columns in batch
 * order; int64 as integers; float64 as Python's repr (the shortest text that
 * reads back to the same double; integral values keep a ".0"; the same text
 * as emitted events, shape/event.h), non-finite as null; bool;
 * utf8 as JSON strings; binary as base64 strings; timestamps as ISO-8601
 * with 'Z' (microseconds; nanosecond columns with 9 digits); maps as JSON
 * objects of base64 values; nulls as null.
 */
#ifndef SHAPE_ARROW_JSON_H
#define SHAPE_ARROW_JSON_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include "shape/arrow.h"
#include "shape/json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Append row `row` of the struct batch (schema, array) to out as one
 * compact JSON object (no newline). Returns 0, SHAPE_ENOMEM, or SHAPE_EINVAL
 * for a column type it does not know. */
int shape_arrow_row_json(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row,
                         shape_json_buf *out, shape_err *err);

/* Append rows [first, first + count) as JSON lines: each row as above,
 * then '\n'. Same returns; on an error, out holds the rows before it and
 * part of the failing one. */
int shape_arrow_rows_jsonl(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t first,
                           int64_t count, shape_json_buf *out, shape_err *err);

/* Helpers shared with other JSON writers. */
int shape_json_append_string(shape_json_buf *out, const void *bytes, size_t len);
int shape_json_append_base64(shape_json_buf *out, const void *bytes, size_t len);
int shape_json_append_double(shape_json_buf *out, double d);
int shape_json_append_raw(shape_json_buf *out, const char *text, size_t len);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* shape/arrow_json.h — the one printer of Arrow values and rows as JSON.
 *
 * Why: `shape stream-read` prints decoded rows as JSON lines that people
 * pipe into jq, and the registry formats' flat event (the JSON Schema
 * payload, the wire decoder's output) is the same text for the same row,
 * compared byte for byte with what `--event-format json` sends. One printer
 * serves both, so the rules are fixed here, once.
 *
 * The rules (values are written by shape/json_write.h):
 *   - rows: one compact object, columns in batch order, `"name":value`
 *     (the name escaped as a string), `{}` for no columns;
 *   - null (any null value, the null type) → null; bool → true/false;
 *   - integers of every width in decimal (uint64 too);
 *   - float16/32/64 as Python's repr of the double (float16 and float32
 *     converted exactly), non-finite → null;
 *   - utf8 / large utf8 → JSON strings (escaping of shape/json_write.h,
 *     non-ASCII raw); binary / large binary / fixed-size binary → padded
 *     base64 strings;
 *   - uuid extension columns (fixed_size_binary(16), ARROW:extension:name
 *     arrow.uuid) → canonical lowercase hyphenated text;
 *   - decimals → quoted text with exactly `scale` fraction digits;
 *   - date32/date64 → "YYYY-MM-DD"; time32/time64 → "HH:MM:SS[.f]";
 *   - timestamps → "YYYY-MM-DDTHH:MM:SS[.f]": the fraction has as many
 *     digits as the unit (none for s, 3 ms, 6 µs, 9 ns); 'Z' follows when
 *     the type has a time zone (the value is UTC already), nothing when it
 *     has none; floor division, so instants before 1970 read like Python's
 *     datetime; years outside 0..9999 in plain decimal ("-1-01-01"), or
 *     with SHAPE_ARROW_JSON_PAD_YEARS at least four characters as C's
 *     "%04d" ("-001-01-01");
 *   - maps ("+m", utf8 keys and binary values, as the decoder builds
 *     headers) → an object of key → base64 value (null for a null value),
 *     entries in order;
 *   - dictionary columns → their dictionary's value;
 *   - which types: those shape_arrow_type_resolve knows
 *     (shape/arrow_value.h); a non-null value of any other type is refused
 *     ("cannot print a column of this type as JSON"), a null one printed
 *     as null.
 * stream-read prints with SHAPE_ARROW_JSON_PAD_YEARS and
 * SHAPE_ARROW_JSON_CORE_TYPES (its batches have µs and ns timestamps with
 * zone UTC: every timestamp it prints ends in 'Z'); the registry's flat
 * event with neither.
 */
#ifndef SHAPE_ARROW_JSON_H
#define SHAPE_ARROW_JSON_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include "shape/arrow.h"
#include "shape/arrow_value.h"
#include "shape/json.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of the printer. */
#define SHAPE_ARROW_JSON_PAD_YEARS 0x1u  /* years before 0 as "%04d" (-001), as stream-read prints */
#define SHAPE_ARROW_JSON_CORE_TYPES 0x2u /* rows: print only the types of shape's own batches (the
                                            formats of shape/arrow.h's shape_type: n b l g u z
                                            tsu:UTC tsn:UTC +m); a non-null value of any other
                                            is refused, as stream-read always has */

/* Append the JSON text of logical row `row` (the column's offset not yet
 * applied) of column `col`, of type t, to out; null when the value is null.
 * Returns 0 or SHAPE_ENOMEM (out->len may have moved on: a caller that
 * must drop a half-written row puts it back). */
int shape_arrow_json_value(shape_json_buf *out, const shape_arrow_type *t, const struct ArrowArray *col,
                           int64_t row, unsigned flags);

/* Append rows [first, first + count) of the struct batch (schema, array)
 * as compact JSON objects, each followed by `end` unless it is '\0'.
 * Returns 0, SHAPE_ENOMEM, or SHAPE_EINVAL for a non-null value of a type
 * it cannot print; on an error, out holds the rows before it and part of
 * the failing one. */
int shape_arrow_rows_json(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t first,
                          int64_t count, char end, unsigned flags, shape_json_buf *out, shape_err *err);

/* stream-read's rows: shape_arrow_rows_json with SHAPE_ARROW_JSON_PAD_YEARS
 * and SHAPE_ARROW_JSON_CORE_TYPES, one row with no newline / rows as JSON
 * lines. */
int shape_arrow_row_json(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row,
                         shape_json_buf *out, shape_err *err);
int shape_arrow_rows_jsonl(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t first,
                           int64_t count, shape_json_buf *out, shape_err *err);

/* Appending helpers over shape/json_write.h, shared with other JSON
 * writers: 0 or SHAPE_ENOMEM. */
int shape_json_append_string(shape_json_buf *out, const void *bytes, size_t len);
int shape_json_append_base64(shape_json_buf *out, const void *bytes, size_t len);
int shape_json_append_double(shape_json_buf *out, double d);
int shape_json_append_raw(shape_json_buf *out, const char *text, size_t len);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

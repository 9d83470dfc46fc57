/* flat_json.h — the flat JSON event of an Arrow row, for every type the
 * registry formats map (spec-kafka.md §3.4 value rules).
 *
 * Why: the JSON Schema payload is the flat JSON event, and the wire decoder
 * turns every decoded message back into that same text, so tests compare
 * events value for value and byte for byte with what `--event-format json`
 * sends. One renderer serves both.
 * How: scalar renderers write into a caller buffer with room for the bound
 * given; the row renderer walks the columns (dictionary columns through
 * their dictionary) and writes `{"col":value,...}` in column order.
 * Rules: compact; strings escaped as shape/json_write.h does (non-ASCII raw);
 * floats as Python's repr, non-finite → null; integers in decimal; bool;
 * dates YYYY-MM-DD; times HH:MM:SS[.fraction] (digits of the unit: 0, 3, 6,
 * 9); timestamps YYYY-MM-DDTHH:MM:SS[.fraction] plus 'Z' when the type has
 * a zone (the value is UTC already); decimals as quoted text with exactly
 * `scale` fraction digits ("-1000.25"); binary as padded base64; uuid
 * extension columns (fixed_size_binary(16) with ARROW:extension:name
 * arrow.uuid) as canonical lowercase hyphenated text; null → null.
 */
#ifndef SHAPE_KAFKA_REGISTRY_FLAT_JSON_H
#define SHAPE_KAFKA_REGISTRY_FLAT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "shape/arrow.h"
#include "shape/error.h"
#include "shape/json.h"

#define SHAPE_FLAT_SCALAR_MAX 64 /* room any scalar below takes */

/* Quoted "YYYY-MM-DD" of days since 1970-01-01. */
char *shape_flat_json_date(char *p, int64_t days);
/* Quoted "HH:MM:SS[.fraction]" of `value` units since midnight;
 * unit_digits 0, 3, 6 or 9. */
char *shape_flat_json_time(char *p, int64_t value, int unit_digits);
/* Quoted decimal text of the 128-bit unscaled value (hi:lo, two's
 * complement) with `scale` fraction digits (scale may be 0 or negative:
 * then no point and -scale zeros appended). */
char *shape_flat_json_decimal(char *p, int64_t hi, uint64_t lo, int32_t scale);
/* Quoted canonical "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" of 16 bytes. */
char *shape_flat_json_uuid(char *p, const uint8_t bytes[16]);

/* Append row `row` of the struct batch as one flat JSON object (no newline).
 * SHAPE_EINVAL for a column type outside the mapping table. */
int shape_flat_json_row(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row,
                        shape_json_buf *out, shape_err *err);

#endif

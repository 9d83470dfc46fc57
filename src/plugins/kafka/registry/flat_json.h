/* flat_json.h — the flat JSON event of an Arrow row, for every type the
 * registry formats map (spec-kafka.md §3.4 value rules).
 *
 * Why: the JSON Schema payload is the flat JSON event, and the wire decoder
 * turns every decoded message back into that same text, so tests compare
 * events value for value and byte for byte with what `--event-format json`
 * sends. One renderer serves both: core's Arrow printer
 * (shape/arrow_json.h, whose header lists the rules; the registry's are
 * those without SHAPE_ARROW_JSON_PAD_YEARS: timestamps get 'Z' only when
 * their type has a zone), behind the registry's type gate. The scalar
 * writers (dates, times, decimals, uuids) are core's too
 * (shape/json_write.h).
 */
#ifndef SHAPE_KAFKA_REGISTRY_FLAT_JSON_H
#define SHAPE_KAFKA_REGISTRY_FLAT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "shape/arrow.h"
#include "shape/error.h"
#include "shape/json.h"

/* Append row `row` of the struct batch as one flat JSON object (no newline).
 * SHAPE_EINVAL for a column type outside the mapping table. */
int shape_kafka_flat_json_row(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t row,
                        shape_json_buf *out, shape_err *err);

#endif

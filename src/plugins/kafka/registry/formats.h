/* formats.h — the registry formats: schemas derived from Arrow, and the
 * Avro / Protobuf payload encoders (spec-kafka.md §4.1–§4.6).
 *
 * Why: `shape emit --event-format avro|protobuf|json-schema` sends each event
 * in the Confluent wire format, under a schema registered once per table and
 * run. The schema is derived from the Arrow schema of the table's flat events
 * (the table's columns, then _shape_table, _shape_seq, _shape_event_time), so
 * any Arrow producer — the retail generator, a test batch, a plugin — gets
 * the same mapping.
 * How: shape_kafka_regfmt_codec_new walks the Arrow schema once (dictionary
 * columns are their value type), checks names and types, writes the schema
 * document (compact JSON for Avro and JSON Schema, proto3 text for Protobuf)
 * and keeps a per-column plan (kind, unit, scale, nullability, field number)
 * so encoding a row is a loop over the plan with no lookups. Encoders append
 * to a caller buffer; an event the format cannot hold is an encode error with
 * the reference's reason text, never a partial payload.
 *
 * Ownership: a codec owns its document and plan; it keeps no pointer to the
 * schema it was made from. Encoders borrow the array for the call.
 */
#ifndef SHAPE_KAFKA_REGISTRY_FORMATS_H
#define SHAPE_KAFKA_REGISTRY_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "shape/arrow.h"
#include "shape/error.h"
#include "shape/json.h"

typedef enum shape_kafka_regfmt {
    SHAPE_KAFKA_REGFMT_JSON = 0,        /* no registry: the flat or CloudEvents JSON text */
    SHAPE_KAFKA_REGFMT_AVRO = 1,
    SHAPE_KAFKA_REGFMT_PROTOBUF = 2,
    SHAPE_KAFKA_REGFMT_JSON_SCHEMA = 3
} shape_kafka_regfmt;

/* "json" / "avro" / "protobuf" / "json-schema" → *out; otherwise SHAPE_EINVAL
 * "unknown event format 'xml'; choose from json, avro, protobuf, json-schema". */
int shape_kafka_regfmt_parse(const char *name, shape_kafka_regfmt *out, shape_err *err);
/* "json", "avro", "protobuf", "json-schema". */
const char *shape_kafka_regfmt_name(shape_kafka_regfmt f);
/* The registry's schemaType: "AVRO", "PROTOBUF", "JSON" (NULL for json). */
const char *shape_kafka_regfmt_schema_type(shape_kafka_regfmt f);

/* ---- subjects ------------------------------------------------------------ */

typedef enum shape_kafka_subject_strategy {
    SHAPE_KAFKA_SUBJECT_TOPIC = 0,        /* <topic>-value */
    SHAPE_KAFKA_SUBJECT_RECORD = 1,       /* shape.events.<table> */
    SHAPE_KAFKA_SUBJECT_TOPIC_RECORD = 2  /* <topic>-shape.events.<table> */
} shape_kafka_subject_strategy;

/* "topic" / "record" / "topic_record"; otherwise SHAPE_EINVAL "unknown subject
 * strategy 'x'; choose from topic, record, topic_record". */
int shape_kafka_subject_strategy_parse(const char *name, shape_kafka_subject_strategy *out, shape_err *err);
/* The subject for a table on a topic; a malloc'ed string (NULL: out of memory). */
char *shape_kafka_subject_name(shape_kafka_subject_strategy s, const char *topic, const char *table);

/* ---- codecs -------------------------------------------------------------- */

typedef struct shape_kafka_regfmt_codec shape_kafka_regfmt_codec;

/* Build the codec of one table for format f (not SHAPE_KAFKA_REGFMT_JSON) from the
 * Arrow schema of its flat events (a struct schema; the column
 * `_shape_poison`, if present, is skipped). Refusals (SHAPE_EINVAL), with the
 * reference's texts: a table or column name that is not an identifier (Avro
 * and Protobuf only), a list/struct/map/other unmappable column type. */
int shape_kafka_regfmt_codec_new(shape_kafka_regfmt f, const char *table, const struct ArrowSchema *schema,
                           shape_kafka_regfmt_codec **out, shape_err *err);
void shape_kafka_regfmt_codec_free(shape_kafka_regfmt_codec *c);

shape_kafka_regfmt shape_kafka_regfmt_codec_format(const shape_kafka_regfmt_codec *c);
/* The schema document to register (NUL-terminated, owned by the codec). */
const char *shape_kafka_regfmt_codec_schema(const shape_kafka_regfmt_codec *c);

/* Append the payload of row `row` of `array` (a struct array of the schema
 * the codec was made from) to out: Avro binary or Protobuf binary, or for
 * JSON Schema the flat JSON event (shape_kafka_flat_json_row). No wire header.
 * An event the format cannot hold → SHAPE_EINVAL with the reason as the
 * message (e.g. "column 'n' does not fit a long"); out is then unchanged. */
int shape_kafka_regfmt_encode(const shape_kafka_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                        shape_json_buf *out, shape_err *err);

/* ---- many rows of one batch ---------------------------------------------- */

/* A cursor encodes rows of one batch as shape_kafka_regfmt_encode does, byte for
 * byte and with the same errors, resolving the batch's columns once per
 * batch instead of per row (Avro; for the other formats it simply calls
 * shape_kafka_regfmt_encode). Owned by the caller; borrows the codec (which must
 * outlive it) and, until the next set, the array. */
typedef struct shape_kafka_regfmt_cursor shape_kafka_regfmt_cursor;

int shape_kafka_regfmt_cursor_new(const shape_kafka_regfmt_codec *c, shape_kafka_regfmt_cursor **out, shape_err *err);
void shape_kafka_regfmt_cursor_free(shape_kafka_regfmt_cursor *cu);
/* Point the cursor at a batch (a struct array of the codec's schema). Set it
 * again whenever the array or its buffers may have changed. */
void shape_kafka_regfmt_cursor_set(shape_kafka_regfmt_cursor *cu, const struct ArrowArray *array);
/* = shape_kafka_regfmt_encode(codec, array, row, out, err) for the array last set. */
int shape_kafka_regfmt_cursor_encode(const shape_kafka_regfmt_cursor *cu, int64_t row, shape_json_buf *out, shape_err *err);

/* ---- the Confluent wire format (§4.3) ------------------------------------ */

#define SHAPE_KAFKA_WIRE_HEADER_MAX 6
/* Write the header (magic 0, big-endian id, and for Protobuf the message
 * index byte 0) at p; returns its length (5 or 6). */
size_t shape_kafka_wire_header(shape_kafka_regfmt f, uint32_t schema_id, uint8_t *p);

#endif

/* wire_decode.h — decode Confluent wire-format messages back into flat JSON
 * events, with the schema fetched from the registry (spec-kafka.md §5).
 *
 * Why: a registry-format test is only as good as its decoder: this one
 * takes nothing from the encoder — it reads the schema id from the message,
 * asks the registry for that id's text, parses that text (Avro JSON schema
 * or proto3 text) and decodes the payload with it, so a test that compares
 * the result with the flat JSON events checks encoder, schema document and
 * registration together.
 * How: check byte 0 is 0, read the big-endian id, fetch (cached per id),
 * decode Avro binary by walking the parsed Avro schema (unions by branch
 * index, zig-zag varints, logical types), Protobuf by parsing the proto3
 * message and reading tagged fields (absent fields are null), JSON Schema
 * payloads as JSON text; then render each value with the flat JSON rules of
 * the column's original Arrow type (the schema the events were made from:
 * units, zones and scales that the registry formats do not carry).
 */
#ifndef SHAPE_KAFKA_REGISTRY_WIRE_DECODE_H
#define SHAPE_KAFKA_REGISTRY_WIRE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "shape/arrow.h"
#include "shape/error.h"
#include "shape/json.h"

typedef struct shape_kafka_wire_decoder shape_kafka_wire_decoder;

/* reg: where schemas come from (borrowed). original: the Arrow schema of the
 * flat events (borrowed for the call; copied what is needed). */
int shape_kafka_wire_decoder_new(shape_kafka_schema_registry_client *reg, const struct ArrowSchema *original,
                           shape_kafka_wire_decoder **out, shape_err *err);
void shape_kafka_wire_decoder_free(shape_kafka_wire_decoder *d);

/* Decode one message (value bytes) and append its flat JSON event to out.
 * SHAPE_EINVAL when it is not a wire-format message or does not decode
 * (a cut-off payload, an unknown field type); *schema_id_out (may be NULL)
 * gets the id read from the header. */
int shape_kafka_wire_decode(shape_kafka_wire_decoder *d, const void *msg, size_t len, shape_json_buf *out,
                      uint32_t *schema_id_out, shape_err *err);

#endif

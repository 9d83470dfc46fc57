/* wire_encode.h — the kafka:// emitter's registry-format step: turn a batch
 * of messages into Confluent wire-format values (spec-kafka.md §4.2).
 *
 * Why: with --event-format avro|protobuf|json-schema every message value is
 * 0x00, the schema id, [the Protobuf message index,] then the payload; the
 * schema of each table must be registered before the first of its events is
 * produced, and nothing of a batch may be produced when its schemas cannot be
 * registered. Keeping this apart from librdkafka makes it testable with the
 * fake registry alone.
 * How: per table (keyed by the message's row schema), a codec
 * (formats.h) and its schema id, made on first sight; a batch first makes
 * and registers every codec it needs, then encodes every message into one
 * arena (through the codec's cursor, set once per batch of rows) and points
 * the message's value at its wire bytes. An event the
 * format cannot hold is marked REFUSED ("cannot encode as avro: ...") and
 * keeps its value (the dead-letter path records the runtime's JSON body).
 * JSON Schema payloads are the message's own flat JSON text; Avro and
 * Protobuf never read the value (the emitter's wants_rows says
 * SHAPE_EMIT_ROWS_ONLY, so the runtime may leave it empty).
 */
#ifndef SHAPE_KAFKA_REGISTRY_WIRE_ENCODE_H
#define SHAPE_KAFKA_REGISTRY_WIRE_ENCODE_H

#include "client.h"
#include "formats.h"
#include "shape/options.h"
#include "shape/plugin.h"

typedef struct shape_kafka_wire_encoder shape_kafka_wire_encoder;

/* The emitter's option keys this step reads (NULL-terminated). */
extern const char *const shape_kafka_wire_option_keys[];

/* From the emitter's options: "event_format" (json → *out = NULL, nothing to
 * do), "subject_strategy", "schema_registry_url", "schema_registry_username",
 * "schema_registry_password" (a credential reference, resolved here), and
 * the TLS keys. `envelope` must be flat for registry formats. Checks run in
 * the reference's order; nothing is sent. transport: NULL for HTTP (tests
 * pass the fake registry's). */
int shape_kafka_wire_encoder_new(const shape_options *options, const char *topic, int envelope_flat,
                            shape_kafka_schema_registry_transport transport, void *transport_ctx,
                            shape_kafka_wire_encoder **out, shape_err *err);
void shape_kafka_wire_encoder_free(shape_kafka_wire_encoder *w);

shape_kafka_regfmt shape_kafka_wire_encoder_format(const shape_kafka_wire_encoder *w);

/* Register what msgs[0..n) need, then encode them (see above). Messages must
 * carry their rows (row_schema/row_array). The values point into the
 * encoder's arena until the next call. Every message's outcome is set:
 * PENDING (encoded, to produce), RETRY or REFUSED. Messages of a table whose
 * schema the registry cannot take now (unreachable, 5xx, 429) come back
 * RETRY with the registry's error as reason, and the rest are encoded;
 * SHAPE_ECONN when that is every message. SHAPE_EINVAL: the registry refused
 * a schema, or a table cannot be mapped (stop). */
int shape_kafka_wire_encoder_encode(shape_kafka_wire_encoder *w, shape_emit_message *msgs, size_t n, shape_err *err);

/* Messages the last encode left RETRY or REFUSED (0: every one is PENDING). */
size_t shape_kafka_wire_encoder_unsent(const shape_kafka_wire_encoder *w);

#endif

/* emitter.h — the kafka:// emitter over any producer client (emitter.c).
 *
 * Why: the emitter's logic is one piece of code whichever client carries the
 * messages: the plugin binds it to librdkafka (producer_rdkafka.c), tests
 * and plugin authors bind it to FakeProducer (testing/fake_producer.h) with
 * the same URI and options.
 * How: open/check take the producer factory; send, submit, complete, flush,
 * close and wants_rows are the shape_emitter_type calls (see shape/plugin.h for the
 * delivery contract they keep).
 */
#ifndef SHAPE_KAFKA_EMITTER_H
#define SHAPE_KAFKA_EMITTER_H

#include "producer_client.h"
#include "shape/options.h"
#include "shape/plugin.h"

/* Open the kafka:// destination uri with options (refusing unknown ones by
 * name), a client made by factory (borrowed: must outlive the emitter). The
 * client reaches the cluster before open returns; stop (may be NULL; the
 * emitter keeps it, as set_stop would) ends that wait within ~100 ms. */
int shape_kafka_emitter_open_with(const char *uri, const shape_options *options,
                                  const shape_kafka_producer_factory *factory, const volatile sig_atomic_t *stop,
                                  shape_emitter **out, shape_err *err);
/* Everything open checks, without a client or a connection (--dry-run). */
int shape_kafka_emitter_check_with(const char *uri, const shape_options *options,
                                   const shape_kafka_producer_factory *factory, shape_err *err);

int shape_kafka_emitter_check_uri(const char *uri, shape_err *err);
int shape_kafka_emitter_send(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err);
int shape_kafka_emitter_submit(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err);
int shape_kafka_emitter_complete(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err);
int shape_kafka_emitter_flush(shape_emitter *e, shape_err *err);
void shape_kafka_emitter_close(shape_emitter *e);
void shape_kafka_emitter_set_stop(shape_emitter *e, const volatile sig_atomic_t *stop);
int shape_kafka_emitter_wants_rows(shape_emitter *e);

/* The emitter's calls for a destination opened with
 * shape_kafka_emitter_open_with (open and check_options are NULL: they
 * need a factory). */
extern const shape_emitter_type shape_kafka_emitter_calls;

#endif

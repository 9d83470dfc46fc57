/* kafka_plugin.h — what the shape-kafka plugin's files share. */
#ifndef SHAPE_KAFKA_PLUGIN_H
#define SHAPE_KAFKA_PLUGIN_H

#include "shape/plugin.h"

extern const shape_command shape_kafka_cmd_broker;
/* `shape schema-registry`: the fake schema registry over HTTP (cmd_schema_registry.c) */
extern const shape_command shape_kafka_cmd_schema_registry;
/* the kafka:// emitter (emitter.c) */
extern const shape_emitter_type shape_kafka_emitter;

/* The kafka:// stream source over librdkafka (consumer_client_rdkafka.c; its
 * rules are in source.c, over the consumer seam of consumer_client.h); see
 * shape/source.h. */
int shape_kafka_source_open(const char *uri, const shape_options *options, const shape_offsets *start,
                            shape_source **out, shape_err *err);
/* The same, its wait for the cluster's first answer ended by *stop (plugin ABI 7). */
int shape_kafka_source_open_stoppable(const char *uri, const shape_options *options, const shape_offsets *start,
                                      const volatile sig_atomic_t *stop, shape_source **out, shape_err *err);

#endif

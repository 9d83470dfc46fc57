/* kafka_uri.h — the `kafka://HOST[:PORT][,HOST[:PORT]...]/TOPIC` grammar.
 *
 * Shared by the source, the emitter and every command that takes a Kafka
 * URI, so they accept and refuse exactly the same things with the same words.
 * It needs no Kafka client, so unit tests link it alone.
 */
#ifndef SHAPE_KAFKA_URI_H
#define SHAPE_KAFKA_URI_H

#include "shape/error.h"

typedef struct shape_kafka_uri {
    char *servers; /* bootstrap servers, the URI's authority verbatim */
    char *topic;   /* exactly one topic, percent-decoded */
} shape_kafka_uri;

/* Parse; on success the caller owns *out's strings (free with
 * shape_kafka_uri_free). Errors never contain the URI or any part of a
 * credential found in it. */
int shape_kafka_uri_parse(const char *uri, shape_kafka_uri *out, shape_err *err);
void shape_kafka_uri_free(shape_kafka_uri *uri);

/* A Kafka topic name: 1..249 of [A-Za-z0-9._-], not "." or "..". */
int shape_kafka_topic_name_ok(const char *topic);

#endif

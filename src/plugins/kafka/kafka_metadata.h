/* kafka_metadata.h — is a topic in the cluster, and with which partitions:
 * the one metadata look-up of the consumer and producer clients.
 *
 * Why: a topic that does not exist must be one clear error at open, never
 * an empty read or half a minute of produce retries. Asking librdkafka for
 * the metadata of a topic by name is not enough to tell: a cluster that
 * creates topics on first use (librdkafka's mock, behind `shape broker`,
 * always does; a real broker with auto.create.topics.enable) creates it on
 * the way and answers as if it had been there.
 * How: SHAPE_KAFKA_LOOKUP_LIST asks for every topic (a request that names
 * none creates none) and looks the topic up in the answer — what a reader
 * wants: a missing topic reads as missing on every broker.
 * SHAPE_KAFKA_LOOKUP_NAMED asks for the topic by name (a producer's request:
 * a cluster that creates topics on first use creates it now) — what an
 * emitter wants: it sends where the cluster lets it, and fails at once where
 * the cluster does not (UNKNOWN_TOPIC_OR_PART on a broker without
 * auto-creation). The emitter keeps the partition count (the seam's
 * connect), so a partition asked for can be checked against it.
 */
#ifndef SHAPE_KAFKA_METADATA_H
#define SHAPE_KAFKA_METADATA_H

#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

enum shape_kafka_lookup { SHAPE_KAFKA_LOOKUP_LIST = 0, SHAPE_KAFKA_LOOKUP_NAMED = 1 };

typedef struct shape_kafka_topic_info {
    int found;      /* the cluster has the topic (with at least one partition) */
    int creating;   /* NAMED: the cluster is creating it (no leader yet): found, partitions unknown */
    int32_t *ids;   /* its partition ids (malloc'd, any order; NULL when not found or creating) */
    size_t n;
    rd_kafka_resp_err_t topic_err; /* the topic's own error in the answer, other than unknown topic */
} shape_kafka_topic_info;

/* Look topic up within timeout_ms. Returns the request's error (transport,
 * time-out, ...: nothing is filled) or RD_KAFKA_RESP_ERR_NO_ERROR with *out
 * filled; RD_KAFKA_RESP_ERR__NOENT when ids could not be allocated.
 * The caller frees out->ids. */
rd_kafka_resp_err_t shape_kafka_topic_lookup(rd_kafka_t *rk, const char *topic, int mode, int timeout_ms,
                                             shape_kafka_topic_info *out);

#endif

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
 * A stop request (the run's stop flag) ends the wait for the first
 * connection within about 100 ms: librdkafka's metadata call waits first for
 * a broker that is up (connected, versions and SASL done), then for the
 * answer; the wait for a broker is cut in slices of STOP_SLICE_MS with the
 * flag read between them (a slice that finds no broker up sends nothing).
 * Once a broker is up, a slow answer (a big cluster's topic list) is waited
 * out in one call: slices would re-send the request and might never see it
 * answered.
 */
#ifndef SHAPE_KAFKA_METADATA_H
#define SHAPE_KAFKA_METADATA_H

#include <signal.h>
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
 * filled; RD_KAFKA_RESP_ERR__NOENT when ids could not be allocated;
 * RD_KAFKA_RESP_ERR__INTR when *stop (stop may be NULL) became non-zero
 * while no broker was up yet. The caller frees out->ids. */
rd_kafka_resp_err_t shape_kafka_topic_lookup(rd_kafka_t *rk, const char *topic, int mode, int timeout_ms,
                                             const volatile sig_atomic_t *stop, shape_kafka_topic_info *out);

#endif

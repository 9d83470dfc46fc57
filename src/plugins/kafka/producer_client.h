/* producer_client.h — the seam between the kafka:// emitter and a Kafka
 * producer client.
 *
 * Why: the emitter's rules (producer defaults and their precedence, waiting
 * out a full queue, one outcome per message, purge on time-out, a fresh
 * client after a fatal error) are worth testing in-process, without a
 * network and without librdkafka. So the emitter (emitter.c) talks to its
 * client only through the few calls below; producer_rdkafka.c implements
 * them with librdkafka, testing/fake_producer.c in memory (FakeProducer).
 *
 * How: the emitter builds the client's configuration as an ordered list of
 * name=value settings and asks a factory for a client. produce() hands one
 * message over without copying it (the message and what it points to stay
 * valid until its delivery report) with the message itself as the report's
 * opaque; poll() serves delivery reports through the callback given at
 * creation (messages of several sends may be in flight at once: the
 * emitter tells them apart by their address); purge() makes every message still queued or in flight report
 * (an error) at the next poll. Nothing here allocates per message.
 *
 * Error names are the client's (librdkafka's rd_kafka_err2name spelling:
 * "MSG_SIZE_TOO_LARGE", "_MSG_TIMED_OUT", "_QUEUE_FULL", ...); the emitter
 * classifies them (refused for good, or worth a retry).
 */
#ifndef SHAPE_KAFKA_PRODUCER_CLIENT_H
#define SHAPE_KAFKA_PRODUCER_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"
#include "shape/plugin.h"

/* ---- configuration --------------------------------------------------------- */

typedef struct shape_kafka_producer_setting {
    char *name;
    char *value;         /* owned; wiped when freed (it may be a resolved secret) */
    int from_credential; /* the value came from a credential reference: never shown */
} shape_kafka_producer_setting;

/* Settings in the order they were first set; setting a name again replaces
 * its value in place. */
typedef struct shape_kafka_producer_config {
    shape_kafka_producer_setting *items;
    size_t n, cap;
} shape_kafka_producer_config;

int shape_kafka_producer_config_set(shape_kafka_producer_config *cfg, const char *name, const char *value,
                                    int from_credential, shape_err *err);
/* The value of `name`, or NULL. Borrowed from cfg. */
const char *shape_kafka_producer_config_get(const shape_kafka_producer_config *cfg, const char *name);
/* Copy src into an empty dst. */
int shape_kafka_producer_config_copy(shape_kafka_producer_config *dst, const shape_kafka_producer_config *src,
                                     shape_err *err);
/* Wipe and free every setting; cfg is empty afterwards. */
void shape_kafka_producer_config_free(shape_kafka_producer_config *cfg);

/* ---- the client -------------------------------------------------------------- */

/* A delivery report: error NULL = acknowledged; else the error's name (static
 * text) and whether the client marks it retriable. */
typedef void (*shape_kafka_delivery_fn)(void *ctx, shape_emit_message *m, const char *error, int retriable);

enum shape_kafka_produce_result {
    SHAPE_KAFKA_PRODUCE_QUEUED = 0,     /* a delivery report will follow */
    SHAPE_KAFKA_PRODUCE_QUEUE_FULL = 1, /* the local queue is full: poll, then try again */
    SHAPE_KAFKA_PRODUCE_FAILED = 2      /* not queued: *error names why; no report follows */
};

typedef struct shape_kafka_producer shape_kafka_producer;

typedef struct shape_kafka_producer_ops {
    /* Queue m for topic (key, value, headers, partition, timestamp as in m;
     * m is the report's opaque). copy_value: the value's bytes are copied
     * now (they do not outlive the call), else they stay valid until the
     * report. On FAILED, *error and *retriable say why. */
    int (*produce)(shape_kafka_producer *p, const char *topic, shape_emit_message *m, int copy_value,
                   const char **error, int *retriable);
    /* Serve the delivery reports that are ready, waiting up to timeout_ms
     * for the first one. */
    void (*poll)(shape_kafka_producer *p, int timeout_ms);
    /* Give up on everything queued or in flight: each reports an error at
     * the next poll. */
    void (*purge)(shape_kafka_producer *p);
    /* Non-zero when the client hit a fatal error and can produce no more
     * (reason filled); the emitter then replaces it with a fresh one. */
    int (*fatal_error)(shape_kafka_producer *p, char *reason, size_t size);
    /* Reach the cluster within timeout_ms and look topic up (by name: a
     * cluster that creates topics on first use creates it): *partitions is
     * its partition count, 0 when the cluster has no such topic (and did not
     * create it), -1 when it exists but its partitions are not known yet.
     * Non-zero with reason filled when the cluster cannot be reached, or
     * (stop given) within about 100 ms of *stop becoming non-zero while it
     * waits for the cluster. */
    int (*connect)(shape_kafka_producer *p, const char *topic, int timeout_ms, const volatile sig_atomic_t *stop,
                   int32_t *partitions, char *reason, size_t size);
    /* Wait up to flush_timeout_ms for what is queued, then release p. */
    void (*close)(shape_kafka_producer *p, int flush_timeout_ms);
    /* Optional (NULL: a real cluster). After connect: the bytes each
     * partition keeps when the cluster is librdkafka's mock (shape broker:
     * ~5 MB, older messages dropped), else 0. quiet = 1: the caller warned
     * already that the stream will not fit, so the client gives no warning
     * of its own when a partition passes the window mid-run. */
    int64_t (*mock_window)(shape_kafka_producer *p, int quiet);
} shape_kafka_producer_ops;

/* Every client starts with this (implementations embed it first). */
struct shape_kafka_producer {
    const shape_kafka_producer_ops *ops;
};

/* Makes clients. ctx is the factory's own (e.g. FakeProducer's store). */
typedef struct shape_kafka_producer_factory {
    const char *name; /* "librdkafka", "fake" */
    void *ctx;
    /* Check every setting as create would, without creating anything. A
     * refusal names the setting, and shows the client's reason only when
     * the value is not a secret. */
    int (*check)(void *ctx, const shape_kafka_producer_config *cfg, shape_err *err);
    int (*create)(void *ctx, const shape_kafka_producer_config *cfg, shape_kafka_delivery_fn on_delivery,
                  void *report_ctx, shape_kafka_producer **out, shape_err *err);
} shape_kafka_producer_factory;

/* The librdkafka client (producer_rdkafka.c, in the shape-kafka module). */
extern const shape_kafka_producer_factory shape_kafka_rdkafka_factory;

#endif

/* fake_producer.h — FakeProducer: an in-memory Kafka producer client for
 * the kafka:// emitter, with fault knobs (spec-kafka.md §5).
 *
 * Why: the emitter's delivery rules (a full queue is waited out, a partly
 * failed delivery is retried and nothing is lost, refusals reach the dead-
 * letter path, the producer settings' precedence) must be testable in-process
 * without a broker; plugin authors get the same fake (shape_kafka_testing).
 * How: a store owns the log of everything delivered and the knobs; its
 * factory (shape_kafka_fake_producer_factory) makes clients that implement
 * the seam of producer_client.h. A client copies each produced message into
 * its queue; poll() delivers the whole queue:
 *   - while `failures` > 0, a poll with something queued uses one: only the
 *     first half (integer half) of the queue is delivered, the rest report
 *     the retriable _MSG_TIMED_OUT;
 *   - within what is delivered, the first `reject` messages (decrementing)
 *     are refused with MSG_SIZE_TOO_LARGE (their keys recorded in `rejected`);
 *   - everything else is appended to the log (in delivery order) and
 *     reported delivered;
 *   - `stall` non-zero: poll delivers nothing (a cluster that never
 *     acknowledges) until purge, after which every queued message reports
 *     the retriable _PURGE_QUEUE.
 * produce() reports the queue full while `full` > 0 (each poll takes one
 * off; `hits` counts the answers) and refuses with _MSG_SIZE_TOO_LARGE while
 * `refuse_at_produce` > 0 (decrementing). `fatal` > 0 makes the next check
 * for a fatal error say yes (decrementing), so the emitter replaces its
 * client; `unreachable` makes connect fail, `topic_missing` makes it find
 * no such topic (a cluster without auto-creation). Nothing sleeps: a poll's
 * time-out is ignored.
 *
 * Threads: a store and its clients are used by one thread at a time (set the
 * knobs before sending, read the log after).
 * Ownership: the store owns every record and string it exposes; they live
 * until shape_kafka_fake_producer_store_clear or _free.
 */
#ifndef SHAPE_KAFKA_FAKE_PRODUCER_H
#define SHAPE_KAFKA_FAKE_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "producer_client.h"
#include "shape/options.h"
#include "shape/plugin.h"

typedef struct shape_kafka_fake_header {
    char *name;
    unsigned char *value; /* value_len bytes */
    size_t value_len;
} shape_kafka_fake_header;

/* One delivered message, as the broker would hold it. */
typedef struct shape_kafka_fake_record {
    char *topic;
    int32_t partition;  /* the asked one, or the key's hash modulo `partitions` */
    unsigned char *key; /* NULL = no key */
    size_t key_len;
    unsigned char *value;
    size_t value_len;
    shape_kafka_fake_header *headers;
    size_t header_count;
    int64_t timestamp_ms; /* 0: none asked */
} shape_kafka_fake_record;

typedef struct shape_kafka_fake_producer_store {
    /* the log: every delivered message, in delivery order */
    shape_kafka_fake_record *log;
    size_t log_len, log_cap;
    /* knobs (see the header comment) */
    int full;
    int failures;
    int reject;
    int refuse_at_produce;
    int stall;
    int fatal;
    int unreachable;
    int topic_missing;
    int32_t partitions; /* for messages without an explicit partition; default 1 */
    /* counters */
    uint64_t hits;      /* produce calls answered "queue full" */
    uint64_t produced;  /* messages accepted by produce */
    uint64_t timed_out; /* messages failed by `failures` (and purged) */
    char **rejected;    /* keys refused (at delivery or produce), in order; NUL-terminated copies */
    size_t nrejected, rejected_cap;
    int producers;                          /* clients created */
    int open_clients;                       /* created and not closed yet */
    shape_kafka_producer_config last_config; /* the settings of the last client created */
} shape_kafka_fake_producer_store;

/* SHAPE_OK and *out, or SHAPE_ENOMEM. */
int shape_kafka_fake_producer_store_new(shape_kafka_fake_producer_store **out, shape_err *err);
/* Forget the log, the rejected keys and the counters (knobs stay). */
void shape_kafka_fake_producer_store_clear(shape_kafka_fake_producer_store *s);
/* Free the store; every client made from it must be closed first. */
void shape_kafka_fake_producer_store_free(shape_kafka_fake_producer_store *s);

/* A factory whose clients deliver into s (borrowed: s must outlive them). */
shape_kafka_producer_factory shape_kafka_fake_producer_factory(shape_kafka_fake_producer_store *s);

/* The kafka:// emitter over FakeProducer: same URI and options as the
 * plugin's (`config` settings are recorded in s->last_config, not checked by
 * a client). *factory is filled and must outlive the emitter; send, flush
 * and close through shape_kafka_fake_emitter_type(). */
int shape_kafka_fake_emitter_open(shape_kafka_fake_producer_store *s, shape_kafka_producer_factory *factory,
                                  const char *uri, const shape_options *options, shape_emitter **out,
                                  shape_err *err);
const shape_emitter_type *shape_kafka_fake_emitter_type(void);

/* The log entry's key as text (a NUL-terminated copy into buf, cut to size). */
const char *shape_kafka_fake_record_key(const shape_kafka_fake_record *r, char *buf, size_t size);

#endif

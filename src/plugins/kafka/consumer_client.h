/* consumer_client.h — the narrow seam between the kafka:// source's logic
 * and the Kafka consumer client that fetches for it.
 *
 * Why: the source's rules (start positions clamped into the watermarks,
 * bounded reads in ascending partition order that end at the high
 * watermarks taken at the start, following reads, resuming after a
 * transient failure) are worth testing without a network. Behind this seam
 * sits either librdkafka (consumer_client_rdkafka.c, the plugin module) or
 * the in-memory FakeBroker (testing/fake_broker.c, library
 * shape_kafka_testing); source.c talks only to the seam and so compiles
 * into the librdkafka-free base library.
 *
 * How: a client is a struct whose first member is `shape_kafka_consumer`
 * (a pointer to its table of operations), like shape_source. The calls are
 * batch-level: one fetch fills caller-owned arrays of up to `max`
 * messages (shape_message, ready for the decoder) and parallel events
 * (what each entry is, and the client's handle to release it), so the hot
 * path adds no allocation and no call per message.
 *
 * Lifetime of a fetch: value, key and header pointers of the messages stay
 * valid until the entries are released (release()), whatever other fetches
 * are made meanwhile: a bounded read fills one batch by several fetches and
 * decodes it while the next batch is fetched. The caller releases every
 * entry it was given, exactly once; release() may be called from another
 * thread than fetch() (not concurrently with another release()).
 */
#ifndef SHAPE_KAFKA_CONSUMER_CLIENT_H
#define SHAPE_KAFKA_CONSUMER_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shape/decode.h"
#include "shape/error.h"
#include "shape/options.h"
#include "shape/source.h"

/* fetch(): every partition of the assignment, in arrival order. */
#define SHAPE_KAFKA_ALL_PARTITIONS (-1)

/* What a fetched entry is. */
enum shape_kafka_event_kind {
    SHAPE_KAFKA_EVENT_MESSAGE = 0, /* a message: the parallel shape_message is filled */
    SHAPE_KAFKA_EVENT_EOF = 1,     /* the partition's end was reached at msg.offset (msg.partition) */
    SHAPE_KAFKA_EVENT_ERROR = 2,   /* a consumer error: see action and text */
};

/* What a consumer error means for the read. */
enum shape_kafka_error_action {
    SHAPE_KAFKA_ERROR_RETRIED = 0,   /* the client retries by itself: skip it */
    SHAPE_KAFKA_ERROR_RECONNECT = 1, /* the read ends with SHAPE_ECONN: resume from the last position */
    SHAPE_KAFKA_ERROR_FATAL = 2,     /* the read ends with SHAPE_EINVAL */
};

typedef struct shape_kafka_event {
    int kind;         /* enum shape_kafka_event_kind */
    int action;       /* enum shape_kafka_error_action, for SHAPE_KAFKA_EVENT_ERROR */
    const char *text; /* SHAPE_KAFKA_EVENT_ERROR: the client's error text, valid until released */
    void *handle;     /* the client's own record of the entry, for release() */
    void *owned;      /* client memory of the entry (e.g. its header views), freed by release() */
} shape_kafka_event;

/* One partition of an assignment: where to start, and whether it starts
 * paused (assigned, but not fetched until resumed). */
typedef struct shape_kafka_assignment {
    int32_t partition;
    int64_t offset;
    int paused;
} shape_kafka_assignment;

typedef struct shape_kafka_consumer shape_kafka_consumer;

typedef struct shape_kafka_consumer_ops {
    /* Before start(): one configuration property. Returns 0, or -1 with the
     * client's reason in errstr when it refuses the name or the value. */
    int (*set)(shape_kafka_consumer *c, const char *name, const char *value, char *errstr, size_t errstr_size);
    /* Create the connection-level state from the properties set. */
    int (*start)(shape_kafka_consumer *c, shape_err *err);
    /* The topic's partition ids (malloc'd, the caller frees), any order; an
     * unknown topic or one without partitions gives *n == 0 and SHAPE_OK. */
    int (*partitions)(shape_kafka_consumer *c, const char *topic, int32_t **ids, size_t *n, shape_err *err);
    /* Fresh low and high watermarks of one partition. */
    int (*watermarks)(shape_kafka_consumer *c, const char *topic, int32_t partition, int64_t *low,
                      int64_t *high, shape_err *err);
    /* Assign these partitions (ascending ids) once. per_partition: each
     * partition is fetched on its own (fetch(c, id, ...)), else all together
     * (fetch(c, SHAPE_KAFKA_ALL_PARTITIONS, ...)). */
    int (*assign)(shape_kafka_consumer *c, const char *topic, const shape_kafka_assignment *parts, size_t n,
                  int per_partition, shape_err *err);
    /* Stop or restart fetching an assigned partition. */
    void (*set_paused)(shape_kafka_consumer *c, int32_t partition, int paused);
    /* Up to max entries of one partition (or all, in arrival order), waiting
     * at most timeout_ms for the first; *got is the count filled. */
    int (*fetch)(shape_kafka_consumer *c, int32_t partition, int timeout_ms, shape_message *msgs,
                 shape_kafka_event *events, size_t max, size_t *got, shape_err *err);
    /* Give back n fetched entries. */
    void (*release)(shape_kafka_consumer *c, shape_kafka_event *events, size_t n);
    /* The client's fetch position of a partition (the next offset it will
     * deliver, past markers and compacted gaps); 0 when unknown. */
    int (*position)(shape_kafka_consumer *c, int32_t partition, int64_t *next_offset);
    /* The partition's low watermark as the client last heard it (from its
     * fetches: no request is made); 0 when unknown. A jump of the fetch
     * position to or past it is the broker having removed records the
     * read had not reached (the client resets to the low watermark). */
    int (*low_watermark)(shape_kafka_consumer *c, int32_t partition, int64_t *low);
    /* Serve the client's callbacks (errors, logs). */
    void (*serve)(shape_kafka_consumer *c);
    /* A failure the client saw outside any fetch (all brokers down, a fatal
     * error): SHAPE_ECONN or SHAPE_EINVAL with "kafka: ..."; SHAPE_OK if none. */
    int (*failure)(shape_kafka_consumer *c, shape_err *err);
    /* Unassign, close, free. */
    void (*destroy)(shape_kafka_consumer *c);
    /* Optional (NULL: nothing to do). A fetch of `partition` found nothing
     * queued: make the client's fetcher look at the partition again now
     * rather than at its next idle wake-up (see rk_wake). Returns within
     * ~100 ms whatever the cluster's state; failures are the fetch's to see. */
    void (*wake)(shape_kafka_consumer *c, int32_t partition);
} shape_kafka_consumer_ops;

struct shape_kafka_consumer {
    const shape_kafka_consumer_ops *ops;
    /* Set by the source before start(): whether fetched messages need their
     * headers (the read asked for with_headers). A client may leave
     * shape_message.headers empty otherwise — librdkafka parses a message's
     * header block into a fresh list on every rd_kafka_message_headers call,
     * a cost every message would pay for nothing. */
    int want_headers;
    /* Set by the source before start(), with want_headers (source option
     * only_header): NULL, or a header name (NUL-terminated, the source's
     * until destroy) — each message's headers are then only the first
     * header of that name, or none. A split by one header
     * (stream-profile --split-by header:NAME) reads nothing else, and the
     * decoder's header map of one entry costs a fraction of the whole. */
    const char *only_header;
    /* Set by the source before start(): the run's stop flag, or NULL. A
     * client whose partitions() waits for the cluster's first answer returns
     * SHAPE_ECONN within about 100 ms of *stop becoming non-zero. */
    const volatile sig_atomic_t *stop;
};

/* Make a new, unconfigured client (called once per source opened). */
typedef int (*shape_kafka_consumer_new_fn)(void *ud, shape_kafka_consumer **out, shape_err *err);

/* The kafka:// source (source.c) over clients made by make(ud): the same
 * URI, options, start offsets and stop flag (may be NULL) as
 * shape_kafka_source_open. */
int shape_kafka_source_open_with(shape_kafka_consumer_new_fn make, void *ud, const char *uri,
                                 const shape_options *options, const shape_offsets *start,
                                 const volatile sig_atomic_t *stop, shape_source **out, shape_err *err);

#endif

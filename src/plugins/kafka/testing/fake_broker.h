/* fake_broker.h — FakeBroker: an in-memory Kafka cluster for the consumer
 * side, to test the kafka:// source (or a plugin built on it) without a
 * network. Library shape_kafka_testing.
 *
 * Why: the source's rules — start positions clamped into [low, high],
 * bounded reads that end at the watermarks taken at the start and hand out
 * the same batches every run, following reads, resuming after a transport
 * failure — need inputs a real broker cannot be made to give on demand:
 * a raised low watermark (retention), a per-poll cap, a failure after
 * exactly N messages, a message appended in the middle of a read.
 *
 * How: topics hold partitions 0..n-1; a partition is a log of messages at
 * offsets 0, 1, 2... (a gap takes an offset without a message, like a
 * transaction marker or a compacted record) and a low watermark. A source
 * opened with shape_kafka_fake_broker_source_open runs the real source logic
 * (source.c) over a fake consumer client (consumer_client.h) that reads
 * these logs: watermarks are (low, log length), each fetch delivers at
 * most `chunk` entries, partitions in ascending order for a fetch of all
 * of them, and a partition-EOF event at the end of a log. Appending while a
 * source is open is allowed (between next() calls, or from the fetch hook).
 *
 * Ownership: the broker copies every message appended; the source's
 * batches never point into the broker after next() returns. Free the
 * broker after every source opened over it was closed. Not thread-safe.
 */
#ifndef SHAPE_KAFKA_FAKE_BROKER_H
#define SHAPE_KAFKA_FAKE_BROKER_H

#include <stddef.h>
#include <stdint.h>

#include "consumer_client.h"
#include "shape/error.h"
#include "shape/offsets.h"
#include "shape/options.h"
#include "shape/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_kafka_fake_broker shape_kafka_fake_broker;

typedef struct shape_kafka_fake_broker_header {
    const char *name;  /* NUL-terminated */
    const void *value; /* NULL = a header without a value */
    size_t value_len;
} shape_kafka_fake_broker_header;

/* A message to append; every pointer is copied. */
typedef struct shape_kafka_fake_broker_message {
    const void *value; /* NULL = a message without a body */
    size_t value_len;
    int has_timestamp;    /* 0: the client reports no timestamp */
    int64_t timestamp_ms; /* broker time, ms since the epoch */
    const void *key;      /* NULL = no key */
    size_t key_len;
    const shape_kafka_fake_broker_header *headers;
    size_t n_headers;
} shape_kafka_fake_broker_message;

typedef struct shape_kafka_fake_broker_counters {
    uint64_t delivered;   /* messages handed to consumers */
    uint64_t fetches;     /* fetch calls served */
    uint64_t connections; /* assignments made */
    uint64_t consumers;   /* consumer clients created */
    uint64_t closed;      /* consumer clients destroyed */
    uint64_t handed;      /* entries (messages, ends, errors) handed out by fetches */
    uint64_t released;    /* entries released: equals handed once every consumer is closed */
    uint64_t wakes;       /* wake() calls */
    uint64_t starved;     /* fetches of a sleepy partition that found nothing (set_sleepy) */
} shape_kafka_fake_broker_counters;

/* SHAPE_OK and *out, or SHAPE_ENOMEM. */
int shape_kafka_fake_broker_new(shape_kafka_fake_broker **out, shape_err *err);
void shape_kafka_fake_broker_free(shape_kafka_fake_broker *fb);

/* A topic with partitions 0..partitions-1, all empty. */
int shape_kafka_fake_broker_add_topic(shape_kafka_fake_broker *fb, const char *topic, int32_t partitions, shape_err *err);
/* Append a message at the partition's next offset. */
int shape_kafka_fake_broker_append(shape_kafka_fake_broker *fb, const char *topic, int32_t partition,
                             const shape_kafka_fake_broker_message *m, shape_err *err);
/* Append a text body (NUL-terminated), with a timestamp when ts_ms >= 0. */
int shape_kafka_fake_broker_append_text(shape_kafka_fake_broker *fb, const char *topic, int32_t partition, const char *text,
                                  int64_t ts_ms, shape_err *err);
/* Take n offsets without a message (transaction markers, compacted records). */
int shape_kafka_fake_broker_append_gap(shape_kafka_fake_broker *fb, const char *topic, int32_t partition, int64_t n,
                                 shape_err *err);
/* Raise the partition's low watermark: offsets below it are gone, as after
 * retention (low <= the log's length). */
int shape_kafka_fake_broker_set_low_watermark(shape_kafka_fake_broker *fb, const char *topic, int32_t partition, int64_t low,
                                        shape_err *err);
/* The partition's log length (its high watermark); -1 if there is no such partition. */
int64_t shape_kafka_fake_broker_high_watermark(const shape_kafka_fake_broker *fb, const char *topic, int32_t partition);

/* Whether fetches report a partition's end (partition-EOF events, on by
 * default, and only when the consumer sets enable.partition.eof=true, as
 * the source does). Off: the source must find ends from the client's
 * position alone, as after a marker when no EOF event comes. */
void shape_kafka_fake_broker_set_partition_eof(shape_kafka_fake_broker *fb, int on);
/* At most `chunk` entries per fetch (0 = no cap beyond the caller's). */
void shape_kafka_fake_broker_set_chunk(shape_kafka_fake_broker *fb, size_t chunk);
/* Sleepy: like librdkafka 2.0 with capped queues, a partition's fetch that
 * delivered messages leaves its queue drained, and the next fetches of it
 * find nothing (counted in `starved`) until wake() is called for it, or
 * after 20 of them (the fetcher's idle wake-up). */
void shape_kafka_fake_broker_set_sleepy(shape_kafka_fake_broker *fb, int sleepy);
/* Once `at` messages were delivered in all, the next fetch returns a
 * single error "Local: Broker transport failure (_TRANSPORT)" (partition
 * -1, offset -1) that ends the read with SHAPE_ECONN; the next failure point
 * is then delivered + every (every <= 0: never again). at < 0: never. */
void shape_kafka_fake_broker_fail_at(shape_kafka_fake_broker *fb, int64_t at, int64_t every);
/* The next fetch returns one consumer error with this text and action
 * (enum shape_kafka_error_action: retried by the client, reconnect, fatal). */
int shape_kafka_fake_broker_inject_error(shape_kafka_fake_broker *fb, const char *text, int action, shape_err *err);
/* The next partition-metadata call fails with this text: SHAPE_ECONN when
 * transient, else SHAPE_EINVAL. */
int shape_kafka_fake_broker_fail_metadata(shape_kafka_fake_broker *fb, const char *text, int transient, shape_err *err);
/* Called before every fetch is served, with the number of fetches served so
 * far (to append or fail in the middle of a read); NULL to remove. */
typedef void (*shape_kafka_fake_broker_fetch_hook)(shape_kafka_fake_broker *fb, uint64_t fetches, void *ud);
void shape_kafka_fake_broker_on_fetch(shape_kafka_fake_broker *fb, shape_kafka_fake_broker_fetch_hook hook, void *ud);

shape_kafka_fake_broker_counters shape_kafka_fake_broker_counts(const shape_kafka_fake_broker *fb);
/* A property the last consumer created was configured with (NULL if not
 * set); owned by the broker until the next consumer is created. */
const char *shape_kafka_fake_broker_config(const shape_kafka_fake_broker *fb, const char *name);
/* The offset the last assignment gave the partition; -1 if not assigned. */
int64_t shape_kafka_fake_broker_assigned_offset(const shape_kafka_fake_broker *fb, int32_t partition);

/* A kafka:// source over the fake: the same URI (its servers are recorded
 * as bootstrap.servers, its topic is looked up here), options and start
 * offsets as the plugin's kafka:// source. */
int shape_kafka_fake_broker_source_open(shape_kafka_fake_broker *fb, const char *uri, const shape_options *options,
                                  const shape_offsets *start, shape_source **out, shape_err *err);

#ifdef __cplusplus
}
#endif
#endif

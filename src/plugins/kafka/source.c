/* source.c — the kafka:// stream source: exact self-kept offsets, bounded
 * reads that are deterministic and do not stall, following reads.
 *
 * Why: read a topic as Arrow batches where each batch is paired with the
 * position of every partition just after it, so a checkpoint of that
 * position resumes exactly — and nothing is ever committed to the broker.
 *
 * How: this file holds the source's rules only; every call to the cluster
 * goes through the consumer seam (consumer_client.h), so the same logic
 * runs over librdkafka (consumer_client_rdkafka.c, in the plugin module)
 * and over the in-memory FakeBroker (testing/, for contract tests), and it
 * compiles into the librdkafka-free base library.
 *   - open: parse the URI, check the options (reference names, defaults
 *     and messages; `partitions` "0,3-5" restricts the read to those
 *     partitions, for splitting a topic across workers), configure the
 *     client (user `config` first, then the URI's servers,
 *     enable.auto.commit=false, group.id defaulting to
 *     shape-stream-profile, partition EOF events on), read the topic's
 *     partitions and watermarks (the first answer's wait cut short by a
 *     stop request: the client's partitions()), and place each partition: a start position
 *     clamped into [low, high], else low (earliest) or high (latest). A
 *     bounded read ends every partition at the high watermark taken now.
 *   - every partition is assigned once, at its start offset; a bounded read
 *     keeps all but a window of partitions paused (the one drained and the
 *     next ones; option prefetch_partitions, default 4, 0 = all), so memory
 *     holds a window's prefetch whatever the partition count (fetch_window).
 *   - bounded: each partition's messages are fetched on their own, in
 *     ascending partition order; a batch is decoded on a thread of its own
 *     while the next one is fetched (see "decoding ahead"). A fetch never asks for more than remains
 *     before the partition's end, so it returns as soon as the messages are
 *     there instead of waiting out its time-out; a batch is filled by as
 *     many fetches as it takes to its size (batch_size, the partition's
 *     end, max_messages), so batches never depend on timing; the end is seen from
 *     offsets (position >= end) or from the partition-EOF event
 *     (transaction markers and compacted gaps leave no message at the last
 *     offsets). Messages at or past the end (produced after the read began)
 *     are dropped uncounted.
 *   - interleave (set by the windowed profiler): a bounded read takes each
 *     batch from the partition read least so far (position − low
 *     watermark, ties to the lower id) instead of draining one partition
 *     after another, so partitions that are each in event-time order reach
 *     the per-partition watermark together; all partitions fetch at once,
 *     each queue capped at about one batch (see interleave_caps); the
 *     client's fetcher is woken (wake()) after every
 *     INTERLEAVE_WAKE_EVERY batches and by a partition found drained.
 *     The first step hands out the positions of every partition (no batch).
 *   - following: all partitions in arrival order; each fetch's messages are
 *     grouped by partition and handed out one group per batch. Ends after
 *     idle_timeout without messages or max_messages.
 *   - records removed under the read (retention, DeleteRecords): the
 *     client resets a position the broker no longer has to the low
 *     watermark (auto.offset.reset=earliest, forced), so the read goes on
 *     at the first record left; the jump is told from a compacted or
 *     transactional gap by the client's cached low watermark (a jump to or
 *     past it, from below it). The offsets skipped (up to the bounded end)
 *     are counted (stats.offsets_lost) and reported in one warning line per
 *     partition and gap; with on_error=raise the read stops there instead
 *     (SHAPE_EINVAL, the position before the gap kept). A start position
 *     below the low watermark (an old checkpoint) is the same gap.
 *   - errors: the client says what a consumer error means (retried by
 *     itself, reconnect, fatal); a reconnectable one is SHAPE_ECONN with
 *     text "kafka: ...", so the caller can reopen at its last position.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consumer_client.h"
#include "kafka_uri.h"
#include "shape/clock.h"
#include "shape/credref.h"
#include "shape/source.h"
#include "shape/task.h"

#define POLL_TIMEOUT_MS 1000
#define FOLLOW_SLICE_MS 200
#define DEFAULT_BATCH 65536
#define DEFAULT_GROUP "shape-stream-profile"
/* Bounded reads fetch this many partitions ahead (see fetch_window), the
 * drained one included. More than one, so the next partition's first fetch
 * is answered while this one is drained (1 is ~1.4x slower on 64 small
 * partitions); few, because everything fetched ahead is memory touched for
 * the first time and gone from the caches when its turn comes: on the
 * embedded broker 8 read 1M messages over 64 partitions ~10 % slower than
 * 4 (100 MB peak against 70 MB), and 16 partitions ~30 % slower. */
#define DEFAULT_WINDOW 4
/* Bounded reads: the broker's long-poll for a fetch (fetch.wait.max.ms,
 * librdkafka's default 500 ms) when the fetched partitions are at their end.
 * A partition resumed while such a fetch is in flight waits for it, so each
 * move of the window cost up to 500 ms; a short wait lets it join the next
 * fetch at once. A `config` value of fetch.wait.max.ms wins. */
#define BOUNDED_FETCH_WAIT_MS "10"
/* Interleaving: a fetch that finds nothing queued within this wait wakes
 * the client's fetcher (wake()) and then waits the full poll. A queue that
 * is being refilled answers well within it; a stalled one (the fetcher
 * asleep, see rk_wake) would otherwise wait out librdkafka's ~1 s idle. */
#define INTERLEAVE_WAKE_AFTER_MS 5
/* Interleaving: the fetcher is also woken after this many batches, with
 * the partition just drained, so queues are refilled while the read is
 * elsewhere instead of when it finds one empty: every queue is capped at a
 * batch, and once all are full librdkafka's broker thread sleeps while the
 * read drains them one by one. With 64 partitions the read comes back to a
 * partition after 64 batches, so 16 leaves it woken four times a round.
 * A wake changes what is queued, never where a batch is cut. */
#define INTERLEAVE_WAKE_EVERY 16

typedef struct part {
    int32_t id;
    int64_t position; /* next offset to read */
    int64_t end;      /* bounded: high watermark when the read began */
    int64_t low;      /* low watermark when the read began (interleaving) */
    int done;
    int fetching; /* bounded: not paused (inside the prefetch window) */
} part;

typedef struct kafka_source kafka_source;
struct kafka_source {
    shape_source base;
    shape_kafka_uri uri;
    shape_kafka_consumer *client;
    part *parts;
    size_t n_parts;
    size_t cursor; /* bounded: the partition being drained */
    size_t window; /* bounded: partitions fetched ahead, the drained one included */
    int bounded;
    int interleave; /* bounded: batches from the least-read partition, not partition after partition */
    int announce;   /* interleave: the first step hands out the positions only */
    int since_wake; /* interleave: batches gathered since the fetcher was last woken */
    int64_t batch_size;
    int raise_on_gap;    /* on_error=raise: records removed under the read end it */
    int moved;           /* bounded: a gap moved a position since positions were last handed out */
    int64_t remaining;   /* max_messages left, or -1 */
    double idle_timeout; /* seconds, or < 0 for none */
    double last_message; /* monotonic seconds */
    char *only_header;   /* option only_header (the client's until destroy), or NULL */

    /* following: the entries of the current fetch not handed out yet */
    shape_message *polled;
    shape_kafka_event *polled_events;
    size_t n_polled, next_polled;
    /* the batch being decoded (bounded reads fetch straight into it) */
    shape_message *msgs;
    shape_kafka_event *events;
    /* bounded: an error met while a batch was being filled, returned by the
     * next call, after the messages before it were handed out */
    shape_err deferred;

    shape_decoder *dec;
    /* the decoder's counters after the last batch handed out, and the
     * source's own offsets_lost (kept current: see take_stats) */
    shape_decode_stats stats;
    /* bounded: batch k is decoded on this thread while batch k + 1 is
     * fetched (see bounded_next); the batch in flight is `ahead` */
    shape_task *decoding;
    struct decode_job {
        kafka_source *ks;
        shape_message *msgs;
        shape_kafka_event *events;
        size_t n; /* 0: nothing in flight */
        shape_offsets after;
        struct ArrowSchema schema;
        struct ArrowArray array;
        int rc;
        shape_err err;
    } ahead;
};

static const char *const known_options[] = {
    "start_at", "stop_at_end", "idle_timeout", "max_messages", "batch_size", "config", "schema",
    "on_error", "event_time_field", "event_time_unit", "with_offsets", "with_key", "with_headers",
    "with_timestamp", "nested", "partitions", "prefetch_partitions", "interleave", "max_columns", "grow_schema", "only_header", NULL};

static void release(kafka_source *ks, shape_kafka_event *events, size_t n)
{
    if (n) ks->client->ops->release(ks->client, events, n);
}

static int error_event(const shape_kafka_event *ev, shape_err *err)
{
    return shape_err_set(err, ev->action == SHAPE_KAFKA_ERROR_RECONNECT ? SHAPE_ECONN : SHAPE_EINVAL, "kafka: %s",
                         ev->text && *ev->text ? ev->text : "consumer error");
}

static void free_polled(kafka_source *ks)
{
    if (ks->n_polled > ks->next_polled)
        release(ks, ks->polled_events + ks->next_polled, ks->n_polled - ks->next_polled);
    ks->n_polled = ks->next_polled = 0;
}

static void ks_close(shape_source *src)
{
    kafka_source *ks = (kafka_source *)src;
    if (!ks) return;
    shape_task_free(ks->decoding); /* the batch in flight, if any, is decoded (and its messages released) first */
    if (ks->ahead.n) {
        if (ks->ahead.array.release) ks->ahead.array.release(&ks->ahead.array);
        if (ks->ahead.schema.release) ks->ahead.schema.release(&ks->ahead.schema);
    }
    shape_offsets_free(&ks->ahead.after);
    free(ks->ahead.msgs);
    free(ks->ahead.events);
    if (ks->client) {
        free_polled(ks);
        ks->client->ops->destroy(ks->client);
    }
    shape_kafka_uri_free(&ks->uri);
    shape_decoder_free(ks->dec);
    free(ks->parts);
    free(ks->polled);
    free(ks->polled_events);
    free(ks->msgs);
    free(ks->events);
    free(ks->only_header);
    free(ks);
}

/* ---- positions ---------------------------------------------------------- */

static int positions(const kafka_source *ks, shape_offsets *after, shape_err *err)
{
    shape_offsets_clear(after);
    for (size_t i = 0; i < ks->n_parts; i++)
        SHAPE_RETURN_NOT_OK(shape_offsets_set(after, ks->parts[i].id, ks->parts[i].position, err));
    return SHAPE_OK;
}

static part *find_part(kafka_source *ks, int32_t id)
{
    size_t lo = 0, hi = ks->n_parts;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ks->parts[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < ks->n_parts && ks->parts[lo].id == id ? &ks->parts[lo] : NULL;
}

/* Decode ks->msgs[0..n), release them, and pair the batch with the positions. */
static void take_stats(kafka_source *ks)
{
    int64_t lost = ks->stats.offsets_lost;
    ks->stats = *shape_decoder_stats(ks->dec);
    ks->stats.offsets_lost = lost;
}

/* Offsets [from, to) of p were removed by the broker before the read got to
 * them: count them, and warn — or, with on_error=raise, stop the read
 * (SHAPE_EINVAL). `going_on` says how the read continues ("resuming",
 * "continuing"). */
static int lost_offsets(kafka_source *ks, const part *p, int64_t from, int64_t to, const char *going_on,
                        shape_err *err)
{
    long long n = (long long)(to - from);
    if (ks->raise_on_gap)
        return shape_err_set(err, SHAPE_EINVAL,
                             "kafka: %s partition %d: offsets %lld to %lld were removed by the broker (retention or "
                             "deleted records) before they were read: %lld records lost (on_error=raise; with skip "
                             "the read goes on at %lld)",
                             ks->uri.topic, (int)p->id, (long long)from, (long long)to - 1, n, (long long)to);
    ks->stats.offsets_lost += n;
    fprintf(stderr,
            "shape: warning: kafka: %s partition %d: offsets %lld to %lld are no longer on the broker (retention or "
            "deleted records); %lld records skipped, %s at %lld\n",
            ks->uri.topic, (int)p->id, (long long)from, (long long)to - 1, n, going_on, (long long)to);
    return SHAPE_OK;
}

/* The client's position of p jumped from p->position to next (a message, a
 * partition end or its fetch position): a gap of a compacted or
 * transactional topic, or records removed by the broker — those when the
 * client's low watermark is above the position (it was reset there). Only
 * the offsets before the bounded end count; the position moves past them
 * (so they are counted once). */
static int check_jump(kafka_source *ks, part *p, int64_t next, shape_err *err)
{
    int64_t low;
    if (next <= p->position || !ks->client->ops->low_watermark(ks->client, p->id, &low) || low <= p->position)
        return SHAPE_OK;
    int64_t to = low < next ? low : next;
    if (to > p->end) to = p->end;
    if (to <= p->position) return SHAPE_OK;
    SHAPE_RETURN_NOT_OK(lost_offsets(ks, p, p->position, to, "continuing", err));
    p->position = to;
    ks->moved = 1;
    return SHAPE_OK;
}

static int hand_out(kafka_source *ks, size_t n, struct ArrowSchema *schema, struct ArrowArray *array,
                    shape_offsets *after, shape_err *err)
{
    int rc = shape_decoder_decode(ks->dec, ks->msgs, n, schema, array, err);
    take_stats(ks);
    release(ks, ks->events, n);
    if (rc != SHAPE_OK) return rc;
    return positions(ks, after, err);
}

/* ---- bounded reads ------------------------------------------------------- */

/* Bounded reads drain partitions one after another, so only the partition
 * being drained and the next few are fetched; the others stay paused until
 * their turn. Memory then holds `window` partitions' prefetch, not every
 * partition's (librdkafka's prefetch limits apply per partition queue). */
static void fetch_window(kafka_source *ks)
{
    size_t open = 0;
    for (size_t i = ks->cursor; i < ks->n_parts && open < ks->window; i++) {
        part *p = &ks->parts[i];
        if (p->done) continue;
        open++;
        if (p->fetching) continue;
        ks->client->ops->set_paused(ks->client, p->id, 0);
        p->fetching = 1;
    }
}

/* How many messages the batch being filled from p may still take: what is
 * left before the partition's end, of the batch size, and of max_messages.
 * Batches are cut at exactly these sizes, never where a fetch happened to
 * return, so every run of a bounded read hands out the same batches. */
static int64_t batch_room(const kafka_source *ks, const part *p, size_t have)
{
    int64_t want = p->end - p->position;
    if (want > ks->batch_size - (int64_t)have) want = ks->batch_size - (int64_t)have;
    if (ks->remaining >= 0 && want > ks->remaining - (int64_t)have) want = ks->remaining - (int64_t)have;
    return want;
}

/* Interleaving: the partition not done with the fewest messages read past
 * its low watermark (ties: the lower id) — a function of the positions
 * only, so a resumed read hands out the batches an uninterrupted one would.
 * SIZE_MAX when every partition is done. */
static size_t least_read(const kafka_source *ks)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < ks->n_parts; i++) {
        const part *p = &ks->parts[i];
        if (p->done) continue;
        if (best == SIZE_MAX || p->position - p->low < ks->parts[best].position - ks->parts[best].low) best = i;
    }
    return best;
}

/* Fill ks->msgs[0..*n) with the next batch of a bounded read: the current
 * partition's messages up to batch_room. *end when every partition is done
 * (or max_messages reached) and nothing was gathered. An error met while the
 * batch fills keeps the messages before it: they are the batch (so a
 * transport error every few messages cannot keep a batch from ever
 * completing) and the error, kept in ks->deferred, ends the next call — the
 * caller then reconnects or stops right after the last message. With no
 * message before it, the error is returned. */
static int gather(kafka_source *ks, size_t *n, int *end, shape_err *err)
{
    shape_kafka_consumer *c = ks->client;
    *n = 0;
    for (;;) {
        if (ks->interleave) {
            size_t next = least_read(ks);
            ks->cursor = next == SIZE_MAX ? ks->n_parts : next;
        }
        while (ks->cursor < ks->n_parts && ks->parts[ks->cursor].done) ks->cursor++;
        if (ks->cursor == ks->n_parts || ks->remaining == 0) {
            *end = 1;
            return SHAPE_OK;
        }
        part *p = &ks->parts[ks->cursor];
        fetch_window(ks);
        size_t keep = 0; /* messages of this batch so far, in ks->msgs[0..keep) */
        int64_t want;
        int failure = SHAPE_OK; /* the first error that ends the read, described in err */
        int woken = 0;          /* interleave: this fetch already woke the fetcher */
        while (!failure && !p->done && (want = batch_room(ks, p, keep)) > 0) {
            size_t got = 0;
            int short_wait = ks->interleave && c->ops->wake && !woken;
            failure = c->ops->fetch(c, p->id, short_wait ? INTERLEAVE_WAKE_AFTER_MS : POLL_TIMEOUT_MS,
                                    ks->msgs + keep, ks->events + keep, (size_t)want, &got, err);
            if (failure) break;
            if (got == 0 && short_wait) { /* nothing queued yet: wake the fetcher, then wait in earnest */
                woken = 1;
                c->ops->wake(c, p->id);
                continue;
            }
            woken = 0;
            size_t first = keep;
            int gap_stop = 0; /* on_error=raise met a gap: nothing past it is taken */
            for (size_t i = first; i < first + got; i++) {
                const shape_message *m = &ks->msgs[i];
                shape_kafka_event *ev = &ks->events[i];
                if (gap_stop) {
                    release(ks, ev, 1);
                } else if (ev->kind != SHAPE_KAFKA_EVENT_ERROR && m->offset > p->position &&
                           check_jump(ks, p, m->offset, err) != SHAPE_OK) {
                    if (failure == SHAPE_OK) failure = err->code;
                    gap_stop = 1;
                    release(ks, ev, 1);
                } else if (ev->kind == SHAPE_KAFKA_EVENT_EOF) {
                    if (m->offset > p->position) p->position = m->offset < p->end ? m->offset : p->end;
                    p->done = 1;
                    release(ks, ev, 1);
                } else if (ev->kind == SHAPE_KAFKA_EVENT_ERROR) {
                    if (ev->action != SHAPE_KAFKA_ERROR_RETRIED && failure == SHAPE_OK) failure = error_event(ev, err);
                    release(ks, ev, 1);
                } else if (m->offset >= p->end || p->done || m->offset < p->position) {
                    release(ks, ev, 1); /* past the end mark, or a replayed fetch */
                } else {
                    if (keep != i) {
                        ks->msgs[keep] = *m;
                        ks->events[keep] = *ev;
                    }
                    keep++;
                    p->position = m->offset + 1;
                }
            }
            if (p->position >= p->end) p->done = 1;
            if (failure) break;
            if (got == 0) {
                c->ops->serve(c); /* an error callback may be waiting */
                failure = c->ops->failure(c, err);
                if (failure) break;
                /* Nothing within the poll: the position may still have moved
                 * past markers or gaps without a message to show for it. */
                int64_t next;
                if (c->ops->position(c, p->id, &next) && next > p->position) {
                    failure = check_jump(ks, p, next, err);
                    if (failure) break;
                    p->position = next < p->end ? next : p->end;
                }
                if (p->position >= p->end) p->done = 1;
            }
        }
        if (failure && keep == 0) return failure;
        if (failure) {
            ks->deferred = *err;
            ks->deferred.code = failure;
            shape_err_clear(err);
        }
        if (keep == 0) continue; /* the partition ended without a message */
        if (!failure && ks->interleave && c->ops->wake && ++ks->since_wake >= INTERLEAVE_WAKE_EVERY) {
            ks->since_wake = 0;
            c->ops->wake(c, p->id); /* its queue is drained: refilled before the read is back */
        }
        if (ks->remaining > 0) ks->remaining -= (int64_t)keep;
        *n = keep;
        return SHAPE_OK;
    }
}

static int take_deferred(kafka_source *ks, shape_err *err)
{
    if (ks->deferred.code == SHAPE_OK) return SHAPE_OK;
    *err = ks->deferred;
    shape_err_clear(&ks->deferred);
    return err->code;
}

/* ---- decoding ahead (bounded reads) ---------------------------------------
 * Fetching a batch (librdkafka's queue, message bookkeeping) and decoding it
 * cost about the same; a bounded read does both at once: the batch gathered
 * is decoded on ks->decoding while the caller's thread gathers the next one,
 * and each call returns the batch decoded in the meantime. Batches, their
 * positions and errors are exactly those of decoding in line: the positions
 * after a batch are taken when it is gathered, a decode error ends the read
 * at its batch, and a fetch error met while gathering ahead is returned by
 * the call after the batch before it. The decoder is used by one thread at a
 * time (the job's), its counters copied when a batch is handed out. */

static void decode_job(void *arg)
{
    struct decode_job *j = arg;
    kafka_source *ks = j->ks;
    shape_err_clear(&j->err);
    j->rc = shape_decoder_decode(ks->dec, j->msgs, j->n, &j->schema, &j->array, &j->err);
    release(ks, j->events, j->n);
}

/* Hand ks->msgs[0..n) (just gathered) to the decoding thread. */
static int decode_ahead(kafka_source *ks, size_t n, shape_err *err)
{
    struct decode_job *j = &ks->ahead;
    int rc = positions(ks, &j->after, err);
    ks->moved = 0;
    if (rc != SHAPE_OK) {
        release(ks, ks->events, n);
        return rc;
    }
    shape_message *m = j->msgs;
    shape_kafka_event *e = j->events;
    j->msgs = ks->msgs;
    j->events = ks->events;
    ks->msgs = m;
    ks->events = e;
    j->n = n;
    j->ks = ks;
    shape_task_start(ks->decoding, decode_job, j);
    return SHAPE_OK;
}

/* Wait for the batch in flight and hand it out. */
static int take_decoded(kafka_source *ks, struct ArrowSchema *schema, struct ArrowArray *array,
                        shape_offsets *after, shape_err *err)
{
    struct decode_job *j = &ks->ahead;
    shape_task_wait(ks->decoding);
    take_stats(ks);
    j->n = 0;
    if (j->rc != SHAPE_OK) {
        *err = j->err;
        return j->rc;
    }
    *schema = j->schema;
    *array = j->array;
    j->schema.release = NULL;
    j->array.release = NULL;
    return shape_offsets_copy(after, &j->after, err);
}

static int bounded_next(kafka_source *ks, struct ArrowSchema *schema, struct ArrowArray *array,
                        shape_offsets *after, int *end, shape_err *err)
{
    size_t n = 0;
    if (!ks->ahead.n) {
        SHAPE_RETURN_NOT_OK(take_deferred(ks, err));
        SHAPE_RETURN_NOT_OK(gather(ks, &n, end, err));
        if (*end && ks->moved) { /* a gap at a partition's end: its position, before the end */
            ks->moved = 0;
            *end = 0;
            return positions(ks, after, err);
        }
        if (*end) return SHAPE_OK;
        SHAPE_RETURN_NOT_OK(decode_ahead(ks, n, err));
    }
    /* batch k is being decoded: gather k + 1 meanwhile */
    shape_err next_err;
    shape_err_clear(&next_err);
    int next_end = 0, next_rc = SHAPE_OK;
    n = 0;
    if (ks->deferred.code == SHAPE_OK) next_rc = gather(ks, &n, &next_end, &next_err);
    int rc = take_decoded(ks, schema, array, after, err);
    if (next_rc != SHAPE_OK) { /* no message before it: the next call returns it */
        ks->deferred = next_err;
        ks->deferred.code = next_rc;
    }
    if (n == 0) return rc;
    if (rc != SHAPE_OK) { /* the read ends at batch k */
        release(ks, ks->events, n);
        return rc;
    }
    rc = decode_ahead(ks, n, err);
    if (rc != SHAPE_OK && array->release) {
        array->release(array);
        if (schema->release) schema->release(schema);
    }
    return rc;
}

/* ---- following reads ----------------------------------------------------- */

static int follow_next(kafka_source *ks, struct ArrowSchema *schema, struct ArrowArray *array,
                       shape_offsets *after, int *end, shape_err *err)
{
    shape_kafka_consumer *c = ks->client;
    if (ks->remaining == 0) {
        *end = 1;
        return SHAPE_OK;
    }
    if (ks->next_polled == ks->n_polled) {
        free_polled(ks);
        size_t want = (size_t)ks->batch_size;
        if (ks->remaining > 0 && (int64_t)want > ks->remaining) want = (size_t)ks->remaining;
        size_t got = 0;
        SHAPE_RETURN_NOT_OK(c->ops->fetch(c, SHAPE_KAFKA_ALL_PARTITIONS, FOLLOW_SLICE_MS, ks->polled,
                                          ks->polled_events, want, &got, err));
        size_t keep = 0;
        for (size_t i = 0; i < got; i++) {
            shape_kafka_event *ev = &ks->polled_events[i];
            if (ev->kind == SHAPE_KAFKA_EVENT_EOF ||
                (ev->kind == SHAPE_KAFKA_EVENT_ERROR && ev->action == SHAPE_KAFKA_ERROR_RETRIED)) {
                release(ks, ev, 1); /* an end, or an error the client retries */
            } else if (ev->kind == SHAPE_KAFKA_EVENT_ERROR) {
                int rc = error_event(ev, err);
                release(ks, ev, got - i);
                ks->n_polled = keep;
                free_polled(ks);
                return rc;
            } else {
                if (keep != i) {
                    ks->polled[keep] = ks->polled[i];
                    ks->polled_events[keep] = *ev;
                }
                keep++;
            }
        }
        ks->n_polled = keep;
        if (keep > 0) {
            ks->last_message = shape_clock_now();
            if (ks->remaining > 0) ks->remaining -= (int64_t)keep;
        } else {
            c->ops->serve(c);
            SHAPE_RETURN_NOT_OK(c->ops->failure(c, err));
            if (ks->idle_timeout >= 0 && shape_clock_now() - ks->last_message >= ks->idle_timeout) *end = 1;
            return SHAPE_OK; /* no batch: lets the caller look at signals */
        }
    }
    /* One partition's messages of this fetch, in arrival order; the rest
     * keep their order after the group was taken out. */
    int32_t partition = ks->polled[ks->next_polled].partition;
    size_t n = 0, rest = ks->next_polled;
    for (size_t i = ks->next_polled; i < ks->n_polled; i++) {
        if (ks->polled[i].partition == partition) {
            ks->msgs[n] = ks->polled[i];
            ks->events[n++] = ks->polled_events[i];
        } else {
            ks->polled[rest] = ks->polled[i];
            ks->polled_events[rest++] = ks->polled_events[i];
        }
    }
    ks->n_polled = rest;
    part *p = find_part(ks, partition);
    if (p && n && check_jump(ks, p, ks->msgs[0].offset, err) != SHAPE_OK) {
        release(ks, ks->events, n);
        return err->code;
    }
    if (p && n) p->position = ks->msgs[n - 1].offset + 1;
    return hand_out(ks, n, schema, array, after, err);
}

static int ks_next(shape_source *src, struct ArrowSchema *schema, struct ArrowArray *array, shape_offsets *after,
                   int *end, shape_err *err)
{
    kafka_source *ks = (kafka_source *)src;
    array->release = NULL;
    *end = 0;
    ks->client->ops->serve(ks->client); /* serve the error and log callbacks */
    if (ks->announce) { /* the partitions, before any batch: a windowed profiler knows them all from the start */
        ks->announce = 0;
        return positions(ks, after, err);
    }
    return ks->bounded ? bounded_next(ks, schema, array, after, end, err)
                       : follow_next(ks, schema, array, after, end, err);
}

static const shape_decode_stats *ks_stats(const shape_source *src)
{
    return &((const kafka_source *)src)->stats;
}

/* Partitions read and partitions read to their end mark (bounded reads; a
 * following read has no end, so it tells only the total). */
static void ks_progress(const shape_source *src, shape_source_progress *out)
{
    const kafka_source *ks = (const kafka_source *)src;
    out->partitions_total = (int64_t)ks->n_parts;
    if (!ks->bounded) return;
    out->partitions_done = 0;
    for (size_t i = 0; i < ks->n_parts; i++) out->partitions_done += ks->parts[i].done != 0;
}

static const shape_source_vtable kafka_vtable = {ks_next, ks_stats, ks_close, ks_progress};

/* ---- opening --------------------------------------------------------------- */

/* One consumer setting. A credential reference (env://, file://, kv://;
 * shape/credref.h) is resolved first, as for the emitter's settings, and
 * neither it nor a secret-named setting's value appears in a refusal. */
static int set_property(const char *name, const char *value, void *ud, shape_err *err)
{
    shape_kafka_consumer *c = ud;
    char errstr[256] = "", *secret = NULL;
    if (shape_credref_is_reference(value)) {
        if (shape_credref_resolve(value, &secret, err) != SHAPE_OK)
            return shape_err_prefix(err, "config property '%.64s'", name);
        value = secret;
    }
    int refused = c->ops->set(c, name, value, errstr, sizeof errstr) != 0;
    int hidden = secret != NULL || shape_credref_secret_name(name);
    shape_secret_free(secret);
    if (refused) {
        if (hidden)
            return shape_err_set(err, SHAPE_EINVAL, "config property '%.64s' was refused (its value is not shown)",
                                 name);
        return shape_err_set(err, SHAPE_EINVAL, "config property '%.64s' was refused: %s", name, errstr);
    }
    return SHAPE_OK;
}

typedef struct property_look {
    const char *name;
    int found;     /* the user's config gives the setting */
    int non_empty; /* ... with a non-empty value */
} property_look;

static int find_property(const char *name, const char *value, void *ud, shape_err *err)
{
    (void)err;
    property_look *look = ud;
    if (strcmp(name, look->name) == 0) {
        look->found = 1;
        look->non_empty = value && *value;
    }
    return SHAPE_OK;
}

static property_look config_look(const shape_options *o, const char *name)
{
    property_look look = {name, 0, 0};
    if (shape_options_has(o, "config") &&
        shape_options_foreach_property(o, "config", find_property, &look, NULL) != SHAPE_OK)
        look.found = look.non_empty = 0;
    return look;
}

/* Interleaving: every partition fetches at once (any may be next), and by
 * librdkafka's defaults each queue prefetches up to 100,000 messages or
 * 64 MB: most of a bounded topic sat in memory (326 MB for a 236 MB topic of
 * 64 partitions, against ~70 MB for a read partition after partition). A
 * partition's turn needs one batch, so its queue is capped at one batch,
 * counted in messages (queued.min.messages = batch_size: right whatever the
 * message size), and a fetch reply, whose buffer lives until its last
 * message is released, at batch_size KB (fetch.max.bytes; a batch of
 * messages up to 1 KB in one reply; librdkafka's floor is message.max.bytes,
 * 1 MB, and its default 50 MB the ceiling; a larger first record batch is
 * still returned whole, so large messages take more fetches, never stall).
 * Below a batch the read crawls: each batch then needs several refills of
 * a queue (a 128 KB queue cap made a 1,024-message batch 15x slower). The
 * refill of a drained queue is what wake() is for. A `config` value of any
 * of these settings wins. */
static int interleave_caps(kafka_source *ks, const shape_options *o, shape_kafka_consumer *c, shape_err *err)
{
    char value[32];
    int64_t msgs = ks->batch_size < 10000000 ? ks->batch_size : 10000000; /* librdkafka's maximum */
    if (!config_look(o, "queued.min.messages").found) {
        snprintf(value, sizeof value, "%lld", (long long)msgs);
        SHAPE_RETURN_NOT_OK(set_property("queued.min.messages", value, c, err));
    }
    if (!config_look(o, "fetch.max.bytes").found && !config_look(o, "message.max.bytes").found) {
        int64_t bytes = ks->batch_size * 1024;
        if (bytes < 1048576) bytes = 1048576;
        if (bytes > 52428800) bytes = 52428800;
        snprintf(value, sizeof value, "%lld", (long long)bytes);
        SHAPE_RETURN_NOT_OK(set_property("fetch.max.bytes", value, c, err));
    }
    return SHAPE_OK;
}

static int make_consumer(kafka_source *ks, shape_kafka_consumer_new_fn make, void *ud, const shape_options *o,
                         const volatile sig_atomic_t *stop, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(make(ud, &ks->client, err));
    shape_kafka_consumer *c = ks->client;
    c->stop = stop;
    int rc = shape_options_get_bool(o, "with_headers", 0, &c->want_headers, err);
    const char *only = NULL;
    if (rc == SHAPE_OK) rc = shape_options_get_string(o, "only_header", NULL, &only, err);
    if (rc == SHAPE_OK && only && !c->want_headers)
        rc = shape_err_set(err, SHAPE_EINVAL, "only_header goes with with_headers (the headers column it narrows)");
    if (rc == SHAPE_OK && only && !(ks->only_header = strdup(only))) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    c->only_header = ks->only_header;
    if (rc == SHAPE_OK && shape_options_has(o, "config"))
        rc = shape_options_foreach_property(o, "config", set_property, c, err);
    if (rc == SHAPE_OK) rc = set_property("bootstrap.servers", ks->uri.servers, c, err);
    if (rc == SHAPE_OK) rc = set_property("enable.auto.commit", "false", c, err);
    if (rc == SHAPE_OK) rc = set_property("enable.auto.offset.store", "false", c, err);
    if (rc == SHAPE_OK) rc = set_property("enable.partition.eof", "true", c, err);
    /* A position the broker no longer has goes to the first record left,
     * never to the end (librdkafka's default): see "records removed under
     * the read" above. */
    if (rc == SHAPE_OK) rc = set_property("auto.offset.reset", "earliest", c, err);
    if (rc == SHAPE_OK && !config_look(o, "group.id").non_empty) rc = set_property("group.id", DEFAULT_GROUP, c, err);
    if (rc == SHAPE_OK && ks->bounded && !config_look(o, "fetch.wait.max.ms").found)
        rc = set_property("fetch.wait.max.ms", BOUNDED_FETCH_WAIT_MS, c, err);
    if (rc == SHAPE_OK && ks->interleave) rc = interleave_caps(ks, o, c, err);
    if (rc == SHAPE_OK) rc = c->ops->start(c, err);
    return rc;
}

static int wanted_partition(const int32_t *only, size_t n_only, int32_t id)
{
    if (!only) return 1;
    for (size_t i = 0; i < n_only; i++)
        if (only[i] == id) return 1;
    return 0;
}

static int discover(kafka_source *ks, const shape_offsets *start, int latest, const int32_t *only, size_t n_only,
                    shape_err *err)
{
    shape_kafka_consumer *c = ks->client;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    SHAPE_RETURN_NOT_OK(c->ops->partitions(c, ks->uri.topic, &ids, &n_ids, err));
    int rc = SHAPE_OK;
    if (n_ids == 0) {
        rc = shape_err_set(err, SHAPE_EINVAL, "kafka: topic '%s' does not exist (or has no partitions)", ks->uri.topic);
    } else {
        ks->parts = calloc(n_ids, sizeof *ks->parts);
        if (!ks->parts) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        for (size_t i = 0; rc == SHAPE_OK && i < n_ids; i++)
            if (wanted_partition(only, n_only, ids[i])) ks->parts[ks->n_parts++].id = ids[i];
        for (size_t i = 0; rc == SHAPE_OK && only && i < n_only; i++) {
            int found = 0;
            for (size_t k = 0; k < n_ids; k++) found |= ids[k] == only[i];
            if (!found)
                rc = shape_err_set(err, SHAPE_EINVAL, "kafka: topic '%s' has no partition %d (it has %zu)", ks->uri.topic,
                                   (int)only[i], n_ids);
        }
    }
    free(ids);
    SHAPE_RETURN_NOT_OK(rc);
    /* Ascending partition order, whatever the metadata's order. */
    for (size_t i = 1; i < ks->n_parts; i++)
        for (size_t j = i; j > 0 && ks->parts[j - 1].id > ks->parts[j].id; j--) {
            part tmp = ks->parts[j - 1];
            ks->parts[j - 1] = ks->parts[j];
            ks->parts[j] = tmp;
        }
    for (size_t i = 0; i < ks->n_parts; i++) {
        part *p = &ks->parts[i];
        int64_t low, high;
        SHAPE_RETURN_NOT_OK(c->ops->watermarks(c, ks->uri.topic, p->id, &low, &high, err));
        int64_t wanted;
        if (start && shape_offsets_get(start, p->id, &wanted)) {
            p->position = wanted < low ? low : wanted > high ? high : wanted;
            if (wanted < low) /* a gap: records removed by retention or DeleteRecords since */
                SHAPE_RETURN_NOT_OK(lost_offsets(ks, p, wanted, low, "resuming", err));
        } else
            p->position = latest ? high : low;
        p->end = ks->bounded ? high : INT64_MAX;
        p->low = low;
        p->done = ks->bounded && p->position >= p->end;
    }
    return SHAPE_OK;
}

/* Assign every partition not done yet, once. Bounded: the first window
 * fetches from the start, the others are paused (see fetch_window).
 * Pausing and resuming the first window right after the assignment could
 * leave its fetch waiting for the client's next wake-up, up to a second. */
static int assign_all(kafka_source *ks, shape_err *err)
{
    shape_kafka_assignment *a = calloc(ks->n_parts ? ks->n_parts : 1, sizeof *a);
    if (!a) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    size_t n = 0, open = 0;
    for (size_t i = 0; i < ks->n_parts; i++) {
        part *p = &ks->parts[i];
        if (p->done) continue;
        a[n] = (shape_kafka_assignment){p->id, p->position, 0};
        if (ks->bounded && open < ks->window) {
            open++;
            p->fetching = 1;
        } else if (ks->bounded) {
            a[n].paused = 1;
        }
        n++;
    }
    int rc = ks->client->ops->assign(ks->client, ks->uri.topic, a, n, ks->bounded, err);
    free(a);
    return rc;
}

/* "0,3-5" (or a JSON array of ids) into a sorted, de-duplicated list. */
static int parse_partitions(const shape_options *o, int32_t **out, size_t *n, shape_err *err)
{
    *out = NULL;
    *n = 0;
    if (!shape_options_has(o, "partitions")) return SHAPE_OK;
    const char *text = NULL;
    char buf[4096];
    if (shape_options_get_string(o, "partitions", NULL, &text, NULL) != SHAPE_OK || !text) {
        /* Not a string: a single integer (--option partitions=3). */
        int64_t one;
        if (shape_options_get_int64(o, "partitions", 0, &one, NULL) != SHAPE_OK)
            return shape_err_set(err, SHAPE_EINVAL, "partitions must look like 0,3-5");
        snprintf(buf, sizeof buf, "%lld", (long long)one);
        text = buf;
    }
    size_t cap = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0) goto bad;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a) goto bad;
            p = end;
        }
        if (*p == ',') p++;
        else if (*p) goto bad;
        if (b - a > 100000) goto bad;
        for (long v = a; v <= b; v++) {
            if (*n == cap) {
                cap = cap ? cap * 2 : 16;
                int32_t *grown = realloc(*out, cap * sizeof *grown);
                if (!grown) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
                *out = grown;
            }
            (*out)[(*n)++] = (int32_t)v;
        }
    }
    if (*n == 0) goto bad;
    return SHAPE_OK;
bad:
    free(*out);
    *out = NULL;
    *n = 0;
    return shape_err_set(err, SHAPE_EINVAL, "partitions must look like 0,3-5 (ids and ranges, comma-separated)");
}

static int read_options(kafka_source *ks, const shape_options *o, int *latest, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(shape_options_check_known(o, known_options, "kafka source", err));
    const char *start_at;
    SHAPE_RETURN_NOT_OK(shape_options_get_string(o, "start_at", "earliest", &start_at, err));
    if (strcmp(start_at, "earliest") != 0 && strcmp(start_at, "latest") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "start_at must be 'earliest' or 'latest'");
    *latest = strcmp(start_at, "latest") == 0;
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(o, "batch_size", DEFAULT_BATCH, &ks->batch_size, err));
    if (ks->batch_size < 1) return shape_err_set(err, SHAPE_EINVAL, "batch_size must be positive");
    if (ks->batch_size > (1 << 24)) return shape_err_set(err, SHAPE_EINVAL, "batch_size must be at most 16777216");
    SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "stop_at_end", 1, &ks->bounded, err));
    const char *on_error;
    SHAPE_RETURN_NOT_OK(shape_options_get_string(o, "on_error", "skip", &on_error, err));
    SHAPE_RETURN_NOT_OK(shape_on_error_parse(on_error, &ks->raise_on_gap, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(o, "max_messages", -1, &ks->remaining, err));
    if (shape_options_has(o, "max_messages") && ks->remaining < 1)
        return shape_err_set(err, SHAPE_EINVAL, "max_messages must be at least 1");
    int64_t window;
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(o, "prefetch_partitions", DEFAULT_WINDOW, &window, err));
    if (window < 0) return shape_err_set(err, SHAPE_EINVAL, "prefetch_partitions must be >= 0 (0: all)");
    ks->window = window == 0 ? SIZE_MAX : (size_t)window;
    SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "interleave", 0, &ks->interleave, err));
    ks->announce = ks->interleave;
    if (!ks->bounded) ks->interleave = 0; /* a following read hands out batches in arrival order anyway */
    if (ks->interleave) ks->window = SIZE_MAX; /* any partition may be next: all of them fetch */
    SHAPE_RETURN_NOT_OK(shape_options_get_double(o, "idle_timeout", -1, &ks->idle_timeout, err));
    if (shape_options_has(o, "idle_timeout") && !(ks->idle_timeout >= 0))
        return shape_err_set(err, SHAPE_EINVAL, "idle_timeout must be a number of seconds >= 0");
    return SHAPE_OK;
}

int shape_kafka_source_open_with(shape_kafka_consumer_new_fn make, void *ud, const char *uri,
                                 const shape_options *options, const shape_offsets *start,
                                 const volatile sig_atomic_t *stop, shape_source **out, shape_err *err)
{
    *out = NULL;
    kafka_source *ks = calloc(1, sizeof *ks);
    if (!ks) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    ks->base.vt = &kafka_vtable;
    shape_options *empty = options ? NULL : shape_options_new();
    const shape_options *o = options ? options : empty;
    int latest = 0;
    int32_t *only = NULL;
    size_t n_only = 0;
    int rc = shape_kafka_uri_parse(uri, &ks->uri, err);
    if (rc == SHAPE_OK) rc = read_options(ks, o, &latest, err);
    if (rc == SHAPE_OK) rc = parse_partitions(o, &only, &n_only, err);
    if (rc == SHAPE_OK) rc = shape_decoder_from_options(o, &ks->dec, err);
    if (rc == SHAPE_OK) rc = make_consumer(ks, make, ud, o, stop, err);
    shape_options_free(empty);
    if (rc == SHAPE_OK) rc = discover(ks, start, latest, only, n_only, err);
    free(only);
    if (rc == SHAPE_OK) {
        size_t cap = (size_t)ks->batch_size;
        ks->msgs = malloc(cap * sizeof *ks->msgs);
        ks->events = malloc(cap * sizeof *ks->events);
        if (!ks->bounded) {
            ks->polled = malloc(cap * sizeof *ks->polled);
            ks->polled_events = malloc(cap * sizeof *ks->polled_events);
        } else {
            ks->ahead.msgs = malloc(cap * sizeof *ks->ahead.msgs);
            ks->ahead.events = malloc(cap * sizeof *ks->ahead.events);
        }
        if (!ks->msgs || !ks->events || (!ks->bounded && (!ks->polled || !ks->polled_events)) ||
            (ks->bounded && (!ks->ahead.msgs || !ks->ahead.events)))
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    if (rc == SHAPE_OK && ks->bounded) rc = shape_task_new(&ks->decoding, err);
    if (rc == SHAPE_OK) rc = assign_all(ks, err);
    if (rc != SHAPE_OK) {
        ks_close(&ks->base);
        return rc;
    }
    ks->last_message = shape_clock_now();
    *out = &ks->base;
    return SHAPE_OK;
}

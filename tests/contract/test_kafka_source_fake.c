/* test_kafka_source_fake.c — the kafka:// source's rules, checked over the
 * in-memory FakeBroker (shape_kafka_testing): no network.
 *
 * The real source logic (src/plugins/kafka/source.c) runs against a fake
 * consumer client, so each rule of issue 4 gets an input a real broker
 * cannot be made to give on cue: start offsets clamped into [low, high]
 * (a low watermark raised as by retention included), earliest/latest,
 * bounded reads ending at the high watermarks taken when the read began
 * (messages appended during the read excluded, and seen by the next read),
 * the same batches every run in ascending partition order, a batch never
 * mixing partitions and always paired with the positions of all of them,
 * a per-poll cap that neither stalls nor hides an end, transaction markers
 * at a partition's end, following reads to idle_timeout or max_messages,
 * a _TRANSPORT failure every N messages resumed from the last position with
 * nothing lost or repeated, fatal errors, unknown topics and unknown
 * options refused by name.
 *
 * Every read is decoded with with_offsets, so each row names its partition
 * and offset; bodies carry an "id" equal to partition*1000 + offset (and an
 * "amount" that is never integral, so a first batch's schema fits every row).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_broker.h"

#define URI "kafka://broker-a:9092,broker-b:9092/orders"
#define MAX_ROWS 4096
#define MAX_BATCHES 1024
#define T0_MS 1700000000000LL

typedef struct batch {
    int32_t partition; /* the only partition of its rows */
    int64_t first, last; /* offsets of its first and last rows */
    int64_t rows;
    shape_offsets after; /* the positions paired with it */
} batch;

typedef struct run {
    batch batches[MAX_BATCHES];
    size_t n_batches;
    int32_t row_partition[MAX_ROWS];
    int64_t row_offset[MAX_ROWS];
    int64_t row_id[MAX_ROWS];
    size_t n_rows;
    int reconnects;
    int rc;             /* the error that ended the read, or SHAPE_OK */
    char message[512];  /* ... and its text */
    int64_t first_event_time_us;
    shape_decode_stats stats; /* the source's counters before it closed */
    shape_offsets final;      /* the last position handed out (a position-only step too) */
} run;

static run runs[2]; /* big: kept static */

/* ---- fixtures --------------------------------------------------------------------- */

static void append_rows(shape_kafka_fake_broker *fb, const char *topic, int32_t partition, int64_t n)
{
    shape_err err;
    for (int64_t i = 0; i < n; i++) {
        int64_t offset = shape_kafka_fake_broker_high_watermark(fb, topic, partition);
        char body[128];
        int64_t id = partition * 1000 + offset;
        snprintf(body, sizeof body, "{\"id\":%lld,\"amount\":%g,\"kind\":\"%c\"}", (long long)id, (double)id + 0.25,
                 "abc"[id % 3]);
        if (shape_kafka_fake_broker_append_text(fb, topic, partition, body, T0_MS + 10 * offset, &err) != SHAPE_OK)
            fail_msg("append: %s", err.message);
    }
}

/* Topic "orders" with counts[i] messages in partition i. */
static shape_kafka_fake_broker *broker_with(const int64_t *counts, int32_t partitions)
{
    shape_kafka_fake_broker *fb = NULL;
    shape_err err;
    assert_int_equal(shape_kafka_fake_broker_new(&fb, &err), SHAPE_OK);
    assert_int_equal(shape_kafka_fake_broker_add_topic(fb, "orders", partitions, &err), SHAPE_OK);
    for (int32_t p = 0; p < partitions; p++) append_rows(fb, "orders", p, counts[p]);
    return fb;
}

/* Options from JSON, with_offsets always on. */
static shape_options *options(const char *json)
{
    shape_options *o = shape_options_new();
    shape_err err;
    if (json && shape_options_load_buffer(o, json, strlen(json), "test options", &err) != SHAPE_OK)
        fail_msg("options: %s", err.message);
    assert_int_equal(shape_options_set_bool(o, "with_offsets", 1, &err), SHAPE_OK);
    return o;
}

static int child_index(const struct ArrowSchema *schema, const char *name)
{
    for (int64_t i = 0; i < schema->n_children; i++)
        if (strcmp(schema->children[i]->name, name) == 0) return (int)i;
    fail_msg("no column %s", name);
    return -1;
}

static void record_batch(run *r, const struct ArrowSchema *schema, const struct ArrowArray *a,
                         const shape_offsets *after)
{
    int pc = child_index(schema, "_shape_partition"), oc = child_index(schema, "_shape_offset");
    int ic = child_index(schema, "id"), tc = child_index(schema, "_shape_event_time");
    assert_true(r->n_batches < MAX_BATCHES);
    batch *b = &r->batches[r->n_batches++];
    memset(b, 0, sizeof *b);
    b->rows = a->length;
    shape_err err;
    assert_int_equal(shape_offsets_copy(&b->after, after, &err), SHAPE_OK);
    for (int64_t i = 0; i < a->length; i++) {
        size_t len;
        const uint8_t *text = shape_arrow_bytes_at(a->children[pc], i, &len);
        char buf[16];
        assert_true(len < sizeof buf);
        memcpy(buf, text, len);
        buf[len] = '\0';
        int32_t partition = (int32_t)atoi(buf);
        int64_t offset = shape_arrow_int64_at(a->children[oc], i);
        if (i == 0) {
            b->partition = partition;
            b->first = offset;
        }
        assert_int_equal(partition, b->partition); /* a batch never mixes partitions */
        b->last = offset;
        assert_true(r->n_rows < MAX_ROWS);
        if (r->n_rows == 0) r->first_event_time_us = shape_arrow_int64_at(a->children[tc], i);
        r->row_partition[r->n_rows] = partition;
        r->row_offset[r->n_rows] = offset;
        r->row_id[r->n_rows++] = shape_arrow_int64_at(a->children[ic], i);
    }
}

static void run_reset(run *r)
{
    for (size_t i = 0; i < r->n_batches; i++) shape_offsets_free(&r->batches[i].after);
    shape_offsets_free(&r->final);
    memset(r, 0, sizeof *r);
}

/* Read to the end. With `reconnect`, a SHAPE_ECONN closes the source and
 * opens a new one at the last position handed out (the start before the
 * first batch), as the stream consumer does. */
static void read_all(shape_kafka_fake_broker *fb, const char *uri, const char *json, const shape_offsets *start,
                     int reconnect, run *r)
{
    run_reset(r);
    shape_options *o = options(json);
    shape_offsets last = SHAPE_OFFSETS_INIT;
    shape_err err;
    if (start) assert_int_equal(shape_offsets_copy(&last, start, &err), SHAPE_OK);
    int have_last = start != NULL;
    shape_source *src = NULL;
    for (;;) {
        if (!src) {
            r->rc = shape_kafka_fake_broker_source_open(fb, uri, o, have_last ? &last : NULL, &src, &err);
            if (r->rc != SHAPE_OK) break;
        }
        struct ArrowSchema schema;
        struct ArrowArray array;
        shape_offsets after = SHAPE_OFFSETS_INIT;
        int end = 0;
        int rc = shape_source_next(src, &schema, &array, &after, &end, &err);
        if (rc == SHAPE_ECONN && reconnect) {
            shape_offsets_free(&after);
            shape_source_close(src);
            src = NULL;
            assert_true(++r->reconnects < 10000);
            continue;
        }
        if (rc != SHAPE_OK) {
            r->rc = rc;
            shape_offsets_free(&after);
            break;
        }
        if (end) {
            shape_offsets_free(&after);
            break;
        }
        if (after.n) assert_int_equal(shape_offsets_copy(&r->final, &after, &err), SHAPE_OK);
        if (array.release) {
            record_batch(r, &schema, &array, &after);
            array.release(&array);
            schema.release(&schema);
            assert_int_equal(shape_offsets_copy(&last, &after, &err), SHAPE_OK);
            have_last = 1;
        }
        shape_offsets_free(&after);
    }
    if (r->rc != SHAPE_OK) snprintf(r->message, sizeof r->message, "%s", err.message);
    if (src) r->stats = *shape_source_stats(src);
    shape_source_close(src);
    shape_kafka_fake_broker_counters c = shape_kafka_fake_broker_counts(fb);
    assert_int_equal(c.released, c.handed); /* every entry released, once (twice would be a double free) */
    shape_offsets_free(&last);
    shape_options_free(o);
}

static int64_t after_of(const batch *b, int32_t partition)
{
    int64_t next = -1;
    assert_int_equal(shape_offsets_get(&b->after, partition, &next), 1);
    return next;
}

static shape_offsets start_at(const int32_t *partitions, const int64_t *next, size_t n)
{
    shape_offsets s = SHAPE_OFFSETS_INIT;
    shape_err err;
    for (size_t i = 0; i < n; i++) assert_int_equal(shape_offsets_set(&s, partitions[i], next[i], &err), SHAPE_OK);
    return s;
}

/* Every row of partitions [0, n) from offset from[p] to counts[p] exactly once, in (partition, offset) order. */
static void assert_rows_exactly(const run *r, const int64_t *from, const int64_t *counts, int32_t n)
{
    size_t k = 0;
    for (int32_t p = 0; p < n; p++)
        for (int64_t off = from ? from[p] : 0; off < counts[p]; off++, k++) {
            assert_true(k < r->n_rows);
            assert_int_equal(r->row_partition[k], p);
            assert_int_equal(r->row_offset[k], off);
            assert_int_equal(r->row_id[k], p * 1000 + off);
        }
    assert_int_equal(r->n_rows, k);
}

static int teardown(void **state)
{
    (void)state;
    run_reset(&runs[0]);
    run_reset(&runs[1]);
    return 0;
}

/* ---- bounded reads ------------------------------------------------------------------ */

static void test_chunk_cap_gives_batches_and_positions(void **state)
{
    (void)state;
    int64_t counts[] = {25};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    /* Batches are cut at batch_size and the partition's end, never where a
     * poll happened to stop (3 messages per poll here): every run of a
     * bounded read hands out the same batches, however the broker paces it. */
    shape_kafka_fake_broker_set_chunk(fb, 3);
    run *r = &runs[0];
    read_all(fb, URI, NULL, NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_int_equal(r->n_batches, 1);
    assert_int_equal(r->batches[0].rows, 25);
    assert_int_equal(shape_kafka_fake_broker_counts(fb).fetches, 9);
    read_all(fb, URI, "{\"batch_size\":10}", NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_int_equal(r->n_batches, 3);
    int64_t rows[] = {10, 10, 5}, after[] = {10, 20, 25};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r->batches[i].rows, rows[i]);
        assert_int_equal(after_of(&r->batches[i], 0), after[i]);
    }
    assert_rows_exactly(r, NULL, counts, 1);
    assert_int_equal(r->first_event_time_us, T0_MS * 1000); /* broker time, ms -> us */
    shape_kafka_fake_broker_counters c = shape_kafka_fake_broker_counts(fb);
    assert_int_equal(c.delivered, 50); /* the counters add up over both reads */
    assert_int_equal(c.consumers, 2);
    assert_int_equal(c.closed, 2);
    assert_int_equal(c.connections, 2); /* every partition assigned once per read */
    shape_kafka_fake_broker_free(fb);
}

static void test_ascending_partitions_never_mixed_positions_of_all(void **state)
{
    (void)state;
    int64_t counts[] = {5, 3, 0, 4};
    shape_kafka_fake_broker *fb = broker_with(counts, 4);
    run *r = &runs[0];
    read_all(fb, URI, "{\"batch_size\":2}", NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_rows_exactly(r, NULL, counts, 4);
    int32_t prev = -1;
    for (size_t i = 0; i < r->n_batches; i++) {
        const batch *b = &r->batches[i];
        assert_true(b->partition >= prev); /* ascending partition order */
        prev = b->partition;
        assert_true(b->rows <= 2);
        assert_int_equal(b->after.n, 4); /* the positions of ALL partitions */
        for (int32_t p = 0; p < 4; p++) {
            int64_t want = p < b->partition ? counts[p] : p == b->partition ? b->last + 1 : 0;
            assert_int_equal(after_of(b, p), want);
        }
    }
    assert_int_equal(r->n_batches, 3 + 2 + 0 + 2);
    shape_kafka_fake_broker_free(fb);
}

static void test_same_batches_every_run(void **state)
{
    (void)state;
    int64_t counts[] = {17, 0, 9, 31, 4};
    shape_kafka_fake_broker *fb = broker_with(counts, 5);
    shape_kafka_fake_broker_set_chunk(fb, 3);
    read_all(fb, URI, "{\"batch_size\":4}", NULL, 0, &runs[0]);
    /* the second run fetches ahead 2 partitions instead of all 5: same batches */
    read_all(fb, URI, "{\"batch_size\":4,\"prefetch_partitions\":2}", NULL, 0, &runs[1]);
    assert_int_equal(runs[0].rc, SHAPE_OK);
    assert_int_equal(runs[1].rc, SHAPE_OK);
    assert_int_equal(runs[0].n_batches, runs[1].n_batches);
    for (size_t i = 0; i < runs[0].n_batches; i++) {
        const batch *a = &runs[0].batches[i], *b = &runs[1].batches[i];
        assert_int_equal(a->partition, b->partition);
        assert_int_equal(a->first, b->first);
        assert_int_equal(a->rows, b->rows);
        for (int32_t p = 0; p < 5; p++) assert_int_equal(after_of(a, p), after_of(b, p));
    }
    assert_rows_exactly(&runs[0], NULL, counts, 5);
    shape_kafka_fake_broker_free(fb);
}

static void test_resume_from_every_batch_gives_the_rest(void **state)
{
    (void)state;
    int64_t counts[] = {7, 5, 6};
    shape_kafka_fake_broker *fb = broker_with(counts, 3);
    shape_kafka_fake_broker_set_chunk(fb, 4);
    run *full = &runs[0], *rest = &runs[1];
    read_all(fb, URI, "{\"batch_size\":3}", NULL, 0, full);
    assert_int_equal(full->rc, SHAPE_OK);
    size_t rows_before = 0;
    for (size_t k = 0; k < full->n_batches; k++) {
        rows_before += (size_t)full->batches[k].rows;
        read_all(fb, URI, "{\"batch_size\":3}", &full->batches[k].after, 0, rest);
        assert_int_equal(rest->rc, SHAPE_OK);
        assert_int_equal(rest->n_rows, full->n_rows - rows_before);
        for (size_t i = 0; i < rest->n_rows; i++) {
            assert_int_equal(rest->row_partition[i], full->row_partition[rows_before + i]);
            assert_int_equal(rest->row_offset[i], full->row_offset[rows_before + i]);
        }
        /* the resumed batches are the full run's last batches */
        assert_int_equal(rest->n_batches, full->n_batches - k - 1);
    }
    shape_kafka_fake_broker_free(fb);
}

/* interleave (the windowed profiler's read order): each batch from the
 * partition read least so far, ties to the lower id; a function of the
 * positions, so a read resumed after any batch hands out the rest of the
 * same batches. */
static void test_interleave_least_read_first_and_resume(void **state)
{
    (void)state;
    int64_t counts[] = {7, 5, 0, 6};
    shape_kafka_fake_broker *fb = broker_with(counts, 4);
    shape_kafka_fake_broker_set_chunk(fb, 3);
    run *full = &runs[0], *rest = &runs[1];
    const char *opts = "{\"batch_size\":2,\"interleave\":true}";
    read_all(fb, URI, opts, NULL, 0, full);
    assert_int_equal(full->rc, SHAPE_OK);
    int32_t parts[] = {0, 1, 3, 0, 1, 3, 0, 1, 3, 0};
    int64_t rows[] = {2, 2, 2, 2, 2, 2, 2, 1, 2, 1};
    assert_int_equal(full->n_batches, 10);
    for (size_t i = 0; i < 10; i++) {
        assert_int_equal(full->batches[i].partition, parts[i]);
        assert_int_equal(full->batches[i].rows, rows[i]);
        assert_int_equal(full->batches[i].after.n, 4);
    }
    size_t rows_before = 0;
    for (size_t k = 0; k < full->n_batches; k++) {
        rows_before += (size_t)full->batches[k].rows;
        read_all(fb, URI, opts, &full->batches[k].after, 0, rest);
        assert_int_equal(rest->rc, SHAPE_OK);
        assert_int_equal(rest->n_batches, full->n_batches - k - 1);
        for (size_t i = 0; i < rest->n_batches; i++) {
            assert_int_equal(rest->batches[i].partition, full->batches[k + 1 + i].partition);
            assert_int_equal(rest->batches[i].first, full->batches[k + 1 + i].first);
            assert_int_equal(rest->batches[i].rows, full->batches[k + 1 + i].rows);
        }
    }
    shape_kafka_fake_broker_free(fb);
}

/* Interleaving lets every partition fetch at once: each queue is capped at
 * one batch (counted in messages) and a fetch reply at batch_size KB within
 * librdkafka's 1..50 MB; a read partition after partition keeps librdkafka's
 * defaults, and a `config` value wins. */
static void test_interleave_caps_the_prefetch_at_a_batch(void **state)
{
    (void)state;
    int64_t counts[] = {3, 3};
    shape_kafka_fake_broker *fb = broker_with(counts, 2);
    static const struct {
        const char *json, *queued, *fetch_max;
    } cases[] = {
        {"{\"batch_size\":2,\"interleave\":true}", "2", "1048576"},
        {"{\"batch_size\":4096,\"interleave\":true}", "4096", "4194304"},
        {"{\"batch_size\":100000,\"interleave\":true}", "100000", "52428800"},
        {"{\"batch_size\":2}", NULL, NULL},
        {"{\"batch_size\":2,\"interleave\":true,\"config\":{\"queued.min.messages\":\"7\"}}", "7", "1048576"},
        {"{\"batch_size\":2,\"interleave\":true,\"config\":{\"message.max.bytes\":\"2000000\"}}", "2", NULL},
        {"{\"batch_size\":2,\"interleave\":true,\"config\":{\"fetch.max.bytes\":\"9000000\"}}", "2", "9000000"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        shape_options *o = options(cases[i].json);
        shape_source *src;
        shape_err err;
        assert_int_equal(shape_kafka_fake_broker_source_open(fb, URI, o, NULL, &src, &err), SHAPE_OK);
        const char *queued = shape_kafka_fake_broker_config(fb, "queued.min.messages");
        const char *fetch_max = shape_kafka_fake_broker_config(fb, "fetch.max.bytes");
        if (cases[i].queued) assert_non_null(queued), assert_string_equal(queued, cases[i].queued);
        else assert_null(queued);
        if (cases[i].fetch_max) assert_non_null(fetch_max), assert_string_equal(fetch_max, cases[i].fetch_max);
        else assert_null(fetch_max);
        shape_source_close(src);
        shape_options_free(o);
    }
    shape_kafka_fake_broker_free(fb);
}

/* An interleaving read of fb (opts) awake, then on the sleepy fake: the
 * same batches; *starved and *wakes are the sleepy read's starved fetches
 * and wake() calls. Returns the batches read. */
static size_t read_awake_then_sleepy(shape_kafka_fake_broker *fb, const char *opts, uint64_t *starved,
                                     uint64_t *wakes)
{
    run *awake = &runs[0], *sleepy = &runs[1];
    read_all(fb, URI, opts, NULL, 0, awake);
    assert_int_equal(awake->rc, SHAPE_OK);
    shape_kafka_fake_broker_set_sleepy(fb, 1);
    shape_kafka_fake_broker_counters before = shape_kafka_fake_broker_counts(fb);
    read_all(fb, URI, opts, NULL, 0, sleepy);
    shape_kafka_fake_broker_counters after = shape_kafka_fake_broker_counts(fb);
    shape_kafka_fake_broker_set_sleepy(fb, 0);
    assert_int_equal(sleepy->rc, SHAPE_OK);
    assert_int_equal(sleepy->n_batches, awake->n_batches);
    for (size_t i = 0; i < awake->n_batches; i++) {
        assert_int_equal(sleepy->batches[i].partition, awake->batches[i].partition);
        assert_int_equal(sleepy->batches[i].first, awake->batches[i].first);
        assert_int_equal(sleepy->batches[i].rows, awake->batches[i].rows);
    }
    *starved = after.starved - before.starved;
    *wakes = after.wakes - before.wakes;
    return awake->n_batches;
}

/* librdkafka 2.0 with capped queues leaves a drained partition unfetched
 * until its broker thread wakes (~1 s idle). The sleepy fake does the same
 * (a partition's fetch after a delivery finds nothing until wake(), or 20
 * fetches): an interleaving read wakes it at the first empty fetch, so each
 * stall costs one starved fetch, and the batches are those of a read that
 * never stalls. */
static void test_interleave_wakes_a_drained_partition(void **state)
{
    (void)state;
    int64_t counts[] = {7, 5, 0, 6};
    shape_kafka_fake_broker *fb = broker_with(counts, 4);
    shape_kafka_fake_broker_set_chunk(fb, 3);
    uint64_t starved, wakes;
    read_awake_then_sleepy(fb, "{\"batch_size\":2,\"interleave\":true}", &starved, &wakes);
    assert_true(starved >= 1);      /* the fake did stall the read */
    assert_true(starved <= wakes);  /* ... and every stall ended at the first wake */
    shape_kafka_fake_broker_free(fb);
}

/* Interleaving also wakes the fetcher every 16 batches (source.c:
 * INTERLEAVE_WAKE_EVERY) with the partition just drained, so a queue is
 * refilled before the read comes back to it rather than when it finds it
 * empty. On the sleepy fake a stall costs exactly one wake (the test
 * above), so the wakes beyond the starved fetches are the periodic ones:
 * 3 partitions of 40 messages in batches of 2 are 60 batches, 3 wakes.
 * The batches are those of a read that never stalls. */
static void test_interleave_wakes_the_fetcher_ahead(void **state)
{
    (void)state;
    int64_t counts[] = {40, 40, 40};
    shape_kafka_fake_broker *fb = broker_with(counts, 3);
    uint64_t starved, wakes;
    size_t batches = read_awake_then_sleepy(fb, "{\"batch_size\":2,\"interleave\":true}", &starved, &wakes);
    assert_int_equal(batches, 60);
    assert_true(starved >= 1);
    assert_int_equal(wakes - starved, 60 / 16);
    shape_kafka_fake_broker_free(fb);
}

static void test_start_offsets_clamped_into_watermarks(void **state)
{
    (void)state;
    int64_t counts[] = {25};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    int32_t p0[] = {0};
    run *r = &runs[0];

    shape_offsets below = start_at(p0, (int64_t[]){-5}, 1);
    read_all(fb, URI, NULL, &below, 0, r);
    assert_int_equal(r->n_rows, 25); /* clamped to low */
    shape_offsets_free(&below);

    shape_offsets beyond = start_at(p0, (int64_t[]){999}, 1);
    read_all(fb, URI, NULL, &beyond, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_int_equal(r->n_rows, 0); /* clamped to the end */
    assert_int_equal(shape_kafka_fake_broker_assigned_offset(fb, 0), -1); /* nothing left to assign */
    shape_offsets_free(&beyond);

    /* Retention took offsets 0..9: a checkpoint at 3 starts at 10, the oldest kept. */
    shape_err err;
    assert_int_equal(shape_kafka_fake_broker_set_low_watermark(fb, "orders", 0, 10, &err), SHAPE_OK);
    shape_offsets old = start_at(p0, (int64_t[]){3}, 1);
    read_all(fb, URI, NULL, &old, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_int_equal(shape_kafka_fake_broker_assigned_offset(fb, 0), 10);
    assert_rows_exactly(r, (int64_t[]){10}, counts, 1);
    shape_offsets_free(&old);
    /* earliest is the low watermark too */
    read_all(fb, URI, NULL, NULL, 0, r);
    assert_rows_exactly(r, (int64_t[]){10}, counts, 1);

    /* Partition 0 from 6, partition 1 from its earliest; a partition of the
     * start that the topic lacks is ignored and gone from the positions. */
    int64_t two[] = {6, 4};
    shape_kafka_fake_broker *fb2 = broker_with(two, 2);
    shape_offsets mixed = start_at((int32_t[]){0, 7}, (int64_t[]){6, 3}, 2);
    read_all(fb2, URI, NULL, &mixed, 0, r);
    assert_int_equal(r->n_rows, 4);
    const batch *last = &r->batches[r->n_batches - 1];
    assert_int_equal(last->after.n, 2);
    assert_int_equal(after_of(last, 0), 6);
    assert_int_equal(after_of(last, 1), 4);
    shape_offsets_free(&mixed);
    shape_kafka_fake_broker_free(fb2);
    shape_kafka_fake_broker_free(fb);
}

static void test_earliest_and_latest(void **state)
{
    (void)state;
    int64_t counts[] = {25, 3};
    shape_kafka_fake_broker *fb = broker_with(counts, 2);
    run *r = &runs[0];
    read_all(fb, URI, "{\"start_at\":\"earliest\"}", NULL, 0, r);
    assert_int_equal(r->n_rows, 28);
    read_all(fb, URI, "{\"start_at\":\"latest\"}", NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_int_equal(r->n_batches, 0);
    shape_kafka_fake_broker_free(fb);
}

typedef struct append_plan {
    uint64_t at_fetch;
    int64_t n;
} append_plan;

static void append_on_fetch(shape_kafka_fake_broker *fb, uint64_t fetches, void *ud)
{
    const append_plan *plan = ud;
    if (fetches == plan->at_fetch) append_rows(fb, "orders", 0, plan->n);
}

/* Retention under a bounded read: before fetch `at_fetch` the broker's low
 * watermark rises to `n` (offsets below it are gone, the client goes on at
 * it, as librdkafka does with auto.offset.reset=earliest). */
static void retention_on_fetch(shape_kafka_fake_broker *fb, uint64_t fetches, void *ud)
{
    const append_plan *plan = ud;
    shape_err err;
    if (fetches == plan->at_fetch)
        assert_int_equal(shape_kafka_fake_broker_set_low_watermark(fb, "orders", 0, plan->n, &err), SHAPE_OK);
}

/* Records removed under the read are counted and reported, and the read
 * keeps its place: it goes on at the first record left and hands out the
 * position past the gap (a checkpoint after it does not report the gap
 * again); with on_error=raise it stops there, at the position before it.
 * A start position below the low watermark is the same gap. */
static void test_records_removed_under_the_read_are_counted(void **state)
{
    (void)state;
    int64_t counts[] = {40, 5};
    shape_kafka_fake_broker *fb = broker_with(counts, 2);
    shape_kafka_fake_broker_set_chunk(fb, 4);
    append_plan plan = {3, 30}; /* 12 rows read (3 fetches of 4), then offsets 12-29 removed */
    shape_kafka_fake_broker_on_fetch(fb, retention_on_fetch, &plan);
    run *r = &runs[0];
    read_all(fb, URI, "{\"batch_size\":4}", NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_int_equal(r->stats.offsets_lost, 18);
    assert_int_equal(r->n_rows, 12 + 10 + 5);
    assert_int_equal(r->row_offset[11], 11);
    assert_int_equal(r->row_offset[12], 30); /* the first record left */
    assert_int_equal(after_of(&r->batches[r->n_batches - 1], 0), 40);

    /* The gap at the partition's end: the position past it is still handed out. */
    int64_t one[] = {20};
    shape_kafka_fake_broker *fb1 = broker_with(one, 1);
    shape_kafka_fake_broker_set_chunk(fb1, 4);
    append_plan at_end = {2, 20}; /* 8 read, then everything else removed */
    shape_kafka_fake_broker_on_fetch(fb1, retention_on_fetch, &at_end);
    read_all(fb1, URI, "{\"batch_size\":4}", NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_int_equal(r->n_rows, 8);
    assert_int_equal(r->stats.offsets_lost, 12);
    int64_t final0 = -1;
    assert_true(shape_offsets_get(&r->final, 0, &final0));
    assert_int_equal(final0, 20);

    /* on_error=raise: the read stops at the gap, nothing past it handed out. */
    shape_kafka_fake_broker_free(fb1);
    fb1 = broker_with(one, 1);
    shape_kafka_fake_broker_set_chunk(fb1, 4);
    shape_kafka_fake_broker_on_fetch(fb1, retention_on_fetch, &at_end);
    read_all(fb1, URI, "{\"batch_size\":4,\"on_error\":\"raise\"}", NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_EINVAL);
    assert_string_equal(r->message, "kafka: orders partition 0: offsets 8 to 19 were removed by the broker (retention "
                                    "or deleted records) before they were read: 12 records lost (on_error=raise; with "
                                    "skip the read goes on at 20)");
    assert_int_equal(r->n_rows, 8);
    assert_true(shape_offsets_get(&r->final, 0, &final0));
    assert_int_equal(final0, 8);

    /* A start below the low watermark: counted, or refused with raise. */
    shape_kafka_fake_broker_on_fetch(fb1, NULL, NULL);
    int32_t p0[] = {0};
    shape_offsets old = start_at(p0, (int64_t[]){8}, 1);
    read_all(fb1, URI, "{\"on_error\":\"raise\"}", &old, 0, r);
    assert_int_equal(r->rc, SHAPE_EINVAL);
    assert_non_null(strstr(r->message, "offsets 8 to 19 were removed by the broker"));
    read_all(fb1, URI, NULL, &old, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_int_equal(r->stats.offsets_lost, 12);
    assert_int_equal(r->n_rows, 0);
    shape_offsets_free(&old);
    shape_kafka_fake_broker_free(fb1);
    shape_kafka_fake_broker_free(fb);
}

static void test_appends_during_read_are_left_to_the_next(void **state)
{
    (void)state;
    int64_t counts[] = {10};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    shape_kafka_fake_broker_set_chunk(fb, 4);
    shape_options *o = options("{\"batch_size\":4}");
    shape_source *src;
    shape_err err;
    assert_int_equal(shape_kafka_fake_broker_source_open(fb, URI, o, NULL, &src, &err), SHAPE_OK);
    run *r = &runs[0];
    run_reset(r);
    shape_offsets after = SHAPE_OFFSETS_INIT, last = SHAPE_OFFSETS_INIT;
    for (int first = 1;; first = 0) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        int end;
        assert_int_equal(shape_source_next(src, &schema, &array, &after, &end, &err), SHAPE_OK);
        if (end) break;
        record_batch(r, &schema, &array, &after);
        array.release(&array);
        schema.release(&schema);
        assert_int_equal(shape_offsets_copy(&last, &after, &err), SHAPE_OK);
        if (first) append_rows(fb, "orders", 0, 6); /* a producer, after the first batch */
    }
    shape_source_close(src);
    assert_rows_exactly(r, NULL, counts, 1); /* ids 0..9 only */
    int64_t next;
    assert_int_equal(shape_offsets_get(&last, 0, &next), 1);
    assert_int_equal(next, 10);

    /* Appends inside a fetch (the broker's hook) are excluded as well. */
    append_plan plan = {shape_kafka_fake_broker_counts(fb).fetches + 1, 5}; /* before this read's second fetch */
    shape_kafka_fake_broker_on_fetch(fb, append_on_fetch, &plan);
    read_all(fb, URI, "{\"batch_size\":4}", &last, 0, r);
    shape_kafka_fake_broker_on_fetch(fb, NULL, NULL);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_rows_exactly(r, (int64_t[]){10}, (int64_t[]){16}, 1); /* the 6 appended before it began */
    assert_int_equal(shape_kafka_fake_broker_high_watermark(fb, "orders", 0), 21);

    /* The next read, from where that one ended, sees the 5. */
    shape_offsets from = start_at((int32_t[]){0}, (int64_t[]){16}, 1);
    read_all(fb, URI, NULL, &from, 0, r);
    assert_rows_exactly(r, (int64_t[]){16}, (int64_t[]){21}, 1);
    shape_offsets_free(&from);
    shape_offsets_free(&after);
    shape_offsets_free(&last);
    shape_options_free(o);
    shape_kafka_fake_broker_free(fb);
}

/* Markers just before the end, then appends: a fetch that skips the
 * markers reaches the appended messages, which are past the end mark. */
static void test_appends_behind_markers_are_left_out(void **state)
{
    (void)state;
    int64_t counts[] = {4};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    shape_err err;
    assert_int_equal(shape_kafka_fake_broker_append_gap(fb, "orders", 0, 3, &err), SHAPE_OK); /* end mark: 7 */
    shape_kafka_fake_broker_set_chunk(fb, 2);
    append_plan plan = {shape_kafka_fake_broker_counts(fb).fetches + 1, 4}; /* offsets 7..10, after the first fetch */
    shape_kafka_fake_broker_on_fetch(fb, append_on_fetch, &plan);
    run *r = &runs[0];
    read_all(fb, URI, NULL, NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_rows_exactly(r, NULL, counts, 1);
    /* the batch is handed out once the position passed the markers */
    assert_int_equal(after_of(&r->batches[r->n_batches - 1], 0), 7);
    shape_kafka_fake_broker_on_fetch(fb, NULL, NULL);
    shape_kafka_fake_broker_free(fb);
}

static void test_max_messages(void **state)
{
    (void)state;
    int64_t counts[] = {25};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    run *r = &runs[0];
    read_all(fb, URI, "{\"max_messages\":12,\"batch_size\":5}", NULL, 0, r);
    assert_int_equal(r->n_batches, 3);
    assert_int_equal(r->batches[0].rows, 5);
    assert_int_equal(r->batches[1].rows, 5);
    assert_int_equal(r->batches[2].rows, 2);
    assert_int_equal(after_of(&r->batches[2], 0), 12);
    assert_int_equal(shape_kafka_fake_broker_counts(fb).delivered, 12); /* never asked for more */
    shape_kafka_fake_broker_free(fb);
}

/* A read stopped after its first batch, while the next one is being decoded
 * and more are fetched: closing releases every entry handed out, once. */
static void test_close_mid_read_releases_every_entry(void **state)
{
    (void)state;
    int64_t counts[] = {30, 30, 30};
    shape_kafka_fake_broker *fb = broker_with(counts, 3);
    shape_options *o = options("{\"batch_size\":10}");
    shape_source *src = NULL;
    shape_err err;
    assert_int_equal(shape_kafka_fake_broker_source_open(fb, URI, o, NULL, &src, &err), SHAPE_OK);
    struct ArrowSchema schema;
    struct ArrowArray array;
    shape_offsets after = SHAPE_OFFSETS_INIT;
    int end = 0;
    assert_int_equal(shape_source_next(src, &schema, &array, &after, &end, &err), SHAPE_OK);
    assert_int_equal(array.length, 10);
    int64_t next = -1;
    assert_int_equal(shape_offsets_get(&after, 0, &next), 1);
    assert_int_equal(next, 10);
    array.release(&array);
    schema.release(&schema);
    assert_true(shape_kafka_fake_broker_counts(fb).handed > 10); /* the next batch was fetched ahead */
    shape_source_close(src);
    shape_kafka_fake_broker_counters c = shape_kafka_fake_broker_counts(fb);
    assert_int_equal(c.released, c.handed);
    assert_int_equal(c.closed, 1);
    shape_offsets_free(&after);
    shape_options_free(o);
    shape_kafka_fake_broker_free(fb);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_one_message_per_poll_does_not_stall(void **state)
{
    (void)state;
    int64_t counts[] = {20, 20, 20, 20, 20, 20, 20, 20};
    shape_kafka_fake_broker *fb = broker_with(counts, 8);
    shape_kafka_fake_broker_set_chunk(fb, 1);
    run *r = &runs[0];
    double t0 = now_s();
    read_all(fb, URI, NULL, NULL, 0, r);
    double took = now_s() - t0;
    assert_int_equal(r->rc, SHAPE_OK);
    assert_rows_exactly(r, NULL, counts, 8);
    assert_int_equal(r->n_batches, 8); /* one per partition: polls do not cut batches */
    /* Each fetch asked for what remained and got one message; the end of
     * each partition came from its offsets, not from an empty poll. */
    assert_int_equal(shape_kafka_fake_broker_counts(fb).fetches, 160);
    assert_true(took < 1.0);
    shape_kafka_fake_broker_free(fb);
}

static void test_markers_at_the_end_do_not_hang(void **state)
{
    (void)state;
    int64_t counts[] = {6, 4};
    shape_kafka_fake_broker *fb = broker_with(counts, 2);
    shape_err err;
    /* a transaction's commit marker, then compacted-away records */
    assert_int_equal(shape_kafka_fake_broker_append_gap(fb, "orders", 0, 3, &err), SHAPE_OK);
    append_rows(fb, "orders", 1, 2);
    assert_int_equal(shape_kafka_fake_broker_append_gap(fb, "orders", 1, 1, &err), SHAPE_OK);
    run *r = &runs[0];
    /* seen from the partition-EOF event, then (no EOF events) from the client's position */
    for (int eof = 1; eof >= 0; eof--) {
        shape_kafka_fake_broker_set_partition_eof(fb, eof);
        double t0 = now_s();
        read_all(fb, URI, NULL, NULL, 0, r);
        assert_int_equal(r->rc, SHAPE_OK);
        assert_int_equal(r->n_rows, 12);
        const batch *last = &r->batches[r->n_batches - 1];
        assert_int_equal(after_of(last, 0), 9); /* past the markers, before partition 1's batches */
        /* the batch is filled until the end is found (from the EOF event,
         * or from the client's position past the gap), so it shows it */
        assert_int_equal(after_of(last, 1), 7);
        assert_true(now_s() - t0 < 2.5);
    }
    shape_kafka_fake_broker_free(fb);
}

/* ---- following reads ---------------------------------------------------------------- */

static void test_follow_until_idle_timeout(void **state)
{
    (void)state;
    int64_t counts[] = {25, 7};
    shape_kafka_fake_broker *fb = broker_with(counts, 2);
    shape_kafka_fake_broker_set_chunk(fb, 10);
    run *r = &runs[0];
    double t0 = now_s();
    read_all(fb, URI, "{\"stop_at_end\":false,\"idle_timeout\":0.05}", NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_true(now_s() - t0 < 3.0);
    assert_int_equal(r->n_rows, 32); /* everything, each message once */
    int64_t seen[2] = {0, 0};
    for (size_t i = 0; i < r->n_rows; i++) {
        assert_int_equal(r->row_offset[i], seen[r->row_partition[i]]); /* in order within a partition */
        seen[r->row_partition[i]]++;
    }
    /* positions of both partitions with every batch */
    for (size_t i = 0; i < r->n_batches; i++) assert_int_equal(r->batches[i].after.n, 2);
    const batch *last = &r->batches[r->n_batches - 1];
    assert_int_equal(after_of(last, 0), 25);
    assert_int_equal(after_of(last, 1), 7);

    /* latest + follow: only what arrives after the start */
    shape_options *o = options("{\"stop_at_end\":false,\"idle_timeout\":0.05,\"start_at\":\"latest\"}");
    shape_source *src;
    shape_err err;
    assert_int_equal(shape_kafka_fake_broker_source_open(fb, URI, o, NULL, &src, &err), SHAPE_OK);
    append_rows(fb, "orders", 1, 3);
    run_reset(r);
    for (;;) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        shape_offsets after = SHAPE_OFFSETS_INIT;
        int end;
        assert_int_equal(shape_source_next(src, &schema, &array, &after, &end, &err), SHAPE_OK);
        if (array.release) {
            record_batch(r, &schema, &array, &after);
            array.release(&array);
            schema.release(&schema);
        }
        shape_offsets_free(&after);
        if (end) break;
    }
    shape_source_close(src);
    shape_options_free(o);
    assert_rows_exactly(r, (int64_t[]){25, 7}, (int64_t[]){25, 10}, 2);
    shape_kafka_fake_broker_free(fb);
}

static void test_follow_max_messages(void **state)
{
    (void)state;
    int64_t counts[] = {25, 25};
    shape_kafka_fake_broker *fb = broker_with(counts, 2);
    run *r = &runs[0];
    read_all(fb, URI, "{\"stop_at_end\":false,\"max_messages\":30,\"batch_size\":8}", NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_int_equal(r->n_rows, 30);
    for (size_t i = 0; i < r->n_batches; i++) assert_true(r->batches[i].rows <= 8);
    assert_int_equal(shape_kafka_fake_broker_counts(fb).delivered, 30);
    shape_kafka_fake_broker_free(fb);
}

/* ---- errors ---------------------------------------------------------------------------- */

static void test_transport_failure_resumes_without_loss_or_duplicate(void **state)
{
    (void)state;
    int64_t counts[] = {40, 0, 33, 47};
    shape_kafka_fake_broker *clean = broker_with(counts, 4), *flaky = broker_with(counts, 4);
    shape_kafka_fake_broker_set_chunk(clean, 5);
    shape_kafka_fake_broker_set_chunk(flaky, 5);

    /* Without reconnecting: the read ends with a connection error. */
    shape_kafka_fake_broker_fail_at(flaky, 5, 0);
    read_all(flaky, URI, "{\"batch_size\":16}", NULL, 0, &runs[0]);
    assert_int_equal(runs[0].rc, SHAPE_ECONN);
    assert_non_null(strstr(runs[0].message, "_TRANSPORT"));
    assert_non_null(strstr(runs[0].message, "kafka:"));
    assert_int_equal(shape_exit_code(runs[0].rc), 2);

    /* Reconnecting from the last position: the clean run's rows, once each. */
    shape_kafka_fake_broker_fail_at(flaky, 7, 11);
    read_all(clean, URI, "{\"batch_size\":16}", NULL, 1, &runs[0]);
    read_all(flaky, URI, "{\"batch_size\":16}", NULL, 1, &runs[1]);
    assert_int_equal(runs[0].rc, SHAPE_OK);
    assert_int_equal(runs[1].rc, SHAPE_OK);
    assert_int_equal(runs[0].reconnects, 0);
    if (runs[1].reconnects < 5) fail_msg("%d reconnects", runs[1].reconnects);
    assert_rows_exactly(&runs[0], NULL, counts, 4);
    assert_rows_exactly(&runs[1], NULL, counts, 4);
    shape_kafka_fake_broker_counters c = shape_kafka_fake_broker_counts(flaky);
    assert_int_equal(c.consumers, c.closed);
    shape_kafka_fake_broker_free(clean);
    shape_kafka_fake_broker_free(flaky);
}

static void test_consumer_errors_fatal_or_retried(void **state)
{
    (void)state;
    int64_t counts[] = {25};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    shape_err err;
    run *r = &runs[0];
    assert_int_equal(shape_kafka_fake_broker_inject_error(fb, "bad credentials", SHAPE_KAFKA_ERROR_FATAL, &err), SHAPE_OK);
    read_all(fb, URI, NULL, NULL, 1, r);
    assert_int_equal(r->rc, SHAPE_EINVAL);
    assert_int_equal(r->reconnects, 0);
    assert_string_equal(r->message, "kafka: bad credentials");
    /* one the client retries by itself is passed over */
    assert_int_equal(shape_kafka_fake_broker_inject_error(fb, "fetch timed out", SHAPE_KAFKA_ERROR_RETRIED, &err), SHAPE_OK);
    read_all(fb, URI, NULL, NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_OK);
    assert_rows_exactly(r, NULL, counts, 1);
    shape_kafka_fake_broker_free(fb);
}

static void test_metadata_failure(void **state)
{
    (void)state;
    int64_t counts[] = {3};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    shape_err err;
    run *r = &runs[0];
    assert_int_equal(shape_kafka_fake_broker_fail_metadata(fb, "Failed to get metadata: Broker transport failure", 1, &err),
                     SHAPE_OK);
    read_all(fb, URI, NULL, NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_ECONN);
    assert_string_equal(r->message, "kafka: Failed to get metadata: Broker transport failure");
    assert_int_equal(shape_kafka_fake_broker_fail_metadata(fb, "Local: Authentication failure", 0, &err), SHAPE_OK);
    read_all(fb, URI, NULL, NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_EINVAL);
    assert_non_null(strstr(r->message, "kafka:"));
    shape_kafka_fake_broker_free(fb);
}

static void test_unknown_topic_or_no_partitions(void **state)
{
    (void)state;
    int64_t counts[] = {3};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    shape_err err;
    assert_int_equal(shape_kafka_fake_broker_add_topic(fb, "empty", 0, &err), SHAPE_OK);
    run *r = &runs[0];
    read_all(fb, "kafka://h:9092/nope", NULL, NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_EINVAL);
    assert_int_equal(shape_exit_code(r->rc), 2);
    assert_string_equal(r->message, "kafka: topic 'nope' does not exist (or has no partitions)");
    read_all(fb, "kafka://h:9092/empty", NULL, NULL, 0, r);
    assert_int_equal(r->rc, SHAPE_EINVAL);
    assert_non_null(strstr(r->message, "'empty' does not exist"));
    assert_int_equal(shape_kafka_fake_broker_counts(fb).closed, 2);
    shape_kafka_fake_broker_free(fb);
}

static void test_options_refused_by_name(void **state)
{
    (void)state;
    int64_t counts[] = {3};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    run *r = &runs[0];
    const char *bad[][2] = {
        {"{\"bogus\":1}", "bogus"},
        {"{\"start_at\":\"yesterday\"}", "start_at"},
        {"{\"batch_size\":0}", "batch_size"},
        {"{\"max_messages\":0}", "max_messages"},
        {"{\"idle_timeout\":-1}", "idle_timeout"},
        {"{\"partitions\":\"0,x\"}", "partitions"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        read_all(fb, URI, bad[i][0], NULL, 0, r);
        assert_int_equal(r->rc, SHAPE_EINVAL);
        if (!strstr(r->message, bad[i][1])) fail_msg("'%s' does not name %s", r->message, bad[i][1]);
    }
    assert_int_equal(shape_kafka_fake_broker_counts(fb).consumers, 0); /* refused before any client */
    shape_kafka_fake_broker_free(fb);
}

static void test_consumer_configuration(void **state)
{
    (void)state;
    int64_t counts[] = {25};
    shape_kafka_fake_broker *fb = broker_with(counts, 1);
    shape_offsets from = start_at((int32_t[]){0}, (int64_t[]){10}, 1);
    shape_options *o = options(
        "{\"config\":{\"security.protocol\":\"SASL_SSL\",\"bootstrap.servers\":\"elsewhere:1\"}}");
    shape_source *src;
    shape_err err;
    assert_int_equal(shape_kafka_fake_broker_source_open(fb, URI, o, &from, &src, &err), SHAPE_OK);
    assert_int_equal(shape_kafka_fake_broker_counts(fb).consumers, 1);
    assert_string_equal(shape_kafka_fake_broker_config(fb, "bootstrap.servers"), "broker-a:9092,broker-b:9092");
    assert_string_equal(shape_kafka_fake_broker_config(fb, "enable.auto.commit"), "false");
    assert_string_equal(shape_kafka_fake_broker_config(fb, "group.id"), "shape-stream-profile");
    assert_string_equal(shape_kafka_fake_broker_config(fb, "security.protocol"), "SASL_SSL");
    assert_int_equal(shape_kafka_fake_broker_assigned_offset(fb, 0), 10);
    shape_source_close(src);
    assert_int_equal(shape_kafka_fake_broker_counts(fb).closed, 1);
    shape_options_free(o);
    o = options("{\"config\":{\"group.id\":\"mine\"}}");
    assert_int_equal(shape_kafka_fake_broker_source_open(fb, URI, o, NULL, &src, &err), SHAPE_OK);
    assert_string_equal(shape_kafka_fake_broker_config(fb, "group.id"), "mine");
    shape_source_close(src);
    shape_options_free(o);
    shape_offsets_free(&from);
    shape_kafka_fake_broker_free(fb);
}

static void test_keys_headers_and_missing_timestamps(void **state)
{
    (void)state;
    shape_kafka_fake_broker *fb = NULL;
    shape_err err;
    assert_int_equal(shape_kafka_fake_broker_new(&fb, &err), SHAPE_OK);
    assert_int_equal(shape_kafka_fake_broker_add_topic(fb, "orders", 1, &err), SHAPE_OK);
    shape_kafka_fake_broker_header h[] = {{"trace", "t-1", 3}, {"empty", NULL, 0}};
    shape_kafka_fake_broker_message m = {"{\"id\":0}", 8, 0, 0, "k0", 2, h, 2};
    assert_int_equal(shape_kafka_fake_broker_append(fb, "orders", 0, &m, &err), SHAPE_OK);
    shape_options *o = options("{\"with_key\":true,\"with_headers\":true,\"with_timestamp\":true}");
    shape_source *src;
    assert_int_equal(shape_kafka_fake_broker_source_open(fb, URI, o, NULL, &src, &err), SHAPE_OK);
    struct ArrowSchema schema;
    struct ArrowArray array;
    shape_offsets after = SHAPE_OFFSETS_INIT;
    int end;
    assert_int_equal(shape_source_next(src, &schema, &array, &after, &end, &err), SHAPE_OK);
    assert_int_equal(end, 0);
    assert_int_equal(array.length, 1);
    size_t len;
    const uint8_t *key = shape_arrow_bytes_at(array.children[child_index(&schema, "_shape_key")], 0, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(key, "k0", 2);
    assert_false(shape_arrow_is_valid(array.children[child_index(&schema, "_shape_timestamp")], 0));
    const struct ArrowArray *keys, *values;
    int64_t first;
    assert_int_equal(shape_arrow_map_row(array.children[child_index(&schema, "_shape_headers")], 0, &keys, &values,
                                         &first),
                     2);
    const uint8_t *name = shape_arrow_bytes_at(keys, first, &len);
    assert_memory_equal(name, "trace", 5);
    const uint8_t *value = shape_arrow_bytes_at(values, first, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(value, "t-1", 3);
    assert_false(shape_arrow_is_valid(values, first + 1));
    array.release(&array);
    schema.release(&schema);
    shape_offsets_free(&after);
    shape_source_close(src);
    shape_options_free(o);
    /* only_header: the first header of that name alone (the split's read), none when absent;
     * refused without with_headers */
    const char *only[] = {"empty", "trace", "missing"};
    for (size_t i = 0; i < 3; i++) {
        char text[128];
        snprintf(text, sizeof text, "{\"with_headers\":true,\"only_header\":\"%s\"}", only[i]);
        o = options(text);
        assert_int_equal(shape_kafka_fake_broker_source_open(fb, URI, o, NULL, &src, &err), SHAPE_OK);
        assert_int_equal(shape_source_next(src, &schema, &array, &after, &end, &err), SHAPE_OK);
        assert_int_equal(array.length, 1);
        int n = shape_arrow_map_row(array.children[child_index(&schema, "_shape_headers")], 0, &keys, &values, &first);
        assert_int_equal(n, i < 2 ? 1 : 0);
        if (n) {
            name = shape_arrow_bytes_at(keys, first, &len);
            assert_int_equal(len, strlen(only[i]));
            assert_memory_equal(name, only[i], len);
            assert_int_equal(shape_arrow_is_valid(values, first), i == 1);
        }
        array.release(&array);
        schema.release(&schema);
        shape_offsets_free(&after);
        shape_source_close(src);
        shape_options_free(o);
    }
    o = options("{\"only_header\":\"trace\"}");
    assert_int_not_equal(shape_kafka_fake_broker_source_open(fb, URI, o, NULL, &src, &err), SHAPE_OK);
    assert_non_null(strstr(err.message, "only_header goes with with_headers"));
    shape_options_free(o);
    shape_kafka_fake_broker_free(fb);
}

int main(void)
{
    alarm(120); /* a read that never ends (a missed end of partition) fails instead of hanging */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_chunk_cap_gives_batches_and_positions, teardown),
        cmocka_unit_test_teardown(test_ascending_partitions_never_mixed_positions_of_all, teardown),
        cmocka_unit_test_teardown(test_same_batches_every_run, teardown),
        cmocka_unit_test_teardown(test_resume_from_every_batch_gives_the_rest, teardown),
        cmocka_unit_test_teardown(test_interleave_least_read_first_and_resume, teardown),
        cmocka_unit_test_teardown(test_interleave_caps_the_prefetch_at_a_batch, teardown),
        cmocka_unit_test_teardown(test_interleave_wakes_a_drained_partition, teardown),
        cmocka_unit_test_teardown(test_interleave_wakes_the_fetcher_ahead, teardown),
        cmocka_unit_test_teardown(test_start_offsets_clamped_into_watermarks, teardown),
        cmocka_unit_test_teardown(test_earliest_and_latest, teardown),
        cmocka_unit_test_teardown(test_records_removed_under_the_read_are_counted, teardown),
        cmocka_unit_test_teardown(test_appends_during_read_are_left_to_the_next, teardown),
        cmocka_unit_test_teardown(test_appends_behind_markers_are_left_out, teardown),
        cmocka_unit_test_teardown(test_max_messages, teardown),
        cmocka_unit_test_teardown(test_close_mid_read_releases_every_entry, teardown),
        cmocka_unit_test_teardown(test_one_message_per_poll_does_not_stall, teardown),
        cmocka_unit_test_teardown(test_markers_at_the_end_do_not_hang, teardown),
        cmocka_unit_test_teardown(test_follow_until_idle_timeout, teardown),
        cmocka_unit_test_teardown(test_follow_max_messages, teardown),
        cmocka_unit_test_teardown(test_transport_failure_resumes_without_loss_or_duplicate, teardown),
        cmocka_unit_test_teardown(test_consumer_errors_fatal_or_retried, teardown),
        cmocka_unit_test_teardown(test_metadata_failure, teardown),
        cmocka_unit_test_teardown(test_unknown_topic_or_no_partitions, teardown),
        cmocka_unit_test_teardown(test_options_refused_by_name, teardown),
        cmocka_unit_test_teardown(test_consumer_configuration, teardown),
        cmocka_unit_test_teardown(test_keys_headers_and_missing_timestamps, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

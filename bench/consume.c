/* bench/consume.c — a bare librdkafka consumer: the floor of the consume
 * and profile benchmarks.
 *
 * Why: issues 4, 5 and 19 state their targets as fractions of what
 * librdkafka alone achieves draining the same topic: a consumer that only
 * touches each message (reads its length and first and last bytes) and does
 * nothing else. To be a fair floor it must be able to read the way shape's
 * bounded reads do (src/plugins/kafka/source.c), and it runs with the same
 * glibc malloc thresholds as the `shape` command (it calls the very same
 * src/cli/malloc_tuning.c, linked in by bench/lib.sh), so neither side wins
 * by its heap settings.
 * How: reads the topic's partition count from the metadata, assigns every
 * partition once at its beginning (no group, nothing committed,
 * fetch.wait.max.ms=10 as in shape's bounded reads), then one of:
 *   (default) all partitions: drains the consumer queue in arrival order in
 *     batches of up to 4,096 (rd_kafka_consume_batch_queue, 10 ms time-out:
 *     a batch poll waits for a full batch until its time-out, so a long one
 *     would stall at the end of the topic) until every partition signalled
 *     partition EOF;
 *   -w N: shape's way. Each partition's high watermark is asked first (one
 *     request per partition, as shape does); each partition's queue is taken
 *     out of the consumer queue before the assignment; all but a window of N
 *     partitions are paused (the one drained and the next N-1; -w 0 = none
 *     paused); the partitions are drained one after another in ascending
 *     order from their own queues, each poll asking for at most what is left
 *     before the partition's end (and at most 65,536, shape's batch size)
 *     with a 1 s time-out, so a poll returns as soon as its messages are
 *     there; a partition ends at its high watermark or at its EOF event, and
 *     the window moves on by resuming the next paused partition;
 *   -r: the reference reader DESIGN.md describes: one partition assigned at
 *     a time, each poll asking for a full batch (65,536) with a 1 s
 *     time-out, librdkafka's default fetch.wait.max.ms — to show the stall
 *     the design removed.
 * Prints one key=value line: mode, window, messages, bytes, seconds,
 * msgs_s, rss_kb, check (the harness times the whole process itself too,
 * and checks `messages` against what it produced).
 *
 * Build (bench/lib.sh does this):
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc bench/consume.c src/cli/malloc_tuning.c \
 *      -lrdkafka -o BUILD/bench/consume
 * Usage: consume -b BOOTSTRAP -t TOPIC [-w N | -r]
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h" /* shape_cli_tune_malloc: the malloc settings of the shape command */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void set(rd_kafka_conf_t *conf, const char *k, const char *v)
{
    char es[512];
    if (rd_kafka_conf_set(conf, k, v, es, sizeof es) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "consume: %s\n", es);
        exit(2);
    }
}

static void die(const char *what, rd_kafka_resp_err_t e)
{
    fprintf(stderr, "consume: %s: %s\n", what, rd_kafka_err2str(e));
    exit(2);
}

static unsigned long long touched;

static void touch(const rd_kafka_message_t *m, long *n, unsigned long long *bytes)
{
    (*n)++;
    *bytes += m->len;
    if (m->len) touched += (unsigned char)((const char *)m->payload)[0] + (unsigned char)((const char *)m->payload)[m->len - 1];
}

/* The default: every partition prefetched, the consumer queue in arrival order. */
static void drain_all(rd_kafka_t *rk, const char *topic, int parts, long *n, unsigned long long *bytes)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(parts);
    for (int p = 0; p < parts; p++)
        rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_resp_err_t e = rd_kafka_assign(rk, l);
    if (e) die("assign", e);
    rd_kafka_topic_partition_list_destroy(l);
    /* Batches from the consumer queue: one lock and wake-up per batch
     * instead of per message (kcat's simple consumer does the same). */
    enum { POLL = 4096 };
    rd_kafka_message_t **ms = malloc(POLL * sizeof *ms);
    rd_kafka_queue_t *q = rd_kafka_queue_get_consumer(rk);
    int eofs = 0;
    while (eofs < parts) {
        /* A poll that comes back short is just polled again (see above). */
        ssize_t got = rd_kafka_consume_batch_queue(q, 10, ms, POLL);
        for (ssize_t i = 0; i < got; i++) {
            rd_kafka_message_t *m = ms[i];
            if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) eofs++;
            else if (m->err) {
                fprintf(stderr, "consume: %s\n", rd_kafka_message_errstr(m));
                exit(2);
            } else touch(m, n, bytes);
            rd_kafka_message_destroy(m);
        }
    }
    rd_kafka_queue_destroy(q);
    free(ms);
}

typedef struct {
    int64_t position, end; /* next offset to read; high watermark when the read began */
    int done, fetching;
    rd_kafka_queue_t *q;
} wpart;

static void set_paused(rd_kafka_t *rk, const char *topic, int p, int paused)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, topic, p);
    rd_kafka_resp_err_t e = paused ? rd_kafka_pause_partitions(rk, l) : rd_kafka_resume_partitions(rk, l);
    if (e) die(paused ? "pause" : "resume", e);
    rd_kafka_topic_partition_list_destroy(l);
}

/* shape's way (-w N): per-partition queues in ascending order, a window of
 * N partitions fetched, polls never asking past a partition's end. */
static void drain_window(rd_kafka_t *rk, const char *topic, int parts, int window, long *n,
                         unsigned long long *bytes)
{
    if (window <= 0 || window > parts) window = parts;
    wpart *w = calloc((size_t)parts, sizeof *w);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(parts);
    rd_kafka_topic_partition_list_t *paused = rd_kafka_topic_partition_list_new(parts);
    for (int p = 0; p < parts; p++) {
        int64_t lo = 0, hi = 0;
        rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 10000);
        if (e) die("watermarks", e);
        w[p].position = lo;
        w[p].end = hi;
        w[p].done = lo >= hi;
        /* taken out of the consumer queue BEFORE the assignment, or the
         * first prefetched messages would land where nobody looks */
        w[p].q = rd_kafka_queue_get_partition(rk, topic, p);
        if (!w[p].q) die("partition queue", RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION);
        rd_kafka_queue_forward(w[p].q, NULL);
        if (w[p].done) continue;
        rd_kafka_topic_partition_list_add(l, topic, p)->offset = lo;
    }
    /* the first window fetches from the start, the rest is paused at once */
    int open = 0;
    for (int p = 0; p < parts; p++) {
        if (w[p].done) continue;
        if (open < window) {
            open++;
            w[p].fetching = 1;
        } else {
            rd_kafka_topic_partition_list_add(paused, topic, p);
        }
    }
    rd_kafka_resp_err_t e = rd_kafka_assign(rk, l);
    if (e) die("assign", e);
    if (paused->cnt > 0 && (e = rd_kafka_pause_partitions(rk, paused))) die("pause", e);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_topic_partition_list_destroy(paused);

    enum { BATCH = 65536 };
    rd_kafka_message_t **ms = malloc(BATCH * sizeof *ms);
    for (int cur = 0; cur < parts; cur++) {
        wpart *p = &w[cur];
        /* move the window: the drained partition and the next ones fetch */
        open = 0;
        for (int i = cur; i < parts && open < window; i++) {
            if (w[i].done) continue;
            open++;
            if (!w[i].fetching) {
                set_paused(rk, topic, i, 0);
                w[i].fetching = 1;
            }
        }
        while (!p->done) {
            int64_t want = p->end - p->position;
            if (want > BATCH) want = BATCH;
            ssize_t got = rd_kafka_consume_batch_queue(p->q, 1000, ms, (size_t)want);
            if (got < 0) die("consume", rd_kafka_last_error());
            for (ssize_t i = 0; i < got; i++) {
                rd_kafka_message_t *m = ms[i];
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                    p->done = 1;
                } else if (m->err) {
                    fprintf(stderr, "consume: %s\n", rd_kafka_message_errstr(m));
                    exit(2);
                } else if (m->offset >= p->position && m->offset < p->end) {
                    touch(m, n, bytes);
                    p->position = m->offset + 1;
                }
                rd_kafka_message_destroy(m);
            }
            if (p->position >= p->end) p->done = 1;
        }
    }
    free(ms);
    for (int p = 0; p < parts; p++) rd_kafka_queue_destroy(w[p].q);
    free(w);
}

/* The reference's way (-r): one partition at a time, full-batch polls. */
static void drain_reassign(rd_kafka_t *rk, const char *topic, int parts, long *n, unsigned long long *bytes)
{
    enum { BATCH = 65536 };
    rd_kafka_message_t **ms = malloc(BATCH * sizeof *ms);
    rd_kafka_queue_t *q = rd_kafka_queue_get_consumer(rk);
    for (int p = 0; p < parts; p++) {
        int64_t lo = 0, hi = 0;
        rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 10000);
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_assign(rk, l);
        rd_kafka_topic_partition_list_destroy(l);
        int64_t pos = lo;
        while (pos < hi) {
            ssize_t got = rd_kafka_consume_batch_queue(q, 1000, ms, BATCH);
            for (ssize_t i = 0; i < got; i++) {
                if (!ms[i]->err) {
                    touch(ms[i], n, bytes);
                    pos = ms[i]->offset + 1;
                }
                rd_kafka_message_destroy(ms[i]);
            }
        }
        rd_kafka_assign(rk, NULL);
    }
    rd_kafka_queue_destroy(q);
    free(ms);
}

int main(int argc, char **argv)
{
    shape_cli_tune_malloc(); /* first, as the shape command's main() does */
    const char *bootstrap = NULL, *topic = NULL;
    int reassign = 0, window = -1, opt;
    const char *usage = "usage: consume -b BOOTSTRAP -t TOPIC [-w N | -r]\n";
    while ((opt = getopt(argc, argv, "b:t:w:r")) != -1) {
        switch (opt) {
        case 'b': bootstrap = optarg; break;
        case 't': topic = optarg; break;
        case 'w': window = atoi(optarg); break;
        case 'r': reassign = 1; break;
        default: fputs(usage, stderr); return 2;
        }
    }
    if (!bootstrap || !topic || (reassign && window >= 0) || window < -1) {
        fputs(usage, stderr);
        return 2;
    }
    double t0 = now();
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "group.id", "shape-bench-floor");
    set(conf, "enable.auto.commit", "false");
    set(conf, "enable.partition.eof", "true");
    set(conf, "enable.auto.offset.store", "false"); /* nothing is committed: skip the per-message store */
    /* As shape's bounded reads do (src/plugins/kafka/source.c): the broker's
     * long-poll at the end of a partition (librdkafka's default 500 ms)
     * would otherwise delay the last partition-EOF, and every move of a
     * window, by up to half a second. The reference-style reader (-r) keeps
     * librdkafka's defaults. */
    if (!reassign) set(conf, "fetch.wait.max.ms", "10");
    char es[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, es, sizeof es);
    if (!rk) {
        fprintf(stderr, "consume: %s\n", es);
        return 2;
    }
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR || md->topic_cnt != 1 ||
        md->topics[0].err || md->topics[0].partition_cnt <= 0) {
        fprintf(stderr, "consume: no metadata for topic %s\n", topic);
        return 2;
    }
    int parts = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);

    long n = 0;
    unsigned long long bytes = 0;
    const char *mode = reassign ? "reassign" : window >= 0 ? "window" : "all";
    if (reassign) drain_reassign(rk, topic, parts, &n, &bytes);
    else if (window >= 0) drain_window(rk, topic, parts, window, &n, &bytes);
    else drain_all(rk, topic, parts, &n, &bytes);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    double secs = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("mode=%s window=%d messages=%ld bytes=%llu seconds=%.6f msgs_s=%.0f rss_kb=%ld check=%llu\n", mode,
           window >= 0 ? (window ? window : parts) : parts, n, bytes, secs, (double)n / secs, ru.ru_maxrss, touched);
    return 0;
}

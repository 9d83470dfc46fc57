/* bench/consume.c — a bare librdkafka consumer: the floor of the consume
 * and profile benchmarks.
 *
 * Why: issues 4 and 5 state their targets as fractions of what librdkafka
 * alone achieves draining the same topic: a consumer that only touches each
 * message (reads its length and first and last bytes) and does nothing else.
 * How: reads the topic's partition count from the metadata, assigns every
 * partition once at its beginning (no group, nothing committed), drains the
 * consumer queue in arrival order in batches of up to 4,096
 * (rd_kafka_consume_batch_queue, 10 ms time-out: a batch poll waits for a
 * full batch until its time-out, so a long one would stall at the end of
 * the topic), and stops when every partition has signalled partition EOF;
 * fetch.wait.max.ms is 10 ms, as in shape's bounded reads. With -r it
 * instead behaves like the reference reader DESIGN.md describes: one partition assigned at a time, each poll
 * asking for a full batch (65,536) with a 1 s time-out — to show the stall
 * the design removed. Prints one key=value line: messages, bytes, seconds,
 * msgs_s, rss_kb (the harness times the whole process itself too).
 *
 * Build (bench/run does this):
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L bench/consume.c -lrdkafka -o BUILD/bench/consume
 * Usage: consume -b BOOTSTRAP -t TOPIC [-r]
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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

static unsigned long long touched;

static void touch(const rd_kafka_message_t *m, long *n, unsigned long long *bytes)
{
    (*n)++;
    *bytes += m->len;
    if (m->len) touched += (unsigned char)((const char *)m->payload)[0] + (unsigned char)((const char *)m->payload)[m->len - 1];
}

int main(int argc, char **argv)
{
    const char *bootstrap = NULL, *topic = NULL;
    int reassign = 0, opt;
    while ((opt = getopt(argc, argv, "b:t:r")) != -1) {
        switch (opt) {
        case 'b': bootstrap = optarg; break;
        case 't': topic = optarg; break;
        case 'r': reassign = 1; break;
        default: fprintf(stderr, "usage: consume -b BOOTSTRAP -t TOPIC [-r]\n"); return 2;
        }
    }
    if (!bootstrap || !topic) {
        fprintf(stderr, "usage: consume -b BOOTSTRAP -t TOPIC [-r]\n");
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
     * would otherwise delay the last partition-EOF by up to half a second.
     * The reference-style reader (-r) keeps librdkafka's defaults. */
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
    if (!reassign) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(parts);
        for (int p = 0; p < parts; p++)
            rd_kafka_topic_partition_list_add(l, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_assign(rk, l);
        rd_kafka_topic_partition_list_destroy(l);
        /* Batches from the consumer queue: one lock and wake-up per batch
         * instead of per message (kcat's simple consumer does the same). */
        enum { POLL = 4096 };
        rd_kafka_message_t **ms = malloc(POLL * sizeof *ms);
        rd_kafka_queue_t *q = rd_kafka_queue_get_consumer(rk);
        int eofs = 0;
        while (eofs < parts) {
            /* A batch poll waits until it has POLL messages or its time-out
             * passed, so near the end of the topic (fewer than POLL left) a
             * 1 s time-out stalls the last poll for the whole second; 10 ms
             * bounds that stall, and a poll that comes back short is just
             * polled again. */
            ssize_t got = rd_kafka_consume_batch_queue(q, 10, ms, POLL);
            for (ssize_t i = 0; i < got; i++) {
                rd_kafka_message_t *m = ms[i];
                if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) eofs++;
                else if (m->err) {
                    fprintf(stderr, "consume: %s\n", rd_kafka_message_errstr(m));
                    return 2;
                } else touch(m, &n, &bytes);
                rd_kafka_message_destroy(m);
            }
        }
        rd_kafka_queue_destroy(q);
        free(ms);
    } else {
        /* The reference's way: one partition at a time, full-batch polls. */
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
                        touch(ms[i], &n, &bytes);
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
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    double secs = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("messages=%ld bytes=%llu seconds=%.6f msgs_s=%.0f rss_kb=%ld check=%llu\n", n, bytes, secs,
           (double)n / secs, ru.ru_maxrss, touched);
    return 0;
}

/* broker_watch.c — `shape broker` announces the messages its partitions drop.
 *
 * Why: librdkafka 2.0.2's mock cluster keeps only about the last 5 MB of
 * each partition and discards older messages without a word; a reader then
 * silently gets fewer messages than were produced (a 21,750-event retail
 * stream in one partition loses its start). The broker must say so.
 * How: a thread with a client of its own asks the cluster every 500 ms for
 * its topics (Metadata) and each partition's earliest offset (ListOffsets,
 * through rd_kafka_offsets_for_times with RD_KAFKA_OFFSET_BEGINNING). A
 * partition of the mock starts at 0 and its earliest offset only moves when
 * it drops messages, so a rise is a drop. An episode is a run of rises with
 * no 2 s pause; when it ends (or the broker stops) one stderr line per
 * partition says how many messages went, which offsets, and why. A query
 * that fails (a broker taken down by --control) is skipped. The watcher's
 * requests are Metadata and ListOffsets: errors pushed on those APIs with
 * the control channel's `fail` may be answered to it instead of a client.
 */
#include "broker_watch.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "shape/clock.h"

#define POLL_MS 500
#define QUIET_S 2.0

typedef struct part_state {
    char *topic;
    int32_t partition;
    int64_t low;      /* earliest offset last seen (0 at creation) */
    int64_t ep_from;  /* earliest offset when the open episode began */
    int in_episode;
    double last_rise; /* clock seconds of the last rise */
} part_state;

struct shape_kafka_drop_watch {
    rd_kafka_t *rk;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    part_state *parts;
    size_t n, cap;
};

static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk, (void)level, (void)fac, (void)buf;
}

static part_state *find_part(shape_kafka_drop_watch *w, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->parts[i].partition == partition && strcmp(w->parts[i].topic, topic) == 0) return &w->parts[i];
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        part_state *p = realloc(w->parts, cap * sizeof *p);
        if (!p) return NULL;
        w->parts = p;
        w->cap = cap;
    }
    part_state *p = &w->parts[w->n];
    memset(p, 0, sizeof *p);
    if (!(p->topic = strdup(topic))) return NULL;
    p->partition = partition;
    w->n++;
    return p;
}

static void report(const part_state *p)
{
    int64_t n = p->low - p->ep_from;
    fprintf(stderr,
            "shape broker: warning: topic %s partition %d dropped %lld message%s (offsets %lld to %lld): the "
            "embedded broker keeps only about the last 5 MB of each partition (librdkafka's mock cluster); "
            "read sooner, use more partitions, or use a real Kafka for larger streams\n",
            p->topic, (int)p->partition, (long long)n, n == 1 ? "" : "s", (long long)p->ep_from,
            (long long)(p->low - 1));
    fflush(stderr);
}

/* One look at every partition. */
static void scan(shape_kafka_drop_watch *w)
{
    const struct rd_kafka_metadata *md = NULL;
    if (rd_kafka_metadata(w->rk, 1, NULL, &md, POLL_MS * 2) != RD_KAFKA_RESP_ERR_NO_ERROR || !md) return;
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(16);
    for (int t = 0; t < md->topic_cnt; t++) {
        const struct rd_kafka_metadata_topic *mt = &md->topics[t];
        if (mt->err || !mt->topic || strncmp(mt->topic, "__", 2) == 0) continue;
        for (int p = 0; p < mt->partition_cnt; p++)
            rd_kafka_topic_partition_list_add(list, mt->topic, mt->partitions[p].id)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    rd_kafka_metadata_destroy(md);
    if (list->cnt > 0 && rd_kafka_offsets_for_times(w->rk, list, POLL_MS * 2) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        double now = shape_clock_now();
        for (int i = 0; i < list->cnt; i++) {
            const rd_kafka_topic_partition_t *tp = &list->elems[i];
            if (tp->err || tp->offset < 0) continue;
            part_state *p = find_part(w, tp->topic, tp->partition);
            if (!p) continue;
            if (tp->offset > p->low) {
                if (!p->in_episode) {
                    p->in_episode = 1;
                    p->ep_from = p->low;
                }
                p->low = tp->offset;
                p->last_rise = now;
            }
        }
    }
    rd_kafka_topic_partition_list_destroy(list);
    double now = shape_clock_now();
    for (size_t i = 0; i < w->n; i++) {
        part_state *p = &w->parts[i];
        if (p->in_episode && now - p->last_rise >= QUIET_S) {
            report(p);
            p->in_episode = 0;
        }
    }
}

static void *watch_main(void *arg)
{
    shape_kafka_drop_watch *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        pthread_mutex_unlock(&w->mu);
        scan(w);
        pthread_mutex_lock(&w->mu);
        if (w->stop) break;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += POLL_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &until);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int shape_kafka_drop_watch_start(const char *bootstraps, shape_kafka_drop_watch **out, shape_err *err)
{
    *out = NULL;
    shape_kafka_drop_watch *w = calloc(1, sizeof *w);
    if (!w) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, quiet_log);
    if (rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps, errstr, sizeof errstr) != RD_KAFKA_CONF_OK ||
        !(w->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr))) {
        rd_kafka_conf_destroy(conf);
        free(w);
        return shape_err_set(err, SHAPE_EINTERNAL, "cannot start the broker's drop watcher: %s", errstr);
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        rd_kafka_destroy(w->rk);
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        free(w);
        return shape_err_set(err, SHAPE_EINTERNAL, "cannot start the broker's drop watcher thread");
    }
    *out = w;
    return SHAPE_OK;
}

void shape_kafka_drop_watch_stop(shape_kafka_drop_watch *w)
{
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    for (size_t i = 0; i < w->n; i++) {
        if (w->parts[i].in_episode) report(&w->parts[i]);
        free(w->parts[i].topic);
    }
    free(w->parts);
    rd_kafka_destroy(w->rk);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

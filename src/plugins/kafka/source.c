/* source.c — the kafka:// stream source: exact self-kept offsets, bounded
 * reads that are deterministic and do not stall, following reads.
 *
 * Why: read a topic as Arrow batches where each batch is paired with the
 * position of every partition just after it, so a checkpoint of that
 * position resumes exactly — and nothing is ever committed to the broker.
 *
 * How:
 *   - open: parse the URI, check the options (reference names, defaults
 *     and messages; `partitions` "0,3-5" restricts the read to those
 *     partitions, for splitting a topic across workers), build a consumer (user `config` first, then the URI's
 *     servers, enable.auto.commit=false, group.id defaulting to
 *     shape-stream-profile, partition EOF events on), read the topic's
 *     partitions and watermarks, and place each partition: a start position
 *     clamped into [low, high], else low (earliest) or high (latest). A
 *     bounded read ends every partition at the high watermark taken now.
 *   - every partition is assigned once, at its start offset; a bounded read
 *     keeps all but a window of partitions paused (the one drained and the
 *     next ones; option prefetch_partitions, default 8, 0 = all), so memory
 *     holds a window's prefetch whatever the partition count (fetch_window).
 *   - bounded: each partition's messages are drained from its own queue
 *     (rd_kafka_queue_get_partition, unforwarded) in ascending partition
 *     order. A poll never asks for more than remains before the partition's
 *     end, so it returns as soon as the messages are there instead of
 *     waiting out its time-out; the end is seen from offsets (position >=
 *     end) or from the partition-EOF event (transaction markers and
 *     compacted gaps leave no message at the last offsets). Messages at or
 *     past the end (produced after the read began) are dropped uncounted.
 *   - following: the consumer queue, all partitions in arrival order; each
 *     poll's messages are grouped by partition and handed out one group per
 *     batch. Ends after idle_timeout without messages or max_messages.
 *   - errors: transient client errors (transport, all brokers down, timed
 *     out, resolve, or retriable) are SHAPE_ECONN with text "kafka: ...",
 *     so the caller can reconnect from its last position; others are fatal.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "kafka_conf.h"
#include "kafka_plugin.h"
#include "kafka_uri.h"
#include "shape/credref.h"
#include "shape/source.h"

#define METADATA_TIMEOUT_MS 10000
#define POLL_TIMEOUT_MS 1000
#define FOLLOW_SLICE_MS 200
#define DEFAULT_BATCH 65536
#define DEFAULT_GROUP "shape-stream-profile"
/* Bounded reads fetch this many partitions ahead (see fetch_window): the
 * embedded broker answers each partition's fetch slowly, so a window of 8
 * keeps ~0.8x of the all-partitions speed at a fraction of the memory. */
#define DEFAULT_WINDOW 8
/* Bounded reads: the broker's long-poll for a fetch (fetch.wait.max.ms,
 * librdkafka's default 500 ms) when the fetched partitions are at their end.
 * A partition resumed while such a fetch is in flight waits for it, so each
 * move of the window cost up to 500 ms; a short wait lets it join the next
 * fetch at once. A `config` value of fetch.wait.max.ms wins. */
#define BOUNDED_FETCH_WAIT_MS "10"

typedef struct part {
    int32_t id;
    int64_t position; /* next offset to read */
    int64_t end;      /* bounded: high watermark when the read began */
    int done;
    int fetching;            /* bounded: not paused (inside the prefetch window) */
    rd_kafka_queue_t *queue; /* bounded: the partition's own queue */
} part;

typedef struct kafka_source {
    shape_source base;
    shape_kafka_uri uri;
    rd_kafka_t *rk;
    rd_kafka_queue_t *consumer_queue; /* following reads */
    part *parts;
    size_t n_parts;
    size_t cursor; /* bounded: the partition being drained */
    size_t window; /* bounded: partitions fetched ahead, the drained one included */
    int bounded;
    int64_t batch_size;
    int64_t remaining; /* max_messages left, or -1 */
    double idle_timeout; /* seconds, or < 0 for none */
    double last_message; /* monotonic seconds */

    rd_kafka_message_t **polled; /* messages of the current poll */
    size_t n_polled, next_polled;
    rd_kafka_message_t **group; /* messages of the batch being decoded */
    shape_message *msgs;
    shape_header *headers;
    size_t headers_cap;

    shape_decoder *dec;
    char fatal[512]; /* error reported by librdkafka's error callback */
    int fatal_transient;
} kafka_source;

static const char *const known_options[] = {
    "start_at", "stop_at_end", "idle_timeout", "max_messages", "batch_size", "config", "schema",
    "on_error", "event_time_field", "event_time_unit", "with_offsets", "with_key", "with_headers",
    "with_timestamp", "nested", "partitions", "prefetch_partitions", NULL};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int transient(rd_kafka_resp_err_t e)
{
    return e == RD_KAFKA_RESP_ERR__TRANSPORT || e == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
           e == RD_KAFKA_RESP_ERR__TIMED_OUT || e == RD_KAFKA_RESP_ERR__RESOLVE ||
           e == RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE || e == RD_KAFKA_RESP_ERR__DESTROY ||
           e == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT || e == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
           e == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE || e == RD_KAFKA_RESP_ERR_BROKER_NOT_AVAILABLE;
}

/* A consumer error event that ends the read. The rest (a fetch that timed
 * out, a leader that moved, a broker connection lost) are reports of things
 * librdkafka retries by itself: the read waits for it; a cluster that stays
 * unreachable is caught by the error callback's "all brokers down". */
static int ends_read(rd_kafka_resp_err_t e)
{
    switch (e) {
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR__SSL:
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
        return 1;
    default:
        return 0;
    }
}

static int kafka_error(rd_kafka_resp_err_t e, const char *text, shape_err *err)
{
    return shape_err_set(err, transient(e) ? SHAPE_ECONN : SHAPE_EINVAL, "kafka: %s",
                         text && *text ? text : rd_kafka_err2str(e));
}

static void on_error(rd_kafka_t *rk, int e, const char *reason, void *opaque)
{
    (void)rk;
    kafka_source *ks = opaque;
    if (e == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || rd_kafka_fatal_error(rk, NULL, 0)) {
        snprintf(ks->fatal, sizeof ks->fatal, "%s", reason);
        ks->fatal_transient = e == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
    }
}

/* librdkafka logs go to stderr only at warning level and above. */
static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    if (level <= 4) fprintf(stderr, "shape: kafka: %s: %s\n", fac, buf);
}

static void free_polled(kafka_source *ks)
{
    for (size_t i = ks->next_polled; i < ks->n_polled; i++) rd_kafka_message_destroy(ks->polled[i]);
    ks->n_polled = ks->next_polled = 0;
}

static void ks_close(shape_source *src)
{
    kafka_source *ks = (kafka_source *)src;
    if (!ks) return;
    free_polled(ks);
    for (size_t i = 0; i < ks->n_parts; i++)
        if (ks->parts[i].queue) rd_kafka_queue_destroy(ks->parts[i].queue);
    if (ks->consumer_queue) rd_kafka_queue_destroy(ks->consumer_queue);
    if (ks->rk) {
        rd_kafka_assign(ks->rk, NULL);
        rd_kafka_consumer_close(ks->rk);
        rd_kafka_destroy(ks->rk);
    }
    shape_kafka_uri_free(&ks->uri);
    shape_decoder_free(ks->dec);
    free(ks->parts);
    free(ks->polled);
    free(ks->group);
    free(ks->msgs);
    free(ks->headers);
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

/* ---- decoding a group of messages of one partition ----------------------- */

static int decode_group(kafka_source *ks, size_t n, struct ArrowSchema *schema, struct ArrowArray *array,
                        shape_err *err)
{
    size_t n_headers = 0;
    for (size_t i = 0; i < n; i++) {
        rd_kafka_headers_t *hdrs = NULL;
        if (rd_kafka_message_headers(ks->group[i], &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs)
            n_headers += rd_kafka_header_cnt(hdrs);
    }
    if (n_headers > ks->headers_cap) {
        shape_header *grown = realloc(ks->headers, n_headers * sizeof *grown);
        if (!grown) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        ks->headers = grown;
        ks->headers_cap = n_headers;
    }
    size_t h = 0;
    for (size_t i = 0; i < n; i++) {
        const rd_kafka_message_t *m = ks->group[i];
        shape_message *out = &ks->msgs[i];
        memset(out, 0, sizeof *out);
        out->partition = m->partition;
        out->offset = m->offset;
        out->value = m->payload;
        out->value_len = m->len;
        out->key = m->key;
        out->key_len = m->key_len;
        rd_kafka_timestamp_type_t tstype;
        int64_t ts = rd_kafka_message_timestamp(m, &tstype);
        if (ts >= 0 && tstype != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE) {
            out->has_timestamp = 1;
            out->timestamp_us = ts * 1000;
        }
        rd_kafka_headers_t *hdrs = NULL;
        if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) {
            out->headers = ks->headers + h;
            const char *name;
            const void *value;
            size_t size;
            for (size_t k = 0; rd_kafka_header_get_all(hdrs, k, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; k++) {
                ks->headers[h++] = (shape_header){name, strlen(name), value, size};
                out->n_headers++;
            }
        }
    }
    return shape_decoder_decode(ks->dec, ks->msgs, n, schema, array, err);
}

static void destroy_group(kafka_source *ks, size_t n)
{
    for (size_t i = 0; i < n; i++) rd_kafka_message_destroy(ks->group[i]);
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
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(l, ks->uri.topic, p->id);
        rd_kafka_resume_partitions(ks->rk, l);
        rd_kafka_topic_partition_list_destroy(l);
        p->fetching = 1;
    }
}

static int bounded_next(kafka_source *ks, struct ArrowSchema *schema, struct ArrowArray *array,
                        shape_offsets *after, int *end, shape_err *err)
{
    for (;;) {
        while (ks->cursor < ks->n_parts && ks->parts[ks->cursor].done) ks->cursor++;
        if (ks->cursor == ks->n_parts || ks->remaining == 0) {
            *end = 1;
            return SHAPE_OK;
        }
        part *p = &ks->parts[ks->cursor];
        fetch_window(ks);
        int64_t want = p->end - p->position;
        if (want > ks->batch_size) want = ks->batch_size;
        if (ks->remaining >= 0 && want > ks->remaining) want = ks->remaining;
        ssize_t got = rd_kafka_consume_batch_queue(p->queue, POLL_TIMEOUT_MS, ks->group, (size_t)want);
        if (got < 0) return kafka_error(rd_kafka_last_error(), NULL, err);
        size_t keep = 0;
        rd_kafka_resp_err_t failure = RD_KAFKA_RESP_ERR_NO_ERROR;
        char failure_text[256] = "";
        for (ssize_t i = 0; i < got; i++) {
            rd_kafka_message_t *m = ks->group[i];
            if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                if (m->offset > p->position) p->position = m->offset < p->end ? m->offset : p->end;
                p->done = 1;
                rd_kafka_message_destroy(m);
            } else if (m->err) {
                if (ends_read(m->err) && !failure) {
                    failure = m->err;
                    snprintf(failure_text, sizeof failure_text, "%s", rd_kafka_message_errstr(m));
                }
                rd_kafka_message_destroy(m);
            } else if (m->offset >= p->end || p->done || m->offset < p->position) {
                rd_kafka_message_destroy(m); /* past the end mark, or a replayed fetch */
            } else {
                ks->group[keep++] = m;
                p->position = m->offset + 1;
            }
        }
        if (p->position >= p->end) p->done = 1;
        if (failure) {
            destroy_group(ks, keep);
            return kafka_error(failure, failure_text, err);
        }
        if (keep == 0) {
            if (p->done) continue;
            if (got == 0) rd_kafka_poll(ks->rk, 0); /* an error callback may be waiting */
            if (got == 0 && ks->fatal[0])
                return shape_err_set(err, ks->fatal_transient ? SHAPE_ECONN : SHAPE_EINVAL, "kafka: %s", ks->fatal);
            if (got == 0) {
                /* Nothing within the poll: the position may still have moved
                 * past markers or gaps without a message to show for it. */
                rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
                rd_kafka_topic_partition_list_add(l, ks->uri.topic, p->id);
                if (rd_kafka_position(ks->rk, l) == RD_KAFKA_RESP_ERR_NO_ERROR && l->elems[0].offset > p->position)
                    p->position = l->elems[0].offset < p->end ? l->elems[0].offset : p->end;
                rd_kafka_topic_partition_list_destroy(l);
                if (p->position >= p->end) p->done = 1;
            }
            continue;
        }
        if (ks->remaining > 0) ks->remaining -= (int64_t)keep;
        int rc = decode_group(ks, keep, schema, array, err);
        destroy_group(ks, keep);
        if (rc != SHAPE_OK) return rc;
        return positions(ks, after, err);
    }
}

/* ---- following reads ----------------------------------------------------- */

static int follow_next(kafka_source *ks, struct ArrowSchema *schema, struct ArrowArray *array,
                       shape_offsets *after, int *end, shape_err *err)
{
    if (ks->remaining == 0) {
        *end = 1;
        return SHAPE_OK;
    }
    if (ks->next_polled == ks->n_polled) {
        free_polled(ks);
        size_t want = (size_t)ks->batch_size;
        if (ks->remaining > 0 && (int64_t)want > ks->remaining) want = (size_t)ks->remaining;
        ssize_t got = rd_kafka_consume_batch_queue(ks->consumer_queue, FOLLOW_SLICE_MS, ks->polled, want);
        if (got < 0) return kafka_error(rd_kafka_last_error(), NULL, err);
        size_t keep = 0;
        for (ssize_t i = 0; i < got; i++) {
            rd_kafka_message_t *m = ks->polled[i];
            if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
                rd_kafka_message_destroy(m);
            } else if (m->err && !ends_read(m->err)) {
                rd_kafka_message_destroy(m); /* librdkafka retries it */
            } else if (m->err) {
                int rc = kafka_error(m->err, rd_kafka_message_errstr(m), err);
                for (ssize_t k = i; k < got; k++) rd_kafka_message_destroy(ks->polled[k]);
                ks->n_polled = keep;
                free_polled(ks);
                return rc;
            } else {
                ks->polled[keep++] = m;
            }
        }
        ks->n_polled = keep;
        if (keep > 0) {
            ks->last_message = now_seconds();
            if (ks->remaining > 0) ks->remaining -= (int64_t)keep;
        } else {
            rd_kafka_poll(ks->rk, 0);
            if (ks->fatal[0])
                return shape_err_set(err, ks->fatal_transient ? SHAPE_ECONN : SHAPE_EINVAL, "kafka: %s", ks->fatal);
            if (ks->idle_timeout >= 0 && now_seconds() - ks->last_message >= ks->idle_timeout) *end = 1;
            return SHAPE_OK; /* no batch: lets the caller look at signals */
        }
    }
    /* One partition's messages of this poll, in arrival order. */
    int32_t partition = ks->polled[ks->next_polled]->partition;
    size_t n = 0;
    for (size_t i = ks->next_polled; i < ks->n_polled; i++) {
        if (ks->polled[i]->partition == partition) ks->group[n++] = ks->polled[i];
        else ks->polled[ks->next_polled + (i - ks->next_polled) - n] = ks->polled[i];
    }
    /* The rest keep their order after the group was taken out. */
    ks->n_polled -= n;
    part *p = find_part(ks, partition);
    if (p && n) p->position = ks->group[n - 1]->offset + 1;
    int rc = decode_group(ks, n, schema, array, err);
    destroy_group(ks, n);
    if (rc != SHAPE_OK) return rc;
    return positions(ks, after, err);
}

static int ks_next(shape_source *src, struct ArrowSchema *schema, struct ArrowArray *array, shape_offsets *after,
                   int *end, shape_err *err)
{
    kafka_source *ks = (kafka_source *)src;
    array->release = NULL;
    *end = 0;
    rd_kafka_poll(ks->rk, 0); /* serve the error and log callbacks */
    return ks->bounded ? bounded_next(ks, schema, array, after, end, err)
                       : follow_next(ks, schema, array, after, end, err);
}

static const shape_decode_stats *ks_stats(const shape_source *src)
{
    return shape_decoder_stats(((const kafka_source *)src)->dec);
}

static const shape_source_vtable kafka_vtable = {ks_next, ks_stats, ks_close};

/* ---- opening --------------------------------------------------------------- */

/* Names of settings that hold a secret: librdkafka's refusal quotes the
 * value, so theirs is never echoed (as the emitter does). */
static int secret_name(const char *name)
{
    return strstr(name, "password") || strstr(name, "secret") || strstr(name, "key") || strstr(name, "token") ||
           strstr(name, "jaas");
}

/* One consumer setting. A credential reference (env://, file://, kv://;
 * shape/credref.h) is resolved first, as for the emitter's settings, and
 * neither it nor a secret-named setting's value appears in a refusal. */
static int set_property(const char *name, const char *value, void *ud, shape_err *err)
{
    char *secret = NULL;
    if (shape_credref_is_reference(value)) {
        if (shape_credref_resolve(value, &secret, err) != SHAPE_OK)
            return shape_err_prefix(err, "config property '%.64s'", name);
        value = secret;
    }
    int rc = shape_kafka_conf_set_redacted(ud, "config property", name, value, secret != NULL || secret_name(name), err);
    shape_secret_free(secret);
    return rc;
}

static int find_property(const char *name, const char *value, void *ud, shape_err *err)
{
    (void)value;
    (void)err;
    if (strcmp(name, ((const char **)ud)[0]) == 0) ((const char **)ud)[1] = name;
    return SHAPE_OK;
}

/* Whether the user's `config` gives the setting `name`. */
static int config_sets(const shape_options *o, const char *name)
{
    const char *look[2] = {name, NULL};
    if (shape_options_foreach_property(o, "config", find_property, look, NULL) != SHAPE_OK) return 0;
    return look[1] != NULL;
}

static int make_consumer(kafka_source *ks, const shape_options *o, shape_err *err)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    int rc = SHAPE_OK;
    if (shape_options_has(o, "config")) rc = shape_options_foreach_property(o, "config", set_property, conf, err);
    char group[256];
    size_t group_len = sizeof group;
    if (rc == SHAPE_OK && rd_kafka_conf_get(conf, "group.id", group, &group_len) != RD_KAFKA_CONF_OK)
        group[0] = '\0';
    if (rc == SHAPE_OK) rc = set_property("bootstrap.servers", ks->uri.servers, conf, err);
    if (rc == SHAPE_OK) rc = set_property("enable.auto.commit", "false", conf, err);
    if (rc == SHAPE_OK) rc = set_property("enable.auto.offset.store", "false", conf, err);
    if (rc == SHAPE_OK) rc = set_property("enable.partition.eof", "true", conf, err);
    if (rc == SHAPE_OK && !group[0]) rc = set_property("group.id", DEFAULT_GROUP, conf, err);
    if (rc == SHAPE_OK && ks->bounded && !(shape_options_has(o, "config") && config_sets(o, "fetch.wait.max.ms")))
        rc = set_property("fetch.wait.max.ms", BOUNDED_FETCH_WAIT_MS, conf, err);
    if (rc != SHAPE_OK) {
        rd_kafka_conf_destroy(conf);
        return rc;
    }
    rd_kafka_conf_set_opaque(conf, ks);
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_conf_set_log_cb(conf, on_log);
    char errstr[512];
    ks->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
    if (!ks->rk) {
        rd_kafka_conf_destroy(conf);
        return shape_kafka_new_refused(o, "kafka", errstr, SHAPE_EINVAL, err);
    }
    return SHAPE_OK;
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
    rd_kafka_topic_t *topic = rd_kafka_topic_new(ks->rk, ks->uri.topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(ks->rk, 0, topic, &md, METADATA_TIMEOUT_MS);
    rd_kafka_topic_destroy(topic);
    if (e) {
        if (ks->fatal[0]) return shape_err_set(err, SHAPE_ECONN, "kafka: %s", ks->fatal);
        return kafka_error(e, NULL, err);
    }
    int rc = SHAPE_OK;
    const struct rd_kafka_metadata_topic *t = md->topic_cnt == 1 ? &md->topics[0] : NULL;
    if (!t || t->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || t->partition_cnt == 0) {
        rc = shape_err_set(err, SHAPE_EINVAL, "kafka: topic '%s' does not exist (or has no partitions)", ks->uri.topic);
    } else if (t->err) {
        rc = kafka_error(t->err, NULL, err);
    } else {
        ks->parts = calloc((size_t)t->partition_cnt, sizeof *ks->parts);
        if (!ks->parts) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        for (int i = 0; rc == SHAPE_OK && i < t->partition_cnt; i++)
            if (wanted_partition(only, n_only, t->partitions[i].id)) ks->parts[ks->n_parts++].id = t->partitions[i].id;
        for (size_t i = 0; rc == SHAPE_OK && only && i < n_only; i++) {
            int found = 0;
            for (int k = 0; k < t->partition_cnt; k++) found |= t->partitions[k].id == only[i];
            if (!found)
                rc = shape_err_set(err, SHAPE_EINVAL, "kafka: topic '%s' has no partition %d (it has %d)", ks->uri.topic,
                                   (int)only[i], t->partition_cnt);
        }
    }
    rd_kafka_metadata_destroy(md);
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
        e = rd_kafka_query_watermark_offsets(ks->rk, ks->uri.topic, p->id, &low, &high, METADATA_TIMEOUT_MS);
        if (e) return kafka_error(e, NULL, err);
        int64_t wanted;
        if (start && shape_offsets_get(start, p->id, &wanted))
            p->position = wanted < low ? low : wanted > high ? high : wanted;
        else
            p->position = latest ? high : low;
        p->end = ks->bounded ? high : INT64_MAX;
        p->done = ks->bounded && p->position >= p->end;
    }
    return SHAPE_OK;
}

static int assign_all(kafka_source *ks, shape_err *err)
{
    /* Bounded: take each partition's queue out of the consumer queue BEFORE
     * assigning, or the first prefetched messages would land in the
     * consumer queue where the partition's reader never looks. */
    for (size_t i = 0; ks->bounded && i < ks->n_parts; i++) {
        if (ks->parts[i].done) continue;
        ks->parts[i].queue = rd_kafka_queue_get_partition(ks->rk, ks->uri.topic, ks->parts[i].id);
        if (!ks->parts[i].queue) return shape_err_set(err, SHAPE_EINTERNAL, "kafka: no queue for partition %d", ks->parts[i].id);
        rd_kafka_queue_forward(ks->parts[i].queue, NULL);
    }
    if (!ks->bounded) {
        ks->consumer_queue = rd_kafka_queue_get_consumer(ks->rk);
        if (!ks->consumer_queue) return shape_err_set(err, SHAPE_EINTERNAL, "kafka: no consumer queue");
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)ks->n_parts);
    rd_kafka_topic_partition_list_t *later = rd_kafka_topic_partition_list_new((int)ks->n_parts);
    size_t open = 0;
    for (size_t i = 0; i < ks->n_parts; i++) {
        if (ks->parts[i].done) continue;
        rd_kafka_topic_partition_list_add(l, ks->uri.topic, ks->parts[i].id)->offset = ks->parts[i].position;
        /* Bounded: the first window fetches from the start, the others are
         * paused (see fetch_window). Pausing and resuming the first window
         * right after the assignment could leave its fetch waiting for the
         * broker thread's next wake-up, up to a second. */
        if (ks->bounded && open < ks->window) {
            open++;
            ks->parts[i].fetching = 1;
        } else if (ks->bounded) {
            rd_kafka_topic_partition_list_add(later, ks->uri.topic, ks->parts[i].id);
        }
    }
    rd_kafka_resp_err_t e = rd_kafka_assign(ks->rk, l);
    if (!e && later->cnt > 0) e = rd_kafka_pause_partitions(ks->rk, later);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_topic_partition_list_destroy(later);
    if (e) return kafka_error(e, NULL, err);
    return SHAPE_OK;
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
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(o, "max_messages", -1, &ks->remaining, err));
    if (shape_options_has(o, "max_messages") && ks->remaining < 1)
        return shape_err_set(err, SHAPE_EINVAL, "max_messages must be at least 1");
    int64_t window;
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(o, "prefetch_partitions", DEFAULT_WINDOW, &window, err));
    if (window < 0) return shape_err_set(err, SHAPE_EINVAL, "prefetch_partitions must be >= 0 (0: all)");
    ks->window = window == 0 ? SIZE_MAX : (size_t)window;
    SHAPE_RETURN_NOT_OK(shape_options_get_double(o, "idle_timeout", -1, &ks->idle_timeout, err));
    if (shape_options_has(o, "idle_timeout") && !(ks->idle_timeout >= 0))
        return shape_err_set(err, SHAPE_EINVAL, "idle_timeout must be a number of seconds >= 0");
    return SHAPE_OK;
}

int shape_kafka_source_open(const char *uri, const shape_options *options, const shape_offsets *start,
                            shape_source **out, shape_err *err)
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
    if (rc == SHAPE_OK) rc = make_consumer(ks, o, err);
    shape_options_free(empty);
    if (rc == SHAPE_OK) rc = discover(ks, start, latest, only, n_only, err);
    free(only);
    if (rc == SHAPE_OK) {
        size_t cap = (size_t)ks->batch_size;
        ks->polled = malloc(cap * sizeof *ks->polled);
        ks->group = malloc(cap * sizeof *ks->group);
        ks->msgs = malloc(cap * sizeof *ks->msgs);
        if (!ks->polled || !ks->group || !ks->msgs) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    if (rc == SHAPE_OK) rc = assign_all(ks, err);
    if (rc != SHAPE_OK) {
        ks_close(&ks->base);
        return rc;
    }
    ks->last_message = now_seconds();
    *out = &ks->base;
    return SHAPE_OK;
}

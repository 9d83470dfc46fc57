/* consumer_client_rdkafka.c — the consumer seam (consumer_client.h) over
 * librdkafka, and shape_kafka_source_open: the kafka:// source on it.
 *
 * Why: source.c keeps the source's rules and knows nothing of librdkafka;
 * this file is the only place the source's client calls live, so the rules
 * can also run over the in-memory FakeBroker.
 *
 * How:
 *   - set() collects properties in an rd_kafka_conf_t; start() creates the
 *     consumer with error and log callbacks (an "all brokers down" or fatal
 *     error is kept and reported by failure()).
 *   - assign(per_partition): each partition's queue is taken out of the
 *     consumer queue BEFORE assigning (or the first prefetched messages
 *     would land where the partition's reader never looks), then the
 *     partitions are assigned once and the paused ones paused. Otherwise
 *     the consumer queue serves all partitions in arrival order.
 *   - fetch(): one rd_kafka_consume_batch_queue into a scratch array kept
 *     between calls, then each message is described in place (shape_message
 *     plus event) — no allocation per message. Header views, when headers
 *     are asked for (all, or only the first of one name: only_header), are
 *     collected in one array per fetch, which every event with headers
 *     shares (a count of them beside it, so it lives until the last is
 *     released, whatever fetches come between). release() drops the
 *     events' shares and destroys the messages.
 *   - wake(): a ListOffsets request that wakes librdkafka's broker thread,
 *     so a drained partition of a capped read is fetched again at once;
 *     sent by a task of the consumer's own (shape/task.h), so the reader
 *     does not wait for its answer.
 *   - classification: partition EOF is an end event; consumer errors that
 *     end a read (authentication, TLS, fatal, unknown topic, authorisation,
 *     offset out of range) are fatal; every other consumer error is one
 *     librdkafka retries by itself; a failed call is SHAPE_ECONN when
 *     transient (transport, all brokers down, timed out, resolve, ...).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "consumer_client.h"
#include "kafka_conf.h"
#include "kafka_metadata.h"
#include "kafka_plugin.h"
#include "record_headers.h"
#include "shape/bytes.h"
#include "shape/task.h"

#define METADATA_TIMEOUT_MS 10000

typedef struct rdkafka_consumer {
    shape_kafka_consumer base;
    rd_kafka_conf_t *conf; /* until start() */
    rd_kafka_t *rk;
    char *topic;
    rd_kafka_queue_t *consumer_queue; /* fetches of all partitions */
    int32_t *ids;                     /* per-partition fetches: assigned ids, ascending */
    rd_kafka_queue_t **queues;        /* ... and their queues */
    size_t n_queues;
    rd_kafka_message_t **scratch; /* the messages of the last fetch */
    size_t scratch_cap;
    shape_kafka_header_views views; /* the last fetch's header views, before they go to its block */
    size_t *first_view;             /* per message of the fetch: its first view in views */
    size_t only_len;                /* strlen(base.only_header), at start() */
    shape_kafka_header_cache header_cache; /* the last record's header bytes and views */
    char fatal[512]; /* error reported by librdkafka's error callback */
    int fatal_transient;
    char **values; /* every value set (secrets included, wiped when freed), to keep out of messages */
    size_t n_values;
    int raw_headers; /* headers from the record's bytes: 0 not yet known, 1 yes, -1 no (message_headers) */
    int raw_required; /* SHAPE_KAFKA_HEADERS=record */
    /* wake(): its task (made by the first wake), and the partitions it is
     * to send requests for, in the order asked; waking: a job is started
     * and has not found the list empty yet. wake_mu guards the three. */
    shape_task *waker;
    pthread_mutex_t wake_mu;
    int32_t *wanted;
    size_t n_wanted, cap_wanted;
    int waking;
} rdkafka_consumer;

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
    rdkafka_consumer *k = opaque;
    if (e == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || rd_kafka_fatal_error(rk, NULL, 0)) {
        snprintf(k->fatal, sizeof k->fatal, "%s", reason);
        k->fatal_transient = e == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
    }
}

/* librdkafka's own log lines ("FAIL: [thrd:...]: Connect to ... failed",
 * "OFFSET: ... offset reset", one per broker and attempt) say what shape
 * says itself in one line of its own (a reconnect's warning, a gap's
 * warning, the error that ends the read): they are shown only for debugging,
 * with SHAPE_DEBUG set (non-empty, not 0), as "shape: debug: kafka: ...". */
static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    if (level <= 6 && shape_kafka_debug()) fprintf(stderr, "shape: debug: kafka: %s: %s\n", fac, buf);
}

/* errstr gets librdkafka's reason with the value redacted (kafka_conf.h). */
static int rk_set(shape_kafka_consumer *c, const char *name, const char *value, char *errstr, size_t errstr_size)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    char **grown = realloc(k->values, (k->n_values + 1) * sizeof *grown);
    if (grown) {
        k->values = grown;
        k->values[k->n_values] = strdup(value);
        if (k->values[k->n_values]) k->n_values++;
    }
    char reason[512] = "";
    if (rd_kafka_conf_set(k->conf, name, value, reason, sizeof reason) == RD_KAFKA_CONF_OK) return 0;
    shape_kafka_conf_redact(k->conf, reason, name, value, errstr, errstr_size);
    return -1;
}

static int rk_start(shape_kafka_consumer *c, shape_err *err)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    k->only_len = c->only_header ? strlen(c->only_header) : 0;
    rd_kafka_conf_set_opaque(k->conf, k);
    rd_kafka_conf_set_error_cb(k->conf, on_error);
    rd_kafka_conf_set_log_cb(k->conf, on_log);
    char errstr[512];
    k->rk = rd_kafka_new(RD_KAFKA_CONSUMER, k->conf, errstr, sizeof errstr);
    if (!k->rk)
        return shape_kafka_new_refused((const char *const *)k->values, k->n_values, "kafka", errstr, SHAPE_EINVAL, err);
    k->conf = NULL; /* owned by the handle now */
    return SHAPE_OK;
}

/* From the cluster's list of topics (kafka_metadata.h): a topic asked for
 * by name would be created by a cluster that creates topics on first use
 * (shape broker does), and a missing topic would read as an empty one. */
static int rk_partitions(shape_kafka_consumer *c, const char *topic, int32_t **ids, size_t *n, shape_err *err)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    *ids = NULL;
    *n = 0;
    shape_kafka_topic_info info;
    rd_kafka_resp_err_t e =
        shape_kafka_topic_lookup(k->rk, topic, SHAPE_KAFKA_LOOKUP_LIST, METADATA_TIMEOUT_MS, c->stop, &info);
    if (e == RD_KAFKA_RESP_ERR__NOENT) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (e == RD_KAFKA_RESP_ERR__INTR)
        return shape_err_set(err, SHAPE_ECONN, "kafka: stopped on request before the cluster answered");
    if (e) {
        if (k->fatal[0]) return shape_err_set(err, SHAPE_ECONN, "kafka: %s", k->fatal);
        return kafka_error(e, NULL, err);
    }
    if (!info.found && info.topic_err) return kafka_error(info.topic_err, NULL, err);
    /* not found: no partitions, the source says the topic does not exist */
    *ids = info.ids;
    *n = info.n;
    return SHAPE_OK;
}

static int rk_watermarks(shape_kafka_consumer *c, const char *topic, int32_t partition, int64_t *low,
                         int64_t *high, shape_err *err)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(k->rk, topic, partition, low, high, METADATA_TIMEOUT_MS);
    return e ? kafka_error(e, NULL, err) : SHAPE_OK;
}

static rd_kafka_queue_t *partition_queue(const rdkafka_consumer *k, int32_t partition)
{
    size_t lo = 0, hi = k->n_queues;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (k->ids[mid] < partition) lo = mid + 1;
        else hi = mid;
    }
    return lo < k->n_queues && k->ids[lo] == partition ? k->queues[lo] : NULL;
}

static int rk_assign(shape_kafka_consumer *c, const char *topic, const shape_kafka_assignment *parts, size_t n,
                     int per_partition, shape_err *err)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    k->topic = strdup(topic);
    if (!k->topic) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (per_partition) {
        k->ids = calloc(n ? n : 1, sizeof *k->ids);
        k->queues = calloc(n ? n : 1, sizeof *k->queues);
        if (!k->ids || !k->queues) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            rd_kafka_queue_t *q = rd_kafka_queue_get_partition(k->rk, topic, parts[i].partition);
            if (!q) return shape_err_set(err, SHAPE_EINTERNAL, "kafka: no queue for partition %d", parts[i].partition);
            rd_kafka_queue_forward(q, NULL);
            k->ids[k->n_queues] = parts[i].partition;
            k->queues[k->n_queues++] = q;
        }
    } else {
        k->consumer_queue = rd_kafka_queue_get_consumer(k->rk);
        if (!k->consumer_queue) return shape_err_set(err, SHAPE_EINTERNAL, "kafka: no consumer queue");
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)n);
    rd_kafka_topic_partition_list_t *paused = rd_kafka_topic_partition_list_new((int)n);
    for (size_t i = 0; i < n; i++) {
        rd_kafka_topic_partition_list_add(l, topic, parts[i].partition)->offset = parts[i].offset;
        if (parts[i].paused) rd_kafka_topic_partition_list_add(paused, topic, parts[i].partition);
    }
    rd_kafka_resp_err_t e = rd_kafka_assign(k->rk, l);
    if (!e && paused->cnt > 0) e = rd_kafka_pause_partitions(k->rk, paused);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_topic_partition_list_destroy(paused);
    return e ? kafka_error(e, NULL, err) : SHAPE_OK;
}

static void rk_set_paused(shape_kafka_consumer *c, int32_t partition, int paused)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, k->topic, partition);
    if (paused) rd_kafka_pause_partitions(k->rk, l);
    else rd_kafka_resume_partitions(k->rk, l);
    rd_kafka_topic_partition_list_destroy(l);
}

/* ---- headers from the record's bytes --------------------------------------
 * Why: rd_kafka_message_headers parses every header into a new list, ~3,500
 * instructions a message with freeing them, when a split wants one name
 * (record_headers.h); librdkafka 2.0.2 has no public call that reads the
 * record's header bytes.
 * How: in 2.0.2 (librdkafka's rdkafka_msg.h) a fetched message is the first
 * member of its rd_kafka_msg_t, which keeps the record's unparsed header
 * bytes (rkm_u.consumer.binhdrs); msg_2_0_2 mirrors that layout up to them.
 * They are read only when librdkafka is exactly 2.0.2 (rd_kafka_version(),
 * at run time: a rebuilt or upgraded library takes the public call), and
 * for a message only when they start right after its value (Kafka's v2
 * record: value, then headers — a check that the mirror is right for this
 * message). The first message is read both ways; if the views differ, the
 * public call serves the whole read. SHAPE_KAFKA_HEADERS in the environment
 * (for tests): "public" forces the public call; "record" requires the
 * record's bytes (a read whose first message cannot use them fails), so a
 * test knows which way it read. Bytes that are not headers,
 * a message without a value, or headers already parsed take the public
 * call too. */
#define RAW_HEADERS_VERSION 0x020002ff

typedef struct msg_2_0_2 {
    rd_kafka_message_t rkmessage;
    void *link_next, *link_prev; /* TAILQ_ENTRY */
    int flags;
    rd_kafka_timestamp_type_t tstype;
    int64_t timestamp;
    rd_kafka_headers_t *headers; /* parsed, if asked for before */
    int status;
    int32_t broker_id;
    struct {
        int32_t len;
        const void *data;
    } binhdrs; /* rkm_u.consumer.binhdrs */
} msg_2_0_2;

/* The record's header bytes of m, or NULL when they cannot be read here. */
static const void *record_header_bytes(const rd_kafka_message_t *m, size_t *len)
{
    const msg_2_0_2 *x = (const msg_2_0_2 *)m;
    if (!m->payload || x->headers || x->binhdrs.len < 0 || x->binhdrs.data != (const char *)m->payload + m->len)
        return NULL;
    *len = (size_t)x->binhdrs.len;
    return x->binhdrs.data;
}

/* librdkafka's parse of m's headers, appended to *views: all, or (only not
 * NULL) the first named only[0..only_len). */
static int public_headers(rd_kafka_message_t *m, const char *only, size_t only_len, shape_kafka_header_views *views,
                          size_t *added)
{
    rd_kafka_headers_t *hdrs = NULL;
    size_t count;
    *added = 0;
    if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR || !hdrs ||
        (count = rd_kafka_header_cnt(hdrs)) == 0)
        return SHAPE_OK;
    if (shape_kafka_header_views_reserve(views, only ? 1 : count) != SHAPE_OK) return SHAPE_ENOMEM;
    const char *name;
    const void *value;
    size_t size, n = 0;
    for (size_t i = 0; i < count && rd_kafka_header_get_all(hdrs, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; i++) {
        size_t len = strlen(name);
        if (only && (len != only_len || !shape_bytes_equal(name, only, len))) continue;
        views->v[views->n + n++] = (shape_header){name, len, value, size};
        if (only) break;
    }
    views->n += n;
    *added = n;
    return SHAPE_OK;
}

static int same_headers(const shape_header *a, size_t na, const shape_header *b, size_t nb)
{
    if (na != nb) return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].name_len != b[i].name_len || memcmp(a[i].name, b[i].name, a[i].name_len) != 0 ||
            !a[i].value != !b[i].value || a[i].value_len != b[i].value_len ||
            (a[i].value_len && memcmp(a[i].value, b[i].value, a[i].value_len) != 0))
            return 0;
    return 1;
}

/* m's headers appended to k->views (*added of them): from the record's bytes
 * when they can be read (above; the same bytes as the last record's take its
 * views again, record_headers.h), else librdkafka's parse. */
static int message_headers(rdkafka_consumer *k, rd_kafka_message_t *m, size_t *added)
{
    shape_kafka_header_views *v = &k->views;
    const char *only = k->base.only_header;
    size_t only_len = k->only_len, len = 0;
    *added = 0;
    const void *bytes = k->raw_headers >= 0 ? record_header_bytes(m, &len) : NULL;
    if (bytes && k->raw_headers == 1) {
        int rc = shape_kafka_record_headers_cached(&k->header_cache, bytes, len, only, only_len, v, added);
        if (rc != SHAPE_EINVAL) return rc;
    } else if (bytes) { /* the first message: every header read both ways */
        size_t base = v->n, n_raw, n_pub;
        int rc = shape_kafka_record_headers(bytes, len, NULL, 0, v, &n_raw);
        if (rc == SHAPE_ENOMEM) return rc;
        if (rc == SHAPE_OK) {
            rc = public_headers(m, NULL, 0, v, &n_pub);
            if (rc == SHAPE_OK) k->raw_headers = same_headers(v->v + base, n_raw, v->v + base + n_raw, n_pub) ? 1 : -1;
            v->n = base;
            if (rc != SHAPE_OK) return rc;
            if (k->raw_headers < 0 && k->raw_required) return SHAPE_EINTERNAL;
            return public_headers(m, only, only_len, v, added); /* librdkafka keeps its list: no second parse */
        }
    }
    /* required: only a message without a value may take the public call */
    if (k->raw_required && (k->raw_headers < 0 || m->payload)) return SHAPE_EINTERNAL;
    return public_headers(m, only, only_len, v, added);
}

/* One fetch's header views (the array they were collected in, handed
 * over), shared by its events with headers: the last one released frees it
 * (release may run on another thread than fetch). */
typedef struct views_block {
    atomic_size_t users;
    shape_header *v;
} views_block;

/* Describe one fetched librdkafka message in place; its header views (when
 * asked for) appended to k->views, pointed to once the fetch is described
 * (out->headers stays NULL until then). SHAPE_ENOMEM if that fails. */
static int describe(rdkafka_consumer *k, rd_kafka_message_t *m, shape_message *out, shape_kafka_event *ev)
{
    memset(out, 0, sizeof *out);
    out->partition = m->partition;
    out->offset = m->offset;
    ev->handle = m;
    ev->owned = NULL;
    ev->text = NULL;
    ev->action = SHAPE_KAFKA_ERROR_RETRIED;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        ev->kind = SHAPE_KAFKA_EVENT_EOF;
        return SHAPE_OK;
    }
    if (m->err) {
        ev->kind = SHAPE_KAFKA_EVENT_ERROR;
        ev->action = !ends_read(m->err) ? SHAPE_KAFKA_ERROR_RETRIED
                     : transient(m->err) ? SHAPE_KAFKA_ERROR_RECONNECT
                                         : SHAPE_KAFKA_ERROR_FATAL;
        const char *text = rd_kafka_message_errstr(m);
        ev->text = text && *text ? text : rd_kafka_err2str(m->err);
        return SHAPE_OK;
    }
    ev->kind = SHAPE_KAFKA_EVENT_MESSAGE;
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
    if (k->base.want_headers) SHAPE_RETURN_NOT_OK(message_headers(k, m, &out->n_headers));
    return SHAPE_OK;
}

/* The views of the fetch just described (k->views) to one block its events
 * share; the next fetch collects into a new array of the same size. */
static int hand_out_views(rdkafka_consumer *k, shape_message *msgs, shape_kafka_event *events, size_t n)
{
    if (k->views.n == 0) return SHAPE_OK;
    views_block *b = malloc(sizeof *b);
    if (!b) return SHAPE_ENOMEM;
    b->v = k->views.v;
    k->views.v = NULL;
    k->views.n = 0;
    size_t users = 0;
    for (size_t i = 0; i < n; i++)
        if (msgs[i].n_headers) {
            msgs[i].headers = b->v + k->first_view[i];
            events[i].owned = b;
            users++;
        }
    atomic_init(&b->users, users);
    return SHAPE_OK;
}

static int rk_fetch(shape_kafka_consumer *c, int32_t partition, int timeout_ms, shape_message *msgs,
                    shape_kafka_event *events, size_t max, size_t *got, shape_err *err)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    *got = 0;
    if (max > k->scratch_cap) {
        rd_kafka_message_t **grown = realloc(k->scratch, max * sizeof *grown);
        if (!grown) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        k->scratch = grown;
        size_t *first = realloc(k->first_view, max * sizeof *first);
        if (!first) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        k->first_view = first;
        k->scratch_cap = max;
    }
    rd_kafka_queue_t *q = partition == SHAPE_KAFKA_ALL_PARTITIONS ? k->consumer_queue : partition_queue(k, partition);
    if (!q) return shape_err_set(err, SHAPE_EINTERNAL, "kafka: partition %d is not assigned", (int)partition);
    ssize_t n = rd_kafka_consume_batch_queue(q, timeout_ms, k->scratch, max);
    if (n < 0) return kafka_error(rd_kafka_last_error(), NULL, err);
    k->views.n = 0;
    int rc = SHAPE_OK;
    for (ssize_t i = 0; rc == SHAPE_OK && i < n; i++) {
        k->first_view[i] = k->views.n;
        rc = describe(k, k->scratch[i], &msgs[i], &events[i]);
    }
    if (rc == SHAPE_OK) rc = hand_out_views(k, msgs, events, (size_t)n);
    if (rc != SHAPE_OK) {
        for (ssize_t j = 0; j < n; j++) rd_kafka_message_destroy(k->scratch[j]);
        if (rc == SHAPE_ENOMEM) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for message headers");
        return shape_err_set(err, SHAPE_EINTERNAL,
                             "kafka: SHAPE_KAFKA_HEADERS=record, but librdkafka %s's messages do not show "
                             "their record's header bytes; unset it",
                             rd_kafka_version_str());
    }
    *got = (size_t)n;
    return SHAPE_OK;
}

/* Thread-safe (librdkafka's message destroy is, and a views block's count
 * is atomic): the source may release a batch on its decoding thread. */
static void rk_release(shape_kafka_consumer *c, shape_kafka_event *events, size_t n)
{
    (void)c;
    for (size_t i = 0; i < n; i++) {
        views_block *b = events[i].owned;
        if (b && atomic_fetch_sub_explicit(&b->users, 1, memory_order_acq_rel) == 1) {
            free(b->v);
            free(b);
        }
        rd_kafka_message_destroy(events[i].handle);
    }
}

static int rk_position(shape_kafka_consumer *c, int32_t partition, int64_t *next_offset)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, k->topic, partition);
    int known = rd_kafka_position(k->rk, l) == RD_KAFKA_RESP_ERR_NO_ERROR && l->elems[0].offset >= 0;
    if (known) *next_offset = l->elems[0].offset;
    rd_kafka_topic_partition_list_destroy(l);
    return known;
}

static int rk_low_watermark(shape_kafka_consumer *c, int32_t partition, int64_t *low)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    int64_t lo = -1, hi = -1;
    if (rd_kafka_get_watermark_offsets(k->rk, k->topic, partition, &lo, &hi) != RD_KAFKA_RESP_ERR_NO_ERROR || lo < 0)
        return 0;
    *low = lo;
    return 1;
}

/* librdkafka 2.0 decides which partitions to fetch on its broker thread,
 * each time that thread wakes: a fetch reply, an op queued to it, or its idle
 * time-out (about a second). A partition whose queue holds
 * queued.min.messages is left out, and when the reader drains it nothing
 * wakes the thread: with every queue full (an interleaving read caps them at
 * a batch, source.c) the reader waited up to a second at a drained
 * partition, several times a read. A ListOffsets request to the partition's
 * leader is an op on that broker's thread: it wakes, and its next round
 * fetches every partition below the cap. Short time-out: on a cluster that
 * is down the request fails fast and the fetch reports the failure. (A
 * pause/resume would wake it too, but librdkafka 2.0 resumes at its fetch
 * position and skips what was queued: the bug fixed in 2.1.0.) */
#define WAKE_TIMEOUT_MS 100
static void wake_now(rdkafka_consumer *k, int32_t partition)
{
    int64_t low, high;
    if (k->topic) (void)rd_kafka_query_watermark_offsets(k->rk, k->topic, partition, &low, &high, WAKE_TIMEOUT_MS);
}

/* The request is a round trip that the broker thread answers between fetch
 * replies — a millisecond or more — and an interleaving read wakes every
 * 16 batches: on the reading thread those waits added up to a fifth of a
 * windowed read. So wake() only lists the partition (each once until its
 * request goes out) and a task (shape/task.h) sends the requests, one at a
 * time, until the list is empty; a wake finding no job running starts one.
 * Where no task or list room can be had, wake() waits itself. */
static void wake_job(void *arg)
{
    rdkafka_consumer *k = arg;
    for (;;) {
        pthread_mutex_lock(&k->wake_mu);
        if (k->n_wanted == 0) {
            k->waking = 0;
            pthread_mutex_unlock(&k->wake_mu);
            return;
        }
        int32_t partition = k->wanted[0];
        memmove(k->wanted, k->wanted + 1, --k->n_wanted * sizeof *k->wanted);
        pthread_mutex_unlock(&k->wake_mu);
        wake_now(k, partition);
    }
}

/* Under wake_mu: partition on the wanted list (already, or added now). */
static int want_wake(rdkafka_consumer *k, int32_t partition)
{
    for (size_t i = 0; i < k->n_wanted; i++)
        if (k->wanted[i] == partition) return 1;
    if (k->n_wanted == k->cap_wanted) {
        size_t cap = k->cap_wanted ? 2 * k->cap_wanted : 16;
        int32_t *grown = realloc(k->wanted, cap * sizeof *grown);
        if (!grown) return 0;
        k->wanted = grown;
        k->cap_wanted = cap;
    }
    k->wanted[k->n_wanted++] = partition;
    return 1;
}

static void rk_wake(shape_kafka_consumer *c, int32_t partition)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    if (!k->waker) {
        shape_err err;
        if (shape_task_new(&k->waker, &err) == SHAPE_OK) pthread_mutex_init(&k->wake_mu, NULL);
        else k->waker = NULL;
    }
    int listed = 0, start = 0;
    if (k->waker) {
        pthread_mutex_lock(&k->wake_mu);
        listed = want_wake(k, partition);
        if (listed && !k->waking) k->waking = start = 1;
        pthread_mutex_unlock(&k->wake_mu);
    }
    if (!listed) wake_now(k, partition);
    else if (start) shape_task_start(k->waker, wake_job, k); /* the last job is returning: a short wait at most */
}

static void rk_serve(shape_kafka_consumer *c)
{
    rd_kafka_poll(((rdkafka_consumer *)c)->rk, 0);
}

static int rk_failure(shape_kafka_consumer *c, shape_err *err)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    if (!k->fatal[0]) return SHAPE_OK;
    return shape_err_set(err, k->fatal_transient ? SHAPE_ECONN : SHAPE_EINVAL, "kafka: %s", k->fatal);
}

static void rk_destroy(shape_kafka_consumer *c)
{
    rdkafka_consumer *k = (rdkafka_consumer *)c;
    if (k->waker) {
        shape_task_free(k->waker); /* its request in flight, if any, ends first */
        pthread_mutex_destroy(&k->wake_mu);
    }
    free(k->wanted);
    for (size_t i = 0; i < k->n_queues; i++) rd_kafka_queue_destroy(k->queues[i]);
    if (k->consumer_queue) rd_kafka_queue_destroy(k->consumer_queue);
    if (k->rk) {
        rd_kafka_assign(k->rk, NULL);
        rd_kafka_consumer_close(k->rk);
        rd_kafka_destroy(k->rk);
    }
    if (k->conf) rd_kafka_conf_destroy(k->conf);
    free(k->topic);
    free(k->ids);
    free(k->queues);
    free(k->scratch);
    free(k->first_view);
    free(k->views.v);
    for (size_t i = 0; i < k->n_values; i++) {
        memset(k->values[i], 0, strlen(k->values[i]));
        free(k->values[i]);
    }
    free(k->values);
    free(k);
}

static const shape_kafka_consumer_ops rdkafka_ops = {
    rk_set,      rk_start,         rk_partitions, rk_watermarks, rk_assign,  rk_set_paused, rk_fetch,
    rk_release,  rk_position,      rk_low_watermark, rk_serve,   rk_failure, rk_destroy,
    rk_wake,
};

static int rdkafka_consumer_new(void *ud, shape_kafka_consumer **out, shape_err *err)
{
    (void)ud;
    rdkafka_consumer *k = calloc(1, sizeof *k);
    if (!k) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    const char *way = getenv("SHAPE_KAFKA_HEADERS");
    k->raw_headers = rd_kafka_version() != RAW_HEADERS_VERSION || (way && strcmp(way, "public") == 0) ? -1 : 0;
    k->raw_required = way && strcmp(way, "record") == 0;
    k->base.ops = &rdkafka_ops;
    k->conf = rd_kafka_conf_new();
    if (!k->conf) {
        free(k);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    *out = &k->base;
    return SHAPE_OK;
}

int shape_kafka_source_open(const char *uri, const shape_options *options, const shape_offsets *start,
                            shape_source **out, shape_err *err)
{
    return shape_kafka_source_open_with(rdkafka_consumer_new, NULL, uri, options, start, NULL, out, err);
}

int shape_kafka_source_open_stoppable(const char *uri, const shape_options *options, const shape_offsets *start,
                                      const volatile sig_atomic_t *stop, shape_source **out, shape_err *err)
{
    return shape_kafka_source_open_with(rdkafka_consumer_new, NULL, uri, options, start, stop, out, err);
}

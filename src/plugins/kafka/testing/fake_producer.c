/* fake_producer.c — FakeProducer, the in-memory producer client (see
 * fake_producer.h for the knobs and their rules).
 *
 * Why: tests of the kafka:// emitter and of the emit runtime over it need a
 * producer whose faults come on demand and whose deliveries can be read
 * back exactly, with no broker and no time spent waiting.
 * How: each client keeps a queue of copied messages with their opaques;
 * poll() settles the whole queue at once (failures, rejections, the log) and
 * calls the emitter's delivery callback per message, as librdkafka's poll
 * does. Copies are made at produce time because the fake, unlike a real
 * client, keeps what it delivered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emitter.h"
#include "testing/fake_producer.h"

typedef struct queued {
    shape_kafka_fake_record rec;
    shape_emit_message *opaque;
} queued;

typedef struct fake_client {
    shape_kafka_producer base; /* first: the seam's view */
    shape_kafka_fake_producer_store *store;
    shape_kafka_delivery_fn on_delivery;
    void *report_ctx;
    queued *queue;
    size_t nqueue, cap;
    int purged;
} fake_client;

/* ---- records ---------------------------------------------------------------------- */

static unsigned char *copy_bytes(const void *p, size_t n)
{
    unsigned char *c = malloc(n ? n : 1);
    if (c && n) memcpy(c, p, n);
    return c;
}

static void record_free(shape_kafka_fake_record *r)
{
    free(r->topic);
    free(r->key);
    free(r->value);
    for (size_t i = 0; i < r->header_count; i++) {
        free(r->headers[i].name);
        free(r->headers[i].value);
    }
    free(r->headers);
    memset(r, 0, sizeof *r);
}

/* FNV-1a of the key: a stable stand-in for the client's key partitioner. */
static int32_t key_partition(const shape_kafka_fake_producer_store *s, const void *key, size_t len)
{
    int32_t parts = s->partitions > 0 ? s->partitions : 1;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ ((const unsigned char *)key)[i]) * 16777619u;
    return (int32_t)(h % (uint32_t)parts);
}

static int record_copy(shape_kafka_fake_record *r, const shape_kafka_fake_producer_store *s, const char *topic,
                       const shape_emit_message *m)
{
    memset(r, 0, sizeof *r);
    r->topic = strdup(topic);
    r->partition = m->partition >= 0 ? m->partition : key_partition(s, m->key, m->key ? m->key_len : 0);
    if (m->key) {
        r->key = copy_bytes(m->key, m->key_len);
        r->key_len = m->key_len;
    }
    r->value = copy_bytes(m->value, m->value_len);
    r->value_len = m->value_len;
    r->timestamp_ms = m->timestamp_ms;
    if (m->header_count) r->headers = calloc(m->header_count, sizeof *r->headers);
    int ok = r->topic && (!m->key || r->key) && r->value && (!m->header_count || r->headers);
    for (size_t i = 0; ok && i < m->header_count; i++) {
        r->headers[i].name = strdup(m->headers[i].name);
        r->headers[i].value = copy_bytes(m->headers[i].value, m->headers[i].value_len);
        r->headers[i].value_len = m->headers[i].value_len;
        r->header_count = i + 1;
        ok = r->headers[i].name && r->headers[i].value;
    }
    if (!ok) record_free(r);
    return ok ? 0 : -1;
}

const char *shape_kafka_fake_record_key(const shape_kafka_fake_record *r, char *buf, size_t size)
{
    size_t n = r->key_len < size - 1 ? r->key_len : size - 1;
    if (r->key) memcpy(buf, r->key, n);
    buf[r->key ? n : 0] = 0;
    return buf;
}

static void note_rejected(shape_kafka_fake_producer_store *s, const void *key, size_t key_len)
{
    if (s->nrejected == s->rejected_cap) {
        size_t cap = s->rejected_cap ? s->rejected_cap * 2 : 16;
        char **r = realloc(s->rejected, cap * sizeof *r);
        if (!r) return;
        s->rejected = r;
        s->rejected_cap = cap;
    }
    char *k = malloc(key_len + 1);
    if (!k) return;
    if (key_len) memcpy(k, key, key_len);
    k[key_len] = 0;
    s->rejected[s->nrejected++] = k;
}

/* ---- the client ---------------------------------------------------------------------- */

static int fake_produce(shape_kafka_producer *p, const char *topic, shape_emit_message *m, int copy_value,
                        const char **error, int *retriable)
{
    (void)copy_value; /* (every message is copied into the queue) */
    fake_client *c = (fake_client *)p;
    shape_kafka_fake_producer_store *s = c->store;
    if (s->full > 0) {
        s->hits++;
        return SHAPE_KAFKA_PRODUCE_QUEUE_FULL;
    }
    if (s->refuse_at_produce > 0) {
        s->refuse_at_produce--;
        note_rejected(s, m->key, m->key ? m->key_len : 0);
        *error = "_MSG_SIZE_TOO_LARGE";
        *retriable = 0;
        return SHAPE_KAFKA_PRODUCE_FAILED;
    }
    if (c->nqueue == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        queued *q = realloc(c->queue, cap * sizeof *q);
        if (!q) goto no_memory;
        c->queue = q;
        c->cap = cap;
    }
    if (record_copy(&c->queue[c->nqueue].rec, s, topic, m) != 0) goto no_memory;
    c->queue[c->nqueue++].opaque = m;
    s->produced++;
    return SHAPE_KAFKA_PRODUCE_QUEUED;
no_memory:
    *error = "_NO_BUFFER_SPACE";
    *retriable = 1;
    return SHAPE_KAFKA_PRODUCE_FAILED;
}

static void append_log(shape_kafka_fake_producer_store *s, shape_kafka_fake_record *r)
{
    if (s->log_len == s->log_cap) {
        size_t cap = s->log_cap ? s->log_cap * 2 : 256;
        shape_kafka_fake_record *log = realloc(s->log, cap * sizeof *log);
        if (!log) {
            record_free(r);
            return;
        }
        s->log = log;
        s->log_cap = cap;
    }
    s->log[s->log_len++] = *r; /* the log takes the copies */
    memset(r, 0, sizeof *r);
}

static void fake_poll(shape_kafka_producer *p, int timeout_ms)
{
    (void)timeout_ms;
    fake_client *c = (fake_client *)p;
    shape_kafka_fake_producer_store *s = c->store;
    if (s->full > 0) s->full--;
    size_t n = c->nqueue;
    if (n == 0 || (s->stall && !c->purged)) return;
    c->nqueue = 0; /* reports may re-enter produce: settle a queue of our own */
    queued *q = c->queue;
    c->queue = NULL;
    c->cap = 0;
    size_t cut = n;
    if (c->purged) cut = 0;
    else if (s->failures > 0) {
        s->failures--;
        cut = n / 2;
    }
    const char *late = c->purged ? "_PURGE_QUEUE" : "_MSG_TIMED_OUT";
    for (size_t i = 0; i < n; i++) {
        shape_kafka_fake_record *r = &q[i].rec;
        if (i >= cut) {
            s->timed_out++;
            c->on_delivery(c->report_ctx, q[i].opaque, late, 1);
            record_free(r);
        } else if (s->reject > 0) {
            s->reject--;
            note_rejected(s, r->key, r->key_len);
            c->on_delivery(c->report_ctx, q[i].opaque, "MSG_SIZE_TOO_LARGE", 0);
            record_free(r);
        } else {
            append_log(s, r);
            c->on_delivery(c->report_ctx, q[i].opaque, NULL, 0);
        }
    }
    free(q);
    c->purged = 0;
}

static void fake_purge(shape_kafka_producer *p)
{
    fake_client *c = (fake_client *)p;
    if (c->nqueue) c->purged = 1;
}

static int fake_fatal_error(shape_kafka_producer *p, char *reason, size_t size)
{
    fake_client *c = (fake_client *)p;
    if (c->store->fatal <= 0) return 0;
    c->store->fatal--;
    snprintf(reason, size, "fake: fatal idempotent producer error");
    return 1;
}

static int fake_connect(shape_kafka_producer *p, const char *topic, int timeout_ms,
                        const volatile sig_atomic_t *stop, int32_t *partitions, char *reason, size_t size)
{
    (void)topic, (void)timeout_ms, (void)stop; /* answers at once: nothing to cut short */
    fake_client *c = (fake_client *)p;
    if (c->store->unreachable) {
        snprintf(reason, size, "Local: Broker transport failure");
        return 1;
    }
    *partitions = c->store->topic_missing ? 0 : c->store->partitions > 0 ? c->store->partitions : 1;
    return 0;
}

static void fake_close(shape_kafka_producer *p, int flush_timeout_ms)
{
    fake_client *c = (fake_client *)p;
    if (flush_timeout_ms > 0) fake_poll(p, flush_timeout_ms);
    /* what is still queued is dropped, as a destroyed client's queue is */
    for (size_t i = 0; i < c->nqueue; i++) record_free(&c->queue[i].rec);
    free(c->queue);
    c->store->open_clients--;
    free(c);
}

static const shape_kafka_producer_ops fake_ops = {
    .produce = fake_produce,
    .poll = fake_poll,
    .purge = fake_purge,
    .fatal_error = fake_fatal_error,
    .connect = fake_connect,
    .close = fake_close,
};

/* ---- the store and its factory ----------------------------------------------------------- */

static int fake_check(void *ctx, const shape_kafka_producer_config *cfg, shape_err *err)
{
    (void)ctx, (void)cfg, (void)err;
    return SHAPE_OK; /* the fake takes any setting; the real client's check is librdkafka's */
}

static int fake_create(void *ctx, const shape_kafka_producer_config *cfg, shape_kafka_delivery_fn on_delivery,
                       void *report_ctx, shape_kafka_producer **out, shape_err *err)
{
    shape_kafka_fake_producer_store *s = ctx;
    *out = NULL;
    fake_client *c = calloc(1, sizeof *c);
    if (!c) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    shape_kafka_producer_config_free(&s->last_config);
    if (shape_kafka_producer_config_copy(&s->last_config, cfg, err) != SHAPE_OK) {
        free(c);
        return err->code;
    }
    c->base.ops = &fake_ops;
    c->store = s;
    c->on_delivery = on_delivery;
    c->report_ctx = report_ctx;
    s->producers++;
    s->open_clients++;
    *out = &c->base;
    return SHAPE_OK;
}

shape_kafka_producer_factory shape_kafka_fake_producer_factory(shape_kafka_fake_producer_store *s)
{
    return (shape_kafka_producer_factory){.name = "fake", .ctx = s, .check = fake_check, .create = fake_create};
}

int shape_kafka_fake_producer_store_new(shape_kafka_fake_producer_store **out, shape_err *err)
{
    shape_kafka_fake_producer_store *s = calloc(1, sizeof *s);
    *out = s;
    if (!s) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    s->partitions = 1;
    return SHAPE_OK;
}

void shape_kafka_fake_producer_store_clear(shape_kafka_fake_producer_store *s)
{
    for (size_t i = 0; i < s->log_len; i++) record_free(&s->log[i]);
    s->log_len = 0;
    for (size_t i = 0; i < s->nrejected; i++) free(s->rejected[i]);
    s->nrejected = 0;
    s->hits = s->produced = s->timed_out = 0;
    s->producers = 0;
}

void shape_kafka_fake_producer_store_free(shape_kafka_fake_producer_store *s)
{
    if (!s) return;
    shape_kafka_fake_producer_store_clear(s);
    free(s->log);
    free(s->rejected);
    shape_kafka_producer_config_free(&s->last_config);
    free(s);
}

/* ---- the kafka:// emitter over the fake ---------------------------------------------------- */

int shape_kafka_fake_emitter_open(shape_kafka_fake_producer_store *s, shape_kafka_producer_factory *factory,
                                  const char *uri, const shape_options *options, shape_emitter **out,
                                  shape_err *err)
{
    *factory = shape_kafka_fake_producer_factory(s);
    return shape_kafka_emitter_open_with(uri, options, factory, NULL, out, err);
}

const shape_emitter_type *shape_kafka_fake_emitter_type(void) { return &shape_kafka_emitter_calls; }

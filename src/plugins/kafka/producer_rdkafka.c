/* producer_rdkafka.c — the producer client of the kafka:// emitter, on
 * librdkafka, and the emitter type the plugin registers.
 *
 * Why: emitter.c holds the emitter's rules and speaks only the seam of
 * producer_client.h; this file is the one place that turns those calls into
 * librdkafka's, so the rules can be tested over FakeProducer and the client
 * swapped without touching them.
 * How: one rd_kafka_t producer per client. Settings are applied with
 * rd_kafka_conf_set in order (a refusal names the setting; librdkafka's
 * reason is shown only for a value that cannot be a secret). produce is
 * rd_kafka_producev with the message as the opaque (no copy; the header list
 * is the only allocation, owned by librdkafka once queued) and the topic as
 * a handle made once (by name, producev would look the topic up, take its
 * lock and drop its reference again for every message); each delivery
 * report goes to the emitter's callback with the error's name. librdkafka's
 * own log lines are shown only with SHAPE_DEBUG: what matters reaches the
 * user through outcomes and errors, in one line.
 * The embedded broker (`shape broker`, any librdkafka mock cluster: its
 * cluster id starts "mockCluster") keeps only about the last 5 MB of each
 * partition; on one, the client adds up the bytes acknowledged per partition
 * and warns once, on stderr, when a partition's share passes that window:
 * from then on the broker is dropping the oldest events of this stream
 * (unless the emitter warned before sending that the stream will not fit:
 * mock_window). A topic the mock creates on connect is asked for again
 * until its partitions are known (the emitter's checks need the count).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "shape/credref.h"

#include "emitter.h"
#include "kafka_conf.h"
#include "kafka_metadata.h"
#include "kafka_plugin.h"
#include "producer_client.h"

/* librdkafka 2.0.2's mock keeps about this many bytes per partition. */
#define MOCK_PARTITION_BYTES (5 * 1024 * 1024)
#define MOCK_TRACKED 256 /* partitions counted (the first seen) */

typedef struct partition_bytes {
    const rd_kafka_topic_t *rkt;
    int32_t partition;
    int64_t bytes;
} partition_bytes;

typedef struct rdkafka_client {
    shape_kafka_producer base; /* first: the seam's view */
    rd_kafka_t *rk;
    rd_kafka_topic_t *rkt; /* the last topic produced to, and its name */
    char *rkt_name;
    shape_kafka_delivery_fn on_delivery;
    void *report_ctx;
    int mock;   /* the cluster is librdkafka's mock (shape broker) */
    int warned; /* the 5 MB warning was given */
    partition_bytes sent[MOCK_TRACKED];
    size_t n_sent;
} rdkafka_client;

/* ---- configuration ------------------------------------------------------------- */

static int apply_config(rd_kafka_conf_t *conf, const shape_kafka_producer_config *cfg, shape_err *err)
{
    for (size_t i = 0; i < cfg->n; i++) {
        const shape_kafka_producer_setting *s = &cfg->items[i];
        char errstr[256];
        if (rd_kafka_conf_set(conf, s->name, s->value, errstr, sizeof errstr) == RD_KAFKA_CONF_OK) continue;
        /* librdkafka's refusal quotes the value ("Invalid value \"...\""): a
         * secret is never echoed */
        if (s->from_credential)
            return shape_err_set(err, SHAPE_EINVAL,
                                 "kafka producer setting '%.80s' was refused (its value comes from a credential "
                                 "reference and is not shown)",
                                 s->name);
        if (shape_credref_secret_name(s->name))
            return shape_err_set(err, SHAPE_EINVAL, "kafka producer setting '%.80s' was refused", s->name);
        char shown[256]; /* librdkafka's reason, the value redacted (kafka_conf.h) */
        shape_kafka_conf_redact(conf, errstr, s->name, s->value, shown, sizeof shown);
        return shape_err_set(err, SHAPE_EINVAL, "kafka producer setting '%.80s' was refused: %.200s", s->name,
                             shown);
    }
    return SHAPE_OK;
}

/* rd_kafka_new refused a combination of settings: its reason, with every
 * value given redacted. */
static int refused_at_creation(const shape_kafka_producer_config *cfg, const char *reason, shape_err *err)
{
    const char **values = calloc(cfg->n ? cfg->n : 1, sizeof *values);
    if (!values) return shape_err_set(err, SHAPE_EINVAL, "cannot create a Kafka producer (its reason is not shown)");
    for (size_t i = 0; i < cfg->n; i++) values[i] = cfg->items[i].value;
    int rc = shape_kafka_new_refused(values, cfg->n, "cannot create a Kafka producer", reason, SHAPE_EINVAL, err);
    free(values);
    return rc;
}

static int rdkafka_check(void *ctx, const shape_kafka_producer_config *cfg, shape_err *err)
{
    (void)ctx;
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (!conf) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    int rc = apply_config(conf, cfg, err);
    rd_kafka_conf_destroy(conf);
    return rc;
}

/* ---- the client ---------------------------------------------------------------- */

/* On the mock: count an acknowledged message's bytes against its partition's
 * ~5 MB window, and warn once when one is past it. */
static void mock_account(rdkafka_client *c, const rd_kafka_message_t *msg)
{
    partition_bytes *e = NULL;
    for (size_t i = 0; i < c->n_sent && !e; i++)
        if (c->sent[i].rkt == msg->rkt && c->sent[i].partition == msg->partition) e = &c->sent[i];
    if (!e && c->n_sent < MOCK_TRACKED) {
        e = &c->sent[c->n_sent++];
        *e = (partition_bytes){msg->rkt, msg->partition, 0};
    }
    if (!e) return;
    e->bytes += (int64_t)msg->len + (int64_t)msg->key_len + 70; /* + the record's framing, roughly */
    if (e->bytes <= MOCK_PARTITION_BYTES) return;
    c->warned = 1;
    fprintf(stderr,
            "shape: warning: kafka: partition %d of '%s' has been sent more than 5 MB: the embedded broker "
            "(shape broker, librdkafka's mock) keeps only about the last 5 MB of each partition and is now "
            "dropping this stream's oldest events; use more partitions, fewer events, or a real Kafka\n",
            (int)msg->partition, rd_kafka_topic_name(msg->rkt));
}

static void on_report(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    (void)rk;
    rdkafka_client *c = opaque;
    if (c->mock && !c->warned && !msg->err) mock_account(c, msg);
    c->on_delivery(c->report_ctx, msg->_private, msg->err ? rd_kafka_err2name(msg->err) : NULL, 0);
}

/* Shown only with SHAPE_DEBUG (kafka_conf.h), like the consumer's. */
static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    if (level <= 6 && shape_kafka_debug()) fprintf(stderr, "shape: debug: kafka: %s: %s\n", fac, buf);
}

static int rdkafka_produce(shape_kafka_producer *p, const char *topic, shape_emit_message *m, int copy_value,
                           const char **error, int *retriable)
{
    rdkafka_client *c = (rdkafka_client *)p;
    if (!c->rkt || strcmp(c->rkt_name, topic) != 0) {
        char *name = strdup(topic);
        rd_kafka_topic_t *rkt = name ? rd_kafka_topic_new(c->rk, topic, NULL) : NULL;
        if (!rkt) {
            free(name);
            *error = name ? rd_kafka_err2name(rd_kafka_last_error()) : "_NO_MEMORY";
            *retriable = 0;
            return SHAPE_KAFKA_PRODUCE_FAILED;
        }
        if (c->rkt) rd_kafka_topic_destroy(c->rkt);
        free(c->rkt_name);
        c->rkt = rkt;
        c->rkt_name = name;
    }
    rd_kafka_headers_t *hdrs = NULL;
    if (m->header_count) {
        hdrs = rd_kafka_headers_new(m->header_count);
        for (size_t h = 0; h < m->header_count; h++)
            rd_kafka_header_add(hdrs, m->headers[h].name, -1, m->headers[h].value,
                                (ssize_t)m->headers[h].value_len);
    }
    rd_kafka_resp_err_t rc = rd_kafka_producev(
        c->rk, RD_KAFKA_V_RKT(c->rkt),
        RD_KAFKA_V_PARTITION(m->partition < 0 ? RD_KAFKA_PARTITION_UA : m->partition),
        RD_KAFKA_V_KEY(m->key, m->key ? m->key_len : 0), RD_KAFKA_V_VALUE((void *)m->value, m->value_len),
        RD_KAFKA_V_TIMESTAMP(m->timestamp_ms), RD_KAFKA_V_OPAQUE(m), RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_MSGFLAGS(copy_value ? RD_KAFKA_MSG_F_COPY : 0), RD_KAFKA_V_END);
    if (rc == RD_KAFKA_RESP_ERR_NO_ERROR) return SHAPE_KAFKA_PRODUCE_QUEUED;
    if (hdrs) rd_kafka_headers_destroy(hdrs);
    if (rc == RD_KAFKA_RESP_ERR__QUEUE_FULL) return SHAPE_KAFKA_PRODUCE_QUEUE_FULL;
    *error = rd_kafka_err2name(rc);
    *retriable = 0;
    return SHAPE_KAFKA_PRODUCE_FAILED;
}

static void rdkafka_poll(shape_kafka_producer *p, int timeout_ms)
{
    rd_kafka_poll(((rdkafka_client *)p)->rk, timeout_ms);
}

static void rdkafka_purge(shape_kafka_producer *p)
{
    rd_kafka_purge(((rdkafka_client *)p)->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
}

static int rdkafka_fatal_error(shape_kafka_producer *p, char *reason, size_t size)
{
    return rd_kafka_fatal_error(((rdkafka_client *)p)->rk, reason, size) != RD_KAFKA_RESP_ERR_NO_ERROR;
}

/* The topic asked for by name (kafka_metadata.h): a cluster that creates
 * topics on first use creates it now, one that does not says so at once.
 * The wait for the cluster's first answer ends at a stop request. */
static int rdkafka_connect(shape_kafka_producer *p, const char *topic, int timeout_ms,
                           const volatile sig_atomic_t *stop, int32_t *partitions, char *reason, size_t size)
{
    rd_kafka_t *rk = ((rdkafka_client *)p)->rk;
    shape_kafka_topic_info info;
    rd_kafka_resp_err_t merr = shape_kafka_topic_lookup(rk, topic, SHAPE_KAFKA_LOOKUP_NAMED, timeout_ms, stop, &info);
    /* created by this request: its partitions come with a later one (a few
     * tries, 50 ms apart; still unknown after them is -1 as before) */
    for (int i = 0; i < 10 && merr == RD_KAFKA_RESP_ERR_NO_ERROR && info.creating && !(stop && *stop); i++) {
        free(info.ids);
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
        merr = shape_kafka_topic_lookup(rk, topic, SHAPE_KAFKA_LOOKUP_NAMED, timeout_ms, stop, &info);
    }
    free(info.ids);
    if (merr == RD_KAFKA_RESP_ERR__INTR) {
        snprintf(reason, size, "stopped on request before the cluster answered");
        return 1;
    }
    if (merr == RD_KAFKA_RESP_ERR_NO_ERROR && (info.found || !info.topic_err)) {
        *partitions = !info.found ? 0 : info.creating ? -1 : (int32_t)info.n;
        char *id = rd_kafka_clusterid(rk, timeout_ms);
        if (id && strncmp(id, "mockCluster", 11) == 0) ((rdkafka_client *)p)->mock = 1;
        if (id) rd_kafka_mem_free(rk, id);
        return 0;
    }
    snprintf(reason, size, "%s", rd_kafka_err2str(merr ? merr : info.topic_err));
    return 1;
}

static void rdkafka_close(shape_kafka_producer *p, int flush_timeout_ms)
{
    rdkafka_client *c = (rdkafka_client *)p;
    if (flush_timeout_ms > 0) rd_kafka_flush(c->rk, flush_timeout_ms);
    if (c->rkt) rd_kafka_topic_destroy(c->rkt);
    rd_kafka_destroy(c->rk);
    free(c->rkt_name);
    free(c);
}

static int64_t rdkafka_mock_window(shape_kafka_producer *p, int quiet)
{
    rdkafka_client *c = (rdkafka_client *)p;
    if (quiet) c->warned = 1;
    return c->mock ? MOCK_PARTITION_BYTES : 0;
}

static const shape_kafka_producer_ops rdkafka_ops = {
    .produce = rdkafka_produce,
    .poll = rdkafka_poll,
    .purge = rdkafka_purge,
    .fatal_error = rdkafka_fatal_error,
    .connect = rdkafka_connect,
    .close = rdkafka_close,
    .mock_window = rdkafka_mock_window,
};

static int rdkafka_create(void *ctx, const shape_kafka_producer_config *cfg, shape_kafka_delivery_fn on_delivery,
                          void *report_ctx, shape_kafka_producer **out, shape_err *err)
{
    (void)ctx;
    *out = NULL;
    rdkafka_client *c = calloc(1, sizeof *c);
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    int rc = c && conf ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc == SHAPE_OK) rc = apply_config(conf, cfg, err);
    if (rc == SHAPE_OK) {
        c->base.ops = &rdkafka_ops;
        c->on_delivery = on_delivery;
        c->report_ctx = report_ctx;
        rd_kafka_conf_set_dr_msg_cb(conf, on_report);
        rd_kafka_conf_set_log_cb(conf, quiet_log);
        rd_kafka_conf_set_opaque(conf, c);
        char errstr[256];
        c->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
        if (c->rk) conf = NULL; /* owned by the handle now */
        else rc = refused_at_creation(cfg, errstr, err);
    }
    if (conf) rd_kafka_conf_destroy(conf);
    if (rc != SHAPE_OK) {
        free(c);
        return rc;
    }
    *out = &c->base;
    return SHAPE_OK;
}

const shape_kafka_producer_factory shape_kafka_rdkafka_factory = {
    .name = "librdkafka",
    .check = rdkafka_check,
    .create = rdkafka_create,
};

/* ---- the emitter type the plugin registers --------------------------------------- */

static int kafka_open(const char *uri, const struct shape_options *options, shape_emitter **out, shape_err *err)
{
    return shape_kafka_emitter_open_with(uri, options, &shape_kafka_rdkafka_factory, NULL, out, err);
}

static int kafka_open_stoppable(const char *uri, const struct shape_options *options,
                                const volatile sig_atomic_t *stop, shape_emitter **out, shape_err *err)
{
    return shape_kafka_emitter_open_with(uri, options, &shape_kafka_rdkafka_factory, stop, out, err);
}

static int kafka_check_options(const char *uri, const struct shape_options *options, shape_err *err)
{
    return shape_kafka_emitter_check_with(uri, options, &shape_kafka_rdkafka_factory, err);
}

static const char *const kafka_schemes[] = {"kafka", NULL};

const shape_emitter_type shape_kafka_emitter = {
    .name = "kafka",
    .schemes = kafka_schemes,
    .summary = "Produce events to a Kafka topic (idempotent, acks=all).",
    .check_uri = shape_kafka_emitter_check_uri,
    .open = kafka_open,
    .send = shape_kafka_emitter_send,
    .flush = shape_kafka_emitter_flush,
    .close = shape_kafka_emitter_close,
    .wants_rows = shape_kafka_emitter_wants_rows,
    .check_options = kafka_check_options,
    .set_stop = shape_kafka_emitter_set_stop,
    .submit = shape_kafka_emitter_submit,
    .complete = shape_kafka_emitter_complete,
    .open_stoppable = kafka_open_stoppable,
};

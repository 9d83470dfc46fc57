/* emitter.c — the kafka:// emitter: one Kafka message per event, returned
 * only when the broker acknowledged every one (spec-kafka.md §3).
 *
 * Why: `shape emit ... --sink kafka://HOST:PORT/TOPIC` must deliver at least
 * once: a batch counts as sent only after acks=all from an idempotent
 * producer, a full local queue is waited out rather than reported, and
 * every message leaves send() with an outcome the runtime can act on
 * (delivered, retry, refused with the broker's error name).
 * How: one librdkafka producer per open destination, configured with the
 * defaults acks=all, enable.idempotence=true, linger.ms=5, then the
 * options' `config` object (values may be credential references, resolved
 * here and wiped after use), then bootstrap.servers from the URI, which
 * always wins. send() produces every message with rd_kafka_producev (no
 * copy: the runtime's buffers outlive the call), the message's own outcome
 * slot as the opaque, serving the reports already in every 32 messages; on
 * QUEUE_FULL it polls 50 ms and tries again. Then it polls for the
 * remaining delivery reports up to flush_timeout (60 s);
 * what is still unacknowledged is purged (its reports arrive as _PURGE_*
 * errors) so no report can outlive the call, and is marked RETRY. Errors
 * that no retry can fix for this message (MSG_SIZE_TOO_LARGE, INVALID_RECORD,
 * ...) are REFUSED with the error's name; anything else is RETRY.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

#include "kafka_conf.h"
#include "kafka_plugin.h"
#include "kafka_uri.h"
#include "registry/wire_encode.h"
#include "shape/credref.h"
#include "shape/event.h"
#include "shape/options.h"

struct shape_emitter {
    rd_kafka_t *rk;
    rd_kafka_conf_t *conf; /* a copy, to make a new producer after a fatal error */
    char *topic;
    double flush_timeout; /* seconds */
    size_t pending;       /* produced in this send, no report yet */
    size_t queue_full_hits;
    shape_wire_encoder *wire; /* registry formats (--event-format), or NULL for JSON */
};

static const char *const base_options[] = {"envelope", "resuming", "config", "flush_timeout", NULL};

/* The emitter's options: its own and the registry formats'. */
static int check_known_options(const shape_options *options, shape_err *err)
{
    const char *known[32];
    size_t n = 0;
    for (size_t i = 0; base_options[i]; i++) known[n++] = base_options[i];
    for (size_t i = 0; shape_wire_option_keys[i] && n + 1 < sizeof known / sizeof known[0]; i++)
        known[n++] = shape_wire_option_keys[i];
    known[n] = NULL;
    return shape_options_check_known(options, known, "kafka emitter", err);
}

static int refused_error(rd_kafka_resp_err_t e)
{
    switch (e) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_MSG:
    case RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
        return 1;
    default:
        return 0;
    }
}

static void set_outcome(shape_emit_message *m, rd_kafka_resp_err_t e)
{
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
        m->outcome = SHAPE_EMIT_DELIVERED;
        return;
    }
    m->outcome = refused_error(e) ? SHAPE_EMIT_REFUSED : SHAPE_EMIT_RETRY;
    snprintf(m->reason, sizeof m->reason, "%s", rd_kafka_err2name(e));
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    (void)rk;
    shape_emitter *e = opaque;
    shape_emit_message *m = msg->_private;
    if (m) set_outcome(m, msg->err);
    if (e->pending) e->pending--;
}

/* librdkafka's own log lines would break the one-line error contract; what
 * matters reaches the user through delivery outcomes and err. */
static void quiet_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    (void)level;
    (void)fac;
    (void)buf;
}

/* ---- configuration ------------------------------------------------------------- */

static int secret_name(const char *name)
{
    return strstr(name, "password") || strstr(name, "secret") || strstr(name, "key") ||
           strstr(name, "token") || strstr(name, "jaas");
}

static int conf_set(rd_kafka_conf_t *conf, const char *name, const char *value, shape_err *err)
{
    return shape_kafka_conf_set_redacted(conf, "kafka producer setting", name, value, secret_name(name), err);
}

static int config_property(const char *name, const char *value, void *ud, shape_err *err)
{
    rd_kafka_conf_t *conf = ud;
    if (strcmp(name, "bootstrap.servers") == 0) return SHAPE_OK; /* the URI's servers win */
    if (shape_credref_is_reference(value)) {
        char *secret = NULL;
        int rc = shape_credref_resolve(value, &secret, err);
        if (rc != SHAPE_OK) return shape_err_prefix(err, "kafka producer setting '%.80s'", name);
        /* librdkafka's refusal quotes the value ("Invalid value \"...\""): a
         * resolved secret is never echoed, whatever the setting's name */
        char errstr[256];
        if (rd_kafka_conf_set(conf, name, secret, errstr, sizeof errstr) != RD_KAFKA_CONF_OK)
            rc = shape_err_set(err, SHAPE_EINVAL,
                               "kafka producer setting '%.80s' was refused (its value comes from a credential "
                               "reference and is not shown)",
                               name);
        shape_secret_free(secret);
        return rc;
    }
    return conf_set(conf, name, value, err);
}

/* The emitter's own options, checked (open and check_options). */
static int read_options(const struct shape_options *options, shape_envelope *envelope, double *flush_timeout,
                        shape_err *err)
{
    *flush_timeout = 60;
    *envelope = SHAPE_ENVELOPE_FLAT;
    if (!options) return SHAPE_OK;
    SHAPE_RETURN_NOT_OK(check_known_options(options, err));
    const char *env;
    SHAPE_RETURN_NOT_OK(shape_options_get_string(options, "envelope", "flat", &env, err));
    SHAPE_RETURN_NOT_OK(shape_envelope_parse(env, envelope, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_double(options, "flush_timeout", 60, flush_timeout, err));
    if (!(*flush_timeout > 0)) return shape_err_set(err, SHAPE_EINVAL, "option 'flush_timeout' must be > 0 seconds");
    return SHAPE_OK;
}

/* The producer configuration: defaults, the options' `config`, the URI's servers. */
static int make_conf(rd_kafka_conf_t *conf, const struct shape_options *options, const char *servers,
                     shape_err *err)
{
    int rc = conf_set(conf, "acks", "all", err);
    if (rc == SHAPE_OK) rc = conf_set(conf, "enable.idempotence", "true", err);
    if (rc == SHAPE_OK) rc = conf_set(conf, "linger.ms", "5", err);
    if (rc == SHAPE_OK && options) rc = shape_options_foreach_property(options, "config", config_property, conf, err);
    if (rc == SHAPE_OK) rc = conf_set(conf, "bootstrap.servers", servers, err);
    return rc;
}

/* The registry is never asked while checking: open sends nothing. */
static int no_transport(void *ctx, const char *method, const char *url, const char *const *headers,
                        size_t nheaders, const char *body, size_t body_len, long *status, char **resp,
                        size_t *resp_len, shape_err *err)
{
    (void)ctx, (void)method, (void)url, (void)headers, (void)nheaders, (void)body, (void)body_len;
    (void)status, (void)resp, (void)resp_len;
    return shape_err_set(err, SHAPE_EINTERNAL, "the schema registry was asked during a check");
}

/* Everything open checks, without a producer or a connection (--dry-run). */
static int kafka_check_options(const char *uri, const struct shape_options *options, shape_err *err)
{
    shape_envelope envelope;
    double flush_timeout;
    SHAPE_RETURN_NOT_OK(read_options(options, &envelope, &flush_timeout, err));
    shape_kafka_uri parsed;
    SHAPE_RETURN_NOT_OK(shape_kafka_uri_parse(uri, &parsed, err));
    shape_wire_encoder *wire = NULL;
    int rc = shape_wire_encoder_open(options, parsed.topic, envelope == SHAPE_ENVELOPE_FLAT, no_transport, NULL,
                                     &wire, err);
    shape_wire_encoder_free(wire);
    rd_kafka_conf_t *conf = rc == SHAPE_OK ? rd_kafka_conf_new() : NULL;
    if (conf) rc = make_conf(conf, options, parsed.servers, err);
    if (conf) rd_kafka_conf_destroy(conf);
    shape_kafka_uri_free(&parsed);
    return rc;
}

static int kafka_open(const char *uri, const struct shape_options *options, shape_emitter **out,
                      shape_err *err)
{
    *out = NULL;
    double flush_timeout;
    shape_envelope envelope;
    SHAPE_RETURN_NOT_OK(read_options(options, &envelope, &flush_timeout, err));
    shape_kafka_uri parsed;
    SHAPE_RETURN_NOT_OK(shape_kafka_uri_parse(uri, &parsed, err));
    shape_emitter *e = calloc(1, sizeof *e);
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    int rc = SHAPE_OK;
    if (!e || !conf) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc == SHAPE_OK)
        rc = shape_wire_encoder_open(options, parsed.topic, envelope == SHAPE_ENVELOPE_FLAT, NULL, NULL,
                                     &e->wire, err);
    if (rc == SHAPE_OK) rc = make_conf(conf, options, parsed.servers, err);
    if (rc == SHAPE_OK) {
        rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
        rd_kafka_conf_set_log_cb(conf, quiet_log);
        rd_kafka_conf_set_opaque(conf, e);
        e->conf = rd_kafka_conf_dup(conf);
        char errstr[256];
        e->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
        if (!e->rk) rc = shape_kafka_new_refused(options, "cannot create a Kafka producer", errstr, SHAPE_EINVAL, err);
        else conf = NULL; /* owned by the handle now */
    }
    if (rc == SHAPE_OK) {
        e->topic = parsed.topic;
        parsed.topic = NULL;
        e->flush_timeout = flush_timeout;
        /* Connect now (metadata of the topic), so an unreachable cluster is
         * one clear error before anything is generated, and the first paced
         * batch does not pay for the connection. */
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(e->rk, e->topic, NULL);
        const struct rd_kafka_metadata *md = NULL;
        int ms = flush_timeout < 10 ? (int)(flush_timeout * 1000) : 10000;
        rd_kafka_resp_err_t merr = rkt ? rd_kafka_metadata(e->rk, 0, rkt, &md, ms) : rd_kafka_last_error();
        if (md) rd_kafka_metadata_destroy(md);
        if (rkt) rd_kafka_topic_destroy(rkt);
        if (merr != RD_KAFKA_RESP_ERR_NO_ERROR)
            rc = shape_err_set(err, SHAPE_ECONN, "kafka: cannot reach the cluster of the kafka:// URI: %s",
                               rd_kafka_err2str(merr));
    }
    if (conf) rd_kafka_conf_destroy(conf);
    shape_kafka_uri_free(&parsed);
    if (rc != SHAPE_OK) {
        if (e && e->rk) rd_kafka_destroy(e->rk);
        if (e && e->conf) rd_kafka_conf_destroy(e->conf);
        if (e) shape_wire_encoder_free(e->wire);
        if (e) free(e->topic);
        free(e);
        return rc;
    }
    *out = e;
    return SHAPE_OK;
}

/* ---- sending --------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static rd_kafka_resp_err_t produce_one(shape_emitter *e, shape_emit_message *m)
{
    rd_kafka_headers_t *hdrs = NULL;
    if (m->header_count) {
        hdrs = rd_kafka_headers_new(m->header_count);
        for (size_t h = 0; h < m->header_count; h++)
            rd_kafka_header_add(hdrs, m->headers[h].name, -1, m->headers[h].value,
                                (ssize_t)m->headers[h].value_len);
    }
    rd_kafka_resp_err_t rc = rd_kafka_producev(
        e->rk, RD_KAFKA_V_TOPIC(e->topic),
        RD_KAFKA_V_PARTITION(m->partition < 0 ? RD_KAFKA_PARTITION_UA : m->partition),
        RD_KAFKA_V_KEY(m->key, m->key ? m->key_len : 0), RD_KAFKA_V_VALUE((void *)m->value, m->value_len),
        RD_KAFKA_V_TIMESTAMP(m->timestamp_ms), RD_KAFKA_V_OPAQUE(m),
        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_END);
    if (rc != RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) rd_kafka_headers_destroy(hdrs);
    return rc;
}

/* An idempotent producer that lost messages for good (e.g. a refused
 * request left a hole in its sequence numbers) raises a fatal error and
 * refuses everything afterwards; the runtime's retry needs a fresh one. */
static int renew_if_fatal(shape_emitter *e, shape_err *err)
{
    char reason[256];
    if (rd_kafka_fatal_error(e->rk, reason, sizeof reason) == RD_KAFKA_RESP_ERR_NO_ERROR) return SHAPE_OK;
    rd_kafka_purge(e->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(e->rk, 0);
    rd_kafka_destroy(e->rk);
    char errstr[256];
    e->rk = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_dup(e->conf), errstr, sizeof errstr);
    if (!e->rk) return shape_err_set(err, SHAPE_ECONN, "kafka: cannot renew the producer: %.200s", errstr);
    return SHAPE_OK;
}

static int kafka_send(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(renew_if_fatal(e, err));
    e->pending = 0;
    for (size_t i = 0; i < n; i++) msgs[i].outcome = SHAPE_EMIT_PENDING;
    /* registry formats: schemas registered, values replaced by wire bytes
     * (events the format cannot hold come back REFUSED, not produced) */
    if (e->wire) SHAPE_RETURN_NOT_OK(shape_wire_encoder_encode(e->wire, msgs, n, err));
    size_t produced = 0;
    for (size_t i = 0; i < n; i++) {
        shape_emit_message *m = &msgs[i];
        if (m->outcome != SHAPE_EMIT_PENDING) continue; /* refused or left to retry by the encoder */
        for (;;) {
            rd_kafka_resp_err_t rc = produce_one(e, m);
            if (rc == RD_KAFKA_RESP_ERR_NO_ERROR) {
                e->pending++;
                /* Serve the reports that are in already, as we go (as kcat
                 * does): acknowledged messages are freed while the batch is
                 * produced, so their memory (message, header list, headers)
                 * is reused from malloc's per-thread cache instead of the
                 * heap growing to the whole batch, page-faulting in and
                 * being trimmed again after each send. */
                if (++produced % 32 == 0) rd_kafka_poll(e->rk, 0);
                break;
            }
            if (rc == RD_KAFKA_RESP_ERR__QUEUE_FULL) { /* backpressure: serve reports, try again */
                e->queue_full_hits++;
                rd_kafka_poll(e->rk, 50);
                continue;
            }
            set_outcome(m, rc); /* refused at produce time, or RETRY */
            break;
        }
    }
    rd_kafka_poll(e->rk, 0);
    double deadline = now_s() + e->flush_timeout;
    /* Serve delivery reports until every message of the batch has one. (Not
     * rd_kafka_flush: in librdkafka 2.0.2 it waits in 10 ms steps, which
     * caps a paced run at one batch per 10 ms plus the round trip.) */
    while (e->pending > 0) {
        double left = deadline - now_s();
        if (left <= 0) break;
        rd_kafka_poll(e->rk, left > 0.1 ? 100 : (int)(left * 1000) + 1);
    }
    size_t unacked = e->pending;
    if (e->pending > 0) {
        /* Nothing may report into this batch after we return: purge, collect. */
        rd_kafka_purge(e->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
        double until = now_s() + 10;
        while (e->pending > 0 && now_s() < until) rd_kafka_poll(e->rk, 100);
    }
    size_t retry = 0, first = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (msgs[i].outcome == SHAPE_EMIT_PENDING) {
            msgs[i].outcome = SHAPE_EMIT_RETRY;
            snprintf(msgs[i].reason, sizeof msgs[i].reason, "not acknowledged");
        }
        if (msgs[i].outcome == SHAPE_EMIT_RETRY) {
            retry++;
            if (first == SIZE_MAX) first = i;
        }
    }
    if (unacked)
        return shape_err_set(err, SHAPE_ECONN, "kafka: %zu messages to '%s' not acknowledged in %gs", unacked,
                             e->topic, e->flush_timeout);
    if (retry)
        return shape_err_set(err, SHAPE_ECONN, "kafka: %zu of %zu messages were not delivered to '%s': %s",
                             retry, n, e->topic, msgs[first].reason);
    return SHAPE_OK;
}

static int kafka_flush(shape_emitter *e, shape_err *err)
{
    (void)e;
    (void)err;
    return SHAPE_OK; /* send() returns only after acks=all: delivered is durable */
}

static void kafka_close(shape_emitter *e)
{
    if (!e) return;
    if (e->rk) {
        rd_kafka_flush(e->rk, (int)(e->flush_timeout * 1000));
        rd_kafka_destroy(e->rk);
    }
    if (e->conf) rd_kafka_conf_destroy(e->conf);
    shape_wire_encoder_free(e->wire);
    free(e->topic);
    free(e);
}

static int kafka_wants_rows(shape_emitter *e) { return e->wire != NULL; }

static int kafka_check_uri(const char *uri, shape_err *err)
{
    shape_kafka_uri parsed;
    SHAPE_RETURN_NOT_OK(shape_kafka_uri_parse(uri, &parsed, err));
    shape_kafka_uri_free(&parsed);
    return SHAPE_OK;
}

static const char *const kafka_schemes[] = {"kafka", NULL};

const shape_emitter_type shape_kafka_emitter = {
    .name = "kafka",
    .schemes = kafka_schemes,
    .summary = "Produce events to a Kafka topic (idempotent, acks=all).",
    .check_uri = kafka_check_uri,
    .open = kafka_open,
    .send = kafka_send,
    .flush = kafka_flush,
    .close = kafka_close,
    .wants_rows = kafka_wants_rows,
    .check_options = kafka_check_options,
};

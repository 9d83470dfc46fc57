/* emitter.c — the kafka:// emitter: one Kafka message per event, a send
 * complete only when the broker acknowledged every one (spec-kafka.md §3).
 *
 * Why: `shape emit ... --sink kafka://HOST:PORT/TOPIC` must deliver at least
 * once: a batch counts as sent only after acks=all from an idempotent
 * producer, a full local queue is waited out rather than reported, and
 * every message leaves send() with an outcome the runtime can act on
 * (delivered, retry, refused with the broker's error name).
 * How: one producer client per open destination, reached only through the
 * seam of producer_client.h (librdkafka in the plugin, FakeProducer in
 * tests), configured with the defaults acks=all, enable.idempotence=true,
 * linger.ms=5, then the options' `config` object (values may be credential
 * references, resolved here and wiped when the emitter closes), then
 * bootstrap.servers from the URI, which always wins. A send is a submission
 * and its completion (submit/complete, plugin ABI 6, which the runtime calls
 * apart to keep several sends in flight; send is the two back to back).
 * submit() produces every message without copying it (the runtime keeps
 * them valid until complete), the message itself as the report's opaque,
 * serving the reports already in every 32 messages; on a full queue it polls
 * 50 ms and tries again. Each open submission (up to MAX_SUBMISSIONS) counts
 * its own reports: a report goes to the submission whose messages hold its
 * address. complete() polls until its submission has every report, up to
 * flush_timeout (60 s) after it was submitted; what is still unacknowledged
 * then (or at a stop request) is purged — every submission's, since a purge
 * cannot pick — and the reports collected, so none can outlive the call,
 * and is marked RETRY (the later submissions' purged messages come back
 * RETRY, _PURGE_QUEUE, at their own complete). (Outcomes are reset in
 * the produce loop and not looked at again when every message was reported
 * delivered: each pass over a merged send's messages costs a cache miss per
 * message.) Errors that no retry can
 * fix for this message (MSG_SIZE_TOO_LARGE, INVALID_RECORD, ...) are REFUSED
 * with the error's name, unless the client marks them retriable; anything
 * else is RETRY. With --event-format avro|protobuf the values are made from
 * the typed rows alone (wants_rows: SHAPE_EMIT_ROWS_ONLY), so the runtime
 * need not render JSON bodies; json-schema sends the JSON body. Their wire
 * bytes live in the encoder's arena until its next call, so with several
 * submissions open those values are copied into librdkafka when produced.
 * Open connects (the topic's metadata) and, given option "partition" (emit
 * --partition N), refuses a partition the topic does not have: every event
 * would fail with _UNKNOWN_PARTITION otherwise; into a mock cluster (shape
 * broker) it warns when what the run plans to send cannot fit its
 * partitions (warn_if_too_big).
 * A cluster that goes away mid-run is given up on as a librdkafka user
 * expects, after message.timeout.ms (shape's default 60 s, the user's from
 * `config`, delivery.timeout.ms its alias) without a single acknowledgement:
 * the clock starts when a send finds the destination idle and restarts on
 * every acknowledgement, and runs on across the runtime's retries, so
 * --retries cannot multiply it; the send then returns SHAPE_ETIMEDOUT (the
 * runtime does not retry it) with one line naming the servers and what to
 * do. (See outage_* below.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emitter.h"
#include "kafka_uri.h"
#include "registry/wire_encode.h"
#include "shape/clock.h"
#include "shape/credref.h"
#include "shape/event.h"
#include "shape/options.h"

/* One open submission (submit .. complete): its messages and what is still
 * owed to them. */
typedef struct submission {
    shape_emit_message *msgs; /* NULL: the slot is free */
    size_t n;
    size_t pending;  /* produced, no report yet */
    size_t failed;   /* given an outcome other than DELIVERED */
    size_t unsent;   /* left RETRY or REFUSED by the registry format's encoder */
    double deadline; /* flush_timeout after it was handed over */
} submission;

#define MAX_SUBMISSIONS 32 /* the runtime's PIPE_DEPTH (16) groups in flight, a retry's send, room */

struct shape_emitter {
    const shape_kafka_producer_factory *factory;
    shape_kafka_producer *client;
    shape_kafka_producer_config config; /* kept to make a fresh client after a fatal error */
    char *topic;
    int32_t partitions;   /* the topic's partition count found at open; -1 = not known (being created) */
    double flush_timeout; /* seconds */
    submission subs[MAX_SUBMISSIONS];
    size_t nsubs;         /* open submissions */
    submission *last;     /* the one the last report went to (reports come in runs) */
    size_t queue_full_hits;
    shape_kafka_wire_encoder *wire; /* registry formats (--event-format), or NULL for JSON */
    const volatile sig_atomic_t *stop; /* the run's stop flag (set_stop), or NULL */
    /* the outage give-up (outage_* below) */
    double delivery_timeout; /* message.timeout.ms in seconds; 0: none */
    double quiet_since;      /* clock of the last acknowledgement, or of the send that found it idle */
    size_t acked;            /* acknowledgements so far (on_delivery) */
    int in_outage;           /* the last send ended with messages the cluster did not acknowledge */
};

#define DEFAULT_MESSAGE_TIMEOUT_MS "60000" /* librdkafka's is 300000 */

static const char *const base_options[] = {"envelope", "resuming",       "config",         "flush_timeout",
                                           "partition", "planned_bytes", "planned_events", NULL};

/* The emitter's options: its own and the registry formats'. */
static int check_known_options(const shape_options *options, shape_err *err)
{
    const char *known[32];
    size_t n = 0;
    for (size_t i = 0; base_options[i]; i++) known[n++] = base_options[i];
    for (size_t i = 0; shape_kafka_wire_option_keys[i] && n + 1 < sizeof known / sizeof known[0]; i++)
        known[n++] = shape_kafka_wire_option_keys[i];
    known[n] = NULL;
    return shape_options_check_known(options, known, "kafka emitter", err);
}

/* Errors that no retry can fix for this one message. */
static int refused_error(const char *name)
{
    static const char *const refused[] = {"MSG_SIZE_TOO_LARGE", "_MSG_SIZE_TOO_LARGE", "INVALID_MSG",
                                          "INVALID_MSG_SIZE",   "INVALID_RECORD",      "RECORD_LIST_TOO_LARGE",
                                          "_UNKNOWN_PARTITION", "_INVALID_ARG",        NULL};
    for (size_t i = 0; refused[i]; i++)
        if (strcmp(name, refused[i]) == 0) return 1;
    return 0;
}

static void set_outcome(submission *s, shape_emit_message *m, const char *error, int retriable)
{
    if (!error) {
        m->outcome = SHAPE_EMIT_DELIVERED;
        return;
    }
    s->failed++;
    m->outcome = !retriable && refused_error(error) ? SHAPE_EMIT_REFUSED : SHAPE_EMIT_RETRY;
    snprintf(m->reason, sizeof m->reason, "%s", error);
}

static int holds(const submission *s, const shape_emit_message *m)
{
    return s->msgs && (uintptr_t)m >= (uintptr_t)s->msgs && (uintptr_t)m < (uintptr_t)(s->msgs + s->n);
}

/* A report goes to the open submission holding its message (a report for
 * none — a message given up on when its client was replaced — is dropped). */
static void on_delivery(void *ctx, shape_emit_message *m, const char *error, int retriable)
{
    shape_emitter *e = ctx;
    if (!error) e->acked++;
    submission *s = e->last && holds(e->last, m) ? e->last : NULL;
    for (size_t i = 0; !s && i < MAX_SUBMISSIONS && m; i++)
        if (holds(&e->subs[i], m)) s = &e->subs[i];
    if (!s) return;
    e->last = s;
    set_outcome(s, m, error, retriable);
    if (s->pending) s->pending--;
}

static size_t pending_all(const shape_emitter *e)
{
    size_t n = 0;
    for (size_t i = 0; i < MAX_SUBMISSIONS; i++)
        if (e->subs[i].msgs) n += e->subs[i].pending;
    return n;
}

/* Purge everything queued or in flight and collect the reports (up to 10 s),
 * so none can outlive the submissions they belong to. */
static void purge_all(shape_emitter *e)
{
    shape_kafka_producer *c = e->client;
    c->ops->purge(c);
    double until = shape_clock_now() + 10;
    while (pending_all(e) > 0 && shape_clock_now() < until) c->ops->poll(c, 100);
}

/* ---- the outage give-up ------------------------------------------------------------ */

/* The delivery time-out in seconds from the producer settings: the last of
 * message.timeout.ms and its alias delivery.timeout.ms (librdkafka applies
 * them in order); 0 = infinite, as librdkafka reads it. */
static double outage_timeout(const shape_kafka_producer_config *cfg)
{
    const char *ms = NULL;
    for (size_t i = 0; i < cfg->n; i++)
        if (strcmp(cfg->items[i].name, "message.timeout.ms") == 0 || strcmp(cfg->items[i].name, "delivery.timeout.ms") == 0)
            ms = cfg->items[i].value;
    double v = ms ? strtod(ms, NULL) / 1000 : 0;
    return v > 0 ? v : 0;
}

/* An acknowledgement since the clock was last looked at restarts it. */
static void outage_progress(shape_emitter *e, size_t *seen)
{
    if (e->acked == *seen) return;
    *seen = e->acked;
    e->quiet_since = shape_clock_now();
}

static int outage_over(const shape_emitter *e)
{
    return e->in_outage && e->delivery_timeout > 0 && shape_clock_now() - e->quiet_since >= e->delivery_timeout;
}

/* The run stops: every message not delivered is left to retry (the
 * checkpoint stays at the last acknowledged event), one line says why. */
static int outage_give_up(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (msgs[i].outcome == SHAPE_EMIT_PENDING) {
            msgs[i].outcome = SHAPE_EMIT_RETRY;
            snprintf(msgs[i].reason, sizeof msgs[i].reason, "not acknowledged");
        }
    const char *servers = shape_kafka_producer_config_get(&e->config, "bootstrap.servers");
    return shape_err_set(err, SHAPE_ETIMEDOUT,
                         "kafka: %.200s acknowledged nothing for %g s (message.timeout.ms): the broker is down or "
                         "unreachable; rerun the same command once it is back (it resumes from the checkpoint), or "
                         "allow a longer outage with message.timeout.ms in the options file's config",
                         servers ? servers : "the cluster", e->delivery_timeout);
}

/* ---- configuration ------------------------------------------------------------- */

static int config_property(const char *name, const char *value, void *ud, shape_err *err)
{
    shape_kafka_producer_config *cfg = ud;
    if (strcmp(name, "bootstrap.servers") == 0) return SHAPE_OK; /* the URI's servers win */
    if (!shape_credref_is_reference(value)) return shape_kafka_producer_config_set(cfg, name, value, 0, err);
    char *secret = NULL;
    int rc = shape_credref_resolve(value, &secret, err);
    if (rc != SHAPE_OK) return shape_err_prefix(err, "kafka producer setting '%.80s'", name);
    rc = shape_kafka_producer_config_set(cfg, name, secret, 1, err);
    shape_secret_free(secret);
    return rc;
}

/* The emitter's own options, checked (open and check_options). */
static int read_options(const shape_options *options, shape_envelope *envelope, double *flush_timeout,
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
static int make_config(shape_kafka_producer_config *cfg, const shape_options *options, const char *servers,
                       shape_err *err)
{
    int rc = shape_kafka_producer_config_set(cfg, "acks", "all", 0, err);
    if (rc == SHAPE_OK) rc = shape_kafka_producer_config_set(cfg, "enable.idempotence", "true", 0, err);
    if (rc == SHAPE_OK) rc = shape_kafka_producer_config_set(cfg, "linger.ms", "5", 0, err);
    if (rc == SHAPE_OK) rc = shape_kafka_producer_config_set(cfg, "message.timeout.ms", DEFAULT_MESSAGE_TIMEOUT_MS, 0, err);
    if (rc == SHAPE_OK && options) rc = shape_options_foreach_property(options, "config", config_property, cfg, err);
    if (rc == SHAPE_OK) rc = shape_kafka_producer_config_set(cfg, "bootstrap.servers", servers, 0, err);
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

int shape_kafka_emitter_check_with(const char *uri, const shape_options *options,
                                   const shape_kafka_producer_factory *factory, shape_err *err)
{
    shape_envelope envelope;
    double flush_timeout;
    SHAPE_RETURN_NOT_OK(read_options(options, &envelope, &flush_timeout, err));
    shape_kafka_uri parsed;
    SHAPE_RETURN_NOT_OK(shape_kafka_uri_parse(uri, &parsed, err));
    shape_kafka_wire_encoder *wire = NULL;
    int rc = shape_kafka_wire_encoder_new(options, parsed.topic, envelope == SHAPE_ENVELOPE_FLAT, no_transport, NULL,
                                     &wire, err);
    shape_kafka_wire_encoder_free(wire);
    shape_kafka_producer_config cfg = {0};
    if (rc == SHAPE_OK) rc = make_config(&cfg, options, parsed.servers, err);
    if (rc == SHAPE_OK) rc = factory->check(factory->ctx, &cfg, err);
    shape_kafka_producer_config_free(&cfg);
    shape_kafka_uri_free(&parsed);
    return rc;
}

static void emitter_free(shape_emitter *e)
{
    if (!e) return;
    if (e->client) e->client->ops->close(e->client, 0);
    shape_kafka_producer_config_free(&e->config);
    shape_kafka_wire_encoder_free(e->wire);
    free(e->topic);
    free(e);
}

/* Reach the cluster and find the topic (e->partitions), at open: an
 * unreachable cluster or a topic the cluster neither has nor creates (a
 * broker with auto.create.topics.enable=false) is one clear error before
 * anything is generated, not minutes of retried deliveries; and the first
 * paced batch does not pay for the connection. (shape broker, like any
 * cluster that creates topics on first use, creates it here.) */
static int look_up_topic(shape_emitter *e, int timeout_ms, shape_err *err)
{
    char reason[256] = "";
    e->partitions = -1;
    if (e->client->ops->connect(e->client, e->topic, timeout_ms, e->stop, &e->partitions, reason, sizeof reason) != 0)
        return shape_err_set(err, SHAPE_ECONN, "kafka: cannot reach the cluster of the kafka:// URI: %s", reason);
    if (e->partitions == 0)
        return shape_err_set(err, SHAPE_EINVAL,
                             "kafka: topic '%s' does not exist and the cluster does not create topics on first use: "
                             "create it first (e.g. kafka-topics.sh --create --topic %s)",
                             e->topic, e->topic);
    return SHAPE_OK;
}

/* Option "partition" (emit --partition N) against the topic's partition
 * count from connect's metadata: a partition the topic does not have would
 * dead-letter (or fail) every event, so it is refused at open. */
static int check_partition(shape_emitter *e, const shape_options *options, shape_err *err)
{
    int64_t partition = -1;
    if (options) SHAPE_RETURN_NOT_OK(shape_options_get_int64(options, "partition", -1, &partition, err));
    int32_t count = e->partitions;
    if (count > 0 && partition >= count)
        return shape_err_set(err, SHAPE_EINVAL,
                             "--partition %lld: topic '%.200s' has %ld partition%s (0..%ld); choose one of them or "
                             "leave --partition out",
                             (long long)partition, e->topic, (long)count, count == 1 ? "" : "s", (long)count - 1);
    return SHAPE_OK;
}

/* Options "planned_bytes" and "planned_events" (what emit is about to
 * send) against a mock cluster's ~5 MB per partition (shape broker drops
 * the oldest messages past it): said before anything is sent, with what
 * fits and what to do, instead of once a partition has overflowed. Over
 * the topic's partitions (the key partitioner spreads events about evenly),
 * or into one with --partition. */
static int warn_if_too_big(shape_emitter *e, const shape_options *options, shape_err *err)
{
    int64_t bytes = 0, events = 0, partition = -1;
    if (!options || !e->client->ops->mock_window) return SHAPE_OK;
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(options, "planned_bytes", 0, &bytes, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(options, "planned_events", 0, &events, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(options, "partition", -1, &partition, err));
    int64_t window = e->client->ops->mock_window(e->client, 0);
    int64_t parts = partition >= 0 ? 1 : e->partitions;
    if (window <= 0 || bytes <= 0 || events <= 0 || parts <= 0 || bytes / parts <= window) return SHAPE_OK;
    double per = (double)bytes / (double)parts, mean = (double)bytes / (double)events;
    int64_t need = (bytes + window - 1) / window, fit = (int64_t)((double)window * (double)parts / mean);
    char where[96];
    if (partition >= 0) snprintf(where, sizeof where, "into partition %lld", (long long)partition);
    else if (parts == 1) snprintf(where, sizeof where, "all into its one partition");
    else snprintf(where, sizeof where, "into each of its %ld partitions", (long)parts);
    fprintf(stderr,
            "shape: warning: kafka: this run sends about %.1f MB to topic '%.200s', %.1f MB %s, but the embedded "
            "broker (shape broker, librdkafka's mock) keeps only about the last %lld MB of each partition and will "
            "drop the oldest events; use a real Kafka, a topic of %lld or more partitions (shape broker --topic "
            "%.200s:%lld)%s, or fewer events (--max-events; about %lld fit)\n",
            (double)bytes / 1e6, e->topic, per / 1e6, where, (long long)(window >> 20), (long long)need, e->topic,
            (long long)need, partition >= 0 ? " without --partition" : "", (long long)fit);
    e->client->ops->mock_window(e->client, 1); /* said once: no second warning mid-run */
    return SHAPE_OK;
}

int shape_kafka_emitter_open_with(const char *uri, const shape_options *options,
                                  const shape_kafka_producer_factory *factory, const volatile sig_atomic_t *stop,
                                  shape_emitter **out, shape_err *err)
{
    *out = NULL;
    double flush_timeout;
    shape_envelope envelope;
    SHAPE_RETURN_NOT_OK(read_options(options, &envelope, &flush_timeout, err));
    shape_kafka_uri parsed;
    SHAPE_RETURN_NOT_OK(shape_kafka_uri_parse(uri, &parsed, err));
    shape_emitter *e = calloc(1, sizeof *e);
    int rc = e ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc == SHAPE_OK) {
        e->factory = factory;
        e->stop = stop;
        e->flush_timeout = flush_timeout;
        e->quiet_since = shape_clock_now();
        e->topic = parsed.topic;
        parsed.topic = NULL;
        rc = shape_kafka_wire_encoder_new(options, e->topic, envelope == SHAPE_ENVELOPE_FLAT, NULL, NULL, &e->wire,
                                     err);
    }
    if (rc == SHAPE_OK) rc = make_config(&e->config, options, parsed.servers, err);
    if (rc == SHAPE_OK) e->delivery_timeout = outage_timeout(&e->config);
    if (rc == SHAPE_OK) rc = factory->create(factory->ctx, &e->config, on_delivery, e, &e->client, err);
    if (rc == SHAPE_OK) {
        /* Connect now (metadata of the topic), so an unreachable cluster is
         * one clear error before anything is generated, and the first paced
         * batch does not pay for the connection; a stop request ends the
         * wait (SHAPE_ECONN, the caller sees its flag). */
        int ms = flush_timeout < 10 ? (int)(flush_timeout * 1000) : 10000;
        rc = look_up_topic(e, ms, err);
    }
    if (rc == SHAPE_OK) rc = check_partition(e, options, err);
    if (rc == SHAPE_OK) rc = warn_if_too_big(e, options, err);
    shape_kafka_uri_free(&parsed);
    if (rc != SHAPE_OK) {
        emitter_free(e);
        return rc;
    }
    *out = e;
    return SHAPE_OK;
}

/* ---- sending --------------------------------------------------------------------- */

/* A client that hit a fatal error (e.g. an idempotent producer whose
 * refused request left a hole in its sequence numbers) refuses everything
 * afterwards; the runtime's retry needs a fresh one. */
static int renew_if_fatal(shape_emitter *e, shape_err *err)
{
    char reason[256];
    shape_kafka_producer *c = e->client;
    if (!c->ops->fatal_error(c, reason, sizeof reason)) return SHAPE_OK;
    purge_all(e);
    /* what the old client never reported stays PENDING: RETRY at complete */
    for (size_t i = 0; i < MAX_SUBMISSIONS; i++) e->subs[i].pending = 0;
    c->ops->close(c, 0);
    e->client = NULL;
    if (e->factory->create(e->factory->ctx, &e->config, on_delivery, e, &e->client, err) != SHAPE_OK)
        return shape_err_prefix(err, "kafka: cannot renew the producer");
    return SHAPE_OK;
}

static submission *find_submission(shape_emitter *e, const shape_emit_message *msgs, size_t n)
{
    for (size_t i = 0; i < MAX_SUBMISSIONS; i++)
        if (e->subs[i].msgs == msgs && e->subs[i].n == n) return &e->subs[i];
    return NULL;
}

int shape_kafka_emitter_submit(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err)
{
    submission *s = NULL;
    for (size_t i = 0; i < MAX_SUBMISSIONS && !s; i++)
        if (!e->subs[i].msgs) s = &e->subs[i];
    if (!s || n == 0 || find_submission(e, msgs, n))
        return shape_err_set(err, SHAPE_EINTERNAL, "kafka: %s submission", s ? "an empty or repeated" : "one open");
    SHAPE_RETURN_NOT_OK(renew_if_fatal(e, err));
    shape_kafka_producer *c = e->client;
    const shape_kafka_producer_ops *ops = c->ops;
    if (!e->in_outage && e->nsubs == 0) e->quiet_since = shape_clock_now(); /* idle: the outage clock starts now */
    if (outage_over(e)) /* a retry after the whole time-out: nothing is sent */
        return outage_give_up(e, msgs, n, err);
    /* (Each pass over a merged send's messages, ~370 bytes apart, misses the
     * cache once per message: the outcomes are reset in the produce loop, or
     * by the registry formats' encoder, and the closing pass is skipped when
     * every message was reported delivered.) */
    size_t unsent = 0;
    if (e->wire) {
        /* registry formats: schemas registered, values replaced by wire bytes,
         * every outcome set (PENDING; events the format cannot hold come
         * back REFUSED, those of a table the registry cannot take now RETRY:
         * neither is produced). The wire bytes live in the encoder's arena
         * until its next call, so they are copied when produced. */
        SHAPE_RETURN_NOT_OK(shape_kafka_wire_encoder_encode(e->wire, msgs, n, err));
        unsent = shape_kafka_wire_encoder_unsent(e->wire);
    }
    *s = (submission){.msgs = msgs, .n = n, .unsent = unsent};
    e->nsubs++;
    size_t produced = 0;
    for (size_t i = 0; i < n; i++) {
        shape_emit_message *m = &msgs[i];
        if (!e->wire) m->outcome = SHAPE_EMIT_PENDING;
        else if (m->outcome != SHAPE_EMIT_PENDING) continue; /* refused or left to retry by the encoder */
        for (;;) {
            const char *error = NULL;
            int retriable = 0;
            int rc = ops->produce(c, e->topic, m, e->wire != NULL, &error, &retriable);
            if (rc == SHAPE_KAFKA_PRODUCE_QUEUED) {
                s->pending++;
                /* Serve the reports that are in already, as we go (as kcat
                 * does): acknowledged messages are freed while the batch is
                 * produced, so their memory (message, header list, headers)
                 * is reused from malloc's per-thread cache instead of the
                 * heap growing to the whole batch, page-faulting in and
                 * being trimmed again after each send. */
                if (++produced % 32 == 0) ops->poll(c, 0);
                break;
            }
            if (rc == SHAPE_KAFKA_PRODUCE_QUEUE_FULL) { /* backpressure: serve reports, try again */
                e->queue_full_hits++;
                ops->poll(c, 50);
                continue;
            }
            set_outcome(s, m, error ? error : "_FAIL", retriable); /* refused at produce time, or RETRY */
            break;
        }
    }
    ops->poll(c, 0);
    s->deadline = shape_clock_now() + e->flush_timeout;
    return SHAPE_OK;
}

int shape_kafka_emitter_complete(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err)
{
    submission *s = find_submission(e, msgs, n);
    if (!s) return shape_err_set(err, SHAPE_EINTERNAL, "kafka: completing a batch that was not submitted");
    shape_kafka_producer *c = e->client;
    /* Serve delivery reports until every message of the submission has one.
     * (Not a client flush: librdkafka 2.0.2's waits in 10 ms steps, which
     * caps a paced run at one batch per 10 ms plus the round trip; and it
     * would wait for the later submissions too.) */
    int stopped = 0;
    size_t seen = e->acked;
    while (s->pending > 0) {
        outage_progress(e, &seen);
        double now = shape_clock_now(), left = s->deadline - now;
        if (e->delivery_timeout > 0 && e->quiet_since + e->delivery_timeout - now < left)
            left = e->quiet_since + e->delivery_timeout - now; /* nothing acknowledged for message.timeout.ms */
        if (left <= 0) break;
        if (e->stop && *e->stop) { /* a stop request: give up waiting now (the caller checkpoints) */
            stopped = 1;
            break;
        }
        c->ops->poll(c, left > 0.1 ? 100 : (int)(left * 1000) + 1);
    }
    outage_progress(e, &seen);
    e->in_outage = s->pending > 0 || s->failed > 0;
    /* every message produced and reported delivered: nothing to look at */
    if (s->pending == 0 && s->failed == 0 && s->unsent == 0) {
        s->msgs = NULL;
        e->nsubs--;
        return SHAPE_OK;
    }
    size_t unacked = s->pending;
    /* Nothing may report into this batch after we return: purge, collect.
     * (This gives up on the later submissions too: their messages come back
     * RETRY, _PURGE_QUEUE, and the runtime re-sends them in turn.) */
    if (unacked > 0) purge_all(e);
    s->pending = 0;
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
    s->msgs = NULL;
    e->nsubs--;
    if (unacked && stopped)
        return shape_err_set(err, SHAPE_ECONN, "kafka: stopped on request with %zu messages to '%s' not acknowledged",
                             unacked, e->topic);
    if (retry && outage_over(e)) return outage_give_up(e, msgs, n, err);
    if (unacked)
        return shape_err_set(err, SHAPE_ECONN, "kafka: %zu messages to '%s' not acknowledged in %gs", unacked,
                             e->topic, e->flush_timeout);
    if (retry)
        return shape_err_set(err, SHAPE_ECONN, "kafka: %zu of %zu messages were not delivered to '%s': %s",
                             retry, n, e->topic, msgs[first].reason);
    return SHAPE_OK;
}

int shape_kafka_emitter_send(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err)
{
    if (n == 0) return SHAPE_OK;
    SHAPE_RETURN_NOT_OK(shape_kafka_emitter_submit(e, msgs, n, err));
    return shape_kafka_emitter_complete(e, msgs, n, err);
}

int shape_kafka_emitter_flush(shape_emitter *e, shape_err *err)
{
    (void)e;
    (void)err;
    return SHAPE_OK; /* send() returns only after acks=all: delivered is durable */
}

void shape_kafka_emitter_set_stop(shape_emitter *e, const volatile sig_atomic_t *stop) { e->stop = stop; }

void shape_kafka_emitter_close(shape_emitter *e)
{
    if (!e) return;
    if (e->nsubs > 0 && e->client) { /* (the runtime completes all it submits: a safety net) */
        for (size_t i = 0; i < MAX_SUBMISSIONS; i++) e->subs[i].msgs = NULL; /* no report writes into them */
        purge_all(e);
    }
    if (e->client) e->client->ops->close(e->client, (int)(e->flush_timeout * 1000));
    e->client = NULL;
    emitter_free(e);
}

/* Avro and Protobuf payloads are made from the row alone; a JSON Schema
 * payload is the message's JSON body. */
int shape_kafka_emitter_wants_rows(shape_emitter *e)
{
    if (!e->wire) return 0;
    return shape_kafka_wire_encoder_format(e->wire) == SHAPE_KAFKA_REGFMT_JSON_SCHEMA ? 1 : SHAPE_EMIT_ROWS_ONLY;
}

int shape_kafka_emitter_check_uri(const char *uri, shape_err *err)
{
    shape_kafka_uri parsed;
    SHAPE_RETURN_NOT_OK(shape_kafka_uri_parse(uri, &parsed, err));
    shape_kafka_uri_free(&parsed);
    return SHAPE_OK;
}

static const char *const kafka_schemes[] = {"kafka", NULL};

const shape_emitter_type shape_kafka_emitter_calls = {
    .name = "kafka",
    .schemes = kafka_schemes,
    .summary = "Produce events to a Kafka topic (idempotent, acks=all).",
    .check_uri = shape_kafka_emitter_check_uri,
    .send = shape_kafka_emitter_send,
    .flush = shape_kafka_emitter_flush,
    .close = shape_kafka_emitter_close,
    .wants_rows = shape_kafka_emitter_wants_rows,
    .set_stop = shape_kafka_emitter_set_stop,
    .submit = shape_kafka_emitter_submit,
    .complete = shape_kafka_emitter_complete,
};

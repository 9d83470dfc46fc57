/* broker.c — `shape broker`: a Kafka-protocol broker on loopback.
 *
 * Why: tests, demos and people trying shape need a real Kafka endpoint with
 * nothing else installed. librdkafka's mock cluster (rdkafka_mock.h) speaks
 * the real protocol (produce, idempotence, fetch, metadata, offsets, groups)
 * over TCP on 127.0.0.1 random ports; any Kafka client can use it.
 * How: block SIGINT/SIGTERM before librdkafka starts its threads (so they
 * inherit the mask), create a handle and a mock cluster on it, create the
 * requested topics, print the bootstrap servers as the first stdout line
 * (and write them atomically to --bootstrap-file), then sigwait. On the
 * signal, remove the bootstrap file and tear the cluster down. Before the
 * ports are printed, the listeners get TCP_NODELAY (broker_nodelay.c).
 * For fault-injection tests, --fail-produce ERROR:N pushes N failures of
 * produce requests onto the mock cluster before it serves anyone, and
 * --control PATH|- serves fault commands (broker down/up, errors pushed on
 * any API, round-trip delay, leader moves; broker_control.c) while it runs:
 * then the main thread poll()s a signalfd instead of sigwaiting.
 *
 * Limits (librdkafka 2.0.2's mock): each partition keeps roughly its last
 * 5 MB (older messages go, like retention: broker_watch.c announces each
 * drop); ports are random; unknown topics are created on first use; data
 * lives in memory only.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "broker_control.h"
#include "broker_nodelay.h"
#include "broker_watch.h"
#include "kafka_plugin.h"
#include "kafka_uri.h"

#define MAX_BROKERS 16
#define MAX_PARTITIONS 10000

typedef struct topic_spec {
    char name[250];
    int partitions;
} topic_spec;

static int parse_topic(const char *text, topic_spec *out, shape_err *err)
{
    const char *colon = strrchr(text, ':');
    size_t name_len = colon ? (size_t)(colon - text) : strlen(text);
    int64_t parts = 1;
    if (name_len == 0 || name_len >= sizeof out->name ||
        (colon && shape_parse_int64(colon + 1, 1, MAX_PARTITIONS, &parts) != SHAPE_OK))
        return shape_err_set(err, SHAPE_EINVAL,
                             "--topic wants NAME[:PARTITIONS] with 1 to %d partitions, got '%.80s'",
                             MAX_PARTITIONS, text);
    memcpy(out->name, text, name_len);
    out->name[name_len] = '\0';
    if (!shape_kafka_topic_name_ok(out->name))
        return shape_err_set(err, SHAPE_EINVAL,
                             "--topic '%s' is not a Kafka topic name (letters, digits, '.', '_', '-')",
                             out->name);
    out->partitions = (int)parts;
    return SHAPE_OK;
}

/* --fail-produce ERROR:N → the error code (by librdkafka's name, without
 * the leading '_' of local errors) and the count. */
static int parse_fail_produce(const char *text, rd_kafka_resp_err_t *code, int64_t *count, shape_err *err)
{
    const char *colon = strrchr(text, ':');
    size_t n = colon ? (size_t)(colon - text) : 0;
    if (!colon || n == 0 || shape_parse_int64(colon + 1, 1, 1000000, count) != SHAPE_OK)
        return shape_err_set(err, SHAPE_EINVAL, "--fail-produce wants ERROR:N, got '%.80s'", text);
    const struct rd_kafka_err_desc *descs;
    size_t ndescs;
    rd_kafka_get_err_descs(&descs, &ndescs);
    for (size_t i = 0; i < ndescs; i++)
        if (descs[i].name && descs[i].code >= 0 && strlen(descs[i].name) == n &&
            strncmp(descs[i].name, text, n) == 0) {
            *code = descs[i].code;
            return SHAPE_OK;
        }
    return shape_err_set(err, SHAPE_EINVAL, "--fail-produce: unknown Kafka error '%.*s'", (int)(n > 80 ? 80 : n),
                         text);
}

/* Write text to path through a temporary file, fsync, rename: a reader sees
 * either no file or the whole line. */
static int write_atomically(const char *path, const char *text, shape_err *err)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 32);
    if (!tmp) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    snprintf(tmp, len + 32, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = SHAPE_OK;
    if (fd < 0) {
        rc = shape_err_set(err, SHAPE_EIO, "cannot write bootstrap file %s: %s", path, strerror(errno));
    } else {
        size_t n = strlen(text);
        ssize_t w = write(fd, text, n);
        if (w != (ssize_t)n || fsync(fd) != 0)
            rc = shape_err_set(err, SHAPE_EIO, "cannot write bootstrap file %s: %s", path,
                               strerror(errno ? errno : EIO));
        if (close(fd) != 0 && rc == SHAPE_OK)
            rc = shape_err_set(err, SHAPE_EIO, "cannot write bootstrap file %s: %s", path, strerror(errno));
        if (rc == SHAPE_OK && rename(tmp, path) != 0)
            rc = shape_err_set(err, SHAPE_EIO, "cannot write bootstrap file %s: %s", path, strerror(errno));
        if (rc != SHAPE_OK) unlink(tmp);
    }
    free(tmp);
    return rc;
}

/* librdkafka's log lines go to stderr with our prefix; the warning that the
 * broker's own bookkeeping handle has no bootstrap.servers is expected. */
static void log_line(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    if (strcmp(fac, "CONFWARN") == 0) return;
    fprintf(stderr, "shape broker: librdkafka %d %s: %s\n", level, fac, buf);
}

static int run_broker(const shape_args *args, shape_err *err)
{
    int64_t brokers;
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "brokers", 1, MAX_BROKERS, 1, &brokers, err));
    size_t n_topics = shape_args_count(args, "topic");
    topic_spec *topics = calloc(n_topics + 1, sizeof *topics);
    if (!topics) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_topics; i++) {
        int rc = parse_topic(shape_args_nth(args, "topic", i), &topics[i], err);
        if (rc != SHAPE_OK) {
            free(topics);
            return rc;
        }
    }
    const char *bootstrap_file = shape_args_value(args, "bootstrap-file");
    size_t n_fail = shape_args_count(args, "fail-produce");
    rd_kafka_resp_err_t fail_codes[64];
    int64_t fail_counts[64];
    if (n_fail > 64) {
        free(topics);
        return shape_err_set(err, SHAPE_EINVAL, "at most 64 --fail-produce options");
    }
    for (size_t i = 0; i < n_fail; i++) {
        int rc = parse_fail_produce(shape_args_nth(args, "fail-produce", i), &fail_codes[i], &fail_counts[i], err);
        if (rc != SHAPE_OK) {
            free(topics);
            return rc;
        }
    }

    /* Block the stop signals in every thread librdkafka is about to start. */
    sigset_t stop_signals, old_mask;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);

    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set_log_cb(conf, log_line);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    rd_kafka_mock_cluster_t *cluster = NULL;
    shape_kafka_drop_watch *watch = NULL;
    int rc = SHAPE_OK;
    if (!rk) {
        rd_kafka_conf_destroy(conf);
        rc = shape_err_set(err, SHAPE_EINTERNAL, "cannot start the broker's client handle: %s", errstr);
        goto done;
    }
    cluster = rd_kafka_mock_cluster_new(rk, (int)brokers);
    if (!cluster) {
        rc = shape_err_set(err, SHAPE_EIO, "cannot start the embedded broker (no loopback listener?)");
        goto done;
    }
    int replication = brokers < 3 ? (int)brokers : 3;
    for (size_t i = 0; i < n_topics; i++) {
        rd_kafka_resp_err_t e =
            rd_kafka_mock_topic_create(cluster, topics[i].name, topics[i].partitions, replication);
        if (e) {
            rc = shape_err_set(err, SHAPE_EINVAL, "cannot create topic '%s': %s", topics[i].name,
                               rd_kafka_err2str(e));
            goto done;
        }
    }
    for (size_t i = 0; i < n_fail; i++)
        for (int64_t k = 0; k < fail_counts[i]; k++)
            rd_kafka_mock_push_request_errors(cluster, 0 /* ProduceRequest */, 1, fail_codes[i]);
    const char *bootstraps = rd_kafka_mock_cluster_bootstraps(cluster);
    /* Before anyone learns the ports: every connection gets TCP_NODELAY. */
    if (shape_kafka_broker_nodelay(bootstraps) < (int)brokers)
        fprintf(stderr, "shape broker: warning: could not set TCP_NODELAY on every listener "
                        "(clients may see ~40 ms delays)\n");
    if (bootstrap_file) {
        char line[1024];
        snprintf(line, sizeof line, "%s\n", bootstraps);
        if ((rc = write_atomically(bootstrap_file, line, err)) != SHAPE_OK) goto done;
    }
    /* Before anyone can produce: every drop of the mock's ~5 MB window is seen. */
    if ((rc = shape_kafka_drop_watch_start(bootstraps, &watch, err)) != SHAPE_OK) goto done;
    printf("%s\n", bootstraps);
    fflush(stdout);
    fprintf(stderr, "shape broker: %d broker%s listening on %s", (int)brokers, brokers == 1 ? "" : "s",
            bootstraps);
    for (size_t i = 0; i < n_topics; i++)
        fprintf(stderr, "%s%s:%d", i == 0 ? "; topics " : ", ", topics[i].name, topics[i].partitions);
    fprintf(stderr, "; stop with Ctrl-C\n");

    int sig = 0;
    const char *control = shape_args_value(args, "control");
    if (control) {
        if ((rc = shape_kafka_control_serve(cluster, (int)brokers, control, &stop_signals, &sig, err)) != SHAPE_OK) {
            if (bootstrap_file) unlink(bootstrap_file);
            goto done;
        }
    } else {
        while (sigwait(&stop_signals, &sig) != 0) {
        }
    }
    fprintf(stderr, "shape broker: stopping on %s\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    if (bootstrap_file) unlink(bootstrap_file);

done:
    shape_kafka_drop_watch_stop(watch);
    if (cluster) rd_kafka_mock_cluster_destroy(cluster);
    if (rk) rd_kafka_destroy(rk);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    free(topics);
    return rc;
}

static const shape_arg_spec broker_args[] = {
    {"brokers", 0, SHAPE_ARG_VALUE, "N", "1", "Number of brokers in the cluster (1 to 16)."},
    {"topic", 't', SHAPE_ARG_LIST, "NAME[:PARTITIONS]", NULL,
     "Create a topic up front (1 partition unless given); others are created on first use."},
    {"bootstrap-file", 0, SHAPE_ARG_VALUE, "FILE", NULL,
     "Also write the bootstrap servers to FILE (atomically; removed on stop)."},
    {"fail-produce", 0, SHAPE_ARG_LIST, "ERROR:N", NULL,
     "Fault injection for tests: fail the next N produce requests with a Kafka error "
     "(e.g. MSG_SIZE_TOO_LARGE:1, NOT_ENOUGH_REPLICAS:3); repeatable, applied in order."},
    {"control", 0, SHAPE_ARG_VALUE, "PATH|-", NULL,
     "Fault controls: read commands, one per line, on a Unix socket created at PATH (removed on stop) "
     "or on stdin with '-'; one reply line each, 'ok' or 'error: ...'. Commands: down B, up B, rtt B MS, "
     "fail API ERROR [N], clear [API], leader TOPIC PARTITION B, topic-error TOPIC ERROR, ping, help "
     "(brokers are 1..N; docs/plugins/streaming.md)."},
    {0},
};

const shape_command shape_kafka_cmd_broker = {
    .name = "broker",
    .summary = "Run an embedded Kafka-protocol broker on loopback until Ctrl-C.",
    .max_positional = 0,
    .args = broker_args,
    .epilog = "Each partition keeps only about its last 5 MB: older messages are DROPPED (librdkafka's\n"
              "mock cluster); every drop is announced on stderr, one line per partition and episode\n"
              "(how many, which offsets). Use more partitions (--topic NAME:N) or a real Kafka for more.\n"
              "Prints the bootstrap servers (e.g. 127.0.0.1:39517) as its first stdout line and logs\n"
              "to stderr. Ports are random and data lives in memory.",
    .run = run_broker,
};

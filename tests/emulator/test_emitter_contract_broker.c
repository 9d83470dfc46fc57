/* test_emitter_contract_broker.c — the emitter contract suite (tests/support/
 * emitter_contract.h) on kafka:// against `shape broker`: the real plugin
 * (loaded from the build's plugins/ like the CLI does), the real Kafka
 * protocol on loopback.
 *
 * How: the test starts `shape broker` itself with one-partition topics
 * contract-0 .. contract-11 (so delivery order is comparable), stops it by
 * its pid at the end. With SHAPE_TEST_KAFKA=host:port (a real cluster, e.g.
 * `make emulator-kafka`) it uses that one instead, with topics
 * contract-<pid>-0 .. 11 made by SHAPE_KAFKA_TOPIC_TOOL (kafka_topic.c).
 * Emptying the destination moves to the next topic; reading it back is a
 * librdkafka consumer assigned from the beginning up to the high watermark. Faults are the suite's generic ones (sends that
 * deliver half and fail); the broker itself is not made to fail here
 * (tests/emulator/test_faults_emit.sh does that).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <librdkafka/rdkafka.h>

#include "shape/emit.h"
#include "shape/registry.h"
#include "support/emitter_contract.h"

#define TOPICS 12 /* the suite empties the destination 6 times */

typedef struct broker_ctx {
    char bootstrap[256];
    char prefix[64]; /* "contract-" or, on a real cluster, "contract-<pid>-" */
    int topic;     /* the current destination: <prefix><topic> */
    char uri[384];
    const shape_emitter_type *kafka;
} broker_ctx;

static void set_uri(broker_ctx *b)
{
    snprintf(b->uri, sizeof b->uri, "kafka://%s/%s%d", b->bootstrap, b->prefix, b->topic);
}

static int broker_open(void *ctx, const shape_options *o, const shape_emitter_type **type, shape_emitter **out,
                       shape_err *err)
{
    broker_ctx *b = ctx;
    *type = b->kafka;
    *out = NULL;
    return b->kafka->open(b->uri, o, out, err);
}

static void broker_reset(void *ctx)
{
    broker_ctx *b = ctx;
    b->topic++;
    if (b->topic >= TOPICS) fail_msg("the test ran out of pre-made topics (%d)", TOPICS);
    set_uri(b);
}

/* Everything in the current topic (one partition), from the beginning. */
static void broker_delivered(void *ctx, shape_kafka_contract_list *out)
{
    broker_ctx *b = ctx;
    char topic[96], errstr[256];
    snprintf(topic, sizeof topic, "%s%d", b->prefix, b->topic);
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    assert_int_equal(rd_kafka_conf_set(conf, "bootstrap.servers", b->bootstrap, errstr, sizeof errstr), 0);
    assert_int_equal(rd_kafka_conf_set(conf, "group.id", "emitter-contract", errstr, sizeof errstr), 0);
    assert_int_equal(rd_kafka_conf_set(conf, "enable.auto.commit", "false", errstr, sizeof errstr), 0);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr);
    assert_non_null(rk);
    int64_t low = 0, high = 0;
    assert_int_equal(rd_kafka_query_watermark_offsets(rk, topic, 0, &low, &high, 10000), 0);
    if (high > low) {
        rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(parts, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
        assert_int_equal(rd_kafka_assign(rk, parts), 0);
        rd_kafka_topic_partition_list_destroy(parts);
        int64_t next = low;
        time_t until = time(NULL) + 30;
        while (next < high && time(NULL) < until) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 200);
            if (!m) continue;
            if (!m->err) {
                shape_kafka_contract_list_add(out, m->key, m->key_len, m->payload, m->len);
                next = m->offset + 1;
            }
            rd_kafka_message_destroy(m);
        }
        if (next < high) fail_msg("read %lld of %lld messages of %s", (long long)next, (long long)high, topic);
    }
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
}

/* `shape broker` with the topics, its bootstrap servers in b; its pid. */
static pid_t start_broker(broker_ctx *b, const char *dir)
{
    const char *bin = getenv("SHAPE_BIN");
    if (!bin) return -1;
    char file[128];
    snprintf(file, sizeof file, "%s/bootstrap", dir);
    char *argv[4 + 2 * TOPICS + 1];
    char specs[TOPICS][32];
    int a = 0;
    argv[a++] = (char *)bin;
    argv[a++] = "broker";
    argv[a++] = "--bootstrap-file";
    argv[a++] = file;
    for (int i = 0; i < TOPICS; i++) {
        snprintf(specs[i], sizeof specs[i], "contract-%d:1", i);
        argv[a++] = "--topic";
        argv[a++] = specs[i];
    }
    argv[a] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        execv(bin, argv);
        _exit(127);
    }
    for (int i = 0; i < 600; i++) { /* up to 60 s: a loaded machine starts it slowly */
        if (waitpid(pid, NULL, WNOHANG) == pid) return -1; /* it exited */
        FILE *f = fopen(file, "r");
        if (f) {
            int ok = fgets(b->bootstrap, sizeof b->bootstrap, f) != NULL;
            fclose(f);
            if (ok && b->bootstrap[0]) { /* the file appears complete (atomic replace) */
                b->bootstrap[strcspn(b->bootstrap, "\n")] = 0;
                return pid;
            }
        }
        nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    return -1;
}

/* SHAPE_TEST_KAFKA: its bootstrap in b and the topics made; 0 on success. */
static int use_cluster(broker_ctx *b, const char *servers)
{
    const char *tool = getenv("SHAPE_KAFKA_TOPIC_TOOL");
    if (!tool) {
        fprintf(stderr, "SHAPE_TEST_KAFKA is set but SHAPE_KAFKA_TOPIC_TOOL is not (ctest sets it)\n");
        return -1;
    }
    snprintf(b->bootstrap, sizeof b->bootstrap, "%s", servers);
    snprintf(b->prefix, sizeof b->prefix, "contract-%ld-", (long)getpid());
    for (int i = 0; i < TOPICS; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "'%s' '%s' '%s%d' 1", tool, servers, b->prefix, i);
        if (system(cmd) != 0) {
            fprintf(stderr, "cannot create topic %s%d on %s\n", b->prefix, i, servers);
            return -1;
        }
    }
    const char *name = getenv("SHAPE_TEST_KAFKA_NAME");
    printf("broker: %s (SHAPE_TEST_KAFKA%s%s)\n", servers, name ? ": " : "", name ? name : "");
    fflush(stdout);
    return 0;
}

int main(void)
{
    const char *build = getenv("SHAPE_BUILD_DIR");
    if (!build || !getenv("SHAPE_BIN")) {
        fprintf(stderr, "SHAPE_BUILD_DIR and SHAPE_BIN must be set (ctest sets them)\n");
        return 1;
    }
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/shape-contract-broker-%ld", (long)getpid());
    char cmd[96];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0) return 1;
    broker_ctx b = {.prefix = "contract-", .topic = 0};
    const char *cluster = getenv("SHAPE_TEST_KAFKA");
    pid_t pid = -1;
    if (cluster && *cluster) {
        if (use_cluster(&b, cluster) != 0) return 1;
    } else if ((pid = start_broker(&b, dir)) < 0) {
        fprintf(stderr, "cannot start shape broker\n");
        return 1;
    } else {
        printf("broker: %s (shape broker: librdkafka's mock cluster)\n", b.bootstrap);
    }
    set_uri(&b);
    shape_registry *reg = shape_registry_new();
    char plugin[512];
    snprintf(plugin, sizeof plugin, "%s/plugins/shape-kafka.so", build);
    shape_err err;
    int failed = 1;
    if (shape_registry_load_file(reg, plugin, &err) != SHAPE_OK) {
        fprintf(stderr, "cannot load %s: %s\n", plugin, err.message);
    } else if (!(b.kafka = shape_registry_emitter_for_uri(reg, b.uri, &err))) {
        fprintf(stderr, "no kafka:// emitter: %s\n", err.message);
    } else {
        const shape_kafka_emitter_harness h = {.name = pid < 0 ? "kafka over SHAPE_TEST_KAFKA" : "kafka over shape broker", .option_noun = "kafka", .ctx = &b,
                                         .ordered = 1, .open = broker_open, .reset = broker_reset,
                                         .delivered = broker_delivered};
        const shape_kafka_emitter_harness *const harnesses[] = {&h};
        failed = shape_kafka_emitter_contract_run(pid < 0 ? "emitter contract (SHAPE_TEST_KAFKA)"
                                                    : "emitter contract (shape broker)", harnesses, 1);
    }
    shape_registry_free(reg);
    if (pid > 0) {
        kill(pid, SIGTERM);
        int status = 0;
        waitpid(pid, &status, 0);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) failed++;
    return failed ? 1 : 0;
}

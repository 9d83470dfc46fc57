/* test_kafka_emitter_fake.c — the kafka:// emitter's own rules, over
 * FakeProducer (testing/fake_producer.h), in-process.
 *
 * What the generic emitter contract cannot see: the producer settings
 * (defaults, the user's config overriding them, the URI's servers always
 * winning), what each message carries (key, value, headers, partition,
 * timestamp), refusals at produce time, a cluster that never acknowledges
 * (purged and marked RETRY after flush_timeout), a fatal client error
 * (a fresh client, nothing lost), an unreachable cluster at open, retriable
 * errors never counted as refusals, and a registry-format option without
 * its registry refused before anything is produced.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "shape/clock.h"
#include "shape/domain.h"
#include "shape/emit.h"
#include "shape/generate_retail.h"
#include "shape/options.h"
#include "testing/fake_producer.h"

#define URI "kafka://broker-a:9092,broker-b:9092/orders"
#define N 10

typedef struct fx {
    shape_kafka_fake_producer_store *store;
    shape_kafka_producer_factory factory;
    shape_emitter *e;
    const shape_emitter_type *type;
    char keys[N][32], bodies[N][64];
    shape_emit_header hdrs[N][2];
    shape_emit_message msgs[N];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    shape_err err;
    assert_int_equal(shape_kafka_fake_producer_store_new(&f->store, &err), SHAPE_OK);
    f->type = shape_kafka_fake_emitter_type();
    for (size_t i = 0; i < N; i++) {
        snprintf(f->keys[i], sizeof f->keys[i], "order_line/%zu", i);
        snprintf(f->bodies[i], sizeof f->bodies[i], "{\"id\":%zu,\"_shape_table\":\"order_line\"}", i);
        f->hdrs[i][0] = (shape_emit_header){"shape-table", "order_line", 10};
        f->hdrs[i][1] = (shape_emit_header){"region", "eu\0x", 4}; /* bytes, NUL included */
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    if (f->e) f->type->close(f->e);
    shape_kafka_fake_producer_store_free(f->store);
    free(f);
    return 0;
}

static void reset_messages(fx *f)
{
    for (size_t i = 0; i < N; i++) {
        memset(&f->msgs[i], 0, sizeof f->msgs[i]);
        f->msgs[i].key = f->keys[i];
        f->msgs[i].key_len = strlen(f->keys[i]);
        f->msgs[i].value = f->bodies[i];
        f->msgs[i].value_len = strlen(f->bodies[i]);
        f->msgs[i].headers = f->hdrs[i];
        f->msgs[i].header_count = 2;
        f->msgs[i].partition = -1;
        f->msgs[i].table = "order_line";
    }
}

static int open_with(fx *f, const char *kv1, const char *kv2, shape_err *err)
{
    shape_options *o = shape_options_new();
    if (kv1) assert_int_equal(shape_options_set_kv(o, kv1, err), SHAPE_OK);
    if (kv2) assert_int_equal(shape_options_set_kv(o, kv2, err), SHAPE_OK);
    int rc = shape_kafka_fake_emitter_open(f->store, &f->factory, URI, o, &f->e, err);
    shape_options_free(o);
    return rc;
}

static size_t count(const fx *f, int outcome)
{
    size_t n = 0;
    for (size_t i = 0; i < N; i++) n += f->msgs[i].outcome == outcome;
    return n;
}

static void test_producer_settings(void **state)
{
    fx *f = *state;
    shape_err err;
    shape_options *o = shape_options_new();
    assert_int_equal(shape_options_set_kv(o,
                                          "config={\"linger.ms\":\"50\",\"bootstrap.servers\":\"elsewhere:1\","
                                          "\"compression.type\":\"lz4\"}",
                                          &err),
                     SHAPE_OK);
    assert_int_equal(shape_kafka_fake_emitter_open(f->store, &f->factory, URI, o, &f->e, &err), SHAPE_OK);
    shape_options_free(o);
    const shape_kafka_producer_config *c = &f->store->last_config;
    assert_string_equal(shape_kafka_producer_config_get(c, "acks"), "all");
    assert_string_equal(shape_kafka_producer_config_get(c, "enable.idempotence"), "true");
    assert_string_equal(shape_kafka_producer_config_get(c, "linger.ms"), "50"); /* the user's wins over ours */
    assert_string_equal(shape_kafka_producer_config_get(c, "compression.type"), "lz4");
    /* the URI's servers win over config's */
    assert_string_equal(shape_kafka_producer_config_get(c, "bootstrap.servers"), "broker-a:9092,broker-b:9092");
    assert_int_equal(f->store->producers, 1);
    /* three sends on one emitter: one producer */
    for (int s = 0; s < 3; s++) {
        reset_messages(f);
        assert_int_equal(f->type->send(f->e, f->msgs, 5, &err), SHAPE_OK);
    }
    assert_int_equal(f->store->producers, 1);
    assert_int_equal(f->store->log_len, 15);
}

static void test_message_carried(void **state)
{
    fx *f = *state;
    shape_err err;
    assert_int_equal(open_with(f, NULL, NULL, &err), SHAPE_OK);
    reset_messages(f);
    f->msgs[3].partition = 2;
    f->msgs[3].timestamp_ms = 1767225600000;
    f->msgs[4].key = NULL;
    assert_int_equal(f->type->send(f->e, f->msgs, N, &err), SHAPE_OK);
    assert_int_equal(count(f, SHAPE_EMIT_DELIVERED), N);
    assert_int_equal(f->store->log_len, N);
    for (size_t i = 0; i < N; i++) {
        const shape_kafka_fake_record *r = &f->store->log[i];
        char key[64];
        assert_string_equal(r->topic, "orders");
        assert_int_equal(r->value_len, strlen(f->bodies[i]));
        assert_memory_equal(r->value, f->bodies[i], r->value_len);
        if (i == 4) assert_null(r->key);
        else assert_string_equal(shape_kafka_fake_record_key(r, key, sizeof key), f->keys[i]);
        assert_int_equal(r->header_count, 2);
        assert_string_equal(r->headers[0].name, "shape-table");
        assert_int_equal(r->headers[1].value_len, 4);
        assert_memory_equal(r->headers[1].value, "eu\0x", 4);
        assert_int_equal(r->partition, i == 3 ? 2 : 0);
        assert_int_equal(r->timestamp_ms, i == 3 ? 1767225600000 : 0);
    }
}

static void test_refused_at_produce(void **state)
{
    fx *f = *state;
    shape_err err;
    assert_int_equal(open_with(f, NULL, NULL, &err), SHAPE_OK);
    reset_messages(f);
    f->store->refuse_at_produce = 1;
    f->store->reject = 2; /* then the first two delivered are refused by the broker */
    assert_int_equal(f->type->send(f->e, f->msgs, N, &err), SHAPE_OK);
    assert_int_equal(f->msgs[0].outcome, SHAPE_EMIT_REFUSED);
    assert_string_equal(f->msgs[0].reason, "_MSG_SIZE_TOO_LARGE");
    assert_int_equal(f->msgs[1].outcome, SHAPE_EMIT_REFUSED);
    assert_string_equal(f->msgs[1].reason, "MSG_SIZE_TOO_LARGE");
    assert_int_equal(f->msgs[2].outcome, SHAPE_EMIT_REFUSED);
    assert_int_equal(count(f, SHAPE_EMIT_DELIVERED), N - 3);
    assert_int_equal(f->store->nrejected, 3);
    assert_string_equal(f->store->rejected[0], "order_line/0");
    assert_string_equal(f->store->rejected[2], "order_line/2");
    assert_int_equal(f->store->log_len, N - 3);
}

static void test_partial_failure_is_retry(void **state)
{
    fx *f = *state;
    shape_err err;
    assert_int_equal(open_with(f, NULL, NULL, &err), SHAPE_OK);
    reset_messages(f);
    f->store->failures = 1;
    f->store->reject = 0;
    assert_int_equal(f->type->send(f->e, f->msgs, N, &err), SHAPE_ECONN);
    assert_string_equal(err.message, "kafka: 5 of 10 messages were not delivered to 'orders': _MSG_TIMED_OUT");
    assert_int_equal(count(f, SHAPE_EMIT_DELIVERED), 5);
    assert_int_equal(count(f, SHAPE_EMIT_RETRY), 5); /* retriable: never a refusal */
    assert_int_equal(f->msgs[9].outcome, SHAPE_EMIT_RETRY);
    /* the runtime re-sends the rest; nothing lost */
    reset_messages(f);
    assert_int_equal(f->type->send(f->e, f->msgs + 5, 5, &err), SHAPE_OK);
    assert_int_equal(f->store->log_len, N);
}

static void test_unacknowledged_purged(void **state)
{
    fx *f = *state;
    shape_err err;
    assert_int_equal(open_with(f, "flush_timeout=0.2", NULL, &err), SHAPE_OK);
    reset_messages(f);
    f->store->stall = 1;
    assert_int_equal(f->type->send(f->e, f->msgs, 3, &err), SHAPE_ECONN);
    assert_string_equal(err.message, "kafka: 3 messages to 'orders' not acknowledged in 0.2s");
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(f->msgs[i].outcome, SHAPE_EMIT_RETRY);
        assert_string_equal(f->msgs[i].reason, "_PURGE_QUEUE");
    }
    assert_int_equal(f->store->log_len, 0);
    /* the cluster comes back: the next send delivers (nothing left over) */
    f->store->stall = 0;
    reset_messages(f);
    assert_int_equal(f->type->send(f->e, f->msgs, 3, &err), SHAPE_OK);
    assert_int_equal(f->store->log_len, 3);
}

/* A cluster that acknowledges nothing for message.timeout.ms ends the run:
 * SHAPE_ETIMEDOUT (the runtime does not retry it), the servers named; the
 * clock runs on across sends (a retry after it sends nothing), and an
 * acknowledgement (or an idle destination) starts it again. */
static void test_outage_gives_up(void **state)
{
    fx *f = *state;
    shape_err err;
    assert_int_equal(open_with(f, "flush_timeout=0.1", "config={\"message.timeout.ms\":\"600\"}", &err), SHAPE_OK);
    f->store->stall = 1;
    /* each send ends at the flush time-out (a retry's business) until 0.6 s
     * passed without an acknowledgement: then it is given up on, never before */
    double t0 = shape_clock_now();
    int rc = SHAPE_ECONN, sends = 0;
    while (rc == SHAPE_ECONN && sends < 1000) {
        reset_messages(f);
        rc = f->type->send(f->e, f->msgs, 3, &err);
        sends++;
        if (rc == SHAPE_ECONN) assert_string_equal(err.message, "kafka: 3 messages to 'orders' not acknowledged in 0.1s");
    }
    assert_int_equal(rc, SHAPE_ETIMEDOUT);
    assert_true(shape_clock_now() - t0 >= 0.6);
    assert_true(sends >= 2);
    assert_string_equal(err.message,
                        "kafka: broker-a:9092,broker-b:9092 acknowledged nothing for 0.6 s (message.timeout.ms): the "
                        "broker is down or unreachable; rerun the same command once it is back (it resumes from the "
                        "checkpoint), or allow a longer outage with message.timeout.ms in the options file's config");
    for (size_t i = 0; i < 3; i++) assert_int_equal(f->msgs[i].outcome, SHAPE_EMIT_RETRY);
    assert_int_equal(f->store->log_len, 0);
    /* a retry after it sends nothing more */
    reset_messages(f);
    assert_int_equal(f->type->send(f->e, f->msgs, 3, &err), SHAPE_ETIMEDOUT);
    assert_int_equal(shape_exit_code(SHAPE_ETIMEDOUT), 2);
    /* the cluster back (an acknowledgement, or an idle destination after a
     * clean send) starts the clock again */
    f->store->stall = 0;
    f->type->close(f->e);
    f->e = NULL;
    assert_int_equal(open_with(f, "flush_timeout=0.1", "config={\"message.timeout.ms\":\"600\"}", &err), SHAPE_OK);
    reset_messages(f);
    assert_int_equal(f->type->send(f->e, f->msgs, 3, &err), SHAPE_OK);
    struct timespec pause = {0, 700 * 1000 * 1000}; /* idle longer than the time-out: no outage */
    nanosleep(&pause, NULL);
    reset_messages(f);
    assert_int_equal(f->type->send(f->e, f->msgs, 3, &err), SHAPE_OK);
}

static void test_fatal_error_renews_client(void **state)
{
    fx *f = *state;
    shape_err err;
    assert_int_equal(open_with(f, NULL, NULL, &err), SHAPE_OK);
    assert_int_equal(f->store->producers, 1);
    f->store->fatal = 1;
    reset_messages(f);
    assert_int_equal(f->type->send(f->e, f->msgs, N, &err), SHAPE_OK);
    assert_int_equal(f->store->producers, 2);
    assert_int_equal(f->store->open_clients, 1); /* the broken one was closed */
    assert_int_equal(f->store->log_len, N);
}

static void test_unreachable_and_refused_options(void **state)
{
    fx *f = *state;
    shape_err err;
    f->store->unreachable = 1;
    assert_int_equal(open_with(f, NULL, NULL, &err), SHAPE_ECONN);
    assert_string_equal(err.message,
                        "kafka: cannot reach the cluster of the kafka:// URI: Local: Broker transport failure");
    assert_null(f->e);
    assert_int_equal(f->store->producers, 1);
    assert_int_equal(f->store->open_clients, 0); /* the client of a failed open is closed */
    f->store->unreachable = 0;
    /* a topic the cluster neither has nor creates: refused at open, named */
    f->store->topic_missing = 1;
    assert_int_equal(open_with(f, NULL, NULL, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "kafka: topic '"));
    assert_non_null(strstr(err.message, "' does not exist"));
    assert_null(f->e);
    assert_int_equal(f->store->open_clients, 0);
    f->store->topic_missing = 0;
    assert_int_equal(open_with(f, "nope=1", NULL, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "unknown kafka emitter options: ['nope']");
    assert_int_equal(open_with(f, "flush_timeout=0", NULL, &err), SHAPE_EINVAL);
    assert_int_equal(open_with(f, "event_format=avro", NULL, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "schema registry"));
    assert_int_equal(f->store->producers, 2); /* no client is made for a refused option */
    assert_int_equal(shape_kafka_fake_emitter_open(f->store, &f->factory, "kafka:///t", NULL, &f->e, &err),
                     SHAPE_EINVAL);
}

/* Through the runtime: delivery failures and queue-full episodes together,
 * plus a fatal error: every event arrives. */
static void test_runtime_loses_nothing(void **state)
{
    fx *f = *state;
    shape_err err;
    shape_domain *d;
    shape_event_plan plan;
    assert_int_equal(shape_domain_open(shape_retail_domain_type(), "small", 11, &d, &err), SHAPE_OK);
    const char *tables[] = {"order_line"};
    assert_int_equal(shape_event_plan_init(&plan, d, tables, 1, &err), SHAPE_OK);
    assert_int_equal(open_with(f, NULL, NULL, &err), SHAPE_OK);
    f->store->failures = 6;
    f->store->full = 20;
    f->store->fatal = 1;
    shape_emit_destination dest = {shape_kafka_fake_emitter_type(), f->e, "kafka://"};
    shape_emit_config cfg = {0};
    cfg.plan = &plan;
    cfg.partition = -1;
    cfg.limit = 3000;
    cfg.duration = -1;
    cfg.batch_events = 250;
    cfg.queue_batches = 2;
    cfg.retries = 8;
    cfg.max_dead_letter = -1;
    cfg.dests = &dest;
    cfg.ndests = 1;
    shape_emit_report rep;
    assert_int_equal(shape_emit_run(&cfg, &rep, &err), SHAPE_OK);
    assert_int_equal(rep.events, 3000);
    assert_true(rep.retries >= 1);
    assert_true(f->store->hits >= 1);
    assert_int_equal(f->store->producers, 2);
    /* every key order_line/0..2999 at least once; duplicates none (only the
     * undelivered are re-sent) */
    char *seen = calloc(3000, 1);
    for (size_t i = 0; i < f->store->log_len; i++) {
        char key[64];
        unsigned long seq;
        assert_int_equal(sscanf(shape_kafka_fake_record_key(&f->store->log[i], key, sizeof key), "order_line/%lu",
                                &seq),
                         1);
        assert_true(seq < 3000);
        assert_false(seen[seq]);
        seen[seq] = 1;
    }
    assert_int_equal(f->store->log_len, 3000);
    free(seen);
    shape_event_plan_reset(&plan);
    shape_domain_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_producer_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_message_carried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_at_produce, setup, teardown),
        cmocka_unit_test_setup_teardown(test_partial_failure_is_retry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unacknowledged_purged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outage_gives_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fatal_error_renews_client, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreachable_and_refused_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runtime_loses_nothing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

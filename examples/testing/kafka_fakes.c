/* kafka_fakes.c — a test program built against an installed shape with
 * the testing library shape_kafka_testing, as a plugin author writes one.
 *
 * Why: docs/plugins/authoring.md ("Testing without a network") shows this
 * file; tests/contract/test_install.sh compiles it against an install tree
 * through `pkg-config shape-kafka-testing` and runs it, so the installed
 * headers, archive and .pc file are proven to work together.
 * How: three checks, no network, no librdkafka, all in-process:
 *   1. FakeBroker: a topic of two partitions with three JSON messages, read
 *      back through the kafka:// source logic as Arrow batches;
 *   2. the fake schema registry: a schema registered twice gets one id;
 *   3. the emitter contract suite run on the kafka:// emitter over
 *      FakeProducer (with its queue-full, failure and refusal knobs).
 * Exit 0 when all hold; each failure prints one line.
 *
 * Build (see the guide):
 *   cc -std=c11 -Wall -Wextra -Werror -o kafka_fakes kafka_fakes.c \
 *      $(pkg-config --cflags --libs shape-kafka-testing)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shape-kafka/testing/emitter_contract.h>
#include <shape-kafka/testing/fake_broker.h>
#include <shape-kafka/testing/fake_producer.h>
#include <shape-kafka/testing/fake_registry.h>

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n", what);
        failures++;
    }
}

/* 1. Three messages in, three rows out. */
static void fake_broker_reads_back(void)
{
    shape_err err;
    shape_kafka_fake_broker *fb = NULL;
    check(shape_kafka_fake_broker_new(&fb, &err) == SHAPE_OK &&
              shape_kafka_fake_broker_add_topic(fb, "orders", 2, &err) == SHAPE_OK,
          "FakeBroker topic");
    check(shape_kafka_fake_broker_append_text(fb, "orders", 0, "{\"id\":1}", 1700000000000, &err) == SHAPE_OK &&
              shape_kafka_fake_broker_append_text(fb, "orders", 0, "{\"id\":2}", 1700000000001, &err) == SHAPE_OK &&
              shape_kafka_fake_broker_append_text(fb, "orders", 1, "{\"id\":3}", 1700000000002, &err) == SHAPE_OK,
          "FakeBroker append");
    shape_source *src = NULL;
    int rc = shape_kafka_fake_broker_source_open(fb, "kafka://broker-a:9092/orders", NULL, NULL, &src, &err);
    check(rc == SHAPE_OK, "kafka:// source over FakeBroker opens");
    int64_t rows = 0;
    for (int end = 0; rc == SHAPE_OK && !end;) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        shape_offsets after = SHAPE_OFFSETS_INIT;
        rc = shape_source_next(src, &schema, &array, &after, &end, &err);
        if (rc == SHAPE_OK && !end && array.release) {
            rows += array.length;
            array.release(&array);
            schema.release(&schema);
        }
        shape_offsets_free(&after);
    }
    check(rc == SHAPE_OK, "the bounded read ends cleanly");
    check(rows == 3, "three rows read back");
    if (src) shape_source_close(src);
    shape_kafka_fake_broker_free(fb);
}

/* 2. Registration is idempotent: the same schema twice, one id (from 100). */
static void fake_registry_registers(void)
{
    shape_err err;
    shape_kafka_fake_registry *r = NULL;
    check(shape_kafka_fake_registry_new(&r, &err) == SHAPE_OK, "fake registry");
    if (!r) return;
    const char *body = "{\"schema\":\"{\\\"type\\\":\\\"string\\\"}\"}";
    int status[2] = {0, 0};
    char *resp[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++)
        shape_kafka_fake_registry_handle(r, "POST", "/subjects/orders-value/versions", NULL, body, strlen(body),
                                   &status[i], &resp[i]);
    check(status[0] == 200 && status[1] == 200, "registry answers 200");
    check(resp[0] && resp[1] && strstr(resp[0], "100") && strcmp(resp[0], resp[1]) == 0, "one id for one schema");
    check(shape_kafka_fake_registry_subject_count(r) == 1, "one subject recorded");
    free(resp[0]);
    free(resp[1]);
    shape_kafka_fake_registry_free(r);
}

/* 3. The contract suite on kafka:// over FakeProducer: the harness says how
 * to open the destination, read it back and inject its own faults. */
typedef struct fake_ctx {
    shape_kafka_fake_producer_store *store;
    shape_kafka_producer_factory factory;
} fake_ctx;

static int fake_open(void *ctx, const shape_options *o, const shape_emitter_type **type, shape_emitter **out,
                     shape_err *err)
{
    fake_ctx *f = ctx;
    *type = shape_kafka_fake_emitter_type();
    return shape_kafka_fake_emitter_open(f->store, &f->factory, "kafka://broker-a:9092/events", o, out, err);
}
static void fake_reset(void *ctx)
{
    shape_kafka_fake_producer_store *s = ((fake_ctx *)ctx)->store;
    shape_kafka_fake_producer_store_clear(s);
    s->full = s->failures = s->reject = s->refuse_at_produce = s->stall = s->fatal = 0;
}
static void fake_delivered(void *ctx, shape_kafka_contract_list *out)
{
    shape_kafka_fake_producer_store *s = ((fake_ctx *)ctx)->store;
    for (size_t i = 0; i < s->log_len; i++)
        shape_kafka_contract_list_add(out, s->log[i].key, s->log[i].key_len, s->log[i].value, s->log[i].value_len);
}
static void fake_failures(void *ctx, int n) { ((fake_ctx *)ctx)->store->failures = n; }
static void fake_congest(void *ctx, int n) { ((fake_ctx *)ctx)->store->full = n; }
static uint64_t fake_hits(void *ctx) { return ((fake_ctx *)ctx)->store->hits; }
static void fake_rejections(void *ctx, int n) { ((fake_ctx *)ctx)->store->reject = n; }

static void contract_suite_passes(void)
{
    shape_err err;
    fake_ctx ctx = {.store = NULL};
    check(shape_kafka_fake_producer_store_new(&ctx.store, &err) == SHAPE_OK, "FakeProducer store");
    if (!ctx.store) return;
    const shape_kafka_emitter_harness h = {.name = "kafka over FakeProducer", .option_noun = "kafka", .ctx = &ctx,
                                     .ordered = 1, .open = fake_open, .reset = fake_reset,
                                     .delivered = fake_delivered, .inject_failures = fake_failures,
                                     .congest = fake_congest, .congestion_hits = fake_hits,
                                     .inject_rejections = fake_rejections};
    const shape_kafka_emitter_harness *const all[] = {&h};
    check(shape_kafka_emitter_contract_run("kafka over FakeProducer", all, 1) == 0, "the emitter contract suite");
    shape_kafka_fake_producer_store_free(ctx.store);
}

int main(void)
{
    fake_broker_reads_back();
    fake_registry_registers();
    contract_suite_passes();
    if (failures) return 1;
    printf("ok: FakeBroker, fake registry and the emitter contract suite\n");
    return 0;
}

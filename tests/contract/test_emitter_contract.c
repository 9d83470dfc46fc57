/* test_emitter_contract.c — the emitter contract (tests/support/
 * emitter_contract.h) run on every in-process destination: file://,
 * jsonl://, console://, null://, and kafka:// over FakeProducer.
 *
 * Each destination is described by a harness (open it, empty it, read back
 * what it holds, inject its own faults); the suite runs the same checks on
 * all of them. kafka:// over FakeProducer also gets its native faults:
 * partial delivery failures, queue-full episodes and refusals. (kafka://
 * over `shape broker` runs the same suite in tests/emulator/
 * test_emitter_contract_broker.c.) A few checks that belong to one kind of
 * destination follow: a fresh file open truncates, a jsonl table name that
 * cannot be a file name is refused.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "shape/emit.h"
#include "shape/options.h"
#include "support/emitter_contract.h"
#include "testing/fake_producer.h"

static char dir[64];

/* Each line of path (if it exists) as a body without a wire key. */
static void read_lines(const char *path, shape_kafka_contract_list *out)
{
    FILE *f = fopen(path, "r");
    if (!f) return;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n') len--;
        shape_kafka_contract_list_add(out, NULL, 0, line, (size_t)len);
    }
    free(line);
    fclose(f);
}

static int open_builtin(const char *uri, const shape_options *options, const shape_emitter_type **type,
                        shape_emitter **out, shape_err *err)
{
    *out = NULL;
    *type = shape_emit_builtin_for_uri(uri);
    assert_non_null(*type);
    return (*type)->open(uri, options, out, err);
}

/* ---- file:// --------------------------------------------------------------------- */

typedef struct file_ctx {
    char path[128], uri[160];
} file_ctx;

static int file_open(void *ctx, const shape_options *o, const shape_emitter_type **type, shape_emitter **out,
                     shape_err *err)
{
    return open_builtin(((file_ctx *)ctx)->uri, o, type, out, err);
}
static void file_reset(void *ctx) { unlink(((file_ctx *)ctx)->path); }
static void file_delivered(void *ctx, shape_kafka_contract_list *out) { read_lines(((file_ctx *)ctx)->path, out); }

/* ---- jsonl:// (one file per table) ------------------------------------------------- */

typedef struct jsonl_ctx {
    char dir[128], uri[160];
} jsonl_ctx;

static const char *const plan_tables[] = {"product", "order_line"}; /* the suite's plan, in order */

static int jsonl_open(void *ctx, const shape_options *o, const shape_emitter_type **type, shape_emitter **out,
                      shape_err *err)
{
    return open_builtin(((jsonl_ctx *)ctx)->uri, o, type, out, err);
}
static void jsonl_reset(void *ctx)
{
    char path[192];
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s.jsonl", ((jsonl_ctx *)ctx)->dir, plan_tables[i]);
        unlink(path);
    }
}
static void jsonl_delivered(void *ctx, shape_kafka_contract_list *out)
{
    char path[192];
    for (size_t i = 0; i < 2; i++) { /* tables go out one after another */
        snprintf(path, sizeof path, "%s/%s.jsonl", ((jsonl_ctx *)ctx)->dir, plan_tables[i]);
        read_lines(path, out);
    }
}

/* ---- console:// (standard output captured into a file while open) --------------------- */

typedef struct console_ctx {
    char path[128];
    int saved; /* the real stdout while redirected, else -1 */
} console_ctx;

static int console_open(void *ctx, const shape_options *o, const shape_emitter_type **type, shape_emitter **out,
                        shape_err *err)
{
    console_ctx *c = ctx;
    if (c->saved < 0) { /* a refused open may leave it redirected: after_close restores */
        fflush(stdout);
        c->saved = dup(1);
        int fd = open(c->path, O_WRONLY | O_CREAT | O_APPEND, 0600);
        assert_true(c->saved >= 0 && fd >= 0);
        dup2(fd, 1);
        close(fd);
    }
    return open_builtin("console", o, type, out, err);
}
static void console_after_close(void *ctx)
{
    console_ctx *c = ctx;
    if (c->saved < 0) return;
    fflush(stdout);
    dup2(c->saved, 1);
    close(c->saved);
    c->saved = -1;
}
static void console_reset(void *ctx) { unlink(((console_ctx *)ctx)->path); }
static void console_delivered(void *ctx, shape_kafka_contract_list *out) { read_lines(((console_ctx *)ctx)->path, out); }

/* ---- null:// (nothing to read back) ------------------------------------------------------ */

static int null_open(void *ctx, const shape_options *o, const shape_emitter_type **type, shape_emitter **out,
                     shape_err *err)
{
    (void)ctx;
    return open_builtin("null", o, type, out, err);
}
static void null_reset(void *ctx) { (void)ctx; }

/* ---- kafka:// over FakeProducer ----------------------------------------------------------- */

typedef struct fake_ctx {
    shape_kafka_fake_producer_store *store;
    shape_kafka_producer_factory factory;
} fake_ctx;

static int fake_open(void *ctx, const shape_options *o, const shape_emitter_type **type, shape_emitter **out,
                     shape_err *err)
{
    fake_ctx *f = ctx;
    *type = shape_kafka_fake_emitter_type();
    return shape_kafka_fake_emitter_open(f->store, &f->factory, "kafka://broker-a:9092,broker-b:9092/events", o,
                                         out, err);
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
    for (size_t i = 0; i < s->log_len; i++) {
        const shape_kafka_fake_record *r = &s->log[i];
        assert_string_equal(r->topic, "events");
        shape_kafka_contract_list_add(out, r->key, r->key_len, r->value, r->value_len);
    }
}
static void fake_failures(void *ctx, int n) { ((fake_ctx *)ctx)->store->failures = n; }
static void fake_congest(void *ctx, int n) { ((fake_ctx *)ctx)->store->full = n; }
static uint64_t fake_hits(void *ctx) { return ((fake_ctx *)ctx)->store->hits; }
static void fake_rejections(void *ctx, int n) { ((fake_ctx *)ctx)->store->reject = n; }

/* ---- checks of one kind of destination ------------------------------------------------------ */

static void send_first(const shape_emitter_type *type, shape_emitter *e, const char *body)
{
    shape_emit_message m = {0};
    m.value = body;
    m.value_len = strlen(body);
    m.partition = -1;
    m.table = "t";
    shape_err err;
    assert_int_equal(type->send(e, &m, 1, &err), SHAPE_OK);
    assert_int_equal(m.outcome, SHAPE_EMIT_DELIVERED);
}

static void test_file_fresh_open_truncates(void **state)
{
    file_ctx *c = *state;
    const shape_emitter_type *type;
    shape_emitter *e;
    shape_err err;
    file_reset(c);
    assert_int_equal(file_open(c, NULL, &type, &e, &err), SHAPE_OK);
    send_first(type, e, "{\"a\":1}");
    type->close(e);
    assert_int_equal(file_open(c, NULL, &type, &e, &err), SHAPE_OK);
    send_first(type, e, "{\"b\":2}");
    type->close(e);
    shape_kafka_contract_list got = {0};
    file_delivered(c, &got);
    assert_int_equal(got.n, 1);
    assert_string_equal(got.bodies[0], "{\"b\":2}");
    shape_kafka_contract_list_reset(&got);
    file_reset(c);
}

static void test_jsonl_refuses_bad_table_name(void **state)
{
    jsonl_ctx *c = *state;
    const shape_emitter_type *type;
    shape_emitter *e;
    shape_err err;
    assert_int_equal(jsonl_open(c, NULL, &type, &e, &err), SHAPE_OK);
    shape_emit_message m = {0};
    m.value = "{}";
    m.value_len = 2;
    m.partition = -1;
    m.table = "../evil";
    assert_int_not_equal(type->send(e, &m, 1, &err), SHAPE_OK);
    type->close(e);
    assert_null(shape_emit_builtin_for_uri("kafka://h:9092/t")); /* kafka:// is the plugin's */
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/shape-contract-sinks-%ld", (long)getpid());
    if (mkdir(dir, 0700) != 0) return 1;
    file_ctx fc;
    snprintf(fc.path, sizeof fc.path, "%s/out.jsonl", dir);
    snprintf(fc.uri, sizeof fc.uri, "file://%s", fc.path);
    jsonl_ctx jc;
    snprintf(jc.dir, sizeof jc.dir, "%s/tables", dir);
    snprintf(jc.uri, sizeof jc.uri, "jsonl://%s", jc.dir);
    console_ctx cc = {.saved = -1};
    snprintf(cc.path, sizeof cc.path, "%s/stdout.jsonl", dir);
    fake_ctx kc = {.store = NULL};
    shape_err err;
    if (shape_kafka_fake_producer_store_new(&kc.store, &err) != SHAPE_OK) return 1;

    const shape_kafka_emitter_harness file_h = {.name = "file", .option_noun = "file", .ctx = &fc, .ordered = 1,
                                          .open = file_open, .reset = file_reset, .delivered = file_delivered};
    const shape_kafka_emitter_harness jsonl_h = {.name = "jsonl", .option_noun = "jsonl", .ctx = &jc, .ordered = 1,
                                           .open = jsonl_open, .reset = jsonl_reset, .delivered = jsonl_delivered};
    const shape_kafka_emitter_harness console_h = {.name = "console", .option_noun = "console", .ctx = &cc,
                                             .ordered = 1, .open = console_open,
                                             .after_close = console_after_close, .reset = console_reset,
                                             .delivered = console_delivered};
    const shape_kafka_emitter_harness null_h = {.name = "null", .option_noun = "null", .ordered = 1, .open = null_open,
                                          .reset = null_reset};
    const shape_kafka_emitter_harness fake_h = {.name = "kafka over FakeProducer", .option_noun = "kafka", .ctx = &kc,
                                          .ordered = 1, .open = fake_open, .reset = fake_reset,
                                          .delivered = fake_delivered, .inject_failures = fake_failures,
                                          .congest = fake_congest, .congestion_hits = fake_hits,
                                          .inject_rejections = fake_rejections};
    const shape_kafka_emitter_harness *const harnesses[] = {&file_h, &jsonl_h, &console_h, &null_h, &fake_h};
    int failed = shape_kafka_emitter_contract_run("emitter contract", harnesses, sizeof harnesses / sizeof harnesses[0]);

    const struct CMUnitTest own[] = {
        cmocka_unit_test_prestate(test_file_fresh_open_truncates, &fc),
        cmocka_unit_test_prestate(test_jsonl_refuses_bad_table_name, &jc),
    };
    failed += cmocka_run_group_tests_name("destination specifics", own, NULL, NULL);

    jsonl_reset(&jc);
    rmdir(jc.dir);
    file_reset(&fc);
    console_reset(&cc);
    rmdir(dir);
    shape_kafka_fake_producer_store_free(kc.store);
    return failed ? 1 : 0;
}

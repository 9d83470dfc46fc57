/* test_emitter_contract.c — the emitter contract (shape/plugin.h, ABI 2)
 * checked on the core's destinations: file://, jsonl://, console://, null://.
 *
 * What every emitter must do, whatever it writes to: refuse unknown options
 * and envelopes at open, naming them, before anything is written; return
 * from send with an outcome for every message; deliver the messages' bodies
 * in order (one JSON line each for the line sinks); truncate on a fresh
 * open and append on a resuming one. (The kafka:// emitter is held to the
 * same rules by tests/emulator/test_emit_kafka.sh against `shape broker`.)
 */
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

#define N 300

static char dir[64];
static char bodies[N][512];
static shape_emit_message msgs[N];

/* N flat events of order_line (small, seed 11) as messages. */
static void make_messages(void)
{
    shape_err err;
    shape_retail *d;
    shape_retail_table *t;
    shape_gen_row row;
    assert_int_equal(shape_retail_open("small", 11, &d, &err), SHAPE_OK);
    assert_int_equal(shape_retail_table_open_id(d, SHAPE_RETAIL_ORDER_LINE, &t, &err), SHAPE_OK);
    const shape_gen_column *cols;
    size_t ncols = shape_retail_columns(SHAPE_RETAIL_ORDER_LINE, &cols);
    shape_event_table et;
    assert_int_equal(shape_event_table_init(&et, "order_line", cols, ncols, -1, &err), SHAPE_OK);
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(shape_retail_table_row(t, i, &row, &err), SHAPE_OK);
        char *e = shape_event_encode(&et, SHAPE_ENVELOPE_FLAT, i, &row, bodies[i]);
        memset(&msgs[i], 0, sizeof msgs[i]);
        msgs[i].value = bodies[i];
        msgs[i].value_len = (size_t)(e - bodies[i]);
        msgs[i].partition = -1;
        msgs[i].table = "order_line";
    }
    shape_retail_table_close(t);
    shape_retail_close(d);
}

static shape_options *opts(const char *kv1, const char *kv2)
{
    shape_options *o = shape_options_new();
    shape_err err;
    if (kv1) assert_int_equal(shape_options_set_kv(o, kv1, &err), SHAPE_OK);
    if (kv2) assert_int_equal(shape_options_set_kv(o, kv2, &err), SHAPE_OK);
    return o;
}

/* Send all messages; every one must come back DELIVERED. */
static void send_all(const shape_emitter_type *type, shape_emitter *e, size_t n)
{
    shape_err err;
    for (size_t i = 0; i < n; i++) msgs[i].outcome = SHAPE_EMIT_PENDING;
    assert_int_equal(type->send(e, msgs, n, &err), SHAPE_OK);
    for (size_t i = 0; i < n; i++) assert_int_equal(msgs[i].outcome, SHAPE_EMIT_DELIVERED);
    assert_int_equal(type->flush(e, &err), SHAPE_OK);
}

/* The file holds exactly bodies[0..n) (then again from `again`) as lines. */
static void assert_lines(const char *path, size_t n, size_t again)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    size_t i = 0;
    while (fgets(line, sizeof line, f)) {
        size_t k = i < n ? i : i - n;
        assert_true(i < n + again);
        line[strcspn(line, "\n")] = 0;
        assert_string_equal(line, bodies[k]);
        i++;
    }
    fclose(f);
    assert_int_equal(i, n + again);
}

static void check_refusals(const char *uri, const char *what)
{
    const shape_emitter_type *type = shape_emit_builtin_for_uri(uri);
    assert_non_null(type);
    shape_err err;
    shape_emitter *e = NULL;
    shape_options *o = opts("bogus=1", NULL);
    assert_int_equal(type->open(uri, o, &e, &err), SHAPE_EINVAL);
    char want[128];
    snprintf(want, sizeof want, "unknown %s emitter options: ['bogus']", what);
    assert_string_equal(err.message, want);
    assert_null(e);
    shape_options_free(o);
    o = opts("envelope=xml", NULL);
    assert_int_equal(type->open(uri, o, &e, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "unknown envelope 'xml'"));
    shape_options_free(o);
}

static void test_file(void **state)
{
    (void)state;
    char uri[128], path[96];
    snprintf(path, sizeof path, "%s/out.jsonl", dir);
    snprintf(uri, sizeof uri, "file://%s", path);
    check_refusals(uri, "file");
    assert_int_equal(access(path, F_OK), -1); /* refused opens wrote nothing */
    const shape_emitter_type *type = shape_emit_builtin_for_uri(uri);
    shape_err err;
    shape_emitter *e;
    shape_options *o = opts("envelope=flat", NULL);
    assert_int_equal(type->open(uri, o, &e, &err), SHAPE_OK);
    send_all(type, e, N);
    type->close(e);
    assert_lines(path, N, 0);
    /* resuming appends */
    shape_options_free(o);
    o = opts("resuming=true", NULL);
    assert_int_equal(type->open(uri, o, &e, &err), SHAPE_OK);
    send_all(type, e, 5);
    type->close(e);
    assert_lines(path, N, 5);
    /* a fresh open truncates */
    shape_options_free(o);
    o = opts(NULL, NULL);
    assert_int_equal(type->open(uri, o, &e, &err), SHAPE_OK);
    send_all(type, e, 7);
    type->close(e);
    assert_lines(path, 7, 0);
    shape_options_free(o);
    unlink(path);
}

static void test_jsonl(void **state)
{
    (void)state;
    char uri[128], path[128];
    snprintf(uri, sizeof uri, "jsonl://%s/tables", dir);
    check_refusals(uri, "jsonl");
    const shape_emitter_type *type = shape_emit_builtin_for_uri(uri);
    shape_err err;
    shape_emitter *e;
    assert_int_equal(type->open(uri, NULL, &e, &err), SHAPE_OK);
    send_all(type, e, N);
    /* a table name that cannot be a file name is refused */
    shape_emit_message bad = msgs[0];
    bad.table = "../evil";
    assert_int_not_equal(type->send(e, &bad, 1, &err), SHAPE_OK);
    type->close(e);
    snprintf(path, sizeof path, "%s/tables/order_line.jsonl", dir);
    assert_lines(path, N, 0);
    unlink(path);
    snprintf(path, sizeof path, "%s/tables", dir);
    rmdir(path);
}

static void test_console_and_null(void **state)
{
    (void)state;
    check_refusals("console", "console");
    check_refusals("null", "null");
    shape_err err;
    shape_emitter *e;
    const shape_emitter_type *type = shape_emit_builtin_for_uri("null");
    assert_int_equal(type->open("null", NULL, &e, &err), SHAPE_OK);
    send_all(type, e, N);
    type->close(e);
    /* console: stdout redirected to a file for the check */
    char path[96];
    snprintf(path, sizeof path, "%s/stdout.jsonl", dir);
    fflush(stdout);
    int saved = dup(1);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    dup2(fileno(f), 1);
    type = shape_emit_builtin_for_uri("console");
    assert_int_equal(type->open("console", NULL, &e, &err), SHAPE_OK);
    send_all(type, e, N);
    type->close(e);
    dup2(saved, 1);
    close(saved);
    fclose(f);
    assert_lines(path, N, 0);
    unlink(path);
    assert_null(shape_emit_builtin_for_uri("kafka://h:9092/t"));
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/shape-emitter-contract-%ld", (long)getpid());
    if (mkdir(dir, 0700) != 0) return 1;
    make_messages();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_jsonl),
        cmocka_unit_test(test_console_and_null),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return rc;
}

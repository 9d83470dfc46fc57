/* test_stream.c — the stream runtime (shape/stream.h) against a scripted
 * source.
 *
 * Why: the runtime's promises — a replayed batch is dropped and counted, a
 * connection failure reopens the source exactly at the position after the
 * last batch handed out, giving up after max_reconnects failures in a row,
 * a stop request ends the read, and every batch is seen through the schema
 * frozen from the first — must hold for any source, so they are tested
 * through the plugin interface with a source whose behaviour the test
 * scripts, not through Kafka.
 * How: a plugin with the scheme test:// is added to a registry. Its source
 * reads one partition of N JSON bodies (decoded by the real decoder, with
 * the options the runtime passes, so a frozen schema reaches it as the
 * "schema" option) B at a time from the offset it is opened at; the script
 * says on which calls of next() it fails with SHAPE_ECONN or hands out the
 * previous batch again; with second_batch_shape, the batches after the
 * first change shape (a new column, an all-null one decoded afresh to
 * another type). Every open records its start offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/decode.h"
#include "shape/plugin.h"
#include "shape/registry.h"
#include "shape/stream.h"

enum { MAX_CALLS = 64 };

/* The script and what the source saw. */
static struct {
    int n;                    /* messages in partition 0 */
    int batch;                /* messages per batch */
    char fail[MAX_CALLS];     /* 1: the k-th next() call overall fails with SHAPE_ECONN */
    char replay[MAX_CALLS];   /* 1: the k-th call hands out the previous batch again */
    int calls;
    int64_t opened_at[16];    /* start offset of each open (-1: from the start) */
    int opens;
    int second_batch_shape;   /* 1: bodies after the first batch add "w" and make "v" null */
    char warnings[4][256];
    int n_warnings;
} script;

typedef struct test_source {
    shape_source base;
    shape_decoder *dec;
    int64_t next, prev; /* next offset; first offset of the previous batch */
    shape_decode_stats stats;
} test_source;

static void body_of(int64_t i, char *out, size_t size)
{
    if (script.second_batch_shape && i >= script.batch)
        snprintf(out, size, "{\"id\":%lld,\"v\":null,\"w\":true,\"_shape_event_time\":null}", (long long)i);
    else if (i % 2)
        snprintf(out, size, "{\"id\":%lld,\"v\":%lld,\"_shape_event_time\":null}", (long long)i, (long long)i);
    else
        snprintf(out, size, "{\"id\":%lld,\"v\":%lld,\"_shape_event_time\":%lld}", (long long)i, (long long)i,
                 1700000000000LL + i);
}

static int decode_from(test_source *ts, int64_t first, struct ArrowSchema *schema, struct ArrowArray *array,
                       shape_offsets *after, shape_err *err)
{
    int64_t n = script.n - first < script.batch ? script.n - first : script.batch;
    char bodies[64][128];
    shape_message msgs[64];
    memset(msgs, 0, sizeof msgs);
    for (int64_t i = 0; i < n; i++) {
        body_of(first + i, bodies[i], sizeof bodies[i]);
        msgs[i].offset = first + i;
        msgs[i].value = bodies[i];
        msgs[i].value_len = strlen(bodies[i]);
    }
    /* the second shape is decoded afresh, as by a source that infers each
     * batch's types on its own: the all-null "v" (an integer column so far)
     * is typed utf8 */
    shape_decoder *fresh = NULL;
    if (script.second_batch_shape && first >= script.batch) {
        shape_options *none = shape_options_new();
        int rc = none ? shape_decoder_from_options(none, &fresh, err) : SHAPE_ENOMEM;
        shape_options_free(none);
        SHAPE_RETURN_NOT_OK(rc);
    }
    int rc = shape_decoder_decode(fresh ? fresh : ts->dec, msgs, (size_t)n, schema, array, err);
    shape_decoder_free(fresh);
    SHAPE_RETURN_NOT_OK(rc);
    ts->stats.messages += n;
    ts->stats.rows += array->length;
    shape_offsets_clear(after);
    return shape_offsets_set(after, 0, first + n, err);
}

static int ts_next(shape_source *src, struct ArrowSchema *schema, struct ArrowArray *array, shape_offsets *after,
                   int *end, shape_err *err)
{
    test_source *ts = (test_source *)src;
    int call = script.calls++;
    *end = 0;
    if (call < MAX_CALLS && script.fail[call]) return shape_err_set(err, SHAPE_ECONN, "test: connection lost");
    if (call < MAX_CALLS && script.replay[call] && ts->prev >= 0)
        return decode_from(ts, ts->prev, schema, array, after, err);
    if (ts->next >= script.n) {
        *end = 1;
        return SHAPE_OK;
    }
    ts->prev = ts->next;
    SHAPE_RETURN_NOT_OK(decode_from(ts, ts->next, schema, array, after, err));
    ts->next += array->length;
    return SHAPE_OK;
}

static const shape_decode_stats *ts_stats(const shape_source *src)
{
    return &((const test_source *)src)->stats;
}

static void ts_close(shape_source *src)
{
    test_source *ts = (test_source *)src;
    shape_decoder_free(ts->dec);
    free(ts);
}

static const shape_source_vtable ts_vtable = {ts_next, ts_stats, ts_close, NULL};

static int ts_open(const char *uri, const shape_options *options, const shape_offsets *start, shape_source **out,
                   shape_err *err)
{
    (void)uri;
    test_source *ts = calloc(1, sizeof *ts);
    if (!ts) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    ts->base.vt = &ts_vtable;
    ts->prev = -1;
    int64_t at = -1;
    if (start) shape_offsets_get(start, 0, &at);
    script.opened_at[script.opens++] = at;
    ts->next = at < 0 ? 0 : at;
    int rc = shape_decoder_from_options(options, &ts->dec, err);
    if (rc != SHAPE_OK) {
        free(ts);
        return rc;
    }
    *out = &ts->base;
    return SHAPE_OK;
}

static const char *const ts_schemes[] = {"test", NULL};
static const shape_source_type ts_type = {"test", ts_schemes, "scripted test source", NULL, ts_open, NULL};
static const shape_source_type *const ts_sources[] = {&ts_type, NULL};
static const shape_plugin ts_plugin = {SHAPE_PLUGIN_ABI_VERSION, 0, "shape-test", "0", "scripted source",
                                       ts_sources, NULL, NULL};

static void record_warning(void *ud, const char *message)
{
    (void)ud;
    if (script.n_warnings < 4) snprintf(script.warnings[script.n_warnings++], 256, "%s", message);
}

/* ---- helpers ------------------------------------------------------------------ */

static shape_registry *registry;
static shape_options *options;

static int setup(void **state)
{
    (void)state;
    memset(&script, 0, sizeof script);
    script.n = 10;
    script.batch = 4;
    registry = shape_registry_new();
    shape_err err = {0};
    if (!registry || shape_registry_add(registry, &ts_plugin, "test", &err) != SHAPE_OK) return -1;
    options = shape_options_new();
    return options ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    shape_options_free(options);
    shape_registry_free(registry);
    return 0;
}

static shape_stream *open_stream(int64_t max_reconnects, int freeze, const volatile sig_atomic_t *stop)
{
    shape_stream_config cfg = {.uri = "test://t", .options = options, .registry = registry,
                               .max_reconnects = max_reconnects, .freeze_schema = freeze, .stop = stop,
                               .warn = record_warning};
    shape_stream *s = NULL;
    shape_err err = {0};
    assert_int_equal(shape_stream_new(&cfg, &s, &err), SHAPE_OK);
    return s;
}

/* Read to the end; returns the ids handed out in order (count in *n). */
static int read_all(shape_stream *s, int64_t *ids, int *n, shape_err *err)
{
    *n = 0;
    for (;;) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        int end = 0;
        int rc = shape_stream_next(s, &schema, &array, &end, err);
        if (rc != SHAPE_OK || end) return rc;
        assert_string_equal(schema.children[0]->name, "id");
        const int64_t *v = array.children[0]->buffers[1];
        for (int64_t i = 0; i < array.length; i++) ids[(*n)++] = v[array.children[0]->offset + i];
        array.release(&array);
        schema.release(&schema);
    }
}

static void assert_ids_0_to(const int64_t *ids, int n, int want)
{
    assert_int_equal(n, want);
    for (int i = 0; i < n; i++) assert_int_equal(ids[i], i);
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_reads_everything_once(void **state)
{
    (void)state;
    shape_stream *s = open_stream(0, 0, NULL);
    int64_t ids[64];
    int n;
    shape_err err = {0};
    assert_int_equal(read_all(s, ids, &n, &err), SHAPE_OK);
    assert_ids_0_to(ids, n, 10);
    const shape_stream_counters *c = shape_stream_counters_of(s);
    assert_int_equal(c->batches_read, 3);
    assert_int_equal(c->batches_processed, 3);
    int64_t next = -1;
    assert_true(shape_offsets_get(shape_stream_offset(s), 0, &next));
    assert_int_equal(next, 10);
    assert_true(shape_offsets_get(shape_stream_positions(s), 0, &next));
    assert_int_equal(next, 10);
    assert_int_equal(shape_stream_stats(s).messages, 10);
    assert_true(shape_stream_opened(s));
    shape_stream_free(s);
}

static void test_replay_is_dropped_and_counted(void **state)
{
    (void)state;
    script.replay[1] = 1; /* the second call hands out the first batch again */
    shape_stream *s = open_stream(0, 0, NULL);
    int64_t ids[64];
    int n;
    shape_err err = {0};
    assert_int_equal(read_all(s, ids, &n, &err), SHAPE_OK);
    assert_ids_0_to(ids, n, 10);
    const shape_stream_counters *c = shape_stream_counters_of(s);
    assert_int_equal(c->duplicate_batches, 1);
    assert_int_equal(c->duplicate_rows, 4);
    assert_int_equal(c->batches_read, 4);
    assert_int_equal(c->batches_processed, 3);
    shape_stream_free(s);
}

static void test_connection_failure_reopens_at_the_last_position(void **state)
{
    (void)state;
    script.fail[1] = 1; /* after the first batch (ids 0..3) */
    shape_stream *s = open_stream(3, 0, NULL);
    int64_t ids[64];
    int n;
    shape_err err = {0};
    assert_int_equal(read_all(s, ids, &n, &err), SHAPE_OK);
    assert_ids_0_to(ids, n, 10);
    assert_int_equal(script.opens, 2);
    assert_int_equal(script.opened_at[0], -1);
    assert_int_equal(script.opened_at[1], 4);
    assert_int_equal(shape_stream_counters_of(s)->reconnects, 1);
    assert_int_equal(script.n_warnings, 1);
    assert_string_equal(script.warnings[0], "test: connection lost; reconnecting in 1 s (1 of 3)");
    /* the decoder counters of the closed source are kept */
    assert_int_equal(shape_stream_stats(s).messages, 10);
    shape_stream_free(s);
}

static void test_gives_up_after_max_reconnects(void **state)
{
    (void)state;
    script.fail[0] = script.fail[1] = 1;
    shape_stream *s = open_stream(1, 0, NULL);
    int64_t ids[64];
    int n;
    shape_err err = {0};
    assert_int_equal(read_all(s, ids, &n, &err), SHAPE_ECONN);
    assert_string_equal(err.message, "gave up after 1 reconnect: test: connection lost");
    shape_stream_free(s);

    /* no reconnect allowed: the source's error as it is */
    memset(script.fail, 0, sizeof script.fail);
    script.calls = 0;
    script.fail[0] = 1;
    s = open_stream(0, 0, NULL);
    shape_err_clear(&err);
    assert_int_equal(read_all(s, ids, &n, &err), SHAPE_ECONN);
    assert_string_equal(err.message, "test: connection lost");
    assert_int_equal(shape_stream_counters_of(s)->reconnects, 0);
    shape_stream_free(s);
}

static void test_stop_request_ends_the_read(void **state)
{
    (void)state;
    static volatile sig_atomic_t stop;
    stop = 0;
    shape_stream *s = open_stream(0, 0, &stop);
    struct ArrowSchema schema;
    struct ArrowArray array;
    int end = 0;
    shape_err err = {0};
    assert_int_equal(shape_stream_next(s, &schema, &array, &end, &err), SHAPE_OK);
    assert_false(end);
    array.release(&array);
    schema.release(&schema);
    stop = 1;
    assert_int_equal(shape_stream_next(s, &schema, &array, &end, &err), SHAPE_OK);
    assert_true(end);
    assert_true(shape_stream_stopped(s));
    assert_null(array.release);
    assert_int_equal(shape_stream_counters_of(s)->batches_processed, 1);
    shape_stream_free(s);
}

static void test_frozen_schema_view(void **state)
{
    (void)state;
    script.second_batch_shape = 1;
    shape_stream *s = open_stream(0, 1, NULL);
    shape_err err = {0};
    struct ArrowSchema schema;
    struct ArrowArray array;
    int end = 0;
    assert_int_equal(shape_stream_next(s, &schema, &array, &end, &err), SHAPE_OK);
    int64_t first_columns = schema.n_children;
    assert_true(first_columns >= 3); /* id, v, _shape_event_time */
    array.release(&array);
    schema.release(&schema);
    size_t n_frozen;
    const shape_stream_column *frozen = shape_stream_schema(s, &n_frozen);
    assert_non_null(frozen);
    assert_int_equal((int64_t)n_frozen, first_columns);
    /* the second batch has "w" (not frozen) and an all-null "v": both left out */
    assert_int_equal(shape_stream_next(s, &schema, &array, &end, &err), SHAPE_OK);
    for (int64_t i = 0; i < schema.n_children; i++) {
        assert_string_not_equal(schema.children[i]->name, "w");
        assert_string_not_equal(schema.children[i]->name, "v");
    }
    assert_int_equal(schema.n_children, array.n_children);
    assert_int_equal(array.length, 4);
    /* the view's schema and array release independently, in either order */
    schema.release(&schema);
    array.release(&array);
    /* ids 0..3: the odd ones have no event time; 4..7 none */
    assert_int_equal(shape_stream_null_event_time(s), 2 + 4);
    shape_stream_free(s);
}

static void test_restore_continues_at_the_offset(void **state)
{
    (void)state;
    shape_offsets at = SHAPE_OFFSETS_INIT;
    shape_err err = {0};
    assert_int_equal(shape_offsets_set(&at, 0, 8, &err), SHAPE_OK);
    shape_stream_counters counters = {.batches_read = 2, .batches_processed = 2, .checkpoints = 1};
    shape_stream_resume_point point = {.offset = &at, .positions = &at, .counters = &counters};
    shape_stream *s = open_stream(0, 0, NULL);
    assert_int_equal(shape_stream_restore(s, &point, &err), SHAPE_OK);
    int64_t ids[64];
    int n;
    assert_int_equal(read_all(s, ids, &n, &err), SHAPE_OK);
    assert_int_equal(n, 2);
    assert_int_equal(ids[0], 8);
    assert_int_equal(script.opened_at[0], 8);
    assert_int_equal(shape_stream_counters_of(s)->batches_processed, 3);
    assert_int_equal(shape_stream_counters_of(s)->checkpoints, 1);
    shape_offsets_free(&at);
    shape_stream_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reads_everything_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replay_is_dropped_and_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection_failure_reopens_at_the_last_position, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gives_up_after_max_reconnects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_request_ends_the_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frozen_schema_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restore_continues_at_the_offset, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

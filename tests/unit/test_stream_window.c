/* test_stream_window.c — the windowed profiler (shape/stream_window.h)
 * alone: a state saved mid-stream and loaded into a new profiler continues
 * to exactly the windows of an uninterrupted one (every kind), damaged
 * states are refused, the configuration checks, per-partition watermarks
 * (a partition with nothing yet holds the watermark to newest − skew), and
 * the ISO bounds. The window semantics against an independent model are
 * tested end to end in tests/contract/test_stream_windows.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "shape/decode.h"
#include "shape/stream_window.h"
#include "shape/windows_file.h"

#define BASE_MS 1767225600000LL
#define S 1000000LL

/* A batch of rows i in [from, to): {"i": i, "v": ..., "_shape_event_time": ms}. */
static void make_batch(int64_t from, int64_t to, int64_t (*time_ms)(int64_t), struct ArrowSchema *schema,
                       struct ArrowArray *array)
{
    shape_decode_options o;
    shape_decode_options_init(&o);
    shape_decoder *dec = NULL;
    shape_err err = {0};
    assert_int_equal(shape_decoder_new(&o, NULL, &dec, &err), SHAPE_OK);
    size_t n = (size_t)(to - from);
    shape_message *msgs = calloc(n, sizeof *msgs);
    char **bodies = calloc(n, sizeof *bodies);
    for (size_t k = 0; k < n; k++) {
        int64_t i = from + (int64_t)k;
        bodies[k] = malloc(128);
        snprintf(bodies[k], 128, "{\"i\": %lld, \"v\": %lld.5, \"_shape_event_time\": %lld}", (long long)i,
                 (long long)((i * 37) % 101), (long long)time_ms(i));
        msgs[k] = (shape_message){.partition = 0, .offset = i, .value = bodies[k], .value_len = strlen(bodies[k])};
    }
    assert_int_equal(shape_decoder_decode(dec, msgs, n, schema, array, &err), SHAPE_OK);
    for (size_t k = 0; k < n; k++) free(bodies[k]);
    free(bodies);
    free(msgs);
    shape_decoder_free(dec);
}

/* out of order by up to 40 s, a few rows 10 minutes late */
static int64_t jitter_ms(int64_t i)
{
    int64_t t = BASE_MS + i * 700 - (i * 7919) % 40000;
    return i % 53 == 17 ? t - 600000 : t;
}

typedef struct lines {
    char *text;
    size_t len, cap;
} lines;

static int collect(void *ud, const shape_window_closed *w, shape_err *err)
{
    lines *l = ud;
    char *line = NULL;
    size_t n = 0;
    SHAPE_RETURN_NOT_OK(shape_windows_file_line(w, &line, &n, err));
    if (l->len + n + 1 > l->cap) {
        l->cap = (l->len + n + 1) * 2;
        l->text = realloc(l->text, l->cap);
    }
    memcpy(l->text + l->len, line, n);
    l->len += n;
    l->text[l->len] = '\0';
    free(line);
    return SHAPE_OK;
}

static void feed(shape_window_profiler *w, int64_t from, int64_t to, int64_t batch, lines *out)
{
    shape_err err = {0};
    int32_t known[1] = {0};
    for (int64_t b = from; b < to; b += batch) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        make_batch(b, b + batch < to ? b + batch : to, jitter_ms, &schema, &array);
        int rc = shape_window_profiler_update(w, &schema, &array, "_shape_event_time", known, 1, 0, 0.0, collect, out,
                                              &err);
        if (rc != SHAPE_OK) fail_msg("update: %s", err.message);
        array.release(&array);
        schema.release(&schema);
    }
}

static void resume_is_exact(shape_window_config cfg)
{
    shape_err err = {0};
    shape_window_profiler *clean = NULL, *first = NULL, *second = NULL;
    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &clean, &err), SHAPE_OK);
    lines a = {0}, b = {0};
    feed(clean, 0, 3000, 97, &a);
    assert_int_equal(shape_window_profiler_close_all(clean, 0, collect, &a, &err), SHAPE_OK);

    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &first, &err), SHAPE_OK);
    feed(first, 0, 97 * 13, 97, &b);
    json_t *state = NULL;
    assert_int_equal(shape_window_profiler_save(first, &state, &err), SHAPE_OK);
    char *text = json_dumps(state, JSON_COMPACT); /* through text, as a checkpoint holds it */
    json_decref(state);
    shape_window_profiler_free(first);
    json_error_t jerr;
    state = json_loads(text, 0, &jerr);
    free(text);
    assert_non_null(state);
    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &second, &err), SHAPE_OK);
    assert_int_equal(shape_window_profiler_load(second, state, &err), SHAPE_OK);
    json_decref(state);
    feed(second, 97 * 13, 3000, 97, &b);
    assert_int_equal(shape_window_profiler_close_all(second, 0, collect, &b, &err), SHAPE_OK);

    assert_true(a.len > 0);
    assert_string_equal(a.text, b.text);
    const shape_window_counters *ca = shape_window_profiler_counters(clean), *cb = shape_window_profiler_counters(second);
    assert_int_equal(ca->rows_in, 3000);
    assert_int_equal(ca->rows_in, cb->rows_in);
    assert_true(ca->late_events > 0);
    assert_int_equal(ca->late_events, cb->late_events);
    assert_int_equal(ca->max_late_lag_us, cb->max_late_lag_us);
    assert_int_equal(ca->windows_emitted, cb->windows_emitted);
    assert_int_equal(ca->batches, cb->batches);
    shape_window_profiler_free(clean);
    shape_window_profiler_free(second);
    free(a.text);
    free(b.text);
}

static void test_resume_is_exact_for_every_kind(void **state)
{
    (void)state;
    resume_is_exact((shape_window_config){.kind = SHAPE_WINDOW_TUMBLING, .size_us = 60 * S, .max_skew_us = 600 * S});
    resume_is_exact((shape_window_config){.kind = SHAPE_WINDOW_SLIDING, .size_us = 90 * S, .slide_us = 60 * S,
                                          .allowed_lateness_us = 5 * S, .max_skew_us = 600 * S});
    resume_is_exact(
        (shape_window_config){.kind = SHAPE_WINDOW_SESSION, .gap_us = 2 * S, .allowed_lateness_us = 20 * S,
                              .max_skew_us = 600 * S});
}

static void refused(shape_window_profiler *w, const char *doc, const char *needle)
{
    json_error_t jerr;
    json_t *j = json_loads(doc, 0, &jerr);
    assert_non_null(j);
    shape_err err = {0};
    assert_int_equal(shape_window_profiler_load(w, j, &err), SHAPE_EINVAL);
    if (!strstr(err.message, needle)) fail_msg("'%s' not in '%s'", needle, err.message);
    json_decref(j);
}

static void test_damaged_states_are_refused(void **state)
{
    (void)state;
    shape_window_config cfg = {.kind = SHAPE_WINDOW_TUMBLING, .size_us = 60 * S};
    shape_window_profiler *w = NULL;
    shape_err err = {0};
    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &w, &err), SHAPE_OK);
    const char *counters = "\"counters\": {\"batches\": 1, \"rows_in\": 1, \"late_events\": 0, \"max_late_lag_us\": 0, "
                           "\"null_event_time\": 0, \"windows_emitted\": 0}";
    char doc[1024];
    refused(w, "[]", "not an object");
    refused(w, "{\"newest_us\": \"x\"}", "times");
    refused(w, "{\"newest_us\": 1, \"watermark_us\": 1, \"emitted_end_us\": null, \"counters\": {\"batches\": -1}}",
            "counters");
    snprintf(doc, sizeof doc, "{\"newest_us\": 1, \"watermark_us\": 1, \"emitted_end_us\": null, %s}", counters);
    refused(w, doc, "partitions or windows");
    snprintf(doc, sizeof doc,
             "{\"newest_us\": 1, \"watermark_us\": 1, \"emitted_end_us\": null, %s, \"partitions\": [{\"id\": 0, "
             "\"newest_us\": 1, \"idle\": false}, {\"id\": 0, \"newest_us\": 1, \"idle\": false}], \"windows\": []}",
             counters);
    refused(w, doc, "a partition twice");
    snprintf(doc, sizeof doc,
             "{\"newest_us\": 1, \"watermark_us\": 1, \"emitted_end_us\": null, %s, \"partitions\": [], \"windows\": "
             "[{\"start_us\": 60, \"end_us\": 0, \"rows\": 1, \"state\": \"AAAA\"}]}",
             counters);
    refused(w, doc, "a window");
    snprintf(doc, sizeof doc,
             "{\"newest_us\": 1, \"watermark_us\": 1, \"emitted_end_us\": null, %s, \"partitions\": [], \"windows\": "
             "[{\"start_us\": 0, \"end_us\": 60, \"rows\": 1, \"state\": \"!!\"}]}",
             counters);
    refused(w, doc, "base64");
    shape_window_profiler_free(w);
}

static void test_config_checks(void **state)
{
    (void)state;
    shape_err err = {0};
    shape_window_config c = {.kind = SHAPE_WINDOW_SLIDING, .size_us = 60 * S, .slide_us = 120 * S};
    assert_int_equal(shape_window_config_check(&c, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "--slide must be <= --size"));
    c = (shape_window_config){.kind = SHAPE_WINDOW_SESSION};
    assert_int_equal(shape_window_config_check(&c, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "--gap must be > 0"));
    c = (shape_window_config){.kind = SHAPE_WINDOW_TUMBLING, .size_us = 1, .allowed_lateness_us = -1};
    assert_int_equal(shape_window_config_check(&c, &err), SHAPE_EINVAL);
    char id[128];
    c = (shape_window_config){.kind = SHAPE_WINDOW_SLIDING, .size_us = 300 * S, .slide_us = 60 * S, .max_skew_us = 5};
    shape_window_config_identity(&c, id, sizeof id);
    assert_string_equal(id, "kind=sliding size_us=300000000 slide_us=60000000 allowed_lateness_us=0");
    shape_window_kind k;
    assert_int_equal(shape_window_kind_parse("session", &k), 0);
    assert_int_equal(k, SHAPE_WINDOW_SESSION);
    assert_int_equal(shape_window_kind_parse("weekly", &k), -1);
}

static int64_t two_partitions_ms(int64_t i) { return BASE_MS + i * 1000; }

static int count_windows(void *ud, const shape_window_closed *w, shape_err *err)
{
    (void)w;
    (void)err;
    (*(int *)ud)++;
    return SHAPE_OK;
}

/* A partition that has delivered nothing holds the watermark at newest −
 * skew: with 2 known partitions and only partition 0 delivering, windows
 * close only once they end max_skew behind the newest event. */
static void test_silent_partition_holds_the_watermark(void **state)
{
    (void)state;
    shape_window_config cfg = {.kind = SHAPE_WINDOW_TUMBLING, .size_us = 60 * S, .max_skew_us = 300 * S};
    shape_window_profiler *w = NULL;
    shape_err err = {0};
    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &w, &err), SHAPE_OK);
    int32_t known[2] = {0, 1};
    struct ArrowSchema schema;
    struct ArrowArray array;
    make_batch(0, 600, two_partitions_ms, &schema, &array); /* 10 minutes on partition 0 */
    int closed = 0;
    assert_int_equal(shape_window_profiler_update(w, &schema, &array, "_shape_event_time", known, 2, 0, 0.0,
                                                  count_windows, &closed, &err),
                     SHAPE_OK);
    array.release(&array);
    schema.release(&schema);
    int64_t wm;
    assert_true(shape_window_profiler_watermark(w, &wm));
    assert_int_equal(wm, BASE_MS * 1000 + 599 * S - 300 * S); /* newest - skew */
    assert_int_equal(closed, 4);                               /* [0, 1m) .. [3m, 4m) end <= 4m59s */
    shape_window_profiler_free(w);
}

static void test_iso_bounds(void **state)
{
    (void)state;
    char buf[64];
    shape_window_iso(0, buf, sizeof buf);
    assert_string_equal(buf, "1970-01-01T00:00:00+00:00");
    shape_window_iso(1767225600000000LL + 500000, buf, sizeof buf);
    assert_string_equal(buf, "2026-01-01T00:00:00.500000+00:00");
    shape_window_iso(INT64_MIN + 1, buf, sizeof buf);
    assert_string_equal(buf, "0001-01-01T00:00:00+00:00");
    shape_window_iso(INT64_MAX, buf, sizeof buf);
    assert_string_equal(buf, "9999-12-31T23:59:59.999999+00:00");
}

/* The first 1-minute pane at the bottom of the range: align() saturates to
 * INT64_MIN for the times below the first pane that starts in range
 * (-9223372036800000000 µs), and a row of that pane after one of them must
 * still get its own pane (the router keeps the last pane's bounds, never a
 * saturated one's). */
static int64_t bottom_ms(int64_t i)
{
    static const int64_t t[] = {-9223372036854775LL, -9223372036800000LL, -9223372036799999LL, -9223372036854770LL};
    return t[i];
}

static void test_panes_at_the_bottom_of_the_range(void **state)
{
    (void)state;
    shape_err err = {0};
    shape_window_config cfg = {.kind = SHAPE_WINDOW_TUMBLING, .size_us = 60 * S, .max_skew_us = 600 * S};
    shape_window_profiler *w = NULL;
    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &w, &err), SHAPE_OK);
    struct ArrowSchema schema;
    struct ArrowArray array;
    make_batch(0, 4, bottom_ms, &schema, &array);
    int32_t known[1] = {0};
    lines out = {0};
    assert_int_equal(shape_window_profiler_update(w, &schema, &array, "_shape_event_time", known, 1, 0, 0.0, collect,
                                                  &out, &err),
                     SHAPE_OK);
    array.release(&array);
    schema.release(&schema);
    assert_int_equal(shape_window_profiler_close_all(w, 0, collect, &out, &err), SHAPE_OK);
    /* the oldest window is the saturated pane's, with rows 0 and 3 only (rows 1 and 2
     * routed to it would make 4). (The next pane's window is not written: the
     * saturated pane overlaps it, so close_panes passes over it — a separate, older
     * corner of the range, left as it is.) */
    assert_non_null(out.text);
    char *nl = strchr(out.text, '\n');
    assert_non_null(nl);
    json_error_t jerr;
    json_t *first = json_loadb(out.text, (size_t)(nl - out.text), 0, &jerr);
    assert_non_null(first);
    assert_true(json_integer_value(json_object_get(first, "start_us")) == INT64_MIN);
    assert_int_equal(json_integer_value(json_object_get(first, "rows")), 2);
    json_decref(first);
    assert_int_equal(shape_window_profiler_counters(w)->rows_in, 4);
    free(out.text);
    shape_window_profiler_free(w);
}

/* Profilers taking disjoint runs of the same batches (update_runs, the
 * batch's newest time given) keep the clock of one profiler of all the
 * rows: the same watermark after every batch, late rows and rows split
 * between them; one taking every row in runs writes that profiler's
 * windows byte for byte. */
static void test_runs_share_one_clock(void **state)
{
    (void)state;
    shape_err err = {0};
    shape_window_config cfg = {.kind = SHAPE_WINDOW_TUMBLING, .size_us = 60 * S};
    shape_window_profiler *all = NULL, *whole = NULL, *odd = NULL, *even = NULL;
    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &all, &err), SHAPE_OK);
    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &whole, &err), SHAPE_OK);
    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &odd, &err), SHAPE_OK);
    assert_int_equal(shape_window_profiler_new("t", NULL, &cfg, &even, &err), SHAPE_OK);
    lines la = {0}, lw = {0}, lo = {0}, le = {0};
    int32_t known[1] = {0};
    shape_profile_run runs_odd[64], runs_even[64], runs_whole[64];
    for (int64_t b = 0; b < 3000; b += 100) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        make_batch(b, b + 100, jitter_ms, &schema, &array);
        /* rows cut in runs of 1..7 by their index, alternately odd's and even's */
        size_t no = 0, ne = 0, nw = 0;
        for (int64_t r = 0, k = 0; r < 100; k++) {
            int64_t len = 1 + (b + r) % 7;
            if (r + len > 100) len = 100 - r;
            shape_profile_run run = {r, len};
            if (k % 2) runs_odd[no++] = run;
            else runs_even[ne++] = run;
            runs_whole[nw++] = run;
            r += len;
        }
        int64_t newest;
        assert_int_equal(shape_window_batch_newest(&schema, &array, "_shape_event_time", &newest, &err), SHAPE_OK);
        assert_int_equal(shape_window_profiler_update(all, &schema, &array, "_shape_event_time", known, 1, 0, 0.0,
                                                      collect, &la, &err),
                         SHAPE_OK);
        assert_int_equal(shape_window_profiler_update_runs(whole, &schema, &array, runs_whole, nw, newest,
                                                           "_shape_event_time", known, 1, 0, 0.0, collect, &lw, &err),
                         SHAPE_OK);
        assert_int_equal(shape_window_profiler_update_runs(odd, &schema, &array, runs_odd, no, newest,
                                                           "_shape_event_time", known, 1, 0, 0.0, collect, &lo, &err),
                         SHAPE_OK);
        assert_int_equal(shape_window_profiler_update_runs(even, &schema, &array, runs_even, ne, newest,
                                                           "_shape_event_time", known, 1, 0, 0.0, collect, &le, &err),
                         SHAPE_OK);
        int64_t wa, wo, we;
        assert_true(shape_window_profiler_watermark(all, &wa));
        assert_true(shape_window_profiler_watermark(odd, &wo) && wo == wa);
        assert_true(shape_window_profiler_watermark(even, &we) && we == wa);
        array.release(&array);
        schema.release(&schema);
    }
    const shape_window_counters *ca = shape_window_profiler_counters(all), *co = shape_window_profiler_counters(odd),
                                *ce = shape_window_profiler_counters(even);
    assert_true(ca->late_events > 0);
    assert_int_equal(co->late_events + ce->late_events, ca->late_events);
    assert_int_equal(co->rows_in + ce->rows_in, ca->rows_in);
    assert_true(co->rows_in > 0 && ce->rows_in > 0);
    assert_non_null(la.text);
    assert_non_null(lw.text);
    assert_string_equal(lw.text, la.text);
    /* a run out of order is refused */
    struct ArrowSchema schema;
    struct ArrowArray array;
    make_batch(0, 10, jitter_ms, &schema, &array);
    shape_profile_run bad[2] = {{5, 2}, {0, 2}};
    assert_int_equal(shape_window_profiler_update_runs(odd, &schema, &array, bad, 2, 0, "_shape_event_time", known, 1,
                                                       0, 0.0, collect, &lo, &err),
                     SHAPE_EINVAL);
    array.release(&array);
    schema.release(&schema);
    free(la.text);
    free(lw.text);
    free(lo.text);
    free(le.text);
    shape_window_profiler_free(all);
    shape_window_profiler_free(whole);
    shape_window_profiler_free(odd);
    shape_window_profiler_free(even);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_is_exact_for_every_kind),
        cmocka_unit_test(test_damaged_states_are_refused),
        cmocka_unit_test(test_config_checks),
        cmocka_unit_test(test_silent_partition_holds_the_watermark),
        cmocka_unit_test(test_iso_bounds),
        cmocka_unit_test(test_panes_at_the_bottom_of_the_range),
        cmocka_unit_test(test_runs_share_one_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

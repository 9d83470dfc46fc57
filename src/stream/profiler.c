/* profiler.c — the resumable stream profiler (shape/stream_profiler.h):
 * the global window, or the windowed profiler (shape/stream_window.h),
 * over a shape_stream.
 *
 * Why: exactness after a crash is a property of the order of three things
 * — which batches are in the profile state, which positions the checkpoint
 * records, which file is written first — and it belongs in one place that
 * every caller shares.
 * How: each new batch from the stream is submitted to the profile worker;
 * a checkpoint first drains the worker (every batch taken is in the state),
 * then records the stream's offset, positions and counters with the state.
 * The checkpoint counter is counted before the document is written (the
 * document says how many checkpoints it completes) and taken back if the
 * write fails.
 * Windowed kinds take the same path: each batch goes to the window
 * profiler on a task thread of its own, one behind the reader like the
 * profile worker (with the batch's partition as the stream saw it,
 * shape_stream_batch_partition, and the known partitions copied), and the
 * windows the batch closes are in the windows file before the checkpoint
 * that counts the batch — so a crash can repeat a window (the file drops
 * it) but never lose one.
 * Split (--split-by): each batch goes to a task thread like the windowed
 * one, where the split's router (shape/stream_split.h, the one the library
 * call over an ArrowArrayStream uses) cuts it into runs of rows with the
 * same header or field value, and each table takes only its own runs,
 * zero-copy slices of the struct array, in one call
 * (shape_split_profiles_update) — so each table sees its rows in stream
 * order and no table looks at another's rows.
 * Split with a window kind: the window task routes each batch the same
 * way and hands every table's window profiler its runs
 * (shape_window_profiler_update_runs) with the whole batch's newest event
 * time, so all tables keep one watermark (the one a profiler of all the
 * rows would have); a new table copies the clock of the first. Each closed
 * window goes to the windows file with its table.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "shape/stream_profiler.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "shape/clock.h"
#include "shape/paths.h"
#include "shape/profile_worker.h"
#include "shape/stream_checkpoint.h"
#include "shape/stream_split.h"
#include "shape/task.h"
#include "shape/windows_file.h"

/* Windowed batches queued for the window task behind the reader: its jobs
 * are short (a windowed read's batches are small) and uneven (the odd one
 * closes windows, merging and writing their profiles): with few in flight
 * the reader waits out every slow one, and the decoding behind it too. The
 * queue holds about WINDOW_QUEUE_ROWS rows' worth of batches (64 of the
 * windowed default of 1,024 rows), never fewer than WINDOW_QUEUE_MIN
 * batches nor more than WINDOW_QUEUE_MAX (the batch size is the stream
 * option's, 65,536 when unset). */
#define WINDOW_QUEUE_MIN 8
#define WINDOW_QUEUE_MAX 64
#define WINDOW_QUEUE_ROWS 65536

struct shape_stream_profiler {
    shape_stream_profiler_config cfg;
    char fingerprint[256];
    shape_stream *stream;
    shape_profile *profile;
    shape_profile_worker *worker; /* profiles the batches, one behind the reader */
    shape_window_profiler *win;   /* windowed kinds; NULL for global */
    char window_identity[256];
    shape_windows_file *wfile;    /* opened at the first window */
    shape_windows_file *sfile;    /* window states (--state), likewise */
    int wrote_windows;
    /* windowed: batches are profiled (and their windows written) on wtask,
     * up to wdepth of them queued behind the reader; jobs is a ring of
     * wdepth + 1 slots, next the one the next batch takes (a slot is
     * reused only once the task has room again, so its job has finished).
     * The first failure sticks (wfail, wfail_err: written by the task's jobs,
     * read by the reader after a drain): the jobs after it release their
     * batch unprofiled. */
    shape_task *wtask;
    struct window_job {
        shape_stream_profiler *p;
        struct ArrowSchema schema;
        struct ArrowArray array;
        int32_t *known;
        size_t n_known, cap_known;
        int32_t partition;
        double now;
        int busy;
        int failed;     /* this job's batch failed (read by the reader when the slot comes back) */
        int overflowed; /* split: the router's overflow after this job (read by the reader when the slot comes back) */
    } jobs[WINDOW_QUEUE_MAX + 1];
    size_t next_job, wdepth;
    int wfail;
    shape_err wfail_err;
    /* split: the tables in order of first row (sp: the global window's
     * profiles), batch k split on stask; warned: the overflow warning is out */
    int split, warned;
    shape_split_profiles *sp;
    /* split with a window kind: the router and a window profiler per table
     * (its name the router's), all on one clock
     * (shape_window_profiler_copy_clock) */
    shape_split *wrouter;
    shape_window_profiler **wtabs;
    size_t n_wtabs, cap_wtabs;
    shape_window_counters wsum; /* the tables' counters, summed */
    shape_task *stask;
    struct split_job {
        shape_stream_profiler *p;
        struct ArrowSchema schema;
        struct ArrowArray array;
        int busy, rc;
        shape_err err;
    } sjob;
    int64_t since_checkpoint;
    int resumed, was_finished;
    int lock_fd; /* the checkpoint's lock (shape_checkpoint_lock), -1: none */
};

/* ---- split with windows ------------------------------------------------------ */

/* The router made table t: its window profiler, with the clock of the
 * tables before it. */
static int made_wtable(void *ud, size_t t, const char *name, shape_err *err)
{
    shape_stream_profiler *p = ud;
    if (t >= p->cap_wtabs) {
        size_t cap = p->cap_wtabs ? 2 * p->cap_wtabs : 16;
        shape_window_profiler **w = realloc(p->wtabs, cap * sizeof *w);
        if (!w) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        p->wtabs = w;
        p->cap_wtabs = cap;
    }
    shape_window_profiler *w = NULL;
    int rc = shape_window_profiler_new(name, &p->cfg.profile, &p->cfg.window, &w, err);
    if (rc == SHAPE_OK && t) rc = shape_window_profiler_copy_clock(w, p->wtabs[0], err);
    if (rc != SHAPE_OK) {
        shape_window_profiler_free(w);
        return rc;
    }
    p->wtabs[t] = w;
    p->n_wtabs = t + 1;
    return SHAPE_OK;
}

typedef struct table_emit {
    shape_stream_profiler *p;
    const char *table;
} table_emit;

static int emit_window(void *ud, const shape_window_closed *w, shape_err *err);

static int emit_table_window(void *ud, const shape_window_closed *w, shape_err *err)
{
    const table_emit *t = ud;
    shape_window_closed c = *w;
    c.table = t->table;
    return emit_window(t->p, &c, err);
}

static void sum_window_counters(shape_stream_profiler *p)
{
    shape_window_counters s = {0};
    for (size_t i = 0; i < p->n_wtabs; i++) {
        const shape_window_counters *c = shape_window_profiler_counters(p->wtabs[i]);
        if (c->batches > s.batches) s.batches = c->batches;
        s.rows_in += c->rows_in;
        s.late_events += c->late_events;
        if (c->max_late_lag_us > s.max_late_lag_us) s.max_late_lag_us = c->max_late_lag_us;
        s.null_event_time += c->null_event_time;
        s.windows_emitted += c->windows_emitted;
    }
    p->wsum = s;
}

/* A batch into its tables' windows: routed once (shape_split_route; new
 * tables join on the clock as it was before this batch), then every table
 * takes its own runs, its clock moved by the whole batch's newest time, so
 * all keep one watermark. */
static int split_window_batch(shape_stream_profiler *p, const struct ArrowSchema *schema,
                              const struct ArrowArray *array, const int32_t *known, size_t n_known, int32_t partition,
                              double now, shape_err *err)
{
    const struct ArrowSchema *vs;
    const struct ArrowArray *va;
    SHAPE_RETURN_NOT_OK(shape_split_route(p->wrouter, schema, array, &vs, &va, err));
    int64_t newest = 0;
    int rc = shape_window_batch_newest(vs, va, SHAPE_STREAM_EVENT_TIME_COLUMN, &newest, err);
    for (size_t t = 0; rc == SHAPE_OK && t < p->n_wtabs; t++) {
        table_emit te = {p, shape_split_table_name(p->wrouter, t)};
        const shape_profile_run *runs;
        size_t n = shape_split_runs(p->wrouter, t, &runs);
        rc = shape_window_profiler_update_runs(p->wtabs[t], vs, va, runs, n, newest, SHAPE_STREAM_EVENT_TIME_COLUMN,
                                               known, n_known, partition, now, emit_table_window, &te, err);
    }
    sum_window_counters(p);
    return rc;
}

static json_t *split_windows_save(const shape_stream_profiler *p, shape_err *err, int *rc)
{
    json_t *tables = json_array();
    json_t *doc = json_pack("{s:o, s:I, s:b}", "tables", tables, "values", (json_int_t)shape_split_values(p->wrouter),
                            "overflowed", shape_split_overflowed(p->wrouter));
    *rc = doc ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; *rc == SHAPE_OK && i < p->n_wtabs; i++) {
        json_t *st = NULL;
        *rc = shape_window_profiler_save(p->wtabs[i], &st, err);
        if (*rc == SHAPE_OK &&
            json_array_append_new(tables,
                                  json_pack("{s:s, s:o}", "table", shape_split_table_name(p->wrouter, i), "state", st)))
            *rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    if (*rc != SHAPE_OK) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static int split_windows_load(shape_stream_profiler *p, const json_t *doc, shape_err *err)
{
    const json_t *tables = json_object_get(doc, "tables"), *values = json_object_get(doc, "values");
    if (!json_is_array(tables) || !json_is_integer(values))
        return shape_err_set(err, SHAPE_EINVAL, "the state holds no split windows");
    size_t i;
    const json_t *e;
    json_array_foreach(tables, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "table"));
        if (!name) return shape_err_set(err, SHAPE_EINVAL, "a split window table without its name");
        SHAPE_RETURN_NOT_OK(shape_split_restore_table(p->wrouter, name, err));
        SHAPE_RETURN_NOT_OK(shape_window_profiler_load(p->wtabs[p->n_wtabs - 1], json_object_get(e, "state"), err));
    }
    SHAPE_RETURN_NOT_OK(shape_split_restore_counts(p->wrouter, json_integer_value(values),
                                                   json_is_true(json_object_get(doc, "overflowed")), err));
    sum_window_counters(p);
    return SHAPE_OK;
}

static void split_job_run(void *arg)
{
    struct split_job *j = arg;
    if (j->rc == SHAPE_OK) j->rc = shape_split_profiles_update(j->p->sp, &j->schema, &j->array, &j->err);
    j->array.release(&j->array);
    j->schema.release(&j->schema);
}

static void split_warn(shape_stream_profiler *p, int overflowed);

/* Wait for the batch in flight on the split task; its failure, if any. */
static int split_drain(shape_stream_profiler *p, shape_err *err)
{
    if (p->sjob.busy) {
        shape_task_wait(p->stask);
        p->sjob.busy = 0;
    }
    split_warn(p, shape_split_overflowed(shape_split_profiles_router(p->sp))); /* the task is idle */
    if (p->sjob.rc != SHAPE_OK) *err = p->sjob.err;
    return p->sjob.rc;
}

/* Once, when a value beyond --max-tables went to '_other' (overflowed: as
 * the last batch known to be done left it). */
static void split_warn(shape_stream_profiler *p, int overflowed)
{
    if (overflowed && !p->warned) {
        p->warned = 1;
        char message[300];
        shape_split_warning_text(p->win ? p->wrouter : shape_split_profiles_router(p->sp), message, sizeof message);
        if (p->cfg.warn) p->cfg.warn(p->cfg.ud, message);
        else fprintf(stderr, "shape: warning: %s\n", message);
    }
}

/* Hand the batch (moved) to the split task, after the one before it. */
static int split_submit(shape_stream_profiler *p, struct ArrowSchema *schema, struct ArrowArray *array,
                        shape_err *err)
{
    int rc = split_drain(p, err);
    if (rc != SHAPE_OK) {
        array->release(array);
        schema->release(schema);
        return rc;
    }
    struct split_job *j = &p->sjob;
    j->schema = *schema;
    j->array = *array;
    schema->release = NULL;
    array->release = NULL;
    j->p = p;
    j->busy = 1;
    shape_task_start(p->stask, split_job_run, j);
    return SHAPE_OK;
}

size_t shape_stream_profiler_tables(const shape_stream_profiler *p, const shape_profile *const **out)
{
    if (p->split && !p->win) return shape_split_profiles_tables(p->sp, out);
    *out = NULL;
    return 0;
}

/* Resume from the checkpoint if there is one. */
static int load_checkpoint(shape_stream_profiler *p, shape_err *err)
{
    json_t *doc;
    SHAPE_RETURN_NOT_OK(shape_checkpoint_load(p->cfg.checkpoint, &doc, err));
    if (!doc) return SHAPE_OK;
    shape_stream_profile_expect expect = {.uri = p->cfg.uri,
                                          .partitions = p->cfg.partitions,
                                          .name = p->cfg.name,
                                          .event_time = p->cfg.event_time,
                                          .fingerprint = p->fingerprint,
                                          .kind = shape_window_kind_name(p->cfg.window.kind),
                                          .window = p->win ? p->window_identity : NULL,
                                          .cfg = &p->cfg.profile,
                                          .split_by = p->cfg.split_by,
                                          .max_tables = p->cfg.max_tables,
                                          .counter_names = shape_stream_counter_names(),
                                          .n_counters = SHAPE_STREAM_N_COUNTERS};
    shape_stream_profile_resume got;
    int rc = shape_stream_profile_checkpoint_read(p->cfg.checkpoint, doc, &expect, &got, err);
    json_decref(doc);
    if (rc != SHAPE_OK) return rc;
    shape_stream_counters counters = {0};
    for (size_t i = 0; i < SHAPE_STREAM_N_COUNTERS; i++) *shape_stream_counter_at(&counters, i) = got.counters[i];
    shape_stream_resume_point at = {.offset = got.have_offset ? &got.offset : NULL,
                                    .positions = &got.positions,
                                    .counters = &counters,
                                    .schema = got.have_schema ? got.schema : NULL,
                                    .n_schema = got.n_schema,
                                    .null_event_time = got.null_event_time};
    rc = shape_stream_restore(p->stream, &at, err);
    if (rc == SHAPE_OK && p->win && p->split) rc = split_windows_load(p, got.windowed, err);
    else if (rc == SHAPE_OK && p->win) rc = shape_window_profiler_load(p->win, got.windowed, err);
    if (rc != SHAPE_OK && p->win) shape_err_prefix(err, "checkpoint %s (use another file)", p->cfg.checkpoint);
    p->profile = got.profile; /* moved: the resume no longer owns it */
    got.profile = NULL;
    if (!p->win) { /* likewise the split's tables (with windows: split_windows_load took them) */
        if (p->split && rc == SHAPE_OK) {
            rc = shape_split_profiles_adopt(p->sp, got.tables, got.n_tables, got.split_values, got.split_overflowed,
                                            err); /* moved in, also on failure */
            got.tables = NULL;
            got.n_tables = 0;
        }
    }
    p->was_finished = got.finished;
    p->resumed = 1;
    shape_stream_profile_resume_free(&got);
    return rc;
}

int shape_stream_profiler_new(const shape_stream_profiler_config *cfg, shape_stream_profiler **out, shape_err *err)
{
    *out = NULL;
    shape_stream_profiler *p = calloc(1, sizeof *p);
    if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    p->cfg = *cfg;
    p->lock_fd = -1;
    shape_profile_config_fingerprint(&p->cfg.profile, p->fingerprint, sizeof p->fingerprint);
    shape_stream_config sc = {.uri = cfg->uri,
                              .options = cfg->options,
                              .registry = cfg->registry,
                              .max_reconnects = cfg->max_reconnects,
                              .freeze_schema = 1,
                              .grow_schema = cfg->split_by != NULL, /* each table's fields, whenever it starts */
                              .stop = cfg->stop,
                              .warn = cfg->warn,
                              .ud = cfg->ud};
    int rc = shape_stream_new(&sc, &p->stream, err);
    if (rc == SHAPE_OK && cfg->split_by) {
        p->split = 1;
        shape_split_config split = {.split_by = cfg->split_by,
                                    .name = cfg->name,
                                    .max_tables = cfg->max_tables,
                                    .keep_headers = cfg->keep_headers};
        if (cfg->window.kind != SHAPE_WINDOW_GLOBAL) rc = shape_split_new(&split, made_wtable, p, &p->wrouter, err);
        else rc = shape_split_profiles_new(&split, &p->cfg.profile, &p->sp, err);
    }
    if (rc == SHAPE_OK && cfg->window.kind != SHAPE_WINDOW_GLOBAL) {
        shape_window_config_identity(&cfg->window, p->window_identity, sizeof p->window_identity);
        rc = shape_window_profiler_new(cfg->name, &p->cfg.profile, &cfg->window, &p->win, err);
        if (rc == SHAPE_OK && !cfg->windows_path)
            rc = shape_err_set(err, SHAPE_EINVAL, "a windowed profile needs a windows file (--windows)");
        /* the files open at the first window: refuse a device or FIFO now, before anything is read or written */
        struct stat st;
        if (rc == SHAPE_OK && stat(cfg->windows_path, &st) == 0 && !S_ISREG(st.st_mode))
            rc = shape_err_set(err, SHAPE_EINVAL, "--windows %s is not a regular file", cfg->windows_path);
        if (rc == SHAPE_OK && cfg->window_states_path && stat(cfg->window_states_path, &st) == 0 && !S_ISREG(st.st_mode))
            rc = shape_err_set(err, SHAPE_EINVAL, "--state %s is not a regular file", cfg->window_states_path);
    }
    /* one run per checkpoint: a second is refused while this one holds it */
    if (rc == SHAPE_OK && cfg->checkpoint) rc = shape_checkpoint_lock(cfg->checkpoint, &p->lock_fd, err);
    if (rc == SHAPE_OK && cfg->checkpoint) rc = load_checkpoint(p, err);
    if (rc == SHAPE_OK && !p->profile) rc = shape_profile_new(cfg->name, &p->cfg.profile, &p->profile, err);
    if (rc != SHAPE_OK) {
        shape_stream_profiler_free(p);
        return rc;
    }
    *out = p;
    return SHAPE_OK;
}

void shape_stream_profiler_free(shape_stream_profiler *p)
{
    if (!p) return;
    shape_checkpoint_unlock(p->cfg.checkpoint, p->lock_fd);
    shape_stream_free(p->stream); /* the source first: nothing more is read */
    shape_profile_worker_free(p->worker);
    if (p->wtask) shape_task_wait(p->wtask);
    shape_task_free(p->wtask);
    for (size_t i = 0; i < WINDOW_QUEUE_MAX + 1; i++) {
        struct window_job *j = &p->jobs[i];
        if (j->array.release) j->array.release(&j->array);
        if (j->schema.release) j->schema.release(&j->schema);
        free(j->known);
    }
    if (p->stask) shape_task_wait(p->stask);
    shape_task_free(p->stask);
    if (p->sjob.array.release) p->sjob.array.release(&p->sjob.array);
    if (p->sjob.schema.release) p->sjob.schema.release(&p->sjob.schema);
    shape_split_profiles_free(p->sp);
    for (size_t i = 0; i < p->n_wtabs; i++) shape_window_profiler_free(p->wtabs[i]);
    free(p->wtabs);
    shape_split_free(p->wrouter);
    shape_profile_free(p->profile);
    shape_window_profiler_free(p->win);
    shape_windows_file_close(p->wfile);
    shape_windows_file_close(p->sfile);
    free(p);
}

int shape_stream_profiler_was_finished(const shape_stream_profiler *p) { return p->was_finished; }
int shape_stream_profiler_resumed(const shape_stream_profiler *p) { return p->resumed; }
int shape_stream_profiler_interrupted(const shape_stream_profiler *p) { return shape_stream_stopped(p->stream); }
const shape_profile *shape_stream_profiler_profile(const shape_stream_profiler *p) { return p->profile; }
int shape_stream_profiler_wrote_windows(const shape_stream_profiler *p) { return p->wrote_windows; }

const shape_window_counters *shape_stream_profiler_window_counters(const shape_stream_profiler *p)
{
    if (p->win && p->split) return &p->wsum;
    return p->win ? shape_window_profiler_counters(p->win) : NULL;
}

int64_t shape_stream_profiler_events(const shape_stream_profiler *p)
{
    if (p->split && p->win) return p->wsum.rows_in;
    if (p->split) {
        int64_t rows = 0;
        const shape_profile *const *t;
        size_t n = shape_split_profiles_tables(p->sp, &t);
        for (size_t i = 0; i < n; i++) rows += shape_profile_rows(t[i]);
        return rows;
    }
    return p->win ? shape_window_profiler_counters(p->win)->rows_in : shape_profile_rows(p->profile);
}
shape_stream *shape_stream_profiler_stream(const shape_stream_profiler *p) { return p->stream; }

/* Wait for the batches queued on the window task; the first failure, if any. */
static int window_drain(shape_stream_profiler *p, shape_err *err)
{
    if (p->wtask) shape_task_wait(p->wtask);
    for (size_t i = 0; i < WINDOW_QUEUE_MAX + 1; i++) p->jobs[i].busy = 0;
    if (p->wrouter) split_warn(p, shape_split_overflowed(p->wrouter)); /* the task is idle */
    if (p->wfail != SHAPE_OK) *err = p->wfail_err;
    return p->wfail;
}

static int save_checkpoint(shape_stream_profiler *p, int finished, shape_err *err)
{
    if (p->worker) SHAPE_RETURN_NOT_OK(shape_profile_worker_drain(p->worker, err)); /* every batch taken is in the state */
    SHAPE_RETURN_NOT_OK(window_drain(p, err));
    if (p->split && !p->win) SHAPE_RETURN_NOT_OK(split_drain(p, err));
    shape_stream_counters *n = shape_stream_counters_mut(p->stream);
    size_t n_schema;
    const shape_stream_column *schema = shape_stream_schema(p->stream, &n_schema);
    n->checkpoints++;
    json_t *windowed = NULL;
    if (p->win) {
        int rc = SHAPE_OK;
        if (p->split) windowed = split_windows_save(p, err, &rc);
        else rc = shape_window_profiler_save(p->win, &windowed, err);
        if (rc != SHAPE_OK) {
            n->checkpoints--;
            return rc;
        }
    }
    shape_split *split = p->wrouter ? p->wrouter : p->sp ? shape_split_profiles_router(p->sp) : NULL;
    const shape_profile *const *tables = NULL;
    size_t n_tables = p->sp ? shape_split_profiles_tables(p->sp, &tables) : 0;
    shape_stream_profile_snapshot snap = {.uri = p->cfg.uri,
                                          .partitions = p->cfg.partitions,
                                          .offset = shape_stream_offset(p->stream),
                                          .positions = shape_stream_positions(p->stream),
                                          .counters = n,
                                          .name = p->cfg.name,
                                          .event_time = p->cfg.event_time,
                                          .fingerprint = p->fingerprint,
                                          .top_n = p->cfg.profile.top_n,
                                          .schema = schema,
                                          .n_schema = n_schema,
                                          .null_event_time = shape_stream_null_event_time(p->stream),
                                          .kind = shape_window_kind_name(p->cfg.window.kind),
                                          .window = p->win ? p->window_identity : NULL,
                                          .profile = p->profile,
                                          .windowed = windowed,
                                          .split_by = p->split ? p->cfg.split_by : NULL,
                                          .max_tables = p->cfg.max_tables,
                                          .split_values = split ? shape_split_values(split) : 0,
                                          .split_overflowed = split ? shape_split_overflowed(split) : 0,
                                          .tables = tables,
                                          .n_tables = n_tables,
                                          .finished = finished};
    int rc = shape_stream_profile_checkpoint_write(p->cfg.checkpoint, &snap, err);
    json_decref(windowed);
    if (rc != SHAPE_OK) n->checkpoints--;
    p->since_checkpoint = 0;
    return rc;
}

/* Where the profiled rows came from, on a profile the run writes
 * (shape_profile_set_origin): the stream (a local file by its real path,
 * so workers in other folders agree; else the URI as given) and the
 * partitions it has taken messages from so far. profile-merge refuses
 * states that share a partition of one stream, or name different streams. */
static int stamp_one(const shape_stream_profiler *p, shape_profile *profile, shape_err *err)
{
    const char *file = shape_paths_uri_file(p->cfg.uri);
    char *real = file ? realpath(file, NULL) : NULL;
    const shape_offsets *pos = shape_stream_positions(p->stream);
    int rc = shape_profile_set_origin(profile, real ? real : p->cfg.uri, pos ? pos->partitions : NULL,
                                      pos ? pos->n : 0, err);
    free(real);
    return rc;
}

static int stamp_origin(shape_stream_profiler *p, shape_err *err)
{
    int rc = stamp_one(p, p->profile, err);
    for (size_t i = 0; rc == SHAPE_OK && p->sp && shape_split_profiles_table(p->sp, i); i++)
        rc = stamp_one(p, shape_split_profiles_table(p->sp, i), err);
    return rc;
}

/* A closed window: into the windows file (opened at the first one). */
static int emit_window(void *ud, const shape_window_closed *w, shape_err *err)
{
    shape_stream_profiler *p = ud;
    /* the closed window's profile is the window profiler's, about to be
     * dropped: its origin goes into the window's state line */
    SHAPE_RETURN_NOT_OK(stamp_one(p, (shape_profile *)w->profile, err));
    if (!p->wfile) SHAPE_RETURN_NOT_OK(shape_windows_file_open(p->cfg.windows_path, &p->wfile, err));
    int written = 0;
    SHAPE_RETURN_NOT_OK(shape_windows_file_write(p->wfile, w, &written, err));
    p->wrote_windows |= written;
    if (p->cfg.window_states_path) {
        if (!p->sfile) SHAPE_RETURN_NOT_OK(shape_window_states_file_open(p->cfg.window_states_path, &p->sfile, err));
        SHAPE_RETURN_NOT_OK(shape_windows_file_write(p->sfile, w, &written, err));
    }
    return SHAPE_OK;
}

static void window_job_run(void *arg)
{
    struct window_job *j = arg;
    shape_stream_profiler *p = j->p;
    int rc = p->wfail;
    shape_err err;
    shape_err_clear(&err);
    if (rc == SHAPE_OK && p->split)
        rc = split_window_batch(p, &j->schema, &j->array, j->known, j->n_known, j->partition, j->now, &err);
    else if (rc == SHAPE_OK)
        rc = shape_window_profiler_update(p->win, &j->schema, &j->array, SHAPE_STREAM_EVENT_TIME_COLUMN, j->known,
                                          j->n_known, j->partition, j->now, emit_window, p, &err);
    if (rc != SHAPE_OK && p->wfail == SHAPE_OK) {
        p->wfail = rc;
        p->wfail_err = err;
    }
    j->failed = rc != SHAPE_OK;
    j->overflowed = p->wrouter ? shape_split_overflowed(p->wrouter) : 0;
    j->array.release(&j->array);
    j->schema.release(&j->schema);
}

/* Queue the batch (moved) for the window task, behind the ones before it. */
static int window_batch(shape_stream_profiler *p, struct ArrowSchema *schema, struct ArrowArray *array,
                        shape_err *err)
{
    struct window_job *j = &p->jobs[p->next_job];
    int rc = SHAPE_OK;
    /* the slot's last job has finished (the task had room for the one
     * after it): its outcome is ours to read */
    if (j->busy && p->split) split_warn(p, j->overflowed);
    if (j->busy && j->failed) rc = window_drain(p, err);
    j->busy = 0;
    const shape_offsets *now = shape_stream_positions(p->stream);
    if (rc == SHAPE_OK && now->n > j->cap_known) {
        int32_t *k = realloc(j->known, now->n * sizeof *k);
        if (k) {
            j->known = k;
            j->cap_known = now->n;
        } else {
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        }
    }
    if (rc != SHAPE_OK) {
        array->release(array);
        schema->release(schema);
        return rc;
    }
    memcpy(j->known, now->partitions, now->n * sizeof *j->known);
    j->n_known = now->n;
    j->partition = shape_stream_batch_partition(p->stream);
    j->now = shape_clock_now();
    j->schema = *schema;
    j->array = *array;
    schema->release = NULL;
    array->release = NULL;
    j->p = p;
    j->busy = 1;
    p->next_job = (p->next_job + 1) % (p->wdepth + 1);
    shape_task_start(p->wtask, window_job_run, j);
    return SHAPE_OK;
}

static int consume(shape_stream_profiler *p, shape_err *err)
{
    int rc = SHAPE_OK;
    for (;;) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        int end = 0;
        rc = shape_stream_next(p->stream, &schema, &array, &end, err);
        if (rc != SHAPE_OK || end) break;
        if (p->win) rc = window_batch(p, &schema, &array, err);
        else if (p->split) rc = split_submit(p, &schema, &array, err);
        else rc = shape_profile_worker_submit(p->worker, &schema, &array, err); /* moved in */
        p->since_checkpoint++; /* every batch the stream hands out is a processed one */
        if (rc == SHAPE_OK && p->cfg.checkpoint && p->since_checkpoint >= p->cfg.checkpoint_every)
            rc = save_checkpoint(p, 0, err);
        if (p->cfg.on_step) p->cfg.on_step(p->cfg.ud, p->stream);
        if (rc != SHAPE_OK) break;
    }
    return rc;
}

/* How many batches the window task queues: WINDOW_QUEUE_ROWS rows of the
 * stream's batch size, within WINDOW_QUEUE_MIN..MAX. */
static int window_queue_depth(const shape_stream_profiler *p, size_t *depth, shape_err *err)
{
    int64_t batch = 65536;
    if (p->cfg.options) SHAPE_RETURN_NOT_OK(shape_options_get_int64(p->cfg.options, "batch_size", batch, &batch, err));
    int64_t d = WINDOW_QUEUE_ROWS / (batch > 0 ? batch : 1);
    *depth = d < WINDOW_QUEUE_MIN ? WINDOW_QUEUE_MIN : d > WINDOW_QUEUE_MAX ? WINDOW_QUEUE_MAX : (size_t)d;
    return SHAPE_OK;
}

int shape_stream_profiler_run(shape_stream_profiler *p, shape_err *err)
{
    if (!p->worker && !p->win && !p->split) SHAPE_RETURN_NOT_OK(shape_profile_worker_new(p->profile, &p->worker, err));
    if (p->win && !p->wtask) {
        SHAPE_RETURN_NOT_OK(window_queue_depth(p, &p->wdepth, err));
        SHAPE_RETURN_NOT_OK(shape_task_new_queue(&p->wtask, p->wdepth, err));
    }
    if (p->split && !p->win && !p->stask) SHAPE_RETURN_NOT_OK(shape_task_new(&p->stask, err));
    int rc = consume(p, err);
    if (p->split && !p->win) {
        int src = split_drain(p, rc == SHAPE_OK ? err : &(shape_err){0});
        if (rc == SHAPE_OK) rc = src;
    }
    if (rc == SHAPE_OK && p->worker) rc = shape_profile_worker_drain(p->worker, err);
    if (rc == SHAPE_OK && p->win) rc = window_drain(p, err);
    else if (p->wtask) shape_task_wait(p->wtask); /* nothing runs behind a failed read */
    return rc;
}

int shape_stream_profiler_finish(shape_stream_profiler *p, int complete,
                                 int (*write)(void *ud, const shape_profile *profile, shape_err *err), void *ud,
                                 shape_err *err)
{
    int interrupted = shape_stream_stopped(p->stream);
    if (p->win) {
        /* Only the end of the stream closes the open windows for good. A
         * stop before it (a signal, --max-events, --idle-timeout) checkpoints
         * them open, then writes them as partial: a resumed run drops those
         * lines and writes the windows whole when they close. */
        int final = complete && !interrupted;
        if (!final && p->cfg.checkpoint) SHAPE_RETURN_NOT_OK(save_checkpoint(p, 0, err));
        if (p->split) {
            for (size_t t = 0; t < p->n_wtabs; t++) {
                table_emit te = {p, shape_split_table_name(p->wrouter, t)};
                SHAPE_RETURN_NOT_OK(shape_window_profiler_close_all(p->wtabs[t], !final, emit_table_window, &te, err));
            }
            sum_window_counters(p);
        } else {
            SHAPE_RETURN_NOT_OK(shape_window_profiler_close_all(p->win, !final, emit_window, p, err));
        }
        if (final && p->cfg.checkpoint) SHAPE_RETURN_NOT_OK(save_checkpoint(p, 1, err));
        return SHAPE_OK;
    }
    if (interrupted && p->cfg.checkpoint) SHAPE_RETURN_NOT_OK(save_checkpoint(p, 0, err));
    SHAPE_RETURN_NOT_OK(stamp_origin(p, err));
    SHAPE_RETURN_NOT_OK(write(ud, p->profile, err));
    if (!interrupted && p->cfg.checkpoint) SHAPE_RETURN_NOT_OK(save_checkpoint(p, complete && !interrupted, err));
    return SHAPE_OK;
}

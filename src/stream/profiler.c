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
 */
#include "shape/stream_profiler.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "shape/clock.h"
#include "shape/profile_worker.h"
#include "shape/stream_checkpoint.h"
#include "shape/task.h"
#include "shape/windows_file.h"

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
    /* windowed: batch k is profiled (and its windows written) on wtask
     * while batch k + 1 is read; job is the batch in flight */
    shape_task *wtask;
    struct window_job {
        shape_stream_profiler *p;
        struct ArrowSchema schema;
        struct ArrowArray array;
        int32_t *known;
        size_t n_known, cap_known;
        int32_t partition;
        double now;
        int busy, rc; /* rc: the first failure sticks */
        shape_err err;
    } job;
    int64_t since_checkpoint;
    int resumed, was_finished;
};

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
    if (rc == SHAPE_OK && p->win) rc = shape_window_profiler_load(p->win, got.windowed, err);
    if (rc != SHAPE_OK && p->win) shape_err_prefix(err, "checkpoint %s (use another file)", p->cfg.checkpoint);
    p->profile = got.profile; /* moved: the resume no longer owns it */
    got.profile = NULL;
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
    shape_profile_config_fingerprint(&p->cfg.profile, p->fingerprint, sizeof p->fingerprint);
    shape_stream_config sc = {.uri = cfg->uri,
                              .options = cfg->options,
                              .registry = cfg->registry,
                              .max_reconnects = cfg->max_reconnects,
                              .freeze_schema = 1,
                              .stop = cfg->stop,
                              .warn = cfg->warn,
                              .ud = cfg->ud};
    int rc = shape_stream_new(&sc, &p->stream, err);
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
    shape_stream_free(p->stream); /* the source first: nothing more is read */
    shape_profile_worker_free(p->worker);
    if (p->wtask) shape_task_wait(p->wtask);
    shape_task_free(p->wtask);
    if (p->job.array.release) p->job.array.release(&p->job.array);
    if (p->job.schema.release) p->job.schema.release(&p->job.schema);
    free(p->job.known);
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
    return p->win ? shape_window_profiler_counters(p->win) : NULL;
}

int64_t shape_stream_profiler_events(const shape_stream_profiler *p)
{
    return p->win ? shape_window_profiler_counters(p->win)->rows_in : shape_profile_rows(p->profile);
}
shape_stream *shape_stream_profiler_stream(const shape_stream_profiler *p) { return p->stream; }

/* Wait for the batch in flight on the window task; its failure, if any. */
static int window_drain(shape_stream_profiler *p, shape_err *err)
{
    if (!p->job.busy) return p->job.rc == SHAPE_OK ? SHAPE_OK : (*err = p->job.err, p->job.rc);
    shape_task_wait(p->wtask);
    p->job.busy = 0;
    if (p->job.rc != SHAPE_OK) *err = p->job.err;
    return p->job.rc;
}

static int save_checkpoint(shape_stream_profiler *p, int finished, shape_err *err)
{
    if (p->worker) SHAPE_RETURN_NOT_OK(shape_profile_worker_drain(p->worker, err)); /* every batch taken is in the state */
    SHAPE_RETURN_NOT_OK(window_drain(p, err));
    shape_stream_counters *n = shape_stream_counters_mut(p->stream);
    size_t n_schema;
    const shape_stream_column *schema = shape_stream_schema(p->stream, &n_schema);
    n->checkpoints++;
    json_t *windowed = NULL;
    if (p->win) {
        int rc = shape_window_profiler_save(p->win, &windowed, err);
        if (rc != SHAPE_OK) {
            n->checkpoints--;
            return rc;
        }
    }
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
                                          .finished = finished};
    int rc = shape_stream_profile_checkpoint_write(p->cfg.checkpoint, &snap, err);
    json_decref(windowed);
    if (rc != SHAPE_OK) n->checkpoints--;
    p->since_checkpoint = 0;
    return rc;
}

/* A closed window: into the windows file (opened at the first one). */
static int emit_window(void *ud, const shape_window_closed *w, shape_err *err)
{
    shape_stream_profiler *p = ud;
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
    if (j->rc == SHAPE_OK)
        j->rc = shape_window_profiler_update(p->win, &j->schema, &j->array, SHAPE_STREAM_EVENT_TIME_COLUMN, j->known,
                                             j->n_known, j->partition, j->now, emit_window, p, &j->err);
    j->array.release(&j->array);
    j->schema.release(&j->schema);
}

/* Hand the batch (moved) to the window task, after the one before it. */
static int window_batch(shape_stream_profiler *p, struct ArrowSchema *schema, struct ArrowArray *array,
                        shape_err *err)
{
    struct window_job *j = &p->job;
    int rc = window_drain(p, err);
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
        else rc = shape_profile_worker_submit(p->worker, &schema, &array, err); /* moved in */
        p->since_checkpoint++; /* every batch the stream hands out is a processed one */
        if (rc == SHAPE_OK && p->cfg.checkpoint && p->since_checkpoint >= p->cfg.checkpoint_every)
            rc = save_checkpoint(p, 0, err);
        if (p->cfg.on_step) p->cfg.on_step(p->cfg.ud, p->stream);
        if (rc != SHAPE_OK) break;
    }
    return rc;
}

int shape_stream_profiler_run(shape_stream_profiler *p, shape_err *err)
{
    if (!p->worker && !p->win) SHAPE_RETURN_NOT_OK(shape_profile_worker_new(p->profile, &p->worker, err));
    if (p->win && !p->wtask) SHAPE_RETURN_NOT_OK(shape_task_new(&p->wtask, err));
    int rc = consume(p, err);
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
        SHAPE_RETURN_NOT_OK(shape_window_profiler_close_all(p->win, !final, emit_window, p, err));
        if (final && p->cfg.checkpoint) SHAPE_RETURN_NOT_OK(save_checkpoint(p, 1, err));
        return SHAPE_OK;
    }
    if (interrupted && p->cfg.checkpoint) SHAPE_RETURN_NOT_OK(save_checkpoint(p, 0, err));
    SHAPE_RETURN_NOT_OK(write(ud, p->profile, err));
    if (!interrupted && p->cfg.checkpoint) SHAPE_RETURN_NOT_OK(save_checkpoint(p, complete && !interrupted, err));
    return SHAPE_OK;
}

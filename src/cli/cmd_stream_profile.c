/* cmd_stream_profile.c — `shape stream-profile URI -o OUT.json`: one
 * bounded-memory profile of everything a stream holds (the global window).
 *
 * Why: the product's read-side promise — profile a Kafka topic (or files)
 * in bounded memory, resumable after a crash with exactly the profile an
 * uninterrupted run gives (reference/spec-core.md §1.6, §1.8, §1.9).
 *
 * How: the source (file or plugin, cli/stream_common.h) hands out Arrow
 * batches paired with the position after them; each batch goes through
 * shape_profile_update on a worker thread (shape/profile_worker.h), which
 * profiles batch k while this thread reads and decodes batch k + 1; a
 * checkpoint and the end wait for the worker first. The consumer keeps, per partition, the furthest
 * position processed: a batch that advances none of them is a replay and is
 * dropped (counted). Every --checkpoint-every processed batches, and at the
 * end, the checkpoint file is replaced atomically with the URI, the source
 * position, those positions, the counters and the profiler's binary state
 * (base64) — so a run killed anywhere resumes from the last checkpoint and
 * re-profiles exactly the batches after it. A transient connection failure
 * (SHAPE_ECONN) reopens the source at the last processed position after a
 * back-off (1 s doubling, at most 30 s), until --max-reconnects consecutive
 * failures. A resumed or reconnected read infers its schema afresh, so its
 * batches are conformed to the schema the run froze first (columns it did
 * not have are ignored, an all-null column of another type counts as nulls),
 * as one uninterrupted read would have done. SIGINT/SIGTERM stop after the
 * batch in hand: checkpoint first, then the profile of what was read.
 * When stderr is a terminal, one progress line shows messages, messages/s,
 * partitions done of total (when the source can tell) and elapsed time.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/stream_common.h"
#include "shape/atomic_file.h"
#include "shape/base64.h"
#include "shape/clock.h"
#include "shape/profile.h"
#include "shape/profile_worker.h"
#include "shape/stream_checkpoint.h"
#include "shape/version.h"

#define CHECKPOINT_FORMAT SHAPE_STREAM_PROFILE_CHECKPOINT_FORMAT
#define PROFILER_FORMAT SHAPE_STREAM_PROFILER_FORMAT
#define BACKOFF_CAP_S 30

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* ---- the run ------------------------------------------------------------- */

typedef struct counters {
    int64_t batches_read, batches_processed, duplicate_batches, duplicate_rows, reconnects, checkpoints;
} counters;

static const char *const counter_names[] = {"batches_read", "batches_processed", "duplicate_batches",
                                            "duplicate_rows", "reconnects", "checkpoints"};
#define N_COUNTERS (sizeof counter_names / sizeof counter_names[0])

static int64_t *counter_at(counters *c, size_t i)
{
    int64_t *all[N_COUNTERS] = {&c->batches_read, &c->batches_processed, &c->duplicate_batches,
                                &c->duplicate_rows, &c->reconnects, &c->checkpoints};
    return all[i];
}

typedef shape_stream_column column_type;

typedef struct run {
    const char *uri, *output, *checkpoint, *state_path, *name, *event_time;
    const char *partitions; /* --partitions as given, or NULL for all */
    shape_profile_config cfg;
    char fingerprint[256];
    int64_t checkpoint_every, max_reconnects;
    int bounded, limited; /* stop_at_end; a --max-events / --idle-timeout stop */
    shape_options *options;

    shape_profile *profile;
    shape_profile_worker *worker; /* profiles the batches, one behind the reader */
    shape_offsets offset; /* the source position after the last batch taken */
    int have_offset;
    shape_offsets positions; /* furthest position processed, per partition */
    counters n;
    int64_t null_event_time;
    int64_t since_checkpoint;
    column_type *schema; /* the frozen schema: first batch's columns */
    size_t n_schema;
    int have_schema;
    int resumed;

    int64_t messages, undecodable, rejected; /* over the sources closed so far */
    shape_source *src;

    int progress;
    double started, last_progress;
    shape_source_progress parts; /* the last the source told (kept across reconnects) */
} run;


static void close_source(run *r)
{
    if (!r->src) return;
    const shape_decode_stats *st = shape_source_stats(r->src);
    r->messages += st->messages;
    r->undecodable += st->undecodable;
    r->rejected += st->rejected;
    shape_source_close(r->src);
    r->src = NULL;
}

static void stats_now(const run *r, int64_t *messages, int64_t *undecodable, int64_t *rejected)
{
    const shape_decode_stats *st = r->src ? shape_source_stats(r->src) : NULL;
    *messages = r->messages + (st ? st->messages : 0);
    *undecodable = r->undecodable + (st ? st->undecodable : 0);
    *rejected = r->rejected + (st ? st->rejected : 0);
}

static void show_progress(run *r, int final)
{
    if (!r->progress) return;
    double t = shape_clock_now();
    if (!final && t - r->last_progress < 0.25) return;
    r->last_progress = t;
    int64_t messages, undecodable, rejected;
    stats_now(r, &messages, &undecodable, &rejected);
    double elapsed = t - r->started;
    if (r->src) r->parts = shape_source_progress_of(r->src);
    char parts[64] = "";
    if (r->parts.partitions_total >= 0 && r->parts.partitions_done >= 0)
        snprintf(parts, sizeof parts, ", partitions %lld/%lld", (long long)r->parts.partitions_done,
                 (long long)r->parts.partitions_total);
    else if (r->parts.partitions_total >= 0)
        snprintf(parts, sizeof parts, ", %lld partitions", (long long)r->parts.partitions_total);
    fprintf(stderr, "\r\033[Kshape stream-profile: %lld messages, %.0f messages/s%s, %.1f s elapsed",
            (long long)messages, elapsed > 0 ? (double)messages / elapsed : 0.0, parts, elapsed);
    if (final) fputc('\n', stderr);
    fflush(stderr);
}

/* ---- checkpoint ---------------------------------------------------------- */

static json_t *schema_json(const run *r)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < r->n_schema; i++)
        if (json_array_append_new(a, json_pack("[s,s]", r->schema[i].name, r->schema[i].format))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static int save_checkpoint(run *r, int finished, shape_err *err)
{
    uint8_t *state = NULL;
    size_t len = 0;
    SHAPE_RETURN_NOT_OK(shape_profile_worker_drain(r->worker, err)); /* every batch taken is in the state */
    SHAPE_RETURN_NOT_OK(shape_profile_state_save(r->profile, &state, &len, err));
    char *b64 = shape_base64_encode(state, len);
    free(state);
    if (!b64) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", r->checkpoint);
    r->n.checkpoints++;
    json_t *cnt = json_object();
    for (size_t i = 0; cnt && i < N_COUNTERS; i++) json_object_set_new(cnt, counter_names[i], json_integer(*counter_at(&r->n, i)));
    json_t *profiler = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o*, s:I, s:s}", "format", PROFILER_FORMAT, "kind",
                                 "global", "name", r->name, "event_time", r->event_time, "top_n",
                                 (json_int_t)r->cfg.top_n, "config", r->fingerprint, "schema",
                                 r->have_schema ? schema_json(r) : NULL, "null_event_time",
                                 (json_int_t)r->null_event_time, "state", b64);
    json_t *doc = json_pack("{s:s, s:i, s:s, s:s, s:s*, s:o*, s:o, s:o*, s:o*, s:b}", "format", CHECKPOINT_FORMAT,
                            "version", 1, "shape_version", shape_version(), "uri", r->uri, "partitions", r->partitions,
                            "offset",
                            r->have_offset ? shape_offsets_to_json(&r->offset) : NULL, "positions",
                            shape_offsets_to_json(&r->positions), "counters", cnt, "profiler", profiler, "finished",
                            finished);
    free(b64);
    if (!doc) {
        r->n.checkpoints--;
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", r->checkpoint);
    }
    int rc = shape_checkpoint_save(r->checkpoint, doc, err);
    json_decref(doc);
    if (rc != SHAPE_OK) r->n.checkpoints--;
    r->since_checkpoint = 0;
    return rc;
}

/* Later reads of this run (reconnect, resume) decode with the frozen schema. */
static int set_schema_option(run *r, shape_err *err)
{
    json_t *a = schema_json(r);
    char *text = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    char *kv = text ? malloc(strlen(text) + 8) : NULL;
    if (!kv) {
        free(text);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    strcpy(kv, "schema=");
    strcat(kv, text);
    int rc = shape_options_set_kv(r->options, kv, err);
    free(kv);
    free(text);
    return rc;
}

/* Resume from the checkpoint if there is one; *finished when it is final.
 * The checks are shape_stream_profile_checkpoint_read's (fuzzed); this takes
 * over what it read. */
static int load_checkpoint(run *r, int *finished, shape_err *err)
{
    *finished = 0;
    json_t *doc;
    SHAPE_RETURN_NOT_OK(shape_checkpoint_load(r->checkpoint, &doc, err));
    if (!doc) return SHAPE_OK;
    shape_stream_profile_expect expect = {.uri = r->uri,
                                          .partitions = r->partitions,
                                          .name = r->name,
                                          .event_time = r->event_time,
                                          .fingerprint = r->fingerprint,
                                          .cfg = &r->cfg,
                                          .counter_names = counter_names,
                                          .n_counters = N_COUNTERS};
    shape_stream_profile_resume got;
    int rc = shape_stream_profile_checkpoint_read(r->checkpoint, doc, &expect, &got, err);
    json_decref(doc);
    if (rc != SHAPE_OK) return rc;
    for (size_t i = 0; i < N_COUNTERS; i++) *counter_at(&r->n, i) = got.counters[i];
    /* move, not copy: got is left with nothing to release but its counters */
    r->offset = got.offset;
    r->have_offset = got.have_offset;
    r->positions = got.positions;
    r->schema = got.schema;
    r->n_schema = got.n_schema;
    r->have_schema = got.have_schema;
    r->null_event_time = got.null_event_time;
    r->profile = got.profile;
    *finished = got.finished;
    r->resumed = 1;
    free(got.counters);
    return r->have_schema ? set_schema_option(r, err) : SHAPE_OK;
}

/* ---- batches ------------------------------------------------------------- */

static int64_t null_count_of(const struct ArrowArray *a)
{
    if (a->null_count >= 0) return a->null_count;
    const uint8_t *bits = a->n_buffers > 0 ? a->buffers[0] : NULL;
    if (!bits) return 0;
    int64_t nulls = 0;
    for (int64_t i = 0; i < a->length; i++) {
        int64_t j = a->offset + i;
        if (!(bits[j >> 3] & (1u << (j & 7)))) nulls++;
    }
    return nulls;
}

static const column_type *frozen_column(const run *r, const char *name)
{
    for (size_t i = 0; i < r->n_schema; i++)
        if (strcmp(r->schema[i].name, name) == 0) return &r->schema[i];
    return NULL;
}

static int freeze_schema(run *r, const struct ArrowSchema *schema, shape_err *err)
{
    r->schema = calloc((size_t)schema->n_children + 1, sizeof *r->schema);
    if (!r->schema) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (int64_t i = 0; i < schema->n_children; i++) {
        r->schema[i].name = strdup(schema->children[i]->name ? schema->children[i]->name : "");
        r->schema[i].format = strdup(schema->children[i]->format);
        r->n_schema++;
        if (!r->schema[i].name || !r->schema[i].format) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    r->have_schema = 1;
    return set_schema_option(r, err);
}

/* A batch seen through the frozen schema: a struct view over some of the
 * children of a batch it owns. The view's schema and array share one holder
 * (counted: each release drops one reference, the last releases the batch). */
typedef struct batch_view {
    struct ArrowSchema schema;
    struct ArrowArray array;
    struct ArrowSchema **schema_children;
    struct ArrowArray **array_children;
    int refs;
} batch_view;

static void batch_view_unref(batch_view *v)
{
    if (--v->refs > 0) return;
    if (v->array.release) v->array.release(&v->array);
    if (v->schema.release) v->schema.release(&v->schema);
    free(v->schema_children);
    free(v->array_children);
    free(v);
}

static void batch_view_release_schema(struct ArrowSchema *s)
{
    batch_view_unref(s->private_data);
    s->release = NULL;
}

static void batch_view_release_array(struct ArrowArray *a)
{
    batch_view_unref(a->private_data);
    a->release = NULL;
}

/* Profile one batch (moved in: released here or by the worker), seen through
 * the frozen schema: columns the schema lacks are left out, and so is an
 * all-null column typed differently, which the profile then counts as nulls. */
static int profile_batch(run *r, struct ArrowSchema *schema, struct ArrowArray *array, shape_err *err)
{
    int rc = r->have_schema ? SHAPE_OK : freeze_schema(r, schema, err);
    int64_t n = schema->n_children;
    batch_view *v = rc == SHAPE_OK ? calloc(1, sizeof *v) : NULL;
    if (v) {
        v->schema_children = malloc(((size_t)n + 1) * sizeof *v->schema_children);
        v->array_children = malloc(((size_t)n + 1) * sizeof *v->array_children);
    }
    if (!v || !v->schema_children || !v->array_children) {
        if (v) {
            free(v->schema_children);
            free(v->array_children);
            free(v);
        }
        if (array->release) array->release(array);
        if (schema->release) schema->release(schema);
        return rc == SHAPE_OK ? shape_err_set(err, SHAPE_ENOMEM, "out of memory") : rc;
    }
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *name = schema->children[i]->name ? schema->children[i]->name : "";
        const column_type *t = frozen_column(r, name);
        if (!t) continue;
        if (strcmp(t->name, "_shape_event_time") == 0) r->null_event_time += null_count_of(array->children[i]);
        if (strcmp(t->format, schema->children[i]->format) != 0 && null_count_of(array->children[i]) == array->length)
            continue;
        v->schema_children[kept] = schema->children[i];
        v->array_children[kept] = array->children[i];
        kept++;
    }
    /* the view: the batch's own top-level fields over the kept children */
    struct ArrowSchema vs = *schema;
    struct ArrowArray va = *array;
    v->schema = *schema;
    v->array = *array;
    schema->release = NULL;
    array->release = NULL;
    v->refs = 2;
    vs.n_children = kept;
    vs.children = v->schema_children;
    vs.release = batch_view_release_schema;
    vs.private_data = v;
    va.n_children = kept;
    va.children = v->array_children;
    va.release = batch_view_release_array;
    va.private_data = v;
    return shape_profile_worker_submit(r->worker, &vs, &va, err);
}

/* Positions := elementwise max(positions, after). */
static int advance_positions(shape_offsets *positions, const shape_offsets *after, shape_err *err)
{
    for (size_t i = 0; i < after->n; i++) {
        int64_t have;
        if (!shape_offsets_get(positions, after->partitions[i], &have) || after->next[i] > have)
            SHAPE_RETURN_NOT_OK(shape_offsets_set(positions, after->partitions[i], after->next[i], err));
    }
    return SHAPE_OK;
}

/* Wait `seconds`, waking early when a stop is requested. */
static void backoff(double seconds)
{
    double until = shape_clock_now() + seconds;
    while (!stop_requested) {
        double left = until - shape_clock_now();
        if (left <= 0) break;
        if (left > 0.1) left = 0.1;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* Read until the end of the stream (or a stop); *interrupted when a signal
 * ended it. */
static int consume(run *r, int *interrupted, shape_err *err)
{
    int64_t stalled = 0;
    shape_offsets after = SHAPE_OFFSETS_INIT;
    int rc = SHAPE_OK;
    *interrupted = 0;
    while (rc == SHAPE_OK) {
        if (stop_requested) {
            *interrupted = 1;
            break;
        }
        if (!r->src) rc = shape_cli_open_source(r->uri, r->options, r->have_offset ? &r->offset : NULL, &r->src, err);
        struct ArrowSchema schema = {0};
        struct ArrowArray array = {0};
        int end = 0;
        if (rc == SHAPE_OK) rc = shape_source_next(r->src, &schema, &array, &after, &end, err);
        if (rc == SHAPE_ECONN) {
            close_source(r);
            stalled++;
            if (stalled > r->max_reconnects) {
                shape_err_prefix(err, "gave up after %lld reconnect%s", (long long)(stalled - 1), stalled == 2 ? "" : "s");
                break;
            }
            r->n.reconnects++;
            double wait = (double)(1 << (stalled < 6 ? stalled - 1 : 5)); /* 1, 2, 4, ... s */
            if (wait > BACKOFF_CAP_S) wait = BACKOFF_CAP_S;
            fprintf(stderr, "shape: warning: %s; reconnecting in %.0f s (%lld of %lld)\n", err->message, wait,
                    (long long)stalled, (long long)r->max_reconnects);
            shape_err_clear(err);
            rc = SHAPE_OK;
            backoff(wait);
            continue;
        }
        if (rc != SHAPE_OK || end) break;
        if (array.release) {
            r->n.batches_read++;
            if (r->positions.n > 0 && !shape_offsets_advances(&after, &r->positions)) {
                r->n.duplicate_batches++;
                r->n.duplicate_rows += array.length;
            } else {
                rc = profile_batch(r, &schema, &array, err);
                if (rc == SHAPE_OK) rc = advance_positions(&r->positions, &after, err);
                r->n.batches_processed++;
                r->since_checkpoint++;
                stalled = 0;
            }
            if (array.release) array.release(&array);
            if (schema.release) schema.release(&schema);
        } else if (rc == SHAPE_OK && after.n > 0) {
            rc = advance_positions(&r->positions, &after, err);
        }
        if (rc == SHAPE_OK && after.n > 0) {
            rc = shape_offsets_copy(&r->offset, &after, err);
            r->have_offset = 1;
        }
        if (rc == SHAPE_OK && r->checkpoint && r->since_checkpoint >= r->checkpoint_every)
            rc = save_checkpoint(r, 0, err);
        show_progress(r, 0);
    }
    shape_offsets_free(&after);
    return rc;
}

/* ---- outputs ------------------------------------------------------------- */

static int write_state(run *r, shape_err *err)
{
    uint8_t *state = NULL;
    size_t len = 0;
    int rc = shape_profile_state_save(r->profile, &state, &len, err);
    if (rc == SHAPE_OK) rc = shape_atomic_write(r->state_path, state, len, err);
    free(state);
    return rc;
}

static int write_outputs(run *r, shape_err *err)
{
    const shape_profile *tables[1] = {r->profile};
    char *text = NULL;
    size_t len = 0;
    int rc = shape_profile_document(tables, 1, &text, &len, err);
    if (rc == SHAPE_OK) rc = shape_atomic_write(r->output, text, len, err);
    free(text);
    if (rc == SHAPE_OK && r->state_path) rc = write_state(r, err);
    return rc;
}

static int print_line(json_t *doc, shape_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = doc ? shape_profile_json_dumps(doc, -1, &text, &len, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    json_decref(doc);
    if (rc != SHAPE_OK) return rc;
    printf("%s\n", text);
    free(text);
    if (fflush(stdout) != 0) return shape_err_set(err, SHAPE_EIO, "cannot write to stdout: %s", strerror(errno));
    return SHAPE_OK;
}

static int print_summary(run *r, int written, int interrupted, const char *note, shape_err *err)
{
    int64_t messages, undecodable, rejected;
    stats_now(r, &messages, &undecodable, &rejected);
    json_t *s = json_object();
    if (!s) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    json_object_set_new(s, "uri", json_string(r->uri));
    json_object_set_new(s, "window", json_string("global"));
    json_object_set_new(s, "events", json_integer(r->profile ? shape_profile_rows(r->profile) : 0));
    json_object_set_new(s, "batches", json_integer(r->n.batches_processed));
    json_object_set_new(s, "windows", json_integer(0));
    json_object_set_new(s, "late_events", json_integer(0));
    json_object_set_new(s, "null_event_time", json_integer(r->null_event_time));
    json_object_set_new(s, "duplicate_rows", json_integer(r->n.duplicate_rows));
    json_object_set_new(s, "reconnects", json_integer(r->n.reconnects));
    json_object_set_new(s, "checkpoints", json_integer(r->n.checkpoints));
    json_object_set_new(s, "written", written ? json_string(r->output) : json_null());
    json_object_set_new(s, "undecodable", json_integer(undecodable));
    json_object_set_new(s, "rejected", json_integer(rejected));
    if (interrupted) json_object_set_new(s, "interrupted", json_true());
    if (note) json_object_set_new(s, "note", json_string(note));
    return print_line(s, err);
}

/* ---- options ------------------------------------------------------------- */

static int read_options(const shape_args *args, run *r, shape_err *err)
{
    const char *window = shape_args_value(args, "window");
    if (window && strcmp(window, "global") != 0) {
        if (strcmp(window, "tumbling") == 0 || strcmp(window, "sliding") == 0 || strcmp(window, "session") == 0)
            return shape_err_set(err, SHAPE_EINVAL, "--window %s is not supported yet (only global)", window);
        return shape_err_set(err, SHAPE_EINVAL, "--window must be one of global, tumbling, sliding, session, not '%.40s'",
                             window);
    }
    r->uri = shape_args_positional(args, 0);
    r->output = shape_args_value(args, "output");
    if (!r->output || !r->output[0]) return shape_err_set(err, SHAPE_EINVAL, "-o/--output OUT.json is required with --window global");
    r->checkpoint = shape_args_value(args, "checkpoint");
    if (r->checkpoint && !r->checkpoint[0]) return shape_err_set(err, SHAPE_EINVAL, "--checkpoint needs a file name");
    r->state_path = shape_args_value(args, "state");
    if (r->state_path && !r->state_path[0]) return shape_err_set(err, SHAPE_EINVAL, "--state needs a file name");
    r->name = shape_args_value(args, "name");
    if (!r->name) r->name = "stream";
    if (!r->name[0]) return shape_err_set(err, SHAPE_EINVAL, "--name must not be empty");
    r->event_time = shape_args_value(args, "event-time");
    if (!r->event_time) r->event_time = "_shape_event_time";
    shape_profile_config_default(&r->cfg);
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "top-n", 1, INT32_MAX, SHAPE_PROFILE_TOP_N, &r->cfg.top_n, err));
    shape_profile_config_fingerprint(&r->cfg, r->fingerprint, sizeof r->fingerprint);
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "checkpoint-every", 1, INT64_MAX, 10, &r->checkpoint_every, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "max-reconnects", 0, 1000000, 5, &r->max_reconnects, err));
    const char *start = shape_args_value(args, "start");
    if (!start) start = "earliest";
    if (strcmp(start, "earliest") != 0 && strcmp(start, "latest") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--start must be 'earliest' or 'latest', not '%.40s'", start);
    double idle = -1;
    const char *idle_text = shape_args_value(args, "idle-timeout");
    SHAPE_RETURN_NOT_OK(shape_args_double(args, "idle-timeout", 0, 0, "seconds", -1, &idle, err));
    int follow = shape_args_flag(args, "follow") > 0;
    r->bounded = !follow;
    r->limited = shape_args_value(args, "max-events") || idle_text;

    SHAPE_RETURN_NOT_OK(shape_cli_source_options(args, &r->options, err));
    SHAPE_RETURN_NOT_OK(shape_options_set_string(r->options, "start_at", start, err));
    SHAPE_RETURN_NOT_OK(shape_options_set_bool(r->options, "stop_at_end", !follow, err));
    if (idle_text) SHAPE_RETURN_NOT_OK(shape_options_set_double(r->options, "idle_timeout", idle, err));
    r->partitions = shape_args_value(args, "partitions");
    if (r->partitions) SHAPE_RETURN_NOT_OK(shape_options_set_string(r->options, "partitions", r->partitions, err));
    if (follow && !r->limited)
        fprintf(stderr, "shape: following until interrupted (Ctrl-C stops, checkpoints and writes the profile)\n");
    return SHAPE_OK;
}

/* ---- the command --------------------------------------------------------- */

static void free_run(run *r)
{
    close_source(r);
    shape_profile_worker_free(r->worker);
    shape_profile_free(r->profile);
    shape_options_free(r->options);
    shape_offsets_free(&r->offset);
    shape_offsets_free(&r->positions);
    for (size_t i = 0; i < r->n_schema; i++) {
        free(r->schema[i].name);
        free(r->schema[i].format);
    }
    free(r->schema);
}

static int finish(run *r, int interrupted, shape_err *err)
{
    int64_t messages, undecodable, rejected;
    stats_now(r, &messages, &undecodable, &rejected);
    if (shape_profile_rows(r->profile) == 0 && !r->resumed) {
        if (undecodable || rejected)
            return shape_err_set(err, SHAPE_EINVAL,
                                 "the stream had no usable event: %lld undecodable and %lld rejected messages (see --on-error raise for the first one)",
                                 (long long)undecodable, (long long)rejected);
        fprintf(stderr, "shape: the stream had no events; nothing was written%s\n",
                r->state_path ? " but the (empty) state" : "");
        if (r->state_path) SHAPE_RETURN_NOT_OK(write_state(r, err)); /* an empty worker still merges */
        return print_summary(r, 0, interrupted, "no events", err);
    }
    /* Interrupted: checkpoint first, so a restart resumes. Otherwise the
     * profile first: a crash between the two only repeats the last write. */
    int finished = !interrupted && r->bounded && !r->limited;
    if (interrupted && r->checkpoint) SHAPE_RETURN_NOT_OK(save_checkpoint(r, 0, err));
    SHAPE_RETURN_NOT_OK(write_outputs(r, err));
    if (!interrupted && r->checkpoint) SHAPE_RETURN_NOT_OK(save_checkpoint(r, finished, err));
    return print_summary(r, 1, interrupted, NULL, err);
}

static int run_stream_profile(const shape_args *args, shape_err *err)
{
    run r;
    memset(&r, 0, sizeof r);
    int rc = read_options(args, &r, err);
    int finished = 0, interrupted = 0;
    if (rc == SHAPE_OK && r.checkpoint) rc = load_checkpoint(&r, &finished, err);
    if (rc == SHAPE_OK && finished) {
        fprintf(stderr, "shape: the checkpoint %s is of a finished run; nothing was read or written\n", r.checkpoint);
        json_t *note = json_pack("{s:s, s:s}", "uri", r.uri, "note",
                                 "the checkpoint is of a finished run; nothing was read or written (use another checkpoint file to profile again)");
        rc = print_line(note, err);
        free_run(&r);
        return rc;
    }
    if (rc == SHAPE_OK && !r.profile) rc = shape_profile_new(r.name, &r.cfg, &r.profile, err);
    if (rc == SHAPE_OK) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        r.progress = isatty(STDERR_FILENO);
        r.parts = (shape_source_progress){-1, -1};
        r.started = shape_clock_now();
        r.last_progress = r.started;
        rc = shape_profile_worker_new(r.profile, &r.worker, err);
        if (rc == SHAPE_OK) rc = consume(&r, &interrupted, err);
        if (rc == SHAPE_OK) rc = shape_profile_worker_drain(r.worker, err);
        show_progress(&r, 1);
    }
    if (rc == SHAPE_OK) {
        close_source(&r);
        rc = finish(&r, interrupted, err);
    }
    free_run(&r);
    return rc;
}

static const shape_arg_spec stream_profile_args[] = {
    {"output", 'o', SHAPE_ARG_VALUE, "OUT.json", NULL, "Write the profile here (atomically); required with --window global."},
    {"window", 0, SHAPE_ARG_VALUE, "KIND", "global", "global (tumbling, sliding and session are not supported yet)."},
    {"name", 0, SHAPE_ARG_VALUE, "NAME", "stream", "Table name in the profile."},
    {"top-n", 0, SHAPE_ARG_VALUE, "N", "500", "Top values kept per column (at most 64 in bounded mode)."},
    SHAPE_STREAM_ARGS,
    {"start", 0, SHAPE_ARG_VALUE, "earliest|latest", "earliest", "Where partitions without a checkpoint position begin."},
    {"follow", 0, SHAPE_ARG_FLAG, NULL, NULL, "Keep reading new events instead of stopping at the end the stream had at start."},
    {"idle-timeout", 0, SHAPE_ARG_VALUE, "SECONDS", NULL, "Stop after this long without a message (with --follow)."},
    {"checkpoint", 0, SHAPE_ARG_VALUE, "FILE", NULL,
     "Record positions, counters and the profiler state here (atomically); resume from it if present."},
    {"checkpoint-every", 0, SHAPE_ARG_VALUE, "N", "10", "Processed batches between checkpoints."},
    {"max-reconnects", 0, SHAPE_ARG_VALUE, "N", "5",
     "Consecutive failed reconnects before giving up (waits 1 s, doubling, at most 30 s)."},
    {"partitions", 0, SHAPE_ARG_VALUE, "LIST", NULL,
     "Read only these partitions, e.g. 0,3-5 (kafka://; split a topic across workers, then profile-merge)."},
    {"state", 0, SHAPE_ARG_VALUE, "FILE", NULL, "Also write the mergeable profiler state (for shape profile-merge)."},
    {0},
};

const shape_command shape_cmd_stream_profile = {
    .name = "stream-profile",
    .summary = "Profile a stream (files, '-', kafka://) in bounded memory; resumable.",
    .positional = "URI",
    .min_positional = 1,
    .max_positional = 1,
    .args = stream_profile_args,
    .epilog = "URI: a JSON lines file, a folder or glob of them, file:///PATH, '-' for stdin, or\n"
              "kafka://HOST:PORT[,HOST:PORT...]/TOPIC. The profile document goes to -o; a one-line JSON\n"
              "summary to stdout. With --checkpoint a killed run resumes where its last checkpoint was and\n"
              "gives the same profile as an uninterrupted run; SIGINT/SIGTERM checkpoint and write what was read.",
    .run = run_stream_profile,
};

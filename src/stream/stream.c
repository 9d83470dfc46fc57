/* stream.c — the stream runtime (shape/stream.h): a source read as new
 * batches, reopened after connection failures, replays dropped, batches
 * seen through the frozen schema.
 *
 * Why: the care a reader needs around a source, written once below the
 * commands, so stream-read, stream-profile and the windowed profiler ride
 * out the same outages the same way and a library user gets it too.
 * How: shape_stream_next loops: open the source at `offset` if it is
 * closed; take one step; on SHAPE_ECONN close it, count, back off
 * (1, 2, 4, … s, at most 30 s) and loop; on a batch, drop it if it is a
 * replay, else advance `positions` and hand it out (through the frozen
 * schema's view when freezing); after every step `offset` becomes the
 * step's "after" position. The view is a struct array over some of the
 * children of a batch it owns; its schema and array share one counted
 * holder, the last release of the two releases the batch.
 */
#include "shape/stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "shape/clock.h"

#define BACKOFF_CAP_S 30

static const char *const counter_names[SHAPE_STREAM_N_COUNTERS] = {
    "batches_read", "batches_processed", "duplicate_batches", "duplicate_rows", "reconnects", "checkpoints"};

const char *const *shape_stream_counter_names(void)
{
    return counter_names;
}

int64_t *shape_stream_counter_at(shape_stream_counters *c, size_t i)
{
    int64_t *all[SHAPE_STREAM_N_COUNTERS] = {&c->batches_read, &c->batches_processed, &c->duplicate_batches,
                                             &c->duplicate_rows, &c->reconnects, &c->checkpoints};
    return i < SHAPE_STREAM_N_COUNTERS ? all[i] : NULL;
}

int shape_stream_open_source(const shape_registry *reg, const char *uri, const shape_options *options,
                             const shape_offsets *start, const volatile sig_atomic_t *stop, shape_source **out,
                             shape_err *err)
{
    *out = NULL;
    if (shape_file_source_claims(uri)) return shape_file_source_open(uri, options, start, out, err);
    if (!reg) return shape_err_set(err, SHAPE_EINVAL, "no plugin reads '%.200s' (no plugins are loaded)", uri);
    const shape_source_type *type = shape_registry_source_for_uri(reg, uri, err);
    if (!type) return err->code;
    if (type->check_uri) SHAPE_RETURN_NOT_OK(type->check_uri(uri, err));
    if (!type->open && !type->open_stoppable)
        return shape_err_set(err, SHAPE_EINVAL, "the %s plugin's source cannot read streams in this version", type->name);
    return shape_source_type_open(type, uri, options, start, stop, out, err);
}

struct shape_stream {
    shape_stream_config cfg;
    shape_options *options; /* ours: gains "schema" once frozen */
    shape_source *src;      /* NULL while closed */
    shape_offsets offset;   /* the source position after the last batch taken */
    int have_offset;
    shape_offsets positions; /* furthest position processed, per partition */
    shape_offsets after;     /* scratch: the step's position */
    shape_stream_counters n;
    int64_t stalled; /* consecutive failed reads since the last new batch */
    shape_stream_column *schema;
    size_t n_schema;
    int have_schema;
    int64_t null_event_time;
    shape_decode_stats closed; /* over the sources closed so far */
    shape_source_progress parts;
    int stopped;
    int opened; /* a source was opened at least once */
    int32_t batch_partition; /* the one partition the last batch advanced, or -1 */
};

int shape_stream_new(const shape_stream_config *cfg, shape_stream **out, shape_err *err)
{
    *out = NULL;
    shape_stream *s = calloc(1, sizeof *s);
    if (!s || !(s->options = shape_options_copy(cfg->options))) {
        free(s);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    s->cfg = *cfg;
    s->cfg.options = NULL;
    s->parts = (shape_source_progress){-1, -1};
    *out = s;
    if (cfg->grow_schema) return shape_options_set_kv(s->options, "grow_schema=true", err);
    return SHAPE_OK;
}

static void close_source(shape_stream *s)
{
    if (!s->src) return;
    const shape_decode_stats *st = shape_source_stats(s->src);
    s->closed.messages += st->messages;
    s->closed.rows += st->rows;
    s->closed.undecodable += st->undecodable;
    s->closed.rejected += st->rejected;
    s->closed.offsets_lost += st->offsets_lost;
    s->closed.dropped_fields += st->dropped_fields;
    s->closed.values_overflowed += st->values_overflowed;
    if (st->columns_over_limit > s->closed.columns_over_limit) s->closed.columns_over_limit = st->columns_over_limit;
    s->parts = shape_source_progress_of(s->src);
    shape_source_close(s->src);
    s->src = NULL;
}

static void free_schema(shape_stream *s)
{
    for (size_t i = 0; i < s->n_schema; i++) {
        free(s->schema[i].name);
        free(s->schema[i].format);
    }
    free(s->schema);
    s->schema = NULL;
    s->n_schema = 0;
    s->have_schema = 0;
}

void shape_stream_free(shape_stream *s)
{
    if (!s) return;
    close_source(s);
    shape_options_free(s->options);
    shape_offsets_free(&s->offset);
    shape_offsets_free(&s->positions);
    shape_offsets_free(&s->after);
    free_schema(s);
    free(s);
}

/* ---- the frozen schema ----------------------------------------------------- */

/* Later reads of this run (reconnect, resume) decode with the frozen schema:
 * the source option schema=[[name, format], ...]. */
static int set_schema_option(shape_stream *s, shape_err *err)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < s->n_schema; i++)
        if (json_array_append_new(a, json_pack("[s,s]", s->schema[i].name, s->schema[i].format))) {
            json_decref(a);
            a = NULL;
        }
    char *text = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    char *kv = text ? malloc(strlen(text) + 8) : NULL;
    if (!kv) {
        free(text);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    strcpy(kv, "schema=");
    strcat(kv, text);
    int rc = shape_options_set_kv(s->options, kv, err);
    free(kv);
    free(text);
    return rc;
}

static int add_column(shape_stream *s, const char *name, const char *format, shape_err *err)
{
    shape_stream_column *c = &s->schema[s->n_schema];
    c->name = strdup(name);
    c->format = strdup(format);
    s->n_schema++;
    if (!c->name || !c->format) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    return SHAPE_OK;
}

static int freeze_schema(shape_stream *s, const struct ArrowSchema *schema, shape_err *err)
{
    s->schema = calloc((size_t)schema->n_children + 1, sizeof *s->schema);
    if (!s->schema) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (int64_t i = 0; i < schema->n_children; i++) {
        const char *name = schema->children[i]->name ? schema->children[i]->name : "";
        SHAPE_RETURN_NOT_OK(add_column(s, name, schema->children[i]->format, err));
    }
    s->have_schema = 1;
    return set_schema_option(s, err);
}

static const shape_stream_column *frozen_column(const shape_stream *s, const char *name)
{
    for (size_t i = 0; i < s->n_schema; i++)
        if (strcmp(s->schema[i].name, name) == 0) return &s->schema[i];
    return NULL;
}

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

static void batch_view_release_schema(struct ArrowSchema *sc)
{
    batch_view_unref(sc->private_data);
    sc->release = NULL;
}

static void batch_view_release_array(struct ArrowArray *a)
{
    batch_view_unref(a->private_data);
    a->release = NULL;
}

static void release_batch(struct ArrowSchema *schema, struct ArrowArray *array)
{
    if (array->release) array->release(array);
    if (schema->release) schema->release(schema);
}

/* Replace the batch in (*schema, *array) by its view through the frozen
 * schema: columns the schema lacks are left out, and so is an all-null
 * column typed differently. On failure the batch is released. */
static int view_batch(shape_stream *s, struct ArrowSchema *schema, struct ArrowArray *array, shape_err *err)
{
    int rc = s->have_schema ? SHAPE_OK : freeze_schema(s, schema, err);
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
        release_batch(schema, array);
        return rc == SHAPE_OK ? shape_err_set(err, SHAPE_ENOMEM, "out of memory") : rc;
    }
    int64_t kept = 0;
    int grew = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *name = schema->children[i]->name ? schema->children[i]->name : "";
        const shape_stream_column *t = frozen_column(s, name);
        if (!t && s->cfg.grow_schema && rc == SHAPE_OK) { /* a column the decoder grew: the run's schema grows */
            shape_stream_column *more = realloc(s->schema, (s->n_schema + 2) * sizeof *more);
            if (!more) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
            else {
                s->schema = more;
                memset(&more[s->n_schema], 0, 2 * sizeof *more);
                rc = add_column(s, name, schema->children[i]->format, err);
                t = rc == SHAPE_OK ? &s->schema[s->n_schema - 1] : NULL;
                grew = 1;
            }
        }
        if (!t) continue;
        if (strcmp(t->name, SHAPE_STREAM_EVENT_TIME_COLUMN) == 0) s->null_event_time += null_count_of(array->children[i]);
        if (strcmp(t->format, schema->children[i]->format) != 0 && null_count_of(array->children[i]) == array->length)
            continue;
        v->schema_children[kept] = schema->children[i];
        v->array_children[kept] = array->children[i];
        kept++;
    }
    if (grew && rc == SHAPE_OK) rc = set_schema_option(s, err);
    if (rc != SHAPE_OK) {
        free(v->schema_children);
        free(v->array_children);
        free(v);
        release_batch(schema, array);
        return rc;
    }
    /* the view: the batch's own top-level fields over the kept children */
    v->schema = *schema;
    v->array = *array;
    v->refs = 2;
    schema->n_children = kept;
    schema->children = v->schema_children;
    schema->release = batch_view_release_schema;
    schema->private_data = v;
    array->n_children = kept;
    array->children = v->array_children;
    array->release = batch_view_release_array;
    array->private_data = v;
    return SHAPE_OK;
}

/* ---- restoring ------------------------------------------------------------- */

int shape_stream_restore(shape_stream *s, const shape_stream_resume_point *at, shape_err *err)
{
    if (at->offset) {
        SHAPE_RETURN_NOT_OK(shape_offsets_copy(&s->offset, at->offset, err));
        s->have_offset = 1;
    }
    if (at->positions) SHAPE_RETURN_NOT_OK(shape_offsets_copy(&s->positions, at->positions, err));
    if (at->counters) s->n = *at->counters;
    s->null_event_time = at->null_event_time;
    if (at->schema) {
        free_schema(s);
        s->schema = calloc(at->n_schema + 1, sizeof *s->schema);
        if (!s->schema) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        for (size_t i = 0; i < at->n_schema; i++)
            SHAPE_RETURN_NOT_OK(add_column(s, at->schema[i].name, at->schema[i].format, err));
        s->have_schema = 1;
        SHAPE_RETURN_NOT_OK(set_schema_option(s, err));
    }
    return SHAPE_OK;
}

/* ---- reading --------------------------------------------------------------- */

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

static int stop_requested(const shape_stream *s)
{
    return s->cfg.stop && *s->cfg.stop;
}

/* Wait `seconds`, waking early when a stop is requested. */
static void backoff(const shape_stream *s, double seconds)
{
    double until = shape_clock_now() + seconds;
    while (!stop_requested(s)) {
        double left = until - shape_clock_now();
        if (left <= 0) break;
        if (left > 0.1) left = 0.1;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* A failed read: close the source and back off, or give up (the error
 * stays in err). */
static int after_failure(shape_stream *s, shape_err *err)
{
    close_source(s);
    s->stalled++;
    if (s->stalled > s->cfg.max_reconnects) {
        if (s->stalled > 1) /* with no reconnect allowed, the source's error is the whole story */
            shape_err_prefix(err, "gave up after %lld reconnect%s", (long long)(s->stalled - 1),
                             s->stalled == 2 ? "" : "s");
        return err->code;
    }
    s->n.reconnects++;
    double wait = (double)(1 << (s->stalled < 6 ? s->stalled - 1 : 5)); /* 1, 2, 4, ... s */
    if (wait > BACKOFF_CAP_S) wait = BACKOFF_CAP_S;
    char message[600];
    snprintf(message, sizeof message, "%s; reconnecting in %.0f s (%lld of %lld)", err->message, wait,
             (long long)s->stalled, (long long)s->cfg.max_reconnects);
    if (s->cfg.warn) s->cfg.warn(s->cfg.ud, message);
    else fprintf(stderr, "shape: warning: %s\n", message);
    shape_err_clear(err);
    backoff(s, wait);
    return SHAPE_OK;
}

/* The one partition `after` advances beyond `positions`, -1 for none or
 * several (a partition absent from positions counts as advanced). */
static int32_t advanced_partition(const shape_offsets *positions, const shape_offsets *after)
{
    int32_t found = -1;
    for (size_t i = 0; i < after->n; i++) {
        int64_t had;
        if (shape_offsets_get(positions, after->partitions[i], &had) && had >= after->next[i]) continue;
        if (found >= 0) return -1;
        found = after->partitions[i];
    }
    return found;
}

/* The step's batch, if any, is new: hand it out (*taken) or drop it. */
static int take_step(shape_stream *s, struct ArrowSchema *schema, struct ArrowArray *array, int *taken,
                     shape_err *err)
{
    int rc = SHAPE_OK;
    *taken = 0;
    if (array->release) {
        s->n.batches_read++;
        if (s->positions.n > 0 && !shape_offsets_advances(&s->after, &s->positions)) {
            s->n.duplicate_batches++;
            s->n.duplicate_rows += array->length;
            release_batch(schema, array);
        } else {
            rc = s->cfg.freeze_schema ? view_batch(s, schema, array, err) : SHAPE_OK;
            s->batch_partition = advanced_partition(&s->positions, &s->after);
            if (rc == SHAPE_OK) rc = advance_positions(&s->positions, &s->after, err);
            s->n.batches_processed++;
            s->stalled = 0;
            *taken = rc == SHAPE_OK;
            if (rc != SHAPE_OK) release_batch(schema, array);
        }
    } else if (s->after.n > 0) {
        rc = advance_positions(&s->positions, &s->after, err);
    }
    if (rc == SHAPE_OK && s->after.n > 0) {
        rc = shape_offsets_copy(&s->offset, &s->after, err);
        s->have_offset = 1;
    }
    if (rc != SHAPE_OK && *taken) {
        release_batch(schema, array);
        *taken = 0;
    }
    return rc;
}

int shape_stream_next(shape_stream *s, struct ArrowSchema *schema, struct ArrowArray *array, int *end,
                      shape_err *err)
{
    memset(schema, 0, sizeof *schema);
    memset(array, 0, sizeof *array);
    *end = 0;
    for (;;) {
        if (stop_requested(s)) {
            s->stopped = 1;
            *end = 1;
            return SHAPE_OK;
        }
        int rc = SHAPE_OK, done = 0, taken = 0;
        if (!s->src)
            rc = shape_stream_open_source(s->cfg.registry, s->cfg.uri, s->options, s->have_offset ? &s->offset : NULL,
                                          s->cfg.stop, &s->src, err);
        if (rc == SHAPE_OK) {
            s->opened = 1;
            rc = shape_source_next(s->src, schema, array, &s->after, &done, err);
        }
        if (rc == SHAPE_ECONN && !s->opened && stop_requested(s)) {
            /* asked to stop while the first connection was being tried (a
             * stoppable open returns within ~100 ms of the request, another
             * waits up to its time-out): the stop wins over the failure it
             * ended with */
            shape_err_clear(err);
            s->stopped = 1;
            *end = 1;
            return SHAPE_OK;
        }
        if (rc == SHAPE_ECONN && !s->opened) {
            /* The cluster was never reached: a wrong address or a cluster
             * that is down, said at once (one open's time-out, ~10 s),
             * not after every back-off of --max-reconnects. */
            return shape_err_prefix(err, "cannot connect to the source (not retried before a first connection)");
        }
        if (rc == SHAPE_ECONN) {
            release_batch(schema, array);
            SHAPE_RETURN_NOT_OK(after_failure(s, err));
            continue;
        }
        if (rc != SHAPE_OK || done) {
            release_batch(schema, array);
            *end = done;
            return rc;
        }
        SHAPE_RETURN_NOT_OK(take_step(s, schema, array, &taken, err));
        if (taken) return SHAPE_OK;
    }
}

/* ---- reading the state ----------------------------------------------------- */

int shape_stream_stopped(const shape_stream *s) { return s->stopped; }
int32_t shape_stream_batch_partition(const shape_stream *s) { return s->batch_partition; }
int shape_stream_opened(const shape_stream *s) { return s->opened; }
const shape_stream_counters *shape_stream_counters_of(const shape_stream *s) { return &s->n; }
shape_stream_counters *shape_stream_counters_mut(shape_stream *s) { return &s->n; }
const shape_offsets *shape_stream_offset(const shape_stream *s) { return s->have_offset ? &s->offset : NULL; }
const shape_offsets *shape_stream_positions(const shape_stream *s) { return &s->positions; }
int64_t shape_stream_null_event_time(const shape_stream *s) { return s->null_event_time; }

const shape_stream_column *shape_stream_schema(const shape_stream *s, size_t *n)
{
    *n = s->have_schema ? s->n_schema : 0;
    return s->have_schema ? s->schema : NULL;
}

shape_decode_stats shape_stream_stats(const shape_stream *s)
{
    shape_decode_stats t = s->closed;
    if (s->src) {
        const shape_decode_stats *st = shape_source_stats(s->src);
        t.messages += st->messages;
        t.rows += st->rows;
        t.undecodable += st->undecodable;
        t.rejected += st->rejected;
        t.offsets_lost += st->offsets_lost;
        t.dropped_fields += st->dropped_fields;
        t.values_overflowed += st->values_overflowed;
        if (st->columns_over_limit > t.columns_over_limit) t.columns_over_limit = st->columns_over_limit;
    }
    return t;
}

shape_source_progress shape_stream_progress(shape_stream *s)
{
    if (s->src) s->parts = shape_source_progress_of(s->src);
    return s->parts;
}

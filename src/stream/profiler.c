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
 * one, where it is routed once (split_route): one sweep cuts it into runs
 * of rows with the same header or field value (a topic written table after
 * table has few, long runs), finds each run's table, and groups the runs by
 * table; each table then takes only its own runs, zero-copy slices of the
 * struct array, in one call (shape_profile_update_runs) — so each table
 * sees its rows in stream order, in the slices a profile of each run would,
 * and no table looks at another's rows.
 * Split with a window kind: the window task routes each batch the same
 * way and hands every table's window profiler its runs
 * (shape_window_profiler_update_runs) with the whole batch's newest event
 * time, so all tables keep one watermark (the one a profiler of all the
 * rows would have); a new table copies the clock of the first. Each closed
 * window goes to the windows file with its table.
 */
#define _XOPEN_SOURCE 700 /* realpath */
/* Windowed batches queued for the window task behind the reader. Its jobs
 * are short (a windowed read's batches are small) and uneven (the odd one
 * closes and writes windows): with one in flight the reader and the task
 * meet at every batch and each waits out the other's slow ones. */
#define WINDOW_QUEUE 8
#include "shape/stream_profiler.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "shape/base64.h"
#include "shape/clock.h"
#include "shape/paths.h"
#include "shape/profile_worker.h"
#include "shape/stream_checkpoint.h"
#include "shape/task.h"
#include "shape/utf8.h"
#include "shape/windows_file.h"

#include "scratch.h"

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
     * up to WINDOW_QUEUE of them queued behind the reader; jobs is a ring of
     * WINDOW_QUEUE + 1 slots, next the one the next batch takes (a slot is
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
        int overflowed; /* split: p->overflowed after this job (read by the reader when the slot comes back) */
    } jobs[WINDOW_QUEUE + 1];
    size_t next_job;
    int wfail;
    shape_err wfail_err;
    /* split: the tables in order of first row, batch k split on stask */
    int split, by_header;
    const char *split_name;
    shape_profile **tables;
    size_t n_tables, cap_tables, n_values;
    int overflowed, warned;
    /* split with a window kind: a window profiler per table (names[i] its
     * table), all on one clock (shape_window_profiler_copy_clock) */
    shape_window_profiler **wtabs;
    char **wnames;
    /* scratch of split_route: a batch's runs of rows with one key, with
     * their tables, then grouped by table (table t's runs are
     * runs[first[t] .. first[t + 1])) */
    shape_profile_run *cuts, *runs;
    uint32_t *cut_table;
    size_t cap_cuts;
    size_t *first;
    size_t cap_first;
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

/* ---- split ---------------------------------------------------------------- */

int shape_stream_split_parse(const char *spec, int *by_header, const char **name, shape_err *err)
{
    if (spec && strncmp(spec, "header:", 7) == 0 && spec[7]) {
        *by_header = 1;
        *name = spec + 7;
    } else if (spec && strncmp(spec, "field:", 6) == 0 && spec[6]) {
        *by_header = 0;
        *name = spec + 6;
    } else {
        return shape_err_set(err, SHAPE_EINVAL, "--split-by must be header:NAME or field:NAME, not '%.60s'",
                             spec ? spec : "");
    }
    return SHAPE_OK;
}

static int bit_set(const struct ArrowArray *a, int64_t i)
{
    const uint8_t *v = a->buffers[0];
    return a->null_count == 0 || !v || ((v[i >> 3] >> (i & 7)) & 1);
}

/* Element i (before a's own offset) of a utf8/binary array ("u"/"z", or
 * "U"/"Z" when large); 0 when null. */
static int bytes_at(const struct ArrowArray *a, int large, int64_t i, const uint8_t **s, size_t *n)
{
    i += a->offset;
    if (!bit_set(a, i)) return 0;
    int64_t from, to;
    if (large) {
        const int64_t *o = a->buffers[1];
        from = o[i], to = o[i + 1];
    } else {
        const int32_t *o = a->buffers[1];
        from = o[i], to = o[i + 1];
    }
    *s = (const uint8_t *)a->buffers[2] + from;
    *n = (size_t)(to - from);
    return 1;
}

/* How a batch's rows name their table: the column and its layout. */
typedef struct split_key {
    const struct ArrowArray *col; /* NULL: no row has one */
    char type;                    /* 'u' 'U' (text), 'l' (int64), 'b' (bool), 'm' (header map) */
    char buf[2][24];              /* an int rendered, for this row and the one before */
} split_key;

static int split_key_open(const shape_stream_profiler *p, const struct ArrowSchema *schema,
                          const struct ArrowArray *array, split_key *k, int64_t *hidden, shape_err *err)
{
    const char *want = p->by_header ? "_shape_headers" : p->split_name;
    memset(k, 0, sizeof *k);
    *hidden = -1;
    for (int64_t i = 0; i < schema->n_children; i++) {
        if (strcmp(schema->children[i]->name, want) != 0) continue;
        const char *f = schema->children[i]->format;
        if (p->by_header) {
            const struct ArrowSchema *e = schema->children[i]->n_children == 1 ? schema->children[i]->children[0] : NULL;
            if (strcmp(f, "+m") != 0 || !e || e->n_children != 2 || strcmp(e->children[0]->format, "u") != 0 ||
                strcmp(e->children[1]->format, "z") != 0)
                return shape_err_set(err, SHAPE_EINVAL, "--split-by header: needs the headers as a map (not nested=0)");
            if (!p->cfg.keep_headers) *hidden = i;
            k->type = 'm';
        } else if (!strcmp(f, "u") || !strcmp(f, "U") || !strcmp(f, "l") || !strcmp(f, "b")) {
            k->type = f[0];
        } else {
            return shape_err_set(err, SHAPE_EINVAL,
                                 "--split-by field:%s: the column is of Arrow type '%s'; only text, integer and bool "
                                 "columns name tables",
                                 p->split_name, f);
        }
        k->col = array->children[i];
        break;
    }
    return SHAPE_OK;
}

/* Row r's table name (*s, *n), or 0 when the row has none. */
static int split_key_at(const shape_stream_profiler *p, split_key *k, int64_t r, int slot, const uint8_t **s,
                        size_t *n)
{
    const struct ArrowArray *c = k->col;
    if (!c) return 0;
    switch (k->type) {
    case 'u':
    case 'U':
        return bytes_at(c, k->type == 'U', r, s, n) && shape_utf8_valid(*s, *n);
    case 'l':
        if (!bit_set(c, r + c->offset)) return 0;
        *n = (size_t)snprintf(k->buf[slot], sizeof k->buf[slot], "%lld",
                              (long long)((const int64_t *)c->buffers[1])[r + c->offset]);
        *s = (const uint8_t *)k->buf[slot];
        return 1;
    case 'b': {
        if (!bit_set(c, r + c->offset)) return 0;
        int64_t i = r + c->offset;
        int v = (((const uint8_t *)c->buffers[1])[i >> 3] >> (i & 7)) & 1;
        *s = (const uint8_t *)(v ? "true" : "false");
        *n = v ? 4 : 5;
        return 1;
    }
    default: { /* the header map: the first entry named split_name */
        int64_t i = r + c->offset;
        if (!bit_set(c, i)) return 0;
        const int32_t *o = c->buffers[1];
        const struct ArrowArray *e = c->children[0];
        size_t want = strlen(p->split_name);
        for (int64_t j = o[i]; j < o[i + 1]; j++) {
            const uint8_t *name;
            size_t len;
            if (!bytes_at(e->children[0], 0, j + e->offset, &name, &len) || len != want ||
                memcmp(name, p->split_name, want) != 0)
                continue;
            return bytes_at(e->children[1], 0, j + e->offset, s, n) && shape_utf8_valid(*s, *n);
        }
        return 0;
    }
    }
}

/* The table named (s, n); value: a distinct value (counts toward max_tables). */
static int split_table(shape_stream_profiler *p, const uint8_t *s, size_t n, int value, size_t *out, shape_err *err)
{
    if (!value) {
        s = (const uint8_t *)p->cfg.name;
        n = strlen(p->cfg.name);
    }
    for (;;) {
        for (size_t i = 0; i < p->n_tables; i++) {
            const char *t = shape_profile_name(p->tables[i]);
            if (strlen(t) == n && memcmp(t, s, n) == 0) return (*out = i, SHAPE_OK);
        }
        if (!value || p->n_values < (size_t)p->cfg.max_tables) break;
        p->overflowed = 1; /* too many values: into _other */
        s = (const uint8_t *)"_other";
        n = 6;
        value = 0;
        for (size_t i = 0; i < p->n_tables; i++)
            if (!strcmp(shape_profile_name(p->tables[i]), "_other")) return (*out = i, SHAPE_OK);
        break;
    }
    if (p->n_tables == p->cap_tables) {
        size_t cap = p->cap_tables ? 2 * p->cap_tables : 16;
        shape_profile **t = realloc(p->tables, cap * sizeof *t);
        if (!t) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        p->tables = t;
        p->cap_tables = cap;
    }
    char *name = malloc(n + 1);
    if (!name) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    memcpy(name, s, n);
    name[n] = '\0';
    int rc = shape_profile_new(name, &p->cfg.profile, &p->tables[p->n_tables], err);
    free(name);
    if (rc != SHAPE_OK) return rc;
    *out = p->n_tables++;
    if (value) p->n_values++;
    return SHAPE_OK;
}

/* The batch as the tables see it: without the hidden column (the headers
 * read only for the split), its children lists in sch/arr (room for all). */
static void split_view(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t hidden,
                       struct ArrowSchema **sch, struct ArrowArray **arr, struct ArrowSchema *vs, struct ArrowArray *va)
{
    *vs = *schema;
    *va = *array;
    if (hidden < 0) return;
    int64_t m = 0;
    for (int64_t i = 0; i < schema->n_children; i++)
        if (i != hidden) sch[m] = schema->children[i], arr[m++] = array->children[i];
    vs->children = sch;
    vs->n_children = m;
    va->children = arr;
    va->n_children = m;
}

static int split_wtable(shape_stream_profiler *p, const uint8_t *s, size_t n, int value, size_t *out, shape_err *err);

/* Route a batch once: one sweep cuts it into runs of rows with the same
 * value (a run ends where the value changes, so two values that name one
 * table stay two runs, as before there was a router), looks each run's
 * table up (made at its first run, so tables are in order of first row),
 * then groups the runs by table, in row order (a counting sort), so each
 * table is handed only its own rows, in one call. */
static int split_route(shape_stream_profiler *p, const struct ArrowSchema *schema, const struct ArrowArray *array,
                       int64_t *hidden, shape_err *err)
{
    split_key k;
    SHAPE_RETURN_NOT_OK(split_key_open(p, schema, array, &k, hidden, err));
    size_t rows = array->length > 0 ? (size_t)array->length : 1;
    SHAPE_RETURN_NOT_OK(stream_scratch_grow(
        rows, &p->cap_cuts,
        (stream_scratch[]){STREAM_SCRATCH(p->cuts), STREAM_SCRATCH(p->runs), STREAM_SCRATCH(p->cut_table)}, 3, err));
    const uint8_t *ks = NULL;
    size_t kn = 0, n_cuts = 0;
    int have = 0, slot = 0;
    int64_t from = 0;
    for (int64_t r = 0; r <= array->length; r++) {
        const uint8_t *s = NULL;
        size_t n = 0;
        int h = 0;
        if (r < array->length) {
            h = split_key_at(p, &k, array->offset + r, slot, &s, &n);
            if (r > 0 && h == have && (!h || (n == kn && memcmp(s, ks, n) == 0))) continue;
        }
        if (r > 0) { /* the run [from, r) ends */
            size_t at = 0;
            SHAPE_RETURN_NOT_OK(p->win ? split_wtable(p, ks, kn, have, &at, err) : split_table(p, ks, kn, have, &at, err));
            p->cuts[n_cuts] = (shape_profile_run){from, r - from};
            p->cut_table[n_cuts++] = (uint32_t)at;
        }
        from = r, have = h, ks = s, kn = n, slot ^= 1;
    }
    if (p->n_tables + 1 > p->cap_first) {
        size_t *f = realloc(p->first, (p->n_tables + 1) * sizeof *f);
        if (!f) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        p->first = f;
        p->cap_first = p->n_tables + 1;
    }
    memset(p->first, 0, (p->n_tables + 1) * sizeof *p->first);
    for (size_t c = 0; c < n_cuts; c++) p->first[p->cut_table[c] + 1]++;
    for (size_t t = 0; t < p->n_tables; t++) p->first[t + 1] += p->first[t];
    for (size_t c = 0; c < n_cuts; c++) p->runs[p->first[p->cut_table[c]]++] = p->cuts[c];
    for (size_t t = p->n_tables; t-- > 0;) p->first[t + 1] = p->first[t]; /* back to the starts */
    p->first[0] = 0;
    return SHAPE_OK;
}

/* The routed batch's view without the hidden column (the headers read only
 * for the split); sch and arr hold its children lists. */
static int split_view_alloc(const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t hidden,
                            struct ArrowSchema ***sch, struct ArrowArray ***arr, struct ArrowSchema *vs,
                            struct ArrowArray *va, shape_err *err)
{
    *sch = malloc(((size_t)schema->n_children + 1) * sizeof **sch);
    *arr = malloc(((size_t)array->n_children + 1) * sizeof **arr);
    if (!*sch || !*arr) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    split_view(schema, array, hidden, *sch, *arr, vs, va);
    return SHAPE_OK;
}

static int split_batch(shape_stream_profiler *p, const struct ArrowSchema *schema, const struct ArrowArray *array,
                       shape_err *err)
{
    int64_t hidden;
    SHAPE_RETURN_NOT_OK(split_route(p, schema, array, &hidden, err));
    struct ArrowSchema **sch = NULL, vs;
    struct ArrowArray **arr = NULL, va;
    int rc = split_view_alloc(schema, array, hidden, &sch, &arr, &vs, &va, err);
    for (size_t t = 0; rc == SHAPE_OK && t < p->n_tables; t++)
        if (p->first[t + 1] > p->first[t])
            rc = shape_profile_update_runs(p->tables[t], &vs, &va, p->runs + p->first[t], p->first[t + 1] - p->first[t],
                                           err);
    free(sch);
    free(arr);
    return rc;
}

/* ---- split with windows ------------------------------------------------------ */

/* The windowed table named (s, n) (value: a distinct value), made on first
 * use with the clock of the tables before it. */
static int split_wtable(shape_stream_profiler *p, const uint8_t *s, size_t n, int value, size_t *out, shape_err *err)
{
    if (!value) {
        s = (const uint8_t *)p->cfg.name;
        n = strlen(p->cfg.name);
    }
    for (;;) {
        for (size_t i = 0; i < p->n_tables; i++)
            if (strlen(p->wnames[i]) == n && memcmp(p->wnames[i], s, n) == 0) return (*out = i, SHAPE_OK);
        if (!value || p->n_values < (size_t)p->cfg.max_tables) break;
        p->overflowed = 1;
        s = (const uint8_t *)"_other";
        n = 6;
        value = 0;
    }
    if (p->n_tables == p->cap_tables) {
        size_t cap = p->cap_tables ? 2 * p->cap_tables : 16;
        shape_window_profiler **w = realloc(p->wtabs, cap * sizeof *w);
        if (w) p->wtabs = w;
        char **nm = w ? realloc(p->wnames, cap * sizeof *nm) : NULL;
        if (nm) p->wnames = nm;
        if (!w || !nm) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        p->cap_tables = cap;
    }
    char *name = malloc(n + 1);
    if (!name) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    memcpy(name, s, n);
    name[n] = '\0';
    shape_window_profiler *w = NULL;
    int rc = shape_window_profiler_new(name, &p->cfg.profile, &p->cfg.window, &w, err);
    if (rc == SHAPE_OK && p->n_tables) rc = shape_window_profiler_copy_clock(w, p->wtabs[0], err);
    if (rc != SHAPE_OK) {
        shape_window_profiler_free(w);
        free(name);
        return rc;
    }
    p->wtabs[p->n_tables] = w;
    p->wnames[p->n_tables] = name;
    *out = p->n_tables++;
    if (value) p->n_values++;
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
    for (size_t i = 0; i < p->n_tables; i++) {
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

/* A batch into its tables' windows: routed once (split_route; new tables
 * join on the clock as it was before this batch), then every table takes
 * its own runs, its clock moved by the whole batch's newest time, so all
 * keep one watermark. */
static int split_window_batch(shape_stream_profiler *p, const struct ArrowSchema *schema,
                              const struct ArrowArray *array, const int32_t *known, size_t n_known, int32_t partition,
                              double now, shape_err *err)
{
    int64_t hidden;
    SHAPE_RETURN_NOT_OK(split_route(p, schema, array, &hidden, err));
    struct ArrowSchema **sch = NULL, vs;
    struct ArrowArray **arr = NULL, va;
    int64_t newest = 0;
    int rc = split_view_alloc(schema, array, hidden, &sch, &arr, &vs, &va, err);
    if (rc == SHAPE_OK) rc = shape_window_batch_newest(&vs, &va, SHAPE_STREAM_EVENT_TIME_COLUMN, &newest, err);
    for (size_t t = 0; rc == SHAPE_OK && t < p->n_tables; t++) {
        table_emit te = {p, p->wnames[t]};
        rc = shape_window_profiler_update_runs(p->wtabs[t], &vs, &va, p->runs + p->first[t],
                                               p->first[t + 1] - p->first[t], newest, SHAPE_STREAM_EVENT_TIME_COLUMN,
                                               known, n_known, partition, now, emit_table_window, &te, err);
    }
    free(sch);
    free(arr);
    sum_window_counters(p);
    return rc;
}

static json_t *split_windows_save(const shape_stream_profiler *p, shape_err *err, int *rc)
{
    json_t *tables = json_array();
    json_t *doc = json_pack("{s:o, s:I, s:b}", "tables", tables, "values", (json_int_t)p->n_values, "overflowed",
                            p->overflowed);
    *rc = doc ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; *rc == SHAPE_OK && i < p->n_tables; i++) {
        json_t *st = NULL;
        *rc = shape_window_profiler_save(p->wtabs[i], &st, err);
        if (*rc == SHAPE_OK && json_array_append_new(tables, json_pack("{s:s, s:o}", "table", p->wnames[i], "state", st)))
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
        for (size_t j = 0; j < p->n_tables; j++)
            if (!strcmp(p->wnames[j], name)) return shape_err_set(err, SHAPE_EINVAL, "the split table '%.100s' twice", name);
        size_t at;
        int64_t keep = (int64_t)p->n_values;
        SHAPE_RETURN_NOT_OK(split_wtable(p, (const uint8_t *)name, strlen(name), 1, &at, err));
        p->n_values = (size_t)keep; /* counted below, as saved */
        SHAPE_RETURN_NOT_OK(shape_window_profiler_load(p->wtabs[at], json_object_get(e, "state"), err));
    }
    if (json_integer_value(values) < 0 || (size_t)json_integer_value(values) > p->n_tables)
        return shape_err_set(err, SHAPE_EINVAL, "the split's value count is out of range");
    p->n_values = (size_t)json_integer_value(values);
    p->overflowed = json_is_true(json_object_get(doc, "overflowed"));
    sum_window_counters(p);
    return SHAPE_OK;
}

static void split_job_run(void *arg)
{
    struct split_job *j = arg;
    if (j->rc == SHAPE_OK) j->rc = split_batch(j->p, &j->schema, &j->array, &j->err);
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
    split_warn(p, p->overflowed);
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
        snprintf(message, sizeof message,
                 "--split-by %.100s: more than %lld distinct values; the rest are profiled together as table '_other'",
                 p->cfg.split_by, (long long)p->cfg.max_tables);
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

int shape_stream_split_document(const shape_profile *const *tables, size_t n, char **out, size_t *len, shape_err *err)
{
    *out = NULL;
    *len = 0;
    json_t *doc = NULL;
    SHAPE_RETURN_NOT_OK(shape_profile_document_json(tables, n, &doc, err));
    const char *name;
    json_t *t;
    json_object_foreach(json_object_get(doc, "tables"), name, t) {
        json_t *cols = json_object_get(t, "columns");
        for (size_t i = json_array_size(cols); i-- > 0;) {
            json_t *c = json_array_get(cols, i);
            if (json_integer_value(json_object_get(c, "null_count")) == json_integer_value(json_object_get(c, "count")))
                json_array_remove(cols, i);
        }
    }
    int rc = shape_profile_document_text(doc, out, len, err);
    json_decref(doc);
    return rc;
}

int shape_stream_split_states(const shape_profile *const *tables, size_t n, char **out, size_t *len, shape_err *err)
{
    *out = NULL;
    *len = 0;
    char *all = calloc(1, 1);
    size_t used = 0;
    int rc = all ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) {
        uint8_t *state = NULL;
        size_t slen = 0;
        rc = shape_profile_state_save(tables[i], &state, &slen, err);
        char *b64 = rc == SHAPE_OK ? shape_base64_encode(state, slen) : NULL;
        free(state);
        json_t *line = b64 ? json_pack("{s:s, s:s}", "state", b64, "table", shape_profile_name(tables[i])) : NULL;
        free(b64);
        char *text = NULL;
        size_t tlen = 0;
        if (rc == SHAPE_OK)
            rc = line ? shape_profile_json_dumps(line, -1, &text, &tlen, err)
                      : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        json_decref(line);
        char *grown = rc == SHAPE_OK ? realloc(all, used + tlen + 2) : NULL;
        if (rc == SHAPE_OK && !grown) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        if (grown) {
            all = grown;
            memcpy(all + used, text, tlen);
            used += tlen;
            all[used++] = '\n';
            all[used] = '\0';
        }
        free(text);
    }
    if (rc != SHAPE_OK) {
        free(all);
        return rc;
    }
    *out = all;
    *len = used;
    return SHAPE_OK;
}

size_t shape_stream_profiler_tables(const shape_stream_profiler *p, const shape_profile *const **out)
{
    *out = (const shape_profile *const *)p->tables;
    return p->split && !p->win ? p->n_tables : 0;
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
        p->tables = got.tables;
        p->n_tables = p->cap_tables = got.n_tables;
        p->n_values = (size_t)got.split_values;
        p->overflowed = got.split_overflowed;
        got.tables = NULL;
        got.n_tables = 0;
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
        rc = shape_stream_split_parse(cfg->split_by, &p->by_header, &p->split_name, err);
        if (rc == SHAPE_OK && cfg->max_tables < 1)
            rc = shape_err_set(err, SHAPE_EINVAL, "--max-tables must be at least 1");
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
    for (size_t i = 0; i < WINDOW_QUEUE + 1; i++) {
        struct window_job *j = &p->jobs[i];
        if (j->array.release) j->array.release(&j->array);
        if (j->schema.release) j->schema.release(&j->schema);
        free(j->known);
    }
    if (p->stask) shape_task_wait(p->stask);
    shape_task_free(p->stask);
    if (p->sjob.array.release) p->sjob.array.release(&p->sjob.array);
    if (p->sjob.schema.release) p->sjob.schema.release(&p->sjob.schema);
    for (size_t i = 0; i < p->n_tables && p->tables; i++) shape_profile_free(p->tables[i]);
    free(p->tables);
    for (size_t i = 0; i < p->n_tables && p->wtabs; i++) {
        shape_window_profiler_free(p->wtabs[i]);
        free(p->wnames[i]);
    }
    free(p->wtabs);
    free(p->wnames);
    free(p->cuts);
    free(p->runs);
    free(p->cut_table);
    free(p->first);
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
        for (size_t i = 0; i < p->n_tables; i++) rows += shape_profile_rows(p->tables[i]);
        return rows;
    }
    return p->win ? shape_window_profiler_counters(p->win)->rows_in : shape_profile_rows(p->profile);
}
shape_stream *shape_stream_profiler_stream(const shape_stream_profiler *p) { return p->stream; }

/* Wait for the batches queued on the window task; the first failure, if any. */
static int window_drain(shape_stream_profiler *p, shape_err *err)
{
    if (p->wtask) shape_task_wait(p->wtask);
    for (size_t i = 0; i < WINDOW_QUEUE + 1; i++) p->jobs[i].busy = 0;
    if (p->split) split_warn(p, p->overflowed);
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
                                          .split_values = (int64_t)p->n_values,
                                          .split_overflowed = p->overflowed,
                                          .tables = (const shape_profile *const *)p->tables,
                                          .n_tables = p->win ? 0 : p->n_tables,
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
    for (size_t i = 0; rc == SHAPE_OK && i < p->n_tables; i++) rc = stamp_one(p, p->tables[i], err);
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
    j->overflowed = p->overflowed;
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
    p->next_job = (p->next_job + 1) % (WINDOW_QUEUE + 1);
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

int shape_stream_profiler_run(shape_stream_profiler *p, shape_err *err)
{
    if (!p->worker && !p->win && !p->split) SHAPE_RETURN_NOT_OK(shape_profile_worker_new(p->profile, &p->worker, err));
    if (p->win && !p->wtask) SHAPE_RETURN_NOT_OK(shape_task_new_queue(&p->wtask, WINDOW_QUEUE, err));
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
            for (size_t t = 0; t < p->n_tables; t++) {
                table_emit te = {p, p->wnames[t]};
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

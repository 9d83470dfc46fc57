/* window.c — the windowed stream profiler (shape/stream_window.h):
 * tumbling, sliding and session windows over event time.
 *
 * Why: reference/spec-core.md §1.7 as one module that depends on nothing
 * but the profile engine, so its rules can be read (and tested) alone; the
 * stream driver (profiler.c) feeds it batches and writes what it closes.
 * How: the open "units" are kept sorted by start, each one profile:
 *   - tumbling and sliding share one path: a unit is a pane of
 *     p = gcd(size, slide) (tumbling: p = size, one pane per window). A row
 *     at t goes to the pane floor(t / p)·p; it is late when the newest
 *     window holding that pane (start floor(pane / slide)·slide) ended at or
 *     before the watermark. When the watermark moves to W, the windows with
 *     emitted_end < end <= W that hold a pane with rows are emitted in start
 *     order — one pane as it is, several merged into a fresh profile — and
 *     the panes whose newest window has ended are dropped.
 *   - session: a unit is a session [start, end). A row is late when
 *     t + gap <= W and no open session overlaps [t, t + gap). The batch's
 *     accepted times, sorted, are cut into runs (consecutive times closer
 *     than gap); each run [first, last + gap) absorbs every open session it
 *     overlaps (a run bridging two sessions merges them). Sessions with
 *     end <= W close.
 * Rows bound for one unit and adjacent in the batch are profiled as one
 * slice of it (the struct's offset and length moved; nothing is copied),
 * a unit's slices of a batch in one shape_profile_update_runs call, so an
 * in-order batch costs one update per window it touches. A profiler may
 * take only some runs of a batch's rows (one table's, --split-by): it then
 * reads only those, and its clock moves by the batch's newest time, given.
 * The watermark (per partition, never moving back) is recomputed after the
 * batch's rows are routed, so a batch is judged by the watermark before it.
 */
#include "shape/stream_window.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/base64.h"
#include "shape/timestamp.h"

#include "scratch.h"

#define NO_TIME INT64_MIN

typedef struct unit {
    int64_t start, end; /* pane or session bounds */
    int64_t rows;
    shape_profile *profile;
} unit;

typedef struct part {
    int32_t id;
    int64_t newest; /* NO_TIME: nothing delivered yet */
    int idle;
    double last_seen;
} part;

struct shape_window_profiler {
    char *name;
    shape_profile_config pcfg;
    shape_window_config cfg;
    int64_t pane; /* tumbling/sliding: gcd(size, slide) */
    unit *units;
    size_t n_units, cap_units;
    part *parts;
    size_t n_parts, cap_parts;
    int64_t newest;       /* max event time seen, NO_TIME before the first */
    int64_t watermark;    /* NO_TIME before the first */
    int64_t emitted_end;  /* sliding/tumbling: windows with end <= this are closed */
    shape_window_counters n;
    /* scratch, per batch: for each row taken (k), its row in the batch,
     * its time and the unit start it goes to (NO_TIME: none) */
    int64_t *rows;
    int64_t *times;
    int64_t *keys;
    size_t cap_rows;
    struct unit_run { /* profile_runs: the slices, with their unit */
        shape_profile_run run;
        size_t unit;
    } *slices;
    shape_profile_run *unit_runs; /* one unit's slices, for its profile */
    size_t cap_slices;
    /* deferred profiling (shape_window_profiler_defer; panes only): the
     * slices routed but not profiled yet, in routing order */
    int defer;
    struct held_slice {
        int64_t unit_start;
        size_t seq;
        const struct ArrowSchema *schema;
        const struct ArrowArray *batch;
        shape_profile_run run;
    } *held;
    shape_profile_slice *pane_slices; /* flush: one pane's, cap_held of them */
    size_t n_held, cap_held;
};

/* ---- small helpers ------------------------------------------------------- */

const char *shape_window_kind_name(shape_window_kind kind)
{
    static const char *const names[] = {"global", "tumbling", "sliding", "session"};
    return (unsigned)kind < 4 ? names[kind] : "?";
}

int shape_window_kind_parse(const char *name, shape_window_kind *kind)
{
    for (int k = SHAPE_WINDOW_GLOBAL; k <= SHAPE_WINDOW_SESSION; k++)
        if (name && strcmp(name, shape_window_kind_name((shape_window_kind)k)) == 0) {
            *kind = (shape_window_kind)k;
            return 0;
        }
    return -1;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* floor(t / step) · step, saturating at the bottom of the range. */
static int64_t align(int64_t t, int64_t step)
{
    int64_t q = floor_div(t, step);
    if (q < INT64_MIN / step) return INT64_MIN;
    return q * step;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN + 1;
    return a + b;
}

static int64_t sat_sub(int64_t a, int64_t b) { return sat_add(a, b == INT64_MIN ? INT64_MAX : -b); }

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int shape_window_config_check(const shape_window_config *c, shape_err *err)
{
    if (c->allowed_lateness_us < 0) return shape_err_set(err, SHAPE_EINVAL, "--allowed-lateness must be >= 0");
    if (c->max_skew_us < 0) return shape_err_set(err, SHAPE_EINVAL, "--max-partition-skew must be >= 0");
    switch (c->kind) {
    case SHAPE_WINDOW_TUMBLING:
        if (c->size_us <= 0) return shape_err_set(err, SHAPE_EINVAL, "--size must be > 0");
        return SHAPE_OK;
    case SHAPE_WINDOW_SLIDING:
        if (c->size_us <= 0) return shape_err_set(err, SHAPE_EINVAL, "--size must be > 0");
        if (c->slide_us <= 0) return shape_err_set(err, SHAPE_EINVAL, "--slide must be > 0");
        if (c->slide_us > c->size_us) return shape_err_set(err, SHAPE_EINVAL, "--slide must be <= --size");
        return SHAPE_OK;
    case SHAPE_WINDOW_SESSION:
        if (c->gap_us <= 0) return shape_err_set(err, SHAPE_EINVAL, "--gap must be > 0");
        return SHAPE_OK;
    default:
        return shape_err_set(err, SHAPE_EINVAL, "the windowed profiler takes tumbling, sliding or session windows");
    }
}

void shape_window_config_identity(const shape_window_config *c, char *buf, size_t cap)
{
    switch (c->kind) {
    case SHAPE_WINDOW_TUMBLING:
        snprintf(buf, cap, "kind=tumbling size_us=%" PRId64 " allowed_lateness_us=%" PRId64, c->size_us,
                 c->allowed_lateness_us);
        break;
    case SHAPE_WINDOW_SLIDING:
        snprintf(buf, cap, "kind=sliding size_us=%" PRId64 " slide_us=%" PRId64 " allowed_lateness_us=%" PRId64,
                 c->size_us, c->slide_us, c->allowed_lateness_us);
        break;
    case SHAPE_WINDOW_SESSION:
        snprintf(buf, cap, "kind=session gap_us=%" PRId64 " allowed_lateness_us=%" PRId64, c->gap_us,
                 c->allowed_lateness_us);
        break;
    default:
        snprintf(buf, cap, "kind=global");
    }
}

void shape_window_iso(int64_t us, char *buf, size_t cap)
{
    /* 0001-01-01T00:00:00 and 9999-12-31T23:59:59.999999 */
    const int64_t lo = -62135596800000000LL, hi = 253402300799999999LL;
    if (us < lo) us = lo;
    if (us > hi) us = hi;
    char t[48];
    shape_format_iso8601_us(us, t, sizeof t); /* YYYY-MM-DDTHH:MM:SS.ffffffZ */
    size_t n = strlen(t);
    if (n > 0 && t[n - 1] == 'Z') t[--n] = '\0';
    if (n >= 7 && strcmp(t + n - 7, ".000000") == 0) t[n - 7] = '\0';
    snprintf(buf, cap, "%s+00:00", t);
}

/* ---- lifetime ------------------------------------------------------------ */

int shape_window_profiler_new(const char *name, const shape_profile_config *pcfg, const shape_window_config *cfg,
                              shape_window_profiler **out, shape_err *err)
{
    *out = NULL;
    SHAPE_RETURN_NOT_OK(shape_window_config_check(cfg, err));
    shape_window_profiler *w = calloc(1, sizeof *w);
    if (!w || !(w->name = strdup(name))) {
        free(w);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    if (pcfg) w->pcfg = *pcfg;
    else shape_profile_config_default(&w->pcfg);
    w->cfg = *cfg;
    if (cfg->kind == SHAPE_WINDOW_TUMBLING) w->cfg.slide_us = cfg->size_us;
    if (cfg->kind != SHAPE_WINDOW_SESSION) w->pane = gcd64(w->cfg.size_us, w->cfg.slide_us);
    w->newest = w->watermark = w->emitted_end = NO_TIME;
    *out = w;
    return SHAPE_OK;
}

static void drop_units(shape_window_profiler *w)
{
    for (size_t i = 0; i < w->n_units; i++) shape_profile_free(w->units[i].profile);
    w->n_units = 0;
}

void shape_window_profiler_free(shape_window_profiler *w)
{
    if (!w) return;
    drop_units(w);
    free(w->units);
    free(w->parts);
    free(w->rows);
    free(w->times);
    free(w->keys);
    free(w->slices);
    free(w->unit_runs);
    free(w->held);
    free(w->pane_slices);
    free(w->name);
    free(w);
}

const shape_window_counters *shape_window_profiler_counters(const shape_window_profiler *w) { return &w->n; }
size_t shape_window_profiler_open_units(const shape_window_profiler *w) { return w->n_units; }

int shape_window_profiler_watermark(const shape_window_profiler *w, int64_t *us)
{
    *us = w->watermark;
    return w->watermark != NO_TIME;
}

/* ---- units --------------------------------------------------------------- */

/* Index of the first unit with start >= s. */
static size_t lower_bound(const shape_window_profiler *w, int64_t s)
{
    size_t lo = 0, hi = w->n_units;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->units[mid].start < s) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Insert a new, empty unit [start, end) at index i. */
static int insert_unit(shape_window_profiler *w, size_t i, int64_t start, int64_t end, shape_err *err)
{
    if (w->n_units == w->cap_units) {
        size_t cap = w->cap_units ? 2 * w->cap_units : 16;
        unit *u = realloc(w->units, cap * sizeof *u);
        if (!u) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        w->units = u;
        w->cap_units = cap;
    }
    shape_profile *p;
    SHAPE_RETURN_NOT_OK(shape_profile_new(w->name, &w->pcfg, &p, err));
    memmove(&w->units[i + 1], &w->units[i], (w->n_units - i) * sizeof *w->units);
    w->units[i] = (unit){.start = start, .end = end, .rows = 0, .profile = p};
    w->n_units++;
    return SHAPE_OK;
}

static void remove_units(shape_window_profiler *w, size_t i, size_t count)
{
    for (size_t k = i; k < i + count; k++) shape_profile_free(w->units[k].profile);
    memmove(&w->units[i], &w->units[i + count], (w->n_units - i - count) * sizeof *w->units);
    w->n_units -= count;
}

/* The unit starting at `start` (pane), made if it is not there. */
static int pane_at(shape_window_profiler *w, int64_t start, size_t *at, shape_err *err)
{
    size_t i = lower_bound(w, start);
    if (i == w->n_units || w->units[i].start != start)
        SHAPE_RETURN_NOT_OK(insert_unit(w, i, start, sat_add(start, w->pane), err));
    *at = i;
    return SHAPE_OK;
}

/* ---- partitions and the watermark ---------------------------------------- */

static part *find_part(shape_window_profiler *w, int32_t id)
{
    for (size_t i = 0; i < w->n_parts; i++)
        if (w->parts[i].id == id) return &w->parts[i];
    return NULL;
}

static int add_part(shape_window_profiler *w, int32_t id, double now, shape_err *err)
{
    if (find_part(w, id)) return SHAPE_OK;
    if (w->n_parts == w->cap_parts) {
        size_t cap = w->cap_parts ? 2 * w->cap_parts : 8;
        part *p = realloc(w->parts, cap * sizeof *p);
        if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        w->parts = p;
        w->cap_parts = cap;
    }
    w->parts[w->n_parts++] = (part){.id = id, .newest = NO_TIME, .idle = 0, .last_seen = now};
    return SHAPE_OK;
}

static void recompute_watermark(shape_window_profiler *w)
{
    if (w->newest == NO_TIME) return;
    int64_t floor = sat_sub(w->newest, w->cfg.max_skew_us);
    int64_t low = INT64_MAX;
    int any = 0;
    for (size_t i = 0; i < w->n_parts; i++) {
        const part *p = &w->parts[i];
        if (p->idle) continue;
        int64_t t = p->newest != NO_TIME && p->newest > floor ? p->newest : floor;
        if (t < low) low = t;
        any = 1;
    }
    int64_t wm = sat_sub(any ? low : w->newest, w->cfg.allowed_lateness_us);
    if (w->watermark == NO_TIME || wm > w->watermark) w->watermark = wm;
}

/* After a batch: its partition delivered (all known ones when unknown),
 * silent ones may go idle, the watermark moves. */
static void advance_time(shape_window_profiler *w, int64_t batch_max, int32_t partition, double now)
{
    if (batch_max != NO_TIME && (w->newest == NO_TIME || batch_max > w->newest)) w->newest = batch_max;
    part *one = partition >= 0 ? find_part(w, partition) : NULL;
    for (size_t i = 0; i < w->n_parts; i++) {
        part *p = &w->parts[i];
        if (one && p != one) continue;
        if (batch_max != NO_TIME && (p->newest == NO_TIME || batch_max > p->newest)) p->newest = batch_max;
        p->idle = 0;
        p->last_seen = now;
    }
    if (w->cfg.idle_timeout_s > 0)
        for (size_t i = 0; i < w->n_parts; i++)
            if (!w->parts[i].idle && now - w->parts[i].last_seen >= w->cfg.idle_timeout_s) w->parts[i].idle = 1;
    recompute_watermark(w);
}

/* ---- event times --------------------------------------------------------- */

static int column_index(const struct ArrowSchema *schema, const char *name)
{
    for (int64_t i = 0; i < schema->n_children; i++)
        if (schema->children[i]->name && strcmp(schema->children[i]->name, name) == 0) return (int)i;
    return -1;
}

/* µs per unit of a temporal/int format; 0 when the format is not one. */
static int64_t time_factor(const char *f, int *date32)
{
    *date32 = 0;
    if (strncmp(f, "tss", 3) == 0) return 1000000;
    if (strncmp(f, "tsm", 3) == 0) return 1000;
    if (strncmp(f, "tsu", 3) == 0 || strcmp(f, "l") == 0) return 1;
    if (strncmp(f, "tsn", 3) == 0) return -1000; /* divide */
    if (strcmp(f, "tdD") == 0) {
        *date32 = 1;
        return 86400000000LL;
    }
    if (strcmp(f, "tdm") == 0) return 1000;
    if (strcmp(f, "n") == 0) return -1; /* a null column: no row has a time */
    return 0;
}

static int ensure_scratch(shape_window_profiler *w, size_t n, shape_err *err)
{
    return stream_scratch_grow(
        n, &w->cap_rows, (stream_scratch[]){STREAM_SCRATCH(w->rows), STREAM_SCRATCH(w->times), STREAM_SCRATCH(w->keys)},
        3, err);
}

/* The event-time column of a batch and how to read it. */
typedef struct time_column {
    const uint8_t *valid;
    const void *values; /* NULL: no row has a time */
    int64_t base;       /* the column's offset plus the batch's */
    int64_t factor;
    int date32;
} time_column;

static int time_column_open(const struct ArrowSchema *schema, const struct ArrowArray *batch, const char *event_time,
                            time_column *tc, shape_err *err)
{
    int col = column_index(schema, event_time);
    if (col < 0)
        return shape_err_set(err, SHAPE_EINVAL, "the stream has no event-time column '%.100s' to window by",
                             event_time);
    tc->factor = time_factor(schema->children[col]->format, &tc->date32);
    if (!tc->factor)
        return shape_err_set(err, SHAPE_EINVAL, "the event-time column '%.100s' has Arrow type '%.40s', not a time",
                             event_time, schema->children[col]->format);
    const struct ArrowArray *c = batch->children[col];
    tc->valid = c->n_buffers > 0 ? c->buffers[0] : NULL;
    tc->values = c->n_buffers > 1 && tc->factor != -1 ? c->buffers[1] : NULL;
    tc->base = c->offset + batch->offset;
    return SHAPE_OK;
}

/* Row i's event time in µs, NO_TIME when null. */
static int64_t time_at(const time_column *tc, int64_t i)
{
    int64_t j = tc->base + i;
    if ((tc->valid && !(tc->valid[j >> 3] & (1u << (j & 7)))) || !tc->values) return NO_TIME;
    int64_t v = tc->date32 ? ((const int32_t *)tc->values)[j] : ((const int64_t *)tc->values)[j];
    int64_t factor = tc->factor;
    if (factor < 0) v = floor_div(v, -factor);
    else if (factor > 1) {
        if (v > INT64_MAX / factor) v = INT64_MAX / factor;
        if (v < (INT64_MIN + 1) / factor) v = (INT64_MIN + 1) / factor;
        v *= factor;
    }
    if (v == NO_TIME) v++;
    return v;
}

int shape_window_batch_newest(const struct ArrowSchema *schema, const struct ArrowArray *batch, const char *event_time,
                              int64_t *newest, shape_err *err)
{
    time_column tc;
    *newest = NO_TIME;
    SHAPE_RETURN_NOT_OK(time_column_open(schema, batch, event_time, &tc, err));
    for (int64_t i = 0; i < batch->length; i++) {
        int64_t t = time_at(&tc, i);
        if (t != NO_TIME && t > *newest) *newest = t;
    }
    return SHAPE_OK;
}

/* For the rows of the runs, in order (k): rows[k] := the row, times[k] :=
 * its event time; the number of rows in *m. */
static int read_times(shape_window_profiler *w, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                      const shape_profile_run *runs, size_t n_runs, const char *event_time, size_t *m, shape_err *err)
{
    time_column tc;
    SHAPE_RETURN_NOT_OK(time_column_open(schema, batch, event_time, &tc, err));
    size_t total = 0;
    for (size_t r = 0; r < n_runs; r++) {
        if (runs[r].start < 0 || runs[r].length < 0 || runs[r].start > batch->length - runs[r].length ||
            (r > 0 && runs[r].start < runs[r - 1].start + runs[r - 1].length))
            return shape_err_set(err, SHAPE_EINVAL, "windowed profiler: runs of rows out of order or outside the batch");
        total += (size_t)runs[r].length;
    }
    SHAPE_RETURN_NOT_OK(ensure_scratch(w, total > 0 ? total : 1, err));
    size_t k = 0;
    for (size_t r = 0; r < n_runs; r++)
        for (int64_t i = runs[r].start; i < runs[r].start + runs[r].length; i++, k++) {
            w->rows[k] = i;
            w->times[k] = time_at(&tc, i);
        }
    *m = total;
    return SHAPE_OK;
}

/* ---- routing ------------------------------------------------------------- */

static int cmp_slice(const void *a, const void *b)
{
    const struct unit_run *x = a, *y = b;
    if (x->unit != y->unit) return x->unit < y->unit ? -1 : 1;
    return (x->run.start > y->run.start) - (x->run.start < y->run.start);
}

/* ---- deferred profiling ----------------------------------------------------
 * A windowed read's batch is one partition's few minutes, cut into slices of
 * a few hundred rows for the panes it spans, and the next batch (the next
 * partition) feeds the same panes: profiled batch by batch, every slice finds
 * its pane's sketches evicted by the other panes' (hundreds of KB each), and
 * the profile engine waits on memory. Deferred, a batch's slices are kept
 * (the batch with them: the caller keeps every batch alive until nothing is
 * held) and profiled pane by pane at a flush — a pane's slices of several
 * batches in one shape_profile_update_slices call, in the order they were
 * routed, so a column at a time over all of them. Each column of a pane
 * takes the same updates in the same order as it would batch by batch,
 * and columns and panes are independent, so every byte of every window and state is the
 * same; a flush comes before anything reads a pane: a window closing or a
 * pane dropped (close_panes), a save (refused with slices held). */
static int hold_slices(shape_window_profiler *w, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                       size_t n_slices, shape_err *err)
{
    if (w->n_held + n_slices > w->cap_held) {
        size_t cap = w->cap_held ? w->cap_held : 64;
        while (cap < w->n_held + n_slices) cap *= 2;
        struct held_slice *h = realloc(w->held, cap * sizeof *h);
        if (h) w->held = h;
        shape_profile_slice *ps = h ? realloc(w->pane_slices, cap * sizeof *ps) : NULL;
        if (ps) w->pane_slices = ps;
        if (!h || !ps) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        w->cap_held = cap;
    }
    for (size_t k = 0; k < n_slices; k++, w->n_held++)
        w->held[w->n_held] = (struct held_slice){w->units[w->slices[k].unit].start, w->n_held, schema, batch,
                                                 w->slices[k].run};
    return SHAPE_OK;
}

static int cmp_held(const void *a, const void *b)
{
    const struct held_slice *x = a, *y = b;
    if (x->unit_start != y->unit_start) return x->unit_start < y->unit_start ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

void shape_window_profiler_defer(shape_window_profiler *w, int on)
{
    w->defer = on && w->cfg.kind != SHAPE_WINDOW_SESSION;
}

size_t shape_window_profiler_held(const shape_window_profiler *w) { return w->n_held; }

int shape_window_profiler_flush(shape_window_profiler *w, shape_err *err)
{
    if (!w->n_held) return SHAPE_OK;
    qsort(w->held, w->n_held, sizeof *w->held, cmp_held);
    int rc = SHAPE_OK;
    for (size_t a = 0; rc == SHAPE_OK && a < w->n_held;) {
        const struct held_slice *first = &w->held[a];
        size_t at = lower_bound(w, first->unit_start), n = 0;
        if (at == w->n_units || w->units[at].start != first->unit_start) {
            rc = shape_err_set(err, SHAPE_EINTERNAL, "windowed profiler: a held slice's pane is missing");
            break;
        }
        /* the pane's slices of every batch in one call (as one call per
         * batch with its slices, as profile_runs makes, would take them) */
        while (a + n < w->n_held && w->held[a + n].unit_start == first->unit_start) {
            const struct held_slice *h = &w->held[a + n];
            w->pane_slices[n] = (shape_profile_slice){h->schema, h->batch, h->run};
            n++;
        }
        rc = shape_profile_update_slices(w->units[at].profile, w->pane_slices, n, err);
        a += n;
    }
    w->n_held = 0;
    return rc;
}

/* Profile each run of adjacent rows bound for one unit (keys[k] = its
 * start; NO_TIME: no unit) as a slice of the batch: the slices of a unit
 * in one shape_profile_update_runs call, in row order, so each unit's
 * profile sees the slices one call per slice would. */
static int profile_runs(shape_window_profiler *w, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                        size_t m, shape_err *err)
{
    size_t cached = SIZE_MAX, n_slices = 0;
    int sorted = 1;
    for (size_t i = 0; i < m;) {
        if (w->keys[i] == NO_TIME) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < m && w->keys[j] == w->keys[i] && w->rows[j] == w->rows[j - 1] + 1) j++;
        if (cached == SIZE_MAX || w->units[cached].start != w->keys[i]) {
            size_t at = lower_bound(w, w->keys[i]);
            if (at == w->n_units || w->units[at].start != w->keys[i])
                return shape_err_set(err, SHAPE_EINTERNAL, "windowed profiler: a row's window is missing");
            if (cached != SIZE_MAX && at < cached) sorted = 0;
            cached = at;
        }
        if (n_slices == w->cap_slices) {
            size_t cap = w->cap_slices ? 2 * w->cap_slices : 16;
            struct unit_run *g = realloc(w->slices, cap * sizeof *g);
            if (g) w->slices = g;
            shape_profile_run *u = g ? realloc(w->unit_runs, cap * sizeof *u) : NULL;
            if (u) w->unit_runs = u;
            if (!g || !u) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
            w->cap_slices = cap;
        }
        w->slices[n_slices++] = (struct unit_run){{w->rows[i], (int64_t)(j - i)}, cached};
        w->units[cached].rows += (int64_t)(j - i);
        i = j;
    }
    if (w->defer) return hold_slices(w, schema, batch, n_slices, err);
    if (!sorted) qsort(w->slices, n_slices, sizeof *w->slices, cmp_slice);
    /* one call per unit with its slices (adjacent once sorted by unit, then row) */
    for (size_t a = 0; a < n_slices;) {
        size_t u = w->slices[a].unit, n = 0;
        while (a + n < n_slices && w->slices[a + n].unit == u) {
            w->unit_runs[n] = w->slices[a + n].run;
            n++;
        }
        SHAPE_RETURN_NOT_OK(shape_profile_update_runs(w->units[u].profile, schema, batch, w->unit_runs, n, err));
        a += n;
    }
    return SHAPE_OK;
}

static void count_late(shape_window_profiler *w, int64_t t)
{
    w->n.late_events++;
    int64_t lag = sat_sub(w->watermark, t);
    if (lag > w->n.max_late_lag_us) w->n.max_late_lag_us = lag;
}

/* The end of the newest window holding the pane starting at ps. */
static int64_t newest_end(const shape_window_profiler *w, int64_t ps)
{
    return sat_add(align(ps, w->cfg.slide_us), w->cfg.size_us);
}

/* A row's pane and whether it is late depend on its pane alone, and the
 * rows of a batch mostly fall into the pane of the row before them (one
 * partition, in event-time order): the last pane's bounds [lo, hi) and its
 * verdict are kept, so such a row costs two compares instead of the
 * divisions of align() and newest_end(). */
static int route_panes(shape_window_profiler *w, int64_t n, shape_err *err)
{
    int have_wm = w->watermark != NO_TIME;
    int64_t last_key = NO_TIME;                  /* the last accepted pane, made by pane_at */
    int64_t lo = INT64_MAX, hi = INT64_MIN, ps = 0; /* the last pane seen: [lo, hi), empty at first */
    int late = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = w->times[i];
        w->keys[i] = NO_TIME;
        if (t == NO_TIME) continue;
        if (t < lo || t >= hi) {
            ps = align(t, w->pane);
            int64_t end = sat_add(ps, w->pane);
            /* a saturated start or end cannot serve as a bound (align() may give INT64_MIN
             * for times whose true pane starts below the range): such a pane is
             * recomputed for every row */
            int exact = ps != INT64_MIN && end != INT64_MAX;
            lo = exact ? ps : INT64_MAX;
            hi = exact ? end : INT64_MIN;
            late = have_wm && newest_end(w, ps) <= w->watermark;
        }
        if (late) {
            count_late(w, t);
            continue;
        }
        if (ps != last_key) {
            size_t at;
            SHAPE_RETURN_NOT_OK(pane_at(w, ps, &at, err));
            last_key = ps;
        }
        w->keys[i] = ps;
    }
    return SHAPE_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* An open session overlapping [t, t + gap)? */
static int in_open_session(const shape_window_profiler *w, int64_t t)
{
    int64_t te = sat_add(t, w->cfg.gap_us);
    /* sessions are disjoint and sorted: only the last one starting before te can overlap */
    size_t i = lower_bound(w, te);
    return i > 0 && t < w->units[i - 1].end;
}

/* The run [rs, re) joins the open sessions it overlaps, or opens one. */
static int add_run(shape_window_profiler *w, int64_t rs, int64_t re, shape_err *err)
{
    size_t i = lower_bound(w, re); /* units[0..i) start before re */
    size_t first = i;
    while (first > 0 && w->units[first - 1].end > rs) first--;
    if (first == i) return insert_unit(w, i, rs, re, err);
    unit *u = &w->units[first];
    for (size_t k = first + 1; k < i; k++) { /* a run bridging sessions merges them */
        SHAPE_RETURN_NOT_OK(shape_profile_merge(u->profile, w->units[k].profile, err));
        u->rows += w->units[k].rows;
        if (w->units[k].end > u->end) u->end = w->units[k].end;
    }
    if (i > first + 1) remove_units(w, first + 1, i - first - 1);
    if (rs < u->start) u->start = rs;
    if (re > u->end) u->end = re;
    return SHAPE_OK;
}

static int route_sessions(shape_window_profiler *w, int64_t n, shape_err *err)
{
    int have_wm = w->watermark != NO_TIME;
    size_t accepted = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t t = w->times[i];
        w->keys[i] = NO_TIME;
        if (t == NO_TIME) continue;
        if (have_wm && sat_add(t, w->cfg.gap_us) <= w->watermark && !in_open_session(w, t)) {
            count_late(w, t);
            w->times[i] = NO_TIME;
            continue;
        }
        accepted++;
    }
    if (accepted == 0) return SHAPE_OK;
    int64_t *sorted = malloc(accepted * sizeof *sorted);
    if (!sorted) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    size_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (w->times[i] != NO_TIME) sorted[m++] = w->times[i];
    qsort(sorted, m, sizeof *sorted, cmp_i64);
    int rc = SHAPE_OK;
    for (size_t a = 0; rc == SHAPE_OK && a < m;) {
        size_t b = a + 1;
        while (b < m && sorted[b] - sorted[b - 1] < w->cfg.gap_us) b++;
        rc = add_run(w, sorted[a], sat_add(sorted[b - 1], w->cfg.gap_us), err);
        a = b;
    }
    free(sorted);
    SHAPE_RETURN_NOT_OK(rc);
    /* every accepted row now lies in exactly one session: start <= t < end */
    for (int64_t i = 0; i < n; i++) {
        int64_t t = w->times[i];
        if (t == NO_TIME) continue;
        size_t k = lower_bound(w, sat_add(t, 1));
        if (k == 0 || t >= w->units[k - 1].end)
            return shape_err_set(err, SHAPE_EINTERNAL, "windowed profiler: a row fell outside every session");
        w->keys[i] = w->units[k - 1].start;
    }
    return SHAPE_OK;
}

/* ---- closing ------------------------------------------------------------- */

static int emit_unit_range(shape_window_profiler *w, int64_t start, int64_t end, size_t from, size_t to, int partial,
                           shape_window_emit_fn emit, void *ud, shape_err *err)
{
    shape_window_closed c = {.kind = w->cfg.kind, .start_us = start, .end_us = end, .partial = partial};
    int rc = SHAPE_OK;
    shape_profile *merged = NULL;
    if (to - from == 1) {
        c.profile = w->units[from].profile;
        c.rows = w->units[from].rows;
    } else {
        rc = shape_profile_new(w->name, &w->pcfg, &merged, err);
        for (size_t k = from; rc == SHAPE_OK && k < to; k++) {
            rc = shape_profile_merge(merged, w->units[k].profile, err);
            c.rows += w->units[k].rows;
        }
        c.profile = merged;
    }
    if (rc == SHAPE_OK) rc = emit(ud, &c, err);
    if (rc == SHAPE_OK) w->n.windows_emitted++;
    shape_profile_free(merged);
    return rc;
}

/* The least watermark at which close_panes emits or drops anything (with a
 * pane open): the first pane dropped when its newest window ends; a window
 * emitted holds an open pane [ps, ps + pane), so it ends at
 * units[0].start + pane or later, and after emitted_end — at the next end
 * on the grid (starts aligned to the slide) past it. */
static int64_t first_close(const shape_window_profiler *w)
{
    int64_t ps = w->units[0].start, end = sat_add(ps, w->pane);
    if (w->emitted_end != NO_TIME) {
        int64_t next = sat_add(sat_add(align(sat_sub(w->emitted_end, w->cfg.size_us), w->cfg.slide_us),
                                       w->cfg.slide_us),
                               w->cfg.size_us);
        if (next > end) end = next;
    }
    int64_t drop = newest_end(w, ps);
    return drop < end ? drop : end;
}

/* Sliding/tumbling: emit the windows with emitted_end < end <= upto that
 * hold a pane, in start order; drop the panes no open window needs. */
static int close_panes(shape_window_profiler *w, int64_t upto, int partial, shape_window_emit_fn emit, void *ud,
                       shape_err *err)
{
    if (w->n_held && w->n_units && upto >= first_close(w)) SHAPE_RETURN_NOT_OK(shape_window_profiler_flush(w, err));
    int64_t size = w->cfg.size_us, slide = w->cfg.slide_us;
    int64_t next_start = INT64_MIN; /* windows before this were considered */
    for (size_t i = 0; i < w->n_units; i++) {
        int64_t ps = w->units[i].start;
        int64_t first = align(sat_sub(ps, size), slide);
        while (sat_add(first, size) <= ps) first = sat_add(first, slide); /* first window holding ps */
        if (first < next_start) first = next_start;
        int64_t last = align(ps, slide);
        for (int64_t s = first; s <= last; s = sat_add(s, slide)) {
            int64_t end = sat_add(s, size);
            next_start = sat_add(s, slide);
            if (end > upto) goto done; /* ends only grow from here */
            if (w->emitted_end != NO_TIME && end <= w->emitted_end) continue;
            size_t from = lower_bound(w, s), to = lower_bound(w, end);
            SHAPE_RETURN_NOT_OK(emit_unit_range(w, s, end, from, to, partial, emit, ud, err));
            if (s == last) break;
        }
    }
done:
    if (w->emitted_end == NO_TIME || upto > w->emitted_end) w->emitted_end = upto;
    size_t keep = 0;
    while (keep < w->n_units && newest_end(w, w->units[keep].start) <= upto) keep++;
    if (keep) remove_units(w, 0, keep);
    return SHAPE_OK;
}

static int close_sessions(shape_window_profiler *w, int64_t upto, int partial, shape_window_emit_fn emit, void *ud,
                          shape_err *err)
{
    /* sessions are disjoint and sorted by start, so also by end */
    size_t k = 0;
    while (k < w->n_units && w->units[k].end <= upto) {
        SHAPE_RETURN_NOT_OK(
            emit_unit_range(w, w->units[k].start, w->units[k].end, k, k + 1, partial, emit, ud, err));
        k++;
    }
    if (k) remove_units(w, 0, k);
    return SHAPE_OK;
}

static int close_upto(shape_window_profiler *w, int64_t upto, int partial, shape_window_emit_fn emit, void *ud,
                      shape_err *err)
{
    if (w->cfg.kind == SHAPE_WINDOW_SESSION) return close_sessions(w, upto, partial, emit, ud, err);
    return close_panes(w, upto, partial, emit, ud, err);
}

int shape_window_profiler_close_all(shape_window_profiler *w, int partial, shape_window_emit_fn emit, void *ud,
                                    shape_err *err)
{
    return close_upto(w, INT64_MAX, partial, emit, ud, err);
}

/* ---- one batch ----------------------------------------------------------- */

/* The rows of the runs (newest: the whole batch's newest time, or, when
 * have_newest is 0, that of the runs' rows, which are then the whole batch). */
static int update_runs(shape_window_profiler *w, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                       const shape_profile_run *runs, size_t n_runs, int have_newest, int64_t newest,
                       const char *event_time, const int32_t *known, size_t n_known, int32_t partition, double now,
                       shape_window_emit_fn emit, void *ud, shape_err *err)
{
    for (size_t i = 0; i < n_known; i++) SHAPE_RETURN_NOT_OK(add_part(w, known[i], now, err));
    for (size_t i = 0; i < w->n_parts; i++)
        if (w->parts[i].last_seen < 0) w->parts[i].last_seen = now; /* loaded: the clock restarts */
    size_t m = 0;
    SHAPE_RETURN_NOT_OK(read_times(w, schema, batch, runs, n_runs, event_time, &m, err));
    w->n.batches++;
    int64_t batch_max = have_newest ? newest : NO_TIME;
    for (size_t k = 0; k < m; k++) {
        if (w->times[k] == NO_TIME) w->n.null_event_time++;
        else if (!have_newest && w->times[k] > batch_max) batch_max = w->times[k];
    }
    w->n.rows_in += (int64_t)m;
    if (w->cfg.kind == SHAPE_WINDOW_SESSION) SHAPE_RETURN_NOT_OK(route_sessions(w, (int64_t)m, err));
    else SHAPE_RETURN_NOT_OK(route_panes(w, (int64_t)m, err));
    SHAPE_RETURN_NOT_OK(profile_runs(w, schema, batch, m, err));
    advance_time(w, batch_max, partition, now);
    if (w->watermark != NO_TIME) SHAPE_RETURN_NOT_OK(close_upto(w, w->watermark, 0, emit, ud, err));
    return SHAPE_OK;
}

int shape_window_profiler_update(shape_window_profiler *w, const struct ArrowSchema *schema,
                                 const struct ArrowArray *batch, const char *event_time, const int32_t *known,
                                 size_t n_known, int32_t partition, double now, shape_window_emit_fn emit, void *ud,
                                 shape_err *err)
{
    shape_profile_run whole = {0, batch->length};
    return update_runs(w, schema, batch, &whole, 1, 0, NO_TIME, event_time, known, n_known, partition, now, emit, ud,
                       err);
}

int shape_window_profiler_update_runs(shape_window_profiler *w, const struct ArrowSchema *schema,
                                      const struct ArrowArray *batch, const shape_profile_run *runs, size_t n_runs,
                                      int64_t newest, const char *event_time, const int32_t *known, size_t n_known,
                                      int32_t partition, double now, shape_window_emit_fn emit, void *ud,
                                      shape_err *err)
{
    return update_runs(w, schema, batch, runs, n_runs, 1, newest, event_time, known, n_known, partition, now, emit, ud,
                       err);
}

int shape_window_profiler_copy_clock(shape_window_profiler *dst, const shape_window_profiler *src, shape_err *err)
{
    dst->n_parts = 0;
    for (size_t i = 0; i < src->n_parts; i++) {
        SHAPE_RETURN_NOT_OK(add_part(dst, src->parts[i].id, src->parts[i].last_seen, err));
        dst->parts[dst->n_parts - 1] = src->parts[i];
    }
    dst->newest = src->newest;
    dst->watermark = src->watermark;
    dst->emitted_end = src->emitted_end;
    dst->n.batches = src->n.batches;
    return SHAPE_OK;
}

/* ---- state --------------------------------------------------------------- */

static json_t *time_json(int64_t t) { return t == NO_TIME ? json_null() : json_integer(t); }

int shape_window_profiler_save(const shape_window_profiler *w, json_t **out, shape_err *err)
{
    *out = NULL;
    if (w->n_held) return shape_err_set(err, SHAPE_EINTERNAL, "windowed profiler: saved with slices held (flush first)");
    json_t *units = json_array(), *parts = json_array();
    int rc = units && parts ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; rc == SHAPE_OK && i < w->n_units; i++) {
        uint8_t *state = NULL;
        size_t len = 0;
        rc = shape_profile_state_save(w->units[i].profile, &state, &len, err);
        char *b64 = rc == SHAPE_OK ? shape_base64_encode(state, len) : NULL;
        free(state);
        if (rc == SHAPE_OK && (!b64 || json_array_append_new(units, json_pack("{s:I, s:I, s:I, s:s}", "start_us",
                                                                               (json_int_t)w->units[i].start, "end_us",
                                                                               (json_int_t)w->units[i].end, "rows",
                                                                               (json_int_t)w->units[i].rows, "state",
                                                                               b64))))
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        free(b64);
    }
    for (size_t i = 0; rc == SHAPE_OK && i < w->n_parts; i++)
        if (json_array_append_new(parts, json_pack("{s:i, s:o, s:b}", "id", (int)w->parts[i].id, "newest_us",
                                                   time_json(w->parts[i].newest), "idle", w->parts[i].idle)))
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    json_t *doc = NULL;
    if (rc == SHAPE_OK) {
        doc = json_pack("{s:o, s:o, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I}, s:O, s:O}", "newest_us",
                        time_json(w->newest), "watermark_us", time_json(w->watermark), "emitted_end_us",
                        time_json(w->emitted_end), "counters", "batches", (json_int_t)w->n.batches, "rows_in",
                        (json_int_t)w->n.rows_in, "late_events", (json_int_t)w->n.late_events, "max_late_lag_us",
                        (json_int_t)w->n.max_late_lag_us, "null_event_time", (json_int_t)w->n.null_event_time,
                        "windows_emitted", (json_int_t)w->n.windows_emitted, "partitions", parts, "windows", units);
        if (!doc) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    json_decref(units);
    json_decref(parts);
    *out = doc;
    return rc;
}

static int bad_state(const char *what, shape_err *err)
{
    return shape_err_set(err, SHAPE_EINVAL, "the windowed profiler state is damaged (%s)", what);
}

static int read_time(const json_t *v, int64_t *t)
{
    if (json_is_null(v)) {
        *t = NO_TIME;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) == NO_TIME) return -1;
    *t = json_integer_value(v);
    return 0;
}

static int read_count(const json_t *counters, const char *name, int64_t *out)
{
    const json_t *v = json_object_get(counters, name);
    if (!json_is_integer(v) || json_integer_value(v) < 0) return -1;
    *out = json_integer_value(v);
    return 0;
}

int shape_window_profiler_load(shape_window_profiler *w, const json_t *s, shape_err *err)
{
    if (!json_is_object(s)) return bad_state("not an object", err);
    if (read_time(json_object_get(s, "newest_us"), &w->newest) ||
        read_time(json_object_get(s, "watermark_us"), &w->watermark) ||
        read_time(json_object_get(s, "emitted_end_us"), &w->emitted_end))
        return bad_state("times", err);
    const json_t *c = json_object_get(s, "counters");
    if (read_count(c, "batches", &w->n.batches) || read_count(c, "rows_in", &w->n.rows_in) ||
        read_count(c, "late_events", &w->n.late_events) || read_count(c, "max_late_lag_us", &w->n.max_late_lag_us) ||
        read_count(c, "null_event_time", &w->n.null_event_time) ||
        read_count(c, "windows_emitted", &w->n.windows_emitted))
        return bad_state("counters", err);
    const json_t *parts = json_object_get(s, "partitions"), *units = json_object_get(s, "windows");
    if (!json_is_array(parts) || !json_is_array(units)) return bad_state("partitions or windows", err);
    w->n_parts = 0;
    size_t i;
    const json_t *e;
    json_array_foreach(parts, i, e) {
        const json_t *id = json_object_get(e, "id");
        int64_t newest;
        if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) > INT32_MAX ||
            read_time(json_object_get(e, "newest_us"), &newest) || !json_is_boolean(json_object_get(e, "idle")))
            return bad_state("a partition", err);
        if (find_part(w, (int32_t)json_integer_value(id))) return bad_state("a partition twice", err);
        SHAPE_RETURN_NOT_OK(add_part(w, (int32_t)json_integer_value(id), -1.0, err)); /* seen: at the next batch */
        w->parts[w->n_parts - 1].newest = newest;
        w->parts[w->n_parts - 1].idle = json_is_true(json_object_get(e, "idle"));
    }
    drop_units(w);
    json_array_foreach(units, i, e) {
        const json_t *start = json_object_get(e, "start_us"), *end = json_object_get(e, "end_us");
        const json_t *rows = json_object_get(e, "rows");
        const char *b64 = json_string_value(json_object_get(e, "state"));
        if (!json_is_integer(start) || !json_is_integer(end) || !json_is_integer(rows) || !b64 ||
            json_integer_value(rows) < 0 || json_integer_value(end) <= json_integer_value(start) ||
            (w->n_units > 0 && json_integer_value(start) < w->units[w->n_units - 1].end &&
             w->cfg.kind == SHAPE_WINDOW_SESSION) ||
            (w->n_units > 0 && json_integer_value(start) <= w->units[w->n_units - 1].start))
            return bad_state("a window", err);
        size_t len = 0;
        uint8_t *bytes = shape_base64_decode(b64, &len);
        if (!bytes) return bad_state("a window's state is not base64", err);
        shape_profile *p = NULL;
        int rc = shape_profile_state_load(bytes, len, &w->pcfg, &p, err);
        free(bytes);
        if (rc == SHAPE_OK) rc = insert_unit(w, w->n_units, json_integer_value(start), json_integer_value(end), err);
        if (rc != SHAPE_OK) {
            shape_profile_free(p);
            return rc;
        }
        shape_profile_free(w->units[w->n_units - 1].profile);
        w->units[w->n_units - 1].profile = p;
        w->units[w->n_units - 1].rows = json_integer_value(rows);
    }
    return SHAPE_OK;
}

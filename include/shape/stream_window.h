/* shape/stream_window.h — the windowed stream profiler: tumbling, sliding
 * and session windows over event time, per-partition watermarks, lateness.
 *
 * Why: `shape stream-profile --window tumbling|sliding|session` profiles a
 * stream as a stream (reference/spec-core.md §1.7): one bounded-mode
 * profile per window of event time, emitted as the watermark passes the
 * window's end, exact after a crash (the whole state saves to and loads
 * from JSON inside the checkpoint, shape/stream_checkpoint.h).
 *
 * How: every window (tumbling), pane of gcd(size, slide) (sliding) or
 * session holds one shape_profile; rows are never kept. A batch is
 * classified against the watermark as it was before it (nothing in a batch
 * is late relative to itself); accepted rows are routed by event time and
 * each run of consecutive rows bound for one window is profiled as a slice
 * of the batch (no copy). Then the batch's partition's newest time moves,
 * the watermark is recomputed — for each active partition max(its newest
 * time, newest overall − max_skew), the minimum of those, minus the allowed
 * lateness, never moving back — and every window whose end <= watermark
 * is closed, oldest first, through the caller's emit callback. A partition
 * silent for idle_timeout seconds (the caller's clock) stops holding the
 * watermark until it delivers again.
 *
 * Ownership: the profiler owns its profiles; a closed window's profile is
 * lent to the emit callback for the call only. Names and configs are copied.
 */
#ifndef SHAPE_STREAM_WINDOW_H
#define SHAPE_STREAM_WINDOW_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "shape/arrow.h"
#include "shape/error.h"
#include "shape/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum shape_window_kind {
    SHAPE_WINDOW_GLOBAL = 0,
    SHAPE_WINDOW_TUMBLING,
    SHAPE_WINDOW_SLIDING,
    SHAPE_WINDOW_SESSION
} shape_window_kind;

/* "global", "tumbling", ... (static storage). */
const char *shape_window_kind_name(shape_window_kind kind);
/* 0 and *kind for a known name, -1 otherwise. */
int shape_window_kind_parse(const char *name, shape_window_kind *kind);

typedef struct shape_window_config {
    shape_window_kind kind;
    int64_t size_us;  /* tumbling, sliding: > 0 */
    int64_t slide_us; /* sliding: 0 < slide <= size (tumbling: ignored) */
    int64_t gap_us;   /* session: > 0 */
    int64_t allowed_lateness_us; /* >= 0 */
    /* Run policy (not part of the identity; a resumed run uses its own): */
    int64_t max_skew_us;  /* how far a partition may trail the newest event */
    double idle_timeout_s; /* <= 0: partitions never go idle */
} shape_window_config;

/* Check the config (the messages name the options: "--slide must be <= --size"). */
int shape_window_config_check(const shape_window_config *cfg, shape_err *err);

/* The identity a checkpoint must match, e.g.
 * "kind=sliding size_us=300000000 slide_us=60000000 allowed_lateness_us=0". */
void shape_window_config_identity(const shape_window_config *cfg, char *buf, size_t cap);

/* A closed window, lent to the emit callback. */
typedef struct shape_window_closed {
    shape_window_kind kind;
    int64_t start_us, end_us; /* [start, end) */
    int64_t rows;
    const shape_profile *profile; /* valid during the call only */
    int partial;                  /* closed by a stop request, not by the watermark */
    const char *table;            /* --split-by: the window's table (its line says so); else NULL */
} shape_window_closed;

typedef int (*shape_window_emit_fn)(void *ud, const shape_window_closed *w, shape_err *err);

typedef struct shape_window_counters {
    int64_t batches, rows_in, late_events, max_late_lag_us, null_event_time, windows_emitted;
} shape_window_counters;

typedef struct shape_window_profiler shape_window_profiler;

/* kind must not be global. */
int shape_window_profiler_new(const char *name, const shape_profile_config *pcfg, const shape_window_config *cfg,
                              shape_window_profiler **out, shape_err *err);
void shape_window_profiler_free(shape_window_profiler *w);

/* One batch (a struct batch with the event-time column `event_time`, a
 * timestamp, date or int64 µs column; only read during the call). known:
 * the stream's partitions (n_known may be 0: no partitions); partition: the
 * one the batch came from, or -1 when it is unknown or mixed (then every
 * known partition counts as having delivered it). now: seconds on the
 * caller's monotonic clock (idle timeouts). Windows the batch closes go to
 * emit, oldest first. */
int shape_window_profiler_update(shape_window_profiler *w, const struct ArrowSchema *schema,
                                 const struct ArrowArray *batch, const char *event_time, const int32_t *known,
                                 size_t n_known, int32_t partition, double now, shape_window_emit_fn emit, void *ud,
                                 shape_err *err);

/* The newest event time among all of a batch's rows (*newest; INT64_MIN
 * when no row has one), read as shape_window_profiler_update reads them:
 * SHAPE_EINVAL when the batch has no such time column. */
int shape_window_batch_newest(const struct ArrowSchema *schema, const struct ArrowArray *batch, const char *event_time,
                              int64_t *newest, shape_err *err);

/* The same as shape_window_profiler_update for the rows in runs[0..n_runs)
 * (ascending, disjoint; shape_profile_run, before the batch's offset) only:
 * they are classified, counted and profiled (adjacent rows bound for one
 * window as one slice, across run boundaries too), while the clock moves as
 * if the whole batch had been seen — by newest, the batch's newest event
 * time over all its rows (shape_window_batch_newest), and its partition.
 * Profilers that take disjoint runs of the same batches (one per table:
 * stream-profile --split-by with a window kind) so share one clock — the
 * same watermark, the same late rows as one profiler of all the rows would
 * have — while each keeps its own windows, and each reads only its own rows
 * (a batch is routed once, not once per table). n_runs 0 moves the clock. */
int shape_window_profiler_update_runs(shape_window_profiler *w, const struct ArrowSchema *schema,
                                      const struct ArrowArray *batch, const shape_profile_run *runs, size_t n_runs,
                                      int64_t newest, const char *event_time, const int32_t *known, size_t n_known,
                                      int32_t partition, double now, shape_window_emit_fn emit, void *ud,
                                      shape_err *err);

/* dst (new, same configuration) takes src's clock: partitions, newest
 * time, watermark, what was closed and the batch count; not its windows or
 * other counters. A table first seen mid-stream starts where the others are. */
int shape_window_profiler_copy_clock(shape_window_profiler *dst, const shape_window_profiler *src, shape_err *err);

/* Close every open window, oldest first (end of a bounded read: partial 0;
 * a stop request: partial 1, written with "partial": true). */
int shape_window_profiler_close_all(shape_window_profiler *w, int partial, shape_window_emit_fn emit, void *ud,
                                    shape_err *err);

const shape_window_counters *shape_window_profiler_counters(const shape_window_profiler *w);
/* Windows (or panes, or sessions) open now. */
size_t shape_window_profiler_open_units(const shape_window_profiler *w);
/* The watermark (µs) and whether there is one yet. */
int shape_window_profiler_watermark(const shape_window_profiler *w, int64_t *us);

/* The whole state as a new JSON object (open windows' profile states in
 * base64, partitions, watermark, counters), and back: load replaces the
 * state of a new profiler made with the same configuration. Refusals are
 * SHAPE_EINVAL with a sentence saying what is wrong. */
int shape_window_profiler_save(const shape_window_profiler *w, json_t **out, shape_err *err);
int shape_window_profiler_load(shape_window_profiler *w, const json_t *state, shape_err *err);

/* Python's isoformat of a UTC instant ("2026-01-01T00:01:00+00:00",
 * ".ffffff" only when non-zero; years clamped to 1..9999) into buf (>= 40). */
void shape_window_iso(int64_t us, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* shape/stream.h — the stream runtime: read a source as new batches,
 * riding out connection failures, with exact positions.
 *
 * Why: every reader of a stream (stream-read, stream-profile, the windowed
 * profiler, a library user) needs the same care around the source: reopen
 * it at the last position handed out after a transient failure (with
 * back-off, giving up after N consecutive failures), drop batches a source
 * replays, keep per partition the furthest position processed, and — for a
 * consumer that keeps state across reads — see every batch through the
 * schema the run froze from its first batch. It lives here, below the
 * commands, so that each command is its options, one call and its report.
 *
 * How: a shape_stream is pulled batch by batch (shape_stream_next). It opens
 * the source lazily at `offset` (the position after the last batch taken;
 * none = the source's start). A SHAPE_ECONN from the source closes it and,
 * after 1 s, 2 s, 4 s, … (at most 30 s; cut short by a stop request), opens
 * it again at `offset` — once a first open has succeeded: a source that
 * cannot be opened at all (the cluster never reached) ends the read at once,
 * prefixed "cannot connect to the source" (unless a stop was requested
 * meanwhile: then it is a stop); more than max_reconnects consecutive failures end
 * the read with the source's error, prefixed "gave up after N reconnects"
 * (unprefixed when max_reconnects is 0).
 * A batch whose "after" position advances no partition beyond `positions`
 * is a replay: counted and dropped. With freeze_schema, the first batch's
 * columns become the run's schema; it is passed to later reads as the
 * source option "schema" (so a reopened source decodes to the same
 * columns), and each batch is handed out as a view holding only the frozen
 * columns (an all-null column of another type is left out, so a consumer
 * counts it as nulls), exactly what one uninterrupted read would give.
 *
 * Ownership: the stream borrows cfg's strings, registry and stop flag for
 * its lifetime and copies the options. Batches from shape_stream_next are
 * the caller's (release both). Positions and counters may be read between
 * calls; a consumer saves them in its checkpoint after it has processed the
 * batches handed out, and gives them back with shape_stream_restore.
 */
#ifndef SHAPE_STREAM_H
#define SHAPE_STREAM_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "shape/arrow.h"
#include "shape/decode.h"
#include "shape/error.h"
#include "shape/offsets.h"
#include "shape/options.h"
#include "shape/registry.h"
#include "shape/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Open the source that reads uri: the file source for paths, file:// and
 * "-", else the plugin in reg that reads the URI's scheme (reg may be NULL:
 * files only). start (may be NULL) is where to begin. stop (may be NULL):
 * the run's stop flag, handed to a plugin's stoppable open (plugin ABI 7),
 * whose wait for the cluster then ends within about 100 ms of a stop
 * request (SHAPE_ECONN) instead of at its ~10 s time-out. */
int shape_stream_open_source(const shape_registry *reg, const char *uri, const shape_options *options,
                             const shape_offsets *start, const volatile sig_atomic_t *stop, shape_source **out,
                             shape_err *err);

/* The run's counters, in the order checkpoints list them. */
typedef struct shape_stream_counters {
    int64_t batches_read;      /* batches the source handed out (replays too) */
    int64_t batches_processed; /* new batches handed to the caller */
    int64_t duplicate_batches, duplicate_rows; /* replays dropped */
    int64_t reconnects;        /* source reopened after a connection failure */
    int64_t checkpoints;       /* kept by the caller: checkpoints written */
} shape_stream_counters;

#define SHAPE_STREAM_N_COUNTERS 6
/* "batches_read", ... in the struct's order (checkpoint member names):
 * SHAPE_STREAM_N_COUNTERS static strings (a function, not exported data). */
const char *const *shape_stream_counter_names(void);
int64_t *shape_stream_counter_at(shape_stream_counters *c, size_t i);

/* One column of the frozen schema: its name and Arrow format string. */
typedef struct shape_stream_column {
    char *name, *format;
} shape_stream_column;

/* The event-time column the decoder makes (its nulls are counted). */
#define SHAPE_STREAM_EVENT_TIME_COLUMN "_shape_event_time"

typedef struct shape_stream_config {
    const char *uri;
    const shape_options *options;  /* copied */
    const shape_registry *registry; /* plugins for non-file URIs; may be NULL */
    int64_t max_reconnects;        /* consecutive failed reopenings tolerated */
    int freeze_schema;             /* see above */
    /* With freeze_schema: the source decodes with grow_schema (shape/decode.h:
     * later batches add their new fields as columns), and each column a batch
     * adds joins the run's schema (and the "schema" option, so a reopened or
     * resumed source starts from every column seen so far). */
    int grow_schema;
    /* Non-NULL: a stop is requested when *stop is non-zero (e.g. set by a
     * signal handler); checked before each read and during back-off. */
    const volatile sig_atomic_t *stop;
    /* A reconnect's warning ("...; reconnecting in 2 s (1 of 5)"); NULL
     * prints "shape: warning: ..." to stderr. */
    void (*warn)(void *ud, const char *message);
    void *ud;
} shape_stream_config;

typedef struct shape_stream shape_stream;

int shape_stream_new(const shape_stream_config *cfg, shape_stream **out, shape_err *err);
/* Closes the source; NULL is allowed. */
void shape_stream_free(shape_stream *s);

/* Where a resumed run continues (from a checkpoint; before the first
 * shape_stream_next). Everything is copied; schema may be NULL (none
 * frozen yet). */
typedef struct shape_stream_resume_point {
    const shape_offsets *offset; /* NULL: from the start */
    const shape_offsets *positions;
    const shape_stream_counters *counters;
    const shape_stream_column *schema;
    size_t n_schema;
    int64_t null_event_time;
} shape_stream_resume_point;
int shape_stream_restore(shape_stream *s, const shape_stream_resume_point *at, shape_err *err);

/* The next new batch: *schema and *array (the caller releases both), or
 * *end = 1 at the end of the stream or on a stop request (then
 * shape_stream_stopped() is 1). A position-only step of the source (no
 * batch) advances the positions and is not returned. */
int shape_stream_next(shape_stream *s, struct ArrowSchema *schema, struct ArrowArray *array, int *end,
                      shape_err *err);

int shape_stream_stopped(const shape_stream *s);
/* The partition the batch last handed out came from: the one partition its
 * position advanced beyond the positions before it; -1 when it advanced
 * several (or none). A source that hands out every partition's position
 * before its first batch (kafka:// with the interleave option) makes this
 * exact from the first batch on. */
int32_t shape_stream_batch_partition(const shape_stream *s);
/* 1 once a source has been opened (a read that never connected: 0). */
int shape_stream_opened(const shape_stream *s);
const shape_stream_counters *shape_stream_counters_of(const shape_stream *s);
shape_stream_counters *shape_stream_counters_mut(shape_stream *s);
/* The source position after the last batch taken; NULL before any. */
const shape_offsets *shape_stream_offset(const shape_stream *s);
/* Furthest position processed, per partition. */
const shape_offsets *shape_stream_positions(const shape_stream *s);
/* The frozen schema (NULL, 0 before the first batch or without freezing). */
const shape_stream_column *shape_stream_schema(const shape_stream *s, size_t *n);
/* Nulls in the event-time column of the batches handed out (with freezing). */
int64_t shape_stream_null_event_time(const shape_stream *s);
/* Decoder counters over every source this stream opened. */
shape_decode_stats shape_stream_stats(const shape_stream *s);
/* The source's progress (kept across reopenings; -1 where it cannot tell). */
shape_source_progress shape_stream_progress(shape_stream *s);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* shape/stream_profiler.h — profile a stream, resumable after a crash with
 * exactly the profile an uninterrupted run gives.
 *
 * Why: the read side's promise (reference/spec-core.md §1.6, §1.8) as a
 * library call, so `shape stream-profile` is its options, this and its
 * report, and the windowed profiler plugs in here rather than in a command.
 * How: a shape_stream (shape/stream.h: reconnect, replay de-duplication,
 * frozen schema) hands out new batches; each goes to a profile worker
 * thread (shape/profile_worker.h), which profiles batch k while the stream
 * reads and decodes batch k + 1. Every checkpoint_every processed batches,
 * and at the end, the checkpoint is replaced atomically with the stream's
 * positions and counters and the profiler's state (after waiting for the
 * worker), so a run killed anywhere resumes from the last checkpoint and
 * re-profiles exactly the batches after it (shape/stream_checkpoint.h).
 *
 * Ownership: the profiler borrows cfg's strings, options, registry and stop
 * flag for its lifetime. The profile it returns is its own.
 */
#ifndef SHAPE_STREAM_PROFILER_H
#define SHAPE_STREAM_PROFILER_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include "shape/profile.h"
#include "shape/stream.h"
#include "shape/stream_split.h"
#include "shape/stream_window.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_stream_profiler_config {
    const char *uri;
    const char *checkpoint;        /* checkpoint file, resumed from if present; NULL: none */
    const char *partitions;        /* --partitions as given (part of the checkpoint's identity); NULL: all */
    const char *name;              /* the table's name in the profile */
    const char *event_time;        /* the event-time field (identity only; the decoder takes it out) */
    shape_profile_config profile;
    /* The window (kind 0, global, by default). With another kind, each
     * closed window is appended to windows_path (shape/windows_file.h,
     * opened at the first window) before the checkpoint that follows it,
     * and at the end every open window closes. */
    shape_window_config window;
    const char *windows_path;
    const char *window_states_path; /* windowed --state: each closed window's state too; NULL: none */
    /* One table per distinct value (global window only): "header:NAME" (each
     * row's header NAME, read from the _shape_headers map column, which is
     * left out of the tables unless keep_headers) or "field:NAME" (a body
     * column: text, integer or bool). Rows without it (absent, null, a header
     * that is not UTF-8) go to the table `name`; at most max_tables distinct
     * values get a table of their own, the rest share one named "_other"
     * (one warning). NULL: one table. With a window kind: one windowed
     * profiler per table on one clock (shape_window_profiler_update_runs),
     * its windows emitted with their table. Each batch is routed once: every
     * table takes only its own rows. */
    const char *split_by;
    int64_t max_tables;
    int keep_headers;
    int64_t checkpoint_every;      /* processed batches between checkpoints (>= 1) */
    int64_t max_reconnects;
    const shape_options *options;  /* the source's options */
    const shape_registry *registry;
    const volatile sig_atomic_t *stop; /* see shape_stream_config */
    /* Called after every step of the read (e.g. to draw a progress line). */
    void (*on_step)(void *ud, shape_stream *stream);
    void (*warn)(void *ud, const char *message); /* NULL: stderr */
    void *ud;
} shape_stream_profiler_config;

typedef struct shape_stream_profiler shape_stream_profiler;

/* Load the checkpoint if there is one (refusals: shape/stream_checkpoint.h)
 * and get ready to read. */
int shape_stream_profiler_new(const shape_stream_profiler_config *cfg, shape_stream_profiler **out,
                              shape_err *err);
void shape_stream_profiler_free(shape_stream_profiler *p);

/* 1 when the checkpoint is of a finished run (then read nothing). */
int shape_stream_profiler_was_finished(const shape_stream_profiler *p);
/* 1 when the run continues a checkpoint. */
int shape_stream_profiler_resumed(const shape_stream_profiler *p);

/* Read and profile until the end of the stream or a stop request; every
 * batch read is in the profile when this returns. */
int shape_stream_profiler_run(shape_stream_profiler *p, shape_err *err);
/* 1 when a stop request ended the read. */
int shape_stream_profiler_interrupted(const shape_stream_profiler *p);

/* Write the run's outputs through write(ud, profile, err) in the order that
 * keeps a restart exact: interrupted, the checkpoint first (a restart
 * resumes); otherwise the outputs first, then the checkpoint, marked
 * finished when `complete` (the stream was read to its end: a rerun reads
 * nothing). Without a checkpoint file only write() runs. Windowed kinds:
 * the outputs are the windows still open, closed now; unless `complete`
 * (and not interrupted) the checkpoint comes first and they are written
 * with "partial": true (a resumed run replaces them); write (may be NULL)
 * is not called. */
int shape_stream_profiler_finish(shape_stream_profiler *p, int complete,
                                 int (*write)(void *ud, const shape_profile *profile, shape_err *err), void *ud,
                                 shape_err *err);

/* The global window's profile (with split_by: an empty one, also the one
 * finish's write() gets; the tables are below). */
const shape_profile *shape_stream_profiler_profile(const shape_stream_profiler *p);
/* With split_by and the global window: the tables so far, in order of
 * first row (*out points into the profiler, valid until the next run or
 * free); without, or with a window kind (the windows hold them): 0. */
size_t shape_stream_profiler_tables(const shape_stream_profiler *p, const shape_profile *const **out);
/* Rows profiled (global) or taken in (windowed: late and untimed rows too). */
int64_t shape_stream_profiler_events(const shape_stream_profiler *p);
/* The windowed profiler's counters; NULL for the global window. */
const shape_window_counters *shape_stream_profiler_window_counters(const shape_stream_profiler *p);
/* 1 once a window line was written to windows_path by this run. */
int shape_stream_profiler_wrote_windows(const shape_stream_profiler *p);
shape_stream *shape_stream_profiler_stream(const shape_stream_profiler *p);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

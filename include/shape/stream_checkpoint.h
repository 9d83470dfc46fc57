/* shape/stream_checkpoint.h — write, parse and check the checkpoint files
 * of `shape stream-read` and `shape stream-profile`.
 *
 * Why: a checkpoint outlives the run that wrote it; a torn, edited or
 * foreign file must be refused with a message naming it ("... use another
 * file"), never crash the next run nor resume it somewhere no run has been.
 * These checks are the first thing a resumed run does with bytes from disk,
 * so they live here as plain functions of bytes and JSON — called by the
 * commands (src/cli), the unit tests and the fuzz target
 * tests/fuzz/fuzz_checkpoint.c alike.
 *
 * How: shape_checkpoint_load (shape/checkpoint_file.h) turns the file into a
 * JSON object (duplicate keys refused); shape_stream_checkpoint_check checks the
 * "format" and "uri" members; the two readers below then check and extract
 * the rest. Every refusal is SHAPE_EINVAL (SHAPE_ENOMEM when memory runs
 * out) with a message that names `path` and ends in "use another file".
 */
#ifndef SHAPE_STREAM_CHECKPOINT_H
#define SHAPE_STREAM_CHECKPOINT_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/checkpoint_file.h"
#include "shape/error.h"
#include "shape/offsets.h"
#include "shape/profile.h"
#include "shape/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

struct json_t;

#define SHAPE_STREAM_READ_CHECKPOINT_FORMAT "shape-stream-read-checkpoint-v1"
#define SHAPE_STREAM_PROFILE_CHECKPOINT_FORMAT "shape-stream-checkpoint-v1"
#define SHAPE_STREAM_PROFILER_FORMAT "shape-stream-window-v1"

/* The document's "format" must be `format` and its "uri" must be `uri`
 * ("... belongs to another stream (...): use another file"); `what` names
 * the kind of checkpoint in messages ("stream-read"). */
int shape_stream_checkpoint_check(const char *path, const struct json_t *doc, const char *format, const char *what,
                                  const char *uri, shape_err *err);

/* stream-read: check the document against uri and read its "offset" into
 * *start (replaced; left empty on refusal). */
int shape_stream_read_checkpoint_read(const char *path, const struct json_t *doc, const char *uri,
                                      shape_offsets *start, shape_err *err);

/* stream-profile: what the resuming run must match. Strings are borrowed. */
typedef struct shape_stream_profile_expect {
    const char *uri;
    const char *partitions;  /* --partitions as given, NULL for all */
    const char *name;        /* --name */
    const char *event_time;  /* --event-time */
    const char *fingerprint; /* shape_profile_config_fingerprint of cfg */
    const char *kind;        /* the window kind ("global", "tumbling", ...); NULL: global */
    const char *window;      /* windowed kinds: shape_window_config_identity; NULL for global */
    const shape_profile_config *cfg;
    const char *split_by;    /* --split-by as given; NULL: one table */
    int64_t max_tables;      /* with split_by */
    const char *const *counter_names; /* the counters the run keeps, in its order */
    size_t n_counters;
} shape_stream_profile_expect;

/* What a stream-profile checkpoint resumes. Everything is owned by it:
 * shape_stream_profile_resume_free releases it (and may be called on a
 * zeroed or half-filled one). */
typedef struct shape_stream_profile_resume {
    int64_t *counters;       /* n_counters values, in expect's order; absent ones 0 */
    shape_offsets offset;    /* the source position after the last batch taken */
    int have_offset;         /* 0 when the checkpoint's "offset" is null or absent */
    shape_offsets positions; /* furthest position processed, per partition */
    shape_stream_column *schema; /* n_schema columns (+1 zeroed entry) */
    size_t n_schema;
    int have_schema;         /* 0: no batch was seen before the checkpoint */
    int64_t null_event_time;
    shape_profile *profile;  /* global: the profiler state (NULL for windowed kinds) */
    struct json_t *windowed; /* windowed kinds: shape_window_profiler_save's object (a reference) */
    shape_profile **tables;  /* split: n_tables profiles, in the order saved */
    size_t n_tables;
    int64_t split_values;    /* split: tables that count toward max_tables */
    int split_overflowed;    /* split: rows went to _other */
    int finished;            /* the checkpoint is of a finished run */
} shape_stream_profile_resume;

/* Check a stream-profile checkpoint against *expect and fill *out (zeroed
 * first; on refusal everything is released and *out is zeroed again). */
int shape_stream_profile_checkpoint_read(const char *path, const struct json_t *doc,
                                         const shape_stream_profile_expect *expect,
                                         shape_stream_profile_resume *out, shape_err *err);
void shape_stream_profile_resume_free(shape_stream_profile_resume *r);

/* ---- writing (the documents the readers above accept) ---- */

/* stream-read: {format, version, uri, offset}, replacing path atomically. */
int shape_stream_read_checkpoint_write(const char *path, const char *uri, const shape_offsets *offset,
                                       shape_err *err);

/* What a stream-profile checkpoint records. Everything is borrowed. */
typedef struct shape_stream_profile_snapshot {
    const char *uri, *partitions;    /* partitions: --partitions as given, NULL for all */
    const shape_offsets *offset;     /* NULL: no batch taken yet */
    const shape_offsets *positions;
    const shape_stream_counters *counters;
    const char *name, *event_time, *fingerprint;
    int64_t top_n;
    const shape_stream_column *schema; /* NULL: not frozen yet */
    size_t n_schema;
    int64_t null_event_time;
    const char *kind;                /* NULL: global */
    const char *window;              /* windowed kinds: the config's identity */
    const shape_profile *profile;    /* global: its state is saved (base64) */
    const struct json_t *windowed;   /* windowed kinds: the window profiler's state (instead of profile) */
    /* split (split_by not NULL): the profiler section also holds "split":
     * {by, max_tables, values, overflowed, tables: [state, ...]}; without
     * it the document is the unsplit one, byte for byte */
    const char *split_by;
    int64_t max_tables, split_values;
    int split_overflowed;
    const shape_profile *const *tables;
    size_t n_tables;
    int finished;
} shape_stream_profile_snapshot;

int shape_stream_profile_checkpoint_write(const char *path, const shape_stream_profile_snapshot *snapshot,
                                          shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* shape/stream_split.h — one table per value of a header or a field: the
 * router of `--split-by`, and per-table profiles of any ArrowArrayStream.
 *
 * Why: a topic written by `shape emit`, or a CDC topic, carries several
 * tables; profiled as one they give a table of mostly-null columns. The
 * stream profiler (shape/stream_profiler.h) splits what it reads, and a C
 * user holding Arrow batches (their own, DuckDB's, a shape source's
 * shape_source_arrow_stream) gets the same tables from this one router:
 * the command and the library cannot drift apart.
 * How: a router (shape_split) looks at each batch once: one sweep cuts it
 * into runs of rows with the same value ("header:NAME": the first header
 * NAME in the `_shape_headers` map column, which the tables do not see
 * unless keep_headers; "field:NAME": a top-level text, integer or bool
 * column), finds each run's table (made at its first run, so tables are in
 * order of first row; the made() callback lets the caller make its object
 * for the table — a profile, a window profiler), and groups the runs by
 * table (a counting sort), so each table is handed only its own rows, as
 * zero-copy slices of the batch (shape_profile_update_runs). Rows without
 * the value (absent, null, a header that is not UTF-8) go to the table
 * named cfg->name; at most max_tables distinct values get a table, the
 * rest share "_other" (shape_split_warning says so once).
 * shape_split_profiles is the router with one shape_profile per table:
 * what `stream-profile --split-by` keeps for the global window, and what
 * shape_split_profile_stream() returns for an ArrowArrayStream.
 *
 * Ownership: the router copies cfg's strings. Batches are borrowed for the
 * call. The profiles belong to the shape_split_profiles until it is freed.
 */
#ifndef SHAPE_STREAM_SPLIT_H
#define SHAPE_STREAM_SPLIT_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include "shape/arrow.h"
#include "shape/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_split_config {
    const char *split_by;  /* "header:NAME" or "field:NAME" */
    const char *name;      /* the table of rows without the value */
    int64_t max_tables;    /* distinct values with a table of their own, >= 1 (the command's default: 100) */
    int keep_headers;      /* header split: 1 keeps _shape_headers in the tables */
} shape_split_config;

typedef struct shape_split shape_split;

/* made(ud, t, name, err): table t (0, 1, ... in order of first row) was
 * just named `name` (the router's copy, valid while it lives); make the
 * caller's object for it. NULL: nothing to make. A failure fails the
 * route. Refusals: a bad spec (shape_stream_split_parse), max_tables < 1. */
int shape_split_new(const shape_split_config *cfg, int (*made)(void *ud, size_t t, const char *name, shape_err *err),
                    void *ud, shape_split **out, shape_err *err);
void shape_split_free(shape_split *s);

/* Route one struct batch ("+s"). Afterwards each table's runs of this
 * batch are shape_split_runs(s, t, ...), and *view / *view_array is the
 * batch as the tables see it (the header map left out for a header split
 * unless keep_headers; the router's memory, valid until the next route).
 * Refusals: a header split over headers that are not a map of utf8 to
 * binary; a field split over a column of another type. */
int shape_split_route(shape_split *s, const struct ArrowSchema *schema, const struct ArrowArray *array,
                      const struct ArrowSchema **view, const struct ArrowArray **view_array, shape_err *err);
/* Table t's runs in the batch routed last (rows before the batch's offset,
 * in row order); their count (0: none of its rows). */
size_t shape_split_runs(const shape_split *s, size_t t, const shape_profile_run **runs);

size_t shape_split_tables(const shape_split *s);
const char *shape_split_table_name(const shape_split *s, size_t t);
/* Distinct values that got a table (at most max_tables). */
int64_t shape_split_values(const shape_split *s);
/* 1 once a value beyond max_tables went to "_other". */
int shape_split_overflowed(const shape_split *s);
/* The overflow warning, once: 1 (and the line in buf) the first call after
 * an overflow, 0 otherwise. */
int shape_split_warning(shape_split *s, char *buf, size_t size);
/* The warning's line alone (reads only what never changes after
 * shape_split_new: safe beside a route on another thread). */
void shape_split_warning_text(const shape_split *s, char *buf, size_t size);

/* A resume: the next table is `name` (made() is called; a name twice is
 * refused), then the saved value count and overflow flag (values must not
 * exceed the tables). */
int shape_split_restore_table(shape_split *s, const char *name, shape_err *err);
int shape_split_restore_counts(shape_split *s, int64_t values, int overflowed, shape_err *err);

/* ---- one profile per table --------------------------------------------- */

typedef struct shape_split_profiles shape_split_profiles;

/* profile NULL: shape_profile_config_default. */
int shape_split_profiles_new(const shape_split_config *cfg, const shape_profile_config *profile,
                             shape_split_profiles **out, shape_err *err);
void shape_split_profiles_free(shape_split_profiles *sp);
/* Route and profile one batch: each table profiles only its own rows. */
int shape_split_profiles_update(shape_split_profiles *sp, const struct ArrowSchema *schema,
                                const struct ArrowArray *array, shape_err *err);
/* Every batch of a C stream to its end (read, not released: the caller
 * releases it). A failing stream: SHAPE_EIO with its get_last_error. */
int shape_split_profiles_read(shape_split_profiles *sp, struct ArrowArrayStream *stream, shape_err *err);
/* The tables so far, in order of first row (*out valid until the next
 * update); for shape_stream_split_document / shape_stream_split_states. */
size_t shape_split_profiles_tables(const shape_split_profiles *sp, const shape_profile *const **out);
shape_profile *shape_split_profiles_table(shape_split_profiles *sp, size_t t);
shape_split *shape_split_profiles_router(shape_split_profiles *sp);
/* A resume: the tables are these profiles (moved in: sp owns them and the
 * array from now on, also on failure), with the saved counts. */
int shape_split_profiles_adopt(shape_split_profiles *sp, shape_profile **tables, size_t n, int64_t values,
                               int overflowed, shape_err *err);

/* The library's whole split in one call: a new shape_split_profiles that
 * has read `stream` to its end (not released). The tables are those
 * `shape stream-profile --split-by` gives for the same rows in the same
 * batches. */
int shape_split_profile_stream(struct ArrowArrayStream *stream, const shape_split_config *cfg,
                               const shape_profile_config *profile, shape_split_profiles **out, shape_err *err);

/* The profile document of a split's tables (shape_profile_document's text),
 * each entry without the columns null in every one of its rows. *out
 * malloc'd. */
int shape_stream_split_document(const shape_profile *const *tables, size_t n, char **out, size_t *len,
                                shape_err *err);
/* The split --state file: one JSON line {"state": base64, "table": NAME}
 * per table, in order (for profile-merge). *out malloc'd ("" for none). */
int shape_stream_split_states(const shape_profile *const *tables, size_t n, char **out, size_t *len,
                              shape_err *err);
/* Check a --split-by spec ("header:NAME" or "field:NAME", NAME not empty). */
int shape_stream_split_parse(const char *spec, int *by_header, const char **name, shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

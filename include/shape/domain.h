/* shape/domain.h — a synthetic domain as emit sees it: named tables in
 * dependency order, their columns, row counts for a scale preset, and any
 * row of any table on demand.
 *
 * Why: `shape emit DOMAIN` streams whatever domain it is given (the built-in
 * retail today; generation-schema files next) through the same plan,
 * runtime, checkpoint and fingerprint. Those see only this interface, so a
 * new domain is one shape_domain_type and one entry in the registry below,
 * never an edit of the emit runtime.
 * How:
 *   - a shape_domain_type is a table of functions and data that a domain
 *     implements (retail: src/generate/retail/retail_domain.c). Its tables
 *     come in dependency (= stream) order: every table a foreign key points
 *     at comes before the table that points at it;
 *   - shape_domain_open gives a shape_domain handle for one (preset, seed):
 *     it asks the type once for every table's name, columns, event-time
 *     column and row count and keeps them, so asking is a load, not a call;
 *   - a shape_domain_cursor fills row i of one table (counter-based: any row
 *     in any order, the same values every time); rows asked in ascending
 *     order are the fastest (domains may cache along a table);
 *   - the identity is the list of fields that say which stream this is
 *     (domain, mode, preset, seed, ...): the emit fingerprint hashes them,
 *     so a checkpoint of one stream never resumes another;
 *   - the registry (src/generate/domains.c) maps a name to a type: a small
 *     table of built-in domains, extended by one entry or one lookup step.
 *
 * Ownership and threads: types are static (or, for a loaded schema, live as
 * long as their `data`). A shape_domain is immutable once open and may be
 * shared by threads; it must outlive its cursors and everything that borrows
 * its tables (names and column arrays stay valid until shape_domain_free).
 * A cursor is one thread's (it holds caches). Rows go into a caller-owned
 * shape_gen_row (shape/generate.h).
 */
#ifndef SHAPE_DOMAIN_H
#define SHAPE_DOMAIN_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"
#include "shape/generate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One table of an open domain. */
typedef struct shape_domain_table {
    const char *name;             /* borrowed from the domain */
    const shape_gen_column *cols; /* ncols columns in output order, borrowed */
    size_t ncols;                 /* <= SHAPE_GEN_MAX_COLUMNS */
    int event_time_col;           /* the event-time column (first timestamp column), or -1 */
    uint64_t rows;                /* row count at the open preset */
} shape_domain_table;

/* One member of a stream's identity: a string (text != NULL) or an integer. */
typedef struct shape_domain_field {
    const char *key;  /* static or borrowed from the domain */
    const char *text; /* NULL: the value is `integer` */
    int64_t integer;
} shape_domain_field;

#define SHAPE_DOMAIN_MAX_FIELDS 16

/* A table's role in event-time order (docs/EMIT.md "Event-time order"). */
enum shape_domain_role {
    SHAPE_DOMAIN_HEAD = 0, /* no event of its own: sent first, in dependency order */
    SHAPE_DOMAIN_TIMED,    /* event time non-decreasing in the row number */
    SHAPE_DOMAIN_FOLLOWS   /* rows travel right after the parent row they belong to */
};

/* What a domain implements. `impl` is the domain's own open state, `cursor`
 * its own cursor. Every function is required, except the event-time group
 * at the end (NULL: the domain has no event-time order). */
typedef struct shape_domain_type {
    const char *name;           /* what `shape emit NAME` says */
    const char *default_preset; /* when no --scale is given */
    uint64_t default_seed;      /* when no --seed is given */
    const void *data;           /* the type's own data (NULL for built-ins) */
    /* Scale presets, smallest first; NULL past the end. */
    const char *(*preset_name)(const struct shape_domain_type *type, size_t i);
    /* Open for a preset the type lists (SHAPE_ENOTFOUND otherwise) and a seed. */
    int (*open)(const struct shape_domain_type *type, const char *preset, uint64_t seed, void **impl,
                shape_err *err);
    void (*close)(void *impl);
    size_t (*table_count)(const void *impl);
    void (*table)(const void *impl, size_t t, shape_domain_table *out);
    /* Fill out[0..n) (n <= cap) with the stream identity; returns n. */
    size_t (*identity)(const void *impl, shape_domain_field *out, size_t cap);
    int (*cursor_open)(void *impl, size_t t, void **cursor, shape_err *err);
    /* Row `row` (< the table's rows) into out. */
    int (*cursor_row)(void *cursor, uint64_t row, shape_gen_row *out, shape_err *err);
    void (*cursor_close)(void *cursor);
    /* Event-time order. open_timeline opens the domain's timeline variant
     * (its own identity: rows may differ from open's); the rest ask an impl
     * opened so. table_role gives a table's role and, for FOLLOWS, its
     * parent table (TIMED); row_time a TIMED row's event time without the
     * row; followers the rows [*first, *first + *count) of FOLLOWS table t
     * that belong to parent row `parent`; followers_before how many rows of
     * t belong to parent rows [0, m). */
    int (*open_timeline)(const struct shape_domain_type *type, const char *preset, uint64_t seed, void **impl,
                         shape_err *err);
    int (*table_role)(const void *impl, size_t t, size_t *parent);
    int64_t (*row_time)(const void *impl, size_t t, uint64_t row);
    void (*followers)(const void *impl, size_t t, uint64_t parent, uint64_t *first, uint64_t *count);
    uint64_t (*followers_before)(const void *impl, size_t t, uint64_t m);
} shape_domain_type;

/* ---- the registry ---------------------------------------------------------- */

/* Built-in domains in registry order; NULL past the end. */
const shape_domain_type *shape_domain_builtin(size_t i);

/* The type `shape emit NAME` means. SHAPE_EINVAL "unknown domain 'x';
 * available: retail" otherwise. */
int shape_domain_lookup(const char *name, const shape_domain_type **out, shape_err *err);

/* The same, also finding NAME.json in the ':'-separated folders `dirs`
 * (NULL: none) and then SHAPE_DOMAIN_PATH; a NAME with a '/' or ending in
 * ".json" is a generation-schema file (shape/generate_schema.h). A type that
 * came from a file is the caller's: release it with shape_domain_type_free. */
int shape_domain_lookup_in(const char *name, const char *dirs, const shape_domain_type **out, shape_err *err);

/* Free a type shape_domain_lookup(_in) loaded from a file; a built-in type
 * (static) is left alone, as is NULL. */
void shape_domain_type_free(const shape_domain_type *type);

/* 1 when the type lists `preset`. */
int shape_domain_has_preset(const shape_domain_type *type, const char *preset);

/* ---- an open domain -------------------------------------------------------- */

typedef struct shape_domain shape_domain;

/* Open `type` at `preset` (NULL: its default) and `seed`. *out is freed with
 * shape_domain_free. */
int shape_domain_open(const shape_domain_type *type, const char *preset, uint64_t seed, shape_domain **out,
                      shape_err *err);
/* The same in the domain's timeline variant (`--order event-time`):
 * SHAPE_EINVAL "--order event-time needs a domain whose event times are
 * ordered by row; NAME has none" when the type has no open_timeline. */
int shape_domain_open_timeline(const shape_domain_type *type, const char *preset, uint64_t seed,
                               shape_domain **out, shape_err *err);
void shape_domain_free(shape_domain *d);
/* 1 when d was opened by shape_domain_open_timeline. */
int shape_domain_is_timeline(const shape_domain *d);

const shape_domain_type *shape_domain_type_of(const shape_domain *d);
const char *shape_domain_name(const shape_domain *d);
const char *shape_domain_preset(const shape_domain *d); /* borrowed from the domain */
uint64_t shape_domain_seed(const shape_domain *d);

/* Tables in dependency order: t < shape_domain_table_count(d). */
size_t shape_domain_table_count(const shape_domain *d);
const shape_domain_table *shape_domain_table_at(const shape_domain *d, size_t t);
/* Index of a table name, or -1. */
int shape_domain_table_find(const shape_domain *d, const char *name);
/* Index of a column of table t, or -1. */
int shape_domain_column_find(const shape_domain *d, size_t t, const char *name);

/* The stream identity (see shape_domain_type.identity); returns the count. */
size_t shape_domain_identity(const shape_domain *d, shape_domain_field *out, size_t cap);

/* ---- cursors --------------------------------------------------------------- */

typedef struct shape_domain_cursor shape_domain_cursor;

int shape_domain_cursor_open(shape_domain *d, size_t t, shape_domain_cursor **out, shape_err *err);
/* Fill `out` with row `row` of the cursor's table. SHAPE_EINVAL past the
 * table's end. */
int shape_domain_cursor_row(shape_domain_cursor *c, uint64_t row, shape_gen_row *out, shape_err *err);
void shape_domain_cursor_free(shape_domain_cursor *c);

/* ---- event-time order ------------------------------------------------------ */

/* The event-time stream of a timeline domain: its head tables in dependency
 * order, then the timed tables merged by (event time, table, row), each
 * timed row followed by its followers (in table, then row order). Every
 * row a foreign key points at comes earlier when the domain's roles say so.
 * Memory: O(tables), at any preset. Seeking to any position is a binary
 * search over time (S(T), the events before time T, is a binary search
 * over each timed table's row times plus its followers' counts) and a walk
 * over the events at that one time, so a resumed stream generates nothing
 * that came before. One thread's. */
typedef struct shape_domain_timeline shape_domain_timeline;

/* `selected[t]` (NULL: all tables) says which tables the stream holds; a
 * timed table that is not selected is still walked when one of its
 * followers is. Positions start at the head (0) and end at _total. */
int shape_domain_timeline_open(const shape_domain *d, const unsigned char *selected, shape_domain_timeline **out,
                               shape_err *err);
void shape_domain_timeline_free(shape_domain_timeline *tl);
uint64_t shape_domain_timeline_total(const shape_domain_timeline *tl);
/* Continue from stream position `pos` (<= total). */
int shape_domain_timeline_seek(shape_domain_timeline *tl, uint64_t pos, shape_err *err);
/* The next event's table and row: 1, or 0 past the end. */
int shape_domain_timeline_next(shape_domain_timeline *tl, size_t *table, uint64_t *row);
/* The next event's position. */
uint64_t shape_domain_timeline_position(const shape_domain_timeline *tl);
/* The first event of the timeline proper (past the head) whose table is
 * timed, as a domain table and row: 1, or 0 when no selected timed table has
 * rows. Its event time is the stream's first event time (the head's tables
 * have none of their own). */
int shape_domain_timeline_first_timed(const shape_domain_timeline *tl, size_t *table, uint64_t *row);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

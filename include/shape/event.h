/* shape/event.h — generated rows as events: the flat JSON and CloudEvents
 * encodings of spec-core §3.3, and the event plan of §3.4.
 *
 * Why: every destination of `shape emit` (console, files, Kafka) carries the
 * same bytes for the same row, on every run, so consumers can dedup by the
 * idempotency key `<table>/<seq>` and compare streams byte for byte. Those
 * bytes must match what the reference (Python's json.dumps) wrote.
 * How:
 *   - values are written by the writers of shape/json_write.h (floats as
 *     Python's repr, timestamps with as many fraction digits as the unit,
 *     strings with JSON escaping, binary as base64), which this header
 *     includes; a generated value (shape_json_gen_value) is written by kind;
 *   - a shape_event_table holds one table's rendered key fragments, made
 *     once; shape_event_encode writes one event (columns, then
 *     `_shape_table`, `_shape_seq`, `_shape_event_time` when the table has a
 *     timestamp column) flat or wrapped in the CloudEvents 1.0 structured
 *     envelope (`id` = the idempotency key);
 *   - the plan lists the selected tables in dependency order with their
 *     global offsets, so any offset maps to (table, row) in O(tables): a
 *     resumed stream starts anywhere without generating what came before.
 *
 * Ownership: all structs are caller-owned plain data. A shape_event_table
 * keeps pointers to the column array and table name it was made from
 * (static data of the domain); a shape_event_plan keeps the domain pointer,
 * which must outlive it.
 */
#ifndef SHAPE_EVENT_H
#define SHAPE_EVENT_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/arrow.h"
#include "shape/error.h"
#include "shape/generate.h"
#include "shape/json_write.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- generated values -------------------------------------------------- */

/* One generated value (NULL, INT64, FLOAT64, STRING, TIMESTAMP_NS as a
 * zone-less ns timestamp, BOOL). Room: shape_event_value_bound. */
char *shape_json_gen_value(char *p, const shape_gen_value *v);
size_t shape_event_value_bound(const shape_gen_value *v);

/* ---- one table's events --------------------------------------------------- */

typedef enum shape_envelope {
    SHAPE_ENVELOPE_FLAT = 0,
    SHAPE_ENVELOPE_CLOUDEVENTS = 1
} shape_envelope;

/* "flat" / "cloudevents" → *out; SHAPE_EINVAL "unknown envelope 'x'; choose
 * from flat, cloudevents" otherwise. */
int shape_envelope_parse(const char *name, shape_envelope *out, shape_err *err);

#define SHAPE_EVENT_KEY_FRAG 80

typedef struct shape_event_table {
    const char *name;                /* borrowed (static) */
    const shape_gen_column *cols;    /* borrowed (static) */
    size_t ncols;
    int event_time_col;              /* first timestamp column, or -1 */
    char keys[SHAPE_GEN_MAX_COLUMNS][SHAPE_EVENT_KEY_FRAG]; /* `{"a":` / `,"b":` */
    uint8_t key_len[SHAPE_GEN_MAX_COLUMNS];
    char tail[SHAPE_EVENT_KEY_FRAG * 2]; /* `,"_shape_table":"t","_shape_seq":` */
    size_t tail_len;
} shape_event_table;

/* Prepare a table. SHAPE_EINVAL when a column is named like a reserved
 * field ("table 't' has a column named '_shape_seq', which is reserved"),
 * or a name is too long to render. */
int shape_event_table_init(shape_event_table *t, const char *name, const shape_gen_column *cols,
                           size_t ncols, int event_time_col, shape_err *err);

/* An upper bound on the bytes shape_event_encode writes for this row. */
size_t shape_event_bound(const shape_event_table *t, const shape_gen_row *row);

/* Write the event of row `seq` (no trailing newline) at p, which must hold
 * shape_event_bound bytes; returns the end. */
char *shape_event_encode(const shape_event_table *t, shape_envelope env, uint64_t seq,
                         const shape_gen_row *row, char *p);

/* The idempotency key "<table>/<seq>" at p (room: strlen(table) + 21). */
char *shape_event_key(char *p, const char *table, uint64_t seq);

/* ---- one table's events as Arrow record batches ---------------------------
 * (src/emit/event_rows.c) For destinations that encode events themselves:
 * the flat event's columns — the table's, then _shape_table, _shape_seq and
 * _shape_event_time when the table has a timestamp column — with one schema
 * (exact types and nullability) for every batch of the table. */

typedef struct shape_event_rows {
    const shape_event_table *table;      /* borrowed */
    struct ArrowSchema schema;           /* "+s", owned; read-only once made */
    struct shape_batch *builder;
    struct shape_column *cols[SHAPE_GEN_MAX_COLUMNS + 3];
    size_t ncols;
    size_t name_len;                     /* strlen(table->name) */
} shape_event_rows;

int shape_event_rows_init(shape_event_rows *r, const shape_event_table *t, shape_err *err);
/* Append the event of row `seq`. */
int shape_event_rows_append(shape_event_rows *r, uint64_t seq, const shape_gen_row *row, shape_err *err);
/* The rows appended since the last finish, as a struct array matching
 * r->schema (owned by the caller: call its release; the builder's buffers
 * come back to it when released). */
int shape_event_rows_finish(shape_event_rows *r, struct ArrowArray *out, shape_err *err);
void shape_event_rows_reset(shape_event_rows *r);

/* ---- the event plan (src/emit/event_plan.c) --------------------------------
 * The selected tables of a domain (shape/domain.h) in its dependency order,
 * with their global offsets. The arrays are the plan's own, sized by the
 * domain's table count; shape_event_plan_reset frees them. */

struct shape_domain;

typedef struct shape_event_plan {
    struct shape_domain *domain; /* borrowed: must outlive the plan */
    size_t ntables;              /* selected tables */
    size_t *table_ids;           /* [ntables] domain table indexes, in dependency order */
    uint64_t *rows;              /* [ntables] */
    uint64_t *start;             /* [ntables] global offset of each table's first event */
    uint64_t total;              /* sum of rows */
} shape_event_plan;

/* Select tables by name (n == 0: all), kept in dependency order whatever
 * the order given; a repeated name counts once. Unknown name →
 * SHAPE_EINVAL "unknown table 'x'; the schema has customer, address, ...".
 * On failure the plan holds nothing to reset. */
int shape_event_plan_init(shape_event_plan *plan, struct shape_domain *domain, const char *const *names,
                          size_t n, shape_err *err);

/* Free the plan's arrays (the domain stays open); the plan is then empty. */
void shape_event_plan_reset(shape_event_plan *plan);

/* Plan index and row of a global offset (< total). */
int shape_event_plan_locate(const shape_event_plan *plan, uint64_t offset, size_t *index,
                            uint64_t *row, shape_err *err);

/* The mean length in bytes of the events at global offsets [from, to) as
 * flat JSON or CloudEvents (the message value, no key or headers), from 32
 * rows of each table spread over its share, weighted by that share; 0 for
 * an empty range. An estimate for planning (e.g. will the stream fit a
 * broker's retention), cheap at any scale: rows are generated by position. */
int shape_event_plan_mean_bytes(const shape_event_plan *plan, shape_envelope env, uint64_t from, uint64_t to,
                                double *mean, shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

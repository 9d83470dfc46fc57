/* shape/generate_retail.h — the `retail` domain: nine relationally consistent
 * tables generated row by row, at any scale preset, from any row.
 *
 * Why: `shape emit retail` streams customer → address → product_category →
 * product → promotion → store → order → order_line → return (the reference's
 * dependency order, spec-core §4) into Kafka; a stream must be resumable at
 * any event, splittable over processes, and bounded in memory up to `xxxl`
 * (36.95 billion events). So every row is a pure function of
 * (preset, seed, table, row number), and every cross-table rule holds by
 * construction rather than by a repair pass over a stored table.
 *
 * How (details in src/generate/retail/retail.c):
 *   - foreign keys that must agree both ways use stateless allocations
 *     (shape_gen_alloc): addresses are grouped by customer (Poisson(1.5)
 *     per customer, ~22 % have none), order lines grouped by order
 *     (Poisson(2.5) per order, exact total int(orders * 2.5)), and orders
 *     spread over customers by a capped Pareto (at most 50 per customer);
 *     keyed permutations scatter ranks over ids, so an order finds its
 *     customer, the customer its addresses, an order its lines and a line
 *     its order, each in O(1);
 *   - dates agree by construction: a customer's expected order count
 *     scales with its tenure, its signup is drawn given its allocated count,
 *     and its orders fall in the seasonal model after that signup;
 *   - derived values are recomputed from their sources: a line's unit price
 *     from its product, its discount from its order's promotion; an order's
 *     total from its lines (in integer cents, so order_total is exactly the
 *     sum of the rounded line totals); a return's date from its order;
 *   - memory: a domain is ~55 KB (three allocations of ~5 KB, alias and
 *     Zipf tables, the seasonal model's 1,461-day table and its guide) and
 *     a table cursor ~16 KB (a product-price cache), the same at every
 *     preset from fabric_demo to xxxl: nothing is sized by a row count.
 *     The largest presets need no more memory, only time (xxxl is 36.95
 *     billion events; at ~4M events/s/core that is ~2.5 core-hours).
 *
 * Value conventions (spec-core §4.4): timestamps are int64 ns since the
 * epoch (UTC); `decimal` columns are float64 rounded to their scale;
 * `customer.is_active` is the string "true"/"false"; `order_line.quantity`
 * is float64 as in the reference.
 *
 * Ownership and threads: a shape_retail is immutable once opened and may be
 * shared by threads; it must outlive every table opened from it. A
 * shape_retail_table is a cursor with small caches (not thread-safe: one per
 * thread). Rows go into a caller-owned shape_gen_row (see shape/generate.h).
 */
#ifndef SHAPE_GENERATE_RETAIL_H
#define SHAPE_GENERATE_RETAIL_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"
#include "shape/generate.h"
#include "shape/generate_arrow.h" /* shape_gen_arrow_type/append (moved there) */

#ifdef __cplusplus
extern "C" {
#endif

/* Tables in dependency (= stream) order. */
enum shape_retail_table_id {
    SHAPE_RETAIL_CUSTOMER = 0,
    SHAPE_RETAIL_ADDRESS,
    SHAPE_RETAIL_PRODUCT_CATEGORY,
    SHAPE_RETAIL_PRODUCT,
    SHAPE_RETAIL_PROMOTION,
    SHAPE_RETAIL_STORE,
    SHAPE_RETAIL_ORDER,
    SHAPE_RETAIL_ORDER_LINE,
    SHAPE_RETAIL_RETURN,
    SHAPE_RETAIL_TABLES
};

#define SHAPE_RETAIL_DEFAULT_PRESET "small"
#define SHAPE_RETAIL_DEFAULT_SEED 42

/* Scale presets, smallest first: fabric_demo, small, medium, large,
 * warehouse, xlarge, xxl, xxxl. NULL past the end. */
const char *shape_retail_preset_name(size_t i);

/* Row counts of a preset (rows[SHAPE_RETAIL_TABLES], dependency order)
 * without opening a domain. SHAPE_ENOTFOUND for an unknown preset. */
int shape_retail_preset_rows(const char *preset, uint64_t rows[SHAPE_RETAIL_TABLES],
                             shape_err *err);

/* Table names in dependency order ("customer", ..., "return"); NULL past
 * the end. */
const char *shape_retail_table_name(size_t table);
/* Table id of a name, or -1. */
int shape_retail_table_find(const char *name);

typedef struct shape_retail shape_retail;

/* Open the domain for a preset (NULL = "small") and seed. Builds the shared
 * tables (a few ms). *out is freed with shape_retail_free. */
int shape_retail_open(const char *preset, uint64_t seed, shape_retail **out, shape_err *err);
/* The timeline variant (`emit --order event-time`, docs/EMIT.md "Event-time
 * order"): the same tables, columns and row counts, but customer, order and
 * return dates non-decreasing in the row number by construction, an order's
 * customer drawn among those signed up by its date, a return's order among
 * those a delay before it, and parents' children permuted only inside
 * allocation blocks. Its rows differ from shape_retail_open's. */
int shape_retail_open_timeline(const char *preset, uint64_t seed, shape_retail **out, shape_err *err);
int shape_retail_is_timeline(const shape_retail *r);
/* Timeline only: the event time of row `row` of customer, order or return,
 * without the row (INT64_MIN for another table); the follower rows of a
 * customer (addresses) or order (order lines): *first, *count; and the
 * followers of the first m customers or orders. */
int64_t shape_retail_row_time(const shape_retail *r, size_t table, uint64_t row);
void shape_retail_followers(const shape_retail *r, size_t parent_table, uint64_t parent, uint64_t *first,
                            uint64_t *count);
uint64_t shape_retail_followers_before(const shape_retail *r, size_t parent_table, uint64_t m);
void shape_retail_free(shape_retail *r);

const char *shape_retail_preset(const shape_retail *r); /* static string */
uint64_t shape_retail_seed(const shape_retail *r);
uint64_t shape_retail_rows(const shape_retail *r, size_t table);
/* Sum of all tables' rows: the number of events of the whole stream. */
uint64_t shape_retail_total_events(const shape_retail *r);
/* The table and row of a 0-based position in the stream (tables one after
 * another in dependency order). SHAPE_EINVAL past the end. */
int shape_retail_locate(const shape_retail *r, uint64_t offset, size_t *table, uint64_t *row,
                        shape_err *err);

/* Columns of a table, in output order (static array, ncols returned). */
size_t shape_retail_columns(size_t table, const shape_gen_column **cols);
/* The event-time column (the first timestamp column) or -1 when none. */
int shape_retail_event_time_column(size_t table);

typedef struct shape_retail_table shape_retail_table;

/* A cursor over one table of an open domain (by name or id). */
int shape_retail_table_open(shape_retail *r, const char *name, shape_retail_table **out,
                            shape_err *err);
int shape_retail_table_open_id(shape_retail *r, size_t table, shape_retail_table **out,
                               shape_err *err);
void shape_retail_table_free(shape_retail_table *t);

size_t shape_retail_table_id(const shape_retail_table *t);
uint64_t shape_retail_table_rows(const shape_retail_table *t);

/* Fill `out` with row `row` (0-based; its primary key is row + 1). Any row,
 * in any order; rows read in ascending order are the fastest (caches).
 * SHAPE_EINVAL when row >= the table's row count. */
int shape_retail_table_row(shape_retail_table *t, uint64_t row, shape_gen_row *out,
                           shape_err *err);

/* Rows start .. start+max_rows-1 (fewer at the table's end; none when start
 * is the row count) as one Arrow record batch: a struct of the table's
 * columns, in output order, typed int64 / float64 / utf8 /
 * timestamp[ns, UTC] / bool, nullable. *schema and *array are the caller's
 * to release (array->release is set even for 0 rows). */
struct ArrowSchema;
struct ArrowArray;
int shape_retail_table_batch(shape_retail_table *t, uint64_t start, int64_t max_rows,
                             struct ArrowSchema *schema, struct ArrowArray *array, shape_err *err);

/* The retail domain behind the domain interface (shape/domain.h), as the
 * registry lists it under "retail". */
const struct shape_domain_type *shape_retail_domain_type(void);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

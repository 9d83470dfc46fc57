/* retail.c — the retail domain: presets, table metadata, and the shared
 * structures that make nine tables consistent without storing any of them.
 *
 * Why: the reference generates whole tables and repairs rule violations in
 * post-passes (spec-core §4); that needs every table in memory and cannot
 * start a stream in the middle. Here every rule holds by construction, so
 * any row is computed alone from (preset, seed, table, row).
 *
 * How — the three parent/child relations are stateless allocations
 * (shape_gen_alloc) plus keyed permutations (shape_gen_perm):
 *
 *   addresses ← customers. Customer "address ranks" are split into groups by
 *   address count, Poisson(1.5) truncated at 12 with the exact total
 *   int(customers * 1.5). Address rows are the allocation's child slots, so
 *   the addresses of one customer are consecutive rows and is_primary is
 *   simply "first of its run". address_owner maps rank → customer id; its
 *   inverse lets an order find its customer's addresses.
 *
 *   order lines ← orders. Same with Poisson(2.5) truncated at 16 (8.2 % of
 *   orders have no line) and the exact total int(orders * 2.5): order_line
 *   rows are grouped by order (not sorted by order_id: line_owner scatters
 *   the orders). Why this and not a fixed pattern of line counts: a pattern
 *   would make line counts periodic along the order ids; the allocation gives
 *   the Poisson shape the reference has (there lines pick orders uniformly),
 *   an exact total, and O(1) look-ups both ways, with ~4 KB of state. The
 *   order's total is then the sum over its k lines, recomputed from each
 *   line's product, quantity and the order's promotion, in integer cents.
 *
 *   orders → customers. The reference draws a Pareto(1.16) rank per order
 *   and caps customers at 50 orders in a sequential pass. Here the
 *   distribution of orders per customer that process produces (a Poisson
 *   around the Pareto density, capped at 50, the excess spread uniformly;
 *   see shape_gen_pareto_counts) is allocated exactly over customer ranks,
 *   so the cap holds in every run; order rows reach their allocation slot
 *   through the order_slot permutation (so a customer's orders are
 *   scattered over the stream) and ranks map to customers through
 *   order_owner (independent of the address ranks). When orders / customers
 *   exceeds 50 (xxl: exactly 50, xxxl: 100) no skew can satisfy the cap:
 *   every customer then gets the mean, and for xxxl the cap is 100.
 *
 * Dates: order_date is drawn from the seasonal model restricted to days on
 * or after the customer's signup, so order_date >= signup_date holds by
 * construction and the model's weekday and hour shapes hold within every
 * customer's window (the reference instead moves a violating order to
 * signup + 1 day). If order counts ignored signups, late customers would
 * cram all their orders into their last months (59 % of `medium`'s orders
 * fell in 2025). So a customer's expected order count scales with its
 * tenure (the share of the range since signup): shape_gen_pareto_counts
 * builds the count distribution over (Pareto rank, tenure) and the
 * posterior of tenure given the count, and a customer's signup is drawn from
 * that posterior given its allocated count. Signups stay uniform over
 * [2022-01-01, 2026-01-01) as in the reference, and order density grows
 * about linearly over the range, as the reference's does (there, both kept
 * and repaired orders follow the signups' linear CDF). return_date =
 * order_date + 1..90 whole days, so it is always later.
 *
 * Memory: the domain (~55 KB: three allocations, alias and Zipf tables, the
 * seasonal model's 1,461-day table) and ~16 KB per table cursor are all
 * there is, for every preset up to xxxl.
 */
#include "retail_internal.h"

#include <stdlib.h>
#include <string.h>

#include "../data/gen_data.h"
#include "shape/timestamp.h"

/* ---- presets ------------------------------------------------------------ */

typedef struct preset {
    const char *name;
    uint64_t customers, products, orders;
} preset;

static const preset PRESETS[] = {
    {"fabric_demo", 200, 100, 1000},
    {"small", 1000, 500, 5000},
    {"medium", 50000, 5000, 500000},
    {"large", 500000, 25000, 5000000},
    {"warehouse", 1000000, 50000, 10000000},
    {"xlarge", 5000000, 100000, 100000000},
    {"xxl", 20000000, 200000, 1000000000},
    {"xxxl", 100000000, 500000, 10000000000ULL},
};
#define NPRESETS (sizeof PRESETS / sizeof PRESETS[0])

/* Model range and fixed counts (spec-core §4.1, §4.3). */
#define RANGE_FIRST_YEAR 2022
#define RANGE_LAST_YEAR 2025
#define CATEGORIES 50
#define STORES 150
#define PROMOTIONS_PER_YEAR 50
#define ORDERS_CAP 50

const char *shape_retail_preset_name(size_t i)
{
    return i < NPRESETS ? PRESETS[i].name : NULL;
}

static const preset *find_preset(const char *name)
{
    if (!name) name = SHAPE_RETAIL_DEFAULT_PRESET;
    for (size_t i = 0; i < NPRESETS; i++)
        if (strcmp(PRESETS[i].name, name) == 0) return &PRESETS[i];
    return NULL;
}

static void preset_rows(const preset *p, uint64_t rows[SHAPE_RETAIL_TABLES])
{
    /* Derived counts as the reference computes them: a float multiply, then
     * truncation (exact here: every count is far below 2^53). */
    rows[SHAPE_RETAIL_CUSTOMER] = p->customers;
    rows[SHAPE_RETAIL_ADDRESS] = (uint64_t)((double)p->customers * 1.5);
    rows[SHAPE_RETAIL_PRODUCT_CATEGORY] = CATEGORIES;
    rows[SHAPE_RETAIL_PRODUCT] = p->products;
    rows[SHAPE_RETAIL_PROMOTION] = PROMOTIONS_PER_YEAR * (RANGE_LAST_YEAR - RANGE_FIRST_YEAR + 1);
    rows[SHAPE_RETAIL_STORE] = STORES;
    rows[SHAPE_RETAIL_ORDER] = p->orders;
    rows[SHAPE_RETAIL_ORDER_LINE] = (uint64_t)((double)p->orders * 2.5);
    rows[SHAPE_RETAIL_RETURN] = (uint64_t)((double)p->orders * 0.17);
}

int shape_retail_preset_rows(const char *name, uint64_t rows[SHAPE_RETAIL_TABLES], shape_err *err)
{
    const preset *p = find_preset(name);
    if (!p)
        return shape_err_set(err, SHAPE_ENOTFOUND,
                             "unknown scale preset '%s' (fabric_demo, small, medium, large, "
                             "warehouse, xlarge, xxl, xxxl)",
                             name);
    preset_rows(p, rows);
    return SHAPE_OK;
}

/* ---- tables and columns ------------------------------------------------- */

static const char *const TABLE_NAMES[SHAPE_RETAIL_TABLES] = {
    "customer", "address", "product_category", "product", "promotion",
    "store",    "order",   "order_line",       "return",
};

const char *shape_retail_table_name(size_t table)
{
    return table < SHAPE_RETAIL_TABLES ? TABLE_NAMES[table] : NULL;
}

int shape_retail_table_find(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < SHAPE_RETAIL_TABLES; i++)
        if (strcmp(TABLE_NAMES[i], name) == 0) return i;
    return -1;
}

#define I64 SHAPE_GEN_INT64
#define F64 SHAPE_GEN_FLOAT64
#define STR SHAPE_GEN_STRING
#define TS SHAPE_GEN_TIMESTAMP_NS
#define BOOL SHAPE_GEN_BOOL

static const shape_gen_column COLS_CUSTOMER[] = {
    {"customer_id", I64, 0},  {"first_name", STR, 0},   {"last_name", STR, 0},
    {"email", STR, 1},        {"gender", STR, 0},       {"loyalty_tier", STR, 0},
    {"signup_date", TS, 0},   {"is_active", STR, 0},
};
static const shape_gen_column COLS_ADDRESS[] = {
    {"address_id", I64, 0}, {"customer_id", I64, 0}, {"address_type", STR, 0},
    {"street", STR, 0},     {"city", STR, 0},        {"state", STR, 0},
    {"zip_code", STR, 0},   {"lat", F64, 0},         {"lng", F64, 0},
    {"is_primary", BOOL, 0},
};
static const shape_gen_column COLS_CATEGORY[] = {
    {"category_id", I64, 0},
    {"category_name", STR, 0},
    {"parent_category_id", I64, 1},
    {"level", I64, 0},
};
static const shape_gen_column COLS_PRODUCT[] = {
    {"product_id", I64, 0}, {"category_id", I64, 0},    {"product_name", STR, 0},
    {"unit_price", F64, 0}, {"product_status", STR, 0}, {"cost", F64, 0},
};
static const shape_gen_column COLS_PROMOTION[] = {
    {"promotion_id", I64, 0}, {"promo_name", STR, 0}, {"promo_type", STR, 0},
    {"discount_pct", F64, 0}, {"start_date", TS, 0},  {"end_date", TS, 0},
};
static const shape_gen_column COLS_STORE[] = {
    {"store_id", I64, 0}, {"store_name", STR, 0}, {"store_type", STR, 0},
    {"city", STR, 0},     {"state", STR, 0},
};
static const shape_gen_column COLS_ORDER[] = {
    {"order_id", I64, 0},   {"customer_id", I64, 0},         {"store_id", I64, 0},
    {"shipping_address_id", I64, 1}, {"promotion_id", I64, 1}, {"order_date", TS, 0},
    {"status", STR, 0},     {"order_total", F64, 0},
};
static const shape_gen_column COLS_ORDER_LINE[] = {
    {"order_line_id", I64, 0}, {"order_id", I64, 0},         {"product_id", I64, 0},
    {"quantity", F64, 0},      {"promotion_id", I64, 1},     {"unit_price", F64, 0},
    {"discount_percent", F64, 0}, {"line_total", F64, 0},
};
static const shape_gen_column COLS_RETURN[] = {
    {"return_id", I64, 0},     {"order_id", I64, 0},   {"reason", STR, 0},
    {"refund_amount", F64, 0}, {"return_date", TS, 0},
};

static const struct {
    const shape_gen_column *cols;
    size_t n;
} COLUMNS[SHAPE_RETAIL_TABLES] = {
#define C(a) {a, sizeof a / sizeof a[0]}
    C(COLS_CUSTOMER), C(COLS_ADDRESS),    C(COLS_CATEGORY),
    C(COLS_PRODUCT),  C(COLS_PROMOTION),  C(COLS_STORE),
    C(COLS_ORDER),    C(COLS_ORDER_LINE), C(COLS_RETURN),
#undef C
};

size_t shape_retail_columns(size_t table, const shape_gen_column **cols)
{
    if (table >= SHAPE_RETAIL_TABLES) {
        if (cols) *cols = NULL;
        return 0;
    }
    if (cols) *cols = COLUMNS[table].cols;
    return COLUMNS[table].n;
}

int shape_retail_event_time_column(size_t table)
{
    if (table >= SHAPE_RETAIL_TABLES) return -1;
    for (size_t i = 0; i < COLUMNS[table].n; i++)
        if (COLUMNS[table].cols[i].type == SHAPE_GEN_TIMESTAMP_NS) return (int)i;
    return -1;
}

/* ---- streams ------------------------------------------------------------ */

static const struct {
    const char *table, *column, *label;
} STREAMS[RS_COUNT] = {
    [RS_CUSTOMER_FIRST] = {"customer", "first_name", "pick"},
    [RS_CUSTOMER_LAST] = {"customer", "last_name", "pick"},
    [RS_CUSTOMER_EMAIL_NULL] = {"customer", "email", "null"},
    [RS_CUSTOMER_EMAIL_NUMBER] = {"customer", "email", "number"},
    [RS_CUSTOMER_EMAIL_DOMAIN] = {"customer", "email", "domain"},
    [RS_CUSTOMER_GENDER] = {"customer", "gender", "enum"},
    [RS_CUSTOMER_LOYALTY] = {"customer", "loyalty_tier", "enum"},
    [RS_CUSTOMER_SIGNUP] = {"customer", "signup_date", "instant"},
    [RS_CUSTOMER_ACTIVE] = {"customer", "is_active", "enum"},
    [RS_ADDRESS_OWNER_PERM] = {"address", "customer_id", "perm"},
    [RS_ADDRESS_TYPE] = {"address", "address_type", "enum"},
    [RS_ADDRESS_STREET_NUMBER] = {"address", "street", "number"},
    [RS_ADDRESS_STREET_NAME] = {"address", "street", "name"},
    [RS_ADDRESS_STREET_SUFFIX] = {"address", "street", "suffix"},
    [RS_ADDRESS_PLACE] = {"address", "city", "record"},
    [RS_CATEGORY_NAME_PERM] = {"product_category", "category_name", "perm"},
    [RS_CATEGORY_PARENT] = {"product_category", "parent_category_id", "pick"},
    [RS_PRODUCT_CATEGORY] = {"product", "category_id", "fk"},
    [RS_PRODUCT_QUALIFIER] = {"product", "product_name", "qualifier"},
    [RS_PRODUCT_ITEM] = {"product", "product_name", "item"},
    [RS_PRODUCT_PRICE] = {"product", "unit_price", "lognormal"},
    [RS_PRODUCT_STATUS] = {"product", "product_status", "enum"},
    [RS_PRODUCT_COST] = {"product", "cost", "uniform"},
    [RS_PRODUCT_COST_FIX] = {"product", "cost", "fix:cost_less_than_price"},
    [RS_PROMO_NAME] = {"promotion", "promo_name", "pick"},
    [RS_PROMO_TYPE] = {"promotion", "promo_type", "enum"},
    [RS_PROMO_DISCOUNT] = {"promotion", "discount_pct", "enum"},
    [RS_PROMO_START] = {"promotion", "start_date", "instant"},
    [RS_PROMO_DAYS] = {"promotion", "end_date", "days"},
    [RS_STORE_TYPE] = {"store", "store_type", "enum"},
    [RS_STORE_PLACE] = {"store", "city", "record"},
    [RS_ORDER_SLOT_PERM] = {"order", "customer_id", "slot"},
    [RS_ORDER_OWNER_PERM] = {"order", "customer_id", "perm"},
    [RS_ORDER_STORE_ZIPF] = {"order", "store_id", "zipf"},
    [RS_ORDER_STORE_PERM] = {"order", "store_id", "perm"},
    [RS_ORDER_SHIP_PICK] = {"order", "shipping_address_id", "pick"},
    [RS_ORDER_PROMO_NULL] = {"order", "promotion_id", "null"},
    [RS_ORDER_PROMO_FK] = {"order", "promotion_id", "fk"},
    [RS_ORDER_DATE] = {"order", "order_date", "seasonal"},
    [RS_ORDER_STATUS] = {"order", "status", "enum"},
    [RS_LINE_OWNER_PERM] = {"order_line", "order_id", "perm"},
    [RS_LINE_PRODUCT_ZIPF] = {"order_line", "product_id", "zipf"},
    [RS_LINE_PRODUCT_PERM] = {"order_line", "product_id", "perm"},
    [RS_LINE_QUANTITY] = {"order_line", "quantity", "geometric"},
    [RS_RETURN_ORDER] = {"return", "order_id", "fk"},
    [RS_RETURN_REASON] = {"return", "reason", "enum"},
    [RS_RETURN_REFUND] = {"return", "refund_amount", "lognormal"},
    [RS_RETURN_REFUND_FIX] = {"return", "refund_amount", "fix:refund_leq_order_total"},
    [RS_RETURN_DAYS] = {"return", "return_date", "days"},
    [RS_TL_SIGNUP] = {"customer", "signup_date", "timeline"},
    [RS_TL_ADDRESS_CHUNK] = {"address", "customer_id", "timeline-chunk"},
    [RS_TL_ORDER_DATE] = {"order", "order_date", "timeline"},
    [RS_TL_ORDER_CUSTOMER] = {"order", "customer_id", "timeline"},
    [RS_TL_LINE_CHUNK] = {"order_line", "order_id", "timeline-chunk"},
    [RS_TL_RETURN_DATE] = {"return", "return_date", "timeline"},
    [RS_TL_RETURN_ORDER] = {"return", "order_id", "timeline"},
};

/* ---- open / close ------------------------------------------------------- */

static int alias(shape_gen_alias *a, const double *w, size_t n, const char *what, shape_err *err)
{
    int rc = shape_gen_alias_init(a, w, n, err);
    if (rc != SHAPE_OK) shape_err_prefix(err, "retail %s", what);
    return rc;
}

static int build(shape_retail *d, shape_err *err)
{
    uint64_t seed = d->seed;
    for (int i = 0; i < RS_COUNT; i++)
        d->st[i] = shape_gen_stream_make(seed, STREAMS[i].table, STREAMS[i].column, STREAMS[i].label);

    /* Weighted enums (spec-core §4.4); the value lists are in retail_rows.c
     * in the same order. */
    static const double gender[] = {0.49, 0.51};
    static const double loyalty[] = {0.55, 0.25, 0.13, 0.07};
    static const double active[] = {0.85, 0.15};
    static const double address_type[] = {0.5, 0.4, 0.1};
    static const double product_status[] = {0.75, 0.15, 0.10};
    static const double promo_type[] = {0.40, 0.15, 0.20, 0.10, 0.15};
    static const double discount[] = {0.05, 0.25, 0.20, 0.25, 0.10, 0.15};
    static const double store_type[] = {0.85, 0.10, 0.05};
    static const double status[] = {0.77, 0.08, 0.02, 0.04, 0.09};
    static const double reason[] = {0.25, 0.22, 0.20, 0.15, 0.10, 0.05, 0.03};
#define ALIAS(field, w) SHAPE_RETURN_NOT_OK(alias(&d->field, w, sizeof w / sizeof w[0], #field, err))
    ALIAS(gender, gender);
    ALIAS(loyalty, loyalty);
    ALIAS(active, active);
    ALIAS(address_type, address_type);
    ALIAS(product_status, product_status);
    ALIAS(promo_type, promo_type);
    ALIAS(promo_discount, discount);
    ALIAS(store_type, store_type);
    ALIAS(order_status, status);
    ALIAS(return_reason, reason);

    /* quantity: Geometric(p = 0.6) on 1, 2, ... clipped to [1, 20] — the
     * clipped mass P(k >= 20) = 0.4^19 goes to 20. */
    double qw[20];
    for (int k = 1; k <= 20; k++) qw[k - 1] = 0.6 * shape_gen_pow(0.4, k - 1);
    qw[19] = shape_gen_pow(0.4, 19);
    ALIAS(quantity, qw);
#undef ALIAS

    const uint64_t *rows = d->rows;
    SHAPE_RETURN_NOT_OK(shape_gen_zipf_init(&d->store_zipf, rows[SHAPE_RETAIL_STORE], 1.3, err));
    SHAPE_RETURN_NOT_OK(shape_gen_zipf_init(&d->product_zipf, rows[SHAPE_RETAIL_PRODUCT], 1.5, err));
    shape_gen_perm_init(&d->category_perm, shape_retail_categories.n, d->st[RS_CATEGORY_NAME_PERM]);
    shape_gen_perm_init(&d->store_perm, rows[SHAPE_RETAIL_STORE], d->st[RS_ORDER_STORE_PERM]);
    shape_gen_perm_init(&d->product_perm, rows[SHAPE_RETAIL_PRODUCT], d->st[RS_LINE_PRODUCT_PERM]);
    for (uint32_t k = 0; k < d->store_zipf.head; k++)
        d->store_of_rank[k] = (uint32_t)shape_gen_perm_apply(&d->store_perm, k);
    for (uint32_t k = 0; k < d->product_zipf.head; k++)
        d->product_of_rank[k] = (uint32_t)shape_gen_perm_apply(&d->product_perm, k);
    uint64_t customers = rows[SHAPE_RETAIL_CUSTOMER], orders = rows[SHAPE_RETAIL_ORDER];
    shape_gen_perm_init(&d->address_owner, customers, d->st[RS_ADDRESS_OWNER_PERM]);
    shape_gen_perm_init(&d->order_owner, customers, d->st[RS_ORDER_OWNER_PERM]);
    shape_gen_perm_init(&d->order_slot, orders, d->st[RS_ORDER_SLOT_PERM]);
    shape_gen_perm_init(&d->line_owner, orders, d->st[RS_LINE_OWNER_PERM]);

    double q[SHAPE_GEN_ALLOC_MAX_K + 1];
    shape_gen_poisson_counts(q, 12, 1.5);
    SHAPE_RETURN_NOT_OK(
        shape_gen_alloc_init(&d->addresses, customers, rows[SHAPE_RETAIL_ADDRESS], q, 12, err));
    shape_gen_poisson_counts(q, 16, 2.5);
    SHAPE_RETURN_NOT_OK(
        shape_gen_alloc_init(&d->lines, orders, rows[SHAPE_RETAIL_ORDER_LINE], q, 16, err));
    /* Orders per customer: Pareto(1.16) cut at its 99.5th percentile, at
     * most 50 — or the mean when the mean itself reaches the cap. */
    uint64_t mean_ceil = (orders + customers - 1) / customers;
    d->orders_cap = mean_ceil > ORDERS_CAP ? (uint32_t)mean_ceil : ORDERS_CAP;
    shape_gen_pareto_counts(q, d->orders_cap, (double)orders / (double)customers, 1.16, 0.995,
                            d->tenure_cdf, RETAIL_TENURE_CELLS);
    SHAPE_RETURN_NOT_OK(shape_gen_alloc_init(&d->orders, customers, orders, q, d->orders_cap, err));

    int64_t first_day = shape_days_from_civil(RANGE_FIRST_YEAR, 1, 1);
    int64_t end_day = shape_days_from_civil(RANGE_LAST_YEAR + 1, 1, 1);
    d->range_start_ns = first_day * SHAPE_GEN_NS_PER_DAY;
    d->range_end_ns = end_day * SHAPE_GEN_NS_PER_DAY;
    static const double month_w[12] = {.071, .068, .079, .079, .083, .083,
                                       .085, .088, .079, .083, .096, .106};
    static const double weekday_w[7] = {.155, .152, .148, .153, .147, .115, .130};
    static const double peaks[2] = {12.0, 20.0};
    return shape_gen_seasonal_init(&d->season, first_day, (uint32_t)(end_day - first_day), month_w,
                                   weekday_w, peaks, 2, 2.0, err);
}

static void chunks_init(retail_chunks *c, const shape_gen_alloc *a, shape_gen_stream s)
{
    c->n = a->parents;
    c->size = a->nblocks ? a->block.p[a->block.ngroups] : 4096;
    if (c->size == 0) c->size = 1;
    c->rot = s;
    shape_gen_perm_init(&c->full, c->size, shape_gen_stream_make(s.key, "chunk", "full", "perm"));
    uint64_t last = c->n % c->size;
    shape_gen_perm_init(&c->last, last ? last : 1, shape_gen_stream_make(s.key, "chunk", "last", "perm"));
}

static int open_variant(const char *name, uint64_t seed, int timeline, shape_retail **out, shape_err *err);

int shape_retail_open(const char *name, uint64_t seed, shape_retail **out, shape_err *err)
{
    return open_variant(name, seed, 0, out, err);
}

int shape_retail_open_timeline(const char *name, uint64_t seed, shape_retail **out, shape_err *err)
{
    return open_variant(name, seed, 1, out, err);
}

int shape_retail_is_timeline(const shape_retail *r) { return r->timeline; }

int64_t shape_retail_row_time(const shape_retail *r, size_t table, uint64_t row)
{
    return retail_timeline_time(r, table, row);
}

void shape_retail_followers(const shape_retail *r, size_t parent_table, uint64_t parent, uint64_t *first,
                            uint64_t *count)
{
    const shape_gen_alloc *a = parent_table == SHAPE_RETAIL_CUSTOMER ? &r->addresses : &r->lines;
    const retail_chunks *c = parent_table == SHAPE_RETAIL_CUSTOMER ? &r->address_chunks : &r->line_chunks;
    shape_gen_alloc_run run;
    uint64_t rank = retail_chunk_rank(c, parent);
    shape_gen_alloc_parent(a, rank, &run);
    *first = run.child + (rank - run.rank) * run.k;
    *count = run.k;
}

uint64_t shape_retail_followers_before(const shape_retail *r, size_t parent_table, uint64_t m)
{
    if (parent_table == SHAPE_RETAIL_CUSTOMER) return retail_children_before(&r->addresses, &r->address_chunks, m);
    return retail_children_before(&r->lines, &r->line_chunks, m);
}

static int open_variant(const char *name, uint64_t seed, int timeline, shape_retail **out, shape_err *err)
{
    *out = NULL;
    const preset *p = find_preset(name);
    if (!p) {
        uint64_t rows[SHAPE_RETAIL_TABLES];
        return shape_retail_preset_rows(name, rows, err);
    }
    shape_retail *d = calloc(1, sizeof *d);
    if (!d) return shape_err_set(err, SHAPE_ENOMEM, "retail: out of memory");
    d->preset = p->name;
    d->seed = seed;
    preset_rows(p, d->rows);
    d->timeline = timeline;
    int rc = build(d, err);
    if (rc == SHAPE_OK && timeline) {
        chunks_init(&d->address_chunks, &d->addresses, d->st[RS_TL_ADDRESS_CHUNK]);
        chunks_init(&d->line_chunks, &d->lines, d->st[RS_TL_LINE_CHUNK]);
        d->first_order_ns = d->rows[SHAPE_RETAIL_ORDER] ? retail_timeline_time(d, SHAPE_RETAIL_ORDER, 0) : 0;
    }
    if (rc != SHAPE_OK) {
        shape_retail_free(d);
        return rc;
    }
    *out = d;
    return SHAPE_OK;
}

void shape_retail_free(shape_retail *d)
{
    if (!d) return;
    shape_gen_seasonal_free(&d->season);
    free(d);
}

const char *shape_retail_preset(const shape_retail *d) { return d->preset; }
uint64_t shape_retail_seed(const shape_retail *d) { return d->seed; }

uint64_t shape_retail_rows(const shape_retail *d, size_t table)
{
    return table < SHAPE_RETAIL_TABLES ? d->rows[table] : 0;
}

uint64_t shape_retail_total_events(const shape_retail *d)
{
    uint64_t n = 0;
    for (size_t i = 0; i < SHAPE_RETAIL_TABLES; i++) n += d->rows[i];
    return n;
}

int shape_retail_locate(const shape_retail *d, uint64_t offset, size_t *table, uint64_t *row,
                        shape_err *err)
{
    for (size_t i = 0; i < SHAPE_RETAIL_TABLES; i++) {
        if (offset < d->rows[i]) {
            *table = i;
            *row = offset;
            return SHAPE_OK;
        }
        offset -= d->rows[i];
    }
    return shape_err_set(err, SHAPE_EINVAL, "stream position past the last of %llu events",
                         (unsigned long long)shape_retail_total_events(d));
}

/* ---- table cursors ------------------------------------------------------ */

int shape_retail_table_open_id(shape_retail *d, size_t table, shape_retail_table **out,
                               shape_err *err)
{
    *out = NULL;
    if (table >= SHAPE_RETAIL_TABLES)
        return shape_err_set(err, SHAPE_ENOTFOUND, "retail has no table number %zu", table);
    shape_retail_table *t = calloc(1, sizeof *t);
    if (!t) return shape_err_set(err, SHAPE_ENOMEM, "retail: out of memory");
    t->d = d;
    t->id = table;
    t->line_order = UINT64_MAX;
    for (size_t i = 0; i < RETAIL_PRICE_CACHE; i++) t->price_key[i] = UINT64_MAX;
    *out = t;
    return SHAPE_OK;
}

int shape_retail_table_open(shape_retail *d, const char *name, shape_retail_table **out,
                            shape_err *err)
{
    int id = shape_retail_table_find(name);
    if (id < 0) {
        *out = NULL;
        return shape_err_set(err, SHAPE_ENOTFOUND,
                             "retail has no table '%s' (customer, address, product_category, "
                             "product, promotion, store, order, order_line, return)",
                             name ? name : "");
    }
    return shape_retail_table_open_id(d, (size_t)id, out, err);
}

void shape_retail_table_free(shape_retail_table *t) { free(t); }

size_t shape_retail_table_id(const shape_retail_table *t) { return t->id; }

uint64_t shape_retail_table_rows(const shape_retail_table *t) { return t->d->rows[t->id]; }

int shape_retail_table_row(shape_retail_table *t, uint64_t row, shape_gen_row *out, shape_err *err)
{
    if (row >= t->d->rows[t->id])
        return shape_err_set(err, SHAPE_EINVAL, "%s has %llu rows; row %llu asked",
                             TABLE_NAMES[t->id], (unsigned long long)t->d->rows[t->id],
                             (unsigned long long)row);
    return shape_retail_fill_row(t, row, out);
}

/* retail_domain.c — the retail domain behind the domain interface
 * (shape/domain.h), so `shape emit retail` runs on the same plan, runtime
 * and checkpoint as any other domain.
 *
 * Why: emit must not know which domain it streams; retail keeps its own
 * richer API (shape/generate_retail.h) for its tests and benchmarks, and
 * this file is the one adapter between the two.
 * How: every function of the type forwards to shape_retail_*; the identity
 * is what the fingerprint has always held for retail ("domain":"retail",
 * "mode":"3nf", "scale", "seed"), so checkpoints written before this
 * interface existed still resume.
 */
#include "shape/domain.h"
#include "shape/generate_retail.h"

static const char *retail_preset_name(const shape_domain_type *type, size_t i)
{
    (void)type;
    return shape_retail_preset_name(i);
}

static int retail_open(const shape_domain_type *type, const char *preset, uint64_t seed, void **impl,
                       shape_err *err)
{
    (void)type;
    shape_retail *r = NULL;
    int rc = shape_retail_open(preset, seed, &r, err);
    *impl = r;
    return rc;
}

static int retail_open_timeline(const shape_domain_type *type, const char *preset, uint64_t seed, void **impl,
                                shape_err *err)
{
    (void)type;
    shape_retail *r = NULL;
    int rc = shape_retail_open_timeline(preset, seed, &r, err);
    *impl = r;
    return rc;
}

/* Event-time roles: customer, order and return are timed; address follows
 * its customer and order_line its order; the rest (promotion included: its
 * start_date is a campaign's calendar entry, published ahead, and orders
 * point at promotions regardless of date) is the head. */
static int retail_table_role(const void *impl, size_t t, size_t *parent)
{
    (void)impl;
    switch (t) {
    case SHAPE_RETAIL_CUSTOMER:
    case SHAPE_RETAIL_ORDER:
    case SHAPE_RETAIL_RETURN: return SHAPE_DOMAIN_TIMED;
    case SHAPE_RETAIL_ADDRESS: *parent = SHAPE_RETAIL_CUSTOMER; return SHAPE_DOMAIN_FOLLOWS;
    case SHAPE_RETAIL_ORDER_LINE: *parent = SHAPE_RETAIL_ORDER; return SHAPE_DOMAIN_FOLLOWS;
    default: return SHAPE_DOMAIN_HEAD;
    }
}

static int64_t retail_row_time(const void *impl, size_t t, uint64_t row)
{
    return shape_retail_row_time(impl, t, row);
}

static size_t parent_of(size_t follower)
{
    return follower == SHAPE_RETAIL_ADDRESS ? SHAPE_RETAIL_CUSTOMER : SHAPE_RETAIL_ORDER;
}

static void retail_followers(const void *impl, size_t t, uint64_t parent, uint64_t *first, uint64_t *count)
{
    shape_retail_followers(impl, parent_of(t), parent, first, count);
}

static uint64_t retail_followers_before(const void *impl, size_t t, uint64_t m)
{
    return shape_retail_followers_before(impl, parent_of(t), m);
}

static void retail_close(void *impl) { shape_retail_free(impl); }

static size_t retail_table_count(const void *impl)
{
    (void)impl;
    return SHAPE_RETAIL_TABLES;
}

static void retail_table(const void *impl, size_t t, shape_domain_table *out)
{
    out->name = shape_retail_table_name(t);
    out->ncols = shape_retail_columns(t, &out->cols);
    out->event_time_col = shape_retail_event_time_column(t);
    out->rows = shape_retail_rows(impl, t);
}

static size_t retail_identity(const void *impl, shape_domain_field *out, size_t cap)
{
    const shape_domain_field fields[] = {
        {"domain", "retail", 0},
        {"mode", "3nf", 0},
        {"scale", shape_retail_preset(impl), 0},
        {"seed", NULL, (int64_t)shape_retail_seed(impl)},
        {"order", "event-time", 0}, /* the timeline variant only */
    };
    size_t n = sizeof fields / sizeof fields[0] - (shape_retail_is_timeline(impl) ? 0 : 1);
    if (n > cap) n = cap;
    for (size_t i = 0; i < n; i++) out[i] = fields[i];
    return n;
}

static int retail_cursor_open(void *impl, size_t t, void **cursor, shape_err *err)
{
    shape_retail_table *c = NULL;
    int rc = shape_retail_table_open_id(impl, t, &c, err);
    *cursor = c;
    return rc;
}

static int retail_cursor_row(void *cursor, uint64_t row, shape_gen_row *out, shape_err *err)
{
    return shape_retail_table_row(cursor, row, out, err);
}

static void retail_cursor_close(void *cursor) { shape_retail_table_free(cursor); }

static const shape_domain_type RETAIL = {
    .name = "retail",
    .default_preset = SHAPE_RETAIL_DEFAULT_PRESET,
    .default_seed = SHAPE_RETAIL_DEFAULT_SEED,
    .data = NULL,
    .preset_name = retail_preset_name,
    .open = retail_open,
    .close = retail_close,
    .table_count = retail_table_count,
    .table = retail_table,
    .identity = retail_identity,
    .cursor_open = retail_cursor_open,
    .cursor_row = retail_cursor_row,
    .cursor_close = retail_cursor_close,
    .open_timeline = retail_open_timeline,
    .table_role = retail_table_role,
    .row_time = retail_row_time,
    .followers = retail_followers,
    .followers_before = retail_followers_before,
};

const shape_domain_type *shape_retail_domain_type(void) { return &RETAIL; }

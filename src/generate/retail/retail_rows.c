/* retail_rows.c — one row of any retail table, computed from its row number.
 *
 * Why: the emit runtime asks for rows in stream order, a resumed stream for
 * rows from the middle, tests for rows at random; all must agree. Each value
 * here is a function of (domain, row) only: the draws come from the row's
 * own streams, and values owned by another table (a line's unit price, an
 * order's customer, a return's order total) are recomputed from that table's
 * row through the same functions that table uses for itself.
 * How: "entity" helpers (customer_signup, order_customer, order_lines,
 * product_price, ...) are the single definition of each shared value; the
 * row functions assemble columns in output order into the caller's
 * shape_gen_row (strings into its scratch or pointing at static data). The
 * order_line cursor keeps the allocation run and the order it is in, so a
 * sequential scan does one look-up per order rather than per line; a small
 * price cache serves the Zipf-popular products. Money is summed in integer
 * cents: line_total = cents(q * price * (1 - d/100)) / 100 and order_total =
 * sum(cents) / 100, so the total equals the sum of the rounded line totals.
 */
#include <stdio.h>
#include <string.h>

#include "../data/gen_data.h"
#include "retail_internal.h"
#include "shape/json_write.h" /* shape_json_u64: decimal digits */

#define S SHAPE_RETAIL_S

static const shape_retail_str GENDER[] = {S("M"), S("F")};
static const shape_retail_str LOYALTY[] = {S("Basic"), S("Silver"), S("Gold"), S("Platinum")};
static const shape_retail_str ACTIVE[] = {S("true"), S("false")};
static const shape_retail_str ADDRESS_TYPE[] = {S("billing"), S("shipping"), S("both")};
static const shape_retail_str PRODUCT_STATUS[] = {S("active"), S("discontinued"), S("introduced")};
static const shape_retail_str PROMO_TYPE[] = {S("percent_off"), S("bogo"), S("fixed_amount"),
                                              S("bundle"), S("free_shipping")};
static const double DISCOUNT[] = {5.0, 10.0, 15.0, 20.0, 25.0, 50.0};
static const shape_retail_str STORE_TYPE[] = {S("physical"), S("online"), S("warehouse")};
static const shape_retail_str ORDER_STATUS[] = {S("completed"), S("shipped"), S("processing"),
                                                S("cancelled"), S("returned")};
static const shape_retail_str RETURN_REASON[] = {
    S("wrong_size"), S("changed_mind"),  S("not_as_described"), S("defective"),
    S("damaged_shipping"), S("arrived_late"), S("other")};

/* ---- value setters ------------------------------------------------------ */

static inline void set_i64(shape_gen_value *v, int64_t x)
{
    v->kind = SHAPE_GEN_INT64;
    v->len = 0;
    v->v.i = x;
}

static inline void set_f64(shape_gen_value *v, double x)
{
    v->kind = SHAPE_GEN_FLOAT64;
    v->len = 0;
    v->v.f = x;
}

static inline void set_ts(shape_gen_value *v, int64_t ns)
{
    v->kind = SHAPE_GEN_TIMESTAMP_NS;
    v->len = 0;
    v->v.i = ns;
}

static inline void set_bool(shape_gen_value *v, int b)
{
    v->kind = SHAPE_GEN_BOOL;
    v->len = 0;
    v->v.b = b ? 1 : 0;
}

static inline void set_null(shape_gen_value *v)
{
    v->kind = SHAPE_GEN_NULL;
    v->len = 0;
    v->v.i = 0;
}

static inline void set_str(shape_gen_value *v, const char *s, size_t len)
{
    v->kind = SHAPE_GEN_STRING;
    v->len = (uint32_t)len;
    v->v.s = s;
}

static inline void set_lstr(shape_gen_value *v, shape_retail_str s) { set_str(v, s.s, s.len); }

/* Scratch space for built strings; every table asks well under the 1 KB. */
static inline char *take(shape_gen_row *r, size_t n)
{
    char *p = r->scratch + r->scratch_used;
    r->scratch_used += n;
    return p;
}

static inline char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

static char *put_lower(char *p, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        *p++ = (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : c;
    }
    return p;
}


static inline shape_retail_str pick(const shape_retail_list *l, shape_gen_stream s, uint64_t row)
{
    return l->items[shape_gen_below(s, row, 0, l->n)];
}

/* ---- the timeline variant (docs/EMIT.md "Event-time order") ------------- */

uint64_t retail_chunk_rank(const retail_chunks *c, uint64_t id)
{
    uint64_t i = id % c->size, base = id - i;
    uint64_t len = base + c->size <= c->n ? c->size : c->n - base;
    const shape_gen_perm *p = len == c->size ? &c->full : &c->last;
    uint64_t j = i + shape_gen_below(c->rot, base / c->size, 0, len);
    if (j >= len) j -= len;
    return base + shape_gen_perm_apply(p, j);
}

uint64_t retail_chunk_id(const retail_chunks *c, uint64_t rank)
{
    uint64_t j = rank % c->size, base = rank - j;
    uint64_t len = base + c->size <= c->n ? c->size : c->n - base;
    const shape_gen_perm *p = len == c->size ? &c->full : &c->last;
    j = shape_gen_perm_invert(p, j);
    uint64_t rot = shape_gen_below(c->rot, base / c->size, 0, len);
    return base + (j >= rot ? j - rot : j + len - rot);
}

/* Children of the ranks below r (r <= parents): one run look-up. */
static uint64_t children_before_rank(const shape_gen_alloc *a, uint64_t r)
{
    if (r >= a->parents) return a->children;
    shape_gen_alloc_run run;
    shape_gen_alloc_parent(a, r, &run);
    return run.child + (r - run.rank) * run.k;
}

uint64_t retail_children_before(const shape_gen_alloc *a, const retail_chunks *c, uint64_t m)
{
    /* whole chunks hold whole rank ranges; the chunk of m is summed */
    uint64_t base = m - m % c->size, n = children_before_rank(a, base);
    for (uint64_t id = base; id < m; id++) {
        shape_gen_alloc_run run;
        shape_gen_alloc_parent(a, retail_chunk_rank(c, id), &run);
        n += run.k;
    }
    return n;
}

/* Customer c signs up at start + span * (c + u_c) / customers, to the
 * microsecond (customer 0 at the start): stratified uniform, the same
 * uniform marginal as the table variant, non-decreasing in c. */
static int64_t tl_signup(const shape_retail *d, uint64_t c)
{
    uint64_t span_us = (uint64_t)(d->range_end_ns - d->range_start_ns) / 1000;
    double u = c ? shape_gen_unit(d->st[RS_TL_SIGNUP], c, 0) : 0.0;
    double off = (double)span_us * (((double)c + u) / (double)d->rows[SHAPE_RETAIL_CUSTOMER]);
    uint64_t us = off <= 0 ? 0 : (off >= (double)span_us ? span_us - 1 : (uint64_t)off);
    return d->range_start_ns + (int64_t)us * 1000;
}

/* Row `row` of `rows` at the seasonal quantile of (row + u) / rows. */
static int64_t tl_quantile(const shape_retail *d, int s, uint64_t row, uint64_t rows)
{
    double u = shape_gen_unit(d->st[s], row, 0);
    return shape_gen_seasonal_quantile(&d->season, ((double)row + u) / (double)rows);
}

static int64_t tl_order_date(const shape_retail *d, uint64_t o)
{
    return tl_quantile(d, RS_TL_ORDER_DATE, o, d->rows[SHAPE_RETAIL_ORDER]);
}

/* A return is dated at its quantile, never earlier than a day after the
 * first order (so it always has an order a day before). */
static int64_t tl_return_date(const shape_retail *d, uint64_t r)
{
    int64_t t = tl_quantile(d, RS_TL_RETURN_DATE, r, d->rows[SHAPE_RETAIL_RETURN]);
    int64_t floor_ns = d->first_order_ns + SHAPE_GEN_NS_PER_DAY;
    return t < floor_ns ? floor_ns : t;
}

int64_t retail_timeline_time(const shape_retail *d, size_t table, uint64_t row)
{
    switch (table) {
    case SHAPE_RETAIL_CUSTOMER: return tl_signup(d, row);
    case SHAPE_RETAIL_ORDER: return tl_order_date(d, row);
    case SHAPE_RETAIL_RETURN: return tl_return_date(d, row);
    default: return INT64_MIN;
    }
}

/* The customer of order o: uniform among the customers signed up by its
 * date, the first n = floor((date - start) * customers / span) (at least
 * customer 0, who signs up at the start): c < n has c + u_c < n, so its
 * signup is at or before the order. */
static uint64_t tl_order_customer(const shape_retail *d, uint64_t o, int64_t date)
{
    uint64_t span_us = (uint64_t)(d->range_end_ns - d->range_start_ns) / 1000;
    uint64_t at_us = (uint64_t)(date - d->range_start_ns) / 1000;
    uint64_t customers = d->rows[SHAPE_RETAIL_CUSTOMER];
    uint64_t n = (uint64_t)((unsigned __int128)at_us * customers / span_us);
    if (n < 1) n = 1;
    if (n > customers) n = customers;
    return shape_gen_below(d->st[RS_TL_ORDER_CUSTOMER], o, 0, n);
}

/* Orders dated at or before t (order dates are non-decreasing in the row):
 * order o sits at quantile (o + u) / orders, so o is about orders × the
 * model's probability before t; a few steps from there find the exact
 * count, and a binary search takes over if they do not. */
static uint64_t tl_orders_by(const shape_retail *d, int64_t t)
{
    uint64_t orders = d->rows[SHAPE_RETAIL_ORDER];
    double f = shape_gen_seasonal_cdf(&d->season, t) * (double)orders;
    uint64_t o = f <= 0 ? 0 : (f >= (double)orders ? orders : (uint64_t)f);
    for (int step = 0; step < 8; step++) {
        if (o > 0 && tl_order_date(d, o - 1) > t)
            o--;
        else if (o < orders && tl_order_date(d, o) <= t)
            o++;
        else
            return o;
    }
    uint64_t lo = 0, hi = orders;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (tl_order_date(d, mid) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The order of return r: a delay of whole days ~ exp(Normal(2.0, 0.8)) in
 * [1, 90] as in the table variant, then an order dated in the day before
 * (return date - delay); the latest order before that when that day has
 * none; order 0 when none is (the return date is a day after it at least). */
static uint64_t tl_return_order(const shape_retail *d, uint64_t r, int64_t at)
{
    int64_t target = at - shape_gen_add_lognormal_days(d->st[RS_RETURN_DAYS], r, 0, 0, 2.0, 0.8, 1, 90);
    uint64_t n = tl_orders_by(d, target);
    if (n == 0) return 0;
    uint64_t m = tl_orders_by(d, target - SHAPE_GEN_NS_PER_DAY);
    if (m >= n) return n - 1;
    return m + shape_gen_below(d->st[RS_TL_RETURN_ORDER], r, 0, n - m);
}

/* ---- entities: the one definition of every shared value ----------------- */

/* Orders allocated to customer c. */
static uint32_t customer_order_count(const shape_retail *d, uint64_t c)
{
    shape_gen_alloc_run run;
    shape_gen_alloc_parent(&d->orders, shape_gen_perm_invert(&d->order_owner, c), &run);
    return run.k;
}

/* Signup of customer c, who has k orders: tenure tau drawn from its
 * posterior given k (piecewise uniform over RETAIL_TENURE_CELLS cells, one
 * uniform), signup = range start + (1 - tau) of the range, to the
 * microsecond. Uniform over the range across all customers. */
static int64_t customer_signup(const shape_retail *d, uint64_t c, uint32_t k)
{
    const double *row = d->tenure_cdf + (size_t)k * RETAIL_TENURE_CELLS;
    double u = shape_gen_unit(d->st[RS_CUSTOMER_SIGNUP], c, 0);
    /* j = the first cell below the last with row[j] > u, else the last: a
     * binary search (the row is a running sum, non-decreasing before its
     * last cell, which is pinned to 1.0 > u), same cell as a linear scan. */
    uint32_t j = 0, len = RETAIL_TENURE_CELLS - 1;
    while (len > 0) {
        uint32_t half = len / 2;
        if (row[j + half] > u) {
            len = half;
        } else {
            j += half + 1;
            len -= half + 1;
        }
    }
    double prev = j ? row[j - 1] : 0.0, width = row[j] - prev;
    double frac = width > 0 ? (u - prev) / width : 0.5;
    double tau = ((double)j + frac) / RETAIL_TENURE_CELLS;
    uint64_t span_us = (uint64_t)(d->range_end_ns - d->range_start_ns) / 1000;
    double off = (1.0 - tau) * (double)span_us;
    uint64_t us = off <= 0 ? 0 : (off >= (double)span_us ? span_us - 1 : (uint64_t)off);
    return d->range_start_ns + (int64_t)us * 1000;
}

/* The customer of order o (and that customer's order count): its slot,
 * the allocation rank holding the slot, the customer of that rank. */
static uint64_t order_customer(const shape_retail *d, uint64_t o, uint32_t *orders_of_customer)
{
    uint64_t slot = shape_gen_perm_apply(&d->order_slot, o);
    shape_gen_alloc_run run;
    shape_gen_alloc_child(&d->orders, slot, &run);
    uint64_t rank = run.rank + (slot - run.child) / run.k;
    *orders_of_customer = run.k;
    return shape_gen_perm_apply(&d->order_owner, rank);
}

/* The address rows of customer c: first .. first + k - 1 (k may be 0). */
static void customer_addresses(const shape_retail *d, uint64_t c, uint64_t *first, uint32_t *k)
{
    uint64_t rank = d->timeline ? retail_chunk_rank(&d->address_chunks, c)
                                : shape_gen_perm_invert(&d->address_owner, c);
    shape_gen_alloc_run run;
    shape_gen_alloc_parent(&d->addresses, rank, &run);
    *first = run.child + (rank - run.rank) * run.k;
    *k = run.k;
}

/* The order_line rows of order o: first .. first + k - 1 (k may be 0). */
static void order_lines(const shape_retail *d, uint64_t o, uint64_t *first, uint32_t *k)
{
    uint64_t rank = d->timeline ? retail_chunk_rank(&d->line_chunks, o)
                                : shape_gen_perm_invert(&d->line_owner, o);
    shape_gen_alloc_run run;
    shape_gen_alloc_parent(&d->lines, rank, &run);
    *first = run.child + (rank - run.rank) * run.k;
    *k = run.k;
}

/* Promotion row of order o, or -1 (70 % of orders have none). */
static int64_t order_promotion(const shape_retail *d, uint64_t o)
{
    if (shape_gen_chance(d->st[RS_ORDER_PROMO_NULL], o, 0, 0.70)) return -1;
    return (int64_t)shape_gen_below(d->st[RS_ORDER_PROMO_FK], o, 0,
                                    d->rows[SHAPE_RETAIL_PROMOTION]);
}

static double promotion_discount(const shape_retail *d, uint64_t p)
{
    return DISCOUNT[shape_gen_alias_draw(&d->promo_discount, d->st[RS_PROMO_DISCOUNT], p, 0)];
}

static double order_discount(const shape_retail *d, int64_t promo)
{
    return promo < 0 ? 0.0 : promotion_discount(d, (uint64_t)promo);
}

/* exp(Normal(3, 1)) clipped to [0.99, 999.99], rounded to cents. */
static double product_price_raw(const shape_retail *d, uint64_t p)
{
    return shape_gen_round_scale(
        shape_gen_lognormal(d->st[RS_PRODUCT_PRICE], p, 0, 3.0, 1.0, 0.99, 999.99), 2);
}

static double product_price(shape_retail_table *t, uint64_t p)
{
    size_t slot = (size_t)(p & (RETAIL_PRICE_CACHE - 1));
    if (t->price_key[slot] != p) {
        t->price_key[slot] = p;
        t->price_val[slot] = product_price_raw(t->d, p);
    }
    return t->price_val[slot];
}

static uint64_t line_product(const shape_retail *d, uint64_t j)
{
    uint64_t rank = shape_gen_zipf_draw(&d->product_zipf, d->st[RS_LINE_PRODUCT_ZIPF], j, 0);
    if (rank <= d->product_zipf.head) return d->product_of_rank[rank - 1];
    return shape_gen_perm_apply(&d->product_perm, rank - 1);
}

static int64_t line_quantity(const shape_retail *d, uint64_t j)
{
    return 1 + (int64_t)shape_gen_alias_draw(&d->quantity, d->st[RS_LINE_QUANTITY], j, 0);
}

static int64_t line_cents(int64_t qty, double price, double discount)
{
    return shape_gen_cents((double)qty * price * (1.0 - discount / 100.0));
}

static int64_t order_total_cents(shape_retail_table *t, uint64_t o, int64_t promo)
{
    const shape_retail *d = t->d;
    double discount = order_discount(d, promo);
    uint64_t first;
    uint32_t k;
    order_lines(d, o, &first, &k);
    int64_t cents = 0;
    for (uint32_t i = 0; i < k; i++) {
        uint64_t j = first + i;
        cents += line_cents(line_quantity(d, j), product_price(t, line_product(d, j)), discount);
    }
    return cents;
}

static int64_t order_date(const shape_retail *d, uint64_t o, uint64_t customer, uint32_t k)
{
    return shape_gen_seasonal_draw(&d->season, d->st[RS_ORDER_DATE], o, 0,
                                   customer_signup(d, customer, k));
}

/* A place record: city and state point at static data, the ZIP goes into
 * the row's scratch. */
static void set_place(shape_gen_row *out, size_t col_city, size_t col_state, int col_zip,
                      const shape_retail_place *pl)
{
    set_str(&out->values[col_city], shape_retail_city_blob + pl->city_off, pl->city_len);
    set_str(&out->values[col_state], shape_retail_state_codes + 2 * pl->state, 2);
    if (col_zip >= 0) {
        char *z = take(out, 5);
        uint32_t v = pl->zip;
        for (int i = 4; i >= 0; i--) {
            z[i] = (char)('0' + v % 10);
            v /= 10;
        }
        set_str(&out->values[col_zip], z, 5);
    }
}

/* ---- tables ------------------------------------------------------------- */

static void row_customer(shape_retail_table *t, uint64_t c, shape_gen_row *out)
{
    const shape_retail *d = t->d;
    shape_gen_value *v = out->values;
    shape_retail_str first = pick(&shape_retail_first_names, d->st[RS_CUSTOMER_FIRST], c);
    shape_retail_str last = pick(&shape_retail_last_names, d->st[RS_CUSTOMER_LAST], c);
    set_i64(&v[0], (int64_t)c + 1);
    set_lstr(&v[1], first);
    set_lstr(&v[2], last);
    if (shape_gen_chance(d->st[RS_CUSTOMER_EMAIL_NULL], c, 0, 0.05)) {
        set_null(&v[3]);
    } else {
        shape_retail_str dom = pick(&shape_retail_email_domains, d->st[RS_CUSTOMER_EMAIL_DOMAIN], c);
        uint64_t n = 1 + shape_gen_below(d->st[RS_CUSTOMER_EMAIL_NUMBER], c, 0, 998);
        char *s = take(out, first.len + last.len + dom.len + 8);
        char *p = put_lower(s, first.s, first.len);
        *p++ = '.';
        p = put_lower(p, last.s, last.len);
        p = shape_json_u64(p, n);
        *p++ = '@';
        p = put(p, dom.s, dom.len);
        set_str(&v[3], s, (size_t)(p - s));
    }
    set_lstr(&v[4], GENDER[shape_gen_alias_draw(&d->gender, d->st[RS_CUSTOMER_GENDER], c, 0)]);
    set_lstr(&v[5], LOYALTY[shape_gen_alias_draw(&d->loyalty, d->st[RS_CUSTOMER_LOYALTY], c, 0)]);
    set_ts(&v[6], d->timeline ? tl_signup(d, c) : customer_signup(d, c, customer_order_count(d, c)));
    set_lstr(&v[7], ACTIVE[shape_gen_alias_draw(&d->active, d->st[RS_CUSTOMER_ACTIVE], c, 0)]);
}

static void row_address(shape_retail_table *t, uint64_t a, shape_gen_row *out)
{
    const shape_retail *d = t->d;
    shape_gen_value *v = out->values;
    shape_gen_alloc_run run;
    shape_gen_alloc_child(&d->addresses, a, &run);
    uint64_t rank = run.rank + (a - run.child) / run.k;
    uint64_t index = (a - run.child) % run.k; /* among its customer's addresses */
    set_i64(&v[0], (int64_t)a + 1);
    set_i64(&v[1], (int64_t)(d->timeline ? retail_chunk_id(&d->address_chunks, rank)
                                         : shape_gen_perm_apply(&d->address_owner, rank)) + 1);
    set_lstr(&v[2], ADDRESS_TYPE[shape_gen_alias_draw(&d->address_type, d->st[RS_ADDRESS_TYPE], a, 0)]);
    shape_retail_str name = pick(&shape_retail_street_names, d->st[RS_ADDRESS_STREET_NAME], a);
    shape_retail_str suffix = pick(&shape_retail_street_suffixes, d->st[RS_ADDRESS_STREET_SUFFIX], a);
    char *s = take(out, 6 + name.len + suffix.len);
    char *p = shape_json_u64(s, 100 + shape_gen_below(d->st[RS_ADDRESS_STREET_NUMBER], a, 0, 9899));
    *p++ = ' ';
    p = put(p, name.s, name.len);
    *p++ = ' ';
    p = put(p, suffix.s, suffix.len);
    set_str(&v[3], s, (size_t)(p - s));
    const shape_retail_place *pl =
        &shape_retail_places[shape_gen_below(d->st[RS_ADDRESS_PLACE], a, 0, shape_retail_place_count)];
    set_place(out, 4, 5, 6, pl);
    set_f64(&v[7], (double)pl->lat_e4 / 1e4);
    set_f64(&v[8], (double)pl->lng_e4 / 1e4);
    set_bool(&v[9], index == 0);
}

static void row_category(shape_retail_table *t, uint64_t r, shape_gen_row *out)
{
    const shape_retail *d = t->d;
    shape_gen_value *v = out->values;
    /* 8 roots, then the other rows split evenly over levels 2 and 3 (level
     * 2 takes an odd one); each non-root's parent is a uniformly drawn row
     * of the level above. */
    uint64_t n = d->rows[SHAPE_RETAIL_PRODUCT_CATEGORY];
    uint64_t roots = n < RETAIL_CATEGORY_ROOTS ? n : RETAIL_CATEGORY_ROOTS;
    uint64_t rest = n - roots;
    uint64_t l2 = rest - rest / 2;
    set_i64(&v[0], (int64_t)r + 1);
    set_lstr(&v[1], shape_retail_categories.items[shape_gen_perm_apply(&d->category_perm, r)]);
    if (r < roots) {
        set_null(&v[2]);
        set_i64(&v[3], 1);
    } else if (r < roots + l2) {
        set_i64(&v[2], 1 + (int64_t)shape_gen_below(d->st[RS_CATEGORY_PARENT], r, 0, roots));
        set_i64(&v[3], 2);
    } else {
        set_i64(&v[2], 1 + (int64_t)(roots + shape_gen_below(d->st[RS_CATEGORY_PARENT], r, 0, l2)));
        set_i64(&v[3], 3);
    }
}

static void row_product(shape_retail_table *t, uint64_t p, shape_gen_row *out)
{
    const shape_retail *d = t->d;
    shape_gen_value *v = out->values;
    set_i64(&v[0], (int64_t)p + 1);
    set_i64(&v[1], 1 + (int64_t)shape_gen_below(d->st[RS_PRODUCT_CATEGORY], p, 0,
                                                d->rows[SHAPE_RETAIL_PRODUCT_CATEGORY]));
    shape_retail_str q = pick(&shape_retail_product_qualifiers, d->st[RS_PRODUCT_QUALIFIER], p);
    shape_retail_str it = pick(&shape_retail_product_items, d->st[RS_PRODUCT_ITEM], p);
    char *s = take(out, q.len + 1 + it.len);
    char *e = put(s, q.s, q.len);
    *e++ = ' ';
    e = put(e, it.s, it.len);
    set_str(&v[2], s, (size_t)(e - s));
    double price = product_price(t, p);
    set_f64(&v[3], price);
    set_lstr(&v[4], PRODUCT_STATUS[shape_gen_alias_draw(&d->product_status, d->st[RS_PRODUCT_STATUS], p, 0)]);
    double u = shape_gen_unit(d->st[RS_PRODUCT_COST], p, 0);
    double cost = shape_gen_round_scale(price * (0.3 + 0.4 * u), 2);
    if (!(cost < price)) /* the reference's repair of cost_less_than_price */
        cost = shape_gen_round_scale(price * (0.3 + 0.65 * shape_gen_unit(d->st[RS_PRODUCT_COST_FIX], p, 0)), 2);
    if (!(cost < price)) cost = shape_gen_round_scale(price - 0.01, 2);
    set_f64(&v[5], cost);
}

static void row_promotion(shape_retail_table *t, uint64_t p, shape_gen_row *out)
{
    const shape_retail *d = t->d;
    shape_gen_value *v = out->values;
    set_i64(&v[0], (int64_t)p + 1);
    set_lstr(&v[1], pick(&shape_retail_promo_names, d->st[RS_PROMO_NAME], p));
    set_lstr(&v[2], PROMO_TYPE[shape_gen_alias_draw(&d->promo_type, d->st[RS_PROMO_TYPE], p, 0)]);
    set_f64(&v[3], promotion_discount(d, p));
    int64_t start = shape_gen_instant_us(d->st[RS_PROMO_START], p, 0, d->range_start_ns, d->range_end_ns);
    set_ts(&v[4], start);
    int64_t days = 3 + (int64_t)shape_gen_below(d->st[RS_PROMO_DAYS], p, 0, 28); /* 3..30 */
    set_ts(&v[5], start + days * SHAPE_GEN_NS_PER_DAY);
}

static void row_store(shape_retail_table *t, uint64_t s, shape_gen_row *out)
{
    const shape_retail *d = t->d;
    shape_gen_value *v = out->values;
    set_i64(&v[0], (int64_t)s + 1);
    char *name = take(out, 32);
    int n = snprintf(name, 32, "Store #%04llu", (unsigned long long)(s + 1));
    set_str(&v[1], name, (size_t)n);
    set_lstr(&v[2], STORE_TYPE[shape_gen_alias_draw(&d->store_type, d->st[RS_STORE_TYPE], s, 0)]);
    /* City and state from one real place, so they agree (the reference
     * draws them independently from two pools). */
    set_place(out, 3, 4, -1,
              &shape_retail_places[shape_gen_below(d->st[RS_STORE_PLACE], s, 0, shape_retail_place_count)]);
}

static void row_order(shape_retail_table *t, uint64_t o, shape_gen_row *out)
{
    const shape_retail *d = t->d;
    shape_gen_value *v = out->values;
    uint32_t k_orders = 0;
    int64_t date = d->timeline ? tl_order_date(d, o) : 0;
    uint64_t customer = d->timeline ? tl_order_customer(d, o, date) : order_customer(d, o, &k_orders);
    set_i64(&v[0], (int64_t)o + 1);
    set_i64(&v[1], (int64_t)customer + 1);
    uint64_t store_rank = shape_gen_zipf_draw(&d->store_zipf, d->st[RS_ORDER_STORE_ZIPF], o, 0);
    uint64_t store = store_rank <= d->store_zipf.head
                         ? d->store_of_rank[store_rank - 1]
                         : shape_gen_perm_apply(&d->store_perm, store_rank - 1);
    set_i64(&v[2], (int64_t)store + 1);
    uint64_t first;
    uint32_t k;
    customer_addresses(d, customer, &first, &k);
    if (k == 0)
        set_null(&v[3]);
    else
        set_i64(&v[3], (int64_t)(first + shape_gen_below(d->st[RS_ORDER_SHIP_PICK], o, 0, k)) + 1);
    int64_t promo = order_promotion(d, o);
    if (promo < 0)
        set_null(&v[4]);
    else
        set_i64(&v[4], promo + 1);
    set_ts(&v[5], d->timeline ? date : order_date(d, o, customer, k_orders));
    set_lstr(&v[6], ORDER_STATUS[shape_gen_alias_draw(&d->order_status, d->st[RS_ORDER_STATUS], o, 0)]);
    set_f64(&v[7], (double)order_total_cents(t, o, promo) / 100.0);
}

static void row_order_line(shape_retail_table *t, uint64_t j, shape_gen_row *out)
{
    const shape_retail *d = t->d;
    shape_gen_value *v = out->values;
    shape_gen_alloc_run *run = &t->run;
    if (!t->have_run || j < run->child || j - run->child >= run->len * run->k) {
        shape_gen_alloc_child(&d->lines, j, run);
        t->have_run = 1;
    }
    uint64_t rank = run->rank + (j - run->child) / run->k;
    uint64_t o = d->timeline ? retail_chunk_id(&d->line_chunks, rank) : shape_gen_perm_apply(&d->line_owner, rank);
    if (o != t->line_order) {
        t->line_order = o;
        t->line_promo = order_promotion(d, o);
        t->line_discount = order_discount(d, t->line_promo);
    }
    uint64_t product = line_product(d, j);
    int64_t qty = line_quantity(d, j);
    double price = product_price(t, product);
    set_i64(&v[0], (int64_t)j + 1);
    set_i64(&v[1], (int64_t)o + 1);
    set_i64(&v[2], (int64_t)product + 1);
    set_f64(&v[3], (double)qty);
    if (t->line_promo < 0)
        set_null(&v[4]);
    else
        set_i64(&v[4], t->line_promo + 1);
    set_f64(&v[5], price);
    set_f64(&v[6], t->line_discount);
    set_f64(&v[7], (double)line_cents(qty, price, t->line_discount) / 100.0);
}

static void row_return(shape_retail_table *t, uint64_t r, shape_gen_row *out)
{
    const shape_retail *d = t->d;
    shape_gen_value *v = out->values;
    int64_t at = d->timeline ? tl_return_date(d, r) : 0;
    uint64_t o = d->timeline ? tl_return_order(d, r, at)
                             : shape_gen_below(d->st[RS_RETURN_ORDER], r, 0, d->rows[SHAPE_RETAIL_ORDER]);
    set_i64(&v[0], (int64_t)r + 1);
    set_i64(&v[1], (int64_t)o + 1);
    set_lstr(&v[2], RETURN_REASON[shape_gen_alias_draw(&d->return_reason, d->st[RS_RETURN_REASON], r, 0)]);
    int64_t total = order_total_cents(t, o, order_promotion(d, o));
    int64_t refund = shape_gen_cents(
        shape_gen_lognormal(d->st[RS_RETURN_REFUND], r, 0, 3.5, 1.0, 5.0, 2000.0));
    if (refund > total) /* the reference's repair of refund_leq_order_total */
        refund = shape_gen_cents((double)total / 100.0 *
                                 (0.3 + 0.7 * shape_gen_unit(d->st[RS_RETURN_REFUND_FIX], r, 0)));
    if (refund > total) refund = total;
    set_f64(&v[3], (double)refund / 100.0);
    if (d->timeline) {
        set_ts(&v[4], at);
        return;
    }
    uint32_t k_orders;
    uint64_t customer = order_customer(d, o, &k_orders);
    /* whole days ~ exp(Normal(2.0, 0.8)) clipped to [1, 90]: always later */
    set_ts(&v[4], shape_gen_add_lognormal_days(d->st[RS_RETURN_DAYS], r, 0,
                                               order_date(d, o, customer, k_orders), 2.0, 0.8, 1, 90));
}

int shape_retail_fill_row(shape_retail_table *t, uint64_t row, shape_gen_row *out)
{
    out->scratch_used = 0;
    out->ncols = shape_retail_columns(t->id, NULL);
    switch (t->id) {
    case SHAPE_RETAIL_CUSTOMER: row_customer(t, row, out); break;
    case SHAPE_RETAIL_ADDRESS: row_address(t, row, out); break;
    case SHAPE_RETAIL_PRODUCT_CATEGORY: row_category(t, row, out); break;
    case SHAPE_RETAIL_PRODUCT: row_product(t, row, out); break;
    case SHAPE_RETAIL_PROMOTION: row_promotion(t, row, out); break;
    case SHAPE_RETAIL_STORE: row_store(t, row, out); break;
    case SHAPE_RETAIL_ORDER: row_order(t, row, out); break;
    case SHAPE_RETAIL_ORDER_LINE: row_order_line(t, row, out); break;
    case SHAPE_RETAIL_RETURN: row_return(t, row, out); break;
    default: return SHAPE_EINTERNAL;
    }
    return SHAPE_OK;
}

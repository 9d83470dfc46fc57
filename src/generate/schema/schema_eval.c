/* schema_eval.c — one row of one table of a loaded generation schema.
 *
 * Why: every value must be a pure function of (seed, table, column, row) so
 * any position of the stream is generated on its own, in bounded memory,
 * the same on every run. Columns that read other rows — a foreign key's
 * target key, a lookup, a derived date, a computed total over children —
 * recompute those rows here rather than read stored tables.
 * How: columns are evaluated in the load's group order into a shape_gen_row;
 * a read of another row pushes a frame (its own row buffer) on the context's
 * stack, evaluates that row's columns up to the one asked for, and copies
 * the value back; a leaf column (made from its row number alone: a price, a
 * label) is drawn, or taken from a small per-column value cache, without a
 * frame. Foreign keys whose children are counted (a computed total,
 * first_per_parent, max_per_parent) use a stateless allocation
 * (gen_alloc.c): child row → parent rank → parent row through a keyed
 * permutation, and back, so a parent finds exactly its children and a total
 * equals the sum over them by construction; consecutive children reuse the
 * last run and parent row (sc_alloc_memo), which changes no value.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "shape/json_write.h"
#include "../data/gen_data.h"
#include "schema_internal.h"

static int eval_mask(sc_ctx *ctx, sc_frame *f, uint32_t mask, shape_err *err);
static void convert(const sc_column *c, shape_gen_row *row, shape_gen_value *v);

static char *scratch(shape_gen_row *row, size_t n)
{
    if (row->scratch_used + n > SHAPE_GEN_SCRATCH_BYTES) return NULL;
    char *p = row->scratch + row->scratch_used;
    row->scratch_used += n;
    return p;
}

static void set_null(shape_gen_value *v) { memset(v, 0, sizeof *v); }

static void set_int(shape_gen_value *v, uint8_t kind, int64_t i)
{
    v->kind = kind;
    v->len = 0;
    v->v.i = i;
}

static void set_float(shape_gen_value *v, double f)
{
    v->kind = SHAPE_GEN_FLOAT64;
    v->len = 0;
    v->v.f = f;
}

static void set_text(shape_gen_value *v, const char *s, size_t len)
{
    v->kind = SHAPE_GEN_STRING;
    v->len = (uint32_t)len;
    v->v.s = s;
}

static double as_double(const shape_gen_value *v)
{
    switch (v->kind) {
    case SHAPE_GEN_FLOAT64: return v->v.f;
    case SHAPE_GEN_BOOL: return v->v.b;
    default: return (double)v->v.i;
    }
}

/* Copy a string value into row's scratch (it may point into a frame that is
 * about to be reused). */
static void own_text(shape_gen_row *row, shape_gen_value *v)
{
    if (v->kind != SHAPE_GEN_STRING) return;
    char *p = scratch(row, v->len);
    if (!p) {
        v->len = 0;
        v->v.s = "";
        return;
    }
    memcpy(p, v->v.s, v->len);
    v->v.s = p;
}

static void seed_frame(sc_ctx *ctx, sc_frame *f, int c)
{
    f->row->values[c] = ctx->seed_val;
    own_text(f->row, &f->row->values[c]);
    f->prow[c] = ctx->seed_prow;
    f->valid |= 1u << c;
}

/* Column c of row r of table t, through a new frame; strings are copied
 * into `into`. *prow receives the frame's parent row of c (FK columns). */
static __attribute__((noinline)) int read_other_slow(sc_ctx *ctx, int t, uint64_t r, int c, shape_gen_row *into,
                                                     shape_gen_value *out, uint64_t *prow, shape_err *err)
{
    const sc_table *tab = &ctx->s->tables[t];
    int seed_col = ctx->seed_col1 - 1;
    ctx->seed_col1 = 0;
    if (r >= tab->rows[ctx->s->preset]) {
        set_null(out);
        return SHAPE_OK;
    }
    /* a sequence needs no frame */
    const sc_column *col = &tab->cols[c];
    if (col->strategy == SC_SEQUENCE && !(col->null_rate > 0)) {
        set_int(out, col->kind, (int64_t)((uint64_t)col->start + r * (uint64_t)col->step));
        if (col->kind == SHAPE_GEN_FLOAT64) set_float(out, (double)out->v.i);
        if (col->kind == SHAPE_GEN_STRING) {
            char *p = scratch(into, 24);
            int n = p ? (int)(shape_json_i64(p, out->v.i) - p) : 0;
            set_text(out, p ? p : "", (size_t)n);
        }
        return SHAPE_OK;
    }
    if (ctx->depth + 1 >= SC_MAX_DEPTH)
        return shape_err_set(err, SHAPE_EINVAL, "table '%s', column '%s': rows read each other more than %d deep",
                             tab->name, col->name, SC_MAX_DEPTH);
    /* a row being evaluated up the stack (a total's children reading their
     * parent back) already holds the columns it made */
    uint32_t bit = 1u << c;
    for (int d = 0; d <= ctx->depth; d++) {
        const sc_frame *a = &ctx->frames[d];
        if (a->table == t && a->r == r && (a->valid & bit)) {
            *out = a->row->values[c];
            if (prow) *prow = a->prow[c];
            own_text(into, out);
            return SHAPE_OK;
        }
    }
    if (!ctx->cache[t]) ctx->cache[t] = calloc(SC_CACHE_WAYS, sizeof *ctx->cache[t]);
    sc_cache_entry *e = ctx->cache[t] ? &ctx->cache[t][r % SC_CACHE_WAYS] : NULL;
    if (e && !e->busy && e->r == r && (e->valid & bit)) {
        *out = e->row.values[c];
        if (prow) *prow = e->prow[c];
        own_text(into, out);
        return SHAPE_OK;
    }
    ctx->depth++;
    sc_frame *f = &ctx->frames[ctx->depth];
    int rc;
    f->table = t;
    f->r = r;
    if (e && !e->busy) {
        if (e->r != r || !e->valid) {
            e->r = r;
            e->valid = 0;
            e->row.scratch_used = 0;
        }
        e->row.ncols = tab->ncols;
        f->row = &e->row;
        f->prow = e->prow;
        f->valid = e->valid;
        if (seed_col >= 0 && !(f->valid & (1u << seed_col))) seed_frame(ctx, f, seed_col);
        e->busy = 1;
        rc = eval_mask(ctx, f, col->need, err);
        e->busy = 0;
        e->valid = rc == SHAPE_OK ? f->valid : 0;
    } else {
        f->row = &ctx->stack[ctx->depth];
        f->prow = ctx->prows[ctx->depth];
        f->row->scratch_used = 0;
        f->row->ncols = tab->ncols;
        f->valid = 0;
        if (seed_col >= 0) seed_frame(ctx, f, seed_col);
        rc = eval_mask(ctx, f, col->need, err);
    }
    if (rc == SHAPE_OK) {
        *out = f->row->values[c];
        if (prow) *prow = f->prow[c];
        own_text(into, out);
    }
    f->valid = 0; /* the frame is finished: its slot may be reused */
    ctx->depth--;
    return rc;
}

static void post_leaf(const sc_column *c, uint64_t r, shape_gen_value *v);

/* A leaf column of row r (sc_column.leaf) through the column's value cache:
 * on a miss its step makes the value from r alone, then the conversion and
 * null draw eval_mask would apply. */
static __attribute__((noinline)) int read_leaf(sc_ctx *ctx, int t, uint64_t r, int c, shape_gen_row *into,
                                               shape_gen_value *out, uint64_t *prow, shape_err *err)
{
    const sc_table *tab = &ctx->s->tables[t];
    const sc_column *col = &tab->cols[c];
    ctx->seed_col1 = 0;
    if (prow) *prow = UINT64_MAX; /* not a foreign key */
    sc_leaf_entry *lc = ctx->leaf[t][c];
    if (!lc) lc = ctx->leaf[t][c] = calloc(SC_LEAF_WAYS, sizeof *lc);
    sc_leaf_entry *e = lc ? &lc[r % SC_LEAF_WAYS] : NULL;
    if (e && e->r1 == r + 1) {
        *out = e->v;
        own_text(into, out); /* as read_other_slow does (the same use of the row's scratch) */
        return SHAPE_OK;
    }
    /* a row up the stack that made it already (an order's promotion, read by
     * the lines of its total): the same value; not a text, which may live
     * in that frame's scratch */
    for (int d = ctx->depth; d >= 0; d--) {
        const sc_frame *a = &ctx->frames[d];
        if (a->table == t && a->r == r && (a->valid & (1u << c)) && a->row->values[c].kind != SHAPE_GEN_STRING) {
            *out = a->row->values[c];
            if (e) e->r1 = r + 1, e->v = *out;
            return SHAPE_OK;
        }
    }
    uint64_t fprow[SHAPE_GEN_MAX_COLUMNS]; /* a foreign key's step writes its parent row there */
    sc_frame f = {.row = into, .prow = fprow, .table = t, .r = r, .valid = 0};
    int rc = col->fn(ctx, &f, tab, c, out, err);
    if (rc != SHAPE_OK) return rc;
    post_leaf(col, r, out);
    if (e) e->r1 = r + 1, e->v = *out; /* a text is a label: it lives as long as the schema */
    own_text(into, out);
    return SHAPE_OK;
}

/* read_other_slow, with a plain sequence key (what most foreign keys and
 * lookups read) made in line: no call, no frame; and a leaf column through
 * its value cache (read_leaf). */
static inline int read_other(sc_ctx *ctx, int t, uint64_t r, int c, shape_gen_row *into, shape_gen_value *out,
                             uint64_t *prow, shape_err *err)
{
    const sc_table *tab = &ctx->s->tables[t];
    const sc_column *col = &tab->cols[c];
    if (col->plain_seq && r < tab->rows[ctx->s->preset]) {
        ctx->seed_col1 = 0;
        set_int(out, SHAPE_GEN_INT64, (int64_t)((uint64_t)col->start + r * (uint64_t)col->step));
        return SHAPE_OK;
    }
    /* (at the depth limit the slow path reports it, as before) */
    if (col->leaf && r < tab->rows[ctx->s->preset] && ctx->depth + 1 < SC_MAX_DEPTH) {
        const sc_leaf_entry *e = ctx->leaf[t][c] ? &ctx->leaf[t][c][r % SC_LEAF_WAYS] : NULL;
        if (e && e->r1 == r + 1) { /* read_leaf's hit, in line */
            ctx->seed_col1 = 0;
            if (prow) *prow = UINT64_MAX;
            *out = e->v;
            own_text(into, out);
            return SHAPE_OK;
        }
        return read_leaf(ctx, t, r, c, into, out, prow, err);
    }
    return read_other_slow(ctx, t, r, c, into, out, prow, err);
}

void sc_ctx_release(sc_ctx *ctx)
{
    for (int t = 0; t < SC_MAX_TABLES; t++) {
        free(ctx->cache[t]);
        ctx->cache[t] = NULL;
        for (int c = 0; c < SHAPE_GEN_MAX_COLUMNS; c++) {
            free(ctx->leaf[t][c]);
            ctx->leaf[t][c] = NULL;
        }
    }
}

/* ---- foreign keys --------------------------------------------------------------- */

static uint64_t alloc_parent_of(const sc_column *c, uint64_t child_row, uint64_t *sibling)
{
    uint64_t childnum = c->alloc_perm_children ? shape_gen_perm_invert(&c->child_perm, child_row) : child_row;
    uint64_t un = childnum / c->unit;
    if (un >= c->units) un = c->units - 1; /* the remainder belongs to the last unit */
    shape_gen_alloc_run run;
    shape_gen_alloc_child(c->alloc, un, &run);
    uint64_t off = un - run.child;
    uint64_t rank = run.rank + off / run.k;
    if (sibling) *sibling = (off % run.k) * c->unit + (childnum - un * c->unit);
    return shape_gen_perm_apply(&c->parent_perm, rank);
}

/* alloc_parent_of (no sibling) through ctx->amemo: the run is asked only
 * when the child's unit leaves the last one (runs partition the units, so
 * the run holding it is the one alloc_child returns), the permutation only
 * when the rank changes. */
static uint64_t alloc_parent_memo(sc_ctx *ctx, const sc_column *c, int ci, uint64_t child_row)
{
    uint64_t childnum = c->alloc_perm_children ? shape_gen_perm_invert(&c->child_perm, child_row) : child_row;
    uint64_t un = childnum / c->unit;
    if (un >= c->units) un = c->units - 1; /* the remainder belongs to the last unit */
    sc_alloc_memo *m = &ctx->amemo[(unsigned)ci % SC_ALLOC_MEMO];
    if (m->c != c || un < m->run.child || un - m->run.child >= m->run.len * m->run.k) {
        shape_gen_alloc_child(c->alloc, un, &m->run);
        m->c = c;
        m->rank = UINT64_MAX;
    }
    uint64_t rank = m->run.rank + (un - m->run.child) / m->run.k;
    if (rank != m->rank) {
        m->pr = shape_gen_perm_apply(&c->parent_perm, rank);
        m->rank = rank;
    }
    return m->pr;
}

/* The children of parent row p under FK c: the first child number and how
 * many (consecutive child numbers). */
static void alloc_children_of(const sc_column *c, uint64_t p, uint64_t *first, uint64_t *count)
{
    uint64_t rank = shape_gen_perm_invert(&c->parent_perm, p);
    shape_gen_alloc_run run;
    shape_gen_alloc_parent(c->alloc, rank, &run);
    uint64_t fu = run.child + (rank - run.rank) * run.k;
    *first = fu * c->unit;
    *count = (uint64_t)run.k * c->unit;
    if (run.k > 0 && fu + run.k == c->units) *count += c->nchildren - c->units * c->unit;
}

static uint64_t child_row_of(const sc_column *c, uint64_t childnum)
{
    return c->alloc_perm_children ? shape_gen_perm_apply(&c->child_perm, childnum) : childnum;
}

static int values_equal(const shape_gen_value *a, const shape_gen_value *b)
{
    if (a->kind == SHAPE_GEN_NULL || b->kind == SHAPE_GEN_NULL) return 0;
    if (a->kind == SHAPE_GEN_STRING || b->kind == SHAPE_GEN_STRING)
        return a->kind == b->kind && a->len == b->len && memcmp(a->v.s, b->v.s, a->len) == 0;
    return as_double(a) == as_double(b);
}

static int eval_fk(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    const sc_column *c = &t->cols[ci];
    const sc_table *p = &ctx->s->tables[c->ref_table];
    uint64_t n = p->rows[ctx->s->preset], r = f->r, pr;
    if (n == 0) {
        set_null(out);
        return SHAPE_OK;
    }
    if (c->alloc) {
        pr = alloc_parent_of(c, r, NULL);
    } else if (c->constrained_exact) {
        /* the parents whose key column holds this row's value are the
         * children of that grandparent row in the parent's allocation */
        const sc_column *theirs = &p->cols[c->constrained_pcol];
        uint64_t g = f->prow[c->constrained_by], c0 = 0, k = 0;
        if (g != UINT64_MAX && theirs->alloc) alloc_children_of(theirs, g, &c0, &k);
        if (k == 0) {
            f->prow[ci] = UINT64_MAX;
            if (c->nullable) return SHAPE_OK; /* out is null */
            pr = shape_gen_below(c->s, r, 0, n);
        } else
            pr = child_row_of(theirs, c0 + shape_gen_below(c->s, r, 0, k));
    } else if (c->constrained_by >= 0) {
        const shape_gen_value *want = &f->row->values[c->constrained_by];
        int found = 0;
        pr = 0;
        for (uint32_t i = 0; i < 64 && !found; i++) {
            pr = shape_gen_below(c->s, r, i, n);
            shape_gen_value pv;
            shape_gen_row tmp;
            tmp.scratch_used = 0;
            SHAPE_RETURN_NOT_OK(read_other(ctx, c->ref_table, pr, c->constrained_pcol, &tmp, &pv, NULL, err));
            found = values_equal(&pv, want);
        }
        if (!found && c->nullable) {
            set_null(out);
            f->prow[ci] = UINT64_MAX;
            return SHAPE_OK;
        }
    } else if (c->sample_m) {
        /* a fixed sample of distinct parents, taken in turn */
        pr = shape_gen_perm_apply(&c->sample_perm, r % c->sample_m);
    } else if (c->fan_shape) {
        /* top_share of the rows go to the top_fraction of the parents (by
         * rank; shuffle scatters the ranks over the parent rows) */
        uint64_t k;
        if (c->fan_shape == SC_FAN_TWO_TIER) {
            if (c->fan_top >= n || shape_gen_unit(c->s, r, 0) < c->fan_share) k = shape_gen_below(c->s, r, 1, c->fan_top < n ? c->fan_top : n);
            else k = c->fan_top + shape_gen_below(c->s, r, 1, n - c->fan_top);
        } else
            k = (uint64_t)((double)n * shape_gen_pow(shape_gen_unit(c->s, r, 0), c->fan_inv_beta));
        if (k >= n) k = n - 1;
        pr = c->fan_shuffle ? shape_gen_perm_apply(&c->fan_perm, k) : k;
    } else if (c->ref_table == f->table) {
        /* a self reference: a uniformly drawn earlier row, so the parent
         * exists and the chain of parents ends at row 0 (a root) */
        if (r == 0) return SHAPE_OK; /* out is null */
        pr = shape_gen_below(c->s, r, 0, r);
    } else if (c->fk_mode == SC_FK_ZIPF) {
        pr = shape_gen_zipf_draw(c->zipf, c->s, r, 0) - 1;
    } else if (c->fk_mode == SC_FK_PARETO) {
        pr = shape_gen_pareto_rank(c->s, r, 0, c->alpha, 0.995, n);
    } else {
        pr = shape_gen_below(c->s, r, 0, n);
    }
    if (pr >= n) pr = n - 1;
    f->prow[ci] = pr;
    return read_other(ctx, c->ref_table, pr, c->ref_col, f->row, out, NULL, err);
}

/* ---- the rest of the strategies --------------------------------------------------- */

static void json_value(json_t *v, shape_gen_value *out)
{
    if (json_is_string(v)) set_text(out, json_string_value(v), json_string_length(v));
    else if (json_is_integer(v)) set_int(out, SHAPE_GEN_INT64, json_integer_value(v));
    else if (json_is_number(v)) set_float(out, json_number_value(v));
    else if (json_is_boolean(v)) out->kind = SHAPE_GEN_BOOL, out->v.b = json_is_true(v);
    else set_null(out);
}

static void record_lookup(const sc_column *c, size_t i, shape_gen_value *out)
{
    json_t *rec = json_array_get(c->dataset->json, i);
    if (json_is_object(rec)) {
        json_t *v = c->field ? json_object_get(rec, c->field) : json_object_get(rec, "name");
        if (!v && !c->field) v = json_object_get(rec, "value");
        json_value(v, out);
    } else
        json_value(rec, out);
}

int sc_record_values(sc_column *c)
{
    c->rec_values = calloc(c->dataset->n ? c->dataset->n : 1, sizeof *c->rec_values);
    if (!c->rec_values) return -1;
    for (size_t i = 0; i < c->dataset->n; i++) record_lookup(c, i, &c->rec_values[i]);
    return 0;
}

static void record_value(const sc_column *c, size_t i, shape_gen_value *out) { *out = c->rec_values[i]; }

static int level_of(const sc_column *c, uint64_t r)
{
    for (int l = 0; l < c->levels; l++)
        if (r < c->level_end[l]) return l;
    return c->levels - 1;
}

static double draw_dist(const sc_column *c, uint64_t r)
{
    shape_gen_stream s = c->s;
    double u;
    switch (c->family) {
    case SC_D_UNIFORM: return c->p1 + shape_gen_unit(s, r, 0) * (c->p2 - c->p1);
    case SC_D_NORMAL: return c->p1 + c->p2 * shape_gen_normal(s, r, 0);
    case SC_D_LOGNORMAL: return shape_gen_lognormal(s, r, 0, c->p1, c->p2, -INFINITY, INFINITY);
    case SC_D_EXPONENTIAL: return -c->p1 * shape_gen_log1p(-shape_gen_unit(s, r, 0));
    case SC_D_PARETO:
        u = shape_gen_unit(s, r, 0);
        return c->p2 * shape_gen_pow(1.0 - u, -1.0 / c->p1);
    case SC_D_ZIPF: return (double)shape_gen_zipf_draw(c->zipf, s, r, 0);
    case SC_D_GEOMETRIC:
        if (c->gcdf) {
            u = shape_gen_unit(s, r, 0);
            int k = 1;
            while (k < c->gmax && !(u < c->gcdf[k])) k++;
            return (double)k;
        }
        return (double)shape_gen_geometric(s, r, 0, c->p1, 1, INT64_MAX);
    case SC_D_POISSON: return (double)shape_gen_poisson(s, r, 0, c->p1, 0, INT64_MAX);
    case SC_D_BERNOULLI: return shape_gen_unit(s, r, 0) < c->p1 ? 1.0 : 0.0;
    case SC_D_TRIANGULAR: return sc_triangular_inverse(c, shape_gen_unit(s, r, 0));
    }
    return 0;
}

/* empirical: u through the inverse of the piecewise-linear CDF (sc_empirical_inverse). */
static double draw_empirical(const sc_column *c, uint64_t r) { return sc_empirical_inverse(c, shape_gen_unit(c->s, r, 0)); }

/* scd2: the first day of version v of k (of the entity whose versions are
 * child numbers c0 ..): the range is cut into k slots of L days, version 0
 * starts with the range, version v >= 1 at its slot's start jittered by
 * up to (L - gap - 1) / 2 either way, so consecutive versions are always
 * more than min_gap_days apart. The jitter is drawn at the version's own
 * child row, so its valid_to (the next version's start) and the next
 * version's valid_from are the same draw. */
static int64_t scd_from(const sc_column *c, const sc_column *fk, uint64_t c0, uint64_t v, uint64_t k)
{
    if (v == 0) return c->scd_day0;
    double L = (double)c->scd_days / (double)k, amp = L - c->scd_gap - 1;
    if (amp < 0) amp = 0;
    double u = shape_gen_unit(c->scd_s, child_row_of(fk, c0 + v), 0);
    return c->scd_day0 + (int64_t)sc_floor((double)v * L + (u - 0.5) * amp + 0.5);
}

static int64_t add_days_draw(const sc_column *c, uint64_t r)
{
    if (c->days_fixed != INT32_MIN) return c->days_fixed;
    double d;
    if (c->days_family == 1) d = shape_gen_exp(c->d_mean + c->d_sigma * shape_gen_normal(c->s, r, 1));
    else if (c->days_family == 2) d = c->d_mean + c->d_sigma * shape_gen_normal(c->s, r, 1);
    else d = c->d_min + shape_gen_unit(c->s, r, 1) * (c->d_max - c->d_min);
    if (d < c->d_min) d = c->d_min;
    if (d > c->d_max) d = c->d_max;
    return (int64_t)sc_floor(d + 0.5);
}

static int eval_pattern(const sc_column *c, sc_frame *f, shape_gen_value *out)
{
    shape_gen_row *row = f->row;
    char *start = row->scratch + row->scratch_used, *end = row->scratch + SHAPE_GEN_SCRATCH_BYTES, *p = start;
    int random_i = 0;
    for (size_t i = 0; i < c->ntokens; i++) {
        const sc_token *t = &c->tokens[i];
        char num[32];
        const char *s = NULL;
        size_t len = 0;
        int pad = t->width < 0 ? 0 : t->width;
        if (t->kind == 0) s = t->text, len = t->len, pad = 0;
        else if (t->kind == 1) len = (size_t)(shape_json_u64(num, f->r + 1) - num), s = num;
        else if (t->kind == 2) {
            static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
            for (int k = 0; k < t->width && p < end; k++)
                *p++ = alnum[shape_gen_below(c->s, f->r, (uint32_t)(random_i * 4096 + k), 36)];
            random_i++;
            continue;
        } else {
            const shape_gen_value *v = &row->values[t->col];
            if (v->kind == SHAPE_GEN_NULL) {
                set_null(out);
                return SHAPE_OK;
            }
            if (v->kind == SHAPE_GEN_STRING) s = v->v.s, len = v->len;
            else if (v->kind == SHAPE_GEN_FLOAT64) len = (size_t)snprintf(num, sizeof num, "%.17g", v->v.f), s = num;
            else if (v->kind == SHAPE_GEN_BOOL) s = v->v.b ? "True" : "False", len = strlen(s);
            else len = (size_t)(shape_json_i64(num, v->v.i) - num), s = num;
        }
        for (size_t k = len; (int)k < pad && p < end; k++) *p++ = '0';
        if ((size_t)(end - p) < len) len = (size_t)(end - p);
        memcpy(p, s, len);
        p += len;
    }
    row->scratch_used += (size_t)(p - start);
    set_text(out, start, (size_t)(p - start));
    return SHAPE_OK;
}

/* The row of table src whose key column matches this row's `via` value: the
 * FK's parent row when via is a foreign key to that key, else the inverse
 * of a sequence key. 0 when there is none (a null or unmatched key). */
static int lookup_row(const sc_schema *s, const sc_table *t, const sc_frame *f, int via_col, int src, int key_col,
                      uint64_t *pr)
{
    const sc_column *via = &t->cols[via_col];
    const shape_gen_value *v = &f->row->values[via_col];
    if (v->kind == SHAPE_GEN_NULL) return 0;
    if (via->strategy == SC_FOREIGN_KEY && via->ref_table == src && via->ref_col == key_col) {
        *pr = f->prow[via_col];
        return *pr != UINT64_MAX;
    }
    const sc_column *key = &s->tables[src].cols[key_col];
    if (v->kind == SHAPE_GEN_STRING || key->step == 0) return 0;
    double x = as_double(v) - (double)key->start;
    if (sc_fmod(x, (double)key->step) != 0 || x / (double)key->step < 0) return 0;
    *pr = (uint64_t)(x / (double)key->step);
    return 1;
}

/* ---- native providers: the built-in pools (src/generate/data/) ---- */

static shape_retail_str pool_pick(const shape_retail_list *l, shape_gen_stream s, uint64_t r, uint32_t i)
{
    return l->items[shape_gen_below(s, r, i, l->n)];
}

/* The native providers' pieces, written without printf (a row's text is
 * made per row: snprintf cost ~1,000 instructions a call): bytes, and v in
 * decimal zero-padded to `width` digits (as "%0*u"). */
static char *put_bytes(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

static char *put_uint(char *p, uint64_t v, int width)
{
    char digits[20];
    size_t n = (size_t)(shape_json_u64(digits, v) - digits);
    for (size_t k = n; (int)k < width; k++) *p++ = '0';
    return put_bytes(p, digits, n);
}

static char *put_lower(char *p, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        if (ch == ' ' || ch == '\'') continue;
        *p++ = ch;
    }
    return p;
}

static void eval_native(const sc_column *c, sc_frame *f, shape_gen_value *out)
{
    shape_gen_row *row = f->row;
    uint64_t r = f->r;
    char *start = row->scratch + row->scratch_used;
    size_t room = SHAPE_GEN_SCRATCH_BYTES - row->scratch_used;
    if (room < 300) { /* the row's text is full: an empty text, never a null in a column that has none */
        set_text(out, "", 0);
        return;
    }
    char *p = start;
    shape_retail_str a, b;
    const shape_retail_place *pl;
    switch (c->provider) {
    case SC_P_FIRST_NAME: a = pool_pick(&shape_retail_first_names, c->s, r, 0); set_text(out, a.s, a.len); return;
    case SC_P_LAST_NAME: a = pool_pick(&shape_retail_last_names, c->s, r, 0); set_text(out, a.s, a.len); return;
    case SC_P_CITY:
        pl = &shape_retail_places[shape_gen_below(c->s, r, 0, shape_retail_place_count)];
        set_text(out, shape_retail_city_blob + pl->city_off, pl->city_len);
        return;
    case SC_P_STATE: set_text(out, shape_retail_state_codes + 2 * shape_gen_below(c->s, r, 0, shape_retail_state_count), 2); return;
    case SC_P_NAME:
        a = pool_pick(&shape_retail_first_names, c->s, r, 0);
        b = pool_pick(&shape_retail_last_names, c->s, r, 1);
        p = put_bytes(p, a.s, a.len);
        *p++ = ' ';
        p = put_bytes(p, b.s, b.len);
        break;
    case SC_P_EMAIL: {
        const shape_gen_value *fv = c->first_col >= 0 ? &row->values[c->first_col] : NULL;
        const shape_gen_value *lv = c->last_col >= 0 ? &row->values[c->last_col] : NULL;
        a = fv && fv->kind == SHAPE_GEN_STRING ? (shape_retail_str){fv->v.s, fv->len} : pool_pick(&shape_retail_first_names, c->s, r, 0);
        b = lv && lv->kind == SHAPE_GEN_STRING ? (shape_retail_str){lv->v.s, lv->len} : pool_pick(&shape_retail_last_names, c->s, r, 1);
        shape_retail_str dom = pool_pick(&shape_retail_email_domains, c->s, r, 2);
        if (a.len > 100) a.len = 100;
        if (b.len > 100) b.len = 100;
        p = put_lower(p, a.s, a.len);
        *p++ = '.';
        p = put_lower(p, b.s, b.len);
        p = put_uint(p, 1 + shape_gen_below(c->s, r, 3, 998), 0);
        *p++ = '@';
        memcpy(p, dom.s, dom.len);
        p += dom.len;
        break;
    }
    case SC_P_PHONE:
        p = put_uint(p, 201 + shape_gen_below(c->s, r, 0, 789), 3);
        p = put_bytes(p, "-555-01", 7);
        p = put_uint(p, shape_gen_below(c->s, r, 1, 100), 2);
        break;
    case SC_P_STREET:
        a = pool_pick(&shape_retail_street_names, c->s, r, 1);
        b = pool_pick(&shape_retail_street_suffixes, c->s, r, 2);
        p = put_uint(p, 100 + shape_gen_below(c->s, r, 0, 9899), 0);
        *p++ = ' ';
        p = put_bytes(p, a.s, a.len);
        *p++ = ' ';
        p = put_bytes(p, b.s, b.len);
        break;
    case SC_P_POSTCODE:
    case SC_P_ZIP4:
        pl = &shape_retail_places[shape_gen_below(c->s, r, 0, shape_retail_place_count)];
        p = put_uint(p, pl->zip, 5);
        if (c->provider == SC_P_ZIP4) {
            *p++ = '-';
            p = put_uint(p, shape_gen_below(c->s, r, 1, 10000), 4);
        }
        break;
    case SC_P_IPV4: {
        uint64_t x = shape_gen_u64(c->s, r, 0);
        p = put_bytes(p, "10.", 3);
        p = put_uint(p, x >> 8 & 255, 0);
        *p++ = '.';
        p = put_uint(p, x >> 16 & 255, 0);
        *p++ = '.';
        p = put_uint(p, 1 + (x >> 24) % 254, 0);
        break;
    }
    case SC_P_URI:
    case SC_P_WORD:
        a = pool_pick(&shape_retail_product_items, c->s, r, 0);
        if (c->provider == SC_P_URI) p = put_bytes(p, "https://www.example.com/", 24);
        p = put_lower(p, a.s, a.len);
        break;
    case SC_P_COMPANY:
        a = pool_pick(&shape_retail_last_names, c->s, r, 0);
        b = pool_pick(&shape_retail_last_names, c->s, r, 1);
        p = put_bytes(p, a.s, a.len);
        p = put_bytes(p, " & ", 3);
        p = put_bytes(p, b.s, b.len);
        *p++ = ' ';
        {
            const char *suffix = (const char *const[]){"LLC", "Inc", "Group", "Partners"}[shape_gen_below(c->s, r, 2, 4)];
            p = put_bytes(p, suffix, strlen(suffix));
        }
        break;
    case SC_P_SSN:
        *p++ = '9';
        p = put_uint(p, shape_gen_below(c->s, r, 0, 100), 2);
        *p++ = '-';
        p = put_uint(p, 1 + shape_gen_below(c->s, r, 1, 99), 2);
        *p++ = '-';
        p = put_uint(p, 1 + shape_gen_below(c->s, r, 2, 9999), 4);
        break;
    case SC_P_DIGITS:
    case SC_P_PYSTR: {
        static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        for (int k = 0; k < c->width; k++)
            *p++ = c->provider == SC_P_DIGITS ? (char)('0' + shape_gen_below(c->s, r, (uint32_t)k, 10))
                                               : alnum[shape_gen_below(c->s, r, (uint32_t)k, 52)];
        break;
    }
    }
    row->scratch_used += (size_t)(p - start);
    set_text(out, start, (size_t)(p - start));
}

/* The float total eval_computed makes from the sum `fsum`, then the
 * conversion eval_one would apply (post_leaf's first step): monotone in
 * fsum, as rounding is. */
static double sum_total(const sc_column *c, double fsum)
{
    shape_gen_value v;
    set_float(&v, shape_gen_round_scale(fsum, 2));
    if ((c->post & SC_POST_CONVERT) && v.kind != c->conv_keep) convert(c, NULL, &v);
    return v.v.f;
}

/* A computed total over the children of row r (see sc_column.child_same).
 * With `held` (a sum_bound rule, see sc_repair): stops at the first child
 * whose partial total keeps "x < total" (op 0) or "x <= total" (op 1) and
 * sets *held; else *held stays 0 and `out` is the whole total. */
static inline __attribute__((always_inline)) int eval_computed_to(sc_ctx *ctx, const sc_table *t, const sc_column *c,
                                                                  uint64_t r, shape_gen_value *out, int *held, int op,
                                                                  double bound, shape_err *err)
{
    const sc_schema *s = ctx->s;
    char sbuf[SHAPE_GEN_SCRATCH_BYTES];
    const sc_table *ch = &s->tables[c->child_table];
    const sc_column *fk = &ch->cols[c->child_fk];
    uint64_t c0 = 0, k = 0;
    if (fk->alloc) alloc_children_of(fk, r, &c0, &k);
    if (c->rule == SC_COUNT) {
        set_int(out, SHAPE_GEN_INT64, (int64_t)k);
        return SHAPE_OK;
    }
    int isint = c->natural == SHAPE_GEN_INT64;
    int64_t isum = 0, imin = 0, imax = 0;
    double fsum = 0, fmin = 0, fmax = 0;
    uint64_t seen = 0;
    /* The children are made in one frame of their own, one after
     * another. The first gets this row's key (not recomputed through
     * the allocation); the columns that hold the same value in every
     * child (child_same: the key and what is a function of it only, as
     * a lookup into this row) are made for the first child and handed
     * to the rest. */
    if (k == 0) goto total;
    if (ctx->depth + 1 >= SC_MAX_DEPTH)
        return shape_err_set(err, SHAPE_EINVAL, "table '%s', column '%s': rows read each other more than %d deep",
                             t->name, c->name, SC_MAX_DEPTH);
    uint32_t want = ch->cols[c->child_col].need, same = c->child_same & want;
    shape_gen_value key;
    if (same) {
        shape_gen_row ktmp;
        ktmp.scratch_used = 0;
        SHAPE_RETURN_NOT_OK(read_other(ctx, fk->ref_table, r, fk->ref_col, &ktmp, &key, NULL, err));
        convert(fk, &ktmp, &key);
        if (key.kind == SHAPE_GEN_STRING) { /* into the frame's text, below */
            memcpy(sbuf, key.v.s, key.len);
            key.v.s = sbuf;
        }
    }
    int depth = ++ctx->depth;
    sc_frame *cf = &ctx->frames[depth];
    cf->row = &ctx->stack[depth];
    cf->prow = ctx->prows[depth];
    cf->table = c->child_table;
    cf->row->ncols = ch->ncols;
    shape_gen_value keep[SHAPE_GEN_MAX_COLUMNS];
    uint64_t keep_prow[SHAPE_GEN_MAX_COLUMNS];
    uint32_t kept = 0;
    int kept_text = 0;
    int rc = SHAPE_OK;
    for (uint64_t j = 0; j < k && rc == SHAPE_OK; j++) {
        shape_gen_row *cr = cf->row;
        cf->r = child_row_of(fk, c0 + j);
        cr->scratch_used = 0;
        if (j == 0) {
            cf->valid = 0;
            if (same) {
                cr->values[c->child_fk] = key;
                own_text(cr, &cr->values[c->child_fk]);
                cf->prow[c->child_fk] = r;
                cf->valid = 1u << c->child_fk;
            }
        } else {
            /* Only the columns outside `kept` are written in this frame, and
             * deeper reads use frames of their own: the kept values and their
             * parent rows are still in place unless one is a text, whose bytes
             * lived in the scratch just reset. */
            cf->valid = kept;
            for (uint32_t m = kept_text ? kept : 0; m; m &= m - 1) {
                int ci2 = __builtin_ctz(m);
                cr->values[ci2] = keep[ci2];
                cf->prow[ci2] = keep_prow[ci2];
                own_text(cr, &cr->values[ci2]);
            }
        }
        rc = eval_mask(ctx, cf, want, err);
        if (rc != SHAPE_OK) break;
        if (j == 0 && same && k > 1) {
            kept = same & cf->valid;
            size_t used = 0;
            for (uint32_t m = kept; m; m &= m - 1) {
                int ci2 = __builtin_ctz(m);
                keep[ci2] = cr->values[ci2];
                keep_prow[ci2] = cf->prow[ci2];
                if (keep[ci2].kind == SHAPE_GEN_STRING) { /* the frame's text is reused: keep a copy */
                    kept_text = 1;
                    if (used + keep[ci2].len > sizeof sbuf) {
                        kept &= ~(1u << ci2);
                        continue;
                    }
                    memcpy(sbuf + used, keep[ci2].v.s, keep[ci2].len);
                    keep[ci2].v.s = sbuf + used;
                    used += keep[ci2].len;
                }
            }
        }
        const shape_gen_value *v = &cr->values[c->child_col];
        if (v->kind == SHAPE_GEN_NULL) continue;
        double x = as_double(v);
        int64_t xi = v->kind == SHAPE_GEN_INT64 ? v->v.i : (int64_t)x;
        if (!seen || x < fmin) fmin = x, imin = xi;
        if (!seen || x > fmax) fmax = x, imax = xi;
        fsum += x;
        isum += xi;
        seen++;
        if (held) {
            double tot = sum_total(c, fsum);
            if (op == 0 ? bound < tot : bound <= tot) {
                *held = 1;
                break;
            }
        }
    }
    cf->valid = 0;
    ctx->depth--;
    if (rc != SHAPE_OK) return rc;
total:
    if (held && *held) return SHAPE_OK;
    if (c->rule == SC_AVG) set_float(out, seen ? shape_gen_round_scale(fsum / (double)seen, 2) : 0.0);
    else if (isint) set_int(out, SHAPE_GEN_INT64, c->rule == SC_SUM ? isum : c->rule == SC_MIN ? imin : imax);
    else set_float(out, shape_gen_round_scale(c->rule == SC_SUM ? fsum : c->rule == SC_MIN ? fmin : fmax, 2));
    return SHAPE_OK;
}

/* The two uses get a copy each: the plain total none of the bound's tests. */
static __attribute__((noinline)) int eval_computed(sc_ctx *ctx, const sc_table *t, const sc_column *c, uint64_t r,
                                                   shape_gen_value *out, shape_err *err)
{
    return eval_computed_to(ctx, t, c, r, out, NULL, 0, 0, err);
}

/* Rule rp (sum_bound) for the value x against the total of parent row pr:
 * *held when a part of the children already keeps it; else `out` is the
 * total as read_other_slow would read it (its step in a frame of its own at
 * the next depth, then conversion and null draw: the total has no rules). */
static __attribute__((noinline)) int total_keeps(sc_ctx *ctx, const sc_repair *rp, uint64_t pr, double x,
                                                 shape_gen_value *out, int *held, shape_err *err)
{
    const sc_table *pt = &ctx->s->tables[rp->right_table];
    const sc_column *tc = &pt->cols[rp->right_col];
    ctx->seed_col1 = 0;
    *held = 0;
    set_null(out);
    if (pr >= pt->rows[ctx->s->preset]) return SHAPE_OK;
    if (ctx->depth + 1 >= SC_MAX_DEPTH)
        return shape_err_set(err, SHAPE_EINVAL, "table '%s', column '%s': rows read each other more than %d deep",
                             pt->name, tc->name, SC_MAX_DEPTH);
    sc_frame *pf = &ctx->frames[++ctx->depth]; /* the parent's place on the stack, holding nothing */
    pf->table = rp->right_table;
    pf->r = pr;
    pf->valid = 0;
    int rc = eval_computed_to(ctx, pt, tc, pr, out, held, rp->op, x, err);
    ctx->depth--;
    if (rc == SHAPE_OK && !*held) post_leaf(tc, pr, out);
    return rc;
}

/* A temporal column. A rule "this >= (or >) the parent's instant" is kept by
 * drawing from the part of the model after it, so the repaired rows keep the
 * seasons and hours instead of piling up a day after the parent. *kept (when
 * asked) says whether the value already keeps every such rule as repair()
 * would check it, with the parent instants read here (repair() then has
 * nothing to change, and need not read them again). */
static int eval_temporal(sc_ctx *ctx, sc_frame *f, const sc_column *c, shape_gen_value *out, int *kept, shape_err *err)
{
    uint64_t r = f->r;
    int64_t nb = INT64_MIN;
    int64_t pi[SC_MAX_REPAIRS];
    unsigned read = 0; /* the rules whose parent instant was read into pi */
    int ok = 1;
    for (int k = 0; k < c->nrepairs; k++) {
        const sc_repair *rp = &c->repairs[k];
        if (!rp->cross_table || rp->op < 2 || f->prow[rp->via] == UINT64_MAX) continue;
        shape_gen_value pv;
        shape_gen_row tmp;
        tmp.scratch_used = 0;
        SHAPE_RETURN_NOT_OK(read_other(ctx, rp->right_table, f->prow[rp->via], rp->right_col, &tmp, &pv, NULL, err));
        if (pv.kind == SHAPE_GEN_TIMESTAMP_NS) {
            pi[k] = pv.v.i;
            read |= 1u << k;
            if (pv.v.i + (rp->op == 2) > nb) nb = pv.v.i + (rp->op == 2);
        } else if (pv.kind != SHAPE_GEN_NULL)
            ok = 0; /* repair() compares it otherwise: let it */
    }
    int64_t ns;
    if (c->seasonal)
        ns = shape_gen_seasonal_draw(&c->season, c->s, r, 0, nb);
    else if (nb > c->t_start_ns && nb < c->t_end_ns)
        ns = shape_gen_instant_us(c->s, r, 0, nb - nb % 1000 + (nb % 1000 != 0) * 1000, c->t_end_ns);
    else
        ns = shape_gen_instant_us(c->s, r, 0, c->t_start_ns, c->t_end_ns);
    if (ns >= c->t_end_ns) ns = c->t_end_ns - SHAPE_GEN_NS_PER_SEC;
    if (c->day_granularity) ns -= ((ns % SHAPE_GEN_NS_PER_DAY) + SHAPE_GEN_NS_PER_DAY) % SHAPE_GEN_NS_PER_DAY;
    set_int(out, SHAPE_GEN_TIMESTAMP_NS, ns);
    if (kept) {
        /* only asked when every rule is cross-table with op 2 or 3 (sc_plan_columns) */
        for (int k = 0; k < c->nrepairs && ok; k++)
            if (read & (1u << k)) ok = c->repairs[k].op == 2 ? ns > pi[k] : ns >= pi[k];
        *kept = ok;
    }
    return SHAPE_OK;
}

/* A conditional: a test of an earlier column of the row picks a constant or
 * an inline lookup (out is null on entry). */
static inline int eval_conditional(sc_ctx *ctx, sc_frame *f, const sc_table *t, const sc_column *c,
                                   shape_gen_value *out, shape_err *err)
{
    shape_gen_row *row = f->row;
    const sc_schema *s = ctx->s;
    const shape_gen_value *v = &row->values[c->src_col];
    int hit;
    if (c->cond_op <= 1) hit = (v->kind == SHAPE_GEN_NULL) == (c->cond_op == 0);
    else {
        int eq;
        if (v->kind == SHAPE_GEN_NULL) eq = -1;
        else if (c->cond_numeric && v->kind != SHAPE_GEN_STRING) eq = as_double(v) == c->cond_num;
        else if (v->kind == SHAPE_GEN_STRING) eq = v->len == strlen(c->cond_text) && memcmp(v->v.s, c->cond_text, v->len) == 0;
        else if (v->kind == SHAPE_GEN_BOOL) eq = strcasecmp(c->cond_text, v->v.b ? "true" : "false") == 0;
        else eq = 0;
        hit = eq < 0 ? 0 : c->cond_op == 2 ? eq : !eq;
    }
    int b = hit ? 0 : 1;
    if (c->branch_lookup[b]) {
        uint64_t pr;
        if (row->values[c->bl_via[b]].kind == SHAPE_GEN_NULL) {
            set_float(out, 0.0); /* the original: a null via gives 0 */
            return SHAPE_OK;
        }
        if (!lookup_row(s, t, f, c->bl_via[b], c->bl_table[b], c->bl_key[b], &pr)) return SHAPE_OK;
        SHAPE_RETURN_NOT_OK(read_other(ctx, c->bl_table[b], pr, c->bl_col[b], row, out, NULL, err));
        if (out->kind != SHAPE_GEN_NULL) set_float(out, as_double(out));
        return SHAPE_OK;
    }
    *out = c->branch[b];
    if (c->natural == SHAPE_GEN_STRING && out->kind != SHAPE_GEN_STRING && out->kind != SHAPE_GEN_NULL) {
        char *p = scratch(row, 32);
        int n = p ? snprintf(p, 32, "%.17g", as_double(out)) : 0;
        set_text(out, p ? p : "", (size_t)n);
    } else if (c->natural == SHAPE_GEN_FLOAT64 && out->kind != SHAPE_GEN_NULL)
        set_float(out, as_double(out));
    return SHAPE_OK;
}

static int eval_strategy(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    const sc_column *c = &t->cols[ci];
    uint64_t r = f->r;
    shape_gen_row *row = f->row;
    const sc_schema *s = ctx->s;
    set_null(out);
    switch (c->strategy) {
    case SC_NONE: return SHAPE_OK;
    case SC_SEQUENCE: /* wraps instead of overflowing (no undefined behaviour at any row) */
        set_int(out, SHAPE_GEN_INT64, (int64_t)((uint64_t)c->start + r * (uint64_t)c->step));
        return SHAPE_OK;
    case SC_UUID: {
        char *p = scratch(row, 36);
        if (!p) return SHAPE_OK;
        uint64_t a = shape_gen_u64(c->s, r, 0), b = shape_gen_u64(c->s, r, 1);
        a = (a & ~0xf000ULL) | 0x4000ULL;                 /* version 4 */
        b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; /* variant 10 */
        snprintf(p, 37, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(a >> 32),
                 (unsigned long long)((a >> 16) & 0xffff), (unsigned long long)(a & 0xffff),
                 (unsigned long long)(b >> 48), (unsigned long long)(b & 0xffffffffffffULL));
        set_text(out, p, 36);
        return SHAPE_OK;
    }
    case SC_CONSTANT: *out = c->constant; return SHAPE_OK;
    case SC_CHOICE:
    case SC_WEIGHTED_ENUM:
    case SC_LIFECYCLE: {
        uint32_t i = shape_gen_alias_draw(&c->alias, c->s, r, 0);
        if (c->natural == SHAPE_GEN_STRING) set_text(out, c->labels[i], c->label_len[i]);
        else if (c->natural == SHAPE_GEN_BOOL) out->kind = SHAPE_GEN_BOOL, out->v.b = c->label_num[i] != 0;
        else if (c->natural == SHAPE_GEN_INT64) set_int(out, SHAPE_GEN_INT64, (int64_t)c->label_num[i]);
        else set_float(out, c->label_num[i]);
        return SHAPE_OK;
    }
    case SC_PATTERN: return eval_pattern(c, f, out);
    case SC_NATIVE: eval_native(c, f, out); return SHAPE_OK;
    case SC_DISTRIBUTION: {
        if (c->copula) {
            sc_copula_eval(s, t, ci, r, out);
            return SHAPE_OK;
        }
        double v = draw_dist(c, r);
        if (v < c->lo) v = c->lo;
        if (v > c->hi) v = c->hi;
        set_float(out, v);
        return SHAPE_OK;
    }
    case SC_TEMPORAL: return eval_temporal(ctx, f, c, out, NULL, err);
    case SC_FOREIGN_KEY: return eval_fk(ctx, f, t, ci, out, err);
    case SC_LOOKUP: {
        uint64_t pr;
        if (!lookup_row(s, t, f, c->via, c->src_table, c->key_col, &pr)) return SHAPE_OK;
        return read_other(ctx, c->src_table, pr, c->src_col, row, out, NULL, err);
    }
    case SC_DERIVED: {
        if (c->src_table >= 0) {
            uint64_t pr = f->prow[c->via];
            if (pr == UINT64_MAX || row->values[c->via].kind == SHAPE_GEN_NULL) return SHAPE_OK;
            SHAPE_RETURN_NOT_OK(read_other(ctx, c->src_table, pr, c->src_col, row, out, NULL, err));
        } else
            *out = row->values[c->src_col];
        if (c->add_days && out->kind == SHAPE_GEN_TIMESTAMP_NS) {
            __int128 sum = (__int128)out->v.i + (__int128)add_days_draw(c, r) * SHAPE_GEN_NS_PER_DAY;
            out->v.i = sum > INT64_MAX ? INT64_MAX : sum < INT64_MIN ? INT64_MIN : (int64_t)sum;
        }
        return SHAPE_OK;
    }
    case SC_CORRELATED: {
        const shape_gen_value *v = &row->values[c->src_col];
        if (v->kind == SHAPE_GEN_NULL) return SHAPE_OK;
        double x = as_double(v), u = c->p1 + shape_gen_unit(c->s, r, 0) * (c->p2 - c->p1);
        double y = c->corr_op == 0 ? x * u : c->corr_op == 1 ? x + u : x - u;
        if (c->corr_op == 2 && y < 0) y = 0;
        set_float(out, y);
        return SHAPE_OK;
    }
    case SC_FORMULA: {
        double y;
        if (sc_expr_eval(&c->expr, row->values, &y) == 0 && !isnan(y)) set_float(out, y);
        return SHAPE_OK;
    }
    case SC_CONDITIONAL: return eval_conditional(ctx, f, t, c, out, err);
    case SC_FIRST_PER_PARENT: {
        const sc_column *fk = &t->cols[c->parent_column];
        int first;
        if (!fk->alloc) first = 1;
        else if (!fk->alloc_perm_children) {
            uint64_t sib;
            alloc_parent_of(fk, r, &sib);
            first = sib == 0;
        } else {
            uint64_t pr = alloc_parent_of(fk, r, NULL), c0, k;
            alloc_children_of(fk, pr, &c0, &k);
            uint64_t lowest = UINT64_MAX;
            for (uint64_t j = 0; j < k; j++) {
                uint64_t cr = child_row_of(fk, c0 + j);
                if (cr < lowest) lowest = cr;
            }
            first = lowest == r;
        }
        out->kind = SHAPE_GEN_BOOL;
        out->v.b = c->invert ? !first : first;
        return SHAPE_OK;
    }
    case SC_COMPUTED: return eval_computed(ctx, t, c, r, out, err);
    case SC_SELF_REFERENCING: {
        int l = level_of(c, r);
        if (l == 0) return SHAPE_OK;
        uint64_t lo = l >= 2 ? c->level_end[l - 2] : 0, hi = c->level_end[l - 1];
        if (hi <= lo) return SHAPE_OK;
        uint64_t pr = lo + shape_gen_below(c->s, r, 0, hi - lo);
        f->prow[ci] = pr;
        return read_other(ctx, f->table, pr, c->pk_column, row, out, NULL, err);
    }
    case SC_EMPIRICAL:
        if (c->copula) sc_copula_eval(s, t, ci, r, out);
        else set_float(out, draw_empirical(c, r));
        return SHAPE_OK;
    case SC_HIERARCHY:
    case SC_HIERARCHY_FIELD:
    case SC_BOOTSTRAP:
    case SC_ADDRESS: return sc_strat_eval(ctx, f, t, ci, out, err);
    case SC_CONDITIONAL_TABLE: {
        const shape_gen_value *v = &row->values[c->src_col];
        char num[40];
        const char *key = NULL;
        size_t len = 0;
        if (v->kind == SHAPE_GEN_STRING) key = v->v.s, len = v->len;
        else if (v->kind == SHAPE_GEN_BOOL) key = v->v.b ? "true" : "false", len = strlen(key);
        else if (v->kind == SHAPE_GEN_FLOAT64) len = (size_t)snprintf(num, sizeof num, "%.17g", v->v.f), key = num;
        else if (v->kind != SHAPE_GEN_NULL) len = (size_t)snprintf(num, sizeof num, "%lld", (long long)v->v.i), key = num;
        int ki = c->default_case;
        for (size_t i = 0; key && i < c->ncases; i++)
            if ((int)i != c->default_case && strlen(c->cases[i].name) == len && memcmp(c->cases[i].name, key, len) == 0) {
                ki = (int)i;
                break;
            }
        if (ki < 0) return SHAPE_OK; /* no case and no default: null */
        const sc_column *k = &c->cases[ki];
        uint32_t i = shape_gen_alias_draw(&k->alias, c->s, r, 0);
        if (c->natural == SHAPE_GEN_STRING) set_text(out, k->labels[i], k->label_len[i]);
        else set_float(out, k->label_num[i]);
        return SHAPE_OK;
    }
    case SC_COMPOSITE_FK_FIELD: {
        uint64_t pr = f->prow[c->via];
        if (pr == UINT64_MAX || row->values[c->via].kind == SHAPE_GEN_NULL) return SHAPE_OK;
        return read_other(ctx, c->src_table, pr, c->src_col, row, out, NULL, err);
    }
    case SC_SCD2: {
        const sc_column *fk = &t->cols[c->business_key];
        if (!fk->alloc) return SHAPE_OK;
        uint64_t v, c0, k;
        uint64_t pr = alloc_parent_of(fk, r, &v);
        alloc_children_of(fk, pr, &c0, &k);
        switch (c->scd_role) {
        case SC_SCD_VERSION: set_int(out, SHAPE_GEN_INT64, (int64_t)v + 1); break;
        case SC_SCD_CURRENT: out->kind = SHAPE_GEN_BOOL, out->v.b = v + 1 == k; break;
        case SC_SCD_FROM: set_int(out, SHAPE_GEN_TIMESTAMP_NS, scd_from(c, fk, c0, v, k) * SHAPE_GEN_NS_PER_DAY); break;
        default:
            if (v + 1 < k) set_int(out, SHAPE_GEN_TIMESTAMP_NS, scd_from(c, fk, c0, v + 1, k) * SHAPE_GEN_NS_PER_DAY);
            break;
        }
        return SHAPE_OK;
    }
    case SC_SELF_REF_FIELD: set_int(out, SHAPE_GEN_INT64, level_of(&t->cols[c->src_col], r) + 1); return SHAPE_OK;
    case SC_REFERENCE_DATA: record_value(c, (size_t)shape_gen_below(c->s, r, 0, c->dataset->n), out); return SHAPE_OK;
    case SC_RECORD_SAMPLE:
    case SC_RECORD_FIELD: {
        const sc_column *a = c->strategy == SC_RECORD_SAMPLE ? c : &t->cols[c->anchor];
        size_t i = a->unique ? (size_t)shape_gen_perm_apply(&a->record_perm, r) : (size_t)shape_gen_below(a->s, r, 0, a->dataset->n);
        record_value(c, i, out);
        return SHAPE_OK;
    }
    }
    return SHAPE_OK;
}

/* The natural value into the declared type, rounded to scale, cut to max_length. */
static void convert(const sc_column *c, shape_gen_row *row, shape_gen_value *v)
{
    if (v->kind == SHAPE_GEN_NULL) return;
    switch (c->kind) {
    case SHAPE_GEN_INT64:
        if (v->kind == SHAPE_GEN_FLOAT64) {
            double x = v->v.f;
            if (!isfinite(x) || sc_fabs(x) > 9.2e18) {
                set_null(v);
                return;
            }
            set_int(v, SHAPE_GEN_INT64, (int64_t)sc_floor(x + 0.5));
        } else if (v->kind == SHAPE_GEN_BOOL)
            set_int(v, SHAPE_GEN_INT64, v->v.b);
        break;
    case SHAPE_GEN_FLOAT64:
        if (v->kind != SHAPE_GEN_FLOAT64) set_float(v, as_double(v));
        if (c->scale >= 0 && isfinite(v->v.f) && sc_fabs(v->v.f) < 1e15) v->v.f = shape_gen_round_scale(v->v.f, c->scale);
        break;
    case SHAPE_GEN_BOOL:
        if (v->kind != SHAPE_GEN_BOOL) {
            int b = as_double(v) != 0;
            v->kind = SHAPE_GEN_BOOL;
            v->v.b = b;
        }
        break;
    case SHAPE_GEN_STRING:
        if (v->kind != SHAPE_GEN_STRING) {
            char *p = scratch(row, 40);
            int n = 0;
            if (p) {
                if (v->kind == SHAPE_GEN_FLOAT64) n = snprintf(p, 40, "%.17g", v->v.f);
                else if (v->kind == SHAPE_GEN_BOOL) n = snprintf(p, 40, "%s", v->v.b ? "true" : "false");
                else n = snprintf(p, 40, "%lld", (long long)v->v.i);
            }
            set_text(v, p ? p : "", (size_t)n);
        }
        if (c->max_length > 0 && v->len > (uint32_t)c->max_length) {
            uint32_t n = (uint32_t)c->max_length;
            while (n > 0 && ((unsigned char)v->v.s[n] & 0xc0) == 0x80) n--; /* never cut a UTF-8 sequence */
            v->len = n;
        }
        break;
    default: break;
    }
}

/* Keep the column's business rules (see sc_repair). */
static int repair(sc_ctx *ctx, sc_frame *f, const sc_column *c, int ci, shape_err *err)
{
    shape_gen_value *v = &f->row->values[ci];
    for (int k = 0; k < c->nrepairs && v->kind != SHAPE_GEN_NULL; k++) {
        const sc_repair *rp = &c->repairs[k];
        shape_gen_value rv;
        if (rp->cross_table) {
            uint64_t pr = f->prow[rp->via];
            if (pr == UINT64_MAX) continue;
            if (rp->sum_bound && v->kind != SHAPE_GEN_TIMESTAMP_NS) {
                int held;
                SHAPE_RETURN_NOT_OK(total_keeps(ctx, rp, pr, as_double(v), &rv, &held, err));
                if (held) continue;
            } else {
                shape_gen_row tmp;
                tmp.scratch_used = 0;
                SHAPE_RETURN_NOT_OK(read_other(ctx, rp->right_table, pr, rp->right_col, &tmp, &rv, NULL, err));
            }
        } else if (rp->right_col >= 0)
            rv = f->row->values[rp->right_col];
        else
            set_float(&rv, rp->right_num);
        if (rv.kind == SHAPE_GEN_NULL) continue;
        int ts = v->kind == SHAPE_GEN_TIMESTAMP_NS;
        int cmp = ts ? (v->v.i > rv.v.i) - (v->v.i < rv.v.i) : (as_double(v) > as_double(&rv)) - (as_double(v) < as_double(&rv));
        int ok = rp->op == 0 ? cmp < 0 : rp->op == 1 ? cmp <= 0 : rp->op == 2 ? cmp > 0 : rp->op == 3 ? cmp >= 0 : cmp == 0;
        if (ok) continue;
        if (rp->constraint) {
            sc_constraint_fix(c, rp, &rv, f->r, v);
            continue;
        }
        double u = shape_gen_unit(rp->s, f->r, 0);
        if (ts) {
            int64_t days = rp->cross_table ? 1 : 1 + (int64_t)(29 * u);
            __int128 x = (__int128)rv.v.i + (rp->op <= 1 ? -days : days) * (__int128)SHAPE_GEN_NS_PER_DAY;
            set_int(v, SHAPE_GEN_TIMESTAMP_NS, x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : (int64_t)x);
            continue;
        }
        double r = as_double(&rv), y;
        if (rp->cross_table) y = rp->op == 1 ? shape_gen_round_scale(r * (0.3 + 0.7 * u), 2) : r + 1.0;
        else y = rp->op == 0 ? shape_gen_round_scale(r * (0.30 + 0.65 * u), 2) : r * (1.05 + 0.95 * u);
        set_float(v, y);
        convert(c, f->row, v);
    }
    return SHAPE_OK;
}

/* A value that keeps every rule of a column whose rules compare with
 * numbers only (repair_const): repair() would change nothing. The same
 * comparisons as repair(); a timestamp, a null or a broken rule goes to it. */
static inline int repairs_hold(const sc_column *c, const shape_gen_value *v)
{
    if (v->kind == SHAPE_GEN_TIMESTAMP_NS || v->kind == SHAPE_GEN_NULL) return 0;
    double x = as_double(v);
    for (int k = 0; k < c->nrepairs; k++) {
        const sc_repair *rp = &c->repairs[k];
        double y = rp->right_num;
        int cmp = (x > y) - (x < y);
        int ok = rp->op == 0 ? cmp < 0 : rp->op == 1 ? cmp <= 0 : rp->op == 2 ? cmp > 0 : rp->op == 3 ? cmp >= 0 : cmp == 0;
        if (!ok) return 0;
    }
    return 1;
}

/* What eval_mask does after a leaf column's step (no repairs: see leaf). */
static void post_leaf(const sc_column *c, uint64_t r, shape_gen_value *v)
{
    unsigned post = c->post;
    if ((post & SC_POST_CONVERT) && v->kind != c->conv_keep) convert(c, NULL, v);
    if ((post & SC_POST_NULL) && shape_gen_chance(c->s_null, r, 0, c->null_rate)) set_null(v);
}

static int step_sequence(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err);
static int step_label(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err);
static int step_distribution(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err);
static inline __attribute__((always_inline)) int step_fk_drawn_in(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci,
                                                      shape_gen_value *out, shape_err *err);
static int step_fk_drawn(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err);
static inline __attribute__((always_inline)) int step_lookup_in(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci,
                                                      shape_gen_value *out, shape_err *err);
static int step_lookup(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err);
static inline __attribute__((always_inline)) int step_formula_in(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci,
                                                      shape_gen_value *out, shape_err *err);
static int step_formula(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err);
static int step_conditional(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out,
                            shape_err *err);

/* Column ci's step: the common ones called directly (sc_column.op, fixed
 * at load, so the compiler inlines them into the loops), the rest through
 * fn. */
static inline __attribute__((always_inline)) int run_step(sc_ctx *ctx, sc_frame *f, const sc_table *t,
                                                          const sc_column *c, int ci, shape_gen_value *v,
                                                          shape_err *err)
{
    switch (c->op) {
    case SC_OP_SEQ: return step_sequence(ctx, f, t, ci, v, err);
    case SC_OP_LABEL: return step_label(ctx, f, t, ci, v, err);
    case SC_OP_DIST: return step_distribution(ctx, f, t, ci, v, err);
    case SC_OP_FK_DRAWN: return step_fk_drawn_in(ctx, f, t, ci, v, err);
    case SC_OP_LOOKUP: return step_lookup_in(ctx, f, t, ci, v, err);
    case SC_OP_FORMULA: return step_formula_in(ctx, f, t, ci, v, err);
    case SC_OP_COND: return step_conditional(ctx, f, t, ci, v, err);
    default: return c->fn(ctx, f, t, ci, v, err);
    }
}

/* Column ci of the frame's row: its step, then what load left in `post`
 * (post_leaf is its first two steps for a leaf read without a frame: kept
 * apart, as folding them into one helper cost eval_one ~0.2 % by callgrind). */
static inline int eval_one(sc_ctx *ctx, sc_frame *f, const sc_table *t, const sc_column *c, int ci,
                           shape_gen_value *v, shape_err *err)
{
    f->prow[ci] = UINT64_MAX;
    int rc = run_step(ctx, f, t, c, ci, v, err);
    unsigned post = c->post;
    if (post && rc == SHAPE_OK) {
        if ((post & SC_POST_CONVERT) && v->kind != c->conv_keep) {
            /* convert()'s rounding of a float to the column's scale, in line (a line's total) */
            if (v->kind == SHAPE_GEN_FLOAT64 && c->kind == SHAPE_GEN_FLOAT64) {
                if (c->scale >= 0 && isfinite(v->v.f) && sc_fabs(v->v.f) < 1e15)
                    v->v.f = shape_gen_round_scale(v->v.f, c->scale);
            } else
                convert(c, f->row, v);
        }
        if ((post & SC_POST_NULL) && shape_gen_chance(c->s_null, f->r, 0, c->null_rate)) set_null(v);
        if ((post & SC_POST_REPAIR) &&
            !(c->repair_const == 1 ? repairs_hold(c, v) : c->repair_const == 2 && ctx->rules_kept))
            rc = repair(ctx, f, c, ci, err);
    }
    if (rc != SHAPE_OK) {
        f->valid = 0;
        return rc;
    }
    f->valid |= 1u << ci;
    return SHAPE_OK;
}

/* Make the columns of `mask` that the frame does not hold yet, in column
 * order (a column's needs come before it). */
static int eval_mask(sc_ctx *ctx, sc_frame *f, uint32_t mask, shape_err *err)
{
    const sc_table *t = &ctx->s->tables[f->table];
    uint32_t todo = mask & ~f->valid;
    while (todo) {
        int ci = __builtin_ctz(todo);
        todo &= todo - 1;
        SHAPE_RETURN_NOT_OK(eval_one(ctx, f, t, &t->cols[ci], ci, &f->row->values[ci], err));
    }
    return SHAPE_OK;
}

/* A whole row from an empty frame: every column in order, no mask walk. */
static int eval_all(sc_ctx *ctx, sc_frame *f, const sc_table *t, shape_err *err)
{
    const sc_column *c = t->cols;
    shape_gen_value *v = f->row->values;
    for (int ci = 0, n = (int)t->ncols; ci < n; ci++, c++, v++) SHAPE_RETURN_NOT_OK(eval_one(ctx, f, t, c, ci, v, err));
    return SHAPE_OK;
}

int sc_eval_row(sc_ctx *ctx, int t, uint64_t r, shape_gen_row *out, shape_err *err)
{
    const sc_table *tab = &ctx->s->tables[t];
    ctx->depth = 0;
    sc_frame *f = &ctx->frames[0];
    f->row = out;
    f->prow = ctx->prows[0];
    f->table = t;
    f->r = r;
    out->ncols = tab->ncols;
    out->scratch_used = 0;
    f->valid = 0;
    int rc = eval_all(ctx, f, tab, err);
    f->valid = 0;
    return rc;
}

/* ---- the compiled steps (sc_plan_columns) ------------------------------------------
 * Each makes exactly what eval_strategy makes for its variant (the same
 * draws in the same order, so every byte is the same), without the generic
 * switch; the conversion it never needs is left out of the column's `post`. */

static int step_sequence(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    (void)ctx, (void)err;
    const sc_column *c = &t->cols[ci];
    set_int(out, SHAPE_GEN_INT64, (int64_t)((uint64_t)c->start + f->r * (uint64_t)c->step));
    return SHAPE_OK;
}

static int step_label(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    (void)ctx, (void)err;
    const sc_column *c = &t->cols[ci];
    uint32_t i = shape_gen_alias_draw(&c->alias, c->s, f->r, 0);
    set_text(out, c->labels[i], c->label_len[i]);
    return SHAPE_OK;
}

static int step_distribution(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    (void)ctx, (void)err;
    const sc_column *c = &t->cols[ci];
    double v = draw_dist(c, f->r);
    if (v < c->lo) v = c->lo;
    if (v > c->hi) v = c->hi;
    set_float(out, v);
    return SHAPE_OK;
}

static int step_foreign_key(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    set_null(out);
    return eval_fk(ctx, f, t, ci, out, err);
}

/* A foreign key drawn by allocation, zipf, pareto or uniformly (fk_step 1..4):
 * eval_fk's branch for it, chosen at load. */
static inline __attribute__((always_inline)) int step_fk_drawn_in(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci,
                                                      shape_gen_value *out, shape_err *err)
{
    const sc_column *c = &t->cols[ci];
    uint64_t n = c->ref_rows, r = f->r, pr;
    if (n == 0) {
        set_null(out);
        return SHAPE_OK;
    }
    switch (c->fk_step) {
    case 1: pr = alloc_parent_memo(ctx, c, ci, r); break;
    case 2: pr = shape_gen_zipf_draw(c->zipf, c->s, r, 0) - 1; break;
    case 3: pr = shape_gen_pareto_rank(c->s, r, 0, c->alpha, 0.995, n); break;
    default: pr = shape_gen_below(c->s, r, 0, n); break;
    }
    if (pr >= n) pr = n - 1;
    f->prow[ci] = pr;
    const sc_column *key = c->ref_key;
    if (key->plain_seq) { /* read_other's first case (pr < n) */
        ctx->seed_col1 = 0;
        set_int(out, SHAPE_GEN_INT64, (int64_t)((uint64_t)key->start + pr * (uint64_t)key->step));
        return SHAPE_OK;
    }
    set_null(out);
    return read_other(ctx, c->ref_table, pr, c->ref_col, f->row, out, NULL, err);
}

static int step_fk_drawn(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    return step_fk_drawn_in(ctx, f, t, ci, out, err);
}

static inline __attribute__((always_inline)) int step_lookup_in(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci,
                                                      shape_gen_value *out, shape_err *err)
{
    const sc_column *c = &t->cols[ci];
    uint64_t pr;
    set_null(out);
    if (c->lookup_by_fk) { /* lookup_row's first case */
        if (f->row->values[c->via].kind == SHAPE_GEN_NULL || (pr = f->prow[c->via]) == UINT64_MAX) return SHAPE_OK;
    } else if (!lookup_row(ctx->s, t, f, c->via, c->src_table, c->key_col, &pr))
        return SHAPE_OK;
    return read_other(ctx, c->src_table, pr, c->src_col, f->row, out, NULL, err);
}

static int step_lookup(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    return step_lookup_in(ctx, f, t, ci, out, err);
}

/* A temporal column whose rules are all lower bounds from parents
 * (repair_const 2): it tells eval_mask, through ctx->rules_kept, whether
 * repair() can be skipped. */
static int step_temporal(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    return eval_temporal(ctx, f, &t->cols[ci], out, &ctx->rules_kept, err);
}

static inline __attribute__((always_inline)) int step_formula_in(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci,
                                                      shape_gen_value *out, shape_err *err)
{
    (void)ctx, (void)err;
    const sc_column *c = &t->cols[ci];
    double y;
    int null = c->expr.fused       ? sc_expr_fused(&c->expr, f->row->values, &y)
             : c->expr.has_regs ? sc_expr_eval_regs(&c->expr, f->row->values, &y) : sc_expr_eval(&c->expr, f->row->values, &y);
    if (null == 0 && !isnan(y)) set_float(out, y);
    else set_null(out);
    return SHAPE_OK;
}

static int step_formula(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    return step_formula_in(ctx, f, t, ci, out, err);
}

static int step_conditional(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out,
                            shape_err *err)
{
    set_null(out);
    return eval_conditional(ctx, f, t, &t->cols[ci], out, err);
}

void sc_plan_columns(sc_schema *s)
{
    for (size_t ti = 0; ti < s->ntables; ti++) /* first, as a foreign key's step reads its target's */
        for (size_t ci = 0; ci < s->tables[ti].ncols; ci++) {
            sc_column *c = &s->tables[ti].cols[ci];
            c->plain_seq = c->strategy == SC_SEQUENCE && !(c->null_rate > 0) && c->kind == SHAPE_GEN_INT64;
        }
    for (size_t ti = 0; ti < s->ntables; ti++) {
        sc_table *t = &s->tables[ti];
        for (size_t ci = 0; ci < t->ncols; ci++) {
            sc_column *c = &t->cols[ci];
            int out_kind = -1; /* the only kind fn makes besides null, or -1 */
            c->fn = eval_strategy;
            switch (c->strategy) {
            case SC_SEQUENCE: c->fn = step_sequence, out_kind = SHAPE_GEN_INT64; break;
            case SC_CHOICE:
            case SC_WEIGHTED_ENUM:
            case SC_LIFECYCLE:
                if (c->natural == SHAPE_GEN_STRING) c->fn = step_label, out_kind = SHAPE_GEN_STRING;
                break;
            case SC_DISTRIBUTION:
                if (!c->copula) c->fn = step_distribution, out_kind = SHAPE_GEN_FLOAT64;
                break;
            case SC_FOREIGN_KEY:
                c->fn = step_foreign_key;
                c->fk_step = c->alloc ? 1
                           : c->constrained_exact || c->constrained_by >= 0 || c->sample_m || c->fan_shape ||
                                     c->ref_table == (int)ti
                               ? 0
                           : c->fk_mode == SC_FK_ZIPF   ? 2
                           : c->fk_mode == SC_FK_PARETO ? 3
                                                        : 4;
                if (c->fk_step) c->fn = step_fk_drawn;
                c->ref_rows = s->tables[c->ref_table].rows[s->preset];
                c->ref_key = &s->tables[c->ref_table].cols[c->ref_col];
                break;
            case SC_LOOKUP: {
                c->fn = step_lookup;
                const sc_column *via = c->via >= 0 ? &t->cols[c->via] : NULL;
                c->lookup_by_fk = via && via->strategy == SC_FOREIGN_KEY && via->ref_table == c->src_table &&
                                  via->ref_col == c->key_col;
                break;
            }
            case SC_CONDITIONAL: c->fn = step_conditional; break;
            case SC_FORMULA: c->fn = step_formula, out_kind = SHAPE_GEN_FLOAT64; break;
            default: break;
            }
            /* convert() changes nothing when the value is already in the
             * declared type with no rounding and no length cut */
            int noop = out_kind == (int)c->kind && (out_kind != SHAPE_GEN_FLOAT64 || c->scale < 0) &&
                       (out_kind != SHAPE_GEN_STRING || c->max_length <= 0);
            /* ... nor, for any strategy, when the value it made has the
             * declared kind and that kind is neither rounded nor cut */
            int same_keeps = c->kind == SHAPE_GEN_FLOAT64 ? c->scale < 0 : c->kind == SHAPE_GEN_STRING ? c->max_length <= 0 : 1;
            c->repair_const = c->nrepairs > 0;
            for (int k = 0; k < c->nrepairs; k++)
                if (c->repairs[k].cross_table || c->repairs[k].right_col >= 0) c->repair_const = 0;
            if (c->strategy == SC_TEMPORAL && c->kind == SHAPE_GEN_TIMESTAMP_NS && c->nrepairs > 0) {
                int lower_bounds = 1; /* every rule "this > / >= a parent's instant" */
                for (int k = 0; k < c->nrepairs; k++)
                    if (!c->repairs[k].cross_table || (c->repairs[k].op != 2 && c->repairs[k].op != 3)) lower_bounds = 0;
                if (lower_bounds) c->fn = step_temporal, c->repair_const = 2;
            }
            c->op = c->fn == step_sequence       ? SC_OP_SEQ
                  : c->fn == step_label        ? SC_OP_LABEL
                  : c->fn == step_distribution ? SC_OP_DIST
                  : c->fn == step_fk_drawn     ? SC_OP_FK_DRAWN
                  : c->fn == step_lookup       ? SC_OP_LOOKUP
                  : c->fn == step_formula      ? SC_OP_FORMULA
                  : c->fn == step_conditional  ? SC_OP_COND
                                               : SC_OP_FN;
            c->post = (uint8_t)((noop ? 0 : SC_POST_CONVERT) | (c->null_rate > 0 ? SC_POST_NULL : 0) |
                                (c->nrepairs ? SC_POST_REPAIR : 0) | (same_keeps ? SC_POST_SAME_KEEPS : 0));
            c->conv_keep = same_keeps ? c->kind : 0xff; /* the one test the loop makes */
            /* a leaf: its step reads only the row number (a distribution, a
             * label, a constant, an instant with no rule to keep), and
             * convert() is never asked to make text (it would need the row's
             * scratch) */
            int by_row = c->fn == step_distribution || c->fn == step_label ||
                         (c->fn == step_fk_drawn && c->ref_key->plain_seq) || /* its draw, then the key in place */
                         (c->fn == eval_strategy &&
                          (c->strategy == SC_CHOICE || c->strategy == SC_WEIGHTED_ENUM || c->strategy == SC_LIFECYCLE ||
                           c->strategy == SC_CONSTANT || c->strategy == SC_TEMPORAL));
            c->leaf = by_row && c->need == 1u << ci && !c->nrepairs &&
                      !(c->kind == SHAPE_GEN_STRING && (c->post & SC_POST_CONVERT));
        }
    }
    for (size_t ti = 0; ti < s->ntables; ti++) /* last, as it reads the totals' post */
        for (size_t ci = 0; ci < s->tables[ti].ncols; ci++) {
            sc_column *c = &s->tables[ti].cols[ci];
            for (int k = 0; k < c->nrepairs; k++) {
                sc_repair *rp = &c->repairs[k];
                rp->sum_bound = 0;
                if (!rp->cross_table || rp->op > 1 || rp->right_col < 0) continue;
                const sc_column *tc = &s->tables[rp->right_table].cols[rp->right_col];
                if (tc->strategy != SC_COMPUTED || tc->rule != SC_SUM || tc->natural == SHAPE_GEN_INT64 ||
                    tc->kind != SHAPE_GEN_FLOAT64 || tc->nrepairs)
                    continue;
                const sc_column *cc = &s->tables[tc->child_table].cols[tc->child_col];
                if (cc->nrepairs == 0 || (cc->kind != SHAPE_GEN_FLOAT64 && cc->kind != SHAPE_GEN_INT64)) continue;
                /* its last rule leaves a number > K >= 0 (sc_constraint_fix makes one when it is broken; a NaN
                 * breaks it) */
                const sc_repair *last = &cc->repairs[cc->nrepairs - 1];
                rp->sum_bound = last->constraint && !last->cross_table && last->right_col < 0 && last->op == 2 &&
                                last->right_num >= 0;
            }
        }
}

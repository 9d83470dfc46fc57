/* domain.c — an open domain and its cursors (shape/domain.h).
 *
 * Why: the emit plan, runtime and checkpoint ask a domain for its tables
 * per table or per batch, and for rows per event; this handle makes the
 * former plain loads and the latter one indirect call, whatever the domain.
 * How: shape_domain_open opens the type's state and copies every table's
 * description (name, columns, event-time column, rows) into one array; a
 * cursor keeps the type's row function beside the type's cursor, so a row
 * costs one call through a pointer.
 */
#include <stdlib.h>
#include <string.h>

#include "shape/domain.h"

struct shape_domain {
    const shape_domain_type *type;
    void *impl;
    char *preset;
    uint64_t seed;
    int timeline;
    size_t ntables;
    shape_domain_table *tables;
};

struct shape_domain_cursor {
    int (*row)(void *cursor, uint64_t row, shape_gen_row *out, shape_err *err);
    void *impl;
    const shape_domain_type *type;
};

static int open_variant(const shape_domain_type *type, const char *preset, uint64_t seed, int timeline,
                        shape_domain **out, shape_err *err);

int shape_domain_open(const shape_domain_type *type, const char *preset, uint64_t seed, shape_domain **out,
                      shape_err *err)
{
    return open_variant(type, preset, seed, 0, out, err);
}

int shape_domain_open_timeline(const shape_domain_type *type, const char *preset, uint64_t seed,
                               shape_domain **out, shape_err *err)
{
    *out = NULL;
    if (!type->open_timeline || !type->table_role || !type->row_time || !type->followers ||
        !type->followers_before)
        return shape_err_set(err, SHAPE_EINVAL,
                             "--order event-time needs a domain whose event times are ordered by row; %s has none "
                             "(use --order table)",
                             type->name);
    return open_variant(type, preset, seed, 1, out, err);
}

int shape_domain_is_timeline(const shape_domain *d) { return d->timeline; }

static int open_variant(const shape_domain_type *type, const char *preset, uint64_t seed, int timeline,
                        shape_domain **out, shape_err *err)
{
    *out = NULL;
    if (!preset) preset = type->default_preset;
    shape_domain *d = calloc(1, sizeof *d);
    if (!d || !(d->preset = strdup(preset))) {
        free(d);
        return shape_err_set(err, SHAPE_ENOMEM, "%s: out of memory", type->name);
    }
    d->type = type;
    d->seed = seed;
    d->timeline = timeline;
    int rc = (timeline ? type->open_timeline : type->open)(type, preset, seed, &d->impl, err);
    if (rc == SHAPE_OK) {
        d->ntables = type->table_count(d->impl);
        d->tables = calloc(d->ntables ? d->ntables : 1, sizeof *d->tables);
        if (!d->tables) rc = shape_err_set(err, SHAPE_ENOMEM, "%s: out of memory", type->name);
    }
    for (size_t t = 0; rc == SHAPE_OK && t < d->ntables; t++) {
        type->table(d->impl, t, &d->tables[t]);
        if (d->tables[t].ncols > SHAPE_GEN_MAX_COLUMNS)
            rc = shape_err_set(err, SHAPE_EINVAL, "%s: table '%s' has more than %d columns", type->name,
                               d->tables[t].name, SHAPE_GEN_MAX_COLUMNS);
    }
    if (rc == SHAPE_OK)
        *out = d;
    else
        shape_domain_free(d);
    return rc;
}

void shape_domain_free(shape_domain *d)
{
    if (!d) return;
    if (d->impl) d->type->close(d->impl);
    free(d->tables);
    free(d->preset);
    free(d);
}

const shape_domain_type *shape_domain_type_of(const shape_domain *d) { return d->type; }
const char *shape_domain_name(const shape_domain *d) { return d->type->name; }
const char *shape_domain_preset(const shape_domain *d) { return d->preset; }
uint64_t shape_domain_seed(const shape_domain *d) { return d->seed; }
size_t shape_domain_table_count(const shape_domain *d) { return d->ntables; }

const shape_domain_table *shape_domain_table_at(const shape_domain *d, size_t t)
{
    return t < d->ntables ? &d->tables[t] : NULL;
}

int shape_domain_table_find(const shape_domain *d, const char *name)
{
    for (size_t t = 0; name && t < d->ntables; t++)
        if (strcmp(d->tables[t].name, name) == 0) return (int)t;
    return -1;
}

int shape_domain_column_find(const shape_domain *d, size_t t, const char *name)
{
    const shape_domain_table *tab = shape_domain_table_at(d, t);
    for (size_t c = 0; tab && name && c < tab->ncols; c++)
        if (strcmp(tab->cols[c].name, name) == 0) return (int)c;
    return -1;
}

size_t shape_domain_identity(const shape_domain *d, shape_domain_field *out, size_t cap)
{
    return d->type->identity(d->impl, out, cap);
}

int shape_domain_cursor_open(shape_domain *d, size_t t, shape_domain_cursor **out, shape_err *err)
{
    *out = NULL;
    if (t >= d->ntables) return shape_err_set(err, SHAPE_ENOTFOUND, "%s has no table number %zu", d->type->name, t);
    shape_domain_cursor *c = calloc(1, sizeof *c);
    if (!c) return shape_err_set(err, SHAPE_ENOMEM, "%s: out of memory", d->type->name);
    int rc = d->type->cursor_open(d->impl, t, &c->impl, err);
    if (rc != SHAPE_OK) {
        free(c);
        return rc;
    }
    c->row = d->type->cursor_row;
    c->type = d->type;
    *out = c;
    return SHAPE_OK;
}

int shape_domain_cursor_row(shape_domain_cursor *c, uint64_t row, shape_gen_row *out, shape_err *err)
{
    return c->row(c->impl, row, out, err);
}

void shape_domain_cursor_free(shape_domain_cursor *c)
{
    if (!c) return;
    c->type->cursor_close(c->impl);
    free(c);
}

/* ---- event-time order ---------------------------------------------------- */

typedef struct tl_timed {
    size_t t;       /* domain table */
    uint64_t rows;  /* its rows */
    uint64_t next;  /* next row to merge */
    int64_t time;   /* that row's time (when next < rows) */
    int emit;       /* selected (else walked for its followers only) */
    size_t nf;      /* its selected follower tables, in table order */
    size_t *f;
} tl_timed;

struct shape_domain_timeline {
    const shape_domain *d;
    size_t nhead, *head;      /* selected head tables, in order */
    uint64_t head_total;
    size_t ntimed;
    tl_timed *timed;
    size_t *fbuf;
    uint64_t total, pos;
    /* the follower run in progress: timed table index, parent row, which
     * follower table, rows [fnext, fend) */
    int pending;
    size_t pk, pj;
    uint64_t prow, fnext, fend;
};

void shape_domain_timeline_free(shape_domain_timeline *tl)
{
    if (!tl) return;
    free(tl->head);
    free(tl->timed);
    free(tl->fbuf);
    free(tl);
}

int shape_domain_timeline_open(const shape_domain *d, const unsigned char *selected, shape_domain_timeline **out,
                               shape_err *err)
{
    *out = NULL;
    if (!d->timeline)
        return shape_err_set(err, SHAPE_EINVAL, "%s was not opened for event-time order", d->type->name);
    shape_domain_timeline *tl = calloc(1, sizeof *tl);
    size_t n = d->ntables ? d->ntables : 1;
    if (tl) {
        tl->head = calloc(n, sizeof *tl->head);
        tl->timed = calloc(n, sizeof *tl->timed);
        tl->fbuf = calloc(n, sizeof *tl->fbuf);
    }
    if (!tl || !tl->head || !tl->timed || !tl->fbuf) {
        shape_domain_timeline_free(tl);
        return shape_err_set(err, SHAPE_ENOMEM, "%s: out of memory", d->type->name);
    }
    tl->d = d;
    size_t used = 0;
    for (size_t t = 0; t < d->ntables; t++) {
        size_t parent = 0;
        int role = d->type->table_role(d->impl, t, &parent);
        int want = !selected || selected[t];
        if (role == SHAPE_DOMAIN_HEAD) {
            if (want) {
                tl->head[tl->nhead++] = t;
                tl->head_total += d->tables[t].rows;
            }
        } else if (role == SHAPE_DOMAIN_TIMED) {
            tl_timed *k = &tl->timed[tl->ntimed++];
            k->t = t;
            k->rows = d->tables[t].rows;
            k->emit = want;
            k->f = tl->fbuf + used;
            /* followers come after their parent in dependency order */
            for (size_t u = t + 1; u < d->ntables; u++) {
                size_t p = 0;
                if (d->type->table_role(d->impl, u, &p) == SHAPE_DOMAIN_FOLLOWS && p == t &&
                    (!selected || selected[u]))
                    k->f[k->nf++] = u;
            }
            used += k->nf;
            if (k->emit) tl->total += k->rows;
            for (size_t j = 0; j < k->nf; j++) tl->total += d->tables[k->f[j]].rows;
        }
    }
    /* drop timed tables that neither are selected nor have selected followers */
    size_t w = 0;
    for (size_t i = 0; i < tl->ntimed; i++)
        if (tl->timed[i].emit || tl->timed[i].nf) tl->timed[w++] = tl->timed[i];
    tl->ntimed = w;
    tl->total += tl->head_total;
    *out = tl;
    return shape_domain_timeline_seek(tl, 0, err);
}

uint64_t shape_domain_timeline_total(const shape_domain_timeline *tl) { return tl->total; }
uint64_t shape_domain_timeline_position(const shape_domain_timeline *tl) { return tl->pos; }

int shape_domain_timeline_first_timed(const shape_domain_timeline *tl, size_t *table, uint64_t *row)
{
    /* the merge takes the least (time, table): each timed table's row 0 is its earliest */
    int found = 0;
    int64_t best = 0;
    for (size_t i = 0; i < tl->ntimed; i++) {
        const tl_timed *k = &tl->timed[i];
        if (!k->emit || !k->rows) continue;
        int64_t t = tl->d->type->row_time(tl->d->impl, k->t, 0);
        if (!found || t < best) {
            found = 1;
            best = t;
            *table = k->t;
            *row = 0;
        }
    }
    return found;
}

static void tl_refresh(const shape_domain_timeline *tl, tl_timed *k)
{
    if (k->next < k->rows) k->time = tl->d->type->row_time(tl->d->impl, k->t, k->next);
}

/* Rows of timed table k with time < T (times are non-decreasing). */
static uint64_t tl_rows_before(const shape_domain_timeline *tl, const tl_timed *k, int64_t T)
{
    uint64_t lo = 0, hi = k->rows;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (tl->d->type->row_time(tl->d->impl, k->t, mid) < T)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* S(T): timeline events (past the head) before time T. */
static uint64_t tl_events_before(const shape_domain_timeline *tl, int64_t T)
{
    uint64_t s = 0;
    for (size_t i = 0; i < tl->ntimed; i++) {
        const tl_timed *k = &tl->timed[i];
        uint64_t m = tl_rows_before(tl, k, T);
        if (k->emit) s += m;
        for (size_t j = 0; j < k->nf; j++) s += tl->d->type->followers_before(tl->d->impl, k->f[j], m);
    }
    return s;
}

int shape_domain_timeline_seek(shape_domain_timeline *tl, uint64_t pos, shape_err *err)
{
    if (pos > tl->total)
        return shape_err_set(err, SHAPE_EINVAL, "offset %llu is past the end of the stream (%llu events)",
                             (unsigned long long)pos, (unsigned long long)tl->total);
    tl->pending = 0;
    for (size_t i = 0; i < tl->ntimed; i++) tl->timed[i].next = 0;
    uint64_t skip = 0;
    if (pos > tl->head_total) {
        uint64_t p = pos - tl->head_total;
        /* the last T with S(T) <= p, over [lo, hi]: S(lo) = 0 */
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t i = 0; i < tl->ntimed; i++) {
            const tl_timed *k = &tl->timed[i];
            if (!k->rows) continue;
            int64_t a = tl->d->type->row_time(tl->d->impl, k->t, 0);
            int64_t b = tl->d->type->row_time(tl->d->impl, k->t, k->rows - 1);
            if (a < lo) lo = a;
            if (b > hi) hi = b;
        }
        if (lo <= hi) {
            while (lo < hi) {
                int64_t mid = lo + (int64_t)(((uint64_t)hi - (uint64_t)lo + 1) / 2);
                if (tl_events_before(tl, mid) <= p)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            for (size_t i = 0; i < tl->ntimed; i++) tl->timed[i].next = tl_rows_before(tl, &tl->timed[i], lo);
            skip = p - tl_events_before(tl, lo);
        }
        tl->pos = pos - skip;
    } else {
        tl->pos = pos;
    }
    for (size_t i = 0; i < tl->ntimed; i++) tl_refresh(tl, &tl->timed[i]);
    size_t t;
    uint64_t r;
    for (uint64_t i = 0; i < skip; i++)
        if (!shape_domain_timeline_next(tl, &t, &r)) break;
    return SHAPE_OK;
}

/* Start the follower tables of the pending parent from table index j on;
 * 1 when a non-empty run is ready. */
static int tl_follow(shape_domain_timeline *tl, size_t j)
{
    const tl_timed *k = &tl->timed[tl->pk];
    for (; j < k->nf; j++) {
        uint64_t first = 0, count = 0;
        tl->d->type->followers(tl->d->impl, k->f[j], tl->prow, &first, &count);
        if (count) {
            tl->pj = j;
            tl->fnext = first;
            tl->fend = first + count;
            tl->pending = 1;
            return 1;
        }
    }
    tl->pending = 0;
    return 0;
}

int shape_domain_timeline_next(shape_domain_timeline *tl, size_t *table, uint64_t *row)
{
    if (tl->pos < tl->head_total) {
        uint64_t p = tl->pos;
        for (size_t i = 0; i < tl->nhead; i++) {
            uint64_t rows = tl->d->tables[tl->head[i]].rows;
            if (p < rows) {
                *table = tl->head[i];
                *row = p;
                tl->pos++;
                return 1;
            }
            p -= rows;
        }
    }
    for (;;) {
        if (tl->pending) {
            *table = tl->timed[tl->pk].f[tl->pj];
            *row = tl->fnext++;
            if (tl->fnext >= tl->fend) tl_follow(tl, tl->pj + 1);
            tl->pos++;
            return 1;
        }
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < tl->ntimed; i++) {
            const tl_timed *k = &tl->timed[i];
            if (k->next < k->rows && (best == SIZE_MAX || k->time < tl->timed[best].time)) best = i;
        }
        if (best == SIZE_MAX) return 0;
        tl_timed *k = &tl->timed[best];
        tl->pk = best;
        tl->prow = k->next++;
        tl_refresh(tl, k);
        tl_follow(tl, 0);
        if (k->emit) {
            *table = k->t;
            *row = tl->prow;
            tl->pos++;
            return 1;
        }
    }
}

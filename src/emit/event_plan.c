/* event_plan.c — the event plan: which tables of a domain a stream holds,
 * in which order, and where each one starts (shape/event.h).
 *
 * Why: a stream is the selected tables one after another in the domain's
 * dependency order, so any global offset maps to (table, row) in O(tables):
 * a resumed or sharded stream starts anywhere without generating what came
 * before, whatever the domain.
 * How: the selection is a flag per domain table; the plan's arrays (table
 * index, rows, start offset) are sized by the domain's table count and
 * owned by the plan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/domain.h"
#include "shape/event.h"

static int unknown_table(const shape_domain *domain, const char *name, shape_err *err)
{
    char list[256] = "";
    size_t used = 0;
    for (size_t t = 0; t < shape_domain_table_count(domain) && used < sizeof list - 1; t++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", t ? ", " : "",
                                 shape_domain_table_at(domain, t)->name);
    return shape_err_set(err, SHAPE_EINVAL, "unknown table '%.60s'; the schema has %s", name, list);
}

int shape_event_plan_init(shape_event_plan *plan, shape_domain *domain, const char *const *names, size_t n,
                          shape_err *err)
{
    memset(plan, 0, sizeof *plan);
    size_t count = shape_domain_table_count(domain);
    unsigned char *want = calloc(count ? count : 1, 1);
    if (!want) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        int id = shape_domain_table_find(domain, names[i]);
        if (id < 0) {
            free(want);
            return unknown_table(domain, names[i], err);
        }
        want[id] = 1;
    }
    plan->table_ids = calloc(count ? count : 1, sizeof *plan->table_ids);
    plan->rows = calloc(count ? count : 1, sizeof *plan->rows);
    plan->start = calloc(count ? count : 1, sizeof *plan->start);
    if (!plan->table_ids || !plan->rows || !plan->start) {
        free(want);
        shape_event_plan_reset(plan);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    plan->domain = domain;
    uint64_t off = 0;
    for (size_t t = 0; t < count; t++) {
        if (n > 0 && !want[t]) continue;
        size_t k = plan->ntables++;
        plan->table_ids[k] = t;
        plan->rows[k] = shape_domain_table_at(domain, t)->rows;
        plan->start[k] = off;
        off += plan->rows[k];
    }
    plan->total = off;
    free(want);
    return SHAPE_OK;
}

void shape_event_plan_reset(shape_event_plan *plan)
{
    free(plan->table_ids);
    free(plan->rows);
    free(plan->start);
    memset(plan, 0, sizeof *plan);
}

int shape_event_plan_locate(const shape_event_plan *plan, uint64_t offset, size_t *index, uint64_t *row,
                            shape_err *err)
{
    for (size_t k = 0; k < plan->ntables; k++) {
        if (offset < plan->start[k] + plan->rows[k]) {
            *index = k;
            *row = offset - plan->start[k];
            return SHAPE_OK;
        }
    }
    return shape_err_set(err, SHAPE_EINVAL, "offset %llu is past the end of the stream (%llu events)",
                         (unsigned long long)offset, (unsigned long long)plan->total);
}

/* ---- the size of what a plan sends -------------------------------------------- */

#define SAMPLE_ROWS 32 /* per table: enough for a mean within a few per cent */

/* Rows [a, b) of table k, SAMPLE_ROWS of them spread evenly, rendered;
 * their total length in *bytes and count in *n. */
static int sample_table(const shape_event_plan *plan, size_t k, shape_envelope env, uint64_t a, uint64_t b,
                        double *bytes, uint64_t *n, shape_err *err)
{
    const shape_domain_table *tab = shape_domain_table_at(plan->domain, plan->table_ids[k]);
    shape_event_table et;
    SHAPE_RETURN_NOT_OK(shape_event_table_init(&et, tab->name, tab->cols, tab->ncols, tab->event_time_col, err));
    shape_domain_cursor *cur;
    SHAPE_RETURN_NOT_OK(shape_domain_cursor_open(plan->domain, plan->table_ids[k], &cur, err));
    shape_gen_row *row = malloc(sizeof *row);
    char *buf = NULL;
    size_t cap = 0;
    int rc = row ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    uint64_t span = b - a, count = span < SAMPLE_ROWS ? span : SAMPLE_ROWS;
    for (uint64_t i = 0; rc == SHAPE_OK && i < count; i++) {
        uint64_t r = a + (uint64_t)((double)i * (double)span / (double)count);
        rc = shape_domain_cursor_row(cur, r, row, err);
        size_t need = rc == SHAPE_OK ? shape_event_bound(&et, row) : 0;
        if (rc == SHAPE_OK && need > cap) {
            char *nb = realloc(buf, need);
            if (!nb) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
            else buf = nb, cap = need;
        }
        if (rc == SHAPE_OK) *bytes += (double)(shape_event_encode(&et, env, r, row, buf) - buf);
    }
    *n = rc == SHAPE_OK ? count : 0;
    free(buf);
    free(row);
    shape_domain_cursor_free(cur);
    return rc;
}

int shape_event_plan_mean_bytes(const shape_event_plan *plan, shape_envelope env, uint64_t from, uint64_t to,
                                double *mean, shape_err *err)
{
    *mean = 0;
    double weighted = 0, events = 0;
    for (size_t k = 0; k < plan->ntables; k++) {
        uint64_t a = plan->start[k], b = plan->start[k] + plan->rows[k]; /* the table's offsets */
        if (a < from) a = from;
        if (b > to) b = to;
        if (a >= b) continue;
        double bytes = 0;
        uint64_t n = 0;
        SHAPE_RETURN_NOT_OK(sample_table(plan, k, env, a - plan->start[k], b - plan->start[k], &bytes, &n, err));
        if (n == 0) continue;
        weighted += bytes / (double)n * (double)(b - a);
        events += (double)(b - a);
    }
    if (events > 0) *mean = weighted / events;
    return SHAPE_OK;
}

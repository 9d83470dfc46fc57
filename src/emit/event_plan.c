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

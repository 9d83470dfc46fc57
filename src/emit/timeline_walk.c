/* timeline_walk.c — the event at each position of an event-time stream
 * (`--order event-time`): the domain's merge (shape_domain_timeline) walked
 * in position order, with a shard's positions and out-of-order windows on
 * top.
 *
 * Why: the table-order generator finds any position's row by arithmetic
 * (shape_event_plan_locate); the merged stream has no such formula, only a
 * cursor that goes forward and a seek (a binary search over time). Shards,
 * disorder and the resume prescan of duplicates all ask for positions in
 * ascending order, so one forward walk serves them, seeking only to start
 * or to jump far ahead.
 * How: positions are global (the unsharded stream's). The walker keeps the
 * timeline at the next position it will be asked for: a position a little
 * ahead is reached by walking (a shard of n walks n − 1 events between two
 * of its own: far cheaper than rendering one), one far ahead or behind by a
 * seek. With --out-of-order the stream is cut into windows of W positions:
 * entering window w reads its (at most W) events into a buffer, disorder.c
 * orders them by their late draws (keyed by each event's table and row), and
 * position p is then the event at rank p − w·W of that order (kept as a
 * table of events in stream order, read inline by walk_event in
 * runtime_internal.h, as is the next event of an undisordered walk). So a shard of
 * n gets global positions i, i + n, ... of the disordered stream: the shards
 * together are that stream, each event once. Memory: the window (W events),
 * O(tables) for the merge.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

/* Further than this ahead, a seek (a few thousand row-time evaluations) is
 * cheaper than walking. */
#define WALK_SEEK_GAP 4096

int shape_emit_walk_open(runtime *rt, tl_walk *w, shape_err *err)
{
    const shape_event_plan *plan = rt->cfg->plan;
    size_t nd = shape_domain_table_count(plan->domain);
    memset(w, 0, sizeof *w);
    unsigned char *sel = calloc(nd ? nd : 1, 1);
    w->plan_of = calloc(nd ? nd : 1, sizeof *w->plan_of);
    int rc = sel && w->plan_of ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t k = 0; rc == SHAPE_OK && k < plan->ntables; k++) {
        sel[plan->table_ids[k]] = 1;
        w->plan_of[plan->table_ids[k]] = k;
    }
    if (rc == SHAPE_OK) rc = shape_domain_timeline_open(plan->domain, sel, &w->tl, err);
    free(sel);
    if (rc != SHAPE_OK) return rc;
    w->total = shape_domain_timeline_total(w->tl);
    if (w->total != plan->total)
        return shape_err_set(err, SHAPE_EINTERNAL, "event-time stream of %llu events, plan of %llu",
                             (unsigned long long)w->total, (unsigned long long)plan->total);
    if (rt->cfg->out_of_order > 0) {
        w->W = rt->cfg->ooo_window;
        w->wtab = malloc(w->W * sizeof *w->wtab);
        w->wrow = malloc(w->W * sizeof *w->wrow);
        w->ev = malloc(w->W * sizeof *w->ev);
        if (!w->wtab || !w->wrow || !w->ev) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for an out-of-order window");
    }
    return SHAPE_OK;
}

void shape_emit_walk_free(tl_walk *w)
{
    shape_domain_timeline_free(w->tl);
    shape_emit_ooo_free(&w->ow);
    free(w->plan_of);
    free(w->wtab);
    free(w->wrow);
    free(w->ev);
    memset(w, 0, sizeof *w);
}

/* Put the timeline at position g (< total). */
static int walk_to(tl_walk *w, uint64_t g, shape_err *err)
{
    if (g < w->at || g - w->at > WALK_SEEK_GAP) {
        SHAPE_RETURN_NOT_OK(shape_domain_timeline_seek(w->tl, g, err));
        w->at = g;
        return SHAPE_OK;
    }
    size_t t;
    uint64_t r;
    for (; w->at < g; w->at++)
        if (!shape_domain_timeline_next(w->tl, &t, &r))
            return shape_err_set(err, SHAPE_EINTERNAL, "event-time stream ended early");
    return SHAPE_OK;
}

static int walk_next(tl_walk *w, size_t *k, uint64_t *row, shape_err *err)
{
    size_t t;
    if (!shape_domain_timeline_next(w->tl, &t, row))
        return shape_err_set(err, SHAPE_EINTERNAL, "event-time stream ended early");
    w->at++;
    *k = w->plan_of[t];
    return SHAPE_OK;
}

/* Read window wi's events and order them (disorder.c). (noinline: once per
 * window, and it keeps the per-event lookup small) */
static __attribute__((noinline)) int load_window(runtime *rt, tl_walk *w, uint64_t wi, shape_err *err)
{
    const uint64_t lo = wi * w->W, n = w->total - lo < w->W ? w->total - lo : w->W;
    w->wn = 0; /* (no window in hand until this one is whole) */
    SHAPE_RETURN_NOT_OK(walk_to(w, lo, err));
    for (uint64_t j = 0; j < n; j++) {
        size_t k = 0;
        SHAPE_RETURN_NOT_OK(walk_next(w, &k, &w->wrow[j], err));
        w->wtab[j] = (uint32_t)k;
    }
    if (shape_emit_ooo_order_positions(rt, &w->ow, wi, n, w->wtab, w->wrow, w->ev) != SHAPE_OK)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory ordering a window");
    w->lo = lo;
    w->wn = n;
    return SHAPE_OK;
}

int shape_emit_walk_event(runtime *rt, tl_walk *w, uint64_t g, size_t *k, uint64_t *row, uint32_t *moved,
                          shape_err *err)
{
    if (g >= w->total)
        return shape_err_set(err, SHAPE_EINTERNAL, "position %llu is past the event-time stream",
                             (unsigned long long)g);
    if (!w->W) {
        *moved = 0;
        if (w->at != g) SHAPE_RETURN_NOT_OK(walk_to(w, g, err));
        return walk_next(w, k, row, err);
    }
    const uint64_t wi = g / w->W;
    if (!w->wn || w->lo != wi * w->W) SHAPE_RETURN_NOT_OK(load_window(rt, w, wi, err));
    const tl_event *e = &w->ev[g - w->lo];
    *k = e->k;
    *row = e->row;
    *moved = e->moved;
    return SHAPE_OK;
}

/* disorder.c — out-of-order events (--out-of-order F, --ooo-window W; spec-core
 * §3.4): a late row moves up to W positions later inside its window, its
 * event time unchanged.
 *
 * Why: late data is what windows, watermarks and event-time joins fail on;
 * a pipeline's test needs it in known amounts, and the same amounts again
 * on every run and after a resume.
 * How: a table's rows are cut into windows of W rows (row i is in window
 * i / W). In a window each row draws, keyed by (seed, table, seq), whether
 * it is late (u < F) and how far (s): a late row's sort position becomes
 * i + 1.5 + ⌊s·W⌋, capped to (w+1)·W − 0.25 so it stays in its window; the
 * window is then ordered by (position, row). Stream position p of a table
 * (its rank in that order) maps to a row through the window's permutation,
 * which is computed once per window (W entries) when the generator enters
 * it — so any position can still be generated without the ones before it,
 * in memory bounded by W.
 * In event-time order (--order event-time) the windows are W positions of
 * the merged stream instead of W rows of one table: the walker
 * (timeline_walk.c) hands in the window's events, each draw is keyed by the
 * event's (seed, table, row), and a late event moves up to W positions later
 * in the merged stream — past events of other tables too — its event time
 * unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime_internal.h"

enum { DRAW_LATE = 11, DRAW_LATE_SHIFT = 12 };

typedef struct slot {
    double pos;
    uint64_t row;
    uint32_t moved;
} slot;

static int by_position(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    if (x->pos != y->pos) return x->pos < y->pos ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* The late rows late[0..nlate) sorted, merged with the nin in-place rows
 * s[0..nin) (in position order already) into s[0..n). Rows in place keep
 * their order (their position is their row), so only the late ones are
 * sorted — about F·W of them — and merged in: O(W) for a window, not
 * O(W log W). */
static void merge_late(slot *s, uint64_t nin, slot *late, uint64_t nlate, uint64_t n)
{
    qsort(late, nlate, sizeof *late, by_position);
    /* merge from the back, so the in-place rows never get overwritten unread */
    uint64_t a = nin, b = nlate, out = n;
    while (b > 0) {
        if (a > 0 && by_position(&s[a - 1], &late[b - 1]) > 0) s[--out] = s[--a];
        else s[--out] = late[--b];
    }
}

static int window_slots(ooo_window *ow, uint64_t W)
{
    if (!ow->slots) {
        ow->slots = malloc(2 * W * sizeof(slot)); /* the window, then its late rows */
        if (!ow->slots) return -1;
    }
    return 0;
}

/* Order window w of plan table k into ow. */
/* (noinline: the per-event lookup below stays a leaf, without this frame) */
static __attribute__((noinline)) int order_window(runtime *rt, ooo_window *ow, size_t k, uint64_t w)
{
    const shape_emit_config *cfg = rt->cfg;
    const uint64_t W = cfg->ooo_window, lo = w * W, rows = cfg->plan->rows[k];
    const uint64_t n = rows - lo < W ? rows - lo : W;
    if (window_slots(ow, W) != 0) return -1;
    slot *s = ow->slots, *late = s + W;
    const uint64_t late_key = rt->meta[k].draw_key[DRAW_LATE], shift_key = rt->meta[k].draw_key[DRAW_LATE_SHIFT];
    const double cap = (double)(w + 1) * (double)W - 0.25;
    uint64_t nlate = 0, nin = 0;
    for (uint64_t j = 0; j < n; j++) {
        uint64_t row = lo + j;
        if (shape_emit_drawn(late_key, row, rt->thr_late)) {
            uint64_t shift = (uint64_t)(shape_emit_draw_keyed(shift_key, row) * (double)W);
            double pos = (double)row + 1.5 + (double)shift;
            late[nlate++] = (slot){pos < cap ? pos : cap, row, (uint32_t)(shift + 1)};
        } else {
            s[nin++] = (slot){(double)row, row, 0}; /* compacted in place: nin <= j */
        }
    }
    merge_late(s, nin, late, nlate, n);
    ow->k = k;
    ow->w = w;
    ow->valid = 1;
    return 0;
}

int shape_emit_ooo_order_positions(runtime *rt, ooo_window *ow, uint64_t w, uint64_t n, const uint32_t *tab,
                                   const uint64_t *row, tl_event *out)
{
    const shape_emit_config *cfg = rt->cfg;
    const uint64_t W = cfg->ooo_window, lo = w * W;
    if (window_slots(ow, W) != 0) return SHAPE_ENOMEM;
    slot *s = ow->slots, *late = s + W;
    const double cap = (double)(w + 1) * (double)W - 0.25;
    uint64_t nlate = 0, nin = 0;
    for (uint64_t j = 0; j < n; j++) {
        const uint64_t *key = rt->meta[tab[j]].draw_key, p = lo + j;
        if (shape_emit_drawn(key[DRAW_LATE], row[j], rt->thr_late)) {
            uint64_t shift = (uint64_t)(shape_emit_draw_keyed(key[DRAW_LATE_SHIFT], row[j]) * (double)W);
            double pos = (double)p + 1.5 + (double)shift;
            late[nlate++] = (slot){pos < cap ? pos : cap, p, (uint32_t)(shift + 1)};
        } else {
            s[nin++] = (slot){(double)p, p, 0};
        }
    }
    merge_late(s, nin, late, nlate, n);
    for (uint64_t r = 0; r < n; r++) {
        uint64_t j = s[r].row - lo;
        out[r] = (tl_event){row[j], tab[j], s[r].moved};
    }
    ow->k = SIZE_MAX;
    ow->w = w;
    ow->valid = 1;
    return SHAPE_OK;
}

int shape_emit_ooo_row(runtime *rt, ooo_window *ow, size_t k, uint64_t rank, uint64_t *row, uint32_t *moved)
{
    const uint64_t W = rt->cfg->ooo_window, w = rank / W;
    if (!ow->valid || ow->k != k || ow->w != w)
        if (order_window(rt, ow, k, w) != 0) return SHAPE_ENOMEM;
    const struct slot *s = &((const slot *)ow->slots)[rank - w * W];
    *row = s->row;
    *moved = s->moved;
    return SHAPE_OK;
}

void shape_emit_ooo_free(ooo_window *ow)
{
    free(ow->slots);
    memset(ow, 0, sizeof *ow);
}

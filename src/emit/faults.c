/* faults.c — faults in delivery: duplicates and poison, and the answer key
 * that lists every fault delivered (spec-core §3.7; shape/emit.h).
 *
 * Why: a consumer's de-duplication and poison handling can only be tested
 * against a stream that has duplicates and poison in it, and scored only if
 * the test knows exactly which events were faulted. Every choice is a draw
 * keyed by (seed, fault, table, seq), so the same command gives the same
 * faults, whatever the batch sizes, and a resumed run the same ones again.
 * How: the generator renders each original event as always, then asks
 * here: a poisoned event's body is cut to max(1, ⌊2·len/3⌋) bytes; a
 * duplicated one gets a copy (same key, same body) queued for 1..W positions
 * later (a min-heap by due position), rendered right after the original at
 * that position. A resumed run first re-queues the copies of the W
 * positions before its start that fall due after it, so the resumed stream
 * is the uninterrupted one. Copies do not count as stream positions
 * (offsets, checkpoints and limits count originals). The sender writes one
 * answer-key line per faulted message once the whole group is delivered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/arrow.h"
#include "shape/domain.h"
#include "runtime_internal.h"

uint64_t shape_emit_name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

int shape_emit_delivery_faults_on(const shape_emit_config *cfg)
{
    return cfg->duplicate_fraction > 0 || cfg->poison_fraction > 0;
}

int shape_emit_faults_on(const shape_emit_config *cfg)
{
    return shape_emit_delivery_faults_on(cfg) || cfg->out_of_order > 0 || cfg->anomaly_fraction > 0;
}

/* ---- the heap of copies ------------------------------------------------------------ */

static int before(const pending_copy *a, const pending_copy *b)
{
    return a->due < b->due || (a->due == b->due && a->pos < b->pos);
}

/* (noinline: rare, and it keeps the per-event draws that call it leaves) */
static __attribute__((noinline)) int heap_push(fault_state *fs, pending_copy c)
{
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 256;
        pending_copy *h = realloc(fs->heap, cap * sizeof *h);
        if (!h) return -1;
        fs->heap = h;
        fs->cap = cap;
    }
    size_t i = fs->n++;
    while (i > 0 && before(&c, &fs->heap[(i - 1) / 2])) {
        fs->heap[i] = fs->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    fs->heap[i] = c;
    return 0;
}

static pending_copy heap_pop(fault_state *fs)
{
    pending_copy top = fs->heap[0], last = fs->heap[--fs->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= fs->n) break;
        if (c + 1 < fs->n && before(&fs->heap[c + 1], &fs->heap[c])) c++;
        if (!before(&fs->heap[c], &last)) break;
        fs->heap[i] = fs->heap[c];
        i = c;
    }
    if (fs->n) fs->heap[i] = last;
    return top;
}

void shape_emit_faults_free(fault_state *fs)
{
    shape_domain_cursor_free(fs->cur);
    shape_emit_ooo_free(&fs->ow);
    free(fs->heap);
    memset(fs, 0, sizeof *fs);
}

/* ---- choosing faults ------------------------------------------------------------------ */

/* Queue the copy of the original at pos (table k, seq), drawn for one. */
static int queue_copy(runtime *rt, fault_state *fs, uint64_t pos, size_t k, uint64_t seq, uint64_t from)
{
    const shape_emit_config *cfg = rt->cfg;
    const uint64_t *key = rt->meta[k].draw_key;
    uint64_t d = 1 + (uint64_t)(shape_emit_draw_keyed(key[DRAW_DUPLICATE_DISTANCE], seq) *
                                (double)cfg->duplicate_window);
    if (d > cfg->duplicate_window) d = cfg->duplicate_window;
    if (pos + d < from) return 0;
    return heap_push(fs, (pending_copy){pos + d, pos, seq, k});
}

/* Table order's positions: the plan's row, then its window's order. */
static int table_locate(runtime *rt, void *ctx, uint64_t o, size_t *k, uint64_t *seq, shape_err *err)
{
    fault_state *fs = ctx;
    const shape_emit_config *cfg = rt->cfg;
    const uint64_t stride = shard_stride(cfg), first = stride > 1 ? cfg->shard_index : 0;
    SHAPE_RETURN_NOT_OK(shape_event_plan_locate(cfg->plan, first + o * stride, k, seq, err));
    uint32_t moved;
    if (cfg->out_of_order > 0 && shape_emit_ooo_row(rt, &fs->ow, *k, *seq, seq, &moved) != SHAPE_OK)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory ordering a window");
    return SHAPE_OK;
}

int shape_emit_faults_prescan(runtime *rt, fault_state *fs, shape_emit_locate_fn locate, void *ctx, shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    fs->cur_k = SIZE_MAX;
    if (cfg->duplicate_fraction <= 0) return SHAPE_OK;
    if (!locate) {
        locate = table_locate;
        ctx = fs;
    }
    const uint64_t start = cfg->start_offset, w = cfg->duplicate_window;
    for (uint64_t o = start > w ? start - w : 0; o < start; o++) {
        size_t k;
        uint64_t r;
        SHAPE_RETURN_NOT_OK(locate(rt, ctx, o, &k, &r, err));
        if (shape_emit_drawn(rt->meta[k].draw_key[DRAW_DUPLICATE], r, rt->thr_duplicate) &&
            queue_copy(rt, fs, o, k, r, start) != 0)
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    return SHAPE_OK;
}

int shape_emit_faults_chosen(runtime *rt, fault_state *fs, batch *b, size_t i, uint64_t pos, size_t k, uint64_t seq,
                             int poison, int copy)
{
    if (poison) {
        /* an empty value (the destinations make theirs from the row) stays
         * empty: they cut what they make (shape_emit_message.poison) */
        size_t len = b->msgs[i].value_len, cut = len * 2 / 3;
        if (len) b->msgs[i].value_len = cut ? cut : 1;
        b->msgs[i].poison = 1;
        b->msgs[i].uncut_len = len;
        b->fault[i] |= FAULT_POISON;
        b->fdet[i] = (uint32_t)len;
    }
    if (copy && queue_copy(rt, fs, pos, k, seq, 0) != 0) return SHAPE_ENOMEM;
    return SHAPE_OK;
}

/* A copy's typed row, for destinations that encode events themselves: into
 * its table's row builder (the batch's own, or one finished into b->xrows at
 * the end of the batch: a copy may be of a table before the batch's). */
static int copy_row(runtime *rt, batch *b, size_t k, uint64_t seq, const shape_gen_row *row, shape_err *err)
{
    table_meta *m = &rt->meta[k];
    if (!m->rows_made) {
        SHAPE_RETURN_NOT_OK(shape_event_rows_init(&m->rows, &m->et, err));
        m->rows_made = 1;
    }
    if (k != b->k && !b->xrows) {
        b->xrows = calloc(rt->cfg->plan->ntables, sizeof *b->xrows);
        if (!b->xrows) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        b->nxrows = rt->cfg->plan->ntables;
    }
    b->rtab[b->n] = (uint32_t)k;
    b->ridx[b->n] = (uint32_t)shape_batch_rows(m->rows.builder);
    return shape_event_rows_append(&m->rows, seq, row, err);
}

int shape_emit_faults_copies_due(runtime *rt, fault_state *fs, batch *b, uint64_t pos, shape_gen_row *row,
                                 shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    while (fs->n && fs->heap[0].due <= pos && b->n < b->mcap) {
        pending_copy c = heap_pop(fs);
        shape_domain_cursor *cur = fs->curs ? fs->curs[c.k] : NULL;
        if (!cur && c.k != fs->cur_k) {
            shape_domain_cursor_free(fs->cur);
            fs->cur = NULL;
            fs->cur_k = SIZE_MAX;
            SHAPE_RETURN_NOT_OK(shape_domain_cursor_open(cfg->plan->domain, cfg->plan->table_ids[c.k], &fs->cur, err));
            fs->cur_k = c.k;
        }
        SHAPE_RETURN_NOT_OK(shape_domain_cursor_row(cur ? cur : fs->cur, c.seq, row, err));
        shift_times(cfg, row);
        uint32_t anomaly = cfg->anomaly_fraction > 0 ? shape_emit_anomaly_apply(rt, fs, c.k, c.seq, row) : 0;
        if (shape_emit_render_event(rt, b, b->n, &rt->meta[c.k], c.seq, row) != 0)
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory rendering events");
        if (rt->want_rows) SHAPE_RETURN_NOT_OK(copy_row(rt, b, c.k, c.seq, row, err));
        b->fault[b->n] = FAULT_DUPLICATE;
        b->fdet[b->n] = (uint32_t)(c.due - c.pos);
        b->anom[b->n] = anomaly; /* the same change as its original's, not logged twice */
        b->n++;
    }
    return SHAPE_OK;
}

/* ---- the answer key ----------------------------------------------------------------------- */

/* One answer-key line; table names (a schema file's, too) are JSON-escaped. */
static void answer_line(FILE *f, const char *kind, const char *table, uint64_t seq, const char *detail)
{
    char buf[4096], key[SHAPE_EVENT_KEY_FRAG * 2 + 24]; /* room: 6 n + 2 for each string */
    size_t tl = strlen(table);
    if (tl > SHAPE_EVENT_KEY_FRAG * 2) tl = SHAPE_EVENT_KEY_FRAG * 2; /* names are shorter (event.h) */
    char *p = shape_json_string(buf, table, tl);
    memcpy(key, table, tl);
    char *k = shape_json_u64(key + tl + 1, seq);
    key[tl] = '/';
    char *q = shape_json_string(p, key, (size_t)(k - key));
    fprintf(f, "{\"kind\":\"%s\",\"table\":%.*s,\"seq\":%llu,\"key\":%.*s%s}\n", kind, (int)(p - buf), buf,
            (unsigned long long)seq, (int)(q - p), p, detail);
}

int shape_emit_answer_key(runtime *rt, const group *g, shape_emit_report *rep, shape_err *err)
{
    for (size_t i = 0; i < g->n; i++) {
        const batch *b = g->b[g->bi[i]];
        uint8_t f = b->fault[g->mi[i]];
        if (!f) continue;
        const shape_emit_message *m = group_message(g, i);
        char detail[96];
        if (f & FAULT_DUPLICATE) {
            rep->duplicates++;
            if (rt->answer_key) {
                snprintf(detail, sizeof detail, ",\"copy_after\":%u", (unsigned)b->fdet[g->mi[i]]);
                answer_line(rt->answer_key, "duplicate", m->table, g->ri[i], detail);
            }
        }
        if (f & FAULT_ANOMALY) {
            uint32_t a = b->anom[g->mi[i]];
            rep->anomalies_selected++;
            if (a & ANOMALY_AFFECTED) {
                rep->anomalies_affected++;
                if (rt->answer_key) {
                    const shape_event_table *et = &rt->meta[b->rtab[g->mi[i]]].et; /* an original's table */
                    snprintf(detail, sizeof detail, ",\"mutator\":\"%s\",\"column\":\"%.40s\",\"change\":\"%s\"",
                             shape_emit_mutator_name((int)(a >> 16 & 0xff)), et->cols[a & 0xff].name,
                             shape_emit_change_name((int)(a >> 8 & 0xff)));
                    answer_line(rt->answer_key, "anomaly", m->table, g->ri[i], detail);
                }
            }
        }
        if (f & FAULT_LATE) {
            rep->late++;
            if (rt->answer_key) {
                snprintf(detail, sizeof detail, ",\"moved_up_to\":%u", (unsigned)b->lmove[g->mi[i]]);
                answer_line(rt->answer_key, "late", m->table, g->ri[i], detail);
            }
        }
        if (f & FAULT_POISON) {
            rep->poisoned++;
            if (rt->answer_key) {
                /* a destination that made its own value (registry formats)
                 * cut the bytes it made: those are the ones a consumer sees */
                size_t made = g->msgs[i].made_len, cut = made * 2 / 3;
                if (made)
                    snprintf(detail, sizeof detail, ",\"bytes\":%zu,\"original_bytes\":%zu", cut ? cut : 1, made);
                else
                    snprintf(detail, sizeof detail, ",\"bytes\":%zu,\"original_bytes\":%u", m->value_len,
                             (unsigned)b->fdet[g->mi[i]]);
                answer_line(rt->answer_key, "poison", m->table, g->ri[i], detail);
            }
        }
    }
    if (rt->answer_key && fflush(rt->answer_key) != 0)
        return shape_err_set(err, SHAPE_EIO, "cannot write the answer key %s", rt->cfg->answer_key);
    return SHAPE_OK;
}

/* queue.c — the emit runtime's batch pool, generator thread and bounded
 * queue.
 *
 * Why: generation and encoding must run ahead of the paced sender without
 * growing memory: a slow sink blocks the generator (backpressure), nothing
 * is dropped, and the sender never waits for a batch it could have had.
 * How: batches are pooled (queue_batches + 2 of them, recycled): the
 * generator takes a free one, renders up to batch_events events of one
 * table into its arena (body, key, header values: in one pass per event,
 * from the table's metadata made by metadata.c, with offsets turned into
 * pointers once the arena stops moving) and builds the messages (and their
 * typed rows, for destinations that encode events themselves); the full
 * queue holds at most queue_batches. A shard (shard_count > 1) walks only
 * its positions: a batch holds rows row0, row0 + stride, ... of one table.
 * In event-time order a batch holds consecutive positions of the merged
 * stream (a shard's every n-th), found by timeline_walk.c.
 * The queue is a ring under one mutex with two condition variables (a
 * batch is full / a batch is free).
 */
#include <stdlib.h>
#include <string.h>

#include "shape/arrow.h"
#include "shape/domain.h"
#include "runtime_internal.h"

static void batch_release_rows(batch *b)
{
    if (b->rows.release) b->rows.release(&b->rows);
    b->rows.release = NULL;
    for (size_t k = 0; k < b->nxrows; k++)
        if (b->xrows[k].release) {
            b->xrows[k].release(&b->xrows[k]);
            b->xrows[k].release = NULL;
        }
}

void shape_emit_batch_free(batch *b)
{
    if (!b) return;
    batch_release_rows(b);
    free(b->arena);
    free(b->body_off);
    free(b->key_off);
    free(b->hval_off);
    free(b->msgs);
    free(b->hdrs);
    free(b->seq);
    free(b->fault);
    free(b->fdet);
    free(b->lmove);
    free(b->anom);
    free(b->rtab);
    free(b->ridx);
    free(b->xrows);
    free(b);
}

batch *shape_emit_batch_new(size_t cap, size_t nh)
{
    batch *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->body_off = malloc(cap * sizeof(size_t));
    b->key_off = malloc(cap * sizeof(size_t));
    b->hval_off = malloc(cap * nh * sizeof(size_t) + 1);
    /* (not zeroed: shape_emit_render_event writes a message and its headers
     * whole before anything reads them) */
    b->msgs = malloc(cap * sizeof(shape_emit_message));
    b->hdrs = malloc((cap * nh + 1) * sizeof(shape_emit_header));
    b->seq = malloc(cap * sizeof *b->seq);
    b->fault = calloc(cap, 1);
    b->fdet = calloc(cap, sizeof *b->fdet);
    b->lmove = calloc(cap, sizeof *b->lmove);
    b->anom = calloc(cap, sizeof *b->anom);
    b->rtab = calloc(cap, sizeof *b->rtab);
    b->ridx = calloc(cap, sizeof *b->ridx);
    b->mcap = cap;
    if (!b->body_off || !b->key_off || !b->hval_off || !b->msgs || !b->hdrs || !b->seq || !b->fault || !b->fdet ||
        !b->lmove || !b->anom || !b->rtab || !b->ridx) {
        shape_emit_batch_free(b);
        return NULL;
    }
    return b;
}

/* Arena offsets → pointers, once the arena stops moving. */
static int arena_reserve(batch *b, size_t more)
{
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + more) cap *= 2;
    char *na = realloc(b->arena, cap);
    if (!na) return -1;
    b->arena = na;
    b->cap = cap;
    return 0;
}

/* Natural text of a value (keys, header values): no quotes; null → "". */
static char *put_text(char *p, const shape_gen_value *v)
{
    switch (v->kind) {
    case SHAPE_GEN_NULL: return p;
    case SHAPE_GEN_STRING: memcpy(p, v->v.s, v->len); return p + v->len;
    case SHAPE_GEN_TIMESTAMP_NS: {
        char *e = shape_json_timestamp(p, v->v.i, 9, 0);
        memmove(p, p + 1, (size_t)(e - p - 2));
        return e - 2;
    }
    default: return shape_json_gen_value(p, v);
    }
}

static size_t text_bound(const shape_gen_value *v) { return shape_event_value_bound(v); }

/* Render one event of table meta m into batch b at position i: body, key
 * (the idempotency key or the --key columns), headers, timestamp. Inlined
 * into the generator loop (hot: once per event; an exported function would
 * be a call with a full frame per event); faults.c's copies use the
 * exported wrapper below. */
static inline __attribute__((always_inline)) int render_event(runtime *rt, batch *b, size_t i, const table_meta *m,
                                                              uint64_t seq, const shape_gen_row *row)
{
    b->seq[i] = seq;
    b->fault[i] = 0;
    const shape_emit_config *cfg = rt->cfg;
    size_t bound = (rt->bodies ? shape_event_bound(&m->et, row) : 0) + 2 * m->name_len + 48;
    for (size_t j = 0; j < cfg->nkey_columns; j++) bound += text_bound(&row->values[m->key_cols[j]]) + 1;
    for (size_t h = 0; h < cfg->nheaders; h++)
        if (m->header_cols[h] >= 0) bound += text_bound(&row->values[m->header_cols[h]]);
    if (arena_reserve(b, bound) != 0) return -1;
    char *base = b->arena, *p = base + b->len;
    b->body_off[i] = b->len;
    if (rt->bodies) p = shape_event_encode(&m->et, cfg->envelope, seq, row, p);
    size_t body_len = (size_t)(p - (base + b->body_off[i]));
    /* key: the idempotency key, or the key columns joined by '|' */
    b->key_off[i] = (size_t)(p - base);
    char *idem = p;
    /* = shape_event_key, with the table name's length known */
    memcpy(p, m->et.name, m->name_len);
    p[m->name_len] = '/';
    p = shape_json_u64(p + m->name_len + 1, seq);
    size_t idem_len = (size_t)(p - idem);
    char *key = idem;
    size_t key_len = idem_len;
    if (cfg->nkey_columns) {
        key = p;
        for (size_t j = 0; j < cfg->nkey_columns; j++) {
            if (j) *p++ = '|';
            p = put_text(p, &row->values[m->key_cols[j]]);
        }
        key_len = (size_t)(p - key);
    }
    shape_emit_message *msg = &b->msgs[i];
    memset(msg, 0, offsetof(shape_emit_message, reason)); /* not the 256-byte reason: send fills it */
    msg->reason[0] = 0;
    msg->value_len = body_len;
    msg->key_len = key_len;
    msg->partition = cfg->partition;
    msg->table = m->et.name;
    if (cfg->timestamp_event_time && m->et.event_time_col >= 0) {
        const shape_gen_value *v = &row->values[m->et.event_time_col];
        if (v->kind == SHAPE_GEN_TIMESTAMP_NS) {
            int64_t ms = v->v.i / 1000000;
            if (v->v.i % 1000000 < 0) ms--;
            msg->timestamp_ms = ms;
        }
    }
    /* headers: shape-table, [shape-synthetic], user headers, [shape-key] */
    shape_emit_header *hd = &b->hdrs[i * rt->nh];
    size_t *ho = &b->hval_off[i * rt->nh];
    size_t h = 0;
    hd[h] = (shape_emit_header){"shape-table", m->et.name, m->name_len};
    ho[h++] = SIZE_MAX;
    if (cfg->synthetic) {
        hd[h] = (shape_emit_header){"shape-synthetic", "true", 4};
        ho[h++] = SIZE_MAX;
    }
    for (size_t u = 0; u < cfg->nheaders; u++) {
        if (m->header_cols[u] >= 0) {
            char *v = p;
            p = put_text(p, &row->values[m->header_cols[u]]);
            hd[h] = (shape_emit_header){rt->hdrs[u].name, NULL, (size_t)(p - v)};
            ho[h++] = (size_t)(v - base);
        } else {
            hd[h] = (shape_emit_header){rt->hdrs[u].name, rt->hdrs[u].value, strlen(rt->hdrs[u].value)};
            ho[h++] = SIZE_MAX;
        }
    }
    if (cfg->nkey_columns) {
        hd[h] = (shape_emit_header){"shape-key", NULL, idem_len};
        ho[h++] = b->key_off[i];
        b->key_off[i] = (size_t)(key - base);
    }
    msg->header_count = h;
    b->len = (size_t)(p - base);
    return 0;
}

/* Event b->n of batch b from row (table k, position seq): its message, its
 * typed row when a destination wants rows, and the batch's earliest event
 * time. Both orders (table and event time) fill batches through it. */
static inline __attribute__((always_inline)) int add_event(runtime *rt, batch *b, table_meta *m, size_t k, uint64_t seq,
                                                           const shape_gen_row *row, shape_err *err)
{
    if (render_event(rt, b, b->n, m, seq, row) != 0)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory rendering events");
    b->rtab[b->n] = (uint32_t)k;
    if (rt->want_rows) {
        b->ridx[b->n] = (uint32_t)shape_batch_rows(m->rows.builder);
        SHAPE_RETURN_NOT_OK(shape_event_rows_append(&m->rows, seq, row, err));
    }
    if (m->et.event_time_col >= 0) {
        const shape_gen_value *v = &row->values[m->et.event_time_col];
        if (v->kind == SHAPE_GEN_TIMESTAMP_NS && v->v.i < b->min_time) b->min_time = v->v.i;
    }
    return SHAPE_OK;
}

int shape_emit_render_event(runtime *rt, batch *b, size_t i, const table_meta *m, uint64_t seq,
                            const shape_gen_row *row)
{
    return render_event(rt, b, i, m, seq, row);
}

static void batch_fix(runtime *rt, batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        shape_emit_message *m = &b->msgs[i];
        m->value = b->arena + b->body_off[i];
        m->key = b->arena + b->key_off[i];
        m->headers = &b->hdrs[i * rt->nh];
        if (b->rows.release) {
            size_t k = b->rtab[i];
            m->row_schema = &rt->meta[k].rows.schema;
            m->row_array = k == b->k ? &b->rows : &b->xrows[k];
            m->row = (int64_t)b->ridx[i];
        }
        for (size_t h = 0; h < m->header_count; h++)
            if (b->hval_off[i * rt->nh + h] != SIZE_MAX)
                b->hdrs[i * rt->nh + h].value = b->arena + b->hval_off[i * rt->nh + h];
    }
}

/* The schedule units of a batch: its event count, or with Poisson arrivals
 * the sum of its events' gaps (keyed by global position). */
static double batch_units(const shape_emit_config *cfg, const batch *b, uint64_t first, uint64_t stride)
{
    if (!cfg->schedule || !cfg->schedule->poisson) return (double)b->n;
    double sum = 0;
    for (size_t i = 0; i < b->n; i++)
        sum += shape_emit_arrival_gap(cfg->schedule->seed, first + (b->offset + i) * stride);
    return sum;
}

/* Render up to n originals of table b->k from b->row0 (stride apart) into b,
 * each followed by the copies due after it; stops early when the copies fill
 * the batch. Sets b->n (messages) and b->norig (originals). */
static int fill_batch(runtime *rt, fault_state *fs, batch *b, shape_domain_cursor *cur, shape_gen_row *row, size_t n,
                      shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    const int faults = fs != NULL;
    table_meta *m = &rt->meta[b->k];
    int rc = SHAPE_OK;
    b->n = 0;
    b->norig = 0;
    b->len = 0;
    if (rt->want_rows && !m->rows_made) {
        rc = shape_event_rows_init(&m->rows, &m->et, err);
        m->rows_made = rc == SHAPE_OK;
    }
    if (faults && rc == SHAPE_OK && b->offset > 0) /* copies a full batch left over */
        rc = shape_emit_faults_copies(rt, fs, b, b->offset - 1, row, err);
    b->min_time = INT64_MAX;
    for (size_t i = 0; i < n && rc == SHAPE_OK && b->n < b->mcap; i++) {
        uint64_t seq = b->row0 + i * b->stride;
        uint32_t moved = 0;
        if (faults && cfg->out_of_order > 0 && shape_emit_ooo_row(rt, &fs->ow, b->k, seq, &seq, &moved) != SHAPE_OK)
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory ordering a window");
        if (rc == SHAPE_OK) rc = shape_domain_cursor_row(cur, seq, row, err);
        if (rc == SHAPE_OK) shift_times(cfg, row);
        uint32_t anomaly = rc == SHAPE_OK && faults && cfg->anomaly_fraction > 0
                               ? shape_emit_anomaly_apply(rt, fs, b->k, seq, row) : 0;
        if (rc == SHAPE_OK) rc = add_event(rt, b, m, b->k, seq, row, err);
        if (rc != SHAPE_OK) break;
        if (moved) {
            b->fault[b->n] |= FAULT_LATE;
            b->lmove[b->n] = moved;
        }
        if (anomaly) {
            b->fault[b->n] |= FAULT_ANOMALY;
            b->anom[b->n] = anomaly;
        }
        b->n++;
        b->norig++;
        if (faults) {
            rc = shape_emit_faults_after_original(rt, fs, b, b->n - 1, b->offset + i, b->k, seq);
            if (rc == SHAPE_OK) rc = shape_emit_faults_copies(rt, fs, b, b->offset + i, row, err);
        }
    }
    if (rc == SHAPE_OK && rt->want_rows) rc = shape_event_rows_finish(&m->rows, &b->rows, err);
    for (size_t k = 0; rc == SHAPE_OK && k < b->nxrows; k++) /* copies of other tables */
        if (k != b->k && rt->meta[k].rows_made && shape_batch_rows(rt->meta[k].rows.builder) > 0)
            rc = shape_event_rows_finish(&rt->meta[k].rows, &b->xrows[k], err);
    if (rc == SHAPE_OK) b->units = batch_units(cfg, b, b->stride > 1 ? cfg->shard_index : 0, b->stride);
    return rc;
}

/* ---- event-time order ---------------------------------------------------- */

/* Render the events at this run's positions b->offset .. b->offset + n − 1
 * of the timeline into b, each followed by the copies due after it (as
 * fill_batch): one message per event, whatever its table (a batch holds
 * several tables: each message names its own, and its typed rows go to that
 * table's array, b->rows for the first event's table, b->xrows for the
 * others). The walker gives each position's event (a shard's, a disordered
 * window's); the fault draws are keyed by the event's (table, row), the
 * copies' distances counted in this run's positions. */
static inline __attribute__((always_inline)) int fill_timeline(runtime *rt, fault_state *fs, batch *b, tl_walk *wk,
                                                             shape_domain_cursor **cur, shape_gen_row *row,
                                                             size_t n, const int faults, const int plain,
                                                             shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    const size_t ntables = cfg->plan->ntables;
    const uint64_t stride = shard_stride(cfg), first = stride > 1 ? cfg->shard_index : 0;
    int rc = SHAPE_OK;
    b->n = 0;
    b->norig = 0;
    b->len = 0;
    b->min_time = INT64_MAX;
    b->row0 = 0;
    b->stride = 1;
    b->k = 0; /* (until the first original: copies left over may come first) */
    if (rt->want_rows && !b->xrows) {
        b->xrows = calloc(ntables, sizeof *b->xrows);
        if (!b->xrows) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        b->nxrows = ntables;
    }
    if (faults && b->offset > 0) /* copies a full batch left over */
        rc = shape_emit_faults_copies(rt, fs, b, b->offset - 1, row, err);
    for (size_t i = 0; i < n && rc == SHAPE_OK && (!faults || b->n < b->mcap); i++) {
        size_t k, t;
        uint64_t seq;
        uint32_t moved = 0;
        if (plain) { /* the timeline's next event (walk_event's first case, without its tests) */
            if (!shape_domain_timeline_next(wk->tl, &t, &seq)) {
                rc = shape_err_set(err, SHAPE_EINTERNAL, "event-time stream ended early");
                break;
            }
            wk->at++;
            k = wk->plan_of[t];
        } else {
            rc = walk_event(rt, wk, first + (b->offset + i) * stride, &k, &seq, &moved, err);
            if (rc != SHAPE_OK) break;
        }
        table_meta *m = &rt->meta[k];
        if (i == 0) b->k = k;
        if (rt->want_rows && !m->rows_made) {
            rc = shape_event_rows_init(&m->rows, &m->et, err);
            m->rows_made = rc == SHAPE_OK;
        }
        if (rc == SHAPE_OK) rc = shape_domain_cursor_row(cur[k], seq, row, err);
        if (rc == SHAPE_OK) shift_times(cfg, row);
        uint32_t anomaly = rc == SHAPE_OK && faults && cfg->anomaly_fraction > 0
                               ? shape_emit_anomaly_apply(rt, fs, k, seq, row) : 0;
        if (rc == SHAPE_OK) rc = add_event(rt, b, m, k, seq, row, err);
        if (rc != SHAPE_OK) break;
        if (!plain && moved) {
            b->fault[b->n] |= FAULT_LATE;
            b->lmove[b->n] = moved;
        }
        if (anomaly) {
            b->fault[b->n] |= FAULT_ANOMALY;
            b->anom[b->n] = anomaly;
        }
        b->n++;
        b->norig++;
        if (faults) {
            rc = shape_emit_faults_after_original(rt, fs, b, b->n - 1, b->offset + i, k, seq);
            if (rc == SHAPE_OK) rc = shape_emit_faults_copies(rt, fs, b, b->offset + i, row, err);
        }
    }
    for (size_t k = 0; rc == SHAPE_OK && rt->want_rows && k < ntables; k++)
        if (rt->meta[k].rows_made && shape_batch_rows(rt->meta[k].rows.builder) > 0)
            rc = shape_event_rows_finish(&rt->meta[k].rows, k == b->k ? &b->rows : &b->xrows[k], err);
    if (rc == SHAPE_OK) b->units = batch_units(cfg, b, first, stride);
    return rc;
}

/* (three copies of the loop: with faults; without, the whole stream (the
 * common case: the timeline's next event, nothing else to test); without,
 * a shard) */
static int fill_batch_timeline(runtime *rt, fault_state *fs, batch *b, tl_walk *wk, shape_domain_cursor **cur,
                               shape_gen_row *row, size_t n, shape_err *err)
{
    if (fs) return fill_timeline(rt, fs, b, wk, cur, row, n, 1, 0, err);
    if (shard_stride(rt->cfg) == 1 && wk->at == b->offset) return fill_timeline(rt, NULL, b, wk, cur, row, n, 0, 1, err);
    return fill_timeline(rt, NULL, b, wk, cur, row, n, 0, 0, err);
}

/* A free batch from the pool, or NULL when the run stops. */
static batch *take_free(runtime *rt)
{
    pthread_mutex_lock(&rt->mu);
    while (!rt->stopping && (rt->free_count == 0 || rt->full_count >= rt->cfg->queue_batches))
        pthread_cond_wait(&rt->cond_free, &rt->mu);
    batch *b = rt->stopping ? NULL : rt->freeq[--rt->free_count];
    pthread_mutex_unlock(&rt->mu);
    return b;
}

/* Queue a filled batch (or give it back on failure). */
static void put_full(runtime *rt, batch *b, int rc)
{
    pthread_mutex_lock(&rt->mu);
    if (rc != SHAPE_OK) {
        rt->freeq[rt->free_count++] = b;
    } else {
        batch_fix(rt, b);
        rt->fullq[(rt->full_head + rt->full_count) % rt->npool] = b;
        rt->full_count++;
        if (rt->full_count > rt->max_depth) rt->max_depth = rt->full_count;
        pthread_cond_signal(&rt->cond_full);
    }
    pthread_mutex_unlock(&rt->mu);
}

/* The generator over the event-time merge (docs/EMIT.md "Event-time
 * order"): positions are the timeline's (a shard's every n-th), the start a
 * seek; faults as in table order, over the merged stream's positions. */
static int walk_locate(runtime *rt, void *ctx, uint64_t o, size_t *k, uint64_t *seq, shape_err *err)
{
    const uint64_t stride = shard_stride(rt->cfg), first = stride > 1 ? rt->cfg->shard_index : 0;
    uint32_t moved;
    return walk_event(rt, ctx, first + o * stride, k, seq, &moved, err);
}

static int generate_timeline(runtime *rt, fault_state *fs, shape_gen_row *row, shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    const shape_event_plan *plan = cfg->plan;
    shape_domain_cursor **cur = calloc(plan->ntables ? plan->ntables : 1, sizeof *cur);
    tl_walk wk;
    int rc = shape_emit_walk_open(rt, &wk, err);
    if (rc == SHAPE_OK && !cur) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t k = 0; rc == SHAPE_OK && k < plan->ntables; k++)
        rc = shape_domain_cursor_open(plan->domain, plan->table_ids[k], &cur[k], err);
    if (fs) fs->curs = cur;
    if (rc == SHAPE_OK && fs) rc = shape_emit_faults_prescan(rt, fs, walk_locate, &wk, err);
    uint64_t offset = cfg->start_offset;
    while (rc == SHAPE_OK && offset < cfg->limit) {
        uint64_t n = cfg->batch_events;
        if (n > cfg->limit - offset) n = cfg->limit - offset;
        batch *b = take_free(rt);
        if (!b) break;
        b->offset = offset;
        rc = fill_batch_timeline(rt, fs, b, &wk, cur, row, (size_t)n, err);
        put_full(rt, b, rc);
        offset += b->norig;
    }
    if (fs) fs->curs = NULL;
    shape_emit_walk_free(&wk);
    for (size_t k = 0; cur && k < plan->ntables; k++) shape_domain_cursor_free(cur[k]);
    free(cur);
    return rc;
}

void *shape_emit_generator_main(void *arg)
{
    runtime *rt = arg;
    const shape_emit_config *cfg = rt->cfg;
    shape_err err;
    shape_err_clear(&err);
    int rc = SHAPE_OK;
    shape_gen_row *row = malloc(sizeof *row);
    shape_domain_cursor *cur = NULL;
    size_t cur_k = SIZE_MAX;
    uint64_t offset = cfg->start_offset; /* in this shard's events */
    const uint64_t stride = shard_stride(cfg), first = stride > 1 ? cfg->shard_index : 0;
    fault_state fstate;
    memset(&fstate, 0, sizeof fstate);
    fault_state *fs = shape_emit_faults_on(cfg) ? &fstate : NULL;
    if (!row) rc = shape_err_set(&err, SHAPE_ENOMEM, "out of memory");
    if (rc == SHAPE_OK && shape_domain_is_timeline(cfg->plan->domain)) {
        rc = generate_timeline(rt, fs, row, &err);
        offset = cfg->limit;
    } else if (rc == SHAPE_OK && fs) {
        rc = shape_emit_faults_prescan(rt, fs, NULL, NULL, &err);
    }
    while (rc == SHAPE_OK && offset < cfg->limit) {
        size_t k;
        uint64_t r;
        rc = shape_event_plan_locate(cfg->plan, first + offset * stride, &k, &r, &err);
        if (rc != SHAPE_OK) break;
        if (k != cur_k) {
            shape_domain_cursor_free(cur);
            cur = NULL;
            rc = shape_domain_cursor_open(cfg->plan->domain, cfg->plan->table_ids[k], &cur, &err);
            if (rc != SHAPE_OK) break;
            cur_k = k;
        }
        uint64_t n = (cfg->plan->rows[k] - r + stride - 1) / stride; /* this table's rest, in the shard */
        if (n > cfg->batch_events) n = cfg->batch_events;
        if (n > cfg->limit - offset) n = cfg->limit - offset;
        batch *b = take_free(rt);
        if (!b) break;
        b->offset = offset;
        b->row0 = r;
        b->stride = stride;
        b->k = k;
        rc = fill_batch(rt, fs, b, cur, row, (size_t)n, &err);
        n = b->norig;
        put_full(rt, b, rc);
        offset += n;
    }
    shape_domain_cursor_free(cur);
    shape_emit_faults_free(&fstate);
    free(row);
    pthread_mutex_lock(&rt->mu);
    rt->gen_done = 1;
    rt->gen_rc = rc;
    rt->gen_err = err;
    pthread_cond_signal(&rt->cond_full);
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

/* Take the batch at the head of the queue (rt->mu held), or NULL when it is
 * empty; wakes the generator, which may be waiting for room. */
static batch *take_head(runtime *rt)
{
    if (rt->full_count == 0) return NULL;
    batch *b = rt->fullq[rt->full_head];
    rt->full_head = (rt->full_head + 1) % rt->npool;
    rt->full_count--;
    pthread_cond_signal(&rt->cond_free);
    return b;
}

/* Next batch, or NULL at the end of the stream (or a generator failure). */
batch *shape_emit_queue_next(runtime *rt)
{
    pthread_mutex_lock(&rt->mu);
    while (rt->full_count == 0 && !rt->gen_done) pthread_cond_wait(&rt->cond_full, &rt->mu);
    batch *b = take_head(rt);
    pthread_mutex_unlock(&rt->mu);
    return b;
}

/* The next batch if one is queued now, else NULL (never waits). */
batch *shape_emit_queue_try_next(runtime *rt)
{
    pthread_mutex_lock(&rt->mu);
    batch *b = take_head(rt);
    pthread_mutex_unlock(&rt->mu);
    return b;
}

/* Put a batch taken by shape_emit_queue_try_next back at the head of the queue. */
void shape_emit_queue_unget(runtime *rt, batch *b)
{
    pthread_mutex_lock(&rt->mu);
    rt->full_head = (rt->full_head + rt->npool - 1) % rt->npool;
    rt->fullq[rt->full_head] = b;
    rt->full_count++;
    pthread_mutex_unlock(&rt->mu);
}

void shape_emit_queue_recycle(runtime *rt, batch *b)
{
    batch_release_rows(b);
    pthread_mutex_lock(&rt->mu);
    rt->freeq[rt->free_count++] = b;
    pthread_cond_signal(&rt->cond_free);
    pthread_mutex_unlock(&rt->mu);
}

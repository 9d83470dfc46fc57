/* runtime.c — the emit runtime: generator thread → bounded queue → paced,
 * acknowledged sends → checkpoints (see shape/emit.h for the contract).
 *
 * Why: a stream must reach every destination at least once, in order, at the
 * asked rate without drift, never skipping an event and never letting the
 * checkpoint pass an event a destination has not acknowledged.
 * How:
 *   - batches are pooled (queue_batches + 2 of them, recycled): the generator
 *     takes a free one, renders up to batch_events events of one table into
 *     its arena (body, key, header values) and builds the messages (and
 *     their typed rows, for destinations that encode events themselves; the
 *     JSON bodies are left out when every destination encodes from the rows
 *     alone and no dead-letter destination may need them); the
 *     full queue holds at most queue_batches, so a slow sink blocks the
 *     generator rather than growing memory;
 *   - the sender starts its clock t0 at the first batch and sleeps until the
 *     absolute deadline t0 + due (clock_nanosleep TIMER_ABSTIME, in slices of
 *     at most 50 ms so a stop request is seen): oversleeping one batch never
 *     delays the next one's deadline, so the rate does not drift. Lateness
 *     (send time − deadline) goes into a 0.1 ms histogram for max and p99;
 *   - per destination, messages not DELIVERED are re-sent (only those) up to
 *     `retries` times with back-off × 2^n; REFUSED ones stop the run after
 *     the rest of the batch was sent, or, with a dead-letter destination,
 *     become shape-dead-letter v1 records delivered there (the batch counts
 *     only once they are);
 *   - the delivered offset moves only after every destination delivered the
 *     whole batch; a checkpoint thread flushes the destinations, then writes
 *     the offset (atomically) every checkpoint_every events or
 *     checkpoint_seconds, so fsync never sits on the pacing path; the final
 *     checkpoint is written synchronously by the sender;
 *   - a shard (shard_count > 1) walks only its positions: a batch holds
 *     rows row0, row0 + stride, ... of one table (stride = shard_count),
 *     and offsets count the shard's events (see shape/emit.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "shape/clock.h"
#include "shape/domain.h"
#include "shape/emit.h"
#include "shape/timestamp.h"

#define MAX_HEADERS 24
#define LAG_BUCKETS 10000 /* 0.1 ms each: up to 1 s; later sends go to the last */

/* ---- metadata ---------------------------------------------------------------- */

typedef struct header_spec {
    char *name;
    char *value;   /* static value, or NULL */
    char *column;  /* @column, or NULL */
} header_spec;

typedef struct table_meta {
    shape_event_table et;
    shape_event_rows rows; /* typed rows, for destinations that want them (made lazily) */
    int rows_made;
    int key_cols[SHAPE_GEN_MAX_COLUMNS];
    int header_cols[MAX_HEADERS]; /* column of an @column header, or -1 */
    size_t name_len;              /* strlen(et.name), measured once (used per event) */
} table_meta;

static int is_reserved(const char *name)
{
    return strncasecmp(name, "shape-", 6) == 0 || strncasecmp(name, "shape_", 6) == 0;
}

static void free_headers(header_spec *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(h[i].name);
        free(h[i].value);
        free(h[i].column);
    }
}

static int parse_headers(const shape_emit_config *cfg, header_spec *out, shape_err *err)
{
    if (cfg->nheaders > MAX_HEADERS - 4)
        return shape_err_set(err, SHAPE_EINVAL, "at most %d --header options", MAX_HEADERS - 4);
    memset(out, 0, sizeof(header_spec) * cfg->nheaders);
    for (size_t i = 0; i < cfg->nheaders; i++) {
        const char *text = cfg->headers[i];
        const char *eq = strchr(text, '=');
        int rc = SHAPE_OK;
        if (!eq)
            rc = shape_err_set(err, SHAPE_EINVAL, "headers must use name=value or name=@column");
        else if (eq == text)
            rc = shape_err_set(err, SHAPE_EINVAL, "header names must be nonempty strings");
        else {
            out[i].name = strndup(text, (size_t)(eq - text));
            if (eq[1] == '@')
                out[i].column = strdup(eq + 2);
            else
                out[i].value = strdup(eq + 1);
            if (!out[i].name || (!out[i].column && !out[i].value))
                rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
            else if (is_reserved(out[i].name))
                rc = shape_err_set(err, SHAPE_EINVAL, "shape-* header/property names are reserved");
        }
        if (rc != SHAPE_OK) {
            free_headers(out, i + 1);
            return rc;
        }
    }
    return SHAPE_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Build every table's metadata; unknown columns are refused up front. */
static int build_meta(const shape_emit_config *cfg, const header_spec *hdrs, table_meta *meta,
                      shape_err *err)
{
    const char *missing[SHAPE_GEN_MAX_COLUMNS + MAX_HEADERS];
    size_t nmissing = 0;
    if (cfg->nkey_columns > SHAPE_GEN_MAX_COLUMNS)
        return shape_err_set(err, SHAPE_EINVAL, "--key names at most %d columns", SHAPE_GEN_MAX_COLUMNS);
    for (size_t k = 0; k < cfg->plan->ntables; k++) {
        size_t id = cfg->plan->table_ids[k];
        const shape_domain *domain = cfg->plan->domain;
        const shape_domain_table *tab = shape_domain_table_at(domain, id);
        SHAPE_RETURN_NOT_OK(
            shape_event_table_init(&meta[k].et, tab->name, tab->cols, tab->ncols, tab->event_time_col, err));
        meta[k].name_len = strlen(meta[k].et.name);
        for (size_t j = 0; j < cfg->nkey_columns; j++) {
            meta[k].key_cols[j] = shape_domain_column_find(domain, id, cfg->key_columns[j]);
            if (meta[k].key_cols[j] < 0) missing[nmissing++] = cfg->key_columns[j];
        }
        for (size_t h = 0; h < cfg->nheaders; h++) {
            meta[k].header_cols[h] = hdrs[h].column ? shape_domain_column_find(domain, id, hdrs[h].column) : -1;
            if (hdrs[h].column && meta[k].header_cols[h] < 0) missing[nmissing++] = hdrs[h].column;
        }
        if (nmissing) {
            qsort(missing, nmissing, sizeof missing[0], cmp_str);
            char list[400] = "";
            size_t used = 0;
            for (size_t i = 0; i < nmissing && used < sizeof list - 80; i++) {
                if (i && strcmp(missing[i], missing[i - 1]) == 0) continue;
                used += (size_t)snprintf(list + used, sizeof list - used, "%s'%.60s'", used ? ", " : "",
                                         missing[i]);
            }
            return shape_err_set(err, SHAPE_EINVAL, "unknown metadata columns: [%s] (table '%s')", list,
                                 tab->name);
        }
    }
    return SHAPE_OK;
}

int shape_emit_check_metadata(const shape_emit_config *cfg, shape_err *err)
{
    header_spec hdrs[MAX_HEADERS];
    SHAPE_RETURN_NOT_OK(parse_headers(cfg, hdrs, err));
    table_meta *meta = calloc(cfg->plan->ntables ? cfg->plan->ntables : 1, sizeof *meta);
    int rc = meta ? build_meta(cfg, hdrs, meta, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    free(meta);
    free_headers(hdrs, cfg->nheaders);
    return rc;
}

/* ---- batches ----------------------------------------------------------------- */

typedef struct batch {
    uint64_t offset;  /* global offset of the first event */
    uint64_t row0;    /* row (= seq) of the first event */
    uint64_t stride;  /* rows between two events of the batch (the shard count, else 1) */
    size_t k;         /* plan index of its table */
    size_t n;
    char *arena;
    size_t len, cap;
    size_t *body_off; /* per event */
    size_t *key_off;
    size_t *hval_off; /* per event × nh: arena offset, or SIZE_MAX for a static value */
    shape_emit_message *msgs;
    shape_emit_header *hdrs; /* per event × nh */
    struct ArrowArray rows;  /* the events as typed rows (release NULL: none) */
} batch;

/* Batches sent together: the sender merges batches that are already due
 * (and, unpaced, already queued) into one send, so a destination whose
 * acknowledgement takes longer than the batch interval keeps the rate
 * instead of falling behind by a round trip per batch. */
#define MAX_GROUP 64
typedef struct group {
    batch *b[MAX_GROUP];
    size_t nb, n;
    shape_emit_message *msgs; /* the batches' messages, concatenated (runtime-owned); what a
                               * destination is handed, so it may change them: the batches
                               * keep the originals (group_message) */
    size_t *bi;               /* batch (in the group) of each message */
    uint64_t *ri;             /* seq of each message */
    int handed;               /* msgs went to a destination since they were copied */
    size_t refused, first_refused; /* REFUSED outcomes after the last send_msgs, when it
                                    * saw them all (refused_known), and the first one */
    int refused_known;
} group;

/* The original of the group's message i (as the generator built it). */
static const shape_emit_message *group_message(const group *g, size_t i)
{
    const batch *b = g->b[g->bi[i]];
    return &b->msgs[(g->ri[i] - b->row0) / b->stride];
}

typedef struct runtime {
    const shape_emit_config *cfg;
    int want_rows; /* a destination encodes events itself: build typed rows */
    int bodies;    /* render the JSON bodies (not when every destination encodes from the
                    * rows alone and no dead letter can need them) */
    header_spec hdrs[MAX_HEADERS];
    table_meta *meta;
    size_t nh; /* headers per message */
    /* queue */
    pthread_mutex_t mu;
    pthread_cond_t cond_full, cond_free;
    batch **pool;
    size_t npool;
    batch **fullq, **freeq;
    size_t full_head, full_count, free_count;
    int gen_done, stopping;
    int gen_rc;
    shape_err gen_err;
    size_t max_depth;
    /* checkpoint thread */
    pthread_mutex_t ck_mu;
    pthread_cond_t ck_cond;
    int ck_want, ck_quit, ck_failed;
    uint64_t ck_offset, ck_count;
    shape_err ck_err;
    /* dead letters */
    char *dl_buf;
    size_t dl_cap;
    shape_emit_message *dl_msgs;
    shape_emit_header *dl_hdrs;
    /* sender scratch */
    group grp;
    size_t max_group;
    shape_emit_message *tmp;
    size_t *tmp_idx;
    uint32_t lag_hist[LAG_BUCKETS + 1];
    uint64_t lag_n;
} runtime;

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

static void batch_release_rows(batch *b)
{
    if (b->rows.release) b->rows.release(&b->rows);
    b->rows.release = NULL;
}

static void batch_free(batch *b)
{
    if (!b) return;
    batch_release_rows(b);
    free(b->arena);
    free(b->body_off);
    free(b->key_off);
    free(b->hval_off);
    free(b->msgs);
    free(b->hdrs);
    free(b);
}

static batch *batch_new(size_t cap, size_t nh)
{
    batch *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->body_off = malloc(cap * sizeof(size_t));
    b->key_off = malloc(cap * sizeof(size_t));
    b->hval_off = malloc(cap * nh * sizeof(size_t) + 1);
    b->msgs = calloc(cap, sizeof(shape_emit_message));
    b->hdrs = calloc(cap * nh + 1, sizeof(shape_emit_header));
    if (!b->body_off || !b->key_off || !b->hval_off || !b->msgs || !b->hdrs) {
        batch_free(b);
        return NULL;
    }
    return b;
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

/* Render one event of table meta m into batch b at position i. */
static int render_event(runtime *rt, batch *b, size_t i, const table_meta *m, uint64_t seq,
                        const shape_gen_row *row)
{
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

/* Arena offsets → pointers, once the arena stops moving. */
static void batch_fix(runtime *rt, batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        shape_emit_message *m = &b->msgs[i];
        m->value = b->arena + b->body_off[i];
        m->key = b->arena + b->key_off[i];
        m->headers = &b->hdrs[i * rt->nh];
        if (b->rows.release) {
            m->row_schema = &rt->meta[b->k].rows.schema;
            m->row_array = &b->rows;
            m->row = (int64_t)i;
        }
        for (size_t h = 0; h < m->header_count; h++)
            if (b->hval_off[i * rt->nh + h] != SIZE_MAX)
                b->hdrs[i * rt->nh + h].value = b->arena + b->hval_off[i * rt->nh + h];
    }
}

/* Events this run's stream holds: the plan's, or this shard's share of it. */
static uint64_t stream_total(const shape_emit_config *cfg)
{
    return shape_emit_shard_events(cfg->plan->total, cfg->shard_index, cfg->shard_count);
}

static uint64_t shard_stride(const shape_emit_config *cfg)
{
    return cfg->shard_count > 1 ? cfg->shard_count : 1;
}

/* ---- the generator thread ----------------------------------------------------- */

static void *generator_main(void *arg)
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
    if (!row) rc = shape_err_set(&err, SHAPE_ENOMEM, "out of memory");
    while (rc == SHAPE_OK && offset < cfg->limit) {
        size_t k;
        uint64_t r;
        rc = shape_event_plan_locate(cfg->plan, first + offset * stride, &k, &r, &err);
        if (rc != SHAPE_OK) break;
        if (k != cur_k) {
            shape_domain_cursor_close(cur);
            cur = NULL;
            rc = shape_domain_cursor_open(cfg->plan->domain, cfg->plan->table_ids[k], &cur, &err);
            if (rc != SHAPE_OK) break;
            cur_k = k;
        }
        uint64_t n = (cfg->plan->rows[k] - r + stride - 1) / stride; /* this table's rest, in the shard */
        if (n > cfg->batch_events) n = cfg->batch_events;
        if (n > cfg->limit - offset) n = cfg->limit - offset;
        /* a free batch */
        pthread_mutex_lock(&rt->mu);
        while (!rt->stopping && (rt->free_count == 0 || rt->full_count >= cfg->queue_batches))
            pthread_cond_wait(&rt->cond_free, &rt->mu);
        if (rt->stopping) {
            pthread_mutex_unlock(&rt->mu);
            break;
        }
        batch *b = rt->freeq[--rt->free_count];
        pthread_mutex_unlock(&rt->mu);
        b->offset = offset;
        b->row0 = r;
        b->stride = stride;
        b->k = k;
        b->n = (size_t)n;
        b->len = 0;
        table_meta *m = &rt->meta[k];
        if (rt->want_rows && !m->rows_made) {
            rc = shape_event_rows_init(&m->rows, &m->et, &err);
            m->rows_made = rc == SHAPE_OK;
        }
        for (size_t i = 0; i < b->n && rc == SHAPE_OK; i++) {
            uint64_t seq = r + i * stride;
            rc = shape_domain_cursor_row(cur, seq, row, &err);
            if (rc == SHAPE_OK && render_event(rt, b, i, m, seq, row) != 0)
                rc = shape_err_set(&err, SHAPE_ENOMEM, "out of memory rendering events");
            if (rc == SHAPE_OK && rt->want_rows) rc = shape_event_rows_append(&m->rows, seq, row, &err);
        }
        if (rc == SHAPE_OK && rt->want_rows) rc = shape_event_rows_finish(&m->rows, &b->rows, &err);
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
        offset += n;
    }
    shape_domain_cursor_close(cur);
    free(row);
    pthread_mutex_lock(&rt->mu);
    rt->gen_done = 1;
    rt->gen_rc = rc;
    rt->gen_err = err;
    pthread_cond_signal(&rt->cond_full);
    pthread_mutex_unlock(&rt->mu);
    return NULL;
}

/* Next batch, or NULL at the end of the stream (or a generator failure). */
static batch *next_batch(runtime *rt)
{
    pthread_mutex_lock(&rt->mu);
    while (rt->full_count == 0 && !rt->gen_done) pthread_cond_wait(&rt->cond_full, &rt->mu);
    batch *b = NULL;
    if (rt->full_count > 0) {
        b = rt->fullq[rt->full_head];
        rt->full_head = (rt->full_head + 1) % rt->npool;
        rt->full_count--;
        pthread_cond_signal(&rt->cond_free);
    }
    pthread_mutex_unlock(&rt->mu);
    return b;
}

/* The next batch if one is queued now, else NULL (never waits). */
static batch *try_next_batch(runtime *rt)
{
    pthread_mutex_lock(&rt->mu);
    batch *b = NULL;
    if (rt->full_count > 0) {
        b = rt->fullq[rt->full_head];
        rt->full_head = (rt->full_head + 1) % rt->npool;
        rt->full_count--;
        pthread_cond_signal(&rt->cond_free);
    }
    pthread_mutex_unlock(&rt->mu);
    return b;
}

/* Put a batch taken by try_next_batch back at the head of the queue. */
static void unget_batch(runtime *rt, batch *b)
{
    pthread_mutex_lock(&rt->mu);
    rt->full_head = (rt->full_head + rt->npool - 1) % rt->npool;
    rt->fullq[rt->full_head] = b;
    rt->full_count++;
    pthread_mutex_unlock(&rt->mu);
}

static void recycle(runtime *rt, batch *b)
{
    batch_release_rows(b);
    pthread_mutex_lock(&rt->mu);
    rt->freeq[rt->free_count++] = b;
    pthread_cond_signal(&rt->cond_free);
    pthread_mutex_unlock(&rt->mu);
}

/* ---- checkpoints ------------------------------------------------------------------ */

static int flush_all(const shape_emit_config *cfg, shape_err *err)
{
    for (size_t d = 0; d < cfg->ndests; d++)
        if (cfg->dests[d].type->flush)
            SHAPE_RETURN_NOT_OK(cfg->dests[d].type->flush(cfg->dests[d].emitter, err));
    return SHAPE_OK;
}

static int write_checkpoint(const shape_emit_config *cfg, uint64_t offset, int complete, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(flush_all(cfg, err));
    if (!cfg->checkpoint_path) return SHAPE_OK;
    shape_emit_checkpoint ck;
    memset(&ck, 0, sizeof ck);
    snprintf(ck.fingerprint, sizeof ck.fingerprint, "%s", cfg->fingerprint ? cfg->fingerprint : "");
    ck.offset = offset;
    ck.total = stream_total(cfg);
    ck.complete = complete;
    if (cfg->shard_count > 1)
        snprintf(ck.shard, sizeof ck.shard, "%llu/%llu", (unsigned long long)cfg->shard_index,
                 (unsigned long long)cfg->shard_count);
    return shape_emit_checkpoint_write(cfg->checkpoint_path, &ck, err);
}

static void *checkpoint_main(void *arg)
{
    runtime *rt = arg;
    pthread_mutex_lock(&rt->ck_mu);
    for (;;) {
        while (!rt->ck_want && !rt->ck_quit) pthread_cond_wait(&rt->ck_cond, &rt->ck_mu);
        if (!rt->ck_want) break;
        uint64_t off = rt->ck_offset;
        rt->ck_want = 0;
        pthread_mutex_unlock(&rt->ck_mu);
        shape_err err;
        shape_err_clear(&err);
        int rc = write_checkpoint(rt->cfg, off, off == stream_total(rt->cfg), &err);
        pthread_mutex_lock(&rt->ck_mu);
        if (rc != SHAPE_OK && !rt->ck_failed) {
            rt->ck_failed = rc;
            rt->ck_err = err;
        }
        if (rc == SHAPE_OK && rt->cfg->checkpoint_path) rt->ck_count++;
    }
    pthread_mutex_unlock(&rt->ck_mu);
    return NULL;
}

/* ---- delivery ----------------------------------------------------------------------- */

static void idem_key(runtime *rt, const batch *b, uint64_t seq, char *out, size_t size)
{
    const char *t = rt->meta[b->k].et.name;
    if (strlen(t) + 22 > size) {
        snprintf(out, size, "?");
        return;
    }
    *shape_event_key(out, t, seq) = 0;
}

/* Send msgs[0..n) to d, re-sending what was not delivered (only that) up to
 * cfg->retries times. Returns SHAPE_OK when every message is DELIVERED or
 * REFUSED; *attempts = sends made.
 * A destination may change the messages it is handed (the registry formats
 * replace values by wire bytes), so what it gets is always a copy whose
 * originals are kept elsewhere: with a group g (msgs == g->msgs, copied from
 * the batches), the first attempt hands msgs itself — no second copy of
 * every message on the way to the destination — after restoring them from
 * the batches if an earlier destination had them; retries copy the
 * undelivered originals into rt->tmp. Without a group (dead letters, rare),
 * every attempt goes through rt->tmp. */
static int send_msgs(runtime *rt, shape_emit_destination *d, shape_emit_message *msgs, size_t n, group *g,
                     int *attempts, shape_emit_report *rep, shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    const size_t fields = offsetof(shape_emit_message, outcome); /* what a message is, without its outcome */
    *attempts = 0;
    if (g) g->refused_known = 0;
    if (n == 0) return SHAPE_OK;
    /* A group's outcome slots were reset when it was built: only a group an
     * earlier destination had is restored and reset here. (Every pass over
     * a merged send's ~64k messages, ~370 bytes apart, misses the cache once
     * per message: passes are merged where they can be.) */
    if (g && g->handed)
        for (size_t i = 0; i < n; i++) memcpy(&msgs[i], group_message(g, i), fields);
    if (!g || g->handed)
        for (size_t i = 0; i < n; i++) {
            msgs[i].outcome = SHAPE_EMIT_PENDING;
            msgs[i].reason[0] = 0;
        }
    shape_err serr;
    shape_err_clear(&serr);
    for (int attempt = 0;; attempt++) {
        shape_emit_message *out = msgs;
        size_t m = n;
        if (attempt > 0 || !g) {
            out = rt->tmp;
            m = 0;
            for (size_t i = 0; i < n; i++) {
                int o = msgs[i].outcome;
                if (o == SHAPE_EMIT_DELIVERED || o == SHAPE_EMIT_REFUSED) continue;
                memcpy(&rt->tmp[m], g ? group_message(g, i) : &msgs[i], fields);
                rt->tmp[m].outcome = SHAPE_EMIT_PENDING;
                rt->tmp[m].reason[0] = 0;
                rt->tmp_idx[m++] = i;
            }
            if (m == 0) break;
        } else {
            g->handed = 1;
        }
        shape_err_clear(&serr);
        (*attempts)++;
        int rc = d->type->send(d->emitter, out, m, &serr);
        if (out != msgs)
            for (size_t j = 0; j < m; j++) {
                shape_emit_message *dst = &msgs[rt->tmp_idx[j]];
                dst->outcome = rt->tmp[j].outcome;
                memcpy(dst->reason, rt->tmp[j].reason, sizeof dst->reason);
            }
        if (rc != SHAPE_OK && rc != SHAPE_ECONN && rc != SHAPE_EIO) {
            *err = serr;
            if (!err->code) err->code = rc;
            return err->code;
        }
        size_t left = 0, first = SIZE_MAX, refused = 0, first_refused = SIZE_MAX;
        for (size_t j = 0; j < m; j++) {
            size_t i = out == msgs ? j : rt->tmp_idx[j];
            int o = msgs[i].outcome;
            if (o == SHAPE_EMIT_REFUSED) {
                if (!refused++) first_refused = i;
            } else if (o != SHAPE_EMIT_DELIVERED) {
                left++;
                if (first == SIZE_MAX) first = i;
            }
        }
        if (left == 0) {
            /* a first attempt saw every outcome: the caller needs no pass of its own */
            if (g && out == msgs) {
                g->refused = refused;
                g->first_refused = first_refused;
                g->refused_known = 1;
            }
            break;
        }
        if (attempt >= cfg->retries) {
            char cause[SHAPE_ERR_MESSAGE_MAX];
            if (serr.message[0])
                snprintf(cause, sizeof cause, "%s", serr.message);
            else
                snprintf(cause, sizeof cause, "%s: %zu of %zu messages not delivered (%s)", d->label, left,
                         m, msgs[first].reason[0] ? msgs[first].reason : "no reason given");
            return shape_err_set(err, SHAPE_ECONN, "delivery failed after %d retries: %.400s",
                                 cfg->retries, cause);
        }
        rep->retries++;
        double pause = cfg->retry_backoff;
        for (int i = 0; i < attempt && i < 30; i++) pause *= 2;
        if (pause > 0) shape_clock_sleep_until(shape_clock_now() + pause);
    }
    return SHAPE_OK;
}

static int utf8_valid(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t k;
        if (c < 0x80) k = 0;
        else if ((c >> 5) == 6) k = 1;
        else if ((c >> 4) == 14) k = 2;
        else if ((c >> 3) == 30) k = 3;
        else return 0;
        if (n - i - 1 < k) return 0;
        for (size_t j = 1; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80) return 0;
        i += k + 1;
    }
    return 1;
}

static void count_reason(shape_emit_report *rep, const char *reason)
{
    const char *r = reason[0] ? reason : "refused";
    for (size_t i = 0; i < rep->ndl_reasons; i++)
        if (strcmp(rep->dl_reasons[i].reason, r) == 0) {
            rep->dl_reasons[i].count++;
            return;
        }
    if (rep->ndl_reasons < SHAPE_EMIT_DL_REASONS) {
        snprintf(rep->dl_reasons[rep->ndl_reasons].reason, sizeof rep->dl_reasons[0].reason, "%s", r);
        rep->dl_reasons[rep->ndl_reasons++].count = 1;
        return;
    }
    /* past the distinct reasons kept: "other" (the last slot) */
    snprintf(rep->dl_reasons[SHAPE_EMIT_DL_REASONS].reason, sizeof rep->dl_reasons[0].reason, "other");
    rep->dl_reasons[SHAPE_EMIT_DL_REASONS].count++;
    rep->dl_other = 1;
}

static char *put_lit(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* Write a shape-dead-letter v1 record for every refused message of g (as
 * refused by d) and deliver them to the dead-letter destination. */
static int dead_letter(runtime *rt, group *g, shape_emit_destination *d, int attempts, shape_emit_report *rep,
                       shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    size_t need = 0, m = 0;
    /* per record: the key and the reason raw, then the record with every
     * text JSON-escaped (up to 6 bytes a byte) and the body as escaped text
     * or base64 */
    for (size_t i = 0; i < g->n; i++) {
        if (g->msgs[i].outcome != SHAPE_EMIT_REFUSED) continue;
        size_t table = strlen(rt->meta[g->b[g->bi[i]]->k].et.name);
        need += group_message(g, i)->value_len * 6 + 7 * (SHAPE_EMIT_REASON_MAX + table + 24) +
                6 * strlen(d->label) + 512;
    }
    if (need > rt->dl_cap) {
        char *nb = realloc(rt->dl_buf, need);
        if (!nb) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing dead letters");
        rt->dl_buf = nb;
        rt->dl_cap = need;
    }
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    char at[40];
    shape_format_iso8601_us((int64_t)wall.tv_sec * 1000000 + wall.tv_nsec / 1000, at, sizeof at);
    char *p = rt->dl_buf;
    for (size_t i = 0; i < g->n; i++) {
        const shape_emit_message *src = &g->msgs[i];          /* outcome and reason */
        const shape_emit_message *orig = group_message(g, i); /* the body as rendered */
        if (src->outcome != SHAPE_EMIT_REFUSED) continue;
        const char *table = rt->meta[g->b[g->bi[i]]->k].et.name;
        uint64_t seq = g->ri[i];
        const char *reason = src->reason[0] ? src->reason : "refused";
        count_reason(rep, reason);
        char *key = p;
        p = shape_event_key(p, table, seq);
        size_t key_len = (size_t)(p - key);
        char *why = p;
        p = put_lit(p, reason);
        size_t why_len = (size_t)(p - why);
        char *rec = p;
        p = put_lit(p, "{\"format\":\"shape-dead-letter\",\"version\":1,\"key\":");
        p = shape_json_string(p, key, key_len);
        p = put_lit(p, ",\"table\":");
        p = shape_json_string(p, table, strlen(table));
        p = put_lit(p, ",\"seq\":");
        p = shape_json_u64(p, seq);
        p = put_lit(p, ",\"reason\":");
        p = shape_json_string(p, reason, strlen(reason));
        p = put_lit(p, ",\"destination\":");
        p = shape_json_string(p, d->label, strlen(d->label));
        p = put_lit(p, ",\"attempts\":");
        p = shape_json_u64(p, (uint64_t)(attempts > 0 ? attempts : 1));
        p = put_lit(p, ",\"at\":");
        p = shape_json_string(p, at, strlen(at));
        p = put_lit(p, ",\"body\":");
        if (utf8_valid(orig->value, orig->value_len)) {
            p = shape_json_string(p, orig->value, orig->value_len);
        } else {
            p = shape_json_base64(p, orig->value, orig->value_len);
            p = put_lit(p, ",\"body_encoding\":\"base64\"");
        }
        p = put_lit(p, ",\"_shape_table\":");
        p = shape_json_string(p, table, strlen(table));
        p = put_lit(p, ",\"_shape_seq\":");
        p = shape_json_u64(p, seq);
        *p++ = '}';
        shape_emit_message *dl = &rt->dl_msgs[m];
        memset(dl, 0, sizeof *dl);
        dl->key = key;
        dl->key_len = key_len;
        dl->value = rec;
        dl->value_len = (size_t)(p - rec);
        dl->partition = -1;
        dl->table = "dead_letter";
        rt->dl_hdrs[2 * m] = (shape_emit_header){"shape-table", table, strlen(table)};
        rt->dl_hdrs[2 * m + 1] = (shape_emit_header){"shape-dead-letter-reason", why, why_len};
        dl->headers = &rt->dl_hdrs[2 * m];
        dl->header_count = 2;
        m++;
    }
    rep->dead_lettered += m;
    int dl_attempts;
    SHAPE_RETURN_NOT_OK(send_msgs(rt, cfg->dead_letter, rt->dl_msgs, m, NULL, &dl_attempts, rep, err));
    for (size_t j = 0; j < m; j++)
        if (rt->dl_msgs[j].outcome == SHAPE_EMIT_REFUSED)
            return shape_err_set(err, SHAPE_EINVAL, "the dead-letter destination refused a record (%.*s: %s)",
                                 (int)rt->dl_msgs[j].key_len, (const char *)rt->dl_msgs[j].key,
                                 rt->dl_msgs[j].reason[0] ? rt->dl_msgs[j].reason : "refused");
    return SHAPE_OK;
}

/* Send group g to destination d until every message is delivered, refused
 * messages dead-lettered, or the run must stop. */
static int deliver_to(runtime *rt, group *g, shape_emit_destination *d, shape_emit_report *rep,
                      shape_err *err)
{
    int attempts;
    SHAPE_RETURN_NOT_OK(send_msgs(rt, d, g->msgs, g->n, g, &attempts, rep, err));
    size_t refused = g->refused, first = g->first_refused;
    if (!g->refused_known) {
        refused = 0, first = SIZE_MAX;
        for (size_t i = 0; i < g->n; i++)
            if (g->msgs[i].outcome == SHAPE_EMIT_REFUSED) {
                refused++;
                if (first == SIZE_MAX) first = i;
            }
    }
    if (refused && rt->cfg->dead_letter) {
        rep->refused += refused;
        return dead_letter(rt, g, d, attempts, rep, err);
    }
    if (refused) {
        rep->refused += refused;
        char key[128];
        idem_key(rt, g->b[g->bi[first]], g->ri[first], key, sizeof key);
        return shape_err_set(err, SHAPE_EINVAL,
                             "the destination rejected %zu event%s (first %s: %s); use --dead-letter URI "
                             "to route them elsewhere",
                             refused, refused == 1 ? "" : "s", key,
                             g->msgs[first].reason[0] ? g->msgs[first].reason : "refused");
    }
    return SHAPE_OK;
}

/* ---- the run ------------------------------------------------------------------------ */

static double lag_p99(const runtime *rt)
{
    if (rt->lag_n == 0) return 0;
    uint64_t want = (rt->lag_n * 99 + 99) / 100, seen = 0;
    for (size_t i = 0; i <= LAG_BUCKETS; i++) {
        seen += rt->lag_hist[i];
        if (seen >= want) return (double)(i + 1) * 1e-4;
    }
    return 1.0;
}

static void progress_line(const shape_emit_config *cfg, uint64_t offset, uint64_t events, double t)
{
    fprintf(stderr, "\rshape emit: %llu events, offset %llu of %llu, %.0f events/s   ",
            (unsigned long long)events, (unsigned long long)offset,
            (unsigned long long)stream_total(cfg), t > 0 ? (double)events / t : 0.0);
    fflush(stderr);
}

int shape_emit_run(const shape_emit_config *cfg, shape_emit_report *rep, shape_err *err)
{
    memset(rep, 0, sizeof *rep);
    rep->start_offset = rep->end_offset = cfg->start_offset;
    rep->total_events = stream_total(cfg);
    rep->stopped_by = "complete";
    if (cfg->batch_events == 0 || cfg->queue_batches == 0)
        return shape_err_set(err, SHAPE_EINVAL, "batch and queue sizes must be at least 1");
    if (cfg->shard_count > 1 && cfg->shard_index >= cfg->shard_count)
        return shape_err_set(err, SHAPE_EINVAL, "shard %llu of %llu does not exist",
                             (unsigned long long)cfg->shard_index, (unsigned long long)cfg->shard_count);
    runtime *rt = calloc(1, sizeof *rt);
    if (!rt) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    rt->cfg = cfg;
    rt->bodies = cfg->ndests == 0 || cfg->dead_letter != NULL;
    for (size_t d = 0; d < cfg->ndests; d++) {
        int rows = cfg->dests[d].type->wants_rows ? cfg->dests[d].type->wants_rows(cfg->dests[d].emitter) : 0;
        if (rows) rt->want_rows = 1;
        if (rows != SHAPE_EMIT_ROWS_ONLY) rt->bodies = 1;
    }
    int rc = parse_headers(cfg, rt->hdrs, err);
    if (rc != SHAPE_OK) {
        free(rt);
        return rc;
    }
    rt->nh = 3 + cfg->nheaders;
    rt->meta = calloc(cfg->plan->ntables ? cfg->plan->ntables : 1, sizeof *rt->meta);
    rt->npool = cfg->queue_batches + 2;
    rt->pool = calloc(rt->npool, sizeof *rt->pool);
    rt->fullq = calloc(rt->npool, sizeof *rt->fullq);
    rt->freeq = calloc(rt->npool, sizeof *rt->freeq);
    rt->max_group = cfg->queue_batches < MAX_GROUP ? cfg->queue_batches : MAX_GROUP;
    while (rt->max_group > 1 && rt->max_group * cfg->batch_events > 100000) rt->max_group--;
    size_t gcap = rt->max_group * cfg->batch_events;
    rt->tmp = calloc(gcap, sizeof *rt->tmp);
    rt->tmp_idx = calloc(gcap, sizeof *rt->tmp_idx);
    rt->grp.msgs = calloc(gcap, sizeof *rt->grp.msgs);
    rt->grp.bi = calloc(gcap, sizeof *rt->grp.bi);
    rt->grp.ri = calloc(gcap, sizeof *rt->grp.ri);
    rt->dl_msgs = calloc(gcap, sizeof *rt->dl_msgs);
    rt->dl_hdrs = calloc(2 * gcap, sizeof *rt->dl_hdrs);
    if (!rt->meta || !rt->pool || !rt->fullq || !rt->freeq || !rt->tmp || !rt->tmp_idx || !rt->grp.msgs ||
        !rt->grp.bi || !rt->grp.ri || !rt->dl_msgs || !rt->dl_hdrs)
        rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc == SHAPE_OK) rc = build_meta(cfg, rt->hdrs, rt->meta, err);
    for (size_t i = 0; rc == SHAPE_OK && i < rt->npool; i++) {
        rt->pool[i] = batch_new(cfg->batch_events, rt->nh);
        if (!rt->pool[i]) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        else rt->freeq[rt->free_count++] = rt->pool[i];
    }
    pthread_t gen, ckt;
    int gen_started = 0, ck_started = 0;
    pthread_mutex_init(&rt->mu, NULL);
    pthread_cond_init(&rt->cond_full, NULL);
    pthread_cond_init(&rt->cond_free, NULL);
    pthread_mutex_init(&rt->ck_mu, NULL);
    pthread_cond_init(&rt->ck_cond, NULL);
    if (rc == SHAPE_OK) {
        if (pthread_create(&gen, NULL, generator_main, rt) != 0)
            rc = shape_err_set(err, SHAPE_EINTERNAL, "cannot start the generator thread");
        else
            gen_started = 1;
    }
    if (rc == SHAPE_OK) {
        if (pthread_create(&ckt, NULL, checkpoint_main, rt) != 0)
            rc = shape_err_set(err, SHAPE_EINTERNAL, "cannot start the checkpoint thread");
        else
            ck_started = 1;
    }

    uint64_t delivered = cfg->start_offset, last_ck = cfg->start_offset;
    uint64_t sent = 0;
    double t_start = shape_clock_now(), t0 = 0, first_delivery = 0, last_delivery = 0, last_ck_time = t_start;
    double last_progress = 0;
    size_t first_batch = 0; /* events of the first send */
    int started = 0;
    while (rc == SHAPE_OK) {
        if (cfg->stop && *cfg->stop) {
            rep->stopped_by = "stop-request";
            break;
        }
        batch *b = next_batch(rt);
        if (!b) break;
        double now = shape_clock_now();
        if (!started) {
            t0 = now;
            started = 1;
        }
        double due = 0;
        int paced = cfg->realtime || cfg->max_rate > 0;
        if (cfg->realtime) due = (double)sent / cfg->rate;
        if (cfg->max_rate > 0) {
            double cap = (double)(sent + b->n) / cfg->max_rate;
            if (cap > due) due = cap;
        }
        if (cfg->duration >= 0 && due >= cfg->duration) {
            double end = t0 + cfg->duration;
            while (shape_clock_now() < end && !(cfg->stop && *cfg->stop)) {
                double next = shape_clock_now() + 0.05;
                shape_clock_sleep_until(next < end ? next : end);
            }
            recycle(rt, b);
            rep->stopped_by = "duration";
            break;
        }
        if (paced) {
            double deadline = t0 + due;
            while ((now = shape_clock_now()) < deadline && !(cfg->stop && *cfg->stop)) {
                double next = now + 0.05;
                shape_clock_sleep_until(next < deadline ? next : deadline);
            }
            if (cfg->stop && *cfg->stop) {
                recycle(rt, b);
                rep->stopped_by = "stop-request";
                break;
            }
            double lag = now - deadline;
            if (lag < 0) lag = 0;
            if (lag > rep->max_lag) rep->max_lag = lag;
            size_t bucket = (size_t)(lag * 1e4);
            rt->lag_hist[bucket > LAG_BUCKETS ? LAG_BUCKETS : bucket]++;
            rt->lag_n++;
        }
        /* Merge the batches that are due already (paced) or queued (unpaced). */
        group *g = &rt->grp;
        g->nb = 0;
        g->n = 0;
        g->handed = 0;
        for (batch *x = b; x;) {
            for (size_t i = 0; i < x->n; i++) {
                /* the message without its outcome slot (~260 bytes of
                 * reason), whose outcome and reason are reset here */
                memcpy(&g->msgs[g->n + i], &x->msgs[i], offsetof(shape_emit_message, outcome));
                g->msgs[g->n + i].outcome = SHAPE_EMIT_PENDING; /* reset here, in the same pass */
                g->msgs[g->n + i].reason[0] = 0;
                g->bi[g->n + i] = g->nb;
                g->ri[g->n + i] = x->row0 + i * x->stride;
            }
            g->b[g->nb++] = x;
            g->n += x->n;
            x = NULL;
            if (g->nb >= rt->max_group || (cfg->stop && *cfg->stop)) break;
            batch *next = try_next_batch(rt);
            if (!next) break;
            double next_due = 0;
            if (cfg->realtime) next_due = (double)(sent + g->n) / cfg->rate;
            if (cfg->max_rate > 0) {
                double cap = (double)(sent + g->n + next->n) / cfg->max_rate;
                if (cap > next_due) next_due = cap;
            }
            if ((paced && t0 + next_due > shape_clock_now()) || (cfg->duration >= 0 && next_due >= cfg->duration)) {
                unget_batch(rt, next);
                break;
            }
            if (paced) {
                double lag = shape_clock_now() - (t0 + next_due);
                if (lag < 0) lag = 0;
                if (lag > rep->max_lag) rep->max_lag = lag;
                size_t bucket = (size_t)(lag * 1e4);
                rt->lag_hist[bucket > LAG_BUCKETS ? LAG_BUCKETS : bucket]++;
                rt->lag_n++;
            }
            x = next;
        }
        for (size_t d = 0; d < cfg->ndests && rc == SHAPE_OK; d++)
            rc = deliver_to(rt, g, &cfg->dests[d], rep, err);
        size_t n = g->n;
        for (size_t i = 0; i < g->nb; i++) recycle(rt, g->b[i]);
        if (rc != SHAPE_OK) break;
        now = shape_clock_now();
        if (rep->events == 0) {
            first_delivery = now;
            first_batch = n;
        }
        last_delivery = now;
        rep->events += n;
        sent += n;
        delivered += n;
        rep->end_offset = delivered;
        if (cfg->max_dead_letter >= 0 && rep->dead_lettered > (uint64_t)cfg->max_dead_letter) {
            rc = shape_err_set(err, SHAPE_ELIMIT, "stopped, more than %lld events were dead-lettered (%llu so far)",
                               (long long)cfg->max_dead_letter, (unsigned long long)rep->dead_lettered);
            rep->stopped_by = "dead-letter-limit";
            break;
        }
        /* a periodic checkpoint, handed to the checkpoint thread */
        if (delivered - last_ck >= cfg->checkpoint_every || now - last_ck_time >= cfg->checkpoint_seconds) {
            pthread_mutex_lock(&rt->ck_mu);
            if (rt->ck_failed) {
                *err = rt->ck_err;
                rc = rt->ck_failed;
            }
            rt->ck_offset = delivered;
            rt->ck_want = 1;
            pthread_cond_signal(&rt->ck_cond);
            pthread_mutex_unlock(&rt->ck_mu);
            last_ck = delivered;
            last_ck_time = now;
        }
        if (cfg->progress && now - last_progress >= 0.5) {
            progress_line(cfg, delivered, rep->events, now - t0);
            last_progress = now;
        }
        if (cfg->duration >= 0 && now - t0 >= cfg->duration) {
            rep->stopped_by = "duration";
            break;
        }
    }
    /* stop the generator (it may be waiting for room) and the checkpoint thread */
    pthread_mutex_lock(&rt->mu);
    rt->stopping = 1;
    pthread_cond_broadcast(&rt->cond_free);
    pthread_mutex_unlock(&rt->mu);
    if (gen_started) pthread_join(gen, NULL);
    if (ck_started) {
        pthread_mutex_lock(&rt->ck_mu);
        rt->ck_quit = 1;
        pthread_cond_signal(&rt->ck_cond);
        pthread_mutex_unlock(&rt->ck_mu);
        pthread_join(ckt, NULL);
    }
    if (rc == SHAPE_OK && rt->gen_rc != SHAPE_OK) {
        *err = rt->gen_err;
        rc = rt->gen_rc;
    }
    if (rc == SHAPE_OK && rt->ck_failed) {
        *err = rt->ck_err;
        rc = rt->ck_failed;
    }
    if (rc == SHAPE_ELIMIT) {
        /* stopped_by already says why */
    } else if (rc != SHAPE_OK) {
        rep->stopped_by = "error";
    } else if (strcmp(rep->stopped_by, "complete") == 0 && delivered < cfg->limit) {
        rep->stopped_by = "stop-request"; /* the generator ended early: only a stop does that */
    } else if (strcmp(rep->stopped_by, "complete") == 0 && cfg->limit < stream_total(cfg)) {
        rep->stopped_by = "max-events";
    }
    rep->complete = rc == SHAPE_OK && (strcmp(rep->stopped_by, "complete") == 0 ||
                                        strcmp(rep->stopped_by, "max-events") == 0);
    /* the final checkpoint, synchronously, at the last delivered offset */
    if (gen_started) {
        shape_err cerr;
        shape_err_clear(&cerr);
        int crc = write_checkpoint(cfg, delivered, rep->complete, &cerr);
        if (crc == SHAPE_OK && cfg->checkpoint_path) rt->ck_count++;
        if (crc != SHAPE_OK && (rc == SHAPE_OK || rc == SHAPE_ELIMIT)) {
            *err = cerr;
            rc = crc;
            rep->stopped_by = "error";
            rep->complete = 0;
        }
    }
    if (cfg->progress && started) fputs("\n", stderr);
    double end = shape_clock_now();
    rep->wall = end - t_start;
    rep->elapsed = rep->events ? last_delivery - first_delivery : 0;
    rep->rate = rep->elapsed > 0 ? (double)(rep->events - first_batch) / rep->elapsed : 0;
    rep->per_second = rep->wall > 0 ? (double)rep->events / rep->wall : 0;
    rep->max_queue_depth = rt->max_depth;
    rep->lag_p99 = lag_p99(rt);
    rep->checkpoints = rt->ck_count;
    for (size_t i = 0; i < rt->npool && rt->pool; i++) batch_free(rt->pool[i]);
    pthread_mutex_destroy(&rt->mu);
    pthread_cond_destroy(&rt->cond_full);
    pthread_cond_destroy(&rt->cond_free);
    pthread_mutex_destroy(&rt->ck_mu);
    pthread_cond_destroy(&rt->ck_cond);
    free_headers(rt->hdrs, cfg->nheaders);
    for (size_t k = 0; rt->meta && k < cfg->plan->ntables; k++)
        if (rt->meta[k].rows_made) shape_event_rows_release(&rt->meta[k].rows);
    free(rt->meta);
    free(rt->pool);
    free(rt->fullq);
    free(rt->freeq);
    free(rt->tmp);
    free(rt->tmp_idx);
    free(rt->grp.msgs);
    free(rt->grp.bi);
    free(rt->grp.ri);
    free(rt->dl_msgs);
    free(rt->dl_hdrs);
    free(rt->dl_buf);
    free(rt);
    return rc;
}

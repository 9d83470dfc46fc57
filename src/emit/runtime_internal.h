/* runtime_internal.h — what the rooms of the emit runtime share (internal to
 * libshape): the table metadata, the batches and the runtime handle.
 *
 * The runtime (shape/emit.h) is these files around one struct `runtime`:
 *   metadata.c     keys and headers: --header parsing, each table's metadata
 *                  (key and @column header column indexes), checked up front;
 *   queue.c        the batch pool, the generator thread (which renders each
 *                  event's body, key and headers into its batch) and the
 *                  bounded queue;
 *   dead_letter.c  shape-dead-letter v1 records for refused events;
 *   faults.c       the fault draws, duplicates (a heap of copies waiting for
 *                  their position), poison, and the answer key;
 *   disorder.c     out-of-order windows (rank -> row);
 *   timeline_walk.c  the event at each position of an event-time stream
 *                  (the domain's merge walked forward, shards, disorder);
 *   anomaly.c      the anomaly mutators;
 *   runtime.c      pacing (against schedule.c's deadlines, the virtual clock
 *                  of --speed, --max-rate), delivery with retries,
 *                  checkpoints, and the run (setup, loop, teardown).
 * A batch holds the events of one table's consecutive stream positions
 * (norig of them; in event-time order consecutive positions of the merged
 * stream, of any tables) and, with duplicates, the copies due among them; every
 * message carries its own seq and fault flags, since neither rows nor
 * messages are contiguous any more once faults are on.
 * Functions named shape_emit_* here are hidden: not part of libshape's ABI.
 */
#ifndef SHAPE_EMIT_RUNTIME_INTERNAL_H
#define SHAPE_EMIT_RUNTIME_INTERNAL_H

#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "shape/domain.h"
#include "shape/emit.h"

#define EMIT_HIDDEN __attribute__((visibility("hidden")))

#define MAX_HEADERS 24

/* Injected faults of a message (batch.fault). */
#define FAULT_DUPLICATE 1u /* this message is a copy */
#define FAULT_POISON 2u    /* its body was cut */
#define FAULT_LATE 4u      /* it was moved later in its window (disorder.c) */
#define FAULT_ANOMALY 8u   /* its row was chosen for an anomaly (anomaly.c; batch.anom says which) */

/* anomaly.c's answer for a row: chosen, changed, mutator << 16, change << 8, column. */
#define ANOMALY_SELECTED (1u << 31)
#define ANOMALY_AFFECTED (1u << 30)
#define MAX_MUTATORS 8
#define LAG_BUCKETS 10000 /* 0.1 ms each: up to 1 s; later sends go to the last */

/* ---- metadata (metadata.c) ---------------------------------------------------- */

typedef struct header_spec {
    char *name;
    char *value;   /* static value, or NULL */
    char *column;  /* @column, or NULL */
} header_spec;

/* Fault draws are keyed by (seed, what, table, seq); `what` names the kind
 * of draw (faults.c 1-3, disorder.c 11-12, anomaly.c 21-24), all below
 * DRAW_KINDS. The first of each file's are made inline (below). */
#define DRAW_KINDS 25
enum { DRAW_DUPLICATE = 1, DRAW_DUPLICATE_DISTANCE = 2, DRAW_POISON = 3, DRAW_ANOMALY = 21 };

typedef struct table_meta {
    shape_event_table et;
    shape_event_rows rows; /* typed rows, for destinations that want them (made lazily) */
    int rows_made;
    int key_cols[SHAPE_GEN_MAX_COLUMNS];
    int header_cols[MAX_HEADERS]; /* column of an @column header, or -1 */
    size_t name_len;              /* strlen(et.name), measured once (used per event) */
    uint64_t name_hash;           /* keys the table's fault draws (faults.c) */
    uint64_t draw_key[DRAW_KINDS]; /* shape_emit_draw_key(fault_seed, what, name_hash) per draw kind */
} table_meta;

/* ---- batches (queue.c) --------------------------------------------------------- */

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
    /* typed rows of duplicate copies of other tables (plan index → array,
     * release NULL: none; made when a copy of another table lands here) */
    struct ArrowArray *xrows;
    size_t nxrows;
    /* per message (mcap of them: batch_events, and room for duplicate copies) */
    uint64_t *seq;           /* the event's seq */
    uint8_t *fault;          /* FAULT_* flags of an injected fault, 0 for none */
    uint32_t *fdet;          /* its detail: a copy's distance, a poison cut's original length */
    uint32_t *lmove;         /* a late event's moved_up_to */
    uint32_t *anom;          /* an anomalous row's ANOMALY_* word */
    uint32_t *rtab;          /* plan index of the message's table (an original's always; a copy's
                              * for typed rows: it may differ from the batch's) */
    uint32_t *ridx;          /* typed rows: its row in that table's array */
    size_t norig;            /* messages that are stream positions (n − copies) */
    size_t mcap;
    double units;            /* schedule units of its events: n, or their Poisson gaps */
    int64_t min_time;        /* earliest event time (ns), INT64_MAX when none */
} batch;

/* Batches sent together: the sender merges batches that are already due
 * (and, unpaced, already queued) into one send, so a destination whose
 * acknowledgement takes longer than the batch interval keeps the rate
 * instead of falling behind by a round trip per batch. With a destination
 * that pipelines (submit/complete, plugin ABI 6) several groups are in
 * flight at once (runtime.c), each with its own messages. */
#define MAX_GROUP 64
/* Groups in flight, pipelined: as many as the bound on batches in flight
 * (16 by default), so a group is one batch. Finer groups finish sooner, so
 * the generator, which has only the pool's 2 spare batches while the rest
 * are in flight, gets each batch back as soon as it is acknowledged instead
 * of four at a time (A/B against 4 groups of 4: bench/analysis.md). The
 * Kafka emitter takes up to 32 open submissions (this plus a retry's). */
#define PIPE_DEPTH 16
#define GROUP_SUBMITTED 1
#define GROUP_SUBMIT_FAILED 2
typedef struct group {
    batch *b[MAX_GROUP];
    size_t nb, n;
    double units;             /* schedule units of its batches */
    shape_emit_message *msgs; /* the batches' messages, concatenated (runtime-owned); what a
                               * destination is handed, so it may change them: the batches
                               * keep the originals (group_message) */
    size_t *bi;               /* batch (in the group) of each message */
    size_t *mi;               /* its index in that batch */
    uint64_t *ri;             /* seq of each message */
    size_t norig;             /* stream positions it holds (messages − duplicate copies) */
    int handed;               /* msgs went to a destination since they were copied */
    size_t refused, first_refused; /* REFUSED outcomes after the last send_msgs, when it
                                    * saw them all (refused_known), and the first one */
    int refused_known;
    /* pipelined (runtime.c): GROUP_SUBMITTED, msgs went to the destination's
     * submit and its complete is owed; GROUP_SUBMIT_FAILED, submit answered
     * submit_rc (submit_err); 0 otherwise */
    int submitted, submit_rc;
    shape_err submit_err;
} group;

/* The original of the group's message i (as the generator built it). */
static inline const shape_emit_message *group_message(const group *g, size_t i)
{
    return &g->b[g->bi[i]]->msgs[g->mi[i]];
}

/* ---- the runtime ----------------------------------------------------------------- */

typedef struct runtime {
    const shape_emit_config *cfg;
    int stopped_in_send; /* a stop request ended a send that waited: the group in hand is not delivered */
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
    /* sender scratch: the groups in flight, a ring of `depth` (1 unless the
     * run's one destination pipelines), oldest at fly_head */
    group *fly;
    size_t depth, fly_head, fly_count;
    size_t fly_batches, max_in_flight; /* batches the groups in flight hold, and their bound */
    int pipelined;
    size_t max_group; /* batches a group may merge */
    shape_emit_message *tmp;
    size_t *tmp_idx;
    uint32_t lag_hist[LAG_BUCKETS + 1];
    uint64_t lag_n;
    /* threads, and the sender's clock and counters (runtime.c) */
    pthread_t gen, ckt;
    int gen_started, ck_started;
    uint64_t delivered, last_ck, sent;
    double t_start, t0, first_delivery, last_delivery, last_ck_time, last_progress;
    size_t first_batch; /* events of the first send */
    int started;
    /* the schedule's position (runtime.c): units of the events sent, the
     * schedule cursor, the virtual clock of --speed */
    double units, vdue;
    shape_schedule_cursor cursor;
    int64_t vt0;
    int vt_started;
    FILE *answer_key; /* appended to, or NULL */
    /* the fault fractions as shape_emit_threshold's integers (runtime.c) */
    uint64_t thr_poison, thr_duplicate, thr_anomaly, thr_late;
    int mutators[MAX_MUTATORS]; /* anomaly.c's mutator ids */
    size_t nmutators;
} runtime;

/* Events this run's stream holds: the plan's, or this shard's share of it. */
static inline uint64_t stream_total(const shape_emit_config *cfg)
{
    return shape_emit_shard_events(cfg->plan->total, cfg->shard_index, cfg->shard_count);
}

static inline uint64_t shard_stride(const shape_emit_config *cfg)
{
    return cfg->shard_count > 1 ? cfg->shard_count : 1;
}

/* ---- faults (faults.c) ------------------------------------------------------------ */

/* A copy waiting for its position: the original at stream position `pos`
 * (of this run's stream: shard offsets) is sent again right after position `due`. */
typedef struct pending_copy {
    uint64_t due, pos, seq;
    size_t k;
} pending_copy;

/* The order of one window of one table (disorder.c). */
typedef struct ooo_window {
    int valid;
    size_t k;
    uint64_t w;
    void *slots; /* ooo_window rows: row and moved_up_to by rank */
} ooo_window;

typedef struct fault_state {
    ooo_window ow;
    pending_copy *heap; /* min-heap by (due, pos) */
    size_t n, cap;
    shape_domain_cursor *cur; /* for the copies' rows (table order) */
    size_t cur_k;
    shape_domain_cursor **curs; /* event-time order: the generator's cursor per plan table
                                 * (borrowed), used for the copies' rows instead of cur */
    char scratch[4096];       /* a mutated value's text (anomaly.c), valid until the next row */
} fault_state;

/* A uniform draw in [0, 1) keyed by (seed, what, table, seq): the first
 * two mixing rounds depend on (seed, what, table) alone, so they are made
 * once per table and kind (table_meta.draw_key) and a draw per event is
 * one round, shape_emit_draw_keyed(key, seq). */
static inline uint64_t shape_emit_draw_key(uint64_t seed, uint64_t what, uint64_t table_hash)
{
    return shape_gen_mix64(shape_gen_mix64(seed ^ (what * 0x9e3779b97f4a7c15ULL)) ^ table_hash);
}

static inline double shape_emit_draw_keyed(uint64_t key, uint64_t seq)
{
    return (double)(shape_gen_mix64(key + seq) >> 11) * (1.0 / 9007199254740992.0);
}

/* shape_emit_draw_keyed(key, seq) < f, decided without the double: the draw
 * is m·2⁻⁵³ for the integer m = mix >> 11 < 2⁵³, so it is below f exactly
 * when m < f·2⁵³ (a scaling by a power of two: exact), that is when
 * m < ⌈f·2⁵³⌉ — the same decisions, a conversion and a multiply fewer per
 * event and kind. */
static inline uint64_t shape_emit_threshold(double f)
{
    if (!(f > 0)) return 0;
    if (f >= 1) return 9007199254740992ULL;
    double t = f * 9007199254740992.0;
    uint64_t c = (uint64_t)t;
    return (double)c < t ? c + 1 : c;
}

static inline int shape_emit_drawn(uint64_t key, uint64_t seq, uint64_t threshold)
{
    return (shape_gen_mix64(key + seq) >> 11) < threshold;
}

static inline double shape_emit_draw(uint64_t seed, uint64_t what, uint64_t table_hash, uint64_t seq)
{
    return shape_emit_draw_keyed(shape_emit_draw_key(seed, what, table_hash), seq);
}
EMIT_HIDDEN int shape_emit_faults_on(const shape_emit_config *cfg);
/* Duplicates or poison (which change the messages, not only their order). */
EMIT_HIDDEN int shape_emit_delivery_faults_on(const shape_emit_config *cfg);
EMIT_HIDDEN uint64_t shape_emit_name_hash(const char *name);
/* disorder.c: the row at stream rank `rank` of plan table k, and its moved_up_to (0: in place). */
EMIT_HIDDEN int shape_emit_ooo_row(runtime *rt, ooo_window *ow, size_t k, uint64_t rank, uint64_t *row,
                                   uint32_t *moved);
EMIT_HIDDEN void shape_emit_ooo_free(ooo_window *ow);

/* ---- event-time positions (timeline_walk.c) --------------------------------------- */

/* One event of a disordered window, in stream order. */
typedef struct tl_event {
    uint64_t row;
    uint32_t k;     /* plan table */
    uint32_t moved; /* moved_up_to, 0 when in place */
} tl_event;

/* disorder.c, event-time order: order window w (positions w·W ..) from its n
 * events' plan tables and rows (by position − w·W) into out[0..n), the
 * window's events in stream order. */
EMIT_HIDDEN int shape_emit_ooo_order_positions(runtime *rt, ooo_window *ow, uint64_t w, uint64_t n,
                                               const uint32_t *tab, const uint64_t *row, tl_event *out);

typedef struct tl_walk {
    shape_domain_timeline *tl;
    size_t *plan_of; /* domain table -> plan index */
    uint64_t total;
    uint64_t at;     /* the timeline's next position */
    uint64_t W;      /* out-of-order window (0: no disorder) */
    ooo_window ow;
    uint32_t *wtab;  /* the window's events, by position − lo: plan table, row */
    uint64_t *wrow;
    tl_event *ev;    /* ... and in stream order: rank − lo */
    uint64_t lo, wn; /* the window in hand: positions [lo, lo + wn) (wn 0: none) */
} tl_walk;

EMIT_HIDDEN int shape_emit_walk_open(runtime *rt, tl_walk *w, shape_err *err);
/* The event at global position g (asked in ascending order, mostly): plan
 * table, row, and moved_up_to when disorder moved it (else 0). The common
 * cases (the timeline's next event; a position of the window in hand) are
 * inline below, the rest (a walk or seek, the next window) here. */
EMIT_HIDDEN int shape_emit_walk_event(runtime *rt, tl_walk *w, uint64_t g, size_t *k, uint64_t *row,
                                      uint32_t *moved, shape_err *err);
EMIT_HIDDEN void shape_emit_walk_free(tl_walk *w);

static inline int walk_event(runtime *rt, tl_walk *w, uint64_t g, size_t *k, uint64_t *row, uint32_t *moved,
                             shape_err *err)
{
    if (w->W) {
        if (g - w->lo < w->wn) { /* (g < lo wraps past wn) */
            const tl_event *e = &w->ev[g - w->lo];
            *k = e->k;
            *row = e->row;
            *moved = e->moved;
            return SHAPE_OK;
        }
    } else if (g == w->at && g < w->total) {
        size_t t;
        if (shape_domain_timeline_next(w->tl, &t, row)) {
            w->at++;
            *k = w->plan_of[t];
            *moved = 0;
            return SHAPE_OK;
        }
    }
    return shape_emit_walk_event(rt, w, g, k, row, moved, err);
}
/* anomaly.c: mutate row (table k, seq), chosen for an anomaly; its ANOMALY_* word. */
EMIT_HIDDEN uint32_t shape_emit_anomaly_chosen(runtime *rt, fault_state *fs, size_t k, uint64_t seq,
                                               shape_gen_row *row);
EMIT_HIDDEN int shape_emit_mutators_resolve(runtime *rt, shape_err *err);
EMIT_HIDDEN const char *shape_emit_mutator_name(int id);
EMIT_HIDDEN const char *shape_emit_change_name(int id);
/* The original event at stream position pos (this run's: shard offsets):
 * its plan table and seq. */
typedef int (*shape_emit_locate_fn)(runtime *rt, void *ctx, uint64_t pos, size_t *k, uint64_t *seq, shape_err *err);
/* Copies of originals before the start offset that are due at or after it;
 * locate NULL: table order's positions (the plan, then disorder.c). */
EMIT_HIDDEN int shape_emit_faults_prescan(runtime *rt, fault_state *fs, shape_emit_locate_fn locate, void *ctx,
                                          shape_err *err);
/* The original event at position pos (table k, seq), rendered at b's
 * message i, was drawn for poison and/or a copy: cut it, queue its copy. */
EMIT_HIDDEN int shape_emit_faults_chosen(runtime *rt, fault_state *fs, batch *b, size_t i, uint64_t pos, size_t k,
                                         uint64_t seq, int poison, int copy);
/* Render the copies due at positions <= pos into b while there is room
 * (some are: the heap's first is due). */
EMIT_HIDDEN int shape_emit_faults_copies_due(runtime *rt, fault_state *fs, batch *b, uint64_t pos,
                                             shape_gen_row *row, shape_err *err);
EMIT_HIDDEN void shape_emit_faults_free(fault_state *fs);
/* Answer-key lines for the faults of a delivered group. */
EMIT_HIDDEN int shape_emit_answer_key(runtime *rt, const group *g, shape_emit_report *rep, shape_err *err);

/* The per-event fault draws, inline: most events are chosen for nothing,
 * and that answer costs a draw each, not a call (the chosen go out of line). */

/* Mutate row (table k, seq) when it is chosen for an anomaly; its ANOMALY_*
 * word (0: not chosen). */
static inline uint32_t shape_emit_anomaly_apply(runtime *rt, fault_state *fs, size_t k, uint64_t seq,
                                                shape_gen_row *row)
{
    if (!shape_emit_drawn(rt->meta[k].draw_key[DRAW_ANOMALY], seq, rt->thr_anomaly)) return 0;
    return shape_emit_anomaly_chosen(rt, fs, k, seq, row);
}

/* Original event at position pos (table k, seq) was rendered at b's message i:
 * poison it, and queue its copy, when drawn. */
static inline int shape_emit_faults_after_original(runtime *rt, fault_state *fs, batch *b, size_t i, uint64_t pos,
                                                   size_t k, uint64_t seq)
{
    const shape_emit_config *cfg = rt->cfg;
    const uint64_t *key = rt->meta[k].draw_key;
    int poison = cfg->poison_fraction > 0 && shape_emit_drawn(key[DRAW_POISON], seq, rt->thr_poison);
    int copy = cfg->duplicate_fraction > 0 && shape_emit_drawn(key[DRAW_DUPLICATE], seq, rt->thr_duplicate);
    return poison || copy ? shape_emit_faults_chosen(rt, fs, b, i, pos, k, seq, poison, copy) : SHAPE_OK;
}

/* Render the copies due at positions <= pos into b while there is room. */
static inline int shape_emit_faults_copies(runtime *rt, fault_state *fs, batch *b, uint64_t pos, shape_gen_row *row,
                                           shape_err *err)
{
    if (!fs->n || fs->heap[0].due > pos) return SHAPE_OK; /* (most events: no copy is due) */
    return shape_emit_faults_copies_due(rt, fs, b, pos, row, err);
}

/* queue.c: render one event of table meta m at b's message i. */
EMIT_HIDDEN int shape_emit_render_event(runtime *rt, batch *b, size_t i, const table_meta *m, uint64_t seq,
                                        const shape_gen_row *row);

/* Add the --time-origin shift to every timestamp of a row. */
static inline void shift_times(const shape_emit_config *cfg, shape_gen_row *row)
{
    if (!cfg->time_shifted) return;
    for (size_t c = 0; c < row->ncols; c++)
        if (row->values[c].kind == SHAPE_GEN_TIMESTAMP_NS) row->values[c].v.i += cfg->time_shift_ns;
}

/* metadata.c */
EMIT_HIDDEN int shape_emit_headers_parse(const shape_emit_config *cfg, header_spec *out, shape_err *err);
EMIT_HIDDEN void shape_emit_headers_free(header_spec *h, size_t n);
/* Every table's metadata (meta[plan->ntables]); unknown columns are refused. */
EMIT_HIDDEN int shape_emit_meta_build(const shape_emit_config *cfg, const header_spec *hdrs, table_meta *meta,
                                      shape_err *err);

/* queue.c */
EMIT_HIDDEN batch *shape_emit_batch_new(size_t cap, size_t nh);
EMIT_HIDDEN void shape_emit_batch_free(batch *b);
/* The generator thread (arg: the runtime). */
EMIT_HIDDEN void *shape_emit_generator_main(void *arg);
/* Next batch, or NULL at the end of the stream (or a generator failure). */
EMIT_HIDDEN batch *shape_emit_queue_next(runtime *rt);
/* The next batch if one is queued now, else NULL (never waits). */
EMIT_HIDDEN batch *shape_emit_queue_try_next(runtime *rt);
/* Put a batch taken by shape_emit_queue_try_next back at the head of the queue. */
EMIT_HIDDEN void shape_emit_queue_unget(runtime *rt, batch *b);
/* Give a batch back to the pool. */
EMIT_HIDDEN void shape_emit_queue_recycle(runtime *rt, batch *b);

/* runtime.c: send msgs[0..n) to d with retries (see there). */
EMIT_HIDDEN int shape_emit_send(runtime *rt, shape_emit_destination *d, shape_emit_message *msgs, size_t n,
                                group *g, int *attempts, shape_emit_report *rep, shape_err *err);

/* dead_letter.c: records for every refused message of g (as refused by d),
 * delivered to the dead-letter destination. */
EMIT_HIDDEN int shape_emit_dead_letter(runtime *rt, group *g, shape_emit_destination *d, int attempts,
                                       shape_emit_report *rep, shape_err *err);

#endif

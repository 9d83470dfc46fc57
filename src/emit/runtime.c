/* runtime.c — the emit runtime's core: paced, acknowledged sends and
 * checkpoints, and the run itself (see shape/emit.h for the contract;
 * runtime_internal.h for the other rooms: metadata.c, queue.c,
 * dead_letter.c).
 *
 * Why: a stream must reach every destination at least once, in order, at the
 * asked rate without drift, never skipping an event and never letting the
 * checkpoint pass an event a destination has not acknowledged.
 * How:
 *   - the run is setup (check the config, allocate, start the generator
 *     and checkpoint threads), the loop, and teardown (stop the threads, say
 *     why the run stopped, write the final checkpoint, fill the report);
 *   - the sender starts its clock t0 at the first batch and sleeps until the
 *     absolute deadline t0 + due (clock_nanosleep TIMER_ABSTIME, in slices of
 *     at most 50 ms so a stop request is seen): oversleeping one batch never
 *     delays the next one's deadline, so the rate does not drift. Lateness
 *     (send time − deadline) goes into a 0.1 ms histogram for max and p99;
 *     batches already due (paced) or queued (unpaced) are merged into one
 *     send;
 *   - per destination, messages not DELIVERED are re-sent (only those) up to
 *     `retries` times with back-off × 2^n; REFUSED ones stop the run after
 *     the rest of the batch was sent, or, with a dead-letter destination,
 *     become shape-dead-letter v1 records delivered there (the batch counts
 *     only once they are);
 *   - pipelined sends: when the run's one destination can (submit/complete,
 *     plugin ABI 6: the Kafka emitter), up to PIPE_DEPTH groups are in
 *     flight, holding together at most one merged send's worth of batches:
 *     the next group is produced while the destination acknowledges the
 *     earlier ones, instead of each send waiting for its last
 *     acknowledgement (linger plus a round trip) before the next is built.
 *     Groups are finished (outcomes, retries, dead letters, answer key,
 *     accounting) strictly in the order they were gathered, so the delivered
 *     offset is always the end of a prefix the destination acknowledged; a
 *     failure in one group leaves the later ones uncounted (completed, so no
 *     acknowledgement outlives the run, but never claimed). The sender
 *     never blocks on the generator while groups are in flight (it finishes
 *     the oldest instead: they hold batches the generator may need), and a
 *     paced run finishes what is in flight before it sleeps, so paced
 *     delivery is unchanged while it keeps up. Several destinations, or
 *     emitters with send alone (the core's sinks), keep one group at a time;
 *   - the delivered offset moves only after every destination delivered the
 *     whole batch; a checkpoint thread flushes the destinations, then writes
 *     the offset (atomically) every checkpoint_every events or
 *     checkpoint_seconds, so fsync never sits on the pacing path; the final
 *     checkpoint is written synchronously by the sender.
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
#include "runtime_internal.h"

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
    ck.time_shifted = cfg->time_shifted;
    ck.time_shift_ns = cfg->time_shift_ns;
    if (cfg->destinations) snprintf(ck.destinations, sizeof ck.destinations, "%s", cfg->destinations);
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

static void idem_key(const char *t, uint64_t seq, char *out, size_t size)
{
    if (strlen(t) + 22 > size) {
        snprintf(out, size, "?");
        return;
    }
    *shape_event_key(out, t, seq) = 0;
}

static int stop_asked(const shape_emit_config *cfg) { return cfg->stop && *cfg->stop; }

/* Sleep until `deadline` (absolute, shape_clock_now's clock) in slices of at
 * most 50 ms, or until a stop is asked; returns the clock at the end. */
static double sleep_until_or_stop(const shape_emit_config *cfg, double deadline)
{
    double now;
    while ((now = shape_clock_now()) < deadline && !stop_asked(cfg)) {
        double next = now + 0.05;
        shape_clock_sleep_until(next < deadline ? next : deadline);
    }
    return now;
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
int shape_emit_send(runtime *rt, shape_emit_destination *d, shape_emit_message *msgs, size_t n, group *g,
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
    const int submitted = g && g->submitted; /* the first attempt was submitted already (pipelined) */
    if (g && g->handed && !submitted)
        for (size_t i = 0; i < n; i++) memcpy(&msgs[i], group_message(g, i), fields);
    if ((!g || g->handed) && !submitted)
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
                rt->tmp[m].made_len = 0; /* (tmp is not zeroed, and a slot may hold an earlier retry's) */
                rt->tmp_idx[m++] = i;
            }
            if (m == 0) break;
        } else {
            g->handed = 1;
        }
        shape_err_clear(&serr);
        (*attempts)++;
        int rc;
        if (attempt == 0 && submitted) { /* its outcomes: complete what submit handed over */
            rc = g->submit_rc;
            if (g->submitted == GROUP_SUBMITTED) rc = d->type->complete(d->emitter, out, m, &serr);
            else serr = g->submit_err;
            g->submitted = 0;
        } else {
            rc = d->type->send(d->emitter, out, m, &serr);
        }
        if (out != msgs)
            for (size_t j = 0; j < m; j++) {
                shape_emit_message *dst = &msgs[rt->tmp_idx[j]];
                dst->outcome = rt->tmp[j].outcome;
                memcpy(dst->reason, rt->tmp[j].reason, sizeof dst->reason);
                dst->made_len = rt->tmp[j].made_len;
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
        if (left > 0 && stop_asked(cfg)) { /* a stop request: no retry; the batch counts as not sent */
            rt->stopped_in_send = 1;
            return SHAPE_OK;
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
        /* A destination-level failure (e.g. nothing acknowledged within the
         * flush time-out: the cluster is gone) is said as it happens, not
         * only when the last retry gives up minutes later. */
        if (serr.message[0]) /* (on a line of its own, after a progress line) */
            fprintf(stderr, "%sshape: warning: %.400s; retrying in %.3g s (%d of %d)\n", cfg->progress ? "\n" : "",
                    serr.message, pause, attempt + 1, cfg->retries);
        if (pause > 0) sleep_until_or_stop(cfg, shape_clock_now() + pause);
        if (stop_asked(cfg)) {
            rt->stopped_in_send = 1;
            return SHAPE_OK;
        }
    }
    return SHAPE_OK;
}

/* Send group g to destination d until every message is delivered, refused
 * messages dead-lettered, or the run must stop. */
static int deliver_to(runtime *rt, group *g, shape_emit_destination *d, shape_emit_report *rep,
                      shape_err *err)
{
    int attempts;
    SHAPE_RETURN_NOT_OK(shape_emit_send(rt, d, g->msgs, g->n, g, &attempts, rep, err));
    if (rt->stopped_in_send) return SHAPE_OK;
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
        return shape_emit_dead_letter(rt, g, d, attempts, rep, err);
    }
    if (refused) {
        rep->refused += refused;
        char key[128];
        idem_key(group_message(g, first)->table, g->ri[first], key, sizeof key);
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


/* The virtual clock of --speed for batch b: (its earliest event time − the
 * first event time of the run) / speed, never decreasing; a batch without
 * an event time goes with the clock as it stands. */
static double virtual_due(const runtime *rt, const batch *b)
{
    if (b->min_time == INT64_MAX || !rt->vt_started) return rt->vdue;
    double v = (double)(b->min_time - rt->vt0) / 1e9 / rt->cfg->speed;
    return v > rt->vdue ? v : rt->vdue;
}

/* Batch b joins a send: the virtual clock moves to it. */
static void accept_batch(runtime *rt, const batch *b)
{
    if (rt->cfg->speed <= 0) return;
    if (!rt->vt_started && b->min_time != INT64_MAX) {
        rt->vt0 = b->min_time;
        rt->vt_started = 1;
    }
    rt->vdue = virtual_due(rt, b);
}

/* When (seconds after t0) batch b may go, after `sent` events worth `units`
 * schedule units of this run: when the schedule has them due (sent / rate
 * for the constant rate, exactly), no earlier than the virtual clock, and
 * no earlier than (sent + n) / max_rate. */
static double due_of(runtime *rt, uint64_t sent, double units, const batch *b)
{
    const shape_emit_config *cfg = rt->cfg;
    double due = 0;
    if (cfg->realtime)
        due = cfg->schedule ? shape_emit_schedule_due(cfg->schedule, &rt->cursor, units) : (double)sent / cfg->rate;
    if (cfg->speed > 0) {
        double v = rt->vt_started || b->min_time == INT64_MAX ? virtual_due(rt, b) : 0;
        if (v > due) due = v;
    }
    if (cfg->max_rate > 0) {
        double cap = (double)(sent + b->n) / cfg->max_rate;
        if (cap > due) due = cap;
    }
    return due;
}

static int paced(const shape_emit_config *cfg) { return cfg->realtime || cfg->max_rate > 0 || cfg->speed > 0; }

static void record_lag(runtime *rt, shape_emit_report *rep, double lag)
{
    if (lag < 0) lag = 0;
    if (lag > rep->max_lag) rep->max_lag = lag;
    size_t bucket = (size_t)(lag * 1e4);
    rt->lag_hist[bucket > LAG_BUCKETS ? LAG_BUCKETS : bucket]++;
    rt->lag_n++;
}

/* ---- setup --------------------------------------------------------------------------- */

/* Messages a batch may hold: its events, and with duplicates room for the
 * copies that fall due among them. */
static size_t batch_cap(const shape_emit_config *cfg)
{
    return cfg->duplicate_fraction > 0 ? 2 * cfg->batch_events + 64 : cfg->batch_events;
}

/* The runtime's scratch, sized by the plan and the batch and queue sizes. */
static int runtime_alloc(runtime *rt, shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    rt->meta = calloc(cfg->plan->ntables ? cfg->plan->ntables : 1, sizeof *rt->meta);
    rt->max_group = cfg->queue_batches < MAX_GROUP ? cfg->queue_batches : MAX_GROUP;
    while (rt->max_group > 1 && rt->max_group * cfg->batch_events > 100000) rt->max_group--;
    rt->pipelined = cfg->ndests == 1 && cfg->dests[0].type->submit && cfg->dests[0].type->complete;
    rt->depth = 1;
    rt->max_in_flight = SIZE_MAX;
    if (rt->pipelined) {
        /* The bound on what is in flight stays one merged send's (max_group
         * batches: a broker with a long round trip gets as much per round
         * trip as before), cut into up to PIPE_DEPTH groups. The pool stays as it
         * was (while a send was in flight the generator had the other
         * batches then too): growing it by the batches in flight bought the
         * generator look-ahead for ~3,500 more first-touch page faults
         * (+0.1 CPU-s of system time per run, bench/analysis.md). */
        rt->depth = PIPE_DEPTH;
        rt->max_in_flight = rt->max_group;
        rt->max_group = (rt->max_group + PIPE_DEPTH - 1) / PIPE_DEPTH;
    }
    rt->npool = cfg->queue_batches + 2;
    rt->pool = calloc(rt->npool, sizeof *rt->pool);
    rt->fullq = calloc(rt->npool, sizeof *rt->fullq);
    rt->freeq = calloc(rt->npool, sizeof *rt->freeq);
    rt->fly = calloc(rt->depth, sizeof *rt->fly);
    if (!rt->fly) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    size_t gcap = rt->max_group * batch_cap(cfg);
    /* Not zeroed: every slot is written before it is read (a group's when it
     * is built, tmp's when a retry copies into it, a dead letter's when it is
     * made). These are a merged send's worth of ~370-byte messages (tens of
     * MB with duplicates on): calloc would clear memory the heap had used
     * before (the domain's set-up frees its scratch first), and touching it
     * costs a page fault per 4 KiB even where no message ever goes. */
    rt->tmp = malloc(gcap * sizeof *rt->tmp);
    rt->tmp_idx = malloc(gcap * sizeof *rt->tmp_idx);
    for (size_t f = 0; f < rt->depth; f++) {
        group *g = &rt->fly[f];
        g->msgs = malloc(gcap * sizeof *g->msgs);
        g->bi = malloc(gcap * sizeof *g->bi);
        g->mi = malloc(gcap * sizeof *g->mi);
        g->ri = malloc(gcap * sizeof *g->ri);
        if (!g->msgs || !g->bi || !g->mi || !g->ri) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    rt->dl_msgs = malloc(gcap * sizeof *rt->dl_msgs);
    rt->dl_hdrs = malloc(2 * gcap * sizeof *rt->dl_hdrs);
    if (!rt->meta || !rt->pool || !rt->fullq || !rt->freeq || !rt->tmp || !rt->tmp_idx || !rt->dl_msgs ||
        !rt->dl_hdrs)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    return SHAPE_OK;
}

/* Check the config, make the runtime and start its threads. On failure *out
 * may still hold a runtime (its threads not started) for runtime_free. */
static int runtime_setup(const shape_emit_config *cfg, runtime **out, shape_err *err)
{
    *out = NULL;
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
        /* A send that waits (a broker gone) must see a stop request within ~100 ms. */
        if (cfg->stop && cfg->dests[d].type->set_stop) cfg->dests[d].type->set_stop(cfg->dests[d].emitter, cfg->stop);
        int rows = cfg->dests[d].type->wants_rows ? cfg->dests[d].type->wants_rows(cfg->dests[d].emitter) : 0;
        if (rows) rt->want_rows = 1;
        if (rows != SHAPE_EMIT_ROWS_ONLY) rt->bodies = 1;
    }
    if (cfg->stop && cfg->dead_letter && cfg->dead_letter->type->set_stop)
        cfg->dead_letter->type->set_stop(cfg->dead_letter->emitter, cfg->stop);
    int rc = shape_emit_headers_parse(cfg, rt->hdrs, err);
    if (rc != SHAPE_OK) {
        shape_emit_headers_free(rt->hdrs, cfg->nheaders);
        free(rt);
        return rc;
    }
    *out = rt;
    rt->nh = 3 + cfg->nheaders;
    rc = runtime_alloc(rt, err);
    if (rc == SHAPE_OK) rc = shape_emit_meta_build(cfg, rt->hdrs, rt->meta, err);
    if (rc == SHAPE_OK) rc = shape_emit_mutators_resolve(rt, err);
    for (size_t k = 0; rc == SHAPE_OK && k < cfg->plan->ntables; k++) {
        rt->meta[k].name_hash = shape_emit_name_hash(rt->meta[k].et.name);
        for (uint64_t w = 0; w < DRAW_KINDS; w++)
            rt->meta[k].draw_key[w] = shape_emit_draw_key(cfg->fault_seed, w, rt->meta[k].name_hash);
    }
    rt->thr_poison = shape_emit_threshold(cfg->poison_fraction);
    rt->thr_duplicate = shape_emit_threshold(cfg->duplicate_fraction);
    rt->thr_anomaly = shape_emit_threshold(cfg->anomaly_fraction);
    rt->thr_late = shape_emit_threshold(cfg->out_of_order);
    if (rc == SHAPE_OK && cfg->out_of_order > 0 && (cfg->ooo_window == 0 || cfg->ooo_window > 10000000))
        rc = shape_err_set(err, SHAPE_EINVAL, "the out-of-order window must be 1..10000000 rows");
    if (rc == SHAPE_OK && cfg->answer_key && !(rt->answer_key = fopen(cfg->answer_key, "a")))
        rc = shape_err_set(err, SHAPE_EIO, "cannot open the answer key %s", cfg->answer_key);
    for (size_t i = 0; rc == SHAPE_OK && i < rt->npool; i++) {
        rt->pool[i] = shape_emit_batch_new(batch_cap(cfg), rt->nh);
        if (!rt->pool[i]) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        else rt->freeq[rt->free_count++] = rt->pool[i];
    }
    pthread_mutex_init(&rt->mu, NULL);
    pthread_cond_init(&rt->cond_full, NULL);
    pthread_cond_init(&rt->cond_free, NULL);
    pthread_mutex_init(&rt->ck_mu, NULL);
    pthread_cond_init(&rt->ck_cond, NULL);
    if (rc == SHAPE_OK) {
        if (pthread_create(&rt->gen, NULL, shape_emit_generator_main, rt) != 0)
            rc = shape_err_set(err, SHAPE_EINTERNAL, "cannot start the generator thread");
        else
            rt->gen_started = 1;
    }
    if (rc == SHAPE_OK) {
        if (pthread_create(&rt->ckt, NULL, checkpoint_main, rt) != 0)
            rc = shape_err_set(err, SHAPE_EINTERNAL, "cannot start the checkpoint thread");
        else
            rt->ck_started = 1;
    }
    rt->delivered = rt->last_ck = cfg->start_offset;
    rt->t_start = rt->last_ck_time = shape_clock_now();
    return rc;
}

/* ---- the loop ------------------------------------------------------------------------ */

/* Wait for batch b's deadline. 0: send it; 1: the run ends here (b was
 * given back, rep->stopped_by says why). */
static int wait_for_deadline(runtime *rt, batch *b, shape_emit_report *rep)
{
    const shape_emit_config *cfg = rt->cfg;
    double now = shape_clock_now();
    if (!rt->started) {
        rt->t0 = now;
        rt->started = 1;
    }
    double due = due_of(rt, rt->sent, rt->units, b);
    accept_batch(rt, b);
    if (cfg->duration >= 0 && due >= cfg->duration) {
        sleep_until_or_stop(cfg, rt->t0 + cfg->duration);
        shape_emit_queue_recycle(rt, b);
        rep->stopped_by = "duration";
        return 1;
    }
    if (paced(cfg)) {
        double deadline = rt->t0 + due;
        now = sleep_until_or_stop(cfg, deadline);
        if (stop_asked(cfg)) {
            shape_emit_queue_recycle(rt, b);
            rep->stopped_by = "stop-request";
            return 1;
        }
        record_lag(rt, rep, now - deadline);
    }
    return 0;
}

/* The group of batches sent together, starting with b: the batches that
 * are due already (paced) or queued (unpaced), up to max_group. */
static group *gather_group(runtime *rt, group *g, batch *b, shape_emit_report *rep)
{
    const shape_emit_config *cfg = rt->cfg;
    g->nb = 0;
    g->n = 0;
    g->norig = 0;
    g->units = 0;
    g->handed = 0;
    for (batch *x = b; x;) {
        for (size_t i = 0; i < x->n; i++) {
            /* the message without its outcome slot (~260 bytes of
             * reason), whose outcome and reason are reset here */
            memcpy(&g->msgs[g->n + i], &x->msgs[i], offsetof(shape_emit_message, outcome));
            g->msgs[g->n + i].outcome = SHAPE_EMIT_PENDING; /* reset here, in the same pass */
            g->msgs[g->n + i].reason[0] = 0;
            g->msgs[g->n + i].made_len = 0;
            g->bi[g->n + i] = g->nb;
            g->mi[g->n + i] = i;
            g->ri[g->n + i] = x->seq[i];
        }
        g->b[g->nb++] = x;
        g->n += x->n;
        g->norig += x->norig;
        g->units += x->units;
        x = NULL;
        if (g->nb >= rt->max_group || stop_asked(cfg)) break;
        batch *next = shape_emit_queue_try_next(rt);
        if (!next) break;
        double next_due = due_of(rt, rt->sent + g->norig, rt->units + g->units, next);
        if ((paced(cfg) && rt->t0 + next_due > shape_clock_now()) ||
            (cfg->duration >= 0 && next_due >= cfg->duration)) {
            shape_emit_queue_unget(rt, next);
            break;
        }
        if (paced(cfg)) record_lag(rt, rep, shape_clock_now() - (rt->t0 + next_due));
        accept_batch(rt, next);
        x = next;
    }
    return g;
}

/* Hand a periodic checkpoint at the delivered offset to the checkpoint
 * thread; SHAPE_OK, or the error of an earlier checkpoint that failed. */
static int request_checkpoint(runtime *rt, double now, shape_err *err)
{
    int rc = SHAPE_OK;
    pthread_mutex_lock(&rt->ck_mu);
    if (rt->ck_failed) {
        *err = rt->ck_err;
        rc = rt->ck_failed;
    }
    rt->ck_offset = rt->delivered;
    rt->ck_want = 1;
    pthread_cond_signal(&rt->ck_cond);
    pthread_mutex_unlock(&rt->ck_mu);
    rt->last_ck = rt->delivered;
    rt->last_ck_time = now;
    return rc;
}

/* Account for n events delivered everywhere: offsets, the dead-letter
 * limit, periodic checkpoints, progress, the duration. *done = 1 when the
 * run ends here. */
static int after_delivery(runtime *rt, size_t n, shape_emit_report *rep, int *done, shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    double now = shape_clock_now();
    if (rep->events == 0) {
        rt->first_delivery = now;
        rt->first_batch = n;
    }
    rt->last_delivery = now;
    rep->events += n;
    rt->delivered += n;
    rep->end_offset = rt->delivered;
    if (cfg->max_dead_letter >= 0 && rep->dead_lettered > (uint64_t)cfg->max_dead_letter) {
        rep->stopped_by = "dead-letter-limit";
        *done = 1;
        return shape_err_set(err, SHAPE_ELIMIT, "stopped, more than %lld events were dead-lettered (%llu so far)",
                             (long long)cfg->max_dead_letter, (unsigned long long)rep->dead_lettered);
    }
    int rc = SHAPE_OK;
    if (rt->delivered - rt->last_ck >= cfg->checkpoint_every || now - rt->last_ck_time >= cfg->checkpoint_seconds)
        rc = request_checkpoint(rt, now, err);
    if (cfg->progress && now - rt->last_progress >= 0.5) {
        progress_line(cfg, rt->delivered, rep->events, now - rt->t0);
        rt->last_progress = now;
    }
    if (cfg->duration >= 0 && now - rt->t0 >= cfg->duration) {
        rep->stopped_by = "duration";
        *done = 1;
    }
    return rc;
}

/* ---- the pipeline ------------------------------------------------------------------- */

/* The slot the next group is gathered into. */
static group *next_slot(runtime *rt) { return &rt->fly[(rt->fly_head + rt->fly_count) % rt->depth]; }

/* Group g (just gathered) goes out: its events count as sent for the
 * schedule, and a pipelining destination is handed it now (submit). */
static void submit_group(runtime *rt, group *g)
{
    rt->fly_count++;
    rt->fly_batches += g->nb;
    rt->sent += g->norig;
    rt->units += g->units;
    g->submitted = 0;
    if (!rt->pipelined || g->n == 0) return;
    const shape_emit_destination *d = &rt->cfg->dests[0];
    shape_err_clear(&g->submit_err);
    g->handed = 1;
    g->submit_rc = d->type->submit(d->emitter, g->msgs, g->n, &g->submit_err);
    g->submitted = g->submit_rc == SHAPE_OK ? GROUP_SUBMITTED : GROUP_SUBMIT_FAILED;
}

static void pop_oldest(runtime *rt)
{
    group *g = &rt->fly[rt->fly_head];
    for (size_t i = 0; i < g->nb; i++) shape_emit_queue_recycle(rt, g->b[i]);
    rt->fly_batches -= g->nb;
    rt->fly_head = (rt->fly_head + 1) % rt->depth;
    rt->fly_count--;
}

/* Finish the oldest group in flight: its outcomes, with retries and dead
 * letters, to every destination (pipelined: complete what was submitted);
 * then its answer-key lines and its events' accounting (the delivered
 * offset, checkpoints). Groups finish in the order they were gathered, so
 * the delivered offset is always the end of a prefix of the stream every
 * destination acknowledged. */
static int finish_oldest(runtime *rt, shape_emit_report *rep, int *done, shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    group *g = &rt->fly[rt->fly_head];
    int rc = SHAPE_OK;
    for (size_t d = 0; d < cfg->ndests && rc == SHAPE_OK && !rt->stopped_in_send; d++)
        rc = deliver_to(rt, g, &cfg->dests[d], rep, err);
    if (rc == SHAPE_OK && rt->stopped_in_send) { /* stopped while a send waited: nothing of g counts */
        pop_oldest(rt);
        rep->stopped_by = "stop-request";
        *done = 1;
        return SHAPE_OK;
    }
    size_t n = g->norig;
    if (rc == SHAPE_OK && shape_emit_faults_on(cfg)) rc = shape_emit_answer_key(rt, g, rep, err);
    pop_oldest(rt);
    if (rc == SHAPE_OK) rc = after_delivery(rt, n, rep, done, err);
    return rc;
}

/* After an error or a stop that left a group undelivered: the groups still
 * in flight count for nothing (they follow one that did not count), but
 * every submission is completed, so no acknowledgement can arrive into
 * memory the run has freed. */
static void abandon_in_flight(runtime *rt)
{
    while (rt->fly_count > 0) {
        group *g = &rt->fly[rt->fly_head];
        if (g->submitted == GROUP_SUBMITTED) {
            const shape_emit_destination *d = &rt->cfg->dests[0];
            shape_err ignored;
            shape_err_clear(&ignored);
            d->type->complete(d->emitter, g->msgs, g->n, &ignored);
        }
        g->submitted = 0;
        pop_oldest(rt);
    }
}

/* Whether batch b may not go yet (a paced run ahead of its schedule). */
static int not_due_yet(runtime *rt, const batch *b)
{
    if (!paced(rt->cfg)) return 0;
    return rt->t0 + due_of(rt, rt->sent, rt->units, b) > shape_clock_now();
}

/* Take batches, pace them, deliver them to every destination, until the
 * stream ends, a limit or stop request ends the run, or an error.
 * Pipelined (one destination with submit/complete): up to `depth` groups,
 * holding at most max_in_flight batches, are submitted before the oldest
 * is completed, so the destination acknowledges one while the next is
 * produced. The sender never waits for the generator while groups are in
 * flight (they hold batches the generator may need: it finishes the oldest
 * instead), and a paced run finishes what is in flight before it sleeps,
 * so a paced run that keeps up sends and acknowledges as with send alone;
 * only one behind its schedule has several groups in flight. */
static int run_loop(runtime *rt, shape_emit_report *rep, shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    int rc = SHAPE_OK, done = 0;
    while (rc == SHAPE_OK && !done) {
        if (stop_asked(cfg)) {
            rep->stopped_by = "stop-request";
            break;
        }
        if (rt->fly_count == rt->depth || rt->fly_batches >= rt->max_in_flight) {
            rc = finish_oldest(rt, rep, &done, err);
            continue;
        }
        batch *b = rt->fly_count ? shape_emit_queue_try_next(rt) : shape_emit_queue_next(rt);
        if (!b && rt->fly_count) {
            rc = finish_oldest(rt, rep, &done, err);
            continue;
        }
        if (!b) break;
        if (rt->fly_count && rt->started && not_due_yet(rt, b)) {
            shape_emit_queue_unget(rt, b);
            rc = finish_oldest(rt, rep, &done, err);
            continue;
        }
        if (wait_for_deadline(rt, b, rep)) break;
        submit_group(rt, gather_group(rt, next_slot(rt), b, rep));
        if (rt->depth == 1) rc = finish_oldest(rt, rep, &done, err);
    }
    /* what is in flight when the run ends (its stream, its duration, a stop
     * request) counts in order while it was delivered */
    while (rc == SHAPE_OK && rt->fly_count > 0 && !rt->stopped_in_send) rc = finish_oldest(rt, rep, &done, err);
    abandon_in_flight(rt);
    return rc;
}

/* ---- teardown ------------------------------------------------------------------------ */

/* Stop the generator (it may be waiting for room) and the checkpoint
 * thread; their errors become the run's when it has none. */
static int runtime_stop(runtime *rt, int rc, shape_err *err)
{
    pthread_mutex_lock(&rt->mu);
    rt->stopping = 1;
    pthread_cond_broadcast(&rt->cond_free);
    pthread_mutex_unlock(&rt->mu);
    if (rt->gen_started) pthread_join(rt->gen, NULL);
    if (rt->ck_started) {
        pthread_mutex_lock(&rt->ck_mu);
        rt->ck_quit = 1;
        pthread_cond_signal(&rt->ck_cond);
        pthread_mutex_unlock(&rt->ck_mu);
        pthread_join(rt->ckt, NULL);
    }
    if (rc == SHAPE_OK && rt->gen_rc != SHAPE_OK) {
        *err = rt->gen_err;
        rc = rt->gen_rc;
    }
    if (rc == SHAPE_OK && rt->ck_failed) {
        *err = rt->ck_err;
        rc = rt->ck_failed;
    }
    return rc;
}

/* Say why the run stopped, write the final checkpoint (synchronously, at the
 * last delivered offset) and fill in the report's times. */
static int finish_report(runtime *rt, int rc, shape_emit_report *rep, shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    if (rc == SHAPE_ELIMIT) {
        /* stopped_by already says why */
    } else if (rc != SHAPE_OK) {
        rep->stopped_by = "error";
    } else if (strcmp(rep->stopped_by, "complete") == 0 && rt->delivered < cfg->limit) {
        rep->stopped_by = "stop-request"; /* the generator ended early: only a stop does that */
    } else if (strcmp(rep->stopped_by, "complete") == 0 && cfg->limit < stream_total(cfg)) {
        rep->stopped_by = "max-events";
    }
    rep->complete = rc == SHAPE_OK && (strcmp(rep->stopped_by, "complete") == 0 ||
                                        strcmp(rep->stopped_by, "max-events") == 0);
    if (rt->gen_started) {
        shape_err cerr;
        shape_err_clear(&cerr);
        int crc = write_checkpoint(cfg, rt->delivered, rep->complete, &cerr);
        if (crc == SHAPE_OK && cfg->checkpoint_path) rt->ck_count++;
        if (crc != SHAPE_OK && (rc == SHAPE_OK || rc == SHAPE_ELIMIT)) {
            *err = cerr;
            rc = crc;
            rep->stopped_by = "error";
            rep->complete = 0;
        }
    }
    if (cfg->progress && rt->started) fputs("\n", stderr);
    double end = shape_clock_now();
    rep->wall = end - rt->t_start;
    rep->elapsed = rep->events ? rt->last_delivery - rt->first_delivery : 0;
    rep->rate = rep->elapsed > 0 ? (double)(rep->events - rt->first_batch) / rep->elapsed : 0;
    rep->per_second = rep->wall > 0 ? (double)rep->events / rep->wall : 0;
    rep->max_queue_depth = rt->max_depth;
    rep->lag_p99 = lag_p99(rt);
    rep->checkpoints = rt->ck_count;
    return rc;
}

static void runtime_free(runtime *rt)
{
    if (!rt) return;
    const shape_emit_config *cfg = rt->cfg;
    for (size_t i = 0; i < rt->npool && rt->pool; i++) shape_emit_batch_free(rt->pool[i]);
    pthread_mutex_destroy(&rt->mu);
    pthread_cond_destroy(&rt->cond_full);
    pthread_cond_destroy(&rt->cond_free);
    pthread_mutex_destroy(&rt->ck_mu);
    pthread_cond_destroy(&rt->ck_cond);
    shape_emit_headers_free(rt->hdrs, cfg->nheaders);
    for (size_t k = 0; rt->meta && k < cfg->plan->ntables; k++)
        if (rt->meta[k].rows_made) shape_event_rows_reset(&rt->meta[k].rows);
    free(rt->meta);
    free(rt->pool);
    free(rt->fullq);
    free(rt->freeq);
    free(rt->tmp);
    free(rt->tmp_idx);
    for (size_t f = 0; rt->fly && f < rt->depth; f++) {
        free(rt->fly[f].msgs);
        free(rt->fly[f].bi);
        free(rt->fly[f].mi);
        free(rt->fly[f].ri);
    }
    free(rt->fly);
    if (rt->answer_key) fclose(rt->answer_key);
    free(rt->dl_msgs);
    free(rt->dl_hdrs);
    free(rt->dl_buf);
    free(rt);
}

int shape_emit_run(const shape_emit_config *cfg, shape_emit_report *rep, shape_err *err)
{
    memset(rep, 0, sizeof *rep);
    rep->start_offset = rep->end_offset = cfg->start_offset;
    rep->total_events = stream_total(cfg);
    rep->stopped_by = "complete";
    runtime *rt;
    int rc = runtime_setup(cfg, &rt, err);
    if (!rt) return rc;
    if (rc == SHAPE_OK) rc = run_loop(rt, rep, err);
    rc = runtime_stop(rt, rc, err);
    rc = finish_report(rt, rc, rep, err);
    runtime_free(rt);
    return rc;
}

/* emitter_contract.c — the reusable emitter contract suite (see
 * emitter_contract.h for what it checks and why).
 *
 * How: the reference stream is an uninterrupted run of the plan into an
 * in-memory recorder emitter (the same recorder takes dead letters). Every
 * check × harness is one cmocka test whose state points at the harness.
 * Injected failures wrap the harness's emitter in a "flaky" emitter: while
 * failures are left, a send hands only the first half of its batch to the
 * real emitter, marks the rest RETRY and fails with SHAPE_ECONN (remembering
 * the keys of such batches: the only ones allowed to arrive twice).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/emitter_contract.h"

#include "shape/domain.h"
#include "shape/generate_retail.h"

#define EVENTS 2500
#define BATCH 500
#define DIRECT 300

/* ---- lists ------------------------------------------------------------------------- */

static char *text_copy(const void *p, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    if (n) memcpy(s, p, n);
    s[n] = 0;
    return s;
}

void shape_kafka_contract_list_add(shape_kafka_contract_list *l, const void *key, size_t key_len, const void *body,
                             size_t body_len)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->keys = realloc(l->keys, l->cap * sizeof *l->keys);
        l->bodies = realloc(l->bodies, l->cap * sizeof *l->bodies);
        assert_non_null(l->keys);
        assert_non_null(l->bodies);
    }
    l->keys[l->n] = key ? text_copy(key, key_len) : NULL;
    l->bodies[l->n] = text_copy(body, body_len);
    l->n++;
}

void shape_kafka_contract_list_reset(shape_kafka_contract_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->keys[i]);
        free(l->bodies[i]);
    }
    free(l->keys);
    free(l->bodies);
    memset(l, 0, sizeof *l);
}

/* The idempotency key of a flat event body: "<_shape_table>/<_shape_seq>". */
static void key_from_body(const char *body, char *out, size_t size)
{
    const char *t = strstr(body, "\"_shape_table\":\"");
    const char *s = strstr(body, "\"_shape_seq\":");
    if (!t || !s) {
        snprintf(out, size, "?");
        return;
    }
    t += strlen("\"_shape_table\":\"");
    s += strlen("\"_shape_seq\":");
    snprintf(out, size, "%.*s/%lld", (int)strcspn(t, "\""), t, strtoll(s, NULL, 10));
}

/* Wire keys, or keys taken from the bodies; every wire key must name its body. */
static char *key_at(const shape_kafka_contract_list *l, size_t i)
{
    char buf[256];
    key_from_body(l->bodies[i], buf, sizeof buf);
    if (l->keys[i]) {
        if (strcmp(l->keys[i], buf) != 0) fail_msg("wire key '%s' does not name its body (%s)", l->keys[i], buf);
        return l->keys[i];
    }
    l->keys[i] = strdup(buf);
    return l->keys[i];
}

/* ---- the suite's state ------------------------------------------------------------------ */

static shape_domain *domain;
static shape_event_plan plan;
static char fingerprint[65];
static char dir[64], ck_path[96];
static shape_kafka_contract_list reference;

typedef struct flaky {
    const shape_emitter_type *inner_type;
    shape_emitter *inner;
    const shape_kafka_emitter_harness *h;
    int failures;
    shape_kafka_contract_list failed; /* keys handed in failed sends */
} flaky;

/* One struct for the suite's two emitters: the recorder and the flaky wrapper. */
struct shape_emitter {
    shape_kafka_contract_list got; /* recorder */
    flaky f;                 /* wrapper */
};

static int recorder_send(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err)
{
    (void)err;
    for (size_t i = 0; i < n; i++) {
        shape_kafka_contract_list_add(&e->got, msgs[i].key, msgs[i].key_len, msgs[i].value, msgs[i].value_len);
        msgs[i].outcome = SHAPE_EMIT_DELIVERED;
    }
    return SHAPE_OK;
}

static int no_flush(shape_emitter *e, shape_err *err)
{
    (void)e, (void)err;
    return SHAPE_OK;
}

static const shape_emitter_type recorder_type = {.name = "recorder", .send = recorder_send, .flush = no_flush};

static int flaky_send(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err)
{
    flaky *f = &e->f;
    if (f->failures <= 0) return f->inner_type->send(f->inner, msgs, n, err);
    f->failures--;
    for (size_t i = 0; i < n; i++) shape_kafka_contract_list_add(&f->failed, msgs[i].key, msgs[i].key_len, "", 0);
    size_t half = n / 2;
    if (half) {
        int rc = f->inner_type->send(f->inner, msgs, half, err);
        if (rc != SHAPE_OK) return rc;
    }
    for (size_t i = half; i < n; i++) {
        msgs[i].outcome = SHAPE_EMIT_RETRY;
        snprintf(msgs[i].reason, sizeof msgs[i].reason, "injected failure");
    }
    return shape_err_set(err, SHAPE_ECONN, "injected failure");
}

static int flaky_flush(shape_emitter *e, shape_err *err) { return e->f.inner_type->flush(e->f.inner, err); }

static int flaky_wants_rows(shape_emitter *e)
{
    return e->f.inner_type->wants_rows ? e->f.inner_type->wants_rows(e->f.inner) : 0;
}

static const shape_emitter_type flaky_type = {
    .name = "flaky", .send = flaky_send, .flush = flaky_flush, .wants_rows = flaky_wants_rows};

/* ---- helpers ------------------------------------------------------------------------------ */

static shape_options *resuming_options(int resuming)
{
    shape_options *o = shape_options_new();
    shape_err err;
    assert_non_null(o);
    if (resuming) assert_int_equal(shape_options_set_kv(o, "resuming=true", &err), SHAPE_OK);
    return o;
}

static void open_dest(const shape_kafka_emitter_harness *h, int resuming, const shape_emitter_type **type,
                      shape_emitter **e)
{
    shape_err err;
    shape_options *o = resuming_options(resuming);
    int rc = h->open(h->ctx, o, type, e, &err);
    if (rc != SHAPE_OK) fail_msg("%s: open failed: %s", h->name, err.message);
    shape_options_free(o);
}

static void close_dest(const shape_kafka_emitter_harness *h, const shape_emitter_type *type, shape_emitter *e)
{
    if (type->close) type->close(e);
    if (h->after_close) h->after_close(h->ctx);
}

static void base_config(shape_emit_config *c, shape_emit_destination *dest)
{
    memset(c, 0, sizeof *c);
    c->plan = &plan;
    c->partition = -1;
    c->limit = EVENTS;
    c->duration = -1;
    c->batch_events = BATCH;
    c->queue_batches = 2;
    c->checkpoint_path = ck_path;
    c->fingerprint = fingerprint;
    c->checkpoint_every = BATCH;
    c->checkpoint_seconds = 100;
    c->retries = 3;
    c->retry_backoff = 0;
    c->max_dead_letter = -1;
    c->dests = dest;
    c->ndests = 1;
}

static shape_emit_checkpoint read_ck(void)
{
    shape_emit_checkpoint ck;
    int found = 0;
    shape_err err;
    assert_int_equal(shape_emit_checkpoint_read(ck_path, fingerprint, plan.total, &ck, &found, &err), SHAPE_OK);
    assert_true(found);
    return ck;
}

typedef struct key_ix {
    const char *key;
    size_t i;
} key_ix;

static int cmp_key_ix(const void *a, const void *b)
{
    const key_ix *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Indices sorted by (key, position). */
static key_ix *sorted_keys(const shape_kafka_contract_list *l)
{
    key_ix *k = calloc(l->n ? l->n : 1, sizeof *k);
    assert_non_null(k);
    for (size_t i = 0; i < l->n; i++) k[i] = (key_ix){key_at(l, i), i};
    qsort(k, l->n, sizeof *k, cmp_key_ix);
    return k;
}

/* The first message of every key, in delivery order. */
static void first_per_key(const shape_kafka_contract_list *l, shape_kafka_contract_list *out)
{
    key_ix *k = sorted_keys(l);
    char *keep = calloc(l->n ? l->n : 1, 1);
    assert_non_null(keep);
    for (size_t j = 0; j < l->n; j++)
        if (j == 0 || strcmp(k[j].key, k[j - 1].key) != 0) keep[k[j].i] = 1;
    for (size_t i = 0; i < l->n; i++)
        if (keep[i]) shape_kafka_contract_list_add(out, l->keys[i], strlen(l->keys[i]), l->bodies[i], strlen(l->bodies[i]));
    free(keep);
    free(k);
}

/* got holds exactly reference[from..to) (no duplicate), in order when
 * `ordered`, else as a set; bodies byte-equal. */
static void assert_holds(const shape_kafka_emitter_harness *h, const shape_kafka_contract_list *got, size_t from, size_t to,
                         int ordered)
{
    if (got->n != to - from)
        fail_msg("%s: the destination holds %zu messages, expected %zu", h->name, got->n, to - from);
    if (ordered) {
        for (size_t i = 0; i < got->n; i++) {
            const char *k = key_at(got, i);
            if (strcmp(k, reference.keys[from + i]) != 0)
                fail_msg("%s: message %zu has key %s, expected %s", h->name, i, k, reference.keys[from + i]);
            assert_string_equal(got->bodies[i], reference.bodies[from + i]);
        }
        return;
    }
    shape_kafka_contract_list want = {0};
    for (size_t i = from; i < to; i++)
        shape_kafka_contract_list_add(&want, reference.keys[i], strlen(reference.keys[i]), reference.bodies[i],
                                strlen(reference.bodies[i]));
    key_ix *a = sorted_keys(got), *b = sorted_keys(&want);
    for (size_t i = 0; i < got->n; i++) {
        if (strcmp(a[i].key, b[i].key) != 0) fail_msg("%s: key %s is not the expected %s", h->name, a[i].key, b[i].key);
        assert_string_equal(got->bodies[a[i].i], want.bodies[b[i].i]);
    }
    free(a);
    free(b);
    shape_kafka_contract_list_reset(&want);
}

static void read_back(const shape_kafka_emitter_harness *h, shape_kafka_contract_list *got)
{
    memset(got, 0, sizeof *got);
    h->delivered(h->ctx, got);
}

/* The first-per-key stream of the destination equals reference[0..n): in
 * order when `ordered` (and the destination is), else as a set (a message
 * that failed mid-batch and was re-sent arrives after later ones). */
static void assert_first_per_key(const shape_kafka_emitter_harness *h, size_t n, int ordered)
{
    if (!h->delivered) return;
    shape_kafka_contract_list got, first = {0};
    read_back(h, &got);
    first_per_key(&got, &first);
    assert_holds(h, &first, 0, n, ordered && h->ordered);
    shape_kafka_contract_list_reset(&first);
    shape_kafka_contract_list_reset(&got);
}

/* Exactly reference[0..n), each once. */
static void assert_exactly(const shape_kafka_emitter_harness *h, size_t n)
{
    if (!h->delivered) return;
    shape_kafka_contract_list got;
    read_back(h, &got);
    assert_holds(h, &got, 0, n, h->ordered);
    shape_kafka_contract_list_reset(&got);
}

/* The reference's messages [from, from+n), ready to send. */
static shape_emit_message *direct_messages(size_t from, size_t n)
{
    shape_emit_message *m = calloc(n, sizeof *m);
    static char tables[DIRECT + 200][32];
    static shape_emit_header hdrs[DIRECT + 200];
    assert_non_null(m);
    assert_true(n <= DIRECT + 200);
    for (size_t i = 0; i < n; i++) {
        const char *k = reference.keys[from + i];
        snprintf(tables[i], sizeof tables[i], "%.*s", (int)strcspn(k, "/"), k);
        hdrs[i] = (shape_emit_header){"shape-table", tables[i], strlen(tables[i])};
        m[i].key = k;
        m[i].key_len = strlen(k);
        m[i].value = reference.bodies[from + i];
        m[i].value_len = strlen(reference.bodies[from + i]);
        m[i].headers = &hdrs[i];
        m[i].header_count = 1;
        m[i].partition = -1;
        m[i].table = tables[i];
    }
    return m;
}

/* ---- the checks ---------------------------------------------------------------------------- */

#define H(state) ((const shape_kafka_emitter_harness *)*(state))

static void check_unknown_options_refused(void **state)
{
    const shape_kafka_emitter_harness *h = H(state);
    h->reset(h->ctx);
    shape_err err;
    shape_emitter *e = NULL;
    const shape_emitter_type *type = NULL;
    shape_options *o = shape_options_new();
    assert_int_equal(shape_options_set_kv(o, "bogus=1", &err), SHAPE_OK);
    assert_int_equal(h->open(h->ctx, o, &type, &e, &err), SHAPE_EINVAL);
    char want[128];
    snprintf(want, sizeof want, "unknown %s emitter options: ['bogus']", h->option_noun);
    assert_string_equal(err.message, want);
    assert_null(e);
    shape_options_free(o);
    o = shape_options_new();
    assert_int_equal(shape_options_set_kv(o, "envelope=xml", &err), SHAPE_OK);
    assert_int_equal(h->open(h->ctx, o, &type, &e, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "unknown envelope 'xml'"));
    assert_null(e);
    shape_options_free(o);
    if (h->after_close) h->after_close(h->ctx);
    assert_exactly(h, 0); /* a refused open delivered nothing */
}

/* A direct send: every message acknowledged when send returns, in order;
 * a resuming open adds to what is there. */
static void check_send_acknowledges_all(void **state)
{
    const shape_kafka_emitter_harness *h = H(state);
    h->reset(h->ctx);
    const shape_emitter_type *type;
    shape_emitter *e;
    shape_err err;
    open_dest(h, 0, &type, &e);
    shape_emit_message *m = direct_messages(0, DIRECT);
    assert_int_equal(type->send(e, m, DIRECT, &err), SHAPE_OK);
    size_t acked = 0;
    for (size_t i = 0; i < DIRECT; i++) acked += m[i].outcome == SHAPE_EMIT_DELIVERED;
    assert_int_equal(acked, DIRECT);
    assert_int_equal(type->flush(e, &err), SHAPE_OK);
    assert_exactly(h, DIRECT); /* already there before close */
    close_dest(h, type, e);
    free(m);
    open_dest(h, 1, &type, &e);
    m = direct_messages(DIRECT, 5);
    assert_int_equal(type->send(e, m, 5, &err), SHAPE_OK);
    for (size_t i = 0; i < 5; i++) assert_int_equal(m[i].outcome, SHAPE_EMIT_DELIVERED);
    close_dest(h, type, e);
    free(m);
    assert_exactly(h, DIRECT + 5);
}

/* Pipelined sending (ABI 6), when the type has it: three submissions open at
 * once, completed in order, every message DELIVERED and all of them
 * readable, in order, before close. */
static void check_submissions_in_order(void **state)
{
    const shape_kafka_emitter_harness *h = H(state);
    h->reset(h->ctx);
    const shape_emitter_type *type;
    shape_emitter *e;
    shape_err err;
    open_dest(h, 0, &type, &e);
    if (!type->submit || !type->complete) {
        close_dest(h, type, e);
        skip();
    }
    shape_emit_message *m = direct_messages(0, DIRECT); /* (one call: its tables and headers are static) */
    /* as many open at once as the runtime may have: its 16 groups in flight
     * (PIPE_DEPTH, src/emit/runtime_internal.h) and a retry's send */
    const size_t subs = 17, part = DIRECT / subs;
    for (size_t s = 0; s < subs; s++) assert_int_equal(type->submit(e, m + s * part, part, &err), SHAPE_OK);
    for (size_t s = 0; s < subs; s++) assert_int_equal(type->complete(e, m + s * part, part, &err), SHAPE_OK);
    for (size_t i = 0; i < subs * part; i++) assert_int_equal(m[i].outcome, SHAPE_EMIT_DELIVERED);
    assert_exactly(h, subs * part); /* already there before close */
    close_dest(h, type, e);
    free(m);
}

/* Through the runtime: the count reported equals the count acknowledged,
 * keys and order kept per table; a resumed run continues exactly. */
static void check_run_and_resume(void **state)
{
    const shape_kafka_emitter_harness *h = H(state);
    h->reset(h->ctx);
    unlink(ck_path);
    shape_emit_destination dest = {NULL, NULL, h->name};
    shape_emit_config cfg;
    shape_emit_report rep;
    shape_err err;
    base_config(&cfg, &dest);
    open_dest(h, 0, &dest.type, &dest.emitter);
    int rc = shape_emit_run(&cfg, &rep, &err);
    close_dest(h, dest.type, dest.emitter);
    if (rc != SHAPE_OK) fail_msg("%s: run failed: %s", h->name, err.message);
    assert_int_equal(rep.events, EVENTS);
    assert_true(rep.complete);
    assert_int_equal(rep.retries, 0);
    shape_emit_checkpoint ck = read_ck();
    assert_int_equal(ck.offset, EVENTS);
    assert_exactly(h, EVENTS);
    /* stopped at 1800, then resumed from the checkpoint */
    h->reset(h->ctx);
    unlink(ck_path);
    cfg.limit = 1800;
    open_dest(h, 0, &dest.type, &dest.emitter);
    assert_int_equal(shape_emit_run(&cfg, &rep, &err), SHAPE_OK);
    close_dest(h, dest.type, dest.emitter);
    assert_int_equal(read_ck().offset, 1800);
    cfg.limit = EVENTS;
    cfg.start_offset = read_ck().offset;
    open_dest(h, 1, &dest.type, &dest.emitter);
    assert_int_equal(shape_emit_run(&cfg, &rep, &err), SHAPE_OK);
    close_dest(h, dest.type, dest.emitter);
    assert_int_equal(rep.events, EVENTS - 1800);
    assert_exactly(h, EVENTS);
}

/* Sends that deliver half and fail: retried, nothing lost, duplicates only
 * from the failed batches; exhausted retries stop the run, and the
 * checkpoint never passes what was delivered. */
static void check_retry_after_failures(void **state)
{
    const shape_kafka_emitter_harness *h = H(state);
    h->reset(h->ctx);
    unlink(ck_path);
    shape_emitter wrap;
    memset(&wrap, 0, sizeof wrap);
    wrap.f.h = h;
    wrap.f.failures = 2;
    open_dest(h, 0, &wrap.f.inner_type, &wrap.f.inner);
    shape_emit_destination dest = {&flaky_type, &wrap, h->name};
    shape_emit_config cfg;
    shape_emit_report rep;
    shape_err err;
    base_config(&cfg, &dest);
    int rc = shape_emit_run(&cfg, &rep, &err);
    close_dest(h, wrap.f.inner_type, wrap.f.inner);
    if (rc != SHAPE_OK) fail_msg("%s: run failed: %s", h->name, err.message);
    assert_int_equal(rep.events, EVENTS);
    assert_true(rep.retries >= 1);
    assert_first_per_key(h, EVENTS, 1); /* the failed tail is re-sent before the next batch */
    if (h->delivered) {
        shape_kafka_contract_list got;
        read_back(h, &got);
        key_ix *k = sorted_keys(&got);
        for (size_t j = 1; j < got.n; j++) {
            if (strcmp(k[j].key, k[j - 1].key) != 0) continue;
            int from_failed = 0;
            for (size_t x = 0; x < wrap.f.failed.n && !from_failed; x++)
                from_failed = strcmp(wrap.f.failed.keys[x], k[j].key) == 0;
            if (!from_failed) fail_msg("%s: %s arrived twice but its batch never failed", h->name, k[j].key);
        }
        free(k);
        shape_kafka_contract_list_reset(&got);
    }
    shape_kafka_contract_list_reset(&wrap.f.failed);
    /* failing for good */
    h->reset(h->ctx);
    unlink(ck_path);
    memset(&wrap, 0, sizeof wrap);
    wrap.f.failures = 10000;
    open_dest(h, 0, &wrap.f.inner_type, &wrap.f.inner);
    cfg.retries = 1;
    assert_int_equal(shape_emit_run(&cfg, &rep, &err), SHAPE_ECONN);
    close_dest(h, wrap.f.inner_type, wrap.f.inner);
    assert_non_null(strstr(err.message, "delivery failed after 1 retries"));
    shape_emit_checkpoint ck = read_ck();
    assert_false(ck.complete);
    if (h->delivered) {
        shape_kafka_contract_list got, first = {0};
        read_back(h, &got);
        first_per_key(&got, &first);
        assert_true(ck.offset <= first.n);
        shape_kafka_contract_list_reset(&first);
        shape_kafka_contract_list_reset(&got);
    }
    shape_kafka_contract_list_reset(&wrap.f.failed);
}

/* The destination's own transient failures (e.g. FakeProducer's partial
 * delivery): retried by the runtime, nothing lost. */
static void check_native_failures(void **state)
{
    const shape_kafka_emitter_harness *h = H(state);
    if (!h->inject_failures) skip();
    h->reset(h->ctx);
    unlink(ck_path);
    shape_emit_destination dest = {NULL, NULL, h->name};
    shape_emit_config cfg;
    shape_emit_report rep;
    shape_err err;
    base_config(&cfg, &dest);
    open_dest(h, 0, &dest.type, &dest.emitter);
    h->inject_failures(h->ctx, 2);
    int rc = shape_emit_run(&cfg, &rep, &err);
    close_dest(h, dest.type, dest.emitter);
    if (rc != SHAPE_OK) fail_msg("%s: run failed: %s", h->name, err.message);
    assert_int_equal(rep.events, EVENTS);
    assert_true(rep.retries >= 1);
    assert_first_per_key(h, EVENTS, 0);
    /* failing for good: a stop naming the retries, checkpoint behind */
    h->reset(h->ctx);
    unlink(ck_path);
    cfg.retries = 1;
    open_dest(h, 0, &dest.type, &dest.emitter);
    h->inject_failures(h->ctx, 10000);
    assert_int_equal(shape_emit_run(&cfg, &rep, &err), SHAPE_ECONN);
    close_dest(h, dest.type, dest.emitter);
    h->inject_failures(h->ctx, 0);
    assert_non_null(strstr(err.message, "delivery failed after 1 retries"));
    assert_false(read_ck().complete);
}

/* A full destination is waited out inside send: no error, no retry. */
static void check_backpressure(void **state)
{
    const shape_kafka_emitter_harness *h = H(state);
    if (!h->congest) skip();
    h->reset(h->ctx);
    const shape_emitter_type *type;
    shape_emitter *e;
    shape_err err;
    open_dest(h, 0, &type, &e);
    h->congest(h->ctx, 5);
    shape_emit_message *m = direct_messages(0, 400);
    assert_int_equal(type->send(e, m, 400, &err), SHAPE_OK);
    for (size_t i = 0; i < 400; i++) assert_int_equal(m[i].outcome, SHAPE_EMIT_DELIVERED);
    close_dest(h, type, e);
    free(m);
    assert_true(h->congestion_hits(h->ctx) >= 1);
    assert_first_per_key(h, 400, 1);
    /* through the runtime with no retries allowed */
    h->reset(h->ctx);
    unlink(ck_path);
    shape_emit_destination dest = {NULL, NULL, h->name};
    shape_emit_config cfg;
    shape_emit_report rep;
    base_config(&cfg, &dest);
    cfg.retries = 0;
    open_dest(h, 0, &dest.type, &dest.emitter);
    h->congest(h->ctx, 5);
    int rc = shape_emit_run(&cfg, &rep, &err);
    close_dest(h, dest.type, dest.emitter);
    if (rc != SHAPE_OK) fail_msg("%s: run failed: %s", h->name, err.message);
    assert_int_equal(rep.retries, 0);
    assert_true(h->congestion_hits(h->ctx) >= 1);
    assert_first_per_key(h, EVENTS, 1);
}

static int in_list(const shape_kafka_contract_list *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(key_at(l, i), key) == 0) return 1;
    return 0;
}

/* Refusals are outcomes with a reason; the runtime routes them to the
 * dead-letter destination, or stops naming the first key. */
static void check_refusals_reported(void **state)
{
    const shape_kafka_emitter_harness *h = H(state);
    if (!h->inject_rejections) skip();
    h->reset(h->ctx);
    const shape_emitter_type *type;
    shape_emitter *e;
    shape_err err;
    open_dest(h, 0, &type, &e);
    h->inject_rejections(h->ctx, 3);
    shape_emit_message *m = direct_messages(0, DIRECT);
    assert_int_equal(type->send(e, m, DIRECT, &err), SHAPE_OK);
    close_dest(h, type, e);
    size_t refused = 0, delivered = 0;
    shape_kafka_contract_list refused_keys = {0};
    for (size_t i = 0; i < DIRECT; i++) {
        if (m[i].outcome == SHAPE_EMIT_REFUSED) {
            refused++;
            assert_true(m[i].reason[0] != 0);
            assert_false(in_list(&refused_keys, reference.keys[i]));
            shape_kafka_contract_list_add(&refused_keys, m[i].key, m[i].key_len, m[i].value, m[i].value_len);
        }
        delivered += m[i].outcome == SHAPE_EMIT_DELIVERED;
    }
    free(m);
    assert_int_equal(refused, 3);
    assert_int_equal(delivered, DIRECT - 3);
    if (h->delivered) {
        shape_kafka_contract_list got;
        read_back(h, &got);
        assert_int_equal(got.n, DIRECT - 3);
        for (size_t i = 0; i < got.n; i++) assert_false(in_list(&refused_keys, key_at(&got, i)));
        shape_kafka_contract_list_reset(&got);
    }
    shape_kafka_contract_list_reset(&refused_keys);
    /* through the runtime, with a dead-letter destination */
    h->reset(h->ctx);
    unlink(ck_path);
    shape_emitter dl_em;
    memset(&dl_em, 0, sizeof dl_em);
    shape_emit_destination dl = {&recorder_type, &dl_em, "dead letters"};
    shape_emit_destination dest = {NULL, NULL, h->name};
    shape_emit_config cfg;
    shape_emit_report rep;
    base_config(&cfg, &dest);
    cfg.dead_letter = &dl;
    open_dest(h, 0, &dest.type, &dest.emitter);
    h->inject_rejections(h->ctx, 7);
    int rc = shape_emit_run(&cfg, &rep, &err);
    close_dest(h, dest.type, dest.emitter);
    if (rc != SHAPE_OK) fail_msg("%s: run failed: %s", h->name, err.message);
    assert_true(rep.complete);
    assert_int_equal(rep.dead_lettered, 7);
    assert_int_equal(dl_em.got.n, 7);
    if (h->delivered) {
        shape_kafka_contract_list got;
        read_back(h, &got);
        assert_int_equal(got.n, EVENTS - 7); /* delivered and dead-lettered: disjoint, all keys */
        for (size_t i = 0; i < dl_em.got.n; i++) {
            assert_false(in_list(&got, dl_em.got.keys[i]));
            assert_true(in_list(&reference, dl_em.got.keys[i]));
        }
        shape_kafka_contract_list_reset(&got);
    }
    shape_kafka_contract_list_reset(&dl_em.got);
    /* without one: the run stops, naming the first refused key */
    h->reset(h->ctx);
    unlink(ck_path);
    cfg.dead_letter = NULL;
    open_dest(h, 0, &dest.type, &dest.emitter);
    h->inject_rejections(h->ctx, 1);
    assert_int_equal(shape_emit_run(&cfg, &rep, &err), SHAPE_EINVAL);
    close_dest(h, dest.type, dest.emitter);
    assert_int_equal(shape_exit_code(err.code), 2);
    const char *first = strstr(err.message, "rejected 1 event (first ");
    assert_non_null(first);
    char key[128];
    snprintf(key, sizeof key, "%.*s", (int)strcspn(first + 24, ":"), first + 24);
    assert_true(in_list(&reference, key));
    assert_non_null(strstr(err.message, "--dead-letter"));
}

/* ---- setup and the group --------------------------------------------------------------------- */

static int make_reference(void)
{
    shape_err err;
    if (shape_domain_open(shape_retail_domain_type(), "small", 11, &domain, &err) != SHAPE_OK) return -1;
    const char *tables[] = {"product", "order_line"};
    if (shape_event_plan_init(&plan, domain, tables, 2, &err) != SHAPE_OK) return -1;
    if (shape_emit_fingerprint(&plan, SHAPE_ENVELOPE_FLAT, NULL, fingerprint, &err) != SHAPE_OK) return -1;
    snprintf(dir, sizeof dir, "/tmp/shape-emitter-contract-%ld", (long)getpid());
    snprintf(ck_path, sizeof ck_path, "%s/run.ck", dir);
    if (mkdir(dir, 0700) != 0) return -1;
    shape_emitter rec;
    memset(&rec, 0, sizeof rec);
    shape_emit_destination dest = {&recorder_type, &rec, "reference"};
    shape_emit_config cfg;
    shape_emit_report rep;
    base_config(&cfg, &dest);
    cfg.checkpoint_path = NULL;
    if (shape_emit_run(&cfg, &rep, &err) != SHAPE_OK || rec.got.n != EVENTS) return -1;
    reference = rec.got;
    return 0;
}

int shape_kafka_emitter_contract_run(const char *group, const shape_kafka_emitter_harness *const *harnesses, size_t n)
{
    static const struct {
        const char *name;
        CMUnitTestFunction fn;
    } checks[] = {
        {"unknown options refused", check_unknown_options_refused},
        {"send acknowledges all", check_send_acknowledges_all},
        {"submissions complete in order", check_submissions_in_order},
        {"run and resume keep keys and order", check_run_and_resume},
        {"retry after injected failures", check_retry_after_failures},
        {"native failures retried", check_native_failures},
        {"backpressure waited out", check_backpressure},
        {"refusals reported", check_refusals_reported},
    };
    const size_t nchecks = sizeof checks / sizeof checks[0];
    if (make_reference() != 0) {
        fprintf(stderr, "emitter contract: cannot make the reference stream\n");
        return 1;
    }
    struct CMUnitTest *tests = calloc(n * nchecks, sizeof *tests);
    char **names = calloc(n * nchecks, sizeof *names);
    if (!tests || !names) return 1;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < nchecks; c++) {
            size_t t = i * nchecks + c;
            size_t len = strlen(harnesses[i]->name) + strlen(checks[c].name) + 3;
            names[t] = malloc(len);
            snprintf(names[t], len, "%s: %s", harnesses[i]->name, checks[c].name);
            tests[t] = (struct CMUnitTest){names[t], checks[c].fn, NULL, NULL, (void *)harnesses[i]};
        }
    int failed = _cmocka_run_group_tests(group, tests, n * nchecks, NULL, NULL);
    for (size_t t = 0; t < n * nchecks; t++) free(names[t]);
    free(names);
    free(tests);
    unlink(ck_path);
    rmdir(dir);
    shape_kafka_contract_list_reset(&reference);
    shape_event_plan_reset(&plan);
    shape_domain_free(domain);
    return failed;
}

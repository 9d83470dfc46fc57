/* test_emit.c — the emit runtime (shape/emit.h) against an in-memory
 * emitter with injectable faults, plus SHA-256 and checkpoint documents.
 *
 * The fake emitter records every delivered key in order; knobs make the
 * next N sends leave the second half of their batch undelivered (RETRY,
 * as a producer whose flush partly failed), refuse chosen messages, or fail
 * a whole batch. The checks are the emitter contract's, at the runtime level:
 * everything delivered at least once and in order after dedup, retries
 * counted, exhausted retries and refusals stop the run with exit-2 codes,
 * the checkpoint never passes what was delivered, resume continues exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shape/domain.h"
#include "shape/emit.h"
#include "shape/generate_retail.h"

/* ---- the fake emitter --------------------------------------------------------- */

struct shape_emitter {
    char **keys;
    size_t nkeys, cap;
    int partial_failures; /* next sends: second half RETRY */
    int batch_failures;   /* next sends: return SHAPE_ECONN, nothing delivered */
    int refuse_at;        /* refuse the message whose key ends in this seq (-1: none) */
    int sends;
    int wants_rows;       /* what wants_rows answers (rows_type) */
    size_t with_body, without_body, with_rows; /* messages handed in, by what they carry */
    size_t rows_wrong;    /* messages whose typed row is not the event of their key */
    char *last_value;     /* the value of the last message recorded */
    uint64_t hash;        /* of every key and value recorded, in order */
};

/* The typed row of m (plan.h: a struct array of the flat event's columns)
 * says "_shape_table"/"_shape_seq" = m's key. */
static int row_matches_key(const shape_emit_message *m)
{
    const struct ArrowSchema *s = m->row_schema;
    const struct ArrowArray *a = m->row_array;
    char want[160], got[160] = "";
    int64_t seq = -1;
    snprintf(want, sizeof want, "%.*s", (int)m->key_len, (const char *)m->key);
    if (m->row < 0 || m->row >= a->length) return 0;
    for (int64_t c = 0; c < s->n_children; c++) {
        const struct ArrowArray *col = a->children[c];
        int64_t i = col->offset + m->row;
        if (strcmp(s->children[c]->name, "_shape_seq") == 0) seq = ((const int64_t *)col->buffers[1])[i];
        if (strcmp(s->children[c]->name, "_shape_table") == 0) {
            const int32_t *off = col->buffers[1];
            snprintf(got, sizeof got, "%.*s", (int)(off[i + 1] - off[i]), (const char *)col->buffers[2] + off[i]);
        }
    }
    snprintf(got + strlen(got), sizeof got - strlen(got), "/%lld", (long long)seq);
    return strcmp(want, got) == 0;
}

static void record(shape_emitter *e, const shape_emit_message *m)
{
    if (e->nkeys == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 1024;
        e->keys = realloc(e->keys, e->cap * sizeof *e->keys);
    }
    char *k = malloc(m->key_len + 1);
    memcpy(k, m->key, m->key_len);
    k[m->key_len] = 0;
    e->keys[e->nkeys++] = k;
    for (size_t i = 0; i < m->key_len; i++) e->hash = (e->hash ^ (uint8_t)k[i]) * 1099511628211ULL;
    for (size_t i = 0; i < m->value_len; i++) e->hash = (e->hash ^ ((const uint8_t *)m->value)[i]) * 1099511628211ULL;
    e->hash = (e->hash ^ 0xff) * 1099511628211ULL;
    free(e->last_value);
    e->last_value = malloc(m->value_len + 1);
    if (m->value_len) memcpy(e->last_value, m->value, m->value_len);
    e->last_value[m->value_len] = 0;
}

static int fake_send(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err)
{
    e->sends++;
    if (e->batch_failures > 0) {
        e->batch_failures--;
        return shape_err_set(err, SHAPE_ECONN, "fake: broker down");
    }
    size_t cut = n;
    if (e->partial_failures > 0) {
        e->partial_failures--;
        cut = n / 2;
    }
    for (size_t i = 0; i < n; i++) {
        if (msgs[i].value_len) e->with_body++;
        else e->without_body++;
        if (msgs[i].row_array) {
            e->with_rows++;
            if (!row_matches_key(&msgs[i])) e->rows_wrong++;
        }
        char seq[32];
        snprintf(seq, sizeof seq, "/%d", e->refuse_at);
        size_t sl = strlen(seq);
        if (e->refuse_at >= 0 && msgs[i].key_len > sl &&
            memcmp((const char *)msgs[i].key + msgs[i].key_len - sl, seq, sl) == 0) {
            msgs[i].outcome = SHAPE_EMIT_REFUSED;
            snprintf(msgs[i].reason, sizeof msgs[i].reason, "MSG_SIZE_TOO_LARGE");
        } else if (i < cut) {
            record(e, &msgs[i]);
            msgs[i].outcome = SHAPE_EMIT_DELIVERED;
        } else {
            msgs[i].outcome = SHAPE_EMIT_RETRY;
            snprintf(msgs[i].reason, sizeof msgs[i].reason, "_MSG_TIMED_OUT");
        }
    }
    return SHAPE_OK;
}

static int fake_flush(shape_emitter *e, shape_err *err)
{
    (void)e;
    (void)err;
    return SHAPE_OK;
}

static const shape_emitter_type fake_type = {
    .name = "fake", .send = fake_send, .flush = fake_flush};

static int fake_wants_rows(shape_emitter *e) { return e->wants_rows; }

/* The fake as a destination that encodes events itself (as kafka:// with
 * --event-format does): its wants_rows answers e->wants_rows. */
static const shape_emitter_type rows_type = {
    .name = "rows", .send = fake_send, .flush = fake_flush, .wants_rows = fake_wants_rows};

static void fake_free(shape_emitter *e)
{
    for (size_t i = 0; i < e->nkeys; i++) free(e->keys[i]);
    free(e->keys);
    free(e->last_value);
}

/* ---- fixture ----------------------------------------------------------------------- */

typedef struct fx {
    shape_domain *d;
    shape_event_plan plan;
    shape_emitter em;
    shape_emit_destination dest;
    shape_emit_config cfg;
    char ck_path[64];
    char fp[65];
} fx;

static fx *fx_new(void)
{
    fx *f = calloc(1, sizeof *f);
    shape_err err;
    assert_int_equal(shape_domain_open(shape_retail_domain_type(), "small", 11, &f->d, &err), SHAPE_OK);
    const char *tables[] = {"order_line"};
    assert_int_equal(shape_event_plan_init(&f->plan, f->d, tables, 1, &err), SHAPE_OK);
    f->em.refuse_at = -1;
    f->dest = (shape_emit_destination){&fake_type, &f->em, "fake"};
    snprintf(f->ck_path, sizeof f->ck_path, "/tmp/shape-test-emit-%ld.ck", (long)getpid());
    unlink(f->ck_path);
    assert_int_equal(shape_emit_fingerprint(&f->plan, SHAPE_ENVELOPE_FLAT, NULL, f->fp, &err), SHAPE_OK);
    shape_emit_config *c = &f->cfg;
    c->plan = &f->plan;
    c->partition = -1;
    c->limit = 2500;
    c->duration = -1;
    c->batch_events = 500;
    c->queue_batches = 2;
    c->checkpoint_path = f->ck_path;
    c->fingerprint = f->fp;
    c->checkpoint_every = 500;
    c->checkpoint_seconds = 100;
    c->retries = 3;
    c->retry_backoff = 0;
    c->dests = &f->dest;
    c->ndests = 1;
    return f;
}

static void fx_free(fx *f)
{
    fake_free(&f->em);
    shape_event_plan_reset(&f->plan);
    shape_domain_free(f->d);
    unlink(f->ck_path);
    free(f);
}

static shape_emit_checkpoint read_ck(fx *f)
{
    shape_emit_checkpoint ck;
    int found;
    shape_err err;
    assert_int_equal(shape_emit_checkpoint_read(f->ck_path, f->fp, f->plan.total, &ck, &found, &err), SHAPE_OK);
    assert_true(found);
    return ck;
}

/* The first-per-key stream equals order_line/0 .. order_line/(n-1). */
static void assert_stream(fx *f, size_t n)
{
    size_t next = 0;
    for (size_t i = 0; i < f->em.nkeys; i++) {
        unsigned long seq;
        assert_int_equal(sscanf(f->em.keys[i], "order_line/%lu", &seq), 1);
        if (seq == next) next++;
        else assert_true(seq < next); /* a re-delivery of an earlier key */
    }
    assert_int_equal(next, n);
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_sha256(void **state)
{
    (void)state;
    char out[65];
    shape_sha256_hex("abc", 3, out);
    assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    shape_sha256_hex("", 0, out);
    assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    shape_sha256_hex(m, strlen(m), out);
    assert_string_equal(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_clean_run(void **state)
{
    (void)state;
    fx *f = fx_new();
    shape_emit_report rep;
    shape_err err;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_OK);
    assert_int_equal(rep.events, 2500);
    assert_int_equal(f->em.nkeys, 2500);
    assert_string_equal(f->em.keys[0], "order_line/0");
    assert_string_equal(f->em.keys[2499], "order_line/2499");
    assert_string_equal(rep.stopped_by, "max-events");
    assert_true(rep.complete);
    shape_emit_checkpoint ck = read_ck(f);
    assert_int_equal(ck.offset, 2500);
    assert_true(ck.complete);
    /* resume from 700: continues exactly there */
    ck.offset = 700;
    ck.complete = 0;
    assert_int_equal(shape_emit_checkpoint_write(f->ck_path, &ck, &err), SHAPE_OK);
    f->cfg.start_offset = read_ck(f).offset;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_OK);
    assert_int_equal(rep.events, 1800);
    assert_string_equal(f->em.keys[2500], "order_line/700");
    assert_int_equal(f->em.nkeys, 4300);
    assert_stream(f, 2500);
    fx_free(f);
}

static void test_retries(void **state)
{
    (void)state;
    fx *f = fx_new();
    f->em.partial_failures = 2;
    f->em.batch_failures = 1;
    shape_emit_report rep;
    shape_err err;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_OK);
    assert_int_equal(rep.retries, 3);
    assert_int_equal(rep.events, 2500);
    assert_stream(f, 2500);
    /* only undelivered messages are re-sent: no duplicates at all here */
    assert_int_equal(f->em.nkeys, 2500);
    fx_free(f);
}

static void test_retries_exhausted(void **state)
{
    (void)state;
    fx *f = fx_new();
    f->em.batch_failures = 1000;
    f->cfg.retries = 1;
    shape_emit_report rep;
    shape_err err;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_ECONN);
    assert_string_equal(err.message, "delivery failed after 1 retries: fake: broker down");
    assert_int_equal(shape_exit_code(err.code), 2);
    assert_string_equal(rep.stopped_by, "error");
    assert_int_equal(read_ck(f).offset, 0); /* nothing delivered, nothing passed */
    fx_free(f);
}

static void test_checkpoint_never_passes_delivery(void **state)
{
    (void)state;
    fx *f = fx_new();
    f->em.partial_failures = 1000; /* each send delivers half: progress, then give up */
    f->cfg.retries = 2;
    shape_emit_report rep;
    shape_err err;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_ECONN);
    shape_emit_checkpoint ck = read_ck(f);
    assert_false(ck.complete);
    /* what was delivered is the head of the failed group (each retry sends
     * only the undelivered rest, in order): the checkpoint is at its end, so
     * a rerun sends none of it again */
    assert_int_equal(ck.offset, f->em.nkeys);
    assert_int_equal(rep.end_offset, f->em.nkeys);
    assert_true(f->em.nkeys > 0);
    fx_free(f);
}

static void test_refusal(void **state)
{
    (void)state;
    fx *f = fx_new();
    f->em.refuse_at = 612;
    f->cfg.queue_batches = 1; /* one batch per send: the group is the batch */
    shape_emit_report rep;
    shape_err err;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "the destination rejected 1 event (first order_line/612: MSG_SIZE_TOO_LARGE); "
                                     "use --dead-letter URI to route them elsewhere");
    /* the rest of the refused batch was delivered; the checkpoint stays at
     * the refused event: the head of its batch before it counts */
    assert_int_equal(f->em.nkeys, 999);
    assert_int_equal(read_ck(f).offset, 612);
    fx_free(f);
}

static void test_dead_letters(void **state)
{
    (void)state;
    fx *f = fx_new();
    f->em.refuse_at = 612;
    shape_emitter dl_em;
    memset(&dl_em, 0, sizeof dl_em);
    dl_em.refuse_at = -1;
    shape_emit_destination dl = {&fake_type, &dl_em, "dead"};
    f->cfg.dead_letter = &dl;
    f->cfg.max_dead_letter = -1;
    shape_emit_report rep;
    shape_err err;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_OK);
    assert_true(rep.complete);
    assert_int_equal(rep.dead_lettered, 1);
    assert_int_equal(rep.ndl_reasons, 1);
    assert_string_equal(rep.dl_reasons[0].reason, "MSG_SIZE_TOO_LARGE");
    assert_int_equal(dl_em.nkeys, 1);
    assert_string_equal(dl_em.keys[0], "order_line/612"); /* keyed by the original key */
    assert_int_equal(f->em.nkeys, 2499);                  /* every other key delivered */
    for (size_t i = 0; i < f->em.nkeys; i++) assert_string_not_equal(f->em.keys[i], "order_line/612");
    /* past --max-dead-letter 0: stop, exit 1 */
    fake_free(&dl_em);
    memset(&dl_em, 0, sizeof dl_em);
    dl_em.refuse_at = -1;
    f->cfg.max_dead_letter = 0;
    f->cfg.start_offset = 0;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_ELIMIT);
    assert_int_equal(shape_exit_code(err.code), 1);
    assert_string_equal(rep.stopped_by, "dead-letter-limit");
    assert_false(rep.complete);
    assert_string_equal(err.message, "stopped, more than 0 events were dead-lettered (1 so far)");
    fake_free(&dl_em);
    fx_free(f);
}

/* ---- a domain of byte strings, through the domain interface -------------------- */

/* One table `note` whose text column holds, row by row: valid UTF-8, an
 * overlong '/', a UTF-16 surrogate, a code point above U+10FFFF, and a valid
 * 4-byte sequence. The JSON body carries the bytes raw, so a dead letter of
 * rows 1..3 must be base64 and of rows 0 and 4 text. */
static const char *const NOTE_TEXT[] = {"ok \xc3\xbc", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                        "\xf0\x9f\x98\x80"};
#define NOTES (sizeof NOTE_TEXT / sizeof NOTE_TEXT[0])
static const shape_gen_column NOTE_COLS[] = {{"note_id", SHAPE_GEN_INT64, 0}, {"text", SHAPE_GEN_STRING, 0}};
static int note_impl, note_cursor;

static const char *note_preset(const shape_domain_type *t, size_t i)
{
    (void)t;
    return i == 0 ? "one" : NULL;
}
static int note_open(const shape_domain_type *t, const char *preset, uint64_t seed, void **impl, shape_err *err)
{
    (void)t, (void)preset, (void)seed, (void)err;
    *impl = &note_impl;
    return SHAPE_OK;
}
static void note_close(void *impl) { (void)impl; }
static size_t note_count(const void *impl)
{
    (void)impl;
    return 1;
}
static void note_table(const void *impl, size_t t, shape_domain_table *out)
{
    (void)impl, (void)t;
    *out = (shape_domain_table){"note", NOTE_COLS, 2, -1, NOTES};
}
static size_t note_identity(const void *impl, shape_domain_field *out, size_t cap)
{
    (void)impl;
    if (cap) out[0] = (shape_domain_field){"domain", "notes", 0};
    return cap ? 1 : 0;
}
static int note_cursor_open(void *impl, size_t t, void **cursor, shape_err *err)
{
    (void)impl, (void)t, (void)err;
    *cursor = &note_cursor;
    return SHAPE_OK;
}
static int note_row(void *cursor, uint64_t row, shape_gen_row *out, shape_err *err)
{
    (void)cursor, (void)err;
    out->ncols = 2;
    out->values[0] = (shape_gen_value){.kind = SHAPE_GEN_INT64, .v.i = (int64_t)row + 1};
    out->values[1] = (shape_gen_value){.kind = SHAPE_GEN_STRING, .len = (uint32_t)strlen(NOTE_TEXT[row]),
                                       .v.s = NOTE_TEXT[row]};
    return SHAPE_OK;
}
static void note_cursor_close(void *cursor) { (void)cursor; }

static const shape_domain_type NOTES_TYPE = {
    .name = "notes", .default_preset = "one", .preset_name = note_preset, .open = note_open,
    .close = note_close, .table_count = note_count, .table = note_table, .identity = note_identity,
    .cursor_open = note_cursor_open, .cursor_row = note_row, .cursor_close = note_cursor_close};

/* A dead letter's body is text only when it is well-formed UTF-8 (no
 * overlongs, surrogates or code points past U+10FFFF), else base64. */
static void test_dead_letter_utf8(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d;
    shape_event_plan plan;
    assert_int_equal(shape_domain_open(&NOTES_TYPE, NULL, 0, &d, &err), SHAPE_OK);
    assert_int_equal(shape_event_plan_init(&plan, d, NULL, 0, &err), SHAPE_OK);
    for (size_t r = 0; r < NOTES; r++) {
        shape_emitter em, dl_em;
        memset(&em, 0, sizeof em);
        memset(&dl_em, 0, sizeof dl_em);
        em.refuse_at = (int)r;
        dl_em.refuse_at = -1;
        shape_emit_destination dest = {&fake_type, &em, "fake"}, dl = {&fake_type, &dl_em, "dead"};
        shape_emit_config cfg = {0};
        cfg.plan = &plan;
        cfg.partition = -1;
        cfg.limit = plan.total;
        cfg.duration = -1;
        cfg.batch_events = 10;
        cfg.queue_batches = 2;
        cfg.checkpoint_every = 100;
        cfg.checkpoint_seconds = 100;
        cfg.dests = &dest;
        cfg.ndests = 1;
        cfg.dead_letter = &dl;
        cfg.max_dead_letter = -1;
        shape_emit_report rep;
        assert_int_equal(shape_emit_run(&cfg, &rep, &err), SHAPE_OK);
        assert_int_equal(rep.dead_lettered, 1);
        assert_int_equal(dl_em.nkeys, 1);
        int base64 = strstr(dl_em.last_value, ",\"body_encoding\":\"base64\"") != NULL;
        assert_int_equal(base64, r >= 1 && r <= 3);
        if (!base64) assert_non_null(strstr(dl_em.last_value, NOTE_TEXT[r]));
        fake_free(&em);
        fake_free(&dl_em);
    }
    shape_event_plan_reset(&plan);
    shape_domain_free(d);
}

/* Destinations that encode from the typed rows alone get no JSON bodies,
 * unless another destination or a dead letter may need them. */
static void test_rows_only_destinations(void **state)
{
    (void)state;
    shape_emit_report rep;
    shape_err err;
    /* alone: rows, no bodies, the whole stream */
    fx *f = fx_new();
    f->dest.type = &rows_type;
    f->em.wants_rows = SHAPE_EMIT_ROWS_ONLY;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_OK);
    assert_stream(f, 2500);
    assert_int_equal(f->em.with_body, 0);
    assert_int_equal(f->em.with_rows, f->em.without_body);
    assert_int_equal(f->em.with_rows, 2500);
    fx_free(f);
    /* rows wanted, values read too (json-schema): bodies */
    f = fx_new();
    f->dest.type = &rows_type;
    f->em.wants_rows = 1;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_OK);
    assert_int_equal(f->em.without_body, 0);
    assert_int_equal(f->em.with_rows, 2500);
    assert_true(f->em.last_value[0] == '{');
    fx_free(f);
    /* a second destination that reads the bodies: bodies for both */
    f = fx_new();
    f->em.wants_rows = SHAPE_EMIT_ROWS_ONLY;
    shape_emitter json_em;
    memset(&json_em, 0, sizeof json_em);
    json_em.refuse_at = -1;
    shape_emit_destination two[2] = {{&rows_type, &f->em, "rows"}, {&fake_type, &json_em, "json"}};
    f->cfg.dests = two;
    f->cfg.ndests = 2;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_OK);
    assert_int_equal(f->em.without_body, 0);
    assert_int_equal(json_em.without_body, 0);
    assert_int_equal(json_em.with_body, 2500);
    fake_free(&json_em);
    fx_free(f);
    /* a dead-letter destination: bodies, and the refused event's is in its record */
    f = fx_new();
    f->dest.type = &rows_type;
    f->em.wants_rows = SHAPE_EMIT_ROWS_ONLY;
    f->em.refuse_at = 612;
    shape_emitter dl_em;
    memset(&dl_em, 0, sizeof dl_em);
    dl_em.refuse_at = -1;
    shape_emit_destination dl = {&fake_type, &dl_em, "dead"};
    f->cfg.dead_letter = &dl;
    f->cfg.max_dead_letter = -1;
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_OK);
    assert_int_equal(rep.dead_lettered, 1);
    assert_int_equal(f->em.without_body, 0);
    /* the body: the event's JSON text, escaped in the record */
    assert_non_null(strstr(dl_em.last_value, "\"body\":\"{\\\""));
    assert_non_null(strstr(dl_em.last_value, "\\\"_shape_table\\\":\\\"order_line\\\",\\\"_shape_seq\\\":612}\""));
    fake_free(&dl_em);
    fx_free(f);
}

static void test_checkpoint_documents(void **state)
{
    (void)state;
    fx *f = fx_new();
    shape_err err;
    shape_emit_checkpoint ck = {.offset = 10, .total = 2500, .complete = 0};
    memcpy(ck.fingerprint, f->fp, 65);
    assert_int_equal(shape_emit_checkpoint_write(f->ck_path, &ck, &err), SHAPE_OK);
    shape_emit_checkpoint got;
    int found;
    char other[65];
    memset(other, 'a', 64);
    other[64] = 0;
    assert_int_equal(shape_emit_checkpoint_read(f->ck_path, other, 2500, &got, &found, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "belongs to a different stream"));
    assert_non_null(strstr(err.message, "use --fresh"));
    ck.offset = 3000;
    assert_int_equal(shape_emit_checkpoint_write(f->ck_path, &ck, &err), SHAPE_OK);
    assert_int_equal(shape_emit_checkpoint_read(f->ck_path, f->fp, 2500, &got, &found, &err), SHAPE_EINVAL);
    FILE *fp = fopen(f->ck_path, "w");
    fputs("{\"format\":\"x\"}", fp);
    fclose(fp);
    assert_int_equal(shape_emit_checkpoint_read(f->ck_path, f->fp, 2500, &got, &found, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "not an emit checkpoint"));
    /* the bytes are the format's (as the snprintf writer made them before)
     * plus the checksum member last, and the bytes without it (written by
     * earlier versions) still resume */
    char want[400], text[400];
    for (int shard = 0; shard < 2; shard++) {
        snprintf(ck.shard, sizeof ck.shard, "%s", shard ? "2/7" : "");
        ck.offset = 10;
        ck.complete = shard;
        assert_int_equal(shape_emit_checkpoint_write(f->ck_path, &ck, &err), SHAPE_OK);
        snprintf(want, sizeof want,
                 "{\"format\":\"shape-emit-v1\",\"fingerprint\":\"%s\",\"offset\":10,\"total\":2500,"
                 "\"complete\":%s%s}\n",
                 f->fp, shard ? "true" : "false", shard ? ",\"shard\":\"2/7\"" : "");
        fp = fopen(f->ck_path, "r");
        size_t len = fread(text, 1, sizeof text - 1, fp);
        fclose(fp);
        text[len] = 0;
        size_t head = strlen(want) - 2; /* without "}\n" */
        assert_memory_equal(text, want, head);
        assert_memory_equal(text + head, ",\"checksum\":\"xxh3-128:", 22);
        assert_int_equal(len, head + 22 + 32 + 3);
        assert_string_equal(text + len - 3, "\"}\n");
        assert_int_equal(shape_emit_checkpoint_read(f->ck_path, f->fp, 2500, &got, &found, &err), SHAPE_OK);
        assert_true(found);
        assert_memory_equal(&got, &ck, sizeof ck);
        /* an edited number no longer matches the checksum */
        char *off = strstr(text, "\"offset\":10");
        off[10] = '2';
        fp = fopen(f->ck_path, "w");
        fputs(text, fp);
        fclose(fp);
        assert_int_equal(shape_emit_checkpoint_read(f->ck_path, f->fp, 2500, &got, &found, &err), SHAPE_EINVAL);
        assert_non_null(strstr(err.message, "does not match its checksum"));
        /* the document without a checksum (an older shape's) resumes */
        fp = fopen(f->ck_path, "w");
        fputs(want, fp);
        fclose(fp);
        assert_int_equal(shape_emit_checkpoint_read(f->ck_path, f->fp, 2500, &got, &found, &err), SHAPE_OK);
        assert_true(found);
        assert_memory_equal(&got, &ck, sizeof ck);
    }
    memset(ck.shard, 0, sizeof ck.shard);
    /* a key given twice is damage, not "the last one wins" */
    fp = fopen(f->ck_path, "w");
    fprintf(fp, "{\"format\":\"shape-emit-v1\",\"fingerprint\":\"%s\",\"offset\":10,\"offset\":20,\"total\":2500,"
                "\"complete\":false}\n",
            f->fp);
    fclose(fp);
    assert_int_equal(shape_emit_checkpoint_read(f->ck_path, f->fp, 2500, &got, &found, &err), SHAPE_EINVAL);
    assert_false(found);
    assert_string_equal(got.fingerprint, "");
    assert_non_null(strstr(err.message, "not an emit checkpoint (use --fresh to start over)"));
    unlink(f->ck_path);
    assert_int_equal(shape_emit_checkpoint_read(f->ck_path, f->fp, 2500, &got, &found, &err), SHAPE_OK);
    assert_false(found);
    /* the fingerprint follows the stream, not the rate */
    char fp2[65];
    assert_int_equal(shape_emit_fingerprint(&f->plan, SHAPE_ENVELOPE_CLOUDEVENTS, NULL, fp2, &err), SHAPE_OK);
    assert_string_not_equal(fp2, f->fp);
    /* ... and its bytes: a registry format is another stream; "json" is the default */
    assert_int_equal(shape_emit_fingerprint(&f->plan, SHAPE_ENVELOPE_FLAT, "json", fp2, &err), SHAPE_OK);
    assert_string_equal(fp2, f->fp);
    assert_int_equal(shape_emit_fingerprint(&f->plan, SHAPE_ENVELOPE_FLAT, "avro", fp2, &err), SHAPE_OK);
    assert_string_not_equal(fp2, f->fp);
    fx_free(f);
}

/* --shard i/n: each shard delivers exactly positions i, i+n, ... of the
 * unsharded stream (keys unchanged), through partial failures and retries
 * (which look messages up in their batch by seq, so the stride matters). */
static void test_shards(void **state)
{
    (void)state;
    shape_err err;
    uint64_t i, n;
    assert_int_equal(shape_emit_parse_shard("2/5", &i, &n, &err), SHAPE_OK);
    assert_true(i == 2 && n == 5);
    assert_int_equal(shape_emit_parse_shard("0/1", &i, &n, &err), SHAPE_OK);
    assert_true(i == 0 && n == 1);
    const char *bad[] = {"5/5", "1/0", "", "/", "a/2", "1/2x", "-1/2", "1/-2", "1 /2", "1/1000001", "0/99999999"};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        assert_int_equal(shape_emit_parse_shard(bad[b], &i, &n, &err), SHAPE_EINVAL);
        assert_non_null(strstr(err.message, "--shard must be I/N"));
    }
    assert_int_equal(shape_emit_shard_events(10, 0, 3), 4);
    assert_int_equal(shape_emit_shard_events(10, 1, 3), 3);
    assert_int_equal(shape_emit_shard_events(10, 2, 3), 3);
    assert_int_equal(shape_emit_shard_events(2, 2, 3), 0);
    assert_int_equal(shape_emit_shard_events(10, 0, 1), 10);
    assert_int_equal(shape_emit_shard_events(0, 0, 4), 0);

    fx *whole = fx_new();
    whole->cfg.checkpoint_path = NULL;
    shape_emit_report rep;
    assert_int_equal(shape_emit_run(&whole->cfg, &rep, &err), SHAPE_OK);
    assert_int_equal(whole->em.nkeys, 2500);
    /* fingerprints: 0/1 is the whole stream; shards differ from it and each other */
    char fp0[65], fp1[65], fp_one[65];
    assert_int_equal(shape_emit_shard_fingerprint(&whole->plan, SHAPE_ENVELOPE_FLAT, NULL, 0, 1, fp_one, &err),
                     SHAPE_OK);
    assert_string_equal(fp_one, whole->fp);
    assert_int_equal(shape_emit_shard_fingerprint(&whole->plan, SHAPE_ENVELOPE_FLAT, NULL, 0, 2, fp0, &err),
                     SHAPE_OK);
    assert_int_equal(shape_emit_shard_fingerprint(&whole->plan, SHAPE_ENVELOPE_FLAT, NULL, 1, 2, fp1, &err),
                     SHAPE_OK);
    assert_string_not_equal(fp0, whole->fp);
    assert_string_not_equal(fp0, fp1);

    for (uint64_t s = 0; s < 3; s++) {
        fx *f = fx_new();
        f->cfg.shard_index = s;
        f->cfg.shard_count = 3;
        f->cfg.limit = shape_emit_shard_events(2500, s, 3);
        f->cfg.batch_events = 97;
        f->em.partial_failures = 3;
        assert_int_equal(shape_emit_shard_fingerprint(&f->plan, SHAPE_ENVELOPE_FLAT, NULL, s, 3, f->fp, &err),
                         SHAPE_OK);
        int run_rc = shape_emit_run(&f->cfg, &rep, &err);
        if (run_rc != SHAPE_OK) fprintf(stderr, "shard run: %s\n", err.message);
        assert_int_equal(run_rc, SHAPE_OK);
        assert_int_equal(rep.events, f->cfg.limit);
        assert_int_equal(rep.total_events, shape_emit_shard_events(f->plan.total, s, 3));
        assert_true(rep.retries >= 3);
        /* delivered in order, each once after the retries: positions s, s+3, ... */
        size_t next = 0;
        for (size_t k = 0; k < f->em.nkeys; k++) {
            if (next < f->cfg.limit && strcmp(f->em.keys[k], whole->em.keys[s + 3 * next]) == 0) next++;
            else assert_true(k > 0); /* a re-sent message repeats an earlier key of the batch */
        }
        assert_int_equal(next, f->cfg.limit);
        /* the checkpoint names the shard and counts its events */
        shape_emit_checkpoint ck;
        int found;
        assert_int_equal(shape_emit_checkpoint_read(f->ck_path, f->fp, rep.total_events, &ck, &found, &err),
                         SHAPE_OK);
        assert_true(found);
        assert_int_equal(ck.offset, f->cfg.limit);
        char want[16];
        snprintf(want, sizeof want, "%llu/3", (unsigned long long)s);
        assert_string_equal(ck.shard, want);
        /* ... and another shard's fingerprint refuses it, by name */
        assert_int_equal(shape_emit_checkpoint_read(f->ck_path, whole->fp, rep.total_events, &ck, &found, &err),
                         SHAPE_EINVAL);
        assert_non_null(strstr(err.message, want));
        fx_free(f);
    }
    /* resume a shard in the middle: the rest only */
    fx *f = fx_new();
    f->cfg.shard_index = 1;
    f->cfg.shard_count = 3;
    f->cfg.start_offset = 100;
    f->cfg.limit = shape_emit_shard_events(2500, 1, 3);
    assert_int_equal(shape_emit_run(&f->cfg, &rep, &err), SHAPE_OK);
    assert_int_equal(f->em.nkeys, f->cfg.limit - 100);
    for (size_t k = 0; k < f->em.nkeys; k++) assert_string_equal(f->em.keys[k], whole->em.keys[1 + 3 * (100 + k)]);
    fx_free(f);
    fx_free(whole);
}

/* ---- event-time order with faults and shards ---------------------------------------- */

/* retail small in event-time order, every table, 2,000 of its 21,750
 * events, no checkpoint; with faults of every kind when faulted. */
static fx *fx_timeline(int faulted)
{
    fx *f = calloc(1, sizeof *f);
    shape_err err;
    assert_int_equal(shape_domain_open_timeline(shape_retail_domain_type(), "small", 11, &f->d, &err), SHAPE_OK);
    assert_int_equal(shape_event_plan_init(&f->plan, f->d, NULL, 0, &err), SHAPE_OK);
    f->em.refuse_at = -1;
    f->dest = (shape_emit_destination){&fake_type, &f->em, "fake"};
    shape_emit_config *c = &f->cfg;
    c->plan = &f->plan;
    c->partition = -1;
    c->limit = 2000;
    c->duration = -1;
    c->batch_events = 250;
    c->queue_batches = 2;
    c->checkpoint_every = 500;
    c->checkpoint_seconds = 100;
    c->retries = 3;
    c->dests = &f->dest;
    c->ndests = 1;
    c->ooo_window = 1000;
    c->duplicate_window = 1000;
    c->fault_seed = 11;
    if (faulted) {
        c->out_of_order = 0.05;
        c->ooo_window = 120;
        c->duplicate_fraction = 0.04;
        c->duplicate_window = 300;
        c->poison_fraction = 0.02;
        c->anomaly_fraction = 0.03;
    }
    return f;
}

static void run_ok(fx *f, shape_emit_report *rep)
{
    shape_err err;
    int rc = shape_emit_run(&f->cfg, rep, &err);
    if (rc != SHAPE_OK) fprintf(stderr, "run: %s\n", err.message);
    assert_int_equal(rc, SHAPE_OK);
}

/* Faults in event-time order: the same config gives the same messages
 * (keys and bytes) whatever the batch size; every fault kind happens; the
 * originals are the clean stream's events, each once, late ones at most a
 * window later; a run stopped at offset 1,337 (in the timeline, past the head's 900) and one resumed there give,
 * together, exactly the uninterrupted messages; typed rows (a destination
 * that encodes its own) are each message's event, copies of other tables
 * included. */
static void test_event_time_faults(void **state)
{
    (void)state;
    shape_emit_report rep, rep2;
    fx *clean = fx_timeline(0);
    clean->cfg.limit = 2100; /* (the faulted run's last window reaches past 2,000) */
    run_ok(clean, &rep);
    assert_int_equal(clean->em.nkeys, 2100);
    fx *a = fx_timeline(1), *b = fx_timeline(1);
    b->cfg.batch_events = 77;
    run_ok(a, &rep);
    run_ok(b, &rep2);
    assert_int_equal(rep.events, 2000);
    assert_true(rep.duplicates > 40 && rep.poisoned > 15 && rep.late > 50 && rep.anomalies_selected > 25);
    assert_int_equal(rep.duplicates, rep2.duplicates);
    assert_int_equal(rep.late, rep2.late);
    assert_int_equal(a->em.nkeys, 2000 + rep.duplicates);
    assert_int_equal(a->em.nkeys, b->em.nkeys);
    assert_true(a->em.hash == b->em.hash);
    /* originals: the clean events, late ones at most 120 positions on */
    size_t orig = 0, moved = 0;
    for (size_t i = 0; i < a->em.nkeys; i++) {
        size_t j, p = SIZE_MAX;
        for (j = i > 400 ? i - 400 : 0; j < i && strcmp(a->em.keys[j], a->em.keys[i]) != 0; j++) {}
        if (j < i) continue; /* a copy */
        for (size_t q = orig >= 200 ? orig - 200 : 0; q < 2100 && q < orig + 200; q++)
            if (strcmp(clean->em.keys[q], a->em.keys[i]) == 0) p = q;
        assert_true(p != SIZE_MAX);                      /* within 200 of its place */
        assert_true(p / 120 == orig / 120);              /* ... and in its window */
        if (p != orig) moved++;
        orig++;
    }
    assert_int_equal(orig, 2000);
    assert_true(moved >= rep.late);
    /* stopped at 1,300, resumed there: the uninterrupted messages */
    fx *s = fx_timeline(1);
    s->cfg.limit = 1337;
    run_ok(s, &rep2);
    s->cfg.start_offset = 1337;
    s->cfg.limit = 2000;
    run_ok(s, &rep2);
    assert_int_equal(s->em.nkeys, a->em.nkeys);
    assert_true(s->em.hash == a->em.hash);
    /* typed rows: each message's row is its own event */
    fx *r = fx_timeline(1);
    r->dest.type = &rows_type;
    r->em.wants_rows = 1;
    run_ok(r, &rep2);
    assert_int_equal(r->em.with_rows, 2000 + rep.duplicates);
    assert_int_equal(r->em.rows_wrong, 0);
    fx_free(r);
    fx_free(s);
    fx_free(b);
    fx_free(a);
    fx_free(clean);
}

/* --shard i/3 in event-time order: shard i gets positions i, i+3, ... of
 * the merged stream (disordered and anomalous as the whole one), so the
 * shards together are the stream, each event once; a shard resumed in the
 * middle continues its own positions. */
static void test_event_time_shards(void **state)
{
    (void)state;
    shape_emit_report rep;
    fx *whole = fx_timeline(1);
    whole->cfg.duplicate_fraction = 0; /* (a shard's copies are its own: positions differ) */
    whole->cfg.poison_fraction = 0;
    whole->cfg.limit = 1800;
    run_ok(whole, &rep);
    assert_int_equal(whole->em.nkeys, 1800);
    assert_true(rep.late > 0 && rep.anomalies_selected > 0);
    uint64_t late = 0;
    for (uint64_t sh = 0; sh < 3; sh++) {
        fx *f = fx_timeline(1);
        f->cfg.duplicate_fraction = 0;
        f->cfg.poison_fraction = 0;
        f->cfg.shard_index = sh;
        f->cfg.shard_count = 3;
        f->cfg.limit = 600;
        f->cfg.batch_events = 61;
        shape_emit_report r;
        run_ok(f, &r);
        late += r.late;
        assert_int_equal(f->em.nkeys, 600);
        for (size_t k = 0; k < 600; k++) assert_string_equal(f->em.keys[k], whole->em.keys[sh + 3 * k]);
        /* resumed at its offset 400: its positions from there */
        fx *g = fx_timeline(1);
        g->cfg.duplicate_fraction = 0;
        g->cfg.poison_fraction = 0;
        g->cfg.shard_index = sh;
        g->cfg.shard_count = 3;
        g->cfg.start_offset = 400;
        g->cfg.limit = 600;
        run_ok(g, &r);
        assert_int_equal(g->em.nkeys, 200);
        for (size_t k = 0; k < 200; k++) assert_string_equal(g->em.keys[k], whole->em.keys[sh + 3 * (400 + k)]);
        fx_free(g);
        fx_free(f);
    }
    assert_int_equal(late, rep.late);
    fx_free(whole);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256),
        cmocka_unit_test(test_clean_run),
        cmocka_unit_test(test_retries),
        cmocka_unit_test(test_retries_exhausted),
        cmocka_unit_test(test_checkpoint_never_passes_delivery),
        cmocka_unit_test(test_refusal),
        cmocka_unit_test(test_dead_letters),
        cmocka_unit_test(test_dead_letter_utf8),
        cmocka_unit_test(test_rows_only_destinations),
        cmocka_unit_test(test_checkpoint_documents),
        cmocka_unit_test(test_shards),
        cmocka_unit_test(test_event_time_faults),
        cmocka_unit_test(test_event_time_shards),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

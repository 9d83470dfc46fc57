/* fake_broker.c — FakeBroker (fake_broker.h): in-memory topics, and a fake
 * consumer client behind the consumer seam (consumer_client.h) that reads
 * them, so the real kafka:// source logic runs without a network.
 *
 * Why: contract tests need a broker whose every answer is known and whose
 * faults come on cue (a failure after N messages, a per-poll cap, a low
 * watermark raised by retention, appends in the middle of a read).
 *
 * How: a partition's log is an array of pointers to copied messages (NULL
 * for a gap: an offset without a message), so appending never moves a
 * message a source still points at. The fake consumer keeps, per assigned
 * partition, its next offset, whether it is paused and where it last
 * reported the partition's end; a fetch walks the logs from there —
 * skipping gaps, starting at the low watermark if the next offset fell
 * below it — and fills the caller's arrays, at most `chunk` entries, with
 * an EOF event at a log's end (once per end, if enable.partition.eof is
 * set, as librdkafka does). Injected errors come before any message, alone.
 * Every entry handed out carries a small allocation of its own (the event's
 * `owned`), freed by release(): an entry released twice is a double free and
 * one never released a leak, which the sanitizer and valgrind builds catch;
 * the counters count both sides.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_broker.h"
#include "shape/bytes.h"

typedef struct fake_msg {
    shape_message view; /* partition, offset and pointers into this allocation's copies */
    shape_header *headers;
} fake_msg;

typedef struct fake_partition {
    fake_msg **log; /* index = offset; NULL = a gap */
    int64_t len, cap;
    int64_t low;
} fake_partition;

typedef struct fake_topic {
    char *name;
    fake_partition *parts;
    int32_t n_parts;
} fake_topic;

typedef struct pending_error {
    char text[256];
    int action;
    int armed;
} pending_error;

typedef struct config_entry {
    char *name, *value;
} config_entry;

struct shape_kafka_fake_broker {
    fake_topic *topics;
    size_t n_topics;
    size_t chunk;
    int sleepy; /* see shape_kafka_fake_broker_set_sleepy */
    int no_partition_eof;
    int64_t fail_at, fail_every;
    pending_error next_error;
    pending_error next_metadata_error; /* action: transient or not */
    shape_kafka_fake_broker_fetch_hook hook;
    void *hook_ud;
    shape_kafka_fake_broker_counters counts;
    config_entry *config; /* the last consumer's */
    size_t n_config;
    int32_t *assigned_ids; /* the last assignment */
    int64_t *assigned_offsets;
    size_t n_assigned;
};

/* ---- the broker's topics ----------------------------------------------------- */

int shape_kafka_fake_broker_new(shape_kafka_fake_broker **out, shape_err *err)
{
    shape_kafka_fake_broker *fb = calloc(1, sizeof *fb);
    *out = fb;
    if (!fb) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    fb->fail_at = -1;
    return SHAPE_OK;
}

static void clear_config(shape_kafka_fake_broker *fb)
{
    for (size_t i = 0; i < fb->n_config; i++) {
        free(fb->config[i].name);
        free(fb->config[i].value);
    }
    free(fb->config);
    fb->config = NULL;
    fb->n_config = 0;
}

void shape_kafka_fake_broker_free(shape_kafka_fake_broker *fb)
{
    if (!fb) return;
    for (size_t t = 0; t < fb->n_topics; t++) {
        for (int32_t p = 0; p < fb->topics[t].n_parts; p++) {
            fake_partition *fp = &fb->topics[t].parts[p];
            for (int64_t i = 0; i < fp->len; i++) free(fp->log[i]);
            free(fp->log);
        }
        free(fb->topics[t].parts);
        free(fb->topics[t].name);
    }
    free(fb->topics);
    clear_config(fb);
    free(fb->assigned_ids);
    free(fb->assigned_offsets);
    free(fb);
}

static fake_topic *find_topic(const shape_kafka_fake_broker *fb, const char *topic)
{
    for (size_t i = 0; i < fb->n_topics; i++)
        if (strcmp(fb->topics[i].name, topic) == 0) return &fb->topics[i];
    return NULL;
}

static fake_partition *find_partition(const shape_kafka_fake_broker *fb, const char *topic, int32_t partition)
{
    fake_topic *t = find_topic(fb, topic);
    return t && partition >= 0 && partition < t->n_parts ? &t->parts[partition] : NULL;
}

static int no_partition(const char *topic, int32_t partition, shape_err *err)
{
    return shape_err_set(err, SHAPE_EINVAL, "fake broker: no partition %d in topic '%s'", (int)partition, topic);
}

int shape_kafka_fake_broker_add_topic(shape_kafka_fake_broker *fb, const char *topic, int32_t partitions, shape_err *err)
{
    if (find_topic(fb, topic)) return shape_err_set(err, SHAPE_EINVAL, "fake broker: topic '%s' exists", topic);
    if (partitions < 0) return shape_err_set(err, SHAPE_EINVAL, "fake broker: partitions must be >= 0");
    fake_topic *grown = realloc(fb->topics, (fb->n_topics + 1) * sizeof *grown);
    if (!grown) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    fb->topics = grown;
    fake_topic *t = &fb->topics[fb->n_topics];
    t->name = strdup(topic);
    t->parts = calloc(partitions ? (size_t)partitions : 1, sizeof *t->parts);
    t->n_parts = partitions;
    if (!t->name || !t->parts) {
        free(t->name);
        free(t->parts);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    fb->n_topics++;
    return SHAPE_OK;
}

static int grow_log(fake_partition *fp, shape_err *err)
{
    if (fp->len < fp->cap) return SHAPE_OK;
    int64_t cap = fp->cap ? fp->cap * 2 : 64;
    fake_msg **grown = realloc(fp->log, (size_t)cap * sizeof *grown);
    if (!grown) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    fp->log = grown;
    fp->cap = cap;
    return SHAPE_OK;
}

/* One allocation holds the message, its header array and copies of every
 * byte it points to. */
static fake_msg *copy_message(const shape_kafka_fake_broker_message *m, int32_t partition, int64_t offset)
{
    size_t bytes = sizeof(fake_msg) + m->n_headers * sizeof(shape_header) + (m->value ? m->value_len : 0) +
                   (m->key ? m->key_len : 0);
    for (size_t i = 0; i < m->n_headers; i++)
        bytes += strlen(m->headers[i].name) + 1 + (m->headers[i].value ? m->headers[i].value_len : 0);
    fake_msg *fm = calloc(1, bytes);
    if (!fm) return NULL;
    char *at = (char *)(fm + 1);
    fm->headers = (shape_header *)at;
    at += m->n_headers * sizeof(shape_header);
    shape_message *v = &fm->view;
    v->partition = partition;
    v->offset = offset;
    if (m->value) {
        memcpy(at, m->value, m->value_len);
        v->value = at;
        v->value_len = m->value_len;
        at += m->value_len;
    }
    if (m->key) {
        memcpy(at, m->key, m->key_len);
        v->key = at;
        v->key_len = m->key_len;
        at += m->key_len;
    }
    v->has_timestamp = m->has_timestamp;
    v->timestamp_us = m->has_timestamp ? m->timestamp_ms * 1000 : 0;
    for (size_t i = 0; i < m->n_headers; i++) {
        size_t name_len = strlen(m->headers[i].name);
        memcpy(at, m->headers[i].name, name_len + 1);
        shape_header *h = &fm->headers[i];
        h->name = at;
        h->name_len = name_len;
        at += name_len + 1;
        if (m->headers[i].value) {
            memcpy(at, m->headers[i].value, m->headers[i].value_len);
            h->value = at;
            h->value_len = m->headers[i].value_len;
            at += m->headers[i].value_len;
        }
    }
    v->headers = m->n_headers ? fm->headers : NULL;
    v->n_headers = m->n_headers;
    return fm;
}

int shape_kafka_fake_broker_append(shape_kafka_fake_broker *fb, const char *topic, int32_t partition,
                             const shape_kafka_fake_broker_message *m, shape_err *err)
{
    fake_partition *fp = find_partition(fb, topic, partition);
    if (!fp) return no_partition(topic, partition, err);
    SHAPE_RETURN_NOT_OK(grow_log(fp, err));
    fake_msg *fm = copy_message(m, partition, fp->len);
    if (!fm) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    fp->log[fp->len++] = fm;
    return SHAPE_OK;
}

int shape_kafka_fake_broker_append_text(shape_kafka_fake_broker *fb, const char *topic, int32_t partition, const char *text,
                                  int64_t ts_ms, shape_err *err)
{
    shape_kafka_fake_broker_message m = {0};
    m.value = text;
    m.value_len = text ? strlen(text) : 0;
    m.has_timestamp = ts_ms >= 0;
    m.timestamp_ms = ts_ms;
    return shape_kafka_fake_broker_append(fb, topic, partition, &m, err);
}

int shape_kafka_fake_broker_append_gap(shape_kafka_fake_broker *fb, const char *topic, int32_t partition, int64_t n,
                                 shape_err *err)
{
    fake_partition *fp = find_partition(fb, topic, partition);
    if (!fp) return no_partition(topic, partition, err);
    for (int64_t i = 0; i < n; i++) {
        SHAPE_RETURN_NOT_OK(grow_log(fp, err));
        fp->log[fp->len++] = NULL;
    }
    return SHAPE_OK;
}

int shape_kafka_fake_broker_set_low_watermark(shape_kafka_fake_broker *fb, const char *topic, int32_t partition, int64_t low,
                                        shape_err *err)
{
    fake_partition *fp = find_partition(fb, topic, partition);
    if (!fp) return no_partition(topic, partition, err);
    if (low < 0 || low > fp->len)
        return shape_err_set(err, SHAPE_EINVAL, "fake broker: low watermark %lld outside [0, %lld]", (long long)low,
                             (long long)fp->len);
    fp->low = low;
    return SHAPE_OK;
}

int64_t shape_kafka_fake_broker_high_watermark(const shape_kafka_fake_broker *fb, const char *topic, int32_t partition)
{
    const fake_partition *fp = find_partition(fb, topic, partition);
    return fp ? fp->len : -1;
}

void shape_kafka_fake_broker_set_partition_eof(shape_kafka_fake_broker *fb, int on)
{
    fb->no_partition_eof = !on;
}

void shape_kafka_fake_broker_set_chunk(shape_kafka_fake_broker *fb, size_t chunk)
{
    fb->chunk = chunk;
}

void shape_kafka_fake_broker_set_sleepy(shape_kafka_fake_broker *fb, int sleepy)
{
    fb->sleepy = sleepy;
}

void shape_kafka_fake_broker_fail_at(shape_kafka_fake_broker *fb, int64_t at, int64_t every)
{
    fb->fail_at = at;
    fb->fail_every = every;
}

static int arm(pending_error *pe, const char *text, int action, shape_err *err)
{
    if (!text || strlen(text) >= sizeof pe->text)
        return shape_err_set(err, SHAPE_EINVAL, "fake broker: an error text of 1 to %zu characters",
                             sizeof pe->text - 1);
    snprintf(pe->text, sizeof pe->text, "%s", text);
    pe->action = action;
    pe->armed = 1;
    return SHAPE_OK;
}

int shape_kafka_fake_broker_inject_error(shape_kafka_fake_broker *fb, const char *text, int action, shape_err *err)
{
    if (action != SHAPE_KAFKA_ERROR_RETRIED && action != SHAPE_KAFKA_ERROR_RECONNECT && action != SHAPE_KAFKA_ERROR_FATAL)
        return shape_err_set(err, SHAPE_EINVAL, "fake broker: unknown error action %d", action);
    return arm(&fb->next_error, text, action, err);
}

int shape_kafka_fake_broker_fail_metadata(shape_kafka_fake_broker *fb, const char *text, int transient, shape_err *err)
{
    return arm(&fb->next_metadata_error, text, transient != 0, err);
}

void shape_kafka_fake_broker_on_fetch(shape_kafka_fake_broker *fb, shape_kafka_fake_broker_fetch_hook hook, void *ud)
{
    fb->hook = hook;
    fb->hook_ud = ud;
}

shape_kafka_fake_broker_counters shape_kafka_fake_broker_counts(const shape_kafka_fake_broker *fb)
{
    return fb->counts;
}

const char *shape_kafka_fake_broker_config(const shape_kafka_fake_broker *fb, const char *name)
{
    for (size_t i = fb->n_config; i-- > 0;) /* the last setting wins */
        if (strcmp(fb->config[i].name, name) == 0) return fb->config[i].value;
    return NULL;
}

int64_t shape_kafka_fake_broker_assigned_offset(const shape_kafka_fake_broker *fb, int32_t partition)
{
    for (size_t i = 0; i < fb->n_assigned; i++)
        if (fb->assigned_ids[i] == partition) return fb->assigned_offsets[i];
    return -1;
}

/* ---- the fake consumer client -------------------------------------------------- */

typedef struct fake_assigned {
    int32_t partition;
    int64_t next;
    int64_t eof_at; /* where the end was last reported; -1 none */
    int paused;
    int asleep; /* sleepy broker: fetches starved until woken (or SLEEPY_IDLE of them) */
} fake_assigned;

/* A sleepy partition's fetcher wakes by itself after this many starved
 * fetches, as librdkafka's broker thread does after its idle time-out. */
#define SLEEPY_IDLE 20

typedef struct fake_consumer {
    shape_kafka_consumer base;
    shape_kafka_fake_broker *fb;
    int started;
    int eof_events;
    fake_topic *topic;
    fake_assigned *assigned; /* ascending partitions */
    size_t n_assigned;
    char error_text[256]; /* the text of an error event handed out */
} fake_consumer;

static int fc_set(shape_kafka_consumer *c, const char *name, const char *value, char *errstr, size_t errstr_size)
{
    fake_consumer *f = (fake_consumer *)c;
    if (f->started) {
        snprintf(errstr, errstr_size, "the consumer is already started");
        return -1;
    }
    config_entry *grown = realloc(f->fb->config, (f->fb->n_config + 1) * sizeof *grown);
    if (!grown) {
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    f->fb->config = grown;
    config_entry *e = &grown[f->fb->n_config];
    e->name = strdup(name);
    e->value = strdup(value);
    if (!e->name || !e->value) {
        free(e->name);
        free(e->value);
        snprintf(errstr, errstr_size, "out of memory");
        return -1;
    }
    f->fb->n_config++;
    if (strcmp(name, "enable.partition.eof") == 0) f->eof_events = strcmp(value, "true") == 0;
    return 0;
}

static int fc_start(shape_kafka_consumer *c, shape_err *err)
{
    (void)err;
    ((fake_consumer *)c)->started = 1;
    return SHAPE_OK;
}

static int fc_partitions(shape_kafka_consumer *c, const char *topic, int32_t **ids, size_t *n, shape_err *err)
{
    fake_consumer *f = (fake_consumer *)c;
    *ids = NULL;
    *n = 0;
    pending_error *pe = &f->fb->next_metadata_error;
    if (pe->armed) {
        pe->armed = 0;
        return shape_err_set(err, pe->action ? SHAPE_ECONN : SHAPE_EINVAL, "kafka: %s", pe->text);
    }
    fake_topic *t = find_topic(f->fb, topic);
    if (!t || t->n_parts == 0) return SHAPE_OK;
    *ids = malloc((size_t)t->n_parts * sizeof **ids);
    if (!*ids) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (int32_t i = 0; i < t->n_parts; i++) (*ids)[i] = t->n_parts - 1 - i; /* any order: the source sorts */
    *n = (size_t)t->n_parts;
    return SHAPE_OK;
}

static int fc_watermarks(shape_kafka_consumer *c, const char *topic, int32_t partition, int64_t *low,
                         int64_t *high, shape_err *err)
{
    fake_partition *fp = find_partition(((fake_consumer *)c)->fb, topic, partition);
    if (!fp) return shape_err_set(err, SHAPE_EINVAL, "kafka: Broker: Unknown topic or partition");
    *low = fp->low;
    *high = fp->len;
    return SHAPE_OK;
}

static int fc_assign(shape_kafka_consumer *c, const char *topic, const shape_kafka_assignment *parts, size_t n,
                     int per_partition, shape_err *err)
{
    (void)per_partition; /* every fetch names its partition or asks for all */
    fake_consumer *f = (fake_consumer *)c;
    shape_kafka_fake_broker *fb = f->fb;
    f->topic = find_topic(fb, topic);
    if (!f->topic) return shape_err_set(err, SHAPE_EINVAL, "kafka: Broker: Unknown topic or partition");
    free(f->assigned);
    f->assigned = calloc(n ? n : 1, sizeof *f->assigned);
    free(fb->assigned_ids);
    free(fb->assigned_offsets);
    fb->assigned_ids = calloc(n ? n : 1, sizeof *fb->assigned_ids);
    fb->assigned_offsets = calloc(n ? n : 1, sizeof *fb->assigned_offsets);
    fb->n_assigned = f->n_assigned = 0;
    if (!f->assigned || !fb->assigned_ids || !fb->assigned_offsets) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (parts[i].partition < 0 || parts[i].partition >= f->topic->n_parts)
            return shape_err_set(err, SHAPE_EINVAL, "kafka: Broker: Unknown topic or partition");
        f->assigned[i] = (fake_assigned){parts[i].partition, parts[i].offset, -1, parts[i].paused, 0};
        fb->assigned_ids[i] = parts[i].partition;
        fb->assigned_offsets[i] = parts[i].offset;
    }
    f->n_assigned = fb->n_assigned = n;
    fb->counts.connections++;
    return SHAPE_OK;
}

static fake_assigned *find_assigned(fake_consumer *f, int32_t partition)
{
    for (size_t i = 0; i < f->n_assigned; i++)
        if (f->assigned[i].partition == partition) return &f->assigned[i];
    return NULL;
}

static void fc_set_paused(shape_kafka_consumer *c, int32_t partition, int paused)
{
    fake_assigned *a = find_assigned((fake_consumer *)c, partition);
    if (a) a->paused = paused;
}

/* The allocation an entry carries until released (see the header comment). */
static void *entry_token(fake_consumer *f)
{
    f->fb->counts.handed++;
    return malloc(1);
}

/* The consumer's only_header: m's headers narrowed to the first named so
 * (a view into the message's own array), or none. */
static void only_header(shape_message *m, const char *name)
{
    size_t len = strlen(name), i = 0;
    while (i < m->n_headers && (m->headers[i].name_len != len || !shape_bytes_equal(m->headers[i].name, name, len))) i++;
    m->headers = i < m->n_headers ? &m->headers[i] : NULL;
    m->n_headers = i < m->n_headers ? 1 : 0;
}

/* Fill entries from one assigned partition, from *n on, up to cap. */
static void fetch_partition(fake_consumer *f, fake_assigned *a, shape_message *msgs, shape_kafka_event *events,
                            size_t cap, size_t *n)
{
    fake_partition *fp = &f->topic->parts[a->partition];
    if (a->next < fp->low) a->next = fp->low; /* retention took it: start at the oldest kept */
    while (*n < cap && a->next < fp->len) {
        fake_msg *fm = fp->log[a->next++];
        if (!fm) continue; /* a gap: the offset is passed without a message */
        msgs[*n] = fm->view;
        if (f->base.only_header) only_header(&msgs[*n], f->base.only_header);
        events[*n] = (shape_kafka_event){SHAPE_KAFKA_EVENT_MESSAGE, SHAPE_KAFKA_ERROR_RETRIED, NULL, fm, entry_token(f)};
        (*n)++;
        f->fb->counts.delivered++;
    }
    if (*n < cap && f->eof_events && !f->fb->no_partition_eof && a->next >= fp->len && a->eof_at != a->next) {
        memset(&msgs[*n], 0, sizeof msgs[*n]);
        msgs[*n].partition = a->partition;
        msgs[*n].offset = a->next;
        events[*n] = (shape_kafka_event){SHAPE_KAFKA_EVENT_EOF, SHAPE_KAFKA_ERROR_RETRIED, NULL, NULL, entry_token(f)};
        (*n)++;
        a->eof_at = a->next;
    }
}

static int error_entry(fake_consumer *f, const char *text, int action, shape_message *msgs,
                       shape_kafka_event *events, size_t *got)
{
    snprintf(f->error_text, sizeof f->error_text, "%s", text);
    memset(&msgs[0], 0, sizeof msgs[0]);
    msgs[0].partition = -1;
    msgs[0].offset = -1;
    events[0] = (shape_kafka_event){SHAPE_KAFKA_EVENT_ERROR, action, f->error_text, NULL, entry_token(f)};
    *got = 1;
    return SHAPE_OK;
}

static int fc_fetch(shape_kafka_consumer *c, int32_t partition, int timeout_ms, shape_message *msgs,
                    shape_kafka_event *events, size_t max, size_t *got, shape_err *err)
{
    fake_consumer *f = (fake_consumer *)c;
    shape_kafka_fake_broker *fb = f->fb;
    *got = 0;
    if (fb->hook) fb->hook(fb, fb->counts.fetches, fb->hook_ud);
    fb->counts.fetches++;
    if (max == 0) return SHAPE_OK;
    if (fb->next_error.armed) {
        fb->next_error.armed = 0;
        return error_entry(f, fb->next_error.text, fb->next_error.action, msgs, events, got);
    }
    if (fb->fail_at >= 0 && fb->counts.delivered >= (uint64_t)fb->fail_at) {
        fb->fail_at = fb->fail_every > 0 ? (int64_t)fb->counts.delivered + fb->fail_every : -1;
        return error_entry(f, "Local: Broker transport failure (_TRANSPORT)", SHAPE_KAFKA_ERROR_RECONNECT, msgs,
                           events, got);
    }
    size_t cap = fb->chunk && fb->chunk < max ? fb->chunk : max;
    if (partition == SHAPE_KAFKA_ALL_PARTITIONS) {
        for (size_t i = 0; i < f->n_assigned && *got < cap; i++)
            if (!f->assigned[i].paused) fetch_partition(f, &f->assigned[i], msgs, events, cap, got);
    } else {
        fake_assigned *a = find_assigned(f, partition);
        if (!a) return shape_err_set(err, SHAPE_EINTERNAL, "kafka: partition %d is not assigned", (int)partition);
        if (fb->sleepy && a->asleep > 0) {
            fb->counts.starved++;
            a->asleep = a->asleep >= SLEEPY_IDLE ? 0 : a->asleep + 1;
        } else if (!a->paused) {
            fetch_partition(f, a, msgs, events, cap, got);
            if (fb->sleepy && *got) a->asleep = 1; /* its queue is drained: the next fetch finds nothing */
        }
    }
    if (*got == 0 && timeout_ms > 0) {
        /* Nothing to give: wait a little, as a poll would, without the whole time-out. */
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return SHAPE_OK;
}

static void fc_release(shape_kafka_consumer *c, shape_kafka_event *events, size_t n)
{
    fake_consumer *f = (fake_consumer *)c; /* the broker owns the messages; the entries own a token */
    for (size_t i = 0; i < n; i++) free(events[i].owned);
    f->fb->counts.released += n;
}

static int fc_position(shape_kafka_consumer *c, int32_t partition, int64_t *next_offset)
{
    fake_assigned *a = find_assigned((fake_consumer *)c, partition);
    if (!a) return 0;
    *next_offset = a->next;
    return 1;
}

static int fc_low_watermark(shape_kafka_consumer *c, int32_t partition, int64_t *low)
{
    fake_consumer *f = (fake_consumer *)c;
    if (!f->topic || partition < 0 || partition >= f->topic->n_parts) return 0;
    *low = f->topic->parts[partition].low;
    return 1;
}

static void fc_wake(shape_kafka_consumer *c, int32_t partition)
{
    fake_consumer *f = (fake_consumer *)c;
    f->fb->counts.wakes++;
    fake_assigned *a = find_assigned(f, partition);
    if (a) a->asleep = 0;
}

static void fc_serve(shape_kafka_consumer *c)
{
    (void)c;
}

static int fc_failure(shape_kafka_consumer *c, shape_err *err)
{
    (void)c;
    (void)err;
    return SHAPE_OK;
}

static void fc_destroy(shape_kafka_consumer *c)
{
    fake_consumer *f = (fake_consumer *)c;
    f->fb->counts.closed++;
    free(f->assigned);
    free(f);
}

static const shape_kafka_consumer_ops fake_ops = {
    fc_set,     fc_start,    fc_partitions,    fc_watermarks, fc_assign,  fc_set_paused, fc_fetch,
    fc_release, fc_position, fc_low_watermark, fc_serve,      fc_failure, fc_destroy,
    fc_wake,
};

static int fake_consumer_new(void *ud, shape_kafka_consumer **out, shape_err *err)
{
    shape_kafka_fake_broker *fb = ud;
    fake_consumer *f = calloc(1, sizeof *f);
    if (!f) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    f->base.ops = &fake_ops;
    f->fb = fb;
    clear_config(fb);
    fb->counts.consumers++;
    *out = &f->base;
    return SHAPE_OK;
}

int shape_kafka_fake_broker_source_open(shape_kafka_fake_broker *fb, const char *uri, const shape_options *options,
                                  const shape_offsets *start, shape_source **out, shape_err *err)
{
    return shape_kafka_source_open_with(fake_consumer_new, fb, uri, options, start, NULL, out, err);
}

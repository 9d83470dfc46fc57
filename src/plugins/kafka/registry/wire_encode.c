/* wire_encode.c — registry formats for the kafka:// emitter: options,
 * codecs per table, registration before production, wire bytes
 * (wire_encode.h; spec-kafka.md §3.1, §4.2, §4.7).
 *
 * Validation order (the reference's): event format → envelope flat →
 * subject strategy → registry URL present → URL and credential checks;
 * all before the first request. The password is a credential reference
 * resolved here; its value lives only in the registry client.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/credref.h"
#include "wire_encode.h"

#define MAX_CODECS 64

typedef struct table_codec {
    const struct ArrowSchema *schema; /* the runtime's row schema of the table (stable for the run) */
    char *table;
    shape_kafka_regfmt_codec *codec;
    shape_kafka_regfmt_cursor *cursor;           /* encodes the codec's rows batch by batch */
    const struct ArrowArray *cursor_array; /* the batch it is set to in this call, or NULL */
    uint32_t id;
    uint8_t header[SHAPE_KAFKA_WIRE_HEADER_MAX]; /* the wire header of its messages */
    size_t header_len;
} table_codec;

struct shape_kafka_wire_encoder {
    shape_kafka_regfmt format;
    shape_kafka_subject_strategy strategy;
    char *topic;
    shape_kafka_schema_registry_client *registry;
    table_codec codecs[MAX_CODECS];
    size_t ncodecs;
    size_t last; /* the codec of the previous message: batches are one table long */
    shape_json_buf arena;
    size_t *offsets, cap; /* per message: where its wire bytes start in the arena */
    size_t *codec_of; /* per message: its codec, or SIZE_MAX when its table could not be registered */
    size_t unsent;    /* messages of the last encode left RETRY or REFUSED */
};

const char *const shape_kafka_wire_option_keys[] = {
    "event_format", "subject_strategy", "schema_registry_url", "schema_registry_username",
    "schema_registry_password", "schema_registry_ca_location", "schema_registry_certificate_location",
    "schema_registry_key_location", "schema_registry_ssl_verify", NULL};

static int get_opt(const shape_options *o, const char *key, const char **out, shape_err *err)
{
    *out = NULL;
    if (!o) return SHAPE_OK;
    SHAPE_RETURN_NOT_OK(shape_options_get_string(o, key, NULL, out, err));
    if (*out && !**out) *out = NULL; /* empty counts as absent */
    return SHAPE_OK;
}

static int make_client(const shape_options *o, shape_kafka_schema_registry_transport transport, void *ctx,
                       shape_kafka_schema_registry_client **out, shape_err *err)
{
    shape_kafka_schema_registry_settings s;
    memset(&s, 0, sizeof s);
    const char *password_ref = NULL;
    SHAPE_RETURN_NOT_OK(get_opt(o, "schema_registry_url", &s.url, err));
    SHAPE_RETURN_NOT_OK(get_opt(o, "schema_registry_username", &s.username, err));
    SHAPE_RETURN_NOT_OK(get_opt(o, "schema_registry_password", &password_ref, err));
    SHAPE_RETURN_NOT_OK(get_opt(o, "schema_registry_ca_location", &s.ca_location, err));
    SHAPE_RETURN_NOT_OK(get_opt(o, "schema_registry_certificate_location", &s.certificate_location, err));
    SHAPE_RETURN_NOT_OK(get_opt(o, "schema_registry_key_location", &s.key_location, err));
    s.ssl_verify = 1;
    if (o) SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "schema_registry_ssl_verify", 1, &s.ssl_verify, err));
    s.transport = transport;
    s.transport_ctx = ctx;
    if (password_ref && !shape_credref_is_reference(password_ref))
        return shape_err_set(err, SHAPE_EINVAL,
                             "kafka.schema_registry_password must be a credential reference (env://NAME, "
                             "file://PATH or kv://VAULT/NAME), not a literal");
    /* URL and credential presence first (only presence matters here), then the secret */
    s.password = password_ref;
    SHAPE_RETURN_NOT_OK(shape_kafka_schema_registry_client_new(&s, out, err));
    if (!password_ref) return SHAPE_OK;
    shape_kafka_schema_registry_client_free(*out);
    *out = NULL;
    char *password = NULL;
    if (shape_credref_resolve(password_ref, &password, err) != SHAPE_OK)
        return shape_err_prefix(err, "kafka.schema_registry_password");
    s.password = password;
    int rc = shape_kafka_schema_registry_client_new(&s, out, err);
    shape_secret_free(password);
    return rc;
}

int shape_kafka_wire_encoder_new(const shape_options *options, const char *topic, int envelope_flat,
                            shape_kafka_schema_registry_transport transport, void *transport_ctx,
                            shape_kafka_wire_encoder **out, shape_err *err)
{
    *out = NULL;
    const char *name = NULL, *strategy = NULL, *url = NULL;
    SHAPE_RETURN_NOT_OK(get_opt(options, "event_format", &name, err));
    shape_kafka_regfmt format = SHAPE_KAFKA_REGFMT_JSON;
    SHAPE_RETURN_NOT_OK(shape_kafka_regfmt_parse(name ? name : "json", &format, err));
    if (format == SHAPE_KAFKA_REGFMT_JSON) return SHAPE_OK;
    if (!envelope_flat)
        return shape_err_set(err, SHAPE_EINVAL,
                             "--envelope cloudevents is JSON only: it cannot be combined with --event-format %s",
                             shape_kafka_regfmt_name(format));
    shape_kafka_subject_strategy s;
    SHAPE_RETURN_NOT_OK(get_opt(options, "subject_strategy", &strategy, err));
    SHAPE_RETURN_NOT_OK(shape_kafka_subject_strategy_parse(strategy ? strategy : "topic", &s, err));
    SHAPE_RETURN_NOT_OK(get_opt(options, "schema_registry_url", &url, err));
    if (!url)
        return shape_err_set(err, SHAPE_EINVAL,
                             "--event-format %s needs a schema registry: --sink-config "
                             "kafka.schema_registry_url=URL",
                             shape_kafka_regfmt_name(format));
    shape_kafka_wire_encoder *w = calloc(1, sizeof *w);
    if (!w) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    w->format = format;
    w->strategy = s;
    w->topic = strdup(topic);
    int rc = w->topic ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc == SHAPE_OK) rc = make_client(options, transport, transport_ctx, &w->registry, err);
    if (rc != SHAPE_OK) {
        shape_kafka_wire_encoder_free(w);
        return rc;
    }
    *out = w;
    return SHAPE_OK;
}

void shape_kafka_wire_encoder_free(shape_kafka_wire_encoder *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->ncodecs; i++) {
        shape_kafka_regfmt_cursor_free(w->codecs[i].cursor);
        shape_kafka_regfmt_codec_free(w->codecs[i].codec);
        free(w->codecs[i].table);
    }
    shape_kafka_schema_registry_client_free(w->registry);
    shape_json_buf_reset(&w->arena);
    free(w->offsets);
    free(w->codec_of);
    free(w->topic);
    free(w);
}

shape_kafka_regfmt shape_kafka_wire_encoder_format(const shape_kafka_wire_encoder *w) { return w->format; }

/* The codec of a message's table, made and registered on first sight. */
static int codec_for(shape_kafka_wire_encoder *w, const shape_emit_message *m, table_codec **out, shape_err *err)
{
    if (!m->row_schema || !m->row_array)
        return shape_err_set(err, SHAPE_EINTERNAL, "--event-format %s needs typed rows from the runtime",
                             shape_kafka_regfmt_name(w->format));
    if (w->last < w->ncodecs && w->codecs[w->last].schema == m->row_schema &&
        strcmp(w->codecs[w->last].table, m->table) == 0) {
        *out = &w->codecs[w->last];
        return SHAPE_OK;
    }
    for (size_t i = 0; i < w->ncodecs; i++)
        if (w->codecs[i].schema == m->row_schema && strcmp(w->codecs[i].table, m->table) == 0) {
            w->last = i;
            *out = &w->codecs[i];
            return SHAPE_OK;
        }
    if (w->ncodecs == MAX_CODECS)
        return shape_err_set(err, SHAPE_EINVAL, "more than %d table schemas in one run", MAX_CODECS);
    table_codec *c = &w->codecs[w->ncodecs];
    memset(c, 0, sizeof *c);
    SHAPE_RETURN_NOT_OK(shape_kafka_regfmt_codec_new(w->format, m->table, m->row_schema, &c->codec, err));
    if (shape_kafka_regfmt_cursor_new(c->codec, &c->cursor, err) != SHAPE_OK) {
        shape_kafka_regfmt_codec_free(c->codec);
        return SHAPE_ENOMEM;
    }
    char *subject = shape_kafka_subject_name(w->strategy, w->topic, m->table);
    c->table = strdup(m->table);
    int rc = subject && c->table ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc == SHAPE_OK)
        rc = shape_kafka_schema_registry_register(w->registry, subject, shape_kafka_regfmt_schema_type(w->format),
                                     shape_kafka_regfmt_codec_schema(c->codec), &c->id, err);
    free(subject);
    if (rc != SHAPE_OK) {
        shape_kafka_regfmt_cursor_free(c->cursor);
        shape_kafka_regfmt_codec_free(c->codec);
        free(c->table);
        return rc;
    }
    c->schema = m->row_schema;
    c->header_len = shape_kafka_wire_header(w->format, c->id, c->header);
    w->last = w->ncodecs++;
    *out = c;
    return SHAPE_OK;
}

static int encode_one(shape_kafka_wire_encoder *w, table_codec *c, shape_emit_message *m, shape_err *err)
{
    size_t hl = c->header_len;
    size_t start = w->arena.len;
    size_t json_len = m->poison ? m->uncut_len : m->value_len; /* a poisoned body is cut after encoding */
    if (shape_json_buf_reserve(&w->arena, hl + (w->format == SHAPE_KAFKA_REGFMT_JSON_SCHEMA ? json_len : 0)) != 0)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory encoding events");
    memcpy(w->arena.data + w->arena.len, c->header, hl);
    w->arena.len += hl;
    if (w->format == SHAPE_KAFKA_REGFMT_JSON_SCHEMA) { /* the payload is the flat JSON event itself */
        memcpy(w->arena.data + w->arena.len, m->value, json_len);
        w->arena.len += json_len;
        return SHAPE_OK;
    }
    shape_err why;
    shape_err_clear(&why);
    if (c->cursor_array != m->row_array) { /* the next batch (a send may merge several) */
        shape_kafka_regfmt_cursor_set(c->cursor, m->row_array);
        c->cursor_array = m->row_array;
    }
    int rc = shape_kafka_regfmt_cursor_encode(c->cursor, m->row, &w->arena, &why);
    if (rc == SHAPE_EINVAL) { /* this event cannot be held by the format: refused, not fatal */
        w->arena.len = start;
        m->outcome = SHAPE_EMIT_REFUSED;
        snprintf(m->reason, sizeof m->reason, "cannot encode as %s: %.200s", shape_kafka_regfmt_name(w->format),
                 why.message);
        return SHAPE_OK;
    }
    if (rc != SHAPE_OK) *err = why;
    return rc;
}

static int grow(shape_kafka_wire_encoder *w, size_t n, shape_err *err)
{
    if (n <= w->cap) return SHAPE_OK;
    size_t *o = realloc(w->offsets, n * sizeof *o);
    if (o) w->offsets = o;
    size_t *c = o ? realloc(w->codec_of, n * sizeof *c) : NULL;
    if (c) w->codec_of = c;
    if (!c) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    w->cap = n;
    return SHAPE_OK;
}

/* Step 1: the codec of every message, registering what is new. A table the
 * registry cannot take now (unreachable, 5xx, 429) leaves its messages
 * RETRY — the runtime sends them again — without holding back the tables
 * already registered (the sender may merge several tables' batches into one
 * send). Returns SHAPE_ECONN only when no message could be placed, with the
 * registry's error; any other failure (a refusal) stops the run. */
static int place_messages(shape_kafka_wire_encoder *w, shape_emit_message *msgs, size_t n, shape_err *err)
{
    const struct ArrowSchema *failed = NULL; /* the table that failed in this call: asked once */
    const char *failed_table = NULL;
    shape_err first;
    shape_err_clear(&first);
    size_t placed = 0;
    for (size_t i = 0; i < n; i++) {
        shape_emit_message *m = &msgs[i];
        w->codec_of[i] = SIZE_MAX;
        if (failed && m->row_schema == failed && strcmp(m->table, failed_table) == 0) {
            m->outcome = SHAPE_EMIT_RETRY;
            snprintf(m->reason, sizeof m->reason, "%.250s", first.message);
            w->unsent++;
            continue;
        }
        if (i > 0 && w->codec_of[i - 1] != SIZE_MAX && m->row_schema == msgs[i - 1].row_schema &&
            m->table == msgs[i - 1].table && m->row_array) { /* the previous message's table */
            w->codec_of[i] = w->codec_of[i - 1];
            m->outcome = SHAPE_EMIT_PENDING;
            placed++;
            continue;
        }
        table_codec *c = NULL;
        shape_err why;
        shape_err_clear(&why);
        int rc = codec_for(w, m, &c, &why);
        if (rc == SHAPE_ECONN) {
            if (!first.code) first = why;
            failed = m->row_schema;
            failed_table = m->table;
            m->outcome = SHAPE_EMIT_RETRY;
            snprintf(m->reason, sizeof m->reason, "%.250s", why.message);
            w->unsent++;
            continue;
        }
        if (rc != SHAPE_OK) {
            *err = why;
            return rc;
        }
        w->codec_of[i] = (size_t)(c - w->codecs);
        m->outcome = SHAPE_EMIT_PENDING;
        placed++;
    }
    if (placed == 0 && n > 0) {
        *err = first;
        return SHAPE_ECONN;
    }
    return SHAPE_OK;
}

int shape_kafka_wire_encoder_encode(shape_kafka_wire_encoder *w, shape_emit_message *msgs, size_t n, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(grow(w, n, err));
    w->unsent = 0;
    /* 1. every schema registered before anything is encoded or produced */
    SHAPE_RETURN_NOT_OK(place_messages(w, msgs, n, err));
    /* 2. wire bytes, into one arena; the values are pointed at them as we go
     * and pointed again at the end only if the arena moved (it keeps its
     * size from send to send, so it rarely does): each pass over a merged
     * send's messages, ~370 bytes apart, misses the cache once per message.
     * The cursors are set afresh: a batch struct is reused by the next one. */
    w->arena.len = 0;
    for (size_t k = 0; k < w->ncodecs; k++) w->codecs[k].cursor_array = NULL;
    const char *data = w->arena.data;
    int moved = 0;
    for (size_t i = 0; i < n; i++) {
        if (w->codec_of[i] == SIZE_MAX) continue;
        size_t start = w->arena.len;
        SHAPE_RETURN_NOT_OK(encode_one(w, &w->codecs[w->codec_of[i]], &msgs[i], err));
        if (w->arena.data != data) moved = 1;
        if (msgs[i].outcome == SHAPE_EMIT_REFUSED) { /* keeps its JSON (for the dead letter) */
            w->unsent++;
            continue;
        }
        w->offsets[i] = start;
        msgs[i].value = w->arena.data + start;
        msgs[i].value_len = w->arena.len - start;
        if (msgs[i].poison) { /* spec-kafka §4.9: the whole wire bytes are cut */
            size_t made = msgs[i].value_len, cut = made * 2 / 3;
            msgs[i].made_len = made;
            msgs[i].value_len = cut ? cut : 1;
        }
    }
    for (size_t i = 0; moved && i < n; i++) {
        /* RETRY ones are not produced */
        if (w->codec_of[i] == SIZE_MAX || msgs[i].outcome == SHAPE_EMIT_REFUSED) continue;
        msgs[i].value = w->arena.data + w->offsets[i];
    }
    return SHAPE_OK;
}

size_t shape_kafka_wire_encoder_unsent(const shape_kafka_wire_encoder *w) { return w->unsent; }

/* checkpoint.c — emit checkpoints and the stream fingerprint.
 *
 * Why: rerunning the same `shape emit` command must continue exactly after
 * the last event every destination acknowledged, and must refuse a
 * checkpoint left by another stream (other seed, scale, tables, envelope),
 * which would silently skip or repeat events (spec-core §3.6).
 * How: the checkpoint is a small JSON document (jansson, cold path) loaded
 * and saved through the core's shape/checkpoint_file.h: written atomically
 * (temp file in the same directory, fsync, rename), so a crash leaves the
 * old or the new one, never half of one, and read whole with a key given
 * twice refused like any other damage. Its members and their order are the
 * ones the format always had, so a checkpoint written before resumes. The
 * fingerprint is SHA-256 of a sorted-key compact JSON description of the
 * stream; rate, limits, sinks and batch sizes are not part of it, so a run
 * can be resumed at another rate. A shard (--shard i/n, n > 1) is a stream
 * of its own: its fingerprint holds "shard":"i/n" and its checkpoint says
 * which shard wrote it, so resuming with another shard is refused by name.
 * The destinations (redacted URIs, sorted) are stored too: the fingerprint
 * says which events, "destinations" says where they went, so a checkpoint
 * of topic ea never resumes a run into topic eb.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shape/checkpoint_file.h"
#include "shape/domain.h"
#include "shape/emit.h"

/* The domain's identity fields (domain, mode, scale, seed for retail) as
 * members of the fingerprint document. */
static int add_identity(json_t *doc, const shape_domain *domain)
{
    shape_domain_field fields[SHAPE_DOMAIN_MAX_FIELDS];
    size_t n = shape_domain_identity(domain, fields, SHAPE_DOMAIN_MAX_FIELDS);
    for (size_t i = 0; i < n; i++) {
        json_t *v = fields[i].text ? json_string(fields[i].text) : json_integer((json_int_t)fields[i].integer);
        if (!v || json_object_set_new(doc, fields[i].key, v) != 0) return -1;
    }
    return 0;
}

/* The variation's members: the defaults exactly as the document always had
 * them (integers 0 and 1000, real 0.0, an empty list), else their values. */
static json_t *variation_doc(json_t *rows, json_t *tables, shape_envelope env, const shape_emit_variation *v)
{
    json_t *doc = json_pack("{s:o, s:o, s:s, s:i, s:I, s:f, s:[]}", "rows", rows, "tables", tables, "envelope",
                            env == SHAPE_ENVELOPE_FLAT ? "flat" : "cloudevents", "out_of_order", 0, "ooo_window",
                            (json_int_t)(v ? v->ooo_window : 1000), "anomaly_fraction", v ? v->anomaly_fraction : 0.0,
                            "anomaly_mutators");
    if (doc && v && v->out_of_order > 0) json_object_set_new(doc, "out_of_order", json_real(v->out_of_order));
    if (doc && v && v->time_origin) json_object_set_new(doc, "time_origin", json_string(v->time_origin));
    for (size_t i = 0; doc && v && i < v->nmutators; i++)
        json_array_append_new(json_object_get(doc, "anomaly_mutators"), json_string(v->mutators[i]));
    return doc;
}

static int fingerprint_of(const shape_event_plan *plan, shape_envelope env, const char *event_format,
                          const char *shard, const shape_emit_variation *v, char out[65], shape_err *err)
{
    json_t *rows = json_object(), *tables = json_array();
    for (size_t k = 0; k < plan->ntables; k++) {
        const char *name = shape_domain_table_at(plan->domain, plan->table_ids[k])->name;
        json_object_set_new(rows, name, json_integer((json_int_t)plan->rows[k]));
        json_array_append_new(tables, json_string(name));
    }
    json_t *doc = variation_doc(rows, tables, env, v);
    if (doc && add_identity(doc, plan->domain) != 0) {
        json_decref(doc);
        doc = NULL;
    }
    /* a registry format changes every message's bytes: a checkpoint of one
     * format must not resume another (JSON streams keep their fingerprint) */
    if (doc && event_format && strcmp(event_format, "json") != 0)
        json_object_set_new(doc, "event_format", json_string(event_format));
    if (doc && shard) json_object_set_new(doc, "shard", json_string(shard));
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    if (!text) return shape_err_set(err, SHAPE_ENOMEM, "out of memory computing the stream fingerprint");
    shape_sha256_hex(text, strlen(text), out);
    free(text);
    return SHAPE_OK;
}

int shape_emit_fingerprint(const shape_event_plan *plan, shape_envelope env, const char *event_format,
                           char out[65], shape_err *err)
{
    return fingerprint_of(plan, env, event_format, NULL, NULL, out, err);
}

int shape_emit_shard_fingerprint(const shape_event_plan *plan, shape_envelope env, const char *event_format,
                                 uint64_t index, uint64_t count, char out[65], shape_err *err)
{
    return shape_emit_variant_fingerprint(plan, env, event_format, index, count, NULL, out, err);
}

int shape_emit_variant_fingerprint(const shape_event_plan *plan, shape_envelope env, const char *event_format,
                                   uint64_t index, uint64_t count, const shape_emit_variation *v, char out[65],
                                   shape_err *err)
{
    if (count <= 1) return fingerprint_of(plan, env, event_format, NULL, v, out, err);
    char shard[48];
    snprintf(shard, sizeof shard, "%llu/%llu", (unsigned long long)index, (unsigned long long)count);
    return fingerprint_of(plan, env, event_format, shard, v, out, err);
}

int shape_emit_checkpoint_write(const char *path, const shape_emit_checkpoint *ck, shape_err *err)
{
    /* members in this order, compact: the bytes the format always had */
    json_t *doc = json_pack("{s:s, s:s, s:I, s:I, s:b}", "format", SHAPE_EMIT_CHECKPOINT_FORMAT, "fingerprint",
                            ck->fingerprint, "offset", (json_int_t)ck->offset, "total", (json_int_t)ck->total,
                            "complete", ck->complete);
    char shard[48];
    snprintf(shard, sizeof shard, "%.40s", ck->shard);
    if (doc && shard[0] && json_object_set_new(doc, "shard", json_string(shard)) != 0) {
        json_decref(doc);
        doc = NULL;
    }
    if (doc && ck->time_shifted)
        json_object_set_new(doc, "time_shift_ns", json_integer((json_int_t)ck->time_shift_ns));
    if (doc && ck->destinations[0])
        json_object_set_new(doc, "destinations", json_string(ck->destinations));
    if (!doc) return shape_err_set(err, SHAPE_ENOMEM, "cannot write checkpoint %s: out of memory", path);
    int rc = shape_checkpoint_save(path, doc, err);
    json_decref(doc);
    return rc;
}

static int not_an_emit_checkpoint(const char *path, shape_err *err)
{
    return shape_err_set(err, SHAPE_EINVAL, "%s is not an emit checkpoint (use --fresh to start over)", path);
}

/* The members of a parsed document, checked against this stream. */
static int checkpoint_from_doc(const char *path, const json_t *doc, const char *fingerprint, uint64_t total,
                               shape_emit_checkpoint *out, int *found, shape_err *err)
{
    const char *format = json_string_value(json_object_get(doc, "format"));
    if (!format || strcmp(format, SHAPE_EMIT_CHECKPOINT_FORMAT) != 0) return not_an_emit_checkpoint(path, err);
    const char *fp = json_string_value(json_object_get(doc, "fingerprint"));
    json_t *off = json_object_get(doc, "offset"), *tot = json_object_get(doc, "total");
    json_t *complete = json_object_get(doc, "complete");
    const char *shard = json_string_value(json_object_get(doc, "shard"));
    uint64_t shard_i, shard_n;
    shape_err shard_err;
    if (!fp || strlen(fp) != 64 || !json_is_integer(off) || !json_is_integer(tot) || !json_is_boolean(complete) ||
        (json_object_get(doc, "shard") && !shard) ||
        (shard && shape_emit_parse_shard(shard, &shard_i, &shard_n, &shard_err) != SHAPE_OK))
        return not_an_emit_checkpoint(path, err);
    if (strcmp(fp, fingerprint) != 0) {
        char by[80] = "";
        if (shard) snprintf(by, sizeof by, ", written by --shard %.40s", shard);
        return shape_err_set(err, SHAPE_EINVAL,
                             "checkpoint %s belongs to a different stream (other domain, scale, seed, "
                             "tables, envelope or shard%s); use --fresh to start over",
                             path, by);
    }
    if (json_integer_value(off) < 0 || (uint64_t)json_integer_value(off) > total ||
        (uint64_t)json_integer_value(tot) != total)
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s has offset %lld outside the stream's 0..%llu; use --fresh",
                             path, (long long)json_integer_value(off), (unsigned long long)total);
    memcpy(out->fingerprint, fp, 65);
    out->offset = (uint64_t)json_integer_value(off);
    out->total = total;
    out->complete = json_is_true(complete);
    if (shard) snprintf(out->shard, sizeof out->shard, "%.40s", shard);
    json_t *shift = json_object_get(doc, "time_shift_ns");
    if (shift && !json_is_integer(shift)) return not_an_emit_checkpoint(path, err);
    out->time_shifted = shift != NULL;
    out->time_shift_ns = shift ? (int64_t)json_integer_value(shift) : 0;
    json_t *dests = json_object_get(doc, "destinations");
    if (dests && (!json_is_string(dests) || json_string_length(dests) == 0 ||
                  json_string_length(dests) >= sizeof out->destinations ||
                  strlen(json_string_value(dests)) != json_string_length(dests)))
        return not_an_emit_checkpoint(path, err);
    if (dests) memcpy(out->destinations, json_string_value(dests), json_string_length(dests) + 1);
    *found = 1;
    return SHAPE_OK;
}

int shape_emit_checkpoint_read(const char *path, const char *fingerprint, uint64_t total,
                               shape_emit_checkpoint *out, int *found, shape_err *err)
{
    memset(out, 0, sizeof *out);
    *found = 0;
    json_t *doc = NULL;
    int rc = shape_checkpoint_load(path, &doc, err);
    if (rc == SHAPE_EINVAL && err && strstr(err->message, "checksum")) /* an edited value */
        return shape_err_set(err, SHAPE_EINVAL,
                             "checkpoint %s does not match its checksum (it was edited or damaged); use --fresh "
                             "to start over",
                             path);
    if (rc == SHAPE_EINVAL) return not_an_emit_checkpoint(path, err); /* damaged, or a key given twice */
    if (rc != SHAPE_OK || !doc) return rc;                             /* unreadable, or none yet */
    rc = checkpoint_from_doc(path, doc, fingerprint, total, out, found, err);
    json_decref(doc);
    if (rc != SHAPE_OK) memset(out, 0, sizeof *out);
    return rc;
}

/* ---- the destinations a checkpoint is bound to ----------------------------- */

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* uri without "user:password@" in its authority and without "?query". */
static char *redacted_uri(const char *uri)
{
    char *out = malloc(strlen(uri) + 1);
    if (!out) return NULL;
    const char *auth = strstr(uri, "://");
    size_t head = auth ? (size_t)(auth + 3 - uri) : 0;
    memcpy(out, uri, head);
    const char *p = uri + head;
    size_t alen = auth ? strcspn(p, "/?#") : 0;
    const char *at = alen ? memchr(p, '@', alen) : NULL;
    if (at) p = at + 1;
    size_t rest = strcspn(p, "?#");
    memcpy(out + head, p, rest);
    out[head + rest] = '\0';
    return out;
}

int shape_emit_destinations_id(const char *const *uris, size_t n, char *out, size_t size, shape_err *err)
{
    if (size) out[0] = '\0';
    char **r = calloc(n ? n : 1, sizeof *r);
    int rc = r ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++)
        if (!(r[i] = redacted_uri(uris[i]))) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc == SHAPE_OK) qsort(r, n, sizeof *r, compare_strings);
    size_t used = 0;
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) {
        int w = snprintf(out + used, size - used, "%s%s", i ? " " : "", r[i]);
        if (w < 0 || (size_t)w >= size - used)
            rc = shape_err_set(err, SHAPE_EINVAL, "the destinations' URIs are too long to record in a checkpoint "
                                                  "(at most %zu bytes together)", size - 1);
        else used += (size_t)w;
    }
    for (size_t i = 0; r && i < n; i++) free(r[i]);
    free(r);
    if (rc != SHAPE_OK && size) out[0] = '\0';
    return rc;
}

int shape_emit_checkpoint_check_destinations(const char *path, const shape_emit_checkpoint *ck,
                                             const char *destinations, shape_err *err)
{
    if (!ck->destinations[0] || !destinations || strcmp(ck->destinations, destinations) == 0) return SHAPE_OK;
    return shape_err_set(err, SHAPE_EINVAL,
                         "checkpoint %s was written for destinations %.300s, not %.300s: resuming would skip "
                         "the events they never got; use --fresh to start over, or another --checkpoint",
                         path, ck->destinations, destinations);
}

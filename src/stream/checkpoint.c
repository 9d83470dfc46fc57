/* checkpoint.c — the stream checkpoint documents of stream-read and
 * stream-profile, written and read in one place (shape/stream_checkpoint.h).
 *
 * Why: what a run writes and what the next run accepts must be one
 * definition; the checks a resumed run performs on bytes from disk are
 * fuzzed (tests/fuzz/fuzz_checkpoint.c) and unit tested
 * (tests/unit/test_stream_checkpoint.c).
 * How: documents are jansson objects saved and loaded through
 * shape/checkpoint_file.h (atomic replace; duplicate keys refused). Writers
 * build the members in a fixed order (the bytes of a checkpoint are stable
 * for the same run); each check reads one member and refuses with the
 * checkpoint's path and "use another file". The stream-profile reader fills
 * a shape_stream_profile_resume that owns everything it holds, and releases
 * it all on any refusal, so a caller never sees half a resume.
 * A stream that is one local file (shape_paths_uri_file) gets that file's
 * identity in "source_file" (shape/checkpoint_file.h): a position counts
 * lines of that file, so resuming over a replaced, truncated or rewritten
 * file is refused. A checkpoint without the member (older) is accepted.
 */
#include "shape/stream_checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shape/base64.h"
#include "shape/paths.h"
#include "shape/version.h"

int shape_stream_checkpoint_check(const char *path, const json_t *doc, const char *format, const char *what,
                                  const char *uri, shape_err *err)
{
    const char *their_format = json_string_value(json_object_get(doc, "format"));
    const char *their_uri = json_string_value(json_object_get(doc, "uri"));
    if (!their_format || strcmp(their_format, format) != 0)
        return shape_err_set(err, SHAPE_EINVAL, "%s is not a %s checkpoint: use another file", path, what);
    if (!their_uri || strcmp(their_uri, uri) != 0)
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s belongs to another stream (%.200s): use another file",
                             path, their_uri ? their_uri : "?");
    const json_t *identity = json_object_get(doc, "source_file");
    if (identity)
        return shape_checkpoint_check_file_identity(path, strncmp(uri, "file://", 7) == 0 ? uri + 7 : uri, identity,
                                                    err);
    return SHAPE_OK;
}

/* The "source_file" member of a stream that is one local file. */
static int add_file_identity(json_t *doc, const char *uri, const char *path, shape_err *err)
{
    const char *file = shape_paths_uri_file(uri);
    json_t *identity = file ? shape_checkpoint_file_identity(file) : NULL;
    if (identity && json_object_set_new(doc, "source_file", identity) != 0)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
    return SHAPE_OK;
}

/* shape_offsets_from_json, its refusal ending like every other one here. */
static int read_offsets(const json_t *v, shape_offsets *o, const char *path, shape_err *err)
{
    int rc = shape_offsets_from_json(v, o, path, err);
    if (rc == SHAPE_EINVAL && err) {
        char said[SHAPE_ERR_MESSAGE_MAX];
        memcpy(said, err->message, sizeof said);
        said[sizeof said - 1] = '\0';
        shape_err_set(err, rc, "%s: use another file", said);
    }
    return rc;
}

int shape_stream_read_checkpoint_read(const char *path, const json_t *doc, const char *uri, shape_offsets *start,
                                      shape_err *err)
{
    int rc = shape_stream_checkpoint_check(path, doc, SHAPE_STREAM_READ_CHECKPOINT_FORMAT, "stream-read", uri, err);
    if (rc == SHAPE_OK) rc = read_offsets(json_object_get(doc, "offset"), start, path, err);
    if (rc != SHAPE_OK) shape_offsets_clear(start);
    return rc;
}

/* ---- stream-profile ------------------------------------------------------ */

void shape_stream_profile_resume_free(shape_stream_profile_resume *r)
{
    free(r->counters);
    shape_offsets_free(&r->offset);
    shape_offsets_free(&r->positions);
    for (size_t i = 0; r->schema && i < r->n_schema; i++) {
        free(r->schema[i].name);
        free(r->schema[i].format);
    }
    free(r->schema);
    shape_profile_free(r->profile);
    for (size_t i = 0; i < r->n_tables; i++) shape_profile_free(r->tables[i]);
    free(r->tables);
    json_decref(r->windowed);
    memset(r, 0, sizeof *r);
}

static int refuse_profiler(const char *path, const char *what, const char *theirs, const char *ours, shape_err *err)
{
    return shape_err_set(err, SHAPE_EINVAL,
                         "checkpoint %s was taken with a different profiler (%s '%.100s', now '%.100s'): use another file",
                         path, what, theirs ? theirs : "?", ours);
}

static int read_profiler_identity(const char *path, const json_t *prof, const shape_stream_profile_expect *x,
                                  shape_err *err)
{
    if (!json_is_object(prof))
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s holds no profiler state: use another file", path);
    const char *kind = json_string_value(json_object_get(prof, "kind"));
    const char *name = json_string_value(json_object_get(prof, "name"));
    const char *et = json_string_value(json_object_get(prof, "event_time"));
    const char *config = json_string_value(json_object_get(prof, "config"));
    const char *want_kind = x->kind ? x->kind : "global";
    if (!kind || strcmp(kind, want_kind) != 0) return refuse_profiler(path, "window", kind, want_kind, err);
    if (x->window) {
        const char *window = json_string_value(json_object_get(prof, "window"));
        if (!window || strcmp(window, x->window) != 0) return refuse_profiler(path, "windows", window, x->window, err);
    }
    if (!name || strcmp(name, x->name) != 0) return refuse_profiler(path, "name", name, x->name, err);
    if (!et || strcmp(et, x->event_time) != 0) return refuse_profiler(path, "event time", et, x->event_time, err);
    if (!config || strcmp(config, x->fingerprint) != 0)
        return refuse_profiler(path, "configuration", config, x->fingerprint, err);
    const json_t *split = json_object_get(prof, "split");
    const char *by = json_string_value(json_object_get(split, "by"));
    if ((split || x->split_by) && (!by || !x->split_by || strcmp(by, x->split_by) != 0))
        return refuse_profiler(path, "--split-by", split ? by : "(none)", x->split_by ? x->split_by : "(none)", err);
    if (split && json_integer_value(json_object_get(split, "max_tables")) != x->max_tables) {
        char theirs[32], ours[32];
        snprintf(theirs, sizeof theirs, "%lld", (long long)json_integer_value(json_object_get(split, "max_tables")));
        snprintf(ours, sizeof ours, "%lld", (long long)x->max_tables);
        return refuse_profiler(path, "--max-tables", theirs, ours, err);
    }
    return SHAPE_OK;
}

static int load_b64_state(const char *path, const char *b64, const shape_profile_config *cfg, shape_profile **out,
                          shape_err *err)
{
    size_t len = 0;
    uint8_t *bytes = b64 ? shape_base64_decode(b64, &len) : NULL;
    if (!bytes)
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s: the profiler state is not base64: use another file",
                             path);
    int rc = shape_profile_state_load(bytes, len, cfg, out, err);
    free(bytes);
    if (rc != SHAPE_OK) shape_err_prefix(err, "checkpoint %s (use another file)", path);
    return rc;
}

/* The split's tables, each a state of its own. */
static int read_split(const char *path, const json_t *split, const shape_profile_config *cfg,
                      shape_stream_profile_resume *out, shape_err *err)
{
    const json_t *tables = json_object_get(split, "tables");
    if (!json_is_array(tables))
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s holds no split tables: use another file", path);
    out->split_values = json_integer_value(json_object_get(split, "values"));
    out->split_overflowed = json_is_true(json_object_get(split, "overflowed"));
    out->tables = calloc(json_array_size(tables) + 1, sizeof *out->tables);
    if (!out->tables) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; i < json_array_size(tables); i++) {
        SHAPE_RETURN_NOT_OK(
            load_b64_state(path, json_string_value(json_array_get(tables, i)), cfg, &out->tables[i], err));
        out->n_tables++;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(shape_profile_name(out->tables[j]), shape_profile_name(out->tables[i])))
                return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s holds two split tables named '%.100s': use another file",
                                     path, shape_profile_name(out->tables[i]));
    }
    if (out->split_values < 0 || (size_t)out->split_values > out->n_tables)
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s: the split's value count is out of range: use another file",
                             path);
    return SHAPE_OK;
}

static int read_counters(const char *path, const json_t *cnt, const shape_stream_profile_expect *x,
                         shape_stream_profile_resume *out, shape_err *err)
{
    if (!json_is_object(cnt))
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s has no counters: use another file", path);
    out->counters = calloc(x->n_counters ? x->n_counters : 1, sizeof *out->counters);
    if (!out->counters) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)cnt, key, value) {
        size_t i = 0;
        while (i < x->n_counters && strcmp(x->counter_names[i], key) != 0) i++;
        if (i == x->n_counters || !json_is_integer(value) || json_integer_value(value) < 0)
            return shape_err_set(err, SHAPE_EINVAL,
                                 "checkpoint %s has an unknown or bad counter '%.64s': use another file", path, key);
        out->counters[i] = json_integer_value(value);
    }
    return SHAPE_OK;
}

static int read_schema(const char *path, const json_t *a, shape_stream_profile_resume *out, shape_err *err)
{
    if (!a || json_is_null(a)) return SHAPE_OK;
    if (!json_is_array(a)) return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s: bad schema: use another file", path);
    out->schema = calloc(json_array_size(a) + 1, sizeof *out->schema);
    if (!out->schema) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        const char *name = json_string_value(json_array_get(e, 0)), *format = json_string_value(json_array_get(e, 1));
        if (!name || !format)
            return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s: bad schema: use another file", path);
        out->schema[i].name = strdup(name);
        out->schema[i].format = strdup(format);
        out->n_schema++;
        if (!out->schema[i].name || !out->schema[i].format) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    out->have_schema = 1;
    return SHAPE_OK;
}

static int read_state(const char *path, const json_t *prof, const shape_profile_config *cfg, int windowed,
                      shape_stream_profile_resume *out, shape_err *err)
{
    const json_t *net = json_object_get(prof, "null_event_time");
    out->null_event_time = json_is_integer(net) ? json_integer_value(net) : 0;
    if (windowed) {
        json_t *w = json_object_get(prof, "windows");
        if (!json_is_object(w))
            return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s holds no window state: use another file", path);
        out->windowed = json_incref(w);
        return SHAPE_OK;
    }
    SHAPE_RETURN_NOT_OK(load_b64_state(path, json_string_value(json_object_get(prof, "state")), cfg, &out->profile, err));
    const json_t *split = json_object_get(prof, "split");
    return split ? read_split(path, split, cfg, out, err) : SHAPE_OK;
}

static int read_profile_checkpoint(const char *cp, const json_t *doc, const shape_stream_profile_expect *x,
                                   shape_stream_profile_resume *out, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(
        shape_stream_checkpoint_check(cp, doc, SHAPE_STREAM_PROFILE_CHECKPOINT_FORMAT, "stream-profile", x->uri, err));
    const char *their_parts = json_string_value(json_object_get(doc, "partitions"));
    if ((their_parts || x->partitions) && (!their_parts || !x->partitions || strcmp(their_parts, x->partitions) != 0))
        return shape_err_set(err, SHAPE_EINVAL,
                             "checkpoint %s was taken with --partitions %.100s, not %.100s: use another file", cp,
                             their_parts ? their_parts : "(all)", x->partitions ? x->partitions : "(all)");
    const json_t *version = json_object_get(doc, "version");
    if (version && (!json_is_integer(version) || json_integer_value(version) != 1))
        return shape_err_set(err, SHAPE_EINVAL,
                             "checkpoint %s has a format version this shape does not read: use another file", cp);
    const json_t *prof = json_object_get(doc, "profiler");
    SHAPE_RETURN_NOT_OK(read_profiler_identity(cp, prof, x, err));
    SHAPE_RETURN_NOT_OK(read_counters(cp, json_object_get(doc, "counters"), x, out, err));
    const json_t *offset = json_object_get(doc, "offset");
    if (offset && !json_is_null(offset)) {
        SHAPE_RETURN_NOT_OK(read_offsets(offset, &out->offset, cp, err));
        out->have_offset = 1;
    }
    SHAPE_RETURN_NOT_OK(read_offsets(json_object_get(doc, "positions"), &out->positions, cp, err));
    SHAPE_RETURN_NOT_OK(read_schema(cp, json_object_get(prof, "schema"), out, err));
    SHAPE_RETURN_NOT_OK(read_state(cp, prof, x->cfg, x->window != NULL, out, err));
    out->finished = json_is_true(json_object_get(doc, "finished"));
    return SHAPE_OK;
}

int shape_stream_profile_checkpoint_read(const char *path, const json_t *doc, const shape_stream_profile_expect *expect,
                                         shape_stream_profile_resume *out, shape_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = read_profile_checkpoint(path, doc, expect, out, err);
    if (rc != SHAPE_OK) shape_stream_profile_resume_free(out);
    return rc;
}

/* ---- writing --------------------------------------------------------------- */

int shape_stream_read_checkpoint_write(const char *path, const char *uri, const shape_offsets *offset, shape_err *err)
{
    json_t *doc = json_pack("{s:s, s:i, s:s, s:o}", "format", SHAPE_STREAM_READ_CHECKPOINT_FORMAT, "version", 1, "uri",
                            uri, "offset", shape_offsets_to_json(offset));
    if (!doc) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
    int rc = add_file_identity(doc, uri, path, err);
    if (rc == SHAPE_OK) rc = shape_checkpoint_save(path, doc, err);
    json_decref(doc);
    return rc;
}

static json_t *schema_json(const shape_stream_column *schema, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_pack("[s,s]", schema[i].name, schema[i].format))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *counters_json(const shape_stream_counters *c)
{
    shape_stream_counters copy = *c;
    json_t *cnt = json_object();
    for (size_t i = 0; cnt && i < SHAPE_STREAM_N_COUNTERS; i++)
        json_object_set_new(cnt, shape_stream_counter_names()[i], json_integer(*shape_stream_counter_at(&copy, i)));
    return cnt;
}

int shape_stream_profile_checkpoint_write(const char *path, const shape_stream_profile_snapshot *s, shape_err *err)
{
    char *b64 = NULL;
    if (!s->windowed) {
        uint8_t *state = NULL;
        size_t len = 0;
        SHAPE_RETURN_NOT_OK(shape_profile_state_save(s->profile, &state, &len, err));
        b64 = shape_base64_encode(state, len);
        free(state);
        if (!b64) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
    }
    json_t *profiler = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:o*, s:I, s:s*}", "format",
                                 SHAPE_STREAM_PROFILER_FORMAT, "kind", s->kind ? s->kind : "global", "name", s->name,
                                 "event_time", s->event_time, "top_n", (json_int_t)s->top_n, "config", s->fingerprint,
                                 "schema", s->schema ? schema_json(s->schema, s->n_schema) : NULL, "null_event_time",
                                 (json_int_t)s->null_event_time, "state", b64);
    if (profiler && s->windowed &&
        (json_object_set_new(profiler, "window", json_string(s->window ? s->window : "")) ||
         json_object_set(profiler, "windows", (json_t *)s->windowed))) {
        json_decref(profiler);
        profiler = NULL;
    }
    if (profiler && s->split_by) {
        json_t *tables = json_array();
        json_t *split = json_pack("{s:s, s:I, s:I, s:b, s:o*}", "by", s->split_by, "max_tables",
                                  (json_int_t)s->max_tables, "values", (json_int_t)s->split_values, "overflowed",
                                  s->split_overflowed, "tables", tables);
        int rc = split ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
        for (size_t i = 0; rc == SHAPE_OK && i < s->n_tables; i++) {
            uint8_t *state = NULL;
            size_t len = 0;
            rc = shape_profile_state_save(s->tables[i], &state, &len, err);
            char *t = rc == SHAPE_OK ? shape_base64_encode(state, len) : NULL;
            free(state);
            if (rc == SHAPE_OK && (!t || json_array_append_new(tables, json_string(t))))
                rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
            free(t);
        }
        if (rc == SHAPE_OK && json_object_set_new(profiler, "split", split))
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
        else if (rc != SHAPE_OK) json_decref(split);
        if (rc != SHAPE_OK) {
            json_decref(profiler);
            free(b64);
            return rc;
        }
    }
    json_t *doc = json_pack("{s:s, s:i, s:s, s:s, s:s*, s:o*, s:o, s:o*, s:o*, s:b}", "format",
                            SHAPE_STREAM_PROFILE_CHECKPOINT_FORMAT, "version", 1, "shape_version", shape_version(),
                            "uri", s->uri, "partitions", s->partitions, "offset",
                            s->offset ? shape_offsets_to_json(s->offset) : NULL, "positions",
                            shape_offsets_to_json(s->positions), "counters", counters_json(s->counters), "profiler",
                            profiler, "finished", s->finished);
    free(b64);
    if (!doc) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
    int rc = add_file_identity(doc, s->uri, path, err);
    if (rc == SHAPE_OK) rc = shape_checkpoint_save(path, doc, err);
    json_decref(doc);
    return rc;
}

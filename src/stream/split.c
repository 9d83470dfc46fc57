/* split.c — the --split-by router and per-table profiles
 * (shape/stream_split.h), shared by the stream profiler and the library
 * call over an ArrowArrayStream. */
#include "shape/stream_split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shape/base64.h"
#include "shape/bytes.h"
#include "shape/utf8.h"

#include "scratch.h"

struct shape_split {
    int by_header, keep_headers;
    char *spec, *key, *name; /* key: the header or field name */
    size_t key_len;
    int64_t max_tables;
    int (*made)(void *ud, size_t t, const char *name, shape_err *err);
    void *ud;
    char **names; /* the tables, in order of first row */
    size_t n_tables, cap_tables, n_values;
    int overflowed, warned;
    /* scratch of a route: a batch's runs of rows with one key, with their
     * tables, then grouped by table (table t's runs are
     * runs[first[t] .. first[t + 1])) */
    shape_profile_run *cuts, *runs;
    uint32_t *cut_table;
    size_t cap_cuts;
    size_t *first;
    size_t cap_first;
    /* the view of the batch routed last, without the hidden column */
    struct ArrowSchema vs, **vsch;
    struct ArrowArray va, **varr;
    size_t cap_view;
};

int shape_stream_split_parse(const char *spec, int *by_header, const char **name, shape_err *err)
{
    if (spec && strncmp(spec, "header:", 7) == 0 && spec[7]) {
        *by_header = 1;
        *name = spec + 7;
    } else if (spec && strncmp(spec, "field:", 6) == 0 && spec[6]) {
        *by_header = 0;
        *name = spec + 6;
    } else {
        return shape_err_set(err, SHAPE_EINVAL, "--split-by must be header:NAME or field:NAME, not '%.60s'",
                             spec ? spec : "");
    }
    return SHAPE_OK;
}

int shape_split_new(const shape_split_config *cfg, int (*made)(void *ud, size_t t, const char *name, shape_err *err),
                    void *ud, shape_split **out, shape_err *err)
{
    *out = NULL;
    int by_header;
    const char *key;
    SHAPE_RETURN_NOT_OK(shape_stream_split_parse(cfg->split_by, &by_header, &key, err));
    if (cfg->max_tables < 1) return shape_err_set(err, SHAPE_EINVAL, "--max-tables must be at least 1");
    if (!cfg->name || !cfg->name[0])
        return shape_err_set(err, SHAPE_EINVAL, "a split needs the name of the table of rows without the value");
    shape_split *s = calloc(1, sizeof *s);
    if (!s) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    s->by_header = by_header;
    s->keep_headers = cfg->keep_headers;
    s->max_tables = cfg->max_tables;
    s->made = made;
    s->ud = ud;
    s->spec = strdup(cfg->split_by);
    s->name = strdup(cfg->name);
    if (!s->spec || !s->name) {
        shape_split_free(s);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    s->key = s->spec + (by_header ? 7 : 6);
    s->key_len = strlen(s->key);
    *out = s;
    return SHAPE_OK;
}

void shape_split_free(shape_split *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_tables; i++) free(s->names[i]);
    free(s->names);
    free(s->cuts);
    free(s->runs);
    free(s->cut_table);
    free(s->first);
    free(s->vsch);
    free(s->varr);
    free(s->spec);
    free(s->name);
    free(s);
}

size_t shape_split_tables(const shape_split *s) { return s->n_tables; }
const char *shape_split_table_name(const shape_split *s, size_t t) { return s->names[t]; }
int64_t shape_split_values(const shape_split *s) { return (int64_t)s->n_values; }
int shape_split_overflowed(const shape_split *s) { return s->overflowed; }

void shape_split_warning_text(const shape_split *s, char *buf, size_t size)
{
    snprintf(buf, size,
             "--split-by %.100s: more than %lld distinct values; the rest are profiled together as table '_other'",
             s->spec, (long long)s->max_tables);
}

int shape_split_warning(shape_split *s, char *buf, size_t size)
{
    if (!s->overflowed || s->warned) return 0;
    s->warned = 1;
    shape_split_warning_text(s, buf, size);
    return 1;
}

size_t shape_split_runs(const shape_split *s, size_t t, const shape_profile_run **runs)
{
    if (t >= s->n_tables || !s->first) return (*runs = NULL, 0);
    *runs = s->runs + s->first[t];
    return s->first[t + 1] - s->first[t];
}

static int bit_set(const struct ArrowArray *a, int64_t i)
{
    const uint8_t *v = a->buffers[0];
    return a->null_count == 0 || !v || ((v[i >> 3] >> (i & 7)) & 1);
}

/* Element i (before a's own offset) of a utf8/binary array ("u"/"z", or
 * "U"/"Z" when large); 0 when null. */
static int bytes_at(const struct ArrowArray *a, int large, int64_t i, const uint8_t **s, size_t *n)
{
    i += a->offset;
    if (!bit_set(a, i)) return 0;
    int64_t from, to;
    if (large) {
        const int64_t *o = a->buffers[1];
        from = o[i], to = o[i + 1];
    } else {
        const int32_t *o = a->buffers[1];
        from = o[i], to = o[i + 1];
    }
    *s = (const uint8_t *)a->buffers[2] + from;
    *n = (size_t)(to - from);
    return 1;
}

/* How a batch's rows name their table: the column and its layout. */
typedef struct split_key {
    const struct ArrowArray *col; /* NULL: no row has one */
    char type;                    /* 'u' 'U' (text), 'l' (int64), 'b' (bool), 'm' (header map) */
    int text;                     /* a text or header value: UTF-8 checked (not 'l', 'b') */
    char buf[2][24];              /* an int rendered, for this row and the one before */
    /* 'm': the map's buffers, taken once a batch rather than once a row;
     * a validity bitmap is NULL when the array has no nulls. Key and value
     * entry j is at j + koff, j + voff of their arrays (the offsets of the
     * entries struct and of the child). */
    const uint8_t *mvalid, *kvalid, *vvalid, *kdata, *vdata;
    const int32_t *moffs, *koffs, *voffs;
    int64_t koff, voff;
} split_key;

/* a's validity bitmap, or NULL when every element is valid */
static const uint8_t *validity(const struct ArrowArray *a)
{
    return a->null_count == 0 ? NULL : a->buffers[0];
}

static int split_key_open(const shape_split *p, const struct ArrowSchema *schema, const struct ArrowArray *array,
                          split_key *k, int64_t *hidden, shape_err *err)
{
    const char *want = p->by_header ? "_shape_headers" : p->key;
    memset(k, 0, sizeof *k);
    *hidden = -1;
    for (int64_t i = 0; i < schema->n_children; i++) {
        if (strcmp(schema->children[i]->name, want) != 0) continue;
        const char *f = schema->children[i]->format;
        if (p->by_header) {
            const struct ArrowSchema *e = schema->children[i]->n_children == 1 ? schema->children[i]->children[0] : NULL;
            if (strcmp(f, "+m") != 0 || !e || e->n_children != 2 || strcmp(e->children[0]->format, "u") != 0 ||
                strcmp(e->children[1]->format, "z") != 0)
                return shape_err_set(err, SHAPE_EINVAL, "--split-by header: needs the headers as a map (not nested=0)");
            if (!p->keep_headers) *hidden = i;
            k->type = 'm';
            const struct ArrowArray *m = array->children[i], *entries = m->children[0];
            const struct ArrowArray *keys = entries->children[0], *values = entries->children[1];
            k->mvalid = validity(m);
            k->moffs = m->buffers[1];
            k->kvalid = validity(keys);
            k->koffs = keys->buffers[1];
            k->kdata = keys->buffers[2];
            k->koff = entries->offset + keys->offset;
            k->vvalid = validity(values);
            k->voffs = values->buffers[1];
            k->vdata = values->buffers[2];
            k->voff = entries->offset + values->offset;
        } else if (!strcmp(f, "u") || !strcmp(f, "U") || !strcmp(f, "l") || !strcmp(f, "b")) {
            k->type = f[0];
        } else {
            return shape_err_set(err, SHAPE_EINVAL,
                                 "--split-by field:%s: the column is of Arrow type '%s'; only text, integer and bool "
                                 "columns name tables",
                                 p->key, f);
        }
        k->col = array->children[i];
        k->text = k->type != 'l' && k->type != 'b';
        break;
    }
    return SHAPE_OK;
}

/* Row r's value as it is (*s, *n), or 0 when the row has none: for text
 * and header values not checked yet (split_key_valid), so a row whose bytes
 * equal the row before's is not checked again. */
static inline int split_key_raw(const shape_split *p, split_key *k, int64_t r, int slot, const uint8_t **s, size_t *n)
{
    const struct ArrowArray *c = k->col;
    if (!c) return 0;
    switch (k->type) {
    case 'u':
    case 'U':
        return bytes_at(c, k->type == 'U', r, s, n);
    case 'l':
        if (!bit_set(c, r + c->offset)) return 0;
        *n = (size_t)snprintf(k->buf[slot], sizeof k->buf[slot], "%lld",
                              (long long)((const int64_t *)c->buffers[1])[r + c->offset]);
        *s = (const uint8_t *)k->buf[slot];
        return 1;
    case 'b': {
        if (!bit_set(c, r + c->offset)) return 0;
        int64_t i = r + c->offset;
        int v = (((const uint8_t *)c->buffers[1])[i >> 3] >> (i & 7)) & 1;
        *s = (const uint8_t *)(v ? "true" : "false");
        *n = v ? 4 : 5;
        return 1;
    }
    default: { /* the header map: the first entry named key */
        int64_t i = r + c->offset;
        if (k->mvalid && !((k->mvalid[i >> 3] >> (i & 7)) & 1)) return 0;
        for (int64_t j = k->moffs[i]; j < k->moffs[i + 1]; j++) {
            int64_t kj = j + k->koff;
            if (k->kvalid && !((k->kvalid[kj >> 3] >> (kj & 7)) & 1)) continue;
            int32_t from = k->koffs[kj];
            if ((size_t)(k->koffs[kj + 1] - from) != p->key_len ||
                !shape_bytes_equal(k->kdata + from, (const uint8_t *)p->key, p->key_len))
                continue;
            int64_t vj = j + k->voff;
            if (k->vvalid && !((k->vvalid[vj >> 3] >> (vj & 7)) & 1)) return 0;
            *s = k->vdata + k->voffs[vj];
            *n = (size_t)(k->voffs[vj + 1] - k->voffs[vj]);
            return 1;
        }
        return 0;
    }
    }
}

/* Whether a value split_key_raw found names a table: text must be UTF-8. */
static inline int split_key_valid(const split_key *k, const uint8_t *s, size_t n)
{
    return !k->text || shape_utf8_valid(s, n);
}

/* A new table named (s, n): the router's copy, then the caller's object. */
static int add_table(shape_split *p, const uint8_t *s, size_t n, size_t *out, shape_err *err)
{
    if (p->n_tables == p->cap_tables) {
        size_t cap = p->cap_tables ? 2 * p->cap_tables : 16;
        char **t = realloc(p->names, cap * sizeof *t);
        if (!t) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        p->names = t;
        p->cap_tables = cap;
    }
    char *name = malloc(n + 1);
    if (!name) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    memcpy(name, s, n);
    name[n] = '\0';
    p->names[p->n_tables] = name;
    int rc = p->made ? p->made(p->ud, p->n_tables, name, err) : SHAPE_OK;
    if (rc != SHAPE_OK) {
        free(name);
        return rc;
    }
    *out = p->n_tables++;
    return SHAPE_OK;
}

static int find_table(const shape_split *p, const uint8_t *s, size_t n, size_t *out)
{
    for (size_t i = 0; i < p->n_tables; i++)
        if (strlen(p->names[i]) == n && memcmp(p->names[i], s, n) == 0) return (*out = i, 1);
    return 0;
}

/* The table named (s, n); value: a distinct value (counts toward
 * max_tables), else the rows without one (cfg->name). */
static int split_table(shape_split *p, const uint8_t *s, size_t n, int value, size_t *out, shape_err *err)
{
    if (!value) {
        s = (const uint8_t *)p->name;
        n = strlen(p->name);
    }
    if (find_table(p, s, n, out)) return SHAPE_OK;
    if (value && p->n_values >= (size_t)p->max_tables) { /* too many values: into _other */
        p->overflowed = 1;
        s = (const uint8_t *)"_other";
        n = 6;
        value = 0;
        if (find_table(p, s, n, out)) return SHAPE_OK;
    }
    SHAPE_RETURN_NOT_OK(add_table(p, s, n, out, err));
    if (value) p->n_values++;
    return SHAPE_OK;
}

int shape_split_restore_table(shape_split *s, const char *name, shape_err *err)
{
    size_t at;
    if (find_table(s, (const uint8_t *)name, strlen(name), &at))
        return shape_err_set(err, SHAPE_EINVAL, "the split table '%.100s' twice", name);
    return add_table(s, (const uint8_t *)name, strlen(name), &at, err);
}

int shape_split_restore_counts(shape_split *s, int64_t values, int overflowed, shape_err *err)
{
    if (values < 0 || (uint64_t)values > s->n_tables)
        return shape_err_set(err, SHAPE_EINVAL, "the split's value count is out of range");
    s->n_values = (size_t)values;
    s->overflowed = overflowed;
    return SHAPE_OK;
}

/* The batch as the tables see it: without the hidden column (the headers
 * read only for the split). */
static int split_view(shape_split *p, const struct ArrowSchema *schema, const struct ArrowArray *array, int64_t hidden,
                      shape_err *err)
{
    p->vs = *schema;
    p->va = *array;
    if (hidden < 0) return SHAPE_OK;
    size_t need = (size_t)schema->n_children + 1;
    SHAPE_RETURN_NOT_OK(stream_scratch_grow(need, &p->cap_view,
                                            (stream_scratch[]){STREAM_SCRATCH(p->vsch), STREAM_SCRATCH(p->varr)}, 2,
                                            err));
    int64_t m = 0;
    for (int64_t i = 0; i < schema->n_children; i++)
        if (i != hidden) p->vsch[m] = schema->children[i], p->varr[m++] = array->children[i];
    p->vs.children = p->vsch;
    p->vs.n_children = m;
    p->va.children = p->varr;
    p->va.n_children = m;
    return SHAPE_OK;
}

/* Route a batch once: one sweep cuts it into runs of rows with the same
 * value (a run ends where the value changes, so two values that name one
 * table stay two runs), looks each run's table up (made at its first run,
 * so tables are in order of first row), then groups the runs by table, in
 * row order (a counting sort), so each table is handed only its own rows,
 * in one call. */
int shape_split_route(shape_split *p, const struct ArrowSchema *schema, const struct ArrowArray *array,
                      const struct ArrowSchema **view, const struct ArrowArray **view_array, shape_err *err)
{
    if (!schema->format || strcmp(schema->format, "+s") != 0 || schema->n_children != array->n_children)
        return shape_err_set(err, SHAPE_EINVAL, "a split takes struct batches whose array matches the schema");
    split_key k;
    int64_t hidden;
    SHAPE_RETURN_NOT_OK(split_key_open(p, schema, array, &k, &hidden, err));
    size_t rows = array->length > 0 ? (size_t)array->length : 1;
    SHAPE_RETURN_NOT_OK(stream_scratch_grow(
        rows, &p->cap_cuts,
        (stream_scratch[]){STREAM_SCRATCH(p->cuts), STREAM_SCRATCH(p->runs), STREAM_SCRATCH(p->cut_table)}, 3, err));
    const uint8_t *ks = NULL, *ps = NULL; /* the run's value; the row before's bytes (text) */
    size_t kn = 0, pn = 0, n_cuts = 0;
    int have = 0, slot = 0, praw = 0;
    int64_t from = 0;
    for (int64_t r = 0; r <= array->length; r++) {
        const uint8_t *s = NULL;
        size_t n = 0;
        int h = 0;
        if (r < array->length) {
            int raw = split_key_raw(p, &k, array->offset + r, slot, &s, &n);
            /* text: the row before's bytes again, so its table again (checked once a change) */
            if (k.text && r > 0 && raw == praw && (!raw || (n == pn && shape_bytes_equal(s, ps, n)))) continue;
            praw = raw, ps = s, pn = n;
            h = raw && split_key_valid(&k, s, n);
            if (r > 0 && h == have && (!h || (n == kn && shape_bytes_equal(s, ks, n)))) continue;
        }
        if (r > 0) { /* the run [from, r) ends */
            size_t at = 0;
            SHAPE_RETURN_NOT_OK(split_table(p, ks, kn, have, &at, err));
            p->cuts[n_cuts] = (shape_profile_run){from, r - from};
            p->cut_table[n_cuts++] = (uint32_t)at;
        }
        from = r, have = h, ks = s, kn = n, slot ^= 1;
    }
    if (p->n_tables + 1 > p->cap_first) {
        size_t *f = realloc(p->first, (p->n_tables + 1) * sizeof *f);
        if (!f) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        p->first = f;
        p->cap_first = p->n_tables + 1;
    }
    memset(p->first, 0, (p->n_tables + 1) * sizeof *p->first);
    for (size_t c = 0; c < n_cuts; c++) p->first[p->cut_table[c] + 1]++;
    for (size_t t = 0; t < p->n_tables; t++) p->first[t + 1] += p->first[t];
    for (size_t c = 0; c < n_cuts; c++) p->runs[p->first[p->cut_table[c]]++] = p->cuts[c];
    for (size_t t = p->n_tables; t-- > 0;) p->first[t + 1] = p->first[t]; /* back to the starts */
    p->first[0] = 0;
    SHAPE_RETURN_NOT_OK(split_view(p, schema, array, hidden, err));
    *view = &p->vs;
    *view_array = &p->va;
    return SHAPE_OK;
}

/* ---- one profile per table ------------------------------------------------ */

struct shape_split_profiles {
    shape_split *router;
    shape_profile_config cfg;
    shape_profile **tables;
    size_t n_tables, cap_tables;
    shape_profile **adopt; /* a resume's tables, taken by made() in order */
    size_t n_adopt;
};

static int made_profile(void *ud, size_t t, const char *name, shape_err *err)
{
    shape_split_profiles *sp = ud;
    if (t >= sp->cap_tables) {
        size_t cap = sp->cap_tables ? 2 * sp->cap_tables : 16;
        shape_profile **g = realloc(sp->tables, cap * sizeof *g);
        if (!g) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        sp->tables = g;
        sp->cap_tables = cap;
    }
    if (sp->adopt && t < sp->n_adopt) { /* a resume: the saved table */
        sp->tables[t] = sp->adopt[t];
        sp->adopt[t] = NULL;
    } else {
        SHAPE_RETURN_NOT_OK(shape_profile_new(name, &sp->cfg, &sp->tables[t], err));
    }
    sp->n_tables = t + 1;
    return SHAPE_OK;
}

int shape_split_profiles_new(const shape_split_config *cfg, const shape_profile_config *profile,
                             shape_split_profiles **out, shape_err *err)
{
    *out = NULL;
    shape_split_profiles *sp = calloc(1, sizeof *sp);
    if (!sp) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (profile) sp->cfg = *profile;
    else shape_profile_config_default(&sp->cfg);
    int rc = shape_split_new(cfg, made_profile, sp, &sp->router, err);
    if (rc != SHAPE_OK) {
        free(sp);
        return rc;
    }
    *out = sp;
    return SHAPE_OK;
}

void shape_split_profiles_free(shape_split_profiles *sp)
{
    if (!sp) return;
    for (size_t i = 0; i < sp->n_tables; i++) shape_profile_free(sp->tables[i]);
    free(sp->tables);
    shape_split_free(sp->router);
    free(sp);
}

int shape_split_profiles_update(shape_split_profiles *sp, const struct ArrowSchema *schema,
                                const struct ArrowArray *array, shape_err *err)
{
    const struct ArrowSchema *vs;
    const struct ArrowArray *va;
    SHAPE_RETURN_NOT_OK(shape_split_route(sp->router, schema, array, &vs, &va, err));
    for (size_t t = 0; t < sp->n_tables; t++) {
        const shape_profile_run *runs;
        size_t n = shape_split_runs(sp->router, t, &runs);
        if (n) SHAPE_RETURN_NOT_OK(shape_profile_update_runs(sp->tables[t], vs, va, runs, n, err));
    }
    return SHAPE_OK;
}

static int read_each(void *ud, const struct ArrowSchema *schema, const struct ArrowArray *batch, shape_err *err)
{
    return shape_split_profiles_update(ud, schema, batch, err);
}

int shape_split_profiles_read(shape_split_profiles *sp, struct ArrowArrayStream *stream, shape_err *err)
{
    return shape_arrow_stream_consume(stream, NULL, read_each, NULL, sp, err);
}

size_t shape_split_profiles_tables(const shape_split_profiles *sp, const shape_profile *const **out)
{
    *out = (const shape_profile *const *)sp->tables;
    return sp->n_tables;
}

shape_profile *shape_split_profiles_table(shape_split_profiles *sp, size_t t)
{
    return t < sp->n_tables ? sp->tables[t] : NULL;
}

shape_split *shape_split_profiles_router(shape_split_profiles *sp) { return sp->router; }

int shape_split_profiles_adopt(shape_split_profiles *sp, shape_profile **tables, size_t n, int64_t values,
                               int overflowed, shape_err *err)
{
    sp->adopt = tables;
    sp->n_adopt = n;
    int rc = sp->n_tables ? shape_err_set(err, SHAPE_EINVAL, "a split resumes before its first batch") : SHAPE_OK;
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++)
        rc = shape_split_restore_table(sp->router, shape_profile_name(tables[i]), err);
    if (rc == SHAPE_OK) rc = shape_split_restore_counts(sp->router, values, overflowed, err);
    for (size_t i = 0; i < n; i++) shape_profile_free(tables[i]); /* those not taken */
    free(tables);
    sp->adopt = NULL;
    sp->n_adopt = 0;
    return rc;
}

int shape_split_profile_stream(struct ArrowArrayStream *stream, const shape_split_config *cfg,
                               const shape_profile_config *profile, shape_split_profiles **out, shape_err *err)
{
    *out = NULL;
    shape_split_profiles *sp;
    SHAPE_RETURN_NOT_OK(shape_split_profiles_new(cfg, profile, &sp, err));
    int rc = shape_split_profiles_read(sp, stream, err);
    if (rc != SHAPE_OK) {
        shape_split_profiles_free(sp);
        return rc;
    }
    *out = sp;
    return SHAPE_OK;
}

int shape_stream_split_document(const shape_profile *const *tables, size_t n, char **out, size_t *len, shape_err *err)
{
    *out = NULL;
    *len = 0;
    json_t *doc = NULL;
    SHAPE_RETURN_NOT_OK(shape_profile_document_json_valued(tables, n, &doc, err));
    int rc = shape_profile_document_text(doc, out, len, err);
    json_decref(doc);
    return rc;
}

int shape_stream_split_states(const shape_profile *const *tables, size_t n, char **out, size_t *len, shape_err *err)
{
    *out = NULL;
    *len = 0;
    char *all = calloc(1, 1);
    size_t used = 0;
    int rc = all ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) {
        uint8_t *state = NULL;
        size_t slen = 0;
        rc = shape_profile_state_save(tables[i], &state, &slen, err);
        char *b64 = rc == SHAPE_OK ? shape_base64_encode(state, slen) : NULL;
        free(state);
        json_t *line = b64 ? json_pack("{s:s, s:s}", "state", b64, "table", shape_profile_name(tables[i])) : NULL;
        free(b64);
        char *text = NULL;
        size_t tlen = 0;
        if (rc == SHAPE_OK)
            rc = line ? shape_profile_json_dumps(line, -1, &text, &tlen, err)
                      : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        json_decref(line);
        char *grown = rc == SHAPE_OK ? realloc(all, used + tlen + 2) : NULL;
        if (rc == SHAPE_OK && !grown) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        if (grown) {
            all = grown;
            memcpy(all + used, text, tlen);
            used += tlen;
            all[used++] = '\n';
            all[used] = '\0';
        }
        free(text);
    }
    if (rc != SHAPE_OK) {
        free(all);
        return rc;
    }
    *out = all;
    *len = used;
    return SHAPE_OK;
}

/* table.c — the table profiler: routes each column of a record batch to its
 * column profiler, and merges table profiles.
 *
 * Why: a stream is profiled as one table whose batches arrive one after the
 * other (and, with several workers, as several profiles merged at the end);
 * `rows` and the columns must come out the same however the rows were cut.
 *
 * How: a batch is a struct array ("+s") with one child per column. Children
 * are matched to columns by name (the common case — same schema as the last
 * batch, same order — is checked first, position by position). Everything
 * that can refuse a batch (malformed struct, a known column whose Arrow
 * format changed, a duplicate name) is checked before anything is counted;
 * new columns are created (as if null in every earlier row) and appended in
 * schema order; a known column absent from the batch counts its rows as
 * nulls. So every column's `count` equals the table's `rows`.
 */
#include "profile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void shape_profile_config_default(shape_profile_config *cfg) { cfg->top_n = SHAPE_PROFILE_TOP_N; }

static int check_config(const shape_profile_config *cfg, shape_err *err)
{
    if (cfg->top_n < 1 || cfg->top_n > INT32_MAX)
        return shape_err_set(err, SHAPE_EINVAL, "top_n must be between 1 and %d, not %lld", INT32_MAX,
                             (long long)cfg->top_n);
    return SHAPE_OK;
}

int shape_profile_new(const char *name, const shape_profile_config *cfg, shape_profile **out, shape_err *err)
{
    *out = NULL;
    shape_profile_config def;
    if (!cfg) {
        shape_profile_config_default(&def);
        cfg = &def;
    }
    SHAPE_RETURN_NOT_OK(check_config(cfg, err));
    shape_profile *p = calloc(1, sizeof *p);
    if (p) p->name = strdup(name ? name : "");
    if (!p || !p->name) {
        free(p);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a profile");
    }
    p->cfg = *cfg;
    *out = p;
    return SHAPE_OK;
}

static void origins_free(prof_origin *o, size_t n);

void shape_profile_free(shape_profile *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->ncols; i++) prof_column_free(p->cols[i]);
    free(p->cols);
    free(p->name);
    origins_free(p->origins, p->n_origins);
    free(p);
}

static int compare_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static void origins_free(prof_origin *o, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(o[i].source);
        free(o[i].parts);
    }
    free(o);
}

/* Add `source` with partitions[0..n) to the list (merged into its entry
 * when the source is there already): sorted, duplicates dropped. */
static int origin_add(prof_origin **list, size_t *count, const char *source, const int32_t *partitions, size_t n)
{
    size_t at = 0;
    while (at < *count && strcmp((*list)[at].source, source) != 0) at++;
    if (at == *count) {
        prof_origin *grown = realloc(*list, (*count + 1) * sizeof *grown);
        if (!grown) return -1;
        *list = grown;
        grown[at] = (prof_origin){strdup(source), NULL, 0};
        if (!grown[at].source) return -1;
        (*count)++;
    }
    prof_origin *o = &(*list)[at];
    if (!n) return 0;
    int32_t *parts = realloc(o->parts, (o->n + n) * sizeof *parts);
    if (!parts) return -1;
    memcpy(parts + o->n, partitions, n * sizeof *parts);
    size_t total = o->n + n, k = 0;
    qsort(parts, total, sizeof *parts, compare_i32);
    for (size_t i = 0; i < total; i++)
        if (k == 0 || parts[k - 1] != parts[i]) parts[k++] = parts[i];
    o->parts = parts;
    o->n = k;
    return 0;
}

int shape_profile_set_origin(shape_profile *p, const char *source, const int32_t *partitions, size_t n,
                             shape_err *err)
{
    origins_free(p->origins, p->n_origins);
    p->origins = NULL;
    p->n_origins = 0;
    p->origin_known = source != NULL;
    if (source && origin_add(&p->origins, &p->n_origins, source, partitions, n) != 0) {
        p->origin_known = 0;
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    return SHAPE_OK;
}

int shape_profile_add_origin(shape_profile *p, const char *source, const int32_t *partitions, size_t n,
                             shape_err *err)
{
    p->origin_known = 1;
    if (origin_add(&p->origins, &p->n_origins, source, partitions, n) != 0)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    return SHAPE_OK;
}

int shape_profile_origin_known(const shape_profile *p) { return p->origin_known; }

const char *shape_profile_origin(const shape_profile *p, size_t i, const int32_t **partitions, size_t *n)
{
    if (partitions) *partitions = NULL;
    if (n) *n = 0;
    if (i >= p->n_origins) return NULL;
    if (partitions) *partitions = p->origins[i].parts;
    if (n) *n = p->origins[i].n;
    return p->origins[i].source;
}

int shape_profile_check_merge(const shape_profile *dst, const shape_profile *src, int any_source, const char *dst_what,
                              const char *src_what, shape_err *err)
{
    for (size_t k = 0; dst->origin_known && src->origin_known && k < src->n_origins; k++) {
        const prof_origin *s = &src->origins[k], *d = NULL;
        for (size_t m = 0; m < dst->n_origins && !d; m++)
            if (strcmp(dst->origins[m].source, s->source) == 0) d = &dst->origins[m];
        if (!d && !any_source && dst->n_origins)
            return shape_err_set(err, SHAPE_EINVAL,
                                 "%s profiles %.200s but %s profiles %.200s%s: another stream (pass --any-source to "
                                 "merge the profiles of several streams)",
                                 src_what, s->source, dst_what, dst->origins[0].source,
                                 dst->n_origins > 1 ? " and more" : "");
        size_t i = 0, j = 0;
        while (d && i < d->n && j < s->n) {
            if (d->parts[i] == s->parts[j])
                return shape_err_set(err, SHAPE_EINVAL,
                                     "%s and %s both hold partition %ld of %.200s: merging would count its rows "
                                     "twice (the same state given twice, or overlapping --partitions)",
                                     dst_what, src_what, (long)s->parts[j], s->source);
            if (d->parts[i] < s->parts[j]) i++;
            else j++;
        }
    }
    int shared = 0;
    for (size_t k = 0; k < src->ncols && !shared; k++) shared = prof_find_column(dst, src->cols[k]->name) != NULL;
    if (dst->ncols && src->ncols && !shared)
        return shape_err_set(err, SHAPE_EINVAL,
                             "%s and %s have no column in common (first ones '%.100s' and '%.100s'): they profile "
                             "different schemas",
                             dst_what, src_what, dst->cols[0]->name, src->cols[0]->name);
    return SHAPE_OK;
}

/* The merged origin: every source of both with their partitions, when both
 * are known; else unknown. */
static int merge_origin(shape_profile *dst, const shape_profile *src, shape_err *err)
{
    if (!dst->origin_known) return SHAPE_OK;
    if (!src->origin_known) return shape_profile_set_origin(dst, NULL, NULL, 0, err);
    for (size_t k = 0; k < src->n_origins; k++)
        SHAPE_RETURN_NOT_OK(
            shape_profile_add_origin(dst, src->origins[k].source, src->origins[k].parts, src->origins[k].n, err));
    return SHAPE_OK;
}

const char *shape_profile_name(const shape_profile *p) { return p->name; }
int64_t shape_profile_rows(const shape_profile *p) { return p->rows; }
size_t shape_profile_num_columns(const shape_profile *p) { return p->ncols; }
const shape_profile_config *shape_profile_get_config(const shape_profile *p) { return &p->cfg; }

int prof_add_column(shape_profile *p, prof_column *c, shape_err *err)
{
    if (p->ncols == p->cap_cols) {
        size_t cap = p->cap_cols ? p->cap_cols * 2 : 16;
        prof_column **q = realloc(p->cols, cap * sizeof *q);
        if (!q) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for column '%s'", c->name);
        p->cols = q;
        p->cap_cols = cap;
    }
    p->cols[p->ncols++] = c;
    return SHAPE_OK;
}

prof_column *prof_find_column(const shape_profile *p, const char *name)
{
    for (size_t i = 0; i < p->ncols; i++)
        if (strcmp(p->cols[i]->name, name) == 0) return p->cols[i];
    return NULL;
}

static const char *child_name(const struct ArrowSchema *s) { return s->name ? s->name : ""; }

/* The format a column is known by: the Arrow format, or "dictionary:<index
 * format>" for a dictionary-encoded column (whose format alone names only
 * its index type). Returns fmt itself or buf. */
static const char *column_format(const struct ArrowSchema *s, char *buf, size_t cap)
{
    if (!s->dictionary) return s->format;
    snprintf(buf, cap, "dictionary:%s", s->format);
    return buf;
}

/* Is row i of the struct itself null? */
static int struct_has_nulls(const struct ArrowArray *b)
{
    if (b->null_count == 0 || b->n_buffers < 1 || !b->buffers[0]) return 0;
    const uint8_t *bits = b->buffers[0];
    for (int64_t i = 0; i < b->length; i++) {
        int64_t at = b->offset + i;
        if (!((bits[at >> 3] >> (at & 7)) & 1)) return 1;
    }
    return 0;
}

int shape_profile_update(shape_profile *p, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                         shape_err *err)
{
    shape_profile_run whole = {0, batch ? batch->length : 0};
    return shape_profile_update_runs(p, schema, batch, &whole, 1, err);
}

int shape_profile_update_runs(shape_profile *p, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                              const shape_profile_run *runs, size_t n_runs, shape_err *err)
{
    if (!schema || !batch || !schema->format || strcmp(schema->format, "+s") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "a profiled batch must be a struct array (format \"+s\")");
    if (schema->n_children != batch->n_children || batch->length < 0 || batch->offset < 0)
        return shape_err_set(err, SHAPE_EINVAL, "batch and schema disagree: %lld columns in the schema, %lld in the batch",
                             (long long)schema->n_children, (long long)batch->n_children);
    if (struct_has_nulls(batch))
        return shape_err_set(err, SHAPE_EINVAL, "a profiled batch must not have null rows at the top level");
    for (size_t r = 0; r < n_runs; r++)
        if (runs[r].start < 0 || runs[r].length < 0 || runs[r].start > batch->length - runs[r].length)
            return shape_err_set(err, SHAPE_EINVAL, "a run of rows [%lld, +%lld) outside the batch's %lld rows",
                                 (long long)runs[r].start, (long long)runs[r].length, (long long)batch->length);
    int64_t nch = schema->n_children;
    prof_column **map = NULL;
    if (nch > 0) {
        map = calloc((size_t)nch, sizeof *map);
        if (!map) return shape_err_set(err, SHAPE_ENOMEM, "out of memory profiling a batch");
    }
    int rc = SHAPE_OK;
    /* in_place: children 0..i-1 are the profile's columns 0..i-1, so their
     * names are distinct (a profile's are) and child i, if it is column i
     * too, repeats none of them: no pairwise check. A split hands every
     * table the same batch, so this is the common case many times a batch. */
    int in_place = 1;
    /* 1. validate and match, creating nothing yet */
    for (int64_t i = 0; i < nch && rc == SHAPE_OK; i++) {
        const struct ArrowSchema *cs = schema->children[i];
        const struct ArrowArray *ca = batch->children[i];
        if (!cs || !ca || !cs->format) {
            rc = shape_err_set(err, SHAPE_EINVAL, "column %lld of the batch has no schema or array", (long long)i);
            break;
        }
        const char *name = child_name(cs);
        in_place = in_place && (size_t)i < p->ncols && strcmp(p->cols[i]->name, name) == 0;
        for (int64_t j = 0; j < i && !in_place; j++)
            if (strcmp(child_name(schema->children[j]), name) == 0) {
                rc = shape_err_set(err, SHAPE_EINVAL, "the batch has two columns named '%s'", name);
                break;
            }
        if (rc != SHAPE_OK) break;
        if (ca->offset < 0 || ca->length < batch->offset + batch->length) {
            rc = shape_err_set(err, SHAPE_EINVAL, "column '%s' holds %lld rows, fewer than the batch's %lld", name,
                               (long long)ca->length, (long long)(batch->offset + batch->length));
            break;
        }
        prof_column *c = in_place ? p->cols[i] : prof_find_column(p, name);
        char fbuf[64];
        const char *fmt = column_format(cs, fbuf, sizeof fbuf);
        if (c && strcmp(c->format, fmt) != 0) {
            char *now = prof_arrow_type_name(cs);
            if (now && strcmp(now, c->arrow_type) != 0)
                rc = shape_err_set(err, SHAPE_EINVAL, "column '%s' changed type from %s to %s", name, c->arrow_type, now);
            else
                rc = shape_err_set(err, SHAPE_EINVAL, "column '%s' changed type from Arrow format \"%s\" to \"%s\"",
                                   name, c->format, fmt);
            free(now);
            break;
        }
        map[i] = c;
    }
    /* 2. create the new columns (appended in schema order) */
    for (int64_t i = 0; i < nch && rc == SHAPE_OK; i++) {
        if (map[i]) continue;
        const struct ArrowSchema *cs = schema->children[i];
        char *type = prof_arrow_type_name(cs);
        prof_column *c = NULL;
        if (!type) {
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory for column '%s'", child_name(cs));
            break;
        }
        char fbuf[64];
        rc = prof_column_new(child_name(cs), column_format(cs, fbuf, sizeof fbuf), type, &c, err);
        free(type);
        if (rc == SHAPE_OK) rc = prof_add_column(p, c, err);
        if (rc != SHAPE_OK) {
            prof_column_free(c);
            break;
        }
        prof_column_add_nulls(c, p->rows); /* null in every earlier row */
        map[i] = c;
    }
    /* 3. profile, each run as a slice of its own (so the same as one call per run) */
    int64_t rows = 0;
    for (size_t r = 0; r < n_runs && rc == SHAPE_OK; r++) {
        for (int64_t i = 0; i < nch && rc == SHAPE_OK; i++)
            rc = prof_column_update(map[i], batch->children[i], batch->offset + runs[r].start, runs[r].length, err);
        rows += runs[r].length;
    }
    if (rc == SHAPE_OK) {
        /* in place throughout: the batch's columns are the profile's first nch */
        for (size_t k = in_place ? (size_t)nch : 0; k < p->ncols; k++) {
            int present = 0;
            for (int64_t i = 0; i < nch && !present && !in_place; i++) present = map[i] == p->cols[k];
            if (!present) prof_column_add_nulls(p->cols[k], rows);
        }
        p->rows += rows;
    }
    free(map);
    return rc;
}

/* ---- merge -------------------------------------------------------------- */

int shape_profile_merge(shape_profile *dst, const shape_profile *src, shape_err *err)
{
    if (dst == src) return shape_err_set(err, SHAPE_EINVAL, "cannot merge a profile into itself");
    if (dst->cfg.top_n != src->cfg.top_n)
        return shape_err_set(err, SHAPE_EINVAL, "cannot merge profiles made with different configurations (top_n %lld and %lld)",
                             (long long)dst->cfg.top_n, (long long)src->cfg.top_n);
    for (size_t i = 0; i < src->ncols; i++) {
        const prof_column *s = src->cols[i];
        const prof_column *d = prof_find_column(dst, s->name);
        if (d && strcmp(d->format, s->format) != 0)
            return shape_err_set(err, SHAPE_EINVAL, "cannot merge profiles: column '%s' is %s in one and %s in the other",
                                 s->name, d->arrow_type, s->arrow_type);
    }
    /* Columns only src has: create them first, null over dst's rows. */
    size_t before = dst->ncols;
    for (size_t i = 0; i < src->ncols; i++) {
        const prof_column *s = src->cols[i];
        if (prof_find_column(dst, s->name)) continue;
        prof_column *c = NULL;
        int rc = prof_column_new(s->name, s->format, s->arrow_type, &c, err);
        if (rc == SHAPE_OK) rc = prof_add_column(dst, c, err);
        if (rc != SHAPE_OK) {
            prof_column_free(c);
            while (dst->ncols > before) prof_column_free(dst->cols[--dst->ncols]);
            return rc;
        }
        prof_column_add_nulls(c, dst->rows);
    }
    size_t ncols = dst->ncols;
    for (size_t k = 0; k < ncols; k++) {
        prof_column *d = dst->cols[k];
        const prof_column *s = NULL;
        for (size_t i = 0; i < src->ncols && !s; i++)
            if (strcmp(src->cols[i]->name, d->name) == 0) s = src->cols[i];
        if (s)
            SHAPE_RETURN_NOT_OK(prof_column_merge(d, s, err));
        else
            prof_column_add_nulls(d, src->rows);
    }
    dst->rows += src->rows;
    return merge_origin(dst, src, err);
}

/* domain.c — an open domain and its cursors (shape/domain.h).
 *
 * Why: the emit plan, runtime and checkpoint ask a domain for its tables
 * per table or per batch, and for rows per event; this handle makes the
 * former plain loads and the latter one indirect call, whatever the domain.
 * How: shape_domain_open opens the type's state and copies every table's
 * description (name, columns, event-time column, rows) into one array; a
 * cursor keeps the type's row function beside the type's cursor, so a row
 * costs one call through a pointer.
 */
#include <stdlib.h>
#include <string.h>

#include "shape/domain.h"

struct shape_domain {
    const shape_domain_type *type;
    void *impl;
    char *preset;
    uint64_t seed;
    size_t ntables;
    shape_domain_table *tables;
};

struct shape_domain_cursor {
    int (*row)(void *cursor, uint64_t row, shape_gen_row *out, shape_err *err);
    void *impl;
    const shape_domain_type *type;
};

int shape_domain_open(const shape_domain_type *type, const char *preset, uint64_t seed, shape_domain **out,
                      shape_err *err)
{
    *out = NULL;
    if (!preset) preset = type->default_preset;
    shape_domain *d = calloc(1, sizeof *d);
    if (!d || !(d->preset = strdup(preset))) {
        free(d);
        return shape_err_set(err, SHAPE_ENOMEM, "%s: out of memory", type->name);
    }
    d->type = type;
    d->seed = seed;
    int rc = type->open(type, preset, seed, &d->impl, err);
    if (rc == SHAPE_OK) {
        d->ntables = type->table_count(d->impl);
        d->tables = calloc(d->ntables ? d->ntables : 1, sizeof *d->tables);
        if (!d->tables) rc = shape_err_set(err, SHAPE_ENOMEM, "%s: out of memory", type->name);
    }
    for (size_t t = 0; rc == SHAPE_OK && t < d->ntables; t++) {
        type->table(d->impl, t, &d->tables[t]);
        if (d->tables[t].ncols > SHAPE_GEN_MAX_COLUMNS)
            rc = shape_err_set(err, SHAPE_EINVAL, "%s: table '%s' has more than %d columns", type->name,
                               d->tables[t].name, SHAPE_GEN_MAX_COLUMNS);
    }
    if (rc == SHAPE_OK)
        *out = d;
    else
        shape_domain_free(d);
    return rc;
}

void shape_domain_free(shape_domain *d)
{
    if (!d) return;
    if (d->impl) d->type->close(d->impl);
    free(d->tables);
    free(d->preset);
    free(d);
}

const shape_domain_type *shape_domain_type_of(const shape_domain *d) { return d->type; }
const char *shape_domain_name(const shape_domain *d) { return d->type->name; }
const char *shape_domain_preset(const shape_domain *d) { return d->preset; }
uint64_t shape_domain_seed(const shape_domain *d) { return d->seed; }
size_t shape_domain_table_count(const shape_domain *d) { return d->ntables; }

const shape_domain_table *shape_domain_table_at(const shape_domain *d, size_t t)
{
    return t < d->ntables ? &d->tables[t] : NULL;
}

int shape_domain_table_find(const shape_domain *d, const char *name)
{
    for (size_t t = 0; name && t < d->ntables; t++)
        if (strcmp(d->tables[t].name, name) == 0) return (int)t;
    return -1;
}

int shape_domain_column_find(const shape_domain *d, size_t t, const char *name)
{
    const shape_domain_table *tab = shape_domain_table_at(d, t);
    for (size_t c = 0; tab && name && c < tab->ncols; c++)
        if (strcmp(tab->cols[c].name, name) == 0) return (int)c;
    return -1;
}

size_t shape_domain_identity(const shape_domain *d, shape_domain_field *out, size_t cap)
{
    return d->type->identity(d->impl, out, cap);
}

int shape_domain_cursor_open(shape_domain *d, size_t t, shape_domain_cursor **out, shape_err *err)
{
    *out = NULL;
    if (t >= d->ntables) return shape_err_set(err, SHAPE_ENOTFOUND, "%s has no table number %zu", d->type->name, t);
    shape_domain_cursor *c = calloc(1, sizeof *c);
    if (!c) return shape_err_set(err, SHAPE_ENOMEM, "%s: out of memory", d->type->name);
    int rc = d->type->cursor_open(d->impl, t, &c->impl, err);
    if (rc != SHAPE_OK) {
        free(c);
        return rc;
    }
    c->row = d->type->cursor_row;
    c->type = d->type;
    *out = c;
    return SHAPE_OK;
}

int shape_domain_cursor_row(shape_domain_cursor *c, uint64_t row, shape_gen_row *out, shape_err *err)
{
    return c->row(c->impl, row, out, err);
}

void shape_domain_cursor_free(shape_domain_cursor *c)
{
    if (!c) return;
    c->type->cursor_close(c->impl);
    free(c);
}

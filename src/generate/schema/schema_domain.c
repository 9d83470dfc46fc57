/* schema_domain.c — a loaded generation schema behind the domain interface
 * (shape/domain.h), so `shape emit PATH.json` runs on the same plan,
 * runtime, checkpoint and sinks as retail.
 *
 * Why: emit must not know where a domain comes from; this file is the one
 * adapter between a schema file and shape_domain_type.
 * How: the type keeps the document's bytes and the schema validated at its
 * own scale and seed (for the preset names and defaults); open() loads the
 * bytes again for the asked preset and seed, so every open domain is
 * independent and read-only (its datasets, read-only JSON, are taken from
 * the validated schema by reference rather than parsed again). The identity
 * holds the model's name, a hash of the document's bytes, the preset and the
 * seed: editing the schema makes a checkpoint of the old one refuse to
 * resume.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/atomic_file.h"
#include "shape/generate_schema.h"
#include "schema_internal.h"

typedef struct sc_type {
    shape_domain_type type; /* first: a type pointer is an sc_type pointer */
    char *text;
    size_t len;
    char *dir;
    sc_schema *validated;
    char fingerprint[17];
} sc_type;

typedef struct sc_open {
    sc_schema *s;
    char fingerprint[17];
} sc_open;

typedef struct sc_cursor {
    sc_ctx ctx;
    int table;
} sc_cursor;

static const char *sc_preset_name(const shape_domain_type *type, size_t i)
{
    const sc_type *st = (const sc_type *)type;
    return i < st->validated->npresets ? st->validated->presets[i] : NULL;
}

static int sc_open_fn(const shape_domain_type *type, const char *preset, uint64_t seed, void **impl, shape_err *err)
{
    const sc_type *st = (const sc_type *)type;
    *impl = NULL;
    sc_open *o = calloc(1, sizeof *o);
    if (!o) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    int rc = sc_schema_load(st->text, st->len, st->dir, preset, seed, 1, st->validated, &o->s, err);
    if (rc != SHAPE_OK) {
        free(o);
        return rc;
    }
    memcpy(o->fingerprint, st->fingerprint, sizeof o->fingerprint);
    *impl = o;
    return SHAPE_OK;
}

static void sc_close_fn(void *impl)
{
    sc_open *o = impl;
    if (!o) return;
    sc_schema_free(o->s);
    free(o);
}

static size_t sc_table_count(const void *impl) { return ((const sc_open *)impl)->s->ntables; }

static void sc_table_fn(const void *impl, size_t t, shape_domain_table *out)
{
    const sc_schema *s = ((const sc_open *)impl)->s;
    const sc_table *tab = &s->tables[t];
    out->name = tab->name;
    out->cols = tab->out;
    out->ncols = tab->ncols;
    out->event_time_col = tab->event_time_col;
    out->rows = tab->rows[s->preset];
}

static size_t sc_identity(const void *impl, shape_domain_field *out, size_t cap)
{
    const sc_open *o = impl;
    const shape_domain_field fields[] = {
        {"domain", o->s->name, 0},
        {"mode", "schema", 0},
        {"schema", o->fingerprint, 0},
        {"scale", o->s->presets[o->s->preset], 0},
        {"seed", NULL, (int64_t)o->s->seed},
    };
    size_t n = sizeof fields / sizeof fields[0];
    if (n > cap) n = cap;
    for (size_t i = 0; i < n; i++) out[i] = fields[i];
    return n;
}

static int sc_cursor_open(void *impl, size_t t, void **cursor, shape_err *err)
{
    sc_cursor *c = calloc(1, sizeof *c);
    if (!c) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    c->ctx.s = ((sc_open *)impl)->s;
    c->table = (int)t;
    *cursor = c;
    return SHAPE_OK;
}

static int sc_cursor_row(void *cursor, uint64_t row, shape_gen_row *out, shape_err *err)
{
    sc_cursor *c = cursor;
    return sc_eval_row(&c->ctx, c->table, row, out, err);
}

static void sc_cursor_close(void *cursor)
{
    sc_cursor *c = cursor;
    if (c) sc_ctx_release(&c->ctx);
    free(c);
}

int shape_schema_domain_parse(const char *text, size_t len, const char *dir, const shape_domain_type **out,
                              shape_err *err)
{
    *out = NULL;
    sc_type *st = calloc(1, sizeof *st);
    if (!st) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    st->text = malloc(len + 1);
    st->dir = strdup(dir ? dir : ".");
    if (!st->text || !st->dir) {
        free(st->text);
        free(st->dir);
        free(st);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    memcpy(st->text, text, len);
    st->text[len] = 0;
    st->len = len;
    int rc = sc_schema_load(st->text, len, st->dir, NULL, 0, 0, NULL, &st->validated, err);
    if (rc != SHAPE_OK) {
        free(st->text);
        free(st->dir);
        free(st);
        return rc;
    }
    snprintf(st->fingerprint, sizeof st->fingerprint, "%016llx", (unsigned long long)st->validated->fingerprint);
    shape_domain_type *t = &st->type;
    t->name = st->validated->name;
    t->default_preset = st->validated->presets[st->validated->default_preset];
    t->default_seed = st->validated->seed;
    t->data = st;
    t->preset_name = sc_preset_name;
    t->open = sc_open_fn;
    t->close = sc_close_fn;
    t->table_count = sc_table_count;
    t->table = sc_table_fn;
    t->identity = sc_identity;
    t->cursor_open = sc_cursor_open;
    t->cursor_row = sc_cursor_row;
    t->cursor_close = sc_cursor_close;
    *out = t;
    return SHAPE_OK;
}

int shape_schema_domain_load(const char *path, const shape_domain_type **out, shape_err *err)
{
    *out = NULL;
    char *buf;
    size_t len;
    int exists;
    SHAPE_RETURN_NOT_OK(shape_file_read_all(path, "schema", &buf, &len, &exists, err));
    if (!exists) return shape_err_set(err, SHAPE_EINVAL, "cannot read schema %s: %s", path, strerror(ENOENT));
    if (len >= SC_SCHEMA_MAX_BYTES) {
        free(buf);
        return shape_err_set(err, SHAPE_EINVAL, "schema %s is larger than 64 MB", path);
    }
    char dir[1024];
    const char *slash = strrchr(path, '/');
    if (slash && (size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = 0;
        if (!dir[0]) strcpy(dir, "/");
    } else
        strcpy(dir, ".");
    int rc = shape_schema_domain_parse(buf, len, dir, out, err);
    free(buf);
    return rc;
}

int shape_schema_domain_is(const shape_domain_type *type) { return type && type->preset_name == sc_preset_name; }

void shape_schema_domain_free(const shape_domain_type *type)
{
    if (!shape_schema_domain_is(type)) return;
    sc_type *st = (sc_type *)type->data;
    sc_schema_free(st->validated);
    free(st->text);
    free(st->dir);
    free(st);
}

/* metadata.c — message metadata of the emit runtime: keys and headers.
 *
 * Why: every message carries, besides its body, a key (the idempotency key
 * <table>/<seq>, or --key columns joined by '|' with the idempotency key
 * moved to header shape-key), headers (shape-table, shape-synthetic, the
 * user's --header name=value or name=@column) and an event-time timestamp;
 * all of it is checked against every table of the plan before anything is
 * opened, and rendered per event on the generator's hot path.
 * How: --header options are parsed once into header_specs; each table gets a
 * table_meta (its event table, the column index of every key and @column
 * header); an event is rendered into its batch's arena in one pass (body,
 * key, header values), with offsets that queue.c turns into pointers once
 * the arena stops moving.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shape/domain.h"
#include "runtime_internal.h"

static int is_reserved(const char *name)
{
    return strncasecmp(name, "shape-", 6) == 0 || strncasecmp(name, "shape_", 6) == 0;
}

void shape_emit_headers_free(header_spec *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(h[i].name);
        free(h[i].value);
        free(h[i].column);
    }
}

int shape_emit_headers_parse(const shape_emit_config *cfg, header_spec *out, shape_err *err)
{
    if (cfg->nheaders > MAX_HEADERS - 4)
        return shape_err_set(err, SHAPE_EINVAL, "at most %d --header options", MAX_HEADERS - 4);
    memset(out, 0, sizeof(header_spec) * cfg->nheaders);
    for (size_t i = 0; i < cfg->nheaders; i++) {
        const char *text = cfg->headers[i];
        const char *eq = strchr(text, '=');
        int rc = SHAPE_OK;
        if (!eq)
            rc = shape_err_set(err, SHAPE_EINVAL, "headers must use name=value or name=@column");
        else if (eq == text)
            rc = shape_err_set(err, SHAPE_EINVAL, "header names must be nonempty strings");
        else {
            out[i].name = strndup(text, (size_t)(eq - text));
            if (eq[1] == '@')
                out[i].column = strdup(eq + 2);
            else
                out[i].value = strdup(eq + 1);
            if (!out[i].name || (!out[i].column && !out[i].value))
                rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
            else if (is_reserved(out[i].name))
                rc = shape_err_set(err, SHAPE_EINVAL, "shape-* header/property names are reserved");
        }
        if (rc != SHAPE_OK) {
            shape_emit_headers_free(out, i + 1);
            return rc;
        }
    }
    return SHAPE_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Build every table's metadata; unknown columns are refused up front. */
int shape_emit_meta_build(const shape_emit_config *cfg, const header_spec *hdrs, table_meta *meta,
                      shape_err *err)
{
    const char *missing[SHAPE_GEN_MAX_COLUMNS + MAX_HEADERS];
    size_t nmissing = 0;
    if (cfg->nkey_columns > SHAPE_GEN_MAX_COLUMNS)
        return shape_err_set(err, SHAPE_EINVAL, "--key names at most %d columns", SHAPE_GEN_MAX_COLUMNS);
    for (size_t k = 0; k < cfg->plan->ntables; k++) {
        size_t id = cfg->plan->table_ids[k];
        const shape_domain *domain = cfg->plan->domain;
        const shape_domain_table *tab = shape_domain_table_at(domain, id);
        SHAPE_RETURN_NOT_OK(
            shape_event_table_init(&meta[k].et, tab->name, tab->cols, tab->ncols, tab->event_time_col, err));
        meta[k].name_len = strlen(meta[k].et.name);
        for (size_t j = 0; j < cfg->nkey_columns; j++) {
            meta[k].key_cols[j] = shape_domain_column_find(domain, id, cfg->key_columns[j]);
            if (meta[k].key_cols[j] < 0) missing[nmissing++] = cfg->key_columns[j];
        }
        for (size_t h = 0; h < cfg->nheaders; h++) {
            meta[k].header_cols[h] = hdrs[h].column ? shape_domain_column_find(domain, id, hdrs[h].column) : -1;
            if (hdrs[h].column && meta[k].header_cols[h] < 0) missing[nmissing++] = hdrs[h].column;
        }
        if (nmissing) {
            qsort(missing, nmissing, sizeof missing[0], cmp_str);
            char list[400] = "";
            size_t used = 0;
            for (size_t i = 0; i < nmissing && used < sizeof list - 80; i++) {
                if (i && strcmp(missing[i], missing[i - 1]) == 0) continue;
                used += (size_t)snprintf(list + used, sizeof list - used, "%s'%.60s'", used ? ", " : "",
                                         missing[i]);
            }
            return shape_err_set(err, SHAPE_EINVAL, "unknown metadata columns: [%s] (table '%s')", list,
                                 tab->name);
        }
    }
    return SHAPE_OK;
}

int shape_emit_check_metadata(const shape_emit_config *cfg, shape_err *err)
{
    header_spec hdrs[MAX_HEADERS];
    SHAPE_RETURN_NOT_OK(shape_emit_headers_parse(cfg, hdrs, err));
    table_meta *meta = calloc(cfg->plan->ntables ? cfg->plan->ntables : 1, sizeof *meta);
    int rc = meta ? shape_emit_meta_build(cfg, hdrs, meta, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    free(meta);
    shape_emit_headers_free(hdrs, cfg->nheaders);
    return rc;
}

static int arena_reserve(batch *b, size_t more)
{
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + more) cap *= 2;
    char *na = realloc(b->arena, cap);
    if (!na) return -1;
    b->arena = na;
    b->cap = cap;
    return 0;
}

/* Natural text of a value (keys, header values): no quotes; null → "". */
static char *put_text(char *p, const shape_gen_value *v)
{
    switch (v->kind) {
    case SHAPE_GEN_NULL: return p;
    case SHAPE_GEN_STRING: memcpy(p, v->v.s, v->len); return p + v->len;
    case SHAPE_GEN_TIMESTAMP_NS: {
        char *e = shape_json_timestamp(p, v->v.i, 9, 0);
        memmove(p, p + 1, (size_t)(e - p - 2));
        return e - 2;
    }
    default: return shape_json_gen_value(p, v);
    }
}

static size_t text_bound(const shape_gen_value *v) { return shape_event_value_bound(v); }

/* Render one event of table meta m into batch b at position i. */
int shape_emit_render_event(runtime *rt, batch *b, size_t i, const table_meta *m, uint64_t seq,
                        const shape_gen_row *row)
{
    const shape_emit_config *cfg = rt->cfg;
    size_t bound = (rt->bodies ? shape_event_bound(&m->et, row) : 0) + 2 * m->name_len + 48;
    for (size_t j = 0; j < cfg->nkey_columns; j++) bound += text_bound(&row->values[m->key_cols[j]]) + 1;
    for (size_t h = 0; h < cfg->nheaders; h++)
        if (m->header_cols[h] >= 0) bound += text_bound(&row->values[m->header_cols[h]]);
    if (arena_reserve(b, bound) != 0) return -1;
    char *base = b->arena, *p = base + b->len;
    b->body_off[i] = b->len;
    if (rt->bodies) p = shape_event_encode(&m->et, cfg->envelope, seq, row, p);
    size_t body_len = (size_t)(p - (base + b->body_off[i]));
    /* key: the idempotency key, or the key columns joined by '|' */
    b->key_off[i] = (size_t)(p - base);
    char *idem = p;
    /* = shape_event_key, with the table name's length known */
    memcpy(p, m->et.name, m->name_len);
    p[m->name_len] = '/';
    p = shape_json_u64(p + m->name_len + 1, seq);
    size_t idem_len = (size_t)(p - idem);
    char *key = idem;
    size_t key_len = idem_len;
    if (cfg->nkey_columns) {
        key = p;
        for (size_t j = 0; j < cfg->nkey_columns; j++) {
            if (j) *p++ = '|';
            p = put_text(p, &row->values[m->key_cols[j]]);
        }
        key_len = (size_t)(p - key);
    }
    shape_emit_message *msg = &b->msgs[i];
    memset(msg, 0, offsetof(shape_emit_message, reason)); /* not the 256-byte reason: send fills it */
    msg->reason[0] = 0;
    msg->value_len = body_len;
    msg->key_len = key_len;
    msg->partition = cfg->partition;
    msg->table = m->et.name;
    if (cfg->timestamp_event_time && m->et.event_time_col >= 0) {
        const shape_gen_value *v = &row->values[m->et.event_time_col];
        if (v->kind == SHAPE_GEN_TIMESTAMP_NS) {
            int64_t ms = v->v.i / 1000000;
            if (v->v.i % 1000000 < 0) ms--;
            msg->timestamp_ms = ms;
        }
    }
    /* headers: shape-table, [shape-synthetic], user headers, [shape-key] */
    shape_emit_header *hd = &b->hdrs[i * rt->nh];
    size_t *ho = &b->hval_off[i * rt->nh];
    size_t h = 0;
    hd[h] = (shape_emit_header){"shape-table", m->et.name, m->name_len};
    ho[h++] = SIZE_MAX;
    if (cfg->synthetic) {
        hd[h] = (shape_emit_header){"shape-synthetic", "true", 4};
        ho[h++] = SIZE_MAX;
    }
    for (size_t u = 0; u < cfg->nheaders; u++) {
        if (m->header_cols[u] >= 0) {
            char *v = p;
            p = put_text(p, &row->values[m->header_cols[u]]);
            hd[h] = (shape_emit_header){rt->hdrs[u].name, NULL, (size_t)(p - v)};
            ho[h++] = (size_t)(v - base);
        } else {
            hd[h] = (shape_emit_header){rt->hdrs[u].name, rt->hdrs[u].value, strlen(rt->hdrs[u].value)};
            ho[h++] = SIZE_MAX;
        }
    }
    if (cfg->nkey_columns) {
        hd[h] = (shape_emit_header){"shape-key", NULL, idem_len};
        ho[h++] = b->key_off[i];
        b->key_off[i] = (size_t)(key - base);
    }
    msg->header_count = h;
    b->len = (size_t)(p - base);
    return 0;
}

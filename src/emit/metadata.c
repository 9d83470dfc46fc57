/* metadata.c — message metadata of the emit runtime: keys and headers.
 *
 * Why: every message carries, besides its body, a key (the idempotency key
 * <table>/<seq>, or --key columns joined by '|' with the idempotency key
 * moved to header shape-key), headers (shape-table, shape-synthetic, the
 * user's --header name=value or name=@column) and an event-time timestamp;
 * all of it is checked against every table of the plan before anything is
 * opened (unknown columns, reserved names, an event-time timestamp for a
 * table without an event time), with one message for all.
 * How: --header options are parsed once into header_specs; each table gets a
 * table_meta (its event table, the column index of every key and @column
 * header), which the generator (queue.c) renders from per event.
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

/* --timestamp event_time takes each message's timestamp from its event
 * time: every table the run sends must have one (a timestamp column), as
 * the reference refuses a batch without it ("event_time timestamp needs a
 * timestamp column") — but here before anything is sent, naming the tables
 * without one and those with one, instead of failing at the first such
 * table mid-stream. A table the run does not reach (past --max-events in
 * table order, or without rows) does not count. */
static int check_event_time_tables(const shape_emit_config *cfg, shape_err *err)
{
    if (!cfg->timestamp_event_time) return SHAPE_OK;
    char without[300] = "", with[300] = "";
    size_t nwithout = 0, nwith = 0, lw = 0, lh = 0;
    int timeline = shape_domain_is_timeline(cfg->plan->domain); /* (tables interleave: every one counts) */
    for (size_t k = 0; k < cfg->plan->ntables; k++) {
        if (cfg->plan->rows[k] == 0) continue;
        if (!timeline && cfg->shard_count <= 1 && cfg->limit > 0 && cfg->plan->start[k] >= cfg->limit) continue;
        const shape_domain_table *tab = shape_domain_table_at(cfg->plan->domain, cfg->plan->table_ids[k]);
        int has = tab->event_time_col >= 0;
        char *list = has ? with : without;
        size_t *len = has ? &lh : &lw;
        if (*len < sizeof without - 70)
            *len += (size_t)snprintf(list + *len, sizeof without - *len, "%s%.60s", *len ? ", " : "", tab->name);
        if (has) nwith++;
        else nwithout++;
    }
    if (nwithout == 0) return SHAPE_OK;
    if (nwith == 0)
        return shape_err_set(err, SHAPE_EINVAL,
                             "--timestamp event_time needs tables with an event time (a timestamp column), and "
                             "none of the selected tables has one (%s); use --timestamp broker",
                             without);
    return shape_err_set(err, SHAPE_EINVAL,
                         "--timestamp event_time: table%s %s ha%s no event time (no timestamp column) to take the "
                         "message timestamp from; select tables that have one with --table (%s), or use "
                         "--timestamp broker",
                         nwithout == 1 ? "" : "s", without, nwithout == 1 ? "s" : "ve", with);
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
    return check_event_time_tables(cfg, err);
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

/* dead_letter.c — shape-dead-letter v1 records for events a destination
 * refused (--dead-letter URI).
 *
 * Why: a refused event (too large, rejected by the broker) must not stop a
 * long run when the user asked for a dead-letter destination, and must not
 * be lost either: it goes there as a self-describing record, and the batch
 * counts as delivered only once the record is.
 * How: per refused message, one JSON record {format, version, key, table,
 * seq, reason, destination, attempts, at, body (JSON-escaped text, or base64
 * with body_encoding when it is not well-formed UTF-8 by shape_utf8_valid:
 * overlongs, surrogates and code points past U+10FFFF are not), _shape_table, _shape_seq} is
 * written into one growing buffer, with headers shape-table and
 * shape-dead-letter-reason; the records are sent like any batch (with
 * retries), and reasons are counted for the report (the first
 * SHAPE_EMIT_DL_REASONS distinct ones, the rest as "other").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shape/timestamp.h"
#include "shape/utf8.h"
#include "runtime_internal.h"

static void count_reason(shape_emit_report *rep, const char *reason)
{
    const char *r = reason[0] ? reason : "refused";
    for (size_t i = 0; i < rep->ndl_reasons; i++)
        if (strcmp(rep->dl_reasons[i].reason, r) == 0) {
            rep->dl_reasons[i].count++;
            return;
        }
    if (rep->ndl_reasons < SHAPE_EMIT_DL_REASONS) {
        snprintf(rep->dl_reasons[rep->ndl_reasons].reason, sizeof rep->dl_reasons[0].reason, "%s", r);
        rep->dl_reasons[rep->ndl_reasons++].count = 1;
        return;
    }
    /* past the distinct reasons kept: "other" (the last slot) */
    snprintf(rep->dl_reasons[SHAPE_EMIT_DL_REASONS].reason, sizeof rep->dl_reasons[0].reason, "other");
    rep->dl_reasons[SHAPE_EMIT_DL_REASONS].count++;
    rep->dl_other = 1;
}

static char *put_lit(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* Write a shape-dead-letter v1 record for every refused message of g (as
 * refused by d) and deliver them to the dead-letter destination. */
int shape_emit_dead_letter(runtime *rt, group *g, shape_emit_destination *d, int attempts, shape_emit_report *rep,
                       shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    size_t need = 0, m = 0;
    /* per record: the key and the reason raw, then the record with every
     * text JSON-escaped (up to 6 bytes a byte) and the body as escaped text
     * or base64 */
    for (size_t i = 0; i < g->n; i++) {
        if (g->msgs[i].outcome != SHAPE_EMIT_REFUSED) continue;
        size_t table = strlen(group_message(g, i)->table); /* a batch may hold several tables */
        need += group_message(g, i)->value_len * 6 + 7 * (SHAPE_EMIT_REASON_MAX + table + 24) +
                6 * strlen(d->label) + 512;
    }
    if (need > rt->dl_cap) {
        char *nb = realloc(rt->dl_buf, need);
        if (!nb) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing dead letters");
        rt->dl_buf = nb;
        rt->dl_cap = need;
    }
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    char at[40];
    shape_format_iso8601_us((int64_t)wall.tv_sec * 1000000 + wall.tv_nsec / 1000, at, sizeof at);
    char *p = rt->dl_buf;
    for (size_t i = 0; i < g->n; i++) {
        const shape_emit_message *src = &g->msgs[i];          /* outcome and reason */
        const shape_emit_message *orig = group_message(g, i); /* the body as rendered */
        if (src->outcome != SHAPE_EMIT_REFUSED) continue;
        const char *table = orig->table;
        uint64_t seq = g->ri[i];
        const char *reason = src->reason[0] ? src->reason : "refused";
        count_reason(rep, reason);
        char *key = p;
        p = shape_event_key(p, table, seq);
        size_t key_len = (size_t)(p - key);
        char *why = p;
        p = put_lit(p, reason);
        size_t why_len = (size_t)(p - why);
        char *rec = p;
        p = put_lit(p, "{\"format\":\"shape-dead-letter\",\"version\":1,\"key\":");
        p = shape_json_string(p, key, key_len);
        p = put_lit(p, ",\"table\":");
        p = shape_json_string(p, table, strlen(table));
        p = put_lit(p, ",\"seq\":");
        p = shape_json_u64(p, seq);
        p = put_lit(p, ",\"reason\":");
        p = shape_json_string(p, reason, strlen(reason));
        p = put_lit(p, ",\"destination\":");
        p = shape_json_string(p, d->label, strlen(d->label));
        p = put_lit(p, ",\"attempts\":");
        p = shape_json_u64(p, (uint64_t)(attempts > 0 ? attempts : 1));
        p = put_lit(p, ",\"at\":");
        p = shape_json_string(p, at, strlen(at));
        p = put_lit(p, ",\"body\":");
        if (shape_utf8_valid(orig->value, orig->value_len)) {
            p = shape_json_string(p, orig->value, orig->value_len);
        } else {
            p = shape_json_base64(p, orig->value, orig->value_len);
            p = put_lit(p, ",\"body_encoding\":\"base64\"");
        }
        p = put_lit(p, ",\"_shape_table\":");
        p = shape_json_string(p, table, strlen(table));
        p = put_lit(p, ",\"_shape_seq\":");
        p = shape_json_u64(p, seq);
        *p++ = '}';
        shape_emit_message *dl = &rt->dl_msgs[m];
        memset(dl, 0, sizeof *dl);
        dl->key = key;
        dl->key_len = key_len;
        dl->value = rec;
        dl->value_len = (size_t)(p - rec);
        dl->partition = -1;
        dl->table = "dead_letter";
        rt->dl_hdrs[2 * m] = (shape_emit_header){"shape-table", table, strlen(table)};
        rt->dl_hdrs[2 * m + 1] = (shape_emit_header){"shape-dead-letter-reason", why, why_len};
        dl->headers = &rt->dl_hdrs[2 * m];
        dl->header_count = 2;
        m++;
    }
    rep->dead_lettered += m;
    int dl_attempts;
    SHAPE_RETURN_NOT_OK(shape_emit_send(rt, cfg->dead_letter, rt->dl_msgs, m, NULL, &dl_attempts, rep, err));
    for (size_t j = 0; j < m; j++)
        if (rt->dl_msgs[j].outcome == SHAPE_EMIT_REFUSED)
            return shape_err_set(err, SHAPE_EINVAL, "the dead-letter destination refused a record (%.*s: %s)",
                                 (int)rt->dl_msgs[j].key_len, (const char *)rt->dl_msgs[j].key,
                                 rt->dl_msgs[j].reason[0] ? rt->dl_msgs[j].reason : "refused");
    return SHAPE_OK;
}

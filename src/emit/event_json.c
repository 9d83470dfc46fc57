/* event_json.c — events as JSON text: the flat / CloudEvents layouts of
 * spec-core §3.3 over the value writers of core (shape/json_write.h).
 *
 * Why: every sink of `shape emit` writes these bytes, so they are written
 * once, here, fast (the hot path of `--sink null`: generation + encoding must
 * reach 1.5M events/s per core) and byte-identical to the reference's
 * json.dumps (compact separators, raw UTF-8, Python float repr).
 * How: events are written straight into a caller buffer sized by an upper
 * bound (no per-byte checks). Per table, the key fragments (`{"a":`,
 * `,"b":`, the `_shape_*` tail) are rendered once; values go through the
 * inline writers of shape/json_write.h (integers two digits per step,
 * strings a word at a time, floats by the fast path of the shortest
 * round-trip formatter), which the encoder compiles into its loop, and
 * `_shape_event_time` is copied from the text of its column rather than
 * rendered a second time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/event.h"

static inline __attribute__((always_inline)) char *json_gen_value(char *p, const shape_gen_value *v)
{
    switch (v->kind) {
    case SHAPE_GEN_INT64: return shape_json_i64(p, v->v.i);
    case SHAPE_GEN_FLOAT64: return shape_json_f64(p, v->v.f);
    case SHAPE_GEN_STRING: return shape_json_string(p, v->v.s, v->len);
    case SHAPE_GEN_TIMESTAMP_NS: return shape_json_timestamp(p, v->v.i, 9, 0);
    case SHAPE_GEN_BOOL:
        if (v->v.b) {
            memcpy(p, "true", 4);
            return p + 4;
        }
        memcpy(p, "false", 5);
        return p + 5;
    default: memcpy(p, "null", 4); return p + 4;
    }
}

char *shape_json_gen_value(char *p, const shape_gen_value *v) { return json_gen_value(p, v); }

static inline size_t value_bound(const shape_gen_value *v)
{
    if (v->kind == SHAPE_GEN_STRING) return (size_t)v->len * 6 + 2;
    return SHAPE_JSON_TS_MAX;
}

size_t shape_event_value_bound(const shape_gen_value *v) { return value_bound(v); }

/* ---- tables and events ---------------------------------------------------- */

int shape_envelope_parse(const char *name, shape_envelope *out, shape_err *err)
{
    if (name && strcmp(name, "flat") == 0) {
        *out = SHAPE_ENVELOPE_FLAT;
        return SHAPE_OK;
    }
    if (name && strcmp(name, "cloudevents") == 0) {
        *out = SHAPE_ENVELOPE_CLOUDEVENTS;
        return SHAPE_OK;
    }
    return shape_err_set(err, SHAPE_EINVAL, "unknown envelope '%.40s'; choose from flat, cloudevents",
                         name ? name : "");
}

static int name_ok(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\') return 0;
    return 1;
}

int shape_event_table_init(shape_event_table *t, const char *name, const shape_gen_column *cols,
                           size_t ncols, int event_time_col, shape_err *err)
{
    static const char *const reserved[] = {"_shape_table", "_shape_seq", "_shape_event_time"};
    memset(t, 0, sizeof *t);
    if (ncols > SHAPE_GEN_MAX_COLUMNS || !name_ok(name) || strlen(name) > SHAPE_EVENT_KEY_FRAG - 8)
        return shape_err_set(err, SHAPE_EINVAL, "table '%.60s' cannot be rendered as events", name);
    t->name = name;
    t->cols = cols;
    t->ncols = ncols;
    t->event_time_col = event_time_col;
    for (size_t c = 0; c < ncols; c++) {
        for (size_t r = 0; r < 3; r++)
            if (strcmp(cols[c].name, reserved[r]) == 0)
                return shape_err_set(err, SHAPE_EINVAL,
                                     "table '%s' has a column named '%s', which is reserved", name,
                                     reserved[r]);
        if (!name_ok(cols[c].name) || strlen(cols[c].name) > SHAPE_EVENT_KEY_FRAG - 8)
            return shape_err_set(err, SHAPE_EINVAL, "table '%s' has a column name that cannot be rendered",
                                 name);
        t->key_len[c] = (uint8_t)snprintf(t->keys[c], sizeof t->keys[c], "%s\"%s\":", c ? "," : "{",
                                          cols[c].name);
    }
    t->tail_len = (size_t)snprintf(t->tail, sizeof t->tail, "%s\"_shape_table\":\"%s\",\"_shape_seq\":",
                                   ncols ? "," : "{", name);
    return SHAPE_OK;
}

size_t shape_event_bound(const shape_event_table *t, const shape_gen_row *row)
{
    /* (the name's share, 4 strlen(name), by its cap from shape_event_table_init:
     * no strlen per event) */
    size_t n = 3 * SHAPE_EVENT_KEY_FRAG + 4 * SHAPE_EVENT_KEY_FRAG + 256 + t->tail_len;
    for (size_t c = 0; c < t->ncols; c++)
        n += t->key_len[c] + value_bound(&row->values[c]);
    if (t->event_time_col >= 0) n += SHAPE_JSON_TS_MAX + 24;
    return n;
}

char *shape_event_key(char *p, const char *table, uint64_t seq)
{
    size_t n = strlen(table);
    memcpy(p, table, n);
    p[n] = '/';
    return shape_json_u64(p + n + 1, seq);
}

static char *put_lit(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *encode_flat(const shape_event_table *t, uint64_t seq, const shape_gen_row *row, char *p)
{
    /* `_shape_event_time` repeats a column's value: its text is copied from
     * where the column was rendered instead of being rendered twice. */
    const char *time_text = NULL;
    size_t time_len = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        /* Short key fragments are copied as a fixed 32 bytes (two vector
         * moves, no call); the bytes past the fragment are overwritten next,
         * and the bound's 3 SHAPE_EVENT_KEY_FRAG slack covers the last. */
        if (t->key_len[c] <= 32)
            memcpy(p, t->keys[c], 32);
        else
            memcpy(p, t->keys[c], t->key_len[c]);
        char *value = p + t->key_len[c];
        p = json_gen_value(value, &row->values[c]);
        if ((int)c == t->event_time_col) {
            time_text = value;
            time_len = (size_t)(p - value);
        }
    }
    memcpy(p, t->tail, t->tail_len);
    p = shape_json_u64(p + t->tail_len, seq);
    if (t->event_time_col >= 0) {
        p = put_lit(p, ",\"_shape_event_time\":");
        if (time_text) {
            memcpy(p, time_text, time_len);
            p += time_len;
        } else {
            p = json_gen_value(p, &row->values[t->event_time_col]);
        }
    }
    *p++ = '}';
    return p;
}

char *shape_event_encode(const shape_event_table *t, shape_envelope env, uint64_t seq,
                         const shape_gen_row *row, char *p)
{
    if (env == SHAPE_ENVELOPE_FLAT) return encode_flat(t, seq, row, p);
    p = put_lit(p, "{\"specversion\":\"1.0\",\"id\":\"");
    p = shape_event_key(p, t->name, seq);
    p = put_lit(p, "\",\"source\":\"shape://shape\",\"type\":\"shape.");
    p = put_lit(p, t->name);
    p = put_lit(p, ".row\"");
    if (t->event_time_col >= 0 && row->values[t->event_time_col].kind != SHAPE_GEN_NULL) {
        p = put_lit(p, ",\"time\":");
        p = json_gen_value(p, &row->values[t->event_time_col]);
    }
    p = put_lit(p, ",\"datacontenttype\":\"application/json\",\"shapetable\":\"");
    p = put_lit(p, t->name);
    p = put_lit(p, "\",\"shapeseq\":");
    p = shape_json_u64(p, seq);
    p = put_lit(p, ",\"data\":");
    p = encode_flat(t, seq, row, p);
    *p++ = '}';
    return p;
}

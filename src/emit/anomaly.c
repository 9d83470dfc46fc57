/* anomaly.c — anomalous rows (--anomaly-fraction F, --anomaly-mutator NAME;
 * spec-core §3.4): a chosen row has one value changed by a mutator before it
 * is encoded, keeping the row count.
 *
 * Why: a pipeline's validation (range checks, type checks, size limits,
 * event-time sanity) is only tested by data that breaks it, in known places.
 * How: a row is chosen with probability F by a draw keyed by (seed, table,
 * seq); a second draw picks one of the run's mutators, a third the column
 * among those the mutator can change. Mutators:
 *   value-anomaly  a non-key number becomes an outlier (×1000; a 0 becomes
 *                  10⁶) or a nullable non-key value becomes null;
 *   wrong-type     a non-key number is sent as a JSON string ("133.8");
 *                  JSON only: it changes a registry format's schema;
 *   long-string    a non-key string becomes ~4 KB (its text repeated);
 *   time-skew      the event time moves 100 years into the future or past.
 * Key columns (named `id` or `*_id`) are never changed, so relations hold.
 * A chosen row whose table has no column the mutator can change is counted
 * as selected but not affected. Copies of a row (duplicates) carry the same
 * change, since it is a function of the row.
 */
#include <stdio.h>
#include <string.h>

#include "runtime_internal.h"

enum { DRAW_MUTATOR = 22, DRAW_COLUMN = 23, DRAW_CHANGE = 24 }; /* (DRAW_ANOMALY: runtime_internal.h) */
enum { M_VALUE, M_WRONG_TYPE, M_LONG_STRING, M_TIME_SKEW, M_COUNT };

static const char *const mutator_names[M_COUNT] = {"value-anomaly", "wrong-type", "long-string", "time-skew"};
static const char *const change_names[] = {"outlier", "null", "string", "long", "future", "past"};

const char *shape_emit_mutator_name(int id) { return id >= 0 && id < M_COUNT ? mutator_names[id] : "?"; }
const char *shape_emit_change_name(int id) { return id >= 0 && id < 6 ? change_names[id] : "?"; }

int shape_emit_mutator_check(const char *name, int registry_format, shape_err *err)
{
    for (int i = 0; i < M_COUNT; i++)
        if (strcmp(name, mutator_names[i]) == 0) {
            if (i == M_WRONG_TYPE && registry_format)
                return shape_err_set(err, SHAPE_EINVAL,
                                     "--anomaly-mutator wrong-type changes the schema: JSON only (--event-format json)");
            return SHAPE_OK;
        }
    return shape_err_set(err, SHAPE_EINVAL,
                         "unknown anomaly mutator '%.40s'; available: value-anomaly, wrong-type, long-string, time-skew",
                         name);
}

static int is_key(const char *name)
{
    size_t n = strlen(name);
    return strcmp(name, "id") == 0 || (n > 3 && strcmp(name + n - 3, "_id") == 0);
}

static int eligible(int mut, const table_meta *m, size_t c, const shape_gen_value *v)
{
    const shape_gen_column *col = &m->et.cols[c];
    if (mut == M_TIME_SKEW) return (int)c == m->et.event_time_col && v->kind == SHAPE_GEN_TIMESTAMP_NS;
    if (is_key(col->name)) return 0;
    int number = v->kind == SHAPE_GEN_INT64 || v->kind == SHAPE_GEN_FLOAT64;
    switch (mut) {
    case M_VALUE: return number || (col->nullable && v->kind != SHAPE_GEN_NULL);
    case M_WRONG_TYPE: return number;
    case M_LONG_STRING: return v->kind == SHAPE_GEN_STRING;
    default: return 0;
    }
}

/* Change value v of column c by mutator mut; the change's id. */
static int mutate(fault_state *fs, int mut, const shape_gen_column *col, shape_gen_value *v, double u)
{
    switch (mut) {
    case M_VALUE:
        if (col->nullable && (u < 0.5 || (v->kind != SHAPE_GEN_INT64 && v->kind != SHAPE_GEN_FLOAT64))) {
            v->kind = SHAPE_GEN_NULL;
            return 1;
        }
        if (v->kind == SHAPE_GEN_FLOAT64) v->v.f = v->v.f == 0 ? 1e6 : v->v.f * 1000;
        else v->v.i = v->v.i > INT64_MAX / 1000 || v->v.i < INT64_MIN / 1000 ? INT64_MAX : (v->v.i ? v->v.i * 1000 : 1000000);
        return 0;
    case M_WRONG_TYPE: {
        char *e = shape_json_gen_value(fs->scratch, v);
        v->kind = SHAPE_GEN_STRING;
        v->v.s = fs->scratch;
        v->len = (uint32_t)(e - fs->scratch);
        return 2;
    }
    case M_LONG_STRING: {
        const char *src = v->len ? v->v.s : "x";
        size_t n = v->len ? v->len : 1, used = 0;
        while (used + n <= sizeof fs->scratch) {
            memmove(fs->scratch + used, src, n); /* src may be the scratch itself after the first copy */
            if (used == 0) src = fs->scratch;
            used += n;
        }
        v->v.s = fs->scratch;
        v->len = (uint32_t)used;
        return 3;
    }
    default: { /* M_TIME_SKEW: ±100 years of 365.25 days */
        const int64_t century = (int64_t)36525 * 86400 * 1000000000LL;
        int future = u < 0.5;
        v->v.i += future ? century : -century;
        return future ? 4 : 5;
    }
    }
}

/* A row drawn for an anomaly (the draw is shape_emit_anomaly_apply's, inline
 * in runtime_internal.h): its mutator, column and change. */
uint32_t shape_emit_anomaly_chosen(runtime *rt, fault_state *fs, size_t k, uint64_t seq, shape_gen_row *row)
{
    const table_meta *m = &rt->meta[k];
    const uint64_t *key = m->draw_key;
    int mut = rt->mutators[(size_t)(shape_emit_draw_keyed(key[DRAW_MUTATOR], seq) * (double)rt->nmutators)];
    size_t cand[SHAPE_GEN_MAX_COLUMNS], n = 0;
    for (size_t c = 0; c < m->et.ncols; c++)
        if (eligible(mut, m, c, &row->values[c])) cand[n++] = c;
    if (n == 0) return ANOMALY_SELECTED | ((uint32_t)mut << 16);
    size_t c = cand[(size_t)(shape_emit_draw_keyed(key[DRAW_COLUMN], seq) * (double)n)];
    int change = mutate(fs, mut, &m->et.cols[c], &row->values[c], shape_emit_draw_keyed(key[DRAW_CHANGE], seq));
    return ANOMALY_SELECTED | ANOMALY_AFFECTED | ((uint32_t)mut << 16) | ((uint32_t)change << 8) | (uint32_t)c;
}

int shape_emit_mutators_resolve(runtime *rt, shape_err *err)
{
    const shape_emit_config *cfg = rt->cfg;
    rt->nmutators = 0;
    for (size_t i = 0; i < cfg->nmutators && rt->nmutators < MAX_MUTATORS; i++) {
        int id = -1;
        for (int j = 0; j < M_COUNT; j++)
            if (strcmp(cfg->mutators[i], mutator_names[j]) == 0) id = j;
        if (id < 0) return shape_emit_mutator_check(cfg->mutators[i], 0, err);
        rt->mutators[rt->nmutators++] = id;
    }
    if (rt->nmutators == 0) rt->mutators[rt->nmutators++] = M_VALUE;
    return SHAPE_OK;
}

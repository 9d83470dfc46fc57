/* schema_load.c — read a generation schema (reference/generation-schema.md)
 * into the structs of schema_internal.h, validating it whole.
 *
 * Why: `shape emit PATH.json` must refuse a bad schema before anything is
 * sent, with one line naming the table, the column and what to change; and
 * everything the rows need (alias tables, allocations of children to
 * parents, compiled formulas, datasets) is built once here, so generating a
 * row is pure arithmetic over read-only data.
 * How: five passes. (1) the document's keys, model and generation; (2) each
 * table's columns and their strategy names, collecting foreign-key and
 * relationship edges; (3) Kahn's algorithm orders the tables (the
 * alphabetically smallest ready one first; a cycle is an error); (4) each
 * table's columns are put in the original's group order (keys, foreign keys,
 * independent, dependent, computed) and every generator is read with its
 * references resolved against that order ("earlier" = before in it);
 * (5) row counts of the chosen preset, allocations for foreign keys whose
 * children are counted, and a depth-first search over cross-table reads.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "shape/atomic_file.h"
#include "shape/generate_schema.h"
#include "shape/timestamp.h"
#include "schema_internal.h"

/* ---- errors ------------------------------------------------------------------ */

typedef struct ld {
    sc_schema *s;
    shape_err *err;
    const char *table; /* for messages */
    const char *column;
    json_t *tables_json[SC_MAX_TABLES]; /* by stream order */
    const sc_schema *shared;            /* datasets to take by reference, or NULL */
} ld;

static int fail(ld *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(ld *L, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->table && L->column)
        return shape_err_set(L->err, SHAPE_EINVAL, "schema '%.60s': table '%.60s', column '%.60s': %s", L->s->name,
                             L->table, L->column, msg);
    if (L->table)
        return shape_err_set(L->err, SHAPE_EINVAL, "schema '%.60s': table '%.60s': %s", L->s->name, L->table, msg);
    return shape_err_set(L->err, SHAPE_EINVAL, "schema '%.60s': %s", L->s->name, msg);
}

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        int rc_ = (x);                                                                                                 \
        if (rc_ != SHAPE_OK) return rc_;                                                                               \
    } while (0)

static char *dupstr(const char *s)
{
    char *d = strdup(s ? s : "");
    return d;
}

static int is_extension_key(const char *k) { return strncmp(k, "x-", 2) == 0 || strcmp(k, "$comment") == 0; }

/* Every key of obj must be in allowed (NULL-terminated). */
static int check_keys(ld *L, json_t *obj, const char *const *allowed, const char *what)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        (void)v;
        if (is_extension_key(k)) continue;
        int ok = 0;
        for (size_t i = 0; allowed[i]; i++)
            if (strcmp(allowed[i], k) == 0) ok = 1;
        if (!ok) {
            char list[240] = "";
            size_t used = 0;
            for (size_t i = 0; allowed[i] && used < sizeof list - 1; i++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", allowed[i]);
            return fail(L, "unknown %s '%.60s'; expected one of %s", what, k, list);
        }
    }
    return SHAPE_OK;
}

static int get_number(ld *L, json_t *obj, const char *key, double def, double *out)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    *out = def; /* set on every path, the refusal's too (an optimizing build cannot tell fail() refuses) */
    if (!v || json_is_null(v)) return SHAPE_OK;
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return fail(L, "'%s' must be a finite number", key);
    *out = json_number_value(v);
    return SHAPE_OK;
}

/* The first of several alias keys that is present. */
static int get_number_any(ld *L, json_t *obj, const char *const *keys, double def, double *out)
{
    for (size_t i = 0; keys[i]; i++)
        if (obj && json_object_get(obj, keys[i])) return get_number(L, obj, keys[i], def, out);
    *out = def;
    return SHAPE_OK;
}

static const char *get_string(json_t *obj, const char *key)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* ---- dates --------------------------------------------------------------------- */

/* ISO date or timestamp → ns; *date_only when there is no time part. */
static int parse_when(const char *text, int64_t *ns, int *date_only)
{
    if (!text) return -1;
    size_t len = strlen(text);
    int64_t us;
    if (shape_parse_iso8601(text, len, &us) != 0) return -1;
    /* nanoseconds in an int64: 1678-01-01 .. 2261-12-31 */
    if (us < -9200000000000000LL || us > 9200000000000000LL) return -1;
    *ns = us * 1000;
    *date_only = len == 10;
    return 0;
}

static int read_range(ld *L, json_t *range, int64_t *start, int64_t *end)
{
    const char *a = get_string(range, "start"), *b = get_string(range, "end");
    int da, db;
    if (!a || !b || parse_when(a, start, &da) != 0 || parse_when(b, end, &db) != 0)
        return fail(L, "date range needs ISO 'start' and 'end' between 1678 and 2261 (e.g. \"2024-01-01\")");
    if (db) *end += SHAPE_GEN_NS_PER_DAY; /* a date-only end includes its whole day */
    if (*end <= *start) return fail(L, "date range end must come after its start");
    return SHAPE_OK;
}

/* ---- types and strategies ------------------------------------------------------- */

static int type_kind(const char *t)
{
    static const struct {
        const char *name;
        int kind;
    } map[] = {
        {"integer", SHAPE_GEN_INT64},   {"int", SHAPE_GEN_INT64},       {"bigint", SHAPE_GEN_INT64},
        {"smallint", SHAPE_GEN_INT64},  {"long", SHAPE_GEN_INT64},      {"float", SHAPE_GEN_FLOAT64},
        {"double", SHAPE_GEN_FLOAT64},  {"decimal", SHAPE_GEN_FLOAT64}, {"numeric", SHAPE_GEN_FLOAT64},
        {"real", SHAPE_GEN_FLOAT64},    {"string", SHAPE_GEN_STRING},   {"text", SHAPE_GEN_STRING},
        {"varchar", SHAPE_GEN_STRING},  {"char", SHAPE_GEN_STRING},     {"uuid", SHAPE_GEN_STRING},
        {"boolean", SHAPE_GEN_BOOL},    {"bool", SHAPE_GEN_BOOL},       {"date", SHAPE_GEN_TIMESTAMP_NS},
        {"timestamp", SHAPE_GEN_TIMESTAMP_NS}, {"datetime", SHAPE_GEN_TIMESTAMP_NS},
    };
    for (size_t i = 0; t && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i].name, t) == 0) return map[i].kind;
    return -1;
}

const char *shape_schema_type_name(int k)
{
    switch (k) {
    case SHAPE_GEN_INT64: return "integer";
    case SHAPE_GEN_FLOAT64: return "float";
    case SHAPE_GEN_STRING: return "string";
    case SHAPE_GEN_TIMESTAMP_NS: return "timestamp";
    case SHAPE_GEN_BOOL: return "boolean";
    default: return "null";
    }
}

static const struct strategy_info {
    const char *name;
    int id;
    int group; /* 1 keys (when pk), 2 fk, 3 independent, 4 dependent, 5 computed */
    const char *keys[24];
} STRATEGIES[] = {
    {"sequence", SC_SEQUENCE, 3, {"start", "step", NULL}},
    {"uuid", SC_UUID, 3, {NULL}},
    {"constant", SC_CONSTANT, 3, {"value", NULL}},
    {"choice", SC_CHOICE, 3, {"values", "weights", NULL}},
    {"weighted_enum", SC_WEIGHTED_ENUM, 3, {"values", NULL}},
    {"lifecycle", SC_LIFECYCLE, 3, {"phases", "values", NULL}},
    {"pattern", SC_PATTERN, 3, {"format", NULL}},
    {"distribution", SC_DISTRIBUTION, 3,
     {"distribution", "params", "min", "max", "mean", "mu", "std_dev", "sigma", "std", "low", "high", "alpha", "a", "xm",
      "p", "probability", "lam", "lambda", "scale", "rate", "mode", NULL}},
    {"temporal", SC_TEMPORAL, 3,
     {"range_ref", "date_range", "range", "start", "end", "pattern", "profiles", "granularity", "month_weights",
      "day_of_week_weights", "unit", NULL}},
    {"foreign_key", SC_FOREIGN_KEY, 2,
     {"ref", "distribution", "params", "alpha", "max_per_parent", "constrained_by", "fan_out", "sample_rate", "filter", NULL}},
    {"composite_foreign_key", SC_FOREIGN_KEY, 2,
     {"ref", "distribution", "params", "alpha", "max_per_parent", "constrained_by", "fan_out", "sample_rate", "filter", NULL}},
    {"composite_fk_field", SC_COMPOSITE_FK_FIELD, 4, {"source", "field", NULL}},
    {"empirical", SC_EMPIRICAL, 3, {"quantiles", "interpolation", "min", "max", NULL}},
    {"conditional_table", SC_CONDITIONAL_TABLE, 4, {"source_column", "table", "default", NULL}},
    {"scd2", SC_SCD2, 4, {"role", "business_key", "min_gap_days", "range_ref", "date_range", "range", "start", "end", NULL}},
    {"lookup", SC_LOOKUP, 4, {"source_table", "source_column", "via", "key", NULL}},
    {"derived", SC_DERIVED, 4, {"source", "via", "rule", "operation", "params", "days", NULL}},
    {"correlated", SC_CORRELATED, 4, {"source_column", "rule", "operation", "params", NULL}},
    {"formula", SC_FORMULA, 4, {"expression", NULL}},
    {"conditional", SC_CONDITIONAL, 4, {"condition", "true_generator", "false_generator", NULL}},
    {"first_per_parent", SC_FIRST_PER_PARENT, 4, {"parent_column", "default", NULL}},
    {"computed", SC_COMPUTED, 5, {"rule", "child_table", "child_column", NULL}},
    {"self_referencing", SC_SELF_REFERENCING, 3, {"pk_column", "levels", "max_depth", "root_count", NULL}},
    {"self_ref_field", SC_SELF_REF_FIELD, 4, {"field", NULL}},
    {"reference_data", SC_REFERENCE_DATA, 3, {"dataset", "field", NULL}},
    {"record_sample", SC_RECORD_SAMPLE, 3, {"dataset", "field", "unique", NULL}},
    {"record_field", SC_RECORD_FIELD, 4, {"dataset", "field", NULL}},
    {"native", SC_NATIVE, 3, {"provider", "domains", "range", "width", "args", NULL}},
    {"faker", SC_NATIVE, 3, {"provider", "domains", "range", "width", "args", NULL}},
    /* schema_strat.c */
    {"hierarchy", SC_HIERARCHY, 3, {"dataset", "field", "levels", "weighting", "top_weights", NULL}},
    {"hierarchy_field", SC_HIERARCHY_FIELD, 4, {"dataset", "field", NULL}},
    {"bootstrap", SC_BOOTSTRAP, 3, {"dataset", "field", "jitter", NULL}},
    {"address", SC_ADDRESS, 3, {"field", "scope", "weights", "exclude", "reference", "group", "mode", NULL}},
};

static const struct strategy_info *strategy_by_name(const char *name)
{
    for (size_t i = 0; name && i < sizeof STRATEGIES / sizeof STRATEGIES[0]; i++)
        if (strcmp(STRATEGIES[i].name, name) == 0) return &STRATEGIES[i];
    return NULL;
}

static const struct strategy_info *strategy_by_id(int id)
{
    for (size_t i = 0; i < sizeof STRATEGIES / sizeof STRATEGIES[0]; i++)
        if (STRATEGIES[i].id == id) return &STRATEGIES[i];
    return NULL;
}

/* ---- pass 1 and 2: document, tables, columns ------------------------------------ */

typedef struct raw_table {
    const char *name;
    json_t *json;
    int deps[SC_MAX_TABLES];
    int ndeps;
} raw_table;

static int find_raw(raw_table *raw, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(raw[i].name, name) == 0) return (int)i;
    return -1;
}

static void add_dep(raw_table *t, int d)
{
    for (int i = 0; i < t->ndeps; i++)
        if (t->deps[i] == d) return;
    if (t->ndeps < SC_MAX_TABLES) t->deps[t->ndeps++] = d;
}

/* "t.col" → the table part (into buf) and the column part. */
static int split_ref(const char *ref, char *tbuf, size_t cap, const char **col)
{
    const char *dot = ref ? strchr(ref, '.') : NULL;
    if (!dot || dot == ref || !dot[1] || (size_t)(dot - ref) >= cap) return -1;
    memcpy(tbuf, ref, (size_t)(dot - ref));
    tbuf[dot - ref] = 0;
    *col = dot + 1;
    return 0;
}

static int find_table(const sc_schema *s, const char *name)
{
    for (size_t i = 0; name && i < s->ntables; i++)
        if (strcmp(s->tables[i].name, name) == 0) return (int)i;
    return -1;
}

static int find_col(const sc_table *t, const char *name)
{
    for (size_t i = 0; name && i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0) return (int)i;
    return -1;
}

/* ---- datasets -------------------------------------------------------------------- */

/* The dataset named `name` that s holds, or NULL. */
static sc_dataset *find_dataset(const sc_schema *s, const char *name)
{
    for (size_t i = 0; s && i < s->ndatasets; i++)
        if (strcmp(s->datasets[i].name, name) == 0) return &s->datasets[i];
    return NULL;
}

static int load_dataset(ld *L, const char *name, sc_dataset **out)
{
    sc_schema *s = L->s;
    if ((*out = find_dataset(s, name))) return SHAPE_OK;
    if (strchr(name, '/') || strchr(name, '\\') || name[0] == '.' || !name[0])
        return fail(L, "dataset '%.60s' must be a plain name (it is read from NAME.json)", name);
    const char *dirs[3] = {s->dir, getenv("SHAPE_REFERENCE_PATH"), NULL};
    const sc_dataset *held = find_dataset(L->shared, name);
    json_t *doc = held ? json_incref(held->json) : NULL;
    for (size_t i = 0; !doc && i < 2; i++) {
        if (!dirs[i] || !dirs[i][0]) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.json", dirs[i], name);
        char *text;
        size_t len;
        int exists;
        shape_err e;
        if (shape_file_read_all(path, "dataset", &text, &len, &exists, &e) != SHAPE_OK || !exists) continue;
        doc = json_loadb(text, len, 0, NULL); /* (jansson's own file reader takes a byte at a time) */
        free(text);
    }
    if (!doc) return fail(L, "dataset '%.60s' not found: put %.60s.json beside the schema or in SHAPE_REFERENCE_PATH", name, name);
    if (!json_is_array(doc) || json_array_size(doc) == 0) {
        json_decref(doc);
        return fail(L, "dataset '%.60s' must be a non-empty JSON list of strings or objects", name);
    }
    sc_dataset *grown = realloc(s->datasets, (s->ndatasets + 1) * sizeof *grown);
    if (!grown) {
        json_decref(doc);
        return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    }
    s->datasets = grown;
    sc_dataset *d = &s->datasets[s->ndatasets++];
    d->name = dupstr(name);
    d->n = json_array_size(doc);
    d->json = doc;
    /* datasets is reallocated: re-point columns that hold one */
    for (size_t t = 0; t < s->ntables; t++)
        for (size_t c = 0; c < s->tables[t].ncols; c++) {
            sc_column *col = &s->tables[t].cols[c];
            if (col->dataset) {
                for (size_t i = 0; i < s->ndatasets - 1; i++)
                    if (col->dataset_index == (int)i) col->dataset = &s->datasets[i];
            }
        }
    *out = d;
    return SHAPE_OK;
}

/* ---- the pieces of pass 4 --------------------------------------------------------- */

static int build_alias(ld *L, sc_column *c, const double *w, size_t n)
{
    if (n == 0) return fail(L, "needs at least one value");
    if (n > SHAPE_GEN_ALIAS_MAX) return fail(L, "has %zu values; at most %d", n, SHAPE_GEN_ALIAS_MAX);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(w[i] >= 0) || !isfinite(w[i])) return fail(L, "weight of '%.40s' is negative or not a number; use a weight >= 0", c->labels[i]);
        sum += w[i];
    }
    if (!(sum > 0)) return fail(L, "weights sum to 0; give at least one value a positive weight");
    shape_err e;
    if (shape_gen_alias_init(&c->alias, w, n, &e) != SHAPE_OK) return fail(L, "%s", e.message);
    return SHAPE_OK;
}

/* Labels from a JSON value: numbers as numbers (natural float/int), else text. */
static int set_labels(ld *L, sc_column *c, json_t **vals, size_t n)
{
    c->nlabels = n;
    c->labels = calloc(n ? n : 1, sizeof *c->labels);
    c->label_num = calloc(n ? n : 1, sizeof *c->label_num);
    c->label_len = calloc(n ? n : 1, sizeof *c->label_len);
    if (!c->labels || !c->label_num || !c->label_len) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    int all_num = 1, all_int = 1, all_bool = 1;
    for (size_t i = 0; i < n; i++) {
        json_t *v = vals[i];
        char buf[64];
        if (json_is_string(v)) {
            c->labels[i] = dupstr(json_string_value(v));
            char *end;
            double d = strtod(c->labels[i], &end);
            if (end == c->labels[i] || *end) all_num = 0;
            else c->label_num[i] = d, all_int = all_int && d == sc_floor(d);
            all_bool = 0;
        } else if (json_is_number(v)) {
            snprintf(buf, sizeof buf, "%.17g", json_number_value(v));
            c->labels[i] = dupstr(buf);
            c->label_num[i] = json_number_value(v);
            all_int = all_int && json_is_integer(v);
            all_bool = 0;
        } else if (json_is_boolean(v)) {
            c->labels[i] = dupstr(json_is_true(v) ? "true" : "false");
            c->label_num[i] = json_is_true(v);
            all_num = 0;
        } else
            return fail(L, "values must be strings, numbers or booleans");
        if (!c->labels[i]) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
        c->label_len[i] = strlen(c->labels[i]);
    }
    if (all_bool && n) c->natural = SHAPE_GEN_BOOL;
    else if (all_num && n) c->natural = all_int ? SHAPE_GEN_INT64 : SHAPE_GEN_FLOAT64;
    else c->natural = SHAPE_GEN_STRING;
    return SHAPE_OK;
}

static int parse_enum(ld *L, sc_column *c, json_t *g)
{
    json_t *values = json_object_get(g, c->strategy == SC_LIFECYCLE && json_object_get(g, "phases") ? "phases" : "values");
    if (c->strategy == SC_CHOICE) {
        if (!json_is_array(values) || json_array_size(values) == 0) return fail(L, "'values' must be a non-empty list");
        size_t n = json_array_size(values);
        if (n > SHAPE_GEN_ALIAS_MAX) return fail(L, "has %zu values; at most %d", n, SHAPE_GEN_ALIAS_MAX);
        json_t *vals[SHAPE_GEN_ALIAS_MAX];
        double w[SHAPE_GEN_ALIAS_MAX];
        json_t *weights = json_object_get(g, "weights");
        if (weights && (!json_is_array(weights) || json_array_size(weights) != n))
            return fail(L, "'weights' must be a list as long as 'values'");
        for (size_t i = 0; i < n; i++) {
            vals[i] = json_array_get(values, i);
            w[i] = 1;
            if (weights) {
                json_t *wv = json_array_get(weights, i);
                if (!json_is_number(wv)) return fail(L, "'weights' must hold numbers");
                w[i] = json_number_value(wv);
            }
        }
        TRY(set_labels(L, c, vals, n));
        return build_alias(L, c, w, n);
    }
    if (!json_is_object(values) || json_object_size(values) == 0)
        return fail(L, "'%s' must be a non-empty object {label: weight}", c->strategy == SC_LIFECYCLE ? "phases" : "values");
    size_t n = json_object_size(values);
    if (n > SHAPE_GEN_ALIAS_MAX) return fail(L, "has %zu values; at most %d", n, SHAPE_GEN_ALIAS_MAX);
    json_t *vals[SHAPE_GEN_ALIAS_MAX];
    double w[SHAPE_GEN_ALIAS_MAX];
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach(values, k, v)
    {
        if (!json_is_number(v)) return fail(L, "weight of '%.40s' must be a number", k);
    }
    json_object_foreach(values, k, v)
    {
        vals[i] = json_string(k);
        w[i++] = json_number_value(v);
    }
    int rc = set_labels(L, c, vals, n);
    for (size_t j = 0; j < n; j++) json_decref(vals[j]);
    TRY(rc);
    if (c->strategy == SC_LIFECYCLE) c->natural = SHAPE_GEN_STRING;
    if (c->natural == SHAPE_GEN_INT64) c->natural = SHAPE_GEN_FLOAT64; /* the original: numeric labels are float64 */
    return build_alias(L, c, w, n);
}

static int parse_pattern(ld *L, const sc_table *t, int self, sc_column *c, json_t *g)
{
    const char *fmt = get_string(g, "format");
    if (!fmt) return fail(L, "pattern needs 'format', e.g. \"TX-{seq:8}\"");
    c->pattern = dupstr(fmt);
    size_t cap = 8;
    c->tokens = calloc(cap, sizeof *c->tokens);
    if (!c->pattern || !c->tokens) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    const char *p = c->pattern;
    while (*p) {
        if (c->ntokens == cap) {
            sc_token *g2 = realloc(c->tokens, 2 * cap * sizeof *g2);
            if (!g2) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
            c->tokens = g2;
            cap *= 2;
        }
        sc_token *tok = &c->tokens[c->ntokens++];
        memset(tok, 0, sizeof *tok);
        if (*p == '}') return fail(L, "pattern '%.60s' has a '}' without its '{'", fmt);
        if (*p != '{') {
            const char *q = p;
            while (*q && *q != '{' && *q != '}') q++;
            tok->kind = 0;
            tok->text = p;
            tok->len = (size_t)(q - p);
            p = q;
            continue;
        }
        const char *close = strchr(p, '}');
        if (!close) return fail(L, "pattern '%.60s' has a '{' that is never closed", fmt);
        char name[128];
        size_t n = (size_t)(close - p - 1);
        if (n == 0 || n >= sizeof name) return fail(L, "pattern '%.60s' has an empty or too long token", fmt);
        memcpy(name, p + 1, n);
        name[n] = 0;
        if (strchr(name, '{')) return fail(L, "pattern '%.60s' has a '{' inside a token", fmt);
        char *colon = strchr(name, ':');
        tok->width = -1;
        if (colon) {
            *colon = 0;
            char *end;
            long w = strtol(colon + 1, &end, 10);
            if (end == colon + 1 || *end || w < 0 || w > 4096)
                return fail(L, "pattern token '{%s:%s}' needs a width 0..4096", name, colon + 1);
            tok->width = (int)w;
        }
        if (strcmp(name, "seq") == 0)
            tok->kind = 1;
        else if (strcmp(name, "random") == 0) {
            tok->kind = 2;
            if (tok->width < 0) tok->width = 4;
        } else {
            int col = find_col(t, name);
            if (col < 0 || col >= self)
                return fail(L, "pattern token '{%s}' names no earlier column; use {seq}, {random:W} or a column before this one", name);
            tok->kind = 3;
            tok->col = col;
        }
        p = close + 1;
    }
    c->natural = SHAPE_GEN_STRING;
    return SHAPE_OK;
}

static int parse_distribution(ld *L, sc_column *c, json_t *g)
{
    const char *fam = get_string(g, "distribution");
    if (!fam) fam = "uniform";
    static const struct {
        const char *name;
        int id;
    } fams[] = {{"uniform", SC_D_UNIFORM},         {"normal", SC_D_NORMAL},   {"gaussian", SC_D_NORMAL},
                {"log_normal", SC_D_LOGNORMAL},    {"lognormal", SC_D_LOGNORMAL}, {"exponential", SC_D_EXPONENTIAL},
                {"pareto", SC_D_PARETO},           {"zipf", SC_D_ZIPF},       {"geometric", SC_D_GEOMETRIC},
                {"poisson", SC_D_POISSON},         {"bernoulli", SC_D_BERNOULLI}, {"triangular", SC_D_TRIANGULAR}};
    c->family = -1;
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
        if (strcmp(fams[i].name, fam) == 0) c->family = fams[i].id;
    if (c->family < 0)
        return fail(L, "unknown distribution '%.40s'; choose from uniform, normal, log_normal, exponential, pareto, zipf, "
                       "geometric, poisson, bernoulli, triangular", fam);
    json_t *params = json_object_get(g, "params");
    if (params && !json_is_object(params)) return fail(L, "'params' must be an object");
    json_t *P = params && json_object_size(params) ? params : g;
    static const char *const pkeys[] = {"min", "max", "low", "high", "mean", "mu", "std_dev", "sigma", "std", "alpha",
                                        "a", "xm", "p", "probability", "lam", "lambda", "scale", "rate", "mode",
                                        "strategy", "distribution", "params", "output_type", NULL};
    TRY(check_keys(L, P, pkeys, "distribution parameter"));
    double lo, hi;
    TRY(get_number(L, P, "min", -INFINITY, &lo));
    TRY(get_number(L, P, "max", INFINITY, &hi));
    c->lo = lo;
    c->hi = hi;
    c->natural = SHAPE_GEN_FLOAT64;
    switch (c->family) {
    case SC_D_UNIFORM: {
        static const char *const lk[] = {"low", "min", NULL}, *const hk[] = {"high", "max", NULL};
        TRY(get_number_any(L, P, lk, 0, &c->p1));
        TRY(get_number_any(L, P, hk, 1, &c->p2));
        if (c->p1 > c->p2) return fail(L, "uniform needs low <= high");
        break;
    }
    case SC_D_NORMAL: {
        static const char *const mk[] = {"mu", "mean", NULL}, *const sk[] = {"std_dev", "sigma", "std", NULL};
        TRY(get_number_any(L, P, mk, 0, &c->p1));
        TRY(get_number_any(L, P, sk, 1, &c->p2));
        if (c->p2 < 0) return fail(L, "normal needs std_dev >= 0");
        break;
    }
    case SC_D_LOGNORMAL: {
        static const char *const mk[] = {"mu", "mean", NULL}, *const sk[] = {"sigma", "std", "std_dev", NULL};
        TRY(get_number_any(L, P, mk, 0, &c->p1));
        TRY(get_number_any(L, P, sk, 1, &c->p2));
        if (c->p2 < 0) return fail(L, "log_normal needs sigma >= 0");
        break;
    }
    case SC_D_EXPONENTIAL: {
        static const char *const sk[] = {"scale", "mean", NULL};
        double rate;
        TRY(get_number_any(L, P, sk, NAN, &c->p1));
        TRY(get_number(L, P, "rate", NAN, &rate));
        if (isnan(c->p1)) c->p1 = isnan(rate) ? 1.0 : 1.0 / rate;
        if (!(c->p1 > 0)) return fail(L, "exponential needs scale > 0 (or rate > 0)");
        break;
    }
    case SC_D_PARETO: {
        static const char *const xk[] = {"xm", "min", NULL};
        TRY(get_number(L, P, "alpha", 1.5, &c->p1));
        TRY(get_number_any(L, P, xk, 1, &c->p2));
        if (!(c->p1 > 0) || !(c->p2 > 0)) return fail(L, "pareto needs alpha > 0 and xm > 0");
        break;
    }
    case SC_D_ZIPF: {
        static const char *const ak[] = {"a", "alpha", NULL};
        TRY(get_number_any(L, P, ak, 1.5, &c->p1));
        double mx;
        TRY(get_number(L, P, "max", 1000, &mx));
        if (!(c->p1 > 0) || mx < 1 || mx > 16777216.0) return fail(L, "zipf needs a > 0 and 1 <= max <= 2^24");
        c->p2 = sc_floor(mx);
        c->hi = INFINITY;
        c->zipf = calloc(1, sizeof *c->zipf);
        if (!c->zipf) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
        shape_err e;
        if (shape_gen_zipf_init(c->zipf, (uint64_t)c->p2, c->p1, &e) != SHAPE_OK) return fail(L, "%s", e.message);
        break;
    }
    case SC_D_GEOMETRIC:
        TRY(get_number(L, P, "p", 0.5, &c->p1));
        if (!(c->p1 > 0) || c->p1 > 1) return fail(L, "geometric needs 0 < p <= 1");
        if (c->hi >= 1 && c->hi <= 256) { /* a small support: a table of the CDF */
            c->gmax = (int)sc_floor(c->hi);
            c->gcdf = calloc((size_t)c->gmax + 1, sizeof *c->gcdf);
            if (!c->gcdf) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
            double q = 1;
            for (int k = 1; k <= c->gmax; k++) {
                q *= 1 - c->p1;
                c->gcdf[k] = 1 - q;
            }
        }
        break;
    case SC_D_POISSON: {
        static const char *const lk[] = {"lam", "lambda", "mean", NULL};
        TRY(get_number_any(L, P, lk, 5, &c->p1));
        if (c->p1 < 0) return fail(L, "poisson needs lam >= 0");
        break;
    }
    case SC_D_BERNOULLI: {
        static const char *const pk[] = {"p", "probability", NULL};
        TRY(get_number_any(L, P, pk, 0.5, &c->p1));
        if (c->p1 < 0 || c->p1 > 1) return fail(L, "bernoulli needs 0 <= p <= 1");
        break;
    }
    case SC_D_TRIANGULAR: {
        static const char *const lk[] = {"low", "min", NULL}, *const hk[] = {"high", "max", NULL};
        TRY(get_number_any(L, P, lk, 0, &c->p1));
        TRY(get_number_any(L, P, hk, 1, &c->p3));
        TRY(get_number(L, P, "mode", (c->p1 + c->p3) / 2, &c->p2));
        if (!(c->p1 <= c->p2 && c->p2 <= c->p3) || c->p1 == c->p3) return fail(L, "triangular needs low <= mode <= high, low < high");
        break;
    }
    }
    return SHAPE_OK;
}

static int weekday_index(const char *k)
{
    static const char *const names[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    for (int i = 0; i < 7; i++)
        if (strncasecmp(k, names[i], 3) == 0) return i;
    return -1;
}

static int month_index(const char *k)
{
    static const char *const names[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; i++)
        if (strncasecmp(k, names[i], 3) == 0) return i;
    char *end;
    long m = strtol(k, &end, 10);
    return (*end == 0 && m >= 1 && m <= 12) ? (int)m - 1 : -1;
}

static int read_profile(ld *L, json_t *obj, double *w, int n, int (*index)(const char *), const char *what)
{
    for (int i = 0; i < n; i++) w[i] = 1.0 / n;
    if (!obj) return SHAPE_OK;
    if (!json_is_object(obj)) return fail(L, "'%s' must be an object {name: weight}", what);
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        int i = index(k);
        if (i < 0) return fail(L, "'%s' has an unknown key '%.20s'", what, k);
        if (!json_is_number(v) || json_number_value(v) < 0) return fail(L, "'%s' weight of '%.20s' must be a number >= 0", what, k);
        w[i] = json_number_value(v);
    }
    double sum = 0;
    for (int i = 0; i < n; i++) sum += w[i];
    if (!(sum > 0)) return fail(L, "'%s' weights sum to 0", what);
    return SHAPE_OK;
}

/* A generator's range: range_ref, date_range / range, top-level start/end,
 * else [def_start, def_end) (epoch days). */
static int generator_range(ld *L, json_t *g, int64_t def_start, int64_t def_end, int64_t *start, int64_t *end)
{
    const char *ref = get_string(g, "range_ref");
    json_t *range = json_object_get(g, "date_range");
    if (!range) range = json_object_get(g, "range");
    if (ref) {
        if (strcmp(ref, "model.date_range") != 0) return fail(L, "range_ref must be \"model.date_range\"");
        if (!L->s->has_range) return fail(L, "range_ref names model.date_range, which the model does not set");
        *start = L->s->range_start_ns;
        *end = L->s->range_end_ns;
    } else if (range) {
        TRY(read_range(L, range, start, end));
    } else if (json_object_get(g, "start")) {
        TRY(read_range(L, g, start, end));
    } else {
        *start = def_start * SHAPE_GEN_NS_PER_DAY;
        *end = def_end * SHAPE_GEN_NS_PER_DAY;
    }
    return SHAPE_OK;
}

static int parse_temporal(ld *L, sc_column *c, json_t *g)
{
    TRY(generator_range(L, g, shape_days_from_civil(2022, 1, 1), shape_days_from_civil(2026, 1, 1), &c->t_start_ns,
                        &c->t_end_ns));
    const char *gran = get_string(g, "granularity");
    if (gran && strcmp(gran, "day") != 0) return fail(L, "granularity must be \"day\"");
    c->day_granularity = gran != NULL;
    const char *unit = get_string(g, "unit");
    if (unit && strcmp(unit, "s") && strcmp(unit, "ms") && strcmp(unit, "us") && strcmp(unit, "ns"))
        return fail(L, "unit must be s, ms, us or ns");
    const char *pat = get_string(g, "pattern");
    c->natural = SHAPE_GEN_TIMESTAMP_NS;
    if (!pat || strcmp(pat, "seasonal") != 0) return SHAPE_OK;
    c->seasonal = 1;
    json_t *prof = json_object_get(g, "profiles");
    if (prof && !json_is_object(prof)) return fail(L, "'profiles' must be an object");
    static const char *const pk[] = {"month", "day_of_week", "hour_of_day", NULL};
    if (prof) TRY(check_keys(L, prof, pk, "profile"));
    double mw[12], ww[7];
    json_t *m = prof ? json_object_get(prof, "month") : NULL;
    if (!m) m = json_object_get(g, "month_weights");
    json_t *d = prof ? json_object_get(prof, "day_of_week") : NULL;
    if (!d) d = json_object_get(g, "day_of_week_weights");
    TRY(read_profile(L, m, mw, 12, month_index, "month"));
    TRY(read_profile(L, d, ww, 7, weekday_index, "day_of_week"));
    double peaks[8] = {0};
    size_t npeaks = 0;
    double sd = 2.0;
    double hw[24];
    int hour_weights = 0;
    json_t *h = prof ? json_object_get(prof, "hour_of_day") : NULL;
    if (h) {
        if (!json_is_object(h)) return fail(L, "'hour_of_day' must be an object");
        const char *dist = get_string(h, "distribution");
        if (dist && strcmp(dist, "bimodal") == 0) {
            json_t *pl = json_object_get(h, "peaks");
            if (!json_is_array(pl) || json_array_size(pl) == 0 || json_array_size(pl) > 8)
                return fail(L, "hour_of_day 'peaks' must be a list of 1..8 hours");
            for (size_t i = 0; i < json_array_size(pl); i++) {
                json_t *v = json_array_get(pl, i);
                if (!json_is_number(v)) return fail(L, "hour_of_day 'peaks' must hold numbers");
                peaks[npeaks++] = json_number_value(v);
            }
            TRY(get_number(L, h, "std_dev", 2.0, &sd));
            if (!(sd > 0)) return fail(L, "hour_of_day std_dev must be > 0");
        } else if (!json_object_get(h, "peaks")) {
            for (int i = 0; i < 24; i++) hw[i] = 0;
            const char *k;
            json_t *v;
            double sum = 0;
            json_object_foreach(h, k, v)
            {
                char *end;
                long hr = strtol(k, &end, 10);
                if (*end || end == k || hr < 0 || hr > 23) return fail(L, "hour_of_day keys must be \"0\"..\"23\"");
                if (!json_is_number(v) || json_number_value(v) < 0) return fail(L, "hour_of_day weights must be numbers >= 0");
                hw[hr] = json_number_value(v);
                sum += hw[hr];
            }
            if (!(sum > 0)) return fail(L, "hour_of_day weights sum to 0");
            hour_weights = 1;
        }
    }
    /* peaks only through the model's API: uniform hours are one flat peak set */
    if (npeaks == 0) {
        peaks[0] = 12;
        npeaks = 1;
    }
    int64_t first_day = c->t_start_ns / SHAPE_GEN_NS_PER_DAY;
    int64_t last = (c->t_end_ns - 1) / SHAPE_GEN_NS_PER_DAY;
    shape_err e;
    if (shape_gen_seasonal_init(&c->season, first_day, (uint32_t)(last - first_day + 1), mw, ww, peaks, npeaks, sd, &e) !=
        SHAPE_OK)
        return fail(L, "%s", e.message);
    if (!h || hour_weights) {
        if (!h)
            for (int i = 0; i < 24; i++) hw[i] = 1;
        if (shape_gen_alias_init(&c->season.hours, hw, 24, &e) != SHAPE_OK) return fail(L, "%s", e.message);
    }
    return SHAPE_OK;
}

/* The key column a foreign key into table p reads: the named one. */
static int parse_fk(ld *L, int ti, int self, sc_column *c, json_t *g)
{
    sc_schema *s = L->s;
    const char *ref = get_string(g, "ref");
    char tname[128];
    const char *cname;
    if (!ref || split_ref(ref, tname, sizeof tname, &cname) != 0)
        return fail(L, "foreign_key needs 'ref': \"table.column\"");
    c->ref_table = find_table(s, tname);
    if (c->ref_table < 0) return fail(L, "foreign key to missing table '%.60s'; name a table of the schema", tname);
    const sc_table *p = &s->tables[c->ref_table];
    c->ref_col = find_col(p, cname);
    if (c->ref_col < 0) return fail(L, "foreign key to missing column '%.60s.%.60s'", tname, cname);
    c->natural = p->cols[c->ref_col].kind;
    json_t *params = json_object_get(g, "params");
    if (params && !json_is_object(params)) return fail(L, "'params' must be an object");
    static const char *const pk[] = {"alpha", "max_per_parent", NULL};
    if (params) TRY(check_keys(L, params, pk, "foreign_key parameter"));
    const char *dist = get_string(g, "distribution");
    c->fk_mode = SC_FK_UNIFORM;
    if (dist && strcmp(dist, "zipf") == 0) c->fk_mode = SC_FK_ZIPF;
    else if (dist && strcmp(dist, "pareto") == 0) c->fk_mode = SC_FK_PARETO;
    else if (dist && strcmp(dist, "uniform") != 0) return fail(L, "foreign_key distribution must be uniform, zipf or pareto");
    double alpha, mpp;
    TRY(get_number(L, g, "alpha", c->fk_mode == SC_FK_ZIPF ? 1.5 : 1.2, &alpha));
    TRY(get_number(L, params, "alpha", alpha, &alpha));
    if (!(alpha > 0)) return fail(L, "alpha must be > 0");
    c->alpha = alpha;
    TRY(get_number(L, g, "max_per_parent", 0, &mpp));
    TRY(get_number(L, params, "max_per_parent", mpp, &mpp));
    if (mpp != 0 && (mpp < 1 || mpp != sc_floor(mpp) || mpp > SHAPE_GEN_ALLOC_MAX_K))
        return fail(L, "max_per_parent must be an integer 1..%d", SHAPE_GEN_ALLOC_MAX_K);
    c->max_per_parent = (int)mpp;
    if (mpp > 0) c->allocated = 1;
    c->constrained_by = -1;
    const char *cb = get_string(g, "constrained_by");
    if (cb) {
        const sc_table *t = &s->tables[ti];
        c->constrained_by = find_col(t, cb);
        if (c->constrained_by < 0 || c->constrained_by >= self)
            return fail(L, "constrained_by '%.60s' is not an earlier column of this table", cb);
        c->constrained_pcol = find_col(p, cb);
        if (c->constrained_pcol < 0) return fail(L, "constrained_by '%.60s': the parent '%s' has no such column", cb, p->name);
        sc_column *mine = &s->tables[ti].cols[c->constrained_by], *theirs = &p->cols[c->constrained_pcol];
        if (mine->strategy == SC_FOREIGN_KEY && theirs->strategy == SC_FOREIGN_KEY && mine->ref_table == theirs->ref_table &&
            mine->ref_col == theirs->ref_col && theirs->ref_table != c->ref_table) {
            /* the parents that match are the children of one grandparent row:
             * make the parent's key an allocation and pick among them exactly */
            theirs->allocated = 1;
            c->constrained_exact = 1;
        }
    }
    if (json_object_get(g, "filter"))
        return fail(L, "foreign_key 'filter' is not supported (a filtered sample needs a pass over the parent table); "
                       "use constrained_by, or a conditional column");
    json_t *sr = json_object_get(g, "sample_rate");
    if (sr) {
        if (!json_is_number(sr) || !(json_number_value(sr) > 0) || json_number_value(sr) > 1)
            return fail(L, "sample_rate must be a number in (0, 1]");
        c->sample_rate = json_number_value(sr);
    }
    json_t *fo = json_object_get(g, "fan_out");
    if (fo && !json_is_false(fo) && !json_is_null(fo)) {
        if (!json_is_object(fo) && !json_is_true(fo))
            return fail(L, "'fan_out' must be an object {top_fraction, top_share, shape, shuffle}");
        static const char *const fk[] = {"top_fraction", "top_share", "shape", "shuffle", NULL};
        if (json_is_object(fo)) TRY(check_keys(L, fo, fk, "fan_out key"));
        json_t *F = json_is_object(fo) ? fo : NULL;
        TRY(get_number(L, F, "top_fraction", 0.2, &c->fan_frac));
        TRY(get_number(L, F, "top_share", 0.8, &c->fan_share));
        if (!(c->fan_frac > 0 && c->fan_frac < 1)) return fail(L, "fan_out top_fraction must be in (0, 1)");
        if (!(c->fan_share > 0 && c->fan_share < 1)) return fail(L, "fan_out top_share must be in (0, 1)");
        const char *shape = get_string(F, "shape");
        if (!shape || strcmp(shape, "power") == 0) c->fan_shape = SC_FAN_POWER;
        else if (strcmp(shape, "two_tier") == 0) c->fan_shape = SC_FAN_TWO_TIER;
        else return fail(L, "fan_out shape must be power or two_tier");
        json_t *sh = F ? json_object_get(F, "shuffle") : NULL;
        if (sh && !json_is_boolean(sh)) return fail(L, "fan_out shuffle must be true or false");
        c->fan_shuffle = !sh || json_is_true(sh);
        /* power: P(rank < x n) = x^beta with top_fraction^beta = top_share */
        c->fan_inv_beta = shape_gen_log(c->fan_frac) / shape_gen_log(c->fan_share);
    }
    if (c->ref_table == ti) c->fk_mode = SC_FK_UNIFORM; /* a self reference is uniform */
    return SHAPE_OK;
}

static int earlier_col(ld *L, const sc_table *t, int self, json_t *g, const char *key, int required, int *out);

/* empirical {quantiles {"p1": v, ..., "p99": v}, interpolation, min, max}:
 * the points (p/100, v), with min at 0 and max at 1 when given (else the
 * first and last values extend flat). */
static int parse_empirical(ld *L, sc_column *c, json_t *g)
{
    json_t *q = json_object_get(g, "quantiles");
    if (!json_is_object(q) || json_object_size(q) == 0)
        return fail(L, "empirical needs 'quantiles' {\"p1\": value, ..., \"p99\": value}");
    const char *ip = get_string(g, "interpolation");
    if (json_object_get(g, "interpolation") && (!ip || (strcmp(ip, "linear") && strcmp(ip, "nearest"))))
        return fail(L, "interpolation must be linear or nearest");
    c->e_nearest = ip && strcmp(ip, "nearest") == 0;
    double mn, mx;
    TRY(get_number(L, g, "min", NAN, &mn));
    TRY(get_number(L, g, "max", NAN, &mx));
    size_t n = json_object_size(q) + 2;
    c->eq = calloc(n, sizeof *c->eq);
    c->ex = calloc(n, sizeof *c->ex);
    if (!c->eq || !c->ex) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    int k = 0;
    const char *key;
    json_t *v;
    json_object_foreach(q, key, v)
    {
        char *end;
        long p = key[0] == 'p' && key[1] >= '0' && key[1] <= '9' ? strtol(key + 1, &end, 10) : -1;
        if (p < 1 || p > 99 || *end) return fail(L, "quantile key '%.20s' must be p1 .. p99", key);
        if (!json_is_number(v) || !isfinite(json_number_value(v))) return fail(L, "quantile %s must be a finite number", key);
        double x = json_number_value(v), pq = (double)p / 100;
        int at = k++;
        while (at > 0 && c->eq[at - 1] > pq) c->eq[at] = c->eq[at - 1], c->ex[at] = c->ex[at - 1], at--;
        if (at > 0 && c->eq[at - 1] == pq) return fail(L, "quantile %s is given twice", key);
        c->eq[at] = pq;
        c->ex[at] = x;
    }
    for (int i = 1; i < k; i++)
        if (c->ex[i] < c->ex[i - 1])
            return fail(L, "quantiles must not decrease: p%d (%g) is below p%d (%g)", (int)(c->eq[i] * 100 + 0.5), c->ex[i],
                        (int)(c->eq[i - 1] * 100 + 0.5), c->ex[i - 1]);
    if (!isnan(mn) && mn > c->ex[0]) return fail(L, "min %g is above the lowest quantile (%g)", mn, c->ex[0]);
    if (!isnan(mx) && mx < c->ex[k - 1]) return fail(L, "max %g is below the highest quantile (%g)", mx, c->ex[k - 1]);
    memmove(c->eq + 1, c->eq, (size_t)k * sizeof *c->eq);
    memmove(c->ex + 1, c->ex, (size_t)k * sizeof *c->ex);
    c->eq[0] = 0;
    c->ex[0] = isnan(mn) ? c->ex[1] : mn;
    c->eq[k + 1] = 1;
    c->ex[k + 1] = isnan(mx) ? c->ex[k] : mx;
    c->neq = k + 2;
    c->natural = SHAPE_GEN_FLOAT64;
    return SHAPE_OK;
}

/* conditional_table {source_column, table {value: {label: weight}}, default}:
 * a weighted pick whose weights depend on an earlier column's value. */
/* One case of a conditional_table: a weighted_enum column named by the value it answers. */
static int parse_case(ld *L, sc_column *k, const char *value, json_t *weights)
{
    k->strategy = SC_WEIGHTED_ENUM;
    k->name = dupstr(value);
    json_t *w = k->name ? json_pack("{sO}", "values", weights) : NULL;
    if (!w) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    int rc = parse_enum(L, k, w);
    json_decref(w);
    return rc;
}

static int parse_conditional_table(ld *L, const sc_table *t, int self, sc_column *c, json_t *g)
{
    TRY(earlier_col(L, t, self, g, "source_column", 1, &c->src_col));
    json_t *tab = json_object_get(g, "table"), *def = json_object_get(g, "default");
    if (!json_is_object(tab) || json_object_size(tab) == 0)
        return fail(L, "conditional_table needs 'table' {value of %s: {label: weight}}", t->cols[c->src_col].name);
    if (def && !json_is_object(def)) return fail(L, "conditional_table 'default' must be an object {label: weight}");
    size_t n = json_object_size(tab) + (def ? 1 : 0);
    if (n > 1024) return fail(L, "conditional_table has %zu cases; at most 1024", n);
    c->cases = calloc(n, sizeof *c->cases);
    if (!c->cases) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    c->default_case = -1;
    const char *key;
    json_t *v;
    int all_num = 1;
    json_object_foreach(tab, key, v)
    {
        if (!json_is_object(v)) return fail(L, "conditional_table value '%.40s' must map to {label: weight}", key);
        TRY(parse_case(L, &c->cases[c->ncases++], key, v));
    }
    if (def) {
        c->default_case = (int)c->ncases;
        TRY(parse_case(L, &c->cases[c->ncases++], "", def));
    }
    for (size_t i = 0; i < c->ncases; i++)
        for (size_t j = 0; j < c->cases[i].nlabels; j++) {
            char *end;
            (void)strtod(c->cases[i].labels[j], &end);
            if (end == c->cases[i].labels[j] || *end) all_num = 0;
        }
    c->natural = all_num ? SHAPE_GEN_FLOAT64 : SHAPE_GEN_STRING; /* numeric labels are float64, as weighted_enum's */
    return SHAPE_OK;
}

/* composite_fk_field {source, field}: another column of the parent row the
 * earlier (composite_)foreign_key `source` picked. */
static int parse_composite_field(ld *L, const sc_table *t, int self, sc_column *c, json_t *g)
{
    TRY(earlier_col(L, t, self, g, "source", 1, &c->via));
    const sc_column *fk = &t->cols[c->via];
    if (fk->strategy != SC_FOREIGN_KEY)
        return fail(L, "composite_fk_field 'source' must be a foreign_key or composite_foreign_key column");
    const char *field = get_string(g, "field");
    if (!field) return fail(L, "composite_fk_field needs 'field' (a column of '%s')", L->s->tables[fk->ref_table].name);
    c->src_table = fk->ref_table;
    const sc_table *p = &L->s->tables[c->src_table];
    c->src_col = find_col(p, field);
    if (c->src_col < 0) return fail(L, "composite_fk_field names missing column '%.60s.%.60s'", p->name, field);
    if (p->cols[c->src_col].strategy == SC_COMPUTED)
        return fail(L, "composite_fk_field '%s.%s' is a computed column; name a generated one", p->name, field);
    if (p == t && c->src_col >= self)
        return fail(L, "composite_fk_field of a self reference must name a column generated before this one");
    c->natural = p->cols[c->src_col].kind;
    return SHAPE_OK;
}

/* scd2 {role, business_key, min_gap_days 1}: the versions of one entity are
 * the children of one parent row of the business_key foreign key. */
static int parse_scd2(ld *L, const sc_table *t, int self, sc_column *c, json_t *g)
{
    static const struct {
        const char *name;
        int role;
    } roles[] = {{"valid_from", SC_SCD_FROM},     {"effective_from", SC_SCD_FROM}, {"effective_date", SC_SCD_FROM},
                 {"start_date", SC_SCD_FROM},     {"valid_to", SC_SCD_TO},         {"effective_to", SC_SCD_TO},
                 {"end_date", SC_SCD_TO},         {"expiry_date", SC_SCD_TO},      {"is_current", SC_SCD_CURRENT},
                 {"current", SC_SCD_CURRENT},     {"current_flag", SC_SCD_CURRENT}, {"version", SC_SCD_VERSION},
                 {"version_number", SC_SCD_VERSION}};
    const char *role = get_string(g, "role");
    c->scd_role = -1;
    for (size_t i = 0; role && i < sizeof roles / sizeof roles[0]; i++)
        if (strcmp(roles[i].name, role) == 0) c->scd_role = roles[i].role;
    if (c->scd_role < 0)
        return fail(L, "scd2 needs 'role': valid_from (effective_date, start_date), valid_to (end_date), is_current or version");
    TRY(earlier_col(L, t, self, g, "business_key", 1, &c->business_key));
    sc_column *bk = &((sc_table *)t)->cols[c->business_key];
    if (bk->strategy != SC_FOREIGN_KEY)
        return fail(L, "scd2 business_key '%s' must be a foreign_key column (the entity whose versions these rows are)", bk->name);
    if (bk->ref_table == (int)(t - L->s->tables)) return fail(L, "scd2 business_key '%s' cannot be a self reference", bk->name);
    bk->allocated = 1;
    double gap;
    TRY(get_number(L, g, "min_gap_days", 1, &gap));
    if (gap < 0 || gap > 36500 || gap != sc_floor(gap)) return fail(L, "min_gap_days must be an integer 0..36500");
    c->scd_gap = (int)gap;
    int64_t a, b;
    TRY(generator_range(L, g, shape_days_from_civil(2022, 1, 1), shape_days_from_civil(2025, 1, 1), &a, &b));
    c->scd_day0 = a / SHAPE_GEN_NS_PER_DAY;
    c->scd_days = b / SHAPE_GEN_NS_PER_DAY - c->scd_day0;
    if (c->scd_days < 1) return fail(L, "scd2 range must span at least one day");
    c->natural = c->scd_role == SC_SCD_CURRENT ? SHAPE_GEN_BOOL : c->scd_role == SC_SCD_VERSION ? SHAPE_GEN_INT64
                                                                                                 : SHAPE_GEN_TIMESTAMP_NS;
    return SHAPE_OK;
}

/* An earlier column of table t by the generator key `key`. */
static int earlier_col(ld *L, const sc_table *t, int self, json_t *g, const char *key, int required, int *out)
{
    const char *name = get_string(g, key);
    *out = -1;
    if (!name) return required ? fail(L, "needs '%s' (an earlier column)", key) : SHAPE_OK;
    int c = find_col(t, name);
    if (c < 0) return fail(L, "'%s' names no column '%.60s' of this table", key, name);
    if (c >= self) return fail(L, "'%s' names '%.60s', which is not generated before this column", key, name);
    *out = c;
    return SHAPE_OK;
}

static int parse_lookup(ld *L, int ti, int self, sc_column *c, json_t *g)
{
    sc_schema *s = L->s;
    const sc_table *t = &s->tables[ti];
    const char *st = get_string(g, "source_table"), *sc = get_string(g, "source_column");
    if (!st || !sc) return fail(L, "lookup needs 'source_table', 'source_column' and 'via'");
    TRY(earlier_col(L, t, self, g, "via", 1, &c->via));
    c->src_table = find_table(s, st);
    if (c->src_table < 0) return fail(L, "lookup from missing table '%.60s'", st);
    const sc_table *p = &s->tables[c->src_table];
    c->src_col = find_col(p, sc);
    if (c->src_col < 0) return fail(L, "lookup of missing column '%.60s.%.60s'", st, sc);
    if (p->cols[c->src_col].strategy == SC_COMPUTED)
        return fail(L, "lookup of '%s.%s', a computed column; look up a generated column instead", st, sc);
    const char *key = get_string(g, "key");
    const sc_column *via = &t->cols[c->via];
    if (key) c->key_col = find_col(p, key);
    else if (via->strategy == SC_FOREIGN_KEY && via->ref_table == c->src_table) c->key_col = via->ref_col;
    else if (find_col(p, via->name) >= 0) c->key_col = find_col(p, via->name);
    else c->key_col = p->pk;
    if (c->key_col < 0) return fail(L, "lookup: '%s' has no key column to match '%s' against; give 'key'", st, via->name);
    int by_fk = via->strategy == SC_FOREIGN_KEY && via->ref_table == c->src_table && via->ref_col == c->key_col;
    if (!by_fk && p->cols[c->key_col].strategy != SC_SEQUENCE)
        return fail(L, "lookup: 'via' must be a foreign key to %s.%s, or the key must be a sequence column", st,
                    p->cols[c->key_col].name);
    c->natural = p->cols[c->src_col].kind;
    return SHAPE_OK;
}

static int parse_derived(ld *L, int ti, int self, sc_column *c, json_t *g)
{
    sc_schema *s = L->s;
    const sc_table *t = &s->tables[ti];
    const char *src = get_string(g, "source");
    if (!src) return fail(L, "derived needs 'source' (an earlier column, or table.column with 'via')");
    char tname[128];
    const char *cname;
    c->src_table = -1;
    c->via = -1;
    if (split_ref(src, tname, sizeof tname, &cname) == 0) {
        TRY(earlier_col(L, t, self, g, "via", 1, &c->via));
        const sc_column *via = &t->cols[c->via];
        c->src_table = find_table(s, tname);
        if (c->src_table < 0) return fail(L, "derived source from missing table '%.60s'", tname);
        if (via->strategy != SC_FOREIGN_KEY || via->ref_table != c->src_table)
            return fail(L, "derived 'via' must be a foreign key of this table to '%s'", tname);
        c->src_col = find_col(&s->tables[c->src_table], cname);
        if (c->src_col < 0) return fail(L, "derived source names missing column '%.60s'", src);
        if (s->tables[c->src_table].cols[c->src_col].strategy == SC_COMPUTED)
            return fail(L, "derived source '%s' is a computed column; derive from a generated one", src);
        c->natural = s->tables[c->src_table].cols[c->src_col].kind;
    } else {
        int k = find_col(t, src);
        if (k < 0 || k >= self) return fail(L, "derived source '%.60s' is not an earlier column of this table", src);
        c->src_col = k;
        c->natural = t->cols[k].kind;
    }
    const char *rule = get_string(g, "rule");
    if (!rule) rule = get_string(g, "operation");
    if (!rule || strcmp(rule, "copy") == 0) return SHAPE_OK;
    if (strcmp(rule, "add_days") != 0) return fail(L, "derived rule must be copy or add_days");
    if (c->natural != SHAPE_GEN_TIMESTAMP_NS) return fail(L, "add_days needs a date or timestamp source");
    c->add_days = 1;
    c->days_fixed = INT32_MIN;
    json_t *days = json_object_get(g, "days");
    if (days) {
        if (!json_is_integer(days)) return fail(L, "'days' must be an integer");
        if (json_integer_value(days) < -36500 || json_integer_value(days) > 36500) return fail(L, "'days' must be within -36500..36500");
        c->days_fixed = (int)json_integer_value(days);
        return SHAPE_OK;
    }
    json_t *params = json_object_get(g, "params");
    const char *dist = get_string(params, "distribution");
    c->days_family = dist && strcmp(dist, "log_normal") == 0 ? 1 : dist && strcmp(dist, "normal") == 0 ? 2 : 0;
    TRY(get_number(L, params, "min", 1, &c->d_min));
    TRY(get_number(L, params, "max", 30, &c->d_max));
    TRY(get_number(L, params, "mean", c->days_family == 1 ? 2.0 : 10.0, &c->d_mean));
    static const char *const sk[] = {"sigma", "std_dev", NULL};
    TRY(get_number_any(L, params, sk, c->days_family == 1 ? 0.8 : 3.0, &c->d_sigma));
    if (c->d_min > c->d_max) return fail(L, "add_days needs min <= max");
    if (c->d_min < -36500 || c->d_max > 36500) return fail(L, "add_days min and max must be within -36500..36500");
    return SHAPE_OK;
}

static int parse_correlated(ld *L, int ti, int self, sc_column *c, json_t *g)
{
    const sc_table *t = &L->s->tables[ti];
    TRY(earlier_col(L, t, self, g, "source_column", 1, &c->src_col));
    int k = t->cols[c->src_col].kind;
    if (k != SHAPE_GEN_INT64 && k != SHAPE_GEN_FLOAT64) return fail(L, "correlated needs a numeric source_column");
    c->src_table = -1;
    const char *rule = get_string(g, "rule");
    if (!rule) rule = get_string(g, "operation");
    if (!rule) rule = "multiply";
    json_t *P = json_object_get(g, "params");
    if (strcmp(rule, "multiply") == 0) {
        static const char *const a[] = {"factor_min", "min", NULL}, *const b[] = {"factor_max", "max", NULL};
        c->corr_op = 0;
        TRY(get_number_any(L, P, a, 0.30, &c->p1));
        TRY(get_number_any(L, P, b, 0.70, &c->p2));
    } else if (strcmp(rule, "add") == 0 || strcmp(rule, "subtract") == 0) {
        static const char *const a[] = {"offset_min", "min", NULL}, *const b[] = {"offset_max", "max", NULL};
        c->corr_op = rule[0] == 'a' ? 1 : 2;
        TRY(get_number_any(L, P, a, 0, &c->p1));
        TRY(get_number_any(L, P, b, 10, &c->p2));
    } else
        return fail(L, "correlated rule must be multiply, add or subtract");
    if (c->p1 > c->p2) return fail(L, "correlated needs min <= max");
    c->natural = SHAPE_GEN_FLOAT64;
    if (c->scale < 0) c->scale = 2;
    return SHAPE_OK;
}

static int json_to_value(json_t *v, shape_gen_value *out, char **text)
{
    memset(out, 0, sizeof *out);
    if (json_is_integer(v)) out->kind = SHAPE_GEN_INT64, out->v.i = json_integer_value(v);
    else if (json_is_real(v)) out->kind = SHAPE_GEN_FLOAT64, out->v.f = json_real_value(v);
    else if (json_is_boolean(v)) out->kind = SHAPE_GEN_BOOL, out->v.b = json_is_true(v);
    else if (json_is_string(v)) {
        *text = dupstr(json_string_value(v));
        if (!*text) return -1;
        out->kind = SHAPE_GEN_STRING;
        out->v.s = *text;
        out->len = (uint32_t)strlen(*text);
    } else if (!json_is_null(v))
        return -2;
    return 0;
}

static int parse_conditional(ld *L, int ti, int self, sc_column *c, json_t *g)
{
    const sc_table *t = &L->s->tables[ti];
    const char *cond = get_string(g, "condition");
    if (!cond) return fail(L, "conditional needs 'condition', e.g. \"status == 'paid'\" or \"x IS NULL\"");
    char name[128], op[8] = "", val[256] = "";
    int n = 0;
    char up[300];
    size_t cl = strlen(cond);
    if (cl >= sizeof up) return fail(L, "condition is too long");
    for (size_t i = 0; i <= cl; i++) up[i] = (char)((cond[i] >= 'a' && cond[i] <= 'z') ? cond[i] - 32 : cond[i]);
    const char *isn = strstr(up, " IS NOT NULL"), *is = strstr(up, " IS NULL");
    if (isn || is) {
        size_t nl = (size_t)((isn ? isn : is) - up);
        if (nl >= sizeof name) return fail(L, "condition names a column too long");
        memcpy(name, cond, nl);
        name[nl] = 0;
        c->cond_op = isn ? 1 : 0;
        int k = -1;
        for (size_t i = 0; i < t->ncols && (int)i < self; i++)
            if (strcasecmp(t->cols[i].name, name) == 0) k = (int)i;
        if (k < 0) return fail(L, "condition names '%.60s', which is not an earlier column", name);
        c->src_col = k;
    } else {
        if (sscanf(cond, " %127[A-Za-z0-9_] %7[=!] %255[^\n]%n", name, op, val, &n) < 3 ||
            (strcmp(op, "==") && strcmp(op, "!=")))
            return fail(L, "condition '%.80s' does not parse; write 'C == V', 'C != V', 'C IS NULL' or 'C IS NOT NULL'", cond);
        c->cond_op = op[0] == '=' ? 2 : 3;
        size_t vl = strlen(val);
        while (vl && val[vl - 1] == ' ') val[--vl] = 0;
        char *v = val;
        if (vl >= 2 && (v[0] == '\'' || v[0] == '"') && v[vl - 1] == v[0]) {
            v[vl - 1] = 0;
            v++;
        } else {
            char *end;
            c->cond_num = strtod(v, &end);
            c->cond_numeric = end != v && *end == 0;
        }
        c->cond_text = dupstr(v);
        int k = find_col(t, name);
        if (k < 0 || k >= self) return fail(L, "condition names '%.60s', which is not an earlier column", name);
        c->src_col = k;
    }
    int text = 0;
    for (int b = 0; b < 2; b++) {
        json_t *br = json_object_get(g, b == 0 ? "true_generator" : "false_generator");
        if (!br) br = json_object();
        else json_incref(br);
        if (!json_is_object(br)) {
            json_decref(br);
            return fail(L, "conditional branches must be objects like {\"fixed\": 0}");
        }
        json_t *fixed = json_object_get(br, "fixed");
        int rc = 0;
        const char *bst = get_string(br, "strategy");
        if (bst && strcmp(bst, "lookup") == 0) {
            /* an inline lookup: parsed as a lookup column, kept in the branch */
            sc_column tmp;
            memset(&tmp, 0, sizeof tmp);
            static const char *const lk[] = {"strategy", "source_table", "source_column", "via", "key", NULL};
            int lrc = check_keys(L, br, lk, "inline lookup key");
            if (lrc == SHAPE_OK) lrc = parse_lookup(L, ti, self, &tmp, br);
            json_decref(br);
            if (lrc != SHAPE_OK) return lrc;
            int sk = L->s->tables[tmp.src_table].cols[tmp.src_col].kind;
            if (sk != SHAPE_GEN_INT64 && sk != SHAPE_GEN_FLOAT64 && sk != SHAPE_GEN_BOOL)
                return fail(L, "an inline lookup in a conditional must read a numeric column");
            c->branch_lookup[b] = 1;
            c->bl_via[b] = tmp.via;
            c->bl_table[b] = tmp.src_table;
            c->bl_col[b] = tmp.src_col;
            c->bl_key[b] = tmp.key_col;
            c->branch[b].kind = SHAPE_GEN_FLOAT64;
            continue;
        }
        if (fixed) rc = json_to_value(fixed, &c->branch[b], &c->branch_text[b]);
        else if (json_object_size(br) == 0) c->branch[b].kind = SHAPE_GEN_FLOAT64;
        else rc = -3;
        json_decref(br);
        if (rc == -1) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
        if (rc) return fail(L, "conditional branches support {\"fixed\": V}, {} or an inline lookup");
        if (c->branch[b].kind == SHAPE_GEN_STRING) text = 1;
    }
    c->natural = text ? SHAPE_GEN_STRING : SHAPE_GEN_FLOAT64;
    return SHAPE_OK;
}

static int parse_reference(ld *L, sc_column *c, json_t *g)
{
    const char *ds = get_string(g, "dataset");
    if (!ds) return fail(L, "needs 'dataset' (a NAME.json beside the schema)");
    TRY(load_dataset(L, ds, &c->dataset));
    c->dataset_index = (int)(c->dataset - L->s->datasets);
    const char *f = get_string(g, "field");
    if (!f && c->strategy != SC_REFERENCE_DATA) return fail(L, "needs 'field'");
    if (f && !(c->field = dupstr(f))) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    json_t *first = json_array_get(c->dataset->json, 0);
    json_t *v = first;
    if (json_is_object(first)) {
        v = json_object_get(first, f ? f : "name");
        if (!v && !f) v = json_object_get(first, "value");
        if (!v) return fail(L, "dataset '%s' records have no field '%s'", ds, f ? f : "name");
    } else if (f)
        return fail(L, "dataset '%s' holds strings, not records with field '%s'", ds, f);
    c->natural = json_is_integer(v) ? SHAPE_GEN_INT64 : json_is_number(v) ? SHAPE_GEN_FLOAT64
               : json_is_boolean(v) ? SHAPE_GEN_BOOL : SHAPE_GEN_STRING;
    if (sc_record_values(c) != 0) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    return SHAPE_OK;
}

/* May a strategy producing `nat` fill a column declared `kind`? */
static int compatible(int nat, int kind)
{
    if (nat == kind || nat == SHAPE_GEN_NULL) return 1;
    if ((nat == SHAPE_GEN_INT64 || nat == SHAPE_GEN_FLOAT64 || nat == SHAPE_GEN_BOOL) &&
        (kind == SHAPE_GEN_INT64 || kind == SHAPE_GEN_FLOAT64))
        return 1;
    if (nat == SHAPE_GEN_FLOAT64 && kind == SHAPE_GEN_BOOL) return 1; /* formulas: comparisons */
    if (nat != SHAPE_GEN_STRING && kind == SHAPE_GEN_STRING) return 1;
    return 0;
}

/* hierarchy, hierarchy_field, bootstrap, address (schema_strat.c), with the
 * dataset they name loaded first. */
static int parse_strat(ld *L, int ti, int self, sc_column *c, json_t *g)
{
    const char *ds = get_string(g, "dataset");
    if (!ds) ds = get_string(json_object_get(g, "reference"), "dataset");
    if (ds) {
        TRY(load_dataset(L, ds, &c->dataset));
        c->dataset_index = (int)(c->dataset - L->s->datasets);
    }
    char msg[400];
    int rc = sc_strat_parse(L->s, ti, self, g, msg, sizeof msg);
    if (rc == -2) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    return rc ? fail(L, "%s", msg) : SHAPE_OK;
}

static int parse_generator(ld *L, int ti, int self)
{
    sc_schema *s = L->s;
    sc_table *t = &s->tables[ti];
    sc_column *c = &t->cols[self];
    json_t *cols = json_object_get(L->tables_json[ti], "columns");
    json_t *g = json_object_get(json_object_get(cols, c->name), "generator");
    L->column = c->name;
    if (c->strategy == SC_NONE) {
        c->natural = SHAPE_GEN_NULL;
        return SHAPE_OK;
    }
    const struct strategy_info *info = strategy_by_id(c->strategy);
    const char *allowed[28] = {"strategy", "output_type"};
    size_t na = 2;
    for (size_t i = 0; info->keys[i] && na < 27; i++) allowed[na++] = info->keys[i];
    allowed[na] = NULL;
    char what[64];
    snprintf(what, sizeof what, "parameter of %s", info->name);
    TRY(check_keys(L, g, allowed, what));
    switch (c->strategy) {
    case SC_NATIVE: {
        static const struct {
            const char *name;
            int id;
        } prov[] = {{"first_name", SC_P_FIRST_NAME}, {"last_name", SC_P_LAST_NAME}, {"name", SC_P_NAME},
                    {"email", SC_P_EMAIL}, {"company_email", SC_P_EMAIL}, {"phone_number", SC_P_PHONE},
                    {"street_address", SC_P_STREET}, {"city", SC_P_CITY}, {"state_abbr", SC_P_STATE},
                    {"postcode", SC_P_POSTCODE}, {"zip_plus4", SC_P_ZIP4}, {"ipv4", SC_P_IPV4}, {"uri", SC_P_URI},
                    {"word", SC_P_WORD}, {"digits", SC_P_DIGITS}, {"digit_ids", SC_P_DIGITS}, {"pystr", SC_P_PYSTR},
                    {"company", SC_P_COMPANY}, {"ssn", SC_P_SSN}};
        const char *pv = get_string(g, "provider");
        c->provider = -1;
        for (size_t i = 0; pv && i < sizeof prov / sizeof prov[0]; i++)
            if (strcmp(prov[i].name, pv) == 0) c->provider = prov[i].id;
        if (c->provider < 0)
            return fail(L, "unknown provider '%.40s'; use first_name, last_name, name, email, company_email, phone_number, "
                           "street_address, city, state_abbr, postcode, zip_plus4, ipv4, uri, word, digits, digit_ids, "
                           "pystr, company or ssn", pv ? pv : "");
        double w = 0;
        TRY(get_number(L, g, "width", c->provider == SC_P_PYSTR ? 20 : 8, &w));
        if (w < 1 || w > 256 || w != sc_floor(w)) return fail(L, "width must be an integer 1..256");
        c->width = (int)w;
        c->first_col = c->last_col = -1;
        for (int i = 0; i < self; i++)
            if (t->cols[i].strategy == SC_NATIVE) {
                if (t->cols[i].provider == SC_P_FIRST_NAME && c->first_col < 0) c->first_col = i;
                if (t->cols[i].provider == SC_P_LAST_NAME && c->last_col < 0) c->last_col = i;
            }
        c->natural = SHAPE_GEN_STRING;
        break;
    }
    case SC_SEQUENCE: {
        double a, b;
        TRY(get_number(L, g, "start", 1, &a));
        TRY(get_number(L, g, "step", 1, &b));
        if (a != sc_floor(a) || b != sc_floor(b) || sc_fabs(a) > 9e15 || sc_fabs(b) > 9e15) return fail(L, "sequence start and step must be integers");
        c->start = (int64_t)a;
        c->step = (int64_t)b;
        c->natural = SHAPE_GEN_INT64;
        break;
    }
    case SC_UUID: c->natural = SHAPE_GEN_STRING; break;
    case SC_CONSTANT: {
        json_t *v = json_object_get(g, "value");
        if (!v) return fail(L, "constant needs 'value'");
        int rc = json_to_value(v, &c->constant, &c->constant_text);
        if (rc == -1) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
        if (rc) return fail(L, "constant 'value' must be a string, number, boolean or null");
        c->natural = c->constant.kind;
        if (c->kind == SHAPE_GEN_TIMESTAMP_NS && c->constant.kind == SHAPE_GEN_STRING) {
            int64_t ns;
            int d;
            if (parse_when(c->constant_text, &ns, &d) != 0) return fail(L, "constant timestamp must be ISO 8601");
            c->constant.kind = SHAPE_GEN_TIMESTAMP_NS;
            c->constant.v.i = ns;
            c->natural = SHAPE_GEN_TIMESTAMP_NS;
        }
        break;
    }
    case SC_CHOICE:
    case SC_WEIGHTED_ENUM:
    case SC_LIFECYCLE: TRY(parse_enum(L, c, g)); break;
    case SC_PATTERN: TRY(parse_pattern(L, t, self, c, g)); break;
    case SC_DISTRIBUTION: TRY(parse_distribution(L, c, g)); break;
    case SC_TEMPORAL: TRY(parse_temporal(L, c, g)); break;
    case SC_FOREIGN_KEY: TRY(parse_fk(L, ti, self, c, g)); break;
    case SC_LOOKUP: TRY(parse_lookup(L, ti, self, c, g)); break;
    case SC_DERIVED: TRY(parse_derived(L, ti, self, c, g)); break;
    case SC_CORRELATED: TRY(parse_correlated(L, ti, self, c, g)); break;
    case SC_FORMULA: {
        const char *ex = get_string(g, "expression");
        if (!ex) return fail(L, "formula needs 'expression'");
        if (strlen(ex) > 2000) return fail(L, "expression is longer than 2000 characters");
        if (sc_expr_compile(t, self, ex, &c->expr, L->err) != SHAPE_OK) {
            shape_err_prefix(L->err, "schema '%.60s'", L->s->name);
            return SHAPE_EINVAL;
        }
        c->natural = SHAPE_GEN_FLOAT64;
        break;
    }
    case SC_CONDITIONAL: TRY(parse_conditional(L, ti, self, c, g)); break;
    case SC_EMPIRICAL: TRY(parse_empirical(L, c, g)); break;
    case SC_CONDITIONAL_TABLE: TRY(parse_conditional_table(L, t, self, c, g)); break;
    case SC_COMPOSITE_FK_FIELD: TRY(parse_composite_field(L, t, self, c, g)); break;
    case SC_SCD2: TRY(parse_scd2(L, t, self, c, g)); break;
    case SC_HIERARCHY:
    case SC_HIERARCHY_FIELD:
    case SC_BOOTSTRAP:
    case SC_ADDRESS: TRY(parse_strat(L, ti, self, c, g)); break;
    case SC_FIRST_PER_PARENT: {
        TRY(earlier_col(L, t, self, g, "parent_column", 1, &c->parent_column));
        sc_column *fk = &t->cols[c->parent_column];
        if (fk->strategy != SC_FOREIGN_KEY)
            return fail(L, "parent_column '%s' must be a foreign_key column", fk->name);
        fk->allocated = 1;
        json_t *d = json_object_get(g, "default");
        if (d && !json_is_boolean(d)) return fail(L, "'default' must be true or false");
        c->invert = d && json_is_false(d);
        c->natural = SHAPE_GEN_BOOL;
        break;
    }
    case SC_COMPUTED: {
        const char *rule = get_string(g, "rule");
        if (!rule) rule = "sum_children";
        static const char *const rules[] = {"sum_children", "count_children", "avg_children", "min_children", "max_children"};
        c->rule = -1;
        for (int i = 0; i < 5; i++)
            if (strcmp(rules[i], rule) == 0) c->rule = i;
        if (c->rule < 0) {
            if (strcmp(rule, "lookup_parent") == 0)
                return fail(L, "computed rule lookup_parent: use the lookup strategy through the foreign key instead");
            return fail(L, "unknown computed rule '%.40s'; choose from sum_children, count_children, avg_children, "
                           "min_children, max_children", rule);
        }
        const char *ct = get_string(g, "child_table"), *cc = get_string(g, "child_column");
        if (!ct || !cc) return fail(L, "computed needs 'child_table' and 'child_column'");
        c->child_table = find_table(s, ct);
        if (c->child_table < 0) return fail(L, "computed over missing table '%.60s'", ct);
        sc_table *ch = &s->tables[c->child_table];
        c->child_col = find_col(ch, cc);
        if (c->child_col < 0) return fail(L, "computed over missing column '%.60s.%.60s'", ct, cc);
        c->child_fk = -1;
        for (size_t i = 0; i < ch->ncols && c->child_fk < 0; i++)
            if (ch->cols[i].strategy == SC_FOREIGN_KEY && ch->cols[i].ref_table == ti) c->child_fk = (int)i;
        if (c->child_fk < 0) return fail(L, "computed: '%s' has no foreign key to '%s'", ct, t->name);
        if (ch->cols[c->child_fk].ref_col != t->pk || t->pk < 0)
            return fail(L, "computed: the foreign key %s.%s must point at this table's primary key", ct, ch->cols[c->child_fk].name);
        ch->cols[c->child_fk].allocated = 1;
        int ck = ch->cols[c->child_col].kind;
        if (c->rule != SC_COUNT && ck != SHAPE_GEN_INT64 && ck != SHAPE_GEN_FLOAT64)
            return fail(L, "computed %s needs a numeric child_column", rule);
        c->natural = c->rule == SC_COUNT ? SHAPE_GEN_INT64 : c->rule == SC_AVG ? SHAPE_GEN_FLOAT64 : ck;
        break;
    }
    case SC_SELF_REFERENCING: {
        TRY(earlier_col(L, t, self, g, "pk_column", 1, &c->pk_column));
        double lv, rc;
        static const char *const lk[] = {"levels", "max_depth", NULL};
        TRY(get_number_any(L, g, lk, 3, &lv));
        if (lv < 1 || lv > 16 || lv != sc_floor(lv)) return fail(L, "levels must be an integer 1..16");
        c->levels = (int)lv;
        TRY(get_number(L, g, "root_count", -1, &rc));
        c->p1 = rc;
        c->natural = t->cols[c->pk_column].kind;
        break;
    }
    case SC_SELF_REF_FIELD: {
        const char *f = get_string(g, "field");
        if (f && strcmp(f, "level") != 0) return fail(L, "self_ref_field supports field \"level\"");
        c->src_col = -1;
        for (int i = 0; i < self; i++)
            if (t->cols[i].strategy == SC_SELF_REFERENCING) c->src_col = i;
        if (c->src_col < 0) return fail(L, "self_ref_field needs an earlier self_referencing column");
        c->natural = SHAPE_GEN_INT64;
        break;
    }
    case SC_REFERENCE_DATA:
    case SC_RECORD_SAMPLE: TRY(parse_reference(L, c, g)); c->unique = json_is_true(json_object_get(g, "unique")); break;
    case SC_RECORD_FIELD: {
        TRY(parse_reference(L, c, g));
        c->anchor = -1;
        for (size_t i = 0; i < t->ncols; i++)
            if (t->cols[i].strategy == SC_RECORD_SAMPLE && t->cols[i].dataset_index == c->dataset_index) c->anchor = (int)i;
        if (c->anchor < 0) return fail(L, "record_field needs a record_sample column of dataset '%s'", c->dataset->name);
        break;
    }
    }
    const char *ot = get_string(g, "output_type");
    if (ot) {
        int k = strcmp(ot, "int64") == 0 ? SHAPE_GEN_INT64 : strcmp(ot, "float64") == 0 || strcmp(ot, "decimal") == 0 ? SHAPE_GEN_FLOAT64
              : strcmp(ot, "bool") == 0 ? SHAPE_GEN_BOOL : strcmp(ot, "string") == 0 ? SHAPE_GEN_STRING
              : strcmp(ot, "timestamp") == 0 ? SHAPE_GEN_TIMESTAMP_NS : -1;
        if (k < 0) return fail(L, "output_type must be int64, float64, bool, string, decimal or timestamp");
        if (!compatible(c->natural, k)) return fail(L, "output_type %s cannot hold what %s produces (%s)", ot, info->name, shape_schema_type_name(c->natural));
        c->natural = (uint8_t)k;
    }
    if (!compatible(c->natural, c->kind))
        return fail(L, "strategy %s produces %s values, not %s; declare \"type\": \"%s\" or pick another strategy", info->name,
                    shape_schema_type_name(c->natural), shape_schema_type_name(c->kind), shape_schema_type_name(c->natural));
    return SHAPE_OK;
}

/* ---- business rules ---------------------------------------------------------------- */

/* "t.c" or "c" → table index (or -1 when no table part) and column name. */
static int rule_side(ld *L, const char *text, size_t len, int *table, char *col, size_t cap)
{
    while (len && text[0] == ' ') text++, len--;
    while (len && text[len - 1] == ' ') len--;
    if (len == 0 || len >= cap) return -1;
    const char *dot = memchr(text, '.', len);
    char tname[128];
    *table = -1;
    if (dot && !(text[0] >= '0' && text[0] <= '9') && text[0] != '-') {
        size_t tl = (size_t)(dot - text);
        if (tl >= sizeof tname) return -1;
        memcpy(tname, text, tl);
        tname[tl] = 0;
        *table = find_table(L->s, tname);
        if (*table < 0) return -2;
        text = dot + 1;
        len -= tl + 1;
    }
    memcpy(col, text, len);
    col[len] = 0;
    return 0;
}

static int parse_rules(ld *L, json_t *rules)
{
    sc_schema *s = L->s;
    for (size_t i = 0; i < json_array_size(rules); i++) {
        json_t *r = json_array_get(rules, i);
        const char *name = get_string(r, "name"), *type = get_string(r, "type"), *text = get_string(r, "rule");
        if (!name || !type || !text) return fail(L, "business rule %zu needs name, type and rule", i);
        int cross_table = strcmp(type, "cross_table") == 0, constraint = strcmp(type, "constraint") == 0;
        if (!cross_table && !constraint && strcmp(type, "cross_column") != 0) continue; /* other types: ignored, as the original */
        static const char *const ops[] = {"<=", ">=", "==", "<", ">"};
        const char *at = NULL;
        int op = -1;
        for (int k = 0; k < 5 && !at; k++)
            if ((at = strstr(text, ops[k])) != NULL) op = k;
        if (!at) return fail(L, "business rule '%.60s': '%.80s' needs one of >= <= > < ==", name, text);
        int oplen = op < 3 ? 2 : 1;
        int code = op == 0 ? 1 : op == 1 ? 3 : op == 3 ? 0 : op == 4 ? 2 : constraint ? 4 : -1;
        char lcol[128], rcol[128];
        int lt, rt;
        int e1 = rule_side(L, text, (size_t)(at - text), &lt, lcol, sizeof lcol);
        int e2 = rule_side(L, at + oplen, strlen(at + oplen), &rt, rcol, sizeof rcol);
        if (e1 || e2) return fail(L, "business rule '%.60s': '%.80s' names a missing table or does not parse", name, text);
        const char *tn = get_string(r, "table");
        if (lt < 0) lt = tn ? find_table(s, tn) : -1;
        if (lt < 0) return fail(L, "business rule '%.60s': name the table (\"table\" or table.column)", name);
        sc_table *t = &s->tables[lt];
        int lc = find_col(t, lcol);
        if (lc < 0) return fail(L, "business rule '%.60s': '%s' has no column '%.60s'", name, t->name, lcol);
        sc_column *c = &t->cols[lc];
        if (code < 0) continue; /* == is only checked */
        if (c->nrepairs == SC_MAX_REPAIRS) return fail(L, "business rule '%.60s': at most %d rules per column", name, SC_MAX_REPAIRS);
        sc_repair *rp = &c->repairs[c->nrepairs];
        memset(rp, 0, sizeof *rp);
        rp->op = code;
        rp->cross_table = cross_table;
        rp->constraint = constraint;
        rp->right_col = -1;
        if (constraint && rt >= 0 && rt != lt)
            return fail(L, "business rule '%.60s': a constraint compares a column with a number or an earlier column of its "
                           "table; use a cross_table rule for '%s'", name, s->tables[rt].name);
        char label[160];
        snprintf(label, sizeof label, "fix:%s", name);
        rp->s = shape_gen_stream_make(s->seed, t->name, c->name, label);
        if (cross_table) {
            const char *via = get_string(r, "via");
            if (rt < 0 || rt == lt) return fail(L, "business rule '%.60s': a cross_table rule compares table.column with another table's", name);
            if (code == 0) continue; /* the original repairs >=, > and <= across tables */
            int v = via ? find_col(t, via) : -1;
            if (v < 0 || t->cols[v].strategy != SC_FOREIGN_KEY || t->cols[v].ref_table != rt)
                return fail(L, "business rule '%.60s': 'via' must be a foreign key of %s to %s", name, t->name, s->tables[rt].name);
            rp->via = v;
            rp->right_table = rt;
            rp->right_col = find_col(&s->tables[rt], rcol);
            if (rp->right_col < 0) return fail(L, "business rule '%.60s': '%s' has no column '%.60s'", name, s->tables[rt].name, rcol);
        } else {
            if (!constraint && (code == 1 || code == 3)) continue; /* cross_column repairs < and > only */
            char *end;
            rp->right_num = strtod(rcol, &end);
            if (*end || end == rcol) {
                rp->right_col = find_col(t, rcol);
                if (rp->right_col < 0) return fail(L, "business rule '%.60s': '%s' has no column '%.60s'", name, t->name, rcol);
                if (rp->right_col >= lc)
                    return fail(L, "business rule '%.60s': '%s' is generated after '%s'; a rule compares with an earlier column", name,
                                rcol, lcol);
            }
        }
        int rk = rp->right_col < 0 ? SHAPE_GEN_FLOAT64
               : (cross_table ? s->tables[rt].cols[rp->right_col].kind : t->cols[rp->right_col].kind);
        if (constraint && code == 4 && rp->right_col < 0 && c->kind == SHAPE_GEN_INT64 && rp->right_num != sc_floor(rp->right_num))
            return fail(L, "business rule '%.60s': integer column '%s' can never equal %g; compare with a whole number", name,
                        c->name, rp->right_num);
        if ((c->kind == SHAPE_GEN_TIMESTAMP_NS) != (rk == SHAPE_GEN_TIMESTAMP_NS) || c->kind == SHAPE_GEN_STRING ||
            c->kind == SHAPE_GEN_BOOL || rk == SHAPE_GEN_STRING || rk == SHAPE_GEN_BOOL)
            return fail(L, "business rule '%.60s': compares %s with %s; both sides must be numbers or both timestamps", name,
                        shape_schema_type_name(c->kind), shape_schema_type_name(rk));
        c->nrepairs++;
    }
    return SHAPE_OK;
}

/* Which earlier columns of its row each column reads (see sc_column.need). */
static void column_needs(sc_schema *s)
{
    for (size_t ti = 0; ti < s->ntables; ti++) {
        sc_table *t = &s->tables[ti];
        for (size_t ci = 0; ci < t->ncols; ci++) {
            sc_column *c = &t->cols[ci];
            int deps[SHAPE_GEN_MAX_COLUMNS + 16], n = 0;
            switch (c->strategy) {
            case SC_FOREIGN_KEY:
                if (c->constrained_by >= 0) deps[n++] = c->constrained_by;
                break;
            case SC_PATTERN:
                for (size_t k = 0; k < c->ntokens; k++)
                    if (c->tokens[k].kind == 3 && n < SHAPE_GEN_MAX_COLUMNS) deps[n++] = c->tokens[k].col;
                break;
            case SC_LOOKUP: deps[n++] = c->via; break;
            case SC_DERIVED: deps[n++] = c->src_table >= 0 ? c->via : c->src_col; break;
            case SC_CORRELATED: deps[n++] = c->src_col; break;
            case SC_CONDITIONAL_TABLE: deps[n++] = c->src_col; break;
            case SC_COMPOSITE_FK_FIELD: deps[n++] = c->via; break;
            case SC_NATIVE:
                if (c->provider == SC_P_EMAIL) deps[n++] = c->first_col, deps[n++] = c->last_col;
                break;
            case SC_FORMULA: n = sc_expr_columns(&c->expr, deps, SHAPE_GEN_MAX_COLUMNS); break;
            case SC_CONDITIONAL:
                deps[n++] = c->src_col;
                for (int b = 0; b < 2; b++)
                    if (c->branch_lookup[b]) deps[n++] = c->bl_via[b];
                break;
            default: break;
            }
            for (int k = 0; k < c->nrepairs; k++) {
                const sc_repair *rp = &c->repairs[k];
                if (rp->cross_table) deps[n++] = rp->via;
                else if (rp->right_col >= 0) deps[n++] = rp->right_col;
            }
            c->need = 1u << ci;
            for (int k = 0; k < n; k++)
                if (deps[k] >= 0 && deps[k] < (int)ci) c->need |= t->cols[deps[k]].need;
        }
    }
}

/* For each computed total: the child columns that hold the same value in
 * every child of one parent (see sc_column.child_same). The child's key
 * column does (the allocation gives every child of row r the key of r);
 * so does a column without a draw of its own (no null rate, no repair, a
 * strategy that is a function of its inputs only) whose inputs all do. */
static void child_same_columns(sc_schema *s)
{
    for (size_t ti = 0; ti < s->ntables; ti++)
        for (size_t ci = 0; ci < s->tables[ti].ncols; ci++) {
            sc_column *c = &s->tables[ti].cols[ci];
            if (c->strategy != SC_COMPUTED || c->child_fk < 0) continue;
            const sc_table *ch = &s->tables[c->child_table];
            const sc_column *fk = &ch->cols[c->child_fk];
            c->child_same = 0;
            if (fk->null_rate > 0 || fk->nrepairs || !fk->allocated) continue;
            uint32_t same = 1u << c->child_fk;
            for (size_t k = 0; k < ch->ncols; k++) {
                const sc_column *x = &ch->cols[k];
                int pure = 0;
                switch (x->strategy) {
                case SC_CONSTANT:
                case SC_LOOKUP:
                case SC_CONDITIONAL:
                case SC_FORMULA:
                case SC_COMPOSITE_FK_FIELD: pure = 1; break;
                case SC_DERIVED: pure = !x->add_days || x->days_fixed != INT32_MIN; break;
                default: break;
                }
                if (pure && !(x->null_rate > 0) && x->nrepairs == 0 && (x->need & ~(1u << k) & ~same) == 0)
                    same |= 1u << k;
            }
            c->child_same = same;
        }
}

/* ---- the column properties and group order ------------------------------------- */

static int parse_column_props(ld *L, sc_column *c, const char *name, json_t *cj, int is_pk)
{
    static const char *const ck[] = {"name", "type", "generator", "nullable", "null_rate", "max_length", "precision",
                                     "scale", "identity", "description", NULL};
    L->column = name;
    if (!json_is_object(cj)) return fail(L, "must be an object with 'type' and 'generator'");
    TRY(check_keys(L, cj, ck, "column key"));
    if (!(c->name = dupstr(name))) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    const char *type = get_string(cj, "type");
    int k = type_kind(type);
    if (k < 0)
        return fail(L, "unknown type '%.40s'; use integer, float, decimal, string, boolean, date or timestamp", type ? type : "");
    c->kind = (uint8_t)k;
    json_t *nl = json_object_get(cj, "nullable");
    if (nl && !json_is_boolean(nl)) return fail(L, "'nullable' must be true or false");
    c->nullable = json_is_true(nl);
    TRY(get_number(L, cj, "null_rate", 0, &c->null_rate));
    if (c->null_rate < 0 || c->null_rate > 1) return fail(L, "null_rate %g is outside [0, 1]", c->null_rate);
    double sc, pr, ml;
    TRY(get_number(L, cj, "scale", -1, &sc));
    TRY(get_number(L, cj, "precision", 0, &pr));
    TRY(get_number(L, cj, "max_length", 0, &ml));
    if (sc != -1 && (sc < 0 || sc > 9 || sc != sc_floor(sc))) return fail(L, "scale must be an integer 0..9");
    if (pr != 0 && (pr < 1 || pr > 38 || pr != sc_floor(pr) || (sc > 0 && pr < sc)))
        return fail(L, "precision must be an integer 1..38, at least the scale");
    if (ml < 0 || ml != sc_floor(ml)) return fail(L, "max_length must be a whole number >= 0");
    c->scale = (int)sc;
    c->precision = (int)pr;
    c->max_length = (int)ml;
    json_t *g = json_object_get(cj, "generator");
    if (!g) return fail(L, "needs a 'generator' ({} for none)");
    if (!json_is_object(g)) return fail(L, "'generator' must be an object");
    const char *st = get_string(g, "strategy");
    if (!st) {
        if (json_object_size(g) != 0) return fail(L, "generator needs 'strategy'");
        c->strategy = SC_NONE;
        c->file_index = 3;
        return SHAPE_OK;
    }
    const struct strategy_info *info = strategy_by_name(st);
    if (!info) {
        return fail(L, "unknown strategy '%.40s'; use sequence, uuid, constant, choice, weighted_enum, lifecycle, pattern, "
                       "distribution, temporal, foreign_key, lookup, derived, correlated, formula, conditional, "
                       "first_per_parent, computed, self_referencing, self_ref_field, reference_data, record_sample, record_field, "
                       "native, empirical, conditional_table, composite_foreign_key, composite_fk_field, scd2, hierarchy, "
                       "hierarchy_field, bootstrap or address", st);
    }
    c->strategy = info->id;
    c->file_index = info->group;
    if (is_pk && (info->id == SC_SEQUENCE || info->id == SC_UUID)) c->file_index = 1;
    return SHAPE_OK;
}

static int build_table(ld *L, sc_table *t, json_t *tj)
{
    json_t *cols = json_object_get(tj, "columns");
    json_t *pkj = json_object_get(tj, "primary_key");
    const char *pk = json_is_array(pkj) ? json_string_value(json_array_get(pkj, 0)) : NULL;
    if (pkj && !json_is_array(pkj)) return fail(L, "'primary_key' must be a list of column names");
    size_t n = json_object_size(cols);
    if (n > SHAPE_GEN_MAX_COLUMNS) return fail(L, "has %zu columns; at most %d per table", n, SHAPE_GEN_MAX_COLUMNS);
    sc_column tmp[SHAPE_GEN_MAX_COLUMNS];
    memset(tmp, 0, sizeof tmp);
    for (size_t j = 0; j < SHAPE_GEN_MAX_COLUMNS; j++) tmp[j].file_index = 3;
    t->cols = calloc(n ? n : 1, sizeof *t->cols);
    if (!t->cols) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
    size_t i = 0;
    const char *k;
    json_t *cj;
    int rc = SHAPE_OK;
    json_object_foreach(cols, k, cj)
    {
        if (rc != SHAPE_OK) break;
        rc = parse_column_props(L, &tmp[i], k, cj, pk && strcmp(pk, k) == 0);
        i++;
    }
    /* group order, file order kept within a group */
    size_t o = 0;
    for (int grp = 1; grp <= 5; grp++)
        for (size_t j = 0; j < i; j++)
            if (tmp[j].file_index == grp) t->cols[o++] = tmp[j];
    t->ncols = o;
    L->column = NULL;
    if (rc != SHAPE_OK) return rc;
    t->pk = pk ? find_col(t, pk) : -1;
    if (pk && t->pk < 0) return fail(L, "primary key '%.60s' is not a column", pk);
    for (size_t j = 1; pkj && j < json_array_size(pkj); j++)
        if (find_col(t, json_string_value(json_array_get(pkj, j))) < 0) return fail(L, "primary key column is not a column");
    t->event_time_col = -1;
    for (size_t j = 0; j < t->ncols; j++) {
        t->out[j].name = t->cols[j].name;
        t->out[j].type = t->cols[j].kind;
        t->out[j].nullable = 0; /* set by may_be_null once every generator is read */
        if (t->event_time_col < 0 && t->cols[j].kind == SHAPE_GEN_TIMESTAMP_NS) t->event_time_col = (int)j;
    }
    return SHAPE_OK;
}

/* Which columns can hold a null (the registry formats make those optional):
 * a null_rate, no generator, a hierarchy's roots, a formula (NaN), and
 * whatever reads a column that can. A fixpoint over cross-table reads. */
static void may_be_null(sc_schema *s)
{
    for (int round = 0; round < 8; round++) {
        int changed = 0;
        for (size_t ti = 0; ti < s->ntables; ti++) {
            sc_table *t = &s->tables[ti];
            for (size_t ci = 0; ci < t->ncols; ci++) {
                const sc_column *c = &t->cols[ci];
                int n = c->null_rate > 0 || c->strategy == SC_NONE || c->strategy == SC_SELF_REFERENCING ||
                        c->strategy == SC_FORMULA;
                switch (c->strategy) {
                case SC_FOREIGN_KEY: n |= (c->constrained_by >= 0 && c->nullable) || c->ref_table == (int)ti; break;
                case SC_LOOKUP: {
                    const sc_column *via = &t->cols[c->via];
                    int by_fk = via->strategy == SC_FOREIGN_KEY && via->ref_table == c->src_table && via->ref_col == c->key_col;
                    /* through a key value, an unmatched key gives null */
                    n |= !by_fk || t->out[c->via].nullable || s->tables[c->src_table].out[c->src_col].nullable;
                    break;
                }
                case SC_DERIVED:
                    n |= c->src_table >= 0 ? s->tables[c->src_table].out[c->src_col].nullable || t->out[c->via].nullable
                                           : t->out[c->src_col].nullable;
                    break;
                case SC_CORRELATED: n |= t->out[c->src_col].nullable; break;
                case SC_CONDITIONAL_TABLE: n |= c->default_case < 0; break;
                case SC_COMPOSITE_FK_FIELD: n |= t->out[c->via].nullable || s->tables[c->src_table].out[c->src_col].nullable; break;
                case SC_SCD2: n |= c->scd_role == SC_SCD_TO; break;
                case SC_HIERARCHY:
                case SC_HIERARCHY_FIELD:
                case SC_BOOTSTRAP:
                case SC_ADDRESS: n |= sc_strat_may_be_null(c); break;
                case SC_CONSTANT: n |= c->constant.kind == SHAPE_GEN_NULL; break;
                case SC_CONDITIONAL:
                    n |= c->branch[0].kind == SHAPE_GEN_NULL || c->branch[1].kind == SHAPE_GEN_NULL || c->branch_lookup[0] ||
                         c->branch_lookup[1];
                    break;
                case SC_PATTERN:
                    for (size_t k = 0; k < c->ntokens; k++)
                        if (c->tokens[k].kind == 3) n |= t->out[c->tokens[k].col].nullable;
                    break;
                default: break;
                }
                if (n && !t->out[ci].nullable) t->out[ci].nullable = 1, changed = 1;
            }
        }
        if (!changed) break;
    }
}

/* ---- row counts ------------------------------------------------------------------- */

static int row_counts(ld *L, json_t *gen, const char *preset, size_t pi)
{
    sc_schema *s = L->s;
    int have[SC_MAX_TABLES] = {0};
    json_t *scales = json_object_get(gen, "scales");
    json_t *sc = json_object_get(scales, preset);
    const char *k;
    json_t *v;
    if (sc) {
        if (!json_is_object(sc)) return fail(L, "generation.scales.%s must be an object {table: rows}", preset);
        json_object_foreach(sc, k, v)
        {
            int t = find_table(s, k);
            if (t < 0) return fail(L, "generation.scales.%s names missing table '%.60s'", preset, k);
            if (!json_is_integer(v) || json_integer_value(v) < 0)
                return fail(L, "generation.scales.%s.%s must be an integer >= 0", preset, k);
            s->tables[t].rows[pi] = (uint64_t)json_integer_value(v);
            have[t] = 1;
        }
    }
    json_t *dc = json_object_get(gen, "derived_counts");
    if (dc && !json_is_object(dc)) return fail(L, "generation.derived_counts must be an object");
    json_object_foreach(dc, k, v)
    {
        int t = find_table(s, k);
        L->table = k;
        if (t < 0) return fail(L, "derived_counts names a missing table");
        static const char *const dk[] = {"fixed", "per_parent", "ratio", "mean", "per_year", NULL};
        if (!json_is_object(v)) return fail(L, "derived_counts rule must be an object");
        TRY(check_keys(L, v, dk, "derived_counts key"));
        json_t *fx = json_object_get(v, "fixed");
        const char *pp = get_string(v, "per_parent");
        json_t *py = json_object_get(v, "per_year");
        if (fx) {
            if (!json_is_integer(fx) || json_integer_value(fx) < 0) return fail(L, "derived_counts 'fixed' must be an integer >= 0");
            s->tables[t].rows[pi] = (uint64_t)json_integer_value(fx);
        } else if (pp) {
            int p = find_table(s, pp);
            if (p < 0) return fail(L, "derived_counts per_parent names missing table '%.60s'", pp);
            double r;
            static const char *const rk[] = {"ratio", "mean", NULL};
            TRY(get_number_any(L, v, rk, 1, &r));
            if (r < 0) return fail(L, "derived_counts ratio must be >= 0");
            double base = have[p] ? (double)s->tables[p].rows[pi] : 100.0;
            s->tables[t].rows[pi] = (uint64_t)sc_floor(base * r);
        } else if (py) {
            if (!json_is_integer(py) || json_integer_value(py) < 0) return fail(L, "derived_counts per_year must be an integer >= 0");
            if (!s->has_range) return fail(L, "derived_counts per_year needs model.date_range");
            int64_t y0, y1;
            unsigned m, d;
            shape_civil_from_days(s->range_start_ns / SHAPE_GEN_NS_PER_DAY, &y0, &m, &d);
            shape_civil_from_days((s->range_end_ns - 1) / SHAPE_GEN_NS_PER_DAY, &y1, &m, &d);
            s->tables[t].rows[pi] = (uint64_t)json_integer_value(py) * (uint64_t)(y1 - y0 + 1);
        } else
            return fail(L, "derived_counts rule needs fixed, per_parent or per_year");
        have[t] = 1;
    }
    L->table = NULL;
    for (size_t t = 0; t < s->ntables; t++)
        if (!have[t]) s->tables[t].rows[pi] = 100;
    return SHAPE_OK;
}

/* ---- pass 5: per-seed state and checks ---------------------------------------------- */

static int prepare_columns(ld *L, size_t pi)
{
    sc_schema *s = L->s;
    for (size_t ti = 0; ti < s->ntables; ti++) {
        sc_table *t = &s->tables[ti];
        L->table = t->name;
        int first_alloc = 1;
        for (size_t ci = 0; ci < t->ncols; ci++) {
            sc_column *c = &t->cols[ci];
            L->column = c->name;
            c->s = shape_gen_stream_make(s->seed, t->name, c->name, "v");
            c->s_null = shape_gen_stream_make(s->seed, t->name, c->name, "null");
            uint64_t n = t->rows[pi];
            if (c->strategy == SC_FOREIGN_KEY) {
                uint64_t parents = s->tables[c->ref_table].rows[pi];
                if (n > 0 && parents == 0) return fail(L, "foreign key into '%s', which has 0 rows at this scale", s->tables[c->ref_table].name);
                if (c->ref_table == (int)ti && c->allocated) return fail(L, "a self reference cannot have its children counted");
                if (c->ref_table == (int)ti && (c->fan_shape || c->sample_rate > 0 || c->constrained_by >= 0))
                    return fail(L, "a self reference draws its parent uniformly among the earlier rows; drop fan_out, sample_rate "
                                   "and constrained_by (or use self_referencing for levels)");
                if (c->allocated && (c->fan_shape || c->sample_rate > 0))
                    return fail(L, "fan_out and sample_rate cannot be used on a key whose children are counted (a computed "
                                   "total, first_per_parent, scd2 or max_per_parent reads it); use distribution zipf or pareto");
                if (c->sample_rate > 0 && parents) {
                    c->sample_m = (uint64_t)sc_floor((double)parents * c->sample_rate);
                    if (c->sample_m < 1) c->sample_m = 1;
                    if (c->sample_m > parents) c->sample_m = parents;
                    shape_gen_perm_init(&c->sample_perm, parents, shape_gen_stream_make(s->seed, t->name, c->name, "sample"));
                }
                if (c->fan_shape && parents) {
                    c->fan_top = (uint64_t)sc_floor((double)parents * c->fan_frac + 0.5);
                    if (c->fan_top < 1) c->fan_top = 1;
                    shape_gen_perm_init(&c->fan_perm, parents, shape_gen_stream_make(s->seed, t->name, c->name, "fan_out"));
                }
                if (c->fk_mode == SC_FK_ZIPF && !c->allocated) {
                    c->zipf = calloc(1, sizeof *c->zipf);
                    if (!c->zipf) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
                    shape_err e;
                    if (parents && shape_gen_zipf_init(c->zipf, parents, c->alpha, &e) != SHAPE_OK) return fail(L, "%s", e.message);
                }
                if (c->allocated && parents) {
                    double q[SHAPE_GEN_ALLOC_MAX_K + 1];
                    double mean = (double)n / (double)parents;
                    uint32_t cap = c->max_per_parent ? (uint32_t)c->max_per_parent : SHAPE_GEN_ALLOC_MAX_K;
                    if (c->max_per_parent && mean > cap)
                        return fail(L, "%llu rows over %llu parents is %.1f per parent, above the cap of %u; lower the row "
                                       "count or raise max_per_parent", (unsigned long long)n, (unsigned long long)parents, mean, cap);
                    /* many children per parent: allocate them `unit` at a time */
                    c->nchildren = n;
                    c->unit = !c->max_per_parent && mean > 100 ? (uint64_t)(mean / 50) + 1 : 1;
                    c->units = n / c->unit;
                    n = c->units;
                    mean = (double)n / (double)parents;
                    if (c->fk_mode == SC_FK_UNIFORM) {
                        uint32_t kmax = (uint32_t)(mean + 6 * shape_gen_sqrt(mean) + 8);
                        if (kmax > cap) kmax = cap;
                        shape_gen_poisson_counts(q, kmax, mean);
                        cap = kmax;
                    } else
                        shape_gen_pareto_counts(q, cap, mean, c->alpha, 0.995, NULL, 0);
                    c->alloc = calloc(1, sizeof *c->alloc);
                    if (!c->alloc) return shape_err_set(L->err, SHAPE_ENOMEM, "out of memory");
                    shape_err e;
                    if (shape_gen_alloc_init(c->alloc, parents, n, q, cap, &e) != SHAPE_OK) return fail(L, "%s", e.message);
                    shape_gen_perm_init(&c->parent_perm, parents, shape_gen_stream_make(s->seed, t->name, c->name, "parents"));
                    c->alloc_perm_children = !first_alloc;
                    shape_gen_perm_init(&c->child_perm, c->nchildren ? c->nchildren : 1, shape_gen_stream_make(s->seed, t->name, c->name, "children"));
                    first_alloc = 0;
                }
            }
            if (c->strategy == SC_SELF_REFERENCING) {
                uint64_t L1 = c->p1 >= 0 ? (uint64_t)c->p1 : n / 10;
                uint64_t hi = n / (uint64_t)c->levels;
                if (L1 > hi) L1 = hi;
                if (L1 < 1) L1 = 1;
                if (L1 > n) L1 = n;
                c->level_end[0] = L1;
                uint64_t rest = n - L1;
                int lv = c->levels - 1;
                uint64_t used = L1;
                for (int l = 1; l < c->levels; l++) {
                    uint64_t share = lv ? rest / (uint64_t)lv + ((uint64_t)(l - 1) < rest % (uint64_t)lv ? 1 : 0) : 0;
                    used += share;
                    c->level_end[l] = used;
                }
                if (c->levels == 1) c->level_end[0] = n;
            }
            if (c->strategy == SC_SCD2) {
                const sc_column *bk = &t->cols[c->business_key];
                c->scd_s = shape_gen_stream_make(s->seed, t->name, bk->name, "scd2");
                if (bk->alloc) {
                    /* the most versions one entity can have, each at least min_gap_days + 1 wide */
                    uint64_t kmax = bk->alloc->block.ngroups ? bk->alloc->block.k[0] : 0;
                    if (bk->alloc->tail.ngroups && bk->alloc->tail.k[0] > kmax) kmax = bk->alloc->tail.k[0];
                    kmax = kmax * bk->unit + (bk->nchildren - bk->units * bk->unit);
                    if (kmax * (uint64_t)(c->scd_gap + 1) > (uint64_t)c->scd_days)
                        return fail(L, "an entity of '%s' can have up to %llu versions, which %lld days cannot hold %d days "
                                       "apart; widen the range, lower min_gap_days, or give the key max_per_parent",
                                    bk->name, (unsigned long long)kmax, (long long)c->scd_days, c->scd_gap);
                }
            }
            if (c->strategy == SC_RECORD_SAMPLE && c->unique) {
                if (n > c->dataset->n) return fail(L, "unique record_sample needs no more rows (%llu) than records (%zu)",
                                                   (unsigned long long)n, c->dataset->n);
                shape_gen_perm_init(&c->record_perm, c->dataset->n, shape_gen_stream_make(s->seed, t->name, c->name, "unique"));
            }
        }
        L->column = NULL;
    }
    L->table = NULL;
    return SHAPE_OK;
}

/* Cross-table reads form no cycle: node (t, c) reads (t, c-1) and what its
 * strategy reads in other tables. Colours: 0 new, 1 on the path, 2 done. */
static int visit(ld *L, uint8_t *colour, int t, int c)
{
    sc_schema *s = L->s;
    uint8_t *me = &colour[t * SHAPE_GEN_MAX_COLUMNS + c];
    if (*me == 2) return SHAPE_OK;
    if (*me == 1) {
        L->table = s->tables[t].name;
        L->column = s->tables[t].cols[c].name;
        return fail(L, "is part of a dependency cycle across tables (a lookup, derived or computed column that reads "
                       "itself back); break the cycle");
    }
    *me = 1;
    const sc_column *col = &s->tables[t].cols[c];
    if (c > 0) TRY(visit(L, colour, t, c - 1));
    switch (col->strategy) {
    case SC_FOREIGN_KEY:
        if (col->ref_table != t) TRY(visit(L, colour, col->ref_table, col->ref_col));
        if (col->constrained_by >= 0) TRY(visit(L, colour, col->ref_table, col->constrained_pcol));
        break;
    case SC_LOOKUP: TRY(visit(L, colour, col->src_table, col->src_col)); break;
    case SC_DERIVED:
        if (col->src_table >= 0) TRY(visit(L, colour, col->src_table, col->src_col));
        break;
    case SC_COMPUTED: TRY(visit(L, colour, col->child_table, col->child_col)); break;
    case SC_COMPOSITE_FK_FIELD:
        if (col->src_table != t) TRY(visit(L, colour, col->src_table, col->src_col));
        break;
    case SC_CONDITIONAL:
        for (int b = 0; b < 2; b++)
            if (col->branch_lookup[b]) TRY(visit(L, colour, col->bl_table[b], col->bl_col[b]));
        break;
    default: break;
    }
    for (int k = 0; k < col->nrepairs; k++)
        if (col->repairs[k].cross_table) TRY(visit(L, colour, col->repairs[k].right_table, col->repairs[k].right_col));
    *me = 2;
    return SHAPE_OK;
}

/* ---- the document ------------------------------------------------------------------- */

static int order_tables(ld *L, raw_table *raw, size_t n, int *order)
{
    int done[SC_MAX_TABLES] = {0};
    for (size_t k = 0; k < n; k++) {
        int best = -1;
        for (size_t i = 0; i < n; i++) {
            if (done[i]) continue;
            int ready = 1;
            for (int d = 0; d < raw[i].ndeps; d++)
                if (!done[raw[i].deps[d]]) ready = 0;
            if (ready && (best < 0 || strcmp(raw[i].name, raw[best].name) < 0)) best = (int)i;
        }
        if (best < 0) {
            for (size_t i = 0; i < n; i++)
                if (!done[i]) {
                    L->table = raw[i].name;
                    return fail(L, "foreign keys form a cycle through this table; make one of them a lookup or drop it");
                }
        }
        done[best] = 1;
        order[k] = best;
    }
    return SHAPE_OK;
}

int sc_schema_load(const char *text, size_t len, const char *dir, const char *preset, uint64_t seed, int use_seed,
                   const sc_schema *shared, sc_schema **out, shape_err *err)
{
    *out = NULL;
    sc_schema *s = calloc(1, sizeof *s);
    if (!s) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    s->name = dupstr("?");
    s->dir = dupstr(dir ? dir : ".");
    s->fingerprint = shape_gen_hash(text, len);
    ld Lv = {.s = s, .err = err, .shared = shared};
    ld *L = &Lv;
    int rc = SHAPE_OK;
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    s->root = root;
    raw_table raw[SC_MAX_TABLES];
    memset(raw, 0, sizeof raw);
    if (!root) {
        rc = shape_err_set(err, SHAPE_EINVAL, "schema is not valid JSON: line %d, column %d: %s", je.line, je.column, je.text);
        goto done;
    }
    if (!json_is_object(root)) {
        rc = fail(L, "the schema must be a JSON object");
        goto done;
    }
    static const char *const rk[] = {"schema_version", "model", "tables", "relationships", "business_rules",
                                     "generation", "correlated_columns", "generators", NULL};
    json_t *model = json_object_get(root, "model");
    if (json_is_string(json_object_get(model, "name"))) {
        free(s->name);
        s->name = dupstr(json_string_value(json_object_get(model, "name")));
    }
    if ((rc = check_keys(L, root, rk, "top-level key")) != SHAPE_OK) goto done;
    json_t *ver = json_object_get(root, "schema_version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        rc = fail(L, "\"schema_version\" must be 1");
        goto done;
    }
    if (!json_is_object(model) || !json_is_string(json_object_get(model, "name")) || !json_string_length(json_object_get(model, "name"))) {
        rc = fail(L, "\"model\" must be an object with a \"name\"");
        goto done;
    }
    static const char *const mk[] = {"name", "description", "domain", "schema_mode", "locale", "seed", "date_range", NULL};
    if ((rc = check_keys(L, model, mk, "model key")) != SHAPE_OK) goto done;
    json_t *sj = json_object_get(model, "seed");
    if (sj && (!json_is_integer(sj) || json_integer_value(sj) < 0)) {
        rc = fail(L, "model.seed must be an integer >= 0");
        goto done;
    }
    s->seed = use_seed ? seed : sj ? (uint64_t)json_integer_value(sj) : 42;
    json_t *dr = json_object_get(model, "date_range");
    if (dr && json_object_size(dr)) {
        if ((rc = read_range(L, dr, &s->range_start_ns, &s->range_end_ns)) != SHAPE_OK) goto done;
        s->has_range = 1;
    }
    json_t *tables = json_object_get(root, "tables");
    if (!json_is_object(tables) || json_object_size(tables) == 0) {
        rc = fail(L, "\"tables\" must be a non-empty object {name: table}");
        goto done;
    }
    size_t nt = json_object_size(tables);
    if (nt > SC_MAX_TABLES) {
        rc = fail(L, "has %zu tables; at most %d", nt, SC_MAX_TABLES);
        goto done;
    }
    /* pass 2: tables and their dependency edges */
    size_t n = 0;
    const char *k;
    json_t *tj;
    json_object_foreach(tables, k, tj)
    {
        raw[n].name = k;
        raw[n].json = tj;
        n++;
    }
    for (size_t i = 0; i < n; i++) {
        L->table = raw[i].name;
        static const char *const tk[] = {"name", "columns", "primary_key", "description", "cdm_mapping", NULL};
        if (!json_is_object(raw[i].json)) {
            rc = fail(L, "must be an object with \"columns\"");
            goto done;
        }
        if ((rc = check_keys(L, raw[i].json, tk, "table key")) != SHAPE_OK) goto done;
        if (strchr(raw[i].name, '/') || strchr(raw[i].name, '.') || !raw[i].name[0]) {
            rc = fail(L, "table names must be plain names (no '/' or '.')");
            goto done;
        }
        json_t *cols = json_object_get(raw[i].json, "columns");
        if (!json_is_object(cols) || json_object_size(cols) == 0) {
            rc = fail(L, "needs at least one column in \"columns\"");
            goto done;
        }
        const char *cn;
        json_t *cj;
        json_object_foreach(cols, cn, cj)
        {
            json_t *g = json_object_get(cj, "generator");
            const char *st = get_string(g, "strategy");
            if (!st || (strcmp(st, "foreign_key") != 0 && strcmp(st, "composite_foreign_key") != 0)) continue;
            char tname[128];
            const char *col;
            L->column = cn;
            if (split_ref(get_string(g, "ref"), tname, sizeof tname, &col) != 0) {
                rc = fail(L, "foreign_key needs 'ref': \"table.column\"");
                goto done;
            }
            int p = find_raw(raw, n, tname);
            if (p < 0) {
                rc = fail(L, "foreign key to missing table '%.60s'; name a table of the schema", tname);
                goto done;
            }
            if (p != (int)i) add_dep(&raw[i], p);
        }
        L->column = NULL;
    }
    L->table = NULL;
    json_t *rels = json_object_get(root, "relationships");
    if (rels && !json_is_array(rels)) {
        rc = fail(L, "\"relationships\" must be a list");
        goto done;
    }
    for (size_t i = 0; i < json_array_size(rels); i++) {
        json_t *r = json_array_get(rels, i);
        const char *pn = get_string(r, "parent"), *cn = get_string(r, "child");
        int p = find_raw(raw, n, pn), c = find_raw(raw, n, cn);
        if (!pn || !cn || !get_string(r, "name")) {
            rc = fail(L, "relationship %zu needs name, parent and child", i);
            goto done;
        }
        if (p < 0 || c < 0) {
            rc = fail(L, "relationship '%.60s' names a missing table '%.60s'", get_string(r, "name"), p < 0 ? pn : cn);
            goto done;
        }
        if (p != c) add_dep(&raw[c], p);
    }
    json_t *rules = json_object_get(root, "business_rules");
    for (size_t i = 0; i < json_array_size(rules); i++) {
        const char *rt = get_string(json_array_get(rules, i), "table");
        if (rt && find_raw(raw, n, rt) < 0) {
            rc = fail(L, "business rule '%.60s' names a missing table '%.60s'", get_string(json_array_get(rules, i), "name"), rt);
            goto done;
        }
    }
    /* pass 3 */
    int order[SC_MAX_TABLES];
    if ((rc = order_tables(L, raw, n, order)) != SHAPE_OK) goto done;
    s->tables = calloc(n, sizeof *s->tables);
    if (!s->tables) {
        rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        goto done;
    }
    s->ntables = n;
    for (size_t i = 0; i < n; i++) {
        s->tables[i].name = dupstr(raw[order[i]].name);
        L->tables_json[i] = raw[order[i]].json;
    }
    /* pass 4 */
    for (size_t i = 0; i < n; i++) {
        L->table = s->tables[i].name;
        if ((rc = build_table(L, &s->tables[i], L->tables_json[i])) != SHAPE_OK) goto done;
    }
    /* foreign keys first: computed totals and lookups read them */
    for (int fkpass = 1; fkpass >= 0; fkpass--)
        for (size_t i = 0; i < n; i++) {
            L->table = s->tables[i].name;
            for (size_t c = 0; c < s->tables[i].ncols; c++)
                if ((s->tables[i].cols[c].strategy == SC_FOREIGN_KEY) == fkpass &&
                    (rc = parse_generator(L, (int)i, (int)c)) != SHAPE_OK)
                    goto done;
            L->column = NULL;
        }
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < s->tables[i].ncols; c++) {
            char msg[400];
            L->table = s->tables[i].name;
            L->column = s->tables[i].cols[c].name;
            if (sc_strat_link(s, (int)i, (int)c, msg, sizeof msg) != 0) {
                rc = fail(L, "%s", msg);
                goto done;
            }
        }
    L->table = L->column = NULL;
    if ((rc = parse_rules(L, rules)) != SHAPE_OK) goto done;
    {
        char msg[400];
        const char *ct, *cc;
        int crc = sc_copula_parse(s, root, msg, sizeof msg, &ct, &cc);
        if (crc == -2) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        else if (crc) {
            L->table = ct;
            L->column = cc;
            rc = fail(L, "%s", msg);
        }
        L->table = L->column = NULL;
        if (rc != SHAPE_OK) goto done;
    }
    column_needs(s);
    child_same_columns(s);
    may_be_null(s);
    /* presets */
    json_t *gen = json_object_get(root, "generation");
    if (gen && !json_is_object(gen)) {
        rc = fail(L, "\"generation\" must be an object");
        goto done;
    }
    static const char *const gk[] = {"scale", "scales", "derived_counts", "output", NULL};
    if (gen && (rc = check_keys(L, gen, gk, "generation key")) != SHAPE_OK) goto done;
    const char *def = get_string(gen, "scale");
    if (!def) def = "small";
    json_t *scales = json_object_get(gen, "scales");
    if (scales && !json_is_object(scales)) {
        rc = fail(L, "generation.scales must be an object {preset: {table: rows}}");
        goto done;
    }
    json_t *pv;
    json_object_foreach(scales, k, pv)
    {
        (void)pv;
        if (s->npresets < SC_MAX_PRESETS) s->presets[s->npresets++] = dupstr(k);
    }
    s->default_preset = -1;
    for (size_t i = 0; i < s->npresets; i++)
        if (strcmp(s->presets[i], def) == 0) s->default_preset = (int)i;
    if (s->default_preset < 0 && s->npresets < SC_MAX_PRESETS) {
        s->presets[s->npresets] = dupstr(def);
        s->default_preset = (int)s->npresets++;
    }
    size_t pi = (size_t)s->default_preset;
    if (preset) {
        int found = -1;
        for (size_t i = 0; i < s->npresets; i++)
            if (strcmp(s->presets[i], preset) == 0) found = (int)i;
        if (found < 0) {
            rc = shape_err_set(err, SHAPE_ENOTFOUND, "schema '%s' has no scale '%.40s'", s->name, preset);
            goto done;
        }
        pi = (size_t)found;
    }
    s->preset = pi;
    if ((rc = row_counts(L, gen, s->presets[pi], pi)) != SHAPE_OK) goto done;
    if ((rc = prepare_columns(L, pi)) != SHAPE_OK) goto done;
    uint8_t *colour = calloc(n * SHAPE_GEN_MAX_COLUMNS, 1);
    if (!colour) {
        rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++)
        if (s->tables[i].ncols) rc = visit(L, colour, (int)i, (int)s->tables[i].ncols - 1);
    free(colour);
    if (rc == SHAPE_OK) sc_plan_columns(s); /* last: it reads what prepare_columns made for the preset */
done:
    if (rc != SHAPE_OK) {
        sc_schema_free(s);
        return rc;
    }
    *out = s;
    return SHAPE_OK;
}

static void free_column(sc_column *c)
{
    free(c->name);
    free(c->constant_text);
    for (size_t i = 0; c->labels && i < c->nlabels; i++) free(c->labels[i]);
    free(c->labels);
    free(c->label_num);
    free(c->label_len);
    free(c->pattern);
    free(c->tokens);
    free(c->zipf);
    free(c->gcdf);
    if (c->seasonal) shape_gen_seasonal_free(&c->season);
    free(c->alloc);
    sc_expr_free(&c->expr);
    free(c->cond_text);
    free(c->branch_text[0]);
    free(c->branch_text[1]);
    free(c->field);
    free(c->rec_values);
    free(c->eq);
    free(c->ex);
    for (size_t i = 0; c->cases && i < c->ncases; i++) free_column(&c->cases[i]);
    free(c->cases);
    sc_strat_free(c);
}

void sc_schema_free(sc_schema *s)
{
    if (!s) return;
    for (size_t t = 0; t < s->ntables; t++) {
        for (size_t c = 0; c < s->tables[t].ncols; c++) free_column(&s->tables[t].cols[c]);
        free(s->tables[t].cols);
        free(s->tables[t].name);
        sc_copula_free(&s->tables[t]);
    }
    free(s->tables);
    for (size_t i = 0; i < s->ndatasets; i++) {
        free(s->datasets[i].name);
        json_decref(s->datasets[i].json);
    }
    free(s->datasets);
    for (size_t i = 0; i < s->npresets; i++) free(s->presets[i]);
    json_decref(s->root);
    free(s->name);
    free(s->dir);
    free(s);
}

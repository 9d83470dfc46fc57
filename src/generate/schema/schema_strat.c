/* schema_strat.c — the generation-schema strategies that read a dataset as a
 * whole structure (hierarchy, hierarchy_field, bootstrap, address), the
 * Gaussian copula of `correlated_columns`, and the `constraint` rules.
 *
 * Why: the original (reference/generation-schema.md 3, 4) defines these over
 * whole tables: a hierarchical walk of a reference dataset, a resample of its
 * rows, coherent addresses from a scope, a reorder of a finished table by the
 * ranks of correlated normals, a check of every row after the fact. Here
 * every value stays a pure function of (seed, table, column, row), so a row
 * is generated on its own, in bounded memory, the same on every run.
 * How: everything a row needs is built once at load, from the dataset only
 * (never from other rows): a tree of the dataset's levels with a cumulative
 * weight per node; the field's spread for the bootstrap jitter; per address
 * scope entry, the list of places it covers; the Cholesky factor of a
 * table's correlation matrix. A row then walks the tree with one uniform per
 * level, picks a source record, a place, or mixes k independent normals of
 * the row into correlated ones and feeds each column's inverse CDF with
 * Phi(z) — so each column keeps its own distribution exactly and the pair
 * its rank correlation, which is what the original's reorder produces. A
 * `constraint` is kept row by row: a violating value is repaired as the
 * original repairs a cross_column rule, or moved to the nearest value that
 * keeps the rule. docs/DOMAINS.md says what differs from the original.
 */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "../data/gen_data.h"
#include "schema_internal.h"

static int say(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int say(char *msg, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return -1;
}

#define NOMEM (-2)

/* A dataset value as text (strings as they are, anything else as compact
 * JSON); NULL when out of memory. */
static char *value_text(json_t *v)
{
    if (!v || json_is_null(v)) return strdup("");
    if (json_is_string(v)) return strdup(json_string_value(v));
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static int natural_of(json_t *v)
{
    return json_is_integer(v) ? SHAPE_GEN_INT64 : json_is_number(v) ? SHAPE_GEN_FLOAT64
         : json_is_boolean(v) ? SHAPE_GEN_BOOL : SHAPE_GEN_STRING;
}

/* A dataset value; text where the column's first record held no text is
 * null (a dataset whose records disagree on a field's type). */
static void json_value(json_t *v, shape_gen_value *out, int natural)
{
    memset(out, 0, sizeof *out);
    if (json_is_string(v)) out->kind = SHAPE_GEN_STRING, out->v.s = json_string_value(v), out->len = (uint32_t)json_string_length(v);
    else if (json_is_integer(v)) out->kind = SHAPE_GEN_INT64, out->v.i = json_integer_value(v);
    else if (json_is_number(v)) out->kind = SHAPE_GEN_FLOAT64, out->v.f = json_number_value(v);
    else if (json_is_boolean(v)) out->kind = SHAPE_GEN_BOOL, out->v.b = json_is_true(v);
    if (out->kind == SHAPE_GEN_STRING && natural != SHAPE_GEN_STRING) out->kind = SHAPE_GEN_NULL, out->len = 0;
}

/* Would json_value give a null for v. */
static int gives_null(json_t *v, int natural)
{
    return !v || json_is_null(v) || json_is_array(v) || json_is_object(v) || (json_is_string(v) && natural != SHAPE_GEN_STRING);
}

/* The dataset must hold records that have `field` (the first one is the
 * schema: its value's type is the column's). */
static int record_field_type(const sc_dataset *d, const char *field, int *natural, char *msg, size_t cap)
{
    json_t *first = json_array_get(d->json, 0);
    if (!json_is_object(first)) return say(msg, cap, "dataset '%s' holds strings; %s needs records (JSON objects)", d->name, "this strategy");
    json_t *v = json_object_get(first, field);
    if (!v) return say(msg, cap, "dataset '%s' records have no field '%.60s'", d->name, field);
    *natural = natural_of(v);
    return 0;
}

/* ---- hierarchy ------------------------------------------------------------------ */

#define SC_HIER_MAX_LEVELS 8

typedef struct sc_hier {
    int nlevels;
    uint32_t nnodes[SC_HIER_MAX_LEVELS];
    double *cum[SC_HIER_MAX_LEVELS];         /* cumulative weight over the level's nodes, in node order */
    uint32_t *first_child[SC_HIER_MAX_LEVELS]; /* level d >= 1: the first child (at d) of each node of d - 1 */
    uint32_t *nchild[SC_HIER_MAX_LEVELS];
    uint32_t *leaf_first, *leaf_count;       /* a leaf's records: order[leaf_first .. + leaf_count) */
    uint32_t *order;                         /* record indices sorted by their path */
    shape_gen_stream s[SC_HIER_MAX_LEVELS + 1]; /* one per level, one for the record under the leaf */
    char *field;
    int anchor; /* hierarchy_field: the anchor column (resolved by sc_strat_link) */
    int is_field;
} sc_hier;

typedef struct path_keys {
    char **keys; /* keys[rec * nlevels + level] */
    int nlevels;
} path_keys;

static int cmp_path(const void *a, const void *b, void *arg)
{
    const path_keys *pk = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    for (int l = 0; l < pk->nlevels; l++) {
        int c = strcmp(pk->keys[(size_t)x * pk->nlevels + l], pk->keys[(size_t)y * pk->nlevels + l]);
        if (c) return c;
    }
    return (x > y) - (x < y);
}

static void hier_free(sc_hier *h)
{
    if (!h) return;
    for (int l = 0; l < SC_HIER_MAX_LEVELS; l++) free(h->cum[l]), free(h->first_child[l]), free(h->nchild[l]);
    free(h->leaf_first);
    free(h->leaf_count);
    free(h->order);
    free(h->field);
    free(h);
}

static int hier_build(const sc_schema *s, const sc_table *t, const sc_column *c, sc_hier *h, json_t *g, char *msg, size_t cap)
{
    const sc_dataset *d = c->dataset;
    json_t *levels = json_object_get(g, "levels");
    if (!json_is_array(levels) || json_array_size(levels) == 0 || json_array_size(levels) > SC_HIER_MAX_LEVELS)
        return say(msg, cap, "hierarchy needs 'levels': 1..%d fields of dataset '%s' to walk, top first (e.g. [\"state\", \"city\", \"zip\"])",
                   SC_HIER_MAX_LEVELS, d->name);
    int L = (int)json_array_size(levels);
    const char *names[SC_HIER_MAX_LEVELS];
    for (int l = 0; l < L; l++) {
        names[l] = json_string_value(json_array_get(levels, (size_t)l));
        if (!names[l]) return say(msg, cap, "hierarchy 'levels' must hold field names (strings)");
        for (int k = 0; k < l; k++)
            if (strcmp(names[k], names[l]) == 0) return say(msg, cap, "hierarchy level '%.60s' is given twice; the levels are different fields", names[l]);
        int nat;
        if (record_field_type(d, names[l], &nat, msg, cap)) return -1;
    }
    const char *wt = json_string_value(json_object_get(g, "weighting"));
    if (json_object_get(g, "weighting") && (!wt || (strcmp(wt, "records") && strcmp(wt, "uniform"))))
        return say(msg, cap, "hierarchy 'weighting' must be records or uniform");
    int uniform = wt && strcmp(wt, "uniform") == 0;
    json_t *top = json_object_get(g, "top_weights");
    if (top && !json_is_object(top)) return say(msg, cap, "hierarchy 'top_weights' must be an object {value of %s: weight}", names[0]);
    const char *k;
    json_t *v;
    json_object_foreach(top, k, v)
    {
        if (!json_is_number(v) || !(json_number_value(v) >= 0) || !isfinite(json_number_value(v)))
            return say(msg, cap, "hierarchy top_weights of '%.40s' must be a number >= 0", k);
    }
    size_t n = d->n;
    if (n > UINT32_MAX / 2) return say(msg, cap, "dataset '%s' is too large for a hierarchy", d->name);
    h->nlevels = L;
    char **keys = calloc(n * (size_t)L, sizeof *keys);
    h->order = malloc(n * sizeof *h->order);
    int rc = 0;
    if (!keys || !h->order) rc = NOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *rec = json_array_get(d->json, i);
        h->order[i] = (uint32_t)i;
        for (int l = 0; rc == 0 && l < L; l++)
            if (!(keys[i * (size_t)L + (size_t)l] = value_text(json_is_object(rec) ? json_object_get(rec, names[l]) : NULL))) rc = NOMEM;
    }
    if (rc == 0) {
        path_keys pk = {keys, L};
        qsort_r(h->order, n, sizeof *h->order, cmp_path, &pk);
        /* node ids: a new node at level l where the path prefix 0..l changes */
        uint32_t *node = calloc(n * (size_t)L, sizeof *node); /* node[pos * L + l] */
        double *w[SC_HIER_MAX_LEVELS] = {0};
        if (!node) rc = NOMEM;
        for (int l = 0; rc == 0 && l < L; l++) {
            uint32_t id = 0;
            for (size_t p = 0; p < n; p++) {
                int fresh = p == 0;
                for (int m = 0; !fresh && m <= l; m++)
                    fresh = strcmp(keys[(size_t)h->order[p] * L + m], keys[(size_t)h->order[p - 1] * L + m]) != 0;
                if (fresh && p) id++;
                node[p * (size_t)L + (size_t)l] = id;
            }
            h->nnodes[l] = id + 1;
            h->cum[l] = calloc(h->nnodes[l], sizeof *h->cum[l]);
            w[l] = h->cum[l];
            if (!h->cum[l]) rc = NOMEM;
            if (l >= 1 && rc == 0) {
                h->first_child[l] = calloc(h->nnodes[l - 1], sizeof *h->first_child[l]);
                h->nchild[l] = calloc(h->nnodes[l - 1], sizeof *h->nchild[l]);
                if (!h->first_child[l] || !h->nchild[l]) rc = NOMEM;
            }
        }
        if (rc == 0) {
            h->leaf_first = calloc(h->nnodes[L - 1], sizeof *h->leaf_first);
            h->leaf_count = calloc(h->nnodes[L - 1], sizeof *h->leaf_count);
            if (!h->leaf_first || !h->leaf_count) rc = NOMEM;
        }
        for (size_t p = 0; rc == 0 && p < n; p++) {
            for (int l = 0; l < L; l++) {
                uint32_t id = node[p * (size_t)L + (size_t)l];
                int fresh = p == 0 || node[(p - 1) * (size_t)L + (size_t)l] != id;
                if (fresh) {
                    if (l >= 1) {
                        uint32_t par = node[p * (size_t)L + (size_t)l - 1];
                        if (h->nchild[l][par]++ == 0) h->first_child[l][par] = id;
                    }
                    if (uniform) w[l][id] = 1;
                    if (l == L - 1) h->leaf_first[id] = (uint32_t)p;
                }
                if (!uniform) w[l][id] += 1;
                if (l == L - 1) h->leaf_count[id]++;
            }
        }
        if (rc == 0 && top) { /* the top level's weights by value */
            double sum = 0;
            for (uint32_t id = 0, p = 0; p < n; p++) {
                if (p && node[p * (size_t)L] == node[(p - 1) * (size_t)L]) continue;
                id = node[p * (size_t)L];
                json_t *tw = json_object_get(top, keys[(size_t)h->order[p] * L]);
                w[0][id] = tw ? json_number_value(tw) : 0;
                sum += w[0][id];
            }
            if (!(sum > 0))
                rc = say(msg, cap, "hierarchy top_weights give no value of the dataset's '%.40s' field a positive weight; "
                                   "name values of that field", names[0]);
        }
        for (int l = 0; rc == 0 && l < L; l++)
            for (uint32_t i = 1; i < h->nnodes[l]; i++) w[l][i] += w[l][i - 1];
        free(node);
    }
    for (size_t i = 0; keys && i < n * (size_t)L; i++) free(keys[i]);
    free(keys);
    if (rc) return rc;
    char label[32];
    for (int l = 0; l <= L; l++) {
        snprintf(label, sizeof label, "hierarchy/%d", l);
        h->s[l] = shape_gen_stream_make(s->seed, t->name, c->name, label);
    }
    return 0;
}

/* The first node of [a, b) whose cumulative weight passes x. */
static uint32_t pick_node(const double *cum, uint32_t a, uint32_t b, double u)
{
    double before = a ? cum[a - 1] : 0, x = before + u * (cum[b - 1] - before);
    uint32_t lo = a, hi = b - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cum[mid] > x) hi = mid;
        else lo = mid + 1;
    }
    while (lo > a && cum[lo] == cum[lo - 1]) lo--; /* x rounded up to the total: never a node of weight 0 */
    return lo;
}

/* The dataset record of row r: one node per level, top first, then one
 * record under the leaf. */
static size_t hier_record(const sc_hier *h, uint64_t r)
{
    uint32_t node = pick_node(h->cum[0], 0, h->nnodes[0], shape_gen_unit(h->s[0], r, 0));
    for (int l = 1; l < h->nlevels; l++) {
        uint32_t a = h->first_child[l][node];
        node = pick_node(h->cum[l], a, a + h->nchild[l][node], shape_gen_unit(h->s[l], r, 0));
    }
    uint32_t k = h->leaf_count[node];
    return h->order[h->leaf_first[node] + (uint32_t)shape_gen_below(h->s[h->nlevels], r, 0, k)];
}

/* ---- bootstrap --------------------------------------------------------------------- */

typedef struct sc_boot {
    char *field;
    int raw; /* the field's type (before the jitter makes it float) */
    double jitter, sd; /* noise: jitter * sd * N(0, 1) on numeric fields */
    shape_gen_stream rows; /* (seed, table, "bootstrap", dataset): shared by the table's columns of the dataset */
} sc_boot;

/* ---- address ---------------------------------------------------------------------- */

enum { A_LINE1, A_CITY, A_COUNTY, A_STATE, A_ZIP, A_COUNTRY, A_LAT, A_LNG, A_TZ, A_MODE, A_REF };
enum { M_SYNTHETIC, M_GEOGRAPHIC, M_REFERENCE, M_EXACT };

typedef struct sc_addr {
    int field;
    int mode;
    char *group;
    json_t *spec; /* {scope, weights, exclude, reference, mode}: the columns of a group share it */
    int anchor;   /* the group's first address column (its places are used) */
    /* the anchor's places: the built-in ZIP places, or the reference dataset's
     * records (its JSON list: stable while the schema's datasets array grows) */
    json_t *ref;
    size_t nplaces;
    size_t nentries;
    uint32_t **entry; /* per scope entry, the places it covers */
    uint32_t *nentry;
    double *cum;      /* cumulative entry weights */
    shape_gen_stream s; /* (seed, table, "address", group) */
} sc_addr;

static const char *const ADDR_FIELDS[] = {"address_line_1", "city", "county", "state", "postal_code", "country",
                                          "latitude", "longitude", "timezone", "mode", "reference_id"};

static int addr_field(const char *f)
{
    static const struct {
        const char *name;
        int id;
    } alias[] = {{"address_line_1", A_LINE1}, {"street", A_LINE1}, {"address", A_LINE1}, {"city", A_CITY}, {"county", A_COUNTY},
                 {"state", A_STATE},  {"postal_code", A_ZIP}, {"zip", A_ZIP}, {"postcode", A_ZIP}, {"country", A_COUNTRY},
                 {"latitude", A_LAT}, {"lat", A_LAT}, {"longitude", A_LNG}, {"lng", A_LNG}, {"lon", A_LNG},
                 {"timezone", A_TZ}, {"mode", A_MODE}, {"reference_id", A_REF}};
    for (size_t i = 0; f && i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(alias[i].name, f) == 0) return alias[i].id;
    return -1;
}

/* A text field of place i: into buf (cap bytes); its length, or -1 when the
 * reference has no such field. */
static const char *REF_KEYS[][3] = {
    [A_CITY] = {"city", NULL, NULL},   [A_COUNTY] = {"county", NULL, NULL},          [A_STATE] = {"state", NULL, NULL},
    [A_ZIP] = {"postal_code", "zip", NULL}, [A_COUNTRY] = {"country", NULL, NULL}, [A_LAT] = {"latitude", "lat", NULL},
    [A_LNG] = {"longitude", "lng", NULL}, [A_TZ] = {"timezone", NULL, NULL},       [A_LINE1] = {"street", NULL, NULL},
};

static json_t *ref_get(json_t *rec, int f)
{
    for (int k = 0; k < 3 && REF_KEYS[f][k]; k++) {
        json_t *v = json_object_get(rec, REF_KEYS[f][k]);
        if (v) return v;
    }
    return NULL;
}

static int place_text(const sc_addr *a, size_t i, int f, char *buf, size_t cap)
{
    if (!a->ref) {
        const shape_retail_place *p = &shape_retail_places[i];
        switch (f) {
        case A_CITY: return snprintf(buf, cap, "%.*s", (int)p->city_len, shape_retail_city_blob + p->city_off);
        case A_STATE: return snprintf(buf, cap, "%.2s", shape_retail_state_codes + 2 * p->state);
        case A_ZIP: return snprintf(buf, cap, "%05u", (unsigned)p->zip);
        case A_COUNTRY: return snprintf(buf, cap, "US");
        default: return -1;
        }
    }
    json_t *v = ref_get(json_array_get(a->ref, i), f);
    if (!v) return f == A_COUNTRY ? snprintf(buf, cap, "US") : -1;
    if (json_is_string(v)) return snprintf(buf, cap, "%s", json_string_value(v));
    if (json_is_integer(v) && f == A_ZIP) return snprintf(buf, cap, "%05lld", (long long)json_integer_value(v));
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    int n = snprintf(buf, cap, "%s", t ? t : "");
    free(t);
    return n;
}

static double place_coord(const sc_addr *a, size_t i, int f)
{
    if (!a->ref) {
        const shape_retail_place *p = &shape_retail_places[i];
        return (f == A_LAT ? p->lat_e4 : p->lng_e4) / 1e4;
    }
    json_t *v = ref_get(json_array_get(a->ref, i), f);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One scope or exclude entry: {"state": "WA"}, {"postal_code": "98101"},
 * {"city": "Seattle", "state": "WA"}, {"county": .., "state": ..}, "WA",
 * "98101" or "Seattle, WA", as field → wanted text (NULL: any). */
typedef struct place_filter {
    char want[4][128]; /* city, county, state, postal_code */
    int has[4];
} place_filter;

static int parse_filter(json_t *e, place_filter *pf, char *msg, size_t cap)
{
    memset(pf, 0, sizeof *pf);
    static const int fields[4] = {A_CITY, A_COUNTY, A_STATE, A_ZIP};
    if (json_is_string(e)) {
        const char *s = json_string_value(e), *comma = strchr(s, ',');
        size_t n = strlen(s);
        int digits = n > 0;
        for (size_t i = 0; i < n; i++) digits &= s[i] >= '0' && s[i] <= '9';
        if (comma) {
            const char *st = comma + 1;
            while (*st == ' ') st++;
            snprintf(pf->want[0], sizeof pf->want[0], "%.*s", (int)(comma - s), s);
            snprintf(pf->want[2], sizeof pf->want[2], "%s", st);
            pf->has[0] = pf->has[2] = 1;
        } else if (digits) {
            snprintf(pf->want[3], sizeof pf->want[3], "%s", s);
            pf->has[3] = 1;
        } else if (n == 2) {
            snprintf(pf->want[2], sizeof pf->want[2], "%s", s);
            pf->has[2] = 1;
        } else
            return say(msg, cap, "address scope entry '%.40s' does not parse; write \"WA\", \"98101\", \"Seattle, WA\" or an object "
                                 "{state, city, county, postal_code}", s);
        return 0;
    }
    if (!json_is_object(e)) return say(msg, cap, "address scope entries are strings or objects {state, city, county, postal_code}");
    const char *k;
    json_t *v;
    json_object_foreach(e, k, v)
    {
        int f = addr_field(k), slot = -1;
        for (int i = 0; i < 4; i++)
            if (fields[i] == f) slot = i;
        if (slot < 0) return say(msg, cap, "address scope key '%.40s' is not one of state, city, county, postal_code", k);
        char *t = value_text(v);
        if (!t) return NOMEM;
        snprintf(pf->want[slot], sizeof pf->want[slot], "%s", t);
        free(t);
        pf->has[slot] = 1;
    }
    if (!pf->has[0] && !pf->has[1] && !pf->has[2] && !pf->has[3]) return say(msg, cap, "address scope entry {} names no place");
    return 0;
}

static int filter_match(const sc_addr *a, size_t i, const place_filter *pf)
{
    static const int fields[4] = {A_CITY, A_COUNTY, A_STATE, A_ZIP};
    char buf[256];
    if (!a->ref) { /* the built-in places, compared in place */
        const shape_retail_place *p = &shape_retail_places[i];
        if (pf->has[1]) return 0; /* no counties */
        if (pf->has[2] && (strlen(pf->want[2]) != 2 || strncasecmp(shape_retail_state_codes + 2 * p->state, pf->want[2], 2) != 0)) return 0;
        if (pf->has[0] && (strlen(pf->want[0]) != p->city_len ||
                           strncasecmp(shape_retail_city_blob + p->city_off, pf->want[0], p->city_len) != 0))
            return 0;
        if (pf->has[3]) {
            char *end;
            unsigned long z = strtoul(pf->want[3], &end, 10);
            if (*end || z != p->zip) return 0;
        }
        return 1;
    }
    for (int k = 0; k < 4; k++) {
        if (!pf->has[k]) continue;
        if (place_text(a, i, fields[k], buf, sizeof buf) < 0 || strcasecmp(buf, pf->want[k]) != 0) return 0;
    }
    return 1;
}

static void addr_free(sc_addr *a)
{
    if (!a) return;
    for (size_t i = 0; a->entry && i < a->nentries; i++) free(a->entry[i]);
    free(a->entry);
    free(a->nentry);
    free(a->cum);
    free(a->group);
    json_decref(a->spec);
    free(a);
}

static int addr_entry_add(sc_addr *a, const place_filter *pf, const place_filter *ex, size_t nex, char *msg, size_t cap,
                          const char *what)
{
    uint32_t *list = malloc((a->nplaces ? a->nplaces : 1) * sizeof *list), m = 0;
    if (!list) return NOMEM;
    for (size_t i = 0; i < a->nplaces; i++) {
        if (pf && !filter_match(a, i, pf)) continue;
        int out = 0;
        for (size_t e = 0; e < nex && !out; e++) out = filter_match(a, i, &ex[e]);
        if (!out) list[m++] = (uint32_t)i;
    }
    if (m == 0) {
        free(list);
        return say(msg, cap, "address scope entry %s names no place of the reference (or exclude leaves none)", what);
    }
    a->entry[a->nentries] = list;
    a->nentry[a->nentries++] = m;
    return 0;
}

static int addr_build(const sc_schema *s, const sc_table *t, const sc_column *c, sc_addr *a, json_t *g, char *msg, size_t cap)
{
    a->ref = c->dataset ? c->dataset->json : NULL;
    if (a->ref) {
        json_t *first = json_array_get(a->ref, 0);
        static const int need[] = {A_CITY, A_STATE, A_ZIP, A_LAT, A_LNG};
        if (!json_is_object(first)) return say(msg, cap, "address reference dataset '%s' must hold records (JSON objects)", c->dataset->name);
        for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
            if (!ref_get(first, need[i]))
                return say(msg, cap, "address reference dataset '%s' records need city, state, postal_code (or zip), latitude (or lat) "
                                     "and longitude (or lng); '%s' is missing", c->dataset->name, ADDR_FIELDS[need[i]]);
    }
    a->nplaces = a->ref ? json_array_size(a->ref) : shape_retail_place_count;
    json_t *scope = json_object_get(g, "scope"), *weights = json_object_get(g, "weights"), *exclude = json_object_get(g, "exclude");
    if (scope && !json_is_array(scope)) scope = json_pack("[O]", scope);
    else if (scope) json_incref(scope);
    if (exclude && !json_is_array(exclude)) exclude = json_pack("[O]", exclude);
    else if (exclude) json_incref(exclude);
    int rc = 0;
    size_t nex = exclude ? json_array_size(exclude) : 0, nsc = scope ? json_array_size(scope) : 0;
    place_filter *ex = calloc(nex + 1, sizeof *ex);
    if (!ex || (json_object_get(g, "scope") && !scope) || (json_object_get(g, "exclude") && !exclude)) rc = NOMEM;
    if (rc == 0 && scope && (nsc == 0 || nsc > 1000)) rc = say(msg, cap, "address 'scope' must hold 1..1000 entries");
    if (rc == 0 && weights && (!json_is_array(weights) || json_array_size(weights) != nsc))
        rc = say(msg, cap, "address 'weights' must be a list with one weight per scope entry");
    for (size_t i = 0; rc == 0 && i < nex; i++) rc = parse_filter(json_array_get(exclude, i), &ex[i], msg, cap);
    /* without a scope: every state of the reference, equally weighted */
    char states[1024][8];
    size_t nstates = 0;
    if (rc == 0 && !scope) {
        for (size_t i = 0; i < a->nplaces && nstates < 1024; i++) {
            char st[8];
            if (!a->ref) {
                if (i && shape_retail_places[i].state == shape_retail_places[i - 1].state) continue;
                memcpy(st, shape_retail_state_codes + 2 * shape_retail_places[i].state, 2), st[2] = 0;
            } else if (place_text(a, i, A_STATE, st, sizeof st) < 0)
                continue;
            size_t k = 0;
            while (k < nstates && strcmp(states[k], st) != 0) k++;
            if (k == nstates) memcpy(states[nstates++], st, sizeof st);
        }
    }
    size_t n = scope ? nsc : nstates;
    if (rc == 0) {
        a->entry = calloc(n + 1, sizeof *a->entry);
        a->nentry = calloc(n + 1, sizeof *a->nentry);
        a->cum = calloc(n + 1, sizeof *a->cum);
        if (!a->entry || !a->nentry || !a->cum) rc = NOMEM;
    }
    double sum = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        place_filter pf;
        char what[160];
        if (scope) {
            json_t *e = json_array_get(scope, i);
            rc = parse_filter(e, &pf, msg, cap);
            char *txt = json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
            snprintf(what, sizeof what, "%.100s", txt ? txt : "?");
            free(txt);
        } else {
            memset(&pf, 0, sizeof pf);
            pf.has[2] = 1;
            snprintf(pf.want[2], sizeof pf.want[2], "%s", states[i]);
            snprintf(what, sizeof what, "'%s'", states[i]);
        }
        size_t before = a->nentries;
        if (rc == 0) rc = addr_entry_add(a, &pf, ex, nex, msg, cap, what);
        if (rc == -1 && !scope) rc = 0; /* a state wholly excluded drops out */
        if (rc == 0 && a->nentries > before) {
            double w = 1;
            if (weights) {
                json_t *wv = json_array_get(weights, i);
                if (!json_is_number(wv) || !(json_number_value(wv) >= 0) || !isfinite(json_number_value(wv)))
                    rc = say(msg, cap, "address weight %zu must be a number >= 0", i + 1);
                else w = json_number_value(wv);
            }
            sum += w;
            a->cum[a->nentries - 1] = sum;
        }
    }
    if (rc == 0 && a->nentries == 0) rc = say(msg, cap, "address: exclude leaves no place of the reference");
    if (rc == 0 && !(sum > 0)) rc = say(msg, cap, "address weights sum to 0; give at least one scope entry a positive weight");
    free(ex);
    json_decref(scope);
    json_decref(exclude);
    if (rc) return rc;
    char label[160];
    snprintf(label, sizeof label, "address:%s", a->group);
    a->s = shape_gen_stream_make(s->seed, t->name, "*", label);
    return 0;
}

/* ---- parsing ------------------------------------------------------------------------- */

int sc_strat_parse(sc_schema *s, int ti, int self, json_t *g, char *msg, size_t cap)
{
    sc_table *t = &s->tables[ti];
    sc_column *c = &t->cols[self];
    const char *field = json_string_value(json_object_get(g, "field"));
    switch (c->strategy) {
    case SC_HIERARCHY:
    case SC_HIERARCHY_FIELD: {
        if (!c->dataset || !field)
            return say(msg, cap, "%s needs 'dataset' (a NAME.json of records beside the schema) and 'field'",
                       c->strategy == SC_HIERARCHY ? "hierarchy" : "hierarchy_field");
        int nat;
        if (record_field_type(c->dataset, field, &nat, msg, cap)) return -1;
        sc_hier *h = calloc(1, sizeof *h);
        if (!h || !(h->field = strdup(field))) {
            free(h);
            return NOMEM;
        }
        c->ext = h;
        c->natural = (uint8_t)nat;
        h->anchor = -1;
        h->is_field = c->strategy == SC_HIERARCHY_FIELD;
        if (c->strategy == SC_HIERARCHY) {
            int rc = hier_build(s, t, c, h, g, msg, cap);
            if (rc) return rc;
        }
        return 0;
    }
    case SC_BOOTSTRAP: {
        if (!c->dataset || !field) return say(msg, cap, "bootstrap needs 'dataset' (a NAME.json of records beside the schema) and 'field'");
        int nat;
        if (record_field_type(c->dataset, field, &nat, msg, cap)) return -1;
        json_t *j = json_object_get(g, "jitter");
        double jitter = 0.01;
        if (j && (!json_is_number(j) || !(json_number_value(j) >= 0) || json_number_value(j) > 100))
            return say(msg, cap, "bootstrap 'jitter' must be a number 0..100 (a fraction of the field's standard deviation; 0 for none)");
        if (j) jitter = json_number_value(j);
        sc_boot *b = calloc(1, sizeof *b);
        if (!b || !(b->field = strdup(field))) {
            free(b);
            return NOMEM;
        }
        c->ext = b;
        /* the field's standard deviation over the dataset (numbers only) */
        double sum = 0, sq = 0, m = 0;
        for (size_t i = 0; i < c->dataset->n; i++) {
            json_t *v = json_object_get(json_array_get(c->dataset->json, i), field);
            if (!json_is_number(v)) continue;
            double x = json_number_value(v);
            m++;
            sum += x;
            sq += x * x;
        }
        double var = m > 1 ? (sq - sum * sum / m) / (m - 1) : 0;
        b->sd = var > 0 ? shape_gen_sqrt(var) : 0;
        b->jitter = jitter;
        int numeric = nat == SHAPE_GEN_INT64 || nat == SHAPE_GEN_FLOAT64;
        if (!numeric) b->jitter = 0;
        c->natural = (uint8_t)(numeric && b->jitter > 0 && b->sd > 0 ? SHAPE_GEN_FLOAT64 : nat);
        b->raw = nat;
        char label[160];
        snprintf(label, sizeof label, "%.150s", c->dataset->name);
        b->rows = shape_gen_stream_make(s->seed, t->name, "bootstrap", label);
        return 0;
    }
    case SC_ADDRESS: {
        if (!field)
            return say(msg, cap, "address needs 'field' (address_line_1, city, county, state, postal_code, country, latitude, "
                                 "longitude, timezone, mode or reference_id): one column per field, sharing a 'group'");
        int f = addr_field(field);
        if (f < 0)
            return say(msg, cap, "unknown address field '%.40s'; use address_line_1, city, county, state, postal_code, country, "
                                 "latitude, longitude, timezone, mode or reference_id", field);
        json_t *ref = json_object_get(g, "reference");
        if (ref && (!json_is_object(ref) || !json_is_string(json_object_get(ref, "dataset")) || json_object_size(ref) != 1))
            return say(msg, cap, "address 'reference' must be {\"dataset\": NAME} (a NAME.json of places beside the schema)");
        const char *mode = json_string_value(json_object_get(g, "mode"));
        static const char *const modes[] = {"street_synthetic", "geographic", "reference", "exact_reference"};
        int m = mode ? -1 : M_SYNTHETIC;
        for (int i = 0; mode && i < 4; i++)
            if (strcmp(modes[i], mode) == 0) m = i;
        if (m < 0) return say(msg, cap, "address 'mode' must be street_synthetic, geographic, reference or exact_reference");
        json_t *first = c->dataset ? json_array_get(c->dataset->json, 0) : NULL;
        if (m >= M_REFERENCE && !(first && json_object_get(first, "street")))
            return say(msg, cap, "address mode %s needs a reference dataset whose records have a 'street'", modes[m]);
        if ((f == A_COUNTY || f == A_TZ) && !(first && ref_get(first, f)))
            return say(msg, cap, "address field %s needs a reference dataset whose records have it (the built-in places have "
                                 "city, state, postal_code, latitude and longitude)", ADDR_FIELDS[f]);
        const char *group = json_string_value(json_object_get(g, "group"));
        if (json_object_get(g, "group") && (!group || !group[0])) return say(msg, cap, "address 'group' must be a non-empty name");
        sc_addr *a = calloc(1, sizeof *a);
        if (!a || !(a->group = strdup(group ? group : "address"))) {
            free(a);
            return NOMEM;
        }
        c->ext = a;
        a->field = f;
        a->mode = m;
        a->anchor = -1;
        a->spec = json_object();
        static const char *const shared[] = {"scope", "weights", "exclude", "reference", "mode"};
        for (size_t i = 0; a->spec && i < 5; i++)
            if (json_object_get(g, shared[i])) json_object_set(a->spec, shared[i], json_object_get(g, shared[i]));
        if (!a->spec) return NOMEM;
        c->natural = f == A_LAT || f == A_LNG ? SHAPE_GEN_FLOAT64 : f == A_REF ? SHAPE_GEN_INT64 : SHAPE_GEN_STRING;
        /* the group's first address column builds the places; the others share them */
        for (int i = 0; i < self; i++) {
            const sc_column *o = &t->cols[i];
            if (o->strategy != SC_ADDRESS || !o->ext || strcmp(((sc_addr *)o->ext)->group, a->group) != 0) continue;
            if (!json_equal(((sc_addr *)o->ext)->spec, a->spec))
                return say(msg, cap, "address columns of group '%.40s' must share scope, weights, exclude, reference and mode "
                                     "(column '%s' differs); give this one another 'group' for a second address", a->group, o->name);
            a->anchor = i;
            return 0;
        }
        a->anchor = self;
        return addr_build(s, t, c, a, g, msg, cap);
    }
    }
    return say(msg, cap, "not a strategy of schema_strat.c");
}

int sc_strat_link(sc_schema *s, int ti, int ci, char *msg, size_t cap)
{
    sc_table *t = &s->tables[ti];
    sc_column *c = &t->cols[ci];
    if (c->strategy != SC_HIERARCHY_FIELD) return 0;
    sc_hier *h = c->ext;
    for (size_t i = 0; i < t->ncols; i++)
        if (t->cols[i].strategy == SC_HIERARCHY && t->cols[i].dataset_index == c->dataset_index) h->anchor = (int)i;
    if (h->anchor < 0)
        return say(msg, cap, "hierarchy_field needs a hierarchy column of dataset '%s' in this table (the anchor whose walk it reads)",
                   c->dataset->name);
    return 0;
}

/* Can the column hold a null: a record without the field (or with a null),
 * a reference place without it. */
int sc_strat_may_be_null(const sc_column *c)
{
    const char *field = NULL;
    int f = -1;
    if (c->strategy == SC_HIERARCHY || c->strategy == SC_HIERARCHY_FIELD) field = ((const sc_hier *)c->ext)->field;
    else if (c->strategy == SC_BOOTSTRAP) field = ((const sc_boot *)c->ext)->field;
    else if (c->strategy == SC_ADDRESS) {
        f = ((const sc_addr *)c->ext)->field;
        /* always there: the mode, the place number, the country (US by default), a synthetic street */
        if (f == A_MODE || f == A_REF || f == A_COUNTRY || (f == A_LINE1 && ((const sc_addr *)c->ext)->mode < M_REFERENCE)) return 0;
    } else
        return 0;
    if (!c->dataset) return 0; /* the built-in places have city, state, postal code and coordinates */
    int raw = c->strategy == SC_BOOTSTRAP ? ((const sc_boot *)c->ext)->raw : c->natural;
    for (size_t i = 0; i < c->dataset->n; i++) {
        json_t *rec = json_array_get(c->dataset->json, i);
        json_t *v = f >= 0 ? ref_get(rec, f) : json_object_get(rec, field);
        if (f == A_LAT || f == A_LNG ? !json_is_number(v) : f >= 0 ? !v || json_is_null(v) : gives_null(v, raw)) return 1;
    }
    return 0;
}

void sc_strat_free(sc_column *c)
{
    if (!c->ext) return;
    switch (c->strategy) {
    case SC_HIERARCHY:
    case SC_HIERARCHY_FIELD: hier_free(c->ext); break;
    case SC_BOOTSTRAP: free(((sc_boot *)c->ext)->field), free(c->ext); break;
    case SC_ADDRESS: addr_free(c->ext); break;
    default: break;
    }
    c->ext = NULL;
}

/* ---- evaluation ------------------------------------------------------------------------ */

static void put_text(shape_gen_row *row, shape_gen_value *out, const char *s, size_t n)
{
    if (row->scratch_used + n > SHAPE_GEN_SCRATCH_BYTES) n = SHAPE_GEN_SCRATCH_BYTES - row->scratch_used;
    char *p = row->scratch + row->scratch_used;
    memcpy(p, s, n);
    row->scratch_used += n;
    out->kind = SHAPE_GEN_STRING;
    out->v.s = p;
    out->len = (uint32_t)n;
}

static void eval_address(const sc_table *t, const sc_column *c, uint64_t r, shape_gen_row *row, shape_gen_value *out)
{
    const sc_addr *me = c->ext, *a = t->cols[me->anchor].ext;
    /* the group's place: an entry by weight, then a place of it */
    double x = shape_gen_unit(a->s, r, 0) * a->cum[a->nentries - 1];
    size_t lo = 0, hi = a->nentries - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->cum[mid] > x) hi = mid;
        else lo = mid + 1;
    }
    while (lo > 0 && a->cum[lo] == a->cum[lo - 1]) lo--; /* never an entry of weight 0 */
    size_t place = a->entry[lo][shape_gen_below(a->s, r, 1, a->nentry[lo])];
    char buf[512];
    int n;
    switch (me->field) {
    case A_LAT:
    case A_LNG: {
        double v = place_coord(a, place, me->field);
        if (isnan(v)) return;
        if (me->mode <= M_GEOGRAPHIC) v += (shape_gen_unit(a->s, r, me->field == A_LAT ? 5 : 6) - 0.5) * 0.004;
        out->kind = SHAPE_GEN_FLOAT64;
        out->v.f = shape_gen_round_scale(v, 6);
        return;
    }
    case A_REF: out->kind = SHAPE_GEN_INT64, out->v.i = (int64_t)place; return;
    case A_MODE: {
        static const char *const modes[] = {"street_synthetic", "geographic", "reference", "exact_reference"};
        put_text(row, out, modes[me->mode], strlen(modes[me->mode]));
        return;
    }
    case A_LINE1: {
        unsigned num = (unsigned)(1 + shape_gen_below(a->s, r, 2, 9999));
        char street[256];
        if (me->mode == M_GEOGRAPHIC) n = snprintf(buf, sizeof buf, "%u Synthetic Way", num);
        else if (place_text(a, place, A_LINE1, street, sizeof street) >= 0)
            n = me->mode >= M_REFERENCE ? snprintf(buf, sizeof buf, "%s", street) : snprintf(buf, sizeof buf, "%u %s", num, street);
        else {
            shape_retail_str nm = shape_retail_street_names.items[shape_gen_below(a->s, r, 3, shape_retail_street_names.n)];
            shape_retail_str sx = shape_retail_street_suffixes.items[shape_gen_below(a->s, r, 4, shape_retail_street_suffixes.n)];
            n = snprintf(buf, sizeof buf, "%u %.*s %.*s", num, (int)nm.len, nm.s, (int)sx.len, sx.s);
        }
        break;
    }
    default: n = place_text(a, place, me->field, buf, sizeof buf); break;
    }
    if (n < 0) return;
    if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
    put_text(row, out, buf, (size_t)n);
}

int sc_strat_eval(sc_ctx *ctx, sc_frame *f, const sc_table *t, int ci, shape_gen_value *out, shape_err *err)
{
    (void)ctx, (void)err;
    const sc_column *c = &t->cols[ci];
    uint64_t r = f->r;
    switch (c->strategy) {
    case SC_HIERARCHY:
    case SC_HIERARCHY_FIELD: {
        const sc_hier *h = c->ext, *a = c->strategy == SC_HIERARCHY ? h : t->cols[h->anchor].ext;
        json_value(json_object_get(json_array_get(c->dataset->json, hier_record(a, r)), h->field), out, c->natural);
        return SHAPE_OK;
    }
    case SC_BOOTSTRAP: {
        const sc_boot *b = c->ext;
        size_t i = (size_t)shape_gen_below(b->rows, r, 0, c->dataset->n);
        json_value(json_object_get(json_array_get(c->dataset->json, i), b->field), out, b->raw);
        if (b->jitter > 0 && b->sd > 0 && (out->kind == SHAPE_GEN_INT64 || out->kind == SHAPE_GEN_FLOAT64)) {
            double x = out->kind == SHAPE_GEN_INT64 ? (double)out->v.i : out->v.f;
            out->kind = SHAPE_GEN_FLOAT64;
            out->v.f = x + b->jitter * b->sd * shape_gen_normal(c->s, r, 0);
        }
        return SHAPE_OK;
    }
    case SC_ADDRESS: eval_address(t, c, r, f->row, out); return SHAPE_OK;
    }
    return SHAPE_OK;
}

/* ---- the copula of correlated_columns ---------------------------------------------- */

typedef struct sc_copula {
    int k;
    int cols[SHAPE_GEN_MAX_COLUMNS];
    double chol[SHAPE_GEN_MAX_COLUMNS][SHAPE_GEN_MAX_COLUMNS]; /* lower triangle: z = chol · g */
    shape_gen_stream g[SHAPE_GEN_MAX_COLUMNS];                 /* (seed, table, "*", "copula:i") */
} sc_copula;

/* The standard normal CDF (Hart's rational approximation as given by West,
 * "Better approximations to cumulative normal functions", 2005; absolute
 * error below 1e-14), libm-free. */
static double phi(double x)
{
    double ax = sc_fabs(x), c;
    if (ax > 37) return x < 0 ? 0 : 1;
    double e = shape_gen_exp(-ax * ax / 2);
    if (ax < 7.07106781186547) {
        double b = 3.52624965998911e-02 * ax + 0.700383064443688;
        b = b * ax + 6.37396220353165;
        b = b * ax + 33.912866078383;
        b = b * ax + 112.079291497871;
        b = b * ax + 221.213596169931;
        b = b * ax + 220.206867912376;
        c = e * b;
        b = 8.83883476483184e-02 * ax + 1.75566716318264;
        b = b * ax + 16.064177579207;
        b = b * ax + 86.7807322029461;
        b = b * ax + 296.564248779674;
        b = b * ax + 637.333633378831;
        b = b * ax + 793.826512519948;
        b = b * ax + 440.413735824752;
        c /= b;
    } else {
        double b = ax + 0.65;
        b = ax + 4 / b;
        b = ax + 3 / b;
        b = ax + 2 / b;
        b = ax + 1 / b;
        c = e / b / 2.506628274631;
    }
    return x > 0 ? 1 - c : c;
}

static int key_like(const char *n)
{
    size_t l = strlen(n);
    if (strcasecmp(n, "id") == 0 || strcasecmp(n, "pk") == 0) return 1;
    return l > 3 && (strcasecmp(n + l - 3, "_id") == 0 || strcasecmp(n + l - 3, "_pk") == 0 || strcasecmp(n + l - 3, "_fk") == 0);
}

static int find_column(const sc_table *t, const char *name)
{
    for (size_t i = 0; name && i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0) return (int)i;
    return -1;
}

int sc_copula_parse(sc_schema *s, json_t *root, char *msg, size_t cap, const char **table, const char **column)
{
    json_t *cc = json_object_get(root, "correlated_columns");
    json_t *out = json_object_get(json_object_get(root, "generation"), "output");
    *table = *column = NULL;
    double threshold = 0.5;
    int rank_nulls = 0;
    if (out) {
        if (!json_is_object(out)) return say(msg, cap, "generation.output must be an object {copula_threshold, copula_nulls}");
        const char *k;
        json_t *v;
        json_object_foreach(out, k, v)
        {
            if (strncmp(k, "x-", 2) == 0 || strcmp(k, "$comment") == 0) continue;
            if (strcmp(k, "copula_threshold") == 0) {
                if (!json_is_number(v) || !(json_number_value(v) >= 0 && json_number_value(v) <= 1))
                    return say(msg, cap, "generation.output.copula_threshold must be a number 0..1");
                threshold = json_number_value(v);
            } else if (strcmp(k, "copula_nulls") == 0) {
                const char *m = json_string_value(v);
                if (!m || (strcmp(m, "skip") && strcmp(m, "rank"))) return say(msg, cap, "generation.output.copula_nulls must be skip or rank");
                rank_nulls = m[0] == 'r';
            } else if (strcmp(k, "format") && strcmp(k, "compression") && strcmp(k, "path"))
                return say(msg, cap, "unknown generation.output key '%.40s'; expected copula_threshold or copula_nulls", k);
        }
    }
    if (!cc) return 0;
    if (!json_is_object(cc)) return say(msg, cap, "\"correlated_columns\" must be an object {table: [[column, column, r], ...]}");
    const char *tn;
    json_t *pairs;
    json_object_foreach(cc, tn, pairs)
    {
        sc_table *t = NULL;
        for (size_t i = 0; i < s->ntables; i++)
            if (strcmp(s->tables[i].name, tn) == 0) t = &s->tables[i];
        *table = tn;
        if (!t) return say(msg, cap, "correlated_columns names a missing table; name a table of the schema");
        if (!json_is_array(pairs)) return say(msg, cap, "correlated_columns must be a list of [column, column, r]");
        double R[SHAPE_GEN_MAX_COLUMNS][SHAPE_GEN_MAX_COLUMNS];
        int idx[SHAPE_GEN_MAX_COLUMNS], k = 0; /* column -> position, or -1 */
        for (int i = 0; i < SHAPE_GEN_MAX_COLUMNS; i++) idx[i] = -1;
        memset(R, 0, sizeof R);
        for (size_t p = 0; p < json_array_size(pairs); p++) {
            json_t *e = json_array_get(pairs, p);
            const char *a = json_string_value(json_array_get(e, 0)), *b = json_string_value(json_array_get(e, 1));
            json_t *rv = json_array_get(e, 2);
            if (!json_is_array(e) || json_array_size(e) != 3 || !a || !b || !json_is_number(rv))
                return say(msg, cap, "correlated_columns entry %zu must be [column, column, r]", p + 1);
            double r = json_number_value(rv);
            if (!(r >= -1 && r <= 1)) return say(msg, cap, "correlated_columns [%s, %s]: r %g is outside [-1, 1]", a, b, r);
            if (strcmp(a, b) == 0) return say(msg, cap, "correlated_columns [%s, %s] pairs a column with itself", a, b);
            if (sc_fabs(r) < threshold) continue; /* the original: pairs below copula_threshold do not count */
            int ab[2] = {find_column(t, a), find_column(t, b)};
            int skip = 0;
            for (int q = 0; q < 2; q++) {
                const char *nm = q ? b : a;
                *column = nm;
                if (ab[q] < 0) return say(msg, cap, "correlated_columns names no column '%.60s' of this table", nm);
                const sc_column *c = &t->cols[ab[q]];
                if (key_like(nm) || (c->null_rate > 0 && !rank_nulls)) skip = 1; /* as the original */
                int ok = (c->strategy == SC_DISTRIBUTION && c->family != SC_D_ZIPF) || c->strategy == SC_EMPIRICAL;
                if (!skip && !ok)
                    return say(msg, cap, "correlated_columns: the copula drives distribution (not zipf) and empirical columns; "
                                         "make '%s' one, or correlate what it is computed from", nm);
            }
            *column = NULL;
            if (skip) continue;
            for (int q = 0; q < 2; q++)
                if (idx[ab[q]] < 0) idx[ab[q]] = k++;
            int i = idx[ab[0]], j = idx[ab[1]];
            if (R[i][j] != 0 && R[i][j] != r)
                return say(msg, cap, "correlated_columns gives [%s, %s] twice with different r", a, b);
            R[i][j] = R[j][i] = r;
        }
        if (k == 0) continue;
        for (int i = 0; i < k; i++) R[i][i] = 1;
        sc_copula *cp = calloc(1, sizeof *cp);
        if (!cp) return NOMEM;
        cp->k = k;
        for (size_t c = 0; c < t->ncols; c++)
            if (idx[c] >= 0) cp->cols[idx[c]] = (int)c, t->cols[c].copula = idx[c] + 1;
        /* Cholesky: R = chol · chol^T; a matrix that is not positive definite is refused */
        for (int i = 0; i < k; i++)
            for (int j = 0; j <= i; j++) {
                double sum = R[i][j];
                for (int m = 0; m < j; m++) sum -= cp->chol[i][m] * cp->chol[j][m];
                if (i == j) {
                    if (!(sum > 1e-9)) {
                        free(cp);
                        for (size_t c = 0; c < t->ncols; c++) t->cols[c].copula = 0;
                        return say(msg, cap, "correlated_columns: these correlations cannot hold together (the matrix is not "
                                             "positive definite); lower some of them");
                    }
                    cp->chol[i][i] = shape_gen_sqrt(sum);
                } else
                    cp->chol[i][j] = sum / cp->chol[j][j];
            }
        char label[32];
        for (int i = 0; i < k; i++) {
            snprintf(label, sizeof label, "copula:%d", i);
            cp->g[i] = shape_gen_stream_make(s->seed, t->name, "*", label);
        }
        t->copula = cp;
    }
    *table = NULL;
    return 0;
}

double sc_empirical_inverse(const sc_column *c, double u)
{
    int lo = 0, hi = c->neq - 1; /* eq[lo] <= u < eq[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (c->eq[mid] <= u) lo = mid;
        else hi = mid;
    }
    double f = (u - c->eq[lo]) / (c->eq[hi] - c->eq[lo]);
    if (c->e_nearest) return f < 0.5 ? c->ex[lo] : c->ex[hi];
    return c->ex[lo] + f * (c->ex[hi] - c->ex[lo]);
}

double sc_triangular_inverse(const sc_column *c, double u)
{
    double a = c->p1, m = c->p2, b = c->p3, fc = (m - a) / (b - a);
    return u < fc ? a + shape_gen_sqrt(u * (b - a) * (m - a)) : b - shape_gen_sqrt((1 - u) * (b - a) * (b - m));
}

void sc_copula_free(sc_table *t)
{
    free(t->copula);
    t->copula = NULL;
}

void sc_copula_eval(const sc_schema *s, const sc_table *t, int ci, uint64_t r, shape_gen_value *out)
{
    (void)s;
    const sc_column *c = &t->cols[ci];
    const sc_copula *cp = t->copula;
    int j = c->copula - 1;
    double z = 0;
    for (int i = 0; i <= j; i++)
        if (cp->chol[j][i] != 0) z += cp->chol[j][i] * shape_gen_normal(cp->g[i], r, 0);
    double u = phi(z), v = 0;
    if (u >= 1) u = 1 - 0x1.0p-53;
    if (c->strategy == SC_EMPIRICAL) {
        v = sc_empirical_inverse(c, u);
    } else {
        switch (c->family) {
        case SC_D_UNIFORM: v = c->p1 + u * (c->p2 - c->p1); break;
        case SC_D_NORMAL: v = c->p1 + c->p2 * z; break;
        case SC_D_LOGNORMAL: v = shape_gen_exp(c->p1 + c->p2 * z); break;
        case SC_D_EXPONENTIAL: v = -c->p1 * shape_gen_log1p(-u); break;
        case SC_D_PARETO: v = c->p2 * shape_gen_pow(1.0 - u, -1.0 / c->p1); break;
        case SC_D_GEOMETRIC: {
            double t2 = c->p1 < 1 ? shape_gen_log1p(-u) / shape_gen_log1p(-c->p1) : 0;
            v = t2 < 1e18 ? 1 + sc_floor(t2) : 1e18;
            break;
        }
        case SC_D_POISSON: {
            if (c->p1 <= 64) { /* inversion, as shape_gen_poisson */
                double pmf = shape_gen_exp(-c->p1), cdf = pmf;
                int64_t kk = 0;
                while (u > cdf && kk < 10000) {
                    kk++;
                    pmf *= c->p1 / (double)kk;
                    cdf += pmf;
                }
                v = (double)kk;
            } else {
                v = sc_floor(c->p1 + shape_gen_sqrt(c->p1) * z + 0.5);
                if (v < 0) v = 0;
            }
            break;
        }
        case SC_D_BERNOULLI: v = u >= 1 - c->p1 ? 1.0 : 0.0; break;
        case SC_D_TRIANGULAR: v = sc_triangular_inverse(c, u); break;
        }
        if (v < c->lo) v = c->lo;
        if (v > c->hi) v = c->hi;
    }
    out->kind = SHAPE_GEN_FLOAT64;
    out->len = 0;
    out->v.f = v;
}

/* ---- constraint rules --------------------------------------------------------------------- */

static double pow10i(int s)
{
    double p = 1;
    while (s-- > 0) p *= 10;
    return p;
}

/* x in the column's representation: an integer, or rounded to its scale. */
static double represent(const sc_column *c, double x)
{
    if (c->kind == SHAPE_GEN_INT64) return sc_floor(x + 0.5);
    if (c->scale >= 0 && sc_fabs(x) < 1e15) return shape_gen_round_scale(x, c->scale);
    return x;
}

static int holds(int op, double v, double r)
{
    switch (op) {
    case 0: return v < r;
    case 1: return v <= r;
    case 2: return v > r;
    case 3: return v >= r;
    default: return v == r;
    }
}

void sc_constraint_fix(const sc_column *c, const sc_repair *rp, const shape_gen_value *right, uint64_t r, shape_gen_value *v)
{
    double u = shape_gen_unit(rp->s, r, 0);
    if (v->kind == SHAPE_GEN_TIMESTAMP_NS) {
        /* the original's cross_column repair: 1..29 days before / after */
        int64_t days = rp->op == 4 ? 0 : 1 + (int64_t)(29 * u);
        __int128 x = (__int128)right->v.i + (rp->op <= 1 ? -days : days) * (__int128)SHAPE_GEN_NS_PER_DAY;
        v->v.i = x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : (int64_t)x;
        return;
    }
    double rv = right->kind == SHAPE_GEN_FLOAT64 ? right->v.f : right->kind == SHAPE_GEN_BOOL ? right->v.b : (double)right->v.i;
    double y = rv;
    if (rp->op != 4) { /* first the original's cross_column repair, when it keeps the rule in the column's type */
        y = represent(c, rp->op <= 1 ? shape_gen_round_scale(rv * (0.30 + 0.65 * u), 2) : rv * (1.05 + 0.95 * u));
        if (!holds(rp->op, y, rv)) {
            /* else the nearest value of the column's type that keeps it */
            double step = c->kind == SHAPE_GEN_INT64 ? 1 : c->scale >= 0 ? 1 / pow10i(c->scale) : (sc_fabs(rv) + 1) * 0x1.0p-40;
            double q = c->kind == SHAPE_GEN_INT64 || c->scale >= 0 ? rv / step : rv;
            if (c->kind == SHAPE_GEN_INT64 || c->scale >= 0) {
                double lo = sc_floor(q) * step, hi = sc_ceil(q) * step;
                y = rp->op == 0 ? (lo < rv ? lo : lo - step) : rp->op == 1 ? lo : rp->op == 2 ? (hi > rv ? hi : hi + step) : hi;
                y = represent(c, y);
            } else
                y = rp->op == 0 ? rv - step : rp->op == 2 ? rv + step : rv;
        }
    }
    if (c->kind == SHAPE_GEN_INT64) {
        v->kind = SHAPE_GEN_INT64;
        v->v.i = (int64_t)y;
    } else {
        v->kind = SHAPE_GEN_FLOAT64;
        v->v.f = y;
    }
}

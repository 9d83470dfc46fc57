/* document.c — the profile document: per-column JSON, error models, and a
 * serializer that writes strict JSON the way the reference does.
 *
 * Why: `-o OUT.json` is read by people and by tools (jq, the reference's
 * schema profile-engine-v1); it must be strict JSON (no NaN/Infinity), carry
 * every documented key in a stable order, and print numbers the way a reader
 * expects (2500.5, not 2500.5000000000000; 1.0 for a float that is whole).
 *
 * How: the document is built as a jansson tree (keys in insertion order, the
 * order of reference/spec-core.md §1.11) and written by our own small
 * serializer, because jansson prints reals with 17 significant digits:
 *   - reals take their shortest round-trip form, laid out like Python's
 *     repr (fixed notation for exponents -4 < e <= 16, else 1e+16, 1e-05;
 *     always a '.' or an exponent: shape_json_f64 of shape/json_write.h,
 *     the writer of emitted events), and a non-finite real is an error — the
 *     builder never makes one: overflowed moments become null and infinite
 *     top values the strings "inf" / "-inf";
 *   - strings are escaped as Python's json.dumps does by default (ASCII
 *     output: non-ASCII as \uXXXX, surrogate pairs above U+FFFF); text that
 *     is not valid UTF-8 gets U+FFFD for each bad byte before it enters the
 *     tree (jansson only holds valid UTF-8);
 *   - indent >= 0 gives json.dumps(indent=N) layout, indent < 0 one line
 *     with ", " and ": " separators.
 */
#include "profile_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shape/json.h" /* shape_json_buf */
#include "shape/json_write.h"
#include "shape/version.h"

static const double quantile_points[] = {0.0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0};
static const char *const quantile_keys[] = {"0.0", "0.01", "0.05", "0.25", "0.5", "0.75", "0.95", "0.99", "1.0"};
#define N_QUANTILES (sizeof quantile_points / sizeof quantile_points[0])

/* ---- building ----------------------------------------------------------- */

/* Build errors are only out-of-memory: every helper returns NULL then, and
 * `set` records the failure so the caller checks once at the end. */
typedef struct builder {
    int failed;
} builder;

static void set(builder *b, json_t *obj, const char *key, json_t *v)
{
    if (!v || json_object_set_new(obj, key, v) != 0) b->failed = 1;
}

static void append(builder *b, json_t *arr, json_t *v)
{
    if (!v || json_array_append_new(arr, v) != 0) b->failed = 1;
}

static json_t *jreal(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *jint(int64_t v) { return json_integer((json_int_t)v); }

/* A JSON string of arbitrary bytes: invalid UTF-8 bytes become U+FFFD. */
static json_t *jtext(const uint8_t *p, size_t n)
{
    json_t *s = json_stringn((const char *)p, n);
    if (s) return s;
    uint8_t *fixed = malloc(n * 3 + 1);
    if (!fixed) return NULL;
    size_t o = 0, i = 0;
    while (i < n) {
        uint8_t c = p[i];
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        int ok = len > 0 && i + len <= n;
        uint32_t cp = 0;
        if (ok && len > 1) {
            cp = c & (0x7F >> len);
            for (size_t k = 1; k < len && ok; k++) {
                if ((p[i + k] & 0xC0) != 0x80) ok = 0;
                cp = (cp << 6) | (p[i + k] & 0x3F);
            }
            if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
                       cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)))
                ok = 0;
        }
        if (ok) {
            memcpy(fixed + o, p + i, len);
            o += len;
            i += len;
        } else {
            memcpy(fixed + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    s = json_stringn((const char *)fixed, o);
    free(fixed);
    return s;
}

static json_t *error_model(const char *algorithm, int exact, json_t *confidence, json_t *relative_error,
                           json_t *parameters)
{
    json_t *m = json_object();
    builder b = {0};
    if (!m) b.failed = 1;
    else {
        set(&b, m, "algorithm", json_string(algorithm));
        set(&b, m, "exact", json_boolean(exact));
        set(&b, m, "confidence", confidence);
        set(&b, m, "relative_error", relative_error);
        set(&b, m, "parameters", parameters);
        confidence = relative_error = parameters = NULL;
    }
    json_decref(confidence);
    json_decref(relative_error);
    json_decref(parameters);
    if (b.failed) {
        json_decref(m);
        return NULL;
    }
    return m;
}

static json_t *error_models(const prof_column *c)
{
    builder b = {0};
    json_t *m = json_object();
    if (!m) return NULL;
    set(&b, m, "counts", error_model("exact", 1, json_null(), json_null(), json_null()));
    if (c->ss) {
        set(&b, m, "cardinality",
            error_model("hyperloglog", 0, json_real(0.95), json_real(1.04 / 128.0) /* 1.04/sqrt(16384) */,
                        json_pack("{s:i, s:i, s:s, s:s}", "p", SHAPE_HLL_P, "registers", SHAPE_HLL_REGISTERS,
                                  "estimator", "ertl-improved", "hash", "xxh3-64")));
        set(&b, m, "top",
            error_model("space-saving", 0, json_real(1.0), json_null(),
                        json_pack("{s:i, s:s}", "capacity", SHAPE_SS_CAPACITY, "error_bound", "n/capacity")));
    }
    if (c->kll) {
        double rel = 2.0 / SHAPE_KLL_K;
        set(&b, m, "quantiles",
            error_model("kll-v2", 0, json_real(0.99), json_real(rel < 1.0 ? rel : 1.0),
                        json_pack("{s:i, s:s}", "k", SHAPE_KLL_K, "error", "rank")));
    }
    if (b.failed) {
        json_decref(m);
        return NULL;
    }
    return m;
}

static json_t *top_list(const prof_column *c, int64_t top_n)
{
    shape_ss_item items[SHAPE_SS_CAPACITY];
    size_t n = shape_ss_items(c->ss, items);
    if ((int64_t)n > top_n) n = (size_t)top_n;
    builder b = {0};
    json_t *list = json_array();
    if (!list) return NULL;
    for (size_t i = 0; i < n && !b.failed; i++) {
        json_t *v;
        switch (c->kind) {
        case PROF_FLOAT:
            v = isinf(items[i].d) ? json_string(items[i].d > 0 ? "inf" : "-inf") : json_real(items[i].d);
            break;
        case PROF_TEXT: v = jtext(items[i].text, items[i].text_len); break;
        default: v = jint(items[i].i); break;
        }
        json_t *e = json_array();
        if (!e) {
            json_decref(v);
            b.failed = 1;
            break;
        }
        append(&b, e, v);
        append(&b, e, jint(items[i].count));
        append(&b, e, jint(items[i].error));
        append(&b, e, json_null());
        append(&b, list, e);
    }
    if (b.failed) {
        json_decref(list);
        return NULL;
    }
    return list;
}

static json_t *quantiles(const prof_column *c, shape_err *err, int *rc)
{
    json_t *q = json_object();
    if (!q || c->finite_count == 0) return q;
    double out[N_QUANTILES];
    *rc = shape_kll_quantiles(c->kll, quantile_points, N_QUANTILES, out, err);
    if (*rc != SHAPE_OK) {
        json_decref(q);
        return NULL;
    }
    builder b = {0};
    for (size_t i = 0; i < N_QUANTILES; i++) set(&b, q, quantile_keys[i], jreal(out[i]));
    if (b.failed) {
        json_decref(q);
        return NULL;
    }
    return q;
}

static json_t *length_doc(const prof_column *c)
{
    const shape_lenhist *h = &c->lengths;
    builder b = {0};
    json_t *d = json_object();
    if (!d) return NULL;
    set(&b, d, "count", jint(c->count - c->null_count));
    if (h->count > 0) {
        shape_lenhist_bin *bins = NULL;
        size_t nb = shape_lenhist_bins(h, &bins);
        if (nb == (size_t)-1) {
            json_decref(d);
            return NULL;
        }
        set(&b, d, "min", jint(nb ? bins[0].length : 0));
        set(&b, d, "max", jint(nb ? bins[nb - 1].length : 0));
        set(&b, d, "mean", jreal((double)h->total / (double)h->count));
        set(&b, d, "p95", jreal(shape_lenhist_quantile(h, 0.95)));
        json_t *hist = json_object();
        if (!hist) b.failed = 1;
        for (size_t i = 0; i < nb && !b.failed; i++) {
            char key[24];
            snprintf(key, sizeof key, "%lld", (long long)bins[i].length);
            set(&b, hist, key, jint(bins[i].count));
        }
        set(&b, d, "hist", hist);
        free(bins);
    }
    if (b.failed) {
        json_decref(d);
        return NULL;
    }
    return d;
}

static json_t *int_array(const int64_t *v, size_t n)
{
    builder b = {0};
    json_t *a = json_array();
    if (!a) return NULL;
    for (size_t i = 0; i < n; i++) append(&b, a, jint(v[i]));
    if (b.failed) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static const char *kind_name(prof_kind k)
{
    static const char *const names[] = {"int", "float", "bool", "text", "temporal", "other"};
    return names[k];
}

static json_t *column_doc(const prof_column *c, int64_t top_n, shape_err *err, int *rc)
{
    builder b = {0};
    json_t *d = json_object();
    if (!d) return NULL;
    set(&b, d, "name", jtext((const uint8_t *)c->name, strlen(c->name)));
    set(&b, d, "kind", json_string(kind_name(c->kind)));
    set(&b, d, "count", jint(c->count));
    set(&b, d, "null_count", jint(c->null_count));
    int numeric = c->kind == PROF_INT || c->kind == PROF_FLOAT;
    if (c->kind == PROF_BOOL) {
        set(&b, d, "true_count", jint(c->true_count));
        set(&b, d, "false_count", jint(c->false_count));
    }
    if (numeric) {
        set(&b, d, "nan_count", jint(c->nan_count));
        set(&b, d, "pos_inf_count", jint(c->pos_inf_count));
        set(&b, d, "neg_inf_count", jint(c->neg_inf_count));
        set(&b, d, "finite_count", jint(c->finite_count));
        if (!c->has_range) {
            set(&b, d, "min", json_null());
            set(&b, d, "max", json_null());
        } else if (c->kind == PROF_INT) {
            set(&b, d, "min", jint(c->imin));
            set(&b, d, "max", jint(c->imax));
        } else {
            set(&b, d, "min", jreal(c->dmin));
            set(&b, d, "max", jreal(c->dmax));
        }
        int any = c->moments.n > 0;
        set(&b, d, "mean", any ? jreal(c->moments.mean) : json_null());
        set(&b, d, "m2", any ? jreal(c->moments.m2) : json_null());
    }
    if (c->ss) {
        set(&b, d, "distinct", jreal(shape_hll_estimate(c->hll)));
        set(&b, d, "distinct_exact", json_false());
        set(&b, d, "top", top_list(c, top_n));
    }
    if (numeric && !b.failed) {
        json_t *q = quantiles(c, err, rc);
        if (!q && *rc != SHAPE_OK) {
            json_decref(d);
            return NULL;
        }
        set(&b, d, "quantiles", q);
    }
    if (c->kind == PROF_TEXT) {
        set(&b, d, "min", c->has_range ? jtext(c->tmin, c->tmin_len) : json_null());
        set(&b, d, "max", c->has_range ? jtext(c->tmax, c->tmax_len) : json_null());
        set(&b, d, "length", length_doc(c));
        json_t *pat = json_object();
        if (!pat) b.failed = 1;
        for (int i = 0; i < SHAPE_PATTERN_COUNT && pat; i++) set(&b, pat, shape_pattern_name(i), jint(c->patterns[i]));
        set(&b, d, "patterns", pat);
    }
    if (c->kind == PROF_TEMPORAL) {
        set(&b, d, "min", c->has_range ? jint(c->imin) : json_null());
        set(&b, d, "max", c->has_range ? jint(c->imax) : json_null());
        set(&b, d, "hour_hist", int_array(c->times.hour, 24));
        set(&b, d, "dow_hist", int_array(c->times.dow, 7));
        set(&b, d, "month_hist", int_array(c->times.month, 12));
        json_t *years = json_object();
        if (!years) b.failed = 1;
        for (size_t i = 0; i < c->times.n_years && years; i++) {
            char key[24];
            snprintf(key, sizeof key, "%lld", (long long)c->times.years[i].year);
            set(&b, years, key, jint(c->times.years[i].count));
        }
        set(&b, d, "year_hist", years);
    }
    set(&b, d, "arrow_type", jtext((const uint8_t *)c->arrow_type, strlen(c->arrow_type)));
    if (numeric) {
        int64_t n = c->moments.n;
        double m2 = c->moments.m2;
        set(&b, d, "variance_population", n > 0 ? jreal(m2 / (double)n) : json_null());
        set(&b, d, "variance_sample", n > 1 ? jreal(m2 / (double)(n - 1)) : json_null());
    }
    set(&b, d, "error_models", error_models(c));
    if (b.failed) {
        json_decref(d);
        return NULL;
    }
    return d;
}

/* skip_empty: leave out the columns without a value (null in every row) */
static int table_json(const shape_profile *p, int skip_empty, json_t **out, shape_err *err)
{
    *out = NULL;
    builder b = {0};
    int rc = SHAPE_OK;
    json_t *t = json_object();
    json_t *cols = json_array();
    if (!t || !cols) b.failed = 1;
    for (size_t i = 0; i < p->ncols && !b.failed; i++) {
        if (skip_empty && p->cols[i]->null_count == p->cols[i]->count) continue;
        json_t *c = column_doc(p->cols[i], p->cfg.top_n, err, &rc);
        if (!c && rc != SHAPE_OK) break;
        append(&b, cols, c);
    }
    if (t && cols && !b.failed && rc == SHAPE_OK) {
        set(&b, t, "name", jtext((const uint8_t *)p->name, strlen(p->name)));
        set(&b, t, "rows", jint(p->rows));
        set(&b, t, "columns", cols);
        cols = NULL;
    }
    json_decref(cols);
    if (b.failed || rc != SHAPE_OK) {
        json_decref(t);
        if (rc != SHAPE_OK) return rc;
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory building the profile of '%s'", p->name);
    }
    *out = t;
    return SHAPE_OK;
}

int shape_profile_table_json(const shape_profile *p, json_t **out, shape_err *err)
{
    return table_json(p, 0, out, err);
}

static int document_json(const shape_profile *const *tables, size_t n, int skip_empty, json_t **out, shape_err *err)
{
    *out = NULL;
    builder b = {0};
    json_t *doc = json_object();
    json_t *tabs = json_object();
    if (!doc || !tabs) b.failed = 1;
    for (size_t i = 0; i < n && !b.failed; i++) {
        if (json_object_get(tabs, tables[i]->name)) {
            json_decref(doc);
            json_decref(tabs);
            return shape_err_set(err, SHAPE_EINVAL, "two tables are both named '%s'", tables[i]->name);
        }
        json_t *t = NULL;
        int rc = table_json(tables[i], skip_empty, &t, err);
        if (rc != SHAPE_OK) {
            json_decref(doc);
            json_decref(tabs);
            return rc;
        }
        json_t *name = json_object_get(t, "name"); /* the UTF-8-safe spelling */
        if (json_object_set_new(tabs, json_string_value(name), t) != 0) b.failed = 1;
    }
    if (!b.failed) {
        set(&b, doc, "schema_version", json_integer(1));
        set(&b, doc, "engine", json_string("shape-profile-engine"));
        set(&b, doc, "shape_version", json_string(SHAPE_VERSION));
        set(&b, doc, "mode", json_string("bounded"));
        set(&b, doc, "tables", tabs);
        tabs = NULL;
    }
    json_decref(tabs);
    if (b.failed) {
        json_decref(doc);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory building the profile document");
    }
    *out = doc;
    return SHAPE_OK;
}

int shape_profile_document_json(const shape_profile *const *tables, size_t n, json_t **out, shape_err *err)
{
    return document_json(tables, n, 0, out, err);
}

int shape_profile_document_json_valued(const shape_profile *const *tables, size_t n, json_t **out, shape_err *err)
{
    return document_json(tables, n, 1, out, err);
}

/* ---- serializing -------------------------------------------------------- */

/* The text being written, and whether it ran out of memory (sticky: the
 * dump checks once at the end). */
typedef struct outbuf {
    shape_json_buf b;
    int failed;
} outbuf;

static void out_add(outbuf *o, const char *s, size_t n)
{
    if (!o->failed && shape_json_buf_append(&o->b, s, n) != 0) o->failed = 1;
}

static void out_str(outbuf *o, const char *s) { out_add(o, s, strlen(s)); }

static void out_string(outbuf *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    out_add(o, "\"", 1);
    size_t i = 0, run = 0;
    while (i < n) {
        /* 8 bytes at a time up to the first quote, backslash, control or
         * non-ASCII byte (the lowest flag of both tests is exact): the top
         * values of a text column are often long texts */
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            uint64_t flags = shape_json_needs_escape8_(w) | (w & UINT64_C(0x8080808080808080));
            if (!flags) {
                i += 8;
                run += 8;
                continue;
            }
            size_t k = (size_t)__builtin_ctzll(flags) >> 3;
            i += k;
            run += k;
        }
        uint8_t c = (uint8_t)s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            run++;
            i++;
            continue;
        }
        out_add(o, s + i - run, run);
        run = 0;
        char esc[16];
        if (c < 0x80) {
            switch (c) {
            case '"': out_add(o, "\\\"", 2); break;
            case '\\': out_add(o, "\\\\", 2); break;
            case '\n': out_add(o, "\\n", 2); break;
            case '\r': out_add(o, "\\r", 2); break;
            case '\t': out_add(o, "\\t", 2); break;
            case '\b': out_add(o, "\\b", 2); break;
            case '\f': out_add(o, "\\f", 2); break;
            default:
                snprintf(esc, sizeof esc, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
                out_add(o, esc, 6);
            }
            i++;
            continue;
        }
        /* valid UTF-8 (jansson guarantees it): decode one code point */
        size_t len = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
        if (i + len > n) len = n - i;
        uint32_t cp = c & (0x7F >> len);
        for (size_t k = 1; k < len; k++) cp = (cp << 6) | ((uint8_t)s[i + k] & 0x3F);
        i += len;
        uint32_t units[2];
        int nu = 0;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            units[nu++] = 0xD800 | (cp >> 10);
            units[nu++] = 0xDC00 | (cp & 0x3FF);
        } else {
            units[nu++] = cp;
        }
        for (int k = 0; k < nu; k++) {
            uint32_t u = units[k];
            char e6[7] = {'\\', 'u', hex[(u >> 12) & 15], hex[(u >> 8) & 15], hex[(u >> 4) & 15], hex[u & 15], 0};
            out_add(o, e6, 6);
        }
    }
    out_add(o, s + i - run, run);
    out_add(o, "\"", 1);
}

static void newline(outbuf *o, int indent, int level)
{
    out_add(o, "\n", 1);
    for (int i = 0; i < indent * level; i++) out_add(o, " ", 1);
}

static int dump(outbuf *o, const json_t *v, int indent, int level, shape_err *err)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (json_object_size(v) == 0) {
            out_str(o, "{}");
            return SHAPE_OK;
        }
        out_str(o, "{");
        const char *key;
        json_t *val;
        int first = 1;
        json_object_foreach((json_t *)v, key, val)
        {
            if (!first) out_str(o, indent >= 0 ? "," : ", ");
            first = 0;
            if (indent >= 0) newline(o, indent, level + 1);
            out_string(o, key, strlen(key));
            out_str(o, ": ");
            SHAPE_RETURN_NOT_OK(dump(o, val, indent, level + 1, err));
        }
        if (indent >= 0) newline(o, indent, level);
        out_str(o, "}");
        return SHAPE_OK;
    }
    case JSON_ARRAY: {
        if (json_array_size(v) == 0) {
            out_str(o, "[]");
            return SHAPE_OK;
        }
        out_str(o, "[");
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i) out_str(o, indent >= 0 ? "," : ", ");
            if (indent >= 0) newline(o, indent, level + 1);
            SHAPE_RETURN_NOT_OK(dump(o, json_array_get(v, i), indent, level + 1, err));
        }
        if (indent >= 0) newline(o, indent, level);
        out_str(o, "]");
        return SHAPE_OK;
    }
    case JSON_STRING: out_string(o, json_string_value(v), json_string_length(v)); return SHAPE_OK;
    case JSON_INTEGER: /* what "%lld" writes, without snprintf (a document has thousands) */
        out_add(o, buf, (size_t)(shape_json_i64(buf, (int64_t)json_integer_value(v)) - buf));
        return SHAPE_OK;
    case JSON_REAL: {
        double x = json_real_value(v);
        if (!isfinite(x)) return shape_err_set(err, SHAPE_EINVAL, "a non-finite number cannot be written as JSON");
        out_add(o, buf, (size_t)(shape_json_f64(buf, x) - buf));
        return SHAPE_OK;
    }
    case JSON_TRUE: out_str(o, "true"); return SHAPE_OK;
    case JSON_FALSE: out_str(o, "false"); return SHAPE_OK;
    default: out_str(o, "null"); return SHAPE_OK;
    }
}

int shape_profile_json_dumps(const json_t *v, int indent, char **out, size_t *len, shape_err *err)
{
    *out = NULL;
    if (len) *len = 0;
    outbuf o = {0};
    int rc = dump(&o, v, indent, 0, err);
    if (rc == SHAPE_OK && o.failed) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory writing JSON");
    if (rc != SHAPE_OK) {
        shape_json_buf_reset(&o.b);
        return rc;
    }
    if (!o.b.data) out_add(&o, "", 0);
    if (o.failed) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing JSON");
    *out = o.b.data;
    if (len) *len = o.b.len;
    return SHAPE_OK;
}

int shape_profile_document(const shape_profile *const *tables, size_t n, char **out, size_t *len, shape_err *err)
{
    *out = NULL;
    if (len) *len = 0;
    json_t *doc = NULL;
    SHAPE_RETURN_NOT_OK(shape_profile_document_json(tables, n, &doc, err));
    int rc = shape_profile_document_text(doc, out, len, err);
    json_decref(doc);
    return rc;
}

int shape_profile_document_text(const json_t *doc, char **out, size_t *len, shape_err *err)
{
    *out = NULL;
    if (len) *len = 0;
    char *text = NULL;
    size_t tlen = 0;
    SHAPE_RETURN_NOT_OK(shape_profile_json_dumps(doc, 2, &text, &tlen, err));
    char *full = realloc(text, tlen + 2);
    if (!full) {
        free(text);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing the profile document");
    }
    full[tlen] = '\n';
    full[tlen + 1] = '\0';
    *out = full;
    if (len) *len = tlen + 1;
    return SHAPE_OK;
}

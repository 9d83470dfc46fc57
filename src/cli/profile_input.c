/* profile_input.c — profile-show's and profile-report's reader of the five
 * forms a profile comes in, and their shared histogram (profile_input.h).
 */
#include "cli/profile_input.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shape/atomic_file.h"
#include "shape/base64.h"
#include "shape/profile.h"
#include "shape/stream_profiler.h"

/* ---- the histogram ----------------------------------------------------------- */

typedef struct qpoint {
    double p, v;
} qpoint;

static int qcmp(const void *a, const void *b)
{
    double x = ((const qpoint *)a)->p, y = ((const qpoint *)b)->p;
    return (x > y) - (x < y);
}

static double cdf(const qpoint *q, size_t n, double x)
{
    if (x < q[0].v) return 0;
    if (x >= q[n - 1].v) return 1;
    size_t i = 0;
    while (i + 1 < n && q[i + 1].v <= x) i++;
    if (i + 1 < n && q[i + 1].v > q[i].v) return q[i].p + (q[i + 1].p - q[i].p) * (x - q[i].v) / (q[i + 1].v - q[i].v);
    return q[i].p;
}

/* The share of values at most x, from the quantiles alone (a step function: for integers). */
static double cdf_step(const qpoint *q, size_t n, double x)
{
    double p = 0;
    for (size_t i = 0; i < n; i++)
        if (q[i].v <= x) p = q[i].p;
    return p;
}

int shape_cli_histogram(const json_t *quantiles, int integers, double *mass, int *bins_io, double *lo, double *hi)
{
    int bins = *bins_io > 64 ? 64 : *bins_io;
    qpoint q[64];
    size_t n = 0;
    const char *key;
    json_t *val;
    *lo = *hi = NAN;
    json_object_foreach((json_t *)quantiles, key, val)
    {
        if (n < 64 && json_is_number(val) && isfinite(json_number_value(val))) {
            q[n].p = strtod(key, NULL);
            q[n++].v = json_number_value(val);
        }
    }
    if (n < 1) return 0;
    qsort(q, n, sizeof *q, qcmp);
    *lo = q[0].v;
    *hi = q[n - 1].v;
    if (n < 2 || !(*hi > *lo) || bins < 1) return 0;
    if (integers && *hi - *lo + 1 <= bins) {
        *bins_io = bins = (int)(*hi - *lo + 1);
        for (int b = 0; b < bins; b++) mass[b] = cdf_step(q, n, *lo + b) - (b ? cdf_step(q, n, *lo + b - 1) : 0);
        return 1;
    }
    *bins_io = bins;
    double prev = 0;
    for (int b = 0; b < bins; b++) {
        double edge = b + 1 == bins ? *hi : *lo + (*hi - *lo) * (b + 1) / bins;
        double c = b + 1 == bins ? 1 : cdf(q, n, edge);
        mass[b] = c - prev;
        prev = c;
    }
    return 1;
}

void shape_cli_fmt_instant_us(char *buf, size_t n, long long us)
{
    long long s = us / 1000000, frac = us % 1000000;
    if (frac < 0) frac += 1000000, s -= 1;
    time_t t = (time_t)s;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(buf, n, "%lld us", us);
        return;
    }
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    if (frac)
        snprintf(buf, n, "%s.%06lldZ", day, frac);
    else
        snprintf(buf, n, "%sZ", day);
}

/* ---- reading ------------------------------------------------------------------ */

static int read_input(const char *path, char **bytes, size_t *len, shape_err *err)
{
    if (strcmp(path, "-") != 0) return shape_file_read_all(path, "the profile", bytes, len, NULL, err);
    size_t cap = 1 << 16, used = 0;
    char *b = malloc(cap + 1);
    while (b) {
        size_t got = fread(b + used, 1, cap - used, stdin);
        used += got;
        if (got == 0) break;
        if (used == cap) {
            char *g = realloc(b, 2 * cap + 1);
            if (!g) break;
            b = g;
            cap *= 2;
        }
    }
    if (!b || (used < cap && !feof(stdin))) {
        int bad = b != NULL;
        free(b);
        return bad ? shape_err_set(err, SHAPE_EIO, "cannot read the profile from stdin: %s", strerror(errno))
                   : shape_err_set(err, SHAPE_ENOMEM, "out of memory reading stdin");
    }
    b[used] = '\0';
    *bytes = b;
    *len = used;
    return SHAPE_OK;
}

static int load_state_bytes(const uint8_t *bytes, size_t len, int top_n, shape_profile **out, shape_err *err)
{
    shape_profile_config cfg;
    shape_profile_config_default(&cfg);
    cfg.top_n = top_n;
    return shape_profile_state_load(bytes, len, &cfg, out, err);
}

/* The one table of a single profile's document: {"name", "rows", "columns"} (a new reference). */
static int table_of(const shape_profile *p, json_t **out, shape_err *err)
{
    json_t *doc = NULL;
    const shape_profile *t[1] = {p};
    SHAPE_RETURN_NOT_OK(shape_profile_document_json(t, 1, &doc, err));
    const char *name;
    json_t *v;
    *out = NULL;
    json_object_foreach(json_object_get(doc, "tables"), name, v)
    {
        *out = json_incref(v);
        break;
    }
    json_decref(doc);
    return *out ? SHAPE_OK : shape_err_set(err, SHAPE_EINTERNAL, "a profile document without its table");
}

typedef struct lines {
    shape_profile **tables; /* split states, in order of first line */
    size_t n_tables, cap_tables;
    json_t *windows;
    int form; /* 0 none yet, 1 split state, 2 windows, 3 window states */
} lines;

static int add_line(lines *l, const char *path, size_t line_no, json_t *o, int top_n, shape_err *err)
{
    const json_t *state = json_object_get(o, "state"), *table = json_object_get(o, "table");
    int windowed = json_is_integer(json_object_get(o, "start_us")) && json_is_integer(json_object_get(o, "end_us")) &&
                   json_is_string(json_object_get(o, "kind"));
    int form = json_is_string(state) && json_is_string(table) && !windowed ? 1
               : windowed && json_is_object(json_object_get(o, "profile")) ? 2
               : windowed && json_is_string(state) ? 3
                                                    : 0;
    if (!form)
        return shape_err_set(err, SHAPE_EINVAL,
                             "%.200s line %zu is not a profile document, windows line or state line (made by "
                             "stream-profile -o, --windows or --state?)",
                             path, line_no);
    if (l->form && form != l->form)
        return shape_err_set(err, SHAPE_EINVAL, "%.200s line %zu: a %s line after %s lines", path, line_no,
                             form == 1 ? "split state" : form == 2 ? "windows" : "window state",
                             l->form == 1 ? "split state" : l->form == 2 ? "windows" : "window state");
    l->form = form;
    if (form == 2) {
        const json_t *prof = json_object_get(o, "profile"), *rows = json_object_get(o, "rows");
        if (!json_is_integer(rows)) rows = json_object_get(prof, "rows");
        if (!json_is_integer(rows) || !json_is_array(json_object_get(prof, "columns")))
            return shape_err_set(err, SHAPE_EINVAL, "%.200s line %zu: a window without its rows or columns", path,
                                 line_no);
        json_t *w = json_pack("{s:O, s:O, s:O, s:O, s:O}", "kind", json_object_get(o, "kind"), "start_us",
                              json_object_get(o, "start_us"), "end_us", json_object_get(o, "end_us"), "rows", rows,
                              "profile", prof);
        if (w && json_is_true(json_object_get(o, "partial"))) json_object_set_new(w, "partial", json_true());
        if (w && json_is_string(table)) json_object_set(w, "table", (json_t *)table);
        return w && json_array_append_new(l->windows, w) == 0 ? SHAPE_OK
                                                              : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    size_t n = 0;
    uint8_t *bytes = shape_base64_decode(json_string_value(state), &n);
    if (!bytes) return shape_err_set(err, SHAPE_EINVAL, "%.200s line %zu: the state is not base64", path, line_no);
    shape_profile *p = NULL;
    int rc = load_state_bytes(bytes, n, top_n, &p, err);
    free(bytes);
    if (rc != SHAPE_OK) {
        shape_err_prefix(err, "%.200s line %zu", path, line_no);
        return rc;
    }
    if (form == 3) {
        json_t *t = NULL;
        rc = table_of(p, &t, err);
        shape_profile_free(p);
        if (rc != SHAPE_OK) return rc;
        const json_t *rows = json_object_get(o, "rows");
        if (!json_is_integer(rows)) rows = json_object_get(t, "rows");
        json_t *w = json_pack("{s:O, s:O, s:O, s:O, s:o}", "kind", json_object_get(o, "kind"), "start_us",
                              json_object_get(o, "start_us"), "end_us", json_object_get(o, "end_us"), "rows",
                              rows ? rows : json_object_get(t, "rows"), "profile", t);
        if (w && json_is_true(json_object_get(o, "partial"))) json_object_set_new(w, "partial", json_true());
        if (w && json_is_string(table)) json_object_set(w, "table", (json_t *)table);
        return w && json_array_append_new(l->windows, w) == 0 ? SHAPE_OK
                                                              : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < l->n_tables; i++) /* the same table twice (states of two runs put together): merged */
        if (strcmp(shape_profile_name(l->tables[i]), shape_profile_name(p)) == 0) {
            rc = shape_profile_merge(l->tables[i], p, err);
            shape_profile_free(p);
            if (rc != SHAPE_OK) shape_err_prefix(err, "%.200s line %zu", path, line_no);
            return rc;
        }
    if (l->n_tables == l->cap_tables) {
        size_t cap = l->cap_tables ? 2 * l->cap_tables : 16;
        shape_profile **t = realloc(l->tables, cap * sizeof *t);
        if (!t) {
            shape_profile_free(p);
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        }
        l->tables = t;
        l->cap_tables = cap;
    }
    l->tables[l->n_tables++] = p;
    return SHAPE_OK;
}

static int load_lines(const char *path, const char *text, size_t len, int top_n, shape_cli_profile_input *in,
                      shape_err *err)
{
    lines l = {.windows = json_array()};
    int rc = l.windows ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    size_t line_no = 0;
    for (size_t at = 0; rc == SHAPE_OK && at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        line_no++;
        size_t a = at, b = end;
        while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r')) a++;
        while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r')) b--;
        if (b > a) {
            json_error_t je;
            json_t *o = json_loadb(text + a, b - a, 0, &je);
            if (!o && !nl) { /* a torn last line: the run was killed mid-write */
                fprintf(stderr, "shape: note: %s line %zu is torn (no newline, not JSON): skipped\n", path, line_no);
            } else if (!json_is_object(o)) {
                rc = shape_err_set(err, SHAPE_EINVAL,
                                   "%.200s line %zu is not JSON (%s): not a profile document, windows file or state",
                                   path, line_no, o ? "not an object" : je.text);
            } else {
                rc = add_line(&l, path, line_no, o, top_n, err);
            }
            json_decref(o);
        }
        at = nl ? end + 1 : len;
    }
    if (rc == SHAPE_OK && (l.form == 2 || l.form == 3)) {
        in->windows = l.windows;
        l.windows = NULL;
        in->form = l.form == 2 ? "windows" : "window states";
    } else if (rc == SHAPE_OK) { /* split states; or no line at all (an empty worker's state): no tables */
        char *doc = NULL;
        size_t dlen = 0;
        rc = shape_stream_split_document((const shape_profile *const *)l.tables, l.n_tables, &doc, &dlen, err);
        json_error_t je;
        if (rc == SHAPE_OK && !(in->doc = json_loadb(doc, dlen, 0, &je)))
            rc = shape_err_set(err, SHAPE_EINTERNAL, "the split document does not read back: %s", je.text);
        free(doc);
        in->form = "split state";
    }
    for (size_t i = 0; i < l.n_tables; i++) shape_profile_free(l.tables[i]);
    free(l.tables);
    json_decref(l.windows);
    return rc;
}

int shape_cli_profile_load(const char *path, int top_n, shape_cli_profile_input *in, shape_err *err)
{
    memset(in, 0, sizeof *in);
    char *bytes = NULL;
    size_t len = 0;
    SHAPE_RETURN_NOT_OK(read_input(path, &bytes, &len, err));
    int rc = SHAPE_OK;
    if (len >= 8 && memcmp(bytes, "SHPROFST", 8) == 0) {
        shape_profile *p = NULL;
        rc = load_state_bytes((const uint8_t *)bytes, len, top_n, &p, err);
        if (rc != SHAPE_OK && rc != SHAPE_ENOMEM) shape_err_prefix(err, "%.200s", path);
        const shape_profile *t[1] = {p};
        if (rc == SHAPE_OK) rc = shape_profile_document_json(t, 1, &in->doc, err);
        shape_profile_free(p);
        in->form = "state";
    } else {
        json_error_t je;
        json_t *whole = json_loadb(bytes, len, 0, &je);
        if (json_is_object(whole) && json_is_object(json_object_get(whole, "tables"))) {
            in->doc = whole;
            in->form = "document";
        } else {
            json_decref(whole);
            size_t i = 0;
            while (i < len && (bytes[i] == ' ' || bytes[i] == '\n' || bytes[i] == '\t' || bytes[i] == '\r')) i++;
            if (i < len && bytes[i] != '{')
                rc = shape_err_set(err, SHAPE_EINVAL,
                                   "cannot read the profile %.200s: %s (line %d): not a profile document, "
                                   "windows file or state",
                                   path, je.text, je.line);
            else if (whole && !strchr(bytes, '\n'))
                rc = shape_err_set(err, SHAPE_EINVAL,
                                   "%.200s is not a profile document (no \"tables\"; made by stream-profile -o?)",
                                   path);
            else
                rc = load_lines(path, bytes, len, top_n, in, err);
        }
    }
    free(bytes);
    if (rc != SHAPE_OK) shape_cli_profile_input_free(in);
    return rc;
}

void shape_cli_profile_input_free(shape_cli_profile_input *in)
{
    json_decref(in->doc);
    json_decref(in->windows);
    in->doc = in->windows = NULL;
}

json_t *shape_cli_windows_by_table(const json_t *windows)
{
    json_t *by = json_object();
    size_t i;
    const json_t *w;
    json_array_foreach(windows, i, w)
    {
        const char *t = json_string_value(json_object_get(w, "table"));
        if (!t) t = "";
        json_t *list = json_object_get(by, t);
        if (!list) {
            list = json_array();
            json_object_set_new(by, t, list);
        }
        json_array_append(list, (json_t *)w);
    }
    return by;
}

/* cmd_profile_show.c — `shape profile-show PROFILE.json`: a profile read by a person.
 *
 * Why: a profile document is thorough and long (sketch parameters, error
 * models, quantiles per column); at a terminal one wants, per table, its
 * rows and columns and, per column, what it holds at a glance: its kind,
 * nulls, distinct values, its range or its top values, and the shape of a
 * numeric column's distribution.
 * How: read the document (jansson: a cold path), then per table print a
 * heading and one line per column — name, kind, nulls (count and share),
 * distinct (~ when estimated), and a summary by kind: int/float min, max and
 * mean (± inf and NaN counts when any); text the top values with their
 * shares; bool the true/false counts; temporal the first and last instants
 * (ISO-8601, UTC) — and under a numeric column a small histogram of equal
 * bins between its min and max quantiles, each bin's mass read off the
 * piecewise-linear distribution through the KLL quantiles (an integer
 * column of few values: one bar per value, from the step function). On a terminal
 * the lines fit its width (TIOCGWINSZ; a summary that would be cut short
 * goes on a line of its own), headings are bold and bars use
 * block characters; piped, the text is plain ASCII with no escapes and
 * nothing cut. --json prints the same figures as one compact JSON document.
 * Every form a profile comes in is shown (cli/profile_input.h): a
 * document, a profiler state (SHPROFST; with --split-by, JSON lines of
 * table states) loaded with --top-n (the one it was made with) and turned
 * into its document first, and a windows or window states file: one line
 * per window (start, end, rows, partial), then per column its null share
 * and, for numbers, its mean over the windows as sparklines (windows
 * averaged into at most 48 cells), with the range beside them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/profile_input.h"
#include "shape/profile.h"

typedef struct view {
    int tty;
    int width; /* 0 = no limit */
    FILE *out;
} view;

/* ---- small formatters ---------------------------------------------------- */

static void fmt_number(char *buf, size_t n, const json_t *v)
{
    if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%.6g", json_real_value(v));
    else
        snprintf(buf, n, "-");
}

static void fmt_instant(char *buf, size_t n, const json_t *v)
{
    if (!json_is_number(v)) {
        snprintf(buf, n, "-");
        return;
    }
    shape_cli_fmt_instant_us(buf, n, json_is_integer(v) ? (long long)json_integer_value(v) : (long long)json_real_value(v));
}

/* A value of a top list as short text: strings quoted, cut at 24 bytes (on a UTF-8 boundary). */
static void fmt_value(char *buf, size_t n, const json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t len = strlen(s), cut = len > 24 ? 24 : len;
        while (cut < len && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
        char clean[32];
        for (size_t i = 0; i < cut; i++) clean[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '.' : s[i]; /* no control bytes to a terminal */
        clean[cut] = 0;
        snprintf(buf, n, "'%s%s'", clean, cut < len ? "..." : "");
    } else if (json_is_null(v)) {
        snprintf(buf, n, "null");
    } else if (json_is_true(v) || json_is_false(v)) {
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    } else {
        fmt_number(buf, n, v);
    }
}

/* Display width of UTF-8 text (code points; wide characters counted once). */
static size_t text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* Print line, cut to the view's width (on a code point boundary). */
static void emit_line(const view *v, const char *line)
{
    if (!v->width || (int)text_width(line) <= v->width) {
        fprintf(v->out, "%s\n", line);
        return;
    }
    size_t w = 0, i = 0;
    for (; line[i]; i++) {
        if (((unsigned char)line[i] & 0xC0) != 0x80) {
            if ((int)w == v->width - 1) break;
            w++;
        }
    }
    fprintf(v->out, "%.*s~\n", (int)i, line);
}

/* ---- the histogram ----------------------------------------------------------- */

static void print_histogram(const view *v, const json_t *col, int indent)
{
    const json_t *quantiles = json_object_get(col, "quantiles");
    if (!json_is_object(quantiles)) return;
    int bins = v->width ? v->width - indent - 30 : 40;
    if (bins > 48) bins = 48;
    if (bins < 8) return;
    double mass[64], lo, hi, top = 0;
    if (!shape_cli_histogram(quantiles, strcmp(json_string_value(json_object_get(col, "kind")), "int") == 0, mass, &bins,
                             &lo, &hi))
        return;
    for (int b = 0; b < bins; b++) top = mass[b] > top ? mass[b] : top;
    static const char *const blocks[] = {" ", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                         "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"};
    static const char ascii[] = " .:-=+*#@";
    char line[1024];
    int len = snprintf(line, sizeof line, "%*s", indent, "");
    for (int b = 0; b < bins && len < (int)sizeof line - 8; b++) {
        int level = top > 0 ? (int)(mass[b] / top * 8 + 0.5) : 0;
        if (level == 0 && mass[b] > 0) level = 1;
        len += v->tty ? snprintf(line + len, sizeof line - (size_t)len, "%s", blocks[level])
                      : snprintf(line + len, sizeof line - (size_t)len, "%c", ascii[level]);
    }
    snprintf(line + len, sizeof line - (size_t)len, "  %.6g .. %.6g", lo, hi);
    emit_line(v, line);
}

/* ---- per column ---------------------------------------------------------------- */

static long long get_int(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : json_is_real(v) ? (long long)json_real_value(v) : 0;
}

static void summary(const json_t *c, const char *kind, char *buf, size_t n)
{
    char a[64], b[64], m[64];
    size_t len = 0;
    buf[0] = 0;
    if (strcmp(kind, "int") == 0 || strcmp(kind, "float") == 0) {
        fmt_number(a, sizeof a, json_object_get(c, "min"));
        fmt_number(b, sizeof b, json_object_get(c, "max"));
        fmt_number(m, sizeof m, json_object_get(c, "mean"));
        len = (size_t)snprintf(buf, n, "min %s  max %s  mean %s", a, b, m);
        long long pinf = get_int(c, "pos_inf_count"), ninf = get_int(c, "neg_inf_count"), nan = get_int(c, "nan_count");
        if ((pinf || ninf || nan) && len < n)
            snprintf(buf + len, n - len, "  (+inf %lld, -inf %lld, NaN %lld)", pinf, ninf, nan);
    } else if (strcmp(kind, "bool") == 0) {
        snprintf(buf, n, "true %lld  false %lld", get_int(c, "true_count"), get_int(c, "false_count"));
    } else if (strcmp(kind, "temporal") == 0) {
        fmt_instant(a, sizeof a, json_object_get(c, "min"));
        fmt_instant(b, sizeof b, json_object_get(c, "max"));
        snprintf(buf, n, "%s .. %s", a, b);
    } else if (strcmp(kind, "text") == 0) {
        const json_t *top = json_object_get(c, "top");
        long long present = get_int(c, "count") - get_int(c, "null_count");
        size_t i;
        const json_t *e;
        len = (size_t)snprintf(buf, n, "top");
        json_array_foreach(top, i, e)
        {
            if (i >= 5 || len >= n) break;
            fmt_value(a, sizeof a, json_array_get(e, 0));
            long long cnt = json_is_integer(json_array_get(e, 1)) ? (long long)json_integer_value(json_array_get(e, 1)) : 0;
            len += (size_t)snprintf(buf + len, n - len, "%s %s %.0f%%", i ? "," : "", a,
                                    present ? 100.0 * (double)cnt / (double)present : 0.0);
        }
        if (!json_array_size(top)) {
            const json_t *l = json_object_get(c, "length");
            if (json_is_object(l) && get_int(l, "count"))
                snprintf(buf, n, "length %lld .. %lld", get_int(l, "min"), get_int(l, "max"));
            else
                snprintf(buf, n, "-");
        }
    } else {
        const json_t *t = json_object_get(c, "arrow_type");
        snprintf(buf, n, "%s", json_is_string(t) ? json_string_value(t) : "");
    }
}

static void fmt_distinct(char *buf, size_t n, const json_t *c)
{
    const json_t *d = json_object_get(c, "distinct");
    if (!json_is_number(d)) {
        snprintf(buf, n, "-");
        return;
    }
    int exact = json_is_true(json_object_get(c, "distinct_exact"));
    snprintf(buf, n, "%s%.0f", exact ? "" : "~", json_number_value(d));
}

static void show_table(const view *v, const char *name, const json_t *t)
{
    const json_t *cols = json_object_get(t, "columns");
    long long rows = get_int(t, "rows");
    size_t width = 6;
    size_t i;
    const json_t *c;
    json_array_foreach(cols, i, c)
    {
        const json_t *nm = json_object_get(c, "name");
        size_t w = json_is_string(nm) ? text_width(json_string_value(nm)) : 0;
        if (w > width) width = w;
    }
    if (width > 32) width = 32;
    fprintf(v->out, "%stable %s: %lld rows, %zu columns%s\n", v->tty ? "\x1b[1m" : "", name, rows, json_array_size(cols),
            v->tty ? "\x1b[0m" : "");
    char line[2048], head[256];
    snprintf(line, sizeof line, "  %-*s  %-8s  %14s  %9s  %s", (int)width, "column", "kind", "nulls", "distinct", "summary");
    emit_line(v, line);
    json_array_foreach(cols, i, c)
    {
        const char *cname = json_string_value(json_object_get(c, "name"));
        const char *kind = json_string_value(json_object_get(c, "kind"));
        if (!cname) cname = "";
        if (!kind) kind = "?";
        long long count = get_int(c, "count"), nulls = get_int(c, "null_count");
        char nullbuf[48], distinct[32], sum[1024];
        snprintf(nullbuf, sizeof nullbuf, "%lld (%.1f%%)", nulls, count ? 100.0 * (double)nulls / (double)count : 0.0);
        fmt_distinct(distinct, sizeof distinct, c);
        summary(c, kind, sum, sizeof sum);
        /* pad the name by display width, not bytes */
        size_t nw = text_width(cname);
        snprintf(head, sizeof head, "%s%*s", cname, nw < width ? (int)(width - nw) : 0, "");
        int prefix = snprintf(line, sizeof line, "  %s  %-8s  %14s  %9s  ", head, kind, nullbuf, distinct);
        if (v->width && v->width - prefix < 32 && (int)text_width(sum) > v->width - prefix) {
            /* a narrow terminal: the summary on a line of its own */
            while (prefix > 0 && line[prefix - 1] == ' ') line[--prefix] = 0;
            emit_line(v, line);
            snprintf(line, sizeof line, "    %s", sum);
        } else {
            snprintf(line + prefix, sizeof line - (size_t)prefix, "%s", sum);
        }
        emit_line(v, line);
        if (strcmp(kind, "int") == 0 || strcmp(kind, "float") == 0) print_histogram(v, c, (int)width + 4);
    }
}

/* ---- --json ---------------------------------------------------------------------- */

static json_t *compact(const json_t *doc)
{
    json_t *out = json_object(), *tables = json_array();
    json_object_set_new(out, "tables", tables);
    const char *name;
    json_t *t;
    json_object_foreach(json_object_get(doc, "tables"), name, t)
    {
        json_t *jt = json_object(), *jc = json_array();
        json_object_set_new(jt, "name", json_string(name));
        json_object_set(jt, "rows", json_object_get(t, "rows"));
        json_object_set_new(jt, "columns", jc);
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(t, "columns"), i, c)
        {
            json_t *o = json_object();
            static const char *const keep[] = {"name", "kind", "arrow_type", "count", "null_count", "distinct",
                                               "distinct_exact", "min", "max", "mean", "true_count", "false_count",
                                               "nan_count", "pos_inf_count", "neg_inf_count"};
            for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
                json_t *v = json_object_get(c, keep[k]);
                if (v) json_object_set(o, keep[k], v);
            }
            json_t *top = json_object_get(c, "top");
            if (json_is_array(top) && json_array_size(top)) {
                json_t *short_top = json_array();
                size_t j;
                json_t *e;
                json_array_foreach(top, j, e)
                {
                    if (j >= 5) break;
                    json_array_append_new(short_top, json_pack("[OO]", json_array_get(e, 0), json_array_get(e, 1)));
                }
                json_object_set_new(o, "top", short_top);
            }
            json_array_append_new(jc, o);
        }
        json_array_append_new(tables, jt);
    }
    return out;
}

/* ---- a windows file ----------------------------------------------------------------- */

/* One value per window of column `name` (NAN where a window lacks it or has no value). */
static void series(const json_t *windows, const char *name, int mean, double *out)
{
    size_t i;
    const json_t *w;
    json_array_foreach(windows, i, w)
    {
        out[i] = NAN;
        size_t j;
        const json_t *c;
        json_array_foreach(json_object_get(json_object_get(w, "profile"), "columns"), j, c)
        {
            const char *cn = json_string_value(json_object_get(c, "name"));
            if (!cn || strcmp(cn, name) != 0) continue;
            if (mean) {
                const json_t *m = json_object_get(c, "mean");
                out[i] = json_is_number(m) ? json_number_value(m) : NAN;
            } else {
                long long count = get_int(c, "count");
                out[i] = count ? (double)get_int(c, "null_count") / (double)count : NAN;
            }
            break;
        }
    }
}

/* A sparkline of v[0..n) in at most width cells (windows averaged into cells). */
static void sparkline(const view *v, const double *x, size_t n, int width, char *line, size_t cap, double *lo_out,
                      double *hi_out)
{
    static const char *const blocks[] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                         "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"};
    static const char ascii[] = "_.-:=+*#";
    size_t cells = n < (size_t)width ? n : (size_t)width;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) lo = x[i] < lo ? x[i] : lo, hi = x[i] > hi ? x[i] : hi;
    *lo_out = lo, *hi_out = hi;
    size_t len = 0;
    line[0] = 0;
    for (size_t c = 0; c < cells && len + 8 < cap; c++) {
        size_t from = c * n / cells, to = (c + 1) * n / cells;
        double sum = 0;
        int k = 0;
        for (size_t i = from; i < to; i++)
            if (!isnan(x[i])) sum += x[i], k++;
        if (!k) {
            line[len++] = ' ';
            line[len] = 0;
            continue;
        }
        double m = sum / k;
        int level = hi > lo ? (int)((m - lo) / (hi - lo) * 7 + 0.5) : 0;
        len += (size_t)snprintf(line + len, cap - len, "%s", v->tty ? blocks[level] : (char[]){ascii[level], 0});
    }
}

static void show_windows(const view *v, const json_t *windows)
{
    size_t n = json_array_size(windows), partial = 0;
    long long rows = 0;
    const char *kind = n ? json_string_value(json_object_get(json_array_get(windows, 0), "kind")) : "";
    size_t i;
    const json_t *w;
    json_array_foreach(windows, i, w)
    {
        rows += get_int(w, "rows");
        partial += json_is_true(json_object_get(w, "partial"));
    }
    char a[64], b[64], line[2048];
    if (n) {
        shape_cli_fmt_instant_us(a, sizeof a, get_int(json_array_get(windows, 0), "start_us"));
        shape_cli_fmt_instant_us(b, sizeof b, get_int(json_array_get(windows, n - 1), "end_us"));
    } else {
        snprintf(a, sizeof a, "-"), snprintf(b, sizeof b, "-");
    }
    fprintf(v->out, "%swindows: %zu %s, %s .. %s, %lld rows%s%s\n", v->tty ? "\x1b[1m" : "", n, kind ? kind : "", a, b,
            rows, partial ? " (partial windows in the file)" : "", v->tty ? "\x1b[0m" : "");
    emit_line(v, "  start                 end                         rows");
    json_array_foreach(windows, i, w)
    {
        shape_cli_fmt_instant_us(a, sizeof a, get_int(w, "start_us"));
        shape_cli_fmt_instant_us(b, sizeof b, get_int(w, "end_us"));
        snprintf(line, sizeof line, "  %-20s  %-20s  %12lld%s", a, b, get_int(w, "rows"),
                 json_is_true(json_object_get(w, "partial")) ? "  partial" : "");
        emit_line(v, line);
    }
    if (!n) return;
    /* the columns over time: in order of first appearance */
    json_t *names = json_array(), *seen = json_object(), *kinds = json_object();
    json_array_foreach(windows, i, w)
    {
        size_t j;
        const json_t *c;
        json_array_foreach(json_object_get(json_object_get(w, "profile"), "columns"), j, c)
        {
            const char *cn = json_string_value(json_object_get(c, "name"));
            if (!cn || json_object_get(seen, cn)) continue;
            json_object_set_new(seen, cn, json_true());
            json_object_set(kinds, cn, json_object_get(c, "kind"));
            json_array_append_new(names, json_string(cn));
        }
    }
    double *x = calloc(n, sizeof *x);
    fprintf(v->out, "\n%scolumns over the windows%s (null share; mean of numbers), oldest first\n",
            v->tty ? "\x1b[1m" : "", v->tty ? "\x1b[0m" : "");
    size_t width = 6;
    const json_t *nm;
    json_array_foreach(names, i, nm) width = text_width(json_string_value(nm)) > width ? text_width(json_string_value(nm)) : width;
    if (width > 32) width = 32;
    int cells = v->width ? v->width - (int)width - 40 : 48;
    if (cells > 48) cells = 48;
    if (cells < 8) cells = 8;
    json_array_foreach(names, i, nm)
    {
        if (!x) break;
        const char *cn = json_string_value(nm);
        const char *ck = json_string_value(json_object_get(kinds, cn));
        char spark[512], head[256];
        double lo, hi;
        size_t nw = text_width(cn);
        snprintf(head, sizeof head, "%s%*s", cn, nw < width ? (int)(width - nw) : 0, "");
        series(windows, cn, 0, x);
        sparkline(v, x, n, cells, spark, sizeof spark, &lo, &hi);
        snprintf(line, sizeof line, "  %s  nulls %s  %.1f%% .. %.1f%%", head, spark, isfinite(lo) ? 100 * lo : 0.0,
                 isfinite(hi) ? 100 * hi : 0.0);
        emit_line(v, line);
        if (ck && (!strcmp(ck, "int") || !strcmp(ck, "float"))) {
            series(windows, cn, 1, x);
            sparkline(v, x, n, cells, spark, sizeof spark, &lo, &hi);
            snprintf(line, sizeof line, "  %*s  mean  %s  %.6g .. %.6g", (int)width, "", spark, lo, hi);
            emit_line(v, line);
        }
    }
    free(x);
    json_decref(names);
    json_decref(seen);
    json_decref(kinds);
}

static json_t *compact_windows(const json_t *windows)
{
    json_t *out = json_object(), *arr = json_array();
    json_object_set_new(out, "windows", arr);
    size_t i;
    const json_t *w;
    json_array_foreach(windows, i, w)
    {
        json_t *o = json_pack("{s:O, s:O, s:O, s:O}", "kind", json_object_get(w, "kind"), "start_us",
                              json_object_get(w, "start_us"), "end_us", json_object_get(w, "end_us"), "rows",
                              json_object_get(w, "rows"));
        if (!o) continue;
        if (json_is_true(json_object_get(w, "partial"))) json_object_set_new(o, "partial", json_true());
        if (json_object_get(w, "table")) json_object_set(o, "table", json_object_get(w, "table"));
        const json_t *prof = json_object_get(w, "profile");
        json_t *doc = json_object(), *tables = json_object();
        json_object_set_new(doc, "tables", tables);
        const json_t *pn = json_object_get(prof, "name");
        json_object_set(tables, json_is_string(pn) ? json_string_value(pn) : "", (json_t *)prof);
        json_t *c = compact(doc);
        json_object_set(o, "tables", json_object_get(c, "tables"));
        json_decref(c);
        json_decref(doc);
        json_array_append_new(arr, o);
    }
    return out;
}

static int run_profile_show(const shape_args *args, shape_err *err)
{
    const char *path = shape_args_positional(args, 0);
    int64_t top_n;
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "top-n", 1, INT32_MAX, SHAPE_PROFILE_TOP_N, &top_n, err));
    shape_cli_profile_input in;
    SHAPE_RETURN_NOT_OK(shape_cli_profile_load(path, (int)top_n, &in, err));
    const json_t *tables = in.doc ? json_object_get(in.doc, "tables") : NULL;
    int rc = SHAPE_OK;
    if (shape_args_flag(args, "json")) {
        json_t *c = in.windows ? compact_windows(in.windows) : compact(in.doc);
        char *text = c ? json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(c);
        if (!text) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        else {
            printf("%s\n", text);
            free(text);
        }
    } else {
        view v = {.tty = isatty(STDOUT_FILENO), .width = 0, .out = stdout};
        if (v.tty) {
            struct winsize ws;
            v.width = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
            if (v.width < 40) v.width = 40;
        }
        if (in.windows) {
            json_t *by = shape_cli_windows_by_table(in.windows);
            const char *tname;
            json_t *list;
            int first = 1;
            json_object_foreach(by, tname, list)
            {
                if (!first) fputc('\n', stdout);
                first = 0;
                if (tname[0]) fprintf(stdout, "%stable %s%s\n", v.tty ? "\x1b[1m" : "", tname, v.tty ? "\x1b[0m" : "");
                show_windows(&v, list);
            }
            json_decref(by);
        } else {
            const char *name;
            json_t *t;
            int first = 1;
            json_object_foreach((json_t *)tables, name, t)
            {
                if (!first) fputc('\n', stdout);
                first = 0;
                show_table(&v, name, t);
            }
            if (first) fprintf(stdout, "no tables (an empty %s)\n", in.form);
        }
    }
    if (rc == SHAPE_OK && fflush(stdout) != 0) rc = shape_err_set(err, SHAPE_EIO, "cannot write to stdout: %s", strerror(errno));
    shape_cli_profile_input_free(&in);
    return rc;
}

static const shape_arg_spec profile_show_args[] = {
    {"json", 0, SHAPE_ARG_FLAG, NULL, NULL, "Print the summary's figures as one compact JSON document."},
    {"top-n", 0, SHAPE_ARG_VALUE, "N", "500", "For a state file: the --top-n it was made with."},
    {0},
};

const shape_command shape_cmd_profile_show = {
    .name = "profile-show",
    .summary = "Show a profile document (stream-profile -o) as a readable summary.",
    .positional = "PROFILE.json",
    .min_positional = 1,
    .max_positional = 1,
    .args = profile_show_args,
    .epilog = "Per table: rows and columns; per column: kind, nulls, distinct (~ when estimated), its range\n"
              "(numbers, times), top values (text) or true/false counts, and for numbers a histogram read\n"
              "from the quantiles. Sized to the terminal on a TTY; plain ASCII, nothing cut, when piped.\n"
              "PROFILE.json may be '-' (stdin), a profiler state (stream-profile --state FILE, also of a\n"
              "--split-by run), a windows file (--windows OUT.jsonl) or a window states file; a windows file\n"
              "shows one line per window and each column's null share and mean over the windows.",
    .run = run_profile_show,
};

/* cmd_profile_report.c — `shape profile-report PROFILE.json -o report.html`:
 * a profile as one self-contained HTML page, to read in a browser or send
 * to a colleague.
 *
 * Why: a profile document is for programs; a person wants to see, per
 * table, what its columns hold — with the charts that make a distribution,
 * a skew or a null-heavy column obvious — without installing anything, and
 * the page must open from a mail attachment or a folder as it is.
 * How: the input is read as profile-show reads it (cli/profile_input.h:
 * a document, a state, a split state, a windows or window states file) and
 * written as one HTML file: inline CSS (light and dark by
 * prefers-color-scheme), inline SVG charts, a few lines of inline script
 * for the filter box (report.html#filter=TEXT opens it filtered) and
 * expand/collapse, and a Content-Security-Policy of
 * default-src 'none', so the page cannot fetch anything even if a value
 * tried to make it. Every string from the data is HTML-escaped (values
 * are cut at 120 bytes on a UTF-8 boundary; control bytes become U+FFFD).
 * Per table: an overview (rows, columns, kinds, null cells) and a sortable-
 * at-a-glance column table, then one collapsible section per column
 * (open by default when a page has at most 40 columns) with its
 * statistics and charts: numbers a histogram read off the quantile sketch
 * (shape_cli_histogram, as profile-show draws it; one bar per value for an
 * integer column of few values) and their top values; text the top values
 * as bars, the length histogram (exact; binned when there are many
 * lengths) and the pattern counts; times the hour, weekday and month
 * histograms; bools their true/false/null split. A windows file gets the
 * per-window rows (chart and table) and, per column, its null share and
 * its mean (numbers) over time as line charts, then the newest complete
 * window's profile in full. The page is written atomically (-o).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/profile_input.h"
#include "shape/atomic_file.h"
#include "shape/paths.h"
#include "shape/profile.h"
#include "shape/version.h"

typedef struct page {
    FILE *f;
    int open_columns; /* column sections start open */
    size_t table_no;
} page;

/* ---- escaping and formatting ------------------------------------------------ */

/* s[0..n) as HTML text or attribute value, cut at max bytes (0: no cut) with an ellipsis. */
static void esc_n(FILE *f, const char *s, size_t n, size_t max)
{
    size_t cut = max && n > max ? max : n;
    while (cut < n && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
    for (size_t i = 0; i < cut; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if ((c < 0x20 && c != '\t') || c == 0x7f) fputs("&#xFFFD;", f);
            else fputc(c, f);
        }
    }
    if (cut < n) fputs("&#8230;", f);
}

static void esc(FILE *f, const char *s) { esc_n(f, s ? s : "", s ? strlen(s) : 0, 0); }

static long long get_int(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : json_is_real(v) ? (long long)json_real_value(v) : 0;
}

static void fmt_number(char *buf, size_t n, const json_t *v)
{
    if (json_is_integer(v)) snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(buf, n, "%.6g", json_real_value(v));
    else snprintf(buf, n, "&#8211;");
}

static void fmt_pct(char *buf, size_t n, double share)
{
    if (share > 0 && share < 0.001) snprintf(buf, n, "&lt;0.1%%");
    else snprintf(buf, n, "%.1f%%", 100 * share);
}

/* A value of a top list, escaped; temporal columns' values as instants. */
static void put_value(FILE *f, const json_t *v, int temporal)
{
    char buf[64];
    if (json_is_string(v)) {
        fputs("<code>", f);
        esc_n(f, json_string_value(v), json_string_length(v), 120);
        fputs("</code>", f);
    } else if (json_is_null(v)) {
        fputs("<i>null</i>", f);
    } else if (json_is_boolean(v)) {
        fputs(json_is_true(v) ? "true" : "false", f);
    } else if (temporal && json_is_integer(v)) {
        shape_cli_fmt_instant_us(buf, sizeof buf, (long long)json_integer_value(v));
        fputs(buf, f);
    } else {
        fmt_number(buf, sizeof buf, v);
        fputs(buf, f);
    }
}

/* ---- charts --------------------------------------------------------------------- */

#define CW 520 /* chart viewBox width and height */
#define CH 150
#define ML 8
#define MR 8
#define MT 18
#define MB 22

static void svg_open(FILE *f, const char *cls, const char *col, const char *label)
{
    fprintf(f, "<svg class=\"chart %s\" data-col=\"", cls);
    esc(f, col);
    fprintf(f, "\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s of ", CW, CH, label);
    esc(f, col);
    fputs("\"><title>", f);
    fputs(label, f);
    fputs(" of ", f);
    esc(f, col);
    fputs("</title>", f);
}

/* Vertical bars of v[0..n) (labels[i] under bar i when given; every step-th shown). */
static void svg_bars(FILE *f, const char *cls, const char *col, const char *label, const double *v, size_t n,
                     const char *const *labels, double total)
{
    svg_open(f, cls, col, label);
    double top = 0;
    for (size_t i = 0; i < n; i++) top = v[i] > top ? v[i] : top;
    double pw = CW - ML - MR, ph = CH - MT - MB, bw = n ? pw / (double)n : pw;
    size_t step = n > 24 ? (n + 11) / 12 : 1;
    for (size_t i = 0; i < n; i++) {
        double h = top > 0 ? v[i] / top * ph : 0;
        if (h > 0 && h < 1) h = 1;
        fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>", ML + i * bw + 0.5,
                MT + ph - h, bw > 2 ? bw - 1 : bw, h);
        if (labels) esc(f, labels[i]);
        char pct[32];
        fmt_pct(pct, sizeof pct, total > 0 ? v[i] / total : 0);
        fprintf(f, ": %.0f (%s)</title></rect>", v[i], pct);
        if (labels && i % step == 0) {
            fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", ML + (i + 0.5) * bw, CH - 6);
            esc(f, labels[i]);
            fputs("</text>", f);
        }
    }
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", ML, CH - MB, CW - MR, CH - MB);
    char pct[32];
    fmt_pct(pct, sizeof pct, total > 0 ? top / total : 0);
    fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"12\">max %s</text></svg>", ML, pct);
}

/* A numeric column's histogram, from its quantiles: always one chart (a
 * single bar for one value, a note for none). */
static void svg_histogram(FILE *f, const json_t *c, const char *col)
{
    const json_t *q = json_object_get(c, "quantiles");
    int integers = strcmp(json_string_value(json_object_get(c, "kind")), "int") == 0;
    double mass[64], lo, hi;
    int bins = 32;
    int spread = json_is_object(q) && shape_cli_histogram(q, integers, mass, &bins, &lo, &hi);
    if (!spread) {
        svg_open(f, "hist", col, "histogram");
        if (json_is_object(q) && isfinite(lo)) {
            fprintf(f, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"><title>%.6g: 100%%</title></rect>",
                    CW / 2 - 20, MT, 40, CH - MT - MB, lo);
            fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%.6g (every value)</text>", CW / 2,
                    CH - 6, lo);
        } else {
            fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">no values</text>", CW / 2, CH / 2);
        }
        fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/></svg>", ML, CH - MB, CW - MR, CH - MB);
        return;
    }
    char lab[64][40];
    const char *labels[64];
    int per_value = integers && hi - lo + 1 == bins;
    for (int b = 0; b < bins; b++) {
        if (per_value) snprintf(lab[b], sizeof lab[b], "%.0f", lo + b);
        else snprintf(lab[b], sizeof lab[b], "%.4g..%.4g", lo + (hi - lo) * b / bins, lo + (hi - lo) * (b + 1) / bins);
        labels[b] = lab[b];
    }
    if (per_value) {
        svg_bars(f, "hist", col, "histogram", mass, (size_t)bins, labels, 1.0);
        return;
    }
    /* equal bins: the range's ends under the axis instead of per-bar labels */
    svg_open(f, "hist", col, "histogram");
    double top = 0;
    for (int b = 0; b < bins; b++) top = mass[b] > top ? mass[b] : top;
    double pw = CW - ML - MR, ph = CH - MT - MB, bw = pw / bins;
    for (int b = 0; b < bins; b++) {
        double h = top > 0 ? mass[b] / top * ph : 0;
        if (h > 0 && h < 1) h = 1;
        fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>%s: %.1f%%</title></rect>",
                ML + b * bw + 0.5, MT + ph - h, bw - 1, h, labels[b], 100 * mass[b]);
    }
    fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", ML, CH - MB, CW - MR, CH - MB);
    fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\">%.6g</text>", ML, CH - 6, lo);
    fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%.6g</text>", CW - MR, CH - 6, hi);
    fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"12\">max %.1f%% per bin (from the quantile sketch)</text></svg>", ML,
            100 * top);
}

/* A line over the windows: v[i] at window i (NAN: no point). */
static void svg_line(FILE *f, const char *cls, const char *col, const char *label, const double *v, size_t n,
                     int percent, const char *first, const char *last)
{
    svg_open(f, cls, col, label);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) lo = v[i] < lo ? v[i] : lo, hi = v[i] > hi ? v[i] : hi;
    if (percent && isfinite(lo)) lo = 0, hi = hi > 0 ? hi : 1;
    double pw = CW - ML - MR - 60, ph = CH - MT - MB;
    double x0 = ML + 60;
    if (isfinite(lo)) {
        double span = hi > lo ? hi - lo : 1;
        fputs("<polyline class=\"line\" points=\"", f);
        for (size_t i = 0; i < n; i++)
            if (!isnan(v[i]))
                fprintf(f, "%.1f,%.1f ", x0 + (n > 1 ? pw * (double)i / (double)(n - 1) : pw / 2),
                        MT + ph - (v[i] - lo) / span * ph);
        fputs("\"/>", f);
        if (n <= 200)
            for (size_t i = 0; i < n; i++)
                if (!isnan(v[i]))
                    fprintf(f, "<circle class=\"dot\" r=\"2.5\" cx=\"%.1f\" cy=\"%.1f\"><title>window %zu: %.6g%s</title></circle>",
                            x0 + (n > 1 ? pw * (double)i / (double)(n - 1) : pw / 2), MT + ph - (v[i] - lo) / span * ph,
                            i + 1, percent ? 100 * v[i] : v[i], percent ? "%" : "");
        fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\">%.4g%s</text>", ML, MT + 4, percent ? 100 * hi : hi,
                percent ? "%" : "");
        fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\">%.4g%s</text>", ML, CH - MB, percent ? 100 * lo : lo,
                percent ? "%" : "");
    } else {
        fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">no values</text>", CW / 2, CH / 2);
    }
    fprintf(f, "<line class=\"axis\" x1=\"%.0f\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", x0, CH - MB, CW - MR, CH - MB);
    fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"12\" text-anchor=\"end\">%s</text>", CW - MR, label);
    fprintf(f, "<text class=\"tick\" x=\"%.0f\" y=\"%d\">%s</text>", x0, CH - 6, first);
    fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text></svg>", CW - MR, CH - 6, last);
}

/* Horizontal bars in HTML: the top values, patterns, years. */
static void bars_open(FILE *f, const char *cls, const char *caption)
{
    fprintf(f, "<table class=\"bars %s\"><caption>%s</caption>", cls, caption);
}

static void bar_row(FILE *f, double share, long long count)
{
    char pct[32];
    fmt_pct(pct, sizeof pct, share);
    fprintf(f, "</td><td class=\"b\"><span style=\"width:%.1f%%\"></span></td><td class=\"n\">%lld</td><td class=\"n\">%s</td></tr>",
            share > 0 ? (share * 100 < 0.5 ? 0.5 : share * 100) : 0, count, pct);
}

/* ---- one column --------------------------------------------------------------------- */

static void kv(FILE *f, const char *k, const char *v)
{
    fprintf(f, "<tr><th>%s</th><td>%s</td></tr>", k, v);
}

static void kv_num(FILE *f, const char *k, const json_t *v)
{
    char buf[64];
    fmt_number(buf, sizeof buf, v);
    kv(f, k, buf);
}

static void kv_instant(FILE *f, const char *k, const json_t *v)
{
    char buf[64];
    if (json_is_number(v))
        shape_cli_fmt_instant_us(buf, sizeof buf, json_is_integer(v) ? (long long)json_integer_value(v)
                                                                      : (long long)json_real_value(v));
    else snprintf(buf, sizeof buf, "&#8211;");
    kv(f, k, buf);
}

static void fmt_distinct(char *buf, size_t n, const json_t *c)
{
    const json_t *d = json_object_get(c, "distinct");
    if (!json_is_number(d)) snprintf(buf, n, "&#8211;");
    else snprintf(buf, n, "%s%.0f", json_is_true(json_object_get(c, "distinct_exact")) ? "" : "~", json_number_value(d));
}

/* The short summary of the overview table (and of a collapsed column's heading). */
static void summary(FILE *f, const json_t *c, const char *kind)
{
    char a[64], b[64], m[64];
    if (!strcmp(kind, "int") || !strcmp(kind, "float")) {
        fmt_number(a, sizeof a, json_object_get(c, "min"));
        fmt_number(b, sizeof b, json_object_get(c, "max"));
        fmt_number(m, sizeof m, json_object_get(c, "mean"));
        fprintf(f, "%s .. %s, mean %s", a, b, m);
    } else if (!strcmp(kind, "temporal")) {
        const json_t *lo = json_object_get(c, "min"), *hi = json_object_get(c, "max");
        if (json_is_integer(lo) && json_is_integer(hi)) {
            shape_cli_fmt_instant_us(a, sizeof a, (long long)json_integer_value(lo));
            shape_cli_fmt_instant_us(b, sizeof b, (long long)json_integer_value(hi));
            fprintf(f, "%s .. %s", a, b);
        }
    } else if (!strcmp(kind, "bool")) {
        fprintf(f, "true %lld, false %lld", get_int(c, "true_count"), get_int(c, "false_count"));
    } else if (!strcmp(kind, "text")) {
        const json_t *top = json_object_get(c, "top");
        size_t i;
        const json_t *e;
        json_array_foreach(top, i, e)
        {
            if (i >= 3) break;
            if (i) fputs(", ", f);
            put_value(f, json_array_get(e, 0), 0);
        }
    } else {
        esc(f, json_string_value(json_object_get(c, "arrow_type")));
    }
}

static void top_values(FILE *f, const json_t *c, int temporal)
{
    const json_t *top = json_object_get(c, "top");
    if (!json_is_array(top) || !json_array_size(top)) return;
    long long present = get_int(c, "count") - get_int(c, "null_count");
    bars_open(f, "top", "top values (SpaceSaving: counts within their error)");
    size_t i;
    const json_t *e;
    json_array_foreach(top, i, e)
    {
        if (i >= 12) break;
        long long n = json_is_integer(json_array_get(e, 1)) ? (long long)json_integer_value(json_array_get(e, 1)) : 0;
        fputs("<tr><td class=\"v\">", f);
        put_value(f, json_array_get(e, 0), temporal);
        bar_row(f, present > 0 ? (double)n / (double)present : 0, n);
    }
    fputs("</table>", f);
}

static void text_charts(FILE *f, const json_t *c, const char *col)
{
    const json_t *len = json_object_get(c, "length"), *hist = json_object_get(len, "hist");
    if (json_is_object(hist) && json_object_size(hist)) {
        /* exact lengths: one bar each when few, else 32 equal bins */
        long long lo = get_int(len, "min"), hi = get_int(len, "max");
        size_t n = hi - lo + 1 <= 40 ? (size_t)(hi - lo + 1) : 32;
        double *v = calloc(n, sizeof *v), total = 0;
        char (*lab)[32] = calloc(n, sizeof *lab);
        const char **labels = calloc(n, sizeof *labels);
        if (v && lab && labels) {
            const char *k;
            json_t *cnt;
            json_object_foreach((json_t *)hist, k, cnt)
            {
                long long l = strtoll(k, NULL, 10);
                size_t b = n == (size_t)(hi - lo + 1) ? (size_t)(l - lo)
                                                      : (size_t)((double)(l - lo) / (double)(hi - lo + 1) * (double)n);
                if (b >= n) b = n - 1;
                v[b] += (double)json_integer_value(cnt);
                total += (double)json_integer_value(cnt);
            }
            for (size_t b = 0; b < n; b++) {
                if (n == (size_t)(hi - lo + 1)) snprintf(lab[b], sizeof lab[b], "%lld", lo + (long long)b);
                else
                    snprintf(lab[b], sizeof lab[b], "%lld..%lld", lo + (long long)((double)b * (double)(hi - lo + 1) / (double)n),
                             lo + (long long)((double)(b + 1) * (double)(hi - lo + 1) / (double)n) - 1);
                labels[b] = lab[b];
            }
            svg_bars(f, "lengths", col, "text lengths (code points)", v, n, labels, total);
        }
        free(v);
        free(lab);
        free(labels);
    }
    const json_t *pat = json_object_get(c, "patterns");
    long long present = get_int(c, "count") - get_int(c, "null_count");
    const char *k;
    json_t *cnt;
    int any = 0;
    json_object_foreach((json_t *)pat, k, cnt)
    {
        if (!json_is_integer(cnt) || !json_integer_value(cnt)) continue;
        if (!any) bars_open(f, "patterns", "patterns (values that look like one)");
        any = 1;
        fputs("<tr><td class=\"v\">", f);
        esc(f, k);
        bar_row(f, present > 0 ? (double)json_integer_value(cnt) / (double)present : 0, (long long)json_integer_value(cnt));
    }
    if (any) fputs("</table>", f);
    else if (json_is_object(pat)) fputs("<p class=\"note\">No value looks like an e-mail, UUID, IP, phone, date or other known pattern.</p>", f);
}

static void temporal_charts(FILE *f, const json_t *c, const char *col)
{
    static const char *const hours[] = {"0",  "1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",  "9",  "10", "11",
                                        "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23"};
    static const char *const days[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    struct {
        const char *key, *cls, *label;
        const char *const *names;
        size_t n;
    } parts[] = {{"hour_hist", "hour", "hour of day (UTC)", hours, 24},
                 {"dow_hist", "weekday", "day of week (UTC)", days, 7},
                 {"month_hist", "month", "month", months, 12}};
    for (size_t p = 0; p < 3; p++) {
        const json_t *h = json_object_get(c, parts[p].key);
        if (!json_is_array(h) || json_array_size(h) != parts[p].n) continue;
        double v[24], total = 0;
        for (size_t i = 0; i < parts[p].n; i++) total += v[i] = json_number_value(json_array_get(h, i));
        svg_bars(f, parts[p].cls, col, parts[p].label, v, parts[p].n, parts[p].names, total);
    }
    const json_t *years = json_object_get(c, "year_hist");
    if (json_is_object(years) && json_object_size(years) > 1) {
        long long present = get_int(c, "count") - get_int(c, "null_count");
        bars_open(f, "years", "years");
        const char *k;
        json_t *cnt;
        json_object_foreach((json_t *)years, k, cnt)
        {
            fputs("<tr><td class=\"v\">", f);
            esc(f, k);
            bar_row(f, present > 0 ? json_number_value(cnt) / (double)present : 0, (long long)json_number_value(cnt));
        }
        fputs("</table>", f);
    }
}

static void column_section(const page *pg, const json_t *c, size_t table_no, size_t col_no)
{
    FILE *f = pg->f;
    const char *name = json_string_value(json_object_get(c, "name"));
    const char *kind = json_string_value(json_object_get(c, "kind"));
    if (!name) name = "";
    if (!kind) kind = "other";
    long long count = get_int(c, "count"), nulls = get_int(c, "null_count");
    double null_share = count ? (double)nulls / (double)count : 0;
    char buf[96], pct[32];
    fprintf(f, "<details class=\"col\" id=\"c%zu-%zu\" data-name=\"", table_no, col_no);
    esc(f, name);
    fprintf(f, "\"%s><summary><span class=\"cname\">", pg->open_columns ? " open" : "");
    esc(f, name);
    fprintf(f, "</span> <span class=\"kind k-%s\">%s</span> <span class=\"nullbar\" title=\"nulls\"><span style=\"width:%.1f%%\"></span></span> <span class=\"sum\">",
            kind, kind, 100 * null_share);
    summary(f, c, kind);
    fputs("</span></summary><div class=\"body\"><table class=\"kv\">", f);
    snprintf(buf, sizeof buf, "%lld", count);
    kv(f, "rows", buf);
    fmt_pct(pct, sizeof pct, null_share);
    snprintf(buf, sizeof buf, "%lld (%s)", nulls, pct);
    kv(f, "nulls", buf);
    fmt_distinct(buf, sizeof buf, c);
    kv(f, "distinct", buf);
    fputs("<tr><th>type</th><td>", f);
    esc(f, json_string_value(json_object_get(c, "arrow_type")));
    fputs("</td></tr>", f);
    int numeric = !strcmp(kind, "int") || !strcmp(kind, "float");
    if (numeric) {
        kv_num(f, "min", json_object_get(c, "min"));
        kv_num(f, "max", json_object_get(c, "max"));
        kv_num(f, "mean", json_object_get(c, "mean"));
        const json_t *var = json_object_get(c, "variance_population");
        if (json_is_number(var)) {
            snprintf(buf, sizeof buf, "%.6g", sqrt(json_number_value(var)));
            kv(f, "std dev", buf);
        }
        const json_t *q = json_object_get(c, "quantiles");
        static const char *const qs[] = {"0.01", "0.05", "0.25", "0.5", "0.75", "0.95", "0.99"};
        static const char *const qn[] = {"p1", "p5", "p25", "median", "p75", "p95", "p99"};
        for (size_t i = 0; json_is_object(q) && i < 7; i++)
            if (json_object_get(q, qs[i])) kv_num(f, qn[i], json_object_get(q, qs[i]));
        long long nan = get_int(c, "nan_count"), pinf = get_int(c, "pos_inf_count"), ninf = get_int(c, "neg_inf_count");
        if (nan || pinf || ninf) {
            snprintf(buf, sizeof buf, "NaN %lld, +inf %lld, &#8722;inf %lld", nan, pinf, ninf);
            kv(f, "non-finite", buf);
        }
    } else if (!strcmp(kind, "temporal")) {
        kv_instant(f, "first", json_object_get(c, "min"));
        kv_instant(f, "last", json_object_get(c, "max"));
    } else if (!strcmp(kind, "bool")) {
        snprintf(buf, sizeof buf, "%lld", get_int(c, "true_count"));
        kv(f, "true", buf);
        snprintf(buf, sizeof buf, "%lld", get_int(c, "false_count"));
        kv(f, "false", buf);
    } else if (!strcmp(kind, "text")) {
        const json_t *len = json_object_get(c, "length");
        if (json_is_object(len) && get_int(len, "count")) {
            snprintf(buf, sizeof buf, "%lld .. %lld, mean %.4g, p95 %.4g", get_int(len, "min"), get_int(len, "max"),
                     json_number_value(json_object_get(len, "mean")), json_number_value(json_object_get(len, "p95")));
            kv(f, "length", buf);
        }
        if (json_is_string(json_object_get(c, "min"))) {
            fputs("<tr><th>min</th><td>", f);
            put_value(f, json_object_get(c, "min"), 0);
            fputs("</td></tr><tr><th>max</th><td>", f);
            put_value(f, json_object_get(c, "max"), 0);
            fputs("</td></tr>", f);
        }
    }
    fputs("</table><div class=\"charts\">", f);
    if (numeric) {
        svg_histogram(f, c, name);
        const json_t *d = json_object_get(c, "distinct");
        if (json_is_number(d) && json_number_value(d) <= 64) top_values(f, c, 0);
    } else if (!strcmp(kind, "text")) {
        top_values(f, c, 0);
        text_charts(f, c, name);
    } else if (!strcmp(kind, "temporal")) {
        temporal_charts(f, c, name);
    } else if (!strcmp(kind, "bool")) {
        long long t = get_int(c, "true_count"), fl = get_int(c, "false_count");
        bars_open(f, "bool", "values");
        fputs("<tr><td class=\"v\">true", f);
        bar_row(f, count ? (double)t / (double)count : 0, t);
        fputs("<tr><td class=\"v\">false", f);
        bar_row(f, count ? (double)fl / (double)count : 0, fl);
        fputs("<tr><td class=\"v\"><i>null</i>", f);
        bar_row(f, null_share, nulls);
        fputs("</table>", f);
    } else {
        top_values(f, c, 0);
    }
    fputs("</div></div></details>\n", f);
}

/* ---- one table ------------------------------------------------------------------------ */

static void table_section(page *pg, const char *name, const json_t *t, const char *heading)
{
    FILE *f = pg->f;
    size_t tn = pg->table_no++;
    const json_t *cols = json_object_get(t, "columns");
    long long rows = get_int(t, "rows");
    long long cells = 0, null_cells = 0;
    size_t kinds[6] = {0};
    static const char *const kind_names[] = {"int", "float", "bool", "text", "temporal", "other"};
    size_t i;
    const json_t *c;
    json_array_foreach(cols, i, c)
    {
        cells += get_int(c, "count");
        null_cells += get_int(c, "null_count");
        const char *k = json_string_value(json_object_get(c, "kind"));
        size_t at = 5;
        for (size_t j = 0; k && j < 5; j++)
            if (!strcmp(k, kind_names[j])) at = j;
        kinds[at]++;
    }
    fprintf(f, "<section class=\"table\" id=\"t%zu\" data-table=\"", tn);
    esc(f, name);
    fprintf(f, "\"><h2>%s <span class=\"tname\">", heading);
    esc(f, name);
    fputs("</span></h2><div class=\"cards\">", f);
    fprintf(f, "<div class=\"card\"><b>%lld</b>rows</div><div class=\"card\"><b>%zu</b>columns</div>", rows,
            json_array_size(cols));
    char pct[32];
    fmt_pct(pct, sizeof pct, cells ? (double)null_cells / (double)cells : 0);
    fprintf(f, "<div class=\"card\"><b>%s</b>null cells</div><div class=\"card kinds\">", pct);
    for (size_t j = 0; j < 6; j++)
        if (kinds[j]) fprintf(f, "<span class=\"kind k-%s\">%s %zu</span> ", kind_names[j], kind_names[j], kinds[j]);
    fputs("</div></div>", f);
    /* the overview: one row per column, linked to its section */
    fputs("<details class=\"overview\" open><summary>columns at a glance</summary><table class=\"grid\"><thead><tr><th>column</th><th>kind</th><th>nulls</th><th>distinct</th><th>summary</th></tr></thead><tbody>",
          f);
    json_array_foreach(cols, i, c)
    {
        const char *cn = json_string_value(json_object_get(c, "name"));
        const char *k = json_string_value(json_object_get(c, "kind"));
        long long count = get_int(c, "count"), nulls = get_int(c, "null_count");
        char d[64];
        fmt_distinct(d, sizeof d, c);
        fmt_pct(pct, sizeof pct, count ? (double)nulls / (double)count : 0);
        fputs("<tr data-name=\"", f);
        esc(f, cn);
        fprintf(f, "\"><td><a href=\"#c%zu-%zu\">", tn, i);
        esc(f, cn);
        fprintf(f, "</a></td><td><span class=\"kind k-%s\">", k ? k : "other");
        esc(f, k);
        fprintf(f, "</span></td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>", pct, d);
        summary(f, c, k ? k : "other");
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table></details>\n", f);
    json_array_foreach(cols, i, c) column_section(pg, c, tn, i);
    fputs("</section>\n", f);
}

/* ---- a windows file ---------------------------------------------------------------------- */

static void windows_section(page *pg, const json_t *windows, const char *table)
{
    FILE *f = pg->f;
    size_t n = json_array_size(windows), partial = 0;
    long long rows = 0;
    size_t i;
    const json_t *w;
    json_array_foreach(windows, i, w)
    {
        rows += get_int(w, "rows");
        partial += json_is_true(json_object_get(w, "partial"));
    }
    const char *kind = n ? json_string_value(json_object_get(json_array_get(windows, 0), "kind")) : "";
    char first[64] = "&#8211;", last[64] = "&#8211;";
    if (n) {
        shape_cli_fmt_instant_us(first, sizeof first, get_int(json_array_get(windows, 0), "start_us"));
        shape_cli_fmt_instant_us(last, sizeof last, get_int(json_array_get(windows, n - 1), "end_us"));
    }
    fputs("<section class=\"windows\"><h2>Windows", f);
    if (table[0]) {
        fputs(" of table <span class=\"tname\">", f);
        esc(f, table);
        fputs("</span>", f);
    }
    fputs("</h2><div class=\"cards\">", f);
    fprintf(f, "<div class=\"card\"><b>%zu</b>", n);
    esc(f, kind);
    fprintf(f, " windows</div><div class=\"card\"><b>%lld</b>rows in them</div><div class=\"card\"><b>%s</b>first start</div><div class=\"card\"><b>%s</b>last end</div>",
            rows, first, last);
    if (partial) fprintf(f, "<div class=\"card\"><b>%zu</b>partial (still open at a stop)</div>", partial);
    fputs("</div>", f);
    double *v = calloc(n ? n : 1, sizeof *v);
    if (!v) return;
    for (i = 0; i < n; i++) v[i] = (double)get_int(json_array_get(windows, i), "rows");
    svg_line(f, "rows", "the windows", "rows per window", v, n, 0, first, last);
    fprintf(f, "<details class=\"wlist\"%s><summary>the %zu windows</summary><table class=\"grid\"><thead><tr><th>#</th><th>start</th><th>end</th><th>rows</th><th></th></tr></thead><tbody>",
            n <= 20 ? " open" : "", n);
    json_array_foreach(windows, i, w)
    {
        char a[64], b[64];
        shape_cli_fmt_instant_us(a, sizeof a, get_int(w, "start_us"));
        shape_cli_fmt_instant_us(b, sizeof b, get_int(w, "end_us"));
        fprintf(f, "<tr><td class=\"n\">%zu</td><td>%s</td><td>%s</td><td class=\"n\">%lld</td><td>%s</td></tr>\n", i + 1,
                a, b, get_int(w, "rows"), json_is_true(json_object_get(w, "partial")) ? "partial" : "");
    }
    fputs("</tbody></table></details>", f);
    /* per column over time, in order of first appearance */
    json_t *seen = json_object(), *names = json_array();
    json_array_foreach(windows, i, w)
    {
        size_t j;
        const json_t *c;
        json_array_foreach(json_object_get(json_object_get(w, "profile"), "columns"), j, c)
        {
            const char *cn = json_string_value(json_object_get(c, "name"));
            if (!cn || json_object_get(seen, cn)) continue;
            json_object_set(seen, cn, json_object_get(c, "kind"));
            json_array_append_new(names, json_string(cn));
        }
    }
    fputs("<h3>Columns over time</h3>", f);
    size_t k;
    const json_t *nm;
    json_array_foreach(names, k, nm)
    {
        const char *cn = json_string_value(nm);
        const char *ck = json_string_value(json_object_get(seen, cn));
        int numeric = ck && (!strcmp(ck, "int") || !strcmp(ck, "float"));
        fputs("<details class=\"col trend\" data-name=\"", f);
        esc(f, cn);
        fprintf(f, "\"%s><summary><span class=\"cname\">", pg->open_columns ? " open" : "");
        esc(f, cn);
        fprintf(f, "</span> <span class=\"kind k-%s\">", ck ? ck : "other");
        esc(f, ck);
        fputs("</span></summary><div class=\"body\"><div class=\"charts\">", f);
        for (int pass = 0; pass < 1 + numeric; pass++) {
            for (i = 0; i < n; i++) {
                v[i] = NAN;
                size_t j;
                const json_t *c;
                json_array_foreach(json_object_get(json_object_get(json_array_get(windows, i), "profile"), "columns"), j, c)
                {
                    const char *x = json_string_value(json_object_get(c, "name"));
                    if (!x || strcmp(x, cn) != 0) continue;
                    if (pass) {
                        const json_t *m = json_object_get(c, "mean");
                        v[i] = json_is_number(m) ? json_number_value(m) : NAN;
                    } else {
                        long long cnt = get_int(c, "count");
                        v[i] = cnt ? (double)get_int(c, "null_count") / (double)cnt : NAN;
                    }
                    break;
                }
            }
            if (pass) svg_line(f, "mean-trend", cn, "mean over time", v, n, 0, first, last);
            else svg_line(f, "null-trend", cn, "null share over time", v, n, 1, first, last);
        }
        fputs("</div></div></details>\n", f);
    }
    free(v);
    json_decref(seen);
    json_decref(names);
    /* the newest complete window (else the newest) in full */
    const json_t *pick = NULL;
    for (i = n; i-- > 0 && !pick;)
        if (!json_is_true(json_object_get(json_array_get(windows, i), "partial"))) pick = json_array_get(windows, i);
    if (!pick && n) pick = json_array_get(windows, n - 1);
    fputs("</section>\n", f);
    if (pick) {
        char a[64], b[64], heading[200];
        shape_cli_fmt_instant_us(a, sizeof a, get_int(pick, "start_us"));
        shape_cli_fmt_instant_us(b, sizeof b, get_int(pick, "end_us"));
        snprintf(heading, sizeof heading, "Newest window (%s .. %s): table", a, b);
        const json_t *prof = json_object_get(pick, "profile");
        table_section(pg, json_string_value(json_object_get(prof, "name")) ? json_string_value(json_object_get(prof, "name")) : "",
                      prof, heading);
    }
}

/* ---- the page ------------------------------------------------------------------------------ */

static const char style[] =
    ":root{color-scheme:light dark;--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--card:#f6f8fa;--line:#d1d9e0;"
    "--bar:#3b6fd8;--bar-hover:#1f4fb0;--null:#c2410c;--link:#0a58ca;--code:#eef1f4}\n"
    "@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--card:#151b23;"
    "--line:#3d444d;--bar:#5b9cf5;--bar-hover:#8ab8ff;--null:#f0883e;--link:#6cb6ff;--code:#1f262e}}\n"
    "*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}\n"
    "header{position:sticky;top:0;z-index:2;background:var(--bg);border-bottom:1px solid var(--line);padding:10px 24px}\n"
    "h1{font-size:20px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px}h3{font-size:15px;margin:18px 0 8px}\n"
    "main{padding:0 24px 40px;max-width:1200px}a{color:var(--link)}.muted,.note,caption{color:var(--muted)}\n"
    ".tools{display:flex;gap:8px;align-items:center;flex-wrap:wrap}"
    "#filter{font:inherit;padding:5px 8px;min-width:280px;border:1px solid var(--line);border-radius:6px;"
    "background:var(--card);color:var(--fg)}button{font:inherit;padding:4px 10px;border:1px solid var(--line);"
    "border-radius:6px;background:var(--card);color:var(--fg);cursor:pointer}\n"
    "nav a{margin-right:12px}.cards{display:flex;gap:10px;flex-wrap:wrap;margin:8px 0 12px}"
    ".card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 14px;color:var(--muted)}"
    ".card b{display:block;font-size:18px;color:var(--fg)}\n"
    ".kind{display:inline-block;font-size:11px;padding:0 6px;border-radius:9px;border:1px solid var(--line);"
    "color:var(--muted);white-space:nowrap}\n"
    "table.grid{border-collapse:collapse;width:100%;font-size:13px}.grid th,.grid td{text-align:left;padding:3px 8px;"
    "border-bottom:1px solid var(--line);vertical-align:top}.grid td.n,.bars td.n{text-align:right;"
    "font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "details.col{border:1px solid var(--line);border-radius:8px;margin:6px 0;background:var(--bg)}"
    "details.col>summary{cursor:pointer;padding:6px 10px;display:flex;gap:10px;align-items:center}"
    ".cname{font-weight:600;overflow-wrap:anywhere}.sum{color:var(--muted);overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap;flex:1}\n"
    ".nullbar{display:inline-block;width:60px;height:8px;border-radius:4px;background:var(--card);"
    "border:1px solid var(--line);overflow:hidden;flex:none}.nullbar span{display:block;height:100%;background:var(--null)}\n"
    ".body{display:flex;gap:16px;flex-wrap:wrap;align-items:flex-start;padding:4px 12px 12px}table.kv{border-collapse:collapse;font-size:13px}"
    ".kv th{text-align:left;color:var(--muted);font-weight:normal;padding:1px 12px 1px 0}"
    ".kv td{font-variant-numeric:tabular-nums}\n"
    ".charts{display:flex;gap:12px;flex-wrap:wrap;align-items:flex-start;flex:1;min-width:300px}"
    "svg.chart{width:100%;max-width:520px;height:auto;background:var(--card);border-radius:6px}\n"
    "svg .bar{fill:var(--bar)}svg .bar:hover{fill:var(--bar-hover)}svg .axis{stroke:var(--line)}"
    "svg .tick{fill:var(--muted);font-size:11px}svg .line{fill:none;stroke:var(--bar);stroke-width:2}"
    "svg .dot{fill:var(--bar)}\n"
    "table.bars{border-collapse:collapse;font-size:13px;min-width:300px;max-width:520px;width:100%}"
    ".bars caption{text-align:left;padding-bottom:2px}.bars td{padding:1px 6px}"
    ".bars td.v{max-width:220px;overflow-wrap:anywhere}.bars td.b{width:45%}"
    ".bars td.b span{display:block;height:10px;border-radius:2px;background:var(--bar)}\n"
    "code{background:var(--code);padding:0 3px;border-radius:3px;font-size:12px}[hidden]{display:none!important}\n";

static const char script[] =
    "(function(){var f=document.getElementById('filter'),s=document.getElementById('shown');"
    "var all=document.querySelectorAll('[data-name]');"
    "function apply(){var q=f.value.toLowerCase(),n=0,t=0;"
    "all.forEach(function(e){var m=!q||e.getAttribute('data-name').toLowerCase().indexOf(q)>=0;e.hidden=!m;"
    "if(e.tagName==='DETAILS'){t++;if(m)n++;}});"
    "document.querySelectorAll('section.table').forEach(function(sec){"
    "sec.hidden=q&&!sec.querySelector('details.col:not([hidden])');});"
    "s.textContent=q?n+' of '+t+' column sections match':t+' column sections';}"
    "f.addEventListener('input',apply);"
    "document.getElementById('expand').onclick=function(){document.querySelectorAll('details.col:not([hidden])')"
    ".forEach(function(d){d.open=true;});};"
    "document.getElementById('collapse').onclick=function(){document.querySelectorAll('details.col')"
    ".forEach(function(d){d.open=false;});};"
    "if(location.hash.indexOf('#filter=')===0)f.value=decodeURIComponent(location.hash.slice(8));apply();})();";

static int write_page(FILE *f, const char *path, const shape_cli_profile_input *in)
{
    const json_t *tables = in->doc ? json_object_get(in->doc, "tables") : NULL;
    size_t ncols = 0;
    const char *name;
    json_t *t;
    json_object_foreach((json_t *)tables, name, t) ncols += json_array_size(json_object_get(t, "columns"));
    if (in->windows) {
        const json_t *last = json_array_get(in->windows, json_array_size(in->windows) - 1);
        ncols += 2 * json_array_size(json_object_get(json_object_get(last, "profile"), "columns"));
    }
    page pg = {.f = f, .open_columns = ncols <= 40};
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "script-src 'unsafe-inline'; img-src data:\">"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><meta name=\"generator\" content=\"shape ",
          f);
    fputs(SHAPE_VERSION, f);
    fputs("\"><title>Profile: ", f);
    esc(f, path);
    fprintf(f, "</title><style>%s</style></head><body>\n<header><h1>Profile of <code>", style);
    esc(f, path);
    fputs("</code></h1><p class=\"muted\">", f);
    if (in->windows) fprintf(f, "%zu windows", json_array_size(in->windows));
    else fprintf(f, "%zu table%s, %zu columns", json_object_size(tables), json_object_size(tables) == 1 ? "" : "s", ncols);
    fputs(" &#183; from a ", f);
    esc(f, in->form);
    fputs(" &#183; shape " SHAPE_VERSION "</p><div class=\"tools\"><input id=\"filter\" type=\"search\" "
          "placeholder=\"Filter columns by name\" aria-label=\"Filter columns by name\">"
          "<button id=\"expand\" type=\"button\">Expand all</button><button id=\"collapse\" type=\"button\">Collapse all</button>"
          "<span id=\"shown\" class=\"muted\"></span></div>",
          f);
    if (json_object_size(tables) > 1) {
        fputs("<nav>", f);
        size_t i = 0;
        json_object_foreach((json_t *)tables, name, t)
        {
            fprintf(f, "<a href=\"#t%zu\">", i++);
            esc(f, name);
            fputs("</a>", f);
        }
        fputs("</nav>", f);
    }
    fputs("</header><main>\n", f);
    if (in->windows) {
        json_t *by = shape_cli_windows_by_table(in->windows);
        const char *tname;
        json_t *list;
        json_object_foreach(by, tname, list) windows_section(&pg, list, tname);
        json_decref(by);
    }
    json_object_foreach((json_t *)tables, name, t) table_section(&pg, name, t, "Table");
    if (!in->windows && !json_object_size(tables)) fputs("<p class=\"note\">No tables: the profile is empty.</p>", f);
    fprintf(f, "</main><script>%s</script></body></html>\n", script);
    return ferror(f) ? -1 : 0;
}

static int run_profile_report(const shape_args *args, shape_err *err)
{
    const char *path = shape_args_positional(args, 0);
    const char *output = shape_args_value(args, "output");
    if (!output || !output[0]) return shape_err_set(err, SHAPE_EINVAL, "profile-report needs -o report.html");
    shape_path_use uses[2] = {{"-o", output, 1}, {"the profile", strcmp(path, "-") ? path : NULL, 0}};
    SHAPE_RETURN_NOT_OK(shape_paths_check(uses, 2, err));
    int64_t top_n;
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "top-n", 1, INT32_MAX, SHAPE_PROFILE_TOP_N, &top_n, err));
    shape_cli_profile_input in;
    SHAPE_RETURN_NOT_OK(shape_cli_profile_load(path, (int)top_n, &in, err));
    char *html = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&html, &len);
    int rc = f ? SHAPE_OK : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (f) {
        int bad = write_page(f, strcmp(path, "-") ? path : "stdin", &in);
        if (fclose(f) != 0 || bad) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory writing the report");
    }
    if (rc == SHAPE_OK) rc = shape_atomic_write(output, html, len, err);
    if (rc == SHAPE_OK) {
        json_t *line = json_pack("{s:s, s:s, s:I}", "written", output, "from", in.form, "bytes", (json_int_t)len);
        char *text = line ? json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        if (text) printf("%s\n", text);
        free(text);
        json_decref(line);
    }
    free(html);
    shape_cli_profile_input_free(&in);
    return rc;
}

static const shape_arg_spec profile_report_args[] = {
    {"output", 'o', SHAPE_ARG_VALUE, "REPORT.html", NULL, "Write the report here (atomically). Required."},
    {"top-n", 0, SHAPE_ARG_VALUE, "N", "500", "For a state file: the --top-n it was made with."},
    {0},
};

const shape_command shape_cmd_profile_report = {
    .name = "profile-report",
    .summary = "Write a profile as one self-contained HTML page (charts, filter, light and dark).",
    .positional = "PROFILE.json",
    .min_positional = 1,
    .max_positional = 1,
    .args = profile_report_args,
    .epilog = "PROFILE.json is anything profile-show reads: a profile document (stream-profile -o), a state\n"
              "(--state, also of a --split-by run), a windows file (--windows) or a window states file; '-'\n"
              "reads stdin. The page fetches nothing (inline CSS, SVG and script; a Content-Security-Policy\n"
              "of default-src 'none'), so it works opened from disk or sent as an attachment. Per table an\n"
              "overview and one collapsible section per column with its statistics and charts (a histogram\n"
              "from the quantile sketch, top values, text lengths and patterns, hour/weekday/month for\n"
              "times); a windows file gets rows per window and each column's null share and mean over time.\n"
              "Example: shape profile-report retail.json -o retail.html && xdg-open retail.html",
    .run = run_profile_report,
};

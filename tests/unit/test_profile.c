/* test_profile.c — the table profiler (shape/profile.h) end to end through its
 * document: exact statistics of every column kind equal values computed
 * independently here (counts, nulls, NaN/±inf, min/max, mean and variance to
 * 1e-9, text lengths in code points, pattern counts, UTC histograms), on
 * 200k generated rows with nulls, skew, ties and unicode text; sketched
 * fields within their bounds; Arrow layouts beyond our builders (narrow ints,
 * float32, half floats, decimal128, date32/64, large and view strings, slices
 * with offsets); columns that appear, disappear or change type; the top
 * values as per-value adds give them, text keys owned. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../../src/profile/profile_internal.h" /* a column's SpaceSaving list order */
#include "test_profile_util.h"

#define ROWS 200000
#define BATCH 4096

static json_t *table; /* the profile of rows [0, ROWS), built once */

static int setup(void **state)
{
    (void)state;
    shape_profile *p = tp_new_profile("stream");
    tp_profile_rows(p, 0, ROWS, BATCH);
    assert_int_equal(shape_profile_rows(p), ROWS);
    assert_int_equal(shape_profile_num_columns(p), 9);
    table = tp_table_json(p);
    shape_profile_free(p);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(table);
    return 0;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* Moments of xs[0..n) by two passes in long double. */
static void two_pass(const double *xs, size_t n, long double *mean, long double *m2)
{
    long double s = 0;
    for (size_t i = 0; i < n; i++) s += xs[i];
    *mean = s / n;
    *m2 = 0;
    for (size_t i = 0; i < n; i++) *m2 += (xs[i] - *mean) * (xs[i] - *mean);
}

static size_t distinct_sorted(const double *sorted, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++) d += i == 0 || sorted[i] != sorted[i - 1];
    return d;
}

static void check_distinct(json_t *col, size_t truth)
{
    double est = tp_num(col, "distinct");
    assert_true(json_is_false(json_object_get(col, "distinct_exact")));
    double tol = 3 * 1.04 / 128.0 * (double)truth;
    if (est < (double)truth - tol || est > (double)truth + tol)
        fail_msg("distinct %.2f, truth %zu", est, truth);
}

/* Every quantile is a real value within 1 % rank of its point. */
static void check_quantiles(json_t *col, const double *sorted, size_t n)
{
    static const char *keys[] = {"0.0", "0.01", "0.05", "0.25", "0.5", "0.75", "0.95", "0.99", "1.0"};
    static const double qs[] = {0.0, 0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99, 1.0};
    json_t *q = json_object_get(col, "quantiles");
    assert_int_equal(json_object_size(q), 9);
    double prev = -INFINITY;
    for (int i = 0; i < 9; i++) {
        double v = tp_num(q, keys[i]);
        assert_true(v >= prev);
        prev = v;
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (sorted[mid] < v) lo = mid + 1;
            else hi = mid;
        }
        size_t first = lo;
        hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (sorted[mid] <= v) lo = mid + 1;
            else hi = mid;
        }
        assert_true(lo > first); /* a value of the column */
        double target = qs[i] * (double)n;
        double e = target < (double)first ? (double)first - target : target > (double)lo ? target - (double)lo : 0;
        assert_true(e / (double)n <= 0.01);
    }
}

static void check_counts_model(json_t *col)
{
    json_t *m = json_object_get(json_object_get(col, "error_models"), "counts");
    assert_string_equal(json_string_value(json_object_get(m, "algorithm")), "exact");
    assert_true(json_is_true(json_object_get(m, "exact")));
}

/* ---- int ---------------------------------------------------------------- */

static void test_int_columns(void **state)
{
    (void)state;
    double *ids = malloc(ROWS * sizeof *ids), *promos = malloc(ROWS * sizeof *promos);
    assert_non_null(ids);
    assert_non_null(promos);
    int64_t promo_counts[64] = {0};
    size_t np = 0;
    int64_t idmin = INT64_MAX, idmax = INT64_MIN;
    for (int64_t r = 0; r < ROWS; r++) {
        tp_row o;
        tp_make_row(r, &o);
        ids[r] = (double)o.id;
        if (o.id < idmin) idmin = o.id;
        if (o.id > idmax) idmax = o.id;
        if (o.promo_valid) {
            promos[np++] = (double)o.promo;
            promo_counts[o.promo]++;
        }
    }
    json_t *id = tp_column(table, "id");
    assert_string_equal(json_string_value(json_object_get(id, "kind")), "int");
    assert_string_equal(json_string_value(json_object_get(id, "arrow_type")), "int64");
    assert_int_equal(tp_int(id, "count"), ROWS);
    assert_int_equal(tp_int(id, "null_count"), 0);
    assert_int_equal(tp_int(id, "nan_count"), 0);
    assert_int_equal(tp_int(id, "pos_inf_count"), 0);
    assert_int_equal(tp_int(id, "neg_inf_count"), 0);
    assert_int_equal(tp_int(id, "finite_count"), ROWS);
    assert_int_equal(tp_int(id, "min"), idmin);
    assert_int_equal(tp_int(id, "max"), idmax);
    long double mean, m2;
    two_pass(ids, ROWS, &mean, &m2);
    assert_true(tp_rel(tp_num(id, "mean"), mean) < 1e-9);
    assert_true(tp_rel(tp_num(id, "m2"), m2) < 1e-9);
    assert_true(tp_rel(tp_num(id, "variance_population"), m2 / ROWS) < 1e-9);
    assert_true(tp_rel(tp_num(id, "variance_sample"), m2 / (ROWS - 1)) < 1e-9);
    check_distinct(id, ROWS);
    qsort(ids, ROWS, sizeof *ids, cmp_double);
    check_quantiles(id, ids, ROWS);
    /* unique values: every entry's bounds contain the true count 1 */
    json_t *top = json_object_get(id, "top");
    assert_int_equal(json_array_size(top), 64);
    for (size_t i = 0; i < json_array_size(top); i++) {
        json_t *e = json_array_get(top, i);
        int64_t c = json_integer_value(json_array_get(e, 1)), err = json_integer_value(json_array_get(e, 2));
        assert_true(c >= 1 && c - err <= 1);
        assert_true(json_is_null(json_array_get(e, 3)));
    }
    check_counts_model(id);

    json_t *promo = tp_column(table, "promo");
    assert_int_equal(tp_int(promo, "null_count"), ROWS - (int64_t)np);
    assert_int_equal(tp_int(promo, "finite_count"), (int64_t)np);
    two_pass(promos, np, &mean, &m2);
    assert_true(tp_rel(tp_num(promo, "mean"), mean) < 1e-9);
    assert_true(tp_rel(tp_num(promo, "m2"), m2) < 1e-9);
    /* 50 distinct values < 64 counters: top holds the exact counts, count desc then value */
    top = json_object_get(promo, "top");
    size_t distinct = 0;
    for (int v = 0; v < 64; v++) distinct += promo_counts[v] != 0;
    assert_int_equal(json_array_size(top), distinct);
    int64_t prev_count = INT64_MAX, prev_value = -1;
    for (size_t i = 0; i < json_array_size(top); i++) {
        json_t *e = json_array_get(top, i);
        int64_t v = json_integer_value(json_array_get(e, 0)), c = json_integer_value(json_array_get(e, 1));
        assert_int_equal(c, promo_counts[v]);
        assert_int_equal(json_integer_value(json_array_get(e, 2)), 0);
        assert_true(c < prev_count || (c == prev_count && v > prev_value));
        prev_count = c;
        prev_value = v;
    }
    check_distinct(promo, distinct);
    qsort(promos, np, sizeof *promos, cmp_double);
    check_quantiles(promo, promos, np);
    free(ids);
    free(promos);
}

/* ---- float -------------------------------------------------------------- */

static void test_float_column(void **state)
{
    (void)state;
    double *fin = malloc(ROWS * sizeof *fin), *keys = malloc(ROWS * sizeof *keys);
    assert_non_null(fin);
    assert_non_null(keys);
    size_t nf = 0, nk = 0;
    int64_t nulls = 0, nan = 0, pinf = 0, ninf = 0, zeros = 0;
    for (int64_t r = 0; r < ROWS; r++) {
        tp_row o;
        tp_make_row(r, &o);
        if (!o.total_valid) {
            nulls++;
            continue;
        }
        double x = o.total;
        if (x != x) {
            nan++;
            continue;
        }
        keys[nk++] = x == 0 ? 0.0 : x; /* -0.0 is 0 for distinct/top */
        if (x == INFINITY) pinf++;
        else if (x == -INFINITY) ninf++;
        else fin[nf++] = x;
        zeros += x == 0;
    }
    json_t *c = tp_column(table, "total");
    assert_string_equal(json_string_value(json_object_get(c, "kind")), "float");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "double");
    assert_int_equal(tp_int(c, "count"), ROWS);
    assert_int_equal(tp_int(c, "null_count"), nulls);
    assert_int_equal(tp_int(c, "nan_count"), nan);
    assert_int_equal(tp_int(c, "pos_inf_count"), pinf);
    assert_int_equal(tp_int(c, "neg_inf_count"), ninf);
    assert_int_equal(tp_int(c, "finite_count"), (int64_t)nf);
    assert_true(nan > 0 && pinf > 0 && ninf > 0);
    qsort(fin, nf, sizeof *fin, cmp_double);
    assert_true(json_is_real(json_object_get(c, "min")));
    assert_true(tp_num(c, "min") == fin[0]);
    assert_true(tp_num(c, "max") == fin[nf - 1]);
    long double mean, m2;
    two_pass(fin, nf, &mean, &m2);
    assert_true(tp_rel(tp_num(c, "mean"), mean) < 1e-9);
    assert_true(tp_rel(tp_num(c, "m2"), m2) < 1e-9);
    assert_true(tp_rel(tp_num(c, "variance_sample"), m2 / (nf - 1)) < 1e-9);
    check_quantiles(c, fin, nf);
    qsort(keys, nk, sizeof *keys, cmp_double);
    check_distinct(c, distinct_sorted(keys, nk)); /* ±inf counted, NaN not */
    /* the most frequent value is 0 (all the -0.0 and the tiny values) */
    json_t *first = json_array_get(json_object_get(c, "top"), 0);
    assert_true(json_is_real(json_array_get(first, 0)));
    assert_true(json_real_value(json_array_get(first, 0)) == 0.0);
    assert_true(json_integer_value(json_array_get(first, 1)) >= zeros);
    free(fin);
    free(keys);
}

/* ---- bool, other -------------------------------------------------------- */

static void test_bool_and_other(void **state)
{
    (void)state;
    int64_t t = 0, f = 0, n = 0, blob_nulls = 0;
    for (int64_t r = 0; r < ROWS; r++) {
        tp_row o;
        tp_make_row(r, &o);
        if (!o.flag_valid) n++;
        else if (o.flag) t++;
        else f++;
        blob_nulls += !o.blob_valid;
    }
    json_t *c = tp_column(table, "flag");
    assert_string_equal(json_string_value(json_object_get(c, "kind")), "bool");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "bool");
    assert_int_equal(tp_int(c, "true_count"), t);
    assert_int_equal(tp_int(c, "false_count"), f);
    assert_int_equal(tp_int(c, "null_count"), n);
    assert_null(json_object_get(c, "distinct"));
    assert_int_equal(json_object_size(json_object_get(c, "error_models")), 1);
    json_t *b = tp_column(table, "blob");
    assert_string_equal(json_string_value(json_object_get(b, "kind")), "other");
    assert_string_equal(json_string_value(json_object_get(b, "arrow_type")), "binary");
    assert_int_equal(tp_int(b, "count"), ROWS);
    assert_int_equal(tp_int(b, "null_count"), blob_nulls);
    assert_int_equal(json_object_size(b), 6); /* name kind count null_count arrow_type error_models */
}

/* ---- text --------------------------------------------------------------- */

static int64_t cp_len(const char *s, size_t n)
{
    int64_t k = 0;
    for (size_t i = 0; i < n; i++) k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an < bn ? -1 : an > bn);
}

static void check_text(const char *name, int which)
{
    int64_t *lens = malloc(ROWS * sizeof *lens);
    assert_non_null(lens);
    int64_t nulls = 0, n = 0, total = 0, patterns[SHAPE_PATTERN_COUNT] = {0};
    char mn[300] = "", mx[300] = "";
    size_t mnl = 0, mxl = 0;
    int have = 0;
    for (int64_t r = 0; r < ROWS; r++) {
        tp_row o;
        tp_make_row(r, &o);
        int valid = which ? o.pattern_valid : o.status_valid;
        const char *s = which ? o.pattern : o.status;
        size_t sl = which ? o.pattern_len : strlen(o.status);
        if (!valid) {
            nulls++;
            continue;
        }
        lens[n] = cp_len(s, sl);
        total += lens[n++];
        if (!have || bytes_cmp(s, sl, mn, mnl) < 0) memcpy(mn, s, mnl = sl);
        if (!have || bytes_cmp(s, sl, mx, mxl) > 0) memcpy(mx, s, mxl = sl);
        have = 1;
        unsigned m = which ? o.pattern_mask : 0;
        for (int p = 0; p < SHAPE_PATTERN_COUNT; p++) patterns[p] += (m >> p) & 1;
    }
    json_t *c = tp_column(table, name);
    assert_string_equal(json_string_value(json_object_get(c, "kind")), "text");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "string");
    assert_int_equal(tp_int(c, "null_count"), nulls);
    json_t *jmin = json_object_get(c, "min"), *jmax = json_object_get(c, "max");
    assert_int_equal(json_string_length(jmin), mnl);
    assert_memory_equal(json_string_value(jmin), mn, mnl);
    assert_int_equal(json_string_length(jmax), mxl);
    assert_memory_equal(json_string_value(jmax), mx, mxl);
    qsort(lens, (size_t)n, sizeof *lens, cmp_i64);
    json_t *len = json_object_get(c, "length");
    assert_int_equal(tp_int(len, "count"), n);
    assert_int_equal(tp_int(len, "min"), lens[0]);
    assert_int_equal(tp_int(len, "max"), lens[n - 1]);
    assert_true(tp_rel(tp_num(len, "mean"), (long double)total / n) < 1e-12);
    double pos = 0.95 * (double)(n - 1);
    int64_t lo = (int64_t)pos;
    double frac = pos - (double)lo, a = (double)lens[lo], b = (double)lens[lo + 1 < n ? lo + 1 : lo];
    assert_true(tp_rel(tp_num(len, "p95"), a + (b - a) * frac) < 1e-12);
    json_t *hist = json_object_get(len, "hist");
    int64_t sum = 0, prev = -1;
    const char *key;
    json_t *v;
    json_object_foreach(hist, key, v)
    {
        int64_t l = strtoll(key, NULL, 10), want = 0;
        assert_true(l > prev); /* ascending keys */
        prev = l;
        for (int64_t i = 0; i < n; i++) want += lens[i] == l;
        assert_int_equal(json_integer_value(v), want);
        sum += want;
    }
    assert_int_equal(sum, n);
    json_t *pat = json_object_get(c, "patterns");
    assert_int_equal(json_object_size(pat), SHAPE_PATTERN_COUNT);
    for (int p = 0; p < SHAPE_PATTERN_COUNT; p++) assert_int_equal(tp_int(pat, shape_pattern_name(p)), patterns[p]);
    free(lens);
}

static void test_text_columns(void **state)
{
    (void)state;
    check_text("status", 0);
    check_text("pattern", 1);
    /* status: 6 values, exact top (fewer values than counters) */
    json_t *c = tp_column(table, "status");
    assert_int_equal(json_array_size(json_object_get(c, "top")), 6);
    check_distinct(c, 6);
    json_t *p = json_object_get(tp_column(table, "pattern"), "patterns");
    for (int i = 0; i < SHAPE_PATTERN_COUNT; i++) assert_true(tp_int(p, shape_pattern_name(i)) > 0);
}

/* ---- temporal ----------------------------------------------------------- */

static void check_temporal(const char *name, int ns)
{
    int64_t hour[24] = {0}, dow[7] = {0}, month[12] = {0}, nulls = 0, mn = INT64_MAX, mx = INT64_MIN;
    int64_t years[100] = {0}; /* 1960 .. 2059 */
    for (int64_t r = 0; r < ROWS; r++) {
        tp_row o;
        tp_make_row(r, &o);
        if (!(ns ? o.tns_valid : o.ts_valid)) {
            nulls++;
            continue;
        }
        int64_t us = ns ? (o.tns_ns - ((o.tns_ns % 1000 + 1000) % 1000)) / 1000 : o.ts_us;
        if (us < mn) mn = us;
        if (us > mx) mx = us;
        int64_t secs = us / 1000000 - (us % 1000000 < 0);
        time_t t = (time_t)secs;
        struct tm tm;
        gmtime_r(&t, &tm);
        hour[tm.tm_hour]++;
        dow[(tm.tm_wday + 6) % 7]++;
        month[tm.tm_mon]++;
        years[tm.tm_year + 1900 - 1960]++;
    }
    json_t *c = tp_column(table, name);
    assert_string_equal(json_string_value(json_object_get(c, "kind")), "temporal");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")),
                        ns ? "timestamp[ns, tz=UTC]" : "timestamp[us, tz=UTC]");
    assert_int_equal(tp_int(c, "null_count"), nulls);
    assert_int_equal(tp_int(c, "min"), mn);
    assert_int_equal(tp_int(c, "max"), mx);
    json_t *h = json_object_get(c, "hour_hist"), *d = json_object_get(c, "dow_hist"), *m = json_object_get(c, "month_hist");
    assert_int_equal(json_array_size(h), 24);
    assert_int_equal(json_array_size(d), 7);
    assert_int_equal(json_array_size(m), 12);
    for (int i = 0; i < 24; i++) assert_int_equal(json_integer_value(json_array_get(h, (size_t)i)), hour[i]);
    for (int i = 0; i < 7; i++) assert_int_equal(json_integer_value(json_array_get(d, (size_t)i)), dow[i]);
    for (int i = 0; i < 12; i++) assert_int_equal(json_integer_value(json_array_get(m, (size_t)i)), month[i]);
    json_t *y = json_object_get(c, "year_hist");
    size_t ny = 0;
    for (int i = 0; i < 100; i++) {
        if (!years[i]) continue;
        char key[16];
        snprintf(key, sizeof key, "%d", 1960 + i);
        assert_int_equal(tp_int(y, key), years[i]);
        ny++;
    }
    assert_int_equal(json_object_size(y), ny);
    check_distinct(c, (size_t)(ROWS - nulls)); /* every value distinct */
    json_t *top0 = json_array_get(json_array_get(json_object_get(c, "top"), 0), 0);
    assert_true(json_is_integer(top0)); /* µs integers */
}

static void test_temporal_columns(void **state)
{
    (void)state;
    check_temporal("ts", 0);
    check_temporal("tns", 1);
}

/* ---- layouts our builders do not make ----------------------------------- */

typedef struct manual {
    struct ArrowSchema schema, child_schema[8];
    struct ArrowSchema *child_schema_ptr[8];
    struct ArrowArray array, child[8];
    struct ArrowArray *child_ptr[8];
    const void *bufs[8][6];
    int n;
} manual;

static void manual_init(manual *m, int64_t length, int64_t offset)
{
    memset(m, 0, sizeof *m);
    m->schema.format = "+s";
    m->schema.children = m->child_schema_ptr;
    m->array.length = length;
    m->array.offset = offset;
    m->array.n_buffers = 1;
    m->array.buffers = m->bufs[7];
    m->array.children = m->child_ptr;
}

static void manual_add(manual *m, const char *name, const char *format, int64_t length, int64_t offset,
                       int64_t null_count, int nbuf, const void *b0, const void *b1, const void *b2, const void *b3)
{
    int i = m->n++;
    m->child_schema[i].format = format;
    m->child_schema[i].name = name;
    m->child_schema_ptr[i] = &m->child_schema[i];
    m->bufs[i][0] = b0;
    m->bufs[i][1] = b1;
    m->bufs[i][2] = b2;
    m->bufs[i][3] = b3;
    m->child[i].length = length;
    m->child[i].offset = offset;
    m->child[i].null_count = null_count;
    m->child[i].n_buffers = nbuf;
    m->child[i].buffers = m->bufs[i];
    m->child_ptr[i] = &m->child[i];
    m->schema.n_children = m->n;
    m->array.n_children = m->n;
}

/* A new profile "t" of the batch m (the update must succeed). */
static shape_profile *profile_of(manual *m)
{
    shape_profile *p = tp_new_profile("t");
    shape_err err;
    shape_err_clear(&err);
    if (shape_profile_update(p, &m->schema, &m->array, &err) != SHAPE_OK) fail_msg("%s", err.message);
    return p;
}

static void test_other_layouts(void **state)
{
    (void)state;
    /* 8 rows per child; the struct has offset 1 and length 6 → child rows 1..6,
     * then each child's own offset adds on top */
    static const uint8_t valid[] = {0xDF}; /* rows 0-4, 6, 7 valid; row 5 null */
    static const int32_t i32[] = {-7, 1, 2, 3, 40, 50, 60, 70, 80};          /* child offset 1 */
    static const float f32[] = {1.5f, 2.5f, -1.0f, 0.25f, 8.0f, 9.0f, 10.0f, 11.0f};
    static const uint16_t f16[] = {0x3C00 /*1*/, 0xC000 /*-2*/, 0x3800 /*0.5*/, 0x7C00 /*inf*/, 0x7E00 /*nan*/,
                                   0x0001 /*2^-24*/, 0x3C00, 0x3C00};
    static int64_t dec[16]; /* decimal128(10, 2): 8 values × 16 bytes */
    static const int32_t d32[] = {0, 1, -1, 19000, 19001, 365, 0, 0};
    static const int64_t d64[] = {0, 86400000, -1, 3600000, 0, 0, 0, 0};
    static const int64_t loff[] = {0, 1, 3, 6, 10, 15, 21, 28, 36};
    static const char ldata[] = "abbcccddddeeeeeffffffggggggghhhhhhhh";
    static uint8_t views[8][16];
    static const char far[] = "this string is longer than twelve bytes";
    const int64_t decs[8] = {12345, -50, 0, 100, 99, 1, 2, 3};
    for (int i = 0; i < 8; i++) {
        dec[2 * i] = decs[i];
        dec[2 * i + 1] = decs[i] < 0 ? -1 : 0;
        int32_t len = (i % 2) ? (int32_t)strlen(far) : 3;
        memcpy(views[i], &len, 4);
        if (len <= 12) {
            memcpy(views[i] + 4, "v", 1);
            views[i][5] = (uint8_t)('0' + i);
            views[i][6] = 'x';
        } else {
            int32_t buf = 0, off = 0;
            memcpy(views[i] + 4, far, 4);
            memcpy(views[i] + 8, &buf, 4);
            memcpy(views[i] + 12, &off, 4);
        }
    }
    static const int64_t view_sizes[] = {40};
    manual m;
    manual_init(&m, 6, 1);
    manual_add(&m, "i32", "i", 8, 1, 1, 2, valid, i32, NULL, NULL);
    manual_add(&m, "f32", "f", 8, 0, 0, 2, NULL, f32, NULL, NULL);
    manual_add(&m, "f16", "e", 8, 0, 0, 2, NULL, f16, NULL, NULL);
    manual_add(&m, "dec", "d:10,2", 8, 0, 0, 2, NULL, dec, NULL, NULL);
    manual_add(&m, "d32", "tdD", 8, 0, -1, 2, valid, d32, NULL, NULL);
    manual_add(&m, "d64", "tdm", 8, 0, 0, 2, NULL, d64, NULL, NULL);
    manual_add(&m, "large", "U", 8, 0, 0, 3, NULL, loff, ldata, NULL);
    manual_add(&m, "view", "vu", 8, 0, 0, 4, NULL, views, far, view_sizes);
    shape_profile *p = profile_of(&m);
    json_t *t = tp_table_json(p);
    /* i32: child rows 1+1 .. 1+6 → values i32[2..7] = 2,3,40,50,60,70 with validity bits 2..7:
     * bit 5 null → value 50 is null */
    json_t *c = tp_column(t, "i32");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "int32");
    assert_int_equal(tp_int(c, "count"), 6);
    assert_int_equal(tp_int(c, "null_count"), 1);
    assert_int_equal(tp_int(c, "min"), 2);
    assert_int_equal(tp_int(c, "max"), 70);
    assert_true(tp_num(c, "mean") == (2 + 3 + 40 + 60 + 70) / 5.0);
    /* f32 rows 1..6: 2.5 -1 0.25 8 9 10 */
    c = tp_column(t, "f32");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "float");
    assert_true(tp_num(c, "min") == -1.0 && tp_num(c, "max") == 10.0);
    /* f16 rows 1..6: -2 0.5 inf nan 2^-24 1 */
    c = tp_column(t, "f16");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "halffloat");
    assert_int_equal(tp_int(c, "nan_count"), 1);
    assert_int_equal(tp_int(c, "pos_inf_count"), 1);
    assert_int_equal(tp_int(c, "finite_count"), 4);
    assert_true(tp_num(c, "min") == -2.0 && tp_num(c, "max") == 1.0);
    /* dec rows 1..6: -0.5 0 1 0.99 0.01 0.02 */
    c = tp_column(t, "dec");
    assert_string_equal(json_string_value(json_object_get(c, "kind")), "float");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "decimal128(10, 2)");
    assert_true(tp_num(c, "min") == -0.5 && tp_num(c, "max") == 1.0);
    /* date32 rows 1..6 with validity bits 1..6 (bit 5 null): days 1 -1 19000 19001 (null) 0 */
    c = tp_column(t, "d32");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "date32[day]");
    assert_int_equal(tp_int(c, "null_count"), 1);
    assert_int_equal(tp_int(c, "min"), -86400000000LL);
    assert_int_equal(tp_int(c, "max"), 19001LL * 86400000000LL);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(c, "hour_hist"), 0)), 5);
    c = tp_column(t, "d64");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "date64[ms]");
    assert_int_equal(tp_int(c, "min"), -1000);
    assert_int_equal(tp_int(c, "max"), 86400000000LL);
    /* large string rows 1..6: bb ccc dddd eeeee ffffff ggggggg */
    c = tp_column(t, "large");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "large_string");
    assert_string_equal(json_string_value(json_object_get(c, "min")), "bb");
    assert_string_equal(json_string_value(json_object_get(c, "max")), "ggggggg");
    assert_int_equal(tp_int(json_object_get(c, "length"), "max"), 7);
    /* view rows 1..6: far, v2x, far, v4x, far, v6x */
    c = tp_column(t, "view");
    assert_string_equal(json_string_value(json_object_get(c, "arrow_type")), "string_view");
    assert_string_equal(json_string_value(json_object_get(c, "min")), far);
    assert_string_equal(json_string_value(json_object_get(c, "max")), "v6x");
    json_t *top0 = json_array_get(json_object_get(c, "top"), 0);
    assert_string_equal(json_string_value(json_array_get(top0, 0)), far);
    assert_int_equal(json_integer_value(json_array_get(top0, 1)), 3);
    json_decref(t);
    shape_profile_free(p);
}

/* Text min/max compare 8 bytes at a time and keep each side's first 16
 * bytes as a key: values that share prefixes of every length 0..20, differ
 * in a byte >= 0x80 (unsigned order), in a NUL (the keys' zero pad) or only
 * in length, several batches; min/max must be memcmp's (bytes_cmp above). */
static void test_text_min_max_order(void **state)
{
    (void)state;
    enum { ROWS_PER = 500, BATCHES = 6 };
    /* valid UTF-8 (the document keeps it byte for byte): ASCII, 2-, 3- and
     * 4-byte characters, so bytes >= 0x80 meet ASCII in the same place */
    static const char *const pieces[] = {"a", "b", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", ""};
    static const size_t piece_len[] = {1, 1, 1, 2, 3, 4, 1}; /* the last: one NUL byte */
    static int32_t offsets[ROWS_PER + 1];
    static uint8_t data[ROWS_PER * 100];
    char mn[100], mx[100];
    size_t mnl = 0, mxl = 0;
    int have = 0;
    uint32_t seed = 2024;
    shape_profile *p = tp_new_profile("t");
    for (int b = 0; b < BATCHES; b++) {
        int32_t at = 0;
        for (int r = 0; r < ROWS_PER; r++) {
            seed = seed * 1103515245u + 12345u;
            size_t chars = (seed >> 10) % 24, common = (seed >> 16) % 21, len = 0;
            offsets[r] = at;
            for (size_t i = 0; i < chars; i++) {
                seed = seed * 1103515245u + 12345u;
                /* a shared prefix of 'a's, then random characters */
                size_t k = i < common ? 0 : (seed >> 16) % 7;
                memcpy(data + at + len, pieces[k], piece_len[k]);
                len += piece_len[k];
            }
            const char *v = (const char *)data + at;
            if (!have || bytes_cmp(v, len, mn, mnl) < 0) memcpy(mn, v, mnl = len);
            if (!have || bytes_cmp(v, len, mx, mxl) > 0) memcpy(mx, v, mxl = len);
            have = 1;
            at += (int32_t)len;
        }
        offsets[ROWS_PER] = at;
        manual m;
        manual_init(&m, ROWS_PER, 0);
        manual_add(&m, "s", "u", ROWS_PER, 0, 0, 3, NULL, offsets, data, NULL);
        shape_err err;
        shape_err_clear(&err);
        if (shape_profile_update(p, &m.schema, &m.array, &err) != SHAPE_OK) fail_msg("%s", err.message);
    }
    json_t *t = tp_table_json(p);
    json_t *c = tp_column(t, "s");
    json_t *jmin = json_object_get(c, "min"), *jmax = json_object_get(c, "max");
    assert_int_equal(json_string_length(jmin), mnl);
    assert_memory_equal(json_string_value(jmin), mn, mnl);
    assert_int_equal(json_string_length(jmax), mxl);
    assert_memory_equal(json_string_value(jmax), mx, mxl);
    json_decref(t);
    shape_profile_free(p);
}

/* Values whose 16-byte keys tie with the running min or max: the same
 * length up to 16 bytes is the same text (no byte compare), but a longer
 * text or another length still needs the bytes. One batch each, in order. */
static void test_text_min_max_ties(void **state)
{
    (void)state;
    static const struct {
        const char *v[3];
        size_t len[3];
        const char *min, *max;
        size_t min_len, max_len;
    } cases[] = {
        /* 17 bytes, equal keys: only the last byte orders them */
        {{"aaaaaaaaaaaaaaaaZ", "aaaaaaaaaaaaaaaaA", "aaaaaaaaaaaaaaaaM"}, {17, 17, 17},
         "aaaaaaaaaaaaaaaaA", "aaaaaaaaaaaaaaaaZ", 17, 17},
        /* a NUL (the keys' zero pad) against the shorter text: equal keys, other lengths */
        {{"ab\0", "ab", "ab\0"}, {3, 2, 3}, "ab", "ab\0", 2, 3},
        {{"ab", "ab\0", "ab"}, {2, 3, 2}, "ab", "ab\0", 2, 3},
        /* one value throughout */
        {{"customer", "customer", "customer"}, {8, 8, 8}, "customer", "customer", 8, 8},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int32_t offsets[4] = {0};
        uint8_t data[64];
        for (int r = 0; r < 3; r++) {
            memcpy(data + offsets[r], cases[k].v[r], cases[k].len[r]);
            offsets[r + 1] = offsets[r] + (int32_t)cases[k].len[r];
        }
        manual m;
        manual_init(&m, 3, 0);
        manual_add(&m, "s", "u", 3, 0, 0, 3, NULL, offsets, data, NULL);
        shape_profile *p = profile_of(&m);
        json_t *t = tp_table_json(p);
        json_t *c = tp_column(t, "s");
        json_t *jmin = json_object_get(c, "min"), *jmax = json_object_get(c, "max");
        assert_int_equal(json_string_length(jmin), cases[k].min_len);
        assert_memory_equal(json_string_value(jmin), cases[k].min, cases[k].min_len);
        assert_int_equal(json_string_length(jmax), cases[k].max_len);
        assert_memory_equal(json_string_value(jmax), cases[k].max, cases[k].max_len);
        json_decref(t);
        shape_profile_free(p);
    }
}

/* white-box hook (src/profile/profile_internal.h): text columns without
 * their memo of recent values */
extern int shape_profile_memo_off_;

/* One batch of the memo test: rows of column "s" (NULL: a null row). */
static void memo_batch(shape_profile *p, const char *const *rows, int n)
{
    static int32_t offsets[4097];
    static uint8_t data[4096 * 40], valid[4096 / 8];
    int32_t at = 0;
    int64_t nulls = 0;
    memset(valid, 0, sizeof valid);
    for (int r = 0; r < n; r++) {
        offsets[r] = at;
        if (!rows[r]) {
            nulls++;
            continue;
        }
        size_t len = strlen(rows[r]);
        memcpy(data + at, rows[r], len);
        at += (int32_t)len;
        valid[r >> 3] |= (uint8_t)(1u << (r & 7));
    }
    offsets[n] = at;
    manual m;
    manual_init(&m, n, 0);
    manual_add(&m, "s", "u", n, 0, nulls, 3, valid, offsets, data, NULL);
    shape_err err;
    shape_err_clear(&err);
    if (shape_profile_update(p, &m.schema, &m.array, &err) != SHAPE_OK) fail_msg("%s", err.message);
}

static char *memo_document(int memo_off)
{
    /* few values, among them pattern matches, UTF-8, the empty string,
     * values of 32 and 33 bytes (the longest memoised and one more), and
     * values that share a memo slot (same length and end bytes) */
    static const char *const few[] = {
        "placed", "shipped", "USD", "en-US", "2024-11-29", "a@b.co", "Zo\xc3\xab M\xc3\xbcller", "",
        "aXb", "aYb", "aZb", "0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdefg",
        "10.0.0.1", "123-45-6789", "ZZ"};
    enum { FEW = sizeof few / sizeof few[0], MEMO_ROWS = 4096 };
    static char many[MEMO_ROWS][24];
    const char *rows[MEMO_ROWS];
    shape_profile_memo_off_ = memo_off;
    shape_profile *p = tp_new_profile("t");
    uint32_t seed = 7;
    /* 40 batches: few-valued ones (the memo on), then many-valued ones (it
     * turns itself off, and on again 16 batches later), some nulls */
    for (int b = 0; b < 40; b++) {
        int many_valued = b >= 10 && b < 16;
        int n = 64 + b * 97 % (MEMO_ROWS - 64);
        for (int r = 0; r < n; r++) {
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 8) % 17 == 0) {
                rows[r] = NULL;
            } else if (many_valued) {
                snprintf(many[r], sizeof many[r], "v%u-%d", seed >> 4, r);
                rows[r] = many[r];
            } else {
                rows[r] = few[(seed >> 12) % FEW];
            }
        }
        memo_batch(p, rows, n);
    }
    char *text = NULL;
    size_t len = 0;
    shape_err err;
    shape_err_clear(&err);
    const shape_profile *t[1] = {p};
    if (shape_profile_document(t, 1, &text, &len, &err) != SHAPE_OK) fail_msg("document: %s", err.message);
    shape_profile_free(p);
    shape_profile_memo_off_ = 0;
    return text;
}

/* The memo of recent text values only saves work: the profile is the same,
 * byte for byte, with it and without it. */
static void test_text_memo_same_profile(void **state)
{
    (void)state;
    char *with = memo_document(0), *without = memo_document(1);
    assert_string_equal(with, without);
    free(with);
    free(without);
}

/* ---- schema changes ----------------------------------------------------- */

static void one_column_batch(const char *name, shape_type type, int64_t rows, struct ArrowSchema *s,
                             struct ArrowArray *a)
{
    shape_err err;
    shape_batch *b = NULL;
    shape_column *c = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, name, strlen(name), type, &c, &err), SHAPE_OK);
    for (int64_t i = 0; i < rows; i++) {
        if (type == SHAPE_TYPE_INT64) assert_int_equal(shape_column_append_int64(c, i, &err), SHAPE_OK);
        else assert_int_equal(shape_column_append_bytes(c, "x", 1, &err), SHAPE_OK);
        assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    }
    assert_int_equal(shape_batch_finish(b, s, a, &err), SHAPE_OK);
    shape_batch_free(b);
}

static void test_schema_changes(void **state)
{
    (void)state;
    shape_profile *p = tp_new_profile("t");
    struct ArrowSchema s;
    struct ArrowArray a;
    shape_err err;
    tp_profile_rows(p, 0, 100, 100);             /* 9 columns, 100 rows */
    one_column_batch("late", SHAPE_TYPE_INT64, 10, &s, &a); /* new column; the 9 others missing */
    assert_int_equal(shape_profile_update(p, &s, &a, &err), SHAPE_OK);
    tp_release(&s, &a);
    assert_int_equal(shape_profile_rows(p), 110);
    assert_int_equal(shape_profile_num_columns(p), 10);
    json_t *t = tp_table_json(p);
    json_t *late = json_array_get(json_object_get(t, "columns"), 9); /* appended last */
    assert_string_equal(json_string_value(json_object_get(late, "name")), "late");
    assert_int_equal(tp_int(late, "count"), 110);
    assert_int_equal(tp_int(late, "null_count"), 100);
    json_t *id = tp_column(t, "id");
    assert_int_equal(tp_int(id, "count"), 110);
    assert_int_equal(tp_int(id, "null_count"), 10);
    json_decref(t);
    /* a known column with another type is refused, naming both types */
    one_column_batch("late", SHAPE_TYPE_UTF8, 3, &s, &a);
    shape_err_clear(&err);
    assert_int_equal(shape_profile_update(p, &s, &a, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "'late'"));
    assert_non_null(strstr(err.message, "int64"));
    assert_non_null(strstr(err.message, "string"));
    assert_int_equal(shape_profile_rows(p), 110);
    /* not a struct / mismatched children */
    struct ArrowSchema *child = s.children[0];
    assert_int_equal(shape_profile_update(p, child, &a, &err), SHAPE_EINVAL);
    s.n_children = 0;
    assert_int_equal(shape_profile_update(p, &s, &a, &err), SHAPE_EINVAL);
    s.n_children = 1;
    tp_release(&s, &a);
    /* duplicate names in one batch */
    manual m;
    static const int64_t vals[] = {1, 2};
    manual_init(&m, 2, 0);
    manual_add(&m, "x", "l", 2, 0, 0, 2, NULL, vals, NULL, NULL);
    manual_add(&m, "x", "l", 2, 0, 0, 2, NULL, vals, NULL, NULL);
    assert_int_equal(shape_profile_update(p, &m.schema, &m.array, &err), SHAPE_EINVAL);
    /* a batch whose first columns are the profile's own, in place (matched
     * without the pairwise check), and then one of them again */
    shape_profile *q = tp_new_profile("q");
    manual_init(&m, 2, 0);
    manual_add(&m, "x", "l", 2, 0, 0, 2, NULL, vals, NULL, NULL);
    manual_add(&m, "y", "l", 2, 0, 0, 2, NULL, vals, NULL, NULL);
    assert_int_equal(shape_profile_update(q, &m.schema, &m.array, &err), SHAPE_OK);
    manual_add(&m, "x", "l", 2, 0, 0, 2, NULL, vals, NULL, NULL); /* x, y, x: past the profile's columns */
    shape_err_clear(&err);
    assert_int_equal(shape_profile_update(q, &m.schema, &m.array, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "two columns named 'x'"));
    manual_init(&m, 2, 0); /* x, x: the second is not the profile's column 1 */
    manual_add(&m, "x", "l", 2, 0, 0, 2, NULL, vals, NULL, NULL);
    manual_add(&m, "x", "l", 2, 0, 0, 2, NULL, vals, NULL, NULL);
    shape_err_clear(&err);
    assert_int_equal(shape_profile_update(q, &m.schema, &m.array, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "two columns named 'x'"));
    assert_int_equal(shape_profile_rows(q), 2);
    manual_init(&m, 2, 0); /* x alone, in place: y counts the rows as nulls */
    manual_add(&m, "x", "l", 2, 0, 0, 2, NULL, vals, NULL, NULL);
    assert_int_equal(shape_profile_update(q, &m.schema, &m.array, &err), SHAPE_OK);
    t = tp_table_json(q);
    assert_int_equal(tp_int(tp_column(t, "x"), "null_count"), 0);
    assert_int_equal(tp_int(tp_column(t, "y"), "null_count"), 2);
    assert_int_equal(tp_int(tp_column(t, "y"), "count"), 4);
    json_decref(t);
    shape_profile_free(q);
    /* a dictionary-encoded column is "other" (its format names only the index type) */
    static const struct ArrowSchema dict_values = {.format = "u", .name = ""};
    static const uint8_t valid2[] = {0x01};
    manual_init(&m, 2, 0);
    manual_add(&m, "d", "i", 2, 0, 1, 2, valid2, (const int32_t[]){0, 0}, NULL, NULL);
    m.child_schema[0].dictionary = (struct ArrowSchema *)&dict_values;
    shape_profile *dp = tp_new_profile("t");
    assert_int_equal(shape_profile_update(dp, &m.schema, &m.array, &err), SHAPE_OK);
    t = tp_table_json(dp);
    json_t *dc = tp_column(t, "d");
    assert_string_equal(json_string_value(json_object_get(dc, "kind")), "other");
    assert_string_equal(json_string_value(json_object_get(dc, "arrow_type")), "dictionary<values=string, indices=int32, ordered=0>");
    assert_int_equal(tp_int(dc, "null_count"), 1);
    json_decref(t);
    m.child_schema[0].dictionary = NULL; /* the same name as plain int32 now: another type */
    assert_int_equal(shape_profile_update(dp, &m.schema, &m.array, &err), SHAPE_EINVAL);
    shape_profile_free(dp);
    /* a child shorter than the batch */
    manual_init(&m, 3, 0);
    manual_add(&m, "y", "l", 2, 0, 0, 2, NULL, vals, NULL, NULL);
    assert_int_equal(shape_profile_update(p, &m.schema, &m.array, &err), SHAPE_EINVAL);
    assert_int_equal(shape_profile_rows(p), 110);
    shape_profile_free(p);
    /* bad configuration */
    shape_profile_config cfg = {0};
    assert_int_equal(shape_profile_new("x", &cfg, &p, &err), SHAPE_EINVAL);
}

/* The column loops hand SpaceSaving its keys in runs (PROF_SS_RUN); every
 * column's top list must be the one a summary fed value by value through
 * shape_ss_add_* gives: 5000 rows in batches of 777 (full and partial
 * runs, nulls, NaN skipped, ±inf and -0.0 kept), all 64 counters evicting. */
static void test_top_as_per_value_adds(void **state)
{
    (void)state;
    enum { N = 5000 };
    shape_profile *p = tp_new_profile("s");
    tp_profile_rows(p, 0, N, 777);
    json_t *t = tp_table_json(p);
    static const char *const names[] = {"id", "promo", "total", "status", "pattern", "ts"};
    for (int col = 0; col < 6; col++) {
        shape_ss_kind kind = col < 2 ? SHAPE_SS_INT : col == 2 ? SHAPE_SS_DOUBLE : col < 5 ? SHAPE_SS_TEXT : SHAPE_SS_TIMESTAMP;
        shape_spacesaving *ref = NULL;
        shape_err err;
        assert_int_equal(shape_ss_new(kind, SHAPE_SS_CAPACITY, &ref, &err), SHAPE_OK);
        for (int64_t r = 0; r < N; r++) {
            tp_row o;
            tp_make_row(r, &o);
            switch (col) {
            case 0: shape_ss_add_int(ref, o.id, shape_hash_int(o.id)); break;
            case 1: if (o.promo_valid) shape_ss_add_int(ref, o.promo, shape_hash_int(o.promo)); break;
            case 2:
                if (o.total_valid && o.total == o.total) shape_ss_add_double(ref, o.total, shape_hash_double(o.total));
                break;
            case 3:
                if (o.status_valid)
                    assert_int_equal(shape_ss_add_text(ref, o.status, strlen(o.status),
                                                       shape_hash_text(o.status, strlen(o.status)), &err), SHAPE_OK);
                break;
            case 4:
                if (o.pattern_valid)
                    assert_int_equal(shape_ss_add_text(ref, o.pattern, o.pattern_len,
                                                       shape_hash_text(o.pattern, o.pattern_len), &err), SHAPE_OK);
                break;
            default: if (o.ts_valid) shape_ss_add_int(ref, o.ts_us, shape_hash_timestamp(o.ts_us)); break;
            }
        }
        shape_ss_item items[SHAPE_SS_CAPACITY];
        size_t n = shape_ss_items(ref, items);
        json_t *top = json_object_get(tp_column(t, names[col]), "top");
        assert_int_equal(json_array_size(top), n);
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(top, i);
            assert_int_equal(json_integer_value(json_array_get(e, 1)), items[i].count);
            assert_int_equal(json_integer_value(json_array_get(e, 2)), items[i].error);
            json_t *v = json_array_get(e, 0);
            if (kind == SHAPE_SS_TEXT) {
                assert_int_equal(json_string_length(v), items[i].text_len);
                assert_memory_equal(json_string_value(v), items[i].text, items[i].text_len);
            } else if (kind != SHAPE_SS_DOUBLE) {
                assert_int_equal(json_integer_value(v), items[i].i);
            }
        }
        shape_ss_free(ref);
    }
    json_decref(t);
    shape_profile_free(p);
}

/* A text column of mostly distinct values, whose keys SpaceSaving copies
 * only at the end of each run: its summary's list order (the state) must be
 * the one shape_ss_add_text value by value gives, and every key must be its
 * own copy (the batch's bytes are overwritten before it is released). Keys
 * of 1..60 bytes (slot buffers grow), repeats for hits, nulls, batches of
 * 1000 rows (full and partial runs). */
static void test_text_top_keys_owned(void **state)
{
    (void)state;
    enum { N = 20000, ROWS_PER_BATCH = 1000 };
    shape_profile *p = tp_new_profile("s");
    shape_spacesaving *ref = NULL;
    shape_err err;
    assert_int_equal(shape_ss_new(SHAPE_SS_TEXT, SHAPE_SS_CAPACITY, &ref, &err), SHAPE_OK);
    char key[80];
    for (int64_t r0 = 0; r0 < N; r0 += ROWS_PER_BATCH) {
        shape_batch *b = NULL;
        shape_column *c = NULL;
        assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
        assert_int_equal(shape_batch_add_column(b, "k", 1, SHAPE_TYPE_UTF8, &c, &err), SHAPE_OK);
        for (int64_t r = r0; r < r0 + ROWS_PER_BATCH; r++) {
            if (r % 11 == 3) {
                assert_int_equal(shape_column_append_null(c, &err), SHAPE_OK);
            } else {
                int64_t v = r % 7 == 0 ? r % 5 : r; /* a few values over and over, the rest distinct */
                size_t len = (size_t)snprintf(key, sizeof key, "%lld", (long long)v);
                size_t pad = (size_t)(v * 7 % 50);
                memset(key + len, 'a' + (int)(v % 26), pad);
                len += pad;
                assert_int_equal(shape_column_append_bytes(c, key, len, &err), SHAPE_OK);
                assert_int_equal(shape_ss_add_text(ref, key, len, shape_hash_text(key, len), &err), SHAPE_OK);
            }
            assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
        }
        struct ArrowSchema sc;
        struct ArrowArray a;
        assert_int_equal(shape_batch_finish(b, &sc, &a, &err), SHAPE_OK);
        shape_batch_free(b);
        assert_int_equal(shape_profile_update(p, &sc, &a, &err), SHAPE_OK);
        struct ArrowArray *col = a.children[0];
        const int32_t *off = col->buffers[1];
        memset((void *)col->buffers[2], 'X', (size_t)off[col->offset + col->length]);
        tp_release(&sc, &a);
    }
    const prof_column *pc = NULL;
    for (size_t i = 0; i < p->ncols; i++)
        if (strcmp(p->cols[i]->name, "k") == 0) pc = p->cols[i];
    assert_non_null(pc);
    shape_ss_item got[SHAPE_SS_CAPACITY], want[SHAPE_SS_CAPACITY];
    size_t n = shape_ss_items_ordered_(pc->ss, got);
    assert_int_equal(n, shape_ss_items_ordered_(ref, want));
    assert_int_equal(n, SHAPE_SS_CAPACITY);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(got[i].count, want[i].count);
        assert_int_equal(got[i].error, want[i].error);
        assert_int_equal(got[i].text_len, want[i].text_len);
        assert_memory_equal(got[i].text, want[i].text, want[i].text_len ? want[i].text_len : 1);
    }
    shape_ss_free(ref);
    shape_profile_free(p);
}

/* The same rows cut into other batch sizes give the same document. */
static void test_batching_invariance(void **state)
{
    (void)state;
    shape_profile *a = tp_new_profile("s"), *b = tp_new_profile("s");
    tp_profile_rows(a, 0, 20000, 20000);
    tp_profile_rows(b, 0, 20000, 777);
    json_t *ja = tp_table_json(a), *jb = tp_table_json(b);
    /* counts, histograms, min/max, patterns, HLL: identical; moments: to rounding */
    for (size_t i = 0; i < json_array_size(json_object_get(ja, "columns")); i++) {
        json_t *ca = json_array_get(json_object_get(ja, "columns"), i), *cb = json_array_get(json_object_get(jb, "columns"), i);
        const char *k;
        json_t *v;
        json_object_foreach(ca, k, v)
        {
            json_t *w = json_object_get(cb, k);
            if (!strcmp(k, "mean") || !strcmp(k, "m2") || !strcmp(k, "variance_population") || !strcmp(k, "variance_sample")) {
                if (json_is_null(v)) assert_true(json_is_null(w));
                else assert_true(tp_rel(json_number_value(w), json_number_value(v)) < 1e-12);
            } else if (strcmp(k, "top") && strcmp(k, "quantiles")) {
                assert_true(json_equal(v, w));
            }
        }
    }
    json_decref(ja);
    json_decref(jb);
    shape_profile_free(a);
    shape_profile_free(b);
}

/* Runs of one batch in one shape_profile_update_runs call: the state, byte
 * for byte, of one shape_profile_update per run (slices of the batch), and
 * the rows outside every run count nowhere; a run outside the batch is
 * refused before anything is counted. */
static void test_update_runs(void **state)
{
    (void)state;
    struct ArrowSchema s;
    struct ArrowArray a;
    tp_make_batch(0, 5000, &s, &a);
    const shape_profile_run runs[] = {{0, 3}, {3, 1}, {10, 900}, {911, 0}, {2000, 2999}};
    const size_t n = sizeof runs / sizeof runs[0];
    shape_profile *one = tp_new_profile("s"), *each = tp_new_profile("s");
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_profile_update_runs(one, &s, &a, runs, n, &err), SHAPE_OK);
    int64_t rows = 0;
    for (size_t i = 0; i < n; i++) {
        struct ArrowArray slice = a;
        slice.offset = a.offset + runs[i].start;
        slice.length = runs[i].length;
        assert_int_equal(shape_profile_update(each, &s, &slice, &err), SHAPE_OK);
        rows += runs[i].length;
    }
    assert_int_equal(shape_profile_rows(one), rows);
    uint8_t *sa = NULL, *sb = NULL;
    size_t na = 0, nb = 0;
    assert_int_equal(shape_profile_state_save(one, &sa, &na, &err), SHAPE_OK);
    assert_int_equal(shape_profile_state_save(each, &sb, &nb, &err), SHAPE_OK);
    assert_int_equal(na, nb);
    assert_memory_equal(sa, sb, na);
    free(sa);
    /* outside the batch: refused, nothing counted */
    const shape_profile_run bad[] = {{0, 10}, {4995, 6}};
    assert_int_equal(shape_profile_update_runs(one, &s, &a, bad, 2, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "outside the batch"));
    assert_int_equal(shape_profile_state_save(one, &sa, &na, &err), SHAPE_OK);
    assert_int_equal(na, nb);
    assert_memory_equal(sa, sb, na); /* the state as before the refused call */
    free(sa);
    free(sb);
    assert_int_equal(shape_profile_rows(one), rows);
    tp_release(&s, &a);
    shape_profile_free(one);
    shape_profile_free(each);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_int_columns),
        cmocka_unit_test(test_float_column),
        cmocka_unit_test(test_bool_and_other),
        cmocka_unit_test(test_text_columns),
        cmocka_unit_test(test_temporal_columns),
        cmocka_unit_test(test_other_layouts),
        cmocka_unit_test(test_text_min_max_order),
        cmocka_unit_test(test_text_min_max_ties),
        cmocka_unit_test(test_text_memo_same_profile),
        cmocka_unit_test(test_schema_changes),
        cmocka_unit_test(test_batching_invariance),
        cmocka_unit_test(test_update_runs),
        cmocka_unit_test(test_top_as_per_value_adds),
        cmocka_unit_test(test_text_top_keys_owned),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

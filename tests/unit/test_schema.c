/* test_schema.c — generation-schema domains (shape/generate_schema.h): each
 * strategy against its stated distribution (chi-square or Kolmogorov-Smirnov
 * within bounds, seeded), null rates within 3 sigma, rows independent of the
 * order they are asked in, foreign keys and computed totals, and the
 * loader's refusals.
 * The schemas are written inline: one table `t` (plus a parent `p` where a
 * strategy needs one) of N rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/domain.h"
#include "shape/generate_schema.h"

#define N 20000

static char doc[8192];

/* A schema of tables `p` (rows np, columns pcols) and `t` (rows nt, columns tcols). */
static const char *schema(const char *pcols, uint64_t np, const char *tcols, uint64_t nt)
{
    snprintf(doc, sizeof doc,
             "{\"schema_version\":1,\"model\":{\"name\":\"u\",\"seed\":5,\"date_range\":{\"start\":\"2024-01-01\",\"end\":\"2024-12-31\"}},"
             "\"tables\":{\"p\":{\"name\":\"p\",\"primary_key\":[\"id\"],\"columns\":{"
             "\"id\":{\"name\":\"id\",\"type\":\"integer\",\"generator\":{\"strategy\":\"sequence\",\"start\":10}}%s%s}},"
             "\"t\":{\"name\":\"t\",\"primary_key\":[\"tid\"],\"columns\":{"
             "\"tid\":{\"name\":\"tid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"sequence\"}}%s%s}}},"
             "\"generation\":{\"scale\":\"s\",\"scales\":{\"s\":{\"p\":%llu,\"t\":%llu}}}}",
             pcols[0] ? "," : "", pcols, tcols[0] ? "," : "", tcols, (unsigned long long)np, (unsigned long long)nt);
    return doc;
}

typedef struct opened {
    const shape_domain_type *type;
    shape_domain *d;
} opened;

static opened open_text(const char *text)
{
    opened o = {0};
    shape_err err;
    int rc = shape_schema_domain_parse(text, strlen(text), ".", &o.type, &err);
    if (rc != SHAPE_OK) fprintf(stderr, "%s\n", err.message);
    assert_int_equal(rc, SHAPE_OK);
    assert_int_equal(shape_domain_open(o.type, NULL, o.type->default_seed, &o.d, &err), SHAPE_OK);
    return o;
}

static void close_opened(opened *o)
{
    shape_domain_free(o->d);
    shape_schema_domain_free(o->type);
}

/* Column `col` of every row of table `table` into vals (doubles; NaN = null). */
static double *column(opened *o, const char *table, const char *col, uint64_t *n)
{
    shape_err err;
    int t = shape_domain_table_find(o->d, table), c = shape_domain_column_find(o->d, (size_t)t, col);
    assert_true(t >= 0 && c >= 0);
    const shape_domain_table *tab = shape_domain_table_at(o->d, (size_t)t);
    shape_domain_cursor *cur;
    assert_int_equal(shape_domain_cursor_open(o->d, (size_t)t, &cur, &err), SHAPE_OK);
    double *v = calloc(tab->rows + 1, sizeof *v);
    static shape_gen_row row;
    for (uint64_t r = 0; r < tab->rows; r++) {
        assert_int_equal(shape_domain_cursor_row(cur, r, &row, &err), SHAPE_OK);
        const shape_gen_value *x = &row.values[c];
        v[r] = x->kind == SHAPE_GEN_NULL ? __builtin_nan("")
             : x->kind == SHAPE_GEN_FLOAT64 ? x->v.f
             : x->kind == SHAPE_GEN_BOOL ? x->v.b
             : x->kind == SHAPE_GEN_STRING ? (double)(unsigned char)x->v.s[0]
             : (double)x->v.i;
    }
    shape_domain_cursor_free(cur);
    *n = tab->rows;
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Kolmogorov-Smirnov distance of the sample against cdf. */
static double ks(double *v, uint64_t n, double (*cdf)(double, const double *), const double *par)
{
    qsort(v, n, sizeof *v, cmp_double);
    double d = 0;
    for (uint64_t i = 0; i < n; i++) {
        double f = cdf(v[i], par), lo = f - (double)i / n, hi = (double)(i + 1) / n - f;
        if (lo > d) d = lo;
        if (hi > d) d = hi;
    }
    return d;
}

/* KS critical value at alpha = 0.001: 1.95 / sqrt(n). Rounding to `scale`
 * decimals adds up to the probability mass of half a step. */
static double ks_bound(uint64_t n) { return 1.95 / shape_gen_sqrt((double)n); }

static double erf_approx(double x) /* Abramowitz-Stegun 7.1.26, |error| < 1.5e-7 */
{
    double s = x < 0 ? -1 : 1;
    x = x < 0 ? -x : x;
    double t = 1 / (1 + 0.3275911 * x);
    double y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t *
                       shape_gen_exp(-x * x);
    return s * y;
}

static double normal_cdf(double x, const double *p) { return 0.5 * (1 + erf_approx((x - p[0]) / (p[1] * 1.4142135623730951))); }
static double uniform_cdf(double x, const double *p) { return x <= p[0] ? 0 : x >= p[1] ? 1 : (x - p[0]) / (p[1] - p[0]); }
static double exp_cdf(double x, const double *p) { return x <= 0 ? 0 : 1 - shape_gen_exp(-x / p[0]); }
static double lognormal_cdf(double x, const double *p) { return x <= 0 ? 0 : normal_cdf(shape_gen_log(x), p); }

static void test_continuous_distributions(void **state)
{
    (void)state;
    opened o = open_text(schema("", 1,
        "\"a\":{\"name\":\"a\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"normal\",\"params\":{\"mean\":21,\"std_dev\":3}}},"
        "\"b\":{\"name\":\"b\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":-5,\"high\":7}},"
        "\"c\":{\"name\":\"c\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"exponential\",\"scale\":40}},"
        "\"d\":{\"name\":\"d\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"log_normal\",\"mean\":3.4,\"sigma\":1.0}}",
        N));
    uint64_t n;
    double *v, p[2];
    v = column(&o, "t", "a", &n), p[0] = 21, p[1] = 3;
    assert_true(ks(v, n, normal_cdf, p) < ks_bound(n));
    free(v);
    v = column(&o, "t", "b", &n), p[0] = -5, p[1] = 7;
    assert_true(ks(v, n, uniform_cdf, p) < ks_bound(n));
    free(v);
    v = column(&o, "t", "c", &n), p[0] = 40;
    assert_true(ks(v, n, exp_cdf, p) < ks_bound(n));
    free(v);
    v = column(&o, "t", "d", &n), p[0] = 3.4, p[1] = 1.0;
    assert_true(ks(v, n, lognormal_cdf, p) < ks_bound(n));
    free(v);
    close_opened(&o);
}

/* Chi-square of observed counts against weights; df = k - 1; bound at
 * p = 0.001 by Wilson-Hilferty. */
static void chi_square(const double *obs, const double *w, int k, double n)
{
    double sw = 0, chi = 0;
    for (int i = 0; i < k; i++) sw += w[i];
    for (int i = 0; i < k; i++) {
        double e = n * w[i] / sw;
        chi += (obs[i] - e) * (obs[i] - e) / e;
    }
    double df = k - 1, z = 3.09, t = 1 - 2 / (9 * df) + z * shape_gen_sqrt(2 / (9 * df));
    double crit = df * t * t * t;
    if (chi > crit) fprintf(stderr, "chi-square %.1f > %.1f\n", chi, crit);
    assert_true(chi < crit);
}

static void test_categorical_and_nulls(void **state)
{
    (void)state;
    opened o = open_text(schema("", 1,
        "\"e\":{\"name\":\"e\",\"type\":\"string\",\"generator\":{\"strategy\":\"weighted_enum\",\"values\":{\"A\":6,\"B\":3,\"C\":1}}},"
        "\"f\":{\"name\":\"f\",\"type\":\"integer\",\"generator\":{\"strategy\":\"choice\",\"values\":[1,2,3,4],\"weights\":[1,1,2,4]}},"
        "\"g\":{\"name\":\"g\",\"type\":\"float\",\"nullable\":true,\"null_rate\":0.07,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"poisson\",\"lam\":4}},"
        "\"h\":{\"name\":\"h\",\"type\":\"boolean\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"bernoulli\",\"p\":0.3}}",
        N));
    uint64_t n;
    double *v = column(&o, "t", "e", &n), obs[8] = {0};
    for (uint64_t i = 0; i < n; i++) obs[(int)v[i] - 'A']++;
    chi_square(obs, (const double[]){6, 3, 1}, 3, (double)n);
    free(v);
    v = column(&o, "t", "f", &n);
    memset(obs, 0, sizeof obs);
    for (uint64_t i = 0; i < n; i++) obs[(int)v[i] - 1]++;
    chi_square(obs, (const double[]){1, 1, 2, 4}, 4, (double)n);
    free(v);
    v = column(&o, "t", "g", &n);
    double nulls = 0, pois[16] = {0}, w[16];
    for (uint64_t i = 0; i < n; i++)
        if (v[i] != v[i]) nulls++;
        else pois[v[i] >= 11 ? 11 : (int)v[i]]++;
    double sd = shape_gen_sqrt(n * 0.07 * 0.93);
    assert_true(__builtin_fabs(nulls - n * 0.07) < 3 * sd);
    double pk = shape_gen_exp(-4), tail = 1;
    for (int k = 0; k < 11; k++) {
        w[k] = pk;
        tail -= pk;
        pk = pk * 4 / (k + 1);
    }
    w[11] = tail;
    chi_square(pois, w, 12, n - nulls);
    free(v);
    v = column(&o, "t", "h", &n);
    double ones = 0;
    for (uint64_t i = 0; i < n; i++) ones += v[i];
    assert_true(__builtin_fabs(ones - n * 0.3) < 3 * shape_gen_sqrt(n * 0.3 * 0.7));
    free(v);
    close_opened(&o);
}

static double tri_cdf(double x, const double *p)
{
    double a = p[0], m = p[1], b = p[2];
    if (x <= a) return 0;
    if (x >= b) return 1;
    return x <= m ? (x - a) * (x - a) / ((b - a) * (m - a)) : 1 - (b - x) * (b - x) / ((b - a) * (b - m));
}
static double pareto_cdf(double x, const double *p) { return x <= p[1] ? 0 : 1 - shape_gen_pow(p[1] / x, p[0]); }

static void test_more_distributions(void **state)
{
    (void)state;
    opened o = open_text(schema("", 1,
        "\"a\":{\"name\":\"a\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"triangular\",\"low\":10,\"mode\":45,\"high\":95}},"
        "\"b\":{\"name\":\"b\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"pareto\",\"alpha\":2.5,\"xm\":3}},"
        "\"g\":{\"name\":\"g\",\"type\":\"integer\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"geometric\",\"p\":0.6,\"max\":20}},"
        "\"c\":{\"name\":\"c\",\"type\":\"float\",\"generator\":{\"strategy\":\"correlated\",\"source_column\":\"a\",\"rule\":\"multiply\",\"params\":{\"min\":0.3,\"max\":0.7}}}",
        N));
    uint64_t n;
    double *v, p[3];
    v = column(&o, "t", "a", &n), p[0] = 10, p[1] = 45, p[2] = 95;
    assert_true(ks(v, n, tri_cdf, p) < ks_bound(n));
    free(v);
    v = column(&o, "t", "b", &n), p[0] = 2.5, p[1] = 3;
    assert_true(ks(v, n, pareto_cdf, p) < ks_bound(n));
    free(v);
    v = column(&o, "t", "g", &n);
    double obs[8] = {0}, w[8], q = 1;
    for (uint64_t i = 0; i < n; i++) obs[v[i] >= 7 ? 7 : (int)v[i]]++;
    w[0] = 0;
    for (int k = 1; k < 7; k++) w[k] = q * 0.6, q *= 0.4;
    w[7] = q;
    chi_square(obs + 1, w + 1, 7, (double)n);
    free(v);
    /* correlated: c / a is U(0.3, 0.7) (c rounded to 2 places) */
    double *a = column(&o, "t", "a", &n), *c = column(&o, "t", "c", &n);
    for (uint64_t i = 0; i < n; i++) {
        c[i] /= a[i];
        assert_true(c[i] > 0.29 && c[i] < 0.71);
    }
    p[0] = 0.3, p[1] = 0.7;
    assert_true(ks(c, n, uniform_cdf, p) < ks_bound(n) + 0.01);
    free(a), free(c);
    close_opened(&o);
}

/* self_referencing: 5 roots, the rest split evenly over levels 2..3, each
 * parent one level up. */
static void test_hierarchy(void **state)
{
    (void)state;
    opened o = open_text(schema("", 1,
        "\"up\":{\"name\":\"up\",\"type\":\"integer\",\"generator\":{\"strategy\":\"self_referencing\",\"pk_column\":\"tid\",\"levels\":3,\"root_count\":5}},"
        "\"lv\":{\"name\":\"lv\",\"type\":\"integer\",\"generator\":{\"strategy\":\"self_ref_field\"}}",
        101));
    uint64_t n;
    double *up = column(&o, "t", "up", &n), *lv = column(&o, "t", "lv", &n);
    int per[4] = {0};
    for (uint64_t i = 0; i < n; i++) {
        per[(int)lv[i]]++;
        if (lv[i] == 1) assert_true(up[i] != up[i]); /* null */
        else {
            uint64_t parent = (uint64_t)up[i] - 1; /* tid is 1-based */
            assert_true(parent < n);
            assert_int_equal((int)lv[parent], (int)lv[i] - 1);
        }
    }
    assert_int_equal(per[1], 5);
    assert_int_equal(per[2], 48);
    assert_int_equal(per[3], 48);
    free(up), free(lv);
    close_opened(&o);
}

static void test_seasonal_weekdays(void **state)
{
    (void)state;
    opened o = open_text(schema("", 1,
        "\"ts\":{\"name\":\"ts\",\"type\":\"timestamp\",\"generator\":{\"strategy\":\"temporal\",\"pattern\":\"seasonal\",\"range_ref\":\"model.date_range\","
        "\"profiles\":{\"day_of_week\":{\"Sat\":0.05,\"Sun\":0.05},\"hour_of_day\":{\"0\":1,\"12\":3}}}}",
        N));
    uint64_t n;
    double *v = column(&o, "t", "ts", &n), wd[7] = {0}, hours[2] = {0};
    for (uint64_t i = 0; i < n; i++) {
        int64_t s = (int64_t)(v[i] / 1e9);
        int64_t day = s / 86400;
        wd[(day + 3) % 7]++; /* 1970-01-01 was a Thursday: 0 = Monday */
        int h = (int)(s % 86400 / 3600);
        assert_true(h == 0 || h == 12);
        hours[h == 12]++;
        assert_true(v[i] >= 1704067200e9 && v[i] < 1735689600e9); /* 2024 */
    }
    double w = 1.0 / 7;
    chi_square(wd, (const double[]){w, w, w, w, w, 0.05, 0.05}, 7, (double)n);
    chi_square(hours, (const double[]){1, 3}, 2, (double)n);
    free(v);
    close_opened(&o);
}

static void test_foreign_keys(void **state)
{
    (void)state;
    /* zipf over 50 parents in row order; a counted (allocated) key with a total */
    opened o = open_text(schema(
        "\"n\":{\"name\":\"n\",\"type\":\"integer\",\"generator\":{\"strategy\":\"computed\",\"rule\":\"count_children\",\"child_table\":\"t\",\"child_column\":\"tid\"}},"
        "\"s\":{\"name\":\"s\",\"type\":\"float\",\"generator\":{\"strategy\":\"computed\",\"rule\":\"sum_children\",\"child_table\":\"t\",\"child_column\":\"amt\"}}",
        500,
        "\"pid\":{\"name\":\"pid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\"}},"
        "\"z\":{\"name\":\"z\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"distribution\":\"zipf\",\"alpha\":1.5}},"
        "\"amt\":{\"name\":\"amt\",\"type\":\"float\",\"scale\":2,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":1,\"high\":100}},"
        "\"first\":{\"name\":\"first\",\"type\":\"boolean\",\"generator\":{\"strategy\":\"first_per_parent\",\"parent_column\":\"pid\"}}",
        N));
    uint64_t n, np;
    double *pid = column(&o, "t", "pid", &n), *z = column(&o, "t", "z", &n), *amt = column(&o, "t", "amt", &n);
    double *first = column(&o, "t", "first", &n), *cnt = column(&o, "p", "n", &np), *sum = column(&o, "p", "s", &np);
    double *kids = calloc(np, sizeof *kids), *tot = calloc(np, sizeof *tot), zc[512] = {0};
    char *seen = calloc(np, 1);
    for (uint64_t i = 0; i < n; i++) {
        int k = (int)pid[i] - 10;
        assert_true(k >= 0 && (uint64_t)k < np);
        assert_int_equal((int)first[i], !seen[k]);
        seen[k] = 1;
        kids[k]++;
        tot[k] += amt[i];
        int q = (int)z[i] - 10;
        assert_true(q >= 0 && (uint64_t)q < np);
        zc[q]++;
    }
    for (uint64_t k = 0; k < np; k++) {
        assert_int_equal((int)cnt[k], (int)kids[k]);
        assert_true(__builtin_fabs(sum[k] - tot[k]) < 0.011);
    }
    /* zipf: P(k) ∝ (k+1)^-1.5 over the parents in row order; chi-square over the first 20 and the rest */
    double w[21], obs[21] = {0}, h = 0;
    for (uint64_t k = 0; k < np; k++) h += shape_gen_pow((double)k + 1, -1.5);
    for (int k = 0; k < 21; k++) w[k] = 0;
    for (uint64_t k = 0; k < np; k++) {
        int b = k < 20 ? (int)k : 20;
        w[b] += shape_gen_pow((double)k + 1, -1.5) / h;
        obs[b] += zc[k];
    }
    chi_square(obs, w, 21, (double)n);
    free(pid), free(z), free(amt), free(first), free(cnt), free(sum), free(kids), free(tot), free(seen);
    close_opened(&o);
}

/* Any row on its own: rows asked backwards equal rows asked forwards, and
 * another seed changes them. */
static void test_rows_are_positions(void **state)
{
    (void)state;
    opened o = open_text(schema("\"v\":{\"name\":\"v\",\"type\":\"string\",\"generator\":{\"strategy\":\"uuid\"}}", 300,
        "\"pid\":{\"name\":\"pid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"max_per_parent\":20}},"
        "\"pv\":{\"name\":\"pv\",\"type\":\"string\",\"generator\":{\"strategy\":\"lookup\",\"source_table\":\"p\",\"source_column\":\"v\",\"via\":\"pid\"}},"
        "\"code\":{\"name\":\"code\",\"type\":\"string\",\"generator\":{\"strategy\":\"pattern\",\"format\":\"X-{seq:5}-{random:6}\"}}",
        2000));
    shape_err err;
    shape_domain_cursor *c;
    assert_int_equal(shape_domain_cursor_open(o.d, 1, &c, &err), SHAPE_OK);
    static shape_gen_row a, b;
    static char fwd[2000][64];
    for (uint64_t r = 0; r < 2000; r++) {
        assert_int_equal(shape_domain_cursor_row(c, r, &a, &err), SHAPE_OK);
        snprintf(fwd[r], sizeof fwd[r], "%lld|%.*s|%.*s", (long long)a.values[1].v.i, (int)a.values[3].len, a.values[3].v.s,
                 (int)a.values[2].len, a.values[2].v.s);
    }
    for (uint64_t r = 2000; r-- > 0;) {
        assert_int_equal(shape_domain_cursor_row(c, r, &b, &err), SHAPE_OK);
        char buf[64];
        snprintf(buf, sizeof buf, "%lld|%.*s|%.*s", (long long)b.values[1].v.i, (int)b.values[3].len, b.values[3].v.s,
                 (int)b.values[2].len, b.values[2].v.s);
        assert_string_equal(buf, fwd[r]);
    }
    shape_domain_cursor_free(c);
    shape_domain *d2;
    assert_int_equal(shape_domain_open(o.type, NULL, 6, &d2, &err), SHAPE_OK);
    assert_int_equal(shape_domain_cursor_open(d2, 1, &c, &err), SHAPE_OK);
    assert_int_equal(shape_domain_cursor_row(c, 0, &b, &err), SHAPE_OK);
    assert_memory_not_equal(b.values[2].v.s, strchr(fwd[0], '|') + 1, 8);
    shape_domain_cursor_free(c);
    shape_domain_free(d2);
    close_opened(&o);
}

static void refused(const char *text, const char *want)
{
    shape_err err;
    const shape_domain_type *t = NULL;
    int rc = shape_schema_domain_parse(text, strlen(text), ".", &t, &err);
    if (rc != SHAPE_EINVAL) fprintf(stderr, "accepted (%d), want: %s\n", rc, want);
    assert_int_equal(rc, SHAPE_EINVAL);
    assert_null(t);
    if (!strstr(err.message, want)) fprintf(stderr, "got: %s\nwant: %s\n", err.message, want);
    assert_non_null(strstr(err.message, want));
}

static void test_refusals(void **state)
{
    (void)state;
    refused("{", "schema is not valid JSON");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"faker\",\"provider\":\"iban\"}}", 5),
            "table 't', column 'x': unknown provider 'iban'; use first_name");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"integer\",\"generator\":{\"strategy\":\"native\",\"provider\":\"email\"}}", 5),
            "strategy native produces string values, not integer");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.nope\"}}", 5),
            "table 't', column 'x': foreign key to missing column 'p.nope'");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"choice\",\"values\":[1,2],\"weights\":[1,-1]}}", 5),
            "table 't', column 'x': weight of '2' is negative");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"nullable\":true,\"null_rate\":-0.1,\"generator\":{}}", 5),
            "table 't', column 'x': null_rate -0.1 is outside [0, 1]");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"pattern\",\"format\":\"a}b\"}}", 5),
            "table 't', column 'x': pattern 'a}b' has a '}' without its '{'");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"pattern\",\"format\":\"{random:9999}\"}}", 5),
            "needs a width 0..4096");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"timestamp\",\"generator\":{\"strategy\":\"sequence\"}}", 5),
            "table 't', column 'x': strategy sequence produces integer values, not timestamp");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"formula\",\"expression\":\"tid +\"}}", 5),
            "table 't', column 'x': formula 'tid +'");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"formula\",\"expression\":\"system(1)\"}}", 5),
            "unknown function");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"cauchy\"}}", 5),
            "table 't', column 'x': unknown distribution 'cauchy'");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"normal\",\"std_dev\":\"big\"}}", 5),
            "'std_dev' must be a finite number");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"lookup\",\"source_table\":\"q\",\"source_column\":\"id\",\"via\":\"tid\"}}", 5),
            "lookup from missing table 'q'");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"correlated\",\"source_column\":\"y\"}},"
                          "\"y\":{\"name\":\"y\",\"type\":\"float\",\"generator\":{\"strategy\":\"formula\",\"expression\":\"tid * 2\"}}", 5),
            "'source_column' names 'y', which is not generated before this column");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_continuous_distributions),
        cmocka_unit_test(test_categorical_and_nulls),
        cmocka_unit_test(test_more_distributions),
        cmocka_unit_test(test_hierarchy),
        cmocka_unit_test(test_seasonal_weekdays),
        cmocka_unit_test(test_foreign_keys),
        cmocka_unit_test(test_rows_are_positions),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_schema.c — generation-schema domains (shape/generate_schema.h): each
 * strategy against its stated distribution (chi-square or Kolmogorov-Smirnov
 * within bounds, seeded), null rates within 3 sigma, rows independent of the
 * order they are asked in, foreign keys and computed totals, and the
 * loader's refusals.
 * The schemas are written inline: one table `t` (plus a parent `p` where a
 * strategy needs one) of N rows. */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/stat_checks.h"

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

/* The parent's total of its children's `amt`, and the children's key to the parent. */
#define TOTAL_OF_AMT \
    "\"s\":{\"name\":\"s\",\"type\":\"float\",\"generator\":{\"strategy\":\"computed\",\"rule\":\"sum_children\",\"child_table\":\"t\",\"child_column\":\"amt\"}}"
#define PID_TO_P "\"pid\":{\"name\":\"pid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\"}},"

/* A total whose children read their parent: the child columns that are a
 * function of the parent's key only (a string lookup into the parent, a
 * conditional on it) hold the same value in every child of one parent and
 * are made once per total; a column with a draw of its own that reads them
 * (a conditional_table on the string) still differs child by child, and the
 * total equals the sum over the streamed children. */
static void test_total_over_children_reading_their_parent(void **state)
{
    (void)state;
    opened o = open_text(schema(
        "\"tier\":{\"name\":\"tier\",\"type\":\"string\",\"generator\":{\"strategy\":\"weighted_enum\",\"values\":{\"gold\":0.5,\"basic\":0.5}}},"
        TOTAL_OF_AMT,
        200,
        PID_TO_P
        "\"ptier\":{\"name\":\"ptier\",\"type\":\"string\",\"generator\":{\"strategy\":\"lookup\",\"source_table\":\"p\",\"source_column\":\"tier\",\"via\":\"pid\"}},"
        "\"gold\":{\"name\":\"gold\",\"type\":\"float\",\"generator\":{\"strategy\":\"conditional\",\"condition\":\"ptier == 'gold'\","
        "\"true_generator\":{\"fixed\":1.0},\"false_generator\":{\"fixed\":0.0}}},"
        "\"mult\":{\"name\":\"mult\",\"type\":\"float\",\"generator\":{\"strategy\":\"conditional_table\",\"source_column\":\"ptier\","
        "\"table\":{\"gold\":{\"2\":1,\"3\":1},\"basic\":{\"1\":1}}}},"
        "\"base\":{\"name\":\"base\",\"type\":\"float\",\"scale\":2,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":1,\"high\":10}},"
        "\"amt\":{\"name\":\"amt\",\"type\":\"float\",\"scale\":2,\"generator\":{\"strategy\":\"formula\",\"expression\":\"base * mult + gold\"}}",
        3000));
    uint64_t n, np;
    double *pid = column(&o, "t", "pid", &n), *ptier = column(&o, "t", "ptier", &n), *mult = column(&o, "t", "mult", &n);
    double *amt = column(&o, "t", "amt", &n), *tier = column(&o, "p", "tier", &np), *sum = column(&o, "p", "s", &np);
    double *tot = calloc(np, sizeof *tot);
    int gold = 0;
    for (uint64_t i = 0; i < n; i++) {
        int k = (int)pid[i] - 10;
        assert_true(k >= 0 && (uint64_t)k < np);
        assert_true(ptier[i] == tier[k]); /* first letters: 'g' or 'b' */
        assert_true(tier[k] == 'g' ? mult[i] == 2.0 || mult[i] == 3.0 : mult[i] == 1.0);
        gold += tier[k] == 'g';
        tot[k] += amt[i];
    }
    assert_true(gold > 0 && gold < (int)n);
    for (uint64_t k = 0; k < np; k++) assert_true(__builtin_fabs(sum[k] - tot[k]) < 0.011);
    free(pid), free(ptier), free(mult), free(amt), free(tier), free(sum), free(tot);
    close_opened(&o);
}

/* A total whose children read a number their parent made before the total
 * (a leaf column, found in the parent's frame instead of drawn again, see
 * read_leaf): the total equals the sum over the streamed children, which
 * read it through the value cache or a draw of their own. */
static void test_total_over_children_reading_a_parent_number(void **state)
{
    (void)state;
    opened o = open_text(schema(
        "\"w\":{\"name\":\"w\",\"type\":\"float\",\"nullable\":true,\"null_rate\":0.3,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":1,\"high\":5}},"
        TOTAL_OF_AMT,
        200,
        PID_TO_P
        "\"pw\":{\"name\":\"pw\",\"type\":\"float\",\"nullable\":true,\"generator\":{\"strategy\":\"lookup\",\"source_table\":\"p\",\"source_column\":\"w\",\"via\":\"pid\"}},"
        "\"base\":{\"name\":\"base\",\"type\":\"float\",\"scale\":2,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":1,\"high\":10}},"
        "\"amt\":{\"name\":\"amt\",\"type\":\"float\",\"scale\":2,\"nullable\":true,\"generator\":{\"strategy\":\"formula\",\"expression\":\"base * pw\"}}",
        3000));
    uint64_t n, np;
    double *pid = column(&o, "t", "pid", &n), *pw = column(&o, "t", "pw", &n), *amt = column(&o, "t", "amt", &n);
    double *w = column(&o, "p", "w", &np), *sum = column(&o, "p", "s", &np);
    double *tot = calloc(np, sizeof *tot);
    uint64_t nulls = 0;
    for (uint64_t i = 0; i < n; i++) {
        int k = (int)pid[i] - 10;
        assert_true(k >= 0 && (uint64_t)k < np);
        assert_memory_equal(&pw[i], &w[k], sizeof pw[i]); /* NaN (null) included */
        if (amt[i] == amt[i]) tot[k] += amt[i];
        else nulls++;
    }
    assert_true(nulls > n / 10 && nulls < n / 2);
    for (uint64_t k = 0; k < np; k++) assert_true(__builtin_fabs(sum[k] - tot[k]) < 0.011);
    free(pid), free(pw), free(amt), free(w), free(sum), free(tot);
    close_opened(&o);
}

/* Three tables: parents p with s = the sum of their children t.x, and r,
 * whose y is kept <= its parent's s (rule `cap`, when asked), t.x kept > k. */
static const char *capped(const char *k, int cap)
{
    snprintf(doc, sizeof doc,
             "{\"schema_version\":1,\"model\":{\"name\":\"u\",\"seed\":5},"
             "\"tables\":{\"p\":{\"name\":\"p\",\"primary_key\":[\"id\"],\"columns\":{"
             "\"id\":{\"name\":\"id\",\"type\":\"integer\",\"generator\":{\"strategy\":\"sequence\",\"start\":0}},"
             "\"s\":{\"name\":\"s\",\"type\":\"decimal\",\"scale\":2,\"generator\":{\"strategy\":\"computed\",\"rule\":\"sum_children\",\"child_table\":\"t\",\"child_column\":\"x\"}}}},"
             "\"t\":{\"name\":\"t\",\"primary_key\":[\"tid\"],\"columns\":{"
             "\"tid\":{\"name\":\"tid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"sequence\"}},"
             "\"pid\":{\"name\":\"pid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\"}},"
             "\"x\":{\"name\":\"x\",\"type\":\"decimal\",\"scale\":2,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":1,\"high\":10}}}},"
             "\"r\":{\"name\":\"r\",\"primary_key\":[\"rid\"],\"columns\":{"
             "\"rid\":{\"name\":\"rid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"sequence\"}},"
             "\"pid\":{\"name\":\"pid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\"}},"
             "\"y\":{\"name\":\"y\",\"type\":\"decimal\",\"scale\":2,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":0,\"high\":40}}}}},"
             "\"business_rules\":[{\"name\":\"pos\",\"type\":\"constraint\",\"table\":\"t\",\"rule\":\"x > %s\"}%s],"
             "\"generation\":{\"scale\":\"s\",\"scales\":{\"s\":{\"p\":300,\"t\":750,\"r\":600}}}}",
             k, cap ? ",{\"name\":\"cap\",\"type\":\"cross_table\",\"rule\":\"r.y <= p.s\",\"via\":\"pid\"}" : "");
    return doc;
}

/* A rule "y <= parent's total of children never negative" is decided from
 * the first children whose partial total keeps it (sc_repair.sum_bound):
 * the same values as the whole total gives (the twin schema's children
 * kept > -1, which no draw breaks, so the same children, is not eligible),
 * the rule kept where the draw broke it. */
static void test_cap_by_partial_total(void **state)
{
    (void)state;
    uint64_t n, np;
    opened raw = open_text(capped("0", 0));
    double *y0 = column(&raw, "r", "y", &n), *pid = column(&raw, "r", "pid", &n), *s = column(&raw, "p", "s", &np);
    close_opened(&raw);
    opened fast = open_text(capped("0", 1));
    double *y1 = column(&fast, "r", "y", &n);
    close_opened(&fast);
    opened whole = open_text(capped("-1", 1));
    double *y2 = column(&whole, "r", "y", &n);
    close_opened(&whole);
    uint64_t repaired = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)pid[i];
        assert_true(k < np);
        assert_memory_equal(&y1[i], &y2[i], sizeof y1[i]);
        assert_true(y1[i] <= s[k]);
        if (y0[i] > s[k]) repaired++, assert_true(y1[i] != y0[i]);
        else assert_memory_equal(&y1[i], &y0[i], sizeof y1[i]);
    }
    assert_true(repaired > n / 20 && repaired < n - n / 20); /* both cases, many times */
    free(y0), free(pid), free(s), free(y1), free(y2);
}

/* A temporal column kept after its parent's instant (a cross_table rule):
 * the draw starts at the parent's instant, but where that cannot keep the
 * rule (the parent is after the child's own range, or a day granularity
 * cuts the draw back to midnight) the rule's repair must still act, though
 * the step checks the rule itself and skips repair() when it holds. */
static void test_instant_after_parent(void **state)
{
    (void)state;
    snprintf(doc, sizeof doc,
             "{\"schema_version\":1,\"model\":{\"name\":\"u\",\"seed\":5},"
             "\"tables\":{\"p\":{\"name\":\"p\",\"primary_key\":[\"id\"],\"columns\":{"
             "\"id\":{\"name\":\"id\",\"type\":\"integer\",\"generator\":{\"strategy\":\"sequence\",\"start\":0}},"
             "\"t0\":{\"name\":\"t0\",\"type\":\"timestamp\",\"generator\":{\"strategy\":\"temporal\",\"start\":\"2024-01-01\",\"end\":\"2024-12-31\"}}}},"
             "\"t\":{\"name\":\"t\",\"primary_key\":[\"tid\"],\"columns\":{"
             "\"tid\":{\"name\":\"tid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"sequence\"}},"
             "\"pid\":{\"name\":\"pid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\"}},"
             "\"early\":{\"name\":\"early\",\"type\":\"timestamp\",\"generator\":{\"strategy\":\"temporal\",\"start\":\"2024-01-01\",\"end\":\"2024-03-01\"}},"
             "\"day\":{\"name\":\"day\",\"type\":\"timestamp\",\"generator\":{\"strategy\":\"temporal\",\"start\":\"2024-01-01\",\"end\":\"2024-12-31\",\"granularity\":\"day\"}}}}},"
             "\"business_rules\":[{\"name\":\"a\",\"type\":\"cross_table\",\"rule\":\"t.early >= p.t0\",\"via\":\"pid\"},"
             "{\"name\":\"b\",\"type\":\"cross_table\",\"rule\":\"t.day > p.t0\",\"via\":\"pid\"}],"
             "\"generation\":{\"scale\":\"s\",\"scales\":{\"s\":{\"p\":300,\"t\":3000}}}}");
    opened o = open_text(doc);
    uint64_t n, np;
    double *pid = column(&o, "t", "pid", &n), *early = column(&o, "t", "early", &n), *day = column(&o, "t", "day", &n);
    double *t0 = column(&o, "p", "t0", &np);
    uint64_t late = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)pid[i];
        assert_true(k < np);
        assert_true(early[i] >= t0[k]);
        assert_true(day[i] > t0[k]);
        late += t0[k] > 1709251200e9; /* the parent after 2024-03-01: only a repair keeps `early` */
    }
    assert_true(late > n / 2);
    free(pid), free(early), free(day), free(t0);
    close_opened(&o);
}

/* Formulas' arithmetic, row by row, against the same operations done here:
 * column and constant operands on either side of + - * / (the flat
 * program fuses a push with the operation after it), a null operand making
 * the result null, division by zero (a column or a constant) a null. */
static void test_formula_arithmetic(void **state)
{
    (void)state;
    static const char *const ex[] = {"a - b", "b - a", "a / b", "(a + 2) * 3 - b / 4", "a - 1.5 / b", "tid * 2 - a", "a / 0",
                                     "2 - a * b + 0.25",
                                     /* the register form's other cases: constants on both sides, functions
                                      * over columns and constants, unary minus, a comparison, a lone constant
                                      * or column, a column read twice */
                                     "2 * 3 - a + a * a", "max(a, 2, b) - min(b, 1) + np_clip(a, 2, 5) * -b", "7", "a",
                                     "(a > 5) + abs(b - a) / 2"};
    enum { NEX = sizeof ex / sizeof ex[0] };
    char cols[4096];
    int n = snprintf(cols, sizeof cols,
                     "\"a\":{\"name\":\"a\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":1,\"high\":10}},"
                     "\"b\":{\"name\":\"b\",\"type\":\"integer\",\"nullable\":true,\"null_rate\":0.2,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":-3,\"high\":3}}");
    for (int k = 0; k < NEX; k++)
        n += snprintf(cols + n, sizeof cols - (size_t)n,
                      ",\"f%d\":{\"name\":\"f%d\",\"type\":\"float\",\"nullable\":true,\"generator\":{\"strategy\":\"formula\",\"expression\":\"%s\"}}", k, k, ex[k]);
    opened o = open_text(schema("", 1, cols, 2000));
    uint64_t rows;
    double *a = column(&o, "t", "a", &rows), *b = column(&o, "t", "b", &rows), *tid = column(&o, "t", "tid", &rows);
    int nulls = 0, zeros = 0;
    for (int k = 0; k < NEX; k++) {
        char name[8];
        snprintf(name, sizeof name, "f%d", k);
        double *f = column(&o, "t", name, &rows);
        for (uint64_t i = 0; i < rows; i++) {
            double x = a[i], y = b[i], want;
            switch (k) {
            case 0: want = x - y; break;
            case 1: want = y - x; break;
            case 2: want = y != 0 ? x / y : __builtin_nan(""); break;
            case 3: want = (x + 2) * 3 - y / 4; break;
            case 4: want = y != 0 ? x - 1.5 / y : __builtin_nan(""); break;
            case 5: want = tid[i] * 2 - x; break;
            case 6: want = __builtin_nan(""); break;
            case 7: want = 2 - x * y + 0.25; break;
            case 8: want = (6 - x) + x * x; break;
            case 9: {
                double mx = x > 2 ? x : 2;
                mx = y > mx ? y : mx;
                want = (mx - (y < 1 ? y : 1)) + (x < 2 ? 2 : x > 5 ? 5 : x) * -y;
                break;
            }
            case 10: want = 7; break;
            case 11: want = x; break;
            default: want = (double)(x > 5) + (y - x < 0 ? x - y : y - x) / 2; break;
            }
            if (__builtin_isnan(y) && k != 5 && k != 6 && k != 8 && k != 10 && k != 11)
                want = __builtin_nan(""); /* a null b: a null result */
            if (__builtin_isnan(want)) assert_true(__builtin_isnan(f[i]));
            else assert_true(f[i] == want);
            nulls += k == 0 && __builtin_isnan(y);
            zeros += k == 0 && y == 0;
        }
        free(f);
    }
    assert_true(nulls > 0 && zeros > 0); /* both null and zero divisors were met */
    free(a), free(b), free(tid);
    close_opened(&o);
}

/* The formula shape run in line (A * B * (K0 - C / K1), a line's total
 * after a percent discount), row by row against the same operations done
 * here: an integer and a null operand in each place; with K1 = 0 (not that
 * shape: the register form's division by zero) a null. */
static void test_formula_fused(void **state)
{
    (void)state;
    opened o = open_text(schema("", 1,
        "\"a\":{\"name\":\"a\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":1,\"high\":10}},"
        "\"b\":{\"name\":\"b\",\"type\":\"integer\",\"nullable\":true,\"null_rate\":0.2,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"low\":-3,\"high\":30}},"
        "\"f0\":{\"name\":\"f0\",\"type\":\"float\",\"nullable\":true,\"generator\":{\"strategy\":\"formula\",\"expression\":\"a * tid * (1 - b / 100)\"}},"
        "\"f1\":{\"name\":\"f1\",\"type\":\"float\",\"nullable\":true,\"generator\":{\"strategy\":\"formula\",\"expression\":\"b * a * (3.5 - tid / 8)\"}},"
        "\"f2\":{\"name\":\"f2\",\"type\":\"float\",\"nullable\":true,\"generator\":{\"strategy\":\"formula\",\"expression\":\"a * tid * (1 - b / 0)\"}}",
        2000));
    uint64_t rows;
    double *a = column(&o, "t", "a", &rows), *b = column(&o, "t", "b", &rows), *tid = column(&o, "t", "tid", &rows);
    double *f0 = column(&o, "t", "f0", &rows), *f1 = column(&o, "t", "f1", &rows), *f2 = column(&o, "t", "f2", &rows);
    int nulls = 0;
    for (uint64_t i = 0; i < rows; i++) {
        double x = a[i], y = b[i], k = tid[i];
        if (__builtin_isnan(y)) {
            assert_true(__builtin_isnan(f0[i]) && __builtin_isnan(f1[i]));
            nulls++;
        } else {
            assert_true(f0[i] == x * k * (1 - y / 100));
            assert_true(f1[i] == y * x * (3.5 - k / 8));
        }
        assert_true(__builtin_isnan(f2[i]));
    }
    assert_true(nulls > 0 && nulls < (int)rows);
    free(a), free(b), free(tid), free(f0), free(f1), free(f2);
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

/* The native providers' texts and a pattern's padded numbers have the
 * shapes their formats promise (each text checked with a POSIX regex; a
 * pattern's "{n:5}" is the row's n in decimal, zero-padded to 5). */
static void test_native_formats(void **state)
{
    (void)state;
    static const struct {
        const char *provider, *re;
    } want[] = {
        {"first_name", "^[A-Z][^ ]*$"},
        {"name", "^[A-Z][^ ]* [A-Z].*$"},
        {"email", "^[a-z-]+\\.[a-z-]+[1-9][0-9]{0,2}@[a-z0-9-]+(\\.[a-z0-9-]+)+$"},
        {"phone_number", "^[2-9][0-9]{2}-555-01[0-9]{2}$"},
        {"street_address", "^[1-9][0-9]{2,3} [A-Z][^ ]*( [^ ]+)* [A-Z][a-z]*$"},
        {"postcode", "^[0-9]{5}$"},
        {"zip_plus4", "^[0-9]{5}-[0-9]{4}$"},
        {"ipv4", "^10\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[1-9][0-9]{0,2}$"},
        {"uri", "^https://www\\.example\\.com/[a-z-]+$"},
        {"company", "^[A-Z].* & [A-Z].* (LLC|Inc|Group|Partners)$"},
        {"ssn", "^9[0-9]{2}-(0[1-9]|[1-9][0-9])-[0-9]{4}$"},
    };
    const size_t nw = sizeof want / sizeof want[0];
    static char cols[4096];
    size_t at = (size_t)snprintf(cols, sizeof cols,
        "\"n\":{\"name\":\"n\",\"type\":\"integer\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"min\":-999,\"max\":999}},"
        "\"code\":{\"name\":\"code\",\"type\":\"string\",\"generator\":{\"strategy\":\"pattern\",\"format\":\"X{seq:3}/{n:5}/{n}\"}}");
    for (size_t i = 0; i < nw; i++)
        at += (size_t)snprintf(cols + at, sizeof cols - at,
                               ",\"%s\":{\"name\":\"%s\",\"type\":\"string\",\"generator\":{\"strategy\":\"native\",\"provider\":\"%s\"}}",
                               want[i].provider, want[i].provider, want[i].provider);
    opened o = open_text(schema("", 1, cols, 3000));
    shape_err err;
    int t = shape_domain_table_find(o.d, "t");
    int cn = shape_domain_column_find(o.d, (size_t)t, "n"), cc = shape_domain_column_find(o.d, (size_t)t, "code");
    int ci[16];
    regex_t re[16];
    for (size_t i = 0; i < nw; i++) {
        ci[i] = shape_domain_column_find(o.d, (size_t)t, want[i].provider);
        assert_true(ci[i] >= 0);
        assert_int_equal(regcomp(&re[i], want[i].re, REG_EXTENDED | REG_NOSUB), 0);
    }
    shape_domain_cursor *cur;
    assert_int_equal(shape_domain_cursor_open(o.d, (size_t)t, &cur, &err), SHAPE_OK);
    static shape_gen_row row;
    int negative = 0;
    for (uint64_t r = 0; r < 3000; r++) {
        assert_int_equal(shape_domain_cursor_row(cur, r, &row, &err), SHAPE_OK);
        for (size_t i = 0; i < nw; i++) {
            const shape_gen_value *v = &row.values[ci[i]];
            assert_int_equal(v->kind, SHAPE_GEN_STRING);
            char text[256];
            snprintf(text, sizeof text, "%.*s", (int)v->len, v->v.s);
            if (regexec(&re[i], text, 0, NULL, 0) != 0) fail_msg("row %llu, %s: '%s'", (unsigned long long)r, want[i].provider, text);
        }
        long long n = row.values[cn].v.i;
        negative += n < 0;
        char num[24], expect[64];
        int len = snprintf(num, sizeof num, "%lld", n);
        snprintf(expect, sizeof expect, "X%s%llu/%.*s%s/%s", r + 1 < 100 ? (r + 1 < 10 ? "00" : "0") : "",
                 (unsigned long long)(r + 1), len < 5 ? 5 - len : 0, "00000", num, num);
        const shape_gen_value *c = &row.values[cc];
        assert_int_equal(c->len, strlen(expect));
        assert_memory_equal(c->v.s, expect, c->len);
    }
    assert_true(negative > 1000);
    for (size_t i = 0; i < nw; i++) regfree(&re[i]);
    shape_domain_cursor_free(cur);
    close_opened(&o);
}

/* empirical: KS against the piecewise-linear CDF through the quantiles
 * (min at 0, max at 1). */
static const double EQ[] = {0, 0.1, 0.5, 0.9, 1}, EX[] = {250, 300, 650, 790, 850};
static double empirical_cdf(double x, const double *p)
{
    (void)p;
    if (x <= EX[0]) return 0;
    for (int i = 1; i < 5; i++)
        if (x <= EX[i]) return EQ[i - 1] + (x - EX[i - 1]) / (EX[i] - EX[i - 1]) * (EQ[i] - EQ[i - 1]);
    return 1;
}

static void test_empirical(void **state)
{
    (void)state;
    opened o = open_text(schema("", 1,
        "\"e\":{\"name\":\"e\",\"type\":\"float\",\"generator\":{\"strategy\":\"empirical\",\"quantiles\":{\"p90\":790,\"p10\":300,\"p50\":650},\"min\":250,\"max\":850}}",
        N));
    uint64_t n;
    double *v = column(&o, "t", "e", &n);
    for (uint64_t i = 0; i < n; i++) assert_true(v[i] >= 250 && v[i] <= 850);
    double d = ks(v, n, empirical_cdf, NULL);
    if (d >= ks_bound(n)) fprintf(stderr, "empirical KS %g >= %g\n", d, ks_bound(n));
    assert_true(d < ks_bound(n));
    free(v);
    close_opened(&o);
}

/* conditional_table: the weights of the row's case, chi-square per case;
 * composite_fk_field: the same parent row as its composite_foreign_key. */
static void test_conditional_table_and_composite(void **state)
{
    (void)state;
    opened o = open_text(schema(
        "\"region\":{\"name\":\"region\",\"type\":\"string\",\"generator\":{\"strategy\":\"choice\",\"values\":[\"EU\",\"US\",\"APAC\"]}}", 300,
        "\"pid\":{\"name\":\"pid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"composite_foreign_key\",\"ref\":\"p.id\"}},"
        "\"reg\":{\"name\":\"reg\",\"type\":\"string\",\"generator\":{\"strategy\":\"composite_fk_field\",\"source\":\"pid\",\"field\":\"region\"}},"
        "\"tier\":{\"name\":\"tier\",\"type\":\"string\",\"generator\":{\"strategy\":\"conditional_table\",\"source_column\":\"reg\","
        "\"table\":{\"EU\":{\"A\":1,\"B\":9},\"US\":{\"A\":5,\"B\":5}},\"default\":{\"A\":0,\"B\":1,\"C\":3}}}",
        N));
    uint64_t n, np;
    double *pid = column(&o, "t", "pid", &n), *reg = column(&o, "t", "reg", &n), *tier = column(&o, "t", "tier", &n);
    double *preg = column(&o, "p", "region", &np);
    double obs[3][3] = {{0}};
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = (uint64_t)pid[i] - 10;
        assert_true(k < np);
        assert_true(reg[i] == preg[k]); /* first letter of the parent's region */
        int c = reg[i] == 'E' ? 0 : reg[i] == 'U' ? 1 : 2;
        obs[c][(int)tier[i] - 'A']++;
    }
    double ne = obs[0][0] + obs[0][1], nu = obs[1][0] + obs[1][1], na = obs[2][1] + obs[2][2];
    assert_true(obs[0][2] == 0 && obs[1][2] == 0 && obs[2][0] == 0);
    chi_square(obs[0], (const double[]){1, 9}, 2, ne);
    chi_square(obs[1], (const double[]){5, 5}, 2, nu);
    chi_square(obs[2] + 1, (const double[]){1, 3}, 2, na);
    free(pid), free(reg), free(tier), free(preg);
    close_opened(&o);
}

/* fan_out: top_share of the rows on the top_fraction of the parents (the
 * first rows without shuffle; the most-picked ones with it); two_tier is
 * uniform inside each tier. sample_rate: exactly max(1, n rate) distinct
 * parents, taken in turn. */
static void test_fan_out_and_sample(void **state)
{
    (void)state;
    opened o = open_text(schema("", 200,
        "\"pw\":{\"name\":\"pw\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"fan_out\":{\"top_fraction\":0.1,\"top_share\":0.6,\"shuffle\":false}}},"
        "\"tt\":{\"name\":\"tt\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"fan_out\":{\"shape\":\"two_tier\",\"top_fraction\":0.25,\"top_share\":0.7,\"shuffle\":false}}},"
        "\"sh\":{\"name\":\"sh\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"fan_out\":{}}},"
        "\"sm\":{\"name\":\"sm\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"sample_rate\":0.05}}",
        N));
    uint64_t n;
    double *pw = column(&o, "t", "pw", &n), *tt = column(&o, "t", "tt", &n), *sh = column(&o, "t", "sh", &n), *sm = column(&o, "t", "sm", &n);
    double top = 0, tiers[2] = {0}, in_top[50] = {0}, in_rest[150] = {0}, cnt[200] = {0}, scnt[200] = {0};
    for (uint64_t i = 0; i < n; i++) {
        int a = (int)pw[i] - 10, b = (int)tt[i] - 10, c = (int)sh[i] - 10, d = (int)sm[i] - 10;
        assert_true(a >= 0 && a < 200 && b >= 0 && b < 200 && c >= 0 && c < 200 && d >= 0 && d < 200);
        top += a < 20;
        tiers[b >= 50]++;
        if (b < 50) in_top[b]++;
        else in_rest[b - 50]++;
        cnt[c]++;
        scnt[d]++;
    }
    double sd = shape_gen_sqrt(n * 0.6 * 0.4);
    assert_true(__builtin_fabs(top - n * 0.6) < 3.5 * sd);
    chi_square(tiers, (const double[]){0.7, 0.3}, 2, (double)n);
    double w50[50], w150[150];
    for (int i = 0; i < 50; i++) w50[i] = 1;
    for (int i = 0; i < 150; i++) w150[i] = 1;
    chi_square(in_top, w50, 50, tiers[0]);
    chi_square(in_rest, w150, 150, tiers[1]);
    /* shuffled: the 40 most-picked parents hold about 80 % */
    qsort(cnt, 200, sizeof *cnt, cmp_double);
    double hi = 0;
    for (int i = 160; i < 200; i++) hi += cnt[i];
    assert_true(hi > 0.77 * n && hi < 0.85 * n);
    int used = 0;
    for (int i = 0; i < 200; i++)
        if (scnt[i]) {
            used++;
            assert_true(scnt[i] == n / 10); /* 20000 rows over 10 parents, in turn */
        }
    assert_int_equal(used, 10);
    free(pw), free(tt), free(sh), free(sm);
    close_opened(&o);
}

/* scd2: each entity's versions number 1..k, tile the range (valid_to = the
 * next version's valid_from), stay min_gap_days apart, one current; the
 * jitter inside each slot is uniform (chi-square over 4 bins). */
static void test_scd2(void **state)
{
    (void)state;
    opened o = open_text(schema("", 400,
        "\"pid\":{\"name\":\"pid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\"}},"
        "\"vf\":{\"name\":\"vf\",\"type\":\"date\",\"generator\":{\"strategy\":\"scd2\",\"role\":\"valid_from\",\"business_key\":\"pid\",\"min_gap_days\":30,\"range\":{\"start\":\"2020-01-01\",\"end\":\"2029-12-31\"}}},"
        "\"vt\":{\"name\":\"vt\",\"type\":\"date\",\"generator\":{\"strategy\":\"scd2\",\"role\":\"end_date\",\"business_key\":\"pid\",\"min_gap_days\":30,\"range\":{\"start\":\"2020-01-01\",\"end\":\"2029-12-31\"}}},"
        "\"cur\":{\"name\":\"cur\",\"type\":\"boolean\",\"generator\":{\"strategy\":\"scd2\",\"role\":\"is_current\",\"business_key\":\"pid\"}},"
        "\"ver\":{\"name\":\"ver\",\"type\":\"integer\",\"generator\":{\"strategy\":\"scd2\",\"role\":\"version\",\"business_key\":\"pid\"}}",
        2400));
    uint64_t n;
    double *pid = column(&o, "t", "pid", &n), *vf = column(&o, "t", "vf", &n), *vt = column(&o, "t", "vt", &n);
    double *cur = column(&o, "t", "cur", &n), *ver = column(&o, "t", "ver", &n);
    const double day = 86400e9, d0 = 18262; /* 2020-01-01 */
    double bins[4] = {0};
    for (uint64_t i = 0; i < n; i++) {
        int last = i + 1 == n || pid[i + 1] != pid[i]; /* the first allocated key: an entity's rows are consecutive */
        if (i == 0 || pid[i - 1] != pid[i]) {
            assert_int_equal((int)ver[i], 1);
            assert_true(vf[i] == d0 * day);
        } else
            assert_int_equal((int)ver[i], (int)ver[i - 1] + 1);
        assert_int_equal((int)cur[i], last);
        if (last) {
            assert_true(vt[i] != vt[i]); /* null */
            continue;
        }
        assert_true(vt[i] == vf[i + 1]);
        assert_true(vt[i] - vf[i] >= 30 * day);
        /* the next version's slot position: (start - d0) / L - v in [-0.5, 0.5) scaled by the jitter */
        uint64_t k = i + 1;
        while (k + 1 < n && pid[k + 1] == pid[i]) k++;
        double versions = ver[k], L = 3653.0 / versions, amp = L - 31, v = ver[i + 1] - 1;
        double x = (vf[i + 1] / day - d0 - v * L) / amp + 0.5;
        assert_true(x > -0.01 && x < 1.01);
        bins[x < 0.25 ? 0 : x < 0.5 ? 1 : x < 0.75 ? 2 : 3]++;
    }
    double tot = bins[0] + bins[1] + bins[2] + bins[3];
    chi_square(bins, (const double[]){1, 1, 1, 1}, 4, tot);
    free(pid), free(vf), free(vt), free(cur), free(ver);
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
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\"}}", 5),
            "table 't', column 'x': address needs 'field'");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"empirical\",\"quantiles\":{\"p10\":5,\"p50\":4}}}", 5),
            "table 't', column 'x': quantiles must not decrease: p50 (4) is below p10 (5)");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"empirical\",\"quantiles\":{\"q10\":5}}}", 5),
            "table 't', column 'x': quantile key 'q10' must be p1 .. p99");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"conditional_table\",\"source_column\":\"tid\",\"table\":{\"1\":{\"a\":0}}}}", 5),
            "table 't', column 'x': weights sum to 0");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"conditional_table\",\"source_column\":\"nope\",\"table\":{\"1\":{\"a\":1}}}}", 5),
            "table 't', column 'x': 'source_column' names no column 'nope'");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"fan_out\":{\"top_share\":1.5}}}", 5),
            "table 't', column 'x': fan_out top_share must be in (0, 1)");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"sample_rate\":0}}", 5),
            "table 't', column 'x': sample_rate must be a number in (0, 1]");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"sample_rate\":0.5,\"filter\":\"id = '1'\"}}", 5),
            "table 't', column 'x': foreign_key 'filter' is not supported");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"integer\",\"generator\":{\"strategy\":\"composite_fk_field\",\"source\":\"tid\",\"field\":\"id\"}}", 5),
            "table 't', column 'x': composite_fk_field 'source' must be a foreign_key");
    refused(schema("", 1, "\"k\":{\"name\":\"k\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\"}},"
                          "\"x\":{\"name\":\"x\",\"type\":\"integer\",\"generator\":{\"strategy\":\"composite_fk_field\",\"source\":\"k\",\"field\":\"nope\"}}", 5),
            "table 't', column 'x': composite_fk_field names missing column 'p.nope'");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"date\",\"generator\":{\"strategy\":\"scd2\",\"role\":\"valid_from\",\"business_key\":\"tid\"}}", 5),
            "table 't', column 'x': scd2 business_key 'tid' must be a foreign_key column");
    refused(schema("", 1, "\"x\":{\"name\":\"x\",\"type\":\"date\",\"generator\":{\"strategy\":\"scd2\",\"role\":\"middle\",\"business_key\":\"tid\"}}", 5),
            "table 't', column 'x': scd2 needs 'role'");
    refused(schema("", 1, "\"k\":{\"name\":\"k\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\"}},"
                          "\"x\":{\"name\":\"x\",\"type\":\"date\",\"generator\":{\"strategy\":\"scd2\",\"role\":\"valid_from\",\"business_key\":\"k\",\"min_gap_days\":400}}", 50),
            "table 't', column 'x': an entity of 'k' can have up to");
    refused(schema("", 1, "\"k\":{\"name\":\"k\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"p.id\",\"sample_rate\":0.5}},"
                          "\"x\":{\"name\":\"x\",\"type\":\"boolean\",\"generator\":{\"strategy\":\"first_per_parent\",\"parent_column\":\"k\"}}", 5),
            "table 't', column 'k': fan_out and sample_rate cannot be used on a key whose children are counted");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_continuous_distributions),
        cmocka_unit_test(test_formula_arithmetic),
        cmocka_unit_test(test_formula_fused),
        cmocka_unit_test(test_categorical_and_nulls),
        cmocka_unit_test(test_more_distributions),
        cmocka_unit_test(test_hierarchy),
        cmocka_unit_test(test_seasonal_weekdays),
        cmocka_unit_test(test_foreign_keys),
        cmocka_unit_test(test_total_over_children_reading_their_parent),
        cmocka_unit_test(test_instant_after_parent),
        cmocka_unit_test(test_rows_are_positions),
        cmocka_unit_test(test_native_formats),
        cmocka_unit_test(test_empirical),
        cmocka_unit_test(test_conditional_table_and_composite),
        cmocka_unit_test(test_fan_out_and_sample),
        cmocka_unit_test(test_scd2),
        cmocka_unit_test(test_total_over_children_reading_a_parent_number),
        cmocka_unit_test(test_cap_by_partial_total),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

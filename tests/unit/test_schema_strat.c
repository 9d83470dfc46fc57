/* test_schema_strat.c — the generation-schema strategies of
 * src/generate/schema/schema_strat.c: hierarchy / hierarchy_field (a walk of
 * a dataset's levels, chi-square per weighting), bootstrap (records drawn
 * uniformly and shared by the table's columns, the jitter's law), address
 * (scope weights, exclude, the coordinates of the place), the copula of
 * correlated_columns (Spearman's rho of each pair against 6/pi asin(r/2),
 * the marginals unchanged by KS), `constraint` rules over every row, self
 * references to earlier rows, and one refusal per bad parameter.
 * Datasets: tests/data/domains/{tree,people,places}.json. */
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

#define N 10000
#define NAN (__builtin_nan(""))
#define fabs __builtin_fabs
#define sqrt shape_gen_sqrt
#define exp shape_gen_exp

static char doc[16384];
static char dir[1024];

/* One table `t` of `rows` rows: tid (sequence from 1) and `cols`; `extra`
 * is more top-level keys (",\"correlated_columns\":..."). */
static const char *schema(const char *cols, uint64_t rows, const char *extra)
{
    snprintf(doc, sizeof doc,
             "{\"schema_version\":1,\"model\":{\"name\":\"u\",\"seed\":9},"
             "\"tables\":{\"t\":{\"name\":\"t\",\"primary_key\":[\"tid\"],\"columns\":{"
             "\"tid\":{\"name\":\"tid\",\"type\":\"integer\",\"generator\":{\"strategy\":\"sequence\"}}%s%s}}},"
             "\"generation\":{\"scale\":\"s\",\"scales\":{\"s\":{\"t\":%llu}}}%s}",
             cols[0] ? "," : "", cols, (unsigned long long)rows, extra ? extra : "");
    return doc;
}

typedef struct opened {
    const shape_domain_type *type;
    shape_domain *d;
    shape_domain_cursor *cur;
    int t;
} opened;

static const char *data_dir(void)
{
    const char *src = getenv("SHAPE_SOURCE_DIR");
    snprintf(dir, sizeof dir, "%s/tests/data/domains", src ? src : ".");
    return dir;
}

static opened open_text(const char *text)
{
    opened o = {0};
    shape_err err;
    int rc = shape_schema_domain_parse(text, strlen(text), data_dir(), &o.type, &err);
    if (rc != SHAPE_OK) fprintf(stderr, "%s\n", err.message);
    assert_int_equal(rc, SHAPE_OK);
    assert_int_equal(shape_domain_open(o.type, NULL, o.type->default_seed, &o.d, &err), SHAPE_OK);
    o.t = shape_domain_table_find(o.d, "t");
    assert_int_equal(shape_domain_cursor_open(o.d, (size_t)o.t, &o.cur, &err), SHAPE_OK);
    return o;
}

static void close_opened(opened *o)
{
    shape_domain_cursor_free(o->cur);
    shape_domain_free(o->d);
    shape_schema_domain_free(o->type);
}

static int col(opened *o, const char *name)
{
    int c = shape_domain_column_find(o->d, (size_t)o->t, name);
    assert_true(c >= 0);
    return c;
}

static shape_gen_row row;

static const shape_gen_row *at(opened *o, uint64_t r)
{
    shape_err err;
    assert_int_equal(shape_domain_cursor_row(o->cur, r, &row, &err), SHAPE_OK);
    return &row;
}

static double num(const shape_gen_value *v)
{
    return v->kind == SHAPE_GEN_NULL ? NAN : v->kind == SHAPE_GEN_FLOAT64 ? v->v.f : v->kind == SHAPE_GEN_BOOL ? v->v.b : (double)v->v.i;
}

static int text_is(const shape_gen_value *v, const char *s)
{
    return v->kind == SHAPE_GEN_STRING && v->len == strlen(s) && memcmp(v->v.s, s, v->len) == 0;
}

/* ---- hierarchy -------------------------------------------------------------------- */

/* tree.json: N > {X: x1 x2 x3, Y: y1}, S > {Z: z1 z2, W: w1 w2 w3 w4}; code = record number. */
static const char *const CITIES[10] = {"x1", "x2", "x3", "y1", "z1", "z2", "w1", "w2", "w3", "w4"};
static const char *const REGION[10] = {"N", "N", "N", "N", "S", "S", "S", "S", "S", "S"};
static const char *const COUNTRY[10] = {"X", "X", "X", "Y", "Z", "Z", "W", "W", "W", "W"};

static void hierarchy_case(const char *options, const double *want_city)
{
    char cols[2048];
    snprintf(cols, sizeof cols,
             "\"region\":{\"name\":\"region\",\"type\":\"string\",\"generator\":{\"strategy\":\"hierarchy\",\"dataset\":\"tree\","
             "\"field\":\"region\",\"levels\":[\"region\",\"country\",\"city\"]%s}},"
             "\"country\":{\"name\":\"country\",\"type\":\"string\",\"generator\":{\"strategy\":\"hierarchy_field\",\"dataset\":\"tree\",\"field\":\"country\"}},"
             "\"city\":{\"name\":\"city\",\"type\":\"string\",\"generator\":{\"strategy\":\"hierarchy_field\",\"dataset\":\"tree\",\"field\":\"city\"}},"
             "\"code\":{\"name\":\"code\",\"type\":\"integer\",\"generator\":{\"strategy\":\"hierarchy_field\",\"dataset\":\"tree\",\"field\":\"code\"}}",
             options);
    opened o = open_text(schema(cols, N, NULL));
    int cr = col(&o, "region"), cc = col(&o, "country"), ci = col(&o, "city"), cd = col(&o, "code");
    double obs[10] = {0};
    for (uint64_t r = 0; r < N; r++) {
        const shape_gen_row *x = at(&o, r);
        int k = (int)x->values[cd].v.i - 1;
        assert_true(k >= 0 && k < 10);
        /* the rule over every row: the row's fields are one record of the dataset */
        assert_true(text_is(&x->values[ci], CITIES[k]));
        assert_true(text_is(&x->values[cc], COUNTRY[k]));
        assert_true(text_is(&x->values[cr], REGION[k]));
        obs[k]++;
    }
    chi_square(obs, want_city, 10, N);
    close_opened(&o);
}

static void test_hierarchy(void **state)
{
    (void)state;
    /* records: every record equally likely */
    hierarchy_case("", (const double[]){1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
    /* uniform: every child of a node equally likely: N, S 1/2; X, Y 1/4; Z, W 1/4 */
    hierarchy_case(",\"weighting\":\"uniform\"",
                   (const double[]){1.0 / 12, 1.0 / 12, 1.0 / 12, 1.0 / 4, 1.0 / 8, 1.0 / 8, 1.0 / 16, 1.0 / 16, 1.0 / 16, 1.0 / 16});
    /* top_weights replace the top level's: S three times N; the rest by records */
    hierarchy_case(",\"top_weights\":{\"S\":3,\"N\":1}",
                   (const double[]){1.0 / 16, 1.0 / 16, 1.0 / 16, 1.0 / 16, 1.5 / 12, 1.5 / 12, 1.5 / 12, 1.5 / 12, 1.5 / 12, 1.5 / 12});
}

/* ---- bootstrap -------------------------------------------------------------------- */

static double normal_cdf(double x) { return 0.5 * (1 + erf_approx(x / 1.4142135623730951)); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Kolmogorov-Smirnov distance of values already mapped through their CDF from U(0, 1). */
static double ks_unit(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double f = v[i], lo = f - (double)i / n, hi = (double)(i + 1) / n - f;
        if (lo > d) d = lo;
        if (hi > d) d = hi;
    }
    return d;
}

static double ks_normal(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double f = normal_cdf(v[i]), lo = f - (double)i / n, hi = (double)(i + 1) / n - f;
        if (lo > d) d = lo;
        if (hi > d) d = hi;
    }
    return d;
}

static void test_bootstrap(void **state)
{
    (void)state;
    /* the dataset, read here independently */
    char path[1200];
    snprintf(path, sizeof path, "%s/people.json", data_dir());
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    int age[50];
    double income[50], sum = 0, sq = 0;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, fp) && n < 50) {
        int i, a;
        double inc;
        if (sscanf(line, " {\"name\": \"p%d\", \"age\": %d, \"income\": %lf", &i, &a, &inc) == 3) {
            assert_int_equal(i, n);
            age[n] = a, income[n] = inc, sum += inc, sq += inc * inc, n++;
        }
    }
    fclose(fp);
    assert_int_equal(n, 50);
    double sd = sqrt((sq - sum * sum / 50) / 49);
    opened o = open_text(schema(
        "\"name\":{\"name\":\"name\",\"type\":\"string\",\"generator\":{\"strategy\":\"bootstrap\",\"dataset\":\"people\",\"field\":\"name\"}},"
        "\"age\":{\"name\":\"age\",\"type\":\"integer\",\"generator\":{\"strategy\":\"bootstrap\",\"dataset\":\"people\",\"field\":\"age\",\"jitter\":0}},"
        "\"income\":{\"name\":\"income\",\"type\":\"float\",\"generator\":{\"strategy\":\"bootstrap\",\"dataset\":\"people\",\"field\":\"income\",\"jitter\":0.1}}",
        N, NULL));
    int cn = col(&o, "name"), ca = col(&o, "age"), cinc = col(&o, "income");
    double obs[50] = {0}, *noise = malloc(N * sizeof *noise);
    for (uint64_t r = 0; r < N; r++) {
        const shape_gen_row *x = at(&o, r);
        assert_int_equal(x->values[cn].kind, SHAPE_GEN_STRING);
        int k = atoi(x->values[cn].v.s + 1);
        assert_true(k >= 0 && k < 50);
        obs[k]++;
        /* one source record per row: the unjittered field is that record's */
        assert_int_equal(x->values[ca].v.i, age[k]);
        noise[r] = (x->values[cinc].v.f - income[k]) / (0.1 * sd);
    }
    double w[50];
    for (int i = 0; i < 50; i++) w[i] = 1;
    chi_square(obs, w, 50, N);
    /* the jitter: N(0, (jitter * sd)^2) */
    double d = ks_normal(noise, N);
    if (d > 1.95 / sqrt(N)) fprintf(stderr, "KS %.4f\n", d);
    assert_true(d < 1.95 / sqrt(N));
    free(noise);
    close_opened(&o);
}

/* ---- address ---------------------------------------------------------------------- */

static void test_address(void **state)
{
    (void)state;
    /* places.json: AA: Ca 1 2, Cb 3 4, Cc 5 6; BB: Cx 7 8, Cy 9 10; DD: Cz 11 12 (postal codes);
     * latitude 10 + k, longitude -100 - k */
    const char *spec = "\"scope\":[\"AA\",{\"city\":\"Cx\",\"state\":\"BB\"}],\"weights\":[1,3],\"exclude\":[\"00003\"],"
                       "\"reference\":{\"dataset\":\"places\"}";
    char cols[4096];
    snprintf(cols, sizeof cols,
             "\"zip\":{\"name\":\"zip\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\",\"field\":\"postal_code\",%s}},"
             "\"city\":{\"name\":\"city\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\",\"field\":\"city\",%s}},"
             "\"state\":{\"name\":\"state\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\",\"field\":\"state\",%s}},"
             "\"county\":{\"name\":\"county\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\",\"field\":\"county\",%s}},"
             "\"lat\":{\"name\":\"lat\",\"type\":\"float\",\"generator\":{\"strategy\":\"address\",\"field\":\"latitude\",%s}},"
             "\"lng\":{\"name\":\"lng\",\"type\":\"float\",\"generator\":{\"strategy\":\"address\",\"field\":\"longitude\",%s}},"
             "\"line\":{\"name\":\"line\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\",\"field\":\"address_line_1\",%s}},"
             "\"home_zip\":{\"name\":\"home_zip\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\",\"field\":\"postal_code\",\"group\":\"home\"}},"
             "\"home_state\":{\"name\":\"home_state\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\",\"field\":\"state\",\"group\":\"home\","
             "\"scope\":[\"WA\",\"OR\"],\"weights\":[1,2]}}",
             spec, spec, spec, spec, spec, spec, spec);
    /* the home group's columns must share their spec: the first has none */
    char bad[4096];
    snprintf(bad, sizeof bad, "%s", cols);
    shape_err err;
    const shape_domain_type *ty = NULL;
    const char *text = schema(bad, 10, NULL);
    assert_int_equal(shape_schema_domain_parse(text, strlen(text), data_dir(), &ty, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "column 'home_state': address columns of group 'home' must share scope"));
    /* now the home group as one spec */
    char *p = strstr(cols, ",\"group\":\"home\"}},");
    assert_non_null(p);
    char fixed[4096];
    snprintf(fixed, sizeof fixed, "%.*s,\"group\":\"home\",\"scope\":[\"WA\",\"OR\"],\"weights\":[1,2]}},%s", (int)(p - cols), cols,
             p + strlen(",\"group\":\"home\"}},"));
    opened o = open_text(schema(fixed, N, NULL));
    int cz = col(&o, "zip"), cc = col(&o, "city"), cs = col(&o, "state"), cy = col(&o, "county"), cla = col(&o, "lat"),
        clo = col(&o, "lng"), cl = col(&o, "line"), hz = col(&o, "home_zip"), hs = col(&o, "home_state");
    static const char *const city_of[13] = {"", "Ca", "Ca", "Cb", "Cb", "Cc", "Cc", "Cx", "Cx", "Cy", "Cy", "Cz", "Cz"};
    double obs[8] = {0}, home[2] = {0};
    for (uint64_t r = 0; r < N; r++) {
        const shape_gen_row *x = at(&o, r);
        int k = atoi(x->values[cz].v.s);
        assert_true(k >= 1 && k <= 12 && k != 3);
        assert_true(text_is(&x->values[cc], city_of[k]));
        assert_true(text_is(&x->values[cs], k <= 6 ? "AA" : k <= 10 ? "BB" : "DD"));
        char cty[32];
        snprintf(cty, sizeof cty, "%s County", city_of[k]);
        assert_true(text_is(&x->values[cy], cty));
        assert_true(fabs(x->values[cla].v.f - (10 + k)) <= 0.002 + 1e-9);
        assert_true(fabs(x->values[clo].v.f - (-100 - k)) <= 0.002 + 1e-9);
        assert_true(x->values[cl].kind == SHAPE_GEN_STRING && strstr(x->values[cl].v.s, " Main St") != NULL);
        assert_true(k <= 8);
        obs[k <= 2 ? k - 1 : k - 2]++; /* 1 2 4 5 6 7 8 -> 0..6 */
        /* the second group: the built-in places of WA and OR */
        const shape_gen_value *st = &x->values[hs];
        assert_true(text_is(st, "WA") || text_is(st, "OR"));
        home[text_is(st, "OR")]++;
        assert_int_equal(x->values[hz].len, 5);
    }
    /* AA (weight 1) over its 5 places left, Cx (weight 3) over 2 */
    chi_square(obs, (const double[]){0.05, 0.05, 0.05, 0.05, 0.05, 0.375, 0.375}, 7, N);
    chi_square(home, (const double[]){1, 2}, 2, N);
    close_opened(&o);

    /* no scope: every state of the built-in places, equally likely */
    opened u = open_text(schema("\"st\":{\"name\":\"st\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\",\"field\":\"state\"}}", N, NULL));
    char states[64][3];
    double cnt[64] = {0};
    int ns = 0, cst = col(&u, "st");
    for (uint64_t r = 0; r < N; r++) {
        const shape_gen_value *v = &at(&u, r)->values[cst];
        int i = 0;
        while (i < ns && memcmp(states[i], v->v.s, 2) != 0) i++;
        if (i == ns) memcpy(states[ns++], v->v.s, 2);
        cnt[i]++;
    }
    assert_true(ns > 40 && ns < 64);
    double w[64];
    for (int i = 0; i < ns; i++) w[i] = 1;
    chi_square(cnt, w, ns, N);
    close_opened(&u);
}

/* ---- the copula ------------------------------------------------------------------- */

static void ranks(const double *v, double *rk, size_t n)
{
    size_t *ix = malloc(n * sizeof *ix);
    for (size_t i = 0; i < n; i++) ix[i] = i;
    /* insertion of indices by value: a simple merge sort */
    size_t *tmp = malloc(n * sizeof *tmp);
    for (size_t w = 1; w < n; w *= 2)
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, k = lo;
            while (a < mid || b < hi) tmp[k++] = (b >= hi || (a < mid && v[ix[a]] <= v[ix[b]])) ? ix[a++] : ix[b++];
            memcpy(ix + lo, tmp + lo, (hi - lo) * sizeof *ix);
        }
    for (size_t i = 0; i < n; i++) rk[ix[i]] = (double)i;
    free(ix);
    free(tmp);
}

static double spearman(const double *a, const double *b, size_t n)
{
    double *ra = malloc(n * sizeof *ra), *rb = malloc(n * sizeof *rb), m = (n - 1) / 2.0, sab = 0, saa = 0, sbb = 0;
    ranks(a, ra, n);
    ranks(b, rb, n);
    for (size_t i = 0; i < n; i++) sab += (ra[i] - m) * (rb[i] - m), saa += (ra[i] - m) * (ra[i] - m), sbb += (rb[i] - m) * (rb[i] - m);
    free(ra);
    free(rb);
    return sab / sqrt(saa * sbb);
}

static const char *COPULA_COLS =
    "\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"normal\",\"mean\":0,\"std_dev\":1}},"
    "\"y\":{\"name\":\"y\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"min\":0,\"max\":10}},"
    "\"w\":{\"name\":\"w\",\"type\":\"float\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"exponential\",\"scale\":2}},"
    "\"e\":{\"name\":\"e\",\"type\":\"float\",\"generator\":{\"strategy\":\"empirical\",\"quantiles\":{\"p10\":1,\"p50\":5,\"p90\":6},\"min\":0,\"max\":9}},"
    "\"f\":{\"name\":\"f\",\"type\":\"float\",\"generator\":{\"strategy\":\"formula\",\"expression\":\"x * 2\"}}";

static void test_copula(void **state)
{
    (void)state;
    opened o = open_text(schema(COPULA_COLS, N, ",\"correlated_columns\":{\"t\":[[\"x\",\"y\",0.8],[\"x\",\"w\",-0.5],[\"y\",\"e\",0.3]]}"));
    int c[4] = {col(&o, "x"), col(&o, "y"), col(&o, "w"), col(&o, "f")};
    double *v[4];
    for (int k = 0; k < 4; k++) v[k] = malloc(N * sizeof *v[k]);
    for (uint64_t r = 0; r < N; r++) {
        const shape_gen_row *x = at(&o, r);
        for (int k = 0; k < 4; k++) v[k][r] = num(&x->values[c[k]]);
        assert_true(v[3][r] == 2 * v[0][r]); /* what reads a copula column sees its value */
    }
    /* the ranks of correlated normals: Spearman's rho = 6/pi asin(r/2) */
    double want_xy = 0.7859392826067277, want_xw = -0.4825837395309974; /* 6/pi asin(0.8/2), 6/pi asin(-0.5/2) */
    double xy = spearman(v[0], v[1], N), xw = spearman(v[0], v[2], N), yw = spearman(v[1], v[2], N);
    fprintf(stderr, "spearman xy %.3f (want %.3f), xw %.3f (want %.3f), yw %.3f (want 0)\n", xy, want_xy, xw, want_xw, yw);
    assert_true(fabs(xy - want_xy) < 0.03);
    assert_true(fabs(xw - want_xw) < 0.03);
    assert_true(fabs(yw) < 0.04);
    /* each column keeps its own distribution: through its CDF, uniform */
    double *u = malloc(N * sizeof *u);
    for (int k = 0; k < 3; k++) {
        for (uint64_t r = 0; r < N; r++)
            u[r] = k == 0 ? normal_cdf(v[0][r]) : k == 1 ? v[1][r] / 10 : 1 - exp(-v[2][r] / 2);
        double d = ks_unit(u, N);
        if (d > 1.95 / sqrt(N)) fprintf(stderr, "column %d: KS %.4f\n", k, d);
        assert_true(d < 1.95 / sqrt(N));
    }
    free(u);
    /* a pair below copula_threshold (0.5) does not count: e is what it is without the copula */
    int ce = col(&o, "e");
    double *e = malloc(N * sizeof *e);
    for (uint64_t r = 0; r < N; r++) e[r] = num(&at(&o, r)->values[ce]);
    close_opened(&o);
    opened plain = open_text(schema(COPULA_COLS, N, NULL));
    ce = col(&plain, "e");
    int cx = col(&plain, "x"), moved = 0;
    for (uint64_t r = 0; r < N; r++) {
        assert_true(num(&at(&plain, r)->values[ce]) == e[r]);
        moved += num(&row.values[cx]) != v[0][r];
    }
    assert_true(moved > N / 2); /* while x, in the copula, differs */
    close_opened(&plain);
    free(e);
    for (int k = 0; k < 4; k++) free(v[k]);
}

/* ---- constraint rules and self references ---------------------------------------------- */

static const char *CONSTRAINT_COLS =
    "\"a\":{\"name\":\"a\",\"type\":\"decimal\",\"scale\":2,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"min\":-10,\"max\":10}},"
    "\"b\":{\"name\":\"b\",\"type\":\"decimal\",\"scale\":2,\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"min\":-10,\"max\":10}},"
    "\"k\":{\"name\":\"k\",\"type\":\"integer\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"min\":-5,\"max\":5}},"
    "\"m\":{\"name\":\"m\",\"type\":\"integer\",\"generator\":{\"strategy\":\"distribution\",\"distribution\":\"uniform\",\"min\":0,\"max\":9}},"
    "\"s\":{\"name\":\"s\",\"type\":\"timestamp\",\"generator\":{\"strategy\":\"temporal\",\"start\":\"2024-01-01\",\"end\":\"2024-12-31\"}},"
    "\"e\":{\"name\":\"e\",\"type\":\"timestamp\",\"generator\":{\"strategy\":\"temporal\",\"start\":\"2024-01-01\",\"end\":\"2024-12-31\"}},"
    "\"boss\":{\"name\":\"boss\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"t.tid\"}}";

static void test_constraints_and_self_reference(void **state)
{
    (void)state;
    const char *rules = ",\"business_rules\":["
                        "{\"name\":\"a_pos\",\"type\":\"constraint\",\"table\":\"t\",\"rule\":\"a > 0\"},"
                        "{\"name\":\"b_le_a\",\"type\":\"constraint\",\"table\":\"t\",\"rule\":\"b <= a\"},"
                        "{\"name\":\"k_lt\",\"type\":\"constraint\",\"table\":\"t\",\"rule\":\"k < -2\"},"
                        "{\"name\":\"m_is\",\"type\":\"constraint\",\"table\":\"t\",\"rule\":\"m == 7\"},"
                        "{\"name\":\"e_after\",\"type\":\"constraint\",\"table\":\"t\",\"rule\":\"e >= s\"}]";
    opened o = open_text(schema(CONSTRAINT_COLS, N, rules));
    opened p = open_text(schema(CONSTRAINT_COLS, N, NULL));
    int ca = col(&o, "a"), cb = col(&o, "b"), ck = col(&o, "k"), cm = col(&o, "m"), cs = col(&o, "s"), ce = col(&o, "e"),
        cboss = col(&o, "boss");
    uint64_t kept = 0, fixed = 0;
    for (uint64_t r = 0; r < N; r++) {
        shape_gen_value x[8], y[8];
        memcpy(x, at(&o, r)->values, sizeof x);
        memcpy(y, at(&p, r)->values, sizeof y);
        /* the rule over every row */
        assert_true(x[ca].v.f > 0);
        assert_true(x[cb].v.f <= x[ca].v.f);
        assert_true(x[ck].v.i < -2);
        assert_int_equal(x[cm].v.i, 7);
        assert_true(x[ce].v.i >= x[cs].v.i);
        /* a value that kept its rule is left as it was */
        if (y[ca].v.f > 0) assert_true(x[ca].v.f == y[ca].v.f), kept++;
        else fixed++;
        if (y[ck].v.i < -2) assert_int_equal(x[ck].v.i, y[ck].v.i);
        /* the scale is kept */
        assert_true(fabs(x[ca].v.f * 100 - (double)(int64_t)(x[ca].v.f * 100 + (x[ca].v.f > 0 ? 0.5 : -0.5))) < 1e-6);
        /* a self reference: an earlier row (tid is 1-based), row 0 the root */
        if (r == 0) assert_int_equal(x[cboss].kind, SHAPE_GEN_NULL);
        else assert_true(x[cboss].v.i >= 1 && (uint64_t)x[cboss].v.i < r + 1);
    }
    assert_true(kept > N / 3 && fixed > N / 3);
    close_opened(&o);
    close_opened(&p);
}

/* ---- refusals: one line naming table, column and what to change ------------------------- */

static void refused(const char *text, const char *want)
{
    shape_err err;
    const shape_domain_type *t = NULL;
    int rc = shape_schema_domain_parse(text, strlen(text), data_dir(), &t, &err);
    if (rc != SHAPE_EINVAL) fprintf(stderr, "accepted (%d), want: %s\n", rc, want);
    assert_int_equal(rc, SHAPE_EINVAL);
    assert_null(t);
    if (!strstr(err.message, want)) fprintf(stderr, "got: %s\nwant: %s\n", err.message, want);
    assert_non_null(strstr(err.message, want));
    assert_null(strchr(err.message, '\n'));
}

#define H(g) "\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"hierarchy\",\"dataset\":\"tree\",\"field\":\"region\"" g "}}"
#define A(g) "\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"address\"" g "}}"

static void test_refusals(void **state)
{
    (void)state;
    refused(schema(H(""), 5, NULL), "table 't', column 'x': hierarchy needs 'levels'");
    refused(schema(H(",\"levels\":[\"region\",\"planet\"]"), 5, NULL), "table 't', column 'x': dataset 'tree' records have no field 'planet'");
    refused(schema(H(",\"levels\":[\"region\",\"region\"]"), 5, NULL), "hierarchy level 'region' is given twice");
    refused(schema(H(",\"levels\":[\"region\"],\"weighting\":\"rows\""), 5, NULL), "hierarchy 'weighting' must be records or uniform");
    refused(schema(H(",\"levels\":[\"region\"],\"top_weights\":{\"E\":1}"), 5, NULL),
            "hierarchy top_weights give no value of the dataset's 'region' field a positive weight");
    refused(schema(H(",\"levels\":[\"region\"],\"top_weights\":{\"N\":-1}"), 5, NULL), "hierarchy top_weights of 'N' must be a number >= 0");
    refused(schema(H(",\"levels\":[\"region\"],\"depth\":2"), 5, NULL), "unknown parameter of hierarchy 'depth'");
    refused(schema("\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"hierarchy\",\"dataset\":\"nosuch\",\"field\":\"a\",\"levels\":[\"a\"]}}", 5, NULL),
            "table 't', column 'x': dataset 'nosuch' not found");
    refused(schema("\"x\":{\"name\":\"x\",\"type\":\"string\",\"generator\":{\"strategy\":\"hierarchy_field\",\"dataset\":\"tree\",\"field\":\"city\"}}", 5, NULL),
            "table 't', column 'x': hierarchy_field needs a hierarchy column of dataset 'tree'");
    refused(schema("\"x\":{\"name\":\"x\",\"type\":\"integer\",\"generator\":{\"strategy\":\"hierarchy_field\",\"dataset\":\"tree\",\"field\":\"city\"}}", 5, NULL),
            "strategy hierarchy_field produces string values, not integer");
    refused(schema("\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"bootstrap\",\"dataset\":\"people\",\"field\":\"income\",\"jitter\":-1}}", 5, NULL),
            "table 't', column 'x': bootstrap 'jitter' must be a number 0..100");
    refused(schema("\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"bootstrap\",\"dataset\":\"people\",\"field\":\"salary\"}}", 5, NULL),
            "table 't', column 'x': dataset 'people' records have no field 'salary'");
    refused(schema("\"x\":{\"name\":\"x\",\"type\":\"float\",\"generator\":{\"strategy\":\"bootstrap\",\"field\":\"income\"}}", 5, NULL),
            "table 't', column 'x': bootstrap needs 'dataset'");
    refused(schema(A(""), 5, NULL), "table 't', column 'x': address needs 'field'");
    refused(schema(A(",\"field\":\"planet\""), 5, NULL), "table 't', column 'x': unknown address field 'planet'");
    refused(schema(A(",\"field\":\"city\",\"scope\":[\"Washington\"]"), 5, NULL), "address scope entry 'Washington' does not parse");
    refused(schema(A(",\"field\":\"city\",\"scope\":[\"ZZ\"]"), 5, NULL), "address scope entry \"ZZ\" names no place of the reference");
    refused(schema(A(",\"field\":\"city\",\"scope\":[\"WA\",\"OR\"],\"weights\":[1]"), 5, NULL),
            "address 'weights' must be a list with one weight per scope entry");
    refused(schema(A(",\"field\":\"city\",\"scope\":[\"WA\"],\"weights\":[0]"), 5, NULL), "address weights sum to 0");
    refused(schema(A(",\"field\":\"county\""), 5, NULL), "address field county needs a reference dataset whose records have it");
    refused(schema(A(",\"field\":\"city\",\"mode\":\"exact\""), 5, NULL), "address 'mode' must be street_synthetic, geographic");
    refused(schema(A(",\"field\":\"city\",\"mode\":\"reference\""), 5, NULL), "address mode reference needs a reference dataset");
    refused(schema(A(",\"field\":\"city\",\"reference\":{\"dataset\":\"tree\"}"), 5, NULL),
            "address reference dataset 'tree' records need city, state, postal_code");
    refused(schema(A(",\"field\":\"city\",\"scope\":[{\"planet\":\"x\"}]"), 5, NULL), "address scope key 'planet' is not one of");
    /* the copula */
    refused(schema(COPULA_COLS, 5, ",\"correlated_columns\":{\"q\":[[\"x\",\"y\",0.8]]}"), "table 'q': correlated_columns names a missing table");
    refused(schema(COPULA_COLS, 5, ",\"correlated_columns\":{\"t\":[[\"x\",\"nope\",0.8]]}"),
            "table 't', column 'nope': correlated_columns names no column 'nope' of this table");
    refused(schema(COPULA_COLS, 5, ",\"correlated_columns\":{\"t\":[[\"x\",\"y\",1.5]]}"), "table 't': correlated_columns [x, y]: r 1.5 is outside [-1, 1]");
    refused(schema(COPULA_COLS, 5, ",\"correlated_columns\":{\"t\":[[\"x\",\"x\",0.8]]}"), "correlated_columns [x, x] pairs a column with itself");
    refused(schema(COPULA_COLS, 5, ",\"correlated_columns\":{\"t\":[[\"x\",\"f\",0.8]]}"),
            "table 't', column 'f': correlated_columns: the copula drives distribution (not zipf) and empirical columns");
    refused(schema(COPULA_COLS, 5, ",\"correlated_columns\":{\"t\":[[\"x\",\"y\",0.9],[\"x\",\"w\",0.9],[\"y\",\"w\",-0.9]]}"),
            "table 't': correlated_columns: these correlations cannot hold together");
    refused(schema(COPULA_COLS, 5, ",\"correlated_columns\":{\"t\":[[\"x\",\"y\"]]}"), "correlated_columns entry 1 must be [column, column, r]");
    {
        char text[sizeof doc + 64], *g;
        snprintf(text, sizeof text, "%s", schema(COPULA_COLS, 5, NULL));
        g = strstr(text, "\"generation\":{") + strlen("\"generation\":{");
        memmove(g + 34, g, strlen(g) + 1);
        memcpy(g, "\"output\":{\"copula_nulls\":\"drop\"}, ", 34);
        refused(text, "generation.output.copula_nulls must be skip or rank");
    }
    /* constraints */
    refused(schema(CONSTRAINT_COLS, 5, ",\"business_rules\":[{\"name\":\"r\",\"type\":\"constraint\",\"table\":\"t\",\"rule\":\"m == 2.5\"}]"),
            "business rule 'r': integer column 'm' can never equal 2.5");
    refused(schema(CONSTRAINT_COLS, 5, ",\"business_rules\":[{\"name\":\"r\",\"type\":\"constraint\",\"table\":\"t\",\"rule\":\"e < a\"}]"),
            "business rule 'r': compares timestamp with float");
    refused(schema(CONSTRAINT_COLS, 5, ",\"business_rules\":[{\"name\":\"r\",\"type\":\"constraint\",\"table\":\"t\",\"rule\":\"a < nope\"}]"),
            "business rule 'r': 't' has no column 'nope'");
    /* a self reference draws among the earlier rows */
    refused(schema("\"boss\":{\"name\":\"boss\",\"type\":\"integer\",\"generator\":{\"strategy\":\"foreign_key\",\"ref\":\"t.tid\",\"fan_out\":{}}}", 5, NULL),
            "table 't', column 'boss': a self reference draws its parent uniformly among the earlier rows");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hierarchy),
        cmocka_unit_test(test_bootstrap),
        cmocka_unit_test(test_address),
        cmocka_unit_test(test_copula),
        cmocka_unit_test(test_constraints_and_self_reference),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

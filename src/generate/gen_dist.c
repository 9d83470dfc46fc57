/* gen_dist.c — sampling strategies on top of the counter-based random source.
 *
 * Why: the domains describe columns as distributions (weighted enums, Zipf
 * and Pareto foreign keys, log-normal prices, geometric quantities); each
 * must turn one row-addressed draw (rarely a few) into a value, with no state.
 * How: inversion wherever a closed form exists (normal by Acklam's rational
 * approximation, geometric, Lomax, small Poisson), Walker/Vose alias tables
 * for enums (built once, one draw per value), and Hörmann–Derflinger
 * rejection-inversion for Zipf (O(1) for any number of ranks, so even the
 * 500,000 products of `xxxl` need no table). Rejection loops take their
 * extra uniforms from consecutive draw indices of the same row, so they stay
 * pure functions of the row.
 */
#include "shape/generate.h"

/* ---- alias method ------------------------------------------------------ */

/* Vose's construction into caller arrays of n entries; weights checked by
 * the caller (non-negative, positive sum). */
static void alias_build(const double *weights, size_t n, double sum, uint64_t *keep,
                        uint32_t *alias)
{
    double p[SHAPE_GEN_ZIPF_HEAD + 1 > SHAPE_GEN_ALIAS_MAX ? SHAPE_GEN_ZIPF_HEAD + 1
                                                           : SHAPE_GEN_ALIAS_MAX];
    uint32_t small[sizeof p / sizeof p[0]], large[sizeof p / sizeof p[0]];
    size_t ns = 0, nl = 0;
    for (size_t i = 0; i < n; i++) {
        p[i] = weights[i] * (double)n / sum;
        if (p[i] < 1.0)
            small[ns++] = (uint32_t)i;
        else
            large[nl++] = (uint32_t)i;
    }
    while (ns > 0 && nl > 0) {
        uint32_t s = small[--ns], l = large[--nl];
        keep[s] = (uint64_t)(p[s] * 18446744073709551616.0);
        alias[s] = l;
        p[l] = (p[l] + p[s]) - 1.0;
        if (p[l] < 1.0)
            small[ns++] = l;
        else
            large[nl++] = l;
    }
    /* What is left is (up to rounding) exactly 1: always keep. */
    while (nl > 0) {
        uint32_t l = large[--nl];
        keep[l] = UINT64_MAX;
        alias[l] = l;
    }
    while (ns > 0) {
        uint32_t s = small[--ns];
        keep[s] = UINT64_MAX;
        alias[s] = s;
    }
}

int shape_gen_alias_init(shape_gen_alias *a, const double *weights, size_t n, shape_err *err)
{
    if (n == 0 || n > SHAPE_GEN_ALIAS_MAX)
        return shape_err_set(err, SHAPE_EINVAL, "weighted enum needs 1..%d weights, got %zu",
                             SHAPE_GEN_ALIAS_MAX, n);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!(weights[i] >= 0.0))
            return shape_err_set(err, SHAPE_EINVAL, "weighted enum weight %zu is negative", i);
        sum += weights[i];
    }
    if (!(sum > 0.0)) return shape_err_set(err, SHAPE_EINVAL, "weighted enum weights sum to 0");
    a->n = (uint32_t)n;
    alias_build(weights, n, sum, a->keep, a->alias);
    return SHAPE_OK;
}

/* ---- normal and friends ------------------------------------------------ */

/* Acklam's rational approximation of the inverse standard normal CDF. */
static double inverse_normal(double p)
{
    static const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                -2.759285104469687e+02, 1.383577518672690e+02,
                                -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                -1.556989798598866e+02, 6.680131188771972e+01,
                                -1.328068155288572e+01};
    static const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                -2.400758277161838e+00, -2.549732539343734e+00,
                                4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01,
                                2.445134137142996e+00, 3.754408661907416e+00};
    const double plow = 0.02425, phigh = 1.0 - 0.02425;
    if (p < plow) {
        double q = shape_gen_sqrt(-2.0 * shape_gen_log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    if (p > phigh) {
        double q = shape_gen_sqrt(-2.0 * shape_gen_log(1.0 - p));
        return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
    }
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

double shape_gen_normal(shape_gen_stream s, uint64_t row, uint32_t i)
{
    /* (k + 0.5) / 2^53: strictly inside (0, 1), symmetric around 1/2. */
    double p = ((double)(shape_gen_u64(s, row, i) >> 11) + 0.5) * 0x1.0p-53;
    return inverse_normal(p);
}

static double clip(double x, double lo, double hi)
{
    if (x < lo) return lo;
    if (x > hi) return hi;
    return x;
}

double shape_gen_lognormal(shape_gen_stream s, uint64_t row, uint32_t i, double mu, double sigma,
                           double lo, double hi)
{
    return clip(shape_gen_exp(mu + sigma * shape_gen_normal(s, row, i)), lo, hi);
}

int64_t shape_gen_geometric(shape_gen_stream s, uint64_t row, uint32_t i, double p, int64_t lo,
                            int64_t hi)
{
    int64_t k = 1;
    if (p < 1.0) {
        double u = shape_gen_unit(s, row, i);               /* [0, 1) */
        double t = shape_gen_log1p(-u) / shape_gen_log1p(-p); /* >= 0 */
        k = t < 1e18 ? 1 + (int64_t)t : INT64_MAX;
    }
    if (k < lo) k = lo;
    if (k > hi) k = hi;
    return k;
}

int64_t shape_gen_poisson(shape_gen_stream s, uint64_t row, uint32_t i, double lambda, int64_t lo,
                          int64_t hi)
{
    int64_t k = 0;
    if (lambda > 64.0) {
        double x = lambda + shape_gen_sqrt(lambda) * shape_gen_normal(s, row, i);
        k = x < 0 ? 0 : (int64_t)(x + 0.5);
    } else if (lambda > 0.0) {
        double u = shape_gen_unit(s, row, i);
        double pmf = shape_gen_exp(-lambda), cdf = pmf;
        int64_t limit = (int64_t)(lambda + 20.0 * shape_gen_sqrt(lambda) + 30.0);
        while (u >= cdf && k < limit) {
            k++;
            pmf *= lambda / (double)k;
            cdf += pmf;
        }
    }
    if (k < lo) k = lo;
    if (k > hi) k = hi;
    return k;
}

uint64_t shape_gen_pareto_rank(shape_gen_stream s, uint64_t row, uint32_t i, double alpha,
                               double cut, uint64_t n)
{
    if (n <= 1) return 0;
    /* Lomax inverse CDF: x = (1 - u)^(-1/alpha) - 1, u restricted to [0, cut). */
    double u = shape_gen_unit(s, row, i) * cut;
    double x = shape_gen_expm1(-shape_gen_log1p(-u) / alpha);
    double xmax = shape_gen_expm1(-shape_gen_log1p(-cut) / alpha);
    double r = x / xmax * (double)n;
    uint64_t k = r < 0 ? 0 : (uint64_t)r;
    return k >= n ? n - 1 : k;
}

/* ---- Zipf by rejection-inversion (Hörmann & Derflinger 1996) ----------- */

/* log1p(x)/x and expm1(x)/x, continuous at 0. */
static double helper1(double x)
{
    if (x > 1e-8 || x < -1e-8) return shape_gen_log1p(x) / x;
    return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

static double helper2(double x)
{
    if (x > 1e-8 || x < -1e-8) return shape_gen_expm1(x) / x;
    return 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

/* h(x) = x^-e; H(x) = (x^(1-e) - 1) / (1 - e) (log x when e = 1), its inverse. */
static double zipf_h(double e, double x) { return shape_gen_exp(-e * shape_gen_log(x)); }

static double zipf_H(double e, double x)
{
    double lx = shape_gen_log(x);
    return helper2((1.0 - e) * lx) * lx;
}

static double zipf_H_inv(double e, double x)
{
    double t = x * (1.0 - e);
    if (t < -1.0) t = -1.0;
    return shape_gen_exp(helper1(t) * x);
}

/* sum of k^-e for k = a..b (2 <= a <= b): directly below 256, then by
 * Euler-Maclaurin (integral, end terms, first and third derivative terms;
 * relative error below 1e-12 from there on). */
static double zipf_sum(double e, double a, double b)
{
    double direct = 0.0;
    while (a <= b && a < 256.0) {
        direct += zipf_h(e, a);
        a += 1.0;
    }
    if (a > b) return direct;
    double integral = zipf_H(e, b) - zipf_H(e, a);
    double ends = 0.5 * (zipf_h(e, a) + zipf_h(e, b));
    /* first derivative -e x^(-e-1), third -e(e+1)(e+2) x^(-e-3) */
    double d1 = -e * (zipf_h(e, b) / b - zipf_h(e, a) / a);
    double d3 = -e * (e + 1) * (e + 2) * (zipf_h(e, b) / (b * b * b) - zipf_h(e, a) / (a * a * a));
    return direct + integral + ends + d1 / 12.0 - d3 / 720.0;
}

int shape_gen_zipf_init(shape_gen_zipf *z, uint64_t n, double exponent, shape_err *err)
{
    if (n == 0) return shape_err_set(err, SHAPE_EINVAL, "Zipf needs at least one rank");
    if (!(exponent > 0.0))
        return shape_err_set(err, SHAPE_EINVAL, "Zipf exponent must be positive, got %g", exponent);
    z->n = n;
    z->exponent = exponent;
    z->head = n < SHAPE_GEN_ZIPF_HEAD ? (uint32_t)n : SHAPE_GEN_ZIPF_HEAD;
    double w[SHAPE_GEN_ZIPF_HEAD + 1], sum = 0.0;
    for (uint32_t k = 0; k < z->head; k++) sum += (w[k] = zipf_h(exponent, (double)(k + 1)));
    w[z->head] = n > z->head ? zipf_sum(exponent, (double)z->head + 1.0, (double)n) : 0.0;
    sum += w[z->head];
    alias_build(w, z->head + 1, sum, z->keep, z->alias);
    /* Rejection-inversion over ranks head+1..n: u uniform between
     * H(head + 0.5) and H(n + 0.5), x = H^-1(u), k = round(x); the squeeze
     * k - x <= s accepts most draws without evaluating H again. */
    z->tail_lo = zipf_H(exponent, (double)z->head + 0.5);
    z->tail_hi = zipf_H(exponent, (double)n + 0.5);
    z->s = 2.0 - zipf_H_inv(exponent, zipf_H(exponent, 2.5) - zipf_h(exponent, 2.0));
    return SHAPE_OK;
}

uint64_t shape_gen_zipf_draw(const shape_gen_zipf *z, shape_gen_stream s, uint64_t row, uint32_t i)
{
    unsigned __int128 m = (unsigned __int128)shape_gen_u64(s, row, i) * (z->head + 1);
    uint32_t bucket = (uint32_t)(m >> 64);
    if ((uint64_t)m >= z->keep[bucket]) bucket = z->alias[bucket];
    if (bucket < z->head) return bucket + 1;
    double e = z->exponent;
    uint64_t lo = (uint64_t)z->head + 1;
    for (uint32_t attempt = 1; attempt <= 64; attempt++) {
        double u = z->tail_hi + shape_gen_unit(s, row, i + attempt) * (z->tail_lo - z->tail_hi);
        double x = zipf_H_inv(e, u);
        double kd = x + 0.5;
        uint64_t k = kd < (double)lo ? lo : (kd >= (double)z->n ? z->n : (uint64_t)kd);
        if ((double)k - x <= z->s || u >= zipf_H(e, (double)k + 0.5) - zipf_h(e, (double)k))
            return k;
    }
    return lo; /* probability of 64 rejections is below 1e-60 */
}

/* ---- count distributions for allocations ------------------------------- */

void shape_gen_poisson_counts(double *q, uint32_t kmax, double lambda)
{
    double pmf = shape_gen_exp(-lambda), sum = 0.0;
    for (uint32_t k = 0; k <= kmax; k++) {
        if (k > 0) pmf *= lambda / (double)k;
        q[k] = pmf;
        sum += pmf;
    }
    for (uint32_t k = 0; k <= kmax; k++) q[k] /= sum;
}

/* Add the distribution of min(cap, Poisson(lambda)), times w, to q. */
static void add_capped_poisson(double *q, uint32_t cap, double lambda, double w)
{
    if (lambda > 700.0) {
        q[cap] += w;
        return;
    }
    double pmf = shape_gen_exp(-lambda), below = 0.0;
    for (uint32_t k = 0; k < cap; k++) {
        if (k > 0) pmf *= lambda / (double)k;
        q[k] += w * pmf;
        below += pmf;
    }
    if (below < 1.0) q[cap] += w * (1.0 - below);
}

#define PARETO_GRID 128

/* E[min(cap, Poisson(lambda))]. */
static double capped_poisson_mean(double lambda, uint32_t cap)
{
    if (lambda > 700.0) return cap;
    double pmf = shape_gen_exp(-lambda), below = 0.0, m = 0.0;
    for (uint32_t k = 0; k < cap; k++) {
        if (k > 0) pmf *= lambda / (double)k;
        below += pmf;
        m += k * pmf;
    }
    return below < 1.0 ? m + cap * (1.0 - below) : m;
}

typedef struct pareto_grid {
    double lam[PARETO_GRID], wt[PARETO_GRID]; /* per rank cell: mean * density, df */
    double scale[SHAPE_GEN_TENURE_CELLS_MAX]; /* per tenure cell: 2 tau (1 without tenure) */
    uint32_t cells, cap;
} pareto_grid;

static double grid_mean(const pareto_grid *g, double extra)
{
    double m = 0.0;
    for (int i = 0; i < PARETO_GRID; i++)
        for (uint32_t j = 0; j < g->cells; j++)
            m += g->wt[i] * capped_poisson_mean(g->scale[j] * (g->lam[i] + extra), g->cap);
    return m / g->cells;
}

void shape_gen_pareto_counts(double *q, uint32_t cap, double mean, double alpha, double cut,
                             double *tenure_cdf, uint32_t cells)
{
    if (!tenure_cdf || cells == 0) cells = 1;
    if (cells > SHAPE_GEN_TENURE_CELLS_MAX) cells = SHAPE_GEN_TENURE_CELLS_MAX;
    for (uint32_t k = 0; k <= cap; k++) q[k] = 0.0;
    if (tenure_cdf) /* the prior (uniform tenure) until a count says more */
        for (uint32_t k = 0; k <= cap; k++)
            for (uint32_t j = 0; j < cells; j++) tenure_cdf[k * cells + j] = (double)(j + 1) / cells;
    if (!(mean > 0.0)) {
        q[0] = 1.0;
        return;
    }
    if (mean >= (double)cap) {
        q[cap] = 1.0;
        return;
    }
    /* Rank density over f in [0, 1): alpha xm (1 + xm f)^(-alpha-1) / cut,
     * integrated by the midpoint rule in y = ln(1 + xm f), which spreads the
     * grid evenly over the heavy head and the long tail. */
    pareto_grid g;
    g.cells = cells;
    g.cap = cap;
    double xm = shape_gen_expm1(-shape_gen_log1p(-cut) / alpha);
    double ymax = shape_gen_log1p(xm), dy = ymax / PARETO_GRID, wsum = 0.0;
    for (int i = 0; i < PARETO_GRID; i++) {
        double y = (i + 0.5) * dy;
        double density = alpha * xm * shape_gen_exp((-alpha - 1.0) * y) / cut;
        g.wt[i] = shape_gen_exp(y) / xm * dy; /* df = (1 + xm f) / xm dy */
        g.lam[i] = mean * density;
        wsum += g.wt[i];
    }
    for (int i = 0; i < PARETO_GRID; i++) g.wt[i] /= wsum;
    for (uint32_t j = 0; j < cells; j++) g.scale[j] = cells > 1 ? 2.0 * (j + 0.5) / cells : 1.0;
    /* Find the uniform extra e >= 0 giving the asked mean (the mean grows
     * with e): bracket, then the Illinois variant of regula falsi. */
    double lo = 0.0, hi = mean, flo = grid_mean(&g, lo) - mean, fhi = grid_mean(&g, hi) - mean;
    for (int it = 0; it < 64 && fhi < 0; it++) {
        lo = hi;
        flo = fhi;
        hi *= 2.0;
        fhi = grid_mean(&g, hi) - mean;
    }
    double e = hi;
    int side = 0;
    for (int it = 0; it < 100 && flo < 0 && fhi > 0; it++) {
        e = (lo * fhi - hi * flo) / (fhi - flo);
        double fe = grid_mean(&g, e) - mean;
        if (fe > -1e-12 * mean && fe < 1e-12 * mean) break;
        if (fe < 0) {
            lo = e;
            flo = fe;
            if (side == -1) fhi *= 0.5;
            side = -1;
        } else {
            hi = e;
            fhi = fe;
            if (side == 1) flo *= 0.5;
            side = 1;
        }
    }
    if (flo >= 0) e = lo;
    /* q[k] = P(k children); tenure_cdf row k = P(tenure cell <= j | k). */
    double pmf[SHAPE_GEN_ALLOC_MAX_K + 1];
    if (tenure_cdf)
        for (uint32_t k = 0; k <= cap; k++)
            for (uint32_t j = 0; j < cells; j++) tenure_cdf[k * cells + j] = 0.0;
    for (int i = 0; i < PARETO_GRID; i++)
        for (uint32_t j = 0; j < cells; j++) {
            for (uint32_t k = 0; k <= cap; k++) pmf[k] = 0.0;
            add_capped_poisson(pmf, cap, g.scale[j] * (g.lam[i] + e), g.wt[i] / cells);
            for (uint32_t k = 0; k <= cap; k++) {
                q[k] += pmf[k];
                if (tenure_cdf) tenure_cdf[k * cells + j] += pmf[k];
            }
        }
    if (tenure_cdf)
        for (uint32_t k = 0; k <= cap; k++) {
            double *row = tenure_cdf + (size_t)k * cells, run = 0.0;
            for (uint32_t j = 0; j < cells; j++) {
                run += row[j];
                row[j] = q[k] > 0 ? run / q[k] : (double)(j + 1) / cells;
            }
            row[cells - 1] = 1.0;
        }
}

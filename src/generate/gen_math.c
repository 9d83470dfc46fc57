/* gen_math.c — log, exp, sqrt and friends for the generators, in portable C.
 *
 * Why: generated values go through log/exp (log-normal prices, Zipf ranks,
 * geometric quantities) and must be byte-identical wherever a stream is
 * produced or resumed. libm implementations differ in their last bits
 * between versions and platforms; these functions use only IEEE-754
 * +, -, *, / (exactly rounded everywhere; the build is ISO C, so GCC does not
 * contract them into FMAs), so the same input gives the same bits on every
 * machine. They are also the reason libshape needs no -lm.
 * How: classic argument reduction. log: x = m * 2^e with m in [sqrt(1/2),
 * sqrt(2)), log m = 2 atanh(s), s = (m-1)/(m+1), by its odd series; exp: x =
 * k ln2 + r, |r| <= ln2/2, e^r by Taylor series, times 2^k built from bits.
 * Accuracy is within a few ulps, far below what synthetic data needs.
 */
#include "shape/generate.h"

#include <string.h>

static const double LN2_HI = 6.93147180369123816490e-01; /* exact in 32 bits */
static const double LN2_LO = 1.90821492927058770002e-10;

static uint64_t bits_of(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* 2^k for -1074 <= k <= 1023 (0 below, +inf above). */
static double pow2i(int k)
{
    if (k > 1023) return double_of(0x7ff0000000000000ULL);
    if (k >= -1022) return double_of((uint64_t)(k + 1023) << 52);
    if (k < -1074) return 0.0;
    return double_of(1ULL << (k + 1074));
}

double shape_gen_log(double x)
{
    if (x != x) return x;
    if (x <= 0.0) return x == 0.0 ? -double_of(0x7ff0000000000000ULL) : double_of(0x7ff8000000000000ULL);
    uint64_t u = bits_of(x);
    if ((u >> 52) == 0x7ff) return x; /* +inf */
    int e = 0;
    if ((u >> 52) == 0) { /* subnormal: scale up by 2^54 */
        x *= 18014398509481984.0;
        u = bits_of(x);
        e = -54;
    }
    e += (int)(u >> 52) - 1023;
    double m = double_of((u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL); /* [1, 2) */
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e += 1;
    }
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double s2 = s * s;
    /* 2 atanh(s) = 2s (1 + s^2/3 + s^4/5 + ...), |s| <= 0.1716, s^2 <= 0.0295 */
    double t = 1.0 / 23.0;
    t = t * s2 + 1.0 / 21.0;
    t = t * s2 + 1.0 / 19.0;
    t = t * s2 + 1.0 / 17.0;
    t = t * s2 + 1.0 / 15.0;
    t = t * s2 + 1.0 / 13.0;
    t = t * s2 + 1.0 / 11.0;
    t = t * s2 + 1.0 / 9.0;
    t = t * s2 + 1.0 / 7.0;
    t = t * s2 + 1.0 / 5.0;
    t = t * s2 + 1.0 / 3.0;
    /* 2s(1 + s2 t) rewritten as f - (hfsq - s (hfsq + 2 s2 t)) with hfsq =
     * f^2/2 (follows from 2s = f - s f), which keeps the big term f exact. */
    double hfsq = 0.5 * f * f;
    double r = s * (hfsq + 2.0 * s2 * t);
    double logm = f - (hfsq - r);
    double de = (double)e;
    return de * LN2_HI + (logm + de * LN2_LO);
}

double shape_gen_log1p(double x)
{
    double u = 1.0 + x;
    if (u == 1.0) return x;
    /* log(u) * x / (u - 1) corrects the rounding of 1 + x (Goldberg). */
    return shape_gen_log(u) * (x / (u - 1.0));
}

double shape_gen_exp(double x)
{
    if (x != x) return x;
    if (x > 709.782712893384) return double_of(0x7ff0000000000000ULL);
    if (x < -745.1332191019412) return 0.0;
    double kd = x * 1.4426950408889634; /* x / ln2 */
    int k = (int)(kd < 0 ? kd - 0.5 : kd + 0.5);
    double hi = x - k * LN2_HI;
    double lo = k * LN2_LO;
    double r = hi - lo; /* |r| <= 0.3466 */
    /* e^r by Taylor series to r^14 (error < 1e-18) */
    double p = 1.0 / 87178291200.0;
    p = p * r + 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    double er = 1.0 + (r + r * r * p);
    if (k < -1021) return er * pow2i(k + 54) * (1.0 / 18014398509481984.0);
    if (k > 1023) return er * 2.0 * pow2i(k - 1);
    return er * pow2i(k);
}

double shape_gen_expm1(double x)
{
    if (x > -1e-5 && x < 1e-5) return x + x * x * (0.5 + x * (1.0 / 6.0));
    double u = shape_gen_exp(x);
    if (u == 1.0) return x;
    double um1 = u - 1.0;
    if (um1 == -1.0) return -1.0;
    /* Kahan's correction of the rounding of e^x. */
    return um1 * (x / shape_gen_log(u));
}

double shape_gen_sqrt(double x)
{
    if (!(x > 0.0)) return x == 0.0 ? x : double_of(0x7ff8000000000000ULL);
    uint64_t u = bits_of(x);
    if ((u >> 52) == 0x7ff) return x;
    int e = 0;
    if ((u >> 52) == 0) {
        x *= 18014398509481984.0; /* 2^54 */
        u = bits_of(x);
        e = -27;
    }
    int ex = (int)(u >> 52) - 1023;
    if (ex & 1) ex -= 1; /* make even; m in [1, 4) */
    double m = x * pow2i(-ex);
    double y = 0.5 * (1.0 + m); /* within 25 % of sqrt(m) for m in [1,4) */
    for (int it = 0; it < 6; it++) y = 0.5 * (y + m / y);
    /* one correction step towards the nearest double */
    double y2 = y * y;
    if (y2 > m) {
        double yd = double_of(bits_of(y) - 1);
        if (yd * yd >= m) y = yd;
    }
    return y * pow2i(ex / 2 + e);
}

double shape_gen_pow(double x, double y)
{
    if (y == 0.0) return 1.0;
    return shape_gen_exp(y * shape_gen_log(x));
}

int64_t shape_gen_cents(double x)
{
    double v = x * 100.0;
    return (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
}

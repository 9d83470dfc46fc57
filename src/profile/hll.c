/* hll.c — HyperLogLog with p = 14 and Ertl's improved estimator.
 *
 * Why: `distinct` must be estimated in fixed memory (16 KiB per column) and
 * must merge across workers exactly (the union of two sketches is the sketch
 * of the union), with an error of about 1.04/sqrt(16384) = 0.8 % over the
 * whole range, including small cardinalities where the classic HLL estimate
 * is biased.
 *
 * How: registers are filled by shape_hll_add_hash (inline, shape/profile.h).
 * The estimate follows O. Ertl, "New cardinality estimation algorithms for
 * HyperLogLog sketches" (2017): from the histogram C[0..q+1] of register
 * values (q = 64 − p),
 *     z = m·tau(1 − C[q+1]/m);  for k = q..1: z = (z + C[k]) / 2;
 *     z += m·sigma(C[0]/m);     estimate = alpha_inf · m² / z,
 * with alpha_inf = 1/(2 ln 2) and the series
 *     sigma(x) = x + Σ_{k>=1} x^(2^k) 2^(k−1)      (infinite at x = 1),
 *     tau(x)   = (1 − x − Σ_{k>=1} (1 − x^(2^−k))² 2^−k) / 3,
 * each summed until adding a term no longer changes the double. An empty
 * sketch has C[0] = m, sigma = inf and the estimate 0. Merge is the
 * elementwise max of the registers. libshape links no libm, so the square
 * root tau needs is computed here, exactly rounded (integer square root of
 * the scaled mantissa), which is what IEEE sqrt returns: the estimate is
 * bit-identical to one computed with any conforming libm.
 */
#include "shape/profile.h"

#include <math.h> /* INFINITY only: libshape links no libm */
#include <string.h>

void shape_hll_init(shape_hll *h) { memset(h->registers, 0, sizeof h->registers); }

/* Written as an unconditional store of the larger byte so that the compiler
 * makes it a vector max (16-32 registers per instruction): a sliding window
 * merges each column's sketch of every pane when it closes, and the
 * conditional store ran one byte at a time. */
void shape_hll_merge(shape_hll *dst, const shape_hll *src)
{
    uint8_t *restrict d = dst->registers;
    const uint8_t *restrict s = src->registers;
    if (d == s) return;
    for (size_t i = 0; i < SHAPE_HLL_REGISTERS; i++) d[i] = s[i] > d[i] ? s[i] : d[i];
}

/* Correctly rounded (to nearest even) square root of a positive finite x. */
static double exact_sqrt(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, 8);
    int e = (int)((bits >> 52) & 0x7FF);
    uint64_t m = bits & ((UINT64_C(1) << 52) - 1);
    if (e == 0) { /* subnormal: normalise */
        e = 1;
        while (!(m & (UINT64_C(1) << 52))) {
            m <<= 1;
            e--;
        }
    } else {
        m |= UINT64_C(1) << 52;
    }
    /* x = m · 2^(e − 1075); make the exponent even */
    int ex = e - 1075;
    if (ex & 1) {
        m <<= 1;
        ex--;
    }
    /* M = m · 2^s with s even and M in [2^106, 2^108): floor(sqrt(M)) has 54 bits */
    int s = 0;
    unsigned __int128 M = m;
    while (M < ((unsigned __int128)1 << 106)) {
        M <<= 2;
        s += 2;
    }
    unsigned __int128 rem = M, res = 0, bit = (unsigned __int128)1 << 106;
    while (bit > rem) bit >>= 2;
    while (bit) {
        if (rem >= res + bit) {
            rem -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    /* res = floor(sqrt(M)) in [2^53, 2^54): drop one bit, rounding to nearest even */
    uint64_t r = (uint64_t)res;
    int rexp = (ex - s) / 2 + 1;
    uint64_t q = r >> 1;
    if ((r & 1) && (rem != 0 || (q & 1))) q++;
    if (q == (UINT64_C(1) << 53)) {
        q >>= 1;
        rexp++;
    }
    /* value = q · 2^rexp, q in [2^52, 2^53) */
    uint64_t out = ((uint64_t)(rexp + 52 + 1023) << 52) | (q & ((UINT64_C(1) << 52) - 1));
    double y;
    memcpy(&y, &out, 8);
    return y;
}

static double sigma(double x)
{
    if (x == 1.0) return INFINITY;
    double y = 1.0, z = x, prev;
    do {
        x *= x;
        prev = z;
        z += x * y;
        y += y;
    } while (z != prev);
    return z;
}

static double tau(double x)
{
    if (x == 0.0 || x == 1.0) return 0.0;
    double y = 1.0, z = 1.0 - x, prev;
    do {
        x = exact_sqrt(x);
        prev = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
    } while (z != prev);
    return z / 3.0;
}

double shape_hll_estimate(const shape_hll *h)
{
    enum { Q = 64 - SHAPE_HLL_P };
    const double m = (double)SHAPE_HLL_REGISTERS;
    int64_t c[Q + 2] = {0};
    /* the histogram of the registers; 8 zero registers (a word) at a time,
     * which most registers of a column with few distinct values are */
    for (size_t i = 0; i < SHAPE_HLL_REGISTERS; i += 8) {
        uint64_t w;
        memcpy(&w, h->registers + i, 8);
        if (w == 0) {
            c[0] += 8;
            continue;
        }
        for (size_t k = 0; k < 8; k++) c[h->registers[i + k]]++;
    }
    double z = m * tau(1.0 - (double)c[Q + 1] / m);
    for (int k = Q; k >= 1; k--) z = 0.5 * (z + (double)c[k]);
    z += m * sigma((double)c[0] / m);
    const double alpha_inf = 1.0 / (2.0 * 0.69314718055994530942); /* 1/(2 ln 2) */
    return alpha_inf * m * m / z;
}

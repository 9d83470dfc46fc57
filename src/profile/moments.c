/* moments.c — merging streaming moments (count, mean, m2).
 *
 * Why: mean and variance are exact statistics computed in one pass, per
 * batch, and must combine across batches, checkpoints and workers.
 *
 * How: a batch's values (finite, gathered by the column profiler) give the
 * batch mean — a Neumaier-compensated sum divided by n — and the batch m2 by
 * the corrected two-pass formula Σd² − (Σd)²/n with d = x − mean (the second
 * term removes what the rounding of the mean adds). We use this rather than
 * Welford's per-value update: Welford divides once per value (slower) and
 * loses about 1e-8 relative on data with a large mean and a small spread
 * (1e9 + U(0,1)), where this stays near 1e-16. Batches and states combine
 * with Chan et al.'s parallel formula, evaluated in the reference's order:
 *     d = mean_b − mean_a;  m2 = m2_a + m2_b + d·d·n_a·n_b / n;
 *     mean = mean_a + d·n_b / n.
 * Merging into an empty side copies the other exactly. Floating-point
 * addition is not associative, so states merged in another grouping agree
 * with a single run to rounding (about 1e-15 relative), not bit for bit. A
 * moment that overflows becomes inf/NaN and stays so; the document writes it
 * as null (spec: "an overflowed moment becomes null").
 *
 * Integer columns pass their batch mean in (prof_moments_add_with_mean):
 * the column profiler sums the int64 values exactly in 128 bits, so a batch
 * whose sum passes 2^53 (e.g. INT64_MIN, INT64_MAX and small values) gets the
 * mean the original gets from its exact integer sum; converted to double
 * first, INT64_MAX rounds to 2^63 and the mean of {INT64_MIN, INT64_MAX, 47}
 * came out 16 instead of 15.67 (found by tests/compat). Below 2^53 every
 * partial sum is exact either way, so the two paths agree bit for bit.
 */
#include "profile_internal.h"

void shape_moments_add_values(shape_moments *m, const double *x, size_t n)
{
    if (n == 0) return;
    double sum = 0.0, comp = 0.0;
    for (size_t i = 0; i < n; i++) {
        double t = sum + x[i];
        /* Neumaier: keep the low part lost by the larger operand */
        double big = sum, small = x[i];
        if ((big < 0 ? -big : big) < (small < 0 ? -small : small)) {
            big = x[i];
            small = sum;
        }
        comp += (big - t) + small;
        sum = t;
    }
    prof_moments_add_with_mean(m, x, n, (sum + comp) / (double)n);
}

void prof_moments_add_with_mean(shape_moments *m, const double *x, size_t n, double mean)
{
    if (n == 0) return;
    double s1 = 0.0, s2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = x[i] - mean;
        s1 += d;
        s2 += d * d;
    }
    shape_moments b = {(int64_t)n, mean, s2 - s1 * s1 / (double)n};
    shape_moments_merge(m, &b);
}

void shape_moments_merge(shape_moments *dst, const shape_moments *src)
{
    if (src->n == 0) return;
    if (dst->n == 0) {
        *dst = *src;
        return;
    }
    double na = (double)dst->n, nb = (double)src->n;
    int64_t n = dst->n + src->n;
    double tot = (double)n;
    double d = src->mean - dst->mean;
    dst->m2 += src->m2 + d * d * na * nb / tot;
    dst->mean += d * nb / tot;
    dst->n = n;
}

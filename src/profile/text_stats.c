/* text_stats.c — text length in code points and the exact length histogram.
 *
 * Why: a text column's `length` statistics (count, min, max, mean, p95 and
 * the histogram) are exact in bounded mode too; the number of distinct
 * lengths is small in practice, so the histogram is kept whole.
 *
 * How: the code-point count is the byte count less the continuation bytes,
 * counted a word at a time (an all-ASCII value is recognised by OR-ing its
 * words and not counted at all). Lengths below SHAPE_LENHIST_DENSE (256)
 * count in a dense array (one increment per value, no search); longer ones
 * in a sorted list of
 * (length, count) found by binary search. `total` (sum of lengths) makes the
 * mean exact and independent of the order of merges. p95 interpolates
 * linearly between the two order statistics around q·(count − 1) (numpy's
 * "linear" method, lerp taken from the nearer end as numpy does) by walking
 * the cumulative counts.
 */
#include "shape/bytes.h"
#include "shape/profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HIGH_BITS 0x8080808080808080ull

/* Continuation bytes (10xxxxxx) among the 8 bytes of w. The mask keeps at
 * most one bit per byte (bit 7 set, bit 6 clear); moved to bit 0 of each
 * byte, one multiply sums the eight bytes into the top byte (at most 8, no
 * carry). No popcount: without -mpopcnt it is a libgcc call. */
static inline size_t continuation_bytes(uint64_t w)
{
    uint64_t c = (w & ~(w << 1) & HIGH_BITS) >> 7;
    return (size_t)((c * 0x0101010101010101ull) >> 56);
}

size_t shape_utf8_length(const uint8_t *s, size_t n)
{
    if (n < 4) {
        size_t cont = 0;
        for (size_t i = 0; i < n; i++) cont += (s[i] & 0xC0) == 0x80;
        return n - cont;
    }
    if (n < 8) { /* two overlapping 4-byte loads, the overlap shifted out of the second */
        uint64_t hi = (uint64_t)shape_load32(s + n - 4) >> (8 * (8 - n));
        return n - continuation_bytes((uint64_t)shape_load32(s) | hi << 32);
    }
    /* Words, the last one overlapping (its already-seen low bytes shifted
     * out). First only OR them: all-ASCII text, the usual case, has no
     * continuation byte and needs no count. */
    size_t i = 0;
    uint64_t any = shape_load64(s + n - 8);
    for (; i + 8 <= n; i += 8) any |= shape_load64(s + i);
    if (!(any & HIGH_BITS)) return n;
    size_t cont = 0;
    for (i = 0; i + 8 <= n; i += 8) cont += continuation_bytes(shape_load64(s + i));
    if (i < n) cont += continuation_bytes(shape_load64(s + n - 8) >> (8 * (8 - (n - i))));
    return n - cont;
}

void shape_lenhist_init(shape_lenhist *h) { memset(h, 0, sizeof *h); }

void shape_lenhist_free(shape_lenhist *h)
{
    free(h->sparse);
    shape_lenhist_init(h);
}

static size_t sparse_find(const shape_lenhist *h, int64_t length)
{
    size_t lo = 0, hi = h->n_sparse;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->sparse[mid].length < length)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int shape_lenhist_add(shape_lenhist *h, int64_t length, int64_t times, shape_err *err)
{
    if (length < 0 || times < 0) return shape_err_set(err, SHAPE_EINVAL, "negative text length or count");
    if (times == 0) return SHAPE_OK;
    if (length < SHAPE_LENHIST_DENSE) {
        h->dense[length] += times;
    } else {
        size_t at = sparse_find(h, length);
        if (at < h->n_sparse && h->sparse[at].length == length) {
            h->sparse[at].count += times;
        } else {
            if (h->n_sparse == h->cap_sparse) {
                size_t cap = h->cap_sparse ? h->cap_sparse * 2 : 8;
                shape_lenhist_bin *p = realloc(h->sparse, cap * sizeof *p);
                if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a length histogram");
                h->sparse = p;
                h->cap_sparse = cap;
            }
            memmove(h->sparse + at + 1, h->sparse + at, (h->n_sparse - at) * sizeof *h->sparse);
            h->sparse[at].length = length;
            h->sparse[at].count = times;
            h->n_sparse++;
        }
    }
    h->count += times;
    h->total += length * times;
    return SHAPE_OK;
}

int shape_lenhist_merge(shape_lenhist *dst, const shape_lenhist *src, shape_err *err)
{
    /* Reserve first so a failure leaves dst unchanged. */
    size_t need = dst->n_sparse + src->n_sparse;
    if (need > dst->cap_sparse) {
        shape_lenhist_bin *p = realloc(dst->sparse, need * sizeof *p);
        if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a length histogram");
        dst->sparse = p;
        dst->cap_sparse = need;
    }
    for (size_t i = 0; i < SHAPE_LENHIST_DENSE; i++) dst->dense[i] += src->dense[i];
    int64_t count = dst->count, total = dst->total;
    for (size_t i = 0; i < src->n_sparse; i++)
        (void)shape_lenhist_add(dst, src->sparse[i].length, src->sparse[i].count, NULL); /* room reserved */
    dst->count = count + src->count;
    dst->total = total + src->total;
    return SHAPE_OK;
}

size_t shape_lenhist_bins(const shape_lenhist *h, shape_lenhist_bin **out)
{
    size_t n = h->n_sparse;
    for (size_t i = 0; i < SHAPE_LENHIST_DENSE; i++) n += h->dense[i] != 0;
    *out = NULL;
    if (n == 0) return 0;
    shape_lenhist_bin *b = malloc(n * sizeof *b);
    if (!b) return (size_t)-1;
    size_t k = 0;
    for (size_t i = 0; i < SHAPE_LENHIST_DENSE; i++)
        if (h->dense[i]) {
            b[k].length = (int64_t)i;
            b[k].count = h->dense[i];
            k++;
        }
    if (h->n_sparse) memcpy(b + k, h->sparse, h->n_sparse * sizeof *b);
    *out = b;
    return n;
}

/* The length at 0-based sorted position `pos` (0 <= pos < count). */
static int64_t length_at(const shape_lenhist *h, int64_t pos)
{
    int64_t acc = 0;
    for (size_t i = 0; i < SHAPE_LENHIST_DENSE; i++) {
        acc += h->dense[i];
        if (pos < acc) return (int64_t)i;
    }
    for (size_t i = 0; i < h->n_sparse; i++) {
        acc += h->sparse[i].count;
        if (pos < acc) return h->sparse[i].length;
    }
    return h->n_sparse ? h->sparse[h->n_sparse - 1].length : 0;
}

double shape_lenhist_quantile(const shape_lenhist *h, double q)
{
    if (h->count == 0) return NAN;
    double pos = q * (double)(h->count - 1);
    int64_t lo = (int64_t)pos; /* pos >= 0: truncation is floor */
    int64_t hi = lo + 1 < h->count ? lo + 1 : lo;
    double frac = pos - (double)lo;
    double a = (double)length_at(h, lo), b = (double)length_at(h, hi);
    /* numpy's lerp: from the nearer end, so q = 1 gives exactly the max */
    return frac >= 0.5 ? b - (b - a) * (1.0 - frac) : a + (b - a) * frac;
}

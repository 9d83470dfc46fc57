/* kll.c — the KLL quantile sketch (Karnin, Lang, Liberty) with deterministic
 * compaction.
 *
 * Why: quantiles of a numeric column must come from fixed memory (about 3·k
 * = 600 retained items) with a rank error under 1 %, merge across workers, and be
 * reproducible: the same batches in the same order give the same sketch, so
 * a resumed run writes the same profile as an uninterrupted one.
 *
 * How (reference/spec-core.md §1.10 "KLL"):
 *   - level l holds items of weight 2^l; with L levels a level's capacity is
 *     max(2, floor(k·2^d / 3^d)) for d = L − 1 − l, computed in integers so
 *     every platform agrees (d > 40 gives 2);
 *   - an add appends to level 0 (a batch appends the items that leave no
 *     compaction due in one copy); while the retained items exceed the total
 *     capacity, the lowest level holding at least its capacity is compacted:
 *     sorted (by a sorting network when short, by merging its sorted runs
 *     when it is made of a few, or of blocks of 16 the network sorted when
 *     it is made of many; see sort_level), its smallest item kept back when
 *     the count is odd, and every other item of the rest promoted to the
 *     level above (a new top level is added when needed), starting at
 *     index 0 after an even number of compactions of the sketch and at 1
 *     after an odd number — the alternation replaces KLL's coin flip, so
 *     nothing is random. Weight is preserved exactly: Σ len(level l)·2^l = n
 *     at all times;
 *   - merge appends the other sketch's levels to ours, then compresses the
 *     same way (our compaction counter carries on);
 *   - a quantile sorts the retained (value, weight) pairs and returns the
 *     first value whose cumulative weight exceeds q·(n − 1).
 * Before a compaction changes anything it reserves the room it needs, so an
 * allocation failure leaves the sketch as it was.
 */
#include "profile_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct kll_level {
    double *v;
    size_t len, cap;
} kll_level;

struct shape_kll {
    int k;
    int64_t n;
    uint64_t compactions;
    kll_level *lev;
    size_t nlev, lev_cap;
    size_t size;      /* retained items */
    size_t total_cap; /* Σ capacities for the current number of levels */
    size_t *caps;     /* capacity of each level for the current number of levels */
    double *merge_buf; /* room for merging a level's sorted runs (not state) */
    size_t merge_cap;
};

int64_t shape_kll_level_capacity(int k, size_t level, size_t levels)
{
    if (level >= levels) return 0;
    size_t depth = levels - 1 - level;
    if (depth > 40) return 2;
    uint64_t pow3 = 1;
    for (size_t i = 0; i < depth; i++) pow3 *= 3;
    uint64_t c = ((uint64_t)k << depth) / pow3;
    return c < 2 ? 2 : (int64_t)c;
}

/* Needs s->caps to hold nlev entries (reserve_levels sees to it). */
static void recompute_capacity(shape_kll *s)
{
    size_t total = 0;
    for (size_t i = 0; i < s->nlev; i++) {
        s->caps[i] = (size_t)shape_kll_level_capacity(s->k, i, s->nlev);
        total += s->caps[i];
    }
    s->total_cap = total;
}

static int reserve_levels(shape_kll *s, size_t want, shape_err *err)
{
    if (want <= s->lev_cap) return SHAPE_OK;
    size_t cap = s->lev_cap ? s->lev_cap * 2 : 8;
    while (cap < want) cap *= 2;
    size_t *caps = realloc(s->caps, cap * sizeof *caps);
    if (!caps) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a quantile sketch");
    s->caps = caps;
    kll_level *p = realloc(s->lev, cap * sizeof *p);
    if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a quantile sketch");
    memset(p + s->lev_cap, 0, (cap - s->lev_cap) * sizeof *p);
    s->lev = p;
    s->lev_cap = cap;
    return SHAPE_OK;
}

static int reserve_items(kll_level *l, size_t extra, shape_err *err)
{
    if (l->len + extra <= l->cap) return SHAPE_OK;
    size_t cap = l->cap ? l->cap * 2 : 16;
    while (cap < l->len + extra) cap *= 2;
    double *p = realloc(l->v, cap * sizeof *p);
    if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a quantile sketch");
    l->v = p;
    l->cap = cap;
    return SHAPE_OK;
}

int shape_kll_new(int k, shape_kll **out, shape_err *err)
{
    *out = NULL;
    if (k < 2 || k > 65535) return shape_err_set(err, SHAPE_EINVAL, "KLL k %d is outside 2..65535", k);
    shape_kll *s = calloc(1, sizeof *s);
    if (!s) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a quantile sketch");
    s->k = k;
    if (reserve_levels(s, 1, err) != SHAPE_OK) {
        shape_kll_free(s);
        return SHAPE_ENOMEM;
    }
    s->nlev = 1;
    recompute_capacity(s);
    *out = s;
    return SHAPE_OK;
}

void shape_kll_free(shape_kll *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->lev_cap && s->lev; i++) free(s->lev[i].v);
    free(s->lev);
    free(s->caps);
    free(s->merge_buf);
    free(s);
}

int shape_kll_k(const shape_kll *s) { return s->k; }
int64_t shape_kll_n(const shape_kll *s) { return s->n; }
size_t shape_kll_retained(const shape_kll *s) { return s->size; }
size_t shape_kll_num_levels(const shape_kll *s) { return s->nlev; }

/* ---- sorting doubles (no NaN) ------------------------------------------ */

static void insertion_sort(double *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

static void sift_down(double *a, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && a[child + 1] > a[child]) child++;
        if (!(a[child] > a[root])) return;
        double t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/* Introsort: quicksort (median of three), insertion sort for short runs,
 * heap sort when recursion gets deep (no O(n²) input). Once the sketch is
 * full every add compacts, so this runs per add: no qsort callback. (Keeping
 * levels sorted and merging instead measured the same: the cost is the
 * comparisons on random data, ~30 ns per add here, ~10 ns on sorted input.) */
static void sort_depth(double *a, size_t n, int depth)
{
    while (n > 16) {
        if (depth-- == 0) {
            for (size_t i = n / 2; i-- > 0;) sift_down(a, i, n);
            for (size_t end = n; end-- > 1;) {
                double t = a[0];
                a[0] = a[end];
                a[end] = t;
                sift_down(a, 0, end);
            }
            return;
        }
        double x = a[0], y = a[n / 2], z = a[n - 1];
        double pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i >= j) break;
            double t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        size_t left = j + 1; /* [0, left) <= pivot <= [left, n) */
        if (left < n - left) {
            sort_depth(a, left, depth);
            a += left;
            n -= left;
        } else {
            sort_depth(a + left, n - left, depth);
            n = left;
        }
    }
    insertion_sort(a, n);
}

static void sort_doubles(double *a, size_t n)
{
    int depth = 0;
    for (size_t m = n; m > 1; m >>= 1) depth += 2;
    sort_depth(a, n, depth);
}

/* Sorting a level. Above level 0 a level is mostly a few sorted runs side
 * by side (each compaction below appends its promoted items in order), so
 * merging the runs does the work of a sort in a pass or two. The result is
 * the same array as sort_doubles': the items hold no NaN, so two items that
 * compare equal have the same bits, except 0.0 and -0.0 — and sort_doubles
 * is not stable, so a level holding a -0.0 (or when no merge room could be
 * had) is sorted as before. Short levels (16 items or fewer) go to
 * small_sort. A level of more than KLL_MAX_RUNS runs (random items in a
 * long level 0) is cut into blocks of 16 that small_sort makes the runs to
 * merge, up to 16·KLL_MAX_RUNS items (longer ones are sorted as before):
 * about 10 % more instructions than the introsort there, but no partition
 * loop exits to mispredict (-10 % time for a random column's sketch). Returns where the sorted items are: a, or
 * buf when the merges ended there (the compaction reads them from there,
 * no copy back). */
#define KLL_MAX_RUNS 16

/* Two non-empty sorted runs into out; on a tie a's item goes first. The run
 * whose last item is larger (b on a tie) outlasts the other, so the loop
 * checks only the other's end and the rest is copied. */
static void merge_runs(const double *a, size_t na, const double *b, size_t nb, double *out)
{
    const double *ea = a + na, *eb = b + nb;
    const int b_outlasts = !(b[nb - 1] < a[na - 1]);
    /* the choice is data, not a branch: on random items a branch on it is
     * mispredicted about every other item */
    while (b_outlasts ? a < ea : b < eb) {
        double x = *a, y = *b;
        size_t take_b = y < x;
        *out++ = take_b ? y : x;
        a += 1 - take_b;
        b += take_b;
    }
    if (b_outlasts)
        memcpy(out, b, (size_t)(eb - b) * sizeof *out);
    else
        memcpy(out, a, (size_t)(ea - a) * sizeof *out);
}

static inline int is_negative_zero(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits == UINT64_C(0x8000000000000000);
}

static int has_negative_zero(const double *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (is_negative_zero(a[i])) return 1;
    return 0;
}

/* 2..16 items: Batcher's odd-even merge network for 16 (63 compare-
 * exchanges: 19 sort items 0-7, 19 sort items 8-15, 25 merge the halves),
 * the missing items +inf. No branch depends on the data, where the
 * insertion sort's inner loop exit is a guess lost about once per item on
 * random values (7 % of a random add's time). A network is not stable, so a
 * level holding a -0.0 (which compares equal to 0.0) is insertion-sorted as
 * before; otherwise equal items have equal bits and the result is the same.
 * (+inf pads are bit for bit equal to a +inf item, if any. A 0.0 alone is
 * no reason to leave the network: it is often the column's minimum, which
 * a level keeps at its index 0 through compactions.) */
#if defined(__SSE2__)
/* minsd/maxsd by hand: for the plain ternaries the compiler keeps branches,
 * since they differ from min/max on 0.0 vs -0.0 (excluded here) */
static inline double min_of(double x, double y) { return _mm_cvtsd_f64(_mm_min_sd(_mm_set_sd(x), _mm_set_sd(y))); }
static inline double max_of(double x, double y) { return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(x), _mm_set_sd(y))); }
#else
static inline double min_of(double x, double y) { return x < y ? x : y; }
static inline double max_of(double x, double y) { return x > y ? x : y; }
#endif
#define CE(i, j)                         \
    do {                                 \
        double x_ = v[i], y_ = v[j];     \
        v[i] = min_of(x_, y_);           \
        v[j] = max_of(x_, y_);           \
    } while (0)

static void small_sort(double *a, size_t n)
{
    if (n < 2) return;
    /* Already in order (ids, times): nothing to do, as for the insertion
     * sort. Descents and -0.0s are counted over all items, without an
     * early exit a predictor would miss on random items. */
    size_t descents = 0, neg_zeros = is_negative_zero(a[0]);
    for (size_t i = 1; i < n; i++) {
        descents += a[i] < a[i - 1];
        neg_zeros += is_negative_zero(a[i]);
    }
    if (!descents) return;
    if (neg_zeros) {
        insertion_sort(a, n);
        return;
    }
    double v[16];
    for (size_t i = 0; i < 16; i++) v[i] = i < n ? a[i] : INFINITY;
    CE(0, 1); CE(2, 3); CE(0, 2); CE(1, 3); CE(1, 2); CE(4, 5); CE(6, 7); CE(4, 6);
    CE(5, 7); CE(5, 6); CE(0, 4); CE(2, 6); CE(2, 4); CE(1, 5); CE(3, 7); CE(3, 5);
    CE(1, 2); CE(3, 4); CE(5, 6);
    if (n > 8) {
        CE(8, 9); CE(10, 11); CE(8, 10); CE(9, 11); CE(9, 10); CE(12, 13); CE(14, 15); CE(12, 14);
        CE(13, 15); CE(13, 14); CE(8, 12); CE(10, 14); CE(10, 12); CE(9, 13); CE(11, 15); CE(11, 13);
        CE(9, 10); CE(11, 12); CE(13, 14);
        CE(0, 8); CE(4, 12); CE(4, 8); CE(2, 10); CE(6, 14); CE(6, 10); CE(2, 4); CE(6, 8);
        CE(10, 12); CE(1, 9); CE(5, 13); CE(5, 9); CE(3, 11); CE(7, 15); CE(7, 11); CE(3, 5);
        CE(7, 9); CE(11, 13); CE(1, 2); CE(3, 4); CE(5, 6); CE(7, 8); CE(9, 10); CE(11, 12);
        CE(13, 14);
    }
    for (size_t i = 0; i < n; i++) a[i] = v[i];
}
#undef CE

static const double *sort_level(double *a, size_t n, double *buf)
{
    if (n <= 16) {
        small_sort(a, n);
        return a;
    }
    size_t bounds[2][KLL_MAX_RUNS + 1], runs = 1;
    bounds[0][0] = 0;
    /* the descents counted first, without a branch (on random items one per
     * item would be mispredicted about every other time); the run bounds
     * only when there are few */
    size_t descents = 0;
    for (size_t j = 1; j < n; j++) descents += a[j] < a[j - 1];
    int many = descents >= KLL_MAX_RUNS;
    for (size_t j = 1; !many && j < n; j++)
        if (a[j] < a[j - 1]) bounds[0][runs++] = j;
    if (many) { /* blocks of 16 by the network become the runs */
        if (!buf || n > 16 * KLL_MAX_RUNS || has_negative_zero(a, n)) {
            sort_doubles(a, n);
            return a;
        }
        runs = 0;
        for (size_t b = 0; b < n; b += 16) {
            small_sort(a + b, n - b < 16 ? n - b : 16);
            bounds[0][runs++] = b;
        }
        bounds[0][runs] = n;
    } else {
        bounds[0][runs] = n;
        int neg_zero = 0; /* a run can hold a zero only if it starts <= 0 and ends >= 0 */
        for (size_t r = 0; r < runs && !neg_zero; r++) {
            size_t first = bounds[0][r], end = bounds[0][r + 1];
            if (a[first] <= 0.0 && a[end - 1] >= 0.0) neg_zero = has_negative_zero(a + first, end - first);
        }
        if (neg_zero || (runs > 1 && !buf)) { /* (the introsort reorders ties even in a sorted array) */
            sort_doubles(a, n);
            return a;
        }
        if (runs == 1) return a;
    }
    /* bottom-up: merge neighbouring runs pairwise, back and forth between
     * a and buf, until one run is left */
    double *src = a, *dst = buf;
    int cur = 0;
    while (runs > 1) {
        const size_t *b = bounds[cur];
        size_t *nb = bounds[!cur], out = 0, r = 0;
        for (; r + 1 < runs; r += 2) {
            merge_runs(src + b[r], b[r + 1] - b[r], src + b[r + 1], b[r + 2] - b[r + 1], dst + b[r]);
            nb[out++] = b[r];
        }
        if (r < runs) { /* an odd run out: copied over as it is */
            memcpy(dst + b[r], src + b[r], (b[r + 1] - b[r]) * sizeof *a);
            nb[out++] = b[r];
        }
        nb[out] = n;
        runs = out;
        cur = !cur;
        double *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

void shape_kll_sort_(double *a, size_t n, int by_runs)
{
    if (!by_runs) {
        sort_doubles(a, n);
        return;
    }
    double *buf = malloc((n ? n : 1) * sizeof *buf);
    const double *sorted = sort_level(a, n, buf);
    if (sorted != a) memcpy(a, sorted, n * sizeof *a);
    free(buf);
}

/* ---- compaction --------------------------------------------------------- */

static int compact(shape_kll *s, size_t i, shape_err *err)
{
    size_t len = s->lev[i].len;
    size_t keep = len & 1;
    size_t promote = (len - keep) / 2;
    if (i + 1 == s->nlev) SHAPE_RETURN_NOT_OK(reserve_levels(s, s->nlev + 1, err));
    SHAPE_RETURN_NOT_OK(reserve_items(&s->lev[i + 1], promote, err));
    if (i + 1 == s->nlev) {
        s->nlev++;
        recompute_capacity(s);
    }
    kll_level *lo = &s->lev[i], *hi = &s->lev[i + 1];
    if (len > s->merge_cap) { /* no room: sort_level sorts in place instead */
        double *p = realloc(s->merge_buf, len * sizeof *p);
        if (p) {
            s->merge_buf = p;
            s->merge_cap = len;
        }
    }
    const double *sorted = sort_level(lo->v, len, len <= s->merge_cap ? s->merge_buf : NULL);
    size_t start = keep + (size_t)(s->compactions & 1);
    s->compactions++;
    double *to = hi->v + hi->len;
    for (size_t j = start; j < len; j += 2) *to++ = sorted[j];
    hi->len = (size_t)(to - hi->v);
    /* the smallest item (index 0) stays when the count was odd */
    if (keep) lo->v[0] = sorted[0];
    lo->len = keep;
    s->size -= len - keep - promote;
    return SHAPE_OK;
}

static int compress(shape_kll *s, shape_err *err)
{
    while (s->size > s->total_cap) {
        size_t i = 0;
        while (i < s->nlev && s->lev[i].len < s->caps[i]) i++;
        if (i == s->nlev) break; /* cannot happen: some level is over its capacity */
        SHAPE_RETURN_NOT_OK(compact(s, i, err));
    }
    return SHAPE_OK;
}

static int add_one(shape_kll *s, double x, shape_err *err)
{
    kll_level *l0 = &s->lev[0];
    if (l0->len == l0->cap) SHAPE_RETURN_NOT_OK(reserve_items(l0, 1, err));
    l0->v[l0->len++] = x;
    s->size++;
    s->n++;
    if (s->size > s->total_cap) {
        int rc = compress(s, err);
        if (rc != SHAPE_OK) {
            /* undo the add so the sketch stays as before (a failing
             * compaction reserves before it moves, so level 0 is intact) */
            s->lev[0].len--;
            s->size--;
            s->n--;
            return rc;
        }
    }
    return SHAPE_OK;
}

int shape_kll_add(shape_kll *s, double x, shape_err *err) { return add_one(s, x, err); }

int shape_kll_add_values(shape_kll *s, const double *xs, size_t n, shape_err *err)
{
    size_t i = 0;
    while (i < n) {
        /* the items that fit in level 0 with no compaction due are
         * appended at once; the next one goes through add_one */
        kll_level *l0 = &s->lev[0];
        size_t run = n - i;
        if (run > l0->cap - l0->len) run = l0->cap - l0->len;
        if (s->size >= s->total_cap) run = 0;
        else if (run > s->total_cap - s->size) run = s->total_cap - s->size;
        if (run) {
            memcpy(l0->v + l0->len, xs + i, run * sizeof *xs);
            l0->len += run;
            s->size += run;
            s->n += (int64_t)run;
            i += run;
            continue;
        }
        SHAPE_RETURN_NOT_OK(add_one(s, xs[i], err));
        i++;
    }
    return SHAPE_OK;
}

int shape_kll_merge(shape_kll *dst, const shape_kll *src, shape_err *err)
{
    if (dst->k != src->k)
        return shape_err_set(err, SHAPE_EINVAL, "cannot merge quantile sketches with k %d and %d", dst->k, src->k);
    if (dst == src) return shape_err_set(err, SHAPE_EINVAL, "cannot merge a quantile sketch into itself");
    SHAPE_RETURN_NOT_OK(reserve_levels(dst, src->nlev, err));
    for (size_t i = 0; i < src->nlev; i++) SHAPE_RETURN_NOT_OK(reserve_items(&dst->lev[i], src->lev[i].len, err));
    if (dst->nlev < src->nlev) dst->nlev = src->nlev;
    for (size_t i = 0; i < src->nlev; i++) {
        if (src->lev[i].len) memcpy(dst->lev[i].v + dst->lev[i].len, src->lev[i].v, src->lev[i].len * sizeof(double));
        dst->lev[i].len += src->lev[i].len;
    }
    dst->size += src->size;
    dst->n += src->n;
    recompute_capacity(dst);
    return compress(dst, err);
}

/* ---- queries ------------------------------------------------------------ */

typedef struct weighted {
    double v;
    int64_t w;
} weighted;

static int cmp_weighted(const void *pa, const void *pb)
{
    const weighted *a = pa, *b = pb;
    if (a->v != b->v) return a->v < b->v ? -1 : 1;
    return a->w < b->w ? -1 : (a->w > b->w ? 1 : 0);
}

int shape_kll_quantiles(const shape_kll *s, const double *qs, size_t nq, double *out, shape_err *err)
{
    for (size_t i = 0; i < nq; i++)
        if (!(qs[i] >= 0.0 && qs[i] <= 1.0))
            return shape_err_set(err, SHAPE_EINVAL, "quantile %g is outside [0, 1]", qs[i]);
    if (s->size == 0) {
        for (size_t i = 0; i < nq; i++) out[i] = NAN;
        return SHAPE_OK;
    }
    weighted *w = malloc(s->size * sizeof *w);
    if (!w) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for quantiles");
    size_t m = 0;
    int64_t total = 0;
    for (size_t l = 0; l < s->nlev; l++)
        for (size_t j = 0; j < s->lev[l].len; j++) {
            w[m].v = s->lev[l].v[j];
            w[m].w = (int64_t)1 << l;
            total += w[m].w;
            m++;
        }
    qsort(w, m, sizeof *w, cmp_weighted);
    for (size_t i = 0; i < nq; i++) {
        double target = qs[i] * (double)(total - 1);
        double acc = 0;
        out[i] = w[m - 1].v;
        for (size_t j = 0; j < m; j++) {
            if (acc + (double)w[j].w > target) {
                out[i] = w[j].v;
                break;
            }
            acc += (double)w[j].w;
        }
    }
    free(w);
    return SHAPE_OK;
}

/* ---- state access (profile_internal.h) ---------------------------------- */

const double *shape_kll_level_items_(const shape_kll *s, size_t level, size_t *len)
{
    *len = level < s->nlev ? s->lev[level].len : 0;
    return level < s->nlev ? s->lev[level].v : NULL;
}

uint64_t shape_kll_compactions_(const shape_kll *s) { return s->compactions; }

int shape_kll_restore_(shape_kll *s, size_t levels, const size_t *lens, const double *items,
                       uint64_t compactions, shape_err *err)
{
    if (levels < 1 || levels > 64)
        return shape_err_set(err, SHAPE_EINVAL, "quantile sketch with %zu levels", levels);
    if (s->n != 0 || s->size != 0) return shape_err_set(err, SHAPE_EINTERNAL, "restore into a used quantile sketch");
    SHAPE_RETURN_NOT_OK(reserve_levels(s, levels, err));
    size_t at = 0;
    uint64_t weight = 0;
    for (size_t l = 0; l < levels; l++) {
        SHAPE_RETURN_NOT_OK(reserve_items(&s->lev[l], lens[l], err));
        for (size_t j = 0; j < lens[l]; j++) {
            double x = items[at + j];
            if (x != x) return shape_err_set(err, SHAPE_EINVAL, "NaN in a quantile sketch");
        }
        if (lens[l]) memcpy(s->lev[l].v, items + at, lens[l] * sizeof(double));
        s->lev[l].len = lens[l];
        at += lens[l];
        if (lens[l] > (UINT64_MAX >> 1) >> l) return shape_err_set(err, SHAPE_EINVAL, "quantile sketch weight overflows");
        weight += (uint64_t)lens[l] << l;
        if (weight > (uint64_t)INT64_MAX) return shape_err_set(err, SHAPE_EINVAL, "quantile sketch weight overflows");
    }
    s->nlev = levels;
    s->size = at;
    s->n = (int64_t)weight;
    s->compactions = compactions;
    recompute_capacity(s);
    if (s->size > s->total_cap)
        return shape_err_set(err, SHAPE_EINVAL, "quantile sketch holds more items than its capacity");
    return SHAPE_OK;
}

/* gen_alloc.c — split N child rows over P parent rows with no per-row state.
 *
 * Why: parent/child tables must agree both ways without storing either side:
 * an order must know its lines (order_total is their sum), a line its order,
 * a customer its addresses (shipping address) and an order its customer, and
 * the children per parent must follow a distribution (Poisson for lines and
 * addresses, a capped Pareto for orders per customer) while the totals are
 * exactly the preset's row counts. Counting balls thrown into bins would need
 * the whole table; this needs ~2 KB at any scale.
 * How (see shape/generate.h): parents are ranked; ranks are split into groups
 * by child count k with exact integer group sizes (rounded from the target
 * distribution, then nudged between neighbouring k until the child total is
 * exact). Each group puts floor(G / nblocks) parents in every one of
 * `nblocks` identical blocks and the remainder in a tail after them, so a
 * rank or child number finds its block with one division and its group by a
 * binary search over a block's prefix sums (~128 entries at most). Nothing
 * else is stored: ~4 KB at any scale.
 */
#include "shape/generate.h"

static void layout_add(shape_gen_alloc_layout *l, uint32_t k, uint64_t n)
{
    if (n == 0) return;
    uint32_t g = l->ngroups++;
    l->k[g] = k;
    l->p[g + 1] = l->p[g] + n;
    l->c[g + 1] = l->c[g] + n * k;
}

/* Last group g with v[g] <= x (v[0] = 0 <= x). */
static uint32_t find_group(const uint64_t *v, uint32_t ngroups, uint64_t x)
{
    uint32_t lo = 0, hi = ngroups; /* answer in [lo, hi) */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (v[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int shape_gen_alloc_init(shape_gen_alloc *a, uint64_t parents, uint64_t children, const double *q,
                         uint32_t kmax, shape_err *err)
{
    if (kmax > SHAPE_GEN_ALLOC_MAX_K)
        return shape_err_set(err, SHAPE_EINVAL, "allocation: at most %d children per parent",
                             SHAPE_GEN_ALLOC_MAX_K);
    if (children > 0 && parents == 0)
        return shape_err_set(err, SHAPE_EINVAL, "allocation: %llu children but no parents",
                             (unsigned long long)children);
    if ((unsigned __int128)kmax * parents < children)
        return shape_err_set(err, SHAPE_EINVAL,
                             "allocation: %llu children cannot fit %llu parents with at most %u each",
                             (unsigned long long)children, (unsigned long long)parents, kmax);
    double sum = 0.0;
    for (uint32_t k = 0; k <= kmax; k++) {
        if (!(q[k] >= 0.0)) return shape_err_set(err, SHAPE_EINVAL, "allocation: negative weight");
        sum += q[k];
    }
    if (!(sum > 0.0)) return shape_err_set(err, SHAPE_EINVAL, "allocation: weights sum to 0");

    uint64_t cnt[SHAPE_GEN_ALLOC_MAX_K + 1];
    double frac[SHAPE_GEN_ALLOC_MAX_K + 1], target[SHAPE_GEN_ALLOC_MAX_K + 1];
    uint64_t given = 0;
    for (uint32_t k = 0; k <= kmax; k++) {
        double x = (double)parents * (q[k] / sum);
        target[k] = x;
        cnt[k] = (uint64_t)x;
        frac[k] = x - (double)cnt[k];
        given += cnt[k];
    }
    /* Largest remainders get the parents rounding left over. */
    while (given < parents) {
        uint32_t best = 0;
        for (uint32_t k = 1; k <= kmax; k++)
            if (frac[k] > frac[best]) best = k;
        cnt[best]++;
        frac[best] = -1.0;
        given++;
    }
    while (given > parents) { /* only through floating error */
        uint32_t best = 0;
        for (uint32_t k = 1; k <= kmax; k++)
            if (cnt[k] > cnt[best]) best = k;
        cnt[best]--;
        given--;
    }
    /* Nudge parents between neighbouring counts until the children are exact.
     * The gap is a rounding error (a few times kmax), so few moves happen;
     * each move goes from the group most above its target to a neighbour
     * most below its own, so the shape moves as little as possible. */
    __int128 total = 0;
    for (uint32_t k = 0; k <= kmax; k++) total += (__int128)k * cnt[k];
    __int128 gap = (__int128)children - total;
    while (gap != 0) {
        int up = gap > 0;
        int best = -1;
        double best_score = 0.0;
        for (uint32_t k = 0; k <= kmax; k++) {
            if (cnt[k] == 0 || (up && k == kmax) || (!up && k == 0)) continue;
            uint32_t to = up ? k + 1 : k - 1;
            double score = ((double)cnt[k] - target[k]) + (target[to] - (double)cnt[to]);
            if (best < 0 || score > best_score) {
                best = (int)k;
                best_score = score;
            }
        }
        if (best < 0)
            return shape_err_set(err, SHAPE_EINTERNAL, "allocation: cannot reach %llu children",
                                 (unsigned long long)children);
        /* One parent at a time while the gap is small; big gaps (only from a
         * q whose mean is far from children/parents) move in chunks. */
        __int128 want = up ? gap : -gap;
        uint64_t m = 1;
        if (want > 4096 && cnt[best] / 16 > 1) m = cnt[best] / 16;
        if ((__int128)m > want) m = (uint64_t)want;
        cnt[best] -= m;
        cnt[up ? best + 1 : best - 1] += m;
        gap += up ? -(__int128)m : (__int128)m;
    }

    a->parents = parents;
    a->children = children;
    a->nblocks = parents / 4096 > 0 ? parents / 4096 : 1;
    a->block.ngroups = a->tail.ngroups = 0;
    a->block.p[0] = a->block.c[0] = a->tail.p[0] = a->tail.c[0] = 0;
    for (int k = (int)kmax; k >= 0; k--) {
        layout_add(&a->block, (uint32_t)k, cnt[k] / a->nblocks);
        layout_add(&a->tail, (uint32_t)k, cnt[k] % a->nblocks);
    }
    return SHAPE_OK;
}

void shape_gen_alloc_parent(const shape_gen_alloc *a, uint64_t rank, shape_gen_alloc_run *run)
{
    const shape_gen_alloc_layout *l = &a->block;
    uint64_t bp = l->p[l->ngroups], bc = l->c[l->ngroups];
    uint64_t base_p, base_c, off;
    if (bp > 0 && rank < a->nblocks * bp) {
        uint64_t b = rank / bp;
        base_p = b * bp;
        base_c = b * bc;
    } else {
        l = &a->tail;
        base_p = a->nblocks * bp;
        base_c = a->nblocks * bc;
    }
    off = rank - base_p;
    uint32_t g = find_group(l->p, l->ngroups, off);
    run->rank = base_p + l->p[g];
    run->len = l->p[g + 1] - l->p[g];
    run->child = base_c + l->c[g];
    run->k = l->k[g];
}

void shape_gen_alloc_child(const shape_gen_alloc *a, uint64_t child, shape_gen_alloc_run *run)
{
    const shape_gen_alloc_layout *l = &a->block;
    uint64_t bp = l->p[l->ngroups], bc = l->c[l->ngroups];
    uint64_t base_p, base_c;
    if (bc > 0 && child < a->nblocks * bc) {
        uint64_t b = child / bc;
        base_p = b * bp;
        base_c = b * bc;
    } else {
        l = &a->tail;
        base_p = a->nblocks * bp;
        base_c = a->nblocks * bc;
    }
    /* Groups with k = 0 span no children and come last, so the last group
     * starting at or before the offset is the one holding it. */
    uint32_t g = find_group(l->c, l->ngroups, child - base_c);
    while (g > 0 && l->k[g] == 0) g--;
    run->rank = base_p + l->p[g];
    run->len = l->p[g + 1] - l->p[g];
    run->child = base_c + l->c[g];
    run->k = l->k[g];
}

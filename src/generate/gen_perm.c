/* gen_perm.c — keyed pseudo-random permutations of [0, n) without tables.
 *
 * Why: several columns need a bijection rather than independent draws: Zipf
 * ranks must land on scattered ids (rank 1 is not always product 1), order
 * rows must reach their customers in a scattered order, and the inverse
 * must be cheap too (a customer finding its own addresses). A shuffled array
 * would grow with the table; this costs 32 bytes at any n.
 * How: an unbalanced Feistel network over the smallest number of bits b with
 * 2^b >= n, split into a high half of floor(b/2) bits and a low half of
 * ceil(b/2) bits; rounds alternately xor a keyed function of one half into
 * the other (each round is its own inverse given the other half, so the
 * network is a bijection of [0, 2^b)). Outputs outside [0, n) are fed
 * through again ("cycle walking"), which keeps it a bijection of [0, n);
 * the domain is below 2n, so a value takes under 2 passes on average. The
 * round function is one multiply and a shift: this scatters rows, it is
 * not cryptography.
 */
#include "shape/generate.h"

void shape_gen_perm_init(shape_gen_perm *p, uint64_t n, shape_gen_stream s)
{
    p->n = n;
    unsigned bits = 0;
    while (bits < 64 && ((uint64_t)1 << bits) < n) bits++;
    if (bits < 2) bits = 2;
    p->hi_bits = bits / 2;
    p->lo_bits = bits - p->hi_bits;
    p->lo_mask = ((uint64_t)1 << p->lo_bits) - 1;
    p->hi_mask = ((uint64_t)1 << p->hi_bits) - 1;
    for (int r = 0; r < 4; r++)
        p->keys[r] = shape_gen_u64(s, 0x7065726dULL /* "perm" */, (uint32_t)r) | 1;
}

/* Keyed round function: the top bits of one multiply. */
static inline uint64_t round_fn(uint64_t key, uint64_t half, unsigned out_bits)
{
    uint64_t t = (half + key) * 0x9e3779b97f4a7c15ULL;
    t ^= t >> 29;
    t *= key;
    return t >> (64 - out_bits);
}

static inline uint64_t feistel(const shape_gen_perm *p, uint64_t x)
{
    uint64_t hi = x >> p->lo_bits, lo = x & p->lo_mask;
    hi ^= round_fn(p->keys[0], lo, p->hi_bits);
    lo ^= round_fn(p->keys[1], hi, p->lo_bits);
    hi ^= round_fn(p->keys[2], lo, p->hi_bits);
    lo ^= round_fn(p->keys[3], hi, p->lo_bits);
    return (hi << p->lo_bits) | lo;
}

static inline uint64_t feistel_inv(const shape_gen_perm *p, uint64_t y)
{
    uint64_t hi = y >> p->lo_bits, lo = y & p->lo_mask;
    lo ^= round_fn(p->keys[3], hi, p->lo_bits);
    hi ^= round_fn(p->keys[2], lo, p->hi_bits);
    lo ^= round_fn(p->keys[1], hi, p->lo_bits);
    hi ^= round_fn(p->keys[0], lo, p->hi_bits);
    return (hi << p->lo_bits) | lo;
}

uint64_t shape_gen_perm_apply(const shape_gen_perm *p, uint64_t x)
{
    if (p->n <= 1) return 0;
    do x = feistel(p, x);
    while (x >= p->n);
    return x;
}

uint64_t shape_gen_perm_invert(const shape_gen_perm *p, uint64_t y)
{
    if (p->n <= 1) return 0;
    do y = feistel_inv(p, y);
    while (y >= p->n);
    return y;
}

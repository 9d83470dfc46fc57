/* shape/generate.h — the deterministic generator core: a counter-based random
 * source, the sampling strategies synthetic domains are built from, and the
 * neutral typed row every generated table is written into.
 *
 * Why: `shape emit` must be able to produce any row of any table on its own —
 * to resume a stream byte-identically, to split one stream over processes, to
 * keep memory flat at every scale preset. So no draw may depend on the draws
 * before it: every random number is a pure function of
 *     (seed, table, column, stream label, row, draw index).
 *
 * How:
 *   - shape_gen_stream_make hashes (seed, table, column, label) once into a
 *     64-bit key. shape_gen_u64(stream, row, i) mixes key, row and i through a
 *     SplitMix64-style finaliser chain; it is the only source of randomness.
 *     Uniform doubles take the top 53 bits; bounded integers use Lemire's
 *     multiply-shift with rejection (no modulo bias).
 *   - Strategies (alias tables, Zipf, normal/log-normal, geometric, Poisson,
 *     uniform instants, the seasonal date model, pseudo-random permutations,
 *     parent→children allocations) take a stream and a row and are pure.
 *     Their tables are built once per column and are read-only afterwards,
 *     so one built object can be shared between threads.
 *   - Lookups (a line's unit price from its product) and formulas (line
 *     totals) need no strategy object: since every value is a pure function
 *     of its row, a domain recomputes the looked-up value through the same
 *     function the parent table uses (see src/generate/retail/).
 *   - Arithmetic that shapes values (log, exp, sqrt) is our own portable code
 *     built from IEEE +,-,*,/ only, so output does not change with the libm
 *     of the machine: a stream resumed elsewhere continues byte-identically.
 *
 * Ownership: every struct here is caller-owned, plain data, and holds no
 * pointer to the caller's memory except where stated (shape_gen_seasonal owns
 * a heap table freed by shape_gen_seasonal_free). No global state anywhere.
 */
#ifndef SHAPE_GENERATE_H
#define SHAPE_GENERATE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Random source                                                             */
/* ------------------------------------------------------------------------ */

/* One keyed stream: (seed, table, column, label) hashed once. */
typedef struct shape_gen_stream {
    uint64_t key;
} shape_gen_stream;

/* 64-bit hash of a byte string (FNV-1a followed by a strong finaliser). */
uint64_t shape_gen_hash(const void *data, size_t len);

/* The stream keyed by seed and three names; any name may be NULL ("").
 * Cheap (a few hashes), but meant to be called once per column at open. */
shape_gen_stream shape_gen_stream_make(uint64_t seed, const char *table, const char *column,
                                       const char *label);

/* Stafford's "Mix13" finaliser (as in SplitMix64): a bijection on 64 bits
 * whose output bits each depend on every input bit. */
static inline uint64_t shape_gen_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Draw number i of row `row` in stream s: uniform over all 64-bit values.
 * Two mixing rounds: the first separates rows, the second separates draws
 * of one row, so no (row, i) pair aliases another within a stream. */
static inline uint64_t shape_gen_u64(shape_gen_stream s, uint64_t row, uint32_t i)
{
    uint64_t x = shape_gen_mix64(s.key + row * 0x9e3779b97f4a7c15ULL);
    return shape_gen_mix64(x ^ (s.key >> 1) ^ ((uint64_t)i * 0xd1b54a32d192ed03ULL + 0x632be59bd9b4e019ULL));
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double shape_gen_unit(shape_gen_stream s, uint64_t row, uint32_t i)
{
    return (double)(shape_gen_u64(s, row, i) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n >= 1, without modulo bias (Lemire 2019).
 * A rejected draw (probability < n / 2^64) retries with draw indices
 * i + 2^24, i + 2 * 2^24, ... so callers should keep i < 2^24. */
uint64_t shape_gen_below_slow(shape_gen_stream s, uint64_t row, uint32_t i, uint64_t n);

static inline uint64_t shape_gen_below(shape_gen_stream s, uint64_t row, uint32_t i, uint64_t n)
{
    unsigned __int128 m = (unsigned __int128)shape_gen_u64(s, row, i) * n;
    if ((uint64_t)m < n) return shape_gen_below_slow(s, row, i, n);
    return (uint64_t)(m >> 64);
}

/* True with probability p (p <= 0 never, p >= 1 always). Used for null
 * rates: `shape_gen_chance(null_stream, row, 0, 0.05)`. */
static inline int shape_gen_chance(shape_gen_stream s, uint64_t row, uint32_t i, double p)
{
    if (p <= 0.0) return 0;
    if (p >= 1.0) return 1;
    return shape_gen_unit(s, row, i) < p;
}

/* ------------------------------------------------------------------------ */
/* Portable math (IEEE +,-,*,/ only; identical results on every platform)    */
/* ------------------------------------------------------------------------ */

double shape_gen_log(double x);   /* natural log; x <= 0 gives -inf / NaN   */
double shape_gen_log1p(double x); /* log(1 + x), accurate for small x        */
double shape_gen_exp(double x);   /* e^x; overflow +inf, underflow 0         */
double shape_gen_expm1(double x); /* e^x - 1, accurate for small x           */
double shape_gen_sqrt(double x);  /* x >= 0                                  */
double shape_gen_pow(double x, double y); /* x > 0 only                      */
/* Round to `scale` decimals, half away from zero (|x| < 2^53 / 10^scale,
 * scale <= 9); the result is the double nearest to the decimal. In line:
 * the schema engine rounds every decimal it makes (a call each cost more
 * than the rounding). */
static inline double shape_gen_round_scale(double x, int scale)
{
    static const double pow10[10] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    if (scale < 0) scale = 0;
    if (scale > 9) scale = 9;
    double p = pow10[scale];
    double v = x * p;
    if (!(v < 9007199254740992.0 && v > -9007199254740992.0)) return x;
    int64_t n = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
    return (double)n / p;
}
/* x rounded to cents as an integer number of cents (half away from zero). */
int64_t shape_gen_cents(double x);

/* ------------------------------------------------------------------------ */
/* Distributions                                                             */
/* ------------------------------------------------------------------------ */

/* Standard normal by inversion of the CDF (one uniform per value; Acklam's
 * rational approximation, relative error < 1.2e-9). */
double shape_gen_normal(shape_gen_stream s, uint64_t row, uint32_t i);

/* clip(exp(Normal(mu, sigma)), lo, hi) — lo/hi may be -inf/+inf. */
double shape_gen_lognormal(shape_gen_stream s, uint64_t row, uint32_t i, double mu, double sigma,
                           double lo, double hi);

/* Geometric on 1, 2, ... with success probability p (0 < p <= 1), clipped
 * to [lo, hi]. */
int64_t shape_gen_geometric(shape_gen_stream s, uint64_t row, uint32_t i, double p, int64_t lo,
                            int64_t hi);

/* Poisson(lambda) by inversion (lambda <= 64, uses one uniform) or by a
 * rounded normal approximation (lambda > 64), clipped to [lo, hi]. */
int64_t shape_gen_poisson(shape_gen_stream s, uint64_t row, uint32_t i, double lambda, int64_t lo,
                          int64_t hi);

/* Pareto (Lomax) rank: a Lomax(alpha) draw cut at its `cut` quantile (e.g.
 * 0.995) and scaled onto [0, n): small ranks are the heavy ones. */
uint64_t shape_gen_pareto_rank(shape_gen_stream s, uint64_t row, uint32_t i, double alpha,
                               double cut, uint64_t n);

/* Weighted enum by Walker/Vose's alias method: one 64-bit draw per value.
 * Built once per column; read-only afterwards. */
#define SHAPE_GEN_ALIAS_MAX 64
typedef struct shape_gen_alias {
    uint32_t n;
    uint32_t alias[SHAPE_GEN_ALIAS_MAX];
    uint64_t keep[SHAPE_GEN_ALIAS_MAX]; /* keep bucket i when the fraction < keep[i] */
} shape_gen_alias;

/* Build from n (1..SHAPE_GEN_ALIAS_MAX) non-negative weights with a positive
 * sum (they need not sum to 1). */
int shape_gen_alias_init(shape_gen_alias *a, const double *weights, size_t n, shape_err *err);

static inline uint32_t shape_gen_alias_draw(const shape_gen_alias *a, shape_gen_stream s,
                                            uint64_t row, uint32_t i)
{
    unsigned __int128 m = (unsigned __int128)shape_gen_u64(s, row, i) * a->n;
    uint32_t bucket = (uint32_t)(m >> 64);
    return (uint64_t)m < a->keep[bucket] ? bucket : a->alias[bucket];
}

/* Zipf over ranks 1..n with P(k) ∝ k^-exponent. The first (up to) 255
 * ranks and "the rest" form an alias table (one draw for ~95 % of values
 * at exponent 1.5); the rest is sampled by Hörmann and Derflinger's
 * rejection-inversion restricted to the tail (O(1) for any n, ~1.1 draws),
 * so even the 500,000 products of `xxxl` need only this 3 KB struct. */
#define SHAPE_GEN_ZIPF_HEAD 255
typedef struct shape_gen_zipf {
    uint64_t n;
    double exponent;
    uint32_t head;                /* ranks 1..head in the table; bucket `head` = tail */
    double tail_lo, tail_hi, s;   /* rejection-inversion over ranks head+1..n */
    uint32_t alias[SHAPE_GEN_ZIPF_HEAD + 1];
    uint64_t keep[SHAPE_GEN_ZIPF_HEAD + 1];
} shape_gen_zipf;

int shape_gen_zipf_init(shape_gen_zipf *z, uint64_t n, double exponent, shape_err *err);
/* A rank in 1..n. Uses draw index i, and i+1, i+2, ... for the tail (at
 * most 64 of them). */
uint64_t shape_gen_zipf_draw(const shape_gen_zipf *z, shape_gen_stream s, uint64_t row, uint32_t i);

/* ------------------------------------------------------------------------ */
/* Pseudo-random permutation of [0, n)                                       */
/* ------------------------------------------------------------------------ */

/* A keyed bijection of [0, n): a 4-round unbalanced Feistel network over the
 * smallest bit width covering n (so the domain is < 2n) with cycle walking.
 * Used to scatter ranks over ids (Zipf rank k → product id) and rows over
 * slots without any table. */
typedef struct shape_gen_perm {
    uint64_t n;
    unsigned lo_bits, hi_bits; /* the two halves of the domain's bits */
    uint64_t lo_mask, hi_mask;
    uint64_t keys[4];
} shape_gen_perm;

void shape_gen_perm_init(shape_gen_perm *p, uint64_t n, shape_gen_stream s);
uint64_t shape_gen_perm_apply(const shape_gen_perm *p, uint64_t x);   /* x < n */
uint64_t shape_gen_perm_invert(const shape_gen_perm *p, uint64_t y);  /* y < n */

/* ------------------------------------------------------------------------ */
/* Stateless parent → children allocation                                    */
/* ------------------------------------------------------------------------ */

/* Splits exactly `children` child rows over `parents` parent rows so that the
 * number of children per parent follows a given distribution q[0..kmax],
 * and lets either side be found from the other in O(log groups) time with
 * no per-row state:
 *   - parents are taken in "rank" order (callers map ranks to ids through a
 *     shape_gen_perm); group k holds round(parents * q[k]) ranks, adjusted so
 *     that the counts sum to `parents` and sum(k * count) to `children`;
 *   - ranks are cut into `nblocks` identical blocks of about 4096 parents:
 *     a group of G parents puts floor(G / nblocks) in every block, so every
 *     block has the same mix and the same number of children (child counts
 *     never drift along the table); the G mod nblocks parents left over form
 *     a short tail after the last block; inside a block (and the tail)
 *     groups are laid out by descending k;
 *   - children are numbered in rank order, so the children of one parent are
 *     consecutive child rows.
 * Both look-ups are a division by the block size and a binary search over
 * the groups' prefix sums. */
#define SHAPE_GEN_ALLOC_MAX_K 127
typedef struct shape_gen_alloc_layout {
    uint32_t ngroups;                            /* groups present, by descending k */
    uint32_t k[SHAPE_GEN_ALLOC_MAX_K + 1];       /* children per parent of group g */
    uint64_t p[SHAPE_GEN_ALLOC_MAX_K + 2];       /* parents before group g (p[ngroups] = all) */
    uint64_t c[SHAPE_GEN_ALLOC_MAX_K + 2];       /* children before group g */
} shape_gen_alloc_layout;

typedef struct shape_gen_alloc {
    uint64_t parents, children;
    uint64_t nblocks;
    shape_gen_alloc_layout block; /* one full block; block.p/c[ngroups] = its size */
    shape_gen_alloc_layout tail;  /* the leftovers, after nblocks full blocks */
} shape_gen_alloc;

/* q[0..kmax] are non-negative weights (normalised here), kmax <=
 * SHAPE_GEN_ALLOC_MAX_K. Fails (SHAPE_EINVAL) when children > kmax * parents
 * or children > 0 with no parents. */
int shape_gen_alloc_init(shape_gen_alloc *a, uint64_t parents, uint64_t children, const double *q,
                         uint32_t kmax, shape_err *err);

/* A run: `len` consecutive parent ranks from `rank`, each with `k` children,
 * the first child being `child`. Look-ups return the run that contains the
 * asked item, so a sequential reader can step through it without asking
 * again. */
typedef struct shape_gen_alloc_run {
    uint64_t rank, len, child;
    uint32_t k;
} shape_gen_alloc_run;

/* The run holding parent rank `rank` (< parents). The parent's children are
 * child + (rank - run.rank) * k, ... k of them. */
void shape_gen_alloc_parent(const shape_gen_alloc *a, uint64_t rank, shape_gen_alloc_run *run);
/* The run holding child `child` (< children); its parent rank is
 * run.rank + (child - run.child) / k and its index among its siblings
 * (child - run.child) % k. */
void shape_gen_alloc_child(const shape_gen_alloc *a, uint64_t child, shape_gen_alloc_run *run);

/* Children-per-parent distribution of a Pareto-skewed foreign key with a cap:
 * parents ranked by a Lomax(alpha) density cut at quantile `cut`, each
 * getting Poisson(mean * density(rank) + e) children capped at `cap`, where
 * the uniform extra e re-spreads what the cap removed (as a row-sequential
 * capping pass that moves excess children to random parents would) so that
 * the mean stays `mean`. Writes q[0..cap] (cap <= SHAPE_GEN_ALLOC_MAX_K).
 * When mean >= cap every parent gets mean children (q concentrated).
 *
 * Tenure: with tenure_cdf non-NULL, each parent also has a tenure tau,
 * uniform over (0, 1] (e.g. the share of the date range it has been a
 * customer), and its expected count is scaled by 2 tau (long-standing
 * customers have ordered more). tenure_cdf[k * cells + j] receives
 * P(tau <= (j + 1) / cells | k children), so a caller that allocated k
 * children to a parent draws a tenure consistent with it (and the tenures of
 * all parents stay uniform). cells <= SHAPE_GEN_TENURE_CELLS_MAX. */
#define SHAPE_GEN_TENURE_CELLS_MAX 64
void shape_gen_pareto_counts(double *q, uint32_t cap, double mean, double alpha, double cut,
                             double *tenure_cdf, uint32_t cells);

/* Poisson(lambda) probabilities truncated to 0..kmax (renormalised). */
void shape_gen_poisson_counts(double *q, uint32_t kmax, double lambda);

/* ------------------------------------------------------------------------ */
/* Time                                                                      */
/* ------------------------------------------------------------------------ */

#define SHAPE_GEN_NS_PER_SEC 1000000000LL
#define SHAPE_GEN_NS_PER_DAY 86400000000000LL

/* Dates: shape_days_from_civil / shape_civil_from_days (shape/timestamp.h). */
/* 0 = Monday ... 6 = Sunday. */
unsigned shape_gen_weekday(int64_t days);

/* Uniform instant in [start_ns, end_ns) to the microsecond (start_ns a whole
 * microsecond). */
int64_t shape_gen_instant_us(shape_gen_stream s, uint64_t row, uint32_t i, int64_t start_ns,
                             int64_t end_ns);

/* The seasonal date model: a day of [first_day, first_day + ndays) drawn with
 * weight month_w[month] * weekday_w[weekday], shared equally by the days of
 * that (month, weekday) bucket (a bucket without days gives its mass to the
 * others by normalisation); then an hour from 24 weights made of equally
 * weighted Gaussian peaks (wrapped around midnight); then a uniform whole
 * second of that hour. Owns a heap table of ndays doubles. */
#define SHAPE_GEN_SEASONAL_GUIDE 2048
typedef struct shape_gen_seasonal {
    int64_t first_day;
    uint32_t ndays;
    double *cdf;     /* cdf[d] = P(day <= d); owned (one block with guide) */
    uint32_t *guide; /* guide[b] = first d with cdf[d] > b / SHAPE_GEN_SEASONAL_GUIDE */
    shape_gen_alias hours;
    double hour_cdf[24]; /* P(hour <= h), for the quantile below */
} shape_gen_seasonal;

int shape_gen_seasonal_init(shape_gen_seasonal *m, int64_t first_day, uint32_t ndays,
                            const double month_w[12], const double weekday_w[7],
                            const double *peak_hours, size_t npeaks, double sigma_hours,
                            shape_err *err);
void shape_gen_seasonal_free(shape_gen_seasonal *m);
/* An instant (ns since epoch, whole seconds) >= not_before_ns: the day is
 * drawn from the model restricted to days on or after not_before's day
 * (INT64_MIN for no bound); an instant still before the bound is moved up to
 * the next whole second after it. Uses draw indices i, i+1, i+2. */
int64_t shape_gen_seasonal_draw(const shape_gen_seasonal *m, shape_gen_stream s, uint64_t row,
                                uint32_t i, int64_t not_before_ns);

/* The model's quantile: the instant (ns, whole seconds) at cumulative
 * probability t in [0, 1): the day from the day table, the hour from the
 * hours' cumulative weights, the second from what is left of t. The same
 * month, weekday and hour profile as a draw, and non-decreasing in t, so
 * rows dated at the quantile of (row + u) / rows are in time order by
 * construction (the retail timeline, docs/EMIT.md "Event-time order"). */
int64_t shape_gen_seasonal_quantile(const shape_gen_seasonal *m, double t);
/* Its inverse: the model's probability of an instant before t_ns (whole
 * seconds; 0 before the range, 1 after), so a row at quantile (row + u) /
 * rows dated t is near row rows × shape_gen_seasonal_cdf(t). */
double shape_gen_seasonal_cdf(const shape_gen_seasonal *m, int64_t t_ns);

/* Derived days: source_ns plus a whole number of days round(exp(Normal(mu,
 * sigma))) clipped to [min_days, max_days] (e.g. a return 1..90 days after
 * its order). */
int64_t shape_gen_add_lognormal_days(shape_gen_stream s, uint64_t row, uint32_t i, int64_t source_ns,
                                     double mu, double sigma, int64_t min_days, int64_t max_days);

/* ------------------------------------------------------------------------ */
/* Neutral typed rows                                                        */
/* ------------------------------------------------------------------------ */

/* A column's type, and the kind of a value (SHAPE_GEN_NULL or its type). */
enum shape_gen_kind {
    SHAPE_GEN_NULL = 0,
    SHAPE_GEN_INT64 = 1,
    SHAPE_GEN_FLOAT64 = 2,
    SHAPE_GEN_STRING = 3,       /* UTF-8, not NUL-terminated: use len */
    SHAPE_GEN_TIMESTAMP_NS = 4, /* int64 ns since 1970-01-01T00:00:00 UTC */
    SHAPE_GEN_BOOL = 5
};

typedef struct shape_gen_value {
    uint8_t kind;  /* enum shape_gen_kind */
    uint32_t len;  /* SHAPE_GEN_STRING: byte length */
    union {
        int64_t i; /* INT64, TIMESTAMP_NS */
        double f;  /* FLOAT64 */
        const char *s; /* STRING: static reference data or the row's scratch */
        int b;     /* BOOL: 0 or 1 */
    } v;
} shape_gen_value;

typedef struct shape_gen_column {
    const char *name;  /* static */
    uint8_t type;      /* enum shape_gen_kind, never SHAPE_GEN_NULL */
    uint8_t nullable;
} shape_gen_column;

#define SHAPE_GEN_MAX_COLUMNS 16
#define SHAPE_GEN_SCRATCH_BYTES 1024

/* Caller-owned row buffer (stack or heap, reused row after row). A row call
 * fills ncols values; string values point into `scratch` or into static
 * reference data, so they are valid until the buffer is filled again. */
typedef struct shape_gen_row {
    size_t ncols;
    shape_gen_value values[SHAPE_GEN_MAX_COLUMNS];
    size_t scratch_used;
    char scratch[SHAPE_GEN_SCRATCH_BYTES];
} shape_gen_row;

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

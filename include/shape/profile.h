/* shape/profile.h — the profile engine: sketches, column and table profilers,
 * the profile document, and a mergeable profiler state.
 *
 * Why: `shape stream-profile` profiles a stream of Arrow record batches in
 * bounded memory (memory does not grow with the number of rows), and N
 * workers over disjoint Kafka partitions must be able to merge their states
 * into the profile of the whole topic. reference/spec-core.md §1.10 defines
 * the statistics; this header is their C form.
 *
 * How, in layers (each usable alone):
 *   1. sketches: canonical hashing (XXH3-64, seed 0, over a tagged byte form),
 *      HyperLogLog (p = 14, Ertl's improved estimator), SpaceSaving (top
 *      values, 64 counters), KLL (quantiles, k = 200, deterministic
 *      compaction), streaming moments (per batch: mean and corrected sum of
 *      squared deviations; Chan's formula to merge), text length histogram,
 *      the 12 text patterns, UTC calendar histograms;
 *   2. shape_profile: one table; routes each column of a struct batch
 *      (ArrowSchema + ArrowArray) to a profiler chosen by its Arrow type
 *      (int, float, bool, text, temporal, other);
 *   3. the profile document (strict JSON, jansson), the binary state
 *      (save/load, byte-exact round trip), and merge.
 *
 * Ownership: every `_new` hands the caller a handle it frees with the
 * matching `_free` (NULL allowed). Input pointers (values, Arrow structs) are
 * only read during the call; nothing keeps them. Outputs documented as
 * "malloc'd" are the caller's to free(); json_t results are the caller's to
 * json_decref(). Pointers a query returns into a handle (text keys of
 * SpaceSaving items) stay valid until the handle is next changed or freed.
 *
 * Threads: a handle is used by one thread at a time; distinct handles are
 * independent (no global state).
 */
#ifndef SHAPE_PROFILE_H
#define SHAPE_PROFILE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>


#include "shape/arrow.h"
#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct json_t; /* jansson's value type: the document functions below exchange it */

/* ------------------------------------------------------------------------ */
/* Fixed parameters (all part of a state's configuration fingerprint)       */
/* ------------------------------------------------------------------------ */

#define SHAPE_HLL_P 14
#define SHAPE_HLL_REGISTERS (1 << SHAPE_HLL_P)    /* 16384 one-byte registers */
#define SHAPE_HLL_MAX_RANK (64 - SHAPE_HLL_P + 1) /* 51 */
#define SHAPE_HLL_RELATIVE_ERROR 0.008125         /* 1.04 / sqrt(16384) */
#define SHAPE_SS_CAPACITY 64                      /* SpaceSaving counters per column */
#define SHAPE_SS_MAX_CAPACITY 4096                /* largest capacity shape_ss_new takes */
#define SHAPE_KLL_K 200
#define SHAPE_PROFILE_TOP_N 500                   /* default top_n (entries <= min(top_n, 64)) */
#define SHAPE_PATTERN_MAX_BYTES 200               /* longer text values are not pattern-tested */
#define SHAPE_PROFILE_STATE_VERSION 2             /* binary state format version (1 is still read) */

/* ------------------------------------------------------------------------ */
/* 1. Canonical hashing                                                      */
/* ------------------------------------------------------------------------ */

/* XXH3-64 (seed 0) of one tag byte + payload:
 *   int 1 + int64 LE; uint 2 + uint64 LE; float 3 + double LE; string 4 +
 *   UTF-8 bytes; binary 5 + bytes; bool 6 + one byte 0/1; timestamp 7 +
 *   int64 µs LE.
 * A float that is integral hashes as the equal integer (1.0 == 1, -0.0 == 0;
 * [2^63, 2^64) as uint); NaN has no hash: callers exclude it. */
enum shape_hash_tag {
    SHAPE_HASH_INT = 1,
    SHAPE_HASH_UINT = 2,
    SHAPE_HASH_FLOAT = 3,
    SHAPE_HASH_STRING = 4,
    SHAPE_HASH_BINARY = 5,
    SHAPE_HASH_BOOL = 6,
    SHAPE_HASH_TIMESTAMP = 7
};

uint64_t shape_hash_int(int64_t v);
uint64_t shape_hash_double(double v); /* v must not be NaN */
uint64_t shape_hash_text(const void *p, size_t n);
uint64_t shape_hash_binary(const void *p, size_t n);
uint64_t shape_hash_bool(int v);
uint64_t shape_hash_timestamp(int64_t us);

/* ------------------------------------------------------------------------ */
/* 2. HyperLogLog (p = 14)                                                   */
/* ------------------------------------------------------------------------ */

/* Plain storage: embed it, copy it, compare it. Zeroed = empty. */
typedef struct shape_hll {
    uint8_t registers[SHAPE_HLL_REGISTERS];
} shape_hll;

void shape_hll_init(shape_hll *h);

/* Register = top 14 bits of the hash; rank = 1 + leading zeros of the other
 * 50 bits (51 when they are all zero); the register keeps the largest rank. */
static inline void shape_hll_add_hash(shape_hll *h, uint64_t hash)
{
    uint32_t idx = (uint32_t)(hash >> (64 - SHAPE_HLL_P));
    uint64_t rest = hash << SHAPE_HLL_P;
    uint8_t rank = rest ? (uint8_t)(__builtin_clzll(rest) + 1) : (uint8_t)SHAPE_HLL_MAX_RANK;
    if (rank > h->registers[idx]) h->registers[idx] = rank;
}

/* dst = elementwise max(dst, src). */
void shape_hll_merge(shape_hll *dst, const shape_hll *src);

/* Ertl's improved estimator (2017); 0.0 for an empty sketch. */
double shape_hll_estimate(const shape_hll *h);

/* ------------------------------------------------------------------------ */
/* 3. SpaceSaving (top values)                                               */
/* ------------------------------------------------------------------------ */

/* The kind of key a summary holds (one kind per summary). Timestamps are
 * int64 µs, kept apart from ints only so the state says what they are. */
typedef enum shape_ss_kind {
    SHAPE_SS_INT = 0,
    SHAPE_SS_DOUBLE = 1,
    SHAPE_SS_TEXT = 2,
    SHAPE_SS_TIMESTAMP = 3
} shape_ss_kind;

typedef struct shape_spacesaving shape_spacesaving;

/* A summary of `capacity` counters (1..SHAPE_SS_MAX_CAPACITY) for keys of
 * `kind`. Semantics (reference/spec-core.md §1.10): hit → count + 1; miss with
 * a free counter → (1, 0); miss when full → the counter with the smallest
 * count (ties: least recently updated) takes the new key with (min + 1, min).
 * Every entry satisfies count − error <= true count <= count, and
 * error <= n / capacity. */
int shape_ss_new(shape_ss_kind kind, int capacity, shape_spacesaving **out, shape_err *err);
void shape_ss_free(shape_spacesaving *s);

/* Add one occurrence. `hash` must be the canonical hash of the key
 * (shape_hash_int / _double / _text / _timestamp) — equal keys must have
 * equal hashes. Doubles: NaN must be excluded by the caller; -0.0 is stored
 * as 0.0. Text keys are copied (the summary owns its keys); text is the only
 * add that can fail (SHAPE_ENOMEM, summary unchanged). */
void shape_ss_add_int(shape_spacesaving *s, int64_t v, uint64_t hash);
void shape_ss_add_double(shape_spacesaving *s, double v, uint64_t hash);
int shape_ss_add_text(shape_spacesaving *s, const void *p, size_t n, uint64_t hash, shape_err *err);

typedef struct shape_ss_item {
    int64_t count;         /* upper bound of the true count */
    int64_t error;         /* largest possible overcount */
    int64_t i;             /* INT / TIMESTAMP keys */
    double d;              /* DOUBLE keys */
    const uint8_t *text;   /* TEXT keys: bytes owned by the summary */
    size_t text_len;
} shape_ss_item;

shape_ss_kind shape_ss_key_kind(const shape_spacesaving *s);
int shape_ss_capacity(const shape_spacesaving *s);
size_t shape_ss_size(const shape_spacesaving *s);       /* counters in use */
int64_t shape_ss_total(const shape_spacesaving *s);     /* occurrences added (n) */
int64_t shape_ss_min_count(const shape_spacesaving *s); /* smallest count if full, else 0 */

/* Write the entries to out[0 .. size) sorted by count descending, then key
 * ascending (numbers by value, text by bytes = by code point); returns the
 * number written. `out` must hold shape_ss_capacity() items. */
size_t shape_ss_items(const shape_spacesaving *s, shape_ss_item *out);

/* Merge src into dst (same kind and capacity, else SHAPE_EINVAL): a key
 * absent from a full summary is credited that summary's minimum count (as
 * count and as error), counts and errors add, the `capacity` largest counts
 * stay (ties by key order); among equal counts the smaller key counts as
 * the less recently updated afterwards. On failure dst is unchanged. */
int shape_ss_merge(shape_spacesaving *dst, const shape_spacesaving *src, shape_err *err);

/* ------------------------------------------------------------------------ */
/* 4. KLL quantiles                                                          */
/* ------------------------------------------------------------------------ */

typedef struct shape_kll shape_kll;

/* Level l holds items of weight 2^l; with L levels, level l holds at most
 * max(2, floor(k · 2^d / 3^d)) items, d = L − 1 − l (exact integer
 * arithmetic). When the items exceed the total capacity, the lowest level at
 * or over its capacity is compacted: sorted, its smallest item kept back if
 * the count is odd, every other item of the rest promoted, starting at index
 * 0 or 1 alternately (a counter of compactions: no randomness, runs are
 * reproducible). Total weight is preserved exactly. k in 2..65535. */
int shape_kll_new(int k, shape_kll **out, shape_err *err);
void shape_kll_free(shape_kll *s);

/* x must not be NaN. Fails only with SHAPE_ENOMEM (x then not added). */
int shape_kll_add(shape_kll *s, double x, shape_err *err);

/* shape_kll_add for xs[0..n) in order (the same sketch as n single adds);
 * on SHAPE_ENOMEM the values before the failing one are in. */
int shape_kll_add_values(shape_kll *s, const double *xs, size_t n, shape_err *err);

/* Merge = concatenate levels, then compress (same k, else SHAPE_EINVAL).
 * On failure dst may hold src's items uncompressed but is consistent. */
int shape_kll_merge(shape_kll *dst, const shape_kll *src, shape_err *err);

int shape_kll_k(const shape_kll *s);
int64_t shape_kll_n(const shape_kll *s);       /* items added (= total weight) */
size_t shape_kll_retained(const shape_kll *s); /* items held */
size_t shape_kll_num_levels(const shape_kll *s);
int64_t shape_kll_level_capacity(int k, size_t level, size_t levels);

/* For each q in qs[0..nq) (0 <= q <= 1): sort the retained (value, weight)
 * pairs, target = q · (total_weight − 1), the first value whose cumulative
 * weight exceeds the target (a retained sample, never interpolated). Empty
 * sketch: every out[i] is NaN. SHAPE_EINVAL for q outside [0, 1]. */
int shape_kll_quantiles(const shape_kll *s, const double *qs, size_t nq, double *out,
                        shape_err *err);

/* ------------------------------------------------------------------------ */
/* 5. Streaming moments                                                      */
/* ------------------------------------------------------------------------ */

/* count, mean and m2 (sum of squared deviations) of finite values. A
 * moment that overflowed is non-finite here and is written as null. */
typedef struct shape_moments {
    int64_t n;
    double mean;
    double m2;
} shape_moments;

/* Add a batch of n values (finite, contiguous): the batch's mean (Neumaier-
 * compensated sum / n) and its sum of squared deviations by the corrected
 * two-pass formula Σ(x−mean)² − (Σ(x−mean))²/n, then Chan's formula into m.
 * (More accurate than Welford's per-value update, which loses ~1e-8 relative
 * on data such as 1e9 + U(0,1); this is the reference's per-batch method.) */
void shape_moments_add_values(shape_moments *m, const double *x, size_t n);

/* Chan's parallel formula: dst = dst ∪ src (used across batches and states). */
void shape_moments_merge(shape_moments *dst, const shape_moments *src);

/* ------------------------------------------------------------------------ */
/* 6. Text: length (code points), length histogram, patterns                */
/* ------------------------------------------------------------------------ */

/* Code points in valid UTF-8 (bytes that are not continuation bytes). */
size_t shape_utf8_length(const uint8_t *s, size_t n);

/* Exact histogram of text lengths: dense below SHAPE_LENHIST_DENSE, a
 * sorted list above. Fields are private; use the functions. */
#define SHAPE_LENHIST_DENSE 256
typedef struct shape_lenhist_bin {
    int64_t length;
    int64_t count;
} shape_lenhist_bin;

typedef struct shape_lenhist {
    int64_t dense[SHAPE_LENHIST_DENSE];
    shape_lenhist_bin *sparse; /* lengths >= SHAPE_LENHIST_DENSE, ascending */
    size_t n_sparse, cap_sparse;
    int64_t count;  /* values */
    int64_t total;  /* sum of lengths (exact: code points of a batch fit int64) */
} shape_lenhist;

void shape_lenhist_init(shape_lenhist *h);
void shape_lenhist_free(shape_lenhist *h); /* frees the sparse list; h stays usable (empty) */
int shape_lenhist_add(shape_lenhist *h, int64_t length, int64_t times, shape_err *err);
int shape_lenhist_merge(shape_lenhist *dst, const shape_lenhist *src, shape_err *err);
/* Distinct lengths, ascending, written to out (malloc'd, caller frees; NULL
 * when empty); returns the count, or (size_t)-1 on allocation failure. */
size_t shape_lenhist_bins(const shape_lenhist *h, shape_lenhist_bin **out);
/* Linear interpolation over the sorted lengths (numpy "linear"), 0 <= q <= 1;
 * NaN when empty. */
double shape_lenhist_quantile(const shape_lenhist *h, double q);

/* The 12 patterns, in document order. */
enum shape_pattern {
    SHAPE_PATTERN_EMAIL = 0,
    SHAPE_PATTERN_UUID,
    SHAPE_PATTERN_SSN,
    SHAPE_PATTERN_MAC,
    SHAPE_PATTERN_IPV4,
    SHAPE_PATTERN_IPV6,
    SHAPE_PATTERN_IBAN,
    SHAPE_PATTERN_POSTAL,
    SHAPE_PATTERN_DATE,
    SHAPE_PATTERN_PHONE,
    SHAPE_PATTERN_CURRENCY,
    SHAPE_PATTERN_LANGUAGE,
    SHAPE_PATTERN_COUNT
};

/* "email", "uuid", ... (static storage); NULL out of range. */
const char *shape_pattern_name(int pattern);

/* Bit (1 << pattern) set for every pattern the whole value matches; 0 for
 * values longer than SHAPE_PATTERN_MAX_BYTES. ASCII classes only. */
unsigned shape_text_patterns(const uint8_t *s, size_t n);

/* ------------------------------------------------------------------------ */
/* 7. Temporal: UTC calendar parts and histograms                            */
/* ------------------------------------------------------------------------ */

typedef struct shape_civil {
    int64_t year;
    int month; /* 1..12 */
    int day;   /* 1..31 */
    int hour;  /* 0..23 */
    int dow;   /* 0 = Monday .. 6 = Sunday */
} shape_civil;

/* Proleptic Gregorian UTC parts of µs since 1970-01-01T00:00:00Z (floor). */
void shape_civil_from_us(int64_t us, shape_civil *out);

/* Floor division of ns to µs (also for negative values). */
static inline int64_t shape_us_from_ns(int64_t ns)
{
    int64_t q = ns / 1000;
    return (ns % 1000 < 0) ? q - 1 : q;
}

typedef struct shape_year_bin {
    int64_t year;
    int64_t count;
} shape_year_bin;

/* hour/dow/month/year histograms. Fields readable; change through the
 * functions. */
typedef struct shape_timehist {
    int64_t hour[24];
    int64_t dow[7];   /* Monday first */
    int64_t month[12];
    shape_year_bin *years; /* ascending by year */
    size_t n_years, cap_years;
    /* private: the last day seen (most timestamps share a day with the last) */
    int64_t last_day;
    int last_dow, last_month;
    size_t last_year_index;
    int have_last;
} shape_timehist;

void shape_timehist_init(shape_timehist *t);
void shape_timehist_free(shape_timehist *t); /* frees years; t stays usable (empty) */
int shape_timehist_add(shape_timehist *t, int64_t us, shape_err *err);
int shape_timehist_add_year(shape_timehist *t, int64_t year, int64_t times, shape_err *err);
int shape_timehist_merge(shape_timehist *dst, const shape_timehist *src, shape_err *err);

/* ------------------------------------------------------------------------ */
/* 8. The table profiler                                                     */
/* ------------------------------------------------------------------------ */

typedef struct shape_profile_config {
    int64_t top_n; /* entries of `top` written: min(top_n, 64); 1..INT32_MAX */
} shape_profile_config;

void shape_profile_config_default(shape_profile_config *cfg); /* top_n 500 */

typedef struct shape_profile shape_profile;

/* A profiler of one table named `name` (copied). cfg NULL = defaults. */
int shape_profile_new(const char *name, const shape_profile_config *cfg, shape_profile **out,
                      shape_err *err);
void shape_profile_free(shape_profile *p);

/* Profile one record batch: schema is a struct ("+s") whose children are
 * the columns, batch the matching struct array (offsets and validity of
 * every child honoured; the struct itself must have no null rows). Columns
 * are matched by name; a column seen for the first time is added after the
 * known ones (in schema order) as if it had been null in every earlier row;
 * a known column missing from the batch counts the batch's rows as nulls.
 * A column whose Arrow type changes is refused (SHAPE_EINVAL). Column kind
 * by Arrow format: c s i l C S I → int; e f g d:… (decimal128) → float;
 * b → bool; u U vu → text; tdD tdm ts?:… → temporal (ns floor-divided to
 * µs); anything else (binary, map, struct, list, uint64, null, dictionary-
 * encoded columns) → other (count and null_count only).
 * On failure (SHAPE_EINVAL for a malformed batch before anything is
 * counted, SHAPE_ENOMEM mid-way) the profile may hold part of the batch:
 * discard it (or reload the last state). */
int shape_profile_update(shape_profile *p, const struct ArrowSchema *schema,
                         const struct ArrowArray *batch, shape_err *err);

/* A run of a batch's rows: [start, start + length), before the batch's offset. */
typedef struct shape_profile_run {
    int64_t start, length;
} shape_profile_run;

/* The same as shape_profile_update over each run in turn (run r as the
 * slice of the batch its bounds give), with the batch checked and its
 * columns matched once: a caller that routes one batch's rows to several
 * profiles (one table per value, --split-by) hands each profile its runs in
 * one call instead of one call per run, and the profile comes out byte for
 * byte as with those calls. Runs must lie inside the batch (SHAPE_EINVAL);
 * a run of length 0 counts nothing, n_runs 0 still creates the new columns. */
int shape_profile_update_runs(shape_profile *p, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                              const shape_profile_run *runs, size_t n_runs, shape_err *err);

/* Merge src into dst: rows and counters add, moments by Chan, HLL by
 * register max, SpaceSaving and KLL by their merge rules, histograms add,
 * min/max combine. Columns match by name (a column one side lacks counts
 * that side's rows as nulls); the same column must have the same Arrow
 * type, and both profiles the same configuration (SHAPE_EINVAL otherwise,
 * dst unchanged). dst keeps its name. Exact fields come out identical to a
 * single profile of all the rows; mean and m2 agree to rounding (~1e-15
 * relative: floating-point addition is not associative); HLL is identical;
 * SpaceSaving and KLL stay within their bounds. On SHAPE_ENOMEM dst may be
 * partly merged: discard it. */
int shape_profile_merge(shape_profile *dst, const shape_profile *src, shape_err *err);

/* Where a profile's rows came from, saved in its state (format version 2)
 * so that profile-merge can refuse what would count rows twice: a list of
 * sources (the stream, copied), each with the partitions whose messages
 * were profiled (copied, any order; duplicates dropped). A profile starts
 * with its origin unknown, as does one loaded from a version-1 state.
 * set_origin replaces the list by one source (NULL: unknown again);
 * add_origin adds a source or partitions of one. A merge adds src's list to
 * dst's when both are known; otherwise the merged origin is unknown. */
int shape_profile_set_origin(shape_profile *p, const char *source, const int32_t *partitions, size_t n,
                             shape_err *err);
int shape_profile_add_origin(shape_profile *p, const char *source, const int32_t *partitions, size_t n,
                             shape_err *err);
int shape_profile_origin_known(const shape_profile *p);
/* The i-th source (NULL past the last) and, through *partitions / *n, its
 * partitions (ascending). */
const char *shape_profile_origin(const shape_profile *p, size_t i, const int32_t **partitions, size_t *n);

/* Refuse (SHAPE_EINVAL, naming `dst_what` and `src_what`) merging src into
 * dst when both origins are known and share a partition of one source (the
 * same rows would be counted twice), or name a source dst does not have
 * (another stream; allowed with any_source), or when both have columns and
 * none in common (different schemas). A profile of unknown origin (an older
 * state, an empty worker) is only checked for its columns. */
int shape_profile_check_merge(const shape_profile *dst, const shape_profile *src, int any_source, const char *dst_what,
                              const char *src_what, shape_err *err);

const char *shape_profile_name(const shape_profile *p);
int64_t shape_profile_rows(const shape_profile *p);
size_t shape_profile_num_columns(const shape_profile *p);
const shape_profile_config *shape_profile_get_config(const shape_profile *p);

/* ------------------------------------------------------------------------ */
/* 9. The profile document                                                   */
/* ------------------------------------------------------------------------ */

/* The table entry {name, rows, columns: [...]} (reference/spec-core.md
 * §1.10): *out is a new jansson object (caller json_decref's it). Strict:
 * no NaN/inf anywhere (non-finite moments are null, infinite top values are
 * the strings "inf"/"-inf"). */
int shape_profile_table_json(const shape_profile *p, struct json_t **out, shape_err *err);

/* The whole document {schema_version: 1, engine, shape_version, mode:
 * "bounded", tables: {<name>: entry}} for n tables (distinct names, else
 * SHAPE_EINVAL). */
int shape_profile_document_json(const shape_profile *const *tables, size_t n, struct json_t **out,
                                shape_err *err);

/* The same document without the columns that hold no value (null in every
 * row: count == null_count): what one table of a split shows, its profile
 * holding every column of the batches the tables share. Cheaper than
 * removing them from the whole document: they are never built. */
int shape_profile_document_json_valued(const shape_profile *const *tables, size_t n, struct json_t **out,
                                       shape_err *err);

/* The document as text: indent 2, trailing newline, ASCII (non-ASCII
 * escaped), floats in their shortest round-trip form (2500.5, 1e-05, 1.0).
 * *out malloc'd and NUL-terminated, *len without the NUL. */
int shape_profile_document(const shape_profile *const *tables, size_t n, char **out, size_t *len,
                           shape_err *err);

/* Serialize any jansson value the same way: indent >= 0 puts each member on
 * its own line (the document); indent < 0 gives one line with ", " and ": "
 * separators (JSON lines). No trailing newline. Fails (SHAPE_EINVAL) on a
 * non-finite real. *out malloc'd, NUL-terminated. */
int shape_profile_json_dumps(const struct json_t *v, int indent, char **out, size_t *len,
                             shape_err *err);

/* A document's text as shape_profile_document writes it: indented, then one
 * newline. *out malloc'd, NUL-terminated; len may be NULL. */
int shape_profile_document_text(const struct json_t *doc, char **out, size_t *len, shape_err *err);

/* ------------------------------------------------------------------------ */
/* 10. The mergeable state                                                   */
/* ------------------------------------------------------------------------ */

/* Binary, little-endian, versioned, checksummed (format described in
 * src/profile/state.c). It holds everything needed to continue: save → load
 * → save gives identical bytes, and a loaded profile accepts further batches
 * and merges exactly as the original would. *out malloc'd. */
int shape_profile_state_save(const shape_profile *p, uint8_t **out, size_t *len, shape_err *err);

/* Rebuild a profile from a state. `cfg` is the configuration the caller
 * runs with (NULL = defaults): a state made with another configuration (top_n
 * or sketch parameters), another format version, or bytes that are not an
 * intact state are refused with SHAPE_EINVAL and a sentence saying which. */
int shape_profile_state_load(const uint8_t *data, size_t len, const shape_profile_config *cfg,
                             shape_profile **out, shape_err *err);

/* The configuration fingerprint written in states ("top_n=500 hll_p=14 ..."),
 * NUL-terminated into buf (truncated to cap). */
void shape_profile_config_fingerprint(const shape_profile_config *cfg, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* profile_internal.h — what the profile engine's modules share and nobody
 * else sees: the column and table structs, the value readers chosen from an
 * Arrow format, and the state hooks of the sketches.
 *
 * Ownership: a shape_profile owns its columns; a column owns its name,
 * format and type strings, its text min/max copies, its histograms and its
 * sketches (freed by prof_column_free).
 *
 * Visibility: the prof_* functions are hidden (not exported from libshape);
 * the shape_*_ sketch hooks at the end stay visible for white-box tests.
 */
#ifndef SHAPE_PROFILE_INTERNAL_H
#define SHAPE_PROFILE_INTERNAL_H

#include <string.h>

#include "shape/profile.h"

#define PROF_HIDDEN __attribute__((visibility("hidden")))

/* XXH3 compiled in (header-only, the same version as the linked libxxhash)
 * for the per-value hashes, so the column loops inline them instead of
 * calling into the shared library. Results are identical. */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* ---- canonical hashes, inline (hash.c has the public wrappers) ---------- */

/* XXH3-64 (seed 0) of the 9 bytes {tag, payload little-endian}, computed
 * from registers with xxhash.h's own building blocks: for 9..16 bytes XXH3
 * reads the words at [0, 8) and [len − 8, len), here tag | payload << 8 and
 * payload. Assembling the bytes in memory instead costs a store-forwarding
 * stall per hash (~11 ns measured, against ~3 ns). Tests check it against
 * the library's XXH3_64bits_withSeed. */
static inline uint64_t prof_hash_tagged64(uint8_t tag, uint64_t payload)
{
    uint64_t bitflip1 = XXH_readLE64(XXH3_kSecret + 24) ^ XXH_readLE64(XXH3_kSecret + 32);
    uint64_t bitflip2 = XXH_readLE64(XXH3_kSecret + 40) ^ XXH_readLE64(XXH3_kSecret + 48);
    uint64_t lo = ((uint64_t)tag | (payload << 8)) ^ bitflip1;
    uint64_t hi = payload ^ bitflip2;
    uint64_t acc = 9 + XXH_swap64(lo) + hi + XXH3_mul128_fold64(lo, hi);
    return XXH3_avalanche(acc);
}

static inline uint64_t prof_hash_int(int64_t v) { return prof_hash_tagged64(SHAPE_HASH_INT, (uint64_t)v); }

static inline uint64_t prof_hash_timestamp(int64_t us) { return prof_hash_tagged64(SHAPE_HASH_TIMESTAMP, (uint64_t)us); }

static inline uint64_t prof_hash_double(double v)
{
    /* Integral? Every double of magnitude >= 2^52 is; below, the int64 round
     * trip tells (no libm: libshape does not link it). 2^63 and 2^64 are
     * exact doubles, so the range comparisons are exact. */
    double mag = v < 0 ? -v : v;
    if (mag < 4503599627370496.0) {
        if ((double)(int64_t)v == v) return prof_hash_tagged64(SHAPE_HASH_INT, (uint64_t)(int64_t)v);
    } else if (mag <= 1.8446744073709552e19) { /* finite and integral */
        if (v >= -9223372036854775808.0 && v < 9223372036854775808.0)
            return prof_hash_tagged64(SHAPE_HASH_INT, (uint64_t)(int64_t)v);
        if (v >= 9223372036854775808.0 && v < 18446744073709551616.0)
            return prof_hash_tagged64(SHAPE_HASH_UINT, (uint64_t)v);
    }
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return prof_hash_tagged64(SHAPE_HASH_FLOAT, bits);
}

/* XXH3's 16-byte mixer over bytes [off, off + 16) of the virtual input
 * {tag, p[0..n)}, for off >= 1 (those bytes are p[off − 1 ...]). */
static inline uint64_t prof_mix16_after_tag(const uint8_t *p, size_t off, const uint8_t *secret)
{
    return XXH3_mix16B(p + off - 1, secret, 0);
}

/* XXH3-64 (seed 0) of {tag, p[0..n)} for n < 128, without assembling that
 * input: XXH3 reads inputs of up to 128 bytes at fixed places (both ends;
 * 16-byte chunks from both ends above 16 bytes), so each read is taken from
 * p directly, and only the one that covers the tag is put together in a
 * register (tag | first bytes << 8). The branches follow XXH3's length
 * classes: 1-3, 4-8, 9-16 and 17-128 bytes of input (n + 1). Copying the
 * value behind the tag into a stack buffer first cost as much as the hash
 * on the short texts profiles see most. Tests compare every n in 0..200
 * with XXH3_64bits_withSeed over the assembled bytes. */
static inline uint64_t prof_hash_tag_short(uint8_t tag, const uint8_t *p, size_t n)
{
    const uint8_t *secret = XXH3_kSecret;
    uint64_t len = (uint64_t)n + 1;
    if (n >= 16) {
        uint64_t acc = len * XXH_PRIME64_1;
        uint64_t first_lo = (uint64_t)tag | (XXH_readLE64(p) << 8); /* input bytes 0..7 */
        uint64_t first_hi = XXH_readLE64(p + 7);                      /* input bytes 8..15 */
        acc += XXH3_mul128_fold64(first_lo ^ XXH_readLE64(secret), first_hi ^ XXH_readLE64(secret + 8));
        acc += prof_mix16_after_tag(p, len - 16, secret + 16);
        if (len > 32) {
            acc += prof_mix16_after_tag(p, 16, secret + 32);
            acc += prof_mix16_after_tag(p, len - 32, secret + 48);
            if (len > 64) {
                acc += prof_mix16_after_tag(p, 32, secret + 64);
                acc += prof_mix16_after_tag(p, len - 48, secret + 80);
                if (len > 96) {
                    acc += prof_mix16_after_tag(p, 48, secret + 96);
                    acc += prof_mix16_after_tag(p, len - 64, secret + 112);
                }
            }
        }
        return XXH3_avalanche(acc);
    }
    if (n >= 8) { /* 9..16 input bytes: the words at 0 and len − 8 */
        uint64_t bitflip1 = XXH_readLE64(secret + 24) ^ XXH_readLE64(secret + 32);
        uint64_t bitflip2 = XXH_readLE64(secret + 40) ^ XXH_readLE64(secret + 48);
        uint64_t lo = ((uint64_t)tag | (XXH_readLE64(p) << 8)) ^ bitflip1;
        uint64_t hi = XXH_readLE64(p + n - 8) ^ bitflip2;
        return XXH3_avalanche(len + XXH_swap64(lo) + hi + XXH3_mul128_fold64(lo, hi));
    }
    if (n >= 3) { /* 4..8 input bytes: the 32-bit words at 0 and len − 4 */
        uint32_t first = (uint32_t)tag | (uint32_t)p[0] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 24;
        uint32_t last = n >= 4 ? XXH_readLE32(p + n - 4) : first;
        uint64_t bitflip = XXH_readLE64(secret + 8) ^ XXH_readLE64(secret + 16);
        return XXH3_rrmxmx(((uint64_t)last + ((uint64_t)first << 32)) ^ bitflip, len);
    }
    /* 1..3 input bytes: the first, middle and last */
    uint8_t mid = n ? p[0] : tag, last = n ? p[n - 1] : tag;
    uint32_t combined = (uint32_t)tag << 16 | (uint32_t)mid << 24 | (uint32_t)last | (uint32_t)len << 8;
    uint64_t bitflip = XXH_readLE32(secret) ^ XXH_readLE32(secret + 4);
    return XXH64_avalanche((uint64_t)combined ^ bitflip);
}

/* text / binary of 128 bytes or more: XXH3's streaming state (the same
 * hash as one-shot over the same bytes). Out of line: its 576-byte state
 * would make every short hash pay for the stack frame. */
PROF_HIDDEN uint64_t prof_hash_bytes_long(uint8_t tag, const void *p, size_t n);

/* text / binary: tag + bytes */
static inline uint64_t prof_hash_bytes(uint8_t tag, const void *p, size_t n)
{
    if (n < 128) return prof_hash_tag_short(tag, (const uint8_t *)p, n);
    return prof_hash_bytes_long(tag, p, n);
}

/* Column kinds, in the order the state stores them. */
typedef enum prof_kind {
    PROF_INT = 0,
    PROF_FLOAT = 1,
    PROF_BOOL = 2,
    PROF_TEXT = 3,
    PROF_TEMPORAL = 4,
    PROF_OTHER = 5
} prof_kind;

/* How to read one value of a column, from its Arrow format. */
typedef enum prof_reader {
    RD_NONE = 0, /* other: count and nulls only */
    RD_NULL,     /* "n": every row null, no buffers */
    RD_NO_VALIDITY, /* unions, run-end encoded: no validity bitmap */
    RD_I8, RD_I16, RD_I32, RD_I64, RD_U8, RD_U16, RD_U32,
    RD_F16, RD_F32, RD_F64, RD_DEC128,
    RD_BOOL,
    RD_UTF8, RD_LARGE_UTF8, RD_UTF8_VIEW,
    RD_DATE32, RD_DATE64, RD_TS_S, RD_TS_MS, RD_TS_US, RD_TS_NS
} prof_reader;

/* A text column's memo of recent values: what a value's bytes always give
 * (its code points, pattern bits and hash), so that a value seen a moment
 * ago (a column of few values: status, country, currency) skips the UTF-8
 * count, the pattern filter and the hash. A cache, not state: the profile
 * is the same with or without it. */
#define PROF_MEMO_SLOTS 16 /* direct-mapped by length and end bytes */
#define PROF_MEMO_BYTES 32 /* longer values are not memoised */
typedef struct prof_text_memo {
    uint8_t len; /* PROF_MEMO_EMPTY: no value */
    uint8_t bytes[PROF_MEMO_BYTES];
    unsigned patterns;
    uint32_t code_points;
    uint64_t hash;
} prof_text_memo;
#define PROF_MEMO_EMPTY 0xff

typedef struct prof_column {
    char *name;
    char *format;     /* Arrow format string the column was first seen with */
    char *arrow_type; /* its pyarrow-style name ("int64", "timestamp[us, tz=UTC]") */
    prof_kind kind;
    prof_reader reader;
    int decimal_scale;

    int64_t count;
    int64_t null_count;

    /* int, float */
    int64_t nan_count, pos_inf_count, neg_inf_count, finite_count;
    shape_moments moments;
    /* min/max: int and temporal in imin/imax, float in dmin/dmax, text in
     * tmin/tmax; has_range says whether any value was seen */
    int has_range;
    int64_t imin, imax;
    double dmin, dmax;
    uint8_t *tmin, *tmax;
    size_t tmin_len, tmax_len, tmin_cap, tmax_cap;

    /* bool */
    int64_t true_count, false_count;

    /* text */
    shape_lenhist lengths;
    int64_t patterns[SHAPE_PATTERN_COUNT];
    prof_text_memo *memo; /* PROF_MEMO_SLOTS, made by the first text batch */
    int memo_rest;        /* batches left before the memo is tried again */

    /* temporal */
    shape_timehist times;

    /* int, float: the batch's finite values, gathered for the moments and
     * the KLL sketch (capacity grows to the largest batch; not state) */
    double *scratch;
    size_t scratch_cap;

    /* sketches (NULL when the kind has none) */
    shape_hll *hll;
    shape_spacesaving *ss;
    shape_kll *kll;
} prof_column;

typedef struct prof_origin {
    char *source;
    int32_t *parts;
    size_t n;
} prof_origin;

struct shape_profile {
    char *name;
    shape_profile_config cfg;
    int64_t rows;
    prof_column **cols;
    size_t ncols, cap_cols;
    /* where the rows came from (shape_profile_set_origin, merges): one entry
     * per source, each with its partitions ascending and distinct;
     * origin_known 0: unknown (a version-1 state, an empty worker) */
    int origin_known;
    prof_origin *origins;
    size_t n_origins;
};

/* ---- columns (column.c) ------------------------------------------------- */

/* Kind and reader of an Arrow format; *scale for decimals. */
PROF_HIDDEN void prof_classify(const char *format, prof_kind *kind, prof_reader *reader, int *scale);

/* The pyarrow-style type name of a schema node (malloc'd), NULL on ENOMEM. */
PROF_HIDDEN char *prof_arrow_type_name(const struct ArrowSchema *schema);

/* A new empty column (strings copied). */
PROF_HIDDEN int prof_column_new(const char *name, const char *format, const char *arrow_type, prof_column **out,
                    shape_err *err);
PROF_HIDDEN void prof_column_free(prof_column *c);

/* Profile rows [start, start + n) of array a (logical indices; a's own
 * offset applied inside). */
PROF_HIDDEN int prof_column_update(prof_column *c, const struct ArrowArray *a, int64_t start, int64_t n, shape_err *err);

/* Count n rows as nulls (the column was missing from a batch). */
PROF_HIDDEN void prof_column_add_nulls(prof_column *c, int64_t n);

/* dst ∪ src, same format (checked by the caller). */
PROF_HIDDEN int prof_column_merge(prof_column *dst, const prof_column *src, shape_err *err);

/* Replace an owned text min/max copy. */
PROF_HIDDEN int prof_set_bytes(uint8_t **dst, size_t *dst_len, size_t *dst_cap, const uint8_t *p, size_t n, shape_err *err);

/* ---- SpaceSaving in runs (spacesaving.c) -------------------------------- */

/* The column loops hand their keys to SpaceSaving PROF_SS_RUN at a time, in
 * row order: the same adds as one shape_ss_add_* call per value, without a
 * call (and its saved registers) per value. */
#define PROF_SS_RUN 256

typedef struct prof_text_key {
    const uint8_t *p;
    size_t len;
    uint64_t hash;
} prof_text_key;

PROF_HIDDEN void prof_ss_add_ints(shape_spacesaving *s, const int64_t *keys, const uint64_t *hashes, size_t n);
PROF_HIDDEN void prof_ss_add_doubles(shape_spacesaving *s, const double *keys, const uint64_t *hashes, size_t n);
/* Stops at the first failure (out of memory for a key copy). */
PROF_HIDDEN int prof_ss_add_texts(shape_spacesaving *s, const prof_text_key *keys, size_t n, shape_err *err);

/* ---- table (table.c) ---------------------------------------------------- */

/* Append a column to the profile (takes ownership on success). */
PROF_HIDDEN int prof_add_column(shape_profile *p, prof_column *c, shape_err *err);
PROF_HIDDEN prof_column *prof_find_column(const shape_profile *p, const char *name);

/* ---- sketch state hooks ------------------------------------------------- */

/* Entries in list order (ascending count; within a count, least recently
 * updated first); out holds capacity items. */
size_t shape_ss_items_ordered_(const shape_spacesaving *s, shape_ss_item *out);
/* Append an entry at the end of the list order (count >= the last one's). */
int shape_ss_append_raw_(shape_spacesaving *s, const shape_ss_item *it, shape_err *err);
void shape_ss_set_total_(shape_spacesaving *s, int64_t n);

/* Nonzero: text columns do without their memo of recent values (tests
 * compare the profiles made with and without it). */
extern int shape_profile_memo_off_;

/* shape_text_patterns without its byte pre-filter: every matcher runs. */
unsigned shape_text_patterns_unfiltered_(const uint8_t *s, size_t n);

const double *shape_kll_level_items_(const shape_kll *s, size_t level, size_t *len);
uint64_t shape_kll_compactions_(const shape_kll *s);
/* Sort as a compaction does (by_runs: merging sorted runs when it may, as
 * now; 0: the introsort alone, as before) — for tests that both agree. */
void shape_kll_sort_(double *a, size_t n, int by_runs);
/* Fill an empty sketch: `levels` levels, lens[l] items of level l taken in
 * turn from items[]; n becomes the total weight. */
int shape_kll_restore_(shape_kll *s, size_t levels, const size_t *lens, const double *items,
                       uint64_t compactions, shape_err *err);

/* shape_moments_add_values with the batch mean given (an integer column's
 * exact 128-bit sum / n; see moments.c): m2 by the same corrected two pass. */
void prof_moments_add_with_mean(shape_moments *m, const double *x, size_t n, double mean);

#endif

/* column.c — column profilers: one per kind (int, float, bool, text,
 * temporal, other), fed one Arrow array at a time.
 *
 * Why: the engine sees a column as a sequence of Arrow arrays (one per
 * batch) and must update its statistics from each in one pass, honouring the
 * array's offset and validity bitmap, at a few tens of nanoseconds per value.
 *
 * How:
 *   - the Arrow format string picks a kind and a reader (prof_classify):
 *     integer widths, float16/32/64 and decimal128 (as double), bool, utf8 /
 *     large utf8 / utf8 view, and date32/date64/timestamp[s|ms|us|ns]
 *     converted to µs (ns floor-divided; s, ms and days multiplied with
 *     int64 wrap-around as the reference does);
 *   - each kind has one loop over the rows; for integers the reader switch
 *     sits outside the loop, and the per-value work is: min/max, one
 *     canonical hash feeding both HyperLogLog and SpaceSaving, and (numbers)
 *     copying the finite value into a scratch array (on the stack for a
 *     short slice, else the column's); the
 *     SpaceSaving keys (with their hashes) are collected PROF_SS_RUN at a
 *     time and added in row order by one call per run (a text key that
 *     cannot be copied for lack of memory fails the update after the rest
 *     of its run was counted elsewhere: the profile is then unusable anyway);
 *   - after the loop the scratch array gives the batch's moments (mean, then
 *     the corrected sum of squared deviations, merged into the column's by
 *     Chan's formula — the reference's per-batch method) and feeds the KLL
 *     sketch in row order; text min/max are tracked as pointers into the
 *     batch (with their first 16 bytes as word keys, so most values are
 *     placed without a byte compare) and copied once at its end;
 *   - a text value's code points, pattern bits and hash depend on its bytes
 *     alone: a 16-slot memo of recent short values gives them to a repeated
 *     value (few-valued columns); a batch that finds too few there turns the
 *     memo off for the next 16;
 *   - NaN counts only as nan; ±inf counts in its own counter and in
 *     distinct/top, but not in min/max, moments or quantiles (finite only);
 *     -0.0 is 0.0 as a top key.
 * Merging two columns combines every field by its rule (counters add,
 * moments by Chan, HLL max, SpaceSaving and KLL merges, histograms add,
 * min/max combine).
 */
#include "shape/bytes.h"
#include "profile_internal.h"
#include "shape/json.h" /* shape_json_buf */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- classification --------------------------------------------------- */

void prof_classify(const char *f, prof_kind *kind, prof_reader *reader, int *scale)
{
    *kind = PROF_OTHER;
    *reader = RD_NONE;
    *scale = 0;
    if (!f) return;
    static const struct {
        const char *fmt;
        prof_kind kind;
        prof_reader reader;
    } fixed[] = {
        {"c", PROF_INT, RD_I8},       {"s", PROF_INT, RD_I16},    {"i", PROF_INT, RD_I32},
        {"l", PROF_INT, RD_I64},      {"C", PROF_INT, RD_U8},     {"S", PROF_INT, RD_U16},
        {"I", PROF_INT, RD_U32},      {"e", PROF_FLOAT, RD_F16},  {"f", PROF_FLOAT, RD_F32},
        {"g", PROF_FLOAT, RD_F64},    {"b", PROF_BOOL, RD_BOOL},  {"u", PROF_TEXT, RD_UTF8},
        {"U", PROF_TEXT, RD_LARGE_UTF8}, {"vu", PROF_TEXT, RD_UTF8_VIEW},
        {"tdD", PROF_TEMPORAL, RD_DATE32}, {"tdm", PROF_TEMPORAL, RD_DATE64},
        {"n", PROF_OTHER, RD_NULL},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strcmp(f, fixed[i].fmt) == 0) {
            *kind = fixed[i].kind;
            *reader = fixed[i].reader;
            return;
        }
    if (f[0] == 't' && f[1] == 's' && f[2] && f[3] == ':') {
        static const char units[] = "smun";
        const char *u = strchr(units, f[2]);
        if (u && *u) {
            *kind = PROF_TEMPORAL;
            *reader = (prof_reader)(RD_TS_S + (u - units));
        }
        return;
    }
    if (f[0] == 'd' && f[1] == ':') {
        int precision = 0, sc = 0, bits = 128, used = 0;
        int got = sscanf(f + 2, "%d,%d%n,%d", &precision, &sc, &used, &bits);
        if (got >= 2 && bits == 128 && sc >= -400 && sc <= 400) {
            *kind = PROF_FLOAT;
            *reader = RD_DEC128;
            *scale = sc;
        }
        return;
    }
    if ((f[0] == '+' && f[1] == 'u') || (f[0] == '+' && f[1] == 'r')) *reader = RD_NO_VALIDITY;
}

/* ---- Arrow type names (pyarrow's spelling) ------------------------------- */

/* The name being written, and whether it ran out of memory (sticky). */
typedef struct strbuf {
    shape_json_buf b;
    int failed;
} strbuf;

static void sb_add(strbuf *b, const char *s)
{
    if (!b->failed && shape_json_buf_append(&b->b, s, strlen(s)) != 0) b->failed = 1;
}

static void type_name(strbuf *b, const struct ArrowSchema *s, int depth)
{
    const char *f = s->format ? s->format : "";
    char tmp[96];
    if (depth > 32) {
        sb_add(b, "...");
        return;
    }
    if (s->dictionary) {
        sb_add(b, "dictionary<values=");
        type_name(b, s->dictionary, depth + 1);
        sb_add(b, ", indices=");
        struct ArrowSchema idx = *s;
        idx.dictionary = NULL;
        type_name(b, &idx, depth + 1);
        sb_add(b, (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? ", ordered=1>" : ", ordered=0>");
        return;
    }
    static const struct {
        const char *fmt, *name;
    } simple[] = {
        {"n", "null"},       {"b", "bool"},         {"c", "int8"},           {"C", "uint8"},
        {"s", "int16"},      {"S", "uint16"},       {"i", "int32"},          {"I", "uint32"},
        {"l", "int64"},      {"L", "uint64"},       {"e", "halffloat"},      {"f", "float"},
        {"g", "double"},     {"z", "binary"},       {"Z", "large_binary"},   {"vz", "binary_view"},
        {"u", "string"},     {"U", "large_string"}, {"vu", "string_view"},   {"tdD", "date32[day]"},
        {"tdm", "date64[ms]"}, {"tts", "time32[s]"}, {"ttm", "time32[ms]"},  {"ttu", "time64[us]"},
        {"ttn", "time64[ns]"}, {"tDs", "duration[s]"}, {"tDm", "duration[ms]"}, {"tDu", "duration[us]"},
        {"tDn", "duration[ns]"}, {"tiM", "month_interval"}, {"tiD", "day_time_interval"},
        {"tin", "month_day_nano_interval"},
    };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (strcmp(f, simple[i].fmt) == 0) {
            sb_add(b, simple[i].name);
            return;
        }
    if (f[0] == 't' && f[1] == 's' && f[2] && f[3] == ':') {
        const char *unit = f[2] == 's' ? "s" : f[2] == 'm' ? "ms" : f[2] == 'u' ? "us" : "ns";
        sb_add(b, "timestamp[");
        sb_add(b, unit);
        if (f[4]) {
            sb_add(b, ", tz=");
            sb_add(b, f + 4);
        }
        sb_add(b, "]");
        return;
    }
    if (f[0] == 'd' && f[1] == ':') {
        int p = 0, sc = 0, bits = 128, used = 0;
        if (sscanf(f + 2, "%d,%d%n,%d", &p, &sc, &used, &bits) >= 2) {
            snprintf(tmp, sizeof tmp, "decimal%d(%d, %d)", bits, p, sc);
            sb_add(b, tmp);
            return;
        }
    }
    if (f[0] == 'w' && f[1] == ':') {
        snprintf(tmp, sizeof tmp, "fixed_size_binary[%.40s]", f + 2);
        sb_add(b, tmp);
        return;
    }
    const struct ArrowSchema *c0 = s->n_children > 0 ? s->children[0] : NULL;
    if ((strcmp(f, "+l") == 0 || strcmp(f, "+L") == 0 || strncmp(f, "+w:", 3) == 0 ||
         strcmp(f, "+vl") == 0 || strcmp(f, "+vL") == 0) && c0) {
        sb_add(b, f[1] == 'L' ? "large_list<" : f[1] == 'w' ? "fixed_size_list<" :
                  strcmp(f, "+vl") == 0 ? "list_view<" : strcmp(f, "+vL") == 0 ? "large_list_view<" : "list<");
        sb_add(b, c0->name ? c0->name : "item");
        sb_add(b, ": ");
        type_name(b, c0, depth + 1);
        sb_add(b, ">");
        if (f[1] == 'w') {
            snprintf(tmp, sizeof tmp, "[%.40s]", f + 3);
            sb_add(b, tmp);
        }
        return;
    }
    if (strcmp(f, "+m") == 0 && c0 && c0->n_children == 2) {
        sb_add(b, "map<");
        type_name(b, c0->children[0], depth + 1);
        sb_add(b, ", ");
        type_name(b, c0->children[1], depth + 1);
        sb_add(b, ">");
        return;
    }
    if (strcmp(f, "+s") == 0) {
        sb_add(b, "struct<");
        for (int64_t i = 0; i < s->n_children; i++) {
            if (i) sb_add(b, ", ");
            sb_add(b, s->children[i]->name ? s->children[i]->name : "");
            sb_add(b, ": ");
            type_name(b, s->children[i], depth + 1);
        }
        sb_add(b, ">");
        return;
    }
    sb_add(b, f); /* unknown: the format string itself */
}

char *prof_arrow_type_name(const struct ArrowSchema *schema)
{
    strbuf b = {0};
    type_name(&b, schema, 0);
    if (b.failed) {
        shape_json_buf_reset(&b.b);
        return NULL;
    }
    if (!b.b.data) return strdup("");
    return b.b.data;
}

/* ---- creation ----------------------------------------------------------- */

int prof_column_new(const char *name, const char *format, const char *arrow_type, prof_column **out,
                    shape_err *err)
{
    *out = NULL;
    prof_column *c = calloc(1, sizeof *c);
    if (!c) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for column '%s'", name);
    c->name = strdup(name);
    c->format = strdup(format);
    c->arrow_type = strdup(arrow_type);
    shape_lenhist_init(&c->lengths);
    shape_timehist_init(&c->times);
    prof_classify(format, &c->kind, &c->reader, &c->decimal_scale);
    int rc = (c->name && c->format && c->arrow_type) ? SHAPE_OK : SHAPE_ENOMEM;
    if (rc == SHAPE_OK && c->kind != PROF_BOOL && c->kind != PROF_OTHER) {
        /* zeroed = empty (shape_hll_init): calloc skips the 16 KB memset for
         * memory fresh from the system, whose pages then stay untouched
         * until a value lands in a register, so a column that never has one
         * (most of a split table's: every table sees all the batch's
         * columns) costs neither the memset nor resident memory */
        c->hll = calloc(1, sizeof *c->hll);
        if (!c->hll) rc = SHAPE_ENOMEM;
        shape_ss_kind sk = c->kind == PROF_INT ? SHAPE_SS_INT
                           : c->kind == PROF_FLOAT ? SHAPE_SS_DOUBLE
                           : c->kind == PROF_TEXT ? SHAPE_SS_TEXT
                                                  : SHAPE_SS_TIMESTAMP;
        if (rc == SHAPE_OK) rc = shape_ss_new(sk, SHAPE_SS_CAPACITY, &c->ss, NULL);
        if (rc == SHAPE_OK && (c->kind == PROF_INT || c->kind == PROF_FLOAT))
            rc = shape_kll_new(SHAPE_KLL_K, &c->kll, NULL);
    }
    if (rc != SHAPE_OK) {
        prof_column_free(c);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory for column '%s'", name);
    }
    *out = c;
    return SHAPE_OK;
}

void prof_column_free(prof_column *c)
{
    if (!c) return;
    free(c->name);
    free(c->format);
    free(c->arrow_type);
    free(c->tmin);
    free(c->tmax);
    free(c->scratch);
    shape_lenhist_free(&c->lengths);
    shape_timehist_free(&c->times);
    free(c->hll);
    shape_ss_free(c->ss);
    shape_kll_free(c->kll);
    free(c->memo);
    free(c);
}

int prof_set_bytes(uint8_t **dst, size_t *dst_len, size_t *dst_cap, const uint8_t *p, size_t n, shape_err *err)
{
    if (n > *dst_cap || !*dst) {
        size_t cap = n < 16 ? 16 : n;
        uint8_t *q = realloc(*dst, cap);
        if (!q) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a text value of %zu bytes", n);
        *dst = q;
        *dst_cap = cap;
    }
    if (n) memcpy(*dst, p, n);
    *dst_len = n;
    return SHAPE_OK;
}

/* Byte order of two texts (sign only), 8 bytes at a time: the first word
 * that differs decides, read big-endian; the value min/max compare every
 * text value twice, and a memcmp call per compare cost more than the rest
 * of the text profile's bookkeeping. */
static inline int cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
    for (; i < n; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return an < bn ? -1 : (an > bn ? 1 : 0);
}

/* The first 16 bytes of a text, as two big-endian numbers (hi: bytes 0..7,
 * lo: 8..15), zero past its end: when two texts' keys differ, the keys
 * order them as cmp_bytes would (a zero pad only ever compares below or
 * equal to a real byte); equal keys leave it to cmp_bytes. The value
 * min/max keep their keys, so most values are placed by two word compares
 * instead of two byte-range compares (a text's first 8 bytes are often a
 * shared prefix: dates of one month, JSON of one shape). Reads only
 * p[0..n). */
typedef struct text_key {
    uint64_t hi, lo;
} text_key;

static inline uint64_t key_word(const uint8_t *p, size_t n)
{
    uint64_t w;
    if (n >= 8) {
        w = shape_load64(p);
    } else if (n >= 4) { /* two overlapping 4-byte loads, the overlap shifted out of the second */
        w = (uint64_t)shape_load32(p) | ((uint64_t)shape_load32(p + n - 4) >> (8 * (8 - n))) << 32;
    } else {
        w = 0;
        for (size_t i = 0; i < n; i++) w |= (uint64_t)p[i] << (8 * i);
    }
    return __builtin_bswap64(w);
}

static inline text_key text_key_of(const uint8_t *p, size_t n)
{
    text_key k = {key_word(p, n), n > 8 ? key_word(p + 8, n - 8) : 0};
    return k;
}

/* sign of a - b by key, 0 when the keys cannot tell */
static inline int key_cmp(text_key a, text_key b)
{
    if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
    if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
    return 0;
}

/* ---- value access ------------------------------------------------------- */

static inline int valid_at(const uint8_t *bits, int64_t i) { return !bits || ((bits[i >> 3] >> (i & 7)) & 1); }

static int64_t count_nulls(const struct ArrowArray *a, prof_reader rd, int64_t start, int64_t n)
{
    if (rd == RD_NULL) return n;
    if (rd == RD_NO_VALIDITY || a->null_count == 0 || a->n_buffers < 1 || !a->buffers[0]) return 0;
    const uint8_t *bits = a->buffers[0];
    int64_t nulls = 0;
    for (int64_t i = 0; i < n; i++) nulls += !valid_at(bits, a->offset + start + i);
    return nulls;
}

/* 2^k for -1022 <= k <= 1023, from its bits (no libm in libshape). */
static double pow2(int k)
{
    uint64_t bits = (uint64_t)(k + 1023) << 52;
    double v;
    memcpy(&v, &bits, 8);
    return v;
}

static double half_to_double(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1F, frac = h & 0x3FF;
    double v;
    if (exp == 0)
        v = (double)frac * pow2(-24);
    else if (exp == 31)
        v = frac ? NAN : INFINITY;
    else
        v = (double)(frac | 0x400) * pow2(exp - 25);
    return sign ? -v : v;
}

/* 10^s correctly rounded, as the reference's 10.0**s (decimal literals are
 * rounded to nearest by the compiler); beyond the table, repeated products. */
static double pow10_of(int s)
{
    static const double pos[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11, 1e12,
                                 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25,
                                 1e26, 1e27, 1e28, 1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38};
    static const double neg[] = {1e0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8,  1e-9,
                                 1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18, 1e-19,
                                 1e-20, 1e-21, 1e-22, 1e-23, 1e-24, 1e-25, 1e-26, 1e-27, 1e-28, 1e-29,
                                 1e-30, 1e-31, 1e-32, 1e-33, 1e-34, 1e-35, 1e-36, 1e-37, 1e-38};
    if (s >= 0 && s <= 38) return pos[s];
    if (s < 0 && s >= -38) return neg[-s];
    double v = 1.0;
    for (int i = 0; i < (s < 0 ? -s : s); i++) v *= 10.0;
    return s < 0 ? 1.0 / v : v;
}

static double dec128_to_double(const uint8_t *p, int scale)
{
    uint64_t lo, hi;
    memcpy(&lo, p, 8);
    memcpy(&hi, p + 8, 8);
    __int128 v = (__int128)(((unsigned __int128)hi << 64) | lo);
    double x = (double)v;
    return x / pow10_of(scale);
}

/* wrap-around int64 multiply, as the reference's int64 conversion does */
static inline int64_t wrap_mul(int64_t v, int64_t m) { return (int64_t)((uint64_t)v * (uint64_t)m); }

static inline const uint8_t *text_at(const struct ArrowArray *a, prof_reader rd, int64_t i, size_t *len)
{
    if (rd == RD_UTF8) {
        const int32_t *o = a->buffers[1];
        const uint8_t *d = a->buffers[2];
        *len = (size_t)(o[i + 1] - o[i]);
        return d ? d + o[i] : (const uint8_t *)"";
    }
    if (rd == RD_LARGE_UTF8) {
        const int64_t *o = a->buffers[1];
        const uint8_t *d = a->buffers[2];
        *len = (size_t)(o[i + 1] - o[i]);
        return d ? d + o[i] : (const uint8_t *)"";
    }
    /* view: 16 bytes, length then 12 inline bytes or prefix/buffer/offset */
    const uint8_t *v = (const uint8_t *)a->buffers[1] + 16 * i;
    int32_t n, buf, off;
    memcpy(&n, v, 4);
    *len = (size_t)n;
    if (n <= 12) return v + 4;
    memcpy(&buf, v + 8, 4);
    memcpy(&off, v + 12, 4);
    return (const uint8_t *)a->buffers[2 + buf] + off;
}

/* ---- per kind ----------------------------------------------------------- */

static int reserve_scratch(prof_column *c, int64_t n, shape_err *err)
{
    if ((size_t)n <= c->scratch_cap) return SHAPE_OK;
    size_t cap = c->scratch_cap ? c->scratch_cap : 1024;
    while (cap < (size_t)n) cap *= 2;
    double *p = realloc(c->scratch, cap * sizeof *p);
    if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a batch of %lld values", (long long)n);
    c->scratch = p;
    c->scratch_cap = cap;
    return SHAPE_OK;
}

/* A slice of at most this many rows gathers its finite values on the stack,
 * whose lines stay cached, instead of in the column's own array (a windowed
 * profile would keep one per column of every open pane, cold at each
 * slice, and 8 KB or more each). */
enum { PROF_STACK_VALUES = 1024 };

/* Where a slice of n rows gathers its finite values: local (the caller's
 * PROF_STACK_VALUES) or the column's array, grown to n. */
static int finite_values(prof_column *c, int64_t n, double *local, double **fin, shape_err *err)
{
    *fin = local;
    if (n <= PROF_STACK_VALUES) return SHAPE_OK;
    SHAPE_RETURN_NOT_OK(reserve_scratch(c, n, err));
    *fin = c->scratch;
    return SHAPE_OK;
}

/* The batch's finite values (fin[0..nf)): moments, then KLL in row order.
 * isum: an integer batch's exact sum (its mean from it, see moments.c), or
 * NULL for floats. */
static int finish_numeric(prof_column *c, const double *fin, size_t nf, const __int128 *isum, shape_err *err)
{
    if (isum && nf)
        prof_moments_add_with_mean(&c->moments, fin, nf, (double)*isum / (double)nf);
    else
        shape_moments_add_values(&c->moments, fin, nf);
    c->finite_count += (int64_t)nf;
    return shape_kll_add_values(c->kll, fin, nf, err);
}

static int update_int(prof_column *c, const struct ArrowArray *a, int64_t start, int64_t n, shape_err *err)
{
    const uint8_t *bits = a->null_count == 0 ? NULL : (const uint8_t *)a->buffers[0];
    int64_t base = a->offset + start, nulls = 0;
    double local[PROF_STACK_VALUES], *fin;
    SHAPE_RETURN_NOT_OK(finite_values(c, n, local, &fin, err));
    size_t nf = 0;
    __int128 isum = 0; /* exact: |sum| < 2^63 * 2^64 for any batch */
    int64_t mn = c->imin, mx = c->imax;
    int have = c->has_range;
    shape_hll *hll = c->hll;
    shape_spacesaving *ss = c->ss;
    int64_t run_keys[PROF_SS_RUN]; /* top keys in row order, added a run at a time */
    uint64_t run_hashes[PROF_SS_RUN];
    size_t run = 0;
#define INT_LOOP(T)                                                          \
    do {                                                                     \
        const T *v = (const T *)a->buffers[1];                               \
        for (int64_t i = 0; i < n; i++) {                                    \
            if (!valid_at(bits, base + i)) {                                 \
                nulls++;                                                     \
                continue;                                                    \
            }                                                                \
            int64_t x = (int64_t)v[base + i];                                \
            if (!have) {                                                     \
                mn = mx = x;                                                 \
                have = 1;                                                    \
            } else if (x < mn) {                                             \
                mn = x;                                                      \
            } else if (x > mx) {                                             \
                mx = x;                                                      \
            }                                                                \
            fin[nf++] = (double)x;                                           \
            isum += x;                                                       \
            uint64_t h = prof_hash_int(x);                                  \
            shape_hll_add_hash(hll, h);                                      \
            run_keys[run] = x;                                               \
            run_hashes[run] = h;                                             \
            if (++run == PROF_SS_RUN) {                                      \
                prof_ss_add_ints(ss, run_keys, run_hashes, run);             \
                run = 0;                                                     \
            }                                                                \
        }                                                                    \
    } while (0)
    switch (c->reader) {
    case RD_I8: INT_LOOP(int8_t); break;
    case RD_I16: INT_LOOP(int16_t); break;
    case RD_I32: INT_LOOP(int32_t); break;
    case RD_U8: INT_LOOP(uint8_t); break;
    case RD_U16: INT_LOOP(uint16_t); break;
    case RD_U32: INT_LOOP(uint32_t); break;
    default: INT_LOOP(int64_t); break;
    }
#undef INT_LOOP
    prof_ss_add_ints(ss, run_keys, run_hashes, run);
    c->null_count += nulls;
    c->imin = mn;
    c->imax = mx;
    c->has_range = have;
    return finish_numeric(c, fin, nf, &isum, err);
}

static int update_float(prof_column *c, const struct ArrowArray *a, int64_t start, int64_t n, shape_err *err)
{
    const uint8_t *bits = a->null_count == 0 ? NULL : (const uint8_t *)a->buffers[0];
    int64_t base = a->offset + start, nulls = 0, nan = 0, pinf = 0, ninf = 0;
    double local[PROF_STACK_VALUES], *fin;
    SHAPE_RETURN_NOT_OK(finite_values(c, n, local, &fin, err));
    size_t nf = 0;
    double mn = c->dmin, mx = c->dmax;
    int have = c->has_range;
    double run_keys[PROF_SS_RUN]; /* top keys in row order, added a run at a time */
    uint64_t run_hashes[PROF_SS_RUN];
    size_t run = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = base + i;
        if (!valid_at(bits, at)) {
            nulls++;
            continue;
        }
        double x;
        switch (c->reader) {
        case RD_F64: x = ((const double *)a->buffers[1])[at]; break;
        case RD_F32: x = (double)((const float *)a->buffers[1])[at]; break;
        case RD_F16: x = half_to_double(((const uint16_t *)a->buffers[1])[at]); break;
        default: x = dec128_to_double((const uint8_t *)a->buffers[1] + 16 * at, c->decimal_scale); break;
        }
        if (x != x) {
            nan++;
            continue;
        }
        uint64_t h = prof_hash_double(x);
        shape_hll_add_hash(c->hll, h);
        run_keys[run] = x;
        run_hashes[run] = h;
        if (++run == PROF_SS_RUN) {
            prof_ss_add_doubles(c->ss, run_keys, run_hashes, run);
            run = 0;
        }
        if (isinf(x)) {
            if (x > 0)
                pinf++;
            else
                ninf++;
            continue;
        }
        if (!have) {
            mn = mx = x;
            have = 1;
        } else if (x < mn) {
            mn = x;
        } else if (x > mx) {
            mx = x;
        }
        fin[nf++] = x;
    }
    prof_ss_add_doubles(c->ss, run_keys, run_hashes, run);
    c->null_count += nulls;
    c->nan_count += nan;
    c->pos_inf_count += pinf;
    c->neg_inf_count += ninf;
    c->dmin = mn;
    c->dmax = mx;
    c->has_range = have;
    return finish_numeric(c, fin, nf, NULL, err);
}

static void update_bool(prof_column *c, const struct ArrowArray *a, int64_t start, int64_t n)
{
    const uint8_t *bits = a->null_count == 0 ? NULL : (const uint8_t *)a->buffers[0];
    const uint8_t *vals = a->buffers[1];
    int64_t base = a->offset + start, nulls = 0, t = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = base + i;
        if (!valid_at(bits, at)) {
            nulls++;
            continue;
        }
        t += (vals[at >> 3] >> (at & 7)) & 1;
    }
    c->null_count += nulls;
    c->true_count += t;
    c->false_count += n - nulls - t;
}

int shape_profile_memo_off_ = 0;

/* The memo slot of a text value: its length and end bytes (the values of a
 * few-valued column mostly differ there). */
static inline prof_text_memo *memo_slot(prof_text_memo *memo, const uint8_t *p, size_t len)
{
    unsigned k = len ? (unsigned)len * 5u + p[0] + 3u * p[len - 1] : 0u;
    return &memo[k & (PROF_MEMO_SLOTS - 1)];
}

/* Whether the next batch uses the memo: not when it found too few values
 * in the last one (a column of many values would pay the look-up and the
 * copy for nothing); tried again every 16 batches. */
enum { MEMO_RETRY_BATCHES = 16 };

static int update_text(prof_column *c, const struct ArrowArray *a, int64_t start, int64_t n, shape_err *err)
{
    const uint8_t *bits = a->null_count == 0 ? NULL : (const uint8_t *)a->buffers[0];
    int64_t base = a->offset + start, nulls = 0;
    const uint8_t *bmin = NULL, *bmax = NULL;
    size_t bmin_len = 0, bmax_len = 0;
    text_key kmin = {0, 0}, kmax = {0, 0};
    int rc = SHAPE_OK;
    prof_reader rd = c->reader;
    int64_t *dense = c->lengths.dense;
    int64_t dense_count = 0, dense_total = 0;
    prof_text_key run_keys[PROF_SS_RUN]; /* top keys in row order, added a run at a time */
    size_t run = 0;
    if (!c->memo) {
        if (!(c->memo = malloc(PROF_MEMO_SLOTS * sizeof *c->memo)))
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory for a text column");
        for (int slot = 0; slot < PROF_MEMO_SLOTS; slot++) c->memo[slot].len = PROF_MEMO_EMPTY;
    }
    prof_text_memo *memo = NULL;
    if (c->memo_rest > 0)
        c->memo_rest--;
    else if (!shape_profile_memo_off_)
        memo = c->memo;
    int64_t memo_hits = 0, memo_looks = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = base + i;
        if (!valid_at(bits, at)) {
            nulls++;
            continue;
        }
        size_t len;
        const uint8_t *p = text_at(a, rd, at, &len);
        size_t cp;
        unsigned m;
        uint64_t h;
        prof_text_memo *e = memo && len <= PROF_MEMO_BYTES ? memo_slot(memo, p, len) : NULL;
        memo_looks += e != NULL;
        if (e && e->len == len && shape_bytes_equal(e->bytes, p, len)) {
            cp = e->code_points;
            m = e->patterns;
            h = e->hash;
            memo_hits++;
        } else {
            cp = shape_utf8_length(p, len);
            m = len <= SHAPE_PATTERN_MAX_BYTES ? shape_text_patterns(p, len) : 0;
            h = prof_hash_bytes(SHAPE_HASH_STRING, p, len);
            if (e) { /* remember it in place of the slot's last value */
                e->len = (uint8_t)len;
                if (len) memcpy(e->bytes, p, len);
                e->code_points = (uint32_t)cp;
                e->patterns = m;
                e->hash = h;
            }
        }
        if (cp < SHAPE_LENHIST_DENSE) {
            dense[cp]++;
            dense_count++;
            dense_total += (int64_t)cp;
        } else if ((rc = shape_lenhist_add(&c->lengths, (int64_t)cp, 1, err)) != SHAPE_OK) {
            break;
        }
        text_key k = text_key_of(p, len);
        int below = bmin ? key_cmp(k, kmin) : -1, above = bmax ? key_cmp(k, kmax) : 1;
        /* keys that tie on texts of one length up to 16 bytes are the same
         * text: no byte compare (a column of one value, as a split table's
         * _shape_table, ties with both ends in every row) */
        if (below < 0 || (below == 0 && (len > 16 || len != bmin_len) && cmp_bytes(p, len, bmin, bmin_len) < 0)) {
            bmin = p;
            bmin_len = len;
            kmin = k;
        }
        if (above > 0 || (above == 0 && (len > 16 || len != bmax_len) && cmp_bytes(p, len, bmax, bmax_len) > 0)) {
            bmax = p;
            bmax_len = len;
            kmax = k;
        }
        while (m) {
            c->patterns[__builtin_ctz(m)]++;
            m &= m - 1;
        }
        shape_hll_add_hash(c->hll, h);
        run_keys[run] = (prof_text_key){p, len, h};
        if (++run == PROF_SS_RUN) {
            rc = prof_ss_add_texts(c->ss, run_keys, run, err);
            run = 0;
            if (rc != SHAPE_OK) break;
        }
    }
    if (run) { /* the rest of the run (also after a histogram failure: the rows before it were counted) */
        int r = prof_ss_add_texts(c->ss, run_keys, run, rc == SHAPE_OK ? err : NULL);
        if (rc == SHAPE_OK) rc = r;
    }
    if (memo && memo_hits * 4 < memo_looks) c->memo_rest = MEMO_RETRY_BATCHES;
    c->lengths.count += dense_count;
    c->lengths.total += dense_total;
    c->null_count += nulls;
    if (bmin && (!c->has_range || cmp_bytes(bmin, bmin_len, c->tmin, c->tmin_len) < 0)) {
        int r = prof_set_bytes(&c->tmin, &c->tmin_len, &c->tmin_cap, bmin, bmin_len, err);
        if (r != SHAPE_OK) return r;
    }
    if (bmax && (!c->has_range || cmp_bytes(bmax, bmax_len, c->tmax, c->tmax_len) > 0)) {
        int r = prof_set_bytes(&c->tmax, &c->tmax_len, &c->tmax_cap, bmax, bmax_len, err);
        if (r != SHAPE_OK) return r;
    }
    if (bmin && bmax) c->has_range = 1;
    return rc;
}

static int update_temporal(prof_column *c, const struct ArrowArray *a, int64_t start, int64_t n, shape_err *err)
{
    const uint8_t *bits = a->null_count == 0 ? NULL : (const uint8_t *)a->buffers[0];
    int64_t base = a->offset + start, nulls = 0;
    int64_t mn = c->imin, mx = c->imax;
    int have = c->has_range;
    int rc = SHAPE_OK;
    int64_t run_keys[PROF_SS_RUN]; /* top keys in row order, added a run at a time */
    uint64_t run_hashes[PROF_SS_RUN];
    size_t run = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = base + i;
        if (!valid_at(bits, at)) {
            nulls++;
            continue;
        }
        int64_t us;
        switch (c->reader) {
        case RD_TS_US: us = ((const int64_t *)a->buffers[1])[at]; break;
        case RD_TS_NS: us = shape_us_from_ns(((const int64_t *)a->buffers[1])[at]); break;
        case RD_TS_MS: us = wrap_mul(((const int64_t *)a->buffers[1])[at], 1000); break;
        case RD_TS_S: us = wrap_mul(((const int64_t *)a->buffers[1])[at], 1000000); break;
        case RD_DATE64: us = wrap_mul(((const int64_t *)a->buffers[1])[at], 1000); break;
        default: us = wrap_mul(((const int32_t *)a->buffers[1])[at], INT64_C(86400000000)); break;
        }
        if ((rc = shape_timehist_add(&c->times, us, err)) != SHAPE_OK) break;
        if (!have) {
            mn = mx = us;
            have = 1;
        } else if (us < mn) {
            mn = us;
        } else if (us > mx) {
            mx = us;
        }
        uint64_t h = prof_hash_timestamp(us);
        shape_hll_add_hash(c->hll, h);
        run_keys[run] = us;
        run_hashes[run] = h;
        if (++run == PROF_SS_RUN) {
            prof_ss_add_ints(c->ss, run_keys, run_hashes, run);
            run = 0;
        }
    }
    prof_ss_add_ints(c->ss, run_keys, run_hashes, run);
    c->null_count += nulls;
    c->imin = mn;
    c->imax = mx;
    c->has_range = have;
    return rc;
}

int prof_column_update(prof_column *c, const struct ArrowArray *a, int64_t start, int64_t n, shape_err *err)
{
    int rc = SHAPE_OK;
    c->count += n;
    switch (c->kind) {
    case PROF_INT: rc = update_int(c, a, start, n, err); break;
    case PROF_FLOAT: rc = update_float(c, a, start, n, err); break;
    case PROF_BOOL: update_bool(c, a, start, n); break;
    case PROF_TEXT: rc = update_text(c, a, start, n, err); break;
    case PROF_TEMPORAL: rc = update_temporal(c, a, start, n, err); break;
    default: c->null_count += count_nulls(a, c->reader, start, n); break;
    }
    if (rc != SHAPE_OK) shape_err_prefix(err, "column '%s'", c->name);
    return rc;
}

void prof_column_add_nulls(prof_column *c, int64_t n)
{
    c->count += n;
    c->null_count += n;
}

/* ---- merge -------------------------------------------------------------- */

int prof_column_merge(prof_column *dst, const prof_column *src, shape_err *err)
{
    /* The steps that can fail come first, so a failure changes nothing that
     * cannot be told apart from "merge not done" by the caller (who discards
     * dst on error anyway). */
    if (dst->kind == PROF_TEXT) {
        SHAPE_RETURN_NOT_OK(shape_lenhist_merge(&dst->lengths, &src->lengths, err));
        if (src->has_range) {
            if (!dst->has_range || cmp_bytes(src->tmin, src->tmin_len, dst->tmin, dst->tmin_len) < 0)
                SHAPE_RETURN_NOT_OK(prof_set_bytes(&dst->tmin, &dst->tmin_len, &dst->tmin_cap, src->tmin, src->tmin_len, err));
            if (!dst->has_range || cmp_bytes(src->tmax, src->tmax_len, dst->tmax, dst->tmax_len) > 0)
                SHAPE_RETURN_NOT_OK(prof_set_bytes(&dst->tmax, &dst->tmax_len, &dst->tmax_cap, src->tmax, src->tmax_len, err));
        }
        for (int i = 0; i < SHAPE_PATTERN_COUNT; i++) dst->patterns[i] += src->patterns[i];
    }
    if (dst->kind == PROF_TEMPORAL) SHAPE_RETURN_NOT_OK(shape_timehist_merge(&dst->times, &src->times, err));
    if (dst->ss) SHAPE_RETURN_NOT_OK(shape_ss_merge(dst->ss, src->ss, err));
    if (dst->kll) SHAPE_RETURN_NOT_OK(shape_kll_merge(dst->kll, src->kll, err));
    if (dst->hll) shape_hll_merge(dst->hll, src->hll);
    dst->count += src->count;
    dst->null_count += src->null_count;
    dst->nan_count += src->nan_count;
    dst->pos_inf_count += src->pos_inf_count;
    dst->neg_inf_count += src->neg_inf_count;
    dst->finite_count += src->finite_count;
    dst->true_count += src->true_count;
    dst->false_count += src->false_count;
    shape_moments_merge(&dst->moments, &src->moments);
    if (src->has_range && dst->kind != PROF_TEXT) {
        if (!dst->has_range) {
            dst->imin = src->imin;
            dst->imax = src->imax;
            dst->dmin = src->dmin;
            dst->dmax = src->dmax;
        } else {
            if (src->imin < dst->imin) dst->imin = src->imin;
            if (src->imax > dst->imax) dst->imax = src->imax;
            if (src->dmin < dst->dmin) dst->dmin = src->dmin;
            if (src->dmax > dst->dmax) dst->dmax = src->dmax;
        }
    }
    if (src->has_range) dst->has_range = 1;
    return SHAPE_OK;
}

/* state.c — the mergeable profiler state: save and load a shape_profile.
 *
 * Why: checkpoints (resume after a crash must give the same profile as an
 * uninterrupted run) and scale-out (`--state FILE`, then profile-merge) need
 * the complete profiler state on disk, restored exactly, and must refuse a
 * state made by another configuration instead of mixing incompatible
 * sketches.
 *
 * How: a binary, little-endian format written field by field (never a raw
 * struct dump), versioned and checksummed:
 *
 *   magic        8 bytes "SHPROFST"
 *   version      u32 (SHAPE_PROFILE_STATE_VERSION = 2; 1 is still read)
 *   fingerprint  str: "top_n=500 hll_p=14 hll_hash=xxh3-64/seed0/tagged
 *                ss_capacity=64 kll_k=200 kll_compaction=alternating"
 *   name         str (table name)
 *   origin       (version 2 only) u8 0 = unknown, or u8 1 + u32 sources,
 *                each: source str + u32 n + n × i32 partitions, ascending
 *                and distinct (shape_profile_set_origin: what
 *                profile-merge checks)
 *   rows         i64
 *   ncols        u32, then each column:
 *     name str, format str (Arrow), arrow_type str, kind u8 (0 int, 1 float,
 *     2 bool, 3 text, 4 temporal, 5 other), count i64, null_count i64, then
 *     int/float  nan, pos_inf, neg_inf, finite i64; has_range u8; min, max
 *                (i64 for int, f64 for float); moments n i64, mean f64,
 *                m2 f64; hll; ss; kll
 *     bool       true_count, false_count i64
 *     text       has_range u8; min str; max str; length bins u32 +
 *                (length i64, count i64)* ascending; 12 pattern counts i64;
 *                hll; ss
 *     temporal   has_range u8; min, max i64; hour[24], dow[7], month[12]
 *                i64; years u32 + (year i64, count i64)* ascending; hll; ss
 *   checksum     u64: XXH3-64 (seed 0) of every byte before it
 *
 *   str  = u32 byte length + bytes;  f64 = IEEE-754 bits as u64
 *   hll  = u8 0 + 16384 register bytes, or u8 1 + u32 n + n × (u16 index,
 *          u8 rank), ascending (the sparse form when it is smaller)
 *   ss   = u8 key kind, i64 n, u32 size, then the entries in list order
 *          (ascending count, least recently updated first): count i64,
 *          error i64, key (i64 | f64 | str)
 *   kll  = u32 k, i64 n, u64 compactions, u32 levels, per level u32 length
 *          + f64 items in stored order
 *
 * Everything a later update or merge depends on is in it (SpaceSaving's
 * recency order, KLL's item order and compaction counter, the raw moment
 * doubles including an overflowed inf/NaN), and nothing else (no hash
 * indexes, caches or capacities), so save → load → save is byte-identical
 * and a loaded profile continues exactly as the saved one would have.
 * Loading checks the checksum first, then every length against the bytes
 * left and every value against its invariant (kinds agree with formats,
 * ranks <= 51, counts consistent, KLL weight = n), so a damaged or hostile
 * file is refused rather than trusted.
 */
#include "profile_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "shape/json.h" /* shape_json_buf */

static const char MAGIC[8] = {'S', 'H', 'P', 'R', 'O', 'F', 'S', 'T'};

void shape_profile_config_fingerprint(const shape_profile_config *cfg, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "top_n=%lld hll_p=%d hll_hash=xxh3-64/seed0/tagged ss_capacity=%d kll_k=%d "
             "kll_compaction=alternating",
             (long long)cfg->top_n, SHAPE_HLL_P, SHAPE_SS_CAPACITY, SHAPE_KLL_K);
}

/* ---- writing ------------------------------------------------------------ */

/* The state being written, and whether it ran out of memory (sticky:
 * checked once at the end). */
typedef struct wbuf {
    shape_json_buf b;
    int failed;
} wbuf;

static void w_bytes(wbuf *w, const void *p, size_t n)
{
    if (!w->failed && shape_json_buf_append(&w->b, p, n) != 0) w->failed = 1;
}

static void w_u64(wbuf *w, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
    w_bytes(w, b, 8);
}

static void w_u32(wbuf *w, uint32_t v)
{
    uint8_t b[4];
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
    w_bytes(w, b, 4);
}

static void w_u16(wbuf *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    w_bytes(w, b, 2);
}

static void w_u8(wbuf *w, uint8_t v) { w_bytes(w, &v, 1); }
static void w_i64(wbuf *w, int64_t v) { w_u64(w, (uint64_t)v); }

static void w_f64(wbuf *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    w_u64(w, bits);
}

static void w_str(wbuf *w, const void *p, size_t n)
{
    if (n > UINT32_MAX) {
        w->failed = 1;
        return;
    }
    w_u32(w, (uint32_t)n);
    w_bytes(w, p, n);
}

static void w_cstr(wbuf *w, const char *s) { w_str(w, s, strlen(s)); }

static void w_hll(wbuf *w, const shape_hll *h)
{
    uint32_t nz = 0;
    for (size_t i = 0; i < SHAPE_HLL_REGISTERS; i++) nz += h->registers[i] != 0;
    if ((size_t)nz * 3 + 4 < SHAPE_HLL_REGISTERS) {
        w_u8(w, 1);
        w_u32(w, nz);
        for (size_t i = 0; i < SHAPE_HLL_REGISTERS; i++)
            if (h->registers[i]) {
                w_u16(w, (uint16_t)i);
                w_u8(w, h->registers[i]);
            }
    } else {
        w_u8(w, 0);
        w_bytes(w, h->registers, SHAPE_HLL_REGISTERS);
    }
}

static void w_ss(wbuf *w, const shape_spacesaving *s)
{
    shape_ss_item items[SHAPE_SS_CAPACITY];
    size_t n = shape_ss_items_ordered_(s, items);
    w_u8(w, (uint8_t)shape_ss_key_kind(s));
    w_i64(w, shape_ss_total(s));
    w_u32(w, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        w_i64(w, items[i].count);
        w_i64(w, items[i].error);
        switch (shape_ss_key_kind(s)) {
        case SHAPE_SS_DOUBLE: w_f64(w, items[i].d); break;
        case SHAPE_SS_TEXT: w_str(w, items[i].text, items[i].text_len); break;
        default: w_i64(w, items[i].i); break;
        }
    }
}

static void w_kll(wbuf *w, const shape_kll *s)
{
    size_t levels = shape_kll_num_levels(s);
    w_u32(w, (uint32_t)shape_kll_k(s));
    w_i64(w, shape_kll_n(s));
    w_u64(w, shape_kll_compactions_(s));
    w_u32(w, (uint32_t)levels);
    for (size_t l = 0; l < levels; l++) {
        size_t len;
        const double *v = shape_kll_level_items_(s, l, &len);
        w_u32(w, (uint32_t)len);
        for (size_t j = 0; j < len; j++) w_f64(w, v[j]);
    }
}

static void w_column(wbuf *w, const prof_column *c)
{
    w_cstr(w, c->name);
    w_cstr(w, c->format);
    w_cstr(w, c->arrow_type);
    w_u8(w, (uint8_t)c->kind);
    w_i64(w, c->count);
    w_i64(w, c->null_count);
    switch (c->kind) {
    case PROF_INT:
    case PROF_FLOAT:
        w_i64(w, c->nan_count);
        w_i64(w, c->pos_inf_count);
        w_i64(w, c->neg_inf_count);
        w_i64(w, c->finite_count);
        w_u8(w, (uint8_t)c->has_range);
        if (c->kind == PROF_INT) {
            w_i64(w, c->imin);
            w_i64(w, c->imax);
        } else {
            w_f64(w, c->dmin);
            w_f64(w, c->dmax);
        }
        w_i64(w, c->moments.n);
        w_f64(w, c->moments.mean);
        w_f64(w, c->moments.m2);
        w_hll(w, c->hll);
        w_ss(w, c->ss);
        w_kll(w, c->kll);
        break;
    case PROF_BOOL:
        w_i64(w, c->true_count);
        w_i64(w, c->false_count);
        break;
    case PROF_TEXT: {
        w_u8(w, (uint8_t)c->has_range);
        w_str(w, c->tmin, c->has_range ? c->tmin_len : 0);
        w_str(w, c->tmax, c->has_range ? c->tmax_len : 0);
        shape_lenhist_bin *bins = NULL;
        size_t nb = shape_lenhist_bins(&c->lengths, &bins);
        if (nb == (size_t)-1) {
            w->failed = 1;
            break;
        }
        w_u32(w, (uint32_t)nb);
        for (size_t i = 0; i < nb; i++) {
            w_i64(w, bins[i].length);
            w_i64(w, bins[i].count);
        }
        free(bins);
        for (int i = 0; i < SHAPE_PATTERN_COUNT; i++) w_i64(w, c->patterns[i]);
        w_hll(w, c->hll);
        w_ss(w, c->ss);
        break;
    }
    case PROF_TEMPORAL:
        w_u8(w, (uint8_t)c->has_range);
        w_i64(w, c->imin);
        w_i64(w, c->imax);
        for (int i = 0; i < 24; i++) w_i64(w, c->times.hour[i]);
        for (int i = 0; i < 7; i++) w_i64(w, c->times.dow[i]);
        for (int i = 0; i < 12; i++) w_i64(w, c->times.month[i]);
        w_u32(w, (uint32_t)c->times.n_years);
        for (size_t i = 0; i < c->times.n_years; i++) {
            w_i64(w, c->times.years[i].year);
            w_i64(w, c->times.years[i].count);
        }
        w_hll(w, c->hll);
        w_ss(w, c->ss);
        break;
    default: break;
    }
}

int shape_profile_state_save(const shape_profile *p, uint8_t **out, size_t *len, shape_err *err)
{
    *out = NULL;
    *len = 0;
    wbuf w = {0};
    char fp[256];
    shape_profile_config_fingerprint(&p->cfg, fp, sizeof fp);
    w_bytes(&w, MAGIC, sizeof MAGIC);
    w_u32(&w, SHAPE_PROFILE_STATE_VERSION);
    w_cstr(&w, fp);
    w_cstr(&w, p->name);
    w_u8(&w, p->origin_known != 0);
    if (p->origin_known) w_u32(&w, (uint32_t)p->n_origins);
    for (size_t k = 0; p->origin_known && k < p->n_origins; k++) {
        w_cstr(&w, p->origins[k].source);
        w_u32(&w, (uint32_t)p->origins[k].n);
        for (size_t i = 0; i < p->origins[k].n; i++) w_u32(&w, (uint32_t)p->origins[k].parts[i]);
    }
    w_i64(&w, p->rows);
    w_u32(&w, (uint32_t)p->ncols);
    for (size_t i = 0; i < p->ncols; i++) w_column(&w, p->cols[i]);
    if (!w.failed) w_u64(&w, XXH3_64bits_withSeed(w.b.data, w.b.len, 0));
    if (w.failed) {
        shape_json_buf_reset(&w.b);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory saving the profile state of '%s'", p->name);
    }
    *out = (uint8_t *)w.b.data;
    *len = w.b.len;
    return SHAPE_OK;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct rbuf {
    const uint8_t *p;
    size_t len, at;
    int bad;
} rbuf;

static const uint8_t *r_take(rbuf *r, size_t n)
{
    if (r->bad || n > r->len - r->at) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *q = r->p + r->at;
    r->at += n;
    return q;
}

static uint64_t r_u64(rbuf *r)
{
    const uint8_t *b = r_take(r, 8);
    uint64_t v = 0;
    if (b)
        for (int i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static uint32_t r_u32(rbuf *r)
{
    const uint8_t *b = r_take(r, 4);
    uint32_t v = 0;
    if (b)
        for (int i = 0; i < 4; i++) v |= (uint32_t)b[i] << (8 * i);
    return v;
}

static uint16_t r_u16(rbuf *r)
{
    const uint8_t *b = r_take(r, 2);
    return b ? (uint16_t)(b[0] | (b[1] << 8)) : 0;
}

static uint8_t r_u8(rbuf *r)
{
    const uint8_t *b = r_take(r, 1);
    return b ? b[0] : 0;
}

static int64_t r_i64(rbuf *r) { return (int64_t)r_u64(r); }

static double r_f64(rbuf *r)
{
    uint64_t bits = r_u64(r);
    double v;
    memcpy(&v, &bits, 8);
    return v;
}

/* A string: pointer into the buffer and its length. */
static const uint8_t *r_str(rbuf *r, size_t *n)
{
    *n = r_u32(r);
    return r_take(r, *n);
}

/* A NUL-terminated malloc'd copy of a string without NUL bytes. */
static char *r_cstr(rbuf *r)
{
    size_t n;
    const uint8_t *p = r_str(r, &n);
    if (!p || memchr(p, 0, n)) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

#define CORRUPT(what) shape_err_set(err, SHAPE_EINVAL, "profile state is corrupt: %s", what)

static int r_hll(rbuf *r, shape_hll *h, shape_err *err)
{
    uint8_t enc = r_u8(r);
    shape_hll_init(h);
    if (enc == 0) {
        const uint8_t *b = r_take(r, SHAPE_HLL_REGISTERS);
        if (b) memcpy(h->registers, b, SHAPE_HLL_REGISTERS);
    } else if (enc == 1) {
        uint32_t n = r_u32(r);
        if (n > SHAPE_HLL_REGISTERS) return CORRUPT("HyperLogLog register count");
        int prev = -1;
        for (uint32_t i = 0; i < n && !r->bad; i++) {
            uint16_t idx = r_u16(r);
            uint8_t v = r_u8(r);
            if ((int)idx <= prev || idx >= SHAPE_HLL_REGISTERS || v == 0) return CORRUPT("HyperLogLog registers");
            h->registers[idx] = v;
            prev = idx;
        }
    } else {
        return CORRUPT("HyperLogLog encoding");
    }
    for (size_t i = 0; i < SHAPE_HLL_REGISTERS; i++)
        if (h->registers[i] > SHAPE_HLL_MAX_RANK) return CORRUPT("HyperLogLog rank");
    return r->bad ? CORRUPT("truncated HyperLogLog") : SHAPE_OK;
}

static int r_ss(rbuf *r, shape_spacesaving *s, shape_err *err)
{
    uint8_t kind = r_u8(r);
    int64_t total = r_i64(r);
    uint32_t n = r_u32(r);
    if (r->bad) return CORRUPT("truncated top values");
    if (kind != (uint8_t)shape_ss_key_kind(s)) return CORRUPT("top-value key kind");
    if (n > (uint32_t)shape_ss_capacity(s)) return CORRUPT("too many top values");
    int64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        shape_ss_item it = {0};
        it.count = r_i64(r);
        it.error = r_i64(r);
        switch (shape_ss_key_kind(s)) {
        case SHAPE_SS_DOUBLE: it.d = r_f64(r); break;
        case SHAPE_SS_TEXT: it.text = r_str(r, &it.text_len); break;
        default: it.i = r_i64(r); break;
        }
        if (r->bad) return CORRUPT("truncated top values");
        shape_err sub;
        int rc = shape_ss_append_raw_(s, &it, &sub);
        if (rc == SHAPE_ENOMEM) return shape_err_set(err, rc, "%s", sub.message);
        if (rc != SHAPE_OK) return shape_err_set(err, SHAPE_EINVAL, "profile state is corrupt: %s", sub.message);
        if (it.count - it.error > INT64_MAX - sum) return CORRUPT("top-value counts");
        sum += it.count - it.error;
    }
    /* every entry's guaranteed part was counted in n */
    if (total < 0 || sum > total) return CORRUPT("top-value total");
    shape_ss_set_total_(s, total);
    return SHAPE_OK;
}

static int r_kll(rbuf *r, shape_kll *s, shape_err *err)
{
    uint32_t k = r_u32(r);
    int64_t n = r_i64(r);
    uint64_t compactions = r_u64(r);
    uint32_t levels = r_u32(r);
    if (r->bad) return CORRUPT("truncated quantile sketch");
    if ((int)k != shape_kll_k(s)) return CORRUPT("quantile sketch k");
    if (levels < 1 || levels > 64) return CORRUPT("quantile sketch levels");
    size_t lens[64];
    size_t total = 0;
    size_t start = r->at;
    for (uint32_t l = 0; l < levels; l++) {
        lens[l] = r_u32(r);
        if (!r_take(r, lens[l] * 8)) return CORRUPT("truncated quantile sketch");
        total += lens[l];
    }
    double *items = malloc((total ? total : 1) * sizeof *items);
    if (!items) return shape_err_set(err, SHAPE_ENOMEM, "out of memory loading a quantile sketch");
    r->at = start;
    size_t at = 0;
    for (uint32_t l = 0; l < levels; l++) {
        (void)r_u32(r);
        for (size_t j = 0; j < lens[l]; j++) items[at++] = r_f64(r);
    }
    shape_err sub;
    int rc = shape_kll_restore_(s, levels, lens, items, compactions, &sub);
    free(items);
    if (rc == SHAPE_ENOMEM) return shape_err_set(err, rc, "%s", sub.message);
    if (rc != SHAPE_OK) return shape_err_set(err, SHAPE_EINVAL, "profile state is corrupt: %s", sub.message);
    if (shape_kll_n(s) != n) return CORRUPT("quantile sketch weight");
    return SHAPE_OK;
}

/* *sum += v when 0 <= v <= cap - *sum, so that a hostile state's counts can
 * neither be negative nor overflow the sum they are checked against. */
static int add_count(int64_t *sum, int64_t v, int64_t cap)
{
    if (v < 0 || *sum < 0 || v > cap - *sum) return 0;
    *sum += v;
    return 1;
}

static int r_column(rbuf *r, int64_t rows, prof_column **out, shape_err *err)
{
    *out = NULL;
    char *name = r_cstr(r), *format = r_cstr(r), *type = r_cstr(r);
    uint8_t kind = r_u8(r);
    int rc = SHAPE_OK;
    if (r->bad)
        rc = CORRUPT("truncated column");
    else if (!name || !format || !type)
        rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory loading the profile state");
    prof_column *c = NULL;
    if (rc == SHAPE_OK) rc = prof_column_new(name, format, type, &c, err);
    free(name);
    free(format);
    free(type);
    if (rc != SHAPE_OK) return rc;
    *out = c; /* the caller frees it on failure */
    if (kind != (uint8_t)c->kind) return CORRUPT("column kind does not match its Arrow type");
    c->count = r_i64(r);
    c->null_count = r_i64(r);
    if (c->count != rows || c->null_count < 0 || c->null_count > c->count)
        return CORRUPT("column counts");
    int64_t values = c->count - c->null_count;
    switch (c->kind) {
    case PROF_INT:
    case PROF_FLOAT:
        c->nan_count = r_i64(r);
        c->pos_inf_count = r_i64(r);
        c->neg_inf_count = r_i64(r);
        c->finite_count = r_i64(r);
        c->has_range = r_u8(r);
        if (c->kind == PROF_INT) {
            c->imin = r_i64(r);
            c->imax = r_i64(r);
        } else {
            c->dmin = r_f64(r);
            c->dmax = r_f64(r);
        }
        c->moments.n = r_i64(r);
        c->moments.mean = r_f64(r);
        c->moments.m2 = r_f64(r);
        if (r->bad) return CORRUPT("truncated column");
        int64_t numbers = 0;
        if (!add_count(&numbers, c->nan_count, values) || !add_count(&numbers, c->pos_inf_count, values) ||
            !add_count(&numbers, c->neg_inf_count, values) || !add_count(&numbers, c->finite_count, values) ||
            numbers != values ||
            c->moments.n != c->finite_count || c->has_range > 1 || (c->has_range != 0) != (c->finite_count > 0))
            return CORRUPT("numeric counts");
        SHAPE_RETURN_NOT_OK(r_hll(r, c->hll, err));
        SHAPE_RETURN_NOT_OK(r_ss(r, c->ss, err));
        SHAPE_RETURN_NOT_OK(r_kll(r, c->kll, err));
        if (shape_kll_n(c->kll) != c->finite_count) return CORRUPT("quantile sketch size");
        if (shape_ss_total(c->ss) != values - c->nan_count) return CORRUPT("top-value total");
        break;
    case PROF_BOOL:
        c->true_count = r_i64(r);
        c->false_count = r_i64(r);
        if (r->bad) return CORRUPT("truncated column");
        int64_t truths = 0;
        if (!add_count(&truths, c->true_count, values) || !add_count(&truths, c->false_count, values) ||
            truths != values)
            return CORRUPT("bool counts");
        break;
    case PROF_TEXT: {
        c->has_range = r_u8(r);
        size_t n1, n2;
        const uint8_t *mn = r_str(r, &n1), *mx = r_str(r, &n2);
        if (r->bad) return CORRUPT("truncated column");
        if (c->has_range > 1 || (c->has_range != 0) != (values > 0)) return CORRUPT("text range");
        if (c->has_range) {
            SHAPE_RETURN_NOT_OK(prof_set_bytes(&c->tmin, &c->tmin_len, &c->tmin_cap, mn, n1, err));
            SHAPE_RETURN_NOT_OK(prof_set_bytes(&c->tmax, &c->tmax_len, &c->tmax_cap, mx, n2, err));
        }
        uint32_t nb = r_u32(r);
        if (r->bad || (size_t)nb > (r->len - r->at) / 16) return CORRUPT("length histogram");
        int64_t prev = -1, counted = 0, chars = 0;
        for (uint32_t i = 0; i < nb; i++) {
            int64_t len = r_i64(r), cnt = r_i64(r);
            /* the histogram keeps the total length too: len * cnt must fit */
            if (len <= prev || cnt <= 0 || !add_count(&counted, cnt, values) || len > (INT64_MAX - chars) / cnt)
                return CORRUPT("length histogram");
            chars += len * cnt;
            SHAPE_RETURN_NOT_OK(shape_lenhist_add(&c->lengths, len, cnt, err));
            prev = len;
        }
        if (c->lengths.count != values) return CORRUPT("length histogram total");
        for (int i = 0; i < SHAPE_PATTERN_COUNT; i++) {
            c->patterns[i] = r_i64(r);
            if (c->patterns[i] < 0 || c->patterns[i] > values) return CORRUPT("pattern counts");
        }
        SHAPE_RETURN_NOT_OK(r_hll(r, c->hll, err));
        SHAPE_RETURN_NOT_OK(r_ss(r, c->ss, err));
        if (shape_ss_total(c->ss) != values) return CORRUPT("top-value total");
        break;
    }
    case PROF_TEMPORAL: {
        c->has_range = r_u8(r);
        c->imin = r_i64(r);
        c->imax = r_i64(r);
        int64_t sum[3] = {0, 0, 0};
        int counts_ok = 1;
        for (int i = 0; i < 24; i++) counts_ok &= add_count(&sum[0], c->times.hour[i] = r_i64(r), values);
        for (int i = 0; i < 7; i++) counts_ok &= add_count(&sum[1], c->times.dow[i] = r_i64(r), values);
        for (int i = 0; i < 12; i++) counts_ok &= add_count(&sum[2], c->times.month[i] = r_i64(r), values);
        uint32_t ny = r_u32(r);
        if (r->bad || (size_t)ny > (r->len - r->at) / 16) return CORRUPT("truncated column");
        if (c->has_range > 1 || (c->has_range != 0) != (values > 0) || !counts_ok || sum[0] != values ||
            sum[1] != values || sum[2] != values)
            return CORRUPT("temporal histograms");
        int64_t prev = INT64_MIN, ysum = 0;
        for (uint32_t i = 0; i < ny; i++) {
            int64_t year = r_i64(r), cnt = r_i64(r);
            if ((i && year <= prev) || cnt <= 0 || !add_count(&ysum, cnt, values)) return CORRUPT("year histogram");
            SHAPE_RETURN_NOT_OK(shape_timehist_add_year(&c->times, year, cnt, err));
            prev = year;
        }
        if (ysum != values) return CORRUPT("year histogram total");
        SHAPE_RETURN_NOT_OK(r_hll(r, c->hll, err));
        SHAPE_RETURN_NOT_OK(r_ss(r, c->ss, err));
        if (shape_ss_total(c->ss) != values) return CORRUPT("top-value total");
        break;
    }
    default: break;
    }
    return r->bad ? CORRUPT("truncated column") : SHAPE_OK;
}

/* The origin of a version-2 state: sources, each with ascending distinct
 * partitions >= 0. */
static int r_origin(rbuf *r, shape_profile *p, shape_err *err)
{
    uint8_t known = r_u8(r);
    if (r->bad || known > 1) return CORRUPT("origin");
    if (!known) return SHAPE_OK;
    uint32_t nsources = r_u32(r);
    if (r->bad || nsources > (r->len - r->at) / 8) return CORRUPT("origin");
    SHAPE_RETURN_NOT_OK(shape_profile_set_origin(p, NULL, NULL, 0, err));
    p->origin_known = 1;
    int rc = SHAPE_OK;
    for (uint32_t k = 0; rc == SHAPE_OK && k < nsources; k++) {
        char *source = r_cstr(r);
        if (!source) return r->bad ? CORRUPT("origin") : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        for (uint32_t m = 0; m < k && rc == SHAPE_OK; m++)
            if (strcmp(p->origins[m].source, source) == 0) rc = CORRUPT("origin: a source given twice");
        uint32_t n = r_u32(r);
        if (rc == SHAPE_OK && (r->bad || n > (r->len - r->at) / 4)) rc = CORRUPT("origin");
        int32_t *parts = rc == SHAPE_OK && n ? malloc(n * sizeof *parts) : NULL;
        if (rc == SHAPE_OK && n && !parts) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        for (uint32_t i = 0; rc == SHAPE_OK && i < n; i++) {
            uint32_t v = r_u32(r);
            parts[i] = (int32_t)v;
            if (r->bad || v > INT32_MAX || (i && parts[i - 1] >= parts[i])) rc = CORRUPT("origin partitions");
        }
        if (rc == SHAPE_OK) rc = shape_profile_add_origin(p, source, parts, n, err);
        free(parts);
        free(source);
    }
    return rc;
}

int shape_profile_state_load(const uint8_t *data, size_t len, const shape_profile_config *cfg, shape_profile **out,
                             shape_err *err)
{
    *out = NULL;
    shape_profile_config def;
    if (!cfg) {
        shape_profile_config_default(&def);
        cfg = &def;
    }
    if (len < sizeof MAGIC + 4 + 8 || memcmp(data, MAGIC, sizeof MAGIC) != 0)
        return shape_err_set(err, SHAPE_EINVAL, "not a profile state (no \"SHPROFST\" header)");
    rbuf r = {data, len - 8, sizeof MAGIC, 0};
    uint32_t version = r_u32(&r);
    if (version != SHAPE_PROFILE_STATE_VERSION && version != 1)
        return shape_err_set(err, SHAPE_EINVAL,
                             "profile state format version %u is not supported (this build reads version %d)",
                             version, SHAPE_PROFILE_STATE_VERSION);
    uint64_t want = 0;
    for (int i = 0; i < 8; i++) want |= (uint64_t)data[len - 8 + (size_t)i] << (8 * i);
    if (XXH3_64bits_withSeed(data, len - 8, 0) != want)
        return shape_err_set(err, SHAPE_EINVAL, "profile state is corrupt or truncated (checksum mismatch)");
    size_t fplen;
    const uint8_t *fp = r_str(&r, &fplen);
    char mine[256];
    shape_profile_config_fingerprint(cfg, mine, sizeof mine);
    if (!fp) return CORRUPT("truncated header");
    if (fplen != strlen(mine) || memcmp(fp, mine, fplen) != 0)
        return shape_err_set(err, SHAPE_EINVAL,
                             "profile state was made with a different profiler configuration (%.*s; this run: %s): "
                             "use another file",
                             (int)(fplen > 200 ? 200 : fplen), (const char *)fp, mine);
    char *name = r_cstr(&r);
    if (!name) return r.bad ? CORRUPT("table name") : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    shape_profile *p = NULL;
    int rc = shape_profile_new(name, cfg, &p, err);
    free(name);
    if (rc != SHAPE_OK) return rc;
    if (version >= 2) rc = r_origin(&r, p, err);
    if (rc != SHAPE_OK) {
        shape_profile_free(p);
        return rc;
    }
    p->rows = r_i64(&r);
    uint32_t ncols = r_u32(&r);
    if (r.bad || p->rows < 0) rc = CORRUPT("truncated header");
    for (uint32_t i = 0; i < ncols && rc == SHAPE_OK; i++) {
        prof_column *c = NULL;
        rc = r_column(&r, p->rows, &c, err);
        if (rc == SHAPE_OK && prof_find_column(p, c->name)) rc = CORRUPT("two columns with the same name");
        if (rc == SHAPE_OK) rc = prof_add_column(p, c, err);
        if (rc != SHAPE_OK) prof_column_free(c);
    }
    if (rc == SHAPE_OK && r.at != r.len) rc = CORRUPT("bytes after the last column");
    if (rc != SHAPE_OK) {
        shape_profile_free(p);
        return rc;
    }
    *out = p;
    return SHAPE_OK;
}

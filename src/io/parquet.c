/* parquet.c — the Parquet writer (format and rules: shape/parquet.h).
 *
 * How, per batch (one row group): for each leaf column (a flat column is
 * one leaf; a map is two, its keys and its values) build the page in one
 * buffer — repetition levels (maps only) and definition levels as RLE runs
 * behind a 4-byte length, then the non-null values PLAIN — while taking the
 * chunk's statistics; compress it (ZSTD), write its PageHeader and the
 * compressed bytes, and remember the chunk's offsets, sizes and
 * statistics for the footer. finish writes the FileMetaData from them.
 * Dictionary encoding (SHAPE_PARQUET_DICTIONARY): the values are written
 * PLAIN into a scratch buffer instead, then hashed (XXH3) into an
 * open-addressing table of the distinct ones; the chunk gets a dictionary
 * page (the distinct values PLAIN, in order of first appearance) before
 * its data page, whose values are a bit width and the indices, bit-packed
 * (RLE_DICTIONARY); a chunk whose dictionary would not pay falls back to
 * PLAIN (dictionary_values).
 * Thrift compact protocol (the footer, page headers): field headers carry
 * the id as a delta from the previous field of the same struct when it is
 * 1..15, integers are zigzag varints, a struct ends with a stop byte.
 */
#include "shape/parquet.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>
#include <zstd.h>

#include "shape/version.h"
#include "writer_common.h"

/* ---- growable bytes -------------------------------------------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
    int oom;
} bytes;

static int reserve(bytes *b, size_t n)
{
    if (b->oom) return -1;
    if (b->cap - b->len >= n) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < n) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void put(bytes *b, const void *p, size_t n)
{
    if (n == 0 || reserve(b, n) != 0) return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void put_byte(bytes *b, uint8_t v) { put(b, &v, 1); }

static void put_varint(bytes *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    put(b, tmp, n);
}

static void put_u32(bytes *b, uint32_t v) { put(b, &v, 4); } /* little-endian hosts (as flatbuf.h) */

/* ---- Thrift compact protocol ------------------------------------------------ */

enum { TC_TRUE = 1, TC_FALSE = 2, TC_BYTE = 3, TC_I16 = 4, TC_I32 = 5, TC_I64 = 6, TC_BINARY = 8, TC_LIST = 9, TC_STRUCT = 12 };

typedef struct tc {
    bytes *b;
    int depth;
    int16_t last[16];
} tc;

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static void tc_field(tc *t, int16_t id, int type)
{
    int delta = id - t->last[t->depth];
    if (delta > 0 && delta <= 15) {
        put_byte(t->b, (uint8_t)(delta << 4 | type));
    } else {
        put_byte(t->b, (uint8_t)type);
        put_varint(t->b, zigzag(id));
    }
    t->last[t->depth] = id;
}

static void tc_i32(tc *t, int16_t id, int32_t v)
{
    tc_field(t, id, TC_I32);
    put_varint(t->b, zigzag(v));
}
static void tc_i64(tc *t, int16_t id, int64_t v)
{
    tc_field(t, id, TC_I64);
    put_varint(t->b, zigzag(v));
}
static void tc_i16(tc *t, int16_t id, int16_t v)
{
    tc_field(t, id, TC_I16);
    put_varint(t->b, zigzag(v));
}
static void tc_i8(tc *t, int16_t id, int8_t v)
{
    tc_field(t, id, TC_BYTE);
    put_byte(t->b, (uint8_t)v);
}
static void tc_bool(tc *t, int16_t id, int v) { tc_field(t, id, v ? TC_TRUE : TC_FALSE); }
static void tc_binary(tc *t, int16_t id, const void *p, size_t n)
{
    tc_field(t, id, TC_BINARY);
    put_varint(t->b, n);
    put(t->b, p, n);
}
static void tc_string(tc *t, int16_t id, const char *s) { tc_binary(t, id, s, strlen(s)); }
static void tc_open(tc *t) { t->last[++t->depth] = 0; } /* a struct's fields follow */
static void tc_struct(tc *t, int16_t id)
{
    tc_field(t, id, TC_STRUCT);
    tc_open(t);
}
static void tc_close(tc *t) /* stop byte */
{
    put_byte(t->b, 0);
    t->depth--;
}
static void tc_list(tc *t, int16_t id, int elem, size_t n)
{
    tc_field(t, id, TC_LIST);
    if (n < 15) {
        put_byte(t->b, (uint8_t)(n << 4 | (unsigned)elem));
    } else {
        put_byte(t->b, (uint8_t)(0xF0 | elem));
        put_varint(t->b, n);
    }
}
static void tc_empty_struct(tc *t, int16_t id)
{
    tc_struct(t, id);
    tc_close(t);
}

/* ---- the Parquet vocabulary ------------------------------------------------- */

enum { P_BOOLEAN = 0, P_INT32 = 1, P_INT64 = 2, P_FLOAT = 4, P_DOUBLE = 5, P_BYTE_ARRAY = 6 };
enum { REQUIRED = 0, OPTIONAL = 1, REPEATED = 2 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { CODEC_UNCOMPRESSED = 0, CODEC_ZSTD = 6 };
enum { CT_UTF8 = 0, CT_MAP = 1, CT_DATE = 6, CT_TIMESTAMP_MILLIS = 9, CT_TIMESTAMP_MICROS = 10 };
/* LogicalType union members */
enum { LT_STRING = 1, LT_MAP = 2, LT_DATE = 6, LT_TIMESTAMP = 8, LT_INTEGER = 10 };

/* How a column (or a map's key or value) is written. */
typedef enum vkind {
    V_BOOL, V_INT8, V_INT16, V_INT32, V_UINT8, V_UINT16, V_UINT32, V_INT64, V_UINT64, V_FLOAT, V_DOUBLE,
    V_BYTES32, V_BYTES64, V_DATE32, V_TS
} vkind;

typedef struct ctype {
    vkind kind;
    int phys;
    int string;   /* BYTE_ARRAY annotated STRING */
    int ts_unit;  /* 1 ms, 2 µs, 3 ns */
    int ts_utc;
} ctype;

static int resolve(const char *f, ctype *t)
{
    memset(t, 0, sizeof *t);
    if (f[0] && !f[1]) {
        switch (f[0]) {
        case 'b': *t = (ctype){V_BOOL, P_BOOLEAN, 0, 0, 0}; return 1;
        case 'c': *t = (ctype){V_INT8, P_INT32, 0, 0, 0}; return 1;
        case 's': *t = (ctype){V_INT16, P_INT32, 0, 0, 0}; return 1;
        case 'i': *t = (ctype){V_INT32, P_INT32, 0, 0, 0}; return 1;
        case 'C': *t = (ctype){V_UINT8, P_INT32, 0, 0, 0}; return 1;
        case 'S': *t = (ctype){V_UINT16, P_INT32, 0, 0, 0}; return 1;
        case 'I': *t = (ctype){V_UINT32, P_INT32, 0, 0, 0}; return 1;
        case 'l': *t = (ctype){V_INT64, P_INT64, 0, 0, 0}; return 1;
        case 'L': *t = (ctype){V_UINT64, P_INT64, 0, 0, 0}; return 1;
        case 'f': *t = (ctype){V_FLOAT, P_FLOAT, 0, 0, 0}; return 1;
        case 'g': *t = (ctype){V_DOUBLE, P_DOUBLE, 0, 0, 0}; return 1;
        case 'u': *t = (ctype){V_BYTES32, P_BYTE_ARRAY, 1, 0, 0}; return 1;
        case 'z': *t = (ctype){V_BYTES32, P_BYTE_ARRAY, 0, 0, 0}; return 1;
        case 'U': *t = (ctype){V_BYTES64, P_BYTE_ARRAY, 1, 0, 0}; return 1;
        case 'Z': *t = (ctype){V_BYTES64, P_BYTE_ARRAY, 0, 0, 0}; return 1;
        default: return 0;
        }
    }
    if (strcmp(f, "tdD") == 0) {
        *t = (ctype){V_DATE32, P_INT32, 0, 0, 0};
        return 1;
    }
    if (f[0] == 't' && f[1] == 's' && f[2] && f[3] == ':') {
        int unit = f[2] == 'm' ? 1 : f[2] == 'u' ? 2 : f[2] == 'n' ? 3 : 0;
        if (!unit) return 0;
        *t = (ctype){V_TS, P_INT64, 0, unit, f[4] != 0};
        return 1;
    }
    return 0;
}

static int is_map(const struct ArrowSchema *f, ctype *key, ctype *value)
{
    if (strcmp(f->format, "+m") != 0 || f->n_children != 1) return 0;
    const struct ArrowSchema *e = f->children[0];
    if (!e->format || strcmp(e->format, "+s") != 0 || e->n_children != 2) return 0;
    const struct ArrowSchema *k = e->children[0], *v = e->children[1];
    return k->format && v->format && resolve(k->format, key) && key->phys == P_BYTE_ARRAY && key->string &&
           resolve(v->format, value) && value->phys == P_BYTE_ARRAY && !k->dictionary && !v->dictionary;
}

static int check_column(const struct ArrowSchema *c, shape_err *err)
{
    ctype t, k, v;
    const char *name = c->name ? c->name : "";
    const char *f = c->format ? c->format : "";
    if (!c->dictionary && ((c->n_children == 0 && resolve(f, &t)) || is_map(c, &k, &v))) return SHAPE_OK;
    return shape_err_set(err, SHAPE_EINVAL, "cannot write column '%.64s' of Arrow format '%.32s' as Parquet%s", name, f,
                         c->dictionary ? " (dictionary-encoded)"
                         : f[0] == '+' ? " (of nested types only maps of utf8 keys are written)"
                                       : "");
}

int shape_parquet_check_schema(const struct ArrowSchema *schema, shape_err *err)
{
    if (!schema || !schema->format || strcmp(schema->format, "+s") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "a Parquet file needs a struct ('+s') schema");
    for (int64_t i = 0; i < schema->n_children; i++) SHAPE_RETURN_NOT_OK(check_column(schema->children[i], err));
    return SHAPE_OK;
}

/* ---- the writer ------------------------------------------------------------- */

enum { STATS_MAX_BYTES = 64 };

typedef struct chunk {
    int64_t offset, uncompressed, compressed, num_values, null_count;
    int64_t dict_offset, data_offset; /* dict_offset: -1 when the chunk is PLAIN */
    int64_t dict_values;
    int has_minmax;
    uint8_t min[STATS_MAX_BYTES], max[STATS_MAX_BYTES];
    size_t min_len, max_len;
} chunk;

typedef struct group {
    int64_t rows, offset, uncompressed, compressed;
    chunk *chunks;
} group;

typedef struct leaf {
    int column;  /* top-level column */
    int part;    /* 0 the column itself, 1 a map's keys, 2 a map's values */
    ctype type;
    int max_def, max_rep;
} leaf;

struct shape_parquet_writer {
    FILE *out;
    shape_parquet_options o;
    struct ArrowSchema first;
    int started;
    leaf *leaves;
    int n_leaves;
    group *groups;
    size_t n_groups, cap_groups;
    int64_t pos, rows;
    bytes page, comp, header, lv;
    bytes vals, dict;         /* dictionary mode: a page's PLAIN values; the dictionary page */
    uint32_t *slots, *index;  /* the dictionary's hash table; each value's dictionary index */
    size_t *starts;           /* byte arrays: each value's start in vals */
    size_t cap_slots, cap_index;
    ZSTD_CCtx *cctx;
};

int shape_parquet_writer_new(FILE *out, const shape_parquet_options *o, shape_parquet_writer **w, shape_err *err)
{
    *w = calloc(1, sizeof **w);
    if (!*w) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    (*w)->out = out;
    if (o) (*w)->o = *o;
    return SHAPE_OK;
}

void shape_parquet_writer_free(shape_parquet_writer *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n_groups; i++) free(w->groups[i].chunks);
    free(w->groups);
    free(w->leaves);
    free(w->page.p);
    free(w->comp.p);
    free(w->header.p);
    free(w->lv.p);
    free(w->vals.p);
    free(w->dict.p);
    free(w->slots);
    free(w->index);
    free(w->starts);
    ZSTD_freeCCtx(w->cctx);
    if (w->first.release) w->first.release(&w->first);
    free(w);
}

int64_t shape_parquet_writer_rows(const shape_parquet_writer *w) { return w->rows; }
int64_t shape_parquet_writer_row_groups(const shape_parquet_writer *w) { return (int64_t)w->n_groups; }
int64_t shape_parquet_writer_bytes(const shape_parquet_writer *w) { return w->pos; }

static int oom(shape_err *err) { return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing Parquet"); }

static int emit(shape_parquet_writer *w, const void *p, size_t n, shape_err *err)
{
    if (n && fwrite(p, 1, n, w->out) != n)
        return shape_err_set(err, SHAPE_EIO, "cannot write the Parquet file: %s", strerror(errno));
    w->pos += (int64_t)n;
    return SHAPE_OK;
}

static int start(shape_parquet_writer *w, const struct ArrowSchema *schema, shape_err *err)
{
    if (schema) {
        SHAPE_RETURN_NOT_OK(shape_parquet_check_schema(schema, err));
        SHAPE_RETURN_NOT_OK(shape_arrow_schema_deep_copy(schema, &w->first, err));
    } else {
        SHAPE_RETURN_NOT_OK(shape_arrow_schema_make(&w->first, "+s", NULL, NULL, 0, 0, err));
    }
    const struct ArrowSchema *s = &w->first;
    w->leaves = calloc((size_t)s->n_children * 2 + 1, sizeof *w->leaves);
    if (!w->leaves) return oom(err);
    for (int64_t i = 0; i < s->n_children; i++) {
        const struct ArrowSchema *c = s->children[i];
        int opt = (c->flags & ARROW_FLAG_NULLABLE) != 0;
        ctype k, v;
        if (is_map(c, &k, &v)) {
            int vopt = (c->children[0]->children[1]->flags & ARROW_FLAG_NULLABLE) != 0;
            w->leaves[w->n_leaves++] = (leaf){(int)i, 1, k, opt + 1, 1};
            w->leaves[w->n_leaves++] = (leaf){(int)i, 2, v, opt + 1 + vopt, 1};
        } else {
            leaf l = {(int)i, 0, {0}, opt, 0};
            resolve(c->format, &l.type);
            w->leaves[w->n_leaves++] = l;
        }
    }
    if (w->o.codec == SHAPE_PARQUET_ZSTD && !(w->cctx = ZSTD_createCCtx())) return oom(err);
    w->started = 1;
    return emit(w, "PAR1", 4, err);
}

/* ---- levels and values -------------------------------------------------------- */

static inline int bit(const uint8_t *bits, int64_t i) { return bits == NULL || ((bits[i >> 3] >> (i & 7)) & 1); }

/* Levels as RLE runs (1-byte values: every level here is at most 3) behind their byte length. */
static void rle_levels(bytes *b, const uint8_t *lv, size_t n)
{
    size_t at = b->len;
    put_u32(b, 0);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && lv[j] == lv[i]) j++;
        put_varint(b, (uint64_t)(j - i) << 1);
        put_byte(b, lv[i]);
        i = j;
    }
    if (!b->oom) {
        uint32_t len = (uint32_t)(b->len - at - 4);
        memcpy(b->p + at, &len, 4);
    }
}

/* A flat column's definition levels straight from its validity bitmap. */
static void flat_def_levels(bytes *b, const uint8_t *bits, int64_t start, int64_t n)
{
    size_t at = b->len;
    put_u32(b, 0);
    for (int64_t i = 0; i < n;) {
        int v = bit(bits, start + i);
        int64_t j = i + 1;
        if (!bits) j = n;
        while (j < n) {
            int64_t p = start + j;
            if ((p & 7) == 0 && j + 8 <= n && bits[p >> 3] == (v ? 0xFF : 0x00)) {
                j += 8;
                continue;
            }
            if (bit(bits, p) != v) break;
            j++;
        }
        put_varint(b, (uint64_t)(j - i) << 1);
        put_byte(b, (uint8_t)v);
        i = j;
    }
    if (!b->oom) {
        uint32_t len = (uint32_t)(b->len - at - 4);
        memcpy(b->p + at, &len, 4);
    }
}

typedef struct stats {
    int64_t nulls;
    int any;
    int64_t imin, imax;   /* signed ints, dates, timestamps */
    uint64_t umin, umax;  /* unsigned */
    double dmin, dmax;    /* floats (NaN skipped) */
    const uint8_t *bmin, *bmax;
    size_t bmin_len, bmax_len;
} stats;

static int bytes_less(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c < 0 || (c == 0 && an < bn);
}

static inline void get_bytes(const struct ArrowArray *a, vkind k, int64_t i, const uint8_t **p, size_t *n)
{
    const uint8_t *data = (const uint8_t *)a->buffers[2];
    if (k == V_BYTES64) {
        const int64_t *o = (const int64_t *)a->buffers[1];
        *n = (size_t)(o[i + 1] - o[i]);
        *p = data ? data + o[i] : (const uint8_t *)"";
    } else {
        const int32_t *o = (const int32_t *)a->buffers[1];
        *n = (size_t)(o[i + 1] - o[i]);
        *p = data ? data + o[i] : (const uint8_t *)"";
    }
}

/* Append the PLAIN value at physical index i of a and fold it into st. */
static inline void plain_value(bytes *b, const ctype *t, const struct ArrowArray *a, int64_t i, stats *st)
{
    const void *v = a->buffers[1];
    int64_t x = 0;
    uint64_t u = 0;
    switch (t->kind) {
    case V_BYTES32:
    case V_BYTES64: {
        const uint8_t *p;
        size_t n;
        get_bytes(a, t->kind, i, &p, &n);
        put_u32(b, (uint32_t)n);
        put(b, p, n);
        if (!st->any || bytes_less(p, n, st->bmin, st->bmin_len)) st->bmin = p, st->bmin_len = n;
        if (!st->any || bytes_less(st->bmax, st->bmax_len, p, n)) st->bmax = p, st->bmax_len = n;
        st->any = 1;
        return;
    }
    case V_FLOAT:
    case V_DOUBLE: {
        double d;
        if (t->kind == V_FLOAT) {
            float f = ((const float *)v)[i];
            put(b, &f, 4);
            d = f;
        } else {
            d = ((const double *)v)[i];
            put(b, &d, 8);
        }
        if (isnan(d)) return;
        if (!st->any || d < st->dmin) st->dmin = d;
        if (!st->any || d > st->dmax) st->dmax = d;
        st->any = 1;
        return;
    }
    case V_INT8: x = ((const int8_t *)v)[i]; break;
    case V_INT16: x = ((const int16_t *)v)[i]; break;
    case V_INT32:
    case V_DATE32: x = ((const int32_t *)v)[i]; break;
    case V_UINT8: u = ((const uint8_t *)v)[i]; goto unsig;
    case V_UINT16: u = ((const uint16_t *)v)[i]; goto unsig;
    case V_UINT32: u = ((const uint32_t *)v)[i]; goto unsig;
    case V_UINT64: u = ((const uint64_t *)v)[i]; goto unsig;
    case V_INT64:
    case V_TS: x = ((const int64_t *)v)[i]; break;
    case V_BOOL: x = (((const uint8_t *)v)[i >> 3] >> (i & 7)) & 1; break;
    }
    if (t->phys == P_INT32) {
        int32_t y = (int32_t)x;
        put(b, &y, 4);
    } else if (t->phys == P_INT64) {
        put(b, &x, 8);
    }
    if (!st->any || x < st->imin) st->imin = x;
    if (!st->any || x > st->imax) st->imax = x;
    st->any = 1;
    return;
unsig:
    if (t->phys == P_INT32) {
        uint32_t y = (uint32_t)u;
        put(b, &y, 4);
    } else {
        put(b, &u, 8);
    }
    if (!st->any || u < st->umin) st->umin = u;
    if (!st->any || u > st->umax) st->umax = u;
    st->any = 1;
}

/* Booleans are bit-packed: collected as bytes, packed at the end of the page. */
static void pack_bools(bytes *b, size_t from)
{
    size_t n = b->len - from, k = 0;
    uint8_t *p = b->p + from;
    for (size_t i = 0; i < n; i += 8, k++) {
        uint8_t v = 0;
        for (size_t j = 0; j < 8 && i + j < n; j++) v |= (uint8_t)(p[i + j] << j);
        p[k] = v;
    }
    b->len = from + k;
}

static void bool_value(bytes *b, const struct ArrowArray *a, int64_t i, stats *st)
{
    int v = (((const uint8_t *)a->buffers[1])[i >> 3] >> (i & 7)) & 1;
    put_byte(b, (uint8_t)v);
    if (!st->any || v < st->imin) st->imin = v;
    if (!st->any || v > st->imax) st->imax = v;
    st->any = 1;
}

static void keep_stats(chunk *c, const ctype *t, const stats *st)
{
    c->null_count = st->nulls;
    if (!st->any) return;
    switch (t->phys) {
    case P_BYTE_ARRAY:
        if (st->bmin_len > STATS_MAX_BYTES || st->bmax_len > STATS_MAX_BYTES) return;
        memcpy(c->min, st->bmin, st->bmin_len);
        memcpy(c->max, st->bmax, st->bmax_len);
        c->min_len = st->bmin_len;
        c->max_len = st->bmax_len;
        break;
    case P_FLOAT: { /* a zero bound is written -0.0 as the min, +0.0 as the max */
        float a = st->dmin == 0 ? -0.0f : (float)st->dmin, b = st->dmax == 0 ? 0.0f : (float)st->dmax;
        memcpy(c->min, &a, 4);
        memcpy(c->max, &b, 4);
        c->min_len = c->max_len = 4;
        break;
    }
    case P_DOUBLE: {
        double a = st->dmin == 0 ? -0.0 : st->dmin, b = st->dmax == 0 ? 0.0 : st->dmax;
        memcpy(c->min, &a, 8);
        memcpy(c->max, &b, 8);
        c->min_len = c->max_len = 8;
        break;
    }
    case P_BOOLEAN:
        c->min[0] = (uint8_t)st->imin;
        c->max[0] = (uint8_t)st->imax;
        c->min_len = c->max_len = 1;
        break;
    default: {
        int unsig = t->kind == V_UINT8 || t->kind == V_UINT16 || t->kind == V_UINT32 || t->kind == V_UINT64;
        size_t n = t->phys == P_INT32 ? 4 : 8;
        if (unsig) {
            memcpy(c->min, &st->umin, n);
            memcpy(c->max, &st->umax, n);
        } else if (n == 4) {
            int32_t a = (int32_t)st->imin, b = (int32_t)st->imax;
            memcpy(c->min, &a, 4);
            memcpy(c->max, &b, 4);
        } else {
            memcpy(c->min, &st->imin, 8);
            memcpy(c->max, &st->imax, 8);
        }
        c->min_len = c->max_len = n;
    }
    }
    c->has_minmax = 1;
}

/* ---- dictionary encoding ------------------------------------------------------ */

/* A chunk whose dictionary would hold more than this many bytes, or more
 * distinct values than half its values, is written PLAIN instead (the
 * fallback): a dictionary only pays when values repeat. */
enum { DICT_MAX_BYTES = 1 << 20 };

static int dictionary_mode(const shape_parquet_writer *w, const leaf *l)
{
    return w->o.encoding == SHAPE_PARQUET_DICTIONARY && l->type.kind != V_BOOL;
}

static int grow_u32(uint32_t **p, size_t *cap, size_t n)
{
    if (*cap >= n) return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < n) c *= 2;
    uint32_t *q = realloc(*p, c * sizeof *q);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Append the RLE/bit-packed hybrid of idx[0..n) at width bits: bit-packed
 * groups of eight (the last padded with zeros; a reader stops at the page's
 * value count). */
static void bitpack(bytes *b, const uint32_t *idx, size_t n, int width)
{
    size_t groups = (n + 7) / 8;
    put_varint(b, ((uint64_t)groups << 1) | 1);
    if (reserve(b, groups * (size_t)width) != 0) return;
    uint64_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < groups * 8; i++) {
        acc |= (uint64_t)(i < n ? idx[i] : 0) << bits;
        bits += width;
        while (bits >= 8) {
            b->p[b->len++] = (uint8_t)acc;
            acc >>= 8;
            bits -= 8;
        }
    }
}

/* The page's present values are in w->vals, PLAIN. Build the chunk's
 * dictionary (distinct values in order of first appearance, PLAIN) in
 * w->dict and append the bit width and the indices to the page; or, when
 * the dictionary does not pay (DICT_MAX_BYTES, half the values distinct),
 * append the values PLAIN. */
static int dictionary_values(shape_parquet_writer *w, const leaf *l, int64_t present, chunk *c)
{
    bytes *v = &w->vals;
    size_t n = (size_t)present;
    c->dict_offset = -1;
    w->dict.len = 0;
    if (v->oom) return -1;
    size_t width = l->type.phys == P_INT32 || l->type.phys == P_FLOAT ? 4 : l->type.phys == P_BYTE_ARRAY ? 0 : 8;
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (n == 0 || grow_u32(&w->slots, &w->cap_slots, cap) != 0 || grow_u32(&w->index, &w->cap_index, n) != 0)
        goto plain;
    memset(w->slots, 0, cap * sizeof *w->slots);
    size_t *starts = NULL; /* the dictionary's entries' starts in vals (byte arrays: at the length) */
    starts = realloc(w->starts, (n + 1) * sizeof *starts);
    if (!starts) goto plain;
    w->starts = starts;
    size_t distinct = 0, at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = width;
        if (!width) {
            uint32_t m;
            memcpy(&m, v->p + at, 4);
            len = 4 + m;
        }
        const uint8_t *val = v->p + at;
        uint64_t h = XXH3_64bits(val, len);
        size_t s = (size_t)h & (cap - 1);
        for (;;) {
            uint32_t e = w->slots[s];
            if (!e) {
                if (distinct + 1 > n / 2 + 1 || w->dict.len + len > DICT_MAX_BYTES) goto plain;
                w->slots[s] = (uint32_t)++distinct;
                starts[distinct - 1] = at;
                put(&w->dict, val, len);
                w->index[i] = (uint32_t)(distinct - 1);
                break;
            }
            size_t es = starts[e - 1], elen = width;
            if (!width) {
                uint32_t m;
                memcpy(&m, v->p + es, 4);
                elen = 4 + m;
            }
            if (elen == len && memcmp(v->p + es, val, len) == 0) {
                w->index[i] = e - 1;
                break;
            }
            s = (s + 1) & (cap - 1);
        }
        at += len;
    }
    if (w->dict.oom) return -1;
    int bw = 1;
    while (bw < 32 && ((size_t)1 << bw) < distinct) bw++;
    put_byte(&w->page, (uint8_t)bw);
    bitpack(&w->page, w->index, n, bw);
    c->dict_offset = 0; /* set when written */
    c->dict_values = (int64_t)distinct;
    return w->page.oom ? -1 : 0;
plain:
    w->dict.len = 0;
    c->dict_offset = -1;
    put(&w->page, v->p, v->len);
    return w->page.oom || v->oom ? -1 : 0;
}

/* The page of a flat column: rows [start, start + n) of a (physical). */
static int64_t flat_page(shape_parquet_writer *w, const leaf *l, const struct ArrowArray *a, int64_t start, int64_t n,
                         chunk *c)
{
    bytes *b = &w->page;
    const uint8_t *valid = a->buffers[0];
    stats st = {0};
    if (l->max_def) flat_def_levels(b, valid, start, n);
    if (dictionary_mode(w, l)) b = &w->vals, b->len = 0; /* the values go through the dictionary */
    size_t from = b->len;
    for (int64_t r = 0; r < n; r++) {
        int64_t i = start + r;
        if (!bit(valid, i)) {
            st.nulls++;
            continue;
        }
        if (l->type.kind == V_BOOL)
            bool_value(b, a, i, &st);
        else
            plain_value(b, &l->type, a, i, &st);
    }
    if (l->type.kind == V_BOOL) pack_bools(b, from);
    keep_stats(c, &l->type, &st);
    c->null_count = st.nulls;
    if (dictionary_mode(w, l) && dictionary_values(w, l, n - st.nulls, c) != 0) return -1;
    return n;
}

/* The page of a map's keys (part 1) or values (part 2). */
static int64_t map_page(shape_parquet_writer *w, const leaf *l, const struct ArrowArray *a, int64_t start, int64_t n,
                        int nullable_map, chunk *c)
{
    bytes *lv = &w->lv, *b = &w->page;
    const uint8_t *valid = a->buffers[0];
    const int32_t *off = (const int32_t *)a->buffers[1];
    const struct ArrowArray *e = a->children[0], *kv = e->children[l->part - 1];
    int base = nullable_map; /* definition level of an empty (present) map */
    lv->len = 0;
    /* levels: repetition levels first, then definition levels, each a byte per value */
    int64_t count = 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t i = start + r;
        int64_t m = bit(valid, i) ? off[i + 1] - off[i] : 0;
        count += m ? m : 1;
    }
    if (reserve(lv, (size_t)count * 2) != 0) return -1;
    uint8_t *rep = lv->p, *def = lv->p + count;
    int64_t k = 0, nulls = 0;
    stats st = {0};
    for (int64_t r = 0; r < n; r++) {
        int64_t i = start + r;
        if (!bit(valid, i)) {
            rep[k] = 0, def[k++] = 0;
            nulls++;
            continue;
        }
        int64_t m = off[i + 1] - off[i];
        if (m == 0) {
            rep[k] = 0, def[k++] = (uint8_t)base;
            nulls++;
            continue;
        }
        for (int64_t j = 0; j < m; j++) {
            int64_t p = kv->offset + e->offset + off[i] + j;
            rep[k] = j ? 1 : 0;
            int present = l->part == 1 || bit(kv->buffers[0], p);
            def[k++] = (uint8_t)(base + 1 + (l->part == 2 && present && l->max_def == base + 2));
            if (!present) nulls++;
        }
    }
    rle_levels(b, rep, (size_t)count);
    rle_levels(b, def, (size_t)count);
    if (dictionary_mode(w, l)) b = &w->vals, b->len = 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t i = start + r;
        if (!bit(valid, i)) continue;
        for (int64_t j = 0; j < off[i + 1] - off[i]; j++) {
            int64_t p = kv->offset + e->offset + off[i] + j;
            if (l->part == 1 || bit(kv->buffers[0], p)) plain_value(b, &l->type, kv, p, &st);
        }
    }
    st.nulls = nulls;
    c->null_count = nulls; /* no min/max for a map's leaves */
    if (dictionary_mode(w, l) && dictionary_values(w, l, count - nulls, c) != 0) return -1;
    return count;
}

/* Compress src (ZSTD unless uncompressed): *data, *len are what to write. */
static int compress(shape_parquet_writer *w, const bytes *src, const uint8_t **data, size_t *len, shape_err *err)
{
    *data = src->p;
    *len = src->len;
    if (!w->cctx) return SHAPE_OK;
    size_t bound = ZSTD_compressBound(src->len);
    w->comp.len = 0;
    if (reserve(&w->comp, bound) != 0) return oom(err);
    size_t z = ZSTD_compressCCtx(w->cctx, w->comp.p, bound, src->p, src->len, w->o.zstd_level ? w->o.zstd_level : 3);
    if (ZSTD_isError(z)) return shape_err_set(err, SHAPE_EIO, "ZSTD compression failed: %s", ZSTD_getErrorName(z));
    *data = w->comp.p;
    *len = z;
    return SHAPE_OK;
}

/* The chunk's pages: its dictionary page first when it has one, then the data page. */
static int write_page(shape_parquet_writer *w, chunk *c, int64_t num_values, shape_err *err)
{
    if (w->page.oom || w->dict.oom) return oom(err);
    const uint8_t *data;
    size_t len;
    bytes *h = &w->header;
    c->offset = w->pos;
    c->uncompressed = c->compressed = 0;
    if (c->dict_offset >= 0) {
        SHAPE_RETURN_NOT_OK(compress(w, &w->dict, &data, &len, err));
        h->len = 0;
        tc t = {h, 0, {0}};
        tc_i32(&t, 1, PAGE_DICTIONARY);
        tc_i32(&t, 2, (int32_t)w->dict.len);
        tc_i32(&t, 3, (int32_t)len);
        tc_struct(&t, 7);
        tc_i32(&t, 1, (int32_t)c->dict_values);
        tc_i32(&t, 2, ENC_PLAIN);
        tc_close(&t);
        put_byte(h, 0);
        if (h->oom) return oom(err);
        c->dict_offset = w->pos;
        c->uncompressed += (int64_t)(h->len + w->dict.len);
        c->compressed += (int64_t)(h->len + len);
        SHAPE_RETURN_NOT_OK(emit(w, h->p, h->len, err));
        SHAPE_RETURN_NOT_OK(emit(w, data, len, err));
    }
    SHAPE_RETURN_NOT_OK(compress(w, &w->page, &data, &len, err));
    h->len = 0;
    tc t = {h, 0, {0}};
    tc_i32(&t, 1, PAGE_DATA);
    tc_i32(&t, 2, (int32_t)w->page.len);
    tc_i32(&t, 3, (int32_t)len);
    tc_struct(&t, 5);
    tc_i32(&t, 1, (int32_t)num_values);
    tc_i32(&t, 2, c->dict_offset >= 0 ? ENC_RLE_DICTIONARY : ENC_PLAIN);
    tc_i32(&t, 3, ENC_RLE);
    tc_i32(&t, 4, ENC_RLE);
    tc_close(&t);
    put_byte(h, 0);
    if (h->oom) return oom(err);
    c->data_offset = w->pos;
    c->num_values = num_values;
    c->uncompressed += (int64_t)(h->len + w->page.len);
    c->compressed += (int64_t)(h->len + len);
    SHAPE_RETURN_NOT_OK(emit(w, h->p, h->len, err));
    return emit(w, data, len, err);
}

static int check_array(const struct ArrowSchema *f, const struct ArrowArray *a, int64_t need, shape_err *err)
{
    const char *fmt = f->format;
    int want = fmt[0] && !fmt[1] && strchr("uUzZ", fmt[0]) ? 3 : 2; /* var-length: offsets and data */
    if (a->n_buffers != want || a->n_children != f->n_children || a->length < need ||
        (need > 0 && !a->buffers[1]))
        return shape_err_set(err, SHAPE_EINVAL, "column '%.64s': the array does not match its format '%.32s'",
                             io_text(f->name), fmt);
    if (fmt[0] == '+') {
        const struct ArrowArray *e = a->children[0];
        if (e->n_children != 2 || e->n_buffers != 1 || e->children[0]->n_buffers != 3 || e->children[1]->n_buffers != 3)
            return shape_err_set(err, SHAPE_EINVAL, "column '%.64s': the map array is malformed", io_text(f->name));
    }
    return SHAPE_OK;
}

int shape_parquet_writer_write(shape_parquet_writer *w, const struct ArrowSchema *schema,
                               const struct ArrowArray *array, shape_err *err)
{
    if (!w->started) {
        SHAPE_RETURN_NOT_OK(start(w, schema, err));
    } else if (!io_same_field(schema, &w->first)) {
        return shape_err_set(err, SHAPE_EINVAL,
                             "batch %lld has other columns than the first batch: a Parquet file has one schema",
                             (long long)w->n_groups + 1);
    }
    if (array->n_children != schema->n_children) return shape_err_set(err, SHAPE_EINVAL, "the batch does not match its schema");
    if (array->length == 0) return SHAPE_OK;
    for (int64_t i = 0; i < schema->n_children; i++)
        SHAPE_RETURN_NOT_OK(check_array(schema->children[i], array->children[i], array->offset + array->length, err));
    if (w->n_groups == w->cap_groups) {
        size_t cap = w->cap_groups ? w->cap_groups * 2 : 16;
        group *g = realloc(w->groups, cap * sizeof *g);
        if (!g) return oom(err);
        w->groups = g;
        w->cap_groups = cap;
    }
    group *g = &w->groups[w->n_groups];
    memset(g, 0, sizeof *g);
    g->chunks = calloc((size_t)w->n_leaves + 1, sizeof *g->chunks);
    if (!g->chunks) return oom(err);
    w->n_groups++;
    g->rows = array->length;
    g->offset = w->pos;
    for (int li = 0; li < w->n_leaves; li++) {
        const leaf *l = &w->leaves[li];
        const struct ArrowArray *a = array->children[l->column];
        int64_t start = a->offset + array->offset;
        w->page.len = 0;
        chunk *c = &g->chunks[li];
        c->dict_offset = -1;
        int64_t values;
        if (l->part == 0) {
            if (!l->max_def && a->buffers[0] && a->null_count != 0)
                return shape_err_set(err, SHAPE_EINVAL, "column '%.64s' is not nullable but holds nulls",
                                     io_text(schema->children[l->column]->name));
            values = flat_page(w, l, a, start, array->length, c);
            if (values < 0) return oom(err);
        } else {
            values = map_page(w, l, a, start, array->length,
                              (schema->children[l->column]->flags & ARROW_FLAG_NULLABLE) != 0, c);
            if (values < 0) return oom(err);
        }
        SHAPE_RETURN_NOT_OK(write_page(w, c, values, err));
        g->uncompressed += c->uncompressed;
        g->compressed += c->compressed;
    }
    w->rows += array->length;
    return SHAPE_OK;
}

/* ---- the footer ---------------------------------------------------------------- */

static void schema_element(tc *t, const char *name, int phys, int repetition, int children, const ctype *ct, int map)
{
    tc_open(t);
    if (phys >= 0) tc_i32(t, 1, phys);
    if (repetition >= 0) tc_i32(t, 3, repetition);
    tc_string(t, 4, name);
    if (children >= 0) tc_i32(t, 5, children);
    if (map) {
        tc_i32(t, 6, CT_MAP);
        tc_struct(t, 10);
        tc_empty_struct(t, LT_MAP);
        tc_close(t);
    } else if (ct) {
        int converted = -1;
        switch (ct->kind) {
        case V_BYTES32:
        case V_BYTES64: converted = ct->string ? CT_UTF8 : -1; break;
        case V_DATE32: converted = CT_DATE; break;
        case V_TS: converted = !ct->ts_utc ? -1 : ct->ts_unit == 1 ? CT_TIMESTAMP_MILLIS : ct->ts_unit == 2 ? CT_TIMESTAMP_MICROS : -1; break;
        case V_INT8: converted = 15; break;   /* INT_8 */
        case V_INT16: converted = 16; break;  /* INT_16 */
        case V_UINT8: converted = 11; break;  /* UINT_8 */
        case V_UINT16: converted = 12; break; /* UINT_16 */
        case V_UINT32: converted = 13; break; /* UINT_32 */
        case V_UINT64: converted = 14; break; /* UINT_64 */
        default: break;
        }
        if (converted >= 0) tc_i32(t, 6, converted);
        int width = 0, sign = 1;
        switch (ct->kind) {
        case V_INT8: width = 8; break;
        case V_INT16: width = 16; break;
        case V_UINT8: width = 8, sign = 0; break;
        case V_UINT16: width = 16, sign = 0; break;
        case V_UINT32: width = 32, sign = 0; break;
        case V_UINT64: width = 64, sign = 0; break;
        default: break;
        }
        if (ct->string || ct->kind == V_DATE32 || ct->kind == V_TS || width) {
            tc_struct(t, 10);
            if (ct->string) {
                tc_empty_struct(t, LT_STRING);
            } else if (ct->kind == V_DATE32) {
                tc_empty_struct(t, LT_DATE);
            } else if (ct->kind == V_TS) {
                tc_struct(t, LT_TIMESTAMP);
                tc_bool(t, 1, ct->ts_utc);
                tc_struct(t, 2);
                tc_empty_struct(t, (int16_t)ct->ts_unit);
                tc_close(t);
                tc_close(t);
            } else {
                tc_struct(t, LT_INTEGER);
                tc_i8(t, 1, (int8_t)width);
                tc_bool(t, 2, sign);
                tc_close(t);
            }
            tc_close(t);
        }
    }
    tc_close(t);
}

static int write_footer(shape_parquet_writer *w, shape_err *err)
{
    bytes f = {0};
    tc t = {&f, 0, {0}};
    const struct ArrowSchema *s = &w->first;
    tc_i32(&t, 1, 1);
    int n_elements = 1;
    for (int li = 0; li < w->n_leaves; li++) n_elements += w->leaves[li].part == 0 ? 1 : w->leaves[li].part == 1 ? 3 : 1;
    tc_list(&t, 2, TC_STRUCT, (size_t)n_elements);
    schema_element(&t, "schema", -1, -1, (int)s->n_children, NULL, 0);
    for (int li = 0; li < w->n_leaves; li++) {
        const leaf *l = &w->leaves[li];
        const struct ArrowSchema *c = s->children[l->column];
        int opt = (c->flags & ARROW_FLAG_NULLABLE) ? OPTIONAL : REQUIRED;
        if (l->part == 0) {
            schema_element(&t, io_text(c->name), l->type.phys, opt, -1, &l->type, 0);
        } else if (l->part == 1) {
            const struct ArrowSchema *e = c->children[0];
            schema_element(&t, io_text(c->name), -1, opt, 1, NULL, 1);
            schema_element(&t, io_text(e->name)[0] ? io_text(e->name) : "key_value", -1, REPEATED, 2, NULL, 0);
            schema_element(&t, io_text(e->children[0]->name), l->type.phys, REQUIRED, -1, &l->type, 0);
        } else {
            const struct ArrowSchema *v = c->children[0]->children[1];
            schema_element(&t, io_text(v->name), l->type.phys, (v->flags & ARROW_FLAG_NULLABLE) ? OPTIONAL : REQUIRED, -1,
                           &l->type, 0);
        }
    }
    tc_i64(&t, 3, w->rows);
    tc_list(&t, 4, TC_STRUCT, w->n_groups);
    for (size_t gi = 0; gi < w->n_groups; gi++) {
        const group *g = &w->groups[gi];
        tc_open(&t);
        tc_list(&t, 1, TC_STRUCT, (size_t)w->n_leaves);
        for (int li = 0; li < w->n_leaves; li++) {
            const leaf *l = &w->leaves[li];
            const chunk *c = &g->chunks[li];
            const struct ArrowSchema *col = s->children[l->column];
            tc_open(&t);
            tc_i64(&t, 2, c->offset);
            tc_struct(&t, 3);
            tc_i32(&t, 1, l->type.phys);
            tc_list(&t, 2, TC_I32, c->dict_offset >= 0 ? 3 : 2);
            put_varint(&f, zigzag(ENC_PLAIN));
            put_varint(&f, zigzag(ENC_RLE));
            if (c->dict_offset >= 0) put_varint(&f, zigzag(ENC_RLE_DICTIONARY));
            const char *path[3] = {io_text(col->name), NULL, NULL};
            size_t depth = 1;
            if (l->part) {
                const struct ArrowSchema *e = col->children[0];
                path[1] = io_text(e->name)[0] ? io_text(e->name) : "key_value";
                path[2] = io_text(e->children[l->part - 1]->name);
                depth = 3;
            }
            tc_list(&t, 3, TC_BINARY, depth);
            for (size_t d = 0; d < depth; d++) {
                put_varint(&f, strlen(path[d]));
                put(&f, path[d], strlen(path[d]));
            }
            tc_i32(&t, 4, w->cctx ? CODEC_ZSTD : CODEC_UNCOMPRESSED);
            tc_i64(&t, 5, c->num_values);
            tc_i64(&t, 6, c->uncompressed);
            tc_i64(&t, 7, c->compressed);
            tc_i64(&t, 9, c->data_offset);
            if (c->dict_offset >= 0) tc_i64(&t, 11, c->dict_offset);
            tc_struct(&t, 12);
            tc_i64(&t, 3, c->null_count);
            if (c->has_minmax) {
                tc_binary(&t, 5, c->max, c->max_len);
                tc_binary(&t, 6, c->min, c->min_len);
            }
            tc_close(&t);
            tc_close(&t);
            tc_close(&t);
        }
        tc_i64(&t, 2, g->uncompressed);
        tc_i64(&t, 3, g->rows);
        tc_i64(&t, 5, g->offset);
        tc_i64(&t, 6, g->compressed);
        tc_i16(&t, 7, (int16_t)gi);
        tc_close(&t);
    }
    tc_string(&t, 6, "shape version " SHAPE_VERSION);
    tc_list(&t, 7, TC_STRUCT, (size_t)w->n_leaves);
    for (int li = 0; li < w->n_leaves; li++) {
        tc_open(&t);
        tc_empty_struct(&t, 1); /* TypeDefinedOrder */
        tc_close(&t);
    }
    put_byte(&f, 0);
    int rc = f.oom ? oom(err) : emit(w, f.p, f.len, err);
    uint32_t len = (uint32_t)f.len;
    free(f.p);
    if (rc == SHAPE_OK) rc = emit(w, &len, 4, err);
    if (rc == SHAPE_OK) rc = emit(w, "PAR1", 4, err);
    return rc;
}

int shape_parquet_writer_finish(shape_parquet_writer *w, const struct ArrowSchema *schema, shape_err *err)
{
    if (!w->started) SHAPE_RETURN_NOT_OK(start(w, schema, err));
    SHAPE_RETURN_NOT_OK(write_footer(w, err));
    if (fflush(w->out) != 0) return shape_err_set(err, SHAPE_EIO, "cannot write the Parquet file: %s", strerror(errno));
    return SHAPE_OK;
}

static int parquet_write(void *w, const struct ArrowSchema *s, const struct ArrowArray *a, shape_err *err)
{
    return shape_parquet_writer_write(w, s, a, err);
}
static int parquet_finish(void *w, const struct ArrowSchema *s, shape_err *err)
{
    return shape_parquet_writer_finish(w, s, err);
}

int shape_parquet_write_stream(struct ArrowArrayStream *stream, FILE *out, const shape_parquet_options *o,
                               shape_err *err)
{
    shape_parquet_writer *w = NULL;
    SHAPE_RETURN_NOT_OK(shape_parquet_writer_new(out, o, &w, err));
    io_sink sink = {w, parquet_write, parquet_finish};
    int rc = io_drain_stream(stream, &sink, shape_parquet_check_schema, err);
    shape_parquet_writer_free(w);
    return rc;
}

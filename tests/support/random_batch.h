/* random_batch.h — random Arrow batches of shape's column types, for the
 * writers' fuzz target and their read-back test.
 *
 * Why: the Arrow IPC and Parquet writers must take any batch the library can
 * hand out — every core type (int64, float64 with NaN/±inf/-0, bool, utf8
 * with multi-byte text, binary, timestamps in µs and ns, the headers map),
 * nulls anywhere, empty batches, and sliced columns (a non-zero offset, as a
 * consumer that slices a batch hands it on) — not just what the decoder
 * happens to make.
 * How: every choice is drawn from a byte source: the fuzzer's input, or a
 * xorshift generator from a seed (src.data == NULL). rb_schema picks the
 * columns once (a stream has one schema); rb_batch fills a batch of them and
 * exports it, sliced by a drawn offset. Header-only, static functions.
 */
#ifndef SHAPE_TEST_RANDOM_BATCH_H
#define SHAPE_TEST_RANDOM_BATCH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "shape/arrow.h"
#include "shape/arrow_ipc.h"
#include "shape/parquet.h"

typedef struct rb_source {
    const uint8_t *data; /* NULL: use the generator */
    size_t len, pos;
    uint64_t state;
} rb_source;

static inline unsigned rb_byte(rb_source *s)
{
    if (s->data) return s->pos < s->len ? s->data[s->pos++] : 0;
    s->state ^= s->state << 13;
    s->state ^= s->state >> 7;
    s->state ^= s->state << 17;
    return (unsigned)(s->state >> 24) & 0xFF;
}

static inline uint64_t rb_u64(rb_source *s)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | rb_byte(s);
    return v;
}

enum { RB_MAX_COLUMNS = 10 };
static const shape_type rb_types[] = {SHAPE_TYPE_INT64, SHAPE_TYPE_FLOAT64, SHAPE_TYPE_BOOL, SHAPE_TYPE_UTF8,
                                      SHAPE_TYPE_BINARY, SHAPE_TYPE_TIMESTAMP_US, SHAPE_TYPE_TIMESTAMP_NS,
                                      SHAPE_TYPE_MAP};

typedef struct rb_schema {
    int n;
    shape_type types[RB_MAX_COLUMNS];
} rb_schema;

static inline void rb_pick_schema(rb_source *s, rb_schema *out)
{
    out->n = 1 + (int)(rb_byte(s) % RB_MAX_COLUMNS);
    for (int i = 0; i < out->n; i++) out->types[i] = rb_types[rb_byte(s) % (sizeof rb_types / sizeof rb_types[0])];
}

static inline int rb_add_columns(shape_batch *b, const rb_schema *sc, shape_err *err)
{
    for (int i = 0; i < sc->n; i++) {
        char name[16];
        int n = snprintf(name, sizeof name, "c%d", i);
        SHAPE_RETURN_NOT_OK(shape_batch_add_column(b, name, (size_t)n, sc->types[i], NULL, err));
    }
    return SHAPE_OK;
}

/* A short text of 1- to 4-byte UTF-8 characters (and the odd control byte). */
static inline size_t rb_text(rb_source *s, char *buf)
{
    static const char *const pieces[] = {"a", "Z", " ", "\"", "\\", "\n", "\x01", "\xc3\xa9", "\xe2\x98\x95",
                                         "\xf0\x9d\x84\x9e", "0", "~"};
    size_t n = rb_byte(s) % 12, len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = pieces[rb_byte(s) % 12];
        memcpy(buf + len, p, strlen(p));
        len += strlen(p);
    }
    return len;
}

/* rb_bytes: N random bytes into BUF (N below its size). A function of its own
 * because gcc 12 -O3 vectorizes the loop inlined into rb_value and then warns
 * (stringop-overflow) of a store past the 64-byte buffer that N < 20 rules out. */
static __attribute__((noinline)) size_t rb_bytes(rb_source *s, char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) buf[i] = (char)rb_byte(s);
    return n;
}

static inline double rb_double(rb_source *s)
{
    switch (rb_byte(s) % 10) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0;
    case 4: return 0.0;
    default: {
        double d = (double)(int64_t)rb_u64(s) / 1e6;
        return rb_byte(s) & 1 ? d : d / 1e12;
    }
    }
}

static inline int rb_value(rb_source *s, shape_column *c, shape_err *err)
{
    char text[64];
    switch (c->type) {
    case SHAPE_TYPE_INT64: {
        unsigned k = rb_byte(s) % 4;
        int64_t v = k == 0 ? INT64_MIN : k == 1 ? INT64_MAX : (int64_t)rb_u64(s) >> (rb_byte(s) % 63);
        return shape_column_append_int64(c, v, err);
    }
    case SHAPE_TYPE_FLOAT64: return shape_column_append_double(c, rb_double(s), err);
    case SHAPE_TYPE_BOOL: return shape_column_append_bool(c, rb_byte(s) & 1, err);
    case SHAPE_TYPE_UTF8: return shape_column_append_bytes(c, text, rb_text(s, text), err);
    case SHAPE_TYPE_BINARY: {
        size_t n = rb_bytes(s, text, rb_byte(s) % 20);
        return shape_column_append_bytes(c, text, n, err);
    }
    case SHAPE_TYPE_TIMESTAMP_US: /* years 1..9999 */
        return shape_column_append_timestamp(c, -62000000000000000ll + (int64_t)(rb_u64(s) % 315000000000000000ull), err);
    case SHAPE_TYPE_TIMESTAMP_NS: /* 1824..2116, inside int64 nanoseconds */
        return shape_column_append_timestamp(c, (int64_t)(rb_u64(s) >> 1) - 4600000000000000000ll, err);
    case SHAPE_TYPE_MAP: {
        SHAPE_RETURN_NOT_OK(shape_column_map_begin_row(c, err));
        unsigned n = rb_byte(s) % 4;
        for (unsigned i = 0; i < n; i++) {
            char key[64];
            size_t kl = rb_text(s, key), vl = rb_bytes(s, text, rb_byte(s) % 10);
            SHAPE_RETURN_NOT_OK(shape_column_map_append(c, key, kl, rb_byte(s) % 5 ? text : NULL, vl, err));
        }
        return shape_column_map_end_row(c, err);
    }
    default: return shape_column_append_null(c, err);
    }
}

/* Fill and export one batch of up to 60 rows; then slice it by up to a
 * third of its rows (every column's offset moved, lengths and null counts
 * adjusted as the C Data Interface allows: null_count -1 = unknown). */
static inline int rb_batch(rb_source *s, shape_batch *b, struct ArrowSchema *schema, struct ArrowArray *array,
                           shape_err *err)
{
    int64_t rows = rb_byte(s) % 61;
    unsigned null_share = rb_byte(s) % 4; /* 0: no nulls, else about 1 in (2 + 3k) */
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < shape_batch_num_columns(b); i++) {
            shape_column *c = shape_batch_column(b, i);
            if (null_share && rb_byte(s) % (2 + 3 * null_share) == 0)
                SHAPE_RETURN_NOT_OK(shape_column_append_null(c, err));
            else
                SHAPE_RETURN_NOT_OK(rb_value(s, c, err));
        }
        SHAPE_RETURN_NOT_OK(shape_batch_end_row(b, err));
    }
    SHAPE_RETURN_NOT_OK(shape_batch_finish(b, schema, array, err));
    int64_t k = rows ? rb_byte(s) % (rows / 3 + 1) : 0;
    if (k) {
        for (int64_t i = 0; i < array->n_children; i++) {
            struct ArrowArray *c = array->children[i];
            c->offset += k;
            c->length -= k;
            c->null_count = c->null_count == 0 ? 0 : -1;
        }
        array->length -= k;
    }
    return SHAPE_OK;
}

/* A whole stream: the columns, then `batches` batches, each shown to
 * each(ud, ...) when not NULL (before the writers) and written by both
 * writers, which are then finished. *rows counts the rows written. */
static inline int rb_write_stream(rb_source *s, int batches, shape_ipc_writer *ipc, shape_parquet_writer *pq,
                                  int (*each)(void *ud, const struct ArrowSchema *, const struct ArrowArray *,
                                              shape_err *),
                                  void *ud, int *columns, int64_t *rows, shape_err *err)
{
    shape_batch *b = NULL;
    rb_schema sc;
    rb_pick_schema(s, &sc);
    *columns = sc.n;
    *rows = 0;
    int rc = shape_batch_new(&b, err);
    if (rc == SHAPE_OK) rc = rb_add_columns(b, &sc, err);
    for (int i = 0; rc == SHAPE_OK && i < batches; i++) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        rc = rb_batch(s, b, &schema, &array, err);
        if (rc != SHAPE_OK) break;
        if (each) rc = each(ud, &schema, &array, err);
        if (rc == SHAPE_OK) rc = shape_ipc_writer_write(ipc, &schema, &array, err);
        if (rc == SHAPE_OK) rc = shape_parquet_writer_write(pq, &schema, &array, err);
        *rows += array.length;
        array.release(&array);
        schema.release(&schema);
    }
    if (rc == SHAPE_OK) rc = shape_ipc_writer_finish(ipc, NULL, err);
    if (rc == SHAPE_OK) rc = shape_parquet_writer_finish(pq, NULL, err);
    shape_batch_free(b);
    return rc;
}

#endif

/* shape/arrow.h — Arrow C Data / C Stream Interface, column and batch builders.
 *
 * Why: the library hands decoded messages out as Arrow record batches through
 * the Arrow C Data Interface (ArrowSchema/ArrowArray) and the C Stream
 * Interface (ArrowArrayStream), so DuckDB, pyarrow, polars and nanoarrow take
 * them without copies and without an Arrow library on our side.
 *
 * How:
 *   - The three ABI structs below are the specification's, under its guard
 *     macros, so this header coexists with any other copy of them.
 *   - A shape_column is a growable Arrow column with public buffer fields; the
 *     append functions are static inline so a decoder's per-value cost is a
 *     capacity compare, a store and an increment. Buffers grow by doubling and
 *     are 64-byte aligned; the validity bitmap is allocated only when the first
 *     null arrives (earlier rows are then marked valid).
 *   - A shape_batch is an ordered set of named columns. shape_batch_finish()
 *     exports them as one struct array plus its schema, MOVING the buffers into
 *     the exported array (no copy) and leaving the builder empty with the same
 *     columns for the next batch.
 *   - Every exported ArrowSchema/ArrowArray node (each child too) owns its own
 *     memory through its private_data and its release callback frees it once,
 *     so a consumer may move a child out and release it separately.
 *   - Small inline read helpers let our own consumers (profiler, printers) read
 *     values of any array laid out as the specification says, offsets honoured.
 *
 * Ownership in one line: builders own their buffers until finish; after
 * finish the exported structs own them and free them in their release
 * callbacks; the caller owns the ArrowSchema/ArrowArray/ArrowArrayStream
 * structs it passes in (they are plain storage that we fill).
 *
 * Thread safety: a builder or stream is used by one thread at a time; the
 * ArrowSchema/ArrowArray structs it exports may be released from any thread,
 * before or after the builder is freed (exported buffers go back to a
 * mutex-protected, reference-counted pool the next batch reuses).
 */
#ifndef SHAPE_ARROW_H
#define SHAPE_ARROW_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* The Arrow C Data Interface and C Stream Interface (ABI, from the spec).   */
/* ------------------------------------------------------------------------ */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    /* Array type description */
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;

    /* Release callback */
    void (*release)(struct ArrowSchema *);
    /* Opaque producer-specific data */
    void *private_data;
};

struct ArrowArray {
    /* Array data description */
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;

    /* Release callback */
    void (*release)(struct ArrowArray *);
    /* Opaque producer-specific data */
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    /* Callbacks providing stream functionality */
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);

    /* Release callback */
    void (*release)(struct ArrowArrayStream *);

    /* Opaque producer-specific data */
    void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* ------------------------------------------------------------------------ */
/* Column types                                                              */
/* ------------------------------------------------------------------------ */

/* The column types a shape stream produces, with their Arrow format strings. */
typedef enum shape_type {
    SHAPE_TYPE_NULL = 0,     /* "n"       null: no buffers                      */
    SHAPE_TYPE_BOOL,         /* "b"       validity, bit-packed values           */
    SHAPE_TYPE_INT64,        /* "l"       validity, int64 values                */
    SHAPE_TYPE_FLOAT64,      /* "g"       validity, double values               */
    SHAPE_TYPE_UTF8,         /* "u"       validity, int32 offsets, bytes        */
    SHAPE_TYPE_BINARY,       /* "z"       validity, int32 offsets, bytes        */
    SHAPE_TYPE_TIMESTAMP_US, /* "tsu:UTC" validity, int64 µs since the epoch    */
    SHAPE_TYPE_TIMESTAMP_NS, /* "tsn:UTC" validity, int64 ns since the epoch    */
    SHAPE_TYPE_MAP           /* "+m"      map<utf8, binary>: validity, int32
                              * offsets, one non-nullable child "entries" ("+s")
                              * with non-nullable "key" ("u") and nullable
                              * "value" ("z")                                  */
} shape_type;

#define SHAPE_TYPE_COUNT 9

/* The Arrow format string of a type (static storage), NULL if out of range. */
const char *shape_type_format(shape_type type);

/* The type whose format string is `format`, or -1 when it is not one of ours
 * (for maps only the top-level "+m" is checked, not the children). */
int shape_type_from_format(const char *format);

/* Number of buffers of the type's top-level array (n_buffers on export). */
int shape_type_n_buffers(shape_type type);

/* Largest byte count a utf8/binary column may hold in one batch: its offsets
 * are int32 (the "u"/"z" layouts), so a batch cannot address more. */
#define SHAPE_COLUMN_DATA_LIMIT INT32_MAX

/* ------------------------------------------------------------------------ */
/* Column builder                                                            */
/* ------------------------------------------------------------------------ */

/* A growable Arrow column. Obtain one from shape_batch_add_column(); the batch
 * owns it (and every buffer below) until shape_batch_free(). Its address is
 * stable for the batch's life, so a decoder may cache the pointer.
 *
 * The fields are public so the append functions can be inlined; callers READ
 * them freely but change them only through the functions below. Buffers are
 * owned by the column until shape_batch_finish() moves them out, after which
 * the fields point at fresh (or no) storage: never keep a buffer pointer
 * across a finish, append or truncate. */
typedef struct shape_column {
    shape_type type;
    int64_t length;     /* rows appended so far in this batch */
    int64_t null_count; /* null rows among them */
    int64_t capacity;   /* rows `values` (and `validity`, once present) can hold */

    /* Validity bitmap, LSB-first, bit i set = row i valid. NULL until the first
     * null of the batch (all rows valid). Always NULL for SHAPE_TYPE_NULL. */
    uint8_t *validity;
    /* bool: bit-packed values; int64/timestamps: int64_t[capacity];
     * float64: double[capacity]; utf8/binary/map: int32_t offsets[capacity+1]
     * (offsets[0] = 0, offsets[i+1] = end of row i in data / in the entries).
     * NULL before the first append and for SHAPE_TYPE_NULL. */
    void *values;
    /* utf8/binary: the concatenated bytes of every row; else NULL. */
    uint8_t *data;
    int64_t data_length;   /* bytes used in data */
    int64_t data_capacity; /* bytes usable: min(allocated, data_limit), >= data_length */
    int64_t data_limit;    /* most bytes one batch may hold (default INT32_MAX) */

    /* SHAPE_TYPE_MAP only: the entries' key column (utf8, never null) and
     * value column (binary, nullable), owned by this column. Entries of row i
     * are keys/items rows offsets[i] .. offsets[i+1]-1. NULL for other types. */
    struct shape_column *keys;
    struct shape_column *items;

    /* Private to the builder: do not touch. */
    char *name;               /* NUL-terminated copy of the field name */
    size_t name_len;
    uint64_t name_hash;
    int64_t alloc_values;     /* bytes allocated for values */
    int64_t alloc_validity;   /* bytes allocated for validity */
    int64_t alloc_data;       /* bytes allocated for data */
    int64_t hint_rows;        /* capacity of the previous batch, reused */
    int64_t hint_data;        /* data capacity of the previous batch, reused */
    void *pool;               /* the batch's buffer pool (shared with exports) */
} shape_column;

/* Slow paths of the inline appends (exported because the inlines call them):
 * make room for `rows` more rows, `bytes` more data bytes, or create the
 * validity bitmap with every existing row valid. On failure the column is
 * unchanged. grow_data fails with SHAPE_ELIMIT when data_length + bytes would
 * pass data_limit (the batch must be finished first), SHAPE_ENOMEM when
 * memory runs out. */
int shape_column_grow(shape_column *c, int64_t rows, shape_err *err);
int shape_column_grow_data(shape_column *c, size_t bytes, shape_err *err);
int shape_column_make_validity(shape_column *c, shape_err *err);

/* Make room for `rows` more rows and `bytes` more data bytes at once (a hint
 * for known batch sizes; appends grow on demand anyway). */
int shape_column_reserve(shape_column *c, int64_t rows, size_t bytes, shape_err *err);

/* Roll the column back to its first `new_length` rows (0 <= new_length <=
 * length), for any type: lengths, null counts, string bytes and map entries
 * follow. For a map, new_length == length also discards the entries of a row
 * begun with shape_column_map_begin_row() but not ended. SHAPE_EINVAL if
 * new_length is out of range. Never allocates. */
int shape_column_truncate(shape_column *c, int64_t new_length, shape_err *err);

/* Append n nulls (bulk; used to pad a column that joined mid-batch). */
int shape_column_append_nulls(shape_column *c, int64_t n, shape_err *err);

/* Lower (or restore) the most data bytes one batch of a utf8/binary column may
 * hold; a map applies it to its keys and its values. Clamped to
 * [0, SHAPE_COLUMN_DATA_LIMIT]. Used to cut batches by size, and by tests of
 * the overflow guard. Takes effect for the next append. */
void shape_column_set_data_limit(shape_column *c, int64_t limit);

static inline int64_t shape_column_length(const shape_column *c) { return c->length; }
static inline int64_t shape_column_null_count(const shape_column *c) { return c->null_count; }
static inline const char *shape_column_name(const shape_column *c) { return c->name; }

#if defined(__GNUC__) || defined(__clang__)
#define SHAPE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SHAPE_UNLIKELY(x) (x)
#endif

static inline void shape_bit_set(uint8_t *bits, int64_t i)
{
    bits[i >> 3] = (uint8_t)(bits[i >> 3] | (1u << (i & 7)));
}

static inline void shape_bit_clear(uint8_t *bits, int64_t i)
{
    bits[i >> 3] = (uint8_t)(bits[i >> 3] & ~(1u << (i & 7)));
}

static inline int shape_bit_get(const uint8_t *bits, int64_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

/* Ensure room for one more row (the common inline prologue). */
static inline int shape_column_room_(shape_column *c, shape_err *err)
{
    if (SHAPE_UNLIKELY(c->length >= c->capacity)) return shape_column_grow(c, 1, err);
    return SHAPE_OK;
}

/* Mark the row being appended valid (only when a bitmap exists) and count it. */
static inline void shape_column_commit_valid_(shape_column *c)
{
    if (c->validity) shape_bit_set(c->validity, c->length);
    c->length++;
}

/* The appends below return SHAPE_OK, or an error code with `err` filled
 * (SHAPE_ENOMEM; SHAPE_ELIMIT for the byte limit) and the column unchanged.
 * Each asserts (debug builds) that it fits the column's type. */

/* A null row; valid for every type. The first null of a batch allocates the
 * validity bitmap. For a map, no row may be open (begun and not ended). */
static inline int shape_column_append_null(shape_column *c, shape_err *err)
{
    if (c->type == SHAPE_TYPE_NULL) {
        c->length++;
        c->null_count++;
        return SHAPE_OK;
    }
    SHAPE_RETURN_NOT_OK(shape_column_room_(c, err));
    if (SHAPE_UNLIKELY(!c->validity)) SHAPE_RETURN_NOT_OK(shape_column_make_validity(c, err));
    int64_t i = c->length;
    switch (c->type) {
    case SHAPE_TYPE_BOOL: shape_bit_clear((uint8_t *)c->values, i); break;
    case SHAPE_TYPE_INT64:
    case SHAPE_TYPE_TIMESTAMP_US:
    case SHAPE_TYPE_TIMESTAMP_NS: ((int64_t *)c->values)[i] = 0; break;
    case SHAPE_TYPE_FLOAT64: ((double *)c->values)[i] = 0.0; break;
    case SHAPE_TYPE_UTF8:
    case SHAPE_TYPE_BINARY: ((int32_t *)c->values)[i + 1] = ((int32_t *)c->values)[i]; break;
    case SHAPE_TYPE_MAP:
        assert(c->keys->length == ((int32_t *)c->values)[i]); /* no open row */
        ((int32_t *)c->values)[i + 1] = ((int32_t *)c->values)[i];
        break;
    default: break;
    }
    shape_bit_clear(c->validity, i);
    c->length++;
    c->null_count++;
    return SHAPE_OK;
}

static inline int shape_column_append_int64(shape_column *c, int64_t v, shape_err *err)
{
    assert(c->type == SHAPE_TYPE_INT64 || c->type == SHAPE_TYPE_TIMESTAMP_US ||
           c->type == SHAPE_TYPE_TIMESTAMP_NS);
    SHAPE_RETURN_NOT_OK(shape_column_room_(c, err));
    ((int64_t *)c->values)[c->length] = v;
    shape_column_commit_valid_(c);
    return SHAPE_OK;
}

/* A timestamp in the column's unit (µs or ns since 1970-01-01T00:00:00Z). */
static inline int shape_column_append_timestamp(shape_column *c, int64_t v, shape_err *err)
{
    assert(c->type == SHAPE_TYPE_TIMESTAMP_US || c->type == SHAPE_TYPE_TIMESTAMP_NS);
    return shape_column_append_int64(c, v, err);
}

static inline int shape_column_append_double(shape_column *c, double v, shape_err *err)
{
    assert(c->type == SHAPE_TYPE_FLOAT64);
    SHAPE_RETURN_NOT_OK(shape_column_room_(c, err));
    ((double *)c->values)[c->length] = v;
    shape_column_commit_valid_(c);
    return SHAPE_OK;
}

static inline int shape_column_append_bool(shape_column *c, int v, shape_err *err)
{
    assert(c->type == SHAPE_TYPE_BOOL);
    SHAPE_RETURN_NOT_OK(shape_column_room_(c, err));
    if (v)
        shape_bit_set((uint8_t *)c->values, c->length);
    else
        shape_bit_clear((uint8_t *)c->values, c->length);
    shape_column_commit_valid_(c);
    return SHAPE_OK;
}

/* Copy n bytes, short as a rule (a decoded string): overlapping word
 * copies up to 16 bytes instead of a call; memcpy beyond. Reads and writes
 * nothing outside [src, src + n) and [dst, dst + n); src may be NULL when n
 * is 0. */
static inline void shape_copy_bytes_(uint8_t *dst, const void *src, size_t n)
{
    const uint8_t *s = (const uint8_t *)src;
    if (n > 16) {
        memcpy(dst, s, n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else if (n) {
        dst[0] = s[0];
        dst[n / 2] = s[n / 2];
        dst[n - 1] = s[n - 1];
    }
}

/* utf8 or binary: n bytes at p are copied (p may be NULL when n is 0). UTF-8
 * validity is the caller's to ensure for utf8 columns. */
static inline int shape_column_append_bytes(shape_column *c, const void *p, size_t n, shape_err *err)
{
    assert(c->type == SHAPE_TYPE_UTF8 || c->type == SHAPE_TYPE_BINARY);
    SHAPE_RETURN_NOT_OK(shape_column_room_(c, err));
    if (SHAPE_UNLIKELY((uint64_t)n > (uint64_t)(c->data_capacity - c->data_length)))
        SHAPE_RETURN_NOT_OK(shape_column_grow_data(c, n, err));
    if (n) shape_copy_bytes_(c->data + c->data_length, p, n); /* data may still be NULL when n is 0 */
    c->data_length += (int64_t)n;
    ((int32_t *)c->values)[c->length + 1] = (int32_t)c->data_length;
    shape_column_commit_valid_(c);
    return SHAPE_OK;
}

/* Write-in-place for utf8/binary (e.g. unescaping JSON straight into the
 * column): shape_column_reserve(c, 1, max_bytes) first, write up to max_bytes
 * at c->data + c->data_length, then commit the n bytes written as one row.
 * Commit cannot fail when the reserve succeeded. */
static inline void shape_column_commit_bytes(shape_column *c, size_t n)
{
    assert(c->type == SHAPE_TYPE_UTF8 || c->type == SHAPE_TYPE_BINARY);
    assert(c->length < c->capacity && (int64_t)n <= c->data_capacity - c->data_length);
    c->data_length += (int64_t)n;
    ((int32_t *)c->values)[c->length + 1] = (int32_t)c->data_length;
    shape_column_commit_valid_(c);
}

/* Map rows: begin_row, any number of map_append, end_row. A failure (or a
 * later field of the same record turning out invalid) is rolled back with
 * shape_column_truncate(c, row_index) — c->length is the index of the open
 * row. begin_row reserves the row so end_row cannot fail. */
static inline int shape_column_map_begin_row(shape_column *c, shape_err *err)
{
    assert(c->type == SHAPE_TYPE_MAP);
    return shape_column_room_(c, err);
}

/* One entry of the open row: key (utf8, copied) and value (binary, copied;
 * value == NULL appends a null value). On failure the row is as before. */
static inline int shape_column_map_append(shape_column *c, const char *key, size_t key_len,
                                          const void *value, size_t value_len, shape_err *err)
{
    assert(c->type == SHAPE_TYPE_MAP);
    if (SHAPE_UNLIKELY(c->keys->length >= INT32_MAX))
        return shape_err_set(err, SHAPE_ELIMIT, "map column '%s' holds too many entries for one batch",
                             c->name ? c->name : "");
    SHAPE_RETURN_NOT_OK(shape_column_append_bytes(c->keys, key, key_len, err));
    int rc = value ? shape_column_append_bytes(c->items, value, value_len, err)
                   : shape_column_append_null(c->items, err);
    if (SHAPE_UNLIKELY(rc != SHAPE_OK)) shape_column_truncate(c->keys, c->keys->length - 1, NULL);
    return rc;
}

static inline int shape_column_map_end_row(shape_column *c, shape_err *err)
{
    assert(c->type == SHAPE_TYPE_MAP);
    SHAPE_RETURN_NOT_OK(shape_column_room_(c, err));
    ((int32_t *)c->values)[c->length + 1] = (int32_t)c->keys->length;
    shape_column_commit_valid_(c);
    return SHAPE_OK;
}

/* ------------------------------------------------------------------------ */
/* Batch builder                                                             */
/* ------------------------------------------------------------------------ */

/* An ordered set of named columns building one record batch at a time. */
typedef struct shape_batch shape_batch;

/* Create an empty batch builder (no columns). *out is owned by the caller
 * and freed with shape_batch_free(). */
int shape_batch_new(shape_batch **out, shape_err *err);

/* Free the builder, its columns and any rows not yet finished. Batches already
 * exported are unaffected (they own their buffers). NULL is allowed. */
void shape_batch_free(shape_batch *b);

/* Append a nullable column named by name[0..name_len) (copied; must not
 * contain a NUL byte and must not repeat an existing name: SHAPE_EINVAL).
 * A column added after rows were ended with shape_batch_end_row() starts with
 * that many nulls. *out (may be NULL) receives the column, owned by the batch,
 * address stable until shape_batch_free(). */
int shape_batch_add_column(shape_batch *b, const char *name, size_t name_len, shape_type type,
                           shape_column **out, shape_err *err);

/* The column named name[0..name_len), or NULL (hash lookup, O(1) expected). */
shape_column *shape_batch_find(const shape_batch *b, const char *name, size_t name_len);

/* Index of the named column in batch order, or -1. */
int64_t shape_batch_find_index(const shape_batch *b, const char *name, size_t name_len);

int64_t shape_batch_num_columns(const shape_batch *b);

/* The i-th column in order of addition (owned by the batch), NULL if out of range. */
shape_column *shape_batch_column(const shape_batch *b, int64_t i);

/* Rows completed with shape_batch_end_row() in the current batch. */
int64_t shape_batch_rows(const shape_batch *b);

/* Row protocol for decoders: append at most one value to any columns, then
 * end_row pads every column the row did not touch with a null. SHAPE_EINVAL
 * (nothing changed) if a column received two values in the row. */
int shape_batch_end_row(shape_batch *b, shape_err *err);

/* End the row when the caller knows that every column received exactly one
 * value in it (a decoder that pads the columns it did not fill itself): no
 * pass over the columns. Debug builds assert it; a release build trusts it. */
void shape_batch_commit_row(shape_batch *b);

/* Drop whatever the current row appended to any column (truncate every column
 * to shape_batch_rows()), including an open map row. */
void shape_batch_rollback_row(shape_batch *b);

/* Drop every row of the current batch; columns, metadata and buffers stay. */
void shape_batch_clear_rows(shape_batch *b);

/* Set schema metadata key to value (both copied, NUL-terminated), replacing an
 * earlier value of the same key; value NULL removes the key. Keys keep their
 * first-set order. Metadata stays across batches until changed or cleared:
 * e.g. shape_batch_set_metadata(b, "shape.partition", "3", err). */
int shape_batch_set_metadata(shape_batch *b, const char *key, const char *value, shape_err *err);
void shape_batch_clear_metadata(shape_batch *b);

/* Export the current batch's schema alone: a "+s" struct (name "", flags 0)
 * whose children are the columns (ARROW_FLAG_NULLABLE set), with the schema
 * metadata when any. *out is written (the caller's storage) and owns all it
 * points to; the caller must call out->release(out). */
int shape_batch_schema(const shape_batch *b, struct ArrowSchema *out, shape_err *err);

/* Finish the batch: every column must hold the same number of rows
 * (SHAPE_EINVAL otherwise, nothing changed); that number is the batch length
 * (with no columns: the number of end_row calls). Writes *array: a struct
 * array ("+s", null_count 0, one NULL validity buffer) whose children are the
 * columns, their buffers MOVED out of the builder, and, when schema is not
 * NULL, *schema as shape_batch_schema() would. Both are owned by the caller
 * (call their release). The builder is left empty with the same columns and
 * metadata, its buffers sized like the last batch's on next append (taken
 * from released batches when there are any: they come back to a pool).
 * On failure (SHAPE_ENOMEM) nothing is written and the rows stay. */
int shape_batch_finish(shape_batch *b, struct ArrowSchema *schema, struct ArrowArray *array,
                       shape_err *err);

/* ------------------------------------------------------------------------ */
/* Schemas and metadata                                                      */
/* ------------------------------------------------------------------------ */

/* Fill *out with a schema node released by our callback: format and name
 * copied (name may be NULL), metadata copied when not NULL (encoded bytes as
 * the spec lays them out), and n_children zeroed child structs owned by *out
 * that the caller fills (e.g. with this same function). Releasing *out
 * releases every child whose release is not NULL. */
int shape_arrow_schema_make(struct ArrowSchema *out, const char *format, const char *name,
                            const char *metadata, int64_t flags, int64_t n_children, shape_err *err);

/* Deep copy of any valid schema (ours or not): format, name, metadata, flags,
 * children and dictionary, all in fresh memory released by our callback.
 * *src is unchanged and still owned by its owner. On failure *dst is left
 * released (dst->release == NULL). */
int shape_arrow_schema_deep_copy(const struct ArrowSchema *src, struct ArrowSchema *dst,
                                 shape_err *err);

/* Encode n key/value pairs (NUL-terminated strings) as schema metadata: int32
 * pair count, then for each pair int32 key length, key bytes, int32 value
 * length, value bytes; native endianness, no terminators. *out is malloc'd
 * (free() it), *out_len its size in bytes. */
int shape_arrow_metadata_encode(const char *const *keys, const char *const *values, int32_t n,
                                char **out, size_t *out_len, shape_err *err);

/* Size in bytes of encoded metadata (0 for NULL). */
size_t shape_arrow_metadata_size(const char *metadata);

/* Look key up in encoded metadata: 1 and *value, *value_len (pointing into
 * metadata, not NUL-terminated) when found, else 0. */
int shape_arrow_metadata_find(const char *metadata, const char *key, const char **value,
                              int32_t *value_len);

/* ------------------------------------------------------------------------ */
/* Stream                                                                    */
/* ------------------------------------------------------------------------ */

/* Producer callback of a stream: write the next batch to *out and return
 * SHAPE_OK, or return SHAPE_OK leaving out->release NULL at the end of the
 * stream (*out is zeroed before each call), or return an error code with
 * `err` filled. The batch written is handed to the consumer, who owns it. */
typedef int (*shape_arrow_next_fn)(void *ctx, struct ArrowArray *out, shape_err *err);

/* Make *out an ArrowArrayStream over a producer.
 *   schema  deep-COPIED (the caller keeps and releases its own);
 *   next    called by get_next until it signals the end or fails; after the
 *           end or an error get_next repeats that outcome without calling it;
 *   close   called exactly once, by release (may be NULL);
 *   ctx     passed to next and close, owned by the caller until close.
 * get_schema returns a fresh deep copy on each call; get_last_error returns
 * the message of the last failed call (NULL if none), valid until the next
 * call on the stream; error returns are errno values (EINVAL, ENOMEM, ENOENT,
 * EIO). On failure of this function nothing is written to *out and close is
 * not called. */
int shape_arrow_stream_init(struct ArrowArrayStream *out, const struct ArrowSchema *schema,
                            shape_arrow_next_fn next, void (*close)(void *ctx), void *ctx,
                            shape_err *err);

/* The shape error code (enum shape_code) behind the last failure of a stream
 * made by shape_arrow_stream_init(): SHAPE_OK if none, SHAPE_EINVAL if the
 * stream is not one of ours. Lets our commands pick the right exit code. */
int shape_arrow_stream_error_code(struct ArrowArrayStream *stream);

/* The ctx given to shape_arrow_stream_init() for a live stream made with that
 * producer `next`, else NULL: lets a producer module offer accessors on its
 * own streams (e.g. the position of a source stream). */
void *shape_arrow_stream_context(struct ArrowArrayStream *stream, shape_arrow_next_fn next);

/* The consumer's side: read any C stream to its end. Its schema (first(ud,
 * schema, err) when not NULL), every batch to each(ud, schema, batch, err)
 * (released after the call), then, when all went well, last(ud, schema,
 * err) when not NULL. The first failure stops the read and is returned; a
 * failing stream is SHAPE_EIO with its get_last_error. The stream is read,
 * not released. (The writers' and the split's whole-stream calls.) */
int shape_arrow_stream_consume(struct ArrowArrayStream *stream,
                               int (*first)(void *ud, const struct ArrowSchema *schema, shape_err *err),
                               int (*each)(void *ud, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                                           shape_err *err),
                               int (*last)(void *ud, const struct ArrowSchema *schema, shape_err *err), void *ud,
                               shape_err *err);

/* ------------------------------------------------------------------------ */
/* Read helpers (any spec-conforming array; `i` is the logical index, the    */
/* array's offset is applied here). No bounds checks: 0 <= i < length.       */
/* ------------------------------------------------------------------------ */

/* 1 if row i is valid. Arrays of the null type (no buffers) are all null; a
 * NULL validity buffer means all valid. */
static inline int shape_arrow_is_valid(const struct ArrowArray *a, int64_t i)
{
    if (a->n_buffers == 0) return 0;
    const uint8_t *bits = (const uint8_t *)a->buffers[0];
    return bits == NULL || shape_bit_get(bits, a->offset + i);
}

/* int64 and timestamp arrays. */
static inline int64_t shape_arrow_int64_at(const struct ArrowArray *a, int64_t i)
{
    return ((const int64_t *)a->buffers[1])[a->offset + i];
}

static inline double shape_arrow_double_at(const struct ArrowArray *a, int64_t i)
{
    return ((const double *)a->buffers[1])[a->offset + i];
}

static inline int shape_arrow_bool_at(const struct ArrowArray *a, int64_t i)
{
    return shape_bit_get((const uint8_t *)a->buffers[1], a->offset + i);
}

/* utf8/binary: pointer to row i's bytes (not NUL-terminated) and *len. The
 * pointer points into the array's buffer, valid until it is released. */
static inline const uint8_t *shape_arrow_bytes_at(const struct ArrowArray *a, int64_t i, size_t *len)
{
    const int32_t *offsets = (const int32_t *)a->buffers[1];
    int32_t start = offsets[a->offset + i], end = offsets[a->offset + i + 1];
    *len = (size_t)(end - start);
    const uint8_t *data = (const uint8_t *)a->buffers[2];
    return data ? data + start : (const uint8_t *)"";
}

/* Map row i: returns its entry count and sets *keys and *values to the key and
 * value child arrays and *first to the logical index in them of the row's
 * first entry (the entries struct's offset folded in), so entry j is
 * shape_arrow_bytes_at(*keys, *first + j, ...) and, when
 * shape_arrow_is_valid(*values, *first + j), shape_arrow_bytes_at(*values, ...). */
static inline int64_t shape_arrow_map_row(const struct ArrowArray *a, int64_t i,
                                          const struct ArrowArray **keys,
                                          const struct ArrowArray **values, int64_t *first)
{
    const int32_t *offsets = (const int32_t *)a->buffers[1];
    const struct ArrowArray *entries = a->children[0];
    int32_t start = offsets[a->offset + i], end = offsets[a->offset + i + 1];
    *keys = entries->children[0];
    *values = entries->children[1];
    *first = entries->offset + start;
    return end - start;
}

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

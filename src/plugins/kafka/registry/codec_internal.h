/* codec_internal.h — what flat_json.c, schema.c, avro.c and protobuf.c share:
 * the resolved type of an Arrow column and inline readers of its values.
 *
 * Why: the flat JSON renderer, the schema documents and the two binary
 * encoders all need the same answer to "what is this column": a kind, a
 * unit, a zone, a scale, whether it is read through a dictionary. Parsing
 * the Arrow format string once (regfmt_type_resolve) and reading values
 * through one inline locator keeps the four in agreement and keeps the
 * per-row loops free of string work.
 * How: regfmt_type_resolve turns a field (dictionary unwrapped, the arrow.uuid
 * extension recognised) into a regfmt_type; regfmt_value_at maps a row to the
 * array and physical index holding its value (through the dictionary when
 * there is one) or says it is null; the readers below take that physical
 * index. The codec (schema.c) keeps one regfmt_column per column: the plan
 * the encoders walk.
 */
#ifndef SHAPE_KAFKA_REGISTRY_CODEC_INTERNAL_H
#define SHAPE_KAFKA_REGISTRY_CODEC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "registry/formats.h"
#include "shape/arrow.h"
#include "shape/error.h"
#include "shape/json.h"

typedef enum regfmt_kind {
    REGFMT_K_NULL = 0,
    REGFMT_K_BOOL,
    REGFMT_K_INT8,
    REGFMT_K_INT16,
    REGFMT_K_INT32,
    REGFMT_K_INT64,
    REGFMT_K_UINT8,
    REGFMT_K_UINT16,
    REGFMT_K_UINT32,
    REGFMT_K_UINT64,
    REGFMT_K_FLOAT16,
    REGFMT_K_FLOAT32,
    REGFMT_K_FLOAT64,
    REGFMT_K_STRING,       /* "u": int32 offsets */
    REGFMT_K_LARGE_STRING, /* "U": int64 offsets */
    REGFMT_K_BINARY,       /* "z" */
    REGFMT_K_LARGE_BINARY, /* "Z" */
    REGFMT_K_FIXED_BINARY, /* "w:N", byte_width N */
    REGFMT_K_UUID,         /* "w:16" + ARROW:extension:name = arrow.uuid */
    REGFMT_K_DECIMAL,      /* "d:P,S[,32|64|128]", byte_width 4, 8 or 16 */
    REGFMT_K_DATE32,       /* days */
    REGFMT_K_DATE64,       /* milliseconds */
    REGFMT_K_TIME32,       /* s or ms of the day (unit_digits 0 or 3), int32 */
    REGFMT_K_TIME64,       /* us or ns of the day (unit_digits 6 or 9), int64 */
    REGFMT_K_TIMESTAMP     /* int64 units since the epoch; zoned or not */
} regfmt_kind;

typedef struct regfmt_type {
    regfmt_kind kind;
    int8_t unit_digits;    /* time/timestamp: 0 (s), 3 (ms), 6 (us), 9 (ns) */
    int8_t zoned;          /* timestamp with a time zone (values are UTC) */
    int8_t index_width;    /* dictionary column: bytes of an index (1, 2, 4, 8); 0 = plain */
    int8_t index_unsigned; /* dictionary column: the index type is unsigned */
    int32_t byte_width;    /* fixed binary / uuid: bytes per value; decimal: 4, 8 or 16 */
    int32_t precision;     /* decimal */
    int32_t scale;         /* decimal */
} regfmt_type;

/* Resolve the field of column `name` (for messages). A type outside the
 * mapping table → SHAPE_EINVAL "cannot map column '{c}' of type {arrow type}
 * to a registry format (lists, structs and maps are not supported); use
 * --event-format json". Refused on purpose beyond the table: decimal256 and
 * decimals whose scale is outside [-20, 38] (their text would not fit
 * SHAPE_FLAT_SCALAR_MAX), string and binary views, run-end encoding. */
int regfmt_type_resolve(const struct ArrowSchema *field, regfmt_type *out, shape_err *err);

/* A readable Arrow type name in pyarrow's words ("int64", "timestamp[us,
 * tz=UTC]", "list<item: string>", "decimal128(12, 2)") into buf (always
 * NUL-terminated when size > 0); returns buf. Dictionary columns read
 * "dictionary<values=string, indices=int32>". */
char *regfmt_type_text(const struct ArrowSchema *field, char *buf, size_t size);

/* 1 when the field is nullable for the registry formats (§4.6): floats and
 * null-typed columns always, _shape_table and _shape_seq never, otherwise
 * the Arrow field's ARROW_FLAG_NULLABLE. */
int regfmt_field_nullable(const char *name, const regfmt_type *t, int64_t arrow_flags);

/* ---- value access --------------------------------------------------------- */

/* The array holding row `row` (logical, the column's own offset not yet
 * applied) of column `col` and the physical index of the value in it, or
 * NULL when the value is null. Dictionary columns answer with the dictionary
 * array and the index read from the column. */
static inline const struct ArrowArray *regfmt_value_at(const regfmt_type *t,
                                                       const struct ArrowArray *col, int64_t row,
                                                       int64_t *phys)
{
    if (col->n_buffers == 0) return NULL; /* null type */
    int64_t i = col->offset + row;
    const uint8_t *bits = (const uint8_t *)col->buffers[0];
    if (bits && !shape_bit_get(bits, i)) return NULL;
    if (!t->index_width) {
        *phys = i;
        return col;
    }
    const void *ix = col->buffers[1];
    int64_t k;
    switch (t->index_width) {
    case 1: k = t->index_unsigned ? (int64_t)((const uint8_t *)ix)[i] : ((const int8_t *)ix)[i]; break;
    case 2: k = t->index_unsigned ? (int64_t)((const uint16_t *)ix)[i] : ((const int16_t *)ix)[i]; break;
    case 4: k = t->index_unsigned ? (int64_t)((const uint32_t *)ix)[i] : ((const int32_t *)ix)[i]; break;
    default: k = ((const int64_t *)ix)[i]; break;
    }
    const struct ArrowArray *d = col->dictionary;
    int64_t j = d->offset + k;
    const uint8_t *dbits = d->n_buffers > 0 ? (const uint8_t *)d->buffers[0] : NULL;
    if (d->n_buffers == 0 || (dbits && !shape_bit_get(dbits, j))) return NULL;
    *phys = j;
    return d;
}

/* Readers by physical index (offset applied). */
static inline int64_t regfmt_read_int(const regfmt_type *t, const struct ArrowArray *a, int64_t i)
{
    const void *v = a->buffers[1];
    switch (t->kind) {
    case REGFMT_K_INT8: return ((const int8_t *)v)[i];
    case REGFMT_K_INT16: return ((const int16_t *)v)[i];
    case REGFMT_K_INT32:
    case REGFMT_K_DATE32:
    case REGFMT_K_TIME32: return ((const int32_t *)v)[i];
    case REGFMT_K_UINT8: return ((const uint8_t *)v)[i];
    case REGFMT_K_UINT16: return ((const uint16_t *)v)[i];
    case REGFMT_K_UINT32: return ((const uint32_t *)v)[i];
    default: return ((const int64_t *)v)[i]; /* int64, uint64 (bits), date64, time64, timestamp */
    }
}

/* Half-precision bits to double (exact). */
static inline double regfmt_half_to_double(uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    double v;
    if (exp == 0)
        v = frac * (1.0 / 16777216.0); /* subnormal: frac * 2^-24 */
    else if (exp == 31)
        v = frac ? __builtin_nan("") : __builtin_inf();
    else
        v = (1024 + frac) * __builtin_ldexp(1.0, exp - 25);
    return sign ? -v : v;
}

/* float16 / float32 / float64 as a double. */
static inline double regfmt_read_float(const regfmt_type *t, const struct ArrowArray *a, int64_t i)
{
    const void *v = a->buffers[1];
    if (t->kind == REGFMT_K_FLOAT64) return ((const double *)v)[i];
    if (t->kind == REGFMT_K_FLOAT32) return ((const float *)v)[i];
    return regfmt_half_to_double(((const uint16_t *)v)[i]);
}

/* string / binary / fixed binary / uuid bytes. */
static inline const uint8_t *regfmt_read_bytes(const regfmt_type *t, const struct ArrowArray *a,
                                               int64_t i, size_t *len)
{
    const uint8_t *data;
    switch (t->kind) {
    case REGFMT_K_LARGE_STRING:
    case REGFMT_K_LARGE_BINARY: {
        const int64_t *off = (const int64_t *)a->buffers[1];
        *len = (size_t)(off[i + 1] - off[i]);
        data = (const uint8_t *)a->buffers[2];
        return data ? data + off[i] : (const uint8_t *)"";
    }
    case REGFMT_K_FIXED_BINARY:
    case REGFMT_K_UUID:
        *len = (size_t)t->byte_width;
        return (const uint8_t *)a->buffers[1] + (size_t)i * (size_t)t->byte_width;
    default: {
        const int32_t *off = (const int32_t *)a->buffers[1];
        *len = (size_t)(off[i + 1] - off[i]);
        data = (const uint8_t *)a->buffers[2];
        return data ? data + off[i] : (const uint8_t *)"";
    }
    }
}

/* A decimal's unscaled value as 128-bit two's complement hi:lo. */
static inline void regfmt_read_decimal(const regfmt_type *t, const struct ArrowArray *a, int64_t i,
                                       int64_t *hi, uint64_t *lo)
{
    const uint8_t *v = (const uint8_t *)a->buffers[1];
    if (t->byte_width == 16) {
        uint64_t w[2];
        memcpy(w, v + (size_t)i * 16, 16); /* little-endian words, low first */
        *lo = w[0];
        *hi = (int64_t)w[1];
    } else {
        int64_t x = t->byte_width == 8 ? ((const int64_t *)(const void *)v)[i]
                                       : ((const int32_t *)(const void *)v)[i];
        *lo = (uint64_t)x;
        *hi = x < 0 ? -1 : 0;
    }
}

/* Floor division (rounds toward negative infinity). */
static inline int64_t regfmt_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* The 36 characters of a uuid's canonical lowercase hyphenated text (no quotes). */
static inline char *regfmt_uuid_text(char *p, const uint8_t b[16])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *p++ = '-';
        *p++ = hex[b[i] >> 4];
        *p++ = hex[b[i] & 15];
    }
    return p;
}

/* Time or timestamp value of `digits` fraction digits as microseconds
 * (nanoseconds floored); 0, or -1 when it does not fit an int64. */
static inline int regfmt_to_micros(int64_t v, int digits, int64_t *out)
{
    switch (digits) {
    case 0: return __builtin_mul_overflow(v, (int64_t)1000000, out) ? -1 : 0;
    case 3: return __builtin_mul_overflow(v, (int64_t)1000, out) ? -1 : 0;
    case 6: *out = v; return 0;
    default: *out = regfmt_floor_div(v, 1000); return 0;
    }
}

/* Seconds or milliseconds as milliseconds (the Avro *-millis types). */
static inline int regfmt_to_millis(int64_t v, int digits, int64_t *out)
{
    if (digits == 0) return __builtin_mul_overflow(v, (int64_t)1000, out) ? -1 : 0;
    *out = v;
    return 0;
}

/* Days of a date32 or date64 value. */
static inline int64_t regfmt_days(const regfmt_type *t, int64_t v)
{
    return t->kind == REGFMT_K_DATE64 ? regfmt_floor_div(v, 86400000) : v;
}

/* Text of a decimal without quotes into p (room SHAPE_FLAT_SCALAR_MAX);
 * returns the end. Defined in flat_json.c. */
char *regfmt_decimal_text(char *p, int64_t hi, uint64_t lo, int32_t scale);

/* ---- flat JSON of one value ------------------------------------------------ */

/* Bytes regfmt_json_value may write for the value at (a, i). */
size_t regfmt_json_value_bound(const regfmt_type *t, const struct ArrowArray *a, int64_t i);
/* The JSON text of the value at physical index i of a (not null). */
char *regfmt_json_value(char *p, const regfmt_type *t, const struct ArrowArray *a, int64_t i);

/* ---- the codec's plan ------------------------------------------------------ */

typedef struct regfmt_column {
    regfmt_type type;
    int64_t child;       /* index among the struct's children */
    int nullable;        /* §4.6 rule */
    char *name;          /* owned copy */
    size_t name_len;
    char *json_key;      /* `"name":` (JSON-escaped); owned */
    size_t json_key_len;
    uint8_t tag[6];      /* protobuf: the field's key varint (number << 3 | wire type) */
    uint8_t tag_len;
    uint32_t field_number;
    unsigned __int128 decimal_limit; /* decimal: 10^precision, the first value too wide */
} regfmt_column;

/* Bytes one column's value may take in a binary payload, strings and binary
 * aside (their byte count is added per row): union branch or field key (≤ 6),
 * a varint or fixed value (≤ 10), a decimal (length + 16 bytes or ≤ 42 chars),
 * a uuid text (length + 36). */
#define REGFMT_BINARY_COLUMN_BOUND 64

struct shape_regfmt_codec {
    shape_regfmt format;
    char *document;
    regfmt_column *columns;
    size_t ncolumns;
    int64_t min_children; /* children a batch must have (last child used + 1) */
    size_t fixed_bound;   /* binary payload bound of a row, variable-length bytes aside */
    size_t *var_columns;  /* indexes of string / binary columns (their bytes vary) */
    size_t nvar;
};

/* The bound of a binary payload of row `logical` (the struct offset applied). */
static inline size_t regfmt_binary_bound(const shape_regfmt_codec *c, const struct ArrowArray *array,
                                         int64_t logical)
{
    size_t need = c->fixed_bound;
    for (size_t v = 0; v < c->nvar; v++) {
        const regfmt_column *col = &c->columns[c->var_columns[v]];
        int64_t i = 0;
        const struct ArrowArray *a = regfmt_value_at(&col->type, array->children[col->child], logical, &i);
        if (a) {
            size_t n;
            regfmt_read_bytes(&col->type, a, i, &n);
            need += n;
        }
    }
    return need;
}

/* An event the format cannot hold (Avro and Protobuf encoders): the row's
 * bytes written so far are dropped (out->len never moved), SHAPE_EINVAL with
 * the reason as the message. */
#define REGFMT_ENCODE_ERROR(out, err, ...) \
    ((out)->data[(out)->len] = '\0', shape_err_set((err), SHAPE_EINVAL, __VA_ARGS__))

static inline uint8_t *regfmt_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Avro int/long: zig-zag, then varint. */
static inline uint8_t *regfmt_put_zigzag(uint8_t *p, int64_t v)
{
    return regfmt_put_varint(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the Avro and Protobuf encoders copy floats as little-endian memory"
#endif

int regfmt_avro_encode(const shape_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                       shape_json_buf *out, shape_err *err);
int regfmt_protobuf_encode(const shape_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                           shape_json_buf *out, shape_err *err);
int regfmt_json_encode(const shape_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                       shape_json_buf *out, shape_err *err);

#endif

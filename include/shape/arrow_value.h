/* shape/arrow_value.h — what an Arrow column holds, resolved once from its
 * format string, and inline readers of its values.
 *
 * Why: the Arrow-row JSON printer (shape/arrow_json.h), the registry
 * formats' schema documents and their binary encoders (the kafka plugin)
 * all need the same answer to "what is this column": a kind, a unit, a
 * zone, a scale, whether it is read through a dictionary. Parsing the
 * format string once and reading values through one inline locator keeps
 * them in agreement and keeps the per-row loops free of string work.
 * How: shape_arrow_type_resolve turns a field (a dictionary unwrapped, the
 * arrow.uuid extension recognised) into a shape_arrow_type;
 * shape_arrow_value_at maps a row to the array and physical index holding
 * its value (through the dictionary when there is one) or says it is null;
 * the readers below take that physical index (the array's offset applied).
 *
 * Types resolved (format strings of the C Data Interface): null "n", bool
 * "b", ints "c s i l" and "C S I L", floats "e f g", strings "u U", binary
 * "z Z", fixed-size binary "w:N" (uuid when N is 16 and the field's
 * ARROW:extension:name is arrow.uuid), decimals "d:P,S[,32|64|128]" with
 * 1 <= P <= 38 and -20 <= S <= 38 (so their text stays within
 * SHAPE_ARROW_JSON_SCALAR_MAX), dates "tdD tdm", times "tts ttm ttu ttn",
 * timestamps "tss: tsm: tsu: tsn:" with or without a zone, and "+m" (a map,
 * read as the decoder builds it: utf8 keys, binary values); any of the
 * scalar kinds through a dictionary (integer indexes; no nested
 * dictionary). Everything else (lists, structs, unions, views, run-end
 * encoding, decimal256, durations, intervals) is not resolved.
 */
#ifndef SHAPE_ARROW_VALUE_H
#define SHAPE_ARROW_VALUE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shape/arrow.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum shape_arrow_kind {
    SHAPE_ARROW_NULL = 0,
    SHAPE_ARROW_BOOL,
    SHAPE_ARROW_INT8,
    SHAPE_ARROW_INT16,
    SHAPE_ARROW_INT32,
    SHAPE_ARROW_INT64,
    SHAPE_ARROW_UINT8,
    SHAPE_ARROW_UINT16,
    SHAPE_ARROW_UINT32,
    SHAPE_ARROW_UINT64,
    SHAPE_ARROW_FLOAT16,
    SHAPE_ARROW_FLOAT32,
    SHAPE_ARROW_FLOAT64,
    SHAPE_ARROW_STRING,       /* "u": int32 offsets */
    SHAPE_ARROW_LARGE_STRING, /* "U": int64 offsets */
    SHAPE_ARROW_BINARY,       /* "z" */
    SHAPE_ARROW_LARGE_BINARY, /* "Z" */
    SHAPE_ARROW_FIXED_BINARY, /* "w:N", byte_width N */
    SHAPE_ARROW_UUID,         /* "w:16" + ARROW:extension:name = arrow.uuid */
    SHAPE_ARROW_DECIMAL,      /* "d:P,S[,32|64|128]", byte_width 4, 8 or 16 */
    SHAPE_ARROW_DATE32,       /* days */
    SHAPE_ARROW_DATE64,       /* milliseconds */
    SHAPE_ARROW_TIME32,       /* s or ms of the day (unit_digits 0 or 3), int32 */
    SHAPE_ARROW_TIME64,       /* us or ns of the day (unit_digits 6 or 9), int64 */
    SHAPE_ARROW_TIMESTAMP,    /* int64 units since the epoch; zoned or not */
    SHAPE_ARROW_MAP           /* "+m": entries of a utf8 key and a binary value */
} shape_arrow_kind;

typedef struct shape_arrow_type {
    shape_arrow_kind kind;
    int8_t unit_digits;    /* time/timestamp: 0 (s), 3 (ms), 6 (us), 9 (ns) */
    int8_t zoned;          /* timestamp with a time zone (values are UTC) */
    int8_t index_width;    /* dictionary column: bytes of an index (1, 2, 4, 8); 0 = plain */
    int8_t index_unsigned; /* dictionary column: the index type is unsigned */
    int32_t byte_width;    /* fixed binary / uuid: bytes per value; decimal: 4, 8 or 16 */
    int32_t precision;     /* decimal */
    int32_t scale;         /* decimal */
} shape_arrow_type;

/* Resolve a field as above into *out. Returns 0, or -1 (nothing written)
 * for a type outside the list. A dictionary of maps is not resolved. */
int shape_arrow_type_resolve(const struct ArrowSchema *field, shape_arrow_type *out);
/* 1 when the field's ARROW:extension:name is arrow.uuid. */
int shape_arrow_is_uuid(const struct ArrowSchema *field);
/* A decimal format "d:P,S[,W]" → precision, scale and bit width (128 when
 * W is left out); 1, or 0 for a malformed string (any P, S, W: the range
 * is the resolver's business). */
int shape_arrow_parse_decimal(const char *format, long *precision, long *scale, long *bits);

/* ---- value access --------------------------------------------------------- */

/* The array holding row `row` (logical, the column's own offset not yet
 * applied) of column `col` and the physical index of the value in it, or
 * NULL when the value is null. Dictionary columns answer with the dictionary
 * array and the index read from the column. */
static inline const struct ArrowArray *shape_arrow_value_at(const shape_arrow_type *t,
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

/* Readers by physical index (offset applied). Integers, dates, times and
 * timestamps as int64 (uint64 as its bits). */
static inline int64_t shape_arrow_read_int(const shape_arrow_type *t, const struct ArrowArray *a, int64_t i)
{
    const void *v = a->buffers[1];
    switch (t->kind) {
    case SHAPE_ARROW_INT8: return ((const int8_t *)v)[i];
    case SHAPE_ARROW_INT16: return ((const int16_t *)v)[i];
    case SHAPE_ARROW_INT32:
    case SHAPE_ARROW_DATE32:
    case SHAPE_ARROW_TIME32: return ((const int32_t *)v)[i];
    case SHAPE_ARROW_UINT8: return ((const uint8_t *)v)[i];
    case SHAPE_ARROW_UINT16: return ((const uint16_t *)v)[i];
    case SHAPE_ARROW_UINT32: return ((const uint32_t *)v)[i];
    default: return ((const int64_t *)v)[i]; /* int64, uint64 (bits), date64, time64, timestamp */
    }
}

/* Half-precision bits to double (exact). */
static inline double shape_arrow_half_to_double(uint16_t h)
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
static inline double shape_arrow_read_float(const shape_arrow_type *t, const struct ArrowArray *a, int64_t i)
{
    const void *v = a->buffers[1];
    if (t->kind == SHAPE_ARROW_FLOAT64) return ((const double *)v)[i];
    if (t->kind == SHAPE_ARROW_FLOAT32) return ((const float *)v)[i];
    return shape_arrow_half_to_double(((const uint16_t *)v)[i]);
}

/* string / binary / fixed binary / uuid bytes. */
static inline const uint8_t *shape_arrow_read_bytes(const shape_arrow_type *t, const struct ArrowArray *a,
                                                    int64_t i, size_t *len)
{
    const uint8_t *data;
    switch (t->kind) {
    case SHAPE_ARROW_LARGE_STRING:
    case SHAPE_ARROW_LARGE_BINARY: {
        const int64_t *off = (const int64_t *)a->buffers[1];
        *len = (size_t)(off[i + 1] - off[i]);
        data = (const uint8_t *)a->buffers[2];
        return data ? data + off[i] : (const uint8_t *)"";
    }
    case SHAPE_ARROW_FIXED_BINARY:
    case SHAPE_ARROW_UUID:
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
static inline void shape_arrow_read_decimal(const shape_arrow_type *t, const struct ArrowArray *a, int64_t i,
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
static inline int64_t shape_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Days of a date32 or date64 value. */
static inline int64_t shape_arrow_days(const shape_arrow_type *t, int64_t v)
{
    return t->kind == SHAPE_ARROW_DATE64 ? shape_floor_div(v, 86400000) : v;
}

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* codec_internal.h — what flat_json.c, schema.c, avro.c and protobuf.c share:
 * the registry formats' gate on an Arrow column's type (the type itself and
 * the inline readers of its values are core's: shape/arrow_value.h).
 *
 * Why: the flat JSON renderer, the schema documents and the two binary
 * encoders all need the same answer to "what is this column": a kind, a
 * unit, a zone, a scale, whether it is read through a dictionary. Parsing
 * the Arrow format string once (shape_kafka_regfmt_type_resolve) and reading values
 * through one inline locator keeps the four in agreement and keeps the
 * per-row loops free of string work.
 * How: shape_kafka_regfmt_type_resolve resolves a field with shape_arrow_type_resolve
 * and refuses, in the registry's words, what the formats cannot carry (maps,
 * and every type core does not resolve); shape_arrow_value_at maps a row to
 * the array and physical index holding its value. The codec (schema.c)
 * keeps one shape_kafka_regfmt_column per column: the plan the encoders walk.
 */
#ifndef SHAPE_KAFKA_REGISTRY_CODEC_INTERNAL_H
#define SHAPE_KAFKA_REGISTRY_CODEC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "registry/formats.h"
#include "shape/arrow.h"
#include "shape/arrow_value.h"
#include "shape/error.h"
#include "shape/json.h"
#include "shape/json_write.h"

/* Resolve the field of column `name` (for messages). A type outside the
 * mapping table → SHAPE_EINVAL "cannot map column '{c}' of type {arrow type}
 * to a registry format (lists, structs and maps are not supported); use
 * --event-format json". Refused on purpose beyond the table: decimal256 and
 * decimals whose scale is outside [-20, 38] (their text would not fit
 * SHAPE_JSON_SCALAR_MAX), string and binary views, run-end encoding, and
 * maps (core prints them; the binary formats cannot carry them). */
int shape_kafka_regfmt_type_resolve(const struct ArrowSchema *field, shape_arrow_type *out, shape_err *err);

/* A readable Arrow type name in pyarrow's words ("int64", "timestamp[us,
 * tz=UTC]", "list<item: string>", "decimal128(12, 2)") into buf (always
 * NUL-terminated when size > 0); returns buf. Dictionary columns read
 * "dictionary<values=string, indices=int32>". */
char *shape_kafka_regfmt_type_text(const struct ArrowSchema *field, char *buf, size_t size);

/* 1 when the field is nullable for the registry formats (§4.6): floats and
 * null-typed columns always, _shape_table and _shape_seq never, otherwise
 * the Arrow field's ARROW_FLAG_NULLABLE. */
int shape_kafka_regfmt_field_nullable(const char *name, const shape_arrow_type *t, int64_t arrow_flags);

/* ---- value access: shape/arrow_value.h; conversions of the binary formats -- */

/* Time or timestamp value of `digits` fraction digits as microseconds
 * (nanoseconds floored); 0, or -1 when it does not fit an int64. */
static inline int shape_kafka_regfmt_to_micros(int64_t v, int digits, int64_t *out)
{
    switch (digits) {
    case 0: return __builtin_mul_overflow(v, (int64_t)1000000, out) ? -1 : 0;
    case 3: return __builtin_mul_overflow(v, (int64_t)1000, out) ? -1 : 0;
    case 6: *out = v; return 0;
    default: *out = shape_floor_div(v, 1000); return 0;
    }
}

/* Seconds or milliseconds as milliseconds (the Avro *-millis types). */
static inline int shape_kafka_regfmt_to_millis(int64_t v, int digits, int64_t *out)
{
    if (digits == 0) return __builtin_mul_overflow(v, (int64_t)1000, out) ? -1 : 0;
    *out = v;
    return 0;
}

/* ---- the codec's plan ------------------------------------------------------ */

typedef struct shape_kafka_regfmt_column {
    shape_arrow_type type;
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
} shape_kafka_regfmt_column;

/* Bytes one column's value may take in a binary payload, strings and binary
 * aside (their byte count is added per row): union branch or field key (≤ 6),
 * a varint or fixed value (≤ 10), a decimal (length + 16 bytes or ≤ 42 chars),
 * a uuid text (length + 36). */
#define SHAPE_KAFKA_REGFMT_BINARY_COLUMN_BOUND 64

struct shape_kafka_regfmt_codec {
    shape_kafka_regfmt format;
    char *document;
    shape_kafka_regfmt_column *columns;
    size_t ncolumns;
    int64_t min_children; /* children a batch must have (last child used + 1) */
    size_t fixed_bound;   /* binary payload bound of a row, variable-length bytes aside */
    size_t *var_columns;  /* indexes of string / binary columns (their bytes vary) */
    size_t nvar;
};

/* The bound of a binary payload of row `logical` (the struct offset applied). */
static inline size_t shape_kafka_regfmt_binary_bound(const shape_kafka_regfmt_codec *c, const struct ArrowArray *array,
                                         int64_t logical)
{
    size_t need = c->fixed_bound;
    for (size_t v = 0; v < c->nvar; v++) {
        const shape_kafka_regfmt_column *col = &c->columns[c->var_columns[v]];
        int64_t i = 0;
        const struct ArrowArray *a = shape_arrow_value_at(&col->type, array->children[col->child], logical, &i);
        if (a) {
            size_t n;
            shape_arrow_read_bytes(&col->type, a, i, &n);
            need += n;
        }
    }
    return need;
}

/* An event the format cannot hold (Avro and Protobuf encoders): the row's
 * bytes written so far are dropped (out->len never moved), SHAPE_EINVAL with
 * the reason as the message. */
#define SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, ...) \
    ((out)->data[(out)->len] = '\0', shape_err_set((err), SHAPE_EINVAL, __VA_ARGS__))

static inline uint8_t *shape_kafka_regfmt_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Avro int/long: zig-zag, then varint. */
static inline uint8_t *shape_kafka_regfmt_put_zigzag(uint8_t *p, int64_t v)
{
    return shape_kafka_regfmt_put_varint(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the Avro and Protobuf encoders copy floats as little-endian memory"
#endif

int shape_kafka_regfmt_avro_encode(const shape_kafka_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                       shape_json_buf *out, shape_err *err);
int shape_kafka_regfmt_protobuf_encode(const shape_kafka_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                           shape_json_buf *out, shape_err *err);
int shape_kafka_regfmt_json_encode(const shape_kafka_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                       shape_json_buf *out, shape_err *err);

#endif

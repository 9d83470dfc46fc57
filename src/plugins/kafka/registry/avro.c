/* avro.c — the Avro binary payload of one row (schemaless: the registered
 * record schema, fields in column order), spec-kafka.md §4.5–§4.6.
 *
 * Why: `--event-format avro` sends millions of events; the encoder is on
 * the hot path, so it does no lookups, no allocation and no string work per
 * row beyond copying the row's own bytes.
 * How: one pass sums the row's variable-length bytes onto the codec's fixed
 * bound and reserves once; a second pass writes through a raw pointer,
 * column by column, following the plan made by schema.c. Encoding: int and
 * long as zig-zag varints, float/double as little-endian IEEE, boolean one
 * byte, string/bytes as a zig-zag length and the bytes, a nullable field as
 * union branch 0 (null, byte 0x00) or 1 (byte 0x02) then the value; a
 * null-typed column writes nothing. Logical types: date = days (date64
 * floored from ms), time-millis from s/ms, time-micros from us/ns, the
 * timestamp types from their unit (s → ×1000 for *-millis, ns → µs) — ns
 * are floored (toward negative infinity), so an instant before 1970 stays
 * the instant Python's datetime would give; decimal = two's-complement
 * big-endian bytes of the unscaled value in the fewest bytes that hold it
 * with its sign (0 → 00, -128 → 80, 128 → 00 80), after a check that its
 * digits fit the precision; uuid as its canonical text. Float columns are
 * always unions: a non-finite value goes as null. The row is committed to
 * `out` only at the end, so an encode error leaves out->len as it was.
 * Many rows of one batch (the emitter's case) go through a cursor: set once
 * per batch, it keeps per column its buffers, offset, and a step for the
 * plain types the emitter's rows have (int64, microsecond or nanosecond
 * times, utf8/binary, float64, bool), so a row is a loop of loads and
 * stores with no type dispatch through the Arrow structs; any other column
 * (dictionaries, decimals, dates, ...) takes put_column, the per-row path
 * shape_kafka_regfmt_encode uses for every column. Both write the same bytes
 * (tests/unit/test_regfmt_encode.c compares them). The cursor's reserve
 * counts the string bytes of the whole batch rather than the row's (one
 * subtraction per batch), so the caller's buffer keeps that much slack.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "registry/codec_internal.h"

static uint8_t *put_decimal(uint8_t *p, const shape_kafka_regfmt_column *col, const struct ArrowArray *a,
                            int64_t i, int *too_wide)
{
    int64_t hi;
    uint64_t lo;
    shape_arrow_read_decimal(&col->type, a, i, &hi, &lo);
    unsigned __int128 v = ((unsigned __int128)(uint64_t)hi << 64) | lo;
    unsigned __int128 magnitude = hi < 0 ? ~v + 1 : v;
    if (magnitude >= col->decimal_limit) {
        *too_wide = 1;
        return p;
    }
    /* minimal two's complement: the bits of v (or of ~v when negative) plus a sign bit */
    unsigned __int128 significant = hi < 0 ? ~v : v;
    uint64_t shi = (uint64_t)(significant >> 64), slo = (uint64_t)significant;
    int bits = shi ? 128 - __builtin_clzll(shi) : slo ? 64 - __builtin_clzll(slo) : 0;
    int n = (bits + 8) / 8;
    p = shape_kafka_regfmt_put_zigzag(p, n);
    for (int k = n - 1; k >= 0; k--) *p++ = (uint8_t)(v >> (8 * k));
    return p;
}

/* Avro bytes/string: the zig-zag length, then the bytes (short ones by
 * word copies, shape_copy_bytes_). */
static inline uint8_t *put_bytes(uint8_t *p, const uint8_t *bytes, size_t n)
{
    p = shape_kafka_regfmt_put_zigzag(p, (int64_t)n);
    shape_copy_bytes_(p, bytes, n);
    return p + n;
}

/* One column's value of row `logical` (the struct offset applied) at p: the
 * union branch when nullable, then the value. NULL after an encode error
 * (err set, out->len unchanged). Always inlined: as a call per column it
 * costs shape_kafka_regfmt_encode a fifth more instructions. */
static inline __attribute__((always_inline)) uint8_t *put_column(uint8_t *p, const shape_kafka_regfmt_column *col, const struct ArrowArray *array,
                                  int64_t logical, shape_json_buf *out, shape_err *err)
{
    const shape_arrow_type *t = &col->type;
    int64_t i = 0;
    const struct ArrowArray *a = shape_arrow_value_at(t, array->children[col->child], logical, &i);
    if (!a) {
        if (!col->nullable) {
            SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, "column '%s' is null but required", col->name);
            return NULL;
        }
        *p++ = 0x00;
        return p;
    }
    if (col->nullable) *p++ = 0x02;
    int64_t v, days;
    size_t n;
    const uint8_t *bytes;
    switch (t->kind) {
    case SHAPE_ARROW_BOOL: *p++ = (uint8_t)shape_bit_get((const uint8_t *)a->buffers[1], i); break;
    case SHAPE_ARROW_UINT64:
        v = shape_arrow_read_int(t, a, i);
        if (v < 0) {
            SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, "column '%s' does not fit a long", col->name);
            return NULL;
        }
        p = shape_kafka_regfmt_put_zigzag(p, v);
        break;
    case SHAPE_ARROW_FLOAT32: {
        float f = ((const float *)a->buffers[1])[i];
        if (!isfinite(f)) p[-1] = 0x00; /* the null branch */
        else {
            memcpy(p, &f, 4);
            p += 4;
        }
        break;
    }
    case SHAPE_ARROW_FLOAT16:
    case SHAPE_ARROW_FLOAT64: {
        double d = shape_arrow_read_float(t, a, i);
        if (!isfinite(d)) p[-1] = 0x00;
        else {
            memcpy(p, &d, 8);
            p += 8;
        }
        break;
    }
    case SHAPE_ARROW_STRING:
    case SHAPE_ARROW_LARGE_STRING:
    case SHAPE_ARROW_BINARY:
    case SHAPE_ARROW_LARGE_BINARY:
    case SHAPE_ARROW_FIXED_BINARY:
        bytes = shape_arrow_read_bytes(t, a, i, &n);
        p = put_bytes(p, bytes, n);
        break;
    case SHAPE_ARROW_UUID:
        *p++ = 72; /* zig-zag of 36 */
        p = (uint8_t *)shape_uuid_text((char *)p, shape_arrow_read_bytes(t, a, i, &n));
        break;
    case SHAPE_ARROW_DECIMAL: {
        int too_wide = 0;
        p = put_decimal(p, col, a, i, &too_wide);
        if (too_wide) {
            SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, "column '%s' exceeds precision %d", col->name, (int)t->precision);
            return NULL;
        }
        break;
    }
    case SHAPE_ARROW_DATE32:
    case SHAPE_ARROW_DATE64:
        days = shape_arrow_days(t, shape_arrow_read_int(t, a, i));
        if (days < INT32_MIN || days > INT32_MAX) {
            SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, "column '%s' does not fit an int", col->name);
            return NULL;
        }
        p = shape_kafka_regfmt_put_zigzag(p, days);
        break;
    case SHAPE_ARROW_TIME32:
    case SHAPE_ARROW_TIMESTAMP:
        v = shape_arrow_read_int(t, a, i);
        if (t->unit_digits <= 3) {
            if (shape_kafka_regfmt_to_millis(v, t->unit_digits, &v) != 0) {
                SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, "column '%s' does not fit a long", col->name);
                return NULL;
            }
        } else {
            shape_kafka_regfmt_to_micros(v, t->unit_digits, &v); /* us or ns: cannot overflow */
        }
        p = shape_kafka_regfmt_put_zigzag(p, v);
        break;
    case SHAPE_ARROW_TIME64:
        shape_kafka_regfmt_to_micros(shape_arrow_read_int(t, a, i), t->unit_digits, &v);
        p = shape_kafka_regfmt_put_zigzag(p, v);
        break;
    default: p = shape_kafka_regfmt_put_zigzag(p, shape_arrow_read_int(t, a, i)); break; /* the other integers */
    }
    return p;
}

/* put_column as a call, for the cursor's columns without a step of their
 * own: inlined there, it would slow the loop of the common steps. */
static __attribute__((noinline)) uint8_t *put_column_call(uint8_t *p, const shape_kafka_regfmt_column *col,
                                                          const struct ArrowArray *array, int64_t logical,
                                                          shape_json_buf *out, shape_err *err)
{
    return put_column(p, col, array, logical, out, err);
}

int shape_kafka_regfmt_avro_encode(const shape_kafka_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                       shape_json_buf *out, shape_err *err)
{
    int64_t logical = array->offset + row;
    if (shape_json_buf_reserve(out, shape_kafka_regfmt_binary_bound(c, array, logical)) != 0)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory encoding an Avro payload");
    uint8_t *p = (uint8_t *)out->data + out->len;
    for (size_t k = 0; k < c->ncolumns; k++) {
        if (c->columns[k].type.kind == SHAPE_ARROW_NULL) continue;
        p = put_column(p, &c->columns[k], array, logical, out, err);
        if (!p) return SHAPE_EINVAL;
    }
    out->len = (size_t)((char *)p - out->data);
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

/* ---- many rows of one batch ------------------------------------------------ */

/* The step of a column whose batch array is plain (no dictionary) and of a
 * type the emitter's rows use; anything else is STEP_COLUMN (put_column). */
typedef enum avro_step {
    STEP_COLUMN = 0,
    STEP_LONG,       /* int64, and timestamp/time64 in microseconds: the value */
    STEP_MICROS_NS,  /* timestamp/time64 in nanoseconds: floored to microseconds */
    STEP_STRING,     /* utf8/binary, int32 offsets */
    STEP_DOUBLE,     /* float64 (always nullable: non-finite goes as null) */
    STEP_BOOL
} avro_step;

typedef struct avro_lane {
    const shape_kafka_regfmt_column *col;
    avro_step step;
    int nullable;
    int64_t offset;            /* the child's offset */
    const uint8_t *validity;   /* the child's bitmap, or NULL */
    const void *values;        /* buffers[1]: values or offsets */
    const uint8_t *data;       /* buffers[2] of a string */
} avro_lane;

struct shape_kafka_regfmt_cursor {
    const shape_kafka_regfmt_codec *codec;
    const struct ArrowArray *array;
    int usable;                /* the array has the codec's children */
    avro_lane *lanes;          /* one per column that writes something */
    size_t nlanes;
    size_t *var_lanes;         /* lanes of string/binary columns that take put_column */
    size_t nvar;
    size_t batch_bytes;        /* the bytes of the STEP_STRING lanes over all rows of the batch */
};

int shape_kafka_regfmt_cursor_new(const shape_kafka_regfmt_codec *c, shape_kafka_regfmt_cursor **out, shape_err *err)
{
    *out = NULL;
    shape_kafka_regfmt_cursor *cu = calloc(1, sizeof *cu);
    if (cu) {
        cu->lanes = calloc(c->ncolumns + 1, sizeof *cu->lanes);
        cu->var_lanes = calloc(c->ncolumns + 1, sizeof *cu->var_lanes);
    }
    if (!cu || !cu->lanes || !cu->var_lanes) {
        shape_kafka_regfmt_cursor_free(cu);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    cu->codec = c;
    *out = cu;
    return SHAPE_OK;
}

void shape_kafka_regfmt_cursor_free(shape_kafka_regfmt_cursor *cu)
{
    if (!cu) return;
    free(cu->lanes);
    free(cu->var_lanes);
    free(cu);
}

/* The step for column col whose batch array is a. */
static avro_step lane_step(const shape_kafka_regfmt_column *col, const struct ArrowArray *a)
{
    const shape_arrow_type *t = &col->type;
    if (t->index_width || a->n_buffers < 2 || !a->buffers[1]) return STEP_COLUMN;
    switch (t->kind) {
    case SHAPE_ARROW_INT64: return STEP_LONG;
    case SHAPE_ARROW_TIMESTAMP:
    case SHAPE_ARROW_TIME64:
        return t->unit_digits == 6 ? STEP_LONG : t->unit_digits == 9 ? STEP_MICROS_NS : STEP_COLUMN;
    case SHAPE_ARROW_STRING:
    case SHAPE_ARROW_BINARY: return a->n_buffers >= 3 && a->buffers[2] ? STEP_STRING : STEP_COLUMN;
    case SHAPE_ARROW_FLOAT64: return STEP_DOUBLE;
    case SHAPE_ARROW_BOOL: return STEP_BOOL;
    default: return STEP_COLUMN;
    }
}

void shape_kafka_regfmt_cursor_set(shape_kafka_regfmt_cursor *cu, const struct ArrowArray *array)
{
    const shape_kafka_regfmt_codec *c = cu->codec;
    cu->array = array;
    cu->nlanes = cu->nvar = cu->batch_bytes = 0;
    cu->usable = c->format == SHAPE_KAFKA_REGFMT_AVRO && array->n_children >= c->min_children;
    if (!cu->usable) return;
    for (size_t k = 0; k < c->ncolumns; k++) {
        const shape_kafka_regfmt_column *col = &c->columns[k];
        if (col->type.kind == SHAPE_ARROW_NULL) continue;
        const struct ArrowArray *a = array->children[col->child];
        avro_lane *l = &cu->lanes[cu->nlanes];
        l->col = col;
        l->step = lane_step(col, a);
        l->nullable = col->nullable;
        l->offset = a->offset;
        l->validity = a->n_buffers > 0 ? (const uint8_t *)a->buffers[0] : NULL;
        l->values = a->n_buffers > 1 ? a->buffers[1] : NULL;
        l->data = a->n_buffers > 2 ? (const uint8_t *)a->buffers[2] : NULL;
        if (l->step == STEP_STRING) {
            const int32_t *off = (const int32_t *)l->values + l->offset + array->offset;
            cu->batch_bytes += (size_t)(off[array->length] - off[0]);
        } else if (col->type.kind == SHAPE_ARROW_STRING || col->type.kind == SHAPE_ARROW_LARGE_STRING ||
                   col->type.kind == SHAPE_ARROW_BINARY || col->type.kind == SHAPE_ARROW_LARGE_BINARY) {
            cu->var_lanes[cu->nvar++] = cu->nlanes;
        }
        cu->nlanes++;
    }
}

/* A bound of the row's payload: shape_kafka_regfmt_binary_bound, except that the plain
 * string lanes count the bytes of the whole batch (one subtraction per batch
 * instead of two loads per lane and row; the arena holds that much slack). */
static size_t cursor_bound(const shape_kafka_regfmt_cursor *cu, int64_t logical)
{
    size_t need = cu->codec->fixed_bound + cu->batch_bytes;
    for (size_t v = 0; v < cu->nvar; v++) {
        const shape_kafka_regfmt_column *col = cu->lanes[cu->var_lanes[v]].col;
        int64_t i = 0;
        const struct ArrowArray *a = shape_arrow_value_at(&col->type, cu->array->children[col->child], logical, &i);
        if (a) {
            size_t n;
            shape_arrow_read_bytes(&col->type, a, i, &n);
            need += n;
        }
    }
    return need;
}

int shape_kafka_regfmt_cursor_encode(const shape_kafka_regfmt_cursor *cu, int64_t row, shape_json_buf *out, shape_err *err)
{
    const struct ArrowArray *array = cu->array;
    if (!cu->usable || SHAPE_UNLIKELY(row < 0 || row >= array->length))
        return shape_kafka_regfmt_encode(cu->codec, array, row, out, err);
    int64_t logical = array->offset + row;
    size_t need = cursor_bound(cu, logical);
    if (need >= out->cap - out->len && shape_json_buf_reserve(out, need) != 0) /* (cap >= len always) */
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory encoding an Avro payload");
    uint8_t *p = (uint8_t *)out->data + out->len;
    for (size_t k = 0; k < cu->nlanes; k++) {
        const avro_lane *l = &cu->lanes[k];
        if (l->step == STEP_COLUMN) {
            p = put_column_call(p, l->col, array, logical, out, err);
            if (!p) return SHAPE_EINVAL;
            continue;
        }
        int64_t i = l->offset + logical;
        if (l->validity && !shape_bit_get(l->validity, i)) {
            if (!l->nullable)
                return SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, "column '%s' is null but required", l->col->name);
            *p++ = 0x00;
            continue;
        }
        if (l->nullable) *p++ = 0x02;
        switch (l->step) {
        case STEP_LONG: p = shape_kafka_regfmt_put_zigzag(p, ((const int64_t *)l->values)[i]); break;
        case STEP_MICROS_NS:
            p = shape_kafka_regfmt_put_zigzag(p, shape_floor_div(((const int64_t *)l->values)[i], 1000));
            break;
        case STEP_STRING: {
            const int32_t *off = (const int32_t *)l->values + i;
            p = put_bytes(p, l->data + off[0], (size_t)(off[1] - off[0]));
            break;
        }
        case STEP_DOUBLE: {
            double d = ((const double *)l->values)[i];
            if (!isfinite(d)) p[-1] = 0x00; /* the null branch */
            else {
                memcpy(p, &d, 8);
                p += 8;
            }
            break;
        }
        default: *p++ = (uint8_t)shape_bit_get((const uint8_t *)l->values, i); break; /* STEP_BOOL */
        }
    }
    out->len = (size_t)((char *)p - out->data);
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

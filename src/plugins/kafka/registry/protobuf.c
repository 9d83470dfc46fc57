/* protobuf.c — the Protobuf binary payload of one row for the proto3
 * message schema.c writes (field n = the n-th column), spec-kafka.md §4.5–§4.6.
 *
 * Why: `--event-format protobuf` is a hot path like Avro: the encoder reads
 * each value once and writes it with precomputed field keys, no allocation.
 * How: reserve the row's bound once (codec fixed bound + the row's string and
 * binary bytes), then write through a raw pointer. Each field is its key
 * varint (number << 3 | wire type, computed when the codec was made) and its
 * value: varint for bool, int32 (sign-extended to 64 bits, so a negative
 * value takes ten bytes), int64, uint32, uint64; 32-bit little-endian for
 * float; 64-bit for double; length-delimited for string and bytes. proto3
 * presence rules: a field without a label is not written when its value is
 * the default (0, false, "", empty bytes) and a null in it is an encode
 * error; an `optional` field is written whenever it has a value (0
 * included) and left out when null. Float columns are optional and a
 * non-finite value is left out. Times and timestamps go as int64
 * microseconds (ns floored), dates as int32 days, decimals as their
 * canonical text, uuids as text. The row is committed to `out` only at the
 * end, so an encode error leaves out->len as it was.
 */
#include <math.h>
#include <string.h>

#include "registry/codec_internal.h"

static inline uint8_t *put_tag(uint8_t *p, const shape_kafka_regfmt_column *col)
{
    for (uint8_t k = 0; k < col->tag_len; k++) *p++ = col->tag[k];
    return p;
}

/* An integer field: skipped when it is the default of a field without a label. */
static inline uint8_t *put_int_field(uint8_t *p, const shape_kafka_regfmt_column *col, uint64_t v)
{
    if (v == 0 && !col->nullable) return p;
    p = put_tag(p, col);
    return shape_kafka_regfmt_put_varint(p, v);
}

static inline uint8_t *put_bytes_field(uint8_t *p, const shape_kafka_regfmt_column *col, const uint8_t *bytes,
                                       size_t n)
{
    if (n == 0 && !col->nullable) return p;
    p = put_tag(p, col);
    p = shape_kafka_regfmt_put_varint(p, n);
    memcpy(p, bytes, n);
    return p + n;
}

int shape_kafka_regfmt_protobuf_encode(const shape_kafka_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                           shape_json_buf *out, shape_err *err)
{
    int64_t logical = array->offset + row;
    if (shape_json_buf_reserve(out, shape_kafka_regfmt_binary_bound(c, array, logical)) != 0)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory encoding a Protobuf payload");
    uint8_t *p = (uint8_t *)out->data + out->len;
    for (size_t k = 0; k < c->ncolumns; k++) {
        const shape_kafka_regfmt_column *col = &c->columns[k];
        const shape_arrow_type *t = &col->type;
        int64_t i = 0;
        const struct ArrowArray *a = shape_arrow_value_at(t, array->children[col->child], logical, &i);
        if (!a) {
            if (!col->nullable) return SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, "column '%s' is null but required", col->name);
            continue;
        }
        int64_t v;
        size_t n;
        const uint8_t *bytes;
        switch (t->kind) {
        case SHAPE_ARROW_BOOL:
            p = put_int_field(p, col, (uint64_t)shape_bit_get((const uint8_t *)a->buffers[1], i));
            break;
        case SHAPE_ARROW_FLOAT32: {
            float f = ((const float *)a->buffers[1])[i];
            if (!isfinite(f)) break;
            p = put_tag(p, col);
            memcpy(p, &f, 4);
            p += 4;
            break;
        }
        case SHAPE_ARROW_FLOAT16:
        case SHAPE_ARROW_FLOAT64: {
            double d = shape_arrow_read_float(t, a, i);
            if (!isfinite(d)) break;
            p = put_tag(p, col);
            memcpy(p, &d, 8);
            p += 8;
            break;
        }
        case SHAPE_ARROW_STRING:
        case SHAPE_ARROW_LARGE_STRING:
        case SHAPE_ARROW_BINARY:
        case SHAPE_ARROW_LARGE_BINARY:
        case SHAPE_ARROW_FIXED_BINARY:
            bytes = shape_arrow_read_bytes(t, a, i, &n);
            p = put_bytes_field(p, col, bytes, n);
            break;
        case SHAPE_ARROW_UUID:
            p = put_tag(p, col);
            *p++ = 36;
            p = (uint8_t *)shape_uuid_text((char *)p, shape_arrow_read_bytes(t, a, i, &n));
            break;
        case SHAPE_ARROW_DECIMAL: {
            int64_t hi;
            uint64_t lo;
            shape_arrow_read_decimal(t, a, i, &hi, &lo);
            p = put_tag(p, col);
            /* the text is at most 62 bytes, so its length is one varint byte */
            uint8_t *end = (uint8_t *)shape_decimal_text((char *)p + 1, hi, lo, t->scale);
            *p = (uint8_t)(end - p - 1);
            p = end;
            break;
        }
        case SHAPE_ARROW_DATE32:
        case SHAPE_ARROW_DATE64:
            v = shape_arrow_days(t, shape_arrow_read_int(t, a, i));
            if (v < INT32_MIN || v > INT32_MAX)
                return SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, "column '%s' does not fit an int32", col->name);
            p = put_int_field(p, col, (uint64_t)v);
            break;
        case SHAPE_ARROW_TIME32:
        case SHAPE_ARROW_TIME64:
        case SHAPE_ARROW_TIMESTAMP:
            if (shape_kafka_regfmt_to_micros(shape_arrow_read_int(t, a, i), t->unit_digits, &v) != 0)
                return SHAPE_KAFKA_REGFMT_ENCODE_ERROR(out, err, "column '%s' does not fit an int64 of microseconds",
                                    col->name);
            p = put_int_field(p, col, (uint64_t)v);
            break;
        default: p = put_int_field(p, col, (uint64_t)shape_arrow_read_int(t, a, i)); break;
        }
    }
    out->len = (size_t)((char *)p - out->data);
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

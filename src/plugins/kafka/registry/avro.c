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
 */
#include <math.h>
#include <string.h>

#include "registry/codec_internal.h"

static uint8_t *put_decimal(uint8_t *p, const regfmt_column *col, const struct ArrowArray *a,
                            int64_t i, int *too_wide)
{
    int64_t hi;
    uint64_t lo;
    regfmt_read_decimal(&col->type, a, i, &hi, &lo);
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
    p = regfmt_put_zigzag(p, n);
    for (int k = n - 1; k >= 0; k--) *p++ = (uint8_t)(v >> (8 * k));
    return p;
}

static uint8_t *put_bytes(uint8_t *p, const uint8_t *bytes, size_t n)
{
    p = regfmt_put_zigzag(p, (int64_t)n);
    memcpy(p, bytes, n);
    return p + n;
}

int regfmt_avro_encode(const shape_regfmt_codec *c, const struct ArrowArray *array, int64_t row,
                       shape_json_buf *out, shape_err *err)
{
    int64_t logical = array->offset + row;
    if (shape_json_buf_reserve(out, regfmt_binary_bound(c, array, logical)) != 0)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory encoding an Avro payload");
    uint8_t *p = (uint8_t *)out->data + out->len;
    for (size_t k = 0; k < c->ncolumns; k++) {
        const regfmt_column *col = &c->columns[k];
        const regfmt_type *t = &col->type;
        if (t->kind == REGFMT_K_NULL) continue;
        int64_t i = 0;
        const struct ArrowArray *a = regfmt_value_at(t, array->children[col->child], logical, &i);
        if (!a) {
            if (!col->nullable) return REGFMT_ENCODE_ERROR(out, err, "column '%s' is null but required", col->name);
            *p++ = 0x00;
            continue;
        }
        if (col->nullable) *p++ = 0x02;
        int64_t v, days;
        size_t n;
        const uint8_t *bytes;
        switch (t->kind) {
        case REGFMT_K_BOOL: *p++ = (uint8_t)shape_bit_get((const uint8_t *)a->buffers[1], i); break;
        case REGFMT_K_UINT64:
            v = regfmt_read_int(t, a, i);
            if (v < 0) return REGFMT_ENCODE_ERROR(out, err, "column '%s' does not fit a long", col->name);
            p = regfmt_put_zigzag(p, v);
            break;
        case REGFMT_K_FLOAT32: {
            float f = ((const float *)a->buffers[1])[i];
            if (!isfinite(f)) p[-1] = 0x00; /* the null branch */
            else {
                memcpy(p, &f, 4);
                p += 4;
            }
            break;
        }
        case REGFMT_K_FLOAT16:
        case REGFMT_K_FLOAT64: {
            double d = regfmt_read_float(t, a, i);
            if (!isfinite(d)) p[-1] = 0x00;
            else {
                memcpy(p, &d, 8);
                p += 8;
            }
            break;
        }
        case REGFMT_K_STRING:
        case REGFMT_K_LARGE_STRING:
        case REGFMT_K_BINARY:
        case REGFMT_K_LARGE_BINARY:
        case REGFMT_K_FIXED_BINARY:
            bytes = regfmt_read_bytes(t, a, i, &n);
            p = put_bytes(p, bytes, n);
            break;
        case REGFMT_K_UUID:
            *p++ = 72; /* zig-zag of 36 */
            p = (uint8_t *)regfmt_uuid_text((char *)p, regfmt_read_bytes(t, a, i, &n));
            break;
        case REGFMT_K_DECIMAL: {
            int too_wide = 0;
            p = put_decimal(p, col, a, i, &too_wide);
            if (too_wide)
                return REGFMT_ENCODE_ERROR(out, err, "column '%s' exceeds precision %d", col->name,
                                           (int)t->precision);
            break;
        }
        case REGFMT_K_DATE32:
        case REGFMT_K_DATE64:
            days = regfmt_days(t, regfmt_read_int(t, a, i));
            if (days < INT32_MIN || days > INT32_MAX)
                return REGFMT_ENCODE_ERROR(out, err, "column '%s' does not fit an int", col->name);
            p = regfmt_put_zigzag(p, days);
            break;
        case REGFMT_K_TIME32:
        case REGFMT_K_TIMESTAMP:
            v = regfmt_read_int(t, a, i);
            if (t->unit_digits <= 3) {
                if (regfmt_to_millis(v, t->unit_digits, &v) != 0)
                    return REGFMT_ENCODE_ERROR(out, err, "column '%s' does not fit a long", col->name);
            } else {
                regfmt_to_micros(v, t->unit_digits, &v); /* us or ns: cannot overflow */
            }
            p = regfmt_put_zigzag(p, v);
            break;
        case REGFMT_K_TIME64:
            regfmt_to_micros(regfmt_read_int(t, a, i), t->unit_digits, &v);
            p = regfmt_put_zigzag(p, v);
            break;
        default: p = regfmt_put_zigzag(p, regfmt_read_int(t, a, i)); break; /* the other integers */
        }
    }
    out->len = (size_t)((char *)p - out->data);
    out->data[out->len] = '\0';
    return SHAPE_OK;
}

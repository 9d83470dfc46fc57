/* arrow_value.c — an Arrow field's format string read once into a
 * shape_arrow_type (shape/arrow_value.h).
 *
 * Why: the JSON row printer and the registry formats' encoders must agree
 * on what every column is; this is the one place that reads format strings
 * for them. How: one-character formats by table; "w:N", "d:P,S[,W]" and the
 * temporal "t..." formats parsed by hand; a dictionary field resolves its
 * index format (signed or unsigned integers) and then its value field;
 * the uuid extension is recognised by its field metadata. Anything not
 * listed in the header answers -1, and the caller words the refusal.
 */
#include "shape/arrow_value.h"

#include <stdlib.h>
#include <string.h>

int shape_arrow_is_uuid(const struct ArrowSchema *field)
{
    const char *value;
    int32_t len;
    if (!field->metadata ||
        !shape_arrow_metadata_find(field->metadata, "ARROW:extension:name", &value, &len))
        return 0;
    return len == 10 && memcmp(value, "arrow.uuid", 10) == 0;
}

/* "w:N" → N (> 0), else -1. */
static int32_t fixed_width(const char *f)
{
    if (f[0] != 'w' || f[1] != ':') return -1;
    char *end;
    long n = strtol(f + 2, &end, 10);
    return (*end == '\0' && n > 0 && n <= INT32_MAX) ? (int32_t)n : -1;
}

int shape_arrow_parse_decimal(const char *f, long *precision, long *scale, long *bits)
{
    if (f[0] != 'd' || f[1] != ':') return 0;
    char *end;
    *precision = strtol(f + 2, &end, 10);
    if (*end != ',') return 0;
    *scale = strtol(end + 1, &end, 10);
    *bits = 128;
    if (*end == ',') *bits = strtol(end + 1, &end, 10);
    return *end == '\0';
}

/* Time units of "s" / "m" / "u" / "n" as fraction digits, -1 otherwise. */
static int unit_digits(char u)
{
    switch (u) {
    case 's': return 0;
    case 'm': return 3;
    case 'u': return 6;
    case 'n': return 9;
    default: return -1;
    }
}

static int resolve_value_format(const struct ArrowSchema *field, shape_arrow_type *t)
{
    const char *f = field->format;
    if (!f) return -1;
    if (f[0] && !f[1]) {
        static const char singles[] = "nbcsilCSILefguUzZ";
        static const shape_arrow_kind kinds[] = {
            SHAPE_ARROW_NULL,    SHAPE_ARROW_BOOL,    SHAPE_ARROW_INT8,   SHAPE_ARROW_INT16,
            SHAPE_ARROW_INT32,   SHAPE_ARROW_INT64,   SHAPE_ARROW_UINT8,  SHAPE_ARROW_UINT16,
            SHAPE_ARROW_UINT32,  SHAPE_ARROW_UINT64,  SHAPE_ARROW_FLOAT16, SHAPE_ARROW_FLOAT32,
            SHAPE_ARROW_FLOAT64, SHAPE_ARROW_STRING,  SHAPE_ARROW_LARGE_STRING, SHAPE_ARROW_BINARY,
            SHAPE_ARROW_LARGE_BINARY};
        const char *hit = strchr(singles, f[0]);
        if (!hit) return -1;
        t->kind = kinds[hit - singles];
        return 0;
    }
    if (f[0] == 'w') {
        t->byte_width = fixed_width(f);
        if (t->byte_width < 0) return -1;
        t->kind = (t->byte_width == 16 && shape_arrow_is_uuid(field)) ? SHAPE_ARROW_UUID
                                                                    : SHAPE_ARROW_FIXED_BINARY;
        return 0;
    }
    if (f[0] == 'd') {
        long p, s, bits;
        if (!shape_arrow_parse_decimal(f, &p, &s, &bits)) return -1;
        if ((bits != 32 && bits != 64 && bits != 128) || p < 1 || p > 38 || s < -20 || s > 38)
            return -1;
        t->kind = SHAPE_ARROW_DECIMAL;
        t->byte_width = (int32_t)(bits / 8);
        t->precision = (int32_t)p;
        t->scale = (int32_t)s;
        return 0;
    }
    if (f[0] != 't') return -1;
    if (!strcmp(f, "tdD")) { t->kind = SHAPE_ARROW_DATE32; return 0; }
    if (!strcmp(f, "tdm")) { t->kind = SHAPE_ARROW_DATE64; return 0; }
    if (f[1] == 't' && f[2] && !f[3]) {
        int d = unit_digits(f[2]);
        if (d < 0) return -1;
        t->kind = d <= 3 ? SHAPE_ARROW_TIME32 : SHAPE_ARROW_TIME64;
        t->unit_digits = (int8_t)d;
        return 0;
    }
    if (f[1] == 's' && f[2] && f[3] == ':') {
        int d = unit_digits(f[2]);
        if (d < 0) return -1;
        t->kind = SHAPE_ARROW_TIMESTAMP;
        t->unit_digits = (int8_t)d;
        t->zoned = f[4] != '\0';
        return 0;
    }
    return -1;
}

/* Index formats of a dictionary column: width in bytes, signedness. */
static int resolve_index(const char *f, shape_arrow_type *t)
{
    static const char signed_ix[] = "csil", unsigned_ix[] = "CSIL";
    if (!f || !f[0] || f[1]) return -1;
    const char *s = strchr(signed_ix, f[0]), *u = strchr(unsigned_ix, f[0]);
    if (s) t->index_width = (int8_t)(1 << (s - signed_ix));
    else if (u) {
        t->index_width = (int8_t)(1 << (u - unsigned_ix));
        t->index_unsigned = 1;
    } else
        return -1;
    return 0;
}

int shape_arrow_type_resolve(const struct ArrowSchema *field, shape_arrow_type *out)
{
    shape_arrow_type t;
    memset(&t, 0, sizeof t);
    const struct ArrowSchema *values = field;
    if (field->dictionary) {
        if (resolve_index(field->format, &t) != 0 || field->dictionary->dictionary) return -1;
        values = field->dictionary;
    } else if (field->format && strcmp(field->format, "+m") == 0) {
        t.kind = SHAPE_ARROW_MAP;
        *out = t;
        return 0;
    }
    if (resolve_value_format(values, &t) != 0) return -1;
    *out = t;
    return 0;
}

/* shape/generate_arrow.h — generated values into Arrow builder columns.
 *
 * Why: every consumer of generated rows that wants Arrow (a domain's record
 * batches, the emitter's typed rows for registry formats) maps generator
 * kinds to Arrow types and appends values the same way; the emitter's path
 * is hot (a value per column of every event), so the append is also given
 * as an inline function over the builder's inline appends (shape/arrow.h)
 * rather than only as a call per value.
 *
 * Ownership: nothing is kept; values are copied into the column.
 */
#ifndef SHAPE_GENERATE_ARROW_H
#define SHAPE_GENERATE_ARROW_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stdint.h>

#include "shape/arrow.h"
#include "shape/error.h"
#include "shape/generate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Arrow builder type (enum shape_type of shape/arrow.h) of a generator
 * column kind: int64, float64, utf8, timestamp[ns, UTC], bool. */
int shape_gen_arrow_type(uint8_t kind);

/* Append one generated value (SHAPE_GEN_NULL kind: a null) to a column of
 * that type. */
int shape_gen_arrow_append(struct shape_column *c, const shape_gen_value *v, shape_err *err);

/* The same, inline (for loops over every value of a stream). */
static inline int shape_gen_arrow_append_inline(shape_column *c, const shape_gen_value *v, shape_err *err)
{
    switch (v->kind) {
    case SHAPE_GEN_NULL: return shape_column_append_null(c, err);
    case SHAPE_GEN_INT64: return shape_column_append_int64(c, v->v.i, err);
    case SHAPE_GEN_TIMESTAMP_NS: return shape_column_append_timestamp(c, v->v.i, err);
    case SHAPE_GEN_FLOAT64: return shape_column_append_double(c, v->v.f, err);
    case SHAPE_GEN_STRING: return shape_column_append_bytes(c, v->v.s, v->len, err);
    default: return shape_column_append_bool(c, v->v.b, err);
    }
}

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

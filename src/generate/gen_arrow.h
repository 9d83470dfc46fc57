/* gen_arrow.h — one generated value appended to an Arrow builder column,
 * inline (libshape-internal).
 *
 * Why: the retail Arrow batches (retail_arrow.c, shape_gen_arrow_append)
 * and the emitter's typed rows (src/emit/event_rows.c, a value per column
 * of every event) append the same way; the emitter's path is hot, so the
 * one definition lives here as an inline function over the builder's
 * inline appends (shape/arrow.h) rather than as a call per value.
 */
#ifndef SHAPE_GEN_ARROW_H
#define SHAPE_GEN_ARROW_H

#include "shape/arrow.h"
#include "shape/generate.h"

/* A value of the column's kind (SHAPE_GEN_NULL: a null). */
static inline int shape_gen_arrow_append_inline_(shape_column *c, const shape_gen_value *v, shape_err *err)
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

#endif

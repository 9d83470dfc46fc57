/* gen_arrow.c — generator kinds as Arrow builder types, and the out-of-line
 * append (shape/generate_arrow.h).
 *
 * Why: the mapping is one switch every Arrow consumer of generated rows
 * shares; callers that append in a hot loop use the header's inline form.
 * How: a switch per kind; the append wraps the inline one.
 */
#include "shape/generate_arrow.h"

int shape_gen_arrow_type(uint8_t kind)
{
    switch (kind) {
    case SHAPE_GEN_INT64: return SHAPE_TYPE_INT64;
    case SHAPE_GEN_FLOAT64: return SHAPE_TYPE_FLOAT64;
    case SHAPE_GEN_STRING: return SHAPE_TYPE_UTF8;
    case SHAPE_GEN_TIMESTAMP_NS: return SHAPE_TYPE_TIMESTAMP_NS;
    default: return SHAPE_TYPE_BOOL;
    }
}

int shape_gen_arrow_append(struct shape_column *c, const shape_gen_value *v, shape_err *err)
{
    return shape_gen_arrow_append_inline(c, v, err);
}

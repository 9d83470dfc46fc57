/* schema_option.c — the `schema` source option: a frozen column list
 * handed to a source so that a later read decodes like the first one.
 *
 * Why: a source freezes its schema from its first batch. A consumer that
 * reopens a source (resume from a checkpoint, reconnect) must get batches of
 * the schema its run froze first — else a stretch of nulls or of integers in
 * a float column would be typed differently, rows would be rejected, and the
 * resumed profile would differ from an uninterrupted one
 * (reference/spec-core.md §1.6: later reads get the schema as an option).
 *
 * How: the option's value is a JSON array of [name, Arrow format] pairs,
 * e.g. [["id","l"],["_shape_event_time","tsu:UTC"]] (a batch's columns),
 * turned into a "+s" ArrowSchema (nullable children) for shape_decoder_new.
 */
#include "shape/source.h"

#include <string.h>

#include <jansson.h>

int shape_decode_schema_from(const shape_options *o, struct ArrowSchema *out, int *present, shape_err *err)
{
    *present = 0;
    memset(out, 0, sizeof *out);
    const json_t *v = json_object_get((const json_t *)shape_options_json(o), "schema");
    if (!v || json_is_null(v)) return SHAPE_OK;
    if (!json_is_array(v))
        return shape_err_set(err, SHAPE_EINVAL, "option 'schema' must be a list of [name, Arrow format] pairs");
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, i);
        const char *name = json_string_value(json_array_get(e, 0)), *format = json_string_value(json_array_get(e, 1));
        if (!json_is_array(e) || json_array_size(e) != 2 || !name || !format)
            return shape_err_set(err, SHAPE_EINVAL, "option 'schema' must be a list of [name, Arrow format] pairs");
        for (size_t j = 0; j < i; j++)
            if (strcmp(name, json_string_value(json_array_get(json_array_get(v, j), 0))) == 0)
                return shape_err_set(err, SHAPE_EINVAL, "option 'schema' names column '%.64s' twice", name);
    }
    SHAPE_RETURN_NOT_OK(shape_arrow_schema_make(out, "+s", NULL, NULL, 0, (int64_t)n, err));
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, i);
        int rc = shape_arrow_schema_make(out->children[i], json_string_value(json_array_get(e, 1)),
                                         json_string_value(json_array_get(e, 0)), NULL, ARROW_FLAG_NULLABLE, 0, err);
        if (rc != SHAPE_OK) {
            out->release(out);
            return rc;
        }
    }
    *present = 1;
    return SHAPE_OK;
}

int shape_decoder_from_options(const shape_options *o, shape_decoder **out, shape_err *err)
{
    shape_decode_options dopts;
    struct ArrowSchema schema;
    int present = 0;
    SHAPE_RETURN_NOT_OK(shape_decode_options_from(o, &dopts, err));
    SHAPE_RETURN_NOT_OK(shape_decode_schema_from(o, &schema, &present, err));
    int rc = shape_decoder_new(&dopts, present ? &schema : NULL, out, err);
    if (present) schema.release(&schema);
    return rc;
}

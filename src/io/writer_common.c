/* writer_common.c — the column comparison and stream draining the writers
 * share (writer_common.h). */
#include "writer_common.h"

#include <string.h>

int io_same_field(const struct ArrowSchema *a, const struct ArrowSchema *b)
{
    if (strcmp(io_text(a->format), io_text(b->format)) != 0 || strcmp(io_text(a->name), io_text(b->name)) != 0 ||
        ((a->flags ^ b->flags) & ARROW_FLAG_NULLABLE) || a->n_children != b->n_children)
        return 0;
    for (int64_t i = 0; i < a->n_children; i++)
        if (!io_same_field(a->children[i], b->children[i])) return 0;
    return 1;
}

int io_drain_stream(struct ArrowArrayStream *stream, const io_sink *sink,
                    int (*check)(const struct ArrowSchema *schema, shape_err *err), shape_err *err)
{
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    if (stream->get_schema(stream, &schema) != 0) {
        const char *m = stream->get_last_error(stream);
        return shape_err_set(err, SHAPE_EIO, "the stream gave no schema: %s", m ? m : "unknown error");
    }
    int rc = check ? check(&schema, err) : SHAPE_OK;
    while (rc == SHAPE_OK) {
        struct ArrowArray a;
        memset(&a, 0, sizeof a);
        if (stream->get_next(stream, &a) != 0) {
            const char *m = stream->get_last_error(stream);
            rc = shape_err_set(err, SHAPE_EIO, "the stream failed: %s", m ? m : "unknown error");
            break;
        }
        if (!a.release) break;
        rc = sink->write(sink->writer, &schema, &a, err);
        a.release(&a);
    }
    if (rc == SHAPE_OK) rc = sink->finish(sink->writer, &schema, err);
    schema.release(&schema);
    return rc;
}

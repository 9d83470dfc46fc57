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

typedef struct drain {
    const io_sink *sink;
    int (*check)(const struct ArrowSchema *schema, shape_err *err);
} drain;

static int drain_first(void *ud, const struct ArrowSchema *schema, shape_err *err)
{
    const drain *d = ud;
    return d->check ? d->check(schema, err) : SHAPE_OK;
}

static int drain_each(void *ud, const struct ArrowSchema *schema, const struct ArrowArray *batch, shape_err *err)
{
    const drain *d = ud;
    return d->sink->write(d->sink->writer, schema, batch, err);
}

static int drain_last(void *ud, const struct ArrowSchema *schema, shape_err *err)
{
    const drain *d = ud;
    return d->sink->finish(d->sink->writer, schema, err);
}

int io_drain_stream(struct ArrowArrayStream *stream, const io_sink *sink,
                    int (*check)(const struct ArrowSchema *schema, shape_err *err), shape_err *err)
{
    drain d = {sink, check};
    return shape_arrow_stream_consume(stream, drain_first, drain_each, drain_last, &d, err);
}

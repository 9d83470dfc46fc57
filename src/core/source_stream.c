/* source_stream.c — a shape_source as an ArrowArrayStream (see
 * shape/source_stream.h). Built on shape_arrow_stream_init(): this file only
 * supplies the producer callback (skip empty reads, hand out batches, keep
 * the position) and the close that closes the source. */
#include "shape/source_stream.h"

#include <stdlib.h>
#include <string.h>

typedef struct source_stream {
    shape_source *src;
    struct ArrowArray pending; /* the first batch, read to learn the schema */
    shape_offsets pending_pos; /* its position */
    shape_offsets position;    /* after the last batch handed out */
    shape_offsets scratch;
} source_stream;

/* Next batch with rows (array->release NULL at the end). */
static int read_batch(source_stream *s, struct ArrowSchema *schema, struct ArrowArray *array,
                      shape_offsets *pos, shape_err *err)
{
    for (;;) {
        int end = 0;
        struct ArrowSchema local = {0};
        SHAPE_RETURN_NOT_OK(shape_source_next(s->src, schema ? schema : &local, array, pos, &end, err));
        if (end) {
            array->release = NULL;
            return SHAPE_OK;
        }
        if (local.release) local.release(&local);
        if (array->release) return SHAPE_OK;
        if (schema && schema->release) schema->release(schema);
    }
}

static int stream_next(void *ctx, struct ArrowArray *out, shape_err *err)
{
    source_stream *s = ctx;
    if (s->pending.release) {
        *out = s->pending;
        s->pending.release = NULL;
        return shape_offsets_copy(&s->position, &s->pending_pos, err);
    }
    SHAPE_RETURN_NOT_OK(read_batch(s, NULL, out, &s->scratch, err));
    if (out->release) return shape_offsets_copy(&s->position, &s->scratch, err);
    return SHAPE_OK;
}

static void stream_close(void *ctx)
{
    source_stream *s = ctx;
    if (s->pending.release) s->pending.release(&s->pending);
    shape_source_close(s->src);
    shape_offsets_free(&s->pending_pos);
    shape_offsets_free(&s->position);
    shape_offsets_free(&s->scratch);
    free(s);
}

int shape_source_arrow_stream(shape_source *src, struct ArrowArrayStream *out, shape_err *err)
{
    source_stream *s = calloc(1, sizeof *s);
    if (!s) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    s->src = src;
    struct ArrowSchema schema = {0};
    int rc = read_batch(s, &schema, &s->pending, &s->pending_pos, err);
    if (rc == SHAPE_OK && !s->pending.release) rc = shape_arrow_schema_make(&schema, "+s", "", NULL, 0, 0, err);
    if (rc == SHAPE_OK) rc = shape_arrow_stream_init(out, &schema, stream_next, stream_close, s, err);
    if (schema.release) schema.release(&schema);
    if (rc != SHAPE_OK) {
        if (s->pending.release) s->pending.release(&s->pending);
        shape_offsets_free(&s->pending_pos);
        free(s);
        return rc;
    }
    return SHAPE_OK;
}

const shape_offsets *shape_source_stream_position(struct ArrowArrayStream *stream)
{
    source_stream *s = shape_arrow_stream_context(stream, stream_next);
    return s ? &s->position : NULL;
}

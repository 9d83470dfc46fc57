/* arrow_stream.c — an Arrow C Stream Interface (ArrowArrayStream) over a
 * producer callback.
 *
 * Why: the library's batch sequence is handed to consumers (DuckDB, pyarrow,
 * polars, our own commands) as an ArrowArrayStream; sources only need to say
 * "here is the next batch", "that was the last one" or "this failed".
 *
 * How: private_data holds a deep copy of the schema, the producer's callbacks
 * and context, and the last error (shape code + message). get_schema hands
 * out a fresh deep copy each call; get_next zeroes the output, asks the
 * producer, and turns a shape error into an errno value while keeping the
 * message for get_last_error. The end and producer errors are sticky: once
 * reached, get_next repeats them without calling the producer again (a
 * failed get_schema, out of memory, is not: it poisons nothing). release calls
 * close exactly once and frees everything.
 */
#include "shape/arrow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stream_priv {
    struct ArrowSchema schema;
    shape_arrow_next_fn next;
    void (*close)(void *ctx);
    void *ctx;
    int ended;                           /* the producer signalled the end */
    int failed;                          /* the producer failed: get_next repeats it */
    int code;                            /* shape code of the last failure, SHAPE_OK if none */
    char message[SHAPE_ERR_MESSAGE_MAX]; /* its message */
} stream_priv;

static int errno_of(int code)
{
    switch (code) {
    case SHAPE_OK: return 0;
    case SHAPE_EINVAL: return EINVAL;
    case SHAPE_ENOMEM: return ENOMEM;
    case SHAPE_ENOTFOUND: return ENOENT;
    default: return EIO;
    }
}

static int fail(stream_priv *p, const shape_err *err, int code)
{
    p->code = code != SHAPE_OK ? code : SHAPE_EINTERNAL;
    if (err && err->message[0])
        snprintf(p->message, sizeof p->message, "%s", err->message);
    else
        snprintf(p->message, sizeof p->message, "%s", shape_code_name(p->code));
    return errno_of(p->code);
}

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    stream_priv *p = s->private_data;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_arrow_schema_deep_copy(&p->schema, out, &err);
    return rc == SHAPE_OK ? 0 : fail(p, &err, rc);
}

static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    stream_priv *p = s->private_data;
    memset(out, 0, sizeof *out);
    if (p->failed) return errno_of(p->failed);
    if (p->ended) return 0;
    shape_err err;
    shape_err_clear(&err);
    int rc = p->next(p->ctx, out, &err);
    if (rc != SHAPE_OK) {
        if (out->release) out->release(out); /* a producer that failed half-way */
        memset(out, 0, sizeof *out);
        int e = fail(p, &err, rc);
        p->failed = p->code;
        return e;
    }
    if (!out->release) p->ended = 1;
    return 0;
}

static const char *stream_get_last_error(struct ArrowArrayStream *s)
{
    stream_priv *p = s->private_data;
    return p->code != SHAPE_OK ? p->message : NULL;
}

static void stream_release(struct ArrowArrayStream *s)
{
    if (!s || !s->release) return;
    stream_priv *p = s->private_data;
    if (p->close) p->close(p->ctx);
    if (p->schema.release) p->schema.release(&p->schema);
    free(p);
    s->private_data = NULL;
    s->release = NULL;
}

int shape_arrow_stream_init(struct ArrowArrayStream *out, const struct ArrowSchema *schema,
                            shape_arrow_next_fn next, void (*close)(void *ctx), void *ctx,
                            shape_err *err)
{
    if (!out || !schema || !next)
        return shape_err_set(err, SHAPE_EINVAL, "a stream needs an output, a schema and a next callback");
    stream_priv *p = calloc(1, sizeof *p);
    if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory creating a stream");
    int rc = shape_arrow_schema_deep_copy(schema, &p->schema, err);
    if (rc != SHAPE_OK) {
        free(p);
        return rc;
    }
    p->next = next;
    p->close = close;
    p->ctx = ctx;
    out->get_schema = stream_get_schema;
    out->get_next = stream_get_next;
    out->get_last_error = stream_get_last_error;
    out->release = stream_release;
    out->private_data = p;
    return SHAPE_OK;
}

int shape_arrow_stream_error_code(struct ArrowArrayStream *stream)
{
    if (!stream || stream->get_next != stream_get_next || !stream->private_data) return SHAPE_EINVAL;
    return ((stream_priv *)stream->private_data)->code;
}

void *shape_arrow_stream_context(struct ArrowArrayStream *stream, shape_arrow_next_fn next)
{
    if (!stream || stream->get_next != stream_get_next || !stream->private_data) return NULL;
    stream_priv *p = stream->private_data;
    return p->next == next ? p->ctx : NULL;
}

int shape_arrow_stream_consume(struct ArrowArrayStream *stream,
                               int (*first)(void *ud, const struct ArrowSchema *schema, shape_err *err),
                               int (*each)(void *ud, const struct ArrowSchema *schema, const struct ArrowArray *batch,
                                           shape_err *err),
                               int (*last)(void *ud, const struct ArrowSchema *schema, shape_err *err), void *ud,
                               shape_err *err)
{
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    if (stream->get_schema(stream, &schema) != 0) {
        const char *m = stream->get_last_error(stream);
        return shape_err_set(err, SHAPE_EIO, "the stream gave no schema: %s", m ? m : "unknown error");
    }
    int rc = first ? first(ud, &schema, err) : SHAPE_OK;
    while (rc == SHAPE_OK) {
        struct ArrowArray a;
        memset(&a, 0, sizeof a);
        if (stream->get_next(stream, &a) != 0) {
            const char *m = stream->get_last_error(stream);
            rc = shape_err_set(err, SHAPE_EIO, "the stream failed: %s", m ? m : "unknown error");
            break;
        }
        if (!a.release) break;
        rc = each(ud, &schema, &a, err);
        a.release(&a);
    }
    if (rc == SHAPE_OK && last) rc = last(ud, &schema, err);
    schema.release(&schema);
    return rc;
}

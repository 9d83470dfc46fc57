/* writer_common.h — what the Arrow IPC and Parquet writers share.
 *
 * Why: both writers take a stream of batches that must all have the first
 * batch's columns, and both offer a whole ArrowArrayStream as one call; the
 * rules for "the same columns" live here once, and the draining loop is the
 * core's (shape_arrow_stream_consume, also the split's).
 */
#ifndef SHAPE_IO_WRITER_COMMON_H
#define SHAPE_IO_WRITER_COMMON_H

#include "shape/arrow.h"
#include "shape/error.h"

/* s, or "" for NULL. */
static inline const char *io_text(const char *s) { return s ? s : ""; }

/* 1 when the two fields (and their children) have the same formats, names,
 * nullability and number of children. */
int io_same_field(const struct ArrowSchema *a, const struct ArrowSchema *b);

/* One writer as seen by io_drain_stream. */
typedef struct io_sink {
    void *writer;
    int (*write)(void *writer, const struct ArrowSchema *schema, const struct ArrowArray *array, shape_err *err);
    int (*finish)(void *writer, const struct ArrowSchema *schema, shape_err *err);
} io_sink;

/* Take the stream's schema (check(schema) first when check is not NULL),
 * hand every batch to sink->write, then sink->finish. The stream is read,
 * not released. */
int io_drain_stream(struct ArrowArrayStream *stream, const io_sink *sink,
                    int (*check)(const struct ArrowSchema *schema, shape_err *err), shape_err *err);

#endif

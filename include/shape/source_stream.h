/* shape/source_stream.h — a stream source seen as an ArrowArrayStream.
 *
 * Why: DuckDB, pyarrow, polars and nanoarrow consume the Arrow C Stream
 * Interface directly; giving them a source in that form needs no glue.
 * How: the first batch is read up front (its schema is the stream's), then
 * get_next hands out batches in order, skipping reads that made no rows.
 * The stream takes the source: releasing the stream closes it. Positions
 * are not part of the C Stream Interface; shape_source_stream_position()
 * gives the position after the last batch handed out, for checkpoints.
 */
#ifndef SHAPE_SOURCE_STREAM_H
#define SHAPE_SOURCE_STREAM_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include "shape/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Make *out a stream over src (taken on success: released with the stream;
 * on failure the caller still owns src). A source with no rows at all gives
 * a stream with an empty struct schema and no batches. */
int shape_source_arrow_stream(shape_source *src, struct ArrowArrayStream *out, shape_err *err);

/* The position after the last batch get_next returned (empty before the
 * first), or NULL when the stream is not one made by shape_source_arrow_stream.
 * Owned by the stream. */
const shape_offsets *shape_source_stream_position(struct ArrowArrayStream *stream);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

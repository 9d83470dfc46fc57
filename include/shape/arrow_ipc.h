/* shape/arrow_ipc.h — Arrow record batches out as the Arrow IPC stream format.
 *
 * Why: the batches shape decodes are Arrow; the IPC stream format is how
 * Arrow moves batches between processes, so `pyarrow.ipc.open_stream`,
 * polars, the Arrow JS library and nanoarrow read a Kafka topic's batches
 * exactly as shape decoded them (`shape stream-read --format arrow`).
 * Debian 12 has no Arrow C/C++ library; this writer is ours, over the C Data
 * Interface structs (shape/arrow.h).
 *
 * How: a stream is one schema message, one record batch message per batch,
 * and the end-of-stream marker (0xFFFFFFFF 0x00000000). Each message is the
 * continuation marker, the metadata length, the FlatBuffer Message
 * (metadata version V5, little-endian) padded to 8 bytes, then the body:
 * the batch's buffers in the order of the format, each padded to 8 bytes,
 * written straight from the array (no copy) except where a sliced array
 * (an offset not on a byte, offsets not starting at 0) is re-based first.
 * A validity bitmap is left out (length 0) when its column has no nulls.
 * The schema message carries the fields with their own metadata (e.g. an
 * extension name); a batch's schema-level metadata (shape.partition, which
 * can change from batch to batch) goes into that record batch message's
 * custom_metadata. No compression, no dictionaries.
 *
 * Types written: null, bool, ints of every width (signed and unsigned),
 * float16/32/64, utf8, large utf8, binary, large binary, fixed-size binary,
 * decimals (32, 64, 128, 256 bits), dates, times, timestamps of every unit
 * with or without a zone, durations, and lists, large lists, fixed-size
 * lists, structs and maps of those. Refused (SHAPE_EINVAL, naming the
 * column and its format, before anything is written): dictionary-encoded
 * columns, unions, intervals, run-end encoded, views. Every batch must have
 * the first batch's columns (names, formats, nullability): an IPC stream has
 * one schema.
 *
 * Ownership: the writer borrows the FILE (the caller opens and closes it;
 * nothing is closed here) and only reads the schema and arrays during each
 * call.
 */
#ifndef SHAPE_ARROW_IPC_H
#define SHAPE_ARROW_IPC_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stdint.h>
#include <stdio.h>

#include "shape/arrow.h"
#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_ipc_writer shape_ipc_writer;

/* A writer onto out (borrowed; written with fwrite). */
int shape_ipc_writer_new(FILE *out, shape_ipc_writer **w, shape_err *err);

/* SHAPE_OK when every column of the "+s" schema can be written, else
 * SHAPE_EINVAL naming the first that cannot. */
int shape_ipc_check_schema(const struct ArrowSchema *schema, shape_err *err);

/* Write one batch: a "+s" struct array and its schema. The first call writes
 * the schema message first. SHAPE_EINVAL when the schema cannot be written
 * or differs from the first batch's, or the array does not match it;
 * SHAPE_EIO when a write fails. */
int shape_ipc_writer_write(shape_ipc_writer *w, const struct ArrowSchema *schema, const struct ArrowArray *array,
                           shape_err *err);

/* End the stream: the schema message first if no batch was written (schema
 * may be NULL then: a schema of no columns), then the end-of-stream marker,
 * then fflush. */
int shape_ipc_writer_finish(shape_ipc_writer *w, const struct ArrowSchema *schema, shape_err *err);

/* Batches written so far, and bytes written (metadata and bodies). */
int64_t shape_ipc_writer_batches(const shape_ipc_writer *w);
int64_t shape_ipc_writer_bytes(const shape_ipc_writer *w);

void shape_ipc_writer_free(shape_ipc_writer *w);

/* A whole C stream to out: get_schema, every batch, the end marker. The
 * stream is read, not released (the caller releases it). */
int shape_ipc_write_stream(struct ArrowArrayStream *stream, FILE *out, shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

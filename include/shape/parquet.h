/* shape/parquet.h — Arrow record batches out as one Parquet file.
 *
 * Why: DuckDB, polars, Spark and every warehouse read Parquet; `shape
 * stream-read --format parquet -o FILE` turns a topic's micro-batches into
 * a file they query directly. Debian 12 has no Arrow/Parquet C++ library:
 * this writer is ours, over the C Data Interface structs (shape/arrow.h).
 *
 * How: "PAR1", then one row group per batch written: for each leaf column
 * one data page (format v1: RLE repetition and definition levels, PLAIN
 * values — or, asked for, dictionary-encoded behind a dictionary page),
 * compressed with ZSTD (libzstd) unless asked not to; then the
 * footer (FileMetaData, Thrift compact protocol) with each column chunk's
 * statistics (null count; min and max under the type-defined order, NaN
 * left out, byte arrays of up to 64 bytes), its length and "PAR1".
 *
 * Types written: bool; int8/16/32 and uint8/16/32 as INT32, int64 and
 * uint64 as INT64 (INTEGER logical type); float32 FLOAT, float64 DOUBLE;
 * utf8 and large utf8 as BYTE_ARRAY STRING; binary and large binary as
 * BYTE_ARRAY; date32 as INT32 DATE; timestamps in ms, µs or ns as INT64
 * TIMESTAMP (adjusted to UTC when the type has a zone); maps with utf8 keys
 * and utf8 or binary values (the decoder's headers) as the MAP
 * three-level group. Nullable fields are OPTIONAL, others REQUIRED.
 * Refused, naming the column, before anything is written: everything else
 * (null type, float16, decimals, times, seconds timestamps, lists, structs,
 * dictionaries, ...). Every batch must have the first batch's columns.
 *
 * Ownership: the writer borrows the FILE (written sequentially, never
 * sought; the caller closes it) and reads the arrays only during a call.
 * The footer is kept in memory until finish: a file without its finish is
 * not a Parquet file.
 */
#ifndef SHAPE_PARQUET_H
#define SHAPE_PARQUET_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stdint.h>
#include <stdio.h>

#include "shape/arrow.h"
#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum shape_parquet_codec { SHAPE_PARQUET_ZSTD = 0, SHAPE_PARQUET_UNCOMPRESSED = 1 } shape_parquet_codec;

/* How values are encoded. PLAIN (the default): every value as it is.
 * DICTIONARY: per column chunk, a dictionary page of the distinct values
 * (PLAIN) and the data page's values as indices into it (RLE_DICTIONARY,
 * bit-packed); a chunk falls back to PLAIN when more than half its values
 * are distinct or its dictionary would pass 1 MiB. Booleans are always
 * PLAIN. */
typedef enum shape_parquet_encoding { SHAPE_PARQUET_PLAIN = 0, SHAPE_PARQUET_DICTIONARY = 1 } shape_parquet_encoding;

typedef struct shape_parquet_options {
    shape_parquet_codec codec; /* default ZSTD */
    int zstd_level;            /* 0 = libzstd's default (3) */
    shape_parquet_encoding encoding; /* default PLAIN */
} shape_parquet_options;

typedef struct shape_parquet_writer shape_parquet_writer;

/* o may be NULL (the defaults). out is borrowed. */
int shape_parquet_writer_new(FILE *out, const shape_parquet_options *o, shape_parquet_writer **w, shape_err *err);

/* SHAPE_OK when every column of the "+s" schema can be written, else
 * SHAPE_EINVAL naming the first that cannot. */
int shape_parquet_check_schema(const struct ArrowSchema *schema, shape_err *err);

/* One row group of the batch's rows (nothing for an empty batch). */
int shape_parquet_writer_write(shape_parquet_writer *w, const struct ArrowSchema *schema,
                               const struct ArrowArray *array, shape_err *err);

/* Write the footer and fflush. schema (may be NULL: no columns) is used
 * when no batch was written. */
int shape_parquet_writer_finish(shape_parquet_writer *w, const struct ArrowSchema *schema, shape_err *err);

int64_t shape_parquet_writer_rows(const shape_parquet_writer *w);
int64_t shape_parquet_writer_row_groups(const shape_parquet_writer *w);
int64_t shape_parquet_writer_bytes(const shape_parquet_writer *w);

void shape_parquet_writer_free(shape_parquet_writer *w);

/* A whole C stream to out as one file (the stream is read, not released). */
int shape_parquet_write_stream(struct ArrowArrayStream *stream, FILE *out, const shape_parquet_options *o,
                               shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

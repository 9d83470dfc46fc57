/* fuzz_writers.c — libFuzzer target for the Arrow IPC and Parquet writers
 * (shape/arrow_ipc.h, shape/parquet.h).
 *
 * The input drives tests/support/random_batch.h: the columns of a stream
 * (every core type), then batches of random rows, nulls and slices, each
 * written by both writers into memory (open_memstream). Both must accept
 * every such batch; the IPC stream must start with the continuation marker
 * and end with the end-of-stream marker, the Parquet file be framed by
 * "PAR1"; inputs of odd length are written dictionary-encoded. Any crash, leak, sanitizer report or abort is a bug. (That the
 * bytes are the format's is the read-back test's job: test_writers_random.sh
 * runs the same generator into Arrow JS and DuckDB.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/arrow_ipc.h"
#include "shape/parquet.h"
#include "support/random_batch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rb_source src = {.data = data, .len = size};
    char *ipc_bytes = NULL, *pq_bytes = NULL;
    size_t ipc_len = 0, pq_len = 0;
    FILE *ipc_out = open_memstream(&ipc_bytes, &ipc_len), *pq_out = open_memstream(&pq_bytes, &pq_len);
    if (!ipc_out || !pq_out) abort();
    shape_err err = {0};
    shape_ipc_writer *ipc = NULL;
    shape_parquet_writer *pq = NULL;
    int columns;
    int64_t rows;
    int rc = shape_ipc_writer_new(ipc_out, &ipc, &err);
    shape_parquet_options popts = {.encoding = size % 2 ? SHAPE_PARQUET_DICTIONARY : SHAPE_PARQUET_PLAIN};
    if (rc == SHAPE_OK) rc = shape_parquet_writer_new(pq_out, &popts, &pq, &err);
    if (rc == SHAPE_OK) rc = rb_write_stream(&src, (int)(rb_byte(&src) % 4), ipc, pq, NULL, NULL, &columns, &rows, &err);
    shape_ipc_writer_free(ipc);
    shape_parquet_writer_free(pq);
    fclose(ipc_out);
    fclose(pq_out);
    if (rc != SHAPE_OK) abort(); /* the writers take every batch of core types */
    static const uint8_t eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
    if (ipc_len < 16 || memcmp(ipc_bytes, eos, 4) != 0 || memcmp(ipc_bytes + ipc_len - 8, eos, 8) != 0) abort();
    if (pq_len < 12 || memcmp(pq_bytes, "PAR1", 4) != 0 || memcmp(pq_bytes + pq_len - 4, "PAR1", 4) != 0) abort();
    free(ipc_bytes);
    free(pq_bytes);
    return 0;
}

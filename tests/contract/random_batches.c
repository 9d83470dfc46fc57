/* random_batches.c — `random_batches DIR SEED BATCHES`: a stream of random
 * batches (tests/support/random_batch.h) written three ways, for the
 * independent readers of test_writers_random.sh: DIR/rand.arrow (the Arrow
 * IPC writer), DIR/rand.parquet (the Parquet writer) and DIR/rand.jsonl
 * (the same rows through stream-read's JSON printer, the oracle's truth).
 */
#include <stdio.h>
#include <stdlib.h>

#include "shape/arrow_ipc.h"
#include "shape/arrow_json.h"
#include "shape/parquet.h"
#include "support/random_batch.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: random_batches DIR SEED BATCHES\n");
        return 2;
    }
    char path[3][4096];
    snprintf(path[0], sizeof path[0], "%s/rand.arrow", argv[1]);
    snprintf(path[1], sizeof path[1], "%s/rand.parquet", argv[1]);
    snprintf(path[2], sizeof path[2], "%s/rand.jsonl", argv[1]);
    FILE *ipc_out = fopen(path[0], "wb"), *pq_out = fopen(path[1], "wb"), *jsonl = fopen(path[2], "wb");
    if (!ipc_out || !pq_out || !jsonl) {
        perror("random_batches");
        return 1;
    }
    rb_source src = {.state = 0x9E3779B97F4A7C15ull ^ strtoull(argv[2], NULL, 10)};
    rb_byte(&src);
    int batches = atoi(argv[3]);
    shape_err err = {0};
    shape_batch *b = NULL;
    shape_ipc_writer *ipc = NULL;
    shape_parquet_writer *pq = NULL;
    shape_json_buf lines = SHAPE_JSON_BUF_INIT;
    rb_schema sc;
    rb_pick_schema(&src, &sc);
    int rc = shape_batch_new(&b, &err);
    if (rc == SHAPE_OK) rc = rb_add_columns(b, &sc, &err);
    if (rc == SHAPE_OK) rc = shape_ipc_writer_new(ipc_out, &ipc, &err);
    if (rc == SHAPE_OK) rc = shape_parquet_writer_new(pq_out, NULL, &pq, &err);
    int64_t rows = 0;
    for (int i = 0; rc == SHAPE_OK && i < batches; i++) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        rc = rb_batch(&src, b, &schema, &array, &err);
        if (rc != SHAPE_OK) break;
        lines.len = 0;
        rc = shape_arrow_rows_jsonl(&schema, &array, 0, array.length, &lines, &err);
        if (rc == SHAPE_OK) fwrite(lines.data, 1, lines.len, jsonl);
        if (rc == SHAPE_OK) rc = shape_ipc_writer_write(ipc, &schema, &array, &err);
        if (rc == SHAPE_OK) rc = shape_parquet_writer_write(pq, &schema, &array, &err);
        rows += array.length;
        array.release(&array);
        schema.release(&schema);
    }
    if (rc == SHAPE_OK) rc = shape_ipc_writer_finish(ipc, NULL, &err);
    if (rc == SHAPE_OK) rc = shape_parquet_writer_finish(pq, NULL, &err);
    shape_ipc_writer_free(ipc);
    shape_parquet_writer_free(pq);
    shape_batch_free(b);
    shape_json_buf_release(&lines);
    fclose(ipc_out);
    fclose(pq_out);
    fclose(jsonl);
    if (rc != SHAPE_OK) {
        fprintf(stderr, "random_batches: %s\n", err.message);
        return 1;
    }
    printf("%d columns, %lld rows\n", sc.n, (long long)rows);
    return 0;
}

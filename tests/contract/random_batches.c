/* random_batches.c — `random_batches DIR SEED BATCHES [dictionary]`: a stream of random
 * batches (tests/support/random_batch.h) written three ways, for the
 * independent readers of test_writers_random.sh: DIR/rand.arrow (the Arrow
 * IPC writer), DIR/rand.parquet (the Parquet writer) and DIR/rand.jsonl
 * (the same rows through stream-read's JSON printer, the oracle's truth).
 * With "dictionary" the Parquet file is dictionary-encoded.
 */
#include <stdio.h>
#include <stdlib.h>

#include "shape/arrow_ipc.h"
#include "shape/arrow_json.h"
#include "shape/parquet.h"
#include "support/random_batch.h"

struct print_ctx {
    FILE *out;
    shape_json_buf *lines;
};

/* The batch's rows as stream-read prints them. */
static int print_rows(void *ud, const struct ArrowSchema *schema, const struct ArrowArray *array, shape_err *err)
{
    struct print_ctx *p = ud;
    p->lines->len = 0;
    SHAPE_RETURN_NOT_OK(shape_arrow_rows_jsonl(schema, array, 0, array->length, p->lines, err));
    if (p->lines->len) fwrite(p->lines->data, 1, p->lines->len, p->out);
    return SHAPE_OK;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: random_batches DIR SEED BATCHES [dictionary]\n");
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
    shape_err err = {0};
    shape_ipc_writer *ipc = NULL;
    shape_parquet_writer *pq = NULL;
    shape_json_buf lines = SHAPE_JSON_BUF_INIT;
    struct print_ctx ctx = {jsonl, &lines};
    int columns = 0;
    int64_t rows = 0;
    int rc = shape_ipc_writer_new(ipc_out, &ipc, &err);
    shape_parquet_options popts = {.encoding = argc == 5 ? SHAPE_PARQUET_DICTIONARY : SHAPE_PARQUET_PLAIN};
    if (rc == SHAPE_OK) rc = shape_parquet_writer_new(pq_out, &popts, &pq, &err);
    if (rc == SHAPE_OK) rc = rb_write_stream(&src, atoi(argv[3]), ipc, pq, print_rows, &ctx, &columns, &rows, &err);
    shape_ipc_writer_free(ipc);
    shape_parquet_writer_free(pq);
    shape_json_buf_reset(&lines);
    fclose(ipc_out);
    fclose(pq_out);
    fclose(jsonl);
    if (rc != SHAPE_OK) {
        fprintf(stderr, "random_batches: %s\n", err.message);
        return 1;
    }
    printf("%d columns, %lld rows\n", columns, (long long)rows);
    return 0;
}

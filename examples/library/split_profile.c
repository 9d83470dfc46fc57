/* split_profile.c — one profile per table of a mixed ArrowArrayStream, with
 * libshape (shape/stream_split.h), and the same batches written as an Arrow
 * IPC stream (shape/arrow_ipc.h).
 *
 *   cc -std=c11 -o split_profile split_profile.c $(pkg-config --cflags --libs shape)
 *   ./split_profile batches.arrows > profile.json
 *
 * The stream here is built by hand (two tables, "orders" and "users", in
 * one batch of shared columns, as a CDC topic or `shape emit` carries
 * them); any producer of the C stream interface will do (DuckDB, pyarrow,
 * a shape source through shape_source_arrow_stream). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shape/arrow_ipc.h>
#include <shape/stream_split.h>

static const struct { const char *table; long long id; double amount; const char *email; } rows[] = {
    {"orders", 1, 19.5, NULL}, {"orders", 2, 5.25, NULL}, {"users", 7, 0, "a@example.com"},
    {"orders", 3, 12.0, NULL}, {"users", 8, 0, "b@example.com"},
};
enum { N_ROWS = sizeof rows / sizeof *rows };

typedef struct producer { shape_batch *b; shape_column *table, *id, *amount, *email; int done; } producer;

/* One batch of every row, then the end (out->release left NULL). */
static int next(void *ctx, struct ArrowArray *out, shape_err *err)
{
    producer *p = ctx;
    if (p->done++) return SHAPE_OK;
    for (int i = 0; i < N_ROWS; i++) {
        int order = !strcmp(rows[i].table, "orders");
        SHAPE_RETURN_NOT_OK(shape_column_append_bytes(p->table, rows[i].table, strlen(rows[i].table), err));
        SHAPE_RETURN_NOT_OK(shape_column_append_int64(p->id, rows[i].id, err));
        SHAPE_RETURN_NOT_OK(order ? shape_column_append_double(p->amount, rows[i].amount, err)
                                  : shape_column_append_null(p->amount, err));
        SHAPE_RETURN_NOT_OK(order ? shape_column_append_null(p->email, err)
                                  : shape_column_append_bytes(p->email, rows[i].email, strlen(rows[i].email), err));
        SHAPE_RETURN_NOT_OK(shape_batch_end_row(p->b, err));
    }
    return shape_batch_finish(p->b, NULL, out, err);
}

static int open_stream(producer *p, struct ArrowArrayStream *s, shape_err *err)
{
    memset(p, 0, sizeof *p);
    struct ArrowSchema schema;
    SHAPE_RETURN_NOT_OK(shape_batch_new(&p->b, err));
    SHAPE_RETURN_NOT_OK(shape_batch_add_column(p->b, "table", 5, SHAPE_TYPE_UTF8, &p->table, err));
    SHAPE_RETURN_NOT_OK(shape_batch_add_column(p->b, "id", 2, SHAPE_TYPE_INT64, &p->id, err));
    SHAPE_RETURN_NOT_OK(shape_batch_add_column(p->b, "amount", 6, SHAPE_TYPE_FLOAT64, &p->amount, err));
    SHAPE_RETURN_NOT_OK(shape_batch_add_column(p->b, "email", 5, SHAPE_TYPE_UTF8, &p->email, err));
    SHAPE_RETURN_NOT_OK(shape_batch_schema(p->b, &schema, err));
    int rc = shape_arrow_stream_init(s, &schema, next, NULL, p, err);
    schema.release(&schema);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: split_profile OUT.arrows (the profile document goes to stdout)\n");
        return 2;
    }
    shape_err err = {0};
    producer p;
    struct ArrowArrayStream s;
    shape_split_profiles *sp = NULL;
    char *doc = NULL;
    size_t len = 0;
    /* 1. one profile per value of the field "table" (rows without it: "rest") */
    shape_split_config cfg = {.split_by = "field:table", .name = "rest", .max_tables = 100};
    int rc = open_stream(&p, &s, &err);
    if (rc == SHAPE_OK) {
        rc = shape_split_profile_stream(&s, &cfg, NULL, &sp, &err);
        s.release(&s);
    }
    shape_batch_free(p.b);
    const shape_profile *const *tables = NULL;
    size_t n = sp ? shape_split_profiles_tables(sp, &tables) : 0;
    /* the document `shape stream-profile --split-by` writes: each table with only its columns */
    if (rc == SHAPE_OK) rc = shape_stream_split_document(tables, n, &doc, &len, &err);
    if (rc == SHAPE_OK) fwrite(doc, 1, len, stdout);
    free(doc);
    shape_split_profiles_free(sp);
    /* 2. the same batches as an Arrow IPC stream (pyarrow.ipc.open_stream reads it) */
    FILE *out = rc == SHAPE_OK ? fopen(argv[1], "wb") : NULL;
    if (rc == SHAPE_OK && !out) rc = shape_err_set(&err, SHAPE_EIO, "cannot open %s", argv[1]);
    if (rc == SHAPE_OK) rc = open_stream(&p, &s, &err);
    if (out && rc == SHAPE_OK) {
        rc = shape_ipc_write_stream(&s, out, &err);
        s.release(&s);
        shape_batch_free(p.b);
    }
    if (out && fclose(out) != 0 && rc == SHAPE_OK) rc = shape_err_set(&err, SHAPE_EIO, "cannot write %s", argv[1]);
    if (rc != SHAPE_OK) {
        fprintf(stderr, "split_profile: %s\n", err.message);
        return 2;
    }
    return 0;
}

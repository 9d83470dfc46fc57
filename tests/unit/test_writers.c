/* test_writers.c — the Arrow IPC and Parquet writers' refusals and edges
 * (shape/arrow_ipc.h, shape/parquet.h); that their bytes are the formats'
 * is shown by independent readers (contract_stream_read_arrow/_parquet,
 * contract_writers_random).
 *
 * Covered: each writer refuses, naming the column and its format, the
 * types it cannot write, before writing a byte; a batch whose columns
 * differ from the first batch's is refused and the output keeps the first;
 * a stream of no batch is a valid empty stream (IPC: a schema of no fields
 * and the end marker; Parquet: PAR1, a footer, PAR1); the C Stream
 * Interface entry points write a whole ArrowArrayStream; the same batches
 * give the same bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/arrow_ipc.h"
#include "shape/parquet.h"

/* A "+s" schema of one column (format, name "col"), optionally with a child. */
static void one_column(struct ArrowSchema *s, const char *format, const char *child)
{
    shape_err err = {0};
    assert_int_equal(shape_arrow_schema_make(s, "+s", NULL, NULL, 0, 1, &err), SHAPE_OK);
    assert_int_equal(shape_arrow_schema_make(s->children[0], format, "col", NULL, ARROW_FLAG_NULLABLE, child ? 1 : 0, &err),
                     SHAPE_OK);
    if (child)
        assert_int_equal(shape_arrow_schema_make(s->children[0]->children[0], child, "item", NULL, ARROW_FLAG_NULLABLE, 0, &err),
                         SHAPE_OK);
}

static void test_ipc_refusals(void **state)
{
    (void)state;
    static const char *const refused[] = {"tiM", "tin", "vu", "+r", "x", "tss", "w:", "d:99,2"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        struct ArrowSchema s;
        one_column(&s, refused[i], NULL);
        shape_err err = {0};
        assert_int_equal(shape_ipc_check_schema(&s, &err), SHAPE_EINVAL);
        assert_non_null(strstr(err.message, "'col'"));
        assert_non_null(strstr(err.message, refused[i]));
        s.release(&s);
    }
    struct ArrowSchema u;
    one_column(&u, "+ud:0", "l");
    shape_err err = {0};
    assert_int_equal(shape_ipc_check_schema(&u, &err), SHAPE_EINVAL);
    u.release(&u);
    /* accepted: every scalar kind and the nested ones */
    static const char *const ok[] = {"n", "b", "c", "C", "s", "S", "i", "I", "l", "L", "e", "f", "g", "u", "U", "z", "Z",
                                     "w:16", "d:10,2", "d:38,-3,128", "d:9,2,32", "tdD", "tdm", "tts", "ttn", "tsu:",
                                     "tsn:Europe/Paris", "tDs", "+s"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct ArrowSchema s;
        one_column(&s, ok[i], NULL);
        assert_int_equal(shape_ipc_check_schema(&s, &err), SHAPE_OK);
        s.release(&s);
    }
    struct ArrowSchema l;
    one_column(&l, "+l", "u");
    assert_int_equal(shape_ipc_check_schema(&l, &err), SHAPE_OK);
    l.release(&l);
}

static void test_parquet_refusals(void **state)
{
    (void)state;
    static const char *const refused[] = {"n", "e", "d:10,2", "tss:", "tts", "ttu", "w:16", "tdm", "tDs", "+s"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        struct ArrowSchema s;
        one_column(&s, refused[i], NULL);
        shape_err err = {0};
        assert_int_equal(shape_parquet_check_schema(&s, &err), SHAPE_EINVAL);
        assert_non_null(strstr(err.message, "'col'"));
        assert_non_null(strstr(err.message, refused[i]));
        s.release(&s);
    }
    struct ArrowSchema l;
    one_column(&l, "+l", "u");
    shape_err err = {0};
    assert_int_equal(shape_parquet_check_schema(&l, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "nested"));
    l.release(&l);
    static const char *const ok[] = {"b", "c", "C", "s", "S", "i", "I", "l", "L", "f", "g", "u", "U", "z", "Z", "tdD",
                                     "tsm:", "tsu:UTC", "tsn:"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct ArrowSchema s;
        one_column(&s, ok[i], NULL);
        assert_int_equal(shape_parquet_check_schema(&s, &err), SHAPE_OK);
        s.release(&s);
    }
}

/* A batch of n rows of int64 "a" (and utf8 "b" when two). */
static void make_batch(int two, int64_t n, struct ArrowSchema *schema, struct ArrowArray *array)
{
    shape_err err = {0};
    shape_batch *b;
    shape_column *a, *s = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, "a", 1, SHAPE_TYPE_INT64, &a, &err), SHAPE_OK);
    if (two) assert_int_equal(shape_batch_add_column(b, "b", 1, SHAPE_TYPE_UTF8, &s, &err), SHAPE_OK);
    for (int64_t i = 0; i < n; i++) {
        assert_int_equal(i % 3 ? shape_column_append_int64(a, i, &err) : shape_column_append_null(a, &err), SHAPE_OK);
        if (s) assert_int_equal(shape_column_append_bytes(s, "xy", (size_t)(i % 3), &err), SHAPE_OK);
        assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    }
    assert_int_equal(shape_batch_finish(b, schema, array, &err), SHAPE_OK);
    shape_batch_free(b);
}

static void test_schema_change_refused(void **state)
{
    (void)state;
    char *ipc_bytes = NULL, *pq_bytes = NULL;
    size_t ipc_len = 0, pq_len = 0;
    FILE *f = open_memstream(&ipc_bytes, &ipc_len), *g = open_memstream(&pq_bytes, &pq_len);
    shape_ipc_writer *w;
    shape_parquet_writer *p;
    shape_err err = {0};
    assert_int_equal(shape_ipc_writer_new(f, &w, &err), SHAPE_OK);
    assert_int_equal(shape_parquet_writer_new(g, NULL, &p, &err), SHAPE_OK);
    struct ArrowSchema s1, s2;
    struct ArrowArray a1, a2;
    make_batch(1, 10, &s1, &a1);
    make_batch(0, 5, &s2, &a2);
    assert_int_equal(shape_ipc_writer_write(w, &s1, &a1, &err), SHAPE_OK);
    assert_int_equal(shape_parquet_writer_write(p, &s1, &a1, &err), SHAPE_OK);
    fflush(f);
    size_t after_first = ipc_len;
    assert_int_equal(shape_ipc_writer_write(w, &s2, &a2, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "one schema"));
    assert_int_equal(shape_parquet_writer_write(p, &s2, &a2, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "one schema"));
    fflush(f);
    assert_int_equal(ipc_len, after_first);
    assert_int_equal(shape_ipc_writer_batches(w), 1);
    assert_int_equal(shape_parquet_writer_rows(p), 10);
    shape_ipc_writer_free(w);
    shape_parquet_writer_free(p);
    a1.release(&a1), s1.release(&s1), a2.release(&a2), s2.release(&s2);
    fclose(f), fclose(g);
    free(ipc_bytes), free(pq_bytes);
}

static void test_empty_outputs(void **state)
{
    (void)state;
    char *bytes = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&bytes, &len);
    shape_ipc_writer *w;
    shape_err err = {0};
    assert_int_equal(shape_ipc_writer_new(f, &w, &err), SHAPE_OK);
    assert_int_equal(shape_ipc_writer_finish(w, NULL, &err), SHAPE_OK);
    shape_ipc_writer_free(w);
    fclose(f);
    static const uint8_t eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
    assert_true(len > 16 && len % 8 == 0);
    assert_memory_equal(bytes, eos, 4);
    assert_memory_equal(bytes + len - 8, eos, 8);
    uint32_t meta;
    memcpy(&meta, bytes + 4, 4);
    assert_int_equal(8 + meta + 8, len); /* one schema message, then the marker */
    free(bytes);

    bytes = NULL, len = 0;
    f = open_memstream(&bytes, &len);
    shape_parquet_writer *p;
    assert_int_equal(shape_parquet_writer_new(f, NULL, &p, &err), SHAPE_OK);
    assert_int_equal(shape_parquet_writer_finish(p, NULL, &err), SHAPE_OK);
    shape_parquet_writer_free(p);
    fclose(f);
    assert_true(len > 12);
    assert_memory_equal(bytes, "PAR1", 4);
    assert_memory_equal(bytes + len - 4, "PAR1", 4);
    uint32_t footer;
    memcpy(&footer, bytes + len - 8, 4);
    assert_int_equal(4 + footer + 8, len);
    free(bytes);
}

/* A producer of `left` batches of 7 rows for shape_arrow_stream_init. */
static int next_batch(void *ctx, struct ArrowArray *out, shape_err *err)
{
    (void)err;
    int *left = ctx;
    if (*left == 0) return SHAPE_OK;
    (*left)--;
    struct ArrowSchema s;
    make_batch(1, 7, &s, out);
    s.release(&s);
    return SHAPE_OK;
}

static void write_stream(int parquet, char **bytes, size_t *len)
{
    struct ArrowSchema s;
    struct ArrowArray a;
    make_batch(1, 1, &s, &a);
    a.release(&a);
    int left = 3;
    struct ArrowArrayStream stream;
    shape_err err = {0};
    assert_int_equal(shape_arrow_stream_init(&stream, &s, next_batch, NULL, &left, &err), SHAPE_OK);
    s.release(&s);
    FILE *f = open_memstream(bytes, len);
    assert_int_equal(parquet ? shape_parquet_write_stream(&stream, f, NULL, &err) : shape_ipc_write_stream(&stream, f, &err),
                     SHAPE_OK);
    fclose(f);
    stream.release(&stream);
    assert_int_equal(left, 0);
}

static void test_stream_entry_points(void **state)
{
    (void)state;
    for (int parquet = 0; parquet < 2; parquet++) {
        char *a = NULL, *b = NULL;
        size_t alen = 0, blen = 0;
        write_stream(parquet, &a, &alen);
        write_stream(parquet, &b, &blen);
        assert_true(alen > 64);
        assert_int_equal(alen, blen); /* the same batches give the same bytes */
        assert_memory_equal(a, b, alen);
        assert_memory_equal(a, parquet ? "PAR1" : "\xff\xff\xff\xff", 4);
        free(a), free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipc_refusals),
        cmocka_unit_test(test_parquet_refusals),
        cmocka_unit_test(test_schema_change_refused),
        cmocka_unit_test(test_empty_outputs),
        cmocka_unit_test(test_stream_entry_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

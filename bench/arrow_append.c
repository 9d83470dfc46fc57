/* arrow_append.c — micro-benchmark of the inline column append path.
 *
 * Why: the JSON decoder appends every value straight into shape_column
 * builders, so the append itself must cost a few nanoseconds. This measures
 * it in the way the decoder uses it: batches of 65,536 rows, each finished
 * (buffers moved into an exported ArrowArray) and released, the builder reused.
 *
 * How: 50M int64 values, 50M int64 with 1% nulls, 10M short strings (5-12
 * bytes) and 10M one-entry map rows; wall time per value, best of 3 runs.
 * Not built by default. Build against the library (NDEBUG, as release builds
 * do, drops the debug-only type asserts of the inline functions):
 *
 *   make && cc -O2 -DNDEBUG -Iinclude -Ibuild/include bench/arrow_append.c \
 *        -Lbuild/lib -lshape -Wl,-rpath,$PWD/build/lib -o build/arrow_append
 *   build/arrow_append
 *
 * or, without a full build, straight from the sources:
 *
 *   cc -O2 -DNDEBUG -D_POSIX_C_SOURCE=200809L -Iinclude bench/arrow_append.c \
 *      src/core/arrow_*.c src/core/error.c -o /tmp/arrow_append
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shape/arrow.h"

#define BATCH_ROWS 65536

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const shape_err *err)
{
    fprintf(stderr, "arrow_append: %s\n", err->message);
    exit(1);
}

/* Finish the batch when it is full; release it at once (a consumer's share). */
static void maybe_flush(shape_batch *b, shape_column *c, int force, int64_t *checksum)
{
    if (!force && c->length < BATCH_ROWS) return;
    struct ArrowArray a;
    shape_err err;
    if (shape_batch_finish(b, NULL, &a, &err) != SHAPE_OK) die(&err);
    *checksum += a.length + a.children[0]->null_count;
    a.release(&a);
}

enum kind { K_INT64, K_INT64_NULLS, K_STRINGS, K_MAPS };

static double run(enum kind kind, int64_t n, int64_t *checksum)
{
    shape_batch *b;
    shape_column *c;
    shape_err err;
    static const shape_type types[] = {SHAPE_TYPE_INT64, SHAPE_TYPE_INT64, SHAPE_TYPE_UTF8, SHAPE_TYPE_MAP};
    if (shape_batch_new(&b, &err) != SHAPE_OK) die(&err);
    if (shape_batch_add_column(b, "v", 1, types[kind], &c, &err) != SHAPE_OK) die(&err);
    static const char words[] = "customer_1234567890abcdef";
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++) {
        int rc;
        switch (kind) {
        case K_INT64: rc = shape_column_append_int64(c, i * 7, &err); break;
        case K_INT64_NULLS:
            rc = (i % 100 == 0) ? shape_column_append_null(c, &err) : shape_column_append_int64(c, i, &err);
            break;
        case K_STRINGS: rc = shape_column_append_bytes(c, words + (i & 7), 5 + (size_t)(i & 7), &err); break;
        default:
            rc = shape_column_map_begin_row(c, &err);
            if (rc == SHAPE_OK) rc = shape_column_map_append(c, "traceparent", 11, words, 12, &err);
            if (rc == SHAPE_OK) rc = shape_column_map_end_row(c, &err);
            break;
        }
        if (rc != SHAPE_OK) die(&err);
        maybe_flush(b, c, 0, checksum);
    }
    maybe_flush(b, c, 1, checksum);
    double ns = (now_ns() - t0) / (double)n;
    shape_batch_free(b);
    return ns;
}

int main(void)
{
    static const struct {
        enum kind kind;
        int64_t n;
        const char *label;
    } cases[] = {
        {K_INT64, 50000000, "int64"},
        {K_INT64_NULLS, 50000000, "int64, 1% nulls"},
        {K_STRINGS, 10000000, "utf8, 5-12 bytes"},
        {K_MAPS, 10000000, "map, 1 entry/row"},
    };
    int64_t checksum = 0;
    printf("batches of %d rows, finished and released as they fill; best of 3\n", BATCH_ROWS);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double best = 1e30;
        for (int r = 0; r < 3; r++) {
            double ns = run(cases[k].kind, cases[k].n, &checksum);
            if (ns < best) best = ns;
        }
        printf("%-18s %10lld values  %6.2f ns/value  %7.1f M values/s\n", cases[k].label,
               (long long)cases[k].n, best, 1e3 / best);
    }
    fprintf(stderr, "(checksum %lld)\n", (long long)checksum);
    return 0;
}

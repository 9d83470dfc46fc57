/* profile_engine.c — micro-benchmark of the profile engine (shape/profile.h).
 *
 * Why: `stream-profile` must keep up with the Kafka consumer (issue 5: at
 * least 0.7× a bare consumer's messages/s), so the engine's cost per value
 * is measured apart from decoding and I/O.
 *
 * How: 1M rows of a retail-order-like stream, built once as Arrow batches of
 * 65,536 rows (shape/arrow.h builders): order_id (int64, unique), customer_id
 * (int64, skewed over 50k), store_id (int64, 40 values), order_total (double,
 * 2 % null), status (text, 5 values, skewed), channel (text, 3 values),
 * order_date (timestamp[us, tz=UTC], increasing). Reported, best of 5 runs:
 * the whole table (rows/s, ns per row), then each column profiled alone
 * (ns per value), then the cold paths (document, state save and load).
 * Times are CPU time of the process (CLOCK_PROCESS_CPUTIME_ID), steadier
 * than wall time on a shared machine; the whole-table line gives both.
 * Not built by default. Build against the library:
 *
 *   make && cc -O2 -DNDEBUG -Iinclude -Ibuild/include bench/profile_engine.c \
 *        -Lbuild/lib -lshape -Wl,-rpath,$PWD/build/lib -o build/profile_engine
 *   build/profile_engine
 *
 * or straight from the sources:
 *
 *   cc -O2 -DNDEBUG -D_POSIX_C_SOURCE=200809L -Iinclude -Ibuild/include \
 *      bench/profile_engine.c src/profile/[a-z]*.c src/core/arrow_*.c src/core/error.c \
 *      -ljansson -lxxhash -lpthread -o /tmp/profile_engine
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shape/arrow.h"
#include "shape/profile.h"

#define ROWS 1000000
#define BATCH_ROWS 65536
#define MAX_BATCHES ((ROWS + BATCH_ROWS - 1) / BATCH_ROWS)
#define RUNS 5

static const char *const columns[] = {"order_id", "customer_id", "store_id", "order_total",
                                      "status", "channel", "order_date"};
#define NCOLS 7

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double best_wall; /* of the last run() */

static void die(const char *what, const shape_err *err)
{
    fprintf(stderr, "profile_engine: %s: %s\n", what, err ? err->message : "failed");
    exit(1);
}

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double u01(uint64_t r, int s) { return (double)(mix(r * 16 + (uint64_t)s) >> 11) / 9007199254740992.0; }

static struct ArrowSchema schemas[MAX_BATCHES];
static struct ArrowArray arrays[MAX_BATCHES];
static int nbatches;

static void build(void)
{
    static const char *const status[] = {"completed", "shipped", "processing", "returned", "cancelled"};
    static const char *const channel[] = {"web", "store", "mobile"};
    shape_err err;
    shape_batch *b = NULL;
    shape_column *c[NCOLS];
    const shape_type types[NCOLS] = {SHAPE_TYPE_INT64, SHAPE_TYPE_INT64, SHAPE_TYPE_INT64, SHAPE_TYPE_FLOAT64,
                                     SHAPE_TYPE_UTF8,  SHAPE_TYPE_UTF8,  SHAPE_TYPE_TIMESTAMP_US};
    if (shape_batch_new(&b, &err) != SHAPE_OK) die("batch", &err);
    for (int i = 0; i < NCOLS; i++)
        if (shape_batch_add_column(b, columns[i], strlen(columns[i]), types[i], &c[i], &err) != SHAPE_OK)
            die("column", &err);
    for (uint64_t r = 0; r < ROWS; r++) {
        double s = u01(r, 1), k = u01(r, 2);
        int rc = shape_column_append_int64(c[0], (int64_t)r + 1, &err);
        rc |= shape_column_append_int64(c[1], (int64_t)(s * s * s * 50000) + 1, &err);
        rc |= shape_column_append_int64(c[2], (int64_t)(u01(r, 3) * 40) + 1, &err);
        if (u01(r, 4) < 0.02)
            rc |= shape_column_append_null(c[3], &err);
        else
            rc |= shape_column_append_double(c[3], (double)(int64_t)(u01(r, 5) * u01(r, 6) * 50000) / 100.0, &err);
        const char *st = status[(int)(k * k * 5)], *ch = channel[(int)(u01(r, 7) * 3)];
        rc |= shape_column_append_bytes(c[4], st, strlen(st), &err);
        rc |= shape_column_append_bytes(c[5], ch, strlen(ch), &err);
        rc |= shape_column_append_timestamp(c[6], INT64_C(1640995200000000) + (int64_t)r * 63072000 + (int64_t)(u01(r, 8) * 1e6), &err);
        if (rc) die("append", &err);
        if (shape_batch_end_row(b, &err) != SHAPE_OK) die("row", &err);
        if (shape_batch_rows(b) == BATCH_ROWS || r + 1 == ROWS) {
            if (shape_batch_finish(b, &schemas[nbatches], &arrays[nbatches], &err) != SHAPE_OK) die("finish", &err);
            nbatches++;
        }
    }
    shape_batch_free(b);
}

/* Best time (ns) of profiling every batch, restricted to column `only` (-1: all). */
static double run(int only, shape_profile **keep)
{
    double best = 1e30;
    best_wall = 1e30;
    for (int k = 0; k < RUNS; k++) {
        shape_profile *p = NULL;
        shape_err err;
        if (shape_profile_new("stream", NULL, &p, &err) != SHAPE_OK) die("profile", &err);
        double w0 = now_ns(), t0 = cpu_ns();
        for (int i = 0; i < nbatches; i++) {
            struct ArrowSchema s = schemas[i];
            struct ArrowArray a = arrays[i];
            struct ArrowSchema *cs;
            struct ArrowArray *ca;
            if (only >= 0) { /* a one-column view of the same buffers */
                cs = schemas[i].children[only];
                ca = arrays[i].children[only];
                s.n_children = 1;
                s.children = &cs;
                a.n_children = 1;
                a.children = &ca;
            }
            if (shape_profile_update(p, &s, &a, &err) != SHAPE_OK) die("update", &err);
        }
        double t = cpu_ns() - t0, w = now_ns() - w0;
        if (t < best) best = t;
        if (w < best_wall) best_wall = w;
        if (keep && k == RUNS - 1)
            *keep = p;
        else
            shape_profile_free(p);
    }
    return best;
}

int main(void)
{
    build();
    shape_profile *p = NULL;
    double t = run(-1, &p);
    printf("profile engine: %d rows x %d columns in %d batches of %d (best of %d)\n", ROWS, NCOLS, nbatches,
           BATCH_ROWS, RUNS);
    printf("  whole table     %8.1f ms  %6.2f M rows/s  %7.1f ns/row  %5.1f ns/value  (wall: %.1f ms, %.2f M rows/s)\n",
           t / 1e6, ROWS / t * 1e3, t / ROWS, t / ROWS / NCOLS, best_wall / 1e6, ROWS / best_wall * 1e3);
    static const char *const kinds[NCOLS] = {"int, unique", "int, skewed 50k", "int, 40 values", "float, 2% null",
                                             "text, 5 values", "text, 3 values", "timestamp"};
    for (int c = 0; c < NCOLS; c++) {
        double tc = run(c, NULL);
        printf("  %-12s %-16s %6.1f ns/value\n", columns[c], kinds[c], tc / ROWS);
    }
    const shape_profile *tables[1] = {p};
    char *doc = NULL;
    size_t len = 0;
    uint8_t *state = NULL;
    size_t slen = 0;
    shape_err err;
    double t0 = now_ns();
    if (shape_profile_document(tables, 1, &doc, &len, &err) != SHAPE_OK) die("document", &err);
    double t1 = now_ns();
    if (shape_profile_state_save(p, &state, &slen, &err) != SHAPE_OK) die("save", &err);
    double t2 = now_ns();
    shape_profile *q = NULL;
    if (shape_profile_state_load(state, slen, NULL, &q, &err) != SHAPE_OK) die("load", &err);
    double t3 = now_ns();
    printf("  document %zu bytes in %.2f ms; state %zu bytes: save %.2f ms, load %.2f ms\n", len, (t1 - t0) / 1e6,
           slen, (t2 - t1) / 1e6, (t3 - t2) / 1e6);
    free(doc);
    free(state);
    shape_profile_free(q);
    shape_profile_free(p);
    for (int i = 0; i < nbatches; i++) {
        arrays[i].release(&arrays[i]);
        schemas[i].release(&schemas[i]);
    }
    return 0;
}

/* bench/generate.c — how fast the retail generator turns rows into flat JSON
 * events, on one core.
 *
 * Why: `shape emit` must feed Kafka faster than a broker takes it; the
 * target (issue 6) is >= 2,000,000 events/s per core for `medium`
 * (1,965,400 events), with peak RSS reported (memory must stay flat).
 * How: generate every row of every table in stream order, render each as a
 * flat event exactly as spec-core §3.3 prints it — the columns in order,
 * then "_shape_table", "_shape_seq" and "_shape_event_time" (absent for
 * tables without a timestamp); floats as Python's repr (shortest
 * round-trip, "20.0" for integral values), timestamps as
 * "YYYY-MM-DDTHH:MM:SS.fffffffff" — into a 256 KB buffer that is dropped
 * (checksummed) whenever it fills, as a producer would hand it over.
 * The encoder is the library's (shape/event.h, src/emit/event_json.c), the
 * one `shape emit` uses.
 *
 * Not built by default. Build and run from the repository root after `make`:
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Ibuild/include \
 *      bench/generate.c -Lbuild/lib -lshape -lm -Wl,-rpath,$PWD/build/lib -o build/bench-generate
 *   build/bench-generate [PRESET [SEED [REPEAT]]]     (default: medium 42 3)
 *   build/bench-generate small 42 1 --print | head     (print events instead)
 * Prints per-table and total events/s and MB/s (best of REPEAT runs) and
 * the process's peak RSS (getrusage).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "shape/generate.h"
#include "shape/event.h"
#include "shape/generate_retail.h"

#define BUF_SIZE (256 * 1024)
#define MAX_EVENT 4096

typedef struct out {
    char *buf;
    size_t len;
    uint64_t bytes;
    uint64_t checksum;
    int print;
} out;

static void flush(out *o)
{
    if (o->print) fwrite(o->buf, 1, o->len, stdout);
    /* "drop" the batch, but make it observable so nothing is optimised away */
    for (size_t i = 0; i < o->len; i += 64) o->checksum = o->checksum * 31 + (unsigned char)o->buf[i];
    o->bytes += o->len;
    o->len = 0;
}

/* ---- the run ------------------------------------------------------------ */

typedef struct table_result {
    uint64_t events, bytes;
    double seconds;
} table_result;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run(shape_retail *d, out *o, table_result res[SHAPE_RETAIL_TABLES])
{
    shape_err err;
    shape_gen_row *row = malloc(sizeof *row);
    if (!row) return 1;
    for (size_t t = 0; t < SHAPE_RETAIL_TABLES; t++) {
        shape_retail_table *tab;
        if (shape_retail_table_open_id(d, t, &tab, &err) != SHAPE_OK) {
            fprintf(stderr, "bench: %s\n", err.message);
            free(row);
            return 1;
        }
        /* Key fragments rendered once per table (shape/event.h). */
        const shape_gen_column *cols;
        size_t ncols = shape_retail_columns(t, &cols);
        shape_event_table et;
        if (shape_event_table_init(&et, shape_retail_table_name(t), cols, ncols,
                                   shape_retail_event_time_column(t), &err) != SHAPE_OK) {
            fprintf(stderr, "bench: %s\n", err.message);
            shape_retail_table_free(tab);
            free(row);
            return 1;
        }
        uint64_t rows = shape_retail_table_rows(tab), bytes0 = o->bytes + o->len;
        double t0 = now();
        for (uint64_t r = 0; r < rows; r++) {
            if (shape_retail_table_row(tab, r, row, &err) != SHAPE_OK) {
                fprintf(stderr, "bench: %s\n", err.message);
                shape_retail_table_free(tab);
                free(row);
                return 1;
            }
            if (o->len + MAX_EVENT > BUF_SIZE) flush(o);
            char *p = shape_event_encode(&et, SHAPE_ENVELOPE_FLAT, r, row, o->buf + o->len);
            *p++ = '\n';
            o->len = (size_t)(p - o->buf);
        }
        res[t].seconds = now() - t0;
        res[t].events = rows;
        res[t].bytes = o->bytes + o->len - bytes0;
        shape_retail_table_free(tab);
    }
    flush(o);
    free(row);
    return 0;
}

int main(int argc, char **argv)
{
    const char *preset = argc > 1 ? argv[1] : "medium";
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 42;
    int repeat = argc > 3 ? atoi(argv[3]) : 3;
    int print = argc > 4 && strcmp(argv[4], "--print") == 0;
    if (repeat < 1) repeat = 1;
    shape_err err;
    shape_retail *d;
    double t_open = now();
    if (shape_retail_open(preset, seed, &d, &err) != SHAPE_OK) {
        fprintf(stderr, "bench: %s\n", err.message);
        return 2;
    }
    t_open = now() - t_open;
    out o = {malloc(BUF_SIZE), 0, 0, 0, print};
    if (!o.buf) return 2;
    table_result best[SHAPE_RETAIL_TABLES], cur[SHAPE_RETAIL_TABLES];
    double best_total = 0;
    for (int i = 0; i < repeat; i++) {
        o.bytes = 0;
        if (run(d, &o, cur) != 0) return 2;
        double total = 0;
        for (size_t t = 0; t < SHAPE_RETAIL_TABLES; t++) total += cur[t].seconds;
        if (i == 0 || total < best_total) {
            best_total = total;
            memcpy(best, cur, sizeof best);
        }
        if (print) break;
    }
    if (print) {
        fflush(stdout);
        shape_retail_free(d);
        free(o.buf);
        return 0;
    }
    uint64_t events = 0, bytes = 0;
    printf("retail %s seed %llu: domain opened in %.1f ms; best of %d run(s), one core\n", preset,
           (unsigned long long)seed, t_open * 1e3, repeat);
    printf("%-17s %12s %9s %12s %9s %7s\n", "table", "events", "ms", "events/s", "MB/s", "B/event");
    for (size_t t = 0; t < SHAPE_RETAIL_TABLES; t++) {
        table_result *r = &best[t];
        events += r->events;
        bytes += r->bytes;
        printf("%-17s %12llu %9.1f %12.0f %9.1f %7.1f\n", shape_retail_table_name(t),
               (unsigned long long)r->events, r->seconds * 1e3,
               r->seconds > 0 ? (double)r->events / r->seconds : 0.0,
               r->seconds > 0 ? (double)r->bytes / r->seconds / 1e6 : 0.0,
               r->events ? (double)r->bytes / (double)r->events : 0.0);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%-17s %12llu %9.1f %12.0f %9.1f %7.1f\n", "total", (unsigned long long)events,
           best_total * 1e3, (double)events / best_total, (double)bytes / best_total / 1e6,
           (double)bytes / (double)events);
    printf("peak RSS %.1f MB (checksum %016llx)\n", (double)ru.ru_maxrss / 1024.0,
           (unsigned long long)o.checksum);
    shape_retail_free(d);
    free(o.buf);
    return 0;
}

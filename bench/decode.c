/* bench/decode.c — JSON lines to Arrow batches with shape_decoder, against
 * jansson parsing the same bytes into a DOM, one core.
 *
 * Why: issue 3's target is >= 600 MB/s per core and >= 5x jansson for
 * decoding retail-order-like messages (~200 bytes) into Arrow batches of
 * 65,536 rows, with a peak RSS that depends on the batch size, not on the
 * input size.
 * How: the documents come from bench/orders.h (same seed, same bytes for both
 * sides), generated chunk by chunk — one batch of messages at a time, into a
 * buffer reused for the next chunk — so memory never holds the whole input.
 * Only the parse is timed — around each shape_decoder_decode call + release
 * of the batch, or around the json_loadb + json_decref of each document of
 * the chunk; generating the chunk is not — on two clocks: the thread's CPU
 * time (mb_s, rows_s: "per core", and steady on a shared machine) and wall
 * time (wall_mb_s). Each side runs in its
 * own process (`bench/run` alternates them and takes medians), so each peak
 * RSS (getrusage ru_maxrss) is that side's alone.
 * Output: one line of key=value pairs (mode, events, bytes, seconds, mb_s,
 * rows_s, wall_seconds, wall_mb_s, rows, rss_kb) for bench/run to parse.
 *
 * Both sides run with the shape command's glibc malloc thresholds (it calls
 * src/cli/malloc_tuning.c first, as every C peer of the benchmarks does).
 *
 * Build (bench/lib.sh does this):
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -IBUILD/include -Isrc bench/decode.c \
 *      src/cli/malloc_tuning.c -LBUILD/lib -lshape -ljansson -Wl,-rpath,BUILD/lib -o BUILD/bench/decode
 * Usage: decode shape|jansson [EVENTS [BATCH]]     (default 1000000 65536)
 *        decode dump EVENTS > FILE      (the same documents as JSON lines, for
 *                                        the Kafka benchmarks' topic)
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "orders.h"
#include "shape/decode.h"

#include "cli/commands.h" /* shape_cli_tune_malloc: the shape command's malloc settings */

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The two clocks read around each timed span: this thread's CPU time (what
 * "per core" means, and steady on a shared machine) and wall time. */
typedef struct span {
    double cpu, wall;
} span;

static span span_now(void)
{
    span s = {clock_s(CLOCK_THREAD_CPUTIME_ID), clock_s(CLOCK_MONOTONIC)};
    return s;
}

static void span_add(span *acc, span t0)
{
    span t1 = span_now();
    acc->cpu += t1.cpu - t0.cpu;
    acc->wall += t1.wall - t0.wall;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "decode: out of memory\n");
        exit(2);
    }
    return p;
}

int main(int argc, char **argv)
{
    shape_cli_tune_malloc(); /* as the shape command's main() does (bench/lib.sh links it) */
    if (argc < 2 || (strcmp(argv[1], "shape") && strcmp(argv[1], "jansson") && strcmp(argv[1], "dump"))) {
        fprintf(stderr, "usage: decode shape|jansson [EVENTS [BATCH]] | decode dump EVENTS\n");
        return 2;
    }
    if (strcmp(argv[1], "dump") == 0) {
        uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
        orders_rng r;
        orders_seed(&r, 42);
        char doc[ORDERS_MAX_DOC + 1];
        for (uint64_t i = 0; i < n; i++) {
            size_t len = orders_doc(&r, i, doc);
            doc[len++] = '\n';
            if (fwrite(doc, 1, len, stdout) != len) return 1;
        }
        return fflush(stdout) != 0;
    }
    int use_shape = strcmp(argv[1], "shape") == 0;
    uint64_t events = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
    size_t batch = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : 65536;
    if (batch == 0) batch = 1;

    char *buf = xmalloc(batch * ORDERS_MAX_DOC);
    size_t *off = xmalloc((batch + 1) * sizeof *off);
    shape_message *msgs = xmalloc(batch * sizeof *msgs);

    shape_decoder *dec = NULL;
    shape_err err;
    memset(&err, 0, sizeof err);
    if (use_shape) {
        shape_decode_options o;
        shape_decode_options_init(&o);
        if (shape_decoder_new(&o, NULL, &dec, &err) != 0) {
            fprintf(stderr, "decode: %s\n", err.message);
            return 1;
        }
    }

    orders_rng rng;
    orders_seed(&rng, 42);
    uint64_t done = 0, bytes = 0, rows = 0, acc = 0;
    span busy = {0, 0};
    while (done < events) {
        size_t n = events - done < batch ? (size_t)(events - done) : batch;
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            off[i] = at;
            at += orders_doc(&rng, done + i, buf + at);
        }
        off[n] = at;
        bytes += at;
        if (use_shape) {
            for (size_t i = 0; i < n; i++) {
                memset(&msgs[i], 0, sizeof msgs[i]);
                msgs[i].partition = 0;
                msgs[i].offset = (int64_t)(done + i);
                msgs[i].value = buf + off[i];
                msgs[i].value_len = off[i + 1] - off[i];
            }
            struct ArrowArray arr;
            span t0 = span_now();
            if (shape_decoder_decode(dec, msgs, n, NULL, &arr, &err) != 0) {
                fprintf(stderr, "decode: %s\n", err.message);
                return 1;
            }
            if (arr.release) {
                rows += (uint64_t)arr.length;
                arr.release(&arr);
            }
            span_add(&busy, t0);
        } else {
            span t0 = span_now();
            for (size_t i = 0; i < n; i++) {
                json_error_t je;
                json_t *j = json_loadb(buf + off[i], off[i + 1] - off[i], 0, &je);
                if (!j) {
                    fprintf(stderr, "decode: jansson: %s\n", je.text);
                    return 1;
                }
                acc += json_object_size(j);
                json_decref(j);
                rows++;
            }
            span_add(&busy, t0);
        }
        done += n;
    }
    if (rows != events) {
        fprintf(stderr, "decode: %s produced %llu rows of %llu events\n", argv[1], (unsigned long long)rows,
                (unsigned long long)events);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("mode=%s events=%llu bytes=%llu seconds=%.6f mb_s=%.1f rows_s=%.0f wall_seconds=%.6f wall_mb_s=%.1f "
           "rows=%llu rss_kb=%ld check=%llu\n",
           argv[1], (unsigned long long)events, (unsigned long long)bytes, busy.cpu, (double)bytes / busy.cpu / 1e6,
           (double)rows / busy.cpu, busy.wall, (double)bytes / busy.wall / 1e6, (unsigned long long)rows,
           ru.ru_maxrss, (unsigned long long)acc);
    shape_decoder_free(dec);
    free(buf);
    free(off);
    free(msgs);
    return 0;
}

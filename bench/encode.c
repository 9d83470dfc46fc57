/* bench/encode.c — registry-format encoders in memory, one core: events/s
 * and MB/s per format for the retail order_line and customer tables.
 *
 * Why: issue 8's targets: Avro and Protobuf >= 3M events/s per core, JSON
 * Schema about the speed of JSON. Encoding must never be what limits
 * `shape emit --event-format avro` into a broker.
 * How: the table's flat events are built once as Arrow batches of 1,000
 * rows (src/emit/event_rows.c, as the emit runtime does; not timed); then
 * each format encodes every row of every batch into one reused buffer
 * (cleared per batch, as the emitter's arena is): json = the flat JSON
 * event (shape_kafka_flat_json_row), avro, protobuf, json-schema through
 * shape_kafka_regfmt_encode with the wire header. Best of REPEAT passes.
 * Prints one JSON line per (table, format) and the peak RSS.
 *
 *   bench/run builds it; by hand, after `make`:
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Ibuild/include -Isrc/plugins/kafka \
 *      bench/encode.c build/src/plugins/kafka/libshape_kafka_base.a -Lbuild/lib -lshape \
 *      -ljansson -lcurl -lpthread -lm -Wl,-rpath,$PWD/build/lib -o build/bench-encode
 *   build/bench-encode [PRESET [REPEAT]]      (default: medium 3)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "registry/flat_json.h"
#include "registry/formats.h"
#include "shape/event.h"
#include "shape/generate_retail.h"

#define BATCH 1000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const shape_err *err)
{
    fprintf(stderr, "bench-encode: %s: %s\n", what, err->message);
    exit(1);
}

typedef struct table_batches {
    shape_event_table et;
    shape_event_rows rows;
    struct ArrowArray *batches;
    size_t nbatches;
    uint64_t events;
} table_batches;

static void build(shape_retail *d, size_t table, table_batches *tb)
{
    shape_err err;
    shape_retail_table *t;
    static shape_gen_row row;
    const shape_gen_column *cols;
    size_t ncols = shape_retail_columns(table, &cols);
    if (shape_event_table_init(&tb->et, shape_retail_table_name(table), cols, ncols,
                               shape_retail_event_time_column(table), &err) ||
        shape_event_rows_init(&tb->rows, &tb->et, &err) || shape_retail_table_open_id(d, table, &t, &err))
        die("setup", &err);
    tb->events = shape_retail_rows(d, table);
    tb->nbatches = (size_t)((tb->events + BATCH - 1) / BATCH);
    tb->batches = calloc(tb->nbatches, sizeof *tb->batches);
    for (size_t b = 0; b < tb->nbatches; b++) {
        uint64_t end = (b + 1) * (uint64_t)BATCH < tb->events ? (b + 1) * (uint64_t)BATCH : tb->events;
        for (uint64_t r = b * (uint64_t)BATCH; r < end; r++)
            if (shape_retail_table_row(t, r, &row, &err) || shape_event_rows_append(&tb->rows, r, &row, &err))
                die("rows", &err);
        if (shape_event_rows_finish(&tb->rows, &tb->batches[b], &err)) die("finish", &err);
    }
    shape_retail_table_free(t);
}

/* One pass over every row in format f (-1: plain flat JSON); bytes written. */
static uint64_t pass(table_batches *tb, int f, shape_kafka_regfmt_codec *codec, shape_json_buf *out)
{
    shape_err err;
    uint64_t bytes = 0;
    uint8_t header[SHAPE_KAFKA_WIRE_HEADER_MAX];
    size_t hl = f < 0 ? 0 : shape_kafka_wire_header((shape_kafka_regfmt)f, 100, header);
    for (size_t b = 0; b < tb->nbatches; b++) {
        out->len = 0;
        const struct ArrowArray *a = &tb->batches[b];
        for (int64_t i = 0; i < a->length; i++) {
            if (f < 0) {
                if (shape_kafka_flat_json_row(&tb->rows.schema, a, i, out, &err)) die("json", &err);
                continue;
            }
            if (shape_json_buf_reserve(out, hl) != 0) exit(1);
            memcpy(out->data + out->len, header, hl);
            out->len += hl;
            if (shape_kafka_regfmt_encode(codec, a, i, out, &err)) die("encode", &err);
        }
        bytes += out->len;
    }
    return bytes;
}

int main(int argc, char **argv)
{
    const char *preset = argc > 1 ? argv[1] : "medium";
    int repeat = argc > 2 ? atoi(argv[2]) : 3;
    shape_err err;
    shape_retail *d;
    if (shape_retail_open(preset, 42, &d, &err)) die("open", &err);
    const size_t tables[] = {SHAPE_RETAIL_ORDER_LINE, SHAPE_RETAIL_CUSTOMER};
    const int formats[] = {-1, SHAPE_KAFKA_REGFMT_AVRO, SHAPE_KAFKA_REGFMT_PROTOBUF, SHAPE_KAFKA_REGFMT_JSON_SCHEMA};
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        table_batches tb;
        memset(&tb, 0, sizeof tb);
        build(d, tables[t], &tb);
        for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++) {
            int f = formats[k];
            shape_kafka_regfmt_codec *codec = NULL;
            if (f >= 0 && shape_kafka_regfmt_codec_new((shape_kafka_regfmt)f, tb.et.name, &tb.rows.schema, &codec, &err))
                die("codec", &err);
            double best = 1e30;
            uint64_t bytes = 0;
            for (int r = 0; r < repeat; r++) {
                double t0 = now_s();
                bytes = pass(&tb, f, codec, &out);
                double s = now_s() - t0;
                if (s < best) best = s;
            }
            printf("{\"bench\":\"encode\",\"table\":\"%s\",\"format\":\"%s\",\"events\":%llu,\"bytes\":%llu,"
                   "\"seconds\":%.6f,\"events_per_s\":%.0f,\"mb_per_s\":%.1f}\n",
                   tb.et.name, f < 0 ? "json" : shape_kafka_regfmt_name((shape_kafka_regfmt)f),
                   (unsigned long long)tb.events, (unsigned long long)bytes, best, (double)tb.events / best,
                   (double)bytes / best / 1e6);
            shape_kafka_regfmt_codec_free(codec);
        }
        for (size_t b = 0; b < tb.nbatches; b++) tb.batches[b].release(&tb.batches[b]);
        free(tb.batches);
        shape_event_rows_reset(&tb.rows);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"bench\":\"encode\",\"peak_rss_kb\":%ld}\n", ru.ru_maxrss);
    shape_json_buf_reset(&out);
    shape_retail_free(d);
    return 0;
}

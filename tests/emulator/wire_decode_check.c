/* wire_decode_check.c — decode captured registry-format messages with shape's
 * test decoder and compare them with the flat JSON events (emulator tier).
 *
 * Why: the acceptance test of --event-format avro|protobuf|json-schema is
 * "every message of every table decodes back to exactly the flat JSON
 * event". This tool is the decoding half: the schema comes from the
 * registry (by the id in each message), never from the encoder.
 * Usage: wire_decode_check REGISTRY_URL TABLE DIR
 *   DIR/messages.bin   message values, each after a 4-byte big-endian length
 *   DIR/expected.jsonl the flat JSON event of each message, same order
 * The original Arrow schema (units the formats do not carry) is the retail
 * table's flat-event schema, or with DOMAIN SCALE (e.g. a generation schema
 * PATH.json and its preset) that domain's table's. Prints "N messages decoded and equal" or the
 * first difference, exit 1.
 * Without DIR/expected.jsonl it prints each decoded event instead, one per
 * line on stdout (exit 1 on the first message that does not decode): how
 * tests/compat/test_registry.py reads the original's messages with ours and
 * compares them, value by value, with the original's own events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/client.h"
#include "registry/wire_decode.h"
#include "shape/domain.h"
#include "shape/event.h"
#include "shape/generate_retail.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: wire_decode_check REGISTRY_URL TABLE DIR [DOMAIN SCALE]\n");
        return 2;
    }
    shape_err err;
    shape_err_clear(&err);
    const shape_gen_column *cols;
    size_t ncols;
    int event_time;
    const shape_domain_type *dtype = NULL;
    shape_domain *domain = NULL;
    if (argc == 6) { /* another domain (a generation schema): its table's columns */
        int t = -1;
        if (shape_domain_lookup(argv[4], &dtype, &err) == SHAPE_OK &&
            shape_domain_open(dtype, argv[5], dtype->default_seed, &domain, &err) == SHAPE_OK)
            t = shape_domain_table_find(domain, argv[2]);
        if (t < 0) {
            fprintf(stderr, "wire_decode_check: no table %s in %s: %s\n", argv[2], argv[4], err.message);
            return 2;
        }
        const shape_domain_table *tab = shape_domain_table_at(domain, (size_t)t);
        cols = tab->cols;
        ncols = tab->ncols;
        event_time = tab->event_time_col;
    } else {
        int table = shape_retail_table_find(argv[2]);
        if (table < 0) {
            fprintf(stderr, "wire_decode_check: unknown table %s\n", argv[2]);
            return 2;
        }
        ncols = shape_retail_columns((size_t)table, &cols);
        event_time = shape_retail_event_time_column((size_t)table);
    }
    shape_event_table et;
    shape_event_rows rows;
    shape_kafka_schema_registry_settings s = {.url = argv[1], .ssl_verify = 1};
    shape_kafka_schema_registry_client *reg = NULL;
    shape_kafka_wire_decoder *dec = NULL;
    if (shape_event_table_init(&et, argv[2], cols, ncols, event_time, &err) ||
        shape_event_rows_init(&rows, &et, &err) || shape_kafka_schema_registry_client_new(&s, &reg, &err) ||
        shape_kafka_wire_decoder_new(reg, &rows.schema, &dec, &err)) {
        fprintf(stderr, "wire_decode_check: %s\n", err.message);
        return 1;
    }
    char path[4096];
    size_t mlen, elen;
    snprintf(path, sizeof path, "%s/messages.bin", argv[3]);
    unsigned char *msgs = (unsigned char *)slurp(path, &mlen);
    snprintf(path, sizeof path, "%s/expected.jsonl", argv[3]);
    char *expected = slurp(path, &elen);
    int print_only = !expected && msgs;
    if (print_only) expected = strdup("");
    if (!msgs || !expected) {
        fprintf(stderr, "wire_decode_check: cannot read %s\n", path);
        return 1;
    }
    size_t at = 0, count = 0;
    char *line = expected;
    int rc = 0;
    shape_json_buf out = SHAPE_JSON_BUF_INIT;
    while (at + 4 <= mlen && rc == 0) {
        size_t n = (size_t)msgs[at] << 24 | (size_t)msgs[at + 1] << 16 | (size_t)msgs[at + 2] << 8 | msgs[at + 3];
        at += 4;
        char *nl = print_only ? line : strchr(line, '\n');
        if (!nl || at + n > mlen) {
            fprintf(stderr, "wire_decode_check: message %zu has no expected event or is cut\n", count);
            rc = 1;
            break;
        }
        *nl = 0;
        out.len = 0;
        if (shape_kafka_wire_decode(dec, msgs + at, n, &out, NULL, &err) != SHAPE_OK) {
            fprintf(stderr, "wire_decode_check: %s message %zu: %s\n", argv[2], count, err.message);
            rc = 1;
        } else if (print_only) {
            printf("%s\n", out.data);
        } else if (strcmp(out.data, line) != 0) {
            fprintf(stderr, "wire_decode_check: %s message %zu differs\n  decoded:  %s\n  expected: %s\n",
                    argv[2], count, out.data, line);
            rc = 1;
        }
        at += n;
        if (!print_only) line = nl + 1;
        count++;
    }
    if (rc == 0 && (at != mlen || *line)) {
        fprintf(stderr, "wire_decode_check: %s: messages and expected events differ in number\n", argv[2]);
        rc = 1;
    }
    if (rc == 0 && !print_only) printf("wire_decode_check: %s: %zu messages decoded and equal\n", argv[2], count);
    shape_json_buf_reset(&out);
    free(msgs);
    free(expected);
    shape_kafka_wire_decoder_free(dec);
    shape_kafka_schema_registry_client_free(reg);
    shape_event_rows_reset(&rows);
    shape_domain_free(domain);
    shape_domain_type_free(dtype);
    return rc;
}

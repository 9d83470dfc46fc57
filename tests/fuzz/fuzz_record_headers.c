/* fuzz_record_headers.c — libFuzzer target for a Kafka record's header bytes
 * (src/plugins/kafka/record_headers.h).
 *
 * Why: the kafka:// client reads a fetched record's headers from the broker's
 * bytes by hand (zigzag varints, lengths) on librdkafka 2.0.2; bytes from the
 * network get fuzzed.
 * How: the input is the header bytes, read for every header and for only
 * the first named shape-table. Invariants that abort when broken: a success
 * gives views that lie inside the input, in order and without overlap (only
 * one, of that name, when one is asked for); a refusal gives none; both reads
 * accept or refuse alike; the cache (a parse, then the same bytes copied
 * elsewhere) gives exactly the views of a parse.
 * Seeds (binary) are written by the target itself: run with
 * SHAPE_FUZZ_WRITE_SEEDS=DIR it writes shape emit's two headers, a header
 * without a value and one with a two-byte length, then exits.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_seed.h"
#include "record_headers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("SHAPE_FUZZ_WRITE_SEEDS");
    if (!dir || !dir[0]) return 0;
    static const char shape[] = "\x04\x16" "shape-table" "\x10" "customer" "\x1e" "shape-synthetic" "\x08" "true";
    fuzz_write_seed("fuzz_record_headers", dir, "shape", shape, sizeof shape - 1);
    static const char nul[] = "\x02\x06" "nul" "\x01";
    fuzz_write_seed("fuzz_record_headers", dir, "null_value", nul, sizeof nul - 1);
    uint8_t longer[3 + 1 + 2 + 100] = {0x02, 0x02, 'k', 0xc8, 0x01}; /* count 1, "k", 100 bytes */
    memset(longer + 5, 'v', 100);
    fuzz_write_seed("fuzz_record_headers", dir, "long_value", longer, 105);
    exit(0);
}

static int inside(const void *p, size_t n, const uint8_t *data, size_t size)
{
    const uint8_t *b = p;
    return b >= data && n <= size && b - data <= (ptrdiff_t)(size - n);
}

/* The views of one read (all, or only the first named `only`) checked;
 * *count: how many. */
static void check(const uint8_t *data, size_t size, const char *only, size_t *count)
{
    shape_kafka_header_views views = {0};
    size_t n = 0;
    int rc = shape_kafka_record_headers(data, size, only, only ? strlen(only) : 0, &views, &n);
    if (rc != SHAPE_OK) {
        if (n || views.n) abort();
        free(views.v);
        *count = SIZE_MAX;
        return;
    }
    if (n != views.n || (only && n > 1)) abort();
    const shape_header *h = views.v;
    const uint8_t *last = data;
    for (size_t i = 0; i < n; i++) {
        if (!inside(h[i].name, h[i].name_len, data, size)) abort();
        if ((const uint8_t *)h[i].name < last) abort();
        if (only && (h[i].name_len != strlen(only) || memcmp(h[i].name, only, h[i].name_len) != 0)) abort();
        last = (const uint8_t *)h[i].name + h[i].name_len;
        if (h[i].value) {
            if (!inside(h[i].value, h[i].value_len, data, size) || (const uint8_t *)h[i].value < last) abort();
            last = (const uint8_t *)h[i].value + h[i].value_len;
        } else if (h[i].value_len) {
            abort();
        }
    }
    free(views.v);
    *count = n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t all, one;
    check(data, size, NULL, &all);
    check(data, size, "shape-table", &one);
    /* the same bytes are headers or not whatever is asked of them */
    if ((all == SIZE_MAX) != (one == SIZE_MAX) || (all != SIZE_MAX && one > all)) abort();
    /* through the cache, twice (a parse, then the bytes again at another address): the same views */
    static shape_kafka_header_cache cache;
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    for (int round = 0; round < 2; round++) {
        const uint8_t *at = round ? copy : data;
        shape_kafka_header_views a = {0}, b = {0};
        size_t na = 0, nb = 0;
        int ra = shape_kafka_record_headers_cached(&cache, at, size, NULL, 0, &a, &na);
        int rb = shape_kafka_record_headers(at, size, NULL, 0, &b, &nb);
        if (ra != rb || na != nb || a.n != b.n) abort();
        for (size_t i = 0; i < na; i++)
            if (a.v[i].name != b.v[i].name || a.v[i].name_len != b.v[i].name_len || a.v[i].value != b.v[i].value ||
                a.v[i].value_len != b.v[i].value_len)
                abort();
        free(a.v);
        free(b.v);
    }
    free(copy);
    return 0;
}

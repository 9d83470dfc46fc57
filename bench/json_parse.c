/* bench/json_parse.c — micro-benchmark: shape's JSON scanner vs jansson.
 *
 * Why: message bodies are the hot path of every read; the decode target is
 * >= 600 MB/s per core end to end and >= 5x jansson, so the parser alone must
 * be well above that. This measures the parser layer by itself, on the same
 * bytes for every contender, one core.
 * How: generates N (default 1,000,000) retail-order-like JSON objects of about
 * 200 bytes with a fixed-seed PRNG into one buffer (JSON lines), then times,
 * best of R runs (default 3):
 *   walk         shape_json_next over every member, touching every value
 *                (ints, doubles, string bytes summed); nested values skipped
 *   walk+render  the same, nested values rendered as canonical JSON text
 *                (sorted keys) into a reused buffer — what the decoder does
 *   validate     shape_json_validate of each document
 *   jansson      json_loadb + json_decref (a DOM per document)
 *   jansson+walk json_loadb, then iterate the object touching every value
 * and prints MB/s and documents/s for each, and the ratios to jansson.
 *
 * Not built by default. Build and run from the repository root:
 *   cc -O2 -march=x86-64 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Ibuild/include \
 *      bench/json_parse.c src/core/json_*.c src/core/error.c -ljansson -o /tmp/json_parse
 *   /tmp/json_parse [N] [RUNS]
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shape/json.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned rndn(unsigned n) { return (unsigned)(rnd() % n); }

static const char *const statuses[] = {"placed", "paid", "shipped", "delivered", "returned", "cancelled"};
static const char *const channels[] = {"web", "mobile", "store", "phone"};
static const char *const names[] = {"Ana Silva", "Jos\\u00e9 Garc\\u00eda", "Zo\xc3\xab M\xc3\xbcller",
                                    "Li Wei", "Sam O'Neil", "Fran\\u00e7ois \\\"Frank\\\" Roy"};

static size_t gen_doc(char *w, uint64_t i)
{
    char items[256];
    size_t il = 0;
    unsigned nitems = 1 + rndn(2);
    for (unsigned k = 0; k < nitems; k++)
        il += (size_t)snprintf(items + il, sizeof items - il, "%s{\"sku\":\"A%u\",\"qty\":%u,\"price\":%u.%02u}",
                               k ? "," : "", rndn(10000), 1 + rndn(5), rndn(300), rndn(100));
    /* One document in four names the customer, some names with escapes or UTF-8. */
    char name[64] = "";
    if (rndn(4) == 0) snprintf(name, sizeof name, "\"customer\":\"%s\",", names[rndn(6)]);
    char promo[24];
    if (rndn(3) == 0) snprintf(promo, sizeof promo, "%u", rndn(500));
    else strcpy(promo, "null");
    return (size_t)sprintf(
        w,
        "{\"order_id\":%llu,\"customer_id\":%u,%s\"order_date\":\"2024-%02u-%02uT%02u:%02u:%02u.%06uZ\","
        "\"status\":\"%s\",\"order_total\":%u.%02u,\"channel\":\"%s\",\"promotion_id\":%s,"
        "\"items\":[%s]}\n",
        (unsigned long long)(1000000 + i), rndn(100000), name, 1 + rndn(12), 1 + rndn(28), rndn(24),
        rndn(60), rndn(60), rndn(1000000), statuses[rndn(6)], rndn(2000), rndn(100), channels[rndn(4)], promo, items);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct corpus {
    char *data;
    size_t *off; /* n + 1 offsets */
    size_t n, bytes;
} corpus;

static volatile uint64_t sink;

static void touch_json(json_t *v, uint64_t *acc)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            *acc += strlen(k);
            touch_json(x, acc);
        }
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) touch_json(x, acc);
        break;
    }
    case JSON_STRING: *acc += json_string_length(v); break;
    case JSON_INTEGER: *acc += (uint64_t)json_integer_value(v); break;
    case JSON_REAL: *acc += (uint64_t)(json_real_value(v) * 100.0); break;
    case JSON_TRUE: *acc += 1; break;
    default: break;
    }
}

enum mode { WALK, WALK_RENDER, VALIDATE, JANSSON, JANSSON_WALK };

static double run(const corpus *c, enum mode mode, shape_json_scanner *sc, shape_json_buf *buf)
{
    uint64_t acc = 0;
    double t0 = now();
    for (size_t d = 0; d < c->n; d++) {
        const char *doc = c->data + c->off[d];
        size_t len = c->off[d + 1] - c->off[d];
        if (mode == JANSSON || mode == JANSSON_WALK) {
            json_error_t e;
            json_t *j = json_loadb(doc, len, 0, &e);
            if (!j) {
                fprintf(stderr, "jansson: %s\n", e.text);
                exit(1);
            }
            if (mode == JANSSON_WALK) touch_json(j, &acc);
            json_decref(j);
            continue;
        }
        if (mode == VALIDATE) {
            if (shape_json_validate(sc, doc, len) != 0) exit(1);
            continue;
        }
        shape_json_begin(sc, doc, len);
        shape_json_member m;
        int rc;
        while ((rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
            acc += m.key.len;
            switch (m.kind) {
            case SHAPE_JSON_NUMBER:
                acc += m.num.cls == SHAPE_JSON_INT ? (uint64_t)m.num.i : (uint64_t)(m.num.d * 100.0);
                break;
            case SHAPE_JSON_STRING: acc += m.str.len + (unsigned char)(m.str.len ? m.str.ptr[0] : 0); break;
            case SHAPE_JSON_TRUE: acc += 1; break;
            case SHAPE_JSON_OBJECT:
            case SHAPE_JSON_ARRAY:
                if (mode == WALK_RENDER) {
                    buf->len = 0;
                    if (shape_json_render(sc, buf, 0) != 0) exit(1);
                    acc += buf->len;
                } else {
                    if (shape_json_skip(sc, NULL) != 0) exit(1);
                }
                break;
            default: break;
            }
        }
        if (rc != SHAPE_JSON_DONE) {
            char e[128];
            shape_json_error_format(shape_json_last_error(sc), e, sizeof e);
            fprintf(stderr, "shape: %s in document %zu\n", e, d);
            exit(1);
        }
    }
    double t = now() - t0;
    sink += acc;
    return t;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    corpus c = {0};
    c.n = n;
    c.data = malloc(n * 512);
    c.off = malloc((n + 1) * sizeof *c.off);
    if (!c.data || !c.off) return 1;
    for (size_t i = 0; i < n; i++) {
        c.off[i] = c.bytes;
        c.bytes += gen_doc(c.data + c.bytes, i);
    }
    c.off[n] = c.bytes;
    printf("%zu documents, %.1f MB, %.1f bytes/document; example:\n%.*s", n, (double)c.bytes / 1e6,
           (double)c.bytes / (double)n, (int)(c.off[1] - c.off[0]), c.data);

    shape_json_scanner *sc = shape_json_scanner_new();
    shape_json_buf buf = SHAPE_JSON_BUF_INIT;
    static const char *const label[] = {"shape walk", "shape walk+render", "shape validate", "jansson loadb",
                                        "jansson loadb+walk"};
    double best[5];
    for (int m = 0; m < 5; m++) {
        best[m] = 1e30;
        for (int r = 0; r < runs; r++) {
            double t = run(&c, (enum mode)m, sc, &buf);
            if (t < best[m]) best[m] = t;
        }
        printf("%-20s %8.1f MB/s %12.0f docs/s\n", label[m], (double)c.bytes / best[m] / 1e6,
               (double)n / best[m]);
    }
    printf("walk vs jansson loadb:               %.1fx\n", best[JANSSON] / best[WALK]);
    printf("walk+render vs jansson loadb:        %.1fx\n", best[JANSSON] / best[WALK_RENDER]);
    printf("walk+render vs jansson loadb+walk:   %.1fx\n", best[JANSSON_WALK] / best[WALK_RENDER]);
    shape_json_buf_reset(&buf);
    shape_json_scanner_free(sc);
    free(c.data);
    free(c.off);
    return 0;
}

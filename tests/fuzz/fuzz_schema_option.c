/* fuzz_schema_option.c — libFuzzer target for the `schema` source option
 * (`--option schema=[[NAME, FORMAT], ...]`, src/core/schema_option.c) and
 * the decoder it configures.
 *
 * Why: the option is text a person (or a resumed checkpoint) gives; any
 * value must be refused with a message or give a decoder that decodes
 * bodies into its columns, never a crash, a leak or a sanitizer report.
 * How: the input is split at its first newline: the first part is the
 * option's value (through shape_options_set_kv "schema=...", so JSON or a
 * plain string), the rest JSON lines decoded by a decoder made from the
 * options (shape_decoder_from_options), twice (a first batch and a later
 * one). Invariants (abort when broken): a refusal has a message and its
 * code; an accepted schema's decoder returns batches whose payload columns
 * are the schema's, in its order, and whose rows never exceed the lines.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/decode.h"
#include "shape/options.h"
#include "shape/source.h"

/* The decoder's metadata column names (shape/decode.h): a schema naming one
 * does not make it a payload column. */
static int is_meta(const char *name)
{
    static const char *const meta[] = {"_shape_key",       "_shape_timestamp", "_shape_headers",
                                       "_shape_event_time", "_shape_partition", "_shape_offset"};
    for (size_t i = 0; i < sizeof meta / sizeof meta[0]; i++)
        if (strcmp(name, meta[i]) == 0) return 1;
    return 0;
}

static void check_failure(int rc, const shape_err *err)
{
    if (rc == SHAPE_OK) return;
    if (err->code != rc || !err->message[0] || memchr(err->message, '\0', sizeof err->message) == NULL) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t head = nl ? (size_t)(nl - data) : size;
    char *kv = malloc(head + 8);
    if (!kv) return 0;
    memcpy(kv, "schema=", 7);
    memcpy(kv + 7, data, head);
    kv[head + 7] = '\0';
    shape_options *o = shape_options_new();
    shape_err err;
    shape_err_clear(&err);
    int rc = o ? shape_options_set_kv(o, kv, &err) : SHAPE_ENOMEM;
    free(kv);
    shape_decoder *dec = NULL;
    if (rc == SHAPE_OK) rc = shape_decoder_from_options(o, &dec, &err);
    check_failure(rc, &err);
    if (rc == SHAPE_OK) {
        struct ArrowSchema given;
        int present = 0;
        if (shape_decode_schema_from(o, &given, &present, &err) != SHAPE_OK) abort(); /* the decoder took it */
        /* the bodies: the lines after the first */
        enum { MAX_LINES = 64 };
        shape_message msgs[MAX_LINES];
        size_t n = 0;
        const uint8_t *p = nl ? nl + 1 : data + size, *end = data + size;
        while (p < end && n < MAX_LINES) {
            const uint8_t *q = memchr(p, '\n', (size_t)(end - p));
            if (!q) q = end;
            msgs[n] = (shape_message){.partition = 0, .offset = (int64_t)n, .value = p, .value_len = (size_t)(q - p)};
            n++;
            p = q + 1;
        }
        for (int round = 0; round < 2; round++) {
            struct ArrowSchema schema;
            struct ArrowArray array;
            rc = shape_decoder_decode(dec, msgs, n, &schema, &array, &err);
            check_failure(rc, &err);
            if (rc != SHAPE_OK || !array.release) continue;
            if (array.length > (int64_t)n) abort();
            if (present) { /* the payload columns come first, in the schema's order */
                int64_t k = 0;
                for (int64_t i = 0; i < given.n_children; i++) {
                    const char *name = given.children[i]->name;
                    if (is_meta(name)) continue; /* metadata columns keep their own place */
                    if (k >= schema.n_children || strcmp(schema.children[k]->name, name) != 0) abort();
                    k++;
                }
            }
            array.release(&array);
            schema.release(&schema);
        }
        if (present) given.release(&given);
    }
    shape_decoder_free(dec);
    shape_options_free(o);
    return 0;
}

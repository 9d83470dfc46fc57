/* fuzz_decode.c — libFuzzer target for the message decoder (shape/decode.h).
 *
 * The input is split at '\n' into message bodies (so the fuzzer can build
 * batches of several messages whose kinds disagree, repeat keys, nest,
 * break UTF-8 ...), decoded as a first batch (inference) and again as a
 * second batch (conforming to the frozen schema), with metadata columns on.
 * Every batch produced is checked for its invariants and released; the
 * counters must add up. Any crash, leak, sanitizer report or abort is a bug.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/decode.h"

static void check_batch(const struct ArrowSchema *schema, const struct ArrowArray *array, size_t n)
{
    if (!array->release) return;
    if (array->length < 0 || (size_t)array->length > n || array->n_children != schema->n_children) abort();
    for (int64_t c = 0; c < array->n_children; c++)
        if (array->children[c]->length != array->length) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    shape_message msgs[64];
    shape_header header = {"h", 1, "v", 1};
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= size && n < 64; i++) {
        if (i == size || data[i] == '\n') {
            msgs[n] = (shape_message){.partition = (int32_t)(n % 2), .offset = (int64_t)n,
                                      .value = data + start, .value_len = i - start,
                                      .has_timestamp = (int)(n % 3 != 0), .timestamp_us = 1000 * (int64_t)n,
                                      .key = n % 2 ? "k" : NULL, .key_len = 1,
                                      .headers = &header, .n_headers = n % 2};
            n++;
            start = i + 1;
        }
    }
    shape_decode_options o;
    shape_decode_options_init(&o);
    o.with_key = o.with_headers = o.with_timestamp = o.with_offsets = 1;
    o.nested = size % 2;
    o.event_time_unit = (int)(size % 3);
    shape_decoder *dec;
    shape_err err;
    if (shape_decoder_new(&o, NULL, &dec, &err) != SHAPE_OK) abort();
    size_t half = n / 2;
    for (int pass = 0; pass < 2; pass++) {
        const shape_message *batch = pass == 0 ? msgs : msgs + half;
        size_t count = pass == 0 ? half : n - half;
        struct ArrowSchema schema = {0};
        struct ArrowArray array = {0};
        int rc = shape_decoder_decode(dec, batch, count, &schema, &array, &err);
        if (rc != SHAPE_OK && rc != SHAPE_ELIMIT) abort();
        check_batch(&schema, &array, count);
        if (array.release) {
            array.release(&array);
            schema.release(&schema);
        }
    }
    const shape_decode_stats *st = shape_decoder_stats(dec);
    if (st->messages != (int64_t)n || st->rows + st->undecodable + st->rejected != st->messages) abort();
    shape_decoder_free(dec);
    return 0;
}

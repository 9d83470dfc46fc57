/* fuzz_timestamp.c — libFuzzer target for the ISO-8601 parser and formatter
 * (shape/timestamp.h).
 *
 * Why: every `_shape_event_time` and every ISO string in a message body goes
 * through shape_parse_iso8601, a hand-written scanner over fixed-width
 * fields that reads text which is not NUL-terminated; a read one byte past
 * the end, or an accepted out-of-range field, would be silent in normal
 * tests.
 * How: the input is copied into a buffer of exactly its size (so ASan sees
 * any read past the end) and parsed. Invariants that abort when broken:
 *   - a refusal leaves the output untouched;
 *   - an accepted text starts with an accepted date (its first 10 bytes), and
 *     the instant lies within the clock-plus-zone span of that date
 *     (-24 h < instant - midnight < 48 h);
 *   - an instant within years 0001-9999 formats to 27 bytes that parse back
 *     to the same instant;
 * and the first 8 bytes, as an int64, are formatted into the documented
 * 28-byte buffer (the formatter must not overflow on any instant, and must
 * report the full length it wanted).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/timestamp.h"

#define US_PER_DAY (86400LL * 1000000LL)
#define MIN_US (-62135596800000000LL)   /* 0001-01-01T00:00:00Z */
#define MAX_US (253402300799999999LL)   /* 9999-12-31T23:59:59.999999Z */
#define SENTINEL ((int64_t)0x5a5a5a5a5a5a5a5aLL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    if (!text) abort();
    memcpy(text, data, size);

    int64_t us = SENTINEL;
    if (shape_parse_iso8601(text, size, &us) != 0) {
        if (us != SENTINEL) abort();
    } else {
        int64_t midnight = SENTINEL;
        if (shape_parse_iso8601(text, 10, &midnight) != 0) abort();
        if (midnight % US_PER_DAY != 0) abort();
        int64_t into = us - midnight;
        if (into <= -US_PER_DAY || into >= 2 * US_PER_DAY) abort();
        if (us >= MIN_US && us <= MAX_US) {
            char buf[28];
            int n = shape_format_iso8601_us(us, buf, sizeof buf);
            if (n != 27) abort();
            int64_t again = SENTINEL;
            if (shape_parse_iso8601(buf, (size_t)n, &again) != 0 || again != us) abort();
        }
    }
    free(text);

    if (size >= 8) {
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++) bits |= (uint64_t)data[i] << (8 * i);
        char buf[28];
        int n = shape_format_iso8601_us((int64_t)bits, buf, sizeof buf);
        if (n < 27 || strlen(buf) != 27) abort(); /* truncated when longer, never overflowed */
    }
    return 0;
}

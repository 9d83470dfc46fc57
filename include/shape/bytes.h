/* shape/bytes.h — unaligned word loads and a short-range byte compare, for
 * the hot loops of the parser, the decoder and the profile sketches.
 *
 * Why: comparing a short key or testing eight bytes at once is cheaper as a
 * word operation than as a call to memcmp; these helpers were written three
 * times over before they lived here.
 *
 * How: memcpy into a word (one unaligned load once compiled; little-endian
 * hosts: byte 0 is the low byte); shape_bytes_equal compares with words,
 * the last one overlapping, two overlapping 4-byte words, or bytes, and
 * calls memcmp above 32 bytes. It reads nothing outside either range.
 */
#ifndef SHAPE_BYTES_H
#define SHAPE_BYTES_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t shape_load64(const void *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint32_t shape_load32(const void *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

/* a[0..n) == b[0..n) */
static inline __attribute__((always_inline)) int shape_bytes_equal(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    if (n >= 8) {
        if (n > 32) return memcmp(x, y, n) == 0;
        for (size_t i = 0; i + 8 < n; i += 8)
            if (shape_load64(x + i) != shape_load64(y + i)) return 0;
        return shape_load64(x + n - 8) == shape_load64(y + n - 8);
    }
    if (n >= 4) return shape_load32(x) == shape_load32(y) && shape_load32(x + n - 4) == shape_load32(y + n - 4);
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return 0;
    return 1;
}

SHAPE_API_END
#endif

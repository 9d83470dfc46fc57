/* gen_random.c — the counter-based random source: stream keys and bounded draws.
 *
 * Why: every generated value must be a pure function of (seed, table, column,
 * label, row) so any row can be produced alone (see shape/generate.h).
 * How: names are hashed with FNV-1a and a finaliser; the stream key chains
 * the seed and the three name hashes through the SplitMix64 finaliser, so
 * streams of different columns or seeds are unrelated. The per-draw mixing
 * itself is inline in the header (it is the hottest code of the generator);
 * here is only Lemire's rejection step, taken with probability < n / 2^64.
 */
#include "shape/generate.h"

#include <string.h>

uint64_t shape_gen_hash(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return shape_gen_mix64(h ^ (uint64_t)len);
}

static uint64_t name_hash(const char *s)
{
    return s ? shape_gen_hash(s, strlen(s)) : shape_gen_hash("", 0);
}

shape_gen_stream shape_gen_stream_make(uint64_t seed, const char *table, const char *column,
                                       const char *label)
{
    uint64_t k = shape_gen_mix64(seed ^ 0x5348415045ULL /* "SHAPE" */);
    k = shape_gen_mix64(k ^ name_hash(table));
    k = shape_gen_mix64((k + 0x9e3779b97f4a7c15ULL) ^ name_hash(column));
    k = shape_gen_mix64((k + 0x3c6ef372fe94f82bULL) ^ name_hash(label));
    shape_gen_stream s = {k};
    return s;
}

uint64_t shape_gen_below_slow(shape_gen_stream s, uint64_t row, uint32_t i, uint64_t n)
{
    if (n <= 1) return 0;
    uint64_t threshold = (0 - n) % n; /* 2^64 mod n */
    for (uint32_t attempt = 0;; attempt++) {
        unsigned __int128 m =
            (unsigned __int128)shape_gen_u64(s, row, i + attempt * (1u << 24)) * n;
        if ((uint64_t)m >= threshold) return (uint64_t)(m >> 64);
    }
}

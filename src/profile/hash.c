/* hash.c — canonical value hashing for the sketches.
 *
 * Why: HyperLogLog and SpaceSaving must see equal values as equal whatever
 * their Arrow type (an int 1 and a float 1.0 are the same value), and a
 * profile made here must be bit-comparable with the reference's, which hashes
 * with seeded XXH3-64 over a canonical byte form (reference/spec-core.md
 * §1.10 "Hashing").
 *
 * How: one tag byte followed by the payload, hashed with XXH3_64bits_withSeed
 * (seed 0). Fixed-width payloads are assembled little-endian in a 9-byte
 * stack buffer; short text and binary (under 128 bytes) are hashed in place,
 * XXH3's fixed reads taken from the value and the first word built with the
 * tag in a register (prof_hash_tag_short), longer ones fed through XXH3's
 * streaming state (the streaming and one-shot forms give the same hash for
 * the same bytes). Floats that are
 * integral take the integer form (int64 range as tag 1, [2^63, 2^64) as the
 * uint tag 2), so -0.0 hashes as 0 and 1.0 as 1. The implementations are
 * static inline in profile_internal.h so the column loops inline them; these
 * are the public entry points.
 */
#include "profile_internal.h" /* the inline implementations */

uint64_t prof_hash_bytes_long(uint8_t tag, const void *p, size_t n)
{
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset_withSeed(&st, 0);
    XXH3_64bits_update(&st, &tag, 1);
    XXH3_64bits_update(&st, p, n);
    return XXH3_64bits_digest(&st);
}

uint64_t shape_hash_int(int64_t v) { return prof_hash_int(v); }
uint64_t shape_hash_timestamp(int64_t us) { return prof_hash_timestamp(us); }
uint64_t shape_hash_double(double v) { return prof_hash_double(v); }
uint64_t shape_hash_text(const void *p, size_t n) { return prof_hash_bytes(SHAPE_HASH_STRING, p, n); }
uint64_t shape_hash_binary(const void *p, size_t n) { return prof_hash_bytes(SHAPE_HASH_BINARY, p, n); }

uint64_t shape_hash_bool(int v)
{
    uint8_t buf[2] = {SHAPE_HASH_BOOL, (uint8_t)(v ? 1 : 0)};
    return XXH3_64bits_withSeed(buf, sizeof buf, 0);
}

/* shard.c — splitting one emit stream across processes (`--shard i/n`).
 *
 * Why: one generator thread caps a single `shape emit` process; several
 * processes can share the work only if together they send exactly the
 * unsharded stream — every event once, with its own key — and each can be
 * resumed on its own (DESIGN.md "Scale-out is Kafka's own").
 * How: shard i of n owns the global positions p with p mod n == i (positions
 * in plan order, the sequence the runtime walks), so shards interleave
 * evenly whatever the table sizes. A shard's offsets count its own events:
 * shard offset j is position i + j*n. This file holds the arithmetic and
 * the parsing of "i/n"; the runtime walks the positions and the checkpoint
 * fingerprint carries the shard (checkpoint.c).
 */
#include <stdlib.h>
#include <string.h>

#include "shape/emit.h"

#define SHARD_COUNT_MAX 1000000

uint64_t shape_emit_shard_events(uint64_t total, uint64_t index, uint64_t count)
{
    if (count <= 1) return total;
    if (index >= total) return 0;
    return (total - index + count - 1) / count;
}

static int parse_u64_part(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 7) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

int shape_emit_parse_shard(const char *text, uint64_t *index, uint64_t *count, shape_err *err)
{
    const char *slash = text ? strchr(text, '/') : NULL;
    uint64_t i = 0, n = 0;
    if (!slash || parse_u64_part(text, (size_t)(slash - text), &i) != 0 ||
        parse_u64_part(slash + 1, strlen(slash + 1), &n) != 0 || n < 1 || n > SHARD_COUNT_MAX || i >= n)
        return shape_err_set(err, SHAPE_EINVAL,
                             "--shard must be I/N with 0 <= I < N and 1 <= N <= %d, got '%.40s'",
                             SHARD_COUNT_MAX, text ? text : "");
    *index = i;
    *count = n;
    return SHAPE_OK;
}

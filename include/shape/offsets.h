/* shape/offsets.h — a stream position: the next offset of each partition.
 *
 * Why: shape keeps its own positions (nothing is committed to a broker);
 * every batch a source hands out is paired with the position just after it,
 * and passing that position back as a start resumes exactly there. The same
 * value is what checkpoints store, as the JSON object {"0": 6, "1": 4}
 * (partition ids as decimal strings, in numeric order).
 *
 * How: two parallel arrays kept sorted by partition id; a handful to a few
 * thousand partitions, so binary search and insertion are plenty.
 */
#ifndef SHAPE_OFFSETS_H
#define SHAPE_OFFSETS_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct json_t;

typedef struct shape_offsets {
    size_t n;             /* partitions present */
    size_t cap;
    int32_t *partitions;  /* ascending */
    int64_t *next;        /* next offset to read, per partition */
} shape_offsets;

#define SHAPE_OFFSETS_INIT {0, 0, NULL, NULL}

void shape_offsets_free(shape_offsets *o); /* frees the arrays; o is reusable (empty) */
void shape_offsets_clear(shape_offsets *o);
int shape_offsets_set(shape_offsets *o, int32_t partition, int64_t next, shape_err *err);
/* 1 and *next when the partition is present, else 0. */
int shape_offsets_get(const shape_offsets *o, int32_t partition, int64_t *next);
int shape_offsets_copy(shape_offsets *dst, const shape_offsets *src, shape_err *err);
/* 1 when a advances some partition beyond b (a partition absent from b counts as new). */
int shape_offsets_advances(const shape_offsets *a, const shape_offsets *b);

/* JSON object {"<partition>": next, ...}; new reference, NULL when out of memory. */
struct json_t *shape_offsets_to_json(const shape_offsets *o);
/* From such an object: keys must be decimal partition ids (0..2^31-1), values
 * non-negative integers; errors say which key is wrong and where (`what`,
 * e.g. "checkpoint file x"). o is replaced. */
int shape_offsets_from_json(const struct json_t *obj, shape_offsets *o, const char *what, shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

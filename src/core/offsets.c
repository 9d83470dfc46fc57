/* offsets.c — stream positions {partition: next offset} (shape/offsets.h).
 *
 * Sorted parallel arrays; set() inserts in place. JSON through jansson, the
 * cold path (checkpoints), with keys written in numeric order.
 */
#include "shape/offsets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void shape_offsets_free(shape_offsets *o)
{
    free(o->partitions);
    free(o->next);
    o->partitions = NULL;
    o->next = NULL;
    o->n = o->cap = 0;
}

void shape_offsets_clear(shape_offsets *o) { o->n = 0; }

/* Index of partition p, or -(insertion point) - 1. */
static long find(const shape_offsets *o, int32_t p)
{
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (o->partitions[mid] < p) lo = mid + 1;
        else hi = mid;
    }
    if (lo < o->n && o->partitions[lo] == p) return (long)lo;
    return -(long)lo - 1;
}

int shape_offsets_set(shape_offsets *o, int32_t partition, int64_t next, shape_err *err)
{
    long at = find(o, partition);
    if (at >= 0) {
        o->next[at] = next;
        return SHAPE_OK;
    }
    size_t pos = (size_t)(-at - 1);
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 8;
        int32_t *p = realloc(o->partitions, cap * sizeof *p);
        if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        o->partitions = p;
        int64_t *n = realloc(o->next, cap * sizeof *n);
        if (!n) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        o->next = n;
        o->cap = cap;
    }
    memmove(o->partitions + pos + 1, o->partitions + pos, (o->n - pos) * sizeof *o->partitions);
    memmove(o->next + pos + 1, o->next + pos, (o->n - pos) * sizeof *o->next);
    o->partitions[pos] = partition;
    o->next[pos] = next;
    o->n++;
    return SHAPE_OK;
}

int shape_offsets_get(const shape_offsets *o, int32_t partition, int64_t *next)
{
    long at = find(o, partition);
    if (at < 0) return 0;
    *next = o->next[at];
    return 1;
}

int shape_offsets_copy(shape_offsets *dst, const shape_offsets *src, shape_err *err)
{
    shape_offsets_clear(dst);
    for (size_t i = 0; i < src->n; i++)
        SHAPE_RETURN_NOT_OK(shape_offsets_set(dst, src->partitions[i], src->next[i], err));
    return SHAPE_OK;
}

int shape_offsets_advances(const shape_offsets *a, const shape_offsets *b)
{
    for (size_t i = 0; i < a->n; i++) {
        int64_t prev;
        if (!shape_offsets_get(b, a->partitions[i], &prev) || a->next[i] > prev) return 1;
    }
    return 0;
}

json_t *shape_offsets_to_json(const shape_offsets *o)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < o->n; i++) {
        char key[16];
        snprintf(key, sizeof key, "%d", (int)o->partitions[i]);
        if (json_object_set_new(obj, key, json_integer((json_int_t)o->next[i])) != 0) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

int shape_offsets_from_json(const json_t *obj, shape_offsets *o, const char *what, shape_err *err)
{
    shape_offsets_clear(o);
    if (!json_is_object(obj))
        return shape_err_set(err, SHAPE_EINVAL, "%s: the offset must be a JSON object of partition: next offset",
                             what);
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        char *end = NULL;
        errno = 0;
        long p = strtol(key, &end, 10);
        /* digits only: strtol would also take " 2" or "+2" as 2, two keys for one partition */
        if (!*key || *end || errno || p < 0 || p > INT32_MAX || (key[0] == '0' && key[1]) || key[0] < '0' ||
            key[0] > '9')
            return shape_err_set(err, SHAPE_EINVAL, "%s: offset key '%.32s' is not a partition id", what, key);
        if (!json_is_integer(value) || json_integer_value(value) < 0)
            return shape_err_set(err, SHAPE_EINVAL, "%s: offset of partition %ld is not a non-negative integer",
                                 what, p);
        SHAPE_RETURN_NOT_OK(shape_offsets_set(o, (int32_t)p, (int64_t)json_integer_value(value), err));
    }
    return SHAPE_OK;
}

/* scratch.h (private to src/stream) — grow a set of parallel scratch arrays
 * to one capacity together.
 *
 * Why: the split router (profiler.c: a batch's runs, their order by table,
 * each run's table) and the window profiler (window.c: rows, times, keys)
 * each keep arrays indexed alike, sized to the largest batch seen; both
 * grew them with the same realloc chain, written twice.
 * How: stream_scratch_grow(n, &cap, arrays, count, err) does nothing when
 * n <= cap; otherwise it reallocs each array (the caller's pointer is
 * updated as soon as its realloc succeeds, so nothing leaks on a later
 * failure) and sets cap = n only when all grew. The contents up to the old
 * capacity are kept. STREAM_SCRATCH(p) names one array: the address of the
 * caller's pointer and its element size (read and written with memcpy, so
 * any object pointer type will do).
 */
#ifndef SHAPE_STREAM_SCRATCH_H
#define SHAPE_STREAM_SCRATCH_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/error.h"

typedef struct stream_scratch {
    void *ptr;   /* the address of the caller's T * */
    size_t elem; /* sizeof (T) */
} stream_scratch;

#define STREAM_SCRATCH(p) ((stream_scratch){&(p), sizeof *(p)})

static inline int stream_scratch_grow(size_t n, size_t *cap, const stream_scratch *arrays, size_t count,
                                      shape_err *err)
{
    if (n <= *cap) return SHAPE_OK;
    for (size_t i = 0; i < count; i++) {
        void *old, *grown = NULL;
        memcpy(&old, arrays[i].ptr, sizeof old);
        if (n <= SIZE_MAX / arrays[i].elem) grown = realloc(old, n * arrays[i].elem);
        if (!grown) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        memcpy(arrays[i].ptr, &grown, sizeof grown);
    }
    *cap = n;
    return SHAPE_OK;
}

#endif

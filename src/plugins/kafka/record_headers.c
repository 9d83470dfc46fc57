/* record_headers.c — see record_headers.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/bytes.h"

#include "record_headers.h"

/* A zigzag varint (at most 10 bytes) at *p, before end: 0 if it runs past
 * end or is longer. Lengths below 64 (every header name and most values)
 * are one byte: that case is tried first. */
static inline int read_varint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
    if (*p < end && !(**p & 0x80)) {
        uint8_t b = *(*p)++;
        *out = (int64_t)(b >> 1) ^ -(int64_t)(b & 1);
        return 1;
    }
    uint64_t u = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        u |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
            return 1;
        }
    }
    return 0;
}

/* A length at *p that fits before end (-1 allowed when nullable). */
static inline int read_len(const uint8_t **p, const uint8_t *end, int nullable, int64_t *len)
{
    if (!read_varint(p, end, len)) return 0;
    if (*len == -1 && nullable) return 1;
    return *len >= 0 && *len <= end - *p;
}

int shape_kafka_header_views_reserve(shape_kafka_header_views *views, size_t more)
{
    if (views->v && more <= views->cap - views->n) return SHAPE_OK;
    if (!views->v) views->n = 0;
    size_t cap = views->cap > 64 ? views->cap : 64; /* without v: cap is the size to start at */
    while (cap - views->n < more) {
        if (cap > SIZE_MAX / 2 / sizeof *views->v) return SHAPE_ENOMEM;
        cap *= 2;
    }
    shape_header *v = realloc(views->v, cap * sizeof *v);
    if (!v) return SHAPE_ENOMEM;
    views->v = v;
    views->cap = cap;
    return SHAPE_OK;
}

int shape_kafka_record_headers(const void *bytes, size_t len, const char *only, size_t only_len,
                               shape_kafka_header_views *views, size_t *added)
{
    *added = 0;
    const uint8_t *p = bytes, *end = p + len;
    int64_t count;
    if (len == 0) return SHAPE_OK; /* a record without headers */
    /* each header takes at least two bytes (two lengths) */
    if (!read_varint(&p, end, &count) || count < 0 || count > (end - p) / 2) return SHAPE_EINVAL;
    if (count == 0) return p == end ? SHAPE_OK : SHAPE_EINVAL;
    if (shape_kafka_header_views_reserve(views, only ? 1 : (size_t)count) != SHAPE_OK) return SHAPE_ENOMEM;
    shape_header *out = views->v + views->n;
    size_t n = 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t klen, vlen;
        if (!read_len(&p, end, 0, &klen)) return SHAPE_EINVAL;
        const char *name = (const char *)p;
        p += klen;
        if (!read_len(&p, end, 1, &vlen)) return SHAPE_EINVAL;
        if (!only || (n == 0 && (size_t)klen == only_len && shape_bytes_equal(name, only, only_len)))
            out[n++] = (shape_header){name, (size_t)klen, vlen < 0 ? NULL : p, vlen < 0 ? 0 : (size_t)vlen};
        if (vlen > 0) p += vlen;
    }
    if (p != end) return SHAPE_EINVAL;
    views->n += n;
    *added = n;
    return SHAPE_OK;
}

int shape_kafka_record_headers_cached(shape_kafka_header_cache *cache, const void *bytes, size_t len, const char *only,
                                      size_t only_len, shape_kafka_header_views *views, size_t *added)
{
    const uint8_t *b = bytes;
    if (len && len == cache->len && memcmp(b, cache->bytes, len) == 0) { /* the last record's headers again */
        *added = 0;
        if (shape_kafka_header_views_reserve(views, cache->n) != SHAPE_OK) return SHAPE_ENOMEM;
        for (size_t i = 0; i < cache->n; i++)
            views->v[views->n + i] = (shape_header){(const char *)b + cache->at[i].name, cache->at[i].name_len,
                                                    cache->at[i].has_value ? b + cache->at[i].value : NULL,
                                                    cache->at[i].value_len};
        views->n += cache->n;
        *added = cache->n;
        return SHAPE_OK;
    }
    size_t first = views->n;
    int rc = shape_kafka_record_headers(bytes, len, only, only_len, views, added);
    cache->len = 0;
    if (rc != SHAPE_OK || len > sizeof cache->bytes || *added > SHAPE_KAFKA_HEADER_CACHE_VIEWS) return rc;
    for (size_t i = 0; i < *added; i++) {
        const shape_header *h = &views->v[first + i];
        cache->at[i].name = (uint32_t)((const uint8_t *)h->name - b);
        cache->at[i].name_len = (uint32_t)h->name_len;
        cache->at[i].has_value = h->value != NULL;
        cache->at[i].value = h->value ? (uint32_t)((const uint8_t *)h->value - b) : 0;
        cache->at[i].value_len = (uint32_t)h->value_len;
    }
    memcpy(cache->bytes, b, len);
    cache->n = *added;
    cache->len = len;
    return SHAPE_OK;
}

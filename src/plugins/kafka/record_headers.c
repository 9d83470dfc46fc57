/* record_headers.c — see record_headers.h. */
#include <stdint.h>
#include <stdlib.h>

#include "record_headers.h"

/* A zigzag varint (at most 10 bytes) at *p, before end: 0 if it runs past
 * end or is longer. */
static int read_varint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
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
static int read_len(const uint8_t **p, const uint8_t *end, int nullable, int64_t *len)
{
    if (!read_varint(p, end, len)) return 0;
    if (*len == -1 && nullable) return 1;
    return *len >= 0 && *len <= end - *p;
}

int shape_kafka_record_headers(const void *bytes, size_t len, shape_header **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const uint8_t *p = bytes, *end = p + len;
    int64_t count;
    if (len == 0) return SHAPE_OK; /* a record without headers */
    /* each header takes at least two bytes (two lengths) */
    if (!read_varint(&p, end, &count) || count < 0 || count > (end - p) / 2) return SHAPE_EINVAL;
    if (count == 0) return p == end ? SHAPE_OK : SHAPE_EINVAL;
    shape_header *views = malloc((size_t)count * sizeof *views);
    if (!views) return SHAPE_ENOMEM;
    for (int64_t i = 0; i < count; i++) {
        int64_t klen, vlen;
        if (!read_len(&p, end, 0, &klen)) goto bad;
        const char *name = (const char *)p;
        p += klen;
        if (!read_len(&p, end, 1, &vlen)) goto bad;
        views[i] = (shape_header){name, (size_t)klen, vlen < 0 ? NULL : p, vlen < 0 ? 0 : (size_t)vlen};
        if (vlen > 0) p += vlen;
    }
    if (p != end) goto bad;
    *out = views;
    *n = (size_t)count;
    return SHAPE_OK;
bad:
    free(views);
    return SHAPE_EINVAL;
}

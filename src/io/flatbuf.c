/* flatbuf.c — the back-to-front FlatBuffers builder of flatbuf.h.
 *
 * How: bytes are prepended at buf + cap - used; growing moves the written
 * tail to the end of a buffer twice as large. A table's fields are
 * prepended after its children, then its soffset to the vtable (patched
 * once the vtable, prepended right before the table, is written):
 * soffset = table address - vtable address, field offsets in the vtable =
 * field address - table address, both from the refs.
 */
#include "flatbuf.h"

#include <stdlib.h>
#include <string.h>

void fb_reset(fb_builder *b)
{
    b->used = 0;
    b->minalign = 8;
    b->oom = 0;
    b->n_fields = -1;
}

void fb_release(fb_builder *b)
{
    free(b->buf);
    memset(b, 0, sizeof *b);
}

static int grow(fb_builder *b, size_t n)
{
    if (b->oom) return -1;
    if (b->cap - b->used >= n) return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap - b->used < n) cap *= 2;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        b->oom = 1;
        return -1;
    }
    if (b->used) memcpy(buf + cap - b->used, b->buf + b->cap - b->used, b->used);
    free(b->buf);
    b->buf = buf;
    b->cap = cap;
    return 0;
}

static void push(fb_builder *b, const void *p, size_t n)
{
    if (grow(b, n) != 0) return;
    b->used += n;
    if (p)
        memcpy(b->buf + b->cap - b->used, p, n);
    else
        memset(b->buf + b->cap - b->used, 0, n);
}

/* Pad so that after `extra` more bytes the position is a multiple of align. */
static void prep(fb_builder *b, size_t align, size_t extra)
{
    if (align > b->minalign) b->minalign = align;
    size_t pad = (0 - (b->used + extra)) & (align - 1);
    if (pad) push(b, NULL, pad);
}

static void push_ref(fb_builder *b, fb_ref ref)
{
    prep(b, 4, 4);
    uint32_t v = (uint32_t)(b->used + 4 - ref);
    push(b, &v, 4);
}

fb_ref fb_string(fb_builder *b, const char *s, size_t len)
{
    prep(b, 4, len + 1);
    push(b, NULL, 1);
    push(b, s, len);
    uint32_t n = (uint32_t)len;
    push(b, &n, 4);
    return (fb_ref)b->used;
}

fb_ref fb_struct_vector(fb_builder *b, const void *items, size_t size, size_t n, size_t align)
{
    prep(b, align > 4 ? align : 4, size * n);
    if (n) push(b, items, size * n);
    prep(b, 4, 4);
    uint32_t len = (uint32_t)n;
    push(b, &len, 4);
    return (fb_ref)b->used;
}

fb_ref fb_ref_vector(fb_builder *b, const fb_ref *refs, size_t n)
{
    prep(b, 4, 4 * n);
    for (size_t i = n; i-- > 0;) push_ref(b, refs[i]);
    uint32_t len = (uint32_t)n;
    push(b, &len, 4);
    return (fb_ref)b->used;
}

void fb_table_start(fb_builder *b)
{
    b->table_start = b->used;
    b->n_fields = 0;
    memset(b->fields, 0, sizeof b->fields);
}

static void field(fb_builder *b, int id)
{
    if (id < 0 || id >= FB_MAX_FIELDS) return;
    b->fields[id] = (fb_ref)b->used;
    if (id + 1 > b->n_fields) b->n_fields = id + 1;
}

#define FB_ADD(NAME, TYPE)                                    \
    void NAME(fb_builder *b, int id, TYPE v)                  \
    {                                                         \
        prep(b, sizeof v, sizeof v);                          \
        push(b, &v, sizeof v);                                \
        field(b, id);                                         \
    }
FB_ADD(fb_add_u8, uint8_t)
FB_ADD(fb_add_i16, int16_t)
FB_ADD(fb_add_i32, int32_t)
FB_ADD(fb_add_i64, int64_t)

void fb_add_ref(fb_builder *b, int id, fb_ref ref)
{
    push_ref(b, ref);
    field(b, id);
}

fb_ref fb_table_end(fb_builder *b)
{
    prep(b, 4, 4);
    push(b, NULL, 4); /* soffset, patched below */
    fb_ref table = (fb_ref)b->used;
    for (int i = b->n_fields; i-- > 0;) {
        uint16_t off = b->fields[i] ? (uint16_t)(table - b->fields[i]) : 0;
        push(b, &off, 2);
    }
    uint16_t size = (uint16_t)(table - b->table_start);
    uint16_t vsize = (uint16_t)(4 + 2 * b->n_fields);
    push(b, &size, 2);
    push(b, &vsize, 2);
    fb_ref vtable = (fb_ref)b->used;
    if (!b->oom) {
        int32_t so = (int32_t)(vtable - table);
        memcpy(b->buf + b->cap - table, &so, 4);
    }
    b->n_fields = -1;
    return table;
}

int fb_finish(fb_builder *b, fb_ref root, const uint8_t **data, size_t *len)
{
    prep(b, b->minalign, 4);
    push_ref(b, root);
    if (b->oom) return -1;
    *data = b->buf + b->cap - b->used;
    *len = b->used;
    return 0;
}

/* flatbuf.h — a small FlatBuffers builder, enough for Arrow IPC metadata.
 *
 * Why: an Arrow IPC message's metadata is a FlatBuffer (the Message, Schema
 * and RecordBatch tables of the Arrow format). Debian 12 has no C
 * FlatBuffers library, and the IPC writer needs only tables, strings,
 * vectors of structs and vectors of tables, written once per message.
 *
 * How: the buffer is built back to front, as FlatBuffers builders do, so a
 * child (string, vector, sub-table) is written before the parent that points
 * at it and every offset points forward. A "ref" is the number of bytes
 * written when an object was finished (its distance from the buffer's end);
 * the forward offset from a slot to an object is the difference of their
 * refs. One table is open at a time: build its children first, then
 * fb_table_start, the fields, fb_table_end. Alignment is kept relative to
 * the end, and fb_finish pads the whole buffer to 8 bytes, so it holds from
 * the start too. Out of memory is sticky: every call after it does nothing
 * and fb_finish reports it. Little-endian hosts only (the wire format is
 * little-endian; checked at compile time).
 */
#ifndef SHAPE_IO_FLATBUF_H
#define SHAPE_IO_FLATBUF_H

#include <stddef.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the FlatBuffers builder writes host-order scalars: little-endian hosts only"
#endif

#define FB_MAX_FIELDS 16

typedef uint32_t fb_ref;

typedef struct fb_builder {
    uint8_t *buf;
    size_t cap, used, minalign;
    int oom;
    size_t table_start;
    int n_fields;
    fb_ref fields[FB_MAX_FIELDS];
} fb_builder;

/* Start (or restart, keeping the memory) an empty buffer. */
void fb_reset(fb_builder *b);
void fb_release(fb_builder *b);

fb_ref fb_string(fb_builder *b, const char *s, size_t len);
/* A vector of n structs of `size` bytes each (laid out as in memory), aligned to `align`. */
fb_ref fb_struct_vector(fb_builder *b, const void *items, size_t size, size_t n, size_t align);
/* A vector of n offsets to objects already written. */
fb_ref fb_ref_vector(fb_builder *b, const fb_ref *refs, size_t n);

void fb_table_start(fb_builder *b);
void fb_add_u8(fb_builder *b, int id, uint8_t v);
void fb_add_i16(fb_builder *b, int id, int16_t v);
void fb_add_i32(fb_builder *b, int id, int32_t v);
void fb_add_i64(fb_builder *b, int id, int64_t v);
void fb_add_ref(fb_builder *b, int id, fb_ref ref);
fb_ref fb_table_end(fb_builder *b);

/* Write the root offset; *data and *len are the finished buffer (inside b,
 * valid until the next call on b). 0, or -1 when memory ran out. */
int fb_finish(fb_builder *b, fb_ref root, const uint8_t **data, size_t *len);

#endif

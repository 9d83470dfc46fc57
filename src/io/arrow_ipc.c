/* arrow_ipc.c — the Arrow IPC stream writer (format and rules: shape/arrow_ipc.h).
 *
 * How, per batch:
 *   1. Walk the columns depth first (the format's order), appending for each
 *      node its FieldNode (length, null count) and its buffers (pointer and
 *      length into the caller's array, or into scratch memory when a slice
 *      has to be re-based: a bitmap starting inside a byte, offsets not
 *      starting at 0).
 *   2. Lay the buffers out in the body, each at an 8-byte aligned offset.
 *   3. Build the Message FlatBuffer (io/flatbuf.h): RecordBatch with the
 *      nodes and buffers, the batch's schema metadata as custom_metadata.
 *   4. fwrite the prefix, the metadata, then each buffer and its padding.
 * The schema message is built the same way from the fields, once. The
 * nodes, buffers and scratch lists keep their memory from batch to batch.
 */
#include "shape/arrow_ipc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flatbuf.h"
#include "writer_common.h"

/* Message header and type union members of the Arrow format (Message.fbs, Schema.fbs). */
enum { HDR_SCHEMA = 1, HDR_RECORD_BATCH = 3 };
enum {
    T_NULL = 1, T_INT = 2, T_FLOAT = 3, T_BINARY = 4, T_UTF8 = 5, T_BOOL = 6, T_DECIMAL = 7, T_DATE = 8,
    T_TIME = 9, T_TIMESTAMP = 10, T_LIST = 12, T_STRUCT = 13, T_FIXED_BINARY = 15, T_FIXED_LIST = 16,
    T_MAP = 17, T_DURATION = 18, T_LARGE_BINARY = 19, T_LARGE_UTF8 = 20, T_LARGE_LIST = 21
};
enum { METADATA_V5 = 4 };

/* How a node's buffers are laid out. */
typedef enum layout { L_NULL, L_BITS, L_FIXED, L_VAR32, L_VAR64, L_STRUCT, L_LIST32, L_LIST64, L_FIXED_LIST } layout;

typedef struct node_type {
    layout layout;
    int width;      /* L_FIXED: bytes per value; L_FIXED_LIST: values per list */
    int type;       /* T_* */
    int a, b, c;    /* the type table's fields (bit width, signedness, unit, ...) */
    const char *tz; /* timestamp zone (NULL: none) */
} node_type;

static int parse_int(const char *s, long lo, long hi, const char **end, long *out)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || errno || v < lo || v > hi) return 0;
    *end = e;
    *out = v;
    return 1;
}

/* The node type of a format string with n_children children; 0 when not writable. */
static int classify(const char *f, int64_t n_children, node_type *t)
{
    memset(t, 0, sizeof *t);
    int single = f[0] && !f[1];
    int leaf = n_children == 0;
    const char *end;
    long v, p, s, bits = 128;
    if (single && leaf) {
        static const char ints[] = "cCsSiIlL";
        const char *k = strchr(ints, f[0]);
        if (k) {
            int i = (int)(k - ints);
            *t = (node_type){L_FIXED, 1 << (i / 2), T_INT, 8 << (i / 2), !(i % 2), 0, NULL};
            return 1;
        }
        switch (f[0]) {
        case 'n': *t = (node_type){L_NULL, 0, T_NULL, 0, 0, 0, NULL}; return 1;
        case 'b': *t = (node_type){L_BITS, 0, T_BOOL, 0, 0, 0, NULL}; return 1;
        case 'e': *t = (node_type){L_FIXED, 2, T_FLOAT, 0, 0, 0, NULL}; return 1;
        case 'f': *t = (node_type){L_FIXED, 4, T_FLOAT, 1, 0, 0, NULL}; return 1;
        case 'g': *t = (node_type){L_FIXED, 8, T_FLOAT, 2, 0, 0, NULL}; return 1;
        case 'z': *t = (node_type){L_VAR32, 0, T_BINARY, 0, 0, 0, NULL}; return 1;
        case 'u': *t = (node_type){L_VAR32, 0, T_UTF8, 0, 0, 0, NULL}; return 1;
        case 'Z': *t = (node_type){L_VAR64, 0, T_LARGE_BINARY, 0, 0, 0, NULL}; return 1;
        case 'U': *t = (node_type){L_VAR64, 0, T_LARGE_UTF8, 0, 0, 0, NULL}; return 1;
        default: return 0;
        }
    }
    if (f[0] == 'w' && f[1] == ':' && leaf) {
        if (!parse_int(f + 2, 1, INT32_MAX, &end, &v) || *end) return 0;
        *t = (node_type){L_FIXED, (int)v, T_FIXED_BINARY, (int)v, 0, 0, NULL};
        return 1;
    }
    if (f[0] == 'd' && f[1] == ':' && leaf) {
        if (!parse_int(f + 2, 1, 76, &end, &p) || *end != ',') return 0;
        if (!parse_int(end + 1, -100, 100, &end, &s)) return 0;
        if (*end == ',' && !parse_int(end + 1, 32, 256, &end, &bits)) return 0;
        if (*end || (bits != 32 && bits != 64 && bits != 128 && bits != 256)) return 0;
        *t = (node_type){L_FIXED, (int)bits / 8, T_DECIMAL, (int)p, (int)s, (int)bits, NULL};
        return 1;
    }
    if (f[0] == 't' && leaf && f[1] && f[2]) {
        int unit = f[2] == 's' ? 0 : f[2] == 'm' ? 1 : f[2] == 'u' ? 2 : f[2] == 'n' ? 3 : -1;
        switch (f[1]) {
        case 'd':
            if (f[3] || (f[2] != 'D' && f[2] != 'm')) return 0;
            *t = (node_type){L_FIXED, f[2] == 'D' ? 4 : 8, T_DATE, f[2] == 'D' ? 0 : 1, 0, 0, NULL};
            return 1;
        case 't':
            if (f[3] || unit < 0) return 0;
            *t = (node_type){L_FIXED, unit < 2 ? 4 : 8, T_TIME, unit, unit < 2 ? 32 : 64, 0, NULL};
            return 1;
        case 's':
            if (unit < 0 || f[3] != ':') return 0;
            *t = (node_type){L_FIXED, 8, T_TIMESTAMP, unit, 0, 0, f[4] ? f + 4 : NULL};
            return 1;
        case 'D':
            if (f[3] || unit < 0) return 0;
            *t = (node_type){L_FIXED, 8, T_DURATION, unit, 0, 0, NULL};
            return 1;
        default: return 0;
        }
    }
    if (f[0] == '+') {
        if (f[1] == 's' && !f[2]) {
            *t = (node_type){L_STRUCT, 0, T_STRUCT, 0, 0, 0, NULL};
            return 1;
        }
        if (n_children != 1) return 0;
        if (f[1] == 'l' && !f[2]) *t = (node_type){L_LIST32, 0, T_LIST, 0, 0, 0, NULL};
        else if (f[1] == 'L' && !f[2]) *t = (node_type){L_LIST64, 0, T_LARGE_LIST, 0, 0, 0, NULL};
        else if (f[1] == 'm' && !f[2]) *t = (node_type){L_LIST32, 0, T_MAP, 0, 0, 0, NULL};
        else if (f[1] == 'w' && f[2] == ':') {
            if (!parse_int(f + 3, 1, INT32_MAX, &end, &v) || *end) return 0;
            *t = (node_type){L_FIXED_LIST, (int)v, T_FIXED_LIST, (int)v, 0, 0, NULL};
        } else
            return 0;
        return 1;
    }
    return 0;
}

static int buffers_of(layout l)
{
    switch (l) {
    case L_NULL: return 0;
    case L_STRUCT:
    case L_FIXED_LIST: return 1;
    case L_VAR32:
    case L_VAR64: return 3;
    default: return 2;
    }
}

static int check_field(const struct ArrowSchema *f, const char *column, shape_err *err)
{
    node_type t;
    const char *fmt = f->format ? f->format : "";
    if (f->dictionary)
        return shape_err_set(err, SHAPE_EINVAL,
                             "cannot write column '%.64s' as Arrow IPC: dictionary-encoded columns are not supported",
                             column);
    if (!classify(fmt, f->n_children, &t))
        return shape_err_set(err, SHAPE_EINVAL, "cannot write column '%.64s' of Arrow format '%.32s' as Arrow IPC",
                             column, fmt);
    if (t.type == T_MAP && strcmp(f->children[0]->format ? f->children[0]->format : "", "+s") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "cannot write column '%.64s': a map's child must be a struct", column);
    for (int64_t i = 0; i < f->n_children; i++) SHAPE_RETURN_NOT_OK(check_field(f->children[i], column, err));
    return SHAPE_OK;
}

int shape_ipc_check_schema(const struct ArrowSchema *schema, shape_err *err)
{
    if (!schema || !schema->format || strcmp(schema->format, "+s") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "an Arrow IPC stream needs a struct ('+s') schema");
    for (int64_t i = 0; i < schema->n_children; i++) {
        const struct ArrowSchema *c = schema->children[i];
        SHAPE_RETURN_NOT_OK(check_field(c, c->name ? c->name : "", err));
    }
    return SHAPE_OK;
}

/* ---- the writer ------------------------------------------------------------ */

typedef struct field_node {
    int64_t length, null_count;
} field_node;
typedef struct body_buffer {
    int64_t offset, length;
} body_buffer;

struct shape_ipc_writer {
    FILE *out;
    fb_builder fb;
    struct ArrowSchema first; /* deep copy of the first batch's schema (release NULL before) */
    int started;
    int64_t batches, bytes;
    field_node *nodes;
    size_t n_nodes, cap_nodes;
    body_buffer *spans; /* offset in the body, length */
    const void **data;  /* where each buffer's bytes are */
    size_t n_bufs, cap_bufs;
    void **scratch;
    size_t n_scratch, cap_scratch;
};

int shape_ipc_writer_new(FILE *out, shape_ipc_writer **w, shape_err *err)
{
    *w = calloc(1, sizeof **w);
    if (!*w) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    (*w)->out = out;
    fb_reset(&(*w)->fb);
    return SHAPE_OK;
}

static void drop_scratch(shape_ipc_writer *w)
{
    for (size_t i = 0; i < w->n_scratch; i++) free(w->scratch[i]);
    w->n_scratch = 0;
}

void shape_ipc_writer_free(shape_ipc_writer *w)
{
    if (!w) return;
    drop_scratch(w);
    free(w->scratch);
    free(w->nodes);
    free(w->spans);
    free(w->data);
    fb_release(&w->fb);
    if (w->first.release) w->first.release(&w->first);
    free(w);
}

int64_t shape_ipc_writer_batches(const shape_ipc_writer *w) { return w->batches; }
int64_t shape_ipc_writer_bytes(const shape_ipc_writer *w) { return w->bytes; }

static int oom(shape_err *err) { return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing Arrow IPC"); }

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need) cap2 *= 2;
    void *q = realloc(*p, cap2 * size);
    if (!q) return -1;
    *p = q;
    *cap = cap2;
    return 0;
}

static void *scratch(shape_ipc_writer *w, size_t n)
{
    if (grow((void **)&w->scratch, &w->cap_scratch, w->n_scratch + 1, sizeof *w->scratch) != 0) return NULL;
    void *p = calloc(1, n ? n : 1);
    if (p) w->scratch[w->n_scratch++] = p;
    return p;
}

static int add_node(shape_ipc_writer *w, int64_t length, int64_t nulls, shape_err *err)
{
    if (grow((void **)&w->nodes, &w->cap_nodes, w->n_nodes + 1, sizeof *w->nodes) != 0) return oom(err);
    w->nodes[w->n_nodes++] = (field_node){length, nulls};
    return SHAPE_OK;
}

static int add_buffer(shape_ipc_writer *w, const void *p, int64_t len, shape_err *err)
{
    if (w->n_bufs == w->cap_bufs) {
        size_t cap = w->cap_bufs ? w->cap_bufs * 2 : 64;
        body_buffer *spans = realloc(w->spans, cap * sizeof *spans);
        if (!spans) return oom(err);
        w->spans = spans;
        const void **data = realloc(w->data, cap * sizeof *data);
        if (!data) return oom(err);
        w->data = data;
        w->cap_bufs = cap;
    }
    w->spans[w->n_bufs] = (body_buffer){0, len};
    w->data[w->n_bufs++] = p;
    return SHAPE_OK;
}

/* Bits [start, start + len) of a bitmap, from bit 0 of a buffer. */
static int add_bits(shape_ipc_writer *w, const uint8_t *bits, int64_t start, int64_t len, shape_err *err)
{
    int64_t nbytes = (len + 7) / 8;
    if (start % 8 == 0) return add_buffer(w, len ? bits + start / 8 : NULL, nbytes, err);
    uint8_t *dst = scratch(w, (size_t)nbytes);
    if (!dst) return oom(err);
    int64_t k = start / 8, last = (start + len - 1) / 8;
    int s = (int)(start % 8);
    for (int64_t i = 0; i < nbytes; i++, k++) {
        unsigned v = bits[k] >> s;
        if (k + 1 <= last) v |= (unsigned)bits[k + 1] << (8 - s);
        dst[i] = (uint8_t)v;
    }
    return add_buffer(w, dst, nbytes, err);
}

static int64_t count_nulls(const uint8_t *bits, int64_t start, int64_t len)
{
    int64_t valid = 0, i = start, end = start + len;
    for (; i < end && i % 8; i++) valid += (bits[i / 8] >> (i % 8)) & 1;
    for (; i + 8 <= end; i += 8) valid += __builtin_popcount(bits[i / 8]);
    for (; i < end; i++) valid += (bits[i / 8] >> (i % 8)) & 1;
    return len - valid;
}

/* Offsets [start, start + len] of a var-length or list node re-based to 0
 * (in place when they start at 0); *first and *last are the range they span. */
static int add_offsets(shape_ipc_writer *w, const void *buf, int wide, int64_t start, int64_t len, int64_t *first,
                       int64_t *last, shape_err *err)
{
    static const int64_t zero = 0;
    if (len == 0 || !buf) {
        *first = *last = 0;
        return add_buffer(w, &zero, wide ? 8 : 4, err);
    }
    if (wide) {
        const int64_t *o = (const int64_t *)buf + start;
        *first = o[0];
        *last = o[len];
        if (o[0] == 0) return add_buffer(w, o, (len + 1) * 8, err);
        int64_t *d = scratch(w, (size_t)(len + 1) * 8);
        if (!d) return oom(err);
        for (int64_t i = 0; i <= len; i++) d[i] = o[i] - o[0];
        return add_buffer(w, d, (len + 1) * 8, err);
    }
    const int32_t *o = (const int32_t *)buf + start;
    *first = o[0];
    *last = o[len];
    if (o[0] == 0) return add_buffer(w, o, (len + 1) * 4, err);
    int32_t *d = scratch(w, (size_t)(len + 1) * 4);
    if (!d) return oom(err);
    for (int64_t i = 0; i <= len; i++) d[i] = o[i] - o[0];
    return add_buffer(w, d, (len + 1) * 4, err);
}

/* One node and its subtree: rows [start, start + len) of a's buffers
 * (physical indexes: every offset above and a's own already applied). */
static int walk(shape_ipc_writer *w, const struct ArrowSchema *f, const struct ArrowArray *a, int64_t start, int64_t len,
                const char *column, shape_err *err)
{
    node_type t;
    classify(f->format, f->n_children, &t);
    if (a->n_buffers != buffers_of(t.layout) || a->n_children != f->n_children || start < 0 || len < 0 ||
        (len > 0 && buffers_of(t.layout) > 1 && !a->buffers[1]))
        return shape_err_set(err, SHAPE_EINVAL, "column '%.64s': the array does not match its format '%.32s'",
                             column, f->format);
    if (t.layout == L_NULL) return add_node(w, len, len, err);
    const uint8_t *valid = (const uint8_t *)a->buffers[0];
    int64_t nulls = 0;
    if (valid && len)
        nulls = (start == a->offset && len == a->length && a->null_count >= 0) ? a->null_count
                                                                              : count_nulls(valid, start, len);
    SHAPE_RETURN_NOT_OK(add_node(w, len, nulls, err));
    SHAPE_RETURN_NOT_OK(nulls ? add_bits(w, valid, start, len, err) : add_buffer(w, NULL, 0, err));
    int64_t first, last;
    switch (t.layout) {
    case L_BITS: return add_bits(w, (const uint8_t *)a->buffers[1], start, len, err);
    case L_FIXED:
        return add_buffer(w, len ? (const uint8_t *)a->buffers[1] + start * t.width : NULL, len * t.width, err);
    case L_VAR32:
    case L_VAR64:
        SHAPE_RETURN_NOT_OK(add_offsets(w, a->buffers[1], t.layout == L_VAR64, start, len, &first, &last, err));
        if (last > first && !a->buffers[2])
            return shape_err_set(err, SHAPE_EINVAL, "column '%.64s': no data buffer", column);
        return add_buffer(w, last > first ? (const uint8_t *)a->buffers[2] + first : NULL, last - first, err);
    case L_STRUCT:
        for (int64_t i = 0; i < f->n_children; i++)
            SHAPE_RETURN_NOT_OK(walk(w, f->children[i], a->children[i], a->children[i]->offset + start, len, column, err));
        return SHAPE_OK;
    case L_LIST32:
    case L_LIST64:
        SHAPE_RETURN_NOT_OK(add_offsets(w, a->buffers[1], t.layout == L_LIST64, start, len, &first, &last, err));
        return walk(w, f->children[0], a->children[0], a->children[0]->offset + first, last - first, column, err);
    case L_FIXED_LIST:
        return walk(w, f->children[0], a->children[0], a->children[0]->offset + start * t.width, len * t.width,
                    column, err);
    default: return SHAPE_OK;
    }
}

/* ---- FlatBuffers ------------------------------------------------------------ */

/* A [KeyValue] vector of encoded C Data metadata, or 0 for none. */
static fb_ref metadata_vector(fb_builder *b, const char *metadata)
{
    if (!metadata) return 0;
    int32_t n;
    memcpy(&n, metadata, 4);
    if (n <= 0) return 0;
    fb_ref *pairs = malloc((size_t)n * sizeof *pairs);
    if (!pairs) {
        b->oom = 1;
        return 0;
    }
    const char *p = metadata + 4;
    for (int32_t i = 0; i < n; i++) {
        int32_t kl, vl;
        memcpy(&kl, p, 4);
        const char *k = p + 4;
        memcpy(&vl, k + kl, 4);
        const char *v = k + kl + 4;
        p = v + vl;
        fb_ref key = fb_string(b, k, (size_t)kl), value = fb_string(b, v, (size_t)vl);
        fb_table_start(b);
        fb_add_ref(b, 0, key);
        fb_add_ref(b, 1, value);
        pairs[i] = fb_table_end(b);
    }
    fb_ref vec = fb_ref_vector(b, pairs, (size_t)n);
    free(pairs);
    return vec;
}

static fb_ref type_table(fb_builder *b, const struct ArrowSchema *f, const node_type *t)
{
    fb_ref tz = t->tz ? fb_string(b, t->tz, strlen(t->tz)) : 0;
    fb_table_start(b);
    switch (t->type) {
    case T_INT:
        fb_add_i32(b, 0, t->a);
        fb_add_u8(b, 1, (uint8_t)t->b);
        break;
    case T_FLOAT: fb_add_i16(b, 0, (int16_t)t->a); break;
    case T_DECIMAL:
        fb_add_i32(b, 0, t->a);
        fb_add_i32(b, 1, t->b);
        fb_add_i32(b, 2, t->c);
        break;
    case T_DATE:
    case T_DURATION: fb_add_i16(b, 0, (int16_t)t->a); break;
    case T_TIME:
        fb_add_i16(b, 0, (int16_t)t->a);
        fb_add_i32(b, 1, t->b);
        break;
    case T_TIMESTAMP:
        fb_add_i16(b, 0, (int16_t)t->a);
        if (tz) fb_add_ref(b, 1, tz);
        break;
    case T_FIXED_BINARY:
    case T_FIXED_LIST: fb_add_i32(b, 0, t->a); break;
    case T_MAP: fb_add_u8(b, 0, (f->flags & ARROW_FLAG_MAP_KEYS_SORTED) ? 1 : 0); break;
    default: break;
    }
    return fb_table_end(b);
}

static fb_ref field_table(fb_builder *b, const struct ArrowSchema *f)
{
    node_type t;
    classify(f->format, f->n_children, &t);
    fb_ref *kids = f->n_children ? malloc((size_t)f->n_children * sizeof *kids) : NULL;
    if (f->n_children && !kids) {
        b->oom = 1;
        return 0;
    }
    for (int64_t i = 0; i < f->n_children; i++) kids[i] = field_table(b, f->children[i]);
    fb_ref children = fb_ref_vector(b, kids, (size_t)f->n_children);
    free(kids);
    fb_ref name = fb_string(b, f->name ? f->name : "", f->name ? strlen(f->name) : 0);
    fb_ref type = type_table(b, f, &t);
    fb_ref meta = metadata_vector(b, f->metadata);
    fb_table_start(b);
    fb_add_ref(b, 0, name);
    fb_add_u8(b, 1, (f->flags & ARROW_FLAG_NULLABLE) ? 1 : 0);
    fb_add_u8(b, 2, (uint8_t)t.type);
    fb_add_ref(b, 3, type);
    fb_add_ref(b, 5, children);
    if (meta) fb_add_ref(b, 6, meta);
    return fb_table_end(b);
}

static int put(shape_ipc_writer *w, const void *p, size_t n, shape_err *err)
{
    if (n && fwrite(p, 1, n, w->out) != n)
        return shape_err_set(err, SHAPE_EIO, "cannot write the Arrow IPC stream: %s", strerror(errno));
    w->bytes += (int64_t)n;
    return SHAPE_OK;
}

/* Finish the Message whose header (of type hdr) is `header` and write it. */
static int write_message(shape_ipc_writer *w, int hdr, fb_ref header, int64_t body, fb_ref meta, shape_err *err)
{
    fb_builder *b = &w->fb;
    fb_table_start(b);
    fb_add_i16(b, 0, METADATA_V5);
    fb_add_u8(b, 1, (uint8_t)hdr);
    fb_add_ref(b, 2, header);
    fb_add_i64(b, 3, body);
    if (meta) fb_add_ref(b, 4, meta);
    fb_ref msg = fb_table_end(b);
    const uint8_t *data;
    size_t len;
    if (fb_finish(b, msg, &data, &len) != 0) return oom(err);
    uint32_t prefix[2] = {0xFFFFFFFFu, (uint32_t)len}; /* len is a multiple of 8 (fb_finish) */
    SHAPE_RETURN_NOT_OK(put(w, prefix, sizeof prefix, err));
    return put(w, data, len, err);
}

static int write_schema(shape_ipc_writer *w, const struct ArrowSchema *schema, shape_err *err)
{
    fb_builder *b = &w->fb;
    fb_reset(b);
    int64_t n = schema ? schema->n_children : 0;
    fb_ref *fields = n ? malloc((size_t)n * sizeof *fields) : NULL;
    if (n && !fields) return oom(err);
    for (int64_t i = 0; i < n; i++) fields[i] = field_table(b, schema->children[i]);
    fb_ref vec = fb_ref_vector(b, fields, (size_t)n);
    free(fields);
    fb_table_start(b);
    fb_add_i16(b, 0, 0); /* little-endian */
    fb_add_ref(b, 1, vec);
    fb_ref s = fb_table_end(b);
    SHAPE_RETURN_NOT_OK(write_message(w, HDR_SCHEMA, s, 0, 0, err));
    w->started = 1;
    return SHAPE_OK;
}

int shape_ipc_writer_write(shape_ipc_writer *w, const struct ArrowSchema *schema, const struct ArrowArray *array,
                           shape_err *err)
{
    if (!w->started) {
        SHAPE_RETURN_NOT_OK(shape_ipc_check_schema(schema, err));
        SHAPE_RETURN_NOT_OK(shape_arrow_schema_deep_copy(schema, &w->first, err));
        SHAPE_RETURN_NOT_OK(write_schema(w, schema, err));
    } else if (schema != &w->first && !io_same_field(schema, &w->first)) {
        return shape_err_set(err, SHAPE_EINVAL,
                             "batch %lld has other columns than the first batch: an Arrow IPC stream has one schema",
                             (long long)w->batches + 1);
    }
    if (array->n_children != schema->n_children || array->length < 0)
        return shape_err_set(err, SHAPE_EINVAL, "the batch does not match its schema");
    w->n_nodes = w->n_bufs = 0;
    drop_scratch(w);
    for (int64_t i = 0; i < schema->n_children; i++) {
        const struct ArrowArray *c = array->children[i];
        const char *name = schema->children[i]->name ? schema->children[i]->name : "";
        if (c->length < array->offset + array->length)
            return shape_err_set(err, SHAPE_EINVAL, "column '%.64s' is shorter than its batch", name);
        SHAPE_RETURN_NOT_OK(walk(w, schema->children[i], c, c->offset + array->offset, array->length, name, err));
    }
    int64_t body = 0;
    for (size_t i = 0; i < w->n_bufs; i++) {
        w->spans[i].offset = body;
        body += (w->spans[i].length + 7) & ~(int64_t)7;
    }
    fb_builder *b = &w->fb;
    fb_reset(b);
    fb_ref meta = metadata_vector(b, schema->metadata);
    fb_ref nodes = fb_struct_vector(b, w->nodes, sizeof *w->nodes, w->n_nodes, 8);
    fb_ref bufs = fb_struct_vector(b, w->spans, sizeof *w->spans, w->n_bufs, 8);
    fb_table_start(b);
    fb_add_i64(b, 0, array->length);
    fb_add_ref(b, 1, nodes);
    fb_add_ref(b, 2, bufs);
    fb_ref rb = fb_table_end(b);
    SHAPE_RETURN_NOT_OK(write_message(w, HDR_RECORD_BATCH, rb, body, meta, err));
    static const uint8_t pad[8];
    for (size_t i = 0; i < w->n_bufs; i++) {
        size_t len = (size_t)w->spans[i].length;
        SHAPE_RETURN_NOT_OK(put(w, w->data[i], len, err));
        SHAPE_RETURN_NOT_OK(put(w, pad, (8 - len % 8) % 8, err));
    }
    drop_scratch(w);
    w->batches++;
    return SHAPE_OK;
}

int shape_ipc_writer_finish(shape_ipc_writer *w, const struct ArrowSchema *schema, shape_err *err)
{
    if (!w->started) {
        if (schema) SHAPE_RETURN_NOT_OK(shape_ipc_check_schema(schema, err));
        SHAPE_RETURN_NOT_OK(write_schema(w, schema, err));
    }
    static const uint32_t eos[2] = {0xFFFFFFFFu, 0};
    SHAPE_RETURN_NOT_OK(put(w, eos, sizeof eos, err));
    if (fflush(w->out) != 0)
        return shape_err_set(err, SHAPE_EIO, "cannot write the Arrow IPC stream: %s", strerror(errno));
    return SHAPE_OK;
}

static int ipc_write(void *w, const struct ArrowSchema *s, const struct ArrowArray *a, shape_err *err)
{
    return shape_ipc_writer_write(w, s, a, err);
}
static int ipc_finish(void *w, const struct ArrowSchema *s, shape_err *err) { return shape_ipc_writer_finish(w, s, err); }

int shape_ipc_write_stream(struct ArrowArrayStream *stream, FILE *out, shape_err *err)
{
    shape_ipc_writer *w = NULL;
    SHAPE_RETURN_NOT_OK(shape_ipc_writer_new(out, &w, err));
    io_sink sink = {w, ipc_write, ipc_finish};
    int rc = io_drain_stream(stream, &sink, shape_ipc_check_schema, err);
    shape_ipc_writer_free(w);
    return rc;
}

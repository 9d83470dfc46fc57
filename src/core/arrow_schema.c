/* arrow_schema.c — ArrowSchema nodes we own, deep copies, schema metadata.
 *
 * Why: every schema we hand out (a batch's, a stream's get_schema copy) must
 * be released by its consumer through the callback in the struct, node by
 * node, and a child moved out of its parent must stay releasable on its own
 * (Arrow C Data Interface, "moving child arrays"). The formats of our column
 * types and the byte layout of schema metadata live here too.
 *
 * How: each node's private_data is one allocation holding the child pointer
 * array and the child structs themselves, plus separately allocated copies of
 * format, name and metadata. The children's own resources hang off their own
 * private_data, so the parent frees only its block and the structs in it;
 * a moved-out child (whose slot the consumer marked released) is skipped.
 * Metadata is the spec's encoding: int32 pair count, then for each pair an
 * int32 length and the bytes of the key, then of the value; native
 * endianness; read and written with memcpy (no alignment assumed).
 */
#include "shape/arrow.h"

#include <stdlib.h>
#include <string.h>

static const char *const type_formats[SHAPE_TYPE_COUNT] = {
    [SHAPE_TYPE_NULL] = "n",           [SHAPE_TYPE_BOOL] = "b",
    [SHAPE_TYPE_INT64] = "l",          [SHAPE_TYPE_FLOAT64] = "g",
    [SHAPE_TYPE_UTF8] = "u",           [SHAPE_TYPE_BINARY] = "z",
    [SHAPE_TYPE_TIMESTAMP_US] = "tsu:UTC", [SHAPE_TYPE_TIMESTAMP_NS] = "tsn:UTC",
    [SHAPE_TYPE_MAP] = "+m",
};

/* Buffers per layout (Arrow columnar format): null none; fixed width and bool
 * validity + values; variable binary validity + offsets + data; map (a list
 * layout) validity + offsets. */
static const int type_n_buffers[SHAPE_TYPE_COUNT] = {
    [SHAPE_TYPE_NULL] = 0,         [SHAPE_TYPE_BOOL] = 2,         [SHAPE_TYPE_INT64] = 2,
    [SHAPE_TYPE_FLOAT64] = 2,      [SHAPE_TYPE_UTF8] = 3,         [SHAPE_TYPE_BINARY] = 3,
    [SHAPE_TYPE_TIMESTAMP_US] = 2, [SHAPE_TYPE_TIMESTAMP_NS] = 2, [SHAPE_TYPE_MAP] = 2,
};

const char *shape_type_format(shape_type type)
{
    if ((int)type < 0 || (int)type >= SHAPE_TYPE_COUNT) return NULL;
    return type_formats[type];
}

int shape_type_from_format(const char *format)
{
    if (!format) return -1;
    for (int t = 0; t < SHAPE_TYPE_COUNT; t++)
        if (strcmp(format, type_formats[t]) == 0) return t;
    return -1;
}

int shape_type_n_buffers(shape_type type)
{
    if ((int)type < 0 || (int)type >= SHAPE_TYPE_COUNT) return -1;
    return type_n_buffers[type];
}

/* ---- metadata ----------------------------------------------------------- */

static int32_t read_i32(const char *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

size_t shape_arrow_metadata_size(const char *metadata)
{
    if (!metadata) return 0;
    const char *p = metadata;
    int32_t n = read_i32(p);
    p += 4;
    for (int32_t i = 0; i < n * 2; i++) {
        int32_t len = read_i32(p);
        p += 4 + (len > 0 ? len : 0);
    }
    return (size_t)(p - metadata);
}

int shape_arrow_metadata_find(const char *metadata, const char *key, const char **value,
                              int32_t *value_len)
{
    if (!metadata || !key) return 0;
    size_t klen = strlen(key);
    const char *p = metadata;
    int32_t n = read_i32(p);
    p += 4;
    for (int32_t i = 0; i < n; i++) {
        int32_t kl = read_i32(p);
        const char *k = p + 4;
        p = k + kl;
        int32_t vl = read_i32(p);
        const char *v = p + 4;
        p = v + vl;
        if ((size_t)kl == klen && memcmp(k, key, klen) == 0) {
            if (value) *value = v;
            if (value_len) *value_len = vl;
            return 1;
        }
    }
    return 0;
}

int shape_arrow_metadata_encode(const char *const *keys, const char *const *values, int32_t n,
                                char **out, size_t *out_len, shape_err *err)
{
    if (n < 0) return shape_err_set(err, SHAPE_EINVAL, "negative metadata pair count");
    size_t size = 4;
    for (int32_t i = 0; i < n; i++) {
        size_t kl = strlen(keys[i]), vl = strlen(values[i]);
        if (kl > INT32_MAX || vl > INT32_MAX)
            return shape_err_set(err, SHAPE_EINVAL, "schema metadata entry too long");
        size += 8 + kl + vl;
    }
    char *buf = malloc(size);
    if (!buf) return shape_err_set(err, SHAPE_ENOMEM, "out of memory encoding schema metadata");
    char *p = buf;
    memcpy(p, &n, 4);
    p += 4;
    for (int32_t i = 0; i < n; i++) {
        const char *strs[2] = {keys[i], values[i]};
        for (int s = 0; s < 2; s++) {
            int32_t len = (int32_t)strlen(strs[s]);
            memcpy(p, &len, 4);
            memcpy(p + 4, strs[s], (size_t)len);
            p += 4 + len;
        }
    }
    *out = buf;
    *out_len = size;
    return SHAPE_OK;
}

/* ---- schema nodes ------------------------------------------------------- */

typedef struct schema_priv {
    char *format;
    char *name;
    char *metadata;
    struct ArrowSchema *dictionary; /* separately allocated, or NULL */
    /* followed by struct ArrowSchema *ptrs[n]; struct ArrowSchema store[n] */
} schema_priv;

static void schema_release(struct ArrowSchema *s)
{
    if (!s || !s->release) return;
    for (int64_t i = 0; i < s->n_children; i++) {
        struct ArrowSchema *ch = s->children[i];
        if (ch && ch->release) ch->release(ch);
    }
    schema_priv *p = s->private_data;
    if (p) {
        if (p->dictionary) {
            if (p->dictionary->release) p->dictionary->release(p->dictionary);
            free(p->dictionary);
        }
        free(p->format);
        free(p->name);
        free(p->metadata);
        free(p);
    }
    s->release = NULL;
    s->private_data = NULL;
}

static char *dup_bytes(const char *s, size_t n)
{
    char *d = malloc(n ? n : 1);
    if (d && n) memcpy(d, s, n);
    return d;
}

int shape_arrow_schema_make(struct ArrowSchema *out, const char *format, const char *name,
                            const char *metadata, int64_t flags, int64_t n_children, shape_err *err)
{
    memset(out, 0, sizeof *out);
    if (!format || n_children < 0)
        return shape_err_set(err, SHAPE_EINVAL, "schema node needs a format and n_children >= 0");
    size_t n = (size_t)n_children;
    if (n > (SIZE_MAX - sizeof(schema_priv)) / (sizeof(struct ArrowSchema) + sizeof(void *)))
        return shape_err_set(err, SHAPE_ENOMEM, "too many schema children");
    schema_priv *p = calloc(1, sizeof *p + n * (sizeof(struct ArrowSchema *) + sizeof(struct ArrowSchema)));
    if (!p) return shape_err_set(err, SHAPE_ENOMEM, "out of memory building a schema");
    struct ArrowSchema **ptrs = (struct ArrowSchema **)(void *)(p + 1);
    struct ArrowSchema *store = (struct ArrowSchema *)(void *)(ptrs + n);
    for (size_t i = 0; i < n; i++) ptrs[i] = &store[i];

    out->private_data = p;
    out->release = schema_release;
    out->flags = flags;
    out->n_children = n_children;
    out->children = n ? ptrs : NULL;

    p->format = dup_bytes(format, strlen(format) + 1);
    if (name) p->name = dup_bytes(name, strlen(name) + 1);
    if (metadata) p->metadata = dup_bytes(metadata, shape_arrow_metadata_size(metadata));
    if (!p->format || (name && !p->name) || (metadata && !p->metadata)) {
        schema_release(out);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory building a schema");
    }
    out->format = p->format;
    out->name = p->name;
    out->metadata = p->metadata;
    return SHAPE_OK;
}

int shape_arrow_schema_deep_copy(const struct ArrowSchema *src, struct ArrowSchema *dst,
                                 shape_err *err)
{
    if (!src || !src->release) {
        memset(dst, 0, sizeof *dst);
        return shape_err_set(err, SHAPE_EINVAL, "cannot copy a released schema");
    }
    SHAPE_RETURN_NOT_OK(shape_arrow_schema_make(dst, src->format, src->name, src->metadata,
                                                src->flags, src->n_children, err));
    for (int64_t i = 0; i < src->n_children; i++) {
        int rc = shape_arrow_schema_deep_copy(src->children[i], dst->children[i], err);
        if (rc != SHAPE_OK) {
            dst->release(dst);
            return rc;
        }
    }
    if (src->dictionary) {
        schema_priv *p = dst->private_data;
        p->dictionary = calloc(1, sizeof *p->dictionary);
        int rc = p->dictionary ? shape_arrow_schema_deep_copy(src->dictionary, p->dictionary, err)
                               : shape_err_set(err, SHAPE_ENOMEM, "out of memory copying a schema");
        if (rc != SHAPE_OK) {
            dst->release(dst);
            return rc;
        }
        dst->dictionary = p->dictionary;
    }
    return SHAPE_OK;
}

/* regfmt_arrays.h — hand-built Arrow struct batches for the registry format
 * tests (schema documents, encoders, flat JSON, wire decoder).
 *
 * Why: the registry formats must handle Arrow types our own builders never
 * make (int8, uint64, decimals, time32, date64, dictionaries, the uuid
 * extension...), so the tests lay the C Data Interface structs out by hand
 * from static buffers, exactly as another producer (pyarrow) would.
 * How: describe each column with an rt_column (name, format, nullability,
 * buffers borrowed from the test, optional dictionary and metadata), then
 * rt_batch_make() allocates the ArrowSchema/ArrowArray nodes (a "+s" parent
 * and one child each). The buffers stay the caller's: release callbacks free
 * only the nodes. Release with rt_batch_release(). Header-only (static
 * inline) so any test can include it.
 *
 *     static const int64_t ids[] = {1, 2};
 *     rt_column cols[] = {{.name = "id", .format = "l", .values = ids}};
 *     struct ArrowSchema s; struct ArrowArray a;
 *     rt_batch_make(cols, 1, 2, 0, &s, &a);
 *     ...
 *     rt_batch_release(&s, &a);
 */
#ifndef SHAPE_TESTS_REGFMT_ARRAYS_H
#define SHAPE_TESTS_REGFMT_ARRAYS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/arrow.h"

typedef struct rt_column {
    const char *name;
    const char *format;       /* Arrow format; for a dictionary column the index format */
    int nullable;             /* sets ARROW_FLAG_NULLABLE */
    const uint8_t *validity;  /* LSB-first bitmap, NULL = all valid */
    const void *values;       /* buffer 1: values, offsets or dictionary indices */
    const void *data;         /* buffer 2 of strings/binary, else NULL */
    const char *metadata;     /* encoded field metadata (see rt_uuid_metadata), or NULL */
    int64_t offset;           /* the child's own offset */
    /* dictionary columns: the value column (its name is ignored) and its length */
    const struct rt_column *dictionary;
    int64_t dictionary_length;
} rt_column;

/* Encoded metadata {"ARROW:extension:name": "arrow.uuid"} (static storage). */
static inline const char *rt_uuid_metadata(void)
{
    static char encoded[4 + 4 + 20 + 4 + 10];
    int32_t n = 1, klen = 20, vlen = 10;
    memcpy(encoded, &n, 4);
    memcpy(encoded + 4, &klen, 4);
    memcpy(encoded + 8, "ARROW:extension:name", 20);
    memcpy(encoded + 28, &vlen, 4);
    memcpy(encoded + 32, "arrow.uuid", 10);
    return encoded;
}

static inline int64_t rt_n_buffers(const char *format)
{
    if (!strcmp(format, "n")) return 0;
    if (!strcmp(format, "u") || !strcmp(format, "U") || !strcmp(format, "z") || !strcmp(format, "Z"))
        return 3;
    if (format[0] == '+') return 1;
    return 2;
}

static inline void rt_schema_release(struct ArrowSchema *s)
{
    for (int64_t i = 0; i < s->n_children; i++) {
        if (s->children[i]->release) s->children[i]->release(s->children[i]);
        free(s->children[i]);
    }
    free(s->children);
    if (s->dictionary) {
        if (s->dictionary->release) s->dictionary->release(s->dictionary);
        free(s->dictionary);
    }
    s->release = NULL;
}

static inline void rt_array_release(struct ArrowArray *a)
{
    for (int64_t i = 0; i < a->n_children; i++) {
        if (a->children[i]->release) a->children[i]->release(a->children[i]);
        free(a->children[i]);
    }
    free(a->children);
    if (a->dictionary) {
        if (a->dictionary->release) a->dictionary->release(a->dictionary);
        free(a->dictionary);
    }
    free((void *)a->buffers);
    a->release = NULL;
}

static inline void rt_fill_leaf(const rt_column *c, const char *format, int64_t length,
                                struct ArrowSchema *s, struct ArrowArray *a)
{
    memset(s, 0, sizeof *s);
    memset(a, 0, sizeof *a);
    s->format = format;
    s->name = c->name;
    s->metadata = c->metadata;
    s->flags = c->nullable ? ARROW_FLAG_NULLABLE : 0;
    s->release = rt_schema_release;
    a->length = length;
    a->offset = c->offset;
    a->n_buffers = rt_n_buffers(format);
    a->buffers = (const void **)calloc(3, sizeof(void *));
    if (a->n_buffers > 0) a->buffers[0] = c->validity;
    if (a->n_buffers > 1) a->buffers[1] = c->values;
    if (a->n_buffers > 2) a->buffers[2] = c->data;
    if (a->n_buffers == 0) a->null_count = length;
    else a->null_count = c->validity ? -1 : 0;
    a->release = rt_array_release;
}

/* Build a "+s" batch of `length` rows (struct offset `offset`; each child is
 * offset + length long past its own offset) from n column descriptions. */
static inline void rt_batch_make(const rt_column *cols, int n, int64_t length, int64_t offset,
                                 struct ArrowSchema *schema, struct ArrowArray *array)
{
    memset(schema, 0, sizeof *schema);
    memset(array, 0, sizeof *array);
    schema->format = "+s";
    schema->name = "";
    schema->n_children = n;
    schema->children = (struct ArrowSchema **)calloc((size_t)n + 1, sizeof(void *));
    schema->release = rt_schema_release;
    array->length = length;
    array->offset = offset;
    array->n_buffers = 1;
    array->buffers = (const void **)calloc(3, sizeof(void *));
    array->n_children = n;
    array->children = (struct ArrowArray **)calloc((size_t)n + 1, sizeof(void *));
    array->release = rt_array_release;
    for (int i = 0; i < n; i++) {
        struct ArrowSchema *s = (struct ArrowSchema *)calloc(1, sizeof *s);
        struct ArrowArray *a = (struct ArrowArray *)calloc(1, sizeof *a);
        rt_fill_leaf(&cols[i], cols[i].format, offset + length, s, a);
        if (cols[i].dictionary) {
            const rt_column *d = cols[i].dictionary;
            s->dictionary = (struct ArrowSchema *)calloc(1, sizeof *s);
            a->dictionary = (struct ArrowArray *)calloc(1, sizeof *a);
            rt_fill_leaf(d, d->format, cols[i].dictionary_length, s->dictionary, a->dictionary);
            s->dictionary->name = NULL;
            s->dictionary->flags = ARROW_FLAG_NULLABLE;
        }
        schema->children[i] = s;
        array->children[i] = a;
    }
}

static inline void rt_batch_release(struct ArrowSchema *schema, struct ArrowArray *array)
{
    if (schema->release) schema->release(schema);
    if (array->release) array->release(array);
}

#endif

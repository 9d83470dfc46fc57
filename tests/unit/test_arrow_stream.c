/* test_arrow_stream.c — ArrowArrayStream over a producer callback and schema
 * deep copies (shape/arrow.h): get_schema copies, get_next to the end and
 * past it, errors and get_last_error, release calling close exactly once. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/arrow.h"

typedef struct producer {
    shape_batch *b;
    shape_column *n;
    int batches;   /* how many to produce */
    int fail_at;   /* call number that fails (0 = never) */
    int calls;
    int closed;
} producer;

static int produce(void *ctx, struct ArrowArray *out, shape_err *err)
{
    producer *p = ctx;
    p->calls++;
    if (p->fail_at && p->calls == p->fail_at)
        return shape_err_set(err, SHAPE_EINVAL, "partition 2 offset 7: body is not a JSON object");
    if (p->calls > p->batches) return SHAPE_OK; /* end: out->release stays NULL */
    for (int i = 0; i < p->calls * 10; i++) {
        SHAPE_RETURN_NOT_OK(shape_column_append_int64(p->n, p->calls * 1000 + i, err));
        SHAPE_RETURN_NOT_OK(shape_batch_end_row(p->b, err));
    }
    char part[16];
    snprintf(part, sizeof part, "%d", p->calls);
    SHAPE_RETURN_NOT_OK(shape_batch_set_metadata(p->b, "shape.partition", part, err));
    return shape_batch_finish(p->b, NULL, out, err);
}

static void close_producer(void *ctx)
{
    producer *p = ctx;
    p->closed++;
}

static void producer_init(producer *p, int batches, int fail_at)
{
    memset(p, 0, sizeof *p);
    shape_err err;
    assert_int_equal(shape_batch_new(&p->b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(p->b, "n", 1, SHAPE_TYPE_INT64, &p->n, &err), SHAPE_OK);
    shape_column *m;
    assert_int_equal(shape_batch_add_column(p->b, "h", 1, SHAPE_TYPE_MAP, &m, &err), SHAPE_OK);
    p->batches = batches;
    p->fail_at = fail_at;
}

static void test_stream_batches_and_end(void **state)
{
    (void)state;
    producer p;
    producer_init(&p, 3, 0);
    shape_err err;
    struct ArrowSchema schema;
    assert_int_equal(shape_batch_schema(p.b, &schema, &err), SHAPE_OK);
    struct ArrowArrayStream st;
    assert_int_equal(shape_arrow_stream_init(&st, &schema, produce, close_producer, &p, &err), SHAPE_OK);
    schema.release(&schema); /* the stream holds its own copy */

    struct ArrowSchema s1, s2;
    assert_int_equal(st.get_schema(&st, &s1), 0);
    assert_int_equal(st.get_schema(&st, &s2), 0);
    assert_ptr_not_equal(s1.format, s2.format);
    assert_string_equal(s1.format, "+s");
    assert_int_equal(s1.n_children, 2);
    assert_string_equal(s1.children[0]->name, "n");
    assert_string_equal(s2.children[1]->children[0]->children[0]->name, "key");
    s1.release(&s1);
    assert_string_equal(s2.children[0]->format, "l"); /* independent of s1 */
    s2.release(&s2);
    assert_null(st.get_last_error(&st));

    for (int k = 1; k <= 3; k++) {
        struct ArrowArray a;
        memset(&a, 0xAB, sizeof a); /* get_next must overwrite everything */
        assert_int_equal(st.get_next(&st, &a), 0);
        assert_non_null(a.release);
        assert_int_equal(a.length, k * 10);
        assert_int_equal(shape_arrow_int64_at(a.children[0], 3), k * 1000 + 3);
        assert_false(shape_arrow_is_valid(a.children[1], 0));
        a.release(&a);
    }
    struct ArrowArray end;
    assert_int_equal(st.get_next(&st, &end), 0);
    assert_null(end.release);
    assert_int_equal(p.calls, 4);
    assert_int_equal(st.get_next(&st, &end), 0); /* the end repeats */
    assert_null(end.release);
    assert_int_equal(p.calls, 4);
    assert_null(st.get_last_error(&st));
    assert_int_equal(shape_arrow_stream_error_code(&st), SHAPE_OK);
    assert_int_equal(p.closed, 0);
    st.release(&st);
    assert_null(st.release);
    assert_int_equal(p.closed, 1);
    shape_batch_free(p.b);
}

static void test_stream_error(void **state)
{
    (void)state;
    producer p;
    producer_init(&p, 5, 2);
    shape_err err;
    struct ArrowSchema schema;
    assert_int_equal(shape_batch_schema(p.b, &schema, &err), SHAPE_OK);
    struct ArrowArrayStream st;
    assert_int_equal(shape_arrow_stream_init(&st, &schema, produce, close_producer, &p, &err), SHAPE_OK);
    schema.release(&schema);

    struct ArrowArray a;
    assert_int_equal(st.get_next(&st, &a), 0);
    assert_non_null(a.release);
    a.release(&a);
    assert_int_equal(st.get_next(&st, &a), EINVAL);
    assert_null(a.release);
    assert_string_equal(st.get_last_error(&st), "partition 2 offset 7: body is not a JSON object");
    assert_int_equal(shape_arrow_stream_error_code(&st), SHAPE_EINVAL);
    assert_int_equal(st.get_next(&st, &a), EINVAL); /* errors are sticky */
    assert_int_equal(p.calls, 2);
    st.release(&st);
    assert_int_equal(p.closed, 1);
    shape_batch_free(p.b);
}

/* shape_arrow_stream_consume: first, every batch, last; a failing stream
 * stops it (last not called) with the stream's message. */
typedef struct consumed {
    int first, batches, last;
    int64_t rows;
} consumed;

static int on_first(void *ud, const struct ArrowSchema *schema, shape_err *err)
{
    (void)err;
    consumed *c = ud;
    assert_string_equal(schema->format, "+s");
    assert_int_equal(c->batches, 0);
    c->first++;
    return SHAPE_OK;
}

static int on_each(void *ud, const struct ArrowSchema *schema, const struct ArrowArray *batch, shape_err *err)
{
    (void)schema;
    (void)err;
    consumed *c = ud;
    c->batches++;
    c->rows += batch->length;
    return SHAPE_OK;
}

static int on_last(void *ud, const struct ArrowSchema *schema, shape_err *err)
{
    (void)schema;
    (void)err;
    ((consumed *)ud)->last++;
    return SHAPE_OK;
}

static void test_stream_consume(void **state)
{
    (void)state;
    for (int fail_at = 0; fail_at <= 2; fail_at += 2) {
        producer p;
        producer_init(&p, 3, fail_at);
        shape_err err;
        struct ArrowSchema schema;
        assert_int_equal(shape_batch_schema(p.b, &schema, &err), SHAPE_OK);
        struct ArrowArrayStream st;
        assert_int_equal(shape_arrow_stream_init(&st, &schema, produce, close_producer, &p, &err), SHAPE_OK);
        schema.release(&schema);
        consumed c = {0};
        int rc = shape_arrow_stream_consume(&st, on_first, on_each, on_last, &c, &err);
        if (fail_at) {
            assert_int_equal(rc, SHAPE_EIO);
            assert_non_null(strstr(err.message, "body is not a JSON object"));
            assert_int_equal(c.batches, 1);
            assert_int_equal(c.last, 0);
        } else {
            assert_int_equal(rc, SHAPE_OK);
            assert_int_equal(c.batches, 3);
            assert_int_equal(c.rows, 10 + 20 + 30);
            assert_int_equal(c.last, 1);
        }
        assert_int_equal(c.first, 1);
        assert_int_equal(p.closed, 0); /* read, not released */
        st.release(&st);
        shape_batch_free(p.b);
    }
}

static int fail_nomem(void *ctx, struct ArrowArray *out, shape_err *err)
{
    (void)ctx;
    (void)out;
    (void)err; /* no message: the stream still reports something */
    return SHAPE_ENOMEM;
}

static void test_stream_error_without_message_and_no_close(void **state)
{
    (void)state;
    struct ArrowSchema schema;
    shape_err err;
    assert_int_equal(shape_arrow_schema_make(&schema, "+s", "", NULL, 0, 0, &err), SHAPE_OK);
    struct ArrowArrayStream st;
    assert_int_equal(shape_arrow_stream_init(&st, &schema, fail_nomem, NULL, NULL, &err), SHAPE_OK);
    schema.release(&schema);
    struct ArrowArray a;
    assert_int_equal(st.get_next(&st, &a), ENOMEM);
    assert_non_null(st.get_last_error(&st));
    assert_string_equal(st.get_last_error(&st), shape_code_name(SHAPE_ENOMEM));
    st.release(&st);
    assert_null(st.release);
}

static void test_stream_init_refusals(void **state)
{
    (void)state;
    struct ArrowArrayStream st;
    memset(&st, 0, sizeof st);
    struct ArrowSchema schema;
    shape_err err;
    assert_int_equal(shape_arrow_schema_make(&schema, "+s", "", NULL, 0, 0, &err), SHAPE_OK);
    assert_int_equal(shape_arrow_stream_init(&st, &schema, NULL, NULL, NULL, &err), SHAPE_EINVAL);
    assert_null(st.release);
    schema.release(&schema);
    assert_int_equal(shape_arrow_stream_init(&st, &schema, produce, NULL, NULL, &err), SHAPE_EINVAL);
    assert_null(st.release);
    struct ArrowArrayStream other = {0};
    assert_int_equal(shape_arrow_stream_error_code(&other), SHAPE_EINVAL);
}

/* A schema made by "someone else": static storage, a counting release,
 * a dictionary-encoded child. The deep copy must not depend on it. */
static int foreign_releases;

static void foreign_release(struct ArrowSchema *s)
{
    foreign_releases++;
    s->release = NULL;
}

static void test_deep_copy_foreign_schema(void **state)
{
    (void)state;
    char meta[64], *p = meta;
    int32_t n = 1, kl = 1, vl = 2;
    memcpy(p, &n, 4);
    p += 4;
    memcpy(p, &kl, 4);
    p += 4;
    *p++ = 'k';
    memcpy(p, &vl, 4);
    p += 4;
    *p++ = 'v';
    *p++ = 'w';

    struct ArrowSchema dict = {.format = "u", .name = NULL, .release = foreign_release};
    struct ArrowSchema codes = {.format = "i", .name = "category", .flags = ARROW_FLAG_NULLABLE,
                                .dictionary = &dict, .metadata = meta, .release = foreign_release};
    struct ArrowSchema *kids[] = {&codes};
    struct ArrowSchema top = {.format = "+s", .name = "", .n_children = 1, .children = kids,
                              .release = foreign_release};

    struct ArrowSchema copy;
    shape_err err;
    assert_int_equal(shape_arrow_schema_deep_copy(&top, &copy, &err), SHAPE_OK);
    assert_int_equal(foreign_releases, 0);
    assert_ptr_not_equal(copy.format, top.format);
    assert_string_equal(copy.format, "+s");
    assert_int_equal(copy.n_children, 1);
    const struct ArrowSchema *c = copy.children[0];
    assert_string_equal(c->format, "i");
    assert_string_equal(c->name, "category");
    assert_int_equal(c->flags, ARROW_FLAG_NULLABLE);
    assert_int_equal(shape_arrow_metadata_size(c->metadata), (size_t)(p - meta));
    assert_memory_equal(c->metadata, meta, (size_t)(p - meta));
    assert_ptr_not_equal(c->metadata, meta);
    assert_non_null(c->dictionary);
    assert_string_equal(c->dictionary->format, "u");
    assert_null(c->dictionary->name);
    assert_non_null(c->dictionary->release);

    /* A copy of the copy, then release in either order. */
    struct ArrowSchema copy2;
    assert_int_equal(shape_arrow_schema_deep_copy(&copy, &copy2, &err), SHAPE_OK);
    copy.release(&copy);
    assert_null(copy.release);
    assert_string_equal(copy2.children[0]->dictionary->format, "u");
    copy2.release(&copy2);
    assert_int_equal(foreign_releases, 0);

    struct ArrowSchema released = {0};
    assert_int_equal(shape_arrow_schema_deep_copy(&released, &copy, &err), SHAPE_EINVAL);
    assert_null(copy.release);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_batches_and_end),
        cmocka_unit_test(test_stream_error),
        cmocka_unit_test(test_stream_consume),
        cmocka_unit_test(test_stream_error_without_message_and_no_close),
        cmocka_unit_test(test_stream_init_refusals),
        cmocka_unit_test(test_deep_copy_foreign_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_source_stream.c — the ArrowArrayStream view of a source
 * (shape/source_stream.h), over the file source. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shape/source_stream.h"

static char path[64];

static int make_file(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/shape-test-stream-XXXXXX");
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "not json\n");
    for (int i = 0; i < 10; i++) fprintf(f, "{\"id\":%d,\"name\":\"n%d\"}\n", i, i);
    fclose(f);
    return 0;
}

static int remove_file(void **state)
{
    (void)state;
    unlink(path);
    return 0;
}

static shape_source *open_source(int64_t batch_size)
{
    shape_options *o = shape_options_new();
    shape_err err;
    shape_options_set_int(o, "batch_size", batch_size, &err);
    shape_source *src;
    if (shape_file_source_open(path, o, NULL, &src, &err) != SHAPE_OK) fail_msg("open: %s", err.message);
    shape_options_free(o);
    return src;
}

static void test_batches_in_order_with_positions(void **state)
{
    (void)state;
    /* Batches of 4 lines: the first holds the undecodable line and 3 rows;
     * positions count lines consumed (4, 8, 11). */
    shape_source *src = open_source(4);
    struct ArrowArrayStream stream;
    shape_err err;
    assert_int_equal(shape_source_arrow_stream(src, &stream, &err), SHAPE_OK);
    struct ArrowSchema schema;
    assert_int_equal(stream.get_schema(&stream, &schema), 0);
    assert_int_equal(schema.n_children, 3); /* id, name, _shape_event_time */
    assert_string_equal(schema.children[0]->name, "id");
    schema.release(&schema);
    int64_t next_id = 0, expected_pos[] = {4, 8, 11};
    for (int b = 0; b < 3; b++) {
        struct ArrowArray a;
        assert_int_equal(stream.get_next(&stream, &a), 0);
        assert_non_null(a.release);
        for (int64_t r = 0; r < a.length; r++) assert_int_equal(shape_arrow_int64_at(a.children[0], r), next_id++);
        a.release(&a);
        const shape_offsets *pos = shape_source_stream_position(&stream);
        int64_t next;
        assert_int_equal(shape_offsets_get(pos, 0, &next), 1);
        assert_int_equal(next, expected_pos[b]);
    }
    assert_int_equal(next_id, 10);
    struct ArrowArray end;
    assert_int_equal(stream.get_next(&stream, &end), 0);
    assert_null(end.release);
    stream.release(&stream);
    assert_null(stream.release);
}

static void test_not_ours(void **state)
{
    (void)state;
    struct ArrowArrayStream other = {0};
    assert_null(shape_source_stream_position(&other));
}

/* CloudEvents lines are unwrapped to their `data` wherever the top-level
 * "specversion" key lies in the line (every offset, both sides of the
 * scanner's 16-byte blocks and its tail); a line whose "specversion" is not
 * "1.0" at the top level is decoded as it is. */
static void test_cloudevents_unwrapped_at_any_offset(void **state)
{
    (void)state;
    char ce_path[64];
    snprintf(ce_path, sizeof ce_path, "/tmp/shape-test-ce-XXXXXX");
    int fd = mkstemp(ce_path);
    FILE *f = fdopen(fd, "w");
    enum { PADS = 48 };
    for (int pad = 0; pad < PADS; pad++)
        fprintf(f, "{\"p\":\"%.*s\",\"specversion\":\"1.0\",\"data\":{\"k\":%d}}\n", pad,
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", pad);
    fprintf(f, "{\"data\":{\"k\":%d},\"specversion\":\"1.0\"}\n", PADS);      /* data first */
    fprintf(f, "{\"k\":%d,\"n\":{\"specversion\":\"1.0\",\"data\":{}}}\n", PADS + 1); /* nested: kept */
    fprintf(f, "{\"k\":%d,\"specversion\":\"0.3\",\"data\":{\"k\":-1}}\n", PADS + 2); /* not 1.0: kept */
    fclose(f);
    shape_options *o = shape_options_new();
    shape_err err;
    shape_source *src;
    if (shape_file_source_open(ce_path, o, NULL, &src, &err) != SHAPE_OK) fail_msg("open: %s", err.message);
    shape_options_free(o);
    struct ArrowArrayStream stream;
    assert_int_equal(shape_source_arrow_stream(src, &stream, &err), SHAPE_OK);
    struct ArrowSchema schema;
    assert_int_equal(stream.get_schema(&stream, &schema), 0);
    /* k first (every unwrapped body starts with it), then the kept lines' own fields */
    assert_string_equal(schema.children[0]->name, "k");
    int n_fields = (int)schema.n_children;
    schema.release(&schema);
    assert_int_equal(n_fields, 5); /* k, n, specversion, data, _shape_event_time */
    struct ArrowArray a;
    assert_int_equal(stream.get_next(&stream, &a), 0);
    assert_non_null(a.release);
    assert_int_equal(a.length, PADS + 3);
    for (int64_t r = 0; r < a.length; r++) assert_int_equal(shape_arrow_int64_at(a.children[0], r), r);
    for (int64_t r = 0; r < PADS + 1; r++) assert_false(shape_arrow_is_valid(a.children[2], r)); /* unwrapped */
    assert_true(shape_arrow_is_valid(a.children[2], PADS + 2));
    a.release(&a);
    stream.release(&stream);
    unlink(ce_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batches_in_order_with_positions),
        cmocka_unit_test(test_not_ours),
        cmocka_unit_test(test_cloudevents_unwrapped_at_any_offset),
    };
    return cmocka_run_group_tests(tests, make_file, remove_file);
}

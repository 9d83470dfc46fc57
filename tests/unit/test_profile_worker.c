/* test_profile_worker.c — the profile worker (shape/profile_worker.h): the
 * profile it builds on its thread is byte for byte the one the same batches
 * give on the caller's thread, at every drain; every batch handed over is
 * released exactly once (profiled, or refused after a failure); the first
 * failure sticks and reaches submit and drain with its message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "shape/profile_worker.h"
#include "test_profile_util.h"

static shape_profile *new_profile(void) { return tp_new_profile("t"); }

static void assert_same_state(shape_profile *a, shape_profile *b)
{
    shape_err err;
    uint8_t *sa = NULL, *sb = NULL;
    size_t na = 0, nb = 0;
    assert_int_equal(shape_profile_state_save(a, &sa, &na, &err), SHAPE_OK);
    assert_int_equal(shape_profile_state_save(b, &sb, &nb, &err), SHAPE_OK);
    assert_int_equal(na, nb);
    assert_memory_equal(sa, sb, na);
    free(sa);
    free(sb);
}

static void test_same_profile_as_one_thread(void **state)
{
    (void)state;
    shape_profile *direct = new_profile(), *piped = new_profile();
    shape_profile_worker *w = NULL;
    shape_err err;
    assert_int_equal(shape_profile_worker_new(piped, &w, &err), SHAPE_OK);
    const int64_t batch = 997, batches = 24;
    for (int64_t k = 0; k < batches; k++) {
        struct ArrowSchema s;
        struct ArrowArray a;
        tp_make_batch(k * batch, batch, &s, &a);
        assert_int_equal(shape_profile_worker_submit(w, &s, &a, &err), SHAPE_OK);
        assert_null(a.release); /* moved */
        assert_null(s.release);
        tp_profile_rows(direct, k * batch, (k + 1) * batch, batch);
        if (k % 7 == 6) { /* a checkpoint: the state so far, exactly */
            assert_int_equal(shape_profile_worker_drain(w, &err), SHAPE_OK);
            assert_same_state(direct, piped);
        }
    }
    assert_int_equal(shape_profile_worker_drain(w, &err), SHAPE_OK);
    assert_int_equal(shape_profile_rows(piped), batch * batches);
    assert_same_state(direct, piped);
    shape_profile_worker_free(w);
    shape_profile_free(direct);
    shape_profile_free(piped);
}

/* A batch whose release callbacks are counted. */
typedef struct counted {
    struct ArrowSchema schema;
    struct ArrowArray array;
    int *schema_releases, *array_releases;
} counted;

static void counted_release_array(struct ArrowArray *a)
{
    counted *c = a->private_data;
    (*c->array_releases)++;
    c->array.release(&c->array);
    a->release = NULL;
    if (!c->schema.release) free(c);
}

static void counted_release_schema(struct ArrowSchema *s)
{
    counted *c = s->private_data;
    (*c->schema_releases)++;
    c->schema.release(&c->schema);
    s->release = NULL;
    if (!c->array.release) free(c);
}

static void make_counted(struct ArrowSchema *s, struct ArrowArray *a, int *sr, int *ar)
{
    counted *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->schema = *s;
    c->array = *a;
    c->schema_releases = sr;
    c->array_releases = ar;
    s->release = counted_release_schema;
    s->private_data = c;
    a->release = counted_release_array;
    a->private_data = c;
}

/* rows [r0, r0 + n) with the column "id" typed int64 or (changed) utf8 */
static void id_batch(int64_t r0, int64_t n, int as_text, struct ArrowSchema *s, struct ArrowArray *a)
{
    shape_err err;
    shape_batch *b = NULL;
    shape_column *c = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, "id", 2, as_text ? SHAPE_TYPE_UTF8 : SHAPE_TYPE_INT64, &c, &err),
                     SHAPE_OK);
    for (int64_t r = r0; r < r0 + n; r++) {
        char text[32];
        int len = snprintf(text, sizeof text, "%lld", (long long)r);
        assert_int_equal(as_text ? shape_column_append_bytes(c, text, (size_t)len, &err)
                                 : shape_column_append_int64(c, r, &err),
                         SHAPE_OK);
        assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    }
    assert_int_equal(shape_batch_finish(b, s, a, &err), SHAPE_OK);
    shape_batch_free(b);
}

static void counted_id_batch(int64_t r0, int as_text, struct ArrowSchema *s, struct ArrowArray *a, int *sr, int *ar)
{
    id_batch(r0, 100, as_text, s, a);
    make_counted(s, a, sr, ar);
}

static void test_failure_sticks_and_every_batch_is_released_once(void **state)
{
    (void)state;
    shape_profile *p = new_profile();
    shape_profile_worker *w = NULL;
    shape_err err;
    assert_int_equal(shape_profile_worker_new(p, &w, &err), SHAPE_OK);
    int sr = 0, ar = 0;
    struct ArrowSchema s;
    struct ArrowArray a;
    counted_id_batch(0, 0, &s, &a, &sr, &ar);
    assert_int_equal(shape_profile_worker_submit(w, &s, &a, &err), SHAPE_OK);
    counted_id_batch(100, 1, &s, &a, &sr, &ar); /* "id" changes type: refused by the profile */
    int rc = shape_profile_worker_submit(w, &s, &a, &err);
    assert_true(rc == SHAPE_OK || rc == SHAPE_EINVAL); /* the worker may not have got to it yet */
    counted_id_batch(200, 0, &s, &a, &sr, &ar);
    shape_err_clear(&err);
    rc = shape_profile_worker_submit(w, &s, &a, &err);
    if (rc == SHAPE_OK) { /* it was taken before the failure was known: drain tells */
        shape_err_clear(&err);
        rc = shape_profile_worker_drain(w, &err);
    }
    assert_int_equal(rc, SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "id"));
    shape_err_clear(&err);
    assert_int_equal(shape_profile_worker_drain(w, &err), SHAPE_EINVAL); /* sticks */
    assert_non_null(strstr(err.message, "id"));
    counted_id_batch(300, 0, &s, &a, &sr, &ar);
    assert_int_equal(shape_profile_worker_submit(w, &s, &a, &err), SHAPE_EINVAL);
    assert_null(a.release);
    shape_profile_worker_free(w);
    assert_int_equal(sr, 4); /* profiled or not, each once */
    assert_int_equal(ar, 4);
    assert_int_equal(shape_profile_rows(p), 100); /* only the batch before the failure */
    shape_profile_free(p);
}

static void test_free_profiles_what_was_handed_over(void **state)
{
    (void)state;
    shape_profile *p = new_profile();
    shape_profile_worker *w = NULL;
    shape_err err;
    assert_int_equal(shape_profile_worker_new(p, &w, &err), SHAPE_OK);
    int sr = 0, ar = 0;
    for (int k = 0; k < 5; k++) {
        struct ArrowSchema s;
        struct ArrowArray a;
        counted_id_batch(k * 100, 0, &s, &a, &sr, &ar);
        assert_int_equal(shape_profile_worker_submit(w, &s, &a, &err), SHAPE_OK);
    }
    shape_profile_worker_free(w); /* no drain: free finishes the batch in hand */
    assert_int_equal(sr, 5);
    assert_int_equal(ar, 5);
    assert_int_equal(shape_profile_rows(p), 500);
    shape_profile_worker_free(NULL);
    shape_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_profile_as_one_thread),
        cmocka_unit_test(test_failure_sticks_and_every_batch_is_released_once),
        cmocka_unit_test(test_free_profiles_what_was_handed_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

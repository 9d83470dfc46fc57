/* test_profile_state.c — the mergeable profiler state (shape/profile.h):
 * save → load → save is byte-identical for every column kind and edge
 * (empty, overflowed moments, long text keys); a loaded state continues
 * exactly as the original (same bytes after more batches); another
 * configuration, another version, a damaged checksum, truncation and
 * well-checksummed nonsense are all refused without crashing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "test_profile_util.h"

static void save(const shape_profile *p, uint8_t **out, size_t *len)
{
    shape_err err;
    shape_err_clear(&err);
    if (shape_profile_state_save(p, out, len, &err) != SHAPE_OK) fail_msg("save: %s", err.message);
}

static shape_profile *load(const uint8_t *data, size_t len)
{
    shape_profile *p = NULL;
    shape_err err;
    shape_err_clear(&err);
    if (shape_profile_state_load(data, len, NULL, &p, &err) != SHAPE_OK) fail_msg("load: %s", err.message);
    return p;
}

static char *document(const shape_profile *p)
{
    const shape_profile *t[1] = {p};
    char *text = NULL;
    size_t len;
    shape_err err;
    assert_int_equal(shape_profile_document(t, 1, &text, &len, &err), SHAPE_OK);
    return text;
}

/* save → load → save, same bytes and same document */
static void assert_round_trip(const shape_profile *p)
{
    uint8_t *a, *b;
    size_t alen, blen;
    save(p, &a, &alen);
    shape_profile *q = load(a, alen);
    save(q, &b, &blen);
    assert_int_equal(alen, blen);
    assert_memory_equal(a, b, alen);
    char *d1 = document(p), *d2 = document(q);
    assert_string_equal(d1, d2);
    free(d1);
    free(d2);
    free(a);
    free(b);
    shape_profile_free(q);
}

static void test_round_trip(void **state)
{
    (void)state;
    shape_profile *p = tp_new_profile("stream");
    assert_round_trip(p); /* no columns */
    tp_profile_rows(p, 0, 1, 1); /* one row: sparse HLL, tiny sketches */
    assert_round_trip(p);
    tp_profile_rows(p, 1, 60000, 4096); /* dense HLL, compacted KLL, full SpaceSaving */
    assert_round_trip(p);
    shape_profile_free(p);

    /* overflowed moments (inf/NaN doubles) and infinities in top survive */
    p = tp_new_profile("x");
    shape_err err;
    shape_batch *b = NULL;
    shape_column *c = NULL, *t = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, "big", 3, SHAPE_TYPE_FLOAT64, &c, &err), SHAPE_OK);
    assert_int_equal(shape_batch_add_column(b, "long", 4, SHAPE_TYPE_UTF8, &t, &err), SHAPE_OK);
    char text[5000];
    memset(text, 'k', sizeof text);
    const double vals[] = {1e308, -1e308, 1e308, INFINITY, -INFINITY, NAN, 1e308};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(shape_column_append_double(c, vals[i], &err), SHAPE_OK);
        assert_int_equal(shape_column_append_bytes(t, text, (size_t)(4000 + i), &err), SHAPE_OK);
        assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    }
    tp_update_from(p, b);
    assert_round_trip(p);
    shape_profile_free(p);
}

/* Checkpoint after batch j, reload, finish: identical to an uninterrupted run. */
static void test_resume_continues_exactly(void **state)
{
    (void)state;
    const int64_t rows = 50000, batch = 3000;
    shape_profile *whole = tp_new_profile("stream");
    tp_profile_rows(whole, 0, rows, batch);
    uint8_t *want;
    size_t want_len;
    save(whole, &want, &want_len);
    char *want_doc = document(whole);
    const int64_t cuts[] = {batch, 4 * batch, 16 * batch};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        shape_profile *first = tp_new_profile("stream");
        tp_profile_rows(first, 0, cuts[k], batch);
        uint8_t *mid;
        size_t mid_len;
        save(first, &mid, &mid_len);
        shape_profile_free(first);
        shape_profile *resumed = load(mid, mid_len);
        free(mid);
        tp_profile_rows(resumed, cuts[k], rows, batch);
        uint8_t *got;
        size_t got_len;
        save(resumed, &got, &got_len);
        assert_int_equal(got_len, want_len);
        assert_memory_equal(got, want, want_len);
        char *doc = document(resumed);
        assert_string_equal(doc, want_doc);
        free(doc);
        free(got);
        shape_profile_free(resumed);
    }
    free(want);
    free(want_doc);
    shape_profile_free(whole);
}

static void rechecksum(uint8_t *data, size_t len)
{
    uint64_t h = XXH3_64bits_withSeed(data, len - 8, 0);
    for (int i = 0; i < 8; i++) data[len - 8 + (size_t)i] = (uint8_t)(h >> (8 * i));
}

static void test_refusals(void **state)
{
    (void)state;
    shape_profile *p = tp_new_profile("stream");
    tp_profile_rows(p, 0, 200, 100);
    uint8_t *data;
    size_t len;
    save(p, &data, &len);
    shape_profile *q = NULL;
    shape_err err;
    /* another configuration */
    shape_profile_config cfg = {100};
    assert_int_equal(shape_profile_state_load(data, len, &cfg, &q, &err), SHAPE_EINVAL);
    assert_null(q);
    assert_non_null(strstr(err.message, "different profiler configuration"));
    assert_non_null(strstr(err.message, "top_n=500"));
    assert_non_null(strstr(err.message, "top_n=100"));
    assert_non_null(strstr(err.message, "use another file"));
    shape_profile *r = NULL;
    assert_int_equal(shape_profile_new("stream", &cfg, &r, &err), SHAPE_OK);
    assert_int_equal(shape_profile_merge(r, p, &err), SHAPE_EINVAL);
    shape_profile_free(r);
    /* another format version (checksum made right) */
    uint8_t *copy = malloc(len);
    memcpy(copy, data, len);
    copy[8] = 3;
    rechecksum(copy, len);
    assert_int_equal(shape_profile_state_load(copy, len, NULL, &q, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "version 3"));
    /* not a state at all */
    assert_int_equal(shape_profile_state_load((const uint8_t *)"{\"json\": 1}", 11, NULL, &q, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "not a profile state"));
    /* one flipped byte: checksum */
    memcpy(copy, data, len);
    copy[len / 2] ^= 0x40;
    assert_int_equal(shape_profile_state_load(copy, len, NULL, &q, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "checksum"));
    /* every truncation */
    for (size_t n = 0; n < len; n += (n < 64 ? 1 : 97)) {
        assert_int_equal(shape_profile_state_load(data, n, NULL, &q, &err), SHAPE_EINVAL);
        assert_null(q);
    }
    /* well-checksummed nonsense: flip bytes one at a time and fix the
     * checksum; loading must refuse or give a profile that saves and writes
     * a document (memory errors show under ASan / valgrind) */
    int refused = 0, accepted = 0;
    for (size_t i = 12; i + 8 < len; i += (i < 300 ? 1 : 331)) {
        for (int bit = 1; bit < 8; bit += 5) {
            memcpy(copy, data, len);
            copy[i] ^= (uint8_t)(1u << bit);
            rechecksum(copy, len);
            q = NULL;
            if (shape_profile_state_load(copy, len, NULL, &q, &err) != SHAPE_OK) {
                assert_null(q);
                refused++;
                continue;
            }
            accepted++;
            uint8_t *again;
            size_t again_len;
            save(q, &again, &again_len);
            free(again);
            char *doc = document(q);
            free(doc);
            /* a changed column format is a different schema: refusing the
             * next batch is right, crashing is not */
            struct ArrowSchema s;
            struct ArrowArray a;
            tp_make_batch(0, 10, &s, &a);
            int rc = shape_profile_update(q, &s, &a, &err);
            assert_true(rc == SHAPE_OK || rc == SHAPE_EINVAL);
            tp_release(&s, &a);
            shape_profile_free(q);
        }
    }
    assert_true(refused > 0);
    printf("  corrupted states: %d refused, %d accepted (value changes that keep every invariant)\n", refused, accepted);
    free(copy);
    free(data);
    shape_profile_free(p);
}

/* Found by tests/fuzz/fuzz_checkpoint.c: counts that are each in range but
 * whose sum overflows int64 (undefined behaviour) and wraps around to the
 * right total were accepted. Here two hours of the "ts" column get
 * INT64_MAX more and a third 2 more: 2 * (2^63 - 1) + 2 = 2^64, so the sum
 * wraps to exactly the old total. It must be refused, not trusted. */
static void test_refuses_wrapping_counts(void **state)
{
    (void)state;
    shape_profile *p = tp_new_profile("stream");
    tp_profile_rows(p, 0, 50, 50);
    uint8_t *data;
    size_t len;
    save(p, &data, &len);
    /* the "ts" column: name, format "tsu:UTC", Arrow type, then kind u8,
     * count, null_count i64, has_range u8, min, max i64, hour[24] */
    static const uint8_t head[] = {2, 0, 0, 0, 't', 's', 7, 0, 0, 0, 't', 's', 'u', ':', 'U', 'T', 'C'};
    uint8_t *at = NULL;
    for (size_t i = 0; i + sizeof head <= len && !at; i++)
        if (memcmp(data + i, head, sizeof head) == 0) at = data + i;
    assert_non_null(at);
    at += sizeof head;
    uint32_t type_len = (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
    uint8_t *hours = at + 4 + type_len + 1 + 8 + 8 + 1 + 8 + 8;
    assert_true(hours + 24 * 8 < data + len);
    const uint64_t add[3] = {(uint64_t)INT64_MAX, (uint64_t)INT64_MAX, 2};
    for (int h = 0; h < 3; h++) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) v |= (uint64_t)hours[8 * h + i] << (8 * i);
        v += add[h];
        for (int i = 0; i < 8; i++) hours[8 * h + i] = (uint8_t)(v >> (8 * i));
    }
    rechecksum(data, len);
    shape_profile *q = NULL;
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_profile_state_load(data, len, NULL, &q, &err), SHAPE_EINVAL);
    assert_null(q);
    assert_non_null(strstr(err.message, "temporal histograms"));
    free(data);
    shape_profile_free(p);
}

/* Issue 24 (item 5): a state records its sources and partitions (version
 * 2), a version-1 state still loads (origin unknown), and the merge check
 * refuses overlaps and other streams (unless any_source). */
static void test_origin(void **state)
{
    (void)state;
    shape_err err;
    shape_profile *a = tp_new_profile("stream"), *b = tp_new_profile("stream"), *q = NULL;
    tp_profile_rows(a, 0, 100, 50);
    tp_profile_rows(b, 100, 200, 50);
    assert_false(shape_profile_origin_known(a));
    const int32_t pa[] = {1, 0, 1}, pb[] = {2, 1};
    assert_int_equal(shape_profile_set_origin(a, "kafka://h/t", pa, 3, &err), SHAPE_OK);
    assert_int_equal(shape_profile_set_origin(b, "kafka://h/t", pb, 2, &err), SHAPE_OK);
    uint8_t *data;
    size_t len;
    save(a, &data, &len);
    assert_int_equal(shape_profile_state_load(data, len, NULL, &q, &err), SHAPE_OK);
    const int32_t *parts;
    size_t n;
    assert_true(shape_profile_origin_known(q));
    assert_string_equal(shape_profile_origin(q, 0, &parts, &n), "kafka://h/t");
    assert_null(shape_profile_origin(q, 1, NULL, NULL));
    assert_int_equal(n, 2);
    assert_int_equal(parts[0], 0);
    assert_int_equal(parts[1], 1);
    /* overlapping partitions, then another source, are refused */
    assert_int_equal(shape_profile_check_merge(q, b, 0, "a", "b", &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "a and b both hold partition 1 of kafka://h/t"));
    assert_int_equal(shape_profile_check_merge(q, b, 1, "a", "b", &err), SHAPE_EINVAL); /* any_source or not */
    assert_int_equal(shape_profile_set_origin(b, "kafka://h/u", pb, 2, &err), SHAPE_OK);
    assert_int_equal(shape_profile_check_merge(q, b, 0, "a", "b", &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "b profiles kafka://h/u but a profiles kafka://h/t"));
    assert_non_null(strstr(err.message, "--any-source"));
    /* with any_source the two streams merge, and the merge holds both */
    assert_int_equal(shape_profile_check_merge(q, b, 1, "a", "b", &err), SHAPE_OK);
    shape_profile *q2 = NULL;
    assert_int_equal(shape_profile_state_load(data, len, NULL, &q2, &err), SHAPE_OK);
    assert_int_equal(shape_profile_merge(q2, b, &err), SHAPE_OK);
    assert_string_equal(shape_profile_origin(q2, 1, &parts, &n), "kafka://h/u");
    assert_int_equal(n, 2);
    /* ... so a later state of either stream is checked against its own partitions */
    assert_int_equal(shape_profile_check_merge(q2, b, 1, "a+b", "b", &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "partition 1 of kafka://h/u"));
    shape_profile_free(q2);
    /* disjoint partitions merge, and the merge holds both */
    const int32_t pc[] = {2, 3};
    assert_int_equal(shape_profile_set_origin(b, "kafka://h/t", pc, 2, &err), SHAPE_OK);
    assert_int_equal(shape_profile_check_merge(q, b, 0, "a", "b", &err), SHAPE_OK);
    assert_int_equal(shape_profile_merge(q, b, &err), SHAPE_OK);
    shape_profile_origin(q, 0, &parts, &n);
    assert_int_equal(n, 4);
    assert_int_equal(parts[3], 3);
    /* unknown origin: only the columns are checked */
    shape_profile *c = tp_new_profile("stream");
    tp_profile_rows(c, 0, 10, 10);
    assert_int_equal(shape_profile_check_merge(q, c, 0, "a", "c", &err), SHAPE_OK);
    shape_profile_free(q);
    q = NULL;
    /* a version-1 state (no origin byte) loads, origin unknown */
    shape_profile_free(c);
    c = tp_new_profile("stream");
    tp_profile_rows(c, 0, 100, 50);
    uint8_t *v2;
    size_t v2len;
    save(c, &v2, &v2len);
    size_t at = 8 + 4; /* magic, version */
    for (int k = 0; k < 2; k++) { /* fingerprint, name */
        uint32_t l = (uint32_t)v2[at] | (uint32_t)v2[at + 1] << 8 | (uint32_t)v2[at + 2] << 16 | (uint32_t)v2[at + 3] << 24;
        at += 4 + l;
    }
    assert_int_equal(v2[at], 0); /* origin unknown */
    uint8_t *v1 = malloc(v2len - 1);
    memcpy(v1, v2, at);
    memcpy(v1 + at, v2 + at + 1, v2len - at - 1);
    v1[8] = 1;
    rechecksum(v1, v2len - 1);
    assert_int_equal(shape_profile_state_load(v1, v2len - 1, NULL, &q, &err), SHAPE_OK);
    assert_false(shape_profile_origin_known(q));
    assert_int_equal(shape_profile_rows(q), 100);
    uint8_t *again;
    size_t again_len;
    save(q, &again, &again_len);
    assert_int_equal(again_len, v2len);
    assert_memory_equal(again, v2, v2len); /* saved as version 2 */
    free(again);
    free(v1);
    free(v2);
    free(data);
    shape_profile_free(q);
    shape_profile_free(a);
    shape_profile_free(b);
    shape_profile_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_resume_continues_exactly),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_origin),
        cmocka_unit_test(test_refuses_wrapping_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_arrow.c — column and batch builders and their Arrow C Data Interface
 * export (shape/arrow.h): every type through export and the read helpers,
 * buffer layouts as the specification lays them out, lazy validity,
 * truncation, reuse, metadata bytes, moved children, empty batches and the
 * int32 offsets guard. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "shape/arrow.h"

/* ---- helpers ------------------------------------------------------------ */

static shape_batch *new_batch(void)
{
    shape_batch *b = NULL;
    shape_err err;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    return b;
}

static shape_column *add(shape_batch *b, const char *name, shape_type t)
{
    shape_column *c = NULL;
    shape_err err;
    assert_int_equal(shape_batch_add_column(b, name, strlen(name), t, &c, &err), SHAPE_OK);
    assert_non_null(c);
    return c;
}

static void finish(shape_batch *b, struct ArrowSchema *s, struct ArrowArray *a)
{
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_batch_finish(b, s, a, &err);
    if (rc != SHAPE_OK) fail_msg("finish: %s", err.message);
    assert_non_null(a->release);
    if (s) assert_non_null(s->release);
}

static void assert_aligned(const void *p)
{
    if (p) assert_int_equal((uintptr_t)p % 64, 0);
}

static void assert_str_at(const struct ArrowArray *a, int64_t i, const char *want)
{
    size_t len;
    const uint8_t *p = shape_arrow_bytes_at(a, i, &len);
    assert_int_equal(len, strlen(want));
    if (len) assert_memory_equal(p, want, len);
}

static const int32_t *offsets_of(const struct ArrowArray *a) { return (const int32_t *)a->buffers[1]; }
static const uint8_t *bits_of(const struct ArrowArray *a, int k) { return (const uint8_t *)a->buffers[k]; }

/* ---- types, formats, buffer counts ------------------------------------- */

static void test_formats(void **state)
{
    (void)state;
    static const struct {
        shape_type t;
        const char *fmt;
        int nbuf;
    } want[] = {
        {SHAPE_TYPE_NULL, "n", 0},           {SHAPE_TYPE_BOOL, "b", 2},
        {SHAPE_TYPE_INT64, "l", 2},          {SHAPE_TYPE_FLOAT64, "g", 2},
        {SHAPE_TYPE_UTF8, "u", 3},           {SHAPE_TYPE_BINARY, "z", 3},
        {SHAPE_TYPE_TIMESTAMP_US, "tsu:UTC", 2}, {SHAPE_TYPE_TIMESTAMP_NS, "tsn:UTC", 2},
        {SHAPE_TYPE_MAP, "+m", 2},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_string_equal(shape_type_format(want[i].t), want[i].fmt);
        assert_int_equal(shape_type_from_format(want[i].fmt), want[i].t);
        assert_int_equal(shape_type_n_buffers(want[i].t), want[i].nbuf);
    }
    assert_null(shape_type_format((shape_type)99));
    assert_int_equal(shape_type_from_format("i"), -1);
    assert_int_equal(shape_type_from_format(NULL), -1);
    assert_int_equal(ARROW_FLAG_DICTIONARY_ORDERED, 1);
    assert_int_equal(ARROW_FLAG_NULLABLE, 2);
    assert_int_equal(ARROW_FLAG_MAP_KEYS_SORTED, 4);
}

/* ---- fixed-width types -------------------------------------------------- */

static void test_int64_roundtrip_and_bitmap(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *c = add(b, "n", SHAPE_TYPE_INT64);
    shape_err err;
    /* 1, null, 3, null, null, 6, 7, 8, 9: validity 1 0 1 0 0 1 1 1 | 1 */
    const int64_t v[] = {1, 0, 3, 0, 0, 6, 7, 8, INT64_MIN};
    const int valid[] = {1, 0, 1, 0, 0, 1, 1, 1, 1};
    for (int i = 0; i < 9; i++) {
        if (valid[i])
            assert_int_equal(shape_column_append_int64(c, v[i], &err), SHAPE_OK);
        else
            assert_int_equal(shape_column_append_null(c, &err), SHAPE_OK);
    }
    assert_int_equal(shape_column_length(c), 9);
    assert_int_equal(shape_column_null_count(c), 3);

    struct ArrowSchema s;
    struct ArrowArray a;
    finish(b, &s, &a);
    assert_string_equal(s.format, "+s");
    assert_int_equal(s.n_children, 1);
    assert_string_equal(s.children[0]->format, "l");
    assert_string_equal(s.children[0]->name, "n");
    assert_int_equal(s.children[0]->flags, ARROW_FLAG_NULLABLE);
    assert_null(s.children[0]->metadata);
    assert_null(s.metadata);

    assert_int_equal(a.length, 9);
    assert_int_equal(a.null_count, 0);
    assert_int_equal(a.n_buffers, 1);
    assert_null(a.buffers[0]);
    assert_int_equal(a.n_children, 1);
    const struct ArrowArray *col = a.children[0];
    assert_int_equal(col->length, 9);
    assert_int_equal(col->null_count, 3);
    assert_int_equal(col->offset, 0);
    assert_int_equal(col->n_buffers, 2);
    assert_int_equal(col->n_children, 0);
    assert_null(col->dictionary);
    assert_non_null(col->buffers[0]);
    assert_aligned(col->buffers[0]);
    assert_aligned(col->buffers[1]);
    assert_int_equal(bits_of(col, 0)[0], 0xE5); /* LSB first: rows 0,2,5,6,7 */
    assert_int_equal(bits_of(col, 0)[1], 0x01);
    for (int i = 0; i < 9; i++) {
        assert_int_equal(shape_arrow_is_valid(col, i), valid[i]);
        if (valid[i]) assert_true(shape_arrow_int64_at(col, i) == v[i]);
    }
    a.release(&a);
    assert_null(a.release);
    s.release(&s);
    assert_null(s.release);
    shape_batch_free(b);
}

static void test_lazy_validity(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *c = add(b, "x", SHAPE_TYPE_INT64);
    shape_err err;
    for (int i = 0; i < 1000; i++) assert_int_equal(shape_column_append_int64(c, i, &err), SHAPE_OK);
    assert_null(c->validity);
    struct ArrowArray a;
    finish(b, NULL, &a);
    assert_null(a.children[0]->buffers[0]);
    assert_int_equal(a.children[0]->null_count, 0);
    for (int i = 0; i < 1000; i++) assert_true(shape_arrow_is_valid(a.children[0], i));
    a.release(&a);

    /* First null at row 13: rows 0..12 must read valid, 13 null, later valid. */
    for (int i = 0; i < 13; i++) assert_int_equal(shape_column_append_int64(c, i, &err), SHAPE_OK);
    assert_null(c->validity);
    assert_int_equal(shape_column_append_null(c, &err), SHAPE_OK);
    assert_non_null(c->validity);
    for (int i = 14; i < 600; i++) assert_int_equal(shape_column_append_int64(c, i, &err), SHAPE_OK);
    finish(b, NULL, &a);
    const struct ArrowArray *col = a.children[0];
    assert_int_equal(col->null_count, 1);
    assert_int_equal(bits_of(col, 0)[0], 0xFF);
    assert_int_equal(bits_of(col, 0)[1], 0xDF); /* bit 5 of byte 1 = row 13 */
    for (int i = 0; i < 600; i++) {
        assert_int_equal(shape_arrow_is_valid(col, i), i != 13);
        if (i != 13) assert_int_equal(shape_arrow_int64_at(col, i), i);
    }
    a.release(&a);

    /* A null truncated away leaves null_count 0: exported without a bitmap. */
    assert_int_equal(shape_column_append_int64(c, 1, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_null(c, &err), SHAPE_OK);
    assert_int_equal(shape_column_truncate(c, 1, &err), SHAPE_OK);
    assert_int_equal(c->null_count, 0);
    finish(b, NULL, &a);
    assert_null(a.children[0]->buffers[0]);
    assert_int_equal(a.children[0]->null_count, 0);
    a.release(&a);
    shape_batch_free(b);
}

static void test_double_bool_timestamps(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *d = add(b, "d", SHAPE_TYPE_FLOAT64);
    shape_column *t = add(b, "t", SHAPE_TYPE_BOOL);
    shape_column *us = add(b, "us", SHAPE_TYPE_TIMESTAMP_US);
    shape_column *ns = add(b, "ns", SHAPE_TYPE_TIMESTAMP_NS);
    shape_err err;
    /* bool values 1,0,null,1,1,0,0,1,1,1: values bits 1 0 0 1 1 0 0 1 | 1 1 */
    const int bools[] = {1, 0, -1, 1, 1, 0, 0, 1, 1, 1};
    for (int i = 0; i < 10; i++) {
        if (bools[i] < 0)
            assert_int_equal(shape_column_append_null(t, &err), SHAPE_OK);
        else
            assert_int_equal(shape_column_append_bool(t, bools[i], &err), SHAPE_OK);
        if (i == 4) {
            assert_int_equal(shape_column_append_null(d, &err), SHAPE_OK);
            assert_int_equal(shape_column_append_null(us, &err), SHAPE_OK);
        } else {
            assert_int_equal(shape_column_append_double(d, i * 0.5 - 1.0, &err), SHAPE_OK);
            assert_int_equal(shape_column_append_timestamp(us, 1700000000000000LL + i, &err), SHAPE_OK);
        }
        assert_int_equal(shape_column_append_timestamp(ns, 1700000000000000000LL + i, &err), SHAPE_OK);
    }
    struct ArrowSchema s;
    struct ArrowArray a;
    finish(b, &s, &a);
    assert_string_equal(s.children[0]->format, "g");
    assert_string_equal(s.children[1]->format, "b");
    assert_string_equal(s.children[2]->format, "tsu:UTC");
    assert_string_equal(s.children[3]->format, "tsn:UTC");

    const struct ArrowArray *ad = a.children[0], *at = a.children[1], *aus = a.children[2], *ans = a.children[3];
    assert_int_equal(ad->n_buffers, 2);
    assert_int_equal(at->n_buffers, 2);
    assert_int_equal(aus->n_buffers, 2);
    assert_int_equal(ans->n_buffers, 2);
    assert_int_equal(ad->null_count, 1);
    assert_int_equal(at->null_count, 1);
    assert_int_equal(aus->null_count, 1);
    assert_int_equal(ans->null_count, 0);
    assert_null(ans->buffers[0]);
    /* bool values bitmap: 1,0,(null->0),1,1,0,0,1 | 1,1 */
    assert_int_equal(bits_of(at, 1)[0], 0x99);
    assert_int_equal(bits_of(at, 1)[1], 0x03);
    assert_int_equal(bits_of(at, 0)[0], 0xFB);
    assert_int_equal(bits_of(at, 0)[1], 0x03);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(shape_arrow_is_valid(at, i), bools[i] >= 0);
        if (bools[i] >= 0) assert_int_equal(shape_arrow_bool_at(at, i), bools[i]);
        assert_int_equal(shape_arrow_is_valid(ad, i), i != 4);
        assert_int_equal(shape_arrow_is_valid(aus, i), i != 4);
        if (i != 4) {
            assert_true(shape_arrow_double_at(ad, i) == i * 0.5 - 1.0);
            assert_int_equal(shape_arrow_int64_at(aus, i), 1700000000000000LL + i);
        }
        assert_int_equal(shape_arrow_int64_at(ans, i), 1700000000000000000LL + i);
    }
    a.release(&a);
    s.release(&s);
    shape_batch_free(b);
}

/* ---- variable-width types ---------------------------------------------- */

static void test_utf8_binary_offsets(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *u = add(b, "u", SHAPE_TYPE_UTF8);
    shape_column *z = add(b, "z", SHAPE_TYPE_BINARY);
    shape_err err;
    assert_int_equal(shape_column_append_bytes(u, "héllo", strlen("héllo"), &err), SHAPE_OK);
    assert_int_equal(shape_column_append_null(u, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(u, "", 0, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(u, NULL, 0, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(u, "xyz", 3, &err), SHAPE_OK);
    const char bin[] = {'\0', '\xff', 'a', '\0'};
    assert_int_equal(shape_column_append_bytes(z, bin, 4, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(z, "", 0, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_null(z, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_null(z, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(z, bin + 1, 2, &err), SHAPE_OK);

    struct ArrowSchema s;
    struct ArrowArray a;
    finish(b, &s, &a);
    assert_string_equal(s.children[0]->format, "u");
    assert_string_equal(s.children[1]->format, "z");
    const struct ArrowArray *au = a.children[0], *az = a.children[1];
    assert_int_equal(au->n_buffers, 3);
    assert_int_equal(az->n_buffers, 3);
    assert_int_equal(au->null_count, 1);
    assert_int_equal(az->null_count, 2);
    const int32_t want_u[] = {0, 6, 6, 6, 6, 9};
    assert_memory_equal(offsets_of(au), want_u, sizeof want_u);
    assert_memory_equal(au->buffers[2], "h\xc3\xa9lloxyz", 9);
    const int32_t want_z[] = {0, 4, 4, 4, 4, 6};
    assert_memory_equal(offsets_of(az), want_z, sizeof want_z);
    assert_memory_equal(az->buffers[2], "\0\xff" "a\0\xff" "a", 6);
    assert_int_equal(bits_of(au, 0)[0], 0x1D);
    assert_int_equal(bits_of(az, 0)[0], 0x13);
    for (int k = 0; k < 3; k++) {
        assert_aligned(au->buffers[k]);
        assert_aligned(az->buffers[k]);
    }
    assert_str_at(au, 0, "héllo");
    assert_false(shape_arrow_is_valid(au, 1));
    assert_str_at(au, 2, "");
    assert_str_at(au, 3, "");
    assert_str_at(au, 4, "xyz");
    size_t len;
    const uint8_t *p = shape_arrow_bytes_at(az, 0, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(p, bin, 4);
    p = shape_arrow_bytes_at(az, 4, &len);
    assert_int_equal(len, 2);
    assert_memory_equal(p, bin + 1, 2);
    assert_false(shape_arrow_is_valid(az, 2));
    assert_true(shape_arrow_is_valid(az, 1));
    a.release(&a);
    s.release(&s);
    shape_batch_free(b);
}

static void test_commit_bytes_in_place(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *u = add(b, "u", SHAPE_TYPE_UTF8);
    shape_err err;
    for (int i = 0; i < 3000; i++) {
        assert_int_equal(shape_column_reserve(u, 1, 16, &err), SHAPE_OK);
        int n = snprintf((char *)u->data + u->data_length, 16, "v%d", i);
        shape_column_commit_bytes(u, (size_t)n);
    }
    struct ArrowArray a;
    finish(b, NULL, &a);
    char want[16];
    for (int i = 0; i < 3000; i++) {
        snprintf(want, sizeof want, "v%d", i);
        assert_str_at(a.children[0], i, want);
    }
    a.release(&a);
    shape_batch_free(b);
}

static void test_null_type(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *c = add(b, "nothing", SHAPE_TYPE_NULL);
    shape_err err;
    for (int i = 0; i < 5; i++) assert_int_equal(shape_column_append_null(c, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_nulls(c, 5, &err), SHAPE_OK);
    assert_int_equal(shape_column_truncate(c, 7, &err), SHAPE_OK);
    struct ArrowSchema s;
    struct ArrowArray a;
    finish(b, &s, &a);
    assert_string_equal(s.children[0]->format, "n");
    const struct ArrowArray *col = a.children[0];
    assert_int_equal(col->length, 7);
    assert_int_equal(col->null_count, 7);
    assert_int_equal(col->n_buffers, 0);
    for (int i = 0; i < 7; i++) assert_false(shape_arrow_is_valid(col, i));
    a.release(&a);
    s.release(&s);
    shape_batch_free(b);
}

/* ---- maps --------------------------------------------------------------- */

static void append_map_row(shape_column *m, int n, const char *const *kv)
{
    shape_err err;
    assert_int_equal(shape_column_map_begin_row(m, &err), SHAPE_OK);
    for (int i = 0; i < n; i++) {
        const char *k = kv[2 * i], *v = kv[2 * i + 1];
        assert_int_equal(shape_column_map_append(m, k, strlen(k), v, v ? strlen(v) : 0, &err), SHAPE_OK);
    }
    assert_int_equal(shape_column_map_end_row(m, &err), SHAPE_OK);
}

static void check_map_row(const struct ArrowArray *map, int64_t i, int n, const char *const *kv)
{
    const struct ArrowArray *keys, *vals;
    int64_t first;
    assert_true(shape_arrow_is_valid(map, i));
    assert_int_equal(shape_arrow_map_row(map, i, &keys, &vals, &first), n);
    for (int j = 0; j < n; j++) {
        assert_str_at(keys, first + j, kv[2 * j]);
        if (kv[2 * j + 1]) {
            assert_true(shape_arrow_is_valid(vals, first + j));
            assert_str_at(vals, first + j, kv[2 * j + 1]);
        } else {
            assert_false(shape_arrow_is_valid(vals, first + j));
        }
    }
}

static void test_map_roundtrip(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *m = add(b, "_shape_headers", SHAPE_TYPE_MAP);
    shape_err err;
    const char *r0[] = {"a", "1", "b", NULL};
    const char *r3[] = {"c", "xyz"};
    append_map_row(m, 2, r0);
    assert_int_equal(shape_column_append_null(m, &err), SHAPE_OK);
    append_map_row(m, 0, NULL);
    append_map_row(m, 1, r3);

    struct ArrowSchema s;
    struct ArrowArray a;
    finish(b, &s, &a);
    const struct ArrowSchema *sm = s.children[0];
    assert_string_equal(sm->format, "+m");
    assert_string_equal(sm->name, "_shape_headers");
    assert_int_equal(sm->flags, ARROW_FLAG_NULLABLE); /* keys not sorted */
    assert_int_equal(sm->n_children, 1);
    const struct ArrowSchema *se = sm->children[0];
    assert_string_equal(se->format, "+s");
    assert_string_equal(se->name, "entries");
    assert_int_equal(se->flags, 0);
    assert_int_equal(se->n_children, 2);
    assert_string_equal(se->children[0]->format, "u");
    assert_string_equal(se->children[0]->name, "key");
    assert_int_equal(se->children[0]->flags, 0);
    assert_string_equal(se->children[1]->format, "z");
    assert_string_equal(se->children[1]->name, "value");
    assert_int_equal(se->children[1]->flags, ARROW_FLAG_NULLABLE);

    const struct ArrowArray *am = a.children[0];
    assert_int_equal(am->length, 4);
    assert_int_equal(am->null_count, 1);
    assert_int_equal(am->n_buffers, 2);
    assert_int_equal(am->n_children, 1);
    const int32_t want_off[] = {0, 2, 2, 2, 3};
    assert_memory_equal(offsets_of(am), want_off, sizeof want_off);
    assert_int_equal(bits_of(am, 0)[0], 0x0D);
    const struct ArrowArray *ae = am->children[0];
    assert_int_equal(ae->length, 3);
    assert_int_equal(ae->null_count, 0);
    assert_int_equal(ae->n_buffers, 1);
    assert_null(ae->buffers[0]);
    assert_int_equal(ae->n_children, 2);
    assert_int_equal(ae->children[0]->n_buffers, 3);
    assert_int_equal(ae->children[0]->null_count, 0);
    assert_null(ae->children[0]->buffers[0]);
    assert_int_equal(ae->children[1]->n_buffers, 3);
    assert_int_equal(ae->children[1]->null_count, 1);
    check_map_row(am, 0, 2, r0);
    assert_false(shape_arrow_is_valid(am, 1));
    check_map_row(am, 2, 0, NULL);
    check_map_row(am, 3, 1, r3);
    a.release(&a);
    s.release(&s);
    shape_batch_free(b);
}

/* ---- truncation --------------------------------------------------------- */

static void test_truncate_every_type(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *cols[SHAPE_TYPE_COUNT];
    char name[32];
    for (int t = 0; t < SHAPE_TYPE_COUNT; t++) {
        snprintf(name, sizeof name, "c%d", t);
        cols[t] = add(b, name, (shape_type)t);
    }
    shape_err err;
    /* Rows 0..5: row r is null when r % 3 == 1; value r otherwise. */
    for (int r = 0; r < 6; r++) {
        for (int t = 0; t < SHAPE_TYPE_COUNT; t++) {
            shape_column *c = cols[t];
            char txt[32];
            snprintf(txt, sizeof txt, "r%d", r);
            if (r % 3 == 1 || t == SHAPE_TYPE_NULL) {
                assert_int_equal(shape_column_append_null(c, &err), SHAPE_OK);
                continue;
            }
            switch ((shape_type)t) {
            case SHAPE_TYPE_BOOL: assert_int_equal(shape_column_append_bool(c, r & 1, &err), 0); break;
            case SHAPE_TYPE_INT64:
            case SHAPE_TYPE_TIMESTAMP_US:
            case SHAPE_TYPE_TIMESTAMP_NS: assert_int_equal(shape_column_append_int64(c, r, &err), 0); break;
            case SHAPE_TYPE_FLOAT64: assert_int_equal(shape_column_append_double(c, r, &err), 0); break;
            case SHAPE_TYPE_UTF8:
            case SHAPE_TYPE_BINARY:
                assert_int_equal(shape_column_append_bytes(c, txt, strlen(txt), &err), 0);
                break;
            case SHAPE_TYPE_MAP: {
                const char *kv[] = {"k", txt, "k2", NULL};
                append_map_row(c, 2, kv);
                break;
            }
            default: break;
            }
        }
    }
    /* Roll back to 4 rows (0..3; nulls at 1 and 4 -> only row 1 remains null). */
    for (int t = 0; t < SHAPE_TYPE_COUNT; t++) {
        assert_int_equal(shape_column_truncate(cols[t], 7, &err), SHAPE_EINVAL);
        assert_int_equal(shape_column_truncate(cols[t], -1, &err), SHAPE_EINVAL);
        assert_int_equal(shape_column_truncate(cols[t], 4, &err), SHAPE_OK);
        assert_int_equal(cols[t]->length, 4);
        assert_int_equal(cols[t]->null_count, t == SHAPE_TYPE_NULL ? 4 : 1);
    }
    assert_int_equal(cols[SHAPE_TYPE_UTF8]->data_length, 6); /* r0 r2 r3 */
    assert_int_equal(cols[SHAPE_TYPE_MAP]->keys->length, 6);  /* 2 entries x 3 rows */
    /* A map row begun, given entries, then abandoned (truncate to its index). */
    shape_column *m = cols[SHAPE_TYPE_MAP];
    assert_int_equal(shape_column_map_begin_row(m, &err), SHAPE_OK);
    assert_int_equal(shape_column_map_append(m, "half", 4, "x", 1, &err), SHAPE_OK);
    assert_int_equal(shape_column_truncate(m, m->length, &err), SHAPE_OK);
    assert_int_equal(m->keys->length, 6);
    assert_int_equal(m->items->length, 6);
    assert_int_equal(m->items->null_count, 3);

    /* Append one more row (value 9) everywhere after the rollback. */
    for (int t = 0; t < SHAPE_TYPE_COUNT; t++) {
        shape_column *c = cols[t];
        switch ((shape_type)t) {
        case SHAPE_TYPE_NULL: assert_int_equal(shape_column_append_null(c, &err), 0); break;
        case SHAPE_TYPE_BOOL: assert_int_equal(shape_column_append_bool(c, 1, &err), 0); break;
        case SHAPE_TYPE_INT64:
        case SHAPE_TYPE_TIMESTAMP_US:
        case SHAPE_TYPE_TIMESTAMP_NS: assert_int_equal(shape_column_append_int64(c, 9, &err), 0); break;
        case SHAPE_TYPE_FLOAT64: assert_int_equal(shape_column_append_double(c, 9, &err), 0); break;
        case SHAPE_TYPE_UTF8:
        case SHAPE_TYPE_BINARY: assert_int_equal(shape_column_append_bytes(c, "r9", 2, &err), 0); break;
        case SHAPE_TYPE_MAP: {
            const char *kv[] = {"k9", "v9"};
            append_map_row(c, 1, kv);
            break;
        }
        default: break;
        }
    }
    struct ArrowArray a;
    finish(b, NULL, &a);
    assert_int_equal(a.length, 5);
    for (int t = 0; t < SHAPE_TYPE_COUNT; t++) {
        const struct ArrowArray *c = a.children[t];
        assert_int_equal(c->length, 5);
        if (t == SHAPE_TYPE_NULL) {
            assert_int_equal(c->null_count, 5);
            continue;
        }
        assert_int_equal(c->null_count, 1);
        assert_int_equal(bits_of(c, 0)[0], 0x1D); /* 1 0 1 1 1 */
        switch ((shape_type)t) {
        case SHAPE_TYPE_BOOL:
            assert_int_equal(shape_arrow_bool_at(c, 0), 0);
            assert_int_equal(shape_arrow_bool_at(c, 3), 1);
            assert_int_equal(shape_arrow_bool_at(c, 4), 1);
            break;
        case SHAPE_TYPE_INT64:
        case SHAPE_TYPE_TIMESTAMP_US:
        case SHAPE_TYPE_TIMESTAMP_NS:
            assert_int_equal(shape_arrow_int64_at(c, 3), 3);
            assert_int_equal(shape_arrow_int64_at(c, 4), 9);
            break;
        case SHAPE_TYPE_FLOAT64: assert_true(shape_arrow_double_at(c, 4) == 9.0); break;
        case SHAPE_TYPE_UTF8:
        case SHAPE_TYPE_BINARY: {
            const int32_t want[] = {0, 2, 2, 4, 6, 8};
            assert_memory_equal(offsets_of(c), want, sizeof want);
            assert_memory_equal(c->buffers[2], "r0r2r3r9", 8);
            break;
        }
        case SHAPE_TYPE_MAP: {
            const int32_t want[] = {0, 2, 2, 4, 6, 7};
            assert_memory_equal(offsets_of(c), want, sizeof want);
            assert_int_equal(c->children[0]->length, 7);
            const char *r3[] = {"k", "r3", "k2", NULL};
            const char *r4[] = {"k9", "v9"};
            check_map_row(c, 3, 2, r3);
            check_map_row(c, 4, 1, r4);
            break;
        }
        default: break;
        }
    }
    a.release(&a);
    shape_batch_free(b);
}

/* ---- batch protocol ----------------------------------------------------- */

static void test_batch_rows_and_lookup(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_err err;
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "field_%d", i);
        add(b, name, (shape_type)(i % SHAPE_TYPE_COUNT));
    }
    assert_int_equal(shape_batch_num_columns(b), 200);
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "field_%d", i);
        shape_column *c = shape_batch_find(b, name, strlen(name));
        assert_non_null(c);
        assert_ptr_equal(c, shape_batch_column(b, i));
        assert_string_equal(shape_column_name(c), name);
        assert_int_equal(shape_batch_find_index(b, name, strlen(name)), i);
    }
    assert_null(shape_batch_find(b, "field_200", 9));
    assert_null(shape_batch_find(b, "field_1", 6)); /* a prefix of a name */
    assert_null(shape_batch_column(b, 200));
    assert_null(shape_batch_column(b, -1));
    assert_int_equal(shape_batch_add_column(b, "field_7", 7, SHAPE_TYPE_INT64, NULL, &err), SHAPE_EINVAL);
    assert_int_equal(shape_batch_add_column(b, "a\0b", 3, SHAPE_TYPE_INT64, NULL, &err), SHAPE_EINVAL);
    assert_int_equal(shape_batch_add_column(b, "t", 1, (shape_type)42, NULL, &err), SHAPE_EINVAL);
    /* Names are (pointer, length): not NUL-terminated input is fine. */
    shape_column *e = NULL;
    assert_int_equal(shape_batch_add_column(b, "abcdef", 3, SHAPE_TYPE_INT64, &e, &err), SHAPE_OK);
    assert_string_equal(e->name, "abc");
    assert_ptr_equal(shape_batch_find(b, "abcXYZ", 3), e);
    assert_int_equal(shape_batch_add_column(b, "", 0, SHAPE_TYPE_UTF8, &e, &err), SHAPE_OK);
    assert_ptr_equal(shape_batch_find(b, "", 0), e);
    shape_batch_free(b);
}

static void test_end_row_rollback_and_late_column(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *x = add(b, "x", SHAPE_TYPE_INT64);
    shape_column *y = add(b, "y", SHAPE_TYPE_UTF8);
    shape_err err;
    /* row 0: x=1 y="a"; row 1: x only; row 2: y only */
    assert_int_equal(shape_column_append_int64(x, 1, &err), 0);
    assert_int_equal(shape_column_append_bytes(y, "a", 1, &err), 0);
    assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_int64(x, 2, &err), 0);
    assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(y, "c", 1, &err), 0);
    assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    assert_int_equal(shape_batch_rows(b), 3);
    /* A row giving x twice is refused, then rolled back. */
    assert_int_equal(shape_column_append_int64(x, 3, &err), 0);
    assert_int_equal(shape_column_append_int64(x, 4, &err), 0);
    assert_int_equal(shape_column_append_bytes(y, "bad", 3, &err), 0);
    assert_int_equal(shape_batch_end_row(b, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "'x'"));
    shape_batch_rollback_row(b);
    assert_int_equal(x->length, 3);
    assert_int_equal(y->length, 3);
    assert_int_equal(y->data_length, 2);
    /* A column seen first in row 3 starts with 3 nulls. */
    shape_column *z = add(b, "z", SHAPE_TYPE_BOOL);
    assert_int_equal(z->length, 3);
    assert_int_equal(z->null_count, 3);
    assert_int_equal(shape_column_append_bool(z, 1, &err), 0);
    assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);

    struct ArrowSchema s;
    struct ArrowArray a;
    finish(b, &s, &a);
    assert_int_equal(shape_batch_rows(b), 0);
    assert_int_equal(a.length, 4);
    assert_int_equal(s.n_children, 3);
    assert_string_equal(s.children[2]->name, "z");
    const struct ArrowArray *ax = a.children[0], *ay = a.children[1], *az = a.children[2];
    assert_int_equal(ax->null_count, 2);
    assert_int_equal(bits_of(ax, 0)[0], 0x03);
    assert_int_equal(ay->null_count, 2);
    assert_int_equal(bits_of(ay, 0)[0], 0x05);
    assert_str_at(ay, 0, "a");
    assert_str_at(ay, 2, "c");
    assert_int_equal(az->null_count, 3);
    assert_int_equal(bits_of(az, 0)[0], 0x08);
    assert_int_equal(shape_arrow_bool_at(az, 3), 1);
    a.release(&a);
    s.release(&s);
    shape_batch_free(b);
}

static void test_commit_row_after_filling_every_column(void **state)
{
    (void)state;
    /* The fast row end: the caller filled (or padded) every column itself. */
    shape_batch *b = new_batch();
    shape_column *x = add(b, "x", SHAPE_TYPE_INT64);
    shape_column *y = add(b, "y", SHAPE_TYPE_UTF8);
    shape_err err;
    for (int row = 0; row < 5; row++) {
        assert_int_equal(shape_column_append_int64(x, row, &err), 0);
        if (row % 2) assert_int_equal(shape_column_append_bytes(y, "odd", 3, &err), 0);
        else assert_int_equal(shape_column_append_null(y, &err), 0);
        shape_batch_commit_row(b);
        assert_int_equal(shape_batch_rows(b), row + 1);
    }
    /* Mixed with the checking form, and rolled back like it. */
    assert_int_equal(shape_column_append_int64(x, 9, &err), 0);
    assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_int64(x, 10, &err), 0);
    shape_batch_rollback_row(b);
    struct ArrowSchema s;
    struct ArrowArray a;
    finish(b, &s, &a);
    assert_int_equal(a.length, 6);
    assert_int_equal(shape_arrow_int64_at(a.children[0], 5), 9);
    assert_int_equal(a.children[1]->null_count, 4);
    assert_str_at(a.children[1], 3, "odd");
    a.release(&a);
    s.release(&s);
    shape_batch_free(b);
}

static void test_bytes_of_every_length(void **state)
{
    (void)state;
    /* Appends copy short values word by word: every length from 0 to 40,
     * from every alignment, lands exactly, and nothing around it moves. */
    shape_batch *b = new_batch();
    shape_column *u = add(b, "u", SHAPE_TYPE_BINARY);
    shape_err err;
    unsigned char src[64];
    for (int i = 0; i < 64; i++) src[i] = (unsigned char)(i * 7 + 1);
    int rows = 0;
    for (size_t len = 0; len <= 40; len++)
        for (size_t at = 0; at < 8; at++, rows++) assert_int_equal(shape_column_append_bytes(u, src + at, len, &err), 0);
    struct ArrowSchema s;
    struct ArrowArray a;
    finish(b, &s, &a);
    int row = 0;
    for (size_t len = 0; len <= 40; len++)
        for (size_t at = 0; at < 8; at++, row++) {
            size_t got;
            const uint8_t *p = shape_arrow_bytes_at(a.children[0], row, &got);
            assert_int_equal(got, len);
            if (len) assert_memory_equal(p, src + at, len);
        }
    assert_int_equal(row, rows);
    a.release(&a);
    s.release(&s);
    shape_batch_free(b);
}

static void test_finish_refuses_ragged_columns(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *x = add(b, "x", SHAPE_TYPE_INT64);
    shape_column *y = add(b, "y", SHAPE_TYPE_INT64);
    shape_column *m = add(b, "m", SHAPE_TYPE_MAP);
    shape_err err;
    assert_int_equal(shape_column_append_int64(x, 1, &err), 0);
    struct ArrowArray a;
    memset(&a, 0, sizeof a);
    assert_int_equal(shape_batch_finish(b, NULL, &a, &err), SHAPE_EINVAL);
    assert_null(a.release);
    assert_int_equal(x->length, 1);
    assert_int_equal(shape_column_append_int64(y, 2, &err), 0);
    assert_int_equal(shape_column_map_begin_row(m, &err), 0);
    assert_int_equal(shape_column_map_append(m, "k", 1, "v", 1, &err), 0);
    assert_int_equal(shape_batch_finish(b, NULL, &a, &err), SHAPE_EINVAL); /* m has 0 rows */
    assert_int_equal(shape_column_map_end_row(m, &err), 0);
    append_map_row(m, 0, NULL);
    assert_int_equal(shape_column_map_begin_row(m, &err), 0);
    assert_int_equal(shape_column_map_append(m, "k", 1, "v", 1, &err), 0);
    assert_int_equal(shape_column_append_int64(x, 1, &err), 0);
    assert_int_equal(shape_column_append_int64(y, 1, &err), 0);
    assert_int_equal(shape_batch_finish(b, NULL, &a, &err), SHAPE_EINVAL); /* open map row */
    assert_non_null(strstr(err.message, "begun"));
    assert_int_equal(shape_column_truncate(m, m->length, &err), SHAPE_OK); /* abandon it */
    finish(b, NULL, &a);
    assert_int_equal(a.length, 2);
    a.release(&a);
    shape_batch_free(b);
}

static void test_reuse_over_batches(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *n = add(b, "n", SHAPE_TYPE_INT64);
    shape_column *s = add(b, "s", SHAPE_TYPE_UTF8);
    shape_column *m = add(b, "m", SHAPE_TYPE_MAP);
    shape_err err;
    const int sizes[] = {1000, 0, 5000, 3, 1000};
    struct ArrowArray kept[5];
    for (int k = 0; k < 5; k++) {
        for (int i = 0; i < sizes[k]; i++) {
            char txt[32];
            int len = snprintf(txt, sizeof txt, "%d-%d", k, i);
            if (k == 2 && i % 7 == 0)
                assert_int_equal(shape_column_append_null(n, &err), 0);
            else
                assert_int_equal(shape_column_append_int64(n, k * 100000 + i, &err), 0);
            assert_int_equal(shape_column_append_bytes(s, txt, (size_t)len, &err), 0);
            const char *kv[] = {"batch", txt};
            append_map_row(m, 1, kv);
            assert_int_equal(shape_batch_end_row(b, &err), 0);
        }
        finish(b, NULL, &kept[k]);
        assert_int_equal(n->length, 0);
        assert_null(n->validity);
        assert_null(n->values);
        assert_int_equal(s->data_length, 0);
        assert_int_equal(m->keys->length, 0);
    }
    /* Every batch stays readable after later ones were built (no sharing). */
    for (int k = 0; k < 5; k++) {
        const struct ArrowArray *a = &kept[k];
        assert_int_equal(a->length, sizes[k]);
        const struct ArrowArray *an = a->children[0];
        if (k == 2) {
            assert_int_equal(an->null_count, (5000 + 6) / 7);
        } else {
            assert_int_equal(an->null_count, 0);
            assert_null(an->buffers[0]);
        }
        for (int i = 0; i < sizes[k]; i++) {
            char txt[32];
            snprintf(txt, sizeof txt, "%d-%d", k, i);
            int null = k == 2 && i % 7 == 0;
            assert_int_equal(shape_arrow_is_valid(an, i), !null);
            if (!null) assert_int_equal(shape_arrow_int64_at(an, i), k * 100000 + i);
            assert_str_at(a->children[1], i, txt);
            const char *kv[] = {"batch", txt};
            check_map_row(a->children[2], i, 1, kv);
        }
    }
    for (int k = 0; k < 5; k++) kept[k].release(&kept[k]);
    shape_batch_free(b);
}

/* ---- empty batches ------------------------------------------------------ */

static void test_empty_batch(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    struct ArrowSchema s;
    struct ArrowArray a;
    finish(b, &s, &a); /* no columns, no rows */
    assert_int_equal(a.length, 0);
    assert_int_equal(a.n_children, 0);
    assert_int_equal(s.n_children, 0);
    assert_string_equal(s.format, "+s");
    a.release(&a);
    s.release(&s);

    for (int t = 0; t < SHAPE_TYPE_COUNT; t++) {
        char name[32];
        snprintf(name, sizeof name, "c%d", t);
        add(b, name, (shape_type)t);
    }
    for (int round = 0; round < 2; round++) {
        finish(b, &s, &a);
        assert_int_equal(a.length, 0);
        assert_int_equal(a.n_children, SHAPE_TYPE_COUNT);
        for (int t = 0; t < SHAPE_TYPE_COUNT; t++) {
            const struct ArrowArray *c = a.children[t];
            assert_int_equal(c->length, 0);
            assert_int_equal(c->null_count, 0);
            assert_int_equal(c->n_buffers, shape_type_n_buffers((shape_type)t));
            assert_string_equal(s.children[t]->format, shape_type_format((shape_type)t));
            if (c->n_buffers > 0) assert_null(c->buffers[0]);
            if (t == SHAPE_TYPE_UTF8 || t == SHAPE_TYPE_BINARY || t == SHAPE_TYPE_MAP) {
                assert_non_null(c->buffers[1]); /* one offset, 0 */
                assert_int_equal(offsets_of(c)[0], 0);
            }
            if (t == SHAPE_TYPE_UTF8 || t == SHAPE_TYPE_BINARY) assert_non_null(c->buffers[2]);
            if (t == SHAPE_TYPE_MAP) {
                assert_int_equal(c->children[0]->length, 0);
                assert_int_equal(offsets_of(c->children[0]->children[0])[0], 0);
            }
        }
        a.release(&a);
        s.release(&s);
    }
    /* end_row with no columns still counts rows. */
    shape_batch *b2 = new_batch();
    shape_err err;
    assert_int_equal(shape_batch_end_row(b2, &err), SHAPE_OK);
    assert_int_equal(shape_batch_end_row(b2, &err), SHAPE_OK);
    finish(b2, NULL, &a);
    assert_int_equal(a.length, 2);
    a.release(&a);
    shape_batch_free(b2);
    shape_batch_free(b);
}

/* ---- metadata ----------------------------------------------------------- */

static void put_i32(uint8_t **p, int32_t v)
{
    memcpy(*p, &v, 4);
    *p += 4;
}

static void put_str(uint8_t **p, const char *s)
{
    put_i32(p, (int32_t)strlen(s));
    memcpy(*p, s, strlen(s));
    *p += strlen(s);
}

static void test_metadata_bytes(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    add(b, "x", SHAPE_TYPE_INT64);
    shape_err err;
    assert_int_equal(shape_batch_set_metadata(b, "shape.partition", "7", &err), SHAPE_OK);
    assert_int_equal(shape_batch_set_metadata(b, "shape.topic", "orders", &err), SHAPE_OK);
    assert_int_equal(shape_batch_set_metadata(b, "shape.partition", "3", &err), SHAPE_OK); /* replace */
    assert_int_equal(shape_batch_set_metadata(b, "gone", "", &err), SHAPE_OK);
    assert_int_equal(shape_batch_set_metadata(b, "gone", NULL, &err), SHAPE_OK); /* remove */
    assert_int_equal(shape_batch_set_metadata(b, "empty", "", &err), SHAPE_OK);
    assert_int_equal(shape_batch_set_metadata(b, NULL, "v", &err), SHAPE_EINVAL);

    uint8_t want[128], *p = want;
    put_i32(&p, 3);
    put_str(&p, "shape.partition");
    put_str(&p, "3");
    put_str(&p, "shape.topic");
    put_str(&p, "orders");
    put_str(&p, "empty");
    put_str(&p, "");
    size_t want_len = (size_t)(p - want);
    assert_int_equal(want_len, 4 + (4 + 15 + 4 + 1) + (4 + 11 + 4 + 6) + (4 + 5 + 4 + 0));

    struct ArrowSchema s;
    struct ArrowArray a;
    for (int round = 0; round < 2; round++) { /* metadata stays across batches */
        finish(b, &s, &a);
        assert_non_null(s.metadata);
        assert_int_equal(shape_arrow_metadata_size(s.metadata), want_len);
        assert_memory_equal(s.metadata, want, want_len);
        assert_null(s.children[0]->metadata);
        const char *v;
        int32_t vlen;
        assert_true(shape_arrow_metadata_find(s.metadata, "shape.partition", &v, &vlen));
        assert_int_equal(vlen, 1);
        assert_memory_equal(v, "3", 1);
        assert_true(shape_arrow_metadata_find(s.metadata, "empty", &v, &vlen));
        assert_int_equal(vlen, 0);
        assert_false(shape_arrow_metadata_find(s.metadata, "shape", &v, &vlen));
        a.release(&a);
        s.release(&s);
    }
    shape_batch_clear_metadata(b);
    finish(b, &s, &a);
    assert_null(s.metadata);
    assert_int_equal(shape_arrow_metadata_size(NULL), 0);
    a.release(&a);
    s.release(&s);

    /* The encoder on its own, with a schema node made from it. */
    const char *keys[] = {"k"}, *vals[] = {"value"};
    char *enc;
    size_t enc_len;
    assert_int_equal(shape_arrow_metadata_encode(keys, vals, 1, &enc, &enc_len, &err), SHAPE_OK);
    assert_int_equal(enc_len, 4 + 4 + 1 + 4 + 5);
    struct ArrowSchema node;
    assert_int_equal(shape_arrow_schema_make(&node, "l", "f", enc, ARROW_FLAG_NULLABLE, 0, &err), SHAPE_OK);
    assert_memory_equal(node.metadata, enc, enc_len);
    assert_ptr_not_equal(node.metadata, enc);
    free(enc);
    node.release(&node);
    assert_null(node.release);
    shape_batch_free(b);
}

/* ---- moving children ---------------------------------------------------- */

static void test_move_child_out(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *x = add(b, "x", SHAPE_TYPE_INT64);
    shape_column *s = add(b, "s", SHAPE_TYPE_UTF8);
    shape_column *m = add(b, "m", SHAPE_TYPE_MAP);
    shape_err err;
    for (int i = 0; i < 100; i++) {
        char txt[32];
        int len = snprintf(txt, sizeof txt, "s%d", i);
        assert_int_equal(shape_column_append_int64(x, i, &err), 0);
        assert_int_equal(shape_column_append_bytes(s, txt, (size_t)len, &err), 0);
        const char *kv[] = {"k", txt};
        append_map_row(m, 1, kv);
    }
    struct ArrowSchema sch;
    struct ArrowArray a;
    finish(b, &sch, &a);

    /* Move the utf8 child and the map's key array out, as a consumer may. */
    struct ArrowArray moved_s = *a.children[1];
    a.children[1]->release = NULL;
    struct ArrowArray *keys = a.children[2]->children[0]->children[0];
    struct ArrowArray moved_keys = *keys;
    keys->release = NULL;
    struct ArrowSchema moved_schema = *sch.children[2];
    sch.children[2]->release = NULL;

    a.release(&a); /* parent goes first */
    assert_null(a.release);
    sch.release(&sch);

    for (int i = 0; i < 100; i++) {
        char txt[32];
        snprintf(txt, sizeof txt, "s%d", i);
        assert_str_at(&moved_s, i, txt);
        assert_str_at(&moved_keys, i, "k");
    }
    assert_string_equal(moved_schema.format, "+m");
    assert_string_equal(moved_schema.children[0]->children[1]->name, "value");
    moved_s.release(&moved_s);
    assert_null(moved_s.release);
    moved_keys.release(&moved_keys);
    moved_schema.release(&moved_schema);
    assert_null(moved_schema.release);
    shape_batch_free(b);
}

/* ---- the int32 offsets guard ------------------------------------------- */

static void test_data_limit_guard(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *u = add(b, "u", SHAPE_TYPE_UTF8);
    shape_column *m = add(b, "m", SHAPE_TYPE_MAP);
    shape_err err;
    assert_int_equal(u->data_limit, INT32_MAX);
    shape_column_set_data_limit(u, 10);
    shape_column_set_data_limit(m, 4);
    assert_int_equal(shape_column_append_bytes(u, "12345", 5, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(u, "1234", 4, &err), SHAPE_OK);
    shape_err_clear(&err);
    assert_int_equal(shape_column_append_bytes(u, "12", 2, &err), SHAPE_ELIMIT);
    assert_int_equal(err.code, SHAPE_ELIMIT);
    assert_non_null(strstr(err.message, "'u'"));
    assert_int_equal(u->length, 2);
    assert_int_equal(u->data_length, 9);
    assert_int_equal(shape_column_append_bytes(u, "1", 1, &err), SHAPE_OK); /* exactly at the limit */
    assert_int_equal(shape_column_append_bytes(u, "", 0, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(u, "x", 1, &err), SHAPE_ELIMIT);
    assert_int_equal(shape_column_reserve(u, 1, 1, &err), SHAPE_ELIMIT);

    /* Map: the value that does not fit leaves the row as it was. */
    assert_int_equal(shape_column_map_begin_row(m, &err), SHAPE_OK);
    assert_int_equal(shape_column_map_append(m, "ab", 2, "cd", 2, &err), SHAPE_OK);
    assert_int_equal(shape_column_map_append(m, "ef", 2, "ghi", 3, &err), SHAPE_ELIMIT);
    assert_int_equal(m->keys->length, 1);
    assert_int_equal(m->items->length, 1);
    assert_int_equal(m->keys->data_length, 2);
    assert_int_equal(shape_column_map_end_row(m, &err), SHAPE_OK);
    for (int i = 0; i < 4; i++) assert_int_equal(shape_column_append_null(m, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_null(u, &err), SHAPE_OK);

    struct ArrowArray a;
    finish(b, NULL, &a);
    assert_int_equal(a.length, 5);
    const int32_t want[] = {0, 5, 9, 10, 10, 10};
    assert_memory_equal(offsets_of(a.children[0]), want, sizeof want);
    assert_int_equal(a.children[0]->null_count, 1);
    check_map_row(a.children[1], 0, 1, (const char *const[]){"ab", "cd"});
    a.release(&a);
    /* The limit holds for the next batch too; a fresh batch has room again. */
    assert_int_equal(shape_column_append_bytes(u, "1234567890", 10, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(u, "1", 1, &err), SHAPE_ELIMIT);
    shape_column_set_data_limit(u, INT64_MAX); /* clamped to INT32_MAX */
    assert_int_equal(u->data_limit, INT32_MAX);
    assert_int_equal(shape_column_append_bytes(u, "1", 1, &err), SHAPE_OK);
    shape_column_set_data_limit(u, 3); /* lowered below what is used */
    assert_int_equal(shape_column_append_bytes(u, "", 0, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(u, "1", 1, &err), SHAPE_ELIMIT);
    assert_int_equal(shape_column_truncate(u, 0, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(u, "123", 3, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_bytes(u, "4", 1, &err), SHAPE_ELIMIT);
    shape_batch_clear_rows(b);
    assert_int_equal(u->length, 0);
    assert_int_equal(m->length, 0);
    shape_batch_free(b);
}

static void test_growth_and_bulk_nulls(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *c = add(b, "c", SHAPE_TYPE_BOOL);
    shape_column *z = add(b, "z", SHAPE_TYPE_BINARY);
    shape_err err;
    assert_int_equal(shape_column_reserve(z, 10, 100000, &err), SHAPE_OK);
    assert_true(z->capacity >= 10);
    assert_true(z->data_capacity >= 100000);
    assert_int_equal(shape_column_append_nulls(c, 70000, &err), SHAPE_OK);
    assert_int_equal(shape_column_append_nulls(z, 70000, &err), SHAPE_OK);
    for (int i = 0; i < 70001; i++) {
        assert_int_equal(shape_column_append_bool(c, i % 3 == 0, &err), SHAPE_OK);
        assert_int_equal(shape_column_append_bytes(z, "ab", (size_t)(i % 3), &err), SHAPE_OK);
    }
    struct ArrowArray a;
    finish(b, NULL, &a);
    const struct ArrowArray *ac = a.children[0], *az = a.children[1];
    assert_int_equal(ac->length, 140001);
    assert_int_equal(ac->null_count, 70000);
    assert_int_equal(az->null_count, 70000);
    for (int64_t i = 0; i < 140001; i++) {
        int valid = i >= 70000;
        assert_int_equal(shape_arrow_is_valid(ac, i), valid);
        assert_int_equal(shape_arrow_is_valid(az, i), valid);
        if (valid) {
            assert_int_equal(shape_arrow_bool_at(ac, i), (i - 70000) % 3 == 0);
            size_t len;
            shape_arrow_bytes_at(az, i, &len);
            assert_int_equal(len, (size_t)((i - 70000) % 3));
        }
    }
    a.release(&a);
    shape_batch_free(b);
}

/* The read helpers honour a non-zero array offset (a consumer's slice). */
static void test_read_helpers_with_offset(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *x = add(b, "x", SHAPE_TYPE_INT64);
    shape_column *t = add(b, "t", SHAPE_TYPE_BOOL);
    shape_column *s = add(b, "s", SHAPE_TYPE_UTF8);
    shape_column *m = add(b, "m", SHAPE_TYPE_MAP);
    shape_err err;
    for (int i = 0; i < 20; i++) {
        char txt[32];
        int len = snprintf(txt, sizeof txt, "%d", i);
        if (i % 4 == 3) {
            assert_int_equal(shape_column_append_null(x, &err), 0);
            assert_int_equal(shape_column_append_null(t, &err), 0);
            assert_int_equal(shape_column_append_null(s, &err), 0);
            assert_int_equal(shape_column_append_null(m, &err), 0);
            continue;
        }
        assert_int_equal(shape_column_append_int64(x, i, &err), 0);
        assert_int_equal(shape_column_append_bool(t, i & 1, &err), 0);
        assert_int_equal(shape_column_append_bytes(s, txt, (size_t)len, &err), 0);
        const char *kv[] = {"i", txt, "j", txt};
        append_map_row(m, 2, kv);
    }
    struct ArrowArray a;
    finish(b, NULL, &a);
    for (int k = 0; k < 4; k++) {
        a.children[k]->offset = 5;
        a.children[k]->length = 15;
    }
    for (int i = 0; i < 15; i++) {
        int r = i + 5;
        char txt[32];
        snprintf(txt, sizeof txt, "%d", r);
        int valid = r % 4 != 3;
        for (int k = 0; k < 4; k++) assert_int_equal(shape_arrow_is_valid(a.children[k], i), valid);
        if (!valid) continue;
        assert_int_equal(shape_arrow_int64_at(a.children[0], i), r);
        assert_int_equal(shape_arrow_bool_at(a.children[1], i), r & 1);
        assert_str_at(a.children[2], i, txt);
        const char *kv[] = {"i", txt, "j", txt};
        check_map_row(a.children[3], i, 2, kv);
    }
    /* An offset on the entries struct shifts where its key/value rows start. */
    struct ArrowArray *entries = a.children[3]->children[0];
    entries->offset = 1;
    const struct ArrowArray *keys, *vals;
    int64_t first;
    assert_int_equal(shape_arrow_map_row(a.children[3], 0, &keys, &vals, &first), 2);
    /* row 5 has entries 8,9 (rows 0,1,2,4 before it); offset 1 -> 9 */
    assert_int_equal(first, 9);
    assert_str_at(keys, first, "j");
    a.release(&a);
    shape_batch_free(b);
}

/* ---- buffer recycling --------------------------------------------------- */

static void fill_rows(shape_column *x, shape_column *s, int n, int base)
{
    shape_err err;
    for (int i = 0; i < n; i++) {
        char txt[32];
        int len = snprintf(txt, sizeof txt, "row-%d", base + i);
        assert_int_equal(shape_column_append_int64(x, base + i, &err), 0);
        assert_int_equal(shape_column_append_bytes(s, txt, (size_t)len, &err), 0);
    }
}

static void check_rows(const struct ArrowArray *a, int n, int base)
{
    assert_int_equal(a->length, n);
    for (int i = 0; i < n; i++) {
        char txt[32];
        snprintf(txt, sizeof txt, "row-%d", base + i);
        assert_int_equal(shape_arrow_int64_at(a->children[0], i), base + i);
        assert_str_at(a->children[1], i, txt);
    }
}

static void test_buffers_recycled(void **state)
{
    (void)state;
    shape_batch *b = new_batch();
    shape_column *x = add(b, "x", SHAPE_TYPE_INT64);
    shape_column *s = add(b, "s", SHAPE_TYPE_UTF8);
    struct ArrowArray a1, a2, a3;
    fill_rows(x, s, 5000, 0);
    finish(b, NULL, &a1);
    const void *x1 = a1.children[0]->buffers[1], *s1 = a1.children[1]->buffers[2];
    check_rows(&a1, 5000, 0);
    a1.release(&a1); /* its buffers go back to the builder's pool */

    fill_rows(x, s, 5000, 100);
    finish(b, NULL, &a2);
    assert_ptr_equal(a2.children[0]->buffers[1], x1); /* the same memory, reused */
    assert_ptr_equal(a2.children[1]->buffers[2], s1);
    check_rows(&a2, 5000, 100);

    /* While a2 is held, the next batch gets other memory. */
    fill_rows(x, s, 5000, 200);
    finish(b, NULL, &a3);
    assert_ptr_not_equal(a3.children[0]->buffers[1], a2.children[0]->buffers[1]);
    check_rows(&a2, 5000, 100);
    check_rows(&a3, 5000, 200);

    /* Arrays may outlive the builder, and a child may outlive both. */
    struct ArrowArray moved = *a3.children[1];
    a3.children[1]->release = NULL;
    shape_batch_free(b);
    check_rows(&a2, 5000, 100);
    a2.release(&a2);
    a3.release(&a3);
    for (int i = 0; i < 5000; i += 999) {
        char txt[32];
        snprintf(txt, sizeof txt, "row-%d", 200 + i);
        assert_str_at(&moved, i, txt);
    }
    moved.release(&moved);
}

typedef struct release_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ArrowArray items[8];
    int head, tail, done;
} release_queue;

static void *releaser(void *arg)
{
    release_queue *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->head == q->tail && !q->done) pthread_cond_wait(&q->cv, &q->mu);
        if (q->head == q->tail && q->done) break;
        struct ArrowArray a = q->items[q->head % 8];
        q->head++;
        pthread_cond_broadcast(&q->cv);
        pthread_mutex_unlock(&q->mu);
        check_rows(&a, (int)a.length, (int)shape_arrow_int64_at(a.children[0], 0));
        a.release(&a);
        pthread_mutex_lock(&q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* A consumer releasing batches on its own thread while the builder fills the
 * next ones (the pool is shared between them). */
static void test_release_on_another_thread(void **state)
{
    (void)state;
    release_queue q;
    memset(&q, 0, sizeof q);
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.cv, NULL);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, releaser, &q), 0);
    shape_batch *b = new_batch();
    shape_column *x = add(b, "x", SHAPE_TYPE_INT64);
    shape_column *s = add(b, "s", SHAPE_TYPE_UTF8);
    for (int k = 0; k < 40; k++) {
        struct ArrowArray a;
        fill_rows(x, s, 1000 + k * 37, k * 100000);
        finish(b, NULL, &a);
        pthread_mutex_lock(&q.mu);
        while (q.tail - q.head == 8) pthread_cond_wait(&q.cv, &q.mu);
        q.items[q.tail % 8] = a;
        q.tail++;
        pthread_cond_broadcast(&q.cv);
        pthread_mutex_unlock(&q.mu);
        if (k == 30) {
            shape_batch_free(b); /* the builder goes while batches are in flight */
            b = new_batch();
            x = add(b, "x", SHAPE_TYPE_INT64);
            s = add(b, "s", SHAPE_TYPE_UTF8);
        }
    }
    pthread_mutex_lock(&q.mu);
    q.done = 1;
    pthread_cond_broadcast(&q.cv);
    pthread_mutex_unlock(&q.mu);
    assert_int_equal(pthread_join(th, NULL), 0);
    shape_batch_free(b);
    pthread_cond_destroy(&q.cv);
    pthread_mutex_destroy(&q.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_int64_roundtrip_and_bitmap),
        cmocka_unit_test(test_lazy_validity),
        cmocka_unit_test(test_double_bool_timestamps),
        cmocka_unit_test(test_utf8_binary_offsets),
        cmocka_unit_test(test_commit_bytes_in_place),
        cmocka_unit_test(test_null_type),
        cmocka_unit_test(test_map_roundtrip),
        cmocka_unit_test(test_truncate_every_type),
        cmocka_unit_test(test_batch_rows_and_lookup),
        cmocka_unit_test(test_end_row_rollback_and_late_column),
        cmocka_unit_test(test_commit_row_after_filling_every_column),
        cmocka_unit_test(test_bytes_of_every_length),
        cmocka_unit_test(test_finish_refuses_ragged_columns),
        cmocka_unit_test(test_reuse_over_batches),
        cmocka_unit_test(test_empty_batch),
        cmocka_unit_test(test_metadata_bytes),
        cmocka_unit_test(test_move_child_out),
        cmocka_unit_test(test_data_limit_guard),
        cmocka_unit_test(test_growth_and_bulk_nulls),
        cmocka_unit_test(test_read_helpers_with_offset),
        cmocka_unit_test(test_buffers_recycled),
        cmocka_unit_test(test_release_on_another_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_profile_util.h — helpers shared by the test_profile*.c programs: a
 * deterministic row generator covering every column kind (each value a pure
 * function of the row index, so a test can regenerate any row to compute
 * expected statistics independently, and split a stream anywhere), batch
 * building with shape/arrow.h, and JSON lookups. Include after cmocka.h. */
#ifndef TEST_PROFILE_UTIL_H
#define TEST_PROFILE_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shape/arrow.h"
#include "shape/profile.h"

static inline uint64_t tp_mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A uniform double in [0, 1) from row r and a stream id. */
static inline double tp_u(int64_t r, int stream)
{
    return (double)(tp_mix((uint64_t)r * 131 + (uint64_t)stream) >> 11) * (1.0 / 9007199254740992.0);
}

/* Pattern templates with their hand-checked masks (independent of the
 * matcher: written down from the pattern definitions). */
#define P(x) (1u << SHAPE_PATTERN_##x)
typedef struct tp_template {
    const char *text;
    unsigned mask;
} tp_template;

static const tp_template tp_templates[] = {
    {"alice@example.com", P(EMAIL)},
    {"123e4567-e89b-12d3-a456-426614174000", P(UUID)},
    {"123-45-6789", P(SSN) | P(PHONE)},
    {"00:1a:2b:3c:4d:5e", P(MAC)},
    {"192.168.1.20", P(IPV4) | P(PHONE)},
    {"fe80::1", P(IPV6)},
    {"DE89370400440532013000", P(IBAN)},
    {"90210", P(POSTAL)},
    {"2024-11-29", P(DATE) | P(PHONE)},
    {"+1 (555) 010-9999", P(PHONE)},
    {"USD", P(CURRENCY)},
    {"en-US", P(LANGUAGE)},
    {"hello w\xc3\xb6rld", 0},
    {"", 0},
    {"\303\274n\303\257c\303\266d\303\251 \360\237\230\200", 0},
    {"bob.smith@mail.example.org", P(EMAIL)},
};
#undef P
#define TP_N_TEMPLATES (sizeof tp_templates / sizeof tp_templates[0])

static const char *const tp_status[] = {"completed", "shipped", "exp\303\251di\303\251", "\xe9\x85\x8d\xe9\x80\x81\xe4\xb8\xad",
                                        "cancelled", "returned"};

/* The values of row r. `valid` flags: 0 = null. */
typedef struct tp_row {
    int id_valid, promo_valid, total_valid, flag_valid, status_valid, pattern_valid, ts_valid, tns_valid, blob_valid;
    int64_t id, promo;
    double total;
    int flag;
    const char *status;
    char pattern[300];
    size_t pattern_len;
    unsigned pattern_mask;
    int64_t ts_us, tns_ns;
} tp_row;

static inline void tp_make_row(int64_t r, tp_row *o)
{
    memset(o, 0, sizeof *o);
    o->id_valid = 1;
    o->id = r * 3 - 1000; /* unique, some negative */
    o->promo_valid = tp_u(r, 1) < 0.3;
    double u = tp_u(r, 2);
    o->promo = (int64_t)(u * u * u * 50) + 1; /* skewed 1..50 */
    double t = tp_u(r, 3);
    o->total_valid = t >= 0.02;
    if (t < 0.03) o->total = NAN;
    else if (t < 0.035) o->total = INFINITY;
    else if (t < 0.038) o->total = -INFINITY;
    else if (t < 0.045) o->total = -0.0;
    else {
        double v = tp_u(r, 4);
        o->total = (double)(int64_t)(v * v * v * 100000) / 100.0; /* cents, skewed, ties */
    }
    o->flag_valid = tp_u(r, 5) >= 0.1;
    o->flag = tp_u(r, 6) < 0.7;
    o->status_valid = tp_u(r, 7) >= 0.03;
    double s = tp_u(r, 8);
    o->status = tp_status[(int)(s * s * 6)];
    o->pattern_valid = tp_u(r, 9) >= 0.05;
    if (tp_u(r, 10) < 0.01) { /* an email too long to be tested (> 200 bytes) */
        memset(o->pattern, 'x', 195);
        memcpy(o->pattern + 195, "@example.com", 12);
        o->pattern_len = 207;
        o->pattern_mask = 0;
    } else {
        const tp_template *tt = &tp_templates[(size_t)(tp_u(r, 11) * TP_N_TEMPLATES)];
        o->pattern_len = strlen(tt->text);
        memcpy(o->pattern, tt->text, o->pattern_len);
        o->pattern_mask = tt->mask;
    }
    o->ts_valid = tp_u(r, 12) >= 0.01;
    o->ts_us = INT64_C(1640995200000000) + r * INT64_C(37000123) + (int64_t)(tp_u(r, 13) * 1e6);
    o->tns_valid = tp_u(r, 14) >= 0.2;
    o->tns_ns = INT64_C(-86400000000000) + r * INT64_C(1000000007) - 999; /* crosses the epoch, ns floored */
    o->blob_valid = tp_u(r, 15) >= 0.5;
}

static const char *const tp_columns[] = {"id", "promo", "total", "flag", "status", "pattern", "ts", "tns", "blob"};

/* A batch of rows [r0, r0 + n) as schema + struct array (caller releases). */
static inline void tp_make_batch(int64_t r0, int64_t n, struct ArrowSchema *schema, struct ArrowArray *array)
{
    shape_err err;
    shape_batch *b = NULL;
    assert_int_equal(shape_batch_new(&b, &err), SHAPE_OK);
    shape_column *c[9];
    const shape_type types[9] = {SHAPE_TYPE_INT64, SHAPE_TYPE_INT64, SHAPE_TYPE_FLOAT64, SHAPE_TYPE_BOOL, SHAPE_TYPE_UTF8,
                                 SHAPE_TYPE_UTF8,  SHAPE_TYPE_TIMESTAMP_US, SHAPE_TYPE_TIMESTAMP_NS, SHAPE_TYPE_BINARY};
    for (int i = 0; i < 9; i++)
        assert_int_equal(shape_batch_add_column(b, tp_columns[i], strlen(tp_columns[i]), types[i], &c[i], &err), SHAPE_OK);
    for (int64_t r = r0; r < r0 + n; r++) {
        tp_row o;
        tp_make_row(r, &o);
        int rc = 0;
        rc |= o.id_valid ? shape_column_append_int64(c[0], o.id, &err) : shape_column_append_null(c[0], &err);
        rc |= o.promo_valid ? shape_column_append_int64(c[1], o.promo, &err) : shape_column_append_null(c[1], &err);
        rc |= o.total_valid ? shape_column_append_double(c[2], o.total, &err) : shape_column_append_null(c[2], &err);
        rc |= o.flag_valid ? shape_column_append_bool(c[3], o.flag, &err) : shape_column_append_null(c[3], &err);
        rc |= o.status_valid ? shape_column_append_bytes(c[4], o.status, strlen(o.status), &err)
                             : shape_column_append_null(c[4], &err);
        rc |= o.pattern_valid ? shape_column_append_bytes(c[5], o.pattern, o.pattern_len, &err)
                              : shape_column_append_null(c[5], &err);
        rc |= o.ts_valid ? shape_column_append_timestamp(c[6], o.ts_us, &err) : shape_column_append_null(c[6], &err);
        rc |= o.tns_valid ? shape_column_append_timestamp(c[7], o.tns_ns, &err) : shape_column_append_null(c[7], &err);
        rc |= o.blob_valid ? shape_column_append_bytes(c[8], "\x00\x01\x02", 3, &err) : shape_column_append_null(c[8], &err);
        assert_int_equal(rc, 0);
        assert_int_equal(shape_batch_end_row(b, &err), SHAPE_OK);
    }
    assert_int_equal(shape_batch_finish(b, schema, array, &err), SHAPE_OK);
    shape_batch_free(b);
}

static inline void tp_release(struct ArrowSchema *s, struct ArrowArray *a)
{
    if (a && a->release) a->release(a);
    if (s && s->release) s->release(s);
}

/* Finish the builder's batch, profile it, release it and free the builder. */
static inline void tp_update_from(shape_profile *p, shape_batch *b)
{
    shape_err err;
    struct ArrowSchema s;
    struct ArrowArray a;
    assert_int_equal(shape_batch_finish(b, &s, &a, &err), SHAPE_OK);
    assert_int_equal(shape_profile_update(p, &s, &a, &err), SHAPE_OK);
    tp_release(&s, &a);
    shape_batch_free(b);
}

/* Profile rows [r0, r1) in batches of `batch` rows. */
static inline void tp_profile_rows(shape_profile *p, int64_t r0, int64_t r1, int64_t batch)
{
    for (int64_t r = r0; r < r1; r += batch) {
        int64_t n = r + batch <= r1 ? batch : r1 - r;
        struct ArrowSchema s;
        struct ArrowArray a;
        tp_make_batch(r, n, &s, &a);
        shape_err err;
        shape_err_clear(&err);
        int rc = shape_profile_update(p, &s, &a, &err);
        if (rc != SHAPE_OK) fail_msg("update: %s", err.message);
        tp_release(&s, &a);
    }
}

static inline shape_profile *tp_new_profile(const char *name)
{
    shape_profile *p = NULL;
    shape_err err;
    assert_int_equal(shape_profile_new(name, NULL, &p, &err), SHAPE_OK);
    return p;
}

/* The table entry as parsed JSON (strict parser, duplicates rejected; a
 * text value may hold a NUL, written as \u0000, which is valid JSON). */
static inline json_t *tp_table_json(const shape_profile *p)
{
    char *text = NULL;
    size_t len = 0;
    shape_err err;
    shape_err_clear(&err);
    const shape_profile *t[1] = {p};
    int rc = shape_profile_document(t, 1, &text, &len, &err);
    if (rc != SHAPE_OK) fail_msg("document: %s", err.message);
    json_error_t jerr;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!doc) fail_msg("document is not strict JSON: %s (line %d)", jerr.text, jerr.line);
    free(text);
    json_t *table = json_incref(json_object_get(json_object_get(doc, "tables"), shape_profile_name(p)));
    assert_non_null(table);
    json_decref(doc);
    return table;
}

static inline json_t *tp_column(json_t *table, const char *name)
{
    json_t *cols = json_object_get(table, "columns");
    for (size_t i = 0; i < json_array_size(cols); i++) {
        json_t *c = json_array_get(cols, i);
        if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0) return c;
    }
    fail_msg("no column %s", name);
    return NULL;
}

static inline int64_t tp_int(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v)) fail_msg("%s is not an integer", key);
    return (int64_t)json_integer_value(v);
}

static inline double tp_num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v)) fail_msg("%s is not a number", key);
    return json_number_value(v);
}

static inline double tp_rel(double got, long double want)
{
    long double d = ((long double)got - want) / (want != 0 ? want : 1);
    return (double)(d < 0 ? -d : d);
}

#endif

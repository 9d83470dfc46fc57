/* test_timeline.c — event-time order (shape/domain.h, "event-time order")
 * over retail's timeline variant: the whole stream of `small` walked once
 * and checked row by row (every row once, event times non-decreasing, every
 * foreign key's target earlier, the retail rules of spec-core §4), seeking
 * to any position gives the walk's events from there, at `medium` too, and
 * a domain without event-time order is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/domain.h"
#include "shape/generate_retail.h"

enum { CUS = SHAPE_RETAIL_CUSTOMER, ADR = SHAPE_RETAIL_ADDRESS, CAT = SHAPE_RETAIL_PRODUCT_CATEGORY,
       PRO = SHAPE_RETAIL_PRODUCT, PRM = SHAPE_RETAIL_PROMOTION, STO = SHAPE_RETAIL_STORE,
       ORD = SHAPE_RETAIL_ORDER, LIN = SHAPE_RETAIL_ORDER_LINE, RET = SHAPE_RETAIL_RETURN };

static shape_domain *open_tl(const char *preset)
{
    shape_err err;
    shape_domain *d = NULL;
    assert_int_equal(shape_domain_open_timeline(shape_retail_domain_type(), preset, 42, &d, &err), SHAPE_OK);
    assert_true(shape_domain_is_timeline(d));
    return d;
}

static int64_t cents(double x) { return (int64_t)(x * 100.0 + (x < 0 ? -0.5 : 0.5)); }

typedef struct ev {
    uint32_t t;
    uint64_t row;
} ev;

/* One walk over small: every check of the stream's construction. */
static void test_small_walk(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d = open_tl("small");
    shape_domain_timeline *tl = NULL;
    assert_int_equal(shape_domain_timeline_open(d, NULL, &tl, &err), SHAPE_OK);
    uint64_t total = 0, rows[SHAPE_RETAIL_TABLES];
    for (size_t t = 0; t < SHAPE_RETAIL_TABLES; t++) total += rows[t] = shape_domain_table_at(d, t)->rows;
    assert_int_equal(shape_domain_timeline_total(tl), total);

    shape_domain_cursor *cur[SHAPE_RETAIL_TABLES];
    unsigned char *seen[SHAPE_RETAIL_TABLES];
    for (size_t t = 0; t < SHAPE_RETAIL_TABLES; t++) {
        assert_int_equal(shape_domain_cursor_open(d, t, &cur[t], &err), SHAPE_OK);
        seen[t] = calloc(rows[t], 1);
    }
    int64_t *signup = calloc(rows[CUS], sizeof *signup), *odate = calloc(rows[ORD], sizeof *odate);
    int64_t *ototal = calloc(rows[ORD], sizeof *ototal), *olines = calloc(rows[ORD], sizeof *olines);
    shape_gen_row *r = malloc(sizeof *r);
    int64_t last_time = INT64_MIN;
    int timeline_started = 0;
    size_t last_head = 0, t;
    uint64_t row, n = 0, parent_order = UINT64_MAX, parent_customer = UINT64_MAX;
    while (shape_domain_timeline_next(tl, &t, &row)) {
        n++;
        assert_true(row < rows[t]);
        assert_false(seen[t][row]); /* every row once */
        assert_int_equal(shape_domain_cursor_row(cur[t], row, r, &err), SHAPE_OK);
        const shape_gen_value *v = r->values;
        int et = shape_domain_table_at(d, t)->event_time_col;
        if (t == CUS || t == ORD || t == RET) {
            timeline_started = 1;
            assert_true(v[et].v.i >= last_time); /* non-decreasing event times */
            last_time = v[et].v.i;
        } else if (t == ADR || t == LIN) {
            assert_true(timeline_started);
        } else {
            assert_false(timeline_started); /* the head comes first, in dependency order */
            assert_true(t >= last_head);
            last_head = t;
        }
        switch (t) {
        case CAT:
            if (v[2].kind != SHAPE_GEN_NULL) assert_true(seen[CAT][v[2].v.i - 1]);
            break;
        case PRO:
            assert_true(seen[CAT][v[1].v.i - 1]);
            assert_true(v[5].v.f < v[3].v.f); /* cost < unit_price */
            break;
        case CUS:
            signup[row] = v[6].v.i;
            parent_customer = row;
            break;
        case ADR: /* right after its customer */
            assert_int_equal(v[1].v.i - 1, parent_customer);
            break;
        case ORD: {
            uint64_t c = (uint64_t)v[1].v.i - 1;
            assert_true(seen[CUS][c]);
            assert_true(v[5].v.i >= signup[c]); /* order_date >= signup_date */
            assert_true(seen[STO][v[2].v.i - 1]);
            if (v[3].kind != SHAPE_GEN_NULL) assert_true(seen[ADR][v[3].v.i - 1]);
            if (v[4].kind != SHAPE_GEN_NULL) assert_true(seen[PRM][v[4].v.i - 1]);
            odate[row] = v[5].v.i;
            ototal[row] = cents(v[7].v.f);
            parent_order = row;
            break;
        }
        case LIN: { /* right after its order */
            uint64_t o = (uint64_t)v[1].v.i - 1;
            assert_int_equal(o, parent_order);
            assert_true(seen[PRO][v[2].v.i - 1]);
            if (v[4].kind != SHAPE_GEN_NULL) assert_true(seen[PRM][v[4].v.i - 1]);
            assert_true(v[7].v.f > 0); /* line_total > 0 */
            olines[o] += cents(v[7].v.f);
            break;
        }
        case RET: {
            uint64_t o = (uint64_t)v[1].v.i - 1;
            assert_true(seen[ORD][o]);
            assert_true(v[4].v.i > odate[o]); /* return_date > order_date */
            assert_true(v[4].v.i - odate[o] >= 86400LL * 1000000000LL); /* a day at least */
            assert_true(cents(v[3].v.f) <= ototal[o]); /* refund <= order_total */
            break;
        }
        default: break;
        }
        seen[t][row] = 1;
    }
    assert_int_equal(n, total);
    for (uint64_t o = 0; o < rows[ORD]; o++) assert_int_equal(olines[o], ototal[o]); /* total = sum of lines */
    /* orders spread over customers (not all on the first ones) */
    uint64_t distinct = 0;
    unsigned char *has = calloc(rows[CUS], 1);
    for (uint64_t o = 0; o < rows[ORD]; o++) {
        assert_int_equal(shape_domain_cursor_row(cur[ORD], o, r, &err), SHAPE_OK);
        uint64_t c = (uint64_t)r->values[1].v.i - 1;
        distinct += !has[c];
        has[c] = 1;
    }
    assert_true(distinct > rows[CUS] / 2);
    free(has);
    for (size_t i = 0; i < SHAPE_RETAIL_TABLES; i++) {
        shape_domain_cursor_free(cur[i]);
        free(seen[i]);
    }
    free(signup);
    free(odate);
    free(ototal);
    free(olines);
    free(r);
    shape_domain_timeline_free(tl);
    shape_domain_free(d);
}

/* Seeking to p gives the walk's events from p on. */
static void test_seek_small(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d = open_tl("small");
    shape_domain_timeline *tl = NULL;
    assert_int_equal(shape_domain_timeline_open(d, NULL, &tl, &err), SHAPE_OK);
    uint64_t total = shape_domain_timeline_total(tl);
    ev *all = calloc(total, sizeof *all);
    size_t t;
    uint64_t row, n = 0;
    while (shape_domain_timeline_next(tl, &t, &row)) all[n++] = (ev){(uint32_t)t, row};
    assert_int_equal(n, total);
    uint64_t head = 50 + 500 + 200 + 150;
    uint64_t at[] = {0, 1, head - 1, head, head + 1, head + 2, 1234, 7777, total / 2, total - 3, total - 1, total};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        assert_int_equal(shape_domain_timeline_seek(tl, at[i], &err), SHAPE_OK);
        assert_int_equal(shape_domain_timeline_position(tl), at[i]);
        for (uint64_t p = at[i]; p < at[i] + 40 && p < total; p++) {
            assert_true(shape_domain_timeline_next(tl, &t, &row));
            assert_int_equal(t, all[p].t);
            assert_int_equal(row, all[p].row);
        }
    }
    /* every 97th position */
    for (uint64_t p = 0; p < total; p += 97) {
        assert_int_equal(shape_domain_timeline_seek(tl, p, &err), SHAPE_OK);
        assert_true(shape_domain_timeline_next(tl, &t, &row));
        assert_int_equal(t, all[p].t);
        assert_int_equal(row, all[p].row);
    }
    assert_int_equal(shape_domain_timeline_seek(tl, total, &err), SHAPE_OK);
    assert_false(shape_domain_timeline_next(tl, &t, &row));
    assert_int_equal(shape_domain_timeline_seek(tl, total + 1, &err), SHAPE_EINVAL);
    free(all);
    shape_domain_timeline_free(tl);
    shape_domain_free(d);
}

/* At medium: seek(p) then k steps is seek(p + k), and times stay ordered. */
static void test_seek_medium(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d = open_tl("medium");
    shape_domain_timeline *a = NULL, *b = NULL;
    assert_int_equal(shape_domain_timeline_open(d, NULL, &a, &err), SHAPE_OK);
    assert_int_equal(shape_domain_timeline_open(d, NULL, &b, &err), SHAPE_OK);
    uint64_t total = shape_domain_timeline_total(a);
    uint64_t at[] = {5700, 123457, total / 3, total / 2 + 11, total - 5000};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        assert_int_equal(shape_domain_timeline_seek(a, at[i], &err), SHAPE_OK);
        size_t t, u;
        uint64_t row, vrow;
        for (int k = 0; k < 300; k++) assert_true(shape_domain_timeline_next(a, &t, &row));
        assert_int_equal(shape_domain_timeline_seek(b, at[i] + 300, &err), SHAPE_OK);
        for (int k = 0; k < 200; k++) {
            assert_true(shape_domain_timeline_next(a, &t, &row));
            assert_true(shape_domain_timeline_next(b, &u, &vrow));
            assert_int_equal(t, u);
            assert_int_equal(row, vrow);
        }
    }
    shape_domain_timeline_free(a);
    shape_domain_timeline_free(b);
    shape_domain_free(d);
}

/* A selection: order lines alone still come in their orders' time order,
 * every row once. */
static void test_selection(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d = open_tl("small");
    unsigned char sel[SHAPE_RETAIL_TABLES] = {0};
    sel[LIN] = 1;
    shape_domain_timeline *tl = NULL;
    assert_int_equal(shape_domain_timeline_open(d, sel, &tl, &err), SHAPE_OK);
    uint64_t lines = shape_domain_table_at(d, LIN)->rows;
    assert_int_equal(shape_domain_timeline_total(tl), lines);
    unsigned char *seen = calloc(lines, 1);
    size_t t;
    uint64_t row, n = 0;
    while (shape_domain_timeline_next(tl, &t, &row)) {
        assert_int_equal(t, LIN);
        assert_false(seen[row]);
        seen[row] = 1;
        n++;
    }
    assert_int_equal(n, lines);
    assert_int_equal(shape_domain_timeline_seek(tl, lines / 2, &err), SHAPE_OK);
    assert_true(shape_domain_timeline_next(tl, &t, &row));
    free(seen);
    shape_domain_timeline_free(tl);
    shape_domain_free(d);
}

static void test_identity_and_refusal(void **state)
{
    (void)state;
    shape_err err;
    shape_domain *d = open_tl("small"), *plain = NULL;
    assert_int_equal(shape_domain_open(shape_retail_domain_type(), "small", 42, &plain, &err), SHAPE_OK);
    shape_domain_field f[SHAPE_DOMAIN_MAX_FIELDS];
    assert_int_equal(shape_domain_identity(plain, f, SHAPE_DOMAIN_MAX_FIELDS), 4);
    assert_int_equal(shape_domain_identity(d, f, SHAPE_DOMAIN_MAX_FIELDS), 5);
    assert_string_equal(f[4].key, "order");
    assert_string_equal(f[4].text, "event-time");
    shape_domain_timeline *tl = NULL;
    assert_int_equal(shape_domain_timeline_open(plain, NULL, &tl, &err), SHAPE_EINVAL);
    /* a domain type without the event-time functions */
    shape_domain_type none = *shape_retail_domain_type();
    none.name = "flat";
    none.open_timeline = NULL;
    shape_domain *x = NULL;
    assert_int_equal(shape_domain_open_timeline(&none, "small", 42, &x, &err), SHAPE_EINVAL);
    assert_null(x);
    assert_string_equal(err.message, "--order event-time needs a domain whose event times are ordered by row; "
                                     "flat has none (use --order table)");
    shape_domain_free(plain);
    shape_domain_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_walk),
        cmocka_unit_test(test_seek_small),
        cmocka_unit_test(test_seek_medium),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_identity_and_refusal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

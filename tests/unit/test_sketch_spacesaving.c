/* test_sketch_spacesaving.c — SpaceSaving (shape/profile.h): the exact
 * semantics (hit, free slot, eviction of the smallest count with ties to the
 * least recently updated, the merge rule) checked step by step and against a
 * naive O(capacity) implementation on random streams, the list order (the
 * state) after every add, also with colliding hashes; owned text keys; key
 * order; and the guarantees on 1M skewed values (every value more frequent
 * than n/64 found, count − error <= true <= count, error <= n/64), whole and
 * merged from 4 parts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/profile/profile_internal.h" /* the list order (shape_ss_items_ordered_) */
#include "shape/profile.h"

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

/* A skewed value in [0, domain): u^4 piles most mass on small values. */
static int64_t skewed(uint64_t *s, int64_t domain)
{
    double u = uniform01(s);
    return (int64_t)(u * u * u * u * (double)domain);
}

static shape_spacesaving *new_ss(shape_ss_kind kind, int cap)
{
    shape_spacesaving *s = NULL;
    shape_err err;
    assert_int_equal(shape_ss_new(kind, cap, &s, &err), SHAPE_OK);
    return s;
}

static void add_int(shape_spacesaving *s, int64_t v) { shape_ss_add_int(s, v, shape_hash_int(v)); }

/* ---- naive reference ---------------------------------------------------- */

typedef struct nentry {
    int64_t key, count, error;
    uint64_t seq;
} nentry;

typedef struct naive {
    int cap, size;
    uint64_t clock;
    int64_t n;
    nentry e[256];
} naive;

static void naive_add(naive *s, int64_t key)
{
    s->clock++;
    s->n++;
    for (int i = 0; i < s->size; i++)
        if (s->e[i].key == key) {
            s->e[i].count++;
            s->e[i].seq = s->clock;
            return;
        }
    if (s->size < s->cap) {
        s->e[s->size++] = (nentry){key, 1, 0, s->clock};
        return;
    }
    int v = 0;
    for (int i = 1; i < s->size; i++)
        if (s->e[i].count < s->e[v].count || (s->e[i].count == s->e[v].count && s->e[i].seq < s->e[v].seq)) v = i;
    int64_t c = s->e[v].count;
    s->e[v] = (nentry){key, c + 1, c, s->clock};
}

static int cmp_nentry_desc(const void *pa, const void *pb)
{
    const nentry *a = pa, *b = pb;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_nentry_key(const void *pa, const void *pb)
{
    const nentry *a = pa, *b = pb;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int64_t naive_min(const naive *s)
{
    if (s->size < s->cap) return 0;
    int64_t m = s->e[0].count;
    for (int i = 1; i < s->size; i++)
        if (s->e[i].count < m) m = s->e[i].count;
    return m;
}

static void naive_merge(naive *a, const naive *b)
{
    nentry all[512];
    int n = 0;
    int64_t m1 = naive_min(a), m2 = naive_min(b);
    for (int i = 0; i < a->size; i++) {
        nentry x = a->e[i];
        int found = 0;
        for (int j = 0; j < b->size; j++)
            if (b->e[j].key == x.key) {
                x.count += b->e[j].count;
                x.error += b->e[j].error;
                found = 1;
            }
        if (!found) {
            x.count += m2;
            x.error += m2;
        }
        all[n++] = x;
    }
    for (int j = 0; j < b->size; j++) {
        int found = 0;
        for (int i = 0; i < a->size; i++) found |= a->e[i].key == b->e[j].key;
        if (found) continue;
        nentry x = b->e[j];
        x.count += m1;
        x.error += m1;
        all[n++] = x;
    }
    qsort(all, (size_t)n, sizeof *all, cmp_nentry_desc);
    if (n > a->cap) n = a->cap;
    qsort(all, (size_t)n, sizeof *all, cmp_nentry_key); /* recency: key order */
    for (int i = 0; i < n; i++) all[i].seq = (uint64_t)i + 1;
    memcpy(a->e, all, (size_t)n * sizeof *all);
    a->size = n;
    a->clock = (uint64_t)n;
    a->n += b->n;
}

static void assert_same(const shape_spacesaving *s, naive *ref)
{
    shape_ss_item items[256];
    size_t n = shape_ss_items(s, items);
    assert_int_equal(n, (size_t)ref->size);
    assert_int_equal(shape_ss_total(s), ref->n);
    nentry sorted[256];
    memcpy(sorted, ref->e, (size_t)ref->size * sizeof *sorted);
    qsort(sorted, (size_t)ref->size, sizeof *sorted, cmp_nentry_desc);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(items[i].i, sorted[i].key);
        assert_int_equal(items[i].count, sorted[i].count);
        assert_int_equal(items[i].error, sorted[i].error);
    }
}

/* ---- tests -------------------------------------------------------------- */

static void test_semantics_by_hand(void **state)
{
    (void)state;
    shape_spacesaving *s = new_ss(SHAPE_SS_INT, 3);
    shape_ss_item it[3];
    add_int(s, 10);
    add_int(s, 20);
    add_int(s, 30);
    assert_int_equal(shape_ss_size(s), 3);
    assert_int_equal(shape_ss_min_count(s), 1);
    add_int(s, 40); /* evicts 10 (count 1, least recent) → (2, 1) */
    assert_int_equal(shape_ss_items(s, it), 3);
    assert_int_equal(it[0].i, 40);
    assert_int_equal(it[0].count, 2);
    assert_int_equal(it[0].error, 1);
    assert_int_equal(it[1].i, 20);
    assert_int_equal(it[2].i, 30);
    add_int(s, 20); /* hit: 20 → 2 */
    add_int(s, 50); /* evicts 30, the only count 1 → (2, 1) */
    shape_ss_items(s, it);
    assert_int_equal(it[0].i, 20);
    assert_int_equal(it[1].i, 40);
    assert_int_equal(it[2].i, 50);
    for (int i = 0; i < 3; i++) assert_int_equal(it[i].count, 2);
    /* all at 2; least recently updated is 40 (updated before 20 and 50) */
    add_int(s, 60);
    shape_ss_items(s, it);
    assert_int_equal(it[0].i, 60);
    assert_int_equal(it[0].count, 3);
    assert_int_equal(it[0].error, 2);
    assert_int_equal(it[1].i, 20);
    assert_int_equal(it[2].i, 50);
    assert_int_equal(shape_ss_total(s), 7);
    shape_ss_free(s);

    shape_err err;
    assert_int_equal(shape_ss_new(SHAPE_SS_INT, 0, &s, &err), SHAPE_EINVAL);
    assert_null(s);
}

static void test_against_naive(void **state)
{
    (void)state;
    static const int caps[] = {1, 2, 5, 8, 64};
    uint64_t seed = 11;
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        int cap = caps[c];
        shape_spacesaving *s = new_ss(SHAPE_SS_INT, cap);
        naive *ref = calloc(1, sizeof *ref);
        assert_non_null(ref);
        ref->cap = cap;
        for (int i = 0; i < 20000; i++) {
            int64_t v = skewed(&seed, 3 * cap + 5);
            add_int(s, v);
            naive_add(ref, v);
            if (i % 997 == 0) assert_same(s, ref);
        }
        assert_same(s, ref);
        /* merges, then more adds: the merge rule and the recency it leaves */
        for (int round = 0; round < 6; round++) {
            shape_spacesaving *o = new_ss(SHAPE_SS_INT, cap);
            naive *oref = calloc(1, sizeof *oref);
            assert_non_null(oref);
            oref->cap = cap;
            int m = round == 0 ? cap / 2 : 500 * round; /* round 0: a summary that is not full */
            for (int i = 0; i < m; i++) {
                int64_t v = skewed(&seed, 4 * cap + 3) + round;
                add_int(o, v);
                naive_add(oref, v);
            }
            shape_err err;
            assert_int_equal(shape_ss_merge(s, o, &err), SHAPE_OK);
            naive_merge(ref, oref);
            assert_same(s, ref);
            for (int i = 0; i < 3000; i++) {
                int64_t v = skewed(&seed, 3 * cap + 5);
                add_int(s, v);
                naive_add(ref, v);
            }
            assert_same(s, ref);
            shape_ss_free(o);
            free(oref);
        }
        shape_ss_free(s);
        free(ref);
    }
}

static void test_merge_rule_by_hand(void **state)
{
    (void)state;
    shape_spacesaving *a = new_ss(SHAPE_SS_INT, 2), *b = new_ss(SHAPE_SS_INT, 2);
    /* a full: {1:3, 2:1}, min 1; b not full: {2:2} */
    add_int(a, 1);
    add_int(a, 1);
    add_int(a, 1);
    add_int(a, 2);
    add_int(b, 2);
    add_int(b, 2);
    shape_err err;
    assert_int_equal(shape_ss_merge(a, b, &err), SHAPE_OK);
    shape_ss_item it[2];
    assert_int_equal(shape_ss_items(a, it), 2);
    /* 1: 3 + (b not full → 0) = 3; 2: 1 + 2 = 3; tie by key */
    assert_int_equal(it[0].i, 1);
    assert_int_equal(it[0].count, 3);
    assert_int_equal(it[1].i, 2);
    assert_int_equal(it[1].count, 3);
    assert_int_equal(shape_ss_total(a), 6);
    /* b full now: {2:2, 7:1}, min 1. Merge into a: 1 absent from b → +1 (count and error) */
    add_int(b, 7);
    assert_int_equal(shape_ss_merge(a, b, &err), SHAPE_OK);
    shape_ss_items(a, it);
    assert_int_equal(it[0].i, 2);
    assert_int_equal(it[0].count, 5);
    assert_int_equal(it[0].error, 0);
    assert_int_equal(it[1].i, 1);
    assert_int_equal(it[1].count, 4);
    assert_int_equal(it[1].error, 1);
    /* 7 would be 1 + min(a)=3 → 4 with error 3; ties with 1 at 4, and 1 < 7 wins */
    shape_spacesaving *t = new_ss(SHAPE_SS_TEXT, 2);
    assert_int_equal(shape_ss_merge(a, t, &err), SHAPE_EINVAL);
    shape_ss_free(t);
    shape_ss_free(a);
    shape_ss_free(b);
}

static void test_text_keys_owned_and_ordered(void **state)
{
    (void)state;
    shape_spacesaving *s = new_ss(SHAPE_SS_TEXT, 4);
    shape_err err;
    char buf[64];
    const char *words[] = {"\xc3\xa9t\xc3\xa9", "b", "a", "", "a", "zz", "b", "a"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i]);
        memcpy(buf, words[i], n);
        assert_int_equal(shape_ss_add_text(s, buf, n, shape_hash_text(buf, n), &err), SHAPE_OK);
        memset(buf, 'X', sizeof buf); /* the summary must have copied the key */
    }
    shape_ss_item it[4];
    assert_int_equal(shape_ss_items(s, it), 4);
    /* a:3, b:2, then ties at count 2 or 1 by key bytes */
    assert_int_equal(it[0].count, 3);
    assert_int_equal(it[0].text_len, 1);
    assert_memory_equal(it[0].text, "a", 1);
    assert_int_equal(it[1].count, 2);
    assert_memory_equal(it[1].text, "b", 1);
    /* "zz" evicted "été" (count 1, least recently updated) → (2, 1); "" stays */
    assert_int_equal(it[2].count, 2);
    assert_int_equal(it[2].error, 1);
    assert_int_equal(it[2].text_len, 2);
    assert_memory_equal(it[2].text, "zz", 2);
    assert_int_equal(it[3].count, 1);
    assert_int_equal(it[3].text_len, 0);
    /* a long key replacing a short one (buffer growth) */
    char big[300];
    memset(big, 'q', sizeof big);
    for (int i = 0; i < 3; i++) assert_int_equal(shape_ss_add_text(s, big, sizeof big, shape_hash_text(big, sizeof big), &err), SHAPE_OK);
    shape_ss_items(s, it);
    int found = 0;
    for (int i = 0; i < 4; i++) found |= it[i].text_len == sizeof big && memcmp(it[i].text, big, sizeof big) == 0;
    assert_true(found);
    shape_ss_free(s);

    /* doubles: -0.0 is 0.0; infinities order at the ends */
    s = new_ss(SHAPE_SS_DOUBLE, 8);
    double vals[] = {0.0, -0.0, 1e300 * 1e10, -(1e300 * 1e10), 2.5, -2.5};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) shape_ss_add_double(s, vals[i], shape_hash_double(vals[i]));
    shape_ss_item d[8];
    assert_int_equal(shape_ss_items(s, d), 5);
    assert_true(d[0].d == 0.0 && d[0].count == 2);
    assert_true(d[1].d < -1e308 && d[2].d == -2.5 && d[3].d == 2.5 && d[4].d > 1e308);
    shape_ss_free(s);
}

/* The list order itself (the state: ascending count, least recently
 * updated first within a count) against the naive summary after every add,
 * for int and text keys, on streams of mostly new keys (a miss when full:
 * the victim's index slot is emptied after the new key is indexed) and
 * skewed ones, with hashes that spread the keys and hashes that pile them
 * into one probe cluster (long backward shifts over the new key). */
static uint64_t test_hash(int mode, int64_t v, int text, const char *buf, size_t n)
{
    switch (mode) {
    case 1: return (uint64_t)(v % 5); /* a few homes, long clusters */
    case 2: return (uint64_t)v << 20; /* one home, distinct hashes */
    default: return text ? shape_hash_text(buf, n) : shape_hash_int(v);
    }
}

static int cmp_nentry_order(const void *pa, const void *pb)
{
    const nentry *a = pa, *b = pb;
    if (a->count != b->count) return a->count < b->count ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void assert_same_order(const shape_spacesaving *s, const naive *ref, int text)
{
    shape_ss_item items[256];
    nentry want[256];
    size_t n = shape_ss_items_ordered_(s, items);
    assert_int_equal(n, (size_t)ref->size);
    memcpy(want, ref->e, (size_t)ref->size * sizeof *want);
    qsort(want, (size_t)ref->size, sizeof *want, cmp_nentry_order);
    for (size_t i = 0; i < n; i++) {
        if (text) {
            char buf[32];
            int len = snprintf(buf, sizeof buf, "k%lld", (long long)want[i].key);
            assert_int_equal(items[i].text_len, (size_t)len);
            assert_memory_equal(items[i].text, buf, (size_t)len);
        } else {
            assert_int_equal(items[i].i, want[i].key);
        }
        assert_int_equal(items[i].count, want[i].count);
        assert_int_equal(items[i].error, want[i].error);
    }
}

static void test_list_order_against_naive(void **state)
{
    (void)state;
    static const int caps[] = {1, 3, 64};
    uint64_t seed = 5;
    for (int text = 0; text < 2; text++)
        for (int mode = 0; mode < 3; mode++)
            for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
                int cap = caps[c];
                shape_spacesaving *s = new_ss(text ? SHAPE_SS_TEXT : SHAPE_SS_INT, cap);
                naive *ref = calloc(1, sizeof *ref);
                assert_non_null(ref);
                ref->cap = cap;
                int64_t fresh = 1000;
                for (int i = 0; i < 6000; i++) {
                    /* phases: all new keys, skewed over a small domain, mixed */
                    int phase = (i / 1000) % 3;
                    int64_t v = phase == 0 ? fresh++
                                : phase == 1 ? skewed(&seed, 3 * cap + 5)
                                : (splitmix(&seed) % 2 ? fresh++ : skewed(&seed, 2 * cap + 2));
                    char buf[32];
                    size_t len = (size_t)snprintf(buf, sizeof buf, "k%lld", (long long)v);
                    uint64_t h = test_hash(mode, v, text, buf, len);
                    if (text) {
                        shape_err err;
                        assert_int_equal(shape_ss_add_text(s, buf, len, h, &err), SHAPE_OK);
                        memset(buf, 'X', sizeof buf);
                    } else {
                        shape_ss_add_int(s, v, h);
                    }
                    naive_add(ref, v);
                    if (cap < 64 || i % 7 == 0) assert_same_order(s, ref, text);
                }
                assert_same_order(s, ref, text);
                shape_ss_free(s);
                free(ref);
            }
}

/* Exact counts over a bounded domain, and the guarantees of each entry. */
#define DOMAIN 100000
#define N_VALUES 1000000

static void check_guarantees(const shape_spacesaving *s, const int64_t *truth, int64_t n, const char *what)
{
    shape_ss_item it[SHAPE_SS_CAPACITY];
    size_t k = shape_ss_items(s, it);
    int64_t bound = n / SHAPE_SS_CAPACITY, max_err = 0, heavy = 0, found = 0;
    for (size_t i = 0; i < k; i++) {
        int64_t t = truth[it[i].i];
        assert_true(it[i].count >= t);
        assert_true(it[i].count - it[i].error <= t);
        assert_true(it[i].error <= bound);
        if (it[i].error > max_err) max_err = it[i].error;
    }
    for (int64_t v = 0; v < DOMAIN; v++) {
        if (truth[v] * SHAPE_SS_CAPACITY <= n) continue;
        heavy++;
        int in = 0;
        for (size_t i = 0; i < k && !in; i++) in = it[i].i == v;
        if (in) found++;
        assert_true(in);
    }
    printf("  SpaceSaving %s: %lld values > n/64 (%lld), all %lld found; max error %lld (bound n/64 = %lld)\n", what,
           (long long)heavy, (long long)(n / 64), (long long)found, (long long)max_err, (long long)bound);
}

/* Value i of [0, DOMAIN) with probability ∝ 1/(i+1) (Zipf, s = 1). */
static int64_t zipf(uint64_t *s, const double *cdf)
{
    double u = uniform01(s) * cdf[DOMAIN - 1];
    int64_t lo = 0, hi = DOMAIN - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void run_guarantees(int dist, const char *what)
{
    int64_t *truth = calloc(DOMAIN, sizeof *truth);
    double *cdf = malloc(DOMAIN * sizeof *cdf);
    assert_non_null(truth);
    assert_non_null(cdf);
    double acc = 0;
    for (int64_t i = 0; i < DOMAIN; i++) cdf[i] = acc += 1.0 / (double)(i + 1);
    shape_spacesaving *whole = new_ss(SHAPE_SS_INT, SHAPE_SS_CAPACITY);
    shape_spacesaving *parts[4];
    for (int p = 0; p < 4; p++) parts[p] = new_ss(SHAPE_SS_INT, SHAPE_SS_CAPACITY);
    uint64_t seed = 99 + (uint64_t)dist;
    for (int64_t i = 0; i < N_VALUES; i++) {
        int64_t v;
        if (dist == 0)
            v = zipf(&seed, cdf);
        else if (uniform01(&seed) < 0.4) /* 20 planted values at 2 % each, the rest uniform */
            v = (int64_t)(splitmix(&seed) % 20) * 4999 + 17;
        else
            v = (int64_t)(splitmix(&seed) % DOMAIN);
        truth[v]++;
        uint64_t h = shape_hash_int(v);
        shape_ss_add_int(whole, v, h);
        shape_ss_add_int(parts[i * 4 / N_VALUES], v, h);
    }
    shape_ss_item it[SHAPE_SS_CAPACITY];
    size_t k = shape_ss_items(whole, it);
    int64_t sum_counts = 0;
    assert_int_equal(k, SHAPE_SS_CAPACITY);
    for (size_t i = 0; i < k; i++) sum_counts += it[i].count;
    assert_int_equal(sum_counts, N_VALUES); /* SpaceSaving: counts sum to n */
    assert_true(shape_ss_min_count(whole) <= N_VALUES / SHAPE_SS_CAPACITY);
    char label[64];
    snprintf(label, sizeof label, "%s, whole", what);
    check_guarantees(whole, truth, N_VALUES, label);
    shape_err err;
    for (int p = 1; p < 4; p++) assert_int_equal(shape_ss_merge(parts[0], parts[p], &err), SHAPE_OK);
    assert_int_equal(shape_ss_total(parts[0]), N_VALUES);
    snprintf(label, sizeof label, "%s, 4 parts merged", what);
    check_guarantees(parts[0], truth, N_VALUES, label);
    for (int p = 0; p < 4; p++) shape_ss_free(parts[p]);
    shape_ss_free(whole);
    free(truth);
    free(cdf);
}

static void test_guarantees_1m(void **state)
{
    (void)state;
    run_guarantees(0, "1M Zipf(1)");
    run_guarantees(1, "1M 20 planted at 2%");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_semantics_by_hand),
        cmocka_unit_test(test_against_naive),
        cmocka_unit_test(test_list_order_against_naive),
        cmocka_unit_test(test_merge_rule_by_hand),
        cmocka_unit_test(test_text_keys_owned_and_ordered),
        cmocka_unit_test(test_guarantees_1m),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

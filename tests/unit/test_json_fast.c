/* test_json_fast.c — the scanner's fast paths agree with its general paths.
 *
 * Why: the decoder's speed comes from shortcuts in the scanner (shape/json.h)
 * that must never change a verdict or a value: numbers read eight bytes at a
 * time, a predicted key matched in the body (shape_json_next_expect), runs
 * of members read in one call along a chain of predictions
 * (shape_json_next_run), flat
 * nested objects and arrays of them rendered straight into the output, with
 * the key order of the previous object reused. Each shortcut only applies
 * to some inputs and hands the rest to the general path, so the tests sweep
 * the edges: every length of digit run and fraction, every position of a
 * key where it may differ from the prediction, objects that start like the
 * previous one and then do not.
 * How: the oracle is independent where one exists (strtod/strtoll for
 * numbers), else the general path itself, reached by writing the same JSON
 * with whitespace (which no fast path takes) or through shape_json_next()
 * without a prediction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <math.h>

#include "shape/json.h"

static shape_json_scanner *sc;

static int setup(void **state)
{
    (void)state;
    sc = shape_json_scanner_new();
    return sc ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    shape_json_scanner_free(sc);
    sc = NULL;
    return 0;
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ------------------------------------------------------------- numbers */

/* What the scanner must say about a valid number text, worked out from
 * the C library alone. */
static void reference_number(const char *text, shape_json_number *want)
{
    memset(want, 0, sizeof *want);
    int neg = text[0] == '-';
    int integer = strpbrk(text, ".eE") == NULL;
    want->d = strtod(text, NULL);
    want->flags = neg ? SHAPE_JSON_NUM_NEGATIVE : 0;
    if (integer) {
        errno = 0;
        long long v = strtoll(text, NULL, 10);
        if (errno == 0) {
            want->cls = SHAPE_JSON_INT;
            want->i = v;
            want->flags |= SHAPE_JSON_NUM_INTEGRAL | SHAPE_JSON_NUM_FITS_INT64;
        } else {
            want->cls = SHAPE_JSON_BIGINT;
            want->flags |= isinf(want->d) ? SHAPE_JSON_NUM_OVERFLOW : SHAPE_JSON_NUM_INTEGRAL;
        }
        return;
    }
    want->cls = SHAPE_JSON_REAL;
    double d = want->d;
    if (isinf(d)) {
        want->flags |= SHAPE_JSON_NUM_OVERFLOW;
    } else if (d >= -0x1p63 && d < 0x1p63) {
        if ((double)(int64_t)d == d) {
            want->flags |= SHAPE_JSON_NUM_INTEGRAL | SHAPE_JSON_NUM_FITS_INT64;
            want->i = (int64_t)d;
        }
    } else {
        want->flags |= SHAPE_JSON_NUM_INTEGRAL;
    }
}

/* {"n":TEXT<after>} with the number read as the first member; the walk's
 * final verdict must be `verdict`. */
static void check_number_in(const char *text, const char *after, int verdict)
{
    char doc[128];
    int n = snprintf(doc, sizeof doc, "{\"n\":%s%s", text, after);
    shape_json_member m;
    shape_json_begin(sc, doc, (size_t)n);
    int rc = shape_json_next(sc, &m);
    if (verdict == SHAPE_JSON_DONE || rc == SHAPE_JSON_MEMBER) {
        if (rc != SHAPE_JSON_MEMBER) fail_msg("%s|%s: verdict %d", text, after, rc);
        shape_json_number want;
        reference_number(text, &want);
        if (m.kind != SHAPE_JSON_NUMBER) fail_msg("%s|%s: kind %d", text, after, m.kind);
        if (m.num.text.ptr != doc + 5 || m.num.text.len != strlen(text))
            fail_msg("%s|%s: text of %zu bytes", text, after, m.num.text.len);
        if (m.num.cls != want.cls) fail_msg("%s|%s: class %d, want %d", text, after, m.num.cls, want.cls);
        if (m.num.flags != want.flags) fail_msg("%s|%s: flags %#x, want %#x", text, after, m.num.flags, want.flags);
        if (m.num.i != want.i) fail_msg("%s|%s: i %lld, want %lld", text, after, (long long)m.num.i, (long long)want.i);
        if (memcmp(&m.num.d, &want.d, sizeof want.d) != 0)
            fail_msg("%s|%s: d %.17g, want %.17g", text, after, m.num.d, want.d);
        while ((rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
        }
    }
    if (rc != verdict) fail_msg("%s|%s: final verdict %d, want %d", text, after, rc, verdict);
}

static void random_digits(char *w, size_t n, int lead_nonzero)
{
    for (size_t i = 0; i < n; i++) w[i] = (char)('0' + rng() % 10);
    if (n && lead_nonzero && w[0] == '0') w[0] = (char)('1' + rng() % 9);
    w[n] = '\0';
}

static void test_numbers_every_length(void **state)
{
    (void)state;
    /* Integer parts of 1..21 digits, fractions of 0..10 digits, either sign,
     * followed by the bytes that may end a number — with room for the
     * eight-byte reads and without. */
    static const char *const ends_valid[] = {"}", ",\"x\":1}", "                }", " ,\"x\":2}\n\n\n\n\n\n\n\n",
                                             "\t}        "};
    for (int round = 0; round < 12; round++) {
        for (size_t il = 1; il <= 21; il++) {
            for (size_t fl = 0; fl <= 10; fl++) {
                char text[64], *w = text;
                if (rng() & 1) *w++ = '-';
                random_digits(w, il, il > 1 || round % 3 != 0);
                w += il;
                if (fl) {
                    *w++ = '.';
                    random_digits(w, fl, 0);
                    w += fl;
                }
                *w = '\0';
                for (size_t e = 0; e < sizeof ends_valid / sizeof ends_valid[0]; e++)
                    check_number_in(text, ends_valid[e], SHAPE_JSON_DONE);
            }
        }
    }
    /* Exponents and the values around the int64 limits keep their classes. */
    static const char *const more[] = {"1234567e3", "1234567.5e-3", "1234567E+2", "9223372036854775807",
                                       "-9223372036854775808", "9223372036854775808", "12345678", "123456789",
                                       "1234567.12345678", "0.1234567", "-0", "0", "-0.0", "7.0", "1.00000"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        check_number_in(more[i], "}", SHAPE_JSON_DONE);
        check_number_in(more[i], ",\"k\":\"padding padding\"}", SHAPE_JSON_DONE);
    }
}

static void test_numbers_invalid_with_room(void **state)
{
    (void)state;
    /* The same refusals with the eight-byte reads in play (room after). */
    static const char *const bad[] = {"01", "-01", "00", "1.", "1.e3", "1.5e", "1e+", "12345678.", "1234567.",
                                      "1234567.x", "1234567e", "-", "--1", "-a", "1.2.3", "0x10", "1234567.1.5",
                                      "12345678901234567890.", "1e2e3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc[96];
        int n = snprintf(doc, sizeof doc, "{\"n\":%s         ,\"x\":1}", bad[i]);
        shape_json_member m;
        shape_json_begin(sc, doc, (size_t)n);
        int rc;
        while ((rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
        }
        if (rc != SHAPE_JSON_ESYNTAX) fail_msg("%s: verdict %d, want syntax", bad[i], rc);
    }
    /* A digit run that reaches the end of the body (no terminator). */
    for (int len = 1; len <= 12; len++) {
        char doc[32] = "{\"n\":";
        memset(doc + 5, '7', (size_t)len);
        shape_json_member m;
        shape_json_begin(sc, doc, (size_t)(5 + len));
        assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
        assert_int_equal(m.num.text.len, (size_t)len);
        assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_ESYNTAX);
    }
}

/* ------------------------------------------------------- expected keys */

typedef struct walked {
    int verdict;
    char key[64];
    size_t key_len;
    int kind;
    char value[64];
    size_t value_len;
    size_t error_offset;
} walked;

/* The first member of doc, read with or without a prediction. */
static walked first_member(const char *doc, size_t len, const char *hint, size_t hint_len, int *hit)
{
    walked w;
    memset(&w, 0, sizeof w);
    shape_json_member m;
    shape_json_begin(sc, doc, len);
    *hit = 0;
    w.verdict = hint ? shape_json_next_expect(sc, &m, hint, hint_len, hit) : shape_json_next(sc, &m);
    if (w.verdict == SHAPE_JSON_MEMBER) {
        assert_true(m.key.len < sizeof w.key);
        memcpy(w.key, m.key.ptr, m.key.len);
        w.key_len = m.key.len;
        w.kind = m.kind;
        if (m.kind == SHAPE_JSON_STRING) {
            memcpy(w.value, m.str.ptr, m.str.len);
            w.value_len = m.str.len;
        }
        /* The rest of the walk decides the verdict. */
        while ((w.verdict = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
        }
    }
    if (w.verdict < 0) w.error_offset = shape_json_last_error(sc)->offset;
    return w;
}

static void expect_same_walk(const char *doc, size_t len, const char *hint, size_t hint_len, int want_hit)
{
    int hit, none;
    walked a = first_member(doc, len, hint, hint_len, &hit);
    walked b = first_member(doc, len, NULL, 0, &none);
    if (a.verdict != b.verdict || a.key_len != b.key_len || memcmp(a.key, b.key, a.key_len) != 0 || a.kind != b.kind ||
        a.value_len != b.value_len || memcmp(a.value, b.value, a.value_len) != 0 || a.error_offset != b.error_offset)
        fail_msg("'%.*s' with hint '%.*s': verdict %d/%d, key '%.*s'/'%.*s'", (int)len, doc, (int)hint_len, hint,
                 a.verdict, b.verdict, (int)a.key_len, a.key, (int)b.key_len, b.key);
    if (want_hit >= 0 && hit != want_hit)
        fail_msg("'%.*s' with hint '%.*s': hit %d, want %d", (int)len, doc, (int)hint_len, hint, hit, want_hit);
}

static void test_expected_key_every_position(void **state)
{
    (void)state;
    /* Keys of 0..20 bytes: the prediction matches; then every byte in turn
     * is changed — to another letter, to an escape of the same letter, to a
     * control byte, to invalid UTF-8, to a quote, to a backslash — and the
     * walk must come out exactly as without a prediction. */
    static const char letters[] = "abcdefghijklmnopqrstu";
    for (size_t klen = 0; klen <= 20; klen++) {
        char key[32];
        memcpy(key, letters, klen);
        char doc[128];
        int n = snprintf(doc, sizeof doc, "{\"%.*s\":\"value\",\"z\":1}", (int)klen, key);
        expect_same_walk(doc, (size_t)n, key, klen, 1);
        /* Body cut right after the key, and inside it. */
        for (size_t cut = 1; cut < (size_t)n; cut++) expect_same_walk(doc, cut, key, klen, -1);
        /* The prediction longer or shorter than the key. */
        char longer[40];
        memcpy(longer, key, klen);
        longer[klen] = 'v';
        expect_same_walk(doc, (size_t)n, longer, klen + 1, 0);
        if (klen) expect_same_walk(doc, (size_t)n, key, klen - 1, 0);
        for (size_t at = 0; at < klen; at++) {
            static const char *const subs[] = {"X", NULL, "\x01", "\xff", "\"", "\\", "\\n", "\xc3\xa9"};
            for (size_t s = 0; s < sizeof subs / sizeof subs[0]; s++) {
                char sub[16];
                if (subs[s]) snprintf(sub, sizeof sub, "%s", subs[s]);
                else snprintf(sub, sizeof sub, "\\u00%02x", (unsigned char)key[at]); /* the same letter, escaped */
                n = snprintf(doc, sizeof doc, "{\"%.*s%s%.*s\":\"v\"}", (int)at, key, sub, (int)(klen - at - 1),
                             key + at + 1);
                /* An escape of the same letter spells the same key but is
                 * not the plain text: no hit, same member. */
                expect_same_walk(doc, (size_t)n, key, klen, 0);
            }
        }
    }
    /* Whitespace before the colon, and a prediction of the empty key. */
    const char *doc = "{\"id\" : 5}";
    expect_same_walk(doc, strlen(doc), "id", 2, 1);
    doc = "{\"\":5}";
    expect_same_walk(doc, strlen(doc), "", 0, 1);
    doc = "{\"a\":5}";
    expect_same_walk(doc, strlen(doc), "", 0, 0);
}

static void test_expected_key_later_members_and_errors(void **state)
{
    (void)state;
    /* Predictions on every member of a walk, hits and misses mixed; values
     * are those of an unpredicted walk; errors after a hit are reported. */
    const char *doc = "{\"a\":1,\"bb\":\"x\",\"ccc\":[1,{\"b\":2,\"a\":1}],\"d\":null}";
    static const char *const hints[] = {"a", "b", "ccc", "d"};
    shape_json_member m, plain;
    shape_json_scanner *other = shape_json_scanner_new();
    shape_json_begin(sc, doc, strlen(doc));
    shape_json_begin(other, doc, strlen(doc));
    for (int i = 0; i < 4; i++) {
        int hit;
        assert_int_equal(shape_json_next_expect(sc, &m, hints[i], strlen(hints[i]), &hit), SHAPE_JSON_MEMBER);
        assert_int_equal(shape_json_next(other, &plain), SHAPE_JSON_MEMBER);
        assert_int_equal(hit, i != 1);
        assert_int_equal(m.key.len, plain.key.len);
        assert_memory_equal(m.key.ptr, plain.key.ptr, m.key.len);
        assert_int_equal(m.kind, plain.kind);
        assert_int_equal(m.offset, plain.offset);
    }
    int hit = 1;
    assert_int_equal(shape_json_next_expect(sc, &m, "e", 1, &hit), SHAPE_JSON_DONE);
    assert_int_equal(hit, 0);
    shape_json_scanner_free(other);

    static const char *const bad[] = {"{\"a\":01}", "{\"a\":\"\x01\"}", "{\"a\":tru}", "{\"a\" 1}", "{\"a\":}",
                                      "{\"a\":1,}", "{\"a\":\"\xc3\"}", "{\"a\":1 2}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_same_walk(bad[i], strlen(bad[i]), "a", 1, -1);
}

/* ---------------------------------------------------------- member runs */

/* Walk doc with shape_json_next_run over the chain (names, next), at most cap
 * members a call, and compare every member and the verdict with a plain
 * shape_json_next walk; check the stop rules (only a run's last member may be
 * a miss, a container or an escaped string) and that each hit is the chain's
 * prediction. After a miss, prev becomes the key's index in names when there
 * is one (as the decoder's look-up does), else stays. */
static void expect_run_walk(const char *doc, const char *const *names, size_t n_names, const int64_t *next0,
                            const int64_t *alt0, size_t cap)
{
    /* The chain's names as a body writes them: '"' key '"' ':', 8 bytes of
     * padding after the last. */
    size_t lens[16];
    const char *quoted[16];
    char buf[512];
    size_t at = 0;
    int64_t next_copy[17], alt_copy[17];
    assert_true(n_names <= 16);
    for (size_t i = 0; i < n_names; i++) {
        quoted[i] = NULL;
        lens[i] = 0;
        if (!names[i]) continue;
        lens[i] = (size_t)snprintf(buf + at, sizeof buf - at, "\"%s\":", names[i]);
        quoted[i] = buf + at;
        at += lens[i];
    }
    memset(buf + at, 0, 8);
    for (size_t i = 0; i <= n_names; i++) {
        next_copy[i] = next0 ? next0[i] : -1;
        alt_copy[i] = alt0 ? alt0[i] : -1;
    }
    int64_t *next = next0 ? next_copy : NULL; /* a hit on alt swaps the two */
    shape_json_chain chain = {next, alt0 ? alt_copy : NULL, quoted, lens};
    shape_json_scanner *plain = shape_json_scanner_new();
    size_t len = strlen(doc);
    shape_json_begin(plain, doc, len);
    shape_json_begin(sc, doc, len);
    int64_t prev = -1;
    for (int calls = 0;; calls++) {
        assert_true(calls < 64);
        shape_json_member run[8];
        int64_t idx[8];
        size_t count = 99;
        int r = shape_json_next_run(sc, next ? &chain : NULL, prev, run, idx, cap, &count);
        assert_true(count <= cap);
        if (r == SHAPE_JSON_MEMBER) assert_true(count >= 1);
        for (size_t k = 0; k < count; k++) {
            const shape_json_member *m = &run[k];
            shape_json_member want;
            assert_int_equal(shape_json_next(plain, &want), SHAPE_JSON_MEMBER);
            assert_int_equal(m->key.len, want.key.len);
            assert_memory_equal(m->key.ptr, want.key.ptr, m->key.len);
            assert_int_equal(m->kind, want.kind);
            assert_int_equal(m->offset, want.offset);
            if (m->kind == SHAPE_JSON_STRING) {
                assert_int_equal(m->str.len, want.str.len);
                assert_memory_equal(m->str.ptr, want.str.ptr, m->str.len);
            }
            if (m->kind == SHAPE_JSON_NUMBER) {
                assert_int_equal(m->num.cls, want.num.cls);
                assert_int_equal(m->num.flags, want.num.flags);
                assert_int_equal(m->num.i, want.num.i);
                assert_memory_equal(&m->num.d, &want.num.d, sizeof m->num.d);
            }
            if (k + 1 < count) { /* not last: a hit on a scalar read in place */
                assert_true(idx[k] >= 0);
                assert_true(m->kind != SHAPE_JSON_OBJECT && m->kind != SHAPE_JSON_ARRAY);
                assert_false(m->kind == SHAPE_JSON_STRING && m->str_escaped);
            }
            if (idx[k] >= 0) {
                /* the prediction (first or second: then swapped to first) */
                assert_int_equal(idx[k], next[prev + 1]);
                assert_int_equal(m->key.len + 3, lens[idx[k]]);
                assert_memory_equal(m->key.ptr, names[idx[k]], m->key.len);
                prev = idx[k];
            } else {
                for (size_t i = 0; i < n_names; i++)
                    if (names[i] && strlen(names[i]) == m->key.len && memcmp(names[i], m->key.ptr, m->key.len) == 0)
                        prev = (int64_t)i;
            }
        }
        if (r == SHAPE_JSON_MEMBER) continue;
        shape_json_member end;
        assert_int_equal(shape_json_next(plain, &end), r);
        if (r < 0) assert_int_equal(shape_json_last_error(sc)->offset, shape_json_last_error(plain)->offset);
        /* Further calls repeat the verdict. */
        assert_int_equal(shape_json_next_run(sc, next ? &chain : NULL, prev, run, idx, cap, &count), r);
        assert_int_equal(count, 0);
        break;
    }
    shape_json_scanner_free(plain);
}

static void test_member_runs(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "{\"a\":1,\"bb\":\"x\",\"ccc\":[1,{\"b\":2,\"a\":1}],\"d\":null}",
        "{\"a\":1,\"bb\":\"x\\n\",\"ccc\":2.5,\"d\":true,\"e\":false}",
        "{\"bb\":\"\\u00e9\",\"a\":-0,\"d\":{},\"ccc\":\"caf\xc3\xa9\"}",
        "{\"a\":1,\"a\":2,\"\\u0061\":3,\"bb\":1e400,\"d\":12345678901234567890}",
        "{ \"a\" : 1 , \"bb\" : \"x\" , \"ccc\" : [ ] , \"d\" : null }",
        "{}",
        " {\"a\":1} ",
        "[1,2]",
        "",
        "{\"a\":01}",
        "{\"a\":1,\"bb\":\"x\",\"ccc\":tru}",
        "{\"a\":1,\"bb\":\"x\",}",
        "{\"a\":1,\"bb\":[1,}",
        "{\"a\":1,\"bb\":\"x\"} x",
        "{\"a\":1,\"bb\":\"\xc3\"}",
        "{\"a\":1,\"bb\":\"x\"",
        "{\"a\" :1,\"bb\": \"x\",\"ccc\"\t:\t2,\"d\":\n3}",
        "{\"a\":1,\"bb\":\"x\",\"cccc\":1,\"cc\":2,\"ccc\":3}",
        "{\"a\":1,\"bb\"",
        "{\"a\":1,\"bb\":",
        "{\"a\":1,\"b",
    };
    static const char *const names[] = {"a", "bb", "ccc", "d", "e"};
    static const char *const some[] = {"a", NULL, "ccc", "d", "e"}; /* bb never expected */
    /* next[i + 1]: the index after i (next[0]: the first) */
    static const int64_t right[] = {0, 1, 2, 3, 4, -1};
    static const int64_t wrong[] = {1, 3, 0, 4, -1, 2};
    static const int64_t none[] = {-1, -1, -1, -1, -1, -1};
    for (size_t d = 0; d < sizeof docs / sizeof docs[0]; d++)
        for (size_t cap = 1; cap <= 8; cap++) {
            expect_run_walk(docs[d], names, 5, right, NULL, cap);
            expect_run_walk(docs[d], names, 5, wrong, NULL, cap);
            expect_run_walk(docs[d], some, 5, right, NULL, cap);
            expect_run_walk(docs[d], names, 5, NULL, NULL, cap);
            /* second guesses: right ones behind wrong ones, and the reverse */
            expect_run_walk(docs[d], names, 5, wrong, right, cap);
            expect_run_walk(docs[d], names, 5, right, wrong, cap);
            expect_run_walk(docs[d], some, 5, none, right, cap);
        }
    /* Names of 0..20 bytes (matched as one masked word, two words, or byte
     * by byte) against every byte of '"' key '"' ':' changed, and bodies cut
     * short anywhere. */
    static const char letters[] = "abcdefghijklmnopqrstu";
    for (size_t klen = 0; klen <= 20; klen++) {
        char key[32];
        memcpy(key, letters, klen);
        key[klen] = '\0';
        const char *const long_names[] = {key, "z"};
        static const int64_t chain_next[] = {0, 1, -1};
        char doc[128];
        int n = snprintf(doc, sizeof doc, "{\"%s\":1,\"z\":2,\"padding_padding\":3}", key);
        for (size_t cut = 1; cut <= (size_t)n; cut++) {
            char part[128];
            memcpy(part, doc, cut);
            part[cut] = '\0';
            expect_run_walk(part, long_names, 2, chain_next, NULL, 4);
        }
        for (size_t at = 1; at < klen + 4; at++) {
            static const char subs[] = {'X', ' ', '\\', '"', '}'};
            for (size_t k = 0; k < sizeof subs; k++) {
                char changed[128];
                memcpy(changed, doc, (size_t)n + 1);
                changed[at] = subs[k];
                expect_run_walk(changed, long_names, 2, chain_next, NULL, 4);
            }
        }
    }
}

/* ------------------------------------------------------------ rendering */

/* The canonical text of the first member's value. */
static void render_first(const char *doc, unsigned flags, char *out, size_t cap, int *rc)
{
    shape_json_member m;
    shape_json_buf b = SHAPE_JSON_BUF_INIT;
    assert_int_equal(shape_json_buf_reserve(&b, 3), 0);
    memcpy(b.data, "pre", 3); /* renders append */
    b.len = 3;
    shape_json_begin(sc, doc, strlen(doc));
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    *rc = shape_json_render(sc, &b, flags);
    out[0] = '\0';
    assert_memory_equal(b.data, "pre", 3);
    if (*rc == 0) {
        assert_int_equal(b.data[b.len], '\0');
        assert_true(b.len - 3 < cap);
        memcpy(out, b.data + 3, b.len - 3 + 1);
        /* The walk goes on after the value. */
        while ((*rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
        }
    } else {
        assert_int_equal(b.len, 3); /* a failed render leaves the buffer as it was */
    }
    shape_json_buf_reset(&b);
}

/* The same value spaced out (no fast path takes whitespace). */
static void spaced(const char *doc, char *out)
{
    int in_string = 0;
    for (const char *p = doc; *p; p++) {
        if (*p == '"' && (p == doc || p[-1] != '\\')) in_string = !in_string;
        *out++ = *p;
        if (!in_string && (*p == ',' || *p == ':' || *p == '[' || *p == '{')) *out++ = ' ';
    }
    *out = '\0';
}

/* shape_json_render_fast() on the first member's value: when it takes the
 * value, the text and the rest of the walk are those of shape_json_render();
 * when it does not, nothing was consumed (the render that follows works). */
static void expect_render_fast_like_render(const char *doc)
{
    char want[2048];
    int rc_want;
    render_first(doc, 0, want, sizeof want, &rc_want);
    shape_json_member m;
    shape_json_begin(sc, doc, strlen(doc));
    if (shape_json_next(sc, &m) != SHAPE_JSON_MEMBER) return;
    size_t room = shape_json_pending_size(sc);
    if (m.kind != SHAPE_JSON_OBJECT && m.kind != SHAPE_JSON_ARRAY) {
        assert_int_equal(room, 0);
        return;
    }
    assert_int_equal(room, strlen(doc) - m.offset);
    char *dst = malloc(room + 1);
    size_t len = 12345;
    if (shape_json_render_fast(sc, dst, &len)) {
        assert_true(len <= room);
        assert_int_equal(shape_json_pending_size(sc), 0);
        dst[len] = '\0';
        assert_string_equal(dst, want);
        int rc;
        while ((rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
        }
        assert_int_equal(rc, rc_want);
    } else {
        assert_int_equal(len, 12345);
        shape_json_buf b = SHAPE_JSON_BUF_INIT;
        int rc = shape_json_render(sc, &b, 0);
        if (rc == 0) {
            assert_string_equal(b.data, want);
            while ((rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
            }
        }
        assert_int_equal(rc, rc_want);
        shape_json_buf_reset(&b);
    }
    free(dst);
}

/* The walk's verdict and error offset when every nested value is left for
 * shape_json_next() to skip (the fast skip, else skip_container). */
static int walk_skipping(const char *doc, size_t *error_offset)
{
    shape_json_member m;
    int rc;
    shape_json_begin(sc, doc, strlen(doc));
    while ((rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
    }
    *error_offset = rc < 0 ? shape_json_last_error(sc)->offset : 0;
    return rc;
}

static void expect_render_like_general(const char *doc, unsigned flags)
{
    char fast[2048], slow[2048], doc2[2048];
    int rc_fast, rc_slow;
    expect_render_fast_like_render(doc);
    /* Skipping agrees with validating the whole document. */
    size_t skip_at;
    int rc_skip = walk_skipping(doc, &skip_at);
    int rc_valid = shape_json_validate(sc, doc, strlen(doc));
    if (rc_valid == 0) {
        if (rc_skip != SHAPE_JSON_DONE && rc_skip != SHAPE_JSON_ENOTOBJECT) fail_msg("%s: skip %d, valid", doc, rc_skip);
    } else {
        assert_int_equal(rc_skip, rc_valid);
        assert_int_equal(skip_at, shape_json_last_error(sc)->offset);
    }
    render_first(doc, flags, fast, sizeof fast, &rc_fast);
    spaced(doc, doc2);
    render_first(doc2, flags, slow, sizeof slow, &rc_slow);
    if (rc_fast != rc_slow || strcmp(fast, slow) != 0)
        fail_msg("%s: %d '%s', spaced out %d '%s'", doc, rc_fast, fast, rc_slow, slow);
}

static void test_render_arrays_of_objects(void **state)
{
    (void)state;
    int rc;
    char out[512];
    render_first("{\"v\":[{\"sku\":\"A1\",\"qty\":3,\"price\":1.50},{\"sku\":\"B2\",\"qty\":1,\"price\":20}],\"n\":1}", 0,
                 out, sizeof out, &rc);
    assert_int_equal(rc, SHAPE_JSON_DONE);
    assert_string_equal(out, "[{\"price\":1.50,\"qty\":3,\"sku\":\"A1\"},{\"price\":20,\"qty\":1,\"sku\":\"B2\"}]");

    /* Shapes that change from one object to the next: the cached key order
     * of the previous object must be used only when the keys are the same,
     * in the same order, each written plainly. */
    static const char *const docs[] = {
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":3,\"a\":4},{\"a\":5,\"b\":6},{\"b\":7},{\"b\":8,\"a\":9,\"c\":0}]}",
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":1,\"ab\":2},{\"b\":1,\"a\":2,\"a\":3},{\"bb\":1,\"a\":2},{\"b\":1,\"a\":2}]}",
        "{\"v\":[{\"b\":1,\"a\":2},{\"\\u0062\":1,\"a\":2},{\"b\":1,\"\\u0061\":2},{\"b\":\"\\n\",\"a\":2}]}",
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":[1],\"a\":2},{\"b\":{\"y\":1,\"x\":2},\"a\":2},{\"b\":1,\"a\":-2.5e3}]}",
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":\"\xc3\xa9\",\"a\":2},{\"b\":true,\"a\":null},{\"b\":false,\"a\":0}]}",
        "{\"v\":[{\"k\":1},{\"k\":2},{}, {\"k\":3}]}",
        "{\"v\":[{\"b\":1,\"a\":2},3,\"s\",{\"b\":1,\"a\":2}]}",
        "{\"v\":[]}",
        "{\"v\":{\"z\":1,\"y\":\"two\",\"x\":3.25}}",
        "{\"v\":{\"x\":1,\"y\":2}}",
        "{\"v\":{}}",
        "{\"v\":[{\"q\":1,\"p\":2,\"o\":3,\"n\":4,\"m\":5,\"l\":6,\"k\":7,\"j\":8,\"i\":9,\"h\":10,\"g\":11,\"f\":12,"
        "\"e\":13,\"d\":14,\"c\":15,\"b\":16,\"a\":17},{\"b\":1,\"a\":2}]}",
        "{\"v\":[{\"b\":01,\"a\":2}]}",
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":1,\"a\":2},]}",
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":1,\"a\":2}",
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":1,\"a\":2}]",
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":1,\"a\":\"\x01\"}]}",
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":1,\"a\":tru}]}",
        "{\"v\":[{\"b\":1,\"a\":2},{\"b\":1,\"a\":2}}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        expect_render_like_general(docs[i], 0);
        expect_render_like_general(docs[i], SHAPE_JSON_RENDER_ASCII);
    }
    /* The cache outlives a body: the next body's objects start like the
     * previous body's last one and then differ. */
    expect_render_like_general("{\"v\":[{\"sku\":\"A1\",\"qty\":3}]}", 0);
    expect_render_like_general("{\"v\":[{\"sku\":\"A1\",\"qtz\":3}]}", 0);
    expect_render_like_general("{\"v\":[{\"sku\":\"A1\",\"qty\":3,\"x\":1}]}", 0);
    expect_render_like_general("{\"v\":[{\"sku\":\"A1\"}]}", 0);
    /* DEL is plain to the fast path but escaped in ASCII mode. */
    expect_render_like_general("{\"v\":[{\"b\":\"\x7f\",\"a\":2}]}", SHAPE_JSON_RENDER_ASCII);
    /* A cached key is matched as one word ('"' key '"' ':' up to 8 bytes)
     * or byte by byte: every byte of that text changed in the second object
     * (another letter, a space, a backslash, a quote), for keys of 0..9
     * bytes, and the bodies cut short right after it. */
    for (size_t klen = 0; klen <= 9; klen++) {
        char text[16];
        size_t tl = (size_t)snprintf(text, sizeof text, "\"%.*s\":", (int)klen, "kkkkkkkkkk");
        for (size_t at = 0; at < tl; at++) {
            static const char subs[] = {'X', ' ', '\\', '"'};
            for (size_t k = 0; k < sizeof subs; k++) {
                char changed[16];
                memcpy(changed, text, tl);
                changed[at] = subs[k];
                char doc[128];
                int n = snprintf(doc, sizeof doc, "{\"v\":[{%s1,\"b\":2},{%.*s1,\"b\":2}]}", text, (int)tl, changed);
                expect_render_like_general(doc, 0);
                doc[n - 8] = '\0'; /* cut inside the second object */
                expect_render_like_general(doc, 0);
            }
        }
        char doc[128];
        snprintf(doc, sizeof doc, "{\"v\":[{%s1,\"b\":2},{%s", text, text);
        expect_render_like_general(doc, 0);
    }
}

static void test_render_numbers_in_objects(void **state)
{
    (void)state;
    /* Numbers in flat objects are measured 8 bytes at a time when 16 bytes
     * of body remain: integer runs of 1..18 digits, fractions of 0..10,
     * followed by what may end the member or not, with and without a long
     * tail after the value. */
    static const char *const after[] = {"", "e5", "E-2", "x", " ", "]", ".5"};
    for (int id = 1; id <= 18; id++)
        for (int fd = -1; fd <= 10; fd++)
            for (size_t a = 0; a < sizeof after / sizeof after[0]; a++)
                for (int tail = 0; tail < 2; tail++) {
                    char num[64];
                    int n = snprintf(num, sizeof num, "%.*s", id, "918273645546372819");
                    if (fd >= 0) n += snprintf(num + n, sizeof num - (size_t)n, ".%.*s", fd, "0123456789");
                    snprintf(num + n, sizeof num - (size_t)n, "%s", after[a]);
                    char doc[256];
                    snprintf(doc, sizeof doc, "{\"v\":[{\"b\":%s,\"a\":2}]%s}", num,
                             tail ? ",\"tail\":\"0123456789abcdef\"" : "");
                    expect_render_like_general(doc, 0);
                    snprintf(doc, sizeof doc, "{\"v\":{\"b\":2,\"a\":%s}%s}", num,
                             tail ? ",\"tail\":\"0123456789abcdef\"" : "");
                    expect_render_like_general(doc, 0);
                }
}

static void test_render_random_flat_objects(void **state)
{
    (void)state;
    /* Arrays of flat objects built from a small key pool, so that shapes
     * repeat, change and collide; fast and general renders must agree. */
    static const char *const keys[] = {"a", "b", "ab", "ba", "sku", "qty", "price", "p", "aaaaaaaaaaaaaaaaa"};
    static const char *const values[] = {"1", "0", "-3", "2.50", "1e3", "\"s\"", "\"\"", "true", "null", "12345678"};
    char doc[4096];
    for (int round = 0; round < 400; round++) {
        size_t w = (size_t)snprintf(doc, sizeof doc, "{\"v\":[");
        int nobj = 1 + (int)(rng() % 4);
        for (int o = 0; o < nobj; o++) {
            if (o) doc[w++] = ',';
            doc[w++] = '{';
            int nm = (int)(rng() % 5);
            for (int k = 0; k < nm; k++) {
                w += (size_t)snprintf(doc + w, sizeof doc - w, "%s\"%s\":%s", k ? "," : "",
                                      keys[rng() % (sizeof keys / sizeof keys[0])],
                                      values[rng() % (sizeof values / sizeof values[0])]);
            }
            doc[w++] = '}';
        }
        snprintf(doc + w, sizeof doc - w, "]}");
        expect_render_like_general(doc, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_every_length),
        cmocka_unit_test(test_numbers_invalid_with_room),
        cmocka_unit_test(test_expected_key_every_position),
        cmocka_unit_test(test_expected_key_later_members_and_errors),
        cmocka_unit_test(test_member_runs),
        cmocka_unit_test(test_render_arrays_of_objects),
        cmocka_unit_test(test_render_numbers_in_objects),
        cmocka_unit_test(test_render_random_flat_objects),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

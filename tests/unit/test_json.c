/* test_json.c — the message-body JSON scanner (shape/json.h): every rule
 * pinned with concrete inputs. The differential test against jansson lives
 * in test_json_diff.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <locale.h>

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

/* The verdict of walking the whole body (every member, nested values skipped
 * by next()). */
static int walk_len(const char *doc, size_t len)
{
    shape_json_begin(sc, doc, len);
    shape_json_member m;
    int rc;
    while ((rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
    }
    return rc;
}

static int walk(const char *doc) { return walk_len(doc, strlen(doc)); }

/* Begin and return the first member of {"k": VALUE}. */
static int first_len(const char *doc, size_t len, shape_json_member *m)
{
    shape_json_begin(sc, doc, len);
    return shape_json_next(sc, m);
}

static int first(const char *doc, shape_json_member *m) { return first_len(doc, strlen(doc), m); }

/* Canonical text of a whole document ("" and the verdict on failure). */
static char canon_buf[8192];
static int canon_rc;
static const char *canon_flags(const char *doc, size_t len, unsigned flags)
{
    shape_json_buf b = SHAPE_JSON_BUF_INIT;
    canon_rc = shape_json_canonical(sc, doc, len, &b, flags);
    canon_buf[0] = '\0';
    if (canon_rc == 0) {
        assert_true(b.len < sizeof canon_buf);
        assert_int_equal(b.data[b.len], '\0');
        memcpy(canon_buf, b.data, b.len + 1);
    }
    shape_json_buf_reset(&b);
    return canon_buf;
}

static const char *canon(const char *doc) { return canon_flags(doc, strlen(doc), 0); }

static void assert_slice(shape_json_slice s, const char *bytes, size_t len)
{
    assert_int_equal(s.len, len);
    assert_memory_equal(s.ptr, bytes, len);
}

/* ------------------------------------------------------------- the walk */

static void test_walk_members_in_order(void **state)
{
    (void)state;
    const char *doc = " {\"a\":1, \"b\" : \"x\",\"c\":true,\"d\":false,\"e\":null,\"f\":{\"z\":[1]},\"g\":[2,3],\"h\":-1.5} ";
    shape_json_begin(sc, doc, strlen(doc));
    shape_json_member m;
    static const struct {
        const char *key;
        int kind;
    } want[] = {{"a", SHAPE_JSON_NUMBER}, {"b", SHAPE_JSON_STRING}, {"c", SHAPE_JSON_TRUE},
                {"d", SHAPE_JSON_FALSE},  {"e", SHAPE_JSON_NULL},   {"f", SHAPE_JSON_OBJECT},
                {"g", SHAPE_JSON_ARRAY},  {"h", SHAPE_JSON_NUMBER}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
        assert_slice(m.key, want[i].key, 1);
        assert_int_equal(m.key_escaped, 0);
        assert_int_equal(m.kind, want[i].kind);
        /* Unescaped keys are slices of the body. */
        assert_true(m.key.ptr > doc && m.key.ptr < doc + strlen(doc));
    }
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE); /* stays done */
    assert_int_equal(shape_json_last_error(sc)->verdict, 0);
}

static void test_value_offsets_and_string_slices(void **state)
{
    (void)state;
    const char *doc = "{\"k\": \"plain\"}";
    shape_json_member m;
    assert_int_equal(first(doc, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(m.offset, 6);
    assert_int_equal(m.kind, SHAPE_JSON_STRING);
    assert_int_equal(m.str_escaped, 0);
    assert_ptr_equal(m.str.ptr, doc + 7);
    assert_slice(m.str, "plain", 5);
}

static void test_empty_object(void **state)
{
    (void)state;
    assert_int_equal(walk("{}"), SHAPE_JSON_DONE);
    assert_int_equal(walk(" \t\r\n{ \t\r\n} \t\r\n"), SHAPE_JSON_DONE);
    assert_string_equal(canon(" { } "), "{}");
    assert_string_equal(canon("[ ]"), "[]");
}

static void test_duplicate_keys_yielded_in_order(void **state)
{
    (void)state;
    shape_json_begin(sc, "{\"a\":1,\"a\":2,\"b\":3,\"a\":4}", 25);
    shape_json_member m;
    int64_t got[4];
    char keys[5] = {0};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
        keys[i] = m.key.ptr[0];
        got[i] = m.num.i;
    }
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);
    assert_string_equal(keys, "aaba");
    assert_int_equal(got[0], 1);
    assert_int_equal(got[1], 2);
    assert_int_equal(got[2], 3);
    assert_int_equal(got[3], 4);
}

static void test_not_an_object(void **state)
{
    (void)state;
    const char *valid[] = {"[1,2]", "\"s\"", "1", "-0.5", "null", "true", "false", " [ ] ", "[{\"a\":1}]"};
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        assert_int_equal(walk(valid[i]), SHAPE_JSON_ENOTOBJECT);
        assert_string_equal(shape_json_verdict_name(SHAPE_JSON_ENOTOBJECT), "not an object");
        assert_int_equal(shape_json_validate(sc, valid[i], strlen(valid[i])), 0);
    }
    /* An invalid non-object gets its real error, not "not an object". */
    assert_int_equal(walk("[1,"), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk("[1] x"), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk("\"\xff\""), SHAPE_JSON_EUTF8);
    assert_int_equal(walk("01"), SHAPE_JSON_ESYNTAX);
}

static void test_empty_and_whitespace_bodies(void **state)
{
    (void)state;
    assert_int_equal(walk_len("", 0), SHAPE_JSON_ESYNTAX);
    assert_string_equal(shape_json_last_error(sc)->reason, "empty document");
    assert_int_equal(walk_len(NULL, 0), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk(" \n\t\r"), SHAPE_JSON_ESYNTAX);
    assert_int_equal(shape_json_validate(sc, "", 0), SHAPE_JSON_ESYNTAX);
}

static void test_whitespace_is_rfc_only(void **state)
{
    (void)state;
    assert_int_equal(walk("{\"a\" :\t1 ,\r\n\"b\":2}"), SHAPE_JSON_DONE);
    assert_int_equal(walk("{\f}"), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk("{\v}"), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk("{\xc2\xa0}"), SHAPE_JSON_ESYNTAX); /* NBSP */
    assert_int_equal(walk("\xef\xbb\xbf{}"), SHAPE_JSON_ESYNTAX); /* BOM refused */
}

static void test_trailing_garbage(void **state)
{
    (void)state;
    assert_int_equal(walk("{} \n"), SHAPE_JSON_DONE);
    assert_int_equal(walk("{}x"), SHAPE_JSON_ESYNTAX);
    assert_string_equal(shape_json_last_error(sc)->reason, "trailing characters after the document");
    assert_int_equal(shape_json_last_error(sc)->offset, 2);
    assert_int_equal(walk("{} {}"), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk("{}}"), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk("{\"a\":1}]"), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk_len("{}\0", 3), SHAPE_JSON_ESYNTAX);
    assert_int_equal(shape_json_validate(sc, "1 2", 3), SHAPE_JSON_ESYNTAX);
}

static void test_trailing_commas_and_bad_structure(void **state)
{
    (void)state;
    const char *bad[] = {"{\"a\":1,}",     "{,}",           "{\"a\":1,,\"b\":2}", "{\"a\":[1,]}",
                         "{\"a\":[,1]}",   "{\"a\":{\"b\":1,}}", "{\"a\" 1}",        "{\"a\":}",
                         "{\"a\"}",        "{a:1}",         "{'a':1}",          "{\"a\":1 \"b\":2}",
                         "{\"a\":[1 2]}",  "{\"a\":[1}",     "{\"a\":{]}",         "{",
                         "{\"a\"",         "{\"a\":",       "{\"a\":1",          "{\"a\":[",
                         "{\"a\":{\"b\"",  "{\"a\":\"x",     "{\"a\":tru}",        "{\"a\":nul}",
                         "{\"a\":True}",   "{\"a\":truex}",  "{\"a\":nulll}",      "{\"a\":[true false]}",
                         "{\"a\":NaN}",    "{\"a\":Infinity}", "{\"a\":-Infinity}", "{\"a\":undefined}",
                         "{\"a\":1}{",     "{1:2}",         "{\"a\":[1]]}",       "{\"a\":{}}}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = walk(bad[i]);
        if (rc != SHAPE_JSON_ESYNTAX) fail_msg("%s: verdict %d, want syntax", bad[i], rc);
        assert_int_equal(shape_json_validate(sc, bad[i], strlen(bad[i])), SHAPE_JSON_ESYNTAX);
        canon(bad[i]);
        assert_int_equal(canon_rc, SHAPE_JSON_ESYNTAX);
    }
}

static void test_errors_surface_after_members(void **state)
{
    (void)state;
    shape_json_member m;
    shape_json_begin(sc, "{\"a\":1,\"b\":[1,}],\"c\":2}", 23);
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(m.kind, SHAPE_JSON_ARRAY);
    /* Not consumed by the caller: next() skips it, and finds the error. */
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_ESYNTAX);
    assert_int_equal(shape_json_last_error(sc)->offset, 14);
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_ESYNTAX); /* sticky */
}

static void test_nul_bytes(void **state)
{
    (void)state;
    shape_json_member m;
    /* Outside strings: invalid. */
    assert_int_equal(walk_len("{\0}", 3), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk_len("\0{}", 3), SHAPE_JSON_ESYNTAX);
    assert_int_equal(walk_len("{\"a\":1\0}", 8), SHAPE_JSON_ESYNTAX);
    /* Raw inside strings: a control character. */
    assert_int_equal(walk_len("{\"a\":\"x\0y\"}", 11), SHAPE_JSON_ESYNTAX);
    assert_string_equal(shape_json_last_error(sc)->reason, "control character in string");
    assert_int_equal(shape_json_last_error(sc)->offset, 7);
    /* Escaped: fine, in values and in keys. */
    assert_int_equal(first("{\"a\\u0000b\":\"x\\u0000y\"}", &m), SHAPE_JSON_MEMBER);
    assert_slice(m.key, "a\0b", 3);
    assert_slice(m.str, "x\0y", 3);
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);
    assert_string_equal(canon("{\"a\\u0000b\":\"x\\u0000y\"}"), "{\"a\\u0000b\":\"x\\u0000y\"}");
}

static void test_not_nul_terminated(void **state)
{
    (void)state;
    /* The byte after the body must never be read: give a prefix of a longer
     * buffer whose continuation would change the verdict. */
    const char *buf = "{\"a\":12}34";
    shape_json_member m;
    assert_int_equal(first_len(buf, 7, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(m.num.i, 12);
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_ESYNTAX); /* "{"a":12" ends early */
    assert_int_equal(first_len("{\"a\":1234}", 7, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(m.num.i, 12);
    assert_int_equal(walk_len("{\"a\":\"xyz\"}", 8), SHAPE_JSON_ESYNTAX); /* unterminated string */
    assert_string_equal(shape_json_last_error(sc)->reason, "unterminated string");
    assert_int_equal(walk_len("{\"a\":true}", 8), SHAPE_JSON_ESYNTAX);   /* "tru" */
    /* A heap copy of exactly len bytes, so a sanitizer sees any over-read. */
    const char *doc = "{\"key\":\"a fairly long string value to cross the SIMD width\",\"n\":-12.5e3}";
    size_t n = strlen(doc);
    for (size_t cut = 0; cut <= n; cut++) {
        char *copy = malloc(cut ? cut : 1);
        memcpy(copy, doc, cut);
        int rc = walk_len(copy, cut);
        assert_int_equal(rc, cut == n ? SHAPE_JSON_DONE : SHAPE_JSON_ESYNTAX);
        free(copy);
    }
}

/* -------------------------------------------------------------- strings */

static void test_escapes(void **state)
{
    (void)state;
    shape_json_member m;
    assert_int_equal(first("{\"k\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", &m), SHAPE_JSON_MEMBER);
    assert_int_equal(m.str_escaped, 1);
    assert_slice(m.str, "\"\\/\b\f\n\r\t", 8);
    assert_int_equal(first("{\"k\":\"caf\\u00e9\"}", &m), SHAPE_JSON_MEMBER);
    assert_slice(m.str, "caf\xc3\xa9", 5);
    assert_int_equal(first("{\"k\":\"\\u00E9\\u20AC\\u0041\"}", &m), SHAPE_JSON_MEMBER);
    assert_slice(m.str, "\xc3\xa9\xe2\x82\xac" "A", 6);
    assert_int_equal(first("{\"k\":\"\\ud83d\\ude00!\"}", &m), SHAPE_JSON_MEMBER);
    assert_slice(m.str, "\xf0\x9f\x98\x80!", 5);
    assert_int_equal(first("{\"k\":\"\\uDBFF\\uDFFF\"}", &m), SHAPE_JSON_MEMBER);
    assert_slice(m.str, "\xf4\x8f\xbf\xbf", 4); /* U+10FFFF */
    assert_int_equal(first("{\"k\":\"\\uFFFF\\uD7FF\\uE000\"}", &m), SHAPE_JSON_MEMBER);
    assert_slice(m.str, "\xef\xbf\xbf\xed\x9f\xbf\xee\x80\x80", 9);
    /* Escapes in a key go to scratch, and the value's own scratch does not
     * overwrite the key. */
    assert_int_equal(first("{\"k\\u00e9y\":\"v\\u00e9\"}", &m), SHAPE_JSON_MEMBER);
    assert_int_equal(m.key_escaped, 1);
    assert_slice(m.key, "k\xc3\xa9y", 4);
    assert_slice(m.str, "v\xc3\xa9", 3);
    /* Long runs around escapes (crossing the 16-byte SIMD blocks). */
    assert_int_equal(first("{\"k\":\"0123456789abcdef0123\\n456789abcdef0123456789\\t\"}", &m),
                     SHAPE_JSON_MEMBER);
    assert_slice(m.str, "0123456789abcdef0123\n456789abcdef0123456789\t", 44);
}

static void test_invalid_escapes(void **state)
{
    (void)state;
    const char *bad[] = {"{\"k\":\"\\x\"}",    "{\"k\":\"\\U0041\"}", "{\"k\":\"\\u12\"}",
                         "{\"k\":\"\\u12G4\"}", "{\"k\":\"\\'\"}",     "{\"k\":\"\\\"}",
                         "{\"k\":\"\\0\"}",    "{\"k\":\"\\a\"}",     "{\"k\":\"\\ud800\\uZZZZ\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = walk(bad[i]);
        if (rc != SHAPE_JSON_ESYNTAX) fail_msg("%s: verdict %d, want syntax", bad[i], rc);
    }
    assert_int_equal(walk("{\"k\":\"ab\\q\"}"), SHAPE_JSON_ESYNTAX);
    assert_string_equal(shape_json_last_error(sc)->reason, "invalid escape");
    assert_int_equal(shape_json_last_error(sc)->offset, 8);
}

static void test_lone_surrogates_refused(void **state)
{
    (void)state;
    /* RFC 8259 §8.2 leaves unpaired surrogates "unpredictable"; they have no
     * UTF-8 form, so we refuse them (as jansson does). */
    const char *bad[] = {"{\"k\":\"\\ud800\"}",       "{\"k\":\"\\udc00\"}",       "{\"k\":\"\\udfff\"}",
                         "{\"k\":\"\\ud800\\u0041\"}", "{\"k\":\"\\ud800x\"}",      "{\"k\":\"\\ud800\\n\"}",
                         "{\"k\":\"\\ude00\\ud83d\"}", "{\"k\":\"\\ud83d\\ud83d\"}", "{\"\\ud800\":1}",
                         "{\"k\":[\"\\udbff\"]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = walk(bad[i]);
        if (rc != SHAPE_JSON_EUTF8) fail_msg("%s: verdict %d, want utf8", bad[i], rc);
        assert_string_equal(shape_json_last_error(sc)->reason, "unpaired surrogate escape");
        assert_int_equal(shape_json_validate(sc, bad[i], strlen(bad[i])), SHAPE_JSON_EUTF8);
    }
}

static void test_control_characters(void **state)
{
    (void)state;
    for (int c = 1; c < 0x20; c++) {
        char doc[16];
        int n = snprintf(doc, sizeof doc, "{\"k\":\"a%cb\"}", c);
        assert_int_equal(walk_len(doc, (size_t)n), SHAPE_JSON_ESYNTAX);
        assert_string_equal(shape_json_last_error(sc)->reason, "control character in string");
    }
    shape_json_member m;
    assert_int_equal(first("{\"k\":\"a\x7f" "b\"}", &m), SHAPE_JSON_MEMBER); /* DEL is fine */
    assert_slice(m.str, "a\x7f" "b", 3);
    assert_int_equal(first("{\"k\":\"\\u001f\\u0001\"}", &m), SHAPE_JSON_MEMBER);
    assert_slice(m.str, "\x1f\x01", 2);
}

static void test_utf8_validation(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        int ok;
    } cases[] = {
        {"\xc3\xa9", 1},            /* U+00E9 */
        {"\xc2\x80", 1},            /* U+0080, smallest 2-byte */
        {"\xdf\xbf", 1},            /* U+07FF */
        {"\xe0\xa0\x80", 1},        /* U+0800, smallest 3-byte */
        {"\xe2\x82\xac", 1},        /* U+20AC */
        {"\xed\x9f\xbf", 1},        /* U+D7FF, just below the surrogates */
        {"\xee\x80\x80", 1},        /* U+E000, just above */
        {"\xef\xbf\xbf", 1},        /* U+FFFF */
        {"\xf0\x90\x80\x80", 1},    /* U+10000 */
        {"\xf0\x9f\x98\x80", 1},    /* U+1F600 */
        {"\xf4\x8f\xbf\xbf", 1},    /* U+10FFFF */
        {"\x80", 0},                /* lone continuation byte */
        {"\xbf", 0},
        {"\xc0\x80", 0},            /* overlong NUL */
        {"\xc0\xaf", 0},            /* overlong '/' */
        {"\xc1\xbf", 0},            /* overlong */
        {"\xe0\x80\x80", 0},        /* overlong 3-byte */
        {"\xe0\x9f\xbf", 0},        /* overlong U+07FF */
        {"\xf0\x80\x80\x80", 0},    /* overlong 4-byte */
        {"\xf0\x8f\xbf\xbf", 0},    /* overlong U+FFFF */
        {"\xed\xa0\x80", 0},        /* U+D800 encoded */
        {"\xed\xbf\xbf", 0},        /* U+DFFF encoded */
        {"\xed\xa0\xbd\xed\xb8\x80", 0}, /* CESU-8 surrogate pair */
        {"\xf4\x90\x80\x80", 0},    /* U+110000 */
        {"\xf5\x80\x80\x80", 0},
        {"\xf8\x88\x80\x80\x80", 0}, /* 5-byte form */
        {"\xfe", 0},
        {"\xff", 0},
        {"\xc3", 0},                /* truncated by the closing quote */
        {"\xe2\x82", 0},
        {"\xf0\x9f\x98", 0},
        {"\xc3\x28", 0},            /* bad continuation */
        {"\xe2\x28\xa1", 0},
        {"\xf0\x28\x8c\xbc", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char doc[64];
        int n = snprintf(doc, sizeof doc, "{\"k\":\"ab%scd\"}", cases[i].bytes);
        int want = cases[i].ok ? SHAPE_JSON_DONE : SHAPE_JSON_EUTF8;
        int rc = walk_len(doc, (size_t)n);
        if (rc != want) fail_msg("case %zu: verdict %d, want %d", i, rc, want);
        if (!cases[i].ok) assert_int_equal(shape_json_last_error(sc)->offset, 8);
        /* The same bytes in a key, in a nested value, and in an escaped
         * string (the copying path). */
        n = snprintf(doc, sizeof doc, "{\"%s\":1}", cases[i].bytes);
        assert_int_equal(walk_len(doc, (size_t)n), want);
        n = snprintf(doc, sizeof doc, "{\"k\":[\"%s\"]}", cases[i].bytes);
        assert_int_equal(walk_len(doc, (size_t)n), want);
        n = snprintf(doc, sizeof doc, "{\"k\":\"\\n%s\"}", cases[i].bytes);
        assert_int_equal(walk_len(doc, (size_t)n), want);
    }
    /* Truncated at the very end of the body (no closing quote to stop it). */
    assert_int_equal(walk_len("{\"k\":\"\xe2\x82", 8), SHAPE_JSON_EUTF8);
    /* Non-ASCII outside strings is a syntax error. */
    assert_int_equal(walk("{\xc3\xa9:1}"), SHAPE_JSON_ESYNTAX);
}

static void test_error_format(void **state)
{
    (void)state;
    const char *doc = "{\"key\":\"abcdefgh\xff\"}";
    assert_int_equal(walk(doc), SHAPE_JSON_EUTF8);
    const shape_json_error *e = shape_json_last_error(sc);
    assert_int_equal(e->offset, 16);
    char text[128];
    shape_json_error_format(e, text, sizeof text);
    assert_string_equal(text, "invalid UTF-8 at byte 16");
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_json_error_to_err(e, &err), SHAPE_EINVAL);
    assert_int_equal(err.code, SHAPE_EINVAL);
    assert_string_equal(err.message, "invalid UTF-8 at byte 16");
    assert_string_equal(shape_json_verdict_name(SHAPE_JSON_EUTF8), "utf8");
    assert_string_equal(shape_json_kind_name(SHAPE_JSON_ARRAY), "array");
}

/* -------------------------------------------------------------- numbers */

typedef struct num_case {
    const char *text;
    int cls;
    unsigned flags;
    int64_t i;
} num_case;

#define NEG SHAPE_JSON_NUM_NEGATIVE
#define INTEGRAL SHAPE_JSON_NUM_INTEGRAL
#define FITS SHAPE_JSON_NUM_FITS_INT64
#define OVER SHAPE_JSON_NUM_OVERFLOW

static const num_case num_cases[] = {
    {"0", SHAPE_JSON_INT, INTEGRAL | FITS, 0},
    {"-0", SHAPE_JSON_INT, NEG | INTEGRAL | FITS, 0},
    {"7", SHAPE_JSON_INT, INTEGRAL | FITS, 7},
    {"-42", SHAPE_JSON_INT, NEG | INTEGRAL | FITS, -42},
    {"123456789012345678", SHAPE_JSON_INT, INTEGRAL | FITS, 123456789012345678},
    {"9007199254740993", SHAPE_JSON_INT, INTEGRAL | FITS, 9007199254740993},
    {"9223372036854775807", SHAPE_JSON_INT, INTEGRAL | FITS, INT64_MAX},
    {"-9223372036854775807", SHAPE_JSON_INT, NEG | INTEGRAL | FITS, -INT64_MAX},
    {"-9223372036854775808", SHAPE_JSON_INT, NEG | INTEGRAL | FITS, INT64_MIN},
    {"9223372036854775808", SHAPE_JSON_BIGINT, INTEGRAL, 0},
    {"-9223372036854775809", SHAPE_JSON_BIGINT, NEG | INTEGRAL, 0},
    {"9999999999999999999", SHAPE_JSON_BIGINT, INTEGRAL, 0},
    {"12345678901234567890", SHAPE_JSON_BIGINT, INTEGRAL, 0},
    {"18446744073709551616", SHAPE_JSON_BIGINT, INTEGRAL, 0},
    {"-123456789012345678901234567890", SHAPE_JSON_BIGINT, NEG | INTEGRAL, 0},
    {"-0.0", SHAPE_JSON_REAL, NEG | INTEGRAL | FITS, 0},
    {"0.0", SHAPE_JSON_REAL, INTEGRAL | FITS, 0},
    {"2.0", SHAPE_JSON_REAL, INTEGRAL | FITS, 2},
    {"2.5", SHAPE_JSON_REAL, 0, 0},
    {"-2.5", SHAPE_JSON_REAL, NEG, 0},
    {"1e3", SHAPE_JSON_REAL, INTEGRAL | FITS, 1000},
    {"1E+3", SHAPE_JSON_REAL, INTEGRAL | FITS, 1000},
    {"1e-3", SHAPE_JSON_REAL, 0, 0},
    {"1.5e-7", SHAPE_JSON_REAL, 0, 0},
    {"0.1", SHAPE_JSON_REAL, 0, 0},
    {"123.45", SHAPE_JSON_REAL, 0, 0},
    {"0.000001234", SHAPE_JSON_REAL, 0, 0},
    {"25e-1", SHAPE_JSON_REAL, 0, 0},
    {"20e-1", SHAPE_JSON_REAL, INTEGRAL | FITS, 2},
    {"0e10", SHAPE_JSON_REAL, INTEGRAL | FITS, 0},
    {"0E-10", SHAPE_JSON_REAL, INTEGRAL | FITS, 0},
    {"-0e0", SHAPE_JSON_REAL, NEG | INTEGRAL | FITS, 0},
    {"1e22", SHAPE_JSON_REAL, INTEGRAL, 0},
    {"1e23", SHAPE_JSON_REAL, INTEGRAL, 0},
    {"9007199254740993.0", SHAPE_JSON_REAL, INTEGRAL | FITS, 9007199254740992}, /* d rounds */
    {"9223372036854775807.0", SHAPE_JSON_REAL, INTEGRAL, 0},          /* d = 2^63 */
    {"-9223372036854775808.0", SHAPE_JSON_REAL, NEG | INTEGRAL | FITS, INT64_MIN},
    {"1.7976931348623157e308", SHAPE_JSON_REAL, INTEGRAL, 0},
    {"1e400", SHAPE_JSON_REAL, OVER, 0},
    {"-1e400", SHAPE_JSON_REAL, NEG | OVER, 0},
    {"1e99999999999999999999", SHAPE_JSON_REAL, OVER, 0},
    {"1e-400", SHAPE_JSON_REAL, INTEGRAL | FITS, 0}, /* underflows to 0 */
    {"4.9406564584124654e-324", SHAPE_JSON_REAL, 0, 0},
    {"2.2250738585072011e-308", SHAPE_JSON_REAL, 0, 0},
    {"0.30000000000000004", SHAPE_JSON_REAL, 0, 0},
    {"3.14159265358979323846264338327950288419716939937510", SHAPE_JSON_REAL, 0, 0},
    /* INTEGRAL is about d, the value a double holds (Python's float too). */
    {"1.00000000000000000000000000001", SHAPE_JSON_REAL, INTEGRAL | FITS, 1},
    {"2.00000000000000000000000000000", SHAPE_JSON_REAL, INTEGRAL | FITS, 2},
    {"100000000000000000000000000000.0", SHAPE_JSON_REAL, INTEGRAL, 0},
    {"123456789012345678901234567890e-10", SHAPE_JSON_REAL, INTEGRAL, 0},
    {"8.98846567431158e307", SHAPE_JSON_REAL, INTEGRAL, 0},
    {"1.8e308", SHAPE_JSON_REAL, OVER, 0},
};

static void check_number(const char *text, const num_case *want)
{
    char doc[160];
    int n = snprintf(doc, sizeof doc, "{\"n\":%s}", text);
    shape_json_member m;
    if (first_len(doc, (size_t)n, &m) != SHAPE_JSON_MEMBER) fail_msg("%s: not accepted", text);
    assert_int_equal(m.kind, SHAPE_JSON_NUMBER);
    assert_slice(m.num.text, text, strlen(text));
    assert_ptr_equal(m.num.text.ptr, doc + 5);
    double ref = strtod(text, NULL);
    if (memcmp(&ref, &m.num.d, sizeof ref) != 0) fail_msg("%s: d = %.17g, strtod says %.17g", text, m.num.d, ref);
    if (want) {
        if (m.num.cls != want->cls) fail_msg("%s: class %d, want %d", text, m.num.cls, want->cls);
        if (m.num.flags != want->flags) fail_msg("%s: flags %#x, want %#x", text, m.num.flags, want->flags);
        if (m.num.i != want->i) fail_msg("%s: i %lld, want %lld", text, (long long)m.num.i, (long long)want->i);
    }
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);
}

static void test_numbers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof num_cases / sizeof num_cases[0]; i++) check_number(num_cases[i].text, &num_cases[i]);
}

static void test_numbers_match_strtod(void **state)
{
    (void)state;
    /* Fast path and slow path alike must give strtod's correctly rounded
     * double, bit for bit. A deterministic sweep over mantissas and exponents
     * around the fast path's edges. */
    uint64_t x = 88172645463325252ull;
    char text[64];
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        unsigned digits = 1 + (unsigned)(x % 19);
        uint64_t mant = (x >> 8) % 10000000000000000000ull;
        char ds[24];
        snprintf(ds, sizeof ds, "%llu", (unsigned long long)mant);
        if (strlen(ds) > digits) ds[digits] = '\0';
        int e = (int)((x >> 40) % 80) - 40;
        unsigned point = (unsigned)((x >> 20) % (strlen(ds) + 1));
        int len;
        if (point == 0 || point >= strlen(ds))
            len = snprintf(text, sizeof text, "%s%se%d", (x & 1) ? "-" : "", ds, e);
        else
            len = snprintf(text, sizeof text, "%s%.*s.%se%d", (x & 1) ? "-" : "", (int)point, ds, ds + point, e);
        (void)len;
        check_number(text, NULL);
    }
}

static void test_invalid_numbers(void **state)
{
    (void)state;
    const char *bad[] = {"01", "-01", "00", "1.", ".5", "+1", "-", "--1", "1e", "1e+", "1E-", "1.e3", "-a",
                         "0x10", "1.5e", "- 1", "1 2", "1.2.3", "1e2e3", "0.", "-.5", "1,", "Infinity", "1ee2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char doc[64];
        int n = snprintf(doc, sizeof doc, "{\"n\":%s}", bad[i]);
        int rc = walk_len(doc, (size_t)n);
        if (rc != SHAPE_JSON_ESYNTAX) fail_msg("%s: verdict %d, want syntax", bad[i], rc);
        n = snprintf(doc, sizeof doc, "[%s]", bad[i]);
        rc = shape_json_validate(sc, doc, (size_t)n);
        if (rc != SHAPE_JSON_ESYNTAX) fail_msg("[%s]: verdict %d, want syntax", bad[i], rc);
    }
    assert_int_equal(walk("{\"n\":01}"), SHAPE_JSON_ESYNTAX);
    assert_string_equal(shape_json_last_error(sc)->reason, "leading zero in number");
    /* Numbers at the very end of a (non-object) body. */
    assert_int_equal(shape_json_validate(sc, "12", 2), 0);
    assert_int_equal(shape_json_validate(sc, "1.", 2), SHAPE_JSON_ESYNTAX);
    assert_int_equal(shape_json_validate(sc, "1e", 2), SHAPE_JSON_ESYNTAX);
    assert_int_equal(shape_json_validate(sc, "-", 1), SHAPE_JSON_ESYNTAX);
}

static void test_numbers_ignore_process_locale(void **state)
{
    (void)state;
    /* strtod (the slow path) follows LC_NUMERIC; the scanner must not. */
    static const char *const commas[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "nl_NL.UTF-8"};
    const char *got = NULL;
    for (size_t i = 0; i < sizeof commas / sizeof commas[0] && !got; i++) got = setlocale(LC_NUMERIC, commas[i]);
    if (!got) {
        print_message("no decimal-comma locale installed; skipping\n");
        skip();
    }
    shape_json_member m;
    assert_int_equal(first("{\"n\":1.2345678901234567890123e300}", &m), SHAPE_JSON_MEMBER);
    setlocale(LC_NUMERIC, "C");
    assert_true(m.num.d == 1.2345678901234567890123e300);
}

/* -------------------------------------------------------------- nesting */

/* {"a": + depth-1 more levels alternating [ and {"b": ... } */
static size_t nested_doc(char *buf, int depth, int objects)
{
    size_t n = 0;
    n += (size_t)sprintf(buf + n, "{\"a\":");
    for (int d = 2; d <= depth; d++) n += (size_t)sprintf(buf + n, objects ? "{\"b\":" : "[");
    n += (size_t)sprintf(buf + n, "1");
    for (int d = depth; d >= 2; d--) n += (size_t)sprintf(buf + n, objects ? "}" : "]");
    n += (size_t)sprintf(buf + n, "}");
    return n;
}

static void test_depth_limit(void **state)
{
    (void)state;
    char doc[1024];
    shape_json_member m;
    shape_json_buf b = SHAPE_JSON_BUF_INIT;
    for (int objects = 0; objects < 2; objects++) {
        /* 64: the top-level object (1) and 63 more levels. */
        size_t n = nested_doc(doc, 64, objects);
        assert_int_equal(walk_len(doc, n), SHAPE_JSON_DONE);
        assert_int_equal(shape_json_validate(sc, doc, n), 0);
        canon_flags(doc, n, 0);
        assert_int_equal(canon_rc, 0);
        assert_int_equal(first_len(doc, n, &m), SHAPE_JSON_MEMBER);
        assert_int_equal(shape_json_render(sc, &b, 0), 0);
        assert_int_equal(first_len(doc, n, &m), SHAPE_JSON_MEMBER);
        assert_int_equal(shape_json_skip(sc, NULL), 0);
        assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);

        /* 65: undecodable, whichever way the value is consumed. */
        n = nested_doc(doc, 65, objects);
        assert_int_equal(walk_len(doc, n), SHAPE_JSON_EDEPTH);
        const shape_json_error *e = shape_json_last_error(sc);
        assert_string_equal(e->reason, "nesting deeper than 64");
        assert_int_equal(e->offset, objects ? 5 + 63 * 5 : 5 + 63); /* the 65th opening bracket */
        assert_int_equal(doc[e->offset], objects ? '{' : '[');
        assert_int_equal(shape_json_validate(sc, doc, n), SHAPE_JSON_EDEPTH);
        canon_flags(doc, n, 0);
        assert_int_equal(canon_rc, SHAPE_JSON_EDEPTH);
        assert_int_equal(first_len(doc, n, &m), SHAPE_JSON_MEMBER);
        size_t before = b.len;
        assert_int_equal(shape_json_render(sc, &b, 0), SHAPE_JSON_EDEPTH);
        assert_int_equal(b.len, before); /* nothing appended on error */
        assert_int_equal(first_len(doc, n, &m), SHAPE_JSON_MEMBER);
        assert_int_equal(shape_json_skip(sc, NULL), SHAPE_JSON_EDEPTH);
    }
    /* A non-object top level counts from 1 too. */
    char arr[200];
    memset(arr, '[', 64);
    memset(arr + 64, ']', 64);
    assert_int_equal(shape_json_validate(sc, arr, 128), 0);
    assert_int_equal(walk_len(arr, 128), SHAPE_JSON_ENOTOBJECT);
    memset(arr, '[', 65);
    memset(arr + 65, ']', 65);
    assert_int_equal(shape_json_validate(sc, arr, 130), SHAPE_JSON_EDEPTH);
    assert_int_equal(walk_len(arr, 130), SHAPE_JSON_EDEPTH);
    /* Very deep input fails fast without recursing. */
    char *deep = malloc(100000);
    memcpy(deep, "{\"a\":", 5);
    memset(deep + 5, '[', 100000 - 5);
    assert_int_equal(walk_len(deep, 100000), SHAPE_JSON_EDEPTH);
    canon_flags(deep, 100000, 0);
    assert_int_equal(canon_rc, SHAPE_JSON_EDEPTH);
    free(deep);
    shape_json_buf_reset(&b);
}

/* ------------------------------------------------------------ rendering */

static const char *render_member(const char *doc, unsigned flags, int *rc)
{
    static char out[4096];
    shape_json_member m;
    shape_json_buf b = SHAPE_JSON_BUF_INIT;
    assert_int_equal(first(doc, &m), SHAPE_JSON_MEMBER);
    *rc = shape_json_render(sc, &b, flags);
    out[0] = '\0';
    if (*rc == 0) memcpy(out, b.data, b.len + 1);
    shape_json_buf_reset(&b);
    return out;
}

static void test_render_sorted_compact(void **state)
{
    (void)state;
    int rc;
    assert_string_equal(render_member("{\"v\": {\"x\": 1}}", 0, &rc), "{\"x\":1}");
    assert_string_equal(render_member("{\"v\": [1, 2]}", 0, &rc), "[1,2]");
    assert_string_equal(render_member("{\"v\":{\"b\":1,\"a\":{\"d\":[3,{\"z\":0,\"y\":null}],\"c\":true}}}", 0, &rc),
                        "{\"a\":{\"c\":true,\"d\":[3,{\"y\":null,\"z\":0}]},\"b\":1}");
    assert_string_equal(render_member("{\"v\" : [ { \"b\" : [ ] , \"a\" : { } } , \"s p\" ] }", 0, &rc),
                        "[{\"a\":{},\"b\":[]},\"s p\"]");
    /* Byte order of the unescaped key: upper before lower, prefix first,
     * UTF-8 after ASCII, "\n" (0x0A) before "A" although its escaped form
     * starts with a backslash (0x5C). */
    assert_string_equal(render_member("{\"v\":{\"a\":1,\"B\":2,\"aa\":3,\"\\u00e9\":4,\"z\":5,\"\\n\":6,\"\":7}}", 0, &rc),
                        "{\"\":7,\"\\n\":6,\"B\":2,\"a\":1,\"aa\":3,\"z\":5,\"\xc3\xa9\":4}");
    assert_string_equal(render_member("{\"v\":{\"b\":1,\"\\u0061\":2}}", 0, &rc), "{\"a\":2,\"b\":1}");
    /* Duplicates: the last one wins, wherever it sits. */
    assert_string_equal(render_member("{\"v\":{\"a\":1,\"b\":2,\"a\":3}}", 0, &rc), "{\"a\":3,\"b\":2}");
    assert_string_equal(render_member("{\"v\":{\"a\":1,\"\\u0061\":[2]}}", 0, &rc), "{\"a\":[2]}");
    assert_string_equal(render_member("{\"v\":[{\"k\":1,\"k\":2},{\"k\":3}]}", 0, &rc), "[{\"k\":2},{\"k\":3}]");
    /* Numbers exactly as written. */
    assert_string_equal(render_member("{\"v\":[-0.0,1E+3,1e400,12345678901234567890,2.50,0]}", 0, &rc),
                        "[-0.0,1E+3,1e400,12345678901234567890,2.50,0]");
    /* Many members: the qsort path. */
    assert_string_equal(
        render_member("{\"v\":{\"t\":0,\"s\":1,\"r\":2,\"q\":3,\"p\":4,\"o\":5,\"n\":6,\"m\":7,\"l\":8,\"k\":9,"
                      "\"j\":10,\"i\":11,\"h\":12,\"g\":13,\"f\":14,\"e\":15,\"d\":16,\"c\":17,\"b\":18,\"a\":19,\"a\":20}}",
                      0, &rc),
        "{\"a\":20,\"b\":18,\"c\":17,\"d\":16,\"e\":15,\"f\":14,\"g\":13,\"h\":12,\"i\":11,\"j\":10,\"k\":9,"
        "\"l\":8,\"m\":7,\"n\":6,\"o\":5,\"p\":4,\"q\":3,\"r\":2,\"s\":1,\"t\":0}");
}

static void test_render_string_escaping(void **state)
{
    (void)state;
    int rc;
    /* Minimal and consistent: only what must be escaped is, always the same way. */
    assert_string_equal(render_member("{\"v\":[\"\\u0041\\/\\u00e9\\u007f\"]}", 0, &rc), "[\"A/\xc3\xa9\x7f\"]");
    assert_string_equal(render_member("{\"v\":[\"\\u0008\\u000C\\u000a\\u000D\\u0009\\u001F\\u0000\"]}", 0, &rc),
                        "[\"\\b\\f\\n\\r\\t\\u001f\\u0000\"]");
    assert_string_equal(render_member("{\"v\":[\"\\\"q\\\" \\\\ \\ud83d\\ude00\"]}", 0, &rc),
                        "[\"\\\"q\\\" \\\\ \xf0\x9f\x98\x80\"]");
    /* Raw UTF-8 stays raw. */
    assert_string_equal(render_member("{\"v\":{\"\xc3\xa9\":\"\xe2\x82\xac\"}}", 0, &rc), "{\"\xc3\xa9\":\"\xe2\x82\xac\"}");
    /* ASCII mode: Python's json.dumps(ensure_ascii=True) form. */
    assert_string_equal(
        render_member("{\"v\":{\"\xc3\xa9\":[\"\xe2\x82\xac\\u00e9\xf0\x9f\x98\x80\x7f/\\n\"]}}", SHAPE_JSON_RENDER_ASCII, &rc),
        "{\"\\u00e9\":[\"\\u20ac\\u00e9\\ud83d\\ude00\\u007f/\\n\"]}");
}

static void test_render_scalars(void **state)
{
    (void)state;
    shape_json_member m;
    shape_json_buf b = SHAPE_JSON_BUF_INIT;
    const char *doc = "{\"n\":1.50E+2,\"s\":\"a\\u00e9\\/\",\"t\":true,\"z\":null}";
    shape_json_begin(sc, doc, strlen(doc));
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(shape_json_render(sc, &b, 0), 0);
    assert_int_equal(shape_json_render(sc, &b, 0), 0); /* scalars: any number of times */
    assert_string_equal(b.data, "1.50E+21.50E+2");
    b.len = 0;
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(shape_json_render(sc, &b, 0), 0);
    assert_string_equal(b.data, "\"a\xc3\xa9/\"");
    assert_slice(m.str, "a\xc3\xa9/", 4); /* rendering did not disturb the member */
    b.len = 0;
    assert_int_equal(shape_json_render(sc, &b, SHAPE_JSON_RENDER_ASCII), 0);
    assert_string_equal(b.data, "\"a\\u00e9/\"");
    b.len = 0;
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(shape_json_render(sc, &b, 0), 0);
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(shape_json_render(sc, &b, 0), 0);
    assert_string_equal(b.data, "truenull");
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);
    shape_json_buf_reset(&b);
}

static void test_render_appends_and_keeps_key(void **state)
{
    (void)state;
    shape_json_member m;
    shape_json_buf b = SHAPE_JSON_BUF_INIT;
    assert_int_equal(shape_json_buf_reserve(&b, 3), 0);
    memcpy(b.data, "pre", 3);
    b.len = 3;
    const char *doc = "{\"k\\u00e9\":{\"b\\n\":\"x\\ty\",\"a\":1},\"next\":2}";
    shape_json_begin(sc, doc, strlen(doc));
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(m.key_escaped, 1);
    assert_int_equal(shape_json_render(sc, &b, 0), 0);
    assert_string_equal(b.data, "pre{\"a\":1,\"b\\n\":\"x\\ty\"}");
    assert_slice(m.key, "k\xc3\xa9", 3); /* the key's scratch survives the render */
    /* A container renders once. */
    assert_int_equal(shape_json_render(sc, &b, 0), SHAPE_JSON_EUSAGE);
    assert_int_equal(shape_json_skip(sc, NULL), SHAPE_JSON_EUSAGE);
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    assert_slice(m.key, "next", 4);
    assert_int_equal(shape_json_skip(sc, NULL), SHAPE_JSON_EUSAGE); /* not a container */
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);
    assert_int_equal(shape_json_render(sc, &b, 0), SHAPE_JSON_EUSAGE);
    shape_json_buf_reset(&b);
}

static void test_skip_gives_raw_text(void **state)
{
    (void)state;
    shape_json_member m;
    const char *doc = "{\"a\": [1, {\"x\" : 2}] ,\"b\":{}}";
    shape_json_begin(sc, doc, strlen(doc));
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    shape_json_slice raw;
    assert_int_equal(shape_json_skip(sc, &raw), 0);
    assert_slice(raw, "[1, {\"x\" : 2}]", 14);
    assert_int_equal(shape_json_render(sc, NULL, 0), SHAPE_JSON_EUSAGE); /* consumed */
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
    assert_int_equal(m.kind, SHAPE_JSON_OBJECT);
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);
}

static void test_canonical_documents(void **state)
{
    (void)state;
    assert_string_equal(canon(" {\"b\" : [true, false, null], \"a\" : \"\\u0041\"} "),
                        "{\"a\":\"A\",\"b\":[true,false,null]}");
    assert_string_equal(canon("\"x\""), "\"x\"");
    assert_string_equal(canon(" -1.0e-0 "), "-1.0e-0");
    assert_string_equal(canon("[{\"b\":1,\"a\":2}, {\"d\":{\"f\":1,\"e\":2},\"c\":3}]"),
                        "[{\"a\":2,\"b\":1},{\"c\":3,\"d\":{\"e\":2,\"f\":1}}]");
    /* Canonical text is a fixed point. */
    const char *c1 = canon("{\"z\":{\"y\":[\"\\u00e9\\u0001\"],\"x\":1},\"\\u0000\":0}");
    char first_text[256];
    strcpy(first_text, c1);
    assert_string_equal(canon(first_text), first_text);
    /* A failed canonical call leaves the buffer as it was. */
    shape_json_buf b = SHAPE_JSON_BUF_INIT;
    assert_int_equal(shape_json_canonical(sc, "[1]", 3, &b, 0), 0);
    assert_int_equal(shape_json_canonical(sc, "[1,", 3, &b, 0), SHAPE_JSON_ESYNTAX);
    assert_int_equal(b.len, 3);
    assert_string_equal(b.data, "[1]");
    shape_json_buf_reset(&b);
}

static void test_reuse_across_messages(void **state)
{
    (void)state;
    /* One scanner, many bodies of varied sizes: scratch grows and is reused,
     * and a failed body does not poison the next. */
    char doc[4096];
    for (int i = 0; i < 300; i++) {
        int pad = (i * 37) % 3000;
        int n = snprintf(doc, sizeof doc, "{\"k\\n%d\":\"%*s\\t\",\"x\":%d}", i, pad, "", i);
        shape_json_member m;
        shape_json_begin(sc, doc, (size_t)n);
        assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
        assert_int_equal(m.str.len, (size_t)pad + 1);
        assert_int_equal(m.str.ptr[pad], '\t');
        assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
        assert_int_equal(m.num.i, i);
        assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);
        assert_int_equal(walk("{\"a\":\"\\ud800\"}"), SHAPE_JSON_EUTF8);
    }
}

static void test_usage_errors(void **state)
{
    (void)state;
    shape_json_scanner *fresh = shape_json_scanner_new();
    shape_json_member m;
    assert_int_equal(shape_json_next(fresh, &m), SHAPE_JSON_EUSAGE);
    assert_int_equal(shape_json_skip(fresh, NULL), SHAPE_JSON_EUSAGE);
    shape_err err;
    assert_int_equal(shape_json_error_to_err(shape_json_last_error(fresh), &err), SHAPE_EINTERNAL);
    shape_json_scanner_free(fresh);
    shape_json_scanner_free(NULL);
    shape_json_buf_reset(NULL);
}

/* shape_json_overflows counts the numbers beyond the double range scanned,
 * whatever path read them (strtod's, a 400-digit integer), and nothing else. */
static void test_overflow_count(void **state)
{
    (void)state;
    shape_json_scanner *own = shape_json_scanner_new();
    assert_non_null(own);
    assert_int_equal(shape_json_overflows(own), 0);
    char big[420] = "{\"b\":";
    for (int i = 0; i < 400; i++) strcat(big, "9");
    strcat(big, "}");
    const char *docs[] = {"{\"a\":1e400,\"b\":2.5,\"c\":1e308,\"d\":-1e400}", "{\"a\":1.5e-400,\"b\":123456789012345678901234}", big};
    uint64_t want[] = {2, 2, 3};
    for (int d = 0; d < 3; d++) {
        shape_json_begin(own, docs[d], strlen(docs[d]));
        shape_json_member m;
        while (shape_json_next(own, &m) == SHAPE_JSON_MEMBER) {
        }
        assert_int_equal(shape_json_overflows(own), want[d]);
    }
    shape_json_scanner_free(own);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_members_in_order),
        cmocka_unit_test(test_overflow_count),
        cmocka_unit_test(test_value_offsets_and_string_slices),
        cmocka_unit_test(test_empty_object),
        cmocka_unit_test(test_duplicate_keys_yielded_in_order),
        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_empty_and_whitespace_bodies),
        cmocka_unit_test(test_whitespace_is_rfc_only),
        cmocka_unit_test(test_trailing_garbage),
        cmocka_unit_test(test_trailing_commas_and_bad_structure),
        cmocka_unit_test(test_errors_surface_after_members),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_not_nul_terminated),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_invalid_escapes),
        cmocka_unit_test(test_lone_surrogates_refused),
        cmocka_unit_test(test_control_characters),
        cmocka_unit_test(test_utf8_validation),
        cmocka_unit_test(test_error_format),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_numbers_match_strtod),
        cmocka_unit_test(test_invalid_numbers),
        cmocka_unit_test(test_numbers_ignore_process_locale),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_render_sorted_compact),
        cmocka_unit_test(test_render_string_escaping),
        cmocka_unit_test(test_render_scalars),
        cmocka_unit_test(test_render_appends_and_keeps_key),
        cmocka_unit_test(test_skip_gives_raw_text),
        cmocka_unit_test(test_canonical_documents),
        cmocka_unit_test(test_reuse_across_messages),
        cmocka_unit_test(test_usage_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* fuzz_json.c — libFuzzer target for the message-body JSON scanner
 * (shape/json.h).
 *
 * Why: every message body read from a stream goes through this parser; no
 * byte sequence may crash it, read outside the body, leak, or make it
 * disagree with itself or with the RFC.
 * How: each input is one body (not NUL-terminated: the bytes are copied into
 * an exactly-sized heap block so ASan sees any over-read). It is walked
 * member by member; nested values are, depending on the input's hash and the
 * member's position, rendered (plain or ASCII), skipped, or left for next()
 * to skip; scalars are sometimes rendered too. Then the whole document is
 * validated and rendered canonically. Invariants abort on violation:
 *   - numbers: d is strtod's value bit for bit; INT's i is strtoll's; the
 *     class, NEGATIVE, INTEGRAL, FITS_INT64 and OVERFLOW flags match the text;
 *   - strings and keys are valid UTF-8; an unescaped one is a slice of the body;
 *   - every rendering is valid JSON and its own canonical form;
 *   - validate, walk and canonical agree on the verdict and the error offset;
 *   - jansson agrees on validity, except the deliberate differences listed in
 *     tests/unit/test_json_diff.c (depth > 64, numbers beyond double range,
 *     \u0000 in keys, NUL straight after a number or literal); when both
 *     accept, our canonical text parses to a value json_equal to jansson's.
 *
 * Build and run by hand (the CMake wiring lives in tests/fuzz/CMakeLists.txt):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *     -Iinclude -Ibuild/include tests/fuzz/fuzz_json.c src/core/json_*.c src/core/error.c \
 *     -ljansson -o /tmp/fuzz_json
 *   /tmp/fuzz_json -max_total_time=300 /tmp/fuzz_json_corpus tests/data/json
 */
#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/json.h"

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "fuzz_json: check failed at line %d: %s\n", __LINE__, #cond); \
            abort();                                                                \
        }                                                                           \
    } while (0)

static shape_json_scanner *sc;
static shape_json_buf out, again;

/* An independent UTF-8 validator (RFC 3629), written differently from the
 * scanner's: decode, then reject overlong, surrogate and out-of-range. */
static int utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
        if (!len || i + len > n || c > 0xF4) return 0;
        unsigned long cp = c & (0xFFu >> (len + 1));
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        static const unsigned long min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += len;
    }
    return 1;
}

static void check_number(const shape_json_number *num)
{
    char text[512];
    char *big = NULL, *t = text;
    if (num->text.len >= sizeof text) t = big = malloc(num->text.len + 1);
    memcpy(t, num->text.ptr, num->text.len);
    t[num->text.len] = '\0';
    double d = strtod(t, NULL);
    CHECK(memcmp(&d, &num->d, sizeof d) == 0);
    CHECK(((num->flags & SHAPE_JSON_NUM_NEGATIVE) != 0) == (t[0] == '-'));
    const int has_frac_or_exp = strpbrk(t, ".eE") != NULL;
    const int finite = d <= DBL_MAX && d >= -DBL_MAX;
    CHECK(((num->flags & SHAPE_JSON_NUM_OVERFLOW) != 0) == !finite);
    if (num->cls == SHAPE_JSON_INT) {
        CHECK(!has_frac_or_exp);
        errno = 0;
        long long v = strtoll(t, NULL, 10);
        CHECK(errno == 0 && v == num->i);
        CHECK(num->flags & SHAPE_JSON_NUM_FITS_INT64);
    } else if (num->cls == SHAPE_JSON_BIGINT) {
        CHECK(!has_frac_or_exp);
        errno = 0;
        (void)strtoll(t, NULL, 10);
        CHECK(errno == ERANGE);
        CHECK(!(num->flags & SHAPE_JSON_NUM_FITS_INT64));
    } else {
        CHECK(num->cls == SHAPE_JSON_REAL && has_frac_or_exp);
    }
    /* INTEGRAL: d finite with no fraction; FITS: i is d exactly. */
    int integral = 0;
    if (finite) {
        if (d >= 0x1p53 || d <= -0x1p53) integral = 1;
        else integral = (double)(int64_t)d == d;
    }
    CHECK(((num->flags & SHAPE_JSON_NUM_INTEGRAL) != 0) == integral);
    if (num->flags & SHAPE_JSON_NUM_FITS_INT64) CHECK((double)num->i == d);
    else CHECK(num->i == 0);
    if (num->cls == SHAPE_JSON_REAL)
        CHECK(((num->flags & SHAPE_JSON_NUM_FITS_INT64) != 0) == (integral && d >= -0x1p63 && d < 0x1p63));
    free(big);
}

/* A rendering is valid JSON and its own canonical form. */
static void check_canonical_text(const char *p, size_t n, unsigned flags)
{
    again.len = 0;
    CHECK(shape_json_canonical(sc, p, n, &again, flags) == 0);
    CHECK(again.len == n && memcmp(again.data, p, n) == 0);
    if (flags & SHAPE_JSON_RENDER_ASCII)
        for (size_t i = 0; i < n; i++) CHECK((unsigned char)p[i] < 0x7F);
}

static int walk(const char *doc, size_t len, uint32_t h)
{
    shape_json_member m;
    int rc;
    unsigned idx = 0;
    shape_json_begin(sc, doc, len);
    while ((rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
        idx++;
        CHECK(utf8_ok((const unsigned char *)m.key.ptr, m.key.len));
        if (!m.key_escaped) CHECK(m.key.ptr > doc && m.key.ptr + m.key.len < doc + len);
        CHECK(m.offset < len);
        unsigned choice = (h >> (idx % 29)) % 5;
        switch (m.kind) {
        case SHAPE_JSON_NUMBER:
            CHECK(m.num.text.ptr == doc + m.offset);
            check_number(&m.num);
            break;
        case SHAPE_JSON_STRING:
            CHECK(doc[m.offset] == '"');
            CHECK(utf8_ok((const unsigned char *)m.str.ptr, m.str.len));
            if (!m.str_escaped) CHECK(m.str.ptr == doc + m.offset + 1);
            break;
        case SHAPE_JSON_OBJECT:
        case SHAPE_JSON_ARRAY: {
            CHECK(doc[m.offset] == (m.kind == SHAPE_JSON_OBJECT ? '{' : '['));
            if (choice == 0 || choice == 1) {
                unsigned flags = choice ? SHAPE_JSON_RENDER_ASCII : 0;
                out.len = 0;
                int r = shape_json_render(sc, &out, flags);
                if (r != 0) {
                    CHECK(out.len == 0);
                    CHECK(shape_json_next(sc, &m) == r); /* the walk stops with it */
                    return r;
                }
                check_canonical_text(out.data, out.len, flags);
                /* check_canonical_text used the scanner: the walk is gone.
                 * Restart it and skip to the member after this one. */
                shape_json_begin(sc, doc, len);
                for (unsigned k = 0; k < idx; k++) CHECK(shape_json_next(sc, &m) == SHAPE_JSON_MEMBER);
                CHECK(shape_json_skip(sc, NULL) == 0);
            } else if (choice == 2) {
                shape_json_slice raw;
                int r = shape_json_skip(sc, &raw);
                if (r != 0) {
                    CHECK(shape_json_next(sc, &m) == r);
                    return r;
                }
                CHECK(raw.ptr == doc + m.offset);
                CHECK(shape_json_skip(sc, NULL) == SHAPE_JSON_EUSAGE);
            }
            /* else: leave it to next() */
            break;
        }
        default: break;
        }
        if (m.kind != SHAPE_JSON_OBJECT && m.kind != SHAPE_JSON_ARRAY && choice == 3) {
            out.len = 0;
            CHECK(shape_json_render(sc, &out, 0) == 0);
            CHECK(shape_json_render(sc, &out, SHAPE_JSON_RENDER_ASCII) == 0);
        }
    }
    return rc;
}

/* Is the error at `at` one of the deliberate differences with jansson? */
static int nul_after_token(const char *doc, size_t at)
{
    if (doc[at] != '\0' || at == 0) return 0;
    char c = doc[at - 1];
    return (c >= '0' && c <= '9') || c == 'e' || c == 'l';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sc) sc = shape_json_scanner_new();
    CHECK(sc != NULL);
    char *doc = malloc(size ? size : 1);
    if (size) memcpy(doc, data, size);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;

    int w = walk(doc, size, h);
    CHECK(w <= 0 && w != SHAPE_JSON_ENOMEM && w != SHAPE_JSON_EUSAGE);
    shape_json_error we = *shape_json_last_error(sc);
    int v = shape_json_validate(sc, doc, size);
    shape_json_error ve = *shape_json_last_error(sc);
    out.len = 0;
    int c = shape_json_canonical(sc, doc, size, &out, h & 1 ? SHAPE_JSON_RENDER_ASCII : 0);
    shape_json_error ce = *shape_json_last_error(sc);
    CHECK(v == c);
    if (v == 0) {
        CHECK(w == SHAPE_JSON_DONE || w == SHAPE_JSON_ENOTOBJECT);
        check_canonical_text(out.data, out.len, h & 1 ? SHAPE_JSON_RENDER_ASCII : 0);
    } else {
        CHECK(out.len == 0);
        CHECK(w == v && we.offset == ve.offset && ve.offset == ce.offset && ve.offset <= size);
        CHECK(ve.reason != NULL);
    }

    /* jansson as an oracle for validity, and for values when both accept. */
    json_error_t e;
    const size_t jflags = JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL;
    json_t *j = json_loadb(doc, size, jflags, &e);
    if (j && v == 0) {
        out.len = 0;
        CHECK(shape_json_canonical(sc, doc, size, &out, 0) == 0);
        json_t *mine = json_loadb(out.data, out.len, jflags | JSON_REJECT_DUPLICATES, &e);
        CHECK(mine != NULL);
        CHECK(json_equal(mine, j));
        json_decref(mine);
    } else if (j) {
        CHECK(v == SHAPE_JSON_EDEPTH || nul_after_token(doc, ve.offset));
    } else if (v == 0) {
        CHECK(json_error_code(&e) == json_error_numeric_overflow ||
              json_error_code(&e) == json_error_null_byte_in_key);
    }
    if (j) json_decref(j);
    free(doc);
    return 0;
}

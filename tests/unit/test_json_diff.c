/* test_json_diff.c — differential test: the message-body scanner
 * (shape/json.h) against jansson, on the corpus in tests/data/json/ plus
 * thousands of generated and mutated documents (fixed-seed PRNG, so every run
 * sees the same documents).
 *
 * For every document:
 *   - our own three entry points agree with each other: shape_json_validate,
 *     the member walk (shape_json_next) and shape_json_canonical give the same
 *     verdict and the same error offset, and the walk says "not an object"
 *     exactly when a valid document's top-level value is not an object;
 *   - the verdict valid/invalid agrees with jansson's json_loadb under
 *     JSON_DECODE_ANY (any top-level value: validity, not objecthood, is
 *     compared) and JSON_ALLOW_NUL (\u0000 in strings is RFC-valid). When
 *     jansson refuses an integer beyond its json_int_t ("too big integer"),
 *     the document is parsed again with JSON_DECODE_INT_AS_REAL, so that its
 *     validity is still compared (we accept such integers as BIGINT);
 *   - for valid documents, values agree: the whole canonical rendering (plain
 *     and ASCII) parsed by jansson is json_equal to jansson's own parse, and
 *     canonical text is a fixed point with every object's keys strictly
 *     ascending and no duplicates left (jansson re-parses it with
 *     JSON_REJECT_DUPLICATES); when the top level is an object, every
 *     member the walk yields (the last one of duplicate keys, which is the one
 *     jansson keeps) has the same kind and value: integers exactly, doubles
 *     bit for bit (strtod's correct rounding), strings byte for byte, nested
 *     values through json_equal of jansson's parse of our rendering.
 *
 * Deliberate disagreements (each is counted, and must actually occur):
 *   DEPTH     nesting deeper than 64: we refuse (the limit of issue 3, so a
 *             body cannot make the decoder work unboundedly); jansson allows
 *             2048.
 *   RANGE     a number beyond the double range (1e400, a 400-digit integer):
 *             we accept it — RFC 8259 §6 makes it valid grammar, and the
 *             original Python tool reads it as infinity — and flag it
 *             SHAPE_JSON_NUM_OVERFLOW; jansson refuses ("real number overflow").
 *   NULKEY    \u0000 inside an object key: RFC-valid, we accept it (keys are
 *             slices with a length); jansson refuses ("NUL byte in object key
 *             not supported").
 *   NULTOKEN  a NUL byte straight after a number or literal ("[1\0]",
 *             "{\"a\":true\0}"): RFC 8259 allows no NUL outside strings and we
 *             refuse it; jansson 2.14 silently drops it (a lexer quirk, known
 *             upstream: akheron/jansson#331, JSONTestSuite
 *             n_multidigit_number_then_00). The document is checked again
 *             with that byte turned into a space, which both must then judge
 *             alike.
 * For DEPTH, RANGE and NULKEY the document must be one we accept, or one whose
 * first error (by our account) lies at or after the point where jansson
 * stopped for the disagreement — so both still agree on everything before it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>

#include "shape/json.h"

static shape_json_scanner *sc;

enum { CAT_AGREE_VALID, CAT_AGREE_INVALID, CAT_DEPTH, CAT_RANGE, CAT_NULKEY, CAT_NULTOKEN, CAT_N };
static const char *const cat_name[CAT_N] = {"both valid", "both invalid", "DEPTH", "RANGE", "NULKEY", "NULTOKEN"};

static struct {
    size_t docs, cat[CAT_N], bigint_retries, not_object, members, nested, numbers, strings;
} stats;

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
    return 0;
}

/* ------------------------------------------------------------ reporting */

static const char *printable(const char *doc, size_t len)
{
    static char out[2048];
    size_t w = 0;
    for (size_t i = 0; i < len && w + 8 < sizeof out; i++) {
        unsigned char c = (unsigned char)doc[i];
        if (c >= 0x20 && c < 0x7F && c != '\\') out[w++] = (char)c;
        else w += (size_t)snprintf(out + w, sizeof out - w, "\\x%02x", c);
    }
    if (w + 8 >= sizeof out) w += (size_t)snprintf(out + w, sizeof out - w, "...");
    out[w] = '\0';
    return out;
}

#define DIFF_FAIL(doc, len, ...)                                          \
    do {                                                                  \
        print_error("document: %s\n", printable((doc), (len)));          \
        fail_msg(__VA_ARGS__);                                            \
    } while (0)

/* ------------------------------------------------------ value comparison */

/* Keys of every object strictly ascending by bytes (so sorted, and no
 * duplicates left). jansson 2.14 iterates an object in insertion order, that
 * is in the order of the text it parsed. Keys here hold no NUL (jansson
 * refuses those), and strcmp compares as unsigned char: byte order. */
static int keys_sorted(json_t *v)
{
    if (json_is_object(v)) {
        const char *k, *prev = NULL;
        json_t *x;
        json_object_foreach(v, k, x) {
            if (prev && strcmp(prev, k) >= 0) return 0;
            if (!keys_sorted(x)) return 0;
            prev = k;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) if (!keys_sorted(x)) return 0;
    }
    return 1;
}

static int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void compare_member(const char *doc, size_t len, const shape_json_member *m, json_t *jv,
                           size_t jflags, shape_json_buf *buf)
{
    const int real_mode = (jflags & JSON_DECODE_INT_AS_REAL) != 0;
    switch (m->kind) {
    case SHAPE_JSON_NULL:
        if (!json_is_null(jv)) DIFF_FAIL(doc, len, "member %.*s: null vs jansson type %d", (int)m->key.len, m->key.ptr, json_typeof(jv));
        break;
    case SHAPE_JSON_TRUE:
        if (!json_is_true(jv)) DIFF_FAIL(doc, len, "member %.*s: true vs jansson", (int)m->key.len, m->key.ptr);
        break;
    case SHAPE_JSON_FALSE:
        if (!json_is_false(jv)) DIFF_FAIL(doc, len, "member %.*s: false vs jansson", (int)m->key.len, m->key.ptr);
        break;
    case SHAPE_JSON_NUMBER:
        stats.numbers++;
        if (real_mode) {
            if (!json_is_real(jv) || !same_double(json_real_value(jv), m->num.d))
                DIFF_FAIL(doc, len, "member %.*s: number %.*s d=%.17g vs jansson real %.17g", (int)m->key.len,
                          m->key.ptr, (int)m->num.text.len, m->num.text.ptr, m->num.d,
                          json_is_real(jv) ? json_real_value(jv) : 0.0);
        } else if (m->num.cls == SHAPE_JSON_INT) {
            if (!json_is_integer(jv) || json_integer_value(jv) != m->num.i)
                DIFF_FAIL(doc, len, "member %.*s: integer %lld vs jansson", (int)m->key.len, m->key.ptr,
                          (long long)m->num.i);
        } else if (m->num.cls == SHAPE_JSON_REAL) {
            if (!json_is_real(jv) || !same_double(json_real_value(jv), m->num.d))
                DIFF_FAIL(doc, len, "member %.*s: real %.*s d=%.17g vs jansson %.17g", (int)m->key.len,
                          m->key.ptr, (int)m->num.text.len, m->num.text.ptr, m->num.d,
                          json_is_real(jv) ? json_real_value(jv) : 0.0);
        } else {
            DIFF_FAIL(doc, len, "member %.*s: BIGINT %.*s but jansson read it as an integer", (int)m->key.len,
                      m->key.ptr, (int)m->num.text.len, m->num.text.ptr);
        }
        break;
    case SHAPE_JSON_STRING:
        stats.strings++;
        if (!json_is_string(jv) || json_string_length(jv) != m->str.len ||
            memcmp(json_string_value(jv), m->str.ptr, m->str.len) != 0)
            DIFF_FAIL(doc, len, "member %.*s: string differs from jansson's", (int)m->key.len, m->key.ptr);
        break;
    case SHAPE_JSON_OBJECT:
    case SHAPE_JSON_ARRAY: {
        stats.nested++;
        buf->len = 0;
        int rc = shape_json_render(sc, buf, 0);
        if (rc != 0) DIFF_FAIL(doc, len, "member %.*s: render failed (%d)", (int)m->key.len, m->key.ptr, rc);
        json_error_t e;
        json_t *mine = json_loadb(buf->data, buf->len, jflags | JSON_REJECT_DUPLICATES, &e);
        if (!mine) DIFF_FAIL(doc, len, "jansson refuses our rendering %s: %s", buf->data, e.text);
        if ((m->kind == SHAPE_JSON_OBJECT) != json_is_object(jv) || !json_equal(mine, jv))
            DIFF_FAIL(doc, len, "member %.*s: rendering %s is not equal to jansson's value", (int)m->key.len,
                      m->key.ptr, buf->data);
        if (!keys_sorted(mine)) DIFF_FAIL(doc, len, "rendering %s: keys not strictly ascending", buf->data);
        json_decref(mine);
        break;
    }
    default: DIFF_FAIL(doc, len, "unknown kind %d", m->kind);
    }
}

typedef struct key_copy {
    char *p;
    size_t len;
} key_copy;

/* Walk the (valid, object) document twice: first to learn which member is
 * the last of its key, then to compare those with jansson's object. */
static void compare_members(const char *doc, size_t len, json_t *jdoc, size_t jflags)
{
    key_copy *keys = NULL;
    size_t n = 0, cap = 0;
    shape_json_member m;
    int rc;
    shape_json_begin(sc, doc, len);
    while ((rc = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            keys = realloc(keys, cap * sizeof *keys);
        }
        keys[n].p = malloc(m.key.len + 1);
        memcpy(keys[n].p, m.key.ptr, m.key.len);
        keys[n].len = m.key.len;
        n++;
    }
    assert_int_equal(rc, SHAPE_JSON_DONE);
    size_t distinct = 0;
    shape_json_buf buf = SHAPE_JSON_BUF_INIT;
    shape_json_begin(sc, doc, len);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_MEMBER);
        int last = 1;
        for (size_t j = i + 1; j < n && last; j++)
            if (keys[j].len == keys[i].len && memcmp(keys[j].p, keys[i].p, keys[i].len) == 0) last = 0;
        if (!last) continue;
        distinct++;
        stats.members++;
        json_t *jv = json_object_getn(jdoc, m.key.ptr, m.key.len);
        if (!jv) DIFF_FAIL(doc, len, "member %.*s: jansson has no such key", (int)m.key.len, m.key.ptr);
        compare_member(doc, len, &m, jv, jflags, &buf);
    }
    assert_int_equal(shape_json_next(sc, &m), SHAPE_JSON_DONE);
    if (distinct != json_object_size(jdoc))
        DIFF_FAIL(doc, len, "%zu distinct keys, jansson has %zu", distinct, json_object_size(jdoc));
    for (size_t i = 0; i < n; i++) free(keys[i].p);
    free(keys);
    shape_json_buf_reset(&buf);
}

/* Canonical renderings (plain and ASCII) parse back to jansson's value, with
 * keys sorted, and canonical text is its own canonical form. */
static void compare_canonical(const char *doc, size_t len, json_t *jdoc, size_t jflags)
{
    static const unsigned modes[2] = {0, SHAPE_JSON_RENDER_ASCII};
    for (int k = 0; k < 2; k++) {
        shape_json_buf b = SHAPE_JSON_BUF_INIT, b2 = SHAPE_JSON_BUF_INIT;
        if (shape_json_canonical(sc, doc, len, &b, modes[k]) != 0) DIFF_FAIL(doc, len, "canonical failed");
        json_error_t e;
        json_t *mine = json_loadb(b.data, b.len, jflags | JSON_REJECT_DUPLICATES, &e);
        if (!mine) DIFF_FAIL(doc, len, "jansson refuses our canonical text %s: %s", b.data, e.text);
        if (!json_equal(mine, jdoc)) DIFF_FAIL(doc, len, "canonical text %s differs from jansson's value", b.data);
        if (!keys_sorted(mine)) DIFF_FAIL(doc, len, "canonical text %s: keys not strictly ascending", b.data);
        json_decref(mine);
        if (modes[k]) /* ASCII mode writes nothing but ASCII */
            for (size_t i = 0; i < b.len; i++)
                if ((unsigned char)b.data[i] >= 0x7F) DIFF_FAIL(doc, len, "non-ASCII in ASCII rendering");
        if (shape_json_canonical(sc, b.data, b.len, &b2, modes[k]) != 0 || b2.len != b.len ||
            memcmp(b.data, b2.data, b.len) != 0)
            DIFF_FAIL(doc, len, "canonical text is not a fixed point: %s", b.data);
        shape_json_buf_reset(&b);
        shape_json_buf_reset(&b2);
    }
}

/* ------------------------------------------------------------ the check */

/* Returns the category; fails the test on any unexplained difference.
 * `expect`: 'y', 'n' or 'i' for corpus files (checked), 0 otherwise. */
static int check_document(const char *doc, size_t len, int expect)
{
    stats.docs++;
    /* Our three entry points agree. */
    int v = shape_json_validate(sc, doc, len);
    shape_json_error ve = *shape_json_last_error(sc);
    shape_json_begin(sc, doc, len);
    shape_json_member m;
    int w;
    while ((w = shape_json_next(sc, &m)) == SHAPE_JSON_MEMBER) {
    }
    shape_json_error we = *shape_json_last_error(sc);
    shape_json_buf cb = SHAPE_JSON_BUF_INIT;
    int c = shape_json_canonical(sc, doc, len, &cb, 0);
    shape_json_error ce = *shape_json_last_error(sc);
    shape_json_buf_reset(&cb);
    size_t lead = 0;
    while (lead < len && (doc[lead] == ' ' || doc[lead] == '\t' || doc[lead] == '\n' || doc[lead] == '\r')) lead++;
    const int is_object = lead < len && doc[lead] == '{';
    if (v != c) DIFF_FAIL(doc, len, "validate %d vs canonical %d", v, c);
    if (v == 0) {
        if (w != (is_object ? SHAPE_JSON_DONE : SHAPE_JSON_ENOTOBJECT))
            DIFF_FAIL(doc, len, "valid document, walk verdict %d", w);
    } else {
        if (w != v) DIFF_FAIL(doc, len, "validate %d vs walk %d", v, w);
        if (ve.offset != we.offset || ve.offset != ce.offset)
            DIFF_FAIL(doc, len, "error offsets differ: validate %zu, walk %zu, canonical %zu", ve.offset, we.offset,
                      ce.offset);
        if (v == SHAPE_JSON_ENOMEM || v == SHAPE_JSON_EUSAGE || v == SHAPE_JSON_ENOTOBJECT)
            DIFF_FAIL(doc, len, "unexpected verdict %d", v);
    }
    if (v == 0 && !is_object) stats.not_object++;

    /* jansson. */
    size_t jflags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
    json_error_t e;
    json_t *j = json_loadb(doc, len, jflags, &e);
    if (!j && json_error_code(&e) == json_error_numeric_overflow) {
        /* Maybe an integer beyond json_int_t: ask again with integers as reals. */
        jflags |= JSON_DECODE_INT_AS_REAL;
        stats.bigint_retries++;
        j = json_loadb(doc, len, jflags, &e);
    }
    int cat = CAT_AGREE_INVALID; /* set on every path below that does not fail */
    if (v == SHAPE_JSON_EDEPTH) {
        cat = CAT_DEPTH;
        /* jansson goes deeper: it accepts, or stops at or after our limit. */
        if (!j && (size_t)e.position < ve.offset)
            DIFF_FAIL(doc, len, "DEPTH at %zu, but jansson stopped earlier at %d: %s", ve.offset, e.position, e.text);
    } else if (!j && (json_error_code(&e) == json_error_numeric_overflow ||
                      json_error_code(&e) == json_error_null_byte_in_key)) {
        cat = json_error_code(&e) == json_error_numeric_overflow ? CAT_RANGE : CAT_NULKEY;
        if (v != 0) {
            /* jansson accepted everything before the offending token, which
             * ends at or just before e.position: our first error must not
             * come before that token starts. */
            size_t tok_start = (size_t)e.position < len ? (size_t)e.position : len;
            while (tok_start > 0 && doc[tok_start - 1] != ':' && doc[tok_start - 1] != '[' &&
                   doc[tok_start - 1] != ',' && doc[tok_start - 1] != '{')
                tok_start--;
            if (ve.offset < tok_start)
                DIFF_FAIL(doc, len, "%s: our error at %zu comes before jansson's stop at %d (%s)", cat_name[cat],
                          ve.offset, e.position, e.text);
        }
    } else if (v != 0 && j && doc[ve.offset] == '\0' && ve.offset > 0 &&
               ((doc[ve.offset - 1] >= '0' && doc[ve.offset - 1] <= '9') || doc[ve.offset - 1] == 'e' ||
                doc[ve.offset - 1] == 'l')) {
        cat = CAT_NULTOKEN;
        char *copy = malloc(len);
        memcpy(copy, doc, len);
        copy[ve.offset] = ' ';
        json_decref(j);
        j = NULL;
        stats.cat[cat]++;
        check_document(copy, len, 0);
        free(copy);
        if (expect == 'y' || expect == 'n') DIFF_FAIL(doc, len, "NULTOKEN disagreement in a corpus file not marked i_");
        return cat;
    } else if ((v == 0) != (j != NULL)) {
        char why[128];
        shape_json_error_format(&ve, why, sizeof why);
        DIFF_FAIL(doc, len, "verdicts differ: ours %s (%s), jansson %s (%s)", v == 0 ? "valid" : "invalid",
                  v == 0 ? "-" : why, j ? "valid" : "invalid", j ? "-" : e.text);
    } else {
        cat = v == 0 ? CAT_AGREE_VALID : CAT_AGREE_INVALID;
    }
    stats.cat[cat]++;

    if (cat == CAT_AGREE_VALID) {
        compare_canonical(doc, len, j, jflags);
        if (is_object) compare_members(doc, len, j, jflags);
    }
    if (j) json_decref(j);

    if (expect == 'y' && v != 0) DIFF_FAIL(doc, len, "corpus file says valid, verdict %d", v);
    if (expect == 'n' && (v == 0 || cat != CAT_AGREE_INVALID)) DIFF_FAIL(doc, len, "corpus file says invalid");
    if (expect == 'i' && (cat == CAT_AGREE_VALID || cat == CAT_AGREE_INVALID))
        DIFF_FAIL(doc, len, "corpus file says deliberate disagreement, but both agree");
    return cat;
}

/* --------------------------------------------------------------- corpus */

typedef struct doc_list {
    char **data;
    size_t *len;
    size_t n, cap;
} doc_list;

static void list_add(doc_list *l, const char *d, size_t n)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->data = realloc(l->data, l->cap * sizeof *l->data);
        l->len = realloc(l->len, l->cap * sizeof *l->len);
    }
    l->data[l->n] = malloc(n ? n : 1);
    memcpy(l->data[l->n], d, n);
    l->len[l->n] = n;
    l->n++;
}

static void list_free(doc_list *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->data[i]);
    free(l->data);
    free(l->len);
}

static doc_list valid_pool; /* valid documents, seeds for mutation */

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void corpus_dir(char *out, size_t size)
{
    const char *src = getenv("SHAPE_SOURCE_DIR");
    if (src && *src) {
        snprintf(out, size, "%s/tests/data/json", src);
        return;
    }
    /* Run by hand: find it next to this source file. */
    snprintf(out, size, "%s", __FILE__);
    char *slash = strrchr(out, '/');
    if (slash) snprintf(slash, size - (size_t)(slash - out), "/../data/json");
}

static void test_corpus(void **state)
{
    (void)state;
    char dir[4096];
    corpus_dir(dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open the corpus %s (set SHAPE_SOURCE_DIR)", dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        size_t l = strlen(ent->d_name);
        if (l < 7 || strcmp(ent->d_name + l - 5, ".json") != 0 || ent->d_name[1] != '_') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            names = realloc(names, cap * sizeof *names);
        }
        names[n++] = strdup(ent->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    size_t per[3] = {0};
    for (size_t i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        char *buf = malloc(1 << 16);
        size_t len = fread(buf, 1, 1 << 16, f);
        fclose(f);
        int kind = names[i][0];
        if (kind != 'y' && kind != 'n' && kind != 'i') fail_msg("%s: name must start with y_, n_ or i_", names[i]);
        per[kind == 'y' ? 0 : kind == 'n' ? 1 : 2]++;
        check_document(buf, len, kind);
        if (kind == 'y') list_add(&valid_pool, buf, len);
        free(buf);
        free(names[i]);
    }
    free(names);
    print_message("corpus: %zu valid, %zu invalid, %zu deliberate disagreements\n", per[0], per[1], per[2]);
    assert_true(per[0] >= 50 && per[1] >= 50 && per[2] >= 5);
}

/* ----------------------------------------------------- generated documents */

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

static unsigned rndn(unsigned n) { return (unsigned)(rnd() % n); }

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        while (t->len + n + 1 > t->cap) t->cap = t->cap ? 2 * t->cap : 256;
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void putf(text *t, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(t, tmp, (size_t)n);
}

static void gen_ws(text *t)
{
    static const char ws[] = " \t\n\r";
    if (rndn(5) == 0)
        for (unsigned k = 1 + rndn(2); k > 0; k--) put(t, &ws[rndn(4)], 1);
}

static void put_utf8(text *t, unsigned long cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    put(t, b, n);
}

static unsigned long random_scalar(void)
{
    switch (rndn(4)) {
    case 0: return 0x80 + rndn(0x800 - 0x80);
    case 1: {
        unsigned long cp = 0x800 + rndn(0x10000 - 0x800);
        return (cp >= 0xD800 && cp <= 0xDFFF) ? cp + 0x800 : cp;
    }
    case 2: return 0x10000 + rndn(0x110000 - 0x10000);
    default: return 0x20 + rndn(0x5F);
    }
}

static void gen_string_body(text *t, int nul_odds)
{
    static const char *const short_esc[] = {"\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"};
    unsigned n = rndn(4) == 0 ? rndn(40) : rndn(8);
    for (unsigned i = 0; i < n; i++) {
        switch (rndn(10)) {
        case 0: puts_(t, short_esc[rndn(8)]); break;
        case 1: { /* \u escape of a BMP scalar, either case */
            unsigned long cp = rndn(3) == 0 ? rndn(0x20) : random_scalar();
            if (cp >= 0x10000) cp = 0x41;
            putf(t, rndn(2) ? "\\u%04lx" : "\\u%04lX", cp);
            break;
        }
        case 2: { /* surrogate pair */
            unsigned long off = rndn(0x100000); /* code point - 0x10000 */
            putf(t, "\\u%04lx\\u%04lx", 0xD800 + (off >> 10), 0xDC00 + (off & 0x3FF));
            break;
        }
        case 3: put_utf8(t, random_scalar()); break;
        case 4:
            if (rndn((unsigned)nul_odds) == 0) {
                puts_(t, "\\u0000");
                break;
            }
            /* fall through */
        default: {
            char c = (char)('a' + rndn(26));
            if (rndn(8) == 0) c = (char)" 09_-/~\x7f"[rndn(8)];
            put(t, &c, 1);
        }
        }
    }
}

static void gen_number(text *t)
{
    if (rndn(2)) putf(t, "-");
    switch (rndn(12)) {
    case 0: putf(t, "0"); break;
    case 1: putf(t, "%u", rndn(1000)); break;
    case 2: putf(t, "%llu", (unsigned long long)(rnd() >> (rndn(64)))); break; /* up to 20 digits */
    case 3: putf(t, "%s", rndn(2) ? "9223372036854775807" : "9223372036854775808"); break;
    case 4: putf(t, "%u.%0*u", rndn(100000), 1 + (int)rndn(6), rndn(1000000)); break;
    case 5: putf(t, "%u%s%d", 1 + rndn(999), rndn(2) ? "e" : "E", (int)rndn(60) - 30); break;
    case 6: putf(t, "%u.%u%s%s%u", rndn(10), rndn(100000), rndn(2) ? "e" : "E", rndn(2) ? "+" : "-", rndn(320)); break;
    case 7: putf(t, "0.%0*u%u", (int)rndn(12), 0u, 1 + rndn(999999)); break;
    case 8: /* long mantissas, both sides of 19 digits */
        putf(t, "%llu%llu.%llu", (unsigned long long)(rnd() % 1000000000), (unsigned long long)(rnd() % 1000000000000ull),
             (unsigned long long)(rnd() % 100000000000000ull));
        break;
    case 9: putf(t, "%u.0", rndn(1000)); break;
    case 10: putf(t, "1e%u", 300 + rndn(20)); break; /* sometimes beyond DBL_MAX: RANGE */
    default: putf(t, "%u.%u", rndn(1000), rndn(100)); break;
    }
}

static void gen_key(text *t)
{
    static const char *const pool[] = {"a", "b", "c", "id", "\\u0061", "\xc3\xa9", "", "k\\n", "B", "aa", "\\u00e9"};
    put(t, "\"", 1);
    if (rndn(3)) puts_(t, pool[rndn(sizeof pool / sizeof pool[0])]);
    else gen_string_body(t, 40); /* \u0000 in keys: rare (jansson refuses them) */
    put(t, "\"", 1);
}

static void gen_value(text *t, int depth, int max_depth);

static void gen_container(text *t, int depth, int max_depth, int object)
{
    put(t, object ? "{" : "[", 1);
    gen_ws(t);
    unsigned n = rndn(depth > 3 ? 3 : depth == 1 ? 10 : 6);
    for (unsigned i = 0; i < n; i++) {
        if (i) {
            put(t, ",", 1);
            gen_ws(t);
        }
        if (object) {
            gen_key(t);
            gen_ws(t);
            put(t, ":", 1);
            gen_ws(t);
        }
        gen_value(t, depth + 1, max_depth);
        gen_ws(t);
    }
    put(t, object ? "}" : "]", 1);
}

static void gen_value(text *t, int depth, int max_depth)
{
    unsigned r = rndn(10);
    if (depth < max_depth && r < 4) {
        gen_container(t, depth, max_depth, r < 2);
        return;
    }
    switch (rndn(7)) {
    case 0: puts_(t, "null"); break;
    case 1: puts_(t, rndn(2) ? "true" : "false"); break;
    case 2:
    case 3: gen_number(t); break;
    default:
        put(t, "\"", 1);
        gen_string_body(t, 1);
        put(t, "\"", 1);
    }
}

/* A chain of `depth` containers with the top-level object at depth 1. */
static void gen_deep(text *t, int depth)
{
    char close[SHAPE_JSON_MAX_DEPTH + 8];
    int n = 0;
    puts_(t, "{\"d\":");
    for (int i = 2; i <= depth; i++) {
        int object = (int)rndn(2);
        puts_(t, object ? "{\"x\":" : "[");
        close[n++] = object ? '}' : ']';
    }
    gen_value(t, depth, depth);
    while (n) put(t, &close[--n], 1);
    puts_(t, "}");
}

static void test_generated(void **state)
{
    (void)state;
    text t = {0};
    for (int i = 0; i < 4000; i++) {
        t.len = 0;
        gen_ws(&t);
        if (i % 100 == 99) {
            gen_deep(&t, 62 + (int)rndn(5)); /* around the limit: 62..66 */
        } else if (rndn(10) == 0) {
            gen_value(&t, 1, 4); /* any top-level value */
        } else {
            gen_container(&t, 1, 1 + (int)rndn(6), 1);
        }
        gen_ws(&t);
        int cat = check_document(t.p, t.len, 0);
        if (cat == CAT_AGREE_VALID) list_add(&valid_pool, t.p, t.len);
    }
    free(t.p);
    print_message("generated: %zu documents so far\n", stats.docs);
}

static void test_mutated(void **state)
{
    (void)state;
    static const unsigned char interesting[] = {'{', '}', '[', ']', '"', ',', ':', '\\', '0', '-', '.', 'e',
                                                'u',  ' ', '\n', 0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc3,
                                                0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0xff, 'n', 't', 'd', '+'};
    assert_true(valid_pool.n > 100);
    text t = {0};
    for (int i = 0; i < 10000; i++) {
        size_t src = rndn((unsigned)valid_pool.n);
        t.len = 0;
        put(&t, valid_pool.data[src], valid_pool.len[src]);
        for (unsigned k = 1 + rndn(3); k > 0; k--) {
            size_t pos = t.len ? rndn((unsigned)t.len) : 0;
            unsigned char b = rndn(3) ? interesting[rndn(sizeof interesting)] : (unsigned char)rndn(256);
            switch (rndn(5)) {
            case 0: /* replace */
                if (t.len) t.p[pos] = (char)b;
                break;
            case 1: /* delete */
                if (t.len) {
                    memmove(t.p + pos, t.p + pos + 1, t.len - pos - 1);
                    t.len--;
                }
                break;
            case 2: /* insert */
                put(&t, " ", 1);
                memmove(t.p + pos + 1, t.p + pos, t.len - pos - 1);
                t.p[pos] = (char)b;
                break;
            case 3: /* truncate */
                t.len = pos;
                break;
            default: { /* duplicate a slice */
                size_t n = rndn(8) + 1;
                if (pos + n > t.len) n = t.len - pos;
                char tmp[8];
                memcpy(tmp, t.p + pos, n);
                put(&t, tmp, n);
            }
            }
        }
        check_document(t.p, t.len, 0);
    }
    free(t.p);
}

static void test_summary(void **state)
{
    (void)state;
    print_message("differential: %zu documents (%zu walked members: %zu numbers, %zu strings, %zu nested; "
                  "%zu valid non-objects; %zu bigint re-parses)\n",
                  stats.docs, stats.members, stats.numbers, stats.strings, stats.nested, stats.not_object,
                  stats.bigint_retries);
    for (int c = 0; c < CAT_N; c++) print_message("  %-13s %zu\n", cat_name[c], stats.cat[c]);
    assert_true(stats.cat[CAT_AGREE_VALID] >= 1000);
    assert_true(stats.cat[CAT_AGREE_INVALID] >= 1000);
    assert_true(stats.cat[CAT_DEPTH] > 0 && stats.cat[CAT_RANGE] > 0 && stats.cat[CAT_NULKEY] > 0);
    assert_true(stats.bigint_retries > 0 && stats.nested > 1000);
    list_free(&valid_pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_mutated),
        cmocka_unit_test(test_summary),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* json_parse.c — the strict JSON scanner for message bodies (shape/json.h).
 *
 * Why: message bodies are the hot path of every read. A DOM parser mallocs
 * per value and builds a tree only to have it torn down again; the decoder
 * needs neither. This scanner walks the top-level object member by member,
 * decodes scalars in place, and leaves nested values to be rendered as
 * canonical text or skipped — all without allocating once its scratch
 * buffers have grown to the largest body seen.
 *
 * How:
 *   - Strings: find_special() jumps to the next byte that needs a look ('"',
 *     '\', a control byte, or a byte >= 0x80) 16 bytes at a time with SSE2
 *     (8 at a time with a SWAR word loop elsewhere, then bytewise). Plain runs
 *     are never copied: a string without escapes is a slice of the body. The
 *     first escape switches to copying into a scratch buffer reserved once to
 *     the remaining body size (unescaped text is never longer than escaped),
 *     so the copy loop has no bound checks. Bytes >= 0x80 are validated as
 *     UTF-8 sequences in place (exact ranges of RFC 3629 Table 3).
 *   - Keys: shape_json_next_expect() takes the key the caller predicts
 *     (plain bytes) and compares it with the body in two overlapping words
 *     plus the closing quote; only a miss scans the key.
 *     shape_json_next_run() follows the caller's chain of predictions by
 *     itself (one call per run of members, not per member; a key that is
 *     not the successor is compared with the successor it replaced before
 *     the run gives up), stopping where the caller needs the scanner's state
 *     (a miss, a pending container, a string in scratch).
 *   - Numbers: [1-9] plus up to 7 digits, optionally '.' and up to 7 more,
 *     no exponent, with 8 bytes of body left: the digit run is found and
 *     converted 8 bytes at a time (SWAR; little-endian GNU C builds). Every
 *     other number, and every error, takes the general path:
 *     one pass checks the RFC grammar and accumulates up to 19
 *     significant digits. Integers of up to 19 digits are range-checked
 *     exactly; a fraction or exponent with <= 2^53 mantissa and a power of
 *     ten <= 22 is Clinger's fast path (one correctly rounded IEEE multiply
 *     or divide, so exact as strtod; trailing zeros of a long mantissa and
 *     small extra powers of ten are folded in first); anything else goes to
 *     strtod on a NUL-terminated copy (on the stack when short, in scratch
 *     otherwise) under the "C" locale (uselocale: never the process locale's
 *     decimal comma).
 *   - Build switches, for tests of the portable paths on x86-64:
 *     SHAPE_JSON_NO_SIMD uses the word-at-a-time string loop instead of SSE2,
 *     SHAPE_JSON_NO_FAST_DOUBLE sends every non-integer to strtod.
 *   - Nested values: skip_container() is an iterative state machine with an
 *     explicit 64-entry stack (a value the render fast path takes, flat
 *     objects or an array of them, is skipped by that path's scan instead:
 *     container_fast_skip, about half the instructions; the decoder's
 *     inference pass skips every `items` array); render_*() is a recursive descent bounded by
 *     the same depth limit. Rendering copies through: input that is already
 *     canonical (compact, no escapes, keys in order — the usual case) is not
 *     copied token by token but in one memcpy per run, broken only where
 *     whitespace is dropped or a string is re-escaped. Each object member's
 *     place in the output is recorded; if the keys turn out not to be
 *     strictly ascending, the object's text is permuted once by the sorted
 *     records. Unescaped keys live on a stack-like arena so that nested
 *     objects push and pop their own. The usual nested object (compact, flat,
 *     plain keys and strings, distinct keys) skips all of that:
 *     render_object_fast() sorts pointers into the body as it reads and
 *     writes the object once in key order, or hands it to the general path.
 *     A member value that is such an object, or an array of them, is
 *     rendered by render_container_fast() straight into the output (one
 *     reservation: the text is never longer than the input). The key order
 *     of the last fast object is cached (copied keys and their sorting
 *     permutation): the next object with the same keys in the same order is
 *     matched key by key (a short key with its quotes and colon as one
 *     masked word) and written without sorting.
 *   - Errors: every failure goes through fail(), which records verdict,
 *     offset and a static reason and returns NULL; callers propagate NULL.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* newlocale, uselocale */
#endif

#include "shape/bytes.h"
#include "shape/json.h"

#include <float.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) && !defined(SHAPE_JSON_NO_SIMD)
#define USE_SSE2 1
#include <emmintrin.h>
#endif

#if defined(__GNUC__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#define ALWAYS_INLINE inline
#endif

typedef unsigned char uchar;

#define KEY_CACHE_MEMBERS 16 /* == FAST_MEMBERS */
#define KEY_CACHE_BYTES 256

/* Walk states. */
enum {
    ST_IDLE = 0, /* no body, or a whole-document call abandoned the walk */
    ST_BEGIN,    /* body set, nothing read */
    ST_AFTER,    /* a member was yielded and its value consumed: expect ',' or '}' */
    ST_PENDING,  /* a member's object/array value is still unread at sc->val */
    ST_DONE,
    ST_ERROR
};

/* What walk_member() returns, besides SHAPE_JSON_MEMBER and the verdicts,
 * for a member that must end a run of shape_json_next_run(): its value is a
 * pending container or a string in scratch. The entry points turn it into
 * SHAPE_JSON_MEMBER. */
#define MEMBER_LAST 2
_Static_assert(MEMBER_LAST != SHAPE_JSON_MEMBER && MEMBER_LAST != SHAPE_JSON_DONE, "a code of its own");

/* scan_string() result flags. */
#define STR_ESC 0x1u  /* had escapes: the slice lives in scratch */
#define STR_HIGH 0x2u /* holds bytes >= 0x80 (raw or from \u escapes) */

typedef struct scratch {
    uchar *data;
    size_t len;
    size_t cap;
} scratch;

/* One member of an object being rendered: where its text landed in the output
 * (relative to the object's '{') and its unescaped key. */
typedef struct render_rec {
    const char *kp; /* key bytes when they are a body slice; NULL: at koff in sc->keys */
    size_t koff, klen;
    size_t start, end;
    size_t idx;     /* position in the input, to keep the last of duplicate keys */
} render_rec;

struct shape_json_scanner {
    const uchar *base, *p, *end; /* the body; p is the walk cursor */
    const uchar *val;            /* first byte of the current member's value */
    int state;
    int cur_kind; /* kind of the current value while it can be rendered; 0 otherwise */
    shape_json_error error;
    scratch kbuf, vbuf; /* walk: unescaped key and string value */
    scratch rstr;       /* render: unescaped string value */
    scratch keys;       /* render: unescaped keys of the objects being rendered (a stack) */
    scratch tmp;        /* render: copy of an object's text while it is permuted */
    scratch num;        /* long numbers copied for strtod */
    render_rec *recs;
    size_t nrec, caprec;
    shape_json_buf *out; /* render: destination and flags of the current call */
    const uchar *pend;   /* render: start of the canonical input not yet copied */
    unsigned rflags;
    locale_t c_locale;
    uint64_t overflows; /* numbers beyond the double range scanned (shape_json_overflows) */
    /* The keys of the last object the render fast path read, in their input
     * order, and the order that sorts them: the next object with the same
     * keys in the same order (the usual case: items of one shape) is matched
     * key by key and written in that order, without scanning or sorting its
     * keys. n == 0: nothing cached. */
    struct {
        unsigned n;
        int sorted;
        unsigned char len[KEY_CACHE_MEMBERS];
        unsigned short off[KEY_CACHE_MEMBERS];
        unsigned char ord[KEY_CACHE_MEMBERS];
        char bytes[KEY_CACHE_BYTES];
        /* '"' key '"' ':' as one word (mask: its bytes) when that is at most
         * 8 bytes, so a member's key is matched by one load and compare;
         * mask 0: compared byte by byte. sep: the byte after each value. */
        uint64_t pat[KEY_CACHE_MEMBERS], mask[KEY_CACHE_MEMBERS];
        uchar sep[KEY_CACHE_MEMBERS];
    } kc;
};

_Static_assert(SHAPE_JSON_MAX_DEPTH >= 2, "members of the top-level object have depth 2");

#define STR_(x) #x
#define STR(x) STR_(x)
static const char too_deep[] = "nesting deeper than " STR(SHAPE_JSON_MAX_DEPTH);

/* ------------------------------------------------------------------ basics */

static const uchar *fail(shape_json_scanner *sc, int verdict, const uchar *at, const char *reason)
{
    sc->error.verdict = verdict;
    sc->error.offset = (size_t)(at - sc->base);
    sc->error.reason = reason;
    return NULL;
}

static int scratch_reserve(scratch *s, size_t need)
{
    if (need <= s->cap) return 0;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uchar *p = realloc(s->data, cap);
    if (!p) return -1;
    s->data = p;
    s->cap = cap;
    return 0;
}

static inline int is_digit(unsigned c) { return c - '0' < 10u; }



static inline const uchar *skip_ws(const uchar *p, const uchar *end)
{
    while (p < end) {
        unsigned c = *p;
        if (LIKELY(c > ' ')) break;
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
        p++;
    }
    return p;
}

/* A byte the string loop must look at: '"', '\', < 0x20, >= 0x80. */
static inline int is_special(unsigned c) { return c - 0x20u >= 0x60u || c == '"' || c == '\\'; }

/* The first special byte in [p, end), or end. */
static inline const uchar *find_special(const uchar *p, const uchar *end)
{
#if defined(USE_SSE2)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* Signed compare: bytes >= 0x80 are negative, so "< 0x20" also
         * catches every non-ASCII byte. */
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                 _mm_cmplt_epi8(v, space));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask) return p + __builtin_ctz(mask);
        p += 16;
    }
#elif defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (end - p >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
        /* Byte-wise zero tests; false positives only above a true one, so the
         * lowest flagged byte is exact. (v - 0x20..) & ~v flags bytes < 0x20;
         * v itself flags bytes >= 0x80. */
        uint64_t m = ((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 0x20) & ~v) | v;
        m &= highs;
        if (m) return p + (__builtin_ctzll(m) >> 3);
        p += 8;
    }
#endif
    while (p < end && !is_special(*p)) p++;
    return p;
}

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0. */
static inline size_t utf8_len(const uchar *p, const uchar *end)
{
    unsigned c = p[0];
    size_t avail = (size_t)(end - p);
    if (c < 0xC2) return 0; /* continuation byte, or overlong C0/C1 */
    if (c < 0xE0) return (avail >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c < 0xF0) {
        if (avail < 3) return 0;
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80) return 0;
        return 3;
    }
    if (c < 0xF5) {
        if (avail < 4) return 0;
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        return 4;
    }
    return 0;
}

static inline int hexval(unsigned c)
{
    if (c - '0' < 10u) return (int)(c - '0');
    c |= 0x20;
    if (c - 'a' < 6u) return (int)(c - 'a' + 10);
    return -1;
}

/* Four hex digits at p (caller checked 4 bytes exist), or -1. */
static inline long hex4(const uchar *p)
{
    int a = hexval(p[0]), b = hexval(p[1]), c = hexval(p[2]), d = hexval(p[3]);
    if ((a | b | c | d) < 0) return -1;
    return (long)((a << 12) | (b << 8) | (c << 4) | d);
}

static inline uchar *put_utf8(uchar *w, unsigned long cp)
{
    if (cp < 0x80) {
        *w++ = (uchar)cp;
    } else if (cp < 0x800) {
        *w++ = (uchar)(0xC0 | (cp >> 6));
        *w++ = (uchar)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *w++ = (uchar)(0xE0 | (cp >> 12));
        *w++ = (uchar)(0x80 | ((cp >> 6) & 0x3F));
        *w++ = (uchar)(0x80 | (cp & 0x3F));
    } else {
        *w++ = (uchar)(0xF0 | (cp >> 18));
        *w++ = (uchar)(0x80 | ((cp >> 12) & 0x3F));
        *w++ = (uchar)(0x80 | ((cp >> 6) & 0x3F));
        *w++ = (uchar)(0x80 | (cp & 0x3F));
    }
    return w;
}

/* ----------------------------------------------------------------- strings */

/* Decode the escape at p (p[0] == '\\'). Writes the unescaped bytes at *w
 * when w is not NULL. Returns the byte after the escape, or NULL. */
static const uchar *unescape_one(shape_json_scanner *sc, const uchar *p, uchar **w, unsigned *fl)
{
    const uchar *end = sc->end;
    if (end - p < 2) return fail(sc, SHAPE_JSON_ESYNTAX, p, "unterminated string");
    uchar b;
    switch (p[1]) {
    case '"': b = '"'; break;
    case '\\': b = '\\'; break;
    case '/': b = '/'; break;
    case 'b': b = '\b'; break;
    case 'f': b = '\f'; break;
    case 'n': b = '\n'; break;
    case 'r': b = '\r'; break;
    case 't': b = '\t'; break;
    case 'u': {
        if (end - p < 6) return fail(sc, SHAPE_JSON_ESYNTAX, p, "truncated \\u escape");
        long cp = hex4(p + 2);
        if (cp < 0) return fail(sc, SHAPE_JSON_ESYNTAX, p, "invalid \\u escape");
        const uchar *q = p + 6;
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            if (cp >= 0xDC00) return fail(sc, SHAPE_JSON_EUTF8, p, "unpaired surrogate escape");
            if (end - q < 6 || q[0] != '\\' || q[1] != 'u')
                return fail(sc, SHAPE_JSON_EUTF8, p, "unpaired surrogate escape");
            long lo = hex4(q + 2);
            if (lo < 0) return fail(sc, SHAPE_JSON_ESYNTAX, q, "invalid \\u escape");
            if (lo < 0xDC00 || lo > 0xDFFF)
                return fail(sc, SHAPE_JSON_EUTF8, p, "unpaired surrogate escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            q += 6;
        }
        if (cp >= 0x80) *fl |= STR_HIGH;
        if (*w) *w = put_utf8(*w, (unsigned long)cp);
        return q;
    }
    default: return fail(sc, SHAPE_JSON_ESYNTAX, p, "invalid escape");
    }
    if (*w) *(*w)++ = b;
    return p + 2;
}

/* Scan the string whose opening quote is at p[-1]. On success returns the
 * byte after the closing quote, sets *out to the unescaped bytes and *fl to
 * STR_* flags. A string without escapes is a slice of the body; with
 * escapes it is written at dst->data + dst->len (dst->len unchanged; the
 * caller decides whether to keep it), or only validated when dst is NULL (then
 * *out is the raw text between the quotes). */
static const uchar *scan_string(shape_json_scanner *sc, const uchar *p, scratch *dst,
                                shape_json_slice *out, unsigned *fl)
{
    const uchar *end = sc->end, *start = p;
    unsigned f = 0;
    for (;;) {
        p = find_special(p, end);
        if (UNLIKELY(p >= end)) return fail(sc, SHAPE_JSON_ESYNTAX, start - 1, "unterminated string");
        unsigned c = *p;
        if (LIKELY(c == '"')) {
            out->ptr = (const char *)start;
            out->len = (size_t)(p - start);
            *fl = f;
            return p + 1;
        }
        if (c >= 0x80) {
            size_t n = utf8_len(p, end);
            if (UNLIKELY(!n)) return fail(sc, SHAPE_JSON_EUTF8, p, "invalid UTF-8");
            p += n;
            f |= STR_HIGH;
            continue;
        }
        if (c == '\\') break;
        return fail(sc, SHAPE_JSON_ESYNTAX, p, "control character in string");
    }

    /* Escapes: copy what came before, then decode as we go. */
    f |= STR_ESC;
    uchar *w = NULL, *w0 = NULL;
    if (dst) {
        if (scratch_reserve(dst, dst->len + (size_t)(end - start)))
            return fail(sc, SHAPE_JSON_ENOMEM, p, "out of memory");
        w0 = w = dst->data + dst->len;
        memcpy(w, start, (size_t)(p - start));
        w += p - start;
    }
    for (;;) {
        unsigned c = *p; /* p < end here */
        if (c == '"') break;
        if (c == '\\') {
            p = unescape_one(sc, p, &w, &f);
            if (!p) return NULL;
        } else if (c >= 0x80) {
            size_t n = utf8_len(p, end);
            if (!n) return fail(sc, SHAPE_JSON_EUTF8, p, "invalid UTF-8");
            if (w) {
                memcpy(w, p, n);
                w += n;
            }
            p += n;
            f |= STR_HIGH;
        } else {
            return fail(sc, SHAPE_JSON_ESYNTAX, p, "control character in string");
        }
        const uchar *q = find_special(p, end);
        if (w) {
            memcpy(w, p, (size_t)(q - p));
            w += q - p;
        }
        p = q;
        if (p >= end) return fail(sc, SHAPE_JSON_ESYNTAX, start - 1, "unterminated string");
    }
    if (w) {
        out->ptr = (const char *)w0;
        out->len = (size_t)(w - w0);
    } else {
        out->ptr = (const char *)start;
        out->len = (size_t)(p - start);
    }
    *fl = f;
    return p + 1;
}

/* The common case inline: the closing quote is the first special byte of the
 * string (no escape, control or non-ASCII byte before it), looked for 16
 * bytes at a time while 16 remain, then byte by byte. Returns the byte after it with *out set,
 * or NULL to say "take the general path" (nothing consumed, nothing
 * reported). */
static inline const uchar *string_fast(const uchar *p, const uchar *end, shape_json_slice *out)
{
#if defined(USE_SSE2)
    const uchar *s = p;
    while (LIKELY(end - p >= 16)) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                              _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                 _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask) {
            unsigned i = (unsigned)__builtin_ctz(mask);
            if (p[i] != '"') return NULL;
            out->ptr = (const char *)s;
            out->len = (size_t)(p + i - s);
            return p + i + 1;
        }
        p += 16;
    }
    /* Fewer than 16 bytes left (the last members of a body): bytewise. */
    for (; p < end; p++) {
        if (*p == '"') {
            out->ptr = (const char *)s;
            out->len = (size_t)(p - s);
            return p + 1;
        }
        if (is_special(*p)) return NULL;
    }
#else
    (void)p;
    (void)end;
    (void)out;
#endif
    return NULL;
}

/* ----------------------------------------------------------------- numbers */

/* Grammar only: the byte after the number starting at p ('-' or a digit). */
static const uchar *scan_number_text(shape_json_scanner *sc, const uchar *p)
{
    const uchar *s = p, *end = sc->end;
    if (*p == '-') p++;
    if (p >= end || !is_digit(*p)) return fail(sc, SHAPE_JSON_ESYNTAX, p, "digit expected in number");
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p)) return fail(sc, SHAPE_JSON_ESYNTAX, s, "leading zero in number");
    } else {
        while (p < end && is_digit(*p)) p++;
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p)) return fail(sc, SHAPE_JSON_ESYNTAX, p, "digit expected after '.'");
        while (p < end && is_digit(*p)) p++;
    }
    if (p < end && (*p | 0x20) == 'e') {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || !is_digit(*p)) return fail(sc, SHAPE_JSON_ESYNTAX, p, "digit expected in exponent");
        while (p < end && is_digit(*p)) p++;
    }
    return p;
}

/* strtod on a NUL-terminated copy, under the "C" locale. */
static int slow_double(shape_json_scanner *sc, const uchar *s, size_t n, double *out)
{
    char local[128];
    char *buf = local;
    if (n >= sizeof local) {
        if (scratch_reserve(&sc->num, n + 1)) return -1;
        buf = (char *)sc->num.data;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    locale_t old = (locale_t)0;
    if (sc->c_locale) old = uselocale(sc->c_locale);
    *out = strtod(buf, NULL);
    if (sc->c_locale) uselocale(old);
    return 0;
}

#define TWO53 (1ull << 53)

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0 && !defined(SHAPE_JSON_NO_FAST_DOUBLE)
#define USE_FAST_DOUBLE 1
#endif

#if defined(USE_FAST_DOUBLE)
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#endif

/* w * 10^e10 exactly rounded when the fast path applies; 0 if it does not. */
static inline int fast_double(uint64_t w, int64_t e10, double *out)
{
#if defined(USE_FAST_DOUBLE)
    if (w > TWO53) {
        /* Trailing zeros of a long mantissa ("2.000000000000000000") can go. */
        while (w % 10 == 0) {
            w /= 10;
            e10++;
        }
        if (w > TWO53) return 0;
    }
    if (e10 == 0) {
        *out = (double)w;
    } else if (e10 > 0 && e10 <= 22) {
        *out = (double)w * pow10_exact[e10];
    } else if (e10 < 0 && e10 >= -22) {
        *out = (double)w / pow10_exact[-e10];
    } else if (e10 > 22 && e10 <= 22 + 16) {
        /* "Disguised" fast path: move powers into the mantissa while exact. */
        for (int64_t k = e10 - 22; k > 0; k--) {
            w *= 10;
            if (w > TWO53) return 0;
        }
        *out = (double)w * 1e22;
    } else {
        return 0;
    }
    return 1;
#else
    (void)w;
    (void)e10;
    (void)out;
    return 0; /* excess precision would double-round: always strtod */
#endif
}

static inline void set_integral_flags(shape_json_number *num, double d)
{
    if (d >= -0x1p63 && d < 0x1p63) {
        int64_t t = (int64_t)d;
        if ((double)t == d) {
            num->flags |= SHAPE_JSON_NUM_INTEGRAL | SHAPE_JSON_NUM_FITS_INT64;
            num->i = t;
        }
    } else if (d > DBL_MAX || d < -DBL_MAX) {
        num->flags |= SHAPE_JSON_NUM_OVERFLOW;
    } else {
        num->flags |= SHAPE_JSON_NUM_INTEGRAL; /* every double beyond 2^53 is an integer */
    }
}

/* Eight bytes at a time (little-endian words, as loaded by shape_load64: byte 0
 * is the first character; elsewhere scan_number takes the general path). */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define USE_SWAR_DIGITS 1
#endif
#define ONES8 0x0101010101010101ull
#define HIGHS8 0x8080808080808080ull

/* How many of the 8 bytes of v, from the first, are ASCII digits (0..8).
 * Per byte, the high bit of (b + 0x46) says b > '9', of (b - 0x30) b < '0',
 * of b itself b >= 0x80; carries and borrows only cross from a non-digit
 * into the bytes after it, so the first flagged byte is exact. */
static inline unsigned digit_run8(uint64_t v)
{
    uint64_t nondigit = ((v + ONES8 * 0x46) | (v - ONES8 * 0x30) | v) & HIGHS8;
    return nondigit ? (unsigned)__builtin_ctzll(nondigit) >> 3 : 8;
}

/* The value of the first n (1..8) bytes of v, which are digits. */
static inline uint64_t digits_value8(uint64_t v, unsigned n)
{
    /* Move the n digits to the top of the word (zeros, i.e. leading '0's
     * once '0' is taken off, come in below), then combine pairs, quads,
     * octets: the first character is the most significant digit. */
    uint64_t t = (v - ONES8 * '0') << (8 * (8 - n));
    t = (t * 10 + (t >> 8)) & 0x00FF00FF00FF00FFull;
    t = (t * 100 + (t >> 16)) & 0x0000FFFF0000FFFFull;
    return (t * 10000 + (t >> 32)) & 0xFFFFFFFFull;
}

/* Parse and classify the number starting at p ('-' or a digit): every
 * number, the general way (scan_number tries a fast path first). */
static const uchar *scan_number_general(shape_json_scanner *sc, const uchar *p, shape_json_number *num)
{
    const uchar *s = p, *end = sc->end;
    int neg = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (UNLIKELY(p >= end || !is_digit(*p)))
        return fail(sc, SHAPE_JSON_ESYNTAX, p, "digit expected in number");
    uint64_t w = 0;    /* up to 19 significant digits */
    int nd = 0;        /* how many are in w */
    int64_t e10 = 0;   /* value = w * 10^e10, unless inexact */
    int inexact = 0;   /* a nonzero digit did not fit in w */
    int is_int = 1;
    if (*p == '0') {
        p++;
        if (UNLIKELY(p < end && is_digit(*p)))
            return fail(sc, SHAPE_JSON_ESYNTAX, s, "leading zero in number");
    } else {
        const uchar *ds = p, *lim = (end - p > 19) ? p + 19 : end;
        while (p < lim && is_digit(*p)) w = w * 10 + (uint64_t)(*p++ - '0');
        nd = (int)(p - ds);
        while (p < end && is_digit(*p)) {
            inexact |= *p != '0';
            e10++;
            p++;
        }
    }
    if (p < end && *p == '.') {
        is_int = 0;
        p++;
        const uchar *fs = p;
        if (w == 0)
            while (p < end && *p == '0') {
                e10--;
                p++;
            }
        while (p < end && is_digit(*p)) {
            if (nd < 19) {
                w = w * 10 + (uint64_t)(*p - '0');
                nd++;
                e10--;
            } else {
                inexact |= *p != '0';
            }
            p++;
        }
        if (UNLIKELY(p == fs)) return fail(sc, SHAPE_JSON_ESYNTAX, p, "digit expected after '.'");
    }
    if (p < end && (*p | 0x20) == 'e') {
        is_int = 0;
        p++;
        int eneg = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        if (UNLIKELY(p >= end || !is_digit(*p)))
            return fail(sc, SHAPE_JSON_ESYNTAX, p, "digit expected in exponent");
        int64_t x = 0;
        while (p < end && is_digit(*p)) {
            if (x < 100000000) x = x * 10 + (*p - '0');
            p++;
        }
        e10 += eneg ? -x : x;
    }

    num->text.ptr = (const char *)s;
    num->text.len = (size_t)(p - s);
    num->flags = neg ? SHAPE_JSON_NUM_NEGATIVE : 0;
    num->i = 0;
    if (is_int) {
        if (LIKELY(e10 == 0)) { /* at most 19 digits */
            if (!neg && w <= (uint64_t)INT64_MAX) {
                num->cls = SHAPE_JSON_INT;
                num->i = (int64_t)w;
                num->d = (double)num->i;
                num->flags |= SHAPE_JSON_NUM_INTEGRAL | SHAPE_JSON_NUM_FITS_INT64;
                return p;
            }
            if (neg && w <= (uint64_t)INT64_MAX + 1) {
                num->cls = SHAPE_JSON_INT;
                num->i = w == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)w;
                num->d = w == 0 ? -0.0 : (double)num->i;
                num->flags |= SHAPE_JSON_NUM_INTEGRAL | SHAPE_JSON_NUM_FITS_INT64;
                return p;
            }
        }
        num->cls = SHAPE_JSON_BIGINT;
        if (slow_double(sc, s, num->text.len, &num->d))
            return fail(sc, SHAPE_JSON_ENOMEM, s, "out of memory");
        if (num->d > DBL_MAX || num->d < -DBL_MAX) {
            num->flags |= SHAPE_JSON_NUM_OVERFLOW;
            sc->overflows++;
        } else {
            num->flags |= SHAPE_JSON_NUM_INTEGRAL;
        }
        return p;
    }
    num->cls = SHAPE_JSON_REAL;
    double d;
    if (w == 0) {
        d = 0.0;
    } else if (inexact || !fast_double(w, e10, &d)) {
        if (slow_double(sc, s, num->text.len, &num->d))
            return fail(sc, SHAPE_JSON_ENOMEM, s, "out of memory");
        set_integral_flags(num, num->d);
        sc->overflows += (num->flags & SHAPE_JSON_NUM_OVERFLOW) != 0; /* only strtod's path can overflow */
        return p;
    }
    num->d = neg ? -d : d;
    set_integral_flags(num, num->d);
    return p;
}

/* Parse and classify the number starting at p ('-' or a digit). */
static ALWAYS_INLINE const uchar *scan_number(shape_json_scanner *sc, const uchar *p, shape_json_number *num)
{
    const uchar *s = p, *end = sc->end;
    int neg = *p == '-';
    p += neg;
    /* Fast path: [1-9] and up to 7 more digits, optionally '.' and 1..7
     * digits, no exponent, read 8 bytes at a time while 8 remain. Anything
     * else (a leading zero, a longer run, an exponent, the end of the body
     * near) takes scan_number_general, which also reports the errors. */
#if defined(USE_SWAR_DIGITS)
    if (LIKELY(end - p >= 9) && (unsigned)(*p - '1') < 9u) {
        uint64_t v = shape_load64(p);
        unsigned n = digit_run8(v);
        const uchar *q = p + n;
        if (n < 8 && *q != '.' && (*q | 0x20) != 'e') {
            uint64_t w = digits_value8(v, n);
            num->text.ptr = (const char *)s;
            num->text.len = (size_t)(q - s);
            num->cls = SHAPE_JSON_INT;
            num->i = neg ? -(int64_t)w : (int64_t)w;
            num->d = (double)num->i;
            num->flags = (neg ? SHAPE_JSON_NUM_NEGATIVE : 0) | SHAPE_JSON_NUM_INTEGRAL | SHAPE_JSON_NUM_FITS_INT64;
            return q;
        }
#if defined(USE_FAST_DOUBLE)
        if (n < 8 && *q == '.' && end - q >= 9) {
            static const uint64_t pow10_u64[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
            uint64_t f = shape_load64(q + 1);
            unsigned nf = digit_run8(f);
            const uchar *r = q + 1 + nf;
            if (nf >= 1 && nf < 8 && (*r | 0x20) != 'e') {
                /* At most 14 digits: w < 2^53, and 10^nf is exact, so one
                 * division is correctly rounded (Clinger's fast path). */
                uint64_t w = digits_value8(v, n) * pow10_u64[nf] + digits_value8(f, nf);
                double d = (double)w / pow10_exact[nf];
                num->text.ptr = (const char *)s;
                num->text.len = (size_t)(r - s);
                num->cls = SHAPE_JSON_REAL;
                num->flags = neg ? SHAPE_JSON_NUM_NEGATIVE : 0;
                num->i = 0;
                num->d = neg ? -d : d;
                set_integral_flags(num, num->d);
                return r;
            }
        }
#endif
    }
#else
    (void)end;
    (void)neg;
#endif
    return scan_number_general(sc, s, num);
}

/* ------------------------------------------------------- skip and validate */

static inline const uchar *scan_literal(shape_json_scanner *sc, const uchar *p, const char *lit,
                                        size_t n)
{
    if ((size_t)(sc->end - p) >= n && memcmp(p, lit, n) == 0) return p + n;
    return fail(sc, SHAPE_JSON_ESYNTAX, p, "invalid literal");
}

/* A scalar at p (p < end): the byte after it, or NULL. */
static const uchar *skip_scalar(shape_json_scanner *sc, const uchar *p)
{
    shape_json_slice s;
    unsigned f;
    switch (*p) {
    case '"': return scan_string(sc, p + 1, NULL, &s, &f);
    case 't': return scan_literal(sc, p, "true", 4);
    case 'f': return scan_literal(sc, p, "false", 5);
    case 'n': return scan_literal(sc, p, "null", 4);
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return scan_number_text(sc, p);
    default: return fail(sc, SHAPE_JSON_ESYNTAX, p, "unexpected character");
    }
}

/* Validate the object or array at p, which has nesting depth `depth`.
 * Iterative: an explicit stack of open brackets, one per level. */
static const uchar *skip_container(shape_json_scanner *sc, const uchar *p, int depth)
{
    const uchar *end = sc->end;
    uchar stack[SHAPE_JSON_MAX_DEPTH + 1];
    int top = 0;
    shape_json_slice s;
    unsigned f;

open:
    if (UNLIKELY(depth + top > SHAPE_JSON_MAX_DEPTH))
        return fail(sc, SHAPE_JSON_EDEPTH, p, too_deep);
    stack[top++] = *p;
    p = skip_ws(p + 1, end);
    if (p >= end) return fail(sc, SHAPE_JSON_ESYNTAX, p, "unexpected end of input");
    if (stack[top - 1] == '{') {
        if (*p == '}') {
            p++;
            goto close;
        }
        goto key;
    }
    if (*p == ']') {
        p++;
        goto close;
    }
    goto value;

key:
    if (UNLIKELY(p >= end || *p != '"')) return fail(sc, SHAPE_JSON_ESYNTAX, p, "expected a key string");
    p = scan_string(sc, p + 1, NULL, &s, &f);
    if (!p) return NULL;
    p = skip_ws(p, end);
    if (UNLIKELY(p >= end || *p != ':')) return fail(sc, SHAPE_JSON_ESYNTAX, p, "expected ':'");
    p = skip_ws(p + 1, end);

value:
    if (UNLIKELY(p >= end)) return fail(sc, SHAPE_JSON_ESYNTAX, p, "unexpected end of input");
    if (*p == '{' || *p == '[') goto open;
    p = skip_scalar(sc, p);
    if (!p) return NULL;

after:
    p = skip_ws(p, end);
    if (UNLIKELY(p >= end)) return fail(sc, SHAPE_JSON_ESYNTAX, p, "unexpected end of input");
    if (*p == ',') {
        p = skip_ws(p + 1, end);
        if (stack[top - 1] == '{') goto key;
        goto value;
    }
    if (*p == (stack[top - 1] == '{' ? '}' : ']')) {
        p++;
        goto close;
    }
    return fail(sc, SHAPE_JSON_ESYNTAX, p,
                stack[top - 1] == '{' ? "expected ',' or '}'" : "expected ',' or ']'");

close:
    if (--top == 0) return p;
    goto after;
}

static const uchar *skip_value(shape_json_scanner *sc, const uchar *p, int depth)
{
    if (p >= sc->end) return fail(sc, SHAPE_JSON_ESYNTAX, p, "unexpected end of input");
    if (*p == '{' || *p == '[') return skip_container(sc, p, depth);
    return skip_scalar(sc, p);
}

/* ------------------------------------------------------------------ render */

static int oom(shape_json_scanner *sc, const uchar *at)
{
    fail(sc, SHAPE_JSON_ENOMEM, at, "out of memory");
    return -1;
}

static inline int out_put(shape_json_scanner *sc, const void *s, size_t n, const uchar *at)
{
    shape_json_buf *o = sc->out;
    if (UNLIKELY(!o->data || o->cap - o->len <= n)) {
        if (shape_json_buf_reserve(o, n)) return oom(sc, at);
    }
    memcpy(o->data + o->len, s, n);
    o->len += n;
    return 0;
}

/* Copy-through: the input bytes from sc->pend up to the current position
 * are already canonical and not yet copied. They are copied in one piece
 * when something must change (whitespace dropped, a string re-escaped, an
 * object reordered) or when the render ends, so a compact, sorted value costs
 * one memcpy. vpos() is where an input position lands in the output. */
static inline int flush(shape_json_scanner *sc, const uchar *upto)
{
    int rc = upto > sc->pend ? out_put(sc, sc->pend, (size_t)(upto - sc->pend), sc->pend) : 0;
    sc->pend = upto;
    return rc;
}

static inline size_t vpos(const shape_json_scanner *sc, const uchar *p)
{
    return sc->out->len + (size_t)(p - sc->pend);
}

/* Skip whitespace at p, dropping it from the output. NULL when out of memory. */
static inline const uchar *drop_ws(shape_json_scanner *sc, const uchar *p)
{
    const uchar *q = skip_ws(p, sc->end);
    if (UNLIKELY(q != p)) {
        if (flush(sc, p)) return NULL;
        sc->pend = q;
    }
    return q;
}

static const char hexdig[] = "0123456789abcdef";

static char *put_u4(char *w, unsigned long v)
{
    *w++ = '\\';
    *w++ = 'u';
    *w++ = hexdig[(v >> 12) & 0xF];
    *w++ = hexdig[(v >> 8) & 0xF];
    *w++ = hexdig[(v >> 4) & 0xF];
    *w++ = hexdig[v & 0xF];
    return w;
}

/* Write s (valid UTF-8, unescaped) as a canonical JSON string. */
static int emit_string(shape_json_scanner *sc, const uchar *s, size_t n, const uchar *at)
{
    const int ascii = (sc->rflags & SHAPE_JSON_RENDER_ASCII) != 0;
    if (n > (SIZE_MAX - 2) / 6) return oom(sc, at);
    if (shape_json_buf_reserve(sc->out, 6 * n + 2)) return oom(sc, at);
    char *w = sc->out->data + sc->out->len;
    *w++ = '"';
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && (c < 0x7F || !ascii)) {
            *w++ = (char)c;
            i++;
            continue;
        }
        switch (c) {
        case '"': *w++ = '\\'; *w++ = '"'; i++; continue;
        case '\\': *w++ = '\\'; *w++ = '\\'; i++; continue;
        case '\b': *w++ = '\\'; *w++ = 'b'; i++; continue;
        case '\f': *w++ = '\\'; *w++ = 'f'; i++; continue;
        case '\n': *w++ = '\\'; *w++ = 'n'; i++; continue;
        case '\r': *w++ = '\\'; *w++ = 'r'; i++; continue;
        case '\t': *w++ = '\\'; *w++ = 't'; i++; continue;
        default: break;
        }
        if (c < 0x80) { /* other controls, and DEL in ASCII mode */
            w = put_u4(w, c);
            i++;
            continue;
        }
        /* ASCII mode, a valid multi-byte sequence: decode, write \uXXXX. */
        unsigned long cp;
        if (c < 0xE0) {
            cp = ((c & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
            i += 2;
        } else if (c < 0xF0) {
            cp = ((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
            i += 3;
        } else {
            cp = ((unsigned long)(c & 0x07u) << 18) | ((unsigned long)(s[i + 1] & 0x3Fu) << 12) |
                 ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);
            i += 4;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            w = put_u4(w, 0xD800 + (cp >> 10));
            w = put_u4(w, 0xDC00 + (cp & 0x3FF));
        } else {
            w = put_u4(w, cp);
        }
    }
    *w++ = '"';
    sc->out->len = (size_t)(w - sc->out->data);
    return 0;
}

/* The string whose opening quote is at p, unescaped into dst (see
 * scan_string): validated, and written canonically. A string without
 * escapes is already canonical (it cannot hold a raw control byte, quote or
 * backslash) and stays in the pending run; otherwise it is re-escaped. */
static const uchar *render_string(shape_json_scanner *sc, const uchar *p, scratch *dst,
                                  shape_json_slice *s, unsigned *f)
{
    const int ascii = (sc->rflags & SHAPE_JSON_RENDER_ASCII) != 0;
    const uchar *q = ascii ? NULL : string_fast(p + 1, sc->end, s);
    if (LIKELY(q != NULL)) { /* no escape, no byte >= 0x80: canonical as written */
        *f = 0;
        return q;
    }
    q = scan_string(sc, p + 1, dst, s, f);
    if (!q) return NULL;
    if (LIKELY(!(*f & STR_ESC) && !ascii)) return q;
    if (flush(sc, p) || emit_string(sc, (const uchar *)s->ptr, s->len, p)) return NULL;
    sc->pend = q;
    return q;
}

/* Byte order, shorter first on a common prefix (memcmp's order; keys are
 * short, so a loop beats a call). */
static inline int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    const uchar *x = (const uchar *)a, *y = (const uchar *)b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return (an > bn) - (an < bn);
}

/* Records whose kp has been resolved (see render_object). */
static inline int key_cmp(const render_rec *a, const render_rec *b)
{
    return bytes_cmp(a->kp, a->klen, b->kp, b->klen);
}

static inline const char *rec_key(const shape_json_scanner *sc, const render_rec *r)
{
    return r->kp ? r->kp : (const char *)sc->keys.data + r->koff;
}

static int rec_cmp(const void *pa, const void *pb)
{
    const render_rec *a = pa, *b = pb;
    int c = key_cmp(a, b);
    if (c) return c;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Sort the members recorded since rec_base by key and rewrite the object's
 * text (flushed; it starts at obj_start in the output) in that order, keeping
 * only the last of equal keys. */
static int sort_members(shape_json_scanner *sc, size_t obj_start, size_t rec_base, const uchar *at)
{
    size_t n = sc->nrec - rec_base;
    render_rec *r = sc->recs + rec_base;
    /* Small objects (the usual case): insertion sort of pointers, which also
     * notices equal keys — equal neighbours in the final order are always
     * compared. Larger ones: qsort of the records, then a scan for equal keys. */
    const render_rec *small[16];
    const render_rec **ord = small;
    int dup = 0;
    if (n <= 16) {
        for (size_t a = 0; a < n; a++) {
            const render_rec *t = &r[a];
            size_t b = a;
            while (b > 0) {
                int c = key_cmp(ord[b - 1], t);
                if (c == 0) dup = 1; /* ord[b-1] came earlier in the input: t sorts after it */
                if (c <= 0) break;
                ord[b] = ord[b - 1];
                b--;
            }
            ord[b] = t;
        }
    } else {
        qsort(r, n, sizeof *r, rec_cmp); /* total order (idx breaks ties): deterministic */
        for (size_t k = 0; k + 1 < n; k++) dup |= key_cmp(&r[k], &r[k + 1]) == 0;
        ord = NULL;
    }
    shape_json_buf *o = sc->out;
    size_t total = o->len - obj_start;
    if (scratch_reserve(&sc->tmp, total)) return oom(sc, at);
    memcpy(sc->tmp.data, o->data + obj_start, total);
    char *w = o->data + obj_start;
    *w++ = '{';
    for (size_t k = 0; k < n; k++) {
        const render_rec *x = ord ? ord[k] : &r[k];
        if (dup && k + 1 < n && key_cmp(x, ord ? ord[k + 1] : &r[k + 1]) == 0) continue; /* a later duplicate wins */
        memcpy(w, sc->tmp.data + x->start, x->end - x->start);
        w += x->end - x->start;
        *w++ = ',';
    }
    w[-1] = '}'; /* n >= 2, so at least one member was written */
    o->len = (size_t)(w - o->data);
    return 0;
}

/* The usual nested object, rendered without the general machinery: compact
 * (no whitespace), at most FAST_MEMBERS members, distinct keys, keys and
 * string values plain (no escape, no byte >= 0x80: canonical as written),
 * other values numbers or literals. Members are sorted by insertion as they
 * are read (pointers into the body, no records, no arena); a sorted object
 * stays in the pending run, another is written out in key order from the
 * body, with no copy of the object's text in between. Returns the byte
 * after the object, or NULL when the object is anything else — then nothing
 * was written and the general path (which also reports every error) takes
 * it from the start. Not in ASCII mode, where plain strings may still need
 * escaping (DEL). */
#define FAST_MEMBERS 16
_Static_assert(FAST_MEMBERS == KEY_CACHE_MEMBERS, "the key cache holds one fast object");

typedef struct fast_member {
    const char *key;
    size_t klen;
    const uchar *start, *end; /* the member's text, key to end of value */
} fast_member;

/* Copy n bytes that are short as a rule (a member, a small value): two
 * overlapping words for 4..16 bytes instead of a call; memcpy otherwise. */
static inline void copy_short(char *w, const uchar *src, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t x = shape_load64(src), y = shape_load64(src + n - 8);
        memcpy(w, &x, 8);
        memcpy(w + n - 8, &y, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t x = shape_load32(src), y = shape_load32(src + n - 4);
        memcpy(w, &x, 4);
        memcpy(w + n - 4, &y, 4);
    } else {
        memcpy(w, src, n);
    }
}

/* The value of a fast-path member at p (after the ':'): the byte after it,
 * or NULL when it is not one the fast path takes (a string with an escape
 * or a byte >= 0x80, a container, whitespace) or is invalid. */
static ALWAYS_INLINE const uchar *fast_value_scan(shape_json_scanner *sc, const uchar *p)
{
    const uchar *end = sc->end;
    shape_json_slice v;
    switch (*p) {
    case '"': return string_fast(p + 1, end, &v);
    case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9': {
        /* Plain [1-9][0-9]*(.[0-9]+)?, else the full grammar. */
        const uchar *d = p + 1;
#if defined(USE_SWAR_DIGITS)
        /* Digit runs of up to 7 found 8 bytes at a time (16 bytes left:
         * both loads inside the body); longer runs take the loop below. */
        if (LIKELY(end - d >= 16)) {
            unsigned k = digit_run8(shape_load64(d));
            if (k < 8) {
                d += k;
                if (*d == '.') {
                    unsigned f = digit_run8(shape_load64(d + 1));
                    if (f == 0) return skip_scalar(sc, p); /* "1." is not a number */
                    if (f < 8) {
                        d += 1 + f;
                        return *d == ',' || *d == '}' ? d : skip_scalar(sc, p);
                    }
                    d = p + 1; /* a long fraction: the loop */
                } else {
                    return *d == ',' || *d == '}' ? d : skip_scalar(sc, p);
                }
            }
        }
#endif
        while (d < end && is_digit(*d)) d++;
        if (d < end && *d == '.' && d + 1 < end && is_digit(d[1])) {
            d += 2;
            while (d < end && is_digit(*d)) d++;
        }
        return d < end && (*d == ',' || *d == '}') ? d : skip_scalar(sc, p);
    }
    case '-': case '0':
    case 't': case 'f': case 'n':
        return skip_scalar(sc, p); /* fails only where the general path fails alike */
    default: return NULL; /* nested, whitespace, or an error the general path reports */
    }
}

/* The object at obj when its keys are those of the key cache, in the same
 * order, each written plainly: members into mem (their key order is the
 * cache's). NULL otherwise (then the caller reads it the long way). */
static ALWAYS_INLINE const uchar *fast_object_cached(shape_json_scanner *sc, const uchar *obj, fast_member *mem)
{
    const uchar *end = sc->end, *p = obj + 1;
    const unsigned n = sc->kc.n;
    if (!n) return NULL;
    for (unsigned i = 0; i < n; i++) {
        size_t len = sc->kc.len[i];
        uint64_t mask = sc->kc.mask[i];
        /* '"' key '"' ':' and at least one byte of value (a short key: one
         * word of 8 <= len + 3 bytes, and a ninth) */
        if (LIKELY(mask && end - p > 8)) {
            if ((shape_load64(p) & mask) != sc->kc.pat[i]) return NULL;
        } else if ((size_t)(end - p) < len + 4 || p[0] != '"' || p[len + 1] != '"' || p[len + 2] != ':' ||
                   !shape_bytes_equal(p + 1, sc->kc.bytes + sc->kc.off[i], len)) {
            return NULL;
        }
        mem[i].start = p;
        p = fast_value_scan(sc, p + len + 3);
        if (!p || p >= end) return NULL;
        mem[i].end = p;
        if (*p++ != sc->kc.sep[i]) return NULL;
    }
    return p;
}

/* Remember the keys of a fast object just read (if they fit the cache). */
static void key_cache_store(shape_json_scanner *sc, const fast_member *mem, const fast_member *const *ord,
                            size_t n, int sorted)
{
    size_t used = 0;
    sc->kc.n = 0;
    for (size_t i = 0; i < n; i++) {
        if (mem[i].klen > 255 || mem[i].klen > KEY_CACHE_BYTES - used) return;
        memcpy(sc->kc.bytes + used, mem[i].key, mem[i].klen);
        sc->kc.off[i] = (unsigned short)used;
        sc->kc.len[i] = (unsigned char)mem[i].klen;
        used += mem[i].klen;
        sc->kc.ord[i] = (unsigned char)(ord[i] - mem);
        /* The word pattern: built and loaded in memory order, so it holds
         * whatever the byte order. */
        uchar pat[8] = {0}, mask[8] = {0};
        sc->kc.mask[i] = 0;
        if (mem[i].klen + 3 <= 8) {
            pat[0] = '"';
            memcpy(pat + 1, mem[i].key, mem[i].klen);
            pat[mem[i].klen + 1] = '"';
            pat[mem[i].klen + 2] = ':';
            memset(mask, 0xff, mem[i].klen + 3);
            sc->kc.pat[i] = shape_load64(pat);
            sc->kc.mask[i] = shape_load64(mask);
        }
        sc->kc.sep[i] = i + 1 < n ? ',' : '}';
    }
    sc->kc.sorted = sorted;
    sc->kc.n = (unsigned)n;
}

/* Read the object at obj the fast way: its members into mem (at most
 * FAST_MEMBERS), their key order as indexes into mem in *perm (the cache's,
 * or perm_buf), *count of them, *sorted when the
 * keys came in order. Returns the byte after the object, or NULL when the
 * object is not one for the fast path (nothing reported that the general
 * path would not report alike). */
static ALWAYS_INLINE const uchar *fast_object_scan(shape_json_scanner *sc, const uchar *obj, fast_member *mem,
                                                   unsigned char *perm_buf, const unsigned char **perm,
                                                   size_t *count, int *sorted_out)
{
    const uchar *end = sc->end, *p = fast_object_cached(sc, obj, mem);
    if (p) {
        *count = sc->kc.n;
        *sorted_out = sc->kc.sorted;
        *perm = sc->kc.ord;
        return p;
    }
    const fast_member *ord[FAST_MEMBERS];
    p = obj + 1;
    size_t n = 0;
    int sorted = 1;
    for (;;) {
        if (n == FAST_MEMBERS || p >= end || *p != '"') return NULL;
        fast_member *m = &mem[n];
        shape_json_slice k;
        m->start = p;
        const uchar *q = string_fast(p + 1, end, &k);
        if (!q || q >= end - 1 || *q != ':') return NULL;
        p = fast_value_scan(sc, q + 1);
        if (!p || p >= end) return NULL;
        m->end = p;
        m->key = k.ptr;
        m->klen = k.len;
        size_t b = n;
        for (; b > 0; b--) {
            int c = bytes_cmp(ord[b - 1]->key, ord[b - 1]->klen, k.ptr, k.len);
            if (c == 0) return NULL; /* a repeated key: the general path keeps the last */
            if (c < 0) break;
            ord[b] = ord[b - 1];
        }
        sorted &= b == n;
        ord[b] = m;
        n++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p != '}') return NULL;
        *count = n;
        *sorted_out = sorted;
        for (size_t i = 0; i < n; i++) perm_buf[i] = (unsigned char)(ord[i] - mem);
        *perm = perm_buf;
        key_cache_store(sc, mem, ord, n, sorted);
        return p + 1;
    }
}

/* Write the members mem[perm[0]], mem[perm[1]], ... as an object at w;
 * returns the byte after it. Exactly as long as the object read (same
 * members, same separators). */
static inline char *fast_object_write(char *w, const fast_member *mem, const unsigned char *perm, size_t n)
{
    *w++ = '{';
    for (size_t i = 0; i < n; i++) {
        const fast_member *m = &mem[perm[i]];
        size_t len = (size_t)(m->end - m->start);
        copy_short(w, m->start, len);
        w += len;
        *w++ = ',';
    }
    w[-1] = '}';
    return w;
}

static const uchar *render_object_fast(shape_json_scanner *sc, const uchar *obj)
{
    fast_member mem[FAST_MEMBERS];
    unsigned char perm_buf[FAST_MEMBERS];
    const unsigned char *perm = NULL;
    size_t n = 0;
    int sorted = 0; /* all set by fast_object_scan; initialised for gcc -O1's -Wmaybe-uninitialized */
    const uchar *p = fast_object_scan(sc, obj, mem, perm_buf, &perm, &n, &sorted);
    if (!p || sorted) return p;
    /* Room first, so that nothing fails once output starts. */
    if (shape_json_buf_reserve(sc->out, (size_t)(p - sc->pend))) return NULL;
    flush(sc, obj);
    char *w = fast_object_write(sc->out->data + sc->out->len, mem, perm, n);
    sc->out->len = (size_t)(w - sc->out->data);
    sc->pend = p;
    return p;
}

/* The member value at val (an object, or an array of objects) when every
 * object is one for the fast path: rendered straight into sc->out — no
 * pending run, no records, one reservation, since the canonical text of
 * such a value is its own bytes with each object's members reordered, never
 * longer than the input. container_fast_to() writes at *wp (room for the
 * rest of the body from val) and advances it; with wp NULL it only skips the
 * value (valid, as this path only takes valid values: about half the
 * instructions of skip_container(), which remains the fallback);
 * render_container_fast() writes into sc->out. Returns the byte after the
 * value (no NUL written), or NULL with nothing kept: then the general path
 * renders (or skips) the value from the start and reports its errors. */
static const uchar *container_fast_to(shape_json_scanner *sc, const uchar *val, char **wp)
{
    const uchar *end = sc->end, *p = val;
    const int array = *p == '[';
    if (array && (++p >= end || *p != '{')) return NULL; /* empty, or not of objects */
    char *w = wp ? *wp : NULL;
    if (array && w) *w++ = '[';
    for (;;) {
        fast_member mem[FAST_MEMBERS];
        unsigned char perm_buf[FAST_MEMBERS];
        const unsigned char *perm;
        size_t n;
        int sorted = 0;
        const uchar *q = fast_object_scan(sc, p, mem, perm_buf, &perm, &n, &sorted);
        if (!q) return NULL;
        if (w && sorted) {
            memcpy(w, p, (size_t)(q - p));
            w += q - p;
        } else if (w) {
            w = fast_object_write(w, mem, perm, n);
        }
        p = q;
        if (!array) break;
        if (p >= end) return NULL;
        if (*p == ']') {
            if (w) *w++ = ']';
            p++;
            break;
        }
        if (*p != ',' || ++p >= end || *p != '{') return NULL;
        if (w) *w++ = ',';
    }
    if (wp) *wp = w;
    return p;
}

static const uchar *container_fast_skip(shape_json_scanner *sc, const uchar *val)
{
    return container_fast_to(sc, val, NULL);
}

static const uchar *render_container_fast(shape_json_scanner *sc, const uchar *val)
{
    shape_json_buf *o = sc->out;
    if (shape_json_buf_reserve(o, (size_t)(sc->end - val))) return NULL;
    char *w = o->data + o->len;
    const uchar *p = container_fast_to(sc, val, &w);
    if (p) o->len = (size_t)(w - o->data);
    return p;
}

static const uchar *render_value(shape_json_scanner *sc, const uchar *p, int depth);

static const uchar *render_object(shape_json_scanner *sc, const uchar *p, int depth)
{
    if (!(sc->rflags & SHAPE_JSON_RENDER_ASCII)) {
        const uchar *q = render_object_fast(sc, p);
        if (q) return q;
    }
    const uchar *end = sc->end;
    const size_t obj_start = vpos(sc, p), rec_base = sc->nrec, key_base = sc->keys.len;
    size_t idx = 0;
    int sorted = 1;
    p = drop_ws(sc, p + 1);
    if (!p) return NULL;
    if (p < end && *p == '}') return p + 1;
    for (;;) {
        if (UNLIKELY(p >= end || *p != '"')) return fail(sc, SHAPE_JSON_ESYNTAX, p, "expected a key string");
        render_rec rec;
        rec.start = vpos(sc, p) - obj_start;
        shape_json_slice k;
        unsigned f;
        p = render_string(sc, p, &sc->keys, &k, &f);
        if (!p) return NULL;
        rec.klen = k.len;
        rec.koff = 0;
        rec.kp = k.ptr;
        if (f & STR_ESC) {
            rec.kp = NULL; /* in the arena, which may move while the value renders */
            rec.koff = sc->keys.len;
            sc->keys.len += k.len;
        }
        if (sorted && idx > 0) {
            /* Still strictly ascending? Checked as we go, while both keys
             * are at hand (an escaped one sits in the arena, by offset). */
            const render_rec *prev = &sc->recs[sc->nrec - 1];
            if (bytes_cmp(rec_key(sc, prev), prev->klen, rec_key(sc, &rec), rec.klen) >= 0) sorted = 0;
        }
        p = drop_ws(sc, p);
        if (!p) return NULL;
        if (UNLIKELY(p >= end || *p != ':')) return fail(sc, SHAPE_JSON_ESYNTAX, p, "expected ':'");
        p = drop_ws(sc, p + 1);
        if (!p) return NULL;
        p = render_value(sc, p, depth + 1);
        if (!p) return NULL;
        rec.end = vpos(sc, p) - obj_start;
        rec.idx = idx++;
        if (UNLIKELY(sc->nrec == sc->caprec)) {
            size_t cap = sc->caprec ? sc->caprec * 2 : 64;
            render_rec *nr = realloc(sc->recs, cap * sizeof *nr);
            if (!nr) return fail(sc, SHAPE_JSON_ENOMEM, p, "out of memory");
            sc->recs = nr;
            sc->caprec = cap;
        }
        sc->recs[sc->nrec++] = rec;
        p = drop_ws(sc, p);
        if (!p) return NULL;
        if (p < end && *p == ',') {
            p = drop_ws(sc, p + 1);
            if (!p) return NULL;
            continue;
        }
        if (p < end && *p == '}') {
            p++;
            break;
        }
        return fail(sc, SHAPE_JSON_ESYNTAX, p, p < end ? "expected ',' or '}'" : "unexpected end of input");
    }
    if (!sorted) {
        if (flush(sc, p)) return NULL;
        /* The arena stops moving now: resolve offsets into pointers. */
        for (size_t i = rec_base; i < sc->nrec; i++) sc->recs[i].kp = rec_key(sc, &sc->recs[i]);
        if (sort_members(sc, obj_start, rec_base, p)) return NULL;
    }
    sc->nrec = rec_base;
    sc->keys.len = key_base;
    return p;
}

static const uchar *render_array(shape_json_scanner *sc, const uchar *p, int depth)
{
    const uchar *end = sc->end;
    p = drop_ws(sc, p + 1);
    if (!p) return NULL;
    if (p < end && *p == ']') return p + 1;
    for (;;) {
        p = render_value(sc, p, depth + 1);
        if (!p) return NULL;
        p = drop_ws(sc, p);
        if (!p) return NULL;
        if (p < end && *p == ',') {
            p = drop_ws(sc, p + 1);
            if (!p) return NULL;
            continue;
        }
        if (p < end && *p == ']') return p + 1;
        return fail(sc, SHAPE_JSON_ESYNTAX, p, p < end ? "expected ',' or ']'" : "unexpected end of input");
    }
}

/* The value at p, of nesting depth `depth` if it is a container. */
static const uchar *render_value(shape_json_scanner *sc, const uchar *p, int depth)
{
    shape_json_slice s;
    unsigned f;
    if (UNLIKELY(p >= sc->end)) return fail(sc, SHAPE_JSON_ESYNTAX, p, "unexpected end of input");
    switch (*p) {
    case '{':
    case '[':
        if (UNLIKELY(depth > SHAPE_JSON_MAX_DEPTH))
            return fail(sc, SHAPE_JSON_EDEPTH, p, too_deep);
        return *p == '{' ? render_object(sc, p, depth) : render_array(sc, p, depth);
    case '"': return render_string(sc, p, &sc->rstr, &s, &f);
    default: return skip_scalar(sc, p); /* literals and numbers are copied as written */
    }
}

/* Set up a render into out; returns out->len to restore on failure. */
static size_t render_start(shape_json_scanner *sc, shape_json_buf *out, unsigned flags,
                           const uchar *from)
{
    sc->out = out;
    sc->pend = from;
    sc->rflags = flags;
    sc->nrec = 0;
    sc->keys.len = 0;
    return out->len;
}

static void render_undo(shape_json_buf *out, size_t len0)
{
    out->len = len0;
    if (out->data && out->cap > len0) out->data[len0] = '\0';
}

static int render_finish(shape_json_scanner *sc, shape_json_buf *out, const uchar *upto)
{
    if (flush(sc, upto) || shape_json_buf_reserve(out, 0)) {
        oom(sc, sc->p);
        return -1;
    }
    out->data[out->len] = '\0';
    return 0;
}

/* -------------------------------------------------------------------- walk */

static int walk_fail(shape_json_scanner *sc)
{
    sc->state = ST_ERROR;
    sc->cur_kind = 0;
    return sc->error.verdict;
}

static int walk_usage(shape_json_scanner *sc, const char *reason)
{
    sc->error.verdict = SHAPE_JSON_EUSAGE;
    sc->error.offset = sc->p && sc->base ? (size_t)(sc->p - sc->base) : 0;
    sc->error.reason = reason;
    return SHAPE_JSON_EUSAGE;
}

/* After the closing '}' of the top-level object. */
static int walk_finish(shape_json_scanner *sc, const uchar *p)
{
    p = skip_ws(p, sc->end);
    if (UNLIKELY(p != sc->end)) {
        fail(sc, SHAPE_JSON_ESYNTAX, p, "trailing characters after the document");
        return walk_fail(sc);
    }
    sc->p = p;
    sc->state = ST_DONE;
    sc->cur_kind = 0;
    return SHAPE_JSON_DONE;
}

/* Is the text at p exactly the n bytes of a chain name ('"' key '"' ':',
 * n >= 3, with at least 8 readable bytes after it)? Word compares while 16
 * bytes of body remain (one masked word up to 8 bytes, two overlapping
 * words up to 16), else bytewise within the body. */
static ALWAYS_INLINE int probe_is(const uchar *p, const uchar *end, const char *name, size_t n)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (LIKELY(end - p >= 16)) {
        if (n <= 8) return ((shape_load64(p) ^ shape_load64(name)) & (~0ull >> (64 - 8 * n))) == 0;
        if (n <= 16) return shape_load64(p) == shape_load64(name) && shape_load64(p + n - 8) == shape_load64(name + n - 8);
    }
#endif
    return (size_t)(end - p) > n && shape_bytes_equal(p, name, n);
}

/* A member starts at p (after '{' or ',' and whitespace). `hint` (plain
 * bytes, or NULL) is the key the caller expects: *hit says whether it was. */
static ALWAYS_INLINE int walk_member(shape_json_scanner *sc, const uchar *p, shape_json_member *m, const char *hint,
                       size_t hint_len, int quoted, int *hit)
{
    const uchar *end = sc->end;
    unsigned f;
    if (UNLIKELY(p >= end || *p != '"')) {
        fail(sc, SHAPE_JSON_ESYNTAX, p, p < end ? "expected a key string" : "unexpected end of input");
        return walk_fail(sc);
    }
    const uchar *q;
    if (quoted) {
        /* A chain name: the key with its quotes and colon in one compare. */
        if (hint && probe_is(p, end, hint, hint_len)) {
            *hit = 1;
            m->key.ptr = (const char *)p + 1;
            m->key.len = hint_len - 3;
            m->key_escaped = 0;
            p += hint_len;
            goto value;
        }
        hint = NULL;
    }
    if (hint && (size_t)(end - p) > hint_len + 1 && p[hint_len + 1] == '"' &&
        shape_bytes_equal(p + 1, hint, hint_len)) {
        /* The plain bytes of the hint, then the closing quote: that is the
         * whole key, with no escape (the hint holds no '"' or '\'). */
        *hit = 1;
        m->key.ptr = (const char *)p + 1;
        m->key.len = hint_len;
        m->key_escaped = 0;
        p += hint_len + 2;
    } else if (LIKELY((q = string_fast(p + 1, end, &m->key)) != NULL)) {
        m->key_escaped = 0;
        p = q;
    } else {
        p = scan_string(sc, p + 1, &sc->kbuf, &m->key, &f);
        if (UNLIKELY(!p)) return walk_fail(sc);
        m->key_escaped = (f & STR_ESC) != 0;
    }
    if (UNLIKELY(p >= end || *p != ':')) {
        p = skip_ws(p, end);
        if (p >= end || *p != ':') {
            fail(sc, SHAPE_JSON_ESYNTAX, p, "expected ':'");
            return walk_fail(sc);
        }
    }
    p++;
value:
    p = skip_ws(p, end);
    if (UNLIKELY(p >= end)) {
        fail(sc, SHAPE_JSON_ESYNTAX, p, "unexpected end of input");
        return walk_fail(sc);
    }
    m->offset = (size_t)(p - sc->base);
    sc->val = p;
    int kind;
    switch (*p) {
    case '"':
        kind = SHAPE_JSON_STRING;
        q = string_fast(p + 1, end, &m->str);
        if (LIKELY(q != NULL)) {
            m->str_escaped = 0;
            p = q;
            break;
        }
        p = scan_string(sc, p + 1, &sc->vbuf, &m->str, &f);
        m->str_escaped = (f & STR_ESC) != 0;
        if (LIKELY(p != NULL) && m->str_escaped) {
            m->kind = kind;
            sc->cur_kind = kind;
            sc->p = p;
            sc->state = ST_AFTER;
            return MEMBER_LAST; /* its text lives in scratch */
        }
        break;
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        kind = SHAPE_JSON_NUMBER;
        p = scan_number(sc, p, &m->num);
        break;
    case '{':
    case '[':
        /* Depth 2: always within the limit. Left in place for render/skip. */
        kind = *p == '{' ? SHAPE_JSON_OBJECT : SHAPE_JSON_ARRAY;
        m->kind = kind;
        sc->cur_kind = kind;
        sc->p = p;
        sc->state = ST_PENDING;
        return MEMBER_LAST;
    case 't':
        kind = SHAPE_JSON_TRUE;
        p = scan_literal(sc, p, "true", 4);
        break;
    case 'f':
        kind = SHAPE_JSON_FALSE;
        p = scan_literal(sc, p, "false", 5);
        break;
    case 'n':
        kind = SHAPE_JSON_NULL;
        p = scan_literal(sc, p, "null", 4);
        break;
    default:
        fail(sc, SHAPE_JSON_ESYNTAX, p, "unexpected character");
        return walk_fail(sc);
    }
    if (UNLIKELY(!p)) return walk_fail(sc);
    m->kind = kind;
    sc->cur_kind = kind;
    sc->p = p;
    sc->state = ST_AFTER;
    return SHAPE_JSON_MEMBER;
}

static ALWAYS_INLINE int next_member(shape_json_scanner *sc, shape_json_member *m, const char *hint,
                              size_t hint_len, int quoted, int *hit)
{
    const uchar *p, *end = sc->end;
    switch (sc->state) {
    case ST_AFTER:
        p = sc->p;
        break;
    case ST_PENDING:
        p = container_fast_skip(sc, sc->val);
        if (!p) p = skip_container(sc, sc->val, 2);
        if (!p) return walk_fail(sc);
        break;
    case ST_BEGIN:
        p = skip_ws(sc->base, end);
        if (UNLIKELY(p >= end)) {
            fail(sc, SHAPE_JSON_ESYNTAX, p, "empty document");
            return walk_fail(sc);
        }
        if (UNLIKELY(*p != '{')) {
            /* Validate it anyway, so that "not an object" means valid JSON. */
            const uchar *q = skip_value(sc, p, 1);
            if (!q) return walk_fail(sc);
            q = skip_ws(q, end);
            if (q != end) fail(sc, SHAPE_JSON_ESYNTAX, q, "trailing characters after the document");
            else fail(sc, SHAPE_JSON_ENOTOBJECT, p, "top-level value is not an object");
            return walk_fail(sc);
        }
        p = skip_ws(p + 1, end);
        if (p < end && *p == '}') return walk_finish(sc, p + 1);
        return walk_member(sc, p, m, hint, hint_len, quoted, hit);
    case ST_DONE: return SHAPE_JSON_DONE;
    case ST_ERROR: return sc->error.verdict;
    default: return walk_usage(sc, "no body to scan");
    }
    sc->cur_kind = 0;
    if (LIKELY(p < end && *p == ',')) return walk_member(sc, skip_ws(p + 1, end), m, hint, hint_len, quoted, hit);
    p = skip_ws(p, end);
    if (LIKELY(p < end && *p == ',')) return walk_member(sc, skip_ws(p + 1, end), m, hint, hint_len, quoted, hit);
    if (LIKELY(p < end && *p == '}')) return walk_finish(sc, p + 1);
    fail(sc, SHAPE_JSON_ESYNTAX, p, p < end ? "expected ',' or '}'" : "unexpected end of input");
    return walk_fail(sc);
}

int shape_json_next(shape_json_scanner *sc, shape_json_member *m)
{
    int hit;
    int r = next_member(sc, m, NULL, 0, 0, &hit);
    return r == MEMBER_LAST ? SHAPE_JSON_MEMBER : r;
}

int shape_json_next_expect(shape_json_scanner *sc, shape_json_member *m, const char *key,
                           size_t key_len, int *hit)
{
    *hit = 0;
    int r = next_member(sc, m, key, key_len, 0, hit);
    return r == MEMBER_LAST ? SHAPE_JSON_MEMBER : r;
}

/* The member after a consumed scalar (state ST_AFTER): the separator, then
 * walk_member. The tail of next_member without its state dispatch. */
static ALWAYS_INLINE int next_after(shape_json_scanner *sc, shape_json_member *m, const char *hint,
                                    size_t hint_len, int quoted, int *hit)
{
    const uchar *p = sc->p, *end = sc->end;
    sc->cur_kind = 0;
    if (LIKELY(end - p >= 2 && p[0] == ',' && p[1] == '"')) return walk_member(sc, p + 1, m, hint, hint_len, quoted, hit);
    if (LIKELY(p < end && *p == ',')) return walk_member(sc, skip_ws(p + 1, end), m, hint, hint_len, quoted, hit);
    p = skip_ws(p, end);
    if (LIKELY(p < end && *p == ',')) return walk_member(sc, skip_ws(p + 1, end), m, hint, hint_len, quoted, hit);
    if (LIKELY(p < end && *p == '}')) return walk_finish(sc, p + 1);
    fail(sc, SHAPE_JSON_ESYNTAX, p, p < end ? "expected ',' or '}'" : "unexpected end of input");
    return walk_fail(sc);
}

int shape_json_next_run(shape_json_scanner *sc, const shape_json_chain *chain, int64_t prev,
                        shape_json_member *out, int64_t *idx, size_t cap, size_t *count)
{
    size_t n = 0;
    int r, hit = 0;
    int64_t guess = chain ? chain->next[prev + 1] : -1;
    const char *hint = guess >= 0 ? chain->names[guess] : NULL;
    /* The first member may follow any state (a pending container is skipped
     * first); the rest follow a scalar, so the state dispatch is done once. */
    r = next_member(sc, &out[0], hint, hint ? chain->lens[guess] : 0, 1, &hit);
    for (;;) {
        if (r != SHAPE_JSON_MEMBER && r != MEMBER_LAST) break;
        shape_json_member *m = &out[n++];
        if (!hit) {
            /* Not the successor: the one it replaced, compared with the key
             * just read (off the usual path: a field that comes and goes). */
            int64_t second = chain && chain->alt ? chain->alt[prev + 1] : -1;
            const char *h2 = second >= 0 ? chain->names[second] : NULL;
            if (!h2 || m->key_escaped || m->key.len + 3 != chain->lens[second] ||
                !shape_bytes_equal((const uchar *)m->key.ptr, h2 + 1, m->key.len)) {
                idx[n - 1] = -1;
                r = SHAPE_JSON_MEMBER;
                break;
            }
            chain->alt[prev + 1] = guess; /* the latest comes first */
            chain->next[prev + 1] = second;
            guess = second;
        }
        idx[n - 1] = prev = guess;
        if (r == MEMBER_LAST || n == cap) {
            r = SHAPE_JSON_MEMBER;
            break;
        }
        guess = chain->next[prev + 1];
        hint = guess >= 0 ? chain->names[guess] : NULL;
        hit = 0;
        r = next_after(sc, &out[n], hint, hint ? chain->lens[guess] : 0, 1, &hit);
    }
    *count = n;
    return r;
}

int shape_json_skip(shape_json_scanner *sc, shape_json_slice *raw)
{
    if (sc->state != ST_PENDING) return walk_usage(sc, "no object or array to skip");
    const uchar *p = skip_container(sc, sc->val, 2);
    if (!p) return walk_fail(sc);
    if (raw) {
        raw->ptr = (const char *)sc->val;
        raw->len = (size_t)(p - sc->val);
    }
    sc->p = p;
    sc->state = ST_AFTER;
    sc->cur_kind = 0;
    return 0;
}

size_t shape_json_pending_size(const shape_json_scanner *sc)
{
    return sc->state == ST_PENDING ? (size_t)(sc->end - sc->val) : 0;
}

int shape_json_render_fast(shape_json_scanner *sc, char *dst, size_t *len)
{
    if (sc->state != ST_PENDING) return 0;
    char *w = dst;
    const uchar *p = container_fast_to(sc, sc->val, &w);
    if (!p) return 0;
    *len = (size_t)(w - dst);
    sc->p = p;
    sc->state = ST_AFTER;
    sc->cur_kind = 0;
    return 1;
}

int shape_json_render(shape_json_scanner *sc, shape_json_buf *out, unsigned flags)
{
    if (sc->state == ST_PENDING && !(flags & SHAPE_JSON_RENDER_ASCII)) {
        sc->out = out;
        const uchar *p = render_container_fast(sc, sc->val);
        if (p) {
            out->data[out->len] = '\0';
            sc->p = p;
            sc->state = ST_AFTER;
            sc->cur_kind = 0;
            return 0;
        }
    }
    if (sc->state == ST_PENDING) {
        size_t len0 = render_start(sc, out, flags, sc->val);
        const uchar *p = render_value(sc, sc->val, 2);
        if (!p || render_finish(sc, out, p)) {
            render_undo(out, len0);
            return walk_fail(sc);
        }
        sc->p = p;
        sc->state = ST_AFTER;
        sc->cur_kind = 0;
        return 0;
    }
    if (sc->state == ST_AFTER && sc->cur_kind) {
        /* A scalar already validated: only running out of memory can fail,
         * and that leaves the walk where it was. */
        size_t len0 = render_start(sc, out, flags, sc->val);
        const uchar *p = render_value(sc, sc->val, 2);
        if (!p || render_finish(sc, out, p)) {
            render_undo(out, len0);
            return sc->error.verdict;
        }
        return 0;
    }
    return walk_usage(sc, "no value to render");
}

/* --------------------------------------------------------- whole documents */

static void doc_begin(shape_json_scanner *sc, const void *doc, size_t len)
{
    static const uchar empty[1];
    if (!doc) { /* NULL + 0 is undefined behaviour: point at a real empty body */
        doc = empty;
        len = 0;
    }
    sc->base = sc->p = (const uchar *)doc;
    sc->end = sc->base + len;
    sc->val = NULL;
    sc->state = ST_IDLE;
    sc->cur_kind = 0;
    sc->error.verdict = 0;
    sc->error.offset = 0;
    sc->error.reason = NULL;
}

int shape_json_canonical(shape_json_scanner *sc, const void *doc, size_t len, shape_json_buf *out,
                         unsigned flags)
{
    doc_begin(sc, doc, len);
    const uchar *p = skip_ws(sc->base, sc->end);
    size_t len0 = render_start(sc, out, flags, p);
    if (p >= sc->end) {
        fail(sc, SHAPE_JSON_ESYNTAX, p, "empty document");
    } else if ((p = render_value(sc, p, 1)) != NULL) {
        const uchar *q = skip_ws(p, sc->end);
        if (q != sc->end) fail(sc, SHAPE_JSON_ESYNTAX, q, "trailing characters after the document");
        else if (render_finish(sc, out, p) == 0) return 0;
    }
    render_undo(out, len0);
    return sc->error.verdict;
}

int shape_json_validate(shape_json_scanner *sc, const void *doc, size_t len)
{
    doc_begin(sc, doc, len);
    const uchar *p = skip_ws(sc->base, sc->end);
    if (p >= sc->end) {
        fail(sc, SHAPE_JSON_ESYNTAX, p, "empty document");
        return sc->error.verdict;
    }
    p = skip_value(sc, p, 1);
    if (!p) return sc->error.verdict;
    p = skip_ws(p, sc->end);
    if (p != sc->end) {
        fail(sc, SHAPE_JSON_ESYNTAX, p, "trailing characters after the document");
        return sc->error.verdict;
    }
    return 0;
}

/* --------------------------------------------------------------- lifecycle */

shape_json_scanner *shape_json_scanner_new(void)
{
    shape_json_scanner *sc = calloc(1, sizeof *sc);
    if (!sc) return NULL;
    /* May be (locale_t)0 when out of memory; slow_double then uses the
     * process locale, which is "C" unless the program changed it. */
    sc->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    return sc;
}

void shape_json_scanner_free(shape_json_scanner *sc)
{
    if (!sc) return;
    free(sc->kbuf.data);
    free(sc->vbuf.data);
    free(sc->rstr.data);
    free(sc->keys.data);
    free(sc->tmp.data);
    free(sc->num.data);
    free(sc->recs);
    if (sc->c_locale) freelocale(sc->c_locale);
    free(sc);
}

void shape_json_begin(shape_json_scanner *sc, const void *body, size_t len)
{
    doc_begin(sc, body, len);
    sc->state = ST_BEGIN;
}

uint64_t shape_json_overflows(const shape_json_scanner *sc) { return sc->overflows; }

const shape_json_error *shape_json_last_error(const shape_json_scanner *sc)
{
    return &sc->error;
}

/* shape/json.h — a strict, allocation-free JSON scanner for message bodies.
 *
 * Why: every message body read from a stream is a JSON object whose members
 * become Arrow columns. That is the hot path of every read, so it gets its own
 * parser instead of a DOM library: no tree, no malloc per value, the decoder
 * is handed each member of the top-level object in turn and writes it straight
 * into its column builders. jansson stays for cold-path JSON (configs,
 * checkpoints, registry answers) and as the oracle of the differential test.
 *
 * How: a scanner (one per thread, reused for every message) is pointed at a
 * body with shape_json_begin(); each shape_json_next() yields one member of
 * the top-level object: its key and its value's kind, with scalars fully
 * decoded (numbers classified and converted, strings unescaped and UTF-8
 * validated). A nested object or array is left in place: the caller renders
 * it as canonical JSON text (shape_json_render), skips it (shape_json_skip),
 * or just calls shape_json_next() again, which skips it. Every byte is
 * validated whichever way the caller goes, so a walk that ends with
 * SHAPE_JSON_DONE has proved the whole body valid.
 *
 * The rules (RFC 8259, strict):
 *   - Input is a pointer and a length; it need not be NUL-terminated and may
 *     contain NUL bytes (which are invalid outside strings and must appear as
 *     \u0000 inside them). No byte order mark (RFC 8259 §8.1 lets a parser
 *     ignore one; we refuse it, as jansson does).
 *   - Whitespace is space, tab, LF, CR only. Nothing but whitespace may follow
 *     the top-level value. An empty or all-whitespace body is a syntax error.
 *   - Strings: UTF-8 is validated (overlong forms, UTF-8-encoded surrogates,
 *     code points above U+10FFFF and truncated sequences are refused); raw
 *     bytes below 0x20 are refused; escapes are the RFC's eight plus \uXXXX;
 *     \uD83D\uDE00 (a surrogate pair) decodes to one code point; a lone or
 *     unpaired surrogate escape (\uD800, \uDC00, \uD800\u0041) is REFUSED
 *     (verdict SHAPE_JSON_EUTF8): it has no UTF-8 form, and jansson refuses it
 *     too. \u0000 is accepted, in values and keys alike.
 *   - Numbers follow the RFC grammar exactly: no leading zeros ("01"), no bare
 *     or trailing point (".5", "1."), no '+' sign, no "-" alone, no NaN or
 *     Infinity. A number too large for a double (1e400) is ACCEPTED — the RFC
 *     lets implementations limit range but not validity, and the original
 *     Python tool reads it as infinity — and flagged SHAPE_JSON_NUM_OVERFLOW
 *     with d = ±HUGE_VAL; the decoder decides what that means. (jansson
 *     refuses such numbers: "real number overflow".) Underflow (1e-400) gives
 *     the correctly rounded value (0 or a subnormal), as strtod does.
 *   - Nesting: the top-level value has depth 1, a value inside it depth 2, and
 *     so on. Depth SHAPE_JSON_MAX_DEPTH (64) is accepted; an object or array
 *     that would have depth 65 makes the body undecodable (SHAPE_JSON_EDEPTH).
 *   - Duplicate keys at the top level are yielded in order, each time; the
 *     decoder decides. In canonical renderings of nested objects the LAST
 *     occurrence wins (as in jansson, and in Python's json module).
 *   - A valid body whose top-level value is not an object gets the distinct
 *     verdict SHAPE_JSON_ENOTOBJECT (the whole value is still validated, so
 *     an invalid non-object body gets its real syntax error instead).
 *
 * Canonical rendering (shape_json_render, shape_json_canonical): compact (no
 * whitespace), object keys sorted by the bytes of the unescaped key (for valid
 * UTF-8 that is code-point order, the order of Python's sort_keys), duplicate
 * keys reduced to the last, numbers copied exactly as written ("1E+3" stays
 * "1E+3", "-0.0" stays "-0.0"), strings re-escaped minimally and always the
 * same way: '"' -> \", '\' -> \\, \b \f \n \r \t, other bytes below 0x20 as
 * \u00XX with lowercase hex, everything else raw ('/' is not escaped). With
 * SHAPE_JSON_RENDER_ASCII, bytes 0x7F and above are written as \uXXXX
 * (lowercase, surrogate pairs above U+FFFF), byte for byte what Python's
 * json.dumps(..., ensure_ascii=True, sort_keys=True, separators=(",", ":"))
 * writes for strings.
 *
 * Ownership and lifetimes:
 *   - The scanner never copies or frees the body; the caller keeps it alive
 *     and unchanged from shape_json_begin() until the walk ends (DONE, an
 *     error, or the next shape_json_begin()).
 *   - Every slice the scanner returns points either into the body (number
 *     text always; keys and strings that had no escapes) or into scratch
 *     buffers owned by the scanner (keys and strings that had escapes). Body
 *     slices live as long as the body. Scratch slices stay valid until the
 *     next shape_json_next(), shape_json_begin(), shape_json_canonical(),
 *     shape_json_validate() or shape_json_scanner_free() on the same
 *     scanner; shape_json_render() and shape_json_skip() of the current value
 *     do not invalidate the current member's key or string.
 *   - Scratch buffers grow to the largest body seen and are reused: after the
 *     first few messages a walk allocates nothing.
 *   - Slices are not NUL-terminated and may contain NUL bytes: use the length.
 *   - A scanner is not thread-safe; use one per thread.
 */
#ifndef SHAPE_JSON_H
#define SHAPE_JSON_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest accepted nesting; the top-level value has depth 1. */
#define SHAPE_JSON_MAX_DEPTH 64

/* Results of shape_json_next() and verdicts of every other call. Negative
 * values are errors; every error but ENOMEM and EUSAGE means "this body is
 * undecodable". */
enum shape_json_verdict {
    SHAPE_JSON_MEMBER = 1,      /* shape_json_next: *m holds the next member */
    SHAPE_JSON_DONE = 0,        /* the object closed and nothing but whitespace followed */
    SHAPE_JSON_ESYNTAX = -1,    /* not JSON: bad token, number or escape, raw control
                                   character, trailing comma, trailing bytes, empty body */
    SHAPE_JSON_EUTF8 = -2,      /* invalid UTF-8, or an unpaired surrogate escape */
    SHAPE_JSON_EDEPTH = -3,     /* nesting deeper than SHAPE_JSON_MAX_DEPTH */
    SHAPE_JSON_ENOTOBJECT = -4, /* valid JSON, but the top-level value is not an object */
    SHAPE_JSON_ENOMEM = -5,     /* a scratch or output buffer could not grow */
    SHAPE_JSON_EUSAGE = -6      /* call out of sequence (e.g. render with no current value) */
};

/* Kinds of value. */
enum shape_json_kind {
    SHAPE_JSON_NULL = 1,
    SHAPE_JSON_FALSE,
    SHAPE_JSON_TRUE,
    SHAPE_JSON_NUMBER,
    SHAPE_JSON_STRING,
    SHAPE_JSON_OBJECT,
    SHAPE_JSON_ARRAY
};

/* Classes of number. */
enum shape_json_numclass {
    SHAPE_JSON_INT = 1, /* no fraction, no exponent, fits int64: i is exact */
    SHAPE_JSON_BIGINT,  /* no fraction, no exponent, beyond int64 (e.g. 20 digits):
                           the text is the value; d is its nearest double */
    SHAPE_JSON_REAL     /* has a fraction and/or an exponent ("2.0", "1e3"): d */
};

/* shape_json_number.flags */
#define SHAPE_JSON_NUM_NEGATIVE 0x1u   /* the text starts with '-' ("-0" is INT 0 with this flag) */
#define SHAPE_JSON_NUM_INTEGRAL 0x2u   /* d is finite and has no fractional part: every INT,
                                          BIGINT below DBL_MAX, and REAL such as 2.0, 1e3, -0.0 */
#define SHAPE_JSON_NUM_FITS_INT64 0x4u /* i == d exactly: every INT, and INTEGRAL values of
                                          the other classes within [-2^63, 2^63) */
#define SHAPE_JSON_NUM_OVERFLOW 0x8u   /* the magnitude exceeds DBL_MAX: d is +-HUGE_VAL */

/* Bytes: not NUL-terminated, may contain NUL. */
typedef struct shape_json_slice {
    const char *ptr;
    size_t len;
} shape_json_slice;

typedef struct shape_json_number {
    shape_json_slice text; /* the exact source text, e.g. "-0.0", "1E+3"; a slice of the body */
    int cls;               /* enum shape_json_numclass */
    unsigned flags;        /* SHAPE_JSON_NUM_* */
    int64_t i;             /* the value, when flags has SHAPE_JSON_NUM_FITS_INT64; else 0 */
    double d;              /* the value as the nearest double (correctly rounded, as strtod)
                              for every class; for "2.0" the INTEGRAL flag says d is integral */
} shape_json_number;

/* One member of the top-level object. Only the fields for `kind` are set. */
typedef struct shape_json_member {
    shape_json_slice key;  /* unescaped, UTF-8-valid key bytes (may be empty, may hold NUL) */
    int kind;              /* enum shape_json_kind */
    int key_escaped;       /* 1: key had escapes and lives in scanner scratch; 0: body slice */
    int str_escaped;       /* STRING: 1 if str lives in scanner scratch, 0 if a body slice */
    shape_json_slice str;  /* STRING: the unescaped, UTF-8-valid bytes */
    shape_json_number num; /* NUMBER */
    size_t offset;         /* byte offset of the value's first byte in the body */
} shape_json_member;

/* What went wrong, where: no allocation, reason is a static string. */
typedef struct shape_json_error {
    int verdict;        /* enum shape_json_verdict (negative), or 0 when there was no error */
    size_t offset;      /* byte offset in the body where the problem was found */
    const char *reason; /* short static text, e.g. "invalid UTF-8", "nesting deeper than 64" */
} shape_json_error;

/* A growable byte buffer: the library's one (rendered JSON, documents,
 * files read whole, HTTP bodies, serialized state). `data` comes from
 * malloc/realloc (a caller may lend any buffer that realloc can grow) and is
 * owned by the caller: free it with shape_json_buf_reset() or free(), or
 * take it over. It grows by doubling (from 32 bytes) and always keeps one
 * spare byte after len; rendering and shape_json_buf_append() keep
 * data[len] == '\0' (not counted in len) for convenience; on error the
 * buffer's len is left as it was before the call. */
typedef struct shape_json_buf {
    char *data;
    size_t len;
    size_t cap;
} shape_json_buf;

#define SHAPE_JSON_BUF_INIT {NULL, 0, 0}

/* Make room for `extra` more bytes after len (plus the trailing NUL). Returns
 * 0 or SHAPE_JSON_ENOMEM (the buffer is unchanged). */
int shape_json_buf_reserve(shape_json_buf *buf, size_t extra);
/* shape_json_buf_reserve() for hot loops: the check of the room that is
 * there is inline, the call only made when the buffer must grow. */
static inline int shape_json_buf_room(shape_json_buf *buf, size_t extra)
{
    if (buf->data && buf->cap - buf->len > extra) return 0;
    return shape_json_buf_reserve(buf, extra);
}
/* Append bytes[0..n) (n may be 0: then only the buffer is made) and the
 * trailing NUL. Returns 0 or SHAPE_JSON_ENOMEM (the buffer is unchanged). */
int shape_json_buf_append(shape_json_buf *buf, const void *bytes, size_t n);
/* Free data and reset to empty. */
void shape_json_buf_reset(shape_json_buf *buf);

/* Render flags. */
#define SHAPE_JSON_RENDER_ASCII 0x1u /* escape bytes >= 0x7F as \uXXXX (Python's ensure_ascii) */

typedef struct shape_json_scanner shape_json_scanner;

/* A new scanner with empty scratch buffers, or NULL when out of memory. */
shape_json_scanner *shape_json_scanner_new(void);
/* Free the scanner and its scratch buffers (every scratch slice dies). NULL is ok. */
void shape_json_scanner_free(shape_json_scanner *sc);

/* Point the scanner at a body of `len` bytes (not copied; see lifetimes). Any
 * previous walk is abandoned. Nothing is read until shape_json_next(). */
void shape_json_begin(shape_json_scanner *sc, const void *body, size_t len);

/* The next member of the top-level object.
 * Returns SHAPE_JSON_MEMBER with *m filled; SHAPE_JSON_DONE when the object
 * has ended and the body is proven valid; or a negative verdict (details in
 * shape_json_last_error). Errors can surface after some members were already
 * yielded (a body is only known valid at DONE), so a caller building a row
 * must be able to drop it. After DONE or an error, further calls return the
 * same result. If the previous member's value was an object or array that was
 * neither rendered nor skipped, it is skipped (and validated) first. */
int shape_json_next(shape_json_scanner *sc, shape_json_member *m);

/* shape_json_next() with a guess of the next key (internal: the decoder's
 * column prediction). `key` (key_len bytes) must be plain: no '"', no '\\',
 * no byte below 0x20. When the next member's key is exactly those bytes,
 * written without escapes, *hit is set to 1 and the key is matched by one
 * comparison instead of being scanned; otherwise *hit is 0 and the member is
 * read as shape_json_next() reads it. Results, *m and errors are those of
 * shape_json_next() either way (an escaped spelling of the same key is still
 * yielded, with *hit == 0). key may be NULL (then no guess: *hit = 0). */
int shape_json_next_expect(shape_json_scanner *sc, shape_json_member *m, const char *key,
                           size_t key_len, int *hit);

/* The keys a caller expects, as a successor chain (internal: the decoder's
 * column prediction, for shape_json_next_run). Indexes are the caller's
 * (columns): next[i + 1] is the index expected after a member of index i
 * (next[0]: the first member), -1 for none; alt[i + 1] (alt may be NULL) the
 * one expected second — when it is the key, the run swaps next[i + 1] and
 * alt[i + 1], so that a field that comes and goes costs a compare, not a
 * miss; names[i] is index i's key as a body writes it plainly, '"' key '"'
 * ':' (lens[i] bytes: the key's length + 3; the key plain as for
 * shape_json_next_expect), with at least 8 readable bytes after it (they
 * may be the next name's), so that a member's key is matched with its
 * quotes and colon by word compares; or NULL to never expect index i. */
typedef struct shape_json_chain {
    int64_t *next;
    int64_t *alt;
    const char *const *names;
    const size_t *lens;
} shape_json_chain;

/* shape_json_next_expect() for a run of members in one call: out[k] is each
 * member as shape_json_next() yields it and idx[k] its index in the chain
 * when its key was the expected one (then the next expectation follows from
 * it), -1 otherwise; *count of them (at most cap, cap >= 1). The run starts
 * by expecting next[prev + 1] (then alt[prev + 1]) and stops after a member that (a) was not
 * expected, (b) has an object or array value (pending, as after
 * shape_json_next: render or skip it before the next call), (c) is a string
 * with escapes (it lives in scratch), or (d) fills out. So only the last
 * member of a run can need the scanner's state (render, scratch key).
 * Returns SHAPE_JSON_MEMBER when the run stopped with the body not yet over
 * (*count >= 1), SHAPE_JSON_DONE when the object ended, or a negative verdict
 * (the *count members read before it are still in out: a caller building a
 * row must be able to drop it). chain may be NULL: nothing is expected (one
 * member per call). */
int shape_json_next_run(shape_json_scanner *sc, const shape_json_chain *chain, int64_t prev,
                        shape_json_member *out, int64_t *idx, size_t cap, size_t *count);

/* Consume the current member's value when it is an object or array, without
 * rendering it: validated, depth-checked. `raw` (optional) receives its exact
 * source text. Returns 0 or a negative verdict; SHAPE_JSON_EUSAGE when the
 * current value is not a container that is still pending. */
int shape_json_skip(shape_json_scanner *sc, shape_json_slice *raw);

/* Append the current member's value to `out` as canonical JSON text (see the
 * top of this file). Objects and arrays are consumed and validated (at most
 * once; a second call returns SHAPE_JSON_EUSAGE). Scalars can be rendered any
 * number of times until the next shape_json_next(): a number as written,
 * a string re-escaped canonically, a literal as itself. Returns 0 or a
 * negative verdict; on error out->len is unchanged. */
int shape_json_render(shape_json_scanner *sc, shape_json_buf *out, unsigned flags);

/* shape_json_render() without a buffer in between (internal: the decoder
 * writes a nested value straight into its column). When the current value
 * is a pending object or array that the render fast path takes (flat
 * objects, compact, plain keys and strings; see the top of this file), its
 * canonical text (flags 0) is written at dst, *len set, the value consumed,
 * and 1 returned. dst must have room for shape_json_pending_size() bytes
 * (the rest of the body from the value: the text is never longer). Else 0
 * is returned with nothing written or consumed: render it with
 * shape_json_render(), which also reports any error. */
size_t shape_json_pending_size(const shape_json_scanner *sc);
int shape_json_render_fast(shape_json_scanner *sc, char *dst, size_t *len);

/* Validate a whole document whose top-level value may be of any kind, and
 * append its canonical rendering to `out`. Abandons any walk in progress.
 * Returns 0 or a negative verdict (never ENOTOBJECT). */
int shape_json_canonical(shape_json_scanner *sc, const void *doc, size_t len,
                         shape_json_buf *out, unsigned flags);

/* Validate a whole document whose top-level value may be of any kind. Abandons
 * any walk in progress. Returns 0 or a negative verdict (never ENOTOBJECT). */
int shape_json_validate(shape_json_scanner *sc, const void *doc, size_t len);

/* The error of the last failed call on this scanner (verdict 0 if none since
 * the last begin/canonical/validate). Valid until the scanner's next call. */
const shape_json_error *shape_json_last_error(const shape_json_scanner *sc);

/* How many numbers beyond the double range (SHAPE_JSON_NUM_OVERFLOW) this
 * scanner has scanned since it was made: a cheap sign for a caller (the
 * decoder) that an overflowed value may have reached its output. */
uint64_t shape_json_overflows(const shape_json_scanner *sc);

/* "<reason> at byte <offset>" into buf (always NUL-terminated when size > 0);
 * returns the length snprintf would have written. */
int shape_json_error_format(const shape_json_error *e, char *buf, size_t size);

/* Fill a shape_err from a scanner error: SHAPE_ENOMEM for ENOMEM,
 * SHAPE_EINTERNAL for EUSAGE, SHAPE_EINVAL otherwise, with the formatted
 * sentence. Returns the shape code. */
int shape_json_error_to_err(const shape_json_error *e, shape_err *err);

/* Stable short names: "member", "done", "syntax", "utf8", "depth", "not an object",
 * "out of memory", "usage". */
const char *shape_json_verdict_name(int verdict);
const char *shape_json_kind_name(int kind);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

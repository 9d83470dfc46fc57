/* shape/json_write.h — JSON value writers: integers, floats, strings,
 * timestamps, dates, base64; and the one shortest-round-trip float
 * formatter.
 *
 * Why: emitted events, `stream-read` lines, the registry formats' flat
 * event, the profile document and the options code all write JSON values,
 * and a consumer compares those bytes across them (and with the reference,
 * Python's json.dumps). So each value kind is written here, once, and every
 * writer above core uses these. (shape/json.h is the strict *scanner*; the
 * writers got their own header because they share nothing with it but the
 * word JSON, and a module that only prints should not pull in the parser.)
 *
 * The rules:
 *   - integers in plain decimal;
 *   - floats (shape_json_f64) as Python's repr: the shortest digits that
 *     read back to the same double, fixed notation for decimal exponents
 *     -4 <= e < 16 (`20.0` for integral values, `0.0001`), else
 *     d[.ddd]e[+-]XX (`1e+16`, `1e-05`); -0.0 keeps its sign; NaN and
 *     infinities are `null`;
 *   - strings: '"', '\\' and bytes below 0x20 escaped (\n \r \t \b \f, others
 *     \u00XX with lowercase hex), every other byte raw (non-ASCII is not
 *     escaped, '/' is not escaped);
 *   - timestamps: quoted "YYYY-MM-DDTHH:MM:SS", then '.' and exactly as
 *     many fraction digits as the unit has (0 s, 3 ms, 6 µs, 9 ns), then 'Z'
 *     when the caller says the value is zoned (UTC); floor division, so
 *     instants before 1970 read like Python's datetime;
 *   - dates: proleptic Gregorian YYYY-MM-DD (years outside 0..9999 in plain
 *     decimal with a sign when negative); times of day HH:MM:SS plus the
 *     unit's fraction digits;
 *   - decimals: quoted text with exactly `scale` fraction digits; uuids:
 *     quoted canonical lowercase hyphenated text;
 *   - binary: quoted standard base64 with padding.
 *
 * How: every writer writes at p, which must have room (the bounds are
 * given with each), and returns the position after the last byte written.
 * Nothing is NUL-terminated, nothing allocates. The hot writers (integers,
 * strings, timestamps, the common floats) are static inline here, so the
 * event encoder and the row printers compile them into their loops instead
 * of calling through the shared library's PLT; integers go two digits per
 * step from a pair table, strings copy 8-byte runs that need no escape
 * whole, and each thread remembers the text of the last date it wrote
 * (consecutive timestamps mostly share a day). The cold parts (the general
 * float case, base64, dates, times, decimals, uuids) are in
 * src/core/json_write.c.
 *
 * Ownership: none; the caller owns every buffer.
 */
#ifndef SHAPE_JSON_WRITE_H
#define SHAPE_JSON_WRITE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHAPE_JSON_F64_MAX 32 /* bytes a float can take (either style) */
#define SHAPE_JSON_TS_MAX 48  /* bytes a quoted timestamp can take */

/* ---- the float formatter --------------------------------------------------
 * The shortest decimal digits that read back (strtod) to x, laid out in one
 * of two styles:
 *   SHAPE_F64_REPR      Python's repr (the rules above): 20.0, 0.1, 1e-05,
 *                       1e+16, 1.5e+300; what every JSON writer uses;
 *   SHAPE_F64_PRINTF_G  C's "%.Ng" with the fewest N that reads back: 20,
 *                       0.1, 1e-05, 1e+02 (100: one digit is enough),
 *                       1e+16; the text of a real option handed to
 *                       librdkafka (options.c), kept as it always was.
 * NaN and infinities are written as `null` in both styles (neither caller
 * has another spelling for them: jansson holds no non-finite real, and the
 * profile document never gets one). Room: SHAPE_JSON_F64_MAX. */
enum shape_f64_style { SHAPE_F64_REPR = 0, SHAPE_F64_PRINTF_G = 1 };
char *shape_format_f64(char *p, double x, int style);

/* ---- cold writers (src/core/json_write.c) ---------------------------------
 * Room: SHAPE_JSON_SCALAR_MAX for every fixed-size one (dates, times,
 * decimals, uuids, and the numbers and timestamps below). */

#define SHAPE_JSON_SCALAR_MAX 64

/* Quoted standard base64 (with padding) of data[0..n). Room: 4 ((n+2)/3) + 2. */
char *shape_json_base64(char *p, const void *data, size_t n);
/* The unquoted date YYYY-MM-DD of days since 1970-01-01, without the
 * per-thread cache of shape_json_civil_date (same text). Room: 32. */
char *shape_json_civil_date_uncached(char *p, int64_t days);
/* Quoted "YYYY-MM-DD" of days since 1970-01-01. */
char *shape_json_date(char *p, int64_t days);
/* Quoted "HH:MM:SS[.fraction]" of `value` units since midnight (wrapped
 * into one day, floor division); unit_digits 0, 3, 6 or 9 (clamped to 0..9). */
char *shape_json_time(char *p, int64_t value, int unit_digits);
/* The unquoted decimal text of the 128-bit unscaled value hi:lo (two's
 * complement) with exactly `scale` fraction digits ("-1000.25"); scale 0
 * or negative: no point, -scale zeros appended (zero is "0" whatever the
 * scale). */
char *shape_decimal_text(char *p, int64_t hi, uint64_t lo, int32_t scale);
/* shape_decimal_text in quotes. */
char *shape_json_decimal(char *p, int64_t hi, uint64_t lo, int32_t scale);
/* The 36 characters of a uuid's canonical lowercase hyphenated text
 * (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), unquoted. */
char *shape_uuid_text(char *p, const uint8_t bytes[16]);
/* shape_uuid_text in quotes. */
char *shape_json_uuid(char *p, const uint8_t bytes[16]);

/* ---- hot writers (inline) -------------------------------------------------- */

/* "00".."99": integers are written two digits per step from the right. */
static const char shape_json_digit_pairs_[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline int shape_json_decimal_digits_(uint64_t v)
{
    int n = 1;
    for (;;) {
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
        v /= 10000;
        n += 4;
    }
}

/* Decimal v. Room: 20. */
static inline char *shape_json_u64(char *p, uint64_t v)
{
    int n = shape_json_decimal_digits_(v);
    char *q = p + n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, shape_json_digit_pairs_ + 2 * r, 2);
    }
    if (v >= 10)
        memcpy(q - 2, shape_json_digit_pairs_ + 2 * v, 2);
    else
        q[-1] = (char)('0' + v);
    return p + n;
}

/* Decimal v with '-' when negative. Room: 20. */
static inline char *shape_json_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return shape_json_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return shape_json_u64(p, (uint64_t)v);
}

/* The bytes of w that are '"', '\\' or below 0x20 (the bytes a JSON
 * string must escape), as their high bits: the classic "has a zero byte"
 * test applied to w ^ '"'s, w ^ '\\'s and w - 0x20s, looking only at bytes
 * below 0x80. A borrow can flag a byte above a true one, never below: the
 * lowest flag is exact. */
static inline uint64_t shape_json_needs_escape8_(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t hit = ((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20);
    return hit & ~w & highs;
}

static inline char *shape_json_escape_byte_(char *p, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    if (c == '"' || c == '\\') {
        *p++ = '\\';
        *p++ = (char)c;
    } else if (c < 0x20) {
        *p++ = '\\';
        switch (c) {
        case '\n': *p++ = 'n'; break;
        case '\r': *p++ = 'r'; break;
        case '\t': *p++ = 't'; break;
        case '\b': *p++ = 'b'; break;
        case '\f': *p++ = 'f'; break;
        default:
            memcpy(p, "u00", 3);
            p[3] = hex[c >> 4];
            p[4] = hex[c & 15];
            p += 5;
        }
    } else {
        *p++ = (char)c;
    }
    return p;
}

/* s[0..n) as a quoted JSON string. Room: 6 n + 2. A word at a time: a
 * clean word is copied whole; else it is written whole too, but only its
 * bytes below the first that needs escaping count, that byte is escaped,
 * and the next word starts after it (JSON text held in a string has a
 * quote every few bytes). */
static inline char *shape_json_string(char *p, const char *s, size_t n)
{
    *p++ = '"';
    size_t i = 0;
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t flags = shape_json_needs_escape8_(w);
        memcpy(p, &w, 8);
        if (!flags) {
            p += 8;
            i += 8;
        } else {
            size_t k = (size_t)__builtin_ctzll(flags) >> 3;
            p = shape_json_escape_byte_(p + k, (unsigned char)s[i + k]);
            i += k + 1;
        }
    }
    for (; i < n; i++) p = shape_json_escape_byte_(p, (unsigned char)s[i]);
    *p++ = '"';
    return p;
}

/* nd digits with the last k (k > 0) after a point: "12.34", "0.0012". */
static inline char *shape_json_point_(char *p, const char *digits, int nd, int k)
{
    if (nd <= k) { /* 0.0ddd */
        *p++ = '0';
        *p++ = '.';
        for (int z = 0; z < k - nd; z++) *p++ = '0';
        memcpy(p, digits, (size_t)nd);
        return p + nd;
    }
    memcpy(p, digits, (size_t)(nd - k));
    p += nd - k;
    *p++ = '.';
    memcpy(p, digits + nd - k, (size_t)k);
    return p + k;
}

/* x in repr style, `null` when not finite. Room: SHAPE_JSON_F64_MAX. The
 * values generators and decoders mostly meet (money with two decimals,
 * short decimals, integers) take a fast path: the first k with
 * round(x * 10^k) / 10^k == x gives the shortest digits, since n / 10^k
 * in doubles is exactly what parsing the text gives; the rest go to
 * shape_format_f64, which gives the same text for these too. */
static inline char *shape_json_f64(char *p, double x)
{
    static const double p10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    if (x != x || x - x != 0) {
        memcpy(p, "null", 4);
        return p + 4;
    }
    if (x == 0) { /* 0.0 and -0.0 */
        if (1 / x < 0) *p++ = '-';
        memcpy(p, "0.0", 3);
        return p + 3;
    }
    double ax = x < 0 ? -x : x;
    if (ax >= 1e-4 && ax < 1e15) {
        /* Money: when x < 1e13 two decimals are spaced wider than its ulp, so
         * a match at k = 2 with trailing zeros trimmed is the shortest form. */
        if (ax < 1e13 && x != (double)(int64_t)x) {
            double v = x * 100.0;
            int64_t n = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
            if ((double)n / 100.0 == x) {
                if (n < 0) {
                    *p++ = '-';
                    n = -n;
                }
                p = shape_json_u64(p, (uint64_t)n / 100);
                *p++ = '.';
                *p++ = (char)('0' + n / 10 % 10);
                if (n % 10) *p++ = (char)('0' + n % 10);
                return p;
            }
        }
        for (int k = 0; k <= 9; k++) {
            double v = x * p10[k];
            if (v > 9007199254740992.0 || v < -9007199254740992.0) break;
            int64_t n = (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
            if ((double)n / p10[k] != x) continue;
            if (n < 0) {
                *p++ = '-';
                n = -n;
            }
            char digits[24];
            int nd = (int)(shape_json_u64(digits, (uint64_t)n) - digits);
            if (k == 0) {
                memcpy(p, digits, (size_t)nd);
                p += nd;
                memcpy(p, ".0", 2);
                return p + 2;
            }
            return shape_json_point_(p, digits, nd, k);
        }
    }
    return shape_format_f64(p, x, SHAPE_F64_REPR);
}

static inline char *shape_json_put2_(char *p, unsigned v)
{
    memcpy(p, shape_json_digit_pairs_ + 2 * v, 2);
    return p + 2;
}

/* The unquoted date YYYY-MM-DD of days since 1970-01-01. Room: 32. Each
 * thread keeps the text of the last date it wrote (a four-digit year:
 * always 10 bytes); consecutive timestamps mostly fall on the same day. */
static inline char *shape_json_civil_date(char *p, int64_t days)
{
    static _Thread_local int64_t last_day = INT64_MIN;
    static _Thread_local char last_date[10];
    if (days == last_day) {
        memcpy(p, last_date, 10);
        return p + 10;
    }
    char *e = shape_json_civil_date_uncached(p, days);
    if (e - p == 10) {
        memcpy(last_date, p, 10);
        last_day = days;
    }
    return e;
}

/* A quoted timestamp of `value` units since the epoch (UTC): unit_digits is
 * 0 (s), 3 (ms), 6 (µs) or 9 (ns) (clamped to 0..9); zoned adds 'Z'.
 * Room: SHAPE_JSON_TS_MAX. */
static inline char *shape_json_timestamp(char *p, int64_t value, int unit_digits, int zoned)
{
    static const int64_t scale[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                    100000000, 1000000000};
    if (unit_digits < 0) unit_digits = 0;
    if (unit_digits > 9) unit_digits = 9;
    int64_t per_sec = scale[unit_digits], secs, frac;
    switch (unit_digits) { /* constant divisors for the common units */
    case 9: secs = value / 1000000000, frac = value % 1000000000; break;
    case 6: secs = value / 1000000, frac = value % 1000000; break;
    case 3: secs = value / 1000, frac = value % 1000; break;
    default: secs = value / per_sec, frac = value % per_sec;
    }
    if (frac < 0) {
        frac += per_sec;
        secs--;
    }
    int64_t day = secs / 86400, sod = secs % 86400;
    if (sod < 0) {
        sod += 86400;
        day--;
    }
    *p++ = '"';
    p = shape_json_civil_date(p, day);
    *p++ = 'T';
    p = shape_json_put2_(p, (unsigned)(sod / 3600));
    *p++ = ':';
    p = shape_json_put2_(p, (unsigned)(sod / 60 % 60));
    *p++ = ':';
    p = shape_json_put2_(p, (unsigned)(sod % 60));
    if (unit_digits > 0) {
        *p++ = '.';
        int i = unit_digits;
        for (; i >= 2; i -= 2) {
            memcpy(p + i - 2, shape_json_digit_pairs_ + 2 * (frac % 100), 2);
            frac /= 100;
        }
        if (i) p[0] = (char)('0' + frac);
        p += unit_digits;
    }
    if (zoned) *p++ = 'Z';
    *p++ = '"';
    return p;
}

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* event_json.c — events as JSON text: the value rules of spec-core §3.3 and
 * the flat / CloudEvents layouts.
 *
 * Why: every sink of `shape emit` writes these bytes, so they are written
 * once, here, fast (the hot path of `--sink null`: generation + encoding must
 * reach 1.5M events/s per core) and byte-identical to the reference's
 * json.dumps (compact separators, raw UTF-8, Python float repr).
 * How: renderers write straight into a caller buffer sized by an upper bound
 * (no per-byte checks). Floats take a fast path for the values generators
 * make (the first k with round(x * 10^k) / 10^k == x gives the shortest
 * digits, since n / 10^k in doubles is exactly what parsing the text gives)
 * and fall back to the shortest "%.*e" that reads back. Per table, the key
 * fragments (`{"a":`, `,"b":`, the `_shape_*` tail) are rendered once.
 * Integers go two digits per step from a pair table (no division per
 * digit), strings copy 8-byte runs that need no escape whole, and each
 * thread remembers the text of the last date it rendered (events of a
 * table come in time order, so most timestamps repeat the day). The
 * renderers are file-local so the encoder inlines them (the exported
 * shape_json_* are wrappers: calls between a shared library's exported
 * functions go through its PLT), and `_shape_event_time` is copied from
 * the text of its column rather than rendered a second time.
 * (Moved here from bench/generate.c, which now uses this module.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/event.h"

/* "00".."99": integers are written two digits per step from the right. */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static int decimal_digits(uint64_t v)
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

/* The renderers below are file-local (so the event encoder's calls are
 * inlined rather than going through the shared library's PLT); the
 * exported shape_json_* names are thin wrappers over them. */
static inline char *json_u64(char *p, uint64_t v)
{
    int n = decimal_digits(v);
    char *q = p + n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, digit_pairs + 2 * r, 2);
    }
    if (v >= 10)
        memcpy(q - 2, digit_pairs + 2 * v, 2);
    else
        q[-1] = (char)('0' + v);
    return p + n;
}

char *shape_json_u64(char *p, uint64_t v) { return json_u64(p, v); }

static inline char *json_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return json_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return json_u64(p, (uint64_t)v);
}

char *shape_json_i64(char *p, int64_t v) { return json_i64(p, v); }

/* The bytes of w that are '"', '\\' or below 0x20 (the bytes a JSON
 * string must escape), as their high bits: the classic "has a zero byte"
 * test applied to w ^ '"'s, w ^ '\\'s and w - 0x20s, looking only at bytes
 * below 0x80. A borrow can flag a byte above a true one, never below: the
 * lowest flag is exact. */
static inline uint64_t needs_escape8(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t hit = ((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20);
    return hit & ~w & highs;
}

static char *escape_byte(char *p, unsigned char c)
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

/* s[0..n) as a JSON string at p (room: 6 * n + 2). A word at a time: a
 * clean word is copied whole; else it is written whole too, but only its
 * bytes below the first that needs escaping count, that byte is escaped,
 * and the next word starts after it (JSON text held in a string has a
 * quote every few bytes). */
static inline char *json_string(char *p, const char *s, size_t n)
{
    *p++ = '"';
    size_t i = 0;
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t flags = needs_escape8(w);
        memcpy(p, &w, 8);
        if (!flags) {
            p += 8;
            i += 8;
        } else {
            size_t k = (size_t)__builtin_ctzll(flags) >> 3;
            p = escape_byte(p + k, (unsigned char)s[i + k]);
            i += k + 1;
        }
    }
    for (; i < n; i++) p = escape_byte(p, (unsigned char)s[i]);
    *p++ = '"';
    return p;
}

char *shape_json_string(char *p, const char *s, size_t n) { return json_string(p, s, n); }

/* General case of a float: shortest %.Ne that round-trips, in repr's layout. */
static char *f64_general(char *p, double x)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, x);
        if (strtod(tmp, NULL) == x) break;
    }
    char *e = strchr(tmp, 'e');
    int exp10 = atoi(e + 1);
    *e = 0;
    char mant[24];
    size_t m = 0;
    for (char *q = tmp; *q; q++)
        if (*q >= '0' && *q <= '9') mant[m++] = *q;
    while (m > 1 && mant[m - 1] == '0') m--;
    if (x < 0) *p++ = '-';
    if (exp10 < -4 || exp10 >= 16) {
        *p++ = mant[0];
        if (m > 1) {
            *p++ = '.';
            memcpy(p, mant + 1, m - 1);
            p += m - 1;
        }
        *p++ = 'e';
        *p++ = exp10 < 0 ? '-' : '+';
        int ax = exp10 < 0 ? -exp10 : exp10;
        if (ax >= 100) *p++ = (char)('0' + ax / 100);
        *p++ = (char)('0' + ax / 10 % 10);
        *p++ = (char)('0' + ax % 10);
        return p;
    }
    if (exp10 < 0) {
        *p++ = '0';
        *p++ = '.';
        for (int z = 0; z < -exp10 - 1; z++) *p++ = '0';
        memcpy(p, mant, m);
        return p + m;
    }
    for (int i = 0; i <= exp10; i++) *p++ = (size_t)i < m ? mant[i] : '0';
    *p++ = '.';
    if ((size_t)exp10 + 1 < m) {
        memcpy(p, mant + exp10 + 1, m - (size_t)exp10 - 1);
        return p + (m - (size_t)exp10 - 1);
    }
    *p++ = '0';
    return p;
}

static char *json_f64(char *p, double x)
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
                p = json_u64(p, (uint64_t)n / 100);
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
            int nd = (int)(json_u64(digits, (uint64_t)n) - digits);
            if (k == 0) {
                memcpy(p, digits, (size_t)nd);
                p += nd;
                memcpy(p, ".0", 2);
                return p + 2;
            }
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
    }
    return f64_general(p, x);
}

char *shape_json_f64(char *p, double x) { return json_f64(p, x); }

static char *put2(char *p, unsigned v)
{
    memcpy(p, digit_pairs + 2 * v, 2);
    return p + 2;
}

static char *civil_date(char *p, int64_t days)
{
    int64_t y;
    unsigned m, d;
    shape_gen_civil_from_days(days, &y, &m, &d);
    if (y >= 0 && y <= 9999) {
        p = put2(p, (unsigned)(y / 100));
        p = put2(p, (unsigned)(y % 100));
    } else {
        p += sprintf(p, "%lld", (long long)y);
    }
    *p++ = '-';
    p = put2(p, m);
    *p++ = '-';
    return put2(p, d);
}

/* Consecutive timestamps mostly fall on the same day: each thread keeps the
 * text of the last date it rendered (a four-digit year: always 10 bytes). */
static _Thread_local int64_t last_day = INT64_MIN;
static _Thread_local char last_date[10];

static inline char *json_civil_date(char *p, int64_t days)
{
    if (days == last_day) {
        memcpy(p, last_date, 10);
        return p + 10;
    }
    char *e = civil_date(p, days);
    if (e - p == 10) {
        memcpy(last_date, p, 10);
        last_day = days;
    }
    return e;
}

char *shape_json_civil_date(char *p, int64_t days) { return json_civil_date(p, days); }

static inline char *json_timestamp(char *p, int64_t value, int unit_digits, int zoned)
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
    p = json_civil_date(p, day);
    *p++ = 'T';
    p = put2(p, (unsigned)(sod / 3600));
    *p++ = ':';
    p = put2(p, (unsigned)(sod / 60 % 60));
    *p++ = ':';
    p = put2(p, (unsigned)(sod % 60));
    if (unit_digits > 0) {
        *p++ = '.';
        int i = unit_digits;
        for (; i >= 2; i -= 2) {
            memcpy(p + i - 2, digit_pairs + 2 * (frac % 100), 2);
            frac /= 100;
        }
        if (i) p[0] = (char)('0' + frac);
        p += unit_digits;
    }
    if (zoned) *p++ = 'Z';
    *p++ = '"';
    return p;
}

char *shape_json_timestamp(char *p, int64_t value, int unit_digits, int zoned)
{
    return json_timestamp(p, value, unit_digits, zoned);
}

char *shape_json_base64(char *p, const void *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = data;
    *p++ = '"';
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        *p++ = tab[v >> 18];
        *p++ = tab[v >> 12 & 63];
        *p++ = tab[v >> 6 & 63];
        *p++ = tab[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        *p++ = tab[v >> 18];
        *p++ = tab[v >> 12 & 63];
        *p++ = '=';
        *p++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        *p++ = tab[v >> 18];
        *p++ = tab[v >> 12 & 63];
        *p++ = tab[v >> 6 & 63];
        *p++ = '=';
    }
    *p++ = '"';
    return p;
}

static inline char *json_gen_value(char *p, const shape_gen_value *v)
{
    switch (v->kind) {
    case SHAPE_GEN_INT64: return json_i64(p, v->v.i);
    case SHAPE_GEN_FLOAT64: return json_f64(p, v->v.f);
    case SHAPE_GEN_STRING: return json_string(p, v->v.s, v->len);
    case SHAPE_GEN_TIMESTAMP_NS: return json_timestamp(p, v->v.i, 9, 0);
    case SHAPE_GEN_BOOL:
        if (v->v.b) {
            memcpy(p, "true", 4);
            return p + 4;
        }
        memcpy(p, "false", 5);
        return p + 5;
    default: memcpy(p, "null", 4); return p + 4;
    }
}

char *shape_json_gen_value(char *p, const shape_gen_value *v) { return json_gen_value(p, v); }

static inline size_t value_bound(const shape_gen_value *v)
{
    if (v->kind == SHAPE_GEN_STRING) return (size_t)v->len * 6 + 2;
    return SHAPE_JSON_TS_MAX;
}

size_t shape_event_value_bound(const shape_gen_value *v) { return value_bound(v); }

/* ---- tables and events ---------------------------------------------------- */

int shape_envelope_parse(const char *name, shape_envelope *out, shape_err *err)
{
    if (name && strcmp(name, "flat") == 0) {
        *out = SHAPE_ENVELOPE_FLAT;
        return SHAPE_OK;
    }
    if (name && strcmp(name, "cloudevents") == 0) {
        *out = SHAPE_ENVELOPE_CLOUDEVENTS;
        return SHAPE_OK;
    }
    return shape_err_set(err, SHAPE_EINVAL, "unknown envelope '%.40s'; choose from flat, cloudevents",
                         name ? name : "");
}

static int name_ok(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\') return 0;
    return 1;
}

int shape_event_table_init(shape_event_table *t, const char *name, const shape_gen_column *cols,
                           size_t ncols, int event_time_col, shape_err *err)
{
    static const char *const reserved[] = {"_shape_table", "_shape_seq", "_shape_event_time"};
    memset(t, 0, sizeof *t);
    if (ncols > SHAPE_GEN_MAX_COLUMNS || !name_ok(name) || strlen(name) > SHAPE_EVENT_KEY_FRAG - 8)
        return shape_err_set(err, SHAPE_EINVAL, "table '%.60s' cannot be rendered as events", name);
    t->name = name;
    t->cols = cols;
    t->ncols = ncols;
    t->event_time_col = event_time_col;
    for (size_t c = 0; c < ncols; c++) {
        for (size_t r = 0; r < 3; r++)
            if (strcmp(cols[c].name, reserved[r]) == 0)
                return shape_err_set(err, SHAPE_EINVAL,
                                     "table '%s' has a column named '%s', which is reserved", name,
                                     reserved[r]);
        if (!name_ok(cols[c].name) || strlen(cols[c].name) > SHAPE_EVENT_KEY_FRAG - 8)
            return shape_err_set(err, SHAPE_EINVAL, "table '%s' has a column name that cannot be rendered",
                                 name);
        t->key_len[c] = (uint8_t)snprintf(t->keys[c], sizeof t->keys[c], "%s\"%s\":", c ? "," : "{",
                                          cols[c].name);
    }
    t->tail_len = (size_t)snprintf(t->tail, sizeof t->tail, "%s\"_shape_table\":\"%s\",\"_shape_seq\":",
                                   ncols ? "," : "{", name);
    return SHAPE_OK;
}

size_t shape_event_bound(const shape_event_table *t, const shape_gen_row *row)
{
    /* (the name's share, 4 strlen(name), by its cap from shape_event_table_init:
     * no strlen per event) */
    size_t n = 3 * SHAPE_EVENT_KEY_FRAG + 4 * SHAPE_EVENT_KEY_FRAG + 256 + t->tail_len;
    for (size_t c = 0; c < t->ncols; c++)
        n += t->key_len[c] + value_bound(&row->values[c]);
    if (t->event_time_col >= 0) n += SHAPE_JSON_TS_MAX + 24;
    return n;
}

char *shape_event_key(char *p, const char *table, uint64_t seq)
{
    size_t n = strlen(table);
    memcpy(p, table, n);
    p[n] = '/';
    return json_u64(p + n + 1, seq);
}

static char *put_lit(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

static char *encode_flat(const shape_event_table *t, uint64_t seq, const shape_gen_row *row, char *p)
{
    /* `_shape_event_time` repeats a column's value: its text is copied from
     * where the column was rendered instead of being rendered twice. */
    const char *time_text = NULL;
    size_t time_len = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        /* Short key fragments are copied as a fixed 32 bytes (two vector
         * moves, no call); the bytes past the fragment are overwritten next,
         * and the bound's 3 SHAPE_EVENT_KEY_FRAG slack covers the last. */
        if (t->key_len[c] <= 32)
            memcpy(p, t->keys[c], 32);
        else
            memcpy(p, t->keys[c], t->key_len[c]);
        char *value = p + t->key_len[c];
        p = json_gen_value(value, &row->values[c]);
        if ((int)c == t->event_time_col) {
            time_text = value;
            time_len = (size_t)(p - value);
        }
    }
    memcpy(p, t->tail, t->tail_len);
    p = json_u64(p + t->tail_len, seq);
    if (t->event_time_col >= 0) {
        p = put_lit(p, ",\"_shape_event_time\":");
        if (time_text) {
            memcpy(p, time_text, time_len);
            p += time_len;
        } else {
            p = json_gen_value(p, &row->values[t->event_time_col]);
        }
    }
    *p++ = '}';
    return p;
}

char *shape_event_encode(const shape_event_table *t, shape_envelope env, uint64_t seq,
                         const shape_gen_row *row, char *p)
{
    if (env == SHAPE_ENVELOPE_FLAT) return encode_flat(t, seq, row, p);
    p = put_lit(p, "{\"specversion\":\"1.0\",\"id\":\"");
    p = shape_event_key(p, t->name, seq);
    p = put_lit(p, "\",\"source\":\"shape://shape\",\"type\":\"shape.");
    p = put_lit(p, t->name);
    p = put_lit(p, ".row\"");
    if (t->event_time_col >= 0 && row->values[t->event_time_col].kind != SHAPE_GEN_NULL) {
        p = put_lit(p, ",\"time\":");
        p = json_gen_value(p, &row->values[t->event_time_col]);
    }
    p = put_lit(p, ",\"datacontenttype\":\"application/json\",\"shapetable\":\"");
    p = put_lit(p, t->name);
    p = put_lit(p, "\",\"shapeseq\":");
    p = json_u64(p, seq);
    p = put_lit(p, ",\"data\":");
    p = encode_flat(t, seq, row, p);
    *p++ = '}';
    return p;
}

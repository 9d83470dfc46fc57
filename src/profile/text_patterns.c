/* text_patterns.c — the 12 text patterns of a text column's profile.
 *
 * Why: `patterns` counts the values that look like an e-mail address, a UUID,
 * an IP address, ... (reference/spec-core.md §1.10). The reference tests each
 * value against 12 regular expressions; we match by hand (no regex library:
 * a profile touches every value, and these shapes are simple enough to check
 * in one pass each).
 *
 * How: every matcher accepts the WHOLE value, ASCII character classes only
 * (\d = 0-9, \s = space \t \n \r \f \v). The definitions, as the reference's
 * expressions read:
 *   email    [A-Za-z0-9._%+-]+ @ [A-Za-z0-9.-]+ . [A-Za-z]{2,}
 *            (the top-level domain is what follows the last dot)
 *   uuid     8-4-4-4-12 hex digits
 *   ssn      ddd-dd-dddd
 *   mac      six hex pairs separated all by ':' or all by '-'
 *   ipv4     four dot-separated octets of 1-3 digits, value <= 255
 *            (leading zeros allowed, as [01]?\d\d? allows them)
 *   ipv6     h:h:h:h:h:h:h:h | h:…(1-7 groups):: | h:…(1-6 groups)::h |
 *            ::h:…(1-6 groups) | ::   (h = 1-4 hex digits)
 *   iban     2 upper letters, 2 digits, 1..30 of upper letters/digits
 *   postal   ddddd or ddddd-dddd
 *   date     dddd [-/] d{1,2} [-/] d{1,2}   (the two separators independent)
 *   phone    optional '+', then 7..20 of digits, whitespace, - ( ) .
 *   currency 3 upper letters
 *   language 2 lower letters, optionally '-' and 2 upper letters
 * Values longer than 200 bytes are not tested. A length check first rejects
 * most values for most patterns without looking at them.
 */
#include "shape/profile.h"

#include <string.h>

static const char *const names[SHAPE_PATTERN_COUNT] = {
    "email", "uuid", "ssn", "mac", "ipv4", "ipv6", "iban", "postal", "date", "phone", "currency", "language",
};

const char *shape_pattern_name(int pattern)
{
    return pattern >= 0 && pattern < SHAPE_PATTERN_COUNT ? names[pattern] : NULL;
}

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static int is_upper(uint8_t c) { return c >= 'A' && c <= 'Z'; }
static int is_lower(uint8_t c) { return c >= 'a' && c <= 'z'; }
static int is_alpha(uint8_t c) { return is_upper(c) || is_lower(c); }
static int is_hex(uint8_t c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static int is_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int all_of(const uint8_t *s, size_t n, int (*cls)(uint8_t))
{
    for (size_t i = 0; i < n; i++)
        if (!cls(s[i])) return 0;
    return 1;
}

static int is_email_local(uint8_t c)
{
    return is_alpha(c) || is_digit(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}

static int is_email_domain(uint8_t c) { return is_alpha(c) || is_digit(c) || c == '.' || c == '-'; }

static int match_email(const uint8_t *s, size_t n)
{
    const uint8_t *at = memchr(s, '@', n);
    if (!at || at == s) return 0;
    size_t local = (size_t)(at - s);
    if (!all_of(s, local, is_email_local)) return 0;
    const uint8_t *r = at + 1;
    size_t rn = n - local - 1;
    if (!all_of(r, rn, is_email_domain)) return 0;
    size_t dot = rn;
    while (dot > 0 && r[dot - 1] != '.') dot--;
    if (dot < 2) return 0; /* no dot, or nothing before it */
    size_t tld = rn - dot;
    return tld >= 2 && all_of(r + dot, tld, is_alpha);
}

/* Runs of `cls` of the given lengths separated by `sep`. */
static int groups(const uint8_t *s, size_t n, const int *lens, size_t count, uint8_t sep, int (*cls)(uint8_t))
{
    size_t at = 0;
    for (size_t g = 0; g < count; g++) {
        if (g) {
            if (at >= n || s[at] != sep) return 0;
            at++;
        }
        if (at + (size_t)lens[g] > n || !all_of(s + at, (size_t)lens[g], cls)) return 0;
        at += (size_t)lens[g];
    }
    return at == n;
}

static int match_uuid(const uint8_t *s, size_t n)
{
    static const int lens[] = {8, 4, 4, 4, 12};
    return n == 36 && groups(s, n, lens, 5, '-', is_hex);
}

static int match_ssn(const uint8_t *s, size_t n)
{
    static const int lens[] = {3, 2, 4};
    return n == 11 && groups(s, n, lens, 3, '-', is_digit);
}

static int match_mac(const uint8_t *s, size_t n)
{
    static const int lens[] = {2, 2, 2, 2, 2, 2};
    return n == 17 && (groups(s, n, lens, 6, ':', is_hex) || groups(s, n, lens, 6, '-', is_hex));
}

static int match_ipv4(const uint8_t *s, size_t n)
{
    size_t at = 0;
    for (int octet = 0; octet < 4; octet++) {
        if (octet) {
            if (at >= n || s[at] != '.') return 0;
            at++;
        }
        size_t start = at;
        int v = 0;
        while (at < n && is_digit(s[at]) && at - start < 3) v = v * 10 + (s[at++] - '0');
        if (at == start || v > 255) return 0;
    }
    return at == n;
}

/* `count` colon-separated groups of 1-4 hex digits filling s[0..n) exactly;
 * returns the number of groups, or -1. */
static int hex_groups(const uint8_t *s, size_t n)
{
    if (n == 0) return -1;
    int count = 0;
    size_t at = 0;
    for (;;) {
        size_t start = at;
        while (at < n && is_hex(s[at]) && at - start < 4) at++;
        if (at == start) return -1;
        count++;
        if (at == n) return count;
        if (s[at] != ':') return -1;
        at++;
        if (at == n) return -1; /* trailing single colon */
    }
}

static int match_ipv6(const uint8_t *s, size_t n)
{
    if (n < 2 || n > 39) return 0;
    if (n == 2) return s[0] == ':' && s[1] == ':';
    const uint8_t *dbl = NULL;
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == ':' && s[i + 1] == ':') {
            dbl = s + i;
            break;
        }
    if (!dbl) return hex_groups(s, n) == 8;
    size_t p = (size_t)(dbl - s);
    if (p == 0) { /* ::h:…, 1..6 groups */
        int g = hex_groups(s + 2, n - 2);
        return g >= 1 && g <= 6;
    }
    int before = hex_groups(s, p);
    if (p + 2 == n) return before >= 1 && before <= 7; /* h:…:: */
    if (before < 1 || before > 6) return 0;            /* h:…::h */
    return hex_groups(s + p + 2, n - p - 2) == 1;
}

static int is_upper_or_digit(uint8_t c) { return is_upper(c) || is_digit(c); }

static int match_iban(const uint8_t *s, size_t n)
{
    return n >= 5 && n <= 34 && is_upper(s[0]) && is_upper(s[1]) && is_digit(s[2]) && is_digit(s[3]) &&
           all_of(s + 4, n - 4, is_upper_or_digit);
}

static int match_postal(const uint8_t *s, size_t n)
{
    if (n == 5) return all_of(s, 5, is_digit);
    return n == 10 && all_of(s, 5, is_digit) && s[5] == '-' && all_of(s + 6, 4, is_digit);
}

static int match_date(const uint8_t *s, size_t n)
{
    if (n < 8 || n > 10 || !all_of(s, 4, is_digit) || (s[4] != '-' && s[4] != '/')) return 0;
    size_t at = 5, start = at;
    while (at < n && is_digit(s[at]) && at - start < 2) at++;
    if (at == start || at >= n || (s[at] != '-' && s[at] != '/')) return 0;
    at++;
    start = at;
    while (at < n && is_digit(s[at]) && at - start < 2) at++;
    return at > start && at == n;
}

static int is_phone(uint8_t c)
{
    return is_digit(c) || is_space(c) || c == '-' || c == '(' || c == ')' || c == '.';
}

static int match_phone(const uint8_t *s, size_t n)
{
    if (n && s[0] == '+') {
        s++;
        n--;
    }
    return n >= 7 && n <= 20 && all_of(s, n, is_phone);
}

static int match_currency(const uint8_t *s, size_t n) { return n == 3 && all_of(s, 3, is_upper); }

static int match_language(const uint8_t *s, size_t n)
{
    if (n != 2 && n != 5) return 0;
    if (!is_lower(s[0]) || !is_lower(s[1])) return 0;
    return n == 2 || (s[2] == '-' && is_upper(s[3]) && is_upper(s[4]));
}

unsigned shape_text_patterns(const uint8_t *s, size_t n)
{
    if (n > SHAPE_PATTERN_MAX_BYTES || n < 2) return 0;
    unsigned m = 0;
    if (n >= 6 && match_email(s, n)) m |= 1u << SHAPE_PATTERN_EMAIL;
    if (match_uuid(s, n)) m |= 1u << SHAPE_PATTERN_UUID;
    if (match_ssn(s, n)) m |= 1u << SHAPE_PATTERN_SSN;
    if (match_mac(s, n)) m |= 1u << SHAPE_PATTERN_MAC;
    if (n >= 7 && n <= 15 && match_ipv4(s, n)) m |= 1u << SHAPE_PATTERN_IPV4;
    if (match_ipv6(s, n)) m |= 1u << SHAPE_PATTERN_IPV6;
    if (match_iban(s, n)) m |= 1u << SHAPE_PATTERN_IBAN;
    if (match_postal(s, n)) m |= 1u << SHAPE_PATTERN_POSTAL;
    if (match_date(s, n)) m |= 1u << SHAPE_PATTERN_DATE;
    if (n >= 7 && match_phone(s, n)) m |= 1u << SHAPE_PATTERN_PHONE;
    if (match_currency(s, n)) m |= 1u << SHAPE_PATTERN_CURRENCY;
    if (match_language(s, n)) m |= 1u << SHAPE_PATTERN_LANGUAGE;
    return m;
}

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
 * Values longer than 200 bytes are not tested. Before any matcher runs, one
 * pass over the bytes ANDs a per-byte table of the patterns that byte may
 * appear in (with a mask of the patterns the length admits), stopping as
 * soon as nothing is left; only the surviving patterns' matchers run. Most
 * values (free text, JSON, timestamps) are rejected for all 12 within a few
 * bytes; one more bit, clear only for '@', rules out e-mail for values
 * without an '@'. The filter only ever drops patterns that could not
 * match, so the result is the matchers' (tests compare it with the
 * unfiltered path).
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

#define P(name) (1u << SHAPE_PATTERN_##name)
#define ALL_PATTERNS ((1u << SHAPE_PATTERN_COUNT) - 1)
/* Not a pattern: set for every byte but '@', so the AND over a value keeps
 * it only when the value has no '@' (then it cannot be an e-mail address). */
#define NO_AT (1u << SHAPE_PATTERN_COUNT)

/* The pre-filter: byte_allows[c] holds the patterns that can contain byte c
 * anywhere in a match (a superset of what each matcher accepts), so a value
 * is only handed to the matchers of the patterns every one of its bytes
 * allows. Built by the compiler from the rules below (standard C constant
 * expressions, expanded for c = 0..255). */
#define IN(c, lo, hi) ((c) >= (lo) && (c) <= (hi))
#define ALLOWS(c)                                                                                           \
    ((IN(c, '0', '9') ? P(EMAIL) | P(UUID) | P(SSN) | P(MAC) | P(IPV4) | P(IPV6) | P(IBAN) | P(POSTAL) |    \
                            P(DATE) | P(PHONE)                                                              \
                      : 0u) |                                                                               \
     (IN(c, 'A', 'F') || IN(c, 'a', 'f') ? P(UUID) | P(MAC) | P(IPV6) : 0u) |                              \
     (IN(c, 'A', 'Z') ? P(EMAIL) | P(IBAN) | P(CURRENCY) | P(LANGUAGE) : 0u) |                             \
     (IN(c, 'a', 'z') ? P(EMAIL) | P(LANGUAGE) : 0u) |                                                      \
     ((c) == '-' ? P(EMAIL) | P(UUID) | P(SSN) | P(MAC) | P(POSTAL) | P(DATE) | P(PHONE) | P(LANGUAGE)       \
                 : 0u) |                                                                                    \
     ((c) == '.' ? P(EMAIL) | P(IPV4) | P(PHONE) : 0u) | ((c) == ':' ? P(MAC) | P(IPV6) : 0u) |              \
     ((c) == '/' ? P(DATE) : 0u) | ((c) == '@' || (c) == '_' || (c) == '%' ? P(EMAIL) : 0u) |                \
     ((c) == '+' ? P(EMAIL) | P(PHONE) : 0u) |                                                              \
     ((c) == '(' || (c) == ')' || (c) == ' ' || IN(c, '\t', '\r') ? P(PHONE) : 0u) | ((c) == '@' ? 0u : NO_AT))
#define ALLOWS4(c) ALLOWS(c), ALLOWS((c) + 1), ALLOWS((c) + 2), ALLOWS((c) + 3)
#define ALLOWS16(c) ALLOWS4(c), ALLOWS4((c) + 4), ALLOWS4((c) + 8), ALLOWS4((c) + 12)
#define ALLOWS64(c) ALLOWS16(c), ALLOWS16((c) + 16), ALLOWS16((c) + 32), ALLOWS16((c) + 48)
static const uint16_t byte_allows[256] = {ALLOWS64(0), ALLOWS64(64), ALLOWS64(128), ALLOWS64(192)};

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

/* Every matcher, no pre-filter (the reference the filtered path must equal;
 * also the white-box hook shape_text_patterns_unfiltered_). */
static unsigned match_all(const uint8_t *s, size_t n, unsigned want)
{
    unsigned m = 0;
    if ((want & P(EMAIL)) && n >= 6 && match_email(s, n)) m |= P(EMAIL);
    if ((want & P(UUID)) && match_uuid(s, n)) m |= P(UUID);
    if ((want & P(SSN)) && match_ssn(s, n)) m |= P(SSN);
    if ((want & P(MAC)) && match_mac(s, n)) m |= P(MAC);
    if ((want & P(IPV4)) && n >= 7 && n <= 15 && match_ipv4(s, n)) m |= P(IPV4);
    if ((want & P(IPV6)) && match_ipv6(s, n)) m |= P(IPV6);
    if ((want & P(IBAN)) && match_iban(s, n)) m |= P(IBAN);
    if ((want & P(POSTAL)) && match_postal(s, n)) m |= P(POSTAL);
    if ((want & P(DATE)) && match_date(s, n)) m |= P(DATE);
    if ((want & P(PHONE)) && n >= 7 && match_phone(s, n)) m |= P(PHONE);
    if ((want & P(CURRENCY)) && match_currency(s, n)) m |= P(CURRENCY);
    if ((want & P(LANGUAGE)) && match_language(s, n)) m |= P(LANGUAGE);
    return m;
}

unsigned shape_text_patterns_unfiltered_(const uint8_t *s, size_t n)
{
    if (n > SHAPE_PATTERN_MAX_BYTES || n < 2) return 0;
    return match_all(s, n, ALL_PATTERNS);
}

/* length_allows[n]: the patterns whose length rule admits n bytes (a
 * superset of each matcher's own check), built the same way. */
#define LEN_ALLOWS(n)                                                                                        \
    (((n) >= 6 ? P(EMAIL) : 0u) | ((n) == 36 ? P(UUID) : 0u) | ((n) == 11 ? P(SSN) : 0u) |                   \
     ((n) == 17 ? P(MAC) : 0u) | (IN(n, 7, 15) ? P(IPV4) : 0u) | (IN(n, 2, 39) ? P(IPV6) : 0u) |               \
     (IN(n, 5, 34) ? P(IBAN) : 0u) | ((n) == 5 || (n) == 10 ? P(POSTAL) : 0u) | (IN(n, 8, 10) ? P(DATE) : 0u) | \
     (IN(n, 7, 21) ? P(PHONE) : 0u) | ((n) == 3 ? P(CURRENCY) : 0u) | ((n) == 2 || (n) == 5 ? P(LANGUAGE) : 0u))
#define LEN_ALLOWS4(n) LEN_ALLOWS(n), LEN_ALLOWS((n) + 1), LEN_ALLOWS((n) + 2), LEN_ALLOWS((n) + 3)
#define LEN_ALLOWS16(n) LEN_ALLOWS4(n), LEN_ALLOWS4((n) + 4), LEN_ALLOWS4((n) + 8), LEN_ALLOWS4((n) + 12)
#define LEN_ALLOWS64(n) LEN_ALLOWS16(n), LEN_ALLOWS16((n) + 16), LEN_ALLOWS16((n) + 32), LEN_ALLOWS16((n) + 48)
_Static_assert(SHAPE_PATTERN_MAX_BYTES < 256, "length_allows is indexed by the length");
static const uint16_t length_allows[256] = {LEN_ALLOWS64(0), LEN_ALLOWS64(64), LEN_ALLOWS64(128),
                                            LEN_ALLOWS64(192)};

unsigned shape_text_patterns(const uint8_t *s, size_t n)
{
    if (n > SHAPE_PATTERN_MAX_BYTES || n < 2) return 0;
    unsigned want = length_allows[n] | NO_AT;
    size_t i = 0;
    /* four bytes per step, then the rest; stop once no pattern is left */
    for (; i + 4 <= n && (want & ALL_PATTERNS); i += 4)
        want &= (unsigned)byte_allows[s[i]] & byte_allows[s[i + 1]] & byte_allows[s[i + 2]] & byte_allows[s[i + 3]];
    for (; i < n && (want & ALL_PATTERNS); i++) want &= byte_allows[s[i]];
    if (want & NO_AT) want &= ~P(EMAIL);
    want &= ALL_PATTERNS;
    return want ? match_all(s, n, want) : 0;
}

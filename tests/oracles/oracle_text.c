/* oracle_text.c — the oracle's own converters from Avro values to flat-JSON
 * text (see oracle_text.h).
 *
 * Why: an oracle that borrowed shape's renderers would agree with shape's
 * bugs. These are written plainly, for the oracle alone, favouring
 * obviousness over speed: the calendar walks whole 400-year cycles (each is
 * exactly 146097 days in the Gregorian calendar), then single years, then
 * months; decimals are converted by repeated division of the magnitude's
 * bytes by ten.
 */
#include "oracle_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAYS_PER_400_YEARS 146097

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q--;
    return q;
}

static int is_leap_year(int64_t year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

static int days_in_month(int64_t year, int month)
{
    static const int lengths[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap_year(year) ? 29 : lengths[month - 1];
}

static void civil_of_days(int64_t days, int64_t *year, int *month, int *day)
{
    int64_t cycles = floor_div(days, DAYS_PER_400_YEARS);
    int64_t rest = days - cycles * DAYS_PER_400_YEARS; /* 0 .. 146096 */
    int64_t y = 1970 + 400 * cycles;
    while (rest >= (is_leap_year(y) ? 366 : 365)) {
        rest -= is_leap_year(y) ? 366 : 365;
        y++;
    }
    int m = 1;
    while (rest >= days_in_month(y, m)) {
        rest -= days_in_month(y, m);
        m++;
    }
    *year = y;
    *month = m;
    *day = (int)rest + 1;
}

static int fits(int written, size_t cap)
{
    return written >= 0 && (size_t)written < cap ? 0 : -1;
}

static int write_civil_date(int64_t days, char *out, size_t cap)
{
    int64_t year;
    int month, day;
    civil_of_days(days, &year, &month, &day);
    const char *sign = year < 0 ? "-" : "";
    long long shown = year < 0 ? -(long long)year : (long long)year;
    return fits(snprintf(out, cap, "%s%04lld-%02d-%02d", sign, shown, month, day), cap);
}

int oracle_date_text(int64_t days, char *out, size_t cap)
{
    return write_civil_date(days, out, cap);
}

static int64_t ticks_per_second(int fraction_digits)
{
    int64_t t = 1;
    for (int i = 0; i < fraction_digits; i++) t *= 10;
    return t;
}

/* "HH:MM:SS" of a second of the day, then ".fraction" when digits > 0. */
static int write_clock(int64_t second_of_day, int64_t fraction, int fraction_digits, char *out, size_t cap)
{
    int written = snprintf(out, cap, "%02lld:%02lld:%02lld", (long long)(second_of_day / 3600),
                           (long long)(second_of_day / 60 % 60), (long long)(second_of_day % 60));
    if (fits(written, cap) != 0) return -1;
    if (fraction_digits == 0) return 0;
    return fits(snprintf(out + written, cap - (size_t)written, ".%0*lld", fraction_digits, (long long)fraction),
                cap - (size_t)written);
}

int oracle_time_text(int64_t ticks, int fraction_digits, char *out, size_t cap)
{
    int64_t per_second = ticks_per_second(fraction_digits);
    if (ticks < 0 || ticks >= 86400 * per_second)
        return fits(snprintf(out, cap, "<%lld ticks: not a time of day>", (long long)ticks), cap);
    return write_clock(ticks / per_second, ticks % per_second, fraction_digits, out, cap);
}

int oracle_timestamp_text(int64_t ticks, int fraction_digits, int utc, char *out, size_t cap)
{
    int64_t per_second = ticks_per_second(fraction_digits);
    int64_t seconds = floor_div(ticks, per_second);
    int64_t fraction = ticks - seconds * per_second;
    int64_t days = floor_div(seconds, 86400);
    int64_t second_of_day = seconds - days * 86400;
    if (write_civil_date(days, out, cap) != 0) return -1;
    size_t used = strlen(out);
    if (used + 1 >= cap) return -1;
    out[used++] = 'T';
    if (write_clock(second_of_day, fraction, fraction_digits, out + used, cap - used) != 0) return -1;
    used = strlen(out);
    if (!utc) return 0;
    if (used + 1 >= cap) return -1;
    out[used] = 'Z';
    out[used + 1] = '\0';
    return 0;
}

/* Divide the big-endian magnitude in place by 10; returns the remainder. */
static int divide_by_ten(uint8_t *magnitude, size_t len)
{
    unsigned remainder = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned current = remainder * 256u + magnitude[i];
        magnitude[i] = (uint8_t)(current / 10u);
        remainder = current % 10u;
    }
    return (int)remainder;
}

static int is_zero(const uint8_t *bytes, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (bytes[i] != 0) return 0;
    return 1;
}

/* The decimal digits of the unsigned big-endian magnitude, most significant
 * first, into digits (room len * 3 + 1); "" for zero. */
static void magnitude_digits(uint8_t *magnitude, size_t len, char *digits)
{
    size_t count = 0;
    while (!is_zero(magnitude, len)) digits[count++] = (char)('0' + divide_by_ten(magnitude, len));
    for (size_t i = 0; i < count / 2; i++) {
        char swap = digits[i];
        digits[i] = digits[count - 1 - i];
        digits[count - 1 - i] = swap;
    }
    digits[count] = '\0';
}

static void negate_twos_complement(uint8_t *bytes, size_t len)
{
    unsigned carry = 1;
    for (size_t i = len; i-- > 0;) {
        unsigned flipped = (uint8_t)~bytes[i] + carry;
        bytes[i] = (uint8_t)flipped;
        carry = flipped >> 8;
    }
}

/* Place the point `scale` digits from the right, padding with zeros so a
 * digit stands before the point. */
static int write_scaled(const char *digits, int negative, int scale, char *out, size_t cap)
{
    size_t count = strlen(digits);
    size_t width = count > (size_t)scale ? count : (size_t)scale + 1;
    size_t need = (negative ? 1 : 0) + width + (scale > 0 ? 1 : 0) + 1;
    if (need > cap) return -1;
    char *p = out;
    if (negative) *p++ = '-';
    for (size_t i = 0; i < width; i++) {
        if (scale > 0 && i == width - (size_t)scale) *p++ = '.';
        *p++ = i < width - count ? '0' : digits[i - (width - count)];
    }
    *p = '\0';
    return 0;
}

int oracle_decimal_text(const uint8_t *bytes, size_t len, int scale, char *out, size_t cap, int *digit_count)
{
    if (scale < 0) return -1;
    uint8_t *magnitude = malloc(len ? len : 1);
    char *digits = malloc(len * 3 + 1);
    if (!magnitude || !digits) {
        free(magnitude);
        free(digits);
        return -1;
    }
    if (len) memcpy(magnitude, bytes, len);
    int negative = len > 0 && (bytes[0] & 0x80);
    if (negative) negate_twos_complement(magnitude, len);
    magnitude_digits(magnitude, len, digits);
    *digit_count = (int)strlen(digits);
    int rc = write_scaled(digits, negative, scale, out, cap);
    free(magnitude);
    free(digits);
    return rc;
}

int oracle_base64_text(const uint8_t *bytes, size_t len, char *out, size_t cap)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if ((len + 2) / 3 * 4 + 1 > cap) return -1;
    char *p = out;
    for (size_t i = 0; i < len; i += 3) {
        size_t left = len - i;
        uint32_t group = (uint32_t)bytes[i] << 16;
        if (left > 1) group |= (uint32_t)bytes[i + 1] << 8;
        if (left > 2) group |= bytes[i + 2];
        *p++ = alphabet[group >> 18 & 63];
        *p++ = alphabet[group >> 12 & 63];
        *p++ = left > 1 ? alphabet[group >> 6 & 63] : '=';
        *p++ = left > 2 ? alphabet[group & 63] : '=';
    }
    *p = '\0';
    return 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int oracle_fit_fraction(const char *text, int fraction_digits, char *out, size_t cap)
{
    size_t len = strlen(text);
    const char *colon = strrchr(text, ':');
    if (!colon || !is_digit(colon[1]) || !is_digit(colon[2]) || len + (size_t)fraction_digits + 2 > cap) {
        if (len + 1 > cap) return -1;
        memcpy(out, text, len + 1);
        return 0;
    }
    size_t head = (size_t)(colon + 3 - text);
    memcpy(out, text, head);
    char *p = out + head;
    const char *rest = text + head;
    const char *given = "";
    size_t given_count = 0;
    if (*rest == '.') {
        given = rest + 1;
        while (is_digit(given[given_count])) given_count++;
        rest = given + given_count;
    }
    if (fraction_digits > 0) *p++ = '.';
    for (int i = 0; i < fraction_digits; i++) *p++ = (size_t)i < given_count ? given[i] : '0';
    size_t rest_len = strlen(rest);
    if ((size_t)(p - out) + rest_len + 1 > cap) return -1;
    memcpy(p, rest, rest_len + 1);
    return 0;
}

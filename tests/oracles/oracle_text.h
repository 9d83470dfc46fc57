/* oracle_text.h — the oracle's own text forms of Avro logical values.
 *
 * The avro oracle renders what avro-c decoded in the flat-JSON text forms
 * (dates, times, timestamps, decimals, base64) with these converters, which
 * are written for the oracle alone: they share no code with shape's
 * renderers, so an error in one is not repeated in the other.
 * Every function writes a NUL-terminated text into `out` (room `cap`) and
 * returns 0, or -1 when the text does not fit.
 */
#ifndef SHAPE_ORACLE_TEXT_H
#define SHAPE_ORACLE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* "YYYY-MM-DD" of a count of days since 1970-01-01 (proleptic Gregorian). */
int oracle_date_text(int64_t days, char *out, size_t cap);

/* "HH:MM:SS.f" of `ticks` since midnight, where one second has
 * 10^fraction_digits ticks (fraction_digits 3 or 6). */
int oracle_time_text(int64_t ticks, int fraction_digits, char *out, size_t cap);

/* "YYYY-MM-DDTHH:MM:SS.f" (+ "Z" when utc) of `ticks` since the epoch, one
 * second being 10^fraction_digits ticks (3 or 6). */
int oracle_timestamp_text(int64_t ticks, int fraction_digits, int utc, char *out, size_t cap);

/* Decimal text of a big-endian two's complement unscaled integer with
 * `scale` (>= 0) fraction digits; *digit_count receives the number of
 * significant digits of the unscaled value (0 for zero). */
int oracle_decimal_text(const uint8_t *bytes, size_t len, int scale, char *out, size_t cap,
                        int *digit_count);

/* Padded standard base64 of `len` bytes. */
int oracle_base64_text(const uint8_t *bytes, size_t len, char *out, size_t cap);

/* `text` (a time "HH:MM:SS[.f]" or timestamp "...THH:MM:SS[.f][Z]") with the
 * fraction of the seconds cut or zero-padded to exactly `fraction_digits`
 * digits: the expected value at the precision the Avro type carries. A
 * text without the HH:MM:SS shape is copied unchanged (it will not match). */
int oracle_fit_fraction(const char *text, int fraction_digits, char *out, size_t cap);

#endif

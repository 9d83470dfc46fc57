/* shape/timestamp.h — instants as int64 microseconds since the Unix epoch (UTC).
 *
 * Why: event times arrive as ISO-8601 text in message bodies and leave as
 * ISO-8601 text in JSON output; both directions must be exact, fast (hot path
 * of the decoder) and locale-free, so they are written here rather than with
 * strptime/timegm.
 *
 * Accepted text (the rules of Python's datetime.fromisoformat, which the
 * original tool used, plus up to 9 fraction digits):
 *   DATE                 YYYY-MM-DD                    midnight UTC
 *   DATE<sep>TIME[ZONE]  sep 'T', 't' or ' '
 *   TIME                 HH, HH:MM, HH:MM:SS, HH:MM:SS.F (1-9 digits, '.' or ',';
 *                        digits past microseconds are truncated)
 *   ZONE                 'Z'/'z', or +-HH[:MM[:SS[.ffffff]]], or +-HHMM; none means UTC
 * Fields are range-checked (month 1-12, day within its month, hour 0-23,
 * minute and second 0-59). Years 0001-9999.
 */
#ifndef SHAPE_TIMESTAMP_H
#define SHAPE_TIMESTAMP_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parse text[0..len) as above into *us. Returns 0, or -1 when it is not a
 * time (nothing is written then). */
int shape_parse_iso8601(const char *text, size_t len, int64_t *us);

/* Days since 1970-01-01 of a proleptic Gregorian date (no range check). */
int64_t shape_days_from_civil(int64_t year, unsigned month, unsigned day);
/* The proleptic Gregorian date of days since 1970-01-01 (any day). */
void shape_civil_from_days(int64_t days, int64_t *year, unsigned *month, unsigned *day);

/* Write "YYYY-MM-DDTHH:MM:SS.ffffffZ" (27 bytes + NUL) into buf (size >= 28).
 * Instants outside years 0001-9999 are written with as many year digits as
 * needed and a sign when negative. Returns the length written. */
int shape_format_iso8601_us(int64_t us, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

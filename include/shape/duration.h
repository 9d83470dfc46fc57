/* shape/duration.h — durations as the windowed stream profiler takes them
 * (--size, --slide, --gap, --allowed-lateness, --max-partition-skew).
 *
 * Why: one grammar for every duration option, exactly the reference's
 * (reference/spec-core.md §1.2), parsed from untrusted text (fuzzed:
 * tests/fuzz/fuzz_duration.c).
 * How: optional spaces, an unsigned decimal number (digits with an optional
 * ".digits"; no sign, no exponent), optional spaces, an optional unit
 * us | ms | s | m | h | d (none = seconds), optional spaces. The value is
 * converted to whole microseconds exactly (decimal arithmetic, no floating
 * point), rounding half to even: "500ms" = 500000, "2m" = 120000000,
 * "5" = 5000000, "250us" = 250, " 3 s " = 3000000.
 */
#ifndef SHAPE_DURATION_H
#define SHAPE_DURATION_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stdint.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse text as above into *us (left unchanged on refusal). Refused
 * (SHAPE_EINVAL) with "'TEXT' is not a duration (examples: ...)": empty,
 * "s", "1x", "-1s", "1 2", "1e3s", "abc", and values beyond about 292,000
 * years. `what` (may be NULL) prefixes the message, e.g. "--size". */
int shape_duration_parse(const char *text, const char *what, int64_t *us, shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* fuzz_rate_curve.c — libFuzzer target for the rate-curve file and the
 * --burst / --ramp parsers and the schedule built from them
 * (shape/emit_schedule.h).
 *
 * Why: a shape-rate-curve file and the shaping options are user text; an
 * accepted curve drives the sender's deadlines, so a curve that parses but
 * breaks the schedule's invariants (unsorted points, a negative rate, a
 * deadline that goes backwards) would pace a run wrongly without an error.
 * How: the input is parsed as a curve document, and (as a NUL-terminated
 * string) as a burst and a ramp. Invariants that abort when broken:
 *   - an accepted curve has 1..SHAPE_RATE_CURVE_MAX_POINTS points, times
 *     strictly increasing within [0, 86400), multipliers finite, >= 0, not
 *     all 0, and its value anywhere is finite and >= 0;
 *   - a schedule of that curve with the parsed burst and ramp, when it
 *     checks, gives finite, non-decreasing deadlines for increasing counts,
 *     and the count at a deadline is (within rounding) the count asked.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/emit_schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static shape_rate_curve curve;

static void check_curve(void)
{
    if (curve.n < 1 || curve.n > SHAPE_RATE_CURVE_MAX_POINTS) abort();
    int any = 0;
    for (size_t i = 0; i < curve.n; i++) {
        if (!(curve.t[i] >= 0 && curve.t[i] < SHAPE_DAY_SECONDS) || !(curve.m[i] >= 0) || !isfinite(curve.m[i]))
            abort();
        if (i && !(curve.t[i] > curve.t[i - 1])) abort();
        any |= curve.m[i] > 0;
    }
    if (!any) abort();
    for (double t = -3600; t < 2 * SHAPE_DAY_SECONDS; t += 7919.5) {
        double v = shape_rate_curve_at(&curve, t);
        if (!isfinite(v) || v < 0) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = 0;
    shape_err err;
    int have_curve = shape_rate_curve_parse(text, size, "fuzz", &curve, &err) == SHAPE_OK;
    if (have_curve) check_curve();
    shape_emit_schedule s;
    memset(&s, 0, sizeof s);
    s.rate = 100;
    s.curve = have_curve ? &curve : NULL;
    s.curve_start = size % 86400;
    if (shape_emit_burst_parse(text, &s.bursts[0], &err) == SHAPE_OK) s.nbursts = 1;
    if (shape_emit_ramp_parse(text, &s.ramps[0], &err) == SHAPE_OK) s.nramps = 1;
    if ((s.nbursts || s.nramps) && (s.bursts[0].start > 1e6 || s.ramps[0].start > 1e6 || s.bursts[0].duration > 1e6 ||
                                    s.ramps[0].duration > 1e6)) {
        free(text); /* far-off shapes: valid, but the walk below would take long */
        return 0;
    }
    if (shape_emit_schedule_check(&s, &err) == SHAPE_OK) {
        shape_schedule_cursor c = {0, 0};
        double last = 0;
        for (double n = 0; n < 5000; n += 97.25) {
            double d = shape_emit_schedule_due(&s, &c, n);
            if (!(d >= last) || !isfinite(d)) abort();
            double back = shape_emit_schedule_count(&s, d);
            if (fabs(back - n) > 1e-6 * (1 + n)) abort();
            last = d;
        }
    }
    free(text);
    return 0;
}

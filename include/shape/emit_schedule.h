/* shape/emit_schedule.h — the rate schedule of a paced `shape emit`: a base
 * rate shaped by bursts, ramps and a daily curve, with constant or Poisson
 * arrivals (spec-core §3.2, §3.5, the rate-curve file of §5).
 *
 * Why: a pipeline is tested by the traffic it meets in production: a Black
 * Friday burst, a ramp-up after a deploy, the day's curve, arrivals that
 * clump. The sender keeps absolute deadlines (t0 + due), so the schedule's
 * job is one function: at what run time is event number n due.
 * How (src/emit/schedule.c):
 *   - the rate at run time t is rate × burst(t) × ramp(t) × curve(t): a
 *     burst multiplies [START, START+DURATION) by MULT; a ramp goes linearly
 *     from FROM to TO over its window and TO holds after it (until the next
 *     ramp); the daily curve is piecewise linear over the time of day,
 *     wrapping at midnight, and t = 0 is `curve_start` seconds into the day;
 *   - between two breakpoints (a burst or ramp edge, a curve point) the rate
 *     is a product of linear functions, so the expected count N(t) = ∫ rate
 *     is a cubic there, integrated exactly; due(n) = N⁻¹(n) walks the
 *     segments (a cursor remembers where the last answer was, so the
 *     sender's ascending questions cost O(1) each) and inverts the cubic by
 *     bisection;
 *   - Poisson arrivals: event p's gap is an exponential draw with mean 1
 *     keyed by (seed, absolute position p), so the same positions get the
 *     same gaps on every run and after a resume; the sender asks due() of
 *     the sum of gaps instead of the count;
 *   - nothing here reads a clock: the schedule is a pure function, so its
 *     unit tests integrate it exactly.
 *
 * Ownership: plain caller-owned data; nothing to free.
 */
#ifndef SHAPE_EMIT_SCHEDULE_H
#define SHAPE_EMIT_SCHEDULE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHAPE_SCHEDULE_MAX_SHAPES 32   /* bursts, and ramps, each */
#define SHAPE_RATE_CURVE_MAX_POINTS 1440
#define SHAPE_DAY_SECONDS 86400.0
#define SHAPE_SCHEDULE_MAX_MULT 1e6   /* largest multiplier of a burst, ramp or curve point */
#define SHAPE_SCHEDULE_MIN_MULT 1e-6  /* smallest one above 0 (below it a stream is stopped in all but name) */

typedef struct shape_emit_burst {
    double start, duration, mult; /* run seconds; START >= 0, DURATION > 0, MULT > 0 */
} shape_emit_burst;

typedef struct shape_emit_ramp {
    double start, duration, from, to; /* FROM, TO >= 0 */
} shape_emit_ramp;

/* A daily curve: points sorted by time of day (seconds, [0, 86400)), no two
 * at one time, multipliers >= 0 and not all 0. */
typedef struct shape_rate_curve {
    char name[64];
    size_t n;
    double t[SHAPE_RATE_CURVE_MAX_POINTS];
    double m[SHAPE_RATE_CURVE_MAX_POINTS];
} shape_rate_curve;

typedef struct shape_emit_schedule {
    double rate;                     /* base events/s, > 0 */
    shape_emit_burst bursts[SHAPE_SCHEDULE_MAX_SHAPES];
    size_t nbursts;
    shape_emit_ramp ramps[SHAPE_SCHEDULE_MAX_SHAPES]; /* sorted by start once checked */
    size_t nramps;
    const shape_rate_curve *curve;   /* borrowed, or NULL (flat) */
    double curve_start;              /* time of day at run time 0, seconds */
    int poisson;                     /* arrivals: 0 constant, 1 Poisson */
    uint64_t seed;                   /* for the Poisson gaps */
} shape_emit_schedule;

/* Where the last due() answer was; zero it to start (or restart). */
typedef struct shape_schedule_cursor {
    double t;     /* a segment start */
    double count; /* N(t) */
} shape_schedule_cursor;

/* "START:DURATION:MULT" / "START:DURATION:FROM:TO" (seconds, numbers).
 * SHAPE_EINVAL naming the option and the rule otherwise. */
int shape_emit_burst_parse(const char *text, shape_emit_burst *out, shape_err *err);
int shape_emit_ramp_parse(const char *text, shape_emit_ramp *out, shape_err *err);

/* Overlapping bursts, overlapping ramps, a last ramp ending at 0, a base
 * rate that is not finite and > 0: SHAPE_EINVAL. Sorts the ramps. */
int shape_emit_schedule_check(shape_emit_schedule *s, shape_err *err);

/* 1 when the schedule is the plain constant rate (no shape, constant
 * arrivals): due(n) is then exactly n / rate. */
int shape_emit_schedule_is_constant(const shape_emit_schedule *s);

/* The rate (events/s) at run time t >= 0. */
double shape_emit_schedule_rate_at(const shape_emit_schedule *s, double t);

/* Expected events due by run time t: ∫0..t rate. */
double shape_emit_schedule_count(const shape_emit_schedule *s, double t);

/* The run time at which `count` events are due (INFINITY if never). c may
 * be NULL; with one, ascending questions resume where the last stopped. */
double shape_emit_schedule_due(const shape_emit_schedule *s, shape_schedule_cursor *c, double count);

/* The Poisson gap (exponential, mean 1) before the event at absolute
 * position `position` of a stream with this seed. */
double shape_emit_arrival_gap(uint64_t seed, uint64_t position);

/* A built-in curve ("flat", "business-hours") into *out: SHAPE_ENOTFOUND
 * when the name is not one. */
int shape_rate_curve_builtin(const char *name, shape_rate_curve *out, shape_err *err);

/* A shape-rate-curve document: {"format":"shape-rate-curve","version":1,
 * "points":[["HH:MM[:SS]", m], ...], "name"?, "description"?}; unknown keys,
 * a newer version, a bad time, a duplicate time, a negative multiplier or
 * all zero: SHAPE_EINVAL naming `what` (the file). */
int shape_rate_curve_parse(const char *text, size_t len, const char *what, shape_rate_curve *out, shape_err *err);
int shape_rate_curve_load(const char *path, shape_rate_curve *out, shape_err *err);

/* "HH:MM" or "HH:MM:SS" → seconds of the day, or -1 when it is not one. */
double shape_emit_time_of_day(const char *text);

/* The curve's multiplier at a time of day (seconds, any real: wraps). */
double shape_rate_curve_at(const shape_rate_curve *c, double tod);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

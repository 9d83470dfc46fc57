/* shape/clock.h — the one monotonic clock of the library and its commands.
 *
 * Why: pacing (emit), progress lines, back-off and time-outs all measure
 * elapsed time; they must agree on one clock that never jumps with the wall
 * clock (NTP, a user's `date -s`), and a deadline slept to must be the same
 * clock's. How: CLOCK_MONOTONIC in seconds as a double (ns resolution for
 * about 100 days of uptime), and an absolute-deadline sleep that resumes
 * after a signal, so a paced loop does not drift by the time it spends.
 */
#ifndef SHAPE_CLOCK_H
#define SHAPE_CLOCK_H

#include "shape/export.h"
SHAPE_API_BEGIN

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on the monotonic clock (an arbitrary origin: only differences mean anything). */
double shape_clock_now(void);

/* Sleep until shape_clock_now() >= deadline (at once when it is past);
 * signals do not cut the sleep short. */
void shape_clock_sleep_until(double deadline);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* clock.c — the monotonic clock (shape/clock.h).
 *
 * Why: one definition of "now" for pacing, progress and back-off.
 * How: clock_gettime / clock_nanosleep on CLOCK_MONOTONIC, the sleep with
 * TIMER_ABSTIME so that an interrupted sleep is simply restarted.
 */
#include "shape/clock.h"

#include <errno.h>
#include <time.h>

double shape_clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void shape_clock_sleep_until(double deadline)
{
    if (!(deadline > 0)) return;
    struct timespec ts;
    ts.tv_sec = (time_t)deadline;
    ts.tv_nsec = (long)((deadline - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

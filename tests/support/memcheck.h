/* tests/support/memcheck.h — how many cases a sampling loop runs, fewer
 * under valgrind's memcheck.
 *
 * Why: `make valgrind` runs every unit program under memcheck, which is
 * 20-100x slower, and a loop of tens of thousands of random cases spent
 * most of valgrind's CI time (test_json_write: ~350 s of ~560 s on a loaded
 * machine) on comparisons the plain and ASan runs make in full. What
 * memcheck is there to find — an invalid read or write, an uninitialised
 * value, a leak — shows in the first hundreds of cases of one code path as
 * well as in the ten-thousandth; the byte-for-byte verdict over every case
 * is the plain run's.
 * How: shape_test_cases(n) is n, or n / SHAPE_MEMCHECK_DIVISOR (at least 1)
 * when the program runs under valgrind (RUNNING_ON_VALGRIND, from valgrind's
 * client-request header when it is installed; else the SHAPE_UNDER_MEMCHECK
 * environment variable that tests/valgrind/run-emulator sets). Loops keep
 * their order and their seeds, so the cases memcheck sees are the first of
 * the full run's.
 */
#ifndef SHAPE_TEST_MEMCHECK_H
#define SHAPE_TEST_MEMCHECK_H

#include <stdlib.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define SHAPE_TEST_HAVE_VALGRIND_H 1
#endif
#endif

#define SHAPE_MEMCHECK_DIVISOR 20

static inline int shape_test_under_memcheck(void)
{
#ifdef SHAPE_TEST_HAVE_VALGRIND_H
    if (RUNNING_ON_VALGRIND) return 1;
#endif
    const char *e = getenv("SHAPE_UNDER_MEMCHECK");
    return e && *e && *e != '0';
}

static inline int shape_test_cases(int n)
{
    if (!shape_test_under_memcheck()) return n;
    int m = n / SHAPE_MEMCHECK_DIVISOR;
    return m > 0 ? m : 1;
}

#endif

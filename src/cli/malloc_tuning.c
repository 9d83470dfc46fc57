/* malloc_tuning.c — the `shape` command keeps the heap memory it has freed
 * for reuse instead of handing it back to the kernel after every batch.
 *
 * Why: a streaming command allocates and frees the same large blocks over
 * and over: librdkafka's fetch buffers (one per response, up to megabytes),
 * the messages of a batch, a batch's Arrow buffers, the emitter's encoded
 * sends. glibc's defaults give a block above its mmap threshold its own
 * mapping and trim a thread arena's top once 128 KiB of it is free, so each
 * such block is mapped, faulted in page by page, zeroed and unmapped again
 * on every round. On the 2-core VM of docs/PERFORMANCE.md that churn was
 * ~5,000 extra page faults and ~0.1 CPU-second per million messages read by
 * `shape stream-profile` (a tenth of its CPU), and half of `shape emit`'s
 * system time; the memory comes back on the next batch anyway, so a run's
 * peak resident size does not change.
 * How: before any command runs, main() fixes the mmap threshold at 32 MiB
 * (glibc's largest dynamic value; fixing it also stops the dynamic raising)
 * and the trim threshold at 64 MiB. A process whose environment already sets
 * glibc's malloc tunables (GLIBC_TUNABLES with glibc.malloc., or the
 * MALLOC_*_ variables) keeps the user's choice. Other C libraries, and
 * sanitizer or valgrind runs that replace malloc, ignore it.
 */
#include <stdlib.h>
#include <string.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/commands.h"

#define MMAP_THRESHOLD_BYTES (32 * 1024 * 1024)
#define TRIM_THRESHOLD_BYTES (64 * 1024 * 1024)

static int user_tuned_malloc(void)
{
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (tunables && strstr(tunables, "glibc.malloc.")) return 1;
    return getenv("MALLOC_MMAP_THRESHOLD_") || getenv("MALLOC_TRIM_THRESHOLD_") ||
           getenv("MALLOC_TOP_PAD_");
}

void shape_cli_tune_malloc(void)
{
#if defined(__GLIBC__)
    if (user_tuned_malloc()) return;
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES);
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES);
#endif
}

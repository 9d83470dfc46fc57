/* fuzz_duration.c — libFuzzer target for the duration grammar of the
 * window options (shape/duration.h).
 *
 * Why: --size, --slide, --gap, --allowed-lateness and --max-partition-skew
 * are untrusted text scanned by hand with integer arithmetic that must not
 * overflow (the sanitizers see signed overflow) and must mean the same
 * thing however it is spelled.
 * How: the input, NUL-terminated, is parsed. Invariants that abort:
 *   - a refusal leaves the output untouched and says "is not a duration";
 *   - an accepted value is >= 0, and the same text with spaces around it,
 *     and the value spelled "<N>us", parse to the same value.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/duration.h"

#define SENTINEL ((int64_t)0x5a5a5a5a5a5a5a5aLL)

static int parse(const char *text, int64_t *us)
{
    shape_err err = {0};
    *us = SENTINEL;
    int rc = shape_duration_parse(text, NULL, us, &err);
    if (rc != SHAPE_OK) {
        if (rc != SHAPE_EINVAL || *us != SENTINEL || !strstr(err.message, "is not a duration")) abort();
        return 0;
    }
    if (*us < 0) abort();
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256) return 0;
    char *text = malloc(size + 8);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int64_t us, again;
    if (parse(text, &us)) {
        char spaced[300];
        snprintf(spaced, sizeof spaced, "  %s ", text);
        if (!parse(spaced, &again) || again != us) abort();
        char spelled[40];
        snprintf(spelled, sizeof spelled, "%lldus", (long long)us);
        if (!parse(spelled, &again) || again != us) abort();
    }
    free(text);
    return 0;
}

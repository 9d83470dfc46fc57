/* profile_input.h — the files a person hands to profile-show and
 * profile-report, read into one shape; and the histogram both draw.
 *
 * Why: stream-profile leaves a profile in one of five forms — the document
 * (-o), a state (--state: SHPROFST bytes; with --split-by JSON lines of
 * {"state", "table"}), a windows file (--windows: JSON lines, one closed
 * window each, its "profile" a table document) and a window states file
 * (--window KIND --state: the same lines with the window's "state") — and
 * whoever looks at one should not have to know which it is.
 * How: the file is read whole; SHPROFST bytes are a state; a JSON object
 * with "tables" is a document; anything else is read as JSON lines, each
 * line classified by its keys (a torn last line, from a killed run, is
 * skipped with a note on stderr). States are loaded with the --top-n they
 * were made with and turned into their documents (split states as
 * shape_stream_split_document does, so they show like the split -o). The
 * result is the document's "tables" object, or the windows in file order.
 */
#ifndef SHAPE_CLI_PROFILE_INPUT_H
#define SHAPE_CLI_PROFILE_INPUT_H

#include <jansson.h>

#include "shape/error.h"

typedef struct shape_cli_profile_input {
    /* a document or a state: {"tables": {NAME: {"name", "rows", "columns"}}} (owned) */
    json_t *doc;
    /* a windows or window states file: an array of {"kind", "start_us",
     * "end_us", "rows", "partial" (when true), "table" (--split-by),
     * "profile": {"name", "rows", "columns"}} in file order (owned); NULL otherwise */
    json_t *windows;
    /* what the file was: "document", "state", "split state", "windows", "window states" */
    const char *form;
} shape_cli_profile_input;

/* Read path ("-": stdin); states are loaded with top_n. Errors name the
 * file (and the line of a JSON lines file). */
int shape_cli_profile_load(const char *path, int top_n, shape_cli_profile_input *in, shape_err *err);
void shape_cli_profile_input_free(shape_cli_profile_input *in);

/* The masses of *bins equal bins between a numeric column's lowest and
 * highest quantile (its "quantiles" object), read off the piecewise-linear
 * distribution through them; for an integer column spanning fewer values
 * than bins, one bin per integer (*bins lowered), from the step function.
 * mass has room for 64; *bins at most 64. Returns 0 when there is no
 * spread (fewer than two finite quantiles, or all equal: *lo = *hi then
 * when there is one). */
int shape_cli_histogram(const json_t *quantiles, int integers, double *mass, int *bins, double *lo, double *hi);

/* The windows grouped by their "table" (--split-by; "" for windows without
 * one), tables in order of first appearance, windows in file order (new). */
json_t *shape_cli_windows_by_table(const json_t *windows);

/* An instant in microseconds as ISO-8601 UTC text ("2023-11-14T22:13:20Z",
 * with the fraction when there is one). */
void shape_cli_fmt_instant_us(char *buf, size_t n, long long us);

#endif

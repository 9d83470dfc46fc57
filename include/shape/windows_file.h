/* shape/windows_file.h — the --windows OUT.jsonl file: one JSON line per
 * closed window, each window in the file once.
 *
 * Why: a windowed run delivers windows at least once (a run killed after a
 * window closed but before its checkpoint emits it again when resumed);
 * this file turns that into exactly once (reference/spec-core.md §1.9).
 * How: see windows_file.c. Lines have their keys sorted: end, end_us,
 * kind, partial (only when true), profile ({name, rows, columns}: the
 * table entry of the -o document), rows, start, start_us, and table (with
 * --split-by: one line per table per window, the key then includes it); ", " and ": "
 * separators, strict JSON.
 *
 * Ownership: the handle owns a copy of the path and the open file.
 */
#ifndef SHAPE_WINDOWS_FILE_H
#define SHAPE_WINDOWS_FILE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>

#include "shape/error.h"
#include "shape/stream_window.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_windows_file shape_windows_file;

/* Open (or create) path for appending: a torn last line is cut, partial
 * windows are dropped (the file is then replaced atomically), the windows
 * already there are remembered. A line that is not a window line is
 * refused (SHAPE_EINVAL, "... use another file"). */
int shape_windows_file_open(const char *path, shape_windows_file **out, shape_err *err);
void shape_windows_file_close(shape_windows_file *f);

/* Append w's line and flush it to the kernel, unless a final window with
 * the same (kind, start_us, end_us, table) is in the file (then *written = 0). */
int shape_windows_file_write(shape_windows_file *f, const shape_window_closed *w, int *written, shape_err *err);

/* Final windows the file holds (read at open and written since). */
size_t shape_windows_file_known(const shape_windows_file *f);

/* The line of w (with its newline), malloc'd. */
int shape_windows_file_line(const shape_window_closed *w, char **out, size_t *len, shape_err *err);

/* The window states file (`stream-profile --window KIND --state FILE`): the
 * same rules, each line {"end_us", "kind", ["partial",] "rows", "start_us",
 * "state"} with the window's profile state (shape_profile_state_save) in
 * base64, for `shape profile-merge`. */
int shape_window_states_file_open(const char *path, shape_windows_file **out, shape_err *err);
int shape_window_states_line(const shape_window_closed *w, char **out, size_t *len, shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

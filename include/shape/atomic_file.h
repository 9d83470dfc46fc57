/* shape/atomic_file.h — replace a file atomically and durably; read one whole.
 *
 * Why: outputs (the profile document) and checkpoints must never be seen
 * half-written: after a crash, power loss or a full disk the path holds
 * either its old content or the complete new one.
 *
 * How: write a temporary file in the same directory (so rename stays on one
 * file system), fsync it, rename it over the path, fsync the directory.
 * Only regular files are replaced: "-" means standard output, a character
 * device or FIFO (/dev/stdout, /dev/null, a named pipe) is written through,
 * a symbolic link is followed (its target replaced, the link kept; a
 * dangling one refused), and other kinds of file are refused.
 *
 * Ownership: `path` and `data` are only read during the call.
 */
#ifndef SHAPE_ATOMIC_FILE_H
#define SHAPE_ATOMIC_FILE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write data[0..len) to `path`, replacing any existing file atomically. The
 * new file gets mode 0666 minus the umask, or the old file's permission bits
 * when it replaces one. On any failure (SHAPE_EIO, SHAPE_EINVAL for an empty
 * path, SHAPE_ENOMEM) the old file is left as it was, the temporary file is
 * removed, and the message names the path and the step that failed. */
int shape_atomic_write(const char *path, const void *data, size_t len, shape_err *err);

/* Read the whole file at `path` into *out (malloc'd, *len bytes, plus a NUL
 * not counted in *len; the caller frees it). `what` names the file in
 * messages ("checkpoint", "state", "--windows"): "cannot read WHAT PATH:
 * reason" (SHAPE_EIO), "WHAT PATH is too large to read" (SHAPE_ENOMEM).
 * With `exists` non-NULL a missing file is no error: *exists = 0, *out =
 * NULL; otherwise it is refused like any other. */
int shape_file_read_all(const char *path, const char *what, char **out, size_t *len, int *exists, shape_err *err);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

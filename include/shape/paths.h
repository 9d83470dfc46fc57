/* shape/paths.h — a command's files checked before it does any work.
 *
 * Why: an output that is also the input (`stream-profile in.jsonl -o
 * in.jsonl`), two outputs on one path (`-o x --checkpoint x`) or an output
 * whose folder does not exist (`--state /nonexistent/x`, found only after
 * the whole topic was read) each lose a user's data or time. A command
 * names its files once, up front, and is refused before it reads or sends
 * anything.
 * How: two paths are the same file when both exist and share device and
 * inode, or, for a file not yet there, when they resolve to the same
 * absolute path (its folder resolved, so "./x" and "x" and a link to the
 * folder all agree). "-", character devices and FIFOs are streams, not
 * files: they may be named more than once. An output's folder must exist
 * and be writable. Every refusal is SHAPE_EINVAL and names both options.
 */
#ifndef SHAPE_PATHS_H
#define SHAPE_PATHS_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One file a command names: the option that names it ("-o", "--state",
 * "input"), the path (NULL or "" entries are skipped), and whether the
 * command writes it. */
typedef struct shape_path_use {
    const char *option;
    const char *path;
    int output;
} shape_path_use;

/* Refuse an output that is an input or another output, and an output
 * whose folder does not exist or cannot be written. */
int shape_paths_check(const shape_path_use *uses, size_t n, shape_err *err);

/* The local file a stream URI reads when it names one regular file
 * ("in.jsonl", "file:///tmp/in.jsonl"), else NULL (stdin, folders, globs,
 * other schemes). Points into uri. */
const char *shape_paths_uri_file(const char *uri);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

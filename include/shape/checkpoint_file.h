/* shape/checkpoint_file.h — reading and writing a checkpoint file: one
 * JSON object, replaced atomically, refused whole when it is damaged.
 *
 * Why: every resumable command (emit, stream-read, stream-profile) keeps its
 * progress in a small JSON document that outlives the run. They share one
 * way to store it, so that all of them refuse the same damage the same way:
 * not JSON, not an object, a key given twice (an edit that jansson would
 * otherwise resolve silently, last one wins), with a message that names the
 * file and ends in "use another file".
 * How: the whole file is read, then parsed by jansson with duplicate keys
 * refused (shape_checkpoint_parse, also the fuzz target's entry); saving
 * writes compact JSON plus a newline through shape_atomic_write (temp file
 * in the same folder, fsync, rename), so a crash leaves the old or the new
 * document, never half of one. What each document must hold is checked by
 * its owner (shape/stream_checkpoint.h, shape/emit.h).
 * Every saved document ends with a "checksum" member ("xxh3-128:HEX", over
 * the compact dump of the other members in their order): a number edited
 * by hand is refused ("does not match its checksum ... use another file").
 * Documents without one (written before shape had it) are read as before.
 * A run that resumes from a checkpoint holds its lock (PATH.lock, flock):
 * a second process on the same checkpoint is refused while the first runs.
 *
 * This header is one of the few that mention jansson's json_t (as an
 * incomplete struct): checkpoint documents are jansson values by design.
 */
#ifndef SHAPE_CHECKPOINT_FILE_H
#define SHAPE_CHECKPOINT_FILE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct json_t;

/* The bytes of a checkpoint file (len of them, no NUL needed) as a JSON
 * object: *doc is a new reference on success, NULL on refusal (SHAPE_EINVAL,
 * naming `path`, ending in "use another file"). */
int shape_checkpoint_parse(const char *bytes, size_t len, const char *path, struct json_t **doc, shape_err *err);

/* Load `path`: *doc = NULL (and SHAPE_OK) when the file does not exist;
 * SHAPE_EIO when it cannot be read; else as shape_checkpoint_parse. */
int shape_checkpoint_load(const char *path, struct json_t **doc, shape_err *err);

/* Save `doc` (which must not hold "checksum") as compact JSON with the
 * checksum member last, plus a newline, replacing `path` atomically. */
int shape_checkpoint_save(const char *path, const struct json_t *doc, shape_err *err);

/* Take the exclusive lock of checkpoint `path` (the file PATH.lock, created
 * when missing): *fd is its descriptor, held until shape_checkpoint_unlock.
 * Held by another process: SHAPE_EINVAL "checkpoint PATH is in use by
 * another shape process ...". The lock is released when the process ends,
 * also by a kill. */
int shape_checkpoint_lock(const char *path, int *fd, shape_err *err);

/* The identity of the regular file `file` a checkpoint's position counts
 * into, as a new JSON object {"dev","ino","size","mtime_ns","head"} (head:
 * XXH3-64 hex of its first SHAPE_CHECKPOINT_HEAD_BYTES bytes, or fewer when
 * it is shorter), or NULL when it is not a regular file or cannot be read. */
#define SHAPE_CHECKPOINT_HEAD_BYTES 4096
struct json_t *shape_checkpoint_file_identity(const char *file);

/* Refuse (SHAPE_EINVAL, naming the checkpoint `path`, the file and what
 * changed, ending in "use another file") resuming over `file` when it is
 * not the file `identity` (from shape_checkpoint_file_identity) describes:
 * another device or inode (replaced), shorter (truncated), other first
 * bytes (rewritten), or the same size with another modification time
 * (rewritten in place). A file that only grew is the same file. A
 * malformed identity is refused like any damaged checkpoint. */
int shape_checkpoint_check_file_identity(const char *path, const char *file, const struct json_t *identity,
                                         shape_err *err);

/* Release a lock from shape_checkpoint_lock (fd < 0: nothing), removing
 * PATH.lock. */
void shape_checkpoint_unlock(const char *path, int fd);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

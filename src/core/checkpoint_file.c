/* checkpoint_file.c — load, parse and save checkpoint documents
 * (shape/checkpoint_file.h).
 *
 * Why: one way for every resumable command to keep its progress on disk.
 * How: read the whole file (a missing file is "no checkpoint", not an
 * error), parse it with duplicate keys refused, and save through the atomic
 * write helper. The parser is what tests/fuzz/fuzz_checkpoint.c feeds.
 * The checksum: saving dumps the document compact (jansson keeps the
 * members in insertion order), hashes those bytes with XXH3-128 and splices
 * `,"checksum":"xxh3-128:HEX"` in before the closing brace; parsing takes
 * the member out and hashes the compact dump of what is left, which is the
 * same bytes for an untouched document (reals are dumped with 17
 * significant digits, so they round-trip) and different bytes for any
 * edited value. A document without the member (written before it existed)
 * is accepted as it is.
 * The lock: PATH.lock, created and flock'ed (LOCK_EX | LOCK_NB); after the
 * lock is held the file's inode is compared with the path's (another
 * process may have unlinked it in between: then try again), and release
 * unlinks it before closing, so no lock file outlives a clean run.
 * The file identity: fstat's device, inode, size and modification time plus
 * a hash of the first 4 KiB, taken from one descriptor so they describe one
 * file; a resumed position is only meaningful in that file or a longer one
 * with the same beginning.
 */
#include "shape/checkpoint_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <xxhash.h>

#include "shape/atomic_file.h"

#define CHECKSUM_KEY "checksum"
#define CHECKSUM_PREFIX "xxh3-128:"

/* "xxh3-128:" + 32 hex digits of the bytes. */
static void checksum_of(const char *bytes, size_t len, char out[sizeof CHECKSUM_PREFIX + 32])
{
    XXH128_hash_t h = XXH3_128bits(bytes, len);
    snprintf(out, sizeof CHECKSUM_PREFIX + 32, CHECKSUM_PREFIX "%016llx%016llx", (unsigned long long)h.high64,
             (unsigned long long)h.low64);
}

/* The document's "checksum" member checked against its other members, then
 * removed (the owners never see it). No member: accepted as it is. */
static int verify_checksum(json_t *d, const char *path, shape_err *err)
{
    json_t *member = json_object_get(d, CHECKSUM_KEY);
    if (!member) return SHAPE_OK;
    const char *theirs = json_string_value(member);
    if (!theirs)
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s has a checksum that is not a string: use another file",
                             path);
    char given[64];
    snprintf(given, sizeof given, "%.63s", theirs);
    json_object_del(d, CHECKSUM_KEY);
    char *text = json_dumps(d, JSON_COMPACT);
    if (!text) return shape_err_set(err, SHAPE_ENOMEM, "out of memory checking checkpoint %s", path);
    char ours[sizeof CHECKSUM_PREFIX + 32];
    checksum_of(text, strlen(text), ours);
    free(text);
    if (strcmp(given, ours) != 0)
        return shape_err_set(err, SHAPE_EINVAL,
                             "checkpoint %s does not match its checksum (it was edited or damaged): use another file",
                             path);
    return SHAPE_OK;
}

int shape_checkpoint_parse(const char *bytes, size_t len, const char *path, json_t **doc, shape_err *err)
{
    *doc = NULL;
    json_error_t jerr;
    json_t *d = json_loadb(bytes, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!d)
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s is not valid JSON (line %d): use another file", path,
                             jerr.line);
    if (!json_is_object(d)) {
        json_decref(d);
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s is not a JSON object: use another file", path);
    }
    int rc = verify_checksum(d, path, err);
    if (rc != SHAPE_OK) {
        json_decref(d);
        return rc;
    }
    *doc = d;
    return SHAPE_OK;
}

int shape_checkpoint_load(const char *path, json_t **doc, shape_err *err)
{
    *doc = NULL;
    char *bytes = NULL;
    size_t len = 0;
    int exists = 0;
    SHAPE_RETURN_NOT_OK(shape_file_read_all(path, "checkpoint", &bytes, &len, &exists, err));
    if (!exists) return SHAPE_OK;
    /* the whole file, then the same parser the fuzz target feeds */
    int rc = shape_checkpoint_parse(bytes, len, path, doc, err);
    free(bytes);
    return rc;
}

int shape_checkpoint_save(const char *path, const json_t *doc, shape_err *err)
{
    if (json_object_get(doc, CHECKSUM_KEY))
        return shape_err_set(err, SHAPE_EINTERNAL, "checkpoint %s: the document already holds a checksum", path);
    char *text = json_dumps(doc, JSON_COMPACT);
    if (!text) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
    size_t len = strlen(text);
    char sum[sizeof CHECKSUM_PREFIX + 32];
    checksum_of(text, len, sum);
    /* text ends in '}': splice the member in before it */
    size_t extra = strlen(",\"" CHECKSUM_KEY "\":\"\"}\n") + strlen(sum);
    char *out = malloc(len + extra + 1);
    if (!out) {
        free(text);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
    }
    int n = snprintf(out, len + extra + 1, "%.*s%s\"" CHECKSUM_KEY "\":\"%s\"}\n", (int)(len - 1), text,
                     len == 2 ? "" : ",", sum);
    free(text);
    int rc = shape_atomic_write(path, out, (size_t)n, err);
    free(out);
    return rc;
}

int shape_checkpoint_lock(const char *path, int *fd_out, shape_err *err)
{
    *fd_out = -1;
    size_t n = strlen(path) + 6;
    char *lock = malloc(n);
    if (!lock) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    snprintf(lock, n, "%s.lock", path);
    int rc = SHAPE_OK;
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
            rc = shape_err_set(err, SHAPE_EIO, "cannot create the lock file %s: %s", lock, strerror(errno));
            break;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            close(fd);
            rc = e == EWOULDBLOCK
                     ? shape_err_set(err, SHAPE_EINVAL,
                                     "checkpoint %s is in use by another shape process (%s is locked): wait for it "
                                     "to end, or give this run another checkpoint",
                                     path, lock)
                     : shape_err_set(err, SHAPE_EIO, "cannot lock %s: %s", lock, strerror(e));
            break;
        }
        struct stat held, named;
        if (fstat(fd, &held) == 0 && stat(lock, &named) == 0 && held.st_dev == named.st_dev &&
            held.st_ino == named.st_ino) {
            *fd_out = fd;
            break;
        }
        close(fd); /* unlinked by its last holder in between: take the new one */
    }
    if (rc == SHAPE_OK && *fd_out < 0) rc = shape_err_set(err, SHAPE_EIO, "cannot lock %s", lock);
    free(lock);
    return rc;
}

void shape_checkpoint_unlock(const char *path, int fd)
{
    if (fd < 0) return;
    size_t n = strlen(path) + 6;
    char *lock = malloc(n);
    if (lock) {
        snprintf(lock, n, "%s.lock", path);
        unlink(lock); /* while still held: a waiter that opened it retries */
        free(lock);
    }
    close(fd);
}

/* ---- the identity of a file a checkpoint counts into ----------------------- */

/* fstat and the hash of the first `head_len` bytes (all of the head when
 * head_len < 0) of an open file. */
static int identify_fd(int fd, struct stat *st, int64_t head_len, char head[17])
{
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) return -1;
    size_t want = head_len < 0 || head_len > SHAPE_CHECKPOINT_HEAD_BYTES ? SHAPE_CHECKPOINT_HEAD_BYTES
                                                                          : (size_t)head_len;
    char buf[SHAPE_CHECKPOINT_HEAD_BYTES];
    size_t got = 0;
    while (got < want) {
        ssize_t n = pread(fd, buf + got, want - got, (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        got += (size_t)n;
    }
    snprintf(head, 17, "%016llx", (unsigned long long)XXH3_64bits(buf, got));
    return 0;
}

json_t *shape_checkpoint_file_identity(const char *file)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    char head[17];
    int ok = identify_fd(fd, &st, -1, head) == 0;
    close(fd);
    if (!ok) return NULL;
    return json_pack("{s:I, s:I, s:I, s:I, s:s}", "dev", (json_int_t)st.st_dev, "ino", (json_int_t)st.st_ino,
                     "size", (json_int_t)st.st_size, "mtime_ns",
                     (json_int_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, "head", head);
}

int shape_checkpoint_check_file_identity(const char *path, const char *file, const json_t *identity, shape_err *err)
{
    json_t *dev = json_object_get(identity, "dev"), *ino = json_object_get(identity, "ino");
    json_t *size = json_object_get(identity, "size"), *mtime = json_object_get(identity, "mtime_ns");
    const char *head = json_string_value(json_object_get(identity, "head"));
    if (!json_is_object(identity) || !json_is_integer(dev) || !json_is_integer(ino) || !json_is_integer(size) ||
        json_integer_value(size) < 0 || !json_is_integer(mtime) || !head || strlen(head) != 16)
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s has a damaged file identity: use another file", path);
    const char *changed = NULL;
    int fd = file ? open(file, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    char ours[17];
    if (fd < 0 || identify_fd(fd, &st, json_integer_value(size), ours) != 0)
        changed = "is gone or no longer a regular file";
    else if ((json_int_t)st.st_dev != json_integer_value(dev) || (json_int_t)st.st_ino != json_integer_value(ino))
        changed = "was replaced by another file (other device or inode)";
    else if ((json_int_t)st.st_size < json_integer_value(size))
        changed = "was truncated (it is shorter than when the checkpoint was taken)";
    else if (strcmp(ours, head) != 0)
        changed = "was rewritten (its first bytes differ)";
    else if ((json_int_t)st.st_size == json_integer_value(size) &&
             (json_int_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != json_integer_value(mtime))
        changed = "was rewritten in place (same size, another modification time)";
    if (fd >= 0) close(fd);
    if (!changed) return SHAPE_OK;
    return shape_err_set(err, SHAPE_EINVAL,
                         "checkpoint %s counts into %.200s, which %s since: its position means nothing there; use "
                         "another file (or remove the checkpoint to read it from the start)",
                         path, file ? file : "the input file", changed);
}

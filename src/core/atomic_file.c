/* atomic_file.c — write a file so that readers see the old or the new
 * content, never a mix, even across a crash.
 *
 * Why: the profile document and checkpoints are replaced while other
 * processes (or a restarted run) may read them; a torn file would lose a
 * run's work or resume it from garbage.
 *
 * How: the classic sequence —
 *   1. create "<path>.tmp.<pid>.<n>" with O_CREAT|O_EXCL in the target's
 *      directory (retrying another n if the name exists), mode 0666 so the
 *      umask applies, or the old file's permission bits when there is one;
 *   2. write everything (looping over short writes and EINTR), fsync, close;
 *   3. rename over the path (atomic on POSIX file systems);
 *   4. open the directory and fsync it, so the rename itself is durable.
 * Any failure before the rename unlinks the temporary file and leaves the
 * old file untouched; a failure of the directory fsync is reported (the new
 * content is in place but may not survive a power loss).
 * Only a regular file (or a path that does not exist yet) is replaced so.
 * "-" is standard output; a character device or a FIFO (/dev/stdout,
 * /dev/null, a named pipe) is written through, as `>` in a shell would;
 * a symbolic link is followed deliberately: the file it points to is
 * replaced and the link is kept (a dangling link is refused); anything
 * else (a directory, a block device, a socket) is refused by name.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "shape/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(shape_err *err, const char *step, const char *path, int e)
{
    return shape_err_set(err, SHAPE_EIO, "cannot write '%s': %s failed: %s", path, step, strerror(e));
}

/* The directory part of path ("." when there is none), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        size_t chunk = len > ((size_t)1 << 30) ? ((size_t)1 << 30) : len;
        ssize_t n = write(fd, p, chunk);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) {
            errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Standard output, a character device or a FIFO: written through, in
 * order, with nothing renamed (there is nothing to be atomic about). */
static int write_through(const char *path, int fd, const void *data, size_t len, shape_err *err)
{
    int own = fd < 0;
    if (own && (fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)) < 0) return fail(err, "open", path, errno);
    int e = write_all(fd, data, len) != 0 ? errno : 0;
    if (own && close(fd) != 0 && !e) e = errno;
    return e ? fail(err, "write", path, e) : SHAPE_OK;
}

static int replace_regular(const char *path, const void *data, size_t len, shape_err *err);

int shape_atomic_write(const char *path, const void *data, size_t len, shape_err *err)
{
    if (!path || !*path) return shape_err_set(err, SHAPE_EINVAL, "cannot write a file with an empty path");
    if (strcmp(path, "-") == 0) {
        fflush(stdout); /* what the process printed before comes first */
        return write_through("standard output", STDOUT_FILENO, data, len, err);
    }
    size_t plen = strlen(path);
    if (path[plen - 1] == '/') return shape_err_set(err, SHAPE_EINVAL, "cannot write '%s': it names a directory", path);
    struct stat st;
    if (lstat(path, &st) != 0) return replace_regular(path, data, len, err); /* a new file (or an error there) */
    if (S_ISLNK(st.st_mode)) {
        char *target = realpath(path, NULL);
        if (!target)
            return shape_err_set(err, SHAPE_EIO, "cannot write '%s': it is a symbolic link to a missing file (%s)",
                                 path, strerror(errno));
        int rc = shape_atomic_write(target, data, len, err); /* the file the link points to */
        free(target);
        return rc;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_through(path, -1, data, len, err);
    if (S_ISDIR(st.st_mode)) return shape_err_set(err, SHAPE_EIO, "cannot write '%s': it is a directory", path);
    if (!S_ISREG(st.st_mode))
        return shape_err_set(err, SHAPE_EIO, "cannot write '%s': it is a %s, not a file (shape replaces only regular files)",
                             path, S_ISBLK(st.st_mode) ? "block device" : "socket");
    return replace_regular(path, data, len, err);
}

/* The rename sequence of the header comment, for a regular file or a new one. */
static int replace_regular(const char *path, const void *data, size_t len, shape_err *err)
{
    size_t plen = strlen(path);
    mode_t mode = 0666;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return shape_err_set(err, SHAPE_EIO, "cannot write '%s': it is a directory", path);
        mode = st.st_mode & 07777;
    }
    char *tmp = malloc(plen + 64);
    if (!tmp) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing '%s'", path);
    int fd = -1;
    for (unsigned attempt = 0; attempt < 1000; attempt++) {
        snprintf(tmp, plen + 64, "%s.tmp.%ld.%u", path, (long)getpid(), attempt);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST) break;
    }
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return fail(err, "creating a temporary file", path, e);
    }
    int e = 0;
    const char *step = NULL;
    if (mode != 0666 && fchmod(fd, mode) != 0) {
        e = errno;
        step = "setting permissions";
    } else if (write_all(fd, data, len) != 0) {
        e = errno;
        step = "write";
    } else if (fsync(fd) != 0) {
        e = errno;
        step = "fsync";
    }
    if (close(fd) != 0 && !step) {
        e = errno;
        step = "close";
    }
    if (!step && rename(tmp, path) != 0) {
        e = errno;
        step = "rename";
    }
    if (step) {
        unlink(tmp);
        free(tmp);
        return fail(err, step, path, e);
    }
    free(tmp);
    char *dir = dir_of(path);
    if (!dir) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing '%s'", path);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        e = errno;
        free(dir);
        return fail(err, "opening its directory to sync it", path, e);
    }
    int rc = SHAPE_OK;
    if (fsync(dfd) != 0 && errno != EINVAL) /* some file systems cannot sync a directory */
        rc = fail(err, "fsync of its directory", path, errno);
    close(dfd);
    free(dir);
    return rc;
}

/* ---- reading a whole file ---------------------------------------------------- */

int shape_file_read_all(const char *path, const char *what, char **out, size_t *len, int *exists, shape_err *err)
{
    *out = NULL;
    *len = 0;
    if (exists) *exists = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT && exists) return SHAPE_OK;
        return shape_err_set(err, SHAPE_EIO, "cannot read %s %s: %s", what, path, strerror(errno));
    }
    if (exists) *exists = 1;
    char *bytes = NULL;
    size_t n = 0, cap = 0;
    int rc = SHAPE_OK;
    for (;;) {
        if (cap - n < 2) { /* room for more and the closing NUL */
            char *more = cap < ((size_t)1 << 40) ? realloc(bytes, cap ? 2 * cap : 65536) : NULL;
            if (!more) {
                rc = shape_err_set(err, SHAPE_ENOMEM, "%s %s is too large to read", what, path);
                break;
            }
            bytes = more;
            cap = cap ? 2 * cap : 65536;
        }
        size_t got = fread(bytes + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) rc = shape_err_set(err, SHAPE_EIO, "cannot read %s %s: %s", what, path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc != SHAPE_OK) {
        free(bytes);
        return rc;
    }
    bytes[n] = '\0';
    *out = bytes;
    *len = n;
    return SHAPE_OK;
}

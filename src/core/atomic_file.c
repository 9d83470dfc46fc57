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
 */
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

int shape_atomic_write(const char *path, const void *data, size_t len, shape_err *err)
{
    if (!path || !*path) return shape_err_set(err, SHAPE_EINVAL, "cannot write a file with an empty path");
    size_t plen = strlen(path);
    if (path[plen - 1] == '/') return shape_err_set(err, SHAPE_EINVAL, "cannot write '%s': it names a directory", path);
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

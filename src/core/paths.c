/* paths.c — a command's input and output files checked up front
 * (shape/paths.h).
 *
 * Why: refuse before any work what would overwrite an input, leave one of
 * two outputs, or fail only at the end.
 * How: each path gets an identity: (device, inode) when it exists, else the
 * canonical path of its folder joined with its last component. Streams
 * ("-", character devices, FIFOs) have none and are never compared. Pairs
 * with an output in them are compared; an output's folder is checked with
 * access(W_OK).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "shape/paths.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct identity {
    int known;       /* 0: a stream, or a path that cannot be resolved */
    int exists;
    dev_t dev;
    ino_t ino;
    char *canonical; /* for a file not there yet */
} identity;

/* The folder of path ("." when it has none) and its last component. */
static void split(const char *path, char *dir, size_t size, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, size, ".");
        *base = path;
    } else if (slash == path) {
        snprintf(dir, size, "/");
        *base = slash + 1;
    } else {
        snprintf(dir, size, "%.*s", (int)(slash - path), path);
        *base = slash + 1;
    }
}

static void identify(const char *path, identity *id)
{
    memset(id, 0, sizeof *id);
    if (strcmp(path, "-") == 0) return;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return;
        id->known = id->exists = 1;
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return;
    }
    char dir[PATH_MAX];
    const char *base;
    split(path, dir, sizeof dir, &base);
    char *real = realpath(dir, NULL);
    if (!real) return;
    size_t n = strlen(real) + strlen(base) + 2;
    id->canonical = malloc(n);
    if (id->canonical) {
        snprintf(id->canonical, n, "%s/%s", strcmp(real, "/") == 0 ? "" : real, base);
        id->known = 1;
    }
    free(real);
}

static int same(const identity *a, const identity *b)
{
    if (!a->known || !b->known || a->exists != b->exists) return 0;
    if (a->exists) return a->dev == b->dev && a->ino == b->ino;
    return strcmp(a->canonical, b->canonical) == 0;
}

static int check_folder(const shape_path_use *u, shape_err *err)
{
    if (strcmp(u->path, "-") == 0) return SHAPE_OK;
    char dir[PATH_MAX];
    const char *base;
    split(u->path, dir, sizeof dir, &base);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return shape_err_set(err, SHAPE_EINVAL, "%s %s: the folder %s does not exist (create it first)", u->option,
                             u->path, dir);
    if (access(dir, W_OK) != 0)
        return shape_err_set(err, SHAPE_EINVAL, "%s %s: the folder %s is not writable (%s)", u->option, u->path, dir,
                             strerror(errno));
    if (!*base) return shape_err_set(err, SHAPE_EINVAL, "%s %s names a folder, not a file", u->option, u->path);
    return SHAPE_OK;
}

int shape_paths_check(const shape_path_use *uses, size_t n, shape_err *err)
{
    identity *ids = calloc(n ? n : 1, sizeof *ids);
    if (!ids) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    int rc = SHAPE_OK;
    for (size_t i = 0; i < n; i++)
        if (uses[i].path && uses[i].path[0]) identify(uses[i].path, &ids[i]);
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) {
        if (!uses[i].path || !uses[i].path[0] || !uses[i].output) continue;
        rc = check_folder(&uses[i], err);
        for (size_t j = 0; rc == SHAPE_OK && j < n; j++) {
            if (j == i || !uses[j].path || !uses[j].path[0] || !same(&ids[i], &ids[j])) continue;
            if (!uses[j].output)
                rc = shape_err_set(err, SHAPE_EINVAL, "%s %s is also the input (%s): shape never writes over what it reads",
                                   uses[i].option, uses[i].path, uses[j].option);
            else if (j < i)
                rc = shape_err_set(err, SHAPE_EINVAL, "%s and %s name the same file (%s): give each its own",
                                   uses[j].option, uses[i].option, uses[i].path);
        }
    }
    for (size_t i = 0; i < n; i++) free(ids[i].canonical);
    free(ids);
    return rc;
}

const char *shape_paths_uri_file(const char *uri)
{
    if (!uri || strcmp(uri, "-") == 0) return NULL;
    const char *path = strncmp(uri, "file://", 7) == 0 ? uri + 7 : uri;
    if (path == uri && strstr(uri, "://")) return NULL; /* another scheme */
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? path : NULL;
}

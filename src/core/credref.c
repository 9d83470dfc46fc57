/* credref.c — resolve env://, file:// and kv:// credential references.
 *
 * Why: secrets reach shape only through references (shape/credref.h), so
 * this is the one place that touches a secret's bytes on their way in; it
 * must never put them into a message and should not leave copies behind.
 * How: the scheme picks a resolver. env:// copies the variable. file://
 * opens the file once and checks the permission bits on that open file
 * (fstat, so a swap between check and read is not possible), reads it into
 * a buffer that is wiped whenever it is grown or dropped, and strips one
 * trailing line ending. kv:// is only form-checked: no secret store is
 * built in. Messages name the scheme and the variable or path only.
 */
#define _DEFAULT_SOURCE /* explicit_bzero in glibc's <string.h> */
#include "shape/credref.h"
#include "shape/utf8.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if (defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 25))) || \
    defined(__OpenBSD__) || defined(__FreeBSD__)
#define HAVE_EXPLICIT_BZERO 1
#endif

/* A credential file larger than this is not a credential. */
#define CRED_FILE_MAX ((size_t)1024 * 1024)

static const char NOT_A_REFERENCE[] =
    "not a credential reference (env://NAME, file://PATH or kv://VAULT/NAME)";

static void wipe(void *p, size_t n)
{
#ifdef HAVE_EXPLICIT_BZERO
    explicit_bzero(p, n);
#else
    volatile unsigned char *v = p;
    while (n--) *v++ = 0;
#endif
}

void shape_secret_free(char *secret)
{
    if (!secret) return;
    wipe(secret, strlen(secret));
    free(secret);
}

/* Length of the scheme when s starts with env://, file:// or kv://, else 0. */
static size_t scheme_len(const char *s)
{
    static const char *const schemes[] = {"env", "file", "kv"};
    if (!s) return 0;
    const char *sep = strstr(s, "://");
    if (!sep) return 0;
    size_t n = (size_t)(sep - s);
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
        if (strlen(schemes[i]) == n && strncmp(s, schemes[i], n) == 0) return n;
    return 0;
}

int shape_credref_is_reference(const char *s)
{
    return scheme_len(s) != 0;
}

static int resolve_env(const char *name, char **out, shape_err *err)
{
    if (!*name)
        return shape_err_set(err, SHAPE_EINVAL, "env:// reference wants a variable name: env://NAME");
    const char *value = getenv(name);
    if (!value)
        return shape_err_set(err, SHAPE_EINVAL, "env://%s: the environment variable %s is not set",
                             name, name);
    if (!*value)
        return shape_err_set(err, SHAPE_EINVAL, "env://%s: the environment variable %s is empty",
                             name, name);
    *out = strdup(value);
    if (!*out) return shape_err_set(err, SHAPE_ENOMEM, "out of memory resolving env://%s", name);
    return SHAPE_OK;
}

/* Read all of fd into a fresh NUL-terminated buffer, wiping every copy that
 * is dropped on the way. */
static int read_all(int fd, const char *path, char **buf_out, size_t *len_out, shape_err *err)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 2) {
            size_t ncap = cap ? cap * 2 : 4096;
            char *nbuf = malloc(ncap);
            if (!nbuf) {
                if (buf) wipe(buf, len);
                free(buf);
                return shape_err_set(err, SHAPE_ENOMEM, "out of memory reading credential file %s", path);
            }
            if (buf) {
                memcpy(nbuf, buf, len);
                wipe(buf, len);
                free(buf);
            }
            buf = nbuf;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + len, cap - len - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int e = errno;
            wipe(buf, len);
            free(buf);
            return shape_err_set(err, SHAPE_EIO, "cannot read credential file %s: %s", path,
                                 strerror(e));
        }
        if (got == 0) break;
        len += (size_t)got;
        if (len > CRED_FILE_MAX) {
            wipe(buf, len);
            free(buf);
            return shape_err_set(err, SHAPE_EINVAL, "credential file %s is larger than %zu KiB", path,
                                 CRED_FILE_MAX >> 10);
        }
    }
    buf[len] = '\0';
    *buf_out = buf;
    *len_out = len;
    return SHAPE_OK;
}

static int resolve_file(const char *path, int check_mode, char **out, shape_err *err)
{
    if (!*path)
        return shape_err_set(err, SHAPE_EINVAL, "file:// reference wants a path: file://PATH");
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return shape_err_set(err, SHAPE_EIO, "cannot read credential file %s: %s", path,
                             strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return shape_err_set(err, SHAPE_EIO, "cannot read credential file %s: %s", path, strerror(e));
    }
    if (check_mode && (st.st_mode & 077) != 0) {
        close(fd);
        return shape_err_set(err, SHAPE_EINVAL,
                             "credential file %s is accessible to other users (mode %04o): "
                             "run chmod 600 %s",
                             path, (unsigned)(st.st_mode & 07777), path);
    }
    char *buf = NULL;
    size_t len = 0;
    int rc = read_all(fd, path, &buf, &len, err);
    close(fd);
    if (rc != SHAPE_OK) return rc;

    const char *why = NULL;
    if (memchr(buf, '\0', len)) why = "contains a NUL byte";
    else if (!shape_utf8_valid(buf, len)) why = "is not valid UTF-8";
    if (why) {
        wipe(buf, len);
        free(buf);
        return shape_err_set(err, SHAPE_EINVAL, "credential file %s %s", path, why);
    }
    if (len > 0 && buf[len - 1] == '\n') {
        buf[--len] = '\0';
        if (len > 0 && buf[len - 1] == '\r') buf[--len] = '\0';
    }
    if (len == 0) {
        free(buf);
        return shape_err_set(err, SHAPE_EINVAL, "credential file %s is empty", path);
    }
    *out = buf;
    return SHAPE_OK;
}

static int resolve_kv(const char *rest, shape_err *err)
{
    const char *slash = strchr(rest, '/');
    if (!slash || slash == rest || slash[1] == '\0')
        return shape_err_set(err, SHAPE_EINVAL,
                             "kv:// reference wants kv://VAULT/NAME with a non-empty VAULT and NAME");
    return shape_err_set(err, SHAPE_EINVAL,
                         "kv://%s: no resolver for kv:// references "
                         "(shape has no secret store built in; use env:// or file://)",
                         rest);
}

static int resolve(const char *ref, int check_mode, char **out, shape_err *err)
{
    *out = NULL;
    size_t n = scheme_len(ref);
    if (n == 0) return shape_err_set(err, SHAPE_EINVAL, "%s", NOT_A_REFERENCE);
    const char *rest = ref + n + 3;
    switch (ref[0]) {
    case 'e': return resolve_env(rest, out, err);
    case 'f': return resolve_file(rest, check_mode, out, err);
    default: return resolve_kv(rest, err);
    }
}

int shape_credref_resolve(const char *ref, char **secret_out, shape_err *err)
{
    return resolve(ref, 1, secret_out, err);
}

int shape_credref_resolve_public(const char *ref, char **out, shape_err *err)
{
    return resolve(ref, 0, out, err);
}

/* ---- secret-bearing setting names ------------------------------------------ */

static int has_word(const char *low, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(low, word); p; p = strstr(p + 1, word)) {
        int starts = p == low || p[-1] == '.' || p[-1] == '_' || p[-1] == '-';
        int ends = p[n] == 0 || p[n] == '.' || p[n] == '_' || p[n] == '-';
        if (starts && ends) return 1;
    }
    return 0;
}

int shape_credref_secret_name(const char *name)
{
    static const char *const parts[] = {"password", "passwd", "secret", "token", "key", "jaas", "credential",
                                        "user_info", "user.info", "userinfo", "connection_string"};
    if (!name) return 0;
    char low[256];
    size_t n = strlen(name);
    if (n >= sizeof low) n = sizeof low - 1;
    for (size_t i = 0; i < n; i++) low[i] = (char)tolower((unsigned char)name[i]);
    low[n] = 0;
    if (n >= 8 && strcmp(low + n - 8, "location") == 0) return 0; /* a path to the material, not the material */
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr(low, parts[i])) return 1;
    return has_word(low, "sas");
}

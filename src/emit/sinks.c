/* sinks.c — the core's destinations: console://, file://, jsonl://, null://.
 *
 * Why: `shape emit` must work with nothing but the core: JSON lines on
 * stdout (the default), into one file (`--sink file -o FILE`, `file:///P`),
 * into one file per table (`jsonl:///DIR`), or nowhere (`--sink null`, to
 * measure generation and encoding alone). They implement the same
 * shape_emitter_type contract as plugin emitters, so the runtime has one
 * path for every destination.
 * How: a batch is copied into one buffer (each body + '\n') and written with
 * write(2) in a loop, so a send returns with every byte handed to the OS
 * (DELIVERED); flush is fsync (a no-op for the console). Opening with
 * "resuming" appends, after cutting a torn last line a killed run may have
 * left; otherwise the file is truncated. A file is locked (flock, exclusive,
 * before it is truncated) for as long as it is open, so a second writer is
 * refused instead of interleaving torn lines with the first. With
 * "resume_events" N (set by emit when it resumes a checkpoint at offset N)
 * the file must still hold N complete lines: one shortened, replaced or
 * deleted since is refused, since appending to it would leave events
 * missing. send and flush may run on two
 * threads at once (the runtime's checkpoint thread flushes): write and fsync
 * on one descriptor are safe together.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shape/emit.h"
#include "shape/json.h" /* shape_json_buf */
#include "shape/options.h"

#define JSONL_MAX_TABLES 16

typedef enum { SINK_CONSOLE, SINK_FILE, SINK_JSONL, SINK_NULL } sink_kind;

struct shape_emitter {
    sink_kind kind;
    int fd;                 /* console, file */
    char *path;             /* file path or jsonl directory */
    int resuming;
    int64_t resume_events;  /* file: lines the file must hold when resuming, 0: unchecked */
    shape_json_buf lines; /* the lines of one write, reused */
    struct {
        char *table;
        int fd;
    } tables[JSONL_MAX_TABLES]; /* jsonl */
    size_t ntables;
    pthread_mutex_t mu; /* guards tables/ntables: send adds, flush (another thread) walks */
};

/* ---- URIs ----------------------------------------------------------------- */

static int has_prefix(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* The path of file://P (file:///abs, file://rel) or jsonl://P. */
static const char *uri_path(const char *uri)
{
    const char *p = strstr(uri, "://");
    return p ? p + 3 : uri;
}

static int check_console(const char *uri, shape_err *err)
{
    if (strcasecmp(uri, "console") == 0 || strcasecmp(uri, "console://") == 0) return SHAPE_OK;
    return shape_err_set(err, SHAPE_EINVAL, "console:// takes no path");
}

static int check_null(const char *uri, shape_err *err)
{
    if (strcasecmp(uri, "null") == 0 || strcasecmp(uri, "null://") == 0) return SHAPE_OK;
    return shape_err_set(err, SHAPE_EINVAL, "null:// takes no path");
}

static int check_file(const char *uri, shape_err *err)
{
    const char *p = uri_path(uri);
    if (!*p) return shape_err_set(err, SHAPE_EINVAL, "file:// needs a path: file:///PATH");
    size_t n = strlen(p);
    if (p[n - 1] == '/') return shape_err_set(err, SHAPE_EINVAL, "file:// needs a file path, not a directory");
    return SHAPE_OK;
}

static int check_jsonl(const char *uri, shape_err *err)
{
    if (!*uri_path(uri)) return shape_err_set(err, SHAPE_EINVAL, "jsonl:// needs a directory: jsonl:///DIR");
    return SHAPE_OK;
}

/* ---- open / close ---------------------------------------------------------- */

static const char *const known_keys[] = {"envelope", "resuming", "resume_events", NULL};

/* Cut a torn last line (no trailing '\n') a killed run may have left. */
static int repair_tail(int fd, const char *path, shape_err *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return shape_err_set(err, SHAPE_EIO, "cannot stat %s: %s", path, strerror(errno));
    off_t end = st.st_size;
    char chunk[4096];
    while (end > 0) {
        off_t start = end > (off_t)sizeof chunk ? end - (off_t)sizeof chunk : 0;
        ssize_t got = pread(fd, chunk, (size_t)(end - start), start);
        if (got != end - start) return shape_err_set(err, SHAPE_EIO, "cannot read %s", path);
        for (ssize_t i = got - 1; i >= 0; i--) {
            if (chunk[i] == '\n') {
                off_t keep = start + i + 1;
                if (keep != st.st_size && ftruncate(fd, keep) != 0)
                    return shape_err_set(err, SHAPE_EIO, "cannot repair %s: %s", path, strerror(errno));
                return SHAPE_OK;
            }
        }
        end = start;
    }
    if (st.st_size > 0 && ftruncate(fd, 0) != 0)
        return shape_err_set(err, SHAPE_EIO, "cannot repair %s: %s", path, strerror(errno));
    return SHAPE_OK;
}

/* The complete lines of the file, counted up to `enough`. */
static int count_lines(int fd, const char *path, int64_t enough, int64_t *lines, shape_err *err)
{
    *lines = 0;
    char chunk[65536];
    off_t at = 0;
    while (*lines < enough) {
        ssize_t got = pread(fd, chunk, sizeof chunk, at);
        if (got < 0) return shape_err_set(err, SHAPE_EIO, "cannot read %s: %s", path, strerror(errno));
        if (got == 0) break;
        for (const char *p = chunk; (p = memchr(p, '\n', (size_t)(chunk + got - p))) != NULL; p++) (*lines)++;
        at += got;
    }
    return SHAPE_OK;
}

static int open_file_fd(const char *path, int resuming, int64_t resume_events, int *fd_out, shape_err *err)
{
    /* never O_TRUNC: the lock comes first, another writer's file is left alone */
    int fd = open(path, (resuming ? O_RDWR | O_APPEND : O_WRONLY) | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return shape_err_set(err, SHAPE_EIO, "cannot open %s: %s", path, strerror(errno));
    int rc = SHAPE_OK;
    struct stat st;
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (regular && flock(fd, LOCK_EX | LOCK_NB) != 0)
        rc = errno == EWOULDBLOCK ? shape_err_set(err, SHAPE_EINVAL,
                                                  "%s is being written by another process (it holds the file's "
                                                  "lock): wait for it to end, or write to another file",
                                                  path)
                                  : shape_err_set(err, SHAPE_EIO, "cannot lock %s: %s", path, strerror(errno));
    if (rc == SHAPE_OK && regular && !resuming && st.st_size > 0 && ftruncate(fd, 0) != 0)
        rc = shape_err_set(err, SHAPE_EIO, "cannot truncate %s: %s", path, strerror(errno));
    if (rc == SHAPE_OK && resuming && regular) rc = repair_tail(fd, path, err);
    if (rc == SHAPE_OK && resuming && regular && resume_events > 0) {
        int64_t lines = 0;
        rc = count_lines(fd, path, resume_events, &lines, err);
        if (rc == SHAPE_OK && lines < resume_events)
            rc = shape_err_set(err, SHAPE_EINVAL,
                               "%s holds %lld events but its checkpoint counts %lld delivered (the file was "
                               "shortened, replaced or deleted): appending would leave events missing; rerun "
                               "with --fresh to write it again",
                               path, (long long)lines, (long long)resume_events);
    }
    if (rc != SHAPE_OK) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return SHAPE_OK;
}

static int open_common(sink_kind kind, const char *uri, const struct shape_options *options,
                       shape_emitter **out, shape_err *err, const char *what)
{
    *out = NULL;
    if (options) {
        SHAPE_RETURN_NOT_OK(shape_options_check_known(options, known_keys, what, err));
        const char *env;
        shape_envelope e;
        SHAPE_RETURN_NOT_OK(shape_options_get_string(options, "envelope", "flat", &env, err));
        SHAPE_RETURN_NOT_OK(shape_envelope_parse(env, &e, err));
    }
    int resuming = 0;
    int64_t resume_events = 0;
    if (options) SHAPE_RETURN_NOT_OK(shape_options_get_bool(options, "resuming", 0, &resuming, err));
    if (options) SHAPE_RETURN_NOT_OK(shape_options_get_int64(options, "resume_events", 0, &resume_events, err));
    shape_emitter *s = calloc(1, sizeof *s);
    if (!s) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    s->kind = kind;
    s->fd = -1;
    s->resuming = resuming;
    s->resume_events = resume_events;
    pthread_mutex_init(&s->mu, NULL);
    int rc = SHAPE_OK;
    if (kind == SINK_CONSOLE) {
        s->fd = STDOUT_FILENO;
    } else if (kind == SINK_FILE || kind == SINK_JSONL) {
        s->path = strdup(uri_path(uri));
        if (!s->path) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        else if (kind == SINK_FILE) rc = open_file_fd(s->path, s->resuming, s->resume_events, &s->fd, err);
        else if (mkdir(s->path, 0777) != 0 && errno != EEXIST)
            rc = shape_err_set(err, SHAPE_EIO, "cannot create directory %s: %s", s->path, strerror(errno));
    }
    if (rc != SHAPE_OK) {
        pthread_mutex_destroy(&s->mu);
        free(s->path);
        free(s);
        return rc;
    }
    *out = s;
    return SHAPE_OK;
}

static int open_console(const char *uri, const struct shape_options *o, shape_emitter **out, shape_err *err)
{
    return open_common(SINK_CONSOLE, uri, o, out, err, "console emitter");
}
static int open_file(const char *uri, const struct shape_options *o, shape_emitter **out, shape_err *err)
{
    return open_common(SINK_FILE, uri, o, out, err, "file emitter");
}
static int open_jsonl(const char *uri, const struct shape_options *o, shape_emitter **out, shape_err *err)
{
    return open_common(SINK_JSONL, uri, o, out, err, "jsonl emitter");
}
static int open_null(const char *uri, const struct shape_options *o, shape_emitter **out, shape_err *err)
{
    return open_common(SINK_NULL, uri, o, out, err, "null emitter");
}

static void close_sink(shape_emitter *s)
{
    if (!s) return;
    if (s->kind == SINK_FILE && s->fd >= 0) {
        fsync(s->fd);
        close(s->fd);
    }
    for (size_t i = 0; i < s->ntables; i++) {
        fsync(s->tables[i].fd);
        close(s->tables[i].fd);
        free(s->tables[i].table);
    }
    pthread_mutex_destroy(&s->mu);
    free(s->path);
    shape_json_buf_reset(&s->lines);
    free(s);
}

/* ---- send / flush ---------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n, const char *what, shape_err *err)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return shape_err_set(err, SHAPE_EIO, "cannot write to %s: %s", what, strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
    return SHAPE_OK;
}

/* The descriptor of a table's file under the jsonl directory. */
static int table_fd(shape_emitter *s, const char *table, int *fd, shape_err *err)
{
    for (size_t i = 0; i < s->ntables; i++)
        if (strcmp(s->tables[i].table, table) == 0) {
            *fd = s->tables[i].fd;
            return SHAPE_OK;
        }
    if (!*table || strcmp(table, ".") == 0 || strcmp(table, "..") == 0 || strchr(table, '/'))
        return shape_err_set(err, SHAPE_EINVAL, "jsonl:// cannot name a file after table '%.60s'", table);
    if (s->ntables == JSONL_MAX_TABLES)
        return shape_err_set(err, SHAPE_EINVAL, "jsonl:// writes at most %d tables", JSONL_MAX_TABLES);
    size_t n = strlen(s->path) + strlen(table) + 8;
    char *path = malloc(n);
    if (!path) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    snprintf(path, n, "%s/%s.jsonl", s->path, table);
    int rc = open_file_fd(path, s->resuming, 0, fd, err);
    free(path);
    if (rc != SHAPE_OK) return rc;
    char *name = strdup(table);
    if (!name) {
        close(*fd);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    pthread_mutex_lock(&s->mu);
    s->tables[s->ntables].table = name;
    s->tables[s->ntables++].fd = *fd;
    pthread_mutex_unlock(&s->mu);
    return SHAPE_OK;
}

static int send_lines(shape_emitter *s, shape_emit_message *msgs, size_t n, shape_err *err)
{
    if (s->kind == SINK_NULL) {
        for (size_t i = 0; i < n; i++) msgs[i].outcome = SHAPE_EMIT_DELIVERED;
        return SHAPE_OK;
    }
    size_t i = 0;
    while (i < n) {
        /* a run of messages of one table (jsonl) or the whole batch */
        size_t j = i + 1;
        if (s->kind == SINK_JSONL)
            while (j < n && strcmp(msgs[j].table, msgs[i].table) == 0) j++;
        else
            j = n;
        size_t need = 0;
        for (size_t k = i; k < j; k++) need += msgs[k].value_len + 1;
        s->lines.len = 0;
        if (shape_json_buf_reserve(&s->lines, need) != 0) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        char *p = s->lines.data;
        for (size_t k = i; k < j; k++) {
            memcpy(p, msgs[k].value, msgs[k].value_len);
            p += msgs[k].value_len;
            *p++ = '\n';
        }
        int fd = s->fd;
        if (s->kind == SINK_JSONL) SHAPE_RETURN_NOT_OK(table_fd(s, msgs[i].table, &fd, err));
        SHAPE_RETURN_NOT_OK(write_all(fd, s->lines.data, need,
                                      s->kind == SINK_CONSOLE ? "standard output" : s->path, err));
        for (size_t k = i; k < j; k++) msgs[k].outcome = SHAPE_EMIT_DELIVERED;
        i = j;
    }
    return SHAPE_OK;
}

static int flush_sink(shape_emitter *s, shape_err *err)
{
    if (s->kind == SINK_FILE && fsync(s->fd) != 0)
        return shape_err_set(err, SHAPE_EIO, "cannot flush %s: %s", s->path, strerror(errno));
    pthread_mutex_lock(&s->mu);
    size_t n = s->ntables;
    int fds[JSONL_MAX_TABLES];
    for (size_t i = 0; i < n; i++) fds[i] = s->tables[i].fd;
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < n; i++)
        if (fsync(fds[i]) != 0)
            return shape_err_set(err, SHAPE_EIO, "cannot flush %s: %s", s->path, strerror(errno));
    return SHAPE_OK;
}

static const char *const console_schemes[] = {"console", NULL};
static const char *const file_schemes[] = {"file", NULL};
static const char *const jsonl_schemes[] = {"jsonl", NULL};
static const char *const null_schemes[] = {"null", NULL};

static const shape_emitter_type console_type = {
    "console", console_schemes, "JSON lines on standard output.", check_console,
    open_console, send_lines, flush_sink, close_sink, NULL, NULL, NULL, NULL, NULL, NULL};
static const shape_emitter_type file_type = {
    "file", file_schemes, "JSON lines into one file: file:///PATH.", check_file,
    open_file, send_lines, flush_sink, close_sink, NULL, NULL, NULL, NULL, NULL, NULL};
static const shape_emitter_type jsonl_type = {
    "jsonl", jsonl_schemes, "One TABLE.jsonl file per table: jsonl:///DIR.", check_jsonl,
    open_jsonl, send_lines, flush_sink, close_sink, NULL, NULL, NULL, NULL, NULL, NULL};
static const shape_emitter_type null_type = {
    "null", null_schemes, "Discards every event (benchmarks).", check_null,
    open_null, send_lines, flush_sink, close_sink, NULL, NULL, NULL, NULL, NULL, NULL};

const shape_emitter_type *shape_emit_builtin_for_uri(const char *uri)
{
    if (strcasecmp(uri, "console") == 0 || has_prefix(uri, "console://")) return &console_type;
    if (strcasecmp(uri, "null") == 0 || has_prefix(uri, "null://")) return &null_type;
    if (has_prefix(uri, "file://")) return &file_type;
    if (has_prefix(uri, "jsonl://")) return &jsonl_type;
    return NULL;
}

/* windows_file.c — the --windows OUT.jsonl file of a windowed stream
 * profile (shape/windows_file.h).
 *
 * Why: windows are delivered at least once (a killed run re-emits the
 * windows closed after its last checkpoint), and the file makes that
 * effectively once: reference/spec-core.md §1.9.
 * How: opening reads the file whole: a torn last line (no newline: the run
 * was killed mid-write) is cut, every "partial": true line (written at a
 * Ctrl-C for windows that were still open) is dropped, and the key
 * (kind, start_us, end_us, and the table of a --split-by run) of every
 * other line goes into a hash set; when
 * anything was cut or dropped the kept lines replace the file atomically.
 * Each window written is then one line appended with write(2) — the kernel
 * holds it even if the process is killed the next instant — unless its key
 * is already there. A partial window is written but not remembered, so the
 * same run's final version of it is never refused. A window states file
 * (--state with a window kind) is the same file with each line carrying the
 * window's mergeable state instead of its document.
 */
#include "shape/windows_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shape/atomic_file.h"
#include "shape/base64.h"

typedef struct key {
    int64_t start, end;
    uint64_t table; /* a hash of the --split-by table's name; 0 without one */
    int kind;       /* 0: empty slot */
} key;

struct shape_windows_file {
    char *path;
    int fd;
    int states; /* lines carry the window's state, not its profile document */
    key *keys;
    size_t n_keys, cap_keys; /* cap a power of two */
};

/* The key of a table's name (FNV-1a, never 0). */
static uint64_t table_key(const char *name)
{
    if (!name) return 0;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *name; name++) h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
    return h ? h : 1;
}

static uint64_t key_hash(int kind, int64_t start, int64_t end, uint64_t table)
{
    uint64_t h = (uint64_t)start * 0x9E3779B97F4A7C15ULL ^ (uint64_t)end * 0xC2B2AE3D27D4EB4FULL ^ (uint64_t)kind ^ table;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 29);
}

static key *slot_of(key *keys, size_t cap, int kind, int64_t start, int64_t end, uint64_t table)
{
    size_t i = (size_t)key_hash(kind, start, end, table) & (cap - 1);
    while (keys[i].kind &&
           !(keys[i].kind == kind && keys[i].start == start && keys[i].end == end && keys[i].table == table))
        i = (i + 1) & (cap - 1);
    return &keys[i];
}

static int remember(shape_windows_file *f, int kind, int64_t start, int64_t end, uint64_t table, shape_err *err)
{
    if (2 * (f->n_keys + 1) > f->cap_keys) {
        size_t cap = f->cap_keys ? 2 * f->cap_keys : 1024;
        key *k = calloc(cap, sizeof *k);
        if (!k) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        for (size_t i = 0; i < f->cap_keys; i++)
            if (f->keys[i].kind)
                *slot_of(k, cap, f->keys[i].kind, f->keys[i].start, f->keys[i].end, f->keys[i].table) = f->keys[i];
        free(f->keys);
        f->keys = k;
        f->cap_keys = cap;
    }
    key *s = slot_of(f->keys, f->cap_keys, kind, start, end, table);
    if (!s->kind) {
        *s = (key){start, end, table, kind};
        f->n_keys++;
    }
    return SHAPE_OK;
}

static int known(const shape_windows_file *f, int kind, int64_t start, int64_t end, uint64_t table)
{
    return f->cap_keys && slot_of(f->keys, f->cap_keys, kind, start, end, table)->kind != 0;
}

static int kind_code(const char *name)
{
    shape_window_kind k;
    return shape_window_kind_parse(name, &k) == 0 ? (int)k + 1 : -1;
}

/* Keep the complete, final lines of text[0..len) in kept (same bytes),
 * remembering their keys; *changed when something was cut or dropped. */
static int sift(shape_windows_file *f, const char *text, size_t len, char *kept, size_t *n_kept, int *changed,
                shape_err *err)
{
    *n_kept = 0;
    *changed = 0;
    size_t at = 0, line_no = 0;
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        if (!nl) { /* torn by a kill mid-write */
            *changed = 1;
            break;
        }
        size_t n = (size_t)(nl - (text + at));
        line_no++;
        if (n == 0) {
            *changed = 1;
            at++;
            continue;
        }
        json_error_t jerr;
        json_t *doc = json_loadb(text + at, n, 0, &jerr);
        int partial = doc && json_is_true(json_object_get(doc, "partial"));
        const json_t *s = json_object_get(doc, "start_us"), *e = json_object_get(doc, "end_us");
        int kind = kind_code(json_string_value(json_object_get(doc, "kind")));
        const json_t *table = json_object_get(doc, "table");
        int ok = doc && kind > 0 && (json_is_integer(s) || json_is_null(s)) && (json_is_integer(e) || json_is_null(e)) &&
                 (!table || json_is_string(table));
        int rc = SHAPE_OK;
        if (!ok)
            rc = shape_err_set(err, SHAPE_EINVAL, "--windows %s line %zu is not a window line: use another file",
                               f->path, line_no);
        else if (partial)
            *changed = 1;
        else {
            rc = remember(f, kind, json_is_integer(s) ? json_integer_value(s) : INT64_MIN,
                          json_is_integer(e) ? json_integer_value(e) : INT64_MIN,
                          table_key(json_string_value(table)), err);
            memcpy(kept + *n_kept, text + at, n + 1);
            *n_kept += n + 1;
        }
        json_decref(doc);
        SHAPE_RETURN_NOT_OK(rc);
        at += n + 1;
    }
    return SHAPE_OK;
}

static int open_file(const char *path, int states, shape_windows_file **out, shape_err *err)
{
    *out = NULL;
    shape_windows_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    f->fd = -1;
    f->states = states;
    char *text = NULL, *kept = NULL;
    size_t len = 0, n_kept = 0;
    int exists = 0, changed = 0;
    struct stat st;
    int rc = SHAPE_OK;
    /* never read, rewrite or append to a device or FIFO (reading /dev/zero
     * never ends; an atomic rewrite would replace /dev/null by a file) */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        rc = shape_err_set(err, SHAPE_EINVAL, "%s %s is not a regular file", states ? "--state" : "--windows", path);
    if (rc == SHAPE_OK) rc = shape_file_read_all(path, "--windows", &text, &len, &exists, err);
    if (rc == SHAPE_OK && exists) {
        kept = malloc(len + 1);
        rc = kept ? sift(f, text, len, kept, &n_kept, &changed, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    if (rc == SHAPE_OK && changed) rc = shape_atomic_write(path, kept, n_kept, err);
    free(text);
    free(kept);
    if (rc == SHAPE_OK) {
        f->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (f->fd < 0) rc = shape_err_set(err, SHAPE_EIO, "cannot open --windows %s: %s", path, strerror(errno));
    }
    if (rc == SHAPE_OK) {
        if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode))
            rc = shape_err_set(err, SHAPE_EINVAL, "--windows %s is not a regular file", path);
    }
    if (rc != SHAPE_OK) {
        shape_windows_file_close(f);
        return rc;
    }
    *out = f;
    return SHAPE_OK;
}

int shape_windows_file_open(const char *path, shape_windows_file **out, shape_err *err)
{
    return open_file(path, 0, out, err);
}

int shape_window_states_file_open(const char *path, shape_windows_file **out, shape_err *err)
{
    return open_file(path, 1, out, err);
}

void shape_windows_file_close(shape_windows_file *f)
{
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    free(f->keys);
    free(f->path);
    free(f);
}

size_t shape_windows_file_known(const shape_windows_file *f) { return f->n_keys; }

static json_t *bound_json(int64_t us, int iso)
{
    if (!iso) return json_integer(us);
    char buf[64];
    shape_window_iso(us, buf, sizeof buf);
    return json_string(buf);
}

static int line_of(const shape_window_closed *w, int states, char **out, size_t *len, shape_err *err)
{
    *out = NULL;
    json_t *table = NULL;
    char *b64 = NULL;
    if (states) {
        uint8_t *bytes = NULL;
        size_t n = 0;
        SHAPE_RETURN_NOT_OK(shape_profile_state_save(w->profile, &bytes, &n, err));
        b64 = shape_base64_encode(bytes, n);
        free(bytes);
        if (!b64) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    } else {
        SHAPE_RETURN_NOT_OK(shape_profile_table_json(w->profile, &table, err));
        /* a split table's columns are the fields its rows carry (as in the split -o document) */
        json_t *cols = w->table ? json_object_get(table, "columns") : NULL;
        for (size_t i = json_array_size(cols); i-- > 0;) {
            const json_t *c = json_array_get(cols, i);
            if (json_integer_value(json_object_get(c, "null_count")) == json_integer_value(json_object_get(c, "count")))
                json_array_remove(cols, i);
        }
    }
    json_t *doc = json_object(); /* keys in sorted order, as the reference writes them */
    int bad = !doc;
    if (!states) bad |= json_object_set_new(doc, "end", bound_json(w->end_us, 1));
    bad |= json_object_set_new(doc, "end_us", bound_json(w->end_us, 0));
    bad |= json_object_set_new(doc, "kind", json_string(shape_window_kind_name(w->kind)));
    if (w->partial) bad |= json_object_set_new(doc, "partial", json_true());
    if (!states) bad |= json_object_set_new(doc, "profile", table);
    bad |= json_object_set_new(doc, "rows", json_integer(w->rows));
    if (!states) bad |= json_object_set_new(doc, "start", bound_json(w->start_us, 1));
    bad |= json_object_set_new(doc, "start_us", bound_json(w->start_us, 0));
    if (states) bad |= json_object_set_new(doc, "state", json_string(b64));
    if (w->table) bad |= json_object_set_new(doc, "table", json_string(w->table));
    free(b64);
    char *text = NULL;
    size_t n = 0;
    int rc = bad ? shape_err_set(err, SHAPE_ENOMEM, "out of memory") : shape_profile_json_dumps(doc, -1, &text, &n, err);
    json_decref(doc);
    if (rc != SHAPE_OK) return rc;
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    *out = line;
    *len = n + 1;
    return SHAPE_OK;
}

int shape_windows_file_line(const shape_window_closed *w, char **out, size_t *len, shape_err *err)
{
    return line_of(w, 0, out, len, err);
}

int shape_window_states_line(const shape_window_closed *w, char **out, size_t *len, shape_err *err)
{
    return line_of(w, 1, out, len, err);
}

int shape_windows_file_write(shape_windows_file *f, const shape_window_closed *w, int *written, shape_err *err)
{
    *written = 0;
    int kind = (int)w->kind + 1;
    if (known(f, kind, w->start_us, w->end_us, table_key(w->table))) return SHAPE_OK;
    char *line = NULL;
    size_t len = 0;
    SHAPE_RETURN_NOT_OK(line_of(w, f->states, &line, &len, err));
    size_t done = 0;
    int rc = SHAPE_OK;
    while (done < len) {
        ssize_t k = write(f->fd, line + done, len - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            rc = shape_err_set(err, SHAPE_EIO, "cannot write --windows %s: %s", f->path,
                               k < 0 ? strerror(errno) : "nothing written");
            break;
        }
        done += (size_t)k;
    }
    free(line);
    if (rc == SHAPE_OK && !w->partial) rc = remember(f, kind, w->start_us, w->end_us, table_key(w->table), err);
    if (rc == SHAPE_OK) *written = 1;
    return rc;
}

/* file_source.c — the built-in, broker-free stream source: JSON lines.
 *
 * Why: the same reading, decoding, profiling and checkpointing as Kafka,
 * without a broker — for tests, for replaying `shape emit` output, and for
 * people who have files.
 *
 * How: the URI names a file, a file:// URI, a folder (its *.jsonl, *.ndjson
 * and *.json files in name order, skipping names starting with '.' or '_'),
 * a glob (matches in name order) or "-" (stdin). The files are read one
 * after another as one pseudo-partition 0 whose offset counts the non-blank
 * lines consumed, so {"0": N} resumes by skipping N lines of the same input.
 * Each batch is up to batch_size lines gathered in one buffer (copied once
 * from read(2) blocks), decoded by the shared decoder (shape/decode.h).
 * CloudEvents lines (specversion "1.0" with an object `data`) are unwrapped
 * to their data; only a line holding the bytes "specversion" is walked for
 * that, found by a vector pre-scan (has_specversion) rather than memmem.
 * Files carry no broker time, key or headers. A line longer than
 * max_message_bytes (default 1 MiB, Kafka's message.max.bytes order; 0 = no
 * limit) is never buffered whole: once the line in hand passes the limit its
 * bytes are dropped as they are read, up to its end of line, and it counts
 * as one undecodable message ("--on-error raise" stops on it) — so
 * `stream-profile /dev/zero` stays within a few MiB instead of growing
 * until the machine runs out. A stop request is seen within a read: a read
 * interrupted by a signal (EINTR: the commands install their SIGINT/SIGTERM
 * handlers without SA_RESTART), or 64 MiB of an endless line dropped, ends
 * the call early with the lines complete so far (or a step without rows),
 * and the caller checks its stop flag between steps.
 */
#define _GNU_SOURCE
#include "shape/source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shape/json.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define READ_BLOCK (1 << 20)
/* Bytes of an endless line dropped per call before next() returns a step
 * without rows (so the caller sees a stop request between steps). */
#define STEP_BYTES ((uint64_t)64 << 20)
#define DEFAULT_BATCH 65536
#define DEFAULT_MAX_MESSAGE_BYTES (1 << 20)
#define TOO_LONG ((size_t)-1) /* line_len of a line dropped for its length */

typedef struct file_source {
    shape_source base;
    char **paths; /* NULL entry "-" means stdin */
    size_t n_paths, next_path;
    int fd;       /* current file, or -1 */
    const char *current;

    shape_json_buf buf; /* bytes read; [start, buf.len) not yet consumed */
    size_t start;
    int eof;   /* every file is exhausted */

    int64_t position;    /* lines consumed so far */
    int64_t skip;        /* lines still to skip to reach the start position */
    int64_t remaining;   /* max_messages left, or -1 */
    int64_t batch_size;
    size_t max_line;    /* longest line kept, in bytes (SIZE_MAX: no limit) */
    int raise;          /* on_error = raise: a line too long stops the read */
    int dropping;       /* the line in hand passed max_line: its bytes are dropped */
    int interrupted;    /* a read(2) returned EINTR (a signal: maybe a stop request) */
    uint64_t bytes_read; /* every byte read(2) gave */

    size_t *line_off, *line_len; /* lines of the batch being built, relative to buf */
    shape_message *msgs;
    shape_json_scanner *ce; /* for CloudEvents detection */
    shape_decoder *dec;
} file_source;

static const char *const known_options[] = {
    "start_at", "stop_at_end", "idle_timeout", "max_messages", "batch_size", "on_error",
    "event_time_field", "event_time_unit", "with_offsets", "with_key", "with_headers",
    "with_timestamp", "nested", "format", "order", "schema", "max_message_bytes", "max_columns", "grow_schema", NULL};

int shape_file_source_claims(const char *uri)
{
    if (strcmp(uri, "-") == 0) return 1;
    if (strncasecmp(uri, "file://", 7) == 0) return 1;
    return strstr(uri, "://") == NULL;
}

int shape_decode_options_from(const shape_options *o, shape_decode_options *out, shape_err *err)
{
    shape_decode_options_init(out);
    const char *text;
    SHAPE_RETURN_NOT_OK(shape_options_get_string(o, "event_time_field", NULL, &out->event_time_field, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_string(o, "event_time_unit", "ms", &text, err));
    SHAPE_RETURN_NOT_OK(shape_time_unit_parse(text, &out->event_time_unit, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_string(o, "on_error", "skip", &text, err));
    SHAPE_RETURN_NOT_OK(shape_on_error_parse(text, &out->on_error, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "with_key", 0, &out->with_key, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "with_headers", 0, &out->with_headers, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "with_timestamp", 0, &out->with_timestamp, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "with_offsets", 0, &out->with_offsets, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "nested", 1, &out->nested, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(o, "max_columns", SHAPE_DECODE_MAX_COLUMNS_DEFAULT, &out->max_columns, err));
    if (out->max_columns < 0) return shape_err_set(err, SHAPE_EINVAL, "max_columns must be >= 0 (0: no limit)");
    SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "grow_schema", 0, &out->grow, err));
    return SHAPE_OK;
}

static void free_paths(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
}

static int push_path(char ***paths, size_t *n, const char *path, shape_err *err)
{
    char **grown = realloc(*paths, (*n + 1) * sizeof *grown);
    if (!grown) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    *paths = grown;
    if (!(grown[*n] = strdup(path))) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    (*n)++;
    return SHAPE_OK;
}

static int json_lines_suffix(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (strcmp(dot, ".jsonl") == 0 || strcmp(dot, ".ndjson") == 0 || strcmp(dot, ".json") == 0);
}

static int refuse_other_format(const char *path, int explicit_format, shape_err *err)
{
    const char *dot = strrchr(path, '.');
    if (explicit_format || !dot) return SHAPE_OK;
    if (strcmp(dot, ".csv") == 0 || strcmp(dot, ".parquet") == 0 || strcmp(dot, ".pq") == 0)
        return shape_err_set(err, SHAPE_EINVAL,
                             "%.200s: only JSON lines files are read (csv and parquet are not supported yet)", path);
    return SHAPE_OK;
}

static int compare_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The files a URI names, in reading order. */
static int resolve_paths(const char *uri, int explicit_format, char ***out, size_t *n, shape_err *err)
{
    *out = NULL;
    *n = 0;
    if (strcmp(uri, "-") == 0) return push_path(out, n, "-", err);
    const char *path = uri;
    if (strncasecmp(uri, "file://", 7) == 0) {
        path = uri + 7;
        if (strncasecmp(path, "localhost/", 10) == 0) path += 9;
        if (path[0] != '/') return shape_err_set(err, SHAPE_EINVAL, "a file:// URI needs an absolute path (file:///dir/x.jsonl)");
    }
    if (strpbrk(path, "*?[")) {
        glob_t g;
        int rc = glob(path, 0, NULL, &g);
        if (rc == GLOB_NOMATCH) return shape_err_set(err, SHAPE_EINVAL, "no file matches %.200s", path);
        if (rc != 0) return shape_err_set(err, SHAPE_EIO, "cannot expand %.200s", path);
        int r = SHAPE_OK;
        for (size_t i = 0; r == SHAPE_OK && i < g.gl_pathc; i++) {
            r = refuse_other_format(g.gl_pathv[i], explicit_format, err);
            if (r == SHAPE_OK) r = push_path(out, n, g.gl_pathv[i], err);
        }
        globfree(&g);
        return r;
    }
    struct stat st;
    if (stat(path, &st) != 0) return shape_err_set(err, SHAPE_EINVAL, "no such file: %.200s", path);
    if (!S_ISDIR(st.st_mode)) {
        SHAPE_RETURN_NOT_OK(refuse_other_format(path, explicit_format, err));
        return push_path(out, n, path, err);
    }
    DIR *d = opendir(path);
    if (!d) return shape_err_set(err, SHAPE_EIO, "cannot read folder %.200s: %s", path, strerror(errno));
    struct dirent *e;
    int rc = SHAPE_OK;
    char **names = NULL;
    size_t n_names = 0;
    while (rc == SHAPE_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || e->d_name[0] == '_') continue;
        if (!explicit_format && !json_lines_suffix(e->d_name)) continue;
        rc = push_path(&names, &n_names, e->d_name, err);
    }
    closedir(d);
    if (rc == SHAPE_OK) qsort(names, n_names, sizeof *names, compare_str);
    for (size_t i = 0; rc == SHAPE_OK && i < n_names; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s/%s", path, names[i]);
        rc = push_path(out, n, full, err);
    }
    free_paths(names, n_names);
    return rc;
}

/* Drop the bytes before keep_from, then read more after the rest. Sets eof
 * when every file is done. Ensures every line, the last of a file too, ends
 * with '\n'. */
static int fill(file_source *fs, size_t keep_from, shape_err *err)
{
    if (keep_from > 0) {
        memmove(fs->buf.data, fs->buf.data + keep_from, fs->buf.len - keep_from);
        fs->buf.len -= keep_from;
    }
    for (;;) {
        if (fs->fd < 0) {
            if (fs->next_path == fs->n_paths) {
                fs->eof = 1;
                return SHAPE_OK;
            }
            fs->current = fs->paths[fs->next_path++];
            if (strcmp(fs->current, "-") == 0) {
                fs->fd = STDIN_FILENO;
            } else if ((fs->fd = open(fs->current, O_RDONLY | O_CLOEXEC)) < 0) {
                return shape_err_set(err, SHAPE_EIO, "cannot open %.200s: %s", fs->current, strerror(errno));
            }
        }
        /* room for a block and the '\n' a last line may need (doubling from
         * 2 READ_BLOCK) */
        if (shape_json_buf_reserve(&fs->buf, READ_BLOCK) != 0)
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory reading %.200s", fs->current);
        ssize_t got = read(fs->fd, fs->buf.data + fs->buf.len, READ_BLOCK);
        if (got < 0) {
            if (errno == EINTR) { /* hand control back: the caller may have been asked to stop */
                fs->interrupted = 1;
                return SHAPE_OK;
            }
            return shape_err_set(err, SHAPE_EIO, "cannot read %.200s: %s", fs->current, strerror(errno));
        }
        if (got == 0) {
            if (fs->fd != STDIN_FILENO) close(fs->fd);
            fs->fd = -1;
            /* a last line without its '\n' ends with its file (a dropped one too) */
            if (fs->dropping || (fs->buf.len > 0 && fs->buf.data[fs->buf.len - 1] != '\n'))
                fs->buf.data[fs->buf.len++] = '\n';
            continue;
        }
        fs->buf.len += (size_t)got;
        fs->bytes_read += (uint64_t)got;
        return SHAPE_OK;
    }
}

static int blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') return 0;
    return 1;
}

/* Does the body hold the bytes "specversion" (with its quotes) anywhere?
 * The same answer as memmem, cheaper on the usual line that does not (memmem
 * was ~6 % of stream-profile's CPU: its set-up alone costs more than a
 * 200-byte line). With SSE2, each start position is tested for 's' one byte
 * on and 'v' five bytes on (two compares: rare together in any text), 64
 * starts per step while they last, then 16 per step with the last step
 * overlapping the one before (positions tested twice, no tail loop); a
 * position that passes is compared in full. Lines shorter than one 16-start
 * block go to memmem. */
#if defined(__SSE2__)
static inline unsigned sv_candidates(const char *p)
{
    const __m128i s = _mm_set1_epi8('s'), v = _mm_set1_epi8('v');
    __m128i a = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 1)), s);
    __m128i b = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + 5)), v);
    return (unsigned)_mm_movemask_epi8(_mm_and_si128(a, b));
}
#endif

static int has_specversion(const char *body, size_t len)
{
    static const char needle[] = "\"specversion\"";
    enum { NEEDLE = 13, BLOCK = 16 + NEEDLE - 1 }; /* 16 starts read 28 bytes */
#if defined(__SSE2__)
    if (len >= BLOCK) {
        const char *p = body, *last = body + len - BLOCK;
        while (last - p >= 64) { /* 64 starts: one branch unless a candidate */
            if (sv_candidates(p) | sv_candidates(p + 16) | sv_candidates(p + 32) | sv_candidates(p + 48)) break;
            p += 64;
        }
        for (;;) {
            for (unsigned mask = sv_candidates(p); mask; mask &= mask - 1)
                if (memcmp(p + __builtin_ctz(mask), needle, NEEDLE) == 0) return 1;
            if (p == last) return 0;
            p = last - p > 16 ? p + 16 : last;
        }
    }
#endif
    return memmem(body, len, needle, NEEDLE) != NULL;
}

/* A CloudEvents 1.0 structured event with an object `data`: its data. */
static void unwrap_cloudevent(file_source *fs, const char **body, size_t *len)
{
    if (!has_specversion(*body, *len)) return;
    shape_json_begin(fs->ce, *body, *len);
    shape_json_member m;
    shape_json_slice data = {NULL, 0};
    int is_ce = 0;
    while (shape_json_next(fs->ce, &m) == SHAPE_JSON_MEMBER) {
        if (m.key.len == 11 && memcmp(m.key.ptr, "specversion", 11) == 0)
            is_ce = m.kind == SHAPE_JSON_STRING && m.str.len == 3 && memcmp(m.str.ptr, "1.0", 3) == 0;
        else if (m.key.len == 4 && memcmp(m.key.ptr, "data", 4) == 0 && m.kind == SHAPE_JSON_OBJECT)
            shape_json_skip(fs->ce, &data);
    }
    if (is_ce && data.ptr && shape_json_last_error(fs->ce)->verdict == 0) {
        *body = data.ptr;
        *len = data.len;
    }
}

/* The line that passed max_line has ended: one message without a body, or
 * one line skipped on the way to the start position. */
static void take_dropped(file_source *fs, size_t *n)
{
    fs->dropping = 0;
    if (fs->skip > 0) {
        fs->skip--;
        fs->position++;
        return;
    }
    fs->line_off[*n] = 0;
    fs->line_len[*n] = TOO_LONG;
    (*n)++;
}

static int fs_next(shape_source *src, struct ArrowSchema *schema, struct ArrowArray *array,
                   shape_offsets *after, int *end, shape_err *err)
{
    file_source *fs = (file_source *)src;
    array->release = NULL;
    *end = 0;
    size_t n = 0;
    int64_t want = fs->batch_size;
    if (fs->remaining >= 0 && fs->remaining < want) want = fs->remaining;
    /* Gather up to `want` non-blank lines (after skipping to the start). */
    size_t scan = fs->start;
    const uint64_t read_at_entry = fs->bytes_read;
    int early = 0; /* the call returns before its batch is full, to let a stop request be seen */
    while ((int64_t)n < want) {
        char *nl = scan < fs->buf.len ? memchr(fs->buf.data + scan, '\n', fs->buf.len - scan) : NULL;
        if (!nl) {
            if (fs->buf.len - scan > fs->max_line) { /* too long to keep: drop what is read of it */
                fs->dropping = 1;
                fs->buf.len = scan;
            }
            if (fs->eof) {
                if (fs->dropping) take_dropped(fs, &n);
                break;
            }
            size_t keep = n ? fs->line_off[0] : scan; /* this batch's lines stay */
            SHAPE_RETURN_NOT_OK(fill(fs, keep, err));
            scan -= keep;
            for (size_t i = 0; i < n; i++) fs->line_off[i] -= keep;
            /* A signal interrupted a read (a pipe that waits), or an endless
             * line has been dropping for STEP_BYTES (/dev/zero never blocks):
             * return what is complete, so that a stop is honoured at once. */
            if (fs->interrupted || (fs->dropping && fs->bytes_read - read_at_entry > STEP_BYTES)) {
                fs->interrupted = 0;
                early = 1;
                break;
            }
            continue;
        }
        size_t line_end = (size_t)(nl - fs->buf.data);
        size_t line_len = line_end - scan;
        if (fs->dropping || line_len > fs->max_line) {
            take_dropped(fs, &n);
        } else if (!blank(fs->buf.data + scan, line_len)) {
            if (fs->skip > 0) {
                fs->skip--;
                fs->position++;
            } else {
                if (fs->buf.data[scan + line_len - 1] == '\r') line_len--;
                fs->line_off[n] = scan;
                fs->line_len[n] = line_len;
                n++;
            }
        }
        scan = line_end + 1;
    }
    if (n == 0 && early) { /* a step without rows: the position stays */
        fs->start = scan;
        shape_offsets_clear(after);
        return shape_offsets_set(after, 0, fs->position, err);
    }
    if (n == 0) { /* also when a start position lies beyond the input */
        *end = 1;
        return SHAPE_OK;
    }
    for (size_t i = 0; i < n; i++) {
        if (fs->line_len[i] == TOO_LONG && fs->raise)
            return shape_err_set(err, SHAPE_EINVAL,
                                 "partition 0 offset %lld: a line longer than max_message_bytes (%zu bytes); "
                                 "raise the limit with --option max_message_bytes=N (0: none)",
                                 (long long)(fs->position + (int64_t)i), fs->max_line);
        if (fs->line_len[i] == TOO_LONG) { /* no body: the decoder counts it undecodable */
            fs->msgs[i] = (shape_message){.partition = 0, .offset = fs->position + (int64_t)i};
            continue;
        }
        const char *body = fs->buf.data + fs->line_off[i];
        size_t len = fs->line_len[i];
        unwrap_cloudevent(fs, &body, &len);
        fs->msgs[i] = (shape_message){.partition = 0, .offset = fs->position + (int64_t)i, .value = body, .value_len = len};
    }
    int rc = shape_decoder_decode(fs->dec, fs->msgs, n, schema, array, err);
    if (rc != SHAPE_OK) return rc;
    fs->start = scan;
    fs->position += (int64_t)n;
    if (fs->remaining >= 0) fs->remaining -= (int64_t)n;
    shape_offsets_clear(after);
    return shape_offsets_set(after, 0, fs->position, err);
}

static const shape_decode_stats *fs_stats(const shape_source *src)
{
    return shape_decoder_stats(((const file_source *)src)->dec);
}

static void fs_close(shape_source *src)
{
    file_source *fs = (file_source *)src;
    if (!fs) return;
    if (fs->fd >= 0 && fs->fd != STDIN_FILENO) close(fs->fd);
    free_paths(fs->paths, fs->n_paths);
    shape_json_buf_reset(&fs->buf);
    free(fs->line_off);
    free(fs->line_len);
    free(fs->msgs);
    shape_json_scanner_free(fs->ce);
    shape_decoder_free(fs->dec);
    free(fs);
}

static const shape_source_vtable file_vtable = {fs_next, fs_stats, fs_close, NULL}; /* no progress: one pseudo-partition */

static int read_options(const shape_options *o, file_source *fs, int *explicit_format, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(shape_options_check_known(o, known_options, "file source", err));
    const char *text;
    SHAPE_RETURN_NOT_OK(shape_options_get_string(o, "start_at", "earliest", &text, err));
    if (strcmp(text, "latest") == 0)
        return shape_err_set(err, SHAPE_EINVAL, "start_at 'latest' is not supported for files (use a kafka:// source)");
    if (strcmp(text, "earliest") != 0) return shape_err_set(err, SHAPE_EINVAL, "start_at must be 'earliest' or 'latest'");
    int stop_at_end;
    SHAPE_RETURN_NOT_OK(shape_options_get_bool(o, "stop_at_end", 1, &stop_at_end, err));
    if (!stop_at_end) return shape_err_set(err, SHAPE_EINVAL, "following is not supported for files (stop_at_end must be true)");
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(o, "batch_size", DEFAULT_BATCH, &fs->batch_size, err));
    if (fs->batch_size < 1) return shape_err_set(err, SHAPE_EINVAL, "batch_size must be positive");
    if (fs->batch_size > (1 << 24)) return shape_err_set(err, SHAPE_EINVAL, "batch_size must be at most 16777216");
    int64_t max_bytes;
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(o, "max_message_bytes", DEFAULT_MAX_MESSAGE_BYTES, &max_bytes, err));
    if (max_bytes < 0) return shape_err_set(err, SHAPE_EINVAL, "max_message_bytes must be >= 0 (0: no limit)");
    fs->max_line = max_bytes == 0 ? (size_t)-2 : (size_t)max_bytes;
    shape_decode_options dopts;
    SHAPE_RETURN_NOT_OK(shape_decode_options_from(o, &dopts, err));
    fs->raise = dopts.on_error == SHAPE_ON_ERROR_RAISE;
    int64_t max = -1;
    SHAPE_RETURN_NOT_OK(shape_options_get_int64(o, "max_messages", -1, &max, err));
    if (shape_options_has(o, "max_messages") && max < 1)
        return shape_err_set(err, SHAPE_EINVAL, "max_messages must be at least 1");
    fs->remaining = max;
    double idle;
    SHAPE_RETURN_NOT_OK(shape_options_get_double(o, "idle_timeout", 0, &idle, err));
    SHAPE_RETURN_NOT_OK(shape_options_get_string(o, "format", NULL, &text, err));
    *explicit_format = text != NULL;
    if (text && strcmp(text, "jsonl") != 0 && strcmp(text, "ndjson") != 0 && strcmp(text, "json") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "format must be 'jsonl' (csv and parquet are not supported yet)");
    SHAPE_RETURN_NOT_OK(shape_options_get_string(o, "order", "file", &text, err));
    if (strcmp(text, "file") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "order must be 'file' (event-time ordering is not supported yet)");
    return SHAPE_OK;
}

int shape_file_source_open(const char *uri, const shape_options *options, const shape_offsets *start,
                           shape_source **out, shape_err *err)
{
    *out = NULL;
    file_source *fs = calloc(1, sizeof *fs);
    if (!fs) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    fs->base.vt = &file_vtable;
    fs->fd = -1;
    int explicit_format = 0;
    shape_options *empty = options ? NULL : shape_options_new();
    const shape_options *o = options ? options : empty;
    int rc = read_options(o, fs, &explicit_format, err);
    if (rc == SHAPE_OK) rc = shape_decoder_from_options(o, &fs->dec, err);
    shape_options_free(empty);
    if (rc == SHAPE_OK) rc = resolve_paths(uri, explicit_format, &fs->paths, &fs->n_paths, err);
    if (rc == SHAPE_OK && start && start->n > 0) {
        if (start->n != 1 || start->partitions[0] != 0)
            rc = shape_err_set(err, SHAPE_EINVAL, "a file source has one partition, 0: the start position names others");
        else
            fs->skip = start->next[0];
    }
    if (rc == SHAPE_OK) {
        fs->line_off = malloc((size_t)fs->batch_size * sizeof *fs->line_off);
        fs->line_len = malloc((size_t)fs->batch_size * sizeof *fs->line_len);
        fs->msgs = malloc((size_t)fs->batch_size * sizeof *fs->msgs);
        fs->ce = shape_json_scanner_new();
        if (!fs->line_off || !fs->line_len || !fs->msgs || !fs->ce) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    }
    if (rc != SHAPE_OK) {
        fs_close(&fs->base);
        return rc;
    }
    *out = &fs->base;
    return SHAPE_OK;
}

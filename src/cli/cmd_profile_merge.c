/* cmd_profile_merge.c — `shape profile-merge A.state B.state ... -o OUT.json`.
 *
 * Why: scale-out on Kafka's partitions. N workers each profile disjoint
 * partitions (`stream-profile --partitions ... --state W.state`); merging
 * their states gives the profile of the whole topic: exact statistics
 * identical to one run over everything, sketches within their bounds.
 *
 * How: load each state (shape_profile_state_load refuses another
 * configuration, so every state must have been made with the same --top-n),
 * merge them in the order given into the first (shape_profile_merge: counters
 * add, moments by Chan's formula, HLL by register max, SpaceSaving and KLL by
 * their merge rules), write the document atomically, optionally the merged
 * state too, and print a one-line JSON summary.
 * Window states (`stream-profile --window KIND --state FILE`: JSON lines,
 * one window each, shape/windows_file.h) are merged window by window: the
 * same (kind, start, end) in several files is one window of the whole topic
 * (with --split-by, the same table's: a line's "table" is part of the key);
 * -o then gets the merged windows as a windows file (JSON lines, sorted by
 * start and end) and --state their states.
 * Split states (`stream-profile --split-by --state FILE`: JSON lines
 * {"state", "table"}) are merged table by table, tables in order of first
 * appearance; -o gets one document of them (shape_stream_split_document).
 * Before each merge, shape_profile_check_merge refuses what would count
 * rows twice or mix streams (the states' recorded sources and partitions;
 * --any-source lets other streams in), and one file named twice is refused
 * up front whatever it holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli/commands.h"
#include "shape/atomic_file.h"
#include "shape/paths.h"
#include "shape/base64.h"
#include "shape/profile.h"
#include "shape/stream_profiler.h"
#include "shape/windows_file.h"

static int load_state(const char *path, const shape_profile_config *cfg, shape_profile **out, shape_err *err)
{
    char *bytes = NULL;
    size_t len = 0;
    SHAPE_RETURN_NOT_OK(shape_file_read_all(path, "state", &bytes, &len, NULL, err));
    int rc = shape_profile_state_load((const uint8_t *)bytes, len, cfg, out, err);
    free(bytes);
    if (rc != SHAPE_OK) shape_err_prefix(err, "%s", path);
    return rc;
}

/* The states read, -o and --state: no output over an input or another
 * output, every output's folder there, before anything is read. */
static int check_paths(const shape_args *args, const char *output, const char *state_out, shape_err *err)
{
    size_t n = shape_args_positional_count(args);
    shape_path_use *uses = calloc(n + 2, sizeof *uses);
    if (!uses) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    uses[0] = (shape_path_use){"-o", output, 1};
    uses[1] = (shape_path_use){"--state", state_out, 1};
    for (size_t i = 0; i < n; i++) uses[i + 2] = (shape_path_use){"the state", shape_args_positional(args, i), 0};
    int rc = shape_paths_check(uses, n + 2, err);
    free(uses);
    /* one file given twice would count its rows twice, whatever it holds */
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) {
        struct stat a, b;
        if (stat(shape_args_positional(args, i), &a) != 0 || !S_ISREG(a.st_mode)) continue;
        for (size_t j = 0; rc == SHAPE_OK && j < i; j++)
            if (stat(shape_args_positional(args, j), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                rc = shape_err_set(err, SHAPE_EINVAL,
                                   "%s and %s are the same state file: merging it twice would count its rows twice",
                                   shape_args_positional(args, j), shape_args_positional(args, i));
    }
    return rc;
}

/* ---- window states ---------------------------------------------------------- */

typedef struct merged_window {
    shape_window_kind kind;
    int64_t start, end, rows;
    shape_profile *profile;
    char *table; /* --split-by: the window's table; else NULL */
} merged_window;

typedef struct window_set {
    merged_window *w;
    size_t n, cap;
    int any_source; /* --any-source */
    int have_kind;
    shape_window_kind kind;
} window_set;

static void window_set_free(window_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        shape_profile_free(set->w[i].profile);
        free(set->w[i].table);
    }
    free(set->w);
}

/* Windows in order of (start, end, table; no table first). */
static int window_cmp(const merged_window *m, int64_t start, int64_t end, const char *table)
{
    if (m->start != start) return m->start < start ? -1 : 1;
    if (m->end != end) return m->end < end ? -1 : 1;
    if (!m->table || !table) return (m->table != NULL) - (table != NULL);
    return strcmp(m->table, table);
}

/* Index of the first window not before (start, end, table). */
static size_t window_at(const window_set *set, int64_t start, int64_t end, const char *table)
{
    size_t lo = 0, hi = set->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (window_cmp(&set->w[mid], start, end, table) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* One line of a window states file into the set (merged into its window). */
static int add_window_line(void *vset, const char *path, size_t line_no, const char *line, size_t len,
                           const shape_profile_config *cfg, shape_err *err)
{
    window_set *set = vset;
    json_error_t jerr;
    json_t *doc = json_loadb(line, len, 0, &jerr);
    const json_t *start = json_object_get(doc, "start_us"), *end = json_object_get(doc, "end_us");
    const json_t *rows = json_object_get(doc, "rows");
    const char *b64 = json_string_value(json_object_get(doc, "state"));
    shape_window_kind kind;
    int rc = SHAPE_OK;
    if (!doc || !json_is_integer(start) || !json_is_integer(end) || !json_is_integer(rows) || !b64 ||
        shape_window_kind_parse(json_string_value(json_object_get(doc, "kind")), &kind) != 0)
        rc = shape_err_set(err, SHAPE_EINVAL, "%s line %zu is not a window state", path, line_no);
    else if (set->have_kind && kind != set->kind)
        rc = shape_err_set(err, SHAPE_EINVAL, "%s holds %s windows, the states before it %s windows", path,
                           shape_window_kind_name(kind), shape_window_kind_name(set->kind));
    if (rc != SHAPE_OK || json_is_true(json_object_get(doc, "partial"))) { /* a partial window is not merged */
        json_decref(doc);
        return rc;
    }
    set->have_kind = 1;
    set->kind = kind;
    size_t n = 0;
    uint8_t *bytes = shape_base64_decode(b64, &n);
    shape_profile *p = NULL;
    rc = bytes ? shape_profile_state_load(bytes, n, cfg, &p, err)
               : shape_err_set(err, SHAPE_EINVAL, "%s line %zu: the state is not base64", path, line_no);
    free(bytes);
    int64_t s = json_integer_value(start), e = json_integer_value(end), r = json_integer_value(rows);
    const char *tname = json_string_value(json_object_get(doc, "table"));
    char *table = tname ? strdup(tname) : NULL;
    json_decref(doc);
    if (rc == SHAPE_OK && tname && !table) rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc != SHAPE_OK) {
        if (rc != SHAPE_ENOMEM) shape_err_prefix(err, "%s line %zu", path, line_no);
        shape_profile_free(p);
        free(table);
        return rc;
    }
    size_t at = window_at(set, s, e, table);
    if (at < set->n && window_cmp(&set->w[at], s, e, table) == 0) {
        free(table);
        char what[300];
        snprintf(what, sizeof what, "%.200s line %zu", path, line_no);
        rc = shape_profile_check_merge(set->w[at].profile, p, set->any_source, "the states of its window before it",
                                       what, err);
        if (rc == SHAPE_OK) rc = shape_profile_merge(set->w[at].profile, p, err);
        set->w[at].rows += r;
        shape_profile_free(p);
        if (rc != SHAPE_OK) shape_err_prefix(err, "cannot merge %s line %zu", path, line_no);
        return rc;
    }
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 64;
        merged_window *w = realloc(set->w, cap * sizeof *w);
        if (!w) {
            shape_profile_free(p);
            free(table);
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        }
        set->w = w;
        set->cap = cap;
    }
    memmove(&set->w[at + 1], &set->w[at], (set->n - at) * sizeof *set->w);
    set->w[at] = (merged_window){kind, s, e, r, p, table};
    set->n++;
    return SHAPE_OK;
}

/* One line of a state file into a set (add_window_line, add_split_line). */
typedef int (*state_line_fn)(void *set, const char *path, size_t line_no, const char *line, size_t len,
                             const shape_profile_config *cfg, shape_err *err);

/* Every state file named on the command line, read whole, refused when
 * `refuse` says it holds states of another kind, then each non-empty line
 * handed to add_line with its number (from 1). skip_torn: a last line without
 * its newline is not read (window states are appended, so a killed worker's
 * torn line is not a window yet); otherwise it is (split states are written
 * whole, atomically). The one loop over files and lines for both kinds. */
static int read_state_lines(const shape_args *args, int (*refuse)(const char *path, const char *bytes, size_t len,
                                                                  shape_err *err),
                            int skip_torn, state_line_fn add_line, void *set, const shape_profile_config *cfg,
                            shape_err *err)
{
    int rc = SHAPE_OK;
    size_t n = shape_args_positional_count(args);
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) {
        const char *path = shape_args_positional(args, i);
        char *bytes = NULL;
        size_t len = 0;
        rc = shape_file_read_all(path, "state", &bytes, &len, NULL, err);
        if (rc == SHAPE_OK) rc = refuse(path, bytes, len, err);
        size_t at = 0, line_no = 0;
        while (rc == SHAPE_OK && at < len) {
            const char *nl = memchr(bytes + at, '\n', len - at);
            if (!nl && skip_torn) break;
            size_t m = nl ? (size_t)(nl - (bytes + at)) : len - at;
            line_no++;
            if (m > 0) rc = add_line(set, path, line_no, bytes + at, m, cfg, err);
            at += m + 1;
        }
        free(bytes);
    }
    return rc;
}

static int refuse_global_state(const char *path, const char *bytes, size_t len, shape_err *err)
{
    if (len >= 8 && memcmp(bytes, "SHPROFST", 8) == 0)
        return shape_err_set(err, SHAPE_EINVAL, "%s is a global profile's state, not window states: merge them apart",
                             path);
    return SHAPE_OK;
}

/* Lines made by line_fn for every window, concatenated, written atomically. */
static int write_windows(const window_set *set, const char *path,
                         int (*line_fn)(const shape_window_closed *, char **, size_t *, shape_err *), shape_err *err)
{
    char *all = NULL;
    size_t len = 0, cap = 0;
    int rc = SHAPE_OK;
    for (size_t i = 0; rc == SHAPE_OK && i < set->n; i++) {
        const merged_window *m = &set->w[i];
        shape_window_closed c = {.kind = m->kind, .start_us = m->start, .end_us = m->end, .rows = m->rows,
                                 .profile = m->profile, .table = m->table};
        char *line = NULL;
        size_t n = 0;
        rc = line_fn(&c, &line, &n, err);
        if (rc == SHAPE_OK && len + n > cap) {
            size_t grown_cap = (len + n) * 2;
            char *grown = realloc(all, grown_cap);
            if (grown) {
                all = grown;
                cap = grown_cap;
            } else {
                rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory");
            }
        }
        if (rc == SHAPE_OK) {
            memcpy(all + len, line, n);
            len += n;
        }
        free(line);
    }
    if (rc == SHAPE_OK) rc = shape_atomic_write(path, all ? all : "", len, err);
    free(all);
    return rc;
}

static int merge_window_states(const shape_args *args, const shape_profile_config *cfg, const char *output,
                               const char *state_out, shape_err *err)
{
    window_set set = {.any_source = shape_args_flag(args, "any-source")};
    size_t n = shape_args_positional_count(args);
    int rc = read_state_lines(args, refuse_global_state, 1, add_window_line, &set, cfg, err);
    if (rc == SHAPE_OK) rc = write_windows(&set, output, shape_windows_file_line, err);
    if (rc == SHAPE_OK && state_out) rc = write_windows(&set, state_out, shape_window_states_line, err);
    if (rc == SHAPE_OK) {
        int64_t events = 0;
        for (size_t i = 0; i < set.n; i++) events += set.w[i].rows;
        json_t *s = json_pack("{s:I, s:I, s:I, s:[s]}", "states", (json_int_t)n, "windows", (json_int_t)set.n, "events",
                              (json_int_t)events, "written", output);
        char *line = NULL;
        size_t len = 0;
        rc = s ? shape_profile_json_dumps(s, -1, &line, &len, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        json_decref(s);
        if (rc == SHAPE_OK) printf("%s\n", line);
        free(line);
    }
    window_set_free(&set);
    return rc;
}

/* ---- split states (stream-profile --split-by --state) ----------------------- */

#define SPLIT_LINE_START "{\"state\": "

typedef struct split_set {
    shape_profile **t;
    size_t n, cap;
    int any_source; /* --any-source */
} split_set;

/* One line {"state", "table"}: merged into its table (first seen order). */
static int add_split_line(void *vset, const char *path, size_t line_no, const char *line, size_t len,
                          const shape_profile_config *cfg, shape_err *err)
{
    split_set *set = vset;
    json_t *doc = json_loadb(line, len, 0, NULL);
    const char *b64 = json_string_value(json_object_get(doc, "state"));
    const char *table = json_string_value(json_object_get(doc, "table"));
    size_t blen = 0;
    uint8_t *bytes = b64 && table ? shape_base64_decode(b64, &blen) : NULL;
    shape_profile *p = NULL;
    int rc = bytes ? shape_profile_state_load(bytes, blen, cfg, &p, err)
                   : shape_err_set(err, SHAPE_EINVAL, "%s line %zu is not a split table's state", path, line_no);
    free(bytes);
    if (rc == SHAPE_OK && strcmp(shape_profile_name(p), table) != 0)
        rc = shape_err_set(err, SHAPE_EINVAL, "%s line %zu: the state is of table '%.100s', not '%.100s'", path, line_no,
                           shape_profile_name(p), table);
    json_decref(doc);
    if (rc != SHAPE_OK) {
        shape_profile_free(p);
        if (err->message[0] && !strstr(err->message, path)) shape_err_prefix(err, "%s line %zu", path, line_no);
        return rc;
    }
    for (size_t i = 0; i < set->n; i++)
        if (!strcmp(shape_profile_name(set->t[i]), shape_profile_name(p))) {
            char what[300];
            snprintf(what, sizeof what, "%.200s line %zu", path, line_no);
            rc = shape_profile_check_merge(set->t[i], p, set->any_source, "the states of its table before it", what,
                                           err);
            if (rc == SHAPE_OK) rc = shape_profile_merge(set->t[i], p, err);
            if (rc != SHAPE_OK) shape_err_prefix(err, "cannot merge %s line %zu", path, line_no);
            shape_profile_free(p);
            return rc;
        }
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 16;
        shape_profile **t = realloc(set->t, cap * sizeof *t);
        if (!t) {
            shape_profile_free(p);
            return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        }
        set->t = t;
        set->cap = cap;
    }
    set->t[set->n++] = p;
    return SHAPE_OK;
}

static int refuse_unsplit_state(const char *path, const char *bytes, size_t len, shape_err *err)
{
    size_t start = strlen(SPLIT_LINE_START);
    if (len > 0 && (len < start || memcmp(bytes, SPLIT_LINE_START, start) != 0))
        return shape_err_set(err, SHAPE_EINVAL,
                             "%s holds no split table states (stream-profile --split-by --state): merge them apart", path);
    return SHAPE_OK;
}

static int merge_split_states(const shape_args *args, const shape_profile_config *cfg, const char *output,
                              const char *state_out, shape_err *err)
{
    split_set set = {.any_source = shape_args_flag(args, "any-source")};
    size_t n = shape_args_positional_count(args);
    int rc = read_state_lines(args, refuse_unsplit_state, 0, add_split_line, &set, cfg, err);
    char *text = NULL;
    size_t len = 0;
    const shape_profile *const *tables = (const shape_profile *const *)set.t;
    if (rc == SHAPE_OK && set.n == 0) rc = shape_err_set(err, SHAPE_EINVAL, "the split states hold no table");
    if (rc == SHAPE_OK) rc = shape_stream_split_document(tables, set.n, &text, &len, err);
    if (rc == SHAPE_OK) rc = shape_atomic_write(output, text, len, err);
    free(text);
    text = NULL;
    if (rc == SHAPE_OK && state_out) rc = shape_stream_split_states(tables, set.n, &text, &len, err);
    if (rc == SHAPE_OK && state_out) rc = shape_atomic_write(state_out, text, len, err);
    free(text);
    if (rc == SHAPE_OK) {
        int64_t events = 0;
        for (size_t i = 0; i < set.n; i++) events += shape_profile_rows(set.t[i]);
        json_t *s = json_pack("{s:I, s:I, s:I, s:[s]}", "states", (json_int_t)n, "tables", (json_int_t)set.n, "events",
                              (json_int_t)events, "written", output);
        char *line = NULL;
        rc = s ? shape_profile_json_dumps(s, -1, &line, &len, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        json_decref(s);
        if (rc == SHAPE_OK) printf("%s\n", line);
        free(line);
    }
    for (size_t i = 0; i < set.n; i++) shape_profile_free(set.t[i]);
    free(set.t);
    return rc;
}

/* What an input holds, from its first bytes (so that a file of neither kind,
 * such as /dev/zero, is refused before it is read whole). */
enum state_kind { STATE_BINARY, STATE_WINDOWS, STATE_SPLIT, STATE_NEITHER, STATE_EMPTY };

static int state_kind(const char *path)
{
    FILE *f = fopen(path, "rb");
    char head[16] = {0};
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    if (!f) return STATE_BINARY; /* the loader says why it cannot be read */
    if (n >= 8 && memcmp(head, "SHPROFST", 8) == 0) return STATE_BINARY;
    if (n >= strlen(SPLIT_LINE_START) && memcmp(head, SPLIT_LINE_START, strlen(SPLIT_LINE_START)) == 0) return STATE_SPLIT;
    if (n == 0) return STATE_EMPTY; /* an idle worker's states file */
    return head[0] == '{' ? STATE_WINDOWS : STATE_NEITHER;
}

static const char *kind_name(int k)
{
    return k == STATE_BINARY ? "global profile's state" : k == STATE_SPLIT ? "split tables' states file" : "window states file";
}

/* Every input of one kind, known from its first bytes (an empty file, an
 * idle worker's, counts as the first input's kind). */
static int check_kinds(const shape_args *args, int *kind, shape_err *err)
{
    size_t n = shape_args_positional_count(args);
    long first = -1; /* the first input that is not empty */
    for (size_t i = 0; i < n; i++) {
        const char *path = shape_args_positional(args, i);
        int k = state_kind(path);
        if (k == STATE_NEITHER)
            return shape_err_set(err, SHAPE_EINVAL,
                                 "%s is neither a profile state nor a window states file (stream-profile --state writes them)",
                                 path);
        if (k == STATE_EMPTY) continue;
        if (first < 0) {
            first = (long)i;
            *kind = k;
        } else if (k != *kind) {
            return shape_err_set(err, SHAPE_EINVAL, "%s is a %s, %s a %s: merge them apart", path, kind_name(k),
                                 shape_args_positional(args, (size_t)first), kind_name(*kind));
        }
    }
    if (first < 0) *kind = STATE_WINDOWS; /* only empty files: idle windowed workers */
    return SHAPE_OK;
}

static int run_profile_merge(const shape_args *args, shape_err *err)
{
    const char *output = shape_args_value(args, "output");
    const char *state_out = shape_args_value(args, "state");
    if (!output || !output[0]) return shape_err_set(err, SHAPE_EINVAL, "-o/--output OUT.json is required");
    SHAPE_RETURN_NOT_OK(check_paths(args, output, state_out, err));
    shape_profile_config cfg;
    shape_profile_config_default(&cfg);
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "top-n", 1, INT32_MAX, SHAPE_PROFILE_TOP_N, &cfg.top_n, err));
    int kind = STATE_BINARY;
    SHAPE_RETURN_NOT_OK(check_kinds(args, &kind, err));
    if (kind == STATE_SPLIT) return merge_split_states(args, &cfg, output, state_out, err);
    if (kind == STATE_WINDOWS) return merge_window_states(args, &cfg, output, state_out, err);
    shape_profile *merged = NULL;
    int rc = SHAPE_OK;
    size_t n = shape_args_positional_count(args);
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) {
        const char *path = shape_args_positional(args, i);
        shape_profile *p = NULL;
        rc = load_state(path, &cfg, &p, err);
        if (rc == SHAPE_OK && !merged) {
            merged = p;
            continue;
        }
        if (rc == SHAPE_OK)
            rc = shape_profile_check_merge(merged, p, shape_args_flag(args, "any-source"),
                                           i == 1 ? shape_args_positional(args, 0) : "the states before it", path, err);
        if (rc == SHAPE_OK) {
            rc = shape_profile_merge(merged, p, err);
            if (rc != SHAPE_OK) shape_err_prefix(err, "cannot merge %s", path);
        }
        shape_profile_free(p);
    }
    char *text = NULL;
    size_t len = 0;
    const shape_profile *tables[1] = {merged};
    if (rc == SHAPE_OK) rc = shape_profile_document(tables, 1, &text, &len, err);
    if (rc == SHAPE_OK) rc = shape_atomic_write(output, text, len, err);
    free(text);
    if (rc == SHAPE_OK && state_out) {
        uint8_t *bytes = NULL;
        rc = shape_profile_state_save(merged, &bytes, &len, err);
        if (rc == SHAPE_OK) rc = shape_atomic_write(state_out, bytes, len, err);
        free(bytes);
    }
    if (rc == SHAPE_OK) {
        json_t *s = json_pack("{s:I, s:I, s:[s]}", "states", (json_int_t)n, "events", (json_int_t)shape_profile_rows(merged),
                              "written", output);
        char *line = NULL;
        rc = s ? shape_profile_json_dumps(s, -1, &line, &len, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        json_decref(s);
        if (rc == SHAPE_OK) printf("%s\n", line);
        free(line);
    }
    shape_profile_free(merged);
    return rc;
}

static const shape_arg_spec profile_merge_args[] = {
    {"output", 'o', SHAPE_ARG_VALUE, "OUT.json", NULL,
     "Write the merged profile document here (atomically); window states: the merged windows (JSON lines)."},
    {"top-n", 0, SHAPE_ARG_VALUE, "N", "500", "The --top-n the states were made with."},
    {"any-source", 0, SHAPE_ARG_FLAG, NULL, NULL,
     "Also merge states of different streams (files, topics); a partition of one stream held twice is still refused."},
    {"state", 0, SHAPE_ARG_VALUE, "FILE", NULL, "Also write the merged state (to merge further)."},
    {0},
};

const shape_command shape_cmd_profile_merge = {
    .name = "profile-merge",
    .summary = "Merge profiler states (stream-profile --state) into one profile.",
    .positional = "STATE...",
    .min_positional = 1,
    .max_positional = -1,
    .args = profile_merge_args,
    .epilog = "Each STATE is a file written by `shape stream-profile --state FILE`, all made with the same\n"
              "--top-n. Exact statistics (counts, min/max, histograms, patterns) come out identical to one\n"
              "run over all the rows; mean and m2 agree to rounding; distinct (HyperLogLog) is identical;\n"
              "top values and quantiles stay within their error bounds. Window states (stream-profile --window\n"
              "KIND --state FILE) merge window by window; -o then gets a windows file (JSON lines). Split\n"
              "states (stream-profile --split-by --state FILE) merge table by table into one document.\n"
              "Each state records its stream and partitions: a partition held by two states (overlapping\n"
              "--partitions, a state given twice) is refused, and so are states of other streams unless\n"
              "--any-source. Example:\n"
              "  shape profile-merge a.state b.state -o orders.json\n"
              "  shape profile-merge --any-source day1.state day2.state -o both.json",
    .run = run_profile_merge,
};

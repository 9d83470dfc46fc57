/* cmd_stream_profile.c — `shape stream-profile URI -o OUT.json`: one
 * bounded-memory profile of everything a stream holds (the global window),
 * or with --window tumbling|sliding|session --windows OUT.jsonl one profile
 * per window of event time.
 *
 * Why: the product's read-side promise — profile a Kafka topic (or files)
 * in bounded memory, resumable after a crash with exactly the profile an
 * uninterrupted run gives (reference/spec-core.md §1.6, §1.8, §1.9).
 *
 * How: this file is the command's options, one run of the library's stream
 * profiler (shape/stream_profiler.h: reconnect with back-off, replay
 * de-duplication, the frozen schema, checkpoints, the profile worker) and
 * its report: the profile document (-o), the mergeable state (--state) and
 * a one-line JSON summary on stdout; windowed, the windows file (written by
 * the library as windows close), the summary with the late counts, and one
 * stderr line when rows arrived late. SIGINT/SIGTERM stop after the batch in
 * hand: checkpoint first, then the profile of what was read. When stderr is
 * a terminal, one progress line shows messages, messages/s, partitions done
 * of total (when the source can tell) and elapsed time.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/stream_common.h"
#include "shape/atomic_file.h"
#include "shape/clock.h"
#include "shape/paths.h"
#include "shape/duration.h"
#include "shape/profile.h"
#include "shape/stream_profiler.h"
#include "shape/windows_file.h"

#define WINDOW_BATCH_SIZE 1024 /* --batch-size with a window kind, unless given */

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

typedef struct run {
    shape_stream_profiler_config pc; /* uri, checkpoint, partitions, name, event_time, profile, ... */
    const char *output, *state_path, *window_name;
    int bounded, limited; /* stop_at_end; a --max-events / --idle-timeout stop */
    shape_options *options;
    shape_stream_profiler *profiler;
    int progress;
    double started, last_progress;
} run;

static void show_progress(run *r, shape_stream *stream, int final)
{
    if (!r->progress) return;
    double t = shape_clock_now();
    if (!final && t - r->last_progress < 0.25) return;
    r->last_progress = t;
    int64_t messages = shape_stream_stats(stream).messages;
    double elapsed = t - r->started;
    shape_source_progress parts = shape_stream_progress(stream);
    char text[64] = "";
    if (parts.partitions_total >= 0 && parts.partitions_done >= 0)
        snprintf(text, sizeof text, ", partitions %lld/%lld", (long long)parts.partitions_done,
                 (long long)parts.partitions_total);
    else if (parts.partitions_total >= 0)
        snprintf(text, sizeof text, ", %lld partitions", (long long)parts.partitions_total);
    fprintf(stderr, "\r\033[Kshape stream-profile: %lld messages, %.0f messages/s%s, %.1f s elapsed",
            (long long)messages, elapsed > 0 ? (double)messages / elapsed : 0.0, text, elapsed);
    if (final) fputc('\n', stderr);
    fflush(stderr);
}

static void on_step(void *ud, shape_stream *stream)
{
    show_progress(ud, stream, 0);
}

/* ---- outputs ------------------------------------------------------------- */

static int write_state(const run *r, const shape_profile *profile, shape_err *err)
{
    uint8_t *state = NULL;
    size_t len = 0;
    int rc = shape_profile_state_save(profile, &state, &len, err);
    if (rc == SHAPE_OK) rc = shape_atomic_write(r->state_path, state, len, err);
    free(state);
    return rc;
}

/* Split: every table (shape_stream_split_document) and, with --state, their states. */
static int write_split(const run *r, shape_err *err)
{
    const shape_profile *const *tables;
    size_t n = shape_stream_profiler_tables(r->profiler, &tables);
    char *text = NULL;
    size_t len = 0;
    int rc = shape_stream_split_document(tables, n, &text, &len, err);
    if (rc == SHAPE_OK) rc = shape_atomic_write(r->output, text, len, err);
    free(text);
    text = NULL;
    if (rc == SHAPE_OK && r->state_path) rc = shape_stream_split_states(tables, n, &text, &len, err);
    if (rc == SHAPE_OK && r->state_path) rc = shape_atomic_write(r->state_path, text, len, err);
    free(text);
    return rc;
}

static int write_outputs(void *ud, const shape_profile *profile, shape_err *err)
{
    const run *r = ud;
    if (r->pc.split_by) return write_split(r, err);
    const shape_profile *tables[1] = {profile};
    char *text = NULL;
    size_t len = 0;
    int rc = shape_profile_document(tables, 1, &text, &len, err);
    if (rc == SHAPE_OK) rc = shape_atomic_write(r->output, text, len, err);
    free(text);
    if (rc == SHAPE_OK && r->state_path) rc = write_state(r, profile, err);
    return rc;
}

static int print_line(json_t *doc, shape_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = doc ? shape_profile_json_dumps(doc, -1, &text, &len, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    json_decref(doc);
    if (rc != SHAPE_OK) return rc;
    printf("%s\n", text);
    free(text);
    if (fflush(stdout) != 0) return shape_err_set(err, SHAPE_EIO, "cannot write to stdout: %s", strerror(errno));
    return SHAPE_OK;
}

static int print_summary(run *r, int written, int interrupted, const char *note, shape_err *err)
{
    shape_stream *stream = shape_stream_profiler_stream(r->profiler);
    const shape_stream_counters *n = shape_stream_counters_of(stream);
    const shape_window_counters *w = shape_stream_profiler_window_counters(r->profiler);
    shape_decode_stats st = shape_stream_stats(stream);
    json_t *s = json_object();
    if (!s) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    const char *file = w ? r->pc.windows_path : r->output;
    if (w) written = shape_stream_profiler_wrote_windows(r->profiler);
    json_object_set_new(s, "uri", json_string(r->pc.uri));
    json_object_set_new(s, "window", json_string(shape_window_kind_name(r->pc.window.kind)));
    json_object_set_new(s, "events", json_integer(shape_stream_profiler_events(r->profiler)));
    json_object_set_new(s, "batches", json_integer(n->batches_processed));
    /* windows: the windows emitted, the global profile counting as one;
     * written: the list of files written (reference 1.9, as the original
     * prints them; tests/compat compares the two summaries) */
    json_object_set_new(s, "windows", json_integer(w ? w->windows_emitted : written ? 1 : 0));
    json_object_set_new(s, "late_events", json_integer(w ? w->late_events : 0));
    json_object_set_new(s, "null_event_time", json_integer(w ? w->null_event_time : shape_stream_null_event_time(stream)));
    json_object_set_new(s, "duplicate_rows", json_integer(n->duplicate_rows));
    json_object_set_new(s, "reconnects", json_integer(n->reconnects));
    json_object_set_new(s, "checkpoints", json_integer(n->checkpoints));
    json_t *files = json_array();
    if (files && written) json_array_append_new(files, json_string(file));
    json_object_set_new(s, "written", files);
    json_object_set_new(s, "undecodable", json_integer(st.undecodable));
    json_object_set_new(s, "rejected", json_integer(st.rejected));
    /* records the broker removed before the read reached them (each gap warned per partition) */
    if (st.offsets_lost) json_object_set_new(s, "offsets_lost", json_integer(st.offsets_lost));
    json_object_set_new(s, "dropped_fields", json_integer(st.dropped_fields));
    json_object_set_new(s, "values_overflowed", json_integer(st.values_overflowed));
    if (interrupted) json_object_set_new(s, "interrupted", json_true());
    if (w && w->late_events > 0) {
        double share = w->rows_in > 0 ? (double)w->late_events / (double)w->rows_in : 0;
        /* 6 and 3 decimals (rounded half up; no libm in the command) */
        json_object_set_new(s, "late_share", json_real((double)(int64_t)(share * 1e6 + 0.5) / 1e6));
        json_object_set_new(s, "late_lag_seconds", json_real((double)((w->max_late_lag_us + 500) / 1000) / 1e3));
    }
    if (note) json_object_set_new(s, "note", json_string(note));
    return print_line(s, err);
}

/* ---- options ------------------------------------------------------------- */

/* A duration option: *us = dflt when absent; `need`: 1 required, -1
 * refused ("not with --window KIND"), 0 optional. */
static int duration_option(const shape_args *args, const char *name, int need, const char *kind, int64_t dflt,
                           int64_t *us, shape_err *err)
{
    const char *text = shape_args_value(args, name);
    char what[64];
    snprintf(what, sizeof what, "--%s", name);
    *us = dflt;
    if (!text && need > 0) return shape_err_set(err, SHAPE_EINVAL, "--window %s needs --%s DURATION", kind, name);
    if (text && need < 0) return shape_err_set(err, SHAPE_EINVAL, "--%s does not go with --window %s", name, kind);
    return text ? shape_duration_parse(text, what, us, err) : SHAPE_OK;
}

/* --window and the options that shape the windows (reference §1.2). */
static int read_window_options(const shape_args *args, run *r, int follow, shape_err *err)
{
    const char *kind = shape_args_value(args, "window");
    if (!kind) kind = "global";
    shape_window_config *w = &r->pc.window;
    memset(w, 0, sizeof *w);
    if (shape_window_kind_parse(kind, &w->kind) != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--window must be one of global, tumbling, sliding, session, not '%.40s'",
                             kind);
    r->window_name = kind;
    int global = w->kind == SHAPE_WINDOW_GLOBAL, sliding = w->kind == SHAPE_WINDOW_SLIDING;
    int session = w->kind == SHAPE_WINDOW_SESSION;
    r->output = shape_args_value(args, "output");
    r->pc.windows_path = shape_args_value(args, "windows");
    if (global && r->pc.windows_path)
        return shape_err_set(err, SHAPE_EINVAL, "--windows goes with tumbling, sliding and session windows; --window global writes -o OUT.json");
    if (!global && r->output)
        return shape_err_set(err, SHAPE_EINVAL, "-o/--output goes with --window global; --window %s writes --windows OUT.jsonl", kind);
    if (global && (!r->output || !r->output[0]))
        return shape_err_set(err, SHAPE_EINVAL, "-o/--output OUT.json is required with --window global");
    if (!global && (!r->pc.windows_path || !r->pc.windows_path[0]))
        return shape_err_set(err, SHAPE_EINVAL, "--windows OUT.jsonl is required with --window %s", kind);
    SHAPE_RETURN_NOT_OK(duration_option(args, "size", global || session ? -1 : 1, kind, 0, &w->size_us, err));
    SHAPE_RETURN_NOT_OK(duration_option(args, "slide", sliding ? 1 : -1, kind, 0, &w->slide_us, err));
    SHAPE_RETURN_NOT_OK(duration_option(args, "gap", session ? 1 : -1, kind, 0, &w->gap_us, err));
    SHAPE_RETURN_NOT_OK(duration_option(args, "allowed-lateness", 0, kind, 0, &w->allowed_lateness_us, err));
    SHAPE_RETURN_NOT_OK(duration_option(args, "max-partition-skew", 0, kind, 600000000, &w->max_skew_us, err));
    SHAPE_RETURN_NOT_OK(shape_args_double(args, "partition-idle-timeout", 0, 0, "seconds", follow ? 30 : 0,
                                          &w->idle_timeout_s, err));
    if (!global) SHAPE_RETURN_NOT_OK(shape_window_config_check(w, err));
    if (!global) r->pc.window_states_path = r->state_path; /* one state line per window, for profile-merge */
    return SHAPE_OK;
}

static int read_options(const shape_args *args, run *r, shape_err *err)
{
    r->pc.uri = shape_args_positional(args, 0);
    r->pc.checkpoint = shape_args_value(args, "checkpoint");
    if (r->pc.checkpoint && !r->pc.checkpoint[0]) return shape_err_set(err, SHAPE_EINVAL, "--checkpoint needs a file name");
    r->state_path = shape_args_value(args, "state");
    if (r->state_path && !r->state_path[0]) return shape_err_set(err, SHAPE_EINVAL, "--state needs a file name");
    r->pc.name = shape_args_value(args, "name");
    if (!r->pc.name) r->pc.name = "stream";
    if (!r->pc.name[0]) return shape_err_set(err, SHAPE_EINVAL, "--name must not be empty");
    r->pc.event_time = shape_args_value(args, "event-time");
    if (!r->pc.event_time) r->pc.event_time = "_shape_event_time";
    shape_profile_config_default(&r->pc.profile);
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "top-n", 1, INT32_MAX, SHAPE_PROFILE_TOP_N, &r->pc.profile.top_n, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "checkpoint-every", 1, INT64_MAX, 10, &r->pc.checkpoint_every, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "max-reconnects", 0, 1000000, 5, &r->pc.max_reconnects, err));
    const char *start = shape_args_value(args, "start");
    if (!start) start = "earliest";
    if (strcmp(start, "earliest") != 0 && strcmp(start, "latest") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--start must be 'earliest' or 'latest', not '%.40s'", start);
    double idle = -1;
    const char *idle_text = shape_args_value(args, "idle-timeout");
    SHAPE_RETURN_NOT_OK(shape_args_double(args, "idle-timeout", 0, 0, "seconds", -1, &idle, err));
    int follow = shape_args_flag(args, "follow") > 0;
    r->bounded = !follow;
    SHAPE_RETURN_NOT_OK(read_window_options(args, r, follow, err));
    r->limited = shape_args_value(args, "max-events") || idle_text;
    r->pc.split_by = shape_args_value(args, "split-by");
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "max-tables", 1, 1000000, 100, &r->pc.max_tables, err));
    if (!r->pc.split_by && shape_args_value(args, "max-tables"))
        return shape_err_set(err, SHAPE_EINVAL, "--max-tables goes with --split-by");
    int by_header = 0;
    const char *split_name = NULL;
    if (r->pc.split_by) {
        SHAPE_RETURN_NOT_OK(shape_stream_split_parse(r->pc.split_by, &by_header, &split_name, err));
        r->pc.keep_headers = shape_args_flag(args, "with-headers") > 0;
    }

    SHAPE_RETURN_NOT_OK(shape_cli_source_options(args, &r->options, err));
    SHAPE_RETURN_NOT_OK(shape_options_set_string(r->options, "start_at", start, err));
    SHAPE_RETURN_NOT_OK(shape_options_set_bool(r->options, "stop_at_end", !follow, err));
    if (idle_text) SHAPE_RETURN_NOT_OK(shape_options_set_double(r->options, "idle_timeout", idle, err));
    if (by_header) SHAPE_RETURN_NOT_OK(shape_options_set_bool(r->options, "with_headers", 1, err));
    /* the split reads one header: a kafka:// read hands the decoder only that one (the hidden map of one
     * entry instead of every header; the tables never see it) */
    if (by_header && !r->pc.keep_headers && strncmp(r->pc.uri, "kafka://", 8) == 0 &&
        !shape_options_has(r->options, "only_header"))
        SHAPE_RETURN_NOT_OK(shape_options_set_string(r->options, "only_header", split_name, err));
    r->pc.partitions = shape_args_value(args, "partitions");
    if (r->pc.partitions) SHAPE_RETURN_NOT_OK(shape_options_set_string(r->options, "partitions", r->pc.partitions, err));
    shape_path_use uses[] = {{"-o", r->output, 1},
                             {"--windows", r->pc.windows_path, 1},
                             {"--state", r->state_path, 1},
                             {"--checkpoint", r->pc.checkpoint, 1},
                             {"the input", shape_paths_uri_file(r->pc.uri), 0}};
    SHAPE_RETURN_NOT_OK(shape_paths_check(uses, sizeof uses / sizeof uses[0], err));
    /* Windows: smaller batches by default. Each batch comes from one partition and moves its
     * watermark at once; one spanning more event time than --max-partition-skew makes the
     * early rows of the partitions after it late, and 1024 messages keep a batch within the
     * 10 minute default for partitions that see more than ~2 messages a second. */
    if (r->pc.window.kind != SHAPE_WINDOW_GLOBAL && !shape_options_has(r->options, "batch_size"))
        SHAPE_RETURN_NOT_OK(shape_options_set_int(r->options, "batch_size", WINDOW_BATCH_SIZE, err));
    /* event time wants the partitions interleaved (kafka://; see docs/plugins/streaming.md) */
    if (r->pc.window.kind != SHAPE_WINDOW_GLOBAL && strncmp(r->pc.uri, "kafka://", 8) == 0)
        SHAPE_RETURN_NOT_OK(shape_options_set_bool(r->options, "interleave", 1, err));
    if (follow && !r->limited)
        fprintf(stderr, "shape: following until interrupted (Ctrl-C stops, checkpoints and writes the profile)\n");
    return SHAPE_OK;
}

/* ---- the command --------------------------------------------------------- */

/* A windowed worker that saw nothing still leaves its (empty) states file. */
static int empty_window_states(const char *path, shape_err *err)
{
    shape_windows_file *f = NULL;
    SHAPE_RETURN_NOT_OK(shape_window_states_file_open(path, &f, err));
    shape_windows_file_close(f);
    return SHAPE_OK;
}

/* One stderr line when rows arrived after their window closed (§1.7): how
 * many, what became of them, and the --allowed-lateness that would have kept
 * them; the original's wording, counts with thousands separators. */
static void late_report(const run *r)
{
    const shape_window_counters *w = shape_stream_profiler_window_counters(r->profiler);
    if (!w || w->late_events == 0) return;
    double share = 100.0 * (double)w->late_events / (double)(w->rows_in > 0 ? w->rows_in : 1);
    int64_t need_us = r->pc.window.allowed_lateness_us + w->max_late_lag_us;
    char late[32], rows[32];
    shape_cli_thousands(late, sizeof late, (uint64_t)w->late_events);
    shape_cli_thousands(rows, sizeof rows, (uint64_t)w->rows_in);
    fprintf(stderr,
            "shape: %s: %s of %s events (%.1f%%) arrived after their window had closed and are not in the window "
            "profiles (late_events in the summary). The furthest behind was %.1fs past the watermark; "
            "--allowed-lateness %llds would have kept them (it delays each window by as much).\n",
            share >= 1.0 ? "warning" : "note", late, rows, share, (double)w->max_late_lag_us / 1e6,
            (long long)((need_us + 999999) / 1000000));
}

static int finish(run *r, shape_err *err)
{
    int interrupted = shape_stream_profiler_interrupted(r->profiler);
    shape_decode_stats st = shape_stream_stats(shape_stream_profiler_stream(r->profiler));
    if (shape_stream_profiler_events(r->profiler) == 0 && !shape_stream_profiler_resumed(r->profiler)) {
        if (st.undecodable || st.rejected)
            return shape_err_set(err, SHAPE_EINVAL,
                                 "the stream had no usable event: %lld undecodable and %lld rejected messages (see --on-error raise for the first one)",
                                 (long long)st.undecodable, (long long)st.rejected);
        fprintf(stderr, "shape: the stream had no events; nothing was written%s\n",
                r->state_path ? " but the (empty) state" : "");
        if (r->state_path && r->pc.split_by && r->pc.window.kind == SHAPE_WINDOW_GLOBAL)
            SHAPE_RETURN_NOT_OK(shape_atomic_write(r->state_path, "", 0, err));
        else if (r->state_path && r->pc.window.kind == SHAPE_WINDOW_GLOBAL) /* an empty worker still merges */
            SHAPE_RETURN_NOT_OK(write_state(r, shape_stream_profiler_profile(r->profiler), err));
        else if (r->state_path) SHAPE_RETURN_NOT_OK(empty_window_states(r->state_path, err));
        return print_summary(r, 0, interrupted, "the stream had no events; nothing was written", err);
    }
    int complete = r->bounded && !r->limited;
    SHAPE_RETURN_NOT_OK(shape_stream_profiler_finish(r->profiler, complete, write_outputs, r, err));
    SHAPE_RETURN_NOT_OK(print_summary(r, 1, interrupted, NULL, err));
    late_report(r);
    return SHAPE_OK;
}

static int finished_before(run *r, shape_err *err)
{
    fprintf(stderr, "shape: the checkpoint %s is of a finished run; nothing was read or written\n", r->pc.checkpoint);
    json_t *note = json_pack("{s:s, s:s}", "uri", r->pc.uri, "note",
                             "the checkpoint is of a finished run; nothing was read or written (use another checkpoint file to profile again)");
    return print_line(note, err);
}

static int run_stream_profile(const shape_args *args, shape_err *err)
{
    run r;
    memset(&r, 0, sizeof r);
    int rc = read_options(args, &r, err);
    r.pc.options = r.options;
    r.pc.registry = shape_cli_registry();
    r.pc.stop = &stop_requested;
    r.pc.on_step = on_step;
    r.pc.ud = &r;
    /* (before the checkpoint's lock is taken: once its lock file is there,
     * a stop is a request, honoured by the run) */
    if (rc == SHAPE_OK) shape_cli_catch_stop_signals(on_stop_signal);
    if (rc == SHAPE_OK) rc = shape_stream_profiler_new(&r.pc, &r.profiler, err);
    if (rc == SHAPE_OK && shape_stream_profiler_was_finished(r.profiler)) {
        rc = finished_before(&r, err);
    } else if (rc == SHAPE_OK) {
        r.progress = isatty(STDERR_FILENO);
        r.started = shape_clock_now();
        r.last_progress = r.started;
        rc = shape_stream_profiler_run(r.profiler, err);
        show_progress(&r, shape_stream_profiler_stream(r.profiler), 1);
        if (rc == SHAPE_OK) rc = finish(&r, err);
        shape_decode_stats st = shape_stream_stats(shape_stream_profiler_stream(r.profiler));
        if (rc == SHAPE_OK) shape_cli_decode_warnings(&st, r.options, 0);
    }
    shape_stream_profiler_free(r.profiler);
    shape_options_free(r.options);
    return rc;
}

static const shape_arg_spec stream_profile_args[] = {
    {"output", 'o', SHAPE_ARG_VALUE, "OUT.json", NULL, "Write the profile here (atomically); required with --window global."},
    {"window", 0, SHAPE_ARG_VALUE, "KIND", "global",
     "global (one profile, -o), or tumbling, sliding, session (one profile per window of event time, --windows)."},
    {"windows", 0, SHAPE_ARG_VALUE, "OUT.jsonl", NULL,
     "Append each closed window here as a JSON line; required with tumbling, sliding and session."},
    {"size", 0, SHAPE_ARG_VALUE, "DURATION", NULL, "Window length (tumbling, sliding), e.g. 1m, 500ms, 1.5h."},
    {"slide", 0, SHAPE_ARG_VALUE, "DURATION", NULL, "Sliding step (sliding only; <= --size)."},
    {"gap", 0, SHAPE_ARG_VALUE, "DURATION", NULL, "Inactivity that ends a session (session only)."},
    {"allowed-lateness", 0, SHAPE_ARG_VALUE, "DURATION", "0s", "How far behind the watermark a row is still accepted."},
    {"max-partition-skew", 0, SHAPE_ARG_VALUE, "DURATION", "10m",
     "How far (event time) a partition may trail the newest event before windows stop waiting for it."},
    {"partition-idle-timeout", 0, SHAPE_ARG_VALUE, "SECONDS", NULL,
     "A partition silent this long stops holding the watermark (default 30 with --follow, else never; 0 never)."},
    {"name", 0, SHAPE_ARG_VALUE, "NAME", "stream", "Table name in the profile (with --split-by: of the rows without the value)."},
    {"split-by", 0, SHAPE_ARG_VALUE, "header:NAME|field:NAME", NULL,
     "One table per distinct value of this message header or body field (text, integer, bool), named by it; columns null in all of a table's rows are left out."},
    {"max-tables", 0, SHAPE_ARG_VALUE, "N", "100",
     "With --split-by: at most N tables of their own; rows of further values are profiled together as '_other' (one warning)."},
    {"top-n", 0, SHAPE_ARG_VALUE, "N", "500", "Top values kept per column (at most 64 in bounded mode)."},
    SHAPE_STREAM_ARGS, /* --batch-size: 65536, with a window kind 1024 */
    {"start", 0, SHAPE_ARG_VALUE, "earliest|latest", "earliest", "Where partitions without a checkpoint position begin."},
    {"follow", 0, SHAPE_ARG_FLAG, NULL, NULL, "Keep reading new events instead of stopping at the end the stream had at start."},
    {"idle-timeout", 0, SHAPE_ARG_VALUE, "SECONDS", NULL, "Stop after this long without a message (with --follow)."},
    {"checkpoint", 0, SHAPE_ARG_VALUE, "FILE", NULL,
     "Record positions, counters and the profiler state here (atomically); resume from it if present."},
    {"checkpoint-every", 0, SHAPE_ARG_VALUE, "N", "10", "Processed batches between checkpoints."},
    {"max-reconnects", 0, SHAPE_ARG_VALUE, "N", "5",
     "Consecutive failed reconnects before giving up (waits 1 s, doubling, at most 30 s)."},
    {"partitions", 0, SHAPE_ARG_VALUE, "LIST", NULL,
     "Read only these partitions, e.g. 0,3-5 (kafka://; split a topic across workers, then profile-merge)."},
    {"state", 0, SHAPE_ARG_VALUE, "FILE", NULL,
     "Also write the mergeable profiler state (for shape profile-merge); windowed: one state line per window."},
    {0},
};

const shape_command shape_cmd_stream_profile = {
    .name = "stream-profile",
    .summary = "Profile a stream (files, '-', kafka://) in bounded memory; resumable.",
    .positional = "URI",
    .min_positional = 1,
    .max_positional = 1,
    .args = stream_profile_args,
    .epilog = "URI: a JSON lines file, a folder or glob of them, file:///PATH, '-' for stdin, or\n"
              "kafka://HOST:PORT[,HOST:PORT...]/TOPIC. The profile document goes to -o; a one-line JSON\n"
              "summary to stdout. With --checkpoint a killed run resumes where its last checkpoint was and\n"
              "gives the same profile as an uninterrupted run; SIGINT/SIGTERM checkpoint and write what was read.\n"
              "Windowed: --window tumbling --size 1m --windows OUT.jsonl (sliding: --size, --slide; session:\n"
              "--gap); windows are half-open, aligned to the epoch, closed when the watermark passes their end.",
    .run = run_stream_profile,
};

/* cmd_stream_read.c — `shape stream-read URI`: decoded rows as JSON lines.
 *
 * Why: the quickest way to see what shape makes of a stream — the same
 * source, decoder and columns the profiler gets — in a form jq reads.
 * How: read the stream through the library's runtime (shape/stream.h: the
 * source reopened at the last position after a connection failure, with
 * back-off, up to --max-reconnects times in a row), starting at the
 * checkpoint's position if there is one; print each batch's rows
 * (shape/arrow_json.h), flush stdout, and only then replace the checkpoint
 * (atomically) with the position after the batch, and once more at the end
 * (steps without rows, such as undecodable messages, move it too): a run
 * killed at any point and rerun prints every row at least once, repeating
 * at most the batch that was in flight. A summary of the decoder's counters
 * goes to stderr. SIGINT/SIGTERM stop the read after the batch in hand (a
 * wait for messages, or for the first connection, is cut short) and end it
 * as the stream's end would: checkpoint, summary, exit 0.
 * --format arrow writes the batches as an Arrow IPC stream instead
 * (shape/arrow_ipc.h), --format parquet as one Parquet file
 * (shape/parquet.h), to stdout or -o FILE; both read with a frozen schema
 * (every batch has the first batch's columns, across reconnects too) and
 * refuse --checkpoint (a resumed run would begin a second stream or file).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/stream_common.h"
#include "shape/arrow_ipc.h"
#include "shape/arrow_json.h"
#include "shape/parquet.h"
#include "shape/paths.h"
#include "shape/stream.h"
#include "shape/stream_checkpoint.h"

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* Load a checkpoint: *found = 0 when the file does not exist. */
static int load_checkpoint(const char *path, const char *uri, shape_offsets *start, int *found, shape_err *err)
{
    *found = 0;
    json_t *doc;
    SHAPE_RETURN_NOT_OK(shape_checkpoint_load(path, &doc, err));
    if (!doc) return SHAPE_OK;
    int rc = shape_stream_read_checkpoint_read(path, doc, uri, start, err);
    json_decref(doc);
    if (rc == SHAPE_OK) *found = 1;
    return rc;
}

/* The batch's rows as JSON lines, printed PRINT_ROWS at a time (one write
 * of many lines instead of one per line). */
enum { PRINT_ROWS = 512 };

static int print_batch(FILE *out, const struct ArrowSchema *schema, const struct ArrowArray *array,
                       shape_json_buf *lines, shape_err *err)
{
    for (int64_t r = 0; r < array->length; r += PRINT_ROWS) {
        int64_t n = array->length - r < PRINT_ROWS ? array->length - r : PRINT_ROWS;
        lines->len = 0;
        SHAPE_RETURN_NOT_OK(shape_arrow_rows_jsonl(schema, array, r, n, lines, err));
        if (fwrite(lines->data, 1, lines->len, out) != lines->len)
            return shape_err_set(err, SHAPE_EIO, "cannot write to %s: %s", out == stdout ? "stdout" : "the output",
                                 strerror(errno));
    }
    return SHAPE_OK;
}

/* --start, --follow, --idle-timeout and --partitions, as source options
 * (set only when given, so a source that does not know them is not asked). */
static int reading_flags(const shape_args *args, shape_options *o, shape_err *err)
{
    const char *start = shape_args_value(args, "start");
    if (start && strcmp(start, "earliest") != 0 && strcmp(start, "latest") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--start must be 'earliest' or 'latest', not '%.40s'", start);
    if (start) SHAPE_RETURN_NOT_OK(shape_options_set_string(o, "start_at", start, err));
    if (shape_args_flag(args, "follow")) SHAPE_RETURN_NOT_OK(shape_options_set_bool(o, "stop_at_end", 0, err));
    if (shape_args_value(args, "idle-timeout")) {
        double seconds;
        SHAPE_RETURN_NOT_OK(shape_args_double(args, "idle-timeout", 0, 0, "seconds", 0, &seconds, err));
        SHAPE_RETURN_NOT_OK(shape_options_set_double(o, "idle_timeout", seconds, err));
    }
    const char *partitions = shape_args_value(args, "partitions");
    if (partitions) SHAPE_RETURN_NOT_OK(shape_options_set_string(o, "partitions", partitions, err));
    return SHAPE_OK;
}

enum format { FORMAT_JSONL, FORMAT_NULL, FORMAT_ARROW, FORMAT_PARQUET };

static int parse_format(const char *text, int *format, shape_err *err)
{
    static const char *const names[] = {"jsonl", "null", "arrow", "parquet"};
    *format = FORMAT_JSONL;
    if (!text) return SHAPE_OK;
    for (int i = 0; i < 4; i++)
        if (strcmp(text, names[i]) == 0) {
            *format = i;
            return SHAPE_OK;
        }
    return shape_err_set(err, SHAPE_EINVAL, "--format must be 'jsonl', 'null', 'arrow' or 'parquet', got '%.32s'", text);
}

/* Where rows go: stdout, or -o FILE. A Parquet file is written as
 * FILE.tmp.PID beside it and renamed over FILE only once complete (a file
 * without its footer is no Parquet file); other formats write FILE as they
 * go (an IPC stream is readable up to where a failed run stopped), and a
 * FILE of no batch at all is removed when the run fails. JSON lines resumed
 * from a checkpoint are appended to FILE (the rows before are kept). Devices and FIFOs
 * are written through. */
typedef struct output {
    FILE *f;
    const char *path; /* NULL: stdout */
    char *tmp;        /* the temporary name, when renamed at the end */
    int append;       /* FILE was opened to append (a resumed run): never removed */
} out_file;

static int open_output(const char *path, int format, int append, out_file *o, shape_err *err)
{
    o->f = stdout;
    o->path = NULL;
    o->tmp = NULL;
    o->append = append;
    if (!path || strcmp(path, "-") == 0) {
        if ((format == FORMAT_ARROW || format == FORMAT_PARQUET) && isatty(STDOUT_FILENO))
            return shape_err_set(err, SHAPE_EINVAL, "--format %s writes binary data: give -o FILE or redirect stdout",
                                 format == FORMAT_ARROW ? "arrow" : "parquet");
        return SHAPE_OK;
    }
    if (format == FORMAT_NULL) return shape_err_set(err, SHAPE_EINVAL, "-o makes no sense with --format null");
    struct stat st;
    int regular = stat(path, &st) != 0 || S_ISREG(st.st_mode);
    if (format == FORMAT_PARQUET && regular) {
        size_t n = strlen(path) + 32;
        o->tmp = malloc(n);
        if (!o->tmp) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        snprintf(o->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    }
    FILE *f = fopen(o->tmp ? o->tmp : path, append ? "ab" : "wb");
    if (!f) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL;
        return shape_err_set(err, SHAPE_EIO, "cannot create %.200s: %s", path, strerror(e));
    }
    o->f = f;
    o->path = regular ? path : NULL;
    return SHAPE_OK;
}

static int close_output(out_file *o, int rc, int wrote_batches, shape_err *err)
{
    if (o->f == stdout) return rc;
    if (fclose(o->f) != 0 && rc == SHAPE_OK)
        rc = shape_err_set(err, SHAPE_EIO, "cannot write %.200s: %s", o->path ? o->path : "the output", strerror(errno));
    if (o->tmp) {
        if (rc == SHAPE_OK && rename(o->tmp, o->path) != 0)
            rc = shape_err_set(err, SHAPE_EIO, "cannot rename %.200s to %.200s: %s", o->tmp, o->path, strerror(errno));
        if (rc != SHAPE_OK) unlink(o->tmp);
        free(o->tmp);
    } else if (rc != SHAPE_OK && o->path && !wrote_batches && !o->append) {
        unlink(o->path);
    }
    return rc;
}

static int run_stream_read(const shape_args *args, shape_err *err)
{
    const char *uri = shape_args_positional(args, 0);
    const char *checkpoint = shape_args_value(args, "checkpoint");
    const char *output = shape_args_value(args, "output");
    shape_options *options = NULL;
    shape_offsets start = SHAPE_OFFSETS_INIT;
    shape_stream *stream = NULL;
    shape_json_buf lines = SHAPE_JSON_BUF_INIT;
    shape_ipc_writer *ipc = NULL;
    shape_parquet_writer *parquet = NULL;
    out_file o = {stdout, NULL, NULL, 0};
    FILE *out = stdout;
    int found = 0, end = 0, format;
    int64_t max_reconnects = 0;
    SHAPE_RETURN_NOT_OK(parse_format(shape_args_value(args, "format"), &format, err));
    int binary = format == FORMAT_ARROW || format == FORMAT_PARQUET;
    if (binary && checkpoint)
        return shape_err_set(err, SHAPE_EINVAL, "--checkpoint cannot be used with --format %s (a resumed run would begin a second %s)",
                             format == FORMAT_ARROW ? "arrow" : "parquet", format == FORMAT_ARROW ? "stream" : "file");
    shape_parquet_options popts = {0};
    const char *compression = shape_args_value(args, "compression");
    if (compression && strcmp(compression, "zstd") != 0 && strcmp(compression, "none") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--compression must be 'zstd' or 'none', got '%.32s'", compression);
    if (compression && format != FORMAT_PARQUET)
        return shape_err_set(err, SHAPE_EINVAL, "--compression applies to --format parquet only");
    if (compression && strcmp(compression, "none") == 0) popts.codec = SHAPE_PARQUET_UNCOMPRESSED;
    const char *encoding = shape_args_value(args, "parquet-encoding");
    if (encoding && strcmp(encoding, "plain") != 0 && strcmp(encoding, "dictionary") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--parquet-encoding must be 'plain' or 'dictionary', got '%.32s'", encoding);
    if (encoding && format != FORMAT_PARQUET)
        return shape_err_set(err, SHAPE_EINVAL, "--parquet-encoding applies to --format parquet only");
    if (encoding && strcmp(encoding, "dictionary") == 0) popts.encoding = SHAPE_PARQUET_DICTIONARY;
    if (output && !output[0]) return shape_err_set(err, SHAPE_EINVAL, "-o needs a file name");
    int rc = shape_args_int(args, "max-reconnects", 0, 1000000, 5, &max_reconnects, err);
    shape_path_use uses[] = {{"--checkpoint", checkpoint, 1},
                             {"-o", output && strcmp(output, "-") != 0 ? output : NULL, 1},
                             {"the input", shape_paths_uri_file(uri), 0}};
    if (rc == SHAPE_OK) rc = shape_paths_check(uses, 3, err);
    if (rc == SHAPE_OK) rc = shape_cli_source_options(args, &options, err);
    if (rc == SHAPE_OK) rc = reading_flags(args, options, err);
    /* SIGINT/SIGTERM: stop after the batch in hand (a read or poll that
     * waits is cut short: no SA_RESTART), then the checkpoint, the file's
     * end and the summary as at the end of the stream; exit 0. (Installed
     * before the checkpoint's lock is taken: once its lock file is there, a
     * stop is a request.) */
    if (rc == SHAPE_OK) shape_cli_catch_stop_signals(on_stop_signal);
    int lock_fd = -1; /* one reader per checkpoint */
    if (rc == SHAPE_OK && checkpoint) rc = shape_checkpoint_lock(checkpoint, &lock_fd, err);
    if (rc == SHAPE_OK && checkpoint) rc = load_checkpoint(checkpoint, uri, &start, &found, err);
    shape_stream_config sc = {.uri = uri, .options = options, .registry = shape_cli_registry(),
                              .max_reconnects = max_reconnects, .freeze_schema = binary, .stop = &stop_requested};

    if (rc == SHAPE_OK) rc = open_output(output, format, found, &o, err);
    out = o.f;
    if (rc == SHAPE_OK && format == FORMAT_ARROW) rc = shape_ipc_writer_new(out, &ipc, err);
    if (rc == SHAPE_OK && format == FORMAT_PARQUET) rc = shape_parquet_writer_new(out, &popts, &parquet, err);
    if (rc == SHAPE_OK) rc = shape_stream_new(&sc, &stream, err);
    shape_stream_resume_point at = {.offset = found ? &start : NULL};
    if (rc == SHAPE_OK) rc = shape_stream_restore(stream, &at, err);
    while (rc == SHAPE_OK) {
        struct ArrowSchema schema;
        struct ArrowArray array;
        rc = shape_stream_next(stream, &schema, &array, &end, err);
        if (rc != SHAPE_OK || end) break;
        if (format == FORMAT_JSONL) rc = print_batch(out, &schema, &array, &lines, err);
        else if (ipc) rc = shape_ipc_writer_write(ipc, &schema, &array, err);
        else if (parquet) rc = shape_parquet_writer_write(parquet, &schema, &array, err);
        array.release(&array);
        schema.release(&schema);
        if (rc == SHAPE_OK && fflush(out) != 0)
            rc = shape_err_set(err, SHAPE_EIO, "cannot write to %s: %s", out == stdout ? "stdout" : "the output",
                               strerror(errno));
        if (rc == SHAPE_OK && checkpoint) rc = shape_stream_read_checkpoint_write(checkpoint, uri, shape_stream_offset(stream), err);
    }
    if (rc == SHAPE_OK && ipc) rc = shape_ipc_writer_finish(ipc, NULL, err);
    if (rc == SHAPE_OK && parquet) rc = shape_parquet_writer_finish(parquet, NULL, err);
    if (rc == SHAPE_OK && checkpoint && shape_stream_offset(stream))
        rc = shape_stream_read_checkpoint_write(checkpoint, uri, shape_stream_offset(stream), err);
    if (stream && shape_stream_opened(stream)) {
        shape_decode_stats st = shape_stream_stats(stream);
        const shape_stream_counters *n = shape_stream_counters_of(stream);
        char extra[256] = "";
        if (st.offsets_lost) /* records the broker removed before the read reached them (warned per partition) */
            snprintf(extra, sizeof extra, ", %lld offsets lost (removed by the broker before they were read)",
                     (long long)st.offsets_lost);
        if (n->reconnects)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", %lld reconnects", (long long)n->reconnects);
        int nulled = format == FORMAT_JSONL; /* JSON has no infinity */
        if (st.dropped_fields || st.values_overflowed)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", %lld dropped_fields, %lld %s",
                     (long long)st.dropped_fields, (long long)st.values_overflowed,
                     nulled ? "values_nulled" : "values_overflowed");
        fprintf(stderr, "shape stream-read: %lld messages, %lld rows, %lld undecodable, %lld rejected%s%s%s\n",
                (long long)st.messages, (long long)st.rows, (long long)st.undecodable, (long long)st.rejected,
                extra, found ? " (resumed from the checkpoint)" : "",
                shape_stream_stopped(stream) ? ", stopped on request" : "");
        if (rc == SHAPE_OK) shape_cli_decode_warnings(&st, options, nulled);
    } else if (stream && shape_stream_stopped(stream)) {
        fprintf(stderr, "shape stream-read: stopped on request before the source was opened; nothing was read\n");
    }
    int64_t written = (ipc ? shape_ipc_writer_batches(ipc) : 0) + (parquet ? shape_parquet_writer_row_groups(parquet) : 0);
    shape_ipc_writer_free(ipc);
    shape_parquet_writer_free(parquet);
    rc = close_output(&o, rc, written > 0 || format == FORMAT_JSONL, err);
    shape_stream_free(stream);
    shape_checkpoint_unlock(checkpoint, lock_fd);
    shape_options_free(options);
    shape_offsets_free(&start);
    shape_json_buf_reset(&lines);
    return rc;
}

static const shape_arg_spec stream_read_args[] = {
    SHAPE_STREAM_ARGS,
    {"start", 0, SHAPE_ARG_VALUE, "earliest|latest", "earliest",
     "Where partitions without a checkpoint position begin (kafka://)."},
    {"follow", 0, SHAPE_ARG_FLAG, NULL, NULL,
     "Keep reading new messages instead of stopping at the end the stream had at start (kafka://); Ctrl-C stops."},
    {"idle-timeout", 0, SHAPE_ARG_VALUE, "SECONDS", NULL, "Stop after this long without a message (with --follow)."},
    {"partitions", 0, SHAPE_ARG_VALUE, "LIST", NULL, "Kafka partitions to read, e.g. 0,3-5 (default: all)."},
    {"format", 0, SHAPE_ARG_VALUE, "jsonl|null|arrow|parquet", "jsonl",
     "jsonl prints each row; arrow writes the Arrow IPC stream format (a schema message, one record batch "
     "per micro-batch); parquet one Parquet file (a row group per micro-batch, ZSTD, statistics); null "
     "decodes every message into Arrow batches and drops them (benchmarks)."},
    {"compression", 0, SHAPE_ARG_VALUE, "zstd|none", "zstd", "Parquet page compression."},
    {"parquet-encoding", 0, SHAPE_ARG_VALUE, "plain|dictionary", "plain",
     "Parquet value encoding: dictionary gives each column chunk a dictionary page and indices (falling back "
     "to plain for a chunk whose values mostly differ)."},
    {"output", 'o', SHAPE_ARG_VALUE, "FILE", "-", "Write there instead of stdout ('-')."},
    {"checkpoint", 0, SHAPE_ARG_VALUE, "FILE", NULL,
     "Resume from FILE if present; after each batch printed, record the position there (atomically)."},
    {"max-reconnects", 0, SHAPE_ARG_VALUE, "N", "5",
     "Consecutive failed reconnects before giving up (waits 1 s, doubling, at most 30 s)."},
    {0},
};

const shape_command shape_cmd_stream_read = {
    .name = "stream-read",
    .summary = "Print a stream's decoded rows as JSON lines (files, '-', kafka://).",
    .positional = "URI",
    .min_positional = 1,
    .max_positional = 1,
    .args = stream_read_args,
    .epilog = "URI: a JSON lines file, a folder or glob of them, file:///PATH, '-' for stdin, or\n"
              "kafka://HOST:PORT[,HOST:PORT...]/TOPIC. Rows are printed with their columns in batch order;\n"
              "timestamps as ISO-8601 with Z, binary values as base64. Counters go to stderr.",
    .run = run_stream_read,
};

/* cmd_stream_read.c — `shape stream-read URI`: decoded rows as JSON lines.
 *
 * Why: the quickest way to see what shape makes of a stream — the same
 * source, decoder and columns the profiler gets — in a form jq reads.
 * How: open the source (file or plugin) at the checkpoint's position if
 * there is one, print each batch's rows (shape/arrow_json.h), flush stdout,
 * and only then replace the checkpoint (atomically) with the position after
 * the batch: a run killed at any point and rerun prints every row at least
 * once, repeating at most the batch that was in flight. A summary of the
 * decoder's counters goes to stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/stream_common.h"
#include "shape/arrow_json.h"
#include "shape/stream_checkpoint.h"

#define CHECKPOINT_FORMAT SHAPE_STREAM_READ_CHECKPOINT_FORMAT

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

static int save_checkpoint(const char *path, const char *uri, const shape_offsets *offsets, shape_err *err)
{
    json_t *doc = json_pack("{s:s, s:i, s:s, s:o}", "format", CHECKPOINT_FORMAT, "version", 1, "uri", uri, "offset",
                            shape_offsets_to_json(offsets));
    if (!doc) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
    int rc = shape_checkpoint_save(path, doc, err);
    json_decref(doc);
    return rc;
}

/* The batch's rows as JSON lines, printed PRINT_ROWS at a time (one write
 * of many lines instead of one per line). */
enum { PRINT_ROWS = 512 };

static int print_batch(const struct ArrowSchema *schema, const struct ArrowArray *array, shape_json_buf *lines,
                       shape_err *err)
{
    for (int64_t r = 0; r < array->length; r += PRINT_ROWS) {
        int64_t n = array->length - r < PRINT_ROWS ? array->length - r : PRINT_ROWS;
        lines->len = 0;
        SHAPE_RETURN_NOT_OK(shape_arrow_rows_jsonl(schema, array, r, n, lines, err));
        if (fwrite(lines->data, 1, lines->len, stdout) != lines->len)
            return shape_err_set(err, SHAPE_EIO, "cannot write to stdout: %s", strerror(errno));
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

static int run_stream_read(const shape_args *args, shape_err *err)
{
    const char *uri = shape_args_positional(args, 0);
    const char *checkpoint = shape_args_value(args, "checkpoint");
    shape_options *options = NULL;
    shape_offsets start = SHAPE_OFFSETS_INIT, after = SHAPE_OFFSETS_INIT;
    shape_source *src = NULL;
    shape_json_buf lines = SHAPE_JSON_BUF_INIT;
    int found = 0, end = 0;
    const char *format = shape_args_value(args, "format");
    int print = !format || strcmp(format, "jsonl") == 0;
    if (format && !print && strcmp(format, "null") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--format must be 'jsonl' or 'null', got '%.32s'", format);
    int rc = shape_cli_source_options(args, &options, err);
    if (rc == SHAPE_OK) rc = reading_flags(args, options, err);
    if (rc == SHAPE_OK && checkpoint) rc = load_checkpoint(checkpoint, uri, &start, &found, err);
    if (rc == SHAPE_OK) rc = shape_cli_open_source(uri, options, found ? &start : NULL, &src, err);
    while (rc == SHAPE_OK) {
        struct ArrowSchema schema = {0};
        struct ArrowArray array = {0};
        rc = shape_source_next(src, &schema, &array, &after, &end, err);
        if (rc != SHAPE_OK || end) break;
        if (array.release) {
            if (print) rc = print_batch(&schema, &array, &lines, err);
            array.release(&array);
            schema.release(&schema);
        }
        if (rc == SHAPE_OK && fflush(stdout) != 0)
            rc = shape_err_set(err, SHAPE_EIO, "cannot write to stdout: %s", strerror(errno));
        if (rc == SHAPE_OK && checkpoint) rc = save_checkpoint(checkpoint, uri, &after, err);
    }
    if (src) {
        const shape_decode_stats *st = shape_source_stats(src);
        fprintf(stderr, "shape stream-read: %lld messages, %lld rows, %lld undecodable, %lld rejected%s\n",
                (long long)st->messages, (long long)st->rows, (long long)st->undecodable, (long long)st->rejected,
                found ? " (resumed from the checkpoint)" : "");
    }
    shape_source_close(src);
    shape_options_free(options);
    shape_offsets_free(&start);
    shape_offsets_free(&after);
    shape_json_buf_release(&lines);
    return rc;
}

static const shape_arg_spec stream_read_args[] = {
    SHAPE_STREAM_ARGS,
    {"start", 0, SHAPE_ARG_VALUE, "earliest|latest", "earliest",
     "Where partitions without a checkpoint position begin (kafka://)."},
    {"follow", 0, SHAPE_ARG_FLAG, NULL, NULL,
     "Keep reading new messages instead of stopping at the end the stream had at start (kafka://)."},
    {"idle-timeout", 0, SHAPE_ARG_VALUE, "SECONDS", NULL, "Stop after this long without a message (with --follow)."},
    {"partitions", 0, SHAPE_ARG_VALUE, "LIST", NULL, "Kafka partitions to read, e.g. 0,3-5 (default: all)."},
    {"format", 0, SHAPE_ARG_VALUE, "jsonl|null", "jsonl",
     "jsonl prints each row; null decodes every message into Arrow batches and drops them (benchmarks)."},
    {"checkpoint", 0, SHAPE_ARG_VALUE, "FILE", NULL,
     "Resume from FILE if present; after each batch printed, record the position there (atomically)."},
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

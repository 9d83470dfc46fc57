/* stream_common.c — what the stream-reading commands (stream-read,
 * stream-profile) share: the source options assembled from the command line
 * in the reference's order (see stream_common.h). Opening, reopening and
 * checkpoints are the library's (shape/stream.h, shape/stream_checkpoint.h). */
#include "cli/stream_common.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "shape/registry.h"

int shape_cli_source_options(const shape_args *args, shape_options **out, shape_err *err)
{
    shape_options *o = shape_options_new();
    if (!o) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    int rc = SHAPE_OK;
    const char *file = shape_args_value(args, "options-file");
    if (file) rc = shape_options_load_file(o, file, err);
    for (size_t i = 0; rc == SHAPE_OK && i < shape_args_count(args, "option"); i++)
        rc = shape_options_set_kv(o, shape_args_nth(args, "option", i), err);
    const char *v;
    if (rc == SHAPE_OK && (v = shape_args_value(args, "batch-size"))) {
        int64_t n;
        rc = shape_args_int(args, "batch-size", 1, 1 << 24, 65536, &n, err);
        if (rc == SHAPE_OK) rc = shape_options_set_int(o, "batch_size", n, err);
    }
    if (rc == SHAPE_OK && (v = shape_args_value(args, "max-events"))) {
        int64_t n;
        rc = shape_args_int(args, "max-events", 1, INT64_MAX, 0, &n, err);
        if (rc == SHAPE_OK) rc = shape_options_set_int(o, "max_messages", n, err);
    }
    /* the flag is named in its refusal (the library's names its option key) */
    const char *unit_flag = shape_args_value(args, "event-time-unit");
    int unit_value;
    if (rc == SHAPE_OK && unit_flag && shape_time_unit_parse(unit_flag, &unit_value, err) != SHAPE_OK)
        rc = shape_err_set(err, SHAPE_EINVAL, "--event-time-unit must be one of s, ms, us, not '%.40s'", unit_flag);
    if (rc == SHAPE_OK && (v = shape_args_value(args, "event-time"))) {
        rc = shape_options_set_string(o, "event_time_field", v, err);
        const char *unit = shape_args_value(args, "event-time-unit");
        if (rc == SHAPE_OK) rc = shape_options_set_string(o, "event_time_unit", unit ? unit : "ms", err);
    } else if (rc == SHAPE_OK && (v = shape_args_value(args, "event-time-unit"))) {
        rc = shape_options_set_string(o, "event_time_unit", v, err);
    }
    if (rc == SHAPE_OK && (v = shape_args_value(args, "max-columns"))) {
        int64_t n;
        rc = shape_args_int(args, "max-columns", 0, INT32_MAX, SHAPE_DECODE_MAX_COLUMNS_DEFAULT, &n, err);
        if (rc == SHAPE_OK) rc = shape_options_set_int(o, "max_columns", n, err);
    }
    if (rc == SHAPE_OK && (v = shape_args_value(args, "on-error"))) {
        int on_error;
        rc = shape_on_error_parse(v, &on_error, err);
        if (rc == SHAPE_OK) rc = shape_options_set_string(o, "on_error", v, err);
    }
    static const char *const flags[][2] = {{"with-key", "with_key"},
                                           {"with-headers", "with_headers"},
                                           {"with-timestamp", "with_timestamp"},
                                           {"with-offsets", "with_offsets"}};
    for (size_t i = 0; rc == SHAPE_OK && i < sizeof flags / sizeof flags[0]; i++)
        if (shape_args_flag(args, flags[i][0])) rc = shape_options_set_bool(o, flags[i][1], 1, err);
    if (rc != SHAPE_OK) {
        shape_options_free(o);
        return rc;
    }
    *out = o;
    return SHAPE_OK;
}

void shape_cli_decode_warnings(const shape_decode_stats *st, const shape_options *source_options, int infinity_nulled)
{
    int64_t max_columns = SHAPE_DECODE_MAX_COLUMNS_DEFAULT;
    shape_err ignored;
    if (source_options)
        (void)shape_options_get_int64(source_options, "max_columns", SHAPE_DECODE_MAX_COLUMNS_DEFAULT, &max_columns, &ignored);
    if (st->columns_over_limit)
        fprintf(stderr,
                "shape: warning: the first batch had %lld fields past the limit of %lld columns; they are not "
                "profiled (raise --max-columns; each column costs ~45 KB of sketches)\n",
                (long long)st->columns_over_limit, (long long)max_columns);
    if (st->dropped_fields)
        fprintf(stderr,
                "shape: warning: %lld values of fields that are not columns were dropped (dropped_fields: the "
                "columns are those of the first batch%s; declare them with --option schema=...)\n",
                (long long)st->dropped_fields, st->columns_over_limit ? " up to --max-columns" : "");
    if (st->values_overflowed)
        fprintf(stderr, "shape: warning: %lld numbers beyond the double range (e.g. 1e400) %s\n",
                (long long)st->values_overflowed,
                infinity_nulled ? "were written as null (values_nulled; JSON has no infinity)"
                                : "are kept as +-infinity (values_overflowed)");
}

void shape_cli_catch_stop_signals(void (*on_stop)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

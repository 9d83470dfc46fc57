/* stream_common.h — what the stream-reading commands share: assembling
 * source options from the command line and the flags every reader accepts. */
#ifndef SHAPE_CLI_STREAM_COMMON_H
#define SHAPE_CLI_STREAM_COMMON_H

#include "shape/cli.h"
#include "shape/options.h"
#include "shape/source.h"

/* The option specs every reading command has (terminated by {0}); commands
 * copy them into their own tables with SHAPE_STREAM_ARGS. */
#define SHAPE_STREAM_ARGS                                                                          \
    {"batch-size", 0, SHAPE_ARG_VALUE, "N", "65536", "Most messages per micro-batch."},            \
    {"max-events", 0, SHAPE_ARG_VALUE, "N", NULL, "Stop after N messages."},                       \
    {"event-time", 0, SHAPE_ARG_VALUE, "FIELD", "_shape_event_time",                               \
     "Body field holding the event time (taken out of the row)."},                                 \
    {"event-time-unit", 0, SHAPE_ARG_VALUE, "s|ms|us", "ms", "Unit of a numeric event time."},     \
    {"on-error", 0, SHAPE_ARG_VALUE, "skip|raise", "skip",                                         \
     "An undecodable or non-conforming message (or Kafka records retention removed before they "   \
     "were read) is counted and skipped, or stops the read."},                                     \
    {"max-columns", 0, SHAPE_ARG_VALUE, "N", "4096",                                                \
     "Most columns the first batch may create (~45 KB each in a profile); fields past it are dropped, counted and warned of (--on-error raise: an error). 0: no limit."}, \
    {"with-key", 0, SHAPE_ARG_FLAG, NULL, NULL, "Add the message key as _shape_key (binary)."},    \
    {"with-headers", 0, SHAPE_ARG_FLAG, NULL, NULL, "Add the headers as _shape_headers."},         \
    {"with-timestamp", 0, SHAPE_ARG_FLAG, NULL, NULL, "Add the broker time as _shape_timestamp."}, \
    {"with-offsets", 0, SHAPE_ARG_FLAG, NULL, NULL, "Add _shape_partition and _shape_offset."},    \
    {"option", 0, SHAPE_ARG_LIST, "KEY=VALUE", NULL, "A source option; VALUE is JSON if it parses."}, \
    {"options-file", 0, SHAPE_ARG_VALUE, "FILE", NULL, "Source options as a JSON object."}

/* One stderr warning for each silent effect of decoding the run had (fields
 * past --max-columns, values of fields not in the frozen schema dropped,
 * numbers beyond the double range), naming the count and what to do;
 * infinity_nulled: the output is JSON text, where infinity is written null. */
void shape_cli_decode_warnings(const shape_decode_stats *st, const shape_options *source_options, int infinity_nulled);

/* Options file, then each --option, then the flags above: later wins. */
int shape_cli_source_options(const shape_args *args, shape_options **out, shape_err *err);

/* SIGINT and SIGTERM call on_stop (which sets the command's stop flag),
 * without SA_RESTART: a read or poll that waits returns EINTR, so the stop
 * is seen at once. */
void shape_cli_catch_stop_signals(void (*on_stop)(int));

#endif

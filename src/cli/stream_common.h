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
    {"with-key", 0, SHAPE_ARG_FLAG, NULL, NULL, "Add the message key as _shape_key (binary)."},    \
    {"with-headers", 0, SHAPE_ARG_FLAG, NULL, NULL, "Add the headers as _shape_headers."},         \
    {"with-timestamp", 0, SHAPE_ARG_FLAG, NULL, NULL, "Add the broker time as _shape_timestamp."}, \
    {"with-offsets", 0, SHAPE_ARG_FLAG, NULL, NULL, "Add _shape_partition and _shape_offset."},    \
    {"option", 0, SHAPE_ARG_LIST, "KEY=VALUE", NULL, "A source option; VALUE is JSON if it parses."}, \
    {"options-file", 0, SHAPE_ARG_VALUE, "FILE", NULL, "Source options as a JSON object."}

/* Options file, then each --option, then the flags above: later wins. */
int shape_cli_source_options(const shape_args *args, shape_options **out, shape_err *err);

#endif

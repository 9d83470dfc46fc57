/* shape/decode.h — message bodies to Arrow record batches.
 *
 * Why: every stream source (files, kafka://, ...) hands the same kind of
 * message — partition, offset, body, broker time, key, headers — and every
 * consumer wants the same columns out. The rules (reference spec-kafka.md
 * §2.5–2.7) live here once:
 *   - each body must be a JSON object, else the message is undecodable;
 *   - top-level fields become columns, in order of first appearance in the
 *     first batch, which also fixes their types (int64; float64 when ints and
 *     reals mix; bool; utf8; utf8 holding JSON text when kinds disagree or an
 *     integer is beyond int64; all-null columns become utf8) — the schema is
 *     then frozen, later batches conform to it and drop new fields (each
 *     dropped member is counted: stats.dropped_fields) — unless grow is set
 *     (below), when later batches add their new fields as columns;
 *   - at most max_columns payload columns (default 4096): a column costs
 *     ~45 KB of sketches in a profile, so a body with 30,000 keys would take
 *     over a gigabyte; the fields of the first batch past the limit are
 *     dropped like new fields (counted: stats.columns_over_limit distinct
 *     names, stats.dropped_fields members), or, with on_error = raise, the
 *     first batch fails naming the limit;
 *   - nested objects and arrays become compact JSON text with sorted keys;
 *   - a later value that cannot take its column's type without change (a
 *     bool never fits a number; 2.0 fits int64, 2.5 does not; an integer not
 *     exactly representable as a double does not fit float64) rejects its row;
 *   - a number beyond the double range (1e400) in a float64 column is kept as
 *     ±infinity, as Python reads it, and counted (stats.values_overflowed):
 *     JSON outputs cannot hold infinity and write null;
 *   - the event-time field (default `_shape_event_time`) is taken out of the
 *     body and parsed (ISO-8601 text, or a number in s/ms/us), else the
 *     message's broker time is used, else null;
 *   - optional metadata columns follow the payload, in this order:
 *     _shape_key (binary), _shape_timestamp (timestamp[us, UTC]),
 *     _shape_headers (map<utf8, binary>, or JSON text with hex values when
 *     nested = 0), then always _shape_event_time (timestamp[us, UTC]), then
 *     _shape_partition (utf8) and _shape_offset (int64) with with_offsets.
 *
 * How: the first call scans its messages once to learn field names and value
 * kinds, builds the columns, and then decodes like every later call: one pass
 * of the allocation-free JSON scanner (shape/json.h) per body, values
 * appended straight into the Arrow builders (shape/arrow.h), a row rolled
 * back when it turns out undecodable or rejected.
 *
 * Ownership: a decoder owns its builders and scanner; each decoded batch is
 * handed over as an ArrowSchema/ArrowArray pair the caller releases. Message
 * bytes are only read during the call.
 */
#ifndef SHAPE_DECODE_H
#define SHAPE_DECODE_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/arrow.h"
#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_header {
    const char *name; /* UTF-8, not NUL-terminated */
    size_t name_len;
    const void *value; /* NULL: a header without a value */
    size_t value_len;
} shape_header;

typedef struct shape_message {
    int32_t partition; /* partition id (the file source uses 0) */
    int64_t offset;    /* the message's offset in its partition */
    const void *value; /* body; NULL = a message without a body (undecodable) */
    size_t value_len;
    int has_timestamp;    /* 1 when timestamp_us holds the broker time */
    int64_t timestamp_us; /* broker (or log-append) time, µs since the epoch */
    const void *key;      /* NULL = no key */
    size_t key_len;
    const shape_header *headers;
    size_t n_headers;
} shape_message;

enum shape_time_unit { SHAPE_TIME_S = 0, SHAPE_TIME_MS = 1, SHAPE_TIME_US = 2 };
enum shape_on_error { SHAPE_ON_ERROR_SKIP = 0, SHAPE_ON_ERROR_RAISE = 1 };

typedef struct shape_decode_options {
    const char *event_time_field; /* NULL or "" = "_shape_event_time"; copied by the decoder */
    int event_time_unit;          /* enum shape_time_unit, for numeric event times; default ms */
    int on_error;                 /* enum shape_on_error; default skip */
    int with_key, with_timestamp, with_headers, with_offsets; /* default 0 */
    int nested;                   /* headers as a map (1, default) or JSON text (0) */
    int64_t max_columns;          /* most payload columns inferred; default 4096; 0 = no limit */
    /* (source option grow_schema) 1: a later batch that would drop fields
     * with values adds them as columns instead, typed by that batch as a
     * first batch is (its mixed-kind fields stringified in it alone), after
     * the payload columns and before the metadata ones, and is decoded
     * again; a null of a field that is no column yet is not counted as
     * dropped (the column, once made, is null there). A field never given
     * a value gets no column. Default 0: the schema stays frozen. Used by
     * stream-profile --split-by, whose tables start at any batch. */
    int grow;
} shape_decode_options;

#define SHAPE_DECODE_MAX_COLUMNS_DEFAULT 4096

/* The defaults above. */
void shape_decode_options_init(shape_decode_options *o);

/* Parse "s" / "ms" / "us" and "skip" / "raise"; errors name the accepted values. */
int shape_time_unit_parse(const char *text, int *unit, shape_err *err);
int shape_on_error_parse(const char *text, int *on_error, shape_err *err);

typedef struct shape_decode_stats {
    int64_t messages;    /* every message handed to the decoder */
    int64_t rows;        /* rows in the batches returned */
    int64_t undecodable; /* no body, invalid JSON or UTF-8, too deep, not an object */
    int64_t rejected;    /* rows dropped because a value did not fit its column */
    /* (ABI 5) set by a source, not the decoder: offsets the read had not
     * reached yet that the broker removed (retention, deleted records), so
     * the read went on at the first one left (kafka://: see
     * docs/plugins/streaming.md, "Records removed under a read") */
    int64_t offsets_lost;
    int64_t dropped_fields;     /* members whose field is no column (new since the first batch,
                                   or past max_columns): their values are lost */
    int64_t values_overflowed;  /* numbers of kept rows beyond the double range, kept as ±infinity
                                   (counted by a pass over a batch's float64 columns, made only
                                   when the scanner saw such a number: shape_json_overflows) */
    int64_t columns_over_limit; /* distinct fields of the first batch past max_columns */
} shape_decode_stats;

typedef struct shape_decoder shape_decoder;

/* A decoder with the given options. schema (optional, borrowed for the call)
 * fixes the columns up front instead of the first batch: a "+s" struct whose
 * children use our formats (shape_type_format); metadata columns in it keep
 * their canonical types. */
int shape_decoder_new(const shape_decode_options *opts, const struct ArrowSchema *schema,
                      shape_decoder **out, shape_err *err);
void shape_decoder_free(shape_decoder *dec);

/* Decode n messages into one batch. On success *array (and *schema when not
 * NULL) are the caller's to release — or array->release == NULL when no row
 * survived (then schema is not written). The batch carries schema metadata
 * shape.partition=<id> when all its rows come from one partition. With
 * on_error = raise, the first undecodable or rejected message fails the call
 * ("partition P offset O: ...") and nothing is returned. */
int shape_decoder_decode(shape_decoder *dec, const shape_message *msgs, size_t n,
                         struct ArrowSchema *schema, struct ArrowArray *array, shape_err *err);

/* The frozen schema (after the first batch, or the one given), or SHAPE_EINVAL
 * when not known yet. *out is the caller's to release. */
int shape_decoder_schema(const shape_decoder *dec, struct ArrowSchema *out, shape_err *err);

/* Counters accumulated over every call. */
const shape_decode_stats *shape_decoder_stats(const shape_decoder *dec);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

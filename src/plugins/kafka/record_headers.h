/* record_headers.h — the headers of a Kafka record, read from its bytes.
 *
 * Why: librdkafka 2.0.2 (Debian 12) reads a fetched message's headers only
 * by parsing all of them into a new list (rd_kafka_message_headers: a shadow
 * buffer, a list and one allocation per header, ~3,000 instructions for
 * retail's two headers and ~500 more to free them), which made
 * `stream-profile --split-by header:NAME` 0.73x an unsplit profile. The
 * record keeps its headers as bytes; views into them cost far less.
 * How: a record's headers are (Kafka's v2 record format) a zigzag varint
 * count, then per header a zigzag varint key length, the key, a zigzag
 * varint value length (-1: no value) and the value. The views point into
 * the bytes (names are not NUL-terminated: shape_header's contract), so
 * they live as long as the message. They are appended to a growing array
 * the caller keeps (the client collects one fetch's views in it, then
 * hands them out in one block), so reading them allocates nothing once the
 * array has grown. consumer_client_rdkafka.c decides when librdkafka's
 * record bytes can be read this way.
 */
#ifndef SHAPE_KAFKA_RECORD_HEADERS_H
#define SHAPE_KAFKA_RECORD_HEADERS_H

#include <stddef.h>
#include <stdint.h>

#include "shape/decode.h"

/* Header views v[0..n), room for cap; the caller frees v. With v NULL, cap
 * is only the size the first reserve allocates (a hint from the last
 * array, handed away with its views). */
typedef struct shape_kafka_header_views {
    shape_header *v;
    size_t n, cap;
} shape_kafka_header_views;

/* Make room for `more` views past n: SHAPE_OK or SHAPE_ENOMEM (unchanged). */
int shape_kafka_header_views_reserve(shape_kafka_header_views *views, size_t more);

/* Append the headers in bytes[0..len) to *views as views into the bytes, in
 * record order: all of them, or, when only is not NULL, just the first one
 * named only[0..only_len) (none if no header has that name; every header is
 * still checked). *added is how many were appended. SHAPE_EINVAL when the
 * bytes are not headers (a length past the end, a negative count or key
 * length, bytes left over), SHAPE_ENOMEM; then *views is as before and
 * *added 0. */
int shape_kafka_record_headers(const void *bytes, size_t len, const char *only, size_t only_len,
                               shape_kafka_header_views *views, size_t *added);

/* The last record's header bytes (a copy, when short) and their views as
 * offsets into them. One producer's messages carry the same headers message
 * after message (shape emit: the table's name and shape-synthetic, a table
 * after another), so a record whose header bytes equal the last one's takes
 * its views again without a parse: the views are a function of the bytes.
 * One cache per reader, always asked with the same only. */
#define SHAPE_KAFKA_HEADER_CACHE_BYTES 256
#define SHAPE_KAFKA_HEADER_CACHE_VIEWS 4
typedef struct shape_kafka_header_cache {
    size_t len; /* of bytes; 0: nothing cached */
    size_t n;   /* views */
    struct {
        uint32_t name, name_len, value, value_len; /* offsets into bytes */
        int has_value;
    } at[SHAPE_KAFKA_HEADER_CACHE_VIEWS];
    uint8_t bytes[SHAPE_KAFKA_HEADER_CACHE_BYTES];
} shape_kafka_header_cache;

/* shape_kafka_record_headers through *cache (zeroed before the first
 * call): the same views, appended the same way, and the same refusals. */
int shape_kafka_record_headers_cached(shape_kafka_header_cache *cache, const void *bytes, size_t len, const char *only,
                                      size_t only_len, shape_kafka_header_views *views, size_t *added);

#endif

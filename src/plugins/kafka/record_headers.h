/* record_headers.h — the headers of a Kafka record, read from its bytes.
 *
 * Why: librdkafka 2.0.2 (Debian 12) reads a fetched message's headers only
 * by parsing all of them into a new list (rd_kafka_message_headers: a shadow
 * buffer, a list and one allocation per header, ~3,000 instructions for
 * retail's two headers and ~500 more to free them), which made
 * `stream-profile --split-by header:NAME` 0.73x an unsplit profile. The
 * record keeps its headers as bytes; views into them cost ~100.
 * How: a record's headers are (Kafka's v2 record format) a zigzag varint
 * count, then per header a zigzag varint key length, the key, a zigzag
 * varint value length (-1: no value) and the value. The views point into
 * the bytes (names are not NUL-terminated: shape_header's contract), so
 * they live as long as the message. consumer_client_rdkafka.c decides when
 * librdkafka's record bytes can be read this way.
 */
#ifndef SHAPE_KAFKA_RECORD_HEADERS_H
#define SHAPE_KAFKA_RECORD_HEADERS_H

#include <stddef.h>

#include "shape/decode.h"

/* The headers in bytes[0..len) as views in *out (malloc'd, NULL when there
 * are none; the caller frees it) and their count in *n. SHAPE_EINVAL when
 * the bytes are not headers (a length past the end, a negative count or
 * key length, bytes left over), SHAPE_ENOMEM; *out NULL and *n 0 then. */
int shape_kafka_record_headers(const void *bytes, size_t len, shape_header **out, size_t *n);

#endif

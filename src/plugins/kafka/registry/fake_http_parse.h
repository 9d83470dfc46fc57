/* fake_http_parse.h — the request-head parser of the fake registry's HTTP
 * server (fake_http.c). Private to fake_http.c and its fuzz target
 * (tests/fuzz/fuzz_registry_http.c); not a public interface.
 *
 * Why: the server must answer 400 and close, never crash, whatever bytes
 * arrive; exposing the parsing step as functions lets a fuzzer feed it
 * directly, without sockets or threads.
 * How: shape_kafka_fake_http_head_end finds the blank line that ends a head;
 * shape_kafka_fake_http_parse_head checks the request line and the headers
 * strictly and fills a shape_kafka_fake_http_head (method, target, Authorization,
 * Content-Length, Connection, Expect); shape_kafka_fake_http_head_reset releases it
 * (wiping the Authorization value).
 */
#ifndef SHAPE_KAFKA_REGISTRY_FAKE_HTTP_PARSE_H
#define SHAPE_KAFKA_REGISTRY_FAKE_HTTP_PARSE_H

#include <stddef.h>

typedef struct shape_kafka_fake_http_head {
    char method[16];
    char *target;
    char *authorization;
    size_t content_length;
    int close_after;
    int expect_continue;
    int too_large; /* Content-Length above the server's body limit */
} shape_kafka_fake_http_head;

/* Index just past the blank line (CRLF CRLF) ending the head in data[0, len),
 * or 0 when it is not there yet. */
size_t shape_kafka_fake_http_head_end(const char *data, size_t len);

/* Parse the head in data[0, len): it ends with CRLF CRLF and data[len] is
 * readable (the server's buffer is NUL-terminated). 0, or -1 when malformed;
 * either way release h with shape_kafka_fake_http_head_reset. h starts zeroed. */
int shape_kafka_fake_http_parse_head(const char *data, size_t len, shape_kafka_fake_http_head *h);

void shape_kafka_fake_http_head_reset(shape_kafka_fake_http_head *h);

#endif

/* fuzz_kafka_uri.c — libFuzzer target for the kafka:// URI grammar.
 *
 * Why: every command that talks to Kafka parses a user's URI first; the
 * parser percent-decodes and slices by hand, so it gets fuzzed.
 * How: the input bytes, copied and NUL-terminated, go to
 * shape_kafka_uri_parse(). Invariants that abort when broken: a success
 * yields non-empty servers and a topic Kafka accepts; a failure leaves both
 * fields NULL and a message; an authority holding '@' (credentials) is
 * always refused.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_uri.h"

/* Does the authority (after "://", up to '/', '?' or '#') hold an '@'? */
static int has_userinfo(const char *uri)
{
    const char *sep = strstr(uri, "://");
    if (!sep) return 0;
    const char *authority = sep + 3;
    return memchr(authority, '@', strcspn(authority, "/?#")) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *uri = malloc(size + 1);
    if (!uri) abort();
    memcpy(uri, data, size);
    uri[size] = '\0';

    shape_kafka_uri parsed;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_kafka_uri_parse(uri, &parsed, &err);
    if (rc == SHAPE_OK) {
        if (!parsed.servers || !parsed.topic || !*parsed.servers) abort();
        if (!shape_kafka_topic_name_ok(parsed.topic)) abort();
        if (has_userinfo(uri)) abort();
        shape_kafka_uri_free(&parsed);
    } else {
        if (parsed.servers || parsed.topic) abort();
        if (err.code != rc || err.message[0] == '\0') abort();
    }
    free(uri);
    return 0;
}

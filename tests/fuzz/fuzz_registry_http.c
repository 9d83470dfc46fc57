/* fuzz_registry_http.c — libFuzzer target for the fake schema registry's
 * HTTP side: request-head parsing (registry/fake_http_parse.h, the step
 * fake_http.c runs on every request) and the answering of the parsed
 * requests (shape_kafka_fake_registry_handle: routing, percent-decoding of
 * subjects, the JSON registration bodies, auth, the registry state).
 *
 * Why: `shape schema-registry` and the emulator tests put the fake registry
 * behind a real socket, and its promise is "no crash whatever bytes arrive".
 * How: the input is the byte stream one connection would deliver. It is
 * served the way fake_http.c's connection loop does, without sockets: find
 * the end of a head, parse it (a malformed head or a too large body ends
 * the connection, as the server's 400/413 does), take the Content-Length
 * body (a short body ends it too: the server would wait for more), answer,
 * and go on with the bytes that follow (pipelining) unless the request
 * closes the connection. Each request is answered by two registries built
 * afresh per input, so every run is reproducible: an open one and one with
 * basic auth (user:secret) that accepts evolving schemas; both start with
 * one Avro schema registered under "orders-value" (id 100), so fetches,
 * idempotent registrations and 409 refusals are one request away.
 * The body is handed over in an allocation of exactly its length, so a
 * read past body_len is reported by ASan even though the server's buffer
 * would hide it. Invariants (abort when broken): a parsed head has an
 * upper-case method and a target starting with '/' made of visible ASCII;
 * every answer is a JSON document with a status the registry uses.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "registry/fake.h"
#include "registry/fake_http_parse.h"

#define SEEDED_SCHEMA "{\"schema\":\"{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"t\\\",\\\"fields\\\":[]}\"}"

static shape_kafka_fake_registry *registry_new(int with_auth)
{
    shape_kafka_fake_registry *r = NULL;
    shape_err err;
    if (shape_kafka_fake_registry_new(&r, &err) != SHAPE_OK) abort();
    int status;
    char *resp;
    shape_kafka_fake_registry_handle(r, "POST", "/subjects/orders-value/versions", NULL, SEEDED_SCHEMA,
                               strlen(SEEDED_SCHEMA), &status, &resp);
    if (status != 200 || !resp || strcmp(resp, "{\"id\":100}") != 0) abort();
    free(resp);
    if (with_auth) {
        shape_kafka_fake_registry_set_auth(r, "user", "secret");
        shape_kafka_fake_registry_set_evolve(r, 1);
    }
    return r;
}

static void check_head(const shape_kafka_fake_http_head *h)
{
    if (!h->method[0] || !h->target || h->target[0] != '/') abort();
    for (const char *p = h->method; *p; p++)
        if (!isupper((unsigned char)*p)) abort();
    for (const unsigned char *p = (const unsigned char *)h->target; *p; p++)
        if (*p <= ' ' || *p >= 127) abort();
}

static void answer(shape_kafka_fake_registry *r, const shape_kafka_fake_http_head *h, const char *body)
{
    int status = 0;
    char *resp = NULL;
    shape_kafka_fake_registry_handle(r, h->method, h->target, h->authorization, body, h->content_length, &status, &resp);
    if (!resp) abort();
    static const int known[] = {200, 401, 404, 409, 422, 500};
    int ok = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok |= status == known[i];
    if (!ok) abort();
    json_t *doc = json_loads(resp, 0, NULL);
    if (!doc) abort();
    json_decref(doc);
    free(resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the server's buffer: the bytes received, NUL-terminated */
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    buf[size] = '\0';
    shape_kafka_fake_registry *open = registry_new(0), *guarded = registry_new(1);
    size_t at = 0;
    for (;;) {
        size_t head_len = shape_kafka_fake_http_head_end(buf + at, size - at);
        if (head_len == 0) break;
        shape_kafka_fake_http_head h;
        memset(&h, 0, sizeof h);
        int rc = shape_kafka_fake_http_parse_head(buf + at, head_len, &h);
        if (rc != 0 || h.too_large || size - at - head_len < h.content_length) {
            shape_kafka_fake_http_head_reset(&h);
            break;
        }
        check_head(&h);
        char *body = malloc(h.content_length ? h.content_length : 1);
        if (!body) abort();
        memcpy(body, buf + at + head_len, h.content_length);
        answer(open, &h, body);
        answer(guarded, &h, body);
        free(body);
        at += head_len + h.content_length;
        int close_after = h.close_after;
        shape_kafka_fake_http_head_reset(&h);
        if (close_after) break;
    }
    shape_kafka_fake_registry_free(open);
    shape_kafka_fake_registry_free(guarded);
    free(buf);
    return 0;
}

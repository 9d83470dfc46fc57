/* fuzz_registry_answer.c — libFuzzer target for the schema registry
 * client's reading of answers (registry/client.h): shape_kafka_schema_registry_register
 * and shape_kafka_schema_registry_fetch against a registry that answers anything.
 *
 * Why: the client reads bodies written by a server it does not control
 * (a real registry, a proxy's error page, a truncated answer); whatever
 * comes back it must fail cleanly, classify the failure right (retry or
 * stop) and never put the password in a message.
 * How: bytes 0-1 are the HTTP status (big-endian; 0 stands for a transport
 * that got no answer, SHAPE_ECONN), the rest is the body, returned as the
 * answer to every request through the client's transport hook. The client
 * has basic-auth credentials. Per input: register a Protobuf schema twice
 * (the second must come from the cache when the first succeeded), register
 * an Avro one, fetch id 100. Invariants (abort when broken): every request
 * has the expected method, URL and Authorization header; a result is one of
 * the documented codes, with a message on failure; 5xx and 429 are
 * SHAPE_ECONN; a fetch 404 is SHAPE_ENOTFOUND; a success gives an id or a
 * schema text and a non-empty type; no message holds the password or the
 * Authorization value unless the body itself did.
 *
 * Seeds: run with SHAPE_FUZZ_WRITE_SEEDS=DIR, the target writes a few
 * answers (registry successes, refusals, a 404, an HTML 502, an empty 204)
 * into DIR and exits; tests/fuzz/CMakeLists.txt does that after each build
 * (the status bytes hold NULs, which CMake strings cannot).
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry/client.h"

#define PASSWORD "pw-Zq8v"
#define AUTHORIZATION "Authorization: Basic dXNlcjpwdy1acTh2" /* base64("user:pw-Zq8v") */

typedef struct canned {
    long status;
    const uint8_t *body;
    size_t len;
    const char *method, *url; /* what the next request must be */
    size_t calls;
} canned;

static int transport(void *ctx, const char *method, const char *url, const char *const *headers, size_t nheaders,
                     const char *body, size_t body_len, long *status, char **resp, size_t *resp_len, shape_err *err)
{
    canned *c = ctx;
    c->calls++;
    if (strcmp(method, c->method) != 0 || strcmp(url, c->url) != 0) abort();
    if (strcmp(method, "POST") == 0 ? !body || body_len != strlen(body) : body != NULL) abort();
    int auth = 0;
    for (size_t i = 0; i < nheaders; i++) auth += strcmp(headers[i], AUTHORIZATION) == 0;
    if (auth != 1) abort();
    if (c->status == 0) return shape_err_set(err, SHAPE_ECONN, "schema registry unreachable: no answer");
    *resp = malloc(c->len + 1);
    if (!*resp) abort();
    if (c->len) memcpy(*resp, c->body, c->len);
    (*resp)[c->len] = '\0';
    *resp_len = c->len;
    *status = c->status;
    return SHAPE_OK;
}

static int body_has(const canned *c, const char *s)
{
    return c->len && memmem(c->body, c->len, s, strlen(s)) != NULL;
}

/* The common checks of a result; `not_found_ok`: ENOTFOUND is allowed (fetch). */
static void check_result(const canned *c, int rc, const shape_err *err, int not_found_ok)
{
    if (rc == SHAPE_OK) return;
    if (rc != SHAPE_EINVAL && rc != SHAPE_ECONN && rc != SHAPE_ENOMEM && !(not_found_ok && rc == SHAPE_ENOTFOUND))
        abort();
    if (err->code != rc || !err->message[0]) abort();
    if (strstr(err->message, PASSWORD) && !body_has(c, PASSWORD)) abort();
    if (strstr(err->message, "dXNlcjpwdy1acTh2") && !body_has(c, "dXNlcjpwdy1acTh2")) abort();
    if (c->status == 0 || c->status >= 500 || c->status == 429) {
        if (rc != SHAPE_ECONN) abort();
    } else if (rc == SHAPE_ECONN) {
        abort();
    }
}

static void check_register(shape_kafka_schema_registry_client *client, canned *c, const char *type)
{
    c->method = "POST";
    c->url = "http://registry.test:8081/base/subjects/orders%2Fv%C3%A9/versions";
    uint32_t id = 0xdeadbeef, again = 0;
    shape_err err;
    shape_err_clear(&err);
    size_t calls = c->calls;
    int rc = shape_kafka_schema_registry_register(client, "orders/v\xc3\xa9", type, "syntax = \"proto3\";", &id, &err);
    if (c->calls != calls + 1) abort();
    check_result(c, rc, &err, 0);
    if (rc == SHAPE_OK && (c->status < 200 || c->status >= 300)) abort();
    /* the same registration again: from the cache after a success */
    int rc2 = shape_kafka_schema_registry_register(client, "orders/v\xc3\xa9", type, "syntax = \"proto3\";", &again, &err);
    check_result(c, rc2, &err, 0);
    if (rc == SHAPE_OK && (rc2 != SHAPE_OK || again != id || c->calls != calls + 1)) abort();
    if (rc != SHAPE_OK && (rc2 != rc || c->calls != calls + 2)) abort();
}

static void check_fetch(shape_kafka_schema_registry_client *client, canned *c)
{
    c->method = "GET";
    c->url = "http://registry.test:8081/base/schemas/ids/100";
    char *schema = (char *)1, *type = (char *)1;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_kafka_schema_registry_fetch(client, 100, &schema, &type, &err);
    check_result(c, rc, &err, 1);
    if (rc == SHAPE_OK) {
        if (!schema || !type || !type[0] || c->status < 200 || c->status >= 300) abort();
    } else {
        if (schema || type) abort();
        if ((c->status == 404) != (rc == SHAPE_ENOTFOUND)) abort();
    }
    free(schema);
    free(type);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    canned c = {.status = (long)data[0] << 8 | data[1], .body = data + 2, .len = size - 2};
    shape_kafka_schema_registry_settings s;
    memset(&s, 0, sizeof s);
    s.url = "http://registry.test:8081/base/";
    s.username = "user";
    s.password = PASSWORD;
    s.ssl_verify = 1;
    s.transport = transport;
    s.transport_ctx = &c;
    shape_kafka_schema_registry_client *client = NULL;
    shape_err err;
    if (shape_kafka_schema_registry_client_new(&s, &client, &err) != SHAPE_OK) abort();
    check_register(client, &c, "PROTOBUF");
    check_register(client, &c, "AVRO");
    check_fetch(client, &c);
    if (shape_kafka_schema_registry_requests(client) != c.calls) abort();
    shape_kafka_schema_registry_client_free(client);
    return 0;
}

/* ---- seeds ------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("SHAPE_FUZZ_WRITE_SEEDS");
    if (!dir || !dir[0]) return 0;
    static const struct {
        const char *name;
        int status;
        const char *body;
    } seeds[] = {
        {"id", 200, "{\"id\":101}"},
        {"schema", 200, "{\"schema\":\"{\\\"type\\\":\\\"string\\\"}\",\"schemaType\":\"PROTOBUF\",\"id\":100}"},
        {"conflict", 409, "{\"error_code\":409,\"message\":\"Schema being registered is incompatible\"}"},
        {"unauthorized", 401, "{\"error_code\":40101,\"message\":\"Unauthorized\"}"},
        {"not_found", 404, "{\"error_code\":40403,\"message\":\"Schema not found\"}"},
        {"outage", 502, "<html><body>\t502 Bad Gateway\r\n</body></html>\n"},
        {"empty", 204, ""},
        {"no_answer", 0, ""},
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, seeds[i].name);
        FILE *fp = fopen(path, "wb");
        size_t len = strlen(seeds[i].body);
        unsigned char status[2] = {(unsigned char)(seeds[i].status >> 8), (unsigned char)seeds[i].status};
        if (!fp || fwrite(status, 1, 2, fp) != 2 || fwrite(seeds[i].body, 1, len, fp) != len || fclose(fp) != 0) {
            fprintf(stderr, "fuzz_registry_answer: cannot write %s\n", path);
            exit(1);
        }
    }
    exit(0);
}

/* test_schema_registry_client.c — the registry client (spec-kafka.md §4.7,
 * §6.8): settings checks, the requests it sends (path, body, headers), its
 * id cache, and every error text — through the fake registry's transport
 * hook, through canned answers, and over real HTTP against the fake's
 * server (libcurl), including an unreachable port and a silent server. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "registry/client.h"
#include "registry/fake.h"

#define REFUSED_PREFIX "schema registry refused the schema for subject "

/* ---- helpers ------------------------------------------------------------------ */

static shape_kafka_schema_registry_settings over_fake(shape_kafka_fake_registry *r, const char *url)
{
    return (shape_kafka_schema_registry_settings){.url = url, .ssl_verify = 1, .transport = shape_kafka_fake_registry_transport,
                                     .transport_ctx = r};
}

static shape_kafka_schema_registry_client *client_of(const shape_kafka_schema_registry_settings *s)
{
    shape_kafka_schema_registry_client *c = NULL;
    shape_err err;
    shape_err_clear(&err);
    if (shape_kafka_schema_registry_client_new(s, &c, &err) != SHAPE_OK) fail_msg("client refused: %s", err.message);
    return c;
}

static void settings_refused(const shape_kafka_schema_registry_settings *s, const char *needle, const char *secret)
{
    shape_kafka_schema_registry_client *c = NULL;
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_kafka_schema_registry_client_new(s, &c, &err), SHAPE_EINVAL);
    assert_null(c);
    if (!strstr(err.message, needle)) fail_msg("'%s' not in '%s'", needle, err.message);
    if (secret && strstr(err.message, secret)) fail_msg("the secret '%s' leaked: %s", secret, err.message);
}

static void url_refused(const char *url, const char *needle, const char *secret)
{
    shape_kafka_schema_registry_settings s = {.url = url, .ssl_verify = 1};
    settings_refused(&s, needle, secret);
}

static void url_kept_as(const char *url, const char *kept)
{
    shape_kafka_schema_registry_settings s = {.url = url, .ssl_verify = 1};
    shape_kafka_schema_registry_client *c = client_of(&s);
    assert_string_equal(shape_kafka_schema_registry_client_url(c), kept);
    shape_kafka_schema_registry_client_free(c);
}

static uint32_t registered(shape_kafka_schema_registry_client *c, const char *subject, const char *type, const char *schema)
{
    uint32_t id = 0;
    shape_err err;
    shape_err_clear(&err);
    if (shape_kafka_schema_registry_register(c, subject, type, schema, &id, &err) != SHAPE_OK)
        fail_msg("register %s refused: %s", subject, err.message);
    return id;
}

/* Register and expect the error code and the exact message. */
static void register_fails(shape_kafka_schema_registry_client *c, const char *subject, const char *schema, int code,
                           const char *message)
{
    uint32_t id = 7;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_kafka_schema_registry_register(c, subject, "AVRO", schema, &id, &err);
    if (rc != code || strcmp(err.message, message) != 0)
        fail_msg("expected %d '%s', got %d '%s'", code, message, rc, err.message);
    assert_int_equal(err.code, code);
}

/* ---- settings ------------------------------------------------------------------ */

static void test_url_checks(void **state)
{
    (void)state;
    const char *credentials = "kafka.schema_registry_url must not carry credentials: give "
                              "kafka.schema_registry_username and kafka.schema_registry_password=env://NAME";
    url_refused("http://svc:credential-sentinel@registry.test:8081", credentials, "credential-sentinel");
    url_refused("https://svc@registry.test", credentials, "svc");
    url_refused("ftp://u:credential-sentinel@h/", credentials, "credential-sentinel");
    url_refused("registry.test:8081", "kafka.schema_registry_url 'registry.test:8081' is not an http(s) URL", NULL);
    url_refused("ftp://registry.test", "kafka.schema_registry_url 'ftp://registry.test' is not an http(s) URL", NULL);
    url_refused("http://", "is not an http(s) URL", NULL);
    url_refused("http://:8081/x", "is not an http(s) URL", NULL);
    url_refused("http:///path", "is not an http(s) URL", NULL);
    url_refused("https://[]:1", "is not an http(s) URL", NULL);
    url_refused("", "kafka.schema_registry_url '' is not an http(s) URL", NULL);
    url_refused(NULL, "is not an http(s) URL", NULL);
    url_kept_as("http://r:8081/", "http://r:8081");
    url_kept_as("http://r:8081", "http://r:8081");
    url_kept_as("HTTPS://r:8081//", "HTTPS://r:8081");
    url_kept_as("https://r.example/registry/", "https://r.example/registry");
    url_kept_as("http://[::1]:8081/", "http://[::1]:8081");
}

static void test_credentials_come_in_pairs(void **state)
{
    (void)state;
    const char *both = "the schema registry needs both kafka.schema_registry_username and "
                       "kafka.schema_registry_password";
    shape_kafka_schema_registry_settings s = {.url = "http://r:8081", .username = "svc", .ssl_verify = 1};
    settings_refused(&s, both, NULL);
    s.password = "";
    settings_refused(&s, both, NULL);
    s = (shape_kafka_schema_registry_settings){.url = "http://r:8081", .password = "s3cret", .ssl_verify = 1};
    settings_refused(&s, both, "s3cret");
    s.username = "";
    settings_refused(&s, both, "s3cret");
    s.password = "";
    shape_kafka_schema_registry_client *c = client_of(&s); /* both empty = none */
    shape_kafka_schema_registry_client_free(c);
}

static void test_basic_authorization_value(void **state)
{
    (void)state;
    char *value = shape_kafka_schema_registry_basic_authorization("svc", "s3cret");
    assert_string_equal(value, "Basic c3ZjOnMzY3JldA==");
    free(value);
    value = shape_kafka_schema_registry_basic_authorization("a", "");
    assert_string_equal(value, "Basic YTo=");
    free(value);
    value = shape_kafka_schema_registry_basic_authorization("ab", "c");
    assert_string_equal(value, "Basic YWI6Yw==");
    free(value);
    value = shape_kafka_schema_registry_basic_authorization("user", "pässwörd");
    assert_string_equal(value, "Basic dXNlcjpww6Rzc3fDtnJk");
    free(value);
}

/* ---- requests ------------------------------------------------------------------- */

/* A transport that keeps the header lines of the last request, then asks the fake. */
typedef struct capture {
    shape_kafka_fake_registry *registry;
    char headers[8][256];
    size_t nheaders;
    char url[512];
} capture;

static int capturing_transport(void *ctx, const char *method, const char *url, const char *const *headers,
                               size_t nheaders, const char *body, size_t body_len, long *status, char **resp,
                               size_t *resp_len, shape_err *err)
{
    capture *cap = ctx;
    assert_true(nheaders <= 8);
    cap->nheaders = nheaders;
    for (size_t i = 0; i < nheaders; i++) snprintf(cap->headers[i], sizeof cap->headers[i], "%s", headers[i]);
    snprintf(cap->url, sizeof cap->url, "%s", url);
    return shape_kafka_fake_registry_transport(cap->registry, method, url, headers, nheaders, body, body_len, status, resp,
                                         resp_len, err);
}

static int has_header(const capture *cap, const char *line)
{
    for (size_t i = 0; i < cap->nheaders; i++)
        if (strcmp(cap->headers[i], line) == 0) return 1;
    return 0;
}

static void test_headers_media_type_and_basic_auth(void **state)
{
    (void)state;
    capture cap = {.registry = NULL};
    assert_int_equal(shape_kafka_fake_registry_new(&cap.registry, NULL), SHAPE_OK);
    shape_kafka_fake_registry_set_auth(cap.registry, "svc", "s3cret");
    shape_kafka_schema_registry_settings s = {.url = "http://registry.test:8081/", .username = "svc", .password = "s3cret",
                                 .ssl_verify = 1, .transport = capturing_transport, .transport_ctx = &cap};
    shape_kafka_schema_registry_client *c = client_of(&s);
    assert_int_equal(registered(c, "events-value", "AVRO", "{\"type\":\"string\"}"), 100);
    assert_string_equal(cap.url, "http://registry.test:8081/subjects/events-value/versions");
    assert_int_equal(cap.nheaders, 3);
    assert_true(has_header(&cap, "Content-Type: application/vnd.schemaregistry.v1+json"));
    assert_true(has_header(&cap, "Accept: application/vnd.schemaregistry.v1+json"));
    assert_true(has_header(&cap, "Authorization: Basic c3ZjOnMzY3JldA=="));
    shape_kafka_schema_registry_client_free(c);

    /* without credentials: no Authorization line, and the fake refuses */
    s.username = s.password = NULL;
    c = client_of(&s);
    register_fails(c, "events-value", "{\"type\":\"string\"}", SHAPE_EINVAL,
                   REFUSED_PREFIX "events-value: Unauthorized");
    assert_int_equal(cap.nheaders, 2);
    shape_kafka_schema_registry_client_free(c);
    /* a wrong password: the same refusal, and the password is not in it */
    s.username = "svc";
    s.password = "wrong-sentinel";
    c = client_of(&s);
    register_fails(c, "events-value", "{\"type\":\"string\"}", SHAPE_EINVAL,
                   REFUSED_PREFIX "events-value: Unauthorized");
    shape_kafka_schema_registry_client_free(c);
    shape_kafka_fake_registry_free(cap.registry);
}

static void test_bodies_by_schema_type_and_encoded_subjects(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    shape_kafka_schema_registry_settings s = over_fake(r, "http://registry.test:8081");
    shape_kafka_schema_registry_client *c = client_of(&s);
    assert_int_equal(registered(c, "orders-value", "AVRO", "{\"type\":\"string\"}"), 100);
    assert_int_equal(registered(c, "a/b c", "PROTOBUF", "syntax = \"proto3\";\n"), 101);
    assert_int_equal(registered(c, "shape.events.t_1~-x", "JSON", "{\"title\":\"t\"}"), 102);
    assert_int_equal(registered(c, "é:?#%", NULL, "{\"type\":\"long\"}"), 103);
    const char *method, *path, *body;
    shape_kafka_fake_registry_request(r, 0, &method, &path, &body);
    assert_string_equal(method, "POST");
    assert_string_equal(path, "/subjects/orders-value/versions");
    assert_string_equal(body, "{\"schema\":\"{\\\"type\\\":\\\"string\\\"}\"}");
    shape_kafka_fake_registry_request(r, 1, &method, &path, &body);
    assert_string_equal(path, "/subjects/a%2Fb%20c/versions");
    assert_string_equal(body, "{\"schema\":\"syntax = \\\"proto3\\\";\\n\",\"schemaType\":\"PROTOBUF\"}");
    shape_kafka_fake_registry_request(r, 2, &method, &path, &body);
    assert_string_equal(path, "/subjects/shape.events.t_1~-x/versions");
    assert_string_equal(body, "{\"schema\":\"{\\\"title\\\":\\\"t\\\"}\",\"schemaType\":\"JSON\"}");
    shape_kafka_fake_registry_request(r, 3, &method, &path, &body);
    assert_string_equal(path, "/subjects/%C3%A9%3A%3F%23%25/versions");
    assert_string_equal(shape_kafka_fake_registry_subject(r, 1), "a/b c");
    assert_string_equal(shape_kafka_fake_registry_subject(r, 3), "é:?#%");
    /* an unknown schema type is refused before anything is sent */
    uint32_t id;
    shape_err err;
    assert_int_equal(shape_kafka_schema_registry_register(c, "x", "XML", "<a/>", &id, &err), SHAPE_EINVAL);
    assert_int_equal(shape_kafka_schema_registry_requests(c), 4);
    shape_kafka_schema_registry_client_free(c);
    shape_kafka_fake_registry_free(r);
}

static void test_ids_are_cached_per_subject_type_and_text(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    shape_kafka_schema_registry_settings s = over_fake(r, "http://registry.test:8081");
    shape_kafka_schema_registry_client *c = client_of(&s);
    assert_int_equal(registered(c, "orders-value", "AVRO", "A"), 100);
    assert_int_equal(registered(c, "orders-value", "AVRO", "A"), 100);
    assert_int_equal(registered(c, "orders-value", NULL, "A"), 100); /* NULL type = AVRO */
    assert_int_equal(shape_kafka_schema_registry_requests(c), 1);
    assert_int_equal(shape_kafka_fake_registry_request_count(r), 1);
    assert_int_equal(registered(c, "other-value", "AVRO", "A"), 100);
    assert_int_equal(registered(c, "json-value", "JSON", "A"), 101);
    assert_int_equal(registered(c, "json-value", "JSON", "A"), 101);
    assert_int_equal(shape_kafka_schema_registry_requests(c), 3);
    /* a second client (another process) asks again and gets the same id */
    shape_kafka_schema_registry_client *again = client_of(&s);
    assert_int_equal(registered(again, "orders-value", "AVRO", "A"), 100);
    assert_int_equal(shape_kafka_schema_registry_requests(again), 1);
    assert_int_equal(shape_kafka_fake_registry_request_count(r), 4);
    shape_kafka_schema_registry_client_free(again);
    shape_kafka_schema_registry_client_free(c);
    shape_kafka_fake_registry_free(r);
}

/* ---- error texts through the fake ------------------------------------------------ */

static void test_refusals_and_outages_through_the_fake(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    shape_kafka_fake_registry_refuse(r, "events-value", "Invalid schema: bad field");
    shape_kafka_schema_registry_settings s = over_fake(r, "http://registry.test:8081");
    shape_kafka_schema_registry_client *c = client_of(&s);
    register_fails(c, "events-value", "A", SHAPE_EINVAL,
                   REFUSED_PREFIX "events-value: Invalid schema: bad field");
    /* text that is not UTF-8 (a column name from a foreign batch) is refused before any request */
    size_t sent = shape_kafka_fake_registry_request_count(r);
    register_fails(c, "t-value", "{\"title\":\"caf\xe9\"}", SHAPE_EINVAL,
                   "the schema for subject t-value is not valid UTF-8 (a table or column name?)");
    assert_int_equal(shape_kafka_fake_registry_request_count(r), sent);
    assert_int_equal(registered(c, "orders-value", "AVRO", "A"), 100);
    register_fails(c, "orders-value", "B", SHAPE_EINVAL,
                   REFUSED_PREFIX "orders-value: Schema being registered is incompatible with an earlier schema "
                                  "for subject \"orders-value\"");
    shape_kafka_fake_registry_set_down(r, 1);
    register_fails(c, "orders-value", "C", SHAPE_ECONN, "schema registry error 503 for subject orders-value");
    shape_kafka_fake_registry_set_down(r, 0);
    shape_kafka_fake_registry_fail_next(r, 1, 429);
    register_fails(c, "x-value", "A", SHAPE_ECONN, "schema registry error 429 for subject x-value");
    shape_kafka_fake_registry_fail_next(r, 1, 500);
    register_fails(c, "x-value", "A", SHAPE_ECONN, "schema registry error 500 for subject x-value");
    shape_kafka_fake_registry_fail_next(r, 1, 403);
    register_fails(c, "x-value", "A", SHAPE_EINVAL, REFUSED_PREFIX "x-value: injected failure");
    /* failures are not cached: the retry is sent and succeeds */
    uint64_t before = shape_kafka_schema_registry_requests(c);
    assert_int_equal(registered(c, "x-value", "AVRO", "A"), 100);
    assert_int_equal(shape_kafka_schema_registry_requests(c), before + 1);
    shape_kafka_schema_registry_client_free(c);
    shape_kafka_fake_registry_free(r);
}

/* ---- error texts from canned answers -------------------------------------------- */

typedef struct canned {
    long status;
    const char *body;
    int fail; /* answer SHAPE_ECONN as a transport failure */
    int calls;
} canned;

static int canned_transport(void *ctx, const char *method, const char *url, const char *const *headers,
                            size_t nheaders, const char *body, size_t body_len, long *status, char **resp,
                            size_t *resp_len, shape_err *err)
{
    (void)method, (void)url, (void)headers, (void)nheaders, (void)body, (void)body_len;
    canned *k = ctx;
    k->calls++;
    if (k->fail) return shape_err_set(err, SHAPE_ECONN, "schema registry unreachable: connection refused");
    *status = k->status;
    *resp = strdup(k->body);
    *resp_len = strlen(k->body);
    return SHAPE_OK;
}

static void canned_register_fails(long status, const char *body, int code, const char *message)
{
    canned k = {.status = status, .body = body};
    shape_kafka_schema_registry_settings s = {.url = "http://r:8081", .ssl_verify = 1, .transport = canned_transport,
                                 .transport_ctx = &k};
    shape_kafka_schema_registry_client *c = client_of(&s);
    register_fails(c, "s-value", "A", code, message);
    shape_kafka_schema_registry_client_free(c);
}

static void test_answer_texts(void **state)
{
    (void)state;
    const char *no_id = REFUSED_PREFIX "s-value: the registry's answer has no schema id";
    canned_register_fails(200, "{}", SHAPE_EINVAL, no_id);
    canned_register_fails(200, "{\"id\":\"100\"}", SHAPE_EINVAL, no_id);
    canned_register_fails(200, "{\"id\":1.5}", SHAPE_EINVAL, no_id);
    canned_register_fails(200, "{\"id\":-1}", SHAPE_EINVAL, no_id);
    canned_register_fails(200, "{\"id\":4294967296}", SHAPE_EINVAL, no_id);
    canned_register_fails(201, "not json", SHAPE_EINVAL, no_id);
    canned_register_fails(200, "[100]", SHAPE_EINVAL, no_id);
    canned_register_fails(400, "  bad things\n", SHAPE_EINVAL, REFUSED_PREFIX "s-value: bad things");
    canned_register_fails(400, "{\"error_code\":1}", SHAPE_EINVAL, REFUSED_PREFIX "s-value: {\"error_code\":1}");
    canned_register_fails(400, "{\"message\":\"\"}", SHAPE_EINVAL, REFUSED_PREFIX "s-value: {\"message\":\"\"}");
    canned_register_fails(403, "", SHAPE_EINVAL, REFUSED_PREFIX "s-value: HTTP 403");
    canned_register_fails(404, " \r\n", SHAPE_EINVAL, REFUSED_PREFIX "s-value: HTTP 404");
    canned_register_fails(302, "line one\nline two", SHAPE_EINVAL, REFUSED_PREFIX "s-value: line one line two");
    canned_register_fails(502, "<html>bad gateway</html>", SHAPE_ECONN, "schema registry error 502 for subject s-value");
    canned_register_fails(599, "", SHAPE_ECONN, "schema registry error 599 for subject s-value");
    /* a long answer is cut to 200 characters */
    char long_body[600], expected[300];
    memset(long_body, 'x', sizeof long_body - 1);
    long_body[sizeof long_body - 1] = '\0';
    snprintf(expected, sizeof expected, REFUSED_PREFIX "s-value: %.200s", long_body);
    canned_register_fails(400, long_body, SHAPE_EINVAL, expected);

    canned k = {.status = 200, .body = "{\"id\":4294967295}"};
    shape_kafka_schema_registry_settings s = {.url = "http://r:8081", .ssl_verify = 1, .transport = canned_transport,
                                 .transport_ctx = &k};
    shape_kafka_schema_registry_client *c = client_of(&s);
    assert_int_equal(registered(c, "s-value", "AVRO", "A"), UINT32_MAX);
    shape_kafka_schema_registry_client_free(c);
}

static void test_transport_failures_propagate_and_are_not_cached(void **state)
{
    (void)state;
    canned k = {.fail = 1};
    shape_kafka_schema_registry_settings s = {.url = "http://r:8081", .ssl_verify = 1, .transport = canned_transport,
                                 .transport_ctx = &k};
    shape_kafka_schema_registry_client *c = client_of(&s);
    register_fails(c, "s-value", "A", SHAPE_ECONN, "schema registry unreachable: connection refused");
    register_fails(c, "s-value", "A", SHAPE_ECONN, "schema registry unreachable: connection refused");
    assert_int_equal(k.calls, 2);
    assert_int_equal(shape_kafka_schema_registry_requests(c), 2);
    k.fail = 0;
    k.status = 200;
    k.body = "{\"id\":7}";
    assert_int_equal(registered(c, "s-value", "AVRO", "A"), 7);
    assert_int_equal(registered(c, "s-value", "AVRO", "A"), 7);
    assert_int_equal(k.calls, 3);
    shape_kafka_schema_registry_client_free(c);
}

/* ---- fetch ---------------------------------------------------------------------- */

static void fetch_fails(shape_kafka_schema_registry_client *c, uint32_t id, int code, const char *message)
{
    char *schema = (char *)"untouched", *type = (char *)"untouched";
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_kafka_schema_registry_fetch(c, id, &schema, &type, &err);
    if (rc != code || strcmp(err.message, message) != 0)
        fail_msg("expected %d '%s', got %d '%s'", code, message, rc, err.message);
    assert_null(schema);
    assert_null(type);
}

static void test_fetch(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    shape_kafka_schema_registry_settings s = over_fake(r, "http://registry.test:8081/");
    shape_kafka_schema_registry_client *c = client_of(&s);
    assert_int_equal(registered(c, "p-value", "PROTOBUF", "syntax = \"proto3\";\n"), 100);
    char *schema, *type;
    shape_err err;
    assert_int_equal(shape_kafka_schema_registry_fetch(c, 100, &schema, &type, &err), SHAPE_OK);
    assert_string_equal(schema, "syntax = \"proto3\";\n");
    assert_string_equal(type, "PROTOBUF");
    free(schema);
    free(type);
    const char *method, *path, *body;
    shape_kafka_fake_registry_request(r, 1, &method, &path, &body);
    assert_string_equal(method, "GET");
    assert_string_equal(path, "/schemas/ids/100");
    fetch_fails(c, 101, SHAPE_ENOTFOUND, "schema registry has no schema with id 101");
    shape_kafka_fake_registry_set_down(r, 1);
    fetch_fails(c, 100, SHAPE_ECONN, "schema registry error 503 for schema id 100");
    shape_kafka_schema_registry_client_free(c);
    shape_kafka_fake_registry_free(r);

    /* an answer without a type is Avro; odd answers are refusals */
    canned k = {.status = 200, .body = "{\"schema\":\"{\\\"type\\\":\\\"long\\\"}\"}"};
    s = (shape_kafka_schema_registry_settings){.url = "http://r:8081", .ssl_verify = 1, .transport = canned_transport,
                                  .transport_ctx = &k};
    c = client_of(&s);
    assert_int_equal(shape_kafka_schema_registry_fetch(c, 5, &schema, &type, &err), SHAPE_OK);
    assert_string_equal(schema, "{\"type\":\"long\"}");
    assert_string_equal(type, "AVRO");
    free(schema);
    free(type);
    k.body = "{\"schemaType\":\"JSON\"}";
    fetch_fails(c, 5, SHAPE_EINVAL, "schema registry answer for schema id 5 has no schema");
    k.status = 400;
    k.body = "{\"message\":\"no\"}";
    fetch_fails(c, 5, SHAPE_EINVAL, "schema registry refused to give schema id 5: no");
    k.fail = 1;
    fetch_fails(c, 5, SHAPE_ECONN, "schema registry unreachable: connection refused");
    shape_kafka_schema_registry_client_free(c);
}

/* ---- over real HTTP (libcurl) -------------------------------------------------- */

typedef struct served {
    shape_kafka_fake_registry *registry;
    shape_kafka_fake_registry_server *server;
    char url[64];
} served;

static int serve(void **state)
{
    served *s = calloc(1, sizeof *s);
    assert_int_equal(shape_kafka_fake_registry_new(&s->registry, NULL), SHAPE_OK);
    shape_err err;
    int port;
    if (shape_kafka_fake_registry_server_new(s->registry, "127.0.0.1", 0, &s->server, &port, &err) != SHAPE_OK) {
        fprintf(stderr, "serve: %s\n", err.message);
        return -1;
    }
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/", port);
    *state = s;
    return 0;
}

static int unserve(void **state)
{
    served *s = *state;
    shape_kafka_fake_registry_server_free(s->server);
    shape_kafka_fake_registry_free(s->registry);
    free(s);
    return 0;
}

static void test_http_register_cache_and_fetch(void **state)
{
    served *srv = *state;
    shape_kafka_schema_registry_settings s = {.url = srv->url, .ssl_verify = 1};
    shape_kafka_schema_registry_client *c = client_of(&s);
    assert_int_equal(registered(c, "orders-value", "AVRO", "{\"type\":\"string\"}"), 100);
    assert_int_equal(registered(c, "orders-value", "AVRO", "{\"type\":\"string\"}"), 100);
    assert_int_equal(shape_kafka_schema_registry_requests(c), 1);
    assert_int_equal(registered(c, "a/b c", "PROTOBUF", "syntax = \"proto3\";\n"), 101);
    assert_int_equal(shape_kafka_fake_registry_request_count(srv->registry), 2);
    const char *method, *path, *body;
    shape_kafka_fake_registry_request(srv->registry, 1, &method, &path, &body);
    assert_string_equal(path, "/subjects/a%2Fb%20c/versions");
    assert_string_equal(body, "{\"schema\":\"syntax = \\\"proto3\\\";\\n\",\"schemaType\":\"PROTOBUF\"}");
    assert_string_equal(shape_kafka_fake_registry_subject(srv->registry, 1), "a/b c");
    char *schema, *type;
    shape_err err;
    assert_int_equal(shape_kafka_schema_registry_fetch(c, 101, &schema, &type, &err), SHAPE_OK);
    assert_string_equal(schema, "syntax = \"proto3\";\n");
    assert_string_equal(type, "PROTOBUF");
    free(schema);
    free(type);
    fetch_fails(c, 102, SHAPE_ENOTFOUND, "schema registry has no schema with id 102");
    /* a large schema (past libcurl's 100-continue threshold) goes through */
    size_t big_len = 3 * 1024 * 1024;
    char *big = malloc(big_len + 1);
    memset(big, 'y', big_len);
    big[big_len] = '\0';
    assert_int_equal(registered(c, "big-value", "JSON", big), 102);
    free(big);
    shape_kafka_schema_registry_client_free(c);
}

static void test_http_refusals_auth_and_outage(void **state)
{
    served *srv = *state;
    shape_kafka_fake_registry_set_auth(srv->registry, "svc", "s3cret");
    shape_kafka_schema_registry_settings s = {.url = srv->url, .ssl_verify = 1};
    shape_kafka_schema_registry_client *c = client_of(&s);
    register_fails(c, "orders-value", "A", SHAPE_EINVAL, REFUSED_PREFIX "orders-value: Unauthorized");
    shape_kafka_schema_registry_client_free(c);
    s.username = "svc";
    s.password = "s3cret";
    c = client_of(&s);
    assert_int_equal(registered(c, "orders-value", "AVRO", "A"), 100);
    register_fails(c, "orders-value", "B", SHAPE_EINVAL,
                   REFUSED_PREFIX "orders-value: Schema being registered is incompatible with an earlier schema "
                                  "for subject \"orders-value\"");
    shape_kafka_fake_registry_set_down(srv->registry, 1);
    register_fails(c, "orders-value", "C", SHAPE_ECONN, "schema registry error 503 for subject orders-value");
    shape_kafka_fake_registry_set_down(srv->registry, 0);
    shape_kafka_fake_registry_fail_next(srv->registry, 1, 429);
    register_fails(c, "x-value", "A", SHAPE_ECONN, "schema registry error 429 for subject x-value");
    assert_int_equal(registered(c, "x-value", "AVRO", "A"), 100);
    shape_kafka_schema_registry_client_free(c);
}

/* A port nobody listens on: bind one, note it, close it. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    socklen_t len = sizeof addr;
    getsockname(fd, (struct sockaddr *)&addr, &len);
    close(fd);
    return ntohs(addr.sin_port);
}

static void test_http_unreachable_and_silent_registries(void **state)
{
    (void)state;
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
    shape_kafka_schema_registry_settings s = {.url = url, .username = "svc", .password = "pw-sentinel", .ssl_verify = 1};
    shape_kafka_schema_registry_client *c = client_of(&s);
    uint32_t id;
    shape_err err;
    assert_int_equal(shape_kafka_schema_registry_register(c, "s-value", "AVRO", "A", &id, &err), SHAPE_ECONN);
    assert_true(strncmp(err.message, "schema registry unreachable: ", 29) == 0);
    assert_true(strlen(err.message) > 29);
    assert_null(strstr(err.message, "pw-sentinel"));
    assert_int_equal(shape_kafka_schema_registry_fetch(c, 1, &(char *){NULL}, &(char *){NULL}, &err), SHAPE_ECONN);
    assert_true(strncmp(err.message, "schema registry unreachable: ", 29) == 0);
    shape_kafka_schema_registry_client_free(c);

    /* a server that accepts connections but never answers: the timeout */
    int silent = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(silent, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(listen(silent, 4), 0);
    socklen_t len = sizeof addr;
    getsockname(silent, (struct sockaddr *)&addr, &len);
    snprintf(url, sizeof url, "http://127.0.0.1:%d", ntohs(addr.sin_port));
    s = (shape_kafka_schema_registry_settings){.url = url, .ssl_verify = 1, .timeout = 0.3};
    c = client_of(&s);
    assert_int_equal(shape_kafka_schema_registry_register(c, "s-value", "AVRO", "A", &id, &err), SHAPE_ECONN);
    assert_true(strncmp(err.message, "schema registry unreachable: ", 29) == 0);
    assert_non_null(strcasestr(err.message, "time"));
    shape_kafka_schema_registry_client_free(c);
    close(silent);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_checks),
        cmocka_unit_test(test_credentials_come_in_pairs),
        cmocka_unit_test(test_basic_authorization_value),
        cmocka_unit_test(test_headers_media_type_and_basic_auth),
        cmocka_unit_test(test_bodies_by_schema_type_and_encoded_subjects),
        cmocka_unit_test(test_ids_are_cached_per_subject_type_and_text),
        cmocka_unit_test(test_refusals_and_outages_through_the_fake),
        cmocka_unit_test(test_answer_texts),
        cmocka_unit_test(test_transport_failures_propagate_and_are_not_cached),
        cmocka_unit_test(test_fetch),
        cmocka_unit_test_setup_teardown(test_http_register_cache_and_fetch, serve, unserve),
        cmocka_unit_test_setup_teardown(test_http_refusals_auth_and_outage, serve, unserve),
        cmocka_unit_test(test_http_unreachable_and_silent_registries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

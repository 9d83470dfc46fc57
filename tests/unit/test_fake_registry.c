/* test_fake_registry.c — the fake schema registry (spec-kafka.md §5): its
 * registration rules and fault knobs through shape_kafka_fake_registry_handle,
 * and its HTTP/1.1 server over raw sockets — keep-alive, pipelining,
 * Connection: close, 100-continue, and malformed or random bytes, after
 * which it must still answer; and its head parser on its own. */
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
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "registry/fake.h"
#include "registry/fake_http_parse.h"

/* ---- in-process helpers ---------------------------------------------------- */

typedef struct answer {
    int status;
    char *body;
} answer;

static answer call(shape_kafka_fake_registry *r, const char *method, const char *path, const char *auth,
                   const char *body)
{
    answer a = {0, NULL};
    shape_kafka_fake_registry_handle(r, method, path, auth, body, body ? strlen(body) : 0, &a.status, &a.body);
    assert_non_null(a.body);
    return a;
}

static void expect(answer a, int status, const char *body)
{
    if (a.status != status || strcmp(a.body, body) != 0)
        fail_msg("expected %d %s, got %d %s", status, body, a.status, a.body);
    free(a.body);
}

/* POST /subjects/{encoded}/versions with {"schema":text[,"schemaType":type]}. */
static answer post_schema(shape_kafka_fake_registry *r, const char *encoded_subject, const char *text, const char *type,
                          const char *auth)
{
    json_t *doc = json_pack("{s:s}", "schema", text);
    if (type) json_object_set_new(doc, "schemaType", json_string(type));
    char *body = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    char path[256];
    snprintf(path, sizeof path, "/subjects/%s/versions", encoded_subject);
    answer a = call(r, "POST", path, auth, body);
    free(body);
    return a;
}

static void registers(shape_kafka_fake_registry *r, const char *subject, const char *text, const char *type, int id)
{
    char expected[32];
    snprintf(expected, sizeof expected, "{\"id\":%d}", id);
    expect(post_schema(r, subject, text, type, NULL), 200, expected);
}

/* ---- registration rules ------------------------------------------------------ */

static void test_ids_count_from_100_and_a_text_keeps_its_id(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    registers(r, "orders-value", "{\"type\":\"string\"}", NULL, 100);
    registers(r, "orders-value", "{\"type\":\"string\"}", NULL, 100);
    registers(r, "other-value", "{\"type\":\"string\"}", NULL, 100); /* known under another subject */
    registers(r, "third-value", "{\"type\":\"long\"}", NULL, 101);
    /* the same text with another type is another schema */
    registers(r, "json-value", "{\"type\":\"string\"}", "JSON", 102);
    registers(r, "avro-named", "{\"type\":\"string\"}", "AVRO", 100);
    assert_int_equal(shape_kafka_fake_registry_subject_count(r), 5);
    assert_string_equal(shape_kafka_fake_registry_subject(r, 0), "orders-value");
    assert_string_equal(shape_kafka_fake_registry_subject(r, 1), "other-value");
    assert_string_equal(shape_kafka_fake_registry_subject(r, 4), "avro-named");
    assert_null(shape_kafka_fake_registry_subject(r, 5));
    expect(call(r, "GET", "/subjects", NULL, NULL), 200,
           "[\"orders-value\",\"other-value\",\"third-value\",\"json-value\",\"avro-named\"]");
    shape_kafka_fake_registry_free(r);
}

static void test_a_changed_schema_conflicts_unless_the_registry_evolves(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    registers(r, "orders-value", "A", NULL, 100);
    expect(post_schema(r, "orders-value", "B", NULL, NULL), 409,
           "{\"error_code\":409,\"message\":\"Schema being registered is incompatible with an earlier schema for "
           "subject \\\"orders-value\\\"\"}");
    expect(call(r, "GET", "/subjects/orders-value/versions", NULL, NULL), 200, "[1]");
    shape_kafka_fake_registry_set_evolve(r, 1);
    registers(r, "orders-value", "B", NULL, 101);
    registers(r, "orders-value", "A", NULL, 100); /* an earlier version keeps its id */
    registers(r, "orders-value", "C", NULL, 102);
    expect(call(r, "GET", "/subjects/orders-value/versions", NULL, NULL), 200, "[1,2,3]");
    shape_kafka_fake_registry_set_evolve(r, 0);
    expect(post_schema(r, "orders-value", "D", NULL, NULL), 409,
           "{\"error_code\":409,\"message\":\"Schema being registered is incompatible with an earlier schema for "
           "subject \\\"orders-value\\\"\"}");
    expect(call(r, "GET", "/subjects/unknown/versions", NULL, NULL), 404,
           "{\"error_code\":40401,\"message\":\"Subject not found\"}");
    shape_kafka_fake_registry_free(r);
}

static void test_refused_subject_answers_422_with_its_message(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    assert_int_equal(shape_kafka_fake_registry_refuse(r, "events-value", "Invalid schema: bad field"), SHAPE_OK);
    expect(post_schema(r, "events-value", "A", NULL, NULL), 422,
           "{\"error_code\":42201,\"message\":\"Invalid schema: bad field\"}");
    registers(r, "orders-value", "A", NULL, 100);
    assert_int_equal(shape_kafka_fake_registry_subject_count(r), 1);
    /* a body without a schema is refused too */
    expect(call(r, "POST", "/subjects/x/versions", NULL, "{\"schemaType\":\"JSON\"}"), 422,
           "{\"error_code\":42201,\"message\":\"Invalid schema: the request has no \\\"schema\\\" text\"}");
    expect(call(r, "POST", "/subjects/x/versions", NULL, "not json"), 422,
           "{\"error_code\":42201,\"message\":\"Invalid schema: the request has no \\\"schema\\\" text\"}");
    shape_kafka_fake_registry_free(r);
}

static void test_auth_wants_the_exact_basic_header(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    shape_kafka_fake_registry_set_auth(r, "svc", "s3cret");
    const char *unauthorized = "{\"error_code\":40101,\"message\":\"Unauthorized\"}";
    expect(post_schema(r, "s", "A", NULL, NULL), 401, unauthorized);
    expect(post_schema(r, "s", "A", NULL, "Basic c3ZjOndyb25n"), 401, unauthorized); /* svc:wrong */
    expect(call(r, "GET", "/subjects", "Basic c3ZjOnMzY3JldA== ", NULL), 401, unauthorized);
    expect(post_schema(r, "s", "A", NULL, "Basic c3ZjOnMzY3JldA=="), 200, "{\"id\":100}");
    shape_kafka_fake_registry_set_auth(r, NULL, NULL);
    expect(call(r, "GET", "/subjects", NULL, NULL), 200, "[\"s\"]");
    shape_kafka_fake_registry_free(r);
}

static void test_down_and_injected_failures(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    const char *unavailable = "{\"error_code\":50301,\"message\":\"Service unavailable\"}";
    shape_kafka_fake_registry_set_down(r, 1);
    expect(post_schema(r, "s", "A", NULL, NULL), 503, unavailable);
    expect(call(r, "GET", "/subjects", NULL, NULL), 503, unavailable);
    expect(call(r, "GET", "/nowhere", NULL, NULL), 503, unavailable);
    shape_kafka_fake_registry_set_down(r, 0);
    shape_kafka_fake_registry_fail_next(r, 2, 429);
    expect(post_schema(r, "s", "A", NULL, NULL), 429, "{\"error_code\":429,\"message\":\"injected failure\"}");
    expect(call(r, "GET", "/subjects", NULL, NULL), 429, "{\"error_code\":429,\"message\":\"injected failure\"}");
    registers(r, "s", "A", NULL, 100);
    shape_kafka_fake_registry_fail_next(r, 1, 500);
    expect(post_schema(r, "s", "A", NULL, NULL), 500, "{\"error_code\":500,\"message\":\"injected failure\"}");
    registers(r, "s", "A", NULL, 100);
    assert_int_equal(shape_kafka_fake_registry_subject_count(r), 1);
    shape_kafka_fake_registry_free(r);
}

static void test_schemas_by_id_and_other_paths(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    registers(r, "a", "syntax = \"proto3\";\n", "PROTOBUF", 100);
    registers(r, "b", "{\"type\":\"long\"}", NULL, 101);
    expect(call(r, "GET", "/schemas/ids/100", NULL, NULL), 200,
           "{\"schema\":\"syntax = \\\"proto3\\\";\\n\",\"schemaType\":\"PROTOBUF\"}");
    expect(call(r, "GET", "/schemas/ids/101?fetchMaxId=false", NULL, NULL), 200,
           "{\"schema\":\"{\\\"type\\\":\\\"long\\\"}\",\"schemaType\":\"AVRO\"}");
    const char *no_schema = "{\"error_code\":40403,\"message\":\"Schema not found\"}";
    expect(call(r, "GET", "/schemas/ids/102", NULL, NULL), 404, no_schema);
    expect(call(r, "GET", "/schemas/ids/", NULL, NULL), 404, no_schema);
    expect(call(r, "GET", "/schemas/ids/1x", NULL, NULL), 404, no_schema);
    expect(call(r, "GET", "/schemas/ids/-1", NULL, NULL), 404, no_schema);
    expect(call(r, "GET", "/schemas/ids/99999999999999999999", NULL, NULL), 404, no_schema);
    const char *not_found = "{\"error_code\":404,\"message\":\"HTTP 404 Not Found\"}";
    expect(call(r, "GET", "/", NULL, NULL), 404, not_found);
    expect(call(r, "DELETE", "/subjects/a/versions", NULL, NULL), 404, not_found);
    expect(call(r, "POST", "/subjects/a/versions/1", NULL, "{\"schema\":\"x\"}"), 404, not_found);
    expect(call(r, "POST", "/subjects//versions", NULL, "{\"schema\":\"x\"}"), 404, not_found);
    expect(call(r, "POST", "/subjects/a%zz/versions", NULL, "{\"schema\":\"x\"}"), 404, not_found);
    expect(call(r, "POST", "/subjects/a%00/versions", NULL, "{\"schema\":\"x\"}"), 404, not_found);
    expect(call(r, "POST", "/subjects/a%2/versions", NULL, "{\"schema\":\"x\"}"), 404, not_found);
    shape_kafka_fake_registry_free(r);
}

static void test_subjects_are_percent_decoded(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    registers(r, "a%2Fb%20c", "A", NULL, 100);
    registers(r, "a%2fb%20c", "A", NULL, 100);
    assert_int_equal(shape_kafka_fake_registry_subject_count(r), 1);
    assert_string_equal(shape_kafka_fake_registry_subject(r, 0), "a/b c");
    expect(call(r, "GET", "/subjects/a%2Fb%20c/versions", NULL, NULL), 200, "[1]");
    shape_kafka_fake_registry_free(r);
}

static void test_every_request_is_recorded(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    shape_kafka_fake_registry_set_down(r, 1);
    expect(post_schema(r, "s", "A", NULL, NULL), 503, "{\"error_code\":50301,\"message\":\"Service unavailable\"}");
    shape_kafka_fake_registry_set_down(r, 0);
    registers(r, "s", "A", "JSON", 100);
    expect(call(r, "GET", "/nowhere", NULL, NULL), 404, "{\"error_code\":404,\"message\":\"HTTP 404 Not Found\"}");
    assert_int_equal(shape_kafka_fake_registry_request_count(r), 3);
    const char *method, *path, *body;
    shape_kafka_fake_registry_request(r, 0, &method, &path, &body);
    assert_string_equal(method, "POST");
    assert_string_equal(path, "/subjects/s/versions");
    assert_string_equal(body, "{\"schema\":\"A\"}");
    shape_kafka_fake_registry_request(r, 1, &method, &path, &body);
    assert_string_equal(body, "{\"schema\":\"A\",\"schemaType\":\"JSON\"}");
    shape_kafka_fake_registry_request(r, 2, &method, &path, &body);
    assert_string_equal(method, "GET");
    assert_string_equal(path, "/nowhere");
    assert_string_equal(body, "");
    shape_kafka_fake_registry_request(r, 3, &method, &path, &body);
    assert_null(method);
    shape_kafka_fake_registry_free(r);
}

static void test_transport_hook_uses_the_url_path_and_authorization(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    shape_kafka_fake_registry_set_auth(r, "svc", "s3cret");
    const char *headers[] = {"Content-Type: application/vnd.schemaregistry.v1+json",
                             "authorization:   Basic c3ZjOnMzY3JldA=="};
    const char *body = "{\"schema\":\"A\"}";
    long status = 0;
    char *resp = NULL;
    size_t resp_len = 0;
    shape_err err;
    assert_int_equal(shape_kafka_fake_registry_transport(r, "POST", "http://registry.test:8081/subjects/s/versions",
                                                   headers, 2, body, strlen(body), &status, &resp, &resp_len,
                                                   &err),
                     SHAPE_OK);
    assert_int_equal(status, 200);
    assert_string_equal(resp, "{\"id\":100}");
    assert_int_equal(resp_len, strlen(resp));
    free(resp);
    assert_int_equal(shape_kafka_fake_registry_transport(r, "GET", "https://h/schemas/ids/100", headers, 1, NULL, 0,
                                                   &status, &resp, &resp_len, &err),
                     SHAPE_OK);
    assert_int_equal(status, 401);
    free(resp);
    assert_int_equal(shape_kafka_fake_registry_transport(r, "GET", "http://h", headers, 2, NULL, 0, &status, &resp,
                                                   &resp_len, &err),
                     SHAPE_OK);
    assert_int_equal(status, 404);
    free(resp);
    const char *method, *path, *recorded;
    shape_kafka_fake_registry_request(r, 2, &method, &path, &recorded);
    assert_string_equal(path, "/");
    shape_kafka_fake_registry_free(r);
}

/* ---- over HTTP --------------------------------------------------------------- */

typedef struct served {
    shape_kafka_fake_registry *registry;
    shape_kafka_fake_registry_server *server;
    int port;
} served;

static int serve(void **state)
{
    served *s = calloc(1, sizeof *s);
    assert_int_equal(shape_kafka_fake_registry_new(&s->registry, NULL), SHAPE_OK);
    shape_err err;
    if (shape_kafka_fake_registry_server_new(s->registry, "127.0.0.1", 0, &s->server, &s->port, &err) != SHAPE_OK) {
        fprintf(stderr, "serve: %s\n", err.message);
        return -1;
    }
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

typedef struct peer {
    int fd;
    char buf[1 << 17];
    size_t len;
} peer;

static peer *dial(int port)
{
    peer *p = calloc(1, sizeof *p);
    p->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(p->fd, (struct sockaddr *)&addr, sizeof addr), 0);
    return p;
}

static void hang_up(peer *p)
{
    close(p->fd);
    free(p);
}

static void say(peer *p, const char *bytes, size_t len)
{
    assert_int_equal(send(p->fd, bytes, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Read more bytes (5 s at most); 0 at EOF. */
static size_t hear_more(peer *p)
{
    struct pollfd pfd = {p->fd, POLLIN, 0};
    if (poll(&pfd, 1, 5000) != 1) fail_msg("the server did not answer within 5 s");
    ssize_t n = recv(p->fd, p->buf + p->len, sizeof p->buf - p->len - 1, 0);
    if (n < 0) return 0;
    p->len += (size_t)n;
    p->buf[p->len] = '\0';
    return (size_t)n;
}

/* One response: its status, the head (for header checks) and the body. */
typedef struct response {
    int status;
    char head[1024];
    char body[4096];
} response;

static int hear(peer *p, response *out)
{
    char *end;
    while (!(end = strstr(p->buf, "\r\n\r\n")))
        if (hear_more(p) == 0) return -1;
    size_t head_len = (size_t)(end - p->buf) + 4;
    assert_true(head_len < sizeof out->head);
    memcpy(out->head, p->buf, head_len);
    out->head[head_len] = '\0';
    assert_int_equal(sscanf(out->head, "HTTP/1.1 %d ", &out->status), 1);
    const char *cl = strcasestr(out->head, "\r\nContent-Length: ");
    size_t body_len = cl ? strtoul(cl + 18, NULL, 10) : 0;
    assert_true(body_len < sizeof out->body);
    while (p->len < head_len + body_len)
        if (hear_more(p) == 0) return -1;
    memcpy(out->body, p->buf + head_len, body_len);
    out->body[body_len] = '\0';
    memmove(p->buf, p->buf + head_len + body_len, p->len - head_len - body_len + 1);
    p->len -= head_len + body_len;
    return 0;
}

static void hears(peer *p, int status, const char *body)
{
    response r;
    if (hear(p, &r) != 0) fail_msg("connection closed before the response");
    if (r.status != status || (body && strcmp(r.body, body) != 0))
        fail_msg("expected %d %s, got %d %s", status, body ? body : "", r.status, r.body);
    if (status != 100)
        assert_non_null(strstr(r.head, "\r\nContent-Type: application/vnd.schemaregistry.v1+json\r\n"));
}

static void hears_close(peer *p)
{
    while (hear_more(p) > 0) {
    }
    assert_int_equal(p->len, 0);
}

static void say_text(peer *p, const char *text) { say(p, text, strlen(text)); }

static const char post_a[] = "POST /subjects/orders-value/versions HTTP/1.1\r\nHost: x\r\n"
                             "Content-Type: application/vnd.schemaregistry.v1+json\r\nContent-Length: 14\r\n\r\n"
                             "{\"schema\":\"A\"}";

static void test_http_keep_alive_and_pipelining(void **state)
{
    served *s = *state;
    peer *p = dial(s->port);
    say_text(p, post_a);
    hears(p, 200, "{\"id\":100}");
    say_text(p, "GET /schemas/ids/100 HTTP/1.1\r\nHost: x\r\n\r\n");
    hears(p, 200, "{\"schema\":\"A\",\"schemaType\":\"AVRO\"}");
    /* two requests in one write, the body split from its head */
    say_text(p, "GET /subjects HTTP/1.1\r\n\r\nGET /subjects/orders-value/versions HTTP/1.1\r\n\r\n"
                "POST /subjects/b/versions HTTP/1.1\r\nContent-Length: 14\r\n\r\n");
    hears(p, 200, "[\"orders-value\"]");
    hears(p, 200, "[1]");
    usleep(20000);
    say_text(p, "{\"schema\":\"B\"}");
    hears(p, 200, "{\"id\":101}");
    /* Connection: close is honoured */
    say_text(p, "GET /subjects HTTP/1.1\r\nConnection: close\r\n\r\n");
    response r;
    assert_int_equal(hear(p, &r), 0);
    assert_non_null(strstr(r.head, "\r\nConnection: close\r\n"));
    hears_close(p);
    hang_up(p);
    assert_int_equal(shape_kafka_fake_registry_request_count(s->registry), 6);
}

static void test_http_1_0_closes_and_100_continue_is_answered(void **state)
{
    served *s = *state;
    peer *p = dial(s->port);
    say_text(p, "GET /subjects HTTP/1.0\r\n\r\n");
    hears(p, 200, "[]");
    hears_close(p);
    hang_up(p);
    p = dial(s->port);
    say_text(p, "POST /subjects/c/versions HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 14\r\n"
                "Authorization: Basic Zm9vOmJhcg==\r\n\r\n");
    hears(p, 100, NULL);
    say_text(p, "{\"schema\":\"C\"}");
    hears(p, 200, "{\"id\":100}");
    hang_up(p);
}

static void test_http_auth_reaches_the_registry(void **state)
{
    served *s = *state;
    shape_kafka_fake_registry_set_auth(s->registry, "svc", "s3cret");
    peer *p = dial(s->port);
    say_text(p, post_a);
    hears(p, 401, "{\"error_code\":40101,\"message\":\"Unauthorized\"}");
    say_text(p, "GET /subjects HTTP/1.1\r\nauthorization: Basic c3ZjOnMzY3JldA==\r\n\r\n");
    hears(p, 200, "[]");
    hang_up(p);
}

/* Malformed requests get 400 and a closed connection. */
static void refused(served *s, const char *bytes, size_t len, int status)
{
    peer *p = dial(s->port);
    say(p, bytes, len);
    response r;
    if (hear(p, &r) != 0) fail_msg("no answer to %.40s", bytes);
    if (r.status != status) fail_msg("%.60s: expected %d, got %d", bytes, status, r.status);
    hears_close(p);
    hang_up(p);
}

#define REFUSED(s, text) refused(s, text, sizeof text - 1, 400)

static void test_http_malformed_requests_get_400(void **state)
{
    served *s = *state;
    REFUSED(s, "\r\n\r\n");
    REFUSED(s, "hello\r\n\r\n");
    REFUSED(s, "get /subjects HTTP/1.1\r\n\r\n");
    REFUSED(s, "GET subjects HTTP/1.1\r\n\r\n");
    REFUSED(s, "GET /subjects HTTP/2.0\r\n\r\n");
    REFUSED(s, "GET /subjects HTTP/1.1 extra\r\n\r\n");
    REFUSED(s, "GET  /subjects HTTP/1.1\r\n\r\n");
    REFUSED(s, "GET /sub jects HTTP/1.1\r\n\r\n");
    REFUSED(s, "GET /subjects HTTP/1.1\r\nNoColon\r\n\r\n");
    REFUSED(s, "GET /subjects HTTP/1.1\r\n: empty name\r\n\r\n");
    REFUSED(s, "GET /subjects HTTP/1.1\r\nBad Name: x\r\n\r\n");
    REFUSED(s, "GET /subjects HTTP/1.1\r\nA: b\r\n folded\r\n\r\n");
    REFUSED(s, "GET /subjects HTTP/1.1\r\nA: b\x01\r\n\r\n");
    REFUSED(s, "GET /subj\0ects HTTP/1.1\r\n\r\n");
    REFUSED(s, "POST /subjects/a/versions HTTP/1.1\r\nContent-Length: -1\r\n\r\n");
    REFUSED(s, "POST /subjects/a/versions HTTP/1.1\r\nContent-Length: 1x\r\n\r\n");
    REFUSED(s, "POST /subjects/a/versions HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n");
    REFUSED(s, "POST /subjects/a/versions HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n");
    REFUSED(s, "POST /subjects/a/versions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    REFUSED(s, "POST /subjects/a/versions HTTP/1.1\r\nExpect: something\r\n\r\n");
    const char *too_large = "POST /subjects/a/versions HTTP/1.1\r\nContent-Length: 16777217\r\n\r\n";
    refused(s, too_large, strlen(too_large), 413);
    /* a head that never ends */
    char *endless = malloc(70000);
    memset(endless, 'a', 70000);
    memcpy(endless, "GET /", 5);
    refused(s, endless, 70000, 400);
    free(endless);
    /* the server still works */
    peer *p = dial(s->port);
    say_text(p, post_a);
    hears(p, 200, "{\"id\":100}");
    hang_up(p);
}

static void test_http_survives_random_bytes_and_hang_ups(void **state)
{
    served *s = *state;
    unsigned seed = 12345;
    for (int round = 0; round < 300; round++) {
        peer *p = dial(s->port);
        char junk[600];
        size_t len = 1 + (size_t)(rand_r(&seed) % (sizeof junk - 1));
        for (size_t i = 0; i < len; i++) junk[i] = (char)rand_r(&seed);
        /* half the rounds look like HTTP up to a point */
        if (round % 2 == 0 && len > 40) memcpy(junk, "POST /subjects/x/versions HTTP/1.1\r\n", 36);
        if (round % 3 == 0 && len > 4) memcpy(junk + len - 4, "\r\n\r\n", 4);
        say(p, junk, len);
        if (round % 5 == 0) {
            hang_up(p); /* gone without waiting */
            continue;
        }
        shutdown(p->fd, SHUT_WR);
        while (hear_more(p) > 0) {
        }
        if (p->len > 0) assert_true(strncmp(p->buf, "HTTP/1.1 ", 9) == 0);
        hang_up(p);
    }
    peer *p = dial(s->port);
    say_text(p, post_a);
    hears(p, 200, "{\"id\":100}");
    hang_up(p);
}

/* The head parser on its own (fake_http_parse.h, what the server and
 * tests/fuzz/fuzz_registry_http.c run): 0 and the fields, or -1. */
static int parse(const char *text, shape_kafka_fake_http_head *h)
{
    size_t len = strlen(text);
    assert_int_equal(shape_kafka_fake_http_head_end(text, len), len);
    memset(h, 0, sizeof *h);
    return shape_kafka_fake_http_parse_head(text, len, h);
}

static void test_http_head_parser(void **state)
{
    (void)state;
    shape_kafka_fake_http_head h;
    assert_int_equal(shape_kafka_fake_http_head_end("GET / HTTP/1.1\r\n", 16), 0);
    assert_int_equal(shape_kafka_fake_http_head_end("GET / HTTP/1.1\r\n\r\n{}", 20), 18);
    assert_int_equal(parse("POST /subjects/a/versions HTTP/1.1\r\nContent-Length: 12\r\n"
                           "authorization:  Basic eA== \r\nConnection: x, Close\r\nExpect: 100-continue\r\n\r\n",
                           &h),
                     0);
    assert_string_equal(h.method, "POST");
    assert_string_equal(h.target, "/subjects/a/versions");
    assert_string_equal(h.authorization, "Basic eA==");
    assert_int_equal(h.content_length, 12);
    assert_true(h.close_after && h.expect_continue && !h.too_large);
    shape_kafka_fake_http_head_reset(&h);
    assert_int_equal(parse("GET /x HTTP/1.0\r\nContent-Length: 99999999\r\n\r\n", &h), 0);
    assert_true(h.close_after && h.too_large);
    shape_kafka_fake_http_head_reset(&h);
    static const char *const bad[] = {
        "get / HTTP/1.1\r\n\r\n", "GET x HTTP/1.1\r\n\r\n", "GET / HTTP/2\r\n\r\n",
        "GET / HTTP/1.1\r\nA: 1\r\n b\r\n\r\n", "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "GET / HTTP/1.1\r\nNo colon\r\n\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse(bad[i], &h), -1);
        shape_kafka_fake_http_head_reset(&h);
    }
}

static void test_serve_refuses_bad_addresses_and_stops_with_open_connections(void **state)
{
    (void)state;
    shape_kafka_fake_registry *r = NULL;
    assert_int_equal(shape_kafka_fake_registry_new(&r, NULL), SHAPE_OK);
    shape_kafka_fake_registry_server *server = NULL;
    int port = -1;
    shape_err err;
    assert_int_equal(shape_kafka_fake_registry_server_new(r, "127.0.0.1", 70000, &server, &port, &err), SHAPE_EINVAL);
    assert_null(server);
    /* a documentation address (TEST-NET-1) is not ours to bind */
    assert_int_equal(shape_kafka_fake_registry_server_new(r, "192.0.2.1", 0, &server, &port, &err), SHAPE_EIO);
    assert_non_null(strstr(err.message, "cannot listen on 192.0.2.1:0: "));
    assert_null(server);
    assert_int_equal(shape_kafka_fake_registry_server_new(r, "127.0.0.1", 0, &server, &port, &err), SHAPE_OK);
    assert_true(port > 0);
    shape_kafka_fake_registry_server *second = NULL;
    assert_int_equal(shape_kafka_fake_registry_server_new(r, "127.0.0.1", port, &second, NULL, &err), SHAPE_EIO);
    assert_non_null(strstr(err.message, "cannot listen on 127.0.0.1:"));
    /* an idle kept-alive connection and a half-sent request do not hold stop() */
    peer *idle = dial(port);
    say_text(idle, "GET /subjects HTTP/1.1\r\n\r\n");
    hears(idle, 200, "[]");
    peer *half = dial(port);
    say_text(half, "POST /subjects/a/versions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{");
    usleep(50000);
    shape_kafka_fake_registry_server_free(server);
    hears_close(idle);
    hears_close(half);
    hang_up(idle);
    hang_up(half);
    shape_kafka_fake_registry_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids_count_from_100_and_a_text_keeps_its_id),
        cmocka_unit_test(test_a_changed_schema_conflicts_unless_the_registry_evolves),
        cmocka_unit_test(test_refused_subject_answers_422_with_its_message),
        cmocka_unit_test(test_auth_wants_the_exact_basic_header),
        cmocka_unit_test(test_down_and_injected_failures),
        cmocka_unit_test(test_schemas_by_id_and_other_paths),
        cmocka_unit_test(test_subjects_are_percent_decoded),
        cmocka_unit_test(test_every_request_is_recorded),
        cmocka_unit_test(test_transport_hook_uses_the_url_path_and_authorization),
        cmocka_unit_test_setup_teardown(test_http_keep_alive_and_pipelining, serve, unserve),
        cmocka_unit_test_setup_teardown(test_http_1_0_closes_and_100_continue_is_answered, serve, unserve),
        cmocka_unit_test_setup_teardown(test_http_auth_reaches_the_registry, serve, unserve),
        cmocka_unit_test_setup_teardown(test_http_malformed_requests_get_400, serve, unserve),
        cmocka_unit_test_setup_teardown(test_http_survives_random_bytes_and_hang_ups, serve, unserve),
        cmocka_unit_test(test_http_head_parser),
        cmocka_unit_test(test_serve_refuses_bad_addresses_and_stops_with_open_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* fake.c — the in-memory schema registry for tests (spec-kafka.md §5).
 *
 * Why: registry formats are tested against a registry with the real one's
 * rules (ids, idempotent registration, compatibility refusals, auth,
 * outages) without a JVM; the same state answers in-process calls (the
 * client's transport hook) and real HTTP (fake_http.c).
 * How: one mutex guards everything. A request is recorded, then checked in
 * order: injected failures (fail_next), down (503), auth (401), then routed
 * by method and path. The state is three small arrays: schemas (id, type,
 * text — ids count up from 100 and a text+type pair has one id across
 * subjects), subjects (the ids of their versions, in order) and refusals.
 * Answers are compact JSON built with jansson, in the registry's shapes
 * ({"id":N}, {"error_code":…,"message":…}).
 */
#define _DEFAULT_SOURCE /* explicit_bzero, strndup; asprintf comes with the build's _GNU_SOURCE */
#include "registry/fake.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "registry/client.h"

#define FIRST_ID 100

typedef struct known_schema {
    uint32_t id;
    char *schema_type;
    char *schema;
} known_schema;

typedef struct subject_versions {
    char *name;
    uint32_t *ids; /* version k+1 has schema ids[k] */
    size_t count;
} subject_versions;

typedef struct refusal {
    char *subject;
    char *message;
} refusal;

typedef struct recorded_request {
    char *method;
    char *path;
    char *body;
} recorded_request;

struct shape_kafka_fake_registry {
    pthread_mutex_t lock;
    int down;
    int evolve;
    char *expected_authorization; /* "Basic …" or NULL */
    int fail_remaining;
    int fail_status;
    uint32_t next_id;
    known_schema *schemas;
    size_t nschemas;
    subject_versions *subjects;
    size_t nsubjects;
    refusal *refusals;
    size_t nrefusals;
    recorded_request *requests;
    size_t nrequests;
};

/* Make room in *items (an array of `size`-byte elements holding `count`)
 * for one more. */
static int grow(void *items, size_t count, size_t size)
{
    void **array = items;
    /* capacities are powers of two: full exactly when count is 0 or one */
    if (count & (count - 1)) return 0;
    size_t cap = count ? 2 * count : 1;
    void *grown = realloc(*array, cap * size);
    if (!grown) return -1;
    *array = grown;
    return 0;
}

static void free_secret(char *s)
{
    if (!s) return;
    explicit_bzero(s, strlen(s));
    free(s);
}

int shape_kafka_fake_registry_new(shape_kafka_fake_registry **out, shape_err *err)
{
    shape_kafka_fake_registry *r = calloc(1, sizeof *r);
    *out = r;
    if (!r) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    pthread_mutex_init(&r->lock, NULL);
    r->next_id = FIRST_ID;
    return SHAPE_OK;
}

void shape_kafka_fake_registry_free(shape_kafka_fake_registry *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nschemas; i++) {
        free(r->schemas[i].schema_type);
        free(r->schemas[i].schema);
    }
    for (size_t i = 0; i < r->nsubjects; i++) {
        free(r->subjects[i].name);
        free(r->subjects[i].ids);
    }
    for (size_t i = 0; i < r->nrefusals; i++) {
        free(r->refusals[i].subject);
        free(r->refusals[i].message);
    }
    for (size_t i = 0; i < r->nrequests; i++) {
        free(r->requests[i].method);
        free(r->requests[i].path);
        free(r->requests[i].body);
    }
    free(r->schemas);
    free(r->subjects);
    free(r->refusals);
    free(r->requests);
    free_secret(r->expected_authorization);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* ---- knobs ------------------------------------------------------------------ */

void shape_kafka_fake_registry_set_down(shape_kafka_fake_registry *r, int down)
{
    pthread_mutex_lock(&r->lock);
    r->down = down;
    pthread_mutex_unlock(&r->lock);
}

void shape_kafka_fake_registry_set_evolve(shape_kafka_fake_registry *r, int evolve)
{
    pthread_mutex_lock(&r->lock);
    r->evolve = evolve;
    pthread_mutex_unlock(&r->lock);
}

void shape_kafka_fake_registry_set_auth(shape_kafka_fake_registry *r, const char *user, const char *password)
{
    char *expected = user && password ? shape_kafka_schema_registry_basic_authorization(user, password) : NULL;
    pthread_mutex_lock(&r->lock);
    free_secret(r->expected_authorization);
    r->expected_authorization = expected;
    pthread_mutex_unlock(&r->lock);
}

int shape_kafka_fake_registry_refuse(shape_kafka_fake_registry *r, const char *subject, const char *message)
{
    char *s = strdup(subject), *m = strdup(message);
    pthread_mutex_lock(&r->lock);
    int ok = s && m && grow(&r->refusals, r->nrefusals, sizeof *r->refusals) == 0;
    if (ok) r->refusals[r->nrefusals++] = (refusal){s, m};
    pthread_mutex_unlock(&r->lock);
    if (ok) return SHAPE_OK;
    free(s);
    free(m);
    return SHAPE_ENOMEM;
}

void shape_kafka_fake_registry_fail_next(shape_kafka_fake_registry *r, int n, int status)
{
    pthread_mutex_lock(&r->lock);
    r->fail_remaining = n > 0 ? n : 0;
    r->fail_status = status;
    pthread_mutex_unlock(&r->lock);
}

/* ---- answers ---------------------------------------------------------------- */

typedef struct reply {
    int status;
    json_t *doc; /* owned; dumped compact into the body */
} reply;

static reply error_reply(int status, int error_code, const char *message)
{
    return (reply){status, json_pack("{s:i,s:s}", "error_code", error_code, "message", message)};
}

static reply not_found(void) { return error_reply(404, 404, "HTTP 404 Not Found"); }

/* ---- state lookups (lock held) ---------------------------------------------- */

static const known_schema *schema_by_id(const shape_kafka_fake_registry *r, uint32_t id)
{
    for (size_t i = 0; i < r->nschemas; i++)
        if (r->schemas[i].id == id) return &r->schemas[i];
    return NULL;
}

static const known_schema *schema_by_text(const shape_kafka_fake_registry *r, const char *type, const char *text)
{
    for (size_t i = 0; i < r->nschemas; i++)
        if (strcmp(r->schemas[i].schema_type, type) == 0 && strcmp(r->schemas[i].schema, text) == 0)
            return &r->schemas[i];
    return NULL;
}

static subject_versions *subject_named(shape_kafka_fake_registry *r, const char *name)
{
    for (size_t i = 0; i < r->nsubjects; i++)
        if (strcmp(r->subjects[i].name, name) == 0) return &r->subjects[i];
    return NULL;
}

static const char *refusal_for(const shape_kafka_fake_registry *r, const char *subject)
{
    for (size_t i = 0; i < r->nrefusals; i++)
        if (strcmp(r->refusals[i].subject, subject) == 0) return r->refusals[i].message;
    return NULL;
}

/* The id of text+type, assigning the next one when new; 0 when out of memory. */
static uint32_t id_for(shape_kafka_fake_registry *r, const char *type, const char *text)
{
    const known_schema *known = schema_by_text(r, type, text);
    if (known) return known->id;
    char *t = strdup(type), *s = strdup(text);
    if (!t || !s || grow(&r->schemas, r->nschemas, sizeof *r->schemas) != 0) {
        free(t);
        free(s);
        return 0;
    }
    r->schemas[r->nschemas++] = (known_schema){r->next_id, t, s};
    return r->next_id++;
}

static int add_version(shape_kafka_fake_registry *r, const char *subject, uint32_t id)
{
    subject_versions *sv = subject_named(r, subject);
    if (!sv) {
        char *name = strdup(subject);
        if (!name || grow(&r->subjects, r->nsubjects, sizeof *r->subjects) != 0) {
            free(name);
            return -1;
        }
        sv = &r->subjects[r->nsubjects++];
        *sv = (subject_versions){name, NULL, 0};
    }
    if (grow(&sv->ids, sv->count, sizeof *sv->ids) != 0) return -1;
    sv->ids[sv->count++] = id;
    return 0;
}

static int subject_has(const shape_kafka_fake_registry *r, const subject_versions *sv, const char *type, const char *text)
{
    for (size_t i = 0; i < sv->count; i++) {
        const known_schema *k = schema_by_id(r, sv->ids[i]);
        if (k && strcmp(k->schema_type, type) == 0 && strcmp(k->schema, text) == 0) return 1;
    }
    return 0;
}

/* ---- routes (lock held) ------------------------------------------------------ */

static reply register_schema(shape_kafka_fake_registry *r, const char *subject, const char *body, size_t body_len)
{
    const char *refused = refusal_for(r, subject);
    if (refused) return error_reply(422, 42201, refused);
    json_t *doc = json_loadb(body ? body : "", body_len, 0, NULL);
    const char *text = json_string_value(json_object_get(doc, "schema"));
    const char *type = json_string_value(json_object_get(doc, "schemaType"));
    if (!type) type = "AVRO";
    reply out;
    subject_versions *sv = subject_named(r, subject);
    if (!text) {
        out = error_reply(422, 42201, "Invalid schema: the request has no \"schema\" text");
    } else if (sv && subject_has(r, sv, type, text)) {
        out = (reply){200, json_pack("{s:I}", "id", (json_int_t)schema_by_text(r, type, text)->id)};
    } else if (sv && !r->evolve) {
        char *message = NULL;
        if (asprintf(&message,
                     "Schema being registered is incompatible with an earlier schema for subject \"%s\"",
                     subject) < 0)
            message = NULL;
        out = message ? error_reply(409, 409, message) : error_reply(500, 50001, "out of memory");
        free(message);
    } else {
        uint32_t id = id_for(r, type, text);
        if (id == 0 || add_version(r, subject, id) != 0) out = error_reply(500, 50001, "out of memory");
        else out = (reply){200, json_pack("{s:I}", "id", (json_int_t)id)};
    }
    json_decref(doc);
    return out;
}

static reply schema_of_id(const shape_kafka_fake_registry *r, const char *digits)
{
    char *end;
    unsigned long long id = strtoull(digits, &end, 10);
    const known_schema *k = isdigit((unsigned char)digits[0]) && *end == '\0' && id <= UINT32_MAX
                                ? schema_by_id(r, (uint32_t)id)
                                : NULL;
    if (!k) return error_reply(404, 40403, "Schema not found");
    return (reply){200, json_pack("{s:s,s:s}", "schema", k->schema, "schemaType", k->schema_type)};
}

static reply list_subjects(const shape_kafka_fake_registry *r)
{
    json_t *names = json_array();
    for (size_t i = 0; i < r->nsubjects; i++) json_array_append_new(names, json_string(r->subjects[i].name));
    return (reply){200, names};
}

static reply list_versions(shape_kafka_fake_registry *r, const char *subject)
{
    const subject_versions *sv = subject_named(r, subject);
    if (!sv) return error_reply(404, 40401, "Subject not found");
    json_t *versions = json_array();
    for (size_t i = 0; i < sv->count; i++) json_array_append_new(versions, json_integer((json_int_t)(i + 1)));
    return (reply){200, versions};
}

/* %XX → byte; NULL when an escape is malformed or decodes to NUL. */
static char *percent_decode(const char *s, size_t len)
{
    char *out = malloc(len + 1), *p = out;
    if (!out) return NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') {
            *p++ = s[i];
            continue;
        }
        char hex[3] = {0};
        if (i + 2 >= len || !isxdigit((unsigned char)s[i + 1]) || !isxdigit((unsigned char)s[i + 2])) {
            free(out);
            return NULL;
        }
        hex[0] = s[i + 1];
        hex[1] = s[i + 2];
        char byte = (char)strtol(hex, NULL, 16);
        if (byte == '\0') {
            free(out);
            return NULL;
        }
        *p++ = byte;
        i += 2;
    }
    *p = '\0';
    return out;
}

/* Route "/subjects/{s}/versions" (GET or POST) and the rest. */
static reply route(shape_kafka_fake_registry *r, const char *method, const char *path, const char *body,
                   size_t body_len)
{
    size_t path_len = strcspn(path, "?#");
    int get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    static const char subjects[] = "/subjects", ids[] = "/schemas/ids/", versions[] = "/versions";
    if (get && path_len == sizeof subjects - 1 && strncmp(path, subjects, path_len) == 0) return list_subjects(r);
    if (get && strncmp(path, ids, sizeof ids - 1) == 0) {
        char *digits = strndup(path + sizeof ids - 1, path_len - (sizeof ids - 1));
        reply out = digits ? schema_of_id(r, digits) : error_reply(500, 50001, "out of memory");
        free(digits);
        return out;
    }
    if (strncmp(path, "/subjects/", 10) != 0) return not_found();
    const char *name = path + 10;
    size_t name_len = strcspn(name, "/?#");
    if (name_len == 0 || name + name_len + sizeof versions - 1 != path + path_len ||
        strncmp(name + name_len, versions, sizeof versions - 1) != 0 || !(get || post))
        return not_found();
    char *subject = percent_decode(name, name_len);
    if (!subject) return not_found();
    reply out = post ? register_schema(r, subject, body, body_len) : list_versions(r, subject);
    free(subject);
    return out;
}

static int authorized(const shape_kafka_fake_registry *r, const char *authorization)
{
    return !r->expected_authorization ||
           (authorization && strcmp(authorization, r->expected_authorization) == 0);
}

static void record(shape_kafka_fake_registry *r, const char *method, const char *path, const char *body, size_t body_len)
{
    char *m = strdup(method), *p = strdup(path), *b = strndup(body ? body : "", body ? body_len : 0);
    if (m && p && b && grow(&r->requests, r->nrequests, sizeof *r->requests) == 0) {
        r->requests[r->nrequests++] = (recorded_request){m, p, b};
        return;
    }
    free(m);
    free(p);
    free(b);
}

static reply answer(shape_kafka_fake_registry *r, const char *method, const char *path, const char *authorization,
                    const char *body, size_t body_len)
{
    if (r->fail_remaining > 0) {
        r->fail_remaining--;
        return error_reply(r->fail_status, r->fail_status, "injected failure");
    }
    if (r->down) return error_reply(503, 50301, "Service unavailable");
    if (!authorized(r, authorization)) return error_reply(401, 40101, "Unauthorized");
    return route(r, method, path, body, body_len);
}

void shape_kafka_fake_registry_handle(shape_kafka_fake_registry *r, const char *method, const char *path,
                                const char *authorization, const char *body, size_t body_len, int *status,
                                char **resp)
{
    pthread_mutex_lock(&r->lock);
    record(r, method, path, body, body_len);
    reply out = answer(r, method, path, authorization, body, body_len);
    pthread_mutex_unlock(&r->lock);
    *status = out.status;
    *resp = out.doc ? json_dumps(out.doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(out.doc);
    if (!*resp) {
        *status = 500; /* out of memory, or text that is not UTF-8 */
        *resp = strdup("{\"error_code\":50001,\"message\":\"the fake registry cannot encode its answer\"}");
    }
}

/* ---- the client's transport hook -------------------------------------------- */

/* The value of the Authorization line among "Name: value" headers, or NULL. */
static const char *authorization_of(const char *const *headers, size_t nheaders)
{
    static const char name[] = "authorization:";
    for (size_t i = 0; i < nheaders; i++)
        if (strncasecmp(headers[i], name, sizeof name - 1) == 0) {
            const char *value = headers[i] + sizeof name - 1;
            while (*value == ' ' || *value == '\t') value++;
            return value;
        }
    return NULL;
}

/* The path (with query) of an absolute URL: what follows the authority. */
static const char *path_of(const char *url)
{
    const char *sep = strstr(url, "://");
    const char *authority = sep ? sep + 3 : url;
    const char *path = authority + strcspn(authority, "/?#");
    return path;
}

int shape_kafka_fake_registry_transport(void *ctx, const char *method, const char *url, const char *const *headers,
                                  size_t nheaders, const char *body, size_t body_len, long *status, char **resp,
                                  size_t *resp_len, shape_err *err)
{
    shape_kafka_fake_registry *r = ctx;
    const char *path = path_of(url);
    int code;
    shape_kafka_fake_registry_handle(r, method, path[0] == '/' ? path : "/", authorization_of(headers, nheaders), body,
                               body_len, &code, resp);
    if (!*resp) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    *status = code;
    *resp_len = strlen(*resp);
    return SHAPE_OK;
}

/* ---- inspection ----------------------------------------------------------------- */

/* The accessors take a const registry; the lock is the one mutable part. */
static pthread_mutex_t *lock_of(const shape_kafka_fake_registry *r) { return (pthread_mutex_t *)&r->lock; }

size_t shape_kafka_fake_registry_request_count(const shape_kafka_fake_registry *r)
{
    pthread_mutex_lock(lock_of(r));
    size_t n = r->nrequests;
    pthread_mutex_unlock(lock_of(r));
    return n;
}

void shape_kafka_fake_registry_request(const shape_kafka_fake_registry *r, size_t i, const char **method, const char **path,
                                 const char **body)
{
    pthread_mutex_lock(lock_of(r));
    const recorded_request *q = i < r->nrequests ? &r->requests[i] : NULL;
    *method = q ? q->method : NULL;
    *path = q ? q->path : NULL;
    *body = q ? q->body : NULL;
    pthread_mutex_unlock(lock_of(r));
}

size_t shape_kafka_fake_registry_subject_count(const shape_kafka_fake_registry *r)
{
    pthread_mutex_lock(lock_of(r));
    size_t n = r->nsubjects;
    pthread_mutex_unlock(lock_of(r));
    return n;
}

const char *shape_kafka_fake_registry_subject(const shape_kafka_fake_registry *r, size_t i)
{
    pthread_mutex_lock(lock_of(r));
    const char *name = i < r->nsubjects ? r->subjects[i].name : NULL;
    pthread_mutex_unlock(lock_of(r));
    return name;
}

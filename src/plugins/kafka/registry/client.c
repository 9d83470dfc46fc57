/* client.c — the Confluent Schema Registry client (spec-kafka.md §4.7).
 *
 * Why: registry formats must know each table's schema id before any of its
 * events is produced, and the run must tell a registry that is away (retry
 * the batch: SHAPE_ECONN) from one that says no (stop: SHAPE_EINVAL, with
 * the registry's own words).
 * How: the settings are checked and copied once (URL without credentials,
 * user and password both or neither); a request is a method, a URL, a few
 * header lines and a body handed to the transport — libcurl by default (one
 * easy handle per client, reset and reused so connections stay alive), or a
 * test's hook. Request bodies are built and answers read with jansson. Ids
 * are cached per (subject, schema type, text) in a small array: a run
 * registers a handful of schemas, so a linear scan is the clearest choice.
 * The password lives in two places (its copy and the Basic header); both
 * are wiped before they are freed, and no message ever contains them.
 */
#define _DEFAULT_SOURCE /* explicit_bzero in glibc's <string.h> */
#include "registry/client.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <jansson.h>

#include "shape/json.h" /* shape_json_buf */
#include "shape/utf8.h"

#define MEDIA_TYPE "application/vnd.schemaregistry.v1+json"
#define DEFAULT_TIMEOUT_MS 30000L
#define CONNECT_TIMEOUT_MS 10000L
#define MESSAGE_MAX 200
#define MAX_HEADERS 4

typedef struct cached_id {
    char *subject;
    char *schema_type;
    char *schema;
    uint32_t id;
} cached_id;

struct shape_kafka_schema_registry_client {
    char *url;
    char *username;
    char *password;
    char *authorization; /* "Authorization: Basic …" or NULL */
    char *ca_location;
    char *certificate_location;
    char *key_location;
    int ssl_verify;
    long timeout_ms;
    shape_kafka_schema_registry_transport transport;
    void *transport_ctx;
    CURL *curl;
    cached_id *cache;
    size_t cache_len, cache_cap;
    uint64_t requests;
};

/* ---- small helpers ------------------------------------------------------- */

static int out_of_memory(shape_err *err) { return shape_err_set(err, SHAPE_ENOMEM, "out of memory"); }

static int is_empty(const char *s) { return s == NULL || s[0] == '\0'; }

/* strdup that keeps NULL and "" as NULL. */
static int copy_optional(const char *s, char **out, shape_err *err)
{
    *out = NULL;
    if (is_empty(s)) return SHAPE_OK;
    *out = strdup(s);
    return *out ? SHAPE_OK : out_of_memory(err);
}

static void free_secret(char *s)
{
    if (!s) return;
    explicit_bzero(s, strlen(s));
    free(s);
}

static char *base64_of(const unsigned char *data, size_t len)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(4 * ((len + 2) / 3) + 1);
    if (!out) return NULL;
    char *p = out;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t chunk = (uint32_t)data[i] << 16;
        if (i + 1 < len) chunk |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < len) chunk |= data[i + 2];
        *p++ = alphabet[(chunk >> 18) & 63];
        *p++ = alphabet[(chunk >> 12) & 63];
        *p++ = i + 1 < len ? alphabet[(chunk >> 6) & 63] : '=';
        *p++ = i + 2 < len ? alphabet[chunk & 63] : '=';
    }
    *p = '\0';
    return out;
}

/* prefix + secret in a new string; the secret (may be NULL) is wiped and freed. */
static char *prefixed_secret(const char *prefix, char *secret)
{
    if (!secret) return NULL;
    size_t pl = strlen(prefix), sl = strlen(secret);
    char *out = malloc(pl + sl + 1);
    if (out) {
        memcpy(out, prefix, pl);
        memcpy(out + pl, secret, sl + 1);
    }
    free_secret(secret);
    return out;
}

char *shape_kafka_schema_registry_basic_authorization(const char *user, const char *password)
{
    size_t ul = strlen(user), pl = strlen(password);
    char *pair = malloc(ul + pl + 2);
    if (!pair) return NULL;
    memcpy(pair, user, ul);
    pair[ul] = ':';
    memcpy(pair + ul + 1, password, pl + 1);
    char *encoded = base64_of((const unsigned char *)pair, ul + pl + 1);
    free_secret(pair);
    return prefixed_secret("Basic ", encoded);
}

/* The whole header line "Authorization: Basic …". */
static char *authorization_line(const char *user, const char *password)
{
    return prefixed_secret("Authorization: ", shape_kafka_schema_registry_basic_authorization(user, password));
}

/* Every byte but A-Z a-z 0-9 - . _ ~ becomes %XX (no other safe characters:
 * a '/' in a subject must not become a path separator). */
static char *percent_encode(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc(3 * strlen(s) + 1);
    if (!out) return NULL;
    char *p = out;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (isalnum(*c) || *c == '-' || *c == '.' || *c == '_' || *c == '~') {
            *p++ = (char)*c;
        } else {
            *p++ = '%';
            *p++ = hex[*c >> 4];
            *p++ = hex[*c & 15];
        }
    }
    *p = '\0';
    return out;
}

/* ---- settings checks ----------------------------------------------------- */

/* http(s)://authority[/…]: *scheme_len and the authority's bounds, or -1. */
static int split_url(const char *url, const char **authority, size_t *authority_len)
{
    size_t scheme_len;
    if (strncasecmp(url, "http://", 7) == 0) scheme_len = 7;
    else if (strncasecmp(url, "https://", 8) == 0) scheme_len = 8;
    else return -1;
    *authority = url + scheme_len;
    *authority_len = strcspn(*authority, "/?#");
    return 0;
}

/* Any "user@" or "user:password@" before the host, whatever the scheme. */
static int url_has_credentials(const char *url)
{
    const char *sep = strstr(url, "://");
    const char *authority = sep ? sep + 3 : url;
    size_t len = strcspn(authority, "/?#");
    return memchr(authority, '@', len) != NULL;
}

static int host_present(const char *authority, size_t len)
{
    if (len > 0 && authority[0] == '[') {
        const char *close = memchr(authority, ']', len);
        return close != NULL && close > authority + 1;
    }
    const char *colon = memchr(authority, ':', len);
    size_t host_len = colon ? (size_t)(colon - authority) : len;
    return host_len > 0;
}

static int check_url(const char *url, shape_err *err)
{
    if (is_empty(url))
        return shape_err_set(err, SHAPE_EINVAL, "kafka.schema_registry_url '' is not an http(s) URL");
    if (url_has_credentials(url))
        return shape_err_set(err, SHAPE_EINVAL,
                             "kafka.schema_registry_url must not carry credentials: give "
                             "kafka.schema_registry_username and kafka.schema_registry_password=env://NAME");
    const char *authority;
    size_t authority_len;
    if (split_url(url, &authority, &authority_len) != 0 || !host_present(authority, authority_len))
        return shape_err_set(err, SHAPE_EINVAL, "kafka.schema_registry_url '%.200s' is not an http(s) URL", url);
    return SHAPE_OK;
}

static int copy_url(const char *url, char **out, shape_err *err)
{
    size_t len = strlen(url);
    const char *authority = url;
    size_t authority_len = 0;
    if (split_url(url, &authority, &authority_len) != 0) /* checked before: cannot happen */
        return shape_err_set(err, SHAPE_EINTERNAL, "kafka.schema_registry_url is not an http(s) URL");
    size_t keep = (size_t)(authority - url) + authority_len;
    while (len > keep && url[len - 1] == '/') len--;
    *out = strndup(url, len);
    return *out ? SHAPE_OK : out_of_memory(err);
}

/* ---- client lifetime ----------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result = CURLE_OK;

static void init_curl(void) { curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT); }

static int copy_settings(shape_kafka_schema_registry_client *c, const shape_kafka_schema_registry_settings *s, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(copy_url(s->url, &c->url, err));
    SHAPE_RETURN_NOT_OK(copy_optional(s->username, &c->username, err));
    SHAPE_RETURN_NOT_OK(copy_optional(s->password, &c->password, err));
    SHAPE_RETURN_NOT_OK(copy_optional(s->ca_location, &c->ca_location, err));
    SHAPE_RETURN_NOT_OK(copy_optional(s->certificate_location, &c->certificate_location, err));
    SHAPE_RETURN_NOT_OK(copy_optional(s->key_location, &c->key_location, err));
    if (c->username && !(c->authorization = authorization_line(c->username, c->password)))
        return out_of_memory(err);
    c->ssl_verify = s->ssl_verify;
    c->timeout_ms = s->timeout > 0 ? (long)(s->timeout * 1000.0 + 0.5) : DEFAULT_TIMEOUT_MS;
    if (c->timeout_ms < 1) c->timeout_ms = 1;
    c->transport = s->transport;
    c->transport_ctx = s->transport_ctx;
    return SHAPE_OK;
}

static int open_curl(shape_kafka_schema_registry_client *c, shape_err *err)
{
    pthread_once(&curl_once, init_curl);
    if (curl_init_result != CURLE_OK)
        return shape_err_set(err, SHAPE_EINTERNAL, "cannot initialise libcurl: %s",
                             curl_easy_strerror(curl_init_result));
    c->curl = curl_easy_init();
    if (!c->curl) return shape_err_set(err, SHAPE_EINTERNAL, "cannot create a libcurl handle");
    return SHAPE_OK;
}

int shape_kafka_schema_registry_client_new(const shape_kafka_schema_registry_settings *s, shape_kafka_schema_registry_client **out, shape_err *err)
{
    *out = NULL;
    SHAPE_RETURN_NOT_OK(check_url(s->url, err));
    if (is_empty(s->username) != is_empty(s->password))
        return shape_err_set(err, SHAPE_EINVAL,
                             "the schema registry needs both kafka.schema_registry_username and "
                             "kafka.schema_registry_password");
    shape_kafka_schema_registry_client *c = calloc(1, sizeof *c);
    if (!c) return out_of_memory(err);
    int rc = copy_settings(c, s, err);
    if (rc == SHAPE_OK && !c->transport) rc = open_curl(c, err);
    if (rc != SHAPE_OK) {
        shape_kafka_schema_registry_client_free(c);
        return rc;
    }
    *out = c;
    return SHAPE_OK;
}

void shape_kafka_schema_registry_client_free(shape_kafka_schema_registry_client *c)
{
    if (!c) return;
    if (c->curl) curl_easy_cleanup(c->curl);
    for (size_t i = 0; i < c->cache_len; i++) {
        free(c->cache[i].subject);
        free(c->cache[i].schema_type);
        free(c->cache[i].schema);
    }
    free(c->cache);
    free(c->url);
    free(c->username);
    free_secret(c->password);
    free_secret(c->authorization);
    free(c->ca_location);
    free(c->certificate_location);
    free(c->key_location);
    free(c);
}

const char *shape_kafka_schema_registry_client_url(const shape_kafka_schema_registry_client *c) { return c->url; }

uint64_t shape_kafka_schema_registry_requests(const shape_kafka_schema_registry_client *c) { return c->requests; }

/* ---- the libcurl transport ----------------------------------------------- */

/* The answer's body, and whether it ran out of memory. */
typedef struct growing_buffer {
    shape_json_buf b;
    int failed;
} growing_buffer;

static size_t collect_body(char *chunk, size_t size, size_t n, void *userdata)
{
    growing_buffer *b = userdata;
    size_t add = size * n;
    if (shape_json_buf_append(&b->b, chunk, add) != 0) {
        b->failed = 1;
        return 0; /* libcurl stops with CURLE_WRITE_ERROR */
    }
    return add;
}

/* Free a header list, wiping each line first (one carries the Basic header). */
static void free_header_list(struct curl_slist *list)
{
    for (struct curl_slist *item = list; item; item = item->next) explicit_bzero(item->data, strlen(item->data));
    curl_slist_free_all(list);
}

static void set_curl_options(shape_kafka_schema_registry_client *c, const char *method, const char *url,
                             struct curl_slist *headers, const char *body, size_t body_len,
                             growing_buffer *answer, char *error_buffer)
{
    CURL *h = c->curl;
    curl_easy_reset(h); /* keeps the connection cache: keep-alive survives */
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, answer);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     c->timeout_ms < CONNECT_TIMEOUT_MS ? c->timeout_ms : CONNECT_TIMEOUT_MS);
    if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
        if (strcmp(method, "POST") != 0) curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    }
    if (c->ca_location) curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_location);
    if (c->certificate_location) curl_easy_setopt(h, CURLOPT_SSLCERT, c->certificate_location);
    if (c->key_location) curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_location);
    if (!c->ssl_verify) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

static int curl_transport(void *ctx, const char *method, const char *url, const char *const *headers,
                          size_t nheaders, const char *body, size_t body_len, long *status, char **resp,
                          size_t *resp_len, shape_err *err)
{
    shape_kafka_schema_registry_client *c = ctx;
    struct curl_slist *list = NULL;
    /* "Expect:" stops libcurl from waiting for 100-continue on large bodies. */
    for (size_t i = 0; i <= nheaders; i++) {
        struct curl_slist *grown = curl_slist_append(list, i < nheaders ? headers[i] : "Expect:");
        if (!grown) {
            free_header_list(list);
            return out_of_memory(err);
        }
        list = grown;
    }
    growing_buffer answer = {0};
    char error_buffer[CURL_ERROR_SIZE] = "";
    set_curl_options(c, method, url, list, body, body_len, &answer, error_buffer);
    CURLcode code = curl_easy_perform(c->curl);
    curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, NULL);
    free_header_list(list);
    if (code != CURLE_OK) {
        shape_json_buf_reset(&answer.b);
        if (answer.failed) return out_of_memory(err);
        return shape_err_set(err, SHAPE_ECONN, "schema registry unreachable: %s",
                             error_buffer[0] ? error_buffer : curl_easy_strerror(code));
    }
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
    if (!answer.b.data && shape_json_buf_append(&answer.b, "", 0) != 0) return out_of_memory(err);
    *resp = answer.b.data;
    *resp_len = answer.b.len;
    return SHAPE_OK;
}

/* ---- one exchange -------------------------------------------------------- */

typedef struct answer {
    long status;
    char *body;
    size_t len;
} answer;

static int send_request(shape_kafka_schema_registry_client *c, const char *method, const char *url, const char *body,
                        answer *out, shape_err *err)
{
    const char *headers[MAX_HEADERS];
    size_t n = 0;
    headers[n++] = "Content-Type: " MEDIA_TYPE;
    headers[n++] = "Accept: " MEDIA_TYPE;
    if (c->authorization) headers[n++] = c->authorization;
    shape_kafka_schema_registry_transport transport = c->transport ? c->transport : curl_transport;
    void *ctx = c->transport ? c->transport_ctx : c;
    out->status = 0;
    out->body = NULL;
    out->len = 0;
    c->requests++;
    int rc = transport(ctx, method, url, headers, n, body, body ? strlen(body) : 0, &out->status, &out->body,
                       &out->len, err);
    if (rc == SHAPE_OK && !out->body && !(out->body = calloc(1, 1))) return out_of_memory(err);
    return rc;
}

static int is_retriable(long status) { return status >= 500 || status == 429; }

/* The registry's words for a refusal: JSON "message", else the body text
 * (trimmed, control characters as spaces, cut), else "HTTP STATUS". */
static void refusal_message(const answer *a, char *out, size_t size)
{
    json_t *doc = json_loadb(a->body, a->len, 0, NULL);
    const char *message = json_is_object(doc) ? json_string_value(json_object_get(doc, "message")) : NULL;
    const char *text = message && message[0] ? message : a->body;
    size_t len = message && message[0] ? strlen(message) : a->len;
    while (len > 0 && isspace((unsigned char)*text)) text++, len--;
    while (len > 0 && isspace((unsigned char)text[len - 1])) len--;
    if (len == 0) {
        snprintf(out, size, "HTTP %ld", a->status);
    } else {
        size_t keep = len < MESSAGE_MAX ? len : MESSAGE_MAX;
        if (keep >= size) keep = size - 1;
        for (size_t i = 0; i < keep; i++) out[i] = iscntrl((unsigned char)text[i]) ? ' ' : text[i];
        out[keep] = '\0';
    }
    json_decref(doc);
}

/* ---- register ------------------------------------------------------------ */

static int is_avro(const char *schema_type) { return is_empty(schema_type) || strcmp(schema_type, "AVRO") == 0; }

static const cached_id *cache_find(const shape_kafka_schema_registry_client *c, const char *subject, const char *schema_type,
                                   const char *schema)
{
    const char *type = is_avro(schema_type) ? "AVRO" : schema_type;
    for (size_t i = 0; i < c->cache_len; i++) {
        const cached_id *e = &c->cache[i];
        if (strcmp(e->subject, subject) == 0 && strcmp(e->schema_type, type) == 0 && strcmp(e->schema, schema) == 0)
            return e;
    }
    return NULL;
}

static int cache_add(shape_kafka_schema_registry_client *c, const char *subject, const char *schema_type, const char *schema,
                     uint32_t id, shape_err *err)
{
    if (c->cache_len == c->cache_cap) {
        size_t cap = c->cache_cap ? 2 * c->cache_cap : 8;
        cached_id *grown = realloc(c->cache, cap * sizeof *grown);
        if (!grown) return out_of_memory(err);
        c->cache = grown;
        c->cache_cap = cap;
    }
    cached_id *e = &c->cache[c->cache_len];
    e->subject = strdup(subject);
    e->schema_type = strdup(is_avro(schema_type) ? "AVRO" : schema_type);
    e->schema = strdup(schema);
    e->id = id;
    if (!e->subject || !e->schema_type || !e->schema) {
        free(e->subject);
        free(e->schema_type);
        free(e->schema);
        return out_of_memory(err);
    }
    c->cache_len++;
    return SHAPE_OK;
}

/* {"schema": TEXT[, "schemaType": TYPE]}, compact. */
static char *registration_body(const char *schema_type, const char *schema)
{
    json_t *doc = json_object();
    if (!doc) return NULL;
    int bad = json_object_set_new(doc, "schema", json_string(schema)) != 0;
    if (!is_avro(schema_type)) bad |= json_object_set_new(doc, "schemaType", json_string(schema_type)) != 0;
    char *text = bad ? NULL : json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return text;
}

static char *subject_url(const shape_kafka_schema_registry_client *c, const char *subject)
{
    char *encoded = percent_encode(subject);
    if (!encoded) return NULL;
    size_t size = strlen(c->url) + strlen(encoded) + sizeof "/subjects//versions";
    char *url = malloc(size);
    if (url) snprintf(url, size, "%s/subjects/%s/versions", c->url, encoded);
    free(encoded);
    return url;
}

static int read_schema_id(const answer *a, const char *subject, uint32_t *id, shape_err *err)
{
    json_t *doc = json_loadb(a->body, a->len, 0, NULL);
    json_t *value = json_is_object(doc) ? json_object_get(doc, "id") : NULL;
    int ok = json_is_integer(value) && json_integer_value(value) >= 0 && json_integer_value(value) <= UINT32_MAX;
    if (ok) *id = (uint32_t)json_integer_value(value);
    json_decref(doc);
    if (!ok)
        return shape_err_set(err, SHAPE_EINVAL,
                             "schema registry refused the schema for subject %s: the registry's answer has no "
                             "schema id",
                             subject);
    return SHAPE_OK;
}

static int interpret_registration(const answer *a, const char *subject, uint32_t *id, shape_err *err)
{
    if (a->status >= 200 && a->status < 300) return read_schema_id(a, subject, id, err);
    if (is_retriable(a->status))
        return shape_err_set(err, SHAPE_ECONN, "schema registry error %ld for subject %s", a->status, subject);
    char message[MESSAGE_MAX + 1];
    refusal_message(a, message, sizeof message);
    return shape_err_set(err, SHAPE_EINVAL, "schema registry refused the schema for subject %s: %s", subject,
                         message);
}

static int unknown_type(const char *schema_type)
{
    return !is_avro(schema_type) && strcmp(schema_type, "PROTOBUF") != 0 && strcmp(schema_type, "JSON") != 0;
}

int shape_kafka_schema_registry_register(shape_kafka_schema_registry_client *c, const char *subject, const char *schema_type,
                            const char *schema, uint32_t *id, shape_err *err)
{
    if (unknown_type(schema_type))
        return shape_err_set(err, SHAPE_EINVAL, "unknown schema type '%.40s' (AVRO, PROTOBUF or JSON)", schema_type);
    if (!shape_utf8_valid(schema, strlen(schema)) || !shape_utf8_valid(subject, strlen(subject)))
        return shape_err_set(err, SHAPE_EINVAL,
                             "the schema for subject %.200s is not valid UTF-8 (a table or column name?)",
                             shape_utf8_valid(subject, strlen(subject)) ? subject : "(not UTF-8)");
    const cached_id *known = cache_find(c, subject, schema_type, schema);
    if (known) {
        *id = known->id;
        return SHAPE_OK;
    }
    char *url = subject_url(c, subject);
    char *body = registration_body(schema_type, schema);
    answer a = {0};
    int rc = url && body ? send_request(c, "POST", url, body, &a, err) : out_of_memory(err);
    if (rc == SHAPE_OK) rc = interpret_registration(&a, subject, id, err);
    if (rc == SHAPE_OK) rc = cache_add(c, subject, schema_type, schema, *id, err);
    free(a.body);
    free(body);
    free(url);
    return rc;
}

/* ---- fetch --------------------------------------------------------------- */

static int read_fetched(const answer *a, uint32_t id, char **schema, char **schema_type, shape_err *err)
{
    json_t *doc = json_loadb(a->body, a->len, 0, NULL);
    const char *text = json_is_object(doc) ? json_string_value(json_object_get(doc, "schema")) : NULL;
    const char *type = json_is_object(doc) ? json_string_value(json_object_get(doc, "schemaType")) : NULL;
    int rc = SHAPE_OK;
    if (!text) {
        rc = shape_err_set(err, SHAPE_EINVAL, "schema registry answer for schema id %" PRIu32 " has no schema", id);
    } else {
        *schema = strdup(text);
        *schema_type = strdup(type && type[0] ? type : "AVRO");
        if (!*schema || !*schema_type) {
            free(*schema);
            free(*schema_type);
            *schema = *schema_type = NULL;
            rc = out_of_memory(err);
        }
    }
    json_decref(doc);
    return rc;
}

static int interpret_fetch(const answer *a, uint32_t id, char **schema, char **schema_type, shape_err *err)
{
    if (a->status >= 200 && a->status < 300) return read_fetched(a, id, schema, schema_type, err);
    if (a->status == 404)
        return shape_err_set(err, SHAPE_ENOTFOUND, "schema registry has no schema with id %" PRIu32, id);
    if (is_retriable(a->status))
        return shape_err_set(err, SHAPE_ECONN, "schema registry error %ld for schema id %" PRIu32, a->status, id);
    char message[MESSAGE_MAX + 1];
    refusal_message(a, message, sizeof message);
    return shape_err_set(err, SHAPE_EINVAL, "schema registry refused to give schema id %" PRIu32 ": %s", id,
                         message);
}

int shape_kafka_schema_registry_fetch(shape_kafka_schema_registry_client *c, uint32_t id, char **schema, char **schema_type, shape_err *err)
{
    *schema = NULL;
    *schema_type = NULL;
    size_t size = strlen(c->url) + sizeof "/schemas/ids/" + 12;
    char *url = malloc(size);
    if (!url) return out_of_memory(err);
    snprintf(url, size, "%s/schemas/ids/%" PRIu32, c->url, id);
    answer a = {0};
    int rc = send_request(c, "GET", url, NULL, &a, err);
    if (rc == SHAPE_OK) rc = interpret_fetch(&a, id, schema, schema_type, err);
    free(a.body);
    free(url);
    return rc;
}

/* client.h — a Confluent Schema Registry client: register a schema under a
 * subject, get its id (spec-kafka.md §4.7).
 *
 * Why: registry formats need each table's schema id before the first event
 * of the table is produced; a registry that is down must look like a
 * transient failure (the emit runtime retries the batch), a registry that
 * refuses must stop the run with the registry's own words.
 * How: libcurl, one easy handle reused per client (keep-alive), 30 s
 * timeout; `POST {url}/subjects/{subject}/versions` with the media type
 * application/vnd.schemaregistry.v1+json for Content-Type and Accept, body
 * {"schema": TEXT[, "schemaType": "PROTOBUF"|"JSON"]}, basic auth when
 * credentials are given. Answers are read with jansson. Ids are cached per
 * (subject, schema type, text), so a table is registered once per run.
 * Tests swap the transport for an in-process one (the fake registry, fake.h).
 *
 * Errors: SHAPE_EINVAL for refusals and bad settings (the run stops, exit 2);
 * SHAPE_ECONN for 5xx, 429, timeouts and unreachable registries (retried).
 * Messages never contain the password.
 */
#ifndef SHAPE_KAFKA_REGISTRY_CLIENT_H
#define SHAPE_KAFKA_REGISTRY_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

/* One HTTP exchange. headers: n "Name: value" lines. On success *status is
 * the HTTP status and *resp (malloc'ed, NUL-terminated, freed by the caller)
 * the body. A transport failure (no answer) → SHAPE_ECONN with a reason. */
typedef int (*shape_kafka_schema_registry_transport)(void *ctx, const char *method, const char *url,
                                        const char *const *headers, size_t nheaders, const char *body,
                                        size_t body_len, long *status, char **resp, size_t *resp_len,
                                        shape_err *err);

typedef struct shape_kafka_schema_registry_settings {
    const char *url;      /* http(s)://host[:port][/path]; required */
    const char *username; /* NULL or "" = none */
    const char *password; /* resolved value; NULL or "" = none */
    /* TLS (libcurl): NULL = libcurl's defaults */
    const char *ca_location;          /* kafka.schema_registry_ca_location: CA bundle file */
    const char *certificate_location; /* client certificate (PEM) */
    const char *key_location;         /* client key (PEM) */
    int ssl_verify;                   /* 1 (default) verify peer and host; 0 off */
    double timeout;                   /* seconds; 0 → 30 */
    shape_kafka_schema_registry_transport transport; /* NULL → libcurl */
    void *transport_ctx;
} shape_kafka_schema_registry_settings;

typedef struct shape_kafka_schema_registry_client shape_kafka_schema_registry_client;

/* Check the URL and credentials (§4.7 texts: "kafka.schema_registry_url '…' is
 * not an http(s) URL", "… must not carry credentials: …", "the schema
 * registry needs both kafka.schema_registry_username and
 * kafka.schema_registry_password"), strip a trailing '/', copy everything.
 * Nothing is sent. */
int shape_kafka_schema_registry_client_new(const shape_kafka_schema_registry_settings *s, shape_kafka_schema_registry_client **out,
                              shape_err *err);
void shape_kafka_schema_registry_client_free(shape_kafka_schema_registry_client *c);

/* The URL after checks (trailing '/' removed). */
const char *shape_kafka_schema_registry_client_url(const shape_kafka_schema_registry_client *c);

/* Register `schema` (schema_type "AVRO", "PROTOBUF" or "JSON"; AVRO is not
 * sent, as the registry's default) under `subject`; *id = the registry's id.
 * Cached: the same (subject, type, text) asks the registry once. */
int shape_kafka_schema_registry_register(shape_kafka_schema_registry_client *c, const char *subject, const char *schema_type,
                            const char *schema, uint32_t *id, shape_err *err);

/* GET {url}/schemas/ids/{id}: the registered text and its type ("AVRO" when
 * the answer has none); both malloc'ed. 404 → SHAPE_ENOTFOUND. */
int shape_kafka_schema_registry_fetch(shape_kafka_schema_registry_client *c, uint32_t id, char **schema, char **schema_type,
                         shape_err *err);

/* Requests actually sent (not answered from the cache). */
uint64_t shape_kafka_schema_registry_requests(const shape_kafka_schema_registry_client *c);

/* The value of the Authorization header for basic auth: "Basic " followed by
 * base64("user:password"); malloc'ed (NULL when out of memory). It encodes
 * the password: wipe it (explicit_bzero) before freeing. */
char *shape_kafka_schema_registry_basic_authorization(const char *user, const char *password);

#endif

/* fake.h — a schema registry for tests: the subset of the Confluent REST API
 * shape uses, with knobs for the faults tests inject (spec-kafka.md §5).
 *
 * Why: registry formats must be tested against a registry that behaves like
 * the real one — ids, idempotent registration, incompatible changes,
 * refusals, authentication, outages — both in-process (contract tests, no
 * network) and over real HTTP (the libcurl path, emulator tests,
 * `shape schema-registry`).
 * How: shape_kafka_fake_registry_handle answers one request from the in-memory
 * state (mutex-protected); shape_kafka_fake_registry_transport adapts it to the
 * client's transport hook; shape_kafka_fake_registry_server_new runs a small HTTP/1.1
 * server (one thread, keep-alive, Content-Length bodies) over it.
 * Behaviour: ids from 100 up; same subject + same text → same id; same
 * subject + a different text → 409 "Schema being registered is incompatible
 * with an earlier schema for subject \"S\"" unless evolve (then a new
 * version and id); the same text+type known under another subject → its id;
 * a refused subject → 422 with the configured message; auth → 401
 * {"error_code":40101,"message":"Unauthorized"} without the exact Basic
 * header; down → 503 for everything; GET /schemas/ids/{id} →
 * {"schema":...,"schemaType":...} or 404; GET /subjects → the list;
 * anything else 404. Every request is recorded (method, path, body).
 */
#ifndef SHAPE_KAFKA_REGISTRY_FAKE_H
#define SHAPE_KAFKA_REGISTRY_FAKE_H

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

typedef struct shape_kafka_fake_registry shape_kafka_fake_registry;

/* SHAPE_OK and *out, or SHAPE_ENOMEM. */
int shape_kafka_fake_registry_new(shape_kafka_fake_registry **out, shape_err *err);
void shape_kafka_fake_registry_free(shape_kafka_fake_registry *r);

/* Knobs (may change while serving). */
void shape_kafka_fake_registry_set_down(shape_kafka_fake_registry *r, int down);          /* 503 for everything */
void shape_kafka_fake_registry_set_evolve(shape_kafka_fake_registry *r, int evolve);      /* accept changed schemas */
void shape_kafka_fake_registry_set_auth(shape_kafka_fake_registry *r, const char *user, const char *password);
int shape_kafka_fake_registry_refuse(shape_kafka_fake_registry *r, const char *subject, const char *message); /* 422 */
/* The next n requests answer `status` (e.g. 503, 429) before normal service. */
void shape_kafka_fake_registry_fail_next(shape_kafka_fake_registry *r, int n, int status);

/* Answer one request. path includes the query, if any. *resp is malloc'ed. */
void shape_kafka_fake_registry_handle(shape_kafka_fake_registry *r, const char *method, const char *path,
                                const char *authorization, const char *body, size_t body_len,
                                int *status, char **resp);

/* The client transport hook over handle (ctx = the registry; the URL's path is used). */
int shape_kafka_fake_registry_transport(void *ctx, const char *method, const char *url,
                                  const char *const *headers, size_t nheaders, const char *body,
                                  size_t body_len, long *status, char **resp, size_t *resp_len,
                                  shape_err *err);

/* Recorded requests. */
size_t shape_kafka_fake_registry_request_count(const shape_kafka_fake_registry *r);
/* Request i: method, path, body (borrowed until the registry is freed). */
void shape_kafka_fake_registry_request(const shape_kafka_fake_registry *r, size_t i, const char **method,
                                 const char **path, const char **body);
/* Registered subjects, in first-registration order. */
size_t shape_kafka_fake_registry_subject_count(const shape_kafka_fake_registry *r);
const char *shape_kafka_fake_registry_subject(const shape_kafka_fake_registry *r, size_t i);

/* ---- over HTTP ------------------------------------------------------------ */

typedef struct shape_kafka_fake_registry_server shape_kafka_fake_registry_server;

/* Listen on host:port (port 0 = any) and serve r from a thread until the
 * server is freed (which stops it first); *port_out = the bound port. */
int shape_kafka_fake_registry_server_new(shape_kafka_fake_registry *r, const char *host, int port,
                              shape_kafka_fake_registry_server **out, int *port_out, shape_err *err);
void shape_kafka_fake_registry_server_free(shape_kafka_fake_registry_server *s);

#endif

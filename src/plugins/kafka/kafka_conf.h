/* kafka_conf.h — set one librdkafka property without ever echoing its value.
 *
 * Why: librdkafka's refusal text often quotes the value it refused
 * ("Invalid value \"...\" for configuration property ...", "... value N is
 * outside allowed range", "...: VALUE"), and a value given under a harmless
 * looking name can still be a secret pasted into the wrong setting. The
 * consumer and producer clients (consumer_client_rdkafka.c,
 * producer_rdkafka.c) both pass user `config` values to rd_kafka_conf_set,
 * so both word refusals with these functions; a value refused later, when
 * rd_kafka_new makes the client, goes through shape_kafka_new_refused.
 */
#ifndef SHAPE_KAFKA_CONF_H
#define SHAPE_KAFKA_CONF_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

#include "shape/error.h"

/* rd_kafka_conf_set(conf, name, value). On refusal: SHAPE_EINVAL with
 * "<what> '<name>' was refused: <librdkafka's reason, value redacted>", or,
 * when hide_reason (a secret-named setting, a resolved credential
 * reference), "<what> '<name>' was refused (its value is not shown)".
 * `what` names the setting's kind in the message ("kafka producer setting").
 * Neither value nor any part of it is copied into err. */
int shape_kafka_conf_set_redacted(rd_kafka_conf_t *conf, const char *what, const char *name, const char *value,
                                  int hide_reason, shape_err *err);

/* The redaction step alone (exposed for tests): librdkafka's refusal text
 * `reason` rewritten into out (size out_size, always NUL-terminated) with
 * every quoted value, range value, text after a property's "\": " and every
 * occurrence of value (or of a ,;-separated part of it) replaced by
 * "(value not shown)". A quoted word stays only when it is `name`, or a
 * property name `conf` knows that is not the value itself. */
void shape_kafka_conf_redact(const rd_kafka_conf_t *conf, const char *reason, const char *name, const char *value,
                             char *out, size_t out_size);

/* rd_kafka_new refused (reason: its errstr): `code` with "<what>: <reason>",
 * every one of values[0..n_values) — the values the client was given, secrets
 * already resolved — and each list item of one replaced by
 * "(value not shown)". */
int shape_kafka_new_refused(const char *const *values, size_t n_values, const char *what, const char *reason,
                            int code, shape_err *err);

/* SHAPE_DEBUG is set (non-empty and not "0"): librdkafka's own log lines
 * are shown ("shape: debug: kafka: FACILITY: ..."), else kept quiet. */
int shape_kafka_debug(void);

#endif

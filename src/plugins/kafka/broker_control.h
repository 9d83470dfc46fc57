/* broker_control.h — the fault-control channel of `shape broker`
 * (broker_control.c): text commands that drive librdkafka's mock cluster. */
#ifndef SHAPE_KAFKA_BROKER_CONTROL_H
#define SHAPE_KAFKA_BROKER_CONTROL_H

#include <signal.h>
#include <stddef.h>

#include <librdkafka/rdkafka_mock.h>

#include "shape/error.h"

/* Run one command line (no newline needed) against the cluster of
 * `brokers` brokers (ids 1..brokers). Writes one reply line without its
 * newline into reply: "ok", "ok: ..." or "error: ...". Returns 0 when the
 * command was carried out, -1 otherwise. Never aborts on bad input. */
int shape_kafka_control_exec(rd_kafka_mock_cluster_t *cluster, int brokers, const char *line, char *reply,
                             size_t reply_size);

/* Serve the control channel until one of stop_signals arrives (they must
 * already be blocked in every thread): path is a Unix-domain socket path
 * (created here, removed before returning) or "-" for stdin (replies on
 * stdout). *signo receives the signal that stopped it. The cluster is
 * borrowed, not owned. */
int shape_kafka_control_serve(rd_kafka_mock_cluster_t *cluster, int brokers, const char *path,
                              const sigset_t *stop_signals, int *signo, shape_err *err);

#endif

/* broker_nodelay.h — TCP_NODELAY on the connections of `shape broker`
 * (broker_nodelay.c). */
#ifndef SHAPE_KAFKA_BROKER_NODELAY_H
#define SHAPE_KAFKA_BROKER_NODELAY_H

/* Set TCP_NODELAY on the mock cluster's listening sockets, those of the
 * ports in bootstraps (rd_kafka_mock_cluster_bootstraps), so that every
 * connection they accept has it (broker_nodelay.c). Call it after creating
 * the cluster and after each broker down/up. Returns how many listeners got
 * it (one per broker when all went well); never fails otherwise. */
int shape_kafka_broker_nodelay(const char *bootstraps);

#endif

/* broker_watch.h — `shape broker` says when its partitions drop messages
 * (broker_watch.c). */
#ifndef SHAPE_KAFKA_BROKER_WATCH_H
#define SHAPE_KAFKA_BROKER_WATCH_H

#include "shape/error.h"

typedef struct shape_kafka_drop_watch shape_kafka_drop_watch;

/* Start watching the low watermarks of every partition of the cluster at
 * bootstraps (a thread with a client of its own; its log is silent). */
int shape_kafka_drop_watch_start(const char *bootstraps, shape_kafka_drop_watch **out, shape_err *err);

/* Stop the thread (within a poll's time-out), report episodes still open,
 * free everything. NULL is a no-op. */
void shape_kafka_drop_watch_stop(shape_kafka_drop_watch *w);

#endif

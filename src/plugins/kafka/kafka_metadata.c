/* kafka_metadata.c — a topic looked up in the cluster's metadata
 * (kafka_metadata.h: why a list request for readers, a named one for
 * emitters). */
#include "kafka_metadata.h"

#include <stdlib.h>
#include <string.h>

#include "shape/clock.h"

#define STOP_SLICE_MS 100

/* librdkafka's metadata call, its wait for a broker that is up cut in
 * slices while stop is given (kafka_metadata.h). */
static rd_kafka_resp_err_t metadata(rd_kafka_t *rk, rd_kafka_topic_t *rkt, int timeout_ms,
                                    const volatile sig_atomic_t *stop, const struct rd_kafka_metadata **md)
{
    if (!stop) return rd_kafka_metadata(rk, rkt == NULL, rkt, md, timeout_ms);
    double end = shape_clock_now() + timeout_ms / 1000.0;
    for (;;) {
        if (*stop) return RD_KAFKA_RESP_ERR__INTR;
        int left = (int)((end - shape_clock_now()) * 1000.0);
        if (left <= 0) return RD_KAFKA_RESP_ERR__TRANSPORT; /* no broker came up: as one call would say */
        rd_kafka_resp_err_t e = rd_kafka_metadata(rk, rkt == NULL, rkt, md, left < STOP_SLICE_MS ? left : STOP_SLICE_MS);
        if (e != RD_KAFKA_RESP_ERR__TRANSPORT && e != RD_KAFKA_RESP_ERR__TIMED_OUT) return e;
        if (e == RD_KAFKA_RESP_ERR__TIMED_OUT) { /* a broker is up, its answer slow: wait for it */
            left = (int)((end - shape_clock_now()) * 1000.0);
            return left > 0 ? rd_kafka_metadata(rk, rkt == NULL, rkt, md, left) : e;
        }
    }
}

rd_kafka_resp_err_t shape_kafka_topic_lookup(rd_kafka_t *rk, const char *topic, int mode, int timeout_ms,
                                             const volatile sig_atomic_t *stop, shape_kafka_topic_info *out)
{
    memset(out, 0, sizeof *out);
    rd_kafka_topic_t *rkt = NULL;
    if (mode == SHAPE_KAFKA_LOOKUP_NAMED && !(rkt = rd_kafka_topic_new(rk, topic, NULL))) return rd_kafka_last_error();
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = metadata(rk, rkt, timeout_ms, stop, &md);
    if (rkt) rd_kafka_topic_destroy(rkt);
    if (e) return e;
    const struct rd_kafka_metadata_topic *mt = NULL;
    for (int i = 0; i < md->topic_cnt && !mt; i++)
        if (md->topics[i].topic && strcmp(md->topics[i].topic, topic) == 0) mt = &md->topics[i];
    if (mt && mt->err == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE && mt->partition_cnt == 0) {
        out->found = out->creating = 1; /* created on this request; its partitions come with the next one */
    } else if (mt && mt->err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART && mt->partition_cnt > 0) {
        out->found = 1;
        out->ids = malloc((size_t)mt->partition_cnt * sizeof *out->ids);
        if (!out->ids) e = RD_KAFKA_RESP_ERR__NOENT;
        for (int i = 0; out->ids && i < mt->partition_cnt; i++) out->ids[out->n++] = mt->partitions[i].id;
    } else if (mt && mt->err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        out->topic_err = mt->err; /* e.g. not authorised to see it */
    }
    rd_kafka_metadata_destroy(md);
    return e;
}

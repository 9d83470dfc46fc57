/* kafka_metadata.c — a topic looked up in the cluster's metadata
 * (kafka_metadata.h: why a list request for readers, a named one for
 * emitters). */
#include "kafka_metadata.h"

#include <stdlib.h>
#include <string.h>

rd_kafka_resp_err_t shape_kafka_topic_lookup(rd_kafka_t *rk, const char *topic, int mode, int timeout_ms,
                                             shape_kafka_topic_info *out)
{
    memset(out, 0, sizeof *out);
    rd_kafka_topic_t *rkt = NULL;
    if (mode == SHAPE_KAFKA_LOOKUP_NAMED && !(rkt = rd_kafka_topic_new(rk, topic, NULL))) return rd_kafka_last_error();
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(rk, rkt == NULL, rkt, &md, timeout_ms);
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

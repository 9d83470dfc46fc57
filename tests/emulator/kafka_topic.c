/* kafka_topic.c — test helper: create a topic with N partitions through the
 * Kafka Admin API, against `shape broker` or a real cluster alike.
 *
 * Why: emulator tests must also run against a real Apache Kafka
 * (SHAPE_TEST_KAFKA=host:port, ci/emulators/docker-compose.yml), where
 * `shape broker --topic` is not available; kcat cannot create topics.
 * Usage: kafka_topic BOOTSTRAP TOPIC PARTITIONS [KEY=VALUE...]  (exit 0 also
 * when it exists); KEY=VALUE are topic configs (cleanup.policy=compact,
 * retention.bytes=..., segment.bytes=...: the real-broker tests).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: kafka_topic BOOTSTRAP TOPIC PARTITIONS [KEY=VALUE...]\n");
        return 2;
    }
    char errstr[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], errstr, sizeof errstr)) {
        fprintf(stderr, "kafka_topic: %s\n", errstr);
        return 2;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (!rk) {
        fprintf(stderr, "kafka_topic: %s\n", errstr);
        return 2;
    }
    rd_kafka_NewTopic_t *topic =
        rd_kafka_NewTopic_new(argv[2], atoi(argv[3]), -1, errstr, sizeof errstr);
    if (!topic) {
        fprintf(stderr, "kafka_topic: %s\n", errstr);
        return 2;
    }
    for (int i = 4; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "kafka_topic: '%s' is not KEY=VALUE\n", argv[i]);
            return 2;
        }
        *eq = 0;
        if (rd_kafka_NewTopic_set_config(topic, argv[i], eq + 1)) {
            fprintf(stderr, "kafka_topic: bad config %s\n", argv[i]);
            return 2;
        }
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_operation_timeout(opts, 10000, errstr, sizeof errstr);
    rd_kafka_CreateTopics(rk, &topic, 1, opts, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 15000);
    int rc = 2;
    if (!ev) {
        fprintf(stderr, "kafka_topic: no answer from %s\n", argv[1]);
    } else if (rd_kafka_event_error(ev)) {
        fprintf(stderr, "kafka_topic: %s\n", rd_kafka_event_error_string(ev));
    } else {
        size_t n;
        const rd_kafka_topic_result_t **res =
            rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
        rd_kafka_resp_err_t e = n ? rd_kafka_topic_result_error(res[0]) : RD_KAFKA_RESP_ERR_NO_ERROR;
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR || e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
            rc = 0;
        else
            fprintf(stderr, "kafka_topic: %s: %s\n", argv[2], rd_kafka_err2str(e));
    }
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(opts);
    rd_kafka_NewTopic_destroy(topic);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
    return rc;
}

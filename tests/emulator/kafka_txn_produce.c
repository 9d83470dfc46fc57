/* kafka_txn_produce.c — test helper: produce N JSON messages {"id": i} to
 * one partition inside a committed transaction.
 *
 * Why: a committed transaction leaves a control record (the commit marker)
 * at the end of the partition. It has an offset but is never delivered to
 * consumers, so a bounded read that waits for a message at high-1 would
 * hang. The kafka:// source must end such a partition from its EOF event.
 * With "abort" the transaction is aborted instead: its messages stay in the
 * log, with an abort marker, and a read_committed consumer never sees them
 * (offsets with gaps: the real-broker test test_real_kafka_topics.sh).
 * With SHAPE_TXN_HOLD_MS set, the transaction is held open that long (its
 * messages flushed, no marker yet) before it is committed or aborted: a read
 * meanwhile meets the last stable offset below the high watermark.
 * Usage: kafka_txn_produce BOOTSTRAP TOPIC PARTITION N [commit|abort [FIRST_ID]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

static int fail(const char *what, rd_kafka_error_t *e)
{
    fprintf(stderr, "kafka_txn_produce: %s: %s\n", what, e ? rd_kafka_error_string(e) : "failed");
    if (e) rd_kafka_error_destroy(e);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 7 || (argc > 5 && strcmp(argv[5], "commit") && strcmp(argv[5], "abort"))) {
        fprintf(stderr, "usage: kafka_txn_produce BOOTSTRAP TOPIC PARTITION N [commit|abort [FIRST_ID]]\n");
        return 2;
    }
    int abort_it = argc > 5 && strcmp(argv[5], "abort") == 0, first = argc > 6 ? atoi(argv[6]) : 0;
    char errstr[512], txn_id[64];
    /* One id per process: two tests on one shared cluster would fence each other. */
    snprintf(txn_id, sizeof txn_id, "shape-test-txn-%ld", (long)getpid());
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], errstr, sizeof errstr) ||
        rd_kafka_conf_set(conf, "transactional.id", txn_id, errstr, sizeof errstr)) {
        fprintf(stderr, "kafka_txn_produce: %s\n", errstr);
        return 2;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (!rk) {
        fprintf(stderr, "kafka_txn_produce: %s\n", errstr);
        return 2;
    }
    rd_kafka_error_t *e;
    if ((e = rd_kafka_init_transactions(rk, 10000))) return fail("init", e);
    if ((e = rd_kafka_begin_transaction(rk))) return fail("begin", e);
    int partition = atoi(argv[3]), n = atoi(argv[4]);
    for (int i = 0; i < n; i++) {
        char body[64];
        int len = snprintf(body, sizeof body, "{\"id\":%d}", first + i);
        rd_kafka_resp_err_t r = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(argv[2]), RD_KAFKA_V_PARTITION(partition),
                                                  RD_KAFKA_V_VALUE(body, (size_t)len),
                                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (r) {
            fprintf(stderr, "kafka_txn_produce: produce: %s\n", rd_kafka_err2str(r));
            return 2;
        }
    }
    const char *hold = getenv("SHAPE_TXN_HOLD_MS");
    if (hold && atoi(hold) > 0) {
        if (rd_kafka_flush(rk, 10000)) return fail("flush", NULL);
        printf("open\n");
        fflush(stdout);
        long ms = atol(hold);
        nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
    }
    if (abort_it) {
        if ((e = rd_kafka_flush(rk, 10000) ? rd_kafka_error_new(RD_KAFKA_RESP_ERR__TIMED_OUT, "flush timed out") : NULL))
            return fail("flush", e);
        if ((e = rd_kafka_abort_transaction(rk, 10000))) return fail("abort", e);
    } else if ((e = rd_kafka_commit_transaction(rk, 10000))) {
        return fail("commit", e);
    }
    rd_kafka_destroy(rk);
    return 0;
}

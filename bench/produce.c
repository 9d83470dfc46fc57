/* bench/produce.c — a bare librdkafka producer: the floor for `shape emit`
 * and the fast way to fill the consume benchmark's topic.
 *
 * Why: issue 7 compares `shape emit` with kcat -P on the same events and the
 * same producer settings; a producer with nothing but librdkafka in it shows
 * what the client library itself costs. The consume benchmark needs ~1M
 * retail-order-like messages in a 64-partition topic, quickly.
 * How: reads a file of lines — "KEY<TAB>VALUE" with -K, else VALUE alone —
 * and produces each line as one message (RD_KAFKA_MSG_F_COPY, the line
 * buffer is reused), to partition (line number mod PARTS) with -p PARTS, or
 * through the default partitioner by key. Producer settings come as -X
 * key=value, as kcat takes them; -H name=value adds a header to every
 * message (repeatable, as kcat -H: each message gets its own copy of the
 * list, since librdkafka takes ownership of it). On a full queue it polls and retries; at the
 * end it flushes and fails if any delivery failed. Prints one key=value line:
 * messages, bytes, seconds, msgs_s, rss_kb.
 *
 * It runs with the shape command's glibc malloc thresholds (it calls
 * src/cli/malloc_tuning.c first, as every C peer of the benchmarks does).
 *
 * Build (bench/lib.sh does this):
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc bench/produce.c src/cli/malloc_tuning.c \
 *      -lrdkafka -o BUILD/bench/produce
 * Usage: produce -b BOOTSTRAP -t TOPIC -f FILE [-K] [-p PARTS] [-X key=value]... [-H name=value]...
 */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h" /* shape_cli_tune_malloc: the shape command's malloc settings */

static long failed;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (m->err) {
        if (failed++ == 0) fprintf(stderr, "produce: delivery failed: %s\n", rd_kafka_err2str(m->err));
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void set(rd_kafka_conf_t *conf, const char *k, const char *v)
{
    char es[512];
    if (rd_kafka_conf_set(conf, k, v, es, sizeof es) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "produce: %s\n", es);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    shape_cli_tune_malloc(); /* as the shape command's main() does (bench/lib.sh links it) */
    const char *bootstrap = NULL, *topic = NULL, *file = NULL;
    int keyed = 0, parts = 0, opt;
    long long ts_per_1000 = -1; /* -T: message n's timestamp is T0 + n * T / 1000 ms (event times for windows) */
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_headers_t *headers = NULL; /* -H: copied for every message */
    while ((opt = getopt(argc, argv, "b:t:f:Kp:X:H:T:")) != -1) {
        switch (opt) {
        case 'b': bootstrap = optarg; break;
        case 't': topic = optarg; break;
        case 'f': file = optarg; break;
        case 'K': keyed = 1; break;
        case 'p': parts = atoi(optarg); break;
        case 'T': ts_per_1000 = atoll(optarg); break;
        case 'X': {
            char *eq = strchr(optarg, '=');
            if (!eq) {
                fprintf(stderr, "produce: -X wants key=value\n");
                return 2;
            }
            *eq = '\0';
            set(conf, optarg, eq + 1);
            break;
        }
        case 'H': {
            char *eq = strchr(optarg, '=');
            if (!eq) {
                fprintf(stderr, "produce: -H wants name=value\n");
                return 2;
            }
            if (!headers) headers = rd_kafka_headers_new(4);
            rd_kafka_header_add(headers, optarg, (ssize_t)(eq - optarg), eq + 1, -1);
            break;
        }
        default: fprintf(stderr, "usage: produce -b BOOTSTRAP -t TOPIC -f FILE [-K] [-p PARTS] [-X k=v]... [-H name=value]... [-T MS_PER_1000]\n"); return 2;
        }
    }
    if (!bootstrap || !topic || !file) {
        fprintf(stderr, "usage: produce -b BOOTSTRAP -t TOPIC -f FILE [-K] [-p PARTS] [-X k=v]... [-H name=value]... [-T MS_PER_1000]\n");
        return 2;
    }
    set(conf, "bootstrap.servers", bootstrap);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    char es[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, es, sizeof es);
    if (!rk) {
        fprintf(stderr, "produce: %s\n", es);
        return 2;
    }
    FILE *in = fopen(file, "r");
    if (!in) {
        perror(file);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long n = 0;
    unsigned long long bytes = 0;
    double t0 = now();
    while ((len = getline(&line, &cap, in)) > 0) {
        if (line[len - 1] == '\n') line[--len] = '\0';
        char *key = NULL, *val = line;
        size_t klen = 0, vlen = (size_t)len;
        if (keyed) {
            char *tab = memchr(line, '\t', (size_t)len);
            if (tab) {
                key = line;
                klen = (size_t)(tab - line);
                val = tab + 1;
                vlen = (size_t)len - klen - 1;
            }
        }
        int32_t part = parts > 0 ? (int32_t)(n % parts) : RD_KAFKA_PARTITION_UA;
        for (;;) {
            rd_kafka_headers_t *h = headers ? rd_kafka_headers_copy(headers) : NULL;
            int64_t ts = ts_per_1000 >= 0 ? 1767225600000LL + (int64_t)n * ts_per_1000 / 1000 : 0; /* 0: now */
            rd_kafka_resp_err_t e = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(part), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                RD_KAFKA_V_KEY(key, klen), RD_KAFKA_V_VALUE(val, vlen), RD_KAFKA_V_HEADERS(h),
                RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
            if (h) rd_kafka_headers_destroy(h);
            if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                fprintf(stderr, "produce: %s\n", rd_kafka_err2str(e));
                return 2;
            }
            rd_kafka_poll(rk, 10);
        }
        rd_kafka_poll(rk, 0);
        n++;
        bytes += vlen + klen;
    }
    rd_kafka_flush(rk, 120000);
    double secs = now() - t0;
    int left = rd_kafka_outq_len(rk);
    rd_kafka_destroy(rk);
    if (headers) rd_kafka_headers_destroy(headers);
    fclose(in);
    free(line);
    if (left > 0 || failed > 0) {
        fprintf(stderr, "produce: %d messages not flushed, %ld failed\n", left, failed);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("messages=%ld bytes=%llu seconds=%.6f msgs_s=%.0f rss_kb=%ld\n", n, bytes, secs, (double)n / secs,
           ru.ru_maxrss);
    return 0;
}

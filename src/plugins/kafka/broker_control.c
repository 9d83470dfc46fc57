/* broker_control.c — fault controls of `shape broker`: a line protocol that
 * drives librdkafka's mock cluster while clients use it.
 *
 * Why: what a Kafka client does when a broker goes away, answers with an
 * error, slows down or loses a partition's leadership is what decides
 * whether data is lost; tests (ours, and users' of their own consumers)
 * need to cause those faults on demand, mid-run, from a shell.
 * How: `--control PATH` listens on a Unix-domain stream socket (PATH is
 * removed on stop); `--control -` reads stdin and answers on stdout. Each
 * command is one text line and gets exactly one reply line: "ok" (or
 * "ok: detail") or "error: reason". The main thread poll()s the listener,
 * its clients (up to MAX_CLIENTS), stdin and a signalfd of SIGINT/SIGTERM
 * (blocked in every thread before librdkafka started), so a stop signal
 * ends the loop cleanly whatever the clients do. Commands map one to one
 * onto rdkafka_mock.h of librdkafka 2.0.2:
 *
 *   down B | up B              rd_kafka_mock_broker_set_down / _set_up
 *   rtt B MS                   rd_kafka_mock_broker_set_rtt (0 removes it)
 *   fail API ERROR [N]         rd_kafka_mock_push_request_errors_array (N, default 1)
 *   clear [API]                rd_kafka_mock_clear_request_errors (all APIs without one)
 *   leader TOPIC PART B        rd_kafka_mock_partition_set_leader
 *   topic-error TOPIC ERROR    rd_kafka_mock_topic_set_error (NO_ERROR clears)
 *   ping | help
 *
 * Brokers are numbered 1..N (the mock's ids). APIs go by their Kafka name
 * (Produce, Fetch, ...) or ApiKey number; errors by librdkafka's name
 * (NOT_LEADER_FOR_PARTITION; NOT_LEADER_OR_FOLLOWER is accepted as its
 * newer name) or number. Note the mock's semantics: a broker taken down
 * closes its connections and refuses new ones but stays leader of its
 * partitions (no fail-over); pushed errors are served to the next requests
 * of that API on any broker, in order.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "broker_control.h"
#include "broker_nodelay.h"

#define MAX_CLIENTS 64
#define MAX_LINE 1024
#define MAX_TOKENS 8
#define MAX_FAIL_COUNT 100000

typedef struct api_name {
    const char *name;
    int16_t key;
} api_name;

/* Kafka ApiKeys (the protocol's numbers; librdkafka's mock serves these). */
static const api_name apis[] = {
    {"Produce", 0},           {"Fetch", 1},
    {"ListOffsets", 2},       {"Metadata", 3},
    {"OffsetCommit", 8},      {"OffsetFetch", 9},
    {"FindCoordinator", 10},  {"JoinGroup", 11},
    {"Heartbeat", 12},        {"LeaveGroup", 13},
    {"SyncGroup", 14},        {"DescribeGroups", 15},
    {"ListGroups", 16},       {"SaslHandshake", 17},
    {"ApiVersions", 18},      {"CreateTopics", 19},
    {"DeleteTopics", 20},     {"DeleteRecords", 21},
    {"InitProducerId", 22},   {"OffsetForLeaderEpoch", 23},
    {"AddPartitionsToTxn", 24}, {"AddOffsetsToTxn", 25},
    {"EndTxn", 26},           {"TxnOffsetCommit", 28},
    {"DescribeConfigs", 32},  {"AlterConfigs", 33},
    {"SaslAuthenticate", 36}, {"CreatePartitions", 37},
    {"DeleteGroups", 42},     {"IncrementalAlterConfigs", 44},
    {"OffsetDelete", 47},
};
#define N_APIS (sizeof apis / sizeof apis[0])
#define MAX_API_KEY 67

static int parse_long(const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max) return -1;
    *out = v;
    return 0;
}

static int parse_api(const char *text, int16_t *key)
{
    for (size_t i = 0; i < N_APIS; i++)
        if (strcasecmp(apis[i].name, text) == 0 ||
            (strlen(text) > 7 && strncasecmp(text, apis[i].name, strlen(apis[i].name)) == 0 &&
             strcasecmp(text + strlen(apis[i].name), "Request") == 0)) {
            *key = apis[i].key;
            return 0;
        }
    long v;
    if (parse_long(text, 0, MAX_API_KEY, &v) == 0) {
        *key = (int16_t)v;
        return 0;
    }
    return -1;
}

static int parse_error(const char *text, rd_kafka_resp_err_t *code)
{
    if (strncmp(text, "RD_KAFKA_RESP_ERR_", 18) == 0) text += 18;
    if (strcasecmp(text, "NOT_LEADER_OR_FOLLOWER") == 0) text = "NOT_LEADER_FOR_PARTITION";
    const struct rd_kafka_err_desc *descs;
    size_t ndescs;
    rd_kafka_get_err_descs(&descs, &ndescs);
    for (size_t i = 0; i < ndescs; i++)
        if (descs[i].name && descs[i].code >= 0 && strcasecmp(descs[i].name, text) == 0) {
            *code = descs[i].code;
            return 0;
        }
    long v;
    if (parse_long(text, 0, 32767, &v) == 0) {
        *code = (rd_kafka_resp_err_t)v;
        return 0;
    }
    return -1;
}

static int parse_broker(const char *text, int brokers, int32_t *id)
{
    long v;
    if (parse_long(text, 1, brokers, &v) != 0) return -1;
    *id = (int32_t)v;
    return 0;
}

static int reply_to(char *reply, size_t size, int ok, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int reply_to(char *reply, size_t size, int ok, const char *fmt, ...)
{
    size_t n = (size_t)snprintf(reply, size, "%s", ok ? "ok" : "error: ");
    if (fmt && n < size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(reply + n, size - n, fmt, ap);
        va_end(ap);
    }
    return ok ? 0 : -1;
}

/* The mock's own answer: NO_ERROR, or an error worth showing. */
static int mock_result(char *reply, size_t size, rd_kafka_resp_err_t e)
{
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) return reply_to(reply, size, 1, NULL);
    return reply_to(reply, size, 0, "the mock cluster refused: %s (%s)", rd_kafka_err2name(e), rd_kafka_err2str(e));
}

#define USAGE                                                                                                     \
    "commands: down B | up B | rtt B MS | fail API ERROR [N] | clear [API] | leader TOPIC PARTITION B | "     \
    "topic-error TOPIC ERROR | ping | help"

int shape_kafka_control_exec(rd_kafka_mock_cluster_t *cluster, int brokers, const char *line, char *reply,
                             size_t reply_size)
{
    char buf[MAX_LINE + 1];
    if (strlen(line) > MAX_LINE) return reply_to(reply, reply_size, 0, "line longer than %d bytes", MAX_LINE);
    snprintf(buf, sizeof buf, "%s", line);
    char *tok[MAX_TOKENS + 1];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == MAX_TOKENS) return reply_to(reply, reply_size, 0, "too many words; " USAGE);
        tok[n++] = t;
    }
    if (n == 0) return reply_to(reply, reply_size, 0, "empty command; " USAGE);
    for (const char *p = line; *p; p++)
        if (!isprint((unsigned char)*p) && !isspace((unsigned char)*p))
            return reply_to(reply, reply_size, 0, "the command has non-printable bytes");
    const char *cmd = tok[0];
    int32_t id;

    if (strcmp(cmd, "ping") == 0 && n == 1) return reply_to(reply, reply_size, 1, NULL);
    if (strcmp(cmd, "help") == 0 && n == 1) return reply_to(reply, reply_size, 1, ": %s", USAGE);
    if ((strcmp(cmd, "down") == 0 || strcmp(cmd, "up") == 0) && n == 2) {
        if (parse_broker(tok[1], brokers, &id) != 0)
            return reply_to(reply, reply_size, 0, "%s wants a broker id from 1 to %d, got '%.40s'", cmd, brokers,
                            tok[1]);
        rd_kafka_resp_err_t e = cmd[0] == 'd' ? rd_kafka_mock_broker_set_down(cluster, id)
                                              : rd_kafka_mock_broker_set_up(cluster, id);
        /* down replaced the broker's listener with a new one (broker_nodelay.c). */
        (void)shape_kafka_broker_nodelay(rd_kafka_mock_cluster_bootstraps(cluster));
        return mock_result(reply, reply_size, e);
    }
    if (strcmp(cmd, "rtt") == 0 && n == 3) {
        long ms;
        if (parse_broker(tok[1], brokers, &id) != 0)
            return reply_to(reply, reply_size, 0, "rtt wants a broker id from 1 to %d, got '%.40s'", brokers, tok[1]);
        if (parse_long(tok[2], 0, 600000, &ms) != 0)
            return reply_to(reply, reply_size, 0, "rtt wants milliseconds from 0 to 600000, got '%.40s'", tok[2]);
        return mock_result(reply, reply_size, rd_kafka_mock_broker_set_rtt(cluster, id, (int)ms));
    }
    if (strcmp(cmd, "fail") == 0 && (n == 3 || n == 4)) {
        int16_t key;
        rd_kafka_resp_err_t code;
        long count = 1;
        if (parse_api(tok[1], &key) != 0)
            return reply_to(reply, reply_size, 0, "unknown Kafka API '%.60s' (Produce, Fetch, ListOffsets, Metadata, "
                            "OffsetCommit, OffsetFetch, FindCoordinator, InitProducerId, ApiVersions, ... or a number)",
                            tok[1]);
        if (parse_error(tok[2], &code) != 0)
            return reply_to(reply, reply_size, 0, "unknown Kafka error '%.60s' (a name such as REQUEST_TIMED_OUT, "
                            "or a number)", tok[2]);
        if (n == 4 && parse_long(tok[3], 1, MAX_FAIL_COUNT, &count) != 0)
            return reply_to(reply, reply_size, 0, "fail wants a count from 1 to %d, got '%.40s'", MAX_FAIL_COUNT,
                            tok[3]);
        rd_kafka_resp_err_t *codes = malloc((size_t)count * sizeof *codes);
        if (!codes) return reply_to(reply, reply_size, 0, "out of memory");
        for (long i = 0; i < count; i++) codes[i] = code;
        rd_kafka_mock_push_request_errors_array(cluster, key, (size_t)count, codes);
        free(codes);
        return reply_to(reply, reply_size, 1, NULL);
    }
    if (strcmp(cmd, "clear") == 0 && (n == 1 || n == 2)) {
        int16_t key;
        if (n == 2) {
            if (parse_api(tok[1], &key) != 0)
                return reply_to(reply, reply_size, 0, "unknown Kafka API '%.60s'", tok[1]);
            rd_kafka_mock_clear_request_errors(cluster, key);
        } else {
            for (int16_t k = 0; k <= MAX_API_KEY; k++) rd_kafka_mock_clear_request_errors(cluster, k);
        }
        return reply_to(reply, reply_size, 1, NULL);
    }
    if (strcmp(cmd, "leader") == 0 && n == 4) {
        long part;
        if (parse_long(tok[2], 0, 1000000, &part) != 0)
            return reply_to(reply, reply_size, 0, "leader wants a partition number, got '%.40s'", tok[2]);
        if (parse_broker(tok[3], brokers, &id) != 0)
            return reply_to(reply, reply_size, 0, "leader wants a broker id from 1 to %d, got '%.40s'", brokers,
                            tok[3]);
        return mock_result(reply, reply_size, rd_kafka_mock_partition_set_leader(cluster, tok[1], (int32_t)part, id));
    }
    if (strcmp(cmd, "topic-error") == 0 && n == 3) {
        rd_kafka_resp_err_t code;
        if (parse_error(tok[2], &code) != 0)
            return reply_to(reply, reply_size, 0, "unknown Kafka error '%.60s'", tok[2]);
        rd_kafka_mock_topic_set_error(cluster, tok[1], code);
        return reply_to(reply, reply_size, 1, NULL);
    }
    return reply_to(reply, reply_size, 0, "unknown command or wrong number of words: '%.60s'; " USAGE, cmd);
}

/* One connection (or stdin): bytes read so far of the current line. */
typedef struct client {
    int fd;           /* -1: free slot */
    int out_fd;       /* where replies go (the socket itself, or stdout) */
    int overflow;     /* the current line passed MAX_LINE: answer once, drop the rest */
    size_t len;
    char buf[MAX_LINE + 1];
} client;

static void send_reply(const client *c, const char *reply)
{
    char line[MAX_LINE + 600];
    int n = snprintf(line, sizeof line, "%s\n", reply);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    size_t off = 0;
    while (off < len) {
        ssize_t w = c->out_fd == STDOUT_FILENO ? write(c->out_fd, line + off, len - off)
                                               : send(c->out_fd, line + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return; /* the peer went away: its next read ends it */
        off += (size_t)w;
    }
}

static void run_line(rd_kafka_mock_cluster_t *cluster, int brokers, const client *c, const char *line)
{
    char reply[MAX_LINE + 512];
    shape_kafka_control_exec(cluster, brokers, line, reply, sizeof reply);
    char shown[201];
    size_t n = 0;
    for (const char *p = line; *p && n < sizeof shown - 1; p++) /* the log stays one printable line */
        shown[n++] = isprint((unsigned char)*p) ? *p : '?';
    shown[n] = '\0';
    fprintf(stderr, "shape broker: control: %s -> %s\n", shown, reply);
    send_reply(c, reply);
}

/* Read what is there; run every complete line. Returns -1 at end of input. */
static int serve_client(rd_kafka_mock_cluster_t *cluster, int brokers, client *c)
{
    char chunk[512];
    ssize_t got = read(c->fd, chunk, sizeof chunk);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    if (got <= 0) {
        if (c->len > 0 && !c->overflow) { /* a last line without its newline */
            c->buf[c->len] = '\0';
            run_line(cluster, brokers, c, c->buf);
        }
        return -1;
    }
    for (ssize_t i = 0; i < got; i++) {
        char ch = chunk[i];
        if (ch == '\n') {
            if (c->overflow) {
                char reply[80];
                snprintf(reply, sizeof reply, "error: line longer than %d bytes", MAX_LINE);
                send_reply(c, reply);
            } else {
                c->buf[c->len] = '\0';
                run_line(cluster, brokers, c, c->buf);
            }
            c->len = 0;
            c->overflow = 0;
        } else if (c->len < MAX_LINE) {
            c->buf[c->len++] = ch == '\0' ? '\x01' : ch; /* a NUL must not cut the line short */
        } else {
            c->overflow = 1;
        }
    }
    return 0;
}

static int listen_on(const char *path, int *out, shape_err *err)
{
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr.sun_path)
        return shape_err_set(err, SHAPE_EINVAL, "--control path is longer than %zu bytes: %.80s",
                             sizeof addr.sun_path - 1, path);
    memcpy(addr.sun_path, path, strlen(path) + 1);
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return shape_err_set(err, SHAPE_EINVAL, "--control %s exists and is not a socket: refusing to replace it",
                                 path);
        unlink(path); /* a socket left by a broker that was killed */
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return shape_err_set(err, SHAPE_EIO, "cannot create the control socket: %s", strerror(errno));
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 8) != 0) {
        int e = errno;
        close(fd);
        return shape_err_set(err, SHAPE_EIO, "cannot listen on control socket %s: %s", path, strerror(e));
    }
    *out = fd;
    return SHAPE_OK;
}

int shape_kafka_control_serve(rd_kafka_mock_cluster_t *cluster, int brokers, const char *path,
                              const sigset_t *stop_signals, int *signo, shape_err *err)
{
    int use_stdin = strcmp(path, "-") == 0;
    int sfd = signalfd(-1, stop_signals, SFD_CLOEXEC);
    if (sfd < 0) return shape_err_set(err, SHAPE_EIO, "cannot watch for stop signals: %s", strerror(errno));
    int lfd = -1;
    if (!use_stdin) {
        int rc = listen_on(path, &lfd, err);
        if (rc != SHAPE_OK) {
            close(sfd);
            return rc;
        }
    }
    client clients[MAX_CLIENTS + 1]; /* slot MAX_CLIENTS is stdin */
    for (int i = 0; i <= MAX_CLIENTS; i++) clients[i].fd = -1;
    if (use_stdin) {
        clients[MAX_CLIENTS] = (client){.fd = STDIN_FILENO, .out_fd = STDOUT_FILENO};
        signal(SIGPIPE, SIG_IGN); /* a reader of the replies that goes away must not kill the broker */
    }
    fprintf(stderr, "shape broker: control commands on %s\n", use_stdin ? "stdin" : path);

    *signo = 0;
    while (!*signo) {
        struct pollfd pfd[MAX_CLIENTS + 3];
        int owner[MAX_CLIENTS + 3];
        nfds_t n = 0;
        pfd[n] = (struct pollfd){.fd = sfd, .events = POLLIN};
        owner[n++] = -1;
        if (lfd >= 0) {
            pfd[n] = (struct pollfd){.fd = lfd, .events = POLLIN};
            owner[n++] = -2;
        }
        for (int i = 0; i <= MAX_CLIENTS; i++)
            if (clients[i].fd >= 0) {
                pfd[n] = (struct pollfd){.fd = clients[i].fd, .events = POLLIN};
                owner[n++] = i;
            }
        if (poll(pfd, n, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (nfds_t k = 0; k < n; k++) {
            if (!pfd[k].revents) continue;
            if (owner[k] == -1) {
                struct signalfd_siginfo si;
                if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) *signo = (int)si.ssi_signo;
            } else if (owner[k] == -2) {
                int cfd = accept(lfd, NULL, NULL);
                if (cfd < 0) continue;
                int slot = -1;
                for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
                    if (clients[i].fd < 0) slot = i;
                if (slot < 0) {
                    const char *busy = "error: too many control connections\n";
                    (void)!send(cfd, busy, strlen(busy), MSG_NOSIGNAL);
                    close(cfd);
                    continue;
                }
                clients[slot] = (client){.fd = cfd, .out_fd = cfd};
            } else {
                client *c = &clients[owner[k]];
                if (serve_client(cluster, brokers, c) != 0) {
                    if (c->fd != STDIN_FILENO) close(c->fd);
                    c->fd = -1; /* stdin at its end: the broker runs on until a signal */
                }
            }
        }
    }
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (clients[i].fd >= 0) close(clients[i].fd);
    if (lfd >= 0) {
        close(lfd);
        unlink(path);
    }
    close(sfd);
    if (!*signo) return shape_err_set(err, SHAPE_EIO, "control channel: poll failed: %s", strerror(errno));
    return SHAPE_OK;
}

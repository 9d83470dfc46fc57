/* broker_nodelay.c — `shape broker` gives every client connection
 * TCP_NODELAY, as a Kafka broker's connections have.
 *
 * Why: librdkafka's mock cluster accepts client connections without
 * TCP_NODELAY (Apache Kafka's socket server sets it on every connection).
 * With Nagle's algorithm on, a response written in pieces while an earlier
 * one is unacknowledged waits for the client's ACK, which an idle client
 * delays by up to 40 ms: measured as ~45 ms stalls at the end of most
 * `shape emit` sends and as 45–50 ms p99 lateness of paced sends, which
 * every client of the embedded broker (kcat, Python, bench peers) pays alike.
 * librdkafka 2.0.2's mock has no hook on its sockets (rdkafka_mock.h; the
 * handle's socket_cb makes client sockets only), and an accept() defined
 * here would not be the one librdkafka binds to (the C library comes first
 * in the lookup order of a dlopen'd module's dependencies).
 * How: on Linux a socket accepted from a listener inherits the listener's
 * TCP_NODELAY. So the listeners get it: walk this process's descriptors
 * (/proc/self/fd), keep the TCP sockets bound to a port of the mock's
 * bootstrap list that are not connected (listening, or bound and waiting to
 * listen), and set the option on them. The broker does this right after
 * creating the cluster, before it tells anyone the ports, and after every
 * `down`/`up` control command (the mock closes a downed broker's listener
 * and binds a new one on the same port, which starts listening on `up`).
 */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker_nodelay.h"

#define MAX_PORTS 64

/* The ports of "host:port,host:port,..." (at most cap of them). */
static size_t bootstrap_ports(const char *bootstraps, unsigned *ports, size_t cap)
{
    size_t n = 0;
    for (const char *p = bootstraps; p && *p && n < cap;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *colon = NULL;
        for (size_t i = 0; i < len; i++)
            if (p[i] == ':') colon = p + i;
        if (colon) {
            char *stop;
            unsigned long port = strtoul(colon + 1, &stop, 10);
            if (stop == p + len && port > 0 && port < 65536) ports[n++] = (unsigned)port;
        }
        p = end ? end + 1 : NULL;
    }
    return n;
}

/* The local TCP port of socket fd if it is an unconnected IPv4/IPv6 stream
 * socket (a listener, or one bound to listen later), else 0. */
static unsigned unconnected_tcp_port(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) return 0;
    struct sockaddr_storage local;
    len = sizeof local;
    if (getsockname(fd, (struct sockaddr *)&local, &len) != 0) return 0;
    unsigned port;
    if (local.ss_family == AF_INET)
        port = ntohs(((const struct sockaddr_in *)&local)->sin_port);
    else if (local.ss_family == AF_INET6)
        port = ntohs(((const struct sockaddr_in6 *)&local)->sin6_port);
    else
        return 0;
    struct sockaddr_storage peer;
    len = sizeof peer;
    if (getpeername(fd, (struct sockaddr *)&peer, &len) == 0 || errno != ENOTCONN) return 0;
    return port;
}

int shape_kafka_broker_nodelay(const char *bootstraps)
{
    unsigned ports[MAX_PORTS];
    size_t n_ports = bootstrap_ports(bootstraps, ports, MAX_PORTS);
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return 0;
    int saved = errno, set = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        char *stop;
        long fd = strtol(e->d_name, &stop, 10);
        if (stop == e->d_name || *stop || fd < 0 || fd == dirfd(dir)) continue;
        unsigned port = unconnected_tcp_port((int)fd);
        for (size_t i = 0; port && i < n_ports; i++) {
            int on = 1;
            if (ports[i] == port) {
                if (setsockopt((int)fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) == 0) set++;
                break;
            }
        }
    }
    closedir(dir);
    errno = saved;
    return set;
}

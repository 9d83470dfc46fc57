/* tcp_nodelay.c — every TCP connection this process accepts gets
 * TCP_NODELAY, as a Kafka broker's connections have.
 *
 * Why: `shape broker` serves the Kafka protocol through librdkafka's mock
 * cluster, which accepts client connections without TCP_NODELAY (Apache
 * Kafka's socket server sets it on every connection). With Nagle's algorithm
 * on, a response written in pieces while an earlier one is unacknowledged
 * waits for the client's ACK, which an idle client delays by up to 40 ms:
 * measured as ~45 ms stalls at the end of most `shape emit` sends and as
 * 45–50 ms p99 lateness of paced sends, which every client of the embedded
 * broker (kcat, Python, bench peers) pays alike.
 *
 * How: this executable defines accept(). Its symbol is exported (CMake links
 * the command with --export-dynamic-symbol=accept), so the dynamic linker
 * binds every library's accept() — librdkafka's mock cluster, loaded with the
 * kafka plugin — to this one, which calls the C library's (dlsym RTLD_NEXT)
 * and sets TCP_NODELAY on an accepted TCP socket. Other sockets (Unix
 * domain: the broker's control socket) are left as they are; a failure to
 * set the option leaves the connection as accepted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <sys/socket.h>

typedef int (*accept_fn)(int, struct sockaddr *, socklen_t *);

int accept(int fd, struct sockaddr *addr, socklen_t *addrlen)
{
    static accept_fn found; /* any thread may look it up first: the same value */
    accept_fn next = __atomic_load_n(&found, __ATOMIC_ACQUIRE);
    if (!next) {
        next = (accept_fn)dlsym(RTLD_NEXT, "accept");
        __atomic_store_n(&found, next, __ATOMIC_RELEASE);
    }
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    int s = next(fd, addr, addrlen);
    if (s >= 0) {
        int saved = errno;
        struct sockaddr_storage local;
        socklen_t len = sizeof local;
        if (getsockname(s, (struct sockaddr *)&local, &len) == 0 &&
            (local.ss_family == AF_INET || local.ss_family == AF_INET6)) {
            int on = 1;
            (void)setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        }
        errno = saved;
    }
    return s;
}

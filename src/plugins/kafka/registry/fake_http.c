/* fake_http.c — the fake schema registry over real HTTP/1.1.
 *
 * Why: the libcurl client, the emulator tests and `shape schema-registry`
 * need the fake registry behind a real socket: keep-alive connections,
 * Content-Length bodies, Connection: close, and no crash whatever bytes
 * arrive.
 * How: one accept thread polls the listening socket and a wake pipe; each
 * accepted connection gets its own thread (a kept-alive libcurl connection
 * must not block a second client), capped at MAX_CONNECTIONS. A connection
 * thread reads into a buffer until it holds a whole head (CRLF CRLF), checks
 * the request line and headers strictly (anything odd → 400 and close),
 * reads the Content-Length body, asks shape_kafka_fake_registry_handle for the
 * answer and writes it with Content-Type and Content-Length. Bytes after
 * one request start the next (pipelining works). stop() writes one byte to
 * the wake pipe, which every poll() also watches, so all threads return
 * promptly and are joined; idle connections also end after IDLE_TIMEOUT_MS.
 */
#define _DEFAULT_SOURCE /* explicit_bzero; accept4, pipe2, memmem come with the build's _GNU_SOURCE */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "registry/fake.h"
#include "shape/json.h" /* shape_json_buf */
#include "registry/fake_http_parse.h"

#define MEDIA_TYPE "application/vnd.schemaregistry.v1+json"
#define MAX_CONNECTIONS 64
#define MAX_HEAD_BYTES (64 * 1024)
#define MAX_BODY_BYTES (16 * 1024 * 1024)
#define IDLE_TIMEOUT_MS 60000
#define SEND_TIMEOUT_S 5

typedef struct connection {
    struct shape_kafka_fake_registry_server *server;
    int fd;
    int finished; /* set by the thread (under the server lock) as it ends */
    pthread_t thread;
    struct connection *next;
} connection;

struct shape_kafka_fake_registry_server {
    shape_kafka_fake_registry *registry;
    int listen_fd;
    int wake[2]; /* a byte in wake[1] ends every thread's poll() */
    pthread_t accept_thread;
    pthread_mutex_t lock;
    connection *connections;
    size_t live;
};

/* ---- reading and writing ----------------------------------------------------- */

/* What a connection has received and not yet served (NUL-terminated). */
typedef shape_json_buf in_buffer;

/* Wait for bytes (or stop, or the idle timeout) and append them. 1 = got
 * some; 0 = the peer closed, stop was asked, time ran out or an error. */
static int read_more(const connection *c, in_buffer *b)
{
    if (shape_json_buf_reserve(b, 4096) != 0) return 0;
    struct pollfd fds[2] = {{c->fd, POLLIN, 0}, {c->server->wake[0], POLLIN, 0}};
    for (;;) {
        int n = poll(fds, 2, IDLE_TIMEOUT_MS);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || (fds[1].revents & POLLIN)) return 0;
        ssize_t got = recv(c->fd, b->data + b->len, b->cap - b->len - 1, 0);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got <= 0) return 0;
        b->len += (size_t)got;
        b->data[b->len] = '\0';
        return 1;
    }
}

static int send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t sent = send(fd, data, len, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) return -1;
        data += sent;
        len -= (size_t)sent;
    }
    return 0;
}

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

static int send_response(int fd, int status, const char *body, int close_after)
{
    char head[256];
    size_t body_len = strlen(body);
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: " MEDIA_TYPE "\r\nContent-Length: %zu\r\n%s\r\n", status,
                     reason_phrase(status), body_len, close_after ? "Connection: close\r\n" : "");
    if (send_all(fd, head, (size_t)n) != 0) return -1;
    return send_all(fd, body, body_len);
}

static void send_error(int fd, int status, const char *message)
{
    char body[160];
    snprintf(body, sizeof body, "{\"error_code\":%d,\"message\":\"%s\"}", status, message);
    send_response(fd, status, body, 1);
}

/* ---- request heads ----------------------------------------------------------- */

typedef shape_kafka_fake_http_head request_head;

void shape_kafka_fake_http_head_reset(request_head *h)
{
    free(h->target);
    if (h->authorization) explicit_bzero(h->authorization, strlen(h->authorization));
    free(h->authorization);
    memset(h, 0, sizeof *h);
}

size_t shape_kafka_fake_http_head_end(const char *data, size_t len)
{
    const char *end = len ? memmem(data, len, "\r\n\r\n", 4) : NULL;
    return end ? (size_t)(end - data) + 4 : 0;
}

static int is_token_char(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int parse_request_line(const char *line, size_t len, request_head *h)
{
    const char *sp1 = memchr(line, ' ', len);
    if (!sp1 || sp1 == line || (size_t)(sp1 - line) >= sizeof h->method) return -1;
    for (const char *p = line; p < sp1; p++)
        if (!isupper((unsigned char)*p)) return -1;
    const char *target = sp1 + 1;
    const char *sp2 = memchr(target, ' ', len - (size_t)(target - line));
    if (!sp2 || sp2 == target || target[0] != '/') return -1;
    for (const char *p = target; p < sp2; p++)
        if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 127) return -1;
    size_t version_len = len - (size_t)(sp2 + 1 - line);
    int http11 = version_len == 8 && memcmp(sp2 + 1, "HTTP/1.1", 8) == 0;
    if (!http11 && !(version_len == 8 && memcmp(sp2 + 1, "HTTP/1.0", 8) == 0)) return -1;
    memcpy(h->method, line, (size_t)(sp1 - line));
    h->method[sp1 - line] = '\0';
    h->target = strndup(target, (size_t)(sp2 - target));
    h->close_after = !http11; /* HTTP/1.0 closes unless it asks for keep-alive */
    return h->target ? 0 : -1;
}

static int header_is(const char *name, size_t name_len, const char *wanted)
{
    return strlen(wanted) == name_len && strncasecmp(name, wanted, name_len) == 0;
}

/* Whether a comma-separated header value lists `token` (case-insensitive). */
static int lists_token(const char *value, size_t len, const char *token)
{
    size_t tl = strlen(token);
    for (size_t i = 0; i < len;) {
        while (i < len && (value[i] == ' ' || value[i] == ',' || value[i] == '\t')) i++;
        size_t start = i;
        while (i < len && value[i] != ',' && value[i] != ' ' && value[i] != '\t') i++;
        if (i - start == tl && strncasecmp(value + start, token, tl) == 0) return 1;
    }
    return 0;
}

static int parse_content_length(const char *value, size_t len, request_head *h, int *seen)
{
    if (len == 0 || len > 12) return -1;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)value[i])) return -1;
        n = n * 10 + (size_t)(value[i] - '0');
    }
    if (*seen && n != h->content_length) return -1;
    *seen = 1;
    h->content_length = n;
    if (n > MAX_BODY_BYTES) h->too_large = 1;
    return 0;
}

static int parse_header(const char *line, size_t len, request_head *h, int *seen_length)
{
    const char *colon = memchr(line, ':', len);
    if (!colon || colon == line) return -1;
    for (const char *p = line; p < colon; p++)
        if (!is_token_char((unsigned char)*p)) return -1;
    size_t name_len = (size_t)(colon - line);
    const char *value = colon + 1;
    size_t value_len = len - name_len - 1;
    for (size_t i = 0; i < value_len; i++)
        if (((unsigned char)value[i] < ' ' && value[i] != '\t') || value[i] == 127) return -1;
    while (value_len && (*value == ' ' || *value == '\t')) value++, value_len--;
    while (value_len && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t')) value_len--;
    if (header_is(line, name_len, "content-length"))
        return parse_content_length(value, value_len, h, seen_length);
    if (header_is(line, name_len, "transfer-encoding")) return -1; /* only Content-Length bodies */
    if (header_is(line, name_len, "connection")) {
        if (lists_token(value, value_len, "close")) h->close_after = 1;
        else if (lists_token(value, value_len, "keep-alive")) h->close_after = 0;
    } else if (header_is(line, name_len, "expect")) {
        if (!lists_token(value, value_len, "100-continue")) return -1;
        h->expect_continue = 1;
    } else if (header_is(line, name_len, "authorization")) {
        if (h->authorization) return -1;
        if (!(h->authorization = strndup(value, value_len))) return -1;
    }
    return 0;
}

int shape_kafka_fake_http_parse_head(const char *data, size_t len, request_head *h)
{
    if (memchr(data, '\0', len)) return -1;
    const char *line = data, *end = data + len - 2; /* the final CRLF */
    const char *eol = strstr(line, "\r\n");
    if (parse_request_line(line, (size_t)(eol - line), h) != 0) return -1;
    int seen_length = 0;
    for (line = eol + 2; line < end; line = eol + 2) {
        eol = strstr(line, "\r\n");
        if (line[0] == ' ' || line[0] == '\t') return -1; /* obsolete line folding */
        if (parse_header(line, (size_t)(eol - line), h, &seen_length) != 0) return -1;
    }
    return 0;
}

/* ---- one connection ------------------------------------------------------------ */

/* Wait until the buffer holds a whole head; its length, or 0 (give up) with
 * *malformed set when the head grew past the limit. */
static size_t read_head(const connection *c, in_buffer *b, int *malformed)
{
    size_t end;
    while ((end = shape_kafka_fake_http_head_end(b->data, b->len)) == 0) {
        if (b->len > MAX_HEAD_BYTES) {
            *malformed = 1;
            return 0;
        }
        if (!read_more(c, b)) return 0;
    }
    return end;
}

/* Serve one request from the buffer; 1 = keep the connection, 0 = close. */
static int serve_one(const connection *c, in_buffer *b)
{
    int malformed = 0;
    size_t head_len = read_head(c, b, &malformed);
    if (head_len == 0) {
        if (malformed) send_error(c->fd, 400, "malformed request");
        return 0;
    }
    request_head h = {0};
    if (shape_kafka_fake_http_parse_head(b->data, head_len, &h) != 0) {
        shape_kafka_fake_http_head_reset(&h);
        send_error(c->fd, 400, "malformed request");
        return 0;
    }
    if (h.too_large) {
        shape_kafka_fake_http_head_reset(&h);
        send_error(c->fd, 413, "request body too large");
        return 0;
    }
    if (h.expect_continue && b->len < head_len + h.content_length &&
        send_all(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25) != 0) {
        shape_kafka_fake_http_head_reset(&h);
        return 0;
    }
    while (b->len < head_len + h.content_length)
        if (!read_more(c, b)) {
            shape_kafka_fake_http_head_reset(&h);
            return 0;
        }
    int status;
    char *resp;
    shape_kafka_fake_registry_handle(c->server->registry, h.method, h.target, h.authorization, b->data + head_len,
                               h.content_length, &status, &resp);
    int keep = resp && send_response(c->fd, status, resp, h.close_after) == 0 && !h.close_after;
    free(resp);
    size_t used = head_len + h.content_length;
    memmove(b->data, b->data + used, b->len - used);
    b->len -= used;
    b->data[b->len] = '\0';
    shape_kafka_fake_http_head_reset(&h);
    return keep;
}

static void *serve_connection(void *arg)
{
    connection *c = arg;
    in_buffer b = {0};
    while (serve_one(c, &b)) {
    }
    free(b.data);
    shutdown(c->fd, SHUT_RDWR);
    close(c->fd);
    pthread_mutex_lock(&c->server->lock);
    c->finished = 1;
    pthread_mutex_unlock(&c->server->lock);
    return NULL;
}

/* ---- accepting --------------------------------------------------------------- */

/* Join and free the connections whose threads have ended (all when `all`,
 * waiting for them). */
static void reap_connections(shape_kafka_fake_registry_server *s, int all)
{
    pthread_mutex_lock(&s->lock);
    connection **link = &s->connections;
    while (*link) {
        connection *c = *link;
        if (!all && !c->finished) {
            link = &c->next;
            continue;
        }
        *link = c->next;
        s->live--;
        pthread_mutex_unlock(&s->lock);
        pthread_join(c->thread, NULL);
        free(c);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

static void start_connection(shape_kafka_fake_registry_server *s, int fd)
{
    struct timeval send_timeout = {SEND_TIMEOUT_S, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
    connection *c = calloc(1, sizeof *c);
    pthread_mutex_lock(&s->lock);
    int room = s->live < MAX_CONNECTIONS;
    pthread_mutex_unlock(&s->lock);
    if (!c || !room) {
        free(c);
        send_error(fd, 503, "too many connections");
        close(fd);
        return;
    }
    c->server = s;
    c->fd = fd;
    pthread_mutex_lock(&s->lock);
    if (pthread_create(&c->thread, NULL, serve_connection, c) != 0) {
        pthread_mutex_unlock(&s->lock);
        free(c);
        close(fd);
        return;
    }
    c->next = s->connections;
    s->connections = c;
    s->live++;
    pthread_mutex_unlock(&s->lock);
}

static void *accept_loop(void *arg)
{
    shape_kafka_fake_registry_server *s = arg;
    struct pollfd fds[2] = {{s->listen_fd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
    for (;;) {
        int n = poll(fds, 2, 1000);
        if (n < 0 && errno != EINTR) break;
        if (fds[1].revents & POLLIN) break;
        reap_connections(s, 0);
        if (n <= 0 || !(fds[0].revents & POLLIN)) continue;
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) poll(NULL, 0, 50); /* let some close */
            continue;
        }
        start_connection(s, fd);
    }
    return NULL;
}

/* ---- listening ------------------------------------------------------------------ */

static int bound_port(int fd)
{
    struct sockaddr_storage addr;
    socklen_t len = sizeof addr;
    if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) return -1;
    if (addr.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&addr)->sin_port);
    if (addr.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
    return -1;
}

/* *fd_out = a listening, non-blocking socket on host:port. */
static int open_listener(const char *host, int port, int *fd_out, shape_err *err)
{
    *fd_out = -1;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *found = NULL;
    int gai = getaddrinfo(host, service, &hints, &found);
    if (gai != 0)
        return shape_err_set(err, SHAPE_EINVAL, "cannot listen on %.100s:%d: %s", host, port, gai_strerror(gai));
    int fd = -1, last_errno = 0;
    for (struct addrinfo *a = found; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 128) != 0) {
            last_errno = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(found);
    if (fd < 0)
        return shape_err_set(err, SHAPE_EIO, "cannot listen on %.100s:%d: %s", host, port,
                             strerror(last_errno ? last_errno : EADDRNOTAVAIL));
    *fd_out = fd;
    return SHAPE_OK;
}

int shape_kafka_fake_registry_server_new(shape_kafka_fake_registry *r, const char *host, int port, shape_kafka_fake_registry_server **out,
                              int *port_out, shape_err *err)
{
    *out = NULL;
    if (!host || !host[0] || port < 0 || port > 65535)
        return shape_err_set(err, SHAPE_EINVAL, "the fake registry wants a host and a port from 0 to 65535");
    shape_kafka_fake_registry_server *s = calloc(1, sizeof *s);
    if (!s) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    s->registry = r;
    s->wake[0] = s->wake[1] = -1;
    pthread_mutex_init(&s->lock, NULL);
    int rc = open_listener(host, port, &s->listen_fd, err);
    if (rc == SHAPE_OK && pipe2(s->wake, O_CLOEXEC) != 0)
        rc = shape_err_set(err, SHAPE_EIO, "cannot create the fake registry's wake pipe: %s", strerror(errno));
    if (rc == SHAPE_OK && pthread_create(&s->accept_thread, NULL, accept_loop, s) != 0)
        rc = shape_err_set(err, SHAPE_EIO, "cannot start the fake registry's thread");
    if (rc != SHAPE_OK) {
        if (s->listen_fd >= 0) close(s->listen_fd);
        if (s->wake[0] >= 0) close(s->wake[0]);
        if (s->wake[1] >= 0) close(s->wake[1]);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return rc;
    }
    if (port_out) *port_out = bound_port(s->listen_fd);
    *out = s;
    return SHAPE_OK;
}

void shape_kafka_fake_registry_server_free(shape_kafka_fake_registry_server *s)
{
    if (!s) return;
    while (write(s->wake[1], "x", 1) < 0 && errno == EINTR) {
    }
    pthread_join(s->accept_thread, NULL);
    close(s->listen_fd);
    reap_connections(s, 1);
    close(s->wake[0]);
    close(s->wake[1]);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

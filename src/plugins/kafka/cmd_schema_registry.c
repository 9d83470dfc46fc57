/* cmd_schema_registry.c — `shape schema-registry`: the fake schema registry
 * (registry/fake.h) served over HTTP until Ctrl-C.
 *
 * Why: registry formats are tried and tested end to end (shape emit →
 * kafka:// → registry) without a JVM: this is a Confluent-compatible
 * registry in memory, with the test knobs (auth, evolve, refusals, injected
 * failures) as flags.
 * How: check every flag first; block SIGINT/SIGTERM before the server's
 * threads start (they inherit the mask); listen, print one line to stderr,
 * write the URL atomically to --url-file (for scripts waiting on it: once it
 * exists, so does the line), then sigwait. On the signal, remove the URL file, stop the server (joins its
 * threads) and return 0.
 */
#define _DEFAULT_SOURCE /* explicit_bzero */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka_plugin.h"
#include "registry/fake.h"

#define DEFAULT_LISTEN "127.0.0.1:8081"

typedef struct listen_address {
    char host[256];
    int port;
} listen_address;

/* HOST:PORT or [IPV6]:PORT; port 0 = any. */
static int parse_listen(const char *text, listen_address *out, shape_err *err)
{
    const char *colon = strrchr(text, ':');
    const char *host = text;
    size_t host_len = colon ? (size_t)(colon - text) : 0;
    if (host_len >= 2 && host[0] == '[' && host[host_len - 1] == ']') host++, host_len -= 2;
    int64_t port;
    if (!colon || host_len == 0 || host_len >= sizeof out->host || memchr(host, '[', host_len) ||
        shape_parse_int64(colon + 1, 0, 65535, &port) != SHAPE_OK)
        return shape_err_set(err, SHAPE_EINVAL, "--listen wants HOST:PORT (port 0 = any free port), got '%.80s'",
                             text);
    memcpy(out->host, host, host_len);
    out->host[host_len] = '\0';
    out->port = (int)port;
    return SHAPE_OK;
}

/* --fail-next N:STATUS */
static int parse_fail_next(const char *text, int *count, int *status, shape_err *err)
{
    const char *colon = strchr(text, ':');
    char n[24];
    int64_t c, s;
    if (!colon || (size_t)(colon - text) >= sizeof n)
        return shape_err_set(err, SHAPE_EINVAL, "--fail-next wants N:STATUS (e.g. 2:503), got '%.80s'", text);
    memcpy(n, text, (size_t)(colon - text));
    n[colon - text] = '\0';
    if (shape_parse_int64(n, 1, 1000000, &c) != SHAPE_OK || shape_parse_int64(colon + 1, 100, 599, &s) != SHAPE_OK)
        return shape_err_set(err, SHAPE_EINVAL,
                             "--fail-next wants N:STATUS with N from 1 and an HTTP status from 100 to 599, got "
                             "'%.80s'",
                             text);
    *count = (int)c;
    *status = (int)s;
    return SHAPE_OK;
}

/* Refusals, evolve, failures and auth onto the registry. */
static int configure(const shape_args *args, shape_kafka_fake_registry *r, shape_err *err)
{
    for (size_t i = 0; i < shape_args_count(args, "refuse"); i++) {
        const char *spec = shape_args_nth(args, "refuse", i);
        const char *eq = strchr(spec, '=');
        if (!eq || eq == spec || !eq[1])
            return shape_err_set(err, SHAPE_EINVAL, "--refuse wants SUBJECT=MESSAGE, got '%.80s'", spec);
        char *subject = strndup(spec, (size_t)(eq - spec));
        int rc = subject ? shape_kafka_fake_registry_refuse(r, subject, eq + 1) : SHAPE_ENOMEM;
        free(subject);
        if (rc != SHAPE_OK) return shape_err_set(err, rc, "out of memory");
    }
    shape_kafka_fake_registry_set_evolve(r, shape_args_flag(args, "evolve") > 0);
    const char *fail = shape_args_value(args, "fail-next");
    if (fail) {
        int count = 0, status = 0;
        SHAPE_RETURN_NOT_OK(parse_fail_next(fail, &count, &status, err));
        shape_kafka_fake_registry_fail_next(r, count, status);
    }
    const char *user = shape_args_value(args, "user");
    const char *password_env = shape_args_value(args, "password-env");
    if (!user != !password_env)
        return shape_err_set(err, SHAPE_EINVAL, "--user and --password-env go together");
    if (user) {
        const char *password = getenv(password_env);
        if (!user[0] || !password || !password[0])
            return shape_err_set(err, SHAPE_EINVAL,
                                 "--password-env %.80s: the environment variable is unset or empty (and --user "
                                 "must not be empty)",
                                 password_env);
        shape_kafka_fake_registry_set_auth(r, user, password);
    }
    return SHAPE_OK;
}

/* Write text to path through a temporary file and a rename: a reader sees
 * either no file or the whole line. */
static int write_atomically(const char *path, const char *text, shape_err *err)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = SHAPE_OK;
    if (fd < 0) {
        rc = shape_err_set(err, SHAPE_EIO, "cannot write the URL file %s: %s", path, strerror(errno));
    } else {
        size_t n = strlen(text);
        int ok = write(fd, text, n) == (ssize_t)n && fsync(fd) == 0;
        int saved = errno;
        ok = close(fd) == 0 && ok;
        if (!ok || rename(tmp, path) != 0) {
            rc = shape_err_set(err, SHAPE_EIO, "cannot write the URL file %s: %s", path,
                               strerror(ok ? errno : (saved ? saved : EIO)));
            unlink(tmp);
        }
    }
    free(tmp);
    return rc;
}

/* Serve until SIGINT or SIGTERM. */
static int serve_until_signal(shape_kafka_fake_registry *r, const listen_address *at, const char *url_file, shape_err *err)
{
    sigset_t stop_signals, old_mask;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);
    shape_kafka_fake_registry_server *server = NULL;
    int port = 0;
    int rc = shape_kafka_fake_registry_server_new(r, at->host, at->port, &server, &port, err);
    if (rc == SHAPE_OK) {
        char url[300];
        int ipv6 = strchr(at->host, ':') != NULL;
        snprintf(url, sizeof url, "http://%s%s%s:%d", ipv6 ? "[" : "", at->host, ipv6 ? "]" : "", port);
        char line[310];
        snprintf(line, sizeof line, "%s\n", url);
        /* the line first, then the URL file: whoever waits for the file
         * finds the line already written (seen racing under valgrind) */
        fprintf(stderr, "schema registry listening on %s\n", url);
        fflush(stderr);
        if (url_file) rc = write_atomically(url_file, line, err);
        if (rc == SHAPE_OK) {
            int sig = 0;
            while (sigwait(&stop_signals, &sig) != 0) {
            }
            if (url_file) unlink(url_file);
        }
        shape_kafka_fake_registry_server_free(server);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    return rc;
}

static int run_schema_registry(const shape_args *args, shape_err *err)
{
    listen_address at;
    const char *listen = shape_args_value(args, "listen");
    SHAPE_RETURN_NOT_OK(parse_listen(listen ? listen : DEFAULT_LISTEN, &at, err));
    shape_kafka_fake_registry *r = NULL;
    SHAPE_RETURN_NOT_OK(shape_kafka_fake_registry_new(&r, err));
    int rc = configure(args, r, err);
    if (rc == SHAPE_OK) rc = serve_until_signal(r, &at, shape_args_value(args, "url-file"), err);
    shape_kafka_fake_registry_free(r);
    return rc;
}

static const shape_arg_spec schema_registry_args[] = {
    {"listen", 0, SHAPE_ARG_VALUE, "HOST:PORT", DEFAULT_LISTEN,
     "Address to listen on; port 0 picks any free port ([::1]:PORT for IPv6)."},
    {"url-file", 0, SHAPE_ARG_VALUE, "FILE", NULL,
     "Also write the registry URL (http://HOST:PORT) to FILE once listening (atomically; removed on stop)."},
    {"user", 0, SHAPE_ARG_VALUE, "NAME", NULL,
     "Require HTTP basic auth with this user name (with --password-env); others get 401."},
    {"password-env", 0, SHAPE_ARG_VALUE, "VAR", NULL,
     "Name of the environment variable holding the basic-auth password (with --user)."},
    {"evolve", 0, SHAPE_ARG_FLAG, NULL, NULL,
     "Accept a changed schema under a known subject as a new version (default: 409 incompatible)."},
    {"refuse", 0, SHAPE_ARG_LIST, "SUBJECT=MESSAGE", NULL,
     "Refuse every registration under SUBJECT with 422 and MESSAGE."},
    {"fail-next", 0, SHAPE_ARG_VALUE, "N:STATUS", NULL,
     "Fault injection: answer the first N requests with HTTP STATUS (e.g. 2:503, 1:429)."},
    {0},
};

const shape_command shape_kafka_cmd_schema_registry = {
    .name = "schema-registry",
    .summary = "A Confluent-compatible schema registry for tests (in memory).",
    .max_positional = 0,
    .args = schema_registry_args,
    .epilog = "Serves the part of the Confluent Schema Registry REST API that shape uses: POST\n"
              "/subjects/SUBJECT/versions, GET /schemas/ids/ID, GET /subjects and GET\n"
              "/subjects/SUBJECT/versions. Ids count from 100; the same schema text keeps its id.\n"
              "Prints 'schema registry listening on http://HOST:PORT' to stderr; stop with Ctrl-C\n"
              "or SIGTERM (exit 0). Everything lives in memory and is gone on stop.",
    .run = run_schema_registry,
};

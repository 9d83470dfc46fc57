/* hello.c — shape-hello, the example plugin: a `hello` command and an
 * emitter type for hello:// URIs.
 *
 * Why: a plugin author should be able to copy one file and see every part of
 * the contract used the way the core expects it: the single exported entry
 * point, static tables the core may keep pointers into, a command whose
 * options are declared (so `shape hello --help` and option errors come from
 * the core, like every other command), values checked with shape_args_int,
 * and failures returned as shape_err codes with a sentence that never echoes
 * a URI back (a URI may carry credentials).
 * How: shape_plugin_entry() returns a pointer to one static shape_plugin.
 * `shape hello [--name NAME] [--count N] [--to hello://ROOM]` prints a
 * greeting N times; --to is checked by the same function the hello:// emitter
 * registers as its check_uri, so the URI rules live in one place. The
 * emitter also sends: `shape emit retail --sink hello://lobby` greets each
 * event (open/send/flush/close, the emitter contract of <shape/plugin.h>).
 *
 * Build it against an installed shape (see docs/plugins/authoring.md):
 *   cc -std=c11 -Wall -Wextra -Werror -shared -fPIC -o shape-hello.so hello.c \
 *      $(pkg-config --cflags --libs shape)
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shape/options.h>
#include <shape/plugin.h>

#define HELLO_MAX_COUNT 100
#define HELLO_ROOM_MAX 64

/* True when uri starts with "hello://", the scheme in any case (schemes
 * are case-insensitive; the registry lower-cases them before matching). */
static int has_hello_scheme(const char *uri)
{
    static const char scheme[] = "hello://";
    for (size_t i = 0; i < sizeof scheme - 1; i++)
        if (tolower((unsigned char)uri[i]) != scheme[i]) return 0; /* stops at uri's NUL */
    return 1;
}

/* hello://ROOM, ROOM = 1 to 64 of [A-Za-z0-9._-]. The registry has already
 * matched the scheme when it asks an emitter; the command asks directly, so
 * the scheme is checked here as well. */
static int hello_check_uri(const char *uri, shape_err *err)
{
    if (!has_hello_scheme(uri))
        return shape_err_set(err, SHAPE_EINVAL, "not a hello:// URI (expected hello://ROOM)");
    const char *room = uri + strlen("hello://");
    size_t len = strlen(room);
    if (len == 0)
        return shape_err_set(err, SHAPE_EINVAL, "hello:// URI has no room (expected hello://ROOM)");
    if (len > HELLO_ROOM_MAX)
        return shape_err_set(err, SHAPE_EINVAL, "hello:// room name is longer than %d characters",
                             HELLO_ROOM_MAX);
    if (strspn(room, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != len)
        return shape_err_set(err, SHAPE_EINVAL,
                             "hello:// room names use only letters, digits, '.', '_' and '-'");
    return SHAPE_OK;
}

static int run_hello(const shape_args *args, shape_err *err)
{
    int64_t count;
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "count", 1, HELLO_MAX_COUNT, 1, &count, err));
    const char *name = shape_args_value(args, "name");
    if (!name) name = "world";
    if (!*name) return shape_err_set(err, SHAPE_EINVAL, "--name must not be empty");
    const char *to = shape_args_value(args, "to");
    const char *room = NULL;
    if (to) {
        SHAPE_RETURN_NOT_OK(hello_check_uri(to, err));
        room = to + strlen("hello://");
    }
    for (int64_t i = 0; i < count; i++) {
        if (room)
            printf("hello, %s! (in %s)\n", name, room);
        else
            printf("hello, %s!\n", name);
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        return shape_err_set(err, SHAPE_EIO, "cannot write the greeting to stdout");
    return SHAPE_OK;
}

/* Options: long name, short name, kind, metavar, default shown in --help,
 * help sentence. The table ends with an entry whose name is NULL. */
static const shape_arg_spec hello_args[] = {
    {"name", 'n', SHAPE_ARG_VALUE, "NAME", "world", "Who to greet."},
    {"count", 'c', SHAPE_ARG_VALUE, "N", "1", "How many times to greet (1 to 100)."},
    {"to", 0, SHAPE_ARG_VALUE, "hello://ROOM", NULL,
     "Greet in a room; the URI is checked like the hello:// emitter checks it."},
    {0},
};

static const shape_command hello_command = {
    .name = "hello",
    .summary = "Print a greeting (example plugin shape-hello).",
    .positional = NULL,
    .min_positional = 0,
    .max_positional = 0,
    .args = hello_args,
    .epilog = "Example: shape hello --name Ada --count 2 --to hello://lobby",
    .run = run_hello,
};

/* The hello:// emitter: `shape emit retail --sink hello://lobby` prints one
 * line "hello, lobby: <event>" per event on stdout. The instance is the
 * type's own struct; the core only ever holds a pointer to it. */
struct shape_emitter {
    char room[HELLO_ROOM_MAX + 1];
};

static int hello_open(const char *uri, const struct shape_options *options, shape_emitter **out,
                      shape_err *err)
{
    /* Refuse options we do not know, naming them (the core's helper words
     * it the same way for every emitter). */
    static const char *const known[] = {"envelope", "resuming", NULL};
    if (options) SHAPE_RETURN_NOT_OK(shape_options_check_known(options, known, "hello emitter", err));
    SHAPE_RETURN_NOT_OK(hello_check_uri(uri, err));
    shape_emitter *e = calloc(1, sizeof *e);
    if (!e) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    snprintf(e->room, sizeof e->room, "%s", uri + strlen("hello://"));
    *out = e;
    return SHAPE_OK;
}

/* Give every message an outcome before returning: here all are delivered
 * once stdio took them; a failed write leaves them to be retried. */
static int hello_send(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err)
{
    for (size_t i = 0; i < n; i++) {
        printf("hello, %s: %.*s\n", e->room, (int)msgs[i].value_len, (const char *)msgs[i].value);
        msgs[i].outcome = SHAPE_EMIT_DELIVERED;
    }
    if (fflush(stdout) != 0) {
        for (size_t i = 0; i < n; i++) msgs[i].outcome = SHAPE_EMIT_RETRY;
        return shape_err_set(err, SHAPE_EIO, "cannot write greetings to stdout");
    }
    return SHAPE_OK;
}

static int hello_flush(shape_emitter *e, shape_err *err)
{
    (void)e;
    (void)err;
    return SHAPE_OK; /* send already flushed stdout */
}

static void hello_close(shape_emitter *e) { free(e); }

static const char *const hello_schemes[] = {"hello", NULL};

static const shape_emitter_type hello_emitter = {
    .name = "hello",
    .schemes = hello_schemes,
    .summary = "Greets a room: hello://ROOM.",
    .check_uri = hello_check_uri,
    .open = hello_open,
    .send = hello_send,
    .flush = hello_flush,
    .close = hello_close,
};

static const shape_emitter_type *const emitters[] = {&hello_emitter, NULL};
static const shape_command *const commands[] = {&hello_command, NULL};

static const shape_plugin hello_plugin = {
    .abi_version = SHAPE_PLUGIN_ABI_VERSION, /* from the headers built against */
    .flags = 0,                              /* not bundled: keeps its own version */
    .name = "shape-hello",
    .version = "1.0.0",
    .summary = "example plugin: the hello command and the hello:// emitter",
    .sources = NULL,
    .emitters = emitters,
    .commands = commands,
};

SHAPE_PLUGIN_EXPORT const shape_plugin *shape_plugin_entry(void) { return &hello_plugin; }

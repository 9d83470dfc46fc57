/* shape/error.h — the error type every fallible shape call fills.
 *
 * Why: one way to fail across core and plugins, so the command line can turn
 * any failure into one line `shape: error: <message>` and the right exit code.
 * How: a fallible function returns an int code (0 = ok) and takes a
 * caller-owned `shape_err *err` last; on failure it writes a human sentence
 * into err->message (never a secret) and returns the same code it stored.
 * `err` may be NULL when the caller does not want the message.
 */
#ifndef SHAPE_ERROR_H
#define SHAPE_ERROR_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes. Exit codes follow from them through shape_exit_code(). */
enum shape_code {
    SHAPE_OK = 0,
    SHAPE_EINVAL = 1,    /* bad input: a refused option, URI, file, value */
    SHAPE_ECONN = 2,     /* cannot reach a broker, registry or other service */
    SHAPE_EIO = 3,       /* a file or OS call failed */
    SHAPE_ENOMEM = 4,    /* out of memory */
    SHAPE_ELIMIT = 5,    /* a policy limit was hit (e.g. --max-dead-letter) */
    SHAPE_ENOTFOUND = 6, /* a named thing (plugin, topic, command) does not exist */
    SHAPE_EINTERNAL = 7, /* a bug: an invariant did not hold */
    SHAPE_ETIMEDOUT = 8  /* a service answered nothing for longer than its time-out: retrying cannot help now */
};

#define SHAPE_ERR_MESSAGE_MAX 512

typedef struct shape_err {
    int code;                            /* one of enum shape_code */
    char message[SHAPE_ERR_MESSAGE_MAX]; /* NUL-terminated sentence, no trailing newline */
} shape_err;

/* Reset to "no error". */
void shape_err_clear(shape_err *err);

/* Store code and a printf-style message (truncated to fit); returns code so a
 * caller can write `return shape_err_set(err, SHAPE_EINVAL, "...")`. */
int shape_err_set(shape_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the current message with "<prefix>: " (used to add context while
 * an error travels up). Returns err->code. */
int shape_err_prefix(shape_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The process exit code for an error code: 0 ok, 1 policy limit, 2 otherwise. */
int shape_exit_code(int code);

/* Stable short name of a code ("invalid input", "connection", ...). */
const char *shape_code_name(int code);

/* Keep the happy path straight: return the code of a failing call. */
#define SHAPE_RETURN_NOT_OK(expr)            \
    do {                                     \
        int shape_rc_ = (expr);              \
        if (shape_rc_ != SHAPE_OK) return shape_rc_; \
    } while (0)

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* error.c — the shape_err type: a code plus a bounded human message.
 *
 * Messages are formatted straight into the caller's buffer; nothing is
 * allocated, so setting an error can never fail in turn.
 */
#include "shape/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void shape_err_clear(shape_err *err)
{
    if (!err) return;
    err->code = SHAPE_OK;
    err->message[0] = '\0';
}

int shape_err_set(shape_err *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}

int shape_err_prefix(shape_err *err, const char *fmt, ...)
{
    if (!err) return SHAPE_EINTERNAL;
    char prefix[SHAPE_ERR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* Shift the message right and put "prefix: " in front, truncating the end. */
    size_t plen = strlen(prefix), cap = sizeof err->message - 1;
    if (plen + 2 > cap) plen = cap - 2;
    size_t mlen = strlen(err->message);
    if (plen + 2 + mlen > cap) mlen = cap - plen - 2;
    memmove(err->message + plen + 2, err->message, mlen);
    memcpy(err->message, prefix, plen);
    memcpy(err->message + plen, ": ", 2);
    err->message[plen + 2 + mlen] = '\0';
    return err->code;
}

int shape_exit_code(int code)
{
    if (code == SHAPE_OK) return 0;
    if (code == SHAPE_ELIMIT) return 1;
    return 2;
}

const char *shape_code_name(int code)
{
    switch (code) {
    case SHAPE_OK: return "ok";
    case SHAPE_EINVAL: return "invalid input";
    case SHAPE_ECONN: return "connection";
    case SHAPE_EIO: return "i/o";
    case SHAPE_ENOMEM: return "out of memory";
    case SHAPE_ELIMIT: return "limit reached";
    case SHAPE_ENOTFOUND: return "not found";
    case SHAPE_EINTERNAL: return "internal";
    case SHAPE_ETIMEDOUT: return "timed out";
    default: return "unknown";
    }
}

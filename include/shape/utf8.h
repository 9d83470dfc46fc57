/* shape/utf8.h — UTF-8 well-formedness, shared by every module that takes
 * text from users (options, credentials) and must refuse broken bytes. */
#ifndef SHAPE_UTF8_H
#define SHAPE_UTF8_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when s[0..n) is well-formed UTF-8: no overlong forms, no UTF-16
 * surrogates, nothing above U+10FFFF, no truncated sequence. */
int shape_utf8_valid(const void *s, size_t n);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

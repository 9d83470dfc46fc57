/* shape/base64.h — standard padded base64 (RFC 4648 alphabet).
 *
 * Why: the stream-profile checkpoint, a JSON document, carries the binary
 * profiler state; base64 is the one encoding every JSON tool can round-trip.
 * How: encode always succeeds (but for memory); decode is strict — length a
 * multiple of 4, '=' only as the last one or two characters, nothing outside
 * the alphabet — so a damaged checkpoint is refused rather than half read.
 */
#ifndef SHAPE_BASE64_H
#define SHAPE_BASE64_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A new NUL-terminated string (caller frees), NULL when out of memory. */
char *shape_base64_encode(const uint8_t *data, size_t len);
/* The bytes of the NUL-terminated text (caller frees; *len set), NULL when
 * the text is not strict padded base64 or memory ran out. */
uint8_t *shape_base64_decode(const char *text, size_t *len);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

/* utf8.c — UTF-8 well-formedness (shape/utf8.h).
 *
 * How: one pass; each lead byte fixes the sequence length and the allowed
 * range of its second byte (which is where overlong forms, surrogates and
 * code points above U+10FFFF show), the rest must be continuation bytes.
 */
#include "shape/utf8.h"

int shape_utf8_valid(const void *bytes, size_t n)
{
    const unsigned char *s = bytes;
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t len;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            return 0;
        }
        if (n - i < len) return 0;
        if (s[i + 1] < lo || s[i + 1] > hi) return 0;
        for (size_t k = 2; k < len; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return 0;
        i += len;
    }
    return 1;
}

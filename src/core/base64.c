/* base64.c — strict padded base64 (shape/base64.h).
 *
 * Moved here from cmd_stream_profile.c so the checkpoint parser
 * (stream_checkpoint.c), its unit tests and its fuzz target share the exact
 * decoder the command uses. Cold path: a checkpoint a few times a minute.
 */
#include "shape/base64.h"

#include <stdlib.h>
#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *shape_base64_encode(const uint8_t *p, size_t n)
{
    char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        *o++ = alphabet[(v >> 18) & 63];
        *o++ = alphabet[(v >> 12) & 63];
        *o++ = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? alphabet[v & 63] : '=';
    }
    *o = 0;
    return out;
}

static int value_of(char c)
{
    const char *at = c ? strchr(alphabet, c) : NULL;
    return at ? (int)(at - alphabet) : -1;
}

uint8_t *shape_base64_decode(const char *s, size_t *len)
{
    size_t n = strlen(s);
    if (n % 4) return NULL;
    uint8_t *out = malloc(n / 4 * 3 + 1);
    if (!out) return NULL;
    size_t w = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++) {
            v[k] = s[i + k] == '=' && i + 4 == n && k >= 2 ? 0 : value_of(s[i + k]);
            if (v[k] < 0 || (k == 2 && s[i + 2] == '=' && s[i + 3] != '=')) {
                free(out);
                return NULL;
            }
        }
        uint32_t x = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        out[w++] = (uint8_t)(x >> 16);
        if (s[i + 2] != '=') out[w++] = (uint8_t)(x >> 8);
        if (s[i + 3] != '=') out[w++] = (uint8_t)x;
    }
    *len = w;
    return out;
}

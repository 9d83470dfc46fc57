/* checkpoint_file.c — load, parse and save checkpoint documents
 * (shape/checkpoint_file.h).
 *
 * Why: one way for every resumable command to keep its progress on disk.
 * How: read the whole file (a missing file is "no checkpoint", not an
 * error), parse it with duplicate keys refused, and save through the atomic
 * write helper. The parser is what tests/fuzz/fuzz_checkpoint.c feeds.
 */
#include "shape/checkpoint_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shape/atomic_file.h"

int shape_checkpoint_parse(const char *bytes, size_t len, const char *path, json_t **doc, shape_err *err)
{
    *doc = NULL;
    json_error_t jerr;
    json_t *d = json_loadb(bytes, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!d)
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s is not valid JSON (line %d): use another file", path,
                             jerr.line);
    if (!json_is_object(d)) {
        json_decref(d);
        return shape_err_set(err, SHAPE_EINVAL, "checkpoint %s is not a JSON object: use another file", path);
    }
    *doc = d;
    return SHAPE_OK;
}

int shape_checkpoint_load(const char *path, json_t **doc, shape_err *err)
{
    *doc = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return SHAPE_OK;
        return shape_err_set(err, SHAPE_EIO, "cannot read checkpoint %s: %s", path, strerror(errno));
    }
    /* the whole file, then the same parser the fuzz target feeds */
    char *bytes = NULL;
    size_t len = 0, cap = 0;
    int rc = SHAPE_OK;
    for (;;) {
        if (len == cap) {
            char *more = cap < (1u << 30) ? realloc(bytes, cap ? 2 * cap : 4096) : NULL;
            if (!more) {
                rc = shape_err_set(err, SHAPE_ENOMEM, "checkpoint %s is too large to read: use another file", path);
                break;
            }
            bytes = more;
            cap = cap ? 2 * cap : 4096;
        }
        size_t got = fread(bytes + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) rc = shape_err_set(err, SHAPE_EIO, "cannot read checkpoint %s: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc == SHAPE_OK) rc = shape_checkpoint_parse(bytes, len, path, doc, err);
    free(bytes);
    return rc;
}

int shape_checkpoint_save(const char *path, const json_t *doc, shape_err *err)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    if (!text) return shape_err_set(err, SHAPE_ENOMEM, "out of memory writing checkpoint %s", path);
    size_t len = strlen(text);
    text[len] = '\n'; /* json_dumps left room for its NUL */
    int rc = shape_atomic_write(path, text, len + 1, err);
    free(text);
    return rc;
}

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
    char *bytes = NULL;
    size_t len = 0;
    int exists = 0;
    SHAPE_RETURN_NOT_OK(shape_file_read_all(path, "checkpoint", &bytes, &len, &exists, err));
    if (!exists) return SHAPE_OK;
    /* the whole file, then the same parser the fuzz target feeds */
    int rc = shape_checkpoint_parse(bytes, len, path, doc, err);
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

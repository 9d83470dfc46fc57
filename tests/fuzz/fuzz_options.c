/* fuzz_options.c — libFuzzer target for the options parser (shape/options.h).
 *
 * Why: --option and --options-file take text straight from the user, and
 * every getter coerces what it finds; none of it may crash, leak or read
 * out of bounds whatever the bytes.
 * How: each input is used twice — as one `--option KEY=VALUE` text (a
 * NUL-terminated copy) and as the content of an options file (through
 * shape_options_load_buffer, so no disk I/O) — and then every key is read
 * back with every getter, walked as a property map and checked against a
 * known-key list. A few invariants abort on violation: a successful
 * set_kv stores its key; a failed call leaves a message and its own code.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/options.h"

static void check_failure(int rc, const shape_err *err)
{
    if (rc == SHAPE_OK) return;
    if (err->code != rc || err->message[0] == '\0') abort();
    if (memchr(err->message, '\0', sizeof err->message) == NULL) abort();
}

static int count_property(const char *name, const char *value, void *ud, shape_err *err)
{
    (void)err;
    if (!name || !value) abort();
    *(size_t *)ud += strlen(name) + strlen(value);
    return SHAPE_OK;
}

static void read_back(shape_options *o)
{
    static const char *const known[] = {"start_at", "config", "batch_size", NULL};
    json_t *obj = (json_t *)shape_options_json(o);
    const char *key;
    json_t *value;
    shape_err err;
    json_object_foreach(obj, key, value) {
        (void)value;
        if (!shape_options_has(o, key)) abort();
        const char *s = NULL;
        int64_t i = 0;
        double d = 0;
        int b = 0;
        size_t total = 0;
        check_failure(shape_options_get_string(o, key, NULL, &s, &err), &err);
        check_failure(shape_options_get_int64(o, key, 0, &i, &err), &err);
        check_failure(shape_options_get_double(o, key, 0, &d, &err), &err);
        check_failure(shape_options_get_bool(o, key, 0, &b, &err), &err);
        if (b != 0 && b != 1) abort();
        check_failure(shape_options_foreach_property(o, key, count_property, &total, &err), &err);
    }
    int rc = shape_options_check_known(o, known, "fuzz", &err);
    check_failure(rc, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    shape_options *o = shape_options_new();
    char *text = malloc(size + 1);
    if (!o || !text) abort();
    memcpy(text, data, size);
    text[size] = '\0';

    shape_err err;
    int rc = shape_options_set_kv(o, text, &err);
    check_failure(rc, &err);
    char *eq = strchr(text, '=');
    if (rc == SHAPE_OK) {
        if (!eq || eq == text) abort();
        *eq = '\0';
        if (!shape_options_has(o, text)) abort();
    }

    rc = shape_options_load_buffer(o, (const char *)data, size, "fuzz.json", &err);
    check_failure(rc, &err);
    read_back(o);

    free(text);
    shape_options_free(o);
    return 0;
}

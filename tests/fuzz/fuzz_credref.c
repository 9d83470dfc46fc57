/* fuzz_credref.c — libFuzzer target for credential references (shape/credref.h).
 *
 * Why: every secret-bearing setting goes through these functions, from text
 * a person wrote (--sink-config, --option config=..., options files); a
 * reference must be recognised or refused without a crash, and a message
 * must never hold what a reference resolved to.
 * How: the input (NUL-terminated) goes to shape_credref_is_reference and
 * shape_credref_secret_name; then, when it is an env:// or kv:// reference,
 * to shape_credref_resolve and shape_credref_resolve_public with the
 * environment variable FUZZ_SECRET set to a marker: a success must be that
 * marker (env://FUZZ_SECRET only), a failure a message without it unless the
 * reference itself holds it (a message may name the reference). (file://
 * references are only classified: resolving fuzzed paths would read the
 * machine's files; tests/unit/test_credref.c covers that form.)
 * Invariants (abort when broken): is_reference is 0 or 1 and 1 only with
 * "://" after env, file or kv; a failure has a message and its code; the
 * marker appears in no message about a reference without it; a resolved
 * value is non-empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/credref.h"

#define MARKER "fz-s3cr3t-marker"

static void check(const char *ref, int public_form)
{
    char *out = NULL;
    shape_err err;
    shape_err_clear(&err);
    int rc = public_form ? shape_credref_resolve_public(ref, &out, &err) : shape_credref_resolve(ref, &out, &err);
    if (rc == SHAPE_OK) {
        if (!out || !out[0]) abort();
        if (strcmp(ref, "env://FUZZ_SECRET") == 0 && strcmp(out, MARKER) != 0) abort();
        shape_secret_free(out);
        return;
    }
    if (out) abort();
    if (err.code != rc || !err.message[0] || memchr(err.message, '\0', sizeof err.message) == NULL) abort();
    if (!strstr(ref, MARKER) && strstr(err.message, MARKER)) abort(); /* a message may name the reference */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("FUZZ_SECRET", MARKER, 1);
    setenv("FUZZ_EMPTY", "", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int is_ref = shape_credref_is_reference(text);
    if (is_ref != 0 && is_ref != 1) abort();
    const char *sep = strstr(text, "://");
    if (is_ref) {
        size_t n = sep ? (size_t)(sep - text) : 0;
        if (!sep || !((n == 3 && strncmp(text, "env", 3) == 0) || (n == 4 && strncmp(text, "file", 4) == 0) ||
                      (n == 2 && strncmp(text, "kv", 2) == 0)))
            abort();
    }
    int secret = shape_credref_secret_name(text);
    if (secret != 0 && secret != 1) abort();
    if (strncmp(text, "file://", 7) != 0) { /* env://, kv:// and non-references: resolved */
        check(text, 0);
        check(text, 1);
    }
    free(text);
    return 0;
}

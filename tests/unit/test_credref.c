/* test_credref.c — credential references (shape/credref.h; reference
 * spec-core.md §5): env://, file:// with its permission rule, kv://, and
 * the promise that no message ever carries a resolved secret. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shape/credref.h"

#define SENTINEL "s3cr3t-sentinel-value"

static const char NOT_A_REFERENCE[] =
    "not a credential reference (env://NAME, file://PATH or kv://VAULT/NAME)";

static char tmpdir[256];

static int make_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "%s/shape-test-credref-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    DIR *d = opendir(tmpdir);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", tmpdir, e->d_name);
        unlink(path);
    }
    closedir(d);
    return rmdir(tmpdir);
}

/* Write len bytes to tmpdir/name with the given mode; the reference
 * "file://<path>" goes to ref (600 bytes), the path to path (512). */
static void write_secret(const char *name, const char *content, size_t len, mode_t mode,
                         char *path, char *ref)
{
    snprintf(path, 512, "%s/%s", tmpdir, name);
    snprintf(ref, 600, "file://%s", path);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(content, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}

static void resolves(const char *ref, const char *want)
{
    char *secret = (char *)"untouched";
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_credref_resolve(ref, &secret, &err);
    if (rc != SHAPE_OK) fail_msg("%s refused: %s", ref, err.message);
    assert_non_null(secret);
    assert_string_equal(secret, want);
    shape_secret_free(secret);
}

/* Refused with code and a message holding text; never the sentinel. */
static void refuses(const char *ref, int code, const char *text)
{
    char *secret = (char *)"untouched";
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_credref_resolve(ref, &secret, &err);
    if (rc == SHAPE_OK) fail_msg("%s resolved", ref);
    assert_int_equal(rc, code);
    assert_int_equal(err.code, code);
    assert_null(secret);
    if (strstr(err.message, text) == NULL)
        fail_msg("%s: expected '%s' in '%s'", ref, text, err.message);
    if (strstr(err.message, SENTINEL) != NULL) fail_msg("secret echoed: '%s'", err.message);
}

static void test_is_reference(void **state)
{
    (void)state;
    assert_true(shape_credref_is_reference("env://X"));
    assert_true(shape_credref_is_reference("env://"));
    assert_true(shape_credref_is_reference("file:///run/secrets/x"));
    assert_true(shape_credref_is_reference("file://relative"));
    assert_true(shape_credref_is_reference("kv://vault/name"));
    assert_false(shape_credref_is_reference(NULL));
    assert_false(shape_credref_is_reference(""));
    assert_false(shape_credref_is_reference(SENTINEL));
    assert_false(shape_credref_is_reference("http://host/x"));
    assert_false(shape_credref_is_reference("kafka://h/t"));
    assert_false(shape_credref_is_reference("ENV://X"));
    assert_false(shape_credref_is_reference("xenv://X"));
    assert_false(shape_credref_is_reference("en://X"));
    assert_false(shape_credref_is_reference("env:/X"));
    assert_false(shape_credref_is_reference("env:X"));
    assert_false(shape_credref_is_reference("://X"));
    assert_false(shape_credref_is_reference("pass=env://X"));
}

static void test_env(void **state)
{
    (void)state;
    assert_int_equal(setenv("SHAPE_TEST_CRED", SENTINEL, 1), 0);
    resolves("env://SHAPE_TEST_CRED", SENTINEL);
    assert_int_equal(setenv("SHAPE_TEST_CRED", "line\n", 1), 0);
    resolves("env://SHAPE_TEST_CRED", "line\n"); /* env values are taken as they are */

    unsetenv("SHAPE_TEST_CRED_UNSET");
    refuses("env://SHAPE_TEST_CRED_UNSET", SHAPE_EINVAL,
            "env://SHAPE_TEST_CRED_UNSET: the environment variable SHAPE_TEST_CRED_UNSET is not set");
    assert_int_equal(setenv("SHAPE_TEST_CRED_EMPTY", "", 1), 0);
    refuses("env://SHAPE_TEST_CRED_EMPTY", SHAPE_EINVAL,
            "env://SHAPE_TEST_CRED_EMPTY: the environment variable SHAPE_TEST_CRED_EMPTY is empty");
    refuses("env://", SHAPE_EINVAL, "env://NAME");
    unsetenv("SHAPE_TEST_CRED");
    unsetenv("SHAPE_TEST_CRED_EMPTY");
}

static void test_file_strips_one_line_ending(void **state)
{
    (void)state;
    char path[512], ref[600];
    struct {
        const char *content, *want;
    } cases[] = {
        {SENTINEL "\n", SENTINEL},
        {SENTINEL "\r\n", SENTINEL},
        {SENTINEL, SENTINEL},
        {SENTINEL "\n\n", SENTINEL "\n"},
        {SENTINEL "\r\n\r\n", SENTINEL "\r\n"},
        {SENTINEL "\r", SENTINEL "\r"},
        {SENTINEL "\n\r", SENTINEL "\n\r"},
        {"line one\nline two\n", "line one\nline two"},
        {" padded \n", " padded "},
        {"caf\xc3\xa9\n", "caf\xc3\xa9"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        write_secret("secret", cases[k].content, strlen(cases[k].content), 0600, path, ref);
        resolves(ref, cases[k].want);
    }
    write_secret("readonly", SENTINEL "\n", strlen(SENTINEL) + 1, 0400, path, ref);
    resolves(ref, SENTINEL);
    write_secret("owner-all", SENTINEL "\n", strlen(SENTINEL) + 1, 0700, path, ref);
    resolves(ref, SENTINEL);
}

static void test_file_open_to_others_is_refused(void **state)
{
    (void)state;
    char path[512], ref[600], want[1400];
    const mode_t modes[] = {0640, 0604, 0644, 0660, 0606, 0601, 0610, 0777};
    const char *texts[] = {"0640", "0604", "0644", "0660", "0606", "0601", "0610", "0777"};
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        write_secret("shared", SENTINEL "\n", strlen(SENTINEL) + 1, modes[k], path, ref);
        snprintf(want, sizeof want,
                 "credential file %s is accessible to other users (mode %s): run chmod 600 %s",
                 path, texts[k], path);
        refuses(ref, SHAPE_EINVAL, want);

        /* Material that is not secret skips the rule. */
        char *pub = NULL;
        shape_err err;
        assert_int_equal(shape_credref_resolve_public(ref, &pub, &err), SHAPE_OK);
        assert_string_equal(pub, SENTINEL);
        shape_secret_free(pub);
    }
}

static void test_file_errors(void **state)
{
    (void)state;
    char path[512], ref[600], want[1200];

    snprintf(path, sizeof path, "%s/missing", tmpdir);
    snprintf(ref, sizeof ref, "file://%s", path);
    snprintf(want, sizeof want, "cannot read credential file %s: No such file or directory", path);
    refuses(ref, SHAPE_EIO, want);

    write_secret("empty", "", 0, 0600, path, ref);
    snprintf(want, sizeof want, "credential file %s is empty", path);
    refuses(ref, SHAPE_EINVAL, want);
    write_secret("newline", "\n", 1, 0600, path, ref);
    snprintf(want, sizeof want, "credential file %s is empty", path);
    refuses(ref, SHAPE_EINVAL, want);
    write_secret("crlf", "\r\n", 2, 0600, path, ref);
    snprintf(want, sizeof want, "credential file %s is empty", path);
    refuses(ref, SHAPE_EINVAL, want);

    write_secret("nul", SENTINEL "\0" SENTINEL, 2 * strlen(SENTINEL) + 1, 0600, path, ref);
    snprintf(want, sizeof want, "credential file %s contains a NUL byte", path);
    refuses(ref, SHAPE_EINVAL, want);
    write_secret("latin1", SENTINEL "\xe9\n", strlen(SENTINEL) + 2, 0600, path, ref);
    snprintf(want, sizeof want, "credential file %s is not valid UTF-8", path);
    refuses(ref, SHAPE_EINVAL, want);

    /* A directory: its mode is the owner's alone (mkdtemp), reading fails. */
    snprintf(ref, sizeof ref, "file://%s", tmpdir);
    snprintf(want, sizeof want, "cannot read credential file %s: ", tmpdir);
    refuses(ref, SHAPE_EIO, want);

    refuses("file://", SHAPE_EINVAL, "file://PATH");

    /* Unreadable (root reads anything, so only checked for other users). */
    if (geteuid() != 0) {
        write_secret("unreadable", SENTINEL, strlen(SENTINEL), 0000, path, ref);
        snprintf(want, sizeof want, "cannot read credential file %s: Permission denied", path);
        refuses(ref, SHAPE_EIO, want);
    }
}

static void test_kv_is_form_checked_then_refused(void **state)
{
    (void)state;
    refuses("kv://vault/name", SHAPE_EINVAL, "no resolver for kv:// references");
    refuses("kv://vault/name", SHAPE_EINVAL, "kv://vault/name");
    refuses("kv://vault/dir/name", SHAPE_EINVAL, "no resolver for kv:// references");
    const char *bad[] = {"kv://", "kv://vault", "kv://vault/", "kv:///name", "kv:///"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        refuses(bad[k], SHAPE_EINVAL, "wants kv://VAULT/NAME");
}

static void test_not_a_reference_is_not_echoed(void **state)
{
    (void)state;
    const char *bad[] = {SENTINEL, "", "http://" SENTINEL, "ENV://" SENTINEL, SENTINEL "://x",
                         "env:" SENTINEL};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        refuses(bad[k], SHAPE_EINVAL, NOT_A_REFERENCE);
        char *out = (char *)"untouched";
        shape_err err;
        shape_credref_resolve(bad[k], &out, &err);
        assert_string_equal(err.message, NOT_A_REFERENCE);
    }
}

static void test_secret_free(void **state)
{
    (void)state;
    shape_secret_free(NULL);
    char *s = malloc(8);
    assert_non_null(s);
    memcpy(s, "secret", 7);
    shape_secret_free(s);
}

static void test_null_err_is_allowed(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(shape_credref_resolve("nope", &out, NULL), SHAPE_EINVAL);
    assert_null(out);
    assert_int_equal(shape_credref_resolve("kv://a/b", &out, NULL), SHAPE_EINVAL);
}

/* The one secret-name predicate every module uses (emit's --sink-config,
 * the producer's and consumer's refusals). */
static void test_secret_name(void **state)
{
    (void)state;
    const char *secret[] = {"sasl.password", "ssl.key.password", "SASL.PASSWORD", "sasl.jaas.config",
                            "schema_registry_api_secret", "api_key", "apikey", "oauth.token",
                            "basic.auth.user.info", "schema_registry_basic_auth_user_info",
                            "connection_string", "azure.sas", "sas", "sas_token", "my-sas", "credentials",
                            "ssl.keystore.password", "passwd"};
    const char *plain[] = {"sasl.mechanism", "sasl.username", "security.protocol", "ssl.key.location",
                           "ssl.ca.location", "bootstrap.servers", "acks", "linger.ms", "flush_timeout",
                           "schema_registry_url", "compression.type", "", "sasl_mechanism"};
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++) {
        if (!shape_credref_secret_name(secret[i])) fail_msg("'%s' should be a secret name", secret[i]);
    }
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        if (shape_credref_secret_name(plain[i])) fail_msg("'%s' should not be a secret name", plain[i]);
    }
    assert_false(shape_credref_secret_name(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_is_reference),
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_file_strips_one_line_ending),
        cmocka_unit_test(test_file_open_to_others_is_refused),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_kv_is_form_checked_then_refused),
        cmocka_unit_test(test_not_a_reference_is_not_echoed),
        cmocka_unit_test(test_secret_free),
        cmocka_unit_test(test_null_err_is_allowed),
        cmocka_unit_test(test_secret_name),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}

/* test_options.c — source/emitter options (shape/options.h; reference
 * spec-core.md §1.2-1.3 and §5: --option, --options-file, merge order). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <unistd.h>

#include "shape/options.h"

#define SENTINEL "s3cr3t-sentinel-value"

static char tmpdir[256];

static int make_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "%s/shape-test-options-XXXXXX",
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

/* Write content to tmpdir/name; the path goes to path (512 bytes). */
static void write_file(const char *name, const char *content, char *path)
{
    snprintf(path, 512, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(content, 1, strlen(content), f), strlen(content));
    assert_int_equal(fclose(f), 0);
}

static void expect_error(int rc, const shape_err *err, int code, const char *text)
{
    assert_int_equal(rc, code);
    assert_int_equal(err->code, code);
    if (strstr(err->message, text) == NULL)
        fail_msg("expected '%s' in '%s'", text, err->message);
    if (strstr(err->message, SENTINEL) != NULL) fail_msg("secret echoed: '%s'", err->message);
}

static const json_t *value_of(const shape_options *o, const char *key)
{
    return json_object_get(shape_options_json(o), key);
}

static void set_ok(shape_options *o, const char *text)
{
    shape_err err;
    shape_err_clear(&err);
    if (shape_options_set_kv(o, text, &err) != SHAPE_OK)
        fail_msg("--option %s refused: %s", text, err.message);
}

static void test_kv_values_are_typed_as_json(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    assert_non_null(o);
    set_ok(o, "int=1");
    set_ok(o, "neg=-7");
    set_ok(o, "real=1.5");
    set_ok(o, "t=true");
    set_ok(o, "f=false");
    set_ok(o, "n=null");
    set_ok(o, "quoted=\"x\"");
    set_ok(o, "bare=hello");
    set_ok(o, "obj={\"x\":1}");
    set_ok(o, "arr=[1,\"two\"]");
    set_ok(o, "empty=");
    set_ok(o, "eq=b=c");
    set_ok(o, "spaced= 2 ");
    set_ok(o, "two=1 2");
    set_ok(o, "open={\"x\":");
    set_ok(o, "word=True");

    assert_true(json_is_integer(value_of(o, "int")));
    assert_int_equal(json_integer_value(value_of(o, "int")), 1);
    assert_int_equal(json_integer_value(value_of(o, "neg")), -7);
    assert_true(json_is_real(value_of(o, "real")));
    assert_true(json_real_value(value_of(o, "real")) == 1.5);
    assert_true(json_is_true(value_of(o, "t")));
    assert_true(json_is_false(value_of(o, "f")));
    assert_true(json_is_null(value_of(o, "n")));
    assert_string_equal(json_string_value(value_of(o, "quoted")), "x");
    assert_string_equal(json_string_value(value_of(o, "bare")), "hello");
    const json_t *obj = value_of(o, "obj");
    assert_true(json_is_object(obj));
    assert_int_equal(json_integer_value(json_object_get(obj, "x")), 1);
    assert_true(json_is_array(value_of(o, "arr")));
    assert_int_equal(json_array_size(value_of(o, "arr")), 2);
    assert_string_equal(json_string_value(value_of(o, "empty")), "");
    assert_string_equal(json_string_value(value_of(o, "eq")), "b=c");
    assert_int_equal(json_integer_value(value_of(o, "spaced")), 2);
    assert_string_equal(json_string_value(value_of(o, "two")), "1 2");
    assert_string_equal(json_string_value(value_of(o, "open")), "{\"x\":");
    assert_string_equal(json_string_value(value_of(o, "word")), "True");
    shape_options_free(o);
}

static void test_kv_later_wins_and_order_is_kept(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    set_ok(o, "b=1");
    set_ok(o, "a=2");
    set_ok(o, "b=3");
    const json_t *j = shape_options_json(o);
    void *it = json_object_iter((json_t *)j);
    assert_string_equal(json_object_iter_key(it), "b");
    assert_int_equal(json_integer_value(json_object_iter_value(it)), 3);
    it = json_object_iter_next((json_t *)j, it);
    assert_string_equal(json_object_iter_key(it), "a");
    assert_null(json_object_iter_next((json_t *)j, it));
    shape_options_free(o);
}

static void test_kv_syntax_errors(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    shape_err err;
    int rc = shape_options_set_kv(o, "novalue", &err);
    expect_error(rc, &err, SHAPE_EINVAL, "--option wants KEY=VALUE, got 'novalue'");

    rc = shape_options_set_kv(o, "", &err);
    expect_error(rc, &err, SHAPE_EINVAL, "--option wants KEY=VALUE");

    /* An empty key with a value: the value is never echoed. */
    rc = shape_options_set_kv(o, "=" SENTINEL, &err);
    expect_error(rc, &err, SHAPE_EINVAL, "--option wants KEY=VALUE, got an empty KEY");

    /* A value that cannot be stored: the key is named, the value is not. */
    rc = shape_options_set_kv(o, "sasl.password=" SENTINEL "\xff", &err);
    expect_error(rc, &err, SHAPE_EINVAL, "sasl.password");
    expect_error(rc, &err, SHAPE_EINVAL, "not valid UTF-8");

    rc = shape_options_set_kv(o, "k\xff=" SENTINEL, &err);
    expect_error(rc, &err, SHAPE_EINVAL, "KEY is not valid UTF-8");

    assert_int_equal(json_object_size(shape_options_json(o)), 0);
    shape_options_free(o);
}

static void test_file_is_merged_in_order(void **state)
{
    (void)state;
    char path[512];
    write_file("opts.json", "{\"a\": 1, \"b\": {\"c\": \"d\"}, \"z\": \"file\"}", path);
    shape_options *o = shape_options_new();
    shape_err err;
    assert_int_equal(shape_options_load_file(o, path, &err), SHAPE_OK);
    set_ok(o, "a=2");
    set_ok(o, "new=x");
    assert_int_equal(shape_options_set_bool(o, "z", 1, &err), SHAPE_OK);

    const json_t *j = shape_options_json(o);
    assert_int_equal(json_integer_value(value_of(o, "a")), 2);
    assert_string_equal(json_string_value(json_object_get(value_of(o, "b"), "c")), "d");
    assert_true(json_is_true(value_of(o, "z")));
    const char *order[] = {"a", "b", "z", "new"};
    void *it = json_object_iter((json_t *)j);
    for (size_t i = 0; i < 4; i++, it = json_object_iter_next((json_t *)j, it))
        assert_string_equal(json_object_iter_key(it), order[i]);
    assert_null(it);

    /* A file loaded later wins over what is there. */
    write_file("later.json", "{\"a\": \"later\"}", path);
    assert_int_equal(shape_options_load_file(o, path, &err), SHAPE_OK);
    assert_string_equal(json_string_value(value_of(o, "a")), "later");
    shape_options_free(o);
}

static void test_file_with_bom_is_read(void **state)
{
    (void)state;
    char path[512];
    write_file("bom.json", "\xEF\xBB\xBF{\"a\": true}\n", path);
    shape_options *o = shape_options_new();
    shape_err err;
    assert_int_equal(shape_options_load_file(o, path, &err), SHAPE_OK);
    assert_true(json_is_true(value_of(o, "a")));
    shape_options_free(o);
}

static void test_file_errors_name_the_file(void **state)
{
    (void)state;
    char path[512], want[700];
    shape_options *o = shape_options_new();
    shape_err err;

    write_file("array.json", "[1, 2]", path);
    snprintf(want, sizeof want, "options file '%s' must hold a JSON object", path);
    expect_error(shape_options_load_file(o, path, &err), &err, SHAPE_EINVAL, want);
    assert_string_equal(err.message, want);

    write_file("number.json", "42", path);
    snprintf(want, sizeof want, "options file '%s' must hold a JSON object", path);
    expect_error(shape_options_load_file(o, path, &err), &err, SHAPE_EINVAL, want);

    write_file("string.json", "\"" SENTINEL "\"", path);
    snprintf(want, sizeof want, "options file '%s' must hold a JSON object", path);
    expect_error(shape_options_load_file(o, path, &err), &err, SHAPE_EINVAL, want);

    write_file("broken.json", "{\"a\": 1,\n \"b\": }", path);
    snprintf(want, sizeof want, "options file '%s' is not valid JSON: line 2 column ", path);
    expect_error(shape_options_load_file(o, path, &err), &err, SHAPE_EINVAL, want);

    write_file("empty.json", "", path);
    snprintf(want, sizeof want, "options file '%s' is not valid JSON: line ", path);
    expect_error(shape_options_load_file(o, path, &err), &err, SHAPE_EINVAL, want);

    /* jansson quotes the text near a fault; that text must not reach us. */
    const char *leaks[] = {
        "{\"sasl.password\": \"" SENTINEL "\\q\"}",   /* bad escape */
        "{\"sasl.password\": " SENTINEL "}",            /* bare word */
        "{\"sasl.password\": \"" SENTINEL "\n\"}",    /* control character */
        "{\"sasl.password\": \"" SENTINEL "\xff\"}",  /* invalid UTF-8 */
        "{\"sasl.password\": \"" SENTINEL "\"} tail", /* trailing text */
        "{\"sasl.password\": \"" SENTINEL,             /* unterminated */
        "{\"sasl.password\": \"" SENTINEL "\\u00\"}", /* short unicode escape */
        "{\"" SENTINEL "\" 1}",                         /* missing colon */
    };
    for (size_t k = 0; k < sizeof leaks / sizeof leaks[0]; k++) {
        char name[32];
        snprintf(name, sizeof name, "leak%zu.json", k);
        write_file(name, leaks[k], path);
        snprintf(want, sizeof want, "options file '%s' is not valid JSON: line ", path);
        expect_error(shape_options_load_file(o, path, &err), &err, SHAPE_EINVAL, want);
    }

    snprintf(path, 512, "%s/missing.json", tmpdir);
    snprintf(want, sizeof want, "cannot read options file '%s': No such file or directory", path);
    expect_error(shape_options_load_file(o, path, &err), &err, SHAPE_EIO, want);

    snprintf(want, sizeof want, "cannot read options file '%s': ", tmpdir);
    expect_error(shape_options_load_file(o, tmpdir, &err), &err, SHAPE_EIO, want);

    /* Nothing was merged by any failure. */
    assert_int_equal(json_object_size(shape_options_json(o)), 0);
    shape_options_free(o);
}

static void test_load_buffer_names_the_given_name(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    shape_err err;
    const char doc[] = "{\"a\": 1}";
    assert_int_equal(shape_options_load_buffer(o, doc, strlen(doc), "mem", &err), SHAPE_OK);
    assert_int_equal(json_integer_value(value_of(o, "a")), 1);
    expect_error(shape_options_load_buffer(o, "[]", 2, "mem", &err), &err, SHAPE_EINVAL,
                 "options file 'mem' must hold a JSON object");
    /* Not NUL-terminated: only len bytes count. */
    const char partial[] = "{\"b\": 2}garbage";
    assert_int_equal(shape_options_load_buffer(o, partial, 8, "mem", &err), SHAPE_OK);
    assert_int_equal(json_integer_value(value_of(o, "b")), 2);
    shape_options_free(o);
}

static void test_check_known_lists_unknown_keys_sorted(void **state)
{
    (void)state;
    static const char *const known[] = {"start_at", "batch_size", "config", NULL};
    shape_options *o = shape_options_new();
    shape_err err;
    assert_int_equal(shape_options_check_known(o, known, "kafka source", &err), SHAPE_OK);
    set_ok(o, "start_at=earliest");
    set_ok(o, "batch_size=10");
    assert_int_equal(shape_options_check_known(o, known, "kafka source", &err), SHAPE_OK);

    set_ok(o, "bogus=1");
    int rc = shape_options_check_known(o, known, "kafka source", &err);
    expect_error(rc, &err, SHAPE_EINVAL, "");
    assert_string_equal(err.message, "unknown kafka source options: ['bogus']");

    set_ok(o, "a=" SENTINEL);
    rc = shape_options_check_known(o, known, "kafka source", &err);
    expect_error(rc, &err, SHAPE_EINVAL, "");
    assert_string_equal(err.message, "unknown kafka source options: ['a', 'bogus']");

    shape_options *q = shape_options_new();
    set_ok(q, "it's=1");
    set_ok(q, "back\\slash=1");
    set_ok(q, "Z=1");
    rc = shape_options_check_known(q, NULL, "file source", &err);
    expect_error(rc, &err, SHAPE_EINVAL, "");
    assert_string_equal(err.message, "unknown file source options: ['Z', 'back\\\\slash', \"it's\"]");
    shape_options_free(q);
    shape_options_free(o);
}

static void test_getters_default_and_types(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    shape_err err;
    const char *s = NULL;
    int64_t i = 0;
    double d = 0;
    int b = -1;

    /* Absent and null give the default. */
    assert_int_equal(shape_options_get_string(o, "s", "dflt", &s, &err), SHAPE_OK);
    assert_string_equal(s, "dflt");
    set_ok(o, "s=null");
    assert_true(shape_options_has(o, "s"));
    assert_false(shape_options_has(o, "other"));
    assert_int_equal(shape_options_get_string(o, "s", NULL, &s, &err), SHAPE_OK);
    assert_null(s);
    assert_int_equal(shape_options_get_int64(o, "s", 65536, &i, &err), SHAPE_OK);
    assert_int_equal(i, 65536);
    assert_int_equal(shape_options_get_double(o, "s", 0.5, &d, &err), SHAPE_OK);
    assert_true(d == 0.5);
    assert_int_equal(shape_options_get_bool(o, "s", 1, &b, &err), SHAPE_OK);
    assert_int_equal(b, 1);

    set_ok(o, "s=earliest");
    assert_int_equal(shape_options_get_string(o, "s", NULL, &s, &err), SHAPE_OK);
    assert_string_equal(s, "earliest");
    set_ok(o, "s=1");
    expect_error(shape_options_get_string(o, "s", NULL, &s, &err), &err, SHAPE_EINVAL,
                 "option 's' must be a string");
    shape_options_free(o);
}

static int64_t int_of(shape_options *o, const char *kv, int expect_rc)
{
    shape_err err;
    int64_t v = -12345;
    set_ok(o, kv);
    const char *eq = strchr(kv, '=');
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    int rc = shape_options_get_int64(o, key, 0, &v, &err);
    if (rc != expect_rc) fail_msg("%s: rc %d, %s", kv, rc, rc ? err.message : "");
    if (rc) {
        char want[128];
        snprintf(want, sizeof want, "option '%s' must be an integer", key);
        assert_string_equal(err.message, want);
        assert_int_equal(v, -12345);
    }
    return v;
}

static void test_get_int64(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    assert_int_equal(int_of(o, "n=42", 0), 42);
    assert_int_equal(int_of(o, "n=-3", 0), -3);
    assert_int_equal(int_of(o, "n=2.0", 0), 2);
    assert_int_equal(int_of(o, "n=-1e3", 0), -1000);
    assert_int_equal(int_of(o, "n=\"42\"", 0), 42);
    assert_int_equal(int_of(o, "n=\"-7\"", 0), -7);
    assert_true(int_of(o, "n=9223372036854775807", 0) == INT64_MAX);
    assert_true(int_of(o, "n=-9223372036854775808", 0) == INT64_MIN);
    int_of(o, "n=2.5", SHAPE_EINVAL);
    int_of(o, "n=1e30", SHAPE_EINVAL);
    int_of(o, "n=9223372036854775808", SHAPE_EINVAL);
    int_of(o, "n=\"99999999999999999999\"", SHAPE_EINVAL);
    int_of(o, "n=true", SHAPE_EINVAL);
    int_of(o, "n=false", SHAPE_EINVAL);
    int_of(o, "n=\" 42\"", SHAPE_EINVAL);
    int_of(o, "n=\"42 \"", SHAPE_EINVAL);
    int_of(o, "n=\"4x\"", SHAPE_EINVAL);
    int_of(o, "n=\"2.0\"", SHAPE_EINVAL);
    int_of(o, "n=\"\"", SHAPE_EINVAL);
    int_of(o, "n=[1]", SHAPE_EINVAL);
    int_of(o, "n={}", SHAPE_EINVAL);
    shape_options_free(o);
}

static void test_get_double(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    shape_err err;
    double d = 0;
    struct {
        const char *kv;
        double want;
    } ok[] = {{"d=1", 1.0}, {"d=1.5", 1.5}, {"d=-2e3", -2000.0}, {"d=\"0.25\"", 0.25},
              {"d=\"7\"", 7.0}, {"d=\"-1.5e1\"", -15.0}, {"d=\".5\"", 0.5}};
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        set_ok(o, ok[k].kv);
        if (shape_options_get_double(o, "d", 0, &d, &err) != SHAPE_OK)
            fail_msg("%s: %s", ok[k].kv, err.message);
        assert_true(d == ok[k].want);
    }
    const char *bad[] = {"d=true", "d=abc", "d=\"1.5x\"", "d=\" 1\"", "d=\"nan\"", "d=\"inf\"",
                         "d=\"1e999\"", "d=\"0x10\"", "d=\"\"", "d=\".\"", "d=\"1e\"", "d=[]"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        set_ok(o, bad[k]);
        d = 99;
        expect_error(shape_options_get_double(o, "d", 0, &d, &err), &err, SHAPE_EINVAL,
                     "option 'd' must be a number");
        assert_true(d == 99);
    }
    shape_options_free(o);
}

static void test_get_bool(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    shape_err err;
    struct {
        const char *kv;
        int want;
    } ok[] = {{"b=true", 1},      {"b=false", 0},     {"b=1", 1},       {"b=0", 0},
              {"b=\"true\"", 1},  {"b=TRUE", 1},      {"b=False", 0},   {"b=\"1\"", 1},
              {"b=\"0\"", 0},     {"b=yes", 1},       {"b=No", 0},      {"b=YES", 1}};
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        int b = -1;
        set_ok(o, ok[k].kv);
        if (shape_options_get_bool(o, "b", -1, &b, &err) != SHAPE_OK)
            fail_msg("%s: %s", ok[k].kv, err.message);
        assert_int_equal(b, ok[k].want);
    }
    const char *bad[] = {"b=2", "b=-1", "b=1.0", "b=maybe", "b=", "b=on", "b=[]", "b={}",
                         ("b=" SENTINEL)};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int b = -1;
        set_ok(o, bad[k]);
        int rc = shape_options_get_bool(o, "b", 0, &b, &err);
        expect_error(rc, &err, SHAPE_EINVAL, "");
        assert_string_equal(err.message, "option 'b' must be true or false");
        assert_int_equal(b, -1);
    }
    shape_options_free(o);
}

static void test_typed_setters(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    shape_err err;
    const char *s;
    int64_t i;
    double d;
    int b;
    assert_int_equal(shape_options_set_string(o, "start_at", "latest", &err), SHAPE_OK);
    assert_int_equal(shape_options_set_int(o, "max_messages", INT64_MAX, &err), SHAPE_OK);
    assert_int_equal(shape_options_set_double(o, "idle_timeout", 2.5, &err), SHAPE_OK);
    assert_int_equal(shape_options_set_bool(o, "stop_at_end", 0, &err), SHAPE_OK);
    assert_int_equal(shape_options_get_string(o, "start_at", NULL, &s, &err), SHAPE_OK);
    assert_string_equal(s, "latest");
    assert_int_equal(shape_options_get_int64(o, "max_messages", 0, &i, &err), SHAPE_OK);
    assert_true(i == INT64_MAX);
    assert_int_equal(shape_options_get_double(o, "idle_timeout", 0, &d, &err), SHAPE_OK);
    assert_true(d == 2.5);
    assert_int_equal(shape_options_get_bool(o, "stop_at_end", 1, &b, &err), SHAPE_OK);
    assert_int_equal(b, 0);
    /* The flag-derived key overrides an --option given before. */
    set_ok(o, "batch_size=5");
    assert_int_equal(shape_options_set_int(o, "batch_size", 7, &err), SHAPE_OK);
    assert_int_equal(shape_options_get_int64(o, "batch_size", 0, &i, &err), SHAPE_OK);
    assert_int_equal(i, 7);

    expect_error(shape_options_set_double(o, "x", INFINITY, &err), &err, SHAPE_EINVAL,
                 "option 'x' must be a finite number");
    expect_error(shape_options_set_string(o, "x", SENTINEL "\xc0", &err), &err, SHAPE_EINVAL,
                 "option 'x': the value is not valid UTF-8");
    expect_error(shape_options_set_int(o, "", 1, &err), &err, SHAPE_EINVAL, "must not be empty");
    assert_false(shape_options_has(o, "x"));
    shape_options_free(o);
}

typedef struct collected {
    char text[512];
    int calls;
    int stop_at;
} collected;

static int collect(const char *name, const char *value, void *ud, shape_err *err)
{
    collected *c = ud;
    c->calls++;
    if (c->calls == c->stop_at)
        return shape_err_set(err, SHAPE_EINVAL, "librdkafka refused '%s'", name);
    size_t n = strlen(c->text);
    snprintf(c->text + n, sizeof c->text - n, "%s=%s;", name, value);
    return SHAPE_OK;
}

static int refuse_silently(const char *name, const char *value, void *ud, shape_err *err)
{
    (void)name, (void)value, (void)ud, (void)err;
    return SHAPE_ECONN;
}

static void test_foreach_property(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    shape_err err;
    collected c = {0};

    /* Absent: nothing to walk. */
    assert_int_equal(shape_options_foreach_property(o, "config", collect, &c, &err), SHAPE_OK);
    assert_int_equal(c.calls, 0);

    set_ok(o, "config={\"security.protocol\":\"SASL_SSL\",\"linger.ms\":5,\"enable.idempotence\":"
              "true,\"check.crcs\":false,\"x.real\":2.5,\"x.whole\":2.0,\"x.small\":0.1,"
              "\"x.neg\":-3,\"x.big\":1e20}");
    assert_int_equal(shape_options_foreach_property(o, "config", collect, &c, &err), SHAPE_OK);
    assert_string_equal(c.text, "security.protocol=SASL_SSL;linger.ms=5;enable.idempotence=true;"
                                "check.crcs=false;x.real=2.5;x.whole=2;x.small=0.1;x.neg=-3;"
                                "x.big=1e+20;");

    /* The callback stops the walk with its own message. */
    memset(&c, 0, sizeof c);
    c.stop_at = 2;
    expect_error(shape_options_foreach_property(o, "config", collect, &c, &err), &err,
                 SHAPE_EINVAL, "librdkafka refused 'linger.ms'");
    assert_int_equal(c.calls, 2);
    /* ... or without one: the walker names the key and the property. */
    expect_error(shape_options_foreach_property(o, "config", refuse_silently, NULL, &err), &err,
                 SHAPE_ECONN, "option 'config': property 'security.protocol' was refused");

    const char *bad[] = {"config={\"sasl.password\":null}",
                         "config={\"a\":\"ok\",\"sasl.password\":{\"v\":\"" SENTINEL "\"}}",
                         "config={\"sasl.password\":[\"" SENTINEL "\"]}"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        set_ok(o, bad[k]);
        memset(&c, 0, sizeof c);
        int rc = shape_options_foreach_property(o, "config", collect, &c, &err);
        expect_error(rc, &err, SHAPE_EINVAL, "");
        assert_string_equal(err.message, "option 'config': property 'sasl.password' must be a "
                                         "string, number or boolean");
    }

    const char *not_obj[] = {("config=" SENTINEL), "config=[1]", "config=1"};
    for (size_t k = 0; k < sizeof not_obj / sizeof not_obj[0]; k++) {
        set_ok(o, not_obj[k]);
        expect_error(shape_options_foreach_property(o, "config", collect, &c, &err), &err,
                     SHAPE_EINVAL, "option 'config' must be a JSON object of properties");
    }
    set_ok(o, "config=null");
    memset(&c, 0, sizeof c);
    assert_int_equal(shape_options_foreach_property(o, "config", collect, &c, &err), SHAPE_OK);
    assert_int_equal(c.calls, 0);
    shape_options_free(o);
}

static void test_null_err_is_allowed(void **state)
{
    (void)state;
    shape_options *o = shape_options_new();
    assert_int_equal(shape_options_set_kv(o, "nokey", NULL), SHAPE_EINVAL);
    assert_int_equal(shape_options_load_buffer(o, "[", 1, "x", NULL), SHAPE_EINVAL);
    set_ok(o, "config={\"a\":1}");
    assert_int_equal(shape_options_foreach_property(o, "config", refuse_silently, NULL, NULL),
                     SHAPE_ECONN);
    shape_options_free(o);
    shape_options_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_values_are_typed_as_json),
        cmocka_unit_test(test_kv_later_wins_and_order_is_kept),
        cmocka_unit_test(test_kv_syntax_errors),
        cmocka_unit_test(test_file_is_merged_in_order),
        cmocka_unit_test(test_file_with_bom_is_read),
        cmocka_unit_test(test_file_errors_name_the_file),
        cmocka_unit_test(test_load_buffer_names_the_given_name),
        cmocka_unit_test(test_check_known_lists_unknown_keys_sorted),
        cmocka_unit_test(test_getters_default_and_types),
        cmocka_unit_test(test_get_int64),
        cmocka_unit_test(test_get_double),
        cmocka_unit_test(test_get_bool),
        cmocka_unit_test(test_typed_setters),
        cmocka_unit_test(test_foreach_property),
        cmocka_unit_test(test_null_err_is_allowed),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}

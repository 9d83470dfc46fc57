/* test_registry.c — plugin checks and look-ups with in-process plugin tables
 * (module loading itself is covered by tests/contract/test_plugins.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "shape/registry.h"

static int ok_uri(const char *uri, shape_err *err)
{
    (void)uri;
    (void)err;
    return SHAPE_OK;
}

static int run_nothing(const shape_args *args, shape_err *err)
{
    (void)args;
    (void)err;
    return SHAPE_OK;
}

static const char *const kafka_schemes[] = {"kafka", NULL};
static const char *const mem_schemes[] = {"mem", "memory", NULL};
static const shape_source_type kafka_src = {.name = "kafka", .schemes = kafka_schemes, .summary = "k",
                                           .check_uri = ok_uri};
static const shape_emitter_type kafka_emit = {.name = "kafka", .schemes = kafka_schemes, .summary = "k",
                                              .check_uri = ok_uri};
static const shape_source_type mem_src = {.name = "mem", .schemes = mem_schemes, .summary = "m",
                                          .check_uri = ok_uri};
static const shape_arg_spec no_args[] = {{0}};
static const shape_command broker_cmd = {.name = "broker", .summary = "b", .args = no_args,
                                         .run = run_nothing};
static const shape_source_type *const kafka_sources[] = {&kafka_src, NULL};
static const shape_emitter_type *const kafka_emitters[] = {&kafka_emit, NULL};
static const shape_source_type *const mem_sources[] = {&mem_src, NULL};
static const shape_command *const kafka_commands[] = {&broker_cmd, NULL};

static shape_plugin make_plugin(const char *name)
{
    shape_plugin p = {
        .abi_version = SHAPE_PLUGIN_ABI_VERSION,
        .flags = SHAPE_PLUGIN_BUNDLED,
        .name = name,
        .version = SHAPE_VERSION,
        .summary = "test",
    };
    return p;
}

static void test_lookup_by_scheme_and_command(void **state)
{
    (void)state;
    shape_registry *reg = shape_registry_new();
    shape_plugin kafka = make_plugin("shape-kafka");
    kafka.sources = kafka_sources;
    kafka.emitters = kafka_emitters;
    kafka.commands = kafka_commands;
    shape_plugin mem = make_plugin("shape-mem");
    mem.flags = 0;
    mem.version = "9.9.9"; /* not bundled: its own version is fine */
    mem.sources = mem_sources;
    shape_err err;
    assert_int_equal(shape_registry_add(reg, &kafka, NULL, &err), SHAPE_OK);
    assert_int_equal(shape_registry_add(reg, &mem, "here", &err), SHAPE_OK);
    assert_ptr_equal(shape_registry_source_for_uri(reg, "kafka://h/t", &err), &kafka_src);
    assert_ptr_equal(shape_registry_source_for_uri(reg, "KaFkA://h/t", &err), &kafka_src);
    assert_ptr_equal(shape_registry_emitter_for_uri(reg, "kafka://h/t", &err), &kafka_emit);
    assert_ptr_equal(shape_registry_source_for_uri(reg, "memory://x", &err), &mem_src);
    assert_null(shape_registry_emitter_for_uri(reg, "mem://x", &err));
    assert_int_equal(err.code, SHAPE_ENOTFOUND);
    assert_string_equal(err.message,
                        "no installed emitter for mem:// URIs (see 'shape help' and 'shape plugins')");
    assert_ptr_equal(shape_registry_command(reg, "broker", &err), &broker_cmd);
    assert_int_equal(shape_registry_plugin_count(reg), 2);
    const char *origin;
    assert_ptr_equal(shape_registry_plugin(reg, 1, &origin), &mem);
    assert_string_equal(origin, "here");
    assert_null(shape_registry_plugin(reg, 2, &origin));
    shape_registry_free(reg);
}

static void test_refusals_name_the_plugin(void **state)
{
    (void)state;
    shape_registry *reg = shape_registry_new();
    shape_err err;

    shape_plugin future = make_plugin("shape-future");
    future.abi_version = SHAPE_PLUGIN_ABI_VERSION + 1;
    assert_int_equal(shape_registry_add(reg, &future, "/p/future.so", &err), SHAPE_EINVAL);
    char want[96];
    snprintf(want, sizeof want, "plugin 'shape-future' was built for plugin ABI %d, this shape speaks ABI %d",
             SHAPE_PLUGIN_ABI_VERSION + 1, SHAPE_PLUGIN_ABI_VERSION);
    assert_non_null(strstr(err.message, want));
    assert_non_null(strstr(err.message, "rebuild"));

    shape_plugin old = make_plugin("shape-old");
    old.version = "0.0.1";
    assert_int_equal(shape_registry_add(reg, &old, "/p/old.so", &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "plugin 'shape-old' is version 0.0.1 but this shape is " SHAPE_VERSION));

    shape_plugin nameless = make_plugin(NULL);
    assert_int_equal(shape_registry_add(reg, &nameless, "/p/x.so", &err), SHAPE_EINVAL);

    assert_int_equal(shape_registry_plugin_count(reg), 0);
    assert_int_equal(shape_registry_refusal_count(reg), 3);
    const char *origin, *reason;
    shape_registry_refusal(reg, 0, &origin, &reason);
    assert_string_equal(origin, "/p/future.so");
    assert_non_null(strstr(reason, "shape-future"));
    shape_registry_free(reg);
}

static void test_clashes_refused(void **state)
{
    (void)state;
    shape_registry *reg = shape_registry_new();
    shape_err err;
    shape_plugin kafka = make_plugin("shape-kafka");
    kafka.sources = kafka_sources;
    kafka.commands = kafka_commands;
    assert_int_equal(shape_registry_add(reg, &kafka, NULL, &err), SHAPE_OK);

    shape_plugin other = make_plugin("shape-other");
    other.sources = kafka_sources;
    assert_int_equal(shape_registry_add(reg, &other, NULL, &err), SHAPE_EINVAL);
    assert_string_equal(err.message,
                        "plugin 'shape-other' reads a scheme already read by plugin 'shape-kafka'");

    shape_plugin cmd = make_plugin("shape-cmd");
    cmd.commands = kafka_commands;
    assert_int_equal(shape_registry_add(reg, &cmd, NULL, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "adds command 'broker'"));

    shape_plugin again = make_plugin("shape-kafka");
    assert_int_equal(shape_registry_add(reg, &again, NULL, &err), SHAPE_EINVAL);
    assert_int_equal(shape_registry_plugin_count(reg), 1);
    shape_registry_free(reg);
}

static void test_missing_known_provider_is_explained(void **state)
{
    (void)state;
    shape_registry *reg = shape_registry_new();
    shape_err err;
    shape_registry_load_dir(reg, "/nonexistent/plugins");
    const char *uri = "kafka://user:credential-sentinel@host/t";
    assert_null(shape_registry_source_for_uri(reg, uri, &err));
    assert_int_equal(err.code, SHAPE_ENOTFOUND);
    assert_non_null(strstr(err.message, "no installed stream source for kafka:// URIs"));
    assert_non_null(strstr(err.message, "the shape-kafka plugin provides it and was not found"));
    assert_non_null(strstr(err.message, "/nonexistent/plugins"));
    assert_non_null(strstr(err.message, "SHAPE_PLUGIN_PATH"));
    assert_null(strstr(err.message, "credential-sentinel"));

    assert_null(shape_registry_command(reg, "broker", &err));
    assert_non_null(strstr(err.message, "unknown command 'broker': the shape-kafka plugin provides it"));

    /* A refused shape-kafka is named with its reason. */
    shape_plugin impostor = make_plugin("shape-kafka");
    impostor.abi_version = 99;
    shape_registry_add(reg, &impostor, "/p/shape-kafka.so", &err);
    assert_null(shape_registry_command(reg, "broker", &err));
    assert_non_null(strstr(err.message, "the shape-kafka plugin provides it but was refused: "
                                        "plugin 'shape-kafka' was built for plugin ABI 99"));

    assert_null(shape_registry_source_for_uri(reg, "/tmp/x.csv", &err));
    assert_int_equal(err.code, SHAPE_EINVAL);
    shape_registry_free(reg);
}

static void test_uri_scheme(void **state)
{
    (void)state;
    char buf[16];
    assert_int_equal(shape_uri_scheme("Kafka://h/t", buf, sizeof buf), 5);
    assert_string_equal(buf, "kafka");
    assert_int_equal(shape_uri_scheme("svn+ssh://x", buf, sizeof buf), 7);
    assert_string_equal(buf, "svn+ssh");
    assert_int_equal(shape_uri_scheme("/tmp/a", buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(shape_uri_scheme("://x", buf, sizeof buf), 0);
    assert_int_equal(shape_uri_scheme("1ab://x", buf, sizeof buf), 0);
    assert_int_equal(shape_uri_scheme("a b://x", buf, sizeof buf), 0);
    assert_int_equal(shape_uri_scheme("averyveryverylongscheme://x", buf, sizeof buf), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_by_scheme_and_command),
        cmocka_unit_test(test_refusals_name_the_plugin),
        cmocka_unit_test(test_clashes_refused),
        cmocka_unit_test(test_missing_known_provider_is_explained),
        cmocka_unit_test(test_uri_scheme),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_args.c — the declarative command-line parser (shape/cli.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shape/cli.h"

static int never_run(const shape_args *args, shape_err *err)
{
    (void)args;
    (void)err;
    return SHAPE_EINTERNAL;
}

static const shape_arg_spec specs[] = {
    {"rate", 'r', SHAPE_ARG_VALUE, "N", "100", "Events per second."},
    {"topic", 't', SHAPE_ARG_LIST, "NAME", NULL, "A topic."},
    {"follow", 0, SHAPE_ARG_FLAG, NULL, NULL, "Keep reading."},
    {"output", 'o', SHAPE_ARG_VALUE, "FILE", NULL, "Where to write."},
    {"set", 0, SHAPE_ARG_KV_LIST, "K=V", NULL, "Settings."},
    {0},
};

static const shape_command cmd = {
    .name = "demo",
    .summary = "A command for tests.",
    .positional = "URI",
    .min_positional = 1,
    .max_positional = 1,
    .args = specs,
    .epilog = "Epilog text.",
    .run = never_run,
};

static int parse(shape_args **out, shape_err *err, int argc, ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++) argv[i] = va_arg(ap, char *);
    va_end(ap);
    shape_err_clear(err);
    return shape_args_parse(&cmd, argc, argv, out, err);
}

static void test_forms_and_values(void **state)
{
    (void)state;
    shape_args *a;
    shape_err err;
    assert_int_equal(parse(&a, &err, 9, "--rate", "5", "-t", "a", "--topic=b", "kafka://h/t",
                           "--follow", "-o", "x.json"),
                     SHAPE_OK);
    assert_string_equal(shape_args_value(a, "rate"), "5");
    assert_int_equal(shape_args_count(a, "topic"), 2);
    assert_string_equal(shape_args_nth(a, "topic", 0), "a");
    assert_string_equal(shape_args_nth(a, "topic", 1), "b");
    assert_null(shape_args_nth(a, "topic", 2));
    assert_int_equal(shape_args_flag(a, "follow"), 1);
    assert_string_equal(shape_args_value(a, "output"), "x.json");
    assert_int_equal(shape_args_positional_count(a), 1);
    assert_string_equal(shape_args_positional(a, 0), "kafka://h/t");
    assert_ptr_equal(shape_args_command(a), &cmd);
    int64_t rate;
    assert_int_equal(shape_args_int(a, "rate", 1, 1000, 100, &rate, &err), SHAPE_OK);
    assert_int_equal(rate, 5);
    shape_args_free(a);
}

/* --set K=V K=V ...: takes the K=V arguments after it, not options,
 * positionals without '=', nor URIs whose '=' is in their query. */
static void test_kv_list_takes_following_pairs(void **state)
{
    (void)state;
    shape_args *a;
    shape_err err;
    assert_int_equal(parse(&a, &err, 7, "--set", "a.x=1", "a.y=env://P", "kafka://h/t?q=1", "--set=b.z=2",
                           "c.w=3", "--follow"),
                     SHAPE_OK);
    assert_int_equal(shape_args_count(a, "set"), 4);
    assert_string_equal(shape_args_nth(a, "set", 0), "a.x=1");
    assert_string_equal(shape_args_nth(a, "set", 1), "a.y=env://P");
    assert_string_equal(shape_args_nth(a, "set", 2), "b.z=2");
    assert_string_equal(shape_args_nth(a, "set", 3), "c.w=3");
    assert_int_equal(shape_args_flag(a, "follow"), 1);
    /* the URI stays positional */
    assert_int_equal(shape_args_positional_count(a), 1);
    assert_string_equal(shape_args_positional(a, 0), "kafka://h/t?q=1");
    shape_args_free(a);
    /* after another option a K=V is positional again */
    assert_int_equal(parse(&a, &err, 4, "--set", "a=1", "--follow", "d.v=4"), SHAPE_OK);
    assert_int_equal(shape_args_count(a, "set"), 1);
    assert_string_equal(shape_args_positional(a, 0), "d.v=4");
    shape_args_free(a);
    assert_int_equal(parse(&a, &err, 3, "--set", "a=1", "kafka://h/t"), SHAPE_OK);
    assert_int_equal(shape_args_count(a, "set"), 1);
    assert_string_equal(shape_args_positional(a, 0), "kafka://h/t");
    shape_args_free(a);
}

static void test_last_value_wins_and_defaults(void **state)
{
    (void)state;
    shape_args *a;
    shape_err err;
    assert_int_equal(parse(&a, &err, 5, "--rate=1", "u", "--rate", "7", "--"), SHAPE_OK);
    assert_string_equal(shape_args_value(a, "rate"), "7");
    assert_null(shape_args_value(a, "output"));
    assert_int_equal(shape_args_flag(a, "follow"), 0);
    shape_args_free(a);

    /* After "--" everything is positional, even things that look like options;
     * "-" alone (stdin) is positional too. */
    assert_int_equal(parse(&a, &err, 2, "--", "--rate"), SHAPE_OK);
    assert_string_equal(shape_args_positional(a, 0), "--rate");
    int64_t rate;
    assert_int_equal(shape_args_int(a, "rate", 1, 1000, 100, &rate, &err), SHAPE_OK);
    assert_int_equal(rate, 100);
    shape_args_free(a);
    assert_int_equal(parse(&a, &err, 1, "-"), SHAPE_OK);
    assert_string_equal(shape_args_positional(a, 0), "-");
    shape_args_free(a);
}

static void expect_error(const char *needle, int argc, char *a0, char *a1, char *a2)
{
    shape_args *a = (shape_args *)0x1;
    shape_err err;
    assert_int_equal(parse(&a, &err, argc, a0, a1, a2), SHAPE_EINVAL);
    assert_null(a);
    if (!strstr(err.message, needle)) fail_msg("expected '%s' in '%s'", needle, err.message);
}

static void test_errors_name_the_problem(void **state)
{
    (void)state;
    expect_error("unknown option '--bogus' for 'shape demo'", 2, "u", "--bogus", NULL);
    expect_error("unknown option '--bogus' for 'shape demo'", 2, "u", "--bogus=1", NULL);
    expect_error("unknown option '-x'", 2, "u", "-x", NULL);
    expect_error("option '--rate' needs a value (N)", 2, "u", "--rate", NULL);
    expect_error("option '--follow' takes no value", 2, "u", "--follow=yes", NULL);
    expect_error("'shape demo' needs URI", 1, "--follow", NULL, NULL);
    expect_error("unexpected argument 'v'", 2, "u", "v", NULL);
}

static void test_help_skips_arity(void **state)
{
    (void)state;
    shape_args *a;
    shape_err err;
    assert_int_equal(parse(&a, &err, 1, "--help"), SHAPE_OK);
    assert_true(shape_args_help_requested(a));
    shape_args_free(a);
    assert_int_equal(parse(&a, &err, 1, "-h"), SHAPE_OK);
    assert_true(shape_args_help_requested(a));
    shape_args_free(a);
}

static void test_int_ranges(void **state)
{
    (void)state;
    int64_t v;
    assert_int_equal(shape_parse_int64("42", 0, 100, &v), SHAPE_OK);
    assert_int_equal(v, 42);
    assert_int_equal(shape_parse_int64("-3", -5, 5, &v), SHAPE_OK);
    assert_int_equal(v, -3);
    const char *bad[] = {"", " 1", "1 ", "1x", "0x10", "101", "-6", "+", "9223372036854775808"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (shape_parse_int64(bad[i], -5, 100, &v) == SHAPE_OK) fail_msg("accepted '%s'", bad[i]);

    shape_args *a;
    shape_err err;
    assert_int_equal(parse(&a, &err, 3, "u", "--rate", "0"), SHAPE_OK);
    assert_int_equal(shape_args_int(a, "rate", 1, 1000, 100, &v, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "--rate must be an integer from 1 to 1000, got '0'");
    shape_args_free(a);
}

static void test_help_lists_every_option_with_default(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    shape_command_print_help(&cmd, out);
    fclose(out);
    assert_non_null(strstr(text, "usage: shape demo [options] URI"));
    assert_non_null(strstr(text, "-r, --rate N"));
    assert_non_null(strstr(text, "[default: 100]"));
    assert_non_null(strstr(text, "-t, --topic NAME"));
    assert_non_null(strstr(text, "(repeatable)"));
    assert_non_null(strstr(text, "--follow"));
    assert_non_null(strstr(text, "[default: off]"));
    assert_non_null(strstr(text, "-o, --output FILE"));
    assert_non_null(strstr(text, "[default: none]"));
    assert_non_null(strstr(text, "Epilog text."));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms_and_values),
        cmocka_unit_test(test_kv_list_takes_following_pairs),
        cmocka_unit_test(test_last_value_wins_and_defaults),
        cmocka_unit_test(test_errors_name_the_problem),
        cmocka_unit_test(test_help_skips_arity),
        cmocka_unit_test(test_int_ranges),
        cmocka_unit_test(test_help_lists_every_option_with_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

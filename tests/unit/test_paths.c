/* test_paths.c — shape_paths_check (shape/paths.h): an output that is an
 * input or another output is refused whatever the spelling of its path
 * (x, ./x, dir/../x, through a link to its folder), a file not there yet
 * too; streams ("-", character devices, FIFOs) may repeat; an output's
 * folder must exist; shape_paths_uri_file finds the local file of a URI. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shape/paths.h"

static char dir[256], cwd[512];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/shape-paths-XXXXXX");
    if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd) || chdir(dir) != 0) return -1;
    FILE *f = fopen("in.jsonl", "w");
    if (!f) return -1;
    fputs("{}\n", f);
    fclose(f);
    mkdir("sub", 0700);
    return symlink(".", "here") == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unlink("in.jsonl");
    unlink("here");
    rmdir("sub");
    if (chdir(cwd) != 0) return -1;
    return rmdir(dir);
}

static int check2(const char *a, int a_out, const char *b, int b_out, shape_err *err)
{
    shape_path_use uses[] = {{"-o", a, a_out}, {"--state", b, b_out}};
    shape_err_clear(err);
    return shape_paths_check(uses, 2, err);
}

static void test_output_over_input(void **state)
{
    (void)state;
    shape_err err;
    const char *spellings[] = {"in.jsonl", "./in.jsonl", "sub/../in.jsonl", "here/in.jsonl"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(check2(spellings[i], 1, "in.jsonl", 0, &err), SHAPE_EINVAL);
        assert_non_null(strstr(err.message, "is also the input"));
    }
    assert_int_equal(check2("out.json", 1, "in.jsonl", 0, &err), SHAPE_OK);
    /* two inputs on one file are fine */
    assert_int_equal(check2("in.jsonl", 0, "./in.jsonl", 0, &err), SHAPE_OK);
}

static void test_two_outputs_on_one_path(void **state)
{
    (void)state;
    shape_err err;
    assert_int_equal(check2("new.json", 1, "./here/new.json", 1, &err), SHAPE_EINVAL); /* not there yet */
    assert_string_equal(err.message, "-o and --state name the same file (./here/new.json): give each its own");
    assert_int_equal(check2("a.json", 1, "b.json", 1, &err), SHAPE_OK);
    assert_int_equal(check2("-", 1, "-", 1, &err), SHAPE_OK);
    assert_int_equal(check2("/dev/null", 1, "/dev/null", 1, &err), SHAPE_OK);
    assert_int_equal(check2(NULL, 1, "", 1, &err), SHAPE_OK);
}

static void test_output_folder_must_exist(void **state)
{
    (void)state;
    shape_err err;
    assert_int_equal(check2("no/such/dir/x.json", 1, NULL, 0, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "-o no/such/dir/x.json: the folder no/such/dir does not exist (create it first)");
    assert_int_equal(check2("in.jsonl/x", 1, NULL, 0, &err), SHAPE_EINVAL); /* a file is no folder */
    assert_int_equal(check2("sub/", 1, NULL, 0, &err), SHAPE_EINVAL);
    assert_int_equal(check2("sub/x.json", 1, NULL, 0, &err), SHAPE_OK);
}

static void test_uri_file(void **state)
{
    (void)state;
    char uri[600];
    assert_string_equal(shape_paths_uri_file("in.jsonl"), "in.jsonl");
    snprintf(uri, sizeof uri, "file://%s/in.jsonl", dir);
    assert_non_null(shape_paths_uri_file(uri));
    assert_null(shape_paths_uri_file("-"));
    assert_null(shape_paths_uri_file("sub"));
    assert_null(shape_paths_uri_file("kafka://127.0.0.1:9092/in.jsonl"));
    assert_null(shape_paths_uri_file("missing.jsonl"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_over_input),
        cmocka_unit_test(test_two_outputs_on_one_path),
        cmocka_unit_test(test_output_folder_must_exist),
        cmocka_unit_test(test_uri_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

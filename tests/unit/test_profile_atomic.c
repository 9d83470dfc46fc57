/* test_profile_atomic.c — shape_atomic_write (shape/atomic_file.h), which
 * writes the profile document and checkpoints: creates and replaces files,
 * keeps an existing file's permissions, leaves no temporary file, and on
 * failure leaves the old file intact and names the path. Failures are real,
 * not simulated, and work as root (where permission bits do not stop
 * writes): a directory that does not exist, a target that is a directory,
 * and a write cut short by RLIMIT_FSIZE (EFBIG). */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shape/atomic_file.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/shape-atomic-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        unlink(path);
        return;
    }
    struct dirent *e;
    char sub[512];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            remove_tree(sub);
        }
    closedir(d);
    rmdir(path);
}

static int teardown(void **state)
{
    (void)state;
    remove_tree(dir);
    return 0;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(1 << 22);
    *len = fread(buf, 1, 1 << 22, f);
    fclose(f);
    return buf;
}

static int entries(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void assert_content(const char *path, const char *want)
{
    size_t len = 0;
    char *got = slurp(path, &len);
    assert_non_null(got);
    assert_int_equal(len, strlen(want));
    assert_memory_equal(got, want, len);
    free(got);
}

static void test_create_and_replace(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/out.json", dir);
    shape_err err;
    assert_int_equal(shape_atomic_write(path, "{\"v\": 1}\n", 9, &err), SHAPE_OK);
    assert_content(path, "{\"v\": 1}\n");
    assert_int_equal(entries(dir), 1); /* no temporary file left */
    chmod(path, 0640);
    assert_int_equal(shape_atomic_write(path, "second", 6, &err), SHAPE_OK);
    assert_content(path, "second");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640); /* permissions kept */
    assert_int_equal(shape_atomic_write(path, "", 0, &err), SHAPE_OK); /* empty content */
    assert_content(path, "");
    assert_int_equal(entries(dir), 1);
    /* a bare file name writes in the working directory */
    char cwd[512];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(shape_atomic_write("bare.txt", "x", 1, &err), SHAPE_OK);
    assert_int_equal(chdir(cwd), 0);
    snprintf(path, sizeof path, "%s/bare.txt", dir);
    assert_content(path, "x");
    unlink(path);
}

static void test_missing_directory(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/no/such/dir/out.json", dir);
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_atomic_write(path, "x", 1, &err), SHAPE_EIO);
    assert_non_null(strstr(err.message, path));
    assert_int_equal(shape_atomic_write("", "x", 1, &err), SHAPE_EINVAL);
}

static void test_target_is_a_directory(void **state)
{
    (void)state;
    char path[512], inside[600];
    snprintf(path, sizeof path, "%s/adir", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(inside, sizeof inside, "%s/keep", path);
    FILE *f = fopen(inside, "w");
    fputs("keep", f);
    fclose(f);
    int before = entries(dir);
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_atomic_write(path, "x", 1, &err), SHAPE_EIO);
    assert_non_null(strstr(err.message, path));
    assert_content(inside, "keep");
    assert_int_equal(entries(dir), before);
    snprintf(inside, sizeof inside, "%s/", path);
    assert_int_equal(shape_atomic_write(inside, "x", 1, &err), SHAPE_EINVAL);
}

static void test_failed_write_keeps_old_file(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/ckpt.json", dir);
    shape_err err;
    assert_int_equal(shape_atomic_write(path, "old content", 11, &err), SHAPE_OK);
    int before = entries(dir);
    /* files may not grow past 4 KiB: the write of 1 MiB fails with EFBIG */
    struct rlimit old, small;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 4096;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    size_t big = 1 << 20;
    char *data = malloc(big);
    memset(data, 'n', big);
    shape_err_clear(&err);
    int rc = shape_atomic_write(path, data, big, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    assert_int_equal(rc, SHAPE_EIO);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "write"));
    assert_content(path, "old content");
    assert_int_equal(entries(dir), before); /* the temporary file is gone */
    /* and with the limit lifted the same write succeeds */
    assert_int_equal(shape_atomic_write(path, data, big, &err), SHAPE_OK);
    size_t len;
    char *got = slurp(path, &len);
    assert_int_equal(len, big);
    free(got);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_replace),
        cmocka_unit_test(test_missing_directory),
        cmocka_unit_test(test_target_is_a_directory),
        cmocka_unit_test(test_failed_write_keeps_old_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

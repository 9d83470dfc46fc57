/* test_profile_atomic.c — shape_atomic_write (shape/atomic_file.h), which
 * writes the profile document and checkpoints: creates and replaces files,
 * keeps an existing file's permissions, leaves no temporary file, and on
 * failure leaves the old file intact and names the path. Failures are real,
 * not simulated, and work as root (where permission bits do not stop
 * writes): a directory that does not exist, a target that is a directory,
 * and a write cut short by RLIMIT_FSIZE (EFBIG). Special files are never
 * replaced: a character device (made with mknod here; skipped where that is
 * not allowed), a FIFO and "-" are written through, a symbolic link's
 * target is replaced with the link kept, a dangling link and a socket are
 * refused. */
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
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
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

static void test_special_files_are_written_through(void **state)
{
    (void)state;
    shape_err err;
    char path[512], target[512];
    struct stat st;

    /* a character device: /dev/null's numbers, in our own folder */
    snprintf(path, sizeof path, "%s/null", dir);
    if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0) {
        assert_int_equal(shape_atomic_write(path, "gone", 4, &err), SHAPE_OK);
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISCHR(st.st_mode)); /* still the device, not a file */
        unlink(path);
    } else {
        print_message("mknod not allowed here (%s): device case skipped\n", strerror(errno));
    }

    /* a FIFO: a child reads what is written through it */
    snprintf(path, sizeof path, "%s/fifo", dir);
    snprintf(target, sizeof target, "%s/fifo.got", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int in = open(path, O_RDONLY), out = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char buf[64];
        ssize_t n;
        while (in >= 0 && (n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) _exit(1);
        _exit(0);
    }
    assert_int_equal(shape_atomic_write(path, "through a pipe", 14, &err), SHAPE_OK);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_content(target, "through a pipe");
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    unlink(path);
    unlink(target);

    /* "-": standard output (pointed at a file for the test) */
    snprintf(target, sizeof target, "%s/stdout.got", dir);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO), out = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && out >= 0);
    dup2(out, STDOUT_FILENO);
    close(out);
    int rc = shape_atomic_write("-", "to stdout", 9, &err);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_int_equal(rc, SHAPE_OK);
    assert_content(target, "to stdout");
    unlink(target);
}

static void test_links_followed_sockets_refused(void **state)
{
    (void)state;
    shape_err err;
    char link[512], target[512];
    struct stat st;
    snprintf(target, sizeof target, "%s/real.json", dir);
    snprintf(link, sizeof link, "%s/link.json", dir);
    assert_int_equal(shape_atomic_write(target, "old", 3, &err), SHAPE_OK);
    assert_int_equal(symlink("real.json", link), 0);
    assert_int_equal(shape_atomic_write(link, "new", 3, &err), SHAPE_OK);
    assert_content(target, "new");
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* the link is kept */
    unlink(target);
    shape_err_clear(&err);
    assert_int_equal(shape_atomic_write(link, "x", 1, &err), SHAPE_EIO); /* now dangling */
    assert_non_null(strstr(err.message, "symbolic link to a missing file"));
    assert_int_equal(lstat(target, &st), -1); /* nothing created */
    unlink(link);

    char sock_path[512];
    snprintf(sock_path, sizeof sock_path, "%s/sock", dir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    assert_true(strlen(sock_path) < sizeof addr.sun_path);
    memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    shape_err_clear(&err);
    assert_int_equal(shape_atomic_write(sock_path, "x", 1, &err), SHAPE_EIO);
    assert_non_null(strstr(err.message, "socket"));
    assert_int_equal(lstat(sock_path, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    close(fd);
    unlink(sock_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_and_replace),
        cmocka_unit_test(test_missing_directory),
        cmocka_unit_test(test_target_is_a_directory),
        cmocka_unit_test(test_failed_write_keeps_old_file),
        cmocka_unit_test(test_special_files_are_written_through),
        cmocka_unit_test(test_links_followed_sockets_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

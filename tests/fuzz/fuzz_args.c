/* fuzz_args.c — libFuzzer target for the command-line parser (shape/cli.h).
 *
 * Why: every command's arguments go through shape_args_parse and its getters;
 * whatever the words, the parser must answer with a parsed set or one
 * message, never a crash, a leak or a read out of bounds.
 * How: the input is split into argv at NUL and newline bytes (up to 64
 * words) and parsed against a command table holding every option kind
 * (flag, value with a short name, list, K=V list) and positional bounds;
 * on success every option is read back through every getter (flag, value,
 * nth, int and double with bounds) and the positionals walked; the help of
 * the command is printed to /dev/null once per input.
 * Invariants (abort when broken): a failure has a message and its code and
 * no result; a value read back is a NUL-terminated string; shape_args_int
 * gives a value within its bounds or a failure with a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/cli.h"

static int run_nothing(const shape_args *args, shape_err *err)
{
    (void)args, (void)err;
    return SHAPE_OK;
}

static const shape_arg_spec specs[] = {
    {"output", 'o', SHAPE_ARG_VALUE, "FILE", NULL, "An output."},
    {"batch-size", 0, SHAPE_ARG_VALUE, "N", "65536", "A count."},
    {"rate", 'r', SHAPE_ARG_VALUE, "X", "100", "A real."},
    {"follow", 'f', SHAPE_ARG_FLAG, NULL, NULL, "A flag."},
    {"option", 0, SHAPE_ARG_LIST, "KEY=VALUE", NULL, "A list."},
    {"header", 0, SHAPE_ARG_KV_LIST, "K=V", NULL, "A K=V list."},
    {0},
};
static const shape_command cmd = {"fuzz", "A command of every option kind.", "URI", 0, 2, specs, "Epilog.",
                                  run_nothing};

static void check_failure(int rc, const shape_err *err)
{
    if (rc == SHAPE_OK) return;
    if (err->code != rc || !err->message[0] || memchr(err->message, '\0', sizeof err->message) == NULL) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_WORDS = 64 };
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_WORDS + 1];
    int argc = 0;
    char *p = text, *end = text + size;
    while (p <= end && argc < MAX_WORDS) {
        char *q = p;
        while (q < end && *q != '\0' && *q != '\n') q++;
        *q = '\0';
        argv[argc++] = p;
        p = q + 1;
    }
    argv[argc] = NULL;
    shape_args *args = NULL;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_args_parse(&cmd, argc, argv, &args, &err);
    if (rc != SHAPE_OK) {
        if (args) abort();
        check_failure(rc, &err);
        free(text);
        return 0;
    }
    if (!args || shape_args_command(args) != &cmd) abort();
    (void)shape_args_help_requested(args);
    for (const shape_arg_spec *s = specs; s->name; s++) {
        (void)shape_args_flag(args, s->name);
        const char *v = shape_args_value(args, s->name);
        if (v) (void)strlen(v);
        size_t n = s->kind == SHAPE_ARG_FLAG ? 0 : shape_args_count(args, s->name); /* a flag has no values */
        for (size_t i = 0; i < n; i++) {
            const char *w = shape_args_nth(args, s->name, i);
            if (!w) abort();
            (void)strlen(w);
        }
        int64_t iv = 0;
        rc = shape_args_int(args, s->name, -5, 1000000, 7, &iv, &err);
        check_failure(rc, &err);
        if (rc == SHAPE_OK && (iv < -5 || iv > 1000000)) abort();
        double dv = 0;
        rc = shape_args_double(args, s->name, 0, 1, NULL, 1, &dv, &err);
        if (rc == SHAPE_OK && !(dv > 0)) abort();
        check_failure(rc, &err);
    }
    size_t np = shape_args_positional_count(args);
    if (!shape_args_help_requested(args) && np > 2) abort();
    for (size_t i = 0; i < np; i++) {
        const char *w = shape_args_positional(args, i);
        if (!w) abort();
        (void)strlen(w);
    }
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        shape_command_print_help(&cmd, null);
        fclose(null);
    }
    shape_args_free(args);
    free(text);
    return 0;
}

/* shape/cli.h — declarative sub-commands: options, help text, parsing.
 *
 * Why: every command, core or plugin, must behave the same on the command
 * line: `--help` lists every option with its default, an unknown option or a
 * missing value is one clear error, and parsing lives in one place.
 * How: a command is a static `shape_command` table (name, summary, option
 * specs, positional arity, run function). The core parses argv against it
 * into a `shape_args` and calls run(); a command never sees raw argv.
 *
 * Accepted forms: `--name VALUE`, `--name=VALUE`, `-x VALUE`, `--` to end
 * options; flags take no value. A value option given twice keeps the last
 * value; a list option keeps every value in order.
 */
#ifndef SHAPE_CLI_H
#define SHAPE_CLI_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum shape_arg_kind {
    SHAPE_ARG_FLAG,  /* --name, no value; counted */
    SHAPE_ARG_VALUE, /* --name VALUE; last one wins */
    SHAPE_ARG_LIST,  /* --name VALUE, repeatable; all kept */
    SHAPE_ARG_KV_LIST /* --name K=V [K=V ...], repeatable; all kept: also takes the
                       * arguments after it that look like K=V (have a '=', do not
                       * start with '-'), as argparse's nargs='+' would */
} shape_arg_kind;

typedef struct shape_arg_spec {
    const char *name;         /* long name without the dashes, e.g. "bootstrap-file" */
    char short_name;          /* single-letter alias or 0 */
    shape_arg_kind kind;
    const char *metavar;      /* shown in help for VALUE/LIST, e.g. "FILE" */
    const char *default_text; /* default shown in help, or NULL for "none" */
    const char *help;         /* one sentence */
} shape_arg_spec;

typedef struct shape_args shape_args;

typedef struct shape_command {
    const char *name;            /* "broker" */
    const char *summary;         /* one line for `shape help` */
    const char *positional;      /* e.g. "URI" for help, or NULL */
    int min_positional;
    int max_positional;          /* -1 = unbounded */
    const shape_arg_spec *args;  /* terminated by an entry whose name is NULL */
    const char *epilog;          /* extra help paragraph, or NULL */
    /* Runs the command. Returns SHAPE_OK or an error code with err filled.
     * `args` is owned by the caller and valid for the call. */
    int (*run)(const shape_args *args, shape_err *err);
} shape_command;

/* Parse argv (argv[0] is the first argument after the command name) against
 * cmd. On success *out owns the result (free with shape_args_free). `--help`
 * anywhere sets shape_args_help_requested() and skips the arity check. */
int shape_args_parse(const shape_command *cmd, int argc, char **argv,
                     shape_args **out, shape_err *err);
void shape_args_free(shape_args *args);

int shape_args_help_requested(const shape_args *args);
/* The command the args were parsed for. */
const shape_command *shape_args_command(const shape_args *args);

/* Number of times a flag was given (0 when absent). */
int shape_args_flag(const shape_args *args, const char *name);
/* Last value of a VALUE option, or NULL when absent. Owned by args. */
const char *shape_args_value(const shape_args *args, const char *name);
/* Values of a LIST (or VALUE) option, in order. Owned by args. */
size_t shape_args_count(const shape_args *args, const char *name);
const char *shape_args_nth(const shape_args *args, const char *name, size_t i);

size_t shape_args_positional_count(const shape_args *args);
const char *shape_args_positional(const shape_args *args, size_t i);

/* Integer value of an option, checked to lie in [min, max]; *out = dflt
 * when the option is absent. Error names the option and the bad value. */
int shape_args_int(const shape_args *args, const char *name, int64_t min,
                   int64_t max, int64_t dflt, int64_t *out, shape_err *err);

/* Real value of an option: finite and >= min (> min when min_exclusive);
 * *out = dflt when the option is absent. The one wording of a refusal:
 * "--NAME must be a number [of UNIT ]>= MIN, got 'TEXT'" (unit may be NULL). */
int shape_args_double(const shape_args *args, const char *name, double min, int min_exclusive,
                      const char *unit, double dflt, double *out, shape_err *err);

/* Strict decimal integer parse: whole string, no spaces, in [min, max]. */
int shape_parse_int64(const char *text, int64_t min, int64_t max, int64_t *out);

/* Print `shape NAME --help` text: usage, summary, every option with its
 * metavar, default and help, then the epilog. */
void shape_command_print_help(const shape_command *cmd, FILE *out);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

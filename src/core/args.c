/* args.c — parse a sub-command's argv against its declarative option table.
 *
 * Why: one parser for every command so `--help`, unknown options, missing
 * values and integer ranges read the same everywhere (see shape/cli.h).
 * How: each recognised option occurrence is stored as (spec index, value) in
 * argv order; look-ups scan that small array. Positionals are kept apart.
 * Nothing is copied: values point into the caller's argv, which outlives
 * the parse in every caller (main's argv).
 */
#include "shape/cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct occurrence {
    size_t spec;       /* index into cmd->args */
    const char *value; /* NULL for flags */
} occurrence;

struct shape_args {
    const shape_command *cmd;
    int help;
    occurrence *occ;
    size_t n_occ;
    const char **pos;
    size_t n_pos;
};

static long find_long(const shape_command *cmd, const char *name, size_t len)
{
    for (size_t i = 0; cmd->args && cmd->args[i].name; i++)
        if (strlen(cmd->args[i].name) == len && strncmp(cmd->args[i].name, name, len) == 0)
            return (long)i;
    return -1;
}

static long find_short(const shape_command *cmd, char c)
{
    for (size_t i = 0; cmd->args && cmd->args[i].name; i++)
        if (c && cmd->args[i].short_name == c) return (long)i;
    return -1;
}

static long find_spec(const shape_command *cmd, const char *name)
{
    return find_long(cmd, name, strlen(name));
}

void shape_args_free(shape_args *args)
{
    if (!args) return;
    free(args->occ);
    free(args->pos);
    free(args);
}

/* A further value of a K=V list: "KEY=VALUE", not an option, not a URI
 * (a positional such as kafka://h/t?x=1 has "://" before its '='). */
static int looks_like_kv(const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (arg[0] == '-' || !eq || eq == arg) return 0;
    const char *scheme = strstr(arg, "://");
    return !scheme || scheme > eq;
}

int shape_args_parse(const shape_command *cmd, int argc, char **argv,
                     shape_args **out, shape_err *err)
{
    *out = NULL;
    shape_args *a = calloc(1, sizeof *a);
    if (!a) return shape_err_set(err, SHAPE_ENOMEM, "out of memory parsing options");
    a->cmd = cmd;
    a->occ = calloc((size_t)argc + 1, sizeof *a->occ);
    a->pos = calloc((size_t)argc + 1, sizeof *a->pos);
    if (!a->occ || !a->pos) {
        shape_args_free(a);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory parsing options");
    }

    int only_positional = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            a->pos[a->n_pos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = 1;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            a->help = 1;
            continue;
        }
        long spec;
        const char *inline_value = NULL;
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            spec = find_long(cmd, name, len);
            if (eq) inline_value = eq + 1;
            if (spec < 0) {
                int shown = (int)(len > 64 ? 64 : len);
                shape_args_free(a);
                return shape_err_set(err, SHAPE_EINVAL,
                                     "unknown option '--%.*s' for 'shape %s' (see 'shape %s --help')",
                                     shown, name, cmd->name, cmd->name);
            }
        } else {
            spec = (arg[2] == '\0') ? find_short(cmd, arg[1]) : -1;
            if (spec < 0) {
                shape_args_free(a);
                return shape_err_set(err, SHAPE_EINVAL,
                                     "unknown option '%.64s' for 'shape %s' (see 'shape %s --help')",
                                     arg, cmd->name, cmd->name);
            }
        }
        const shape_arg_spec *s = &cmd->args[spec];
        const char *value = NULL;
        if (s->kind == SHAPE_ARG_FLAG) {
            if (inline_value) {
                shape_args_free(a);
                return shape_err_set(err, SHAPE_EINVAL, "option '--%s' takes no value", s->name);
            }
        } else if (inline_value) {
            value = inline_value;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            shape_args_free(a);
            return shape_err_set(err, SHAPE_EINVAL, "option '--%s' needs a value (%s)", s->name,
                                 s->metavar ? s->metavar : "VALUE");
        }
        a->occ[a->n_occ].spec = (size_t)spec;
        a->occ[a->n_occ].value = value;
        a->n_occ++;
        while (s->kind == SHAPE_ARG_KV_LIST && !only_positional && i + 1 < argc && looks_like_kv(argv[i + 1])) {
            a->occ[a->n_occ].spec = (size_t)spec;
            a->occ[a->n_occ].value = argv[++i];
            a->n_occ++;
        }
    }

    if (!a->help) {
        int n = (int)a->n_pos;
        if (n < cmd->min_positional) {
            shape_err_set(err, SHAPE_EINVAL, "'shape %s' needs %s (see 'shape %s --help')", cmd->name,
                          cmd->positional ? cmd->positional : "an argument", cmd->name);
            shape_args_free(a);
            return SHAPE_EINVAL;
        }
        if (cmd->max_positional >= 0 && n > cmd->max_positional) {
            shape_err_set(err, SHAPE_EINVAL, "unexpected argument '%.64s' for 'shape %s'",
                          a->pos[cmd->max_positional], cmd->name);
            shape_args_free(a);
            return SHAPE_EINVAL;
        }
    }
    *out = a;
    return SHAPE_OK;
}

int shape_args_help_requested(const shape_args *args) { return args->help; }

const shape_command *shape_args_command(const shape_args *args) { return args->cmd; }

int shape_args_flag(const shape_args *args, const char *name)
{
    long spec = find_spec(args->cmd, name);
    int n = 0;
    for (size_t i = 0; i < args->n_occ; i++)
        if ((long)args->occ[i].spec == spec) n++;
    return n;
}

size_t shape_args_count(const shape_args *args, const char *name)
{
    return (size_t)shape_args_flag(args, name);
}

const char *shape_args_nth(const shape_args *args, const char *name, size_t nth)
{
    long spec = find_spec(args->cmd, name);
    for (size_t i = 0; i < args->n_occ; i++)
        if ((long)args->occ[i].spec == spec && nth-- == 0) return args->occ[i].value;
    return NULL;
}

const char *shape_args_value(const shape_args *args, const char *name)
{
    long spec = find_spec(args->cmd, name);
    const char *last = NULL;
    for (size_t i = 0; i < args->n_occ; i++)
        if ((long)args->occ[i].spec == spec) last = args->occ[i].value;
    return last;
}

size_t shape_args_positional_count(const shape_args *args) { return args->n_pos; }

const char *shape_args_positional(const shape_args *args, size_t i)
{
    return i < args->n_pos ? args->pos[i] : NULL;
}

int shape_parse_int64(const char *text, int64_t min, int64_t max, int64_t *out)
{
    if (!text || !*text) return SHAPE_EINVAL;
    const char *p = text;
    if (*p == '-' || *p == '+') p++;
    if (*p < '0' || *p > '9') return SHAPE_EINVAL;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max) return SHAPE_EINVAL;
    *out = (int64_t)v;
    return SHAPE_OK;
}

int shape_args_int(const shape_args *args, const char *name, int64_t min, int64_t max,
                   int64_t dflt, int64_t *out, shape_err *err)
{
    const char *text = shape_args_value(args, name);
    if (!text) {
        *out = dflt;
        return SHAPE_OK;
    }
    if (shape_parse_int64(text, min, max, out) != SHAPE_OK)
        return shape_err_set(err, SHAPE_EINVAL,
                             "--%s must be an integer from %lld to %lld, got '%.32s'", name,
                             (long long)min, (long long)max, text);
    return SHAPE_OK;
}

int shape_args_double(const shape_args *args, const char *name, double min, int min_exclusive,
                      const char *unit, double dflt, double *out, shape_err *err)
{
    const char *text = shape_args_value(args, name);
    *out = dflt;
    if (!text) return SHAPE_OK;
    char *end = NULL;
    errno = 0;
    double v = text[0] ? strtod(text, &end) : NAN;
    if (!text[0] || *end || errno == ERANGE || !isfinite(v) || v < min || (min_exclusive && v == min))
        return shape_err_set(err, SHAPE_EINVAL, "--%s must be a number %s%s%s %g, got '%.40s'", name,
                             unit ? "of " : "", unit ? unit : "", unit ? (min_exclusive ? " >" : " >=")
                             : (min_exclusive ? ">" : ">="), min, text);
    *out = v;
    return SHAPE_OK;
}

void shape_command_print_help(const shape_command *cmd, FILE *out)
{
    fprintf(out, "usage: shape %s [options]%s%s\n\n%s\n", cmd->name,
            cmd->positional ? " " : "", cmd->positional ? cmd->positional : "", cmd->summary);
    fprintf(out, "\noptions:\n");
    for (size_t i = 0; cmd->args && cmd->args[i].name; i++) {
        const shape_arg_spec *s = &cmd->args[i];
        char left[96];
        int n;
        if (s->short_name)
            n = snprintf(left, sizeof left, "  -%c, --%s", s->short_name, s->name);
        else
            n = snprintf(left, sizeof left, "      --%s", s->name);
        if (s->kind != SHAPE_ARG_FLAG && n > 0 && (size_t)n < sizeof left)
            snprintf(left + n, sizeof left - (size_t)n, " %s", s->metavar ? s->metavar : "VALUE");
        fprintf(out, "%-34s %s", left, s->help);
        if (s->kind == SHAPE_ARG_LIST || s->kind == SHAPE_ARG_KV_LIST) fprintf(out, " (repeatable)");
        if (s->default_text) fprintf(out, " [default: %s]", s->default_text);
        else if (s->kind == SHAPE_ARG_FLAG) fprintf(out, " [default: off]");
        else fprintf(out, " [default: none]"); /* VALUE and LIST */
        fputc('\n', out);
    }
    fprintf(out, "%-34s %s\n", "  -h, --help", "Show this help and exit.");
    if (cmd->epilog) fprintf(out, "\n%s\n", cmd->epilog);
}

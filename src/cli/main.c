/* main.c — the `shape` command: global flags, dispatch to core and plugin
 * sub-commands, and the one-line error contract.
 *
 * Why: every sub-command shares one front door: `shape --version`,
 * `shape help [COMMAND]`, `shape COMMAND --help`, and on failure exactly one
 * line `shape: error: <message>` on stderr with exit 0/1/2 (shape_exit_code).
 * How: plugins are loaded from the search path first (shape/registry.h), then
 * the command is looked up among the core commands and the plugins' ones,
 * its argv parsed with shape_args_parse, and its run() called.
 */
#include <stdio.h>
#include <string.h>

#include "shape/cli.h"
#include "shape/registry.h"
#include "shape/version.h"
#include "cli/commands.h"

static const shape_command *const core_commands[] = {
    &shape_cmd_help,
    &shape_cmd_version,
    &shape_cmd_plugins,
    &shape_cmd_emit,
    &shape_cmd_domain,
    &shape_cmd_stream_read,
    &shape_cmd_stream_profile,
    &shape_cmd_profile_merge,
    &shape_cmd_profile_show,
    &shape_cmd_profile_report,
    NULL,
};

static shape_registry *registry;

shape_registry *shape_cli_registry(void) { return registry; }

const shape_command *const *shape_cli_core_commands(void) { return core_commands; }

static const shape_command *find_core(const char *name)
{
    for (size_t i = 0; core_commands[i]; i++)
        if (strcmp(core_commands[i]->name, name) == 0) return core_commands[i];
    return NULL;
}

const shape_command *shape_cli_find_command(const char *name, shape_err *err)
{
    const shape_command *cmd = find_core(name);
    if (cmd) return cmd;
    return shape_registry_command(registry, name, err);
}

static int fail(const shape_err *err)
{
    fprintf(stderr, "shape: error: %s\n", err->message);
    return shape_exit_code(err->code ? err->code : SHAPE_EINTERNAL);
}

int main(int argc, char **argv)
{
    shape_cli_tune_malloc();
    shape_err err;
    shape_err_clear(&err);
    registry = shape_registry_new();
    if (!registry) {
        shape_err_set(&err, SHAPE_ENOMEM, "out of memory");
        return fail(&err);
    }
    shape_registry_load_default(registry);

    const char *name = argc > 1 ? argv[1] : "help";
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) name = "version";
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) name = "help";
    if (name[0] == '-') {
        shape_err_set(&err, SHAPE_EINVAL, "unknown option '%.64s' (see 'shape help')", name);
        int rc = fail(&err);
        shape_registry_free(registry);
        return rc;
    }

    int rc = 0;
    const shape_command *cmd = shape_cli_find_command(name, &err);
    shape_args *args = NULL;
    if (!cmd) {
        rc = fail(&err);
    } else if (shape_args_parse(cmd, argc > 1 ? argc - 2 : 0, argv + 2, &args, &err) != SHAPE_OK) {
        rc = fail(&err);
    } else if (shape_args_help_requested(args)) {
        shape_command_print_help(cmd, stdout);
    } else {
        shape_err_clear(&err);
        int code = cmd->run(args, &err);
        if (code != SHAPE_OK) {
            if (err.code == SHAPE_OK) err.code = code;
            rc = fail(&err);
        }
    }
    fflush(stdout);
    shape_args_free(args);
    shape_registry_free(registry);
    return rc;
}

/* commands.h — the core sub-commands and what they share with main.c. */
#ifndef SHAPE_CLI_COMMANDS_H
#define SHAPE_CLI_COMMANDS_H

#include "shape/cli.h"
#include "shape/registry.h"

extern const shape_command shape_cmd_help;
extern const shape_command shape_cmd_version;
extern const shape_command shape_cmd_plugins;
extern const shape_command shape_cmd_emit;
extern const shape_command shape_cmd_domain;
extern const shape_command shape_cmd_stream_read;
extern const shape_command shape_cmd_stream_profile;
extern const shape_command shape_cmd_profile_merge;
extern const shape_command shape_cmd_profile_show;
extern const shape_command shape_cmd_profile_report;

/* The process's plugin registry (loaded before any command runs). */
shape_registry *shape_cli_registry(void);
/* NULL-terminated list of the core's own commands. */
const shape_command *const *shape_cli_core_commands(void);
/* A core or plugin command by name; err explains a missing one. */
const shape_command *shape_cli_find_command(const char *name, shape_err *err);
/* v with a comma between thousands ("4,670"), as the summaries and warnings
 * print counts (cmd_emit.c); cut to fit size. */
void shape_cli_thousands(char *out, size_t size, uint64_t v);
/* Keep freed heap memory for reuse (malloc_tuning.c); main() calls it first. */
void shape_cli_tune_malloc(void);

#endif

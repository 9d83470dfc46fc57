/* cmd_info.c — `shape help`, `shape version` and `shape plugins`.
 *
 * Why: people (and scripts) need to see what this shape can do: its version
 * and its bundled plugin's, every command with a one-line summary, and which
 * plugins were loaded from where, or refused and why.
 * How: all three read the process registry; `plugins --json` prints one JSON
 * object (jansson) so it can be piped into jq.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/commands.h"
#include "shape/version.h"

static void print_command_line(const shape_command *cmd)
{
    printf("  %-16s %s\n", cmd->name, cmd->summary);
}

static int run_help(const shape_args *args, shape_err *err)
{
    if (shape_args_positional_count(args) == 1) {
        const shape_command *cmd = shape_cli_find_command(shape_args_positional(args, 0), err);
        if (!cmd) return err->code;
        shape_command_print_help(cmd, stdout);
        return SHAPE_OK;
    }
    shape_registry *reg = shape_cli_registry();
    printf("usage: shape COMMAND [options]\n\n"
           "shape generates realistic event streams into Kafka and profiles Kafka topics.\n\n"
           "commands:\n");
    const shape_command *const *core = shape_cli_core_commands();
    for (size_t i = 0; core[i]; i++) print_command_line(core[i]);
    for (size_t i = 0; i < shape_registry_plugin_count(reg); i++) {
        const shape_plugin *p = shape_registry_plugin(reg, i, NULL);
        for (size_t j = 0; p->commands && p->commands[j]; j++) print_command_line(p->commands[j]);
    }
    printf("\n'shape COMMAND --help' lists a command's options and their defaults.\n"
           "Errors are one line 'shape: error: ...'; exit 0 success, 1 a policy limit, 2 bad input.\n");
    return SHAPE_OK;
}

static int run_version(const shape_args *args, shape_err *err)
{
    (void)args;
    (void)err;
    shape_registry *reg = shape_cli_registry();
    printf("shape %s\n", shape_version());
    for (size_t i = 0; i < shape_registry_plugin_count(reg); i++) {
        const char *origin;
        const shape_plugin *p = shape_registry_plugin(reg, i, &origin);
        printf("%s %s (%s)\n", p->name, p->version ? p->version : "?", origin);
    }
    for (size_t i = 0; i < shape_registry_refusal_count(reg); i++) {
        const char *origin, *reason;
        shape_registry_refusal(reg, i, &origin, &reason);
        printf("refused %s: %s\n", origin, reason);
    }
    return SHAPE_OK;
}

static json_t *schemes_json(const char *const *schemes)
{
    json_t *a = json_array();
    for (size_t i = 0; schemes && schemes[i]; i++) json_array_append_new(a, json_string(schemes[i]));
    return a;
}

static json_t *plugins_json(const shape_registry *reg)
{
    json_t *plugins = json_array();
    for (size_t i = 0; i < shape_registry_plugin_count(reg); i++) {
        const char *origin;
        const shape_plugin *p = shape_registry_plugin(reg, i, &origin);
        json_t *sources = json_array(), *emitters = json_array(), *commands = json_array();
        for (size_t j = 0; p->sources && p->sources[j]; j++)
            json_array_append_new(sources, json_pack("{s:s, s:o}", "name", p->sources[j]->name,
                                                     "schemes", schemes_json(p->sources[j]->schemes)));
        for (size_t j = 0; p->emitters && p->emitters[j]; j++)
            json_array_append_new(emitters,
                                  json_pack("{s:s, s:o}", "name", p->emitters[j]->name, "schemes",
                                            schemes_json(p->emitters[j]->schemes)));
        for (size_t j = 0; p->commands && p->commands[j]; j++)
            json_array_append_new(commands, json_string(p->commands[j]->name));
        json_array_append_new(plugins,
                              json_pack("{s:s, s:s?, s:s, s:s?, s:o, s:o, s:o}", "name", p->name,
                                        "version", p->version, "path", origin, "summary", p->summary,
                                        "sources", sources, "emitters", emitters, "commands",
                                        commands));
    }
    json_t *refused = json_array();
    for (size_t i = 0; i < shape_registry_refusal_count(reg); i++) {
        const char *origin, *reason;
        shape_registry_refusal(reg, i, &origin, &reason);
        json_array_append_new(refused, json_pack("{s:s, s:s}", "path", origin, "reason", reason));
    }
    return json_pack("{s:s, s:i, s:o, s:o}", "core_version", shape_version(), "plugin_abi",
                     SHAPE_PLUGIN_ABI_VERSION, "plugins", plugins, "refused", refused);
}

static int run_plugins(const shape_args *args, shape_err *err)
{
    json_t *doc = plugins_json(shape_cli_registry());
    if (!doc) return shape_err_set(err, SHAPE_ENOMEM, "out of memory listing plugins");
    if (shape_args_flag(args, "json")) {
        json_dumpf(doc, stdout, JSON_COMPACT);
        fputc('\n', stdout);
        json_decref(doc);
        return SHAPE_OK;
    }
    size_t index;
    json_t *p;
    json_array_foreach(json_object_get(doc, "plugins"), index, p)
    {
        printf("%s %s  %s\n  %s\n", json_string_value(json_object_get(p, "name")),
               json_string_value(json_object_get(p, "version")),
               json_string_value(json_object_get(p, "path")),
               json_string_value(json_object_get(p, "summary")));
        const char *roles[] = {"sources", "emitters"};
        for (int r = 0; r < 2; r++) {
            size_t k, s;
            json_t *t, *scheme;
            json_array_foreach(json_object_get(p, roles[r]), k, t)
            {
                printf("  %s %s:", r == 0 ? "source " : "emitter", json_string_value(json_object_get(t, "name")));
                json_array_foreach(json_object_get(t, "schemes"), s, scheme)
                    printf(" %s://", json_string_value(scheme));
                putchar('\n');
            }
        }
        size_t k;
        json_t *c;
        json_array_foreach(json_object_get(p, "commands"), k, c)
            printf("  command  %s\n", json_string_value(c));
    }
    json_array_foreach(json_object_get(doc, "refused"), index, p)
        printf("refused %s: %s\n", json_string_value(json_object_get(p, "path")),
               json_string_value(json_object_get(p, "reason")));
    if (json_array_size(json_object_get(doc, "plugins")) == 0 &&
        json_array_size(json_object_get(doc, "refused")) == 0)
        printf("no plugins found (set SHAPE_PLUGIN_PATH to a folder of plugin modules)\n");
    json_decref(doc);
    return SHAPE_OK;
}

static const shape_arg_spec no_args[] = {{0}};

const shape_command shape_cmd_help = {
    .name = "help",
    .summary = "List the commands, or show one command's options.",
    .positional = "[COMMAND]",
    .min_positional = 0,
    .max_positional = 1,
    .args = no_args,
    .run = run_help,
};

const shape_command shape_cmd_version = {
    .name = "version",
    .summary = "Print the version of shape and of each plugin (also: shape --version).",
    .max_positional = 0,
    .args = no_args,
    .run = run_version,
};

static const shape_arg_spec plugins_args[] = {
    {"json", 0, SHAPE_ARG_FLAG, NULL, NULL, "Print one JSON object instead of text."},
    {0},
};

const shape_command shape_cmd_plugins = {
    .name = "plugins",
    .summary = "List the plugins found, their URI schemes and commands, and any refused.",
    .max_positional = 0,
    .args = plugins_args,
    .run = run_plugins,
};

/* impostor_kafka.c — a module named shape-kafka that the core must refuse.
 *
 * Why: when the first shape-kafka.so on the search path is unusable, the
 * user must be told so (`shape broker` fails naming shape-kafka, "refused"
 * and the reason) instead of shape silently picking another copy or saying
 * the command does not exist. The module file is shape-kafka.so, so it
 * shadows the real one by file name, as an outdated copy would.
 * How: the plugin name is "shape-kafka" but abi_version is one ahead of the
 * core's, so the registry refuses it before reading anything past `version`.
 */
#include "shape/plugin.h"

static const shape_plugin plugin = {
    .abi_version = SHAPE_PLUGIN_ABI_VERSION + 1,
    .flags = SHAPE_PLUGIN_BUNDLED,
    .name = "shape-kafka",
    .version = SHAPE_VERSION,
    .summary = "an impostor shape-kafka for another plugin ABI; must be refused",
};

SHAPE_PLUGIN_EXPORT const shape_plugin *shape_plugin_entry(void) { return &plugin; }

/* abi_mismatch.c — a plugin built for a plugin ABI this shape does not speak.
 *
 * Why: the contract says a module whose abi_version differs from the core's
 * SHAPE_PLUGIN_ABI_VERSION is refused, and refused *by name*, so a user can
 * tell which plugin to rebuild. tests/contract/test_plugins.sh points
 * SHAPE_PLUGIN_PATH at this module's directory and checks exactly that.
 * How: only the four ABI-stable leading members are meaningful; the rest of
 * the struct is what a future ABI might hold and must never be read.
 */
#include "shape/plugin.h"

static const shape_plugin plugin = {
    .abi_version = SHAPE_PLUGIN_ABI_VERSION + 1,
    .flags = 0,
    .name = "shape-abi-future",
    .version = "9.9.9",
    .summary = "built for the next plugin ABI; must be refused",
};

SHAPE_PLUGIN_EXPORT const shape_plugin *shape_plugin_entry(void) { return &plugin; }

/* bundled_version_mismatch.c — a "bundled" plugin from another release.
 *
 * Why: a plugin flagged SHAPE_PLUGIN_BUNDLED ships with the core and must
 * carry the core's exact SHAPE_VERSION; a leftover module from an older
 * install must be refused with both versions named, not half-work.
 * How: right ABI, BUNDLED flag, a version no release will ever have.
 */
#include "shape/plugin.h"

static const shape_plugin plugin = {
    .abi_version = SHAPE_PLUGIN_ABI_VERSION,
    .flags = SHAPE_PLUGIN_BUNDLED,
    .name = "shape-old",
    .version = "0.0.0-other",
    .summary = "bundled plugin of another release; must be refused",
};

SHAPE_PLUGIN_EXPORT const shape_plugin *shape_plugin_entry(void) { return &plugin; }

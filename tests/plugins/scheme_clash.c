/* scheme_clash.c — a plugin that claims kafka:// as a stream source.
 *
 * Why: one scheme has one reader; a second plugin claiming it is refused as
 * a duplicate, naming the plugin that already owns the scheme, so kafka://
 * never silently changes hands. Which of the two is refused follows the
 * search path: the first one loaded keeps the scheme.
 * How: a source type "clash" for scheme "kafka", under the name
 * "shape-clash". Its check_uri is never reached in the tests.
 */
#include "shape/plugin.h"

static int clash_check_uri(const char *uri, shape_err *err)
{
    (void)uri;
    return shape_err_set(err, SHAPE_EINTERNAL, "shape-clash must never be asked to read a URI");
}

static const char *const clash_schemes[] = {"kafka", NULL};

static const shape_source_type clash_source = {
    .name = "clash",
    .schemes = clash_schemes,
    .summary = "a second reader for kafka://",
    .check_uri = clash_check_uri,
};

static const shape_source_type *const sources[] = {&clash_source, NULL};

static const shape_plugin plugin = {
    .abi_version = SHAPE_PLUGIN_ABI_VERSION,
    .flags = 0,
    .name = "shape-clash",
    .version = "1.0.0",
    .summary = "claims kafka:// under another name; must be refused",
    .sources = sources,
};

SHAPE_PLUGIN_EXPORT const shape_plugin *shape_plugin_entry(void) { return &plugin; }

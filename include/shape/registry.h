/* shape/registry.h — the plugins a shape process has, keyed by URI scheme.
 *
 * Why: commands ask "who reads kafka://?" or "who provides `broker`?" without
 * knowing where plugins live; when nobody does, the answer says which plugin
 * would and why it is not here (not found, or refused and why).
 * How: plugins are added either as modules found on a search path (dlopen +
 * shape_plugin_entry) or directly from a static table (tests, embedders).
 * Each is checked (ABI version, bundled-version match, duplicate names and
 * schemes) before it is accepted; refusals are kept with their reasons.
 *
 * Search path, first match of a plugin name wins:
 *   1. each directory of $SHAPE_PLUGIN_PATH (':'-separated)
 *   2. <dir of the shape executable>/plugins           (the build tree)
 *   3. <dir of the shape executable>/../lib/shape/plugins (an install prefix;
 *      "lib" is the configured CMAKE_INSTALL_LIBDIR)
 *   4. the install directory compiled in (SHAPE_PLUGIN_INSTALL_DIR)
 * Every `*.so` file in those directories is tried, except a file name an
 * earlier directory already had: that earlier module wins even when it was
 * refused, so a broken override is reported rather than bypassed.
 */
#ifndef SHAPE_REGISTRY_H
#define SHAPE_REGISTRY_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>

#include "shape/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shape_registry shape_registry;

shape_registry *shape_registry_new(void);
/* Frees the registry; modules stay mapped (see registry.c), but pointers
 * obtained from the registry must not be used afterwards. */
void shape_registry_free(shape_registry *reg);

/* Accept a plugin description. `origin` says where it came from (a path, or
 * "built-in"); copied. A refused plugin is recorded (see refusals) and the
 * reason returned in err with SHAPE_EINVAL. */
int shape_registry_add(shape_registry *reg, const shape_plugin *plugin, const char *origin,
                       shape_err *err);

/* dlopen one module file and add it. Failures are recorded as refusals. */
int shape_registry_load_file(shape_registry *reg, const char *path, shape_err *err);

/* Try every *.so in a directory (sorted by name). A missing directory is not
 * an error; refused modules are recorded and skipped. */
void shape_registry_load_dir(shape_registry *reg, const char *dir);

/* Load the whole search path described above. */
void shape_registry_load_default(shape_registry *reg);

/* Look-ups. *_for_uri fill err with a message that names the scheme (never
 * the URI, which may hold credentials), the plugin that provides it when it
 * is a known one, and why that plugin is missing or refused. */
const shape_source_type *shape_registry_source_for_uri(const shape_registry *reg,
                                                       const char *uri, shape_err *err);
const shape_emitter_type *shape_registry_emitter_for_uri(const shape_registry *reg,
                                                         const char *uri, shape_err *err);
const shape_command *shape_registry_command(const shape_registry *reg, const char *name,
                                            shape_err *err);

/* Enumeration, for `shape --version`, `shape help` and `shape plugins`. */
size_t shape_registry_plugin_count(const shape_registry *reg);
const shape_plugin *shape_registry_plugin(const shape_registry *reg, size_t i,
                                          const char **origin);
size_t shape_registry_refusal_count(const shape_registry *reg);
/* origin: the file; reason: the sentence. Owned by the registry. */
void shape_registry_refusal(const shape_registry *reg, size_t i, const char **origin,
                            const char **reason);

/* The scheme of a URI, lower-cased, into buf ("" when it has none).
 * Returns the length written. */
size_t shape_uri_scheme(const char *uri, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

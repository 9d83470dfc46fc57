/* shape/plugin.h — what a plugin module gives the core.
 *
 * Why: `kafka://` (and anything else outside the core) arrives as a plugin so
 * the core never links a Kafka client. A plugin is a shared object that
 * exports one function, shape_plugin_entry(), returning a static description:
 * its stream sources and emitters keyed by URI scheme, and extra commands.
 *
 * ABI: the first four members of struct shape_plugin (abi_version, flags,
 * name, version) keep their place in every ABI version, so the core can name
 * a plugin it refuses. Everything after them belongs to the ABI version in
 * abi_version; a plugin whose abi_version differs from the core's
 * SHAPE_PLUGIN_ABI_VERSION is refused, by name, with a hint to rebuild.
 * A plugin flagged SHAPE_PLUGIN_BUNDLED is released with the core and must
 * also carry the core's exact version (SHAPE_VERSION).
 *
 * Ownership: everything a plugin returns is static and lives as long as the
 * module stays loaded (the registry keeps it loaded until shape_registry_free).
 *
 * Writing one: see docs/plugins/authoring.md.
 */
#ifndef SHAPE_PLUGIN_H
#define SHAPE_PLUGIN_H

#include <stdint.h>

#include "shape/cli.h"
#include "shape/error.h"
#include "shape/source.h"
#include "shape/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A stream source type: reads URIs of its schemes as Arrow micro-batches.
 * (The read calls join this table with the decoder and source work.) */
typedef struct shape_source_type {
    const char *name;           /* "kafka" */
    const char *const *schemes; /* NULL-terminated, lower case: {"kafka", NULL} */
    const char *summary;        /* one line */
    /* Check a URI's form without touching the network. Must never copy a
     * credential found in the URI into err. */
    int (*check_uri)(const char *uri, shape_err *err);
    /* Open an instance reading uri from start (see shape/source.h); NULL
     * when the plugin cannot read yet. */
    shape_source_open_fn open;
} shape_source_type;

/* An emitter type: writes events to URIs of its schemes. */
typedef struct shape_emitter_type {
    const char *name;
    const char *const *schemes;
    const char *summary;
    int (*check_uri)(const char *uri, shape_err *err);
} shape_emitter_type;

#define SHAPE_PLUGIN_BUNDLED 0x1u /* released with the core: versions must match */

typedef struct shape_plugin {
    /* --- stable across ABI versions --- */
    uint32_t abi_version; /* SHAPE_PLUGIN_ABI_VERSION the plugin was built with */
    uint32_t flags;       /* SHAPE_PLUGIN_* */
    const char *name;     /* "shape-kafka" */
    const char *version;  /* the plugin's own version, e.g. "0.1.0" */
    /* --- ABI version 1 --- */
    const char *summary;
    const shape_source_type *const *sources;   /* NULL-terminated, or NULL */
    const shape_emitter_type *const *emitters; /* NULL-terminated, or NULL */
    const shape_command *const *commands;      /* NULL-terminated, or NULL */
} shape_plugin;

/* The one symbol a plugin module exports. */
#define SHAPE_PLUGIN_ENTRY_SYMBOL "shape_plugin_entry"
typedef const shape_plugin *(*shape_plugin_entry_fn)(void);

#if defined(__GNUC__)
#define SHAPE_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define SHAPE_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
}
#endif
#endif

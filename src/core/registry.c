/* registry.c — plugin discovery, checking and look-up by scheme or command.
 *
 * Why: the core must find `kafka://` and `shape broker` in a module it does
 * not link, refuse modules built for another ABI or release, and explain
 * clearly when something a user asked for is missing (see shape/registry.h).
 * How: modules are dlopen'ed RTLD_NOW|RTLD_LOCAL and stay mapped until the
 * process exits, even after the registry is freed: unloading a library that
 * started threads (librdkafka does) is unsafe, and leak checkers need the
 * module's symbols at exit. Accepted plugins and refusals live in two small arrays;
 * look-ups scan them (a handful of plugins, a handful of schemes). A static
 * table of well-known providers lets a missing plugin be named in errors.
 */
#define _GNU_SOURCE
#include "shape/registry.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SHAPE_PLUGIN_INSTALL_DIR
#define SHAPE_PLUGIN_INSTALL_DIR "/usr/local/lib/shape/plugins"
#endif
/* The plugin folder below an install prefix (CMake: LIBDIR/shape/plugins). */
#ifndef SHAPE_PLUGIN_RELATIVE_DIR
#define SHAPE_PLUGIN_RELATIVE_DIR "lib/shape/plugins"
#endif

typedef struct loaded {
    const shape_plugin *plugin;
    char *origin;
    void *handle; /* dlopen handle or NULL for a static plugin */
} loaded;

typedef struct refusal {
    char *origin;
    char *name; /* plugin name when it could be read, else NULL */
    char *reason;
} refusal;

struct shape_registry {
    loaded *plugins;
    size_t n_plugins;
    refusal *refusals;
    size_t n_refusals;
    char searched[1024]; /* directories tried, for "not found" messages */
};

/* What the core knows ships with it, so errors can name the missing piece. */
static const struct {
    const char *what; /* scheme or command */
    const char *plugin;
} known_providers[] = {
    {"kafka", "shape-kafka"},
    {"broker", "shape-kafka"},
};

shape_registry *shape_registry_new(void) { return calloc(1, sizeof(shape_registry)); }

void shape_registry_free(shape_registry *reg)
{
    if (!reg) return;
    for (size_t i = 0; i < reg->n_plugins; i++) {
        free(reg->plugins[i].origin);
    }
    for (size_t i = 0; i < reg->n_refusals; i++) {
        free(reg->refusals[i].origin);
        free(reg->refusals[i].name);
        free(reg->refusals[i].reason);
    }
    free(reg->plugins);
    free(reg->refusals);
    free(reg);
}

static void record_refusal(shape_registry *reg, const char *origin, const char *name,
                           const char *reason)
{
    refusal *grown = realloc(reg->refusals, (reg->n_refusals + 1) * sizeof *grown);
    if (!grown) return;
    reg->refusals = grown;
    refusal *r = &reg->refusals[reg->n_refusals++];
    r->origin = strdup(origin ? origin : "?");
    r->name = name ? strdup(name) : NULL;
    r->reason = strdup(reason);
}

static int refuse(shape_registry *reg, const char *origin, const char *name, shape_err *err,
                  const char *fmt, const char *a, const char *b)
{
    shape_err local;
    if (!err) err = &local;
    shape_err_set(err, SHAPE_EINVAL, fmt, a, b);
    record_refusal(reg, origin, name, err->message);
    return SHAPE_EINVAL;
}

static const loaded *find_plugin(const shape_registry *reg, const char *name)
{
    for (size_t i = 0; i < reg->n_plugins; i++)
        if (strcmp(reg->plugins[i].plugin->name, name) == 0) return &reg->plugins[i];
    return NULL;
}

static int has_scheme(const char *const *schemes, const char *scheme)
{
    for (size_t i = 0; schemes && schemes[i]; i++)
        if (strcmp(schemes[i], scheme) == 0) return 1;
    return 0;
}

/* The plugin already accepted that claims one of `schemes` for the same role. */
static const char *scheme_owner(const shape_registry *reg, int emitters, const char *const *schemes,
                                const char **clash)
{
    for (size_t i = 0; i < reg->n_plugins; i++) {
        const shape_plugin *p = reg->plugins[i].plugin;
        if (!emitters) {
            for (size_t j = 0; p->sources && p->sources[j]; j++)
                for (size_t k = 0; schemes && schemes[k]; k++)
                    if (has_scheme(p->sources[j]->schemes, schemes[k])) {
                        *clash = schemes[k];
                        return p->name;
                    }
        } else {
            for (size_t j = 0; p->emitters && p->emitters[j]; j++)
                for (size_t k = 0; schemes && schemes[k]; k++)
                    if (has_scheme(p->emitters[j]->schemes, schemes[k])) {
                        *clash = schemes[k];
                        return p->name;
                    }
        }
    }
    return NULL;
}

static int check_plugin(shape_registry *reg, const shape_plugin *p, const char *origin,
                        shape_err *err)
{
    char buf[64];
    if (!p->name || !*p->name)
        return refuse(reg, origin, NULL, err, "plugin module %s has no name%s", origin, "");
    if (p->abi_version != SHAPE_PLUGIN_ABI_VERSION) {
        snprintf(buf, sizeof buf, "%u, this shape speaks ABI %d", (unsigned)p->abi_version,
                 SHAPE_PLUGIN_ABI_VERSION);
        refuse(reg, origin, p->name, err,
               "plugin '%s' was built for plugin ABI %s: rebuild it against this shape's headers",
               p->name, buf);
        return SHAPE_EINVAL;
    }
    if ((p->flags & SHAPE_PLUGIN_BUNDLED) && (!p->version || strcmp(p->version, SHAPE_VERSION) != 0)) {
        snprintf(buf, sizeof buf, "%.20s but this shape is " SHAPE_VERSION,
                 p->version ? p->version : "(none)");
        return refuse(reg, origin, p->name, err,
                      "plugin '%s' is version %s: a bundled plugin must match the core; reinstall shape",
                      p->name, buf);
    }
    const char *clash = NULL, *owner;
    for (size_t j = 0; p->sources && p->sources[j]; j++)
        if ((owner = scheme_owner(reg, 0, p->sources[j]->schemes, &clash)))
            return refuse(reg, origin, p->name, err,
                          "plugin '%s' reads a scheme already read by plugin '%s'", p->name, owner);
    for (size_t j = 0; p->emitters && p->emitters[j]; j++)
        if ((owner = scheme_owner(reg, 1, p->emitters[j]->schemes, &clash)))
            return refuse(reg, origin, p->name, err,
                          "plugin '%s' writes a scheme already written by plugin '%s'", p->name, owner);
    (void)clash;
    for (size_t j = 0; p->commands && p->commands[j]; j++) {
        shape_err ignored;
        if (shape_registry_command(reg, p->commands[j]->name, &ignored))
            return refuse(reg, origin, p->name, err,
                          "plugin '%s' adds command '%s', which another plugin already adds", p->name,
                          p->commands[j]->name);
    }
    return SHAPE_OK;
}

static int add_loaded(shape_registry *reg, const shape_plugin *plugin, const char *origin,
                      void *handle, shape_err *err)
{
    if (find_plugin(reg, plugin->name ? plugin->name : "")) {
        /* An earlier directory of the search path already gave this plugin. */
        return shape_err_set(err, SHAPE_EINVAL, "plugin '%s' is already loaded", plugin->name);
    }
    SHAPE_RETURN_NOT_OK(check_plugin(reg, plugin, origin, err));
    loaded *grown = realloc(reg->plugins, (reg->n_plugins + 1) * sizeof *grown);
    if (!grown) return shape_err_set(err, SHAPE_ENOMEM, "out of memory adding a plugin");
    reg->plugins = grown;
    loaded *l = &reg->plugins[reg->n_plugins];
    l->origin = strdup(origin);
    if (!l->origin) return shape_err_set(err, SHAPE_ENOMEM, "out of memory adding a plugin");
    l->plugin = plugin;
    l->handle = handle;
    reg->n_plugins++;
    return SHAPE_OK;
}

int shape_registry_add(shape_registry *reg, const shape_plugin *plugin, const char *origin,
                       shape_err *err)
{
    return add_loaded(reg, plugin, origin ? origin : "built-in", NULL, err);
}

int shape_registry_load_file(shape_registry *reg, const char *path, shape_err *err)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        return refuse(reg, path, NULL, err, "cannot load plugin module %s: %s", path,
                      why ? why : "unknown dlopen error");
    }
    shape_plugin_entry_fn entry;
    *(void **)&entry = dlsym(handle, SHAPE_PLUGIN_ENTRY_SYMBOL);
    if (!entry) {
        dlclose(handle);
        return refuse(reg, path, NULL, err, "%s is not a shape plugin (it has no %s function)", path,
                      SHAPE_PLUGIN_ENTRY_SYMBOL);
    }
    const shape_plugin *plugin = entry();
    if (!plugin) {
        dlclose(handle);
        return refuse(reg, path, NULL, err, "plugin module %s gave no description%s", path, "");
    }
    int rc = add_loaded(reg, plugin, path, handle, err);
    if (rc != SHAPE_OK) dlclose(handle);
    return rc;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void note_searched(shape_registry *reg, const char *dir)
{
    size_t used = strlen(reg->searched);
    snprintf(reg->searched + used, sizeof reg->searched - used, "%s%s", used ? ", " : "", dir);
}

void shape_registry_load_dir(shape_registry *reg, const char *dir)
{
    note_searched(reg, dir);
    DIR *d = opendir(dir);
    if (!d) return;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || e->d_name[0] == '.' || strcmp(e->d_name + len - 3, ".so") != 0) continue;
        char **grown = realloc(names, (n + 1) * sizeof *grown);
        if (!grown) break;
        names = grown;
        if ((names[n] = strdup(e->d_name)) != NULL) n++;
    }
    closedir(d);
    if (n > 1) qsort(names, n, sizeof *names, compare_names); /* names is NULL when the folder has none */
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        shape_err ignored;
        /* Skip modules whose file name an earlier directory already provided,
         * without loading them: the first one on the path wins, even when it
         * was refused, so a broken override is reported, not bypassed. */
        int duplicate = 0;
        for (size_t k = 0; k < reg->n_plugins && !duplicate; k++) {
            const char *base = strrchr(reg->plugins[k].origin, '/');
            duplicate = base && strcmp(base + 1, names[i]) == 0;
        }
        for (size_t k = 0; k < reg->n_refusals && !duplicate; k++) {
            const char *base = strrchr(reg->refusals[k].origin, '/');
            duplicate = base && strcmp(base + 1, names[i]) == 0;
        }
        if (!duplicate) shape_registry_load_file(reg, path, &ignored);
        free(names[i]);
    }
    free(names);
}

void shape_registry_load_default(shape_registry *reg)
{
    const char *env = getenv("SHAPE_PLUGIN_PATH");
    if (env && *env) {
        char *copy = strdup(env);
        char *save = NULL;
        for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
             dir = strtok_r(NULL, ":", &save))
            shape_registry_load_dir(reg, dir);
        free(copy);
    }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            char dir[PATH_MAX + sizeof "/../" SHAPE_PLUGIN_RELATIVE_DIR];
            snprintf(dir, sizeof dir, "%s/plugins", exe);
            shape_registry_load_dir(reg, dir);
            snprintf(dir, sizeof dir, "%s/../" SHAPE_PLUGIN_RELATIVE_DIR, exe);
            shape_registry_load_dir(reg, dir);
        }
    }
    shape_registry_load_dir(reg, SHAPE_PLUGIN_INSTALL_DIR);
}

size_t shape_uri_scheme(const char *uri, char *buf, size_t size)
{
    if (size == 0) return 0;
    buf[0] = '\0';
    const char *sep = strstr(uri, "://");
    if (!sep) return 0;
    size_t len = (size_t)(sep - uri);
    if (len == 0 || len >= size) return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)uri[i];
        /* RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
        if (!(isalpha(c) || (i > 0 && (isdigit(c) || c == '+' || c == '-' || c == '.')))) {
            buf[0] = '\0';
            return 0;
        }
        buf[i] = (char)tolower(c);
    }
    buf[len] = '\0';
    return len;
}

/* Explain why nobody provides `what` (a scheme or a command). */
static void explain_missing(const shape_registry *reg, const char *what, const char *role,
                            shape_err *err)
{
    const char *provider = NULL;
    for (size_t i = 0; i < sizeof known_providers / sizeof known_providers[0]; i++)
        if (strcmp(known_providers[i].what, what) == 0) provider = known_providers[i].plugin;
    if (!provider) {
        shape_err_set(err, SHAPE_ENOTFOUND, "%s (see 'shape help' and 'shape plugins')", role);
        return;
    }
    for (size_t i = 0; i < reg->n_refusals; i++) {
        const refusal *r = &reg->refusals[i];
        if (r->name && strcmp(r->name, provider) == 0) {
            shape_err_set(err, SHAPE_ENOTFOUND, "%s: the %s plugin provides it but was refused: %s",
                          role, provider, r->reason);
            return;
        }
    }
    shape_err_set(err, SHAPE_ENOTFOUND,
                  "%s: the %s plugin provides it and was not found (searched %s); "
                  "reinstall shape or set SHAPE_PLUGIN_PATH to the folder holding %s.so",
                  role, provider, reg->searched[0] ? reg->searched : "nowhere", provider);
}

#define FIND_BY_SCHEME(member, type, noun)                                                  \
    char scheme[32];                                                                        \
    if (shape_uri_scheme(uri, scheme, sizeof scheme) == 0) {                                \
        shape_err_set(err, SHAPE_EINVAL, "not a URI with a scheme (expected SCHEME://...)"); \
        return NULL;                                                                        \
    }                                                                                       \
    for (size_t i = 0; i < reg->n_plugins; i++) {                                           \
        const shape_plugin *p = reg->plugins[i].plugin;                                     \
        for (size_t j = 0; p->member && p->member[j]; j++)                                  \
            if (has_scheme(p->member[j]->schemes, scheme)) return p->member[j];             \
    }                                                                                       \
    char role[96];                                                                          \
    snprintf(role, sizeof role, "no installed " noun " for %s:// URIs", scheme);            \
    explain_missing(reg, scheme, role, err);                                                \
    return (const type *)NULL;

const shape_source_type *shape_registry_source_for_uri(const shape_registry *reg, const char *uri,
                                                       shape_err *err)
{
    FIND_BY_SCHEME(sources, shape_source_type, "stream source")
}

const shape_emitter_type *shape_registry_emitter_for_uri(const shape_registry *reg,
                                                         const char *uri, shape_err *err)
{
    FIND_BY_SCHEME(emitters, shape_emitter_type, "emitter")
}

const shape_command *shape_registry_command(const shape_registry *reg, const char *name,
                                            shape_err *err)
{
    for (size_t i = 0; i < reg->n_plugins; i++) {
        const shape_plugin *p = reg->plugins[i].plugin;
        for (size_t j = 0; p->commands && p->commands[j]; j++)
            if (strcmp(p->commands[j]->name, name) == 0) return p->commands[j];
    }
    char role[96];
    snprintf(role, sizeof role, "unknown command '%.40s'", name);
    explain_missing(reg, name, role, err);
    return NULL;
}

size_t shape_registry_plugin_count(const shape_registry *reg) { return reg->n_plugins; }

const shape_plugin *shape_registry_plugin(const shape_registry *reg, size_t i, const char **origin)
{
    if (i >= reg->n_plugins) return NULL;
    if (origin) *origin = reg->plugins[i].origin;
    return reg->plugins[i].plugin;
}

size_t shape_registry_refusal_count(const shape_registry *reg) { return reg->n_refusals; }

void shape_registry_refusal(const shape_registry *reg, size_t i, const char **origin,
                            const char **reason)
{
    if (i >= reg->n_refusals) return;
    if (origin) *origin = reg->refusals[i].origin;
    if (reason) *reason = reg->refusals[i].reason;
}

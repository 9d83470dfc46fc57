/* domains.c — the registry of domains `shape emit DOMAIN` knows: the
 * built-in ones, a generation-schema file given by path, and NAME.json in
 * the folders of --domain-path or SHAPE_DOMAIN_PATH.
 *
 * Why: one place maps a name to a domain type, so the command and the
 * library never list domains themselves; a new built-in domain is one line
 * in BUILTIN, and domains from elsewhere (generation-schema files) are one
 * more step in shape_domain_lookup.
 * How: a NULL-terminated table of type getters, searched by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shape/domain.h"
#include "shape/generate_retail.h"
#include "shape/generate_schema.h"

static const shape_domain_type *(*const BUILTIN[])(void) = {
    shape_retail_domain_type,
    NULL,
};

const shape_domain_type *shape_domain_builtin(size_t i)
{
    for (size_t k = 0; BUILTIN[k]; k++)
        if (k == i) return BUILTIN[k]();
    return NULL;
}

static int is_path(const char *name)
{
    size_t n = strlen(name);
    return strchr(name, '/') != NULL || (n > 5 && strcmp(name + n - 5, ".json") == 0);
}

/* NAME.json in one of the ':'-separated folders of `dirs`: 1 found (path
 * written), 0 not. */
static int find_in_dirs(const char *dirs, const char *name, char *path, size_t cap)
{
    for (const char *p = dirs; p && *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n > 0 && n + strlen(name) + 7 < cap) {
            snprintf(path, cap, "%.*s/%s.json", (int)n, p, name);
            struct stat st;
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) return 1;
        }
        p = end ? end + 1 : p + n;
    }
    return 0;
}

int shape_domain_lookup(const char *name, const shape_domain_type **out, shape_err *err)
{
    return shape_domain_lookup_in(name, NULL, out, err);
}

int shape_domain_lookup_in(const char *name, const char *dirs, const shape_domain_type **out, shape_err *err)
{
    *out = NULL;
    const shape_domain_type *t;
    if (name && name[0] && is_path(name)) return shape_schema_domain_load(name, out, err);
    for (size_t i = 0; (t = shape_domain_builtin(i)) != NULL; i++)
        if (name && strcmp(t->name, name) == 0) {
            *out = t;
            return SHAPE_OK;
        }
    char path[1100];
    const char *env = getenv("SHAPE_DOMAIN_PATH");
    if (name && name[0] && (find_in_dirs(dirs, name, path, sizeof path) || find_in_dirs(env, name, path, sizeof path)))
        return shape_schema_domain_load(path, out, err);
    char list[256] = "";
    size_t used = 0;
    for (size_t i = 0; (t = shape_domain_builtin(i)) != NULL && used < sizeof list - 1; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", t->name);
    return shape_err_set(err, SHAPE_EINVAL, "unknown domain '%.60s'; available: %s", name ? name : "", list);
}

void shape_domain_type_free(const shape_domain_type *type) { shape_schema_domain_free(type); }

int shape_domain_has_preset(const shape_domain_type *type, const char *preset)
{
    const char *p;
    for (size_t i = 0; preset && (p = type->preset_name(type, i)) != NULL; i++)
        if (strcmp(p, preset) == 0) return 1;
    return 0;
}

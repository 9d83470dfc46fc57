/* domains.c — the registry of domains `shape emit DOMAIN` knows.
 *
 * Why: one place maps a name to a domain type, so the command and the
 * library never list domains themselves; a new built-in domain is one line
 * in BUILTIN, and domains from elsewhere (generation-schema files) are one
 * more step in shape_domain_lookup.
 * How: a NULL-terminated table of type getters, searched by name.
 */
#include <stdio.h>
#include <string.h>

#include "shape/domain.h"
#include "shape/generate_retail.h"

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

int shape_domain_lookup(const char *name, const shape_domain_type **out, shape_err *err)
{
    *out = NULL;
    const shape_domain_type *t;
    for (size_t i = 0; (t = shape_domain_builtin(i)) != NULL; i++)
        if (name && strcmp(t->name, name) == 0) {
            *out = t;
            return SHAPE_OK;
        }
    char list[256] = "";
    size_t used = 0;
    for (size_t i = 0; (t = shape_domain_builtin(i)) != NULL && used < sizeof list - 1; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", t->name);
    return shape_err_set(err, SHAPE_EINVAL, "unknown domain '%.60s'; available: %s", name ? name : "", list);
}

int shape_domain_has_preset(const shape_domain_type *type, const char *preset)
{
    const char *p;
    for (size_t i = 0; preset && (p = type->preset_name(type, i)) != NULL; i++)
        if (strcmp(p, preset) == 0) return 1;
    return 0;
}

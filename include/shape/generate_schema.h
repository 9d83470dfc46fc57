/* shape/generate_schema.h — domains from generation-schema files
 * (docs/DOMAINS.md): `shape emit PATH.json`.
 *
 * Why: a team testing a payments, IoT or clickstream pipeline describes its
 * own tables, columns and strategies in one JSON file and gets the same
 * guarantees as the built-in retail domain: counter-based (every value a
 * pure function of seed, table, column and row), bounded memory, resumable
 * byte-identically, foreign keys that always point at an existing parent,
 * computed totals equal to the sum of their children.
 * How: shape_schema_domain_parse validates the whole document (every error
 * is one line naming the table, the column and what to change) and returns a
 * shape_domain_type (shape/domain.h) that emit, the plan and the checkpoint
 * use like any other domain. Opening it at a preset and seed loads the
 * document again for that preset and seed.
 *
 * Ownership: the returned type is heap-owned by the caller and freed with
 * shape_schema_domain_free (which ignores types that are not schema
 * domains); every shape_domain opened from it must be closed first.
 */
#ifndef SHAPE_GENERATE_SCHEMA_H
#define SHAPE_GENERATE_SCHEMA_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>

#include "shape/domain.h"
#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse and validate text[0..len); datasets (NAME.json) are looked up in
 * `dir` (NULL: ".") and then SHAPE_REFERENCE_PATH. SHAPE_EINVAL on a bad
 * schema. */
int shape_schema_domain_parse(const char *text, size_t len, const char *dir, const shape_domain_type **out,
                              shape_err *err);
/* The same for a file (its folder is `dir`). */
int shape_schema_domain_load(const char *path, const shape_domain_type **out, shape_err *err);
/* 1 when type came from shape_schema_domain_parse/load. */
int shape_schema_domain_is(const shape_domain_type *type);
void shape_schema_domain_free(const shape_domain_type *type);

/* The schema type name of a value kind (enum shape_gen_kind): "integer",
 * "float", "string", "timestamp", "boolean", or "null". Static. */
const char *shape_schema_type_name(int kind);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

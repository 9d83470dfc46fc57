/* shape/options.h — the options a command hands to a source or an emitter.
 *
 * Why: `--options-file FILE`, every `--option KEY=VALUE` and the flags of a
 * command end up in one bag of typed values that a source or emitter reads
 * and validates once, up front, naming the bad key (librdkafka's habit).
 * How: an opaque handle over a JSON object. Keys keep the order in which
 * they were first set; setting a key again replaces its value in place
 * (later wins). The intended order of assembly is: the options file, then
 * each --option, then the flag-derived keys.
 *
 * Ownership: the handle owns every value it holds. A string returned by a
 * getter belongs to the handle and stays valid until the next change to the
 * handle (any set or load) or shape_options_free(), whichever comes first.
 *
 * Errors never contain an option's value (it may be a secret); they name
 * the key, and for --option syntax errors without '=' the text given.
 */
#ifndef SHAPE_OPTIONS_H
#define SHAPE_OPTIONS_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct json_t; /* jansson's value type; include <jansson.h> to use it */

typedef struct shape_options shape_options;

/* An empty set of options, or NULL when out of memory. */
shape_options *shape_options_new(void);
/* Free the handle and everything it owns. NULL is allowed. */
void shape_options_free(shape_options *o);
/* A deep copy (NULL: a new empty set); NULL when memory runs out. */
shape_options *shape_options_copy(const shape_options *src);

/* --option KEY=VALUE. The text is split at the first '='; an empty KEY or a
 * text without '=' is SHAPE_EINVAL. VALUE becomes the JSON value it spells
 * when it is one complete JSON value (`1`, `1.5`, `true`, `null`, `"x"`,
 * `{"a":1}`, `[1]`), otherwise the string VALUE itself (so `a=hello` and
 * `a=` give the strings "hello" and ""). Replaces an earlier KEY. */
int shape_options_set_kv(shape_options *o, const char *key_eq_value, shape_err *err);

/* --options-file PATH: read a UTF-8 JSON document that must be an object
 * and merge its keys in (they replace earlier ones). A leading UTF-8 byte
 * order mark is ignored. Errors name the file: cannot read, not valid JSON
 * (with line and column), not an object; after any of these nothing has
 * been merged. */
int shape_options_load_file(shape_options *o, const char *path, shape_err *err);

/* The same from bytes in memory (len bytes, need not be NUL-terminated);
 * `name` stands for the file name in messages. */
int shape_options_load_buffer(shape_options *o, const char *data, size_t len,
                              const char *name, shape_err *err);

/* Typed setters for flag-derived keys; each replaces an earlier value.
 * The string is copied. Fail on out of memory, a key or string that is not
 * valid UTF-8, or a double that is not finite. */
int shape_options_set_string(shape_options *o, const char *key, const char *value,
                             shape_err *err);
int shape_options_set_int(shape_options *o, const char *key, int64_t value, shape_err *err);
int shape_options_set_bool(shape_options *o, const char *key, int value, shape_err *err);
int shape_options_set_double(shape_options *o, const char *key, double value, shape_err *err);

/* 1 when the key is present (even with a JSON null value), else 0. */
int shape_options_has(const shape_options *o, const char *key);

/* Typed getters. An absent key, or one whose value is JSON null, gives the
 * default. A value of the wrong type is SHAPE_EINVAL naming the key
 * ("option 'batch_size' must be an integer"); *out is then untouched.
 *
 * _get_string: a JSON string; *out is owned by o (see above) or is dflt.
 * _get_int64:  a JSON integer, a real with an integral value in range
 *              (2.0), or a string holding a strict decimal integer ("42",
 *              "-7"); booleans and anything else are refused.
 * _get_double: a JSON number, or a string holding a decimal number
 *              ("1.5", "-2e3"); booleans, non-finite values refused.
 * _get_bool:   JSON true/false, the integers 1/0, or one of the strings
 *              "true"/"false"/"1"/"0"/"yes"/"no" (any case); *out is 1 or 0.
 */
int shape_options_get_string(const shape_options *o, const char *key, const char *dflt,
                             const char **out, shape_err *err);
int shape_options_get_int64(const shape_options *o, const char *key, int64_t dflt,
                            int64_t *out, shape_err *err);
int shape_options_get_double(const shape_options *o, const char *key, double dflt,
                             double *out, shape_err *err);
int shape_options_get_bool(const shape_options *o, const char *key, int dflt, int *out,
                           shape_err *err);

/* Refuse keys outside `known` (a NULL-terminated list): SHAPE_EINVAL with
 * "unknown <what> options: ['a', 'bogus']", the unknown keys sorted and
 * quoted the way Python prints a list of strings. */
int shape_options_check_known(const shape_options *o, const char *const *known,
                              const char *what, shape_err *err);

/* Called once per property of a nested object; `name` and `value` are
 * valid for the call only. Return SHAPE_OK to go on; any other code stops
 * the walk and is returned by shape_options_foreach_property (fill err,
 * which is the walker's own err, to say why). */
typedef int (*shape_options_property_fn)(const char *name, const char *value, void *ud,
                                         shape_err *err);

/* Walk the object under `key` (e.g. "config", extra librdkafka settings)
 * in its order, handing each property to cb as librdkafka-style text:
 * strings as they are, integers in decimal, other numbers in the shortest
 * text that reads back the same, booleans as "true"/"false". An absent or
 * null key calls nothing. A value under `key` that is not an object, or a
 * property whose value is null, an object or an array, is SHAPE_EINVAL
 * naming the key and the property (never the value). */
int shape_options_foreach_property(const shape_options *o, const char *key,
                                   shape_options_property_fn cb, void *ud, shape_err *err);

/* The underlying JSON object, borrowed: owned by o, valid until the next
 * change to o or its free. Do not modify it. */
const struct json_t *shape_options_json(const shape_options *o);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

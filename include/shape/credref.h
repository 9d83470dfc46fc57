/* shape/credref.h — credential references: where a secret lives, not the secret.
 *
 * Why: secret-bearing settings (SASL passwords, registry keys, signing
 * keys) are given as a reference so the secret itself never sits on a
 * command line, in shell history or in a process listing, and never in a
 * message: a message may name a reference, never what it resolved to.
 * How: three forms (reference spec-core.md §5):
 *
 *   env://NAME        the value of environment variable NAME
 *   file://PATH       the content of PATH minus one trailing "\n" (or
 *                     "\r\n"); refused when group or others have any
 *                     permission bit on it (run chmod 600 PATH)
 *   kv://VAULT/NAME   a secret store; form-checked, then refused: shape has
 *                     no resolver for kv:// references
 *
 * An empty resolution is an error. A resolved secret is a NUL-terminated
 * heap string owned by the caller, who must release it with
 * shape_secret_free() (which wipes it first).
 */
#ifndef SHAPE_CREDREF_H
#define SHAPE_CREDREF_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include "shape/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when s has "://" and the text before it is exactly env, file or kv;
 * else 0 (also for NULL). */
int shape_credref_is_reference(const char *s);

/* Resolve ref into *secret_out (caller frees with shape_secret_free). On
 * error *secret_out is NULL and err says why, naming the reference's
 * scheme and variable name or path, never a secret; a text that is not a
 * reference is not echoed at all (it may be a literal secret). A file must
 * be valid UTF-8 without NUL bytes. */
int shape_credref_resolve(const char *ref, char **secret_out, shape_err *err);

/* The same for material that is not secret (a public key or certificate):
 * file:// skips the permission rule; everything else is as above. */
int shape_credref_resolve_public(const char *ref, char **out, shape_err *err);

/* 1 when a setting of this name holds a secret, so that its value must
 * never be shown (and, where a command takes secrets only as references,
 * must be one). The one definition every module uses: case-insensitive;
 * the name contains password, passwd, secret, token, key, jaas, credential
 * or user_info / user.info, or has the word "sas" (split on . _ -), or
 * connection_string; a name ending in "location" (a file path, e.g.
 * ssl.key.location) is not a secret. */
int shape_credref_secret_name(const char *name);

/* Overwrite the string's bytes with zeros, then free it. NULL is allowed. */
void shape_secret_free(char *secret);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

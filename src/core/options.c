/* options.c — source and emitter options: one JSON object, typed access.
 *
 * Why: a command gathers options from three places (an options file, each
 * --option KEY=VALUE, its own flags) and a source or emitter must read them
 * with the same typing and the same error words everywhere (shape/options.h).
 * How: the handle wraps a jansson object, which keeps keys in insertion
 * order and replaces a value in place when a key is set again, so "later
 * wins" falls out of plain sets and json_object_update(). --option values
 * are tried as one complete JSON value (JSON_DECODE_ANY) and otherwise kept
 * as text. Getters coerce the few spellings a command line produces (a
 * number given as "42", a boolean given as "yes") and refuse the rest,
 * naming the key. No message ever carries an option's value: jansson's
 * parse errors quote the text near the fault, so that quote is cut off.
 */
#include "shape/options.h"
#include "shape/json.h" /* shape_json_buf */
#include "shape/json_write.h"
#include "shape/utf8.h"
#include "shape/cli.h" /* shape_parse_int64 */

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* An options file larger than this is surely a mistake (a wrong path). */
#define OPTIONS_FILE_MAX ((size_t)64 * 1024 * 1024)

struct shape_options {
    json_t *obj;
};

shape_options *shape_options_new(void)
{
    shape_options *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->obj = json_object();
    if (!o->obj) {
        free(o);
        return NULL;
    }
    return o;
}

shape_options *shape_options_copy(const shape_options *src)
{
    shape_options *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->obj = src ? json_deep_copy(src->obj) : json_object();
    if (!o->obj) {
        free(o);
        return NULL;
    }
    return o;
}

void shape_options_free(shape_options *o)
{
    if (!o) return;
    json_decref(o->obj);
    free(o);
}

const struct json_t *shape_options_json(const shape_options *o)
{
    return o->obj;
}

static int key_ok(const char *key, shape_err *err)
{
    if (!key || !*key) return shape_err_set(err, SHAPE_EINVAL, "an option key must not be empty");
    if (!shape_utf8_valid(key, strlen(key)))
        return shape_err_set(err, SHAPE_EINVAL, "an option key is not valid UTF-8");
    return SHAPE_OK;
}

/* Store v under key; takes v's reference whatever happens. */
static int put(shape_options *o, const char *key, json_t *v, shape_err *err)
{
    if (!v) return shape_err_set(err, SHAPE_ENOMEM, "out of memory setting option '%s'", key);
    if (json_object_set_new(o->obj, key, v) != 0)
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory setting option '%s'", key);
    return SHAPE_OK;
}

int shape_options_set_kv(shape_options *o, const char *text, shape_err *err)
{
    const char *eq = strchr(text, '=');
    if (!eq) return shape_err_set(err, SHAPE_EINVAL, "--option wants KEY=VALUE, got '%s'", text);
    if (eq == text)
        return shape_err_set(err, SHAPE_EINVAL, "--option wants KEY=VALUE, got an empty KEY");

    char *key = strndup(text, (size_t)(eq - text));
    if (!key) return shape_err_set(err, SHAPE_ENOMEM, "out of memory parsing --option");
    int rc = SHAPE_OK;
    if (!shape_utf8_valid(key, strlen(key))) {
        rc = shape_err_set(err, SHAPE_EINVAL, "--option wants KEY=VALUE, the KEY is not valid UTF-8");
        goto done;
    }

    const char *value = eq + 1;
    json_error_t jerr;
    json_t *v = json_loads(value, JSON_DECODE_ANY, &jerr);
    if (!v) {
        if (!shape_utf8_valid(value, strlen(value))) {
            rc = shape_err_set(err, SHAPE_EINVAL, "--option %s=...: the value is not valid UTF-8", key);
            goto done;
        }
        v = json_string(value);
    }
    rc = put(o, key, v, err);
done:
    free(key);
    return rc;
}

/* jansson ends most messages with " near '<text at the fault>'", which may
 * be part of a secret; keep only the description. */
static void cut_quote(char *text)
{
    char *near = strstr(text, " near '");
    if (near) *near = '\0';
}

int shape_options_load_buffer(shape_options *o, const char *data, size_t len, const char *name,
                              shape_err *err)
{
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
        data += 3;
        len -= 3;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(data, len, JSON_DECODE_ANY, &jerr);
    if (!doc) {
        cut_quote(jerr.text);
        return shape_err_set(err, SHAPE_EINVAL,
                             "options file '%s' is not valid JSON: line %d column %d: %s", name,
                             jerr.line, jerr.column, jerr.text);
    }
    int rc = SHAPE_OK;
    if (!json_is_object(doc))
        rc = shape_err_set(err, SHAPE_EINVAL, "options file '%s' must hold a JSON object", name);
    else if (json_object_update(o->obj, doc) != 0)
        rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory merging options file '%s'", name);
    json_decref(doc);
    return rc;
}

int shape_options_load_file(shape_options *o, const char *path, shape_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return shape_err_set(err, SHAPE_EIO, "cannot read options file '%s': %s", path,
                             strerror(errno));
    shape_json_buf buf = SHAPE_JSON_BUF_INIT;
    int rc = SHAPE_OK;
    for (;;) {
        if (shape_json_buf_reserve(&buf, 4096) != 0) {
            rc = shape_err_set(err, SHAPE_ENOMEM, "out of memory reading options file '%s'", path);
            goto done;
        }
        size_t got = fread(buf.data + buf.len, 1, buf.cap - buf.len - 1, f);
        buf.len += got;
        if (got == 0) break;
        if (buf.len > OPTIONS_FILE_MAX) {
            rc = shape_err_set(err, SHAPE_EINVAL, "options file '%s' is larger than %zu MiB", path,
                               OPTIONS_FILE_MAX >> 20);
            goto done;
        }
    }
    if (ferror(f)) {
        rc = shape_err_set(err, SHAPE_EIO, "cannot read options file '%s': %s", path,
                           strerror(errno ? errno : EIO));
        goto done;
    }
    rc = shape_options_load_buffer(o, buf.data, buf.len, path, err);
done:
    shape_json_buf_reset(&buf);
    fclose(f);
    return rc;
}

int shape_options_set_string(shape_options *o, const char *key, const char *value,
                             shape_err *err)
{
    SHAPE_RETURN_NOT_OK(key_ok(key, err));
    if (!shape_utf8_valid(value, strlen(value)))
        return shape_err_set(err, SHAPE_EINVAL, "option '%s': the value is not valid UTF-8", key);
    return put(o, key, json_string(value), err);
}

int shape_options_set_int(shape_options *o, const char *key, int64_t value, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(key_ok(key, err));
    return put(o, key, json_integer((json_int_t)value), err);
}

int shape_options_set_bool(shape_options *o, const char *key, int value, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(key_ok(key, err));
    return put(o, key, json_boolean(value), err);
}

int shape_options_set_double(shape_options *o, const char *key, double value, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(key_ok(key, err));
    if (!isfinite(value))
        return shape_err_set(err, SHAPE_EINVAL, "option '%s' must be a finite number", key);
    return put(o, key, json_real(value), err);
}

int shape_options_has(const shape_options *o, const char *key)
{
    return json_object_get(o->obj, key) != NULL;
}

/* The value under key, or NULL when absent or JSON null (= use the default). */
static json_t *lookup(const shape_options *o, const char *key)
{
    json_t *v = json_object_get(o->obj, key);
    return json_is_null(v) ? NULL : v;
}

int shape_options_get_string(const shape_options *o, const char *key, const char *dflt,
                             const char **out, shape_err *err)
{
    json_t *v = lookup(o, key);
    if (!v) {
        *out = dflt;
        return SHAPE_OK;
    }
    if (!json_is_string(v))
        return shape_err_set(err, SHAPE_EINVAL, "option '%s' must be a string", key);
    *out = json_string_value(v);
    return SHAPE_OK;
}

/* A real that holds an integer in int64 range. */
static int real_to_int64(double d, int64_t *out)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return 0;
    int64_t i = (int64_t)d;
    if ((double)i != d) return 0;
    *out = i;
    return 1;
}

int shape_options_get_int64(const shape_options *o, const char *key, int64_t dflt,
                            int64_t *out, shape_err *err)
{
    json_t *v = lookup(o, key);
    if (!v) {
        *out = dflt;
        return SHAPE_OK;
    }
    int64_t i;
    int ok = 0;
    if (json_is_integer(v)) {
        i = (int64_t)json_integer_value(v);
        ok = 1;
    } else if (json_is_real(v)) {
        ok = real_to_int64(json_real_value(v), &i);
    } else if (json_is_string(v)) {
        ok = shape_parse_int64(json_string_value(v), INT64_MIN, INT64_MAX, &i) == SHAPE_OK;
    }
    if (!ok) return shape_err_set(err, SHAPE_EINVAL, "option '%s' must be an integer", key);
    *out = i;
    return SHAPE_OK;
}

/* Strict decimal number: [sign] digits [. digits] [e [sign] digits], with
 * at least one digit before the exponent, finite. */
static int text_to_double(const char *s, double *out)
{
    const char *p = s;
    int digits = 0;
    if (*p == '-' || *p == '+') p++;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+') p++;
        if (*p < '0' || *p > '9') return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p != '\0') return 0;
    double d = strtod(s, NULL);
    if (!isfinite(d)) return 0;
    *out = d;
    return 1;
}

int shape_options_get_double(const shape_options *o, const char *key, double dflt, double *out,
                             shape_err *err)
{
    json_t *v = lookup(o, key);
    if (!v) {
        *out = dflt;
        return SHAPE_OK;
    }
    double d;
    int ok = 0;
    if (json_is_number(v)) {
        d = json_number_value(v);
        ok = 1;
    } else if (json_is_string(v)) {
        ok = text_to_double(json_string_value(v), &d);
    }
    if (!ok) return shape_err_set(err, SHAPE_EINVAL, "option '%s' must be a number", key);
    *out = d;
    return SHAPE_OK;
}

int shape_options_get_bool(const shape_options *o, const char *key, int dflt, int *out,
                           shape_err *err)
{
    json_t *v = lookup(o, key);
    if (!v) {
        *out = dflt ? 1 : 0;
        return SHAPE_OK;
    }
    int b = -1;
    if (json_is_boolean(v)) {
        b = json_is_true(v);
    } else if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i == 0 || i == 1) b = (int)i;
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strcasecmp(s, "true") || !strcmp(s, "1") || !strcasecmp(s, "yes")) b = 1;
        else if (!strcasecmp(s, "false") || !strcmp(s, "0") || !strcasecmp(s, "no")) b = 0;
    }
    if (b < 0) return shape_err_set(err, SHAPE_EINVAL, "option '%s' must be true or false", key);
    *out = b;
    return SHAPE_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Append s to out the way Python's repr() quotes a str: single quotes
 * unless s holds a ' and no ", backslash escapes for the quote, the
 * backslash and control characters. Returns the new end. */
static char *put_repr(char *out, const char *s)
{
    char q = (strchr(s, '\'') && !strchr(s, '"')) ? '"' : '\'';
    *out++ = q;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c == '\\' || c == (unsigned char)q) {
            *out++ = '\\';
            *out++ = (char)c;
        } else if (c == '\n' || c == '\r' || c == '\t') {
            *out++ = '\\';
            *out++ = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else if (c < 0x20 || c == 0x7F) {
            out += sprintf(out, "\\x%02x", c);
        } else {
            *out++ = (char)c;
        }
    }
    *out++ = q;
    return out;
}

static int is_known(const char *key, const char *const *known)
{
    for (size_t i = 0; known && known[i]; i++)
        if (strcmp(known[i], key) == 0) return 1;
    return 0;
}

int shape_options_check_known(const shape_options *o, const char *const *known,
                              const char *what, shape_err *err)
{
    size_t n = json_object_size(o->obj), n_bad = 0, room = 3;
    if (n == 0) return SHAPE_OK;
    const char **bad = malloc(n * sizeof *bad);
    if (!bad) return shape_err_set(err, SHAPE_ENOMEM, "out of memory checking %s options", what);
    const char *key;
    json_t *value;
    json_object_foreach(o->obj, key, value) {
        (void)value;
        if (is_known(key, known)) continue;
        bad[n_bad++] = key;
        room += 4 * strlen(key) + 4; /* worst case every byte is \xNN, quotes, ", " */
    }
    if (n_bad == 0) {
        free(bad);
        return SHAPE_OK;
    }
    qsort(bad, n_bad, sizeof *bad, cmp_str);
    char *list = malloc(room);
    if (!list) {
        free(bad);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory checking %s options", what);
    }
    char *end = list;
    *end++ = '[';
    for (size_t i = 0; i < n_bad; i++) {
        if (i) {
            *end++ = ',';
            *end++ = ' ';
        }
        end = put_repr(end, bad[i]);
    }
    *end++ = ']';
    *end = '\0';
    int rc = shape_err_set(err, SHAPE_EINVAL, "unknown %s options: %s", what, list);
    free(list);
    free(bad);
    return rc;
}

int shape_options_foreach_property(const shape_options *o, const char *key,
                                   shape_options_property_fn cb, void *ud, shape_err *err)
{
    json_t *obj = lookup(o, key);
    if (!obj) return SHAPE_OK;
    if (!json_is_object(obj))
        return shape_err_set(err, SHAPE_EINVAL,
                             "option '%s' must be a JSON object of properties", key);
    const char *name;
    json_t *v;
    json_object_foreach(obj, name, v) {
        char num[40];
        const char *text;
        if (json_is_string(v)) {
            text = json_string_value(v);
        } else if (json_is_integer(v)) {
            snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
            text = num;
        } else if (json_is_real(v)) {
            /* the shortest "%.Ng" that reads back (jansson holds no NaN) */
            *shape_format_f64(num, json_real_value(v), SHAPE_F64_PRINTF_G) = '\0';
            text = num;
        } else if (json_is_boolean(v)) {
            text = json_is_true(v) ? "true" : "false";
        } else {
            return shape_err_set(err, SHAPE_EINVAL,
                                 "option '%s': property '%s' must be a string, number or boolean",
                                 key, name);
        }
        if (err) shape_err_clear(err);
        int rc = cb(name, text, ud, err);
        if (rc != SHAPE_OK) {
            if (err && err->code == SHAPE_OK)
                shape_err_set(err, rc, "option '%s': property '%s' was refused", key, name);
            return rc;
        }
    }
    return SHAPE_OK;
}

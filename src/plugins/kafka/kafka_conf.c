/* kafka_conf.c — librdkafka settings refused without echoing their values
 * (see kafka_conf.h).
 *
 * Why: a refusal must name the setting and say why, and never show what the
 * user put in it: the value may be a secret under a name that does not look
 * like one. librdkafka 2.0.2's refusal texts seen in practice:
 *   Invalid value "V" for configuration property "P"
 *   Invalid value for configuration property "P": V
 *   Configuration property "P" value V' is outside allowed range A..B
 *     (V' is V re-printed: 9.87654e+08, -1 for an overflow, inf)
 *   Expected bool value for "P": true or false
 *   dlopen() failed: V.so: cannot open shared object file ... (plugin V)
 * How: the text is rewritten, not filtered: quoted words are kept only when
 * they are property names librdkafka knows (rd_kafka_conf_get answers for
 * them) and differ from the value; the number of a range message and the
 * tail of "Invalid value for configuration property "P": ..." are dropped;
 * then every remaining occurrence of the value, and of each of its parts
 * between ',', ';' and spaces (librdkafka quotes one item of a list), is
 * replaced. Short parts (under 3 bytes) are replaced only as whole words, so
 * a value "1" does not eat the digits of "1..1000".
 */
#include "kafka_conf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define HIDDEN "(value not shown)"

typedef struct text {
    char *p;
    size_t len, cap; /* cap counts the NUL */
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->cap == 0) return;
    if (n > t->cap - 1 - t->len) n = t->cap - 1 - t->len;
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static int known_property(const rd_kafka_conf_t *conf, const char *name, size_t len)
{
    char key[256], buf[1];
    if (len == 0 || len >= sizeof key) return 0;
    memcpy(key, name, len);
    key[len] = '\0';
    size_t size = sizeof buf;
    return rd_kafka_conf_get(conf, key, buf, &size) != RD_KAFKA_CONF_UNKNOWN;
}

/* Step 1: quoted words, range numbers and a property's ": ..." tail. */
static void redact_structure(const rd_kafka_conf_t *conf, const char *in, const char *name, const char *value,
                             text *out)
{
    static const char range_at[] = " is outside allowed range ";
    const char *range = strstr(in, range_at);
    for (const char *s = in; *s;) {
        if (*s == '"') {
            const char *end = strchr(s + 1, '"');
            if (!end) { /* an unclosed quote: nothing after it is trusted */
                put(out, "\"" HIDDEN, strlen("\"" HIDDEN));
                return;
            }
            size_t n = (size_t)(end - s - 1);
            int is_name = strlen(name) == n && memcmp(s + 1, name, n) == 0;
            int is_value = strlen(value) == n && memcmp(s + 1, value, n) == 0;
            int keep = is_name || (known_property(conf, s + 1, n) && !is_value);
            put(out, "\"", 1);
            if (keep) put(out, s + 1, n);
            else put(out, HIDDEN, strlen(HIDDEN));
            put(out, "\"", 1);
            s = end + 1;
            /* "Invalid value for configuration property "P": VALUE" */
            if (keep && s[0] == ':' && s[1] == ' ' && strncmp(in, "Invalid value for", 17) == 0) {
                put(out, ": " HIDDEN, strlen(": " HIDDEN));
                return;
            }
            continue;
        }
        if (range && strncmp(s, " value ", 7) == 0 && s + 6 <= range) {
            put(out, " value " HIDDEN, strlen(" value " HIDDEN));
            s = range;
            continue;
        }
        put(out, s, 1);
        s++;
    }
}

static int word_byte(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

/* Step 2: every occurrence of needle[0..n) in t, in place, by HIDDEN; a
 * needle shorter than anywhere_from only where it is a whole word. */
static void replace_all(text *t, const char *needle, size_t n, size_t anywhere_from)
{
    if (n == 0) return;
    char *copy = strdup(t->p);
    if (!copy) { /* cannot rewrite: say nothing rather than risk the value */
        t->len = 0;
        t->p[0] = '\0';
        put(t, HIDDEN, strlen(HIDDEN));
        return;
    }
    t->len = 0;
    t->p[0] = '\0';
    for (const char *s = copy; *s;) {
        int here = strncmp(s, needle, n) == 0;
        if (here && n < anywhere_from) here = (s == copy || !word_byte(s[-1])) && !word_byte(s[n]);
        if (here) {
            put(t, HIDDEN, strlen(HIDDEN));
            s += n;
        } else {
            put(t, s, 1);
            s++;
        }
    }
    free(copy);
}

/* The whole value, then each of its list items (librdkafka quotes the one
 * item it refused). */
static void redact_value(text *t, const char *value, size_t anywhere_from)
{
    replace_all(t, value, strlen(value), anywhere_from);
    for (const char *p = value; *p;) {
        size_t n = strcspn(p, ",; ");
        if (n && n < strlen(value)) replace_all(t, p, n, anywhere_from);
        p += n;
        p += strspn(p, ",; ");
    }
}

void shape_kafka_conf_redact(const rd_kafka_conf_t *conf, const char *reason, const char *name, const char *value,
                             char *out, size_t out_size)
{
    if (out_size == 0) return;
    out[0] = '\0';
    text t = {out, 0, out_size};
    redact_structure(conf, reason, name, value, &t);
    while (t.len && isspace((unsigned char)t.p[t.len - 1])) t.p[--t.len] = '\0';
    redact_value(&t, value, 3);
}

int shape_kafka_conf_set_redacted(rd_kafka_conf_t *conf, const char *what, const char *name, const char *value,
                                  int hide_reason, shape_err *err)
{
    char reason[512];
    reason[0] = '\0';
    rd_kafka_conf_res_t res = rd_kafka_conf_set(conf, name, value, reason, sizeof reason);
    if (res == RD_KAFKA_CONF_OK) return SHAPE_OK;
    if (hide_reason)
        return shape_err_set(err, SHAPE_EINVAL, "%s '%.80s' was refused (its value is not shown)", what, name);
    char shown[512];
    shape_kafka_conf_redact(conf, reason, name, value, shown, sizeof shown);
    return shape_err_set(err, SHAPE_EINVAL, "%s '%.80s' was refused: %.300s", what, name, shown);
}

/* ---- rd_kafka_new's refusals ------------------------------------------------ */

int shape_kafka_new_refused(const char *const *values, size_t n_values, const char *what, const char *reason,
                            int code, shape_err *err)
{
    char shown[512];
    text t = {shown, 0, sizeof shown};
    shown[0] = '\0';
    put(&t, reason, strlen(reason));
    while (t.len && isspace((unsigned char)t.p[t.len - 1])) t.p[--t.len] = '\0';
    /* every value set, not only the refused one: a short common one ("all",
     * "true") only as a whole word */
    for (size_t i = 0; i < n_values; i++)
        if (values[i]) redact_value(&t, values[i], 6);
    return shape_err_set(err, code, "%s: %.400s", what, shown);
}

int shape_kafka_debug(void)
{
    const char *v = getenv("SHAPE_DEBUG");
    return v && *v && strcmp(v, "0") != 0;
}

/* kafka_uri.c — parse `kafka://SERVERS/TOPIC` (reference spec-kafka.md §1).
 *
 * How: split like a generic URL (scheme, authority up to the next '/', '?'
 * or '#', path up to '?' or '#'; query and fragment ignored), then apply the
 * Kafka rules in the reference's order: credentials in the authority are
 * refused first (without echoing anything), then a wrong scheme or empty
 * authority, then the topic (leading '/' removed, percent-decoded, exactly
 * one path segment). We also refuse a topic Kafka itself would refuse, so
 * the user hears it before any connection is tried. The last two refusals
 * quote the URI, as the original 0.9.3 does ('kafka:///t'), so the user sees
 * what was wrong, but never its query or fragment and never a URI with an
 * '@' anywhere (credentials), and only the first 120 printable characters:
 * then they say "the supplied URI" as the reference's newest version does.
 */
#include "kafka_uri.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NOT_KAFKA "not a kafka URI: %s (kafka://host:9092[,host2:9092]/topic)"
#define ONE_TOPIC "the kafka URI needs one topic name: %s"
#define QUOTE_MAX 120

/* 'URI' (up to its query or fragment), or "the supplied URI" when it holds
 * an '@', a character that is not printable ASCII, or is longer than
 * QUOTE_MAX. */
static const char *quoted(const char *uri, char out[QUOTE_MAX + 3])
{
    size_t n = strcspn(uri, "?#");
    if (n > QUOTE_MAX || memchr(uri, '@', n) || memchr(uri, '\'', n)) return "the supplied URI";
    for (size_t i = 0; i < n; i++)
        if (uri[i] < 0x20 || uri[i] > 0x7e) return "the supplied URI";
    out[0] = '\'';
    memcpy(out + 1, uri, n);
    out[n + 1] = '\'';
    out[n + 2] = '\0';
    return out;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c = (char)tolower((unsigned char)c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Percent-decode [s, s+len) into a new string; malformed escapes are kept
 * literally, as a URL library would. */
static char *percent_decode(const char *s, size_t len)
{
    char *out = malloc(len + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < len && (hi = hex_value(s[i + 1])) >= 0 &&
            (lo = hex_value(s[i + 2])) >= 0) {
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return out;
}

int shape_kafka_topic_name_ok(const char *topic)
{
    size_t n = strlen(topic);
    if (n == 0 || n > 249 || strcmp(topic, ".") == 0 || strcmp(topic, "..") == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)topic[i];
        if (!(isalnum(c) || c == '.' || c == '_' || c == '-')) return 0;
    }
    return 1;
}

void shape_kafka_uri_free(shape_kafka_uri *uri)
{
    if (!uri) return;
    free(uri->servers);
    free(uri->topic);
    uri->servers = uri->topic = NULL;
}

/* Each server of the authority (host, host:port, [v6]:port, comma-separated)
 * must have a port from 1 to 65535 when it names one: librdkafka would take
 * 70000 as 4464 and connect somewhere else. */
static int check_ports(const char *authority, size_t len, shape_err *err)
{
    const char *end = authority + len;
    for (const char *p = authority; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        const char *bracket = memchr(p, ']', (size_t)(stop - p));
        const char *colon = NULL;
        for (const char *q = bracket ? bracket : p; q < stop; q++)
            if (*q == ':') colon = q;
        if (colon && (!bracket || colon == bracket + 1) && (bracket || !memchr(p, ':', (size_t)(colon - p)))) {
            const char *d = colon + 1;
            long port = 0;
            int ok = d < stop && stop - d <= 5;
            for (const char *q = d; ok && q < stop; q++) {
                ok = isdigit((unsigned char)*q);
                port = port * 10 + (*q - '0');
            }
            if (!ok || port < 1 || port > 65535)
                return shape_err_set(err, SHAPE_EINVAL, "the kafka URI's server '%.*s' has no valid port (1 to 65535)",
                                     (int)(stop - p < 80 ? stop - p : 80), p);
        }
        p = comma ? comma + 1 : end;
    }
    return SHAPE_OK;
}

int shape_kafka_uri_parse(const char *uri, shape_kafka_uri *out, shape_err *err)
{
    out->servers = out->topic = NULL;
    char q[QUOTE_MAX + 3];
    const char *sep = strstr(uri, "://");
    if (!sep) return shape_err_set(err, SHAPE_EINVAL, NOT_KAFKA, quoted(uri, q));
    const char *authority = sep + 3;
    size_t auth_len = strcspn(authority, "/?#");
    const char *path = authority + auth_len;
    size_t path_len = (*path == '/') ? strcspn(path, "?#") : 0;

    if (memchr(authority, '@', auth_len))
        return shape_err_set(err, SHAPE_EINVAL, "credentials must be supplied outside the URI");
    if ((size_t)(sep - uri) != 5 || strncasecmp(uri, "kafka", 5) != 0 || auth_len == 0)
        return shape_err_set(err, SHAPE_EINVAL, NOT_KAFKA, quoted(uri, q));
    SHAPE_RETURN_NOT_OK(check_ports(authority, auth_len, err));

    while (path_len > 0 && *path == '/') {
        path++;
        path_len--;
    }
    char *topic = percent_decode(path, path_len);
    if (!topic) return shape_err_set(err, SHAPE_ENOMEM, "out of memory parsing a kafka URI");
    if (topic[0] == '\0' || strchr(topic, '/')) {
        free(topic);
        return shape_err_set(err, SHAPE_EINVAL, ONE_TOPIC, quoted(uri, q));
    }
    if (!shape_kafka_topic_name_ok(topic)) {
        shape_err_set(err, SHAPE_EINVAL,
                      "the kafka URI's topic '%.64s' is not a Kafka topic name "
                      "(1 to 249 of letters, digits, '.', '_' and '-')",
                      topic);
        free(topic);
        return SHAPE_EINVAL;
    }
    out->servers = strndup(authority, auth_len);
    out->topic = topic;
    if (!out->servers) {
        shape_kafka_uri_free(out);
        return shape_err_set(err, SHAPE_ENOMEM, "out of memory parsing a kafka URI");
    }
    return SHAPE_OK;
}

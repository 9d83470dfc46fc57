/* test_kafka_uri.c — the kafka:// URI rules (reference spec-kafka.md §1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kafka_uri.h"

static void accepts(const char *uri, const char *servers, const char *topic)
{
    shape_kafka_uri parsed;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_kafka_uri_parse(uri, &parsed, &err);
    if (rc != SHAPE_OK) fail_msg("%s refused: %s", uri, err.message);
    assert_string_equal(parsed.servers, servers);
    assert_string_equal(parsed.topic, topic);
    shape_kafka_uri_free(&parsed);
}

static void refuses(const char *uri, const char *message)
{
    shape_kafka_uri parsed = {0};
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_kafka_uri_parse(uri, &parsed, &err), SHAPE_EINVAL);
    assert_int_equal(err.code, SHAPE_EINVAL);
    if (strstr(err.message, message) == NULL)
        fail_msg("%s: expected '%s' in '%s'", uri, message, err.message);
    assert_null(parsed.servers);
    assert_null(parsed.topic);
}

static void test_accepts_server_lists_verbatim(void **state)
{
    (void)state;
    accepts("kafka://broker-a:9092,broker-b:9092/orders", "broker-a:9092,broker-b:9092", "orders");
    accepts("kafka://h/t", "h", "t");
    accepts("KAFKA://h:1/t", "h:1", "t");
    accepts("kafka://h//t", "h", "t");
    accepts("kafka://h/t?ignored=1#frag", "h", "t");
    accepts("kafka://h/retail%2Devents", "h", "retail-events");
    accepts("kafka://[::1]:9092/t", "[::1]:9092", "t");
}

static void test_refuses_missing_topic_or_two_segments(void **state)
{
    (void)state;
    refuses("kafka://h", "needs one topic name");
    refuses("kafka://b:9092", "needs one topic name");
    refuses("kafka://b:9092/", "needs one topic name");
    refuses("kafka://h/a/b", "needs one topic name");
    refuses("kafka://b:9092/a/b", "needs one topic name");
    refuses("kafka://h/a%2Fb", "needs one topic name");
}

static void test_refuses_other_schemes_and_empty_authority(void **state)
{
    (void)state;
    refuses("kafka:///t", "not a kafka URI");
    refuses("http://h/t", "not a kafka URI");
    refuses("http://b:9092/t", "not a kafka URI");
    refuses("/tmp/x.csv", "not a kafka URI");
    refuses("kafkas://h/t", "not a kafka URI");
    refuses("", "not a kafka URI");
}

/* The refusals quote the URI as the original does, but never its query or
 * fragment, nor a URI with an '@', a quote or a control character, nor one
 * past 120 characters. */
static void test_refusals_quote_the_uri(void **state)
{
    (void)state;
    refuses("kafka:///t", "not a kafka URI: 'kafka:///t' (kafka://host:9092[,host2:9092]/topic)");
    refuses("/tmp/x.csv", "not a kafka URI: '/tmp/x.csv' (");
    refuses("kafka://h/a/b", "the kafka URI needs one topic name: 'kafka://h/a/b'");
    refuses("kafka://h/?token=sentinel", "needs one topic name: 'kafka://h/'");
    refuses("http://h/t#sentinel", "not a kafka URI: 'http://h/t' (");
    refuses("user:sentinel@h/t", "not a kafka URI: the supplied URI (");
    refuses("kafka://h/it's", "not a Kafka topic name");
    refuses("kafka:///it's", "not a kafka URI: the supplied URI (");
    refuses("kafka:///t\x01", "not a kafka URI: the supplied URI (");
    char longer[200];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    refuses(longer, "not a kafka URI: the supplied URI (");
    shape_kafka_uri parsed = {0};
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_kafka_uri_parse("kafka://h/a/b?secret=sentinel", &parsed, &err), SHAPE_EINVAL);
    assert_null(strstr(err.message, "sentinel"));
}

static void test_refuses_bad_topic_names(void **state)
{
    (void)state;
    refuses("kafka://h/a%20b", "not a Kafka topic name");
    refuses("kafka://h/..", "not a Kafka topic name");
    char uri[400] = "kafka://h/";
    memset(uri + 10, 'x', 250);
    uri[260] = '\0';
    refuses(uri, "not a Kafka topic name");
}

/* A port past 65535 would wrap (70000 is 4464 to librdkafka): refused. */
static void test_refuses_ports_out_of_range(void **state)
{
    (void)state;
    refuses("kafka://127.0.0.1:70000/t", "server '127.0.0.1:70000' has no valid port (1 to 65535)");
    refuses("kafka://a:9092,b:0/t", "server 'b:0' has no valid port");
    refuses("kafka://a:/t", "server 'a:' has no valid port");
    refuses("kafka://a:90x2/t", "has no valid port");
    refuses("kafka://[::1]:123456/t", "server '[::1]:123456' has no valid port");
    accepts("kafka://a:1,b:65535,c/t", "a:1,b:65535,c", "t");
    accepts("kafka://[::1]:9092/t", "[::1]:9092", "t");
    accepts("kafka://[::1]/t", "[::1]", "t");
}

static void test_credentials_refused_without_echo(void **state)
{
    (void)state;
    const char *sentinel = "credential-sentinel";
    const char *uris[] = {"kafka://user:credential-sentinel@host/events",
                          "kafka://credential-sentinel@host/events",
                          "http://user:credential-sentinel@host/events"};
    for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
        shape_kafka_uri parsed;
        shape_err err;
        assert_int_equal(shape_kafka_uri_parse(uris[i], &parsed, &err), SHAPE_EINVAL);
        assert_string_equal(err.message, "credentials must be supplied outside the URI");
        assert_null(strstr(err.message, sentinel));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts_server_lists_verbatim),
        cmocka_unit_test(test_refuses_missing_topic_or_two_segments),
        cmocka_unit_test(test_refuses_other_schemes_and_empty_authority),
        cmocka_unit_test(test_refuses_bad_topic_names),
        cmocka_unit_test(test_refusals_quote_the_uri),
        cmocka_unit_test(test_credentials_refused_without_echo),
        cmocka_unit_test(test_refuses_ports_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_wire_encode.c — the kafka:// emitter's registry-format step
 * (src/plugins/kafka/registry/wire_encode.c) against the fake registry,
 * in-process: option checks in the reference's order, registration once per
 * table before anything is encoded, subjects per strategy, the wire header,
 * per-event refusals that keep the JSON body, the poison cut of the whole wire
 * bytes, registry refusals and outages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "regfmt_arrays.h"
#include "registry/fake.h"
#include "registry/wire_encode.h"

/* Three events of table `t`: n (uint64, nullable), _shape_table, _shape_seq. */
static const uint64_t n_values[] = {1, (1ULL << 63) + 5, 3};
static const int32_t table_offsets[] = {0, 1, 2, 3};
static const char table_data[] = "ttt";
static const int64_t seqs[] = {5, 6, 7};

typedef struct fixture {
    struct ArrowSchema schema;
    struct ArrowArray array;
    shape_emit_message msgs[3];
    char json[3][64];
    shape_kafka_fake_registry *registry;
    shape_options *options;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    rt_column cols[] = {
        {.name = "n", .format = "L", .nullable = 1, .values = n_values},
        {.name = "_shape_table", .format = "u", .values = table_offsets, .data = table_data},
        {.name = "_shape_seq", .format = "l", .values = seqs},
    };
    rt_batch_make(cols, 3, 3, 0, &f->schema, &f->array);
    for (int i = 0; i < 3; i++) {
        snprintf(f->json[i], sizeof f->json[i], "{\"n\":%llu,\"_shape_table\":\"t\",\"_shape_seq\":%d}",
                 (unsigned long long)n_values[i], 5 + i);
        f->msgs[i] = (shape_emit_message){.value = f->json[i], .value_len = strlen(f->json[i]), .table = "t",
                                          .row_schema = &f->schema, .row_array = &f->array, .row = i};
    }
    assert_int_equal(shape_kafka_fake_registry_new(&f->registry, NULL), SHAPE_OK);
    f->options = shape_options_new();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rt_batch_release(&f->schema, &f->array);
    shape_kafka_fake_registry_free(f->registry);
    shape_options_free(f->options);
    free(f);
    return 0;
}

static void set(fixture *f, const char *key, const char *value)
{
    shape_err err;
    assert_int_equal(shape_options_set_string(f->options, key, value, &err), SHAPE_OK);
}

static int open_encoder(fixture *f, int flat, shape_kafka_wire_encoder **w, shape_err *err)
{
    shape_err_clear(err);
    return shape_kafka_wire_encoder_new(f->options, "orders", flat, shape_kafka_fake_registry_transport, f->registry, w, err);
}

static void expect_refusal(fixture *f, int flat, const char *text)
{
    shape_kafka_wire_encoder *w = NULL;
    shape_err err;
    assert_int_equal(open_encoder(f, flat, &w, &err), SHAPE_EINVAL);
    assert_null(w);
    assert_string_equal(err.message, text);
    assert_int_equal(shape_kafka_fake_registry_request_count(f->registry), 0); /* nothing sent */
}

static void test_json_needs_nothing(void **state)
{
    fixture *f = *state;
    shape_kafka_wire_encoder *w = (shape_kafka_wire_encoder *)1;
    shape_err err;
    assert_int_equal(open_encoder(f, 0, &w, &err), SHAPE_OK); /* even with cloudevents */
    assert_null(w);
    set(f, "event_format", "json");
    assert_int_equal(open_encoder(f, 1, &w, &err), SHAPE_OK);
    assert_null(w);
}

static void test_option_checks(void **state)
{
    fixture *f = *state;
    set(f, "event_format", "xml");
    expect_refusal(f, 1, "unknown event format 'xml'; choose from json, avro, protobuf, json-schema");
    set(f, "event_format", "protobuf");
    expect_refusal(f, 0, "--envelope cloudevents is JSON only: it cannot be combined with --event-format protobuf");
    set(f, "subject_strategy", "x");
    expect_refusal(f, 1, "unknown subject strategy 'x'; choose from topic, record, topic_record");
    set(f, "subject_strategy", "record");
    expect_refusal(f, 1, "--event-format protobuf needs a schema registry: --sink-config kafka.schema_registry_url=URL");
    set(f, "schema_registry_url", "registry.test:8081");
    expect_refusal(f, 1, "kafka.schema_registry_url 'registry.test:8081' is not an http(s) URL");
    set(f, "schema_registry_url", "http://registry.test:8081/");
    set(f, "schema_registry_password", "hunter2");
    shape_kafka_wire_encoder *w = NULL;
    shape_err err;
    assert_int_equal(open_encoder(f, 1, &w, &err), SHAPE_EINVAL);
    assert_null(strstr(err.message, "hunter2"));
    assert_non_null(strstr(err.message, "credential reference"));
    set(f, "schema_registry_password", "env://SHAPE_TEST_REGISTRY_PW");
    expect_refusal(f, 1,
                   "the schema registry needs both kafka.schema_registry_username and "
                   "kafka.schema_registry_password");
}

static void test_avro_register_once_and_frame(void **state)
{
    fixture *f = *state;
    set(f, "event_format", "avro");
    set(f, "schema_registry_url", "http://registry.test:8081");
    shape_kafka_wire_encoder *w;
    shape_err err;
    assert_int_equal(open_encoder(f, 1, &w, &err), SHAPE_OK);
    for (int round = 0; round < 2; round++) {
        shape_emit_message m[3];
        memcpy(m, f->msgs, sizeof m);
        assert_int_equal(shape_kafka_wire_encoder_encode(w, m, 3, &err), SHAPE_OK);
        /* uint64 beyond a long: refused with the reference's reason, JSON kept */
        assert_int_equal(m[1].outcome, SHAPE_EMIT_REFUSED);
        assert_string_equal(m[1].reason, "cannot encode as avro: column 'n' does not fit a long");
        assert_ptr_equal(m[1].value, f->json[1]);
        for (int i = 0; i < 3; i += 2) {
            assert_int_equal(m[i].outcome, SHAPE_EMIT_PENDING);
            const uint8_t *v = m[i].value;
            assert_true(m[i].value_len > 5);
            assert_memory_equal(v, "\x00\x00\x00\x00\x64", 5); /* magic, id 100 */
            /* union branch 1, then zig-zag n */
            assert_int_equal(v[5], 2);
            assert_int_equal(v[6], (uint8_t)(2 * n_values[i]));
        }
    }
    /* one registration, under <topic>-value */
    assert_int_equal(shape_kafka_fake_registry_request_count(f->registry), 1);
    const char *method, *path, *body;
    shape_kafka_fake_registry_request(f->registry, 0, &method, &path, &body);
    assert_string_equal(method, "POST");
    assert_string_equal(path, "/subjects/orders-value/versions");
    assert_null(strstr(body, "schemaType")); /* AVRO is the registry's default */
    shape_kafka_wire_encoder_free(w);
}

static void test_protobuf_and_json_schema_frames(void **state)
{
    fixture *f = *state;
    set(f, "schema_registry_url", "http://registry.test:8081");
    set(f, "subject_strategy", "topic_record");
    set(f, "event_format", "protobuf");
    shape_kafka_wire_encoder *w;
    shape_err err;
    assert_int_equal(open_encoder(f, 1, &w, &err), SHAPE_OK);
    shape_emit_message m[3];
    memcpy(m, f->msgs, sizeof m);
    assert_int_equal(shape_kafka_wire_encoder_encode(w, m, 3, &err), SHAPE_OK);
    for (int i = 0; i < 3; i++) { /* protobuf has a real uint64: nothing refused */
        assert_int_equal(m[i].outcome, SHAPE_EMIT_PENDING);
        assert_memory_equal(m[i].value, "\x00\x00\x00\x00\x64\x00", 6);
    }
    shape_kafka_wire_encoder_free(w);
    /* another format under the same subject: the registry refuses the change */
    set(f, "event_format", "json-schema");
    assert_int_equal(open_encoder(f, 1, &w, &err), SHAPE_OK);
    memcpy(m, f->msgs, sizeof m);
    assert_int_equal(shape_kafka_wire_encoder_encode(w, m, 3, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "refused the schema for subject orders-shape.events.t: Schema being "
                                        "registered is incompatible"));
    shape_kafka_wire_encoder_free(w);
    set(f, "subject_strategy", "record");
    assert_int_equal(open_encoder(f, 1, &w, &err), SHAPE_OK);
    memcpy(m, f->msgs, sizeof m);
    assert_int_equal(shape_kafka_wire_encoder_encode(w, m, 3, &err), SHAPE_OK);
    for (int i = 0; i < 3; i++) { /* header, then the flat JSON event itself */
        assert_int_equal(m[i].value_len, 5 + strlen(f->json[i]));
        assert_memory_equal(m[i].value, "\x00\x00\x00\x00\x65", 5);
        assert_memory_equal((const char *)m[i].value + 5, f->json[i], strlen(f->json[i]));
    }
    shape_kafka_wire_encoder_free(w);
    assert_int_equal(shape_kafka_fake_registry_subject_count(f->registry), 2);
    assert_string_equal(shape_kafka_fake_registry_subject(f->registry, 0), "orders-shape.events.t");
    assert_string_equal(shape_kafka_fake_registry_subject(f->registry, 1), "shape.events.t");
}

/* spec-kafka §4.9: a poisoned event's whole wire bytes are cut (header
 * included), after encoding the uncut event: for JSON Schema the uncut body,
 * which the runtime has already cut in value_len. */
static void test_poison_cuts_the_wire_bytes(void **state)
{
    fixture *f = *state;
    set(f, "schema_registry_url", "http://registry.test:8081");
    const char *formats[] = {"protobuf", "json-schema"};
    const char *strategies[] = {"record", "topic"}; /* a subject each */
    for (int k = 0; k < 2; k++) {
        set(f, "event_format", formats[k]);
        set(f, "subject_strategy", strategies[k]);
        shape_kafka_wire_encoder *w;
        shape_err err;
        assert_int_equal(open_encoder(f, 1, &w, &err), SHAPE_OK);
        shape_emit_message clean[3], m[3];
        memcpy(clean, f->msgs, sizeof clean);
        assert_int_equal(shape_kafka_wire_encoder_encode(w, clean, 3, &err), SHAPE_OK);
        size_t whole = clean[0].value_len;
        uint8_t saved[128];
        assert_true(whole < sizeof saved);
        memcpy(saved, clean[0].value, whole);
        assert_int_equal(clean[0].made_len, 0); /* not poisoned: nothing said */
        memcpy(m, f->msgs, sizeof m);
        m[0].poison = 1; /* as faults.c marks it: the body cut, its uncut length kept */
        m[0].uncut_len = m[0].value_len;
        m[0].value_len = m[0].value_len * 2 / 3;
        assert_int_equal(shape_kafka_wire_encoder_encode(w, m, 3, &err), SHAPE_OK);
        assert_int_equal(m[0].outcome, SHAPE_EMIT_PENDING);
        assert_int_equal(m[0].made_len, whole);
        assert_int_equal(m[0].value_len, whole * 2 / 3);
        assert_memory_equal(m[0].value, saved, whole * 2 / 3); /* a prefix of the clean wire bytes */
        assert_int_equal(m[1].made_len, 0);
        shape_kafka_wire_encoder_free(w);
    }
}

static void test_registry_failures(void **state)
{
    fixture *f = *state;
    set(f, "event_format", "avro");
    set(f, "schema_registry_url", "http://registry.test:8081");
    shape_kafka_wire_encoder *w;
    shape_err err;
    assert_int_equal(open_encoder(f, 1, &w, &err), SHAPE_OK);
    shape_emit_message m[3];
    /* down: a connection error (the runtime retries), no value touched */
    shape_kafka_fake_registry_set_down(f->registry, 1);
    memcpy(m, f->msgs, sizeof m);
    assert_int_equal(shape_kafka_wire_encoder_encode(w, m, 3, &err), SHAPE_ECONN);
    assert_string_equal(err.message, "schema registry error 503 for subject orders-value");
    for (int i = 0; i < 3; i++) assert_ptr_equal(m[i].value, f->json[i]);
    /* back: the retry registers and encodes */
    shape_kafka_fake_registry_set_down(f->registry, 0);
    assert_int_equal(shape_kafka_wire_encoder_encode(w, m, 3, &err), SHAPE_OK);
    shape_kafka_wire_encoder_free(w);
    /* a refusal stops the run, quoting the registry */
    assert_int_equal(shape_kafka_fake_registry_refuse(f->registry, "events-value", "Invalid schema: bad field"), SHAPE_OK);
    shape_kafka_wire_encoder *w2;
    assert_int_equal(shape_kafka_wire_encoder_new(f->options, "events", 1, shape_kafka_fake_registry_transport, f->registry,
                                             &w2, &err),
                     SHAPE_OK);
    memcpy(m, f->msgs, sizeof m);
    assert_int_equal(shape_kafka_wire_encoder_encode(w2, m, 3, &err), SHAPE_EINVAL);
    assert_string_equal(err.message, "schema registry refused the schema for subject events-value: "
                                     "Invalid schema: bad field");
    shape_kafka_wire_encoder_free(w2);
}

/* A send holding two tables (the sender merges due batches): the table the
 * registry cannot take now is left to retry, the other one goes out. */
static void test_outage_holds_back_only_its_table(void **state)
{
    fixture *f = *state;
    set(f, "event_format", "protobuf");
    set(f, "subject_strategy", "record");
    set(f, "schema_registry_url", "http://registry.test:8081");
    shape_kafka_wire_encoder *w;
    shape_err err;
    assert_int_equal(open_encoder(f, 1, &w, &err), SHAPE_OK);
    shape_emit_message m[6];
    memcpy(m, f->msgs, 3 * sizeof m[0]);
    memcpy(m + 3, f->msgs, 3 * sizeof m[0]);
    for (int i = 3; i < 6; i++) m[i].table = "u";
    shape_kafka_fake_registry_fail_next(f->registry, 1, 503); /* table t's registration */
    assert_int_equal(shape_kafka_wire_encoder_encode(w, m, 6, &err), SHAPE_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(m[i].outcome, SHAPE_EMIT_RETRY);
        assert_string_equal(m[i].reason, "schema registry error 503 for subject shape.events.t");
        assert_ptr_equal(m[i].value, f->json[i]);
    }
    for (int i = 3; i < 6; i++) {
        assert_int_equal(m[i].outcome, SHAPE_EMIT_PENDING);
        assert_memory_equal(m[i].value, "\x00\x00\x00\x00\x64\x00", 6);
    }
    /* t was asked once in that send, not once per message */
    assert_int_equal(shape_kafka_fake_registry_request_count(f->registry), 2);
    /* the retry registers t */
    memcpy(m, f->msgs, 3 * sizeof m[0]);
    assert_int_equal(shape_kafka_wire_encoder_encode(w, m, 3, &err), SHAPE_OK);
    for (int i = 0; i < 3; i++) assert_memory_equal(m[i].value, "\x00\x00\x00\x00\x65\x00", 6);
    shape_kafka_wire_encoder_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_json_needs_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_option_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_avro_register_once_and_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protobuf_and_json_schema_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poison_cuts_the_wire_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outage_holds_back_only_its_table, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

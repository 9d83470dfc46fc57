/* test_stream_checkpoint.c — the checks a resumed stream-read or
 * stream-profile makes of its checkpoint (shape/stream_checkpoint.h), and
 * the base64 the profiler state travels in (shape/base64.h).
 *
 * How: a valid stream-profile checkpoint is built the way the command
 * writes it (a real profiler state, base64, counters, offsets, schema) and
 * read back whole; then each member is damaged in turn — every damage must
 * be refused with the file named and "use another file", and leave a
 * zeroed resume (nothing half-loaded, nothing leaked: valgrind runs this
 * program). The stream-read reader and the byte parser get the same
 * treatment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "shape/atomic_file.h"
#include "shape/base64.h"
#include "shape/stream_checkpoint.h"
#include "test_profile_util.h"

#define PATH "dir/run.ck"
#define URI "kafka://h:9092/orders"

static const char *const counter_names[] = {"batches_read", "batches_processed", "reconnects"};

typedef struct fixture {
    shape_profile_config cfg;
    char fingerprint[256];
    shape_stream_profile_expect expect;
} fixture;

static void fixture_init(fixture *f)
{
    shape_profile_config_default(&f->cfg);
    shape_profile_config_fingerprint(&f->cfg, f->fingerprint, sizeof f->fingerprint);
    f->expect = (shape_stream_profile_expect){.uri = URI,
                                              .partitions = NULL,
                                              .name = "orders",
                                              .event_time = "_shape_event_time",
                                              .fingerprint = f->fingerprint,
                                              .cfg = &f->cfg,
                                              .counter_names = counter_names,
                                              .n_counters = 3};
}

/* A checkpoint as cmd_stream_profile.c writes it, with 300 profiled rows. */
static json_t *good_profile_checkpoint(const fixture *f)
{
    shape_profile *p = tp_new_profile("orders");
    tp_profile_rows(p, 0, 300, 100);
    uint8_t *state = NULL;
    size_t len = 0;
    shape_err err;
    assert_int_equal(shape_profile_state_save(p, &state, &len, &err), SHAPE_OK);
    shape_profile_free(p);
    char *b64 = shape_base64_encode(state, len);
    free(state);
    json_t *doc = json_pack("{s:s, s:i, s:s, s:{s:i, s:i}, s:{s:i, s:i}, s:{s:i, s:i}, s:b,"
                            " s:{s:s, s:s, s:s, s:s, s:s, s:[[s,s],[s,s]], s:i, s:s}}",
                            "format", SHAPE_STREAM_PROFILE_CHECKPOINT_FORMAT, "version", 1, "uri", URI, "offset", "0",
                            120, "3", 7, "positions", "0", 100, "3", 7, "counters", "batches_read", 4, "reconnects", 1,
                            "finished", 0, "profiler", "format", SHAPE_STREAM_PROFILER_FORMAT, "kind", "global", "name",
                            "orders", "event_time", "_shape_event_time", "config", f->fingerprint, "schema", "id", "l",
                            "status", "u", "null_event_time", 5, "state", b64);
    free(b64);
    assert_non_null(doc);
    return doc;
}

static void assert_zeroed(const shape_stream_profile_resume *r)
{
    shape_stream_profile_resume zero;
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(r, &zero, sizeof zero);
}

static void test_reads_a_good_profile_checkpoint(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    json_t *doc = good_profile_checkpoint(&f);
    shape_stream_profile_resume got;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_stream_profile_checkpoint_read(PATH, doc, &f.expect, &got, &err);
    if (rc != SHAPE_OK) fail_msg("refused: %s", err.message);
    assert_int_equal(got.counters[0], 4);
    assert_int_equal(got.counters[1], 0);
    assert_int_equal(got.counters[2], 1);
    assert_true(got.have_offset);
    assert_int_equal(got.offset.n, 2);
    assert_int_equal(got.offset.partitions[1], 3);
    assert_int_equal(got.offset.next[0], 120);
    assert_int_equal(got.positions.next[0], 100);
    assert_true(got.have_schema);
    assert_int_equal(got.n_schema, 2);
    assert_string_equal(got.schema[1].name, "status");
    assert_string_equal(got.schema[1].format, "u");
    assert_int_equal(got.null_event_time, 5);
    assert_int_equal(shape_profile_rows(got.profile), 300);
    assert_false(got.finished);
    shape_stream_profile_resume_free(&got);
    assert_zeroed(&got);

    /* no offset yet (null) and no schema yet (null): both optional */
    json_object_set_new(doc, "offset", json_null());
    json_object_set_new(json_object_get(doc, "profiler"), "schema", json_null());
    json_object_set_new(doc, "finished", json_true());
    assert_int_equal(shape_stream_profile_checkpoint_read(PATH, doc, &f.expect, &got, &err), SHAPE_OK);
    assert_false(got.have_offset);
    assert_false(got.have_schema);
    assert_true(got.finished);
    shape_stream_profile_resume_free(&got);
    json_decref(doc);
}

/* One damage: a member (of the document, or of "profiler" when in_profiler)
 * set to `value` (NULL: removed); the refusal must contain `want`. */
typedef struct damage {
    int in_profiler;
    const char *member, *value_json, *want;
} damage;

static void test_refuses_each_damage(void **state)
{
    (void)state;
    static const damage damages[] = {
        {0, "format", "\"shape-stream-read-checkpoint-v1\"", "is not a stream-profile checkpoint"},
        {0, "uri", "\"kafka://h:9092/other\"", "belongs to another stream (kafka://h:9092/other)"},
        {0, "uri", NULL, "belongs to another stream (?)"},
        {0, "partitions", "\"0-3\"", "was taken with --partitions 0-3, not (all)"},
        {0, "version", "2", "format version"},
        {0, "version", "\"1\"", "format version"},
        {0, "profiler", NULL, "holds no profiler state"},
        {0, "profiler", "[]", "holds no profiler state"},
        {1, "kind", "\"tumbling\"", "different profiler (window 'tumbling'"},
        {1, "name", "\"payments\"", "different profiler (name 'payments', now 'orders')"},
        {1, "event_time", NULL, "different profiler (event time '?'"},
        {1, "config", "\"top_n=1\"", "different profiler (configuration 'top_n=1'"},
        {0, "counters", NULL, "has no counters"},
        {0, "counters", "{\"batches_read\": -1}", "unknown or bad counter 'batches_read'"},
        {0, "counters", "{\"batches_read\": 1.5}", "unknown or bad counter 'batches_read'"},
        {0, "counters", "{\"made_up\": 1}", "unknown or bad counter 'made_up'"},
        {0, "offset", "{\"0\": -1}", "offset of partition 0"},
        {0, "offset", "[1]", PATH},
        {0, "positions", NULL, PATH},
        {0, "positions", "{\"x\": 1}", PATH},
        {1, "schema", "{}", "bad schema"},
        {1, "schema", "[[\"id\"]]", "bad schema"},
        {1, "schema", "[[\"id\", \"l\"], [\"status\", 7]]", "bad schema"},
        {1, "state", NULL, "the profiler state is not base64"},
        {1, "state", "\"AAA\"", "the profiler state is not base64"},
        {1, "state", "\"AA=A\"", "the profiler state is not base64"},
        {1, "state", "\"U0hQUk9GU1QAAAAAAAAAAAAAAAA=\"", "checkpoint " PATH " (use another file)"},
    };
    fixture f;
    fixture_init(&f);
    for (size_t i = 0; i < sizeof damages / sizeof damages[0]; i++) {
        const damage *d = &damages[i];
        json_t *doc = good_profile_checkpoint(&f);
        json_t *where = d->in_profiler ? json_object_get(doc, "profiler") : doc;
        if (d->value_json) {
            json_error_t jerr;
            json_t *v = json_loads(d->value_json, JSON_DECODE_ANY, &jerr);
            assert_non_null(v);
            json_object_set_new(where, d->member, v);
        } else {
            json_object_del(where, d->member);
        }
        shape_stream_profile_resume got;
        shape_err err;
        shape_err_clear(&err);
        int rc = shape_stream_profile_checkpoint_read(PATH, doc, &f.expect, &got, &err);
        if (rc != SHAPE_EINVAL || !strstr(err.message, d->want) || !strstr(err.message, PATH) ||
            !strstr(err.message, "use another file"))
            fail_msg("damage %zu (%s): rc %d, message '%s', wanted '%s'", i, d->member, rc, err.message, d->want);
        assert_zeroed(&got);
        json_decref(doc);
    }
}

static void test_partitions_must_match_both_ways(void **state)
{
    (void)state;
    fixture f;
    fixture_init(&f);
    json_t *doc = good_profile_checkpoint(&f);
    shape_stream_profile_resume got;
    shape_err err;
    f.expect.partitions = "0,3";
    assert_int_equal(shape_stream_profile_checkpoint_read(PATH, doc, &f.expect, &got, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "--partitions (all), not 0,3"));
    json_object_set_new(doc, "partitions", json_string("0,3"));
    assert_int_equal(shape_stream_profile_checkpoint_read(PATH, doc, &f.expect, &got, &err), SHAPE_OK);
    shape_stream_profile_resume_free(&got);
    json_decref(doc);
}

static void test_read_checkpoint(void **state)
{
    (void)state;
    const char *good = "{\"format\":\"" SHAPE_STREAM_READ_CHECKPOINT_FORMAT "\",\"version\":1,\"uri\":\"" URI
                       "\",\"offset\":{\"2\":6,\"0\":4}}\n";
    json_t *doc = NULL;
    shape_err err;
    shape_err_clear(&err);
    assert_int_equal(shape_checkpoint_parse(good, strlen(good), PATH, &doc, &err), SHAPE_OK);
    shape_offsets start = SHAPE_OFFSETS_INIT;
    assert_int_equal(shape_stream_read_checkpoint_read(PATH, doc, URI, &start, &err), SHAPE_OK);
    assert_int_equal(start.n, 2);
    assert_int_equal(start.partitions[0], 0);
    assert_int_equal(start.next[0], 4);
    assert_int_equal(start.next[1], 6);
    /* refusals leave no position behind */
    assert_int_equal(shape_stream_read_checkpoint_read(PATH, doc, "kafka://h:9092/other", &start, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "belongs to another stream (" URI "): use another file"));
    assert_int_equal(start.n, 0);
    json_object_set_new(doc, "offset", json_pack("{s:i}", "1", -3));
    assert_int_equal(shape_stream_read_checkpoint_read(PATH, doc, URI, &start, &err), SHAPE_EINVAL);
    assert_int_equal(start.n, 0);
    /* a key is digits only: " 2" beside "2" would be two keys for one
     * partition (found by make fuzz); "+2" and "-0" likewise */
    const char *const bad_keys[] = {" 2", "+2", "-0", "2 ", "\t2"};
    for (size_t i = 0; i < sizeof bad_keys / sizeof bad_keys[0]; i++) {
        json_object_set_new(doc, "offset", json_pack("{s:i, s:i}", "2", 6, bad_keys[i], 0));
        assert_int_equal(shape_stream_read_checkpoint_read(PATH, doc, URI, &start, &err), SHAPE_EINVAL);
        assert_non_null(strstr(err.message, "is not a partition id"));
        assert_int_equal(start.n, 0);
    }
    json_object_set_new(doc, "format", json_string(SHAPE_STREAM_PROFILE_CHECKPOINT_FORMAT));
    assert_int_equal(shape_stream_read_checkpoint_read(PATH, doc, URI, &start, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "is not a stream-read checkpoint"));
    shape_offsets_free(&start);
    json_decref(doc);
}

static void test_parse_refuses_what_is_not_an_object(void **state)
{
    (void)state;
    static const struct {
        const char *bytes, *want;
    } cases[] = {
        {"", "is not valid JSON (line 1)"},
        {"{\"format\":", "is not valid JSON"},
        {"{\"a\":1}\n{\"a\":1}", "is not valid JSON"},
        {"{\"a\":1,\"a\":2}", "is not valid JSON"}, /* duplicate keys */
        {"[1,2]", "is not a JSON object"},
        {"\"text\"", "is not valid JSON"}, /* jansson: a bare value needs JSON_DECODE_ANY */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *doc = (json_t *)&doc; /* must be reset */
        shape_err err;
        shape_err_clear(&err);
        int rc = shape_checkpoint_parse(cases[i].bytes, strlen(cases[i].bytes), PATH, &doc, &err);
        if (rc != SHAPE_EINVAL || doc != NULL || !strstr(err.message, cases[i].want) ||
            !strstr(err.message, "use another file"))
            fail_msg("case %zu: rc %d, '%s'", i, rc, err.message);
    }
    /* bytes need no NUL: a length cuts the text */
    json_t *doc = NULL;
    shape_err err;
    assert_int_equal(shape_checkpoint_parse("{\"a\":1}garbage", 7, PATH, &doc, &err), SHAPE_OK);
    json_decref(doc);
}

static void test_base64_round_trip_and_strictness(void **state)
{
    (void)state;
    uint8_t bytes[64];
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)(i * 37 + 11);
    for (size_t n = 0; n <= sizeof bytes; n++) {
        char *text = shape_base64_encode(bytes, n);
        assert_int_equal(strlen(text), 4 * ((n + 2) / 3));
        size_t len = 99;
        uint8_t *back = shape_base64_decode(text, &len);
        assert_non_null(back);
        assert_int_equal(len, n);
        if (n) assert_memory_equal(back, bytes, n);
        free(back);
        free(text);
    }
    char *t = shape_base64_encode((const uint8_t *)"shape", 5);
    assert_string_equal(t, "c2hhcGU=");
    free(t);
    static const char *const bad[] = {"c2hhcGU", "c2hh=GU=", "c2hhcG==x===", "c2h!cGU=", "====", "c2hhc===", "c2 hcGU="};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len;
        uint8_t *out = shape_base64_decode(bad[i], &len);
        if (out) fail_msg("accepted '%s'", bad[i]);
    }
}

/* Issue 24: the checksum every saved checkpoint carries, the one-writer
 * lock, and a file's identity (shape/checkpoint_file.h). */
static void test_checksum_lock_and_file_identity(void **state)
{
    (void)state;
    char dir[] = "/tmp/shape-ck-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char ck[64], data[64], lock[80];
    snprintf(ck, sizeof ck, "%s/run.ck", dir);
    snprintf(data, sizeof data, "%s/in.jsonl", dir);
    snprintf(lock, sizeof lock, "%s.lock", ck);
    shape_err err;
    /* saved with a checksum, loaded back the same; an edited value refused */
    json_t *doc = json_pack("{s:s, s:I, s:f, s:[i,i]}", "format", "x", "offset", (json_int_t)1000, "r", 0.1, "a", 1, 2);
    assert_int_equal(shape_checkpoint_save(ck, doc, &err), SHAPE_OK);
    json_t *back = NULL;
    assert_int_equal(shape_checkpoint_load(ck, &back, &err), SHAPE_OK);
    assert_true(json_equal(doc, back));
    assert_null(json_object_get(back, "checksum"));
    json_decref(back);
    char *bytes = NULL;
    size_t len = 0;
    assert_int_equal(shape_file_read_all(ck, "checkpoint", &bytes, &len, NULL, &err), SHAPE_OK);
    assert_non_null(strstr(bytes, ",\"checksum\":\"xxh3-128:"));
    char *off = strstr(bytes, "1000");
    off[0] = '2';
    back = (json_t *)1;
    assert_int_equal(shape_checkpoint_parse(bytes, len, ck, &back, &err), SHAPE_EINVAL);
    assert_null(back);
    assert_non_null(strstr(err.message, "does not match its checksum"));
    assert_non_null(strstr(err.message, "use another file"));
    free(bytes);
    /* an empty object gets one too */
    json_t *empty = json_object();
    assert_int_equal(shape_checkpoint_save(ck, empty, &err), SHAPE_OK);
    assert_int_equal(shape_checkpoint_load(ck, &back, &err), SHAPE_OK);
    assert_int_equal(json_object_size(back), 0);
    json_decref(back);
    json_decref(empty);
    json_decref(doc);
    /* the lock: a second holder (another open file description, as another
     * process would have) is refused; released, it is taken again */
    int fd1 = -1, fd2 = -1;
    assert_int_equal(shape_checkpoint_lock(ck, &fd1, &err), SHAPE_OK);
    assert_true(fd1 >= 0);
    assert_int_equal(shape_checkpoint_lock(ck, &fd2, &err), SHAPE_EINVAL);
    assert_int_equal(fd2, -1);
    assert_non_null(strstr(err.message, "is in use by another shape process"));
    shape_checkpoint_unlock(ck, fd1);
    assert_int_equal(access(lock, F_OK), -1); /* removed */
    assert_int_equal(shape_checkpoint_lock(ck, &fd2, &err), SHAPE_OK);
    shape_checkpoint_unlock(ck, fd2);
    /* a file's identity: the same file (grown) passes, a truncated one not */
    FILE *f = fopen(data, "w");
    fputs("{\"id\":1}\n{\"id\":2}\n", f);
    fclose(f);
    json_t *id = shape_checkpoint_file_identity(data);
    assert_non_null(id);
    assert_int_equal(shape_checkpoint_check_file_identity(ck, data, id, &err), SHAPE_OK);
    f = fopen(data, "a");
    fputs("{\"id\":3}\n", f);
    fclose(f);
    assert_int_equal(shape_checkpoint_check_file_identity(ck, data, id, &err), SHAPE_OK);
    assert_int_equal(truncate(data, 5), 0);
    assert_int_equal(shape_checkpoint_check_file_identity(ck, data, id, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "was truncated"));
    unlink(data);
    assert_int_equal(shape_checkpoint_check_file_identity(ck, data, id, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "is gone"));
    json_object_set_new(id, "head", json_integer(1));
    assert_int_equal(shape_checkpoint_check_file_identity(ck, data, id, &err), SHAPE_EINVAL);
    assert_non_null(strstr(err.message, "damaged file identity"));
    assert_null(shape_checkpoint_file_identity(dir)); /* a folder has none */
    json_decref(id);
    unlink(ck);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_a_good_profile_checkpoint),
        cmocka_unit_test(test_refuses_each_damage),
        cmocka_unit_test(test_partitions_must_match_both_ways),
        cmocka_unit_test(test_read_checkpoint),
        cmocka_unit_test(test_parse_refuses_what_is_not_an_object),
        cmocka_unit_test(test_base64_round_trip_and_strictness),
        cmocka_unit_test(test_checksum_lock_and_file_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

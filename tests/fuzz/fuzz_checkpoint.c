/* fuzz_checkpoint.c — libFuzzer target for the readers of checkpoint files.
 *
 * Why: a checkpoint is a file on disk that outlives the process that wrote
 * it: a crash, a full disk, another version or a person's editor can leave
 * anything there, and the next run reads it before doing anything else. A
 * torn or hostile checkpoint must be refused with a message, never crash a
 * run nor resume it at a position that was never written.
 * How: the same input goes to the three readers a checkpoint passes through:
 *   1. emit: written to a file in /dev/shm (tmpfs: no disk I/O per run) and
 *      read by shape_emit_checkpoint_read with a fixed fingerprint and total.
 *      A success resumes inside [0, total] with that fingerprint, and
 *      survives shape_emit_checkpoint_write + read unchanged; a refusal is
 *      SHAPE_EINVAL with a message and found = 0.
 *   2. stream-read / stream-profile checkpoints: the input goes through
 *      the very checks a resumed run makes (shape/stream_checkpoint.h):
 *      shape_checkpoint_parse (duplicate keys refused), then
 *      shape_stream_read_checkpoint_read and
 *      shape_stream_profile_checkpoint_read, each asked with the document's
 *      own uri, partitions, name and event time (so mutations get past the
 *      identity checks to the offsets, counters, schema and base64 profiler
 *      state). A refusal is SHAPE_EINVAL with a message and leaves nothing
 *      behind (empty offsets, a zeroed resume); a stream-profile success has
 *      a profiler, non-negative counters, a schema of named columns and
 *      valid offsets. The document and its "offset" and "positions" members
 *      also go to shape_offsets_from_json directly: a success holds one
 *      strictly ascending, non-negative entry per key and round-trips
 *      through shape_offsets_to_json.
 *   Every parsed document also goes through the checksum (shape/
 *      checkpoint_file.h): saved with one and loaded back it is the same
 *      document; its "source_file" member, if any, goes to the file
 *      identity check against the input's own file (accepted or refused
 *      with a message, nothing else).
 *   3. stream-profile / --state profiler state: an input starting with
 *      "SHPROFST" gets its trailing XXH3 checksum recomputed (else nearly
 *      every mutation would stop at the checksum) and goes to
 *      shape_profile_state_load. A loaded state saves, reloads and saves to
 *      identical bytes (the format's own promise).
 * Any abort, crash, leak or sanitizer report is a finding.
 *
 * Seeds: JSON checkpoints are written by tests/fuzz/CMakeLists.txt; binary
 * profiler states, and stream-profile checkpoints holding them, are written
 * by this target itself when run with SHAPE_FUZZ_WRITE_SEEDS=DIR (states
 * from the current writer, made by profiling a few decoded JSON messages,
 * the non-empty one with an origin of two sources;
 * checkpoints with a checksum, emit's with its destinations, stream-read's
 * with a file identity), which CMake does after each build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <xxhash.h>

#include "shape/base64.h"
#include "shape/decode.h"
#include "shape/emit.h"
#include "shape/offsets.h"
#include "shape/profile.h"
#include "shape/stream_checkpoint.h"

/* The stream the emit reader is asked about (the seeds use them too). */
#define FINGERPRINT "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define TOTAL 1000u

static char input_path[64], copy_path[64];

static void remove_files(void)
{
    unlink(input_path);
    unlink(copy_path);
}

static void check_refusal(int rc, const shape_err *err)
{
    if (rc == SHAPE_OK || err->code != rc || err->message[0] == '\0') abort();
}

/* ---- 1. emit checkpoints ------------------------------------------------- */

static void fuzz_emit(const uint8_t *data, size_t size)
{
    FILE *f = fopen(input_path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) abort();
    shape_emit_checkpoint ck;
    shape_err err;
    shape_err_clear(&err);
    int found = -1;
    int rc = shape_emit_checkpoint_read(input_path, FINGERPRINT, TOTAL, &ck, &found, &err);
    if (rc != SHAPE_OK) {
        check_refusal(rc, &err);
        if (rc != SHAPE_EINVAL || found != 0) abort();
        return;
    }
    /* the file exists: OK always means a checkpoint was found */
    if (found != 1 || strcmp(ck.fingerprint, FINGERPRINT) != 0 || ck.offset > TOTAL || ck.total != TOTAL ||
        (ck.complete != 0 && ck.complete != 1))
        abort();
    if (shape_emit_checkpoint_write(copy_path, &ck, &err) != SHAPE_OK) abort();
    shape_emit_checkpoint again;
    if (shape_emit_checkpoint_read(copy_path, FINGERPRINT, TOTAL, &again, &found, &err) != SHAPE_OK || found != 1 ||
        memcmp(&again, &ck, sizeof ck) != 0)
        abort();
}

/* ---- 2. offsets of stream-read / stream-profile checkpoints --------------- */

static void fuzz_offsets_of(const json_t *value)
{
    shape_offsets o = SHAPE_OFFSETS_INIT, back = SHAPE_OFFSETS_INIT;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_offsets_from_json(value, &o, "checkpoint fuzz", &err);
    if (rc != SHAPE_OK) {
        check_refusal(rc, &err);
    } else {
        if (o.n != json_object_size(value)) abort();
        for (size_t i = 0; i < o.n; i++)
            if (o.partitions[i] < 0 || o.next[i] < 0 || (i > 0 && o.partitions[i - 1] >= o.partitions[i])) abort();
        json_t *j = shape_offsets_to_json(&o);
        /* (no memcmp of an empty set: its arrays may be NULL) */
        if (!j || shape_offsets_from_json(j, &back, "round trip", &err) != SHAPE_OK || back.n != o.n ||
            (o.n && (memcmp(back.partitions, o.partitions, o.n * sizeof *o.partitions) != 0 ||
                     memcmp(back.next, o.next, o.n * sizeof *o.next) != 0)))
            abort();
        json_decref(j);
    }
    shape_offsets_free(&o);
    shape_offsets_free(&back);
}

static void check_offsets(const shape_offsets *o)
{
    for (size_t i = 0; i < o->n; i++)
        if (o->partitions[i] < 0 || o->next[i] < 0 || (i > 0 && o->partitions[i - 1] >= o->partitions[i])) abort();
}

static const char *string_or(const json_t *v, const char *fallback)
{
    const char *s = json_string_value(v);
    return s ? s : fallback;
}

static void fuzz_read_checkpoint(const json_t *doc)
{
    shape_offsets start = SHAPE_OFFSETS_INIT;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_stream_read_checkpoint_read("fuzz.ck", doc, string_or(json_object_get(doc, "uri"), "kafka://h/t"),
                                               &start, &err);
    if (rc != SHAPE_OK) {
        check_refusal(rc, &err);
        if (rc != SHAPE_EINVAL || start.n != 0) abort();
    } else {
        check_offsets(&start);
        if (start.n != json_object_size(json_object_get(doc, "offset"))) abort();
    }
    shape_offsets_free(&start);
}

static const char *const counter_names[] = {"batches_read", "batches_processed", "duplicate_batches",
                                            "duplicate_rows", "reconnects", "checkpoints"};
#define N_COUNTERS (sizeof counter_names / sizeof counter_names[0])

static void fuzz_profile_checkpoint(const json_t *doc)
{
    const json_t *prof = json_object_get(doc, "profiler");
    shape_profile_config cfg;
    shape_profile_config_default(&cfg);
    char fingerprint[256];
    shape_profile_config_fingerprint(&cfg, fingerprint, sizeof fingerprint);
    shape_stream_profile_expect x = {.uri = string_or(json_object_get(doc, "uri"), "kafka://h/t"),
                                     .partitions = json_string_value(json_object_get(doc, "partitions")),
                                     .name = string_or(json_object_get(prof, "name"), "stream"),
                                     .event_time = string_or(json_object_get(prof, "event_time"), "_shape_event_time"),
                                     .fingerprint = fingerprint,
                                     .cfg = &cfg,
                                     .counter_names = counter_names,
                                     .n_counters = N_COUNTERS};
    shape_stream_profile_resume got, zero;
    memset(&zero, 0, sizeof zero);
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_stream_profile_checkpoint_read("fuzz.ck", doc, &x, &got, &err);
    if (rc != SHAPE_OK) {
        check_refusal(rc, &err);
        if (rc != SHAPE_EINVAL || memcmp(&got, &zero, sizeof got) != 0) abort();
        return;
    }
    if (!got.profile || !got.counters || (got.finished != 0 && got.finished != 1)) abort();
    for (size_t i = 0; i < N_COUNTERS; i++)
        if (got.counters[i] < 0) abort();
    check_offsets(&got.positions);
    if (got.have_offset) check_offsets(&got.offset);
    else if (got.offset.n != 0) abort();
    if (got.have_schema != (got.schema != NULL)) abort();
    for (size_t i = 0; i < got.n_schema; i++)
        if (!got.schema[i].name || !got.schema[i].format) abort();
    shape_stream_profile_resume_free(&got);
    if (memcmp(&got, &zero, sizeof got) != 0) abort();
}

/* The checksum round trip and the file identity check of a parsed document. */
static void fuzz_checksum(const json_t *doc)
{
    shape_err err;
    shape_err_clear(&err);
    const json_t *identity = json_object_get(doc, "source_file");
    if (identity) {
        int rc = shape_checkpoint_check_file_identity("fuzz.ck", input_path, identity, &err);
        if (rc != SHAPE_OK) check_refusal(rc, &err);
        if (rc != SHAPE_OK && rc != SHAPE_EINVAL) abort();
    }
    json_t *back = NULL;
    if (shape_checkpoint_save(copy_path, doc, &err) != SHAPE_OK || shape_checkpoint_load(copy_path, &back, &err) != SHAPE_OK ||
        !back || !json_equal(back, (json_t *)doc))
        abort();
    json_decref(back);
}

static void fuzz_offsets(const uint8_t *data, size_t size)
{
    json_t *doc = NULL;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_checkpoint_parse((const char *)data, size, "fuzz.ck", &doc, &err);
    if (rc != SHAPE_OK) {
        check_refusal(rc, &err);
        if (rc != SHAPE_EINVAL || doc) abort();
        return;
    }
    if (!json_is_object(doc)) abort();
    fuzz_offsets_of(doc);
    const char *members[] = {"offset", "positions"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(doc, members[i]);
        if (v) fuzz_offsets_of(v);
    }
    fuzz_read_checkpoint(doc);
    fuzz_profile_checkpoint(doc);
    fuzz_checksum(doc);
    json_decref(doc);
}

/* ---- 3. profiler states --------------------------------------------------- */

static void fuzz_state(const uint8_t *data, size_t size)
{
    if (size < 20 || memcmp(data, "SHPROFST", 8) != 0) return;
    uint8_t *bytes = malloc(size);
    if (!bytes) abort();
    memcpy(bytes, data, size);
    uint64_t sum = XXH3_64bits_withSeed(bytes, size - 8, 0);
    for (int i = 0; i < 8; i++) bytes[size - 8 + (size_t)i] = (uint8_t)(sum >> (8 * i));

    shape_profile *p = NULL, *q = NULL;
    shape_err err;
    shape_err_clear(&err);
    int rc = shape_profile_state_load(bytes, size, NULL, &p, &err);
    free(bytes);
    if (rc != SHAPE_OK) {
        check_refusal(rc, &err);
        if (p) abort();
        return;
    }
    uint8_t *s1 = NULL, *s2 = NULL;
    size_t n1 = 0, n2 = 0;
    if (shape_profile_state_save(p, &s1, &n1, &err) != SHAPE_OK) abort();
    if (shape_profile_state_load(s1, n1, NULL, &q, &err) != SHAPE_OK) abort();
    if (shape_profile_rows(q) != shape_profile_rows(p) || shape_profile_num_columns(q) != shape_profile_num_columns(p))
        abort();
    if (shape_profile_state_save(q, &s2, &n2, &err) != SHAPE_OK) abort();
    if (n1 != n2 || memcmp(s1, s2, n1) != 0) abort();
    free(s1);
    free(s2);
    shape_profile_free(p);
    shape_profile_free(q);
}

/* ---- seeds ---------------------------------------------------------------- */

/* Profile `lines` (JSON messages, one per line) and write the state to DIR/name. */
static void write_state_seed(const char *dir, const char *name, const char *lines)
{
    shape_message msgs[16];
    size_t n = 0;
    for (const char *p = lines; *p && n < 16;) {
        size_t len = strcspn(p, "\n");
        msgs[n] = (shape_message){.partition = 0, .offset = (int64_t)n, .value = (const void *)p, .value_len = len,
                                  .has_timestamp = 1, .timestamp_us = 1700000000000000LL + (int64_t)n};
        n++;
        p += len + (p[len] == '\n');
    }
    shape_decode_options o;
    shape_decode_options_init(&o);
    o.with_timestamp = o.with_offsets = 1;
    shape_decoder *dec = NULL;
    shape_profile *prof = NULL;
    shape_err err;
    struct ArrowSchema schema = {0};
    struct ArrowArray array = {0};
    uint8_t *state = NULL;
    size_t len = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = NULL;
    if (shape_decoder_new(&o, NULL, &dec, &err) != SHAPE_OK || shape_profile_new("orders", NULL, &prof, &err) != SHAPE_OK ||
        (n && shape_decoder_decode(dec, msgs, n, &schema, &array, &err) != SHAPE_OK) ||
        (n && shape_profile_update(prof, &schema, &array, &err) != SHAPE_OK) ||
        (n && shape_profile_set_origin(prof, "kafka://h/orders", (const int32_t[]){0, 3, 7}, 3, &err) != SHAPE_OK) ||
        (n && shape_profile_add_origin(prof, "/data/day2.jsonl", (const int32_t[]){0}, 1, &err) != SHAPE_OK) ||
        shape_profile_state_save(prof, &state, &len, &err) != SHAPE_OK || !(f = fopen(path, "wb")) ||
        fwrite(state, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "fuzz_checkpoint: cannot write seed %s: %s\n", path, err.message);
        exit(1);
    }
    /* the same state inside a stream-profile checkpoint, as the command writes it */
    char *b64 = shape_base64_encode(state, len);
    char fp[256];
    shape_profile_config cfg;
    shape_profile_config_default(&cfg);
    shape_profile_config_fingerprint(&cfg, fp, sizeof fp);
    json_t *doc = b64 ? json_pack("{s:s, s:i, s:s, s:{s:i}, s:{s:i}, s:{s:i, s:i}, s:b, s:{s:s, s:s, s:s, s:s, s:s, "
                                  "s:[[s,s],[s,s]], s:i, s:s}}",
                                  "format", SHAPE_STREAM_PROFILE_CHECKPOINT_FORMAT, "version", 1, "uri",
                                  "kafka://h/orders", "offset", "0", (int)n, "positions", "0", (int)n, "counters",
                                  "batches_read", 1, "checkpoints", 1, "finished", 0, "profiler", "format",
                                  SHAPE_STREAM_PROFILER_FORMAT, "kind", "global", "name", "orders", "event_time", "at",
                                  "config", fp, "schema", "id", "l", "city", "u", "null_event_time", 0, "state", b64)
                      : NULL;
    snprintf(path, sizeof path, "%s/checkpoint_%s.json", dir, name);
    if (!doc || json_dump_file(doc, path, JSON_COMPACT) != 0) {
        fprintf(stderr, "fuzz_checkpoint: cannot write seed %s\n", path);
        exit(1);
    }
    /* the same with its checksum, as shape writes it now */
    snprintf(path, sizeof path, "%s/checkpoint_%s_summed.json", dir, name);
    if (shape_checkpoint_save(path, doc, &err) != SHAPE_OK) {
        fprintf(stderr, "fuzz_checkpoint: cannot write seed %s: %s\n", path, err.message);
        exit(1);
    }
    json_decref(doc);
    free(b64);
    if (array.release) array.release(&array);
    if (schema.release) schema.release(&schema);
    free(state);
    shape_profile_free(prof);
    shape_decoder_free(dec);
}

/* An emit checkpoint bound to destinations and a stream-read checkpoint
 * of a local file (its identity recorded), both with their checksum. */
static void write_bound_seeds(const char *dir)
{
    char path[4096], file[4096];
    shape_err err;
    shape_emit_checkpoint ck;
    memset(&ck, 0, sizeof ck);
    snprintf(ck.fingerprint, sizeof ck.fingerprint, "%s", FINGERPRINT);
    ck.offset = 517;
    ck.total = TOTAL;
    snprintf(ck.destinations, sizeof ck.destinations, "file://out.jsonl kafka://127.0.0.1:9092/orders");
    snprintf(path, sizeof path, "%s/emit_bound", dir);
    snprintf(file, sizeof file, "%s/state_mixed", dir);
    shape_offsets o = SHAPE_OFFSETS_INIT;
    int rc = shape_emit_checkpoint_write(path, &ck, &err);
    if (rc == SHAPE_OK) rc = shape_offsets_set(&o, 0, 3, &err);
    snprintf(path, sizeof path, "%s/stream_read_file", dir);
    if (rc == SHAPE_OK) rc = shape_stream_read_checkpoint_write(path, file, &o, &err);
    shape_offsets_free(&o);
    if (rc != SHAPE_OK) {
        fprintf(stderr, "fuzz_checkpoint: cannot write seed %s: %s\n", path, err.message);
        exit(1);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("SHAPE_FUZZ_WRITE_SEEDS");
    if (dir && dir[0]) {
        write_state_seed(dir, "state_empty", "");
        write_state_seed(dir, "state_mixed",
                         "{\"id\":1,\"price\":9.5,\"paid\":true,\"city\":\"Lyon\",\"at\":\"2024-03-01T12:00:00Z\"}\n"
                         "{\"id\":2,\"price\":-1e300,\"paid\":false,\"city\":\"alice@example.com\",\"at\":null}\n"
                         "{\"id\":3,\"price\":null,\"city\":\"\",\"tags\":[1,2],\"at\":\"1999-12-31\"}\n"
                         "{\"id\":2,\"price\":0.0,\"paid\":true,\"city\":\"Lyon\",\"extra\":{\"x\":1}}");
        write_bound_seeds(dir);
        exit(0);
    }
    snprintf(input_path, sizeof input_path, "/dev/shm/shape-fuzz-checkpoint-%ld", (long)getpid());
    snprintf(copy_path, sizeof copy_path, "/dev/shm/shape-fuzz-checkpoint-%ld-copy", (long)getpid());
    atexit(remove_files);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_emit(data, size);
    fuzz_offsets(data, size);
    fuzz_state(data, size);
    return 0;
}

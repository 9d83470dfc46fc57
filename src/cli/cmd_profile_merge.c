/* cmd_profile_merge.c — `shape profile-merge A.state B.state ... -o OUT.json`.
 *
 * Why: scale-out on Kafka's partitions. N workers each profile disjoint
 * partitions (`stream-profile --partitions ... --state W.state`); merging
 * their states gives the profile of the whole topic: exact statistics
 * identical to one run over everything, sketches within their bounds.
 *
 * How: load each state (shape_profile_state_load refuses another
 * configuration, so every state must have been made with the same --top-n),
 * merge them in the order given into the first (shape_profile_merge: counters
 * add, moments by Chan's formula, HLL by register max, SpaceSaving and KLL by
 * their merge rules), write the document atomically, optionally the merged
 * state too, and print a one-line JSON summary.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/commands.h"
#include "shape/atomic_file.h"
#include "shape/json.h" /* shape_json_buf */
#include "shape/paths.h"
#include "shape/profile.h"

static int read_file(const char *path, uint8_t **out, size_t *len, shape_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return shape_err_set(err, SHAPE_EINVAL, "cannot read state %s: %s", path, strerror(errno));
    shape_json_buf buf = SHAPE_JSON_BUF_INIT;
    int oom = 0;
    for (;;) {
        if (shape_json_buf_reserve(&buf, 1 << 16) != 0) {
            oom = 1;
            break;
        }
        size_t want = buf.cap - buf.len - 1, got = fread(buf.data + buf.len, 1, want, f);
        buf.len += got;
        if (got < want) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (oom || bad) {
        shape_json_buf_release(&buf);
        if (oom) return shape_err_set(err, SHAPE_ENOMEM, "out of memory reading %s", path);
        return shape_err_set(err, SHAPE_EIO, "cannot read state %s", path);
    }
    *out = (uint8_t *)buf.data;
    *len = buf.len;
    return SHAPE_OK;
}

static int load_state(const char *path, const shape_profile_config *cfg, shape_profile **out, shape_err *err)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    SHAPE_RETURN_NOT_OK(read_file(path, &bytes, &len, err));
    int rc = shape_profile_state_load(bytes, len, cfg, out, err);
    free(bytes);
    if (rc != SHAPE_OK) shape_err_prefix(err, "%s", path);
    return rc;
}

/* The states read, -o and --state: no output over an input or another
 * output, every output's folder there, before anything is read. */
static int check_paths(const shape_args *args, const char *output, const char *state_out, shape_err *err)
{
    size_t n = shape_args_positional_count(args);
    shape_path_use *uses = calloc(n + 2, sizeof *uses);
    if (!uses) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    uses[0] = (shape_path_use){"-o", output, 1};
    uses[1] = (shape_path_use){"--state", state_out, 1};
    for (size_t i = 0; i < n; i++) uses[i + 2] = (shape_path_use){"the state", shape_args_positional(args, i), 0};
    int rc = shape_paths_check(uses, n + 2, err);
    free(uses);
    return rc;
}

static int run_profile_merge(const shape_args *args, shape_err *err)
{
    const char *output = shape_args_value(args, "output");
    const char *state_out = shape_args_value(args, "state");
    if (!output || !output[0]) return shape_err_set(err, SHAPE_EINVAL, "-o/--output OUT.json is required");
    SHAPE_RETURN_NOT_OK(check_paths(args, output, state_out, err));
    shape_profile_config cfg;
    shape_profile_config_default(&cfg);
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "top-n", 1, INT32_MAX, SHAPE_PROFILE_TOP_N, &cfg.top_n, err));
    shape_profile *merged = NULL;
    int rc = SHAPE_OK;
    size_t n = shape_args_positional_count(args);
    for (size_t i = 0; rc == SHAPE_OK && i < n; i++) {
        const char *path = shape_args_positional(args, i);
        shape_profile *p = NULL;
        rc = load_state(path, &cfg, &p, err);
        if (rc == SHAPE_OK && !merged) {
            merged = p;
            continue;
        }
        if (rc == SHAPE_OK) {
            rc = shape_profile_merge(merged, p, err);
            if (rc != SHAPE_OK) shape_err_prefix(err, "cannot merge %s", path);
        }
        shape_profile_free(p);
    }
    char *text = NULL;
    size_t len = 0;
    const shape_profile *tables[1] = {merged};
    if (rc == SHAPE_OK) rc = shape_profile_document(tables, 1, &text, &len, err);
    if (rc == SHAPE_OK) rc = shape_atomic_write(output, text, len, err);
    free(text);
    if (rc == SHAPE_OK && state_out) {
        uint8_t *bytes = NULL;
        rc = shape_profile_state_save(merged, &bytes, &len, err);
        if (rc == SHAPE_OK) rc = shape_atomic_write(state_out, bytes, len, err);
        free(bytes);
    }
    if (rc == SHAPE_OK) {
        json_t *s = json_pack("{s:I, s:I, s:s}", "states", (json_int_t)n, "events", (json_int_t)shape_profile_rows(merged),
                              "written", output);
        char *line = NULL;
        rc = s ? shape_profile_json_dumps(s, -1, &line, &len, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        json_decref(s);
        if (rc == SHAPE_OK) printf("%s\n", line);
        free(line);
    }
    shape_profile_free(merged);
    return rc;
}

static const shape_arg_spec profile_merge_args[] = {
    {"output", 'o', SHAPE_ARG_VALUE, "OUT.json", NULL, "Write the merged profile document here (atomically)."},
    {"top-n", 0, SHAPE_ARG_VALUE, "N", "500", "The --top-n the states were made with."},
    {"state", 0, SHAPE_ARG_VALUE, "FILE", NULL, "Also write the merged state (to merge further)."},
    {0},
};

const shape_command shape_cmd_profile_merge = {
    .name = "profile-merge",
    .summary = "Merge profiler states (stream-profile --state) into one profile.",
    .positional = "STATE...",
    .min_positional = 1,
    .max_positional = -1,
    .args = profile_merge_args,
    .epilog = "Each STATE is a file written by `shape stream-profile --state FILE`, all made with the same\n"
              "--top-n. Exact statistics (counts, min/max, histograms, patterns) come out identical to one\n"
              "run over all the rows; mean and m2 agree to rounding; distinct (HyperLogLog) is identical;\n"
              "top values and quantiles stay within their error bounds.",
    .run = run_profile_merge,
};

/* cmd_emit.c — `shape emit DOMAIN`: generate a domain's rows as events and
 * deliver them, at least once and resumably, to one or more destinations.
 *
 * Why: the command people run (`shape emit retail --realtime --rate 5000
 * --sink kafka://...`); everything about it that is command-line business
 * lives here: options and their defaults (spec-core §3.2), validation of
 * every input before anything is opened (one-line error, exit 2, nothing
 * sent), the confirmation rule for destinations not on this machine, the
 * checkpoint/resume decision, signals, and the report.
 * How: run_emit is a sequence of steps over one emit_state: read options
 * (the domain is looked up in the registry of shape/domain.h, --scale
 * checked against its presets; pacing, limits and --shard; keys, headers
 * and dead letters) → resolve destinations (the core's console/file/jsonl/
 * null, or a plugin emitter by scheme) and set their options → plan and
 * resume (open the domain, build the event plan, fingerprint this --shard
 * I/N's share, whose offsets, limit and total count only its own events:
 * src/emit/shard.c, and read the checkpoint, refusing another stream's or
 * shard's, or of other destinations, under the checkpoint's lock) → dry
 * run or confirmation → open the destinations and hand
 * everything to shape_emit_run (src/emit/runtime.c) → report: text on
 * stderr when events go to the console, else on stdout; `--json` prints it
 * as one JSON object. Every file the run names (outputs and inputs) is
 * checked before the plan (shape/paths.h). The checks run in that order,
 * so of several bad inputs the first one named is always the same.
 */
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/commands.h"
#include "shape/checkpoint_file.h"
#include "shape/credref.h"
#include "shape/domain.h"
#include "shape/emit.h"
#include "shape/emit_schedule.h"
#include "shape/options.h"
#include "shape/paths.h"
#include "shape/timestamp.h"

#define MAX_DESTS 8
#define MAX_KEY_COLUMNS 16

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t connecting; /* the destinations are being opened (their first connection) */

/* A stop request; a second one while the destinations connect ends the
 * process at once, as the signal would (a stoppable open, plugin ABI 7,
 * returns within ~100 ms of the first; an older emitter's open waits up to
 * its time-out, ~10 s, that the first one cannot cut short). */
static void on_stop_signal(int sig)
{
    if (stop_requested && connecting) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_requested = 1;
}

/* ---- option helpers --------------------------------------------------------- */

void shape_cli_thousands(char *out, size_t size, uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t j = 0;
    for (int i = 0; i < n && j + 2 < size; i++) {
        if (i && (n - i) % 3 == 0) out[j++] = ',';
        out[j++] = digits[i];
    }
    out[j] = 0;
}

/* ---- destinations ------------------------------------------------------------ */

/* A URI is local when it is a core sink or every host of its authority is
 * localhost, 127.0.0.1 or ::1. */
static int uri_is_local(const char *uri)
{
    if (shape_emit_builtin_for_uri(uri)) return 1;
    const char *a = strstr(uri, "://");
    if (!a) return 0;
    a += 3;
    size_t alen = strcspn(a, "/?#");
    const char *at = memchr(a, '@', alen);
    if (at) {
        alen -= (size_t)(at + 1 - a);
        a = at + 1;
    }
    if (alen == 0) return 0;
    const char *p = a, *end = a + alen;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *hend = comma ? comma : end;
        size_t hl = (size_t)(hend - p);
        const char *host = p;
        if (hl && host[0] == '[') {
            const char *rb = memchr(host, ']', hl);
            if (!rb) return 0;
            host++;
            hl = (size_t)(rb - host);
        } else {
            const char *colon = memchr(host, ':', hl);
            if (colon) hl = (size_t)(colon - host);
        }
        int ok = (hl == 9 && strncasecmp(host, "localhost", 9) == 0) ||
                 (hl == 9 && strncmp(host, "127.0.0.1", 9) == 0) || (hl == 3 && strncmp(host, "::1", 3) == 0);
        if (!ok) return 0;
        p = comma ? comma + 1 : end;
    }
    return 1;
}

/* The http(s) URL a --sink-config entry SINK.KEY=URL gives (a service the
 * emitter writes to, e.g. kafka.schema_registry_url), or NULL. */
static const char *sink_config_url(const char *entry)
{
    const char *eq = strchr(entry, '=');
    if (!eq) return NULL;
    eq++;
    return strncasecmp(eq, "http://", 7) == 0 || strncasecmp(eq, "https://", 8) == 0 ? eq : NULL;
}

typedef struct dest_spec {
    const char *uri;
    char scheme[24];
    char label[SHAPE_EMIT_DESTINATIONS_MAX]; /* the URI redacted: named in messages and dead letters */
    const shape_emitter_type *type;
    int builtin;
    shape_options *options;
} dest_spec;

static int resolve_dest(const char *uri, dest_spec *d, shape_err *err)
{
    memset(d, 0, sizeof *d);
    d->uri = uri;
    d->type = shape_emit_builtin_for_uri(uri);
    d->builtin = d->type != NULL;
    if (!d->type) {
        if (!strstr(uri, "://"))
            return shape_err_set(err, SHAPE_EINVAL,
                                 "unknown sink '%.60s'; use console, file (with -o FILE), null, or a URI "
                                 "such as file:///PATH, jsonl:///DIR, kafka://HOST:PORT/TOPIC",
                                 uri);
        d->type = shape_registry_emitter_for_uri(shape_cli_registry(), uri, err);
        if (!d->type) return err->code ? err->code : SHAPE_ENOTFOUND;
    }
    if (d->type->check_uri) SHAPE_RETURN_NOT_OK(d->type->check_uri(uri, err));
    if (!d->type->open || !d->type->send)
        return shape_err_set(err, SHAPE_EINVAL, "the %s emitter cannot send events (its plugin only checks URIs)",
                             d->type->name);
    shape_uri_scheme(uri, d->scheme, sizeof d->scheme);
    /* without credentials or query (the checkpoint's redaction), so a
     * message or a dead letter can say where without saying a secret */
    return shape_emit_destinations_id(&uri, 1, d->label, sizeof d->label, err);
}

/* ---- the command ---------------------------------------------------------------- */

/* Everything one `shape emit` run holds: the options as read, the domain and
 * plan, the destinations, and the run's config. */
typedef struct emit_state {
    const shape_args *args;
    /* the stream */
    const shape_domain_type *dtype;
    const char *scale;
    int64_t seed;
    shape_envelope envelope;
    const char *format; /* --event-format: json, or a registry format */
    int registry_format;
    /* pacing and limits */
    int realtime;
    double rate, max_rate, duration, ck_seconds;
    int64_t max_events, ck_every, retries, batch_events, queue_batches, max_dead;
    double speed;                 /* --speed, 0: none */
    double dup_fraction, poison_fraction, out_of_order, anomaly_fraction;
    const char *mutators[8];
    size_t nmutators;
    int64_t dup_window, ooo_window;
    shape_emit_variation variation;
    const char *answer_key;
    shape_emit_schedule schedule; /* --realtime's shape (used when not constant) */
    shape_rate_curve curve;
    uint64_t shard_index, shard_count;
    int event_time; /* --order event-time */
    char shard_text[48];
    const char *shard; /* "i/n", or NULL for the whole stream */
    /* metadata */
    int32_t partition;
    const char *ts;
    int synthetic;
    char *key_buf;
    const char *key_columns[MAX_KEY_COLUMNS];
    size_t nkey;
    const char *headers[32];
    size_t nheaders;
    const char *dead_letter;
    /* destinations */
    dest_spec specs[MAX_DESTS];
    size_t ndests;
    shape_emit_destination dests[MAX_DESTS];
    shape_options *file_options;
    char *sink_file_uri;
    char *checkpoint_default;
    char destinations[SHAPE_EMIT_DESTINATIONS_MAX]; /* the checkpoint's binding (shape_emit_destinations_id) */
    const char *checkpoint;  /* --checkpoint, or FILE.checkpoint with --sink file, or NULL */
    int lock_fd;             /* the checkpoint's lock (shape_checkpoint_lock), -1: none */
    dest_spec dl_spec; /* --dead-letter, when given (dl_spec.uri != NULL) */
    shape_emit_destination dl;
    int console;
    /* the plan and where it resumes */
    shape_domain *domain;
    shape_event_plan plan;
    char fingerprint[65];
    uint64_t stream_total, limit, start;
    shape_emit_checkpoint ck;
    int found;
    shape_emit_config cfg;
} emit_state;

static void state_free(emit_state *s)
{
    shape_checkpoint_unlock(s->checkpoint, s->lock_fd);
    free(s->key_buf);
    free(s->sink_file_uri);
    free(s->checkpoint_default);
    for (size_t i = 0; i < s->ndests; i++) {
        if (s->dests[i].emitter && s->dests[i].type->close) s->dests[i].type->close(s->dests[i].emitter);
        shape_options_free(s->specs[i].options);
    }
    if (s->dl.emitter && s->dl.type->close) s->dl.type->close(s->dl.emitter);
    shape_options_free(s->dl_spec.options);
    shape_options_free(s->file_options);
    /* last: the emitters may still hold table names of the domain */
    shape_event_plan_reset(&s->plan);
    shape_domain_free(s->domain);
    shape_domain_type_free(s->dtype);
}

static int emit_faulted(const emit_state *st)
{
    return st->dup_fraction > 0 || st->poison_fraction > 0 || st->out_of_order > 0 || st->anomaly_fraction > 0;
}

/* shard: "i/n" of a --shard run, or NULL for the whole stream; faults: the
 * run injects duplicates or poison (their counts are reported). */
static void print_report(const shape_emit_report *rep, const char *shard, int faults, int json, int to_stderr)
{
    FILE *out = to_stderr ? stderr : stdout;
    if (json) {
        json_t *doc = json_pack(
            "{s:I, s:I, s:I, s:I, s:b, s:s, s:f, s:f, s:I, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:b, s:f}",
            "events", (json_int_t)rep->events, "start_offset", (json_int_t)rep->start_offset,
            "end_offset", (json_int_t)rep->end_offset, "total_events", (json_int_t)rep->total_events,
            "complete", rep->complete, "stopped_by", rep->stopped_by, "elapsed", rep->elapsed, "rate",
            rep->rate, "max_queue_depth", (json_int_t)rep->max_queue_depth, "max_lag", rep->max_lag,
            "lag_p99", rep->lag_p99, "per_second", rep->per_second, "checkpoints",
            (json_int_t)rep->checkpoints, "retries", (json_int_t)rep->retries, "anomalies_selected",
            (json_int_t)rep->anomalies_selected, "anomalies_affected", (json_int_t)rep->anomalies_affected, "already_complete", rep->already_complete,
            "virtual_span", 0.0);
        if (doc && rep->dead_letter_enabled) {
            json_t *dl = json_object();
            for (size_t i = 0; i < rep->ndl_reasons; i++)
                json_object_set_new(dl, rep->dl_reasons[i].reason, json_integer((json_int_t)rep->dl_reasons[i].count));
            if (rep->dl_other)
                json_object_set_new(dl, "other",
                                    json_integer((json_int_t)rep->dl_reasons[SHAPE_EMIT_DL_REASONS].count));
            json_object_set_new(doc, "dead_lettered", dl);
        }
        if (doc && shard) json_object_set_new(doc, "shard", json_string(shard));
        if (doc && faults) {
            json_object_set_new(doc, "duplicates", json_integer((json_int_t)rep->duplicates));
            json_object_set_new(doc, "poisoned", json_integer((json_int_t)rep->poisoned));
            json_object_set_new(doc, "late", json_integer((json_int_t)rep->late));
        }
        if (doc) {
            json_dumpf(doc, out, JSON_COMPACT);
            fputc('\n', out);
            json_decref(doc);
        }
    } else {
        char ev[32], end[32], total[32], rate[32];
        shape_cli_thousands(ev, sizeof ev, rep->events);
        shape_cli_thousands(end, sizeof end, rep->end_offset);
        shape_cli_thousands(total, sizeof total, rep->total_events);
        fprintf(out, "shape emit: %s events delivered, offset %s of %s%s%s, %s%s", ev, end, total,
                shard ? " in shard " : "", shard ? shard : "", rep->stopped_by,
                rep->already_complete ? " (already complete)" : "");
        double r = rep->rate > 0 ? rep->rate : rep->per_second;
        if (rep->events > 0 && r > 0) {
            shape_cli_thousands(rate, sizeof rate, (uint64_t)(r + 0.5));
            fprintf(out, ", %s events/s", rate);
        }
        if (rep->dead_lettered) {
            shape_cli_thousands(rate, sizeof rate, rep->dead_lettered);
            fprintf(out, ", %s dead-lettered", rate);
        }
        if (faults) {
            shape_cli_thousands(rate, sizeof rate, rep->duplicates);
            fprintf(out, ", %s duplicates", rate);
            shape_cli_thousands(rate, sizeof rate, rep->poisoned);
            fprintf(out, ", %s poisoned", rate);
            shape_cli_thousands(rate, sizeof rate, rep->late);
            fprintf(out, ", %s late", rate);
        }
        fputc('\n', out);
    }
    fflush(out);
}

/* ---- read options ------------------------------------------------------------- */

/* The domain, its scale and seed, the envelope and the event format. */
static int read_stream_options(emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    SHAPE_RETURN_NOT_OK(
        shape_domain_lookup_in(shape_args_positional(args, 0), shape_args_value(args, "domain-path"), &st->dtype, err));
    st->scale = shape_args_value(args, "scale");
    if (!st->scale) st->scale = st->dtype->default_preset;
    if (!shape_domain_has_preset(st->dtype, st->scale)) {
        char list[200] = "";
        size_t used = 0;
        const char *p;
        for (size_t i = 0; (p = st->dtype->preset_name(st->dtype, i)) != NULL && used < sizeof list - 1; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", p);
        return shape_err_set(err, SHAPE_EINVAL, "unknown scale '%.40s'; choose from %s", st->scale, list);
    }
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "seed", 0, INT64_MAX, (int64_t)st->dtype->default_seed, &st->seed, err));
    const char *env_name = shape_args_value(args, "envelope");
    SHAPE_RETURN_NOT_OK(shape_envelope_parse(env_name ? env_name : "flat", &st->envelope, err));
    /* --event-format: json here; the registry formats are the emitter's
     * business (the kafka:// emitter takes them, core sinks refuse them) */
    st->format = shape_args_value(args, "event-format");
    if (!st->format) st->format = "json";
    if (strcmp(st->format, "json") != 0 && strcmp(st->format, "avro") != 0 && strcmp(st->format, "protobuf") != 0 &&
        strcmp(st->format, "json-schema") != 0)
        return shape_err_set(err, SHAPE_EINVAL,
                             "unknown event format '%.40s'; choose from json, avro, protobuf, json-schema", st->format);
    st->registry_format = strcmp(st->format, "json") != 0;
    return SHAPE_OK;
}

/* "60x", "60", "0.5x" → factor > 0. */
static int parse_speed(const char *text, double *out, shape_err *err)
{
    char *end;
    double v = strtod(text, &end);
    if (end != text && (*end == 'x' || *end == 'X')) end++;
    if (end == text || *end || !isfinite(v) || v <= 0)
        return shape_err_set(err, SHAPE_EINVAL, "--speed must be a factor > 0 such as 60x, 60 or 0.5x, got '%.40s'", text);
    *out = v;
    return SHAPE_OK;
}

/* "HH:MM[:SS]" → seconds of the day; the current UTC time of day when absent. */
static int parse_curve_start(const char *text, double *out, shape_err *err)
{
    if (!text) {
        *out = (double)(time(NULL) % 86400);
        return SHAPE_OK;
    }
    *out = shape_emit_time_of_day(text);
    if (*out < 0) return shape_err_set(err, SHAPE_EINVAL, "--curve-start wants HH:MM or HH:MM:SS, got '%.40s'", text);
    return SHAPE_OK;
}

/* Shaped traffic: --burst, --ramp, --daily-curve (+ --curve-start),
 * --arrivals, --speed, each checked against --realtime (spec-core §3.2). */
static int read_shaping_options(emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    shape_emit_schedule *s = &st->schedule;
    memset(s, 0, sizeof *s);
    s->rate = st->rate;
    s->seed = (uint64_t)st->seed;
    const char *speed = shape_args_value(args, "speed"), *curve = shape_args_value(args, "daily-curve");
    const char *arrivals = shape_args_value(args, "arrivals");
    if (speed) {
        SHAPE_RETURN_NOT_OK(parse_speed(speed, &st->speed, err));
        if (st->realtime) return shape_err_set(err, SHAPE_EINVAL, "--speed and --realtime are mutually exclusive");
    }
    static const char *const need_rt[] = {"burst", "ramp", "daily-curve", "curve-start"};
    for (size_t i = 0; i < sizeof need_rt / sizeof need_rt[0]; i++)
        if (shape_args_count(args, need_rt[i]) && !st->realtime)
            return shape_err_set(err, SHAPE_EINVAL, "--%s needs --realtime", need_rt[i]);
    s->nbursts = shape_args_count(args, "burst");
    s->nramps = shape_args_count(args, "ramp");
    if (s->nbursts > SHAPE_SCHEDULE_MAX_SHAPES || s->nramps > SHAPE_SCHEDULE_MAX_SHAPES)
        return shape_err_set(err, SHAPE_EINVAL, "at most %d --burst and %d --ramp options", SHAPE_SCHEDULE_MAX_SHAPES,
                             SHAPE_SCHEDULE_MAX_SHAPES);
    for (size_t i = 0; i < s->nbursts; i++)
        SHAPE_RETURN_NOT_OK(shape_emit_burst_parse(shape_args_nth(args, "burst", i), &s->bursts[i], err));
    for (size_t i = 0; i < s->nramps; i++)
        SHAPE_RETURN_NOT_OK(shape_emit_ramp_parse(shape_args_nth(args, "ramp", i), &s->ramps[i], err));
    if (curve) {
        int rc = shape_rate_curve_builtin(curve, &st->curve, err);
        if (rc == SHAPE_ENOTFOUND) rc = shape_rate_curve_load(curve, &st->curve, err);
        SHAPE_RETURN_NOT_OK(rc);
        SHAPE_RETURN_NOT_OK(parse_curve_start(shape_args_value(args, "curve-start"), &s->curve_start, err));
        s->curve = &st->curve;
    } else if (shape_args_value(args, "curve-start")) {
        return shape_err_set(err, SHAPE_EINVAL, "--curve-start needs --daily-curve");
    }
    if (arrivals && strcmp(arrivals, "constant") != 0 && strcmp(arrivals, "poisson") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "unknown arrivals '%.40s'; choose from constant, poisson", arrivals);
    s->poisson = arrivals && strcmp(arrivals, "poisson") == 0;
    if (s->poisson && !st->realtime) return shape_err_set(err, SHAPE_EINVAL, "--arrivals poisson needs --realtime");
    return shape_emit_schedule_check(s, err);
}

/* --time-origin's instant in ns: the clock for `now`, else ISO-8601. */
static int origin_instant(const char *origin, int64_t *ns, shape_err *err)
{
    if (strcmp(origin, "now") == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        *ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        return SHAPE_OK;
    }
    int64_t us;
    if (shape_parse_iso8601(origin, strlen(origin), &us) != 0)
        return shape_err_set(err, SHAPE_EINVAL, "--time-origin wants now or an ISO-8601 instant, got '%.60s'", origin);
    *ns = us * 1000;
    return SHAPE_OK;
}

/* A fraction option in [0, 1] (0 when absent). */
static int read_fraction(const shape_args *args, const char *name, double *out, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(shape_args_double(args, name, 0, 0, NULL, 0, out, err));
    if (*out > 1)
        return shape_err_set(err, SHAPE_EINVAL, "--%s must be a fraction from 0 to 1, got '%.40s'", name,
                             shape_args_value(args, name));
    return SHAPE_OK;
}

/* Faults in delivery: duplicates, poison, the answer key (spec-core §3.7). */
static int read_fault_options(emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    SHAPE_RETURN_NOT_OK(read_fraction(args, "duplicate-fraction", &st->dup_fraction, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "duplicate-window", 1, 100000000, 1000, &st->dup_window, err));
    SHAPE_RETURN_NOT_OK(read_fraction(args, "poison-fraction", &st->poison_fraction, err));
    SHAPE_RETURN_NOT_OK(read_fraction(args, "out-of-order", &st->out_of_order, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "ooo-window", 1, 10000000, 1000, &st->ooo_window, err));
    SHAPE_RETURN_NOT_OK(read_fraction(args, "anomaly-fraction", &st->anomaly_fraction, err));
    st->nmutators = shape_args_count(args, "anomaly-mutator");
    if (st->nmutators && st->anomaly_fraction <= 0)
        return shape_err_set(err, SHAPE_EINVAL, "--anomaly-mutator needs --anomaly-fraction > 0");
    if (st->nmutators > 8) return shape_err_set(err, SHAPE_EINVAL, "at most 8 --anomaly-mutator options");
    for (size_t i = 0; i < st->nmutators; i++) {
        st->mutators[i] = shape_args_nth(args, "anomaly-mutator", i);
        SHAPE_RETURN_NOT_OK(shape_emit_mutator_check(st->mutators[i], st->registry_format, err));
    }
    if (st->anomaly_fraction > 0 && st->nmutators == 0) st->mutators[st->nmutators++] = "value-anomaly";
    st->variation.anomaly_fraction = st->anomaly_fraction;
    st->variation.mutators = st->anomaly_fraction > 0 ? st->mutators : NULL;
    st->variation.nmutators = st->anomaly_fraction > 0 ? st->nmutators : 0;
    st->variation.out_of_order = st->out_of_order;
    st->variation.time_origin = shape_args_value(args, "time-origin");
    int64_t at_ns;
    if (st->variation.time_origin) SHAPE_RETURN_NOT_OK(origin_instant(st->variation.time_origin, &at_ns, err));
    st->variation.ooo_window = (uint64_t)st->ooo_window;
    /* --order: table (today's stream) or event-time (docs/EMIT.md,
     * "Event-time order": the domain's timeline variant, merged by time) */
    const char *order = shape_args_value(args, "order");
    if (order && strcmp(order, "table") != 0) {
        if (strcmp(order, "event-time") != 0)
            return shape_err_set(err, SHAPE_EINVAL, "--order wants table or event-time, got '%.40s'", order);
        st->event_time = 1;
    }
    st->answer_key = shape_args_value(args, "answer-key");
    if (st->answer_key && !*st->answer_key) return shape_err_set(err, SHAPE_EINVAL, "--answer-key needs a file name");
    return SHAPE_OK;
}

/* Rate, limits, checkpoints, retries, --shard, batch and queue sizes. */
static int read_pacing_options(emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    st->realtime = shape_args_flag(args, "realtime") && !shape_args_flag(args, "no-realtime");
    SHAPE_RETURN_NOT_OK(shape_args_double(args, "rate", 0, 1, NULL, 100, &st->rate, err));
    SHAPE_RETURN_NOT_OK(shape_args_double(args, "max-rate", 0, 1, NULL, 0, &st->max_rate, err));
    if (!shape_args_value(args, "max-rate")) st->max_rate = 0;
    SHAPE_RETURN_NOT_OK(shape_args_double(args, "duration", 0, 0, "seconds", -1, &st->duration, err));
    if (!shape_args_value(args, "duration")) st->duration = -1;
    SHAPE_RETURN_NOT_OK(shape_args_double(args, "checkpoint-seconds", 0, 1, "seconds", 1, &st->ck_seconds, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "max-events", 0, INT64_MAX, -1, &st->max_events, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "checkpoint-every", 1, INT64_MAX, 10000, &st->ck_every, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "retries", 0, 100, 3, &st->retries, err));
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "max-dead-letter", 0, INT64_MAX, -1, &st->max_dead, err));
    st->shard_index = 0;
    st->shard_count = 1;
    if (shape_args_value(args, "shard")) {
        SHAPE_RETURN_NOT_OK(shape_emit_parse_shard(shape_args_value(args, "shard"), &st->shard_index, &st->shard_count, err));
        if (st->shard_count > 1)
            snprintf(st->shard_text, sizeof st->shard_text, "%llu/%llu", (unsigned long long)st->shard_index,
                     (unsigned long long)st->shard_count);
    }
    st->shard = st->shard_text[0] ? st->shard_text : NULL;
    SHAPE_RETURN_NOT_OK(read_shaping_options(st, err));
    double basis = st->realtime ? st->rate : st->max_rate;
    int64_t dflt_batch = basis > 0 ? (int64_t)(basis / 100) : st->speed > 0 ? 100 : 1000; /* floor: basis > 0 */
    if (dflt_batch < 1) dflt_batch = 1;
    if (dflt_batch > 1000) dflt_batch = 1000;
    if (st->schedule.poisson) dflt_batch = 1; /* every event at its own arrival time */
    SHAPE_RETURN_NOT_OK(shape_args_int(args, "batch-events", 1, 1000000, dflt_batch, &st->batch_events, err));
    /* Paced: about one second of batches (at least 8). Unpaced: 16, not the
     * reference's 8: the sender merges queued batches into one acknowledged
     * send, so up to 16k events are in flight per send and a broker's round
     * trip caps the rate less. (It was 64 while the embedded broker stalled
     * ~45 ms per send without TCP_NODELAY; measured into shape broker since,
     * 500k events: 16 is as fast as 64 in wall time with ~25 % less CPU, and
     * faster than 8.) */
    double per = st->rate / (double)st->batch_events;
    int64_t dflt_queue = st->realtime ? (per > 1e6 ? 1000000 : (int64_t)per + ((double)(int64_t)per < per)) : 16;
    if (dflt_queue < 8) dflt_queue = 8;
    if (dflt_queue > 1000) dflt_queue = 1000; /* batches are allocated up front */
    return shape_args_int(args, "queue-batches", 1, 10000, dflt_queue, &st->queue_batches, err);
}

/* Partition, message timestamp, keys and headers, and the dead letters. */
static int read_metadata_options(emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    st->partition = -1;
    const char *part = shape_args_value(args, "partition");
    if (part && strcmp(part, "by_key") != 0) {
        int64_t p;
        if (shape_parse_int64(part, 0, INT32_MAX, &p) != SHAPE_OK)
            return shape_err_set(err, SHAPE_EINVAL, "partition must be a nonnegative number or 'by_key'");
        st->partition = (int32_t)p;
    }
    st->ts = shape_args_value(args, "timestamp");
    if (st->ts && strcmp(st->ts, "broker") != 0 && strcmp(st->ts, "event_time") != 0)
        return shape_err_set(err, SHAPE_EINVAL, "timestamp must be 'broker' or 'event_time'");
    st->synthetic = !shape_args_flag(args, "no-synthetic-header");
    const char *key = shape_args_value(args, "key");
    if (key && strcmp(key, "idempotency") != 0) {
        st->key_buf = strdup(key);
        if (!st->key_buf) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        char *save = NULL;
        for (char *tok = strtok_r(st->key_buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
            if (st->nkey == MAX_KEY_COLUMNS)
                return shape_err_set(err, SHAPE_EINVAL, "--key names at most %d columns", MAX_KEY_COLUMNS);
            st->key_columns[st->nkey++] = tok;
        }
        if (st->nkey == 0) return shape_err_set(err, SHAPE_EINVAL, "--key needs a column name");
    }
    st->nheaders = shape_args_count(args, "header");
    if (st->nheaders > 20) return shape_err_set(err, SHAPE_EINVAL, "at most 20 --header options");
    for (size_t i = 0; i < st->nheaders; i++) st->headers[i] = shape_args_nth(args, "header", i);
    st->dead_letter = shape_args_value(args, "dead-letter");
    if (st->max_dead >= 0 && !st->dead_letter)
        return shape_err_set(err, SHAPE_EINVAL, "--max-dead-letter needs --dead-letter");
    return SHAPE_OK;
}

/* ---- resolve destinations ------------------------------------------------------- */

/* --sink (with -o), --to and --dead-letter, each resolved to an emitter type. */
static int resolve_destinations(emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    const char *sink = shape_args_value(args, "sink");
    const char *output = shape_args_value(args, "output");
    if (!sink) sink = "console";
    if (strcmp(sink, "file") == 0) {
        if (!output || !*output) return shape_err_set(err, SHAPE_EINVAL, "--sink file needs --output FILE");
        /* "-" is standard output elsewhere (stream-profile -o -); here it would be a file named "-" */
        if (strcmp(output, "-") == 0)
            return shape_err_set(err, SHAPE_EINVAL,
                                 "-o -: the file sink writes a file; for standard output use --sink console (the "
                                 "default), or name a file such as ./-");
        size_t n = strlen(output) + 8;
        st->sink_file_uri = malloc(n);
        st->checkpoint_default = malloc(n + 16);
        if (!st->sink_file_uri || !st->checkpoint_default) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        snprintf(st->sink_file_uri, n, "file://%s", output);
        snprintf(st->checkpoint_default, n + 16, "%s.checkpoint", output);
        sink = st->sink_file_uri;
    } else if (output) {
        return shape_err_set(err, SHAPE_EINVAL, "--output is only used with --sink file");
    }
    size_t nto = shape_args_count(args, "to");
    if (1 + nto > MAX_DESTS) return shape_err_set(err, SHAPE_EINVAL, "at most %d destinations", MAX_DESTS);
    for (size_t i = 0; i <= nto; i++) {
        const char *uri = i == 0 ? sink : shape_args_nth(args, "to", i - 1);
        SHAPE_RETURN_NOT_OK(resolve_dest(uri, &st->specs[st->ndests], err));
        st->ndests++;
    }
    if (st->dead_letter) {
        for (size_t i = 0; i < st->ndests; i++)
            if (strcmp(st->specs[i].uri, st->dead_letter) == 0)
                return shape_err_set(err, SHAPE_EINVAL, "--dead-letter must differ from --sink and --to");
        SHAPE_RETURN_NOT_OK(resolve_dest(st->dead_letter, &st->dl_spec, err));
    }
    for (size_t i = 0; i < st->ndests; i++) {
        if (st->specs[i].builtin && strcmp(st->specs[i].type->name, "console") == 0) st->console = 1;
        if (st->registry_format && st->specs[i].builtin)
            return shape_err_set(err, SHAPE_EINVAL,
                                 "--event-format %s applies to kafka:// targets only; %s:// does not take it",
                                 st->format, st->specs[i].builtin ? st->specs[i].type->name : st->specs[i].scheme);
    }
    const char *uris[MAX_DESTS];
    for (size_t i = 0; i < st->ndests; i++) uris[i] = st->specs[i].uri;
    SHAPE_RETURN_NOT_OK(shape_emit_destinations_id(uris, st->ndests, st->destinations, sizeof st->destinations, err));
    st->checkpoint = shape_args_value(args, "checkpoint");
    if (!st->checkpoint) st->checkpoint = st->checkpoint_default;
    return SHAPE_OK;
}

/* The path of a file:// URI (the core's file sink), else NULL. */
static const char *file_uri_path(const dest_spec *d)
{
    if (!d->uri || !d->builtin || strcmp(d->type->name, "file") != 0) return NULL;
    return strstr(d->uri, "://") + 3;
}

/* Every file the run reads or writes, checked before anything is planned,
 * opened or sent (shape/paths.h): no output over an input or another
 * output, every output's folder there and writable. */
static int check_paths(const emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    shape_path_use uses[MAX_DESTS + 8];
    size_t n = 0;
    for (size_t i = 0; i < st->ndests; i++)
        if (file_uri_path(&st->specs[i]))
            uses[n++] = (shape_path_use){i == 0 ? (shape_args_value(args, "output") ? "-o" : "--sink") : "--to",
                                         file_uri_path(&st->specs[i]), 1};
    uses[n++] = (shape_path_use){"--checkpoint", st->checkpoint, 1};
    uses[n++] = (shape_path_use){"--answer-key", st->answer_key, 1};
    uses[n++] = (shape_path_use){"--dead-letter", file_uri_path(&st->dl_spec), 1};
    uses[n++] = (shape_path_use){"--options-file", shape_args_value(args, "options-file"), 0};
    const char *curve = shape_args_value(args, "daily-curve");
    uses[n++] = (shape_path_use){"--daily-curve", curve ? shape_paths_uri_file(curve) : NULL, 0};
    uses[n++] = (shape_path_use){"the domain", shape_paths_uri_file(shape_args_positional(args, 0)), 0};
    return shape_paths_check(uses, n, err);
}

/* Each destination's options: --options-file (plugin emitters), the
 * envelope and event format, --sink-config SINK.KEY=VALUE. */
static int set_emitter_options(emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    const char *options_file = shape_args_value(args, "options-file");
    if (options_file) {
        st->file_options = shape_options_new();
        if (!st->file_options) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        SHAPE_RETURN_NOT_OK(shape_options_load_file(st->file_options, options_file, err));
    }
    for (size_t i = 0; i < st->ndests; i++) {
        st->specs[i].options = shape_options_new();
        if (!st->specs[i].options) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        if (st->file_options && !st->specs[i].builtin) {
            char *text = json_dumps((const json_t *)shape_options_json(st->file_options), JSON_COMPACT);
            if (!text) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
            int rc = shape_options_load_buffer(st->specs[i].options, text, strlen(text), options_file, err);
            free(text);
            SHAPE_RETURN_NOT_OK(rc);
        }
        SHAPE_RETURN_NOT_OK(shape_options_set_string(st->specs[i].options, "envelope",
                                                     st->envelope == SHAPE_ENVELOPE_FLAT ? "flat" : "cloudevents", err));
        if (st->registry_format)
            SHAPE_RETURN_NOT_OK(shape_options_set_string(st->specs[i].options, "event_format", st->format, err));
    }
    for (size_t i = 0; i < shape_args_count(args, "sink-config"); i++) {
        const char *entry = shape_args_nth(args, "sink-config", i);
        const char *dot = strchr(entry, '.'), *eq = strchr(entry, '=');
        if (!dot || !eq || dot > eq || dot == entry || eq == dot + 1)
            return shape_err_set(err, SHAPE_EINVAL, "--sink-config wants SINK.KEY=VALUE");
        char name[64], keyname[128];
        snprintf(name, sizeof name, "%.*s", (int)(dot - entry), entry);
        snprintf(keyname, sizeof keyname, "%.*s", (int)(eq - dot - 1), dot + 1);
        if (shape_credref_secret_name(keyname) && !shape_credref_is_reference(eq + 1))
            return shape_err_set(err, SHAPE_EINVAL,
                                 "--sink-config %s.%s must be a credential reference (env://, file://, kv://), "
                                 "not a literal",
                                 name, keyname);
        int used = 0;
        for (size_t d = 0; d < st->ndests; d++)
            if (strcasecmp(st->specs[d].type->name, name) == 0) {
                SHAPE_RETURN_NOT_OK(shape_options_set_kv(st->specs[d].options, dot + 1, err));
                used = 1;
            }
        if (!used)
            return shape_err_set(err, SHAPE_EINVAL, "--sink-config %s.%s: no destination is a %s emitter", name,
                                 keyname, name);
    }
    return SHAPE_OK;
}

/* ---- plan and resume ------------------------------------------------------------ */

/* The run's config from the options and the plan (destinations come later). */
static void make_config(emit_state *st)
{
    shape_emit_config *cfg = &st->cfg;
    memset(cfg, 0, sizeof *cfg);
    cfg->plan = &st->plan;
    cfg->envelope = st->envelope;
    cfg->key_columns = st->nkey ? st->key_columns : NULL;
    cfg->nkey_columns = st->nkey;
    cfg->headers = st->headers;
    cfg->nheaders = st->nheaders;
    cfg->partition = st->partition;
    cfg->timestamp_event_time = st->ts && strcmp(st->ts, "event_time") == 0;
    cfg->synthetic = st->synthetic;
    cfg->realtime = st->realtime;
    cfg->rate = st->rate;
    cfg->schedule = st->realtime && !shape_emit_schedule_is_constant(&st->schedule) ? &st->schedule : NULL;
    cfg->speed = st->speed;
    cfg->duplicate_fraction = st->dup_fraction;
    cfg->duplicate_window = (uint64_t)st->dup_window;
    cfg->poison_fraction = st->poison_fraction;
    cfg->fault_seed = (uint64_t)st->seed;
    cfg->answer_key = st->answer_key;
    cfg->out_of_order = st->out_of_order;
    cfg->anomaly_fraction = st->anomaly_fraction;
    cfg->mutators = st->mutators;
    cfg->nmutators = st->nmutators;
    cfg->ooo_window = (uint64_t)st->ooo_window;
    cfg->max_rate = st->max_rate;
    cfg->shard_index = st->shard_index;
    cfg->shard_count = st->shard_count;
    cfg->limit = st->limit;
    cfg->duration = st->duration;
    cfg->batch_events = (size_t)st->batch_events;
    cfg->queue_batches = (size_t)st->queue_batches;
    cfg->checkpoint_path = st->checkpoint;
    cfg->fingerprint = st->fingerprint;
    cfg->destinations = st->destinations;
    cfg->checkpoint_every = (uint64_t)st->ck_every;
    cfg->checkpoint_seconds = st->ck_seconds;
    cfg->retries = (int)st->retries;
    cfg->retry_backoff = 0.1;
    cfg->stop = &stop_requested;
}

/* The event time of row `r` of domain table t (which has an event-time column). */
static int row_event_time(emit_state *st, size_t t, uint64_t r, int64_t *out, shape_err *err)
{
    shape_domain_cursor *cur;
    SHAPE_RETURN_NOT_OK(shape_domain_cursor_open(st->domain, t, &cur, err));
    shape_gen_row *row = malloc(sizeof *row);
    int rc = row ? shape_domain_cursor_row(cur, r, row, err) : shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    if (rc == SHAPE_OK) *out = row->values[shape_domain_table_at(st->domain, t)->event_time_col].v.i;
    free(row);
    shape_domain_cursor_free(cur);
    return rc;
}

/* The event time of the stream's first timed event: in event-time order the
 * timeline's first timed event (a head table's times, such as promotion's
 * start_date, are calendar entries sent ahead, not events); else, or when
 * no timed table is selected, row 0 of the first selected table that has an
 * event-time column. */
static int first_event_time(emit_state *st, int64_t *out, shape_err *err)
{
    if (st->event_time) {
        size_t nd = shape_domain_table_count(st->domain), t = 0;
        unsigned char *sel = calloc(nd ? nd : 1, 1);
        if (!sel) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        for (size_t k = 0; k < st->plan.ntables; k++) sel[st->plan.table_ids[k]] = 1;
        shape_domain_timeline *tl = NULL;
        uint64_t r = 0;
        int rc = shape_domain_timeline_open(st->domain, sel, &tl, err);
        int found = rc == SHAPE_OK && shape_domain_timeline_first_timed(tl, &t, &r);
        shape_domain_timeline_free(tl);
        free(sel);
        SHAPE_RETURN_NOT_OK(rc);
        if (found && shape_domain_table_at(st->domain, t)->event_time_col >= 0)
            return row_event_time(st, t, r, out, err);
    }
    for (size_t k = 0; k < st->plan.ntables; k++) {
        const shape_domain_table *t = shape_domain_table_at(st->domain, st->plan.table_ids[k]);
        if (t->event_time_col < 0 || st->plan.rows[k] == 0) continue;
        return row_event_time(st, st->plan.table_ids[k], 0, out, err);
    }
    return shape_err_set(err, SHAPE_EINVAL, "--time-origin: none of the selected tables has an event time");
}

/* --time-origin now|ISO-8601: the shift that puts the first event time at
 * that instant (after the checkpoint was read: a resumed run goes on with
 * the shift it started with — `now`'s, and one a build that anchored
 * elsewhere computed). */
static int time_origin_shift(emit_state *st, shape_err *err)
{
    const char *origin = st->variation.time_origin;
    if (!origin) return SHAPE_OK;
    if (st->found && st->ck.time_shifted) {
        st->cfg.time_shift_ns = st->ck.time_shift_ns;
    } else {
        int64_t at_ns = 0, first = 0;
        SHAPE_RETURN_NOT_OK(origin_instant(origin, &at_ns, err));
        SHAPE_RETURN_NOT_OK(first_event_time(st, &first, err));
        st->cfg.time_shift_ns = at_ns - first;
    }
    st->cfg.time_shifted = 1;
    return SHAPE_OK;
}

/* Open the domain, plan the selected tables, fingerprint this (shard's)
 * stream, check the metadata against the plan and read the checkpoint. */
static int plan_and_resume(emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    SHAPE_RETURN_NOT_OK(st->event_time
                            ? shape_domain_open_timeline(st->dtype, st->scale, (uint64_t)st->seed, &st->domain, err)
                            : shape_domain_open(st->dtype, st->scale, (uint64_t)st->seed, &st->domain, err));
    size_t ntables = shape_args_count(args, "table");
    const char *tables[64];
    if (ntables > 64) return shape_err_set(err, SHAPE_EINVAL, "too many --table options");
    for (size_t i = 0; i < ntables; i++) tables[i] = shape_args_nth(args, "table", i);
    SHAPE_RETURN_NOT_OK(shape_event_plan_init(&st->plan, st->domain, tables, ntables, err));
    SHAPE_RETURN_NOT_OK(shape_emit_variant_fingerprint(&st->plan, st->envelope, st->format, st->shard_index,
                                                       st->shard_count, &st->variation, st->fingerprint, err));
    /* a shard's offsets, limit and total count its own events */
    st->stream_total = shape_emit_shard_events(st->plan.total, st->shard_index, st->shard_count);
    st->limit = st->stream_total;
    if (st->max_events >= 0 && (uint64_t)st->max_events < st->limit) st->limit = (uint64_t)st->max_events;
    make_config(st);
    SHAPE_RETURN_NOT_OK(shape_emit_check_metadata(&st->cfg, err));
    st->found = 0;
    /* one writer per checkpoint (a dry run writes nothing and takes no lock) */
    if (st->cfg.checkpoint_path && !shape_args_flag(args, "dry-run"))
        SHAPE_RETURN_NOT_OK(shape_checkpoint_lock(st->cfg.checkpoint_path, &st->lock_fd, err));
    if (st->cfg.checkpoint_path && !shape_args_flag(args, "fresh")) {
        SHAPE_RETURN_NOT_OK(shape_emit_checkpoint_read(st->cfg.checkpoint_path, st->fingerprint, st->stream_total,
                                                       &st->ck, &st->found, err));
        if (st->found)
            SHAPE_RETURN_NOT_OK(
                shape_emit_checkpoint_check_destinations(st->cfg.checkpoint_path, &st->ck, st->destinations, err));
    }
    st->start = st->found ? st->ck.offset : 0;
    st->cfg.start_offset = st->start;
    return time_origin_shift(st, err);
}

/* The schedule (rate segments, expected duration) and the fault plan
 * (fractions, expected counts) of a dry run. */
static void dry_run_plan(const emit_state *st)
{
    const shape_emit_schedule *s = &st->schedule;
    double events = (double)(st->limit - st->start);
    if (st->realtime) {
        printf("  schedule: %g events/s%s%s%s, arrivals %s", st->rate, s->curve ? ", daily curve " : "",
               s->curve ? s->curve->name : "", s->curve ? " from the run's start time of day" : "",
               s->poisson ? "poisson" : "constant");
        if (st->max_rate > 0) printf(", capped at %g/s", st->max_rate);
        printf("\n");
        for (size_t i = 0; i < s->nbursts; i++)
            printf("    burst  %g..%g s x%g\n", s->bursts[i].start, s->bursts[i].start + s->bursts[i].duration,
                   s->bursts[i].mult);
        for (size_t i = 0; i < s->nramps; i++)
            printf("    ramp   %g..%g s x%g -> x%g\n", s->ramps[i].start, s->ramps[i].start + s->ramps[i].duration,
                   s->ramps[i].from, s->ramps[i].to);
        double due = shape_emit_schedule_due(s, NULL, events);
        if (st->max_rate > 0 && events / st->max_rate > due) due = events / st->max_rate;
        printf("  expected duration %.1f s for %.0f events\n", due, events);
    } else if (st->speed > 0) {
        printf("  schedule: event time replayed at %gx\n", st->speed);
    }
    if (st->anomaly_fraction > 0) {
        printf("  anomalies: %g of rows (~%.0f expected), mutators", st->anomaly_fraction, st->anomaly_fraction * events);
        for (size_t i = 0; i < st->nmutators; i++) printf("%s %s", i ? "," : "", st->mutators[i]);
        printf("\n");
    }
    if (st->out_of_order > 0)
        printf("  disorder: %g of rows late by up to %lld positions in windows of %lld %s (~%.0f expected)\n",
               st->out_of_order, (long long)st->ooo_window, (long long)st->ooo_window,
               st->event_time ? "events of the merged stream" : "rows of a table", st->out_of_order * events);
    if (st->dup_fraction > 0 || st->poison_fraction > 0)
        printf("  faults: duplicates %g (window %lld, ~%.0f expected), poison %g (~%.0f expected), answer key %s\n",
               st->dup_fraction, (long long)st->dup_window, st->dup_fraction * events, st->poison_fraction,
               st->poison_fraction * events, st->answer_key ? st->answer_key : "none");
}

/* --dry-run: refuse now what open would refuse, then print the plan. */
static int dry_run(const emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    for (size_t i = 0; i < st->ndests; i++)
        if (st->specs[i].type->check_options)
            SHAPE_RETURN_NOT_OK(st->specs[i].type->check_options(st->specs[i].uri, st->specs[i].options, err));
    char total[32], lim[32];
    shape_cli_thousands(total, sizeof total, st->stream_total);
    shape_cli_thousands(lim, sizeof lim, st->limit);
    printf("shape emit (dry run): %s %s seed %lld, %zu table%s, %s events%s%s (limit %s), envelope %s%s%s\n",
           shape_domain_name(st->domain), st->scale, (long long)st->seed, st->plan.ntables,
           st->plan.ntables == 1 ? "" : "s", total, st->shard ? " in shard " : "", st->shard ? st->shard : "", lim,
           st->envelope == SHAPE_ENVELOPE_FLAT ? "flat" : "cloudevents", st->registry_format ? ", event format " : "",
           st->registry_format ? st->format : "");
    for (size_t k = 0; k < st->plan.ntables; k++)
        printf("  %-17s offsets %llu..%llu\n", shape_domain_table_at(st->domain, st->plan.table_ids[k])->name,
               (unsigned long long)st->plan.start[k], (unsigned long long)(st->plan.start[k] + st->plan.rows[k]));
    for (size_t i = 0; i < st->ndests; i++)
        printf("  destination %s (%s)%s\n", st->specs[i].label, st->specs[i].type->name,
               uri_is_local(st->specs[i].uri) ? "" : ", not on this machine");
    for (size_t i = 0; i < shape_args_count(args, "sink-config"); i++) {
        const char *entry = shape_args_nth(args, "sink-config", i), *url = sink_config_url(entry);
        if (url)
            printf("  service %.*s%s\n", (int)strcspn(entry, "="), entry,
                   uri_is_local(url) ? "" : ", not on this machine");
    }
    printf("  start offset %llu, checkpoint %s, batches of %lld, queue %lld, %s\n", (unsigned long long)st->start,
           st->cfg.checkpoint_path ? st->cfg.checkpoint_path : "none", (long long)st->batch_events,
           (long long)st->queue_batches, st->realtime ? "paced" : "as fast as possible");
    dry_run_plan(st);
    return SHAPE_OK;
}

/* Destinations (and services such as a schema registry) not on this
 * machine need --yes or SHAPE_CONFIRM_REMOTE=1. */
static int confirm_remote(const emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    const char *confirm = getenv("SHAPE_CONFIRM_REMOTE");
    if (shape_args_flag(args, "yes") || (confirm && strcmp(confirm, "1") == 0)) return SHAPE_OK;
    for (size_t i = 0; i <= st->ndests; i++) {
        const dest_spec *spec = i < st->ndests ? &st->specs[i] : &st->dl_spec;
        if (spec->uri && !uri_is_local(spec->uri))
            return shape_err_set(err, SHAPE_EINVAL,
                                 "refusing to write to non-local target %s (not on this machine); pass --yes "
                                 "or set SHAPE_CONFIRM_REMOTE=1",
                                 spec->label);
    }
    for (size_t i = 0; i < shape_args_count(args, "sink-config"); i++) {
        const char *entry = shape_args_nth(args, "sink-config", i), *url = sink_config_url(entry);
        if (url && !uri_is_local(url))
            return shape_err_set(err, SHAPE_EINVAL,
                                 "refusing to write to non-local service %.*s (not on this machine); pass --yes "
                                 "or set SHAPE_CONFIRM_REMOTE=1",
                                 (int)strcspn(entry, "="), entry);
    }
    return SHAPE_OK;
}

/* ---- run and report ------------------------------------------------------------- */

/* The events this run will send: those left, or, for a paced run with
 * --duration, what its schedule (and --max-rate) puts in that time. */
static uint64_t planned_events(const emit_state *st)
{
    uint64_t events = st->limit - st->start;
    if (st->realtime && st->duration >= 0) {
        double due = shape_emit_schedule_count(&st->schedule, st->duration);
        if (st->max_rate > 0 && st->max_rate * st->duration < due) due = st->max_rate * st->duration;
        if (due < (double)events) events = (uint64_t)due + 1;
    }
    return events;
}

/* The bytes the run will send to each destination, roughly: the events
 * left times their mean length (sampled from the plan) plus what a Kafka
 * record adds (key, shape-table and shape-synthetic headers, framing: ~100
 * bytes) and the --header texts. (A shard or an event-time run samples the
 * whole plan: its events are spread over every table.) */
static uint64_t planned_events(const emit_state *st);

static int planned_bytes(const emit_state *st, int64_t *out, shape_err *err)
{
    uint64_t events = planned_events(st), from = st->start, to = st->limit;
    if (st->shard_count > 1 || st->event_time) from = 0, to = st->plan.total;
    double mean;
    SHAPE_RETURN_NOT_OK(shape_event_plan_mean_bytes(&st->plan, st->envelope, from, to, &mean, err));
    mean += 100;
    for (size_t h = 0; h < st->nheaders; h++) mean += (double)strlen(st->headers[h]);
    *out = (int64_t)(mean * (double)events);
    return SHAPE_OK;
}

/* Open every destination and the dead-letter one (told whether the run
 * resumes), and hand them to the config. */
static int open_destinations(emit_state *st, shape_err *err)
{
    int64_t planned = -1;
    for (size_t i = 0; i < st->ndests; i++) {
        SHAPE_RETURN_NOT_OK(shape_options_set_bool(st->specs[i].options, "resuming", st->start > 0, err));
        /* a file sink checks that it still holds the events the checkpoint
         * counts as delivered (a shortened or replaced file is refused) */
        if (st->start > 0 && file_uri_path(&st->specs[i]))
            SHAPE_RETURN_NOT_OK(shape_options_set_int(st->specs[i].options, "resume_events", (int64_t)st->start, err));
        /* the kafka:// emitter checks --partition against the topic at open */
        if (st->partition >= 0 && !st->specs[i].builtin && strcmp(st->specs[i].type->name, "kafka") == 0)
            SHAPE_RETURN_NOT_OK(shape_options_set_int(st->specs[i].options, "partition", st->partition, err));
        /* ... and warns, before sending, when the stream cannot fit a mock
         * cluster's partitions (shape broker keeps ~5 MB of each) */
        if (!st->specs[i].builtin && strcmp(st->specs[i].type->name, "kafka") == 0) {
            if (planned < 0) SHAPE_RETURN_NOT_OK(planned_bytes(st, &planned, err));
            SHAPE_RETURN_NOT_OK(shape_options_set_int(st->specs[i].options, "planned_bytes", planned, err));
            SHAPE_RETURN_NOT_OK(
                shape_options_set_int(st->specs[i].options, "planned_events", (int64_t)planned_events(st), err));
        }
        st->dests[i].type = st->specs[i].type;
        st->dests[i].label = st->specs[i].label;
        int rc = shape_emitter_type_open(st->specs[i].type, st->specs[i].uri, st->specs[i].options, &stop_requested,
                                         &st->dests[i].emitter, err);
        if (rc != SHAPE_OK) {
            st->dests[i].emitter = NULL;
            return rc;
        }
    }
    st->cfg.dests = st->dests;
    st->cfg.ndests = st->ndests;
    st->cfg.max_dead_letter = st->max_dead;
    if (st->dl_spec.uri) {
        st->dl_spec.options = shape_options_new();
        if (!st->dl_spec.options) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
        SHAPE_RETURN_NOT_OK(shape_options_set_string(st->dl_spec.options, "envelope", "flat", err));
        SHAPE_RETURN_NOT_OK(shape_options_set_bool(st->dl_spec.options, "resuming", st->start > 0, err));
        st->dl.type = st->dl_spec.type;
        st->dl.label = st->dl_spec.label;
        int rc = shape_emitter_type_open(st->dl_spec.type, st->dl_spec.uri, st->dl_spec.options, &stop_requested,
                                         &st->dl.emitter, err);
        if (rc != SHAPE_OK) {
            st->dl.emitter = NULL;
            return rc;
        }
        st->cfg.dead_letter = &st->dl;
    }
    return SHAPE_OK;
}

/* The stream is already delivered up to the limit: report, send nothing. */
static void report_already_complete(const emit_state *st)
{
    shape_emit_report rep;
    memset(&rep, 0, sizeof rep);
    rep.start_offset = rep.end_offset = st->start;
    rep.total_events = st->stream_total;
    rep.complete = st->found && st->ck.complete;
    rep.already_complete = 1;
    rep.stopped_by = st->limit < st->stream_total ? "max-events" : "complete";
    print_report(&rep, st->shard, emit_faulted(st), shape_args_flag(st->args, "json"), st->console);
}

/* A stop request came while the destinations were being opened: nothing
 * was sent, the checkpoint is as it was; the report says so. */
static void report_stopped_before(const emit_state *st)
{
    shape_emit_report rep;
    memset(&rep, 0, sizeof rep);
    rep.start_offset = rep.end_offset = st->start;
    rep.total_events = st->stream_total;
    rep.stopped_by = "stop-request";
    fprintf(stderr, "shape emit: stopped on request while connecting to the destinations; nothing was sent\n");
    print_report(&rep, st->shard, emit_faulted(st), shape_args_flag(st->args, "json"), st->console);
}

/* Run the stream (SIGINT/SIGTERM ask it to stop), then report. */
static int run_and_report(emit_state *st, shape_err *err)
{
    const shape_args *args = st->args;
    int progress = isatty(STDERR_FILENO);
    if (shape_args_flag(args, "progress")) progress = 1;
    if (shape_args_flag(args, "no-progress")) progress = 0;
    st->cfg.progress = progress;
    shape_emit_report rep;
    int rc = shape_emit_run(&st->cfg, &rep, err);
    rep.dead_letter_enabled = st->cfg.dead_letter != NULL;
    if (rc == SHAPE_OK || rc == SHAPE_ELIMIT) print_report(&rep, st->shard, emit_faulted(st), shape_args_flag(args, "json"), st->console);
    return rc;
}

/* Open the destinations and run (SIGINT/SIGTERM ask for a stop): a stop
 * while connecting ends the attempt (a stoppable open returns within
 * ~100 ms; another when its attempt ends; a second signal ends the process
 * at once). */
static int open_and_run(emit_state *st, shape_err *err)
{
    connecting = 1;
    int rc = stop_requested ? SHAPE_OK : open_destinations(st, err);
    connecting = 0;
    if (stop_requested) { /* the stop wins over what the connection ended with */
        shape_err_clear(err);
        report_stopped_before(st);
        return SHAPE_OK;
    }
    return rc == SHAPE_OK ? run_and_report(st, err) : rc;
}

/* read options → resolve destinations → plan and resume → run → report */
static int emit_steps(emit_state *st, shape_err *err);

/* The steps with SIGINT/SIGTERM asking for a stop (installed before the
 * checkpoint's lock is taken: once its lock file is there, a stop is a
 * request, honoured before or after the first connection). */
static int emit_with_stop(emit_state *st, shape_err *err)
{
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int rc = emit_steps(st, err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}

static int emit_steps(emit_state *st, shape_err *err)
{
    SHAPE_RETURN_NOT_OK(read_stream_options(st, err));
    SHAPE_RETURN_NOT_OK(read_pacing_options(st, err));
    SHAPE_RETURN_NOT_OK(read_metadata_options(st, err));
    SHAPE_RETURN_NOT_OK(read_fault_options(st, err));
    SHAPE_RETURN_NOT_OK(resolve_destinations(st, err));
    SHAPE_RETURN_NOT_OK(set_emitter_options(st, err));
    SHAPE_RETURN_NOT_OK(check_paths(st, err));
    SHAPE_RETURN_NOT_OK(plan_and_resume(st, err));
    if (shape_args_flag(st->args, "dry-run")) return dry_run(st, err);
    SHAPE_RETURN_NOT_OK(confirm_remote(st, err));
    if (st->start >= st->limit) {
        report_already_complete(st);
        return SHAPE_OK;
    }
    return open_and_run(st, err);
}

static int run_emit(const shape_args *args, shape_err *err)
{
    emit_state *st = calloc(1, sizeof *st);
    if (!st) return shape_err_set(err, SHAPE_ENOMEM, "out of memory");
    st->args = args;
    st->lock_fd = -1;
    int rc = emit_with_stop(st, err);
    state_free(st);
    free(st);
    return rc;
}

static const shape_arg_spec emit_args[] = {
    {"scale", 0, SHAPE_ARG_VALUE, "PRESET", "small",
     "Scale preset: fabric_demo, small, medium, large, warehouse, xlarge, xxl, xxxl."},
    {"seed", 0, SHAPE_ARG_VALUE, "INT", "42", "Seed of the generator."},
    {"domain-path", 0, SHAPE_ARG_VALUE, "DIR[:DIR]", "SHAPE_DOMAIN_PATH",
     "Folders of generation schemas: DOMAIN names DIR/DOMAIN.json (docs/DOMAINS.md)."},
    {"table", 't', SHAPE_ARG_LIST, "NAME", "all tables", "Emit only this table; the dependency order is kept."},
    {"sink", 0, SHAPE_ARG_VALUE, "SINK", "console",
     "console, file (with -o FILE), null, or a URI: file:///PATH, jsonl:///DIR, kafka://HOST:PORT/TOPIC."},
    {"to", 0, SHAPE_ARG_LIST, "URI", NULL, "Another destination; every destination receives every event."},
    {"output", 'o', SHAPE_ARG_VALUE, "FILE", NULL, "The file of --sink file."},
    {"envelope", 0, SHAPE_ARG_VALUE, "flat|cloudevents", "flat", "Event layout: flat JSON or CloudEvents 1.0 structured."},
    {"event-format", 0, SHAPE_ARG_VALUE, "json|avro|protobuf|json-schema", "json",
     "Message body: JSON, or a Schema Registry format in the Confluent wire format (kafka:// only; "
     "needs --sink-config kafka.schema_registry_url=URL)."},
    {"key", 0, SHAPE_ARG_VALUE, "COLS", "<table>/<seq>",
     "Message key from columns joined by '|'; the idempotency key then goes to header shape-key."},
    {"header", 0, SHAPE_ARG_LIST, "NAME=VALUE|NAME=@COL", NULL, "Extra message header (names shape-* are reserved)."},
    {"partition", 0, SHAPE_ARG_VALUE, "N|by_key", "by_key", "Kafka partition, or the key partitioner."},
    {"timestamp", 0, SHAPE_ARG_VALUE, "broker|event_time", "broker", "Message timestamp: the broker's, or the event time (every table sent must have one)."},
    {"synthetic-header", 0, SHAPE_ARG_FLAG, NULL, "on", "Add header shape-synthetic: true."},
    {"no-synthetic-header", 0, SHAPE_ARG_FLAG, NULL, NULL, "Leave out header shape-synthetic."},
    {"realtime", 0, SHAPE_ARG_FLAG, NULL, "off", "Pace the stream to --rate events per second."},
    {"no-realtime", 0, SHAPE_ARG_FLAG, NULL, NULL, "Send as fast as the destinations take it."},
    {"rate", 0, SHAPE_ARG_VALUE, "N", "100", "Events per second with --realtime (> 0)."},
    {"max-rate", 0, SHAPE_ARG_VALUE, "N", NULL, "Hard cap on events per second (> 0)."},
    {"burst", 0, SHAPE_ARG_LIST, "START:DURATION:MULT", NULL,
     "With --realtime: multiply the rate by MULT from START for DURATION seconds (no overlaps)."},
    {"ramp", 0, SHAPE_ARG_LIST, "START:DURATION:FROM:TO", NULL,
     "With --realtime: the rate's multiplier goes linearly FROM..TO over the window, TO holds after it."},
    {"daily-curve", 0, SHAPE_ARG_VALUE, "flat|business-hours|FILE", "flat",
     "With --realtime: multiply the rate by a daily curve (a shape-rate-curve JSON file), wrapping at midnight."},
    {"curve-start", 0, SHAPE_ARG_VALUE, "HH:MM[:SS]", "the UTC time of day now",
     "The daily curve's time of day when the run starts."},
    {"arrivals", 0, SHAPE_ARG_VALUE, "constant|poisson", "constant",
     "With --realtime: evenly spaced events, or Poisson arrivals (seed-keyed gaps per stream position)."},
    {"speed", 0, SHAPE_ARG_VALUE, "FACTOR", NULL,
     "Replay event time at this speed (60x, 0.5x): events go when their event time is due; not with --realtime."},
    {"max-events", 0, SHAPE_ARG_VALUE, "N", NULL, "Stop at this stream position (>= 0); with --shard, this shard's."},
    {"shard", 0, SHAPE_ARG_VALUE, "I/N", "0/1",
     "Emit only the events at positions = I mod N of the stream (either --order; keys unchanged); N processes "
     "with I = 0..N-1 emit the stream once. Checkpoints are per shard."},
    {"duration", 0, SHAPE_ARG_VALUE, "SECONDS", NULL, "Stop after this many seconds of this run (>= 0)."},
    {"checkpoint", 0, SHAPE_ARG_VALUE, "FILE", "FILE.checkpoint with --sink file, else none",
     "Checkpoint file: rerunning the same command resumes there (same destinations; one run at a time)."},
    {"checkpoint-every", 0, SHAPE_ARG_VALUE, "N", "10000", "Checkpoint after this many delivered events."},
    {"checkpoint-seconds", 0, SHAPE_ARG_VALUE, "S", "1", "Checkpoint at least this often (seconds)."},
    {"fresh", 0, SHAPE_ARG_FLAG, NULL, NULL, "Ignore an existing checkpoint and start at offset 0."},
    {"retries", 0, SHAPE_ARG_VALUE, "N", "3", "Re-sends of undelivered messages, back-off 0.1 s x 2^n."},
    {"batch-events", 0, SHAPE_ARG_VALUE, "N", "rate/100 (1..1000) paced, else 1000", "Events per send."},
    {"queue-batches", 0, SHAPE_ARG_VALUE, "N", "max(8, rate/batch) paced, else 16",
     "Batches the generator may run ahead (and the most one send carries)."},
    {"dead-letter", 0, SHAPE_ARG_VALUE, "URI", NULL,
     "Send events a destination refuses here, as shape-dead-letter v1 records (else they stop the run)."},
    {"max-dead-letter", 0, SHAPE_ARG_VALUE, "N", NULL, "Stop (exit 1) past N dead letters; needs --dead-letter."},
    {"sink-config", 0, SHAPE_ARG_KV_LIST, "SINK.KEY=VALUE", NULL,
     "An emitter option, e.g. kafka.flush_timeout=30 (secrets as env://, file://, kv:// references)."},
    {"options-file", 0, SHAPE_ARG_VALUE, "FILE", NULL,
     "JSON options for plugin emitters; its \"config\" object holds librdkafka producer settings."},
    {"order", 0, SHAPE_ARG_VALUE, "table|event-time", "table",
     "table: tables one after another in dependency order; event-time: the whole domain in one stream ordered by event "
     "time (docs/EMIT.md); faults and --shard then act on positions of that merged stream."},
    {"time-origin", 0, SHAPE_ARG_VALUE, "now|ISO-8601", NULL,
     "Shift every timestamp of every table by one amount so the first event time (event-time order: the first timed "
     "event's) is this instant."},
    {"out-of-order", 0, SHAPE_ARG_VALUE, "F", "0",
     "Make this fraction of rows late: each moves up to --ooo-window positions later inside its window; event time unchanged."},
    {"ooo-window", 0, SHAPE_ARG_VALUE, "N", "1000",
     "Rows of a table per out-of-order window; with --order event-time, positions of the merged stream (>= 1)."},
    {"anomaly-fraction", 0, SHAPE_ARG_VALUE, "F", "0", "Change one value of this fraction of rows (see --anomaly-mutator)."},
    {"anomaly-mutator", 0, SHAPE_ARG_LIST, "NAME", "value-anomaly",
     "value-anomaly (an outlier or a null), wrong-type (a number as a string; JSON only), long-string, time-skew (event "
     "time 100 years off); repeatable."},
    {"duplicate-fraction", 0, SHAPE_ARG_VALUE, "F", "0",
     "Deliver this fraction of events twice (same key and body), the copy 1..--duplicate-window events later."},
    {"duplicate-window", 0, SHAPE_ARG_VALUE, "N", "1000", "How many events later a duplicate copy may arrive (>= 1)."},
    {"poison-fraction", 0, SHAPE_ARG_VALUE, "F", "0",
     "Cut this fraction of bodies to 2/3 of their bytes (undecodable); JSON only."},
    {"answer-key", 0, SHAPE_ARG_VALUE, "FILE", NULL,
     "Append one JSON line per injected fault delivered (kind, table, seq, key, details)."},
    {"dry-run", 0, SHAPE_ARG_FLAG, NULL, NULL, "Check everything and print the plan; send nothing."},
    {"progress", 0, SHAPE_ARG_FLAG, NULL, "on when stderr is a terminal", "Show a progress line on stderr."},
    {"no-progress", 0, SHAPE_ARG_FLAG, NULL, NULL, "Never show the progress line."},
    {"json", 0, SHAPE_ARG_FLAG, NULL, NULL, "Print the run report as one JSON line."},
    {"yes", 0, SHAPE_ARG_FLAG, NULL, NULL, "Confirm a destination that is not on this machine (or SHAPE_CONFIRM_REMOTE=1)."},
    {0},
};

const shape_command shape_cmd_emit = {
    .name = "emit",
    .summary = "Emit a domain's rows as events to the console, files or Kafka (paced, resumable).",
    .positional = "DOMAIN",
    .min_positional = 1,
    .max_positional = 1,
    .args = emit_args,
    .epilog = "Examples:\n"
              "  shape emit retail --max-events 5\n"
              "  shape emit retail --sink file -o events.jsonl      (rerun to resume)\n"
              "  shape emit retail --realtime --rate 5000 --sink kafka://127.0.0.1:9092/retail-events\n"
              "Report: stderr when events go to the console, else stdout. Exit 0 done or stopped,\n"
              "2 bad input, refused checkpoint or destination, delivery failure after retries.",
    .run = run_emit,
};

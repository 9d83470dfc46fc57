/* shape/emit.h — the emit runtime: a planned event stream delivered to
 * destinations at least once, paced, resumable from a checkpoint.
 *
 * Why: `shape emit` promises that every event of the plan reaches every
 * destination (duplicates possible, losses never), at the asked rate without
 * drift, and that rerunning the same command continues exactly where the
 * acknowledged part ended (spec-core §3.5, §3.6).
 * How (src/emit/: runtime.c, queue.c, metadata.c, dead_letter.c):
 *   - a generator thread walks the plan from the start offset, cuts it into
 *     batches (never spanning two tables), renders every message completely
 *     (body, key, headers, partition, timestamp) and puts the batches on a
 *     bounded queue; a full queue blocks it (backpressure, nothing dropped);
 *   - the sender (the calling thread) takes batches, sleeps until each one's
 *     absolute deadline t0 + due (due = when the schedule has the events
 *     sent so far due: events / rate, or the shaped schedule of
 *     shape/emit_schedule.h; or the virtual clock of --speed; capped by
 *     --max-rate), sends it to every destination, re-sends messages a
 *     destination could not deliver (retries with back-off), and only then
 *     moves the delivered offset;
 *   - a checkpoint thread persists the delivered offset (after flushing the
 *     destinations) every N events or S seconds, off the pacing path; the
 *     final checkpoint is written synchronously.
 * Shards (--shard i/n): the process emits only the events whose global
 * position p (in plan order) has p mod n == i; their keys and bodies are the
 * unsharded stream's. Every offset the runtime and the checkpoint speak of
 * (start_offset, limit, delivered, the report) then counts this shard's
 * events: shard offset j is global position i + j*n, and the shard's total
 * is shape_emit_shard_events(plan total, i, n). Skipped positions are never
 * generated (rows are counter-based).
 * Checkpoint document (atomic replace; "shard" only for n > 1; "checksum"
 * added by shape/checkpoint_file.h):
 *   {"format":"shape-emit-v1","fingerprint":HEX,"offset":N,"total":T,"complete":B[,"shard":"i/n"]
 *    [,"time_shift_ns":NS][,"destinations":"URI URI ..."],"checksum":"xxh3-128:HEX"}
 * "destinations" binds it to where the events went (shape_emit_destinations_id):
 * resuming into another topic or file would skip the events it never got.
 *
 * Ownership: the config and everything it points to are borrowed for the
 * duration of shape_emit_run; destinations stay open (the caller closes them).
 */
#ifndef SHAPE_EMIT_H
#define SHAPE_EMIT_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "shape/error.h"
#include "shape/emit_schedule.h"
#include "shape/event.h"
#include "shape/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SHAPE_EMIT_CHECKPOINT_FORMAT "shape-emit-v1"
#define SHAPE_EMIT_DESTINATIONS_MAX 1024 /* bytes of a checkpoint's destination list, NUL included */
#define SHAPE_EMIT_DL_REASONS 50 /* distinct dead-letter reasons counted; the rest are "other" */

/* An open destination. `label` names it in messages and in dead letters'
 * "destination" without secrets: the URI without user info or query, as a
 * checkpoint records it (shape_emit_destinations_id), e.g. "console",
 * "file://out.jsonl", "kafka://127.0.0.1:9092/orders". */
typedef struct shape_emit_destination {
    const shape_emitter_type *type;
    shape_emitter *emitter;
    const char *label;
} shape_emit_destination;

typedef struct shape_emit_config {
    const shape_event_plan *plan;
    shape_envelope envelope;
    /* message metadata */
    const char *const *key_columns; /* NULL: the idempotency key <table>/<seq> */
    size_t nkey_columns;
    const char *const *headers;     /* "name=value" / "name=@column" */
    size_t nheaders;
    int32_t partition;              /* -1: partitioner */
    int timestamp_event_time;       /* 0: broker time */
    int synthetic;                  /* header shape-synthetic: true */
    /* pacing and limits */
    int realtime;
    double rate;                    /* events/s with realtime */
    double max_rate;                /* 0: none */
    uint64_t shard_index, shard_count; /* this process emits positions ≡ index (mod count); count 0 or 1: all */
    uint64_t limit;                 /* stop at this (shard) offset (<= the shard's total) */
    double duration;                /* < 0: none */
    size_t batch_events, queue_batches;
    /* delivery */
    uint64_t start_offset;
    const char *checkpoint_path;    /* NULL: none */
    const char *fingerprint;        /* hex, stored in the checkpoint */
    const char *destinations;       /* shape_emit_destinations_id of the destinations, stored in it; NULL: none */
    uint64_t checkpoint_every;
    double checkpoint_seconds;
    int retries;
    double retry_backoff;           /* seconds; 0.1 */
    shape_emit_destination *dests;
    size_t ndests;
    shape_emit_destination *dead_letter; /* refused events go here as shape-dead-letter v1 records, or NULL */
    int64_t max_dead_letter;        /* < 0: no limit; more dead letters stop the run (SHAPE_ELIMIT) */
    volatile sig_atomic_t *stop;    /* non-zero: stop after the batch in hand */
    int progress;                   /* progress line on stderr */
    /* shaped traffic (shape/emit_schedule.h), with realtime: NULL is the
     * constant `rate`; its Poisson gaps are keyed by global position */
    const shape_emit_schedule *schedule;
    double speed;                   /* > 0: the virtual clock, event time replayed at this speed */
    /* faults in delivery (spec-core §3.7), each drawn from fault_seed and the
     * event's table and seq: a copy 1..duplicate_window positions later, a
     * body cut to max(1, ⌊2/3⌋) of its bytes; JSON bodies only */
    double duplicate_fraction, poison_fraction;
    uint64_t duplicate_window;      /* >= 1 */
    uint64_t fault_seed;
    const char *answer_key;         /* JSON lines of the faults delivered, appended; NULL: none */
    /* disorder (spec-core §3.4): a row late with probability out_of_order
     * moves up to ooo_window positions later inside its window of
     * ooo_window rows; part of the fingerprint */
    double out_of_order;
    uint64_t ooo_window;
    /* anomalies (spec-core §3.4): a row chosen with this probability has one
     * value changed by one of the mutators (NULL/0: value-anomaly) */
    double anomaly_fraction;
    const char *const *mutators;
    size_t nmutators;
    /* --time-origin: added to every timestamp value of every row (relations
     * between dates kept); stored in the checkpoint so `now` resumes with the
     * shift it started with */
    int time_shifted;
    int64_t time_shift_ns;
} shape_emit_config;

typedef struct shape_emit_report {
    uint64_t events;       /* delivered by this run */
    uint64_t start_offset, end_offset, total_events;
    int complete;
    int already_complete;
    const char *stopped_by; /* static: complete, max-events, duration, stop-request, error */
    double elapsed;         /* first → last delivery, s */
    double rate;            /* (events − first batch) / elapsed */
    double wall;            /* whole run, s */
    double per_second;      /* events / wall */
    size_t max_queue_depth;
    double max_lag;         /* worst (send time − deadline), s */
    double lag_p99;         /* 99th percentile of that, s */
    uint64_t checkpoints;
    uint64_t retries;
    uint64_t refused;
    uint64_t duplicates;    /* copies delivered */
    uint64_t poisoned;      /* cut bodies delivered */
    uint64_t late;          /* events delivered out of order */
    uint64_t anomalies_selected, anomalies_affected; /* rows chosen for an anomaly, and changed */
    uint64_t dead_lettered;
    int dead_letter_enabled; /* set by the caller, for the report */
    size_t ndl_reasons;
    int dl_other;           /* dl_reasons[SHAPE_EMIT_DL_REASONS] holds "other" */
    struct {
        char reason[SHAPE_EMIT_REASON_MAX];
        uint64_t count;
    } dl_reasons[SHAPE_EMIT_DL_REASONS + 1];
} shape_emit_report;

/* Validate the metadata options against every table of the plan, before
 * anything is opened: header syntax and reserved names, unknown columns
 * ("unknown metadata columns: ['x']"). */
int shape_emit_check_metadata(const shape_emit_config *cfg, shape_err *err);

/* Run the stream. Returns SHAPE_OK for a completed or stopped run (see
 * rep->stopped_by); on failure the report holds what was delivered, a final
 * checkpoint was written at the last delivered offset, and err says why. */
int shape_emit_run(const shape_emit_config *cfg, shape_emit_report *rep, shape_err *err);

/* ---- checkpoints ---------------------------------------------------------- */

typedef struct shape_emit_checkpoint {
    char fingerprint[65];
    uint64_t offset, total;
    int complete;
    char shard[48]; /* "i/n" for a shard of a stream, "" for the whole stream */
    int time_shifted; /* the run shifted its timestamps by time_shift_ns ("time_shift_ns" member) */
    int64_t time_shift_ns;
    char destinations[SHAPE_EMIT_DESTINATIONS_MAX]; /* "" when the checkpoint names none (older ones) */
} shape_emit_checkpoint;

/* The destination list a checkpoint is bound to: each URI without its user
 * information (user:password@) and query (?...), the list sorted and joined
 * by single spaces, so the order of --sink and --to does not matter.
 * SHAPE_EINVAL when it does not fit SHAPE_EMIT_DESTINATIONS_MAX. */
int shape_emit_destinations_id(const char *const *uris, size_t n, char *out, size_t size, shape_err *err);

/* Refuse (SHAPE_EINVAL, naming both lists and --fresh) a checkpoint read
 * from `path` that names destinations other than `destinations`; one that
 * names none (written before shape recorded them) is accepted. */
int shape_emit_checkpoint_check_destinations(const char *path, const shape_emit_checkpoint *ck,
                                             const char *destinations, shape_err *err);

/* Read a checkpoint (through shape/checkpoint_file.h). *found = 0 (and
 * SHAPE_OK) when the file does not exist; SHAPE_EIO when it cannot be read.
 * Refusals (SHAPE_EINVAL): not an emit checkpoint (also: not one JSON
 * object, a key given twice), a fingerprint other than `fingerprint`
 * ("... belongs to a different stream ...; use --fresh"), an offset outside
 * [0, total]. Writing replaces the file atomically with the document above. */
int shape_emit_checkpoint_read(const char *path, const char *fingerprint, uint64_t total,
                               shape_emit_checkpoint *out, int *found, shape_err *err);
int shape_emit_checkpoint_write(const char *path, const shape_emit_checkpoint *ck, shape_err *err);

/* The stream fingerprint: SHA-256 hex of a sorted-key JSON document of the
 * domain's identity fields (shape/domain.h: for retail domain, mode, scale,
 * seed), the selected tables with their row counts, the envelope
 * and, when not NULL or "json", the event format (not the rate, limits,
 * sinks or batch sizes). out: 65 bytes. */
int shape_emit_fingerprint(const shape_event_plan *plan, shape_envelope env, const char *event_format,
                           char out[65], shape_err *err);

/* What changes a stream's events beyond its plan (spec-core §3.4): part of
 * the fingerprint when not the defaults (0, 1000, 0, none), so a checkpoint
 * of one variant never resumes another, and the plain stream keeps its
 * fingerprint. */
typedef struct shape_emit_variation {
    double out_of_order;
    uint64_t ooo_window;
    double anomaly_fraction;
    const char *const *mutators;
    size_t nmutators;
    const char *time_origin; /* --time-origin as given (now or an instant), or NULL */
} shape_emit_variation;

/* shape_emit_shard_fingerprint of a variant (v NULL: the defaults). */
int shape_emit_variant_fingerprint(const shape_event_plan *plan, shape_envelope env, const char *event_format,
                                   uint64_t index, uint64_t count, const shape_emit_variation *v, char out[65],
                                   shape_err *err);

/* The fingerprint of shard index/count of that stream: the stream's own
 * fingerprint when count <= 1 (so an unsharded checkpoint stays valid), else
 * one that also holds "shard":"index/count". */
int shape_emit_shard_fingerprint(const shape_event_plan *plan, shape_envelope env, const char *event_format,
                                 uint64_t index, uint64_t count, char out[65], shape_err *err);

/* How many of positions 0..total-1 are ≡ index (mod count); count 0 or 1:
 * total. */
uint64_t shape_emit_shard_events(uint64_t total, uint64_t index, uint64_t count);

/* Parse "i/n" (0 <= i < n, 1 <= n <= 1000000). SHAPE_EINVAL with a message
 * naming the value otherwise. */
int shape_emit_parse_shard(const char *text, uint64_t *index, uint64_t *count, shape_err *err);

/* An --anomaly-mutator name: value-anomaly, wrong-type (JSON only: refused
 * when registry_format), long-string, time-skew; SHAPE_EINVAL listing them. */
int shape_emit_mutator_check(const char *name, int registry_format, shape_err *err);

/* SHA-256 of data[0..n) as 64 hex digits + NUL. */
void shape_sha256_hex(const void *data, size_t n, char out[65]);

/* ---- built-in destinations ------------------------------------------------ */

/* The core's emitter types: console://, file://, jsonl://, null://. */
const shape_emitter_type *shape_emit_builtin_for_uri(const char *uri);

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

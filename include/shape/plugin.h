/* shape/plugin.h — what a plugin module gives the core.
 *
 * Why: `kafka://` (and anything else outside the core) arrives as a plugin so
 * the core never links a Kafka client. A plugin is a shared object that
 * exports one function, shape_plugin_entry(), returning a static description:
 * its stream sources and emitters keyed by URI scheme, and extra commands.
 *
 * ABI: version 2 added the sending calls of shape_emitter_type (open, send,
 * flush, close) after its first four members; version 3 added the event's
 * typed row to shape_emit_message (for emitters that encode events
 * themselves, such as registry formats), wants_rows, and a longer reason;
 * version 4 the sources' progress; version 5 the poison mark of
 * shape_emit_message (poison, uncut_len, made_len), the emitter's set_stop and
 * shape_decode_stats.offsets_lost (shape/decode.h), which a source fills;
 * version 6 the emitter's pipelined sending (submit, complete); version 7
 * the stoppable opens of sources and emitters (open_stoppable). The first four members of
 * struct shape_plugin (abi_version, flags, name, version) keep their place in every ABI version, so the core can name
 * a plugin it refuses. Everything after them belongs to the ABI version in
 * abi_version; a plugin whose abi_version differs from the core's
 * SHAPE_PLUGIN_ABI_VERSION is refused, by name, with a hint to rebuild.
 * A plugin flagged SHAPE_PLUGIN_BUNDLED is released with the core and must
 * also carry the core's exact version (SHAPE_VERSION).
 *
 * Ownership: everything a plugin returns is static and lives as long as the
 * module stays loaded (the registry keeps it loaded until shape_registry_free).
 *
 * Writing one: see docs/plugins/authoring.md.
 */
#ifndef SHAPE_PLUGIN_H
#define SHAPE_PLUGIN_H

#include "shape/export.h"
SHAPE_API_BEGIN

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "shape/cli.h"
#include "shape/error.h"
#include "shape/source.h"
#include "shape/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A stream source type: reads URIs of its schemes as Arrow micro-batches.
 * (The read calls join this table with the decoder and source work.) */
typedef struct shape_source_type {
    const char *name;           /* "kafka" */
    const char *const *schemes; /* NULL-terminated, lower case: {"kafka", NULL} */
    const char *summary;        /* one line */
    /* Check a URI's form without touching the network. Must never copy a
     * credential found in the URI into err. */
    int (*check_uri)(const char *uri, shape_err *err);
    /* Open an instance reading uri from start (see shape/source.h); NULL
     * when the plugin cannot read yet. The instance's shape_source_vtable
     * has an optional `progress` member since ABI 4. */
    shape_source_open_fn open;
    /* --- ABI 7 --- */
    /* open with the run's stop flag (borrowed for the call; NULL = none),
     * for a source whose open waits (for the cluster's first answer, say):
     * it must return within about 100 ms of *stop becoming non-zero, with
     * SHAPE_ECONN and nothing opened; the caller sees its stop flag and
     * ends the read as a stop. NULL = open never waits long (the core then
     * calls open). See shape_source_type_open. */
    shape_source_stoppable_open_fn open_stoppable;
} shape_source_type;

/* Open through open_stoppable when the type has it, else open. */
static inline int shape_source_type_open(const shape_source_type *type, const char *uri,
                                         const shape_options *options, const shape_offsets *start,
                                         const volatile sig_atomic_t *stop, shape_source **out, shape_err *err)
{
    if (type->open_stoppable) return type->open_stoppable(uri, options, start, stop, out, err);
    return type->open(uri, options, start, out, err);
}

/* ---- emitters (ABI 2) ------------------------------------------------------
 *
 * An emitter writes messages to URIs of its schemes. The emit runtime builds
 * every message completely (body, key, headers, partition, timestamp) and
 * hands batches to `send`; an emitter only transports them.
 *
 * Delivery contract (what `shape emit`'s at-least-once promise rests on):
 *   - send(batch) returns only when every message of the batch has an
 *     outcome: SHAPE_EMIT_DELIVERED (the destination acknowledged it: a
 *     broker ack, bytes handed to the OS for a file), SHAPE_EMIT_RETRY
 *     (not delivered, may succeed if sent again: a timeout, a lost
 *     connection) or SHAPE_EMIT_REFUSED (never deliverable as it is; a
 *     stable reason such as "MSG_SIZE_TOO_LARGE" in `reason`);
 *   - its return value is SHAPE_OK when every outcome was recorded (even if
 *     some are RETRY or REFUSED), or an error code for a failure of the whole
 *     batch (then every message not marked DELIVERED counts as RETRY when
 *     the code is SHAPE_ECONN or SHAPE_EIO, and the run stops otherwise);
 *   - a full local queue is waited out inside send, never reported;
 *   - messages are written in batch order; an emitter never drops one silently.
 * The runtime re-sends RETRY messages (up to --retries, back-off 0.1 s × 2^n),
 * stops on REFUSED ones (or routes them to a dead-letter destination), and
 * only then lets its checkpoint pass the batch.
 *
 * Pipelined sending (ABI 6, optional): submit + complete are send cut in
 * two, so that the next batch is handed over while the earlier ones are
 * still being acknowledged (a broker's round trip and linger then overlap
 * the producing instead of following it). complete(batch) keeps send's
 * contract for that batch; the runtime completes its submissions in the
 * order it made them and moves its checkpoint only over batches completed
 * DELIVERED (or dead-lettered) in that order, so at-least-once and the
 * checkpoint's meaning are those of send.
 */

/* One header: value[0..value_len) is bytes (not NUL-terminated). */
typedef struct shape_emit_header {
    const char *name; /* NUL-terminated */
    const void *value;
    size_t value_len;
} shape_emit_header;

enum shape_emit_outcome {
    SHAPE_EMIT_PENDING = 0,   /* set by the runtime before send */
    SHAPE_EMIT_DELIVERED = 1, /* acknowledged by the destination */
    SHAPE_EMIT_RETRY = 2,     /* not delivered; sending again may work */
    SHAPE_EMIT_REFUSED = 3    /* never deliverable as it is; see reason */
};

#define SHAPE_EMIT_REASON_MAX 256

/* wants_rows: needs the typed rows and never reads the value (see there). */
#define SHAPE_EMIT_ROWS_ONLY 2

struct ArrowSchema;
struct ArrowArray;

/* One message. Everything it points to is owned by the runtime and valid
 * for the duration of the send call only (a submitted one: until its
 * complete returns). */
typedef struct shape_emit_message {
    const void *key; /* NULL = no key */
    size_t key_len;
    const void *value; /* the event body (JSON, no trailing newline); empty when every
                        * destination's wants_rows said SHAPE_EMIT_ROWS_ONLY (see there) */
    size_t value_len;
    const shape_emit_header *headers;
    size_t header_count;
    int32_t partition;    /* -1: the destination's partitioner decides */
    int64_t timestamp_ms; /* 0: the destination (broker) assigns it */
    const char *table;    /* the event's table (NUL-terminated), for sinks that split by table */
    /* ABI 3: the event as typed values — row `row` of the struct record batch
     * (row_schema, row_array) whose columns are the flat event's: the table's
     * columns, then _shape_table, _shape_seq and, when the table has one,
     * _shape_event_time. Set only when the destination's wants_rows says so
     * (NULL otherwise). The schema is the same for every batch of a table
     * (names, types, nullability), so an emitter may key caches on it. */
    const struct ArrowSchema *row_schema;
    const struct ArrowArray *row_array;
    int64_t row;
    /* ABI 5: a poisoned event (--poison-fraction, spec-kafka §4.9). Its value
     * is already cut to max(1, floor(2*uncut_len/3)) bytes (the uncut bytes
     * stay readable at value[0..uncut_len)); an emitter that makes its own
     * value (wants_rows: the registry formats) makes it from the uncut event,
     * cuts the whole of what it made (wire header included) the same way and
     * says the length it made in made_len. */
    int poison;
    size_t uncut_len;
    /* filled by send: */
    int outcome;                          /* enum shape_emit_outcome */
    char reason[SHAPE_EMIT_REASON_MAX];   /* REFUSED/RETRY: a short stable reason */
    size_t made_len;                      /* a poisoned event's made length before its cut (0: not made) */
} shape_emit_message;

struct shape_options;
typedef struct shape_emitter shape_emitter; /* an open destination; the type's own struct */

/* An emitter type: writes events to URIs of its schemes. */
typedef struct shape_emitter_type {
    const char *name;
    const char *const *schemes;
    const char *summary;
    int (*check_uri)(const char *uri, shape_err *err);
    /* --- ABI 2: sending (NULL in a type that can only check URIs) --- */
    /* Open a destination. `options` (borrowed for the call) carries
     * "envelope" ("flat"/"cloudevents"), "resuming" (bool: continue an
     * earlier run, e.g. append to a file), the --sink-config keys of this
     * emitter, and the --options-file keys (e.g. "config", an object of
     * client settings). Unknown keys are refused up front (SHAPE_EINVAL,
     * shape_options_check_known's message); nothing is sent by open. The
     * URI must never be copied into err (it may hold credentials). */
    int (*open)(const char *uri, const struct shape_options *options, shape_emitter **out,
                shape_err *err);
    /* Send n messages; see the delivery contract above. */
    int (*send)(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err);
    /* Make what was delivered durable (fsync a file; a no-op for a broker,
     * whose acks already are). */
    int (*flush)(shape_emitter *e, shape_err *err);
    /* Flush what can be flushed, release everything. NULL is allowed. */
    void (*close)(shape_emitter *e);
    /* --- ABI 3 --- */
    /* Non-zero when this open destination needs every message's typed row
     * (row_schema/row_array/row) to encode it. NULL = never.
     * SHAPE_EMIT_ROWS_ONLY: the rows, and it never reads a message's value.
     * When every destination of a run answers that and the run has no
     * dead-letter destination (whose records carry the body), the runtime
     * does not render the JSON bodies: value_len is 0. */
    int (*wants_rows)(shape_emitter *e);
    /* Check uri and options as open would (known keys, values, credential
     * references resolvable) without connecting or sending anything, for
     * `shape emit --dry-run`. NULL = open checks everything. */
    int (*check_options)(const char *uri, const struct shape_options *options, shape_err *err);
    /* --- ABI 5 --- */
    /* The run's stop flag (borrowed for the emitter's life; NULL = none): a
     * send waiting for acknowledgements (a broker gone, say) must return
     * within about 100 ms of *stop becoming non-zero, its unacknowledged
     * messages not DELIVERED, so that a stop request is honoured at once
     * instead of after the send's time-out. NULL = sends never wait long. */
    void (*set_stop)(shape_emitter *e, const volatile sig_atomic_t *stop);
    /* --- ABI 6: pipelined sending (both NULL: send only) --- */
    /* Hand msgs[0..n) over, in order after everything handed over before,
     * and return without waiting for their acknowledgements (a full local
     * queue is still waited out here). Until complete returns for this
     * submission the runtime keeps msgs and everything they point to valid
     * and unchanged; the emitter writes only their outcome slots (outcome,
     * reason, made_len) and what send may change (a registry format's
     * value), and only during its own calls (submit, complete, send).
     * SHAPE_OK: complete must follow, once. An error: nothing of it was
     * handed over and no complete follows; SHAPE_ECONN/SHAPE_EIO count
     * every message as RETRY (the runtime re-sends them with send), any
     * other code stops the run. The runtime keeps at most 16 submissions
     * (and a retry's send) open at once. */
    int (*submit)(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err);
    /* Wait until every message of the submission msgs[0..n) (the same
     * pointer and count as submitted) has its outcome and return as send
     * would for it: the delivery contract above, its time-out and the stop
     * flag included. Submissions may be completed in any order. */
    int (*complete)(shape_emitter *e, shape_emit_message *msgs, size_t n, shape_err *err);
    /* --- ABI 7 --- */
    /* open with the run's stop flag (borrowed for the call; set_stop gives
     * it for the emitter's life): an open that waits (for the cluster's
     * first answer, up to its time-out) must return within about 100 ms of
     * *stop becoming non-zero, with SHAPE_ECONN and nothing opened or sent;
     * the caller sees its stop flag and ends the run as a stop. NULL = open
     * never waits long (the core then calls open). See
     * shape_emitter_type_open. */
    int (*open_stoppable)(const char *uri, const struct shape_options *options, const volatile sig_atomic_t *stop,
                          shape_emitter **out, shape_err *err);
} shape_emitter_type;

/* Open through open_stoppable when the type has it, else open. */
static inline int shape_emitter_type_open(const shape_emitter_type *type, const char *uri,
                                          const struct shape_options *options, const volatile sig_atomic_t *stop,
                                          shape_emitter **out, shape_err *err)
{
    if (type->open_stoppable) return type->open_stoppable(uri, options, stop, out, err);
    return type->open(uri, options, out, err);
}

#define SHAPE_PLUGIN_BUNDLED 0x1u /* released with the core: versions must match */

typedef struct shape_plugin {
    /* --- stable across ABI versions --- */
    uint32_t abi_version; /* SHAPE_PLUGIN_ABI_VERSION the plugin was built with */
    uint32_t flags;       /* SHAPE_PLUGIN_* */
    const char *name;     /* "shape-kafka" */
    const char *version;  /* the plugin's own version, e.g. "0.1.0" */
    /* --- ABI versions 1 and 2 --- */
    const char *summary;
    const shape_source_type *const *sources;   /* NULL-terminated, or NULL */
    const shape_emitter_type *const *emitters; /* NULL-terminated, or NULL */
    const shape_command *const *commands;      /* NULL-terminated, or NULL */
} shape_plugin;

/* The one symbol a plugin module exports. */
#define SHAPE_PLUGIN_ENTRY_SYMBOL "shape_plugin_entry"
typedef const shape_plugin *(*shape_plugin_entry_fn)(void);

#if defined(__GNUC__)
#define SHAPE_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define SHAPE_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
}
#endif
SHAPE_API_END
#endif

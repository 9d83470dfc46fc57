/* emitter_contract.h — the emitter contract (spec-kafka.md §3.10) as a
 * reusable cmocka suite: every emitter, whatever it writes to, is run
 * through the same checks.
 *
 * Why: shape emit's at-least-once promise rests on each emitter keeping the
 * delivery contract of shape/plugin.h. One suite, many destinations
 * (console, file, jsonl, kafka over FakeProducer, kafka over `shape broker`,
 * a plugin author's own) keeps them all to the same rules.
 * How: a test program describes each destination with a harness (how to
 * open it, how to read back what it holds, which faults it can inject) and
 * calls shape_kafka_emitter_contract_run. The checks send directly and through
 * the emit runtime (shape_emit_run): unknown options refused by name; the
 * count acknowledged equals the count sent; keys and order kept per table
 * (compared with an uninterrupted in-memory run of the same plan); resume
 * from a checkpoint; retries after injected failures deliver everything,
 * duplicates only from retried batches; exhausted retries stop the run and
 * the checkpoint never passes an undelivered event; and, where the harness
 * can inject them, a full queue is waited out without a retry and refusals
 * are reported (dead-letter path, or a stop naming the first key).
 * Failures are injected for every harness by wrapping its emitter (the next
 * sends deliver half the batch, then fail with SHAPE_ECONN); a harness can
 * add its own native faults.
 *
 * Sizes: EVENTS = 2500 in batches of 500, from retail small seed 11, tables
 * product then order_line (500 + 2000 events), retry back-off 0.
 */
#ifndef SHAPE_KAFKA_TESTING_EMITTER_CONTRACT_H
#define SHAPE_KAFKA_TESTING_EMITTER_CONTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "shape/emit.h"
#include "shape/options.h"

/* What a destination holds: key and body texts, in delivery order. */
typedef struct shape_kafka_contract_list {
    char **keys;   /* NULL entry: no wire key; the suite takes <table>/<seq> from the body */
    char **bodies;
    size_t n, cap;
} shape_kafka_contract_list;

/* Append copies of key (may be NULL) and body. */
void shape_kafka_contract_list_add(shape_kafka_contract_list *l, const void *key, size_t key_len, const void *body,
                             size_t body_len);
void shape_kafka_contract_list_reset(shape_kafka_contract_list *l);

typedef struct shape_kafka_emitter_harness {
    const char *name;        /* shown in test names: "file", "kafka over FakeProducer" */
    const char *option_noun; /* "file": refusals read "unknown file emitter options: [...]" */
    void *ctx;               /* the harness's own */
    int ordered;             /* 1: delivery order is comparable (one partition / one file) */
    /* Open the destination: fresh (options without resuming) or continuing
     * (resuming=true), with the given options (NULL: none). */
    int (*open)(void *ctx, const shape_options *options, const shape_emitter_type **type, shape_emitter **out,
                shape_err *err);
    /* Called after the suite closed an emitter it opened (NULL: nothing). */
    void (*after_close)(void *ctx);
    /* Empty the destination. */
    void (*reset)(void *ctx);
    /* Append everything the destination holds, in delivery order; NULL when
     * it cannot be read back (null://): content checks are then skipped. */
    void (*delivered)(void *ctx, shape_kafka_contract_list *out);
    /* Optional native faults (NULL: the check is skipped). */
    void (*inject_failures)(void *ctx, int n);   /* the next n deliveries fail transiently */
    void (*congest)(void *ctx, int n);           /* reports full n times, clears only when waited on */
    uint64_t (*congestion_hits)(void *ctx);
    void (*inject_rejections)(void *ctx, int n); /* the next n messages are refused for good */
} shape_kafka_emitter_harness;

/* Run every check on every harness (a cmocka group); returns the number of
 * failed tests (0: all passed). */
int shape_kafka_emitter_contract_run(const char *group, const shape_kafka_emitter_harness *const *harnesses, size_t n);

#endif
